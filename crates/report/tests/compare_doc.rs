//! The compare document's CI renderings (issue 46): JUnit XML with one test case per gated check
//! — read back with a real XML parser and checked against the JUnit schema with xmllint — and the
//! Markdown summary, rendered to HTML and laid out by headless Chromium. Same input, same bytes.
use report::compare_doc::{junit, summary_md, Answer, CheckResult, CompareDoc, DocInputs};
use report::verdict_table::VerdictOptions;
use results::stats::Confidence;
use results::vocab::FailOn;
use results::{ConfigResult, LatencyRecorder, LatencyUnit, ResultKind, RunMeta, RunResult};

fn config(name: &str, base: u64) -> ConfigResult {
    let mut rec = LatencyRecorder::new(0);
    (0..5000u64).for_each(|i| rec.record(base + (i * 7919) % 5000));
    let mut c = ConfigResult::new(name);
    c.classes.insert("timer".into(), rec.finish());
    c
}

fn result(configs: Vec<ConfigResult>) -> RunResult {
    let mut r = RunResult::new(RunMeta::named("t", "s", 1, ResultKind::Measured));
    r.configs = configs;
    r
}

fn doc(a: &RunResult, b: &RunResult, stat: Option<&str>) -> CompareDoc {
    CompareDoc::build(DocInputs {
        a,
        b,
        a_name: "base/result.json",
        b_name: "patched/result.json",
        map: &[],
        unit: LatencyUnit::Us,
        opts: VerdictOptions { confidence: Confidence::default(), effect: 0.05 },
        paired: false,
        share_above: &[],
        fail_on: Some(FailOn { stat: stat.map(str::to_string) }),
    })
    .unwrap()
}

/// (classname, name, outcome) of every test case, read with roxmltree.
fn cases(xml: &str) -> Vec<(String, String, &'static str)> {
    let d = roxmltree::Document::parse(xml).unwrap();
    assert_eq!(d.root_element().tag_name().name(), "testsuites");
    d.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            let kind = if n.children().any(|c| c.has_tag_name("failure")) {
                "failure"
            } else if n.children().any(|c| c.has_tag_name("error")) {
                "error"
            } else if n.children().any(|c| c.has_tag_name("skipped")) {
                "skipped"
            } else {
                "passed"
            };
            (n.attribute("classname").unwrap().to_string(), n.attribute("name").unwrap().to_string(), kind)
        })
        .collect()
}

#[test]
fn junit_has_one_case_per_check_and_maps_each_outcome() {
    let a = result(vec![config("x", 10_000)]);
    // the same data: 5 statistics checked and passed, 4 without an interval skipped
    let d = doc(&a, &a, None);
    assert_eq!(d.answer(), Answer::Pass);
    let got = cases(&junit::render(&d));
    assert_eq!(got.len(), d.checks.len());
    assert_eq!(got.iter().filter(|c| c.2 == "passed").count(), 5, "{got:?}");
    assert_eq!(got.iter().filter(|c| c.2 == "skipped").count(), 4, "{got:?}");
    assert!(got.iter().all(|c| c.0 == "irqlab.gate.x.timer"), "{got:?}");
    // B 20 % slower: every checked statistic fails, with B/A in the message and the output
    let slow = result(vec![config("x", 12_000)]);
    let d = doc(&a, &slow, None);
    assert_eq!(d.answer(), Answer::Slower);
    let x = junit::render(&d);
    let got = cases(&x);
    let failed: Vec<&str> = got.iter().filter(|c| c.2 == "failure").map(|c| c.1.as_str()).collect();
    assert_eq!(failed, ["mean", "p50", "p90", "p99", "p99.9"], "{x}");
    let tree = roxmltree::Document::parse(&x).unwrap();
    let p50 = tree.descendants().find(|n| n.has_tag_name("testcase") && n.attribute("name") == Some("p50")).unwrap();
    let out = p50.children().find(|c| c.has_tag_name("system-out")).and_then(|c| c.text()).unwrap();
    let CheckResult::Tripped { estimate: ratio, interval } = d.checks.iter().find(|c| c.stat.as_deref() == Some("p50")).unwrap().result else { panic!() };
    assert!(out.contains(&format!("B/A {ratio:.3}")) && out.contains(&format!("{:.3} – {:.3}", interval.0, interval.1)), "{out}");
    assert!(ratio > 1.1 && interval.0 > 1.0);
    let suite = tree.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
    assert_eq!(suite.attribute("failures"), Some("5"));
    assert_eq!(suite.attribute("tests"), Some(got.len().to_string().as_str()));
}

#[test]
fn what_blinds_the_gate_is_an_error_case_and_a_named_statistic_without_interval_too() {
    let a = result(vec![config("x", 10_000), config("y", 10_000)]);
    let b = result(vec![config("x", 10_000)]);
    let d = doc(&a, &b, None);
    assert_eq!(d.answer(), Answer::Unchecked);
    let got = cases(&junit::render(&d));
    let errors: Vec<_> = got.iter().filter(|c| c.2 == "error").collect();
    assert_eq!(errors.len(), 1, "{got:?}");
    // the gate's own per-check item names the configuration: the case's class
    assert!(errors[0].0 == "irqlab.gate.y" && errors[0].1.contains("has no partner"), "{errors:?}");
    // slower:p99.99 cannot be checked on 5,000 samples: it blocks, so it is an error, not a skip
    let d = doc(&a, &a, Some("p99.99"));
    let got = cases(&junit::render(&d));
    assert_eq!(got, [("irqlab.gate.x.timer".to_string(), "p99.99".to_string(), "error"), ("irqlab.gate.y.timer".to_string(), "p99.99".to_string(), "error")]);
    // nothing paired: one error case, never an empty (green) report
    let other = result(vec![config("z", 1)]);
    let mut z = other.clone();
    z.configs[0].params.insert("k".into(), "v".into());
    let d = doc(&a, &z, None);
    assert_eq!(d.answer(), Answer::NothingPaired);
    assert_eq!(cases(&junit::render(&d)).iter().map(|c| c.2).collect::<Vec<_>>(), ["error"]);
}

#[test]
fn hostile_names_are_escaped_and_the_output_is_deterministic() {
    let a = result(vec![config("a<b>&\"c'\u{1}|d", 10_000)]);
    let d1 = junit::render(&doc(&a, &a, None));
    let d2 = junit::render(&doc(&a, &a, None));
    assert_eq!(d1, d2, "same input, same bytes");
    let got = cases(&d1);
    assert_eq!(got[0].0, "irqlab.gate.a<b>&\"c'\\u{1}|d.timer");
    let md = summary_md::render(&doc(&a, &a, None));
    let row = md.lines().find(|l| l.contains("| timer | p50 |")).unwrap();
    assert!(row.starts_with("| a\\<b\\>\\&\"c'"), "{row}");
    assert_eq!(row.matches(" | ").count(), 7, "the `|` in the name does not split the row: {row}");
    assert_eq!(md, summary_md::render(&doc(&a, &a, None)));
}

#[test]
fn the_summary_answers_first_then_the_table_then_what_was_not_checked() {
    let a = result(vec![config("x", 10_000)]);
    let md = summary_md::render(&doc(&a, &result(vec![config("x", 12_000)]), None));
    let first = md.lines().next().unwrap();
    assert!(first.starts_with("## ❌ irqlab gate: B is resolvably slower (5 of 5 checks)"), "{first}");
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| x | timer |")).collect();
    assert_eq!(rows.len(), 5, "{md}");
    assert!(rows.iter().all(|r| r.ends_with("| **slower** |")), "{md}");
    let not = md.split("### Not checked").nth(1).expect("a not-checked section");
    assert_eq!(not.lines().filter(|l| l.starts_with("- x timer ")).count(), 4, "{md}");
    assert!(md.ends_with("\n\n"), "appended summaries stay apart");
}

mod needs_xmllint {
    use super::*;

    #[test]
    #[ignore = "needs xmllint (libxml2-utils): scripts/test.sh runs it where it is installed"]
    fn junit_validates_against_the_junit_schema() {
        testkit::require(testkit::Resource::Xmllint);
        let xsd = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/junit.xsd");
        let dir = tempfile::tempdir().unwrap();
        let a = result(vec![config("x", 10_000), config("y<&>", 10_000)]);
        let b = result(vec![config("x", 12_000)]);
        let d = doc(&a, &b, None);
        let both = [junit::Suite::Gate { bench: "timer".into(), doc: &d }, junit::Suite::NotCompared { bench: "ipi".into(), why: "side B failed".into() }];
        for (i, x) in [junit::render(&d), junit::render(&doc(&a, &a, Some("p99"))), junit::render_suites(&both)].iter().enumerate() {
            let f = dir.path().join(format!("{i}.xml"));
            std::fs::write(&f, x).unwrap();
            let o = std::process::Command::new("xmllint").args(["--noout", "--schema", xsd]).arg(&f).output().unwrap();
            assert!(o.status.success(), "{}\n{x}", String::from_utf8_lossy(&o.stderr));
        }
        // and the schema does reject what is not JUnit
        let bad = dir.path().join("bad.xml");
        std::fs::write(&bad, "<testsuites><testsuite tests=\"x\"><testcase/></testsuite></testsuites>").unwrap();
        let o = std::process::Command::new("xmllint").args(["--noout", "--schema", xsd]).arg(&bad).output().unwrap();
        assert!(!o.status.success());
    }
}

mod needs_chromium {
    use super::*;

    /// The summary as GitHub would show it: Markdown (with tables) to HTML, laid out by Chromium.
    #[test]
    #[ignore = "needs chromium: scripts/test.sh runs it where it is installed"]
    fn the_summary_renders_in_a_browser_with_its_table() {
        testkit::require(testkit::Resource::Chromium);
        let a = result(vec![config("x|pipe", 10_000)]);
        let md = summary_md::render(&doc(&a, &result(vec![config("x|pipe", 12_000)]), None));
        let mut html = String::from("<!doctype html><meta charset=utf-8><body>");
        pulldown_cmark::html::push_html(&mut html, pulldown_cmark::Parser::new_ext(&md, pulldown_cmark::Options::ENABLE_TABLES));
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("summary.html");
        std::fs::write(&page, &html).unwrap();
        let chromium = |extra: &[&str]| {
            let o = std::process::Command::new("chromium")
                .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", &format!("--user-data-dir={}", dir.path().join("profile").display())])
                .args(extra)
                .arg(format!("file://{}", page.display()))
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        let dom = String::from_utf8(chromium(&["--dump-dom"])).unwrap();
        // the browser's DOM: the answer as a heading, one table of 5 checked rows, the name whole
        assert!(dom.contains("<h2>❌ irqlab gate: B is resolvably slower (5 of 5 checks)</h2>"), "{dom}");
        assert_eq!(dom.matches("<table>").count(), 1, "{dom}");
        assert_eq!(dom.matches("<td>x|pipe</td>").count(), 5, "{dom}");
        assert_eq!(dom.matches("<strong>slower</strong>").count(), 5, "{dom}");
        let png = dir.path().join("summary.png");
        chromium(&[&format!("--screenshot={}", png.display()), "--window-size=1000,600"]);
        let bytes = std::fs::read(&png).unwrap();
        assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 5_000, "a screenshot with content ({} bytes)", bytes.len());
        if let Some(keep) = std::env::var_os("IRQLAB_KEEP_SUMMARY_PNG") {
            std::fs::copy(&png, keep).unwrap();
        }
    }
}
