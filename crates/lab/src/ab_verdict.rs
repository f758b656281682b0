//! The verdict of one bench of an A/B (ab.rs): `irqlab compare`'s table and verdicts
//! (report::compare_table, report::verdict_table) and the gate of `irqlab compare --fail-on`
//! (results::stats::gate), for one side's imported runs against the other's. Apart from ab.rs so
//! an A/B of several benches gives each its own verdict.
use std::path::Path;

use report::compare_table::{compare_output, CompareFormat};
use report::verdict_table::{verdict_json, verdict_text, VerdictOptions};
use results::LatencyUnit;

use crate::ab::{AbConfig, AbError};

/// (exit status, the text printed, the comparison as JSON, the verdict as JSON).
pub fn verdict(
    a: &AbConfig,
    ra: &results::RunResult,
    rb: &results::RunResult,
    an: &Path,
    bn: &Path,
    repeat: u32,
) -> Result<(i32, String, serde_json::Value, serde_json::Value), AbError> {
    let (an, bn) = (an.display().to_string(), bn.display().to_string());
    let mut text = String::new();
    let o = compare_output(ra, rb, &an, &bn, &[], LatencyUnit::Us, CompareFormat::Table);
    let j = compare_output(ra, rb, &an, &bn, &[], LatencyUnit::Us, CompareFormat::Json);
    let conf = results::stats::Confidence::new(a.confidence).map_err(|e| AbError::Usage(e.to_string()))?;
    let opts = VerdictOptions { confidence: conf, effect: 0.05 };
    let v = results::stats::pairs::verdicts(ra, rb, &o.comparison, conf)?.recommend(0.05, conf);
    text += &o.text;
    text += &verdict_text(&v, &opts, LatencyUnit::Us);
    text += &report::census::census_compare_text(ra, rb, report::census::TOP).unwrap_or_default();
    let mut cj: serde_json::Value = serde_json::from_str(&j.text).map_err(|e| AbError::Compare(e.to_string()))?;
    cj["verdicts"] = verdict_json(&v, &opts);
    if let Some(c) = report::census::census_compare_json(ra, rb) {
        cj["census"] = c;
    }
    if repeat == 1 {
        text += "note: --single-run: one boot per side; the verdicts rest on each run's own samples and cannot see boot-to-boot spread\n";
    }
    let (code, vj) = if o.nothing_paired() {
        text += "verdict: not given: no configuration of A pairs with one of B\n";
        (1, serde_json::json!({"given": false, "why": "no configuration of A pairs with one of B"}))
    } else {
        let stat = a.fail_on.as_ref().and_then(|f| f.stat.clone());
        // The same gate as `irqlab compare --fail-on` (results::stats::gate): one-sided,
        // corrected for the checks that can trip, and never a pass when something it
        // covers could not be compared.
        let conf = results::stats::Confidence::new(a.confidence).map_err(|e| AbError::Compare(e.to_string()))?;
        let g = results::stats::gate::gate(ra, rb, &o.comparison, &v, stat.as_deref(), conf).map_err(|e| AbError::Compare(e.to_string()))?;
        use results::stats::gate::GateOutcome;
        let vj = serde_json::json!({"given": g.outcome != GateOutcome::Unchecked, "slower": g.slower(), "unchecked": g.unchecked(), "not_checked": g.not_checked(), "table_only": g.table_only(), "checks": g.checks, "level": g.level, "fail_on": a.fail_on.as_ref().map(|f| f.stat.as_deref().map(|st| format!("slower:{st}")).unwrap_or_else(|| "slower".into()))});
        for n in &g.not_checked() {
            text += &format!("note: not gated (no interval for this data): {}\n", results::escape_control(n));
        }
        for n in &g.table_only() {
            text += &format!("note: slower in the table but not at the gate's corrected level: {}\n", results::escape_control(n));
        }
        let code = match g.outcome {
            GateOutcome::Unchecked => {
                text += &format!("verdict: not given: the gate could not check: {}\n", results::escape_control(&g.unchecked().join("; ")));
                5
            }
            GateOutcome::Slower => {
                text += &format!(
                    "verdict: B is resolvably slower ({} one-sided checks, each interval at {:.4}): {}\n",
                    g.checks,
                    g.level,
                    results::escape_control(&g.slower().join("; "))
                );
                if a.fail_on.is_some() {
                    4
                } else {
                    0
                }
            }
            GateOutcome::Pass => {
                text += &format!(
                    "verdict: B is not resolvably slower on {} ({} one-sided checks, each interval at {:.4})\n",
                    stat.as_deref().unwrap_or("any statistic"),
                    g.checks,
                    g.level
                );
                0
            }
        };
        (code, vj)
    };
    Ok((code, text, cj, vj))
}
