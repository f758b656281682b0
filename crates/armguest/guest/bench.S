// irqlab arm64 benchmark guest: timer and SGI-IPI latency, a spinning neighbour.
// See crates/armguest/src/lib.rs for the ABI. Position-independent: PC-relative addressing only
// (adr), no absolute address anywhere, so it runs wherever it is loaded (build.rs links it at two
// bases and checks the bytes are identical). MMU off (EL1 boot state): every data access is
// Device memory, so all data is naturally aligned.
.include "params.inc"


.text
.global _start
_start:
    b       entry                   // code0
    .long   0                       // code1
    .quad   TEXT_OFFSET             // text_offset
    .quad   _end - _start           // image_size (no bss: everything is in the file)
    .quad   0                       // flags: little-endian
    .quad   0, 0, 0                 // res2..res4
    .ascii  "ARM\x64"               // magic
    .long   0                       // res5
params:                             // offset 0x40 = PARAMS_OFFSET
    PARAM_DEFAULTS

// ---------------------------------------------------------------- entry (vCPU 0)
entry:
    msr     daifset, #0xf
    adr     x19, _start
    adr     x0, vectors
    msr     vbar_el1, x0
    adr     x0, stack0_top
    mov     sp, x0
    isb
    ldr     x20, [x19, #P_UART]
    mov     x28, #0                 // line sequence number
    ldr     x0, [x19, #P_MAGIC]
    ldr     x1, =PARAMS_MAGIC
    cmp     x0, x1
    b.ne    bad_params
    ldr     x0, [x19, #P_ABI_VERSION]
    cmp     x0, #ABI_VERSION
    b.ne    bad_params
    ldr     x0, [x19, #P_BENCH]
    cmp     x0, #BENCH_SPIN
    b.eq    spin_bench
    cmp     x0, #BENCH_TIMER
    b.eq    timer_bench
    cmp     x0, #BENCH_IPI
    b.eq    ipi_bench
    cmp     x0, #BENCH_DEVICE
    b.eq    device_bench
    bl      line_begin
    adr     x0, s_unknown
    bl      puts
    ldr     x0, [x19, #P_BENCH]
    bl      putdec
    bl      line_end
    mov     x0, #EXIT_UNKNOWN_BENCH
    b       finish

bad_params:
    bl      line_begin
    adr     x0, s_badparams
    bl      puts
    bl      line_end
    mov     x0, #EXIT_ERROR
    b       finish

// ---------------------------------------------------------------- spin (busy neighbour)
// Starts every other vCPU the domain has (PSCI CPU_ON on Aff0 = 1, 2, ... until one is refused)
// spinning too, so a neighbour with as many vCPUs as there are pCPUs keeps each pCPU busy.
spin_bench:
    mov     x21, #1
1:  ldr     x0, =0xc4000003         // PSCI CPU_ON
    mov     x1, x21
    adr     x2, spin_secondary
    mov     x3, #0
    hvc     #0
    cbnz    x0, 2f
    add     x21, x21, #1
    cmp     x21, #8
    b.lo    1b
2:  bl      print_start
    ldr     x1, [x19, #P_EXIT_ADDR]
    cbz     x1, 3f
    mov     x0, #EXIT_PARKED
    str     x0, [x1]
3:  b       3b
spin_secondary:
    msr     daifset, #0xf
4:  b       4b

// ---------------------------------------------------------------- timer bench
timer_bench:
    bl      gicd_init
    mov     x0, #0
    bl      gic_cpu_init
    bl      print_start
    mov     x21, #0
    ldr     x22, [x19, #P_SAMPLES]
    ldr     x23, [x19, #P_PERIOD]
    ldr     x24, [x19, #P_WAIT]
timer_loop:
    ldr     x22, [x19, #P_SAMPLES]  // re-read: a VMM lowers it to end the run early
    cmp     x21, x22
    b.hs    bench_done
    adr     x0, timer_flag
    str     xzr, [x0]
    msr     daifset, #2
    mrs     x1, cntvct_el0
    add     x1, x1, x23
    mov     x26, x1                 // the deadline, for the memory-mode record
    msr     cntv_cval_el0, x1
    mov     x1, #1
    msr     cntv_ctl_el0, x1
    isb
    bl      wait_flag
    adr     x0, timer_lat
    ldr     x1, [x0]
    mov     x0, x21
    mov     x2, #0
    bl      emit_sample
    add     x21, x21, #1
    b       timer_loop

// x0 = flag address, x24 = wait mode. Returns with IRQs masked once *x0 != 0.
// WFI: armed with IRQs masked, WFI (wakes on the pending IRQ), then unmask to take it; a
// check-then-WFI with IRQs unmasked would lose a wake-up landing between the two.
wait_flag:
    cbnz    x24, 2f
1:  wfi
    msr     daifclr, #2
    isb
    msr     daifset, #2
    ldr     x1, [x0]
    cbz     x1, 1b
    ret
2:  msr     daifclr, #2
3:  ldr     x1, [x0]
    cbz     x1, 3b
    msr     daifset, #2
    ret

// ---------------------------------------------------------------- IPI bench
ipi_bench:
    bl      gicd_init
    mov     x0, #0
    bl      gic_cpu_init
    ldr     x0, [x19, #P_IPI_TARGET]
    bl      target_mpidr
    mov     x1, x0                  // the target's MPIDR (Aff1.Aff0)
    ldr     x0, =0xc4000003         // PSCI CPU_ON (SMC64)
    adr     x2, secondary
    mov     x3, #0
    hvc     #0
    cbnz    x0, cpu_on_failed
    mrs     x2, cntfrq_el0          // wait at most 1 s (guest time) for vCPU 1
    mrs     x3, cntvct_el0
    add     x3, x3, x2
    adr     x0, cpu1_ready
1:  ldr     x1, [x0]
    cbnz    x1, 2f
    mrs     x4, cntvct_el0
    cmp     x4, x3
    b.lo    1b
    mov     x0, #-1
    b       cpu_on_failed
2:  bl      print_start
    mov     x21, #0
    ldr     x22, [x19, #P_SAMPLES]
    ldr     x23, [x19, #P_PERIOD]
    ldr     x24, [x19, #P_WAIT]
ipi_loop:
    ldr     x22, [x19, #P_SAMPLES]  // re-read: a VMM lowers it to end the run early
    cmp     x21, x22
    b.hs    bench_done
    adr     x0, pong_flag
    str     xzr, [x0]
    dsb     sy
    msr     daifset, #2
    adr     x2, gicc_v2
    ldr     x2, [x2]
    cbnz    x2, 5f
    ldr     x1, [x19, #P_IPI_TARGET]
    and     x2, x1, #0xf
    mov     x3, #1
    lsl     x3, x3, x2              // TargetList: bit Aff0 of the target
    lsr     x1, x1, #4
    and     x1, x1, #0xff
    lsl     x1, x1, #16             // Aff1 of the target
    orr     x1, x1, x3
    mov     x3, #(SGI_PING << 24)   // INTID
    orr     x1, x1, x3
    mrs     x25, cntvct_el0         // t0
    msr     icc_sgi1r_el1, x1
    isb
    b       6f
5:  ldr     x2, [x19, #P_GICD]      // GICv2: GICD_SGIR, CPUTargetList = the target's bit
    ldr     x3, [x19, #P_IPI_TARGET]
    add     x3, x3, #16
    mov     w4, #1
    lsl     w3, w4, w3
    add     w3, w3, #SGI_PING
    mrs     x25, cntvct_el0         // t0
    str     w3, [x2, #0xf00]
    dsb     sy
6:  bl      wait_flag
    adr     x0, rx_time
    ldr     x1, [x0]
    sub     x1, x1, x25             // one way: counter at vCPU 1's handler - t0
    adr     x0, pong_time
    ldr     x2, [x0]
    sub     x2, x2, x25             // round trip: counter at the reply's handler - t0
    mov     x0, x21
    bl      emit_sample
    add     x21, x21, #1
    add     x3, x25, x23            // next send no earlier than t0 + period
1:  mrs     x4, cntvct_el0
    cmp     x4, x3
    b.lo    1b
    b       ipi_loop

cpu_on_failed:
    mov     x21, x0
    bl      line_begin
    adr     x0, s_cpuon
    bl      puts
    mov     x0, x21
    bl      putdec
    bl      line_end
    mov     x0, #EXIT_ERROR
    b       finish

// x0 = vCPU index n → the MPIDR KVM gives it (Aff0 = n & 0xf, Aff1 = n >> 4: reset_mpidr).
target_mpidr:
    and     x1, x0, #0xf
    lsr     x0, x0, #4
    and     x0, x0, #0xff
    orr     x0, x1, x0, lsl #8
    ret

// The target vCPU (P_IPI_TARGET, 1 by default), started by PSCI CPU_ON: answers each ping SGI
// with a pong SGI (in the handler).
secondary:
    msr     daifset, #0xf
    adr     x19, _start
    adr     x0, vectors
    msr     vbar_el1, x0
    adr     x0, stack1_top
    mov     sp, x0
    isb
    ldr     x0, [x19, #P_IPI_TARGET] // its redistributor: the vCPU's index
    bl      gic_cpu_init
    adr     x0, cpu1_ready
    mov     x1, #1
    str     x1, [x0]
    dsb     sy
    ldr     x24, [x19, #P_WAIT]
    msr     daifclr, #2
    cbnz    x24, 2f
1:  wfi
    b       1b
2:  b       2b

// ---------------------------------------------------------------- samples and summary
// x0 = index, x1 = first value (timer latency / IPI one-way), x2 = second (IPI round trip).
emit_sample:
    stp     x30, x21, [sp, #-48]!
    stp     x0, x1, [sp, #16]
    str     x2, [sp, #32]
    mov     x2, x0
    adr     x0, stat_a
    bl      stat_add
    ldr     x0, [x19, #P_BENCH]
    cmp     x0, #BENCH_IPI
    b.ne    1f
    adr     x0, stat_b
    ldr     x1, [sp, #32]
    ldr     x2, [sp, #16]
    bl      stat_add
1:  ldr     x0, [x19, #P_REPORT]
    cmp     x0, #REPORT_MEMORY
    b.eq    4f
    bl      line_begin
    ldr     x0, [x19, #P_BENCH]
    adr     x1, s_t
    adr     x2, s_i
    cmp     x0, #BENCH_IPI
    csel    x1, x2, x1, eq
    adr     x2, s_d
    cmp     x0, #BENCH_DEVICE
    csel    x0, x2, x1, eq
    bl      puts
    ldr     x0, [sp, #16]
    bl      putdec
    mov     x0, #' '
    bl      putc
    ldr     x0, [sp, #24]
    bl      putdec
    ldr     x0, [x19, #P_BENCH]
    cmp     x0, #BENCH_IPI
    b.ne    3f
    mov     x0, #' '
    bl      putc
    ldr     x0, [sp, #32]
    bl      putdec
3:  bl      line_end
    b       9f
4:  ldr     x3, [x19, #P_RING_ADDR]  // memory mode: record, then the count
    ldr     x4, [x19, #P_RING_RECORDS]
    cbz     x4, 9f
    ldr     x5, [x3]
    udiv    x6, x5, x4
    msub    x6, x6, x4, x5          // slot = count % records
    add     x7, x3, #RING_HEADER
    add     x7, x7, x6, lsl #4
    ldp     x0, x1, [sp, #16]       // device: (index, stamp)
    ldr     x8, [x19, #P_BENCH]
    cmp     x8, #BENCH_TIMER
    csel    x0, x26, x0, eq         // timer: (deadline, latency)
    cmp     x8, #BENCH_DEVICE
    b.ne    6f
    ldr     x9, [x19, #P_DEV_TRIG_ADDR]
    cbz     x9, 6f
    mov     x0, x25                 // device, MMIO trigger: (stamp before the write, latency)
6:  cmp     x8, #BENCH_IPI
    b.ne    5f
    ldr     x2, [sp, #32]           // IPI: (t0, round trip << 32 | one way), each at most 2^32 - 1
    mov     x9, #0xffffffff
    cmp     x1, x9
    csel    x1, x9, x1, hi
    cmp     x2, x9
    csel    x2, x9, x2, hi
    orr     x1, x1, x2, lsl #32
    mov     x0, x25
5:  stp     x0, x1, [x7]
    dmb     sy
    add     x5, x5, #1
    str     x5, [x3]
9:  ldp     x30, x21, [sp], #48
    ret

// x0 = stat block (count, sum, min, max, warm_max), x1 = value, x2 = sample index.
stat_add:
    ldp     x3, x4, [x0]
    add     x3, x3, #1
    add     x4, x4, x1
    stp     x3, x4, [x0]
    ldp     x3, x4, [x0, #16]
    cmp     x1, x3
    csel    x3, x1, x3, lo
    cmp     x1, x4
    csel    x4, x1, x4, hi
    stp     x3, x4, [x0, #16]
    ldr     x5, [x19, #P_WARMUP]
    cmp     x2, x5
    b.lo    1f
    ldr     x3, [x0, #32]
    cmp     x1, x3
    csel    x3, x1, x3, hi
    str     x3, [x0, #32]
1:  ret

// x0 = class name, x1 = stat block: `sum <class> n=.. avg=.. min=.. max=.. warm_max=..`
print_stat:
    stp     x30, x21, [sp, #-16]!
    mov     x21, x1
    stp     x0, x1, [sp, #-16]!
    bl      line_begin
    adr     x0, s_sum
    bl      puts
    ldp     x0, x1, [sp], #16
    bl      puts
    adr     x0, s_n
    bl      puts
    ldr     x0, [x21]
    bl      putdec
    adr     x0, s_avg
    bl      puts
    ldp     x1, x2, [x21]
    mov     x0, #0
    cbz     x1, 1f
    udiv    x0, x2, x1
1:  bl      putdec
    adr     x0, s_min
    bl      puts
    ldr     x0, [x21]
    cbz     x0, 2f
    ldr     x0, [x21, #16]
2:  bl      putdec
    adr     x0, s_max
    bl      puts
    ldr     x0, [x21, #24]
    bl      putdec
    adr     x0, s_warm
    bl      puts
    ldr     x0, [x21, #32]
    bl      putdec
    bl      line_end
    ldp     x30, x21, [sp], #16
    ret

bench_done:
    msr     daifset, #2
    ldr     x0, [x19, #P_BENCH]
    adr     x1, s_timer
    adr     x2, s_ipi
    cmp     x0, #BENCH_IPI
    csel    x1, x2, x1, eq
    adr     x2, s_device
    cmp     x0, #BENCH_DEVICE
    csel    x0, x2, x1, eq
    adr     x1, stat_a
    bl      print_stat
    ldr     x0, [x19, #P_BENCH]
    cmp     x0, #BENCH_IPI
    b.ne    2f
    adr     x0, s_ipi_rtt
    adr     x1, stat_b
    bl      print_stat
2:  bl      line_begin
    adr     x0, s_end
    bl      puts
    adr     x0, stat_a              // the samples taken (P_SAMPLES may have been lowered)
    ldr     x0, [x0]
    bl      putdec
    adr     x0, s_lost
    bl      puts
    mov     x0, #0                  // memory mode: records overwritten in the ring
    ldr     x1, [x19, #P_REPORT]
    cmp     x1, #REPORT_MEMORY
    b.ne    3f
    ldr     x1, [x19, #P_RING_RECORDS]
    adr     x2, stat_a
    ldr     x2, [x2]
    subs    x0, x2, x1
    csel    x0, x0, xzr, hi
3:  bl      putdec
    adr     x0, s_spurious
    bl      puts
    adr     x0, spurious
    ldr     x0, [x0]
    bl      putdec
    bl      line_end
    ldr     x1, [x19, #P_REPORT]    // memory mode: spurious count into the ring header
    cmp     x1, #REPORT_MEMORY
    b.ne    4f
    ldr     x1, [x19, #P_RING_ADDR]
    adr     x0, spurious
    ldr     x0, [x0]
    str     x0, [x1, #8]
4:  mov     x0, #EXIT_DONE

// x0 = exit code: write it to the exit address, then PSCI SYSTEM_OFF, then park.
finish:
    dsb     sy
    ldr     x1, [x19, #P_EXIT_ADDR]
    cbz     x1, 1f
    str     x0, [x1]
1:  ldr     x0, =0x84000008         // PSCI SYSTEM_OFF
    hvc     #0
2:  wfi
    b       2b

// `start bench=.. wait=.. period=.. samples=.. warmup=.. freq=.. report=.. abi=..`
print_start:
    str     x30, [sp, #-16]!
    bl      line_begin
    adr     x0, s_start
    bl      puts
    ldr     x0, [x19, #P_BENCH]
    adr     x1, s_timer
    adr     x2, s_ipi
    adr     x3, s_spin
    cmp     x0, #BENCH_IPI
    csel    x1, x2, x1, eq
    adr     x2, s_device
    cmp     x0, #BENCH_DEVICE
    csel    x1, x2, x1, eq
    cmp     x0, #BENCH_SPIN
    csel    x0, x3, x1, eq
    bl      puts
    adr     x0, s_wait
    bl      puts
    ldr     x0, [x19, #P_WAIT]
    adr     x1, s_wfi
    adr     x2, s_busy
    cmp     x0, #WAIT_BUSY
    csel    x0, x2, x1, eq
    bl      puts
    adr     x0, s_period
    bl      puts
    ldr     x0, [x19, #P_PERIOD]
    bl      putdec
    adr     x0, s_samples
    bl      puts
    ldr     x0, [x19, #P_SAMPLES]
    bl      putdec
    adr     x0, s_warmup
    bl      puts
    ldr     x0, [x19, #P_WARMUP]
    bl      putdec
    adr     x0, s_freq
    bl      puts
    mrs     x0, cntfrq_el0
    bl      putdec
    adr     x0, s_report
    bl      puts
    ldr     x0, [x19, #P_REPORT]
    adr     x1, s_console
    adr     x2, s_memory
    cmp     x0, #REPORT_MEMORY
    csel    x0, x2, x1, eq
    bl      puts
    adr     x0, s_abi
    bl      puts
    mov     x0, #ABI_VERSION
    bl      putdec
    ldr     x0, [x19, #P_BENCH]
    cmp     x0, #BENCH_DEVICE
    b.ne    1f
    adr     x0, s_intid             // device: ` intid=<n> trigger=<edge|level>`
    bl      puts
    ldr     x0, [x19, #P_DEV_INTID]
    bl      putdec
    adr     x0, s_trigger
    bl      puts
    ldr     x0, [x19, #P_DEV_TRIGGER]
    adr     x1, s_edge
    adr     x2, s_level
    cmp     x0, #TRIGGER_LEVEL
    csel    x0, x2, x1, eq
    bl      puts
1:  bl      line_end
    ldr     x30, [sp], #16
    ret

.include "gic.S"
.include "device.S"
.include "console.S"
.include "vectors.S"

.ltorg

// ---------------------------------------------------------------- strings
s_prefix:   .asciz "@irqlab v1 "
s_start:    .asciz "start bench="
s_wait:     .asciz " wait="
s_period:   .asciz " period="
s_samples:  .asciz " samples="
s_warmup:   .asciz " warmup="
s_freq:     .asciz " freq="
s_report:   .asciz " report="
s_abi:      .asciz " abi="
s_timer:    .asciz "timer"
s_ipi:      .asciz "ipi"
s_ipi_rtt:  .asciz "ipi_rtt"
s_spin:     .asciz "spin"
s_device:   .asciz "device"
s_d:        .asciz "d "
s_intid:    .asciz " intid="
s_trigger:  .asciz " trigger="
s_edge:     .asciz "edge"
s_level:    .asciz "level"
s_its:      .asciz "error its="
s_its_nolpis: .asciz "no_lpis"
s_its_dt:   .asciz "device_table_too_big"
s_its_page: .asciz "baser_refused"
s_its_nodt: .asciz "no_device_table"
s_its_stalled: .asciz "stalled"
s_its_timeout: .asciz "creadr_timeout"
s_wfi:      .asciz "wfi"
s_busy:     .asciz "busy"
s_console:  .asciz "console"
s_memory:   .asciz "memory"
s_t:        .asciz "t "
s_i:        .asciz "i "
s_sum:      .asciz "sum "
s_n:        .asciz " n="
s_avg:      .asciz " avg="
s_min:      .asciz " min="
s_max:      .asciz " max="
s_warm:     .asciz " warm_max="
s_end:      .asciz "end samples="
s_lost:     .asciz " lost="
s_spurious: .asciz " spurious="
s_unknown:  .asciz "error unknown_bench="
s_badparams: .asciz "error bad_params"
s_cpuon:    .asciz "error cpu_on="
s_fault:    .asciz "fault vector="
s_esr:      .asciz " esr="
s_elr:      .asciz " elr="
s_hex:      .ascii "0123456789abcdef"

// ---------------------------------------------------------------- data (zeroed in the file)
// On its own page: QEMU TCG invalidates translated code in a page that is written to.
.balign 4096
timer_flag: .quad 0
timer_lat:  .quad 0
pong_flag:  .quad 0
pong_time:  .quad 0
rx_time:    .quad 0
cpu1_ready: .quad 0
spurious:   .quad 0
dev_flag:   .quad 0
dev_time:   .quad 0
gicc_v2:    .quad 0                 // GICv2: the CPU interface's base (gicd_init); 0 = GICv3
stat_a:     .quad 0, 0, -1, 0, 0    // count, sum, min, max, warm_max
stat_b:     .quad 0, 0, -1, 0, 0
.balign 16
stack1:     .space 1024
stack1_top:
stack0:     .space 2048
stack0_top:
.balign 8
_end:
