/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM accelerator (x86): VM and vCPUs, memslots, in-kernel irqchip
 * and the interrupt routing API used by device models.
 *
 * MSI from emulated devices goes through KVM_SIGNAL_MSI (installed as the
 * pc machine's MSI handler).  Passthrough devices (vfio) get the fast
 * path instead: a GSI route per vector plus an irqfd, so the device's
 * eventfd injects into the in-kernel LAPIC without waking Conduit.
 *
 *   virq = kvm_irqchip_add_msi_route(msg.address, msg.data, errp);
 *   kvm_irqchip_commit_routes(errp);
 *   kvm_irqchip_add_irqfd_notifier(&vector->interrupt, virq, errp);
 *   ... on a message change: kvm_irqchip_update_msi_route + commit
 *   ... on release: kvm_irqchip_remove_irqfd_notifier + release_virq
 *
 * All of these need the BQL.  Without KVM (qtest) kvm_enabled() is false
 * and every call fails with an error rather than crashing.
 */
#ifndef SYSTEM_KVM_H
#define SYSTEM_KVM_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define TYPE_KVM_ACCEL "kvm-accel"

/* True once the kvm accelerator is initialized. */
bool kvm_enabled(void);
/* True when irqfd + MSI routes are available (in-kernel irqchip). */
bool kvm_msi_via_irqfd_enabled(void);

/* Injects one MSI now (KVM_SIGNAL_MSI); false if KVM refused it. */
bool kvm_irqchip_send_msi(uint64_t address, uint32_t data, Error **errp);
/* Sets an ISA/IOAPIC interrupt line of the in-kernel irqchip. */
void kvm_set_irq_line(unsigned int gsi, int level);

/*
 * Allocates a GSI for an MSI message.  Returns the GSI (>= 0), or -1 with
 * errp set when the routing table is full or KVM is not in use.  Takes
 * effect at the next kvm_irqchip_commit_routes().
 */
int kvm_irqchip_add_msi_route(uint64_t address, uint32_t data, Error **errp);
/* Changes the message of an allocated GSI (commit to apply). */
bool kvm_irqchip_update_msi_route(int virq, uint64_t address, uint32_t data,
                                  Error **errp);
/* Frees a GSI (commit to apply); unknown GSIs are ignored. */
void kvm_irqchip_release_virq(int virq);
/* Hands the whole routing table to KVM if it changed. */
bool kvm_irqchip_commit_routes(Error **errp);
/* Signalling n now injects virq's message in the kernel (KVM_IRQFD). */
bool kvm_irqchip_add_irqfd_notifier(EventNotifier *n, int virq,
                                    Error **errp);
bool kvm_irqchip_remove_irqfd_notifier(EventNotifier *n, int virq,
                                       Error **errp);

/*
 * A guest store of size bytes (0: any size) to addr signals fd in the
 * kernel without an exit (KVM_IOEVENTFD, no datamatch).  assign false
 * removes it.  Fails with errp set without KVM.
 */
bool kvm_set_ioeventfd_mmio(int fd, uint64_t addr, unsigned size,
                            bool assign, Error **errp);

/* Counters for telemetry and tests (all vCPUs since start). */
typedef struct KVMExitStats {
    uint64_t exits;
    uint64_t mmio;
    uint64_t pio;
    uint64_t signal_msi;
} KVMExitStats;
void kvm_get_exit_stats(KVMExitStats *stats);

/*
 * The in-kernel PIT re-injects ticks the guest missed (true, KVM's
 * default) or drops them.  False with errp set if KVM cannot.
 */
bool kvm_pit_set_reinject(bool reinject, Error **errp);

#endif
