//! x86: LAPIC, x2APIC destinations, posted interrupts, APICv, PV IPI.
