//! `irqlab sim SCENARIO`: run the model, print the table, write result.json and result.csv.
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use sim::runner::{run_scenario, ScenarioOpts};
use sim::scenario::{check_references, Scenario};

use crate::output::{check_output_dir, print, write_files, Format};
use crate::term::{self, note};
use crate::progress::Progress;
use crate::{CliError, Outcome};

#[derive(Args)]
pub struct SimArgs {
    /// Scenario file, or the name of a shipped scenario (see `irqlab scenarios`).
    pub scenario: String,
    /// Seed (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory for result.json and result.csv (default: out/<scenario name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also print the number of simulated events and events per wall-clock second.
    #[arg(long)]
    pub stats: bool,
    /// Print the delivery path of N sample interrupts per configuration.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub trace: usize,
    /// Print where the time went (per-segment breakdown) and counters.
    #[arg(long)]
    pub breakdown: bool,
}

pub fn run(a: SimArgs) -> Result<Outcome, CliError> {
    let sc = Scenario::load(&a.scenario)?;
    check_output_dir(&a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&sc.name)))?;
    let progress = Progress::new(&sc.name);
    let started = Instant::now();
    let out = run_scenario(
        &sc,
        &ScenarioOpts {
            seed: a.seed,
            keep_traces: a.trace,
            on_start: &|n| progress.set_total(n),
            progress: &|n| progress.inc(n),
        },
    )?;
    progress.finish();
    let wall = started.elapsed().as_secs_f64();
    let r = &out.result;
    let dir = a.out.clone().unwrap_or_else(|| PathBuf::from("out").join(&sc.name));
    let json = write_files(&dir, r)?;

    print(r, a.format)?;
    // Extra human-readable sections go to stdout with the table, to stderr otherwise, so that
    // `--format json` output stays machine-readable.
    let mut extra = String::new();
    if !sc.references.is_empty() {
        extra.push_str(&references_table(&sc, r));
    }
    if a.breakdown {
        for c in &r.configs {
            extra.push('\n');
            extra.push_str(&report::table::breakdown_table(c));
        }
        let counters = report::table::counters_table(r);
        if !counters.is_empty() {
            extra.push('\n');
            extra.push_str(&counters);
        }
    }
    for (name, traces) in &out.traces {
        for t in traces {
            extra.push_str(&format!("\n[{name}] {}", t.render()));
        }
    }
    if a.stats {
        extra.push_str(&format!(
            "\nsimulated events: {}   wall: {:.3} s   events/s: {:.3e}   points: {}\n",
            out.events,
            wall,
            out.events as f64 / wall.max(1e-9),
            r.configs.len()
        ));
    }
    if a.format == Format::Table {
        term::out(&extra)?;
    } else {
        note(&extra);
    }
    note(&format!("wrote {} and result.csv\n", json.display()));
    let failed: Vec<_> = r.failures().collect();
    if failed.is_empty() {
        Ok(Outcome::Ok)
    } else if failed.len() == r.configs.len() {
        // Nothing ran: the scenario itself is bad. Say each distinct reason once.
        let mut reasons: Vec<&str> = failed.iter().map(|f| f.1).collect();
        reasons.dedup();
        Err(CliError(format!("every configuration failed:\n  {}", reasons.join("\n  "))))
    } else {
        for (name, e) in &failed {
            note(&format!("irqlab: configuration `{name}` failed: {e}\n"));
        }
        note(&format!("irqlab: {} of {} configurations failed; the others' results were written\n", failed.len(), r.configs.len()));
        Ok(Outcome::Partial)
    }
}

fn references_table(sc: &Scenario, r: &results::RunResult) -> String {
    let checks = check_references(&sc.references, r);
    let rows: Vec<Vec<String>> = checks
        .iter()
        .map(|c| {
            let rf = &c.reference;
            vec![
                rf.config.clone(),
                if rf.class.is_empty() { "-".into() } else { rf.class.clone() },
                rf.stat.clone(),
                report::table::format_value(rf.value),
                match &c.got {
                    Ok(v) => report::table::format_value(*v),
                    Err(e) => format!("n/a ({e})"),
                },
                c.deviation().map(|d| format!("{:+.1}%", d * 100.0)).unwrap_or_default(),
                format!("±{:.0}%", rf.tolerance * 100.0),
                if c.within() { "ok".into() } else { "OUT".into() },
            ]
        })
        .collect();
    let mut s = String::from("\nvs published (");
    s.push_str(&sc.header.reproduces);
    s.push_str(")\n");
    s.push_str(&report::table::render_grid(
        &["CONFIG", "CLASS", "STAT", "PUBLISHED", "MODEL", "DEV", "TOL", ""].map(String::from),
        &rows,
        3,
    ));
    s
}
