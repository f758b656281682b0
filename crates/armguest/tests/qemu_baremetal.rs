//! The guest on QEMU's `virt` machine with no hypervisor (EL1, QEMU's own PSCI over HVC, GICv3 at
//! the bare-metal addresses, ITS at 0x08080000): checks the benches' control flow, PSCI CPU_ON, the console format
//! (through `armguest::console`) and the memory report, in about a second per run.
//! Every test needs qemu-system-aarch64 and the image (`needs_qemu_arm`: ignored with the reason,
//! run by scripts/test.sh where they are, a failure with CI set where they are not).
mod needs_qemu_arm {
    use armguest::console::{parse, ConsoleMeta};
    use armguest::{Device, DeviceIrq, Gic, Params, Program, Report, Trigger, Wait};
    use std::process::Command;

    /// QEMU virt (hw/arm/virt.c, 7.2): GICD 0x08000000, GICR 0x080a0000, PL011 0x09000000.
    fn bare(bench: Program, wait: Wait, samples: u64) -> Params {
        Params { bench, wait, samples, warmup: 1, period_ticks: 6250, gicd_base: 0x0800_0000, gicr_base: 0x080a_0000, uart_base: 0x0900_0000, ..Params::default() }
    }

    /// The same on QEMU virt's GICv2 (hw/arm/virt.c, 7.2: GICD 0x08000000, GICC 0x08010000).
    fn bare_v2(bench: Program, wait: Wait, samples: u64) -> Params {
        Params { gic: Gic::V2, gicc_base: 0x0801_0000, ..bare(bench, wait, samples) }
    }

    fn qemu(params: &Params, icount: bool) -> String {
        qemu_with(params, icount, &[]).0
    }

    /// QEMU's stdout (the console) and stderr (where `-trace` events go) for `params`, with `extra`
    /// arguments.
    fn qemu_with(params: &Params, icount: bool, extra: &[&str]) -> (String, String) {
        let image = guest_image();
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("guest.bin");
        std::fs::write(&g, armguest::patch(image, params).unwrap()).unwrap();
        // GICv2 on a Cortex-A53 (the S3 board's pair): a guest that touched a GICv3 system
        // register there would take an undefined-instruction fault and report it.
        let board = if params.gic == Gic::V2 { "-M virt,gic-version=2 -cpu cortex-a53" } else { "-M virt,gic-version=3,its=on -cpu cortex-a57" };
        let mut args: Vec<String> = format!("{board} -smp 2 -m 256 -display none -serial stdio -monitor none").split(' ').map(String::from).collect();
        if icount {
            args.extend(["-icount".into(), "shift=2,sleep=off".into()]);
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        args.extend(["-kernel".into(), g.display().to_string()]);
        // The guest ends with PSCI SYSTEM_OFF, which ends QEMU; `timeout` bounds a guest that does not.
        let out = match Command::new("timeout").arg("20").arg("qemu-system-aarch64").args(&args).output() {
            Ok(o) => o,
            Err(e) => panic!("timeout(1): {e}"),
        };
        assert_ne!(out.status.code(), Some(127), "qemu-system-aarch64 did not start");
        assert_eq!(out.status.code(), Some(0), "QEMU did not power off: {}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    /// The image, after checking this host has QEMU and the cross binutils (a failure naming what is
    /// missing, never an early return).
    fn guest_image() -> &'static [u8] {
        testkit::require(testkit::Resource::QemuArm);
        armguest::image().unwrap_or_else(|e| panic!("the aarch64 binutils are here but the guest image was not built: {e}"))
    }

    fn meta() -> ConsoleMeta {
        ConsoleMeta { tool_version: "test".into(), ..Default::default() }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn timer_wfi_and_busy_report_every_sample() {
        testkit::require(testkit::Resource::QemuArm);
        for wait in [Wait::Hlt, Wait::Busy] {
            let log = qemu(&bare(Program::Timer, wait, 12), false);
            let r = parse(&log, "bare", meta()).unwrap_or_else(|e| panic!("{e}\n{log}"));
            let c = &r.configs[0];
            assert_eq!(c.classes["timer"].summary.count, 12);
            assert_eq!(c.params["wait"], if wait == Wait::Hlt { "wfi" } else { "busy" });
            assert_eq!(c.counters["guest.spurious"], 0);
        }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn ipi_starts_vcpu1_and_measures_both_ways() {
        testkit::require(testkit::Resource::QemuArm);
        let log = qemu(&bare(Program::Ipi, Wait::Hlt, 10), false);
        let r = parse(&log, "bare", meta()).unwrap_or_else(|e| panic!("{e}\n{log}"));
        let c = &r.configs[0];
        assert_eq!(c.classes["ipi"].summary.count, 10);
        assert!(c.classes["ipi_rtt"].summary.min > c.classes["ipi"].summary.min);
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn gicv2_timer_and_ipi_run_through_gicc_and_gicd_sgir() {
        testkit::require(testkit::Resource::QemuArm);
        for wait in [Wait::Hlt, Wait::Busy] {
            let log = qemu(&bare_v2(Program::Timer, wait, 8), false);
            let r = parse(&log, "bare", meta()).unwrap_or_else(|e| panic!("{e}\n{log}"));
            assert_eq!(r.configs[0].classes["timer"].summary.count, 8, "{log}");
            assert_eq!(r.configs[0].counters["guest.spurious"], 0, "{log}");
        }
        let log = qemu(&bare_v2(Program::Ipi, Wait::Hlt, 6), false);
        let r = parse(&log, "bare", meta()).unwrap_or_else(|e| panic!("{e}\n{log}"));
        let c = &r.configs[0];
        assert_eq!((c.classes["ipi"].summary.count, c.counters["guest.spurious"]), (6, 0), "{log}");
        assert!(c.classes["ipi_rtt"].summary.min > c.classes["ipi"].summary.min);
        // QEMU's GICv2 trace: the guest acknowledged through GICC_IAR and sent through GICD_SGIR.
        let (_, trace) = qemu_with(&bare_v2(Program::Ipi, Wait::Hlt, 2), false, &["-trace", "gic_dist_write", "-trace", "gic_cpu_read"]);
        assert!(trace.contains("dist write at 0x00000f00 size 4: 0x00020000"), "GICD_SGIR: SGI 0 to CPU 1: {trace}");
        assert!(trace.contains("dist write at 0x00000f00 size 4: 0x00010001"), "GICD_SGIR: SGI 1 to CPU 0: {trace}");
        assert!(trace.contains("cpu 0 iface read at 0x0000000c: 0x00000401"), "GICC_IAR on CPU 0: SGI 1 from CPU 1: {trace}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn icount_makes_the_guest_deterministic() {
        testkit::require(testkit::Resource::QemuArm);
        let p = bare(Program::Timer, Wait::Hlt, 6);
        let a = qemu(&p, true);
        let b = qemu(&p, true);
        assert_eq!(a, b, "same image, same -icount: same console");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn memory_report_counts_ring_overwrites_and_exits() {
        testkit::require(testkit::Resource::QemuArm);
        let p = Params { report: Report::Memory { ring_addr: 0x4400_0000, ring_records: 4 }, exit_addr: 0x4410_0000, ..bare(Program::Timer, Wait::Hlt, 7) };
        let log = qemu(&p, false);
        assert!(!log.contains(" t 0 "), "no per-sample lines in memory mode: {log}");
        assert!(log.contains(" start bench=timer ") && log.contains("report=memory"), "{log}");
        assert!(log.contains(" sum timer n=7 "), "{log}");
        assert!(log.contains(" end samples=7 lost=3 spurious=0 *"), "7 records in a ring of 4: {log}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn unknown_bench_and_bad_block_are_reported() {
        testkit::require(testkit::Resource::QemuArm);
        let image = guest_image().to_vec();
        let mut img = armguest::patch(&image, &bare(Program::Timer, Wait::Hlt, 2)).unwrap();
        // Bench code 9: the guest says so and exits.
        let off = armguest::abi::Field::Bench.offset();
        img[off..off + 8].copy_from_slice(&9u64.to_le_bytes());
        let d = tempfile::tempdir().unwrap();
        let g = d.path().join("g.bin");
        std::fs::write(&g, &img).unwrap();
        let out = Command::new("timeout")
            .args([
                "60",
                "qemu-system-aarch64",
                "-M",
                "virt,gic-version=3",
                "-cpu",
                "cortex-a57",
                "-m",
                "256",
                "-display",
                "none",
                "-serial",
                "stdio",
                "-monitor",
                "none",
                "-kernel",
            ])
            .arg(&g)
            .output()
            .expect("timeout(1) runs");
        assert_ne!(out.status.code(), Some(127), "qemu-system-aarch64 did not start");
        let log = String::from_utf8_lossy(&out.stdout);
        assert!(log.contains("@irqlab v1 0 error unknown_bench=9 *"), "{log}");
        assert!(matches!(parse(&log, "x", meta()), Err(armguest::console::ConsoleError::Damaged { .. })));
    }

    /// QEMU virt's ITS (hw/arm/virt.c, 7.2: VIRT_GIC_ITS 0x08080000) and 1 MiB of RAM for the tables.
    const GITS: u64 = 0x0808_0000;
    const ITS_TABLES: u64 = 0x4420_0000;

    fn device(irq: DeviceIrq, wait: Wait, samples: u64) -> Params {
        Params { bench: Program::Device(Device { irq, self_trigger: true, mmio: None }), ..bare(Program::Timer, wait, samples) }
    }

    /// The `d` lines' arrival stamps, in order.
    fn arrivals(log: &str) -> Vec<u64> {
        log.lines().filter_map(|l| l.split_once(" d ")).map(|(_, rest)| rest.split(' ').nth(1).unwrap().parse().unwrap()).collect()
    }

    fn check_device_run(log: &str, samples: u64) {
        assert!(!log.contains(" error ") && !log.contains(" fault "), "the guest hit its error exit: {log}");
        let r = parse(log, "bare", meta()).unwrap_or_else(|e| panic!("{e}\n{log}"));
        let c = &r.configs[0];
        assert_eq!(c.params["bench"], "device");
        assert_eq!(c.classes["device"].summary.count, samples);
        assert_eq!(c.counters["guest.spurious"], 0, "every interrupt taken was the awaited INTID: {log}");
        let a = arrivals(log);
        assert_eq!(a.len() as u64, samples);
        assert!(a.windows(2).all(|w| w[0] < w[1]), "arrival stamps strictly increase: {a:?}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_spi_edge_and_level_self_triggered_arrive_once_each() {
        testkit::require(testkit::Resource::QemuArm);
        for (trigger, wait) in [(Trigger::Edge, Wait::Hlt), (Trigger::Level, Wait::Hlt), (Trigger::Edge, Wait::Busy)] {
            let log = qemu(&device(DeviceIrq::Spi { intid: 100, trigger }, wait, 8), false);
            assert!(log.contains(" start bench=device "), "{log}");
            let t = if trigger == Trigger::Level { "level" } else { "edge" };
            assert!(log.contains(&format!(" abi={} intid=100 trigger={t} *", armguest::abi::ABI_VERSION)), "{log}");
            check_device_run(&log, 8);
        }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_lpi_through_the_guest_programmed_its_arrives() {
        testkit::require(testkit::Resource::QemuArm);
        // QEMU gives a CPU's GITS_TRANSLATER write requester id 0, so the self-test maps DeviceID 0.
        let irq = DeviceIrq::Lpi { intid: 8192 + 77, gits_base: GITS, device_id: 0, event_id: 5, tables_addr: ITS_TABLES };
        for wait in [Wait::Hlt, Wait::Busy] {
            let log = qemu(&device(irq, wait, 8), false);
            check_device_run(&log, 8);
        }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_mmio_trigger_records_latencies_not_stamps() {
        testkit::require(testkit::Resource::QemuArm);
        // The MMIO trigger with GITS_TRANSLATER as the "device register" (an assigned device's
        // raise register in irqlab's VMM): the guest stamps before its write, the handler after;
        // the acknowledge goes to a RAM word here.
        let irq = DeviceIrq::Lpi { intid: 8192 + 5, gits_base: GITS, device_id: 0, event_id: 5, tables_addr: ITS_TABLES };
        let mmio = armguest::MmioTrigger { go_addr: 0, trigger_addr: GITS + 0x1_0040, trigger_value: 5, ack_addr: 0x4430_0000, ack_value: 1 };
        for wait in [Wait::Hlt, Wait::Busy] {
            let p = Params { bench: Program::Device(Device { irq, self_trigger: false, mmio: Some(mmio) }), ..bare(Program::Timer, wait, 6) };
            let log = qemu(&p, true);
            assert!(!log.contains(" error ") && !log.contains(" fault "), "{log}");
            let lat = arrivals(&log);
            assert_eq!(lat.len(), 6, "{log}");
            assert!(lat.iter().all(|&l| l > 0 && l < 6250), "latencies (write → handler) are below the 6250-tick pacing, not counter stamps: {lat:?}");
            assert!(log.contains(" spurious=0 *"), "{log}");
        }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_lpi_memory_report_fills_the_ring() {
        testkit::require(testkit::Resource::QemuArm);
        let irq = DeviceIrq::Lpi { intid: 9000, gits_base: GITS, device_id: 0, event_id: 0, tables_addr: ITS_TABLES };
        let p = Params { report: Report::Memory { ring_addr: 0x4400_0000, ring_records: 16 }, exit_addr: 0x4410_0000, ..device(irq, Wait::Hlt, 5) };
        let log = qemu(&p, false);
        assert!(!log.contains(" d 0 "), "no per-sample lines in memory mode: {log}");
        assert!(log.contains(" sum device n=5 "), "{log}");
        assert!(log.contains(" end samples=5 lost=0 spurious=0 *"), "{log}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_lpi_without_an_its_there_is_an_its_error_not_a_hang() {
        testkit::require(testkit::Resource::QemuArm);
        // GITS_BASE at zeroed RAM: no GITS_BASER<n> describes a device table.
        let irq = DeviceIrq::Lpi { intid: 8192, gits_base: 0x4430_0000, device_id: 0, event_id: 0, tables_addr: ITS_TABLES };
        let log = qemu(&device(irq, Wait::Hlt, 2), false);
        assert!(log.contains(" error its=no_device_table *"), "{log}");
        assert!(matches!(parse(&log, "x", meta()), Err(armguest::console::ConsoleError::Guest { .. })), "{log}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_lpi_its_commands_are_what_qemu_decodes() {
        testkit::require(testkit::Resource::QemuArm);
        let irq = DeviceIrq::Lpi { intid: 8192 + 300, gits_base: GITS, device_id: 0, event_id: 9, tables_addr: ITS_TABLES };
        let trace = ["-trace", "gicv3_its_cmd_*", "-trace", "gicv3_its_translation_write", "-trace", "gicv3_its_write", "-trace", "gicv3_redist_write"];
        let (log, err) = qemu_with(&device(irq, Wait::Hlt, 3), false, &trace);
        check_device_run(&log, 3);
        // QEMU 7.2's trace of what it decoded (hw/intc/trace-events): the guest's five commands, in
        // order, with its fields; ITT at ITS_TABLES + 0x40000 (>> 8 in the trace); RDbase 0 is vCPU
        // 0's processor number (QEMU's GITS_TYPER.PTA = 0).
        let cmds: Vec<&str> = err.lines().filter_map(|l| l.split_once("GICv3 ITS: command ").map(|(_, c)| c.trim())).collect();
        assert_eq!(
            cmds,
            [
                "MAPD DeviceID 0x0 Size 0xb ITT_addr 0x442400 V 1",
                "MAPC ICID 0x0 RDbase 0x0 V 1",
                &format!("MAPTI DeviceID 0x0 EventID 0x9 ICID 0x0 pINTID {:#x}", 8192 + 300),
                "INV DeviceID 0x0 EventID 0x9",
                "SYNC",
            ],
            "{err}"
        );
        // Register programming: PROPBASER (IDbits 15) and PENDBASER (PTZ) then EnableLPIs; GITS_BASER0
        // (devices, QEMU's 8-byte entries) and BASER1 (collections), valid, 64 KiB pages, one page
        // each; CBASER (one 4 KiB page), CWRITER 0, Enabled (bit 31 is the read-only Quiescent read
        // back), CWRITER past the five 32-byte commands.
        let regs = |tag: &str| -> Vec<String> { err.lines().filter_map(|l| l.split_once(tag).map(|(_, w)| w.trim().to_string())).collect() };
        let t = ITS_TABLES;
        assert_eq!(
            regs("redistributor 0x0 write: ")
                .into_iter()
                .filter(|w| w.starts_with("offset 0x70 ") || w.starts_with("offset 0x78 ") || w.starts_with("offset 0x0 "))
                .collect::<Vec<_>>(),
            [
                format!("offset 0x70 data {:#x} size 8 secure 0", t | 15),
                format!("offset 0x78 data {:#x} size 8 secure 0", (t + 0x1_0000) | 1 << 62),
                "offset 0x0 data 0x3 size 4 secure 0".into()
            ],
            "{err}"
        );
        assert_eq!(
            regs("GICv3 ITS write: "),
            [
                format!("offset 0x100 data {:#x} size 8", 1u64 << 63 | 1 << 56 | 7 << 48 | (t + 0x5_0000) | 2 << 8),
                format!("offset 0x108 data {:#x} size 8", 1u64 << 63 | 4 << 56 | 7 << 48 | (t + 0x3_0000) | 2 << 8),
                format!("offset 0x80 data {:#x} size 8", 1u64 << 63 | (t + 0x2_0000)),
                "offset 0x88 data 0x0 size 8".into(),
                "offset 0x0 data 0x80000001 size 4".into(),
                "offset 0x88 data 0xa0 size 8".into(),
            ],
            "{err}"
        );
        let writes = err.lines().filter(|l| l.contains("TRANSLATER write: offset 0x40 data 0x9 size 4 requester_id 0x0")).count();
        assert_eq!(writes, 3, "one GITS_TRANSLATER write per sample, DeviceID 0: {err}");
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_spi_trigger_mode_reaches_the_distributor() {
        testkit::require(testkit::Resource::QemuArm);
        for trigger in [Trigger::Edge, Trigger::Level] {
            let (log, err) = qemu_with(&device(DeviceIrq::Spi { intid: 100, trigger }, Wait::Hlt, 2), false, &["-trace", "gicv3_dist_write"]);
            check_device_run(&log, 2);
            // SPI 100 = word 3 bit 4 of IGROUPR/ISENABLER/ISPENDR; priority byte 100; ICFGR word 6,
            // Int_config bit 9 (1 = edge); IROUTER<100> = vCPU 0's affinity 0.
            let writes: Vec<&str> = err.lines().filter_map(|l| l.split_once("distributor write: ").map(|(_, w)| w.trim())).collect();
            let icfgr = if trigger == Trigger::Edge { "offset 0xc18 data 0x200 size 4 secure 0" } else { "offset 0xc18 data 0x0 size 4 secure 0" };
            let want = [
                "offset 0x0 data 0x12 size 4 secure 0",
                "offset 0x8c data 0x10 size 4 secure 0",
                "offset 0x464 data 0x80 size 1 secure 0",
                icfgr,
                "offset 0x6320 data 0x0 size 8 secure 0",
                "offset 0x10c data 0x10 size 4 secure 0",
                "offset 0x20c data 0x10 size 4 secure 0",
                "offset 0x20c data 0x10 size 4 secure 0",
            ];
            assert_eq!(writes, want, "{trigger:?}: {err}");
        }
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_ready_signal_precedes_the_first_trigger() {
        testkit::require(testkit::Resource::QemuArm);
        // exit_addr on QEMU virt's second flash bank (0x04000000), whose writes QEMU traces (the
        // flash takes a u64 store as two 4-byte writes).
        let p = Params { exit_addr: 0x0400_0000, ..device(DeviceIrq::Spi { intid: 100, trigger: Trigger::Edge }, Wait::Hlt, 2) };
        let (log, err) = qemu_with(&p, false, &["-trace", "pflash_*", "-trace", "gicv3_dist_write"]);
        check_device_run(&log, 2);
        // The low word of each u64 write to exit_addr, and the self-trigger's GICD_ISPENDR writes.
        let events: Vec<&str> = err
            .lines()
            .filter_map(|l| {
                if l.contains("pflash_io_write virt.flash1: offset:0x0000 ") {
                    l.split("value:").nth(1).map(|v| v.split(' ').next().unwrap())
                } else if l.contains("distributor write: offset 0x20c ") {
                    Some("ISPENDR")
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(events, ["0x0006", "ISPENDR", "ISPENDR", "0x0001"], "SIGNAL_DEVICE_READY (6) before the first trigger, EXIT_DONE (1) last: {err}");
        assert_eq!(armguest::abi::SIGNAL_DEVICE_READY, 6);
    }

    #[test]
    #[ignore = "needs qemu-system-aarch64 and the aarch64 cross binutils: scripts/test.sh runs it where they are"]
    fn device_lpi_under_icount_is_deterministic() {
        testkit::require(testkit::Resource::QemuArm);
        let p = device(DeviceIrq::Lpi { intid: 8200, gits_base: GITS, device_id: 0, event_id: 1, tables_addr: ITS_TABLES }, Wait::Hlt, 4);
        let a = qemu(&p, true);
        let b = qemu(&p, true);
        check_device_run(&a, 4);
        assert_eq!(a, b, "same image, same -icount: same console, arrival stamps included");
    }
}
