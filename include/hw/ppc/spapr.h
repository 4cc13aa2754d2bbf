/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries (sPAPR) machine: guest RAM at 0, one PCI host bridge (PHB)
 * whose MMIO windows translate to PCI addresses, an interrupt source
 * controller with numbered sources, RTAS calls reachable through the
 * qtest "rtas" command, and a flattened device tree built at reset.
 *
 * Guests on PAPR never touch the MSI-X table: they ask for vectors with
 * RTAS ibm,change-msi and the machine programs them, which is why the
 * machine answers vfio-no-msix-emulation = true.
 */
#ifndef HW_PPC_SPAPR_H
#define HW_PPC_SPAPR_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"
#include "hw/boards.h"
#include "hw/pci/pci.h"

#define TYPE_SPAPR_MACHINE MACHINE_TYPE_NAME("pseries")
#define TYPE_SPAPR_PHB "spapr-pci-host-bridge"
#define TYPE_SPAPR_ICS "spapr-ics"

/* ---- memory map (CPU addresses) ---- */
#define SPAPR_RAM_LIMIT         0x10000000000ULL    /* 1 TiB */
#define SPAPR_PHB_IO_BASE       0x20000000000ULL
#define SPAPR_PHB_IO_SIZE       0x10000ULL
#define SPAPR_PHB_MMIO32_BASE   0x20080000000ULL    /* shows PCI 2G..4G */
#define SPAPR_PHB_MMIO32_PCI    0x80000000ULL
#define SPAPR_PHB_MMIO32_SIZE   0x80000000ULL
#define SPAPR_PHB_MMIO64_BASE   0x21000000000ULL    /* identity mapped */
#define SPAPR_PHB_MMIO64_SIZE   0x1000000000ULL     /* 64 GiB */
#define SPAPR_PHB_MSI_BASE      0x40000000000ULL    /* MSI writes land here */
#define SPAPR_PHB_MSI_SIZE      0x10000ULL
#define SPAPR_PHB_BUID          0x800000020000000ULL

/*
 * ---- interrupt source numbers ----
 * All below 256, the most lines libqtest tracks; the MSI base is aligned
 * to 32 so MSI blocks (up to 32 vectors, data = base | vector) align.
 */
#define SPAPR_IRQ_LSI_BASE      0x10    /* PHB INTA..INTD */
#define SPAPR_IRQ_NR_LSI        4
#define SPAPR_IRQ_MSI_BASE      0x20
#define SPAPR_IRQ_NR_MSI        0xe0
#define SPAPR_IRQ_NR            (SPAPR_IRQ_MSI_BASE + SPAPR_IRQ_NR_MSI)

/* ---- RTAS return status (PAPR) ---- */
#define RTAS_OUT_SUCCESS        0
#define RTAS_OUT_HW_ERROR       (-1)
#define RTAS_OUT_PARAM_ERROR    (-3)
/* Return of the qtest "rtas" command when no call has that name. */
#define RTAS_H_PARAMETER        (-4)
/* Most argument or return cells any call takes. */
#define RTAS_MAX_CELLS          16

/* ibm,change-msi functions (PAPR) */
#define RTAS_MSI_FN_QUERY       0
#define RTAS_MSI_FN_CHANGE      1   /* MSI, for guests without MSI-X RTAS */
#define RTAS_MSI_FN_RESET       2   /* back to zero vectors */
#define RTAS_MSI_FN_MSI         3
#define RTAS_MSI_FN_MSIX        4
/* Interrupt type in the optional fourth return cell */
#define RTAS_MSI_TYPE_NONE      0
#define RTAS_MSI_TYPE_MSI       1
#define RTAS_MSI_TYPE_MSIX      2

/* PAPR config address: register in bits 0-7 and 24-27, devfn, bus. */
#define RTAS_CONFIG_ADDR_BUS(a)     (((a) >> 16) & 0xff)
#define RTAS_CONFIG_ADDR_DEVFN(a)   (((a) >> 8) & 0xff)
#define RTAS_CONFIG_ADDR_REG(a)     ((((a) >> 16) & 0xf00) | ((a) & 0xff))

typedef struct SpaprIcsState SpaprIcsState;
typedef struct SpaprPhbState SpaprPhbState;

typedef struct SpaprMachineState {
    MachineState parent_obj;

    SpaprIcsState *ics;
    SpaprPhbState *phb;
    void *fdt;                  /* built at every reset */
    char *dumpdtb;              /* -machine dumpdtb=FILE */
} SpaprMachineState;

#define SPAPR_MACHINE(obj) \
    OBJECT_CHECK(SpaprMachineState, (obj), TYPE_SPAPR_MACHINE)

/* ---- interrupt sources (spapr_irq.c) ---- */

/*
 * The pool of MSI sources is a bitmap over [SPAPR_IRQ_MSI_BASE,
 * SPAPR_IRQ_NR).  Allocation is of a contiguous block aligned to its size
 * rounded up to a power of two, at most 32
 * (MSI needs base + i numbering); returns the first number or -1.
 */
int spapr_irq_alloc_block(SpaprIcsState *ics, unsigned int count);
void spapr_irq_free_block(SpaprIcsState *ics, int first, unsigned int count);
/* Releases every MSI source (machine reset). */
void spapr_irq_free_all(SpaprIcsState *ics);
/* An edge on source irq (an MSI); out of range is a guest error. */
void spapr_irq_pulse(SpaprIcsState *ics, uint32_t irq);
void spapr_irq_set_level(SpaprIcsState *ics, uint32_t irq, int level);
SpaprIcsState *spapr_ics_create(MachineState *ms, Error **errp);

/* ---- PHB (spapr_pci.c) ---- */

SpaprPhbState *spapr_phb_create(MachineState *ms, SpaprIcsState *ics,
                                Error **errp);
PCIBus *spapr_phb_bus(SpaprPhbState *phb);
uint64_t spapr_phb_buid(SpaprPhbState *phb);
/* The device a PAPR config address names on the PHB with buid, or NULL. */
PCIDevice *spapr_phb_find_device(SpaprPhbState *phb, uint64_t buid,
                                 uint32_t config_addr);
/*
 * The MSI/MSI-X sources allocated to dev by ibm,change-msi: first number
 * and count (0 when none).
 */
unsigned int spapr_phb_msi_get(SpaprPhbState *phb, PCIDevice *dev,
                               int *first, bool *is_msix);
/*
 * ibm,change-msi on dev: function fn (RTAS_MSI_FN_*), req vectors.
 * Returns an RTAS status; *count receives the vectors now allocated and
 * *type the interrupt type.
 */
int spapr_phb_change_msi(SpaprPhbState *phb, PCIDevice *dev, uint32_t fn,
                         uint32_t req, uint32_t *count, uint32_t *type);

/* ---- RTAS (spapr_rtas.c) ---- */

/*
 * Runs RTAS call name with host-order argument cells; fills rets (nret
 * cells; a call writes at most its own count).  Returns false if no call
 * has that name.
 */
bool spapr_rtas_call(SpaprMachineState *sms, const char *name,
                     uint32_t nargs, const uint32_t *args,
                     uint32_t nret, uint32_t *rets);
/* The same with big-endian cells in guest memory, as PAPR lays them out. */
bool spapr_rtas_call_guest(SpaprMachineState *sms, const char *name,
                           uint32_t nargs, uint64_t args_addr,
                           uint32_t nret, uint64_t rets_addr);
/* Names of the calls, NULL-terminated, in token order (token = index+1). */
const char *const *spapr_rtas_call_names(void);
void spapr_rtas_register_qtest(void);

/* ---- device tree (spapr_fdt.c) ---- */

/* Builds the tree for the machine as it is now; NULL with errp set. */
void *spapr_build_fdt(SpaprMachineState *sms, Error **errp);

#endif
