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
 *
 * With -accel kvm,dirty-ring-size=N (KVM_CAP_DIRTY_LOG_RING) KVM instead
 * appends each page a vCPU dirties to that vCPU's ring, a page of
 * struct kvm_dirty_gfn shared with us.  A sync walks every ring from
 * where it stopped last, marks the pages, hands the entries back
 * (KVM_DIRTY_GFN_F_RESET) and has KVM re-protect them
 * (KVM_RESET_DIRTY_RINGS); cost follows the pages written, not the
 * size of RAM.  A vCPU whose ring fills exits (KVM_EXIT_DIRTY_RING_FULL)
 * and collects them itself.  Both run under the BQL, so one collector
 * at a time; the vCPUs go on writing meanwhile, KVM publishing each
 * entry before its flag.  A page dirtied after the last walk but before
 * the vCPUs stopped is in a ring when the final sync walks it: vCPUs
 * leave the guest to stop, which flushes what the CPU buffered (PML).
 */
#include "qemu/osdep.h"
#include <sys/mman.h>
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
static KVMDirtyRingStats kvm_ring_stats;

/* Guest page of a ring entry's slot offset (x86: 4 KiB). */
#define KVM_RING_PAGE 4096ull

static void kvm_dirty_ring_collect_all(void);

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
            /* Its ring entries name the slot: mark them while it exists. */
            if (kvm_dirty_log && kvm_state->dirty_ring_size) {
                kvm_dirty_ring_collect_all();
            }
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

/* ---- dirty ring ------------------------------------------------------- */

bool kvm_dirty_ring_enable(KVMState *s, uint32_t entries, Error **errp)
{
    struct kvm_enable_cap cap = { .cap = KVM_CAP_DIRTY_LOG_RING_ACQ_REL };
    uint64_t bytes = (uint64_t)entries * sizeof(struct kvm_dirty_gfn);
    int max;

    /* The size itself passed kvm_dirty_ring_check_size() (check_props). */
    if (!entries) {
        return true;
    }
    max = ioctl(s->vm_fd, KVM_CHECK_EXTENSION, cap.cap);
    if (max <= 0) {
        cap.cap = KVM_CAP_DIRTY_LOG_RING;
        max = ioctl(s->vm_fd, KVM_CHECK_EXTENSION, cap.cap);
    }
    if (max <= 0) {
        error_setg(errp, "dirty-ring-size=%u: this host's KVM has no dirty "
                   "ring (KVM_CAP_DIRTY_LOG_RING); leave it at 0 for the "
                   "dirty bitmap", entries);
        return false;
    }
    if (bytes > (uint64_t)max) {
        error_setg(errp, "dirty-ring-size=%u: KVM allows at most %zu "
                   "entries per vCPU", entries,
                   (size_t)max / sizeof(struct kvm_dirty_gfn));
        return false;
    }
    cap.args[0] = bytes;
    if (ioctl(s->vm_fd, KVM_ENABLE_CAP, &cap) < 0) {
        error_setg_errno(errp, errno, "dirty-ring-size=%u: KVM_ENABLE_CAP "
                         "of the dirty ring", entries);
        return false;
    }
    s->dirty_ring_size = entries;
    trace_kvm_dirty_ring(entries, cap.cap);
    return true;
}

bool kvm_dirty_ring_map_vcpu(KVMState *s, KVMVCPU *cpu, Error **errp)
{
    size_t bytes = (size_t)s->dirty_ring_size * sizeof(struct kvm_dirty_gfn);
    void *p;

    if (!s->dirty_ring_size) {
        return true;
    }
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, cpu->fd,
             (off_t)getpagesize() * KVM_DIRTY_LOG_PAGE_OFFSET);
    if (p == MAP_FAILED) {
        error_setg_errno(errp, errno, "vCPU %d: mmap of the dirty ring",
                         cpu->index);
        return false;
    }
    cpu->dirty_gfns = p;
    cpu->dirty_fetch = 0;
    return true;
}

void kvm_dirty_ring_unmap_vcpu(KVMState *s, KVMVCPU *cpu)
{
    if (cpu->dirty_gfns) {
        munmap(cpu->dirty_gfns,
               (size_t)s->dirty_ring_size * sizeof(struct kvm_dirty_gfn));
        cpu->dirty_gfns = NULL;
    }
}

/* Marks a ring entry's page; entries of slots since removed are dropped. */
static void kvm_dirty_ring_mark(void *opaque, uint32_t slot_id,
                                uint64_t offset)
{
    unsigned as_id = slot_id >> 16, id = slot_id & 0xffff;
    KVMSlot *slot;

    if (as_id || id >= (unsigned)kvm_nr_slots) {
        return;
    }
    slot = &kvm_slots[id];
    if (!slot->used || offset >= slot->size / KVM_RING_PAGE) {
        return;
    }
    memory_ram_mark_dirty_hva((void *)(uintptr_t)(slot->hva +
                                                  offset * KVM_RING_PAGE),
                              KVM_RING_PAGE);
}

/* BQL held.  Every vCPU's ring, then the entries back to KVM. */
static void kvm_dirty_ring_collect_all(void)
{
    KVMState *s = kvm_state;
    uint64_t n = 0;

    for (unsigned i = 0; s && i < s->nr_vcpus; i++) {
        if (s->vcpus[i].dirty_gfns) {
            KVMVCPU *cpu = &s->vcpus[i];

            n += kvm_dirty_ring_harvest(cpu->dirty_gfns, s->dirty_ring_size,
                                        &cpu->dirty_fetch,
                                        kvm_dirty_ring_mark, NULL);
        }
    }
    kvm_ring_stats.pages += n;
    if (n) {
        if (ioctl(s->vm_fd, KVM_RESET_DIRTY_RINGS) < 0) {
            warn_report_once("kvm: KVM_RESET_DIRTY_RINGS: %s",
                             strerror(errno));
        }
        kvm_ring_stats.resets++;
    }
    trace_kvm_dirty_ring_collect(n);
}

void kvm_dirty_ring_full(KVMVCPU *cpu)
{
    kvm_ring_stats.full_exits++;
    trace_kvm_dirty_ring_full(cpu->index);
    kvm_dirty_ring_collect_all();
}

void kvm_dirty_ring_get_stats(KVMDirtyRingStats *st)
{
    *st = kvm_ring_stats;
}

static void kvm_log_sync(MemoryListener *listener)
{
    uint64_t page = getpagesize();

    if (kvm_state && kvm_state->dirty_ring_size) {
        if (kvm_dirty_log) {
            kvm_dirty_ring_collect_all();
        }
        return;
    }

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
