/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci with a device that has MSI and no MSI-X.
 *
 * vfio-user-nvme always offers MSI-X, so this test serves its own tiny
 * device with libvfu from a thread: an MSI capability (one vector) and a
 * BAR0 whose register at offset 0 fires that vector.  The guest enables
 * MSI through config space and must see the message written to RAM.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "qapi/error.h"
#include "libqos/vfu-thread.h"

#define MSI_DEVFN QPCI_DEVFN(4, 0)
#define MSI_TARGET 0x3800000ULL
#define MSI_DATA 0x4242
#define WAIT_US (10 * G_USEC_PER_SEC)

typedef struct MsiServer {
    QVfuThread vt;
    int fired;                  /* BAR0 writes that fired the vector */
} MsiServer;

static int msi_bar_access(VfuCtx *ctx, void *opaque, uint32_t index,
                          uint64_t offset, void *buf, uint32_t count,
                          bool is_write)
{
    MsiServer *s = opaque;

    if (!is_write) {
        memset(buf, 0, count);
        return 0;
    }
    if (offset == 0 && vfu_irq_trigger(ctx, VFIO_PCI_MSI_IRQ_INDEX, 0) == 0) {
        g_atomic_int_inc(&s->fired);
    }
    return 0;
}

static void msi_server_start(MsiServer *s)
{
    const VfuPciIds ids = {
        .vendor_id = 0x1234, .device_id = 0x11e5, .class_code = 0xff0000,
    };
    /* 32-bit MSI, one vector: control, address, data. */
    uint8_t msi_body[PCI_MSI_DATA_32 + 2 - 2] = { 0 };
    VfuRegionInfo bar0 = {
        .size = 0x1000,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1,
        .access = msi_bar_access,
        .opaque = s,
    };

    memset(s, 0, sizeof(*s));
    qvfu_thread_init(&s->vt, "msi", &ids, s);
    g_assert_cmpint(vfu_pci_add_cap(s->vt.ctx, PCI_CAP_ID_MSI, msi_body,
                                    sizeof(msi_body), &error_abort), !=, 0);
    g_assert_true(vfu_setup_irq(s->vt.ctx, VFIO_PCI_MSI_IRQ_INDEX, 1,
                                &error_abort));
    g_assert_true(vfu_setup_region(s->vt.ctx, VFIO_PCI_BAR0_REGION_INDEX,
                                   &bar0, &error_abort));
    qvfu_thread_start(&s->vt);
}

static void msi_server_stop(MsiServer *s)
{
    qvfu_thread_stop(&s->vt);
}

/* The server thread applies SET_IRQS in its own time. */
static bool wait_irq_ready(MsiServer *s, bool ready)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    while (vfu_irq_ready(s->vt.ctx, VFIO_PCI_MSI_IRQ_INDEX, 0) != ready) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    return true;
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

static void test_msi_delivered(void)
{
    MsiServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    uint8_t cap;
    uint16_t ctrl;

    msi_server_start(&srv);
    qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=msi0,"
                      "addr=04.0,socket=%s", srv.vt.sock);
    bus = qpci_new_pc(qts);
    dev = qpci_device_find(bus, MSI_DEVFN);
    g_assert_nonnull(dev);
    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1234);
    g_assert_cmpint(qpci_find_capability(dev, PCI_CAP_ID_MSIX, 0), ==, 0);
    cap = qpci_find_capability(dev, PCI_CAP_ID_MSI, 0);
    g_assert_cmpint(cap, !=, 0);
    qpci_device_enable(dev);
    bar = qpci_bar(dev, 0);

    /* Not enabled: the device has no eventfd to fire. */
    g_assert_false(vfu_irq_ready(srv.vt.ctx, VFIO_PCI_MSI_IRQ_INDEX, 0));

    qpci_config_writel(dev, cap + PCI_MSI_ADDRESS_LO, MSI_TARGET);
    qpci_config_writew(dev, cap + PCI_MSI_DATA_32, MSI_DATA);
    ctrl = qpci_config_readw(dev, cap + PCI_MSI_FLAGS);
    qpci_config_writew(dev, cap + PCI_MSI_FLAGS, ctrl | PCI_MSI_FLAGS_ENABLE);
    g_assert_true(wait_irq_ready(&srv, true));

    for (int i = 0; i < 3; i++) {
        qtest_writel(qts, MSI_TARGET, 0);
        qpci_io_writel(dev, bar, 0, 1);
        g_assert_true(wait_ram(qts, MSI_TARGET, MSI_DATA));
    }
    /*
     * The server thread counts a write after it fired the vector, so the
     * MSI can land before the count: wait for it (liveness bound only).
     */
    for (gint64 deadline = g_get_monotonic_time() + WAIT_US;
         g_atomic_int_get(&srv.fired) < 3 &&
         g_get_monotonic_time() < deadline;) {
        g_usleep(500);
    }
    g_assert_cmpint(g_atomic_int_get(&srv.fired), ==, 3);

    /* Disabling MSI takes the eventfd away from the device again. */
    qpci_config_writew(dev, cap + PCI_MSI_FLAGS, ctrl);
    g_assert_true(wait_irq_ready(&srv, false));

    qpci_device_free(dev);
    qtest_qmp_device_del(qts, "msi0");
    qpci_free_pc(bus);
    qtest_quit(qts);
    msi_server_stop(&srv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-pci/msi/no-msix-device-delivers",
                    test_msi_delivered);
    return g_test_run();
}
