/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user client: the socket transport (hw/vfio-user/device.c builds
 * the VFIODeviceIOOps backend on it).
 *
 * See client.h for the model: one outstanding request, server requests
 * served while waiting, every reply validated, framing errors make the
 * client broken for good.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/peer-mem.h"
#include "qemu/sockets.h"
#include "client.h"
#include "qemu/vfio-region-info.h"
#include "trace.h"

/* Server requests served per main-loop wake-up. */
#define CLIENT_MAX_INCOMING_BATCH 64

static void msg_close_fds(VFIOUserMsg *msg)
{
    size_t i;

    for (i = 0; i < msg->nfds; i++) {
        if (msg->fds[i] >= 0) {
            close(msg->fds[i]);
        }
    }
    msg->nfds = 0;
}

void vfio_user_msg_clear(VFIOUserMsg *msg)
{
    msg_close_fds(msg);
    g_free(msg->payload);
    msg->payload = NULL;
    msg->len = 0;
}

static void client_set_broken(VFIOUserClient *c, const char *why)
{
    if (!c->broken) {
        trace_vfio_user_broken(c->name, why);
        c->broken = true;
    }
}

static bool client_check(VFIOUserClient *c, Error **errp)
{
    if (c->broken) {
        error_setg(errp, "vfio-user %s: connection to the server is lost",
                   c->name);
        return false;
    }
    return true;
}

/* Sends one message; a failed send breaks the framing. */
static bool client_send(VFIOUserClient *c, uint16_t id, uint16_t command,
                        uint32_t flags, uint32_t error_reply,
                        const void *payload, size_t len, const int *fds,
                        size_t nfds, Error **errp)
{
    g_autofree uint8_t *buf = g_malloc(sizeof(VFIOUserHdr) + len);
    VFIOUserHdr *hdr = (VFIOUserHdr *)buf;

    vfio_user_hdr_init(hdr, id, command, sizeof(*hdr) + len, flags);
    hdr->error_reply = error_reply;
    if (len) {
        memcpy(buf + sizeof(*hdr), payload, len);
    }
    trace_vfio_user_send(c->name, id, vfio_user_command_name(command),
                         (uint32_t)(sizeof(*hdr) + len), flags, nfds);
    if (qemu_send_with_fds(c->fd, buf, sizeof(*hdr) + len, fds, nfds,
                           errp) < 0) {
        error_prepend(errp, "vfio-user %s: ", c->name);
        client_set_broken(c, "send failed");
        return false;
    }
    return true;
}

/*
 * Receives one message, waiting until @deadline (monotonic us; 0: do not
 * wait).  Returns 1 with a message, 0 if none arrived in time, -1 when
 * the connection is lost or the framing broken (the client is broken).
 */
static int client_recv(VFIOUserClient *c, VFIOUserMsg *msg, int64_t deadline,
                       Error **errp)
{
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
    size_t nfds = CLIENT_MAX_RECV_FDS;
    size_t max_payload;
    ssize_t ret;

    memset(msg, 0, sizeof(*msg));
    for (;;) {
        int64_t now = g_get_monotonic_time();
        int wait_ms = deadline > now ? (int)MIN((deadline - now + 999) / 1000,
                                                INT_MAX) : 0;
        int n = poll(&pfd, 1, wait_ms);

        if (n > 0) {
            break;
        }
        if (n == 0) {
            return 0;
        }
        if (errno != EINTR) {
            error_setg_errno(errp, errno, "vfio-user %s: poll failed",
                             c->name);
            client_set_broken(c, "poll failed");
            return -1;
        }
    }
    ret = qemu_recv_with_fds(c->fd, &msg->hdr, sizeof(msg->hdr), msg->fds,
                             &nfds, errp);
    if (ret <= 0) {
        if (ret == 0) {
            error_setg(errp, "vfio-user %s: the server closed the connection",
                       c->name);
        } else {
            error_prepend(errp, "vfio-user %s: ", c->name);
        }
        client_set_broken(c, ret == 0 ? "end of file" : "receive failed");
        return -1;
    }
    msg->nfds = nfds;
    max_payload = vfio_user_max_payload(c->ours.max_data_xfer_size);
    if (!vfio_user_hdr_validate(&msg->hdr, max_payload, errp)) {
        error_prepend(errp, "vfio-user %s: ", c->name);
        msg_close_fds(msg);
        client_set_broken(c, "malformed header");
        return -1;
    }
    msg->len = msg->hdr.size - sizeof(msg->hdr);
    if (msg->len) {
        size_t none = 0;

        msg->payload = g_try_malloc(msg->len);
        if (!msg->payload) {
            error_setg(errp, "vfio-user %s: cannot allocate %zu bytes for a"
                       " message", c->name, msg->len);
            vfio_user_msg_clear(msg);
            client_set_broken(c, "out of memory");
            return -1;
        }
        /* SO_RCVTIMEO bounds a server that stops mid-message. */
        ret = qemu_recv_with_fds(c->fd, msg->payload, msg->len, NULL, &none,
                                 errp);
        if (ret <= 0) {
            if (ret == 0) {
                error_setg(errp, "vfio-user %s: connection closed after a"
                           " message header", c->name);
            } else {
                error_prepend(errp, "vfio-user %s: ", c->name);
            }
            vfio_user_msg_clear(msg);
            client_set_broken(c, "truncated message");
            return -1;
        }
    }
    trace_vfio_user_recv(c->name, msg->hdr.id,
                         vfio_user_command_name(msg->hdr.command),
                         msg->hdr.size, msg->hdr.flags, msg->nfds);
    return 1;
}

static void client_reply_error(VFIOUserClient *c, const VFIOUserMsg *msg,
                               int err_no)
{
    if (!(msg->hdr.flags & VFIO_USER_F_NO_REPLY)) {
        client_send(c, msg->hdr.id, msg->hdr.command,
                    VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR, err_no,
                    NULL, 0, NULL, 0, NULL);
    }
}

/* DMA_READ / DMA_WRITE from the server. */
static void client_serve_dma(VFIOUserClient *c, VFIOUserMsg *msg,
                             bool is_write)
{
    const VFIOUserDMARW *rw;
    g_autofree uint8_t *reply = NULL;
    Error *err = NULL;
    int err_no = EINVAL;
    size_t reply_len;

    if (!vfio_user_dma_rw_decode(msg->payload, msg->len, is_write,
                                 c->ours.max_data_xfer_size, msg->nfds, &rw,
                                 &err_no, &err)) {
        trace_vfio_user_bad_request(c->name, msg->hdr.id,
                                    error_get_pretty(err));
        error_free(err);
        client_reply_error(c, msg, err_no);
        return;
    }
    if (!c->dma_handler) {
        client_reply_error(c, msg, ENOTSUP);
        return;
    }
    reply_len = sizeof(*rw) + (is_write ? 0 : rw->count);
    reply = g_try_malloc(reply_len);
    if (!reply) {
        client_reply_error(c, msg, ENOMEM);
        return;
    }
    memcpy(reply, rw, sizeof(*rw));
    if (!c->dma_handler(c->dma_opaque, rw->address,
                        is_write ? (void *)rw->data : reply + sizeof(*rw),
                        rw->count, is_write, &err)) {
        trace_vfio_user_bad_request(c->name, msg->hdr.id,
                                    error_get_pretty(err));
        error_free(err);
        client_reply_error(c, msg, EFAULT);
        return;
    }
    if (!(msg->hdr.flags & VFIO_USER_F_NO_REPLY)) {
        client_send(c, msg->hdr.id, msg->hdr.command, VFIO_USER_F_TYPE_REPLY,
                    0, reply, reply_len, NULL, 0, NULL);
    }
}

/* A command (not a reply) from the server. */
static void client_serve_request(VFIOUserClient *c, VFIOUserMsg *msg)
{
    switch (msg->hdr.command) {
    case VFIO_USER_DMA_READ:
        client_serve_dma(c, msg, false);
        break;
    case VFIO_USER_DMA_WRITE:
        client_serve_dma(c, msg, true);
        break;
    default:
        trace_vfio_user_bad_request(c->name, msg->hdr.id,
                                    "unsupported command");
        client_reply_error(c, msg, ENOSYS);
        break;
    }
}

/*
 * Sends a request and waits for its reply (unless @no_reply).  On success
 * @reply (if not NULL) owns the reply's payload and fds; the caller must
 * msg_clear it.  Called with the lock held.
 */
static bool client_request_locked(VFIOUserClient *c, uint16_t command,
                                  const void *payload, size_t len,
                                  const int *fds, size_t nfds, bool no_reply,
                                  VFIOUserMsg *reply, Error **errp)
{
    uint16_t id;
    int64_t deadline;

    if (!client_check(c, errp)) {
        return false;
    }
    id = c->next_id++;
    if (!client_send(c, id, command,
                     VFIO_USER_F_TYPE_COMMAND |
                     (no_reply ? VFIO_USER_F_NO_REPLY : 0),
                     0, payload, len, fds, nfds, errp)) {
        return false;
    }
    if (no_reply) {
        return true;
    }
    deadline = g_get_monotonic_time() + (int64_t)c->timeout_ms * 1000;
    for (;;) {
        VFIOUserMsg msg;
        int ret;

        /* Checked here too, so a stream of server requests cannot stall us. */
        ret = g_get_monotonic_time() > deadline ? 0
                                                : client_recv(c, &msg, deadline,
                                                              errp);
        if (ret < 0) {
            return false;
        }
        if (ret == 0) {
            trace_vfio_user_timeout(c->name, id,
                                    vfio_user_command_name(command));
            error_setg(errp, "vfio-user %s: no reply to %s within %u ms",
                       c->name, vfio_user_command_name(command),
                       c->timeout_ms);
            return false;
        }
        if ((msg.hdr.flags & VFIO_USER_F_TYPE_MASK) ==
            VFIO_USER_F_TYPE_COMMAND) {
            client_serve_request(c, &msg);
            vfio_user_msg_clear(&msg);
            continue;
        }
        if (msg.hdr.id != id || msg.hdr.command != command) {
            /* A reply to a request that timed out earlier. */
            trace_vfio_user_stale_reply(c->name, msg.hdr.id,
                                        vfio_user_command_name(
                                            msg.hdr.command));
            vfio_user_msg_clear(&msg);
            continue;
        }
        if (msg.hdr.flags & VFIO_USER_F_ERROR) {
            int err_no = msg.hdr.error_reply;

            if (err_no <= 0 || err_no > 4095) {
                err_no = EIO;
            }
            error_setg_errno(errp, err_no, "vfio-user %s: %s failed",
                             c->name, vfio_user_command_name(command));
            vfio_user_msg_clear(&msg);
            return false;
        }
        if (reply) {
            *reply = msg;
        } else {
            vfio_user_msg_clear(&msg);
        }
        return true;
    }
}

bool vfio_user_client_request(VFIOUserClient *c, uint16_t command,
                              const void *payload, size_t len, const int *fds,
                              size_t nfds, bool no_reply, VFIOUserMsg *reply,
                              Error **errp)
{
    bool ok;

    g_mutex_lock(&c->lock);
    ok = client_request_locked(c, command, payload, len, fds, nfds, no_reply,
                               reply, errp);
    g_mutex_unlock(&c->lock);
    return ok;
}

/* A reply that must carry no fds and exactly @want bytes. */
bool vfio_user_reply_check(VFIOUserClient *c, VFIOUserMsg *reply,
                           const char *what, size_t want, Error **errp)
{
    if (reply->nfds) {
        error_setg(errp, "vfio-user %s: %s reply carries %zu unexpected fds",
                   c->name, what, reply->nfds);
        return false;
    }
    if (reply->len != want) {
        error_setg(errp, "vfio-user %s: %s reply is %zu bytes, expected %zu",
                   c->name, what, reply->len, want);
        return false;
    }
    return true;
}

/* ---- Connection ---- */

static bool client_negotiate(VFIOUserClient *c, Error **errp)
{
    g_autofree void *payload = NULL;
    VFIOUserMsg reply;
    VFIOUserCaps peer;
    uint16_t major, minor;
    size_t len;
    bool ok;

    payload = vfio_user_version_build(VFIO_USER_MAJOR, VFIO_USER_MINOR,
                                      &c->ours, &len);
    if (!vfio_user_client_request(c, VFIO_USER_VERSION, payload, len, NULL, 0,
                                  false, &reply, errp)) {
        return false;
    }
    ok = vfio_user_reply_check(c, &reply, "VERSION", reply.len, errp) &&
         vfio_user_version_parse(reply.payload, reply.len, &major, &minor,
                                 &peer, errp);
    vfio_user_msg_clear(&reply);
    if (!ok) {
        error_prepend(errp, "vfio-user %s: ", c->name);
        return false;
    }
    if (major != VFIO_USER_MAJOR) {
        error_setg(errp, "vfio-user %s: server speaks protocol %u.%u, we"
                   " speak %u.%u", c->name, major, minor, VFIO_USER_MAJOR,
                   VFIO_USER_MINOR);
        return false;
    }
    if (!vfio_user_caps_negotiate(&c->ours, &peer, &c->caps, errp)) {
        error_prepend(errp, "vfio-user %s: ", c->name);
        return false;
    }
    trace_vfio_user_version(c->name, major, minor, c->caps.max_msg_fds,
                            c->caps.max_data_xfer_size);
    return true;
}

VFIOUserClient *vfio_user_client_new(int fd, const char *name,
                                     uint32_t timeout_ms, Error **errp)
{
    g_autoptr(VFIOUserClient) c = g_new0(VFIOUserClient, 1);
    struct timeval tv;

    c->name = g_strdup(name ? name : "?");
    c->fd = fd;
    c->timeout_ms = timeout_ms ? timeout_ms
                               : VFIO_USER_DEFAULT_MSG_TIMEOUT_MS;
    g_mutex_init(&c->lock);
    vfio_user_caps_init_default(&c->ours);
    c->ours.max_msg_fds = CLIENT_MAX_RECV_FDS;
    c->ours.pgsizes = sysconf(_SC_PAGESIZE);
    c->caps = c->ours;
    /* Bound a peer that stops mid-message or stops reading. */
    tv.tv_sec = c->timeout_ms / 1000;
    tv.tv_usec = (c->timeout_ms % 1000) * 1000;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
        error_setg_errno(errp, errno, "vfio-user %s: cannot set socket"
                         " timeouts", c->name);
        return NULL;
    }
    if (!client_negotiate(c, errp)) {
        return NULL;
    }
    return g_steal_pointer(&c);
}

VFIOUserClient *vfio_user_client_connect(const char *path,
                                         uint32_t timeout_ms, Error **errp)
{
    int fd = unix_connect_path(path, errp);

    if (fd < 0) {
        error_prepend(errp, "vfio-user: ");
        return NULL;
    }
    return vfio_user_client_new(fd, path, timeout_ms, errp);
}

void vfio_user_client_free(VFIOUserClient *c)
{
    if (!c) {
        return;
    }
    if (c->fd >= 0) {
        close(c->fd);
    }
    g_mutex_clear(&c->lock);
    g_free(c->name);
    g_free(c);
}

const VFIOUserCaps *vfio_user_client_caps(VFIOUserClient *c)
{
    return &c->caps;
}

bool vfio_user_client_is_broken(VFIOUserClient *c)
{
    return c->broken;
}

void vfio_user_client_set_dma_handler(VFIOUserClient *c,
                                      VFIOUserDMAHandler handler,
                                      void *opaque)
{
    g_mutex_lock(&c->lock);
    c->dma_handler = handler;
    c->dma_opaque = opaque;
    g_mutex_unlock(&c->lock);
}

int vfio_user_client_get_fd(VFIOUserClient *c)
{
    return c->fd;
}

bool vfio_user_client_process_incoming(VFIOUserClient *c, Error **errp)
{
    bool ok = true;

    g_mutex_lock(&c->lock);
    /*
     * A bounded batch: a server that keeps sending must not keep the main
     * loop (QMP, other devices) from running.  The fd stays readable, so
     * the handler runs again on the next iteration.
     */
    for (unsigned n = 0; !c->broken && n < CLIENT_MAX_INCOMING_BATCH; n++) {
        VFIOUserMsg msg;
        int ret = client_recv(c, &msg, 0, errp);

        if (ret <= 0) {
            ok = ret == 0;
            break;
        }
        if ((msg.hdr.flags & VFIO_USER_F_TYPE_MASK) ==
            VFIO_USER_F_TYPE_COMMAND) {
            client_serve_request(c, &msg);
        } else {
            /* Nothing is outstanding, so any reply is stale. */
            trace_vfio_user_stale_reply(c->name, msg.hdr.id,
                                        vfio_user_command_name(
                                            msg.hdr.command));
        }
        vfio_user_msg_clear(&msg);
    }
    if (ok && c->broken) {
        ok = client_check(c, errp);
    }
    g_mutex_unlock(&c->lock);
    return ok;
}
