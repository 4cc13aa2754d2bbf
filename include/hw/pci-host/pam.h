/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Programmable Attribute Map: how the i440FX and Q35 host bridges route
 * the legacy BIOS window 0xc0000..0xfffff.  Thirteen segments (0xf0000
 * 64 KiB, then 0xc0000..0xeffff in 16 KiB pieces) each decode to PCI
 * (where the BIOS ROM's last 128 KiB shows at 0xe0000), to RAM read-only,
 * or to RAM read-write.  Firmware copies itself into that RAM, then
 * write-protects it.
 */
#ifndef HW_PCI_HOST_PAM_H
#define HW_PCI_HOST_PAM_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"
#include "system/memory.h"

#define PAM_BIOS_BASE   0xf0000
#define PAM_BIOS_SIZE   0x10000
#define PAM_EXPAN_BASE  0xc0000
#define PAM_EXPAN_SIZE  0x04000
#define PAM_NR_SEGMENTS 13
#define PAM_NR_REGS     7       /* PAM0 (BIOS) .. PAM6 */

/* The attribute of one segment (2 bits of a PAM register). */
typedef enum PamMode {
    PAM_MODE_PCI = 0,           /* reads and writes go to PCI */
    PAM_MODE_RO = 1,            /* reads from RAM, writes to PCI */
    PAM_MODE_WO = 2,            /* writes to RAM, reads from PCI */
    PAM_MODE_RW = 3,
} PamMode;

/* Segment i's window; and the mode PAM register bytes regs[] give it. */
void pam_segment_range(unsigned seg, uint64_t *base, uint64_t *size);
PamMode pam_segment_mode(const uint8_t regs[PAM_NR_REGS], unsigned seg);

typedef struct PamState {
    MemoryRegion pci_window;    /* the PCI side of 0xc0000..0xfffff */
    MemoryRegion ram_alias[PAM_NR_SEGMENTS];
    MemoryRegion pci_alias[PAM_NR_SEGMENTS];
    PamMode mode[PAM_NR_SEGMENTS];
    bool active;
} PamState;

/*
 * Overlays the segments on system (priority 2) with ram (the machine's
 * RAM, offset = guest address) behind them, all in PCI mode; bios_rom
 * (may be NULL) is the ROM whose last 128 KiB shows at 0xe0000 on the
 * PCI side.
 */
void pam_init(PamState *pam, Object *owner, MemoryRegion *system,
              MemoryRegion *ram, MemoryRegion *isa_bios);
/* Applies PAM register bytes regs[] (PAM0 first) to every segment. */
void pam_update(PamState *pam, const uint8_t regs[PAM_NR_REGS]);

#endif
