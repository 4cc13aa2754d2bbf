/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries machine seen through qtest, with pci-testdev behind the
 * PHB: RTAS config access (big-endian cells), BARs through the PHB
 * windows, ibm,change-msi programming MSI-X and MSI vectors, MSIs arriving
 * as interrupt sources, RTAS error statuses, the machine properties and
 * the device tree written by dumpdtb.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-spapr.h"
#include "libqos/rtas.h"

#define TESTDEV_VENDOR 0x1d0c
#define TESTDEV_DEVICE 0x0001
#define TESTDEV_MAGIC 0x54444e43
#define TESTDEV_REG_FIRE 0x08
#define TESTDEV_REG_FIRED 0x14
#define TESTDEV_TABLE 0x800
#define TESTDEV_PBA 0xc00
#define TESTDEV_DEVFN QPCI_DEVFN(4, 0)
#define ICS_PATH "/machine/ics"
#define BUID QRTAS_PHB_BUID

typedef struct Fixture {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    uint32_t cfg;       /* PAPR config address of the testdev */
} Fixture;

static void fixture_start(Fixture *f, const char *devopts)
{
    f->qts = qtest_initf("-M pseries -m 256M -device pci-testdev,addr=04.0%s",
                         devopts);
    f->bus = qpci_new_spapr(f->qts);
    f->dev = qpci_device_find(f->bus, TESTDEV_DEVFN);
    g_assert_nonnull(f->dev);
    f->cfg = qrtas_config_addr(TESTDEV_DEVFN, 0);
}

static void fixture_stop(Fixture *f)
{
    qpci_device_free(f->dev);
    qpci_free_spapr(f->bus);
    qtest_quit(f->qts);
}

/* ---- machine ---- */

static void test_machine_properties(void)
{
    Fixture f;
    g_autoptr(JsonObject) r = NULL;
    JsonNode *ret;

    fixture_start(&f, "");
    g_assert_true(qtest_big_endian(f.qts));
    ret = qtest_qmp_assert_success(f.qts, "{'execute': 'qom-get', "
                                   "'arguments': {'path': '/machine', "
                                   "'property': 'vfio-no-msix-emulation'}}");
    g_assert_true(json_node_get_boolean(ret));
    json_node_unref(ret);
    /* Read-only: a guest or management tool cannot turn it off. */
    r = qtest_qmp(f.qts, "{'execute': 'qom-set', 'arguments': {'path': "
                  "'/machine', 'property': 'vfio-no-msix-emulation', "
                  "'value': false}}");
    g_assert_nonnull(qtest_qmp_error_class(r));
    fixture_stop(&f);
}

/* ---- config space ---- */

static void test_config_read_forms(void)
{
    Fixture f;
    uint32_t v;

    fixture_start(&f, "");
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg, 2, &v), ==,
                    QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, TESTDEV_VENDOR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg, 4, &v), ==,
                    QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, TESTDEV_DEVICE << 16 | TESTDEV_VENDOR);
    g_assert_cmpint(qrtas_read_pci_config(f.qts, f.cfg + PCI_DEVICE_ID, 2,
                                          &v), ==, QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, TESTDEV_DEVICE);
    g_assert_cmpint(qrtas_read_pci_config(f.qts, f.cfg + PCI_DEVICE_ID + 1,
                                          1, &v), ==, QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, TESTDEV_DEVICE >> 8);

    /* Writes land: both forms, read back through the other. */
    g_assert_cmpint(qrtas_write_pci_config(f.qts, f.cfg + PCI_INTERRUPT_LINE,
                                           1, 0x5a), ==, QRTAS_SUCCESS);
    g_assert_cmphex(qpci_config_readb(f.dev, PCI_INTERRUPT_LINE), ==, 0x5a);
    g_assert_cmpint(qrtas_ibm_write_pci_config(f.qts, BUID,
                                               f.cfg + PCI_INTERRUPT_LINE, 1,
                                               0x33), ==, QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_read_pci_config(f.qts, f.cfg + PCI_INTERRUPT_LINE,
                                          1, &v), ==, QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, 0x33);
    fixture_stop(&f);
}

static void test_cells_are_big_endian(void)
{
    Fixture f;
    uint8_t args[16], rets[8];

    fixture_start(&f, "");
    /* Lay the cells out by hand: PAPR words are big-endian in memory. */
    stl_be_p(args, f.cfg);
    stl_be_p(args + 4, BUID >> 32);
    stl_be_p(args + 8, (uint32_t)BUID);
    stl_be_p(args + 12, 4);
    qtest_memwrite(f.qts, QRTAS_SCRATCH, args, sizeof(args));
    g_assert_cmpuint(qtest_rtas_call(f.qts, "ibm,read-pci-config", 4,
                                     QRTAS_SCRATCH, 2, QRTAS_SCRATCH + 0x100),
                     ==, 0);
    qtest_memread(f.qts, QRTAS_SCRATCH + 0x100, rets, sizeof(rets));
    g_assert_cmphex(ldl_be_p(rets), ==, 0);
    g_assert_cmphex(ldl_be_p(rets + 4), ==,
                    TESTDEV_DEVICE << 16 | TESTDEV_VENDOR);
    fixture_stop(&f);
}

static void test_bar_through_window(void)
{
    Fixture f;
    QPCIBar bar0, bar1;

    fixture_start(&f, "");
    bar0 = qpci_bar(f.dev, 0);
    bar1 = qpci_bar(f.dev, 1);
    /* Assigned at reset in PCI space, seen through the 32-bit window. */
    g_assert_cmphex(bar0.addr, >=, QPCI_SPAPR_MMIO32_PCI);
    g_assert_cmphex(bar0.addr, <, QPCI_SPAPR_MMIO32_PCI +
                    QPCI_SPAPR_MMIO32_SIZE);
    g_assert_true(bar1.is_io);
    g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar0, 0), ==, TESTDEV_MAGIC);
    g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar1, 0), ==, TESTDEV_MAGIC);
    /* The PCI address itself is not a CPU address on this machine. */
    g_assert_cmphex(qtest_readl(f.qts, bar0.addr), !=,
                    GUINT32_SWAP_LE_BE(TESTDEV_MAGIC));
    fixture_stop(&f);
}

/* ---- MSI-X through ibm,change-msi ---- */

static uint64_t table_entry(QPCIBar bar, uint16_t vector, unsigned field)
{
    return TESTDEV_TABLE + vector * PCI_MSIX_ENTRY_SIZE + field;
}

static void msix_set_enable(Fixture *f, bool on)
{
    uint8_t cap = qpci_find_capability(f->dev, PCI_CAP_ID_MSIX, 0);
    uint16_t ctrl = qpci_config_readw(f->dev, cap + PCI_MSIX_FLAGS);

    g_assert_cmpint(cap, !=, 0);
    ctrl = on ? ctrl | PCI_MSIX_FLAGS_ENABLE : ctrl & ~PCI_MSIX_FLAGS_ENABLE;
    qpci_config_writew(f->dev, cap + PCI_MSIX_FLAGS, ctrl);
}

static void test_change_msix(void)
{
    Fixture f;
    QPCIBar bar;
    uint32_t count = 0, seq = 7, irq[4], edge, again;

    fixture_start(&f, "");
    bar = qpci_bar(f.dev, 0);
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         4, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 4);
    g_assert_cmpuint(seq, ==, 8);

    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                            f.qts, BUID, f.cfg, i, &irq[i], &edge), ==,
                        QRTAS_SUCCESS);
        g_assert_cmpuint(edge, ==, 1);
        for (int j = 0; j < i; j++) {
            g_assert_cmpuint(irq[i], !=, irq[j]);
        }
        /* The machine wrote the message and unmasked the vector. */
        g_assert_cmphex(qpci_spapr_io_readq(f.dev, bar,
                            table_entry(bar, i, PCI_MSIX_ENTRY_LOWER_ADDR)),
                        ==, QPCI_SPAPR_MSI_BASE);
        g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar,
                            table_entry(bar, i, PCI_MSIX_ENTRY_DATA)), ==,
                        irq[i]);
        g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar,
                            table_entry(bar, i, PCI_MSIX_ENTRY_VECTOR_CTRL)) &
                        PCI_MSIX_ENTRY_CTRL_MASKBIT, ==, 0);
    }
    /* Vectors beyond the grant stay masked. */
    g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar,
                        table_entry(bar, 4, PCI_MSIX_ENTRY_VECTOR_CTRL)) &
                    PCI_MSIX_ENTRY_CTRL_MASKBIT, ==,
                    PCI_MSIX_ENTRY_CTRL_MASKBIT);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 4, &again, &edge), ==,
                    QRTAS_PARAM_ERROR);

    /* Query reports the grant without changing it. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_QUERY,
                                         0, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 4);

    /* Enabling MSI-X makes the device's vector 2 arrive as its source. */
    qtest_irq_intercept_in(f.qts, ICS_PATH);
    msix_set_enable(&f, true);
    qpci_spapr_io_writel(f.dev, bar, TESTDEV_REG_FIRE, 2);
    g_assert_true(qtest_get_irq(f.qts, irq[2]));
    g_assert_false(qtest_get_irq(f.qts, irq[0]));
    g_assert_false(qtest_get_irq(f.qts, irq[1]));
    g_assert_false(qtest_get_irq(f.qts, irq[3]));

    /* Zero vectors frees them: masked again, nothing arrives. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         0, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 0);
    g_assert_false(qtest_get_irq(f.qts, irq[2]));
    g_assert_cmphex(qpci_spapr_io_readl(f.dev, bar,
                        table_entry(bar, 2, PCI_MSIX_ENTRY_VECTOR_CTRL)) &
                    PCI_MSIX_ENTRY_CTRL_MASKBIT, ==,
                    PCI_MSIX_ENTRY_CTRL_MASKBIT);
    qpci_spapr_io_writel(f.dev, bar, TESTDEV_REG_FIRE, 2);
    g_assert_cmpuint(qpci_spapr_io_readl(f.dev, bar, TESTDEV_REG_FIRED), ==,
                     2);
    g_assert_false(qtest_get_irq(f.qts, irq[2]));
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &again, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(edge, ==, 0);      /* back to INTx, level */

    /* The sources went back to the pool: the next grant reuses them. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         1, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &again, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(again, ==, irq[0]);
    fixture_stop(&f);
}

static void test_change_msix_clamped(void)
{
    Fixture f;
    uint32_t count = 0, seq = 0, irq, edge;

    fixture_start(&f, ",vectors=5");
    /* PAPR lets the platform grant fewer: the device has 5. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         100, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 5);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 4, &irq, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 5, &irq, &edge), ==,
                    QRTAS_PARAM_ERROR);
    /* Reset-to-zero frees everything. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_RESET,
                                         0, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 0);
    fixture_stop(&f);
}

static void test_change_msi(void)
{
    Fixture f;
    uint32_t count = 0, seq = 0, irq, edge;
    uint8_t cap;

    fixture_start(&f, ",msi=on");
    cap = qpci_find_capability(f.dev, PCI_CAP_ID_MSI, 0);
    g_assert_cmpint(cap, !=, 0);
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSI,
                                         4, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 1);     /* the device offers one */
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &irq, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(edge, ==, 1);
    /* The message sits in the capability, as the guest reads it back. */
    g_assert_cmphex(qpci_config_readl(f.dev, cap + PCI_MSI_ADDRESS_LO), ==,
                    (uint32_t)QPCI_SPAPR_MSI_BASE);
    g_assert_cmphex(qpci_config_readl(f.dev, cap + PCI_MSI_ADDRESS_HI), ==,
                    QPCI_SPAPR_MSI_BASE >> 32);
    g_assert_cmphex(qpci_config_readw(f.dev, cap + PCI_MSI_DATA_64), ==, irq);

    /* With MSI enabled (and MSI-X off) a fire arrives on that source. */
    qtest_irq_intercept_in(f.qts, ICS_PATH);
    qpci_config_writew(f.dev, cap + PCI_MSI_FLAGS,
                       qpci_config_readw(f.dev, cap + PCI_MSI_FLAGS) |
                       PCI_MSI_FLAGS_ENABLE);
    qpci_spapr_io_writel(f.dev, qpci_bar(f.dev, 0), TESTDEV_REG_FIRE, 0);
    g_assert_true(qtest_get_irq(f.qts, irq));

    /* The old function-1 form asks for MSI too. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg,
                                         QRTAS_MSI_CHANGE, 1, &count, &seq),
                    ==, QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 1);
    fixture_stop(&f);
}

/* ---- error paths ---- */

static void test_rtas_errors(void)
{
    Fixture f;
    uint32_t v, count = 0, seq = 0, irq, edge;
    uint32_t args[QRTAS_MAX_CELLS] = { 0 }, rets[QRTAS_MAX_CELLS];
    uint32_t nodev = qrtas_config_addr(QPCI_DEVFN(9, 0), 0);
    g_autofree char *reply = NULL;

    fixture_start(&f, "");
    /* Wrong cell counts. */
    args[0] = f.cfg;
    args[1] = BUID >> 32;
    args[2] = (uint32_t)BUID;
    args[3] = 4;
    g_assert_cmpuint(qrtas_call(f.qts, "ibm,read-pci-config", 3, args, 2,
                                rets), ==, 0);
    g_assert_cmpint((int32_t)rets[0], ==, QRTAS_PARAM_ERROR);
    g_assert_cmpuint(qrtas_call(f.qts, "ibm,read-pci-config", 4, args, 1,
                                rets), ==, 0);
    g_assert_cmpint((int32_t)rets[0], ==, QRTAS_PARAM_ERROR);
    g_assert_cmpuint(qrtas_call(f.qts, "ibm,change-msi", 2, args, 3, rets),
                     ==, 0);
    g_assert_cmpint((int32_t)rets[0], ==, QRTAS_PARAM_ERROR);
    /* Far more cells than any call takes. */
    g_assert_cmpuint(qtest_rtas_call(f.qts, "ibm,change-msi", 100000,
                                     QRTAS_SCRATCH, 3, QRTAS_SCRATCH + 0x100),
                     ==, 0);
    g_assert_cmpint((int32_t)qtest_readl(f.qts, QRTAS_SCRATCH + 0x100), ==,
                    QRTAS_PARAM_ERROR);
    /* nret 0: nothing to report into, nothing written, still no crash. */
    g_assert_cmpuint(qrtas_call(f.qts, "ibm,read-pci-config", 4, args, 0,
                                rets), ==, 0);

    /* Unknown config address, unknown PHB, bad size and alignment. */
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, nodev, 4, &v), ==,
                    QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_ibm_write_pci_config(f.qts, BUID, nodev, 4, 0), ==,
                    QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID + 1, f.cfg, 4, &v),
                    ==, QRTAS_PARAM_ERROR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg, 3, &v), ==,
                    QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg + 2, 4, &v),
                    ==, QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID,
                                              qrtas_config_addr(TESTDEV_DEVFN,
                                                                0x100),
                                              4, &v), ==, QRTAS_HW_ERROR);
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg | 0x10000,
                                              4, &v), ==, QRTAS_HW_ERROR);

    /* ibm,change-msi beyond what the device or PAPR defines. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, nodev, QRTAS_MSI_MSIX,
                                         1, &count, &seq), ==,
                    QRTAS_PARAM_ERROR);
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSI,
                                         1, &count, &seq), ==,
                    QRTAS_PARAM_ERROR);     /* no MSI capability */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, 9, 1, &count,
                                         &seq), ==, QRTAS_PARAM_ERROR);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, nodev, 0, &irq, &edge), ==,
                    QRTAS_PARAM_ERROR);

    /* Unknown names and malformed commands. */
    g_assert_cmpuint(qrtas_call(f.qts, "ibm,no-such-call", 0, args, 1, rets),
                     ==, QRTAS_H_PARAMETER);
    reply = qtest_raw_cmd(f.qts, "rtas ibm,read-pci-config 4 0x100000 2");
    g_assert_true(g_str_has_prefix(reply, "FAIL"));
    g_free(reply);
    reply = qtest_raw_cmd(f.qts, "rtas ibm,read-pci-config x 0x100000 2 0");
    g_assert_true(g_str_has_prefix(reply, "FAIL"));

    /* Still serving. */
    g_assert_true(qtest_probe_child(f.qts));
    g_assert_cmpint(qrtas_ibm_read_pci_config(f.qts, BUID, f.cfg, 2, &v), ==,
                    QRTAS_SUCCESS);
    g_assert_cmphex(v, ==, TESTDEV_VENDOR);
    fixture_stop(&f);
}

static void test_stray_msi_ignored(void)
{
    Fixture f;
    uint32_t count = 0, seq = 0, irq, edge;

    fixture_start(&f, "");
    qtest_irq_intercept_in(f.qts, ICS_PATH);
    /* Writes to unallocated or out-of-range sources go nowhere. */
    qtest_writel(f.qts, QPCI_SPAPR_MSI_BASE, GUINT32_SWAP_LE_BE(0x30));
    qtest_writel(f.qts, QPCI_SPAPR_MSI_BASE, GUINT32_SWAP_LE_BE(0xffffffff));
    qtest_writel(f.qts, QPCI_SPAPR_MSI_BASE, GUINT32_SWAP_LE_BE(0x10));
    g_assert_false(qtest_get_irq(f.qts, 0x30));
    g_assert_false(qtest_get_irq(f.qts, 0x10));
    /* An allocated one, written directly, raises exactly that source. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         1, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &irq, &edge), ==,
                    QRTAS_SUCCESS);
    qtest_writel(f.qts, QPCI_SPAPR_MSI_BASE, GUINT32_SWAP_LE_BE(irq));
    g_assert_true(qtest_get_irq(f.qts, irq));
    fixture_stop(&f);
}

static void test_reset_frees_msi(void)
{
    Fixture f;
    uint32_t count = 0, seq = 0, irq, edge;
    JsonNode *ret;
    JsonObject *ev;

    fixture_start(&f, "");
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         3, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &irq, &edge), ==,
                    QRTAS_SUCCESS);
    qtest_irq_intercept_in(f.qts, ICS_PATH);
    qpci_config_writew(f.dev, qpci_find_capability(f.dev, PCI_CAP_ID_MSIX,
                                                   0) + PCI_MSIX_FLAGS,
                       PCI_MSIX_FLAGS_ENABLE);
    qpci_spapr_io_writel(f.dev, qpci_bar(f.dev, 0), TESTDEV_REG_FIRE, 0);
    g_assert_true(qtest_get_irq(f.qts, irq));

    ret = qtest_qmp_assert_success(f.qts, "{'execute': 'system_reset'}");
    json_node_unref(ret);
    ev = qtest_qmp_eventwait(f.qts, "RESET");
    json_object_unref(ev);
    /* The grant is gone, its source lowered, and the BARs reassigned. */
    g_assert_false(qtest_get_irq(f.qts, irq));
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_QUERY,
                                         0, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 0);
    g_assert_cmphex(qpci_spapr_io_readl(f.dev, qpci_bar(f.dev, 0), 0), ==,
                    TESTDEV_MAGIC);
    /* And the pool is whole again: the same first source comes back. */
    g_assert_cmpint(qrtas_ibm_change_msi(f.qts, BUID, f.cfg, QRTAS_MSI_MSIX,
                                         1, &count, &seq), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        f.qts, BUID, f.cfg, 0, &count, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, irq);
    fixture_stop(&f);
}

static void test_hotplug(void)
{
    QTestState *qts = qtest_init("-M pseries -m 256M");
    QPCIBus *bus = qpci_new_spapr(qts);
    uint32_t cfg = qrtas_config_addr(TESTDEV_DEVFN, 0);
    uint32_t count = 0, seq = 0, irq, first, edge;
    QPCIDevice *dev;

    g_assert_null(qpci_device_find(bus, TESTDEV_DEVFN));
    qtest_qmp_device_add(qts, "pci-testdev", "td0", "{'addr': '04.0'}");
    dev = qpci_device_find(bus, TESTDEV_DEVFN);
    g_assert_nonnull(dev);
    /* The PHB placed the BARs of the new device: it answers at once. */
    g_assert_cmphex(qpci_spapr_io_readl(dev, qpci_bar(dev, 0), 0), ==,
                    TESTDEV_MAGIC);
    g_assert_cmpint(qrtas_ibm_change_msi(qts, BUID, cfg, QRTAS_MSI_MSIX, 2,
                                         &count, &seq), ==, QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        qts, BUID, cfg, 0, &first, &edge), ==,
                    QRTAS_SUCCESS);
    qpci_device_free(dev);

    /* Unplugged while holding sources; the next device there gets none. */
    qtest_qmp_device_del(qts, "td0");
    g_assert_cmpint(qrtas_ibm_change_msi(qts, BUID, cfg, QRTAS_MSI_QUERY, 0,
                                         &count, &seq), ==,
                    QRTAS_PARAM_ERROR);
    qtest_qmp_device_add(qts, "pci-testdev", "td1", "{'addr': '04.0'}");
    g_assert_cmpint(qrtas_ibm_change_msi(qts, BUID, cfg, QRTAS_MSI_QUERY, 0,
                                         &count, &seq), ==, QRTAS_SUCCESS);
    g_assert_cmpuint(count, ==, 0);
    /* ... and the stale sources went back to the pool. */
    g_assert_cmpint(qrtas_ibm_change_msi(qts, BUID, cfg, QRTAS_MSI_MSIX, 2,
                                         &count, &seq), ==, QRTAS_SUCCESS);
    g_assert_cmpint(qrtas_ibm_query_interrupt_source_number(
                        qts, BUID, cfg, 0, &irq, &edge), ==,
                    QRTAS_SUCCESS);
    g_assert_cmpuint(irq, ==, first);
    qtest_qmp_device_del(qts, "td1");
    qpci_free_spapr(bus);
    qtest_quit(qts);
}

/* ---- device tree ---- */

static char *run_dtc(const char *path)
{
    const char *argv[] = { "dtc", "-q", "-I", "dtb", "-O", "dts", path,
                           NULL };
    g_autofree char *err = NULL;
    char *out = NULL;
    int status;

    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL,
                      NULL, &out, &err, &status, NULL)) {
        return NULL;
    }
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    return out;
}

static void test_dumpdtb(void)
{
    g_autofree char *dir = g_dir_make_tmp("spapr-dtb-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "tree.dtb", NULL);
    g_autofree char *args = g_strdup_printf(
        "-M pseries,dumpdtb=%s -m 512M -device pci-testdev,addr=04.0,"
        "vectors=6", path);
    g_autofree char *dts = NULL;
    int status = qtest_run_expect_fail(args, NULL, NULL);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
    dts = run_dtc(path);
    if (!dts) {
        g_test_skip("dtc not installed");
    } else {
        g_assert_nonnull(strstr(dts, "cpus {"));
        g_assert_nonnull(strstr(dts, "memory@0 {"));
        g_assert_nonnull(strstr(dts, "reg = <0x00 0x00 0x00 0x20000000>"));
        g_assert_nonnull(strstr(dts, "rtas {"));
        g_assert_nonnull(strstr(dts, "ibm,change-msix-capable;"));
        g_assert_nonnull(strstr(dts, "ibm,change-msi = <"));
        g_assert_nonnull(strstr(dts, "pci@800000020000000 {"));
        g_assert_nonnull(strstr(dts, "ranges = <0x1000000 "));
        g_assert_nonnull(strstr(dts, "ibm,pe-total-#msi = <"));
        g_assert_nonnull(strstr(dts, "pci1d0c,1@4 {"));
        g_assert_nonnull(strstr(dts, "vendor-id = <0x1d0c>"));
        g_assert_nonnull(strstr(dts, "device-id = <0x01>"));
        g_assert_nonnull(strstr(dts, "ibm,req#msi-x = <0x06>"));
        /* BAR0 (32-bit memory, reg 0x10) of devfn 0x20 at PCI 2 GiB. */
        g_assert_nonnull(strstr(dts, "assigned-addresses = <0x82002010 0x00 "
                                "0x80000000 0x00 0x1000"));
        g_assert_nonnull(strstr(dts, "reg = <0x2000 0x00 0x00 0x00 0x00 "
                                "0x2002010 0x00 0x00 0x00 0x1000"));
    }
    unlink(path);
    rmdir(dir);
}

static void test_dumpdtb_unwritable(void)
{
    g_autofree char *err = NULL;
    int status = qtest_run_expect_fail(
        "-M pseries,dumpdtb=/nonexistent-dir/x.dtb", NULL, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "dumpdtb"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/spapr/machine/big-endian-and-no-msix-emulation",
                    test_machine_properties);
    g_test_add_func("/spapr/rtas/config/read-write-both-forms",
                    test_config_read_forms);
    g_test_add_func("/spapr/rtas/cells-big-endian", test_cells_are_big_endian);
    g_test_add_func("/spapr/phb/bar-through-32bit-window",
                    test_bar_through_window);
    g_test_add_func("/spapr/rtas/change-msi/msix-program-fire-free",
                    test_change_msix);
    g_test_add_func("/spapr/rtas/change-msi/msix-clamped-to-device",
                    test_change_msix_clamped);
    g_test_add_func("/spapr/rtas/change-msi/msi", test_change_msi);
    g_test_add_func("/spapr/rtas/errors", test_rtas_errors);
    g_test_add_func("/spapr/ics/stray-msi-ignored", test_stray_msi_ignored);
    g_test_add_func("/spapr/machine/reset-frees-msi", test_reset_frees_msi);
    g_test_add_func("/spapr/phb/hotplug-assigns-bars-frees-stale-msi",
                    test_hotplug);
    g_test_add_func("/spapr/fdt/dumpdtb", test_dumpdtb);
    g_test_add_func("/spapr/fdt/dumpdtb-unwritable", test_dumpdtb_unwritable);
    return g_test_run();
}
