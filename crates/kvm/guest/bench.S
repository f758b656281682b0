/* irqlab benchmark guest: 64-bit, loaded at 0x10000, entered in long mode with paging, GDT, IDT
 * and per-vCPU stack set up by the VMM (rdi = vCPU index). On this project's hosts guest ring-0
 * code is emulated one instruction at a time (~1-3 us each), so every path here is a handful of
 * instructions: wait in HLT (or spin in ring 3), record rdtsc, EOI, return.
 *
 * Shared data page at 0x8000 (u64 slots, see layout.rs), sample records at 0x100000 (32 bytes
 * each: [0] host trigger / send tsc, [1] arrival tsc, [2] reply tsc, [3] unused). The records
 * form a ring: sample k goes to record k & RING_MASK, and the host drains them while the guest
 * runs, so a run's length is not bounded by guest memory. The host ends a run early (--duration,
 * --stop-above) by lowering NSAMP: every loop compares the count with it after each sample.
 * Port 0xf0: benchmark finished; 0xf1: unknown benchmark; 0xf2: vCPU parked. */
        .intel_syntax noprefix
        .code64
        .set DATA, 0x8000
        .set KIND, DATA + 0x08
        .set DELTA, DATA + 0x10
        .set NSAMP, DATA + 0x18
        .set COUNT, DATA + 0x20
        .set EXPECT, DATA + 0x28
        .set WAIT, DATA + 0x30
        .set FLAG, DATA + 0x38
        .set ENTRY_TSC, DATA + 0x40
        .set PV, DATA + 0x48
        .set SAMPLES, 0x100000
        .set RING_MASK, 0x7ffff  /* 2^19 records: layout::RING */
        .set USER_STACK, 0x7f000


/* rax = 64-bit TSC (clobbers rdx) */
        .macro RDTSC64
        rdtsc
        shl rdx, 32
        or rax, rdx
        .endm
        .macro ISR_SAVE
        push rax
        push rdx
        push rcx
        push rbx
        .endm
/* x2APIC EOI, restore, return from the interrupt */
        .macro EOI_RESTORE_IRET
        xor eax, eax
        xor edx, edx
        mov ecx, 0x80b
        wrmsr
        pop rbx
        pop rcx
        pop rdx
        pop rax
        iretq
        .endm

        .section .text
        .globl _start
_start:
        RDTSC64
        mov [ENTRY_TSC], rax
        test edi, edi
        jnz secondary
        mov rax, [KIND]
        cmp rax, 1
        je timer_main
        cmp rax, 2
        je ipi_main
        cmp rax, 3
        je device_main
        cmp rax, 4
        je pvipi_main
        out 0xf1, al
        jmp park

/* vCPUs other than 0 wait in HLT with interrupts on (the IPI target). */
secondary:
        sti
1:      hlt
        jmp 1b

park:   cli
        out 0xf2, al
1:      hlt
        jmp 1b

/* ---- timer: TSC deadline `DELTA` ahead; latency = arrival - deadline (tscdeadline_latency) ---- */
timer_main:
        RDTSC64
        add rax, [DELTA]
        mov [EXPECT], rax
        mov rdx, rax
        shr rdx, 32
        mov ecx, 0x6e0
        wrmsr
        cmp qword ptr [WAIT], 1
        je to_user
        sti
1:      hlt
        jmp 1b
to_user:
        push 0x1b               /* ss: user data */
        push USER_STACK
        push 0x202              /* rflags: IF */
        push 0x23               /* cs: user code */
        lea rax, [rip + user_spin]
        push rax
        iretq
user_spin:                      /* ring 3: runs natively */
        jmp user_spin

        .balign 16
        .globl timer_isr
timer_isr:
        ISR_SAVE
        RDTSC64
        mov rbx, [COUNT]
        mov rcx, rax
        sub rcx, [EXPECT]
        and ebx, RING_MASK
        shl rbx, 5
        mov [SAMPLES + rbx + 8], rcx
        mov rbx, [COUNT]
        inc rbx
        mov [COUNT], rbx
        cmp rbx, [NSAMP]
        jae finished
        add rax, [DELTA]
        mov [EXPECT], rax
        mov rdx, rax
        shr rdx, 32
        mov ecx, 0x6e0
        wrmsr
        EOI_RESTORE_IRET

finished:
        out 0xf0, al
        jmp park

/* ---- device: the host triggers; the handler records the arrival tsc ---- */
device_main:
        sti
1:      hlt
        jmp 1b

        .balign 16
        .globl device_isr
device_isr:
        ISR_SAVE
        RDTSC64
        mov rbx, [COUNT]
        and ebx, RING_MASK
        shl rbx, 5
        mov [SAMPLES + rbx + 8], rax
        mov rbx, [COUNT]
        inc rbx
        mov [COUNT], rbx
        EOI_RESTORE_IRET

/* ---- ipi: vCPU 0 -> vCPU 1 (vector 0xe0) and back (0xe1); period timed by the TSC deadline ---- */
ipi_main:
        sti
ipi_loop:
        mov rbx, [COUNT]        /* rbx: this sample's number, rcx: its record */
        mov rcx, rbx
        and ecx, RING_MASK
        shl rcx, 5
        RDTSC64
        mov [SAMPLES + rcx], rax
        mov edx, 1              /* destination APIC ID 1 */
        mov eax, 0xe0           /* fixed, physical, vector 0xe0 */
        mov ecx, 0x830
        wrmsr
1:      cli                     /* wait for the reply: sti;hlt closes the race */
        cmp rbx, [COUNT]
        jne 2f
        sti
        hlt
        jmp 1b
2:      sti
        mov rax, [COUNT]
        cmp rax, [NSAMP]
        jae finished
        mov qword ptr [FLAG], 0
        RDTSC64
        add rax, [DELTA]
        mov rdx, rax
        shr rdx, 32
        mov ecx, 0x6e0
        wrmsr
3:      cli
        cmp qword ptr [FLAG], 0
        jne ipi_loop_sti
        sti
        hlt
        jmp 3b
ipi_loop_sti:
        sti
        jmp ipi_loop

        .balign 16
        .globl ipi_target_isr   /* on vCPU 1: record arrival, reply to vCPU 0 */
ipi_target_isr:
        ISR_SAVE
        RDTSC64
        mov rbx, [COUNT]
        and ebx, RING_MASK
        shl rbx, 5
        mov [SAMPLES + rbx + 8], rax
        xor edx, edx
        mov eax, 0xe1
        mov ecx, 0x830
        wrmsr
        EOI_RESTORE_IRET

        .balign 16
        .globl ipi_reply_isr    /* on vCPU 0: record the reply, count the sample */
ipi_reply_isr:
        ISR_SAVE
        RDTSC64
        mov rbx, [COUNT]
        and ebx, RING_MASK
        shl rbx, 5
        mov [SAMPLES + rbx + 16], rax
        mov rbx, [COUNT]
        inc rbx
        mov [COUNT], rbx
        EOI_RESTORE_IRET

        .balign 16
        .globl period_isr       /* TSC deadline on vCPU 0 in ipi mode: end of the pause */
period_isr:
        push rax
        push rdx
        push rcx
        mov qword ptr [FLAG], 1
        xor eax, eax
        xor edx, edx
        mov ecx, 0x80b
        wrmsr
        pop rcx
        pop rdx
        pop rax
        iretq

/* ---- PV IPI probe: KVM_HC_SEND_IPI (10) to APIC ID 1, vector 0xe0 ---- */
pvipi_main:
        mov eax, 10
        mov ebx, 2              /* a0: bitmap low, bit 1 = APIC ID 1 relative to min 0 */
        xor ecx, ecx            /* a1: bitmap high */
        xor edx, edx            /* a2: min APIC ID */
        mov esi, 0xe0           /* a3: ICR (fixed, vector 0xe0) */
        vmcall
        mov [FLAG], rax
        out 0xf0, al
        jmp park

        .balign 16
        .globl spurious_isr
spurious_isr:
        iretq
