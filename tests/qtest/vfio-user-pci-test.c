/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci against the in-tree vfio-user-nvme server.
 *
 * Every test starts its own server on a temporary socket and drives the
 * NVMe controller through the guest view (config space, BAR0, MSI-X
 * vectors written into RAM).  x-query-vfio tells which pages trap and how
 * each doorbell write was served; under qtest it counts exactly what KVM
 * would, so the counters are asserted exactly.
 */
#include "qemu/osdep.h"
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/pci_regs.h>
#include "config-host.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/nvme.h"
#include "libqos/vfio-query.h"

#define NVME_DEVFN QPCI_DEVFN(4, 0)
#define RAM_START 0x200000ULL
#define RAM_END 0x3000000ULL
#define MSI_TARGET 0x3800000ULL
#define MSI_DATA_BASE 0x4200
#define IO_VECTOR 1
#define DOORBELL_PAGE 0x1000
#define NR_IOS 4
#define WAIT_US (10 * G_USEC_PER_SEC)

/* The doorbell-page layout of the issue: table and PBA on page 0x1000. */
#define LAYOUT_DB_PAGE "--msix-bar 0 --msix-table-offset 0x1800 " \
                       "--msix-pba-offset 0x1c00"

typedef struct Ctx {
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QNvme nvme;
} Ctx;

typedef struct Counts {
    int64_t fwd_reads, fwd_writes, served_reads, served_writes;
} Counts;

static void ctx_start(Ctx *c, const char *srv_args, const char *dev_opts)
{
    memset(c, 0, sizeof(*c));
    qnvme_server_start(&c->srv, srv_args);
    c->qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=nvme0,"
                         "addr=04.0,socket=%s%s", c->srv.sock,
                         dev_opts ? dev_opts : "");
    c->bus = qpci_new_pc(c->qts);
    c->dev = qpci_device_find(c->bus, NVME_DEVFN);
    g_assert_nonnull(c->dev);
    qnvme_init(&c->nvme, c->dev, RAM_START, RAM_END);
}

static void ctx_stop(Ctx *c)
{
    qpci_device_free(c->dev);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    qnvme_server_stop(&c->srv);
}

/* ---- x-query-vfio ---- */

static bool bar0_traps(Ctx *c, uint64_t off)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    bool ret = qvfio_bar_covers(qvfio_query_bar(dev, 0), "trapped", off);

    json_object_unref(dev);
    return ret;
}

static bool bar0_maps(Ctx *c, uint64_t off)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    bool ret = qvfio_bar_covers(qvfio_query_bar(dev, 0), "mapped", off);

    json_object_unref(dev);
    return ret;
}

static guint bar0_nr_trapped(Ctx *c)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    guint n = json_array_get_length(json_object_get_array_member(
                                        qvfio_query_bar(dev, 0), "trapped"));

    json_object_unref(dev);
    return n;
}

static Counts bar0_counts(Ctx *c)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    JsonObject *b = qvfio_query_bar(dev, 0);
    Counts n = {
        json_object_get_int_member(b, "forwarded-reads"),
        json_object_get_int_member(b, "forwarded-writes"),
        json_object_get_int_member(b, "mmap-served-reads"),
        json_object_get_int_member(b, "mmap-served-writes"),
    };

    json_object_unref(dev);
    return n;
}

static int64_t msix_field(Ctx *c, const char *key)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    JsonObject *m = json_object_get_object_member(dev, "msix");
    int64_t v = json_object_get_int_member(m, key);

    json_object_unref(dev);
    return v;
}

static bool msix_flag(Ctx *c, const char *key)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    JsonObject *m = json_object_get_object_member(dev, "msix");
    bool v = json_object_get_boolean_member(m, key);

    json_object_unref(dev);
    return v;
}

/* ---- NVMe through the guest view ---- */

static void setup_msix(Ctx *c)
{
    qpci_msix_enable(c->dev);
    for (int v = 0; v <= IO_VECTOR; v++) {
        qpci_msix_set_vector(c->dev, v, MSI_TARGET + 4 * v,
                             MSI_DATA_BASE + v);
        qpci_msix_mask_vector(c->dev, v, false);
    }
}

static void bring_up(Ctx *c)
{
    uint64_t id;

    setup_msix(c);
    id = qnvme_enable_identify(&c->nvme);
    /* Identify's PCI vendor id matches config space. */
    g_assert_cmphex(qtest_readw(c->qts, id), ==,
                    qpci_config_readw(c->dev, PCI_VENDOR_ID));
    g_assert_true(qnvme_create_io_queues(&c->nvme, 16, IO_VECTOR));
}

static bool wait_ram(Ctx *c, uint64_t addr, uint32_t val)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (qtest_readl(c->qts, addr) != val) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    return true;
}

/* Writes then reads back @n 4 KiB blocks; 2 doorbell writes per I/O. */
static void do_ios(Ctx *c, int n, bool check_irq)
{
    uint64_t wbuf = qnvme_alloc(&c->nvme, 4096);
    uint64_t rbuf = qnvme_alloc(&c->nvme, 4096);
    uint8_t pattern[4096], back[4096];
    QNvmeCqe cqe;

    for (int i = 0; i < n; i++) {
        bool write = !(i & 1);

        if (write) {
            for (size_t k = 0; k < sizeof(pattern); k++) {
                pattern[k] = (uint8_t)(k * 7 + i * 13);
            }
            qtest_memwrite(c->qts, wbuf, pattern, sizeof(pattern));
        } else {
            qtest_memset(c->qts, rbuf, 0, sizeof(back));
        }
        qtest_writel(c->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        g_assert_true(qnvme_rw(&c->nvme, write, 8 * (i / 2), 8,
                               write ? wbuf : rbuf, &cqe));
        g_assert_cmphex(cqe.status, ==, 0);
        if (!write) {
            qtest_memread(c->qts, rbuf, back, sizeof(back));
            g_assert_cmpmem(back, sizeof(back), pattern, sizeof(pattern));
        }
        if (check_irq) {
            g_assert_true(wait_ram(c, MSI_TARGET + 4 * IO_VECTOR,
                                   MSI_DATA_BASE + IO_VECTOR));
        }
    }
}

/* ---- tests ---- */

static void test_end_to_end(void)
{
    Ctx c;
    Counts n;

    ctx_start(&c, NULL, NULL);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmphex(qpci_config_readl(c.dev, PCI_CLASS_REVISION) >> 8, ==,
                    0x010802);
    /* The BARs are virtual: sizing works and the device's default MSI-X
     * BAR (4) holds the table. */
    g_assert_cmphex(qpci_bar_size(c.dev, 0), ==, 0x4000);
    bring_up(&c);
    g_assert_cmpint(c.dev->msix_table_bar, ==, 4);
    do_ios(&c, 2 * NR_IOS, true);
    /*
     * Without MSI-X in BAR0 the server offers it whole, as Linux does: no
     * page traps and nothing was counted, registers included.
     */
    g_assert_true(bar0_maps(&c, 0));
    g_assert_cmpint(bar0_nr_trapped(&c), ==, 0);
    n = bar0_counts(&c);
    g_assert_cmpint(n.served_writes + n.served_reads + n.fwd_writes +
                    n.fwd_reads, ==, 0);
    ctx_stop(&c);
}

static void test_db_page_mmap_served(void)
{
    Ctx c;
    Counts a, b;

    ctx_start(&c, LAYOUT_DB_PAGE, NULL);
    bring_up(&c);
    g_assert_cmpint(c.dev->msix_table_bar, ==, 0);
    g_assert_cmphex(c.dev->msix_table_off, ==, 0x1800);
    /* Mapped, but the table overlay makes the page exit. */
    g_assert_true(bar0_maps(&c, DOORBELL_PAGE));
    g_assert_true(bar0_traps(&c, DOORBELL_PAGE));
    /* The register page is mapped too, and only the table's page traps. */
    g_assert_true(bar0_maps(&c, 0));
    g_assert_false(bar0_traps(&c, 0));
    g_assert_false(bar0_traps(&c, 0x2000));
    g_assert_cmpint(bar0_nr_trapped(&c), ==, 1);
    g_assert_cmpint(msix_field(&c, "table-accesses"), >, 0);
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 2 * NR_IOS);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 0);
    g_assert_cmpint(b.fwd_reads - a.fwd_reads, ==, 0);
    ctx_stop(&c);
}

static void test_hot_page_warning(void)
{
    Ctx c;
    JsonObject *dev, *hot;
    JsonArray *pages;
    uint32_t db = QNVME_DOORBELL_BASE + 3 * 4;   /* I/O CQ 1 head */
    const char *err, *hint = "x-msix-relocation=auto";

    ctx_start(&c, LAYOUT_DB_PAGE, NULL);
    bring_up(&c);
    do_ios(&c, 2, true);
    /* Rewriting the current CQ head is harmless, and each write exits. */
    for (int i = 0; i < 1100; i++) {
        qpci_io_writel(c.dev, c.nvme.bar0, db, c.nvme.io.cq_head);
    }
    dev = qvfio_query_device(c.qts);
    pages = json_object_get_array_member(qvfio_query_bar(dev, 0), "hot-pages");
    g_assert_cmpint(json_array_get_length(pages), >=, 1);
    hot = json_array_get_object_element(pages, 0);
    g_assert_cmphex(json_object_get_int_member(hot, "offset"), ==,
                    DOORBELL_PAGE);
    g_assert_cmpint(json_object_get_int_member(hot, "accesses"), >=, 1100);
    json_object_unref(dev);
    do_ios(&c, 2, true);
    /* Said once (warned before the replies we got), naming the option. */
    err = qtest_get_stderr(c.qts);
    g_assert_nonnull(strstr(err, hint));
    g_assert_null(strstr(strstr(err, hint) + 1, hint));
    g_assert_nonnull(strstr(err, "page 0x1000"));
    ctx_stop(&c);
}

static void test_db_page_no_cap(void)
{
    Ctx c;
    Counts a, b;

    ctx_start(&c, LAYOUT_DB_PAGE " --no-msix-mappable", NULL);
    bring_up(&c);
    /* As Linux: only the table's page is withheld, registers are mapped. */
    g_assert_false(bar0_maps(&c, DOORBELL_PAGE));
    g_assert_true(bar0_traps(&c, DOORBELL_PAGE));
    g_assert_true(bar0_maps(&c, 0));
    g_assert_false(bar0_traps(&c, 0));
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 2 * NR_IOS);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 0);
    ctx_stop(&c);
}

static void test_relocation_auto(void)
{
    Ctx c;
    Counts a, b;

    ctx_start(&c, LAYOUT_DB_PAGE, ",x-msix-relocation=auto");
    bring_up(&c);
    /* The guest finds the table in another BAR. */
    g_assert_cmpint(c.dev->msix_table_bar, !=, 0);
    g_assert_true(msix_flag(&c, "relocated"));
    g_assert_cmpint(msix_field(&c, "bar"), ==, c.dev->msix_table_bar);
    /* BAR0 has no trapped pages at all: registers included. */
    g_assert_true(bar0_maps(&c, 0));
    g_assert_true(bar0_maps(&c, DOORBELL_PAGE));
    g_assert_cmpint(bar0_nr_trapped(&c), ==, 0);
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 0);
    g_assert_cmpint(b.served_reads - a.served_reads, ==, 0);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 0);
    g_assert_cmpint(b.fwd_reads - a.fwd_reads, ==, 0);
    /* Nothing of BAR0 ever reached Conduit, bring-up included. */
    g_assert_cmpint(b.served_writes + b.served_reads + b.fwd_writes +
                    b.fwd_reads, ==, 0);
    ctx_stop(&c);
}

static void test_relocation_refused(void)
{
    g_autofree char *err = NULL;
    g_autofree char *args = NULL;
    QNvmeServer srv;
    int status;

    /* BAR1 is the upper half of the 64-bit BAR0. */
    qnvme_server_start(&srv, NULL);
    args = g_strdup_printf("-M pc -accel qtest -display none -device "
                           "vfio-user-pci,socket=%s,x-msix-relocation=bar1",
                           srv.sock);
    status = qtest_run_expect_fail(args, NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "x-msix-relocation"));
    g_assert_nonnull(strstr(err, "upper half"));
    qnvme_server_stop(&srv);
}

static void test_64k_pages(gconstpointer data)
{
    bool cap = GPOINTER_TO_INT(data);
    g_autofree char *srv = g_strdup_printf(
        "--msix-bar 0 --msix-table-offset 0x3000 --msix-pba-offset 0x3800"
        "%s", cap ? "" : " --no-msix-mappable");
    Ctx c;
    Counts a, b;
    JsonObject *dev;
    JsonArray *trapped;

    ctx_start(&c, srv, ",x-host-page-size=65536");
    dev = qvfio_query_device(c.qts);
    g_assert_cmpint(json_object_get_int_member(dev, "host-page-size"), ==,
                    65536);
    json_object_unref(dev);
    bring_up(&c);
    /*
     * The whole 16 KiB BAR0 lies in one 64 KiB page.  With MSIX_MAPPABLE
     * the server offers all of BAR0, so it is mapped, but the table
     * overlay makes its one page exit: doorbells are served through the
     * mapping.  Without it the server leaves out the 4 KiB page holding
     * the table, no whole 64 KiB page remains, nothing is mapped and
     * doorbells are forwarded.
     */
    dev = qvfio_query_device(c.qts);
    trapped = json_object_get_array_member(qvfio_query_bar(dev, 0), "trapped");
    g_assert_cmpint(json_array_get_length(trapped), ==, 1);
    g_assert_cmphex(json_object_get_int_member(
                        json_array_get_object_element(trapped, 0), "offset"),
                    ==, 0);
    g_assert_cmpint(json_array_get_length(json_object_get_array_member(
                        qvfio_query_bar(dev, 0), "mapped")), ==, cap ? 1 : 0);
    json_object_unref(dev);
    g_assert_cmpint(bar0_maps(&c, 0), ==, cap);
    g_assert_cmpint(bar0_maps(&c, DOORBELL_PAGE), ==, cap);
    g_assert_true(bar0_traps(&c, 0));
    g_assert_true(bar0_traps(&c, DOORBELL_PAGE));
    g_assert_true(bar0_traps(&c, 0x3ffc));
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    if (cap) {
        g_assert_cmpint(b.served_writes - a.served_writes, ==, 2 * NR_IOS);
        g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 0);
        g_assert_cmpint(b.fwd_reads - a.fwd_reads, ==, 0);
    } else {
        g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 2 * NR_IOS);
        g_assert_cmpint(b.served_writes - a.served_writes, ==, 0);
    }
    ctx_stop(&c);
}

#define LAYOUT_PBA_DB_PAGE "--msix-bar 0 --msix-table-offset 0x3000 " \
                           "--msix-pba-offset 0x1c00"

static bool wait_pending(Ctx *c, uint16_t vector)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (!msix_flag(c, "pba-emulated")) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    return qpci_msix_pending(c->dev, vector);
}

static void test_lazy_pba(void)
{
    Ctx c;
    Counts a, b;
    QNvmeCqe cqe;
    uint64_t buf;

    ctx_start(&c, LAYOUT_PBA_DB_PAGE, NULL);
    bring_up(&c);
    buf = qnvme_alloc(&c.nvme, 4096);
    /* Nothing pending: no PBA overlay, the doorbell page is a memslot. */
    g_assert_false(msix_flag(&c, "pba-emulated"));
    g_assert_true(bar0_maps(&c, DOORBELL_PAGE));
    g_assert_false(bar0_traps(&c, DOORBELL_PAGE));
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 0);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 0);

    /* A masked vector fires: pending bit, overlay on, page trapped. */
    qpci_msix_mask_vector(c.dev, IO_VECTOR, true);
    qtest_writel(c.qts, MSI_TARGET + 4 * IO_VECTOR, 0);
    g_assert_true(qnvme_rw(&c.nvme, false, 0, 8, buf, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
    g_assert_true(wait_pending(&c, IO_VECTOR));
    g_assert_true(bar0_traps(&c, DOORBELL_PAGE));
    g_assert_cmpint(msix_field(&c, "pba-accesses"), >, 0);
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET + 4 * IO_VECTOR), ==, 0);

    /* Unmask: delivered, bit clear, overlay off, page untrapped again. */
    qpci_msix_mask_vector(c.dev, IO_VECTOR, false);
    g_assert_true(wait_ram(&c, MSI_TARGET + 4 * IO_VECTOR,
                           MSI_DATA_BASE + IO_VECTOR));
    g_assert_false(msix_flag(&c, "pba-emulated"));
    g_assert_false(bar0_traps(&c, DOORBELL_PAGE));
    g_assert_false(qpci_msix_pending(c.dev, IO_VECTOR));
    ctx_stop(&c);
}

static void test_lazy_pba_off(void)
{
    Ctx c;
    Counts a, b;

    ctx_start(&c, LAYOUT_PBA_DB_PAGE, ",x-lazy-pba=off");
    bring_up(&c);
    g_assert_true(msix_flag(&c, "pba-emulated"));
    g_assert_true(bar0_traps(&c, DOORBELL_PAGE));
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 2 * NR_IOS);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 0);
    g_assert_true(msix_flag(&c, "pba-emulated"));
    ctx_stop(&c);
}

static void test_no_mmap(void)
{
    Ctx c;
    Counts a, b;
    JsonObject *dev;

    ctx_start(&c, NULL, ",x-no-mmap=on");
    dev = qvfio_query_device(c.qts);
    g_assert_cmpint(json_array_get_length(json_object_get_array_member(
                        qvfio_query_bar(dev, 0), "mapped")), ==, 0);
    json_object_unref(dev);
    bring_up(&c);
    g_assert_true(bar0_traps(&c, 0x3ffc));
    a = bar0_counts(&c);
    do_ios(&c, NR_IOS, true);
    b = bar0_counts(&c);
    g_assert_cmpint(b.fwd_writes - a.fwd_writes, ==, 2 * NR_IOS);
    g_assert_cmpint(b.served_writes - a.served_writes, ==, 0);
    ctx_stop(&c);
}

static void test_hotplug(void)
{
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;

    qnvme_server_start(&srv, NULL);
    qts = qtest_init("-M pc -m 64M");
    bus = qpci_new_pc(qts);
    g_assert_null(qpci_device_find(bus, NVME_DEVFN));
    /* QEMU's JSON socket address form. */
    qtest_qmp_device_add(qts, "vfio-user-pci", "hot0",
                         "{'addr': '04.0', 'socket': {'type': 'unix', "
                         "'path': '%s'}}", srv.sock);
    dev = qpci_device_find(bus, NVME_DEVFN);
    g_assert_nonnull(dev);
    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmpint(qvfio_query_count(qts), ==, 1);
    qpci_device_free(dev);

    qtest_qmp_device_del(qts, "hot0");
    g_assert_null(qpci_device_find(bus, NVME_DEVFN));
    g_assert_cmpint(qvfio_query_count(qts), ==, 0);

    /* A refused device_add leaves nothing behind; the VM goes on. */
    {
        g_autofree char *bad = g_strdup_printf(
            "{'execute': 'device_add', 'arguments': {'driver': "
            "'vfio-user-pci', 'id': 'bad0', 'addr': '04.0', 'socket': '%s', "
            "'x-msix-relocation': 'bar1'}}", srv.sock);
        JsonObject *reply = qtest_qmp(qts, "%s", bad);

        g_assert_nonnull(strstr(qtest_qmp_error_desc(reply), "upper half"));
        json_object_unref(reply);
        g_assert_null(qpci_device_find(bus, NVME_DEVFN));

        reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                          "{'driver': 'vfio-user-pci', 'id': 'bad1', "
                          "'socket': '/nonexistent/nvme.sock'}}");
        g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                                "/nonexistent/nvme.sock"));
        json_object_unref(reply);
    }

    /* The server takes the next client: plug it again. */
    qtest_qmp_device_add(qts, "vfio-user-pci", "hot1",
                         "{'addr': '04.0', 'socket': {'type': 'unix', "
                         "'path': '%s'}}", srv.sock);
    dev = qpci_device_find(bus, NVME_DEVFN);
    g_assert_nonnull(dev);
    qpci_device_free(dev);
    qtest_qmp_device_del(qts, "hot1");

    qpci_free_pc(bus);
    qtest_quit(qts);
    qnvme_server_stop(&srv);
}

static bool wait_irq(Ctx *c, int line, bool level)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    /* Any command lets the IRQ notifications queued meanwhile arrive. */
    for (;;) {
        qtest_readl(c->qts, MSI_TARGET);
        if (qtest_get_irq(c->qts, line) == level) {
            return true;
        }
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
}

static void test_intx(void)
{
    QNvmeCmd cmd = { .opcode = QNVME_ADM_IDENTIFY, .cdw10 = 1 };
    Ctx c;
    JsonObject *dev;
    QNvmeCqe cqe;
    gint64 deadline;

    ctx_start(&c, NULL, NULL);
    /* Slot 4, pin A: host INTx line 0.  No MSI-X: the device uses INTx. */
    qtest_irq_intercept_out(c.qts, "/machine/pci-host");
    g_assert_cmphex(qpci_config_readb(c.dev, PCI_INTERRUPT_PIN), ==, 1);
    g_assert_true(qnvme_enable(&c.nvme));
    g_assert_false(qtest_get_irq(c.qts, 0));
    cmd.prp1 = qnvme_alloc(&c.nvme, 4096);
    /* The SQ doorbell is on a mapped page; the CQ doorbell waits. */
    qnvme_submit_admin(&c.nvme, &cmd);
    g_assert_true(wait_irq(&c, 0, true));
    /* While INTx is pending every BAR access traps (it may be the EOI). */
    dev = qvfio_query_device(c.qts);
    g_assert_cmpint(json_array_get_length(json_object_get_array_member(
                        qvfio_query_bar(dev, 0), "mapped")), ==, 0);
    json_object_unref(dev);
    /* A BAR access is the EOI: the line drops, the mappings return. */
    qnvme_reg_read(&c.nvme, QNVME_REG_CSTS);
    g_assert_true(wait_irq(&c, 0, false));
    deadline = g_get_monotonic_time() + WAIT_US;
    while (!bar0_maps(&c, DOORBELL_PAGE)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(500);
    }
    g_assert_true(qnvme_wait_admin(&c.nvme, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
    g_assert_cmphex(qtest_readw(c.qts, cmd.prp1), ==, 0x1b36);
    ctx_stop(&c);
}

static void test_system_reset(void)
{
    Ctx c;
    JsonNode *ret;

    ctx_start(&c, NULL, NULL);
    bring_up(&c);
    do_ios(&c, 2, true);
    ret = qtest_qmp_assert_success(c.qts, "{'execute': 'system_reset'}");
    json_node_unref(ret);
    /* MSI-X is off again and the controller was reset with the device. */
    g_assert_false(qpci_msix_enabled(c.dev));
    g_assert_cmphex(qnvme_reg_read(&c.nvme, QNVME_REG_CSTS) & 1, ==, 0);
    qnvme_init(&c.nvme, c.dev, RAM_START, RAM_END);
    bring_up(&c);
    do_ios(&c, 2, true);
    ctx_stop(&c);
}

static void test_server_killed(void)
{
    Ctx c;
    JsonNode *ret;
    JsonObject *dev;
    gint64 deadline;

    ctx_start(&c, NULL, NULL);
    bring_up(&c);
    do_ios(&c, 2, true);
    qnvme_server_kill(&c.srv, SIGKILL);
    /*
     * The whole BAR0 is mapped, so nothing the guest does reaches the
     * dead server: Conduit notices the hang-up by itself.
     */
    deadline = g_get_monotonic_time() + WAIT_US;
    for (;;) {
        dev = qvfio_query_device(c.qts);
        if (json_object_get_boolean_member(dev, "broken")) {
            break;
        }
        json_object_unref(dev);
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    json_object_unref(dev);
    /* Even the mapped doorbell page is gone once the device is broken. */
    deadline = g_get_monotonic_time() + WAIT_US;
    while (bar0_maps(&c, DOORBELL_PAGE)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(1000);
    }
    g_assert_cmphex(qpci_io_readl(c.dev, c.nvme.bar0, DOORBELL_PAGE), ==,
                    0xffffffff);
    /* Registers, now trapped, read all-ones and writes are dropped. */
    g_assert_true(bar0_traps(&c, 0));
    g_assert_cmphex(qnvme_reg_read(&c.nvme, QNVME_REG_CSTS), ==, 0xffffffff);
    qnvme_reg_write(&c.nvme, QNVME_REG_CC, 0);
    g_assert_cmphex(qnvme_reg_read(&c.nvme, QNVME_REG_CC), ==, 0xffffffff);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0xffff);
    ret = qtest_qmp_assert_success(c.qts, "{'execute': 'query-status'}");
    json_node_unref(ret);
    g_assert_true(qtest_probe_child(c.qts));
    /* The dead device can still be removed. */
    qtest_qmp_device_del(c.qts, "nvme0");
    g_assert_cmpint(qvfio_query_count(c.qts), ==, 0);
    ctx_stop(&c);
}

/* A "server" that accepts one client and hangs up at once. */
static gpointer hang_up_thread(gpointer data)
{
    int lfd = GPOINTER_TO_INT(data);
    int fd = accept(lfd, NULL, NULL);

    if (fd >= 0) {
        close(fd);
    }
    return NULL;
}

static void test_server_closes_during_realize(void)
{
    g_autofree char *dir = g_dir_make_tmp("vfio-user-pci-test-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "hangup.sock", NULL);
    g_autofree char *args = NULL;
    g_autofree char *err = NULL;
    struct sockaddr_un sun = { .sun_family = AF_UNIX };
    GThread *thread;
    int lfd, status;

    g_assert_nonnull(dir);
    g_strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    g_assert_cmpint(lfd, >=, 0);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sun, sizeof(sun)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    thread = g_thread_new("hang-up", hang_up_thread, GINT_TO_POINTER(lfd));
    args = g_strdup_printf("-M pc -accel qtest -display none "
                           "-device vfio-user-pci,socket=%s", path);
    status = qtest_run_expect_fail(args, NULL, &err);
    g_thread_join(thread);
    close(lfd);
    unlink(path);
    rmdir(dir);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, path));
}

static void test_unreachable_socket(void)
{
    g_autofree char *err = NULL;
    int status;

    status = qtest_run_expect_fail("-M pc -accel qtest -display none "
                                   "-device vfio-user-pci,"
                                   "socket=/nonexistent/nvme.sock",
                                   NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "/nonexistent/nvme.sock"));
}

static void test_vfio_pci_no_host_device(void)
{
    g_autofree char *err = NULL;
    int status;

    status = qtest_run_expect_fail("-M pc -accel qtest -display none "
                                   "-device vfio-pci,host=0000:01:00.0",
                                   NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "0000:01:00.0"));
}

static void test_help_lists_props(void)
{
    static const char *const props[] = {
        "addr=", "socket=", "socket.path=", "socket.type=", "x-no-mmap=",
        "x-msix-mappable=", "x-lazy-pba=", "x-host-page-size=",
        "x-msix-relocation=", "x-msg-timeout=", "rombar=", "bootindex=",
    };
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    int status;

    status = qtest_run_expect_fail("-device vfio-user-pci,help", &out, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    for (size_t i = 0; i < G_N_ELEMENTS(props); i++) {
        g_assert_nonnull(strstr(out, props[i]));
    }
}

/*
 * Each driver declares its own backend's properties: vfio-user-pci has
 * socket and x-msg-timeout, vfio-pci has host and sysfsdev, and both
 * share the device model's.
 */
static void test_driver_properties(void)
{
    g_autofree char *uout = NULL, *uerr = NULL, *kout = NULL, *kerr = NULL;
    int status;

    status = qtest_run_expect_fail("-device vfio-user-pci,help", &uout,
                                   &uerr);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    status = qtest_run_expect_fail("-device vfio-pci,help", &kout, &kerr);
    g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_assert_nonnull(strstr(uout, "socket="));
    g_assert_nonnull(strstr(uout, "x-msg-timeout="));
    g_assert_null(strstr(uout, "host="));
    g_assert_null(strstr(uout, "sysfsdev="));
    g_assert_nonnull(strstr(kout, "host="));
    g_assert_nonnull(strstr(kout, "sysfsdev="));
    g_assert_null(strstr(kout, "socket"));
    g_assert_null(strstr(kout, "x-msg-timeout"));
    g_assert_nonnull(strstr(uout, "x-lazy-pba="));
    g_assert_nonnull(strstr(kout, "x-lazy-pba="));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-pci/qdev/own-properties",
                    test_driver_properties);
    g_test_add_func("/vfio-user-pci/nvme/end-to-end", test_end_to_end);
    g_test_add_func("/vfio-user-pci/msix-mappable/doorbell-page-mmap-served",
                   test_db_page_mmap_served);
    g_test_add_func("/vfio-user-pci/telemetry/hot-page-warning",
                    test_hot_page_warning);
    g_test_add_func("/vfio-user-pci/no-msix-mappable/doorbell-page-forwarded",
                   test_db_page_no_cap);
    g_test_add_func("/vfio-user-pci/msix-relocation/auto-untraps-doorbells",
                   test_relocation_auto);
    g_test_add_func("/vfio-user-pci/msix-relocation/refuses-upper-half",
                   test_relocation_refused);
    g_test_add_data_func("/vfio-user-pci/host-page-64k/msix-mappable",
                        GINT_TO_POINTER(1), test_64k_pages);
    g_test_add_data_func("/vfio-user-pci/host-page-64k/no-msix-mappable",
                        GINT_TO_POINTER(0), test_64k_pages);
    g_test_add_func("/vfio-user-pci/lazy-pba/traps-only-while-pending",
                   test_lazy_pba);
    g_test_add_func("/vfio-user-pci/lazy-pba/off-keeps-overlay",
                   test_lazy_pba_off);
    g_test_add_func("/vfio-user-pci/no-mmap/all-forwarded", test_no_mmap);
    g_test_add_func("/vfio-user-pci/hotplug/add-del", test_hotplug);
    g_test_add_func("/vfio-user-pci/intx/raised-and-eoi", test_intx);
    g_test_add_func("/vfio-user-pci/reset/system-reset", test_system_reset);
    g_test_add_func("/vfio-user-pci/errors/server-killed", test_server_killed);
    g_test_add_func("/vfio-user-pci/errors/server-closes-during-realize",
                    test_server_closes_during_realize);
    g_test_add_func("/vfio-user-pci/errors/unreachable-socket",
                   test_unreachable_socket);
    g_test_add_func("/vfio-pci/errors/no-such-host-device",
                   test_vfio_pci_no_host_device);
    g_test_add_func("/vfio-user-pci/help/lists-properties",
                   test_help_lists_props);
    return g_test_run();
}
