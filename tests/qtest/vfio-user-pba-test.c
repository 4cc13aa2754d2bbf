/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pending bit of a masked MSI-X vector, for every MSI-X layout
 * vfio-user-pci supports, with the emulated table relocated or not and
 * with MSIX_MAPPABLE advertised or withheld (issue 25's matrix).
 *
 * Each case drives the in-tree vfio-user-nvme server through the guest
 * view, as a driver would:
 *   1. vector 1 (the I/O queue's) masked, a read completes: the vector's
 *      bit in the PBA is set and no message is written;
 *   2. unmasked: exactly one message arrives and the PBA reads clear;
 *   3. another read while unmasked: a message, and still no pending bit.
 * Messages are MSI writes into guest RAM; they are counted exactly with
 * the msix_notify trace event (one per message msix.c sends), which
 * Conduit prints on its stderr before it answers the next qtest command.
 * The PBA is read where the capability points, whatever lies there.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
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
#define WAIT_US (10 * G_USEC_PER_SEC)

typedef enum Reloc {
    RELOC_OFF,          /* x-msix-relocation=off */
    RELOC_ON,           /* x-msix-relocation=auto: always moved */
    RELOC_DEFAULT,      /* no option: where-helpful */
} Reloc;

typedef struct Layout {
    const char *name;
    /* vfio-user-nvme arguments; %x is the host page size where used. */
    const char *server_fmt;
    const char *dev_opts;
    /* Whether the default (where-helpful) relocates it, MSIX_MAPPABLE on. */
    bool default_relocates;
} Layout;

/*
 * BAR0 of vfio-user-nvme: registers at 0, doorbells from 0x1000.  The
 * table of "pba-on-doorbell-page" sits on a host page of its own past
 * the doorbells' (0x3000, or one page up with 64 KiB pages).
 */
static const Layout layouts[] = {
    { "table-on-doorbell-page",
      "--msix-bar 0 --msix-table-offset 0x1800 --msix-pba-offset 0x1c00",
      "", true },
    { "table-in-own-bar", "--msix-bar 4", "", false },
    { "pba-on-doorbell-page",
      "--msix-bar 0 --msix-table-offset 0x%x --msix-pba-offset 0x1c00",
      "", false },
    { "64k-host-pages",
      "--msix-bar 0 --msix-table-offset 0x3000 --msix-pba-offset 0x3800",
      ",x-host-page-size=65536", true },
};

static const char *const reloc_names[] = { "off", "on", "default" };
static const char *const reloc_opts[] = {
    ",x-msix-relocation=off", ",x-msix-relocation=auto", "",
};

typedef struct Case {
    const Layout *layout;
    Reloc reloc;
    bool mappable;
} Case;

typedef struct Ctx {
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QNvme nvme;
    uint64_t buf;
} Ctx;

static void ctx_start(Ctx *c, const Case *t)
{
    g_autofree char *args = NULL;

    args = g_strdup_printf(t->layout->server_fmt,
                           MAX(0x3000, getpagesize()));
    if (!t->mappable) {
        char *more = g_strconcat(args, " --no-msix-mappable", NULL);

        g_free(args);
        args = more;
    }
    memset(c, 0, sizeof(*c));
    qnvme_server_start(&c->srv, args);
    c->qts = qtest_initf("-M pc -m 64M -trace msix_notify "
                         "-device vfio-user-pci,id=nvme0,addr=04.0,"
                         "socket=%s%s%s", c->srv.sock, t->layout->dev_opts,
                         reloc_opts[t->reloc]);
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

static bool relocated(Ctx *c)
{
    JsonObject *dev = qvfio_query_device(c->qts);
    JsonObject *m = json_object_get_object_member(dev, "msix");
    bool v = json_object_get_boolean_member(m, "relocated");

    json_object_unref(dev);
    return v;
}

/* Messages msix.c has sent for @vector so far (msix_notify trace lines). */
static int messages_sent(Ctx *c, unsigned vector)
{
    g_autofree char *needle = g_strdup_printf(" vector %u addr ", vector);
    const char *err;
    int n = 0;

    /* A round trip: whatever the last command traced is on stderr. */
    qtest_readl(c->qts, MSI_TARGET);
    err = qtest_get_stderr(c->qts);
    for (const char *p = strstr(err, "msix_notify "); p;
         p = strstr(p + 1, "msix_notify ")) {
        const char *eol = strchrnul(p, '\n');
        const char *hit = strstr(p, needle);

        if (hit && hit < eol) {
            n++;
        }
    }
    return n;
}

static uint32_t message(Ctx *c)
{
    return qtest_readl(c->qts, MSI_TARGET + 4 * IO_VECTOR);
}

static bool wait_message(Ctx *c)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (message(c) != MSI_DATA_BASE + IO_VECTOR) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    return true;
}

/* The completion's event reaches Conduit in its own time. */
static bool wait_pending(Ctx *c)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (!qpci_msix_pending(c->dev, IO_VECTOR)) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    return true;
}

/* The PBA's first qword, where the guest finds it. */
static uint64_t pba_word(Ctx *c)
{
    return qtest_readq(c->qts, qpci_msix_pba_addr(c->dev));
}

static void read_block(Ctx *c)
{
    QNvmeCqe cqe;

    g_assert_true(qnvme_rw(&c->nvme, false, 0, 8, c->buf, &cqe));
    g_assert_cmphex(cqe.status, ==, 0);
}

static void test_pba(gconstpointer data)
{
    const Case *t = data;
    Ctx c;
    int sent;
    uint64_t id;

    ctx_start(&c, t);
    qpci_msix_enable(c.dev);
    for (int v = 0; v <= IO_VECTOR; v++) {
        qpci_msix_set_vector(c.dev, v, MSI_TARGET + 4 * v,
                             MSI_DATA_BASE + v);
        qpci_msix_mask_vector(c.dev, v, false);
    }
    id = qnvme_enable_identify(&c.nvme);
    g_assert_cmphex(qtest_readw(c.qts, id), ==,
                    qpci_config_readw(c.dev, PCI_VENDOR_ID));
    g_assert_true(qnvme_create_io_queues(&c.nvme, 16, IO_VECTOR));
    c.buf = qnvme_alloc(&c.nvme, 4096);

    switch (t->reloc) {
    case RELOC_OFF:
        g_assert_false(relocated(&c));
        break;
    case RELOC_ON:
        g_assert_true(relocated(&c));
        break;
    case RELOC_DEFAULT:
        /* Only a page the device lets us map is worth untrapping. */
        g_assert_cmpint(relocated(&c), ==,
                        t->layout->default_relocates && t->mappable);
        break;
    }
    /* Nothing has fired masked yet: the PBA reads all clear. */
    g_assert_cmphex(pba_word(&c), ==, 0);

    /* 1. Masked: the completion sets the pending bit, sends nothing. */
    qpci_msix_mask_vector(c.dev, IO_VECTOR, true);
    qtest_writel(c.qts, MSI_TARGET + 4 * IO_VECTOR, 0);
    sent = messages_sent(&c, IO_VECTOR);
    read_block(&c);
    g_assert_true(wait_pending(&c));
    g_assert_cmphex(pba_word(&c), ==, 1ULL << IO_VECTOR);
    g_assert_cmphex(message(&c), ==, 0);
    g_assert_cmpint(messages_sent(&c, IO_VECTOR), ==, sent);

    /* 2. Unmasked: one message, and the bit is clear again. */
    qpci_msix_mask_vector(c.dev, IO_VECTOR, false);
    g_assert_true(wait_message(&c));
    g_assert_cmpint(messages_sent(&c, IO_VECTOR), ==, sent + 1);
    g_assert_false(qpci_msix_pending(c.dev, IO_VECTOR));
    g_assert_cmphex(pba_word(&c), ==, 0);

    /* 3. Unmasked, another completion: a message, no pending bit. */
    qtest_writel(c.qts, MSI_TARGET + 4 * IO_VECTOR, 0);
    read_block(&c);
    g_assert_true(wait_message(&c));
    g_assert_cmpint(messages_sent(&c, IO_VECTOR), ==, sent + 2);
    g_assert_cmphex(pba_word(&c), ==, 0);
    ctx_stop(&c);
}

int main(int argc, char **argv)
{
    g_autoptr(GPtrArray) cases = g_ptr_array_new_with_free_func(g_free);

    g_test_init(&argc, &argv, NULL);
    for (size_t l = 0; l < G_N_ELEMENTS(layouts); l++) {
        for (int r = RELOC_OFF; r <= RELOC_DEFAULT; r++) {
            for (int m = 1; m >= 0; m--) {
                Case *t = g_new0(Case, 1);
                g_autofree char *path = NULL;

                t->layout = &layouts[l];
                t->reloc = r;
                t->mappable = m;
                g_ptr_array_add(cases, t);
                path = g_strdup_printf("/vfio-user-pci/pba/%s/relocation-%s/"
                                       "msix-mappable-%s", layouts[l].name,
                                       reloc_names[r],
                                       m ? "advertised" : "withheld");
                g_test_add_data_func(path, t, test_pba);
            }
        }
    }
    return g_test_run();
}
