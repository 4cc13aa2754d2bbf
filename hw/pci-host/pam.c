/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PAM decoding (see include/hw/pci-host/pam.h).  Each segment has two
 * overlays, one onto RAM and one onto the PCI window; the mode enables
 * one of them.  Write-only RAM (mode 2) shows the PCI side: firmware uses
 * it only to copy a ROM onto itself, which Conduit's RAM alias cannot
 * express, and neither SeaBIOS nor OVMF programs it.
 */
#include "qemu/osdep.h"
#include "hw/pci-host/pam.h"
#include "trace.h"

void pam_segment_range(unsigned seg, uint64_t *base, uint64_t *size)
{
    if (seg == 0) {
        *base = PAM_BIOS_BASE;
        *size = PAM_BIOS_SIZE;
    } else {
        *base = PAM_EXPAN_BASE + (seg - 1) * PAM_EXPAN_SIZE;
        *size = PAM_EXPAN_SIZE;
    }
}

/*
 * PAM0 bits 5:4 are the BIOS segment; PAMn (n = 1..6) holds segment 2n-1
 * in bits 1:0 and segment 2n in bits 5:4.
 */
PamMode pam_segment_mode(const uint8_t regs[PAM_NR_REGS], unsigned seg)
{
    if (seg == 0) {
        return (regs[0] >> 4) & 3;
    }
    return (regs[(seg + 1) / 2] >> ((seg & 1) ? 0 : 4)) & 3;
}

static uint64_t pam_pci_read(void *opaque, hwaddr addr, unsigned size)
{
    return size >= 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

static void pam_pci_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    /* Nothing on PCI claims the window: the write is lost, as on a PC. */
}

static const MemoryRegionOps pam_pci_ops = {
    .read = pam_pci_read,
    .write = pam_pci_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

void pam_init(PamState *pam, Object *owner, MemoryRegion *system,
              MemoryRegion *ram, MemoryRegion *isa_bios)
{
    const uint64_t win = PAM_EXPAN_BASE;

    memory_region_init_io(&pam->pci_window, owner, &pam_pci_ops, pam,
                          "pam-pci", 0x100000 - win);
    if (isa_bios) {
        memory_region_add_subregion_overlap(&pam->pci_window,
                                            0x100000 - win -
                                            memory_region_size(isa_bios),
                                            isa_bios, 1);
    }
    memory_region_transaction_begin();
    for (unsigned i = 0; i < PAM_NR_SEGMENTS; i++) {
        g_autofree char *rname = g_strdup_printf("pam-ram-%u", i);
        g_autofree char *pname = g_strdup_printf("pam-pci-%u", i);
        uint64_t base, size;

        pam_segment_range(i, &base, &size);
        memory_region_init_alias(&pam->ram_alias[i], owner, rname, ram, base,
                                 size);
        memory_region_init_alias(&pam->pci_alias[i], owner, pname,
                                 &pam->pci_window, base - win, size);
        memory_region_set_enabled(&pam->ram_alias[i], false);
        memory_region_add_subregion_overlap(system, base, &pam->ram_alias[i],
                                            2);
        memory_region_add_subregion_overlap(system, base, &pam->pci_alias[i],
                                            2);
        pam->mode[i] = PAM_MODE_PCI;
    }
    memory_region_transaction_commit();
    pam->active = true;
}

void pam_update(PamState *pam, const uint8_t regs[PAM_NR_REGS])
{
    if (!pam->active) {
        return;
    }
    memory_region_transaction_begin();
    for (unsigned i = 0; i < PAM_NR_SEGMENTS; i++) {
        PamMode m = pam_segment_mode(regs, i);
        bool ram = m == PAM_MODE_RO || m == PAM_MODE_RW;

        if (m == pam->mode[i]) {
            continue;
        }
        pam->mode[i] = m;
        memory_region_set_readonly(&pam->ram_alias[i], m == PAM_MODE_RO);
        memory_region_set_enabled(&pam->ram_alias[i], ram);
        memory_region_set_enabled(&pam->pci_alias[i], !ram);
        trace_pam_segment(i, m);
    }
    memory_region_transaction_commit();
}
