/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries flattened device tree, built with libfdt at every reset so
 * it describes the machine as it is (devices added with -device included):
 * root, a placeholder /cpus, memory, /rtas with a token per call and
 * ibm,change-msix-capable, and the PHB with one child per PCI function.
 * PCI addresses follow the Open Firmware PCI binding (phys.hi/mid/lo).
 */
#include "qemu/osdep.h"
#include <libfdt.h>
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/ppc/spapr.h"
#include "trace.h"

/* phys.hi space codes */
#define OF_PCI_SS_CONFIG    0x00000000u
#define OF_PCI_SS_IO        0x01000000u
#define OF_PCI_SS_MEM32     0x02000000u
#define OF_PCI_SS_MEM64     0x03000000u
#define OF_PCI_PREFETCH     0x40000000u
#define OF_PCI_NONRELOC     0x80000000u

#define SPAPR_FDT_INITIAL_SIZE  (64 * 1024)
#define SPAPR_FDT_MAX_SIZE      (16 * 1024 * 1024)

/* Remembers the first libfdt error; later calls become no-ops. */
typedef struct FdtBuilder {
    void *fdt;
    int err;
} FdtBuilder;

static int fdt_b_node(FdtBuilder *b, int parent, const char *name)
{
    int off;

    if (b->err) {
        return -1;
    }
    off = fdt_add_subnode(b->fdt, parent, name);
    if (off < 0) {
        b->err = off;
    }
    return off;
}

static void fdt_b_prop(FdtBuilder *b, int node, const char *name,
                       const void *val, int len)
{
    int r;

    if (b->err || node < 0) {
        return;
    }
    r = fdt_setprop(b->fdt, node, name, val, len);
    if (r < 0) {
        b->err = r;
    }
}

static void fdt_b_str(FdtBuilder *b, int node, const char *name,
                      const char *s)
{
    fdt_b_prop(b, node, name, s, strlen(s) + 1);
}

static void fdt_b_cells(FdtBuilder *b, int node, const char *name,
                        const uint32_t *cells, int n)
{
    g_autofree fdt32_t *be = g_new(fdt32_t, n ? n : 1);

    for (int i = 0; i < n; i++) {
        be[i] = cpu_to_fdt32(cells[i]);
    }
    fdt_b_prop(b, node, name, be, n * sizeof(fdt32_t));
}

static void fdt_b_u32(FdtBuilder *b, int node, const char *name, uint32_t v)
{
    fdt_b_cells(b, node, name, &v, 1);
}

static uint32_t of_pci_phys_hi(PCIDevice *dev, int bar)
{
    const PCIIORegion *r = &dev->io_regions[bar];
    uint32_t hi = (pci_get_bdf(dev) << 8) | pci_bar_reg(bar);

    if (r->type & PCI_BASE_ADDRESS_SPACE_IO) {
        return hi | OF_PCI_SS_IO;
    }
    hi |= (r->type & PCI_BASE_ADDRESS_MEM_TYPE_64) ? OF_PCI_SS_MEM64
                                                    : OF_PCI_SS_MEM32;
    if (r->type & PCI_BASE_ADDRESS_MEM_PREFETCH) {
        hi |= OF_PCI_PREFETCH;
    }
    return hi;
}

typedef struct FdtPciCtx {
    FdtBuilder *b;
    int phb;
} FdtPciCtx;

static void spapr_fdt_pci_device(PCIBus *bus, PCIDevice *dev, void *opaque)
{
    FdtPciCtx *c = opaque;
    FdtBuilder *b = c->b;
    g_autofree char *name = NULL;
    g_autoptr(GArray) reg = g_array_new(false, false, sizeof(uint32_t));
    g_autoptr(GArray) assigned = g_array_new(false, false, sizeof(uint32_t));
    uint32_t cfg[5] = { pci_get_bdf(dev) << 8 | OF_PCI_SS_CONFIG, 0, 0, 0,
                        0 };
    uint16_t vendor = pci_get_word(dev->config + PCI_VENDOR_ID);
    uint16_t device = pci_get_word(dev->config + PCI_DEVICE_ID);
    uint8_t pin = pci_get_byte(dev->config + PCI_INTERRUPT_PIN);
    int node;

    if (PCI_FUNC(dev->devfn)) {
        name = g_strdup_printf("pci%x,%x@%x,%x", vendor, device,
                               PCI_SLOT(dev->devfn), PCI_FUNC(dev->devfn));
    } else {
        name = g_strdup_printf("pci%x,%x@%x", vendor, device,
                               PCI_SLOT(dev->devfn));
    }
    node = fdt_b_node(b, c->phb, name);

    g_array_append_vals(reg, cfg, 5);
    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        const PCIIORegion *r = &dev->io_regions[i];
        uint32_t hi = of_pci_phys_hi(dev, i);
        uint64_t addr;

        if (!r->size) {
            continue;
        }
        uint32_t e[5] = { hi, 0, 0, r->size >> 32, (uint32_t)r->size };
        g_array_append_vals(reg, e, 5);
        addr = pci_bar_address(dev, pci_bar_reg(i), r->type, r->size);
        if (addr == PCI_BAR_UNMAPPED) {
            continue;
        }
        uint32_t a[5] = { hi | OF_PCI_NONRELOC, addr >> 32, (uint32_t)addr,
                          r->size >> 32, (uint32_t)r->size };
        g_array_append_vals(assigned, a, 5);
    }
    fdt_b_cells(b, node, "reg", (uint32_t *)(void *)reg->data, reg->len);
    fdt_b_cells(b, node, "assigned-addresses",
                (uint32_t *)(void *)assigned->data, assigned->len);
    fdt_b_u32(b, node, "vendor-id", vendor);
    fdt_b_u32(b, node, "device-id", device);
    fdt_b_u32(b, node, "revision-id",
              pci_get_byte(dev->config + PCI_REVISION_ID));
    fdt_b_u32(b, node, "class-code",
              pci_get_long(dev->config + PCI_CLASS_REVISION) >> 8);
    fdt_b_u32(b, node, "subsystem-vendor-id",
              pci_get_word(dev->config + PCI_SUBSYSTEM_VENDOR_ID));
    fdt_b_u32(b, node, "subsystem-id",
              pci_get_word(dev->config + PCI_SUBSYSTEM_ID));
    if (pin) {
        fdt_b_u32(b, node, "interrupts", pin);
    }
    if (dev->msi_cap) {
        uint16_t flags = pci_get_word(dev->config + dev->msi_cap +
                                      PCI_MSI_FLAGS);
        fdt_b_u32(b, node, "ibm,req#msi",
                  1u << ((flags & PCI_MSI_FLAGS_QMASK) >> 1));
    }
    if (msix_present(dev)) {
        fdt_b_u32(b, node, "ibm,req#msi-x", msix_nr_vectors(dev));
    }
}

static void spapr_fdt_phb(FdtBuilder *b, SpaprMachineState *sms)
{
    uint64_t buid = spapr_phb_buid(sms->phb);
    g_autofree char *name = g_strdup_printf("pci@%" PRIx64, buid);
    const uint32_t ranges[] = {
        OF_PCI_SS_IO, 0, 0,
        SPAPR_PHB_IO_BASE >> 32, (uint32_t)SPAPR_PHB_IO_BASE,
        0, SPAPR_PHB_IO_SIZE,
        OF_PCI_SS_MEM32, 0, SPAPR_PHB_MMIO32_PCI,
        SPAPR_PHB_MMIO32_BASE >> 32, (uint32_t)SPAPR_PHB_MMIO32_BASE,
        0, SPAPR_PHB_MMIO32_SIZE,
        OF_PCI_SS_MEM64, SPAPR_PHB_MMIO64_BASE >> 32,
        (uint32_t)SPAPR_PHB_MMIO64_BASE,
        SPAPR_PHB_MMIO64_BASE >> 32, (uint32_t)SPAPR_PHB_MMIO64_BASE,
        SPAPR_PHB_MMIO64_SIZE >> 32, (uint32_t)SPAPR_PHB_MMIO64_SIZE,
    };
    const uint32_t reg[] = { buid >> 32, (uint32_t)buid, 0, 0x1000 };
    const uint32_t bus_range[] = { 0, 0xff };
    FdtPciCtx c = { .b = b };

    c.phb = fdt_b_node(b, 0, name);
    fdt_b_str(b, c.phb, "device_type", "pci");
    fdt_b_str(b, c.phb, "compatible", "IBM,Logical_PHB");
    fdt_b_cells(b, c.phb, "reg", reg, ARRAY_SIZE(reg));
    fdt_b_u32(b, c.phb, "#address-cells", 3);
    fdt_b_u32(b, c.phb, "#size-cells", 2);
    fdt_b_u32(b, c.phb, "#interrupt-cells", 1);
    fdt_b_cells(b, c.phb, "bus-range", bus_range, 2);
    fdt_b_cells(b, c.phb, "ranges", ranges, ARRAY_SIZE(ranges));
    fdt_b_u32(b, c.phb, "ibm,pe-total-#msi", SPAPR_IRQ_NR_MSI);
    fdt_b_u32(b, c.phb, "ibm,pci-config-space-type", 1);
    pci_for_each_device(spapr_phb_bus(sms->phb), spapr_fdt_pci_device, &c);
}

static void spapr_fdt_fill(FdtBuilder *b, SpaprMachineState *sms)
{
    MachineState *ms = MACHINE(sms);
    const char *const *calls = spapr_rtas_call_names();
    const uint32_t mem_reg[] = { 0, 0, ms->ram_size >> 32,
                                 (uint32_t)ms->ram_size };
    int node;

    fdt_b_u32(b, 0, "#address-cells", 2);
    fdt_b_u32(b, 0, "#size-cells", 2);
    fdt_b_str(b, 0, "compatible", "conduit,pseries");
    fdt_b_str(b, 0, "model", "IBM pSeries (Conduit)");
    fdt_b_str(b, 0, "device_type", "chrp");

    /* No vCPUs under qtest: the node exists so the layout is complete. */
    node = fdt_b_node(b, 0, "cpus");
    fdt_b_u32(b, node, "#address-cells", 1);
    fdt_b_u32(b, node, "#size-cells", 0);

    node = fdt_b_node(b, 0, "memory@0");
    fdt_b_str(b, node, "device_type", "memory");
    fdt_b_cells(b, node, "reg", mem_reg, ARRAY_SIZE(mem_reg));

    node = fdt_b_node(b, 0, "rtas");
    fdt_b_prop(b, node, "ibm,change-msix-capable", NULL, 0);
    for (uint32_t i = 0; calls[i]; i++) {
        fdt_b_u32(b, node, calls[i], i + 1);
    }

    spapr_fdt_phb(b, sms);
}

void *spapr_build_fdt(SpaprMachineState *sms, Error **errp)
{
    int size = SPAPR_FDT_INITIAL_SIZE;

    for (;;) {
        FdtBuilder b = { .fdt = g_malloc0(size) };
        int r = fdt_create_empty_tree(b.fdt, size);

        if (r < 0) {
            b.err = r;
        }
        spapr_fdt_fill(&b, sms);
        if (!b.err) {
            b.err = fdt_pack(b.fdt);
        }
        if (!b.err) {
            trace_spapr_fdt_built(fdt_totalsize(b.fdt));
            return b.fdt;
        }
        g_free(b.fdt);
        if (b.err != -FDT_ERR_NOSPACE || size >= SPAPR_FDT_MAX_SIZE) {
            error_setg(errp, "pseries: building the device tree: %s",
                       fdt_strerror(b.err));
            return NULL;
        }
        size *= 2;
    }
}
