//! Straight-line paths shared by the per-sample models (`kvm-arm64-sgi`, `xen-arm-dom0less`):
//! a path is a list of named costs; running it samples each cost once (scaled by a cache factor)
//! and pushes it onto the interrupt's trace. No time inside beyond the samples.
use crate::engine::{CostDist, SimRng, SimTime, Trace};

/// One named segment of a path.
pub type Seg<'a> = (&'static str, &'a CostDist);

/// Sample every segment of `path` onto `t` (each × `scale`); returns the path's duration.
pub fn run(path: &[Seg], scale: f64, rng: &mut SimRng, t: &mut Trace) -> SimTime {
    let mut total = SimTime::ZERO;
    for (name, d) in path {
        let mut ns = d.sample_ns(rng);
        if scale != 1.0 {
            ns *= scale;
        }
        let dur = SimTime::from_ns_f64(ns);
        t.push(name, dur);
        total += dur;
    }
    total
}

/// The first round(s) pay `cold_factor`, later ones 1.
pub fn cold_scale(round: u64, cold_rounds: u64, cold_factor: f64) -> f64 {
    if round < cold_rounds {
        cold_factor
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    #[test]
    fn a_path_is_the_sum_of_its_segments_and_scales() {
        let a = CostDist::constant_ns(100.0);
        let b = CostDist::constant_ns(250.0);
        let mut rng = RngStreams::new(1).stream("t");
        let mut t = Trace::new("x", SimTime::ZERO);
        assert_eq!(run(&[("a", &a), ("b", &b)], 1.0, &mut rng, &mut t), SimTime::from_ns_f64(350.0));
        assert_eq!(t.total(), SimTime::from_ns_f64(350.0));
        let mut t2 = Trace::new("x", SimTime::ZERO);
        assert_eq!(run(&[("a", &a)], 2.0, &mut rng, &mut t2), SimTime::from_ns_f64(200.0));
        assert_eq!((cold_scale(0, 1, 1.4), cold_scale(1, 1, 1.4)), (1.4, 1.0));
    }
}
