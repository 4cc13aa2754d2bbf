/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest RAM tables for the virtio I/O thread and vhost (guest-mem.h).
 */
#include "qemu/osdep.h"
#include "system/memory.h"
#include "hw/virtio/guest-mem.h"

GuestMemMap *guest_mem_map_new(const GuestMemRange *ranges, unsigned nr)
{
    GuestMemMap *map = g_malloc0(sizeof(*map) + nr * sizeof(map->ranges[0]));

    map->refcount = 1;
    map->nr = nr;
    if (nr) {
        memcpy(map->ranges, ranges, nr * sizeof(ranges[0]));
    }
    return map;
}

GuestMemMap *guest_mem_map_ref(GuestMemMap *map)
{
    g_atomic_int_inc(&map->refcount);
    return map;
}

void guest_mem_map_unref(GuestMemMap *map)
{
    if (map && g_atomic_int_dec_and_test(&map->refcount)) {
        g_free(map);
    }
}

static bool guest_mem_collect(const FlatRange *fr, void *opaque)
{
    GArray *arr = opaque;
    GuestMemRange r;
    uint8_t *base;

    if (!memory_region_is_ram(fr->mr) ||
        memory_region_is_ram_device(fr->mr)) {
        return false;
    }
    base = memory_region_get_ram_ptr(fr->mr);
    if (!base) {
        return false;
    }
    r.gpa = fr->addr;
    r.size = fr->size;
    r.hva = base + fr->offset_in_region;
    g_array_append_val(arr, r);
    return false;
}

GuestMemMap *guest_mem_map_from_as(AddressSpace *as)
{
    g_autoptr(GArray) arr = g_array_new(FALSE, FALSE, sizeof(GuestMemRange));

    flatview_for_each_range(address_space_get_flatview(as),
                            guest_mem_collect, arr);
    return guest_mem_map_new((GuestMemRange *)arr->data, arr->len);
}

void *guest_mem_translate_part(const GuestMemMap *map, uint64_t gpa,
                               uint64_t len, uint64_t *contig)
{
    unsigned lo = 0, hi;

    if (!map) {
        return NULL;
    }
    hi = map->nr;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        const GuestMemRange *r = &map->ranges[mid];

        if (gpa < r->gpa) {
            hi = mid;
        } else if (gpa - r->gpa >= r->size) {
            lo = mid + 1;
        } else {
            *contig = MIN(len, r->size - (gpa - r->gpa));
            return r->hva + (gpa - r->gpa);
        }
    }
    return NULL;
}

void *guest_mem_translate(const GuestMemMap *map, uint64_t gpa, uint64_t len)
{
    uint64_t contig = 0;
    void *p = guest_mem_translate_part(map, gpa, len, &contig);

    return p && contig == len ? p : NULL;
}

struct GuestMemTracker {
    MemoryListener listener;
    GMutex lock;
    GuestMemMap *map;           /* lock */
    AddressSpace *as;
    void (*notify)(void *opaque);
    void *notify_opaque;
};

static void guest_mem_tracker_commit(MemoryListener *listener)
{
    GuestMemTracker *t = container_of(listener, GuestMemTracker, listener);
    GuestMemMap *fresh = guest_mem_map_from_as(t->as);
    GuestMemMap *old;

    g_mutex_lock(&t->lock);
    old = t->map;
    t->map = fresh;
    g_mutex_unlock(&t->lock);
    guest_mem_map_unref(old);
    if (t->notify) {
        t->notify(t->notify_opaque);
    }
}

GuestMemTracker *guest_mem_tracker_new(AddressSpace *as)
{
    GuestMemTracker *t = g_new0(GuestMemTracker, 1);

    g_mutex_init(&t->lock);
    t->as = as;
    t->map = guest_mem_map_from_as(as);
    t->listener.commit = guest_mem_tracker_commit;
    t->listener.name = "virtio-guest-mem";
    t->listener.priority = 10;
    memory_listener_register(&t->listener, as);
    return t;
}

void guest_mem_tracker_free(GuestMemTracker *t)
{
    if (!t) {
        return;
    }
    memory_listener_unregister(&t->listener);
    guest_mem_map_unref(t->map);
    g_mutex_clear(&t->lock);
    g_free(t);
}

GuestMemMap *guest_mem_tracker_get(GuestMemTracker *t)
{
    GuestMemMap *map;

    g_mutex_lock(&t->lock);
    map = t->map ? guest_mem_map_ref(t->map) : NULL;
    g_mutex_unlock(&t->lock);
    return map;
}

void guest_mem_tracker_set_notify(GuestMemTracker *t,
                                  void (*fn)(void *opaque), void *opaque)
{
    t->notify = fn;
    t->notify_opaque = opaque;
}
