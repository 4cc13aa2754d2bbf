/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCI configuration mechanism #1 (0xcf8/0xcfc), enumeration, BARs, MSI-X.
 */
#include "pci.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define MEM32_WINDOW_START 0xc0000000ULL
#define MEM32_WINDOW_END 0xfec00000ULL     /* the IOAPIC and LAPIC follow */
#define IO_WINDOW_START 0xc000ULL
#define IO_WINDOW_END 0x10000ULL
#define MSIX_ENTRY_SIZE 16
#define MSIX_CTRL_ENABLE 0x8000
#define MSIX_CTRL_MASKALL 0x4000

static void pci_cfg_select(uint16_t bdf, uint8_t off)
{
    outl(PCI_CONFIG_ADDRESS, 0x80000000u | ((uint32_t)bdf << 8) | (off & 0xfc));
}

uint32_t pci_cfg_read32(uint16_t bdf, uint8_t off)
{
    pci_cfg_select(bdf, off);
    return inl(PCI_CONFIG_DATA);
}

uint16_t pci_cfg_read16(uint16_t bdf, uint8_t off)
{
    pci_cfg_select(bdf, off);
    return inw(PCI_CONFIG_DATA + (off & 2));
}

uint8_t pci_cfg_read8(uint16_t bdf, uint8_t off)
{
    pci_cfg_select(bdf, off);
    return inb(PCI_CONFIG_DATA + (off & 3));
}

void pci_cfg_write32(uint16_t bdf, uint8_t off, uint32_t v)
{
    pci_cfg_select(bdf, off);
    outl(PCI_CONFIG_DATA, v);
}

void pci_cfg_write16(uint16_t bdf, uint8_t off, uint16_t v)
{
    pci_cfg_select(bdf, off);
    outw(PCI_CONFIG_DATA + (off & 2), v);
}

void pci_cfg_write8(uint16_t bdf, uint8_t off, uint8_t v)
{
    pci_cfg_select(bdf, off);
    outb(PCI_CONFIG_DATA + (off & 3), v);
}

void pci_bar_probe(PciDev *d)
{
    int nbars = d->header_type == 0 ? 6 : d->header_type == 1 ? 2 : 0;
    uint16_t cmd = pci_cfg_read16(d->bdf, PCI_COMMAND);
    int i;

    memset(d->bar, 0, sizeof(d->bar));
    /* No decoding while a BAR holds the all-ones sizing pattern. */
    pci_cfg_write16(d->bdf, PCI_COMMAND,
                    cmd & ~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));
    for (i = 0; i < nbars; i++) {
        uint8_t off = PCI_BASE_ADDRESS_0 + 4 * i;
        uint32_t orig = pci_cfg_read32(d->bdf, off), lo, hi_orig = 0, hi = 0;
        PciBar *b = &d->bar[i];
        uint64_t mask;
        bool is64;

        pci_cfg_write32(d->bdf, off, ~0u);
        lo = pci_cfg_read32(d->bdf, off);
        pci_cfg_write32(d->bdf, off, orig);
        b->io = orig & 1;
        b->is64 = !b->io && ((orig >> 1) & 3) == 2;
        b->prefetch = !b->io && (orig & 8);
        if (b->is64 && i + 1 < nbars) {
            hi_orig = pci_cfg_read32(d->bdf, off + 4);
            pci_cfg_write32(d->bdf, off + 4, ~0u);
            hi = pci_cfg_read32(d->bdf, off + 4);
            pci_cfg_write32(d->bdf, off + 4, hi_orig);
        }
        if (b->io) {
            b->addr = orig & ~3u;
            /* 16-bit I/O BARs read back 0 in the upper half. */
            b->size = (uint32_t)(~((lo & ~3u) | 0xffff0000u) + 1);
        } else {
            mask = ((uint64_t)(b->is64 ? hi : ~0u) << 32) | (lo & ~0xfu);
            b->addr = ((uint64_t)hi_orig << 32) | (orig & ~0xfu);
            b->size = (lo & ~0xfu) || (b->is64 && hi) ? ~mask + 1 : 0;
        }
        is64 = b->is64;
        if (lo == 0 || lo == ~0u || !b->size) {
            memset(b, 0, sizeof(*b));
        }
        if (is64) {
            i++;
        }
    }
    pci_cfg_write16(d->bdf, PCI_COMMAND, cmd);
}

static int pci_scan_bus(PciDev *devs, int n, int max, unsigned bus,
                        unsigned depth)
{
    unsigned dev, fn;

    for (dev = 0; dev < 32; dev++) {
        for (fn = 0; fn < 8; fn++) {
            uint16_t bdf = PCI_BDF(bus, dev, fn);
            uint32_t id = pci_cfg_read32(bdf, PCI_VENDOR_ID);
            uint8_t ht;
            PciDev *d;

            if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0) {
                if (fn == 0) {
                    break;
                }
                continue;
            }
            ht = pci_cfg_read8(bdf, PCI_HEADER_TYPE);
            if (n < max) {
                d = &devs[n++];
                memset(d, 0, sizeof(*d));
                d->bdf = bdf;
                d->vendor = id & 0xffff;
                d->device = id >> 16;
                d->class_rev = pci_cfg_read32(bdf, PCI_CLASS_REVISION);
                d->header_type = ht & 0x7f;
                pci_bar_probe(d);
            }
            if ((ht & 0x7f) == 1 && depth < 8) {
                unsigned sec = pci_cfg_read8(bdf, PCI_SECONDARY_BUS);

                /* A bridge the firmware never numbered leads nowhere. */
                if (sec > bus) {
                    n = pci_scan_bus(devs, n, max, sec, depth + 1);
                }
            }
            if (fn == 0 && !(ht & 0x80)) {
                break;
            }
        }
    }
    return n;
}

int pci_scan(PciDev *devs, int max)
{
    return pci_scan_bus(devs, 0, max, 0, 0);
}

PciDev *pci_find(PciDev *devs, int n, uint16_t vendor, uint16_t device)
{
    int i;

    for (i = 0; i < n; i++) {
        if (devs[i].vendor == vendor && devs[i].device == device) {
            return &devs[i];
        }
    }
    return NULL;
}

PciDev *pci_find_class(PciDev *devs, int n, uint32_t class_code)
{
    int i;

    for (i = 0; i < n; i++) {
        if ((devs[i].class_rev >> 8) == class_code) {
            return &devs[i];
        }
    }
    return NULL;
}

static bool range_busy(PciDev *devs, int n, bool io, uint64_t a, uint64_t size)
{
    int i, j;

    for (i = 0; i < n; i++) {
        for (j = 0; j < 6; j++) {
            PciBar *b = &devs[i].bar[j];

            if (b->size && b->addr && b->io == io &&
                a < b->addr + b->size && b->addr < a + size) {
                return true;
            }
        }
    }
    return false;
}

bool pci_bar_assign(PciDev *devs, int n, PciDev *d)
{
    int i;

    for (i = 0; i < 6; i++) {
        PciBar *b = &d->bar[i];
        uint64_t start = b->io ? IO_WINDOW_START : MEM32_WINDOW_START;
        uint64_t end = b->io ? IO_WINDOW_END : MEM32_WINDOW_END;
        uint64_t a;
        uint8_t off = PCI_BASE_ADDRESS_0 + 4 * i;

        if (!b->size || b->addr) {
            continue;
        }
        for (a = ALIGN_UP(start, b->size); a + b->size <= end;
             a += b->size) {
            if (!range_busy(devs, n, b->io, a, b->size)) {
                break;
            }
        }
        if (a + b->size > end) {
            return false;
        }
        pci_cfg_write32(d->bdf, off,
                        (uint32_t)a | (pci_cfg_read32(d->bdf, off) & 0xf));
        if (b->is64) {
            pci_cfg_write32(d->bdf, off + 4, 0);
        }
        /* Record what the device really decodes. */
        b->addr = pci_cfg_read32(d->bdf, off) & (b->io ? ~3u : ~0xfu);
        if (b->is64) {
            b->addr |= (uint64_t)pci_cfg_read32(d->bdf, off + 4) << 32;
        }
    }
    return true;
}

void pci_enable(PciDev *d)
{
    uint16_t cmd = pci_cfg_read16(d->bdf, PCI_COMMAND);
    int i;

    for (i = 0; i < 6; i++) {
        if (d->bar[i].size) {
            cmd |= d->bar[i].io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY;
        }
        if (d->bar[i].size && d->bar[i].addr >= (4ULL << 30)) {
            map_identity(d->bar[i].addr, d->bar[i].size);
        }
    }
    pci_cfg_write16(d->bdf, PCI_COMMAND, cmd | PCI_COMMAND_MASTER);
}

uint8_t pci_find_cap(PciDev *d, uint8_t id)
{
    uint8_t pos;
    int guard = 48;

    if (!(pci_cfg_read16(d->bdf, PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        return 0;
    }
    pos = pci_cfg_read8(d->bdf, PCI_CAPABILITY_LIST) & ~3;
    /* The guard stops a looping list from a broken device. */
    while (pos >= 0x40 && guard--) {
        if (pci_cfg_read8(d->bdf, pos) == id) {
            return pos;
        }
        pos = pci_cfg_read8(d->bdf, pos + 1) & ~3;
    }
    return 0;
}

const char *pci_class_name(uint32_t class_rev)
{
    switch (class_rev >> 16) {
    case 0x0100 ... 0x01ff:
        return (class_rev >> 8) == 0x010802 ? "nvme" : "storage";
    case 0x0200 ... 0x02ff:
        return "network";
    case 0x0300 ... 0x03ff:
        return "display";
    case 0x0600:
        return "host bridge";
    case 0x0601:
        return "isa bridge";
    case 0x0604:
        return "pci bridge";
    case 0x0c05:
        return "smbus";
    case 0x0c03:
        return "usb";
    case 0xff00:
        return "other";
    default:
        return "device";
    }
}

#define MSI_CTRL_ENABLE 0x1
#define MSI_CTRL_MME 0x70
#define MSI_CTRL_64BIT 0x80
#define MSI_CTRL_MASKABLE 0x100

uint8_t pci_msi_setup(PciDev *d, uint8_t cpu_vector, uint32_t dest)
{
    uint8_t cap = pci_find_cap(d, PCI_CAP_ID_MSI);
    uint64_t addr = apic_msi_address(dest);
    uint16_t ctrl;

    if (!cap) {
        return 0;
    }
    ctrl = pci_cfg_read16(d->bdf, cap + 2);
    pci_cfg_write32(d->bdf, cap + 4, (uint32_t)addr);
    if (ctrl & MSI_CTRL_64BIT) {
        pci_cfg_write32(d->bdf, cap + 8, (uint32_t)(addr >> 32));
        pci_cfg_write16(d->bdf, cap + 12, apic_msi_data(cpu_vector));
    } else {
        pci_cfg_write16(d->bdf, cap + 8, apic_msi_data(cpu_vector));
    }
    /* One vector: multiple message enable = 0. */
    pci_cfg_write16(d->bdf, cap + 2, ctrl & ~MSI_CTRL_MME);
    return cap;
}

void pci_msi_enable(PciDev *d, uint8_t cap, bool enable)
{
    uint16_t ctrl = pci_cfg_read16(d->bdf, cap + 2) & ~MSI_CTRL_ENABLE;

    pci_cfg_write16(d->bdf, cap + 2, ctrl | (enable ? MSI_CTRL_ENABLE : 0));
}

static uint8_t pci_msi_mask_offset(PciDev *d, uint8_t cap)
{
    uint16_t ctrl = pci_cfg_read16(d->bdf, cap + 2);

    if (!(ctrl & MSI_CTRL_MASKABLE)) {
        return 0;
    }
    return cap + (ctrl & MSI_CTRL_64BIT ? 0x10 : 0x0c);
}

bool pci_msi_mask(PciDev *d, uint8_t cap, bool masked)
{
    uint8_t off = pci_msi_mask_offset(d, cap);

    if (!off) {
        return false;
    }
    pci_cfg_write32(d->bdf, off, (pci_cfg_read32(d->bdf, off) & ~1u) | masked);
    return true;
}

bool pci_msi_pending(PciDev *d, uint8_t cap)
{
    uint8_t off = pci_msi_mask_offset(d, cap);

    return off && (pci_cfg_read32(d->bdf, off + 4) & 1);
}

bool pci_msix_init(PciDev *d, PciMsix *m)
{
    uint8_t cap = pci_find_cap(d, PCI_CAP_ID_MSIX);
    uint32_t table, pba;
    PciBar *tb, *pb;

    memset(m, 0, sizeof(*m));
    if (!cap) {
        return false;
    }
    table = pci_cfg_read32(d->bdf, cap + 4);
    pba = pci_cfg_read32(d->bdf, cap + 8);
    tb = &d->bar[table & 7];
    pb = &d->bar[pba & 7];
    if ((table & 7) > 5 || (pba & 7) > 5 || !tb->size || tb->io ||
        !pb->size || pb->io) {
        return false;
    }
    m->dev = d;
    m->cap = cap;
    m->nvec = (pci_cfg_read16(d->bdf, cap + 2) & 0x7ff) + 1;
    m->table = tb->addr + (table & ~7u);
    m->pba = pb->addr + (pba & ~7u);
    return true;
}

void pci_msix_set_vector(PciMsix *m, uint16_t entry, uint8_t cpu_vector,
                         uint32_t dest)
{
    uint64_t e = m->table + (uint64_t)entry * MSIX_ENTRY_SIZE;
    uint64_t addr = apic_msi_address(dest);

    mmio_write32(e + 0, (uint32_t)addr);
    mmio_write32(e + 4, (uint32_t)(addr >> 32));
    mmio_write32(e + 8, apic_msi_data(cpu_vector));
}

void pci_msix_mask(PciMsix *m, uint16_t entry, bool masked)
{
    uint64_t ctrl = m->table + (uint64_t)entry * MSIX_ENTRY_SIZE + 12;

    mmio_write32(ctrl, (mmio_read32(ctrl) & ~1u) | masked);
}

void pci_msix_enable(PciMsix *m, bool enable)
{
    uint16_t ctrl = pci_cfg_read16(m->dev->bdf, m->cap + 2);

    ctrl &= ~(MSIX_CTRL_ENABLE | MSIX_CTRL_MASKALL);
    if (enable) {
        ctrl |= MSIX_CTRL_ENABLE;
    }
    pci_cfg_write16(m->dev->bdf, m->cap + 2, ctrl);
}

bool pci_msix_pending(PciMsix *m, uint16_t entry)
{
    return mmio_read32(m->pba + (entry / 32) * 4) & (1u << (entry % 32));
}
