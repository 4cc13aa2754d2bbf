/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Legacy ISA devices of the pc machine: the CMOS RTC, the i8042
 * keyboard controller, and one 16550A per
 * -serial backend at the usual COM port, their IRQ lines going to the
 * in-kernel PIC/IOAPIC under KVM (qtest has no interrupt controller to
 * feed, so they stay unconnected and drivers poll).
 */
#include "qemu/osdep.h"
#include "hw/i386/pc-isa.h"
#include "hw/char/serial.h"
#include "hw/rtc/mc146818rtc.h"
#include "hw/i386/kvm-pit.h"
#include "hw/input/i8042.h"
#include "hw/irq.h"
#include "system/system.h"
#include "system/kvm.h"
#include "qapi/error.h"

static void pc_isa_irq_handler(void *opaque, int n, int level)
{
    kvm_set_irq_line(n, level);
}

static qemu_irq pc_isa_serial_irq(unsigned line)
{
    return qemu_allocate_irq(pc_isa_irq_handler, NULL, line);
}

bool pc_isa_init(MachineState *ms, Error **errp)
{
    if (kvm_enabled()) {
        serial_isa_set_irq_source(pc_isa_serial_irq);
    }
    /* The in-kernel PIT (kvm-x86.c made it) and its lost-tick policy. */
    if (kvm_enabled() && !kvm_pit_create(ms, errp)) {
        return false;
    }
    /* Every pc has its CMOS clock; guests probe it unconditionally. */
    if (!mc146818_rtc_create(ms, kvm_enabled() ?
                             qemu_allocate_irq(pc_isa_irq_handler, NULL,
                                               RTC_ISA_IRQ) : NULL,
                             errp)) {
        return false;
    }
    /* ... and its keyboard controller, as QEMU's pc and q35 always do. */
    if (!i8042_create(ms, kvm_enabled() ?
                      qemu_allocate_irq(pc_isa_irq_handler, NULL,
                                        I8042_KBD_IRQ) : NULL,
                      kvm_enabled() ?
                      qemu_allocate_irq(pc_isa_irq_handler, NULL,
                                        I8042_AUX_IRQ) : NULL,
                      errp)) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        Chardev *chr = serial_hd(i);
        qemu_irq irq = NULL;

        if (!chr) {
            continue;
        }
        if (kvm_enabled()) {
            irq = qemu_allocate_irq(pc_isa_irq_handler, NULL,
                                    serial_isa_irq[i]);
        }
        if (!serial_isa_create(ms, i, chr, irq, errp)) {
            return false;
        }
    }
    return true;
}
