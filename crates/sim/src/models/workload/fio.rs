//! A fio-like random-read workload and the block device it reads from, reusable by any model
//! that delivers completion interrupts.
//!
//! - [`FioJob`]: block size, `iodepth` (I/Os a job keeps in flight) and `numjobs` (threads, one
//!   per vCPU/CPU). The four jobs of S1, the GICv4 direct-LPI RFC for Xen on Arm, xen-devel, Feb 2026 are named `4k-qd1`, `16k-qd1`, `4k-qd4`,
//!   `4k-qd1-nj4` ([`FioJob::named`]).
//! - [`BlockDevice`]: an NVMe-backed network volume (EBS gp3-like): every read takes a service
//!   time drawn from a 4 KiB latency distribution plus a per-KiB transfer term, and the volume
//!   admits at most `iops` I/Os per second and `throughput` bytes per second (a provisioned
//!   limit: each I/O occupies the admission pipe for max(1/iops, bytes/throughput), I/Os queue
//!   behind it). One completion interrupt (MSI) per I/O, raised when its service ends.
//!
//! Where the numbers come from is the platform profile's business (`ebs_*` keys); this file
//! only has the mechanics.
use crate::engine::{CostDist, SimRng, SimTime};

/// One fio job description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FioJob {
    pub block_kib: u32,
    pub iodepth: u32,
    pub numjobs: u32,
}

impl FioJob {
    /// The S1 jobs (S1, the GICv4 direct-LPI RFC for Xen on Arm, xen-devel, Feb 2026: "4k iodepth=1; 16k iodepth=1; 4k iodepth=4; 4k iodepth=1
    /// numjobs=4").
    pub const S1: [(&'static str, FioJob); 4] = [
        ("4k-qd1", FioJob { block_kib: 4, iodepth: 1, numjobs: 1 }),
        ("16k-qd1", FioJob { block_kib: 16, iodepth: 1, numjobs: 1 }),
        ("4k-qd4", FioJob { block_kib: 4, iodepth: 4, numjobs: 1 }),
        ("4k-qd1-nj4", FioJob { block_kib: 4, iodepth: 1, numjobs: 4 }),
    ];

    pub fn named(name: &str) -> Option<FioJob> {
        Self::S1.iter().find(|(n, _)| *n == name).map(|(_, j)| *j)
    }

    pub fn names() -> String {
        Self::S1.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
    }

    pub fn bytes(&self) -> u64 {
        self.block_kib as u64 * 1024
    }
}

/// The volume's service model.
#[derive(Debug, Clone)]
pub struct DeviceSpec {
    /// Service time of a 4 KiB random read (submission doorbell to MSI write).
    pub read_4k: CostDist,
    /// Extra service time per KiB above 4 KiB.
    pub per_kib_ns: f64,
    /// Provisioned IOPS.
    pub iops: f64,
    /// Provisioned throughput, bytes per second.
    pub throughput: f64,
}

/// A block device with a provisioned-rate admission pipe.
#[derive(Debug, Clone)]
pub struct BlockDevice {
    spec: DeviceSpec,
    /// When the admission pipe is next free.
    next_free: SimTime,
    /// I/Os that waited for the provisioned limit.
    pub throttled: u64,
}

impl BlockDevice {
    pub fn new(spec: DeviceSpec) -> Self {
        BlockDevice { spec, next_free: SimTime::ZERO, throttled: 0 }
    }

    /// A read of `bytes` submitted at `now`: when its completion interrupt is raised. Calls
    /// should come in submission order; a model that books a few submissions µs ahead (a guest
    /// handler resubmitting) may reorder them slightly, which only matters if the provisioned
    /// limit binds.
    pub fn submit(&mut self, now: SimTime, bytes: u64, rng: &mut SimRng) -> SimTime {
        let start = if self.next_free > now {
            self.throttled += 1;
            self.next_free
        } else {
            now
        };
        let pipe_s = (1.0 / self.spec.iops).max(bytes as f64 / self.spec.throughput);
        self.next_free = start + SimTime::from_ns_f64(pipe_s * 1e9);
        let kib_over = (bytes as f64 / 1024.0 - 4.0).max(0.0);
        start + self.spec.read_4k.sample(rng) + SimTime::from_ns_f64(kib_over * self.spec.per_kib_ns)
    }
}

/// One I/O in flight.
#[derive(Debug, Clone, Copy)]
pub struct InFlight {
    pub submitted: SimTime,
    /// When the device raised its completion (posted the CQE and wrote the MSI).
    pub completed: SimTime,
}

/// A job thread's completion queue: I/Os in flight and completions posted but not yet reaped.
#[derive(Debug, Clone, Default)]
pub struct JobQueue {
    pub posted: Vec<InFlight>,
    pub in_flight: u32,
}

impl JobQueue {
    /// Take every completion posted at or before `now` (what an NVMe interrupt handler reaps)
    /// into `out` (cleared first; a buffer the caller reuses), in posting order.
    pub fn reap_into(&mut self, now: SimTime, out: &mut Vec<InFlight>) {
        out.clear();
        self.posted.retain(|c| {
            let done = c.completed <= now;
            if done {
                out.push(*c);
            }
            !done
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::RngStreams;

    fn spec(iops: f64) -> DeviceSpec {
        DeviceSpec { read_4k: CostDist::constant_ns(500_000.0), per_kib_ns: 1000.0, iops, throughput: 1e12 }
    }

    #[test]
    fn s1_jobs_are_named() {
        assert_eq!(FioJob::named("4k-qd4"), Some(FioJob { block_kib: 4, iodepth: 4, numjobs: 1 }));
        assert_eq!(FioJob::named("4k-qd1-nj4").unwrap().numjobs, 4);
        assert_eq!(FioJob::named("16k-qd1").unwrap().bytes(), 16384);
        assert!(FioJob::named("8k").is_none());
    }

    #[test]
    fn service_grows_with_size_and_the_limit_throttles() {
        let mut rng = RngStreams::new(1).stream("d");
        let mut d = BlockDevice::new(spec(1e9));
        let small = d.submit(SimTime::ZERO, 4096, &mut rng);
        let big = d.submit(SimTime::ZERO, 16384, &mut rng);
        assert!(big > small, "16 KiB takes longer than 4 KiB");
        // 1000 IOPS: ten I/Os at once complete 1 ms apart.
        let mut d = BlockDevice::new(spec(1000.0));
        let t: Vec<SimTime> = (0..10).map(|_| d.submit(SimTime::ZERO, 4096, &mut rng)).collect();
        assert_eq!(d.throttled, 9);
        assert_eq!(t[9] - t[0], SimTime::from_us(9000));
    }

    #[test]
    fn reap_takes_only_posted_completions() {
        let mut q = JobQueue::default();
        let at = |us| InFlight { submitted: SimTime::ZERO, completed: SimTime::from_us(us) };
        q.posted = vec![at(5), at(20), at(10)];
        let mut got = vec![at(99)];
        q.reap_into(SimTime::from_us(10), &mut got);
        let us = |v: &[InFlight]| v.iter().map(|c| c.completed.ps() / 1_000_000).collect::<Vec<_>>();
        assert_eq!(us(&got), [5, 10]);
        assert_eq!(us(&q.posted), [20]);
    }
}
