//! `armguest::console::parse` on captured logs of the arm64 guest (tests/data/console/README.md).
use armguest::console::{parse, ConsoleError, ConsoleHost, ConsoleMeta};

fn data(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/data/console/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn meta() -> ConsoleMeta {
    ConsoleMeta { tool_version: "irqlab test".into(), ..Default::default() }
}

#[test]
fn real_timer_log_gives_every_sample_and_xen_config_from_the_log() {
    let r = parse(&data("xen-credit2-trap-timer.log"), "timer.log", meta()).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.error, None);
    let s = &c.classes["timer"].summary;
    assert_eq!(s.count, 64);
    // ticks at 62.5 MHz = 16 ns each: min 7151 ticks, max 61813, warm max (after 4) 61813.
    assert_eq!(s.min, 7151 * 16);
    assert_eq!(s.max, 61813 * 16);
    assert_eq!(s.warm_max, 61813 * 16);
    assert_eq!(s.warmup, 4);
    assert_eq!(c.params["sched"], "credit2");
    assert_eq!(c.params["vwfi"], "unknown", "Xen 4.17 on Arm does not print its command line");
    assert_eq!(c.params["xen_version"], "4.17.7");
    assert_eq!(c.params["debug_build"], "false");
    assert_eq!(c.params["domain"], "DOM1");
    assert_eq!(r.meta.platform["host"], "QEMU TCG emulation (not hardware latency)");
    assert_eq!(c.figures["samples.lost"].value, 0.0);
    assert!(c.figures["noise_lines"].value > 10.0);
}

#[test]
fn real_ipi_log_gives_one_way_and_round_trip() {
    let r = parse(&data("xen-credit2-trap-ipi.log"), "ipi.log", meta()).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.classes["ipi"].summary.count, 16);
    assert_eq!(c.classes["ipi"].summary.min, 6619 * 16);
    assert_eq!(c.classes["ipi_rtt"].summary.max, 2389526 * 16);
    assert_eq!(c.params["bench"], "ipi");
}

#[test]
fn parsing_is_deterministic_and_prefix_and_line_ends_do_not_matter() {
    let a = parse(&data("xen-credit2-trap-timer.log"), "x", meta()).unwrap();
    let b = parse(&data("xen-credit2-trap-timer.log"), "x", meta()).unwrap();
    assert_eq!(results::to_json_string(&a), results::to_json_string(&b));
    let board = parse(&data("board-noprefix-timer.log"), "x", ConsoleMeta { host: ConsoleHost::Board("zcu102".into()), ..meta() }).unwrap();
    assert_eq!(board.configs[0].classes["timer"], a.configs[0].classes["timer"]);
    assert_eq!(board.meta.platform["host"], "board: zcu102");
    assert_eq!(board.configs[0].params["sched"], "unknown", "no Xen boot lines in a bare serial log");
}

#[test]
fn truncated_log_is_an_error_naming_the_line_or_a_stated_partial_result() {
    let text = data("truncated-timer.log");
    let last = text.split('\n').count();
    match parse(&text, "cut.log", meta()) {
        Err(ConsoleError::Damaged { line, why, file }) => {
            assert_eq!(line, last);
            assert_eq!(file, "cut.log");
            assert!(why.contains("cut short"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let r = parse(&text, "cut.log", ConsoleMeta { keep_partial: true, ..meta() }).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.classes["timer"].summary.count, 39);
    assert_eq!(c.figures["samples.lost"].value, 25.0);
    assert!(c.error.as_deref().unwrap().contains("39 of 64 samples kept"), "{:?}", c.error);
}

#[test]
fn corrupted_line_is_caught_by_its_checksum() {
    let text = data("corrupted-timer.log");
    let line = text.split('\n').position(|l| l.contains("@irqlab v1 20 ")).unwrap() + 1;
    match parse(&text, "bad.log", meta()) {
        Err(ConsoleError::Damaged { line: l, why, .. }) => {
            assert_eq!(l, line);
            assert!(why.contains("checksum"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let r = parse(&text, "bad.log", ConsoleMeta { keep_partial: true, ..meta() }).unwrap();
    assert_eq!(r.configs[0].classes["timer"].summary.count, 19);
}

/// Re-checksums a made-up line so only the intended damage shows.
fn line(body: &str) -> String {
    let text = format!("@irqlab v1 {body}");
    let x = text.bytes().fold(0u8, |a, b| a ^ b);
    format!("{text} *{x:02x}")
}

#[test]
fn gaps_repeats_bad_sums_and_guest_errors_are_named() {
    let start = line("0 start bench=timer wait=busy period=100 samples=2 warmup=0 freq=1000000000 report=console abi=1");
    let ok = [start.clone(), line("1 t 0 10"), line("2 t 1 30"), line("3 sum timer n=2 avg=20 min=10 max=30 warm_max=30"), line("4 end samples=2 lost=0 spurious=0")];
    let r = parse(&ok.join("\n"), "ok", meta()).unwrap();
    assert_eq!(r.configs[0].classes["timer"].summary.max, 30);
    let err = |lines: Vec<String>| match parse(&lines.join("\n"), "m", meta()) {
        Err(ConsoleError::Damaged { line, why, .. }) => (line, why),
        other => panic!("{other:?}"),
    };
    let (l, why) = err(vec![start.clone(), line("1 t 0 10"), line("3 t 1 30")]);
    assert_eq!(l, 3);
    assert!(why.contains("1 line(s) lost"), "{why}");
    let (l, why) = err(vec![start.clone(), line("1 t 0 10"), line("1 t 0 10")]);
    assert_eq!(l, 3);
    assert!(why.contains("repeated"), "{why}");
    let (_, why) =
        err(vec![start.clone(), line("1 t 0 10"), line("2 t 1 30"), line("3 sum timer n=2 avg=20 min=10 max=31 warm_max=30"), line("4 end samples=2 lost=0 spurious=0")]);
    assert!(why.contains("max="), "{why}");
    let (_, why) = err(vec![start.clone(), line("1 t 5 10")]);
    assert!(why.contains("sample 5 where sample 0"), "{why}");
    match parse(&[start.clone(), line("1 fault vector=4 esr=1 elr=2")].join("\n"), "f", meta()) {
        Err(ConsoleError::Guest { line: 2, text, .. }) => assert!(text.contains("fault")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn foreign_interleaved_and_neighbour_logs() {
    assert!(matches!(parse("Linux version 6.1\nhello\n", "dmesg", meta()), Err(ConsoleError::NoReport { .. })));
    assert!(matches!(parse("@irqlab v2 0 start\n", "v2", meta()), Err(ConsoleError::Version { line: 1, .. })));
    // A busy neighbour (DOM2, spin bench) interleaved line by line with DOM1's report.
    let timer = data("xen-credit2-trap-timer.log");
    let spin = format!("(XEN) DOM2: {}\r", line("0 start bench=spin wait=wfi period=1 samples=1 warmup=0 freq=62500000 report=console abi=1"));
    let mixed: Vec<String> = timer.split('\n').enumerate().flat_map(|(i, l)| if i == 60 { vec![spin.clone(), l.to_string()] } else { vec![l.to_string()] }).collect();
    let r = parse(&mixed.join("\n"), "mixed", meta()).unwrap();
    assert_eq!(r.configs[0].classes["timer"].summary.count, 64);
    assert!(r.configs[0].notes.iter().any(|n| n.contains("DOM2")));
    // Two characters of another domain inside a DOM1 line: the checksum catches it.
    let garbled = timer.replacen("@irqlab v1 30 t 29 ", "@irqlab v1 30 t 29 (X", 1);
    assert!(matches!(parse(&garbled, "g", meta()), Err(ConsoleError::Damaged { .. })));
    // Two benchmark domains in one log.
    let two = format!("{}\n(XEN) DOM2: {}", timer, line("0 start bench=timer wait=wfi period=1 samples=1 warmup=0 freq=1 report=console abi=1"));
    assert!(matches!(parse(&two, "two", meta()), Err(ConsoleError::TwoBenches { .. })));
}

#[test]
fn given_config_wins_over_the_log_with_a_note() {
    let m = ConsoleMeta { scheduler: Some("credit".into()), pinning: Some("dom1 vcpu0->pcpu1".into()), ..meta() };
    let r = parse(&data("xen-credit2-trap-timer.log"), "x", m).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.params["sched"], "credit");
    assert_eq!(c.params["pinning"], "dom1 vcpu0->pcpu1");
    assert!(c.notes.iter().any(|n| n.contains("boot log says `credit2`")));
}

mod garbage {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn random_text_never_panics(s in "(\\PC|\n|\r|@irqlab v1 [0-9 a-z=*]{0,30}){0,40}") {
            // Random lines never make a whole checksummed report: refused when strict, and any
            // partial result says it is damaged.
            if let Ok(r) = parse(&s, "fuzz", ConsoleMeta { keep_partial: true, ..Default::default() }) {
                prop_assert!(r.configs.iter().all(|c| c.error.is_some()), "{:?}", r.configs.iter().map(|c| &c.error).collect::<Vec<_>>());
            }
            prop_assert!(parse(&s, "fuzz", ConsoleMeta::default()).is_err());
        }

        #[test]
        fn mutated_real_log_never_panics(cut in 0usize..6000, byte in any::<u8>(), at in 0usize..6000) {
            let mut b = data("xen-credit2-trap-timer.log").into_bytes();
            b.truncate(cut.max(1).min(b.len()));
            let i = at % b.len();
            b[i] = byte;
            let s = String::from_utf8_lossy(&b);
            // Damage never adds samples, and a result without an error kept all of them.
            let whole = parse(&data("xen-credit2-trap-timer.log"), "fuzz", ConsoleMeta::default()).unwrap().configs[0].classes["timer"].summary.count;
            if let Ok(r) = parse(&s, "fuzz", ConsoleMeta { keep_partial: true, ..Default::default() }) {
                for c in &r.configs {
                    let kept = c.classes.get("timer").map_or(0, |t| t.summary.count);
                    prop_assert!(kept <= whole, "{kept} > {whole}");
                    if c.error.is_none() {
                        prop_assert_eq!(kept, whole);
                    }
                }
            }
        }
    }
}

#[test]
fn real_icount_logs_with_a_neighbour_and_an_ipi() {
    let r = parse(&data("xen-icount-credit2-trap-busy-timer.log"), "busy.log", ConsoleMeta { host: ConsoleHost::InstructionCount, ..meta() }).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.error, None);
    assert_eq!(c.classes["timer"].summary.count, 200);
    assert_eq!(c.params["domain"], "DOM1");
    assert!(c.notes.iter().any(|n| n.contains("spin bench: DOM2")), "{:?}", c.notes);
    assert!(r.meta.platform["host"].contains("instruction count"));
    let r = parse(&data("xen-icount-credit2-native-ipi.log"), "ipi.log", meta()).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.classes["ipi"].summary.count, 100);
    assert_eq!(c.classes["ipi"].summary.min, 584501 * 16);
    assert_eq!(c.classes["ipi_rtt"].summary.max, 1236246 * 16);
}

#[test]
fn device_bench_d_lines_are_arrival_stamps_and_must_match_their_bench() {
    let start = line("0 start bench=device wait=wfi period=62500 samples=2 warmup=0 freq=1000000000 report=console abi=2");
    let ok = [start.clone(), line("1 d 0 1000"), line("2 d 1 5000"), line("3 sum device n=2 avg=3000 min=1000 max=5000 warm_max=5000"), line("4 end samples=2 lost=0 spurious=0")];
    let r = parse(&ok.join("\n"), "dev", meta()).unwrap();
    let c = &r.configs[0];
    assert_eq!(c.params["bench"], "device");
    assert_eq!((c.classes["device"].summary.count, c.classes["device"].summary.min, c.classes["device"].summary.max), (2, 1000, 5000));
    assert!(c.notes.iter().any(|n| n.contains("arrival") && n.contains("not latencies")), "{:?}", c.notes);
    // A `t` line in a device stream, or a `d` line in a timer stream, is damage.
    for (s, l) in [(start.clone(), line("1 t 0 10")), (line("0 start bench=timer wait=wfi period=1 samples=1 warmup=0 freq=1000000000 report=console abi=2"), line("1 d 0 10"))] {
        match parse(&[s, l].join("\n"), "m", meta()) {
            Err(ConsoleError::Damaged { line: 2, why, .. }) => assert!(why.contains("malformed"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
