// irqlab arm64 benchmark guest: GIC distributor, redistributor and CPU interface set-up, GICv3
// through the system registers or GICv2 through GICD/GICC MMIO (P_GIC_VERSION, set by the loader).
// Included by bench.S (one translation unit, PC-relative only).
// ---------------------------------------------------------------- GIC
gicd_init:                          // GICv3: ARE + group 1 enable
    ldr     x1, [x19, #P_GICD]
    ldr     x3, [x19, #P_GIC_VERSION]
    cmp     x3, #GIC_V2
    b.eq    1f
    mov     w2, #0x12
    str     w2, [x1]
    ret
1:  adr     x2, gicc_v2             // GICv2: the IRQ path finds GICC here (0 = system registers)
    ldr     x3, [x19, #P_GICC]
    str     x3, [x2]
    dsb     sy
    mov     w2, #3                  // GICD_CTLR: EnableGrp0 | EnableGrp1 (Xen's vGICv2 keeps bit 0)
    str     w2, [x1]
    ret

// x0 = vCPU index: wake its redistributor, group 1 + priority + enable for SGI 0/1 and PPI 27,
// then the system-register CPU interface.
gic_cpu_init:
    ldr     x3, [x19, #P_GIC_VERSION]
    cmp     x3, #GIC_V2
    b.eq    gicv2_cpu_init
    ldr     x1, [x19, #P_GICR]
    ldr     x2, [x19, #P_GICR_STRIDE]
    madd    x1, x0, x2, x1
    ldr     w2, [x1, #0x14]         // GICR_WAKER: clear ProcessorSleep, wait ChildrenAsleep
    bic     w2, w2, #2
    str     w2, [x1, #0x14]
    mov     x4, #0x100000
1:  ldr     w2, [x1, #0x14]
    subs    x4, x4, #1
    b.eq    2f
    tbnz    w2, #2, 1b
2:  add     x1, x1, #0x10, lsl #12  // SGI/PPI frame
    mov     w2, #-1
    str     w2, [x1, #0x80]         // GICR_IGROUPR0: all group 1
    mov     x5, x30
    bl      sgi_ppi_enable
    mov     x30, x5
    mrs     x2, icc_sre_el1
    orr     x2, x2, #1
    msr     icc_sre_el1, x2
    isb
    mov     x2, #0xff
    msr     icc_pmr_el1, x2
    mov     x2, #1
    msr     icc_igrpen1_el1, x2
    isb
    ret


// GICv2 (IHI 0048B): priority and enable for SGI 0/1 and PPI 27 in the distributor's banked
// registers (each CPU sees its own), then the memory-mapped CPU interface: PMR, and GICC_CTLR with
// EOImode 0 (a write of GICC_EOIR drops the priority and deactivates: no GICC_DIR). Every
// interrupt stays in group 0 (GICD_IGROUPR's reset value), signalled as IRQ (FIQEn 0).
gicv2_cpu_init:
    ldr     x1, [x19, #P_GICD]
    mov     x5, x30
    bl      sgi_ppi_enable
    mov     x30, x5
    ldr     x1, [x19, #P_GICC]
    mov     w2, #0xff
    str     w2, [x1, #0x4]          // GICC_PMR
    mov     w2, #3
    str     w2, [x1]                // GICC_CTLR: EnableGrp0 | EnableGrp1
    dsb     sy
    isb
    ret


// x1 = the frame of this CPU's SGI and PPI registers, at the same offsets in both generations
// (GICv3: the redistributor's SGI frame, GICR_*; GICv2: the distributor's banked GICD_*):
// priority 0x80 for SGIs 0-3 and PPIs 24-27, then enable SGI 0, SGI 1 and PPI 27.
sgi_ppi_enable:
    mov     w2, #0x80808080
    str     w2, [x1, #0x400]        // IPRIORITYR0: SGIs 0-3
    str     w2, [x1, #0x418]        // IPRIORITYR6: PPIs 24-27
    mov     w2, #(1 << PPI_VTIMER)
    orr     w2, w2, #((1 << SGI_PING) | (1 << SGI_PONG))
    str     w2, [x1, #0x100]        // ISENABLER0
    dsb     sy
    ret
