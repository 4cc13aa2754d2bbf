/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk: a minimal virtio 1.x PCI block driver and benchmark,
 * written from the virtio specification.  It finds the device (1af4:1042)
 * and its capabilities, negotiates VERSION_1 (+ FLUSH), sets up request
 * queue 0, checks a write / flush / read-back round trip and the
 * out-of-range error status, then runs `ios` random 4 KiB reads at queue
 * depth `qd`, polled (mode=poll) or MSI-X driven (mode=irq).  The hot
 * loop runs at CPL3 (see run_user()).
 *
 * Command line: qd=16 ios=10000 mode=poll|irq verify=0|1 write=0|1
 * randwrite=0|1 (verify=1: sector 0 must start with "CONDUIT-VIRTIOBLK";
 * write=1 runs the write/flush/read-back check on the last 4 KiB of the
 * disk; randwrite=1 makes the timed I/Os 4 KiB writes at random offsets
 * of the disk's first half, so the signature and the check's block are
 * left alone, instead of reads; dirty=N makes the guest store into N
 * pages of a 64 MiB area after each completion and check, at the end,
 * that every page holds the last value stored in it: a migration that
 * lost a page the guest dirtied leaves an older one behind).
 *
 * Each in-flight request owns three descriptors (header, data, status)
 * at 3 * slot, so qd <= QUEUE_SIZE / 3.  Latency = TSC when its used
 * entry is seen minus TSC when it was made available.  Output:
 *   RESULT iops=... p50_ns=... p99_ns=... ios=... qd=... mode=... ...
 */
#include "iobench.h"
#include "pci.h"

#define VIRTIO_VENDOR 0x1af4
#define VIRTIO_BLK_DEVICE 0x1042
#define PCI_CAP_ID_VNDR 0x09
#define CAP_COMMON 1
#define CAP_NOTIFY 2
#define CAP_ISR 3
#define CAP_DEVICE 4

#define COMMON_DFSELECT 0
#define COMMON_DF 4
#define COMMON_GFSELECT 8
#define COMMON_GF 12
#define COMMON_MSIX 16
#define COMMON_STATUS 20
#define COMMON_Q_SELECT 22
#define COMMON_Q_SIZE 24
#define COMMON_Q_MSIX 26
#define COMMON_Q_ENABLE 28
#define COMMON_Q_NOFF 30
#define COMMON_Q_DESC 32
#define COMMON_Q_AVAIL 40
#define COMMON_Q_USED 48

#define S_ACK 1
#define S_DRIVER 2
#define S_DRIVER_OK 4
#define S_FEATURES_OK 8
#define S_NEEDS_RESET 64
#define F_VERSION_1_HI (1u << 0)        /* bit 32 */
#define F_BLK_FLUSH (1u << 9)

#define DESC_F_NEXT 1
#define DESC_F_WRITE 2
#define T_IN 0
#define T_OUT 1
#define T_FLUSH 4
#define ST_OK 0
#define ST_IOERR 1

#define QUEUE_SIZE 256
#define IO_SIZE 4096
#define VECTOR 0x50
#define NO_VECTOR 0xffff
#define SIGNATURE "CONDUIT-VIRTIOBLK"

typedef struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
} Desc;

typedef struct BlkHdr {
    uint32_t type;
    uint32_t ioprio;
    uint64_t sector;
} BlkHdr;

typedef struct Vblk {
    PciDev *dev;
    uint64_t common, notify, device;
    uint32_t notify_mult;
    uint64_t notify_addr;
    volatile Desc *desc;
    volatile uint16_t *avail;       /* flags, idx, ring[] */
    volatile uint16_t *used;        /* flags, idx, then 8-byte elements */
    uint16_t avail_idx;
    uint16_t last_used;
    uint64_t capacity;              /* sectors */
    BlkHdr *hdr;                    /* one per slot */
    volatile uint8_t *status;       /* one per slot */
    uint64_t *buf;                  /* one 4 KiB buffer per slot */
    uint64_t *submit_tsc;
    PciMsix msix;
} Vblk;

static PciDev devs[PCI_MAX_DEVICES];
static Vblk vblk;
/* randwrite=1: the timed I/Os are writes. */
static bool bench_writes;

static uint8_t rd8(uint64_t a) { return *(volatile uint8_t *)a; }
static void wr8(uint64_t a, uint8_t v) { *(volatile uint8_t *)a = v; }
static uint16_t rd16(uint64_t a) { return *(volatile uint16_t *)a; }
static void wr16(uint64_t a, uint16_t v) { *(volatile uint16_t *)a = v; }

static bool find_caps(Vblk *v)
{
    uint8_t pos = pci_cfg_read8(v->dev->bdf, PCI_CAPABILITY_LIST) & ~3;
    int found = 0;

    while (pos) {
        if (pci_cfg_read8(v->dev->bdf, pos) == PCI_CAP_ID_VNDR) {
            uint8_t type = pci_cfg_read8(v->dev->bdf, pos + 3);
            uint8_t bar = pci_cfg_read8(v->dev->bdf, pos + 4);
            uint64_t addr = v->dev->bar[bar].addr +
                            pci_cfg_read32(v->dev->bdf, pos + 8);

            if (type == CAP_COMMON) {
                v->common = addr;
                found |= 1;
            } else if (type == CAP_NOTIFY) {
                v->notify = addr;
                v->notify_mult = pci_cfg_read32(v->dev->bdf, pos + 16);
                found |= 2;
            } else if (type == CAP_DEVICE) {
                v->device = addr;
                found |= 4;
            }
        }
        pos = pci_cfg_read8(v->dev->bdf, pos + 1) & ~3;
    }
    return found == 7;
}

static bool vblk_init(Vblk *v, bool irq)
{
    uint32_t hi;
    uint16_t noff, max;
    size_t i;

    wr8(v->common + COMMON_STATUS, 0);
    if (rd8(v->common + COMMON_STATUS)) {
        return false;
    }
    wr8(v->common + COMMON_STATUS, S_ACK);
    wr8(v->common + COMMON_STATUS, S_ACK | S_DRIVER);
    mmio_write32(v->common + COMMON_DFSELECT, 1);
    hi = mmio_read32(v->common + COMMON_DF);
    if (!(hi & F_VERSION_1_HI)) {
        printf("device does not offer VERSION_1\n");
        return false;
    }
    mmio_write32(v->common + COMMON_GFSELECT, 0);
    mmio_write32(v->common + COMMON_GF, F_BLK_FLUSH);
    mmio_write32(v->common + COMMON_GFSELECT, 1);
    mmio_write32(v->common + COMMON_GF, F_VERSION_1_HI);
    wr8(v->common + COMMON_STATUS, S_ACK | S_DRIVER | S_FEATURES_OK);
    if (!(rd8(v->common + COMMON_STATUS) & S_FEATURES_OK)) {
        printf("FEATURES_OK refused\n");
        return false;
    }
    v->capacity = mmio_read64(v->device);

    wr16(v->common + COMMON_Q_SELECT, 0);
    max = rd16(v->common + COMMON_Q_SIZE);
    if (max < QUEUE_SIZE) {
        printf("queue size %u < %u\n", max, QUEUE_SIZE);
        return false;
    }
    wr16(v->common + COMMON_Q_SIZE, QUEUE_SIZE);
    v->desc = alloc_pages(ALIGN_UP(QUEUE_SIZE * 16, PAGE_SIZE) / PAGE_SIZE);
    v->avail = alloc_pages(1);
    v->used = alloc_pages(ALIGN_UP(6 + 8 * QUEUE_SIZE, PAGE_SIZE) / PAGE_SIZE);
    v->hdr = alloc_pages(ALIGN_UP(QUEUE_SIZE * sizeof(BlkHdr), PAGE_SIZE) /
                         PAGE_SIZE);
    v->status = alloc_pages(1);
    v->buf = alloc_pages(ALIGN_UP(QUEUE_SIZE * 16, PAGE_SIZE) / PAGE_SIZE);
    if (!v->desc || !v->avail || !v->used || !v->hdr || !v->status ||
        !v->buf) {
        return false;
    }
    v->submit_tsc = v->buf + QUEUE_SIZE;
    for (i = 0; i < QUEUE_SIZE / 3; i++) {
        v->buf[i] = (uint64_t)alloc_pages_uninit(IO_SIZE / PAGE_SIZE);
        if (!v->buf[i]) {
            return false;
        }
    }
    mmio_write64(v->common + COMMON_Q_DESC, (uint64_t)v->desc);
    mmio_write64(v->common + COMMON_Q_AVAIL, (uint64_t)v->avail);
    mmio_write64(v->common + COMMON_Q_USED, (uint64_t)v->used);
    wr16(v->common + COMMON_Q_MSIX, irq ? 0 : NO_VECTOR);
    if (irq && rd16(v->common + COMMON_Q_MSIX) != 0) {
        printf("queue vector refused\n");
        return false;
    }
    noff = rd16(v->common + COMMON_Q_NOFF);
    v->notify_addr = v->notify + (uint64_t)noff * v->notify_mult;
    wr16(v->common + COMMON_Q_ENABLE, 1);
    wr8(v->common + COMMON_STATUS,
        S_ACK | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK);
    return !(rd8(v->common + COMMON_STATUS) & S_NEEDS_RESET);
}

/* Fills slot's three descriptors; returns the head. */
static uint16_t prepare(Vblk *v, unsigned slot, uint32_t type,
                        uint64_t sector, uint64_t buf, uint32_t len)
{
    uint16_t d = slot * 3;
    BlkHdr *h = &v->hdr[slot];

    h->type = type;
    h->ioprio = 0;
    h->sector = sector;
    v->status[slot] = 0xff;
    v->desc[d].addr = (uint64_t)h;
    v->desc[d].len = sizeof(*h);
    v->desc[d].flags = DESC_F_NEXT;
    v->desc[d].next = d + 1;
    if (len) {
        v->desc[d + 1].addr = buf;
        v->desc[d + 1].len = len;
        v->desc[d + 1].flags = DESC_F_NEXT | (type == T_IN ? DESC_F_WRITE : 0);
        v->desc[d + 1].next = d + 2;
    } else {
        v->desc[d].next = d + 2;
    }
    v->desc[d + 2].addr = (uint64_t)&v->status[slot];
    v->desc[d + 2].len = 1;
    v->desc[d + 2].flags = DESC_F_WRITE;
    v->desc[d + 2].next = 0;
    return d;
}

static void make_available(Vblk *v, uint16_t head)
{
    v->avail[2 + v->avail_idx % QUEUE_SIZE] = head;
    barrier();
    v->avail_idx++;
    v->avail[1] = v->avail_idx;
}

static void kick(Vblk *v)
{
    barrier();
    wr16(v->notify_addr, 0);
}

/* The next used element's id, or -1. */
static int used_pop(Vblk *v)
{
    volatile uint32_t *elem;

    if (v->used[1] == v->last_used) {
        return -1;
    }
    barrier();
    elem = (volatile uint32_t *)(v->used + 2) + 2 * (v->last_used % QUEUE_SIZE);
    v->last_used++;
    return elem[0];
}

/* One request at CPL0 (set-up time); returns its status or -1. */
static int request_sync(Vblk *v, uint32_t type, uint64_t sector, void *buf,
                        uint32_t len)
{
    uint64_t t0 = rdtsc();
    uint16_t head = prepare(v, 0, type, sector, (uint64_t)buf, len);
    int id;

    make_available(v, head);
    kick(v);
    while ((id = used_pop(v)) < 0) {
        if (rdtsc() - t0 > tsc_khz() * IO_BENCH_STALL_MS) {
            return -1;
        }
        cpu_relax();
    }
    return id == head ? v->status[0] : -1;
}

/*
 * dirty=N: stores s = 1, 2, ... go round robin over the area's pages,
 * into the first word of page (s - 1) % DIRTY_PAGES, so page p last got
 * the largest such s, or DIRTY_INIT + p if none was stored yet.  The
 * initial values are not zero, so a migration must have sent every page
 * once already; what it sends again it learns from the dirty log alone.
 */
#define DIRTY_INIT 0xd1d1000000000000ull
#define DIRTY_PAGES 16384u      /* 64 MiB */
#define PAGE_WORDS (PAGE_SIZE / 8)
static volatile uint64_t *dirty_area;
static unsigned dirty_per_io;
static uint64_t dirty_seq;

static void dirty_pages(void)
{
    for (unsigned i = 0; i < dirty_per_io; i++) {
        uint64_t s = ++dirty_seq;

        dirty_area[((s - 1) % DIRTY_PAGES) * PAGE_WORDS] = s;
    }
}

static uint64_t dirty_expected(uint64_t page)
{
    if (page >= dirty_seq) {
        return DIRTY_INIT + page;
    }
    return page + 1 + (dirty_seq - 1 - page) / DIRTY_PAGES * DIRTY_PAGES;
}

/* At CPL3: the area is too big for emulated CPL0 loops. */
static uint64_t user_dirty_init(void *arg)
{
    for (uint64_t p = 0; p < DIRTY_PAGES; p++) {
        dirty_area[p * PAGE_WORDS] = DIRTY_INIT + p;
    }
    return 0;
}

static uint64_t user_dirty_check(void *arg)
{
    uint64_t bad = 0;

    for (uint64_t p = 0; p < DIRTY_PAGES; p++) {
        bad += dirty_area[p * PAGE_WORDS] != dirty_expected(p);
    }
    return bad;
}

static void bench_submit(IoBench *b, unsigned slot)
{
    Vblk *v = b->opaque;
    uint64_t blocks = v->capacity / (IO_SIZE / 512);
    uint64_t sector;
    uint16_t head;

    /* Writes stay in the first half, past block 0 (the signature). */
    sector = bench_writes && blocks > 2
             ? (1 + io_bench_random(b, blocks / 2 - 1)) * (IO_SIZE / 512)
             : io_bench_random(b, blocks) * (IO_SIZE / 512);
    head = prepare(v, slot, bench_writes ? T_OUT : T_IN, sector,
                   v->buf[slot], IO_SIZE);

    v->submit_tsc[slot] = rdtsc();
    make_available(v, head);
    io_bench_submitted(b);
}

static void bench_start(IoBench *b)
{
    unsigned s;

    for (s = 0; s < b->qd && io_bench_want_more(b); s++) {
        bench_submit(b, s);
    }
    kick(b->opaque);
}

static bool bench_reap(IoBench *b)
{
    Vblk *v = b->opaque;
    bool any = false;
    int id;

    while ((id = used_pop(v)) >= 0) {
        unsigned slot = id / 3;
        bool ours = slot < b->qd;

        io_bench_complete(b, ours ? rdtsc() - v->submit_tsc[slot] : 0,
                          id % 3 || !ours || v->status[slot] != ST_OK);
        any = true;
        dirty_pages();
        if (ours && io_bench_want_more(b)) {
            bench_submit(b, slot);
        }
        if (io_bench_done(b)) {
            break;
        }
    }
    if (any) {
        kick(v);
    }
    return any;
}

static const IoBenchOps bench_ops = {
    .start = bench_start,
    .reap = bench_reap,
};

static void write_check(Vblk *v)
{
    uint8_t *w = alloc_pages(1), *r = alloc_pages(1);
    uint64_t sector = v->capacity - IO_SIZE / 512;
    size_t i;
    int st;

    if (!w || !r) {
        report(false, "memory for the write check");
        return;
    }
    for (i = 0; i < IO_SIZE; i++) {
        w[i] = (uint8_t)(i * 13 + 1);
    }
    memcpy(w, "CONDUIT-WRITTEN", 15);
    st = request_sync(v, T_OUT, sector, w, IO_SIZE);
    report(st == ST_OK, "write 4 KiB at sector %lu: status %d", sector, st);
    st = request_sync(v, T_FLUSH, 0, 0, 0);
    report(st == ST_OK, "flush: status %d", st);
    st = request_sync(v, T_IN, sector, r, IO_SIZE);
    report(st == ST_OK && !memcmp(w, r, IO_SIZE),
           "read back what was written: status %d", st);
    st = request_sync(v, T_IN, v->capacity, r, IO_SIZE);
    report(st == ST_IOERR, "read past the end: IOERR (status %d)", st);
}

int main(void)
{
    Vblk *v = &vblk;
    IoBench b = { .ops = &bench_ops, .opaque = v, .irq_vector = VECTOR,
                  .irq_vectors = 1 };
    char params[64];
    int count;
    bool ok;

    b.qd = cmdline_u64("qd", 16);
    b.ios = cmdline_u64("ios", 10000);
    b.irq = io_bench_cmdline_irq();
    bench_writes = cmdline_u64("randwrite", 0) != 0;
    if (!b.qd || b.qd > QUEUE_SIZE / 3 || !b.ios) {
        panic("qd=%u ios=%lu: need 1 <= qd <= %u, ios >= 1", b.qd, b.ios,
              QUEUE_SIZE / 3);
    }
    printf("virtio-blk: qd=%u ios=%lu mode=%s tsc=%lu kHz (%s)\n", b.qd,
           b.ios, io_bench_mode(&b), tsc_khz(), tsc_method());
    apic_init();
    irq_enable();

    count = pci_scan(devs, PCI_MAX_DEVICES);
    v->dev = pci_find(devs, count, VIRTIO_VENDOR, VIRTIO_BLK_DEVICE);
    if (!v->dev) {
        report(false, "virtio-blk-pci present");
        return report_summary();
    }
    ok = pci_bar_assign(devs, count, v->dev);
    pci_enable(v->dev);
    ok = ok && find_caps(v);
    report(ok, "virtio-blk %02x:%02x.%x: common/notify/device capabilities",
           v->dev->bdf >> 8, (v->dev->bdf >> 3) & 31, v->dev->bdf & 7);
    if (!ok) {
        return report_summary();
    }
    if (b.irq) {
        ok = pci_msix_init(v->dev, &v->msix);
        if (ok) {
            irq_set_count_only(VECTOR);
            pci_msix_set_vector(&v->msix, 0, VECTOR, apic_id());
            pci_msix_mask(&v->msix, 0, false);
            pci_msix_enable(&v->msix, true);
        }
        report(ok, "MSI-X for mode=irq");
    }
    ok = ok && vblk_init(v, b.irq);
    report(ok, "negotiated VERSION_1, queue 0 of %u entries, DRIVER_OK; "
           "%lu sectors", QUEUE_SIZE, v->capacity);
    if (!ok || v->capacity < IO_SIZE / 512) {
        return report_summary();
    }
    if (cmdline_u64("verify", 0)) {
        char *buf = alloc_pages(1);

        ok = buf && request_sync(v, T_IN, 0, buf, IO_SIZE) == ST_OK;
        report(ok && !memcmp(buf, SIGNATURE, strlen(SIGNATURE)),
               "sector 0 holds the test signature");
    }
    if (cmdline_u64("write", 0)) {
        write_check(v);
    }

    dirty_per_io = cmdline_u64("dirty", 0);
    if (dirty_per_io) {
        dirty_area = alloc_pages_uninit(DIRTY_PAGES);
        if (!dirty_area) {
            report(false, "dirty=%u: memory for %u pages", dirty_per_io,
                   DIRTY_PAGES);
            return report_summary();
        }
        run_user(user_dirty_init, NULL);
        /* The I/O and the stores start now (a host may wait for this). */
        printf("DIRTY-AREA-SET pages=%u per-io=%u\n", DIRTY_PAGES,
               dirty_per_io);
    }

    io_bench_measure(&b);
    if (dirty_per_io) {
        uint64_t bad = run_user(user_dirty_check, NULL);

        report(!bad, "dirty=%u: %lu stores over %u pages, each page holds "
               "the last (%lu differ)", dirty_per_io, dirty_seq,
               DIRTY_PAGES, bad);
    }
    snprintf(params, sizeof(params), "qd=%u mode=%s op=%s", b.qd,
             io_bench_mode(&b), bench_writes ? "write" : "read");
    io_bench_print_result(&b, params);
    wr8(v->common + COMMON_STATUS, 0);
    return report_summary();
}
