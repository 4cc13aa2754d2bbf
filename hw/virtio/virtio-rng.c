/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-rng-pci: the entropy device (virtio 1.2, 5.4), fed by an rng
 * back-end (system/rng.h): rng=ID names an -object rng-random or
 * rng-builtin; without it the device gets a private rng-builtin, as in
 * QEMU.  max-bytes / period (ms) limit the rate: at most max-bytes per
 * period, the rest waits for the next period.
 *
 * The driver posts writable buffers on its one queue; each is filled
 * with what the back-end has (never more than the quota) and returned.
 * A buffer the back-end cannot fill now stays with the device until the
 * back-end's fd is readable or the next period starts.  The queue is
 * served in the main loop (the back-end lives there): the transport's
 * worker only schedules a bottom half.
 */
#include "qemu/osdep.h"
#include <linux/virtio_ids.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "system/rng.h"
#include "hw/virtio/virtio-pci.h"
#include "trace.h"

#define TYPE_VIRTIO_RNG_PCI "virtio-rng-pci"
#define VIRTIO_RNG_PCI(obj) \
    OBJECT_CHECK(VirtIORngPCI, (obj), TYPE_VIRTIO_RNG_PCI)

#define RNG_QUEUE_SIZE 8
#define RNG_CHUNK 4096
/* Buffers served per bottom half before yielding to the main loop. */
#define RNG_BATCH 64

typedef struct VirtIORngPCI {
    VirtIOPCIProxy parent_obj;

    RngBackend *rng;
    bool own_rng;               /* the default rng-builtin is ours */
    QEMUBH *bh;
    QEMUTimer *rate_timer;
    int watched_fd;             /* back-end fd we wait on, or -1 */
    VirtQueueElement *elem;
    bool elem_pending;          /* popped, not yet filled */
    uint64_t quota;             /* bytes left in this period */
    uint64_t bytes;             /* delivered, for telemetry */
    uint8_t buf[RNG_CHUNK];

    /* Properties. */
    char *rng_id;
    uint64_t max_bytes;
    uint32_t period_ms;
} VirtIORngPCI;

static void virtio_rng_process(VirtIORngPCI *r);

static void virtio_rng_fd_ready(void *opaque)
{
    VirtIORngPCI *r = opaque;

    qemu_set_fd_handler(r->watched_fd, NULL, NULL, NULL);
    r->watched_fd = -1;
    virtio_rng_process(r);
}

static void virtio_rng_wait_backend(VirtIORngPCI *r)
{
    int fd = rng_backend_wait_fd(r->rng);

    if (fd >= 0 && r->watched_fd < 0) {
        r->watched_fd = fd;
        qemu_set_fd_handler(fd, virtio_rng_fd_ready, NULL, r);
    } else if (fd < 0) {
        /* getrandom() without entropy yet: try again soon. */
        qemu_bh_schedule(r->bh);
    }
}

static void virtio_rng_unwatch(VirtIORngPCI *r)
{
    if (r->watched_fd >= 0) {
        qemu_set_fd_handler(r->watched_fd, NULL, NULL, NULL);
        r->watched_fd = -1;
    }
}

/* Fills buffers while there is quota, entropy and buffers. */
static void virtio_rng_process(VirtIORngPCI *r)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(r);
    VirtQueue *vq = &proxy->vqs[0].vq;
    GuestMemMap *map;
    bool pushed = false;

    if (!proxy->running || !proxy->vqs[0].enabled) {
        return;
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned done = 0; done < RNG_BATCH; done++) {
        size_t want;
        ssize_t got;

        if (!r->elem_pending) {
            const char *why;
            VirtQueuePop res = virtqueue_pop(vq, map, r->elem, &why);

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
            if (res == VIRTQUEUE_BAD_CHAIN || !r->elem->in_len) {
                qemu_log_guest_error("virtio-rng %s: bad buffer %u: %s\n",
                                     virtio_pci_name(proxy), r->elem->index,
                                     why ? why : "no writable buffer");
                virtqueue_push(vq, map, r->elem->index, 0);
                pushed = true;
                continue;
            }
            r->elem_pending = true;
        }
        if (!r->quota) {
            /* The rate timer brings the next period's quota. */
            break;
        }
        want = MIN(MIN(r->elem->in_len, sizeof(r->buf)), r->quota);
        got = rng_backend_read(r->rng, r->buf, want);
        if (got == 0) {
            virtio_rng_wait_backend(r);
            break;
        }
        if (got < 0) {
            warn_report_once("virtio-rng %s: the rng back-end (%s) failed; "
                             "buffers are returned empty",
                             virtio_pci_name(proxy),
                             rng_backend_name(r->rng));
            got = 0;
        }
        iov_from_buf(r->elem->sg + r->elem->out_num, r->elem->in_num, 0,
                     r->buf, got);
        virtqueue_push(vq, map, r->elem->index, got);
        r->elem_pending = false;
        r->quota -= got;
        r->bytes += got;
        pushed = true;
        trace_virtio_rng_fill(virtio_pci_name(proxy), r->elem->index, got,
                              r->quota);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, 0, map);
    }
    guest_mem_map_unref(map);
}

static void virtio_rng_bh(void *opaque)
{
    virtio_rng_process(opaque);
}

static void virtio_rng_rate_timer(void *opaque)
{
    VirtIORngPCI *r = opaque;

    r->quota = r->max_bytes;
    timer_mod(r->rate_timer,
              qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) + r->period_ms);
    virtio_rng_process(r);
}

/* Worker thread: the main loop serves the queue. */
static void virtio_rng_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                    GuestMemMap *map)
{
    qemu_bh_schedule(VIRTIO_RNG_PCI(proxy)->bh);
}

static void virtio_rng_reset(VirtIOPCIProxy *proxy)
{
    VirtIORngPCI *r = VIRTIO_RNG_PCI(proxy);

    /* A held buffer belonged to the old driver. */
    r->elem_pending = false;
    if (r->bh) {
        qemu_bh_cancel(r->bh);
    }
    virtio_rng_unwatch(r);
}

static bool virtio_rng_realize(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIORngPCI *r = VIRTIO_RNG_PCI(proxy);
    const char *name = virtio_pci_name(proxy);

    if (r->period_ms == 0) {
        error_setg(errp, "'period' parameter expects a positive integer");
        return false;
    }
    if (r->max_bytes > INT64_MAX) {
        error_setg(errp, "'max-bytes' parameter must be non-negative, and "
                   "less than 2^63");
        return false;
    }
    if (r->rng_id) {
        r->rng = rng_backend_find(r->rng_id, errp);
        if (!r->rng) {
            return false;
        }
    } else {
        r->rng = rng_backend_new_builtin();
        r->own_rng = true;
    }
    if (!rng_backend_claim(r->rng, name, errp)) {
        r->rng = NULL;
        return false;
    }
    r->watched_fd = -1;
    r->elem = g_new0(VirtQueueElement, 1);
    r->bh = qemu_bh_new(virtio_rng_bh, r);
    r->quota = r->max_bytes;
    r->rate_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL, virtio_rng_rate_timer,
                                 r);
    if (r->max_bytes < INT64_MAX) {
        timer_mod(r->rate_timer,
                  qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) + r->period_ms);
    }
    proxy->nvqs = 1;
    proxy->vqs[0].max_size = RNG_QUEUE_SIZE;
    proxy->config_len = 0;
    proxy->config = NULL;
    return true;
}

static void virtio_rng_unrealize(VirtIOPCIProxy *proxy)
{
    VirtIORngPCI *r = VIRTIO_RNG_PCI(proxy);

    virtio_rng_unwatch(r);
    timer_free(r->rate_timer);
    r->rate_timer = NULL;
    if (r->bh) {
        qemu_bh_delete(r->bh);
        r->bh = NULL;
    }
    g_clear_pointer(&r->elem, g_free);
    if (r->rng) {
        rng_backend_release(r->rng);
        if (r->own_rng) {
            object_unref(r->rng);
        }
        r->rng = NULL;
    }
}

static const Property virtio_rng_props[] = {
    DEFINE_PROP_STRING("rng", VirtIORngPCI, rng_id,
                       .description = "id of the rng back-end object "
                                      "(default: a private rng-builtin)"),
    DEFINE_PROP_UINT64("max-bytes", VirtIORngPCI, max_bytes, INT64_MAX,
                       .description = "bytes the guest may take per period"),
    DEFINE_PROP_UINT32("period", VirtIORngPCI, period_ms, 1 << 16,
                       .description = "rate-limit period in milliseconds"),
    DEFINE_PROP_END_OF_LIST(),
};

/* ---- migration --------------------------------------------------------- */

/*
 * The VM is stopped: a buffer waiting for entropy or for the next
 * period's quota goes back to the queue, so the destination pops and
 * fills it; lost, it would leave the guest's read waiting forever.  Only
 * virtio_rng_process pops, and it holds the last buffer it popped.  If
 * the migration fails, the source pops it again.
 */
static bool virtio_rng_pre_save(void *opaque, Error **errp)
{
    VirtIORngPCI *r = opaque;

    if (r->elem_pending) {
        VIRTIO_PCI(r)->vqs[0].vq.last_avail_idx--;
        r->elem_pending = false;
    }
    return true;
}

/* What is left of the period's quota; this side's limit caps it. */
static bool virtio_rng_post_load(void *opaque, int version_id, Error **errp)
{
    VirtIORngPCI *r = opaque;

    r->quota = MIN(r->quota, r->max_bytes);
    return true;
}

static const VMStateDescription vmstate_virtio_rng = {
    .name = "virtio-rng",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = virtio_rng_pre_save,
    .post_load = virtio_rng_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, VirtIORngPCI, vmstate_virtio_pci,
                       VirtIOPCIProxy),
        VMSTATE_UINT64(quota, VirtIORngPCI),
        VMSTATE_UINT64(bytes, VirtIORngPCI),
        VMSTATE_END_OF_LIST()
    },
};

static void virtio_rng_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    dc->desc = "virtio entropy device (virtio 1.x, PCI)";
    dc->vmsd = &vmstate_virtio_rng;
    device_class_set_props(dc, virtio_rng_props);
    /* Class: other system peripheral, as QEMU's. */
    virtio_pci_class_set_device(klass, VIRTIO_ID_RNG, 0x00ff);
    vc->realize = virtio_rng_realize;
    vc->unrealize = virtio_rng_unrealize;
    vc->handle_queue = virtio_rng_handle_queue;
    vc->reset = virtio_rng_reset;
}

static const TypeInfo virtio_rng_types[] = {
    {
        .name = TYPE_VIRTIO_RNG_PCI,
        .parent = TYPE_VIRTIO_PCI,
        .instance_size = sizeof(VirtIORngPCI),
        .class_init = virtio_rng_class_init,
    },
};

DEFINE_TYPES(virtio_rng_types)
