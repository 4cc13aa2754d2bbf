/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A device's view of guest RAM for code that runs without the BQL (the
 * virtio I/O thread) and for vhost's memory table.
 *
 * A GuestMemMap is an immutable, sorted table of the RAM ranges of one
 * address space (a PCI function's bus-master space), each with the host
 * address that backs it.  The owner rebuilds it under the BQL when the
 * topology changes and publishes it; readers take a reference for the
 * duration of one batch of work, so a table never changes under them.
 * Anything that is not RAM (MMIO, holes, RAM-device BARs) is absent: a
 * descriptor that points there is a guest error, not an access.
 */
#ifndef HW_VIRTIO_GUEST_MEM_H
#define HW_VIRTIO_GUEST_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <glib.h>
#include "qemu/typedefs.h"

typedef struct GuestMemRange {
    uint64_t gpa;
    uint64_t size;
    uint8_t *hva;
} GuestMemRange;

typedef struct GuestMemMap {
    gint refcount;
    unsigned nr;
    GuestMemRange ranges[];
} GuestMemMap;

/* A table of nr ranges (sorted by gpa, non-overlapping), refcount 1. */
GuestMemMap *guest_mem_map_new(const GuestMemRange *ranges, unsigned nr);
GuestMemMap *guest_mem_map_ref(GuestMemMap *map);
void guest_mem_map_unref(GuestMemMap *map);
/* The RAM ranges of as's current flat view. BQL held. */
GuestMemMap *guest_mem_map_from_as(AddressSpace *as);

/*
 * Host address of [gpa, gpa + len) if it lies inside one range, else NULL
 * (len 0 is allowed and only checks gpa).  Never overflows.
 */
void *guest_mem_translate(const GuestMemMap *map, uint64_t gpa, uint64_t len);
/*
 * Host address of gpa and, in *contig, how many bytes from there on are
 * backed contiguously (at most len); NULL if gpa is not RAM.
 */
void *guest_mem_translate_part(const GuestMemMap *map, uint64_t gpa,
                               uint64_t len, uint64_t *contig);

/*
 * A GuestMemMap that follows an address space: a memory listener
 * rebuilds it on each topology commit.  get() may be called from any
 * thread and returns a reference (NULL before init).
 */
typedef struct GuestMemTracker GuestMemTracker;
GuestMemTracker *guest_mem_tracker_new(AddressSpace *as);
void guest_mem_tracker_free(GuestMemTracker *t);
GuestMemMap *guest_mem_tracker_get(GuestMemTracker *t);
/* Called (BQL held) after each rebuild; vhost refreshes its table. */
void guest_mem_tracker_set_notify(GuestMemTracker *t,
                                  void (*fn)(void *opaque), void *opaque);

#endif
