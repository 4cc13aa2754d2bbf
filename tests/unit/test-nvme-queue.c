/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NVMe controller model of vfio-user-nvme: queue arithmetic, PRP walking,
 * Identify layouts, the BAR layout options, and admin/I/O commands driven
 * through the registers and doorbells against an in-memory "guest".
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "contrib/vfio-user/nvme/nvme.h"

#define GUEST_BASE      0x40000000ull
#define GUEST_SIZE      (1024 * 1024)
#define ASQ_OFF         0x0000
#define ACQ_OFF         0x1000
#define IOSQ_OFF        0x2000
#define IOCQ_OFF        0x3000
#define PRP_LIST_OFF    0x8000
#define DATA_OFF        0x20000
#define ADMIN_QSIZE     16

typedef struct TestGuest {
    uint8_t *mem;
    /* [msg_lo, msg_hi) has no host pointer: only the rw path reaches it. */
    uint64_t msg_lo;
    uint64_t msg_hi;
    unsigned rw_calls;
} TestGuest;

static bool guest_in(TestGuest *g, uint64_t iova, uint64_t len)
{
    return iova >= GUEST_BASE && len <= GUEST_SIZE &&
           iova - GUEST_BASE <= GUEST_SIZE - len;
}

static void *guest_ptr(void *opaque, uint64_t iova, uint64_t len, bool write)
{
    TestGuest *g = opaque;

    if (!guest_in(g, iova, len) ||
        (iova < g->msg_hi && iova + len > g->msg_lo)) {
        return NULL;
    }
    return g->mem + (iova - GUEST_BASE);
}

static bool guest_rw(void *opaque, uint64_t iova, void *buf, uint64_t len,
                     bool write)
{
    TestGuest *g = opaque;

    if (!guest_in(g, iova, len)) {
        return false;
    }
    g->rw_calls++;
    if (write) {
        memcpy(g->mem + (iova - GUEST_BASE), buf, len);
    } else {
        memcpy(buf, g->mem + (iova - GUEST_BASE), len);
    }
    return true;
}

static const NvmeDmaOps guest_dma_ops = {
    .ptr = guest_ptr,
    .rw = guest_rw,
};

/* ---- Queue arithmetic ---- */

static void test_queue_wrap(void)
{
    g_assert_cmpuint(nvme_q_next(0, 4), ==, 1);
    g_assert_cmpuint(nvme_q_next(2, 4), ==, 3);
    g_assert_cmpuint(nvme_q_next(3, 4), ==, 0);
    g_assert_cmpuint(nvme_q_next(1023, 1024), ==, 0);
    g_assert_cmpuint(nvme_q_next(65534, 65535), ==, 0);
}

static void test_queue_full_empty(void)
{
    g_assert_true(nvme_q_empty(3, 3));
    g_assert_false(nvme_q_empty(3, 0));
    /* Size 4 holds 3 entries: tail one behind head is full. */
    g_assert_true(nvme_q_full(0, 3, 4));
    g_assert_true(nvme_q_full(2, 1, 4));
    g_assert_false(nvme_q_full(0, 2, 4));
    g_assert_false(nvme_q_full(0, 0, 4));
    g_assert_cmpuint(nvme_q_used(0, 3, 4), ==, 3);
    g_assert_cmpuint(nvme_q_used(3, 1, 4), ==, 2);
    g_assert_cmpuint(nvme_q_used(2, 2, 4), ==, 0);
    g_assert_cmpuint(nvme_q_space(0, 0, 4), ==, 3);
    g_assert_cmpuint(nvme_q_space(3, 1, 4), ==, 1);
    g_assert_cmpuint(nvme_q_space(0, 3, 4), ==, 0);
    g_assert_cmpuint(nvme_q_space(0, 0, 2), ==, 1);
}

/* ---- PRP walking ---- */

typedef struct PrpFixture {
    TestGuest g;
    NvmeDma dma;
    NvmeSgl sgl;
} PrpFixture;

static void prp_setup(PrpFixture *f, gconstpointer data)
{
    f->g.mem = g_malloc0(GUEST_SIZE);
    f->dma.ops = &guest_dma_ops;
    f->dma.opaque = &f->g;
}

static void prp_teardown(PrpFixture *f, gconstpointer data)
{
    g_free(f->g.mem);
}

static void prp_list_set(PrpFixture *f, uint64_t off, unsigned idx,
                         uint64_t val)
{
    stq_le_p(f->g.mem + off + 8 * idx, val);
}

static void test_prp_single_and_two_pages(PrpFixture *f, gconstpointer d)
{
    uint64_t p1 = GUEST_BASE + DATA_OFF + 0x200;
    uint64_t p2 = GUEST_BASE + DATA_OFF + 0x3000;

    g_assert_cmphex(nvme_prp_map(&f->dma, p1, 0, 512, 4096, &f->sgl), ==,
                    NVME_SUCCESS);
    g_assert_cmpuint(f->sgl.nseg, ==, 1);
    g_assert_cmpuint(f->sgl.seg[0].len, ==, 512);

    /* Offset 0x200 leaves 0xe00 in the first page; the rest is PRP2. */
    g_assert_cmphex(nvme_prp_map(&f->dma, p1, p2, 4096, 4096, &f->sgl), ==,
                    NVME_SUCCESS);
    g_assert_cmpuint(f->sgl.nseg, ==, 2);
    g_assert_cmphex(f->sgl.seg[0].iova, ==, p1);
    g_assert_cmpuint(f->sgl.seg[0].len, ==, 0xe00);
    g_assert_cmphex(f->sgl.seg[1].iova, ==, p2);
    g_assert_cmpuint(f->sgl.seg[1].len, ==, 0x200);
    g_assert_cmpuint(f->sgl.total, ==, 4096);
}

static void test_prp_list(PrpFixture *f, gconstpointer d)
{
    uint64_t list = GUEST_BASE + PRP_LIST_OFF;

    for (unsigned i = 0; i < 3; i++) {
        prp_list_set(f, PRP_LIST_OFF, i,
                     GUEST_BASE + DATA_OFF + 0x1000 * (i + 1));
    }
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE + DATA_OFF, list,
                                 4 * 4096 - 100, 4096, &f->sgl), ==,
                    NVME_SUCCESS);
    g_assert_cmpuint(f->sgl.nseg, ==, 4);
    g_assert_cmphex(f->sgl.seg[3].iova, ==, GUEST_BASE + DATA_OFF + 0x3000);
    g_assert_cmpuint(f->sgl.seg[3].len, ==, 4096 - 100);
}

static void test_prp_list_chain(PrpFixture *f, gconstpointer d)
{
    /* A list starting at the last slot of its page chains immediately. */
    uint64_t list = GUEST_BASE + PRP_LIST_OFF + 4096 - 16;
    uint64_t next = GUEST_BASE + PRP_LIST_OFF + 0x2000;

    prp_list_set(f, PRP_LIST_OFF + 4096 - 16, 0, GUEST_BASE + DATA_OFF +
                 0x1000);
    prp_list_set(f, PRP_LIST_OFF + 4096 - 16, 1, next);
    prp_list_set(f, PRP_LIST_OFF + 0x2000, 0, GUEST_BASE + DATA_OFF + 0x2000);
    prp_list_set(f, PRP_LIST_OFF + 0x2000, 1, GUEST_BASE + DATA_OFF + 0x3000);
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE + DATA_OFF, list,
                                 4 * 4096, 4096, &f->sgl), ==, NVME_SUCCESS);
    g_assert_cmpuint(f->sgl.nseg, ==, 4);
    g_assert_cmphex(f->sgl.seg[1].iova, ==, GUEST_BASE + DATA_OFF + 0x1000);
    g_assert_cmphex(f->sgl.seg[2].iova, ==, GUEST_BASE + DATA_OFF + 0x2000);
    g_assert_cmphex(f->sgl.seg[3].iova, ==, GUEST_BASE + DATA_OFF + 0x3000);
}

static void test_prp_bad_pointers(PrpFixture *f, gconstpointer d)
{
    uint64_t list = GUEST_BASE + PRP_LIST_OFF;
    uint64_t loop = GUEST_BASE + PRP_LIST_OFF + 4096 - 8;

    /* PRP1 not dword aligned. */
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE + 2, 0, 512, 4096,
                                 &f->sgl) & 0xff, ==,
                    NVME_INVALID_PRP_OFFSET);
    /* PRP2 as a data page must be page aligned. */
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE, GUEST_BASE + 0x1010,
                                 8192, 4096, &f->sgl) & 0xff, ==,
                    NVME_INVALID_PRP_OFFSET);
    /* List pointer outside guest memory. */
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE, 0xdead0000, 3 * 4096,
                                 4096, &f->sgl) & 0xff, ==,
                    NVME_DATA_TRANSFER_ERROR);
    /* List entry with an offset. */
    prp_list_set(f, PRP_LIST_OFF, 0, GUEST_BASE + 0x1008);
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE, list, 3 * 4096, 4096,
                                 &f->sgl) & 0xff, ==,
                    NVME_INVALID_PRP_OFFSET);
    /* A chain pointer pointing back at itself must terminate. */
    prp_list_set(f, PRP_LIST_OFF, 511, loop);
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE, loop, 3 * 4096, 4096,
                                 &f->sgl) & 0xff, ==,
                    NVME_INVALID_PRP_OFFSET);
    /* Larger than MDTS. */
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE, list,
                                 NVME_MAX_XFER + 4096, 4096, &f->sgl) & 0xff,
                    ==, NVME_INVALID_FIELD);
}

static void test_prp_message_only_memory(PrpFixture *f, gconstpointer d)
{
    uint64_t list = GUEST_BASE + PRP_LIST_OFF;
    uint8_t buf[3 * 4096];

    /* The list itself lives where only DMA messages reach. */
    f->g.msg_lo = list;
    f->g.msg_hi = list + 4096;
    prp_list_set(f, PRP_LIST_OFF, 0, GUEST_BASE + DATA_OFF + 0x1000);
    prp_list_set(f, PRP_LIST_OFF, 1, GUEST_BASE + DATA_OFF + 0x2000);
    g_assert_cmphex(nvme_prp_map(&f->dma, GUEST_BASE + DATA_OFF, list,
                                 3 * 4096, 4096, &f->sgl), ==, NVME_SUCCESS);
    g_assert_cmpuint(f->g.rw_calls, ==, 2);
    memset(buf, 0x5a, sizeof(buf));
    g_assert_true(nvme_sgl_to_guest(&f->dma, &f->sgl, buf));
    g_assert_cmpuint(f->g.mem[DATA_OFF + 0x2fff], ==, 0x5a);
}

/* ---- Options and layout ---- */

static bool parse_layout(NvmeOptions *o, NvmeBarLayout *l, const char *args,
                         uint64_t page, Error **errp)
{
    g_autofree char *cmd = g_strdup_printf("vfio-user-nvme --socket /x %s",
                                           args);
    g_auto(GStrv) argv = g_strsplit(g_strstrip(cmd), " ", -1);

    nvme_options_init(o);
    if (!nvme_options_parse(o, g_strv_length(argv), argv, errp)) {
        return false;
    }
    return nvme_layout_compute(o, page, l, errp);
}

static void test_layout_default(void)
{
    NvmeOptions o;
    NvmeBarLayout l;

    g_assert_true(parse_layout(&o, &l, "", 4096, &error_abort));
    g_assert_cmpint(l.msix_bar, ==, 4);
    g_assert_cmpuint(l.nvectors, ==, 65);
    g_assert_cmphex(l.bar0_size, ==, 0x4000);
    g_assert_cmphex(l.table_offset, ==, 0);
    g_assert_cmphex(l.pba_offset, ==, 0x1000);
    g_assert_cmphex(l.msix_bar_size, ==, 0x2000);
    g_assert_cmpuint(l.table_size, ==, 65 * 16);
    g_assert_cmpuint(l.pba_size, ==, 16);
    /* No MSI-X in BAR0: all of it is a plain mappable region. */
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);

    /* --no-msix-mappable concerns the MSI-X BAR only. */
    g_assert_true(parse_layout(&o, &l, "--no-msix-mappable", 4096,
                               &error_abort));
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);
}

static void test_layout_table_on_doorbell_page(void)
{
    NvmeOptions o;
    NvmeBarLayout l;

    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x1800 --msix-pba-offset 0x1c00", 4096,
                               &error_abort));
    g_assert_cmphex(l.bar0_size, ==, 0x4000);
    /* 0x400 bytes of table before the PBA: 64 vectors, 63 I/O queues. */
    g_assert_cmpuint(l.nvectors, ==, 64);
    g_assert_cmpuint(l.max_ioqs, ==, 63);
    /* MSIX_MAPPABLE: the whole BAR, registers included, with no sparse list. */
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);

    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x1800 --msix-pba-offset 0x1c00 "
                               "--no-msix-mappable", 4096, &error_abort));
    /* Without it the table's page (the doorbells) must trap, nothing else. */
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 2);
    g_assert_cmphex(l.areas[0].offset, ==, 0);
    g_assert_cmphex(l.areas[0].size, ==, 0x1000);
    g_assert_cmphex(l.areas[1].offset, ==, 0x2000);
    g_assert_cmphex(l.areas[1].size, ==, 0x2000);
    nvme_options_free(&o);
}

static void test_layout_pba_on_doorbell_page(void)
{
    NvmeOptions o;
    NvmeBarLayout l;

    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x3000 --msix-pba-offset 0x1c00 "
                               "--no-msix-mappable", 4096, &error_abort));
    /* Only the table's page is excluded, as Linux's vfio-pci does. */
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 1);
    g_assert_cmphex(l.areas[0].offset, ==, 0);
    g_assert_cmphex(l.areas[0].size, ==, 0x3000);
    nvme_options_free(&o);
}

static void test_layout_grows_bar0(void)
{
    NvmeOptions o;
    NvmeBarLayout l;

    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x5000 --msix-pba-offset 0x6000 "
                               "--no-msix-mappable", 4096, &error_abort));
    g_assert_cmphex(l.bar0_size, ==, 0x8000);
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 2);
    g_assert_cmphex(l.areas[0].offset, ==, 0);
    g_assert_cmphex(l.areas[0].size, ==, 0x5000);
    g_assert_cmphex(l.areas[1].offset, ==, 0x6000);
    g_assert_cmphex(l.areas[1].size, ==, 0x2000);
    nvme_options_free(&o);

    /* 64 KiB pages: the table's page is all of BAR0, nothing to map. */
    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x3000 --msix-pba-offset 0x3800 "
                               "--no-msix-mappable", 65536,
                               &error_abort));
    g_assert_false(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);

    /* With the capability the page size does not matter. */
    g_assert_true(parse_layout(&o, &l, "--msix-bar 0 --msix-table-offset "
                               "0x3000 --msix-pba-offset 0x3800", 65536,
                               &error_abort));
    g_assert_true(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);

    /*
     * A mapped BAR is at least one host page: the memfd is sealed at the
     * BAR's size, and a 16 KiB BAR0 ending inside the client's 64 KiB page
     * could be neither mapped whole nor become a KVM memslot.
     */
    g_assert_cmphex(l.bar0_size, ==, 0x10000);
    g_assert_true(parse_layout(&o, &l, "", 65536, &error_abort));
    g_assert_cmphex(l.bar0_size, ==, 0x10000);
    g_assert_cmphex(l.msix_bar_size, ==, 0x10000);
    g_assert_true(l.bar0_mmap);
    nvme_options_free(&o);
    g_assert_true(parse_layout(&o, &l, "", 4096, &error_abort));
    g_assert_cmphex(l.bar0_size, ==, 0x4000);
    g_assert_cmphex(l.msix_bar_size, ==, 0x2000);
    nvme_options_free(&o);

    g_assert_true(parse_layout(&o, &l, "--no-mmap", 4096, &error_abort));
    g_assert_false(l.bar0_mmap);
    g_assert_cmpuint(l.nr_areas, ==, 0);
    nvme_options_free(&o);
}

static void test_layout_errors(void)
{
    static const struct {
        const char *args;
        const char *msg;
    } cases[] = {
        { "--msix-bar 0 --msix-table-offset 0x1004", "8-byte aligned" },
        { "--msix-bar 0 --msix-pba-offset 0x2001", "8-byte aligned" },
        { "--msix-bar 0 --msix-table-offset 0x1100", "doorbells" },
        { "--msix-bar 0 --msix-table-offset 0x800", "registers" },
        { "--msix-bar 0 --msix-table-offset 0x2000 --msix-pba-offset 0x2100 "
          "--queues 16", "overlap" },
        { "--msix-bar 0 --msix-table-offset 0x2000 --msix-pba-offset 0x2008",
          "overlap" },
        { "--msix-table-offset 0x100000000", "largest BAR" },
        { "--msix-bar 1", "BAR1" },
        { "--msix-bar 7", "--msix-bar" },
        { "--backend disk", "--backend" },
        { "--size 12Q", "--size" },
        { "--size 1000", "multiple" },
        { "--queues 65", "--queues" },
        { "--aio-depth 0", "--aio-depth" },
        { "--lba-size 1024", "--lba-size" },
        { "--bogus", "--bogus" },
        { "--serial 0123456789012345678901", "--serial" },
    };

    for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
        NvmeOptions o;
        NvmeBarLayout l;
        Error *err = NULL;

        if (parse_layout(&o, &l, cases[i].args, 4096, &err)) {
            g_error("'%s' was accepted", cases[i].args);
        }
        g_assert_nonnull(err);
        if (!strstr(error_get_pretty(err), cases[i].msg)) {
            g_error("'%s': '%s' lacks '%s'", cases[i].args,
                    error_get_pretty(err), cases[i].msg);
        }
        error_free(err);
        nvme_options_free(&o);
    }
}

static void test_options_required_socket(void)
{
    char *argv[] = { (char *)"vfio-user-nvme", (char *)"--backend",
                     (char *)"ram", NULL };
    NvmeOptions o;
    Error *err = NULL;

    nvme_options_init(&o);
    g_assert_false(nvme_options_parse(&o, 3, argv, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "--socket"));
    error_free(err);
    nvme_options_free(&o);
}

static void test_options_missing_value(void)
{
    static const char *const cases[][2] = {
        { "--socket", "option '--socket' requires a value" },
        { "--size", "option '--size' requires a value" },
        /* An abbreviation is named in full. */
        { "--back", "option '--backend' requires a value" },
    };

    for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
        char *argv[] = { (char *)"vfio-user-nvme", (char *)"--socket",
                         (char *)"/x", (char *)cases[i][0], NULL };
        NvmeOptions o;
        Error *err = NULL;

        nvme_options_init(&o);
        g_assert_false(nvme_options_parse(&o, 4, argv, &err));
        g_assert_nonnull(err);
        g_assert_cmpstr(error_get_pretty(err), ==, cases[i][1]);
        error_free(err);
        nvme_options_free(&o);
    }
}

/* ---- The controller driven through registers and doorbells ---- */

typedef struct Dev {
    TestGuest g;
    NvmeOptions opts;
    NvmeBackend *be;
    NvmeCtrl n;
    uint8_t bar[NVME_BAR0_MIN_SIZE];
    unsigned irqs[NVME_MAX_QUEUES];
    unsigned fatal_irqs;        /* NVME_IRQ_FATAL notifications */
    uint16_t asq_tail, acq_head;
    bool acq_phase;
    uint16_t iosq_tail, iocq_head, io_qsize;
    bool iocq_phase;
    bool polled;        /* ring by storing into the BAR and polling */
} Dev;

static void dev_irq(void *opaque, unsigned vector)
{
    Dev *d = opaque;

    if (vector == NVME_IRQ_FATAL) {
        d->fatal_irqs++;
        return;
    }
    g_assert_cmpuint(vector, <, NVME_MAX_QUEUES);
    d->irqs[vector]++;
}

static void dev_init_ctrl(Dev *d, unsigned lba_size)
{
    NvmeCtrlConfig cfg = {
        .backend = d->be,
        .bar = d->bar,
        .bar_size = sizeof(d->bar),
        .max_ioqs = 4,
        .nvectors = 5,
        .lba_size = lba_size,
        .serial = "TEST1234",
        .dma = { .ops = &guest_dma_ops, .opaque = &d->g },
        .irq_notify = dev_irq,
        .irq_opaque = d,
    };

    g_assert_true(nvme_ctrl_init(&d->n, &cfg, &error_abort));
}

static void dev_setup(Dev *d, gconstpointer data)
{

    d->g.mem = g_malloc0(GUEST_SIZE);
    nvme_options_init(&d->opts);
    d->opts.backend = NVME_BACKEND_RAM;
    d->opts.size = 1024 * 1024;
    d->be = nvme_backend_new(&d->opts, &error_abort);
    dev_init_ctrl(d, 512);
    d->polled = data != NULL;
}

static void dev_teardown(Dev *d, gconstpointer data)
{
    nvme_ctrl_cleanup(&d->n);
    nvme_backend_free(d->be);
    nvme_options_free(&d->opts);
    g_free(d->g.mem);
}

static void dev_ring(Dev *d, unsigned idx, uint32_t val)
{
    if (d->polled) {
        stl_le_p(d->bar + NVME_DB_BASE + 4 * idx, val);
        /* Like the poller thread: pass again until a pass finds nothing. */
        while (nvme_ctrl_poll(&d->n)) {
            continue;
        }
    } else {
        nvme_ctrl_doorbell_write(&d->n, NVME_DB_BASE + 4 * idx, val);
    }
}

/* A register store: through the mapped BAR when polled, else trapped. */
static void dev_reg_write(Dev *d, unsigned off, uint64_t val, unsigned size)
{
    if (d->polled) {
        stl_le_p(d->bar + off, val);
        if (size == 8) {
            stl_le_p(d->bar + off + 4, val >> 32);
        }
        while (nvme_ctrl_poll(&d->n)) {
            continue;
        }
    } else {
        nvme_ctrl_reg_write(&d->n, off, val, size);
    }
}

static void dev_enable(Dev *d)
{
    dev_reg_write(d, NVME_REG_AQA,
                  ((ADMIN_QSIZE - 1) << 16) | (ADMIN_QSIZE - 1), 4);
    dev_reg_write(d, NVME_REG_ASQ, GUEST_BASE + ASQ_OFF, 8);
    dev_reg_write(d, NVME_REG_ACQ, GUEST_BASE + ACQ_OFF, 8);
    dev_reg_write(d, NVME_REG_CC, NVME_CC_EN | (6 << 16) | (4 << 20), 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==,
                    NVME_CSTS_RDY);
    /* The shared copy agrees with the trapped view. */
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, NVME_CSTS_RDY);
    d->asq_tail = 0;
    d->acq_head = 0;
    d->acq_phase = true;
}

/* Reads the next CQE if its phase says it is new; advances the head. */
static bool dev_cqe(Dev *d, uint64_t cq_off, uint16_t *head, bool *phase,
                    uint16_t size, NvmeCqe *cqe)
{
    memcpy(cqe, d->g.mem + cq_off + *head * NVME_CQES, sizeof(*cqe));
    if ((le16toh(cqe->status) & 1) != *phase) {
        return false;
    }
    *head = nvme_q_next(*head, size);
    if (*head == 0) {
        *phase = !*phase;
    }
    return true;
}

static uint16_t dev_admin(Dev *d, NvmeCmd *cmd, uint32_t *result)
{
    NvmeCqe cqe;

    cmd->cid = htole16(0x100 + d->asq_tail);
    memcpy(d->g.mem + ASQ_OFF + d->asq_tail * NVME_SQES, cmd, sizeof(*cmd));
    d->asq_tail = nvme_q_next(d->asq_tail, ADMIN_QSIZE);
    dev_ring(d, 0, d->asq_tail);
    g_assert_true(dev_cqe(d, ACQ_OFF, &d->acq_head, &d->acq_phase,
                          ADMIN_QSIZE, &cqe));
    g_assert_cmphex(cqe.cid, ==, cmd->cid);
    g_assert_cmpuint(le16toh(cqe.sq_id), ==, 0);
    g_assert_cmpuint(le16toh(cqe.sq_head), ==, d->asq_tail);
    dev_ring(d, 1, d->acq_head);
    if (result) {
        *result = le32toh(cqe.result);
    }
    return le16toh(cqe.status) >> 1;
}

static uint16_t dev_create_io_queues(Dev *d, uint16_t size)
{
    NvmeCmd cq = {
        .opcode = NVME_ADM_CREATE_CQ,
        .prp1 = htole64(GUEST_BASE + IOCQ_OFF),
        .cdw10 = htole32(((uint32_t)(size - 1) << 16) | 1),
        .cdw11 = htole32((1u << 16) | 3),     /* vector 1, IEN, PC */
    };
    NvmeCmd sq = {
        .opcode = NVME_ADM_CREATE_SQ,
        .prp1 = htole64(GUEST_BASE + IOSQ_OFF),
        .cdw10 = htole32(((uint32_t)(size - 1) << 16) | 1),
        .cdw11 = htole32((1u << 16) | 1),     /* CQ 1, PC */
    };
    uint16_t st = dev_admin(d, &cq, NULL);

    if (st == NVME_SUCCESS) {
        st = dev_admin(d, &sq, NULL);
    }
    d->io_qsize = size;
    d->iosq_tail = 0;
    d->iocq_head = 0;
    d->iocq_phase = true;
    return st;
}

static void dev_io_submit(Dev *d, NvmeCmd *cmd, uint16_t cid)
{
    cmd->cid = htole16(cid);
    memcpy(d->g.mem + IOSQ_OFF + d->iosq_tail * NVME_SQES, cmd,
           sizeof(*cmd));
    d->iosq_tail = nvme_q_next(d->iosq_tail, d->io_qsize);
    dev_ring(d, 2, d->iosq_tail);
}

static bool dev_io_reap(Dev *d, NvmeCqe *cqe)
{
    if (!dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase, d->io_qsize,
                 cqe)) {
        return false;
    }
    dev_ring(d, 3, d->iocq_head);
    return true;
}

static uint16_t dev_io(Dev *d, NvmeCmd *cmd)
{
    NvmeCqe cqe;

    dev_io_submit(d, cmd, 7);
    g_assert_true(dev_io_reap(d, &cqe));
    g_assert_cmpuint(le16toh(cqe.cid), ==, 7);
    g_assert_cmpuint(le16toh(cqe.sq_id), ==, 1);
    return le16toh(cqe.status) >> 1;
}

static void fill_guest(Dev *d, uint64_t off, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        d->g.mem[off + i] = seed * 29 + i * 13 + (i >> 8);
    }
}

static void test_ctrl_registers(Dev *d, gconstpointer data)
{
    uint64_t cap = nvme_ctrl_reg_read(&d->n, NVME_REG_CAP, 8);

    g_assert_cmpuint(cap & 0xffff, ==, NVME_MQES);
    g_assert_true(cap & (1ull << 16));                     /* CQR */
    g_assert_cmpuint((cap >> 24) & 0xff, >, 0);            /* TO */
    g_assert_cmpuint((cap >> 32) & 0xf, ==, 0);            /* DSTRD */
    g_assert_cmpuint((cap >> 37) & 0xff, ==, 1);           /* CSS: NVM */
    g_assert_cmpuint((cap >> 48) & 0xf, ==, 0);            /* MPSMIN */
    g_assert_cmpuint((cap >> 52) & 0xf, ==, NVME_MPSMAX);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CAP + 4, 4), ==,
                    cap >> 32);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_VS, 4), ==, 0x10400);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);

    /* ASQ written in halves; low 12 bits are reserved. */
    nvme_ctrl_reg_write(&d->n, NVME_REG_ASQ, 0x12345fff, 4);
    nvme_ctrl_reg_write(&d->n, NVME_REG_ASQ + 4, 0x9, 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_ASQ, 8), ==,
                    0x912345000ull);
    /* Unaligned or odd-sized accesses are ignored, not fatal. */
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC + 1, 1, 4);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 1, 2);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CC, 4), ==, 0);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, 0xffe, 4), ==, 0);
}

static void test_ctrl_enable_bad_config(Dev *d, gconstpointer data)
{
    /* An unsupported page size (MPS 15) is refused with CFS, not RDY. */
    nvme_ctrl_reg_write(&d->n, NVME_REG_AQA, 0x000f000f, 4);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, NVME_CC_EN | (15 << 7), 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==,
                    NVME_CSTS_CFS);
    /* Becoming fatal is announced once, for the error interrupt. */
    g_assert_cmpuint(d->fatal_irqs, ==, 1);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 0, 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
    g_assert_cmpuint(d->fatal_irqs, ==, 1);
    /* Admin queues outside guest memory are reported when used. */
    dev_enable(d);
}

static void test_ctrl_identify(Dev *d, gconstpointer data)
{
    uint8_t *id = d->g.mem + DATA_OFF;
    uint8_t eui64[8];
    NvmeCmd cmd = {
        .opcode = NVME_ADM_IDENTIFY,
        .prp1 = htole64(GUEST_BASE + DATA_OFF),
        .cdw10 = htole32(1),
    };

    dev_enable(d);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpmem(id + NVME_IDC_SN, 8, "TEST1234", 8);
    g_assert_cmpuint(id[NVME_IDC_SN + 8], ==, ' ');
    g_assert_cmpuint(id[NVME_IDC_MDTS], ==, NVME_MDTS);
    g_assert_cmphex(ldl_le_p(id + NVME_IDC_VER), ==, 0x10400);
    g_assert_cmphex(id[NVME_IDC_SQES], ==, 0x66);
    g_assert_cmphex(id[NVME_IDC_CQES], ==, 0x44);
    g_assert_cmpuint(ldl_le_p(id + NVME_IDC_NN), ==, 1);
    g_assert_cmphex(lduw_le_p(id + NVME_IDC_ONCS), ==,
                    NVME_ONCS_WRITE_ZEROES);
    g_assert_cmpuint(id[NVME_IDC_VWC], ==, 0);      /* ram: no cache */
    g_assert_true(g_str_has_prefix((char *)id + NVME_IDC_SUBNQN, "nqn."));
    g_assert_cmpuint(id[NVME_IDC_AERL], ==, NVME_AERL);

    /* Namespace: 1 MiB of 512-byte blocks. */
    cmd.cdw10 = 0;
    cmd.nsid = htole32(1);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(ldq_le_p(id + NVME_IDNS_NSZE), ==, 2048);
    g_assert_cmpuint(ldq_le_p(id + NVME_IDNS_NCAP), ==, 2048);
    g_assert_cmpuint(id[NVME_IDNS_NLBAF], ==, 0);
    g_assert_cmpuint((ldl_le_p(id + NVME_IDNS_LBAF0) >> 16) & 0xff, ==, 9);
    memcpy(eui64, id + NVME_IDNS_EUI64, 8);
    g_assert_cmpuint(ldq_le_p(eui64), !=, 0);
    cmd.nsid = htole32(2);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_NSID | NVME_DNR);

    /* Active namespace list: just NSID 1, then nothing above it. */
    cmd.cdw10 = htole32(2);
    cmd.nsid = 0;
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(ldl_le_p(id), ==, 1);
    g_assert_cmpuint(ldl_le_p(id + 4), ==, 0);
    cmd.nsid = htole32(1);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(ldl_le_p(id), ==, 0);

    /* Descriptor list: one EUI-64. */
    cmd.cdw10 = htole32(3);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(id[0], ==, 1);
    g_assert_cmpuint(id[1], ==, 8);
    g_assert_cmpmem(id + 4, 8, eui64, 8);
    g_assert_cmpuint(id[12], ==, 0);

    cmd.cdw10 = htole32(0x10);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_FIELD | NVME_DNR);
}

static void test_ctrl_admin_errors(Dev *d, gconstpointer data)
{
    NvmeCmd cmd = { .opcode = 0x7f };
    uint32_t result;

    dev_enable(d);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_OPCODE | NVME_DNR);

    /* CQ: qid 0 / beyond max, size 1 and above MQES, bad vector. */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_CREATE_CQ,
                      .prp1 = htole64(GUEST_BASE + IOCQ_OFF),
                      .cdw10 = htole32((15u << 16) | 5),
                      .cdw11 = htole32(3) };
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_INVALID_QID | NVME_DNR);
    cmd.cdw10 = htole32(1);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_MAX_QSIZE_EXCEEDED | NVME_DNR);
    cmd.cdw10 = htole32((2048u << 16) | 1);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_MAX_QSIZE_EXCEEDED | NVME_DNR);
    cmd.cdw10 = htole32((15u << 16) | 1);
    cmd.cdw11 = htole32((9u << 16) | 3);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_VECTOR | NVME_DNR);
    cmd.cdw11 = htole32(2);     /* not physically contiguous */
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_FIELD | NVME_DNR);

    /* SQ on a missing CQ, then a working pair. */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_CREATE_SQ,
                      .prp1 = htole64(GUEST_BASE + IOSQ_OFF),
                      .cdw10 = htole32((15u << 16) | 1),
                      .cdw11 = htole32((2u << 16) | 1) };
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_CQ_INVALID | NVME_DNR);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==,
                    NVME_INVALID_QID | NVME_DNR);

    /* The CQ is in use until its SQ goes. */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_DELETE_CQ, .cdw10 = htole32(1) };
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_QUEUE_DEL | NVME_DNR);
    cmd.opcode = NVME_ADM_DELETE_SQ;
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_INVALID_QID | NVME_DNR);
    cmd.opcode = NVME_ADM_DELETE_CQ;
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    cmd.cdw10 = 0;
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_INVALID_QID | NVME_DNR);

    /* Features. */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_SET_FEATURES,
                      .cdw10 = htole32(NVME_FEAT_NUM_QUEUES),
                      .cdw11 = htole32(0x00ff00ff) };
    g_assert_cmphex(dev_admin(d, &cmd, &result), ==, NVME_SUCCESS);
    g_assert_cmphex(result, ==, 0x00030003);    /* 4 of each, 0-based */
    cmd.cdw10 = htole32(NVME_FEAT_VOLATILE_WC);
    cmd.cdw11 = htole32(1);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_FIELD | NVME_DNR);  /* ram has no cache */
    cmd.cdw10 = htole32(NVME_FEAT_IRQ_COALESCE);
    cmd.cdw11 = htole32(0x0a05);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    cmd.opcode = NVME_ADM_GET_FEATURES;
    g_assert_cmphex(dev_admin(d, &cmd, &result), ==, NVME_SUCCESS);
    g_assert_cmphex(result, ==, 0x0a05);
    cmd.cdw10 = htole32(0x7e);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_FIELD | NVME_DNR);

    /* Log pages. */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_GET_LOG_PAGE,
                      .prp1 = htole64(GUEST_BASE + DATA_OFF),
                      .cdw10 = htole32((127u << 16) | NVME_LOG_SMART) };
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(d->g.mem[DATA_OFF + 3], ==, 100);
    cmd.cdw10 = htole32((127u << 16) | NVME_LOG_FW_SLOT);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(d->g.mem[DATA_OFF], ==, 1);
    cmd.cdw10 = htole32((15u << 16) | NVME_LOG_ERROR);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    cmd.cdw10 = htole32((15u << 16) | 0x70);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_LOG_PAGE | NVME_DNR);
    cmd.cdw10 = htole32((15u << 16) | NVME_LOG_SMART);
    cmd.cdw12 = htole32(4096);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==,
                    NVME_INVALID_FIELD | NVME_DNR);

    /* Abort completes ("not aborted"). */
    cmd = (NvmeCmd) { .opcode = NVME_ADM_ABORT };
    g_assert_cmphex(dev_admin(d, &cmd, &result), ==, NVME_SUCCESS);
    g_assert_cmpuint(result & 1, ==, 1);
}

static void dev_admin_no_completion(Dev *d, NvmeCmd *cmd)
{
    NvmeCqe cqe;

    memcpy(d->g.mem + ASQ_OFF + d->asq_tail * NVME_SQES, cmd, sizeof(*cmd));
    d->asq_tail = nvme_q_next(d->asq_tail, ADMIN_QSIZE);
    dev_ring(d, 0, d->asq_tail);
    g_assert_false(dev_cqe(d, ACQ_OFF, &d->acq_head, &d->acq_phase,
                           ADMIN_QSIZE, &cqe));
}

static void test_ctrl_aer_held_and_reset(Dev *d, gconstpointer data)
{
    NvmeCmd aer = { .opcode = NVME_ADM_ASYNC_EVENT };

    dev_enable(d);
    /* AERL+1 AERs are held: no completion appears. */
    for (unsigned i = 0; i <= NVME_AERL; i++) {
        dev_admin_no_completion(d, &aer);
    }
    /* One more exceeds the limit and completes with an error. */
    g_assert_cmphex(dev_admin(d, &aer, NULL), ==,
                    NVME_AER_LIMIT_EXCEEDED | NVME_DNR);

    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);
    /* Disable: queues and held AERs go; re-enable starts clean. */
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 0, 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
    g_assert_false(d->n.sq[1].valid);
    g_assert_false(d->n.cq[1].valid);
    memset(d->g.mem, 0, 0x4000);
    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);
    for (unsigned i = 0; i <= NVME_AERL; i++) {
        dev_admin_no_completion(d, &aer);
    }
    g_assert_cmphex(dev_admin(d, &aer, NULL), ==,
                    NVME_AER_LIMIT_EXCEEDED | NVME_DNR);
}

static void test_ctrl_shutdown(Dev *d, gconstpointer data)
{
    dev_enable(d);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC,
                        NVME_CC_EN | (6 << 16) | (4 << 20) | (1 << 14), 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4) &
                    NVME_CSTS_SHST_MASK, ==, NVME_CSTS_SHST_DONE);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 0, 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
}

static void test_io_write_read(Dev *d, gconstpointer data)
{
    uint8_t *buf = d->g.mem + DATA_OFF;
    uint64_t list = GUEST_BASE + PRP_LIST_OFF;
    NvmeCmd cmd;

    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);

    /* 16 KiB at LBA 8 from an unaligned PRP1 + list. */
    for (unsigned i = 0; i < 4 * 4096; i++) {
        buf[0x100 + i] = i * 7 + 3;
    }
    for (unsigned i = 0; i < 4; i++) {
        stq_le_p(d->g.mem + PRP_LIST_OFF + 8 * i,
                 GUEST_BASE + DATA_OFF + 0x1000 * (i + 1));
    }
    cmd = (NvmeCmd) { .opcode = NVME_CMD_WRITE, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF + 0x100),
                      .prp2 = htole64(list), .cdw10 = htole32(8),
                      .cdw12 = htole32(31) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    g_assert_cmpuint(d->irqs[1], >=, 1);

    memset(d->g.mem + DATA_OFF + 0x40000, 0xee, 0x8000);
    cmd = (NvmeCmd) { .opcode = NVME_CMD_READ, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF + 0x40000),
                      .prp2 = htole64(GUEST_BASE + DATA_OFF + 0x41000),
                      .cdw10 = htole32(8), .cdw12 = htole32(15) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    g_assert_cmpmem(d->g.mem + DATA_OFF + 0x40000, 8192, buf + 0x100, 8192);
    g_assert_cmpuint(d->g.mem[DATA_OFF + 0x42000], ==, 0xee);

    /* Write Zeroes over the first block, then read it back. */
    cmd = (NvmeCmd) { .opcode = NVME_CMD_WRITE_ZEROES, .nsid = htole32(1),
                      .cdw10 = htole32(8), .cdw12 = 0 };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    cmd = (NvmeCmd) { .opcode = NVME_CMD_READ, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF + 0x40000),
                      .cdw10 = htole32(8), .cdw12 = htole32(1) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    for (unsigned i = 0; i < 512; i++) {
        g_assert_cmpuint(d->g.mem[DATA_OFF + 0x40000 + i], ==, 0);
    }
    g_assert_cmpmem(d->g.mem + DATA_OFF + 0x40200, 512, buf + 0x300, 512);

    cmd = (NvmeCmd) { .opcode = NVME_CMD_FLUSH, .nsid = htole32(1) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
}

static void test_io_errors(Dev *d, gconstpointer data)
{
    NvmeCmd cmd;

    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);
    /* Last LBA is 2047: 2047 + 2 blocks is out of range. */
    cmd = (NvmeCmd) { .opcode = NVME_CMD_READ, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF),
                      .cdw10 = htole32(2047), .cdw12 = htole32(1) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_LBA_RANGE | NVME_DNR);
    cmd.cdw10 = htole32(0);
    cmd.cdw11 = htole32(1);     /* SLBA 2^32 */
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_LBA_RANGE | NVME_DNR);
    cmd.cdw11 = 0;
    cmd.cdw12 = htole32(1023);  /* 512 KiB > MDTS */
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_INVALID_FIELD | NVME_DNR);
    cmd.cdw12 = 0;
    cmd.nsid = htole32(3);
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_INVALID_NSID | NVME_DNR);
    cmd.nsid = htole32(1);
    cmd.prp1 = htole64(0x10);   /* not guest memory */
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_DATA_TRANSFER_ERROR | NVME_DNR);
    cmd.opcode = 0x55;
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_INVALID_OPCODE | NVME_DNR);
}

static void test_io_cq_phase_and_backpressure(Dev *d, gconstpointer data)
{
    NvmeCmd flush = { .opcode = NVME_CMD_FLUSH, .nsid = htole32(1) };
    NvmeCqe cqe;
    unsigned irqs;

    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 4), ==, NVME_SUCCESS);

    /* Ten commands through a 4-entry CQ: the phase flips on each wrap. */
    for (unsigned i = 0; i < 10; i++) {
        bool expect_phase = ((i / 4) % 2) == 0;

        dev_io_submit(d, &flush, i);
        memcpy(&cqe, d->g.mem + IOCQ_OFF + (i % 4) * NVME_CQES, sizeof(cqe));
        g_assert_cmpuint(le16toh(cqe.status) & 1, ==, expect_phase);
        g_assert_true(dev_io_reap(d, &cqe));
        g_assert_cmpuint(le16toh(cqe.cid), ==, i);
    }

    /* Three submitted, CQ head not advanced: only 3 fit (size 4). */
    for (unsigned i = 0; i < 3; i++) {
        dev_io_submit(d, &flush, 100 + i);
    }
    irqs = d->irqs[1];
    g_assert_cmpuint(d->n.cq[1].tail, ==, (d->iocq_head + 3) % 4);
    /* The host consumes without ringing: a fourth waits for the doorbell. */
    for (unsigned i = 0; i < 3; i++) {
        g_assert_true(dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase, 4,
                              &cqe));
    }
    dev_io_submit(d, &flush, 200);
    g_assert_false(dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase, 4,
                           &cqe));
    dev_ring(d, 3, d->iocq_head);
    g_assert_true(dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase, 4,
                          &cqe));
    g_assert_cmpuint(le16toh(cqe.cid), ==, 200);
    g_assert_cmpuint(d->irqs[1], >, irqs);
}

static void test_io_bad_doorbell(Dev *d, gconstpointer data)
{
    NvmeCmd flush = { .opcode = NVME_CMD_FLUSH, .nsid = htole32(1) };

    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 4), ==, NVME_SUCCESS);
    /* A tail beyond the queue is ignored; the queue keeps working. */
    dev_ring(d, 2, 9);
    dev_ring(d, 3, 77);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==,
                    NVME_CSTS_RDY);
    g_assert_cmphex(dev_io(d, &flush), ==, NVME_SUCCESS);
    /* Doorbells of queues that do not exist are harmless. */
    dev_ring(d, 8, 1);
    nvme_ctrl_doorbell_write(&d->n, NVME_DB_BASE + 4 * 500, 1);
    g_assert_cmphex(dev_io(d, &flush), ==, NVME_SUCCESS);
}

static void test_io_sq_in_unmapped_memory(Dev *d, gconstpointer data)
{
    NvmeCmd cq = {
        .opcode = NVME_ADM_CREATE_CQ, .prp1 = htole64(GUEST_BASE + IOCQ_OFF),
        .cdw10 = htole32((3u << 16) | 1), .cdw11 = htole32((1u << 16) | 3),
    };
    NvmeCmd sq = {
        .opcode = NVME_ADM_CREATE_SQ, .prp1 = htole64(0x7000000000ull),
        .cdw10 = htole32((3u << 16) | 1), .cdw11 = htole32((1u << 16) | 1),
    };

    dev_enable(d);
    g_assert_cmphex(dev_admin(d, &cq, NULL), ==, NVME_SUCCESS);
    g_assert_cmphex(dev_admin(d, &sq, NULL), ==, NVME_SUCCESS);
    /* Fetching from nowhere is a controller fatal status, not a crash. */
    dev_ring(d, 2, 1);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==,
                    NVME_CSTS_RDY | NVME_CSTS_CFS);
    nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 0, 4);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
}

/* 4 KiB logical blocks: Identify, LBA arithmetic and data all follow. */
static void test_io_4k_blocks(Dev *d, gconstpointer data)
{
    uint8_t *id = d->g.mem + DATA_OFF;
    NvmeCmd cmd = {
        .opcode = NVME_ADM_IDENTIFY, .nsid = htole32(1),
        .prp1 = htole64(GUEST_BASE + DATA_OFF),
    };

    nvme_ctrl_cleanup(&d->n);
    dev_init_ctrl(d, 4096);
    dev_enable(d);
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    g_assert_cmpuint(ldq_le_p(id + NVME_IDNS_NSZE), ==, 256);
    g_assert_cmpuint((ldl_le_p(id + NVME_IDNS_LBAF0) >> 16) & 0xff, ==, 12);
    g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);

    fill_guest(d, DATA_OFF + 0x10000, 8192, 3);
    cmd = (NvmeCmd) { .opcode = NVME_CMD_WRITE, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF + 0x10000),
                      .prp2 = htole64(GUEST_BASE + DATA_OFF + 0x11000),
                      .cdw10 = htole32(254), .cdw12 = htole32(1) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    cmd.opcode = NVME_CMD_READ;
    cmd.prp1 = htole64(GUEST_BASE + DATA_OFF + 0x20000);
    cmd.prp2 = htole64(GUEST_BASE + DATA_OFF + 0x21000);
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    g_assert_cmpmem(d->g.mem + DATA_OFF + 0x20000, 8192,
                    d->g.mem + DATA_OFF + 0x10000, 8192);
    /* The last block is 255: 255 + 2 blocks is out of range. */
    cmd.cdw10 = htole32(255);
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_LBA_RANGE | NVME_DNR);
}

/*
 * Garbage from a fixed seed through both queues: every command completes
 * with some status or the controller reports CFS; nothing crashes (run it
 * under ASan/UBSan) and the device recovers with a reset.
 */
static void test_random_commands(Dev *d, gconstpointer data)
{
    GRand *rand = g_rand_new_with_seed(0x5eed);

    for (unsigned round = 0; round < 20; round++) {
        dev_enable(d);
        g_assert_cmphex(dev_create_io_queues(d, 16), ==, NVME_SUCCESS);
        for (unsigned i = 0; i < 100; i++) {
            NvmeCmd cmd;
            uint32_t *w = (uint32_t *)&cmd;
            bool admin_q = g_rand_boolean(rand);
            NvmeCqe cqe;

            for (unsigned j = 0; j < sizeof(cmd) / 4; j++) {
                w[j] = g_rand_int(rand);
            }
            /* Keep opcodes, NSIDs and pointers plausible half the time. */
            if (g_rand_boolean(rand)) {
                cmd.opcode = g_rand_int_range(rand, 0, 0x10);
                cmd.flags = 0;
                cmd.nsid = htole32(g_rand_int_range(rand, 0, 3));
                cmd.prp1 = htole64(GUEST_BASE + DATA_OFF +
                                   (g_rand_int_range(rand, 0, 64) << 9));
                cmd.prp2 = htole64(GUEST_BASE + PRP_LIST_OFF);
                cmd.cdw12 = htole32(g_rand_int_range(rand, 0, 300));
            }
            /* Never delete the queues this loop relies on. */
            if (admin_q && (cmd.opcode == NVME_ADM_DELETE_SQ ||
                            cmd.opcode == NVME_ADM_DELETE_CQ ||
                            cmd.opcode == NVME_ADM_ASYNC_EVENT)) {
                continue;
            }
            if (admin_q) {
                memcpy(d->g.mem + ASQ_OFF + d->asq_tail * NVME_SQES, &cmd,
                       sizeof(cmd));
                d->asq_tail = nvme_q_next(d->asq_tail, ADMIN_QSIZE);
                dev_ring(d, 0, d->asq_tail);
                if (dev_cqe(d, ACQ_OFF, &d->acq_head, &d->acq_phase,
                            ADMIN_QSIZE, &cqe)) {
                    dev_ring(d, 1, d->acq_head);
                }
            } else {
                dev_io_submit(d, &cmd, i);
                if (dev_io_reap(d, &cqe)) {
                    g_assert_cmpuint(le16toh(cqe.cid), ==, i);
                }
            }
            if (nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4) &
                NVME_CSTS_CFS) {
                break;
            }
        }
        nvme_ctrl_reg_write(&d->n, NVME_REG_CC, 0, 4);
        g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
        memset(d->g.mem, 0, DATA_OFF);
    }
    g_rand_free(rand);
}

/* ---- Registers through a mapping of BAR0 ---- */

static void dev_poll_all(Dev *d)
{
    while (nvme_ctrl_poll(&d->n)) {
        continue;
    }
}

static void test_mapped_regs_published(Dev *d, gconstpointer data)
{
    uint64_t cap = nvme_ctrl_reg_read(&d->n, NVME_REG_CAP, 8);

    /* Read-only registers are in the shared page from the start. */
    g_assert_cmphex(ldq_le_p(d->bar + NVME_REG_CAP), ==, cap);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_VS), ==, NVME_VERSION_1_4);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, 0);
    /* A trapped write shows in the shared copy. */
    nvme_ctrl_reg_write(&d->n, NVME_REG_AQA, 0x00070007, 4);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_AQA), ==, 0x00070007);
    /* A mapped write shows in a trapped read, even before any poll. */
    stl_le_p(d->bar + NVME_REG_ASQ, 0xabcd0fff);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_ASQ, 4), ==,
                    0xabcd0000);
    /* ... and the masked value is published back. */
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_ASQ), ==, 0xabcd0000);
}

static void test_mapped_regs_enable_disable(Dev *d, gconstpointer data)
{
    NvmeCmd cmd = { .opcode = NVME_ADM_IDENTIFY, .cdw10 = 1 };

    d->polled = true;
    dev_enable(d);
    g_assert_true(nvme_ctrl_enabled(&d->n));
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CC) & NVME_CC_EN, ==,
                    NVME_CC_EN);
    /* The admin queue the mapped AQA/ASQ/ACQ described works. */
    cmd.prp1 = GUEST_BASE + 0x10000;
    g_assert_cmphex(dev_admin(d, &cmd, NULL), ==, NVME_SUCCESS);
    /* While enabled the admin queue base is fixed: the store is undone. */
    stl_le_p(d->bar + NVME_REG_ASQ, 0x5000);
    dev_poll_all(d);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_ASQ), ==,
                    (uint32_t)(GUEST_BASE + ASQ_OFF));
    /* Clearing CC.EN through the mapping disables, CSTS follows. */
    stl_le_p(d->bar + NVME_REG_CC, 0);
    dev_poll_all(d);
    g_assert_false(nvme_ctrl_enabled(&d->n));
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, 0);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_CSTS, 4), ==, 0);
    /* And enabling again through the mapping works a second time. */
    dev_enable(d);
    g_assert_true(nvme_ctrl_enabled(&d->n));
}

/*
 * A host resetting after CFS need not wait for RDY: one poll can find its
 * EN=0 store together with the admin queue stores that followed it (on a
 * weakly ordered or emulated host it often does).  Those must not be
 * dropped as writes to an enabled controller.
 */
static void test_mapped_regs_reset_in_one_pass(Dev *d, gconstpointer data)
{
    uint32_t cc = NVME_CC_EN | (6 << 16) | (4 << 20);

    d->polled = true;
    dev_enable(d);
    /* A refused enable: an admin queue of one entry sets CFS. */
    stl_le_p(d->bar + NVME_REG_CC, 0);
    dev_poll_all(d);
    stl_le_p(d->bar + NVME_REG_AQA, 0);
    stl_le_p(d->bar + NVME_REG_CC, cc);
    dev_poll_all(d);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, NVME_CSTS_CFS);
    /* The reset: EN=0 and the new AQA in one pass, then EN=1 in the next. */
    stl_le_p(d->bar + NVME_REG_CC, 0);
    stl_le_p(d->bar + NVME_REG_AQA,
             ((ADMIN_QSIZE - 1) << 16) | (ADMIN_QSIZE - 1));
    nvme_ctrl_poll(&d->n);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_AQA, 4), ==,
                    ((ADMIN_QSIZE - 1) << 16) | (ADMIN_QSIZE - 1));
    stl_le_p(d->bar + NVME_REG_CC, cc);
    dev_poll_all(d);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, NVME_CSTS_RDY);
    g_assert_true(nvme_ctrl_enabled(&d->n));
}

static void test_mapped_regs_shutdown(Dev *d, gconstpointer data)
{
    d->polled = true;
    dev_enable(d);
    stl_le_p(d->bar + NVME_REG_CC, NVME_CC_EN | (6 << 16) | (4 << 20) |
             (1 << 14));
    dev_poll_all(d);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS) & NVME_CSTS_SHST_MASK,
                    ==, NVME_CSTS_SHST_DONE);
}

static void test_mapped_regs_readonly_repaired(Dev *d, gconstpointer data)
{
    uint64_t cap = nvme_ctrl_reg_read(&d->n, NVME_REG_CAP, 8);

    d->polled = true;
    dev_enable(d);
    stq_le_p(d->bar + NVME_REG_CAP, 0);
    stl_le_p(d->bar + NVME_REG_VS, 0xdeadbeef);
    stl_le_p(d->bar + NVME_REG_CSTS, 0);
    stl_le_p(d->bar + NVME_REG_NSSR, 0x4e564d65);
    dev_poll_all(d);
    g_assert_cmphex(ldq_le_p(d->bar + NVME_REG_CAP), ==, cap);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_VS), ==, NVME_VERSION_1_4);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_CSTS), ==, NVME_CSTS_RDY);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_NSSR), ==, 0);
    /* Scribbling CSTS did not disturb the controller. */
    g_assert_true(nvme_ctrl_enabled(&d->n));
    /* Nothing left to act on: the next pass finds no work. */
    g_assert_false(nvme_ctrl_poll(&d->n));
}

static void test_mapped_regs_intms_intmc(Dev *d, gconstpointer data)
{
    /* Set through the mapping, read trapped; the shared copy shows 0. */
    stl_le_p(d->bar + NVME_REG_INTMS, 1);
    dev_poll_all(d);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_INTMS, 4), ==, 1);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_INTMS), ==, 0);
    /* Clearing the bit just set is seen although the mask reads 1. */
    stl_le_p(d->bar + NVME_REG_INTMC, 1);
    dev_poll_all(d);
    g_assert_cmphex(nvme_ctrl_reg_read(&d->n, NVME_REG_INTMC, 4), ==, 0);
    g_assert_cmphex(ldl_le_p(d->bar + NVME_REG_INTMC), ==, 0);
}

static void test_mapped_regs_fresh_bar(Dev *d, gconstpointer data)
{
    g_autofree uint8_t *bar2 = g_malloc0(sizeof(d->bar));

    /* A new client's memfd gets the registers at once. */
    nvme_ctrl_set_bar(&d->n, bar2);
    g_assert_cmphex(ldl_le_p(bar2 + NVME_REG_VS), ==, NVME_VERSION_1_4);
    g_assert_cmphex(ldq_le_p(bar2 + NVME_REG_CAP), ==,
                    nvme_ctrl_reg_read(&d->n, NVME_REG_CAP, 8));
    g_assert_false(nvme_ctrl_poll(&d->n));
    nvme_ctrl_set_bar(&d->n, d->bar);
}

#define ADD_DEV_TEST(path, fn) do {                                         \
        g_test_add("/nvme/trapped/" path, Dev, NULL, dev_setup, fn,          \
                   dev_teardown);                                           \
        g_test_add("/nvme/polled/" path, Dev, "polled", dev_setup, fn,       \
                   dev_teardown);                                           \
    } while (0)


/* ---- Migration: pause, save, load elsewhere, resume ---- */

/*
 * A controller with I/O queues, data in its namespace, a held AER and a
 * command the guest submitted while it was paused moves to a second
 * controller over fresh guest memory (a copy, as RAM migration makes):
 * the AER stays held, the pending command runs there after resume and
 * completes in the right CQ slot with an interrupt, the data reads back.
 * Every truncation of the state, stray bytes and another geometry are
 * refused without touching the destination.
 */
static void test_ctrl_migrate(Dev *d, gconstpointer data)
{
    g_autoptr(GByteArray) st = g_byte_array_new();
    Dev d2 = { 0 };
    NvmeCmd cmd, aer = { .opcode = NVME_ADM_ASYNC_EVENT };
    NvmeCqe cqe;
    Error *err = NULL;
    uint32_t csts;

    dev_enable(d);
    g_assert_cmphex(dev_create_io_queues(d, 8), ==, NVME_SUCCESS);
    fill_guest(d, DATA_OFF, 4096, 5);
    cmd = (NvmeCmd) { .opcode = NVME_CMD_WRITE, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF),
                      .cdw10 = htole32(16), .cdw12 = htole32(7) };
    g_assert_cmphex(dev_io(d, &cmd), ==, NVME_SUCCESS);
    /* An AER: held, no completion. */
    aer.cid = htole16(0x4242);
    memcpy(d->g.mem + ASQ_OFF + d->asq_tail * NVME_SQES, &aer, sizeof(aer));
    d->asq_tail = nvme_q_next(d->asq_tail, ADMIN_QSIZE);
    dev_ring(d, 0, d->asq_tail);
    g_assert_cmpuint(d->n.aers_held, ==, 1);

    nvme_ctrl_pause(&d->n);
    /* Submitted while paused: stored, not run. */
    memset(d->g.mem + DATA_OFF + 0x10000, 0, 4096);
    cmd = (NvmeCmd) { .opcode = NVME_CMD_READ, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_BASE + DATA_OFF + 0x10000),
                      .cdw10 = htole32(16), .cdw12 = htole32(7),
                      .cid = htole16(9) };
    memcpy(d->g.mem + IOSQ_OFF + d->iosq_tail * NVME_SQES, &cmd,
           sizeof(cmd));
    d->iosq_tail = nvme_q_next(d->iosq_tail, d->io_qsize);
    stl_le_p(d->bar + NVME_DB_BASE + 4 * 2, d->iosq_tail);
    g_assert_false(nvme_ctrl_poll(&d->n));
    g_assert_false(dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase,
                           d->io_qsize, &cqe));
    nvme_ctrl_save(&d->n, st);

    dev_setup(&d2, data);
    memcpy(d2.g.mem, d->g.mem, GUEST_SIZE);
    nvme_ctrl_pause(&d2.n);
    csts = nvme_ctrl_reg_read(&d2.n, NVME_REG_CSTS, 4);
    for (size_t len = 0; len < st->len; len += 1 + len / 16) {
        g_assert_false(nvme_ctrl_load(&d2.n, st->data, len, &err));
        error_free_or_abort(&err);
    }
    g_byte_array_append(st, (const guint8 *)"x", 1);
    g_assert_false(nvme_ctrl_load(&d2.n, st->data, st->len, &err));
    error_free_or_abort(&err);
    g_byte_array_set_size(st, st->len - 1);
    g_assert_cmphex(ldl_le_p(d2.bar + NVME_REG_CSTS), ==, csts);
    g_assert_cmpuint(d2.n.qid_bound, ==, 0);

    g_assert_true(nvme_ctrl_load(&d2.n, st->data, st->len, &error_abort));
    nvme_ctrl_resume(&d2.n);
    g_assert_cmpuint(d2.n.aers_held, ==, 1);
    g_assert_cmphex(ldl_le_p(d2.bar + NVME_REG_CSTS), ==, NVME_CSTS_RDY);
    /* The paused submission runs on the destination now. */
    while (nvme_ctrl_poll(&d2.n)) {
        continue;
    }
    d2.polled = d->polled;
    d2.io_qsize = d->io_qsize;
    d2.iosq_tail = d->iosq_tail;
    d2.iocq_head = d->iocq_head;
    d2.iocq_phase = d->iocq_phase;
    d2.asq_tail = d->asq_tail;
    d2.acq_head = d->acq_head;
    d2.acq_phase = d->acq_phase;
    g_assert_true(dev_io_reap(&d2, &cqe));
    g_assert_cmpuint(le16toh(cqe.cid), ==, 9);
    g_assert_cmphex(le16toh(cqe.status) >> 1, ==, NVME_SUCCESS);
    g_assert_cmpuint(d2.irqs[1], >=, 1);
    g_assert_true(!memcmp(d2.g.mem + DATA_OFF + 0x10000,
                          d->g.mem + DATA_OFF, 4096));
    /* The source did not run it. */
    g_assert_false(dev_cqe(d, IOCQ_OFF, &d->iocq_head, &d->iocq_phase,
                           d->io_qsize, &cqe));
    /* And the queues go on: another command. */
    cmd.cid = 0;
    g_assert_cmphex(dev_io(&d2, &cmd), ==, NVME_SUCCESS);
    dev_teardown(&d2, data);

    /* Another geometry (4 KiB blocks) refuses the state. */
    memset(&d2, 0, sizeof(d2));
    d2.g.mem = g_malloc0(GUEST_SIZE);
    nvme_options_init(&d2.opts);
    d2.opts.backend = NVME_BACKEND_RAM;
    d2.opts.size = 1024 * 1024;
    d2.be = nvme_backend_new(&d2.opts, &error_abort);
    dev_init_ctrl(&d2, 4096);
    g_assert_false(nvme_ctrl_load(&d2.n, st->data, st->len, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "geometry"));
    error_free(err);
    dev_teardown(&d2, data);
    nvme_ctrl_resume(&d->n);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qemu_set_log_guest_errors(false);

    g_test_add_func("/nvme/queue/wrap", test_queue_wrap);
    g_test_add_func("/nvme/queue/full-empty", test_queue_full_empty);
    g_test_add("/nvme/prp/single-and-two-pages", PrpFixture, NULL,
               prp_setup, test_prp_single_and_two_pages, prp_teardown);
    g_test_add("/nvme/prp/list", PrpFixture, NULL, prp_setup, test_prp_list,
               prp_teardown);
    g_test_add("/nvme/prp/list-chain", PrpFixture, NULL, prp_setup,
               test_prp_list_chain, prp_teardown);
    g_test_add("/nvme/prp/bad-pointers", PrpFixture, NULL, prp_setup,
               test_prp_bad_pointers, prp_teardown);
    g_test_add("/nvme/prp/message-only-memory", PrpFixture, NULL, prp_setup,
               test_prp_message_only_memory, prp_teardown);
    g_test_add_func("/nvme/layout/default-bar4", test_layout_default);
    g_test_add_func("/nvme/layout/table-on-doorbell-page",
                    test_layout_table_on_doorbell_page);
    g_test_add_func("/nvme/layout/pba-on-doorbell-page",
                    test_layout_pba_on_doorbell_page);
    g_test_add_func("/nvme/layout/bar0-grows-and-page-size",
                    test_layout_grows_bar0);
    g_test_add_func("/nvme/layout/errors-name-the-option", test_layout_errors);
    g_test_add_func("/nvme/options/socket-required",
                    test_options_required_socket);
    g_test_add_func("/nvme/options/missing-value-names-the-option",
                    test_options_missing_value);
    g_test_add("/nvme/ctrl/registers", Dev, NULL, dev_setup,
               test_ctrl_registers, dev_teardown);
    g_test_add("/nvme/ctrl/migrate-trapped", Dev, NULL, dev_setup,
               test_ctrl_migrate, dev_teardown);
    g_test_add("/nvme/ctrl/migrate-polled", Dev, "polled", dev_setup,
               test_ctrl_migrate, dev_teardown);
    g_test_add("/nvme/ctrl/enable-bad-config-sets-cfs", Dev, NULL, dev_setup,
               test_ctrl_enable_bad_config, dev_teardown);
    g_test_add("/nvme/ctrl/shutdown-completes", Dev, NULL, dev_setup,
               test_ctrl_shutdown, dev_teardown);
    g_test_add("/nvme/mapped-regs/published-and-consistent", Dev, NULL,
               dev_setup, test_mapped_regs_published, dev_teardown);
    g_test_add("/nvme/mapped-regs/enable-disable", Dev, NULL, dev_setup,
               test_mapped_regs_enable_disable, dev_teardown);
    g_test_add("/nvme/mapped-regs/reset-after-cfs-in-one-pass", Dev, NULL,
               dev_setup, test_mapped_regs_reset_in_one_pass, dev_teardown);
    g_test_add("/nvme/mapped-regs/shutdown-status-visible", Dev, NULL,
               dev_setup, test_mapped_regs_shutdown, dev_teardown);
    g_test_add("/nvme/mapped-regs/readonly-repaired", Dev, NULL, dev_setup,
               test_mapped_regs_readonly_repaired, dev_teardown);
    g_test_add("/nvme/mapped-regs/intms-intmc-writes-seen", Dev, NULL,
               dev_setup, test_mapped_regs_intms_intmc, dev_teardown);
    g_test_add("/nvme/mapped-regs/fresh-bar-published", Dev, NULL,
               dev_setup, test_mapped_regs_fresh_bar, dev_teardown);
    ADD_DEV_TEST("identify-layouts", test_ctrl_identify);
    ADD_DEV_TEST("admin-status-codes", test_ctrl_admin_errors);
    ADD_DEV_TEST("aer-held-until-reset", test_ctrl_aer_held_and_reset);
    ADD_DEV_TEST("io-write-read", test_io_write_read);
    ADD_DEV_TEST("io-status-codes", test_io_errors);
    ADD_DEV_TEST("cq-phase-and-backpressure",
                 test_io_cq_phase_and_backpressure);
    ADD_DEV_TEST("bad-doorbells-ignored", test_io_bad_doorbell);
    ADD_DEV_TEST("io-4k-blocks", test_io_4k_blocks);
    ADD_DEV_TEST("random-commands-never-crash", test_random_commands);
    ADD_DEV_TEST("sq-outside-guest-memory-is-fatal",
                 test_io_sq_in_unmapped_memory);
    return g_test_run();
}
