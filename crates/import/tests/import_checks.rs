//! Issue 36: every importer checks what it reads (the shared `import::validate` step). One test
//! per defect found by trying the readers with real, hand-made and generated inputs; each failed
//! on the readers before the issue (they imported the file, or made up its percentiles).
use std::path::PathBuf;

use armguest::console::{parse as console, ConsoleMeta};
use import::{import_files, ImportOptions, LatencyUnit};
use results::RunResult;

fn data(name: &str) -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import").join(name)).unwrap()
}

fn with(format: &str, name: &str, text: &str, opts: &ImportOptions) -> Result<RunResult, String> {
    import_files(format, &[(name.to_string(), text.to_string())], opts, "t").map_err(|e| e.to_string())
}

fn one(format: &str, name: &str, text: &str) -> Result<RunResult, String> {
    with(format, name, text, &ImportOptions { tsc_ghz: Some(2.0), unit: None, ..Default::default() })
}

/// cyclictest.json with every thread's histogram emptied and `-h 100` replaced by `tail`.
fn cyclictest_without_histogram(cmd_tail: &str) -> String {
    let mut doc: serde_json::Value = serde_json::from_str(&data("cyclictest.json")).unwrap();
    let cmd = doc["cmdline:"].as_str().unwrap().replace("-h 100", cmd_tail);
    doc["cmdline:"] = cmd.into();
    for t in doc["thread"].as_object_mut().unwrap().values_mut() {
        t["histogram"] = serde_json::json!({});
    }
    serde_json::to_string_pretty(&doc).unwrap()
}

#[test]
fn cyclictest_json_without_h_gives_no_percentile_and_names_the_flag() {
    let r = one("cyclictest", "noh.json", &cyclictest_without_histogram("")).unwrap();
    let c = &r.configs[0];
    assert!(c.classes.is_empty(), "percentiles made up from an empty histogram: {:?}", c.classes.keys());
    assert_eq!(c.figures["timer.t0.count"].value, 2874.0);
    assert_eq!(c.figures["timer.t0.min"].value, 43_000.0);
    let note = c.notes.iter().find(|n| n.contains("timer.t0")).expect("a note on timer.t0");
    assert!(note.contains("not measured") && note.contains("no histogram") && note.contains("-h N"), "{note}");
}

#[test]
fn cyclictest_samples_all_above_h_give_no_percentile() {
    let r = one("cyclictest", "h10.json", &cyclictest_without_histogram("-h 10")).unwrap();
    let c = &r.configs[0];
    assert!(c.classes.is_empty(), "{:?}", c.classes.keys());
    assert!(c.notes.iter().any(|n| n.contains("above the histogram's top (-h 10)") && n.contains("not measured")), "{:?}", c.notes);
}

#[test]
fn cyclictest_text_needs_its_unit_and_ns_text_is_read_as_ns() {
    let text = data("cyclictest-hist.txt");
    let e = one("cyclictest", "h.txt", &text).unwrap_err();
    assert!(e.starts_with("h.txt:") && e.contains("--unit"), "{e}");
    let opts = |u| ImportOptions { unit: Some(u), ..Default::default() };
    let us = with("cyclictest", "h.txt", &text, &opts(LatencyUnit::Us)).unwrap();
    let ns = with("cyclictest", "h.txt", &text, &opts(LatencyUnit::Ns)).unwrap();
    let (a, b) = (&us.configs[0].classes["timer.t0"].summary, &ns.configs[0].classes["timer.t0"].summary);
    assert_eq!((a.min, b.min), (43_000, 43));
    assert_eq!((a.max, b.max), (9_079_000, 9_079));
    // a unit the file states cannot be overridden
    let e = with("cyclictest", "c.json", &data("cyclictest.json"), &opts(LatencyUnit::Ns)).unwrap_err();
    assert!(e.contains("c.json") && e.contains("--unit ns contradicts"), "{e}");
    let e = with("rtla-timerlat", "r.txt", &data("rtla-timerlat-hist.txt"), &opts(LatencyUnit::Ns)).unwrap_err();
    assert!(e.contains("r.txt") && e.contains("# Time unit is"), "{e}");
}

#[test]
fn fio_numjobs_without_group_reporting_gives_distinct_configurations() {
    let mut doc: serde_json::Value = serde_json::from_str(&data("fio-plus.json")).unwrap();
    let job = doc["jobs"][0].clone();
    doc["jobs"].as_array_mut().unwrap().push(job);
    let r = one("fio", "numjobs.json", &serde_json::to_string(&doc).unwrap()).unwrap();
    let name = doc["jobs"][0]["jobname"].as_str().unwrap();
    let names: Vec<&str> = r.configs.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec![format!("{name}.job0"), format!("{name}.job1")]);
    assert_eq!(r.configs[1].params["fio.job_index"], "1");
    // every reader takes it: it writes and reads back as a result
    results::from_json_str(&results::to_json_string(&r), "r.json").unwrap();
}

#[test]
fn tbm_non_finite_negative_unordered_and_repeated_keys_are_refused() {
    for (line, says) in [
        ("max=NaN warm_max=4980 min=4810 avg=4850", "finite"),
        ("max=inf warm_max=4980 min=4810 avg=4850", "finite"),
        ("max=7030 warm_max=4980 min=-inf avg=4850", "finite"),
        ("max=7030 warm_max=4980 min=-5 avg=4850", "finite number ≥ 0"),
        ("max=1e400 warm_max=4980 min=4810 avg=4850", "finite"),
        ("max=4000 warm_max=3000 min=4810 avg=4850", "min ≤ warm_max ≤ max"),
        ("max=7030 warm_max=4980 min=4810 avg=4850 max=1", "`max=` twice"),
    ] {
        let e = one("tbm", "t.txt", &format!("tbm: timer\nlatency (ns): {line}\n")).unwrap_err();
        assert!(e.starts_with("t.txt: line 2") && e.contains(says), "{line}: {e}");
    }
}

#[test]
fn ipi_bench_non_finite_and_negative_values_are_refused() {
    let log = data("ipi-benchmark.log");
    for bad in ["NaN", "inf", "-inf", "-5", "1e400"] {
        let text = log.replacen("2999696 ns", &format!("{bad} ns"), 1);
        let e = one("ipi-bench", "ipi.log", &text).unwrap_err();
        assert!(e.starts_with("ipi.log: line ") && e.contains("Dry-run total") && e.contains("finite"), "{bad}: {e}");
    }
}

#[test]
fn summaries_that_contradict_their_histogram_are_refused() {
    // cyclictest: a mean outside [min, max]; a bucket beyond the stated max
    let mut doc: serde_json::Value = serde_json::from_str(&data("cyclictest.json")).unwrap();
    doc["thread"]["0"]["avg"] = 20000.0.into();
    let e = one("cyclictest", "c.json", &doc.to_string()).unwrap_err();
    assert!(e.contains("c.json") && e.contains("thread t0 mean") && e.contains("within min and max"), "{e}");
    let mut doc: serde_json::Value = serde_json::from_str(&data("cyclictest.json")).unwrap();
    doc["thread"]["0"]["max"] = 95.into();
    let e = one("cyclictest", "c.json", &doc.to_string()).unwrap_err();
    assert!(e.contains("c.json") && e.contains("within the stated max"), "{e}");
    // fio: a mean outside [min, max]
    let mut doc: serde_json::Value = serde_json::from_str(&data("fio-plus.json")).unwrap();
    let d = if doc["jobs"][0]["read"]["clat_ns"]["N"].as_u64().unwrap_or(0) > 0 { "read" } else { "write" };
    let max = doc["jobs"][0][d]["clat_ns"]["max"].as_u64().unwrap();
    doc["jobs"][0][d]["clat_ns"]["mean"] = (max as f64 * 3.0).into();
    let e = one("fio", "f.json", &doc.to_string()).unwrap_err();
    assert!(e.contains("f.json") && e.contains("mean") && e.contains("within min and max"), "{e}");
    // rtla: a mean outside [min, max]; a column named twice (it overwrote another CPU's class)
    let rtla = data("rtla-timerlat-hist.txt");
    let avg = rtla.lines().find(|l| l.starts_with("avg:")).unwrap();
    let e = one("rtla-timerlat", "r.txt", &rtla.replace(avg, "avg:        900         1         1         1")).unwrap_err();
    assert!(e.contains("r.txt") && e.contains("irq.cpu0 mean"), "{e}");
    let e = one("rtla-timerlat", "r.txt", &rtla.replace("IRQ-001", "IRQ-000")).unwrap_err();
    assert!(e.contains("r.txt: line 4") && e.contains("`IRQ-000` twice"), "{e}");
}

#[test]
fn a_second_json_document_or_a_repeated_key_is_refused() {
    for (format, name) in [("cyclictest", "cyclictest.json"), ("fio", "fio-plus.json")] {
        let text = data(name);
        let lines = text.lines().count();
        let e = one(format, name, &format!("{}\n{{\"x\": 1}}\n", text.trim_end())).unwrap_err();
        assert!(e.starts_with(&format!("{name}: line {}", lines + 1)) && e.contains("one complete"), "{format}: {e}");
        let e = one(format, name, &text.replacen('{', "{\"jobs\": 1, \"jobs\": 2,", 1)).unwrap_err();
        assert!(e.starts_with(&format!("{name}: line 1")) && e.contains("`jobs` given twice"), "{format}: {e}");
    }
}

#[test]
fn kvm_unit_tests_early_samples_are_kept_signed_with_an_early_class() {
    // 2 GHz: -400 cycles = 200 ns early
    let r = one("tscdeadline", "k.txt", "latency: 2000\nlatency: -400\nlatency: 4000\nlatency: -100\n").unwrap();
    let c = &r.configs[0];
    assert_eq!(c.classes["timer"].summary.clamped_low, 2);
    let early = &c.classes["timer_early"].summary;
    assert_eq!((early.count, early.min, early.max), (2, 50, 200));
    assert_eq!(c.figures["early.timer"].value, 2.0);
    assert_eq!(c.figures["min_signed.timer"].value, -200.0);
}

/// A `@irqlab v1` record with its checksum.
fn rec(body: &str) -> String {
    let text = format!("@irqlab v1 {body}");
    let sum = text.bytes().fold(0u8, |a, b| a ^ b);
    format!("{text} *{sum:02x}\n")
}

fn console_log(samples: &[u64], warmup: u64, stated: u64) -> String {
    let mut s = rec(&format!("0 start bench=timer wait=wfi period=62500 samples={stated} warmup={warmup} freq=62500000 report=console abi=1"));
    for (i, t) in samples.iter().enumerate() {
        s += &rec(&format!("{} t {i} {t}", i + 1));
    }
    let n = samples.len() as u64;
    let (min, max) = (samples.iter().min().copied().unwrap_or(0), samples.iter().max().copied().unwrap_or(0));
    let avg = if n == 0 { 0 } else { (samples.iter().map(|&x| x as u128).sum::<u128>() / n as u128) as u64 };
    let wm = samples.iter().skip(warmup as usize).max().copied().unwrap_or(0);
    s += &rec(&format!("{} sum timer n={n} avg={avg} min={min} max={max} warm_max={wm}", n + 1));
    s += &rec(&format!("{} end samples={stated} lost=0 spurious=0", n + 2));
    s
}

#[test]
fn arm64_console_refuses_wrapping_samples_full_warmup_and_zero_samples() {
    let meta = || ConsoleMeta { tool_version: "t".into(), ..Default::default() };
    assert!(console(&console_log(&[7000, 8000, 9000], 1, 3), "ok.log", meta()).is_ok());
    let e = console(&console_log(&[7000, 1 << 63, 9000], 1, 3), "wrap.log", meta()).unwrap_err().to_string();
    assert!(e.contains("wrap.log:3") && e.contains("below 2^50 ns"), "{e}");
    let e = console(&console_log(&[7000, 8000, 9000], 3, 3), "warm.log", meta()).unwrap_err().to_string();
    assert!(e.contains("warm.log:1") && e.contains("warmup=3"), "{e}");
    let e = console(&console_log(&[], 0, 0), "zero.log", meta()).unwrap_err().to_string();
    assert!(e.contains("zero.log") && e.contains("samples=0"), "{e}");
}

/// Issue 45: a fio job that reports an error was imported without a note, and negative or absurd
/// IOPS or bandwidth became figures.
#[test]
fn fio_job_errors_are_noted_and_absurd_rates_refused() {
    let base: serde_json::Value = serde_json::from_str(&data("fio-plus.json")).unwrap();
    let dir = ["read", "write", "trim"].into_iter().find(|d| base["jobs"][0][*d]["clat_ns"]["N"].as_u64().unwrap_or(0) > 0).unwrap();
    let mut doc = base.clone();
    doc["jobs"][0]["error"] = 5.into();
    let r = one("fio", "err.json", &doc.to_string()).unwrap();
    assert!(r.configs[0].notes.iter().any(|n| n.contains("fio reported error 5")), "{:?}", r.configs[0].notes);
    for (k, v) in [("iops", -3.0), ("iops", 1e15), ("bw_bytes", -1.0), ("bw_bytes", 1e18)] {
        let mut doc = base.clone();
        doc["jobs"][0][dir][k] = v.into();
        let e = one("fio", "rate.json", &doc.to_string()).unwrap_err();
        assert!(e.contains(k) && e.contains("a rate ≥ 0"), "{k} = {v}: {e}");
    }
}

/// Issue 45: a UTF-8 BOM in cyclictest JSON was reported as a missing unit; a re-saved copy of
/// one run (CRLF, re-serialised JSON) counted as another repetition.
#[test]
fn a_bom_is_read_past_and_a_resaved_copy_is_not_a_repetition() {
    let text = data("cyclictest.json");
    let plain = one("cyclictest", "c.json", &text).unwrap();
    let bom = one("cyclictest", "bom.json", &format!("\u{feff}{text}")).unwrap();
    assert_eq!(plain.configs[0].classes, bom.configs[0].classes);
    let resaved = serde_json::to_string(&serde_json::from_str::<serde_json::Value>(&text).unwrap()).unwrap().replace('\n', "\r\n");
    let opts = ImportOptions { tsc_ghz: Some(2.0), unit: None, ..Default::default() };
    let e = import_files("cyclictest", &[("a.json".into(), text.clone()), ("b.json".into(), resaved)], &opts, "t").unwrap_err().to_string();
    assert!(e.contains("b.json") && e.contains("same samples as a.json"), "{e}");
}

/// Two lab boots under -icount can take the very same samples (a deterministic path), but they
/// are two runs: their wall-time figures differ. They import as two repetitions; a copy of one
/// (the figures repeated too) is still refused.
#[test]
fn identical_samples_with_other_figures_are_two_runs() {
    let opts = ImportOptions { tsc_ghz: Some(2.0), unit: None, ..Default::default() };
    let base = one("cyclictest", "c.json", &data("cyclictest.json")).unwrap();
    let boot = |wall: f64| {
        let mut r = base.clone();
        r.configs[0].set_figure("lab.session_wall", wall, "s (wall)");
        results::to_json_string(&r)
    };
    let r = import_files("irqlab", &[("1/result.json".into(), boot(41.5)), ("2/result.json".into(), boot(43.25))], &opts, "t").unwrap();
    assert_eq!(r.configs[0].repetitions.as_ref().map(|x| x.len()), Some(2));
    let e = import_files("irqlab", &[("1/result.json".into(), boot(41.5)), ("copy.json".into(), boot(41.5))], &opts, "t").unwrap_err().to_string();
    assert!(e.contains("copy.json") && e.contains("same samples as 1/result.json"), "{e}");
}

/// Issue 45: fio plain JSON with a --percentile_list lacking p90/p99 had those made up (the max
/// or the next printed value) and compare called them slower with zero-width intervals.
#[test]
fn fio_percentiles_not_printed_are_not_made_up() {
    let mut doc: serde_json::Value = serde_json::from_str(&data("fio-plus.json")).unwrap();
    let dir = ["read", "write", "trim"].into_iter().find(|d| doc["jobs"][0][*d]["clat_ns"]["N"].as_u64().unwrap_or(0) > 0).unwrap();
    let clat = &mut doc["jobs"][0][dir]["clat_ns"];
    clat.as_object_mut().unwrap().remove("bins");
    clat["percentile"] = serde_json::json!({"50.000000": 20000, "97.000000": 40000});
    let r = one("fio", "plain.json", &doc.to_string()).unwrap();
    let c = &r.configs[0];
    assert!(c.classes.is_empty(), "percentiles made up: {:?}", c.classes.keys());
    assert_eq!(c.figures["io.p97"].value, 40_000.0);
    assert!(c.figures.contains_key("io.count") && c.figures.contains_key("io.max"), "{:?}", c.figures.keys());
    assert!(c.notes.iter().any(|n| n.contains("lack p90, p99, p99.9") && n.contains("json+")), "{:?}", c.notes);
}

/// Issue 45: `--output-format=json,normal` (fio's normal report after its JSON) was accepted
/// before, then refused as trailing text without a hint.
#[test]
fn fio_json_followed_by_its_normal_report_imports() {
    let json = data("fio-plus.json");
    let normal = "seqread: (groupid=0, jobs=1): err= 0: pid=4242: Sat Nov 28 05:00:00 2026\n  read: IOPS=1000, BW=3906KiB/s\n\nRun status group 0 (all jobs):\n";
    let plain = one("fio", "f.json", &json).unwrap();
    let both = one("fio", "fn.json", &format!("{json}{normal}")).unwrap();
    assert_eq!(plain.configs[0].classes, both.configs[0].classes);
    assert!(both.configs[0].notes.iter().any(|n| n.contains("json,normal")), "{:?}", both.configs[0].notes);
    // other trailing text is still refused, now with the hint
    let e = one("fio", "t.json", &format!("{json}garbage\n")).unwrap_err();
    assert!(e.contains("groupid="), "{e}");
}

/// Issue 45: genuine fio JSON with an option given twice (`--bs=4k --bs=8k`) was refused as a
/// repeated key; fio applies the later one, and so does the import — only in the option objects.
#[test]
fn a_fio_option_given_twice_is_fios_later_one() {
    let json = data("fio-plus.json");
    let at = json.find("\"job options\" : {").or_else(|| json.find("\"job options\": {")).expect("fio-plus.json has job options");
    let open = at + json[at..].find('{').unwrap() + 1;
    let twice = format!("{}\n\"iodepth_low\" : \"4\",\n\"iodepth_low\" : \"8\",{}", &json[..open], &json[open..]);
    assert!(!json.contains("iodepth_low"), "the sample must not set it already");
    let r = one("fio", "twice.json", &twice).unwrap();
    assert_eq!(r.configs[0].params["fio.iodepth_low"], "8");
    // elsewhere a repeated key is still refused
    let e = one("fio", "dup.json", &json.replacen("\"jobs\"", "\"fio version\" : \"x\",\n\"jobs\"", 1)).unwrap_err();
    assert!(e.contains("given twice"), "{e}");
}

/// Issue 45: rtla columns that name one CPU in two spellings (`IRQ-000`, `IRQ-0`) overwrote a
/// class; two `# Time unit is` lines were resolved by the last. Both are refused, naming both.
#[test]
fn rtla_one_cpu_spelled_twice_or_two_units_are_refused_naming_both() {
    let rtla = data("rtla-timerlat-hist.txt");
    let e = one("rtla-timerlat", "r.txt", &rtla.replace("IRQ-001", "IRQ-0")).unwrap_err();
    assert!(e.contains("r.txt: line 4") && e.contains("`IRQ-000`") && e.contains("`IRQ-0`") && e.contains("irq.cpu0"), "{e}");
    let e = one("rtla-timerlat", "r.txt", &rtla.replace("Thr-001", "Thr-00")).unwrap_err();
    assert!(e.contains("`Thr-000`") && e.contains("`Thr-00`"), "{e}");
    let two = rtla.replacen("# Duration:", "# Time unit is nanoseconds (ns)\n# Duration:", 1);
    let e = one("rtla-timerlat", "r.txt", &two).unwrap_err();
    assert!(e.contains("r.txt") && e.contains("line 2") && e.contains("line 3") && e.contains("microseconds") && e.contains("nanoseconds"), "{e}");
    // The same unit stated twice says one thing: imported.
    let same = rtla.replacen("# Duration:", "# Time unit is microseconds (us)\n# Duration:", 1);
    assert!(one("rtla-timerlat", "r.txt", &same).is_ok());
}

/// cyclictest `-H N` (`--histofall`) text: with more than one thread, every histogram row, `#
/// Total:`, `# Max Latencies:` and `# Histogram Overflows:` carry one more column, all threads
/// together (rt-tests' `print_hist`: the row's sum, the totals' sum, the largest max, the
/// overflows' sum); `# Min Latencies:` and `# Avg Latencies:` do not. It was refused as
/// "expected 3 columns" (issue 45). It imports as the same threads as `-h N`, the all-threads
/// column checked against them.
fn histofall(text: &str) -> String {
    let mut out = String::new();
    for l in text.lines() {
        let nums = |rest: &str| rest.split_whitespace().map(|x| x.parse::<u64>().unwrap()).collect::<Vec<u64>>();
        let line = if l.starts_with("# Total:") || l.starts_with("# Histogram Overflows:") {
            let (label, rest) = l.split_at(l.find(':').unwrap() + 1);
            format!("{label}{rest} {:09}", nums(rest).iter().sum::<u64>())
        } else if let Some(rest) = l.strip_prefix("# Max Latencies:") {
            format!("# Max Latencies:{rest} {:05}", nums(rest).iter().max().unwrap())
        } else if l.starts_with("0") {
            let v = nums(l);
            format!("{l}\t{:06}", v[1..].iter().sum::<u64>())
        } else {
            l.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn cyclictest_histofall_text_imports_as_its_threads() {
    let opts = ImportOptions { unit: Some(LatencyUnit::Us), ..Default::default() };
    let h = data("cyclictest-hist.txt");
    let big_h = histofall(&h);
    assert!(big_h.contains("# Max Latencies: 09079 04891 09079") && big_h.contains("# Total: 000002845 000002976 000005821"), "{big_h}");
    let a = with("cyclictest", "h.txt", &h, &opts).unwrap();
    let b = with("cyclictest", "hh.txt", &big_h, &opts).unwrap();
    assert_eq!(a.configs[0].classes.keys().collect::<Vec<_>>(), b.configs[0].classes.keys().collect::<Vec<_>>());
    for (k, c) in &a.configs[0].classes {
        assert_eq!(c.summary, b.configs[0].classes[k].summary, "{k}");
    }
    assert!(b.configs[0].notes.iter().any(|n| n.contains("-H") && n.contains("all threads")), "{:?}", b.configs[0].notes);
    // An all-threads column that is not the threads' sum is not cyclictest's: refused, named.
    let row = big_h.lines().find(|l| l.starts_with("000097")).unwrap();
    let bad = big_h.replace(row, "000097 000001\t000003\t000005");
    let e = with("cyclictest", "hh.txt", &bad, &opts).unwrap_err();
    assert!(e.contains("hh.txt: line") && e.contains("all threads") && e.contains("sum"), "{e}");
    let bad = big_h.replace("# Max Latencies: 09079 04891 09079", "# Max Latencies: 09079 04891 09999");
    let e = with("cyclictest", "hh.txt", &bad, &opts).unwrap_err();
    assert!(e.contains("hh.txt: line") && e.contains("# Max Latencies:"), "{e}");
    // Min or avg with the extra column, or rows without it, stay refused as before.
    let bad = big_h.replace("# Min Latencies: 00043 00018", "# Min Latencies: 00043 00018 00018");
    assert!(with("cyclictest", "hh.txt", &bad, &opts).is_err());
}
