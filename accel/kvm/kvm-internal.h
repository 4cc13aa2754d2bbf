/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * State shared by the KVM accelerator's files, the per-architecture hooks
 * (KVMArchOps, implemented by kvm-x86.c), and the pure memslot planning
 * function (unit-tested without /dev/kvm).
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

struct CpuTopology;     /* hw/boards.h */

/* Defined by the architecture's file (kvm-x86.c); opaque elsewhere. */
typedef struct KVMArchState KVMArchState;
typedef struct KVMArchVCPU KVMArchVCPU;

/* One vCPU. */
typedef struct KVMVCPU {
    int index;
    int fd;
    struct kvm_run *run;
    GThread *thread;
    pthread_t tid;
    int host_tid;           /* Linux thread id, for query-cpus-fast */
    bool reset_pending;     /* BQL: load the boot state before running */
    bool parked;            /* BQL: cannot run until the next reset */
    bool nmi_pending;       /* BQL: inject-nmi, delivered before KVM_RUN */
    KVMArchVCPU *arch;      /* registers, CPUID, MSRs: kvm_arch_ops */
    struct kvm_dirty_gfn *dirty_gfns;   /* dirty ring, NULL if off */
    uint32_t dirty_fetch;   /* BQL: next ring entry to collect */
} KVMVCPU;

typedef struct KVMState {
    int fd;
    int vm_fd;
    size_t run_size;
    int nr_slots;
    bool irqchip;
    KVMVCPU *vcpus;
    unsigned nr_vcpus;
    KVMArchState *arch;     /* set by kvm_arch_ops.init_vm */
    uint32_t dirty_ring_size;   /* entries per vCPU; 0: dirty bitmap */
} KVMState;

extern KVMState *kvm_state;

/*
 * What kvm-all.c (VM and vCPU lifecycle, threads, exits) asks of the
 * guest architecture.  One implementation, kvm_arch_ops in kvm-x86.c:
 * Conduit's KVM targets are x86 only (accel/kvm/meson.build).  All run
 * under the BQL; the vCPU hooks on any thread unless noted.
 */
typedef struct KVMArchOps {
    /* The id KVM_CREATE_VCPU gets for vCPU index (NULL: the index). */
    unsigned long (*vcpu_id)(const struct CpuTopology *smp, unsigned index);
    /* After KVM_CREATE_VM: VM-wide set-up, including the irqchip. */
    bool (*init_vm)(KVMState *s, Error **errp);
    /* Undoes init_vm, also a partial one; s->arch may be NULL. */
    void (*cleanup_vm)(KVMState *s);
    /*
     * After KVM_CREATE_VCPU and the kvm_run mmap, before the vCPU's
     * thread starts; @smp is the machine's -smp topology.
     */
    bool (*init_vcpu)(KVMState *s, KVMVCPU *cpu,
                      const struct CpuTopology *smp, Error **errp);
    /* Undoes init_vcpu, also a partial one; cpu->arch may be NULL. */
    void (*cleanup_vcpu)(KVMVCPU *cpu);
    /* On the vCPU's thread: the architectural reset (boot) state. */
    void (*reset_vcpu)(KVMState *s, KVMVCPU *cpu);
    /* Reports @what with the registers: the VM cannot continue. */
    void (*report_vcpu)(KVMVCPU *cpu, const char *what);
    /* On the vCPU's thread: raise an NMI (NULL: the target has none). */
    bool (*inject_nmi)(KVMVCPU *cpu, Error **errp);
} KVMArchOps;

extern const KVMArchOps kvm_arch_ops;

/* kvm-x86-state.c: vCPU, irqchip, PIT and clock state for migration. */
void kvm_x86_state_register(KVMState *s);

/* kvm-coalesced-ring.c: the coalesced MMIO ring, pure (unit-tested). */
struct kvm_coalesced_mmio_ring;
typedef void (*KVMCoalescedApply)(void *opaque, uint64_t addr,
                                  const uint8_t *data, uint32_t len,
                                  bool pio);
/* Entries waiting in a ring of @max slots (0 for a corrupt ring). */
uint32_t kvm_coalesced_ring_pending(const struct kvm_coalesced_mmio_ring *ring,
                                    uint32_t max);
/*
 * Applies the waiting entries in order, freeing each slot after applying
 * it; at most @max per call.  Returns how many were applied.
 */
uint32_t kvm_coalesced_ring_drain(struct kvm_coalesced_mmio_ring *ring,
                                  uint32_t max, KVMCoalescedApply apply,
                                  void *opaque);
/*
 * The drainer's adaptive back-off, like vfio-user-nvme's poller: spin
 * (0) for KVM_COALESCED_SPIN_NS after the last entry, then sleep from
 * KVM_COALESCED_MIN_SLEEP_NS doubling up to @max_sleep_ns, and after
 * KVM_COALESCED_IDLE_NS of quiet at least KVM_COALESCED_IDLE_SLEEP_NS.
 */
#define KVM_COALESCED_SPIN_NS       (20 * 1000ll)
#define KVM_COALESCED_MIN_SLEEP_NS  (1000ll)
#define KVM_COALESCED_IDLE_NS       (200 * 1000 * 1000ll)
#define KVM_COALESCED_IDLE_SLEEP_NS (1000 * 1000ll)
int64_t kvm_coalesced_next_sleep(int64_t idle_ns, int64_t prev_sleep_ns,
                                 int64_t max_sleep_ns);

/* kvm-coalesced.c: zones from the memory API, the drainer thread. */
typedef struct KVMCoalescedStats {
    uint32_t zones;             /* registered now */
    uint32_t ring_size;         /* slots, 0: no ring (capability missing) */
    uint32_t pending;           /* entries in the ring now */
    uint64_t replayed;          /* writes applied from the ring */
    uint64_t vcpu_drains;       /* drains before an exit found entries */
    uint64_t drainer_drains;    /* drains by the drainer thread */
} KVMCoalescedStats;
void kvm_coalesced_init(KVMState *s);
/* Once the vCPUs exist: the ring lives in their kvm_run mapping. */
void kvm_coalesced_start(KVMState *s);
void kvm_coalesced_cleanup(KVMState *s);
/* BQL held.  @vcpu: called before handling an exit. */
void kvm_coalesced_flush(bool vcpu);
void kvm_coalesced_get_stats(KVMCoalescedStats *st);

/* kvm-memory.c */
bool kvm_memory_init(KVMState *s, Error **errp);
void kvm_memory_cleanup(KVMState *s);
/*
 * The dirty ring (-accel kvm,dirty-ring-size=N): enabled on the VM
 * before any vCPU exists, then mapped per vCPU; collected under the BQL
 * by the memory API's log sync and by a vCPU whose ring filled up.
 */
/* kvm-dirty-ring.c, pure: is @entries a size KVM could take (0: off)? */
bool kvm_dirty_ring_check_size(uint32_t entries, size_t page_size,
                               Error **errp);
typedef void (*KVMDirtyMark)(void *opaque, uint32_t slot, uint64_t offset);
/*
 * Takes the entries KVM published in @gfns (@entries, a power of two)
 * from *@fetch on, in order: @mark for each, flagged for reset, *@fetch
 * advanced.  Returns how many; at most @entries.
 */
uint32_t kvm_dirty_ring_harvest(struct kvm_dirty_gfn *gfns, uint32_t entries,
                                uint32_t *fetch, KVMDirtyMark mark,
                                void *opaque);
bool kvm_dirty_ring_enable(KVMState *s, uint32_t entries, Error **errp);
bool kvm_dirty_ring_map_vcpu(KVMState *s, KVMVCPU *cpu, Error **errp);
void kvm_dirty_ring_unmap_vcpu(KVMState *s, KVMVCPU *cpu);
/* A vCPU exited with KVM_EXIT_DIRTY_RING_FULL. */
void kvm_dirty_ring_full(KVMVCPU *cpu);
typedef struct KVMDirtyRingStats {
    uint64_t pages;         /* entries collected */
    uint64_t full_exits;    /* KVM_EXIT_DIRTY_RING_FULL */
    uint64_t resets;        /* KVM_RESET_DIRTY_RINGS */
} KVMDirtyRingStats;
void kvm_dirty_ring_get_stats(KVMDirtyRingStats *st);

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
