//! irqlab's own results as repetitions: `irqlab import irqlab a1/result.json a2/result.json …`
//! pools runs made by separate commands — for instance A and B measured alternately
//! (A₁ B₁ A₂ B₂ …) so that a host whose load drifts over minutes loads both sides alike, which
//! one `--repeat 5` batch per side cannot do. Each file must read as a result (schema checked,
//! `crate::io`); its kind (predicted, measured) and platform are kept.
use super::{ImportError, ImportOptions, Origin, Parsed};

pub(super) fn parse(text: &str, file: &str, _opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let r = results::from_json_str(text, file).map_err(|e| ImportError::other(file, e.to_string()))?;
    let configs = r
        .configs
        .into_iter()
        .map(|mut c| {
            c.repetitions = None;
            c.seed_spread = None;
            c
        })
        .collect();
    let origin = Origin { tool: "irqlab".into(), version: Some(r.meta.tool_version.clone()), command: r.provenance.map(|p| p.command.join(" ")), host: r.meta.platform };
    Ok(Parsed { origin, configs, kind: r.meta.kind })
}
