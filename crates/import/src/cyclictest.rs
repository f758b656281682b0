//! cyclictest (rt-tests; checked with 2.40 from Debian 12): its `--json=FILE` output and its
//! `-h/--histogram=US` text (or `-H/--histofall=US`: the same with a column of all threads
//! together, checked and left out), told apart by the first character (`{`).
//!
//! Both hold, per measurement thread, a histogram of 1 µs buckets (bucket i = latencies in
//! [i, i + 1) µs, as cyclictest's `timerthread` floors ns / 1000 before counting), the samples
//! beyond it ("overflows"), and the exact min, average and max. Overflows are recorded at the
//! histogram's top and counted in `clamped_high`: a percentile that falls among them is a lower
//! bound, which the configuration's note says. One thread gives class `timer`, several
//! `timer.t0`, `timer.t1`, …. JSON gives the command line, version and host (`sysinfo`); the text
//! gives none of them. Units: JSON's `resolution_in_ns` says µs (0) or ns (1); the text does not
//! say (µs by default, ns with `-N`), so its unit must be given with `--unit us|ns` — reading
//! `-N` text as µs made every value 1000× too large (issue 36).
//!
//! A thread whose histogram holds none of its samples (`--json` without `-h`, or every sample
//! above `-h N`) has no percentiles: its summary becomes figures and a note names the fix
//! (`validate::insert_class`).
use std::collections::BTreeMap;

use serde_json::Value;

use super::{count_sum, finite, insert_class, num, scaled, scaled_f, strict_json, unit_agrees, unit_ns, Exact, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

pub(super) fn parse(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    if text.trim_start().starts_with('{') {
        parse_json(text, file, opts)
    } else {
        let unit =
            opts.unit.ok_or_else(|| ImportError::other(file, "cyclictest's -h text does not state its unit: give --unit us (cyclictest's default) or --unit ns (run with -N)"))?;
        parse_hist(text, file, unit_ns(unit))
    }
}

struct Thread {
    label: String,
    buckets: Vec<(u64, u64)>,
    exact: Exact,
    /// Why the histogram may hold none of the samples, and the flag that fixes it.
    why: String,
}

const FIX: &str = "run cyclictest with -h N (N above the largest latency; in µs, or ns with -N)";

fn config(file: &str, threads: Vec<Thread>) -> Result<ConfigResult, ImportError> {
    let mut c = ConfigResult::new("cyclictest");
    let one = threads.len() == 1;
    for t in threads {
        let class = if one { "timer".to_string() } else { format!("timer.{}", t.label) };
        if t.buckets.iter().all(|b| b.1 == 0) {
            // Stated, not dropped silently: the thread ran but its histogram holds nothing.
            c.notes.push(format!("class `{class}`: no samples in its histogram"));
            continue;
        }
        insert_class(&mut c, file, &format!("thread {}", t.label), &class, &t.buckets, t.exact, &t.why, FIX)?;
        if t.exact.overflow > 0 && c.classes.contains_key(&class) {
            c.notes.push(format!("class `{class}`: {} samples above the histogram; percentiles among them are lower bounds", t.exact.overflow));
        }
    }
    if c.classes.is_empty() && c.figures.is_empty() {
        return Err(ImportError::other(file, "every thread's histogram is empty"));
    }
    Ok(c)
}

fn field<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    v.get(k).or_else(|| v.get(format!("{k}:")))
}

fn parse_json(text: &str, file: &str, opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let doc: Value = strict_json(text, file, "complete cyclictest JSON")?;
    let threads = doc.get("thread").and_then(Value::as_object).ok_or_else(|| ImportError::key(file, "thread", "an object of threads (cyclictest --json)", "nothing"))?;
    let scale = match doc.get("resolution_in_ns").and_then(Value::as_u64) {
        Some(1) => 1,
        Some(0) | None => 1000,
        Some(other) => return Err(ImportError::key(file, "resolution_in_ns", "0 (µs) or 1 (ns)", other.to_string())),
    };
    unit_agrees(file, opts, scale, "`resolution_in_ns`")?;
    let s = |k: &str| field(&doc, k).and_then(Value::as_str).map(String::from);
    let command = s("cmdline");
    let limit = command.as_deref().and_then(histogram_limit);
    let mut out = Vec::new();
    let mut ids: Vec<(&String, &Value)> = threads.iter().collect();
    ids.sort_by_key(|(k, _)| k.parse::<u64>().unwrap_or(u64::MAX));
    for (id, t) in ids {
        let key = |k: &str| format!("thread.{id}.{k}");
        let u = |k: &str| t.get(k).and_then(Value::as_u64).ok_or_else(|| ImportError::key(file, &key(k), "an unsigned integer", "nothing"));
        let hist = t
            .get("histogram")
            .and_then(Value::as_object)
            .ok_or_else(|| ImportError::key(file, &key("histogram"), "an object bucket → count (run cyclictest with -h)", "nothing"))?;
        let mut buckets = Vec::with_capacity(hist.len());
        let mut top = 0;
        for (b, n) in hist {
            let b: u64 = b.parse().map_err(|_| ImportError::key(file, &key("histogram"), "bucket numbers", b.clone()))?;
            let n = n.as_u64().ok_or_else(|| ImportError::key(file, &key(&format!("histogram.{b}")), "a count", n.to_string()))?;
            top = top.max(b.saturating_add(1));
            buckets.push((scaled(file, &key(&format!("histogram.{b}")), b, scale)?, n));
        }
        let cycles = u("cycles")?;
        let in_hist = count_sum(file, &key("histogram"), buckets.iter().map(|b| b.1))?;
        if in_hist > cycles {
            return Err(ImportError::key(file, &key("histogram"), format!("at most `cycles` = {cycles} samples"), in_hist.to_string()));
        }
        let overflow = cycles - in_hist;
        // The JSON lists only non-empty buckets; the histogram's size is `-h N` of the command.
        let top = limit.unwrap_or(top).max(top);
        let max = scaled(file, &key("max"), u("max")?, scale)?;
        if overflow > 0 {
            buckets.push((top.saturating_mul(scale).min(max), overflow));
        }
        let mean = t.get("avg").and_then(Value::as_f64).map(|a| a * scale as f64);
        let min = scaled(file, &key("min"), u("min")?, scale)?;
        let why = match limit {
            None => "cyclictest wrote no histogram (its command has no -h)".to_string(),
            Some(n) => format!("all {overflow} samples are above the histogram's top (-h {n})"),
        };
        let exact = Exact { min: Some(min), max: Some(max), mean, overflow, resolution: scale, ..Default::default() };
        out.push(Thread { label: format!("t{id}"), buckets, exact, why });
    }
    if out.is_empty() {
        return Err(ImportError::key(file, "thread", "at least one thread", "none"));
    }
    let mut host = BTreeMap::new();
    if let Some(si) = doc.get("sysinfo") {
        for (k, name) in [("nodename", "host"), ("release", "kernel"), ("machine", "machine"), ("version", "kernel_build")] {
            if let Some(v) = si.get(k).and_then(Value::as_str) {
                host.insert(name.to_string(), v.to_string());
            }
        }
    }
    Ok(Parsed {
        origin: Origin { tool: "cyclictest".into(), version: s("rt_test_version"), command, host },
        configs: vec![config(file, out)?],
        kind: results::ResultKind::Measured,
    })
}

/// `N` of `-h N`, `-hN`, `--histogram=N` or `--histogram N` in a cyclictest command line.
fn histogram_limit(cmd: &str) -> Option<u64> {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    for (i, t) in toks.iter().enumerate() {
        let v = match *t {
            "-h" | "--histogram" | "-H" | "--histofall" => toks.get(i + 1).copied(),
            _ => t.strip_prefix("--histogram=").or_else(|| t.strip_prefix("--histofall=")).or_else(|| t.strip_prefix("-h").filter(|x| !x.is_empty())),
        };
        if let Some(n) = v.and_then(|v| v.parse().ok()) {
            return Some(n);
        }
    }
    None
}

fn columns(file: &str, lineno: usize, rest: &str, want: Option<usize>, what: &str) -> Result<Vec<f64>, ImportError> {
    let v: Vec<f64> = rest.split_whitespace().map(|x| num::<f64>(file, lineno, what, x)).collect::<Result<_, _>>()?;
    if let Some(n) = want {
        if v.len() != n {
            return Err(ImportError::line(file, lineno, format!("{n} columns (one per thread)"), format!("{} columns", v.len())));
        }
    }
    Ok(v)
}

fn parse_hist(text: &str, file: &str, scale: u64) -> Result<Parsed, ImportError> {
    let mut rows: Vec<(u64, Vec<u64>, usize)> = Vec::new();
    let mut threads: Option<usize> = None;
    // label → (its line, one value per thread)
    let mut tail: BTreeMap<&str, (usize, Vec<f64>)> = BTreeMap::new();
    let mut seen_header = false;
    let labels = ["# Total:", "# Min Latencies:", "# Avg Latencies:", "# Max Latencies:", "# Histogram Overflows:"];
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let l = line.trim();
        if l == "# Histogram" {
            seen_header = true;
            continue;
        }
        if let Some(label) = labels.iter().find(|lb| l.starts_with(**lb)) {
            if tail.contains_key(label) {
                return Err(ImportError::line(file, n, format!("one `{label}` line"), "a second one"));
            }
            tail.insert(label, (n, columns(file, n, &l[label.len()..], None, "a count or latency")?));
            continue;
        }
        if !seen_header || l.starts_with('#') || l.is_empty() || tail.contains_key("# Total:") {
            continue;
        }
        let mut it = l.split_whitespace();
        let idx = num::<u64>(file, n, "a histogram row `BUCKET COUNT…`", it.next().unwrap_or(""))?;
        let counts: Vec<u64> = it.map(|x| num::<u64>(file, n, "a histogram count", x)).collect::<Result<_, _>>()?;
        match threads {
            None if counts.is_empty() => return Err(ImportError::line(file, n, "a histogram row `BUCKET COUNT…`", l)),
            None => threads = Some(counts.len()),
            Some(t) if t != counts.len() => return Err(ImportError::line(file, n, format!("{t} counts (one per thread)"), format!("{} counts", counts.len()))),
            _ => {}
        }
        rows.push((idx, counts, n));
    }
    if !seen_header {
        return Err(ImportError::other(file, "no `# Histogram` line: expected cyclictest -h/--histogram output"));
    }
    let width = threads.ok_or_else(|| ImportError::other(file, "`# Histogram` has no rows"))?;
    let histofall = all_threads_column(file, width, &mut rows, &mut tail)?;
    let t = if histofall { width - 1 } else { width };
    for (n, v) in tail.values() {
        if v.len() != t {
            return Err(ImportError::line(file, *n, format!("{t} columns (one per thread, as the histogram rows)"), format!("{} columns", v.len())));
        }
    }
    for lb in &labels[..4] {
        if !tail.contains_key(lb) {
            return Err(ImportError::other(file, format!("no `{lb}` line after the histogram (truncated?)")));
        }
    }
    let top = rows.iter().map(|r| r.0.saturating_add(1)).max().unwrap_or(0);
    let mut out = Vec::new();
    for k in 0..t {
        let mut buckets = Vec::with_capacity(rows.len());
        for (b, c, _) in &rows {
            buckets.push((scaled(file, &format!("histogram row {b}"), *b, scale)?, c[k]));
        }
        let whole = |label: &str| -> Result<u64, ImportError> {
            let v = finite(file, &format!("`{label}` thread {k}"), tail[label].1[k], false)?;
            if v.fract() != 0.0 || v > super::MAX_COUNT as f64 {
                return Err(ImportError::other(file, format!("`{label}` thread {k}: expected a whole count, found {v}")));
            }
            Ok(v as u64)
        };
        let total = whole("# Total:")?;
        let in_hist = count_sum(file, &format!("thread {k}"), buckets.iter().map(|b| b.1))?;
        if in_hist != total {
            return Err(ImportError::other(file, format!("thread {k}: histogram rows sum to {in_hist}, `# Total:` says {total} (truncated?)")));
        }
        let overflow = if tail.contains_key("# Histogram Overflows:") { whole("# Histogram Overflows:")? } else { 0 };
        let max = scaled_f(file, &format!("`# Max Latencies:` thread {k}"), tail["# Max Latencies:"].1[k], scale as f64)?;
        if overflow > 0 {
            buckets.push((top.saturating_mul(scale).min(max), overflow));
        }
        let min = scaled_f(file, &format!("`# Min Latencies:` thread {k}"), tail["# Min Latencies:"].1[k], scale as f64)?;
        let mean = finite(file, &format!("`# Avg Latencies:` thread {k}"), tail["# Avg Latencies:"].1[k], false)? * scale as f64;
        let exact = Exact { min: Some(min), max: Some(max), mean: Some(mean), overflow, resolution: scale, ..Default::default() };
        let why = format!("all {overflow} samples are above the histogram (`# Histogram Overflows:`)");
        out.push(Thread { label: format!("t{k}"), buckets, exact, why });
    }
    if out.iter().all(|t| t.buckets.iter().all(|b| b.1 == 0)) {
        return Err(ImportError::other(file, "every histogram count is 0"));
    }
    let mut c = config(file, out)?;
    if histofall {
        c.notes.push(format!("{file}: cyclictest -H: its column of all threads together was checked against the threads' columns and is not imported as a class of its own"));
    }
    Ok(Parsed { origin: Origin { tool: "cyclictest".into(), ..Origin::default() }, configs: vec![c], kind: results::ResultKind::Measured })
}

/// `-H N` (`--histofall`) with more than one thread adds a column of all threads together to the
/// histogram rows (their sum), `# Total:` (the sum), `# Max Latencies:` (the largest) and `#
/// Histogram Overflows:` (the sum), but not to `# Min Latencies:` or `# Avg Latencies:`
/// (rt-tests' `print_hist` in `src/cyclictest/cyclictest.c`). Told by those two lines having one
/// column fewer than the rows; the extra column is checked against the threads' and removed.
/// Returns whether it was there.
fn all_threads_column(file: &str, width: usize, rows: &mut [(u64, Vec<u64>, usize)], tail: &mut BTreeMap<&str, (usize, Vec<f64>)>) -> Result<bool, ImportError> {
    let short = |label: &str| tail.get(label).is_some_and(|(_, v)| v.len() + 1 == width);
    if width < 3 || !short("# Min Latencies:") || !short("# Avg Latencies:") {
        return Ok(false);
    }
    let t = width - 1;
    for (_, counts, n) in rows.iter_mut() {
        let sum = counts[..t].iter().try_fold(0u64, |a, c| a.checked_add(*c));
        if sum != Some(counts[t]) {
            return Err(ImportError::line(
                file,
                *n,
                "the last column (-H: all threads) to be the sum of the threads' counts",
                format!("{} (the threads sum to {})", counts[t], counts[..t].iter().map(|c| *c as u128).sum::<u128>()),
            ));
        }
        counts.truncate(t);
    }
    let checks: [(&str, fn(&[f64]) -> f64, &str); 3] = [
        ("# Total:", |v| v.iter().sum(), "the sum"),
        ("# Max Latencies:", |v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max), "the largest"),
        ("# Histogram Overflows:", |v| v.iter().sum(), "the sum"),
    ];
    for (label, all, what) in checks {
        let Some((n, v)) = tail.get_mut(label) else { continue };
        if v.len() != width {
            return Err(ImportError::line(file, *n, format!("{width} columns (one per thread and, with -H, all threads)"), format!("{} columns", v.len())));
        }
        if all(&v[..t]) != v[t] {
            return Err(ImportError::line(file, *n, format!("the last `{label}` column (-H: all threads) to be {what} of the threads'"), format!("{}", v[t])));
        }
        v.truncate(t);
    }
    Ok(true)
}
