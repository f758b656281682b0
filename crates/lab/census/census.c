/*
 * irqlab path census: a QEMU TCG plugin (QEMU 7.2 plugin API, QEMU_PLUGIN_VERSION 1) that counts
 * what the emulated CPUs execute on each interrupt's path, per physical (emulated) CPU.
 *
 * A *window* is one path on one CPU; it opens only once the guest has run (boot is not counted):
 *   - kind `irq` (slot 0): opens when a translation block starting at an `open=` address runs (the
 *     hypervisor's IRQ vector entries); closes `delivered` at a block starting at a `close=` address
 *     (the guest's IRQ vector entries), or `other` when a block containing WFI runs first (the CPU
 *     went back to waiting) or the guest runs more than 4 blocks without reaching its vector (it
 *     runs on): an interrupt that delivered nothing to the guest;
 *   - kind `send` (slot 0): opens at a guest block containing `msr ICC_SGI1R_EL1, Xt` (from that
 *     instruction on; its address is the window's tag) and closes `returned` at the block starting
 *     right after it (the trapped write handled), or `switched` at the first guest block elsewhere
 *     (the hypervisor ran another vCPU first); a window of kind `after-send` then opens on the same CPU and closes
 *     `delivered` at the next guest IRQ vector entry (with both vCPUs on one CPU, the target's
 *     handler: the sender's own wait is part of that path, so no WFI ends it);
 *   - kind `wfi` (slot 1, beside the others): from a guest WFI instruction to the guest's next IRQ
 *     vector entry on that CPU -- the whole wait, a trapped WFI's handling included.
 * A delivered window is tagged with the first `tag=` address (the guest's dispatch labels) run on
 * that CPU within 16 blocks after it closes.
 *
 * Per window it writes: the instructions executed, per `range=` (the images: hypervisor, guest,
 * ...), every PC with its opcode and count, and the MMIO accesses (physical address, read/write,
 * size); the reader is crates/lab/src/census/window.rs. Counting is per executed translation
 * block: an instruction after one that raised an exception inside the same block is counted though
 * it did not run (docs/path-census.md says where that happens).
 *
 * Arguments: out=FILE, open=ADDR, close=ADDR, tag=ADDR (each repeatable), range=LO:HI:NAME
 * (repeatable, at most 8; the one named `guest` is where WFI and the SGI write are looked for).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_ADDRS 64
#define MAX_RANGES 8
#define PC_SLOTS (1u << 16)
#define MAX_MMIO 512
#define TAG_WINDOW 16
#define GUEST_BLOCKS_MAX 4 /* guest blocks an irq window may run before the guest's vector */
#define OVERFLOW_INSNS 50000000ull
/* Distinct PCs one window may hold before it is cut as `overflow`: the open-addressed table
 * stays at most 3/4 full, so a lookup stays short (a window left open after the bench, over
 * the console's draining, would otherwise fill the table and make every lookup scan it). */
#define PC_DISTINCT_MAX (PC_SLOTS / 4 * 3)

enum kind { K_NONE, K_IRQ, K_SEND, K_AFTER_SEND, K_WFI };
static const char *kind_name[] = {"-", "irq", "send", "after-send", "wfi"};

#define OP_WFI 0xd503207fu
#define OP_MSR_SGI1R 0xd518cba0u /* msr ICC_SGI1R_EL1, Xt: op0=3 op1=0 CRn=12 CRm=11 op2=5 */

struct tb_info {
    uint64_t vaddr;
    uint32_t n;
    int range;        /* index of the range holding the block's first instruction, or -1 */
    int send_at;      /* index of the sender instruction in the block, or -1 */
    int guest_wfi_at; /* index of a WFI in the guest range, or -1 */
    bool has_wfi;
    uint64_t *pcs;
    uint32_t *ops;
};

struct pc_slot {
    uint64_t pc;
    uint32_t op;
    uint64_t count;
};

struct mmio {
    uint64_t addr;
    uint32_t size;
    char rw;
    uint64_t count;
};

struct window {
    enum kind kind;
    uint64_t seq;
    uint64_t insns;
    uint64_t per_range[MAX_RANGES + 1];
    uint64_t irq_entries;
    uint64_t send_next; /* for K_SEND: the address the guest resumes at */
    uint64_t send_pc;   /* for K_SEND: the sending instruction, reported as the tag */
    uint32_t guest_blocks; /* guest blocks run since the window opened */
    struct pc_slot *slots;
    uint32_t *used;
    uint32_t n_used;
    struct mmio mmio[MAX_MMIO];
    uint32_t n_mmio;
    uint64_t mmio_dropped;
    /* a delivered window waiting for its tag */
    bool await_tag;
    int await_blocks;
};

/* Per CPU: slot 0 holds irq/send/after-send windows, slot 1 the from-WFI window. */
struct cpu_state {
    struct window w[2];
};

static FILE *out;
static uint64_t open_at[MAX_ADDRS], close_at[MAX_ADDRS], tag_at[MAX_ADDRS];
static int n_open, n_close, n_tag;
static uint64_t range_lo[MAX_RANGES], range_hi[MAX_RANGES];
static char range_name[MAX_RANGES][32];
static int n_ranges;
static uint64_t guest_lo, guest_hi;
static struct cpu_state *cpus;
static int n_cpus;
static uint64_t next_seq;
static bool started;
static int guest_range = -1; /* the range= named guest */

static bool in_set(const uint64_t *set, int n, uint64_t a)
{
    for (int i = 0; i < n; i++) {
        if (set[i] == a) {
            return true;
        }
    }
    return false;
}

static int range_of(uint64_t a)
{
    for (int i = 0; i < n_ranges; i++) {
        if (a >= range_lo[i] && a < range_hi[i]) {
            return i;
        }
    }
    return -1;
}

static void start(struct window *c, enum kind k)
{
    for (uint32_t i = 0; i < c->n_used; i++) {
        c->slots[c->used[i]].pc = 0;
        c->slots[c->used[i]].count = 0;
    }
    c->n_used = 0;
    c->n_mmio = 0;
    c->mmio_dropped = 0;
    memset(c->per_range, 0, sizeof(c->per_range));
    c->insns = 0;
    c->irq_entries = 0;
    c->guest_blocks = 0;
    c->kind = k;
    c->seq = next_seq++;
}

/* Returns false when the window holds PC_DISTINCT_MAX distinct PCs and `pc` would be another. */
static bool count_pc(struct window *c, uint64_t pc, uint32_t op)
{
    uint32_t h = (uint32_t)((pc >> 2) * 2654435761u) & (PC_SLOTS - 1);
    for (uint32_t probe = 0; probe < PC_SLOTS; probe++) {
        struct pc_slot *s = &c->slots[h];
        if (s->count == 0) {
            if (c->n_used >= PC_DISTINCT_MAX) {
                return false;
            }
            s->pc = pc;
            s->op = op;
            s->count = 1;
            c->used[c->n_used++] = h;
            return true;
        }
        if (s->pc == pc) {
            s->count++;
            return true;
        }
        h = (h + 1) & (PC_SLOTS - 1);
    }
    return false;
}

static void emit(struct window *c, unsigned int cpu, const char *end, uint64_t tag)
{
    fprintf(out, "W %" PRIu64 " cpu=%u kind=%s end=%s tag=%" PRIx64 " insns=%" PRIu64 " irqs=%" PRIu64
            " mmio_dropped=%" PRIu64,
            c->seq, cpu, kind_name[c->kind], end, tag, c->insns, c->irq_entries, c->mmio_dropped);
    for (int i = 0; i <= n_ranges; i++) {
        fprintf(out, " r:%s=%" PRIu64, i < n_ranges ? range_name[i] : "other", c->per_range[i]);
    }
    fputc('\n', out);
    for (uint32_t i = 0; i < c->n_used; i++) {
        struct pc_slot *s = &c->slots[c->used[i]];
        fprintf(out, "P %" PRIx64 " %08" PRIx32 " %" PRIu64 "\n", s->pc, s->op, s->count);
    }
    for (uint32_t i = 0; i < c->n_mmio; i++) {
        struct mmio *m = &c->mmio[i];
        fprintf(out, "M %" PRIx64 " %c %u %" PRIu64 "\n", m->addr, m->rw, m->size, m->count);
    }
    fputs("E\n", out);
    fflush(out);
    c->kind = K_NONE;
    c->await_tag = false;
}

/* Counts a block into the window; false when the window is full (the caller cuts it). */
static bool add_block(struct window *c, struct tb_info *tb, uint32_t from)
{
    bool room = true;
    for (uint32_t i = from; i < tb->n && room; i++) {
        room = count_pc(c, tb->pcs[i], tb->ops[i]);
    }
    c->insns += tb->n - from;
    c->per_range[tb->range < 0 ? n_ranges : tb->range] += tb->n - from;
    return room;
}

/* Returns true while the window still waits for its tag (the block is not looked at further);
 * once tagged, the block goes on to open the next window (a handler's own SGI write, say). */
static bool take_tag(struct window *c, unsigned int cpu, uint64_t pc)
{
    if (!c->await_tag) {
        return false;
    }
    if (in_set(tag_at, n_tag, pc)) {
        emit(c, cpu, "delivered", pc);
        return false;
    }
    if (++c->await_blocks > TAG_WINDOW) {
        emit(c, cpu, "delivered", 0);
        return false;
    }
    return true;
}

static void await_tag(struct window *c)
{
    c->await_tag = true;
    c->await_blocks = 0;
}

/* Slot 0: irq, send and after-send windows. */
static void step_path(struct window *c, unsigned int cpu, struct tb_info *tb)
{
    uint64_t pc = tb->vaddr;
    if (take_tag(c, cpu, pc)) {
        return;
    }
    if (c->kind == K_SEND && tb->range == guest_range) {
        /* back in a guest: the sender after its write, or (the hypervisor switched) another vCPU */
        emit(c, cpu, pc == c->send_next ? "returned" : "switched", c->send_pc);
        if (in_set(close_at, n_close, pc)) {
            /* switched straight into a guest's IRQ vector (the target, on this CPU): the
             * delivery is in the send window; an after-send window would be empty */
            return;
        }
        start(c, K_AFTER_SEND);
    }
    if (c->kind == K_IRQ || c->kind == K_AFTER_SEND) {
        if (in_set(close_at, n_close, pc)) {
            await_tag(c);
            return;
        }
        if (c->kind == K_IRQ && tb->has_wfi) {
            (void)add_block(c, tb, 0); /* the window ends here, full or not */
            emit(c, cpu, "other", 0);
            return;
        }
        if (c->kind == K_IRQ && tb->range == guest_range && ++c->guest_blocks > GUEST_BLOCKS_MAX) {
            /* back in the guest, which runs on without taking an interrupt: nothing delivered */
            emit(c, cpu, "other", 0);
            return;
        }
        if (in_set(open_at, n_open, pc)) {
            c->irq_entries++;
        }
    }
    if (c->kind == K_NONE) {
        if (in_set(open_at, n_open, pc)) {
            start(c, K_IRQ);
            c->irq_entries = 1;
        } else if (tb->send_at >= 0) {
            start(c, K_SEND);
            c->send_pc = tb->pcs[tb->send_at];
            c->send_next = c->send_pc + 4;
            (void)add_block(c, tb, (uint32_t)tb->send_at); /* one block into an empty window fits */
            return;
        } else {
            return;
        }
    }
    if (!add_block(c, tb, 0) || c->insns > OVERFLOW_INSNS) {
        emit(c, cpu, "overflow", 0);
    }
}

/* Slot 1: from the guest's WFI (the instruction itself) to its next IRQ vector entry. */
static void step_wfi(struct window *c, unsigned int cpu, struct tb_info *tb)
{
    uint64_t pc = tb->vaddr;
    if (take_tag(c, cpu, pc)) {
        return;
    }
    if (c->kind == K_WFI) {
        if (in_set(close_at, n_close, pc)) {
            await_tag(c);
            return;
        }
        if (!add_block(c, tb, 0) || c->insns > OVERFLOW_INSNS) {
            emit(c, cpu, "overflow", 0);
        }
    } else if (tb->guest_wfi_at >= 0) {
        start(c, K_WFI);
        (void)add_block(c, tb, (uint32_t)tb->guest_wfi_at); /* one block into an empty window fits */
    }
}

static void tb_exec(unsigned int cpu, void *udata)
{
    struct tb_info *tb = udata;
    if ((int)cpu >= n_cpus) {
        return;
    }
    if (!started) {
        if (tb->range != guest_range) {
            return;
        }
        started = true; /* the guest ran: boot is over, paths from now on */
    }
    step_path(&cpus[cpu].w[0], cpu, tb);
    step_wfi(&cpus[cpu].w[1], cpu, tb);
}

static void record_mmio(struct window *c, uint64_t addr, char rw, uint32_t size)
{
    if (c->kind == K_NONE || c->await_tag) {
        return;
    }
    for (uint32_t i = 0; i < c->n_mmio; i++) {
        if (c->mmio[i].addr == addr && c->mmio[i].rw == rw && c->mmio[i].size == size) {
            c->mmio[i].count++;
            return;
        }
    }
    if (c->n_mmio == MAX_MMIO) {
        c->mmio_dropped++;
        return;
    }
    c->mmio[c->n_mmio++] = (struct mmio){addr, size, rw, 1};
}

static void mem_access(unsigned int cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
    (void)udata;
    if ((int)cpu >= n_cpus || (cpus[cpu].w[0].kind == K_NONE && cpus[cpu].w[1].kind == K_NONE)) {
        return;
    }
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || !qemu_plugin_hwaddr_is_io(hw)) {
        return;
    }
    uint64_t addr = qemu_plugin_hwaddr_phys_addr(hw);
    char rw = qemu_plugin_mem_is_store(info) ? 'w' : 'r';
    uint32_t size = 1u << qemu_plugin_mem_size_shift(info);
    record_mmio(&cpus[cpu].w[0], addr, rw, size);
    record_mmio(&cpus[cpu].w[1], addr, rw, size);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    struct tb_info *t = calloc(1, sizeof(*t));
    t->vaddr = qemu_plugin_tb_vaddr(tb);
    t->n = (uint32_t)n;
    t->range = range_of(t->vaddr);
    t->send_at = -1;
    t->guest_wfi_at = -1;
    t->pcs = calloc(n ? n : 1, sizeof(uint64_t));
    t->ops = calloc(n ? n : 1, sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint32_t op = 0;
        if (qemu_plugin_insn_size(insn) == 4) {
            memcpy(&op, qemu_plugin_insn_data(insn), 4);
        }
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        t->pcs[i] = pc;
        t->ops[i] = op;
        if (op == OP_WFI) {
            t->has_wfi = true;
            if (pc >= guest_lo && pc < guest_hi && t->guest_wfi_at < 0) {
                t->guest_wfi_at = (int)i;
            }
        }
        if ((op & 0xffffffe0u) == OP_MSR_SGI1R && pc >= guest_lo && pc < guest_hi && t->send_at < 0) {
            t->send_at = (int)i;
        }
        qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
    }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    *v = strtoull(s, &end, 0);
    return end != s && (*end == '\0' || *end == ':');
}

static int add_addr(uint64_t *set, int *n, const char *v, const char *key)
{
    uint64_t a;
    if (*n == MAX_ADDRS || !parse_u64(v, &a)) {
        fprintf(stderr, "irqlab census plugin: bad %s=%s (an address; at most %d)\n", key, v, MAX_ADDRS);
        return -1;
    }
    set[(*n)++] = a;
    return 0;
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    if (out) {
        fputs("X\n", out);
        fflush(out);
    }
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    const char *out_path = NULL;
    if (!info->system_emulation) {
        fprintf(stderr, "irqlab census plugin: needs system emulation\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "irqlab census plugin: argument %s is not key=value\n", argv[i]);
            return -1;
        }
        *eq = '\0';
        const char *k = argv[i], *v = eq + 1;
        int bad = 0;
        if (!strcmp(k, "out")) {
            out_path = v;
        } else if (!strcmp(k, "open")) {
            bad = add_addr(open_at, &n_open, v, k);
        } else if (!strcmp(k, "close")) {
            bad = add_addr(close_at, &n_close, v, k);
        } else if (!strcmp(k, "tag")) {
            bad = add_addr(tag_at, &n_tag, v, k);
        } else if (!strcmp(k, "range")) {
            const char *c1 = strchr(v, ':');
            const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
            if (n_ranges == MAX_RANGES || !c2 || !parse_u64(v, &range_lo[n_ranges]) || !parse_u64(c1 + 1, &range_hi[n_ranges])) {
                bad = -1;
            } else {
                snprintf(range_name[n_ranges], sizeof(range_name[0]), "%s", c2 + 1);
                if (!strcmp(range_name[n_ranges], "guest")) {
                    guest_range = n_ranges;
                    guest_lo = range_lo[n_ranges];
                    guest_hi = range_hi[n_ranges];
                }
                n_ranges++;
            }
        } else {
            fprintf(stderr, "irqlab census plugin: unknown argument %s\n", k);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "irqlab census plugin: bad value for %s: %s\n", k, v);
            return -1;
        }
    }
    if (!out_path || n_close == 0 || guest_range < 0) {
        fprintf(stderr, "irqlab census plugin: needs out=, close= and range=LO:HI:guest\n");
        return -1;
    }
    out = fopen(out_path, "w");
    if (!out) {
        perror(out_path);
        return -1;
    }
    n_cpus = info->system.max_vcpus;
    cpus = calloc((size_t)n_cpus, sizeof(*cpus));
    for (int i = 0; i < n_cpus; i++) {
        for (int k = 0; k < 2; k++) {
            cpus[i].w[k].slots = calloc(PC_SLOTS, sizeof(struct pc_slot));
            cpus[i].w[k].used = calloc(PC_SLOTS, sizeof(uint32_t));
        }
    }
    fprintf(out, "irqlab-census 1 cpus=%d ranges=%d\n", n_cpus, n_ranges);
    fflush(out);
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
