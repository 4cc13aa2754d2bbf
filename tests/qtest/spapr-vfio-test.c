/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci with the in-tree vfio-user-nvme server behind the pseries
 * PHB: config space through RTAS, MSI-X vectors granted by ibm,change-msi
 * (the guest never writes the table), NVMe completions arriving as
 * interrupt sources, and the seed scenario: MSI-X table on the doorbell
 * page with 64 KiB host pages, where pseries traps nothing of BAR0 and the
 * x86 pc machine (run from the same test) traps every doorbell.
 *
 * The NVMe driving is minimal and endian-explicit (queues are little-
 * endian bytes in RAM; registers are swapped on the big-endian guest), so
 * the same code drives both machines.
 *
 * Debugging: $SPAPR_TEST_ARGS is appended to the pseries command line
 * (e.g. "-trace spapr_*"), $SPAPR_TEST_SERVER_ARGS to the server's, and
 * $SPAPR_TEST_VERBOSE prints every x-query-vfio answer.
 */
#include "qemu/osdep.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "config-host.h"
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/pci-spapr.h"
#include "libqos/msix.h"
#include "libqos/rtas.h"
#include "libqos/vfio-query.h"

#define NVME_DEVFN QPCI_DEVFN(4, 0)
#define NVME_VENDOR 0x1b36
#define ICS_PATH "/machine/ics"
#define WAIT_US (10 * G_USEC_PER_SEC)

/* Guest RAM use (both machines have RAM from 0). */
#define ASQ_ADDR 0x200000ULL
#define ACQ_ADDR 0x201000ULL
#define IOSQ_ADDR 0x202000ULL
#define IOCQ_ADDR 0x203000ULL
#define ID_BUF 0x204000ULL
#define DATA_BUF 0x205000ULL
#define PC_MSI_TARGET 0x300000ULL   /* pc: vectors write into RAM here */
#define QDEPTH 16

#define REG_CAP 0x00
#define REG_CC 0x14
#define REG_CSTS 0x1c
#define REG_AQA 0x24
#define REG_ASQ 0x28
#define REG_ACQ 0x30
#define DOORBELLS 0x1000
#define DOORBELL_PAGE 0x1000

/* Table and PBA on the doorbell page: the layout the issue is about. */
#define LAYOUT_DB_PAGE "--msix-bar 0 --msix-table-offset 0x1800 " \
                       "--msix-pba-offset 0x1c00"

typedef struct Server {
    GPid pid;
    char *dir;
    char *sock;
} Server;

typedef struct Nvme {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    bool spapr;
    QPCIBar bar0;
    uint16_t cid;
    uint16_t sq_tail[2], cq_head[2];
    bool phase[2];
    Server srv;
} Nvme;

/* ---- the server ---- */

static const char *server_binary(void)
{
    const char *env = getenv("VFIO_USER_NVME");

    return env ? env : CONDUIT_BUILD_DIR "/vfio-user-nvme";
}

/* The server must not outlive a test that aborts. */
static void server_child_setup(gpointer data)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static void server_start(Server *s, const char *extra)
{
    g_autofree char *cmd = NULL;
    g_auto(GStrv) argv = NULL;
    g_autoptr(GError) err = NULL;
    gint64 deadline;

    s->dir = g_dir_make_tmp("spapr-vfio-test-XXXXXX", &err);
    g_assert_no_error(err);
    s->sock = g_build_filename(s->dir, "nvme.sock", NULL);
    cmd = g_strdup_printf("%s --socket %s --backend ram --size 4M --queues 2 "
                          "%s %s", server_binary(), s->sock, extra,
                          getenv("SPAPR_TEST_SERVER_ARGS") ?: "");
    g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, &err));
    g_assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                server_child_setup, NULL, &s->pid, &err));
    g_assert_no_error(err);
    deadline = g_get_monotonic_time() + WAIT_US;
    while (!g_file_test(s->sock, G_FILE_TEST_EXISTS)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(2000);
    }
}

static void server_stop(Server *s)
{
    int status;

    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, &status, 0);
        g_spawn_close_pid(s->pid);
    }
    unlink(s->sock);
    rmdir(s->dir);
    g_free(s->sock);
    g_free(s->dir);
}

/* ---- machine set-up ---- */

static void nvme_start(Nvme *n, bool spapr, const char *srv_args,
                       const char *dev_opts)
{
    memset(n, 0, sizeof(*n));
    n->spapr = spapr;
    n->phase[0] = n->phase[1] = true;
    server_start(&n->srv, srv_args);
    if (spapr) {
        n->qts = qtest_initf("-M pseries -m 256M -device vfio-user-pci,"
                             "id=nvme0,addr=04.0,socket=%s%s %s", n->srv.sock,
                             dev_opts, getenv("SPAPR_TEST_ARGS") ?: "");
        n->bus = qpci_new_spapr(n->qts);
    } else {
        /* The other binary of this build, for the side-by-side check. */
        g_autofree char *saved = g_strdup(getenv("QTEST_BINARY"));

        g_setenv("QTEST_BINARY", CONDUIT_BUILD_DIR "/conduit-system-x86_64",
                 true);
        n->qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=nvme0,"
                             "addr=04.0,socket=%s%s", n->srv.sock, dev_opts);
        if (saved) {
            g_setenv("QTEST_BINARY", saved, true);
        } else {
            g_unsetenv("QTEST_BINARY");
        }
        n->bus = qpci_new_pc(n->qts);
    }
    n->dev = qpci_device_find(n->bus, NVME_DEVFN);
    g_assert_nonnull(n->dev);
    n->bar0 = qpci_bar(n->dev, 0);
    g_assert_cmphex(n->bar0.addr, !=, QPCI_BAR_NONE);
}

static void nvme_stop(Nvme *n)
{
    qpci_device_free(n->dev);
    if (n->spapr) {
        qpci_free_spapr(n->bus);
    } else {
        qpci_free_pc(n->bus);
    }
    qtest_quit(n->qts);
    server_stop(&n->srv);
}

static uint32_t cfg_addr(void)
{
    return qrtas_config_addr(NVME_DEVFN, 0);
}

/* ---- registers and queues ---- */

static uint32_t reg_read(Nvme *n, uint32_t off)
{
    if (n->spapr) {
        return qpci_spapr_io_readl(n->dev, n->bar0, off);
    }
    return qpci_io_readl(n->dev, n->bar0, off);
}

static void reg_write(Nvme *n, uint32_t off, uint32_t v)
{
    if (n->spapr) {
        qpci_spapr_io_writel(n->dev, n->bar0, off, v);
    } else {
        qpci_io_writel(n->dev, n->bar0, off, v);
    }
}

static void reg_write64(Nvme *n, uint32_t off, uint64_t v)
{
    reg_write(n, off, (uint32_t)v);
    reg_write(n, off + 4, v >> 32);
}

static void submit(Nvme *n, int q, uint8_t opcode, uint32_t nsid,
                   uint64_t prp1, uint32_t cdw10, uint32_t cdw11,
                   uint32_t cdw12)
{
    uint8_t sqe[64] = { 0 };
    uint64_t sq = q ? IOSQ_ADDR : ASQ_ADDR;

    sqe[0] = opcode;
    stw_le_p(sqe + 2, ++n->cid);
    stl_le_p(sqe + 4, nsid);
    stq_le_p(sqe + 24, prp1);
    stl_le_p(sqe + 40, cdw10);
    stl_le_p(sqe + 44, cdw11);
    stl_le_p(sqe + 48, cdw12);
    qtest_memwrite(n->qts, sq + 64 * n->sq_tail[q], sqe, sizeof(sqe));
    n->sq_tail[q] = (n->sq_tail[q] + 1) % QDEPTH;
    reg_write(n, DOORBELLS + 8 * q, n->sq_tail[q]);
}

/* Polls the CQ in RAM; returns the status field (0 is success). */
static uint16_t reap(Nvme *n, int q)
{
    uint64_t cq = q ? IOCQ_ADDR : ACQ_ADDR;
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    uint8_t cqe[16];

    for (;;) {
        qtest_memread(n->qts, cq + 16 * n->cq_head[q], cqe, sizeof(cqe));
        if ((lduw_le_p(cqe + 14) & 1) == n->phase[q]) {
            break;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(200);
    }
    g_assert_cmpuint(lduw_le_p(cqe + 12), ==, n->cid);
    n->cq_head[q] = (n->cq_head[q] + 1) % QDEPTH;
    if (!n->cq_head[q]) {
        n->phase[q] = !n->phase[q];
    }
    reg_write(n, DOORBELLS + 8 * q + 4, n->cq_head[q]);
    return lduw_le_p(cqe + 14) >> 1;
}

static void nvme_enable(Nvme *n)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    qtest_memset(n->qts, ASQ_ADDR, 0, 0x6000);
    reg_write(n, REG_AQA, (QDEPTH - 1) << 16 | (QDEPTH - 1));
    reg_write64(n, REG_ASQ, ASQ_ADDR);
    reg_write64(n, REG_ACQ, ACQ_ADDR);
    reg_write(n, REG_CC, 1 | 6 << 16 | 4 << 20);
    while (!(reg_read(n, REG_CSTS) & 1)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(500);
    }
}

static void nvme_identify(Nvme *n)
{
    uint8_t id[2];

    submit(n, 0, 0x06, 0, ID_BUF, 1, 0, 0);
    g_assert_cmphex(reap(n, 0), ==, 0);
    qtest_memread(n->qts, ID_BUF, id, sizeof(id));
    g_assert_cmphex(lduw_le_p(id), ==, NVME_VENDOR);
}

static void nvme_create_io_queues(Nvme *n, uint16_t vector)
{
    /* CQ 1 with interrupts on vector, then SQ 1 feeding it. */
    submit(n, 0, 0x05, 0, IOCQ_ADDR, (QDEPTH - 1) << 16 | 1,
           (uint32_t)vector << 16 | 3, 0);
    g_assert_cmphex(reap(n, 0), ==, 0);
    submit(n, 0, 0x01, 0, IOSQ_ADDR, (QDEPTH - 1) << 16 | 1, 1 << 16 | 1, 0);
    g_assert_cmphex(reap(n, 0), ==, 0);
}

/* One 4 KiB write then its read-back: two SQ and two CQ doorbells. */
static void nvme_io_pair(Nvme *n, uint32_t lba)
{
    uint8_t pattern[4096], back[4096];

    for (size_t i = 0; i < sizeof(pattern); i++) {
        pattern[i] = (uint8_t)(i * 3 + lba);
    }
    qtest_memwrite(n->qts, DATA_BUF, pattern, sizeof(pattern));
    submit(n, 1, 0x01, 1, DATA_BUF, lba, 0, 7);
    g_assert_cmphex(reap(n, 1), ==, 0);
    qtest_memset(n->qts, DATA_BUF, 0, sizeof(back));
    submit(n, 1, 0x02, 1, DATA_BUF, lba, 0, 7);
    g_assert_cmphex(reap(n, 1), ==, 0);
    qtest_memread(n->qts, DATA_BUF, back, sizeof(back));
    g_assert_cmpmem(back, sizeof(back), pattern, sizeof(pattern));
}

static bool wait_irq(Nvme *n, int irq)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (!qtest_get_irq(n->qts, irq)) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(200);
    }
    return true;
}

/* ---- x-query-vfio ---- */

typedef struct Traps {
    int64_t bar0_accesses;      /* forwarded + mmap-served, both ways */
    int64_t bar0_accesses_total;    /* since start-up, bring-up included */
    guint bar0_trapped_ranges;
    int64_t table_accesses;
    int64_t table_accesses_total;   /* since start-up, bring-up included */
    bool table_emulated;
    bool db_page_trapped;
} Traps;

static Traps query_traps(Nvme *n)
{
    JsonObject *dev = qvfio_query_device(n->qts);
    JsonObject *b = qvfio_query_bar(dev, 0);
    JsonObject *m = json_object_get_object_member(dev, "msix");
    Traps t = {
        json_object_get_int_member(b, "forwarded-reads") +
        json_object_get_int_member(b, "forwarded-writes") +
        json_object_get_int_member(b, "mmap-served-reads") +
        json_object_get_int_member(b, "mmap-served-writes"),
        0,
        json_array_get_length(json_object_get_array_member(b, "trapped")),
        json_object_get_int_member(m, "table-accesses"),
        json_object_get_int_member(m, "table-accesses"),
        json_object_get_boolean_member(m, "table-emulated"),
        qvfio_bar_covers(b, "trapped", DOORBELL_PAGE),
    };

    if (getenv("SPAPR_TEST_VERBOSE")) {
        JsonNode *node = json_node_init_object(json_node_alloc(), dev);
        g_autofree char *text = json_to_string(node, true);
        g_test_message("%s", text);
        json_node_unref(node);
    }
    json_object_unref(dev);
    t.bar0_accesses_total = t.bar0_accesses;
    return t;
}

/* ---- tests ---- */

static void test_config_through_rtas(void)
{
    Nvme n;
    uint32_t v;

    nvme_start(&n, true, "", "");
    g_assert_cmpint(qrtas_ibm_read_pci_config(n.qts, QRTAS_PHB_BUID,
                                              cfg_addr(), 2, &v), ==,
                    QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, NVME_VENDOR);
    g_assert_cmpint(qrtas_read_pci_config(n.qts, cfg_addr() + PCI_CLASS_PROG,
                                          4, &v), ==, QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_read_pci_config(n.qts, cfg_addr() + PCI_REVISION_ID,
                                          4, &v), ==, QRTAS_SUCCESS);
    g_assert_cmphex(v >> 8, ==, 0x010802);      /* NVMe class code */
    nvme_stop(&n);
}

static void test_msix_via_rtas(void)
{
    Nvme n;
    uint32_t count = 0, seq = 0, irq[2], edge;
    uint8_t cap;

    nvme_start(&n, true, "", "");
    /* The device offers 3 vectors (2 queues + admin); ask for 2. */
    g_assert_cmpint(qrtas_ibm_change_msi(n.qts, QRTAS_PHB_BUID, cfg_addr(),
                                         QRTAS_MSI_MSIX, 2, &count, &seq),
                    ==, QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 2);
    for (int i = 0; i < 2; i++) {
        g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                            n.qts, QRTAS_PHB_BUID, cfg_addr(), i, &irq[i],
                            &edge), ==, QRTAS_SUCCESS);
        g_assert_cmpuint(edge, ==, 1);
    }
    g_assert_cmpuint(irq[0], !=, irq[1]);

    /* The guest only sets MSI-X enable; the machine did the rest. */
    qtest_irq_intercept_in(n.qts, ICS_PATH);
    cap = qpci_find_capability(n.dev, PCI_CAP_ID_MSIX, 0);
    g_assert_cmpint(cap, !=, 0);
    qpci_config_writew(n.dev, cap + PCI_MSIX_FLAGS,
                       qpci_config_readw(n.dev, cap + PCI_MSIX_FLAGS) |
                       PCI_MSIX_FLAGS_ENABLE);
    nvme_enable(&n);
    nvme_identify(&n);
    /* Admin completions interrupt on vector 0. */
    g_assert_true(wait_irq(&n, irq[0]));
    g_assert_false(qtest_get_irq(n.qts, irq[1]));
    nvme_create_io_queues(&n, 1);
    nvme_io_pair(&n, 0);
    g_assert_true(wait_irq(&n, irq[1]));

    /* Zero vectors: both sources freed (lowered), the vectors masked. */
    g_assert_cmpint(qrtas_ibm_change_msi(n.qts, QRTAS_PHB_BUID, cfg_addr(),
                                         QRTAS_MSI_MSIX, 0, &count, &seq),
                    ==, QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 0);
    g_assert_false(qtest_get_irq(n.qts, irq[0]));
    g_assert_false(qtest_get_irq(n.qts, irq[1]));
    nvme_io_pair(&n, 8);
    g_assert_false(qtest_get_irq(n.qts, irq[1]));
    nvme_stop(&n);
}

/*
 * One side of the seed scenario: bring the controller up, then count
 * what the doorbells and the table page cost while I/O runs.
 */
static Traps seed_run(Nvme *n, bool spapr, const char *dev_opts)
{
    Traps before, after;
    int irq = 0;

    nvme_start(n, spapr, LAYOUT_DB_PAGE, dev_opts);
    if (spapr) {
        uint32_t count = 0, seq = 0, edge, v;

        g_assert_cmpint(qrtas_ibm_change_msi(n->qts, QRTAS_PHB_BUID,
                                             cfg_addr(), QRTAS_MSI_MSIX, 2,
                                             &count, &seq), ==,
                        QRTAS_SUCCESS);
        g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                            n->qts, QRTAS_PHB_BUID, cfg_addr(), 1, &v,
                            &edge), ==, QRTAS_SUCCESS);
        irq = v;
        qtest_irq_intercept_in(n->qts, ICS_PATH);
        qpci_msix_enable(n->dev);       /* config space only */
    } else {
        qpci_msix_enable(n->dev);
        for (int v = 0; v < 2; v++) {
            qpci_msix_set_vector(n->dev, v, PC_MSI_TARGET + 4 * v, 0x100 + v);
            qpci_msix_mask_vector(n->dev, v, false);
        }
    }
    nvme_enable(n);
    nvme_identify(n);
    nvme_create_io_queues(n, 1);
    before = query_traps(n);
    for (uint32_t lba = 0; lba < 32; lba += 8) {
        nvme_io_pair(n, lba);
    }
    if (spapr) {
        g_assert_true(wait_irq(n, irq));
    } else {
        g_assert_cmphex(qtest_readl(n->qts, PC_MSI_TARGET + 4), ==, 0x101);
    }
    after = query_traps(n);
    after.bar0_accesses -= before.bar0_accesses;
    after.table_accesses -= before.table_accesses;
    return after;
}

/*
 * 4 KiB host pages: the doorbell page also holds the table.  pseries
 * leaves it mapped (no table overlay), so I/O costs Conduit nothing; pc
 * must trap the page to emulate the table, and every doorbell exits.
 */
static void test_seed_table_on_doorbell_page(void)
{
    Nvme n;
    Traps ppc, pc;

    ppc = seed_run(&n, true, "");
    nvme_stop(&n);
    pc = seed_run(&n, false, "");
    nvme_stop(&n);

    g_assert_false(ppc.table_emulated);
    g_assert_false(ppc.db_page_trapped);
    g_assert_cmpint(ppc.bar0_accesses, ==, 0);
    g_assert_cmpint(ppc.bar0_accesses_total, ==, 0);
    g_assert_cmpuint(ppc.bar0_trapped_ranges, ==, 0);
    g_assert_cmpint(ppc.table_accesses, ==, 0);
    g_assert_cmpint(ppc.table_accesses_total, ==, 0);
    g_assert_true(pc.table_emulated);
    g_assert_true(pc.db_page_trapped);
    g_assert_cmpuint(pc.bar0_trapped_ranges, ==, 1);
    g_assert_cmpint(pc.table_accesses_total, >, 0);
    /* 4 I/O pairs, each 2 SQ and 2 CQ doorbells. */
    g_assert_cmpint(pc.bar0_accesses, ==, 4 * 4);
}

/*
 * 64 KiB host pages, the seed scenario: the whole 16 KiB BAR0 (registers,
 * doorbells, table) lies in one host page, which the server offers whole
 * with MSIX_MAPPABLE.  pseries has no table overlay, so the page is a
 * plain mapping and nothing of BAR0 ever reaches Conduit; pc needs the
 * overlay, so the page traps and every doorbell is served by Conduit.
 */
static void test_seed_64k_pages(void)
{
    Nvme n;
    Traps ppc, pc;

    ppc = seed_run(&n, true, ",x-host-page-size=65536");
    nvme_stop(&n);
    pc = seed_run(&n, false, ",x-host-page-size=65536");
    nvme_stop(&n);

    g_assert_false(ppc.table_emulated);
    g_assert_false(ppc.db_page_trapped);
    g_assert_cmpuint(ppc.bar0_trapped_ranges, ==, 0);
    g_assert_cmpint(ppc.bar0_accesses, ==, 0);
    g_assert_cmpint(ppc.bar0_accesses_total, ==, 0);
    g_assert_cmpint(ppc.table_accesses, ==, 0);
    g_assert_cmpint(ppc.table_accesses_total, ==, 0);
    g_assert_true(pc.table_emulated);
    g_assert_true(pc.db_page_trapped);
    g_assert_cmpuint(pc.bar0_trapped_ranges, ==, 1);
    g_assert_cmpint(pc.table_accesses_total, >, 0);
    /* 4 I/O pairs, each 2 SQ and 2 CQ doorbells, all on the one page. */
    g_assert_cmpint(pc.bar0_accesses, ==, 4 * 4);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/spapr/vfio-user-pci/config-through-rtas",
                    test_config_through_rtas);
    g_test_add_func("/spapr/vfio-user-pci/msix-via-rtas-irq-per-vector",
                    test_msix_via_rtas);
    g_test_add_func("/spapr/vfio-user-pci/seed/table-on-doorbell-page",
                    test_seed_table_on_doorbell_page);
    g_test_add_func("/spapr/vfio-user-pci/seed/64k-pages-pseries-traps-nothing",
                    test_seed_64k_pages);
    return g_test_run();
}
