/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The MSI-X state machine without a VMM: table and PBA overlaid on a BAR
 * page shared with ordinary registers, delivery into RAM through the
 * bus-master space, masking, function mask, pending bits, vector
 * notifiers and their replay, lazy PBA, access-size rules.
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

#define TYPE_TEST_MSIX_DEV "test-msix-dev"
#define NVEC 12
#define BAR_ADDR 0xc0000000ULL
#define TABLE_OFF 0x800
#define PBA_OFF 0xc00
#define BACKGROUND 0x5a5a5a5aU

typedef struct TestMSIXDev {
    PCIDevice parent_obj;
    MemoryRegion bar;
    MemoryRegion regs;          /* the whole page, below table and PBA */
} TestMSIXDev;

static uint64_t regs_read(void *opaque, hwaddr addr, unsigned size)
{
    return BACKGROUND;
}

static void regs_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
}

static const MemoryRegionOps regs_ops = {
    .read = regs_read,
    .write = regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static bool test_msix_realize(PCIDevice *dev, Error **errp)
{
    TestMSIXDev *t = (TestMSIXDev *)dev;

    memory_region_init(&t->bar, OBJECT(dev), "bar0", 0x1000);
    memory_region_init_io(&t->regs, OBJECT(dev), &regs_ops, t, "regs",
                          0x1000);
    memory_region_add_subregion(&t->bar, 0, &t->regs);
    pci_register_bar(dev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &t->bar);
    return msix_init(dev, NVEC, &t->bar, 0, TABLE_OFF, &t->bar, 0, PBA_OFF,
                     0, errp) == 0;
}

static void test_msix_exit(PCIDevice *dev)
{
    TestMSIXDev *t = (TestMSIXDev *)dev;

    msix_uninit(dev, &t->bar, &t->bar);
}

static void test_msix_class_init(ObjectClass *klass, void *data)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    pc->realize = test_msix_realize;
    pc->exit = test_msix_exit;
    pc->vendor_id = 0x1234;
    pc->device_id = 0x0011;
}

static const TypeInfo test_types[] = {
    {
        .name = TYPE_TEST_MSIX_DEV,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(TestMSIXDev),
        .class_init = test_msix_class_init,
    },
};

DEFINE_TYPES(test_types)

/* Notifier bookkeeping */
typedef struct Event {
    char kind;                  /* 'u'se, 'r'elease, 'p'oll */
    unsigned int vector;
    MSIMessage msg;
} Event;

typedef struct Fixture {
    MemoryRegion mem, io, ram;
    AddressSpace mem_as;
    PCIBus *bus;
    PCIDevice *dev;
    GArray *events;
    int fail_use_vector;
} Fixture;

static Fixture *cur;

static int use_notifier(PCIDevice *dev, unsigned int vector, MSIMessage msg)
{
    Event e = { 'u', vector, msg };

    if ((int)vector == cur->fail_use_vector) {
        return -EBUSY;
    }
    g_array_append_val(cur->events, e);
    return 0;
}

static void release_notifier(PCIDevice *dev, unsigned int vector)
{
    Event e = { 'r', vector };

    g_array_append_val(cur->events, e);
}

static void poll_notifier(PCIDevice *dev, unsigned int start, unsigned int end)
{
    Event e = { 'p', start, { end, 0 } };

    g_array_append_val(cur->events, e);
}

static void fixture_init(Fixture *f)
{
    static int n;
    g_autofree char *name = g_strdup_printf("pci.msix%d", n++);
    DeviceState *dev;

    memset(f, 0, sizeof(*f));
    cur = f;
    f->fail_use_vector = -1;
    f->events = g_array_new(false, true, sizeof(Event));
    memory_region_init(&f->mem, NULL, "test-mem", UINT64_MAX);
    memory_region_init(&f->io, NULL, "test-io", 0x10000);
    memory_region_init_ram(&f->ram, NULL, "test-ram", 0x10000, &error_abort);
    memory_region_add_subregion(&f->mem, 0, &f->ram);
    address_space_init(&f->mem_as, &f->mem, "test-mem");
    f->bus = pci_root_bus_new(NULL, name, &f->mem, &f->io, &f->mem);

    dev = qdev_new(TYPE_TEST_MSIX_DEV);
    qdev_prop_set_int32(dev, "addr", PCI_DEVFN(4, 0));
    qdev_realize(dev, &f->bus->qbus, &error_abort);
    f->dev = PCI_DEVICE(dev);

    pci_host_config_write_common(f->dev, PCI_BASE_ADDRESS_0, 256,
                                 BAR_ADDR, 4);
    pci_host_config_write_common(f->dev, PCI_COMMAND, 256,
                                 PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
    g_assert_cmphex(pci_get_bar_addr(f->dev, 0), ==, BAR_ADDR);
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

static void fixture_clear_events(Fixture *f)
{
    g_array_set_size(f->events, 0);
}

static Event *ev(Fixture *f, unsigned int i)
{
    g_assert_cmpuint(i, <, f->events->len);
    return &g_array_index(f->events, Event, i);
}

static uint32_t bar_readl(Fixture *f, hwaddr off)
{
    return address_space_ldl_le(&f->mem_as, BAR_ADDR + off, NULL);
}

static void bar_writel(Fixture *f, hwaddr off, uint32_t val)
{
    address_space_stl_le(&f->mem_as, BAR_ADDR + off, val, NULL);
}

static hwaddr entry(unsigned int v, unsigned int field)
{
    return TABLE_OFF + v * PCI_MSIX_ENTRY_SIZE + field;
}

static void program_vector(Fixture *f, unsigned int v, uint64_t addr,
                           uint32_t data)
{
    bar_writel(f, entry(v, PCI_MSIX_ENTRY_LOWER_ADDR), addr);
    bar_writel(f, entry(v, PCI_MSIX_ENTRY_UPPER_ADDR), addr >> 32);
    bar_writel(f, entry(v, PCI_MSIX_ENTRY_DATA), data);
}

static void set_vector_mask(Fixture *f, unsigned int v, bool masked)
{
    bar_writel(f, entry(v, PCI_MSIX_ENTRY_VECTOR_CTRL), masked);
}

static void set_control(Fixture *f, bool enable, bool maskall)
{
    uint16_t flags = pci_get_word(f->dev->config + f->dev->msix_cap +
                                  PCI_MSIX_FLAGS);

    flags &= ~(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
    flags |= (enable ? PCI_MSIX_FLAGS_ENABLE : 0) |
             (maskall ? PCI_MSIX_FLAGS_MASKALL : 0);
    pci_host_config_write_common(f->dev, f->dev->msix_cap + PCI_MSIX_FLAGS,
                                 256, flags, 2);
}

static uint32_t ram_readl(Fixture *f, hwaddr addr)
{
    return address_space_ldl_le(&f->mem_as, addr, NULL);
}

static void ram_writel(Fixture *f, hwaddr addr, uint32_t val)
{
    address_space_stl_le(&f->mem_as, addr, val, NULL);
}

static uint32_t pba_word(Fixture *f)
{
    return bar_readl(f, PBA_OFF);
}

static void test_capability_layout(void)
{
    Fixture *f = fixture_new();
    uint8_t cap;

    cap = pci_find_capability(f->dev, PCI_CAP_ID_MSIX);
    g_assert_cmpint(cap, ==, f->dev->msix_cap);
    g_assert_cmphex(pci_get_word(f->dev->config + cap + PCI_MSIX_FLAGS), ==,
                    NVEC - 1);
    g_assert_cmphex(pci_get_long(f->dev->config + cap + PCI_MSIX_TABLE), ==,
                    TABLE_OFF | 0);
    g_assert_cmphex(pci_get_long(f->dev->config + cap + PCI_MSIX_PBA), ==,
                    PBA_OFF | 0);
    /* Only enable and function mask are writable. */
    pci_host_config_write_common(f->dev, cap, 256, 0xffffffff, 4);
    g_assert_cmphex(pci_get_word(f->dev->config + cap + PCI_MSIX_FLAGS), ==,
                    0xc000 | (NVEC - 1));
    g_assert_cmphex(f->dev->config[cap], ==, PCI_CAP_ID_MSIX);
    pci_host_config_write_common(f->dev, cap + PCI_MSIX_TABLE, 256,
                                 0xffffffff, 4);
    g_assert_cmphex(pci_get_long(f->dev->config + cap + PCI_MSIX_TABLE), ==,
                    TABLE_OFF);

    /* Every vector starts masked; the function starts disabled. */
    for (unsigned int v = 0; v < NVEC; v++) {
        g_assert_cmphex(bar_readl(f, entry(v, PCI_MSIX_ENTRY_VECTOR_CTRL)),
                        ==, 1);
        g_assert_true(msix_is_masked(f->dev, v));
    }
    /* The page's other registers are still there around table and PBA. */
    g_assert_cmphex(bar_readl(f, 0x0), ==, BACKGROUND);
    g_assert_cmphex(bar_readl(f, TABLE_OFF - 4), ==, BACKGROUND);
    g_assert_cmphex(bar_readl(f, TABLE_OFF + NVEC * 16), ==, BACKGROUND);
    g_assert_cmphex(bar_readl(f, PBA_OFF + 8), ==, BACKGROUND);
    g_assert_cmphex(pba_word(f), ==, 0);
}

static void test_init_errors(void)
{
    Fixture *f = fixture_new();
    MemoryRegion small;
    Error *err = NULL;

    memory_region_init(&small, NULL, "small", 0x100);
    g_assert_cmpint(msix_init(f->dev, 0, &small, 1, 0, &small, 1, 0x80, 0,
                              &err), <, 0);
    error_free(err);
    err = NULL;
    /* 32 vectors = 512 bytes of table do not fit in 256. */
    g_assert_cmpint(msix_init(f->dev, 32, &small, 1, 0, &small, 1, 0x80, 0,
                              &err), <, 0);
    error_free(err);
    err = NULL;
    /* Overlapping table and PBA. */
    g_assert_cmpint(msix_init(f->dev, 4, &small, 1, 0, &small, 1, 0x20, 0,
                              &err), <, 0);
    g_assert_nonnull(strstr(error_get_pretty(err), "overlap"));
    error_free(err);
    err = NULL;
    /* Misaligned offset (the low bits hold the BIR). */
    g_assert_cmpint(msix_init(f->dev, 4, &small, 1, 4, &small, 1, 0x80, 0,
                              &err), <, 0);
    error_free(err);
    memory_region_finalize(&small);
}

static void test_notify_delivers_to_ram(void)
{
    Fixture *f = fixture_new();

    program_vector(f, 3, 0x1000, 0x4321);
    set_vector_mask(f, 3, false);
    ram_writel(f, 0x1000, 0);

    /* Disabled: nothing happens, nothing pends. */
    msix_notify(f->dev, 3);
    g_assert_cmphex(ram_readl(f, 0x1000), ==, 0);
    g_assert_false(msix_is_pending(f->dev, 3));

    set_control(f, true, false);
    g_assert_true(msix_enabled(f->dev));
    msix_notify(f->dev, 3);
    g_assert_cmphex(ram_readl(f, 0x1000), ==, 0x4321);
    g_assert_cmphex(pba_word(f), ==, 0);

    /* Without bus mastering the write goes nowhere. */
    ram_writel(f, 0x1000, 0);
    pci_host_config_write_common(f->dev, PCI_COMMAND, 256, PCI_COMMAND_MEMORY,
                                 2);
    msix_notify(f->dev, 3);
    g_assert_cmphex(ram_readl(f, 0x1000), ==, 0);

    /* Out-of-range vectors are ignored. */
    msix_notify(f->dev, NVEC);
    msix_notify(f->dev, 0xffff);
}

static void test_mask_pending_unmask(void)
{
    Fixture *f = fixture_new();

    program_vector(f, 9, 0x2000, 0x99);
    set_control(f, true, false);

    msix_notify(f->dev, 9);
    g_assert_cmphex(ram_readl(f, 0x2000), ==, 0);
    g_assert_true(msix_is_pending(f->dev, 9));
    g_assert_cmphex(pba_word(f), ==, 1u << 9);

    set_vector_mask(f, 9, false);
    g_assert_cmphex(ram_readl(f, 0x2000), ==, 0x99);
    g_assert_false(msix_is_pending(f->dev, 9));
    g_assert_cmphex(pba_word(f), ==, 0);

    /* An unmask with nothing pending sends nothing. */
    ram_writel(f, 0x2000, 0);
    set_vector_mask(f, 9, true);
    set_vector_mask(f, 9, false);
    g_assert_cmphex(ram_readl(f, 0x2000), ==, 0);

    /* An 8-byte write of data + control unmasks just as well. */
    set_vector_mask(f, 9, true);
    msix_notify(f->dev, 9);
    g_assert_true(msix_is_pending(f->dev, 9));
    address_space_stq_le(&f->mem_as, BAR_ADDR + entry(9, PCI_MSIX_ENTRY_DATA),
                         0x77, NULL);
    g_assert_cmphex(ram_readl(f, 0x2000), ==, 0x77);
    g_assert_false(msix_is_pending(f->dev, 9));

    /* Reserved vector control bits read back as zero. */
    bar_writel(f, entry(9, PCI_MSIX_ENTRY_VECTOR_CTRL), 0xfffffffe);
    g_assert_cmphex(bar_readl(f, entry(9, PCI_MSIX_ENTRY_VECTOR_CTRL)), ==,
                    0);
}

static void test_function_mask(void)
{
    Fixture *f = fixture_new();

    program_vector(f, 0, 0x3000, 0x10);
    program_vector(f, 1, 0x3004, 0x11);
    set_vector_mask(f, 0, false);
    set_vector_mask(f, 1, false);
    set_control(f, true, true);
    g_assert_true(msix_function_masked(f->dev));

    msix_notify(f->dev, 0);
    msix_notify(f->dev, 1);
    g_assert_cmphex(ram_readl(f, 0x3000), ==, 0);
    g_assert_cmphex(pba_word(f), ==, 0x3);

    /* Clearing the function mask delivers every pending, unmasked vector. */
    set_control(f, true, false);
    g_assert_cmphex(ram_readl(f, 0x3000), ==, 0x10);
    g_assert_cmphex(ram_readl(f, 0x3004), ==, 0x11);
    g_assert_cmphex(pba_word(f), ==, 0);

    /* Disabling MSI-X masks the function. */
    set_control(f, false, false);
    g_assert_true(msix_function_masked(f->dev));
    g_assert_true(msix_is_masked(f->dev, 0));
}

static void test_notifiers(void)
{
    Fixture *f = fixture_new();

    program_vector(f, 2, 0xfee00000, 0x42);
    program_vector(f, 5, 0xfee00000, 0x45);
    set_vector_mask(f, 2, false);
    set_vector_mask(f, 5, false);

    /* Installed while disabled: nothing is usable, nothing replayed. */
    g_assert_cmpint(msix_set_vector_notifiers(f->dev, use_notifier,
                                              release_notifier, NULL), ==, 0);
    g_assert_cmpuint(f->events->len, ==, 0);

    /* Enabling makes 2 and 5 usable, in order, with their messages. */
    set_control(f, true, false);
    g_assert_cmpuint(f->events->len, ==, 2);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'u');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 2);
    g_assert_cmphex(ev(f, 0)->msg.address, ==, 0xfee00000);
    g_assert_cmphex(ev(f, 0)->msg.data, ==, 0x42);
    g_assert_cmpuint(ev(f, 1)->vector, ==, 5);
    fixture_clear_events(f);

    /* Masking one releases it; unmasking uses it again. */
    set_vector_mask(f, 5, true);
    g_assert_cmpuint(f->events->len, ==, 1);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'r');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 5);
    /* Reprogramming a masked vector tells nobody... */
    program_vector(f, 5, 0xfee01000, 0x55);
    g_assert_cmpuint(f->events->len, ==, 1);
    /* ...its unmask carries the new message. */
    set_vector_mask(f, 5, false);
    g_assert_cmpuint(f->events->len, ==, 2);
    g_assert_cmpint(ev(f, 1)->kind, ==, 'u');
    g_assert_cmphex(ev(f, 1)->msg.address, ==, 0xfee01000);
    g_assert_cmphex(ev(f, 1)->msg.data, ==, 0x55);
    fixture_clear_events(f);

    /* A message change on a usable vector is announced as a new use. */
    bar_writel(f, entry(2, PCI_MSIX_ENTRY_DATA), 0x62);
    g_assert_cmpuint(f->events->len, ==, 1);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'u');
    g_assert_cmphex(ev(f, 0)->msg.data, ==, 0x62);
    fixture_clear_events(f);
    /* Rewriting the same value is not a change. */
    bar_writel(f, entry(2, PCI_MSIX_ENTRY_DATA), 0x62);
    g_assert_cmpuint(f->events->len, ==, 0);

    /* The function mask releases all, and brings all back. */
    set_control(f, true, true);
    g_assert_cmpuint(f->events->len, ==, 2);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'r');
    g_assert_cmpint(ev(f, 1)->kind, ==, 'r');
    set_control(f, true, false);
    g_assert_cmpuint(f->events->len, ==, 4);
    g_assert_cmpint(ev(f, 2)->kind, ==, 'u');
    g_assert_cmpint(ev(f, 3)->kind, ==, 'u');
    fixture_clear_events(f);

    /* Uninstalling replays release for what is in use. */
    msix_unset_vector_notifiers(f->dev);
    g_assert_cmpuint(f->events->len, ==, 2);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'r');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 2);
    g_assert_cmpuint(ev(f, 1)->vector, ==, 5);
    fixture_clear_events(f);

    /* Installing while enabled replays use (and a poll of every vector). */
    g_assert_cmpint(msix_set_vector_notifiers(f->dev, use_notifier,
                                              release_notifier,
                                              poll_notifier), ==, 0);
    g_assert_cmpuint(f->events->len, ==, 3);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'u');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 2);
    g_assert_cmpint(ev(f, 1)->kind, ==, 'u');
    g_assert_cmpuint(ev(f, 1)->vector, ==, 5);
    g_assert_cmpint(ev(f, 2)->kind, ==, 'p');
    fixture_clear_events(f);

    /* A PBA read polls the vectors it covers. */
    pba_word(f);
    g_assert_cmpuint(f->events->len, ==, 1);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'p');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 0);
    g_assert_cmpuint(ev(f, 0)->msg.address, ==, NVEC);
    fixture_clear_events(f);

    /* Disabling releases; reset releases nothing more. */
    set_control(f, false, false);
    g_assert_cmpuint(f->events->len, ==, 2);
    fixture_clear_events(f);
    msix_reset(f->dev);
    g_assert_cmpuint(f->events->len, ==, 0);
    msix_unset_vector_notifiers(f->dev);
    g_assert_cmpuint(f->events->len, ==, 0);
}

static void test_notifier_use_failure(void)
{
    Fixture *f = fixture_new();

    for (unsigned int v = 0; v < 4; v++) {
        set_vector_mask(f, v, false);
    }
    set_control(f, true, false);
    f->fail_use_vector = 2;
    g_assert_cmpint(msix_set_vector_notifiers(f->dev, use_notifier,
                                              release_notifier, NULL), <, 0);
    /* Rolled back: 0 and 1 were used and are released again. */
    g_assert_cmpuint(f->events->len, ==, 4);
    g_assert_cmpint(ev(f, 2)->kind, ==, 'r');
    g_assert_cmpint(ev(f, 3)->kind, ==, 'r');
    g_assert_null(f->dev->msix_vector_use_notifier);
}

static void test_set_message(void)
{
    Fixture *f = fixture_new();
    MSIMessage msg = { .address = 0x4000, .data = 0xabc };
    MSIMessage got;

    set_control(f, true, false);
    g_assert_cmpint(msix_set_vector_notifiers(f->dev, use_notifier,
                                              release_notifier, NULL), ==, 0);
    msix_set_message(f->dev, 7, msg);
    g_assert_false(msix_is_masked(f->dev, 7));
    got = msix_get_message(f->dev, 7);
    g_assert_cmphex(got.address, ==, 0x4000);
    g_assert_cmphex(got.data, ==, 0xabc);
    g_assert_cmpuint(f->events->len, ==, 1);
    g_assert_cmpint(ev(f, 0)->kind, ==, 'u');
    g_assert_cmpuint(ev(f, 0)->vector, ==, 7);
    msix_notify(f->dev, 7);
    g_assert_cmphex(ram_readl(f, 0x4000), ==, 0xabc);

    /* Clearing masks first (release), then zeroes the message. */
    msix_clear_message(f->dev, 7);
    g_assert_true(msix_is_masked(f->dev, 7));
    got = msix_get_message(f->dev, 7);
    g_assert_cmphex(got.address, ==, 0);
    g_assert_cmphex(got.data, ==, 0);
    g_assert_cmpuint(f->events->len, ==, 2);
    g_assert_cmpint(ev(f, 1)->kind, ==, 'r');
    g_assert_cmpuint(ev(f, 1)->vector, ==, 7);
    /* A masked vector only pends; clearing it again tells nobody. */
    msix_notify(f->dev, 7);
    g_assert_true(msix_is_pending(f->dev, 7));
    msix_clear_message(f->dev, 7);
    g_assert_cmpuint(f->events->len, ==, 2);
    msix_clear_message(f->dev, 9999);
    msix_unset_vector_notifiers(f->dev);
}

static void test_lazy_pba(void)
{
    Fixture *f = fixture_new();
    uint64_t reads, writes;

    program_vector(f, 4, 0x5000, 0x44);
    set_control(f, true, false);
    g_assert_true(msix_pba_enabled(f->dev));

    msix_set_lazy_pba(f->dev, true);
    g_assert_false(msix_pba_enabled(f->dev));
    /* What lies below the PBA shows through. */
    g_assert_cmphex(pba_word(f), ==, BACKGROUND);
    memory_region_get_access_counts(msix_pba_region(f->dev), &reads, &writes);
    g_assert_cmpuint(reads, ==, 0);

    /* A masked vector fires: the PBA appears with its bit. */
    msix_notify(f->dev, 4);
    g_assert_true(msix_pba_enabled(f->dev));
    g_assert_cmphex(pba_word(f), ==, 1u << 4);
    memory_region_get_access_counts(msix_pba_region(f->dev), &reads, &writes);
    g_assert_cmpuint(reads, ==, 1);

    /* Delivery clears the last pending bit and hides the PBA again. */
    set_vector_mask(f, 4, false);
    g_assert_cmphex(ram_readl(f, 0x5000), ==, 0x44);
    g_assert_false(msix_pba_enabled(f->dev));
    g_assert_cmphex(pba_word(f), ==, BACKGROUND);

    /* Two pending: stays enabled until both are gone. */
    set_vector_mask(f, 4, true);
    msix_notify(f->dev, 4);
    msix_notify(f->dev, 11);
    msix_clr_pending(f->dev, 4);
    g_assert_true(msix_pba_enabled(f->dev));
    msix_clr_pending(f->dev, 11);
    g_assert_false(msix_pba_enabled(f->dev));

    /* Back to eager: always there. */
    msix_set_lazy_pba(f->dev, false);
    g_assert_true(msix_pba_enabled(f->dev));
    g_assert_cmphex(pba_word(f), ==, 0);
}

/* The PBA notifier: every change is announced, in order, once. */
static GString *pba_events;

static void pba_notified(PCIDevice *dev, bool enabled)
{
    g_string_append_c(pba_events, enabled ? '1' : '0');
}

static void test_pba_notifier(void)
{
    Fixture *f = fixture_new();

    pba_events = g_string_new(NULL);
    program_vector(f, 4, 0x5000, 0x44);
    set_control(f, true, false);
    /* Registration tells the state now (enabled: not lazy yet). */
    msix_set_pba_notifier(f->dev, pba_notified);
    g_assert_cmpstr(pba_events->str, ==, "1");
    msix_set_lazy_pba(f->dev, true);
    g_assert_cmpstr(pba_events->str, ==, "10");
    /* Masked vector fires twice: one change. */
    msix_notify(f->dev, 4);
    msix_notify(f->dev, 4);
    g_assert_cmpstr(pba_events->str, ==, "101");
    /* Unmask delivers and clears the bit: the PBA goes away. */
    set_vector_mask(f, 4, false);
    g_assert_cmpstr(pba_events->str, ==, "1010");
    /* Nothing pending: reset changes nothing, so announces nothing. */
    msix_reset(f->dev);
    g_assert_cmpstr(pba_events->str, ==, "1010");
    /* Unregistered: silent. */
    msix_set_pba_notifier(f->dev, NULL);
    msix_set_lazy_pba(f->dev, false);
    g_assert_true(msix_pba_enabled(f->dev));
    g_assert_cmpstr(pba_events->str, ==, "1010");
    g_string_free(pba_events, true);
    pba_events = NULL;
}

static void test_table_emulation_off(void)
{
    Fixture *f = fixture_new();

    g_assert_cmphex(bar_readl(f, entry(0, PCI_MSIX_ENTRY_VECTOR_CTRL)), ==, 1);
    msix_set_table_emulated(f->dev, false);
    g_assert_cmphex(bar_readl(f, entry(0, PCI_MSIX_ENTRY_VECTOR_CTRL)), ==,
                    BACKGROUND);
    /* The machine still programs vectors itself. */
    set_control(f, true, false);
    msix_set_message(f->dev, 0, (MSIMessage){ .address = 0x6000, .data = 6 });
    msix_notify(f->dev, 0);
    g_assert_cmphex(ram_readl(f, 0x6000), ==, 6);
    msix_set_table_emulated(f->dev, true);
    g_assert_cmphex(bar_readl(f, entry(0, PCI_MSIX_ENTRY_DATA)), ==, 6);
}

static void test_bad_accesses(void)
{
    Fixture *f = fixture_new();
    unsigned long errors = qemu_guest_error_count();
    uint8_t b;
    uint16_t w;

    program_vector(f, 1, 0x7000, 0x1111);

    /* 1- and 2-byte table accesses are refused: ones, no change. */
    b = address_space_ldub(&f->mem_as, BAR_ADDR + entry(1, 0), NULL);
    g_assert_cmphex(b, ==, 0xff);
    w = address_space_lduw_le(&f->mem_as, BAR_ADDR + entry(1, 8), NULL);
    g_assert_cmphex(w, ==, 0xffff);
    address_space_stb(&f->mem_as, BAR_ADDR + entry(1, 8), 0x22, NULL);
    address_space_stw_le(&f->mem_as, BAR_ADDR + entry(1, 12), 0, NULL);
    g_assert_cmphex(bar_readl(f, entry(1, PCI_MSIX_ENTRY_DATA)), ==, 0x1111);
    g_assert_true(msix_vector_masked(f->dev, 1));
    g_assert_cmpuint(qemu_guest_error_count(), >=, errors + 4);

    /* PBA writes are ignored and logged. */
    errors = qemu_guest_error_count();
    set_control(f, true, false);
    msix_notify(f->dev, 1);
    bar_writel(f, PBA_OFF, 0);
    g_assert_cmphex(pba_word(f), ==, 1u << 1);
    g_assert_cmpuint(qemu_guest_error_count(), ==, errors + 1);
}

static void test_reset(void)
{
    Fixture *f = fixture_new();

    program_vector(f, 1, 0x8000, 0x1);
    set_vector_mask(f, 1, false);
    set_control(f, true, true);
    msix_notify(f->dev, 1);
    g_assert_true(msix_is_pending(f->dev, 1));
    g_assert_cmpint(msix_set_vector_notifiers(f->dev, use_notifier,
                                              release_notifier, NULL), ==, 0);

    pci_device_reset(f->dev);
    g_assert_false(msix_enabled(f->dev));
    g_assert_false(msix_is_pending(f->dev, 1));
    g_assert_true(msix_vector_masked(f->dev, 1));
    g_assert_cmphex(msix_get_message(f->dev, 1).address, ==, 0);
    msix_unset_vector_notifiers(f->dev);
    g_assert_cmpuint(f->events->len, ==, 0);
}

static void test_uninit(void)
{
    Fixture *f = fixture_new();

    qdev_unrealize(DEVICE(f->dev));
    g_assert_false(msix_present(f->dev));
    g_assert_null(pci_find_device(f->bus, 0, PCI_DEVFN(4, 0)));
    g_assert_cmphex(address_space_ldl_le(&f->mem_as, BAR_ADDR + TABLE_OFF,
                                         NULL), ==, 0xffffffff);
}

static void cfg_write(Fixture *f, uint32_t addr, uint32_t val, int len)
{
    pci_host_config_write_common(f->dev, addr, 256, val, len);
}

static uint32_t cfg_read(Fixture *f, uint32_t addr, int len)
{
    return pci_host_config_read_common(f->dev, addr, 256, len);
}

static void test_msi_64bit_masked(void)
{
    Fixture *f = fixture_new();
    int cap = msi_init(f->dev, 0, 4, true, true, &error_abort);

    g_assert_cmpint(cap, >, 0);
    /* 4 vectors capable, 64-bit, per-vector masking. */
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_FLAGS, 2), ==, 0x0184);
    cfg_write(f, cap + PCI_MSI_ADDRESS_LO, 0x9003, 4);
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_ADDRESS_LO, 4), ==, 0x9000);
    cfg_write(f, cap + PCI_MSI_ADDRESS_HI, 0, 4);
    cfg_write(f, cap + PCI_MSI_DATA_64, 0x40, 2);

    /* Not enabled: nothing. */
    msi_notify(f->dev, 0);
    g_assert_cmphex(ram_readl(f, 0x9000), ==, 0);

    /* Enable 4 vectors: the vector number goes into the data low bits. */
    cfg_write(f, cap + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | (2 << 4), 2);
    g_assert_true(msi_enabled(f->dev));
    g_assert_cmpuint(msi_nr_vectors_allocated(f->dev), ==, 4);
    msi_notify(f->dev, 2);
    g_assert_cmphex(ram_readl(f, 0x9000), ==, 0x42);
    /* Beyond what the guest enabled: ignored. */
    ram_writel(f, 0x9000, 0);
    msi_notify(f->dev, 4);
    g_assert_cmphex(ram_readl(f, 0x9000), ==, 0);

    /* Masked: pending instead, delivered on unmask. */
    cfg_write(f, cap + PCI_MSI_MASK_64, 1u << 1, 4);
    msi_notify(f->dev, 1);
    g_assert_cmphex(ram_readl(f, 0x9000), ==, 0);
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_PENDING_64, 4), ==, 1u << 1);
    /* Pending bits are read-only. */
    cfg_write(f, cap + PCI_MSI_PENDING_64, 0, 4);
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_PENDING_64, 4), ==, 1u << 1);
    /* Mask bits beyond the vectors offered are not writable. */
    cfg_write(f, cap + PCI_MSI_MASK_64, 0xffffffff, 4);
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_MASK_64, 4), ==, 0xf);
    cfg_write(f, cap + PCI_MSI_MASK_64, 0, 4);
    g_assert_cmphex(ram_readl(f, 0x9000), ==, 0x41);
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_PENDING_64, 4), ==, 0);

    /* Asking for more vectors than offered gets what is offered. */
    cfg_write(f, cap + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE | (5 << 4), 2);
    g_assert_cmpuint(msi_nr_vectors_allocated(f->dev), ==, 4);

    /* Reset disables and clears. */
    pci_device_reset(f->dev);
    g_assert_false(msi_enabled(f->dev));
    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_ADDRESS_LO, 4), ==, 0);
}

static void test_msi_32bit(void)
{
    Fixture *f = fixture_new();
    int cap = msi_init(f->dev, 0, 1, false, false, &error_abort);
    MSIMessage msg;
    Error *err = NULL;

    g_assert_cmphex(cfg_read(f, cap + PCI_MSI_FLAGS, 2), ==, 0);
    cfg_write(f, cap + PCI_MSI_ADDRESS_LO, 0xa000, 4);
    cfg_write(f, cap + PCI_MSI_DATA_32, 0x1234, 2);
    cfg_write(f, cap + PCI_MSI_FLAGS, PCI_MSI_FLAGS_ENABLE, 2);
    msg = msi_get_message(f->dev, 0);
    g_assert_cmphex(msg.address, ==, 0xa000);
    g_assert_cmphex(msg.data, ==, 0x1234);
    g_assert_false(msi_is_masked(f->dev, 0));
    msi_notify(f->dev, 0);
    g_assert_cmphex(ram_readl(f, 0xa000), ==, 0x1234);

    /* Vector counts must be powers of two up to 32. */
    g_assert_cmpint(msi_init(f->dev, 0, 3, false, false, &err), <, 0);
    error_free(err);
    err = NULL;
    g_assert_cmpint(msi_init(f->dev, 0, 64, false, false, &err), <, 0);
    error_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/msix/init/capability-and-shared-page",
                    test_capability_layout);
    g_test_add_func("/msix/init/bad-layouts-refused", test_init_errors);
    g_test_add_func("/msix/notify/writes-message-on-bus-master-space",
                    test_notify_delivers_to_ram);
    g_test_add_func("/msix/mask/pending-then-delivered-on-unmask",
                    test_mask_pending_unmask);
    g_test_add_func("/msix/mask/function-mask-and-disable",
                    test_function_mask);
    g_test_add_func("/msix/notifiers/use-release-and-replay", test_notifiers);
    g_test_add_func("/msix/notifiers/use-failure-rolls-back",
                    test_notifier_use_failure);
    g_test_add_func("/msix/set-message/programs-unmasks-and-clears",
                    test_set_message);
    g_test_add_func("/msix/pba/lazy-enabled-only-while-pending",
                    test_lazy_pba);
    g_test_add_func("/msix/pba/notifier-announces-changes",
                    test_pba_notifier);
    g_test_add_func("/msix/table/emulation-off-shows-below",
                    test_table_emulation_off);
    g_test_add_func("/msix/access/bad-sizes-and-pba-writes",
                    test_bad_accesses);
    g_test_add_func("/msix/reset/masks-and-clears", test_reset);
    g_test_add_func("/msix/uninit/unmaps", test_uninit);
    g_test_add_func("/msi/64bit-masked/pending-and-multiple-vectors",
                    test_msi_64bit_masked);
    g_test_add_func("/msi/32bit/deliver", test_msi_32bit);
    return g_test_run();
}
