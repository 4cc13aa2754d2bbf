/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The 8250/16550A UART at the pc's legacy COM ports.
 */
#ifndef HW_CHAR_SERIAL_H
#define HW_CHAR_SERIAL_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/irq.h"

#define TYPE_ISA_SERIAL "isa-serial"

/* Legacy COM1..COM4 port bases and ISA IRQs. */
extern const uint16_t serial_isa_iobase[4];
extern const uint8_t serial_isa_irq[4];

/*
 * Creates COM<index + 1> as /machine/serial<index>, backed by chr (may be
 * NULL: output is dropped, no input), raising irq (may be NULL: polled).
 */
DeviceState *serial_isa_create(MachineState *ms, int index, Chardev *chr,
                               qemu_irq irq, Error **errp);

#endif
