//! The answer to a question: pairs differ only in the studied parameter, groups fold what the
//! question does not name (and say so), the sentence says which way each statistic moved.
use report::answer::{answer, Quantity};
use report::answer_view::{answer_text, answers_html, sentence};
use results::{ConfigResult, LatencyRecorder, Question, ResultKind, RunMeta, RunResult};

fn cfg(name: &str, params: &[(&str, &str)], class: &str, ns: u64, iops: f64) -> ConfigResult {
    let mut c = ConfigResult::new(name);
    for (k, v) in params {
        c.params.insert(k.to_string(), v.to_string());
    }
    let mut r = LatencyRecorder::new(0);
    for i in 0..100 {
        r.record(ns + i % 3);
    }
    c.classes.insert(class.into(), r.finish());
    c.set_figure("iops", iops, "IOPS");
    c
}

fn q(param: &str, base: &str, variants: &[&str], within: &[&str], stats: &[&str]) -> Question {
    Question {
        title: "t".into(),
        param: param.into(),
        baseline: base.into(),
        variants: variants.iter().map(|s| s.to_string()).collect(),
        within: within.iter().map(|s| s.to_string()).collect(),
        stats: stats.iter().map(|s| s.to_string()).collect(),
        classes: vec![],
    }
}

/// direct_lpi off/on × job a/b × vwfi trap/native, plus a config that changes two things.
fn run() -> RunResult {
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
    for (vwfi, extra) in [("trap", 0u64), ("native", 1000)] {
        for (job, jb) in [("a", 0u64), ("b", 100)] {
            r.configs.push(cfg(&format!("off {job} {vwfi}"), &[("lpi", "off"), ("job", job), ("vwfi", vwfi)], "io", 5000 + extra + jb, 100.0));
            r.configs.push(cfg(&format!("on {job} {vwfi}"), &[("lpi", "on"), ("job", job), ("vwfi", vwfi)], "io", 4600 + extra + jb - extra / 2, 110.0));
        }
    }
    // Differs from "off a trap" in lpi AND job: must pair with nothing.
    r.configs.push(cfg("on c trap", &[("lpi", "on"), ("job", "c"), ("vwfi", "trap")], "io", 1, 1.0));
    r
}

#[test]
fn pairs_differ_only_in_the_parameter_and_unfolded_groups_are_exact() {
    let r = run();
    let a = answer(&r, &q("lpi", "off", &["on"], &[], &["mean", "figure:iops"])).unwrap();
    assert_eq!(a.group_keys, ["job", "vwfi"]);
    assert!(a.folded.is_empty());
    assert_eq!(a.groups.len(), 4);
    for g in &a.groups {
        assert_eq!(g.pairs.len(), 1);
        let (b, v) = &g.pairs[0];
        assert_eq!(b.replace("off", "on"), *v, "paired only with its twin");
        let mean = &g.changes[0];
        assert_eq!((mean.class.as_deref(), mean.stat.as_str(), &mean.quantity), (Some("io"), "mean", &Quantity::Latency));
        assert!((mean.abs - (mean.variant - mean.base)).abs() < 1e-9);
        let iops = &g.changes[1];
        assert_eq!(iops.quantity, Quantity::Figure("IOPS".into()));
        assert!((iops.rel.unwrap() - 0.1).abs() < 1e-12);
    }
    let trap_a = &a.groups.iter().find(|g| g.label() == "job=a, vwfi=trap").unwrap().changes[0];
    assert!((trap_a.abs + 400.0).abs() < 1e-9, "{}", trap_a.abs);
    let native_a = &a.groups.iter().find(|g| g.label() == "job=a, vwfi=native").unwrap().changes[0];
    assert!((native_a.abs + 900.0).abs() < 1e-9, "{}", native_a.abs);
    assert_eq!(a.unpaired, ["on c trap"]);
}

#[test]
fn folding_keeps_the_median_pair_and_the_range_and_names_what_it_folded() {
    let r = run();
    let a = answer(&r, &q("lpi", "off", &["on"], &["vwfi"], &["mean"])).unwrap();
    assert_eq!(a.folded, ["job"]);
    assert_eq!(a.groups.len(), 2);
    let g = &a.groups[0];
    assert_eq!(g.pairs.len(), 2);
    let c = &g.changes[0];
    assert_eq!(c.pairs, 2);
    let (lo, hi) = c.abs_range.unwrap();
    assert!(lo <= c.abs && c.abs <= hi);
    // Baseline, variant and change shown come from one pair, so they agree.
    assert!((c.variant - c.base - c.abs).abs() < 1e-9);
    let text = answer_text(&a, results::LatencyUnit::Us);
    assert!(text.contains("folded within each group") && text.contains("`job`"), "{text}");
    assert!(text.contains("RANGE OVER PAIRS"), "{text}");
}

#[test]
fn the_sentence_says_direction_amount_and_relative_change() {
    let r = run();
    let a = answer(&r, &q("lpi", "off", &["on"], &["vwfi"], &["mean", "figure:iops"])).unwrap();
    let s = sentence(&a, results::LatencyUnit::Us);
    assert!(s.starts_with("lpi off → on lowers mean io latency by 0.40–0.90 µs"), "{s}");
    assert!(s.contains("raises iops by 10.0 IOPS (10.0 %)"), "{s}");
    // Each group folds two pairs (`job`); each pair has its verdict, and the row counts them.
    assert!(s.ends_with("in 2 groups (4 pairs); 2 of 2 changes resolvable at 95 % confidence."), "folded pairs are judged: {s}");
    // The reverse question reverses the words.
    let back = answer(&r, &q("lpi", "on", &["off"], &["vwfi"], &["mean"])).unwrap();
    assert!(sentence(&back, results::LatencyUnit::Us).starts_with("lpi on → off raises mean io latency"));
}

#[test]
fn tiny_changes_are_within_one_percent_and_mixed_ones_say_both_ways() {
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
    r.configs.push(cfg("a0", &[("p", "a"), ("g", "0")], "t", 10_000, 1.0));
    r.configs.push(cfg("b0", &[("p", "b"), ("g", "0")], "t", 10_050, 1.0));
    r.configs.push(cfg("a1", &[("p", "a"), ("g", "1")], "t", 10_000, 1.0));
    r.configs.push(cfg("b1", &[("p", "b"), ("g", "1")], "t", 9_960, 1.0));
    let s = sentence(&answer(&r, &q("p", "a", &["b"], &[], &["p50"])).unwrap(), results::LatencyUnit::Us);
    assert!(s.contains("leaves p50 t latency within 1 %"), "{s}");
    r.configs[1] = cfg("b0", &[("p", "b"), ("g", "0")], "t", 12_000, 1.0);
    let s = sentence(&answer(&r, &q("p", "a", &["b"], &[], &["p50"])).unwrap(), results::LatencyUnit::Us);
    assert!(s.contains("moves p50 t latency both ways (lower in 1, higher in 1 of 2 pairs"), "{s}");
}

#[test]
fn one_class_per_path_is_compared_under_its_common_name() {
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
    r.configs.push(cfg("irqfd", &[("via", "irqfd")], "device_irqfd", 10_000, 1.0));
    r.configs.push(cfg("msi", &[("via", "msi")], "device_msi", 8_000, 1.0));
    let a = answer(&r, &q("via", "irqfd", &["msi"], &[], &["mean"])).unwrap();
    let c = &a.groups[0].changes[0];
    assert_eq!(c.class.as_deref(), Some("device"));
    assert!((c.abs + 2000.0).abs() < 1e-9);
}

#[test]
fn unknown_parameters_and_values_are_errors_naming_what_exists() {
    let r = run();
    let e = answer(&r, &q("lpy", "off", &["on"], &[], &["mean"])).unwrap_err().to_string();
    assert!(e.contains("`lpy`") && e.contains("`lpi`"), "{e}");
    let e = answer(&r, &q("lpi", "off", &["onn"], &[], &["mean"])).unwrap_err().to_string();
    assert!(e.contains("`onn`") && e.contains("`on`"), "{e}");
}

#[test]
fn the_html_answer_has_the_sentence_the_table_and_the_pairs_folded() {
    let mut r = run();
    r.questions.push(q("lpi", "off", &["on"], &["vwfi"], &["mean"]));
    let h = answers_html(&r, results::LatencyUnit::Us);
    assert!(h.contains("<strong>Answer:</strong> lpi off → on lowers mean io latency"), "{h}");
    assert!(h.contains("<table class=\"answer\">"));
    assert!(h.contains("<details><summary>The 4 pairs compared</summary>"), "{h}");
    // The whole report opens with it, before the runs.
    let page = report::render_html(&[("r".into(), r)]).unwrap();
    let (ans, runs) = (page.find("id=\"answer-0\"").unwrap(), page.find("id=\"runs\"").unwrap());
    assert!(ans < runs);
}

#[test]
fn a_small_change_in_one_direction_is_said_with_its_amount() {
    // 0.38 µs on 540 µs per I/O: the answer to "what does direct injection buy", not "nothing".
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Predicted));
    r.configs.push(cfg("off", &[("lpi", "off")], "io", 540_000, 1.0));
    r.configs.push(cfg("on", &[("lpi", "on")], "io", 539_620, 1.0));
    let s = sentence(&answer(&r, &q("lpi", "off", &["on"], &[], &["mean"])).unwrap(), results::LatencyUnit::Us);
    assert!(s.starts_with("lpi off → on lowers mean io latency by 0.38 µs (0.1 %)"), "{s}");
}

/// Issue 28: a row that folds several pairs counts each pair's own verdict; it is resolved only
/// when every pair is resolved the same way, and its interval covers every pair's.
#[test]
fn folded_pairs_count_their_own_verdicts() {
    use report::answer::Uncertainty;
    let v = |word: &'static str, lo: f64, hi: f64| Uncertainty::Verdict { word, interval: Some((lo, hi)), confidence: 0.95 };
    let all = Uncertainty::folded(&[v("faster", 0.2, 0.3), v("faster", 0.25, 0.4), v("faster", 0.1, 0.2)]);
    assert_eq!(all.cell(), "faster in 3/3 pairs [0.100, 0.400]");
    assert_eq!(all.resolved(), Some(true));
    let mixed = Uncertainty::folded(&[v("faster", 0.2, 0.3), v("no difference resolvable", 0.9, 1.1), v("faster", 0.1, 0.2)]);
    assert_eq!(mixed.cell(), "faster 2, no difference 1 of 3 pairs");
    assert_eq!(mixed.resolved(), Some(false));
    let both = Uncertainty::folded(&[v("faster", 0.2, 0.3), v("slower", 1.2, 1.3)]);
    assert_eq!(both.resolved(), Some(false), "pairs resolved in opposite directions are not one verdict");
    let none = Uncertainty::folded(&[Uncertainty::Unjudged("x".into()), Uncertainty::Unjudged("y".into())]);
    assert_eq!(none.resolved(), None);
    assert_eq!(none.cell(), "2 pairs folded: no interval");
}
