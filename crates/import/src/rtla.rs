//! `rtla timerlat hist` output (the layout of rtla's `timerlat_hist.c`, as documented in the
//! kernel's `Documentation/tools/rtla/rtla-timerlat-hist.rst`): a `# Time unit is …` header, an
//! `Index IRQ-000 Thr-000 …` header (`Usr-000` columns too where user-space threads ran), one row
//! per bucket (the index is the bucket's value: bucket × `--bucket-size`), then `over:`,
//! `count:`, `min:`, `avg:`, `max:` rows; newer versions add an `ALL:` block, which is skipped.
//!
//! IRQ latency and thread latency are separate classes per CPU — `irq.cpu0`, `thread.cpu0`,
//! `user.cpu0` — because timerlat's whole point is telling them apart. Overflows (`over:`) are
//! recorded at the top and counted in `clamped_high`. The counts of every column must add up to
//! its `count:`, so a truncated file is refused. The Debian 12 kernel here has no timerlat
//! tracer, so the checked-in example follows the documented layout rather than a local run.
use super::{count_sum, finite, insert_class, num, scaled, scaled_f, unique, unit_agrees, Exact, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

fn class_name(file: &str, line: usize, col: &str) -> Result<String, ImportError> {
    let (kind, cpu) = col.split_once('-').ok_or_else(|| ImportError::line(file, line, "columns IRQ-NNN, Thr-NNN or Usr-NNN", col))?;
    let cpu: u32 = num(file, line, "a CPU number in the column name", cpu)?;
    let kind = match kind {
        "IRQ" => "irq",
        "Thr" => "thread",
        "Usr" => "user",
        _ => return Err(ImportError::line(file, line, "columns IRQ-NNN, Thr-NNN or Usr-NNN", col)),
    };
    Ok(format!("{kind}.cpu{cpu}"))
}

pub(super) fn parse(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let mut scale: Option<(u64, usize)> = None;
    let mut duration = None;
    let mut cols: Vec<String> = Vec::new();
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut foot: std::collections::BTreeMap<&str, Vec<Option<f64>>> = Default::default();
    let feet = ["over:", "count:", "min:", "avg:", "max:"];
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        if let Some(u) = l.strip_prefix("# Time unit is ") {
            let s = match u {
                _ if u.starts_with("microseconds") => 1000,
                _ if u.starts_with("nanoseconds") => 1,
                _ => return Err(ImportError::line(file, n, "`microseconds (us)` or `nanoseconds (ns)`", u)),
            };
            // Two unit lines that disagree (two outputs pasted together) were resolved by the
            // last (issue 45): neither can be trusted for the rows.
            if let Some((first, at)) = scale.filter(|(f, _)| *f != s) {
                let said = if first == 1 { "nanoseconds" } else { "microseconds" };
                return Err(ImportError::line(file, n, format!("the unit of line {at} (`{said}`): one unit per rtla output"), l));
            }
            scale.get_or_insert((s, n));
            continue;
        }
        if let Some(d) = l.strip_prefix("# Duration:") {
            duration = Some(d.trim().to_string());
            continue;
        }
        if l.starts_with('#') {
            continue;
        }
        if l.starts_with("ALL:") {
            break;
        }
        if let Some(rest) = l.strip_prefix("Index") {
            if !cols.is_empty() {
                // Rows read so far belong to the first header's columns: two histograms (or one
                // pasted into another) cannot be told apart, so the file is refused.
                return Err(ImportError::line(file, n, "one `Index …` header per file (one rtla timerlat hist output)", l));
            }
            cols = rest.split_whitespace().map(|c| class_name(file, n, c)).collect::<Result<_, _>>()?;
            // A column named twice would overwrite another CPU's class (issue 36).
            unique(file, &format!("line {n}"), "column (IRQ-NNN, Thr-NNN, Usr-NNN)", rest.split_whitespace())?;
            // So would one CPU in two spellings (`IRQ-000`, `IRQ-0`; issue 45): rtla prints
            // each CPU once, so this is not its output.
            let mut seen: std::collections::HashMap<&str, &str> = Default::default();
            for (class, col) in cols.iter().zip(rest.split_whitespace()) {
                if let Some(earlier) = seen.insert(class, col) {
                    return Err(ImportError::line(file, n, format!("one column per CPU and kind (rtla prints each once): `{earlier}` and `{col}` are both {class}"), l));
                }
            }
            continue;
        }
        if cols.is_empty() {
            return Err(ImportError::line(file, n, "the `Index IRQ-000 Thr-000 …` header before any row", l));
        }
        if let Some(f) = feet.iter().find(|f| l.starts_with(**f)) {
            let v: Vec<Option<f64>> =
                l[f.len()..].split_whitespace().map(|x| if x == "-" { Ok(None) } else { num::<f64>(file, n, "a number or -", x).map(Some) }).collect::<Result<_, _>>()?;
            if v.len() != cols.len() {
                return Err(ImportError::line(file, n, format!("{} values (one per column)", cols.len()), format!("{} values", v.len())));
            }
            if foot.insert(f, v).is_some() {
                return Err(ImportError::line(file, n, format!("one `{f}` row"), "a second one"));
            }
            continue;
        }
        let mut it = l.split_whitespace();
        let idx = num::<u64>(file, n, "a bucket row `INDEX COUNT…` (run without --no-index)", it.next().unwrap_or(""))?;
        let counts: Vec<u64> = it.map(|x| num::<u64>(file, n, "a count", x)).collect::<Result<_, _>>()?;
        if counts.len() != cols.len() {
            return Err(ImportError::line(file, n, format!("{} counts after the index (one per column)", cols.len()), format!("{} counts", counts.len())));
        }
        rows.push((idx, counts));
    }
    let scale = scale.ok_or_else(|| ImportError::other(file, "no `# Time unit is …` line: expected rtla timerlat hist output"))?.0;
    unit_agrees(file, opts, scale, "`# Time unit is`")?;
    if cols.is_empty() {
        return Err(ImportError::other(file, "no `Index IRQ-000 Thr-000 …` header: expected rtla timerlat hist output"));
    }
    for f in feet {
        if !foot.contains_key(f) {
            return Err(ImportError::other(file, format!("no `{f}` row after the histogram (truncated?)")));
        }
    }
    let top = rows.iter().map(|r| r.0.saturating_add(1)).max().unwrap_or(0);
    let mut c = ConfigResult::new("timerlat");
    if let Some(d) = duration {
        c.params.insert("rtla.duration".into(), d);
    }
    for (k, class) in cols.iter().enumerate() {
        let get = |f: &str| foot[f][k];
        let whole = |f: &str| -> Result<u64, ImportError> {
            let v = finite(file, &format!("`{f}` column {class}"), get(f).unwrap_or(0.0), false)?;
            if v.fract() != 0.0 || v > super::MAX_COUNT as f64 {
                return Err(ImportError::other(file, format!("`{f}` column {class}: expected a whole count, found {v}")));
            }
            Ok(v as u64)
        };
        let (count, over) = (whole("count:")?, whole("over:")?);
        let mut buckets = Vec::with_capacity(rows.len());
        for (b, cnt) in &rows {
            buckets.push((scaled(file, &format!("histogram row {b}"), *b, scale)?, cnt[k]));
        }
        let in_hist = count_sum(file, &format!("column {class}"), buckets.iter().map(|b| b.1))?;
        if in_hist.checked_add(over) != Some(count) {
            return Err(ImportError::other(file, format!("column {class}: buckets ({in_hist}) + over ({over}) ≠ count ({count}) (truncated?)")));
        }
        if count == 0 {
            c.notes.push(format!("class `{class}`: no samples"));
            continue;
        }
        let max = get("max:").map(|v| scaled_f(file, &format!("`max:` column {class}"), v, scale as f64)).transpose()?;
        if over > 0 {
            buckets.push((top.saturating_mul(scale).min(max.unwrap_or(u64::MAX)), over));
        }
        let min = get("min:").map(|v| scaled_f(file, &format!("`min:` column {class}"), v, scale as f64)).transpose()?;
        let width = rows.windows(2).map(|w| w[1].0.saturating_sub(w[0].0)).filter(|d| *d > 0).min().unwrap_or(1);
        let exact = Exact { min, max, mean: get("avg:").map(|v| v * scale as f64), overflow: over, resolution: width.saturating_mul(scale), ..Default::default() };
        let why = format!("all {over} samples are above the histogram (`over:`)");
        insert_class(&mut c, file, &format!("column {class}"), class, &buckets, exact, &why, "run rtla timerlat hist with a larger --entries or --bucket-size")?;
        if over > 0 && c.classes.contains_key(class) {
            c.notes.push(format!("class `{class}`: {over} samples above the histogram; percentiles among them are lower bounds"));
        }
    }
    if c.classes.is_empty() && c.figures.is_empty() {
        return Err(ImportError::other(file, "every column has count 0"));
    }
    Ok(Parsed { origin: Origin { tool: "rtla timerlat".into(), ..Origin::default() }, configs: vec![c], kind: results::ResultKind::Measured })
}
