//! Arm: GIC distributor/redistributor, list registers, ITS, GICv4 vPEs, generic timer.
