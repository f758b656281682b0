//! A tbm-style report (the tiny bare-metal guest of the Xen on Arm latency post, S3):
//! `latency (ns): max=7030 warm_max=4980 min=4810 avg=4850`. tbm prints a running report; the
//! last line is the whole run. Summary values only — no samples, so no percentiles and no
//! distribution — which become figures `timer.avg`, `timer.min`, `timer.max`, `timer.warm_max`
//! in ns. tbm's avg is an exponential moving average (k = 0.125), not a mean; the note says so.
use super::{finite, num, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

const KEYS: [&str; 4] = ["max", "warm_max", "min", "avg"];

pub(super) fn parse(text: &str, file: &str, _opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let mut last = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let Some(pos) = line.find("latency (ns):") else { continue };
        let rest = &line[pos + "latency (ns):".len()..];
        let mut vals = [None; 4];
        for tok in rest.split_whitespace() {
            let (k, v) = tok.split_once('=').ok_or_else(|| ImportError::line(file, n, "KEY=VALUE pairs max= warm_max= min= avg=", tok))?;
            let Some(slot) = KEYS.iter().position(|x| *x == k) else { continue };
            if vals[slot].is_some() {
                return Err(ImportError::line(file, n, format!("`{k}=` once per report"), format!("`{k}=` twice")));
            }
            let v = num::<f64>(file, n, "a latency in ns", v)?;
            vals[slot] = Some(finite(file, &format!("line {n}: `{k}=`"), v, false)?);
        }
        for (k, v) in KEYS.iter().zip(vals) {
            if v.is_none() {
                return Err(ImportError::line(file, n, format!("`{k}=` in the report"), rest.trim()));
            }
        }
        let [max, warm_max, min, avg] = vals.map(|v| v.expect("checked"));
        if !(min <= warm_max && warm_max <= max && min <= avg && avg <= max) {
            return Err(ImportError::line(file, n, "min ≤ warm_max ≤ max and min ≤ avg ≤ max", rest.trim()));
        }
        last = Some([max, warm_max, min, avg]);
    }
    let vals = last.ok_or_else(|| ImportError::other(file, "no `latency (ns): max= warm_max= min= avg=` line: expected a tbm report"))?;
    let mut c = ConfigResult::new("tbm");
    for (k, v) in KEYS.iter().zip(vals) {
        c.set_figure(&format!("timer.{k}"), v, "ns");
    }
    c.notes.push("tbm summary only: avg is tbm's exponential moving average (k = 0.125); no samples, so no percentiles or intervals".into());
    Ok(Parsed { origin: Origin { tool: "tbm".into(), ..Origin::default() }, configs: vec![c], kind: results::ResultKind::Measured })
}
