/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memslot planning: which page-aligned part of a RAM section KVM can map.
 * Pure, so the unit tests cover every alignment case without /dev/kvm.
 */
#include "qemu/osdep.h"
#include "accel/kvm/kvm-internal.h"

KVMSlotPlan kvm_plan_slot(uint64_t gpa, uint64_t size, uint64_t hva,
                          uint64_t page_size)
{
    KVMSlotPlan plan = { .mapped = false, .tail = 0 };
    uint64_t mask = page_size - 1;
    uint64_t start, end;

    plan.head = size;
    /*
     * KVM maps guest page N onto one host page, so the guest and host
     * addresses must have the same offset within a page.
     */
    if (!size || !page_size || (gpa & mask) != (hva & mask) ||
        gpa + size < gpa) {
        return plan;
    }
    start = (gpa + mask) & ~mask;
    if (start < gpa) {          /* rounding up wrapped past 2^64 */
        return plan;
    }
    end = (gpa + size) & ~mask;
    if (end <= start) {
        return plan;
    }
    plan.mapped = true;
    plan.gpa = start;
    plan.size = end - start;
    plan.hva = hva + (start - gpa);
    plan.head = start - gpa;
    plan.tail = gpa + size - end;
    return plan;
}
