//! A latency distribution as sorted bins, the input every interval and test here reads.
//!
//! Raw samples give one bin per distinct value (exact); an HDR histogram gives one bin per
//! recorded bucket, `lo..=hi` being the values the bucket stands for
//! (`Histogram::lowest_equivalent` / `highest_equivalent`, hdrhistogram 7.5). An order statistic
//! read from a bucket is known only to lie in that range, so intervals built on bins widen to the
//! bucket's edges and state the bucket's relative width as their resolution: with irqlab's 3
//! significant digits that is at most 1/1024 of the value (about 0.1 %).
use hdrhistogram::Histogram;

/// Values `lo..=hi` holding `count` samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bin {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
}

impl Bin {
    /// A representative value: the middle of the bucket (the value itself when exact).
    pub fn mid(&self) -> f64 {
        (self.lo as f64 + self.hi as f64) / 2.0
    }
}

/// Sorted, non-overlapping bins with cumulative counts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bins {
    bins: Vec<Bin>,
    /// `cum[i]` = samples in bins `0..=i`.
    cum: Vec<u64>,
}

impl Bins {
    fn from_sorted(bins: Vec<Bin>) -> Bins {
        let mut total = 0u64;
        let cum = bins.iter().map(|b| {
            total += b.count;
            total
        });
        let cum = cum.collect();
        Bins { bins, cum }
    }

    /// Exact bins from raw samples (any order).
    pub fn from_samples(samples: &[u64]) -> Bins {
        let mut v = samples.to_vec();
        v.sort_unstable();
        let mut bins: Vec<Bin> = Vec::new();
        for x in v {
            match bins.last_mut() {
                Some(b) if b.lo == x => b.count += 1,
                _ => bins.push(Bin { lo: x, hi: x, count: 1 }),
            }
        }
        Bins::from_sorted(bins)
    }

    /// The recorded buckets of an HDR histogram.
    pub fn from_histogram(h: &Histogram<u64>) -> Bins {
        let bins = h
            .iter_recorded()
            .map(|v| {
                let hi = v.value_iterated_to();
                Bin { lo: h.lowest_equivalent(hi), hi, count: v.count_at_value() }
            })
            .collect();
        Bins::from_sorted(bins)
    }

    /// Several distributions pooled (bins with equal edges merged; HDR histograms of one
    /// configuration share their edges, raw samples are exact).
    pub fn pooled<'a>(parts: impl IntoIterator<Item = &'a Bins>) -> Bins {
        let mut all: Vec<Bin> = parts.into_iter().flat_map(|b| b.bins.iter().copied()).collect();
        all.sort_by_key(|b| (b.lo, b.hi));
        let mut out: Vec<Bin> = Vec::with_capacity(all.len());
        for b in all {
            match out.last_mut() {
                Some(last) if last.lo == b.lo && last.hi == b.hi => last.count += b.count,
                _ => out.push(b),
            }
        }
        Bins::from_sorted(out)
    }

    pub fn bins(&self) -> &[Bin] {
        &self.bins
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.cum.last().copied().unwrap_or(0)
    }

    /// Whether every bin is a single value (raw samples, or a histogram of small integers).
    pub fn is_exact(&self) -> bool {
        self.bins.iter().all(|b| b.lo == b.hi)
    }

    /// The bin holding the `k`-th smallest sample (1-based, `1..=count`).
    pub fn at_rank(&self, k: u64) -> Option<&Bin> {
        if k == 0 || k > self.count() {
            return None;
        }
        let i = self.cum.partition_point(|&c| c < k);
        self.bins.get(i)
    }

    /// Samples at or below `x`, counting a bin wholly when `x ≥ hi` (the CDF at bin edges).
    pub fn count_le(&self, x: u64) -> u64 {
        let i = self.bins.partition_point(|b| b.hi <= x);
        if i == 0 {
            0
        } else {
            self.cum[i - 1]
        }
    }

    /// Mean and sample standard deviation from bin midpoints.
    pub fn mean_sd(&self) -> (f64, f64) {
        let n = self.count() as f64;
        if n == 0.0 {
            return (f64::NAN, f64::NAN);
        }
        let mean = self.bins.iter().map(|b| b.mid() * b.count as f64).sum::<f64>() / n;
        let ss = self.bins.iter().map(|b| (b.mid() - mean).powi(2) * b.count as f64).sum::<f64>();
        (mean, if n > 1.0 { (ss / (n - 1.0)).sqrt() } else { f64::NAN })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_cdf_of_raw_samples() {
        let b = Bins::from_samples(&[5, 1, 3, 3, 9]);
        assert_eq!(b.count(), 5);
        assert!(b.is_exact());
        let at = |k| b.at_rank(k).map(|x| x.lo);
        assert_eq!((at(1), at(2), at(3), at(4), at(5), at(6), at(0)), (Some(1), Some(3), Some(3), Some(5), Some(9), None, None));
        assert_eq!((b.count_le(0), b.count_le(3), b.count_le(8), b.count_le(100)), (0, 3, 4, 5));
        let (m, sd) = b.mean_sd();
        assert!((m - 4.2).abs() < 1e-12 && (sd - 3.0331501776206204).abs() < 1e-9);
    }

    #[test]
    fn histogram_buckets_carry_their_edges() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).unwrap();
        for v in [100u64, 100_000, 100_001, 100_040] {
            h.record(v).unwrap();
        }
        let b = Bins::from_histogram(&h);
        assert_eq!(b.count(), 4);
        let top = b.at_rank(4).unwrap();
        assert!(top.lo <= 100_040 && 100_040 <= top.hi && top.hi > top.lo, "{top:?}");
        assert!((top.hi - top.lo + 1) as f64 / top.lo as f64 <= 1.0 / 1024.0 + 1e-9);
        assert_eq!(b.at_rank(1).unwrap().lo, 100);
        let pooled = Bins::pooled([&b, &b]);
        assert_eq!((pooled.count(), pooled.bins().len()), (8, b.bins().len()));
    }
}
