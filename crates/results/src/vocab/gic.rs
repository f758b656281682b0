//! The GIC generation, one word for every crate: the simulator's list registers and ITS, the
//! arm64 guest's CPU-interface path, the lab's `--gic` and QEMU's `gic-version=`, the KVM lab's
//! GICv4 direct injection (issue 44 item 2: "the GIC generation is modelled five ways").
//!
//! What each generation implies is the architecture's, not a model's choice:
//! - **GICv2** (IHI 0048B, the GIC-400 of the Cortex-A53 boards: Zynq UltraScale+, S3): a
//!   memory-mapped CPU interface (GICC: IAR, EOIR, DIR), SGIs through GICD_SGIR, at most 8 CPUs
//!   (GICD_SGIR's 8-bit CPUTargetList, 4.3.15), no LPIs, no ITS; the virtualization extensions'
//!   list registers are GICH_LR<n> (MMIO, 5.3.10).
//! - **GICv3** (IHI 0069, chapter 12): the CPU interface in system registers (ICC_*_EL1,
//!   ICH_LR<n>_EL2), redistributors, affinity routing, LPIs through the ITS.
//! - **GICv4.0** (IHI 0069, 5.3 / 9): GICv3 plus direct injection of virtual LPIs into resident
//!   vPEs, with per-vLPI doorbells for non-resident ones.
//! - **GICv4.1** (IHI 0069, 5.3 / 9): GICv4.0 plus direct virtual SGIs (vSGIs), a shared vPE
//!   table and per-vPE doorbells (VMAPP's v4.1 fields, INVDB).
use serde::{Deserialize, Serialize};

/// A GIC architecture generation. Ordered: each implies what the ones before it have, except
/// GICv2's memory-mapped CPU interface. The default is GICv3, what the guest image and the
/// lab's boards use unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Deserialize, Serialize)]
pub enum Gic {
    #[serde(rename = "v2")]
    V2,
    #[default]
    #[serde(rename = "v3")]
    V3,
    #[serde(rename = "v4.0")]
    V4_0,
    #[serde(rename = "v4.1")]
    V4_1,
}

/// A word that is not a GIC generation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{got}` is not a GIC generation (v2, v3, v4.0, v4.1; `4` is v4.0){hint}")]
pub struct GicError {
    pub got: String,
    hint: String,
}

impl Gic {
    pub const ALL: [Gic; 4] = [Gic::V2, Gic::V3, Gic::V4_0, Gic::V4_1];

    /// The word results and flags use: `v2`, `v3`, `v4.0`, `v4.1`.
    pub fn name(self) -> &'static str {
        match self {
            Gic::V2 => "v2",
            Gic::V3 => "v3",
            Gic::V4_0 => "v4.0",
            Gic::V4_1 => "v4.1",
        }
    }

    /// The architecture's name: `GICv2` … `GICv4.1`.
    pub fn title(self) -> &'static str {
        match self {
            Gic::V2 => "GICv2",
            Gic::V3 => "GICv3",
            Gic::V4_0 => "GICv4.0",
            Gic::V4_1 => "GICv4.1",
        }
    }

    /// Reads `2`, `v2`, `gicv2`, `3`, `v3`, `4`, `v4`, `4.0`, `v4.0`, `4.1`, `v4.1` (any case;
    /// `4` is GICv4.0, as QEMU's `gic-version=4`).
    pub fn parse(s: &str) -> Result<Gic, GicError> {
        let w = s.trim().to_ascii_lowercase();
        let w = w.strip_prefix("gic").unwrap_or(&w);
        let w = w.strip_prefix('v').unwrap_or(w);
        match w {
            "2" => Ok(Gic::V2),
            "3" => Ok(Gic::V3),
            "4" | "4.0" => Ok(Gic::V4_0),
            "4.1" => Ok(Gic::V4_1),
            _ => Err(GicError { got: s.to_string(), hint: super::did_you_mean(s, Gic::ALL.map(Gic::name)) }),
        }
    }

    /// The CPU interface is system registers (ICC_*_EL1; ICH_*_EL2 for the hypervisor), not
    /// GICC/GICH memory-mapped frames.
    pub fn sysreg_cpu_interface(self) -> bool {
        self >= Gic::V3
    }

    /// LPIs (message-based interrupts through an ITS).
    pub fn lpis(self) -> bool {
        self >= Gic::V3
    }

    /// Direct injection of virtual LPIs into a resident vPE (GICv4's point, the S1 series).
    pub fn direct_vlpis(self) -> bool {
        self >= Gic::V4_0
    }

    /// Direct virtual SGIs (GICv4.1 only).
    pub fn direct_vsgis(self) -> bool {
        self == Gic::V4_1
    }

    /// The most CPUs the generation can address: GICv2's 8-bit target lists (GICD_ITARGETSR,
    /// GICD_SGIR) against GICv3's affinity routing.
    pub fn max_cpus(self) -> Option<u32> {
        (self == Gic::V2).then_some(8)
    }

    /// QEMU 7.2's `-M virt,gic-version=` value for it, or why QEMU 7.2 cannot emulate it
    /// (hw/arm/virt.c: 2, 3 and 4, where 4 is GICv4.0; hw/intc/arm_gicv3_its.c has no vSGI).
    pub fn qemu_gic_version(self) -> Result<u8, &'static str> {
        match self {
            Gic::V2 => Ok(2),
            Gic::V3 => Ok(3),
            Gic::V4_0 => Ok(4),
            Gic::V4_1 => Err("QEMU 7.2 emulates GICv4.0 (gic-version=4), not GICv4.1's direct vSGIs"),
        }
    }
}

impl std::fmt::Display for Gic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Gic {
    type Err = GicError;
    fn from_str(s: &str) -> Result<Gic, GicError> {
        Gic::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_reads_and_names_round_trip() {
        for (s, g) in [("2", Gic::V2), ("GICv2", Gic::V2), ("v3", Gic::V3), ("4", Gic::V4_0), ("v4", Gic::V4_0), ("4.0", Gic::V4_0), ("v4.1", Gic::V4_1), (" V4.1 ", Gic::V4_1)] {
            assert_eq!(Gic::parse(s).unwrap(), g, "{s}");
        }
        for g in Gic::ALL {
            assert_eq!(Gic::parse(g.name()).unwrap(), g);
            assert_eq!(Gic::parse(g.title()).unwrap(), g);
            assert_eq!(serde_json::to_string(&g).unwrap(), format!("\"{}\"", g.name()));
            assert_eq!(serde_json::from_str::<Gic>(&format!("\"{g}\"")).unwrap(), g);
        }
    }

    #[test]
    fn a_wrong_word_is_named_with_the_nearest() {
        let e = Gic::parse("v4.2").unwrap_err().to_string();
        assert!(e.contains("`v4.2` is not a GIC generation") && e.contains("did you mean `v4.1`?"), "{e}");
        assert!(Gic::parse("5").is_err() && Gic::parse("").is_err() && Gic::parse("v").is_err());
    }

    #[test]
    fn what_each_generation_implies() {
        let row = |g: Gic| (g.sysreg_cpu_interface(), g.lpis(), g.direct_vlpis(), g.direct_vsgis(), g.max_cpus());
        assert_eq!(row(Gic::V2), (false, false, false, false, Some(8)));
        assert_eq!(row(Gic::V3), (true, true, false, false, None));
        assert_eq!(row(Gic::V4_0), (true, true, true, false, None));
        assert_eq!(row(Gic::V4_1), (true, true, true, true, None));
        assert_eq!(Gic::ALL.map(|g| g.qemu_gic_version().ok()), [Some(2), Some(3), Some(4), None]);
        assert!(Gic::V4_1.qemu_gic_version().unwrap_err().contains("vSGI"));
    }
}
