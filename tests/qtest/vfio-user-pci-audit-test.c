/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci acceptance checks that the main qtest leaves out.
 *
 * x-msix-relocation=barN in both of its shapes (a free slot becomes a new
 * BAR; an occupied one is doubled with the table in its upper half), the
 * x-msix-mappable on/off modes, and that device_del gives back every fd
 * and mapping the device took (checked in /proc of the VMM).
 */
#include "qemu/osdep.h"
#include <signal.h>
#include <sys/wait.h>
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
#define MSI_DATA 0x4321
#define IO_VECTOR 1
/*
 * The host page holding the doorbells (0x1000): 0x1000 with 4 KiB pages,
 * 0 with 64 KiB pages (POWER), where it holds the registers as well.
 */
#define DOORBELL_PAGE ((uint64_t)QEMU_ALIGN_DOWN(0x1000, getpagesize()))
/* True when the registers (page 0) are on a page of their own. */
#define REGS_OWN_PAGE (DOORBELL_PAGE != 0)
/* The server makes BAR0 at least one host page (64 KiB on POWER). */
#define BAR0_SIZE ((uint64_t)MAX(0x4000, getpagesize()))
#define NR_IOS 4
#define WAIT_US (10 * G_USEC_PER_SEC)

/* Table and PBA on the doorbell page of a 16 KiB BAR0. */
#define LAYOUT_DB_PAGE "--msix-bar 0 --msix-table-offset 0x1800 " \
                       "--msix-pba-offset 0x1c00"

typedef struct AuditCtx {
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QNvme nvme;
    char *pidfile;
} AuditCtx;

/* A clean stop, not a crash. */
static void audit_server_stop(QNvmeServer *s)
{
    int status = qnvme_server_stop(s);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

static void audit_start(AuditCtx *c, const char *srv_args,
                        const char *dev_opts)
{
    memset(c, 0, sizeof(*c));
    qnvme_server_start(&c->srv, srv_args);
    c->pidfile = g_build_filename(c->srv.dir, "vmm.pid", NULL);
    c->qts = qtest_initf("-M pc -m 64M -pidfile %s%s%s%s", c->pidfile,
                         dev_opts ? " -device vfio-user-pci,id=nvme0,"
                                    "addr=04.0,socket=" : "",
                         dev_opts ? c->srv.sock : "",
                         dev_opts ? dev_opts : "");
    c->bus = qpci_new_pc(c->qts);
}

static void audit_find_device(AuditCtx *c)
{
    c->dev = qpci_device_find(c->bus, NVME_DEVFN);
    g_assert_nonnull(c->dev);
    qnvme_init(&c->nvme, c->dev, RAM_START, RAM_END);
}

static void audit_stop(AuditCtx *c)
{
    if (c->dev) {
        qpci_device_free(c->dev);
    }
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    unlink(c->pidfile);
    g_free(c->pidfile);
    audit_server_stop(&c->srv);
}

/* ---- x-query-vfio ---- */

/* Every access to BAR0 that reached Conduit, whichever way it was served. */
static int64_t audit_bar0_exits(AuditCtx *c, const char *kind)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    JsonObject *b = qvfio_query_bar(dev, 0);
    g_autofree char *reads = g_strdup_printf("%s-reads", kind);
    g_autofree char *writes = g_strdup_printf("%s-writes", kind);
    int64_t n = json_object_get_int_member(b, reads) +
                json_object_get_int_member(b, writes);

    json_object_unref(dev);
    return n;
}

/* ---- NVMe through the guest view ---- */

static bool audit_wait_ram(AuditCtx *c, uint64_t addr, uint32_t val)
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

static void audit_bring_up(AuditCtx *c)
{
    uint64_t id;

    qpci_msix_enable(c->dev);
    for (int v = 0; v <= IO_VECTOR; v++) {
        qpci_msix_set_vector(c->dev, v, MSI_TARGET + 4 * v, MSI_DATA + v);
        qpci_msix_mask_vector(c->dev, v, false);
    }
    id = qnvme_enable_identify(&c->nvme);
    g_assert_cmphex(qtest_readw(c->qts, id), ==, 0x1b36);
    g_assert_true(qnvme_create_io_queues(&c->nvme, 16, IO_VECTOR));
}

/* Write then read back, each completion signalled on the I/O vector. */
static void audit_ios(AuditCtx *c, int n)
{
    uint64_t buf = qnvme_alloc(&c->nvme, 4096);
    uint8_t pattern[4096], back[4096];
    QNvmeCqe cqe;

    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof(pattern); k++) {
            pattern[k] = (uint8_t)(k * 3 + i * 29);
        }
        qtest_memwrite(c->qts, buf, pattern, sizeof(pattern));
        qtest_writel(c->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        g_assert_true(qnvme_rw(&c->nvme, true, 8 * i, 8, buf, &cqe));
        g_assert_cmphex(cqe.status, ==, 0);
        g_assert_true(audit_wait_ram(c, MSI_TARGET + 4 * IO_VECTOR,
                                     MSI_DATA + IO_VECTOR));
        qtest_memset(c->qts, buf, 0, sizeof(back));
        qtest_writel(c->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        g_assert_true(qnvme_rw(&c->nvme, false, 8 * i, 8, buf, &cqe));
        g_assert_cmphex(cqe.status, ==, 0);
        g_assert_true(audit_wait_ram(c, MSI_TARGET + 4 * IO_VECTOR,
                                     MSI_DATA + IO_VECTOR));
        qtest_memread(c->qts, buf, back, sizeof(back));
        g_assert_cmpmem(back, sizeof(back), pattern, sizeof(pattern));
    }
}

/* The size the guest finds by writing all-ones to a memory BAR. */
static uint64_t audit_guest_bar_size(AuditCtx *c, int bar)
{
    uint8_t reg = PCI_BASE_ADDRESS_0 + 4 * bar;
    uint32_t saved = qpci_config_readl(c->dev, reg);
    uint32_t mask;

    qpci_config_writel(c->dev, reg, 0xffffffff);
    mask = qpci_config_readl(c->dev, reg) & PCI_BASE_ADDRESS_MEM_MASK;
    qpci_config_writel(c->dev, reg, saved);
    return mask ? (uint64_t)(~mask + 1) : 0;
}

/* ---- x-msix-relocation=barN ---- */

static void check_relocated_and_quiet(AuditCtx *c, int bar,
                                      uint64_t table_off)
{
    JsonObject *dev, *msix;

    audit_bring_up(c);
    /* The guest's capability points where the plan put the table. */
    g_assert_cmpint(c->dev->msix_table_bar, ==, bar);
    g_assert_cmphex(c->dev->msix_table_off, ==, table_off);
    dev = qvfio_query_device(c->qts);
    msix = json_object_get_object_member(dev, "msix");
    g_assert_true(json_object_get_boolean_member(msix, "relocated"));
    g_assert_cmpint(json_object_get_int_member(msix, "bar"), ==, bar);
    g_assert_cmphex(json_object_get_int_member(msix, "table-offset"), ==,
                    table_off);
    /* The device's own table page is mapped with nothing over it. */
    g_assert_true(qvfio_bar_covers(qvfio_query_bar(dev, 0), "mapped", DOORBELL_PAGE));
    g_assert_false(qvfio_bar_covers(qvfio_query_bar(dev, 0), "trapped",
                                DOORBELL_PAGE));
    json_object_unref(dev);
    audit_ios(c, NR_IOS);
    /* Doorbells never exited; the table was reached through the new spot. */
    g_assert_cmpint(audit_bar0_exits(c, "forwarded"), ==, 0);
    g_assert_cmpint(audit_bar0_exits(c, "mmap-served"), ==, 0);
    dev = qvfio_query_device(c->qts);
    msix = json_object_get_object_member(dev, "msix");
    g_assert_cmpint(json_object_get_int_member(msix, "table-accesses"), >,
                    0);
    json_object_unref(dev);
}

static void test_relocation_free_slot(void)
{
    AuditCtx c;
    JsonObject *dev;

    /*
     * BAR2 is free on vfio-user-nvme: it becomes a small new BAR, one host
     * page (issue 16 item 7), so the table shares a page with nothing.
     */
    audit_start(&c, LAYOUT_DB_PAGE, ",x-msix-relocation=bar2");
    audit_find_device(&c);
    g_assert_cmphex(audit_guest_bar_size(&c, 2), ==,
                    MAX(0x1000, (uint64_t)getpagesize()));
    g_assert_cmphex(audit_guest_bar_size(&c, 0), ==, BAR0_SIZE);
    check_relocated_and_quiet(&c, 2, 0);
    dev = qvfio_query_device(c.qts);
    g_assert_cmpint(json_object_get_int_member(qvfio_query_bar(dev, 2), "size"),
                    ==, MAX(0x1000, getpagesize()));
    json_object_unref(dev);
    audit_stop(&c);
}

static void test_relocation_doubles_occupied(void)
{
    AuditCtx c;
    JsonObject *dev, *bar0;

    /* BAR0 is in use: doubled, the emulated table in its upper half. */
    audit_start(&c, LAYOUT_DB_PAGE, ",x-msix-relocation=bar0");
    audit_find_device(&c);
    g_assert_cmphex(audit_guest_bar_size(&c, 0), ==, 2 * BAR0_SIZE);
    check_relocated_and_quiet(&c, 0, BAR0_SIZE);
    dev = qvfio_query_device(c.qts);
    bar0 = qvfio_query_bar(dev, 0);
    g_assert_cmphex(json_object_get_int_member(bar0, "size"), ==,
                    2 * BAR0_SIZE);
    /* Only the emulated upper half traps; the device's half is mapped. */
    for (uint64_t off = 0; off < BAR0_SIZE; off += 0x1000) {
        g_assert_true(qvfio_bar_covers(bar0, "mapped", off));
        g_assert_false(qvfio_bar_covers(bar0, "trapped", off));
    }
    g_assert_true(qvfio_bar_covers(bar0, "trapped", BAR0_SIZE));
    g_assert_false(qvfio_bar_covers(bar0, "mapped", BAR0_SIZE));
    json_object_unref(dev);
    /* The rest of the upper half is nobody's: harmless to touch. */
    qpci_io_writel(c.dev, c.nvme.bar0, BAR0_SIZE + 0x2000, 0xdeadbeef);
    qpci_io_readl(c.dev, c.nvme.bar0, BAR0_SIZE + 0x2000);
    dev = qvfio_query_device(c.qts);
    g_assert_false(json_object_get_boolean_member(dev, "broken"));
    json_object_unref(dev);
    audit_ios(&c, 1);
    audit_stop(&c);
}

/* ---- x-msix-mappable ---- */

static void test_mappable_on_requires_capability(void)
{
    g_autofree char *args = NULL;
    g_autofree char *err = NULL;
    QNvmeServer srv;
    int status;

    /*
     * The table on a page of its own, so that the rest of BAR0 stays
     * mappable at any page size (the refusal concerns a mappable BAR).
     */
    qnvme_server_start(&srv, "--msix-bar 0 --msix-table-offset 0x10000 "
                       "--msix-pba-offset 0x10800 --no-msix-mappable");
    args = g_strdup_printf("-M pc -accel qtest -display none -device "
                           "vfio-user-pci,socket=%s,x-msix-mappable=on",
                           srv.sock);
    status = qtest_run_expect_fail(args, NULL, &err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "x-msix-mappable"));
    /* The refused client left the server ready for the next one. */
    {
        QTestState *qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,"
                                      "id=nvme0,addr=04.0,socket=%s",
                                      srv.sock);

        g_assert_cmpint(qvfio_query_count(qts), ==, 1);
        qtest_quit(qts);
    }
    audit_server_stop(&srv);
}

static void test_mappable_off_ignores_capability(void)
{
    AuditCtx c;
    JsonObject *dev;
    int64_t before;

    audit_start(&c, LAYOUT_DB_PAGE, ",x-msix-mappable=off");
    audit_find_device(&c);
    audit_bring_up(&c);
    dev = qvfio_query_device(c.qts);
    g_assert_false(qvfio_bar_covers(qvfio_query_bar(dev, 0), "mapped", DOORBELL_PAGE));
    g_assert_true(qvfio_bar_covers(qvfio_query_bar(dev, 0), "trapped", DOORBELL_PAGE));
    g_assert_cmpint(qvfio_bar_covers(qvfio_query_bar(dev, 0), "mapped", 0), ==,
                    REGS_OWN_PAGE);
    json_object_unref(dev);
    before = audit_bar0_exits(&c, "forwarded");
    audit_ios(&c, NR_IOS);
    /* Two doorbell writes per command (SQ tail, CQ head). */
    g_assert_cmpint(audit_bar0_exits(&c, "forwarded") - before, ==,
                    4 * NR_IOS);
    audit_stop(&c);
}

/* ---- the hot-page warning ---- */

static void test_hot_page_hint_without_capability(void)
{
    AuditCtx c;
    uint32_t db = QNVME_DOORBELL_BASE + 3 * 4;   /* I/O CQ 1 head */
    const char *err;

    /*
     * Without MSIX_MAPPABLE the table's page is not mappable at all, so
     * relocating the emulated table would not untrap it: the warning must
     * not suggest it, and must still say why the page traps.
     */
    audit_start(&c, LAYOUT_DB_PAGE " --no-msix-mappable", "");
    audit_find_device(&c);
    audit_bring_up(&c);
    for (int i = 0; i < 1100; i++) {
        qpci_io_writel(c.dev, c.nvme.bar0, db, c.nvme.io.cq_head);
    }
    audit_ios(&c, 1);
    err = qtest_get_stderr(c.qts);
    g_assert_null(strstr(err, "x-msix-relocation"));
    {
        g_autofree char *page = g_strdup_printf("page 0x%" PRIx64,
                                                DOORBELL_PAGE);

        g_assert_nonnull(strstr(err, page));
    }
    g_assert_nonnull(strstr(err, "MSIX_MAPPABLE"));
    audit_stop(&c);

    /* Indeed: relocated, the page still traps. */
    audit_start(&c, LAYOUT_DB_PAGE " --no-msix-mappable",
                ",x-msix-relocation=auto");
    audit_find_device(&c);
    {
        JsonObject *dev = qvfio_query_device(c.qts);

        g_assert_true(qvfio_bar_covers(qvfio_query_bar(dev, 0), "trapped",
                                   DOORBELL_PAGE));
        json_object_unref(dev);
    }
    audit_stop(&c);
}

/* ---- device_del gives everything back ---- */

typedef struct VmmResources {
    GPtrArray *fds;             /* readlink of every /proc/PID/fd entry */
    GPtrArray *maps;            /* file- or memfd-backed mappings */
} VmmResources;

static gint audit_strcmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static VmmResources audit_resources(AuditCtx *c)
{
    g_autofree char *pidstr = NULL;
    g_autofree char *fddir = NULL;
    g_autofree char *mapsfile = NULL;
    g_autofree char *maps = NULL;
    g_auto(GStrv) lines = NULL;
    VmmResources r = {
        g_ptr_array_new_with_free_func(g_free),
        g_ptr_array_new_with_free_func(g_free),
    };
    GDir *dir;
    const char *name;

    g_assert_true(g_file_get_contents(c->pidfile, &pidstr, NULL, NULL));
    g_strstrip(pidstr);
    fddir = g_strdup_printf("/proc/%s/fd", pidstr);
    dir = g_dir_open(fddir, 0, NULL);
    g_assert_nonnull(dir);
    while ((name = g_dir_read_name(dir))) {
        g_autofree char *link = g_build_filename(fddir, name, NULL);
        char *target = g_file_read_link(link, NULL);

        if (target) {
            g_ptr_array_add(r.fds, target);
        }
    }
    g_dir_close(dir);
    g_ptr_array_sort(r.fds, audit_strcmp);

    mapsfile = g_strdup_printf("/proc/%s/maps", pidstr);
    g_assert_true(g_file_get_contents(mapsfile, &maps, NULL, NULL));
    lines = g_strsplit(maps, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        /* Heap and stacks come and go; device memory is a named mapping. */
        if (strstr(lines[i], "memfd:") || strstr(lines[i], "/dev/")) {
            g_ptr_array_add(r.maps, g_strdup(lines[i]));
        }
    }
    return r;
}

static void audit_assert_same(GPtrArray *a, GPtrArray *b, const char *what)
{
    for (guint i = 0; i < MAX(a->len, b->len); i++) {
        const char *x = i < a->len ? g_ptr_array_index(a, i) : "(none)";
        const char *y = i < b->len ? g_ptr_array_index(b, i) : "(none)";

        if (strcmp(x, y)) {
            g_test_message("%s differ: '%s' before, '%s' after", what, x, y);
        }
        g_assert_cmpstr(x, ==, y);
    }
}

/* Open fds plus memfd mappings of @pid: what a client costs the server. */
static guint audit_pid_holdings(GPid pid)
{
    g_autofree char *fddir = g_strdup_printf("/proc/%d/fd", (int)pid);
    g_autofree char *mapsfile = g_strdup_printf("/proc/%d/maps", (int)pid);
    g_autofree char *maps = NULL;
    g_auto(GStrv) lines = NULL;
    GDir *dir = g_dir_open(fddir, 0, NULL);
    guint n = 0;

    g_assert_nonnull(dir);
    while (g_dir_read_name(dir)) {
        n++;
    }
    g_dir_close(dir);
    g_assert_true(g_file_get_contents(mapsfile, &maps, NULL, NULL));
    lines = g_strsplit(maps, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        n += !!strstr(lines[i], "memfd:");
    }
    return n;
}

/* The server drops a client in its own time: wait for it, within reason. */
static void audit_wait_server_holdings(AuditCtx *c, guint expected)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    guint n;

    while ((n = audit_pid_holdings(c->srv.pid)) != expected &&
           g_get_monotonic_time() < deadline) {
        g_usleep(1000);
    }
    g_assert_cmpuint(n, ==, expected);
}

static void audit_plug_use_unplug(AuditCtx *c, const char *id,
                                  guint srv_idle)
{
    VmmResources during;

    qtest_qmp_device_add(c->qts, "vfio-user-pci", id,
                         "{'addr': '04.0', 'socket': '%s'}", c->srv.sock);
    audit_find_device(c);
    audit_bring_up(c);
    audit_ios(c, 1);
    during = audit_resources(c);
    /* The device did take mappings and fds, or the check below is empty. */
    g_assert_cmpint(during.maps->len, >, 0);
    g_assert_cmpuint(audit_pid_holdings(c->srv.pid), >, srv_idle);
    g_ptr_array_unref(during.fds);
    g_ptr_array_unref(during.maps);
    qpci_device_free(c->dev);
    c->dev = NULL;
    qtest_qmp_device_del(c->qts, id);
    g_assert_null(qpci_device_find(c->bus, NVME_DEVFN));
}

static void test_unplug_releases_fds_and_maps(void)
{
    AuditCtx c;
    VmmResources before, after, during;
    guint srv_before;

    audit_start(&c, LAYOUT_DB_PAGE, NULL);
    before = audit_resources(&c);
    srv_before = audit_pid_holdings(c.srv.pid);
    qtest_qmp_device_add(c.qts, "vfio-user-pci", "probe",
                         "{'addr': '04.0', 'socket': '%s'}", c.srv.sock);
    during = audit_resources(&c);
    g_assert_cmpint(during.fds->len, >, before.fds->len);
    g_assert_cmpint(during.maps->len, >, before.maps->len);
    g_ptr_array_unref(during.fds);
    g_ptr_array_unref(during.maps);
    qtest_qmp_device_del(c.qts, "probe");
    after = audit_resources(&c);
    audit_assert_same(before.fds, after.fds, "fds");
    audit_assert_same(before.maps, after.maps, "mappings");
    g_ptr_array_unref(after.fds);
    g_ptr_array_unref(after.maps);

    /* With IRQs set up and I/O done, again and again. */
    for (int i = 0; i < 3; i++) {
        g_autofree char *id = g_strdup_printf("nvme%d", i);

        audit_plug_use_unplug(&c, id, srv_before);
        /* The server reset the device and let go of the client's memory. */
        audit_wait_server_holdings(&c, srv_before);
        after = audit_resources(&c);
        audit_assert_same(before.fds, after.fds, "fds");
        audit_assert_same(before.maps, after.maps, "mappings");
        g_ptr_array_unref(after.fds);
        g_ptr_array_unref(after.maps);
    }
    g_ptr_array_unref(before.fds);
    g_ptr_array_unref(before.maps);
    audit_stop(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-pci-audit/msix-relocation/free-slot-new-bar",
                    test_relocation_free_slot);
    g_test_add_func("/vfio-user-pci-audit/msix-relocation/"
                    "occupied-bar-doubled", test_relocation_doubles_occupied);
    g_test_add_func("/vfio-user-pci-audit/msix-mappable/on-needs-capability",
                    test_mappable_on_requires_capability);
    g_test_add_func("/vfio-user-pci-audit/msix-mappable/off-traps-table-page",
                    test_mappable_off_ignores_capability);
    g_test_add_func("/vfio-user-pci-audit/telemetry/"
                    "hot-page-hint-without-capability",
                    test_hot_page_hint_without_capability);
    g_test_add_func("/vfio-user-pci-audit/hotplug/unplug-releases-fds-maps",
                    test_unplug_releases_fds_and_maps);
    return g_test_run();
}
