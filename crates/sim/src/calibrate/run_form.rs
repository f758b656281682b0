//! The parameters that make two results "the same benchmark": a measured configuration of
//! `irqlab run` and a configuration of the `kvm-x86` model are paired by these, not by name.
//!
//! Why: names differ (`timer hlt` in the scenario, `timer` in a flag run), parameters do not.
//! Measured results carry them as `params` (crates/kvm/src/measurement.rs `Measurement::params`);
//! the `kvm-x86` model writes them as a note `irqlab run form: bench=… wait=…`
//! (models/kvm_x86/mod.rs `run_form`). `halt_poll_ns = "host default"` of a measurement is
//! resolved through the host description (`host.kvm.halt_poll_ns`), as the model resolves it
//! through the profile's `host_halt_poll_ns`.
use std::collections::BTreeMap;

use results::ConfigResult;

/// The note prefix the `kvm-x86` model writes.
pub const RUN_FORM_NOTE: &str = "irqlab run form: ";

/// The pairing key: bench, wait (timer), via (device), period_us, vcpus, halt_poll_ns.
pub type RunForm = BTreeMap<String, String>;

const KEY_FIELDS: &[&str] = &["bench", "wait", "via", "period_us", "vcpus", "halt_poll_ns"];

/// `77` and `77.0` are the same period.
fn number(s: &str) -> String {
    s.trim().parse::<f64>().map(|v| format!("{v}")).unwrap_or_else(|_| s.trim().to_string())
}

fn keep(all: BTreeMap<String, String>) -> RunForm {
    all.into_iter().filter(|(k, _)| KEY_FIELDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), if k == "bench" || k == "wait" || k == "via" { v } else { number(&v) })).collect()
}

/// Why a measured configuration has no counterpart in the model (it is left out, with this).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoModelForm {
    #[error("disable_hlt_exits = true is not modelled by kvm-x86")]
    HltExitsDisabled,
    #[error("period given in cycles (period_cycles); the model takes period_us")]
    PeriodInCycles,
    #[error("no `bench` parameter: not a result of `irqlab run`")]
    NotARun,
}

/// The run form of a measured configuration, or why the model has no counterpart.
pub fn measured_form(c: &ConfigResult, host: &BTreeMap<String, String>) -> Result<RunForm, NoModelForm> {
    let p = &c.params;
    if p.get("disable_hlt_exits").is_some_and(|v| v == "true") {
        return Err(NoModelForm::HltExitsDisabled);
    }
    if p.contains_key("period_cycles") {
        return Err(NoModelForm::PeriodInCycles);
    }
    if !p.contains_key("bench") {
        return Err(NoModelForm::NotARun);
    }
    let mut all = p.clone();
    if all.get("halt_poll_ns").is_some_and(|v| v == "host default") {
        if let Some(n) = host.get("host.kvm.halt_poll_ns") {
            all.insert("halt_poll_ns".into(), n.clone());
        }
    }
    Ok(keep(all))
}

/// The run form a `kvm-x86` configuration result announces in its notes.
pub fn model_form(c: &ConfigResult) -> Option<RunForm> {
    let note = c.notes.iter().find_map(|n| n.strip_prefix(RUN_FORM_NOTE))?;
    let all = note.split_whitespace().filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Some(keep(all))
}

/// A short name for one latency class of a benchmark, as `--train` takes it: `timer-hlt`,
/// `timer-busy`, `device-irqfd`, `ipi-oneway`, `ipi-roundtrip`; a non-default halt-poll window
/// adds `-poll<NS>` (e.g. `timer-hlt-poll0`).
pub fn label(form: &RunForm, class: &str, host_default_poll: Option<&str>) -> String {
    let bench = form.get("bench").map(String::as_str).unwrap_or("?");
    let what = match bench {
        "timer" => form.get("wait").cloned().unwrap_or_else(|| "hlt".into()),
        "device" => form.get("via").cloned().unwrap_or_default(),
        _ => class.strip_prefix(&format!("{bench}_")).unwrap_or(class).replace('_', ""),
    };
    let mut s = format!("{bench}-{what}");
    if let Some(p) = form.get("halt_poll_ns") {
        if Some(p.as_str()) != host_default_poll.map(number).as_deref() && p != "host default" {
            s += &format!("-poll{p}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(params: &[(&str, &str)]) -> ConfigResult {
        let mut c = ConfigResult::new("m");
        c.params = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        c
    }

    fn host() -> BTreeMap<String, String> {
        [("host.kvm.halt_poll_ns".to_string(), "200000".to_string())].into()
    }

    #[test]
    fn measured_and_model_forms_pair() {
        let m = measured(&[
            ("bench", "timer"),
            ("wait", "hlt"),
            ("halt_poll_ns", "host default"),
            ("period_us", "77"),
            ("samples", "300"),
            ("vcpus", "1"),
            ("disable_hlt_exits", "false"),
        ]);
        let mut s = ConfigResult::new("timer hlt");
        s.notes.push("irqlab run form: bench=timer wait=hlt period_us=77 samples=2000 vcpus=1 halt_poll_ns=200000".into());
        assert_eq!(measured_form(&m, &host()).unwrap(), model_form(&s).unwrap());
        // A different wait or poll window does not pair.
        s.notes[0] = s.notes[0].replace("halt_poll_ns=200000", "halt_poll_ns=0");
        assert_ne!(measured_form(&m, &host()).unwrap(), model_form(&s).unwrap());
    }

    #[test]
    fn unmodelled_measurements_say_why() {
        let m = measured(&[("bench", "timer"), ("disable_hlt_exits", "true")]);
        assert!(measured_form(&m, &host()).unwrap_err().to_string().contains("disable_hlt_exits"));
        assert_eq!(measured_form(&measured(&[("bench", "timer"), ("period_cycles", "1000")]), &host()), Err(NoModelForm::PeriodInCycles));
        assert_eq!(measured_form(&measured(&[("x", "y")]), &host()), Err(NoModelForm::NotARun));
        assert!(model_form(&ConfigResult::new("no note")).is_none());
    }

    #[test]
    fn labels_name_path_and_window() {
        let f = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<RunForm>();
        assert_eq!(label(&f(&[("bench", "timer"), ("wait", "hlt"), ("halt_poll_ns", "200000")]), "timer", Some("200000")), "timer-hlt");
        assert_eq!(label(&f(&[("bench", "timer"), ("wait", "hlt"), ("halt_poll_ns", "0")]), "timer", Some("200000")), "timer-hlt-poll0");
        assert_eq!(label(&f(&[("bench", "device"), ("via", "irqfd")]), "device_irqfd", None), "device-irqfd");
        assert_eq!(label(&f(&[("bench", "ipi")]), "ipi_one_way", None), "ipi-oneway");
        assert_eq!(label(&f(&[("bench", "ipi")]), "ipi_round_trip", None), "ipi-roundtrip");
    }
}
