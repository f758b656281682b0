//! How big an experiment would resolve a given effect (`compare --effect 5%`).
//!
//! The interval of ln(B/A) has half-width `q·se`; a true effect of size e (ln(1 + e) on the log
//! scale) is resolved with probability [`POWER`] when `(q + z_power)·se ≤ ln(1 + e)` (the usual
//! normal-approximation sample-size formula, e.g. Chow, Shao & Wang, *Sample Size Calculations in
//! Clinical Research*, §3.2). Standard errors scale as 1/√n, so:
//! - within one run per side, the samples per run n with both sides equal:
//!   `n = (se_a²·n_a + se_b²·n_b) · ((z + z_power) / ln(1 + e))²`, and never fewer than the
//!   percentile's own minimum ([`super::order_ci::min_samples`]);
//! - across repetitions, the runs per side R with s² the mean of the two runs' variances of the
//!   log statistic: `R = 2s² · ((t_{2R−2} + z_power) / ln(1 + e))²`, solved by iteration;
//! - paired A B A B, the pairs R with s the spread of the per-pair log ratios:
//!   `R = s² · ((t_{R−1} + z_power) / ln(1 + e))²`.
//!
//! Where there is no interval because a percentile has too few samples, the only honest figure
//! is the minimum for *any* interval ([`Needed::AtLeastSamples`]); how many would resolve the
//! effect is unknown until an interval's width has been seen, and the wording says so.
//!
//! Where a percentile lies between two modes (its bootstrap law is two-point, [`Basis::Within`]'s
//! `between_modes`), the spread is that of a jump between the modes, which more samples do not
//! shrink as 1/√n: the formula above would print a meaningless ~64 million, so the answer is
//! [`Needed::BetweenModes`], which says why (issue 45 item 4).
//!
//! These are estimates from the current experiment's spread, not guarantees.
use super::verdict::{Basis, Verdict};
use super::{normal_quantile, Confidence};

/// The probability of resolving an effect of the size asked for.
pub const POWER: f64 = 0.8;

/// What would resolve an effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needed {
    /// Samples in each run (one run per side).
    SamplesPerRun(u64),
    /// Repetitions per side.
    RunsPerSide(u64),
    /// A B pairs (paired repetitions).
    Pairs(u64),
    /// The minimum samples per run for any interval of this percentile (not what resolves the
    /// effect: that needs a first interval to scale from).
    AtLeastSamples(u64),
    /// No size can be estimated: the percentile lies between two modes (issue 45 item 4).
    BetweenModes,
}

impl Needed {
    pub fn describe(self) -> String {
        match self {
            Needed::SamplesPerRun(n) => format!("~{n} samples per run"),
            Needed::RunsPerSide(r) => format!("~{r} runs per side"),
            Needed::Pairs(r) => format!("~{r} A B pairs"),
            Needed::AtLeastSamples(n) => format!("at least {n} samples per run for any interval"),
            Needed::BetweenModes => "no sample size can be estimated: the percentile lies between two modes, where a resampled value jumps from one to the other (a two-point law, whose spread does not shrink as 1/√n); a share beyond a threshold between the modes (`--fail-on slower:share>T`) resolves such changes".into(),
        }
    }

    /// Whether this is a size that resolves the effect asked for (not only a minimum).
    pub fn resolves_effect(self) -> bool {
        !matches!(self, Needed::AtLeastSamples(_) | Needed::BetweenModes)
    }
}

/// What would resolve a relative effect `effect` (> 0) on `v`'s statistic; `None` when the
/// verdict has no spread to scale (an extreme of one run: repeat the runs first).
pub fn needed(v: &Verdict, effect: f64, conf: Confidence) -> Option<Needed> {
    let target = (1.0 + effect).ln();
    let zp = normal_quantile(POWER);
    match &v.basis {
        Basis::Within { between_modes: true, .. } => Some(Needed::BetweenModes),
        Basis::Within { n_a, n_b, se_a, se_b, .. } => {
            let k = ((conf.z() + zp) / target).powi(2);
            let n = (se_a * se_a * *n_a as f64 + se_b * se_b * *n_b as f64) * k;
            let n = n.ceil().max(v.needs_samples.unwrap_or(2) as f64).max(2.0);
            Some(Needed::SamplesPerRun(n.min(u64::MAX as f64) as u64))
        }
        Basis::Between { sd_a, sd_b, .. } => {
            let s2 = (sd_a * sd_a + sd_b * sd_b) / 2.0;
            Some(Needed::RunsPerSide(solve_runs(|r| 2.0 * s2 * ((conf.t(2.0 * r - 2.0) + zp) / target).powi(2))))
        }
        Basis::Paired { sd, .. } => Some(Needed::Pairs(solve_runs(|r| sd * sd * ((conf.t(r - 1.0) + zp) / target).powi(2)))),
        Basis::None { .. } => v.needs_samples.filter(|&n| v.interval.is_none() && n > 0).map(Needed::AtLeastSamples),
    }
}

/// The fixed point R = f(R) from R = 2 (at most 50 steps, R ≥ 2).
fn solve_runs(f: impl Fn(f64) -> f64) -> u64 {
    let mut r = 2.0f64;
    for _ in 0..50 {
        let next = f(r).ceil().max(2.0);
        if next == r {
            break;
        }
        r = next;
    }
    r.min(u64::MAX as f64) as u64
}

#[cfg(test)]
mod tests {
    use super::super::verdict::{compare_stat, ClassData};
    use super::*;

    fn data(n: u64, base: u64) -> ClassData {
        // uniform over base .. base + 2000 whatever n
        ClassData::from_samples(&(0..n).map(|i| base + i * 2000 / n).collect::<Vec<_>>())
    }

    #[test]
    fn smaller_effects_need_more_samples_and_more_samples_resolve_them() {
        let c = Confidence::default();
        let (a, b) = (data(2_000, 10_000), data(2_000, 10_050));
        let v = compare_stat(&a, &b, "p50", c).unwrap();
        assert_eq!(v.word.as_str(), "no difference resolvable", "{v:?}");
        let Some(Needed::SamplesPerRun(n5)) = needed(&v, 0.05, c) else { panic!() };
        let Some(Needed::SamplesPerRun(n1)) = needed(&v, 0.01, c) else { panic!() };
        assert!(n1 > 20 * n5 && n1 < 30 * n5, "1 % needs ~25x the samples of 5 %: {n1} vs {n5}");
        // a p50 change of 0.5 % (50 in 10,000, uniform over 2,000 values wide) at the size asked
        let Some(Needed::SamplesPerRun(n)) = needed(&v, 0.005, c) else { panic!() };
        let (a, b) = (data(n, 10_000), data(n, 10_000 + 50));
        assert_eq!(compare_stat(&a, &b, "p50", c).unwrap().word.as_str(), "slower", "{n} samples");
    }

    #[test]
    fn a_percentile_between_two_modes_gets_no_size() {
        // 99 % near 10 µs, 1 % near 100 µs: p99 on the edge (issue 45 item 4)
        let gap = |n: u64| ClassData::from_samples(&(0..n).map(|i| if i % 100 == 0 { 100_000 + i % 7 } else { 10_000 + i % 13 }).collect::<Vec<_>>());
        let c = Confidence::default();
        let v = compare_stat(&gap(20_000), &gap(20_000), "p99", c).unwrap();
        assert_eq!(needed(&v, 0.05, c), Some(Needed::BetweenModes), "{v:?}");
        assert!(Needed::BetweenModes.describe().contains("between two modes") && !Needed::BetweenModes.resolves_effect());
        // p50 of the same data is in the fast mode and gets a size
        let v = compare_stat(&gap(20_000), &gap(20_000), "p50", c).unwrap();
        assert!(matches!(needed(&v, 0.05, c), Some(Needed::SamplesPerRun(_))), "{v:?}");
    }

    #[test]
    fn too_few_samples_names_the_minimum() {
        let v = compare_stat(&data(1000, 10), &data(1000, 10), "p99.99", Confidence::default()).unwrap();
        assert_eq!(needed(&v, 0.05, Confidence::default()), Some(Needed::AtLeastSamples(36887)));
        assert_eq!(Needed::AtLeastSamples(36887).describe(), "at least 36887 samples per run for any interval");
        assert!(!Needed::AtLeastSamples(1).resolves_effect() && Needed::SamplesPerRun(1).resolves_effect());
    }
}
