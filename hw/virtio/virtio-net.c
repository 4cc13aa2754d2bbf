/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
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
#include "migration/vmstate.h"
#include <glib-unix.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "net/net.h"
#include "monitor/monitor.h"
#include "hw/virtio/virtio-pci.h"
#include "hw/virtio/virtio-net.h"
#include "trace.h"

#define RXQ(nq) (2 * (nq)->index)
#define TXQ(nq) (2 * (nq)->index + 1)
#define NET_HDR_LEN sizeof(struct virtio_net_hdr_mrg_rxbuf)
#define MAX_FRAME (65536 + NET_HDR_LEN)
#define TX_BATCH 256

static void virtio_net_rx_watch(VirtIONetQueue *nq, bool on);

/* ---- transmit ---------------------------------------------------------- */

static void virtio_net_tx(VirtIONetQueue *nq, GuestMemMap *map)
{
    VirtIONetPCI *n = nq->n;
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[TXQ(nq)].vq;
    bool pushed = false;

    for (unsigned done = 0; done < TX_BATCH;) {
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, &nq->tx_elem, &why);
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
        if (res == VIRTQUEUE_BAD_CHAIN || nq->tx_elem.in_num ||
            nq->tx_elem.out_len < NET_HDR_LEN) {
            qemu_log_guest_error("virtio-net %s: bad TX buffer %u: %s\n",
                                 virtio_pci_name(proxy), nq->tx_elem.index,
                                 why ? why : "no readable header");
            nq->tx_errors++;
            virtqueue_push(vq, map, nq->tx_elem.index, 0);
            continue;
        }
        /* A backend without vnet headers gets the frame alone. */
        skip = n->nb->vnet_hdr ? 0 : NET_HDR_LEN;
        for (unsigned i = 0; i < nq->tx_elem.out_num; i++) {
            struct iovec v = nq->tx_elem.sg[i];

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
        if (__atomic_load_n(&n->link_down, __ATOMIC_RELAXED)) {
            /* No carrier: the frame goes nowhere, as on a cable pulled. */
            nq->tx_dropped++;
            virtqueue_push(vq, map, nq->tx_elem.index, 0);
            continue;
        }
        do {
            r = n->nb->is_tap ? writev(nq->fd, iov, niov)
                              : sendmsg(nq->fd, &msg, MSG_DONTWAIT);
        } while (r < 0 && errno == EINTR);
        if (r < 0) {
            /* A full backend drops, as a wire would. */
            nq->tx_dropped++;
        } else {
            nq->tx_packets++;
            trace_virtio_net_tx(virtio_pci_name(proxy), r);
        }
        virtqueue_push(vq, map, nq->tx_elem.index, 0);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, TXQ(nq), map);
    }
    if (!virtqueue_empty(vq, map)) {
        /* Batch limit reached: come back without waiting for a kick. */
        event_notifier_set(&proxy->vqs[TXQ(nq)].host_notifier);
    }
}

/* ---- receive ----------------------------------------------------------- */

/* Pops one usable RX buffer chain; false when none is left. */
static bool virtio_net_rx_pop(VirtIONetQueue *nq, GuestMemMap *map,
                              VirtQueueElement *elem)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(nq->n);
    VirtQueue *vq = &proxy->vqs[RXQ(nq)].vq;

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
 * Delivers the frame in nq->rx_buf (nq->rx_len bytes, header included)
 * to the guest.  Returns false if it must wait for buffers.
 */
static bool virtio_net_rx_deliver(VirtIONetQueue *nq, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(nq->n);
    VirtQueue *vq = &proxy->vqs[RXQ(nq)].vq;
    bool mrg = virtio_pci_has_feature(proxy, VIRTIO_NET_F_MRG_RXBUF);
    size_t off = 0;
    uint16_t nbufs = 0;
    uint16_t heads[64];
    uint32_t lens[64];
    uint16_t first_avail = vq->last_avail_idx;
    struct virtio_net_hdr_mrg_rxbuf *hdr = (void *)nq->rx_buf;
    VirtQueueElement *first = NULL;

    while (off < nq->rx_len) {
        VirtQueueElement *elem = nbufs ? &nq->rx_elem_more : &nq->rx_elem;
        size_t l;

        if (nbufs == G_N_ELEMENTS(heads) ||
            !virtio_net_rx_pop(nq, map, elem)) {
            /* Not enough buffers: give back what we took and wait. */
            vq->last_avail_idx = first_avail;
            return false;
        }
        if (!nbufs) {
            first = elem;
        }
        if (!mrg && elem->in_len < nq->rx_len) {
            /* It can never fit: drop it (the driver gave small buffers). */
            nq->rx_dropped++;
            virtqueue_push(vq, map, elem->index, 0);
            virtio_pci_notify_queue(proxy, RXQ(nq), map);
            return true;
        }
        heads[nbufs] = elem->index;
        if (nbufs == 0) {
            /* num_buffers is written once the count is known. */
            l = iov_from_buf(elem->sg, elem->in_num, 0, nq->rx_buf,
                             nq->rx_len);
        } else {
            l = iov_from_buf(elem->sg, elem->in_num, 0, nq->rx_buf + off,
                             nq->rx_len - off);
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
    nq->rx_packets++;
    trace_virtio_net_rx(virtio_pci_name(proxy), nq->rx_len, nbufs);
    virtio_pci_notify_queue(proxy, RXQ(nq), map);
    return true;
}

/*
 * The peer of a socket backend went away (EOF, a hang-up, a reset): the
 * fd would poll readable forever, so it is not watched again; said once.
 */
static void virtio_net_backend_closed(VirtIONetQueue *nq, const char *how)
{
    VirtIONetPCI *n = nq->n;

    virtio_net_rx_watch(nq, false);
    if (!__atomic_exchange_n(&n->nb->peer_closed, true, __ATOMIC_SEQ_CST)) {
        warn_report("netdev %s: the peer closed the socket (%s); "
                    "virtio-net %s receives nothing more from it",
                    n->nb->id, how, virtio_pci_name(VIRTIO_PCI(n)));
    }
}

/* Reads frames while the guest has room. */
static void virtio_net_rx(VirtIONetQueue *nq, GuestMemMap *map)
{
    VirtIONetPCI *n = nq->n;
    size_t hdr_room = n->nb->vnet_hdr ? 0 : NET_HDR_LEN;

    if (__atomic_load_n(&n->nb->peer_closed, __ATOMIC_SEQ_CST)) {
        return;
    }
    for (unsigned i = 0; i < TX_BATCH; i++) {
        ssize_t r;

        if (!nq->rx_len) {
            r = read(nq->fd, nq->rx_buf + hdr_room, MAX_FRAME - hdr_room);
            if (r < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno != EAGAIN && n->nb->seqpacket) {
                    virtio_net_backend_closed(nq, g_strerror(errno));
                    return;
                }
                virtio_net_rx_watch(nq, true);
                return;
            }
            if (r == 0 && n->nb->seqpacket) {
                virtio_net_backend_closed(nq, "end of file");
                return;
            }
            if (r == 0) {
                /* An empty datagram. */
                virtio_net_rx_watch(nq, true);
                return;
            }
            if (__atomic_load_n(&n->link_down, __ATOMIC_RELAXED)) {
                nq->rx_dropped++;
                continue;
            }
            if (hdr_room) {
                memset(nq->rx_buf, 0, NET_HDR_LEN);
            }
            nq->rx_len = r + hdr_room;
            if (nq->rx_len < NET_HDR_LEN) {
                nq->rx_len = 0;
                continue;
            }
        }
        if (!virtio_net_rx_deliver(nq, map)) {
            /* Wait for the driver to add buffers (an RX kick). */
            virtio_net_rx_watch(nq, false);
            return;
        }
        nq->rx_len = 0;
    }
    /* Fairness: let TX and other sources run; the fd stays watched. */
    virtio_net_rx_watch(nq, true);
}

static gboolean virtio_net_backend_readable(gint fd, GIOCondition cond,
                                            gpointer opaque)
{
    VirtIONetQueue *nq = opaque;
    GuestMemMap *map;

    if ((cond & (G_IO_HUP | G_IO_ERR | G_IO_NVAL)) && !(cond & G_IO_IN)) {
        virtio_net_backend_closed(nq, cond & G_IO_NVAL ? "fd closed"
                                                       : "hang-up");
        return G_SOURCE_CONTINUE;
    }
    map = virtio_pci_get_mem(VIRTIO_PCI(nq->n));
    virtio_net_rx(nq, map);
    guest_mem_map_unref(map);
    return G_SOURCE_CONTINUE;
}

static void virtio_net_rx_watch(VirtIONetQueue *nq, bool on)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(nq->n);

    if (on && !nq->rx_source) {
        nq->rx_source = g_unix_fd_source_new(nq->fd,
                                             G_IO_IN | G_IO_HUP | G_IO_ERR);
        g_source_set_callback(nq->rx_source, (GSourceFunc)(void (*)(void))
                              virtio_net_backend_readable, nq, NULL);
        g_source_attach(nq->rx_source, proxy->ctx);
    } else if (!on && nq->rx_source) {
        g_source_destroy(nq->rx_source);
        g_source_unref(nq->rx_source);
        nq->rx_source = NULL;
    }
}

/* ---- control queue (VIRTIO_NET_F_CTRL_VQ, 5.1.6.5) ---------------------- */

/*
 * Attaches the tap queues of the pairs in use and detaches the others,
 * so that the kernel spreads frames over the queues we read (worker).
 */
static void virtio_net_set_pairs(VirtIONetPCI *n, unsigned pairs)
{
    n->curr_pairs = pairs;
    for (unsigned i = 0; i < n->max_pairs; i++) {
        VirtIONetQueue *nq = &n->queues[i];
        struct ifreq ifr = { .ifr_flags = i < pairs ? IFF_ATTACH_QUEUE
                                                    : IFF_DETACH_QUEUE };

        if (n->max_pairs > 1 && n->nb->is_tap &&
            nq->tap_detached != (i >= pairs)) {
            if (ioctl(nq->fd, TUNSETQUEUE, &ifr) < 0) {
                warn_report("virtio-net-pci %s: tap queue %u: TUNSETQUEUE: "
                            "%s", virtio_pci_name(VIRTIO_PCI(n)), i,
                            strerror(errno));
            } else {
                nq->tap_detached = i >= pairs;
            }
        }
        if (i >= pairs && !n->vhost_running) {
            virtio_net_rx_watch(nq, false);
        }
    }
    trace_virtio_net_pairs(virtio_pci_name(VIRTIO_PCI(n)), pairs);
}

static uint8_t virtio_net_ctrl_cmd(VirtIONetPCI *n, const uint8_t *cmd,
                                   size_t len)
{
    uint16_t pairs;

    if (len < 2) {
        return VIRTIO_NET_ERR;
    }
    if (cmd[0] == VIRTIO_NET_CTRL_MQ &&
        cmd[1] == VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET && len >= 4 &&
        virtio_pci_has_feature(VIRTIO_PCI(n), VIRTIO_NET_F_MQ)) {
        pairs = cmd[2] | (cmd[3] << 8);
        if (pairs < VIRTIO_NET_CTRL_MQ_VQ_PAIRS_MIN ||
            pairs > n->max_pairs) {
            qemu_log_guest_error("virtio-net %s: %u queue pairs asked, %u "
                                 "offered\n", virtio_pci_name(VIRTIO_PCI(n)),
                                 pairs, n->max_pairs);
            return VIRTIO_NET_ERR;
        }
        virtio_net_set_pairs(n, pairs);
        return VIRTIO_NET_OK;
    }
    qemu_log_guest_error("virtio-net %s: control command %u.%u not "
                         "supported\n", virtio_pci_name(VIRTIO_PCI(n)),
                         cmd[0], cmd[1]);
    return VIRTIO_NET_ERR;
}

static void virtio_net_ctrl(VirtIONetPCI *n, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    VirtQueue *vq = &proxy->vqs[n->ctrl_vq].vq;
    VirtQueueElement *elem = &n->ctrl_elem;
    bool pushed = false;

    for (unsigned done = 0; done < TX_BATCH; done++) {
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, elem, &why);
        uint8_t cmd[64];
        uint8_t ack = VIRTIO_NET_ERR;
        size_t len;

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
        pushed = true;
        /* Header and data readable, the ack byte writable (last). */
        if (res == VIRTQUEUE_BAD_CHAIN || !elem->in_len || !elem->out_len) {
            qemu_log_guest_error("virtio-net %s: bad control buffer %u: "
                                 "%s\n", virtio_pci_name(proxy), elem->index,
                                 why ? why : "no header or no ack byte");
            virtqueue_push(vq, map, elem->index, 0);
            continue;
        }
        len = iov_to_buf(elem->sg, elem->out_num, 0, cmd, sizeof(cmd));
        ack = virtio_net_ctrl_cmd(n, cmd, len);
        iov_from_buf(elem->sg + elem->out_num, elem->in_num,
                     elem->in_len - 1, &ack, 1);
        virtqueue_push(vq, map, elem->index, 1);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, n->ctrl_vq, map);
    }
}

static void virtio_net_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                    GuestMemMap *map)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);
    VirtIONetQueue *nq;

    if (n->has_ctrl_vq && q == n->ctrl_vq) {
        virtio_net_ctrl(n, map);
        return;
    }
    if (q / 2 >= n->max_pairs) {
        return;
    }
    nq = &n->queues[q / 2];
    if (q & 1) {
        virtio_net_tx(nq, map);
    } else if (nq->index < n->curr_pairs) {
        /* New RX buffers: a pending frame goes first, then the fd. */
        virtio_net_rx(nq, map);
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
    for (unsigned i = 0; i < n->max_pairs; i++) {
        n->queues[i].rx_len = 0;
    }
    /*
     * One pair after a reset until the driver asks for more
     * (VQ_PAIRS_SET); after a VM stop or a migration, the pairs the
     * driver had chosen.
     */
    virtio_net_set_pairs(n, n->curr_pairs);
    if (n->nb->vhost) {
        return virtio_net_vhost_start(n, errp);
    }
    return true;
}

static void virtio_net_drain(VirtIOPCIProxy *proxy)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    /* Worker thread, about to exit: its sources go with the context. */
    for (unsigned i = 0; i < n->max_pairs; i++) {
        virtio_net_rx_watch(&n->queues[i], false);
    }
}

static void virtio_net_stop(VirtIOPCIProxy *proxy)
{
    virtio_net_vhost_stop(VIRTIO_NET_PCI(proxy));
}

static void virtio_net_reset(VirtIOPCIProxy *proxy)
{
    VirtIONetPCI *n = VIRTIO_NET_PCI(proxy);

    virtio_net_vhost_stop(n);
    n->curr_pairs = 1;
    for (unsigned i = 0; n->queues && i < n->max_pairs; i++) {
        n->queues[i].rx_len = 0;
    }
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
    if (n->host_mtu && n->host_mtu < 68) {
        error_setg(errp, "virtio-net-pci %s: host_mtu=%u is out of range "
                   "(68 to 65535)", name, n->host_mtu);
        return false;
    }
    if (n->mq && n->nb->queues < 2) {
        error_setg(errp, "virtio-net-pci %s: mq=on needs a multiqueue "
                   "netdev", name);
        error_append_hint(errp, "Use -netdev tap,queues=N (or fds=a:b "
                          "from libvirt).\n");
        return false;
    }
    if (!netdev_attach(n->nb, DEVICE(n), errp)) {
        return false;
    }
    /* Without mq=on only the first queue of a multiqueue tap is used. */
    n->max_pairs = n->mq ? n->nb->queues : 1;
    n->curr_pairs = 1;
    n->queues = g_new0(VirtIONetQueue, n->max_pairs);
    for (unsigned i = 0; i < n->max_pairs; i++) {
        n->queues[i].n = n;
        n->queues[i].index = i;
        n->queues[i].fd = n->nb->fds[i] >= 0 ? n->nb->fds[i] : n->nb->fd;
        n->queues[i].vhost_fd = -1;
        proxy->vqs[2 * i].max_size = n->rx_queue_size;
        proxy->vqs[2 * i + 1].max_size = n->tx_queue_size;
    }
    proxy->nvqs = 2 * n->max_pairs;
    if (n->max_pairs > 1) {
        /* MQ needs the control queue, last (5.1.2). */
        n->has_ctrl_vq = true;
        n->ctrl_vq = proxy->nvqs++;
        proxy->vqs[n->ctrl_vq].max_size = 64;
        proxy->host_features |= (1ull << VIRTIO_NET_F_CTRL_VQ) |
                                (1ull << VIRTIO_NET_F_MQ);
        /* One vector per queue and config, unless vectors= says so. */
    }
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
        g_clear_pointer(&n->queues, g_free);
        return false;
    }
    for (unsigned i = 0; i < n->max_pairs; i++) {
        n->queues[i].rx_buf = g_malloc(MAX_FRAME);
    }
    memcpy(cfg.mac, n->mac, 6);
    cfg.status = GUINT16_TO_LE(n->link_down ? 0 : VIRTIO_NET_S_LINK_UP);
    cfg.max_virtqueue_pairs = GUINT16_TO_LE(n->max_pairs);
    proxy->config_len = offsetof(struct virtio_net_config, mtu);
    if (n->host_mtu) {
        /* The MTU Neutron asks for (<mtu size=.../>), told to the guest. */
        proxy->host_features |= 1ull << VIRTIO_NET_F_MTU;
        cfg.mtu = GUINT16_TO_LE(n->host_mtu);
        proxy->config_len = offsetof(struct virtio_net_config, mtu) +
                            sizeof(cfg.mtu);
    }
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
    for (unsigned i = 0; n->queues && i < n->max_pairs; i++) {
        g_free(n->queues[i].rx_buf);
    }
    g_clear_pointer(&n->queues, g_free);
}

/* ---- set_link ----------------------------------------------------------- */

static void virtio_net_set_link(VirtIONetPCI *n, bool up)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(n);
    struct virtio_net_config *cfg = (void *)proxy->config;
    uint16_t status = GUINT16_FROM_LE(cfg->status);

    __atomic_store_n(&n->link_down, !up, __ATOMIC_RELAXED);
    status = up ? status | VIRTIO_NET_S_LINK_UP
                : status & ~VIRTIO_NET_S_LINK_UP;
    if (status == GUINT16_FROM_LE(cfg->status)) {
        return;
    }
    cfg->status = GUINT16_TO_LE(status);
    trace_virtio_net_link(virtio_pci_name(proxy), up);
    /* The driver learns it from the configuration change interrupt. */
    if (virtio_pci_has_feature(proxy, VIRTIO_NET_F_STATUS)) {
        virtio_pci_notify_config(proxy);
    }
}

static void qmp_set_link(JsonObject *args, JsonNode **ret, Error **errp)
{
    const char *name = json_object_get_string_member(args, "name");
    bool up = json_object_get_boolean_member(args, "up");
    DeviceState *dev = qdev_find_by_id(name);
    NetBackend *nb;

    /* A NIC's id, or the id of the -netdev behind it (QEMU takes both). */
    if (!dev || !object_dynamic_cast(OBJECT(dev), TYPE_VIRTIO_NET_PCI)) {
        nb = netdev_find(name);
        dev = nb ? nb->dev : NULL;
        if (nb && !dev) {
            /* A backend nobody uses: there is no link to change. */
            return;
        }
    }
    if (!dev || !object_dynamic_cast(OBJECT(dev), TYPE_VIRTIO_NET_PCI)) {
        error_set(errp, ERROR_CLASS_DEVICE_NOT_FOUND,
                  "Device '%s' not found", name);
        return;
    }
    virtio_net_set_link(VIRTIO_NET_PCI(dev), up);
}

static void __attribute__((constructor)) virtio_net_qmp_register(void)
{
    qmp_register_command_args("set_link", qmp_set_link, "name:s up:b", 0);
}

static const Property virtio_net_props[] = {
    DEFINE_PROP_BOOL("mq", VirtIONetPCI, mq, false,
                     .description = "multiqueue: one queue pair per queue "
                                    "of the netdev (VIRTIO_NET_F_MQ)"),
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
    DEFINE_PROP_UINT16("host_mtu", VirtIONetPCI, host_mtu, 0,
                       .description = "MTU the guest is told to use "
                                      "(VIRTIO_NET_F_MTU; 0: none)"),
    DEFINE_PROP_INT32("bootindex", VirtIONetPCI, bootindex, -1,
                      .description = "boot order (accepted for "
                                     "compatibility: no firmware)"),
    DEFINE_PROP_END_OF_LIST(),
};

static bool virtio_net_post_load(void *opaque, int version_id, Error **errp)
{
    VirtIONetPCI *n = opaque;

    if (!n->curr_pairs || n->curr_pairs > n->max_pairs) {
        error_setg(errp, "virtio-net-pci %s: %u queue pairs in use, the "
                   "device has %u", virtio_pci_name(VIRTIO_PCI(n)),
                   n->curr_pairs, n->max_pairs);
        return false;
    }
    return true;
}

/* The transport, and how many queue pairs the driver chose (MQ). */
static const VMStateDescription vmstate_virtio_net = {
    .name = "virtio-net",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = virtio_net_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, VirtIONetPCI, vmstate_virtio_pci,
                       VirtIOPCIProxy),
        VMSTATE_UINT32(curr_pairs, VirtIONetPCI),
        VMSTATE_END_OF_LIST()
    },
};

static void virtio_net_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    dc->desc = "virtio network device (virtio 1.x, PCI)";
    dc->vmsd = &vmstate_virtio_net;
    device_class_set_props(dc, virtio_net_props);
    /* Class: Ethernet controller. */
    virtio_pci_class_set_device(klass, VIRTIO_ID_NET, 0x0200);
    vc->realize = virtio_net_realize;
    vc->unrealize = virtio_net_unrealize;
    vc->start = virtio_net_start;
    vc->stop = virtio_net_stop;
    vc->handle_queue = virtio_net_handle_queue;
    vc->drain = virtio_net_drain;
    vc->reset = virtio_net_reset;
}

static const TypeInfo virtio_net_types[] = {
    {
        .name = TYPE_VIRTIO_NET_PCI,
        .parent = TYPE_VIRTIO_PCI,
        .instance_size = sizeof(VirtIONetPCI),
        .class_init = virtio_net_class_init,
    },
};

DEFINE_TYPES(virtio_net_types)
