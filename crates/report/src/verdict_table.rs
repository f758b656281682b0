//! The verdicts of `irqlab compare` (issue 25): B/A per statistic with its interval and one word,
//! what would resolve an unresolved one, the whole-distribution test, and what did not pair — as
//! a terminal table and as JSON. The statistics are `results::stats`; this only lays them out.
use std::fmt::Write as _;

use results::escape_control;
use results::stats::early::word_text;
use results::stats::exceedance::ShareVerdict;
use results::stats::pairs::{ClassVerdicts, Verdicts};
use results::stats::verdict::{Basis, Verdict, Word};
use results::stats::Confidence;
use serde_json::json;

use crate::format::{latency, LatencyUnit};
use crate::table::{clean_cell, render_grid};

/// What the verdicts were asked with.
#[derive(Debug, Clone, Copy)]
pub struct VerdictOptions {
    pub confidence: Confidence,
    /// Relative effect to size experiments for (`--effect 5%` → 0.05).
    pub effect: f64,
}

fn pct(x: f64) -> String {
    let s = format!("{:.1}", x * 100.0);
    format!("{}%", s.trim_end_matches(".0"))
}

fn interval_text(v: &Verdict) -> String {
    match v.interval {
        Some((lo, hi)) => format!("{lo:.3} – {hi:.3}"),
        None => "-".into(),
    }
}

/// The note of a verdict: why there is no interval ("no interval"), or — tested, the interval
/// contains 1 — how big an experiment would resolve the effect asked for (the verdict's own
/// [`Verdict::needed`], from `Verdicts::recommend`); with repetitions, which analysis gave the
/// interval.
pub fn note(v: &Verdict, o: &VerdictOptions) -> String {
    let size = || v.needed.map(|n| if n.resolves_effect() { format!("{} to resolve {}", n.describe(), pct(o.effect)) } else { n.describe() });
    let analysis = match &v.basis {
        Basis::Within { .. } | Basis::None { .. } => String::new(),
        b => b.analysis(),
    };
    let join = |a: String, b: String| match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a,
        _ => format!("{a}; {b}"),
    };
    match (&v.basis, v.word) {
        (Basis::None { reason }, _) => match size() {
            Some(s) => format!("{reason}; {s}"),
            None => reason.clone(),
        },
        (_, Word::NoDifference) => join(format!("tested: interval contains 1{}", size().map(|s| format!("; {s}")).unwrap_or_default()), analysis),
        _ => analysis,
    }
}

/// A share-beyond-threshold row's cells: A and B as percentages, B − A in the ratio's column.
struct ShareRow {
    word: &'static str,
    stat: String,
    a: String,
    b: String,
    diff: String,
    interval: String,
    note: String,
}

fn share_row(sh: &ShareVerdict, unit: LatencyUnit) -> ShareRow {
    let pc = |x: f64| format!("{:.3}%", x * 100.0);
    let signed = |x: f64| format!("{}{:.3}%", if x >= 0.0 { "+" } else { "" }, x * 100.0);
    let word = if sh.interval.is_none() { "no interval" } else { sh.word.as_str() };
    let mut note = format!("share of samples beyond {} {}; B − A with Newcombe's interval", latency(sh.threshold as f64, unit), unit.symbol());
    if sh.pooled_runs {
        note.push_str("; runs pooled: cannot see run-to-run variance");
    }
    ShareRow {
        word,
        stat: format!("share>{}{}", latency(sh.threshold as f64, unit), unit.symbol()),
        a: pc(sh.a.fraction()),
        b: pc(sh.b.fraction()),
        diff: signed(sh.difference),
        interval: sh.interval.map(|(lo, hi)| format!("{} – {}", signed(lo), signed(hi))).unwrap_or_else(|| "-".into()),
        note,
    }
}

/// What the whole-distribution row says: its word and its note.
fn ks_row(c: &ClassVerdicts, o: &VerdictOptions, unit: LatencyUnit) -> (&'static str, String) {
    match c.ks {
        Some(k) => {
            let word = if k.differs(o.confidence.level()) { "distributions differ" } else { "no difference resolvable" };
            let test = if k.d > 0.0 {
                format!("KS test: D = {:.4} at {} {}, p = {:.3}", k.d, latency(k.at as f64, unit), unit.symbol(), k.p_value)
            } else {
                "KS test: D = 0, identical distributions".to_string()
            };
            (word, format!("{test} ({})", c.ks_note))
        }
        None => ("not tested", c.ks_note.clone()),
    }
}

/// The terminal table.
pub fn verdict_text(v: &Verdicts, o: &VerdictOptions, unit: LatencyUnit) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nVerdicts at {} confidence (B/A interval; one run per side: bootstrap of the ratio from the histograms, mean: t; with repetitions: Welch's t over the runs; paired A B A B: t over the per-pair ratios):",
        pct(o.confidence.level())
    );
    // VERDICT CONFIG CLASS STAT left-aligned, numbers right-aligned; the note follows unpadded.
    let mut grid = Vec::new();
    let mut notes = Vec::new();
    for c in &v.classes {
        for s in &c.stats {
            grid.push(vec![
                word_text(&c.class, s).to_string(),
                escape_control(&c.config),
                escape_control(&c.class),
                s.stat.clone(),
                latency(s.a, unit),
                latency(s.b, unit),
                format!("{:.3}", s.ratio),
                interval_text(s),
            ]);
            notes.push(note(s, o));
        }
        for sh in &c.shares {
            let r = share_row(sh, unit);
            grid.push(vec![r.word.into(), escape_control(&c.config), escape_control(&c.class), r.stat, r.a, r.b, r.diff, r.interval]);
            notes.push(r.note);
        }
        let (word, ks) = ks_row(c, o, unit);
        grid.push(vec![word.into(), escape_control(&c.config), escape_control(&c.class), "distribution".into(), String::new(), String::new(), String::new(), String::new()]);
        notes.push(ks);
    }
    let a_col = format!("A ({})", unit.symbol());
    let b_col = format!("B ({})", unit.symbol());
    let head = ["VERDICT", "CONFIG", "CLASS", "STAT", &a_col, &b_col, "B/A", "INTERVAL"].map(String::from);
    let rendered = render_grid(&head, &grid, 4);
    let mut lines = rendered.lines();
    for l in lines.by_ref().take(2) {
        let _ = writeln!(out, "{l}");
    }
    let width = rendered.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    for (l, n) in lines.zip(&notes) {
        if n.is_empty() {
            let _ = writeln!(out, "{l}");
        } else {
            let pad = width.saturating_sub(l.chars().count());
            let _ = writeln!(out, "{l}{}  {}", " ".repeat(pad), escape_control(n));
        }
    }
    for m in &v.mismatches {
        let _ = writeln!(out, "not paired alike: {}", escape_control(m));
    }
    out.push_str(&design_notes(v));
    out
}

/// One line per design that limits what the verdicts can see: one run per side (blind to
/// run-to-run variance), and which classes were analysed as paired runs.
fn design_notes(v: &Verdicts) -> String {
    let mut out = String::new();
    const LISTED: usize = 20;
    let single: Vec<String> = v.classes.iter().filter(|c| c.runs_a == 1 && c.runs_b == 1).map(|c| format!("{} {}", clean_cell(&c.config), clean_cell(&c.class))).collect();
    if !single.is_empty() {
        let more = if single.len() > LISTED { format!(" and {} more", single.len() - LISTED) } else { String::new() };
        let _ = writeln!(
            out,
            "note: one run per side ({}{more}): these verdicts cannot see run-to-run variance — a host's or seed's offset between runs reads as a difference; repeat the runs (`run --repeat N`, `sim --seeds N`, `irqlab-lab ab --repeat N`)",
            single[..single.len().min(LISTED)].join(", ")
        );
    }
    for c in v.classes.iter().filter(|c| c.paired.is_some()).take(LISTED) {
        let how = c.paired.as_deref().unwrap_or_default();
        let _ = writeln!(out, "note: {} {}: paired analysis over {} A B pairs ({})", clean_cell(&c.config), clean_cell(&c.class), c.runs_a, escape_control(how));
    }
    out
}

/// The verdict section of an HTML report of exactly two results (A = the first, B = the second):
/// one line per statistic — B/A, interval, word, note — and the KS test. `None` when nothing
/// pairs. Default confidence and effect (95 %, 5 %).
pub fn verdict_html(a: &results::RunResult, b: &results::RunResult, unit: LatencyUnit, share_above: &[u64]) -> Option<(String, String)> {
    use crate::svg::esc;
    let o = VerdictOptions { confidence: Confidence::default(), effect: 0.05 };
    let v = results::stats::pairs::verdicts_beyond(a, b, &results::compare(a, b), o.confidence, false, share_above).ok()?.recommend(o.effect, o.confidence);
    if v.classes.is_empty() {
        return None;
    }
    let mut h = String::from("<p>Second result (B) against the first (A), as <code>irqlab compare</code> judges it at 95 % confidence: B/A with its interval and one word per statistic.</p><table class=\"verdicts\"><tr><th>CONFIG</th><th>CLASS</th><th>STAT</th><th>A</th><th>B</th><th>B/A</th><th>95 % INTERVAL</th><th>VERDICT</th><th>NOTE</th></tr>");
    for c in &v.classes {
        for s in &c.stats {
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{} {u}</td><td class=\"num\">{} {u}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td><b>{}</b></td><td>{}</td></tr>",
                esc(&c.config), esc(&c.class), s.stat, latency(s.a, unit), latency(s.b, unit), s.ratio, esc(&interval_text(s)), word_text(&c.class, s), esc(&note(s, &o)), u = unit.symbol()
            ));
        }
        for sh in &c.shares {
            let r = share_row(sh, unit);
            h.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><b>{}</b></td><td>{}</td></tr>",
                esc(&c.config), esc(&c.class), esc(&r.stat), r.a, r.b, r.diff, esc(&r.interval), r.word, esc(&r.note)
            ));
        }
        let (word, ks) = ks_row(c, &o, unit);
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>distribution</td><td></td><td></td><td></td><td></td><td><b>{word}</b></td><td>{}</td></tr>",
            esc(&c.config),
            esc(&c.class),
            esc(&ks)
        ));
    }
    h.push_str("</table>");
    for m in &v.mismatches {
        h.push_str(&format!("<p>Not paired alike: {}</p>", esc(m)));
    }
    for line in design_notes(&v).lines() {
        h.push_str(&format!("<p>{}</p>", esc(line.trim_start_matches("note: "))));
    }
    Some(("verdicts, B against A".into(), h))
}

/// The same as JSON (latencies in ns).
pub fn verdict_json(v: &Verdicts, o: &VerdictOptions) -> serde_json::Value {
    let classes: Vec<_> = v
        .classes
        .iter()
        .map(|c| {
            let stats: Vec<_> = c
                .stats
                .iter()
                .map(|s| {
                    json!({"stat": s.stat, "a_ns": s.a, "b_ns": s.b, "ratio": s.ratio,
                           "interval": s.interval.map(|(lo, hi)| vec![lo, hi]), "verdict": word_text(&c.class, s), "analysis": s.basis.analysis(), "note": note(s, o)})
                })
                .collect();
            json!({"config": c.config, "class": c.class, "runs_a": c.runs_a, "runs_b": c.runs_b, "paired": c.paired, "stats": stats, "shares": c.shares,
                   "ks": c.ks.map(|k| json!({"d": k.d, "p_value": k.p_value, "at_ns": k.at, "differs": k.differs(o.confidence.level())})), "ks_note": c.ks_note})
        })
        .collect();
    json!({"confidence": o.confidence.level(), "effect": o.effect, "classes": classes, "mismatches": v.mismatches})
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::stats::pairs::verdicts;
    use results::{compare, ConfigResult, LatencyRecorder, ResultKind, RunMeta, RunResult};

    fn run(base: u64) -> RunResult {
        let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
        let mut rec = LatencyRecorder::new(0);
        (0..3000u64).for_each(|i| rec.record(base + (i * 7919) % 3000));
        let mut c = ConfigResult::new("x");
        c.classes.insert("timer".into(), rec.finish());
        r.configs.push(c);
        r
    }

    #[test]
    fn words_intervals_and_notes_are_shown() {
        let (a, b) = (run(10_000), run(13_000));
        let o = VerdictOptions { confidence: Confidence::default(), effect: 0.05 };
        let v = verdicts(&a, &b, &compare(&a, &b), o.confidence).unwrap().recommend(o.effect, o.confidence);
        let t = verdict_text(&v, &o, LatencyUnit::Us);
        assert!(t.contains("Verdicts at 95% confidence"), "{t}");
        let p50 = t.lines().find(|l| l.contains(" p50 ")).unwrap();
        assert!(p50.contains("slower") && p50.contains(" – "), "{p50}");
        // no interval is not "no difference": the word says so, and the size is a minimum
        let p9999 = t.lines().find(|l| l.contains(" p99.99 ")).unwrap();
        assert!(p9999.starts_with("no interval") && p9999.contains("too few samples"), "{p9999}");
        assert!(p9999.contains("at least 36887 samples per run for any interval") && !p9999.contains("to resolve"), "{p9999}");
        assert!(t.lines().find(|l| l.contains(" max ")).unwrap().starts_with("no interval"), "{t}");
        assert!(t.contains("distributions differ") && t.contains("KS test: D =") && t.contains("(one run per side: cannot see run-to-run variance)"), "{t}");
        assert!(t.contains("note: one run per side (x timer): these verdicts cannot see run-to-run variance"), "{t}");
        assert!(t.contains("bootstrap of the ratio"), "{t}");
        let same = verdicts(&a, &a, &compare(&a, &a), o.confidence).unwrap().recommend(o.effect, o.confidence);
        let t = verdict_text(&same, &o, LatencyUnit::Us);
        let p50 = t.lines().find(|l| l.contains(" p50 ")).unwrap();
        assert!(p50.starts_with("no difference resolvable") && p50.contains("tested: interval contains 1; ~") && p50.contains("samples per run to resolve 5%"), "{p50}");
        let (_, h) = verdict_html(&a, &b, LatencyUnit::Us, &[]).unwrap();
        assert!(h.contains("<b>slower</b>") && h.contains("distributions differ"), "{h}");
        assert!(!h.contains("share&gt;") && !h.contains("share>"), "no share row unless asked: {h}");
        assert!(h.contains("cannot see run-to-run variance"), "{h}");
        let j = verdict_json(&v, &o);
        assert_eq!(j["classes"][0]["stats"][7]["verdict"], "no interval");
        assert_eq!(j["classes"][0]["ks_note"], "one run per side: cannot see run-to-run variance");
        assert_eq!(j["classes"][0]["stats"][2]["stat"], "p50");
        assert_eq!(j["classes"][0]["stats"][2]["verdict"], "slower");
    }

    fn repeated(base: u64, runs: u64) -> RunResult {
        let all: Vec<ConfigResult> = (0..runs)
            .map(|k| {
                let mut rec = LatencyRecorder::new(0);
                (0..3000u64).for_each(|i| rec.record(base + k * 40 + (i * 7919) % 3000));
                let mut c = ConfigResult::new("x");
                c.classes.insert("timer".into(), rec.finish());
                c
            })
            .collect();
        let mut r = run(base);
        let mut first = all[0].clone();
        first.repetitions = Some(results::Repetitions::over(&all.iter().collect::<Vec<_>>()).unwrap());
        r.configs = vec![first];
        r
    }

    #[test]
    fn repetitions_name_their_analysis_and_get_no_pooled_ks() {
        let (a, b) = (repeated(10_000, 4), repeated(10_000, 4));
        let o = VerdictOptions { confidence: Confidence::default(), effect: 0.05 };
        let v = verdicts(&a, &b, &compare(&a, &b), o.confidence).unwrap().recommend(o.effect, o.confidence);
        let t = verdict_text(&v, &o, LatencyUnit::Us);
        let dist = t.lines().find(|l| l.contains(" distribution ")).unwrap();
        assert!(dist.starts_with("not tested") && dist.contains("KS over pooled runs ignores run-to-run variance"), "{dist}");
        assert!(!t.contains("distributions differ") && !t.contains("cannot see run-to-run variance"), "{t}");
        let p50 = t.lines().find(|l| l.contains(" p50 ")).unwrap();
        assert!(p50.contains("Welch over 4 + 4 runs") && p50.contains("runs per side to resolve 5%"), "{p50}");
        // one run against four: a prediction interval, said so
        let single = run(10_000);
        let v = verdicts(&single, &b, &compare(&single, &b), o.confidence).unwrap().recommend(o.effect, o.confidence);
        let t = verdict_text(&v, &o, LatencyUnit::Us);
        assert!(t.lines().find(|l| l.contains(" p50 ")).unwrap().contains("1 run against 4, assuming equal run-to-run spread"), "{t}");
    }

    /// Issue 45 item 5: the share beyond a threshold in the table, the JSON and the HTML.
    #[test]
    fn shares_beyond_a_threshold_are_shown_where_asked() {
        let (a, b) = (run(10_000), run(11_000));
        let o = VerdictOptions { confidence: Confidence::default(), effect: 0.05 };
        // 12.5 µs: A has ~500 of 3,000 beyond it, B ~1,500 (read to the histogram's buckets)
        let v = results::stats::pairs::verdicts_beyond(&a, &b, &compare(&a, &b), o.confidence, false, &[12_500]).unwrap();
        let t = verdict_text(&v, &o, LatencyUnit::Us);
        let row = t.lines().find(|l| l.contains("share>12.50µs")).unwrap_or_else(|| panic!("{t}"));
        assert!(row.starts_with("slower") && row.contains("+33."), "{row}");
        assert!(row.contains("Newcombe"), "{row}");
        let j = verdict_json(&v, &o);
        let beyond = j["classes"][0]["shares"][0]["b"]["beyond"].as_u64().unwrap();
        assert!((1450..=1550).contains(&beyond), "{j}");
        assert_eq!(j["classes"][0]["shares"][0]["word"], "slower", "{j}");
        let (_, h) = verdict_html(&a, &b, LatencyUnit::Us, &[12_500]).unwrap();
        assert!(h.contains("share&gt;12.50µs") && h.contains("Newcombe"), "{h}");
    }
}
