/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's PCI host bridge: configuration mechanism #1 on ports
 * 0xcf8/0xcfc, an ECAM window, MMIO windows for BARs, and BAR assignment
 * at reset (we boot without firmware).
 */
#ifndef HW_PCI_PCI_HOST_H
#define HW_PCI_PCI_HOST_H

#include "hw/pci/pci.h"

#define TYPE_PC_PCI_HOST "pc-pci-host"

#define PC_PCI_CONFIG_ADDR_PORT 0xcf8
#define PC_PCI_CONFIG_DATA_PORT 0xcfc
#define PC_PCI_ECAM_BASE        0xe0000000ULL
#define PC_PCI_ECAM_SIZE        0x01000000ULL   /* buses 0..15 */
#define PC_PCI_MMIO32_BASE      0xe1000000ULL
#define PC_PCI_MMIO32_END       0xfec00000ULL   /* exclusive */
#define PC_PCI_MMIO64_SIZE      0x800000000ULL  /* 32 GiB */
#define PC_PCI_IO_BASE          0xc000
#define PC_PCI_IO_END           0x10000         /* exclusive */

/* MSI writes land here on x86 (the local APICs' window). */
#define PC_MSI_ADDR_BASE        0xfee00000ULL
#define PC_MSI_ADDR_SIZE        0x00100000ULL

typedef struct PCIHostWindow {
    uint64_t base;
    uint64_t end;   /* exclusive */
} PCIHostWindow;

/* What differs between the pc and q35 host bridges. */
typedef struct PCIHostConfig {
    const char *func_type;      /* function 00.0; NULL: Conduit's own */
    const char *bus_name;       /* "pcie.0" on q35; NULL: "pci.0" */
    uint64_t ecam_base;         /* where ECAM starts decoding */
    uint64_t ecam_size;         /* 0: off until the chipset maps it */
    PCIHostWindow mmio32;       /* end 0: the pc default */
    bool assign_bars;           /* no firmware: Conduit places BARs */
} PCIHostConfig;

/*
 * Creates the host bridge and its root bus "pci.0" for a machine whose
 * RAM ends (above 4 GiB) at ram_above_4g_end (0 when there is none).
 */
PCIBus *pc_pci_host_init(MachineState *ms, uint64_t ram_above_4g_end,
                         const PCIHostConfig *cfg, Error **errp);
/*
 * [lo, hi) spanning every 64-bit BAR and bridge prefetchable window
 * programmed above 4 GiB (firmware's choice); false if there is none.
 */
bool pc_pci_host_mmio64_extent(PCIBus *root, uint64_t *lo, uint64_t *hi);
/* Whether Conduit places BARs at reset (off when firmware does). */
void pc_pci_host_set_assign_bars(PCIBus *root, bool assign);
/* The host bridge function 00.0 of root bus root. */
PCIDevice *pc_pci_host_func(PCIBus *root);
/* Moves / resizes / turns off the ECAM window (a chipset's PCIEXBAR). */
void pc_pci_host_map_ecam(PCIBus *root, bool enabled, uint64_t base,
                          uint64_t size);

/*
 * The 64-bit BAR window for a machine whose RAM ends (above 4 GiB) at
 * ram_above_4g_end: from the next GiB boundary, PC_PCI_MMIO64_SIZE long.
 */
PCIHostWindow pc_pci_mmio64_window(uint64_t ram_above_4g_end);

/* Assigns every BAR of every device on bus, enables decoding + mastering. */
void pc_pci_assign_bars(PCIBus *bus);

/*
 * Pure BAR placement: the lowest address >= win->base, aligned to size
 * (a power of two), where [addr, addr+size) fits in the window and avoids
 * all nr_used ranges (pairs of [start, end)).  Returns false if none.
 */
bool pci_host_find_free_range(const PCIHostWindow *win, uint64_t size,
                              const uint64_t (*used)[2], size_t nr_used,
                              uint64_t *addr);

/* Where x86 MSI writes go: KVM installs its own handler later. */
typedef void (*PCMsiHandler)(uint64_t addr, uint32_t data, void *opaque);
void pc_msi_set_handler(PCMsiHandler fn, void *opaque);
/* Creates the MSI window on system memory and /machine/msi. */
void pc_msi_init(MachineState *ms);

#endif
