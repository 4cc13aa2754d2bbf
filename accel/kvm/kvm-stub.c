/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conduit-system-x86_64 built for a host that is not x86 (a ppc64le POWER
 * host, see docs/devel/ppc64.rst): KVM can only run x86 guests on x86
 * hosts, so this binary has the qtest accelerator alone.  Device models
 * that ask kvm_enabled() see false and take their qtest paths; -accel kvm
 * is refused as an unknown accelerator.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/kvm.h"
#include "hw/i386/x86-cpu.h"

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

/* The irqfd and ioeventfd paths: refused, so callers keep their slow path. */
static bool kvm_stub_refuse(Error **errp)
{
    error_setg(errp, "KVM is not available in this build");
    return false;
}

/* Without KVM there is no in-kernel PIT to configure. */
bool kvm_pit_set_reinject(bool reinject, Error **errp)
{
    return kvm_stub_refuse(errp);
}

int kvm_irqchip_add_msi_route(uint64_t address, uint32_t data, Error **errp)
{
    kvm_stub_refuse(errp);
    return -1;
}

bool kvm_irqchip_update_msi_route(int virq, uint64_t address, uint32_t data,
                                  Error **errp)
{
    return kvm_stub_refuse(errp);
}

void kvm_irqchip_release_virq(int virq)
{
}

bool kvm_irqchip_commit_routes(Error **errp)
{
    return kvm_stub_refuse(errp);
}

bool kvm_irqchip_add_irqfd_notifier(EventNotifier *n, int virq, Error **errp)
{
    return kvm_stub_refuse(errp);
}

bool kvm_irqchip_remove_irqfd_notifier(EventNotifier *n, int virq,
                                       Error **errp)
{
    return kvm_stub_refuse(errp);
}

bool kvm_set_ioeventfd_mmio(int fd, uint64_t addr, unsigned size,
                            bool assign, Error **errp)
{
    return kvm_stub_refuse(errp);
}

/* The CPUID KVM would give a vCPU: there is no KVM, as under qtest. */
GArray *kvm_x86_guest_cpuid(const X86CPUConfig *cfg, Error **errp)
{
    error_setg(errp, "CPU model expansion needs the KVM accelerator");
    return NULL;
}
