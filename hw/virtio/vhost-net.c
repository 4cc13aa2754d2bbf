/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * vhost-net for virtio-net-pci (vhost=on), written from <linux/vhost.h>:
 * the kernel moves frames between the tap and the guest's rings.  Kick
 * fds are the queues' host notifiers (KVM ioeventfds on the notify
 * address), call fds the MSI-X vectors' eventfds (KVM irqfds), so a
 * packet never wakes Conduit.  The memory table follows the guest's RAM
 * (GuestMemTracker notifications).
 */
#include "qemu/osdep.h"
#include <linux/vhost.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/virtio/guest-mem.h"
#include "hw/virtio/virtio-net.h"
#include "trace.h"

bool virtio_net_vhost_init(VirtIONetPCI *n, Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    uint64_t features;

    /* A vhostfd= stays the netdev's: only an fd opened here is closed. */
    n->vhost_fd_owned = n->nb->vhostfd < 0;
    n->vhost_fd = n->nb->vhostfd >= 0 ? n->nb->vhostfd
                                      : open("/dev/vhost-net",
                                             O_RDWR | O_CLOEXEC);
    if (n->vhost_fd < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost=on: cannot "
                         "open /dev/vhost-net", virtio_pci_name(proxy));
        error_append_hint(errp, "Load vhost_net, or use vhost=off.\n");
        return false;
    }
    if (ioctl(n->vhost_fd, VHOST_SET_OWNER, NULL) < 0 ||
        ioctl(n->vhost_fd, VHOST_GET_FEATURES, &features) < 0) {
        error_setg_errno(errp, errno, "virtio-net-pci %s: vhost-net set-up "
                         "failed", virtio_pci_name(proxy));
        if (n->vhost_fd_owned) {
            close(n->vhost_fd);
        }
        n->vhost_fd = -1;
        return false;
    }
    if (!(features & (1ull << VIRTIO_F_VERSION_1))) {
        error_setg(errp, "virtio-net-pci %s: this vhost-net lacks "
                   "VERSION_1", virtio_pci_name(proxy));
        if (n->vhost_fd_owned) {
            close(n->vhost_fd);
        }
        n->vhost_fd = -1;
        return false;
    }
    /*
     * Ring layout features must be the kernel's; checksum and TSO bits
     * describe the header the tap handles, and MAC/STATUS our config.
     */
    n->vhost_features = features;
    proxy->host_features &= ~(((1ull << VIRTIO_RING_F_INDIRECT_DESC) |
                               (1ull << VIRTIO_RING_F_EVENT_IDX) |
                               (1ull << VIRTIO_NET_F_MRG_RXBUF)) & ~features);
    return true;
}

static bool vhost_set_mem(VirtIONetPCI *n, Error **errp)
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
    r = ioctl(n->vhost_fd, VHOST_SET_MEM_TABLE, mem);
    g_free(mem);
    guest_mem_map_unref(map);
    if (r < 0) {
        error_setg_errno(errp, errno, "VHOST_SET_MEM_TABLE");
        return false;
    }
    return true;
}

static bool vhost_start_queue(VirtIONetPCI *n, unsigned q, GuestMemMap *map,
                              Error **errp)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[q].vq;
    EventNotifier *call = virtio_pci_queue_guest_notifier(proxy, q);
    struct vhost_vring_state num = { q, vq->num };
    struct vhost_vring_state base = { q, vq->last_avail_idx };
    struct vhost_vring_addr addr = { .index = q };
    struct vhost_vring_file kick = {
        q, event_notifier_get_fd(&proxy->vqs[q].host_notifier) };
    struct vhost_vring_file callf = { q, call ? event_notifier_get_fd(call)
                                              : -1 };
    struct vhost_vring_file backend = { q, n->nb->fd };

    addr.desc_user_addr = (uintptr_t)guest_mem_translate(map, vq->desc,
                                                         16ull * vq->num);
    addr.avail_user_addr = (uintptr_t)guest_mem_translate(map, vq->avail,
                                                          6 + 2 * vq->num);
    addr.used_user_addr = (uintptr_t)guest_mem_translate(map, vq->used,
                                                         6 + 8 * vq->num);
    if (ioctl(n->vhost_fd, VHOST_SET_VRING_NUM, &num) < 0 ||
        ioctl(n->vhost_fd, VHOST_SET_VRING_BASE, &base) < 0 ||
        ioctl(n->vhost_fd, VHOST_SET_VRING_ADDR, &addr) < 0 ||
        ioctl(n->vhost_fd, VHOST_SET_VRING_KICK, &kick) < 0 ||
        ioctl(n->vhost_fd, VHOST_SET_VRING_CALL, &callf) < 0 ||
        ioctl(n->vhost_fd, VHOST_NET_SET_BACKEND, &backend) < 0) {
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
    uint64_t features = proxy->guest_features & n->vhost_features;
    GuestMemMap *map;
    bool ok = true;

    if (ioctl(n->vhost_fd, VHOST_SET_FEATURES, &features) < 0) {
        error_setg_errno(errp, errno, "VHOST_SET_FEATURES 0x%" PRIx64,
                         features);
        return false;
    }
    if (!vhost_set_mem(n, errp)) {
        return false;
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned q = 0; q < proxy->nvqs && ok; q++) {
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

void virtio_net_vhost_stop(VirtIONetPCI *n)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);

    if (n->vhost_fd < 0) {
        return;
    }
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        struct vhost_vring_file backend = { q, -1 };
        struct vhost_vring_state base = { q, 0 };

        if (!proxy->vqs[q].external) {
            continue;
        }
        ioctl(n->vhost_fd, VHOST_NET_SET_BACKEND, &backend);
        ioctl(n->vhost_fd, VHOST_GET_VRING_BASE, &base);
        proxy->vqs[q].external = false;
    }
    if (n->vhost_running) {
        trace_virtio_net_vhost(virtio_pci_name(proxy), false);
    }
    n->vhost_running = false;
}

void virtio_net_vhost_cleanup(VirtIONetPCI *n)
{
    if (n->vhost_fd >= 0) {
        virtio_net_vhost_stop(n);
        if (n->vhost_fd_owned) {
            close(n->vhost_fd);
        }
        n->vhost_fd = -1;
    }
}
