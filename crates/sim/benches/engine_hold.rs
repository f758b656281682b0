//! The classic "hold" benchmark of an event queue: keep N events pending; each step pops the
//! earliest and schedules one new event a random (exponential) time later. Target (issue 2):
//! at least 20 million events per second on one core with N = 1,000.
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use sim::engine::{EventQueue, RngStreams, SimTime};

const PENDING: usize = 1_000;
const STEPS: u64 = 1_000_000;

fn setup() -> (EventQueue<u32>, sim::engine::SimRng) {
    let mut rng = RngStreams::new(1).stream("hold");
    let mut q = EventQueue::with_capacity(PENDING + 1);
    for i in 0..PENDING as u32 {
        q.schedule_at(SimTime::from_ps(rng.exponential(1_000_000.0) as u64), i);
    }
    (q, rng)
}

fn hold(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.throughput(Throughput::Elements(STEPS));
    g.sample_size(20);
    g.bench_function("hold_1000_exponential", |b| {
        b.iter_batched(
            setup,
            |(mut q, mut rng)| {
                for _ in 0..STEPS {
                    let (_, ev) = q.pop().unwrap();
                    q.schedule_in(SimTime::from_ps(rng.exponential(1_000_000.0) as u64), ev);
                }
                q
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("hold_1000_uniform", |b| {
        b.iter_batched(
            setup,
            |(mut q, mut rng)| {
                for _ in 0..STEPS {
                    let (_, ev) = q.pop().unwrap();
                    q.schedule_in(SimTime::from_ps(rng.below(2_000_000)), ev);
                }
                q
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, hold);
criterion_main!(benches);
