//! A DEBUG hypervisor build (Xen `CONFIG_DEBUG`: assertions, extra checks, no inlining of some
//! paths) modelled as a multiplier on the costs of code that runs in the hypervisor. S3, the Xen Project blog 'Xen on ARM interrupt latency', March 2017:
//! "the DEBUG build option adds latency; disable it for production and measurements". The size of
//! the factor is not published: it is a scenario parameter (guess).
use crate::engine::CostDist;

/// Multiplier on hypervisor-path costs; 1.0 for a release build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DebugBuild {
    pub multiplier: f64,
}

impl DebugBuild {
    pub const RELEASE: DebugBuild = DebugBuild { multiplier: 1.0 };

    /// `Err` with the expectation when the factor is impossible.
    pub fn new(multiplier: f64) -> Result<Self, &'static str> {
        if multiplier.is_finite() && multiplier >= 1.0 {
            Ok(DebugBuild { multiplier })
        } else {
            Err("a factor >= 1 (1 = release build)")
        }
    }

    /// Apply to a hypervisor-path cost (guest-side and hardware costs are not scaled).
    pub fn hyp(&self, d: CostDist) -> CostDist {
        if self.multiplier == 1.0 {
            d
        } else {
            d.scaled(self.multiplier)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_only_when_debug() {
        let d = CostDist::constant_ns(100.0);
        assert_eq!(DebugBuild::RELEASE.hyp(d.clone()), d);
        assert_eq!(DebugBuild::new(1.5).unwrap().hyp(d), CostDist::constant_ns(150.0));
        assert!(DebugBuild::new(0.5).is_err());
        assert!(DebugBuild::new(f64::NAN).is_err());
    }
}
