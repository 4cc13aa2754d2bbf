/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvme: a minimal NVMe driver and benchmark.  Admin queue, Identify
 * controller and namespace 1, Set Features (number of queues), N I/O
 * queue pairs, then a fixed number of 4 KiB random reads at queue depth
 * qd per queue, polled or interrupt (MSI-X) driven.  The submission and
 * completion loop runs at CPL3 (see run_user()); set-up stays at CPL0.
 *
 * Command line: qd=32 ios=10000 mode=poll|irq queues=1 verify=0|1 mask=0|1
 * (verify=1: LBA 0 must start with "CONDUIT-NVMETEST"; mask=1 with
 * mode=irq: after the run, one read with the first queue's vector masked
 * must set its pending bit and interrupt only once unmasked, and the
 * next read, unmasked, must interrupt and leave no pending bit).
 *
 * Latency of one read = TSC when its completion entry is seen minus TSC
 * when its submission entry was written (the doorbell write follows in
 * the same batch).  IOPS = ios / (first submission .. last completion).
 * TSC frequency: see lib/tsc.c.  Output: a machine-parsable line
 *   RESULT iops=... p50_ns=... p99_ns=... ios=... (then more key=value)
 */
#include "iobench.h"
#include "pci.h"

#define NVME_CLASS 0x010802
#define NVME_REG_CAP 0x00
#define NVME_REG_VS 0x08
#define NVME_REG_CC 0x14
#define NVME_REG_CSTS 0x1c
#define NVME_REG_AQA 0x24
#define NVME_REG_ASQ 0x28
#define NVME_REG_ACQ 0x30
#define NVME_REG_DBS 0x1000
#define NVME_CC_EN 0x1
#define NVME_CC_IOSQES (6 << 16)
#define NVME_CC_IOCQES (4 << 20)
#define NVME_CSTS_RDY 0x1
#define NVME_CSTS_CFS 0x2

#define NVME_ADM_CREATE_SQ 0x01
#define NVME_ADM_CREATE_CQ 0x05
#define NVME_ADM_IDENTIFY 0x06
#define NVME_ADM_SET_FEATURES 0x09
#define NVME_FEAT_NUM_QUEUES 0x07
#define NVME_CMD_READ 0x02

#define ADMIN_QUEUE_SIZE 16
#define MAX_IO_QUEUES 16
#define MAX_QUEUE_SIZE 1024
#define IO_SIZE 4096
#define VECTOR_BASE 0x40
#define SIGNATURE "CONDUIT-NVMETEST"

typedef struct NvmeSqe {
    uint8_t opc;
    uint8_t flags;
    uint16_t cid;
    uint32_t nsid;
    uint64_t rsvd;
    uint64_t mptr;
    uint64_t prp1;
    uint64_t prp2;
    uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
} NvmeSqe;

typedef struct NvmeCqe {
    uint32_t result;
    uint32_t rsvd;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t cid;
    uint16_t status;        /* bit 0: phase tag */
} NvmeCqe;

_Static_assert(sizeof(NvmeSqe) == 64, "NVMe SQ entry is 64 bytes");
_Static_assert(sizeof(NvmeCqe) == 16, "NVMe CQ entry is 16 bytes");

typedef struct NvmeQueue {
    volatile NvmeSqe *sq;
    volatile NvmeCqe *cq;
    uint16_t qid;
    uint16_t size;
    uint16_t sq_tail;
    uint16_t cq_head;
    uint16_t phase;
    uint64_t sq_db;
    uint64_t cq_db;
    uint64_t *submit_tsc;   /* per command id */
    uint64_t *buf;          /* per command id: data buffer address */
} NvmeQueue;

typedef struct Nvme {
    PciDev *dev;
    uint64_t regs;
    uint64_t cap;
    unsigned dstrd;
    uint64_t timeout_ms;
    NvmeQueue admin;
    NvmeQueue io[MAX_IO_QUEUES];
    PciMsix msix;
    uint64_t nsze;
    unsigned lba_shift;
    unsigned nq;            /* I/O queue pairs the benchmark uses */
} Nvme;

static PciDev devs[PCI_MAX_DEVICES];
static Nvme ctrl;

static void nvme_queue_init(Nvme *n, NvmeQueue *q, uint16_t qid, uint16_t size)
{
    q->qid = qid;
    q->size = size;
    q->sq = alloc_pages(ALIGN_UP(size * sizeof(NvmeSqe), PAGE_SIZE) / PAGE_SIZE);
    q->cq = alloc_pages(ALIGN_UP(size * sizeof(NvmeCqe), PAGE_SIZE) / PAGE_SIZE);
    q->submit_tsc = alloc_pages(ALIGN_UP(size * 16, PAGE_SIZE) / PAGE_SIZE);
    if (!q->sq || !q->cq || !q->submit_tsc) {
        panic("out of memory for queue %u", qid);
    }
    q->buf = q->submit_tsc + size;
    q->sq_tail = q->cq_head = 0;
    q->phase = 1;
    q->sq_db = n->regs + NVME_REG_DBS + (2 * qid) * (4 << n->dstrd);
    q->cq_db = n->regs + NVME_REG_DBS + (2 * qid + 1) * (4 << n->dstrd);
}

static void sq_push(NvmeQueue *q, const NvmeSqe *cmd)
{
    volatile NvmeSqe *e = &q->sq[q->sq_tail];

    e->opc = cmd->opc;
    e->flags = 0;
    e->cid = cmd->cid;
    e->nsid = cmd->nsid;
    e->rsvd = 0;
    e->mptr = 0;
    e->prp1 = cmd->prp1;
    e->prp2 = cmd->prp2;
    e->cdw10 = cmd->cdw10;
    e->cdw11 = cmd->cdw11;
    e->cdw12 = cmd->cdw12;
    e->cdw13 = cmd->cdw13;
    e->cdw14 = cmd->cdw14;
    e->cdw15 = cmd->cdw15;
    q->sq_tail = (q->sq_tail + 1) % q->size;
}

/* Next completion entry, or NULL; the caller advances with cq_pop(). */
static volatile NvmeCqe *cq_peek(NvmeQueue *q)
{
    volatile NvmeCqe *e = &q->cq[q->cq_head];

    if ((e->status & 1) != q->phase) {
        return NULL;
    }
    barrier();
    return e;
}

static void cq_pop(NvmeQueue *q)
{
    if (++q->cq_head == q->size) {
        q->cq_head = 0;
        q->phase ^= 1;
    }
}

static bool wait_ms(uint64_t start, uint64_t ms)
{
    return rdtsc() - start < tsc_khz() * ms;
}

/* Returns the status field (0 = success) or -1 on timeout. */
static int nvme_admin(Nvme *n, NvmeSqe *cmd, uint32_t *result)
{
    NvmeQueue *q = &n->admin;
    volatile NvmeCqe *e;
    uint64_t t0 = rdtsc();
    int status;

    cmd->cid = q->sq_tail;
    sq_push(q, cmd);
    mmio_write32(q->sq_db, q->sq_tail);
    while (!(e = cq_peek(q))) {
        if (!wait_ms(t0, n->timeout_ms)) {
            return -1;
        }
        cpu_relax();
    }
    status = e->status >> 1;
    if (result) {
        *result = e->result;
    }
    if (e->cid != cmd->cid) {
        status = -1;
    }
    cq_pop(q);
    mmio_write32(q->cq_db, q->cq_head);
    return status;
}

static bool nvme_wait_ready(Nvme *n, bool ready)
{
    uint64_t t0 = rdtsc();

    for (;;) {
        uint32_t csts = mmio_read32(n->regs + NVME_REG_CSTS);

        if (csts == ~0u || (csts & NVME_CSTS_CFS)) {
            return false;
        }
        if ((csts & NVME_CSTS_RDY) == ready) {
            return true;
        }
        if (!wait_ms(t0, n->timeout_ms)) {
            return false;
        }
        cpu_relax();
    }
}

static bool nvme_enable(Nvme *n)
{
    mmio_write32(n->regs + NVME_REG_CC, 0);
    if (!nvme_wait_ready(n, false)) {
        return false;
    }
    nvme_queue_init(n, &n->admin, 0, ADMIN_QUEUE_SIZE);
    mmio_write32(n->regs + NVME_REG_AQA,
                 ((ADMIN_QUEUE_SIZE - 1) << 16) | (ADMIN_QUEUE_SIZE - 1));
    mmio_write64(n->regs + NVME_REG_ASQ, (uint64_t)n->admin.sq);
    mmio_write64(n->regs + NVME_REG_ACQ, (uint64_t)n->admin.cq);
    mmio_write32(n->regs + NVME_REG_CC,
                 NVME_CC_EN | NVME_CC_IOSQES | NVME_CC_IOCQES);
    return nvme_wait_ready(n, true);
}

static void trim_copy(char *dst, const volatile char *src, size_t len)
{
    size_t i;

    for (i = 0; i < len; i++) {
        dst[i] = src[i] >= ' ' && src[i] < 127 ? src[i] : '?';
    }
    while (i && dst[i - 1] == ' ') {
        i--;
    }
    dst[i] = '\0';
}

static bool nvme_identify(Nvme *n)
{
    volatile uint8_t *id = alloc_pages(1);
    NvmeSqe cmd = { .opc = NVME_ADM_IDENTIFY, .cdw10 = 1 };
    char model[41], serial[21];
    unsigned flbas;
    bool ok;

    cmd.prp1 = (uint64_t)id;
    ok = nvme_admin(n, &cmd, NULL) == 0;
    trim_copy(model, (const volatile char *)id + 24, 40);
    trim_copy(serial, (const volatile char *)id + 4, 20);
    report(ok && id[0] | id[1], "Identify controller: %04x \"%s\" serial \"%s\"",
           id[0] | (id[1] << 8), model, serial);

    memset((void *)id, 0, PAGE_SIZE);
    cmd = (NvmeSqe) { .opc = NVME_ADM_IDENTIFY, .nsid = 1, .cdw10 = 0 };
    cmd.prp1 = (uint64_t)id;
    ok = nvme_admin(n, &cmd, NULL) == 0;
    n->nsze = *(volatile uint64_t *)id;
    flbas = id[26] & 0xf;
    n->lba_shift = id[128 + 4 * flbas + 2];
    ok = ok && n->nsze && n->lba_shift >= 9 && n->lba_shift <= 12;
    report(ok, "Identify namespace 1: %lu blocks of %u bytes", n->nsze,
           n->lba_shift < 32 ? 1u << n->lba_shift : 0);
    return ok;
}

static bool nvme_create_io_queue(Nvme *n, unsigned qid, unsigned size,
                                 bool irq, unsigned iv)
{
    NvmeQueue *q = &n->io[qid - 1];
    NvmeSqe cmd = { .opc = NVME_ADM_CREATE_CQ };
    int st;

    nvme_queue_init(n, q, qid, size);
    cmd.prp1 = (uint64_t)q->cq;
    cmd.cdw10 = ((size - 1) << 16) | qid;
    cmd.cdw11 = (iv << 16) | (irq ? 2 : 0) | 1;
    st = nvme_admin(n, &cmd, NULL);
    if (st) {
        printf("create CQ %u: status 0x%x\n", qid, st);
        return false;
    }
    cmd = (NvmeSqe) { .opc = NVME_ADM_CREATE_SQ };
    cmd.prp1 = (uint64_t)q->sq;
    cmd.cdw10 = ((size - 1) << 16) | qid;
    cmd.cdw11 = (qid << 16) | 1;
    st = nvme_admin(n, &cmd, NULL);
    if (st) {
        printf("create SQ %u: status 0x%x\n", qid, st);
        return false;
    }
    return true;
}

static void read_cmd(NvmeSqe *cmd, uint16_t cid, uint64_t buf, uint64_t lba,
                     unsigned lba_shift)
{
    *cmd = (NvmeSqe) {
        .opc = NVME_CMD_READ,
        .cid = cid,
        .nsid = 1,
        .prp1 = buf,
        .cdw10 = (uint32_t)lba,
        .cdw11 = (uint32_t)(lba >> 32),
        .cdw12 = (IO_SIZE >> lba_shift) - 1,
    };
}

/* One read at CPL0 (set-up time): used by verify=1. */
static bool nvme_read_sync(Nvme *n, NvmeQueue *q, uint64_t lba, void *buf)
{
    NvmeSqe cmd;
    volatile NvmeCqe *e;
    uint64_t t0 = rdtsc();
    bool ok;

    read_cmd(&cmd, 0, (uint64_t)buf, lba, n->lba_shift);
    sq_push(q, &cmd);
    mmio_write32(q->sq_db, q->sq_tail);
    while (!(e = cq_peek(q))) {
        if (!wait_ms(t0, n->timeout_ms)) {
            return false;
        }
        cpu_relax();
    }
    ok = !(e->status >> 1);
    cq_pop(q);
    mmio_write32(q->cq_db, q->cq_head);
    return ok;
}

static void bench_submit(IoBench *b, NvmeQueue *q, uint16_t cid)
{
    Nvme *n = b->opaque;
    uint64_t blocks = IO_SIZE >> n->lba_shift;
    uint64_t lba = io_bench_random(b, n->nsze / blocks) * blocks;
    NvmeSqe cmd;

    read_cmd(&cmd, cid, q->buf[cid], lba, n->lba_shift);
    q->submit_tsc[cid] = rdtsc();
    sq_push(q, &cmd);
    io_bench_submitted(b);
}

static void bench_start(IoBench *b)
{
    Nvme *n = b->opaque;
    unsigned i, c;

    for (i = 0; i < n->nq; i++) {
        NvmeQueue *q = &n->io[i];

        for (c = 0; c < b->qd && io_bench_want_more(b); c++) {
            bench_submit(b, q, c);
        }
        mmio_write32(q->sq_db, q->sq_tail);
    }
}

static bool bench_reap(IoBench *b)
{
    Nvme *n = b->opaque;
    bool progress = false;
    unsigned i;

    for (i = 0; i < n->nq; i++) {
        NvmeQueue *q = &n->io[i];
        volatile NvmeCqe *e;
        bool any = false;

        while ((e = cq_peek(q))) {
            uint16_t cid = e->cid;
            uint64_t now = rdtsc();

            /* A bogus command id still counts, with no latency. */
            io_bench_complete(b, cid < q->size ? now - q->submit_tsc[cid] : 0,
                              (e->status >> 1) || cid >= q->size);
            cq_pop(q);
            any = true;
            if (io_bench_want_more(b) && cid < q->size) {
                bench_submit(b, q, cid);
            }
            if (io_bench_done(b)) {
                break;
            }
        }
        if (any) {
            mmio_write32(q->cq_db, q->cq_head);
            mmio_write32(q->sq_db, q->sq_tail);
            progress = true;
        }
    }
    return progress;
}

static const IoBenchOps bench_ops = {
    .start = bench_start,
    .reap = bench_reap,
};

static bool sorted(const uint64_t *a, size_t n)
{
    size_t i;

    for (i = 1; i < n; i++) {
        if (a[i - 1] > a[i]) {
            return false;
        }
    }
    return true;
}

static bool setup_msix(Nvme *n, unsigned nq)
{
    unsigned i;

    if (!pci_msix_init(n->dev, &n->msix)) {
        return false;
    }
    for (i = 0; i < n->msix.nvec && i <= nq; i++) {
        irq_set_count_only(VECTOR_BASE + i);
        pci_msix_set_vector(&n->msix, i, VECTOR_BASE + i, apic_id());
        pci_msix_mask(&n->msix, i, false);
    }
    pci_msix_enable(&n->msix, true);
    pci_cfg_write16(n->dev->bdf, PCI_COMMAND,
                    pci_cfg_read16(n->dev->bdf, PCI_COMMAND) |
                    PCI_COMMAND_INTX_DISABLE);
    return true;
}

/*
 * The masked vector's completion must become a pending bit, not an
 * interrupt, and unmasking must deliver it exactly once.  The read itself
 * is polled, so it completes either way.
 */
static void masked_vector_check(Nvme *n, unsigned iv)
{
    volatile uint64_t *count = &irq_counts[VECTOR_BASE + iv];
    char *buf = alloc_pages(1);
    uint64_t before, t0;
    bool pending, ok;

    pci_msix_mask(&n->msix, iv, true);
    before = *count;
    ok = buf && nvme_read_sync(n, &n->io[0], 0, buf);
    report(ok, "read completed with vector %u masked", iv);
    /* The CQ entry is written before the interrupt is signalled. */
    t0 = rdtsc();
    while (!(pending = pci_msix_pending(&n->msix, iv)) &&
           wait_ms(t0, IO_BENCH_STALL_MS)) {
        cpu_relax();
    }
    report(pending && *count == before,
           "masked vector %u: pending bit set, %lu interrupts delivered",
           iv, *count - before);
    pci_msix_mask(&n->msix, iv, false);
    t0 = rdtsc();
    while (*count == before && wait_ms(t0, IO_BENCH_STALL_MS)) {
        cpu_relax();
    }
    report(*count == before + 1 && !pci_msix_pending(&n->msix, iv),
           "unmasked vector %u: pending interrupt delivered once (%lu)",
           iv, *count - before);
    /* Unmasked, the next completion interrupts and leaves no bit. */
    before = *count;
    ok = buf && nvme_read_sync(n, &n->io[0], 0, buf);
    t0 = rdtsc();
    while (*count == before && wait_ms(t0, IO_BENCH_STALL_MS)) {
        cpu_relax();
    }
    report(ok && *count == before + 1 && !pci_msix_pending(&n->msix, iv),
           "unmasked vector %u: next completion interrupts, no pending "
           "bit (%lu)", iv, *count - before);
}

int main(void)
{
    Nvme *n = &ctrl;
    IoBench b = { .ops = &bench_ops, .opaque = n, .irq_vector = VECTOR_BASE,
                  .irq_vectors = MAX_IO_QUEUES + 1 };
    const char *mode;
    char params[64];
    unsigned qd, nq, size, i, c, first_iv = 0;
    uint32_t granted;
    int count, st;
    bool ok;

    qd = cmdline_u64("qd", 32);
    nq = cmdline_u64("queues", 1);
    b.ios = cmdline_u64("ios", 10000);
    b.irq = io_bench_cmdline_irq();
    mode = io_bench_mode(&b);
    if (!qd || qd >= MAX_QUEUE_SIZE || !nq || nq > MAX_IO_QUEUES || !b.ios) {
        panic("qd=%u queues=%u ios=%lu: need 1 <= qd < %u, "
              "1 <= queues <= %u, ios >= 1", qd, nq, b.ios, MAX_QUEUE_SIZE,
              MAX_IO_QUEUES);
    }
    printf("nvme: qd=%u queues=%u ios=%lu mode=%s tsc=%lu kHz (%s)\n",
           qd, nq, b.ios, mode, tsc_khz(), tsc_method());
    apic_init();
    irq_enable();

    count = pci_scan(devs, PCI_MAX_DEVICES);
    n->dev = pci_find_class(devs, count, NVME_CLASS);
    if (!n->dev) {
        report(false, "NVMe controller present");
        return report_summary();
    }
    ok = pci_bar_assign(devs, count, n->dev) && n->dev->bar[0].size >= 0x2000 &&
         !n->dev->bar[0].io;
    report(ok, "NVMe %04x:%04x at %02x:%02x.%x, BAR0 0x%lx", n->dev->vendor,
           n->dev->device, n->dev->bdf >> 8, (n->dev->bdf >> 3) & 31,
           n->dev->bdf & 7, n->dev->bar[0].addr);
    if (!ok) {
        return report_summary();
    }
    pci_enable(n->dev);
    n->regs = n->dev->bar[0].addr;
    n->cap = mmio_read64(n->regs + NVME_REG_CAP);
    n->dstrd = (n->cap >> 32) & 0xf;
    n->timeout_ms = ((n->cap >> 24) & 0xff) * 500;
    if (n->timeout_ms < IO_BENCH_STALL_MS) {
        n->timeout_ms = IO_BENCH_STALL_MS;
    }
    if ((n->cap >> 48) & 0xf) {
        /* We use 4 KiB memory pages (CC.MPS = 0). */
        report(false, "controller accepts 4 KiB pages (CAP.MPSMIN %u)",
               (unsigned)((n->cap >> 48) & 0xf));
        return report_summary();
    }
    size = qd + 1;
    if (size > (n->cap & 0xffff) + 1) {
        size = (n->cap & 0xffff) + 1;
        qd = size - 1;
        printf("queue depth limited to %u by CAP.MQES\n", qd);
    }
    b.qd = qd;

    if (b.irq && !setup_msix(n, nq)) {
        report(false, "MSI-X capability for mode=irq");
        return report_summary();
    }
    report(nvme_enable(n), "controller enabled (CAP 0x%lx, version 0x%x)",
           n->cap, mmio_read32(n->regs + NVME_REG_VS));
    if (!nvme_identify(n)) {
        return report_summary();
    }

    NvmeSqe feat = { .opc = NVME_ADM_SET_FEATURES,
                     .cdw10 = NVME_FEAT_NUM_QUEUES,
                     .cdw11 = ((nq - 1) << 16) | (nq - 1) };
    st = nvme_admin(n, &feat, &granted);
    ok = st == 0 && (granted & 0xffff) + 1 >= nq && (granted >> 16) + 1 >= nq;
    report(ok, "Set Features: %u queue pairs requested, %u SQs / %u CQs granted",
           nq, (granted & 0xffff) + 1, (granted >> 16) + 1);
    if (!ok) {
        return report_summary();
    }
    ok = true;
    for (i = 1; i <= nq && ok; i++) {
        unsigned iv = b.irq ? (n->msix.nvec > nq ? i : i % n->msix.nvec) : 0;

        if (i == 1) {
            first_iv = iv;
        }
        ok = nvme_create_io_queue(n, i, size, b.irq, iv);
        for (c = 0; ok && c < size; c++) {
            n->io[i - 1].buf[c] = (uint64_t)alloc_pages_uninit(IO_SIZE / PAGE_SIZE);
            ok = n->io[i - 1].buf[c] != 0;
        }
    }
    report(ok, "created %u I/O queue pairs of %u entries (%s completion)",
           nq, size, mode);
    if (!ok) {
        return report_summary();
    }

    if (cmdline_u64("verify", 0)) {
        char *buf = alloc_pages(1);

        ok = buf && nvme_read_sync(n, &n->io[0], 0, buf);
        report(ok && !memcmp(buf, SIGNATURE, strlen(SIGNATURE)),
               "LBA 0 holds the test signature");
    }

    n->nq = nq;
    io_bench_measure(&b);
    report(sorted(b.lat, b.completed) && b.min <= b.p50 && b.p50 <= b.p99 &&
           b.p99 <= b.max, "latency samples sorted, percentiles ordered");
    snprintf(params, sizeof(params), "qd=%u queues=%u mode=%s", qd, nq, mode);
    io_bench_print_result(&b, params);
    if (b.irq && cmdline_u64("mask", 0)) {
        masked_vector_check(n, first_iv);
    }
    mmio_write32(n->regs + NVME_REG_CC, 0);
    return report_summary();
}
