//! Calibration recovers costs it was given, refuses what it must refuse, and writes a profile
//! that parses with the fitted costs marked `measured` and every other cost unchanged.
use std::collections::BTreeMap;

use results::{ResultKind, RunMeta, RunResult};

use super::*;
use crate::platform::Platform;

const HOST_POLL: &str = "200000";

fn base(samples: i64) -> Scenario {
    let mut sc = Scenario::load("kvm-x86-host").unwrap();
    sc.apply_sets(&[("workload.samples".into(), toml::Value::Integer(samples))]).unwrap();
    sc
}

fn host(name: &str) -> BTreeMap<String, String> {
    [("host.hostname", name), ("host.cpu_model", "AMD EPYC"), ("host.kernel", "6.18"), ("host.kvm_modules", "kvm_pvm,kvm"), ("host.kvm.halt_poll_ns", HOST_POLL)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A model result relabelled as a measurement of `hostname`, with the parameters `irqlab run`
/// records (`halt_poll_ns = "host default"` for the host's window), one file per configuration.
fn as_measured(r: &RunResult, hostname: &str) -> Vec<Measured> {
    r.configs
        .iter()
        .map(|c| {
            let mut m = c.clone();
            m.params = run_form::model_form(c).unwrap();
            m.params.insert("samples".into(), "1000".into());
            m.params.insert("disable_hlt_exits".into(), "false".into());
            if m.params["halt_poll_ns"] == HOST_POLL {
                m.params.insert("halt_poll_ns".into(), "host default".into());
            }
            m.notes.clear();
            let mut rr = RunResult::new(RunMeta { platform: host(hostname), ..RunMeta::named("test", "run", 0, ResultKind::Measured) });
            rr.configs.push(m);
            Measured { file: format!("{}.json", c.name.replace(' ', "-")), result: rr }
        })
        .collect()
}

fn train() -> Vec<String> {
    DEFAULT_TRAIN.iter().map(|s| s.to_string()).collect()
}

// block_wake, not handle_icr_write, is what the IPI path depends on most since the target's
// wake-up crosses host CPUs (cross_cpu_wake): its halts block more often.
const MOVED: [(&str, f64); 3] = [("hrtimer_expiry", 1.3), ("eventfd_signal", 0.8), ("block_wake", 0.6)];

/// "Measurements" made by the model itself with three costs moved: the truth is known.
fn moved_measurements() -> Vec<Measured> {
    let sc = base(1000);
    let names: Vec<String> = MOVED.iter().map(|m| m.0.to_string()).collect();
    let free = crate::fit::resolve_free(&sc, &names).unwrap();
    let factors: Vec<f64> = MOVED.iter().map(|m| m.1).collect();
    as_measured(&run_whole(&with_factors(&sc, &free, &factors, "test")).unwrap(), "vm")
}

#[test]
fn calibration_recovers_moved_costs_and_predicts_held_out_paths() {
    let ms = moved_measurements();
    let p = plan(&base(1000), &ms, &train(), 1000).unwrap();
    assert!(p.skipped.is_empty(), "{:?}", p.skipped);
    assert_eq!(p.paths.iter().filter(|(m, _)| m.train).count(), 3);
    let choice = choose_free(&p.scenario, &train(), &p.paths).unwrap();
    let mut chosen = choice.chosen.clone();
    chosen.sort();
    let mut want: Vec<String> = MOVED.iter().map(|m| m.0.to_string()).collect();
    want.sort();
    assert_eq!(chosen, want, "the dominant cost of each training path");
    // Costs only held-out paths use are reported, not fitted.
    assert!(choice.check_only.contains(&"ioctl_signal_msi".to_string()), "{choice:?}");
    assert!(choice.unused.contains(&"nested_reflect".to_string()), "{choice:?}");
    let rep = fit_restarting(&p.scenario, &choice.chosen, 80, false, 4).unwrap();
    for (f, x) in rep.free.iter().zip(&rep.fit.factors) {
        let truth = MOVED.iter().find(|m| f.key() == format!("costs.{}", m.0)).unwrap().1;
        assert!((x / truth - 1.0).abs() < 0.1, "{}: fitted ×{x}, truth ×{truth} (objective {})", f.key(), rep.fit.objective);
    }
    let paths: Vec<MeasuredPath> = p.paths.iter().map(|(m, _)| m.clone()).collect();
    let rows = compare(&paths, &[fitted_result(&p.scenario, &rep).unwrap()]);
    assert_eq!(rows.len(), 9);
    for r in &rows {
        assert!(r.p50_error().unwrap().abs() < 0.1, "{}: p50 error {:?}", r.label, r.p50_error());
        assert_eq!(r.on_target(), Some(true), "{r:?}");
    }
}

#[test]
fn training_paths_become_fit_references_and_the_rest_check() {
    let ms = moved_measurements();
    let p = plan(&base(1000), &ms, &["timer-busy".to_string()], 500).unwrap();
    let fit: Vec<&crate::scenario::Reference> = p.scenario.references.iter().filter(|r| r.role == ReferenceRole::Fit).collect();
    assert_eq!(fit.len(), 2);
    assert!(fit.iter().all(|r| r.config == "timer busy" && r.class == "timer"));
    assert_eq!(p.scenario.references.len(), 18, "p50 and p99 of 9 paths");
    let timer_busy = p.paths.iter().find(|(m, _)| m.label == "timer-busy").unwrap();
    let r = fit.iter().find(|r| r.stat == "p50").unwrap();
    assert_eq!(r.value, timer_busy.0.p50);
}

#[test]
fn refuses_mixed_hosts_simulated_results_duplicates_and_unknown_training_paths() {
    let mut ms = moved_measurements();
    ms[3].result.meta.platform.insert("host.hostname".into(), "elsewhere".into());
    let e = same_host(&ms).unwrap_err().to_string();
    assert!(e.contains(&ms[0].file) && e.contains(&ms[3].file) && e.contains("elsewhere") && e.contains("vm ("), "{e}");

    let mut ms = moved_measurements();
    ms[1].result.meta.kind = ResultKind::Predicted;
    assert!(matches!(same_host(&ms), Err(CalibrateError::NotMeasured { .. })));
    assert!(matches!(same_host(&[]), Err(CalibrateError::NoInput)));

    let mut ms = moved_measurements();
    ms.push(Measured { file: "again.json".into(), result: ms[0].result.clone() });
    assert!(matches!(measured_paths(&ms, &[]), Err(CalibrateError::Duplicate { .. })));

    // A failed run and an unmodelled knob are left out with their reason, the rest kept.
    let mut ms = moved_measurements();
    ms[0].result.configs[0].error = Some("watchdog".into());
    ms[1].result.configs[0].params.insert("disable_hlt_exits".into(), "true".into());
    let (paths, skipped) = measured_paths(&ms, &[]).unwrap();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(skipped[0].contains("watchdog") && skipped[1].contains("disable_hlt_exits"), "{skipped:?}");
    assert!(paths.iter().all(|p| p.file != ms[0].file && p.file != ms[1].file));

    let e = measured_paths(&moved_measurements(), &["timer-sleep".into()]).unwrap_err().to_string();
    assert!(e.contains("timer-sleep") && e.contains("timer-hlt"), "{e}");
}

#[test]
fn written_profile_parses_with_fitted_costs_measured_and_the_rest_unchanged() {
    let ms = moved_measurements();
    let p = plan(&base(1000), &ms, &train(), 500).unwrap();
    let rep = crate::fit::fit(&p.scenario, &["hrtimer_expiry".into()], 15, false).unwrap();
    let files: Vec<String> = ms.iter().map(|m| m.file.clone()).collect();
    let prov = profile_out::Provenance { command: "irqlab calibrate …", host: &p.host, files: &files, train: &train(), unidentified: &["x — why".into()] };
    let text = profile_out::calibrated_profile(&p.scenario, &rep, &prov).unwrap();
    // Deterministic: the same inputs give the same profile, byte for byte.
    let again = crate::fit::fit(&plan(&base(1000), &ms, &train(), 500).unwrap().scenario, &["hrtimer_expiry".into()], 15, false).unwrap();
    assert_eq!(profile_out::calibrated_profile(&p.scenario, &again, &prov).unwrap(), text);
    let out = Platform::parse(&text, "host.toml").unwrap();
    let orig = Platform::shipped("kvm-pvm-nested-host").unwrap();
    assert_eq!(out.costs.len(), orig.costs.len());
    for (k, c) in &out.costs {
        if k == "hrtimer_expiry" {
            assert_eq!(c.basis, Basis::Measured);
            assert!(c.source.contains("irqlab calibrate") && c.source.contains(&p.host) && c.source.contains(&files[0]), "{}", c.source);
            assert_ne!(c.dist, orig.costs[k].dist);
        } else {
            assert_eq!(c, &orig.costs[k], "{k} must be kept as it was");
        }
    }
    let poll = &out.params["host_halt_poll_ns"];
    assert_eq!((poll.value, poll.basis), (200000.0, Basis::Measured));
    assert!(text.contains("# Not identified: x — why"));
}

#[test]
fn a_calibration_hands_over_each_stage_in_order_and_stops_at_the_callers_error() {
    use session::{calibrate, Job, Step};
    let ms = moved_measurements();
    let host = same_host(&ms).unwrap();
    let (t, free) = (train(), vec!["hrtimer_expiry".to_string()]);
    let job = Job {
        measured: &ms,
        host: &host,
        primitives: None,
        scenario: "kvm-x86-host",
        train: &t,
        free: &free,
        fit_samples: 500,
        max_iters: 15,
        restarts: 0,
        loo: false,
        command: "irqlab calibrate …",
    };
    let mut steps = Vec::new();
    let text = calibrate::<CalibrateError>(&job, &mut |s| {
        steps.push(match s {
            Step::Planned(p) => format!("planned {}", p.paths.len()),
            Step::Fitting(f) => format!("fitting {}", f.join(",")),
            Step::Fitted(r) => format!("fitted {}", r.free.len()),
            Step::Compared(rows) => format!("compared {}", rows.len()),
            other => format!("{other:?}"),
        });
        Ok(())
    })
    .unwrap();
    assert_eq!(steps, ["planned 9", "fitting hrtimer_expiry", "fitted 1", "compared 9"]);
    let out = Platform::parse(&text, "host.toml").unwrap();
    assert_eq!(out.costs["hrtimer_expiry"].basis, Basis::Measured);
    // The caller's error stops the calibration where it is raised: no fit is made.
    let mut seen = 0;
    let e = calibrate(&job, &mut |s| {
        seen += 1;
        match s {
            Step::Planned(_) => Err(CalibrateError::NoInput),
            _ => Ok(()),
        }
    })
    .unwrap_err();
    assert_eq!((e, seen), (CalibrateError::NoInput, 1));
}

#[test]
fn a_free_choice_says_what_it_leaves_unidentified_and_why() {
    let c = FreeChoice { chosen: vec!["a".into()], kept: Vec::new(), check_only: vec!["b".into(), "c".into()], unused: vec!["d".into()] };
    let u = c.unidentified();
    assert_eq!(u.iter().map(|x| x.0.to_vec()).collect::<Vec<_>>(), [vec!["b".to_string(), "c".into()], vec!["d".into()]]);
    assert!(u[0].1.contains("held-out") && u[1].1.contains("no measured path"), "{u:?}");
}

#[test]
fn against_marks_only_the_default_training_paths_that_were_measured() {
    let ms = moved_measurements();
    let (all, _) = measured_paths(&ms, &[]).unwrap();
    let timer = all.iter().find(|p| p.label == "timer-hlt").unwrap().file.clone();
    let ms: Vec<Measured> = ms.into_iter().filter(|m| m.file != timer).collect();
    assert!(matches!(measured_paths(&ms, &train()), Err(CalibrateError::UnknownTrain(..))));
    let (paths, _) = session::against_paths(&ms, &[], &train()).unwrap();
    let mut marked: Vec<&str> = paths.iter().filter(|p| p.train).map(|p| p.label.as_str()).collect();
    marked.sort();
    assert_eq!(marked, ["device-irqfd", "ipi-oneway"]);
    assert!(session::against_paths(&ms, &["timer-hlt".into()], &train()).is_err(), "a path named by --train must exist");
}
