/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * What hw/vfio-user/device.c (the device ops) needs from client.c (the
 * transport): one request and its reply.  Private to hw/vfio-user; the
 * public API is include/hw/vfio-user/vfio-user.h.
 */
#ifndef HW_VFIO_USER_CLIENT_H
#define HW_VFIO_USER_CLIENT_H

#include "hw/vfio-user/vfio-user.h"

/* The most fds a message from the server may carry. */
#define CLIENT_MAX_RECV_FDS     4

/* The transport's state; only client.c changes it. */
struct VFIOUserClient {
    char *name;
    int fd;
    uint32_t timeout_ms;
    uint16_t next_id;
    bool broken;
    VFIOUserCaps ours;          /* what we offered */
    VFIOUserCaps caps;          /* negotiated */
    GMutex lock;                /* one request or incoming pass at a time */
    VFIOUserDMAHandler dma_handler;
    void *dma_opaque;
};

/* One received message: header, payload and the fds that came with it. */
typedef struct VFIOUserMsg {
    VFIOUserHdr hdr;
    uint8_t *payload;
    size_t len;
    int fds[CLIENT_MAX_RECV_FDS];
    size_t nfds;
} VFIOUserMsg;

/* Closes the fds still in @msg and frees its payload. */
void vfio_user_msg_clear(VFIOUserMsg *msg);

/*
 * Sends @command with @payload and @fds and, unless @no_reply, waits for
 * its reply (serving server requests meanwhile) into @reply, which the
 * caller clears.  Fails on timeout, an error reply or a lost connection.
 */
bool vfio_user_client_request(VFIOUserClient *c, uint16_t command,
                              const void *payload, size_t len,
                              const int *fds, size_t nfds, bool no_reply,
                              VFIOUserMsg *reply, Error **errp);
/* A reply that must carry no fds and exactly @want bytes. */
bool vfio_user_reply_check(VFIOUserClient *c, VFIOUserMsg *reply,
                           const char *what, size_t want, Error **errp);

#endif
