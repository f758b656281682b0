// irqlab arm64 benchmark guest: PL011 console output, decimal numbers, the `@irqlab v1` line framing and checksum. Included by bench.S (one translation unit, PC-relative only).
// ---------------------------------------------------------------- console
// x0 = byte. Clobbers x9, x10. Updates the line checksum (x27, XOR).
putc:
    cbz     x20, 2f
    eor     x27, x27, x0
1:  ldr     w9, [x20, #0x18]        // UARTFR
    tbnz    w9, #5, 1b              // TXFF
    strb    w0, [x20]
2:  ret

// x0 = NUL-terminated string.
puts:
    str     x30, [sp, #-16]!
    mov     x10, x0
1:  ldrb    w0, [x10], #1
    cbz     w0, 2f
    mov     x11, x10
    bl      putc
    mov     x10, x11
    b       1b
2:  ldr     x30, [sp], #16
    ret

// x0 = unsigned value, printed in decimal.
putdec:
    str     x30, [sp, #-48]!
    add     x12, sp, #40            // digits grow down from sp+40
    mov     x13, #10
1:  udiv    x14, x0, x13
    msub    x15, x14, x13, x0
    add     x15, x15, #'0'
    strb    w15, [x12, #-1]!
    mov     x0, x14
    cbnz    x0, 1b
    add     x16, sp, #40
2:  ldrb    w0, [x12], #1
    bl      putc
    cmp     x12, x16
    b.lo    2b
    ldr     x30, [sp], #48
    ret

// `@irqlab v1 <seq> `; resets the checksum.
line_begin:
    str     x30, [sp, #-16]!
    mov     x27, #0
    adr     x0, s_prefix
    bl      puts
    mov     x0, x28
    add     x28, x28, #1
    bl      putdec
    mov     x0, #' '
    bl      putc
    ldr     x30, [sp], #16
    ret

// ` *<checksum, 2 hex digits>\n`: the XOR of every byte from `@` to the byte before ` *`.
line_end:
    str     x30, [sp, #-16]!
    mov     x17, x27
    mov     x0, #' '
    bl      putc
    mov     x0, #'*'
    bl      putc
    adr     x16, s_hex
    lsr     x0, x17, #4
    and     x0, x0, #0xf
    ldrb    w0, [x16, x0]
    bl      putc
    and     x0, x17, #0xf
    ldrb    w0, [x16, x0]
    bl      putc
    mov     x0, #'\n'
    bl      putc
    ldr     x30, [sp], #16
    ret

