//! fio `--output-format=json` and `json+` (fio 3.x; checked with fio-3.33 from Debian 12).
//!
//! Per job (`jobs[].jobname`) and direction with I/O (`read`, `write`, `trim` with
//! `clat_ns.N > 0`): completion latency (`clat_ns`, what the S1 fio runs reported) as a class,
//! IOPS and bandwidth as figures, the job options as parameters. A job with one direction gives
//! class `io` and figure `iops` (the names of irqlab's fio-like model, so `compare` pairs them);
//! several give `io.read`, `iops.read`, ….
//!
//! json+ carries fio's latency histogram (`clat_ns.bins`: bin value in ns → count; fio's bins
//! are ~1.6 % wide, `FIO_IO_U_PLAT_BITS` 6 in fio's `stat.h`), which becomes the class's
//! histogram. Plain json has only the printed percentiles (`clat_ns.percentile`); the histogram
//! is then rebuilt with each percentile's share of samples at its value, and the configuration
//! says so — percentiles between fio's printed ones, and intervals, are then only as good as that
//! reconstruction (use json+). Count, min, mean and max are fio's own in both cases.
//!
//! `numjobs=N` without `group_reporting` gives N jobs of one name; each becomes configuration
//! `NAME.jobI` (I its place among the jobs of that name, in fio's order) with `fio.job_index`,
//! so repetitions still pair them and no reader sees one name twice (issue 36).
use std::collections::BTreeMap;

use serde_json::Value;

use super::{class_from_buckets, count_sum, strict_json, Exact, ImportError, ImportOptions, Origin, Parsed};
use results::ConfigResult;

const DIRECTIONS: [&str; 3] = ["read", "write", "trim"];

/// `--output-format=json,normal` (issue 45: accepted before, then refused without a hint): fio
/// prints its normal report after the JSON, from the first job header line
/// (`NAME: (groupid=0, jobs=1): err= 0: …`, fio's `stat.c show_thread_status_normal`). Returns the
/// JSON part and the normal report, if any.
fn split_normal(text: &str) -> (&str, Option<&str>) {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if !t.starts_with('"') && t.contains(": (groupid=") {
            return (&text[..at], Some(&text[at..]));
        }
        at += line.len();
    }
    (text, None)
}

/// Above any device one fio job drives (NVMe arrays reach a few million IOPS per job).
const MAX_IOPS: f64 = 1e9;
/// 1 TB/s per job: above any storage one host drives.
const MAX_BW: f64 = 1e12;

/// A rate fio printed, as a figure: finite, ≥ 0 and below `max` (issue 45: negative and absurd
/// IOPS or bandwidth became figures).
fn rate(file: &str, key: &str, v: f64, max: f64) -> Result<f64, ImportError> {
    if v.is_finite() && (0.0..max).contains(&v) {
        Ok(v)
    } else {
        Err(ImportError::key(file, key, format!("a rate ≥ 0 and below {max:e}"), v.to_string()))
    }
}

pub(super) fn parse(text: &str, file: &str, _opts: &ImportOptions) -> Result<Parsed, ImportError> {
    let start = text.find('{').ok_or_else(|| ImportError::other(file, "no JSON object: expected fio --output-format=json output"))?;
    // fio may print warnings before its JSON: blanked, so error lines stay the file's own.
    let blanked: String = text[..start].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).chain(text[start..].chars()).collect();
    let (json, normal) = split_normal(&blanked);
    let doc = strict_json(json, file, "complete fio JSON (with --output-format=json,normal, fio's normal report follows it from a `NAME: (groupid=` line)")?;
    let version = doc.get("fio version").and_then(Value::as_str).ok_or_else(|| ImportError::key(file, "fio version", "fio's version string (is this fio JSON?)", "nothing"))?;
    let jobs = doc.get("jobs").and_then(Value::as_array).ok_or_else(|| ImportError::key(file, "jobs", "an array of jobs", "nothing"))?;
    let mut configs = Vec::new();
    let names: Vec<&str> = jobs
        .iter()
        .enumerate()
        .map(|(j, job)| job.get("jobname").and_then(Value::as_str).ok_or_else(|| ImportError::key(file, &format!("jobs[{j}].jobname"), "a string", "nothing")))
        .collect::<Result<_, _>>()?;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (j, job) in jobs.iter().enumerate() {
        let name = names[j];
        let index = seen.entry(name).or_insert(0);
        let mut c = if names.iter().filter(|n| **n == name).count() > 1 {
            let mut c = ConfigResult::new(format!("{name}.job{index}"));
            c.params.insert("fio.job_index".into(), index.to_string());
            c.notes.push(format!("fio job `{name}` appears {} times (numjobs without group_reporting): this is its job {index}", names.iter().filter(|n| **n == name).count()));
            c
        } else {
            ConfigResult::new(name)
        };
        *index += 1;
        if let Some(opts) = job.get("job options").and_then(Value::as_object) {
            for (k, v) in opts {
                c.params.insert(format!("fio.{k}"), v.as_str().map(String::from).unwrap_or_else(|| v.to_string()));
            }
        }
        // fio's per-job `error` (an errno): the job stopped early, its figures cover what ran.
        match job.get("error").and_then(Value::as_i64) {
            Some(0) | None => {}
            Some(e) => c.notes.push(format!("fio reported error {e} for this job (an errno: the job stopped early); its latencies and rates cover only the I/O before it")),
        }
        let active: Vec<&str> = DIRECTIONS.iter().copied().filter(|d| job.get(*d).and_then(|x| x.pointer("/clat_ns/N")).and_then(Value::as_u64).unwrap_or(0) > 0).collect();
        for d in &active {
            let key = |k: &str| format!("jobs[{j}].{d}.{k}");
            let dir = &job[*d];
            let clat = &dir["clat_ns"];
            let n = clat["N"].as_u64().expect("filtered on N");
            let get_u = |k: &str| clat.get(k).and_then(Value::as_u64).ok_or_else(|| ImportError::key(file, &key(&format!("clat_ns.{k}")), "an unsigned integer (ns)", "nothing"));
            let exact = Exact {
                min: Some(get_u("min")?),
                max: Some(get_u("max")?),
                mean: clat.get("mean").and_then(Value::as_f64),
                resolution: 1,
                relative_width: 1.0 / 64.0,
                ..Default::default()
            };
            let (buckets, rebuilt) = if let Some(bins) = clat.get("bins").and_then(Value::as_object) {
                let mut b = Vec::with_capacity(bins.len());
                for (v, cnt) in bins {
                    let value = v.parse::<u64>().map_err(|_| ImportError::key(file, &key("clat_ns.bins"), "bin values in ns", v.clone()))?;
                    let count = cnt.as_u64().ok_or_else(|| ImportError::key(file, &key(&format!("clat_ns.bins.{v}")), "a count", cnt.to_string()))?;
                    b.push((value, count));
                }
                let total = count_sum(file, &key("clat_ns.bins"), b.iter().map(|x| x.1))?;
                if total != n {
                    return Err(ImportError::key(file, &key("clat_ns.bins"), format!("counts summing to N = {n}"), format!("{total} (truncated?)")));
                }
                (b, false)
            } else if let Some(pct) = clat.get("percentile").and_then(Value::as_object) {
                let missing = missing_percentiles(pct);
                if !missing.is_empty() {
                    // Not rebuilt: a percentile fio did not print would be made up (issue 45).
                    let name = if active.len() == 1 { "io".to_string() } else { format!("io.{d}") };
                    printed_as_figures(&mut c, &name, pct, n, &exact);
                    c.notes.push(format!(
                        "class `{name}`: not rebuilt from fio's printed percentiles, which lack {} (fio --percentile_list); its count, min, mean, max and printed percentiles are figures `{name}.*`; use --output-format=json+ for fio's bins, or include 50:90:99:99.9 in --percentile_list",
                        missing.join(", ")
                    ));
                    (Vec::new(), false)
                } else {
                    (from_percentiles(file, &key("clat_ns.percentile"), pct, n, exact.max.unwrap_or(0))?, true)
                }
            } else {
                return Err(ImportError::key(file, &key("clat_ns"), "`bins` (json+) or `percentile` (json)", "neither"));
            };
            let (class, fig) = if active.len() == 1 { ("io".to_string(), "iops".to_string()) } else { (format!("io.{d}"), format!("iops.{d}")) };
            if !buckets.is_empty() {
                c.classes.insert(class.clone(), class_from_buckets(file, &key("clat_ns"), &buckets, exact)?);
            }
            if rebuilt {
                c.notes.push(format!("class `{class}`: histogram rebuilt from fio's printed percentiles (plain json); use --output-format=json+ for fio's bins"));
            }
            if let Some(iops) = dir.get("iops").and_then(Value::as_f64) {
                c.set_figure(&fig, rate(file, &key("iops"), iops, MAX_IOPS)?, "IOPS");
            }
            if let Some(bw) = dir.get("bw_bytes").and_then(Value::as_f64) {
                c.set_figure(&fig.replacen("iops", "bw", 1), rate(file, &key("bw_bytes"), bw, MAX_BW)?, "B/s");
            }
        }
        if active.is_empty() {
            c.notes.push("no completed I/O in any direction".into());
        }
        configs.push(c);
    }
    super::unique(file, "jobs[].jobname", "configuration name", configs.iter().map(|c| c.name.as_str()))?;
    if configs.iter().all(|c| c.classes.is_empty() && c.figures.is_empty()) {
        return Err(ImportError::key(file, "jobs", "at least one job with completed I/O (clat_ns.N > 0)", "none"));
    }
    let mut host = BTreeMap::new();
    if let Some(h) = doc.get("hostname").and_then(Value::as_str) {
        host.insert("host".into(), h.to_string());
    }
    let command = doc.get("global options").and_then(Value::as_object).map(|g| {
        let mut s = String::from("fio");
        for (k, v) in g {
            s.push_str(&format!(" --{k}={}", v.as_str().map(String::from).unwrap_or_else(|| v.to_string())));
        }
        s
    });
    if normal.is_some() {
        for c in &mut configs {
            c.notes.push("fio's normal report after the JSON (--output-format=json,normal) was not read: the JSON holds the same figures".into());
        }
    }
    Ok(Parsed { origin: Origin { tool: "fio".into(), version: Some(version.into()), command, host }, configs, kind: results::ResultKind::Measured })
}

/// The percentiles a summary holds that fio's printed list lacks (`p50` … `p99.9`; p99.99 is
/// rarely printed and a rebuilt histogram marks it as such through its note).
fn missing_percentiles(pct: &serde_json::Map<String, Value>) -> Vec<&'static str> {
    let printed: Vec<f64> = pct.keys().filter_map(|k| k.parse::<f64>().ok()).collect();
    [(50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9")].into_iter().filter(|(p, _)| !printed.iter().any(|q| (q - p).abs() < 1e-6)).map(|(_, n)| n).collect()
}

/// A direction whose percentiles cannot be rebuilt: fio's own figures, as figures.
fn printed_as_figures(c: &mut ConfigResult, name: &str, pct: &serde_json::Map<String, Value>, n: u64, exact: &Exact) {
    c.set_figure(&format!("{name}.count"), n as f64, "samples");
    for (k, v) in [("min", exact.min.map(|v| v as f64)), ("max", exact.max.map(|v| v as f64)), ("mean", exact.mean)] {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            c.set_figure(&format!("{name}.{k}"), v, "ns");
        }
    }
    for (p, v) in pct {
        if let (Ok(p), Some(v)) = (p.parse::<f64>(), v.as_u64()) {
            c.set_figure(&format!("{name}.p{}", (p * 1e6).round() / 1e6), v as f64, "ns");
        }
    }
}

/// Each printed percentile's share of the N samples at its value; what lies above the last one
/// at fio's max.
fn from_percentiles(file: &str, key: &str, pct: &serde_json::Map<String, Value>, n: u64, max: u64) -> Result<Vec<(u64, u64)>, ImportError> {
    let mut pts = Vec::with_capacity(pct.len());
    for (p, v) in pct {
        let p: f64 = p.parse().map_err(|_| ImportError::key(file, key, "percentile names such as 99.900000", p.clone()))?;
        let v = v.as_u64().ok_or_else(|| ImportError::key(file, &format!("{key}.{p}"), "a value in ns", v.to_string()))?;
        pts.push((p, v));
    }
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (mut out, mut taken) = (Vec::with_capacity(pts.len() + 1), 0u64);
    for (p, v) in pts {
        let upto = ((p / 100.0) * n as f64).ceil().min(n as f64) as u64;
        if upto > taken {
            out.push((v, upto - taken));
            taken = upto;
        }
    }
    if n > taken {
        out.push((max, n - taken));
    }
    Ok(out)
}
