/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memslots from the memory API: a MemoryListener on the system address
 * space turns each RAM and RAM-device section into a KVM memslot (its
 * host-page-aligned part, see kvm_plan_slot()).  Whatever is not a memslot
 * exits to userspace and goes through FlatView dispatch, which for a
 * RAM-device piece is a load/store on the mmap pointer.
 *
 * Topology changes arrive as region_del/region_add pairs under the BQL.
 * A vCPU touching a range between the two exits to userspace, waits for
 * the BQL and is dispatched against the new view, so no vCPU has to be
 * stopped while slots change.
 *
 * Dirty logging (migration): while the memory API's global log is on,
 * every writable slot carries KVM_MEM_LOG_DIRTY_PAGES, and each sync
 * folds KVM_GET_DIRTY_LOG (which also clears and re-protects) into the
 * RAM regions' bitmaps.  A slot added while logging starts logged.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

typedef struct KVMSlot {
    bool used;
    uint64_t gpa;
    uint64_t size;
    uint64_t hva;
    bool readonly;
} KVMSlot;

static KVMSlot *kvm_slots;
static int kvm_nr_slots;
static bool kvm_dirty_log;
static MemoryListener kvm_memory_listener;

static bool kvm_set_slot(int id, const KVMSlot *slot, uint64_t size)
{
    struct kvm_userspace_memory_region region = {
        .slot = id,
        .flags = slot->readonly ? KVM_MEM_READONLY :
                 kvm_dirty_log && size ? KVM_MEM_LOG_DIRTY_PAGES : 0,
        .guest_phys_addr = slot->gpa,
        .memory_size = size,
        .userspace_addr = slot->hva,
    };

    if (ioctl(kvm_state->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
        error_report("kvm: cannot %s memslot %d at 0x%" PRIx64 " size 0x%"
                     PRIx64 ": %s", size ? "set" : "remove", id, slot->gpa,
                     slot->size, strerror(errno));
        return false;
    }
    return true;
}

static KVMSlotPlan kvm_section_plan(MemoryRegionSection *section)
{
    uint64_t hva = (uintptr_t)memory_region_get_ram_ptr(section->mr) +
                   section->offset_within_region;

    return kvm_plan_slot(section->offset_within_address_space, section->size,
                         hva, getpagesize());
}

static void kvm_region_add(MemoryListener *listener,
                           MemoryRegionSection *section)
{
    KVMSlotPlan plan;
    KVMSlot *slot = NULL;
    int id;

    if (!memory_region_is_ram(section->mr) ||
        !memory_region_get_ram_ptr(section->mr)) {
        return;
    }
    plan = kvm_section_plan(section);
    trace_kvm_slot_plan(memory_region_name(section->mr),
                        section->offset_within_address_space, section->size,
                        plan.mapped, plan.head, plan.tail);
    if (!plan.mapped) {
        return;
    }
    for (id = 0; id < kvm_nr_slots; id++) {
        if (!kvm_slots[id].used) {
            slot = &kvm_slots[id];
            break;
        }
    }
    if (!slot) {
        /* Still correct, only slow: the range is dispatched in userspace. */
        warn_report("kvm: out of memslots, %s at 0x%" PRIx64 " stays trapped",
                    memory_region_name(section->mr), plan.gpa);
        return;
    }
    *slot = (KVMSlot) {
        .gpa = plan.gpa,
        .size = plan.size,
        .hva = plan.hva,
        .readonly = section->readonly || memory_region_is_readonly(section->mr),
    };
    if (kvm_set_slot(id, slot, slot->size)) {
        slot->used = true;
        trace_kvm_slot_add(id, slot->gpa, slot->size, slot->hva);
    }
}

static void kvm_region_del(MemoryListener *listener,
                           MemoryRegionSection *section)
{
    KVMSlotPlan plan;

    if (!memory_region_is_ram(section->mr) ||
        !memory_region_get_ram_ptr(section->mr)) {
        return;
    }
    plan = kvm_section_plan(section);
    if (!plan.mapped) {
        return;
    }
    for (int id = 0; id < kvm_nr_slots; id++) {
        KVMSlot *slot = &kvm_slots[id];

        if (slot->used && slot->gpa == plan.gpa && slot->size == plan.size) {
            kvm_set_slot(id, slot, 0);
            slot->used = false;
            trace_kvm_slot_del(id, slot->gpa, slot->size);
            return;
        }
    }
}

/* Re-sets every writable slot with the current logging flag. */
static void kvm_slots_update_log(void)
{
    for (int id = 0; id < kvm_nr_slots; id++) {
        KVMSlot *slot = &kvm_slots[id];

        if (slot->used && !slot->readonly) {
            kvm_set_slot(id, slot, slot->size);
        }
    }
}

static void kvm_log_global_start(MemoryListener *listener)
{
    kvm_dirty_log = true;
    kvm_slots_update_log();
    trace_kvm_dirty_log(true);
}

static void kvm_log_global_stop(MemoryListener *listener)
{
    kvm_dirty_log = false;
    kvm_slots_update_log();
    trace_kvm_dirty_log(false);
}

static void kvm_log_sync(MemoryListener *listener)
{
    uint64_t page = getpagesize();

    for (int id = 0; kvm_dirty_log && id < kvm_nr_slots; id++) {
        KVMSlot *slot = &kvm_slots[id];
        uint64_t npages = slot->size / page;
        g_autofree unsigned long *bm = NULL;
        struct kvm_dirty_log log = { .slot = id };

        if (!slot->used || slot->readonly || !npages) {
            continue;
        }
        bm = g_new0(unsigned long, DIV_ROUND_UP(npages, 64) * 64 /
                                   (8 * sizeof(unsigned long)));
        log.dirty_bitmap = bm;
        if (ioctl(kvm_state->vm_fd, KVM_GET_DIRTY_LOG, &log) < 0) {
            /* Be safe: everything in the slot counts as written. */
            warn_report_once("kvm: KVM_GET_DIRTY_LOG on slot %d: %s", id,
                             strerror(errno));
            memset(bm, 0xff, DIV_ROUND_UP(npages, 8));
        }
        memory_ram_mark_dirty_bitmap((void *)(uintptr_t)slot->hva, bm,
                                     npages);
    }
}

bool kvm_memory_init(KVMState *s, Error **errp)
{
    int n = ioctl(s->fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_MEMSLOTS);

    kvm_nr_slots = n > 0 ? n : 32;
    kvm_slots = g_new0(KVMSlot, kvm_nr_slots);
    kvm_memory_listener = (MemoryListener) {
        .region_add = kvm_region_add,
        .region_del = kvm_region_del,
        .log_global_start = kvm_log_global_start,
        .log_global_stop = kvm_log_global_stop,
        .log_sync = kvm_log_sync,
        .priority = 10,
        .name = "kvm-memory",
    };
    memory_listener_register(&kvm_memory_listener, &address_space_memory);
    return true;
}

void kvm_memory_cleanup(KVMState *s)
{
    if (kvm_slots) {
        memory_listener_unregister(&kvm_memory_listener);
        g_clear_pointer(&kvm_slots, g_free);
        kvm_nr_slots = 0;
    }
}
