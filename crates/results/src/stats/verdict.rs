//! B/A for one statistic with its interval, and one word: faster, slower, or no difference
//! resolvable (the interval contains 1) — or no interval at all, and why.
//!
//! **One run per side.** Percentiles: the percentile bootstrap of the ratio, computed exactly from
//! each side's histogram counts ([`super::bootstrap`]; it replaced Price & Bonett's normal
//! approximation, which covered the truth in ~55 % of pairs where a percentile falls between two
//! modes). Means: the t-interval's standard errors, delta method on the log (the central limit
//! theorem, which holds for the mean of thousands of samples even when the shape is bimodal). A
//! percentile without enough samples (see [`super::order_ci::min_samples`]) and the extremes
//! (min, max, warm max: no distribution-free interval exists from one sample of them) get no
//! interval and the reason. All of this assumes the samples of a run are independent draws from
//! one distribution: **it cannot see run-to-run variance** (a host's state that moves between
//! boots, a model bimodal across seeds), which makes ~60 % of identical pairs look different
//! when runs vary by 5 %; only repetitions show it, and the verdict says so.
//!
//! **Across repetitions** (≥ 2 runs on each side) each run's statistic is one observation, and
//! the interval of ln(B/A) is Welch's t-interval for the difference of the mean log statistic
//! (Welch–Satterthwaite degrees of freedom; Welch, Biometrika 34, 1947). It is chosen over a
//! hierarchical bootstrap because with the usual 3–10 repetitions a bootstrap over runs sees at
//! most a few hundred distinct resamples and its percentile interval is too narrow by about
//! √((R−1)/R), while Welch's t widens with few runs as it should. A run's percentile already
//! carries its own sampling noise, so the between-run spread includes it.
//!
//! **Paired A B A B** (equal repetitions, run i of A and run i of B made one after the other):
//! the t-interval of the mean of the per-pair log ratios ln(b_i/a_i), R − 1 degrees of freedom —
//! a drift that moves both runs of a pair cancels, which Welch's unpaired interval counts as
//! noise ([`compare_paired`]).
//!
//! **One run against R ≥ 2** (repetitions on one side only): the single run is one more draw
//! of the same between-run law, so ln b − mean(ln a_i) has standard error s·√(1 + 1/R) with s
//! the repeated side's spread, t with R − 1 degrees of freedom (a prediction interval). It
//! assumes both sides vary alike between runs, which it says.
use crate::compare::summary_stat;
use crate::latency::{LatencyClass, Summary};

use super::bins::Bins;
use super::order_ci::{min_samples, percentile_of, quantile_ci, QuantileInterval};
use super::{bootstrap, mean_ci, Confidence, StatsError};

/// The statistics that get a verdict (count is the experiment's size, not a result): the names of
/// [`crate::vocab::stat::VERDICT`].
pub const VERDICT_STATS: [&str; 9] = crate::vocab::stat::names(crate::vocab::stat::VERDICT);

/// One side of a comparison for one latency class.
#[derive(Debug, Clone)]
pub struct ClassData {
    /// The whole distribution's summary (pooled over repetitions when there are some).
    pub summary: Summary,
    /// The whole distribution (pooled).
    pub bins: Bins,
    /// Each repetition's summary (empty or one: no repetitions).
    pub runs: Vec<Summary>,
}

impl ClassData {
    /// From a stored class (its histogram decoded) and its repetitions' summaries.
    pub fn from_class(name: &str, class: &LatencyClass, runs: Vec<Summary>) -> Result<ClassData, crate::ResultsError> {
        let h = class.histogram(name)?;
        Ok(ClassData { summary: class.summary.clone(), bins: Bins::from_histogram(&h), runs })
    }

    /// From raw samples (exact order statistics), no repetitions.
    pub fn from_samples(samples: &[u64]) -> ClassData {
        let mut rec = crate::LatencyRecorder::new(0);
        samples.iter().for_each(|&s| rec.record(s));
        ClassData { summary: rec.summary(), bins: Bins::from_samples(samples), runs: Vec::new() }
    }
}

/// The one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Word {
    /// B's statistic is resolvably lower than A's.
    Faster,
    /// B's statistic is resolvably higher.
    Slower,
    /// The interval contains 1, or there is none.
    NoDifference,
}

impl Word {
    pub fn as_str(self) -> &'static str {
        match self {
            Word::Faster => "faster",
            Word::Slower => "slower",
            Word::NoDifference => "no difference resolvable",
        }
    }
}

/// What the interval rests on, with what [`super::power`] needs to size a bigger experiment.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// One run per side: the samples' standard errors of the log statistic (for percentiles,
    /// the bootstrap's standard deviations); `between_modes` when a percentile's bootstrap law is
    /// two-point (it lies between two modes), where those do not scale as 1/√n.
    Within { n_a: u64, n_b: u64, se_a: f64, se_b: f64, between_modes: bool },
    /// Repetitions: the runs' standard deviations of the log statistic (one side with one run:
    /// its spread is taken to be the other side's).
    Between { runs_a: usize, runs_b: usize, sd_a: f64, sd_b: f64, df: f64 },
    /// Paired repetitions (A B A B): the standard deviation of the per-pair log ratios.
    Paired { pairs: usize, sd: f64, df: f64 },
    /// No interval; `reason` says why.
    None { reason: String },
}

impl Basis {
    /// Which analysis gave the interval, in a few words for the table.
    pub fn analysis(&self) -> String {
        match self {
            Basis::Within { .. } => "one run per side: cannot see run-to-run variance".into(),
            Basis::Between { runs_a: 1, runs_b, .. } => format!("1 run against {runs_b}, assuming equal run-to-run spread"),
            Basis::Between { runs_a, runs_b: 1, .. } => format!("{runs_a} runs against 1, assuming equal run-to-run spread"),
            Basis::Between { runs_a, runs_b, .. } => format!("Welch over {runs_a} + {runs_b} runs"),
            Basis::Paired { pairs, .. } => format!("paired over {pairs} A B pairs"),
            Basis::None { .. } => String::new(),
        }
    }
}

/// A statistic compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub stat: String,
    /// Point estimates (ns).
    pub a: f64,
    pub b: f64,
    /// B/A.
    pub ratio: f64,
    /// B/A's interval at the confidence asked.
    pub interval: Option<(f64, f64)>,
    pub word: Word,
    pub basis: Basis,
    /// The minimum samples a percentile needs (so the table can say why a p99.99 is not one).
    pub needs_samples: Option<u64>,
    /// The sample count that limits a percentile's interval: the smaller side's (one run per
    /// side) or the shortest run's (repetitions). With [`Self::needs_samples`] it says whether an
    /// interval exists at another level ([`super::gate`] asks at its corrected one).
    pub samples: u64,
    /// What would resolve the effect asked for, filled by [`super::pairs::Verdicts::recommend`]
    /// (issue 44 item 3: computed with the verdict, not while formatting it).
    pub needed: Option<super::power::Needed>,
}

impl Verdict {
    /// The word as shown: `no interval` when there is none (the reason is in the basis), so that
    /// "tested, the interval contains 1" and "could not be tested" never read alike.
    pub fn word_text(&self) -> &'static str {
        match (self.interval, self.word) {
            (None, _) => "no interval",
            (Some(_), w) => w.as_str(),
        }
    }

    fn word_of(interval: Option<(f64, f64)>) -> Word {
        match interval {
            Some((lo, _)) if lo > 1.0 => Word::Slower,
            Some((_, hi)) if hi < 1.0 => Word::Faster,
            _ => Word::NoDifference,
        }
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if a == b {
        1.0
    } else {
        b / a
    }
}

/// Compare statistic `stat` of B against A at confidence `conf`.
pub fn compare_stat(a: &ClassData, b: &ClassData, stat: &str, conf: Confidence) -> Result<Verdict, StatsError> {
    if !VERDICT_STATS.contains(&stat) {
        return Err(StatsError::UnknownStat(stat.into()));
    }
    let p = percentile_of(stat);
    let needs_samples = p.map(|p| min_samples(p, conf));
    if a.runs.len() >= 2 || b.runs.len() >= 2 {
        return Ok(between_runs(a, b, stat, conf, needs_samples, false));
    }
    let va = summary_stat(&a.summary, stat).expect("known stat");
    let vb = summary_stat(&b.summary, stat).expect("known stat");
    let mk = |interval: Option<(f64, f64)>, basis: Basis| Verdict {
        stat: stat.into(),
        a: va,
        b: vb,
        ratio: ratio(va, vb),
        interval,
        word: Verdict::word_of(interval),
        basis,
        needs_samples,
        samples: a.bins.count().min(b.bins.count()),
        needed: None,
    };
    let none = |reason: String| mk(None, Basis::None { reason });
    if va <= 0.0 || vb <= 0.0 {
        return Ok(none("a value of 0 has no ratio".into()));
    }
    let z = conf.z();
    let (n_a, n_b) = (a.bins.count(), b.bins.count());
    let (se_a, se_b) = if let Some(p) = p {
        match (quantile_ci(&a.bins, p, conf), quantile_ci(&b.bins, p, conf)) {
            (QuantileInterval::Ci(_), QuantileInterval::Ci(_)) => {
                let Some(boot) = bootstrap::quantile_ratio(&a.bins, &b.bins, p, conf) else {
                    return Ok(none("a side has no samples".into()));
                };
                let basis = Basis::Within { n_a, n_b, se_a: boot.sd_a, se_b: boot.sd_b, between_modes: boot.between_modes };
                return Ok(mk(Some((boot.lo, boot.hi)), basis));
            }
            (ia, ib) => {
                let (n, needed) = match (ia, ib) {
                    (QuantileInterval::TooFew { n, needed }, _) | (_, QuantileInterval::TooFew { n, needed }) => (n, needed),
                    _ => unreachable!("one side has too few samples"),
                };
                return Ok(none(format!("too few samples: {stat} needs {needed} at {}, a side has {n}", pct(conf))));
            }
        }
    } else if stat == "mean" {
        match (mean_ci::mean_se(&a.bins), mean_ci::mean_se(&b.bins)) {
            (Some(sa), Some(sb)) => (sa / va, sb / vb),
            _ => return Ok(none("a mean of fewer than 2 samples has no interval".into())),
        }
    } else {
        return Ok(none(format!("{stat} of one run has no distribution-free interval; repeat the runs (--repeat / --seeds)")));
    };
    let centre = (vb / va).ln();
    let half = z * (se_a * se_a + se_b * se_b).sqrt();
    let basis = Basis::Within { n_a, n_b, se_a, se_b, between_modes: false };
    let interval = Some(((centre - half).exp(), (centre + half).exp()));
    Ok(mk(interval, basis))
}

fn pct(conf: Confidence) -> String {
    format!("{}%", (conf.level() * 1000.0).round() / 10.0)
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// Compare statistic `stat` of B against A from paired repetitions: run i of A and run i of B
/// were made one after the other (A B A B). Falls back to [`compare_stat`] when the sides do not
/// have the same number (≥ 2) of runs.
pub fn compare_paired(a: &ClassData, b: &ClassData, stat: &str, conf: Confidence) -> Result<Verdict, StatsError> {
    if a.runs.len() != b.runs.len() || a.runs.len() < 2 {
        return compare_stat(a, b, stat, conf);
    }
    let p = percentile_of(stat);
    let needs_samples = p.map(|p| min_samples(p, conf));
    Ok(between_runs(a, b, stat, conf, needs_samples, true))
}

fn between_runs(a: &ClassData, b: &ClassData, stat: &str, conf: Confidence, needs_samples: Option<u64>, paired: bool) -> Verdict {
    // A side without repetitions is its one run.
    let runs = |d: &ClassData| if d.runs.is_empty() { vec![d.summary.clone()] } else { d.runs.clone() };
    let (ra, rb) = (runs(a), runs(b));
    let vals = |rs: &[Summary]| -> Vec<f64> { rs.iter().map(|s| summary_stat(s, stat).expect("known stat")).collect() };
    let (xa, xb) = (vals(&ra), vals(&rb));
    let gm = |v: &[f64]| (v.iter().map(|x| x.max(f64::MIN_POSITIVE).ln()).sum::<f64>() / v.len() as f64).exp();
    let (ga, gb) = (gm(&xa), gm(&xb));
    let shortest = ra.iter().chain(&rb).map(|s| s.count).min().unwrap_or(0);
    let mut v = Verdict {
        stat: stat.into(),
        a: ga,
        b: gb,
        ratio: ratio(ga, gb),
        interval: None,
        word: Word::NoDifference,
        basis: Basis::None { reason: String::new() },
        needs_samples,
        samples: shortest,
        needed: None,
    };
    if let Some(need) = needs_samples.filter(|&need| shortest < need) {
        v.basis = Basis::None { reason: format!("too few samples: {stat} needs {need} per run at {}, a run has {shortest}", pct(conf)) };
        return v;
    }
    if xa.iter().chain(&xb).any(|&x| x <= 0.0 || !x.is_finite()) {
        v.basis = Basis::None { reason: "a run's value of 0 has no ratio".into() };
        return v;
    }
    let la: Vec<f64> = xa.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = xb.iter().map(|x| x.ln()).collect();
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let (centre, se, df, basis) = if paired {
        let d: Vec<f64> = lb.iter().zip(&la).map(|(b, a)| b - a).collect();
        let (m, s) = mean_sd(&d);
        let df = na - 1.0;
        (m, s / na.sqrt(), df, Basis::Paired { pairs: d.len(), sd: s, df })
    } else if na < 2.0 || nb < 2.0 {
        // one run against R: a prediction interval from the repeated side's spread
        let (one, many) = if na < 2.0 { (la[0], &lb) } else { (lb[0], &la) };
        let (m, s) = mean_sd(many);
        let r = many.len() as f64;
        let centre = if na < 2.0 { m - one } else { one - m };
        let df = r - 1.0;
        (centre, s * (1.0 + 1.0 / r).sqrt(), df, Basis::Between { runs_a: la.len(), runs_b: lb.len(), sd_a: s, sd_b: s, df })
    } else {
        let ((ma, sa), (mb, sb)) = (mean_sd(&la), mean_sd(&lb));
        let (va, vb) = (sa * sa / na, sb * sb / nb);
        let se = (va + vb).sqrt();
        let df = if se == 0.0 { f64::INFINITY } else { (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0)) };
        (mb - ma, se, df, Basis::Between { runs_a: la.len(), runs_b: lb.len(), sd_a: sa, sd_b: sb, df })
    };
    let half = if se == 0.0 { 0.0 } else { conf.t(df) * se };
    v.interval = Some(((centre - half).exp(), (centre + half).exp()));
    v.word = Verdict::word_of(v.interval);
    v.basis = basis;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c95() -> Confidence {
        Confidence::default()
    }

    fn uniform(n: u64, base: u64, step: u64) -> ClassData {
        ClassData::from_samples(&(0..n).map(|i| base + (i * 7919) % n * step).collect::<Vec<_>>())
    }

    #[test]
    fn a_clear_shift_is_slower_and_its_reverse_faster() {
        let a = uniform(10_000, 1000, 1);
        let b = uniform(10_000, 1200, 1);
        let v = compare_stat(&a, &b, "p50", c95()).unwrap();
        assert_eq!(v.word, Word::Slower, "{v:?}");
        let (lo, hi) = v.interval.unwrap();
        assert!(lo < v.ratio && v.ratio < hi && lo > 1.0);
        assert_eq!(compare_stat(&b, &a, "p50", c95()).unwrap().word, Word::Faster);
        assert_eq!(compare_stat(&a, &b, "mean", c95()).unwrap().word, Word::Slower);
        assert_eq!(compare_stat(&a, &a, "p99", c95()).unwrap().word, Word::NoDifference);
    }

    #[test]
    fn too_few_samples_and_extremes_get_a_reason_not_a_number() {
        let a = uniform(5_000, 1000, 1);
        let v = compare_stat(&a, &a, "p99.99", c95()).unwrap();
        assert!(v.interval.is_none());
        assert!(matches!(&v.basis, Basis::None { reason } if reason.contains("36887")), "{v:?}");
        let v = compare_stat(&a, &uniform(5_000, 9000, 1), "max", c95()).unwrap();
        assert_eq!(v.word, Word::NoDifference);
        assert!(compare_stat(&a, &a, "count", c95()).is_err());
    }

    fn runs(values: &[u64]) -> ClassData {
        let mut d = uniform(1000, 1000, 1);
        d.runs = values.iter().map(|&v| Summary { count: 1000, p50: v, p99: v, max: v, mean: v as f64, ..Default::default() }).collect();
        d
    }

    #[test]
    fn repetitions_use_the_between_run_spread() {
        // A's runs 100 ± 2, B's 110 ± 2: resolvably slower, and max gets a verdict too
        let (a, b) = (runs(&[98, 100, 102, 99, 101]), runs(&[108, 110, 112, 109, 111]));
        let v = compare_stat(&a, &b, "p50", c95()).unwrap();
        assert_eq!(v.word, Word::Slower);
        assert!(matches!(v.basis, Basis::Between { runs_a: 5, runs_b: 5, .. }));
        assert_eq!(compare_stat(&a, &b, "max", c95()).unwrap().word, Word::Slower);
        // the same means with a spread as large as the difference: unresolved
        let (a, b) = (runs(&[80, 120, 100, 90, 110]), runs(&[90, 130, 110, 100, 120]));
        assert_eq!(compare_stat(&a, &b, "p50", c95()).unwrap().word, Word::NoDifference);
        // runs too short for p99.99
        let v = compare_stat(&a, &b, "p99.99", c95()).unwrap();
        assert!(v.interval.is_none());
    }
}
