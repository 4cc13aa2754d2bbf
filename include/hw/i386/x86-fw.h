/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Firmware on the PC boards.  Which firmware runs, as in QEMU:
 *   -machine pflash0=NODE[,pflash1=NODE] or -drive if=pflash: CFI flash
 *       at the top of 4 GiB, unit 0 highest (OVMF code, then its
 *       variables below it);
 *   -bios FILE (searched in the -L / data directories): a ROM there;
 *   neither, and no -kernel: bios-256k.bin (Debian's seabios package)
 *       when it is installed; otherwise the machine refuses to start;
 *   -kernel alone: no firmware, Conduit boots the kernel itself.
 * Under -accel qtest only an explicit firmware is mapped (no vCPU would
 * run it).  Firmware gets the last 128 KiB of its image at 0xe0000 behind
 * the chipset's PAM, and fw_cfg with the items in x86_fw_cfg_init().
 */
#ifndef HW_I386_X86_FW_H
#define HW_I386_X86_FW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define X86_DEFAULT_BIOS "bios-256k.bin"

/*
 * Maps the firmware (if any) and creates fw_cfg for it; sets
 * pcms->has_firmware.  host_func is the chipset's 00.0 (PAM).
 */
bool x86_firmware_init(MachineState *ms, PCIDevice *host_func, Error **errp);

/*
 * The "bootorder" file: one OpenFirmware device path per line for every
 * device with bootindex >= 0, lowest index first (SeaBIOS and OVMF match
 * the PCI path).  Returns NULL when no device has a bootindex.
 */
char *x86_fw_bootorder(void);

/* The OpenFirmware path QEMU gives a PCI function ("/pci@i0cf8/scsi@4"). */
char *x86_fw_pci_path(PCIDevice *dev);

/* SMBIOS hook: the builder hands its tables to firmware through this. */
void x86_fw_cfg_set_smbios(FWCfgState *fw_cfg, void *anchor,
                           size_t anchor_len, void *tables,
                           size_t tables_len);

/* The SMBIOS tables (hw/smbios) as fw_cfg's etc/smbios files. */
bool pc_smbios_fw_cfg(MachineState *ms, FWCfgState *fw_cfg, Error **errp);

#endif
