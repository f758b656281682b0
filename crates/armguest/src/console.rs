//! Reader of this crate's guest's console report ("Console report" in the crate doc) into the
//! shared result format: from the Xen lab's console capture or a real board's serial log. It lives
//! beside the guest that prints the lines, so the printer and its reader change together.
//!
//! Lines are found by their `@irqlab v1 ` marker wherever it sits (after `(XEN) DOM1: `, a
//! timestamp, or at the start); everything else is noise and is counted, not parsed. Lines are
//! grouped per domain (`DOM<n>` before the marker, or one stream when there is none); the stream
//! whose `start` line names a timer, IPI or device bench is the result, a `spin` stream is the neighbour.
//!
//! Damage is never silent. Each line carries a sequence number and an XOR checksum: a bad
//! checksum, a malformed line, a sequence gap or repeat, a sample out of order, a summary that
//! disagrees with the samples, or a log that ends before the `end` line is *damage*. With
//! [`ConsoleMeta::keep_partial`] false (the default) damage is a [`ConsoleError::Damaged`] naming
//! the line; with it true, the samples before the damage are kept and the result's `error`, its
//! `samples.expected` / `samples.kept` / `samples.lost` figures and a note state the loss.
//!
//! Xen's own boot lines fill in what the caller did not give: `Xen version X.Y.Z … debug=y|n`
//! (`print_xen_info`, xen/drivers/char/console.c, 4.17), `Using scheduler: … (credit2)`
//! (`scheduler_init`, xen/common/sched/core.c) and, where printed, `Command line:` (`sched=`,
//! `vwfi=`); Debian's 4.17 on Arm prints no command line by default, so vwfi must be given.
//! A caller's value wins and a disagreement is noted.
use std::collections::BTreeMap;

use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

/// The line marker (and format version) of the guest's report.
pub const MARKER: &str = "@irqlab v1 ";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConsoleError {
    #[error("{file}: no `@irqlab v1` line: not the console output of irqlab's arm64 guest")]
    NoReport { file: String },
    #[error("{file}:{line}: `@irqlab` line of another format version (this irqlab reads v1)")]
    Version { file: String, line: usize },
    #[error("{file}: no `start` line of a timer or ipi bench (streams seen: {streams})")]
    NoBench { file: String, streams: String },
    #[error("{file}: two benchmark streams ({first} and {second}); give one domain's log")]
    TwoBenches { file: String, first: String, second: String },
    #[error("{file}:{line}: {why}")]
    Damaged { file: String, line: usize, why: String },
    #[error("{file}:{line}: the guest reported an error: {text}")]
    Guest { file: String, line: usize, text: String },
}

/// What is wrong with one `@irqlab` line or with the stream's `start` and `sum` lines (the `why`
/// of [`ConsoleError::Damaged`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Damage {
    #[error("no ` *checksum` at the end")]
    NoChecksum,
    #[error("checksum `{0}` is not two hex digits")]
    ChecksumDigits(String),
    #[error("checksum mismatch (line says {want:02x}, text gives {got:02x})")]
    ChecksumMismatch { want: u8, got: u8 },
    #[error("no sequence number")]
    NoSequence,
    #[error("no record kind")]
    NoKind,
    #[error("`{kind}` line without `{key}=`")]
    MissingKey { kind: String, key: String },
    #[error("`{0}=` is not a number")]
    NotANumber(String),
    #[error("`start` without `{0}=`")]
    StartWithout(&'static str),
    #[error("`freq=0`")]
    ZeroFreq,
    #[error("`period={period}` at {freq} Hz: expected a period below 2^50 ns")]
    PeriodTooLong { period: u64, freq: u64 },
    #[error("`samples=0`: expected at least one sample (nothing was measured)")]
    NoSamples,
    #[error("`warmup={warmup}` ≥ `samples={samples}`: expected a warm-up shorter than the run (no sample would be left for WARM_MAX)")]
    WarmupCoversRun { warmup: u64, samples: u64 },
    #[error("no `sum {0}` line")]
    NoSum(String),
    #[error("`sum {name}` says {key}={said:?} but the samples give {samples}")]
    SumDisagrees { name: String, key: &'static str, said: Option<u64>, samples: u64 },
}

/// Where the log came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ConsoleHost {
    /// The Xen lab under QEMU TCG: emulation times.
    #[default]
    QemuTcg,
    /// The Xen lab under QEMU `-icount`: instruction counts.
    InstructionCount,
    /// A real board, named by the user.
    Board(String),
}

impl ConsoleHost {
    pub fn label(&self) -> String {
        match self {
            ConsoleHost::QemuTcg => "QEMU TCG emulation (not hardware latency)".into(),
            ConsoleHost::InstructionCount => "QEMU TCG -icount: instruction count (not hardware latency)".into(),
            ConsoleHost::Board(b) => format!("board: {b}"),
        }
    }
}

/// The Xen configuration and host, given by the caller; `None` fields are taken from Xen's
/// boot lines when the log has them, and recorded as `unknown` otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConsoleMeta {
    pub tool_version: String,
    pub host: ConsoleHost,
    pub xen_version: Option<String>,
    pub scheduler: Option<String>,
    pub vwfi: Option<String>,
    pub pinning: Option<String>,
    pub debug_build: Option<bool>,
    /// More knobs (neighbour, vcpus, …), recorded as parameters.
    pub extra: BTreeMap<String, String>,
    /// Keep the samples before damage (and say so) instead of failing.
    pub keep_partial: bool,
}

/// A stream's lines in order: a checked record, or (line number, why it is damaged).
type Stream = Vec<Result<Record, (usize, String)>>;

/// One checked `@irqlab v1` line.
#[derive(Debug, Clone)]
struct Record {
    line: usize,
    seq: u64,
    kind: String,
    fields: Vec<String>,
}

/// Splits `<seq> <kind> <fields…> *<xx>` and verifies the checksum over `@irqlab v1 …`.
fn record(body_with_marker: &str, line: usize) -> Result<Record, Damage> {
    let Some(star) = body_with_marker.rfind(" *") else { return Err(Damage::NoChecksum) };
    let (text, sum) = (&body_with_marker[..star], body_with_marker[star + 2..].trim_end());
    let want = u8::from_str_radix(sum, 16).map_err(|_| Damage::ChecksumDigits(sum.into()))?;
    if sum.len() != 2 {
        return Err(Damage::ChecksumDigits(sum.into()));
    }
    let got = text.bytes().fold(0u8, |a, b| a ^ b);
    if got != want {
        return Err(Damage::ChecksumMismatch { want, got });
    }
    let mut it = text[MARKER.len()..].split(' ');
    let seq = it.next().and_then(|s| s.parse::<u64>().ok()).ok_or(Damage::NoSequence)?;
    let kind = it.next().filter(|k| !k.is_empty()).ok_or(Damage::NoKind)?.to_string();
    Ok(Record { line, seq, kind, fields: it.map(str::to_string).collect() })
}

/// `DOM<n>` in the text before the marker, or `console`.
fn stream_key(prefix: &str) -> String {
    if let Some(i) = prefix.find("DOM") {
        let digits: String = prefix[i + 3..].chars().take_while(|c| c.is_ascii_digit()).collect();
        if !digits.is_empty() {
            return format!("DOM{digits}");
        }
    }
    "console".into()
}

/// What Xen's boot lines say.
#[derive(Debug, Default)]
struct XenInfo {
    version: Option<String>,
    debug: Option<bool>,
    sched: Option<String>,
    vwfi: Option<String>,
}

fn xen_info(line: &str, info: &mut XenInfo) {
    if let Some(i) = line.find("Xen version ") {
        let rest = &line[i + 12..];
        info.version = rest.split_whitespace().next().map(str::to_string);
        if rest.contains(" debug=y") {
            info.debug = Some(true);
        } else if rest.contains(" debug=n") {
            info.debug = Some(false);
        }
    } else if let Some(i) = line.find("Using scheduler: ") {
        let rest = &line[i..];
        if let (Some(a), Some(b)) = (rest.rfind('('), rest.rfind(')')) {
            if a < b {
                info.sched = Some(rest[a + 1..b].to_string());
            }
        }
    } else if let Some(i) = line.find("Command line: ") {
        for w in line[i + 14..].split_whitespace() {
            if let Some(v) = w.strip_prefix("sched=") {
                info.sched = Some(v.to_string());
            } else if let Some(v) = w.strip_prefix("vwfi=") {
                info.vwfi = Some(v.to_string());
            }
        }
    }
}

/// `key=value` fields of a record.
fn kv(r: &Record) -> BTreeMap<&str, &str> {
    r.fields.iter().filter_map(|f| f.split_once('=')).collect()
}

fn num(m: &BTreeMap<&str, &str>, k: &str, r: &Record) -> Result<u64, Damage> {
    m.get(k).ok_or_else(|| Damage::MissingKey { kind: r.kind.clone(), key: k.into() })?.parse().map_err(|_| Damage::NotANumber(k.into()))
}

/// The guest's `start` line, decoded.
#[derive(Debug, Clone)]
struct Start {
    bench: String,
    wait: String,
    period: u64,
    samples: u64,
    warmup: u64,
    freq: u64,
}

fn start(r: &Record) -> Result<Start, Damage> {
    let m = kv(r);
    let s = Start {
        bench: m.get("bench").ok_or(Damage::StartWithout("bench"))?.to_string(),
        wait: m.get("wait").ok_or(Damage::StartWithout("wait"))?.to_string(),
        period: num(&m, "period", r)?,
        samples: num(&m, "samples", r)?,
        warmup: num(&m, "warmup", r)?,
        freq: num(&m, "freq", r)?,
    };
    if s.freq == 0 {
        return Err(Damage::ZeroFreq);
    }
    // Issue 36: zero samples printed as an all-zero class, and a warm-up covering every sample
    // as WARM_MAX 0; both are refused with what was expected.
    if ticks_to_ns(s.period, s.freq).is_none() {
        return Err(Damage::PeriodTooLong { period: s.period, freq: s.freq });
    }
    if s.samples == 0 {
        return Err(Damage::NoSamples);
    }
    if s.warmup >= s.samples {
        return Err(Damage::WarmupCoversRun { warmup: s.warmup, samples: s.samples });
    }
    Ok(s)
}

/// Samples in counter ticks, per class, plus what the guest's summary said.
#[derive(Debug, Default)]
struct Collected {
    ticks: Vec<Vec<u64>>,
    sums: BTreeMap<String, BTreeMap<String, u64>>,
    end: Option<(usize, BTreeMap<String, u64>)>,
    /// (line, why) of the first damage.
    damage: Option<(usize, String)>,
    guest_error: Option<(usize, String)>,
}

fn classes(bench: &str) -> &'static [&'static str] {
    match bench {
        "ipi" => &["ipi", "ipi_rtt"],
        "device" => &["device"],
        _ => &["timer"],
    }
}

/// The sample line kind of a bench: `t` (timer), `i` (ipi), `d` (device: the arrival stamp).
fn sample_kind(bench: &str) -> &'static str {
    match bench {
        "ipi" => "i",
        "device" => "d",
        _ => "t",
    }
}

/// Walks the stream's records after `start`, stopping at the first damage.
fn collect(st: &Start, recs: &Stream) -> Collected {
    let n_class = classes(&st.bench).len();
    let mut c = Collected { ticks: vec![Vec::new(); n_class], ..Default::default() };
    for (expect_seq, rec) in (1u64..).zip(recs[1..].iter()) {
        let r = match rec {
            Ok(r) => r,
            Err((line, why)) => {
                c.damage = Some((*line, why.clone()));
                return c;
            }
        };
        let fail = |why: String| Some((r.line, why));
        if c.end.is_some() {
            c.damage = fail(format!("line after the `end` line (sequence {})", r.seq));
            return c;
        }
        if r.seq != expect_seq {
            let why = if r.seq < expect_seq {
                format!("sequence {} repeated or out of order (expected {expect_seq})", r.seq)
            } else {
                format!("sequence jumps from {} to {}: {} line(s) lost", expect_seq - 1, r.seq, r.seq - expect_seq)
            };
            c.damage = fail(why);
            return c;
        }
        let vals: Result<Vec<u64>, _> = r.fields.iter().map(|f| f.parse::<u64>()).collect();
        match (r.kind.as_str(), vals) {
            ("t" | "i" | "d", Ok(v)) if v.len() == 1 + n_class && r.kind == sample_kind(&st.bench) => {
                let idx = c.ticks[0].len() as u64;
                if v[0] != idx {
                    c.damage = fail(format!("sample {} where sample {idx} was due", v[0]));
                    return c;
                }
                // A sample above 2^50 ns (13 days) is no latency: at 2^63 ticks the conversion
                // wrapped to 96 ns before (issue 36).
                if let Some(t) = v[1..].iter().find(|t| ticks_to_ns(**t, st.freq).is_none()) {
                    c.damage = fail(format!("sample {idx}: {t} ticks at {} Hz; expected a latency below 2^50 ns (13 days)", st.freq));
                    return c;
                }
                for (k, t) in v[1..].iter().enumerate() {
                    c.ticks[k].push(*t);
                }
            }
            ("t" | "i" | "d", _) => {
                c.damage = fail(format!("malformed `{}` sample line for the {} bench", r.kind, st.bench));
                return c;
            }
            ("sum", _) => {
                let name = r.fields.first().cloned().unwrap_or_default();
                let m = kv(r).into_iter().filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?))).collect();
                c.sums.insert(name, m);
            }
            ("end", _) => {
                let m = kv(r).into_iter().filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?))).collect();
                c.end = Some((r.line, m));
            }
            ("error", _) | ("fault", _) => {
                c.guest_error = Some((r.line, format!("{} {}", r.kind, r.fields.join(" "))));
                return c;
            }
            (k, _) => {
                c.damage = fail(format!("unknown record kind `{k}`"));
                return c;
            }
        }
    }
    c
}

/// Checks the guest's `sum` lines against the samples (tbm's AVG/MIN/MAX/WARM_MAX, in ticks).
fn check_sums(st: &Start, c: &Collected) -> Result<(), Damage> {
    for (k, name) in classes(&st.bench).iter().enumerate() {
        let Some(s) = c.sums.get(*name) else { return Err(Damage::NoSum(name.to_string())) };
        let v = &c.ticks[k];
        let n = v.len() as u64;
        let sum: u128 = v.iter().map(|&x| x as u128).sum();
        let want = [
            ("n", n),
            ("avg", if n == 0 { 0 } else { (sum / n as u128) as u64 }),
            ("min", v.iter().copied().min().unwrap_or(0)),
            ("max", v.iter().copied().max().unwrap_or(0)),
            ("warm_max", v.iter().skip(st.warmup as usize).copied().max().unwrap_or(0)),
        ];
        for (key, w) in want {
            if s.get(key) != Some(&w) {
                return Err(Damage::SumDisagrees { name: name.to_string(), key, said: s.get(key).copied(), samples: w });
            }
        }
    }
    Ok(())
}

/// `t` ticks at `freq` Hz in ns, rounded; `None` above 2^50 ns (`import::MAX_NS`).
fn ticks_to_ns(t: u64, freq: u64) -> Option<u64> {
    let ns = (t as u128 * 1_000_000_000 + freq as u128 / 2) / freq as u128;
    u64::try_from(ns).ok().filter(|ns| *ns <= 1 << 50)
}

/// Reads a console log. `source` names it in errors and in the result.
pub fn parse(text: &str, source: &str, meta: ConsoleMeta) -> Result<RunResult, ConsoleError> {
    let src = || source.to_string();
    let mut streams: BTreeMap<String, Stream> = BTreeMap::new();
    let (mut info, mut noise, mut total) = (XenInfo::default(), 0u64, 0usize);
    for (i, raw) in text.split('\n').enumerate() {
        let line = i + 1;
        total = line;
        let l = raw.strip_suffix('\r').unwrap_or(raw);
        let Some(at) = l.find("@irqlab") else {
            xen_info(l, &mut info);
            if !l.trim().is_empty() {
                noise += 1;
            }
            continue;
        };
        let key = stream_key(&l[..at]);
        let rec = if l[at..].starts_with(MARKER) {
            record(&l[at..], line).map_err(|w| (line, w.to_string()))
        } else if MARKER.starts_with(&l[at..]) {
            Err((line, "line cut short after the marker".to_string()))
        } else {
            return Err(ConsoleError::Version { file: src(), line });
        };
        streams.entry(key).or_default().push(rec);
    }
    if streams.is_empty() {
        return Err(ConsoleError::NoReport { file: src() });
    }
    // The benchmark stream: the one whose first record is a timer/ipi `start`.
    let mut bench: Option<(String, Start)> = None;
    let mut neighbours = Vec::new();
    for (key, recs) in &streams {
        let first = match &recs[0] {
            Ok(r) if r.kind == "start" && r.seq == 0 => r,
            Ok(r) => {
                return Err(ConsoleError::Damaged {
                    file: src(),
                    line: r.line,
                    why: format!("{key}'s first `@irqlab` line is `{}` (sequence {}), not `start` (sequence 0): the log begins after the guest started", r.kind, r.seq),
                })
            }
            Err((line, why)) => return Err(ConsoleError::Damaged { file: src(), line: *line, why: format!("{key}'s `start` line: {why}") }),
        };
        let st = start(first).map_err(|why| ConsoleError::Damaged { file: src(), line: first.line, why: why.to_string() })?;
        match st.bench.as_str() {
            "spin" => neighbours.push(key.clone()),
            "timer" | "ipi" | "device" => {
                if let Some((k, _)) = &bench {
                    return Err(ConsoleError::TwoBenches { file: src(), first: k.clone(), second: key.clone() });
                }
                bench = Some((key.clone(), st));
            }
            b => return Err(ConsoleError::Damaged { file: src(), line: first.line, why: format!("unknown bench `{b}`") }),
        }
    }
    let Some((key, st)) = bench else {
        return Err(ConsoleError::NoBench { file: src(), streams: streams.keys().cloned().collect::<Vec<_>>().join(", ") });
    };
    let recs = &streams[&key];
    let mut c = collect(&st, recs);
    if let Some((line, text)) = c.guest_error.take() {
        return Err(ConsoleError::Guest { file: src(), line, text });
    }
    if c.damage.is_none() {
        match &c.end {
            None => c.damage = Some((total, "the log ends before the guest's `end` line (truncated)".into())),
            Some((line, end)) => {
                let n = c.ticks[0].len() as u64;
                if end.get("samples") != Some(&st.samples) || n != st.samples {
                    c.damage = Some((*line, format!("`end` says samples={:?}, `start` said {}, {n} sample lines arrived", end.get("samples"), st.samples)));
                } else if let Err(why) = check_sums(&st, &c) {
                    c.damage = Some((*line, why.to_string()));
                }
            }
        }
    }
    if let Some((line, why)) = &c.damage {
        if !meta.keep_partial {
            return Err(ConsoleError::Damaged { file: src(), line: *line, why: why.clone() });
        }
    }
    Ok(build(&meta, source, &key, &st, &c, &info, noise, &neighbours))
}

/// The caller's value, else the log's, else `unknown`; a disagreement becomes a note.
fn pick(given: &Option<String>, logged: &Option<String>, what: &str, notes: &mut Vec<String>) -> String {
    match (given, logged) {
        (Some(g), Some(l)) if g != l => {
            notes.push(format!("{what}: given `{g}`, but Xen's boot log says `{l}`; `{g}` recorded"));
            g.clone()
        }
        (Some(g), _) => g.clone(),
        (None, Some(l)) => l.clone(),
        (None, None) => "unknown".into(),
    }
}

#[allow(clippy::too_many_arguments)]
fn build(meta: &ConsoleMeta, source: &str, key: &str, st: &Start, c: &Collected, info: &XenInfo, noise: u64, neighbours: &[String]) -> RunResult {
    let mut notes = Vec::new();
    let version = pick(&meta.xen_version, &info.version, "Xen version", &mut notes);
    let sched = pick(&meta.scheduler, &info.sched, "scheduler", &mut notes);
    let vwfi = pick(&meta.vwfi, &info.vwfi, "vwfi", &mut notes);
    let debug = pick(&meta.debug_build.map(|d| d.to_string()), &info.debug.map(|d| d.to_string()), "debug build", &mut notes);
    let mut run = RunResult::new(RunMeta {
        description: format!("arm64 guest `{}` bench from a console log ({source})", st.bench),
        ..RunMeta::named(&meta.tool_version, &format!("bench-console-{}", st.bench), 0, ResultKind::Measured)
    });
    run.meta.platform.insert("host".into(), meta.host.label());
    run.meta.platform.insert("source".into(), source.into());
    run.meta.platform.insert("counter_freq_hz".into(), st.freq.to_string());
    run.meta.platform.insert("hypervisor".into(), format!("Xen {version}"));
    let mut params = BTreeMap::new();
    params.insert("bench".to_string(), st.bench.clone());
    params.insert("wait".to_string(), st.wait.clone());
    params.insert("period_ticks".to_string(), st.period.to_string());
    params.insert("samples".to_string(), st.samples.to_string());
    params.insert("xen_version".to_string(), version);
    params.insert("sched".to_string(), sched.clone());
    params.insert("vwfi".to_string(), vwfi.clone());
    params.insert("pinning".to_string(), meta.pinning.clone().unwrap_or_else(|| "unknown".into()));
    params.insert("debug_build".to_string(), debug);
    params.insert("domain".to_string(), key.to_string());
    params.extend(meta.extra.clone());
    run.meta.knobs = params.clone();
    let mut r = ConfigResult::new(format!("{} {} sched={sched} vwfi={vwfi}", st.bench, st.wait));
    r.params = params;
    for (k, name) in classes(&st.bench).iter().enumerate() {
        if c.ticks[k].is_empty() {
            // A partial log that kept no sample: no class (an all-zero one would read as 0 ns).
            notes.push(format!("class `{name}`: no sample kept"));
            continue;
        }
        let mut rec = LatencyRecorder::new(st.warmup);
        for &t in &c.ticks[k] {
            rec.record(ticks_to_ns(t, st.freq).expect("checked in collect"));
        }
        r.classes.insert(name.to_string(), rec.finish());
    }
    let kept = c.ticks[0].len() as u64;
    r.set_figure("samples.expected", st.samples as f64, "samples");
    r.set_figure("samples.kept", kept as f64, "samples");
    r.set_figure("samples.lost", st.samples.saturating_sub(kept) as f64, "samples");
    r.set_figure("counter_freq", st.freq as f64, "Hz");
    r.set_figure("period", ticks_to_ns(st.period, st.freq).expect("checked in start") as f64, "ns");
    r.set_figure("noise_lines", noise as f64, "lines");
    if let Some((_, end)) = &c.end {
        for k in ["lost", "spurious"] {
            if let Some(v) = end.get(k) {
                r.add_counter(&format!("guest.{k}"), *v);
            }
        }
        if end.get("lost").copied().unwrap_or(0) > 0 {
            notes.push(format!("the guest reports {} sample(s) lost", end["lost"]));
        }
    }
    if !neighbours.is_empty() {
        notes.push(format!("neighbour domain(s) running the spin bench: {}", neighbours.join(", ")));
    }
    if let Some((line, why)) = &c.damage {
        r.error = Some(format!("{source}:{line}: {why}; {kept} of {} samples kept", st.samples));
    }
    if st.bench == "device" {
        notes.push("device samples are the guest's CNTVCT at each arrival, not latencies: subtract the trigger's counter stamps (the host's) to get latencies".into());
    }
    notes.push(format!("latencies converted from counter ticks at {} Hz; host: {}", st.freq, meta.host.label()));
    r.notes = notes;
    run.configs.push(r);
    run
}
