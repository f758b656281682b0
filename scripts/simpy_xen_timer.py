"""SimPy peer of irqlab's S3 path (scenarios/xen-arm-zynq-timer.toml, configuration vwfi=trap):
Xen on Arm, pinned vCPU, credit1 scheduler (as S3 ran), the guest's WFI trapped, so each timer
interrupt finds the pCPU idle and pays the full wake-up and context switch. Same cost
distributions as the scenario (its calibrated costs over the zynq-ultrascale-a53 profile) and the
same event structure as irqlab's model (five events per round: timer, Xen's IRQ entry done,
switch-in and delivery done, handler done, WFI trap done; each event's segments summed).
Warm rounds only (no cold first round, no warm-up), so the mean matches
irqlab's warm figures, not its first-round MAX.

    python3 simpy_xen_timer.py N [SEED]   -> prints "interrupts N wall S rate R mean_ns M"
"""
import math
import random
import sys
import time

import simpy

Z99 = 2.3263478740408408  # standard normal 99th percentile


def lognormal(median_ns, p99_ns):
    """Lognormal from median and p99, as sim::engine::dist::CostDist::lognormal."""
    return (math.log(median_ns), math.log(p99_ns / median_ns) / Z99)


# (segment, distribution) in path order; ("c", ns) constant, ("u", lo, hi) uniform,
# ("ln", mu, sigma) lognormal. Values: crates/sim/platforms/zynq-ultrascale-a53.toml with the
# scenario's calibrated [platform.costs] overrides (xen_irq_handler, sched), scheduler credit1.
# The paths are those of crates/sim/src/models/xen_core (`irqlab sim xen-arm-zynq-timer --config
# vwfi=trap --trace 2` prints the first two): five events per round, as irqlab's model has.
GIC_REGS = 4 + 3  # list registers + GICH_HCR, GICH_VMCR, GICH_APR saved/restored by MMIO
IRQ_ENTRY = [  # the physical timer interrupt wakes the idle pCPU; Xen wakes the vCPU
    ("phys-irq", ("c", 50.0)),
    ("idle-wakeup", ("u", 150.0, 350.0)),
    ("xen-irq-handler", ("ln",) + lognormal(775.75, 838.648)),
    ("vcpu-wake", ("ln",) + lognormal(300.0, 360.0)),
    ("runq-tickle", ("ln",) + lognormal(300.0, 360.0)),  # credit1_wake
]
SWITCH_IN = [  # schedule() picks the vCPU, restores it, injects, the guest acks
    ("sched", ("ln",) + lognormal(1235.243, 1482.291)),
    ("sched-pick", ("ln",) + lognormal(400.0, 480.0)),  # credit1_schedule
    ("context-restore", ("ln",) + lognormal(300.0, 360.0)),
    ("gic-restore", ("c", 100.0 * GIC_REGS)),
    ("lr-write", ("c", 100.0)),
    ("eret", ("ln",) + lognormal(300.0, 360.0)),
    ("guest-ack", ("c", 103.0)),
]
HANDLER = [  # tbm's handler; re-arming the physical timer (CNTP_CVAL) traps
    ("guest-handler", ("ln",) + lognormal(500.0, 700.0)),
    ("sysreg-trap", ("ln",) + lognormal(1000.0, 1200.0)),
]
WFI_TRAP = [  # WFI traps: block the vCPU, schedule() switches to idle
    ("trap-to-el2", ("ln",) + lognormal(350.0, 430.0)),
    ("vcpu-block", ("ln",) + lognormal(400.0, 500.0)),
    ("sched", ("ln",) + lognormal(1235.243, 1482.291)),
    ("sched-pick", ("ln",) + lognormal(400.0, 480.0)),
    ("context-save", ("ln",) + lognormal(400.0, 480.0)),
    ("gic-save", ("c", 100.0 * GIC_REGS)),
]
PERIOD_NS = 500_000_000.0  # tbm's 0.5 s period


def draw(rng, d):
    if d[0] == "c":
        return d[1]
    if d[0] == "u":
        return rng.uniform(d[1], d[2])
    return rng.lognormvariate(d[1], d[2])


def path(rng, segments):
    return sum(draw(rng, d) for _, d in segments)


def guest(env, rng, n, stats):
    for _ in range(n):
        yield env.timeout(PERIOD_NS - (env.now % PERIOD_NS))  # timer fires
        fired = env.now
        yield env.timeout(path(rng, IRQ_ENTRY))
        yield env.timeout(path(rng, SWITCH_IN))
        lat = env.now - fired
        stats[0] += lat
        stats[1] = min(stats[1], lat)
        stats[2] = max(stats[2], lat)
        yield env.timeout(path(rng, HANDLER))
        yield env.timeout(path(rng, WFI_TRAP))  # WFI traps: block, switch to idle


def main():
    n = int(sys.argv[1])
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    env = simpy.Environment()
    stats = [0.0, math.inf, 0.0]
    env.process(guest(env, rng, n, stats))
    t0 = time.perf_counter()
    env.run()
    wall = time.perf_counter() - t0
    print(f"interrupts {n} wall {wall:.3f} rate {n / wall:.4g} mean_ns {stats[0] / n:.1f} min_ns {stats[1]:.1f} max_ns {stats[2]:.1f}")


if __name__ == "__main__":
    main()
