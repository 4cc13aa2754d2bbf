/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-net-pci state, shared by virtio-net.c and vhost-net.c.
 */
#ifndef HW_VIRTIO_VIRTIO_NET_H
#define HW_VIRTIO_VIRTIO_NET_H

#include "hw/virtio/virtio-pci.h"
#include "net/net.h"

#define TYPE_VIRTIO_NET_PCI "virtio-net-pci"
#define VIRTIO_NET_PCI(obj) \
    OBJECT_CHECK(VirtIONetPCI, (obj), TYPE_VIRTIO_NET_PCI)

typedef struct VirtIONetPCI VirtIONetPCI;

/* One queue pair: receive queue 2 * index, transmit queue 2 * index + 1. */
typedef struct VirtIONetQueue {
    VirtIONetPCI *n;
    unsigned index;
    int fd;                     /* the backend's fd for this pair */
    bool tap_detached;          /* TUNSETQUEUE IFF_DETACH_QUEUE done */

    /* Worker thread only. */
    VirtQueueElement tx_elem;
    VirtQueueElement rx_elem;
    VirtQueueElement rx_elem_more;
    uint8_t *rx_buf;            /* one frame with its virtio-net header */
    size_t rx_len;              /* a frame waiting for buffers, or 0 */
    GSource *rx_source;
    uint64_t tx_packets, tx_dropped, tx_errors, rx_packets, rx_dropped;

    /* vhost-net: one device per pair. */
    int vhost_fd;
} VirtIONetQueue;

struct VirtIONetPCI {
    VirtIOPCIProxy parent_obj;

    NetBackend *nb;
    uint8_t mac[6];

    unsigned max_pairs;         /* queue pairs the device offers */
    unsigned curr_pairs;        /* in use (VIRTIO_NET_CTRL_MQ); worker */
    VirtIONetQueue *queues;     /* [max_pairs] */
    unsigned ctrl_vq;           /* index of the control queue, if any */
    bool has_ctrl_vq;
    VirtQueueElement ctrl_elem;

    /* vhost-net */
    uint64_t vhost_features;
    Error *migration_blocker;   /* a vhost-net without VHOST_F_LOG_ALL */
    bool vhost_running;
    /* While RAM is logged: the kernel's log of the pages it wrote. */
    MemoryListener vhost_log_listener;
    bool vhost_log_listener_on;
    uint64_t *vhost_log;
    size_t vhost_log_words;
    uint64_t vhost_log_pages;   /* pages it reported, in all */

    /* set_link: the link is down (frames are dropped both ways). */
    bool link_down;

    /* Properties. */
    bool mq;
    uint16_t host_mtu;
    char *netdev;
    char *mac_str;
    bool mrg_rxbuf;
    bool offloads;
    uint16_t rx_queue_size;
    uint16_t tx_queue_size;
    int32_t bootindex;
};

/* vhost-net.c: open /dev/vhost-net (or the vhostfd), at realize. */
bool virtio_net_vhost_init(VirtIONetPCI *n, Error **errp);
/* DRIVER_OK: hand every queue pair to the kernel. */
bool virtio_net_vhost_start(VirtIONetPCI *n, Error **errp);
void virtio_net_vhost_stop(VirtIONetPCI *n);
void virtio_net_vhost_cleanup(VirtIONetPCI *n);

#endif
