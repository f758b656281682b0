// irqlab arm64 benchmark guest: the device bench. An SPI programmed in the distributor, or an LPI
// the guest maps through the ITS itself, waited for `samples` times; each arrival is stamped with
// CNTVCT first thing in the IRQ handler (vectors.S, irq_device) and reported as (index, stamp):
// the host subtracts its own trigger stamp. Like the timer and IPI loops, device_loop re-reads
// P_SAMPLES before each sample, so a VMM ends the run early by lowering it (irqlab run
// --duration / --stop-above). With the MMIO trigger (an assigned device the guest raises itself)
// that is what ends the run: the guest stops raising and reaches bench_done. When the host
// triggers, the host simply stops triggering and stops the vCPUs; a guest that already re-read
// the old count waits in wait_flag until then (see crates/kvm/src/runner/mod.rs trigger_loop). Included by bench.S (one translation unit,
// PC-relative only). Registers and commands: GICv3/v4 architecture specification (ARM IHI 0069H)
// 12.9 (GICD_IGROUPR, IPRIORITYR, ICFGR, IROUTER, ISENABLER, ISPENDR), 12.11 (GICR_CTLR,
// PROPBASER, PENDBASER, TYPER), 5.1 (the LPI configuration byte), 12.19 (GITS_CTLR, TYPER,
// CBASER, CWRITER, CREADR, BASER<n>, TRANSLATER) and 5.3 (MAPD, MAPC, MAPTI, INV, SYNC encodings);
// checked against QEMU 7.2 hw/intc/arm_gicv3_its.c (process_mapd, process_mapc, process_mapti,
// gicv3_its_translation_write) and Linux arch/arm64/kvm/vgic/vgic-its.c (vgic_its_cmd_handle_*).
// ---------------------------------------------------------------- device bench
device_bench:
    bl      gicd_init
    mov     x0, #0
    bl      gic_cpu_init
    bl      print_start             // first, so a failed ITS set-up is a guest error after it
    ldr     x0, [x19, #P_DEV_INTID]
    cmp     x0, #LPI_BASE
    b.hs    1f
    bl      spi_init
    b       2f
1:  bl      its_init
    cbnz    x0, its_failed
2:  ldr     x1, [x19, #P_EXIT_ADDR] // set up: the host may trigger from now on
    cbz     x1, 3f
    mov     x0, #SIGNAL_DEVICE_READY
    dsb     sy
    str     x0, [x1]
    dsb     sy
3:  ldr     x1, [x19, #P_DEV_GO]    // MMIO trigger: wait until the host has connected the
    cbz     x1, 5f                  // device's interrupt (its go word turns non-zero)
4:  ldr     x2, [x1]
    cbz     x2, 4b
5:  mov     x21, #0
    ldr     x22, [x19, #P_SAMPLES]
    ldr     x24, [x19, #P_WAIT]
    ldr     x23, [x19, #P_PERIOD]
    isb
    mrs     x26, cntvct_el0         // MMIO trigger: the first write no earlier than now
device_loop:
    ldr     x22, [x19, #P_SAMPLES]  // re-read: a VMM lowers it to end the run early
    cmp     x21, x22
    b.hs    bench_done
    adr     x0, dev_flag
    str     xzr, [x0]
    dsb     sy
    msr     daifset, #2
    ldr     x1, [x19, #P_DEV_SELF]
    cbz     x1, 4f
    bl      dev_raise
4:  ldr     x1, [x19, #P_DEV_TRIG_ADDR]
    cbz     x1, 5f
    bl      dev_mmio_raise
5:  adr     x0, dev_flag
    bl      wait_flag
    adr     x0, dev_time
    ldr     x1, [x0]
    ldr     x2, [x19, #P_DEV_TRIG_ADDR]
    cbz     x2, 6f
    sub     x1, x1, x25             // MMIO trigger: handler stamp - stamp before the write
6:  mov     x0, x21
    mov     x2, #0
    bl      emit_sample
    add     x21, x21, #1
    b       device_loop

// MMIO trigger, paced `period` ticks apart (x23; x26 = earliest time of this write): spin until
// then, x25 = CNTVCT just before the 32-bit write of P_DEV_TRIG_VALUE to P_DEV_TRIG_ADDR (the
// device raises its interrupt on it), x26 = x25 + period. Clobbers x1, x2.
dev_mmio_raise:
1:  isb
    mrs     x25, cntvct_el0
    cmp     x25, x26
    b.lo    1b
    ldr     x1, [x19, #P_DEV_TRIG_ADDR]
    ldr     x2, [x19, #P_DEV_TRIG_VALUE]
    str     w2, [x1]
    dsb     sy
    add     x26, x25, x23
    ret

// x0 = error name: `error its=<name>`, then the ITS exit.
its_failed:
    mov     x21, x0
    bl      line_begin
    adr     x0, s_its
    bl      puts
    mov     x0, x21
    bl      puts
    bl      line_end
    mov     x0, #EXIT_ITS
    b       finish

// x0 = SPI INTID: group 1, priority 0x80, edge or level (P_DEV_TRIGGER), routed to this PE
// (vCPU 0: MPIDR affinity, IRM 0), then enabled. Clobbers x1-x8.
spi_init:
    ldr     x1, [x19, #P_GICD]
    lsr     x2, x0, #5              // 32 interrupts a word
    and     x3, x0, #31
    mov     w4, #1
    lsl     w4, w4, w3
    add     x5, x1, #0x80
    ldr     w6, [x5, x2, lsl #2]
    orr     w6, w6, w4
    str     w6, [x5, x2, lsl #2]    // GICD_IGROUPR<n>: group 1
    add     x5, x1, #0x400
    mov     w6, #0x80
    strb    w6, [x5, x0]            // GICD_IPRIORITYR<n>, byte-accessible
    lsr     x3, x0, #4              // 16 interrupts a word, Int_config = bit 2n+1
    and     x7, x0, #15
    lsl     x7, x7, #1
    add     x7, x7, #1
    mov     w8, #1
    lsl     w8, w8, w7
    add     x5, x1, #0xc00
    ldr     w6, [x5, x3, lsl #2]
    bic     w6, w6, w8              // 0: level
    ldr     x7, [x19, #P_DEV_TRIGGER]
    cmp     x7, #TRIGGER_LEVEL
    b.eq    1f
    orr     w6, w6, w8              // 1: edge
1:  str     w6, [x5, x3, lsl #2]    // GICD_ICFGR<n>
    mrs     x6, mpidr_el1
    and     x7, x6, #0xffffff       // Aff2.Aff1.Aff0
    ubfx    x8, x6, #32, #8         // Aff3
    orr     x7, x7, x8, lsl #32
    add     x5, x1, #0x6000
    str     x7, [x5, x0, lsl #3]    // GICD_IROUTER<n>
    dsb     sy
    add     x5, x1, #0x100
    str     w4, [x5, x2, lsl #2]    // GICD_ISENABLER<n>
    dsb     sy
    ret

// Self-trigger (bare-QEMU tests): an SPI is made pending through GICD_ISPENDR; an LPI by writing
// the EventID to GITS_TRANSLATER (QEMU takes the DeviceID of a CPU write from its requester id,
// 0). Clobbers x0-x4.
dev_raise:
    ldr     x0, [x19, #P_DEV_INTID]
    cmp     x0, #LPI_BASE
    b.hs    1f
    ldr     x1, [x19, #P_GICD]
    add     x1, x1, #0x200
    lsr     x2, x0, #5
    and     x3, x0, #31
    mov     w4, #1
    lsl     w4, w4, w3
    str     w4, [x1, x2, lsl #2]    // GICD_ISPENDR<n>
    b       2f
1:  ldr     x1, [x19, #P_GITS]
    add     x1, x1, #0x10, lsl #12  // translation frame
    ldr     x2, [x19, #P_ITS_EVENTID]
    str     w2, [x1, #0x40]         // GITS_TRANSLATER
2:  dsb     sy
    ret

// LPIs through the ITS, set up by the guest in the 1 MiB at P_ITS_TABLES (abi.rs ITS_LAYOUT).
// Returns x0 = 0, or the address of the failure's name. Leaf; clobbers x1-x15.
its_init:
    ldr     x1, [x19, #P_ITS_TABLES]
    ldr     x2, [x19, #P_GITS]
    ldr     x3, [x19, #P_GICR]      // vCPU 0's redistributor
    adr     x0, s_its_nolpis
    ldr     x4, [x3, #0x8]          // GICR_TYPER.PLPIS
    tbz     x4, #0, 9f
    mov     x4, x1                  // zero all of it: tables, queue, pending bits
    add     x5, x1, #ITS_TABLES_SIZE
1:  stp     xzr, xzr, [x4], #16
    cmp     x4, x5
    b.lo    1b
    ldr     x4, [x19, #P_DEV_INTID]
    sub     x4, x4, #LPI_BASE
    add     x5, x1, #ITS_PROP
    mov     w6, #0xa3               // priority 0xa0, bit 1 RES1 (group 1), enabled
    strb    w6, [x5, x4]
    dsb     sy
    orr     x4, x5, #15             // IDbits 15: INTIDs below 65536
    str     x4, [x3, #0x70]         // GICR_PROPBASER
    add     x4, x1, #ITS_PEND
    orr     x4, x4, #(1 << 62)      // PTZ: the pending table is zero
    str     x4, [x3, #0x78]         // GICR_PENDBASER
    dsb     sy
    ldr     w4, [x3]
    orr     w4, w4, #1
    str     w4, [x3]                // GICR_CTLR.EnableLPIs
    dsb     sy
    // GITS_BASER<n>: a flat table of 64 KiB pages for the device and collection types (KVM's vITS
    // sizes every table in 64 KiB pages, vgic_its_check_id; QEMU takes 4/16/64 KiB); the ITS
    // says the type and the entry size, the guest gives the address and size.
    mov     x15, #0                 // device table seen
    mov     x6, #0
    add     x7, x2, #0x100
2:  ldr     x4, [x7, x6, lsl #3]
    ubfx    x5, x4, #56, #3         // Type
    ubfx    x8, x4, #48, #5
    add     x8, x8, #1              // entry bytes
    cmp     x5, #1                  // devices
    b.eq    3f
    cmp     x5, #4                  // collections: ICID 0 fits one page
    b.ne    5f
    add     x9, x1, #ITS_CT
    mov     x10, #1
    b       4f
3:  ldr     x10, [x19, #P_ITS_DEVID]
    add     x10, x10, #1
    mul     x10, x10, x8
    add     x10, x10, #0x10, lsl #12
    sub     x10, x10, #1            // round up to 64 KiB
    lsr     x10, x10, #16           // 64 KiB pages for DeviceIDs 0..=devid
    adr     x0, s_its_dt
    cmp     x10, #((ITS_TABLES_SIZE - ITS_DT) >> 16)
    b.hi    9f
    add     x9, x1, #ITS_DT
    mov     x15, #1
4:  movz    x11, #0x071f, lsl #48   // keep Type and Entry_Size
    and     x4, x4, x11
    orr     x4, x4, x9              // Physical_Address; flat
    orr     x4, x4, #(2 << 8)       // Page_Size 0b10 = 64 KiB
    sub     x10, x10, #1
    orr     x4, x4, x10             // Size = pages - 1
    orr     x4, x4, #(1 << 63)      // Valid
    str     x4, [x7, x6, lsl #3]
    ldr     x4, [x7, x6, lsl #3]
    adr     x0, s_its_page
    ubfx    x5, x4, #8, #2
    cmp     x5, #2
    b.ne    9f                      // 64 KiB pages not supported
    tbz     x4, #63, 9f
5:  add     x6, x6, #1
    cmp     x6, #8
    b.lo    2b
    adr     x0, s_its_nodt
    cbz     x15, 9f
    add     x13, x1, #ITS_CMDQ
    orr     x4, x13, #(1 << 63)     // Valid, Size 0: one 4 KiB page
    str     x4, [x2, #0x80]         // GITS_CBASER
    str     xzr, [x2, #0x88]        // GITS_CWRITER
    dsb     sy
    ldr     w4, [x2]
    orr     w4, w4, #1
    str     w4, [x2]                // GITS_CTLR.Enabled
    dsb     sy
    // RDbase of vCPU 0 for MAPC/SYNC: its physical address (GITS_TYPER.PTA = 1) or its
    // processor number (GICR_TYPER[23:8]), in bits 51:16.
    ldr     x4, [x2, #0x8]          // GITS_TYPER
    mov     x14, x3
    tbnz    x4, #19, 6f
    ldr     x5, [x3, #0x8]
    ubfx    x5, x5, #8, #16
    lsl     x14, x5, #16
6:  ubfx    x5, x4, #4, #4          // ITT_entry_size - 1: the ITT is ITS_ITT, 64 KiB, enough
    ldr     x8, [x19, #P_ITS_DEVID]
    ldr     x9, [x19, #P_ITS_EVENTID]
    ldr     x10, [x19, #P_DEV_INTID]
    mov     x4, #0x08               // MAPD DeviceID, Size = EventID bits - 1, ITT, V
    orr     x4, x4, x8, lsl #32
    mov     x5, #(ITS_EVENT_BITS - 1)
    add     x6, x1, #ITS_ITT
    orr     x6, x6, #(1 << 63)
    stp     x4, x5, [x13, #0]
    stp     x6, xzr, [x13, #16]
    mov     x4, #0x09               // MAPC ICID 0 -> RDbase, V
    orr     x6, x14, #(1 << 63)
    stp     x4, xzr, [x13, #32]
    stp     x6, xzr, [x13, #48]
    mov     x4, #0x0a               // MAPTI DeviceID, EventID -> pINTID, ICID 0
    orr     x4, x4, x8, lsl #32
    orr     x5, x9, x10, lsl #32
    stp     x4, x5, [x13, #64]
    stp     xzr, xzr, [x13, #80]
    mov     x4, #0x0c               // INV DeviceID, EventID: the ITS reads the config byte
    orr     x4, x4, x8, lsl #32
    stp     x4, x9, [x13, #96]
    stp     xzr, xzr, [x13, #112]
    mov     x4, #0x05               // SYNC RDbase
    stp     x4, xzr, [x13, #128]
    stp     x14, xzr, [x13, #144]
    dsb     sy
    mov     x12, #160
    str     x12, [x2, #0x88]        // GITS_CWRITER
    dsb     sy
    mrs     x8, cntfrq_el0          // GITS_CREADR catches up within 1 s of guest time
    mrs     x9, cntvct_el0
    add     x9, x9, x8
7:  ldr     x4, [x2, #0x90]         // GITS_CREADR
    adr     x0, s_its_stalled
    tbnz    x4, #0, 9f
    and     x4, x4, #0xfffe0
    cmp     x4, x12
    b.eq    8f
    mrs     x10, cntvct_el0
    cmp     x10, x9
    b.lo    7b
    adr     x0, s_its_timeout
    b       9f
8:  mov     x0, #0
9:  ret
