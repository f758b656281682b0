//! How one cost or parameter is written in a profile or scenario file.
use serde::Deserialize;

use crate::engine::{CostDist, DistError};

/// Where a number comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// Taken from a paper, mailing-list measurement or vendor document.
    Published,
    /// Measured by irqlab on a named host.
    Measured,
    /// Computed from published or measured numbers (the formula is in `source`).
    Derived,
    /// Fitted so that a scenario reproduces a published result.
    Calibrated,
    /// An informed guess; nobody has measured it.
    Guess,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Published => "published",
            Basis::Measured => "measured",
            Basis::Derived => "derived",
            Basis::Calibrated => "calibrated",
            Basis::Guess => "guess",
        }
    }
}

/// A cost entry. The distribution kind is given by `dist` or inferred from which fields are set:
/// `ns` or `cycles` → constant; `min_ns`+`max_ns` → uniform; `mean_ns`+`sd_ns` → normal;
/// `median_ns`+`p99_ns` → lognormal; `values_ns` → empirical.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostSpec {
    pub dist: Option<String>,
    pub ns: Option<f64>,
    pub cycles: Option<f64>,
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub mean_ns: Option<f64>,
    pub sd_ns: Option<f64>,
    pub median_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub values_ns: Option<Vec<f64>>,
    pub source: String,
    pub basis: Basis,
}

/// A numeric platform parameter (e.g. the number of list registers), with its source.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub value: f64,
    pub source: String,
    pub basis: Basis,
}

/// Why a cost entry does not make a distribution; the text says what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CostSpecError {
    #[error("`source` must say where this number comes from")]
    NoSource,
    #[error("expected exactly one of: ns | cycles | min_ns+max_ns | mean_ns+sd_ns | median_ns+p99_ns | values_ns; got [{0}]")]
    Fields(String),
    #[error("dist = \"{kind}\" needs `{field}`")]
    Needs { kind: String, field: &'static str },
    #[error("`cycles` needs the profile's cpu_ghz > 0")]
    NoCpuGhz,
    #[error("dist = \"constant\" needs exactly one of `ns` or `cycles`")]
    Constant,
    #[error("unknown dist \"{0}\", expected one of constant, uniform, normal, lognormal, empirical")]
    UnknownDist(String),
    #[error(transparent)]
    Dist(#[from] DistError),
}

impl CostSpec {
    /// Turn the entry into a validated distribution. `cpu_ghz` converts `cycles`.
    pub fn to_dist(&self, cpu_ghz: f64) -> Result<CostDist, CostSpecError> {
        if self.source.trim().is_empty() {
            return Err(CostSpecError::NoSource);
        }
        let set = [
            ("ns", self.ns.is_some()),
            ("cycles", self.cycles.is_some()),
            ("min_ns", self.min_ns.is_some()),
            ("max_ns", self.max_ns.is_some()),
            ("mean_ns", self.mean_ns.is_some()),
            ("sd_ns", self.sd_ns.is_some()),
            ("median_ns", self.median_ns.is_some()),
            ("p99_ns", self.p99_ns.is_some()),
            ("values_ns", self.values_ns.is_some()),
        ];
        let given: Vec<&str> = set.iter().filter(|s| s.1).map(|s| s.0).collect();
        let kind = match self.dist.as_deref() {
            Some(k) => k.to_string(),
            None => match given.as_slice() {
                ["ns"] | ["cycles"] => "constant".into(),
                ["min_ns", "max_ns"] => "uniform".into(),
                ["mean_ns", "sd_ns"] => "normal".into(),
                ["median_ns", "p99_ns"] => "lognormal".into(),
                ["values_ns"] => "empirical".into(),
                _ => return Err(CostSpecError::Fields(given.join(", "))),
            },
        };
        let need = |v: Option<f64>, field: &'static str| v.ok_or_else(|| CostSpecError::Needs { kind: kind.clone(), field });
        let dist = match kind.as_str() {
            "constant" => match (self.ns, self.cycles) {
                (Some(ns), None) => CostDist::Constant { ns },
                (None, Some(c)) => {
                    if !(cpu_ghz > 0.0) {
                        return Err(CostSpecError::NoCpuGhz);
                    }
                    CostDist::Constant { ns: c / cpu_ghz }
                }
                _ => return Err(CostSpecError::Constant),
            },
            "uniform" => CostDist::Uniform { min_ns: need(self.min_ns, "min_ns")?, max_ns: need(self.max_ns, "max_ns")? },
            "normal" => CostDist::Normal { mean_ns: need(self.mean_ns, "mean_ns")?, sd_ns: need(self.sd_ns, "sd_ns")? },
            "lognormal" => CostDist::lognormal(need(self.median_ns, "median_ns")?, need(self.p99_ns, "p99_ns")?),
            "empirical" => CostDist::Empirical { values_ns: self.values_ns.clone().ok_or_else(|| CostSpecError::Needs { kind: kind.clone(), field: "values_ns" })? },
            other => return Err(CostSpecError::UnknownDist(other.into())),
        };
        dist.validate()?;
        Ok(dist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_text: &str) -> CostSpec {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn infers_kind_from_fields() {
        let s = spec("median_ns = 10\np99_ns = 20\nsource = \"x\"\nbasis = \"guess\"");
        assert_eq!(s.to_dist(1.0).unwrap(), CostDist::lognormal(10.0, 20.0));
        let s = spec("cycles = 2500\nsource = \"x\"\nbasis = \"published\"");
        assert_eq!(s.to_dist(2.5).unwrap(), CostDist::Constant { ns: 1000.0 });
    }

    #[test]
    fn rejects_negative_ambiguous_and_unsourced() {
        let e = spec("ns = -3\nsource = \"x\"\nbasis = \"guess\"").to_dist(1.0).unwrap_err().to_string();
        assert!(e.contains("non-negative"), "{e}");
        let e = spec("ns = 3\nmedian_ns = 4\nsource = \"x\"\nbasis = \"guess\"").to_dist(1.0).unwrap_err().to_string();
        assert!(e.contains("exactly one of"), "{e}");
        let e = spec("ns = 3\nsource = \" \"\nbasis = \"guess\"").to_dist(1.0).unwrap_err().to_string();
        assert!(e.contains("source"), "{e}");
        assert!(toml::from_str::<CostSpec>("ns = 3\nsource = \"x\"\nbasis = \"rumour\"").is_err());
        assert!(toml::from_str::<CostSpec>("ns = 3\nsource = \"x\"").is_err(), "basis is required");
    }
}
