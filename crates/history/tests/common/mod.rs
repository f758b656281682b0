//! The history's behaviour, checked the same way on each database: the SQLite tests run these on
//! a temporary file, the PostgreSQL tests on a throwaway cluster (`tests/postgres.rs`).
#![allow(dead_code)]
use history::{Added, History, HistoryError, Location, NewRun};
use results::{ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

/// A result with one configuration `x` whose `timer` class has samples base … base + 4999 ns.
pub fn result(base: u64, seed: u64) -> RunResult {
    let mut rec = LatencyRecorder::new(0);
    (0..5000u64).for_each(|i| rec.record(base + (i * 7919 + seed) % 5000));
    let mut c = ConfigResult::new("x");
    c.classes.insert("timer".into(), rec.finish());
    let mut r = RunResult::new(RunMeta::named("t", "s", seed, ResultKind::Measured));
    r.configs = vec![c];
    r
}

pub fn add(h: &mut History, commit: &str, label: &str, accepted: bool, r: &RunResult) -> Added {
    h.add(&NewRun { commit, label, accepted, added_at: "2026-11-28T00:00:00Z", result: r, verdicts: "" }).unwrap()
}

/// Stored runs are never replaced; the same one again stores nothing; points come oldest first.
pub fn adds_and_reads_back(loc: &Location) {
    let mut h = History::open(loc).unwrap();
    assert_eq!(h.version().unwrap(), history::schema::VERSION);
    let r1 = result(10_000, 1);
    let Added::Stored { seq: s1, summaries, .. } = add(&mut h, "c1", "main", true, &r1) else { panic!("first add stored nothing") };
    assert_eq!(summaries, results::COMPARED_STATS.len(), "one class × every compared statistic");
    assert!(matches!(add(&mut h, "c1", "main", true, &r1), Added::AlreadyStored { .. }));
    let Added::Stored { seq: s2, .. } = add(&mut h, "c2", "main", true, &result(12_000, 2)) else { panic!() };
    assert_eq!(s2, s1 + 1);
    let p = h.points("main", "timer", "min", None).unwrap();
    assert_eq!(p.iter().map(|p| (p.commit.as_str(), p.value)).collect::<Vec<_>>(), [("c1", 10_000.0), ("c2", 12_000.0)]);
    // a reopened history reads the same
    drop(h);
    let mut h = History::open(loc).unwrap();
    assert_eq!(h.points("main", "timer", "min", None).unwrap(), p);
}

/// Unknown names are refused naming what exists.
pub fn unknown_names_list_what_exists(loc: &Location) {
    let mut h = History::open(loc).unwrap();
    add(&mut h, "c1", "main", true, &result(10_000, 1));
    let e = h.points("main", "ipi", "p99", None).unwrap_err();
    assert!(matches!(e, HistoryError::Unknown { .. }) && e.to_string().contains("class `ipi`") && e.to_string().contains("timer"), "{e}");
    let e = h.points("main", "timer", "p42", None).unwrap_err();
    assert!(e.to_string().contains("p99.9") && e.to_string().contains("warm_max"), "{e}");
    let e = h.points("nightly", "timer", "p99", None).unwrap_err();
    assert!(e.to_string().contains("label `nightly`") && e.to_string().contains("main"), "{e}");
    let e = h.points("main", "timer", "p99", Some("y")).unwrap_err();
    assert!(e.to_string().contains("configuration `y`") && e.to_string().contains(": x"), "{e}");
    assert_eq!(e.exit_code(), 2);
}

/// The baseline is the last N accepted commits' runs, newest commit first, the commit under test
/// and rejected commits left out.
pub fn baseline_takes_the_last_accepted_commits(loc: &Location) {
    let mut h = History::open(loc).unwrap();
    add(&mut h, "c1", "main", true, &result(10_000, 1));
    add(&mut h, "c2", "main", true, &result(10_100, 2));
    add(&mut h, "c2", "main", true, &result(10_150, 3));
    add(&mut h, "c3", "main", false, &result(20_000, 4));
    add(&mut h, "c4", "main", true, &result(10_200, 5));
    add(&mut h, "c9", "other", true, &result(10_300, 6));
    let b = h.baseline("main", 2, "c4").unwrap();
    let got: Vec<(&str, u64)> = b.iter().map(|(c, r)| (c.as_str(), r.configs[0].classes["timer"].summary.min)).collect();
    assert_eq!(got, [("c2", 10_100), ("c2", 10_150), ("c1", 10_000)]);
    assert_eq!(h.baseline("main", 1, "").unwrap().len(), 1);
}

/// `threads` writers, each with its own connection, add `each` runs at once: all are stored, with
/// distinct, gap-free sequence numbers.
pub fn concurrent_writers(loc: &Location, threads: u64, each: u64) {
    History::open(loc).unwrap();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let mut h = History::open(&loc).unwrap();
                (0..each).map(|i| add(&mut h, &format!("t{t}-{i}"), "main", true, &result(10_000 + t * 100 + i, t * 1000 + i))).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seqs: Vec<i64> = handles.into_iter().flat_map(|h| h.join().unwrap()).map(|a| if let Added::Stored { seq, .. } = a { seq } else { panic!("{a:?}") }).collect();
    seqs.sort();
    assert_eq!(seqs, (1..=(threads * each) as i64).collect::<Vec<_>>());
    let mut h = History::open(loc).unwrap();
    assert_eq!(h.points("main", "timer", "p50", None).unwrap().len() as u64, threads * each);
}
