/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BAR mechanism: executes a vfio_bar_plan() plan with MemoryRegions.
 *
 * A BAR is a container holding, from bottom to top:
 *   forward   (priority -1) an I/O region forwarding to the backend; it
 *             shows wherever nothing is mapped;
 *   parts     (priority 0) one region per piece of an mmap area: a
 *             RAM-device region where the page is not trapped (a KVM
 *             memslot; never counted), or an I/O region that loads and
 *             stores on the mapping where the page is trapped because an
 *             enabled MSI-X overlay sits on it ("mmap-served");
 *   MSI-X     (priority 1) table and PBA, added by msix_init().
 * So qtest dispatch sees exactly what KVM would: an access is counted
 * only when it lands on a page that exits.
 *
 * Lazy PBA changes which pages trap.  Rather than rebuilding regions (and
 * freeing ones an old FlatView may still point at), both renderings are
 * built up front and one is enabled at a time.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/ldst-volatile.h"
#include "hw/pci/pci.h"
#include "bar.h"
#include "trace.h"

/* Accesses to one trapped page before we suggest an option. */
#define VFIO_HOT_PAGE_THRESHOLD 1024

static uint64_t all_ones(unsigned size)
{
    return size >= 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
}

static void vfio_bar_access_done(VFIOBar *bar)
{
    if (bar->hooks && bar->hooks->access_done) {
        bar->hooks->access_done(bar->opaque);
    }
}

static void vfio_bar_backend_failed(VFIOBar *bar)
{
    if (bar->hooks && bar->hooks->backend_failed) {
        bar->hooks->backend_failed(bar->opaque);
    }
}

/* Called on every counted access: per-page counts, hot-page warning. */
static void vfio_bar_count_page(VFIOBar *bar, uint64_t offset)
{
    uint64_t page, hits;
    const char *hint;

    if (!bar->plan || !bar->page_hits) {
        return;
    }
    page = QEMU_ALIGN_DOWN(offset, bar->plan->page_size);
    hits = GPOINTER_TO_SIZE(g_hash_table_lookup(bar->page_hits,
                                                GSIZE_TO_POINTER(page))) + 1;
    g_hash_table_insert(bar->page_hits, GSIZE_TO_POINTER(page),
                        GSIZE_TO_POINTER(hits));
    if (hits != VFIO_HOT_PAGE_THRESHOLD || bar->hot_page_warned) {
        return;
    }
    hint = vfio_bar_plan_explain(&bar->plan_in, bar->plan, page);
    if (hint) {
        bar->hot_page_warned = true;
        warn_report("vfio %s: BAR%u page 0x%" PRIx64 " traps on every "
                    "access (%" PRIu64 " so far); %s", bar->vbasedev->name,
                    bar->nr, page, hits, hint);
    }
}

/* ---- the forward region: traps to the backend ---- */

static uint64_t vfio_bar_forward_read(void *opaque, hwaddr addr,
                                      unsigned size)
{
    VFIOBar *bar = opaque;
    uint8_t buf[8];
    Error *err = NULL;

    if (bar->vbasedev->broken) {
        return all_ones(size);
    }
    vfio_bar_count_page(bar, addr);
    if (!vfio_device_region_read(bar->vbasedev, bar->region.index, addr,
                                 size, buf, &err)) {
        qemu_log_guest_error("vfio %s: BAR%u read 0x%" HWADDR_PRIx
                             " size %u failed: %s\n", bar->vbasedev->name,
                             bar->nr, addr, size, error_get_pretty(err));
        error_free(err);
        vfio_bar_backend_failed(bar);
        return all_ones(size);
    }
    vfio_bar_access_done(bar);
    trace_vfio_bar_forward_read(bar->vbasedev->name, bar->nr, addr, size);
    return ldn_le_p(buf, size);
}

static void vfio_bar_forward_write(void *opaque, hwaddr addr, uint64_t data,
                                   unsigned size)
{
    VFIOBar *bar = opaque;
    uint8_t buf[8];
    Error *err = NULL;

    if (bar->vbasedev->broken) {
        return;
    }
    if (!memory_replaying_coalesced()) {
        vfio_bar_count_page(bar, addr);
    }
    stn_le_p(buf, size, data);
    trace_vfio_bar_forward_write(bar->vbasedev->name, bar->nr, addr, data,
                                 size);
    if (!vfio_device_region_write(bar->vbasedev, bar->region.index, addr,
                                  size, buf, true, &err)) {
        qemu_log_guest_error("vfio %s: BAR%u write 0x%" HWADDR_PRIx
                             " size %u failed: %s\n", bar->vbasedev->name,
                             bar->nr, addr, size, error_get_pretty(err));
        error_free(err);
        vfio_bar_backend_failed(bar);
        return;
    }
    vfio_bar_access_done(bar);
}

static const MemoryRegionOps vfio_bar_forward_ops = {
    .read = vfio_bar_forward_read,
    .write = vfio_bar_forward_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- mmap-served parts: trapped pages that are mapped ---- */

static uint64_t vfio_bar_served_read(void *opaque, hwaddr addr,
                                     unsigned size)
{
    VFIOBarPart *part = opaque;
    uint8_t *p = part->ptr + addr;
    uint64_t val;

    if (part->bar->vbasedev->broken) {
        return all_ones(size);
    }
    vfio_bar_count_page(part->bar, part->offset + addr);
    val = volatile_ldn_le(p, size);
    vfio_bar_access_done(part->bar);
    return val;
}

static void vfio_bar_served_write(void *opaque, hwaddr addr, uint64_t data,
                                  unsigned size)
{
    VFIOBarPart *part = opaque;
    uint8_t *p = part->ptr + addr;

    if (part->bar->vbasedev->broken) {
        return;
    }
    if (!memory_replaying_coalesced()) {
        vfio_bar_count_page(part->bar, part->offset + addr);
    }
    /* A read-only region is mapped read-only: the write is dropped. */
    if (part->bar->region.flags & VFIO_REGION_INFO_FLAG_WRITE) {
        volatile_stn_le(p, size, data);
    }
    vfio_bar_access_done(part->bar);
}

static const MemoryRegionOps vfio_bar_served_ops = {
    .read = vfio_bar_served_read,
    .write = vfio_bar_served_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Aligned accesses only, as the mapping's page allows. */
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

/* ---- rendering ---- */

static void vfio_bar_add_part(VFIOBar *bar, uint64_t offset, uint64_t size,
                              uint8_t *ptr, bool served, uint8_t view,
                              bool enabled)
{
    VFIOBarPart *part = g_new0(VFIOBarPart, 1);
    g_autofree char *name = g_strdup_printf("%s BAR%u %s 0x%" PRIx64,
                                            bar->vbasedev->name, bar->nr,
                                            served ? "mmap-served" : "mmap",
                                            offset);

    part->bar = bar;
    part->offset = offset;
    part->ptr = ptr;
    part->served = served;
    part->view = view;
    if (served) {
        memory_region_init_io(&part->mr, bar->owner, &vfio_bar_served_ops,
                              part, name, size);
        /* Writes need no exit; the MSI-X overlays above stay exact. */
        if (bar->plan->coalesce_served) {
            memory_region_add_coalescing(&part->mr, 0, size);
        }
    } else {
        memory_region_init_ram_device_ptr(&part->mr, bar->owner, name,
                                          size, ptr);
        /* Mapped without PROT_WRITE: writes are ignored, as to a ROM. */
        memory_region_set_readonly(&part->mr, !(bar->region.flags &
                                                VFIO_REGION_INFO_FLAG_WRITE));
    }
    memory_region_set_enabled(&part->mr, enabled);
    memory_region_add_subregion_overlap(&bar->container, offset, &part->mr,
                                        0);
    g_ptr_array_add(bar->parts, part);
    trace_vfio_bar_part(bar->vbasedev->name, bar->nr, offset, size, served,
                        view);
}

/* Adds the parts of every mmap area for one of the plan's trapped sets. */
static void vfio_bar_render_view(VFIOBar *bar, uint8_t view,
                                 const VFIOBarRange *trapped,
                                 uint32_t nr_trapped, bool enabled)
{
    VFIOBarPlan *plan = bar->plan;
    uint32_t i, t;

    for (i = 0; i < plan->nr_areas; i++) {
        uint64_t pos = plan->areas[i].offset;
        uint64_t end = pos + plan->areas[i].size;
        uint8_t *base = bar->mmaps[i].mmap;

        while (pos < end) {
            uint64_t seg_end = end;
            bool served = false;

            for (t = 0; t < nr_trapped; t++) {
                uint64_t ts = trapped[t].offset;
                uint64_t te = ts + trapped[t].size;

                if (pos >= ts && pos < te) {
                    served = true;
                    seg_end = MIN(end, te);
                    break;
                }
                if (ts > pos) {
                    seg_end = MIN(end, ts);
                    break;
                }
            }
            vfio_bar_add_part(bar, pos, seg_end - pos,
                              base + (pos - plan->areas[i].offset), served,
                              view, enabled);
            pos = seg_end;
        }
    }
}

static bool vfio_bar_plan_has_pba(VFIOBarPlan *plan, bool *enabled)
{
    uint32_t i;

    for (i = 0; i < plan->nr_overlays; i++) {
        if (plan->overlays[i].kind == VFIO_BAR_OVERLAY_MSIX_PBA) {
            *enabled = plan->overlays[i].enabled;
            return true;
        }
    }
    return false;
}

/*
 * Maps @size bytes of @fd at @fd_offset so that the address is congruent
 * to @offset (the area's offset in the BAR) modulo @align: the BAR's
 * physical address is aligned to its size, so huge pages can back the
 * mapping only if the virtual one is aligned alike.  A PROT_NONE
 * reservation @align larger is made first and trimmed around the result.
 */
static void *vfio_bar_mmap_aligned(uint64_t size, int prot, int fd,
                                   uint64_t fd_offset, uint64_t offset,
                                   uint64_t align, uint64_t page)
{
    uint8_t *base, *want;
    void *p;

    if (align <= page) {
        return mmap(NULL, size, prot, MAP_SHARED, fd, fd_offset);
    }
    base = mmap(NULL, size + align, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        return MAP_FAILED;
    }
    want = base + ((offset - (uintptr_t)base) & (align - 1));
    p = mmap(want, size, prot, MAP_SHARED | MAP_FIXED, fd, fd_offset);
    if (p == MAP_FAILED) {
        munmap(base, size + align);
        return MAP_FAILED;
    }
    if (want > base) {
        munmap(base, want - base);
    }
    if (base + size + align > want + size) {
        munmap(want + size, base + size + align - (want + size));
    }
    return p;
}

static bool vfio_bar_mmap_areas(VFIOBar *bar, Error **errp)
{
    VFIOBarPlan *plan = bar->plan;
    VFIORegion *region = &bar->region;
    int prot = vfio_bar_plan_mmap_prot(region->flags);
    uint64_t align = vfio_bar_plan_mmap_align(region->size,
                                              plan->page_size);
    uint32_t i;

    bar->nr_mmaps = plan->nr_areas;
    bar->mmaps = g_new0(VFIOMmap, plan->nr_areas);
    for (i = 0; i < plan->nr_areas; i++) {
        VFIOMmap *m = &bar->mmaps[i];
        void *p;

        m->offset = plan->areas[i].offset;
        m->size = plan->areas[i].size;
        p = vfio_bar_mmap_aligned(m->size, prot, region->mmap_fd,
                                  region->fd_offset + m->offset, m->offset,
                                  align, plan->page_size);
        if (p == MAP_FAILED) {
            error_setg_errno(errp, errno, "vfio %s: cannot mmap BAR%u "
                             "[0x%" PRIx64 " + 0x%" PRIx64 "]",
                             bar->vbasedev->name, bar->nr, m->offset,
                             m->size);
            return false;
        }
        m->mmap = p;
    }
    return true;
}

/* The region forwarding trapped accesses to the backend, below the rest. */
static void vfio_bar_init_forward(VFIOBar *bar, bool coalesce)
{
    g_autofree char *name = g_strdup_printf("%s BAR%u",
                                            bar->vbasedev->name, bar->nr);

    memory_region_init_io(&bar->forward, bar->owner, &vfio_bar_forward_ops,
                          bar, name, bar->region.size);
    memory_region_add_subregion_overlap(&bar->container, 0, &bar->forward,
                                        -1);
    /*
     * Pages that cannot be mapped: over vfio-user, writes become posted
     * REGION_WRITEs sent in a batch when the ring drains (the kernel
     * backend's pwrite is synchronous either way).  The view clips this
     * to what shows the forward region, never the MSI-X overlays.
     */
    if (coalesce) {
        memory_region_add_coalescing(&bar->forward, 0, bar->region.size);
    }
    bar->forward_init = true;
}

/* Mmaps the plan's areas and renders the BAR. */
static bool vfio_bar_render(VFIOBar *bar, VFIOBarPlan *plan, Error **errp)
{
    bool pba_enabled = false;

    bar->plan = plan;
    bar->parts = g_ptr_array_new();
    bar->page_hits = g_hash_table_new(g_direct_hash, g_direct_equal);
    if (plan->nr_areas && !vfio_bar_mmap_areas(bar, errp)) {
        return false;
    }
    memory_region_transaction_begin();
    if (!vfio_bar_plan_has_pba(plan, &pba_enabled)) {
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_ALWAYS, plan->trapped,
                             plan->nr_trapped, true);
    } else {
        /* Both renderings; the plan's current state is the enabled one. */
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_PBA_OFF,
                             plan->trapped_view[0], plan->nr_trapped_view[0],
                             !pba_enabled);
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_PBA_ON,
                             plan->trapped_view[1], plan->nr_trapped_view[1],
                             pba_enabled);
    }
    memory_region_transaction_commit();
    bar->pba_view = pba_enabled;
    return true;
}

static void vfio_bar_show(VFIOBar *bar)
{
    guint i;

    memory_region_transaction_begin();
    for (i = 0; i < bar->parts->len; i++) {
        VFIOBarPart *part = g_ptr_array_index(bar->parts, i);
        bool on = !bar->hidden &&
                  (part->view == VFIO_BAR_VIEW_ALWAYS ||
                   (part->view == VFIO_BAR_VIEW_PBA_ON) == bar->pba_view);

        if (memory_region_is_enabled(&part->mr) != on) {
            memory_region_set_enabled(&part->mr, on);
        }
    }
    memory_region_transaction_commit();
}

void vfio_bar_set_pba_view(VFIOBar *bar, bool pba_enabled)
{
    bool cur;

    if (!bar->plan || !vfio_bar_plan_has_pba(bar->plan, &cur) ||
        cur == pba_enabled) {
        return;
    }
    vfio_bar_plan_set_overlay_enabled(bar->plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                      pba_enabled);
    bar->pba_view = pba_enabled;
    trace_vfio_bar_pba_view(bar->vbasedev->name, bar->nr, pba_enabled);
    vfio_bar_show(bar);
}

void vfio_bar_set_mappings_hidden(VFIOBar *bar, bool hidden)
{
    if (!bar->parts || bar->hidden == hidden) {
        return;
    }
    bar->hidden = hidden;
    vfio_bar_show(bar);
}

void vfio_bar_get_counts(VFIOBar *bar, uint64_t *fwd_reads,
                         uint64_t *fwd_writes, uint64_t *served_reads,
                         uint64_t *served_writes)
{
    guint i;

    *fwd_reads = *fwd_writes = *served_reads = *served_writes = 0;
    if (bar->forward_init) {
        memory_region_get_access_counts(&bar->forward, fwd_reads,
                                        fwd_writes);
    }
    for (i = 0; bar->parts && i < bar->parts->len; i++) {
        VFIOBarPart *part = g_ptr_array_index(bar->parts, i);
        uint64_t r, w;

        /* RAM-device parts are memslots under KVM: never counted. */
        if (part->served) {
            memory_region_get_access_counts(&part->mr, &r, &w);
            *served_reads += r;
            *served_writes += w;
        }
    }
}

void vfio_bar_teardown(VFIOBar *bar)
{
    VFIORegion *region = &bar->region;
    guint i;

    if (bar->parts) {
        for (i = 0; i < bar->parts->len; i++) {
            VFIOBarPart *part = g_ptr_array_index(bar->parts, i);

            memory_region_finalize(&part->mr);
            g_free(part);
        }
        g_ptr_array_free(bar->parts, true);
        bar->parts = NULL;
    }
    for (i = 0; bar->mmaps && i < bar->nr_mmaps; i++) {
        if (bar->mmaps[i].mmap) {
            munmap(bar->mmaps[i].mmap, bar->mmaps[i].size);
        }
    }
    g_clear_pointer(&bar->mmaps, g_free);
    bar->nr_mmaps = 0;
    if (region->mmap_fd >= 0) {
        close(region->mmap_fd);
        region->mmap_fd = -1;
    }
    if (bar->forward_init) {
        memory_region_finalize(&bar->forward);
        bar->forward_init = false;
    }
    if (bar->container_init) {
        memory_region_finalize(&bar->container);
        memset(&bar->container, 0, sizeof(bar->container));
        bar->container_init = false;
    }
    g_clear_pointer(&bar->plan, vfio_bar_plan_free);
    g_clear_pointer(&bar->page_hits, g_hash_table_destroy);
    vfio_region_caps_clear(&bar->caps);
}

/* ---- setup ---- */

void vfio_bar_init(VFIOBar *bar, Object *owner, VFIODevice *vbasedev,
                   uint32_t nr, const VFIOBarHooks *hooks, void *opaque)
{
    bar->owner = owner;
    bar->vbasedev = vbasedev;
    bar->nr = nr;
    bar->hooks = hooks;
    bar->opaque = opaque;
    bar->region.index = VFIO_PCI_BAR0_REGION_INDEX + nr;
    bar->region.mmap_fd = -1;
}

bool vfio_bar_get_info(VFIOBar *bar, uint32_t bar_reg, Error **errp)
{
    g_autofree struct vfio_region_info *info = NULL;
    VFIODevice *vbasedev = bar->vbasedev;
    int fd = -1;

    if (!vfio_device_get_region_info(vbasedev, bar->region.index, &info,
                                     &fd, errp)) {
        return false;
    }
    bar->region.mmap_fd = fd;
    if (!info->size) {
        return true;
    }
    if (!vfio_region_info_parse_caps(info, info->argsz, &bar->caps, errp)) {
        error_prepend(errp, "vfio %s: BAR%u: ", vbasedev->name, bar->nr);
        return false;
    }
    if (!is_power_of_2(info->size) || info->size < 4 ||
        info->size > (1ULL << 40)) {
        error_setg(errp, "vfio %s: BAR%u size 0x%llx is not a power of"
                   " two between 4 bytes and 1 TiB", vbasedev->name,
                   bar->nr, (unsigned long long)info->size);
        return false;
    }
    bar->region.flags = info->flags;
    bar->region.size = info->size;
    bar->region.fd_offset = info->offset;
    if (bar_reg & PCI_BASE_ADDRESS_SPACE_IO) {
        bar->type = PCI_BASE_ADDRESS_SPACE_IO;
        bar->region.flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
    } else {
        bar->type = bar_reg & (PCI_BASE_ADDRESS_MEM_TYPE_MASK |
                               PCI_BASE_ADDRESS_MEM_PREFETCH);
        bar->mem64 = (bar_reg & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
                     PCI_BASE_ADDRESS_MEM_TYPE_64;
        if (bar->mem64 && bar->nr == PCI_ROM_SLOT - 1) {
            error_setg(errp, "vfio %s: BAR5 cannot be 64-bit",
                       vbasedev->name);
            return false;
        }
    }
    if (bar->region.mmap_fd < 0 && vbasedev->fd >= 0) {
        bar->region.mmap_fd = dup(vbasedev->fd);
    }
    bar->bar_size = bar->region.size;
    return true;
}

bool vfio_bar_realize(VFIOBar *bar, const VFIOBarPlanInput *in,
                      Error **errp)
{
    g_autofree char *name = NULL;
    VFIOBarPlan *plan;

    if (!bar->bar_size) {
        return true;
    }
    name = g_strdup_printf("%s BAR%u container", bar->vbasedev->name,
                           bar->nr);
    memory_region_init(&bar->container, bar->owner, name, bar->bar_size);
    bar->container_init = true;
    if (!bar->region.size) {
        return true;    /* a new BAR holding only the relocated MSI-X */
    }
    bar->plan_in = *in;
    bar->plan_in.bar = bar->nr;
    bar->plan_in.size = bar->region.size;
    bar->plan_in.flags = bar->region.flags;
    if (bar->region.mmap_fd < 0 ||
        !(bar->region.flags & VFIO_REGION_INFO_FLAG_READ)) {
        /* Nothing to mmap through, or nothing a mapping could serve. */
        bar->plan_in.flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
    }
    bar->plan_in.caps = &bar->caps;
    bar->plan_in.posts_writes = bar->vbasedev->ops->posts_writes;
    bar->plan_in.name = bar->vbasedev->name;
    plan = vfio_bar_plan(&bar->plan_in, errp);
    if (!plan) {
        error_prepend(errp, "vfio %s: ", bar->vbasedev->name);
        return false;
    }
    vfio_bar_init_forward(bar, plan->coalesce_forward);
    return vfio_bar_render(bar, plan, errp);
}
