//! The ITS and GICv4 model through its public API: one test per command family and per
//! architecture.md rule (A.1–A.5, B.1–B.4), and the KVM driver sequences a timed model uses.
use results::vocab::Gic;
use sim::arch::arm::gicv4::{Effect, GicConfig, GicSystem, KvmGicV4, NoDoorbell};
use sim::arch::arm::its::{Command, Violation, Vmapp, NO_DOORBELL};

fn gic(version: Gic) -> GicSystem {
    GicSystem::new(GicConfig { version, cpus: 4, ..GicConfig::default() })
}

/// Submit and return (effects, violations) of the one command.
fn cmd(g: &mut GicSystem, c: Command) -> (Vec<Effect>, Vec<Violation>) {
    let mut r = g.submit_command(0, c).expect("queued");
    assert_eq!(r.len(), 1);
    let r = r.remove(0);
    (r.effects, r.violations)
}

fn ok(g: &mut GicSystem, c: Command) -> Vec<Effect> {
    let (e, v) = cmd(g, c);
    assert!(v.is_empty(), "{c}: {v:?}");
    e
}

fn vmapp(vpe: u16, rd: u64, vpt: u64) -> Command {
    Command::Vmapp(Vmapp { vpe, rdbase: rd, valid: true, vpt_size: 15, vpt_addr: vpt, alloc: true, ptz: true, vconf_addr: 0x5100_0000, default_doorbell: 65000 })
}

fn physical_device(g: &mut GicSystem) {
    ok(g, Command::Mapc { icid: 0, rdbase: 0, valid: true });
    ok(g, Command::Mapc { icid: 1, rdbase: 1, valid: true });
    ok(g, Command::Mapd { device: 0x10, size: 1, itt_addr: 0x4000_0000, valid: true });
    ok(g, Command::Mapti { device: 0x10, event: 0, pintid: 8192, icid: 0 });
}

#[test]
fn translater_write_sets_a_physical_lpi_pending_at_the_collections_redistributor() {
    let mut g = gic(Gic::V3);
    physical_device(&mut g);
    assert_eq!(g.translate(0, 0x10, 0), vec![Effect::LpiPending { rd: 0, intid: 8192, enabled: false }]);
    assert_eq!(g.translate(0, 0x10, 0), vec![Effect::AlreadyPending { vpe: None, intid: 8192 }]);
    // A.4: enabling takes effect after INV, and a pending LPI then fires.
    g.write_lpi_config(8192, 0xa0, true).unwrap();
    assert_eq!(ok(&mut g, Command::Inv { device: 0x10, event: 0 }), vec![Effect::LpiPending { rd: 0, intid: 8192, enabled: true }]);
    // MOVI moves the pending state (A.2), CLEAR clears it, INT sets it.
    let e = ok(&mut g, Command::Movi { device: 0x10, event: 0, icid: 1 });
    assert_eq!(e[0], Effect::Cleared { rd: Some(0), vpe: None, intid: 8192 });
    assert!(matches!(e[1], Effect::LpiPending { rd: 1, intid: 8192, .. }));
    ok(&mut g, Command::Clear { device: 0x10, event: 0 });
    assert!(!g.rds[1].pending(&g.mem, 8192).unwrap());
    ok(&mut g, Command::Int { device: 0x10, event: 0 });
    ok(&mut g, Command::Movall { rdbase1: 1, rdbase2: 3 });
    assert!(g.rds[3].pending(&g.mem, 8192).unwrap() && !g.rds[1].pending(&g.mem, 8192).unwrap());
    // After MOVALL software remaps the collection to the new redistributor.
    ok(&mut g, Command::Mapc { icid: 1, rdbase: 3, valid: true });
    ok(&mut g, Command::Invall { icid: 1 });
    ok(&mut g, Command::Sync { rdbase: 3 });
    // MAPI: pINTID = EventID (A.2) — event 1 is not an LPI number, so it is out of range.
    let (_, v) = cmd(&mut g, Command::Mapi { device: 0x10, event: 1, icid: 0 });
    assert!(matches!(v[0], Violation::IntidOutOfRange { intid: 1, .. }));
    // DISCARD clears pending and invalidates the ITE (A.5).
    ok(&mut g, Command::Discard { device: 0x10, event: 0 });
    assert!(!g.rds[3].pending(&g.mem, 8192).unwrap());
    assert!(matches!(g.translate(0, 0x10, 0)[0], Effect::Dropped(_)));
}

#[test]
fn out_of_range_and_unmapped_commands_are_skipped_with_a_violation_and_the_command_index() {
    let mut g = gic(Gic::V4_1);
    physical_device(&mut g);
    let cases: Vec<(Command, &str)> = vec![
        (Command::Mapd { device: 1 << 16, size: 1, itt_addr: 0, valid: true }, "device-out-of-range"),
        (Command::Mapti { device: 0x10, event: 4, pintid: 8200, icid: 0 }, "event-out-of-range"),
        (Command::Mapd { device: 3, size: 16, itt_addr: 0, valid: true }, "event-bits-too-large"),
        (Command::Mapc { icid: 2, rdbase: 4, valid: true }, "rdbase-out-of-range"),
        (Command::Int { device: 0x11, event: 0 }, "unmapped-device"),
        (Command::Int { device: 0x10, event: 1 }, "unmapped-event"),
        (Command::Movi { device: 0x10, event: 0, icid: 9 }, "unmapped-collection"),
        (Command::Vmapti { device: 0x10, event: 1, vpe: 3, vintid: 8200, doorbell: NO_DOORBELL }, "unmapped-vpe"),
        (vmapp(4096, 0, 0x5000_0000), "vpe-out-of-range"),
    ];
    for (c, kind) in cases {
        let before = g.its[0].next_index();
        let r = g.submit_command(0, c).unwrap();
        assert_eq!(r[0].index, before, "the report carries the command index");
        assert_eq!(r[0].violations.iter().map(|v| v.kind()).collect::<Vec<_>>(), vec![kind], "{c}");
    }
    // Nothing of the skipped commands reached the tables: event 0 still maps to LPI 8192 on rd 0.
    assert!(matches!(g.translate(0, 0x10, 0)[0], Effect::LpiPending { rd: 0, intid: 8192, .. }));
}

#[test]
fn vmapti_on_a_live_mapping_is_reported_and_vmovi_moves_the_pending_bit() {
    let mut g = gic(Gic::V4_0);
    physical_device(&mut g);
    ok(&mut g, vmapp(1, 0, 0x5000_0000));
    ok(&mut g, vmapp(2, 1, 0x5200_0000));
    let (_, v) = cmd(&mut g, Command::Vmapti { device: 0x10, event: 0, vpe: 1, vintid: 8200, doorbell: 65001 });
    assert_eq!(v[0].kind(), "remap-live-mapping", "MAPTI'd event: DISCARD first (B.1 its_vlpi_map)");
    ok(&mut g, Command::Discard { device: 0x10, event: 0 });
    ok(&mut g, Command::Vmapti { device: 0x10, event: 0, vpe: 1, vintid: 8200, doorbell: 65001 });
    let (_, v) = cmd(&mut g, Command::Vmapti { device: 0x10, event: 0, vpe: 2, vintid: 8200, doorbell: 65002 });
    assert_eq!(v[0].kind(), "remap-live-mapping");
    // Not resident, doorbell LPI disabled: recorded in the VPT, doorbell masked (B.3).
    assert_eq!(g.translate(0, 0x10, 0), vec![Effect::VlpiRecorded { vpe: 1, vintid: 8200, why: NoDoorbell::Masked }]);
    let e = ok(&mut g, Command::Vmovi { device: 0x10, event: 0, vpe: 2, db_valid: true, doorbell: 65002 });
    assert_eq!(e[0], Effect::Cleared { rd: None, vpe: Some(1), intid: 8200 });
    assert!(g.mem.bit(0x5200_0000, 8200).unwrap() && !g.mem.bit(0x5000_0000, 8200).unwrap(), "B.4: VMOVI moves the VPT bit");
    // VMOVI on a physical ITE is the wrong type.
    ok(&mut g, Command::Mapti { device: 0x10, event: 1, pintid: 8193, icid: 0 });
    let (_, v) = cmd(&mut g, Command::Vmovi { device: 0x10, event: 1, vpe: 2, db_valid: false, doorbell: 0 });
    assert_eq!(v[0].kind(), "wrong-interrupt-type");
}

#[test]
fn version_gates_v41_only_and_virtual_commands() {
    for (v, c, kind) in [
        (Gic::V4_0, Command::Invdb { vpe: 1 }, "unsupported-command"),
        (Gic::V4_0, Command::Vsgi { vpe: 1, vintid: 2, enable: true, clear: false, group1: true, priority: 0 }, "unsupported-command"),
        (Gic::V3, Command::Vsync { vpe: 1 }, "unsupported-command"),
        (Gic::V4_1, Command::Invdb { vpe: 1 }, "unmapped-vpe"),
    ] {
        let mut g = gic(v);
        assert_eq!(cmd(&mut g, c).1[0].kind(), kind, "{c} on {v:?}");
    }
    assert_eq!(gic(Gic::V3).its[0].config.typer() & 2, 0, "GITS_TYPER.Virtual = 0 on v3");
    let t41 = gic(Gic::V4_1).its[0].config.typer();
    assert_eq!((t41 >> 1 & 1, t41 >> 40 & 1), (1, 1), "v4.1: Virtual and VMAPP");
    assert_eq!(gic(Gic::V4_0).its[0].config.typer() >> 40 & 1, 0);
}

#[test]
fn memory_error_stalls_the_queue_and_later_commands_are_not_processed() {
    let mut g = gic(Gic::V4_1);
    ok(&mut g, Command::Mapd { device: 1, size: 1, itt_addr: 0x20_0000_0000, valid: true });
    let (_, v) = cmd(&mut g, Command::Mapti { device: 1, event: 0, pintid: 8192, icid: 0 });
    assert!(v[0].stalls());
    assert!(g.its[0].queue.stalled());
    assert!(g.submit_command(0, Command::Sync { rdbase: 0 }).is_err());
}

#[test]
fn queue_wraps_around_for_streams_longer_than_2048_commands() {
    let mut g = gic(Gic::V4_1);
    for i in 0..3000u32 {
        let r = g.submit_command(0, Command::Mapc { icid: (i % 100) as u16, rdbase: (i % 4) as u64, valid: true }).unwrap();
        assert!(r[0].violations.is_empty());
    }
    assert_eq!(g.its[0].next_index(), 3000);
    assert!(g.its[0].queue.is_empty());
}

#[test]
fn vpendbaser_write_while_dirty_is_reported_and_ignored() {
    let mut g = gic(Gic::V4_1);
    ok(&mut g, vmapp(9, 0, 0x5000_0000));
    g.write_vpendbaser(0, 1 << 63 | 9).unwrap();
    assert_eq!(g.write_vpendbaser(0, 0), Err(Violation::VpendbaserWhileDirty { rd: 0 }));
    assert_eq!(g.vpendbaser(0).unwrap() >> 63, 1, "write ignored: still Valid");
    g.poll_dirty(0).unwrap();
    assert_eq!(g.write_vpendbaser(1, 1 << 63 | 9).unwrap_err().kind(), "vpe-resident-twice");
    g.write_vpendbaser(0, 0).unwrap();
}

/// A KVM-driven machine with one device whose event 0 is forwarded as vLPI 8200 of vPE 1.
fn kvm(version: Gic) -> KvmGicV4 {
    let (mut k, boot) = KvmGicV4::boot(GicConfig { version, cpus: 2, ..GicConfig::default() });
    assert!(boot.violations.is_empty() && boot.commands.iter().all(|c| c.violations.is_empty()));
    k.add_vpe(1, 0, 16);
    assert!(k.map_device_lpis(0, 0x10, 2, 8192, 0).commands.iter().all(|c| c.violations.is_empty()));
    let m = k.map_vlpi(0, 0x10, 0, 1, 8200);
    let names: Vec<&str> = m.commands.iter().map(|c| c.command.unwrap().name()).collect();
    assert_eq!(names, ["VMAPP", "VINVALL", "DISCARD", "VMAPTI", "VSYNC"], "its_vlpi_map (B.1)");
    assert!(m.commands.iter().all(|c| c.violations.is_empty()), "{:?}", m.commands);
    k
}

#[test]
fn v40_residency_doorbell_via_proxy_and_drain() {
    let mut k = kvm(Gic::V4_0);
    let r = k.make_resident(1, 0);
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    let names: Vec<&str> = r.commands.iter().map(|c| c.command.unwrap().name()).collect();
    assert_eq!(names, ["MAPTI", "CLEAR"], "pending doorbell cleared through the proxy (lazy MAPTI)");
    assert_eq!(k.deliver(0, 0x10, 0), Effect::VlpiToResident { rd: 0, vpe: 1, vintid: 8200, enabled: true });
    k.ack_vlpi(1, 8200);
    // Preempted (runnable): no doorbell wanted → masked.
    let r = k.make_non_resident(1, false);
    assert!(!r.pending_last);
    assert!(matches!(k.deliver(0, 0x10, 0), Effect::VlpiRecorded { why: NoDoorbell::Masked, .. }));
    // Back in: drained.
    let r = k.make_resident(1, 0);
    assert_eq!(r.effects, vec![Effect::VlpiToResident { rd: 0, vpe: 1, vintid: 8200, enabled: true }]);
    k.ack_vlpi(1, 8200);
    // Blocks in WFI: the doorbell is unmasked through the proxy (lazy MAPTI + INV, B.3).
    let r = k.make_non_resident(1, true);
    let names: Vec<&str> = r.commands.iter().map(|c| c.command.unwrap().name()).collect();
    assert_eq!(names, ["INV"], "already mapped into the proxy: INV only");
    let db = k.vpes[&1].doorbell;
    assert_eq!(k.deliver(0, 0x10, 0), Effect::Doorbell { rd: 0, vpe: 1, vintid: 8200, doorbell: db });
    // Moving to CPU 1: VMOVP + MOVI of the proxy event, doorbell masked (INV), pending doorbell cleared.
    let r = k.make_resident(1, 1);
    let names: Vec<&str> = r.commands.iter().map(|c| c.command.unwrap().name()).collect();
    assert_eq!(names, ["VMOVP", "MOVI", "INV", "CLEAR"]);
    assert_eq!(r.effects, vec![Effect::VlpiToResident { rd: 1, vpe: 1, vintid: 8200, enabled: true }]);
    let r = k.make_non_resident(1, true);
    assert!(r.pending_last, "B.2: PendingLast = 1 when an enabled vLPI is still pending");
}

#[test]
fn v40_proxy_slots_are_reused_round_robin_with_discard() {
    let (mut k, _) = KvmGicV4::boot(GicConfig { version: Gic::V4_0, cpus: 2, ..GicConfig::default() });
    assert_eq!(k.proxy.as_ref().unwrap().nr_events, 2);
    for vpe in 1..=3 {
        k.add_vpe(vpe, 0, 16);
        k.map_device_lpis(0, 0x10 + vpe as u32, 1, 8192 + vpe as u32, 0);
        k.map_vlpi(0, 0x10 + vpe as u32, 0, vpe, 8200);
        let r = k.make_resident(vpe, 0);
        let names: Vec<&str> = r.commands.iter().map(|c| c.command.unwrap().name()).collect();
        let want: &[&str] = if vpe == 3 { &["DISCARD", "MAPTI", "CLEAR"] } else { &["MAPTI", "CLEAR"] };
        assert_eq!(names, want, "vPE {vpe}");
        assert!(r.commands.iter().all(|c| c.violations.is_empty()));
        let r = k.make_non_resident(vpe, true);
        assert_eq!(r.commands.iter().map(|c| c.command.unwrap().name()).collect::<Vec<_>>(), ["INV"]);
    }
    assert_eq!(k.proxy.as_ref().unwrap().slot(1), None, "vPE 1 evicted");
}

#[test]
fn v41_doorbell_only_when_db_requested_and_only_once() {
    let mut k = kvm(Gic::V4_1);
    k.make_resident(1, 0);
    k.make_non_resident(1, false);
    assert!(matches!(k.deliver(0, 0x10, 0), Effect::VlpiRecorded { why: NoDoorbell::NotRequested, .. }));
    let r = k.make_resident(1, 1);
    assert!(r.commands.is_empty(), "v4.1 with a shared vPE table: no VMOVP");
    assert_eq!(r.effects.len(), 1);
    k.ack_vlpi(1, 8200);
    let r = k.make_non_resident(1, true);
    assert!(!r.pending_last && r.commands.is_empty(), "v4.1: DB bit, no proxy");
    assert_eq!(k.deliver(0, 0x10, 0), Effect::Doorbell { rd: 1, vpe: 1, vintid: 8200, doorbell: k.vpes[&1].doorbell });
    k.ack_vlpi(1, 8200);
    assert!(matches!(k.deliver(0, 0x10, 0), Effect::VlpiRecorded { why: NoDoorbell::NotRequested, .. }), "the doorbell rang once");
}

#[test]
fn vsync_after_an_unmap_is_a_barrier_not_a_violation_but_its_vpe_id_must_be_in_range() {
    // Linux 6.1 on GICv4.0 tears a vPE down with VMAPP V=0 then VSYNC of that vPE (the lab's
    // captured stream, examples/its/lab-vm-start-v40.its); QEMU runs it as a no-op.
    let mut g = gic(Gic::V4_0);
    ok(&mut g, vmapp(3, 1, 0x5000_0000));
    ok(&mut g, Command::Vsync { vpe: 3 });
    ok(&mut g, Command::Vmapp(Vmapp { vpe: 3, rdbase: 0, valid: false, vpt_size: 0, vpt_addr: 0, alloc: false, ptz: false, vconf_addr: 0, default_doorbell: 0 }));
    ok(&mut g, Command::Vsync { vpe: 3 });
    // The vPE is unmapped all the same: a command that needs it still reports it.
    let (_, v) = cmd(&mut g, Command::Vinvall { vpe: 3 });
    assert!(matches!(v[..], [Violation::UnmappedVpe { vpe: 3 }]), "{v:?}");
    let (_, v) = cmd(&mut g, Command::Vsync { vpe: u16::MAX });
    assert!(matches!(v[..], [Violation::VpeOutOfRange { vpe: u16::MAX, .. }]), "{v:?}");
}
