/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory API: region tree, flat views, listeners and dispatch.
 *
 * Rendering walks the tree from an address space's root; a region claims
 * only the parts of its window that nothing of higher precedence has
 * claimed yet (siblings are kept highest priority first, newest first among
 * equals, and a region's own subregions take precedence over the region).
 * The result is a sorted array of ranges, which dispatch binary-searches.
 */
#include "qemu/osdep.h"
#include "system/memory.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/ldst-volatile.h"
#include "trace.h"

__extension__ typedef __int128 Int128Raw;

/* The view covers [0, 2^64 - 1): sizes must fit a uint64_t. */
#define VIEW_END ((Int128Raw)UINT64_MAX)

struct FlatView {
    FlatRange *ranges;
    unsigned nr;
    unsigned alloc;
};

static bool target_big_endian;
static unsigned transaction_depth;
static bool topology_pending;
static AddressSpace *address_spaces;
static GPtrArray *ram_regions;      /* MemoryRegion * made by init_ram */
static bool dirty_log_on;
static GMutex ram_regions_lock;     /* ram_regions, for hva lookups */

void memory_set_target_big_endian(bool big_endian)
{
    target_big_endian = big_endian;
}

bool memory_target_is_big_endian(void)
{
    return target_big_endian;
}

/* ---- Region life cycle ------------------------------------------------ */

static void memory_region_init_common(MemoryRegion *mr, MemoryRegionKind kind,
                                      Object *owner, const char *name,
                                      uint64_t size)
{
    memset(mr, 0, sizeof(*mr));
    mr->kind = kind;
    mr->owner = owner;
    mr->name = g_strdup(name ? name : "anonymous");
    mr->size = size;
    mr->enabled = true;
    mr->ram_fd = -1;
}

void memory_region_init(MemoryRegion *mr, Object *owner, const char *name,
                        uint64_t size)
{
    memory_region_init_common(mr, MEMORY_REGION_CONTAINER, owner, name, size);
}

void memory_region_init_io(MemoryRegion *mr, Object *owner,
                           const MemoryRegionOps *ops, void *opaque,
                           const char *name, uint64_t size)
{
    memory_region_init_common(mr, MEMORY_REGION_IO, owner, name, size);
    mr->ops = ops;
    mr->opaque = opaque;
}

bool memory_region_init_ram(MemoryRegion *mr, Object *owner, const char *name,
                            uint64_t size, Error **errp)
{
    uint64_t page = sysconf(_SC_PAGESIZE);
    uint64_t map_size;
    g_autofree char *fd_name = NULL;
    void *ptr;
    int fd;

    memory_region_init_common(mr, MEMORY_REGION_RAM, owner, name, size);
    if (size == 0 || size > UINT64_MAX - page) {
        error_setg(errp, "memory region '%s': invalid RAM size 0x%" PRIx64,
                   mr->name, size);
        goto fail;
    }
    map_size = QEMU_ALIGN_UP(size, page);

    /* memfd names are limited to 249 bytes; only debugging uses them. */
    fd_name = g_strndup(mr->name, 200);
    fd = memfd_create(fd_name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        error_setg_errno(errp, errno, "memory region '%s': memfd_create",
                         mr->name);
        goto fail;
    }
    if (ftruncate(fd, map_size) < 0) {
        error_setg_errno(errp, errno,
                         "memory region '%s': cannot size memfd to 0x%" PRIx64,
                         mr->name, map_size);
        close(fd);
        goto fail;
    }
    /*
     * RAM never changes size, and vfio-user servers map this fd: sealed,
     * they need no SIGBUS defence against us.  Best effort: a server
     * copes with an unsealed fd too.
     */
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
        trace_memory_region_ram_unsealed(mr->name, errno);
    }
    ptr = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ptr == MAP_FAILED) {
        error_setg_errno(errp, errno,
                         "memory region '%s': cannot map 0x%" PRIx64 " bytes",
                         mr->name, map_size);
        close(fd);
        goto fail;
    }
    mr->ram_ptr = ptr;
    mr->ram_map_size = map_size;
    mr->ram_fd = fd;
    mr->ram_fd_offset = 0;
    trace_memory_region_ram_alloc(mr->name, size, fd);
    g_mutex_lock(&ram_regions_lock);
    if (!ram_regions) {
        ram_regions = g_ptr_array_new();
    }
    g_ptr_array_add(ram_regions, mr);
    g_mutex_unlock(&ram_regions_lock);
    return true;

fail:
    memory_region_finalize(mr);
    return false;
}

bool memory_region_init_ram_from_fd(MemoryRegion *mr, Object *owner,
                                    const char *name, uint64_t size,
                                    uint64_t align, int fd, bool shared,
                                    Error **errp)
{
    uint64_t map_size;
    void *ptr;

    memory_region_init_common(mr, MEMORY_REGION_RAM, owner, name, size);
    align = MAX(align, (uint64_t)sysconf(_SC_PAGESIZE));
    if (size == 0 || size > UINT64_MAX - align) {
        error_setg(errp, "memory region '%s': invalid RAM size 0x%" PRIx64,
                   mr->name, size);
        close(fd);
        goto fail;
    }
    map_size = QEMU_ALIGN_UP(size, align);
    ptr = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
               shared ? MAP_SHARED : MAP_PRIVATE, fd, 0);
    if (ptr == MAP_FAILED) {
        error_setg_errno(errp, errno,
                         "memory region '%s': cannot map 0x%" PRIx64 " bytes",
                         mr->name, map_size);
        close(fd);
        goto fail;
    }
    mr->ram_ptr = ptr;
    mr->ram_map_size = map_size;
    /* A private mapping is not what the fd holds: nobody may share it. */
    if (shared) {
        mr->ram_fd = fd;
    } else {
        close(fd);
        mr->ram_fd = -1;
    }
    mr->ram_fd_offset = 0;
    trace_memory_region_ram_alloc(mr->name, size, mr->ram_fd);
    return true;

fail:
    memory_region_finalize(mr);
    return false;
}

void memory_region_init_ram_ptr(MemoryRegion *mr, Object *owner,
                                const char *name, uint64_t size, void *ptr)
{
    memory_region_init_common(mr, MEMORY_REGION_RAM, owner, name, size);
    mr->ram_ptr = ptr;
}

void memory_region_init_ram_device_ptr(MemoryRegion *mr, Object *owner,
                                       const char *name, uint64_t size,
                                       void *ptr)
{
    memory_region_init_common(mr, MEMORY_REGION_RAM_DEVICE, owner, name, size);
    mr->ram_ptr = ptr;
}

void memory_region_init_alias(MemoryRegion *mr, Object *owner,
                              const char *name, MemoryRegion *orig,
                              hwaddr offset, uint64_t size)
{
    assert(orig);
    memory_region_init_common(mr, MEMORY_REGION_ALIAS, owner, name, size);
    mr->alias = orig;
    mr->alias_offset = offset;
}

void memory_region_finalize(MemoryRegion *mr)
{
    AddressSpace *as;
    MemoryRegion *sub, *next;

    for (as = address_spaces; as; as = as->next) {
        /* Destroy the address space first. */
        assert(as->root != mr);
    }
    if (mr->container) {
        memory_region_del_subregion(mr->container, mr);
    }
    /* mr is out of every tree now, so detaching changes no view. */
    for (sub = mr->subregions; sub; sub = next) {
        next = sub->next_sibling;
        sub->container = NULL;
        sub->next_sibling = NULL;
    }
    if (ram_regions && mr->kind == MEMORY_REGION_RAM) {
        g_mutex_lock(&ram_regions_lock);
        g_ptr_array_remove(ram_regions, mr);
        g_mutex_unlock(&ram_regions_lock);
    }
    g_free(mr->dirty);
    if (mr->ram_map_size) {
        munmap(mr->ram_ptr, mr->ram_map_size);
        if (mr->ram_fd >= 0) {
            close(mr->ram_fd);
        }
    }
    g_free(mr->name);
    if (mr->coalesced) {
        g_array_free(mr->coalesced, true);
    }
    memset(mr, 0, sizeof(*mr));
    mr->ram_fd = -1;
}

/* ---- Dirty logging ---------------------------------------------------- */

#define BITS_PER_ULONG (sizeof(unsigned long) * 8)

void memory_foreach_ram(MemoryRamFunc fn, void *opaque)
{
    for (guint i = 0; ram_regions && i < ram_regions->len; i++) {
        fn(g_ptr_array_index(ram_regions, i), opaque);
    }
}

static void dirty_set_range(MemoryRegion *mr, uint64_t first, uint64_t last)
{
    for (uint64_t p = first; p <= last && p < mr->dirty_pages; p++) {
        __atomic_fetch_or(&mr->dirty[p / BITS_PER_ULONG],
                          1UL << (p % BITS_PER_ULONG), __ATOMIC_RELAXED);
    }
}

void memory_region_set_dirty(MemoryRegion *mr, hwaddr offset, uint64_t len)
{
    uint64_t page = getpagesize();

    if (!mr->dirty || !len || offset >= mr->size) {
        return;
    }
    len = MIN(len, mr->size - offset);
    dirty_set_range(mr, offset / page, (offset + len - 1) / page);
}

static MemoryRegion *ram_region_by_hva(const void *hva, size_t len)
{
    uintptr_t a = (uintptr_t)hva;

    for (guint i = 0; ram_regions && i < ram_regions->len; i++) {
        MemoryRegion *mr = g_ptr_array_index(ram_regions, i);
        uintptr_t base = (uintptr_t)mr->ram_ptr;

        if (a >= base && a - base < mr->size && len <= mr->size - (a - base)) {
            return mr;
        }
    }
    return NULL;
}

void memory_ram_mark_dirty_hva(const void *hva, size_t len)
{
    MemoryRegion *mr;

    if (!__atomic_load_n(&dirty_log_on, __ATOMIC_ACQUIRE) || !len) {
        return;
    }
    g_mutex_lock(&ram_regions_lock);
    mr = ram_region_by_hva(hva, len);
    if (mr) {
        memory_region_set_dirty(mr, (uintptr_t)hva - (uintptr_t)mr->ram_ptr,
                                len);
    }
    g_mutex_unlock(&ram_regions_lock);
}

void memory_ram_mark_dirty_bitmap(const void *hva, const unsigned long *bm,
                                  uint64_t npages)
{
    uint64_t page = getpagesize();
    MemoryRegion *mr;
    uint64_t first;

    g_mutex_lock(&ram_regions_lock);
    mr = ram_region_by_hva(hva, npages * page);
    if (mr && mr->dirty) {
        first = ((uintptr_t)hva - (uintptr_t)mr->ram_ptr) / page;
        for (uint64_t i = 0; i < npages; i++) {
            if (bm[i / BITS_PER_ULONG] & (1UL << (i % BITS_PER_ULONG))) {
                dirty_set_range(mr, first + i, first + i);
            }
        }
    }
    g_mutex_unlock(&ram_regions_lock);
}

bool memory_region_test_and_clear_dirty_page(MemoryRegion *mr, uint64_t page)
{
    unsigned long bit = 1UL << (page % BITS_PER_ULONG);

    if (!mr->dirty || page >= mr->dirty_pages) {
        return false;
    }
    if (!(__atomic_load_n(&mr->dirty[page / BITS_PER_ULONG],
                          __ATOMIC_RELAXED) & bit)) {
        return false;
    }
    return __atomic_fetch_and(&mr->dirty[page / BITS_PER_ULONG], ~bit,
                              __ATOMIC_RELAXED) & bit;
}

uint64_t memory_region_dirty_count(MemoryRegion *mr)
{
    uint64_t n = 0;

    if (!mr->dirty) {
        return 0;
    }
    for (uint64_t i = 0; i < DIV_ROUND_UP(mr->dirty_pages, BITS_PER_ULONG);
         i++) {
        n += __builtin_popcountl(__atomic_load_n(&mr->dirty[i],
                                                 __ATOMIC_RELAXED));
    }
    return n;
}

static void listeners_call_log(int which)
{
    for (AddressSpace *as = address_spaces; as; as = as->next) {
        for (MemoryListener *l = as->listeners; l; l = l->next) {
            void (*fn)(MemoryListener *) = which == 0 ? l->log_global_start :
                                           which == 1 ? l->log_global_stop :
                                                        l->log_sync;
            if (fn) {
                fn(l);
            }
        }
    }
}

void memory_global_dirty_log_start(void)
{
    uint64_t page = getpagesize();

    if (dirty_log_on) {
        return;
    }
    g_mutex_lock(&ram_regions_lock);
    for (guint i = 0; ram_regions && i < ram_regions->len; i++) {
        MemoryRegion *mr = g_ptr_array_index(ram_regions, i);
        uint64_t words;

        mr->dirty_pages = DIV_ROUND_UP(mr->size, page);
        words = DIV_ROUND_UP(mr->dirty_pages, BITS_PER_ULONG);
        mr->dirty = g_new0(unsigned long, words);
        dirty_set_range(mr, 0, mr->dirty_pages - 1);
    }
    __atomic_store_n(&dirty_log_on, true, __ATOMIC_RELEASE);
    g_mutex_unlock(&ram_regions_lock);
    listeners_call_log(0);
}

void memory_global_dirty_log_stop(void)
{
    if (!dirty_log_on) {
        return;
    }
    listeners_call_log(1);
    g_mutex_lock(&ram_regions_lock);
    __atomic_store_n(&dirty_log_on, false, __ATOMIC_RELEASE);
    for (guint i = 0; ram_regions && i < ram_regions->len; i++) {
        MemoryRegion *mr = g_ptr_array_index(ram_regions, i);

        g_clear_pointer(&mr->dirty, g_free);
        mr->dirty_pages = 0;
    }
    g_mutex_unlock(&ram_regions_lock);
}

bool memory_global_dirty_log_active(void)
{
    return dirty_log_on;
}

void memory_global_dirty_log_sync(void)
{
    if (dirty_log_on) {
        listeners_call_log(2);
    }
}

/* ---- Flat views ------------------------------------------------------- */

static FlatView *flatview_new(void)
{
    return g_new0(FlatView, 1);
}

static void flatview_free(FlatView *fv)
{
    if (fv) {
        g_free(fv->ranges);
        g_free(fv);
    }
}

static void flatview_insert(FlatView *fv, unsigned pos, const FlatRange *fr)
{
    if (fv->nr == fv->alloc) {
        fv->alloc = MAX(16, fv->alloc * 2);
        fv->ranges = g_renew(FlatRange, fv->ranges, fv->alloc);
    }
    memmove(&fv->ranges[pos + 1], &fv->ranges[pos],
            (fv->nr - pos) * sizeof(FlatRange));
    fv->ranges[pos] = *fr;
    fv->nr++;
}

/* Claims the parts of [lo, hi) no range covers yet; mr offset 0 is at base. */
static void flatview_fill_gaps(FlatView *fv, MemoryRegion *mr, Int128Raw base,
                               Int128Raw lo, Int128Raw hi, bool readonly)
{
    unsigned i = 0;
    Int128Raw pos = lo;

    while (i < fv->nr &&
           (Int128Raw)fv->ranges[i].addr + fv->ranges[i].size <= pos) {
        i++;
    }
    while (pos < hi) {
        const FlatRange *cur = i < fv->nr ? &fv->ranges[i] : NULL;
        Int128Raw next;
        FlatRange fr;

        if (cur && (Int128Raw)cur->addr <= pos) {
            Int128Raw cur_end = (Int128Raw)cur->addr + cur->size;
            pos = MAX(pos, cur_end);
            i++;
            continue;
        }
        next = cur ? MIN(hi, (Int128Raw)cur->addr) : hi;
        fr.addr = pos;
        fr.size = next - pos;
        fr.mr = mr;
        fr.offset_in_region = pos - base;
        fr.readonly = readonly;
        flatview_insert(fv, i, &fr);
        i++;
        pos = next;
    }
}

/* The window of a region: UINT64_MAX stands for the whole 64-bit space. */
static Int128Raw memory_region_size128(const MemoryRegion *mr)
{
    if (mr->size == UINT64_MAX) {
        return (Int128Raw)1 << 64;
    }
    return mr->size;
}

static void render_region(FlatView *fv, MemoryRegion *mr, Int128Raw base,
                          Int128Raw clip_lo, Int128Raw clip_hi, bool readonly)
{
    MemoryRegion *sub;
    Int128Raw lo, hi;

    if (!mr->enabled) {
        return;
    }
    lo = MAX(clip_lo, base);
    hi = MIN(clip_hi, base + memory_region_size128(mr));
    if (lo >= hi) {
        return;
    }
    readonly |= mr->readonly;
    if (mr->kind == MEMORY_REGION_ALIAS) {
        render_region(fv, mr->alias, base - (Int128Raw)mr->alias_offset,
                      lo, hi, readonly);
        return;
    }
    for (sub = mr->subregions; sub; sub = sub->next_sibling) {
        render_region(fv, sub, base + sub->addr, lo, hi, readonly);
    }
    if (mr->kind != MEMORY_REGION_CONTAINER) {
        flatview_fill_gaps(fv, mr, base, lo, hi, readonly);
    }
}

/* Merges neighbours that continue each other, so views are canonical. */
static void flatview_simplify(FlatView *fv)
{
    unsigned i, out = 0;

    for (i = 0; i < fv->nr; i++) {
        FlatRange *prev = out ? &fv->ranges[out - 1] : NULL;
        FlatRange *cur = &fv->ranges[i];

        if (prev && prev->mr == cur->mr && prev->readonly == cur->readonly &&
            prev->addr + prev->size == cur->addr &&
            prev->offset_in_region + prev->size == cur->offset_in_region) {
            prev->size += cur->size;
        } else {
            fv->ranges[out++] = *cur;
        }
    }
    fv->nr = out;
}

static FlatView *address_space_render(AddressSpace *as)
{
    FlatView *fv = flatview_new();

    if (as->root) {
        render_region(fv, as->root, 0, 0, VIEW_END, false);
    }
    flatview_simplify(fv);
    return fv;
}

unsigned flatview_nr_ranges(FlatView *fv)
{
    return fv->nr;
}

const FlatRange *flatview_get_range(FlatView *fv, unsigned index)
{
    return index < fv->nr ? &fv->ranges[index] : NULL;
}

void flatview_for_each_range(FlatView *fv, FlatViewRangeCb cb, void *opaque)
{
    unsigned i;

    for (i = 0; i < fv->nr; i++) {
        if (cb(&fv->ranges[i], opaque)) {
            return;
        }
    }
}

/*
 * Index of the first range ending after addr (fv->nr if none).  The range
 * contains addr iff its start is <= addr.  No allocation: hot path.
 */
static unsigned flatview_search(const FlatView *fv, hwaddr addr)
{
    unsigned lo = 0, hi = fv->nr;

    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        const FlatRange *fr = &fv->ranges[mid];

        if (addr - fr->addr < fr->size && addr >= fr->addr) {
            return mid;
        }
        if (fr->addr > addr) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

static void flatrange_to_section(const FlatRange *fr, AddressSpace *as,
                                 MemoryRegionSection *section)
{
    section->mr = fr->mr;
    section->address_space = as;
    section->offset_within_region = fr->offset_in_region;
    section->size = fr->size;
    section->offset_within_address_space = fr->addr;
    section->readonly = fr->readonly;
}

bool address_space_find_section(AddressSpace *as, hwaddr addr,
                                MemoryRegionSection *section)
{
    FlatView *fv = as->current_map;
    unsigned i = flatview_search(fv, addr);

    if (i >= fv->nr || fv->ranges[i].addr > addr) {
        return false;
    }
    flatrange_to_section(&fv->ranges[i], as, section);
    return true;
}

/* ---- Coalesced MMIO --------------------------------------------------- */

typedef struct CoalescedRange {
    hwaddr offset;
    uint64_t size;
} CoalescedRange;

static __thread bool replaying_coalesced;

void memory_set_replaying_coalesced(bool on)
{
    replaying_coalesced = on;
}

bool memory_replaying_coalesced(void)
{
    return replaying_coalesced;
}

/*
 * Announces (add) or withdraws one coalesced range of fr->mr, clipped to
 * what fr shows, to one listener.
 */
static void listener_call_coalesced(MemoryListener *l, AddressSpace *as,
                                    const FlatRange *fr,
                                    const CoalescedRange *cr, bool add)
{
    MemoryRegionSection section;
    hwaddr start = MAX(cr->offset, fr->offset_in_region);
    hwaddr end = MIN(cr->offset + cr->size, fr->offset_in_region + fr->size);
    hwaddr addr;

    if (start >= end || !(add ? l->coalesced_io_add : l->coalesced_io_del)) {
        return;
    }
    flatrange_to_section(fr, as, &section);
    addr = fr->addr + (start - fr->offset_in_region);
    trace_memory_listener_coalesced(l->name ? l->name : "", fr->mr->name,
                                    add, addr, end - start);
    if (add) {
        l->coalesced_io_add(l, &section, addr, end - start);
    } else {
        l->coalesced_io_del(l, &section, addr, end - start);
    }
}

static void listener_call_coalesced_all(MemoryListener *l, AddressSpace *as,
                                        const FlatRange *fr, bool add)
{
    GArray *ranges = fr->mr->coalesced;

    for (guint i = 0; ranges && i < ranges->len; i++) {
        listener_call_coalesced(l, as, fr,
                                &g_array_index(ranges, CoalescedRange, i),
                                add);
    }
}

/* Tells every listener of every view showing mr about one range. */
static void memory_region_announce_coalesced(MemoryRegion *mr,
                                             const CoalescedRange *cr,
                                             bool add)
{
    AddressSpace *as;
    MemoryListener *l;

    for (as = address_spaces; as; as = as->next) {
        FlatView *fv = as->current_map;

        for (unsigned i = 0; fv && i < fv->nr; i++) {
            if (fv->ranges[i].mr != mr) {
                continue;
            }
            for (l = as->listeners; l; l = l->next) {
                listener_call_coalesced(l, as, &fv->ranges[i], cr, add);
            }
        }
    }
}

void memory_region_add_coalescing(MemoryRegion *mr, hwaddr offset,
                                  uint64_t size)
{
    CoalescedRange cr = { offset, size };

    assert(mr->kind == MEMORY_REGION_IO);
    assert(size && offset + size <= mr->size && offset + size > offset);
    if (!mr->coalesced) {
        mr->coalesced = g_array_new(false, false, sizeof(CoalescedRange));
    }
    g_array_append_val(mr->coalesced, cr);
    memory_region_announce_coalesced(mr, &cr, true);
}

void memory_region_clear_coalescing(MemoryRegion *mr)
{
    if (!mr->coalesced) {
        return;
    }
    for (guint i = 0; i < mr->coalesced->len; i++) {
        memory_region_announce_coalesced(
            mr, &g_array_index(mr->coalesced, CoalescedRange, i), false);
    }
    g_array_free(mr->coalesced, true);
    mr->coalesced = NULL;
}

bool memory_region_has_coalescing(MemoryRegion *mr)
{
    return mr->coalesced && mr->coalesced->len;
}

uint64_t memory_region_get_coalesced_writes(MemoryRegion *mr)
{
    return mr->coalesced_writes;
}

/* ---- Listeners and transactions --------------------------------------- */

static void listener_call_add(MemoryListener *l, AddressSpace *as,
                              const FlatRange *fr)
{
    MemoryRegionSection section;

    if (l->region_add) {
        flatrange_to_section(fr, as, &section);
        trace_memory_listener_region_add(l->name ? l->name : "", as->name,
                                         fr->mr->name, fr->addr, fr->size);
        l->region_add(l, &section);
    }
    listener_call_coalesced_all(l, as, fr, true);
}

static void listener_call_del(MemoryListener *l, AddressSpace *as,
                              const FlatRange *fr)
{
    MemoryRegionSection section;

    listener_call_coalesced_all(l, as, fr, false);
    if (!l->region_del) {
        return;
    }
    flatrange_to_section(fr, as, &section);
    trace_memory_listener_region_del(l->name ? l->name : "", as->name,
                                     fr->mr->name, fr->addr, fr->size);
    l->region_del(l, &section);
}

/* Deletions go to listeners in descending priority: recurse first. */
static void listeners_del_reverse(MemoryListener *l, AddressSpace *as,
                                  const FlatRange *fr)
{
    if (l) {
        listeners_del_reverse(l->next, as, fr);
        listener_call_del(l, as, fr);
    }
}

static bool flatrange_equal(const FlatRange *a, const FlatRange *b)
{
    return a->addr == b->addr && a->size == b->size && a->mr == b->mr &&
           a->offset_in_region == b->offset_in_region &&
           a->readonly == b->readonly;
}

/*
 * Walks both sorted views together.  Pass "adding" false announces the
 * old ranges that are gone; true announces new ones (and unchanged ones to
 * region_nop).  Deleting everything first lets a listener such as KVM free
 * a slot before a new one overlaps it.
 */
static void address_space_diff_pass(AddressSpace *as, const FlatView *old,
                                    const FlatView *new, bool adding)
{
    unsigned i = 0, j = 0;
    MemoryListener *l;

    while (i < old->nr || j < new->nr) {
        const FlatRange *fo = i < old->nr ? &old->ranges[i] : NULL;
        const FlatRange *fn = j < new->nr ? &new->ranges[j] : NULL;

        if (fo && (!fn || fo->addr < fn->addr ||
                   (fo->addr == fn->addr && !flatrange_equal(fo, fn)))) {
            if (!adding) {
                listeners_del_reverse(as->listeners, as, fo);
            }
            i++;
        } else if (fo && fn && flatrange_equal(fo, fn)) {
            if (adding) {
                for (l = as->listeners; l; l = l->next) {
                    if (l->region_nop) {
                        MemoryRegionSection section;

                        flatrange_to_section(fn, as, &section);
                        l->region_nop(l, &section);
                    }
                }
            }
            i++;
            j++;
        } else {
            if (adding) {
                for (l = as->listeners; l; l = l->next) {
                    listener_call_add(l, as, fn);
                }
            }
            j++;
        }
    }
}

static void address_space_update_topology(AddressSpace *as)
{
    FlatView *old = as->current_map;
    FlatView *new = address_space_render(as);
    MemoryListener *l;

    for (l = as->listeners; l; l = l->next) {
        if (l->begin) {
            l->begin(l);
        }
    }
    address_space_diff_pass(as, old, new, false);
    address_space_diff_pass(as, old, new, true);
    as->current_map = new;
    for (l = as->listeners; l; l = l->next) {
        if (l->commit) {
            l->commit(l);
        }
    }
    trace_address_space_update_topology(as->name, old->nr, new->nr);
    flatview_free(old);
}

void memory_region_transaction_begin(void)
{
    transaction_depth++;
}

void memory_region_transaction_commit(void)
{
    AddressSpace *as;

    assert(transaction_depth > 0);
    if (--transaction_depth || !topology_pending) {
        return;
    }
    /*
     * A listener may change the topology from a callback (e.g. a device
     * reacting to a mapping): defer that to another round instead of
     * re-rendering in the middle of a diff.
     */
    transaction_depth++;
    while (topology_pending) {
        topology_pending = false;
        trace_memory_region_transaction_commit();
        for (as = address_spaces; as; as = as->next) {
            address_space_update_topology(as);
        }
    }
    transaction_depth--;
}

/* Every topology change goes through here: commits unless nested. */
static void memory_region_topology_changed(void)
{
    memory_region_transaction_begin();
    topology_pending = true;
    memory_region_transaction_commit();
}

void memory_listener_register(MemoryListener *listener, AddressSpace *as)
{
    MemoryListener **pl;
    FlatView *fv = as->current_map;
    unsigned i;

    assert(!listener->address_space);
    listener->address_space = as;
    /* Ascending priority; equal priorities keep registration order. */
    for (pl = &as->listeners; *pl && (*pl)->priority <= listener->priority;
         pl = &(*pl)->next) {
        /* nothing */
    }
    listener->next = *pl;
    *pl = listener;

    if (listener->begin) {
        listener->begin(listener);
    }
    for (i = 0; i < fv->nr; i++) {
        listener_call_add(listener, as, &fv->ranges[i]);
    }
    if (listener->commit) {
        listener->commit(listener);
    }
}

void memory_listener_unregister(MemoryListener *listener)
{
    AddressSpace *as = listener->address_space;
    MemoryListener **pl;
    FlatView *fv;
    unsigned i;

    if (!as) {
        return;
    }
    fv = as->current_map;
    if (listener->begin) {
        listener->begin(listener);
    }
    for (i = fv->nr; i > 0; i--) {
        listener_call_del(listener, as, &fv->ranges[i - 1]);
    }
    if (listener->commit) {
        listener->commit(listener);
    }
    for (pl = &as->listeners; *pl; pl = &(*pl)->next) {
        if (*pl == listener) {
            *pl = listener->next;
            break;
        }
    }
    listener->next = NULL;
    listener->address_space = NULL;
}

/* ---- Address spaces --------------------------------------------------- */

void address_space_init(AddressSpace *as, MemoryRegion *root,
                        const char *name)
{
    AddressSpace **pas;

    memset(as, 0, sizeof(*as));
    as->name = g_strdup(name ? name : "anonymous");
    as->root = root;
    as->current_map = address_space_render(as);
    for (pas = &address_spaces; *pas; pas = &(*pas)->next) {
        /* append: keeps commit order stable */
    }
    *pas = as;
}

void address_space_destroy(AddressSpace *as)
{
    AddressSpace **pas;

    while (as->listeners) {
        memory_listener_unregister(as->listeners);
    }
    for (pas = &address_spaces; *pas; pas = &(*pas)->next) {
        if (*pas == as) {
            *pas = as->next;
            break;
        }
    }
    flatview_free(as->current_map);
    g_free(as->name);
    memset(as, 0, sizeof(*as));
}

const char *address_space_name(AddressSpace *as)
{
    return as->name;
}

MemoryRegion *address_space_root(AddressSpace *as)
{
    return as->root;
}

FlatView *address_space_get_flatview(AddressSpace *as)
{
    return as->current_map;
}

/* ---- Topology --------------------------------------------------------- */

static void memory_region_add_subregion_common(MemoryRegion *mr, hwaddr offset,
                                               MemoryRegion *subregion,
                                               int priority)
{
    MemoryRegion **ps;

    assert(subregion != mr);
    assert(!subregion->container);
    subregion->container = mr;
    subregion->addr = offset;
    subregion->priority = priority;
    /* Before every sibling of lower or equal priority: newest wins ties. */
    for (ps = &mr->subregions; *ps && (*ps)->priority > priority;
         ps = &(*ps)->next_sibling) {
        /* nothing */
    }
    subregion->next_sibling = *ps;
    *ps = subregion;
    trace_memory_region_add_subregion(mr->name, subregion->name, offset,
                                      priority);
    memory_region_topology_changed();
}

void memory_region_add_subregion(MemoryRegion *mr, hwaddr offset,
                                 MemoryRegion *subregion)
{
    memory_region_add_subregion_common(mr, offset, subregion, 0);
}

void memory_region_add_subregion_overlap(MemoryRegion *mr, hwaddr offset,
                                         MemoryRegion *subregion,
                                         int priority)
{
    memory_region_add_subregion_common(mr, offset, subregion, priority);
}

void memory_region_del_subregion(MemoryRegion *mr, MemoryRegion *subregion)
{
    MemoryRegion **ps;

    assert(subregion->container == mr);
    for (ps = &mr->subregions; *ps; ps = &(*ps)->next_sibling) {
        if (*ps == subregion) {
            *ps = subregion->next_sibling;
            break;
        }
    }
    subregion->container = NULL;
    subregion->next_sibling = NULL;
    trace_memory_region_del_subregion(mr->name, subregion->name);
    memory_region_topology_changed();
}

void memory_region_set_enabled(MemoryRegion *mr, bool enabled)
{
    if (mr->enabled == enabled) {
        return;
    }
    mr->enabled = enabled;
    memory_region_topology_changed();
}

void memory_region_set_address(MemoryRegion *mr, hwaddr addr)
{
    if (mr->addr == addr) {
        return;
    }
    mr->addr = addr;
    memory_region_topology_changed();
}

void memory_region_set_alias_offset(MemoryRegion *mr, hwaddr offset)
{
    assert(mr->kind == MEMORY_REGION_ALIAS);
    if (mr->alias_offset == offset) {
        return;
    }
    mr->alias_offset = offset;
    memory_region_topology_changed();
}

void memory_region_set_size(MemoryRegion *mr, uint64_t size)
{
    /* Our own RAM cannot grow past what was mapped. */
    assert(!mr->ram_map_size || size <= mr->ram_map_size);
    if (mr->size == size) {
        return;
    }
    mr->size = size;
    memory_region_topology_changed();
}

void memory_region_set_readonly(MemoryRegion *mr, bool readonly)
{
    if (mr->readonly == readonly) {
        return;
    }
    mr->readonly = readonly;
    memory_region_topology_changed();
}

/* ---- Accessors -------------------------------------------------------- */

uint64_t memory_region_size(MemoryRegion *mr)
{
    return mr->size;
}

const char *memory_region_name(const MemoryRegion *mr)
{
    return mr->name;
}

Object *memory_region_owner(MemoryRegion *mr)
{
    return mr->owner;
}

bool memory_region_is_ram(MemoryRegion *mr)
{
    return mr->kind == MEMORY_REGION_RAM || mr->kind == MEMORY_REGION_RAM_DEVICE;
}

bool memory_region_is_ram_device(MemoryRegion *mr)
{
    return mr->kind == MEMORY_REGION_RAM_DEVICE;
}

bool memory_region_is_alias(MemoryRegion *mr)
{
    return mr->kind == MEMORY_REGION_ALIAS;
}

bool memory_region_is_enabled(MemoryRegion *mr)
{
    return mr->enabled;
}

bool memory_region_is_readonly(MemoryRegion *mr)
{
    return mr->readonly;
}

hwaddr memory_region_get_address(MemoryRegion *mr)
{
    return mr->addr;
}

MemoryRegion *memory_region_get_container(MemoryRegion *mr)
{
    return mr->container;
}

void *memory_region_get_ram_ptr(MemoryRegion *mr)
{
    return memory_region_is_ram(mr) ? mr->ram_ptr : NULL;
}

int memory_region_get_fd(MemoryRegion *mr)
{
    return mr->kind == MEMORY_REGION_RAM ? mr->ram_fd : -1;
}

uint64_t memory_region_get_fd_offset(MemoryRegion *mr)
{
    return mr->ram_fd_offset;
}

void memory_region_get_access_counts(MemoryRegion *mr, uint64_t *reads,
                                     uint64_t *writes)
{
    if (reads) {
        *reads = mr->reads;
    }
    if (writes) {
        *writes = mr->writes;
    }
}

void memory_region_reset_access_counts(MemoryRegion *mr)
{
    mr->reads = 0;
    mr->writes = 0;
}

/* ---- Dispatch: I/O regions -------------------------------------------- */

static bool memory_region_big_endian(const MemoryRegion *mr)
{
    return mr->ops->endianness == DEVICE_BIG_ENDIAN ||
           (mr->ops->endianness == DEVICE_NATIVE_ENDIAN && target_big_endian);
}

static uint64_t bytes_to_value(const uint8_t *buf, unsigned size, bool be)
{
    uint64_t v = 0;
    unsigned i;

    for (i = 0; i < size; i++) {
        unsigned idx = be ? i : size - 1 - i;
        v = (v << 8) | buf[idx];
    }
    return v;
}

static void value_to_bytes(uint64_t v, uint8_t *buf, unsigned size, bool be)
{
    unsigned i;

    for (i = 0; i < size; i++) {
        unsigned idx = be ? size - 1 - i : i;
        buf[idx] = v;
        v >>= 8;
    }
}

/* Sizes are powers of two in 1..8; out-of-range settings are clamped. */
static unsigned pow2_clamp(unsigned v)
{
    if (v >= 8) {
        return 8;
    }
    return v ? 1U << (31 - __builtin_clz(v)) : 1;
}

static unsigned valid_min(const MemoryRegionOps *ops)
{
    return pow2_clamp(ops->valid.min_access_size ?: 1);
}

static unsigned valid_max(const MemoryRegionOps *ops)
{
    return MAX(pow2_clamp(ops->valid.max_access_size ?: 4), valid_min(ops));
}

static unsigned impl_min(const MemoryRegionOps *ops)
{
    return ops->impl.min_access_size ? pow2_clamp(ops->impl.min_access_size)
                                     : valid_min(ops);
}

static unsigned impl_max(const MemoryRegionOps *ops)
{
    unsigned max = ops->impl.max_access_size ?
                   pow2_clamp(ops->impl.max_access_size) : valid_max(ops);
    return MAX(max, impl_min(ops));
}

static uint64_t io_call_read(MemoryRegion *mr, hwaddr addr, unsigned size)
{
    uint64_t v = mr->ops->read(mr->opaque, addr, size);

    if (size < 8) {
        v &= (1ULL << (size * 8)) - 1;
    }
    trace_memory_region_ops_read(mr->name, addr, v, size);
    return v;
}

static void io_call_write(MemoryRegion *mr, hwaddr addr, uint64_t v,
                          unsigned size)
{
    trace_memory_region_ops_write(mr->name, addr, v, size);
    mr->ops->write(mr->opaque, addr, v, size);
}

/*
 * Adapts one valid access (size 1..8, power of two) to what the callbacks
 * implement: the window [start, end) is walked in chunks of acc bytes;
 * chunks only partly covered by a write are read-modify-written.
 */
static void io_access_impl(MemoryRegion *mr, hwaddr addr, uint8_t *buf,
                           unsigned size, bool is_write)
{
    const MemoryRegionOps *ops = mr->ops;
    bool be = memory_region_big_endian(mr);
    unsigned imin = impl_min(ops);
    unsigned acc = MIN(MAX(size, imin), impl_max(ops));
    hwaddr start, end, pos;

    if (!ops->impl.unaligned) {
        /* Prefer smaller aligned pieces over widening when possible. */
        while (acc > imin && (addr & (acc - 1))) {
            acc >>= 1;
        }
        start = QEMU_ALIGN_DOWN(addr, acc);
        end = QEMU_ALIGN_UP(addr + size, acc);
    } else {
        start = addr;
        end = addr + MAX(size, acc);
    }

    for (pos = start; pos < end; pos += acc) {
        hwaddr ov_lo = MAX(pos, addr);
        hwaddr ov_hi = MIN(pos + acc, addr + size);
        uint8_t tmp[8];

        if (!is_write) {
            value_to_bytes(io_call_read(mr, pos, acc), tmp, acc, be);
            memcpy(buf + (ov_lo - addr), tmp + (ov_lo - pos), ov_hi - ov_lo);
            continue;
        }
        if (ov_lo == pos && ov_hi == pos + acc) {
            io_call_write(mr, pos, bytes_to_value(buf + (pos - addr), acc, be),
                          acc);
            continue;
        }
        if (ops->read) {
            value_to_bytes(io_call_read(mr, pos, acc), tmp, acc, be);
        } else {
            memset(tmp, 0, sizeof(tmp));
        }
        memcpy(tmp + (ov_lo - pos), buf + (ov_lo - addr), ov_hi - ov_lo);
        io_call_write(mr, pos, bytes_to_value(tmp, acc, be), acc);
    }
}

/*
 * Re-entrancy guard.  The devices (region owners; an ownerless region
 * stands for itself) whose callbacks are running on this thread.  A device
 * reached again from inside its own callbacks, because its DMA, MSI or
 * MSI-X message was aimed at its own registers, would recurse without bound
 * or re-take a lock it holds: that access is logged as a guest error and
 * dropped.  Chains through other devices are caught the same way, and a
 * chain longer than IO_GUARD_DEPTH distinct devices is cut there.  Every
 * I/O region gets this for free; callers need do nothing.
 */
#define IO_GUARD_DEPTH 16
static __thread const void *io_engaged[IO_GUARD_DEPTH];
static __thread unsigned io_engaged_depth;

static const void *io_guard_key(const MemoryRegion *mr)
{
    return mr->owner ? (const void *)mr->owner : (const void *)mr;
}

/* True if the access may go on; then io_guard_leave() must follow. */
static bool io_guard_enter(MemoryRegion *mr, hwaddr addr, unsigned size,
                           bool is_write)
{
    const void *key = io_guard_key(mr);
    const char *why = NULL;

    for (unsigned i = 0; i < io_engaged_depth; i++) {
        if (io_engaged[i] == key) {
            why = "re-entrant access from the device's own I/O";
            break;
        }
    }
    if (!why && io_engaged_depth == IO_GUARD_DEPTH) {
        why = "I/O nested too deeply";
    }
    if (why) {
        qemu_log_guest_error("%s: %u-byte %s at offset 0x%" PRIx64
                             " dropped: %s", mr->name, size,
                             is_write ? "write" : "read", addr, why);
        trace_memory_region_reentrant(mr->name, addr, size, is_write);
        return false;
    }
    io_engaged[io_engaged_depth++] = key;
    return true;
}

static void io_guard_leave(void)
{
    io_engaged_depth--;
}

/*
 * One guest-visible access, checked against ops->valid.  Returns whether
 * it reached the callbacks; *result gets MEMTX_DECODE_ERROR if not.
 */
static bool io_access_one(MemoryRegion *mr, hwaddr addr, uint8_t *buf,
                          unsigned size, bool is_write, MemTxResult *result)
{
    const MemoryRegionOps *ops = mr->ops;
    const char *why = NULL;

    if (size < valid_min(ops) || size > valid_max(ops)) {
        why = "size not allowed";
    } else if (!ops->valid.unaligned && (addr & (size - 1))) {
        why = "unaligned";
    } else if (addr >= mr->size || size > mr->size - addr) {
        why = "out of range";
    } else if (is_write ? !ops->write : !ops->read) {
        why = is_write ? "region is read-only" : "region is write-only";
    } else if (ops->valid.accepts &&
               !ops->valid.accepts(mr->opaque, addr, size, is_write)) {
        why = "rejected by device";
    }
    if (why) {
        qemu_log_guest_error("%s: invalid %u-byte %s at offset 0x%" PRIx64
                             ": %s", mr->name, size,
                             is_write ? "write" : "read", addr, why);
        trace_memory_region_access_invalid(mr->name, addr, size, is_write);
        if (!is_write) {
            memset(buf, 0xff, size);
        }
        *result |= MEMTX_DECODE_ERROR;
        return false;
    }
    if (!io_guard_enter(mr, addr, size, is_write)) {
        if (!is_write) {
            memset(buf, 0xff, size);
        }
        *result |= MEMTX_ERROR;
        return false;
    }
    io_access_impl(mr, addr, buf, size, is_write);
    io_guard_leave();
    return true;
}

/* Largest power of two <= n (n >= 1). */
static unsigned pow2_floor(uint64_t n)
{
    return n >= 8 ? 8 : 1U << (31 - __builtin_clz((unsigned)n));
}

static MemTxResult io_access(MemoryRegion *mr, hwaddr addr, uint8_t *buf,
                             uint64_t len, bool is_write)
{
    const MemoryRegionOps *ops = mr->ops;
    MemTxResult result = MEMTX_OK;
    bool reached = false;

    while (len) {
        unsigned size = MIN(pow2_floor(len), valid_max(ops));

        if (!ops->valid.unaligned) {
            while (addr & (size - 1)) {
                size >>= 1;
            }
        }
        reached |= io_access_one(mr, addr, buf, size, is_write, &result);
        addr += size;
        buf += size;
        len -= size;
    }
    if (reached) {
        if (is_write && replaying_coalesced) {
            mr->coalesced_writes++;
        } else if (is_write) {
            mr->writes++;
        } else {
            mr->reads++;
        }
    }
    return result;
}

/* ---- Dispatch: RAM-device regions ------------------------------------- */

/* Splits into naturally aligned pieces of at most 8 bytes. */
static void ram_device_access(MemoryRegion *mr, hwaddr addr, uint8_t *buf,
                              uint64_t len, bool is_write)
{
    while (len) {
        uint8_t *p = (uint8_t *)mr->ram_ptr + addr;
        unsigned size = pow2_floor(len);
        uint64_t v;

        while ((uintptr_t)p & (size - 1)) {
            size >>= 1;
        }
        if (is_write) {
            v = 0;
            /* Host byte order: the bytes land in memory as given. */
            memcpy(&v, buf, size);
            trace_memory_region_ram_device_write(mr->name, addr, v, size);
            volatile_stn_he(p, size, v);
        } else {
            v = volatile_ldn_he(p, size);
            memcpy(buf, &v, size);
            trace_memory_region_ram_device_read(mr->name, addr, v, size);
        }
        addr += size;
        buf += size;
        len -= size;
    }
    if (is_write) {
        mr->writes++;
    } else {
        mr->reads++;
    }
}

/* ---- Dispatch: whole accesses ----------------------------------------- */

static MemTxResult memory_region_access(MemoryRegion *mr, hwaddr addr,
                                        uint8_t *buf, uint64_t len,
                                        bool is_write, bool readonly)
{
    if (is_write && readonly) {
        /* ROM semantics: the write is silently ignored. */
        return MEMTX_OK;
    }
    switch (mr->kind) {
    case MEMORY_REGION_RAM:
        if (is_write) {
            memcpy((uint8_t *)mr->ram_ptr + addr, buf, len);
            if (mr->dirty) {
                memory_region_set_dirty(mr, addr, len);
            }
        } else {
            memcpy(buf, (uint8_t *)mr->ram_ptr + addr, len);
        }
        return MEMTX_OK;
    case MEMORY_REGION_RAM_DEVICE:
        ram_device_access(mr, addr, buf, len, is_write);
        return MEMTX_OK;
    case MEMORY_REGION_IO:
        return io_access(mr, addr, buf, len, is_write);
    default:
        /* Containers and aliases never appear in a view. */
        g_assert_not_reached();
    }
}

MemTxResult address_space_rw(AddressSpace *as, hwaddr addr, void *buf,
                             hwaddr len, bool is_write)
{
    const FlatView *fv = as->current_map;
    MemTxResult result = MEMTX_OK;
    uint8_t *p = buf;

    while (len) {
        unsigned i = flatview_search(fv, addr);
        const FlatRange *fr = i < fv->nr ? &fv->ranges[i] : NULL;
        uint64_t l;

        if (!fr || fr->addr > addr) {
            /* Unassigned up to the next range (or the end of the space). */
            l = fr ? MIN(len, fr->addr - addr) : len;
            if (is_write) {
                trace_memory_unassigned_write(as->name, addr, l);
            } else {
                trace_memory_unassigned_read(as->name, addr, l);
                memset(p, 0xff, l);
            }
            result |= MEMTX_DECODE_ERROR;
        } else {
            l = MIN(len, fr->addr + fr->size - addr);
            result |= memory_region_access(fr->mr,
                                           fr->offset_in_region +
                                           (addr - fr->addr),
                                           p, l, is_write, fr->readonly);
        }
        addr += l;
        p += l;
        len -= l;
    }
    return result;
}

MemTxResult address_space_read(AddressSpace *as, hwaddr addr, void *buf,
                               hwaddr len)
{
    return address_space_rw(as, addr, buf, len, false);
}

MemTxResult address_space_write(AddressSpace *as, hwaddr addr,
                                const void *buf, hwaddr len)
{
    /* The write path never stores into buf. */
    return address_space_rw(as, addr, (void *)buf, len, true);
}

static MemTxResult memory_region_dispatch(MemoryRegion *mr, hwaddr addr,
                                          uint8_t *buf, unsigned size,
                                          bool is_write)
{
    MemTxResult result = MEMTX_OK;

    if ((size != 1 && size != 2 && size != 4 && size != 8) ||
        addr >= mr->size || size > mr->size - addr ||
        (mr->kind != MEMORY_REGION_IO && mr->kind != MEMORY_REGION_RAM_DEVICE)) {
        qemu_log_guest_error("%s: invalid %u-byte %s at offset 0x%" PRIx64,
                             mr->name, size, is_write ? "write" : "read",
                             addr);
        if (!is_write) {
            memset(buf, 0xff, MIN(size, 8));
        }
        return MEMTX_DECODE_ERROR;
    }
    if (mr->kind == MEMORY_REGION_RAM_DEVICE) {
        ram_device_access(mr, addr, buf, size, is_write);
        return MEMTX_OK;
    }
    if (io_access_one(mr, addr, buf, size, is_write, &result)) {
        if (is_write) {
            mr->writes++;
        } else {
            mr->reads++;
        }
    }
    return result;
}

MemTxResult memory_region_dispatch_read(MemoryRegion *mr, hwaddr addr,
                                        uint64_t *data, unsigned size)
{
    uint8_t buf[8];
    MemTxResult result = memory_region_dispatch(mr, addr, buf, size, false);
    unsigned n = MIN(size, 8);

    if (mr->kind == MEMORY_REGION_IO) {
        *data = bytes_to_value(buf, n, memory_region_big_endian(mr));
    } else {
        uint64_t v = 0;

        memcpy(&v, buf, n);
        *data = v;
    }
    return result;
}

MemTxResult memory_region_dispatch_write(MemoryRegion *mr, hwaddr addr,
                                         uint64_t data, unsigned size)
{
    uint8_t buf[8];
    unsigned n = MIN(size, 8);

    if (mr->kind == MEMORY_REGION_IO) {
        value_to_bytes(data, buf, n, memory_region_big_endian(mr));
    } else {
        memcpy(buf, &data, n);
    }
    return memory_region_dispatch(mr, addr, buf, size, true);
}

/* ---- Fixed-size helpers ----------------------------------------------- */

static uint64_t address_space_ld(AddressSpace *as, hwaddr addr, unsigned size,
                                 bool be, MemTxResult *result)
{
    uint8_t buf[8];
    MemTxResult r = address_space_read(as, addr, buf, size);

    if (result) {
        *result = r;
    }
    return bytes_to_value(buf, size, be);
}

static void address_space_st(AddressSpace *as, hwaddr addr, uint64_t val,
                             unsigned size, bool be, MemTxResult *result)
{
    uint8_t buf[8];
    MemTxResult r;

    value_to_bytes(val, buf, size, be);
    r = address_space_write(as, addr, buf, size);
    if (result) {
        *result = r;
    }
}

uint8_t address_space_ldub(AddressSpace *as, hwaddr addr, MemTxResult *result)
{
    return address_space_ld(as, addr, 1, false, result);
}

uint16_t address_space_lduw_le(AddressSpace *as, hwaddr addr,
                               MemTxResult *result)
{
    return address_space_ld(as, addr, 2, false, result);
}

uint32_t address_space_ldl_le(AddressSpace *as, hwaddr addr,
                              MemTxResult *result)
{
    return address_space_ld(as, addr, 4, false, result);
}

uint64_t address_space_ldq_le(AddressSpace *as, hwaddr addr,
                              MemTxResult *result)
{
    return address_space_ld(as, addr, 8, false, result);
}

uint16_t address_space_lduw_be(AddressSpace *as, hwaddr addr,
                               MemTxResult *result)
{
    return address_space_ld(as, addr, 2, true, result);
}

uint32_t address_space_ldl_be(AddressSpace *as, hwaddr addr,
                              MemTxResult *result)
{
    return address_space_ld(as, addr, 4, true, result);
}

uint64_t address_space_ldq_be(AddressSpace *as, hwaddr addr,
                              MemTxResult *result)
{
    return address_space_ld(as, addr, 8, true, result);
}

void address_space_stb(AddressSpace *as, hwaddr addr, uint8_t val,
                       MemTxResult *result)
{
    address_space_st(as, addr, val, 1, false, result);
}

void address_space_stw_le(AddressSpace *as, hwaddr addr, uint16_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 2, false, result);
}

void address_space_stl_le(AddressSpace *as, hwaddr addr, uint32_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 4, false, result);
}

void address_space_stq_le(AddressSpace *as, hwaddr addr, uint64_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 8, false, result);
}

void address_space_stw_be(AddressSpace *as, hwaddr addr, uint16_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 2, true, result);
}

void address_space_stl_be(AddressSpace *as, hwaddr addr, uint32_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 4, true, result);
}

void address_space_stq_be(AddressSpace *as, hwaddr addr, uint64_t val,
                          MemTxResult *result)
{
    address_space_st(as, addr, val, 8, true, result);
}
