//! From raw guest records to latencies: the main class of each benchmark, the counter offset
//! between guest and host, and each timer sample's deadline recovered from the guest's records.
//! Pure functions over numbers: tested without /dev/kvm.
use crate::config::{Bench, BenchConfig, DISCARDED_FIRST};
use crate::measurement::{Ended, Measurement};
use crate::tracefs::split::Stamps;

/// Check the guest TSC against the host: the guest stores its TSC at entry; it must fall between
/// host readings taken before the vCPUs start and when the entry value is first seen. `entry` is
/// the value seen then: every vCPU stores its own entry TSC in the same slot, and a later vCPU's
/// would fall outside the bracket.
pub fn tsc_offset(entry: u64, before: u64, after: u64) -> (i64, String) {
    if entry == 0 {
        return (0, "guest entry TSC not seen; offset assumed 0".into());
    }
    if entry >= before && entry <= after {
        (0, format!("guest TSC at entry within host bracket [+0, +{}] cycles: offset 0", after - before))
    } else {
        let off = entry as i64 - ((before / 2 + after / 2) as i64);
        (off, format!("guest TSC outside the host bracket: estimated offset {off} cycles (corrected)"))
    }
}

pub use crate::measurement::main_cycles;

/// Where a timer sample's deadline comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadlines {
    /// Each record starts with its deadline (arm64, armguest ABI 4).
    InRecords,
    /// Recovered backwards from the last one the guest armed (x86; see `timer_stamps`).
    FromExpect { expect: u64, delta: u64, finished: bool },
}

/// Turn the drained records into latencies in ns: the first [`DISCARDED_FIRST`] are dropped, and
/// a run stopped by --stop-above ends at the sample that crossed.
pub fn collect(raw: &[[u64; 3]], cfg: &BenchConfig, deadlines: Deadlines, offset: i64, m: &mut Measurement) {
    let count = raw.len() as u64;
    let ns = |cycles: i64| cycles as f64 * 1e6 / m.tsc_khz as f64;
    let keep = match m.ended {
        Some(Ended::Above { index }) => index as usize + 1,
        _ => usize::MAX,
    };
    let kept = |v: Vec<f64>| v.into_iter().skip(DISCARDED_FIRST as usize).take(keep).collect::<Vec<f64>>();
    let main: Vec<f64> = raw.iter().map(|r| ns(main_cycles(cfg.kind, r, offset))).collect();
    let stamps = match cfg.kind {
        Bench::Timer => {
            m.classes.push(("timer".into(), kept(main)));
            match deadlines {
                Deadlines::InRecords => {
                    raw.iter().map(|r| Stamps { start: r[0].wrapping_sub(offset as u64), arrival: r[0].wrapping_add(r[1]).wrapping_sub(offset as u64) }).collect()
                }
                Deadlines::FromExpect { expect, delta, finished } => timer_stamps(expect, delta, count, finished, &|k| raw[k as usize][1], offset),
            }
        }
        Bench::Device => {
            m.classes.push((format!("device_{}", cfg.via.name()), kept(main)));
            raw.iter().map(|r| Stamps { start: r[0], arrival: r[1].wrapping_sub(offset as u64) }).collect()
        }
        Bench::Ipi => {
            let rt: Vec<f64> = raw.iter().map(|r| ns(r[2] as i64 - r[0] as i64)).collect();
            m.classes.push(("ipi_one_way".into(), kept(main)));
            m.classes.push(("ipi_round_trip".into(), kept(rt)));
            raw.iter().map(|r| Stamps { start: r[0].wrapping_sub(offset as u64), arrival: r[1].wrapping_sub(offset as u64) }).collect()
        }
    };
    m.stamps = stamps.into_iter().skip(DISCARDED_FIRST as usize).take(keep).collect();
}

/// Each timer sample's deadline and arrival in host TSC cycles. The guest records only latencies
/// (arrival − deadline) and arms the next deadline at arrival + `delta`, so the deadlines follow
/// backwards from the last one it armed (`expect`): deadline(k) = deadline(k+1) − delta − latency(k).
/// `finished`: the guest stopped after its last sample without arming another deadline.
fn timer_stamps(expect: u64, delta: u64, count: u64, finished: bool, latency: &dyn Fn(u64) -> u64, offset: i64) -> Vec<Stamps> {
    let mut out = Vec::with_capacity(count as usize);
    let mut next = expect; // deadline of sample `count` (or of the last sample, when finished)
    for k in (0..count).rev() {
        let deadline = if finished && k == count - 1 { next } else { next.wrapping_sub(delta).wrapping_sub(latency(k)) };
        out.push(Stamps { start: deadline.wrapping_sub(offset as u64), arrival: deadline.wrapping_add(latency(k)).wrapping_sub(offset as u64) });
        next = deadline;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_deadlines_follow_from_the_last_one() {
        // deadlines 100, 1130, 2150; latencies 30, 20, 25; delta 1000.
        let lat = [30u64, 20, 25];
        let want = [(100, 130), (1130, 1150), (2150, 2175)].map(|(start, arrival)| Stamps { start, arrival });
        assert_eq!(timer_stamps(2150, 1000, 3, true, &|k| lat[k as usize], 0), want);
        // Stopped early: the guest had armed deadline 3175 for a fourth sample.
        assert_eq!(timer_stamps(3175, 1000, 3, false, &|k| lat[k as usize], 0), want);
        assert_eq!(timer_stamps(2160, 1000, 3, true, &|k| lat[k as usize], 10)[0], Stamps { start: 100, arrival: 130 });
    }

    #[test]
    fn the_counter_offset_is_found_from_the_entry_bracket() {
        assert_eq!(tsc_offset(150, 100, 200).0, 0);
        let (off, note) = tsc_offset(10_150, 100, 200);
        assert_eq!(off, 10_000);
        assert!(note.contains("estimated offset 10000"), "{note}");
        assert_eq!(tsc_offset(0, 100, 200).0, 0);
    }

    #[test]
    fn main_class_per_bench() {
        assert_eq!(main_cycles(Bench::Timer, &[0, 42, 0], 0), 42);
        assert_eq!(main_cycles(Bench::Device, &[1000, 1500, 0], 100), 400, "arrival − offset − trigger");
        assert_eq!(main_cycles(Bench::Ipi, &[1000, 1300, 1900], 0), 300, "one-way");
    }
}
