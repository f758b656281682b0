//! Violations: uses of the ITS and the GICv4 redistributor interface that the architecture
//! calls UNPREDICTABLE or CONSTRAINED UNPREDICTABLE (docs/sources.md A.1, A.5, B.1, B.2), found
//! while the model runs. QEMU skips such a command and carries on; the model does the same and
//! reports what happened. Only a memory error reading a command or a table stalls the queue
//! (A.1).
use super::memory::MemoryError;

/// One misuse. The caller attaches where it happened (command index, line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// A.1/A.5: DeviceID beyond GITS_TYPER.Devbits or the device table (CONSTRAINED UNPREDICTABLE; skipped).
    #[error("DeviceID {device:#x} out of range (the ITS has {limit} device IDs)")]
    DeviceOutOfRange { device: u32, limit: u64 },
    /// A.5: EventID ≥ 2^(DTE.Size + 1) (CONSTRAINED UNPREDICTABLE; skipped).
    #[error("EventID {event} out of range for device {device:#x} (its ITT has {limit} events)")]
    EventOutOfRange { device: u32, event: u32, limit: u64 },
    /// MAPD Size + 1 larger than GITS_TYPER.IDbits + 1 (CONSTRAINED UNPREDICTABLE; skipped).
    #[error("MAPD of device {device:#x} asks for {bits} EventID bits; the ITS supports {max}")]
    EventBitsTooLarge { device: u32, bits: u32, max: u32 },
    /// ICID beyond the collection table (CONSTRAINED UNPREDICTABLE; skipped).
    #[error("collection {icid} out of range (the ITS has {limit} collections)")]
    CollectionOutOfRange { icid: u16, limit: u64 },
    /// vPE ID beyond the vPE table (CONSTRAINED UNPREDICTABLE; skipped).
    #[error("vPE {vpe} out of range (the ITS has {limit} vPE IDs)")]
    VpeOutOfRange { vpe: u16, limit: u64 },
    /// RDbase names no redistributor (GITS_TYPER.PTA = 0: processor number; skipped).
    #[error("RDbase {rdbase} names no redistributor (there are {limit})")]
    RdbaseOutOfRange { rdbase: u64, limit: u64 },
    /// An INTID outside the LPI range [8192, 2^IDbits), or a vINTID beyond the VPT.
    #[error("{what} {intid} out of range [{min}, {limit})")]
    IntidOutOfRange { what: &'static str, intid: u32, min: u32, limit: u64 },
    /// A.5: command or translation for a device whose DTE is not valid (skipped).
    #[error("device {device:#x} is not mapped (no valid MAPD)")]
    UnmappedDevice { device: u32 },
    /// A.5: the event has no valid ITE (skipped).
    #[error("device {device:#x} event {event} is not mapped (no valid ITE)")]
    UnmappedEvent { device: u32, event: u32 },
    /// A.5: the collection has no valid CTE (no MAPC; skipped).
    #[error("collection {icid} is not mapped (no valid MAPC)")]
    UnmappedCollection { icid: u16 },
    /// B.1: a virtual command for a vPE with no valid VTE (no VMAPP; skipped).
    #[error("vPE {vpe} is not mapped on this ITS (no valid VMAPP)")]
    UnmappedVpe { vpe: u16 },
    /// B.1: "re-issuing VMAPTI on a live mapping is UNPREDICTABLE" (use VMOVI; skipped).
    #[error("{command} on device {device:#x} event {event}, which is already mapped (UNPREDICTABLE: DISCARD it first, or VMOVI to change the vPE/doorbell)")]
    RemapLiveMapping { command: &'static str, device: u32, event: u32 },
    /// A physical command on a virtual ITE or the other way round (MOVI on a vLPI, VMOVI on a physical LPI).
    #[error("{command} on device {device:#x} event {event}, which maps a {found} interrupt")]
    WrongInterruptType { command: &'static str, device: u32, event: u32, found: &'static str },
    /// B.1: INVDB and VSGI exist only on a GICv4.1 ITS; virtual commands need GICv4.
    #[error("{command} needs {needs}; this ITS is {have} (skipped)")]
    UnsupportedCommand { command: &'static str, needs: &'static str, have: &'static str },
    /// An opcode no ITS version defines (skipped).
    #[error("unknown command opcode {opcode:#04x} (skipped)")]
    UnknownOpcode { opcode: u8 },
    /// A.1: a memory error reading a command or a table; CREADR.Stalled is set and the ITS stops.
    #[error("command queue stalled: {0}")]
    QueueStalled(MemoryError),
    /// B.2: "writing VPENDBASER while Dirty is set is UNPREDICTABLE" (write ignored).
    #[error("GICR_VPENDBASER of redistributor {rd} written while Dirty = 1 (UNPREDICTABLE: poll Dirty until 0 first; write ignored)")]
    VpendbaserWhileDirty { rd: u16 },
    /// B.1: with GITS_TYPER.VMOVP = 0 the VMOVP must go to every ITS in its ITSList, including this one.
    #[error("VMOVP SeqNum {seq} sent to ITS {its}, which is not in its ITSList {its_list:#06x}")]
    VmovpNotInItsList { its: usize, seq: u16, its_list: u16 },
    /// B.1: the VMOVP with this SeqNum differs between ITSs (vPE, target or ITSList).
    #[error("VMOVP SeqNum {seq} on ITS {its} differs from the one ITS {first_its} got: {detail}")]
    VmovpMismatch { its: usize, first_its: usize, seq: u16, detail: String },
    /// B.1: "VMOVP ... must reach every ITS in the same order".
    #[error("VMOVP SeqNum {seq} reached ITS {its} after SeqNum {later}, the reverse of the order another ITS saw")]
    VmovpOutOfOrder { its: usize, seq: u16, later: u16 },
    /// B.1: an ITS named in the ITSList never got the VMOVP.
    #[error("VMOVP SeqNum {seq} never reached ITS {missing}, which its ITSList {its_list:#06x} names")]
    VmovpMissing { seq: u16, missing: usize, its_list: u16 },
    /// The command could not be written to the queue (full, stalled, no queue).
    #[error("command not queued: {reason}")]
    CommandNotQueued { reason: String },
    /// A register write naming a redistributor that does not exist.
    #[error("redistributor {rd} does not exist (there are {limit})")]
    NoSuchRedistributor { rd: u64, limit: u64 },
    /// B.2: a vPE made resident on two redistributors at once.
    #[error("vPE {vpe} made resident on redistributor {rd} while resident on redistributor {other}")]
    VpeResidentTwice { vpe: u16, rd: u16, other: u16 },
}

impl Violation {
    /// True when the ITS stopped processing (the only non-skipping case, A.1).
    pub fn stalls(&self) -> bool {
        matches!(self, Violation::QueueStalled(_))
    }

    /// A short stable name for the kind, for tools (`--format json`).
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::DeviceOutOfRange { .. } => "device-out-of-range",
            Violation::EventOutOfRange { .. } => "event-out-of-range",
            Violation::EventBitsTooLarge { .. } => "event-bits-too-large",
            Violation::CollectionOutOfRange { .. } => "collection-out-of-range",
            Violation::VpeOutOfRange { .. } => "vpe-out-of-range",
            Violation::RdbaseOutOfRange { .. } => "rdbase-out-of-range",
            Violation::IntidOutOfRange { .. } => "intid-out-of-range",
            Violation::UnmappedDevice { .. } => "unmapped-device",
            Violation::UnmappedEvent { .. } => "unmapped-event",
            Violation::UnmappedCollection { .. } => "unmapped-collection",
            Violation::UnmappedVpe { .. } => "unmapped-vpe",
            Violation::RemapLiveMapping { .. } => "remap-live-mapping",
            Violation::WrongInterruptType { .. } => "wrong-interrupt-type",
            Violation::UnsupportedCommand { .. } => "unsupported-command",
            Violation::UnknownOpcode { .. } => "unknown-opcode",
            Violation::QueueStalled(_) => "queue-stalled",
            Violation::VpendbaserWhileDirty { .. } => "vpendbaser-while-dirty",
            Violation::VmovpNotInItsList { .. } => "vmovp-not-in-itslist",
            Violation::VmovpMismatch { .. } => "vmovp-mismatch",
            Violation::VmovpOutOfOrder { .. } => "vmovp-out-of-order",
            Violation::VmovpMissing { .. } => "vmovp-missing",
            Violation::NoSuchRedistributor { .. } => "no-such-redistributor",
            Violation::CommandNotQueued { .. } => "command-not-queued",
            Violation::VpeResidentTwice { .. } => "vpe-resident-twice",
        }
    }
}

/// Why a command stopped: a violation (skip it) or a memory error (stall).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fault {
    Skip(Violation),
    Memory(MemoryError),
}

impl From<Violation> for Fault {
    fn from(v: Violation) -> Fault {
        Fault::Skip(v)
    }
}

impl From<MemoryError> for Fault {
    fn from(e: MemoryError) -> Fault {
        Fault::Memory(e)
    }
}
