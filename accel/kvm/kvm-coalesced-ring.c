/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The coalesced MMIO ring and the drainer's back-off: pure logic, unit-
 * tested against a fake ring (tests/unit/test-kvm-coalesced.c).
 *
 * KVM appends each coalesced write at ring->last and advances it; we take
 * entries from ring->first, in order, and advance it after each one, so
 * the kernel never reuses a slot we have not applied yet.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"

uint32_t kvm_coalesced_ring_pending(const struct kvm_coalesced_mmio_ring *ring,
                                    uint32_t max)
{
    uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
    uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE);

    if (first >= max || last >= max) {
        return 0;
    }
    return (last + max - first) % max;
}

uint32_t kvm_coalesced_ring_drain(struct kvm_coalesced_mmio_ring *ring,
                                  uint32_t max, KVMCoalescedApply apply,
                                  void *opaque)
{
    uint32_t n = 0;

    /* At most one ring's worth: a guest writing on cannot keep us here. */
    while (n < max) {
        uint32_t first = __atomic_load_n(&ring->first, __ATOMIC_RELAXED);
        uint32_t last = __atomic_load_n(&ring->last, __ATOMIC_ACQUIRE);
        const struct kvm_coalesced_mmio *e;

        if (first == last || first >= max || last >= max) {
            break;
        }
        e = &ring->coalesced_mmio[first];
        apply(opaque, e->phys_addr, e->data, MIN(e->len, sizeof(e->data)),
              e->pio);
        /* The slot is free again only once it has been applied. */
        __atomic_store_n(&ring->first, (first + 1) % max, __ATOMIC_RELEASE);
        n++;
    }
    return n;
}

int64_t kvm_coalesced_next_sleep(int64_t idle_ns, int64_t prev_sleep_ns,
                                 int64_t max_sleep_ns)
{
    if (idle_ns < KVM_COALESCED_SPIN_NS) {
        return 0;
    }
    if (idle_ns > KVM_COALESCED_IDLE_NS) {
        return MAX(max_sleep_ns, KVM_COALESCED_IDLE_SLEEP_NS);
    }
    if (!prev_sleep_ns) {
        return MIN(KVM_COALESCED_MIN_SLEEP_NS, max_sleep_ns);
    }
    return MIN(prev_sleep_ns * 2, max_sleep_ns);
}
