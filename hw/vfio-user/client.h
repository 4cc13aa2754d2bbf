/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user client transport: a VFIODeviceIOOps backend speaking the
 * vfio-user protocol (include/vfio-user/protocol.h) over a UNIX socket.
 * Private to hw/vfio-user (client.c the transport, device.c the device
 * ops, pci.c the vfio-user-pci driver) and its unit tests and fuzzer.
 *
 * One request is outstanding at a time: a request is sent, then messages
 * are read until the reply with the same id and command arrives or
 * x-msg-timeout expires.  Requests the server sends meanwhile (DMA_READ /
 * DMA_WRITE) are served inline; a late reply to a request that timed out
 * is recognised by its id and dropped.  Every reply is validated before
 * use.  Losing the framing (EOF, malformed header, short message) marks
 * the client broken, and VFIODevice.broken with it; from then on every
 * request fails fast.  None of this ever exits or aborts.
 */
#ifndef HW_VFIO_USER_CLIENT_H
#define HW_VFIO_USER_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "hw/vfio/vfio-device.h"
#include "vfio-user/protocol.h"

typedef struct VFIOUserClient VFIOUserClient;

/* Default for x-msg-timeout, in milliseconds. */
#define VFIO_USER_DEFAULT_MSG_TIMEOUT_MS 5000

/*
 * Serves a DMA_READ (!@is_write: copy guest memory at @addr into @buf) or
 * DMA_WRITE (copy @buf to guest memory) the server asked for, for devices
 * whose memory was mapped without an fd.
 */
typedef bool (*VFIOUserDMAHandler)(void *opaque, uint64_t addr, void *buf,
                                   uint64_t len, bool is_write,
                                   Error **errp);

/*
 * Takes ownership of the connected socket @fd (closed on failure too),
 * negotiates the version and capabilities and returns the client.
 * @name names the device in messages (e.g. the socket path).
 * @timeout_ms is x-msg-timeout, 0 for the default.
 */
VFIOUserClient *vfio_user_client_new(int fd, const char *name,
                                     uint32_t timeout_ms, Error **errp);
/* Connects to the server socket at @path, then as vfio_user_client_new. */
VFIOUserClient *vfio_user_client_connect(const char *path,
                                         uint32_t timeout_ms, Error **errp);
void vfio_user_client_free(VFIOUserClient *client);

/* The capabilities both sides agreed on. */
const VFIOUserCaps *vfio_user_client_caps(VFIOUserClient *client);
bool vfio_user_client_is_broken(VFIOUserClient *client);
void vfio_user_client_set_dma_handler(VFIOUserClient *client,
                                      VFIOUserDMAHandler handler,
                                      void *opaque);

/*
 * The socket, for a main-loop read handler that calls
 * vfio_user_client_process_incoming() so that server requests are served
 * while no request of ours is outstanding.
 */
int vfio_user_client_get_fd(VFIOUserClient *client);
/*
 * Serves every complete message already waiting, without blocking for
 * more.  Returns false (and the client is broken) if the connection was
 * lost or the framing is broken.
 */
bool vfio_user_client_process_incoming(VFIOUserClient *client,
                                       Error **errp);

/*
 * Binds @client to @vbasedev (ops, backend; vbasedev->fd = -1) and reads
 * the device info into vbasedev->flags/num_regions/num_irqs.  The device
 * owns the client from then on, also on failure: its close op frees it.
 */
bool vfio_user_device_attach(VFIODevice *vbasedev, VFIOUserClient *client,
                             Error **errp);

extern const VFIODeviceIOOps vfio_user_device_io_ops;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(VFIOUserClient, vfio_user_client_free)

/* ---- between client.c (the transport) and device.c (the device ops) ---- */

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
