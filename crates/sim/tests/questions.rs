//! Every shipped scenario states its question, and the question is read strictly: a parameter
//! or value the scenario does not have is an error naming the file and the key.
use sim::scenario::{Scenario, ScenarioError, SHIPPED_SCENARIOS};

#[test]
fn every_shipped_scenario_asks_a_question_it_can_answer() {
    for (name, _) in SHIPPED_SCENARIOS {
        let sc = Scenario::load(name).unwrap();
        assert!(!sc.questions.is_empty(), "{name} has no [[question]]");
        for q in &sc.questions {
            // The baseline and every variant are values some point takes.
            let points = sc.points(1).unwrap();
            for v in std::iter::once(&q.baseline).chain(&q.variants) {
                assert!(points.iter().any(|(_, p)| p.params.get(&q.param) == Some(v)), "{name}: {} = {v}", q.param);
            }
        }
    }
}

const BASE: &str = r#"
[scenario]
model = "timer-inject"
[platform]
profile = "demo-arm64-a53"
[hypervisor]
idle = "trap"
[[vm]]
vcpus = 1
pin = [1]
[workload]
period_us = 500
samples = 200
[sweep]
"hypervisor.idle" = ["trap", "native"]
"#;

/// The error of a scenario with this question: from reading it, or else from the checks made
/// before anything runs (the values are checked once the model has accepted every point).
fn err(question: &str) -> String {
    let text = format!("{BASE}\n[[question]]\n{question}");
    match Scenario::parse(&text, "my.toml", "my", None) {
        Err(e @ (ScenarioError::Invalid { .. } | ScenarioError::Syntax { .. } | ScenarioError::Toml { .. })) => e.to_string(),
        Err(other) => panic!("unexpected error {other:?}"),
        Ok(sc) => sim::runner::validate_scenario(&sc, None).expect_err("an error before the run").to_string(),
    }
}

#[test]
fn bad_questions_name_the_file_and_key() {
    let ok = "title = \"q\"\nparam = \"hypervisor.idle\"\nbaseline = \"trap\"\nvariants = [\"native\"]\nstats = [\"p99\"]\n";
    let text = format!("{BASE}\n[[question]]\n{ok}");
    let sc = Scenario::parse(&text, "my.toml", "my", None).unwrap();
    assert_eq!(sc.questions[0].variants, ["native"]);
    let e = err(&ok.replace("hypervisor.idle", "hypervisor.idel"));
    assert!(e.starts_with("my.toml: key `question[0].param`") && e.contains("did you mean `hypervisor.idle`"), "{e}");
    assert!(err(&ok.replace("\"trap\"", "\"trapped\"")).starts_with("my.toml: key `question[0].baseline`"));
    assert!(err(&ok.replace("[\"native\"]", "[\"nativ\"]")).starts_with("my.toml: key `question[0].variants[0]`"));
    assert!(err(&ok.replace("[\"p99\"]", "[\"p95\"]")).starts_with("my.toml: key `question[0].stats[0]`"));
    assert!(err(&format!("{ok}within = [\"workload.periodus\"]")).starts_with("my.toml: key `question[0].within[0]`"));
    // A sweep value the model refuses is reported as such, not as the question's value.
    let typo = format!("{BASE}\n[[question]]\n{ok}").replace("[\"trap\", \"native\"]", "[\"trap\", \"nativ\"]");
    let sc = Scenario::parse(&typo, "my.toml", "my", None).unwrap();
    let e = sim::runner::validate_scenario(&sc, None).unwrap_err().to_string();
    assert!(e.contains("nativ") && !e.contains("question"), "{e}");
    let e = err(&format!("{ok}colour = \"red\""));
    assert!(e.starts_with("my.toml: key `question") && e.contains("colour"), "{e}");
}

#[test]
fn unfilled_defaults_become_parameters_without_changing_seeds() {
    // `xen` keeps vwfi's default while `xen vwfi=native` sets it: both now carry the key.
    let sc = Scenario::load("xen-gicv4-fio").unwrap();
    let pts = sc.points(1).unwrap();
    assert!(pts.iter().all(|(_, p)| p.params.contains_key("hypervisor.vwfi")));
    let xen = pts.iter().find(|(_, p)| p.name.starts_with("xen, ")).unwrap();
    assert_eq!(xen.1.params["hypervisor.vwfi"], "trap");
}
