/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory API: a tree of MemoryRegions rendered into flat views.
 *
 * Kinds of region:
 *   container   - holds subregions only; its holes are unassigned
 *   I/O         - read/write callbacks (MemoryRegionOps)
 *   RAM         - host memory; memory_region_init_ram() backs it with a
 *                 memfd so that it can be shared (vhost, vfio-user DMA_MAP)
 *   RAM-device  - an mmap of device memory (e.g. a vfio BAR); dispatched
 *                 by load/store of the exact access width, never memcpy
 *   alias       - a window onto (part of) another region
 *
 * An AddressSpace renders its root region into a FlatView: a sorted array
 * of non-overlapping FlatRanges.  Every topology change (add/del subregion,
 * enable, address, size, alias offset, readonly) is part of a transaction;
 * outside memory_region_transaction_begin/commit each change commits on its
 * own.  On commit the old and new views are diffed and MemoryListeners get
 * region_del/region_add only for ranges that changed.
 *
 * Concurrency: callers hold the big lock; there is no internal locking.
 * MemoryRegions are embedded in device structs and are not QOM objects;
 * "owner" is kept for naming and debugging only.
 */
#ifndef SYSTEM_MEMORY_H
#define SYSTEM_MEMORY_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/*
 * Result of a memory transaction.  A bit mask: a multi-piece access ORs
 * the results of its pieces.
 */
typedef uint32_t MemTxResult;
#define MEMTX_OK            0
#define MEMTX_ERROR         (1U << 0)   /* device reported an error */
#define MEMTX_DECODE_ERROR  (1U << 1)   /* nothing there / invalid access */

/*
 * Byte order of the values a device's callbacks exchange.  A value of size
 * N at address A corresponds to the N guest bytes at A..A+N-1 read in this
 * byte order.  NATIVE means the target's byte order: little-endian unless
 * memory_set_target_big_endian(true) was called (the ppc64 machine does).
 */
enum device_endian {
    DEVICE_NATIVE_ENDIAN,
    DEVICE_BIG_ENDIAN,
    DEVICE_LITTLE_ENDIAN,
};

void memory_set_target_big_endian(bool big_endian);
bool memory_target_is_big_endian(void);

typedef struct MemoryRegionOps {
    /* addr is relative to the region; size is 1, 2, 4 or 8. */
    uint64_t (*read)(void *opaque, hwaddr addr, unsigned size);
    void (*write)(void *opaque, hwaddr addr, uint64_t data, unsigned size);
    enum device_endian endianness;
    /*
     * What the guest may do.  An access outside these rules is a guest
     * error: reads return all ones, writes are dropped, the result is
     * MEMTX_DECODE_ERROR and qemu_log_guest_error() names region and offset.
     * Unset (0) sizes default to min 1, max 4.  A missing read (write)
     * callback makes every read (write) invalid.
     *
     * Re-entrancy: while a callback of a region runs, an access that would
     * reach any region with the same owner (the same device) on the same
     * thread, e.g. its own DMA or MSI aimed at its own registers, is a guest
     * error: it is logged and dropped (reads return all ones, the result is
     * MEMTX_ERROR).  Devices get this for free and need not guard
     * themselves (see docs/devel/trust-boundaries.rst).
     */
    struct {
        unsigned min_access_size;
        unsigned max_access_size;
        bool unaligned;
        /* Optional; false rejects the access. */
        bool (*accepts)(void *opaque, hwaddr addr, unsigned size,
                        bool is_write);
    } valid;
    /*
     * What the callbacks implement.  Unset (0) sizes default to the valid
     * ones.  Larger accesses are split into impl.max pieces, smaller ones
     * widened to impl.min (writes by read-modify-write).  With
     * impl.unaligned false (the default) the callbacks only ever see
     * naturally aligned accesses.
     */
    struct {
        unsigned min_access_size;
        unsigned max_access_size;
        bool unaligned;
    } impl;
} MemoryRegionOps;

typedef enum MemoryRegionKind {
    MEMORY_REGION_CONTAINER,
    MEMORY_REGION_IO,
    MEMORY_REGION_RAM,
    MEMORY_REGION_RAM_DEVICE,
    MEMORY_REGION_ALIAS,
} MemoryRegionKind;

/* All fields are private: use the functions below. */
struct MemoryRegion {
    MemoryRegionKind kind;
    Object *owner;
    char *name;
    uint64_t size;
    const MemoryRegionOps *ops;
    void *opaque;

    /* Placement inside the container. */
    MemoryRegion *container;
    hwaddr addr;
    int priority;
    bool enabled;
    bool readonly;
    /* Siblings, highest priority first; equal priority: newest first. */
    MemoryRegion *subregions;
    MemoryRegion *next_sibling;

    MemoryRegion *alias;
    hwaddr alias_offset;

    void *ram_ptr;
    uint64_t ram_map_size;      /* bytes mmapped by us, 0 if not ours */
    int ram_fd;                 /* memfd, -1 if none */
    uint64_t ram_fd_offset;

    uint64_t reads;
    uint64_t writes;
    uint64_t coalesced_writes;  /* replayed from a coalesced MMIO ring */
    GArray *coalesced;          /* CoalescedRange, offsets in the region */
    /* Dirty log (migration): one bit per host page while logging is on. */
    unsigned long *dirty;
    uint64_t dirty_pages;
};

/* One piece of a FlatView: [addr, addr + size) shows mr at offset_in_region. */
typedef struct FlatRange {
    hwaddr addr;
    uint64_t size;
    MemoryRegion *mr;
    hwaddr offset_in_region;
    bool readonly;
} FlatRange;

/* What listeners are told about: a FlatRange plus its address space. */
struct MemoryRegionSection {
    MemoryRegion *mr;
    AddressSpace *address_space;
    hwaddr offset_within_region;
    uint64_t size;
    hwaddr offset_within_address_space;
    bool readonly;
};

/*
 * Callbacks on topology changes of one address space.  On each commit that
 * had pending changes: begin (all listeners, ascending priority), region_del
 * for removed ranges (descending priority), region_add for new ranges
 * (ascending), region_nop for unchanged ones (ascending, optional), commit
 * (ascending).  All callbacks are optional.
 */
struct MemoryListener {
    void (*begin)(MemoryListener *listener);
    void (*commit)(MemoryListener *listener);
    void (*region_add)(MemoryListener *listener, MemoryRegionSection *section);
    void (*region_del)(MemoryListener *listener, MemoryRegionSection *section);
    void (*region_nop)(MemoryListener *listener, MemoryRegionSection *section);
    /*
     * Coalesced MMIO: [addr, addr + len) of the address space, inside
     * section, may have its writes completed by the accelerator and
     * replayed later, in order.  Announced right after region_add of the
     * section (and when the region gains a range), withdrawn right before
     * region_del (and when the region's ranges are cleared).
     */
    void (*coalesced_io_add)(MemoryListener *listener,
                             MemoryRegionSection *section, hwaddr addr,
                             hwaddr len);
    void (*coalesced_io_del)(MemoryListener *listener,
                             MemoryRegionSection *section, hwaddr addr,
                             hwaddr len);
    /*
     * Dirty logging for migration: start/stop as the migration begins and
     * ends; log_sync moves what the accelerator saw written (KVM's dirty
     * log) into the regions' bitmaps (memory_ram_mark_dirty_bitmap()).
     */
    void (*log_global_start)(MemoryListener *listener);
    void (*log_global_stop)(MemoryListener *listener);
    void (*log_sync)(MemoryListener *listener);
    unsigned priority;
    const char *name;

    /* private */
    AddressSpace *address_space;
    MemoryListener *next;
};

/* All fields are private. */
struct AddressSpace {
    char *name;
    MemoryRegion *root;
    FlatView *current_map;
    MemoryListener *listeners;  /* ascending priority */
    AddressSpace *next;
};

/* ---- Dirty logging (migration) ---------------------------------------- */

/*
 * Every region made by memory_region_init_ram() is guest RAM that
 * migration copies, named by its owner and name.  While the global log is
 * on, each such region has a bitmap of written host pages: set by writes
 * through the memory API (qtest, device DMA via address_space_*), by
 * devices that write through host pointers (memory_ram_mark_dirty_hva()),
 * and by the accelerator's own log at each sync (KVM_GET_DIRTY_LOG).
 */
typedef void (*MemoryRamFunc)(MemoryRegion *mr, void *opaque);
void memory_foreach_ram(MemoryRamFunc fn, void *opaque);
/* Turns logging on (every page dirty) or off, in every listener. */
void memory_global_dirty_log_start(void);
void memory_global_dirty_log_stop(void);
bool memory_global_dirty_log_active(void);
/* Asks the listeners (KVM) to fold their logs into the bitmaps. */
void memory_global_dirty_log_sync(void);
/* Thread-safe: marks [offset, offset + len) of mr written. */
void memory_region_set_dirty(MemoryRegion *mr, hwaddr offset, uint64_t len);
/* Thread-safe: marks whatever RAM region holds [hva, hva + len). */
void memory_ram_mark_dirty_hva(const void *hva, size_t len);
/* Merges a bitmap of npages host pages starting at hva (a KVM slot's). */
void memory_ram_mark_dirty_bitmap(const void *hva, const unsigned long *bm,
                                  uint64_t npages);
/* Takes and clears the dirty bit of page @page of mr. */
bool memory_region_test_and_clear_dirty_page(MemoryRegion *mr,
                                             uint64_t page);
/* Number of dirty pages of mr (a snapshot). */
uint64_t memory_region_dirty_count(MemoryRegion *mr);

/* ---- Region life cycle ------------------------------------------------ */

/*
 * A pure container of size bytes.  UINT64_MAX stands for the whole 64-bit
 * space; a view ends at 2^64 - 1, so the very last byte is never mapped.
 */
void memory_region_init(MemoryRegion *mr, Object *owner, const char *name,
                        uint64_t size);
void memory_region_init_io(MemoryRegion *mr, Object *owner,
                           const MemoryRegionOps *ops, void *opaque,
                           const char *name, uint64_t size);
/*
 * Guest RAM backed by a memfd (memfd_create + ftruncate + mmap MAP_SHARED),
 * zero-filled.  Fails (false, errp set) if the host cannot provide it.
 */
bool memory_region_init_ram(MemoryRegion *mr, Object *owner, const char *name,
                            uint64_t size, Error **errp);
/*
 * Guest RAM mapped from @fd (which it takes, even on failure): shared
 * (MAP_SHARED, and the fd is kept for others to map) or private.  The
 * mapping is @size rounded up to @align (a huge page size, or 0).
 */
bool memory_region_init_ram_from_fd(MemoryRegion *mr, Object *owner,
                                    const char *name, uint64_t size,
                                    uint64_t align, int fd, bool shared,
                                    Error **errp);
/* RAM at host memory the caller owns and keeps alive (no fd). */
void memory_region_init_ram_ptr(MemoryRegion *mr, Object *owner,
                                const char *name, uint64_t size, void *ptr);
/* Device memory mmapped by the caller (who also unmaps it). */
void memory_region_init_ram_device_ptr(MemoryRegion *mr, Object *owner,
                                       const char *name, uint64_t size,
                                       void *ptr);
/* Shows orig[offset, offset + size). */
void memory_region_init_alias(MemoryRegion *mr, Object *owner,
                              const char *name, MemoryRegion *orig,
                              hwaddr offset, uint64_t size);
/*
 * Releases the name and, for memory_region_init_ram, the mapping and fd.
 * A region still inside a container is removed from it first (committing);
 * its own subregions are detached.  Aliases of mr must be gone already.
 * Finalizing a zero-filled or already finalized region is a no-op.
 */
void memory_region_finalize(MemoryRegion *mr);

/*
 * Discarding guest RAM (a balloon giving pages back to the host) is
 * unsafe while a device has it pinned for DMA (kernel VFIO): each such
 * device disables it while it exists.  Counted; BQL.
 */
void ram_block_discard_disable(bool disable);
bool ram_block_discard_is_disabled(void);

/* ---- Topology --------------------------------------------------------- */

/* Priority 0.  Where siblings of equal priority overlap, the newest wins. */
void memory_region_add_subregion(MemoryRegion *mr, hwaddr offset,
                                 MemoryRegion *subregion);
/* Higher priority wins where siblings overlap; equal: the newest wins. */
void memory_region_add_subregion_overlap(MemoryRegion *mr, hwaddr offset,
                                         MemoryRegion *subregion,
                                         int priority);
void memory_region_del_subregion(MemoryRegion *mr, MemoryRegion *subregion);
/* A disabled region vanishes from rendering, exposing what is below it. */
void memory_region_set_enabled(MemoryRegion *mr, bool enabled);
/* Moves mr inside its container. */
void memory_region_set_address(MemoryRegion *mr, hwaddr addr);
void memory_region_set_alias_offset(MemoryRegion *mr, hwaddr offset);
void memory_region_set_size(MemoryRegion *mr, uint64_t size);
/* Writes to a readonly range are dropped (MEMTX_OK, as for a ROM). */
void memory_region_set_readonly(MemoryRegion *mr, bool readonly);

/* Nestable; the outermost commit renders and notifies listeners. */
void memory_region_transaction_begin(void);
void memory_region_transaction_commit(void);

/* ---- Accessors -------------------------------------------------------- */

uint64_t memory_region_size(MemoryRegion *mr);
const char *memory_region_name(const MemoryRegion *mr);
Object *memory_region_owner(MemoryRegion *mr);
/* True for RAM and RAM-device regions (both can become memslots). */
bool memory_region_is_ram(MemoryRegion *mr);
bool memory_region_is_ram_device(MemoryRegion *mr);
bool memory_region_is_alias(MemoryRegion *mr);
bool memory_region_is_enabled(MemoryRegion *mr);
bool memory_region_is_readonly(MemoryRegion *mr);
hwaddr memory_region_get_address(MemoryRegion *mr);
MemoryRegion *memory_region_get_container(MemoryRegion *mr);
/* Host pointer of a RAM or RAM-device region (offset 0), else NULL. */
void *memory_region_get_ram_ptr(MemoryRegion *mr);
/* The memfd behind a RAM region, -1 if none; and mr's offset within it. */
int memory_region_get_fd(MemoryRegion *mr);
uint64_t memory_region_get_fd_offset(MemoryRegion *mr);

/*
 * Trap telemetry.  Each address_space_* access (or memory_region_dispatch_*
 * call) that reaches an I/O region's callback, or is dispatched to a
 * RAM-device region in userspace, counts once per region segment it
 * covers, however many pieces it was split into.  Invalid accesses (never
 * reaching a callback) are not counted.
 */
void memory_region_get_access_counts(MemoryRegion *mr, uint64_t *reads,
                                     uint64_t *writes);
void memory_region_reset_access_counts(MemoryRegion *mr);

/*
 * One access straight to a region (no address space), with the validity
 * rules applied.  *data is the value as the device sees it (device byte
 * order); size is 1, 2, 4 or 8.  I/O and RAM-device regions only.
 */
MemTxResult memory_region_dispatch_read(MemoryRegion *mr, hwaddr addr,
                                        uint64_t *data, unsigned size);
MemTxResult memory_region_dispatch_write(MemoryRegion *mr, hwaddr addr,
                                         uint64_t data, unsigned size);

/* ---- Address spaces and flat views ------------------------------------ */

void address_space_init(AddressSpace *as, MemoryRegion *root,
                        const char *name);
/* Unregisters remaining listeners (with region_del) and frees the view. */
void address_space_destroy(AddressSpace *as);
const char *address_space_name(AddressSpace *as);
MemoryRegion *address_space_root(AddressSpace *as);

/* The current view: valid until the next topology commit. */
FlatView *address_space_get_flatview(AddressSpace *as);
unsigned flatview_nr_ranges(FlatView *fv);
const FlatRange *flatview_get_range(FlatView *fv, unsigned index);
/* Calls cb for each range in address order; cb returning true stops. */
typedef bool (*FlatViewRangeCb)(const FlatRange *range, void *opaque);
void flatview_for_each_range(FlatView *fv, FlatViewRangeCb cb, void *opaque);

/* The range covering addr, as a section; false if addr is unassigned. */
bool address_space_find_section(AddressSpace *as, hwaddr addr,
                                MemoryRegionSection *section);

/* Replays region_add for every current range. */
void memory_listener_register(MemoryListener *listener, AddressSpace *as);
/* Calls region_del for every current range. */
void memory_listener_unregister(MemoryListener *listener);

/* ---- Coalesced MMIO --------------------------------------------------- */

/*
 * Marks [offset, offset + size) of an I/O region as coalesced: an
 * accelerator that can (KVM_REGISTER_COALESCED_MMIO) completes guest
 * writes there without an exit and replays them, in order and through the
 * normal dispatch, before it handles any exit and from a drainer thread.
 * Reads are never coalesced: they exit, and the ring is drained first, so
 * a read sees every write before it.  Only for registers whose writes
 * have no effect that must be seen before the vCPU runs on (doorbells,
 * not interrupt acknowledges).  Without such an accelerator (qtest) the
 * marking changes nothing.
 */
void memory_region_add_coalescing(MemoryRegion *mr, hwaddr offset,
                                  uint64_t size);
/* Withdraws every range of mr (the accelerator drains its ring first). */
void memory_region_clear_coalescing(MemoryRegion *mr);
bool memory_region_has_coalescing(MemoryRegion *mr);
/* Writes into mr that were replayed from a coalesced ring. */
uint64_t memory_region_get_coalesced_writes(MemoryRegion *mr);
/*
 * Set by an accelerator around the replay of coalesced writes: they are
 * counted apart from trapped accesses (they did not exit).  Per thread.
 */
void memory_set_replaying_coalesced(bool on);
bool memory_replaying_coalesced(void);

/* ---- Dispatch --------------------------------------------------------- */

/*
 * Any length and alignment; split across ranges.  RAM is memcpy'd; I/O
 * regions get power-of-two pieces no larger than valid.max_access_size,
 * naturally aligned unless the region accepts unaligned accesses.
 * Unassigned bytes read as 0xff and drop writes (MEMTX_DECODE_ERROR).
 */
MemTxResult address_space_read(AddressSpace *as, hwaddr addr, void *buf,
                               hwaddr len);
MemTxResult address_space_write(AddressSpace *as, hwaddr addr,
                                const void *buf, hwaddr len);
MemTxResult address_space_rw(AddressSpace *as, hwaddr addr, void *buf,
                             hwaddr len, bool is_write);

/* Fixed-size helpers; result may be NULL.  _le/_be: byte order in memory. */
uint8_t address_space_ldub(AddressSpace *as, hwaddr addr, MemTxResult *result);
uint16_t address_space_lduw_le(AddressSpace *as, hwaddr addr,
                               MemTxResult *result);
uint32_t address_space_ldl_le(AddressSpace *as, hwaddr addr,
                              MemTxResult *result);
uint64_t address_space_ldq_le(AddressSpace *as, hwaddr addr,
                              MemTxResult *result);
uint16_t address_space_lduw_be(AddressSpace *as, hwaddr addr,
                               MemTxResult *result);
uint32_t address_space_ldl_be(AddressSpace *as, hwaddr addr,
                              MemTxResult *result);
uint64_t address_space_ldq_be(AddressSpace *as, hwaddr addr,
                              MemTxResult *result);
void address_space_stb(AddressSpace *as, hwaddr addr, uint8_t val,
                       MemTxResult *result);
void address_space_stw_le(AddressSpace *as, hwaddr addr, uint16_t val,
                          MemTxResult *result);
void address_space_stl_le(AddressSpace *as, hwaddr addr, uint32_t val,
                          MemTxResult *result);
void address_space_stq_le(AddressSpace *as, hwaddr addr, uint64_t val,
                          MemTxResult *result);
void address_space_stw_be(AddressSpace *as, hwaddr addr, uint16_t val,
                          MemTxResult *result);
void address_space_stl_be(AddressSpace *as, hwaddr addr, uint32_t val,
                          MemTxResult *result);
void address_space_stq_be(AddressSpace *as, hwaddr addr, uint64_t val,
                          MemTxResult *result);

#endif
