/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries PCI host bridge (PHB).
 *
 * There is no config mechanism in MMIO: guests reach config space through
 * RTAS (spapr_rtas.c), addressed by the PHB's BUID and a PAPR config
 * address.  BARs live in the PHB's own PCI memory space; three windows
 * in system memory show parts of it (I/O, a 32-bit window translated from
 * PCI 2 GiB..4 GiB, and an identity-mapped 64-bit window), which is what
 * the "ranges" property of the device tree describes.  Device DMA goes to
 * system memory untranslated (no TCE tables yet).
 *
 * MSIs are writes to the MSI window whose data is the source number;
 * ibm,change-msi allocates sources and programs the vectors, so the
 * guest never writes the MSI-X table.
 *
 * We boot without firmware, so the PHB assigns BARs at reset and on
 * hotplug, largest first, from bump pointers in each window.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/ppc/spapr.h"
#include "trace.h"

typedef struct SpaprMsiAlloc {
    int first;
    unsigned int count;
    bool is_msix;
} SpaprMsiAlloc;

struct SpaprPhbState {
    DeviceState parent_obj;

    SpaprIcsState *ics;
    PCIBus *bus;
    MemoryRegion pci_mem;       /* the PCI memory space, 64-bit */
    MemoryRegion pci_io;
    MemoryRegion mmio32_window;
    MemoryRegion mmio64_window;
    MemoryRegion io_window;
    MemoryRegion msi_window;
    /* Next free PCI address in each window (BAR assignment). */
    uint64_t next_mmio32, next_mmio64, next_io;
    SpaprMsiAlloc msi[PCI_DEVFN_MAX];  /* by devfn; bus 0 only */
};

#define SPAPR_PHB(obj) OBJECT_CHECK(SpaprPhbState, (obj), TYPE_SPAPR_PHB)

/* ---- BAR assignment ---- */

static bool spapr_phb_bump(uint64_t *next, uint64_t end, uint64_t size,
                           uint64_t *addr)
{
    uint64_t a = QEMU_ALIGN_UP(*next, size);

    if (a < *next || a > end || end - a < size) {
        return false;
    }
    *addr = a;
    *next = a + size;
    return true;
}

static bool spapr_phb_place_bar(PCIDevice *dev, int bar, uint64_t *addr,
                                void *opaque)
{
    SpaprPhbState *s = opaque;
    const PCIIORegion *r = &dev->io_regions[bar];
    bool io = r->type & PCI_BASE_ADDRESS_SPACE_IO;
    bool is64 = !io && (r->type & PCI_BASE_ADDRESS_MEM_TYPE_64);
    bool ok;

    if (io) {
        ok = spapr_phb_bump(&s->next_io, SPAPR_PHB_IO_SIZE, r->size, addr);
    } else {
        ok = (is64 && spapr_phb_bump(&s->next_mmio64,
                                     SPAPR_PHB_MMIO64_BASE +
                                     SPAPR_PHB_MMIO64_SIZE,
                                     r->size, addr)) ||
             spapr_phb_bump(&s->next_mmio32,
                            SPAPR_PHB_MMIO32_PCI + SPAPR_PHB_MMIO32_SIZE,
                            r->size, addr);
    }
    if (ok) {
        trace_spapr_pci_assign_bar(dev->name, bar, *addr, r->size);
    }
    return ok;
}

static void spapr_phb_assign_device(PCIBus *bus, PCIDevice *dev,
                                    void *opaque)
{
    pci_assign_device_bars(dev, spapr_phb_place_bar, opaque);
}

static void spapr_phb_reset_handler(void *opaque)
{
    SpaprPhbState *s = opaque;

    /* Devices were reset before us: every BAR and vector starts clean. */
    s->next_mmio32 = SPAPR_PHB_MMIO32_PCI;
    s->next_mmio64 = SPAPR_PHB_MMIO64_BASE;
    s->next_io = 0x1000;        /* keep I/O port 0 unused */
    memset(s->msi, 0, sizeof(s->msi));
    spapr_irq_free_all(s->ics);
    pci_for_each_device(s->bus, spapr_phb_assign_device, s);
}

static void spapr_phb_hotplug(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    SpaprPhbState *s = opaque;
    SpaprMsiAlloc *a = &s->msi[dev->devfn & 0xff];

    /* Sources a removed device held at this address go back first. */
    if (a->count) {
        spapr_irq_free_block(s->ics, a->first, a->count);
        memset(a, 0, sizeof(*a));
    }
    spapr_phb_assign_device(bus, dev, opaque);
}

/* ---- INTx ---- */

static void spapr_phb_set_irq(void *opaque, int irq, int level)
{
    SpaprPhbState *s = opaque;

    spapr_irq_set_level(s->ics, SPAPR_IRQ_LSI_BASE + irq, level);
}

/* ---- MSI window ---- */

static uint64_t spapr_msi_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void spapr_msi_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    SpaprPhbState *s = opaque;

    trace_spapr_pci_msi_write(addr, (uint32_t)val);
    spapr_irq_pulse(s->ics, (uint32_t)val);
}

static const MemoryRegionOps spapr_msi_ops = {
    .read = spapr_msi_read,
    .write = spapr_msi_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

/* ---- ibm,change-msi ---- */

static MSIMessage spapr_msi_message(int irq)
{
    return (MSIMessage){ .address = SPAPR_PHB_MSI_BASE, .data = irq };
}

static void spapr_phb_msix_unprogram(PCIDevice *dev, unsigned int count)
{
    unsigned int i;

    for (i = 0; i < count && i < msix_nr_vectors(dev); i++) {
        msix_clear_message(dev, i);
    }
}

static void spapr_phb_msi_program(PCIDevice *dev, int first,
                                  unsigned int count)
{
    uint8_t cap = dev->msi_cap;
    uint16_t flags = pci_get_word(dev->config + cap + PCI_MSI_FLAGS);
    bool is64 = flags & PCI_MSI_FLAGS_64BIT;
    uint64_t addr = count ? SPAPR_PHB_MSI_BASE : 0;
    unsigned int log2 = 0;

    while ((1u << log2) < count) {
        log2++;
    }
    pci_host_config_write(dev, cap + PCI_MSI_ADDRESS_LO, (uint32_t)addr, 4);
    if (is64) {
        pci_host_config_write(dev, cap + PCI_MSI_ADDRESS_HI, addr >> 32, 4);
        pci_host_config_write(dev, cap + PCI_MSI_DATA_64, count ? first : 0,
                              2);
    } else {
        pci_host_config_write(dev, cap + PCI_MSI_DATA_32, count ? first : 0,
                              2);
    }
    flags = (flags & ~PCI_MSI_FLAGS_QSIZE) | (log2 << 4);
    pci_host_config_write(dev, cap + PCI_MSI_FLAGS, flags, 2);
}

static unsigned int spapr_msi_max(PCIDevice *dev)
{
    uint16_t flags = pci_get_word(dev->config + dev->msi_cap + PCI_MSI_FLAGS);

    return 1u << ((flags & PCI_MSI_FLAGS_QMASK) >> 1);
}

static void spapr_phb_msi_release(SpaprPhbState *s, PCIDevice *dev)
{
    SpaprMsiAlloc *a = &s->msi[dev->devfn & 0xff];

    if (!a->count) {
        return;
    }
    if (a->is_msix) {
        spapr_phb_msix_unprogram(dev, a->count);
    } else {
        spapr_phb_msi_program(dev, 0, 0);
    }
    spapr_irq_free_block(s->ics, a->first, a->count);
    memset(a, 0, sizeof(*a));
}

int spapr_phb_change_msi(SpaprPhbState *s, PCIDevice *dev, uint32_t fn,
                         uint32_t req, uint32_t *count, uint32_t *type)
{
    SpaprMsiAlloc *a = &s->msi[dev->devfn & 0xff];
    bool want_msix;
    unsigned int max, n, i;
    int first;

    *count = a->count;
    *type = !a->count ? RTAS_MSI_TYPE_NONE
            : a->is_msix ? RTAS_MSI_TYPE_MSIX : RTAS_MSI_TYPE_MSI;
    switch (fn) {
    case RTAS_MSI_FN_QUERY:
        return RTAS_OUT_SUCCESS;
    case RTAS_MSI_FN_RESET:
        req = 0;
        want_msix = a->is_msix;
        break;
    case RTAS_MSI_FN_CHANGE:
    case RTAS_MSI_FN_MSI:
        want_msix = false;
        break;
    case RTAS_MSI_FN_MSIX:
        want_msix = true;
        break;
    default:
        return RTAS_OUT_PARAM_ERROR;
    }
    if (req && (want_msix ? !msix_present(dev) : !dev->msi_cap)) {
        /* The device cannot do what is asked of it. */
        return RTAS_OUT_PARAM_ERROR;
    }

    spapr_phb_msi_release(s, dev);
    *count = 0;
    *type = RTAS_MSI_TYPE_NONE;
    if (!req) {
        trace_spapr_pci_change_msi(dev->name, fn, req, 0, -1);
        return RTAS_OUT_SUCCESS;
    }
    /* PAPR lets the platform grant fewer than asked: clamp to the device. */
    max = want_msix ? msix_nr_vectors(dev) : spapr_msi_max(dev);
    n = MIN(req, max);
    if (!want_msix) {
        n = pow2ceil(n);        /* MSI numbers come in power-of-two blocks */
    }
    first = spapr_irq_alloc_block(s->ics, n);
    if (first < 0) {
        trace_spapr_pci_change_msi(dev->name, fn, req, 0, -1);
        return RTAS_OUT_HW_ERROR;
    }
    if (want_msix) {
        for (i = 0; i < n; i++) {
            msix_set_message(dev, i, spapr_msi_message(first + i));
        }
    } else {
        spapr_phb_msi_program(dev, first, n);
    }
    *a = (SpaprMsiAlloc){ .first = first, .count = n, .is_msix = want_msix };
    *count = n;
    *type = want_msix ? RTAS_MSI_TYPE_MSIX : RTAS_MSI_TYPE_MSI;
    trace_spapr_pci_change_msi(dev->name, fn, req, n, first);
    return RTAS_OUT_SUCCESS;
}

unsigned int spapr_phb_msi_get(SpaprPhbState *s, PCIDevice *dev, int *first,
                               bool *is_msix)
{
    SpaprMsiAlloc *a = &s->msi[dev->devfn & 0xff];

    *first = a->first;
    *is_msix = a->is_msix;
    return a->count;
}

/* ---- lookup ---- */

PCIBus *spapr_phb_bus(SpaprPhbState *s)
{
    return s->bus;
}

uint64_t spapr_phb_buid(SpaprPhbState *s)
{
    return SPAPR_PHB_BUID;
}

PCIDevice *spapr_phb_find_device(SpaprPhbState *s, uint64_t buid,
                                 uint32_t config_addr)
{
    if (!s || buid != SPAPR_PHB_BUID ||
        RTAS_CONFIG_ADDR_BUS(config_addr) != 0) {
        return NULL;
    }
    return pci_find_device(s->bus, 0, RTAS_CONFIG_ADDR_DEVFN(config_addr));
}

/* ---- the device ---- */

static bool spapr_phb_realize(DeviceState *dev, Error **errp)
{
    SpaprPhbState *s = SPAPR_PHB(dev);
    MemoryRegion *sysmem = get_system_memory();

    memory_region_init(&s->pci_mem, OBJECT(s), "spapr-pci-mem", UINT64_MAX);
    memory_region_init(&s->pci_io, OBJECT(s), "spapr-pci-io",
                       SPAPR_PHB_IO_SIZE);
    memory_region_init_alias(&s->mmio32_window, OBJECT(s),
                             "spapr-pci-mmio32", &s->pci_mem,
                             SPAPR_PHB_MMIO32_PCI, SPAPR_PHB_MMIO32_SIZE);
    memory_region_init_alias(&s->mmio64_window, OBJECT(s),
                             "spapr-pci-mmio64", &s->pci_mem,
                             SPAPR_PHB_MMIO64_BASE, SPAPR_PHB_MMIO64_SIZE);
    memory_region_init_alias(&s->io_window, OBJECT(s), "spapr-pci-io-window",
                             &s->pci_io, 0, SPAPR_PHB_IO_SIZE);
    memory_region_init_io(&s->msi_window, OBJECT(s), &spapr_msi_ops, s,
                          "spapr-msi", SPAPR_PHB_MSI_SIZE);
    memory_region_add_subregion(sysmem, SPAPR_PHB_MMIO32_BASE,
                                &s->mmio32_window);
    memory_region_add_subregion(sysmem, SPAPR_PHB_MMIO64_BASE,
                                &s->mmio64_window);
    memory_region_add_subregion(sysmem, SPAPR_PHB_IO_BASE, &s->io_window);
    memory_region_add_subregion(sysmem, SPAPR_PHB_MSI_BASE, &s->msi_window);

    s->bus = pci_root_bus_new(dev, "pci.0", &s->pci_mem, &s->pci_io,
                              sysmem);
    pci_bus_irqs(s->bus, spapr_phb_set_irq, NULL, s, SPAPR_IRQ_NR_LSI);
    pci_bus_set_hotplug_hook(s->bus, spapr_phb_hotplug, s);
    qemu_register_reset(spapr_phb_reset_handler, s);
    return true;
}

/* The windows sit in system memory, which outlives us. */
static void spapr_phb_finalize(Object *obj)
{
    SpaprPhbState *s = SPAPR_PHB(obj);

    if (!s->bus) {
        return;
    }
    qemu_unregister_reset(spapr_phb_reset_handler, s);
    memory_region_finalize(&s->mmio32_window);
    memory_region_finalize(&s->mmio64_window);
    memory_region_finalize(&s->io_window);
    memory_region_finalize(&s->msi_window);
    memory_region_finalize(&s->pci_mem);
    memory_region_finalize(&s->pci_io);
    s->bus = NULL;
}

static void spapr_phb_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "pseries PCI host bridge (RTAS config access)";
    dc->realize = spapr_phb_realize;
    dc->user_creatable = false;
}

SpaprPhbState *spapr_phb_create(MachineState *ms, SpaprIcsState *ics,
                                Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_SPAPR_PHB);

    SPAPR_PHB(dev)->ics = ics;
    object_property_add_child(OBJECT(ms), "pci-host", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    return SPAPR_PHB(dev);
}

static const TypeInfo spapr_phb_types[] = {
    {
        .name = TYPE_SPAPR_PHB,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(SpaprPhbState),
        .class_init = spapr_phb_class_init,
        .instance_finalize = spapr_phb_finalize,
    },
};

DEFINE_TYPES(spapr_phb_types)
