/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * virtio-net-pci state, shared by virtio-net.c and vhost-net.c.
 */
#ifndef HW_VIRTIO_VIRTIO_NET_H
#define HW_VIRTIO_VIRTIO_NET_H

#include "hw/virtio/virtio-pci.h"
#include "net/net.h"

#define TYPE_VIRTIO_NET_PCI "virtio-net-pci"
#define VIRTIO_NET_PCI(obj) \
    OBJECT_CHECK(VirtIONetPCI, (obj), TYPE_VIRTIO_NET_PCI)

typedef struct VirtIONetPCI {
    VirtIOPCIProxy parent_obj;

    NetBackend *nb;
    uint8_t mac[6];

    /* Worker thread only. */
    VirtQueueElement tx_elem;
    VirtQueueElement rx_elem;
    VirtQueueElement rx_elem_more;
    uint8_t *rx_buf;            /* one frame with its virtio-net header */
    size_t rx_len;              /* a frame waiting for buffers, or 0 */
    GSource *rx_source;
    uint64_t tx_packets, tx_dropped, tx_errors, rx_packets, rx_dropped;

    /* vhost-net */
    int vhost_fd;
    bool vhost_fd_owned;        /* opened here, not the netdev's vhostfd= */
    uint64_t vhost_features;
    bool vhost_running;

    /* Properties. */
    char *netdev;
    char *mac_str;
    bool mrg_rxbuf;
    bool offloads;
    uint16_t rx_queue_size;
    uint16_t tx_queue_size;
    int32_t bootindex;
} VirtIONetPCI;

/* vhost-net.c: open /dev/vhost-net (or the vhostfd), at realize. */
bool virtio_net_vhost_init(VirtIONetPCI *n, Error **errp);
/* DRIVER_OK: hand both queues to the kernel. */
bool virtio_net_vhost_start(VirtIONetPCI *n, Error **errp);
void virtio_net_vhost_stop(VirtIONetPCI *n);
void virtio_net_vhost_cleanup(VirtIONetPCI *n);

#endif
