//! The statistic names, defined once (issue 44 item 2): the latency statistics of a class's
//! summary, its sample count, and the share of samples beyond a threshold (exceedance, issue 45
//! item 5). Before, the nine names were spelled out in four places — the verdicts and the compare
//! table (`results`), the sweep tables (`report`), the scenario references (`sim`) — and a tenth
//! name had to be added to each. The lists the crates use ([`VERDICT`], [`COMPARED`],
//! [`LATENCY`]) are built here from the one enum, with their names as `&'static str` arrays
//! ([`names`]) for the places that speak text (flags, CSV headers, JSON keys).
use std::fmt;

use crate::latency::Summary;

/// One statistic of a latency class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stat {
    /// Sample count (the experiment's size, not a result).
    Count,
    Mean,
    Min,
    P50,
    P90,
    P99,
    P999,
    P9999,
    Max,
    /// The maximum after the warm-up samples.
    WarmMax,
    /// The share of samples beyond `above_ns` (`share>T`; T in ns): [`crate::stats::exceedance`].
    Share {
        above_ns: u64,
    },
}

/// The statistics that get a verdict (`compare`, the gate).
pub const VERDICT: [Stat; 9] = [Stat::Mean, Stat::Min, Stat::P50, Stat::P90, Stat::P99, Stat::P999, Stat::P9999, Stat::Max, Stat::WarmMax];
/// The statistics of the side-by-side compare table (count first).
pub const COMPARED: [Stat; 10] = [Stat::Count, Stat::Mean, Stat::Min, Stat::P50, Stat::P90, Stat::P99, Stat::P999, Stat::P9999, Stat::Max, Stat::WarmMax];
/// The latency statistics a table, a sweep or a reference may name.
pub const LATENCY: [Stat; 9] = VERDICT;

/// The names of `stats` (every one has a fixed name: no [`Stat::Share`]).
pub const fn names<const N: usize>(stats: [Stat; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = match stats[i].fixed_name() {
            Some(n) => n,
            None => panic!("a share has no fixed name"),
        };
        i += 1;
    }
    out
}

impl Stat {
    /// The name of a statistic other than a share (`p99.9`, `warm_max`).
    pub const fn fixed_name(self) -> Option<&'static str> {
        Some(match self {
            Stat::Count => "count",
            Stat::Mean => "mean",
            Stat::Min => "min",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P999 => "p99.9",
            Stat::P9999 => "p99.99",
            Stat::Max => "max",
            Stat::WarmMax => "warm_max",
            Stat::Share { .. } => return None,
        })
    }

    /// The percentile's fraction (`p99.9` → 0.999); `None` for the others.
    pub fn percentile(self) -> Option<f64> {
        Some(match self {
            Stat::P50 => 0.5,
            Stat::P90 => 0.9,
            Stat::P99 => 0.99,
            Stat::P999 => 0.999,
            Stat::P9999 => 0.9999,
            _ => return None,
        })
    }

    /// The value in a class's summary (latencies in ns); `None` for a share (it needs the
    /// distribution, not the summary).
    pub fn of(self, s: &Summary) -> Option<f64> {
        Some(match self {
            Stat::Count => s.count as f64,
            Stat::Mean => s.mean,
            Stat::Min => s.min as f64,
            Stat::P50 => s.p50 as f64,
            Stat::P90 => s.p90 as f64,
            Stat::P99 => s.p99 as f64,
            Stat::P999 => s.p999 as f64,
            Stat::P9999 => s.p9999 as f64,
            Stat::Max => s.max as f64,
            Stat::WarmMax => s.warm_max as f64,
            Stat::Share { .. } => return None,
        })
    }

    /// A statistic by name: a fixed name, or `share>T` with T a latency (`150us`, ns without a
    /// unit: [`crate::stats::exceedance::parse_threshold`]).
    pub fn parse(name: &str) -> Option<Stat> {
        if let Some(t) = name.strip_prefix("share>") {
            return crate::stats::exceedance::parse_threshold(t).ok().map(|above_ns| Stat::Share { above_ns });
        }
        COMPARED.into_iter().find(|s| s.fixed_name() == Some(name))
    }
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.fixed_name(), self) {
            (Some(n), _) => f.write_str(n),
            (None, Stat::Share { above_ns }) => write!(f, "share>{above_ns}"),
            (None, _) => unreachable!("only a share has no fixed name"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_and_the_lists_agree() {
        for s in COMPARED {
            assert_eq!(Stat::parse(&s.to_string()), Some(s));
        }
        assert_eq!(Stat::parse("share>150us"), Some(Stat::Share { above_ns: 150_000 }));
        assert_eq!(Stat::Share { above_ns: 150_000 }.to_string(), "share>150000");
        assert_eq!(Stat::parse("p42"), None);
        assert_eq!(names(VERDICT), ["mean", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max", "warm_max"]);
        assert_eq!(names(COMPARED)[1..], names(VERDICT)[..]);
        let sum = Summary { count: 7, p999: 42, warm_max: 9, ..Default::default() };
        assert_eq!((Stat::Count.of(&sum), Stat::P999.of(&sum), Stat::WarmMax.of(&sum)), (Some(7.0), Some(42.0), Some(9.0)));
        assert_eq!(Stat::P999.percentile(), Some(0.999));
        assert_eq!(Stat::Max.percentile(), None);
    }
}
