/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The PC's i8042 keyboard controller at ISA ports 0x60 (data) and 0x64
 * (status / command), with a PS/2 keyboard (IRQ 1) and mouse (IRQ 12)
 * behind it.
 */
#ifndef HW_INPUT_I8042_H
#define HW_INPUT_I8042_H

#include "qemu/typedefs.h"
#include "hw/irq.h"

#define TYPE_I8042 "i8042"

#define I8042_DATA_PORT     0x60
#define I8042_CMD_PORT      0x64
#define I8042_KBD_IRQ       1
#define I8042_AUX_IRQ       12

/*
 * Creates the machine's controller as /machine/i8042; its GPIO outputs
 * 0 and 1 are the keyboard and mouse interrupt lines (may stay
 * unconnected).
 */
DeviceState *i8042_create(MachineState *ms, qemu_irq kbd_irq,
                          qemu_irq aux_irq, Error **errp);

#endif
