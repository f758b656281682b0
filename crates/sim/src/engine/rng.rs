//! Seeded randomness with one independent stream per component.
//!
//! Every component (a device, a vCPU's guest, a cost distribution) draws from its own ChaCha8
//! stream, selected by a stable hash of its name. Adding a component or drawing more numbers in
//! one never perturbs another's sequence, which keeps sweeps comparable point to point.
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp1};

/// FNV-1a 64-bit: a stable hash (std's hasher is not guaranteed stable across releases).
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64 finaliser, used to mix a seed with a hash.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derive a child seed from a parent seed and a label (e.g. a sweep point's parameters).
pub fn derive_seed(parent: u64, label: &str) -> u64 {
    mix(parent ^ stable_hash(label.as_bytes()))
}

/// Factory for named, independent random streams under one seed.
#[derive(Debug, Clone)]
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The stream for component `name`: same seed + same name → same sequence.
    pub fn stream(&self, name: &str) -> SimRng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(stable_hash(name.as_bytes()));
        SimRng(rng)
    }
}

/// A component's random stream.
#[derive(Debug, Clone)]
pub struct SimRng(ChaCha8Rng);

impl SimRng {
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe for logarithms.
    #[inline]
    pub fn f64_open0(&mut self) -> f64 {
        1.0 - self.f64()
    }

    /// Uniform integer in [0, n). n must be > 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        // Lemire's multiply-shift; bias is < n / 2^64, negligible for simulation.
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Standard normal deviate (rand_distr's ziggurat, fast path inlined: [`super::normal`]).
    #[inline]
    pub fn standard_normal(&mut self) -> f64 {
        super::normal::standard_normal(&mut self.0)
    }

    /// Exponential deviate with the given mean (rand_distr's ziggurat).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        let e: f64 = Exp1.sample(&mut self.0);
        mean * e
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_names_independent() {
        let s = RngStreams::new(42);
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("dev");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("dev");
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = s.stream("vcpu0");
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = RngStreams::new(43).stream("dev");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn stable_hash_is_fnv1a() {
        assert_eq!(stable_hash(b""), 0xcbf29ce484222325);
        assert_eq!(stable_hash(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn derived_seeds_differ_per_label() {
        assert_ne!(derive_seed(1, "vwfi=trap"), derive_seed(1, "vwfi=native"));
        assert_eq!(derive_seed(1, "vwfi=trap"), derive_seed(1, "vwfi=trap"));
    }

    #[test]
    fn moments_are_plausible() {
        let mut r = RngStreams::new(7).stream("m");
        let n = 200_000;
        let (mut s, mut s2, mut e) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = r.standard_normal();
            s += z;
            s2 += z * z;
            e += r.exponential(3.0);
        }
        let mean = s / n as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((s2 / n as f64 - 1.0).abs() < 0.02);
        assert!((e / n as f64 - 3.0).abs() < 0.05);
        let below: Vec<u64> = (0..1000).map(|_| r.below(10)).collect();
        assert!(below.iter().all(|v| *v < 10));
        assert!((0..10).all(|k| below.contains(&k)));
    }
}
