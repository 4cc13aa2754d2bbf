/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCI core without a machine: config space masks, W1C, capability lists,
 * BAR sizing for every BAR kind, BAR mapping driven by the command
 * register, bus mastering, INTx and slot placement.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_host.h"

#define TYPE_TEST_PCI_DEV "test-pci-config-dev"

#define BAR0_SIZE 0x1000        /* 32-bit memory */
#define BAR1_SIZE 0x20          /* I/O */
#define BAR2_SIZE 0x100000      /* 64-bit prefetchable, BAR2+3 */
#define BAR4_SIZE 0x4000        /* 64-bit non-prefetchable, BAR4+5 */

typedef struct TestPCIDev {
    PCIDevice parent_obj;
    MemoryRegion bar0, bar1, bar2, bar4;
    uint32_t reg;
} TestPCIDev;

static uint64_t test_bar_read(void *opaque, hwaddr addr, unsigned size)
{
    TestPCIDev *t = opaque;

    return addr == 0 ? t->reg : 0xa5a5a5a5;
}

static void test_bar_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    TestPCIDev *t = opaque;

    if (addr == 0) {
        t->reg = val;
    }
}

static const MemoryRegionOps test_bar_ops = {
    .read = test_bar_read,
    .write = test_bar_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static bool test_pci_realize(PCIDevice *dev, Error **errp)
{
    TestPCIDev *t = (TestPCIDev *)dev;

    memory_region_init_io(&t->bar0, OBJECT(dev), &test_bar_ops, t, "bar0",
                          BAR0_SIZE);
    memory_region_init_io(&t->bar1, OBJECT(dev), &test_bar_ops, t, "bar1",
                          BAR1_SIZE);
    memory_region_init_io(&t->bar2, OBJECT(dev), &test_bar_ops, t, "bar2",
                          BAR2_SIZE);
    memory_region_init_io(&t->bar4, OBJECT(dev), &test_bar_ops, t, "bar4",
                          BAR4_SIZE);
    pci_register_bar(dev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &t->bar0);
    pci_register_bar(dev, 1, PCI_BASE_ADDRESS_SPACE_IO, &t->bar1);
    pci_register_bar(dev, 2, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &t->bar2);
    pci_register_bar(dev, 4, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &t->bar4);
    dev->config[PCI_INTERRUPT_PIN] = 1;
    return true;
}

static void test_pci_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = test_pci_realize;
    pc->vendor_id = 0x1234;
    pc->device_id = 0x5678;
    pc->class_id = 0xff00;
    pc->revision = 3;
}

#define TYPE_TEST_PCIE_DEV "test-pcie-config-dev"

static void test_pcie_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->is_express = true;
}

/*
 * A device that looks itself up on its bus while it realizes, as a config
 * cycle (or a peer's DMA into ECAM) arriving during realize would.
 */
#define TYPE_TEST_PCI_PROBE_DEV "test-pci-probe-dev"

static bool probe_found_self;
static unsigned probe_each_count;

static void probe_count(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    probe_each_count++;
}

static bool test_probe_realize(PCIDevice *dev, Error **errp)
{
    probe_found_self = pci_find_device(dev->bus, 0, dev->devfn) ==
                       dev;
    probe_each_count = 0;
    pci_for_each_device(dev->bus, probe_count, NULL);
    return test_pci_realize(dev, errp);
}

static void test_probe_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = test_probe_realize;
}

static const TypeInfo test_types[] = {
    {
        .name = TYPE_TEST_PCI_DEV,
        .parent = TYPE_PCI_DEVICE,
        .class_size = sizeof(PCIDeviceClass),
        .instance_size = sizeof(TestPCIDev),
        .class_init = test_pci_class_init,
    }, {
        .name = TYPE_TEST_PCIE_DEV,
        .parent = TYPE_TEST_PCI_DEV,
        .class_init = test_pcie_class_init,
    }, {
        .name = TYPE_TEST_PCI_PROBE_DEV,
        .parent = TYPE_TEST_PCI_DEV,
        .class_init = test_probe_class_init,
    },
};

DEFINE_TYPES(test_types)

/* A bus with its own memory and I/O spaces and 64 KiB of RAM at 0. */
typedef struct Fixture {
    MemoryRegion mem, io, ram;
    AddressSpace mem_as, io_as;
    PCIBus *bus;
    int irq_level[4];
    int irq_calls;
} Fixture;

static void fixture_set_irq(void *opaque, int irq, int level)
{
    Fixture *f = opaque;

    f->irq_level[irq] = level;
    f->irq_calls++;
}

static void fixture_init(Fixture *f)
{
    static int n;
    g_autofree char *name = g_strdup_printf("pci.test%d", n++);

    memset(f, 0, sizeof(*f));
    memory_region_init(&f->mem, NULL, "test-mem", UINT64_MAX);
    memory_region_init(&f->io, NULL, "test-io", 0x10000);
    memory_region_init_ram(&f->ram, NULL, "test-ram", 0x10000, &error_abort);
    memory_region_add_subregion(&f->mem, 0, &f->ram);
    address_space_init(&f->mem_as, &f->mem, "test-mem");
    address_space_init(&f->io_as, &f->io, "test-io");
    f->bus = pci_root_bus_new(NULL, name, &f->mem, &f->io, &f->mem);
    pci_bus_irqs(f->bus, fixture_set_irq, NULL, f, 4);
}

/*
 * Address spaces register themselves globally, so fixtures live in static
 * storage for the whole run instead of on a test's stack.
 */
static Fixture *fixture_new(void)
{
    static Fixture pool[32];
    static unsigned int used;

    g_assert_cmpuint(used, <, ARRAY_SIZE(pool));
    fixture_init(&pool[used]);
    return &pool[used++];
}

static PCIDevice *fixture_add(Fixture *f, const char *type, int devfn,
                              bool multifunction, Error **errp)
{
    DeviceState *dev = qdev_new(type);

    qdev_prop_set_int32(dev, "addr", devfn);
    qdev_prop_set_bool(dev, "multifunction", multifunction);
    if (!qdev_realize(dev, &f->bus->qbus, errp)) {
        object_unref(OBJECT(dev));
        return NULL;
    }
    return PCI_DEVICE(dev);
}

static uint32_t cfg_read(PCIDevice *d, uint32_t addr, int len)
{
    return pci_host_config_read_common(d, addr, d->config_size, len);
}

static void cfg_write(PCIDevice *d, uint32_t addr, uint32_t val, int len)
{
    pci_host_config_write_common(d, addr, d->config_size, val, len);
}

static void test_identity_read_only(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    g_assert_cmphex(cfg_read(d, PCI_VENDOR_ID, 2), ==, 0x1234);
    g_assert_cmphex(cfg_read(d, PCI_DEVICE_ID, 2), ==, 0x5678);
    g_assert_cmphex(cfg_read(d, PCI_CLASS_DEVICE, 2), ==, 0xff00);
    g_assert_cmphex(cfg_read(d, PCI_REVISION_ID, 1), ==, 3);
    cfg_write(d, PCI_VENDOR_ID, 0xdeadbeef, 4);
    cfg_write(d, PCI_CLASS_REVISION, 0xffffffff, 4);
    g_assert_cmphex(cfg_read(d, PCI_VENDOR_ID, 4), ==, 0x56781234);
    g_assert_cmphex(cfg_read(d, PCI_CLASS_REVISION, 4), ==, 0xff000003);
    /* Beyond the end of config space: all ones, writes ignored. */
    g_assert_cmphex(cfg_read(d, 0xfe, 4), ==, 0xffffffff);
    g_assert_cmphex(cfg_read(d, 0x100, 1), ==, 0xff);
}

static void test_command_wmask(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;
    uint16_t writable = PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
                        PCI_COMMAND_MASTER | PCI_COMMAND_PARITY |
                        PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    cfg_write(d, PCI_COMMAND, 0xffff, 2);
    g_assert_cmphex(cfg_read(d, PCI_COMMAND, 2), ==, writable);
    cfg_write(d, PCI_COMMAND, 0, 2);
    g_assert_cmphex(cfg_read(d, PCI_COMMAND, 2), ==, 0);
    /* Byte writes go through the same mask. */
    cfg_write(d, PCI_COMMAND + 1, 0xff, 1);
    g_assert_cmphex(cfg_read(d, PCI_COMMAND, 2), ==, writable & 0xff00);
    /* Interrupt line is plain read/write; pin is read-only. */
    cfg_write(d, PCI_INTERRUPT_LINE, 0x0b0a, 2);
    g_assert_cmphex(cfg_read(d, PCI_INTERRUPT_LINE, 1), ==, 0x0a);
    g_assert_cmphex(cfg_read(d, PCI_INTERRUPT_PIN, 1), ==, 1);
}

static void test_status_w1c(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;
    uint16_t errors = PCI_STATUS_REC_MASTER_ABORT | PCI_STATUS_DETECTED_PARITY |
                      PCI_STATUS_SIG_SYSTEM_ERROR;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    g_assert_cmpint(msi_init(d, 0, 1, true, false, &error_abort), >, 0);
    pci_word_test_and_set_mask(d->config + PCI_STATUS, errors);

    /* Writing zeroes changes nothing. */
    cfg_write(d, PCI_STATUS, 0, 2);
    g_assert_cmphex(cfg_read(d, PCI_STATUS, 2), ==,
                    errors | PCI_STATUS_CAP_LIST);
    /* Writing one clears exactly that error bit. */
    cfg_write(d, PCI_STATUS, PCI_STATUS_REC_MASTER_ABORT, 2);
    g_assert_cmphex(cfg_read(d, PCI_STATUS, 2), ==,
                    (errors & ~PCI_STATUS_REC_MASTER_ABORT) |
                    PCI_STATUS_CAP_LIST);
    /* All ones clears the error bits, never the capability-list bit. */
    cfg_write(d, PCI_COMMAND, 0xffff0000 | PCI_COMMAND_MEMORY, 4);
    g_assert_cmphex(cfg_read(d, PCI_STATUS, 2), ==, PCI_STATUS_CAP_LIST);
    g_assert_cmphex(cfg_read(d, PCI_COMMAND, 2), ==, PCI_COMMAND_MEMORY);
}

static void test_capability_list(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;
    Error *err = NULL;
    int vndr, msi, pm;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_MSI), ==, 0);
    g_assert_false(cfg_read(d, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);

    vndr = pci_add_capability(d, PCI_CAP_ID_VNDR, 0x40, 8, &error_abort);
    g_assert_cmpint(vndr, ==, 0x40);
    /* Offset 0: first free dword after the vendor capability. */
    msi = msi_init(d, 0, 4, true, true, &error_abort);
    g_assert_cmpint(msi, ==, 0x48);
    pm = pci_add_capability(d, PCI_CAP_ID_PM, 0xd0, 8, &error_abort);
    g_assert_cmpint(pm, ==, 0xd0);

    g_assert_true(cfg_read(d, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_VNDR), ==, 0x40);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_MSI), ==, 0x48);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_PM), ==, 0xd0);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_MSIX), ==, 0);
    /* Newest first: head -> PM -> MSI -> vendor -> end. */
    g_assert_cmphex(cfg_read(d, PCI_CAPABILITY_LIST, 1), ==, 0xd0);
    g_assert_cmphex(cfg_read(d, 0xd1, 1), ==, 0x48);
    g_assert_cmphex(cfg_read(d, 0x49, 1), ==, 0x40);
    g_assert_cmphex(cfg_read(d, 0x41, 1), ==, 0);
    /* Capability headers are read-only to the guest. */
    cfg_write(d, 0x48, 0xffff, 2);
    g_assert_cmphex(cfg_read(d, 0x48, 2), ==, 0x4005);
    g_assert_cmphex(cfg_read(d, PCI_CAPABILITY_LIST, 1), ==, 0xd0);
    cfg_write(d, PCI_CAPABILITY_LIST, 0, 1);
    g_assert_cmphex(cfg_read(d, PCI_CAPABILITY_LIST, 1), ==, 0xd0);

    /* Overlaps and bad offsets are refused with an error. */
    g_assert_cmpint(pci_add_capability(d, PCI_CAP_ID_VPD, 0x44, 4, &err), <, 0);
    g_assert_nonnull(strstr(error_get_pretty(err), "overlaps"));
    error_free(err);
    err = NULL;
    g_assert_cmpint(pci_add_capability(d, PCI_CAP_ID_VPD, 0x20, 4, &err), <, 0);
    error_free(err);
    err = NULL;
    g_assert_cmpint(pci_add_capability(d, PCI_CAP_ID_VPD, 0xfe, 4, &err), <, 0);
    error_free(err);
    err = NULL;

    /* Deleting unlinks and frees the space. */
    pci_del_capability(d, PCI_CAP_ID_MSI, 0x18);
    d->cap_present &= ~QEMU_PCI_CAP_MSI;
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_MSI), ==, 0);
    g_assert_cmphex(cfg_read(d, 0xd1, 1), ==, 0x40);
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_VNDR), ==, 0x40);
    g_assert_cmpint(pci_add_capability(d, PCI_CAP_ID_VPD, 0, 8, &error_abort),
                    ==, 0x48);

    /* A looping list (as a broken passthrough device could present) ends. */
    d->config[0x41] = 0x40;
    d->config[0x49] = 0x40;
    g_assert_cmpint(pci_find_capability(d, PCI_CAP_ID_MSIX), ==, 0);
}

static void test_bar_sizing(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    /* Type bits before sizing. */
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_0, 4), ==, 0);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_1, 4), ==, 1);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_2, 4), ==, 0xc);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_4, 4), ==, 0x4);

    for (int reg = PCI_BASE_ADDRESS_0; reg <= PCI_BASE_ADDRESS_5; reg += 4) {
        cfg_write(d, reg, 0xffffffff, 4);
    }
    /* 32-bit memory, 4 KiB */
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_0, 4), ==, 0xfffff000);
    /* I/O, 32 bytes */
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_1, 4), ==, 0xffffffe1);
    /* 64-bit prefetchable, 1 MiB: low dword then the high dword */
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_2, 4), ==, 0xfff0000c);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_3, 4), ==, 0xffffffff);
    /* 64-bit, 16 KiB */
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_4, 4), ==, 0xffffc004);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_5, 4), ==, 0xffffffff);
    /* No expansion ROM: reads zero, stays zero. */
    cfg_write(d, PCI_ROM_ADDRESS, 0xffffffff, 4);
    g_assert_cmphex(cfg_read(d, PCI_ROM_ADDRESS, 4), ==, 0);

    /* Sizing values with decoding on never map anything. */
    cfg_write(d, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_IO, 2);
    for (int i = 0; i < PCI_NUM_REGIONS; i++) {
        g_assert_cmphex(pci_get_bar_addr(d, i), ==, PCI_BAR_UNMAPPED);
    }
}

static uint32_t mem_readl(Fixture *f, hwaddr addr)
{
    return address_space_ldl_le(&f->mem_as, addr, NULL);
}

static void test_bar_mapping(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;
    TestPCIDev *t;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    t = (TestPCIDev *)d;
    t->reg = 0x11223344;

    cfg_write(d, PCI_BASE_ADDRESS_0, 0xc0000000, 4);
    cfg_write(d, PCI_BASE_ADDRESS_1, 0xc000, 4);
    cfg_write(d, PCI_BASE_ADDRESS_2, 0x00000000, 4);
    cfg_write(d, PCI_BASE_ADDRESS_3, 0x1, 4);   /* 4 GiB */
    /* Not decoded until the command register says so. */
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, PCI_BAR_UNMAPPED);
    g_assert_cmphex(mem_readl(f, 0xc0000000), ==, 0xffffffff);

    cfg_write(d, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, 0xc0000000);
    g_assert_cmphex(pci_get_bar_addr(d, 2), ==, 0x100000000ULL);
    g_assert_cmphex(pci_get_bar_addr(d, 1), ==, PCI_BAR_UNMAPPED);
    g_assert_cmphex(mem_readl(f, 0xc0000000), ==, 0x11223344);
    g_assert_cmphex(mem_readl(f, 0x100000000ULL), ==, 0x11223344);

    cfg_write(d, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_IO, 2);
    g_assert_cmphex(pci_get_bar_addr(d, 1), ==, 0xc000);
    g_assert_cmphex(address_space_ldl_le(&f->io_as, 0xc000, NULL), ==,
                    0x11223344);

    /* Moving the BAR moves the registers; the old place goes dark. */
    cfg_write(d, PCI_BASE_ADDRESS_0, 0xd0001000, 4);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, 0xd0001000);
    g_assert_cmphex(mem_readl(f, 0xd0001000), ==, 0x11223344);
    g_assert_cmphex(mem_readl(f, 0xc0000000), ==, 0xffffffff);
    address_space_stl_le(&f->mem_as, 0xd0001000, 0xcafe, NULL);
    g_assert_cmphex(t->reg, ==, 0xcafe);

    /* A BAR over RAM wins while mapped, RAM comes back after. */
    address_space_stl_le(&f->mem_as, 0x2000, 0x5555aaaa, NULL);
    cfg_write(d, PCI_BASE_ADDRESS_0, 0x2000, 4);
    g_assert_cmphex(mem_readl(f, 0x2000), ==, 0xcafe);
    cfg_write(d, PCI_COMMAND, 0, 2);
    g_assert_cmphex(mem_readl(f, 0x2000), ==, 0x5555aaaa);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, PCI_BAR_UNMAPPED);
    g_assert_cmphex(pci_get_bar_addr(d, 2), ==, PCI_BAR_UNMAPPED);

    /* Address zero is not a mapping. */
    cfg_write(d, PCI_BASE_ADDRESS_0, 0, 4);
    cfg_write(d, PCI_COMMAND, PCI_COMMAND_MEMORY, 2);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, PCI_BAR_UNMAPPED);

    /* Reset unmaps and clears the BAR registers back to their types. */
    cfg_write(d, PCI_BASE_ADDRESS_0, 0xc0000000, 4);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, 0xc0000000);
    pci_device_reset(d);
    g_assert_cmphex(pci_get_bar_addr(d, 0), ==, PCI_BAR_UNMAPPED);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_0, 4), ==, 0);
    g_assert_cmphex(cfg_read(d, PCI_BASE_ADDRESS_2, 4), ==, 0xc);
    g_assert_cmphex(cfg_read(d, PCI_COMMAND, 2), ==, 0);
}

static void test_bus_master_gate(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;
    AddressSpace *as;
    MemTxResult res;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                    &error_abort);
    as = pci_get_address_space(d);
    address_space_stl_le(&f->mem_as, 0x3000, 0x1, NULL);

    address_space_stl_le(as, 0x3000, 0xabcd, &res);
    g_assert_cmpint(res, !=, MEMTX_OK);
    g_assert_cmphex(mem_readl(f, 0x3000), ==, 0x1);

    cfg_write(d, PCI_COMMAND, PCI_COMMAND_MASTER, 2);
    address_space_stl_le(as, 0x3000, 0xabcd, &res);
    g_assert_cmpint(res, ==, MEMTX_OK);
    g_assert_cmphex(mem_readl(f, 0x3000), ==, 0xabcd);

    cfg_write(d, PCI_COMMAND, 0, 2);
    address_space_stl_le(as, 0x3000, 0x9999, &res);
    g_assert_cmphex(mem_readl(f, 0x3000), ==, 0xabcd);
}

static void test_intx(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d;

    d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(2, 0), false,
                    &error_abort);
    /* Pin A of slot 2 swizzles to irq 2. */
    pci_set_irq(d, 1);
    g_assert_cmpint(f->irq_level[2], ==, 1);
    g_assert_true(cfg_read(d, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);

    /* INTx disable gates the line but not the status bit. */
    cfg_write(d, PCI_COMMAND, PCI_COMMAND_INTX_DISABLE, 2);
    g_assert_cmpint(f->irq_level[2], ==, 0);
    g_assert_true(cfg_read(d, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
    cfg_write(d, PCI_COMMAND, 0, 2);
    g_assert_cmpint(f->irq_level[2], ==, 1);

    pci_set_irq(d, 0);
    g_assert_cmpint(f->irq_level[2], ==, 0);
    g_assert_false(cfg_read(d, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
}

static void test_slot_placement(void)
{
    Fixture *f = fixture_new();
    PCIDevice *a, *b;
    Error *err = NULL;

    a = fixture_add(f, TYPE_TEST_PCI_DEV, -1, false, &error_abort);
    b = fixture_add(f, TYPE_TEST_PCI_DEV, -1, false, &error_abort);
    g_assert_cmpint(a->devfn, ==, PCI_DEVFN(0, 0));
    g_assert_cmpint(b->devfn, ==, PCI_DEVFN(1, 0));
    g_assert_true(pci_find_device(f->bus, 0, PCI_DEVFN(1, 0)) == b);

    /* Taken address. */
    g_assert_null(fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(1, 0), false,
                              &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "not available"));
    error_free(err);
    err = NULL;
    /* Function 1 of a single-function device. */
    g_assert_null(fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(1, 1), false,
                              &err));
    error_free(err);
    err = NULL;
    /* A multifunction slot takes more functions. */
    g_assert_nonnull(fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(5, 0), true,
                                 &error_abort));
    g_assert_nonnull(fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(5, 3), false,
                                 &error_abort));
    g_assert_cmphex(pci_find_device(f->bus, 0, PCI_DEVFN(5, 0))
                    ->config[PCI_HEADER_TYPE], ==, 0x80);

    /* Unrealize frees the slot. */
    qdev_unrealize(DEVICE(b));
    g_assert_null(pci_find_device(f->bus, 0, PCI_DEVFN(1, 0)));
}

static void test_express_config_size(void)
{
    Fixture *f = fixture_new();
    PCIDevice *conv, *pcie;

    conv = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(1, 0), false,
                       &error_abort);
    pcie = fixture_add(f, TYPE_TEST_PCIE_DEV, PCI_DEVFN(2, 0), false,
                       &error_abort);
    g_assert_false(pci_is_express(conv));
    g_assert_true(pci_is_express(pcie));
    g_assert_cmpuint(conv->config_size, ==, PCI_CONFIG_SPACE_SIZE);
    g_assert_cmpuint(pcie->config_size, ==, PCIE_CONFIG_SPACE_SIZE);
    /* Extended space exists (reads zero) only on the express function. */
    g_assert_cmphex(pci_host_config_read_common(pcie, 0x100, 0x1000, 4), ==,
                    0);
    g_assert_cmphex(pci_host_config_read_common(pcie, 0xffc, 0x1000, 4), ==,
                    0);
    g_assert_cmphex(pci_host_config_read_common(conv, 0x100, 0x1000, 4), ==,
                    0xffffffff);
    g_assert_cmphex(pci_host_config_read_common(pcie, 0x1000, 0x2000, 4), ==,
                    0xffffffff);
    /* A cf8-style limit of 256 hides the extended space. */
    g_assert_cmphex(pci_host_config_read_common(pcie, 0x100, 0x100, 4), ==,
                    0xffffffff);
}

static void test_express_capabilities(void)
{
    Fixture *f = fixture_new();
    PCIDevice *conv, *pcie;
    Error *err = NULL;

    conv = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(1, 0), false,
                       &error_abort);
    pcie = fixture_add(f, TYPE_TEST_PCIE_DEV, PCI_DEVFN(2, 0), false,
                       &error_abort);
    g_assert_cmpint(pcie_add_capability(conv, PCI_EXT_CAP_ID_ERR, 1, 0x100,
                                        0x48, &err), <, 0);
    error_free(err);
    err = NULL;

    /* Not at 0x100 first: a null header there links to it. */
    g_assert_cmpint(pcie_add_capability(pcie, PCI_EXT_CAP_ID_ACS, 1, 0x200,
                                        8, &error_abort), ==, 0x200);
    g_assert_cmphex(cfg_read(pcie, 0x100, 4), ==, 0x200u << 20);
    g_assert_cmpint(pcie_add_capability(pcie, PCI_EXT_CAP_ID_ERR, 2, 0x150,
                                        0x48, &error_abort), ==, 0x150);
    /* Appended at the tail: 0x100 -> 0x200 -> 0x150. */
    g_assert_cmphex(cfg_read(pcie, 0x200, 4), ==,
                    PCI_EXT_CAP_ID_ACS | 1 << 16 | 0x150u << 20);
    g_assert_cmphex(cfg_read(pcie, 0x150, 4), ==, PCI_EXT_CAP_ID_ERR | 2 << 16);
    g_assert_cmpint(pcie_find_capability(pcie, PCI_EXT_CAP_ID_ERR), ==, 0x150);
    g_assert_cmpint(pcie_find_capability(pcie, PCI_EXT_CAP_ID_ACS), ==, 0x200);
    g_assert_cmpint(pcie_find_capability(pcie, PCI_EXT_CAP_ID_SRIOV), ==, 0);
    g_assert_cmpint(pcie_find_capability(conv, PCI_EXT_CAP_ID_ERR), ==, 0);

    /* Read-only to the guest; overlaps and bad places refused. */
    cfg_write(pcie, 0x150, 0, 4);
    g_assert_cmpint(pcie_find_capability(pcie, PCI_EXT_CAP_ID_ERR), ==, 0x150);
    g_assert_cmpint(pcie_add_capability(pcie, PCI_EXT_CAP_ID_VC, 1, 0x190,
                                        8, &err), <, 0);
    error_free(err);
    err = NULL;
    g_assert_cmpint(pcie_add_capability(pcie, PCI_EXT_CAP_ID_VC, 1, 0xffc,
                                        8, &err), <, 0);
    error_free(err);
    err = NULL;
    g_assert_cmpint(pcie_add_capability(pcie, PCI_EXT_CAP_ID_VC, 1, 0x80,
                                        8, &err), <, 0);
    error_free(err);

    /* A looping chain (a broken device) does not hang the lookup. */
    pci_set_long(pcie->config + 0x150, PCI_EXT_CAP_ID_ERR | 0x200u << 20);
    g_assert_cmpint(pcie_find_capability(pcie, PCI_EXT_CAP_ID_VC), ==, 0);
}

static int never_use(PCIDevice *dev, unsigned int vector, MSIMessage msg)
{
    g_assert_not_reached();
}

static void never_release(PCIDevice *dev, unsigned int vector)
{
    g_assert_not_reached();
}

static void test_no_msix_calls_are_safe(void)
{
    Fixture *f = fixture_new();
    PCIDevice *d = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(3, 0), false,
                               &error_abort);

    g_assert_false(msix_present(d));
    g_assert_false(msix_enabled(d));
    g_assert_true(msix_is_masked(d, 0));
    g_assert_cmphex(msix_get_message(d, 0).address, ==, 0);
    g_assert_false(msix_is_pending(d, 0));
    g_assert_null(msix_table_region(d));
    g_assert_false(msix_pba_enabled(d));
    g_assert_cmpint(msix_set_vector_notifiers(d, never_use, never_release,
                                              NULL), <, 0);
    msix_notify(d, 0);
    msix_set_pending(d, 0);
    msix_set_message(d, 0, (MSIMessage){ 0x1000, 1 });
    msix_set_lazy_pba(d, true);
    msix_reset(d);
    msix_unset_vector_notifiers(d);
    g_assert_false(msi_enabled(d));
    msi_notify(d, 0);
    g_assert_cmphex(mem_readl(f, 0x1000), ==, 0);
}

static void test_host_bar_placement(void)
{
    PCIHostWindow win = { 0xe1000000ULL, 0xfec00000ULL };
    const uint64_t used[][2] = {
        { 0xe1000000ULL, 0xe1001000ULL },   /* 4 KiB at the start */
        { 0xe1004000ULL, 0xe1008000ULL },   /* 16 KiB */
    };
    uint64_t addr;

    /* Empty window: the aligned base. */
    g_assert_true(pci_host_find_free_range(&win, 0x1000, NULL, 0, &addr));
    g_assert_cmphex(addr, ==, 0xe1000000ULL);
    /* First fit past the used ranges, naturally aligned. */
    g_assert_true(pci_host_find_free_range(&win, 0x1000, used, 2, &addr));
    g_assert_cmphex(addr, ==, 0xe1001000ULL);
    g_assert_true(pci_host_find_free_range(&win, 0x4000, used, 2, &addr));
    g_assert_cmphex(addr, ==, 0xe1008000ULL);
    /* Alignment bigger than the window base's. */
    g_assert_true(pci_host_find_free_range(&win, 0x2000000, used, 2, &addr));
    g_assert_cmphex(addr, ==, 0xe2000000ULL);
    /* Too big, not a power of two, zero: no placement. */
    g_assert_false(pci_host_find_free_range(&win, 0x40000000, used, 2, &addr));
    g_assert_false(pci_host_find_free_range(&win, 0x3000, used, 2, &addr));
    g_assert_false(pci_host_find_free_range(&win, 0, used, 2, &addr));

    /* The top of a 64-bit window does not wrap. */
    win = (PCIHostWindow){ 0xfffffffff0000000ULL, UINT64_MAX };
    g_assert_true(pci_host_find_free_range(&win, 0x1000, NULL, 0, &addr));
    g_assert_cmphex(addr, ==, 0xfffffffff0000000ULL);
    g_assert_false(pci_host_find_free_range(&win, 0x20000000, NULL, 0,
                                            &addr));
}

/* A function is invisible to config dispatch until realize finished. */
static void test_invisible_until_realized(void)
{
    Fixture *f = fixture_new();
    PCIDevice *other = fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(1, 0),
                                   false, &error_abort);
    PCIDevice *d;

    g_assert_nonnull(other);
    d = fixture_add(f, TYPE_TEST_PCI_PROBE_DEV, PCI_DEVFN(2, 0), false,
                    &error_abort);
    g_assert_nonnull(d);
    g_assert_false(probe_found_self);
    g_assert_cmpuint(probe_each_count, ==, 1);
    g_assert_true(pci_find_device(f->bus, 0, PCI_DEVFN(2, 0)) == d);
    /* Its slot was held all along. */
    g_assert_null(fixture_add(f, TYPE_TEST_PCI_DEV, PCI_DEVFN(2, 0), false,
                              NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pci/config/identity-read-only", test_identity_read_only);
    g_test_add_func("/pci/bus/invisible-until-realized",
                    test_invisible_until_realized);
    g_test_add_func("/pci/config/command-write-mask", test_command_wmask);
    g_test_add_func("/pci/config/status-write-one-to-clear", test_status_w1c);
    g_test_add_func("/pci/capability/list-add-find-del", test_capability_list);
    g_test_add_func("/pci/bar/sizing-every-kind", test_bar_sizing);
    g_test_add_func("/pci/bar/mapped-only-while-enabled", test_bar_mapping);
    g_test_add_func("/pci/bus-master/gated-by-command", test_bus_master_gate);
    g_test_add_func("/pci/intx/level-and-disable", test_intx);
    g_test_add_func("/pci/bus/slot-placement", test_slot_placement);
    g_test_add_func("/pci/config/express-is-4k", test_express_config_size);
    g_test_add_func("/pci/capability/express-extended-list",
                    test_express_capabilities);
    g_test_add_func("/pci/msix/absent-calls-are-safe",
                    test_no_msix_calls_are_safe);
    g_test_add_func("/pci/host/bar-placement-first-fit",
                    test_host_bar_placement);
    return g_test_run();
}
