//! The answer block, in words, in the terminal and in HTML: what `irqlab sim` and `irqlab report`
//! open with (issue 28). The numbers come from [`crate::answer`]; this module only says them.
//!
//! One sentence per question says which way each statistic moved, by how much (absolute and
//! relative, the range over groups), and in how many groups; the table under it gives each
//! group baseline → variant. A change with one direction in every pair is said with its amount,
//! however small; one that goes both ways and stays below [`UNCHANGED`] in every pair is said as
//! "within 1 %" (without intervals, issue 25, a direction there would be noise).
use std::fmt::Write as _;

use results::{LatencyUnit, RunResult};

use crate::answer::{answer, short, Answer, Change, Quantity};
use crate::format::{group, latency, scale};
use crate::svg::esc;
use crate::table::render_grid;

/// An HTML answer table longer than this starts folded under its sentence.
pub const FOLD_ANSWER_ROWS: usize = 24;

/// A relative change whose magnitude stays below this in every group is "within 1 %".
pub const UNCHANGED: f64 = 0.01;

/// Decimals that keep about four significant digits of `m`.
fn decimals_for(m: f64) -> usize {
    let a = m.abs();
    if a == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        ((-a.log10()).floor() as usize + 3).min(9)
    }
}

/// A value of a change's quantity with its unit: "7.74 µs", "182,000 IOPS". Figures keep the
/// resolution of the larger of baseline and variant, so a change reads at the same precision
/// as the values it is the difference of.
fn value(c: &Change, v: f64, unit: LatencyUnit) -> String {
    match &c.quantity {
        Quantity::Latency => format!("{} {}", latency(v, unit), unit.symbol()),
        Quantity::Figure(u) => {
            let m = c.base.abs().max(c.variant.abs());
            let (f, name) = scale(m, u);
            let s = group(v * f, decimals_for(m * f));
            let s = if s.trim_start_matches('-').chars().all(|ch| ch == '0' || ch == '.' || ch == ',') { "0".into() } else { s };
            if name.is_empty() {
                s
            } else {
                format!("{s} {name}")
            }
        }
    }
}

/// A signed change: "+0.39 µs", "-1,200 IOPS".
fn signed(c: &Change, v: f64, unit: LatencyUnit) -> String {
    let s = value(c, v, unit);
    let zero = s.split(' ').next().unwrap_or("").chars().all(|ch| "0.,-".contains(ch));
    if v > 0.0 && !zero {
        format!("+{s}")
    } else {
        s
    }
}

fn pct(r: f64) -> String {
    format!("{}{} %", if r > 0.0 { "+" } else { "" }, group(r * 100.0, 1))
}

/// What the statistic is called in a sentence: "mean io latency", "iops".
fn stat_words(c: &Change) -> String {
    match (&c.class, &c.quantity) {
        (Some(class), Quantity::Latency) => format!("{} {class} latency", c.stat),
        _ => c.stat.clone(),
    }
}

/// One clause about one statistic over every pair of one variant.
fn clause(changes: &[&Change], unit: LatencyUnit) -> String {
    let first = changes[0];
    let abs: Vec<f64> = changes.iter().flat_map(|c| c.pair_abs.iter().copied()).collect();
    let rels: Vec<f64> = changes.iter().flat_map(|c| c.pair_rel.iter().copied()).collect();
    let lo_hi = |v: &[f64]| (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let ((amin, amax), (rmin, rmax)) = (lo_hi(&abs), lo_hi(&rels));
    let n = abs.len();
    let name = stat_words(first);
    let num = |v: f64| value(first, v, unit);
    let mag = |a: f64, b: f64| {
        let (a, b) = (a.abs().min(b.abs()), a.abs().max(b.abs()));
        if num(a) == num(b) {
            num(a)
        } else {
            format!("{}–{}", num(a).split(' ').next().unwrap_or(""), num(b))
        }
    };
    let rmag = |a: f64, b: f64| {
        let (a, b) = ((a * 100.0).abs().min((b * 100.0).abs()), (a * 100.0).abs().max((b * 100.0).abs()));
        if group(a, 1) == group(b, 1) {
            format!("{} %", group(a, 1))
        } else {
            format!("{}–{} %", group(a, 1), group(b, 1))
        }
    };
    let rel_part = if rels.is_empty() { String::new() } else { format!(" ({})", rmag(rmin, rmax)) };
    // One direction in every pair: say it with the amount, however small (0.38 µs on 540 µs
    // is the answer to "what does direct injection buy per I/O").
    if amax < 0.0 {
        format!("lowers {name} by {}{rel_part}", mag(amin, amax))
    } else if amin > 0.0 {
        format!("raises {name} by {}{rel_part}", mag(amin, amax))
    } else if !rels.is_empty() && rels.len() == n && rels.iter().all(|r| r.abs() < UNCHANGED) {
        format!("leaves {name} within 1 % ({} to {})", signed(first, amin, unit), signed(first, amax, unit))
    } else {
        let down = abs.iter().filter(|a| **a < 0.0).count();
        let up = abs.iter().filter(|a| **a > 0.0).count();
        format!("moves {name} both ways (lower in {down}, higher in {up} of {n} pairs; {} to {})", signed(first, amin, unit), signed(first, amax, unit))
    }
}

/// The plain sentence of an answer.
pub fn sentence(a: &Answer, unit: LatencyUnit) -> String {
    let q = &a.question;
    let mut parts = Vec::new();
    for v in &q.variants {
        let groups: Vec<_> = a.groups.iter().filter(|g| &g.variant == v).collect();
        if groups.is_empty() {
            parts.push(format!("{} {} → {v}: no configuration pairs (none differs from a baseline only in `{}`)", short(&q.param), q.baseline, q.param));
            continue;
        }
        // Statistics in the order the question lists them, per class.
        let mut keys: Vec<(Option<String>, String)> = Vec::new();
        for g in &groups {
            for c in &g.changes {
                let k = (c.class.clone(), c.stat.clone());
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let clauses: Vec<String> = keys
            .iter()
            .map(|k| {
                let cs: Vec<&Change> = groups.iter().filter_map(|g| g.changes.iter().find(|c| (c.class.clone(), c.stat.clone()) == *k)).collect();
                clause(&cs, unit)
            })
            .collect();
        let pairs: usize = groups.iter().map(|g| g.pairs.len()).sum();
        let scope = match (groups.len(), pairs) {
            (1, 1) => String::new(),
            (1, p) => format!(" (median over {p} pairs)"),
            (n, p) if p == n => format!(" in {n} groups"),
            (n, p) => format!(" in {n} groups ({p} pairs)"),
        };
        parts.push(format!("{} {} → {v} {}{scope}", short(&q.param), q.baseline, clauses.join(", "),));
    }
    let judged: Vec<bool> = a.groups.iter().flat_map(|g| g.changes.iter()).filter_map(|c| c.uncertainty.resolved()).collect();
    let certainty = if judged.is_empty() {
        "no interval for these statistics (figures, or classes without a stored distribution)".to_string()
    } else {
        let resolved = judged.iter().filter(|r| **r).count();
        let folded_rows = a.groups.iter().any(|g| g.changes.iter().any(|c| matches!(c.uncertainty, crate::answer::Uncertainty::Folded { .. })));
        let others = match (resolved < judged.len(), folded_rows) {
            (false, _) => "",
            (true, false) => " (the others: no difference resolvable)",
            (true, true) => " (the others: no difference resolvable, or folded pairs that do not all agree)",
        };
        format!("{resolved} of {} changes resolvable at {:.0} % confidence{others}", judged.len(), crate::answer::ANSWER_CONFIDENCE * 100.0)
    };
    format!("{}; {certainty}.", parts.join("; "))
}

fn table_rows(a: &Answer, unit: LatencyUnit) -> (Vec<String>, Vec<Vec<String>>) {
    let q = &a.question;
    let many_variants = q.variants.len() > 1;
    let folded = !a.folded.is_empty();
    let mut head = vec!["GROUP".to_string()];
    if many_variants {
        head.push("VARIANT".into());
    }
    head.extend([
        "STAT".into(),
        format!("{} = {}", short(&q.param), q.baseline),
        "variant".into(),
        "CHANGE".into(),
        "REL".into(),
        format!("VERDICT [ratio, {:.0} %]", crate::answer::ANSWER_CONFIDENCE * 100.0),
    ]);
    if let (false, Some(v)) = (many_variants, q.variants.first()) {
        head[3] = format!("{} = {}", short(&q.param), v);
    }
    if folded {
        let n = head.len();
        head[n - 3] = "CHANGE (median pair)".into();
        head.push("RANGE OVER PAIRS (n)".into());
    }
    let mut rows = Vec::new();
    for g in &a.groups {
        for (i, c) in g.changes.iter().enumerate() {
            let mut row = vec![if i == 0 { g.label() } else { String::new() }];
            if many_variants {
                row.push(if i == 0 { g.variant.clone() } else { String::new() });
            }
            let stat = match &c.class {
                Some(class) => format!("{class} {}", c.stat),
                None => c.stat.clone(),
            };
            row.extend([stat, value(c, c.base, unit), value(c, c.variant, unit), signed(c, c.abs, unit), c.rel.map(pct).unwrap_or_else(|| "–".into()), c.uncertainty.cell()]);
            if folded {
                row.push(match c.abs_range {
                    Some((lo, hi)) => format!("{} … {} ({})", signed(c, lo, unit), signed(c, hi, unit), c.pairs),
                    None => format!("({})", c.pairs),
                });
            }
            rows.push(row);
        }
    }
    (head, rows)
}

/// Which parameters name the groups and which are folded, in words.
fn scope_words(a: &Answer) -> String {
    let keys = |v: &[String]| v.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    let mut s = format!("`{}`: {} → {}", a.question.param, a.question.baseline, a.question.variants.join(" / "));
    s.push_str(&format!("; pairs differ only in `{}`", a.question.param));
    if !a.group_keys.is_empty() {
        s.push_str(&format!("; groups: {}", keys(&a.group_keys)));
    }
    if !a.folded.is_empty() {
        s.push_str(&format!("; folded within each group (medians over its pairs): {}", keys(&a.folded)));
    }
    s
}

/// The answer block of every question of `r`, for the terminal ("" when it asks none).
pub fn answers_text(r: &RunResult, unit: LatencyUnit) -> String {
    let mut s = String::new();
    for (i, q) in r.questions.iter().enumerate() {
        let _ = writeln!(s, "QUESTION {}: {}", i + 1, q.title);
        match answer(r, q) {
            Ok(a) => s.push_str(&answer_text(&a, unit)),
            Err(e) => {
                let _ = writeln!(s, "  cannot answer from this result: {e}");
            }
        }
        s.push('\n');
    }
    s
}

/// One answer for the terminal: the sentence, the scope, the table.
pub fn answer_text(a: &Answer, unit: LatencyUnit) -> String {
    let mut s = format!("ANSWER: {}\n  ({})\n\n", sentence(a, unit), scope_words(a));
    let (head, rows) = table_rows(a, unit);
    if !rows.is_empty() {
        let left = if a.question.variants.len() > 1 { 3 } else { 2 };
        for line in render_grid(&head, &rows, left).lines() {
            let _ = writeln!(s, "  {line}");
        }
    }
    if !a.unpaired.is_empty() {
        let _ = writeln!(s, "  not paired (no configuration differs from them only in `{}`): {}", a.question.param, a.unpaired.join(", "));
    }
    s
}

/// Escaped text with `backticked` spans as <code>.
fn code_ticks(s: &str) -> String {
    s.split('`').enumerate().map(|(i, part)| if i % 2 == 1 { format!("<code>{}</code>", esc(part)) } else { esc(part) }).collect()
}

/// The answer section of the HTML report for one run ("" when it asks no question).
pub fn answers_html(r: &RunResult, unit: LatencyUnit) -> String {
    let mut h = String::new();
    for (i, q) in r.questions.iter().enumerate() {
        let _ = write!(h, "<h3>Question {}: {}</h3>", i + 1, esc(&q.title));
        let a = match answer(r, q) {
            Ok(a) => a,
            Err(e) => {
                let _ = write!(h, "<p class=\"error\">Cannot answer from this result: {}</p>", esc(&e.to_string()));
                continue;
            }
        };
        let _ = write!(h, "<p class=\"answer\"><strong>Answer:</strong> {}</p><p class=\"caption\">{}</p>", code_ticks(&sentence(&a, unit)), code_ticks(&scope_words(&a)));
        let (head, rows) = table_rows(&a, unit);
        // A long table (many groups × statistics) starts folded under its sentence, so the page
        // opens with the answer and its contents on the first screen.
        let fold = rows.len() > FOLD_ANSWER_ROWS;
        if fold {
            let _ = write!(h, "<details><summary>The table: {} groups, {} rows</summary>", a.groups.len(), rows.len());
        }
        h.push_str("<table class=\"answer\"><tr>");
        for c in &head {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr>");
        let text_cols = if q.variants.len() > 1 { 3 } else { 2 };
        for row in &rows {
            h.push_str("<tr>");
            for (j, c) in row.iter().enumerate() {
                let class = if j >= text_cols { " class=\"num\"" } else { "" };
                let _ = write!(h, "<td{class}>{}</td>", esc(c));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
        if fold {
            h.push_str("</details>");
        }
        if !a.unpaired.is_empty() {
            let _ = write!(h, "<p class=\"caption\">Not paired (no configuration differs from them only in <code>{}</code>): {}</p>", esc(&q.param), esc(&a.unpaired.join(", ")));
        }
        let pairs: usize = a.groups.iter().map(|g| g.pairs.len()).sum();
        let _ = write!(
            h,
            "<details><summary>The {pairs} pairs compared</summary><table><tr><th>group</th><th>{}</th><th>variant</th></tr>",
            esc(&format!("{} = {}", short(&q.param), q.baseline))
        );
        for g in &a.groups {
            for (b, v) in &g.pairs {
                let _ = write!(h, "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", esc(&g.label()), esc(b), esc(v));
            }
        }
        h.push_str("</table></details>");
    }
    h
}
