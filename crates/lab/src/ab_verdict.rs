//! The verdict of one bench of an A/B (ab.rs): `irqlab compare`'s compare document
//! (report::compare_doc: the table, the verdicts and the gate of `irqlab compare --fail-on`,
//! built once for both commands), for one side's imported runs against the other's. Apart from
//! ab.rs so an A/B of several benches gives each its own verdict.
use std::path::Path;

use report::compare_doc::{Answer, CompareDoc, DocInputs};
use report::verdict_table::VerdictOptions;
use results::LatencyUnit;

use crate::ab::{AbConfig, AbError};

/// One bench's verdict: the exit status, the text printed, and the document (its JSON goes to
/// comparison.json, its gate to `--junit` and `--summary-md`).
pub struct BenchVerdict {
    pub code: i32,
    pub text: String,
    pub doc: CompareDoc,
}

pub fn verdict(a: &AbConfig, ra: &results::RunResult, rb: &results::RunResult, an: &Path, bn: &Path, repeat: u32) -> Result<BenchVerdict, AbError> {
    let conf = results::stats::Confidence::new(a.confidence).map_err(|e| AbError::Usage(e.to_string()))?;
    let doc = CompareDoc::build(DocInputs {
        a: ra,
        b: rb,
        a_name: &an.display().to_string(),
        b_name: &bn.display().to_string(),
        map: &[],
        unit: LatencyUnit::Us,
        opts: VerdictOptions { confidence: conf, effect: 0.05 },
        paired: false,
        share_above: &[],
        fail_on: a.fail_on.clone(),
    })
    .map_err(|e| AbError::Compare(e.to_string()))?;
    let mut text = doc.text();
    if repeat == 1 {
        text += "note: --single-run: one boot per side; the verdicts rest on each run's own samples and cannot see boot-to-boot spread\n";
    }
    for line in doc.gate_lines() {
        text += &line;
        text += "\n";
    }
    let code = match doc.answer() {
        Answer::NothingPaired => 1,
        Answer::Unchecked => 5,
        Answer::Slower if a.fail_on.is_some() => 4,
        Answer::Slower | Answer::Pass => 0,
    };
    Ok(BenchVerdict { code, text, doc })
}
