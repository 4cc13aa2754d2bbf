/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP x-query-vfio: what each vfio device maps, what traps, and how often.
 *
 * The counters come from the BAR mechanism (hw/vfio/bar.c): only accesses
 * that reach Conduit on trapped pages count, under KVM and qtest alike, so
 * an administrator sees exactly which pages make the device slow.
 */
#include "qemu/osdep.h"
#include <json-glib/json-glib.h>
#include "qapi/error.h"
#include "monitor/monitor.h"
#include "hw/pci/msix.h"
#include "pci.h"

#define VFIO_QUERY_HOT_PAGES 8

typedef struct HotPage {
    uint64_t offset;
    uint64_t accesses;
} HotPage;

static JsonArray *ranges_to_json(const VFIOBarRange *r, uint32_t n)
{
    JsonArray *arr = json_array_new();
    uint32_t i;

    for (i = 0; i < n; i++) {
        JsonObject *o = json_object_new();

        json_object_set_int_member(o, "offset", r[i].offset);
        json_object_set_int_member(o, "size", r[i].size);
        json_array_add_object_element(arr, o);
    }
    return arr;
}

/*
 * A BAR doubled by x-msix-relocation has an upper half with no device
 * memory behind it: it always exits, though the plan (of the device's
 * region) does not know it.
 */
static JsonArray *trapped_to_json(VFIOBar *bar)
{
    const VFIOBarPlan *plan = bar->plan;
    g_autofree VFIOBarRange *r = g_new(VFIOBarRange, plan->nr_trapped + 1);
    uint32_t n = plan->nr_trapped;

    memcpy(r, plan->trapped, n * sizeof(*r));
    if (bar->bar_size > plan->size) {
        if (n && r[n - 1].offset + r[n - 1].size == plan->size) {
            r[n - 1].size = bar->bar_size - r[n - 1].offset;
        } else {
            r[n++] = (VFIOBarRange) { plan->size, bar->bar_size - plan->size };
        }
    }
    return ranges_to_json(r, n);
}

static gint hot_page_cmp(gconstpointer a, gconstpointer b)
{
    const HotPage *pa = a, *pb = b;

    if (pa->accesses != pb->accesses) {
        return pa->accesses > pb->accesses ? -1 : 1;
    }
    return pa->offset < pb->offset ? -1 : pa->offset > pb->offset;
}

static JsonArray *hot_pages_to_json(VFIOBar *bar)
{
    g_autoptr(GArray) pages = g_array_new(false, false, sizeof(HotPage));
    JsonArray *arr = json_array_new();
    GHashTableIter iter;
    gpointer key, value;
    guint i;

    if (bar->page_hits) {
        g_hash_table_iter_init(&iter, bar->page_hits);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
            HotPage p = { GPOINTER_TO_SIZE(key), GPOINTER_TO_SIZE(value) };

            g_array_append_val(pages, p);
        }
    }
    g_array_sort(pages, hot_page_cmp);
    for (i = 0; i < pages->len && i < VFIO_QUERY_HOT_PAGES; i++) {
        HotPage *p = &g_array_index(pages, HotPage, i);
        JsonObject *o = json_object_new();

        json_object_set_int_member(o, "offset", p->offset);
        json_object_set_int_member(o, "accesses", p->accesses);
        json_array_add_object_element(arr, o);
    }
    return arr;
}

/* Writes that KVM completed in the kernel and Conduit replayed later. */
static uint64_t coalesced_writes(VFIOBar *bar)
{
    uint64_t n = 0;

    if (bar->forward_init) {
        n += memory_region_get_coalesced_writes(&bar->forward);
    }
    for (guint i = 0; bar->parts && i < bar->parts->len; i++) {
        VFIOBarPart *part = g_ptr_array_index(bar->parts, i);

        n += memory_region_get_coalesced_writes(&part->mr);
    }
    return n;
}

static JsonObject *bar_to_json(VFIOBar *bar)
{
    JsonObject *o = json_object_new();
    VFIOBarRange whole = { 0, bar->bar_size };
    uint64_t fr, fw, sr, sw;

    json_object_set_int_member(o, "bar", bar->nr);
    json_object_set_int_member(o, "size", bar->bar_size);
    if (bar->plan && !bar->hidden) {
        json_object_set_array_member(o, "mapped",
            ranges_to_json(bar->plan->areas, bar->plan->nr_areas));
        json_object_set_array_member(o, "trapped", trapped_to_json(bar));
    } else {
        /* No device memory behind it (broken, or only emulated MSI-X). */
        json_object_set_array_member(o, "mapped", json_array_new());
        json_object_set_array_member(o, "trapped",
                                     ranges_to_json(&whole, 1));
    }
    vfio_bar_get_counts(bar, &fr, &fw, &sr, &sw);
    json_object_set_int_member(o, "forwarded-reads", fr);
    json_object_set_int_member(o, "forwarded-writes", fw);
    json_object_set_int_member(o, "mmap-served-reads", sr);
    json_object_set_int_member(o, "mmap-served-writes", sw);
    json_object_set_int_member(o, "coalesced-writes", coalesced_writes(bar));
    json_object_set_array_member(o, "hot-pages", hot_pages_to_json(bar));
    if (bar->plan) {
        json_object_set_boolean_member(o, "msix-mappable",
                                       bar->plan->msix_mappable);
    }
    return o;
}

static uint64_t region_accesses(MemoryRegion *mr)
{
    uint64_t r, w;

    memory_region_get_access_counts(mr, &r, &w);
    return r + w;
}

static JsonObject *msix_to_json(VFIOPCIDevice *vdev)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    VFIOMsixInfo *m = &vdev->msix;
    JsonObject *o = json_object_new();
    g_autofree char *mode = object_property_get_str(OBJECT(vdev),
                                                    "x-msix-relocation",
                                                    NULL);
    uint32_t i, fast = 0;

    for (i = 0; i < vdev->nr_msix_vectors; i++) {
        fast += vdev->msix_vectors[i].bypassed;
    }
    json_object_set_int_member(o, "bar", m->emu_table_bar);
    json_object_set_int_member(o, "table-offset", m->emu_table_offset);
    json_object_set_int_member(o, "pba-bar", m->emu_pba_bar);
    json_object_set_int_member(o, "pba-offset", m->emu_pba_offset);
    json_object_set_int_member(o, "vectors", m->entries);
    json_object_set_boolean_member(o, "relocated", m->relocated);
    json_object_set_string_member(o, "relocation", mode ? mode : "");
    json_object_set_string_member(o, "relocation-decision",
                                  m->decision ? m->decision : "");
    json_object_set_boolean_member(o, "table-emulated",
        memory_region_is_enabled(msix_table_region(pdev)));
    json_object_set_boolean_member(o, "pba-emulated", msix_pba_enabled(pdev));
    json_object_set_int_member(o, "table-accesses",
                               region_accesses(msix_table_region(pdev)));
    json_object_set_int_member(o, "pba-accesses",
                               region_accesses(msix_pba_region(pdev)));
    /* Under KVM a deliverable vector should never wake Conduit. */
    json_object_set_int_member(o, "slow-path-interrupts",
                               vdev->msix_slow_path_irqs);
    json_object_set_int_member(o, "fast-path-vectors", fast);
    return o;
}

/* x-coalesce-trapped-writes as the BAR plans resolved it. */
static bool coalesces(VFIOPCIDevice *vdev)
{
    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        if (vdev->bars[i].plan && vdev->bars[i].plan->coalesce_served) {
            return true;
        }
    }
    return false;
}

static JsonObject *device_to_json(VFIOPCIDevice *vdev)
{
    JsonObject *o = json_object_new();
    JsonArray *bars = json_array_new();
    DeviceState *dev = DEVICE(vdev);
    int i;

    json_object_set_string_member(o, "id", dev->id ? dev->id : "");
    json_object_set_string_member(o, "driver",
                                  object_get_typename(OBJECT(vdev)));
    json_object_set_string_member(o, "name", vdev->vbasedev.name);
    json_object_set_int_member(o, "host-page-size",
                               vdev->page_size_override
                               ? vdev->page_size_override
                               : vdev->host_page_size);
    json_object_set_boolean_member(o, "broken", vdev->vbasedev.broken);
    json_object_set_boolean_member(o, "coalesce-trapped-writes",
                                   coalesces(vdev));
    for (i = 0; i < PCI_ROM_SLOT; i++) {
        if (vdev->bars[i].bar_size) {
            json_array_add_object_element(bars, bar_to_json(&vdev->bars[i]));
        }
    }
    json_object_set_array_member(o, "bars", bars);
    if (msix_present(PCI_DEVICE(vdev))) {
        json_object_set_object_member(o, "msix", msix_to_json(vdev));
    }
    return o;
}

static void qmp_x_query_vfio(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *arr = json_array_new();
    JsonNode *node = json_node_new(JSON_NODE_ARRAY);
    GList *l;

    for (l = vfio_pci_devices(); l; l = l->next) {
        json_array_add_object_element(arr, device_to_json(l->data));
    }
    json_node_take_array(node, arr);
    *ret = node;
}

static void __attribute__((constructor)) vfio_query_register(void)
{
    qmp_register_command_args("x-query-vfio", qmp_x_query_vfio, "",
                              QCO_NO_OPTIONS);
}
