//! What the KVM lab adds to a result brought back: that it came from the lab (emulation, never
//! hardware), what ran (kernel, irqlab's hash, the peers) and the session's wall-clock figures.
//! A model result (`-- sim …` inside) is passed through byte for byte.
use std::time::Duration;

/// When things happened in a lab session, from QEMU's start (wall clock).
#[derive(Debug, Clone, Copy)]
pub struct Times {
    pub init: Option<Duration>,
    /// This result's bench started (its first sample follows within one period).
    pub bench: Option<Duration>,
    pub wall: Duration,
}

/// What ran (kernel release and hashes, the irqlab binary's hash) into a measured result's
/// platform, and the lab's wall-clock figures (QEMU start to /init, the whole session) into every
/// configuration; a model result is passed through byte for byte, as in [`label_measured`].
pub fn record_facts(bytes: &[u8], what: &std::collections::BTreeMap<String, String>, at: Times) -> Vec<u8> {
    let Ok(mut r) = results::from_json_str(&String::from_utf8_lossy(bytes), "result.json") else { return bytes.to_vec() };
    if r.meta.kind != results::ResultKind::Measured {
        return bytes.to_vec();
    }
    for (k, v) in what {
        r.meta.platform.insert(k.clone(), v.clone());
    }
    for c in &mut r.configs {
        if let Some(t) = at.init {
            c.set_figure("lab.qemu_start_to_init", t.as_secs_f64(), "s (wall)");
        }
        if let Some(t) = at.bench {
            c.set_figure("lab.qemu_start_to_bench", t.as_secs_f64(), "s (wall)");
        }
        c.set_figure("lab.session_wall", at.wall.as_secs_f64(), "s (wall)");
    }
    results::to_json_string(&r).into_bytes()
}

/// A measured result from inside the lab says it came from the lab (emulation, never hardware);
/// a model result is passed through byte for byte (it must stay identical to a native run's).
pub fn label_measured(bytes: &[u8], icount: bool, command: &[String]) -> Vec<u8> {
    let Ok(mut r) = results::from_json_str(&String::from_utf8_lossy(bytes), "result.json") else { return bytes.to_vec() };
    if r.meta.kind != results::ResultKind::Measured {
        return bytes.to_vec();
    }
    let label = if icount { "QEMU TCG -icount: instruction count (not hardware latency)" } else { "QEMU TCG emulation (not hardware latency)" };
    r.meta.platform.insert("lab".into(), format!("{label}; nested KVM on QEMU's emulated EL2 (irqlab-lab kvm)"));
    if let Some(p) = r.provenance.as_mut() {
        p.details.insert("lab_command".into(), command.join(" "));
    }
    results::to_json_string(&r).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_results_pass_through_measured_ones_are_labelled() {
        let r = results::RunResult::new(results::RunMeta::named("t", "s", 1, results::ResultKind::Predicted));
        let b = results::to_json_string(&r).into_bytes();
        assert_eq!(label_measured(&b, false, &[]), b);
        let m = results::RunResult::new(results::RunMeta::named("t", "run-timer", 1, results::ResultKind::Measured));
        let out = label_measured(results::to_json_string(&m).as_bytes(), true, &[]);
        let back = results::from_json_str(&String::from_utf8(out).unwrap(), "x").unwrap();
        assert!(back.meta.platform["lab"].contains("instruction count (not hardware latency)"));
    }
}
