//! Published figures a scenario is checked against, and how the result compares.
//!
//! Every reference has a role: `fit` figures were used to calibrate the model's costs (their
//! residuals show only that the fit converged), `check` figures were never used to calibrate
//! anything (their errors are what the model predicts). Reports keep the two apart.
use serde::{Deserialize, Serialize};

/// What a published figure was used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReferenceRole {
    /// Used to calibrate the model: a residual, not a prediction.
    Fit,
    /// Held out: never used to calibrate; the error is a prediction error.
    Check,
}

impl ReferenceRole {
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceRole::Fit => "fit",
            ReferenceRole::Check => "check",
        }
    }
}

/// One published figure and the model's value for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceOutcome {
    pub config: String,
    /// Latency class, empty for figures.
    #[serde(default)]
    pub class: String,
    pub stat: String,
    /// Denominator configuration of a `ratio:` stat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over: Option<String>,
    pub role: ReferenceRole,
    pub published: f64,
    /// Relative tolerance (0.15 = ±15 %).
    pub tolerance: f64,
    pub source: String,
    /// The model's value, when it has one: with several seeds, the median over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<f64>,
    /// When the configuration ran with several seeds (`seeds = N`, `--seeds N`): the statistic's
    /// median (= `model`), minimum and maximum over them. A tail statistic such as MAX or
    /// WARM_MAX is one sample; judging it on the median over seeds keeps one rare collision in
    /// one seed from deciding the verdict, and the range shows how much the seed matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_seeds: Option<crate::Spread>,
    /// Why there is no model value (the configuration was not run, or failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

impl ReferenceOutcome {
    /// model / published − 1.
    pub fn deviation(&self) -> Option<f64> {
        self.model.map(|v| v / self.published - 1.0)
    }

    /// Within tolerance (false when there is no model value).
    pub fn within(&self) -> bool {
        matches!(self.model, Some(v) if (v - self.published).abs() <= self.tolerance * self.published.abs())
    }

    /// Whether the configuration simply was not part of this run (e.g. `--config` chose others).
    pub fn not_run(&self) -> bool {
        self.model.is_none() && self.missing.as_deref().is_some_and(|m| m.starts_with("not run"))
    }

    /// The verdict every output shows (the terminal tables of `sim` and `fit`, the HTML report,
    /// the CSV's `ref.*.status`, `sim --check`): one place decides it.
    pub fn status(&self) -> ReferenceStatus {
        if self.not_run() {
            ReferenceStatus::NotRun
        } else if self.within() {
            ReferenceStatus::Within
        } else {
            ReferenceStatus::Out
        }
    }
}

/// A reference's verdict. A configuration that ran and failed has no model value and is
/// [`ReferenceStatus::Out`]: only one that was not part of the run is [`ReferenceStatus::NotRun`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceStatus {
    Within,
    Out,
    NotRun,
}

impl ReferenceStatus {
    /// The word shown for it: `ok`, `OUT` (capitals, to stand out in a column), `not run`.
    pub fn word(self) -> &'static str {
        match self {
            ReferenceStatus::Within => "ok",
            ReferenceStatus::Out => "OUT",
            ReferenceStatus::NotRun => "not run",
        }
    }
}
