//! The gate as a Markdown step summary (issue 46 item 2): what `$GITHUB_STEP_SUMMARY` shows on a
//! workflow run's page (GitHub renders the file's Markdown; GitLab and others show it as an
//! artifact). The answer first, as a heading; then one table row per gated check with A, B, B/A,
//! the interval at the gate's level and the outcome; then what was not checked and why. The
//! callers append it to the file, as GitHub expects of each step. Names from the results are
//! escaped, so a configuration called `a|b` cannot break the table.
use super::{Answer, CheckResult, CompareDoc};

/// CommonMark backslash-escapes the ASCII punctuation that could start markup; line breaks and
/// other control characters are made visible instead of ending the row.
pub fn md(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in results::escape_control(s).chars() {
        if "\\`*_{}[]<>()#+!|~&".contains(ch) {
            o.push('\\');
        }
        o.push(ch);
    }
    o
}

fn headline(doc: &CompareDoc) -> String {
    let n = |f: fn(&CheckResult) -> bool| doc.checks.iter().filter(|c| f(&c.result)).count();
    match doc.answer() {
        Answer::NothingPaired => "## ⚠️ irqlab gate: no verdict — no configuration of A pairs with one of B".into(),
        Answer::Pass => format!("## ✅ irqlab gate: B is not resolvably slower on {} ({} checks)", md(&doc.gated()), n(|r| matches!(r, CheckResult::Passed { .. }))),
        Answer::Slower => format!(
            "## ❌ irqlab gate: B is resolvably slower ({} of {} checks)",
            n(|r| matches!(r, CheckResult::Tripped { .. })),
            n(|r| !matches!(r, CheckResult::CannotCheck { .. }))
        ),
        Answer::Unchecked => {
            format!("## ⚠️ irqlab gate: no verdict — {} thing(s) it covers could not be checked", n(|r| matches!(r, CheckResult::CannotCheck { blocks: true, .. })))
        }
    }
}

/// The summary of `doc`, ending with a blank line so that appended summaries stay apart.
pub fn render(doc: &CompareDoc) -> String {
    let mut s = headline(doc) + "\n\n";
    let asked = doc.fail_on.as_ref().map_or("no `--fail-on` (nothing fails the job)".to_string(), |f| format!("`--fail-on {f}`"));
    s += &format!("B {} against A {}; {asked}; confidence {}", md(&doc.b_name), md(&doc.a_name), doc.opts.confidence.level());
    if let Some(g) = &doc.gate {
        s += &format!(", each of the {} one-sided checks at {:.4} (Bonferroni)", g.checks, g.level);
    }
    s += ".\n\n";
    let u = doc.unit.symbol();
    let rows: Vec<_> = doc.checks.iter().filter(|c| !matches!(c.result, CheckResult::CannotCheck { .. })).collect();
    if !rows.is_empty() {
        s += &format!("| configuration | class | statistic | A ({u}) | B ({u}) | B/A | interval | gate |\n|---|---|---|---:|---:|---:|---|---|\n");
        for c in rows {
            let v = doc
                .verdicts
                .classes
                .iter()
                .find(|x| Some(&x.config) == c.config.as_ref() && Some(&x.class) == c.class.as_ref())
                .and_then(|x| c.stat.as_deref().and_then(|st| x.get(st)));
            let (a, b) = v.map_or(("-".into(), "-".into()), |v| (format!("{:.3}", doc.unit.from_ns(v.a)), format!("{:.3}", doc.unit.from_ns(v.b))));
            let (ratio, (lo, hi), word) = match &c.result {
                CheckResult::Tripped { estimate: ratio, interval } => (*ratio, *interval, "**slower**"),
                CheckResult::Passed { estimate: ratio, interval, table_slower: true } => (*ratio, *interval, "passed (slower at the plain level only)"),
                CheckResult::Passed { estimate: ratio, interval, .. } => (*ratio, *interval, "passed"),
                CheckResult::CannotCheck { .. } => continue,
            };
            let name = |o: &Option<String>| md(o.as_deref().unwrap_or(""));
            s += &format!("| {} | {} | {} | {a} | {b} | {ratio:.3} | {lo:.3} – {hi:.3} | {word} |\n", name(&c.config), name(&c.class), name(&c.stat));
        }
        s += "\n";
    }
    let not: Vec<_> = doc
        .checks
        .iter()
        .filter_map(|c| match &c.result {
            CheckResult::CannotCheck { reason, blocks } => Some((c.label(), reason, *blocks)),
            _ => None,
        })
        .collect();
    if !not.is_empty() {
        s += "### Not checked\n\n";
        for (label, reason, blocks) in not {
            let what = if label.is_empty() { String::new() } else { format!("{}: ", md(&label)) };
            s += &format!("- {what}{}{}\n", md(reason), if blocks { " — **blocks the gate**" } else { "" });
        }
        s += "\n";
    }
    s
}
