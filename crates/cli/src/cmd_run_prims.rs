//! `irqlab run primitives`: measure the pieces the host's paths are made of (exit round trips,
//! KVM ioctls, irqfd, thread wake-ups, halt wake-ups, hrtimer expiry), each as its own latency
//! class, in the normal result format with the host recorded (`kvm::primitives`). The result is
//! what `irqlab calibrate --primitives` composes the paths from.
//!
//! It shares `irqlab run`'s settings and output handling (`cmd_run`): the flags that apply are
//! `--samples`, `--period-us`/`--period-cycles`, `--halt-poll-ns` (the polled wake's window),
//! `--pin` (one CPU: the vCPU and waiting threads), `--priority`, `--mlock`, `--stall-timeout-s`,
//! `--out`, `--force`, `--format`, `--unit`; any other is refused by name (exit 2).
use std::collections::BTreeMap;
use std::path::PathBuf;

use results::{ResultKind, RunMeta, RunResult};

use crate::cmd_run::{check_fresh, summarize, Common};
use crate::output::write_files;
use crate::progress::Progress;
use crate::term::note;
use crate::{CliError, Outcome};
use kvm::plan::{points, Bench};

/// The flags of `irqlab run` that mean nothing for the primitives, named as the user typed them.
fn refused(c: &Common) -> Option<&'static str> {
    [
        (c.duration.is_some(), "--duration"),
        (c.stop_above.is_some(), "--stop-above"),
        (c.disable_hlt_exits, "--disable-hlt-exits"),
        (c.gicv4.is_some(), "--gicv4"),
        (c.vcpus.is_some_and(|v| v != 1), "--vcpus"),
        (c.breakdown, "--breakdown"),
        (c.samples_out.is_some(), "--samples-out"),
        (c.repeat > 1, "--repeat (run the command again with another --out)"),
        (!c.sets.is_empty(), "--set"),
    ]
    .into_iter()
    .find_map(|(bad, flag)| bad.then_some(flag))
}

pub fn run(c: &Common) -> Result<Outcome, CliError> {
    if let Some(flag) = refused(c) {
        return Err(CliError(format!("run primitives: {flag} does not apply to the primitives bench")));
    }
    // The settings the flags give, validated as `irqlab run device` would (one vCPU).
    let table = c.table(Some(Bench::Device));
    let (_, pts) = points(&table, None, &[], &[])?;
    let cfg = pts.into_iter().next().map(|p| p.1).ok_or_else(|| CliError("run primitives: no settings".into()))??;
    let cfg = kvm::BenchConfig { samples: c.samples.unwrap_or(2000), ..cfg };
    cfg.validate(&kvm::config::allowed_cpus())?;
    let dir = c.out.clone().unwrap_or_else(|| PathBuf::from("out").join("run-primitives"));
    check_fresh(&dir, c.force, &[])?;
    if let Err(why) = kvm::kvm_available() {
        return Err(CliError(format!("this needs KVM: {why}")));
    }
    let mut result = RunResult::new(RunMeta {
        tool_version: sim::runner::TOOL_VERSION.into(),
        scenario: "run-primitives".into(),
        description: format!("primitives measured with the irqlab micro-VMM on {}", crate::provenance::hostname()),
        seed: 0,
        kind: ResultKind::Measured,
        platform: kvm::host_description(),
        knobs: BTreeMap::new(),
    });
    let progress = Progress::new("run-primitives");
    progress.set_total(cfg.samples * kvm::primitives::CLASSES.len() as u64);
    let m = kvm::run_primitives(&cfg, &|n| progress.inc(n)).map_err(|e| CliError(format!("run primitives: {e}; nothing was written")))?;
    progress.finish();
    result.configs.push(kvm::primitives::to_config_result(&m, "primitives"));
    result.provenance = Some(crate::provenance::current(BTreeMap::new()));
    let json = write_files(&dir, &result, &[])?;
    summarize(&result, c, "")?;
    note(&format!("wrote {} and result.csv\n", json.display()));
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        c: Common,
    }

    #[test]
    fn flags_that_do_not_apply_are_named() {
        let c = |args: &[&str]| T::parse_from(std::iter::once("t").chain(args.iter().copied())).c;
        assert_eq!(refused(&c(&[])), None);
        assert_eq!(refused(&c(&["--vcpus", "1", "--samples", "50", "--pin", "1"])), None);
        assert_eq!(refused(&c(&["--duration", "10s"])), Some("--duration"));
        assert_eq!(refused(&c(&["--vcpus", "2"])), Some("--vcpus"));
        assert_eq!(refused(&c(&["--breakdown"])), Some("--breakdown"));
        assert!(refused(&c(&["--repeat", "3"])).unwrap().starts_with("--repeat"));
    }
}
