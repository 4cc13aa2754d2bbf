/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-pci exposes the device's option ROM as the expansion ROM BAR.
 *
 * A small libvfu device served from a thread has a ROM region holding a
 * known image; the guest sizes the ROM BAR, places and enables it and
 * must read the image back.  rombar=0 hides it, and vfio-user-nvme (no
 * ROM region) shows none.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/nvme.h"
#include "qapi/error.h"
#include "libqos/vfu-thread.h"

#define ROM_DEVFN QPCI_DEVFN(4, 0)
/* Inside the PC's 32-bit PCI window, far above what BAR placement uses. */
#define ROM_GPA 0xfe000000u
/* Not a power of two: the BAR rounds it up to 0x1000. */
#define ROM_IMAGE_SIZE 0xa00
#define ROM_BAR_SIZE 0x1000

typedef struct RomServer {
    QVfuThread vt;
    int rom_reads;              /* ROM region reads the client made */
} RomServer;

static uint8_t rom_byte(uint32_t off)
{
    if (off == 0) {
        return 0x55;
    }
    if (off == 1) {
        return 0xaa;
    }
    return (uint8_t)(off * 7 + 3);
}

static int rom_access(VfuCtx *ctx, void *opaque, uint32_t index,
                      uint64_t offset, void *buf, uint32_t count,
                      bool is_write)
{
    RomServer *s = opaque;
    uint8_t *p = buf;

    if (is_write) {
        return -1;
    }
    g_atomic_int_inc(&s->rom_reads);
    for (uint32_t i = 0; i < count; i++) {
        p[i] = offset + i < ROM_IMAGE_SIZE ? rom_byte(offset + i) : 0;
    }
    return 0;
}

static int bar_access(VfuCtx *ctx, void *opaque, uint32_t index,
                      uint64_t offset, void *buf, uint32_t count,
                      bool is_write)
{
    if (!is_write) {
        memset(buf, 0, count);
    }
    return 0;
}

static void rom_server_start(RomServer *s)
{
    const VfuPciIds ids = {
        .vendor_id = 0x1234, .device_id = 0x11e6, .class_code = 0xff0000,
    };
    VfuRegionInfo bar0 = {
        .size = 0x1000,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1,
        .access = bar_access,
        .opaque = s,
    };
    VfuRegionInfo rom = {
        .size = ROM_IMAGE_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ,
        .fd = -1,
        .access = rom_access,
        .opaque = s,
    };

    memset(s, 0, sizeof(*s));
    qvfu_thread_init(&s->vt, "rom", &ids, s);
    g_assert_true(vfu_setup_region(s->vt.ctx, VFIO_PCI_BAR0_REGION_INDEX,
                                   &bar0, &error_abort));
    g_assert_true(vfu_setup_region(s->vt.ctx, VFIO_PCI_ROM_REGION_INDEX,
                                   &rom, &error_abort));
    qvfu_thread_start(&s->vt);
}

static void rom_server_stop(RomServer *s)
{
    qvfu_thread_stop(&s->vt);
}

/* The all-ones probe of the ROM BAR; 0 when there is no ROM. */
static uint32_t rom_bar_size(QPCIDevice *dev)
{
    uint32_t old = qpci_config_readl(dev, PCI_ROM_ADDRESS);
    uint32_t mask;

    qpci_config_writel(dev, PCI_ROM_ADDRESS, 0xffffffff);
    mask = qpci_config_readl(dev, PCI_ROM_ADDRESS) & PCI_ROM_ADDRESS_MASK;
    qpci_config_writel(dev, PCI_ROM_ADDRESS, old);
    return mask ? ~mask + 1 : 0;
}

static QTestState *rom_qtest_start(const char *sock, const char *opts,
                                   QPCIBus **bus, QPCIDevice **dev)
{
    QTestState *qts = qtest_initf("-M pc -m 64M -device vfio-user-pci,"
                                  "addr=04.0,socket=%s%s", sock, opts);

    *bus = qpci_new_pc(qts);
    *dev = qpci_device_find(*bus, ROM_DEVFN);
    g_assert_nonnull(*dev);
    return qts;
}

static void test_rom_visible(void)
{
    RomServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    int reads;
    uint32_t i;

    rom_server_start(&srv);
    qts = rom_qtest_start(srv.vt.sock, "", &bus, &dev);
    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1234);
    /* The image was read at realize; the guest's reads must not add any. */
    reads = g_atomic_int_get(&srv.rom_reads);
    g_assert_cmpint(reads, >, 0);

    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==, 0);
    g_assert_cmphex(rom_bar_size(dev), ==, ROM_BAR_SIZE);
    qpci_device_enable(dev);

    /* Placed but not enabled: nothing decodes there. */
    qpci_config_writel(dev, PCI_ROM_ADDRESS, ROM_GPA);
    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==, ROM_GPA);
    g_assert_cmphex(qtest_readw(qts, ROM_GPA), !=, 0xaa55);

    qpci_config_writel(dev, PCI_ROM_ADDRESS, ROM_GPA | PCI_ROM_ADDRESS_ENABLE);
    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==,
                    ROM_GPA | PCI_ROM_ADDRESS_ENABLE);
    g_assert_cmphex(qtest_readw(qts, ROM_GPA), ==, 0xaa55);
    for (i = 0; i < ROM_BAR_SIZE; i++) {
        uint8_t want = i < ROM_IMAGE_SIZE ? rom_byte(i) : 0;

        g_assert_cmphex(qtest_readb(qts, ROM_GPA + i), ==, want);
    }
    g_assert_cmphex(qtest_readl(qts, ROM_GPA + 4),
                    ==, rom_byte(4) | rom_byte(5) << 8 | rom_byte(6) << 16 |
                    (uint32_t)rom_byte(7) << 24);

    /* Writes are dropped. */
    qtest_writel(qts, ROM_GPA, 0xdeadbeef);
    g_assert_cmphex(qtest_readw(qts, ROM_GPA), ==, 0xaa55);
    g_assert_cmpint(g_atomic_int_get(&srv.rom_reads), ==, reads);

    /* Clearing the enable bit takes it away again. */
    qpci_config_writel(dev, PCI_ROM_ADDRESS, ROM_GPA);
    g_assert_cmphex(qtest_readw(qts, ROM_GPA), !=, 0xaa55);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
    rom_server_stop(&srv);
}

static void test_rombar_off(void)
{
    RomServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;

    rom_server_start(&srv);
    qts = rom_qtest_start(srv.vt.sock, ",rombar=0", &bus, &dev);
    g_assert_cmphex(qpci_config_readw(dev, PCI_VENDOR_ID), ==, 0x1234);
    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==, 0);
    g_assert_cmphex(rom_bar_size(dev), ==, 0);
    qpci_device_enable(dev);
    qpci_config_writel(dev, PCI_ROM_ADDRESS, ROM_GPA | PCI_ROM_ADDRESS_ENABLE);
    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==, 0);
    g_assert_cmphex(qtest_readw(qts, ROM_GPA), !=, 0xaa55);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
    rom_server_stop(&srv);
}

/* ---- vfio-user-nvme: a device without a ROM region ---- */

static void test_nvme_no_rom(void)
{
    QNvmeServer srv;
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;

    if (!getenv("VFIO_USER_NVME")) {
        g_test_skip("VFIO_USER_NVME is not set");
        return;
    }
    qnvme_server_start(&srv, NULL);

    qts = rom_qtest_start(srv.sock, "", &bus, &dev);
    g_assert_cmphex(qpci_config_readw(dev, PCI_CLASS_DEVICE), ==, 0x0108);
    g_assert_cmphex(qpci_config_readl(dev, PCI_ROM_ADDRESS), ==, 0);
    g_assert_cmphex(rom_bar_size(dev), ==, 0);

    qpci_device_free(dev);
    qpci_free_pc(bus);
    qtest_quit(qts);
    qnvme_server_stop(&srv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-pci/rom/guest-reads-option-rom",
                    test_rom_visible);
    g_test_add_func("/vfio-user-pci/rom/rombar-off-hides-rom",
                    test_rombar_off);
    g_test_add_func("/vfio-user-pci/rom/no-rom-region-no-rom-bar",
                    test_nvme_no_rom);
    return g_test_run();
}
