/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Network backends (-netdev): a tap device (opened by ifname=, or passed
 * by libvirt as fd=) or a datagram socket (fd=, one frame per message).
 * A backend is a file descriptor a NIC model reads and writes frames on,
 * from its own thread; it is created at start-up and lives until exit.
 * A multiqueue tap (-netdev tap,queues=N with ifname=, or fds=a:b with
 * vhostfds=c:d from libvirt) has one fd per queue pair.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdbool.h>
#include "qemu/typedefs.h"

/* Queue pairs of a multiqueue tap (queues=, fds=a:b:...). */
#define NET_MAX_QUEUES 16

typedef struct NetBackend {
    char *id;
    char *ifname;               /* tap only */
    int fd;                     /* non-blocking; queue 0 (fds[0]) */
    unsigned queues;            /* 1, or a multiqueue tap's queue count */
    int fds[NET_MAX_QUEUES];    /* one per queue pair */
    int vhostfds[NET_MAX_QUEUES];   /* vhostfds=, -1 where not given */
    bool is_tap;
    bool seqpacket;             /* a 0-byte read is the peer's close */
    bool peer_closed;           /* atomic: EOF or HUP seen, fd not polled */
    bool vnet_hdr;              /* frames carry a 12-byte virtio-net header */
    bool vhost;                 /* vhost=on: use /dev/vhost-net */
    bool vhost_force;
    int vhostfd;                /* vhostfd= given, else -1 */
    bool owns_fds;              /* opened here or named with getfd */
    DeviceState *dev;
} NetBackend;

NetBackend *netdev_add(QemuOpts *opts, Error **errp);
NetBackend *netdev_find(const char *id);
/* Calls fn for every backend, in creation order. */
void netdev_foreach(void (*fn)(NetBackend *nb, void *opaque), void *opaque);
/* Closes an unused backend (netdev_del). */
bool netdev_del(const char *id, Error **errp);
bool netdev_attach(NetBackend *nb, DeviceState *dev, Error **errp);
void netdev_detach(NetBackend *nb);
/* TUNSETOFFLOAD: what the tap may hand us without checksum/segmentation. */
bool net_tap_set_offload(NetBackend *nb, bool csum, bool tso4, bool tso6,
                         bool ecn, Error **errp);

#endif
