//! The gate as JUnit XML (issue 46 item 1), the format CI systems show test outcomes from
//! (GitLab's merge-request test report, Jenkins' JUnit plugin, GitHub's test reporters): one
//! `<testcase>` per gated check, named `STAT` in class `irqlab.gate.CONFIG.CLASS`:
//! - *tripped* (B resolvably slower at the gate's level): `<failure type="slower">`;
//! - *passed*: no child but the output;
//! - *cannot check*: `<skipped>` with the reason when it does not block the gate (a p99.99 of
//!   5,000 samples), `<error type="unchecked">` when it does (exit 5: a gate that could not do its
//!   job must not look green);
//! - every checked case's `<system-out>` holds B/A, its interval at the gate's level and A and B.
//!
//! The file validates against `crates/report/schema/junit.xsd` (the element and attribute set
//! of the JUnit format as Jenkins and GitLab read it; see that file for its sources). It carries
//! no time stamp or host name, so the same comparison gives the same bytes. Whether a file at
//! `--junit` is irqlab's (and may be replaced without `--force`) is decided by irqlab's sidecar
//! record (`results::owned`), as for every output file, never by the file's text.
use super::{Check, CheckResult, CompareDoc};

/// Text fit for XML 1.0 content and attribute values: markup escaped, and the control
/// characters XML 1.0 cannot carry at all (C0 but tab, newline, CR) written as `\u{…}`.
pub fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => o.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

/// The output line of a checked case: B/A, its interval, and A and B in the document's unit.
fn output(doc: Option<&CompareDoc>, c: &Check, ratio: f64, interval: (f64, f64)) -> String {
    let sym = c.scale.symbol();
    let Some(doc) = doc else { return format!("{sym} {ratio:.3}, interval {:.3} – {:.3}", interval.0, interval.1) };
    let level = doc.gate.as_ref().map_or(0.0, |g| g.level);
    let mut s = format!("{sym} {ratio:.3}, interval {:.3} – {:.3} at {level:.4} (two-sided; the gate checks its lower end)", interval.0, interval.1);
    let v =
        doc.verdicts.classes.iter().find(|x| Some(&x.config) == c.config.as_ref() && Some(&x.class) == c.class.as_ref()).and_then(|x| c.stat.as_deref().and_then(|st| x.get(st)));
    if let Some(v) = v.filter(|_| c.scale == super::Scale::Ratio) {
        let u = doc.unit;
        s += &format!("; A {:.3} {}, B {:.3} {}", u.from_ns(v.a), u.symbol(), u.from_ns(v.b), u.symbol());
    }
    s
}

/// One suite of a JUnit file: a bench's gate, or a bench that gave no comparison at all.
pub enum Suite<'a> {
    Gate {
        bench: String,
        doc: &'a CompareDoc,
    },
    /// A side failed before anything could be compared (`ab`): one error case saying why.
    NotCompared {
        bench: String,
        why: String,
    },
}

/// The JUnit XML of `doc`'s gate: one suite.
pub fn render(doc: &CompareDoc) -> String {
    render_suites(&[Suite::Gate { bench: String::new(), doc }])
}

/// Several gates in one file (`ab` with several benches): one `<testsuite>` each, named for its
/// bench, with the totals on `<testsuites>`.
pub fn render_suites(suites: &[Suite]) -> String {
    let not_compared: Vec<Check> = suites
        .iter()
        .filter_map(|s| match s {
            Suite::NotCompared { why, .. } => {
                Some(Check { config: None, class: None, stat: None, scale: super::Scale::Ratio, result: CheckResult::CannotCheck { reason: why.clone(), blocks: true } })
            }
            Suite::Gate { .. } => None,
        })
        .collect();
    let all: Vec<&Check> = suites
        .iter()
        .flat_map(|s| match s {
            Suite::Gate { doc, .. } => doc.checks.iter().collect::<Vec<_>>(),
            Suite::NotCompared { .. } => Vec::new(),
        })
        .chain(not_compared.iter())
        .collect();
    let mut x = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"irqlab gate\" {}>\n", counts(&all));
    let mut failed = not_compared.iter();
    for s in suites {
        x += &match s {
            Suite::Gate { bench, doc } => suite(bench, doc),
            Suite::NotCompared { bench, .. } => {
                let c = failed.next().expect("one check per suite not compared");
                let mut t = format!("  <testsuite name=\"{}\" {}>\n", xml(&format!("{bench}: not compared")), counts(&[c]));
                t += &case(None, c);
                t + "  </testsuite>\n"
            }
        };
    }
    x += "</testsuites>\n";
    x
}

/// `tests=… failures=… errors=… skipped=… time="0"` of some checks.
fn counts(checks: &[&Check]) -> String {
    let n = |f: fn(&CheckResult) -> bool| checks.iter().filter(|c| f(&c.result)).count();
    format!(
        "tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"0\"",
        checks.len(),
        n(|r| matches!(r, CheckResult::Tripped { .. })),
        n(|r| matches!(r, CheckResult::CannotCheck { blocks: true, .. })),
        n(|r| matches!(r, CheckResult::CannotCheck { blocks: false, .. }))
    )
}

fn suite(bench: &str, doc: &CompareDoc) -> String {
    let checks: Vec<&Check> = doc.checks.iter().collect();
    let what = format!("B {} against A {}", doc.b_name, doc.a_name);
    let name = if bench.is_empty() { what } else { format!("{bench}: {what}") };
    let mut x = format!("  <testsuite name=\"{}\" {}>\n    <properties>\n", xml(&name), counts(&checks));
    let mut props = vec![("a", doc.a_name.clone()), ("b", doc.b_name.clone()), ("fail_on", doc.fail_on.as_ref().map_or("none".into(), |f| f.to_string()))];
    props.push(("confidence", doc.opts.confidence.level().to_string()));
    if let Some(g) = &doc.gate {
        props.push(("gate_level", format!("{:.6}", g.level)));
        props.push(("gate_checks", g.checks.to_string()));
    }
    props.push(("answer", format!("{:?}", doc.answer()).to_lowercase()));
    for (k, v) in props {
        x += &format!("      <property name=\"{k}\" value=\"{}\"/>\n", xml(&v));
    }
    x += "    </properties>\n";
    for c in &doc.checks {
        x += &case(Some(doc), c);
    }
    x += "  </testsuite>\n";
    x
}

/// One `<testcase>`; `doc` gives A and B for the output of a checked case.
fn case(doc: Option<&CompareDoc>, c: &Check) -> String {
    let mut x = String::new();
    let class = match (&c.config, &c.class) {
        (Some(cfg), Some(cl)) => format!("irqlab.gate.{cfg}.{cl}"),
        (Some(cfg), None) => format!("irqlab.gate.{cfg}"),
        _ => "irqlab.gate".into(),
    };
    let name = c.stat.clone().unwrap_or_else(|| match &c.result {
        CheckResult::CannotCheck { reason, .. } => format!("coverage: {reason}"),
        _ => "coverage".into(),
    });
    x += &format!("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", xml(&class), xml(&name));
    match &c.result {
        CheckResult::Passed { estimate: ratio, interval, .. } => {
            x += &format!(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml(&output(doc, c, *ratio, *interval)));
        }
        CheckResult::Tripped { estimate: ratio, interval } => {
            let out = output(doc, c, *ratio, *interval);
            x += &format!(
                ">\n      <failure type=\"slower\" message=\"{}\">{}</failure>\n      <system-out>{}</system-out>\n    </testcase>\n",
                xml(&format!("B is resolvably slower: {} {ratio:.3}, lower bound {:.3}", c.scale.symbol(), interval.0)),
                xml(&out),
                xml(&out)
            );
        }
        CheckResult::CannotCheck { reason, blocks: true } => {
            x += &format!(">\n      <error type=\"unchecked\" message=\"{}\"/>\n    </testcase>\n", xml(&format!("the gate could not check this: {reason}")));
        }
        CheckResult::CannotCheck { reason, blocks: false } => {
            x += &format!(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml(&format!("not gated: {reason}")));
        }
    }
    x
}
