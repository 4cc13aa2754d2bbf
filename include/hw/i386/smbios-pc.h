/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's SMBIOS: its description for the builders, and the
 * copy into the legacy BIOS area for a direct -kernel boot.
 */
#ifndef HW_I386_SMBIOS_PC_H
#define HW_I386_SMBIOS_PC_H

#include <stdbool.h>
#include "qemu/typedefs.h"

typedef struct SmbiosMachine SmbiosMachine;

/* The machine as the SMBIOS builders need it (also for fw_cfg). */
void pc_smbios_describe(MachineState *ms, SmbiosMachine *m);
/* Builds the tables from -smbios/-uuid and copies them at every reset. */
bool pc_smbios_init(MachineState *ms, Error **errp);

#endif
