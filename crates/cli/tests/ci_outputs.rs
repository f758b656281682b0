//! The gate where developers look (issue 46), from the command line: `compare --junit` and
//! `--summary-md`, and the results history (`history add|show`, `compare --against
//! history:LABEL`) with several `irqlab` processes writing one SQLite file, or one PostgreSQL
//! server, at once.
use std::path::Path;

testkit::irqlab_fn!(no_cwd);

/// `demo-timer-inject` with `seeds` seeds from `seed` on; `slow` makes every list-register write
/// 150 → 400 ns (B resolvably slower).
fn sim(dir: &Path, name: &str, seed: u32, seeds: u32, slow: bool) -> String {
    let out = dir.join(name);
    let (seed, seeds) = (seed.to_string(), seeds.to_string());
    let mut args = vec!["sim", "demo-timer-inject", "--seed", &seed, "--seeds", &seeds, "--out", out.to_str().unwrap(), "--format", "json"];
    if slow {
        args.extend(["--set", "platform.costs.lr_inject.ns=400", "--set", "platform.costs.lr_inject.source=\"test\"", "--set", "platform.costs.lr_inject.basis=\"guess\""]);
    }
    let o = irqlab(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out.join("result.json").display().to_string()
}

fn err(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `irqlab history add` of each run as commit PREFIX<i>, all processes started at once.
fn add_at_once(runs: &[String], prefix: &str, label: &str, db: &str) {
    let children: Vec<_> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            std::process::Command::new(env!("CARGO_BIN_EXE_irqlab"))
                .args(["history", "add", r, "--commit", &format!("{prefix}{i}"), "--label", label, "--db", db])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", err(&o));
    }
}

#[test]
fn junit_and_summary_of_compare() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (sim(t.path(), "a", 1, 3, false), sim(t.path(), "b", 4, 3, true));
    let j = t.path().join("gate.xml");
    let s = t.path().join("summary.md");
    let (js, ss) = (j.to_str().unwrap(), s.to_str().unwrap());
    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower", "--junit", js, "--summary-md", ss]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    let x = std::fs::read_to_string(&j).unwrap();
    assert!(x.starts_with("<?xml") && x.contains("<testsuites"), "{x}");
    let failures = x.matches("<failure type=\"slower\"").count();
    assert!(failures >= 1 && x.contains("name=\"p50\""), "{x}");
    assert_eq!(x.matches("<testcase ").count(), x.split("tests=\"").nth(1).unwrap().split('"').next().unwrap().parse::<usize>().unwrap());
    let md = std::fs::read_to_string(&s).unwrap();
    assert!(md.starts_with("## ❌ irqlab gate: B is resolvably slower"), "{md}");
    // again: the JUnit file (irqlab's) is replaced by the same bytes, the summary appended
    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower", "--junit", js, "--summary-md", ss]);
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(std::fs::read_to_string(&j).unwrap(), x, "same input, same bytes");
    assert_eq!(std::fs::read_to_string(&s).unwrap(), format!("{md}{md}"));
    // a file irqlab did not write is refused (exit 2, named, untouched) unless --force
    let mine = t.path().join("mine.xml");
    std::fs::write(&mine, "<testsuites/>\n").unwrap();
    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower", "--junit", mine.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("mine.xml") && err(&o).contains("no record of writing this JUnit report"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "<testsuites/>\n");
    let o = irqlab(&["compare", &a, &b, "--fail-on", "slower", "--junit", mine.to_str().unwrap(), "--force"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    assert!(std::fs::read_to_string(&mine).unwrap().contains("<failure"));
    // the cases are the gate's checks: without --fail-on there is no gate to report
    let o = irqlab(&["compare", &a, &b, "--junit", js]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--fail-on"), "{}", err(&o));
}

#[test]
fn history_add_show_and_compare_against_it() {
    let t = tempfile::tempdir().unwrap();
    let db = t.path().join("h.sqlite");
    let dbs = db.to_str().unwrap();
    // four commits at once, each its own process, one file
    let runs: Vec<String> = (0..4).map(|i| sim(t.path(), &format!("c{i}"), 10 + i, 1, false)).collect();
    add_at_once(&runs, "c", "main", dbs);
    let o = irqlab(&["history", "add", &runs[0], "--commit", "c0", "--label", "main", "--db", dbs]);
    assert!(o.status.success() && err(&o).contains("already stored"), "{}", err(&o));
    let class = {
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&runs[0]).unwrap()).unwrap();
        r["configs"][0]["classes"].as_object().unwrap().keys().next().unwrap().clone()
    };
    let o = irqlab(&["history", "show", "--class", &class, "--stat", "p99", "--label", "main", "--db", dbs, "--format", "csv"]);
    assert!(o.status.success(), "{}", err(&o));
    let csv = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(csv.lines().next(), Some("run,commit,config,accepted,p99_us"));
    let mut commits: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').nth(1).unwrap()).collect();
    commits.sort();
    commits.dedup();
    assert_eq!(commits, ["c0", "c1", "c2", "c3"], "{csv}");
    let seqs: std::collections::BTreeSet<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(seqs.into_iter().collect::<Vec<_>>(), ["1", "2", "3", "4"], "one run number per writer: {csv}");
    // an unknown class or statistic names the ones that exist
    let o = irqlab(&["history", "show", "--class", "nope", "--label", "main", "--db", dbs]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("class `nope`") && err(&o).contains(&class), "{}", err(&o));
    // the trend page: a point per run, a line per configuration
    let page = t.path().join("trend.html");
    let o = irqlab(&["report", "--history", dbs, "--label", "main", "--class", &class, "--stat", "p99", "-o", page.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<circle class=\"point\"").count(), csv.lines().count() - 1, "{html}");
    assert_eq!(html.matches("<polyline class=\"series\"").count(), 2, "two configurations");
    // A from the last 3 accepted commits: a slow B trips the gate, a B like them does not
    let slow = sim(t.path(), "slow", 20, 1, true);
    let o = irqlab(&["compare", &slow, "--against", "history:main", "--last", "3", "--db", dbs, "--fail-on", "slower:p50"]);
    assert_eq!(o.status.code(), Some(4), "{}", err(&o));
    // the writers raced, so which commit is oldest is theirs to decide: three of the four
    let head = String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or_default().to_string();
    assert!(head.starts_with("A = history:main (3 run(s) of c") && head.matches(", c").count() == 2, "{head}");
    let same = sim(t.path(), "same", 21, 1, false);
    let o = irqlab(&["compare", &same, "--against", "history:main", "--last", "3", "--db", dbs, "--fail-on", "slower:p50"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // a file that is not a history: exit 2 naming it, left as it was
    let notes = t.path().join("notes.txt");
    std::fs::write(&notes, "mine\n").unwrap();
    let o = irqlab(&["history", "add", &runs[0], "--commit", "c9", "--db", notes.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("notes.txt") && err(&o).contains("not an irqlab results history"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
}

mod needs_postgres {
    use super::*;

    #[test]
    #[ignore = "needs PostgreSQL's server (Debian's postgresql): scripts/test.sh runs it where it is installed"]
    fn several_irqlab_processes_share_one_postgresql_history() {
        testkit::require(testkit::Resource::Postgres);
        let pg = testkit::postgres::Cluster::start();
        let url = pg.database("shared");
        let t = tempfile::tempdir().unwrap();
        let runs: Vec<String> = (0..3).map(|i| sim(t.path(), &format!("m{i}"), 30 + i, 1, false)).collect();
        add_at_once(&runs, "m", "ci", &url);
        let slow = sim(t.path(), "slow", 40, 1, true);
        let o = irqlab(&["compare", &slow, "--against", "history:ci", "--db", &url, "--fail-on", "slower:p50"]);
        assert_eq!(o.status.code(), Some(4), "{}", err(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("history:ci (3 run(s)"), "{}", String::from_utf8_lossy(&o.stdout));
    }
}
