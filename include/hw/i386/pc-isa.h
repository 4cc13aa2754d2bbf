/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's legacy ISA devices that are not user-created: the CMOS
 * RTC and the COM ports behind -serial / -nographic, with their IRQs on the
 * in-kernel irqchip when KVM runs the guest.
 */
#ifndef HW_I386_PC_ISA_H
#define HW_I386_PC_ISA_H

#include <stdbool.h>
#include "qemu/typedefs.h"

bool pc_isa_init(MachineState *ms, Error **errp);

#endif
