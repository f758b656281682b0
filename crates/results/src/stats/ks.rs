//! Two-sample Kolmogorov–Smirnov test: does B's whole distribution differ from A's?
//!
//! Percentiles can all agree while the shape moves (a bimodal B against a unimodal A); the KS
//! statistic D = sup |F_A(x) − F_B(x)| looks at every value at once. D is evaluated at every bin
//! edge of either side (HDR buckets of one configuration share their edges); the p-value is the
//! asymptotic Kolmogorov distribution `Q(λ) = 2 Σ (−1)^(k−1) exp(−2k²λ²)` with Stephens'
//! small-sample correction `λ = (√nₑ + 0.12 + 0.11/√nₑ)·D`, nₑ = n_a·n_b/(n_a + n_b)
//! (Stephens, J. R. Statist. Soc. B 32, 1970). The series is written out here because `statrs`
//! has no Kolmogorov distribution. Binned or tied values make the test conservative (D can only
//! shrink), and like every within-run method it assumes independent samples: pooled repetitions
//! that differ run to run make it reject more often than its level.
use super::bins::Bins;

/// The test's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KsTest {
    /// sup |F_A − F_B|.
    pub d: f64,
    pub p_value: f64,
    /// The value at which the distance is largest.
    pub at: u64,
}

impl KsTest {
    /// Whether the distributions differ at `1 − level` significance.
    pub fn differs(&self, level: f64) -> bool {
        self.p_value < 1.0 - level
    }
}

/// Kolmogorov's survival function Q(λ).
pub fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    for k in 1..=100 {
        let term = (-2.0 * (k * k) as f64 * lambda * lambda).exp();
        sum += if k % 2 == 1 { term } else { -term };
        if term < 1e-16 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// The test; `None` when a side is empty.
pub fn ks_two_sample(a: &Bins, b: &Bins) -> Option<KsTest> {
    let (na, nb) = (a.count(), b.count());
    if na == 0 || nb == 0 {
        return None;
    }
    let mut edges: Vec<u64> = a.bins().iter().chain(b.bins()).map(|x| x.hi).collect();
    edges.sort_unstable();
    edges.dedup();
    let (mut d, mut at) = (0.0f64, 0u64);
    for x in edges {
        let diff = (a.count_le(x) as f64 / na as f64 - b.count_le(x) as f64 / nb as f64).abs();
        if diff > d {
            d = diff;
            at = x;
        }
    }
    let ne = (na as f64 * nb as f64) / (na + nb) as f64;
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    Some(KsTest { d, p_value: kolmogorov_q(lambda), at })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_the_kolmogorov_distribution() {
        // Q(1.358) ≈ 0.05 and Q(1.628) ≈ 0.01: the textbook critical values
        assert!((kolmogorov_q(1.358) - 0.05).abs() < 5e-4);
        assert!((kolmogorov_q(1.628) - 0.01).abs() < 2e-4);
        assert_eq!(kolmogorov_q(0.0), 1.0);
    }

    #[test]
    fn same_distribution_passes_and_a_shift_or_reshape_fails() {
        let a = Bins::from_samples(&(0..4000u64).map(|i| (i * 7919) % 4000).collect::<Vec<_>>());
        let same = Bins::from_samples(&(0..4000u64).map(|i| (i * 104_729 + 3) % 4000).collect::<Vec<_>>());
        let t = ks_two_sample(&a, &same).unwrap();
        assert!(!t.differs(0.95) && t.d < 1e-9, "{t:?}");
        let shifted = Bins::from_samples(&(0..4000u64).map(|i| (i * 7919) % 4000 + 200).collect::<Vec<_>>());
        let t = ks_two_sample(&a, &shifted).unwrap();
        assert!(t.differs(0.95) && (t.d - 0.05).abs() < 1e-3, "{t:?}");
        // same median, different shape: half the mass at each end
        let split = Bins::from_samples(&(0..4000u64).map(|i| if i % 2 == 0 { 1000 } else { 3000 }).collect::<Vec<_>>());
        assert!(ks_two_sample(&a, &split).unwrap().d > 0.2);
        assert!(ks_two_sample(&a, &Bins::default()).is_none());
    }
}
