/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's PCI host bridge.
 *
 * Config space is reachable two ways: configuration mechanism #1 (an
 * address latch at 0xcf8, data at 0xcfc..0xcff) and an ECAM window.  BARs
 * decode straight into system memory / I/O space.  Because guests boot
 * without firmware, the bridge programs every BAR itself at reset (and on
 * hotplug), from a 32-bit window below 4 GiB, a 64-bit window above RAM and
 * an I/O window, then turns on decoding and bus mastering; the guest may
 * move them afterwards.
 *
 * The MSI window (0xfee00000) also lives here: an MSI is a DMA write there,
 * handed to whatever interrupt controller path is installed.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/boards.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/pci_host.h"
#include "system/runstate.h"
#include "trace.h"

#define TYPE_PC_HOST_BRIDGE_FUNC "pc-host-bridge"
#define TYPE_PC_MSI "apic-msi"
#define PC_MSI_NR_VECTORS 256
#define PC_PCI_NR_INTX 4
#define CONFIG_ADDR_ENABLE 0x80000000u

typedef struct PCPCIHost {
    DeviceState parent_obj;

    PCIBus *bus;
    uint32_t config_addr;
    uint8_t rcr;                /* 0xcf9 */
    MemoryRegion conf_addr_io;
    MemoryRegion conf_data_io;
    MemoryRegion ecam;
    PCIHostWindow mmio32;
    PCIHostWindow mmio64;
    PCIHostWindow io;
    qemu_irq intx[PC_PCI_NR_INTX];
    PCIHostConfig cfg;
    PCIDevice *func;            /* 00.0 */
} PCPCIHost;

#define PC_PCI_HOST(obj) OBJECT_CHECK(PCPCIHost, (obj), TYPE_PC_PCI_HOST)

typedef struct PCMsiState {
    DeviceState parent_obj;
    MemoryRegion window;
} PCMsiState;

#define PC_MSI(obj) OBJECT_CHECK(PCMsiState, (obj), TYPE_PC_MSI)

/* ---- BAR placement ---- */

bool pci_host_find_free_range(const PCIHostWindow *win, uint64_t size,
                              const uint64_t (*used)[2], size_t nr_used,
                              uint64_t *addr)
{
    uint64_t cand;
    size_t i;
    bool moved;

    if (!size || !is_power_of_2(size) || win->end <= win->base) {
        return false;
    }
    cand = QEMU_ALIGN_UP(win->base, size);
    if (cand < win->base) {
        return false;
    }
    /* Step past each conflict until nothing overlaps. */
    do {
        moved = false;
        if (cand > win->end || win->end - cand < size) {
            return false;
        }
        for (i = 0; i < nr_used; i++) {
            if (cand < used[i][1] && used[i][0] < cand + size) {
                uint64_t next = QEMU_ALIGN_UP(used[i][1], size);

                if (next <= cand) {
                    return false;   /* wrapped */
                }
                cand = next;
                moved = true;
                break;
            }
        }
    } while (moved);
    *addr = cand;
    return true;
}

static bool pc_bar_is_64bit(const PCIIORegion *r)
{
    return !(r->type & PCI_BASE_ADDRESS_SPACE_IO) &&
           (r->type & PCI_BASE_ADDRESS_MEM_TYPE_64);
}

/* The address a BAR register holds, regardless of decode enables. */
static uint64_t pc_bar_programmed(PCIDevice *dev, int i)
{
    const PCIIORegion *r = &dev->io_regions[i];
    int reg = pci_bar_reg(i);
    uint64_t addr;

    if (pc_bar_is_64bit(r)) {
        addr = pci_get_quad(dev->config + reg);
    } else {
        addr = pci_get_long(dev->config + reg);
    }
    return addr & ~(r->size - 1) &
           ((r->type & PCI_BASE_ADDRESS_SPACE_IO) ? ~3ULL : ~0xfULL);
}

typedef struct UsedRanges {
    GArray *ranges;             /* of uint64_t[2] */
    bool io;
} UsedRanges;

static void pc_collect_used(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    UsedRanges *u = opaque;
    int i;

    for (i = 0; i < PCI_ROM_SLOT; i++) {
        const PCIIORegion *r = &dev->io_regions[i];
        uint64_t range[2];

        if (!r->size || !!(r->type & PCI_BASE_ADDRESS_SPACE_IO) != u->io) {
            continue;
        }
        range[0] = pc_bar_programmed(dev, i);
        if (!range[0]) {
            continue;
        }
        range[1] = range[0] + r->size;
        g_array_append_val(u->ranges, range);
    }
}

static bool pc_place_bar(PCIDevice *dev, int i, uint64_t *addr, void *opaque)
{
    PCPCIHost *s = opaque;
    const PCIIORegion *r = &dev->io_regions[i];
    bool io = r->type & PCI_BASE_ADDRESS_SPACE_IO;
    UsedRanges u = { g_array_new(false, false, sizeof(uint64_t[2])), io };
    const uint64_t (*used)[2];
    bool ok;

    pci_for_each_device(s->bus, pc_collect_used, &u);
    /*
     * A device being hot-plugged is placed from its realize, before the
     * bus shows it: its BARs placed so far count as used too.
     */
    if (!DEVICE(dev)->realized) {
        pc_collect_used(s->bus, dev, &u);
    }
    used = (const uint64_t (*)[2])(void *)u.ranges->data;
    if (io) {
        ok = pci_host_find_free_range(&s->io, r->size, used, u.ranges->len,
                                      addr);
    } else if (pc_bar_is_64bit(r) && (r->type & PCI_BASE_ADDRESS_MEM_PREFETCH)) {
        /* Large prefetchable BARs go high; fall back below 4 GiB. */
        ok = pci_host_find_free_range(&s->mmio64, r->size, used,
                                      u.ranges->len, addr) ||
             pci_host_find_free_range(&s->mmio32, r->size, used,
                                      u.ranges->len, addr);
    } else {
        ok = pci_host_find_free_range(&s->mmio32, r->size, used,
                                      u.ranges->len, addr) ||
             (pc_bar_is_64bit(r) &&
              pci_host_find_free_range(&s->mmio64, r->size, used,
                                       u.ranges->len, addr));
    }
    g_array_free(u.ranges, true);
    if (ok) {
        trace_pc_pci_assign_bar(dev->name, *addr, r->size, i);
    }
    return ok;
}

static void pc_assign_device(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    pci_assign_device_bars(dev, pc_place_bar, opaque);
}

void pc_pci_assign_bars(PCIBus *bus)
{
    PCPCIHost *s = PC_PCI_HOST(bus->qbus.parent);

    pci_for_each_device(bus, pc_assign_device, s);
}

static void pc_pci_host_reset_handler(void *opaque)
{
    PCPCIHost *s = opaque;

    /*
     * Runs after every device reset, so all BARs start from zero.  With
     * firmware, placing BARs is the firmware's job.
     */
    if (s->cfg.assign_bars) {
        pc_pci_assign_bars(s->bus);
    }
}

static void pc_pci_hotplug(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    PCPCIHost *s = opaque;

    /* Hot-plugged devices behind firmware are the OS's to place. */
    if (s->cfg.assign_bars) {
        pc_assign_device(bus, dev, opaque);
    }
}

void pc_pci_host_map_ecam(PCIBus *root, bool enabled, uint64_t base,
                          uint64_t size)
{
    PCPCIHost *s = PC_PCI_HOST(root->qbus.parent);

    memory_region_transaction_begin();
    memory_region_set_enabled(&s->ecam, enabled && size);
    if (size) {
        memory_region_set_size(&s->ecam, size);
    }
    memory_region_set_address(&s->ecam, base);
    memory_region_transaction_commit();
}

/* ---- configuration mechanism #1 ---- */

static PCIDevice *pc_conf1_device(PCPCIHost *s, uint32_t *reg,
                                  unsigned port_off)
{
    uint32_t a = s->config_addr;

    if (!(a & CONFIG_ADDR_ENABLE)) {
        return NULL;
    }
    *reg = (a & 0xfc) | (port_off & 3);
    return pci_find_device(s->bus, (a >> 16) & 0xff, (a >> 8) & 0xff);
}

static uint64_t all_ones(unsigned size)
{
    return size >= 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
}

/* Reset Control Register at 0xcf9 (PIIX3 / ICH9): bit 2 resets. */
#define RCR_SYS_RST 0x02
#define RCR_RST_CPU 0x04
#define RCR_FULL_RST 0x08

static uint64_t pc_conf_addr_read(void *opaque, hwaddr addr, unsigned size)
{
    PCPCIHost *s = opaque;

    if (addr == 1 && size == 1) {
        return s->rcr;
    }
    if (addr != 0 || size != 4) {
        return all_ones(size);
    }
    return s->config_addr;
}

static void pc_conf_addr_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    PCPCIHost *s = opaque;

    if (addr == 1 && size == 1) {
        s->rcr = val & (RCR_SYS_RST | RCR_FULL_RST);
        if (val & RCR_RST_CPU) {
            trace_pc_reset_control(val);
            qemu_system_guest_reset_request();
        }
        return;
    }
    /* Only a dword access is the address latch. */
    if (addr != 0 || size != 4) {
        return;
    }
    s->config_addr = val & ~3u;
}

static uint64_t pc_conf_data_read(void *opaque, hwaddr addr, unsigned size)
{
    PCPCIHost *s = opaque;
    uint32_t reg;
    PCIDevice *dev = pc_conf1_device(s, &reg, addr);

    if (!dev) {
        return all_ones(size);
    }
    return pci_host_config_read_common(dev, reg, PCI_CONFIG_SPACE_SIZE, size);
}

static void pc_conf_data_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    PCPCIHost *s = opaque;
    uint32_t reg;
    PCIDevice *dev = pc_conf1_device(s, &reg, addr);

    if (dev) {
        pci_host_config_write_common(dev, reg, PCI_CONFIG_SPACE_SIZE, val,
                                     size);
    }
}

static const MemoryRegionOps pc_conf_addr_ops = {
    .read = pc_conf_addr_read,
    .write = pc_conf_addr_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static const MemoryRegionOps pc_conf_data_ops = {
    .read = pc_conf_data_read,
    .write = pc_conf_data_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/* ---- ECAM ---- */

static PCIDevice *pc_ecam_device(PCPCIHost *s, hwaddr addr)
{
    return pci_find_device(s->bus, addr >> 20, (addr >> 12) & 0xff);
}

static uint64_t pc_ecam_read(void *opaque, hwaddr addr, unsigned size)
{
    PCPCIHost *s = opaque;
    PCIDevice *dev = pc_ecam_device(s, addr);

    if (!dev) {
        return all_ones(size);
    }
    return pci_host_config_read_common(dev, addr & 0xfff,
                                       PCIE_CONFIG_SPACE_SIZE, size);
}

static void pc_ecam_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    PCPCIHost *s = opaque;
    PCIDevice *dev = pc_ecam_device(s, addr);

    if (dev) {
        pci_host_config_write_common(dev, addr & 0xfff,
                                     PCIE_CONFIG_SPACE_SIZE, val, size);
    }
}

static const MemoryRegionOps pc_ecam_ops = {
    .read = pc_ecam_read,
    .write = pc_ecam_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/* ---- INTx ---- */

static void pc_pci_set_irq(void *opaque, int irq, int level)
{
    PCPCIHost *s = opaque;

    qemu_set_irq(s->intx[irq], level);
}

/* ---- the host bridge device ---- */

static bool pc_pci_host_realize(DeviceState *dev, Error **errp)
{
    PCPCIHost *s = PC_PCI_HOST(dev);
    DeviceState *func;

    memory_region_init_io(&s->conf_addr_io, OBJECT(s), &pc_conf_addr_ops, s,
                          "pci-conf-idx", 4);
    memory_region_init_io(&s->conf_data_io, OBJECT(s), &pc_conf_data_ops, s,
                          "pci-conf-data", 4);
    memory_region_init_io(&s->ecam, OBJECT(s), &pc_ecam_ops, s, "pci-ecam",
                          s->cfg.ecam_size ? s->cfg.ecam_size
                                           : PC_PCI_ECAM_SIZE);
    memory_region_set_enabled(&s->ecam, s->cfg.ecam_size != 0);
    memory_region_add_subregion(get_system_io(), PC_PCI_CONFIG_ADDR_PORT,
                                &s->conf_addr_io);
    memory_region_add_subregion(get_system_io(), PC_PCI_CONFIG_DATA_PORT,
                                &s->conf_data_io);
    memory_region_add_subregion(get_system_memory(), s->cfg.ecam_base,
                                &s->ecam);

    s->bus = pci_root_bus_new(dev, s->cfg.bus_name ? s->cfg.bus_name
                                                   : "pci.0",
                              get_system_memory(),
                              get_system_io(), get_system_memory());
    qdev_init_gpio_out(dev, s->intx, PC_PCI_NR_INTX);
    pci_bus_irqs(s->bus, pc_pci_set_irq, NULL, s, PC_PCI_NR_INTX);
    pci_bus_set_hotplug_hook(s->bus, pc_pci_hotplug, s);

    /* The bridge itself is function 00.0, as on real chipsets. */
    func = qdev_new(s->cfg.func_type ? s->cfg.func_type
                                     : TYPE_PC_HOST_BRIDGE_FUNC);
    qdev_prop_set_int32(func, "addr", PCI_DEVFN(0, 0));
    if (!qdev_realize_and_unref(func, &s->bus->qbus, errp)) {
        return false;
    }
    s->func = PCI_DEVICE(func);
    qemu_register_reset(pc_pci_host_reset_handler, s);
    return true;
}

/*
 * The regions sit in the global address spaces, which outlive us: take
 * them out whichever way we go (unrealize or a bare finalize at exit).
 */
static void pc_pci_host_finalize(Object *obj)
{
    PCPCIHost *s = PC_PCI_HOST(obj);

    if (s->bus) {
        qemu_unregister_reset(pc_pci_host_reset_handler, s);
        memory_region_finalize(&s->conf_addr_io);
        memory_region_finalize(&s->conf_data_io);
        memory_region_finalize(&s->ecam);
        s->bus = NULL;
    }
}

static void pc_pci_host_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "pc PCI host bridge (0xcf8/0xcfc + ECAM)";
    dc->realize = pc_pci_host_realize;
    dc->user_creatable = false;
}

static void pc_host_bridge_func_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "pc host bridge function";
    dc->user_creatable = false;
    dc->hotpluggable = false;
    pc->vendor_id = PCI_VENDOR_ID_CONDUIT;
    pc->device_id = PCI_DEVICE_ID_CONDUIT_HOST;
    pc->class_id = PCI_CLASS_BRIDGE_HOST;
}

/* ---- MSI window ---- */

static PCMsiHandler pc_msi_handler;
static void *pc_msi_opaque;
static PCMsiState *pc_msi_dev;

void pc_msi_set_handler(PCMsiHandler fn, void *opaque)
{
    pc_msi_handler = fn;
    pc_msi_opaque = opaque;
}

static uint64_t pc_msi_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void pc_msi_write(void *opaque, hwaddr addr, uint64_t val,
                         unsigned size)
{
    PCMsiState *s = opaque;
    uint64_t msi_addr = PC_MSI_ADDR_BASE + addr;
    uint32_t data = val;
    qemu_irq line;

    trace_pc_msi_write(msi_addr, data);
    if (pc_msi_handler) {
        pc_msi_handler(msi_addr, data, pc_msi_opaque);
        return;
    }
    /*
     * No interrupt controller: show the vector on a GPIO line (qtest can
     * intercept /machine/msi).  Each MSI is an edge, so the line drops and
     * rises again; it stays raised after the last one.
     */
    line = qdev_get_gpio_in(DEVICE(s), data & 0xff);
    qemu_set_irq(line, 0);
    qemu_set_irq(line, 1);
}

static const MemoryRegionOps pc_msi_ops = {
    .read = pc_msi_read,
    .write = pc_msi_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static void pc_msi_gpio(void *opaque, int n, int level)
{
    /* Nothing behind the lines without an interrupt controller. */
}

static bool pc_msi_realize(DeviceState *dev, Error **errp)
{
    PCMsiState *s = PC_MSI(dev);

    qdev_init_gpio_in(dev, pc_msi_gpio, PC_MSI_NR_VECTORS);
    memory_region_init_io(&s->window, OBJECT(s), &pc_msi_ops, s, "msi",
                          PC_MSI_ADDR_SIZE);
    /* Above RAM and any BAR, as the APIC window is on real hardware. */
    memory_region_add_subregion_overlap(get_system_memory(), PC_MSI_ADDR_BASE,
                                        &s->window, 100);
    return true;
}

static void pc_msi_finalize(Object *obj)
{
    PCMsiState *s = PC_MSI(obj);

    if (memory_region_size(&s->window)) {
        memory_region_finalize(&s->window);
    }
    if (pc_msi_dev == s) {
        pc_msi_dev = NULL;
    }
}

static void pc_msi_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "MSI window of the local APICs";
    dc->realize = pc_msi_realize;
    dc->user_creatable = false;
}

void pc_msi_init(MachineState *ms)
{
    DeviceState *dev;

    if (pc_msi_dev) {
        return;
    }
    dev = qdev_new(TYPE_PC_MSI);
    object_property_add_child(OBJECT(ms), "msi", OBJECT(dev));
    qdev_realize_and_unref(dev, NULL, &error_fatal);
    pc_msi_dev = PC_MSI(dev);
}

PCIHostWindow pc_pci_mmio64_window(uint64_t ram_above_4g_end)
{
    uint64_t base64 = MAX(ram_above_4g_end, 0x100000000ULL);

    base64 = QEMU_ALIGN_UP(base64, 1ULL << 30);
    return (PCIHostWindow){ base64, base64 + PC_PCI_MMIO64_SIZE };
}

PCIBus *pc_pci_host_init(MachineState *ms, uint64_t ram_above_4g_end,
                         const PCIHostConfig *cfg, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_PC_PCI_HOST);
    PCPCIHost *s = PC_PCI_HOST(dev);

    s->cfg = *cfg;
    s->mmio32 = cfg->mmio32.end ? cfg->mmio32
                : (PCIHostWindow){ PC_PCI_MMIO32_BASE, PC_PCI_MMIO32_END };
    s->mmio64 = pc_pci_mmio64_window(ram_above_4g_end);
    s->io = (PCIHostWindow){ PC_PCI_IO_BASE, PC_PCI_IO_END };
    object_property_add_child(OBJECT(ms), "pci-host", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    pc_msi_init(ms);
    return s->bus;
}

typedef struct Mmio64Extent {
    uint64_t lo, hi;
} Mmio64Extent;

static void mmio64_extent_add(Mmio64Extent *e, uint64_t base, uint64_t end)
{
    if (base < 0x100000000ULL || end <= base) {
        return;
    }
    e->lo = MIN(e->lo, base);
    e->hi = MAX(e->hi, end);
}

/* What firmware programmed above 4 GiB: 64-bit BARs, bridge windows. */
static void mmio64_extent_dev(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    Mmio64Extent *e = opaque;
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);

    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        const PCIIORegion *r = &dev->io_regions[i];

        if (r->size && pc_bar_is_64bit(r)) {
            uint64_t a = pc_bar_programmed(dev, i);

            mmio64_extent_add(e, a, a + r->size);
        }
    }
    if (pc->is_bridge) {
        uint8_t *c = dev->config;
        uint64_t base = ((uint64_t)pci_get_long(c + PCI_PREF_BASE_UPPER32)
                         << 32) | ((uint64_t)(pci_get_word(c +
                         PCI_PREF_MEMORY_BASE) & 0xfff0) << 16);
        uint64_t limit = ((uint64_t)pci_get_long(c + PCI_PREF_LIMIT_UPPER32)
                          << 32) | ((uint64_t)(pci_get_word(c +
                          PCI_PREF_MEMORY_LIMIT) & 0xfff0) << 16) | 0xfffff;

        mmio64_extent_add(e, base, limit + 1);
        if (dev->secondary_bus) {
            pci_for_each_device(dev->secondary_bus, mmio64_extent_dev, e);
        }
    }
}

bool pc_pci_host_mmio64_extent(PCIBus *root, uint64_t *lo, uint64_t *hi)
{
    Mmio64Extent e = { UINT64_MAX, 0 };

    pci_for_each_device(root, mmio64_extent_dev, &e);
    *lo = e.lo;
    *hi = e.hi;
    return e.hi > e.lo;
}

void pc_pci_host_set_assign_bars(PCIBus *root, bool assign)
{
    PC_PCI_HOST(root->qbus.parent)->cfg.assign_bars = assign;
}

PCIDevice *pc_pci_host_func(PCIBus *root)
{
    return PC_PCI_HOST(root->qbus.parent)->func;
}

static const TypeInfo pc_pci_host_types[] = {
    {
        .name = TYPE_PC_PCI_HOST,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(PCPCIHost),
        .class_init = pc_pci_host_class_init,
        .instance_finalize = pc_pci_host_finalize,
    },
    {
        .name = TYPE_PC_HOST_BRIDGE_FUNC,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PCIDevice),
        .class_init = pc_host_bridge_func_class_init,
    },
    {
        .name = TYPE_PC_MSI,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(PCMsiState),
        .class_init = pc_msi_class_init,
        .instance_finalize = pc_msi_finalize,
    },
};

DEFINE_TYPES(pc_pci_host_types)
