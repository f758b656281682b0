//! The guest-timed primitives, from the guest's records (`guest/x86_64/bench.S`, `prim_main`).
//!
//! Every bracket in the guest is `rdtsc; mov; three set-up instructions; [op]; rdtsc`, so:
//! - `guest_insn`: the empty bracket over its five emulated instruction slots — the cost of one
//!   guest ring-0 instruction on a host that emulates them (kvm_pvm; docs/kvm-x86-host.md);
//! - `exit_cpuid`, `exit_msr`, `exit_pio`, `exit_icr`: each op's bracket minus the median empty
//!   bracket — CPUID (`kvm_emulate_cpuid`), WRMSR IA32_TSC_DEADLINE = 0
//!   (`kvm_set_lapic_tscdeadline_msr`), OUT to the probe port (KVM_EXIT_IO to the VMM and
//!   KVM_RUN again: `complete_fast_pio_out`), x2APIC ICR write to an absent APIC ID
//!   (`kvm_x2apic_icr_write` → `kvm_apic_send_ipi`, no target). Linux 6.x arch/x86/kvm.
//!
//! The median, not each sample's own empty bracket, is subtracted: the two brackets are
//! independent draws, and a per-sample difference would add the empty bracket's spread twice.
//! Pure functions: tested without /dev/kvm.

/// Emulated instruction slots in the empty bracket (the `mov`, three set-ups, one `rdtsc`).
pub const BRACKET_SLOTS: f64 = 5.0;

/// The guest classes, in the order [`classes`] returns them.
pub const CLASSES: [&str; 5] = ["guest_insn", "exit_cpuid", "exit_msr", "exit_pio", "exit_icr"];

fn median(v: &[u64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    s[s.len() / 2] as f64
}

/// Records (four words each: [0] empty | icr << 32, [1] cpuid, [2] msr, [3] pio; counter
/// ticks) → classes in ns. `khz`: the counter's frequency.
pub fn classes(records: &[[u64; 4]], khz: u64) -> Vec<(String, Vec<f64>)> {
    let ns = |ticks: f64| ticks * 1e6 / khz.max(1) as f64;
    let empty: Vec<u64> = records.iter().map(|r| r[0] & 0xffff_ffff).collect();
    let base = median(&empty);
    let op = |f: &dyn Fn(&[u64; 4]) -> u64| records.iter().map(|r| ns(f(r) as f64 - base)).collect::<Vec<f64>>();
    vec![
        (CLASSES[0].into(), empty.iter().map(|e| ns(*e as f64) / BRACKET_SLOTS).collect()),
        (CLASSES[1].into(), op(&|r| r[1] & 0xffff_ffff)),
        (CLASSES[2].into(), op(&|r| r[2] & 0xffff_ffff)),
        (CLASSES[3].into(), op(&|r| r[3] & 0xffff_ffff)),
        (CLASSES[4].into(), op(&|r| r[0] >> 32)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_become_op_costs_over_the_median_empty_bracket() {
        // 1 GHz counter: ticks are ns. Empty brackets 500, 510, 490 (median 500).
        let recs = [[500 | 9000 << 32, 2500, 1500, 8500], [510 | 9100 << 32, 2600, 1500, 8600], [490 | 8900 << 32, 2400, 1600, 8400]];
        let c = classes(&recs, 1_000_000);
        assert_eq!(c.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), CLASSES);
        assert_eq!(c[0].1, vec![100.0, 102.0, 98.0], "per emulated instruction: the bracket over 5");
        assert_eq!(c[1].1, vec![2000.0, 2100.0, 1900.0], "cpuid bracket minus the median empty one");
        assert_eq!(c[2].1, vec![1000.0, 1000.0, 1100.0]);
        assert_eq!(c[3].1, vec![8000.0, 8100.0, 7900.0]);
        assert_eq!(c[4].1, vec![8500.0, 8600.0, 8400.0], "the ICR bracket rides in the high half");
        // 2 GHz: half the ns.
        assert_eq!(classes(&recs, 2_000_000)[1].1[0], 1000.0);
    }
}
