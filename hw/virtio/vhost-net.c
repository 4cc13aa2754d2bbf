/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vhost-net for virtio-net-pci (vhost=on), written from <linux/vhost.h>:
 * the kernel moves frames between the tap and the guest's rings.  Kick
 * fds are the queues' host notifiers (KVM ioeventfds on the notify
 * address), call fds the MSI-X vectors' eventfds (KVM irqfds), so a
 * packet never wakes Conduit.  The memory table follows the guest's RAM
 * (GuestMemTracker notifications).
 *
 * A vhost-net device serves one queue pair (its rings 0 and 1), so a
 * multiqueue NIC has one per pair: vhostfds= from libvirt, or one
 * /dev/vhost-net each.  The control queue stays with Conduit's worker.
 *
 * Migration: while RAM is logged the kernel logs what it writes too
 * (VHOST_F_LOG_ALL, and VHOST_VRING_F_LOG for each used ring) into a
 * bitmap of guest-physical pages (vhost-log.h) that every dirty-log sync
 * folds into RAM's.  A VM stop takes the rings back from the kernel, with
 * the index it had reached, so that the saved queue state is the one the
 * destination's kernel resumes from.
 */
#include "qemu/osdep.h"
#include <linux/vhost.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>
#include "qapi/error.h"
#include "migration/migration.h"
#include "qemu/error-report.h"
#include "hw/virtio/guest-mem.h"
#include "hw/virtio/vhost-log.h"
#include "hw/virtio/virtio-net.h"
#include "system/address-spaces.h"
#include "system/memory.h"
#include "trace.h"

/* Opens (or takes libvirt's) vhost-net device for pair i. */
static bool vhost_open_pair(VirtIONetPCI *n, unsigned i, uint64_t *features,
                            Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtIONetQueue *nq = &n->queues[i];
    int given = n->nb->vhostfds[i];

    nq->vhost_fd = given >= 0 ? given : open("/dev/vhost-net",
                                              O_RDWR | O_CLOEXEC);
    if (nq->vhost_fd < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost=on: cannot "
                         "open /dev/vhost-net", virtio_pci_name(proxy));
        error_append_hint(errp, "Load vhost_net, or use vhost=off.\n");
        return false;
    }
    if (ioctl(nq->vhost_fd, VHOST_SET_OWNER, NULL) < 0 ||
        ioctl(nq->vhost_fd, VHOST_GET_FEATURES, features) < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost-net set-up "
                         "of queue pair %u failed", virtio_pci_name(proxy), i);
        return false;
    }
    return true;
}

static void vhost_close_all(VirtIONetPCI *n)
{
    for (unsigned i = 0; i < n->max_pairs; i++) {
        VirtIONetQueue *nq = &n->queues[i];

        /* libvirt's fds are closed with the netdev. */
        if (nq->vhost_fd >= 0 && nq->vhost_fd != n->nb->vhostfds[i]) {
            close(nq->vhost_fd);
        }
        nq->vhost_fd = -1;
    }
}

/* ---- dirty log ---- */

static uint64_t vhost_features_now(VirtIONetPCI *n)
{
    uint64_t f = VIRTIO_PCI(n)->guest_features & n->vhost_features;

    return n->vhost_log ? f | (1ull << VHOST_F_LOG_ALL) : f;
}

static bool vhost_queue_addr(VirtIONetPCI *n, unsigned q, GuestMemMap *map,
                             struct vhost_vring_addr *addr)
{
    VirtQueue *vq = &VIRTIO_PCI(n)->vqs[q].vq;

    *addr = (struct vhost_vring_addr) { .index = q % 2 };
    addr->desc_user_addr = (uintptr_t)guest_mem_translate(map, vq->desc,
                                                          16ull * vq->num);
    addr->avail_user_addr = (uintptr_t)guest_mem_translate(map, vq->avail,
                                                           6 + 2 * vq->num);
    addr->used_user_addr = (uintptr_t)guest_mem_translate(map, vq->used,
                                                          6 + 8 * vq->num);
    if (n->vhost_log) {
        /* The used ring is written through its host address: say where. */
        addr->flags = 1u << VHOST_VRING_F_LOG;
        addr->log_guest_addr = vq->used;
    }
    return addr->desc_user_addr && addr->avail_user_addr &&
           addr->used_user_addr;
}

/* Pair i's vhost-net takes the negotiated features (and LOG_ALL). */
static bool vhost_set_features(VirtIONetPCI *n, unsigned i, Error **errp)
{
    uint64_t features = vhost_features_now(n);

    if (ioctl(n->queues[i].vhost_fd, VHOST_SET_FEATURES, &features) < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost-net "
                         "VHOST_SET_FEATURES 0x%" PRIx64,
                         virtio_pci_name(VIRTIO_PCI(n)), features);
        return false;
    }
    return true;
}

/* The kernel's logging follows n->vhost_log: features and used rings. */
static bool vhost_apply_log(VirtIONetPCI *n, Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    GuestMemMap *map;
    bool ok = true;

    for (unsigned i = 0; i < n->max_pairs; i++) {
        if (!vhost_set_features(n, i, errp)) {
            return false;
        }
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned q = 0; q < 2 * n->max_pairs && ok; q++) {
        struct vhost_vring_addr addr;

        if (!proxy->vqs[q].external) {
            continue;
        }
        if (!vhost_queue_addr(n, q, map, &addr) ||
            ioctl(n->queues[q / 2].vhost_fd, VHOST_SET_VRING_ADDR,
                  &addr) < 0) {
            error_setg_errno(errp, errno, "virtio-net-pci %s: vhost-net "
                             "logging of queue %u", virtio_pci_name(proxy), q);
            ok = false;
        }
    }
    guest_mem_map_unref(map);
    return ok;
}

static void vhost_log_start(MemoryListener *listener)
{
    VirtIONetPCI *n = container_of(listener, VirtIONetPCI,
                                   vhost_log_listener);
    GuestMemMap *map = virtio_pci_get_mem(VIRTIO_PCI(n));
    uint64_t end = 0, base;
    Error *err = NULL;

    for (unsigned i = 0; i < map->nr; i++) {
        end = MAX(end, map->ranges[i].gpa + map->ranges[i].size);
    }
    guest_mem_map_unref(map);
    n->vhost_log_words = vhost_log_words(end);
    n->vhost_log = g_new0(uint64_t, n->vhost_log_words);
    base = (uintptr_t)n->vhost_log;
    for (unsigned i = 0; i < n->max_pairs; i++) {
        if (ioctl(n->queues[i].vhost_fd, VHOST_SET_LOG_BASE, &base) < 0) {
            error_setg_errno(&err, errno, "virtio-net-pci %s: vhost-net "
                             "VHOST_SET_LOG_BASE", virtio_pci_name(VIRTIO_PCI(n)));
            break;
        }
    }
    if (!err && n->vhost_running) {
        vhost_apply_log(n, &err);
    }
    trace_virtio_net_vhost_log(virtio_pci_name(VIRTIO_PCI(n)), true,
                               n->vhost_log_words);
    if (err) {
        /* The migration cannot be trusted: it must not complete. */
        error_prepend(&err, "the kernel's writes to guest memory would "
                      "not be logged: ");
        migration_fail_outgoing(err);
    }
}

static void vhost_log_page(uint64_t gpa, void *opaque)
{
    GuestMemMap *map = opaque;
    void *hva = guest_mem_translate(map, gpa, VHOST_LOG_PAGE_SIZE);

    if (hva) {
        memory_ram_mark_dirty_hva(hva, VHOST_LOG_PAGE_SIZE);
    }
}

static void vhost_log_sync(MemoryListener *listener)
{
    VirtIONetPCI *n = container_of(listener, VirtIONetPCI,
                                   vhost_log_listener);
    GuestMemMap *map;
    uint64_t pages;

    if (!n->vhost_log) {
        return;
    }
    map = virtio_pci_get_mem(VIRTIO_PCI(n));
    pages = vhost_log_harvest(n->vhost_log, n->vhost_log_words,
                              vhost_log_page, map);
    guest_mem_map_unref(map);
    n->vhost_log_pages += pages;
    trace_virtio_net_vhost_log_sync(virtio_pci_name(VIRTIO_PCI(n)), pages);
}

static void vhost_log_stop(MemoryListener *listener)
{
    VirtIONetPCI *n = container_of(listener, VirtIONetPCI,
                                   vhost_log_listener);
    Error *err = NULL;

    uint64_t *log = n->vhost_log;

    if (!log) {
        return;
    }
    n->vhost_log = NULL;
    n->vhost_log_words = 0;
    /* Off in the kernel before the bitmap it writes goes. */
    if (n->vhost_running && !vhost_apply_log(n, &err)) {
        warn_report_err(err);
    }
    g_free(log);
    trace_virtio_net_vhost_log(virtio_pci_name(VIRTIO_PCI(n)), false, 0);
}

bool virtio_net_vhost_init(VirtIONetPCI *n, Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    uint64_t features = ~0ull;

    for (unsigned i = 0; i < n->max_pairs; i++) {
        uint64_t f;

        if (!vhost_open_pair(n, i, &f, errp)) {
            vhost_close_all(n);
            return false;
        }
        features &= f;
    }
    if (!(features & (1ull << VIRTIO_F_VERSION_1))) {
        error_setg(errp, "virtio-net-pci %s: this vhost-net lacks "
                   "VERSION_1", virtio_pci_name(proxy));
        vhost_close_all(n);
        return false;
    }
    /*
     * Ring layout features must be the kernel's; checksum and TSO bits
     * describe the header the tap handles, and MAC/STATUS/MQ our config.
     */
    n->vhost_features = features;
    proxy->host_features &= ~(((1ull << VIRTIO_RING_F_INDIRECT_DESC) |
                               (1ull << VIRTIO_RING_F_EVENT_IDX) |
                               (1ull << VIRTIO_NET_F_MRG_RXBUF)) & ~features);
    if (!(features & (1ull << VHOST_F_LOG_ALL))) {
        /* Without it the kernel's writes would escape the dirty log. */
        error_setg(&n->migration_blocker, "virtio-net-pci %s: this "
                   "vhost-net cannot log the guest memory it writes "
                   "(no VHOST_F_LOG_ALL); use vhost=off to migrate",
                   virtio_pci_name(proxy));
        if (!migrate_add_blocker(n->migration_blocker, NULL)) {
            g_clear_pointer(&n->migration_blocker, error_free);
        }
    }
    n->vhost_log_listener = (MemoryListener) {
        .log_global_start = vhost_log_start,
        .log_global_stop = vhost_log_stop,
        .log_sync = vhost_log_sync,
        .name = "vhost-net",
        .priority = 20,
    };
    memory_listener_register(&n->vhost_log_listener, &address_space_memory);
    n->vhost_log_listener_on = true;
    return true;
}

static bool vhost_set_mem(VirtIONetPCI *n, int fd, Error **errp)
{
    GuestMemMap *map = virtio_pci_get_mem(VIRTIO_PCI(n));
    struct vhost_memory *mem;
    int r;

    mem = g_malloc0(sizeof(*mem) + map->nr * sizeof(mem->regions[0]));
    mem->nregions = map->nr;
    for (unsigned i = 0; i < map->nr; i++) {
        mem->regions[i].guest_phys_addr = map->ranges[i].gpa;
        mem->regions[i].memory_size = map->ranges[i].size;
        mem->regions[i].userspace_addr = (uintptr_t)map->ranges[i].hva;
    }
    r = ioctl(fd, VHOST_SET_MEM_TABLE, mem);
    g_free(mem);
    guest_mem_map_unref(map);
    if (r < 0) {
        error_setg_errno(errp, errno, "VHOST_SET_MEM_TABLE");
        return false;
    }
    return true;
}

/* Guest queue q is ring q % 2 of its pair's vhost device. */
static bool vhost_start_queue(VirtIONetPCI *n, unsigned q, GuestMemMap *map,
                              Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtIONetQueue *nq = &n->queues[q / 2];
    unsigned r = q % 2;
    VirtQueue *vq = &proxy->vqs[q].vq;
    EventNotifier *call = virtio_pci_queue_guest_notifier(proxy, q);
    struct vhost_vring_state num = { r, vq->num };
    struct vhost_vring_state base = { r, vq->last_avail_idx };
    struct vhost_vring_addr addr;
    struct vhost_vring_file kick = {
        r, event_notifier_get_fd(&proxy->vqs[q].host_notifier) };
    struct vhost_vring_file callf = { r, call ? event_notifier_get_fd(call)
                                              : -1 };
    struct vhost_vring_file backend = { r, nq->fd };

    if (!vhost_queue_addr(n, q, map, &addr)) {
        error_setg(errp, "virtio-net-pci %s: vhost queue %u: rings are not "
                   "in guest RAM", virtio_pci_name(proxy), q);
        return false;
    }
    if (ioctl(nq->vhost_fd, VHOST_SET_VRING_NUM, &num) < 0 ||
        ioctl(nq->vhost_fd, VHOST_SET_VRING_BASE, &base) < 0 ||
        ioctl(nq->vhost_fd, VHOST_SET_VRING_ADDR, &addr) < 0 ||
        ioctl(nq->vhost_fd, VHOST_SET_VRING_KICK, &kick) < 0 ||
        ioctl(nq->vhost_fd, VHOST_SET_VRING_CALL, &callf) < 0 ||
        ioctl(nq->vhost_fd, VHOST_NET_SET_BACKEND, &backend) < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost queue %u",
                         virtio_pci_name(proxy), q);
        return false;
    }
    proxy->vqs[q].external = true;
    return true;
}

bool virtio_net_vhost_start(VirtIONetPCI *n, Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    GuestMemMap *map;
    bool ok = true;

    for (unsigned i = 0; i < n->max_pairs; i++) {
        if (!vhost_set_features(n, i, errp)) {
            return false;
        }
        if (!vhost_set_mem(n, n->queues[i].vhost_fd, errp)) {
            return false;
        }
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned q = 0; q < 2 * n->max_pairs && ok; q++) {
        if (proxy->vqs[q].enabled) {
            ok = vhost_start_queue(n, q, map, errp);
        }
    }
    guest_mem_map_unref(map);
    n->vhost_running = ok;
    trace_virtio_net_vhost(virtio_pci_name(proxy), ok);
    if (!ok) {
        virtio_net_vhost_stop(n);
    }
    return ok;
}

/*
 * Takes queue q back from the kernel: its next available index, and the
 * used index it wrote to guest memory, become the queue's own, which a
 * restart (VM start) or the migration stream carries on from.
 */
static void vhost_take_queue(VirtIONetPCI *n, unsigned q, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtIONetQueue *nq = &n->queues[q / 2];
    VirtQueue *vq = &proxy->vqs[q].vq;
    struct vhost_vring_file backend = { q % 2, -1 };
    struct vhost_vring_state base = { q % 2, 0 };
    uint16_t *used_idx;

    ioctl(nq->vhost_fd, VHOST_NET_SET_BACKEND, &backend);
    if (ioctl(nq->vhost_fd, VHOST_GET_VRING_BASE, &base) == 0) {
        vq->last_avail_idx = base.num;
    } else {
        warn_report("virtio-net-pci %s: vhost queue %u: cannot read its "
                    "ring position back: %s", virtio_pci_name(proxy), q,
                    g_strerror(errno));
    }
    used_idx = guest_mem_translate(map, vq->used + 2, 2);
    if (used_idx) {
        vq->used_idx = GUINT16_FROM_LE(__atomic_load_n(used_idx,
                                                   __ATOMIC_ACQUIRE));
    }
    vq->signalled_used_valid = false;
    proxy->vqs[q].external = false;
    trace_virtio_net_vhost_queue(virtio_pci_name(proxy), q,
                                 vq->last_avail_idx, vq->used_idx);
}

void virtio_net_vhost_stop(VirtIONetPCI *n)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    GuestMemMap *map = NULL;

    if (!n->queues || n->queues[0].vhost_fd < 0) {
        return;
    }
    /*
     * Only a queue the kernel has needs the memory map: at unplug this
     * runs again after the transport's memory tracker is gone.
     */
    for (unsigned q = 0; q < 2 * n->max_pairs; q++) {
        if (proxy->vqs[q].external) {
            if (!map) {
                map = virtio_pci_get_mem(proxy);
            }
            vhost_take_queue(n, q, map);
        }
    }
    if (map) {
        guest_mem_map_unref(map);
    }
    if (n->vhost_running) {
        trace_virtio_net_vhost(virtio_pci_name(proxy), false);
    }
    n->vhost_running = false;
}

void virtio_net_vhost_cleanup(VirtIONetPCI *n)
{
    if (n->vhost_log_listener_on) {
        memory_listener_unregister(&n->vhost_log_listener);
        n->vhost_log_listener_on = false;
    }
    g_clear_pointer(&n->vhost_log, g_free);
    if (n->migration_blocker) {
        migrate_del_blocker(n->migration_blocker);
        g_clear_pointer(&n->migration_blocker, error_free);
    }
    if (n->queues && n->queues[0].vhost_fd >= 0) {
        virtio_net_vhost_stop(n);
        vhost_close_all(n);
    }
}
