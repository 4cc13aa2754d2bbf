/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-pci modern transport (virtio-pci.h).  Written from the virtio
 * 1.x specification (4.1 Virtio Over PCI Bus) and <linux/virtio_pci.h>.
 */
#include "qemu/osdep.h"
#include <glib-unix.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "system/kvm.h"
#include "monitor/monitor.h"
#include "qom/object.h"
#include "hw/virtio/guest-mem.h"
#include "hw/virtio/virtio-pci.h"
#include "hw/virtio/virtio-status.h"
#include "trace.h"

/* Realized proxies, for x-query-virtio (BQL). */
static GSList *virtio_pci_devices;

const char *virtio_pci_name(VirtIOPCIProxy *proxy)
{
    DeviceState *d = DEVICE(proxy);

    return d->id ? d->id : PCI_DEVICE(proxy)->name;
}

bool virtio_pci_has_feature(VirtIOPCIProxy *proxy, unsigned bit)
{
    return proxy->guest_features & (1ull << bit);
}

GuestMemMap *virtio_pci_get_mem(VirtIOPCIProxy *proxy)
{
    return guest_mem_tracker_get(proxy->mem);
}

/* ---- interrupts -------------------------------------------------------- */

EventNotifier *virtio_pci_queue_guest_notifier(VirtIOPCIProxy *proxy,
                                               unsigned q)
{
    uint16_t v = proxy->vqs[q].vector;

    if (!msix_enabled(PCI_DEVICE(proxy))) {
        return &proxy->intx_notifier;
    }
    return v < proxy->nvectors ? &proxy->vectors[v].notifier : NULL;
}

void virtio_pci_notify_queue(VirtIOPCIProxy *proxy, unsigned q,
                             GuestMemMap *map)
{
    EventNotifier *n;

    if (!virtqueue_should_notify(&proxy->vqs[q].vq, map)) {
        return;
    }
    if (!msix_enabled(PCI_DEVICE(proxy))) {
        __atomic_fetch_or(&proxy->isr, 1, __ATOMIC_SEQ_CST);
    }
    n = virtio_pci_queue_guest_notifier(proxy, q);
    if (n) {
        __atomic_fetch_add(&proxy->interrupts, 1, __ATOMIC_RELAXED);
        event_notifier_set(n);
    }
}

/*
 * Any thread: a configuration change notification (4.1.4.5): ISR bit 1
 * and the config vector's MSI-X message, or INTx.  Before DRIVER_OK only
 * the generation moves: a driver reading the config twice sees it changed.
 */
void virtio_pci_notify_config(VirtIOPCIProxy *proxy)
{
    uint16_t v = __atomic_load_n(&proxy->config_vector, __ATOMIC_RELAXED);
    EventNotifier *n = NULL;

    __atomic_fetch_add(&proxy->config_generation, 1, __ATOMIC_SEQ_CST);
    if (!(__atomic_load_n(&proxy->status, __ATOMIC_SEQ_CST) &
          VIRTIO_CONFIG_S_DRIVER_OK)) {
        return;
    }
    __atomic_fetch_or(&proxy->isr, VIRTIO_PCI_ISR_CONFIG, __ATOMIC_SEQ_CST);
    if (!msix_enabled(PCI_DEVICE(proxy))) {
        n = &proxy->intx_notifier;
    } else if (v < proxy->nvectors) {
        n = &proxy->vectors[v].notifier;
    }
    if (n) {
        __atomic_fetch_add(&proxy->interrupts, 1, __ATOMIC_RELAXED);
        event_notifier_set(n);
    }
    trace_virtio_pci_notify_config(virtio_pci_name(proxy),
                                   proxy->config_generation);
}

static void virtio_pci_vector_handler(EventNotifier *n)
{
    VirtIOPCIVector *v = container_of(n, VirtIOPCIVector, notifier);
    VirtIOPCIProxy *proxy;
    unsigned vector;

    if (!event_notifier_test_and_clear(n)) {
        return;
    }
    /* The vectors array belongs to exactly one proxy: find it back. */
    proxy = v->proxy;
    vector = v - proxy->vectors;
    proxy->slow_path_interrupts++;
    msix_notify(PCI_DEVICE(proxy), vector);
}

static void virtio_pci_intx_handler(EventNotifier *n)
{
    VirtIOPCIProxy *proxy = container_of(n, VirtIOPCIProxy, intx_notifier);

    if (!event_notifier_test_and_clear(n)) {
        return;
    }
    if (__atomic_load_n(&proxy->isr, __ATOMIC_SEQ_CST)) {
        proxy->slow_path_interrupts++;
        pci_set_irq(PCI_DEVICE(proxy), 1);
    }
}

static int virtio_pci_vector_use(PCIDevice *dev, unsigned int vector,
                                 MSIMessage msg)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);
    VirtIOPCIVector *v;
    Error *err = NULL;

    if (vector >= proxy->nvectors) {
        return 0;
    }
    v = &proxy->vectors[vector];
    if (v->virq >= 0) {
        if (!kvm_irqchip_update_msi_route(v->virq, msg.address, msg.data,
                                          &err) ||
            !kvm_irqchip_commit_routes(&err)) {
            warn_report_err(err);
        }
        return 0;
    }
    v->virq = kvm_irqchip_add_msi_route(msg.address, msg.data, &err);
    if (v->virq < 0 || !kvm_irqchip_commit_routes(&err) ||
        !kvm_irqchip_add_irqfd_notifier(&v->notifier, v->virq, &err)) {
        /* The main-loop handler keeps serving the vector. */
        warn_report("virtio-pci %s: vector %u stays on the slow path: %s",
                    virtio_pci_name(proxy), vector,
                    err ? error_get_pretty(err) : "no route");
        error_free(err);
        if (v->virq >= 0) {
            kvm_irqchip_release_virq(v->virq);
            v->virq = -1;
        }
        return 0;
    }
    event_notifier_set_handler(&v->notifier, NULL);
    trace_virtio_pci_irqfd(virtio_pci_name(proxy), vector, v->virq, true);
    return 0;
}

static void virtio_pci_vector_release(PCIDevice *dev, unsigned int vector)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);
    VirtIOPCIVector *v;

    if (vector >= proxy->nvectors || proxy->vectors[vector].virq < 0) {
        return;
    }
    v = &proxy->vectors[vector];
    kvm_irqchip_remove_irqfd_notifier(&v->notifier, v->virq, NULL);
    kvm_irqchip_release_virq(v->virq);
    kvm_irqchip_commit_routes(NULL);
    trace_virtio_pci_irqfd(virtio_pci_name(proxy), vector, v->virq, false);
    v->virq = -1;
    event_notifier_set_handler(&v->notifier, virtio_pci_vector_handler);
    /* An interrupt that raced with the release becomes pending. */
    if (event_notifier_test_and_clear(&v->notifier)) {
        msix_notify(dev, vector);
    }
}

/* ---- ioeventfd --------------------------------------------------------- */

static void virtio_pci_ioeventfd_unassign(VirtIOPCIProxy *proxy, unsigned q)
{
    VirtIOPCIQueue *vpq = &proxy->vqs[q];

    if (!vpq->ioeventfd_assigned) {
        return;
    }
    kvm_set_ioeventfd_mmio(event_notifier_get_fd(&vpq->host_notifier),
                           vpq->ioeventfd_addr, 2, false, NULL);
    vpq->ioeventfd_assigned = false;
    trace_virtio_pci_ioeventfd(virtio_pci_name(proxy), q,
                               vpq->ioeventfd_addr, false);
}

/* Puts each enabled queue's ioeventfd where its notify address is now. */
static void virtio_pci_update_ioeventfds(VirtIOPCIProxy *proxy)
{
    pcibus_t base = pci_get_bar_addr(PCI_DEVICE(proxy), VIRTIO_PCI_BAR);
    bool on = proxy->running && proxy->ioeventfd && kvm_enabled() &&
              base != PCI_BAR_UNMAPPED;

    for (unsigned q = 0; q < proxy->nvqs; q++) {
        VirtIOPCIQueue *vpq = &proxy->vqs[q];
        uint64_t addr = base + VIRTIO_PCI_NOTIFY_OFF +
                        q * VIRTIO_PCI_NOTIFY_MULT;
        Error *err = NULL;

        if (vpq->ioeventfd_assigned &&
            (!on || !vpq->enabled || vpq->ioeventfd_addr != addr)) {
            virtio_pci_ioeventfd_unassign(proxy, q);
        }
        if (!on || !vpq->enabled || vpq->ioeventfd_assigned) {
            continue;
        }
        if (!kvm_set_ioeventfd_mmio(event_notifier_get_fd(&vpq->host_notifier),
                                    addr, 2, true, &err)) {
            /* The trapped notify write still works. */
            warn_report("virtio-pci %s: queue %u notify stays trapped: %s",
                        virtio_pci_name(proxy), q, error_get_pretty(err));
            error_free(err);
            continue;
        }
        vpq->ioeventfd_assigned = true;
        vpq->ioeventfd_addr = addr;
        trace_virtio_pci_ioeventfd(virtio_pci_name(proxy), q, addr, true);
    }
}

/* ---- the worker -------------------------------------------------------- */

void virtio_pci_worker_watch(VirtIOPCIProxy *proxy, int fd,
                             GIOCondition cond, VirtIOPCIWatchFn fn,
                             void *opaque)
{
    GSource *src = g_unix_fd_source_new(fd, cond);

    g_source_set_callback(src, (GSourceFunc)(void (*)(void))fn, opaque, NULL);
    g_source_attach(src, proxy->ctx);
    proxy->watches = g_slist_prepend(proxy->watches, src);
}

typedef struct QueueWatch {
    VirtIOPCIProxy *proxy;
    unsigned q;
} QueueWatch;

static void virtio_pci_run_queue(VirtIOPCIProxy *proxy, unsigned q)
{
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);
    GuestMemMap *map = guest_mem_tracker_get(proxy->mem);

    vc->handle_queue(proxy, q, map);
    guest_mem_map_unref(map);
}

static gboolean virtio_pci_queue_kicked(gint fd, GIOCondition cond,
                                        gpointer opaque)
{
    QueueWatch *w = opaque;
    VirtIOPCIQueue *vpq = &w->proxy->vqs[w->q];

    if (event_notifier_test_and_clear(&vpq->host_notifier)) {
        w->proxy->kicks++;
        virtio_pci_run_queue(w->proxy, w->q);
    }
    return G_SOURCE_CONTINUE;
}

static gboolean virtio_pci_stop_requested(gint fd, GIOCondition cond,
                                          gpointer opaque)
{
    VirtIOPCIProxy *proxy = opaque;

    /* Only wakes the loop up: the flag is what ends it. */
    event_notifier_test_and_clear(&proxy->stop_notifier);
    return G_SOURCE_CONTINUE;
}

/*
 * The worker holds its own reference to its context, so the context
 * outlives every iteration whatever the main thread does; it runs until
 * the main thread sets @stopping, and is joined exactly once.
 */
static gpointer virtio_pci_worker(gpointer opaque)
{
    VirtIOPCIProxy *proxy = opaque;
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);
    GMainContext *ctx = proxy->worker_ctx;

    g_main_context_push_thread_default(ctx);
    /* Buffers made available before DRIVER_OK, or kicks we missed. */
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        if (proxy->vqs[q].enabled && !proxy->vqs[q].external) {
            virtio_pci_run_queue(proxy, q);
        }
    }
    while (!__atomic_load_n(&proxy->stopping, __ATOMIC_ACQUIRE)) {
        g_main_context_iteration(ctx, TRUE);
    }
    if (vc->drain) {
        vc->drain(proxy);
    }
    g_main_context_pop_thread_default(ctx);
    g_main_context_unref(ctx);
    return NULL;
}

static void virtio_pci_drop_watches(VirtIOPCIProxy *proxy)
{
    for (GSList *l = proxy->watches; l; l = l->next) {
        g_source_destroy(l->data);
        g_source_unref(l->data);
    }
    g_slist_free(proxy->watches);
    proxy->watches = NULL;
}

/* Idempotent: stops and joins the worker if there is one. */
static void virtio_pci_stop(VirtIOPCIProxy *proxy)
{
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);

    if (!proxy->running) {
        return;
    }
    assert(proxy->thread && proxy->ctx);
    __atomic_store_n(&proxy->stopping, true, __ATOMIC_RELEASE);
    event_notifier_set(&proxy->stop_notifier);
    g_main_context_wakeup(proxy->ctx);
    g_thread_join(proxy->thread);
    proxy->thread = NULL;
    proxy->worker_ctx = NULL;
    if (vc->stop) {
        vc->stop(proxy);
    }
    /* Destroying the sources frees the QueueWatch allocations too. */
    virtio_pci_drop_watches(proxy);
    event_notifier_test_and_clear(&proxy->stop_notifier);
    g_main_context_unref(proxy->ctx);
    proxy->ctx = NULL;
    proxy->running = false;
    virtio_pci_update_ioeventfds(proxy);
    trace_virtio_pci_worker(virtio_pci_name(proxy), false);
}

static bool virtio_pci_start(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);
    GuestMemMap *map = guest_mem_tracker_get(proxy->mem);

    for (unsigned q = 0; q < proxy->nvqs; q++) {
        VirtIOPCIQueue *vpq = &proxy->vqs[q];

        vpq->external = false;
        if (!vpq->enabled) {
            continue;
        }
        vpq->vq.indirect = virtio_pci_has_feature(proxy,
                                                  VIRTIO_RING_F_INDIRECT_DESC);
        vpq->vq.event_idx = virtio_pci_has_feature(proxy,
                                                   VIRTIO_RING_F_EVENT_IDX);
        if (!virtqueue_rings_valid(&vpq->vq, map)) {
            guest_mem_map_unref(map);
            error_setg(errp, "virtio-pci %s: queue %u rings are not in guest "
                       "RAM or misaligned", virtio_pci_name(proxy), q);
            return false;
        }
    }
    guest_mem_map_unref(map);
    /* The state machine starts a device at most once per reset. */
    assert(!proxy->running && !proxy->thread && !proxy->ctx);
    proxy->ctx = g_main_context_new();
    __atomic_store_n(&proxy->stopping, false, __ATOMIC_RELEASE);
    if (vc->start && !vc->start(proxy, errp)) {
        virtio_pci_drop_watches(proxy);
        g_main_context_unref(proxy->ctx);
        proxy->ctx = NULL;
        return false;
    }
    virtio_pci_worker_watch(proxy, event_notifier_get_fd(&proxy->stop_notifier),
                            G_IO_IN, virtio_pci_stop_requested, proxy);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        VirtIOPCIQueue *vpq = &proxy->vqs[q];
        QueueWatch *w;
        GSource *src;

        if (!vpq->enabled || vpq->external) {
            continue;
        }
        w = g_new0(QueueWatch, 1);
        w->proxy = proxy;
        w->q = q;
        src = g_unix_fd_source_new(event_notifier_get_fd(&vpq->host_notifier),
                                   G_IO_IN);
        g_source_set_callback(src, (GSourceFunc)(void (*)(void))
                              virtio_pci_queue_kicked, w, g_free);
        g_source_attach(src, proxy->ctx);
        proxy->watches = g_slist_prepend(proxy->watches, src);
    }
    proxy->running = true;
    virtio_pci_update_ioeventfds(proxy);
    proxy->worker_ctx = g_main_context_ref(proxy->ctx);
    proxy->thread = g_thread_new(virtio_pci_name(proxy), virtio_pci_worker,
                                 proxy);
    trace_virtio_pci_worker(virtio_pci_name(proxy), true);
    return true;
}

void virtio_pci_set_needs_reset(VirtIOPCIProxy *proxy, const char *why)
{
    uint8_t old;

    qemu_log_guest_error("virtio-pci %s: %s; device needs reset\n",
                         virtio_pci_name(proxy), why);
    old = __atomic_fetch_or(&proxy->status, VIRTIO_CONFIG_S_NEEDS_RESET,
                            __ATOMIC_SEQ_CST);
    /* 2.1.2: once DRIVER_OK is set, the driver must be told. */
    if ((old & VIRTIO_CONFIG_S_DRIVER_OK) &&
        !(old & VIRTIO_CONFIG_S_NEEDS_RESET)) {
        virtio_pci_notify_config(proxy);
    }
}

/* ---- reset ------------------------------------------------------------- */

static void virtio_pci_virtio_reset(VirtIOPCIProxy *proxy)
{
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);

    /* Atomic: a completion in flight on the worker may read it. */
    __atomic_store_n(&proxy->resetting, true, __ATOMIC_RELEASE);
    virtio_pci_stop(proxy);
    __atomic_store_n(&proxy->resetting, false, __ATOMIC_RELEASE);
    proxy->guest_features = 0;
    proxy->dfselect = proxy->gfselect = 0;
    proxy->config_vector = VIRTIO_MSI_NO_VECTOR;
    proxy->status = 0;
    proxy->queue_sel = 0;
    __atomic_store_n(&proxy->isr, 0, __ATOMIC_SEQ_CST);
    pci_set_irq(PCI_DEVICE(proxy), 0);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        VirtIOPCIQueue *vpq = &proxy->vqs[q];

        vpq->vq.num = vpq->max_size;
        vpq->vq.desc = vpq->vq.avail = vpq->vq.used = 0;
        virtqueue_reset_state(&vpq->vq);
        vpq->vector = VIRTIO_MSI_NO_VECTOR;
        vpq->enabled = false;
        vpq->external = false;
        event_notifier_test_and_clear(&vpq->host_notifier);
    }
    if (vc->reset) {
        vc->reset(proxy);
    }
    trace_virtio_pci_reset(virtio_pci_name(proxy));
}

static void virtio_pci_pci_reset(PCIDevice *dev)
{
    virtio_pci_virtio_reset(VIRTIO_PCI(dev));
}

/* ---- common configuration ---------------------------------------------- */

/* May the driver's features be accepted with FEATURES_OK? */
static bool virtio_pci_features_ok(VirtIOPCIProxy *proxy, const char **why)
{
    uint64_t unknown = proxy->guest_features & ~proxy->host_features;

    *why = unknown ? "not offered" : "no VERSION_1";
    return !unknown && virtio_pci_has_feature(proxy, VIRTIO_F_VERSION_1);
}

static void virtio_pci_set_status(VirtIOPCIProxy *proxy, uint8_t val)
{
    uint8_t old = __atomic_load_n(&proxy->status, __ATOMIC_SEQ_CST);
    const char *why;
    bool features_ok = virtio_pci_features_ok(proxy, &why);
    VirtIOStatusPlan p = virtio_status_plan(old, val, features_ok);
    Error *err = NULL;

    if (p.reset) {
        virtio_pci_virtio_reset(proxy);
        return;
    }
    if (p.ignored) {
        qemu_log_guest_error("virtio-pci %s: status bits 0x%x ignored "
                             "(undefined, the device's, or already set)\n",
                             virtio_pci_name(proxy), p.ignored);
    }
    if (p.features_refused) {
        qemu_log_guest_error("virtio-pci %s: features 0x%" PRIx64
                             " refused (%s)\n", virtio_pci_name(proxy),
                             proxy->guest_features, why);
    }
    if (p.stop) {
        virtio_pci_stop(proxy);
    }
    /* Only bits are added: the worker may be setting NEEDS_RESET. */
    __atomic_fetch_or(&proxy->status,
                      p.status & ~(p.needs_reset ? VIRTIO_CONFIG_S_NEEDS_RESET
                                                 : 0), __ATOMIC_SEQ_CST);
    if (p.needs_reset) {
        virtio_pci_set_needs_reset(proxy, "DRIVER_OK without FEATURES_OK");
    }
    if (p.start && !virtio_pci_start(proxy, &err)) {
        virtio_pci_set_needs_reset(proxy, error_get_pretty(err));
        error_free(err);
    }
    trace_virtio_pci_status(virtio_pci_name(proxy), old, proxy->status);
}

static VirtIOPCIQueue *virtio_pci_selected(VirtIOPCIProxy *proxy)
{
    return proxy->queue_sel < proxy->nvqs ? &proxy->vqs[proxy->queue_sel]
                                          : NULL;
}

static uint64_t virtio_pci_common_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    VirtIOPCIQueue *vpq = virtio_pci_selected(proxy);
    uint64_t val = 0;

    switch (addr) {
    case VIRTIO_PCI_COMMON_DFSELECT:
        val = proxy->dfselect;
        break;
    case VIRTIO_PCI_COMMON_DF:
        val = proxy->dfselect < 2
              ? (uint32_t)(proxy->host_features >> (32 * proxy->dfselect)) : 0;
        break;
    case VIRTIO_PCI_COMMON_GFSELECT:
        val = proxy->gfselect;
        break;
    case VIRTIO_PCI_COMMON_GF:
        val = proxy->gfselect < 2
              ? (uint32_t)(proxy->guest_features >> (32 * proxy->gfselect))
              : 0;
        break;
    case VIRTIO_PCI_COMMON_MSIX:
        val = proxy->config_vector;
        break;
    case VIRTIO_PCI_COMMON_NUMQ:
        val = proxy->nvqs;
        break;
    case VIRTIO_PCI_COMMON_STATUS:
        val = __atomic_load_n(&proxy->status, __ATOMIC_SEQ_CST);
        break;
    case VIRTIO_PCI_COMMON_CFGGENERATION:
        val = proxy->config_generation;
        break;
    case VIRTIO_PCI_COMMON_Q_SELECT:
        val = proxy->queue_sel;
        break;
    case VIRTIO_PCI_COMMON_Q_SIZE:
        val = vpq ? vpq->vq.num : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_MSIX:
        val = vpq ? vpq->vector : VIRTIO_MSI_NO_VECTOR;
        break;
    case VIRTIO_PCI_COMMON_Q_ENABLE:
        val = vpq ? vpq->enabled : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_NOFF:
        val = vpq ? proxy->queue_sel : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_DESCLO:
        val = vpq ? (uint32_t)vpq->vq.desc : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_DESCHI:
        val = vpq ? vpq->vq.desc >> 32 : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_AVAILLO:
        val = vpq ? (uint32_t)vpq->vq.avail : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_AVAILHI:
        val = vpq ? vpq->vq.avail >> 32 : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_USEDLO:
        val = vpq ? (uint32_t)vpq->vq.used : 0;
        break;
    case VIRTIO_PCI_COMMON_Q_USEDHI:
        val = vpq ? vpq->vq.used >> 32 : 0;
        break;
    default:
        val = 0;
        break;
    }
    return val;
}

static void set_lo(uint64_t *field, uint64_t val)
{
    *field = (*field & ~0xffffffffull) | (uint32_t)val;
}

static void set_hi(uint64_t *field, uint64_t val)
{
    *field = (*field & 0xffffffffull) | ((uint64_t)(uint32_t)val << 32);
}

static bool virtio_pci_queue_writable(VirtIOPCIProxy *proxy,
                                      VirtIOPCIQueue *vpq, const char *what)
{
    if (!vpq) {
        qemu_log_guest_error("virtio-pci %s: %s of queue %u, which does not "
                             "exist\n", virtio_pci_name(proxy), what,
                             proxy->queue_sel);
        return false;
    }
    if (vpq->enabled) {
        qemu_log_guest_error("virtio-pci %s: %s of enabled queue %u "
                             "ignored\n", virtio_pci_name(proxy), what,
                             proxy->queue_sel);
        return false;
    }
    return true;
}

static void virtio_pci_common_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    VirtIOPCIQueue *vpq = virtio_pci_selected(proxy);

    trace_virtio_pci_common_write(virtio_pci_name(proxy), addr, val, size);
    switch (addr) {
    case VIRTIO_PCI_COMMON_DFSELECT:
        proxy->dfselect = val;
        break;
    case VIRTIO_PCI_COMMON_GFSELECT:
        proxy->gfselect = val;
        break;
    case VIRTIO_PCI_COMMON_GF:
        if (proxy->status & VIRTIO_CONFIG_S_FEATURES_OK) {
            qemu_log_guest_error("virtio-pci %s: feature write after "
                                 "FEATURES_OK ignored\n",
                                 virtio_pci_name(proxy));
        } else if (proxy->gfselect == 0) {
            set_lo(&proxy->guest_features, val);
        } else if (proxy->gfselect == 1) {
            set_hi(&proxy->guest_features, val);
        }
        break;
    case VIRTIO_PCI_COMMON_MSIX:
        proxy->config_vector = val < proxy->nvectors ? val
                                                     : VIRTIO_MSI_NO_VECTOR;
        break;
    case VIRTIO_PCI_COMMON_STATUS:
        virtio_pci_set_status(proxy, val);
        break;
    case VIRTIO_PCI_COMMON_Q_SELECT:
        proxy->queue_sel = val;
        break;
    case VIRTIO_PCI_COMMON_Q_SIZE:
        if (virtio_pci_queue_writable(proxy, vpq, "size write")) {
            if (!val || (val & (val - 1)) || val > vpq->max_size) {
                qemu_log_guest_error("virtio-pci %s: queue size %u invalid "
                                     "(power of two up to %u)\n",
                                     virtio_pci_name(proxy), (unsigned)val,
                                     vpq->max_size);
            } else {
                vpq->vq.num = val;
            }
        }
        break;
    case VIRTIO_PCI_COMMON_Q_MSIX:
        if (vpq) {
            /* Reading back NO_VECTOR tells the driver we refused it. */
            vpq->vector = val < proxy->nvectors ? val : VIRTIO_MSI_NO_VECTOR;
        }
        break;
    case VIRTIO_PCI_COMMON_Q_ENABLE:
        if (vpq && val == 1 && !vpq->enabled) {
            vpq->enabled = true;
            virtio_pci_update_ioeventfds(proxy);
        } else if (vpq && val != 1) {
            qemu_log_guest_error("virtio-pci %s: queue_enable=%u ignored\n",
                                 virtio_pci_name(proxy), (unsigned)val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_DESCLO:
        if (virtio_pci_queue_writable(proxy, vpq, "desc write")) {
            set_lo(&vpq->vq.desc, val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_DESCHI:
        if (virtio_pci_queue_writable(proxy, vpq, "desc write")) {
            set_hi(&vpq->vq.desc, val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_AVAILLO:
        if (virtio_pci_queue_writable(proxy, vpq, "avail write")) {
            set_lo(&vpq->vq.avail, val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_AVAILHI:
        if (virtio_pci_queue_writable(proxy, vpq, "avail write")) {
            set_hi(&vpq->vq.avail, val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_USEDLO:
        if (virtio_pci_queue_writable(proxy, vpq, "used write")) {
            set_lo(&vpq->vq.used, val);
        }
        break;
    case VIRTIO_PCI_COMMON_Q_USEDHI:
        if (virtio_pci_queue_writable(proxy, vpq, "used write")) {
            set_hi(&vpq->vq.used, val);
        }
        break;
    default:
        qemu_log_guest_error("virtio-pci %s: write to read-only common "
                             "config 0x%x\n", virtio_pci_name(proxy),
                             (unsigned)addr);
        break;
    }
}

static const MemoryRegionOps virtio_pci_common_ops = {
    .read = virtio_pci_common_read,
    .write = virtio_pci_common_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/* ---- ISR, device config, notify ---------------------------------------- */

static uint64_t virtio_pci_isr_read(void *opaque, hwaddr addr, unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    uint32_t val;

    if (addr) {
        return 0;
    }
    val = __atomic_exchange_n(&proxy->isr, 0, __ATOMIC_SEQ_CST);
    pci_set_irq(PCI_DEVICE(proxy), 0);
    return val;
}

static void virtio_pci_isr_write(void *opaque, hwaddr addr, uint64_t val,
                                 unsigned size)
{
}

static const MemoryRegionOps virtio_pci_isr_ops = {
    .read = virtio_pci_isr_read,
    .write = virtio_pci_isr_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static uint64_t virtio_pci_device_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    uint64_t val = 0;

    if (addr >= proxy->config_len || size > proxy->config_len - addr) {
        return 0;
    }
    for (unsigned i = 0; i < size; i++) {
        val |= (uint64_t)proxy->config[addr + i] << (8 * i);
    }
    return val;
}

static void virtio_pci_device_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(proxy);

    if (!vc->config_written || addr >= proxy->config_len ||
        size > proxy->config_len - addr) {
        qemu_log_guest_error("virtio-pci %s: device config write at 0x%x "
                             "ignored\n", virtio_pci_name(proxy),
                             (unsigned)addr);
        return;
    }
    for (unsigned i = 0; i < size; i++) {
        proxy->config[addr + i] = val >> (8 * i);
    }
    vc->config_written(proxy, addr, size);
}

static const MemoryRegionOps virtio_pci_device_ops = {
    .read = virtio_pci_device_read,
    .write = virtio_pci_device_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static uint64_t virtio_pci_notify_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    return 0;
}

static void virtio_pci_notify_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    VirtIOPCIProxy *proxy = opaque;
    unsigned q = addr / VIRTIO_PCI_NOTIFY_MULT;

    if (q >= proxy->nvqs || !proxy->vqs[q].enabled) {
        qemu_log_guest_error("virtio-pci %s: notify of queue %u, which is "
                             "not enabled\n", virtio_pci_name(proxy), q);
        return;
    }
    /* The same eventfd KVM would signal through the ioeventfd. */
    event_notifier_set(&proxy->vqs[q].host_notifier);
}

static const MemoryRegionOps virtio_pci_notify_ops = {
    .read = virtio_pci_notify_read,
    .write = virtio_pci_notify_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/* ---- capabilities, realize --------------------------------------------- */

static int virtio_pci_add_cap(PCIDevice *dev, uint8_t type, uint8_t size,
                              uint32_t off, uint32_t len, uint32_t mult,
                              Error **errp)
{
    int pos = pci_add_capability(dev, PCI_CAP_ID_VNDR, 0, size, errp);
    uint8_t *c;

    if (pos < 0) {
        return pos;
    }
    c = dev->config + pos;
    c[VIRTIO_PCI_CAP_LEN] = size;
    c[VIRTIO_PCI_CAP_CFG_TYPE] = type;
    c[VIRTIO_PCI_CAP_BAR] = VIRTIO_PCI_BAR;
    pci_set_long(c + VIRTIO_PCI_CAP_OFFSET, off);
    pci_set_long(c + VIRTIO_PCI_CAP_LENGTH, len);
    if (mult) {
        pci_set_long(c + VIRTIO_PCI_NOTIFY_CAP_MULT, mult);
    }
    return pos;
}

/*
 * The PCI configuration access capability (virtio 1.2, 4.1.4.9): the
 * driver writes bar, offset and length, then reads or writes
 * pci_cfg_data, and the device makes that access to the BAR.  BAR4 (the
 * virtio registers) is reachable; an access the specification does not
 * allow (length not 1, 2 or 4, offset not a multiple of it, past the
 * BAR, another BAR) is dropped and reads 0.
 */
#define VIRTIO_PCI_CFG_DATA offsetof(struct virtio_pci_cfg_cap, pci_cfg_data)

static MemoryRegion *virtio_pci_cfg_target(VirtIOPCIProxy *proxy,
                                           hwaddr *addr, unsigned *len)
{
    uint8_t *c = PCI_DEVICE(proxy)->config + proxy->pci_cfg_cap;
    uint8_t bar = c[VIRTIO_PCI_CAP_BAR];
    uint32_t off = pci_get_long(c + VIRTIO_PCI_CAP_OFFSET);
    uint32_t l = pci_get_long(c + VIRTIO_PCI_CAP_LENGTH);
    MemoryRegion *regions[] = {
        &proxy->common, &proxy->isr_region, &proxy->device_region,
        &proxy->notify,
    };

    if (bar != VIRTIO_PCI_BAR || (l != 1 && l != 2 && l != 4) || off % l ||
        off >= VIRTIO_PCI_BAR_SIZE) {
        qemu_log_guest_error("virtio-pci %s: pci_cfg access to bar %u "
                             "offset 0x%x length %u dropped\n",
                             virtio_pci_name(proxy), bar, off, l);
        return NULL;
    }
    *addr = off % VIRTIO_PCI_REGION_SIZE;
    *len = l;
    return regions[off / VIRTIO_PCI_REGION_SIZE];
}

static bool virtio_pci_cfg_touched(VirtIOPCIProxy *proxy, uint32_t addr,
                                   int len)
{
    uint32_t data = proxy->pci_cfg_cap + VIRTIO_PCI_CFG_DATA;

    return proxy->pci_cfg_cap && addr < data + 4 && data < addr + len;
}

static uint32_t virtio_pci_config_read(PCIDevice *dev, uint32_t addr,
                                       int len)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);

    if (virtio_pci_cfg_touched(proxy, addr, len)) {
        uint8_t *data = dev->config + proxy->pci_cfg_cap +
                        VIRTIO_PCI_CFG_DATA;
        uint64_t val = 0;
        unsigned l;
        hwaddr off;
        MemoryRegion *mr = virtio_pci_cfg_target(proxy, &off, &l);

        if (mr) {
            memory_region_dispatch_read(mr, off, &val, l);
        }
        pci_set_long(data, val);
    }
    return pci_default_read_config(dev, addr, len);
}

static void virtio_pci_config_write(PCIDevice *dev, uint32_t addr,
                                    uint32_t val, int len)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);

    pci_default_write_config(dev, addr, val, len);
    if (virtio_pci_cfg_touched(proxy, addr, len) && !proxy->loading) {
        uint8_t *data = dev->config + proxy->pci_cfg_cap +
                        VIRTIO_PCI_CFG_DATA;
        unsigned l;
        hwaddr off;
        MemoryRegion *mr = virtio_pci_cfg_target(proxy, &off, &l);

        if (mr) {
            memory_region_dispatch_write(mr, off, ldn_le_p(data, l), l);
        }
    }
    /* A moved BAR takes the ioeventfds with it. */
    if (proxy->running) {
        virtio_pci_update_ioeventfds(proxy);
    }
}

/* ---- migration --------------------------------------------------------- */

/*
 * A stopped VM stops the worker (the device's drain hook completes the
 * in-flight requests, so nothing is half done when the state is saved)
 * and a running VM starts it again; a destination starts it from the
 * migrated rings the first time the VM runs.
 */
static void virtio_pci_vm_state_change(void *opaque, bool running,
                                       RunState state)
{
    VirtIOPCIProxy *proxy = opaque;
    Error *err = NULL;

    /*
     * Queues the kernel serves (vhost) stop too: the device's stop hook
     * takes them back, so that nothing writes guest memory while the VM
     * is stopped and the saved queue state is where the kernel was.
     */
    if (!running) {
        if (proxy->running) {
            virtio_pci_stop(proxy);
            proxy->stopped_by_vm = true;
        }
        return;
    }
    if (!proxy->stopped_by_vm) {
        return;
    }
    proxy->stopped_by_vm = false;
    if ((proxy->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
        !(proxy->status & VIRTIO_CONFIG_S_NEEDS_RESET) && !proxy->running &&
        !virtio_pci_start(proxy, &err)) {
        virtio_pci_set_needs_reset(proxy, error_get_pretty(err));
        error_free(err);
    }
}

/*
 * The worker is stopped (the VM is): deliver what it signalled but the
 * main loop has not handled yet, so that the interrupt lands in the
 * MSI-X pending bits or the ISR being saved instead of being lost.
 */
static bool virtio_pci_pre_save(void *opaque, Error **errp)
{
    VirtIOPCIProxy *proxy = opaque;

    for (unsigned i = 0; i < proxy->nvectors; i++) {
        if (proxy->vectors[i].virq < 0) {
            virtio_pci_vector_handler(&proxy->vectors[i].notifier);
        }
    }
    virtio_pci_intx_handler(&proxy->intx_notifier);
    return true;
}

static bool virtio_pci_pre_load(void *opaque, Error **errp)
{
    VirtIOPCIProxy *proxy = opaque;

    /* A fresh destination device: nothing runs yet. */
    virtio_pci_stop(proxy);
    proxy->loading = true;
    return true;
}

static bool virtio_pci_post_load(void *opaque, int version_id, Error **errp)
{
    VirtIOPCIProxy *proxy = opaque;
    const char *name = virtio_pci_name(proxy);

    proxy->loading = false;
    if (proxy->guest_features & ~proxy->host_features) {
        error_setg(errp, "virtio-pci %s: features 0x%" PRIx64 " were not "
                   "offered here (0x%" PRIx64 ")", name,
                   proxy->guest_features, proxy->host_features);
        return false;
    }
    if (proxy->queue_sel >= VIRTIO_PCI_MAX_QUEUES ||
        (proxy->config_vector != VIRTIO_MSI_NO_VECTOR &&
         proxy->config_vector >= proxy->nvectors)) {
        error_setg(errp, "virtio-pci %s: queue_sel %u or config vector %u "
                   "out of range", name, proxy->queue_sel,
                   proxy->config_vector);
        return false;
    }
    for (unsigned q = 0; q < VIRTIO_PCI_MAX_QUEUES; q++) {
        VirtIOPCIQueue *vpq = &proxy->vqs[q];

        if (q >= proxy->nvqs) {
            if (vpq->enabled) {
                error_setg(errp, "virtio-pci %s: queue %u enabled, the "
                           "device has %u", name, q, proxy->nvqs);
                return false;
            }
            continue;
        }
        if (vpq->vq.num > vpq->max_size || (vpq->vq.num & (vpq->vq.num - 1)) ||
            (vpq->enabled && !vpq->vq.num) ||
            (vpq->vector != VIRTIO_MSI_NO_VECTOR &&
             vpq->vector >= proxy->nvectors)) {
            error_setg(errp, "virtio-pci %s: queue %u size %u (at most %u) or "
                       "vector %u out of range", name, q, vpq->vq.num,
                       vpq->max_size, vpq->vector);
            return false;
        }
        vpq->external = false;
    }
    /* The worker starts with the VM, from these rings. */
    proxy->stopped_by_vm = (proxy->status & VIRTIO_CONFIG_S_DRIVER_OK) != 0;
    return true;
}

static bool virtio_pci_devcfg_put(GByteArray *out, void *opaque, void *field,
                                  Error **errp)
{
    VirtIOPCIProxy *proxy = opaque;

    mig_put_u32(out, proxy->config_len);
    mig_put_bytes(out, proxy->config, proxy->config_len);
    return true;
}

static bool virtio_pci_devcfg_get(MigBuf *b, void *opaque, void *field,
                                  Error **errp)
{
    VirtIOPCIProxy *proxy = opaque;
    uint32_t len;

    if (!mig_buf_get_u32(b, &len, errp)) {
        return false;
    }
    if (len != proxy->config_len) {
        error_setg(errp, "device config of %u bytes, this device has %u",
                   len, proxy->config_len);
        return false;
    }
    return mig_buf_get(b, proxy->config, len, errp);
}

static const VMStateInfo virtio_pci_devcfg_info = {
    .name = "virtio-device-config",
    .put = virtio_pci_devcfg_put,
    .get = virtio_pci_devcfg_get,
};

static const VMStateDescription vmstate_virtio_pci_queue = {
    .name = "virtio-pci-queue",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(vector, VirtIOPCIQueue),
        VMSTATE_BOOL(enabled, VirtIOPCIQueue),
        VMSTATE_UINT16_MAX(vq.num, VirtIOPCIQueue, VIRTQUEUE_MAX_SIZE),
        VMSTATE_UINT64(vq.desc, VirtIOPCIQueue),
        VMSTATE_UINT64(vq.avail, VirtIOPCIQueue),
        VMSTATE_UINT64(vq.used, VirtIOPCIQueue),
        VMSTATE_BOOL(vq.indirect, VirtIOPCIQueue),
        VMSTATE_BOOL(vq.event_idx, VirtIOPCIQueue),
        VMSTATE_UINT16(vq.last_avail_idx, VirtIOPCIQueue),
        VMSTATE_UINT16(vq.used_idx, VirtIOPCIQueue),
        VMSTATE_UINT16(vq.signalled_used, VirtIOPCIQueue),
        VMSTATE_BOOL(vq.signalled_used_valid, VirtIOPCIQueue),
        VMSTATE_BOOL(vq.broken, VirtIOPCIQueue),
        VMSTATE_END_OF_LIST()
    },
};

/* virtio 1.x transport state; in-flight requests are drained by then. */
const VMStateDescription vmstate_virtio_pci = {
    .name = "virtio-pci",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = virtio_pci_pre_save,
    .pre_load = virtio_pci_pre_load,
    .post_load = virtio_pci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, VirtIOPCIProxy, vmstate_pci_device,
                       PCIDevice),
        VMSTATE_UINT64(guest_features, VirtIOPCIProxy),
        VMSTATE_UINT32_MAX(dfselect, VirtIOPCIProxy, 1),
        VMSTATE_UINT32_MAX(gfselect, VirtIOPCIProxy, 1),
        VMSTATE_UINT16(config_vector, VirtIOPCIProxy),
        VMSTATE_UINT8(status, VirtIOPCIProxy),
        VMSTATE_UINT8(config_generation, VirtIOPCIProxy),
        VMSTATE_UINT16(queue_sel, VirtIOPCIProxy),
        VMSTATE_UINT32(isr, VirtIOPCIProxy),
        VMSTATE_CUSTOM("device-config", VirtIOPCIProxy, config,
                       virtio_pci_devcfg_info),
        VMSTATE_STRUCT_ARRAY(vqs, VirtIOPCIProxy, vmstate_virtio_pci_queue,
                             VirtIOPCIQueue),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * QEMU's object tree has the virtio device itself below the proxy, as the
 * child "virtio-backend", and that is what uses the block node: libvirt
 * names a virtio disk by its path (query-block's "qdev").  Here the child
 * is a plain node of the tree, made at the first call.
 */
Object *virtio_pci_backend(VirtIOPCIProxy *proxy)
{
    return container_get(OBJECT(proxy), "virtio-backend");
}

static void virtio_pci_vm_state_change(void *opaque, bool running,
                                       RunState state);

static bool virtio_pci_realize(PCIDevice *dev, Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(dev);
    const char *name = virtio_pci_name(proxy);
    uint32_t nvec;
    int pos;

    proxy->host_features |= (1ull << VIRTIO_F_VERSION_1) |
                            (1ull << VIRTIO_RING_F_INDIRECT_DESC) |
                            (1ull << VIRTIO_RING_F_EVENT_IDX);
    if (!vc->realize(proxy, errp)) {
        return false;
    }
    assert(proxy->nvqs && proxy->nvqs <= VIRTIO_PCI_MAX_QUEUES);
    assert(proxy->config_len <= VIRTIO_PCI_REGION_SIZE);

    nvec = proxy->vectors_prop ? proxy->vectors_prop : proxy->nvqs + 1;
    if (nvec > 64) {
        error_setg(errp, "%s: vectors=%u is more than 64", name, nvec);
        error_append_hint(errp, "Use vectors=%u (one per queue plus "
                          "config).\n", proxy->nvqs + 1);
        goto fail_device;
    }
    proxy->nvectors = nvec;

    memory_region_init(&proxy->bar, OBJECT(proxy), "virtio-pci-bar",
                       VIRTIO_PCI_BAR_SIZE);
    memory_region_init_io(&proxy->common, OBJECT(proxy),
                          &virtio_pci_common_ops, proxy, "virtio-pci-common",
                          VIRTIO_PCI_REGION_SIZE);
    memory_region_init_io(&proxy->isr_region, OBJECT(proxy),
                          &virtio_pci_isr_ops, proxy, "virtio-pci-isr",
                          VIRTIO_PCI_REGION_SIZE);
    memory_region_init_io(&proxy->device_region, OBJECT(proxy),
                          &virtio_pci_device_ops, proxy, "virtio-pci-device",
                          VIRTIO_PCI_REGION_SIZE);
    memory_region_init_io(&proxy->notify, OBJECT(proxy),
                          &virtio_pci_notify_ops, proxy, "virtio-pci-notify",
                          VIRTIO_PCI_REGION_SIZE);
    memory_region_add_subregion(&proxy->bar, VIRTIO_PCI_COMMON_OFF,
                                &proxy->common);
    memory_region_add_subregion(&proxy->bar, VIRTIO_PCI_ISR_OFF,
                                &proxy->isr_region);
    memory_region_add_subregion(&proxy->bar, VIRTIO_PCI_DEVICE_OFF,
                                &proxy->device_region);
    memory_region_add_subregion(&proxy->bar, VIRTIO_PCI_NOTIFY_OFF,
                                &proxy->notify);
    pci_register_bar(dev, VIRTIO_PCI_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &proxy->bar);

    memory_region_init(&proxy->msix_bar, OBJECT(proxy), "virtio-pci-msix",
                       0x1000);
    pci_register_bar(dev, VIRTIO_PCI_MSIX_BAR, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &proxy->msix_bar);
    if (msix_init(dev, nvec, &proxy->msix_bar, VIRTIO_PCI_MSIX_BAR, 0,
                  &proxy->msix_bar, VIRTIO_PCI_MSIX_BAR, 0x800, 0, errp) < 0) {
        goto fail_device;
    }
    dev->config[PCI_INTERRUPT_PIN] = 1;

    if (virtio_pci_add_cap(dev, VIRTIO_PCI_CAP_COMMON_CFG,
                           sizeof(struct virtio_pci_cap),
                           VIRTIO_PCI_COMMON_OFF,
                           sizeof(struct virtio_pci_common_cfg), 0, errp) < 0 ||
        virtio_pci_add_cap(dev, VIRTIO_PCI_CAP_ISR_CFG,
                           sizeof(struct virtio_pci_cap), VIRTIO_PCI_ISR_OFF,
                           1, 0, errp) < 0 ||
        virtio_pci_add_cap(dev, VIRTIO_PCI_CAP_DEVICE_CFG,
                           sizeof(struct virtio_pci_cap),
                           VIRTIO_PCI_DEVICE_OFF,
                           MAX(proxy->config_len, 4), 0, errp) < 0 ||
        virtio_pci_add_cap(dev, VIRTIO_PCI_CAP_NOTIFY_CFG,
                           sizeof(struct virtio_pci_notify_cap),
                           VIRTIO_PCI_NOTIFY_OFF,
                           proxy->nvqs * VIRTIO_PCI_NOTIFY_MULT,
                           VIRTIO_PCI_NOTIFY_MULT, errp) < 0) {
        goto fail_msix;
    }
    /* 4.1.4.9: required; bar, offset, length and the data are the driver's. */
    pos = virtio_pci_add_cap(dev, VIRTIO_PCI_CAP_PCI_CFG,
                             sizeof(struct virtio_pci_cfg_cap), 0, 0, 0, errp);
    if (pos < 0) {
        goto fail_msix;
    }
    proxy->pci_cfg_cap = pos;
    dev->config[pos + VIRTIO_PCI_CAP_BAR] = 0;
    dev->wmask[pos + VIRTIO_PCI_CAP_BAR] = 0xff;
    pci_set_long(dev->wmask + pos + VIRTIO_PCI_CAP_OFFSET, 0xffffffff);
    pci_set_long(dev->wmask + pos + VIRTIO_PCI_CAP_LENGTH, 0xffffffff);
    pci_set_long(dev->wmask + pos + VIRTIO_PCI_CFG_DATA, 0xffffffff);

    proxy->vectors = g_new0(VirtIOPCIVector, nvec);
    for (unsigned i = 0; i < nvec; i++) {
        proxy->vectors[i].proxy = proxy;
        proxy->vectors[i].virq = -1;
        if (event_notifier_init(&proxy->vectors[i].notifier, 0) < 0) {
            error_setg_errno(errp, errno, "%s: cannot create an eventfd",
                             name);
            goto fail_msix;
        }
        event_notifier_set_handler(&proxy->vectors[i].notifier,
                                   virtio_pci_vector_handler);
    }
    if (event_notifier_init(&proxy->intx_notifier, 0) < 0 ||
        event_notifier_init(&proxy->stop_notifier, 0) < 0) {
        error_setg_errno(errp, errno, "%s: cannot create an eventfd", name);
        goto fail_msix;
    }
    event_notifier_set_handler(&proxy->intx_notifier, virtio_pci_intx_handler);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        if (event_notifier_init(&proxy->vqs[q].host_notifier, 0) < 0) {
            error_setg_errno(errp, errno, "%s: cannot create an eventfd",
                             name);
            goto fail_msix;
        }
    }
    /* Under KVM each deliverable vector gets an irqfd: the fast path. */
    if (proxy->irqfd && kvm_msi_via_irqfd_enabled()) {
        msix_set_vector_notifiers(dev, virtio_pci_vector_use,
                                  virtio_pci_vector_release, NULL);
    }
    proxy->mem = guest_mem_tracker_new(pci_get_address_space(dev));
    virtio_pci_virtio_reset(proxy);
    virtio_pci_devices = g_slist_append(virtio_pci_devices, proxy);
    proxy->vmstate_entry =
        qemu_add_vm_change_state_handler(virtio_pci_vm_state_change, proxy);
    return true;

fail_msix:
    msix_uninit(dev, &proxy->msix_bar, &proxy->msix_bar);
fail_device:
    if (vc->unrealize) {
        vc->unrealize(proxy);
    }
    g_free(proxy->config);
    proxy->config = NULL;
    return false;
}

static void virtio_pci_exit(PCIDevice *dev)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(dev);
    VirtIOPCIClass *vc = VIRTIO_PCI_GET_CLASS(dev);

    virtio_pci_devices = g_slist_remove(virtio_pci_devices, proxy);
    if (proxy->vmstate_entry) {
        qemu_del_vm_change_state_handler(proxy->vmstate_entry);
        proxy->vmstate_entry = NULL;
    }
    /* What a started device holds (AIO context, vhost) goes as at reset. */
    virtio_pci_stop(proxy);
    if (vc->reset) {
        vc->reset(proxy);
    }
    if (msix_present(dev)) {
        msix_unset_vector_notifiers(dev);
    }
    msix_uninit(dev, &proxy->msix_bar, &proxy->msix_bar);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        event_notifier_cleanup(&proxy->vqs[q].host_notifier);
    }
    for (unsigned i = 0; i < proxy->nvectors; i++) {
        event_notifier_cleanup(&proxy->vectors[i].notifier);
    }
    g_free(proxy->vectors);
    proxy->vectors = NULL;
    event_notifier_cleanup(&proxy->intx_notifier);
    event_notifier_cleanup(&proxy->stop_notifier);
    guest_mem_tracker_free(proxy->mem);
    proxy->mem = NULL;
    if (vc->unrealize) {
        vc->unrealize(proxy);
    }
    g_free(proxy->config);
    proxy->config = NULL;
}

static void virtio_pci_finalize(Object *obj)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(obj);

    if (PCI_DEVICE(proxy)->bus || !memory_region_size(&proxy->bar)) {
        return;
    }
    memory_region_finalize(&proxy->common);
    memory_region_finalize(&proxy->isr_region);
    memory_region_finalize(&proxy->device_region);
    memory_region_finalize(&proxy->notify);
    memory_region_finalize(&proxy->bar);
    memory_region_finalize(&proxy->msix_bar);
}

/* Telemetry: where notifications and interrupts of each device went. */
/*
 * Each enabled queue's indices, the driver's (in guest memory) beside
 * ours: a stalled queue shows whether a kick (avail-idx ahead of
 * last-avail-idx) or an interrupt (used-idx ahead of the driver's
 * used-event) went missing.
 */
static JsonArray *virtio_pci_describe_queues(VirtIOPCIProxy *proxy)
{
    JsonArray *queues = json_array_new();
    GuestMemMap *map = virtio_pci_get_mem(proxy);

    for (unsigned q = 0; q < proxy->nvqs; q++) {
        VirtIOPCIQueue *pq = &proxy->vqs[q];
        JsonObject *o;
        VirtQueueSnapshot s;

        if (!pq->enabled) {
            continue;
        }
        virtqueue_snapshot(&pq->vq, map, &s);
        o = json_object_new();
        json_object_set_int_member(o, "index", q);
        json_object_set_int_member(o, "size", pq->vq.num);
        json_object_set_int_member(o, "vector", pq->vector);
        json_object_set_boolean_member(o, "event-idx", s.event_idx);
        json_object_set_boolean_member(o, "broken", s.broken);
        json_object_set_int_member(o, "avail-idx", s.avail_idx);
        json_object_set_int_member(o, "avail-flags", s.avail_flags);
        json_object_set_int_member(o, "used-event", s.used_event);
        json_object_set_int_member(o, "used-idx", s.used_idx);
        json_object_set_int_member(o, "avail-event", s.avail_event);
        json_object_set_int_member(o, "last-avail-idx", s.last_avail_idx);
        json_object_set_int_member(o, "device-used-idx", s.device_used_idx);
        json_object_set_int_member(o, "signalled-used",
                                   s.signalled_used_valid ?
                                   s.signalled_used : -1);
        json_array_add_object_element(queues, o);
    }
    guest_mem_map_unref(map);
    return queues;
}

static void qmp_x_query_virtio(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    for (GSList *l = virtio_pci_devices; l; l = l->next) {
        VirtIOPCIProxy *proxy = l->data;
        JsonObject *o = json_object_new();
        g_autofree char *path = object_get_canonical_path(OBJECT(proxy));
        unsigned ioeventfds = 0, irqfds = 0;

        for (unsigned q = 0; q < proxy->nvqs; q++) {
            ioeventfds += proxy->vqs[q].ioeventfd_assigned;
        }
        for (unsigned i = 0; i < proxy->nvectors; i++) {
            irqfds += proxy->vectors[i].virq >= 0;
        }
        json_object_set_string_member(o, "qom-path", path ? path : "");
        json_object_set_string_member(o, "type",
                                      object_get_typename(OBJECT(proxy)));
        json_object_set_int_member(o, "status", proxy->status);
        json_object_set_int_member(o, "guest-features",
                                   proxy->guest_features);
        json_object_set_boolean_member(o, "running", proxy->running);
        json_object_set_int_member(o, "ioeventfds", ioeventfds);
        json_object_set_int_member(o, "irqfds", irqfds);
        json_object_set_int_member(o, "kicks",
                                   __atomic_load_n(&proxy->kicks,
                                                   __ATOMIC_RELAXED));
        json_object_set_int_member(o, "interrupts",
                                   __atomic_load_n(&proxy->interrupts,
                                                   __ATOMIC_RELAXED));
        json_object_set_int_member(o, "slow-path-interrupts",
                                   proxy->slow_path_interrupts);
        json_object_set_array_member(o, "queues",
                                     virtio_pci_describe_queues(proxy));
        json_array_add_object_element(list, o);
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void __attribute__((constructor)) virtio_pci_qmp_register(void)
{
    qmp_register_command_args("x-query-virtio", qmp_x_query_virtio, "", 0);
}

static const Property virtio_pci_props[] = {
    DEFINE_PROP_BOOL("ioeventfd", VirtIOPCIProxy, ioeventfd, true,
                     .description = "under KVM, queue notifications go to "
                                    "an eventfd without a VM exit to "
                                    "Conduit"),
    DEFINE_PROP_BOOL("x-irqfd", VirtIOPCIProxy, irqfd, true,
                     .description = "under KVM, interrupts are injected by "
                                    "the kernel (irqfd)"),
    DEFINE_PROP_UINT32("vectors", VirtIOPCIProxy, vectors_prop, 0,
                       .description = "MSI-X vectors (0: one per queue "
                                      "plus one)"),
    DEFINE_PROP_END_OF_LIST(),
};

void virtio_pci_class_set_device(ObjectClass *klass, uint16_t virtio_id,
                                 uint16_t class_id)
{
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    vc->virtio_id = virtio_id;
    /* A non-transitional virtio 1.x device is 0x1040 + its type. */
    pc->device_id = VIRTIO_PCI_DEVICE_ID_BASE + virtio_id;
    pc->subsystem_id = VIRTIO_PCI_DEVICE_ID_BASE + virtio_id;
    pc->class_id = class_id;
}

static void virtio_pci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    device_class_set_props(dc, virtio_pci_props);
    dc->user_creatable = true;
    dc->hotpluggable = true;
    pc->realize = virtio_pci_realize;
    pc->exit = virtio_pci_exit;
    pc->reset = virtio_pci_pci_reset;
    pc->config_read = virtio_pci_config_read;
    pc->config_write = virtio_pci_config_write;
    dc->vmsd = &vmstate_virtio_pci;
    pc->vendor_id = VIRTIO_PCI_VENDOR_ID;
    pc->subsystem_vendor_id = VIRTIO_PCI_VENDOR_ID;
    pc->revision = 1;
}

static const TypeInfo virtio_pci_types[] = {
    {
        .name = TYPE_VIRTIO_PCI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(VirtIOPCIProxy),
        .class_size = sizeof(VirtIOPCIClass),
        .class_init = virtio_pci_class_init,
        .instance_finalize = virtio_pci_finalize,
        .abstract = true,
    },
};

DEFINE_TYPES(virtio_pci_types)
