/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci-testdev: a PCI function for testing the PCI and MSI-X core alone.
 *
 * BAR0 (4 KiB, 32-bit memory) holds a few registers at the start of the
 * page, the MSI-X table at 0x800 and the PBA at 0xc00, all on one page as
 * many real devices do.  BAR1 (I/O, 32 bytes) mirrors the registers.
 *
 *   0x00 RO  magic 0x54444e43 ("CNDT")
 *   0x04 RW  scratch
 *   0x08 WO  fire: raise the MSI-X vector written (or MSI when only MSI
 *            is enabled; INTx when neither is)
 *   0x0c RW  INTx level (bit 0)
 *   0x10 RO  number of MSI-X vectors
 *   0x14 RO  count of fire writes
 * Other offsets read 0xdead0000 | offset, so a test can tell them apart
 * from the MSI-X structures overlaid on the same page.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "trace.h"

#define TYPE_PCI_TESTDEV "pci-testdev"

#define TESTDEV_MAGIC 0x54444e43
#define TESTDEV_REG_MAGIC 0x00
#define TESTDEV_REG_SCRATCH 0x04
#define TESTDEV_REG_FIRE 0x08
#define TESTDEV_REG_INTX 0x0c
#define TESTDEV_REG_NVEC 0x10
#define TESTDEV_REG_FIRED 0x14
#define TESTDEV_UNUSED_PATTERN 0xdead0000u
#define TESTDEV_BAR_SIZE 0x1000
#define TESTDEV_IO_SIZE 0x20
#define TESTDEV_TABLE_OFFSET 0x800
#define TESTDEV_PBA_OFFSET 0xc00
#define TESTDEV_MAX_VECTORS \
    ((TESTDEV_PBA_OFFSET - TESTDEV_TABLE_OFFSET) / PCI_MSIX_ENTRY_SIZE)

typedef struct PCITestDev {
    PCIDevice parent_obj;

    MemoryRegion bar;
    MemoryRegion regs;
    MemoryRegion io;
    uint32_t scratch;
    uint32_t intx;
    uint32_t fired;

    /* Properties */
    uint32_t vectors;
    bool lazy_pba;
    bool msi;
} PCITestDev;

#define PCI_TESTDEV(obj) OBJECT_CHECK(PCITestDev, (obj), TYPE_PCI_TESTDEV)

static uint64_t testdev_read(void *opaque, hwaddr addr, unsigned size)
{
    PCITestDev *t = opaque;
    uint64_t val;

    switch (addr) {
    case TESTDEV_REG_MAGIC:
        val = TESTDEV_MAGIC;
        break;
    case TESTDEV_REG_SCRATCH:
        val = t->scratch;
        break;
    case TESTDEV_REG_INTX:
        val = t->intx;
        break;
    case TESTDEV_REG_NVEC:
        val = t->vectors;
        break;
    case TESTDEV_REG_FIRED:
        val = t->fired;
        break;
    default:
        val = TESTDEV_UNUSED_PATTERN | addr;
        break;
    }
    trace_pci_testdev_read(addr, val, size);
    return val;
}

static void testdev_fire(PCITestDev *t, uint32_t vector)
{
    PCIDevice *dev = PCI_DEVICE(t);

    t->fired++;
    if (msix_enabled(dev)) {
        if (vector >= t->vectors) {
            qemu_log_guest_error("pci-testdev: vector %u out of range "
                                 "(%u vectors)\n", vector, t->vectors);
            return;
        }
        msix_notify(dev, vector);
    } else if (msi_enabled(dev)) {
        msi_notify(dev, vector);
    } else {
        pci_set_irq(dev, 1);
        t->intx = 1;
    }
}

static void testdev_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    PCITestDev *t = opaque;

    trace_pci_testdev_write(addr, val, size);
    switch (addr) {
    case TESTDEV_REG_SCRATCH:
        t->scratch = val;
        break;
    case TESTDEV_REG_FIRE:
        testdev_fire(t, val);
        break;
    case TESTDEV_REG_INTX:
        t->intx = val & 1;
        pci_set_irq(PCI_DEVICE(t), t->intx);
        break;
    default:
        break;
    }
}

static const MemoryRegionOps testdev_ops = {
    .read = testdev_read,
    .write = testdev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

static bool testdev_realize(PCIDevice *dev, Error **errp)
{
    PCITestDev *t = PCI_TESTDEV(dev);

    if (t->vectors < 1 || t->vectors > TESTDEV_MAX_VECTORS) {
        error_setg(errp, "pci-testdev: vectors=%u out of range 1..%u",
                   t->vectors, (unsigned)TESTDEV_MAX_VECTORS);
        return false;
    }
    memory_region_init(&t->bar, OBJECT(t), "pci-testdev-bar0",
                       TESTDEV_BAR_SIZE);
    memory_region_init_io(&t->regs, OBJECT(t), &testdev_ops, t,
                          "pci-testdev-regs", TESTDEV_BAR_SIZE);
    memory_region_add_subregion(&t->bar, 0, &t->regs);
    memory_region_init_io(&t->io, OBJECT(t), &testdev_ops, t,
                          "pci-testdev-io", TESTDEV_IO_SIZE);
    pci_register_bar(dev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &t->bar);
    pci_register_bar(dev, 1, PCI_BASE_ADDRESS_SPACE_IO, &t->io);
    dev->config[PCI_INTERRUPT_PIN] = 1;

    if (t->msi && msi_init(dev, 0, 1, true, true, errp) < 0) {
        return false;
    }
    if (msix_init(dev, t->vectors, &t->bar, 0, TESTDEV_TABLE_OFFSET,
                  &t->bar, 0, TESTDEV_PBA_OFFSET, 0, errp) < 0) {
        msi_uninit(dev);
        return false;
    }
    msix_set_lazy_pba(dev, t->lazy_pba);
    return true;
}

static void testdev_exit(PCIDevice *dev)
{
    PCITestDev *t = PCI_TESTDEV(dev);

    msix_uninit(dev, &t->bar, &t->bar);
    msi_uninit(dev);
}

static void testdev_finalize(Object *obj)
{
    PCITestDev *t = PCI_TESTDEV(obj);

    /* Only once the PCI core has unmapped the BARs (unrealize). */
    if (PCI_DEVICE(t)->bus || !memory_region_size(&t->bar)) {
        return;
    }
    memory_region_finalize(&t->regs);
    memory_region_finalize(&t->bar);
    memory_region_finalize(&t->io);
}

static void testdev_reset(PCIDevice *dev)
{
    PCITestDev *t = PCI_TESTDEV(dev);

    t->scratch = 0;
    t->intx = 0;
    t->fired = 0;
}

static const Property testdev_props[] = {
    DEFINE_PROP_UINT32("vectors", PCITestDev, vectors, 8,
                       .description = "number of MSI-X vectors (1..64)"),
    DEFINE_PROP_BOOL("x-lazy-pba", PCITestDev, lazy_pba, false,
                     .description = "map the PBA only while a vector "
                                    "is pending"),
    DEFINE_PROP_BOOL("msi", PCITestDev, msi, false,
                     .description = "also offer an MSI capability"),
    DEFINE_PROP_END_OF_LIST(),
};

static void testdev_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PCI test device (registers, MSI-X table and PBA in BAR0)";
    dc->user_creatable = true;
    dc->hotpluggable = true;
    device_class_set_props(dc, testdev_props);
    pc->realize = testdev_realize;
    pc->exit = testdev_exit;
    pc->reset = testdev_reset;
    pc->vendor_id = PCI_VENDOR_ID_CONDUIT;
    pc->device_id = PCI_DEVICE_ID_CONDUIT_TESTDEV;
    pc->class_id = PCI_CLASS_OTHERS << 8;
    pc->revision = 1;
    pc->subsystem_vendor_id = PCI_VENDOR_ID_CONDUIT;
    pc->subsystem_id = PCI_DEVICE_ID_CONDUIT_TESTDEV;
}

static const TypeInfo testdev_types[] = {
    {
        .name = TYPE_PCI_TESTDEV,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PCITestDev),
        .class_init = testdev_class_init,
        .instance_finalize = testdev_finalize,
    },
};

DEFINE_TYPES(testdev_types)
