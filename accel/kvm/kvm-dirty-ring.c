/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM dirty ring's pure logic, unit-tested against a fake ring
 * (tests/unit/test-kvm-dirty-ring.c); kvm-memory.c maps the rings and
 * marks the pages.
 *
 * KVM publishes an entry by writing its slot and offset, then setting
 * KVM_DIRTY_GFN_F_DIRTY (release); we take entries in order from where
 * we stopped, and hand each back by setting KVM_DIRTY_GFN_F_RESET.  It
 * is free for KVM again only after KVM_RESET_DIRTY_RINGS, so a ring we
 * have harvested but not yet reset holds no entry for us to see twice.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "qapi/error.h"

bool kvm_dirty_ring_check_size(uint32_t entries, size_t page_size,
                               Error **errp)
{
    size_t min = page_size / sizeof(struct kvm_dirty_gfn);

    if (!entries) {
        return true;
    }
    if (entries & (entries - 1)) {
        error_setg(errp, "dirty-ring-size=%u: must be a power of two "
                   "(4096 is usual; 0 keeps the dirty bitmap)", entries);
        return false;
    }
    if (entries < min) {
        error_setg(errp, "dirty-ring-size=%u: at least %zu entries (one "
                   "page) per vCPU", entries, min);
        return false;
    }
    return true;
}

uint32_t kvm_dirty_ring_harvest(struct kvm_dirty_gfn *gfns, uint32_t entries,
                                uint32_t *fetch, KVMDirtyMark mark,
                                void *opaque)
{
    uint32_t n = 0;

    /* At most one lap: a ring KVM keeps filling cannot hold us here. */
    while (n < entries) {
        struct kvm_dirty_gfn *e = &gfns[*fetch & (entries - 1)];
        uint32_t flags = __atomic_load_n(&e->flags, __ATOMIC_ACQUIRE);

        if (!(flags & KVM_DIRTY_GFN_F_DIRTY)) {
            break;
        }
        mark(opaque, e->slot, e->offset);
        __atomic_store_n(&e->flags, KVM_DIRTY_GFN_F_RESET, __ATOMIC_RELEASE);
        (*fetch)++;
        n++;
    }
    return n;
}
