//! Writing the calibrated platform profile: the scenario's base profile, whole, with the fitted
//! costs replaced (basis `measured`, naming the result files and the host) and the scenario's
//! measured overrides (the host's halt-poll window) written in. Every other cost is kept as it
//! was, with its own source and basis.
use std::path::PathBuf;

use super::CalibrateError;
use crate::fit::FitReport;
use crate::platform::{Basis, Platform, SHIPPED_PROFILES};
use crate::scenario::Scenario;

/// What the written profile says about where its fitted numbers came from.
#[derive(Debug, Clone)]
pub struct Provenance<'a> {
    /// The command line that made it.
    pub command: &'a str,
    pub host: &'a str,
    pub files: &'a [String],
    /// The training paths (`timer-hlt`, …).
    pub train: &'a [String],
    /// Costs that could not be identified, one line each (written as comments).
    pub unidentified: &'a [String],
}

/// The base profile's text and a name for it (the shipped name or the file path).
pub fn base_profile_text(sc: &Scenario) -> Result<(String, String), CalibrateError> {
    let profile =
        sc.doc.get("platform").and_then(|p| p.get("profile")).and_then(|p| p.as_str()).ok_or_else(|| CalibrateError::Profile(format!("{}: no `platform.profile`", sc.file)))?;
    if profile.ends_with(".toml") {
        let path = sc.dir.as_ref().map(|d| d.join(profile)).unwrap_or_else(|| PathBuf::from(profile));
        // Bounded like every profile read (issue 45's audit): a FIFO or /dev/zero is refused unread.
        let text = results::read_text_capped(&path, crate::scenario::MAX_SCENARIO_BYTES).map_err(|e| CalibrateError::Profile(e.to_string()))?;
        return Ok((text, path.display().to_string()));
    }
    SHIPPED_PROFILES
        .iter()
        .find(|(n, _)| *n == profile)
        .map(|(n, t)| (t.to_string(), n.to_string()))
        .ok_or_else(|| CalibrateError::Profile(format!("unknown shipped profile `{profile}`")))
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.into()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn table_mut<'a>(t: &'a mut toml::Table, k: &str) -> &'a mut toml::Table {
    let v = t.entry(k.to_string()).or_insert_with(|| toml::Value::Table(Default::default()));
    if !v.is_table() {
        *v = toml::Value::Table(Default::default());
    }
    v.as_table_mut().expect("just made a table")
}

/// The calibrated profile's TOML text; it is checked to parse as a profile before it is returned.
pub fn calibrated_profile(sc: &Scenario, rep: &FitReport, prov: &Provenance) -> Result<String, CalibrateError> {
    let (text, base_name) = base_profile_text(sc)?;
    let base = Platform::parse(&text, &base_name).map_err(|e| CalibrateError::Profile(e.to_string()))?;
    let mut doc: toml::Table = toml::from_str(&text).map_err(|e| CalibrateError::Profile(format!("{base_name}: {e}")))?;
    // The scenario's own overrides (the host's measured halt-poll window) become profile entries.
    if let Some(p) = sc.doc.get("platform").and_then(|p| p.as_table()) {
        for kind in ["costs", "params"] {
            if let Some(over) = p.get(kind).and_then(|v| v.as_table()) {
                let into = table_mut(&mut doc, kind);
                for (k, v) in over {
                    into.insert(k.clone(), v.clone());
                }
            }
        }
    }
    let files = prov.files.join(", ");
    for (f, x) in rep.free.iter().zip(&rep.fit.factors) {
        let (kind, name) = f.key().split_once('.').map(|(a, b)| (a.to_string(), b.to_string())).expect("costs.NAME or params.NAME");
        let was = match kind.as_str() {
            "costs" => base.costs.get(&name).map(|c| format!("{}: {}", c.basis.as_str(), c.source)),
            _ => base.params.get(&name).map(|p| format!("{}: {}", p.basis.as_str(), p.source)),
        }
        .unwrap_or_default();
        let source = format!(
            "fitted by irqlab calibrate (Nelder–Mead, ×{x:.4} the {base_name} value) to the p50/p99 of {} measured by irqlab run on {} in {files}; was {}",
            prov.train.join(", "),
            prov.host,
            short(&was, 160)
        );
        let mut t = f.table(*x, &source);
        t.insert("basis".into(), Basis::Measured.as_str().into());
        table_mut(&mut doc, &kind).insert(name, toml::Value::Table(t));
    }
    let header = table_mut(&mut doc, "profile");
    let hostname = prov.host.split_whitespace().next().unwrap_or("host");
    header.insert("name".into(), format!("{}-calibrated-{hostname}", base.name).into());
    header.insert("description".into(), format!("{} — calibrated by irqlab calibrate on {}", base.description, prov.host).into());
    let mut out = format!(
        "# Calibrated platform profile, written by: {}\n# Base: {base_name}. Host: {}.\n# Measured results: {files}\n# Fitted (basis = \"measured\"): {}; training paths: {}.\n",
        prov.command,
        prov.host,
        if rep.free.is_empty() {
            "nothing (the measured paths' costs come from primitives, in [costs.*] with their files)".to_string()
        } else {
            rep.free.iter().map(|f| f.key()).collect::<Vec<_>>().join(", ")
        },
        prov.train.join(", ")
    );
    for u in prov.unidentified {
        out.push_str(&format!("# Not identified: {u}\n"));
    }
    out.push('\n');
    out.push_str(&toml::to_string(&doc).map_err(|e| CalibrateError::Profile(e.to_string()))?);
    Platform::parse(&out, "calibrated profile").map_err(|e| CalibrateError::Profile(format!("the written profile does not parse: {e}")))?;
    Ok(out)
}
