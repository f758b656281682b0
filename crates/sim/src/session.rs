//! `irqlab sim`'s work between its flags and its output: the scenario loaded with the command
//! line's selection and overrides ([`Selection`]: `--set`, `--profile`, `--seeds`, `--config`,
//! `--shard`, `--max-points`), run keeping the sample paths asked for ([`run`]), with the details
//! the result's provenance records. A run in which every configuration failed is refused, so the
//! caller writes nothing and a previous good result stays. The CLI keeps the flags, the output
//! files, the progress bar and the printing.
use std::collections::BTreeMap;
use std::time::Instant;

use results::RunResult;

use crate::engine::{Trace, TracePick};
use crate::platform::{Platform, PlatformError};
use crate::runner::{run_scenario_picking, ScenarioOpts};
use crate::scenario::overrides::OverrideError;
use crate::scenario::{parse_set, PathError, Scenario, ScenarioError, ScenarioHeader, MAX_SCENARIO_BYTES};

/// Why a scenario cannot be loaded as asked, or its run gave nothing; the text names the flag.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("--set {0}")]
    Set(OverrideError),
    #[error("--profile {profile}: cannot read: {source}")]
    ProfileUnreadable { profile: String, source: std::io::Error },
    #[error("--profile {profile}: {source}")]
    ProfileText { profile: String, source: results::ResultsError },
    /// A profile file that does not parse (the error names the file).
    #[error("--profile {0}")]
    ProfileFile(PlatformError),
    /// No shipped profile of that name.
    #[error("--profile: {0}")]
    ProfileShipped(PlatformError),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error(transparent)]
    Shard(#[from] results::shard::ShardError),
    /// Every configuration failed: each reason once.
    #[error("every configuration failed, nothing was written:\n  {}", .0.join("\n  "))]
    EveryConfigFailed(Vec<String>),
}

/// A scenario (a file or a shipped name) with the command line's selection and overrides.
#[derive(Debug, Clone, Copy)]
pub struct Selection<'a> {
    pub scenario: &'a str,
    pub max_points: usize,
    /// `--set KEY=VALUE`, applied in order.
    pub sets: &'a [String],
    /// `--profile NAME|FILE`: replaces `platform.profile`.
    pub profile: Option<&'a str>,
    /// `--seeds N`: overrides `scenario.seeds`.
    pub seeds: Option<u64>,
    /// `--config NAME`: only these configurations.
    pub configs: &'a [String],
    /// `--shard I/N`.
    pub shard: Option<&'a str>,
}

impl Selection<'_> {
    /// Load the scenario and apply the selection and overrides, checking the point count.
    pub fn load(&self) -> Result<Scenario, SessionError> {
        let mut sc = Scenario::load(self.scenario)?;
        sc.max_points = self.max_points;
        let sets = self.sets.iter().map(|s| parse_set(s).map_err(SessionError::Set)).collect::<Result<Vec<_>, _>>()?;
        sc.apply_sets(&sets)?;
        if let Some(p) = self.profile {
            use_profile(&mut sc, p)?;
        }
        if let Some(n) = self.seeds {
            ScenarioHeader::check_seeds("command line", "--seeds", n)?;
            sc.header.seeds = n;
        }
        sc.select_configs(self.configs)?;
        if let Some(s) = self.shard {
            let (i, n) = results::shard::parse_shard(s)?;
            sc.set_shard(i, n)?;
        }
        sc.point_count()?;
        Ok(sc)
    }
}

/// `--profile`: point `platform.profile` at another profile. A file is made absolute (the
/// scenario layer resolves relative profile paths against the scenario's directory) and is
/// checked to parse here, so that a bad file is one error before anything runs.
fn use_profile(sc: &mut Scenario, p: &str) -> Result<(), SessionError> {
    let value = if p.ends_with(".toml") {
        let abs = std::fs::canonicalize(p).map_err(|source| SessionError::ProfileUnreadable { profile: p.into(), source })?;
        let text = results::read_text_capped(&abs, MAX_SCENARIO_BYTES).map_err(|source| SessionError::ProfileText { profile: p.into(), source })?;
        Platform::parse(&text, p).map_err(SessionError::ProfileFile)?;
        abs.display().to_string()
    } else {
        Platform::shipped(p).map_err(SessionError::ProfileShipped)?;
        p.to_string()
    };
    crate::scenario::set_path(&mut sc.doc, "platform.profile", toml::Value::String(value))?;
    sc.sets.push(("platform.profile".into(), p.into()));
    Ok(())
}

/// What a run keeps and whom it tells how far it got.
pub struct Options<'a> {
    /// Overrides `scenario.seed`.
    pub seed: Option<u64>,
    /// `--trace N`: sample paths kept per class and configuration.
    pub trace: usize,
    /// `--trace-at WHICH` (default: the first paths).
    pub trace_at: Option<TracePick>,
    /// Called with the total work of the run once, before anything runs.
    pub on_start: &'a (dyn Fn(u64) + Sync),
    /// Called with increments of work done.
    pub progress: &'a (dyn Fn(u64) + Sync),
}

/// A scenario's run, ready to write and print.
#[derive(Debug)]
pub struct SimRun {
    /// The result, without its provenance (the caller adds where it ran, with [`SimRun::details`]).
    pub result: RunResult,
    /// What the provenance records of this run: `set.<key>`, `configs`, and a shard's place.
    pub details: BTreeMap<String, String>,
    /// Sample paths per configuration name.
    pub traces: Vec<(String, Vec<Trace>)>,
    /// Simulated events over all points.
    pub events: u64,
    /// Wall-clock seconds of the run.
    pub wall_s: f64,
    /// Which paths were kept, and how many per class.
    pub pick: TracePick,
    pub keep_traces: usize,
}

/// Paths kept per class: `--trace N`; without it, one with `--trace-at` (one per listed round).
pub fn traces_kept(trace_at: Option<&TracePick>, trace: usize) -> usize {
    match (trace_at, trace) {
        (Some(TracePick::Rounds(r)), 0) => r.len(),
        (Some(_), 0) => 1,
        (_, n) => n,
    }
}

/// Run a loaded scenario ([`Selection::load`]).
pub fn run(sc: &Scenario, opts: &Options) -> Result<SimRun, SessionError> {
    let started = Instant::now();
    let pick = opts.trace_at.clone().unwrap_or(TracePick::First);
    let keep_traces = traces_kept(opts.trace_at.as_ref(), opts.trace);
    let out = run_scenario_picking(sc, &ScenarioOpts { seed: opts.seed, seeds: None, keep_traces, on_start: opts.on_start, progress: opts.progress }, &pick)?;
    let wall_s = started.elapsed().as_secs_f64();
    let details = details(sc, &out.indices, opts.seed)?;
    refuse_if_every_config_failed(&out.result)?;
    Ok(SimRun { result: out.result, details, traces: out.traces, events: out.events, wall_s, pick, keep_traces })
}

/// The run's details: the overrides, the chosen configurations, and for a shard its place
/// among all the points and the fingerprint `irqlab merge` checks.
fn details(sc: &Scenario, indices: &[usize], seed: Option<u64>) -> Result<BTreeMap<String, String>, ScenarioError> {
    let mut details = BTreeMap::new();
    for (k, v) in &sc.sets {
        details.insert(format!("set.{k}"), v.clone());
    }
    if !sc.selected.is_empty() {
        details.insert("configs".into(), sc.selected.join(" | "));
    }
    if let Some((i, n)) = sc.shard {
        details.insert("shard".into(), format!("{i}/{n}"));
        details.insert("points_total".into(), sc.point_count()?.to_string());
        let idx: Vec<String> = indices.iter().map(|i| i.to_string()).collect();
        details.insert("point_indices".into(), idx.join(","));
        details.extend(crate::shard::fingerprint(sc, seed.unwrap_or(sc.header.seed))?);
    }
    Ok(details)
}

/// Nothing ran: say each reason once.
fn refuse_if_every_config_failed(r: &RunResult) -> Result<(), SessionError> {
    let failed: Vec<&str> = r.failures().map(|f| f.1).collect();
    if !failed.is_empty() && failed.len() == r.configs.len() {
        let mut reasons: Vec<String> = failed.into_iter().map(String::from).collect();
        reasons.dedup();
        return Err(SessionError::EveryConfigFailed(reasons));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use results::{ConfigResult, ResultKind, RunMeta};

    use super::*;

    fn selection<'a>(sets: &'a [String], configs: &'a [String]) -> Selection<'a> {
        Selection { scenario: "kvm-x86-host", max_points: crate::scenario::DEFAULT_MAX_POINTS, sets, profile: None, seeds: None, configs, shard: None }
    }

    #[test]
    fn a_selection_names_the_flag_it_cannot_take() {
        let bad = ["workload.samples".to_string()];
        assert!(selection(&bad, &[]).load().unwrap_err().to_string().starts_with("--set "));
        let e = Selection { profile: Some("/nonexistent/host.toml"), ..selection(&[], &[]) }.load().unwrap_err();
        assert!(e.to_string().starts_with("--profile /nonexistent/host.toml: cannot read: "), "{e}");
        let e = Selection { profile: Some("no-such-profile"), ..selection(&[], &[]) }.load().unwrap_err();
        assert!(matches!(e, SessionError::ProfileShipped(_)) && e.to_string().starts_with("--profile: "), "{e}");
        let e = Selection { shard: Some("3/2"), ..selection(&[], &[]) }.load().unwrap_err();
        assert!(matches!(e, SessionError::Shard(_)), "{e}");
    }

    #[test]
    fn a_run_records_its_overrides_and_keeps_the_paths_asked_for() {
        let sets = ["workload.samples=300".to_string()];
        let sc = selection(&sets, &[]).load().unwrap();
        let r = run(&sc, &Options { seed: Some(7), trace: 0, trace_at: Some(TracePick::Rounds(vec![0, 2].into())), on_start: &|_| {}, progress: &|_| {} }).unwrap();
        assert_eq!(r.details.get("set.workload.samples").map(String::as_str), Some("300"));
        assert!(!r.details.contains_key("configs") && !r.details.contains_key("shard"), "{:?}", r.details);
        assert_eq!((r.keep_traces, r.result.configs.len()), (2, r.traces.len()));
        assert!(r.traces.iter().all(|t| !t.1.is_empty()) && r.events > 0);
        assert_eq!(r.result.meta.seed, 7);
        assert!(selection(&sets, &["no-such-configuration".to_string()]).load().is_err());
    }

    #[test]
    fn traces_kept_follow_trace_then_trace_at() {
        assert_eq!(traces_kept(None, 0), 0);
        assert_eq!(traces_kept(Some(&TracePick::Slowest), 0), 1);
        assert_eq!(traces_kept(Some(&TracePick::Rounds(vec![1, 5, 9].into())), 0), 3);
        assert_eq!(traces_kept(Some(&TracePick::Slowest), 4), 4);
    }

    #[test]
    fn a_run_in_which_every_configuration_failed_is_refused_with_each_reason_once() {
        let mut r = RunResult::new(RunMeta::named("t", "s", 0, ResultKind::Predicted));
        r.configs.push(ConfigResult::failed("a", BTreeMap::new(), "bad key".into()));
        r.configs.push(ConfigResult::failed("b", BTreeMap::new(), "bad key".into()));
        let e = refuse_if_every_config_failed(&r).unwrap_err();
        assert_eq!(e.to_string(), "every configuration failed, nothing was written:\n  bad key");
        r.configs.push(ConfigResult::new("c"));
        assert!(refuse_if_every_config_failed(&r).is_ok(), "one configuration ran: the result is written");
    }
}
