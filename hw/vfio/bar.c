/*
 * The BAR mechanism: executes a vfio_plan_bar() plan with MemoryRegions.
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
#include "hw/vfio/pci.h"
#include "trace.h"

/* Accesses to one trapped page before we suggest an option. */
#define VFIO_HOT_PAGE_THRESHOLD 1024

static uint64_t all_ones(unsigned size)
{
    return size >= 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
}

static const char *vfio_bar_overlay_hint(VFIOBar *bar, uint64_t page)
{
    VFIOPCIDevice *vdev = bar->vdev;
    VFIOBarPlan *plan = bar->plan;
    bool mapped = false, table = false;
    uint32_t i;

    for (i = 0; i < plan->nr_areas; i++) {
        if (page >= plan->areas[i].offset &&
            page - plan->areas[i].offset < plan->areas[i].size) {
            mapped = true;
        }
    }
    for (i = 0; i < plan->nr_overlays; i++) {
        const VFIOBarOverlay *ov = &plan->overlays[i];
        uint64_t start = QEMU_ALIGN_DOWN(ov->offset, plan->page_size);

        if (!ov->enabled || page < start ||
            page >= ov->offset + ov->size) {
            continue;
        }
        if (ov->kind == VFIO_BAR_OVERLAY_MSIX_TABLE) {
            table = true;
        }
        /* Lifting an overlay only helps a page the mapping covers. */
        if (!mapped) {
            continue;
        }
        if (ov->kind == VFIO_BAR_OVERLAY_MSIX_TABLE) {
            /* The default tried and said why it could not. */
            if (vdev->msix.relocation_impossible && vdev->msix.decision) {
                return vdev->msix.decision;
            }
            return "x-msix-relocation=auto moves the emulated MSI-X table "
                   "off this page";
        }
        if (!vdev->lazy_pba) {
            return "x-lazy-pba=on maps the PBA page while nothing is "
                   "pending";
        }
    }
    if (mapped) {
        return NULL;
    }
    if (vdev->no_mmap && (bar->region.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
        return "x-no-mmap=off maps the BAR";
    }
    if (bar->caps.msix_mappable &&
        vdev->msix_mappable == VFIO_MSIX_MAPPABLE_OFF) {
        return "x-msix-mappable=auto maps the MSI-X table page";
    }
    if (table && !bar->caps.msix_mappable) {
        return "the device does not advertise MSIX_MAPPABLE, so the page "
               "holding the MSI-X table cannot be mapped (no option helps; "
               "Linux's vfio-pci advertises it since 4.16)";
    }
    return NULL;
}

void vfio_bar_count_page(VFIOBar *bar, uint64_t offset)
{
    VFIOPCIDevice *vdev = bar->vdev;
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
    if (hits != VFIO_HOT_PAGE_THRESHOLD || vdev->hot_page_warned) {
        return;
    }
    hint = vfio_bar_overlay_hint(bar, page);
    if (hint) {
        vdev->hot_page_warned = true;
        warn_report("vfio %s: BAR%u page 0x%" PRIx64 " traps on every "
                    "access (%" PRIu64 " so far); %s", vdev->vbasedev.name,
                    bar->nr, page, hits, hint);
    }
}

/* ---- the forward region: traps to the backend ---- */

static uint64_t vfio_bar_forward_read(void *opaque, hwaddr addr,
                                      unsigned size)
{
    VFIOBar *bar = opaque;
    VFIOPCIDevice *vdev = bar->vdev;
    uint8_t buf[8];
    Error *err = NULL;

    if (vdev->vbasedev.broken) {
        return all_ones(size);
    }
    vfio_bar_count_page(bar, addr);
    if (!vfio_device_region_read(&vdev->vbasedev, bar->region.index, addr,
                                 size, buf, &err)) {
        qemu_log_guest_error("vfio %s: BAR%u read 0x%" HWADDR_PRIx
                             " size %u failed: %s\n", vdev->vbasedev.name,
                             bar->nr, addr, size, error_get_pretty(err));
        error_free(err);
        vfio_pci_check_broken(vdev);
        return all_ones(size);
    }
    vfio_pci_intx_eoi(vdev);
    trace_vfio_bar_forward_read(bar->nr, addr, size);
    return ldn_le_p(buf, size);
}

static void vfio_bar_forward_write(void *opaque, hwaddr addr, uint64_t data,
                                   unsigned size)
{
    VFIOBar *bar = opaque;
    VFIOPCIDevice *vdev = bar->vdev;
    uint8_t buf[8];
    Error *err = NULL;

    if (vdev->vbasedev.broken) {
        return;
    }
    if (!memory_replaying_coalesced()) {
        vfio_bar_count_page(bar, addr);
    }
    stn_le_p(buf, size, data);
    trace_vfio_bar_forward_write(bar->nr, addr, data, size);
    if (!vfio_device_region_write(&vdev->vbasedev, bar->region.index, addr,
                                  size, buf, true, &err)) {
        qemu_log_guest_error("vfio %s: BAR%u write 0x%" HWADDR_PRIx
                             " size %u failed: %s\n", vdev->vbasedev.name,
                             bar->nr, addr, size, error_get_pretty(err));
        error_free(err);
        vfio_pci_check_broken(vdev);
        return;
    }
    vfio_pci_intx_eoi(vdev);
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

    if (part->bar->vdev->vbasedev.broken) {
        return all_ones(size);
    }
    vfio_bar_count_page(part->bar, part->offset + addr);
    val = volatile_ldn_le(p, size);
    vfio_pci_intx_eoi(part->bar->vdev);
    return val;
}

static void vfio_bar_served_write(void *opaque, hwaddr addr, uint64_t data,
                                  unsigned size)
{
    VFIOBarPart *part = opaque;
    uint8_t *p = part->ptr + addr;

    if (part->bar->vdev->vbasedev.broken) {
        return;
    }
    if (!memory_replaying_coalesced()) {
        vfio_bar_count_page(part->bar, part->offset + addr);
    }
    volatile_stn_le(p, size, data);
    vfio_pci_intx_eoi(part->bar->vdev);
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
    VFIOPCIDevice *vdev = bar->vdev;
    VFIOBarPart *part = g_new0(VFIOBarPart, 1);
    g_autofree char *name = g_strdup_printf("%s BAR%u %s 0x%" PRIx64,
                                            vdev->vbasedev.name, bar->nr,
                                            served ? "mmap-served" : "mmap",
                                            offset);

    part->bar = bar;
    part->offset = offset;
    part->ptr = ptr;
    part->served = served;
    part->view = view;
    if (served) {
        memory_region_init_io(&part->mr, OBJECT(vdev), &vfio_bar_served_ops,
                              part, name, size);
        /* Writes need no exit; the MSI-X overlays above stay exact. */
        if (vdev->coalesce_trapped_writes) {
            memory_region_add_coalescing(&part->mr, 0, size);
        }
    } else {
        memory_region_init_ram_device_ptr(&part->mr, OBJECT(vdev), name,
                                          size, ptr);
    }
    memory_region_set_enabled(&part->mr, enabled);
    memory_region_add_subregion_overlap(&bar->container, offset, &part->mr,
                                        0);
    g_ptr_array_add(bar->parts, part);
    trace_vfio_bar_part(bar->nr, offset, size, served, view);
}

/* Adds the parts of every mmap area for the plan's current trapped set. */
static void vfio_bar_render_view(VFIOBar *bar, uint8_t view, bool enabled)
{
    VFIOBarPlan *plan = bar->plan;
    uint32_t i, t;

    for (i = 0; i < plan->nr_areas; i++) {
        uint64_t pos = plan->areas[i].offset;
        uint64_t end = pos + plan->areas[i].size;
        uint8_t *base = bar->region.mmaps[i].mmap;

        while (pos < end) {
            uint64_t seg_end = end;
            bool trapped = false;

            for (t = 0; t < plan->nr_trapped; t++) {
                uint64_t ts = plan->trapped[t].offset;
                uint64_t te = ts + plan->trapped[t].size;

                if (pos >= ts && pos < te) {
                    trapped = true;
                    seg_end = MIN(end, te);
                    break;
                }
                if (ts > pos) {
                    seg_end = MIN(end, ts);
                    break;
                }
            }
            vfio_bar_add_part(bar, pos, seg_end - pos,
                              base + (pos - plan->areas[i].offset), trapped,
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

static bool vfio_bar_mmap_areas(VFIOBar *bar, Error **errp)
{
    VFIOBarPlan *plan = bar->plan;
    VFIORegion *region = &bar->region;
    uint32_t i;

    region->nr_mmaps = plan->nr_areas;
    region->mmaps = g_new0(VFIOMmap, plan->nr_areas);
    for (i = 0; i < plan->nr_areas; i++) {
        VFIOMmap *m = &region->mmaps[i];
        void *p;

        m->offset = plan->areas[i].offset;
        m->size = plan->areas[i].size;
        p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                 region->mmap_fd, region->fd_offset + m->offset);
        if (p == MAP_FAILED) {
            error_setg_errno(errp, errno, "vfio %s: cannot mmap BAR%u "
                             "[0x%" PRIx64 " + 0x%" PRIx64 "]",
                             bar->vdev->vbasedev.name, bar->nr, m->offset,
                             m->size);
            return false;
        }
        m->mmap = p;
    }
    return true;
}

bool vfio_bar_setup(VFIOBar *bar, VFIOBarPlan *plan, Error **errp)
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
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_ALWAYS, true);
    } else {
        /* Both renderings; the plan's current state is the enabled one. */
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                          false);
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_PBA_OFF, !pba_enabled);
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                          true);
        vfio_bar_render_view(bar, VFIO_BAR_VIEW_PBA_ON, pba_enabled);
        vfio_bar_plan_set_overlay_enabled(plan, VFIO_BAR_OVERLAY_MSIX_PBA,
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

void vfio_bar_sync_pba(VFIOBar *bar, bool pba_enabled)
{
    bool cur;

    if (!bar->plan || !vfio_bar_plan_has_pba(bar->plan, &cur) ||
        cur == pba_enabled) {
        return;
    }
    vfio_bar_plan_set_overlay_enabled(bar->plan, VFIO_BAR_OVERLAY_MSIX_PBA,
                                      pba_enabled);
    bar->pba_view = pba_enabled;
    trace_vfio_bar_pba_view(bar->nr, pba_enabled);
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
    for (i = 0; region->mmaps && i < region->nr_mmaps; i++) {
        if (region->mmaps[i].mmap) {
            munmap(region->mmaps[i].mmap, region->mmaps[i].size);
        }
    }
    g_clear_pointer(&region->mmaps, g_free);
    region->nr_mmaps = 0;
    if (region->mmap_fd >= 0) {
        close(region->mmap_fd);
        region->mmap_fd = -1;
    }
    if (bar->forward_init) {
        memory_region_finalize(&bar->forward);
        bar->forward_init = false;
    }
    if (memory_region_size(&bar->container)) {
        memory_region_finalize(&bar->container);
        memset(&bar->container, 0, sizeof(bar->container));
    }
    g_clear_pointer(&bar->plan, vfio_bar_plan_free);
    g_clear_pointer(&bar->page_hits, g_hash_table_destroy);
    vfio_region_caps_clear(&bar->caps);
}

void vfio_bar_init_forward(VFIOBar *bar)
{
    g_autofree char *name = g_strdup_printf("%s BAR%u",
                                            bar->vdev->vbasedev.name,
                                            bar->nr);

    memory_region_init_io(&bar->forward, OBJECT(bar->vdev),
                          &vfio_bar_forward_ops, bar, name,
                          bar->region.size);
    memory_region_add_subregion_overlap(&bar->container, 0, &bar->forward,
                                        -1);
    /*
     * Pages that cannot be mapped: over vfio-user, writes become posted
     * REGION_WRITEs sent in a batch when the ring drains (the kernel
     * backend's pwrite is synchronous either way).  The view clips this
     * to what shows the forward region, never the MSI-X overlays.
     */
    if (bar->vdev->coalesce_trapped_writes &&
        object_dynamic_cast(OBJECT(bar->vdev), TYPE_VFIO_USER_PCI)) {
        memory_region_add_coalescing(&bar->forward, 0, bar->region.size);
    }
    bar->forward_init = true;
}
