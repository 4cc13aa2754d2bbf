/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACPI for the pc machine: tables rebuilt at every reset at
 * X86_ACPI_RSDP_ADDR, and the PM device (power button, S5).  Does nothing
 * with -machine acpi=off.
 */
#ifndef HW_I386_ACPI_PC_H
#define HW_I386_ACPI_PC_H

#include <stdbool.h>
#include "qemu/typedefs.h"

bool pc_acpi_init(MachineState *ms, Error **errp);

#endif
