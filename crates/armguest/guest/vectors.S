// irqlab arm64 benchmark guest: the exception vectors, the IRQ handler (timer, ping, pong, device) and the fault report. Included by bench.S (one translation unit, PC-relative only).
// ---------------------------------------------------------------- exceptions
.balign 0x800
vectors:
    .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
    .balign 0x80
    .if \n == 5 || \n == 1          // IRQ, current EL (SP_ELx or SP_EL0)
    b       irq_entry
    .else
    mov     x0, #\n
    b       fault
    .endif
    .endr

irq_entry:
    sub     sp, sp, #64
    stp     x0, x1, [sp]
    stp     x2, x3, [sp, #16]
    stp     x4, x5, [sp, #32]
    str     x30, [sp, #48]
    mrs     x0, cntvct_el0          // the arrival time, first
    adr     x4, gicc_v2
    ldr     x4, [x4]
    cbnz    x4, 2f
    mrs     x1, icc_iar1_el1
    and     x2, x1, #0xffffff
    b       3f
2:  ldr     w1, [x4, #0xc]          // GICv2: GICC_IAR (an SGI's source CPU, bits 12:10, goes back in EOIR)
    and     x2, x1, #0x3ff
3:  cmp     x2, #PPI_VTIMER
    b.eq    irq_timer
    cmp     x2, #SGI_PING
    b.eq    irq_ping
    cmp     x2, #SGI_PONG
    b.eq    irq_pong
    adr     x4, _start
    ldr     x3, [x4, #P_BENCH]
    cmp     x3, #BENCH_DEVICE
    b.ne    1f
    ldr     x3, [x4, #P_DEV_INTID]
    cmp     x2, x3
    b.eq    irq_device
1:  adr     x4, spurious
    ldr     x3, [x4]
    add     x3, x3, #1
    str     x3, [x4]
    cmp     x2, #1020               // 1020-1023: special, no EOI (LPIs, 8192 up, are EOIed)
    b.lo    irq_eoi
    cmp     x2, #1023
    b.ls    irq_out
    b       irq_eoi
irq_timer:
    mrs     x3, cntv_cval_el0
    sub     x3, x0, x3
    adr     x4, timer_lat
    str     x3, [x4]
    msr     cntv_ctl_el0, xzr       // level interrupt: disable before EOI
    isb
    adr     x4, timer_flag
    b       irq_flag
irq_ping:                           // on vCPU 1: stamp, reply
    adr     x4, rx_time
    str     x0, [x4]
    dsb     sy
    adr     x4, gicc_v2
    ldr     x4, [x4]
    cbnz    x4, 4f
    mov     x3, #(SGI_PONG << 24)
    orr     x3, x3, #1              // TargetList: Aff0 = 0
    msr     icc_sgi1r_el1, x3
    isb
    b       irq_eoi
4:  adr     x5, _start              // GICv2: GICD_SGIR, CPUTargetList = CPU 0
    ldr     x5, [x5, #P_GICD]
    mov     w3, #(1 << 16)
    add     w3, w3, #SGI_PONG
    str     w3, [x5, #0xf00]
    dsb     sy
    b       irq_eoi
irq_device:                         // on vCPU 0: stamp, flag; EOI (a level SPI is resampled then)
    adr     x4, dev_flag                // a second arrival before the sample was taken: spurious
    ldr     x3, [x4]
    cbnz    x3, 1b
    adr     x4, dev_time
    str     x0, [x4]
    adr     x4, _start              // MMIO trigger: acknowledge the device before the EOI (a
    ldr     x3, [x4, #P_DEV_ACK_ADDR] // level interrupt's device drops its line)
    cbz     x3, 2f
    ldr     x5, [x4, #P_DEV_ACK_VALUE]
    str     w5, [x3]
    dsb     sy
2:  adr     x4, dev_flag
    b       irq_flag
irq_pong:                           // on vCPU 0: stamp, flag
    adr     x4, pong_time
    str     x0, [x4]
    adr     x4, pong_flag
irq_flag:
    mov     x3, #1
    str     x3, [x4]
    dsb     sy
irq_eoi:
    adr     x4, gicc_v2
    ldr     x4, [x4]
    cbnz    x4, 5f
    msr     icc_eoir1_el1, x1
    isb
    b       irq_out
5:  str     w1, [x4, #0x10]         // GICv2: GICC_EOIR (EOImode 0: drop and deactivate)
    dsb     sy
irq_out:
    ldp     x0, x1, [sp]
    ldp     x2, x3, [sp, #16]
    ldp     x4, x5, [sp, #32]
    ldr     x30, [sp, #48]
    add     sp, sp, #64
    eret

// x0 = vector index: `fault vector=.. esr=.. elr=..`, then the error exit.
fault:
    mov     x21, x0
    adr     x19, _start
    ldr     x20, [x19, #P_UART]
    bl      line_begin
    adr     x0, s_fault
    bl      puts
    mov     x0, x21
    bl      putdec
    adr     x0, s_esr
    bl      puts
    mrs     x0, esr_el1
    bl      putdec
    adr     x0, s_elr
    bl      puts
    mrs     x0, elr_el1
    sub     x0, x0, x19             // as an image offset
    bl      putdec
    bl      line_end
    mov     x0, #EXIT_ERROR
    b       finish

