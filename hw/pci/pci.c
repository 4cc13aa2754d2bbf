/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCI core: the bus, config space semantics, capabilities, BARs, INTx and
 * bus mastering.
 *
 * Config space behaviour is data-driven: every write goes through the
 * per-byte wmask (writable bits) and w1cmask (write-one-to-clear bits), so
 * a device describes its registers once, when it builds its header and
 * capabilities, and the generic code enforces them.
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
#include "trace.h"

#define PCI_BASE_ADDRESS_IO_MASK_LOW 0x3
#define PCI_BASE_ADDRESS_MEM_MASK_LOW 0xf

/* Command bits a guest may change. */
#define PCI_COMMAND_WRITABLE \
    (PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER | \
     PCI_COMMAND_PARITY | PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE)

/* Status error bits a guest clears by writing 1. */
#define PCI_STATUS_W1C \
    (PCI_STATUS_PARITY | PCI_STATUS_SIG_TARGET_ABORT | \
     PCI_STATUS_REC_TARGET_ABORT | PCI_STATUS_REC_MASTER_ABORT | \
     PCI_STATUS_SIG_SYSTEM_ERROR | PCI_STATUS_DETECTED_PARITY)

/* A capability list longer than this is a loop. */
#define PCI_FIND_CAP_TTL 48

static bool ranges_overlap(uint32_t a, uint32_t alen, uint32_t b,
                           uint32_t blen)
{
    return a < b + blen && b < a + alen;
}

/* ---- config space ---- */

static void pci_config_alloc(PCIDevice *dev, uint32_t size)
{
    dev->config_size = size;
    dev->config = g_malloc0(size);
    dev->cmask = g_malloc0(size);
    dev->wmask = g_malloc0(size);
    dev->w1cmask = g_malloc0(size);
    dev->used = g_malloc0(size);
}

static void pci_config_free(PCIDevice *dev)
{
    g_clear_pointer(&dev->config, g_free);
    g_clear_pointer(&dev->cmask, g_free);
    g_clear_pointer(&dev->wmask, g_free);
    g_clear_pointer(&dev->w1cmask, g_free);
    g_clear_pointer(&dev->used, g_free);
}

static void pci_init_header(PCIDevice *dev, PCIDeviceClass *pc)
{
    uint8_t *c = dev->config;

    pci_set_word(c + PCI_VENDOR_ID, pc->vendor_id);
    pci_set_word(c + PCI_DEVICE_ID, pc->device_id);
    pci_set_byte(c + PCI_REVISION_ID, pc->revision);
    pci_set_word(c + PCI_CLASS_DEVICE, pc->class_id);
    pci_set_word(c + PCI_SUBSYSTEM_VENDOR_ID, pc->subsystem_vendor_id);
    pci_set_word(c + PCI_SUBSYSTEM_ID, pc->subsystem_id);
    pci_set_byte(c + PCI_HEADER_TYPE,
                 (pc->is_bridge ? PCI_HEADER_TYPE_BRIDGE
                                : PCI_HEADER_TYPE_NORMAL) |
                 (dev->multifunction ? 0x80 : 0));

    /* Identity bytes are what vfio compares; the device owns them. */
    memset(dev->cmask + PCI_VENDOR_ID, 0xff, 4);
    memset(dev->cmask + PCI_REVISION_ID, 0xff, 4);
    pci_set_byte(dev->cmask + PCI_HEADER_TYPE, 0xff);
    pci_set_word(dev->cmask + PCI_STATUS, PCI_STATUS_CAP_LIST);

    pci_set_word(dev->wmask + PCI_COMMAND, PCI_COMMAND_WRITABLE);
    pci_set_word(dev->w1cmask + PCI_STATUS, PCI_STATUS_W1C);
    pci_set_byte(dev->wmask + PCI_CACHE_LINE_SIZE, 0xff);
    pci_set_byte(dev->wmask + PCI_LATENCY_TIMER, 0xff);
    pci_set_byte(dev->wmask + PCI_INTERRUPT_LINE, 0xff);

    memset(dev->used, 0xff, PCI_CONFIG_HEADER_SIZE);
}

uint32_t pci_default_read_config(PCIDevice *dev, uint32_t addr, int len)
{
    assert(len >= 1 && len <= 4 && addr + len <= dev->config_size);
    return ldn_le_p(dev->config + addr, len);
}

static bool pci_write_touches(uint32_t addr, int len, uint32_t reg,
                              uint32_t reg_len)
{
    return ranges_overlap(addr, len, reg, reg_len);
}

static void pci_update_bus_master(PCIDevice *dev)
{
    bool on = pci_get_word(dev->config + PCI_COMMAND) & PCI_COMMAND_MASTER;

    if (dev->bus_master_as_initialized &&
        memory_region_is_enabled(&dev->bus_master_enable_region) != on) {
        memory_region_set_enabled(&dev->bus_master_enable_region, on);
    }
}

static void pci_update_irq_disabled(PCIDevice *dev);

void pci_default_write_config(PCIDevice *dev, uint32_t addr, uint32_t val_in,
                              int len)
{
    uint32_t val = val_in;
    int i;

    assert(len >= 1 && len <= 4 && addr + len <= dev->config_size);
    for (i = 0; i < len; i++, val >>= 8) {
        uint8_t wmask = dev->wmask[addr + i];
        uint8_t w1c = dev->w1cmask[addr + i];
        uint8_t b = val & 0xff;

        dev->config[addr + i] = (dev->config[addr + i] & ~wmask) | (b & wmask);
        dev->config[addr + i] &= ~(b & w1c);
    }

    if (pci_write_touches(addr, len, PCI_BASE_ADDRESS_0, 24) ||
        pci_write_touches(addr, len, PCI_ROM_ADDRESS, 4) ||
        pci_write_touches(addr, len, PCI_COMMAND, 2)) {
        pci_update_mappings(dev);
    }
    if (pci_write_touches(addr, len, PCI_COMMAND, 2)) {
        pci_update_bus_master(dev);
        pci_update_irq_disabled(dev);
    }
    msi_write_config(dev, addr, val_in, len);
    msix_write_config(dev, addr, val_in, len);
}

uint32_t pci_host_config_read_common(PCIDevice *dev, uint32_t addr,
                                     uint32_t limit, int len)
{
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);
    uint32_t val;

    limit = MIN(limit, dev->config_size);
    if (len < 1 || len > 4 || addr >= limit || limit - addr < len) {
        return len >= 4 ? ~0u : (1u << (8 * len)) - 1;
    }
    val = pc->config_read ? pc->config_read(dev, addr, len)
                          : pci_default_read_config(dev, addr, len);
    trace_pci_cfg_read(dev->name, PCI_SLOT(dev->devfn), PCI_FUNC(dev->devfn),
                       addr, val, len);
    return val;
}

void pci_host_config_write_common(PCIDevice *dev, uint32_t addr,
                                  uint32_t limit, uint32_t val, int len)
{
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);

    limit = MIN(limit, dev->config_size);
    if (len < 1 || len > 4 || addr >= limit || limit - addr < len) {
        return;
    }
    trace_pci_cfg_write(dev->name, PCI_SLOT(dev->devfn), PCI_FUNC(dev->devfn),
                        addr, val, len);
    if (pc->config_write) {
        pc->config_write(dev, addr, val, len);
    } else {
        pci_default_write_config(dev, addr, val, len);
    }
}

void pci_host_config_write(PCIDevice *dev, uint32_t addr, uint32_t val,
                           int len)
{
    pci_host_config_write_common(dev, addr, dev->config_size, val, len);
}

/* ---- BAR assignment (hosts without firmware) ---- */

void pci_assign_device_bars(PCIDevice *dev, PCIBarPlaceFn place,
                            void *opaque)
{
    uint16_t cmd = PCI_COMMAND_MASTER;
    int order[PCI_ROM_SLOT];
    int n = 0, i, j;

    for (i = 0; i < PCI_ROM_SLOT; i++) {
        if (dev->io_regions[i].size) {
            order[n++] = i;
        }
    }
    /* Insertion sort, largest first; equal sizes keep BAR order. */
    for (i = 1; i < n; i++) {
        for (j = i; j > 0 && dev->io_regions[order[j]].size >
                             dev->io_regions[order[j - 1]].size; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    }
    for (i = 0; i < n; i++) {
        int bar = order[i];
        const PCIIORegion *r = &dev->io_regions[bar];
        bool io = r->type & PCI_BASE_ADDRESS_SPACE_IO;
        int reg = pci_bar_reg(bar);
        uint64_t addr;

        if (!place(dev, bar, &addr, opaque)) {
            warn_report("%s: no room for BAR%d (0x%" PRIx64 " bytes); "
                        "left unassigned", dev->name, bar, r->size);
            continue;
        }
        pci_host_config_write(dev, reg, (uint32_t)addr, 4);
        if (!io && (r->type & PCI_BASE_ADDRESS_MEM_TYPE_64)) {
            pci_host_config_write(dev, reg + 4, addr >> 32, 4);
        }
        cmd |= io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY;
    }
    pci_host_config_write(dev, PCI_COMMAND,
                          pci_get_word(dev->config + PCI_COMMAND) | cmd, 2);
}

/* ---- capabilities ---- */

uint8_t pci_find_capability(PCIDevice *dev, uint8_t cap_id)
{
    uint8_t pos;
    int ttl = PCI_FIND_CAP_TTL;

    if (!(pci_get_word(dev->config + PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        return 0;
    }
    pos = dev->config[PCI_CAPABILITY_LIST] & ~3;
    while (pos >= PCI_CONFIG_HEADER_SIZE && ttl--) {
        if (dev->config[pos + PCI_CAP_LIST_ID] == cap_id) {
            return pos;
        }
        pos = dev->config[pos + PCI_CAP_LIST_NEXT] & ~3;
    }
    return 0;
}

static uint8_t pci_find_free_space(PCIDevice *dev, uint8_t size)
{
    uint32_t off, i;

    for (off = PCI_CONFIG_HEADER_SIZE; off + size <= PCI_CONFIG_SPACE_SIZE;
         off += 4) {
        for (i = 0; i < size && !dev->used[off + i]; i++) {
        }
        if (i == size) {
            return off;
        }
    }
    return 0;
}

/*
 * Marks a new capability's bytes used and checked, and read-only until the
 * capability's owner opens up its registers.
 */
static void pci_claim_capability(PCIDevice *dev, uint16_t cap_id,
                                 uint16_t offset, uint16_t size)
{
    memset(dev->used + offset, 0xff, size);
    memset(dev->wmask + offset, 0, size);
    memset(dev->w1cmask + offset, 0, size);
    memset(dev->cmask + offset, 0xff, size);
    trace_pci_add_capability(dev->name, cap_id, offset, size);
}

int pci_add_capability(PCIDevice *dev, uint8_t cap_id, uint8_t offset,
                       uint8_t size, Error **errp)
{
    uint32_t i;

    if (size < 2) {
        error_setg(errp, "%s: PCI capability 0x%x needs at least 2 bytes",
                   dev->name, cap_id);
        return -EINVAL;
    }
    if (!offset) {
        offset = pci_find_free_space(dev, size);
        if (!offset) {
            error_setg(errp, "%s: no room for PCI capability 0x%x "
                       "(%u bytes) in config space", dev->name, cap_id, size);
            return -ENOSPC;
        }
    } else {
        if (offset < PCI_CONFIG_HEADER_SIZE || (offset & 3) ||
            offset + size > PCI_CONFIG_SPACE_SIZE) {
            error_setg(errp, "%s: PCI capability 0x%x at offset 0x%x "
                       "(%u bytes) is outside the capability area",
                       dev->name, cap_id, offset, size);
            return -EINVAL;
        }
        for (i = 0; i < size; i++) {
            if (dev->used[offset + i]) {
                error_setg(errp, "%s: PCI capability 0x%x at offset 0x%x "
                           "overlaps used config space at 0x%x",
                           dev->name, cap_id, offset, offset + i);
                return -EBUSY;
            }
        }
    }

    dev->config[offset + PCI_CAP_LIST_ID] = cap_id;
    dev->config[offset + PCI_CAP_LIST_NEXT] = dev->config[PCI_CAPABILITY_LIST];
    dev->config[PCI_CAPABILITY_LIST] = offset;
    pci_word_test_and_set_mask(dev->config + PCI_STATUS, PCI_STATUS_CAP_LIST);
    pci_claim_capability(dev, cap_id, offset, size);
    return offset;
}

void pci_del_capability(PCIDevice *dev, uint8_t cap_id, uint8_t size)
{
    uint8_t pos = pci_find_capability(dev, cap_id);
    uint8_t prev = PCI_CAPABILITY_LIST;
    int ttl = PCI_FIND_CAP_TTL;

    if (!pos) {
        return;
    }
    /* Unlink: find who points at pos. */
    while ((dev->config[prev] & ~3) != pos && ttl--) {
        prev = (dev->config[prev] & ~3) + PCI_CAP_LIST_NEXT;
    }
    dev->config[prev] = dev->config[pos + PCI_CAP_LIST_NEXT];
    memset(dev->config + pos, 0, size);
    memset(dev->wmask + pos, 0, size);
    memset(dev->w1cmask + pos, 0, size);
    memset(dev->cmask + pos, 0, size);
    memset(dev->used + pos, 0, size);
    if (!dev->config[PCI_CAPABILITY_LIST]) {
        pci_word_test_and_clear_mask(dev->config + PCI_STATUS,
                                     PCI_STATUS_CAP_LIST);
    }
}

/* ---- PCIe extended capabilities ---- */

#define PCIE_EXT_CAP_START PCI_CFG_SPACE_SIZE
#define PCIE_EXT_CAP_HEADER(id, ver, next) \
    ((id) | ((uint32_t)(ver) << 16) | ((uint32_t)(next) << 20))
/* 4 KiB of dword-aligned headers: more hops than that is a loop. */
#define PCIE_FIND_CAP_TTL ((PCIE_CONFIG_SPACE_SIZE - PCIE_EXT_CAP_START) / 8)

uint16_t pcie_find_capability(PCIDevice *dev, uint16_t cap_id)
{
    uint16_t pos = PCIE_EXT_CAP_START;
    int ttl = PCIE_FIND_CAP_TTL;

    if (dev->config_size < PCIE_CONFIG_SPACE_SIZE) {
        return 0;
    }
    while (pos >= PCIE_EXT_CAP_START && ttl--) {
        uint32_t header = pci_get_long(dev->config + pos);

        if (!header) {
            return 0;
        }
        if (PCI_EXT_CAP_ID(header) == cap_id) {
            return pos;
        }
        pos = PCI_EXT_CAP_NEXT(header);
    }
    return 0;
}

int pcie_add_capability(PCIDevice *dev, uint16_t cap_id, uint8_t cap_ver,
                        uint16_t offset, uint16_t size, Error **errp)
{
    uint16_t pos = PCIE_EXT_CAP_START;
    int ttl = PCIE_FIND_CAP_TTL;
    uint32_t i, header;

    if (dev->config_size < PCIE_CONFIG_SPACE_SIZE) {
        error_setg(errp, "%s: extended capability 0x%x needs a PCIe "
                   "function", dev->name, cap_id);
        return -EINVAL;
    }
    if (size < 4 || (offset & 3) || offset < PCIE_EXT_CAP_START ||
        offset + size > dev->config_size) {
        error_setg(errp, "%s: extended capability 0x%x at 0x%x (%u bytes) "
                   "is outside extended config space", dev->name, cap_id,
                   offset, size);
        return -EINVAL;
    }
    for (i = 0; i < size; i++) {
        if (dev->used[offset + i]) {
            error_setg(errp, "%s: extended capability 0x%x at 0x%x overlaps "
                       "used config space at 0x%x", dev->name, cap_id, offset,
                       offset + i);
            return -EBUSY;
        }
    }

    if (offset != PCIE_EXT_CAP_START) {
        if (!dev->used[PCIE_EXT_CAP_START]) {
            /* A null header at 0x100 starts the chain. */
            pci_set_long(dev->config + PCIE_EXT_CAP_START, 0);
            memset(dev->used + PCIE_EXT_CAP_START, 0xff, 4);
            memset(dev->cmask + PCIE_EXT_CAP_START, 0xff, 4);
        }
        /* Append after the last capability. */
        for (;;) {
            header = pci_get_long(dev->config + pos);
            if (!PCI_EXT_CAP_NEXT(header) || ttl-- <= 0) {
                break;
            }
            pos = PCI_EXT_CAP_NEXT(header);
        }
        pci_set_long(dev->config + pos,
                     (header & 0xfffff) | ((uint32_t)offset << 20));
    }
    pci_set_long(dev->config + offset, PCIE_EXT_CAP_HEADER(cap_id, cap_ver, 0));
    pci_claim_capability(dev, cap_id, offset, size);
    return offset;
}

/* ---- BARs ---- */

void pci_register_bar(PCIDevice *dev, int region_num, uint8_t type,
                      MemoryRegion *memory)
{
    PCIIORegion *r;
    pcibus_t size = memory_region_size(memory);
    int reg = pci_bar_reg(region_num);
    uint64_t wmask;

    assert(region_num >= 0 && region_num < PCI_NUM_REGIONS);
    assert(is_power_of_2(size));
    r = &dev->io_regions[region_num];
    assert(!r->size);
    r->addr = PCI_BAR_UNMAPPED;
    r->size = size;
    r->type = type;
    r->memory = memory;
    r->address_space = (type & PCI_BASE_ADDRESS_SPACE_IO)
                       ? dev->bus->bar_space_io
                       : dev->bus->bar_space_mem;

    wmask = ~(size - 1);
    if (region_num == PCI_ROM_SLOT) {
        wmask = (wmask & PCI_ROM_ADDRESS_MASK) | PCI_ROM_ADDRESS_ENABLE;
    } else if (type & PCI_BASE_ADDRESS_SPACE_IO) {
        /* The type bits stay read-only even for tiny BARs. */
        wmask &= ~(uint64_t)PCI_BASE_ADDRESS_IO_MASK_LOW;
    } else {
        wmask &= ~(uint64_t)PCI_BASE_ADDRESS_MEM_MASK_LOW;
    }
    pci_set_long(dev->config + reg, type);
    if (!(type & PCI_BASE_ADDRESS_SPACE_IO) &&
        (type & PCI_BASE_ADDRESS_MEM_TYPE_64)) {
        assert(region_num < PCI_ROM_SLOT - 1);
        pci_set_quad(dev->wmask + reg, wmask);
        pci_set_quad(dev->cmask + reg, ~0ULL);
    } else {
        pci_set_long(dev->wmask + reg, wmask & 0xffffffff);
        pci_set_long(dev->cmask + reg, 0xffffffff);
    }
    trace_pci_register_bar(dev->name, region_num, size, type);
}

static bool pci_bar_is_64bit(uint8_t type)
{
    return !(type & PCI_BASE_ADDRESS_SPACE_IO) &&
           (type & PCI_BASE_ADDRESS_MEM_TYPE_64);
}

pcibus_t pci_bar_address(PCIDevice *dev, int reg, uint8_t type,
                         pcibus_t size)
{
    uint16_t cmd = pci_get_word(dev->config + PCI_COMMAND);
    pcibus_t new_addr, last_addr;

    if (type & PCI_BASE_ADDRESS_SPACE_IO) {
        if (!(cmd & PCI_COMMAND_IO)) {
            return PCI_BAR_UNMAPPED;
        }
        new_addr = pci_get_long(dev->config + reg) & ~(size - 1) &
                   ~(pcibus_t)PCI_BASE_ADDRESS_IO_MASK_LOW;
        last_addr = new_addr + size - 1;
        /* Port 0 is never a valid decode; I/O space is 64 KiB. */
        if (!new_addr || last_addr < new_addr || last_addr > 0xffff) {
            return PCI_BAR_UNMAPPED;
        }
        return new_addr;
    }

    if (!(cmd & PCI_COMMAND_MEMORY)) {
        return PCI_BAR_UNMAPPED;
    }
    if (reg == PCI_ROM_ADDRESS) {
        uint32_t rom = pci_get_long(dev->config + reg);
        if (!(rom & PCI_ROM_ADDRESS_ENABLE)) {
            return PCI_BAR_UNMAPPED;
        }
        new_addr = rom & ~(size - 1) & PCI_ROM_ADDRESS_MASK;
    } else if (pci_bar_is_64bit(type)) {
        new_addr = pci_get_quad(dev->config + reg) & ~(size - 1);
    } else {
        new_addr = pci_get_long(dev->config + reg) & ~(size - 1);
    }
    new_addr &= ~(pcibus_t)PCI_BASE_ADDRESS_MEM_MASK_LOW;
    last_addr = new_addr + size - 1;
    /*
     * Zero, a wrap, or a decode touching the top address (which is what the
     * all-ones sizing value looks like) is not a mapping.
     */
    if (!new_addr || last_addr < new_addr) {
        return PCI_BAR_UNMAPPED;
    }
    if (!pci_bar_is_64bit(type) && last_addr >= UINT32_MAX) {
        return PCI_BAR_UNMAPPED;
    }
    if (last_addr == UINT64_MAX) {
        return PCI_BAR_UNMAPPED;
    }
    return new_addr;
}

void pci_update_mappings(PCIDevice *dev)
{
    int i;

    memory_region_transaction_begin();
    for (i = 0; i < PCI_NUM_REGIONS; i++) {
        PCIIORegion *r = &dev->io_regions[i];
        pcibus_t new_addr;

        if (!r->size) {
            continue;
        }
        new_addr = pci_bar_address(dev, pci_bar_reg(i), r->type, r->size);
        if (new_addr == r->addr) {
            continue;
        }
        trace_pci_update_mappings(dev->name, r->size, r->addr, new_addr, i);
        if (r->addr != PCI_BAR_UNMAPPED) {
            memory_region_del_subregion(r->address_space, r->memory);
        }
        r->addr = new_addr;
        if (new_addr != PCI_BAR_UNMAPPED) {
            /* Above RAM and the bus background, like a real decode. */
            memory_region_add_subregion_overlap(r->address_space, new_addr,
                                                r->memory, 1);
        }
    }
    memory_region_transaction_commit();
}

pcibus_t pci_get_bar_addr(PCIDevice *dev, int region_num)
{
    assert(region_num >= 0 && region_num < PCI_NUM_REGIONS);
    return dev->io_regions[region_num].addr;
}

static void pci_unregister_bars(PCIDevice *dev)
{
    int i;

    memory_region_transaction_begin();
    for (i = 0; i < PCI_NUM_REGIONS; i++) {
        PCIIORegion *r = &dev->io_regions[i];

        if (r->size && r->addr != PCI_BAR_UNMAPPED) {
            memory_region_del_subregion(r->address_space, r->memory);
            r->addr = PCI_BAR_UNMAPPED;
        }
    }
    memory_region_transaction_commit();
}

/* ---- bus mastering ---- */

AddressSpace *pci_get_address_space(PCIDevice *dev)
{
    return &dev->bus_master_as;
}

static void pci_init_bus_master(PCIDevice *dev)
{
    MemoryRegion *root = dev->bus->dma_root;
    g_autofree char *name = g_strdup_printf("%s bus master", dev->name);

    memory_region_init(&dev->bus_master_container_region, OBJECT(dev),
                       "bus master container", UINT64_MAX);
    memory_region_init_alias(&dev->bus_master_enable_region, OBJECT(dev),
                             "bus master", root, 0, memory_region_size(root));
    memory_region_set_enabled(&dev->bus_master_enable_region, false);
    memory_region_add_subregion(&dev->bus_master_container_region, 0,
                                &dev->bus_master_enable_region);
    address_space_init(&dev->bus_master_as,
                       &dev->bus_master_container_region, name);
    dev->bus_master_as_initialized = true;
}

static void pci_destroy_bus_master(PCIDevice *dev)
{
    if (!dev->bus_master_as_initialized) {
        return;
    }
    address_space_destroy(&dev->bus_master_as);
    memory_region_del_subregion(&dev->bus_master_container_region,
                                &dev->bus_master_enable_region);
    memory_region_finalize(&dev->bus_master_enable_region);
    memory_region_finalize(&dev->bus_master_container_region);
    dev->bus_master_as_initialized = false;
}

/* ---- INTx ---- */

static int pci_intx_pin(PCIDevice *dev)
{
    return dev->config[PCI_INTERRUPT_PIN] - 1;
}

static void pci_change_irq_level(PCIDevice *dev, int change)
{
    PCIBus *bus = dev->bus;
    int pin = pci_intx_pin(dev);
    int irq;

    if (!bus->set_irq || pin < 0 || pin > 3 || !bus->nirq) {
        return;
    }
    irq = bus->map_irq ? bus->map_irq(dev, pin)
                       : (PCI_SLOT(dev->devfn) + pin) % bus->nirq;
    if (irq < 0 || irq >= bus->nirq) {
        return;
    }
    bus->irq_count[irq] += change;
    bus->set_irq(bus->irq_opaque, irq, bus->irq_count[irq] != 0);
}

static bool pci_irq_disabled(PCIDevice *dev)
{
    return pci_get_word(dev->config + PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE;
}

/* What the device currently drives onto its INTx line. */
static bool pci_intx_output(PCIDevice *dev)
{
    return dev->irq_state && !pci_irq_disabled(dev);
}

void pci_set_irq(PCIDevice *dev, int level)
{
    bool old = pci_intx_output(dev);

    level = !!level;
    if (dev->irq_state == level) {
        return;
    }
    dev->irq_state = level;
    /* The Interrupt Status bit reflects the device, not the gate. */
    if (level) {
        pci_word_test_and_set_mask(dev->config + PCI_STATUS,
                                   PCI_STATUS_INTERRUPT);
    } else {
        pci_word_test_and_clear_mask(dev->config + PCI_STATUS,
                                     PCI_STATUS_INTERRUPT);
    }
    if (pci_intx_output(dev) != old) {
        pci_change_irq_level(dev, pci_intx_output(dev) ? 1 : -1);
    }
    trace_pci_set_irq(dev->name, level);
}

static void pci_update_irq_disabled(PCIDevice *dev)
{
    bool disabled = pci_irq_disabled(dev);

    if (disabled == dev->intx_disabled) {
        return;
    }
    dev->intx_disabled = disabled;
    if (dev->irq_state) {
        pci_change_irq_level(dev, disabled ? -1 : 1);
    }
}

void pci_bus_irqs(PCIBus *bus, pci_set_irq_fn set_irq, pci_map_irq_fn map_irq,
                  void *opaque, int nirq)
{
    bus->set_irq = set_irq;
    bus->map_irq = map_irq;
    bus->irq_opaque = opaque;
    bus->nirq = nirq;
    g_free(bus->irq_count);
    bus->irq_count = g_new0(int, nirq);
}

/* ---- reset ---- */

void pci_device_reset(PCIDevice *dev)
{
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);
    int i;

    if (!dev->config) {
        return;
    }
    pci_set_irq(dev, 0);
    /* Writable and W1C bits go back to zero; identity stays. */
    pci_word_test_and_clear_mask(dev->config + PCI_COMMAND,
                                 pci_get_word(dev->wmask + PCI_COMMAND));
    pci_word_test_and_clear_mask(dev->config + PCI_STATUS,
                                 pci_get_word(dev->w1cmask + PCI_STATUS));
    dev->config[PCI_CACHE_LINE_SIZE] = 0;
    dev->config[PCI_LATENCY_TIMER] = 0;
    dev->config[PCI_INTERRUPT_LINE] = 0;
    dev->intx_disabled = false;
    for (i = 0; i < PCI_NUM_REGIONS; i++) {
        PCIIORegion *r = &dev->io_regions[i];
        int reg = pci_bar_reg(i);

        if (!r->size) {
            continue;
        }
        if (pci_bar_is_64bit(r->type)) {
            pci_set_quad(dev->config + reg, r->type);
        } else if (i == PCI_ROM_SLOT) {
            pci_set_long(dev->config + reg, 0);
        } else {
            pci_set_long(dev->config + reg, r->type);
        }
    }
    pci_update_mappings(dev);
    pci_update_bus_master(dev);
    msi_reset(dev);
    msix_reset(dev);
    if (pc->reset) {
        pc->reset(dev);
    }
}

static void pci_qdev_reset(DeviceState *qdev)
{
    pci_device_reset(PCI_DEVICE(qdev));
}

/* ---- bus ---- */

/*
 * A function holds its slot from the start of realize (so that the address
 * is claimed), but config cycles, and whatever they would map, reach it
 * only once realize has built it: until then the slot looks empty.  A
 * peer's DMA or a guest access racing with realize cannot call into a
 * half-built device.
 */
static PCIDevice *pci_bus_visible_device(PCIBus *bus, unsigned devfn)
{
    PCIDevice *dev = bus->devices[devfn];

    return dev && dev->qdev.realized ? dev : NULL;
}

static PCIDevice *pci_find_device_below(PCIBus *bus, int this_num,
                                        int bus_num, uint8_t devfn,
                                        int depth)
{
    if (!bus || depth > 16) {
        return NULL;
    }
    if (bus_num == this_num) {
        return pci_bus_visible_device(bus, devfn);
    }
    for (int i = 0; i < PCI_DEVFN_MAX; i++) {
        PCIDevice *d = bus->devices[i];
        uint8_t sec, sub;

        if (!d || !d->secondary_bus) {
            continue;
        }
        sec = d->config[PCI_SECONDARY_BUS];
        sub = d->config[PCI_SUBORDINATE_BUS];
        /* An unconfigured bridge (secondary 0) forwards nothing. */
        if (sec > this_num && sec <= bus_num && bus_num <= sub) {
            return pci_find_device_below(d->secondary_bus, sec, bus_num,
                                         devfn, depth + 1);
        }
    }
    return NULL;
}

PCIDevice *pci_find_device(PCIBus *bus, int bus_num, uint8_t devfn)
{
    return pci_find_device_below(bus, 0, bus_num, devfn, 0);
}

/*
 * INTx behind a bridge: line n of the secondary bus (already swizzled by
 * the device's slot) leaves the bridge as its pin n and is swizzled again
 * by the bridge's own slot on the parent bus, as the PCI-to-PCI bridge
 * architecture and Linux's ACPI _PRT fallback both assume.
 */
static void pci_bridge_set_irq(void *opaque, int irq, int level)
{
    PCIDevice *bridge = opaque;
    PCIBus *sec = bridge->secondary_bus;
    PCIBus *up = bridge->bus;
    uint8_t bit = 1u << irq;
    int up_irq;

    if (!sec || !up || !up->set_irq || !up->nirq ||
        !!(sec->intx_forwarded & bit) == !!level) {
        return;
    }
    sec->intx_forwarded ^= bit;
    up_irq = up->map_irq ? up->map_irq(bridge, irq)
                         : (PCI_SLOT(bridge->devfn) + irq) % up->nirq;
    if (up_irq < 0 || up_irq >= up->nirq) {
        return;
    }
    up->irq_count[up_irq] += level ? 1 : -1;
    up->set_irq(up->irq_opaque, up_irq, up->irq_count[up_irq] != 0);
}

PCIBus *pci_bridge_bus_new(PCIDevice *bridge, const char *name)
{
    PCIBus *parent = bridge->bus;
    PCIBus *bus = PCI_BUS(qbus_new(TYPE_PCI_BUS, DEVICE(bridge), name));

    bus->bar_space_mem = parent->bar_space_mem;
    bus->bar_space_io = parent->bar_space_io;
    bus->dma_root = parent->dma_root;
    bus->qbus.hotplug_allowed = true;
    bus->parent_dev = bridge;
    bridge->secondary_bus = bus;
    pci_bus_irqs(bus, pci_bridge_set_irq, NULL, bridge, 4);
    return bus;
}

void pci_for_each_device(PCIBus *bus,
                         void (*fn)(PCIBus *bus, PCIDevice *dev, void *opaque),
                         void *opaque)
{
    int i;

    for (i = 0; i < PCI_DEVFN_MAX; i++) {
        PCIDevice *dev = pci_bus_visible_device(bus, i);

        if (dev) {
            fn(bus, dev, opaque);
        }
    }
}

void pci_bus_set_hotplug_hook(PCIBus *bus,
                              void (*fn)(PCIBus *bus, PCIDevice *dev,
                                         void *opaque),
                              void *opaque)
{
    bus->hotplug_hook = fn;
    bus->hotplug_opaque = opaque;
}

PCIBus *pci_root_bus_new(DeviceState *parent, const char *name,
                         MemoryRegion *mem, MemoryRegion *io,
                         MemoryRegion *dma_root)
{
    PCIBus *bus = PCI_BUS(qbus_new(TYPE_PCI_BUS, parent, name));

    bus->bar_space_mem = mem;
    bus->bar_space_io = io;
    bus->dma_root = dma_root ? dma_root : mem;
    bus->qbus.hotplug_allowed = true;
    return bus;
}

static const char *pci_dev_label(DeviceState *qdev)
{
    return qdev->id ? qdev->id : object_get_typename(OBJECT(qdev));
}

/* Places dev (devfn -1: first free slot) and checks multifunction rules. */
static bool pci_bus_check_address(BusState *qbus, DeviceState *qdev,
                                  Error **errp)
{
    PCIBus *bus = PCI_BUS(qbus);
    PCIDevice *dev = PCI_DEVICE(qdev);
    int devfn = dev->devfn;
    int fn;

    if (devfn < 0) {
        int end = bus->single_slot ? 8 : PCI_DEVFN_MAX;

        for (devfn = 0; devfn < end; devfn += 8) {
            if (!bus->devices[devfn]) {
                break;
            }
        }
        if (devfn >= end) {
            error_setg(errp, "PCI: no slot available for %s",
                       pci_dev_label(qdev));
            return false;
        }
        dev->devfn = devfn;
        return true;
    }
    if (devfn >= PCI_DEVFN_MAX) {
        error_setg(errp, "PCI: invalid address 0x%x for %s",
                   devfn, pci_dev_label(qdev));
        return false;
    }
    if (bus->single_slot && PCI_SLOT(devfn)) {
        error_setg(errp, "PCI: %s cannot be at %x.%x on bus '%s': a PCIe "
                   "link has device 0 only", pci_dev_label(qdev),
                   PCI_SLOT(devfn), PCI_FUNC(devfn), bus->qbus.name);
        error_append_hint(errp, "Use addr=0.%x, or another root port.\n",
                          PCI_FUNC(devfn));
        return false;
    }
    if (bus->devices[devfn]) {
        error_setg(errp, "PCI: slot %d function %d not available for %s, "
                   "in use by %s", PCI_SLOT(devfn), PCI_FUNC(devfn),
                   pci_dev_label(qdev), bus->devices[devfn]->name);
        return false;
    }
    if (PCI_FUNC(devfn)) {
        PCIDevice *f0 = bus->devices[PCI_DEVFN(PCI_SLOT(devfn), 0)];
        if (f0 && !f0->multifunction) {
            error_setg(errp, "PCI: %x.0 is a single-function device; "
                       "cannot add %s at %x.%x", PCI_SLOT(devfn),
                       pci_dev_label(qdev), PCI_SLOT(devfn), PCI_FUNC(devfn));
            return false;
        }
    } else if (!dev->multifunction) {
        for (fn = 1; fn < 8; fn++) {
            if (bus->devices[devfn + fn]) {
                error_setg(errp, "PCI: %s at %x.0 must be multifunction=on: "
                           "function %d of that slot is in use",
                           pci_dev_label(qdev), PCI_SLOT(devfn), fn);
                return false;
            }
        }
    }
    return true;
}

static char *pci_bus_get_dev_path(DeviceState *qdev)
{
    PCIDevice *dev = PCI_DEVICE(qdev);

    return g_strdup_printf("%02x.%x", PCI_SLOT(dev->devfn),
                           PCI_FUNC(dev->devfn));
}

static void pci_bus_class_init(ObjectClass *klass, void *data)
{
    BusClass *bc = BUS_CLASS(klass);

    bc->check_address = pci_bus_check_address;
    bc->get_dev_path = pci_bus_get_dev_path;
}

static void pci_bus_finalize(Object *obj)
{
    PCIBus *bus = PCI_BUS(obj);

    g_free(bus->irq_count);
}

/* ---- the device type ---- */

static bool pci_qdev_realize(DeviceState *qdev, Error **errp)
{
    PCIDevice *dev = PCI_DEVICE(qdev);
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);
    PCIBus *bus;

    if (!qdev->parent_bus ||
        !object_dynamic_cast(OBJECT(qdev->parent_bus), TYPE_PCI_BUS)) {
        error_setg(errp, "%s: a PCI device needs a PCI bus",
                   pci_dev_label(qdev));
        return false;
    }
    bus = PCI_BUS(qdev->parent_bus);
    if (dev->devfn < 0 && !pci_bus_check_address(&bus->qbus, qdev, errp)) {
        return false;
    }
    if (bus->devices[dev->devfn]) {
        error_setg(errp, "PCI: slot %d function %d not available for %s, "
                   "in use by %s", PCI_SLOT(dev->devfn), PCI_FUNC(dev->devfn),
                   pci_dev_label(qdev), bus->devices[dev->devfn]->name);
        return false;
    }
    if (dev->romfile && dev->romfile[0]) {
        warn_report("%s: option ROMs are not supported; romfile ignored",
                    pci_dev_label(qdev));
    }

    snprintf(dev->name, sizeof(dev->name), "%s", pci_dev_label(qdev));
    dev->bus = bus;
    if (pc->is_express) {
        dev->cap_present |= QEMU_PCI_CAP_EXPRESS;
    }
    pci_config_alloc(dev, pc->is_express ? PCIE_CONFIG_SPACE_SIZE
                                         : PCI_CONFIG_SPACE_SIZE);
    pci_init_header(dev, pc);
    for (int i = 0; i < PCI_NUM_REGIONS; i++) {
        dev->io_regions[i].addr = PCI_BAR_UNMAPPED;
    }
    pci_init_bus_master(dev);
    bus->devices[dev->devfn] = dev;

    if (pc->realize && !pc->realize(dev, errp)) {
        bus->devices[dev->devfn] = NULL;
        pci_unregister_bars(dev);
        pci_destroy_bus_master(dev);
        pci_config_free(dev);
        memset(dev->io_regions, 0, sizeof(dev->io_regions));
        dev->bus = NULL;
        return false;
    }
    trace_pci_device_realize(dev->name, PCI_SLOT(dev->devfn),
                             PCI_FUNC(dev->devfn));
    if (qdev->hotplugged && bus->hotplug_hook) {
        bus->hotplug_hook(bus, dev, bus->hotplug_opaque);
    }
    return true;
}

static void pci_qdev_unrealize(DeviceState *qdev)
{
    PCIDevice *dev = PCI_DEVICE(qdev);
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(dev);

    if (!dev->bus) {
        return;
    }
    pci_set_irq(dev, 0);
    if (pc->exit) {
        pc->exit(dev);
    }
    pci_unregister_bars(dev);
    memset(dev->io_regions, 0, sizeof(dev->io_regions));
    dev->bus->devices[dev->devfn] = NULL;
    pci_destroy_bus_master(dev);
    pci_config_free(dev);
    dev->bus = NULL;
}

static const Property pci_device_props[] = {
    DEFINE_PROP_PCI_DEVFN("addr", PCIDevice, devfn, -1,
                          .description = "slot.function on the bus, "
                                         "e.g. 04.0; unset: first free slot"),
    DEFINE_PROP_BOOL("multifunction", PCIDevice, multifunction, false,
                     .description = "other functions may share the slot"),
    DEFINE_PROP_STRING("romfile", PCIDevice, romfile,
                       .description = "option ROM image (not supported; "
                                      "accepted for compatibility)"),
    DEFINE_PROP_UINT32("rombar", PCIDevice, rombar, 1,
                       .description = "expose the device's option ROM "
                                      "(vfio) as the expansion ROM BAR; "
                                      "0: hide it"),
    DEFINE_PROP_END_OF_LIST(),
};

static void pci_device_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->realize = pci_qdev_realize;
    dc->unrealize = pci_qdev_unrealize;
    dc->reset = pci_qdev_reset;
    dc->bus_type = TYPE_PCI_BUS;
    dc->hotpluggable = true;
    dc->vmsd = &vmstate_pci_device;
    device_class_set_props(dc, pci_device_props);
}

static const TypeInfo pci_types[] = {
    {
        .name = TYPE_PCI_BUS,
        .parent = TYPE_BUS,
        .instance_size = sizeof(PCIBus),
        .class_size = sizeof(BusClass),
        .class_init = pci_bus_class_init,
        .instance_finalize = pci_bus_finalize,
    },
    {
        .name = TYPE_PCI_DEVICE,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(PCIDevice),
        .class_size = sizeof(PCIDeviceClass),
        .class_init = pci_device_class_init,
        .abstract = true,
    },
};

DEFINE_TYPES(pci_types)
