/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PCI for guests: configuration space through 0xcf8/0xcfc, enumeration of
 * bus 0 and the buses behind bridges, BAR sizing, BAR assignment when the
 * firmware or VMM left a BAR unset, and MSI-X table programming.
 */
#ifndef GUEST_PCI_H
#define GUEST_PCI_H

#include "libguest.h"

#define PCI_MAX_DEVICES 64
#define PCI_BDF(bus, dev, fn) (((bus) << 8) | ((dev) << 3) | (fn))

#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_COMMAND 0x04
#define PCI_COMMAND_IO 0x1
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4
#define PCI_COMMAND_INTX_DISABLE 0x400
#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CLASS_REVISION 0x08
#define PCI_HEADER_TYPE 0x0e
#define PCI_BASE_ADDRESS_0 0x10
#define PCI_SECONDARY_BUS 0x19
#define PCI_CAPABILITY_LIST 0x34
#define PCI_CAP_ID_MSI 0x05
#define PCI_CAP_ID_MSIX 0x11

typedef struct PciBar {
    uint64_t addr;
    uint64_t size;          /* 0: BAR not implemented */
    bool io;
    bool is64;
    bool prefetch;
} PciBar;

typedef struct PciDev {
    uint16_t bdf;
    uint16_t vendor;
    uint16_t device;
    uint32_t class_rev;     /* class << 8 | revision */
    uint8_t header_type;    /* without the multi-function bit */
    PciBar bar[6];
} PciDev;

typedef struct PciMsix {
    PciDev *dev;
    uint8_t cap;
    uint16_t nvec;
    uint64_t table;         /* guest-physical address of entry 0 */
    uint64_t pba;
} PciMsix;

uint8_t pci_cfg_read8(uint16_t bdf, uint8_t off);
uint16_t pci_cfg_read16(uint16_t bdf, uint8_t off);
uint32_t pci_cfg_read32(uint16_t bdf, uint8_t off);
void pci_cfg_write8(uint16_t bdf, uint8_t off, uint8_t v);
void pci_cfg_write16(uint16_t bdf, uint8_t off, uint16_t v);
void pci_cfg_write32(uint16_t bdf, uint8_t off, uint32_t v);

/* Enumerates and sizes every function's BARs; returns the count found. */
int pci_scan(PciDev *devs, int max);
PciDev *pci_find(PciDev *devs, int n, uint16_t vendor, uint16_t device);
PciDev *pci_find_class(PciDev *devs, int n, uint32_t class_code);
/* Sizes the BARs of one function (decoding is off while sizing). */
void pci_bar_probe(PciDev *d);
/*
 * Gives every implemented BAR that reads back as 0 an address that
 * overlaps no BAR of any device in devs (memory below 0xfec00000 from
 * 0xc0000000 up, I/O from 0xc000 up).  Returns false when space runs out.
 */
bool pci_bar_assign(PciDev *devs, int n, PciDev *d);
/* Turns on memory/I/O decoding (for implemented BARs) and bus mastering. */
void pci_enable(PciDev *d);
uint8_t pci_find_cap(PciDev *d, uint8_t id);
const char *pci_class_name(uint32_t class_rev);

/*
 * MSI: programs one message (fixed, edge, to apic_id) and returns the
 * capability offset, 0 if the function has no MSI capability.
 */
uint8_t pci_msi_setup(PciDev *d, uint8_t cpu_vector, uint32_t apic_id);
void pci_msi_enable(PciDev *d, uint8_t cap, bool enable);
/* Per-vector masking of vector 0; false if the capability lacks it. */
bool pci_msi_mask(PciDev *d, uint8_t cap, bool masked);
bool pci_msi_pending(PciDev *d, uint8_t cap);

bool pci_msix_init(PciDev *d, PciMsix *m);
void pci_msix_set_vector(PciMsix *m, uint16_t entry, uint8_t cpu_vector,
                         uint32_t apic_id);
void pci_msix_mask(PciMsix *m, uint16_t entry, bool masked);
void pci_msix_enable(PciMsix *m, bool enable);
bool pci_msix_pending(PciMsix *m, uint16_t entry);

#endif
