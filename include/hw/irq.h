/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GPIO / interrupt lines between device models.
 *
 * A qemu_irq is the input side of a line: setting its level calls the
 * handler of the device that owns it with the line number.  Output lines
 * are plain qemu_irq fields in the source device that get connected to
 * some other device's input.
 */
#ifndef HW_IRQ_H
#define HW_IRQ_H

#include <stdbool.h>
#include "qemu/typedefs.h"

typedef struct IRQState *qemu_irq;

typedef void (*qemu_irq_handler)(void *opaque, int n, int level);

/* Setting a NULL line is a no-op (an unconnected output). */
void qemu_set_irq(qemu_irq irq, int level);

static inline void qemu_irq_raise(qemu_irq irq)
{
    qemu_set_irq(irq, 1);
}

static inline void qemu_irq_lower(qemu_irq irq)
{
    qemu_set_irq(irq, 0);
}

static inline void qemu_irq_pulse(qemu_irq irq)
{
    qemu_set_irq(irq, 1);
    qemu_set_irq(irq, 0);
}

qemu_irq qemu_allocate_irq(qemu_irq_handler handler, void *opaque, int n);
/* An array of n lines numbered 0..n-1; free with qemu_free_irqs(). */
qemu_irq *qemu_allocate_irqs(qemu_irq_handler handler, void *opaque, int n);
void qemu_free_irq(qemu_irq irq);
void qemu_free_irqs(qemu_irq *irqs, int n);

/* Replaces where the line goes; its number stays the same. */
void qemu_irq_intercept(qemu_irq irq, qemu_irq_handler handler, void *opaque);

#endif
