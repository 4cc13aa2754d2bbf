/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live migration of a VM with a vfio-user-pci NVMe controller: two
 * Conduit processes, each with its own vfio-user-nvme server (the test
 * starts the destination's, as a user or libvirt would).  The "guest"
 * is the libqos NVMe driver through qtest: it writes before, during
 * (between RAM passes) and after the migration, reads a block into RAM
 * while the migration runs (the server writes that RAM, so only the
 * device's dirty-page log can carry it), and after the switchover reads
 * everything back on the destination, where the same queues go on and a
 * new command completes with an MSI-X interrupt.  Namespace: one file
 * both servers open, or a ram backend copied in the device data.
 *
 * Faults: the destination server dies, the source server dies while the
 * migration runs, a stream cut inside the device data: the source keeps
 * running (and its device working where its server lives) with a clear
 * error.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/nvme.h"

#define NVME_DEVFN QPCI_DEVFN(4, 0)
#define RAM_START 0x200000ULL
#define RAM_END 0x1000000ULL
#define JUNK_START 0x1000000ULL     /* RAM the first pass takes a while on */
#define JUNK_LEN (6 * MiB)
#define MSI_TARGET 0x3800000ULL
#define MSI_DATA_BASE 0x4200
#define IO_VECTOR 1
#define BLOCK 4096
#define NLB (BLOCK / 512)
#define NS_SIZE (16 * MiB)
#define WAIT_US (60 * G_USEC_PER_SEC)   /* liveness bound only */
#define MiB (1024 * 1024)

typedef struct Side {
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
} Side;

static char *tmpdir;

static const char *status_of(QTestState *s)
{
    return qtest_migrate_status(s);
}

/* Polls until status is one of the |-separated names; returns it. */
static const char *wait_status(QTestState *s, const char *want)
{
    return qtest_migrate_wait_status(s, want, 3 * WAIT_US);
}

static char *runstate_of(QTestState *s)
{
    g_autoptr(JsonObject) r = qtest_qmp(s, "{'execute': 'query-status'}");
    JsonObject *ret = json_object_get_object_member(r, "return");

    return g_strdup(json_object_get_string_member(ret, "status"));
}

static int64_t sync_count(QTestState *s)
{
    g_autoptr(JsonObject) r = qtest_qmp(s, "{'execute': 'query-migrate'}");
    JsonObject *ret = json_object_get_object_member(r, "return");
    JsonObject *ram;

    if (!json_object_has_member(ret, "ram")) {
        return 0;
    }
    ram = json_object_get_object_member(ret, "ram");
    return json_object_get_int_member(ram, "dirty-sync-count");
}

static char *error_desc(QTestState *s)
{
    g_autoptr(JsonObject) r = qtest_qmp(s, "{'execute': 'query-migrate'}");
    JsonObject *ret = json_object_get_object_member(r, "return");

    return g_strdup(json_object_has_member(ret, "error-desc") ?
                    json_object_get_string_member(ret, "error-desc") : "");
}

static void set_param(QTestState *s, const char *json)
{
    g_autoptr(JsonNode) ok = qtest_qmp_assert_success(s,
        "{'execute': 'migrate-set-parameters', 'arguments': %s}", json);
}

static void set_return_path(QTestState *s)
{
    g_autoptr(JsonNode) ok = qtest_qmp_assert_success(s,
        "{'execute': 'migrate-set-capabilities', 'arguments': "
        "{'capabilities': [{'capability': 'return-path', 'state': true}]}}");
}

static void side_start(Side *sd, const char *srv_args, const char *incoming)
{
    memset(sd, 0, sizeof(*sd));
    qnvme_server_start(&sd->srv, srv_args);
    sd->qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=nvme0,"
                          "addr=04.0,socket=%s%s%s", sd->srv.sock,
                          incoming ? " -incoming " : "",
                          incoming ? incoming : "");
}

static void side_attach(Side *sd)
{
    sd->bus = qpci_new_pc(sd->qts);
    sd->dev = qpci_device_find(sd->bus, NVME_DEVFN);
    g_assert_nonnull(sd->dev);
}

static void side_stop(Side *sd)
{
    if (sd->dev) {
        qpci_device_free(sd->dev);
        qpci_free_pc(sd->bus);
    }
    if (sd->qts) {
        qtest_quit(sd->qts);
    }
    qnvme_server_stop(&sd->srv);
}

static void pattern(uint8_t *buf, unsigned block, unsigned gen)
{
    for (unsigned k = 0; k < BLOCK; k++) {
        buf[k] = (uint8_t)(k * 7 + block * 13 + gen * 101);
    }
}

static void nvme_write_block(QNvme *n, uint64_t wbuf, unsigned block,
                             unsigned gen)
{
    uint8_t data[BLOCK];
    QNvmeCqe cqe;

    pattern(data, block, gen);
    qtest_memwrite(n->qts, wbuf, data, sizeof(data));
    g_assert_true(qnvme_rw(n, true, (uint64_t)block * NLB, NLB, wbuf, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
}

static void nvme_check_block(QNvme *n, uint64_t rbuf, unsigned block,
                             unsigned gen)
{
    uint8_t want[BLOCK], got[BLOCK];
    QNvmeCqe cqe;

    qtest_memset(n->qts, rbuf, 0, BLOCK);
    g_assert_true(qnvme_rw(n, false, (uint64_t)block * NLB, NLB, rbuf,
                           &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
    pattern(want, block, gen);
    qtest_memread(n->qts, rbuf, got, sizeof(got));
    if (memcmp(want, got, BLOCK)) {
        g_error("block %u does not hold generation %u", block, gen);
    }
}

static bool wait_ram(QTestState *qts, uint64_t addr, uint32_t val)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (qtest_readl(qts, addr) != val) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    return true;
}

static void bring_up(Side *sd, QNvme *n)
{
    side_attach(sd);
    qnvme_init(n, sd->dev, RAM_START, RAM_END);
    qpci_msix_enable(sd->dev);
    for (int v = 0; v <= IO_VECTOR; v++) {
        qpci_msix_set_vector(sd->dev, v, MSI_TARGET + 4 * v,
                             MSI_DATA_BASE + v);
        qpci_msix_mask_vector(sd->dev, v, false);
    }
    qnvme_enable_identify(n);
    g_assert_true(qnvme_create_io_queues(n, 16, IO_VECTOR));
}

static void fill_junk(QTestState *qts)
{
    g_autofree uint8_t *junk = g_malloc(MiB);

    for (size_t i = 0; i < MiB; i++) {
        junk[i] = (uint8_t)(i * 31 + 1);
    }
    for (uint64_t off = 0; off < JUNK_LEN; off += MiB) {
        qtest_memwrite(qts, JUNK_START + off, junk, MiB);
    }
}

/*
 * The whole scenario; @shared: both servers open one file (else each
 * has a ram namespace, copied in the device data).
 */
static void migrate_nvme(bool shared)
{
    g_autofree char *file = g_build_filename(tmpdir, "ns.img", NULL);
    g_autofree char *sock = g_build_filename(tmpdir, shared ? "mig-f.sock"
                                                            : "mig-r.sock",
                                             NULL);
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    g_autofree char *srv_args = NULL;
    g_autofree char *rs = NULL;
    g_autoptr(JsonObject) q = NULL;
    JsonObject *ret;
    Side src, dst;
    QNvme n, nd;
    uint64_t wbuf, rbuf, early;
    uint8_t want[BLOCK], got[BLOCK];
    int64_t syncs;

    if (shared) {
        int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, NS_SIZE), ==, 0);
        close(fd);
        srv_args = g_strdup_printf("--backend file:%s", file);
    }
    side_start(&src, srv_args, NULL);
    bring_up(&src, &n);
    wbuf = qnvme_alloc(&n, BLOCK);
    rbuf = qnvme_alloc(&n, BLOCK);
    early = qnvme_alloc(&n, BLOCK);

    /* Before: blocks 0-7. */
    for (unsigned b = 0; b < 8; b++) {
        nvme_write_block(&n, wbuf, b, 1);
    }
    fill_junk(src.qts);

    side_start(&dst, srv_args, inc);
    set_param(src.qts, "{'max-bandwidth': 4194304}");
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src.qts,
            "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", inc);
    }
    wait_status(src.qts, "active");

    /*
     * During: a write and a read per RAM pass.  The read lands in RAM
     * the server writes, behind Conduit's back: only the device's DMA
     * log can get it to the destination.
     */
    syncs = sync_count(src.qts);
    for (unsigned b = 8; b < 12; b++) {
        gint64 deadline = g_get_monotonic_time() + WAIT_US;

        nvme_write_block(&n, wbuf, b, 2);
        if (b == 8) {
            QNvmeCqe cqe;

            g_assert_true(qnvme_rw(&n, false, 0, NLB, early, &cqe));
            g_assert_cmphex(cqe.status, ==, 0);
        }
        while (sync_count(src.qts) == syncs &&
               !strcmp(status_of(src.qts), "active")) {
            if (g_get_monotonic_time() > deadline) {
                g_autoptr(JsonObject) r = qtest_qmp(src.qts,
                    "{'execute': 'query-migrate'}");
                g_autofree char *t = json_to_string(
                    json_node_init_object(json_node_alloc(), r), false);

                g_error("no RAM pass in time: %s", t);
            }
            g_usleep(20 * 1000);
        }
        syncs = sync_count(src.qts);
        if (strcmp(status_of(src.qts), "active")) {
            break;
        }
    }
    set_param(src.qts, "{'max-bandwidth': 0}");
    g_assert_cmpstr(wait_status(src.qts, "completed|failed"), ==,
                    "completed");
    g_assert_cmpstr(wait_status(dst.qts, "completed|failed"), ==,
                    "completed");
    rs = runstate_of(src.qts);
    g_assert_cmpstr(rs, ==, "postmigrate");
    q = qtest_qmp(src.qts, "{'execute': 'query-migrate'}");
    ret = json_object_get_object_member(q, "return");
    g_test_message("%s namespace: total %" PRId64 " ms, downtime %" PRId64
                   " ms, %" PRId64 " RAM passes", shared ? "shared" : "ram",
                   json_object_get_int_member(ret, "total-time"),
                   json_object_get_int_member(ret, "downtime"),
                   json_object_get_int_member(
                       json_object_get_object_member(ret, "ram"),
                       "dirty-sync-count"));

    /* After: the destination's guest goes on with the same queues. */
    side_attach(&dst);
    nd = n;
    nd.qts = dst.qts;
    nd.dev = dst.dev;
    pattern(want, 0, 1);
    qtest_memread(dst.qts, early, got, sizeof(got));
    if (memcmp(want, got, BLOCK)) {
        g_error("the read the device did during the migration did not "
                "reach the destination's RAM (dirty-page log)");
    }
    for (unsigned b = 0; b < 12; b++) {
        if (b < 8) {
            nvme_check_block(&nd, rbuf, b, 1);
        } else if (b - 8 < 4) {
            /* Writes done while migrating (the loop may end early). */
            QNvmeCqe cqe;
            uint8_t blank[BLOCK] = { 0 };

            qtest_memset(dst.qts, rbuf, 0, BLOCK);
            g_assert_true(qnvme_rw(&nd, false, (uint64_t)b * NLB, NLB, rbuf,
                                   &cqe));
            g_assert_cmphex(cqe.status, ==, 0);
            pattern(want, b, 2);
            qtest_memread(dst.qts, rbuf, got, sizeof(got));
            g_assert_true(!memcmp(want, got, BLOCK) ||
                          !memcmp(blank, got, BLOCK));
        }
    }
    /* A new command completes with an interrupt, then reads back. */
    qtest_writel(dst.qts, MSI_TARGET + 4 * IO_VECTOR, 0);
    nvme_write_block(&nd, wbuf, 12, 3);
    g_assert_true(wait_ram(dst.qts, MSI_TARGET + 4 * IO_VECTOR,
                           MSI_DATA_BASE + IO_VECTOR));
    nvme_check_block(&nd, rbuf, 12, 3);
    /* And a write done during the migration was not lost: block 8. */
    nvme_check_block(&nd, rbuf, 8, 2);

    side_stop(&src);
    qpci_device_free(dst.dev);
    qpci_free_pc(dst.bus);
    dst.dev = NULL;
    side_stop(&dst);
    unlink(file);
}

static void test_shared_file(void)
{
    migrate_nvme(true);
}

static void test_ram_copied(void)
{
    migrate_nvme(false);
}

/*
 * Ten migrations, each to a new Conduit and a new server (ram namespace:
 * the data travels in the device state every time).  On every hop a
 * write is done while the migration runs; after it, the destination
 * reads back every block written on any earlier hop, and a new command
 * completes with an MSI-X interrupt.
 */
#define HOPS 10

static void test_ten_hops(void)
{
    Side sides[2];
    Side *src = &sides[0], *dst = &sides[1], *t;
    QNvme n;
    uint64_t wbuf, rbuf;
    int64_t total = 0, worst = 0;

    side_start(src, NULL, NULL);
    bring_up(src, &n);
    wbuf = qnvme_alloc(&n, BLOCK);
    rbuf = qnvme_alloc(&n, BLOCK);
    for (unsigned b = 0; b < 4; b++) {
        nvme_write_block(&n, wbuf, b, 1);
    }
    fill_junk(src->qts);

    for (unsigned hop = 0; hop < HOPS; hop++) {
        g_autofree char *sock = g_strdup_printf("%s/hop%u.sock", tmpdir,
                                                hop);
        g_autofree char *inc = g_strdup_printf("unix:%s", sock);
        g_autofree char *rs = NULL;
        g_autoptr(JsonObject) q = NULL;
        JsonObject *ret;
        int64_t downtime;

        side_start(dst, NULL, inc);
        /* Slow enough that the write below runs inside the migration. */
        set_param(src->qts, "{'max-bandwidth': 4194304}");
        {
            g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src->qts,
                "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", inc);
        }
        g_assert_cmpstr(wait_status(src->qts, "active|completed|failed"),
                        ==, "active");
        nvme_write_block(&n, wbuf, 16 + hop, 2 + hop);
        /* 6 MiB of RAM at 4 MiB/s: the write was inside the migration. */
        g_assert_cmpstr(status_of(src->qts), ==, "active");
        set_param(src->qts, "{'max-bandwidth': 0}");
        if (strcmp(wait_status(src->qts, "completed|failed"),
                   "completed")) {
            g_autofree char *why = error_desc(src->qts);

            g_error("hop %u failed: %s", hop + 1, why);
        }
        g_assert_cmpstr(wait_status(dst->qts, "completed|failed"), ==,
                        "completed");
        rs = runstate_of(src->qts);
        g_assert_cmpstr(rs, ==, "postmigrate");
        q = qtest_qmp(src->qts, "{'execute': 'query-migrate'}");
        ret = json_object_get_object_member(q, "return");
        downtime = json_object_get_int_member(ret, "downtime");
        total += json_object_get_int_member(ret, "total-time");
        worst = MAX(worst, downtime);

        /* The guest goes on at the destination with the same queues. */
        side_attach(dst);
        n.qts = dst->qts;
        n.dev = dst->dev;
        for (unsigned b = 0; b < 4; b++) {
            nvme_check_block(&n, rbuf, b, 1);
        }
        for (unsigned k = 0; k <= hop; k++) {
            nvme_check_block(&n, rbuf, 16 + k, 2 + k);
        }
        qtest_writel(dst->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        nvme_write_block(&n, wbuf, 4, 100 + hop);
        g_assert_true(wait_ram(dst->qts, MSI_TARGET + 4 * IO_VECTOR,
                               MSI_DATA_BASE + IO_VECTOR));
        nvme_check_block(&n, rbuf, 4, 100 + hop);

        side_stop(src);
        unlink(sock);
        t = src;
        src = dst;
        dst = t;
    }
    g_test_message("%d hops: %" PRId64 " ms in all, worst downtime %" PRId64
                   " ms", HOPS, total, worst);
    side_stop(src);
}

/* The source VM and its device after a failed migration. */
static void check_source_alive(Side *src, QNvme *n, bool device_ok)
{
    g_autofree char *rs = runstate_of(src->qts);

    g_assert_cmpstr(rs, ==, "running");
    if (device_ok) {
        uint64_t wbuf = qnvme_alloc(n, BLOCK), rbuf = qnvme_alloc(n, BLOCK);

        qtest_writel(src->qts, MSI_TARGET + 4 * IO_VECTOR, 0);
        nvme_write_block(n, wbuf, 3, 9);
        g_assert_true(wait_ram(src->qts, MSI_TARGET + 4 * IO_VECTOR,
                               MSI_DATA_BASE + IO_VECTOR));
        nvme_check_block(n, rbuf, 3, 9);
        nvme_check_block(n, rbuf, 0, 1);
    }
}

static void test_dest_server_dies(void)
{
    g_autofree char *sock = g_build_filename(tmpdir, "dsd.sock", NULL);
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    g_autofree char *err = NULL;
    Side src, dst;
    QNvme n;
    uint64_t wbuf;

    side_start(&src, NULL, NULL);
    bring_up(&src, &n);
    wbuf = qnvme_alloc(&n, BLOCK);
    nvme_write_block(&n, wbuf, 0, 1);
    side_start(&dst, NULL, inc);
    set_return_path(src.qts);
    set_return_path(dst.qts);
    qnvme_server_kill(&dst.srv, SIGKILL);
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src.qts,
            "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", inc);
    }
    g_assert_cmpstr(wait_status(src.qts, "completed|failed"), ==, "failed");
    err = error_desc(src.qts);
    g_test_message("source: %s", err);
    /*
     * The destination's verdict names the device; if it exited before
     * the verdict went out, the return path says that instead.
     */
    g_assert_true(strstr(err, "vfio") || strstr(err, "return path"));
    check_source_alive(&src, &n, true);
    side_stop(&src);
    /* The destination gave up on the load (exit-on-error), naming it. */
    g_assert_cmpint(WEXITSTATUS(qtest_wait_exit(dst.qts)), ==, 1);
    g_test_message("destination: %s", qtest_get_stderr(dst.qts));
    g_assert_nonnull(strstr(qtest_get_stderr(dst.qts), "vfio"));
    side_stop(&dst);
}

static void test_source_server_dies(void)
{
    g_autofree char *sock = g_build_filename(tmpdir, "ssd.sock", NULL);
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    g_autofree char *err = NULL;
    Side src, dst;
    QNvme n;
    uint64_t wbuf;

    side_start(&src, NULL, NULL);
    bring_up(&src, &n);
    wbuf = qnvme_alloc(&n, BLOCK);
    nvme_write_block(&n, wbuf, 0, 1);
    fill_junk(src.qts);
    side_start(&dst, NULL, inc);
    set_param(src.qts, "{'max-bandwidth': 2097152}");
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src.qts,
            "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", inc);
    }
    wait_status(src.qts, "active");
    qnvme_server_kill(&src.srv, SIGKILL);
    set_param(src.qts, "{'max-bandwidth': 0}");
    g_assert_cmpstr(wait_status(src.qts, "completed|failed"), ==, "failed");
    err = error_desc(src.qts);
    g_test_message("source: %s", err);
    g_assert_nonnull(strstr(err, "vfio"));
    /* The VM runs on; its device lost its server (reads all-ones). */
    check_source_alive(&src, &n, false);
    side_stop(&src);
    g_assert_cmpint(WEXITSTATUS(qtest_wait_exit(dst.qts)), ==, 1);
    side_stop(&dst);
}

/* A stream saved to a file and cut inside the device data. */
static void test_truncated_device_data(void)
{
    g_autofree char *file = g_build_filename(tmpdir, "trunc.mig", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    g_autofree char *data = NULL;
    const char *needle = "/machine/peripheral/nvme0/vfio";
    Side src, dst;
    QNvme n;
    uint64_t wbuf;
    gsize len;
    char *at = NULL;
    int status;

    side_start(&src, NULL, NULL);
    bring_up(&src, &n);
    wbuf = qnvme_alloc(&n, BLOCK);
    nvme_write_block(&n, wbuf, 0, 1);
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src.qts,
            "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", uri);
    }
    g_assert_cmpstr(wait_status(src.qts, "completed|failed"), ==,
                    "completed");
    g_assert_true(g_file_get_contents(file, &data, &len, NULL));
    /* The first device-data record: cut the stream 20 bytes into it. */
    for (char *p = data; p && p < data + len - strlen(needle);
         p = memchr(p + 1, '/', data + len - p - 1)) {
        if (!memcmp(p, needle, strlen(needle))) {
            at = p;
            break;
        }
    }
    g_assert_nonnull(at);
    g_assert_true(g_file_set_contents(file, data,
                                      at - data + strlen(needle) + 20,
                                      NULL));
    side_stop(&src);

    side_start(&dst, NULL, "defer");
    {
        g_autoptr(JsonObject) r = qtest_qmp(dst.qts,
            "{'execute': 'migrate-incoming', 'arguments': {'uri': '%s'}}", uri);

        g_assert_true(json_object_has_member(r, "return"));
    }
    status = qtest_wait_exit(dst.qts);
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_test_message("destination: %s", qtest_get_stderr(dst.qts));
    g_assert_nonnull(strstr(qtest_get_stderr(dst.qts), "load of migration "
                            "failed"));
    side_stop(&dst);
    unlink(file);
}

int main(int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("vfio-user-mig-XXXXXX", &err);
    g_assert_no_error(err);
    g_test_add_func("/vfio-user/migration/shared-file", test_shared_file);
    g_test_add_func("/vfio-user/migration/ram-copied", test_ram_copied);
    g_test_add_func("/vfio-user/migration/ten-hops", test_ten_hops);
    g_test_add_func("/vfio-user/migration/dest-server-dies",
                    test_dest_server_dies);
    g_test_add_func("/vfio-user/migration/source-server-dies",
                    test_source_server_dies);
    g_test_add_func("/vfio-user/migration/truncated-device-data",
                    test_truncated_device_data);
    ret = g_test_run();
    rmdir(tmpdir);
    return ret;
}
