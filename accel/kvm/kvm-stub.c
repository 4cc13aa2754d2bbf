/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conduit-system-x86_64 built for a host that is not x86 (a ppc64le POWER
 * host, see docs/devel/ppc64.rst): KVM can only run x86 guests on x86
 * hosts, so this binary has the qtest accelerator alone.  Device models
 * that ask kvm_enabled() see false and take their qtest paths; -accel kvm
 * is refused as an unknown accelerator.
 */
#include "qemu/osdep.h"
#include "sysemu/kvm.h"

bool kvm_enabled(void)
{
    return false;
}

bool kvm_msi_via_irqfd_enabled(void)
{
    return false;
}

void kvm_set_irq_line(unsigned int gsi, int level)
{
}

void kvm_get_exit_stats(KVMExitStats *stats)
{
    *stats = (KVMExitStats) { 0 };
}
