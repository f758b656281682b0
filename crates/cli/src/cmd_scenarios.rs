//! `irqlab scenarios`: the shipped scenarios, one line each with a rough run time, and
//! `irqlab scenarios show NAME`, which prints a shipped scenario's TOML so that a user of a bare
//! binary can copy and edit it (`irqlab scenarios show xen-wfi-policy > mine.toml`).
use clap::{Args, Subcommand};
use sim::scenario::{did_you_mean, shipped_scenario, Scenario, SHIPPED_SCENARIOS};

use crate::term::out;
use crate::{CliError, Outcome};

#[derive(Args, Debug)]
pub struct ScenariosArgs {
    #[command(subcommand)]
    pub cmd: Option<ScenariosCmd>,
}

#[derive(Subcommand, Debug)]
pub enum ScenariosCmd {
    /// Print a shipped scenario's TOML (to copy and edit: `irqlab scenarios show NAME > my.toml`).
    Show {
        /// The scenario's name, as `irqlab scenarios` lists it.
        name: String,
    },
}

/// Wall-clock nanoseconds per unit of a model's work (`PreparedPoint::work`: simulated interrupts,
/// transactions or benchmark rounds), on one core of the build machine (AMD EPYC, nested KVM
/// guest, 2 cores, shared), measured with `RAYON_NUM_THREADS=1 irqlab sim NAME --stats` over the
/// shipped scenarios of each model (BENCHMARKS.md, "Rough run times"). Only for the rough run time
/// that `irqlab scenarios` shows; a model missing here shows none.
const NS_PER_WORK: &[(&str, f64)] = &[
    ("timer-inject", 275.0),
    ("xen-arm", 3_000.0),
    ("xen-gicv4", 1_400.0),
    ("kvm-ipi", 6_700.0),
    ("kvm-x86", 800.0),
    ("kvm-arm-passthrough", 1_350.0),
    ("kvm-arm64-sgi", 80.0),
    ("xen-arm-dom0less", 60.0),
];

pub fn run(a: ScenariosArgs) -> Result<Outcome, CliError> {
    match a.cmd {
        Some(ScenariosCmd::Show { name }) => show(&name),
        None => list(),
    }
}

fn show(name: &str) -> Result<Outcome, CliError> {
    let text = shipped_scenario(name)
        .ok_or_else(|| CliError(format!("no shipped scenario `{name}`{} (`irqlab scenarios` lists them)", did_you_mean(name, SHIPPED_SCENARIOS.iter().map(|(n, _)| *n)))))?;
    out(text)?;
    Ok(Outcome::Ok)
}

fn list() -> Result<Outcome, CliError> {
    let w = SHIPPED_SCENARIOS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, text) in SHIPPED_SCENARIOS {
        match Scenario::parse(text, &format!("scenarios/{name}.toml"), name, None) {
            Ok(sc) => {
                let points = sc.point_count().unwrap_or(0);
                let time = rough_seconds(&sc).map(rough_time).unwrap_or_else(|| "?".into());
                out(&format!("{name:<w$}  {:>7}  {} ({} point{}, model {})\n", time, sc.header.description, points, if points == 1 { "" } else { "s" }, sc.header.model))?
            }
            Err(e) => out(&format!("{name:<w$}  (invalid: {e})\n"))?,
        }
    }
    out("\n(time: rough one-core run time on the build machine; points run in parallel on more cores)\n")?;
    Ok(Outcome::Ok)
}

/// The scenario's work (validated, nothing run) times its model's measured cost per unit.
fn rough_seconds(sc: &Scenario) -> Option<f64> {
    let ns = NS_PER_WORK.iter().find(|(m, _)| *m == sc.header.model)?.1;
    let work = sim::runner::validate_scenario(sc, None).ok()?;
    Some(work as f64 * ns / 1e9)
}

/// "~0.1 s", "~4 s", "~2 min".
fn rough_time(s: f64) -> String {
    if s < 1.0 {
        format!("~{:.1} s", s.max(0.1))
    } else if s < 90.0 {
        format!("~{:.0} s", s)
    } else {
        format!("~{:.0} min", s / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rough_times_read_as_people_say_them() {
        assert_eq!(rough_time(0.01), "~0.1 s");
        assert_eq!(rough_time(0.44), "~0.4 s");
        assert_eq!(rough_time(37.2), "~37 s");
        assert_eq!(rough_time(600.0), "~10 min");
    }

    #[test]
    fn every_shipped_model_has_a_rough_cost() {
        for (name, text) in SHIPPED_SCENARIOS {
            let sc = Scenario::parse(text, name, name, None).unwrap();
            assert!(rough_seconds(&sc).is_some(), "{name}: model {} has no NS_PER_WORK entry", sc.header.model);
        }
    }
}
