//! Every importer on its checked-in data (tests/data/import/README.md says how each was made):
//! irqlab's figures must equal the tool's own printed ones within the tool's rounding, and bad,
//! truncated or other-layout files must be refused naming the file, line or key.
use std::path::PathBuf;

use import::{import_files, ImportOptions, LatencyUnit};
use results::RunResult;
use serde_json::Value;

fn data(name: &str) -> (String, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import").join(name);
    (name.to_string(), std::fs::read_to_string(&p).unwrap())
}

/// Options for `name`: cyclictest's `-h` text does not state its unit, so the tests say µs (the
/// checked-in text was made without `-N`).
fn opts(format: &str, name: &str) -> ImportOptions {
    let unit = (format == "cyclictest" && name.ends_with(".txt")).then_some(LatencyUnit::Us);
    ImportOptions { tsc_ghz: Some(2.0), unit, ..Default::default() }
}

fn import(format: &str, names: &[&str]) -> RunResult {
    import_files(format, &names.iter().map(|n| data(n)).collect::<Vec<_>>(), &opts(format, names[0]), "irqlab test").unwrap()
}

fn import_err(format: &str, name: &str, text: &str) -> String {
    import_files(format, &[(name.to_string(), text.to_string())], &opts(format, name), "t").unwrap_err().to_string()
}

/// fio's bins are 1/64 of their value wide (FIO_IO_U_PLAT_BITS 6, fio's `stat.h`) and irqlab
/// re-bins at 0.1 %; "within the tool's rounding" is one fio bin.
fn close(ours: u64, theirs: u64, rel: f64) -> bool {
    (ours as f64 - theirs as f64).abs() <= rel * theirs as f64 + 1.0
}

#[test]
fn fio_json_plus_matches_fios_percentiles() {
    let r = import("fio", &["fio-plus.json"]);
    assert_eq!(r.meta.knobs["import.tool_version"], "fio-3.33");
    let json: Value = serde_json::from_str(&data("fio-plus.json").1).unwrap();
    let clat = &json["jobs"][0]["read"]["clat_ns"];
    let c = &r.configs[0];
    assert_eq!(c.name, "randread4k");
    assert_eq!(c.params["fio.rw"], "randread");
    let s = &c.classes["io"].summary;
    assert_eq!((s.count, s.min, s.max), (clat["N"].as_u64().unwrap(), clat["min"].as_u64().unwrap(), clat["max"].as_u64().unwrap()));
    assert_eq!(s.mean, clat["mean"].as_f64().unwrap());
    for (stat, key) in [(s.p50, "50.000000"), (s.p90, "90.000000"), (s.p99, "99.000000"), (s.p999, "99.900000"), (s.p9999, "99.990000")] {
        let theirs = clat["percentile"][key].as_u64().unwrap();
        assert!(close(stat, theirs, 1.0 / 64.0), "p{key}: irqlab {stat}, fio {theirs}");
    }
    assert_eq!(c.figures["iops"].value, json["jobs"][0]["read"]["iops"].as_f64().unwrap());
    assert!(c.notes.is_empty(), "json+ has bins: {:?}", c.notes);
}

#[test]
fn fio_plain_json_is_rebuilt_from_percentiles_and_says_so() {
    let r = import("fio", &["fio.json"]);
    let json: Value = serde_json::from_str(&data("fio.json").1).unwrap();
    let clat = &json["jobs"][0]["read"]["clat_ns"];
    let s = &r.configs[0].classes["io"].summary;
    for (stat, key) in [(s.p50, "50.000000"), (s.p99, "99.000000"), (s.p999, "99.900000")] {
        assert!(close(stat, clat["percentile"][key].as_u64().unwrap(), 1.0 / 64.0), "p{key}: {stat}");
    }
    assert!(r.configs[0].notes.iter().any(|n| n.contains("rebuilt from fio's printed percentiles")));
}

#[test]
fn fio_mixed_job_has_one_class_per_direction() {
    let r = import("fio", &["fio-plus-rw.json"]);
    let c = &r.configs[0];
    assert_eq!(c.classes.keys().collect::<Vec<_>>(), vec!["io.read", "io.write"]);
    assert!(c.figures.contains_key("iops.read") && c.figures.contains_key("iops.write"));
}

#[test]
fn cyclictest_json_and_text_of_one_run_agree_with_its_figures() {
    let j = import("cyclictest", &["cyclictest.json"]);
    let t = import("cyclictest", &["cyclictest-hist.txt"]);
    assert_eq!(j.meta.knobs["import.tool_version"], "2.40");
    assert!(j.meta.knobs["import.command"].starts_with("cyclictest -l 3000"));
    assert!(j.meta.platform.contains_key("kernel"));
    let doc: Value = serde_json::from_str(&data("cyclictest.json").1).unwrap();
    for k in ["0", "1"] {
        let th = &doc["thread"][k];
        let class = format!("timer.t{k}");
        let (sj, st) = (&j.configs[0].classes[&class].summary, &t.configs[0].classes[&class].summary);
        assert_eq!(sj.count, th["cycles"].as_u64().unwrap());
        assert_eq!((sj.min, sj.max), (th["min"].as_u64().unwrap() * 1000, th["max"].as_u64().unwrap() * 1000));
        assert!((sj.mean - th["avg"].as_f64().unwrap() * 1000.0).abs() < 1e-6);
        // the text prints whole µs; the rest agrees exactly
        assert_eq!((st.count, st.min, st.max, st.p50, st.p90, st.p99), (sj.count, sj.min, sj.max, sj.p50, sj.p90, sj.p99));
        assert!((st.mean - sj.mean).abs() < 1000.0, "text avg is whole µs: {} vs {}", st.mean, sj.mean);
        // the percentile of 1 µs buckets, counted by hand
        let hist = th["histogram"].as_object().unwrap();
        let mut b: Vec<(u64, u64)> = hist.iter().map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap())).collect();
        b.sort();
        let rank = (0.5 * sj.count as f64).ceil() as u64;
        let mut cum = 0;
        let p50 = b.iter().find(|(_, n)| {
            cum += n;
            cum >= rank
        });
        assert!(close(sj.p50, p50.unwrap().0 * 1000, 0.001), "p50 {} vs bucket {:?}", sj.p50, p50);
        assert!(sj.clamped_high > 0, "overflows counted");
    }
}

#[test]
fn rtla_separates_irq_and_thread_per_cpu() {
    let r = import("rtla-timerlat", &["rtla-timerlat-hist.txt"]);
    let c = &r.configs[0];
    assert_eq!(c.classes.keys().collect::<Vec<_>>(), vec!["irq.cpu0", "irq.cpu1", "thread.cpu0", "thread.cpu1"]);
    let irq = &c.classes["irq.cpu0"].summary;
    assert_eq!((irq.count, irq.min, irq.max, irq.p50, irq.p99), (30_000, 0, 12_000, 0, 1_000), "29,700 of 30,000 are at most 1 µs");
    let thr = &c.classes["thread.cpu0"].summary;
    assert_eq!((thr.count, thr.max, thr.p50, thr.p90, thr.clamped_high), (30_000, 23_000, 1_000, 2_000, 2));
}

#[test]
fn tscdeadline_cycles_become_ns() {
    let r = import("tscdeadline", &["tscdeadline-latency.txt"]);
    let s = &r.configs[0].classes["timer"].summary;
    let cycles: Vec<f64> = data("tscdeadline-latency.txt").1.lines().filter_map(|l| l.strip_prefix("latency: ")).map(|v| v.parse().unwrap()).collect();
    assert_eq!(s.count, 1000);
    let min = cycles.iter().cloned().fold(f64::MAX, f64::min);
    assert_eq!(s.min, (min / 2.0).round() as u64);
    let e = import_files("tscdeadline", &[data("tscdeadline-latency.txt")], &ImportOptions::default(), "t").unwrap_err().to_string();
    assert!(e.contains("tscdeadline-latency.txt") && e.contains("--tsc-ghz"), "{e}");
}

#[test]
fn ipi_benchmark_rows_become_the_models_figures() {
    let r = import("ipi-bench", &["ipi-benchmark.log"]);
    let f = &r.configs[0].figures;
    assert_eq!(f["broadcast_ipi.total"].value, 9_282_161_150.0);
    assert_eq!(f["normal_ipi.delivery"].value, 223_910_476.0);
    assert_eq!(f.len(), 10);
    let missing = data("ipi-benchmark.log").1.lines().filter(|l| !l.contains("Broadcast lock")).collect::<Vec<_>>().join("\n");
    let e = import_err("ipi-bench", "x.log", &missing);
    assert!(e.contains("x.log") && e.contains("no `Broadcast lock:` row"), "{e}");
    let twice = format!("{}\n{}", data("ipi-benchmark.log").1.trim_end(), "[ 9.0] Dry-run: 0, 5 ns");
    assert!(import_err("ipi-bench", "x.log", &twice).contains("line 7"));
}

#[test]
fn tbm_last_report_wins() {
    let r = import("tbm", &["tbm.txt"]);
    let f = &r.configs[0].figures;
    assert_eq!((f["timer.avg"].value, f["timer.min"].value, f["timer.max"].value, f["timer.warm_max"].value), (4850.0, 4810.0, 7030.0, 4980.0));
    let e = import_err("tbm", "t.txt", "latency (ns): max=1 min=2 avg=3");
    assert!(e.contains("t.txt: line 1") && e.contains("warm_max="), "{e}");
}

#[test]
fn several_files_are_repetitions() {
    let r = import("fio", &["fio-plus.json", "fio.json"]);
    let c = &r.configs[0];
    let reps = c.repetitions.as_ref().unwrap();
    assert_eq!(reps.len(), 2);
    assert_eq!(reps.pooled["io"].summary.count, reps.summaries("io").iter().map(|s| s.count).sum::<u64>());
    let e = import_files("fio", &[data("fio-plus.json"), data("fio-plus-rw.json")], &ImportOptions::default(), "t").unwrap_err().to_string();
    assert!(e.starts_with("fio-plus-rw.json: does not repeat fio-plus.json"), "{e}");
}

#[test]
fn wrong_truncated_and_other_layouts_are_refused_by_name() {
    let fio = data("fio-plus.json").1;
    let cut = &fio[..fio.len() / 2];
    let e = import_err("fio", "cut.json", cut);
    assert!(e.starts_with("cut.json: line") && e.contains("complete fio JSON"), "{e}");
    let e = import_err("fio", "cyc.json", &data("cyclictest.json").1);
    assert!(e.contains("cyc.json: key `fio version`"), "{e}");
    let hist = data("cyclictest-hist.txt").1;
    let cut: String = hist.lines().take(40).collect::<Vec<_>>().join("\n");
    let e = import_err("cyclictest", "h.txt", &cut);
    assert!(e.contains("h.txt") && e.contains("# Total:") && e.contains("truncated"), "{e}");
    let e = import_err("cyclictest", "h.txt", &hist.replacen("000010 ", "000010 x", 1));
    assert!(e.starts_with("h.txt: line "), "{e}");
    let rtla = data("rtla-timerlat-hist.txt").1;
    let e = import_err("rtla-timerlat", "r.txt", &rtla.replace("max:         12        23         7        19\n", ""));
    assert!(e.contains("no `max:` row"), "{e}");
    let e = import_err("rtla-timerlat", "r.txt", &rtla.replace("3            30       650        40       640\n", ""));
    assert!(e.contains("irq.cpu0") && e.contains("truncated"), "{e}");
    let e = import_err("rtla-timerlat", "r.txt", &rtla.replace("Index   IRQ-000", "Index   SOFT-000"));
    assert!(e.contains("r.txt: line 4") && e.contains("IRQ-NNN"), "{e}");
    let e = import_err("tscdeadline", "k.txt", "latency: 12\nlatency: abc\n");
    assert!(e.contains("k.txt: line 2") && e.contains("TSC cycles"), "{e}");
    let e = import_err("tbm", "fio.json", &fio);
    assert!(e.contains("fio.json") && e.contains("tbm report"), "{e}");
    assert!(import_err("nope", "x", "").contains("unknown import format `nope`"));
}

#[test]
fn irqlab_results_of_separate_runs_become_repetitions() {
    use results::{to_json_string, ConfigResult, LatencyRecorder, ResultKind, RunMeta};
    let file = |base: u64| {
        let mut r = RunResult::new(RunMeta::named("irqlab 0.1.0", "run-timer", 0, ResultKind::Measured));
        let mut rec = LatencyRecorder::new(0);
        (0..1000u64).for_each(|i| rec.record(base + i));
        let mut c = ConfigResult::new("timer");
        c.classes.insert("timer".into(), rec.finish());
        r.configs.push(c);
        (format!("run{base}.json"), to_json_string(&r))
    };
    let r = import_files("irqlab", &[file(1000), file(2000), file(3000)], &ImportOptions::default(), "t").unwrap();
    assert_eq!(r.meta.kind, ResultKind::Measured);
    let reps = r.configs[0].repetitions.as_ref().unwrap();
    assert_eq!(reps.len(), 3);
    assert_eq!((reps.pooled["timer"].summary.min, reps.pooled["timer"].summary.max), (1000, 3999));
    let e = import_err("irqlab", "bad.json", "{\"schema_version\": 99}");
    assert!(e.contains("bad.json") && e.contains("schema version 99"), "{e}");
}

/// The arm64 guest's console log from the Xen lab, imported like the other tools' outputs: the
/// board must be named, the Xen settings given become parameters, damage is refused with the line.
#[test]
fn bench_console_logs_import_with_their_board_and_settings() {
    let log = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../armguest/tests/data/console/xen-credit2-trap-timer.log")).unwrap();
    let opts = |board: Option<&str>| ImportOptions { board: board.map(str::to_string), params: vec![("vwfi".into(), "trap".into())], ..Default::default() };
    let files = [("xen-credit2-trap-timer.log".to_string(), log.clone())];
    let e = import_files("bench-console", &files, &opts(None), "t").unwrap_err().to_string();
    assert!(e.contains("--board"), "{e}");
    let r = import_files("bench-console", &files, &opts(Some("qemu-tcg")), "t").unwrap();
    assert_eq!(r.meta.kind, results::ResultKind::Measured);
    let c = &r.configs[0];
    assert!(c.classes.values().any(|l| l.summary.count > 0), "{:?}", c.classes.keys());
    assert_eq!(c.params.get("vwfi").map(String::as_str), Some("trap"), "{:?}", c.params);
    // A line cut in the middle: refused, naming the line.
    let cut: String = log.lines().take(log.lines().count() / 2).collect::<Vec<_>>().join("\n") + "\n@irqlab v1 9";
    let e = import_files("bench-console", &[("cut.log".to_string(), cut)], &opts(Some("qemu-tcg")), "t").unwrap_err().to_string();
    assert!(e.contains("cut.log") && e.contains("line"), "{e}");
}

/// Issue 27: inputs the fuzzers found (fuzz/fuzz_targets/import_*.rs). A file that contradicts
/// itself (min above max) or whose numbers overflow when scaled to ns is refused with the file
/// and the key or class named — before, they panicked (debug) or became percentiles outside the
/// range the file states.
#[test]
fn fuzz_found_inputs_are_refused_naming_file_and_place() {
    for (format, name, says) in [
        ("fio", "fuzz/fio-min-above-max.json", "min ≤ max"),
        ("cyclictest", "fuzz/cyclictest-bucket-overflow.json", "a latency below 13 days"),
        ("rtla-timerlat", "fuzz/rtla-min-above-max.txt", "min ≤ max"),
        ("rtla-timerlat", "fuzz/rtla-samples-above-max.txt", "buckets within the stated max"),
        ("irqlab", "fuzz/irqlab-p50-above-max.json", "summary contradicts itself"),
        ("rtla-timerlat", "fuzz/rtla-two-headers.txt", "one `Index …` header per file"),
        // issue 36's 10 M run: `# Max Latencies:` (one column) before the first histogram row
        // (two threads) — an index out of bounds before.
        ("cyclictest", "fuzz/cyclictest-summary-before-rows.txt", "2 columns (one per thread, as the histogram rows)"),
    ] {
        let (n, text) = data(name);
        let e = import_err(format, &n, &text);
        assert!(e.contains(&n) && e.contains(says), "{format}: {e}");
    }
}

/// A cyclictest thread whose histogram is empty is stated in a note, never silently dropped.
#[test]
fn an_empty_cyclictest_thread_is_named_in_a_note() {
    let (n, text) = data("fuzz/cyclictest-empty-thread.txt");
    let r = import_files("cyclictest", &[(n.clone(), text)], &opts("cyclictest", &n), "t").unwrap();
    let c = &r.configs[0];
    assert!(c.classes.values().all(|l| l.summary.count > 0), "{:?}", c.classes.keys());
    assert!(c.notes.iter().any(|x| x.contains("no samples")), "{:?}", c.notes);
}
