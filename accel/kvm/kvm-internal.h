/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * State shared by the KVM accelerator's files, and the pure memslot
 * planning function (unit-tested without /dev/kvm).
 */
#ifndef ACCEL_KVM_INTERNAL_H
#define ACCEL_KVM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <glib.h>
#include "qemu/typedefs.h"

/*
 * Which part of a RAM(-device) section of [gpa, gpa + size) backed by host
 * memory at hva can become a memslot.  KVM maps whole host pages, so only
 * the page-aligned middle qualifies; the unaligned head and tail (and the
 * whole section if gpa and hva disagree modulo the page size) stay out of
 * KVM and are dispatched in userspace.
 */
typedef struct KVMSlotPlan {
    bool mapped;        /* false: nothing can be a memslot */
    uint64_t gpa;       /* the memslot, when mapped */
    uint64_t size;
    uint64_t hva;
    uint64_t head;      /* bytes before the memslot left to userspace */
    uint64_t tail;      /* bytes after it */
} KVMSlotPlan;

/* page_size must be a power of two. */
KVMSlotPlan kvm_plan_slot(uint64_t gpa, uint64_t size, uint64_t hva,
                          uint64_t page_size);

/* One vCPU. */
typedef struct KVMVCPU {
    int index;
    int fd;
    struct kvm_run *run;
    GThread *thread;
    pthread_t tid;
    bool reset_pending;     /* BQL: load the boot state before running */
    bool parked;            /* BQL: cannot run until the next reset */
    struct kvm_sregs *reset_sregs;  /* as KVM created it: the reset state */
} KVMVCPU;

typedef struct KVMState {
    int fd;
    int vm_fd;
    size_t run_size;
    int nr_slots;
    bool irqchip;
    KVMVCPU *vcpus;
    unsigned nr_vcpus;
    /* -smp logical CPUs per core and per package; 0: not a power of 2 */
    unsigned cpuid_threads, cpuid_pkg_cpus;
    struct kvm_cpuid2 *cpuid;
} KVMState;

extern KVMState *kvm_state;

/* kvm-memory.c */
bool kvm_memory_init(KVMState *s, Error **errp);
void kvm_memory_cleanup(KVMState *s);

/* kvm-irq.c */
bool kvm_irq_init(KVMState *s, Error **errp);
void kvm_irq_cleanup(KVMState *s);
extern uint64_t kvm_stat_signal_msi;
/* KVM_IRQFD on a bare eventfd (the vfio hooks only have the fd). */
bool kvm_irqfd_fd(int fd, int virq, bool assign, Error **errp);

/* kvm-vfio.c: installs the vfio-pci irq bypass and group hooks. */
void kvm_vfio_init(KVMState *s);
void kvm_vfio_cleanup(KVMState *s);

#endif
