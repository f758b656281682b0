//! The compare document (issue 44 item 3, issue 46): what comparing B with A found — the table,
//! the verdicts, the gate and its per-check outcomes — computed once by [`CompareDoc::build`],
//! then rendered: the terminal text and the JSON (`irqlab compare`, `irqlab-lab ab`, which built
//! the same composition twice before), the gate's lines, JUnit XML for CI test widgets
//! ([`junit`]) and a Markdown step summary ([`summary_md`]). Compute, then format: no renderer
//! computes a statistic.
pub mod checks;
pub mod junit;
pub mod summary_md;

use results::stats::gate::{GateOutcome, GateReport};
use results::stats::pairs::Verdicts;
use results::vocab::FailOn;
use results::{escape_control, Comparison, LatencyUnit, RunResult};

use crate::compare_table::{compare_output, CompareFormat};
use crate::verdict_table::{verdict_json, verdict_text, VerdictOptions};
pub use checks::{check_json, Check, CheckResult, Scale};

/// Why a document could not be built.
#[derive(Debug, thiserror::Error)]
pub enum DocError {
    #[error("the verdicts could not be computed")]
    Verdicts(#[source] results::ResultsError),
    #[error("the gate could not be evaluated")]
    Gate(#[source] results::stats::gate::GateError),
}

/// What a comparison is asked.
pub struct DocInputs<'a> {
    pub a: &'a RunResult,
    pub b: &'a RunResult,
    /// How A and B are named in the table (their paths).
    pub a_name: &'a str,
    pub b_name: &'a str,
    /// `--map A_KEY=B_KEY` renamings.
    pub map: &'a [(String, String)],
    pub unit: LatencyUnit,
    pub opts: VerdictOptions,
    /// `--paired`: run i of A with run i of B.
    pub paired: bool,
    /// `--share-above T` (ns): the share of samples beyond each T, with its verdict.
    pub share_above: &'a [u64],
    /// The gate's question; without it the gate still answers for any statistic, and the
    /// renderers say that nothing was asked to fail.
    pub fail_on: Option<FailOn>,
}

/// The answer, first line of every rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// No configuration of A pairs with one of B: no verdict at all.
    NothingPaired,
    Pass,
    Slower,
    /// The gate could not check something it covers.
    Unchecked,
}

/// A comparison, computed.
pub struct CompareDoc {
    pub a_name: String,
    pub b_name: String,
    pub unit: LatencyUnit,
    pub opts: VerdictOptions,
    pub fail_on: Option<FailOn>,
    pub comparison: Comparison,
    /// The side-by-side table as text, CSV and JSON (`report::compare_table`).
    pub table: String,
    pub csv: String,
    table_json: String,
    /// The verdicts at the plain confidence.
    pub verdicts: Verdicts,
    /// B − A of the path census (report::census), when both sides carry one: text and JSON.
    census_text: String,
    census_json: Option<serde_json::Value>,
    /// The gate (`None` when nothing paired).
    pub gate: Option<GateReport>,
    /// One outcome per gated check (configuration × class × statistic), and one per thing that
    /// blinds the gate: what JUnit's test cases and the summary's rows are made from.
    pub checks: Vec<Check>,
}

impl CompareDoc {
    pub fn build(i: DocInputs) -> Result<CompareDoc, DocError> {
        let out = |f| compare_output(i.a, i.b, i.a_name, i.b_name, i.map, i.unit, f);
        let (table, csv, json) = (out(CompareFormat::Table), out(CompareFormat::Csv), out(CompareFormat::Json));
        let comparison = table.comparison;
        // The shares asked for (`--share-above`) and the one gated (`--fail-on slower:share>T`).
        let mut thresholds = i.share_above.to_vec();
        thresholds.extend(i.fail_on.as_ref().and_then(|f| f.stat.as_deref()?.strip_prefix("share>")?.parse::<u64>().ok()));
        thresholds.sort_unstable();
        thresholds.dedup();
        let verdicts = results::stats::pairs::verdicts_beyond(i.a, i.b, &comparison, i.opts.confidence, i.paired, &thresholds)
            .map_err(DocError::Verdicts)?
            .recommend(i.opts.effect, i.opts.confidence);
        let stat = i.fail_on.as_ref().and_then(|f| f.stat.as_deref());
        let (gate, checks) = if comparison.pairs.is_empty() {
            let why = "no configuration of A pairs with one of B".to_string();
            (None, vec![Check { config: None, class: None, stat: None, scale: Scale::Ratio, result: CheckResult::CannotCheck { reason: why, blocks: true } }])
        } else {
            let g = results::stats::gate::gate(i.a, i.b, &comparison, &verdicts, stat, i.opts.confidence).map_err(DocError::Gate)?;
            let c = checks::from_gate(&g);
            (Some(g), c)
        };
        Ok(CompareDoc {
            a_name: i.a_name.to_string(),
            b_name: i.b_name.to_string(),
            unit: i.unit,
            opts: i.opts,
            fail_on: i.fail_on,
            comparison,
            table: table.text,
            csv: csv.text,
            table_json: json.text,
            verdicts,
            census_text: crate::census::census_compare_text(i.a, i.b, crate::census::TOP).unwrap_or_default(),
            census_json: crate::census::census_compare_json(i.a, i.b),
            gate,
            checks,
        })
    }

    pub fn answer(&self) -> Answer {
        match self.gate.as_ref().map(|g| g.outcome) {
            None => Answer::NothingPaired,
            Some(GateOutcome::Pass) => Answer::Pass,
            Some(GateOutcome::Slower) => Answer::Slower,
            Some(GateOutcome::Unchecked) => Answer::Unchecked,
        }
    }

    /// The statistic gated, in words.
    pub fn gated(&self) -> String {
        self.fail_on.as_ref().and_then(|f| f.stat.clone()).unwrap_or_else(|| "any statistic".into())
    }

    /// The table followed by the verdicts and the census, as `irqlab compare` prints them.
    pub fn text(&self) -> String {
        format!("{}{}{}", self.table, verdict_text(&self.verdicts, &self.opts, self.unit), self.census_text)
    }

    /// The table's JSON with `verdicts` and `gate` added.
    pub fn json(&self) -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(&self.table_json).unwrap_or(serde_json::Value::Null);
        v["verdicts"] = verdict_json(&self.verdicts, &self.opts);
        if let Some(c) = &self.census_json {
            v["census"] = c.clone();
        }
        v["gate"] = self.gate_json();
        v
    }

    /// The gate as JSON: its answer, level, every check, and the lists the lines are made of.
    pub fn gate_json(&self) -> serde_json::Value {
        let fail_on = self.fail_on.as_ref().map(|f| f.to_string());
        let Some(g) = &self.gate else {
            return serde_json::json!({"given": false, "why": "no configuration of A pairs with one of B", "fail_on": fail_on});
        };
        serde_json::json!({
            "given": g.outcome != GateOutcome::Unchecked,
            "outcome": format!("{:?}", g.outcome).to_lowercase(),
            "fail_on": fail_on,
            "checks": g.checks, "level": g.level,
            "slower": g.slower(), "unchecked": g.unchecked(), "not_checked": g.not_checked(), "table_only": g.table_only(),
            "cases": self.checks.iter().map(check_json).collect::<Vec<_>>(),
        })
    }

    /// The gate's lines (`note: …`, then one `verdict: …`), the same words everywhere.
    pub fn gate_lines(&self) -> Vec<String> {
        let Some(g) = &self.gate else { return vec!["verdict: not given: no configuration of A pairs with one of B".into()] };
        let list = |v: &[String]| escape_control(&v.join("; "));
        let mut lines = Vec::new();
        let (not_checked, table_only) = (g.not_checked(), g.table_only());
        if !not_checked.is_empty() {
            lines.push(format!("note: not gated (no interval for this data): {}", list(&not_checked)));
        }
        if !table_only.is_empty() {
            lines.push(format!(
                "note: slower in the table at {} but not at the gate's corrected level {:.4} (one-sided, {} checks): {}",
                self.opts.confidence.level(),
                g.level,
                g.checks,
                list(&table_only)
            ));
        }
        lines.push(match g.outcome {
            GateOutcome::Unchecked => format!("verdict: not given: the gate could not check everything it covers: {}", list(&g.unchecked())),
            GateOutcome::Slower => format!(
                "verdict: B is resolvably slower ({} one-sided checks, each interval at {:.4}, {} overall): {}",
                g.checks,
                g.level,
                self.opts.confidence.level(),
                list(&g.slower())
            ),
            GateOutcome::Pass => format!("verdict: B is not resolvably slower on {} ({} one-sided checks, each interval at {:.4})", self.gated(), g.checks, g.level),
        });
        lines
    }
}
