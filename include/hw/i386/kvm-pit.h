/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The in-kernel PIT's device (hw/i386/kvm-pit.c). */
#ifndef HW_I386_KVM_PIT_H
#define HW_I386_KVM_PIT_H

#include <stdbool.h>
#include "qemu/typedefs.h"

#define TYPE_KVM_PIT "kvm-pit"

/* /machine/pit under KVM, applying -global kvm-pit.lost_tick_policy. */
bool kvm_pit_create(MachineState *ms, Error **errp);

#endif
