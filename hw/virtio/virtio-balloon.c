/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-balloon-pci: the memory balloon (virtio 1.2, 5.5).  Written from
 * the specification, <linux/virtio_balloon.h> and QEMU's documentation of
 * the QMP interface (balloon, query-balloon, BALLOON_CHANGE, the
 * guest-stats and guest-stats-polling-interval properties).
 *
 * The host sets a target (num_pages, in 4 KiB pages the guest should give
 * up) with QMP "balloon" and raises a configuration change interrupt; the
 * driver puts page frame numbers on the inflate queue and reports how
 * many it holds in "actual", which becomes BALLOON_CHANGE.  Inflated
 * pages are given back to the host: MADV_REMOVE on Conduit's memfd RAM
 * (a hole punched in the memfd, seen by every mapping of it, KVM's
 * included), MADV_DONTNEED on private memory.  While a device pins guest
 * RAM for DMA (kernel VFIO: its IOMMU mappings keep the old pages, so a
 * later guest write would land where the device no longer looks) RAM is
 * never discarded, as in QEMU: the guest's accounting still works.
 *
 * The queues carry little traffic and feed QMP, so they are served in
 * the main loop: the transport's worker only schedules a bottom half.
 * Queue roles follow the negotiated features in order (inflate, deflate,
 * stats, then free page reporting), as a driver numbers them.
 */
#include "qemu/osdep.h"
#include <sys/mman.h>
#include <linux/virtio_balloon.h>
#include <linux/virtio_ids.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "migration/vmstate.h"
#include "hw/qdev-properties.h"
#include "monitor/monitor.h"
#include "system/memory.h"
#include "hw/virtio/virtio-pci.h"
#include "hw/virtio/virtio-balloon.h"
#include "trace.h"

#define TYPE_VIRTIO_BALLOON_PCI "virtio-balloon-pci"
#define VIRTIO_BALLOON_PCI(obj) \
    OBJECT_CHECK(VirtIOBalloonPCI, (obj), TYPE_VIRTIO_BALLOON_PCI)

#define BALLOON_PAGE_SIZE (1ull << VIRTIO_BALLOON_PFN_SHIFT)
#define BALLOON_QUEUE_SIZE 128
/* Queue roles; the queue index of each depends on the features. */
enum {
    ROLE_INFLATE,
    ROLE_DEFLATE,
    ROLE_STATS,
    ROLE_REPORTING,
    ROLE_NR,
};

typedef struct VirtIOBalloonPCI {
    VirtIOPCIProxy parent_obj;

    QEMUBH *bh;
    uint32_t kicked;            /* atomic: bit per queue the worker saw */
    int role_queue[ROLE_NR];    /* queue index, -1 if not negotiated */

    uint32_t num_pages;         /* target: pages the guest should hold */
    uint32_t actual;            /* what the driver says it holds */

    /* Statistics (main loop). */
    VirtQueueElement *stats_elem;
    bool stats_held;            /* stats_elem is the driver's buffer */
    uint64_t stats[VIRTIO_BALLOON_S_NR];
    int64_t stats_last_update;
    int64_t stats_poll_interval;
    QEMUTimer *stats_timer;
    VirtQueueElement *elem;

    uint64_t discarded_pages;
    uint64_t kept_pages;        /* inflated but not discarded */

    /* Properties. */
    bool deflate_on_oom;
    bool free_page_reporting;
} VirtIOBalloonPCI;

/* QEMU's names for the statistics tags (VIRTIO_BALLOON_S_*). */
static const char *const balloon_stat_names[VIRTIO_BALLOON_S_NR] = {
    [VIRTIO_BALLOON_S_SWAP_IN] = "stat-swap-in",
    [VIRTIO_BALLOON_S_SWAP_OUT] = "stat-swap-out",
    [VIRTIO_BALLOON_S_MAJFLT] = "stat-major-faults",
    [VIRTIO_BALLOON_S_MINFLT] = "stat-minor-faults",
    [VIRTIO_BALLOON_S_MEMFREE] = "stat-free-memory",
    [VIRTIO_BALLOON_S_MEMTOT] = "stat-total-memory",
    [VIRTIO_BALLOON_S_AVAIL] = "stat-available-memory",
    [VIRTIO_BALLOON_S_CACHES] = "stat-disk-caches",
    [VIRTIO_BALLOON_S_HTLB_PGALLOC] = "stat-htlb-pgalloc",
    [VIRTIO_BALLOON_S_HTLB_PGFAIL] = "stat-htlb-pgfail",
};

/* The one balloon QMP talks to (QEMU supports one). */
static VirtIOBalloonPCI *the_balloon;

static uint64_t balloon_ram_size(void)
{
    return current_machine ? current_machine->ram_size : 0;
}

/* ---- giving pages back ------------------------------------------------- */

/*
 * Discards [gpa, gpa + len) if it is guest RAM.  Host pages only: on a
 * host with larger pages a partial page stays (the guest's accounting
 * does not depend on it).
 */
static void balloon_discard(VirtIOBalloonPCI *b, GuestMemMap *map,
                            uint64_t gpa, uint64_t len)
{
    uint64_t hps = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = ROUND_UP(gpa, hps), end;
    uint8_t *hva;

    if (ram_block_discard_is_disabled()) {
        b->kept_pages += len / BALLOON_PAGE_SIZE;
        return;
    }
    if (gpa + len < gpa) {
        return;
    }
    end = (gpa + len) & ~(hps - 1);
    if (end <= start) {
        b->kept_pages += len / BALLOON_PAGE_SIZE;
        return;
    }
    hva = guest_mem_translate(map, start, end - start);
    if (!hva) {
        qemu_log_guest_error("virtio-balloon %s: pages 0x%" PRIx64 "+0x%"
                             PRIx64 " are not guest RAM\n",
                             virtio_pci_name(VIRTIO_PCI(b)), gpa, len);
        return;
    }
    /* A hole in the memfd; private memory just drops its pages. */
    if (madvise(hva, end - start, MADV_REMOVE) < 0 &&
        madvise(hva, end - start, MADV_DONTNEED) < 0) {
        warn_report("virtio-balloon %s: cannot discard guest pages: %s",
                    virtio_pci_name(VIRTIO_PCI(b)), strerror(errno));
        return;
    }
    b->discarded_pages += (end - start) / BALLOON_PAGE_SIZE;
    trace_virtio_balloon_discard(virtio_pci_name(VIRTIO_PCI(b)), start,
                                 end - start);
}

/* An inflate or deflate buffer: le32 page frame numbers. */
static void balloon_handle_pfns(VirtIOBalloonPCI *b, GuestMemMap *map,
                                VirtQueueElement *elem, bool inflate)
{
    uint32_t pfns[256];
    size_t off = 0;

    while (off + 4 <= elem->out_len) {
        size_t got = iov_to_buf(elem->sg, elem->out_num, off, pfns,
                                MIN(sizeof(pfns),
                                    (elem->out_len - off) & ~3ul));
        size_t n = got / 4;

        if (!n) {
            break;
        }
        off += n * 4;
        for (size_t i = 0; i < n; i++) {
            pfns[i] = GUINT32_FROM_LE(pfns[i]);
        }
        for (size_t i = 0; i < n;) {
            uint64_t first, count;

            i = virtio_balloon_next_run(pfns, n, i, &first, &count);
            trace_virtio_balloon_pages(virtio_pci_name(VIRTIO_PCI(b)),
                                       inflate, first, count);
            if (inflate) {
                balloon_discard(b, map, first << VIRTIO_BALLOON_PFN_SHIFT,
                                count << VIRTIO_BALLOON_PFN_SHIFT);
            }
            /* Deflated pages fault back in, zeroed, when next used. */
        }
    }
}

/* A free page report: writable buffers whose pages the guest does not use. */
static void balloon_handle_report(VirtIOBalloonPCI *b, GuestMemMap *map,
                                  VirtQueueElement *elem)
{
    /* The element holds host addresses: discard them through the map. */
    for (unsigned i = elem->out_num; i < elem->out_num + elem->in_num; i++) {
        uint8_t *p = elem->sg[i].iov_base;
        uint64_t hps = (uint64_t)sysconf(_SC_PAGESIZE);
        uintptr_t start = ROUND_UP((uintptr_t)p, hps);
        uintptr_t end = ((uintptr_t)p + elem->sg[i].iov_len) & ~(hps - 1);

        if (ram_block_discard_is_disabled() || end <= start) {
            continue;
        }
        if (madvise((void *)start, end - start, MADV_REMOVE) < 0) {
            madvise((void *)start, end - start, MADV_DONTNEED);
        }
    }
}

/* ---- statistics -------------------------------------------------------- */

static void balloon_stats_parse(VirtIOBalloonPCI *b, VirtQueueElement *elem)
{
    struct virtio_balloon_stat st;
    size_t off = 0;

    for (unsigned i = 0; i < VIRTIO_BALLOON_S_NR; i++) {
        b->stats[i] = UINT64_MAX;
    }
    while (iov_to_buf(elem->sg, elem->out_num, off, &st, sizeof(st)) ==
           sizeof(st)) {
        uint16_t tag = GUINT16_FROM_LE(st.tag);

        off += sizeof(st);
        /* Tags a newer driver knows are skipped, as the spec asks. */
        if (tag < VIRTIO_BALLOON_S_NR) {
            b->stats[tag] = GUINT64_FROM_LE(st.val);
        }
    }
    b->stats_last_update = g_get_real_time() / G_USEC_PER_SEC;
}

/* Gives the driver its stats buffer back: that is the request for more. */
static void balloon_stats_request(VirtIOBalloonPCI *b)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(b);
    int q = b->role_queue[ROLE_STATS];
    GuestMemMap *map;

    if (!b->stats_held || q < 0 || !proxy->running) {
        return;
    }
    map = virtio_pci_get_mem(proxy);
    virtqueue_push(&proxy->vqs[q].vq, map, b->stats_elem->index, 0);
    b->stats_held = false;
    virtio_pci_notify_queue(proxy, q, map);
    guest_mem_map_unref(map);
}

static void balloon_stats_timer(void *opaque)
{
    VirtIOBalloonPCI *b = opaque;

    balloon_stats_request(b);
    if (b->stats_poll_interval > 0) {
        timer_mod(b->stats_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
                  b->stats_poll_interval * 1000);
    }
}

/* ---- the queues (main loop) -------------------------------------------- */

static int balloon_role_of(VirtIOBalloonPCI *b, unsigned q)
{
    for (int r = 0; r < ROLE_NR; r++) {
        if (b->role_queue[r] == (int)q) {
            return r;
        }
    }
    return -1;
}

static void balloon_run_queue(VirtIOBalloonPCI *b, unsigned q,
                              GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(b);
    VirtQueue *vq = &proxy->vqs[q].vq;
    int role = balloon_role_of(b, q);
    bool pushed = false;

    for (unsigned done = 0; done < BALLOON_QUEUE_SIZE * 2; done++) {
        const char *why;
        VirtQueueElement *elem = b->elem;
        VirtQueuePop res;

        res = virtqueue_pop(vq, map, elem, &why);
        if (res == VIRTQUEUE_EMPTY) {
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            break;
        }
        if (res == VIRTQUEUE_BROKEN) {
            virtio_pci_set_needs_reset(proxy, why);
            break;
        }
        if (res == VIRTQUEUE_BAD_CHAIN || role < 0) {
            qemu_log_guest_error("virtio-balloon %s: bad buffer %u on queue "
                                 "%u: %s\n", virtio_pci_name(proxy),
                                 elem->index, q, why ? why : "no such queue");
            virtqueue_push(vq, map, elem->index, 0);
            pushed = true;
            continue;
        }
        switch (role) {
        case ROLE_INFLATE:
        case ROLE_DEFLATE:
            balloon_handle_pfns(b, map, elem, role == ROLE_INFLATE);
            break;
        case ROLE_STATS:
            if (b->stats_held) {
                /* One buffer at a time: the older one goes back. */
                qemu_log_guest_error("virtio-balloon %s: second stats "
                                     "buffer\n", virtio_pci_name(proxy));
                virtqueue_push(vq, map, b->stats_elem->index, 0);
                pushed = true;
            }
            /* Keep this one: swap it into the held slot. */
            b->elem = b->stats_elem;
            b->stats_elem = elem;
            balloon_stats_parse(b, elem);
            /* Held until the next poll. */
            b->stats_held = true;
            trace_virtio_balloon_stats(virtio_pci_name(proxy),
                                       b->stats_last_update);
            continue;
        case ROLE_REPORTING:
            balloon_handle_report(b, map, elem);
            break;
        }
        virtqueue_push(vq, map, elem->index, 0);
        pushed = true;
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, q, map);
    }
}

static void balloon_bh(void *opaque)
{
    VirtIOBalloonPCI *b = opaque;
    VirtIOPCIProxy *proxy = VIRTIO_PCI(b);
    uint32_t kicked = __atomic_exchange_n(&b->kicked, 0, __ATOMIC_SEQ_CST);
    GuestMemMap *map;

    if (!proxy->running || !kicked) {
        return;
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        if ((kicked & (1u << q)) && proxy->vqs[q].enabled) {
            balloon_run_queue(b, q, map);
        }
    }
    guest_mem_map_unref(map);
}

/* Worker thread: hand the queue to the main loop. */
static void balloon_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                 GuestMemMap *map)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);

    __atomic_fetch_or(&b->kicked, 1u << q, __ATOMIC_SEQ_CST);
    qemu_bh_schedule(b->bh);
}

/* ---- configuration ----------------------------------------------------- */

static void balloon_update_config(VirtIOBalloonPCI *b)
{
    struct virtio_balloon_config *cfg = (void *)VIRTIO_PCI(b)->config;

    cfg->num_pages = GUINT32_TO_LE(b->num_pages);
    cfg->actual = GUINT32_TO_LE(b->actual);
}

static void balloon_config_written(VirtIOPCIProxy *proxy, uint32_t off,
                                   unsigned len)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);
    struct virtio_balloon_config *cfg = (void *)proxy->config;
    uint32_t old = b->actual;

    /* Only "actual" is the driver's; everything else reads back ours. */
    b->actual = GUINT32_FROM_LE(cfg->actual);
    balloon_update_config(b);
    if (b->actual != old) {
        uint64_t ram = balloon_ram_size();
        uint64_t held = (uint64_t)b->actual << VIRTIO_BALLOON_PFN_SHIFT;
        JsonObject *data = json_object_new();

        trace_virtio_balloon_actual(virtio_pci_name(proxy), old, b->actual);
        json_object_set_int_member(data, "actual",
                                   held < ram ? ram - held : 0);
        qapi_event_send("BALLOON_CHANGE", data);
    }
}

static bool balloon_start(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);

    virtio_balloon_map_queues(proxy->guest_features, b->free_page_reporting,
                              b->role_queue);
    /*
     * A stats buffer held across a VM stop is still the driver's one
     * request slot: only a reset (balloon_reset) lets go of it.
     */
    __atomic_store_n(&b->kicked, 0, __ATOMIC_SEQ_CST);
    return true;
}

static void balloon_reset(VirtIOPCIProxy *proxy)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);

    /* The driver is gone: it holds no pages, its buffer is void. */
    b->stats_held = false;
    b->actual = 0;
    if (proxy->config) {
        balloon_update_config(b);
    }
    if (b->bh) {
        qemu_bh_cancel(b->bh);
    }
    __atomic_store_n(&b->kicked, 0, __ATOMIC_SEQ_CST);
}

/* ---- QOM properties ---------------------------------------------------- */

static JsonNode *balloon_get_stats(Object *obj, const char *name,
                                   void *opaque, Error **errp)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(obj);
    JsonObject *stats = json_object_new();
    JsonObject *o = json_object_new();

    for (unsigned i = 0; i < VIRTIO_BALLOON_S_NR; i++) {
        /* Unreported statistics are -1, as QEMU's uint64 all-ones. */
        json_object_set_int_member(stats, balloon_stat_names[i],
                                   (int64_t)b->stats[i]);
    }
    json_object_set_object_member(o, "stats", stats);
    json_object_set_int_member(o, "last-update", b->stats_last_update);
    return qmp_node_new_object(o);
}

static JsonNode *balloon_get_poll_interval(Object *obj, const char *name,
                                           void *opaque, Error **errp)
{
    JsonNode *n = json_node_new(JSON_NODE_VALUE);

    json_node_set_int(n, VIRTIO_BALLOON_PCI(obj)->stats_poll_interval);
    return n;
}

static bool balloon_set_poll_interval(Object *obj, const char *name,
                                      JsonNode *value, void *opaque,
                                      Error **errp)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(obj);
    int64_t v;

    if (!JSON_NODE_HOLDS_VALUE(value) ||
        json_node_get_value_type(value) != G_TYPE_INT64) {
        error_setg(errp, "Invalid parameter type for '%s', expected: "
                   "integer", name);
        return false;
    }
    v = json_node_get_int(value);
    if (v < 0) {
        error_setg(errp, "timer value must be greater than zero");
        return false;
    }
    if (v > UINT32_MAX) {
        error_setg(errp, "timer value is too big");
        return false;
    }
    if (!v) {
        b->stats_poll_interval = 0;
        timer_del(b->stats_timer);
        return true;
    }
    /* Turned on: ask at once; a new interval: from now on. */
    timer_mod(b->stats_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
              (b->stats_poll_interval ? v * 1000 : 0));
    b->stats_poll_interval = v;
    return true;
}

/* ---- life cycle -------------------------------------------------------- */

static bool balloon_realize(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);
    unsigned nvqs = 3;

    if (the_balloon) {
        error_setg(errp, "Only one balloon device is supported");
        return false;
    }
    proxy->host_features |= 1ull << VIRTIO_BALLOON_F_STATS_VQ;
    if (b->deflate_on_oom) {
        proxy->host_features |= 1ull << VIRTIO_BALLOON_F_DEFLATE_ON_OOM;
    }
    if (b->free_page_reporting) {
        proxy->host_features |= 1ull << VIRTIO_BALLOON_F_REPORTING;
        nvqs++;
    }
    proxy->nvqs = nvqs;
    for (unsigned q = 0; q < nvqs; q++) {
        proxy->vqs[q].max_size = BALLOON_QUEUE_SIZE;
    }
    proxy->config_len = sizeof(struct virtio_balloon_config);
    proxy->config = g_malloc0(proxy->config_len);
    for (unsigned i = 0; i < VIRTIO_BALLOON_S_NR; i++) {
        b->stats[i] = UINT64_MAX;
    }
    b->elem = g_new0(VirtQueueElement, 1);
    b->stats_elem = g_new0(VirtQueueElement, 1);
    b->bh = qemu_bh_new(balloon_bh, b);
    b->stats_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, balloon_stats_timer, b);
    b->num_pages = b->actual = 0;
    balloon_update_config(b);
    the_balloon = b;
    return true;
}

static void balloon_unrealize(VirtIOPCIProxy *proxy)
{
    VirtIOBalloonPCI *b = VIRTIO_BALLOON_PCI(proxy);

    if (the_balloon == b) {
        the_balloon = NULL;
    }
    timer_free(b->stats_timer);
    b->stats_timer = NULL;
    if (b->bh) {
        qemu_bh_delete(b->bh);
        b->bh = NULL;
    }
    g_free(b->elem);
    g_free(b->stats_elem);
    b->elem = b->stats_elem = NULL;
}

/* ---- QMP --------------------------------------------------------------- */

static bool balloon_active(Error **errp)
{
    if (!the_balloon) {
        error_set(errp, ERROR_CLASS_DEVICE_NOT_ACTIVE,
                  "No balloon device has been activated");
        return false;
    }
    return true;
}

static void qmp_balloon(JsonObject *args, JsonNode **ret, Error **errp)
{
    int64_t value = json_object_get_int_member(args, "value");
    VirtIOBalloonPCI *b;

    if (!balloon_active(errp)) {
        return;
    }
    if (value <= 0) {
        error_setg(errp, "Parameter 'target' expects a size");
        return;
    }
    b = the_balloon;
    b->num_pages = virtio_balloon_target_pages(balloon_ram_size(), value);
    trace_virtio_balloon_target(virtio_pci_name(VIRTIO_PCI(b)), value,
                                b->num_pages);
    balloon_update_config(b);
    virtio_pci_notify_config(VIRTIO_PCI(b));
}

static void qmp_query_balloon(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *o;
    uint64_t ram = balloon_ram_size(), held;

    if (!balloon_active(errp)) {
        return;
    }
    held = (uint64_t)the_balloon->actual << VIRTIO_BALLOON_PFN_SHIFT;
    o = json_object_new();
    json_object_set_int_member(o, "actual", held < ram ? ram - held : 0);
    *ret = qmp_node_new_object(o);
}

/* Telemetry: what reached the host (tests, x-query-balloon). */
static void qmp_x_query_balloon(JsonObject *args, JsonNode **ret,
                                Error **errp)
{
    JsonObject *o;

    if (!balloon_active(errp)) {
        return;
    }
    o = json_object_new();
    json_object_set_int_member(o, "num-pages", the_balloon->num_pages);
    json_object_set_int_member(o, "actual-pages", the_balloon->actual);
    json_object_set_int_member(o, "discarded-pages",
                               the_balloon->discarded_pages);
    json_object_set_int_member(o, "kept-pages", the_balloon->kept_pages);
    json_object_set_boolean_member(o, "discard-disabled",
                                   ram_block_discard_is_disabled());
    *ret = qmp_node_new_object(o);
}

static void __attribute__((constructor)) virtio_balloon_qmp_register(void)
{
    qmp_register_command_args("balloon", qmp_balloon, "value:i", 0);
    qmp_register_command_args("query-balloon", qmp_query_balloon, "", 0);
    qmp_register_command_args("x-query-balloon", qmp_x_query_balloon, "", 0);
}

static const Property virtio_balloon_props[] = {
    DEFINE_PROP_BOOL("deflate-on-oom", VirtIOBalloonPCI, deflate_on_oom,
                     false,
                     .description = "the guest may take pages back from the "
                                    "balloon when it runs out of memory"),
    DEFINE_PROP_BOOL("free-page-reporting", VirtIOBalloonPCI,
                     free_page_reporting, false,
                     .description = "the guest reports free pages, which "
                                    "the host discards"),
    DEFINE_PROP_END_OF_LIST(),
};

/* ---- migration --------------------------------------------------------- */

/*
 * The VM is stopped: the stats buffer the device holds (the driver's
 * only one, popped and waiting for the next poll) goes back to its
 * queue, so the destination pops it again and can still ask for fresh
 * numbers.  Only the stats queue's own pops hold one, the last of them.
 * If the migration fails, the source pops it again.
 */
static bool balloon_pre_save(void *opaque, Error **errp)
{
    VirtIOBalloonPCI *b = opaque;
    int q = b->role_queue[ROLE_STATS];

    if (b->stats_held && q >= 0) {
        VIRTIO_PCI(b)->vqs[q].vq.last_avail_idx--;
        b->stats_held = false;
    }
    return true;
}

static bool balloon_post_load(void *opaque, int version_id, Error **errp)
{
    VirtIOBalloonPCI *b = opaque;
    uint64_t pages = balloon_ram_size() >> VIRTIO_BALLOON_PFN_SHIFT;

    if (b->num_pages > pages || b->stats_poll_interval < 0 ||
        b->stats_poll_interval > UINT32_MAX) {
        error_setg(errp, "virtio-balloon %s: target of %u pages (RAM has "
                   "%" PRIu64 ") or polling interval %" PRId64 " out of "
                   "range", virtio_pci_name(VIRTIO_PCI(b)), b->num_pages,
                   pages, b->stats_poll_interval);
        return false;
    }
    /* The device config the transport loaded says the same. */
    balloon_update_config(b);
    if (b->stats_poll_interval) {
        timer_mod(b->stats_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
                  b->stats_poll_interval * 1000);
    } else {
        timer_del(b->stats_timer);
    }
    return true;
}

/*
 * The host's target and what the driver holds (a destination without
 * them would tell the guest to give all its memory back), the polling
 * interval libvirt set and the last statistics.
 */
static const VMStateDescription vmstate_virtio_balloon = {
    .name = "virtio-balloon",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = balloon_pre_save,
    .post_load = balloon_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, VirtIOBalloonPCI, vmstate_virtio_pci,
                       VirtIOPCIProxy),
        VMSTATE_UINT32(num_pages, VirtIOBalloonPCI),
        VMSTATE_UINT32(actual, VirtIOBalloonPCI),
        VMSTATE_UINT64_ARRAY(stats, VirtIOBalloonPCI),
        VMSTATE_INT64(stats_last_update, VirtIOBalloonPCI),
        VMSTATE_INT64(stats_poll_interval, VirtIOBalloonPCI),
        VMSTATE_UINT64(discarded_pages, VirtIOBalloonPCI),
        VMSTATE_UINT64(kept_pages, VirtIOBalloonPCI),
        VMSTATE_END_OF_LIST()
    },
};

static void virtio_balloon_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);
    ObjectProperty *p;

    dc->desc = "virtio memory balloon (virtio 1.x, PCI)";
    dc->vmsd = &vmstate_virtio_balloon;
    device_class_set_props(dc, virtio_balloon_props);
    /* Class: other system peripheral, as QEMU's. */
    virtio_pci_class_set_device(klass, VIRTIO_ID_BALLOON, 0x00ff);
    vc->realize = balloon_realize;
    vc->unrealize = balloon_unrealize;
    vc->config_written = balloon_config_written;
    vc->start = balloon_start;
    vc->handle_queue = balloon_handle_queue;
    vc->reset = balloon_reset;
    p = object_class_property_add(klass, "guest-stats", "guest-stats",
                                  balloon_get_stats, NULL, NULL, NULL);
    object_property_set_description(p, "the guest's memory statistics "
                                       "and when they arrived");
    p = object_class_property_add(klass, "guest-stats-polling-interval",
                                  "int", balloon_get_poll_interval,
                                  balloon_set_poll_interval, NULL, NULL);
    object_property_set_description(p, "seconds between statistics "
                                       "requests (0: none)");
}

static const TypeInfo virtio_balloon_types[] = {
    {
        .name = TYPE_VIRTIO_BALLOON_PCI,
        .parent = TYPE_VIRTIO_PCI,
        .instance_size = sizeof(VirtIOBalloonPCI),
        .class_init = virtio_balloon_class_init,
    },
};

DEFINE_TYPES(virtio_balloon_types)
