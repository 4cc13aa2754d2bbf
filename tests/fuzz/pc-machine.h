/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz targets that need a machine: a pc machine under the qtest
 * accelerator, initialised and with hot-plug on, as after start-up.
 */
#ifndef TESTS_FUZZ_PC_MACHINE_H
#define TESTS_FUZZ_PC_MACHINE_H

#include "hw/boards.h"

/* Takes the BQL (kept) and returns the pc machine's class. */
MachineClass *fuzz_pc_machine_init(void);

#endif
