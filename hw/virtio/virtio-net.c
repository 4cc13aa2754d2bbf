/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * virtio-net-pci: a -netdev backend behind a virtio 1.x network device
 * (virtio 1.x, 5.1), one receive and one transmit queue.
 *
 * Userspace path (vhost=off): the transport's worker thread moves frames.
 * TX pops a chain and writes it to the backend (a tap with vnet headers
 * takes the 12-byte virtio-net header as is; a datagram socket gets the
 * frame only).  RX watches the backend fd while the guest has posted
 * buffers, reads one frame into a bounce buffer and spreads it over as
 * many buffers as it needs (VIRTIO_NET_F_MRG_RXBUF) or into one.
 *
 * vhost=on (vhost-net.c): the kernel serves both queues; the host
 * notifiers become its kick fds and the vector eventfds its call fds, so
 * no packet wakes Conduit.
 */
#include "qemu/osdep.h"
#include <glib-unix.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "net/net.h"
#include "hw/virtio/virtio-pci.h"
#include "hw/virtio/virtio-net.h"
#include "trace.h"

#define RXQ 0
#define TXQ 1
#define NET_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)
#define MAX_FRAME (65536 + NET_HDR_LEN)
#define TX_BATCH 256

static void virtio_net_rx_watch(VirtIONetPCI *n, bool on);

/* ---- transmit ---------------------------------------------------------- */

static void virtio_net_tx(VirtIONetPCI *n, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[TXQ].vq;
    bool pushed = false;

    for (unsigned done = 0; done < TX_BATCH;) {
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, &n->tx_elem, &why);
        struct iovec iov[VIRTQUEUE_MAX_SG];
        struct msghdr msg = { .msg_iov = iov };
        unsigned niov = 0;
        size_t skip;
        ssize_t r;

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
        done++;
        pushed = true;
        if (res == VIRTQUEUE_BAD_CHAIN || n->tx_elem.in_num ||
            n->tx_elem.out_len < NET_HDR_LEN) {
            qemu_log_guest_error("virtio-net %s: bad TX buffer %u: %s\n",
                                 virtio_pci_name(proxy), n->tx_elem.index,
                                 why ? why : "no readable header");
            n->tx_errors++;
            virtqueue_push(vq, map, n->tx_elem.index, 0);
            continue;
        }
        /* A backend without vnet headers gets the frame alone. */
        skip = n->nb->vnet_hdr ? 0 : NET_HDR_LEN;
        for (unsigned i = 0; i < n->tx_elem.out_num; i++) {
            struct iovec v = n->tx_elem.sg[i];

            if (skip >= v.iov_len) {
                skip -= v.iov_len;
                continue;
            }
            iov[niov].iov_base = (uint8_t *)v.iov_base + skip;
            iov[niov].iov_len = v.iov_len - skip;
            skip = 0;
            niov++;
        }
        msg.msg_iovlen = niov;
        do {
            r = n->nb->is_tap ? writev(n->nb->fd, iov, niov)
                              : sendmsg(n->nb->fd, &msg, MSG_DONTWAIT);
        } while (r < 0 && errno == EINTR);
        if (r < 0) {
            /* A full backend drops, as a wire would. */
            n->tx_dropped++;
        } else {
            n->tx_packets++;
            trace_virtio_net_tx(virtio_pci_name(proxy), r);
        }
        virtqueue_push(vq, map, n->tx_elem.index, 0);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, TXQ, map);
    }
    if (!virtqueue_empty(vq, map)) {
        /* Batch limit reached: come back without waiting for a kick. */
        event_notifier_set(&proxy->vqs[TXQ].host_notifier);
    }
}

/* ---- receive ----------------------------------------------------------- */

/* Pops one usable RX buffer chain; false when none is left. */
static bool virtio_net_rx_pop(VirtIONetPCI *n, GuestMemMap *map,
                              VirtQueueElement *elem)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[RXQ].vq;

    for (;;) {
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, elem, &why);

        switch (res) {
        case VIRTQUEUE_EMPTY:
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            return false;
        case VIRTQUEUE_BROKEN:
            virtio_pci_set_needs_reset(proxy, why);
            return false;
        case VIRTQUEUE_BAD_CHAIN:
            qemu_log_guest_error("virtio-net %s: bad RX buffer %u: %s\n",
                                 virtio_pci_name(proxy), elem->index, why);
            virtqueue_push(vq, map, elem->index, 0);
            continue;
        case VIRTQUEUE_OK:
            if (elem->out_num || elem->in_len < NET_HDR_LEN) {
                qemu_log_guest_error("virtio-net %s: RX buffer %u is not a "
                                     "writable buffer of at least %zu "
                                     "bytes\n", virtio_pci_name(proxy),
                                     elem->index, NET_HDR_LEN);
                virtqueue_push(vq, map, elem->index, 0);
                continue;
            }
            return true;
        }
    }
}

/*
 * Delivers the frame in n->rx_buf (n->rx_len bytes, header included)
 * to the guest.  Returns false if it must wait for buffers.
 */
static bool virtio_net_rx_deliver(VirtIONetPCI *n, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[RXQ].vq;
    bool mrg = virtio_pci_has_feature(proxy, VIRTIO_NET_F_MRG_RXBUF);
    size_t off = 0;
    uint16_t nbufs = 0;
    uint16_t heads[64];
    uint32_t lens[64];
    uint16_t first_avail = vq->last_avail_idx;
    struct virtio_net_hdr_mrg_rxbuf *hdr = (void *)n->rx_buf;
    VirtQueueElement *first = NULL;

    while (off < n->rx_len) {
        VirtQueueElement *elem = nbufs ? &n->rx_elem_more : &n->rx_elem;
        size_t l;

        if (nbufs == G_N_ELEMENTS(heads) || !virtio_net_rx_pop(n, map, elem)) {
            /* Not enough buffers: give back what we took and wait. */
            vq->last_avail_idx = first_avail;
            return false;
        }
        if (!nbufs) {
            first = elem;
        }
        if (!mrg && elem->in_len < n->rx_len) {
            /* It can never fit: drop it (the driver gave small buffers). */
            n->rx_dropped++;
            virtqueue_push(vq, map, elem->index, 0);
            virtio_pci_notify_queue(proxy, RXQ, map);
            return true;
        }
        heads[nbufs] = elem->index;
        if (nbufs == 0) {
            /* num_buffers is written once the count is known. */
            l = iov_from_buf(elem->sg, elem->in_num, 0, n->rx_buf,
                             n->rx_len);
        } else {
            l = iov_from_buf(elem->sg, elem->in_num, 0, n->rx_buf + off,
                             n->rx_len - off);
        }
        lens[nbufs] = l;
        off += l;
        nbufs++;
        if (!mrg) {
            break;
        }
    }
    hdr->num_buffers = GUINT16_TO_LE(nbufs);
    iov_from_buf(first->sg, first->in_num,
                 offsetof(struct virtio_net_hdr_mrg_rxbuf, num_buffers),
                 &hdr->num_buffers, sizeof(hdr->num_buffers));
    for (unsigned i = 0; i < nbufs; i++) {
        virtqueue_push(vq, map, heads[i], lens[i]);
    }
    n->rx_packets++;
    trace_virtio_net_rx(virtio_pci_name(proxy), n->rx_len, nbufs);
    virtio_pci_notify_queue(proxy, RXQ, map);
    return true;
}

/*
 * The peer of a socket backend went away (EOF, a hang-up, a reset): the
 * fd would poll readable forever, so it is not watched again; said once.
 */
static void virtio_net_backend_closed(VirtIONetPCI *n, const char *how)
{
    virtio_net_rx_watch(n, false);
    if (!__atomic_exchange_n(&n->nb->peer_closed, true, __ATOMIC_SEQ_CST)) {
        warn_report("netdev %s: the peer closed the socket (%s); "
                    "virtio-net %s receives nothing more from it",
                    n->nb->id, how, virtio_pci_name(VIRTIO_PCI(n)));
    }
}

/* Reads frames while the guest has room. */
static void virtio_net_rx(VirtIONetPCI *n, GuestMemMap *map)
{
    size_t hdr_room = n->nb->vnet_hdr ? 0 : NET_HDR_LEN;

    if (__atomic_load_n(&n->nb->peer_closed, __ATOMIC_SEQ_CST)) {
        return;
    }
    for (unsigned i = 0; i < TX_BATCH; i++) {
        ssize_t r;

        if (!n->rx_len) {
            r = read(n->nb->fd, n->rx_buf + hdr_room, MAX_FRAME - hdr_room);
            if (r < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno != EAGAIN && n->nb->seqpacket) {
                    virtio_net_backend_closed(n, g_strerror(errno));
                    return;
                }
                virtio_net_rx_watch(n, true);
                return;
            }
            if (r == 0 && n->nb->seqpacket) {
                virtio_net_backend_closed(n, "end of file");
                return;
            }
            if (r == 0) {
                /* An empty datagram. */
                virtio_net_rx_watch(n, true);
                return;
            }
            if (hdr_room) {
                memset(n->rx_buf, 0, NET_HDR_LEN);
            }
            n->rx_len = r + hdr_room;
            if (n->rx_len < NET_HDR_LEN) {
                n->rx_len = 0;
                continue;
            }
        }
        if (!virtio_net_rx_deliver(n, map)) {
            /* Wait for the driver to add buffers (an RX kick). */
            virtio_net_rx_watch(n, false);
            return;
        }
        n->rx_len = 0;
    }
    /* Fairness: let TX and other sources run; the fd stays watched. */
    virtio_net_rx_watch(n, true);
}

static gboolean virtio_net_backend_readable(gint fd, GIOCondition cond,
                                            gpointer opaque)
{
    VirtIONetPCI *n = opaque;
    GuestMemMap *map;

    if ((cond & (G_IO_HUP | G_IO_ERR | G_IO_NVAL)) && !(cond & G_IO_IN)) {
        virtio_net_backend_closed(n, cond & G_IO_NVAL ? "fd closed"
                                                      : "hang-up");
        return G_SOURCE_CONTINUE;
    }
    map = virtio_pci_get_mem(VIRTIO_PCI(n));
    virtio_net_rx(n, map);
    guest_mem_map_unref(map);
    return G_SOURCE_CONTINUE;
}

static void virtio_net_rx_watch(VirtIONetPCI *n, bool on)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);

    if (on && !n->rx_source) {
        n->rx_source = g_unix_fd_source_new(n->nb->fd,
                                            G_IO_IN | G_IO_HUP | G_IO_ERR);
        g_source_set_callback(n->rx_source, (GSourceFunc)(void (*)(void))
                              virtio_net_backend_readable, n, NULL);
        g_source_attach(n->rx_source, proxy->ctx);
    } else if (!on && n->rx_source) {
        g_source_destroy(n->rx_source);
        g_source_unref(n->rx_source);
        n->rx_source = NULL;
    }
}

static void virtio_net_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                    GuestMemMap *map)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    if (q == TXQ) {
        virtio_net_tx(n, map);
    } else {
        /* New RX buffers: a pending frame goes first, then the fd. */
        virtio_net_rx(n, map);
    }
}

/* ---- life cycle -------------------------------------------------------- */

static bool virtio_net_start(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);
    Error *err = NULL;

    if (!net_tap_set_offload(n->nb,
                             virtio_pci_has_feature(proxy,
                                                    VIRTIO_NET_F_GUEST_CSUM),
                             virtio_pci_has_feature(proxy,
                                                    VIRTIO_NET_F_GUEST_TSO4),
                             virtio_pci_has_feature(proxy,
                                                    VIRTIO_NET_F_GUEST_TSO6),
                             false, &err)) {
        warn_report_err(err);
    }
    n->rx_len = 0;
    if (n->nb->vhost) {
        return virtio_net_vhost_start(n, errp);
    }
    return true;
}

static void virtio_net_drain(VirtIOPCIProxy *proxy)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    /* Worker thread, about to exit: its sources go with the context. */
    virtio_net_rx_watch(n, false);
}

static void virtio_net_reset(VirtIOPCIProxy *proxy)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    virtio_net_vhost_stop(n);
    n->rx_len = 0;
}

static bool virtio_net_parse_mac(const char *str, uint8_t mac[6])
{
    unsigned v[6];
    char end;

    if (sscanf(str, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &end) != 6) {
        return false;
    }
    for (int i = 0; i < 6; i++) {
        if (v[i] > 0xff) {
            return false;
        }
        mac[i] = v[i];
    }
    return !(mac[0] & 1);
}

static unsigned virtio_net_count;

static bool virtio_net_realize(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);
    const char *name = virtio_pci_name(proxy);
    struct virtio_net_config cfg = { 0 };

    n->vhost_fd = -1;
    if (!n->netdev) {
        error_setg(errp, "virtio-net-pci %s: netdev property not set", name);
        error_append_hint(errp, "Add netdev=ID naming a -netdev.\n");
        return false;
    }
    n->nb = netdev_find(n->netdev);
    if (!n->nb) {
        error_setg(errp, "virtio-net-pci %s: netdev '%s' not found", name,
                   n->netdev);
        return false;
    }
    if (n->mac_str) {
        if (!virtio_net_parse_mac(n->mac_str, n->mac)) {
            error_setg(errp, "virtio-net-pci %s: mac=%s is not a unicast "
                       "MAC address", name, n->mac_str);
            error_append_hint(errp, "Use six hex bytes: "
                              "mac=52:54:00:12:34:56.\n");
            return false;
        }
    } else {
        static const uint8_t base[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

        memcpy(n->mac, base, 6);
        n->mac[5] += virtio_net_count++;
    }
    for (int i = 0; i < 2; i++) {
        uint16_t qs = i ? n->tx_queue_size : n->rx_queue_size;

        if (qs < 4 || qs > VIRTQUEUE_MAX_SIZE || (qs & (qs - 1))) {
            error_setg(errp, "virtio-net-pci %s: %s_queue_size=%u must be a "
                       "power of 2 between 4 and %u", name, i ? "tx" : "rx",
                       qs, VIRTQUEUE_MAX_SIZE);
            return false;
        }
    }
    if (!netdev_attach(n->nb, DEVICE(n), errp)) {
        return false;
    }
    proxy->nvqs = 2;
    proxy->vqs[RXQ].max_size = n->rx_queue_size;
    proxy->vqs[TXQ].max_size = n->tx_queue_size;
    proxy->host_features |= (1ull << VIRTIO_NET_F_MAC) |
                            (1ull << VIRTIO_NET_F_STATUS);
    if (n->mrg_rxbuf) {
        proxy->host_features |= 1ull << VIRTIO_NET_F_MRG_RXBUF;
    }
    if (n->nb->vnet_hdr && n->offloads) {
        /* The tap checksums and segments what the guest leaves undone. */
        proxy->host_features |= (1ull << VIRTIO_NET_F_CSUM) |
                                (1ull << VIRTIO_NET_F_HOST_TSO4) |
                                (1ull << VIRTIO_NET_F_HOST_TSO6) |
                                (1ull << VIRTIO_NET_F_GUEST_CSUM) |
                                (1ull << VIRTIO_NET_F_GUEST_TSO4) |
                                (1ull << VIRTIO_NET_F_GUEST_TSO6);
    }
    if (n->nb->vhost && !virtio_net_vhost_init(n, errp)) {
        netdev_detach(n->nb);
        return false;
    }
    n->rx_buf = g_malloc(MAX_FRAME);
    memcpy(cfg.mac, n->mac, 6);
    cfg.status = GUINT16_TO_LE(VIRTIO_NET_S_LINK_UP);
    cfg.max_virtqueue_pairs = GUINT16_TO_LE(1);
    proxy->config_len = offsetof(struct virtio_net_config, mtu);
    proxy->config = g_malloc0(sizeof(cfg));
    memcpy(proxy->config, &cfg, sizeof(cfg));
    return true;
}

static void virtio_net_unrealize(VirtIOPCIProxy *proxy)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    virtio_net_vhost_cleanup(n);
    if (n->nb) {
        netdev_detach(n->nb);
        n->nb = NULL;
    }
    g_free(n->rx_buf);
    n->rx_buf = NULL;
}

static const Property virtio_net_props[] = {
    DEFINE_PROP_STRING("netdev", VirtIONetPCI, netdev,
                       .description = "-netdev id of the backend"),
    DEFINE_PROP_STRING("mac", VirtIONetPCI, mac_str,
                       .description = "MAC address (default "
                                      "52:54:00:12:34:56 + n)"),
    DEFINE_PROP_BOOL("mrg_rxbuf", VirtIONetPCI, mrg_rxbuf, true,
                     .description = "offer mergeable receive buffers"),
    DEFINE_PROP_BOOL("x-offloads", VirtIONetPCI, offloads, true,
                     .description = "offer checksum and TSO offloads when "
                                    "the tap has vnet headers"),
    DEFINE_PROP_UINT16("rx_queue_size", VirtIONetPCI, rx_queue_size, 256,
                       .description = "receive queue size (power of 2)"),
    DEFINE_PROP_UINT16("tx_queue_size", VirtIONetPCI, tx_queue_size, 256,
                       .description = "transmit queue size (power of 2)"),
    DEFINE_PROP_INT32("bootindex", VirtIONetPCI, bootindex, -1,
                      .description = "boot order (accepted for "
                                     "compatibility: no firmware)"),
    DEFINE_PROP_END_OF_LIST(),
};

static void virtio_net_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    dc->desc = "virtio network device (virtio 1.x, PCI)";
    device_class_set_props(dc, virtio_net_props);
    /* Class: Ethernet controller. */
    virtio_pci_class_set_device(klass, VIRTIO_ID_NET, 0x0200);
    vc->realize = virtio_net_realize;
    vc->unrealize = virtio_net_unrealize;
    vc->start = virtio_net_start;
    vc->handle_queue = virtio_net_handle_queue;
    vc->drain = virtio_net_drain;
    vc->reset = virtio_net_reset;
}

static const TypeInfo virtio_net_type = {
    .name = TYPE_VIRTIO_NET_PCI,
    .parent = TYPE_VIRTIO_PCI,
    .instance_size = sizeof(VirtIONetPCI),
    .class_init = virtio_net_class_init,
};

static void virtio_net_register_types(void)
{
    type_register_static(&virtio_net_type);
}
type_init(virtio_net_register_types)
