/*
 * vfio-user client: the socket transport and the VFIODeviceOps backend.
 *
 * See include/hw/vfio/vfio-user.h for the model: one outstanding request,
 * server requests served while waiting, every reply validated, framing
 * errors make the client broken for good.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/peer-mem.h"
#include "qemu/sockets.h"
#include "hw/vfio/vfio-user.h"
#include "hw/vfio/region-info.h"
#include "trace.h"

/* What we accept from the server. */
#define CLIENT_MAX_RECV_FDS     4
#define CLIENT_MAX_SEND_FDS     VFIO_USER_LIMIT_MAX_FDS
/* A region info reply (with its chain) larger than this is refused. */
#define REGION_INFO_MAX_LEN     (64 * 1024)
#define REGION_INFO_FIRST_LEN   512
/* Sanity bounds on what a device may report. */
#define DEVICE_MAX_REGIONS      64
#define DEVICE_MAX_IRQ_INDEXES  64
#define IRQ_MAX_COUNT           4096
/* Server requests served per main-loop wake-up. */
#define CLIENT_MAX_INCOMING_BATCH 64

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

typedef struct VFIOUserMsg {
    VFIOUserHdr hdr;
    uint8_t *payload;
    size_t len;
    int fds[CLIENT_MAX_RECV_FDS];
    size_t nfds;
} VFIOUserMsg;

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

static void msg_clear(VFIOUserMsg *msg)
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
            msg_clear(msg);
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
            msg_clear(msg);
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
            msg_clear(&msg);
            continue;
        }
        if (msg.hdr.id != id || msg.hdr.command != command) {
            /* A reply to a request that timed out earlier. */
            trace_vfio_user_stale_reply(c->name, msg.hdr.id,
                                        vfio_user_command_name(
                                            msg.hdr.command));
            msg_clear(&msg);
            continue;
        }
        if (msg.hdr.flags & VFIO_USER_F_ERROR) {
            int err_no = msg.hdr.error_reply;

            if (err_no <= 0 || err_no > 4095) {
                err_no = EIO;
            }
            error_setg_errno(errp, err_no, "vfio-user %s: %s failed",
                             c->name, vfio_user_command_name(command));
            msg_clear(&msg);
            return false;
        }
        if (reply) {
            *reply = msg;
        } else {
            msg_clear(&msg);
        }
        return true;
    }
}

static bool client_request(VFIOUserClient *c, uint16_t command,
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
static bool reply_check(VFIOUserClient *c, VFIOUserMsg *reply,
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
    if (!client_request(c, VFIO_USER_VERSION, payload, len, NULL, 0, false,
                        &reply, errp)) {
        return false;
    }
    ok = reply_check(c, &reply, "VERSION", reply.len, errp) &&
         vfio_user_version_parse(reply.payload, reply.len, &major, &minor,
                                 &peer, errp);
    msg_clear(&reply);
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
        msg_clear(&msg);
    }
    if (ok && c->broken) {
        ok = client_check(c, errp);
    }
    g_mutex_unlock(&c->lock);
    return ok;
}

/* ---- VFIODeviceOps ---- */

static VFIOUserClient *dev_client(VFIODevice *vbasedev)
{
    return vbasedev->backend;
}

/* Mirrors a lost connection into the device. */
static bool dev_done(VFIODevice *vbasedev, bool ok)
{
    if (dev_client(vbasedev)->broken) {
        vbasedev->broken = true;
    }
    return ok;
}

static bool vfio_user_get_device_info(VFIODevice *vbasedev,
                                      struct vfio_device_info *info,
                                      Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    VFIOUserDeviceInfo req = { .argsz = sizeof(req) }, rep;
    VFIOUserMsg reply;

    if (!client_request(c, VFIO_USER_DEVICE_GET_INFO, &req, sizeof(req),
                        NULL, 0, false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    if (!reply_check(c, &reply, "DEVICE_GET_INFO", sizeof(rep), errp)) {
        msg_clear(&reply);
        return dev_done(vbasedev, false);
    }
    memcpy(&rep, reply.payload, sizeof(rep));
    msg_clear(&reply);
    if (rep.argsz < sizeof(rep) || rep.num_regions > DEVICE_MAX_REGIONS ||
        rep.num_irqs > DEVICE_MAX_IRQ_INDEXES) {
        error_setg(errp, "vfio-user %s: implausible device info (argsz %u,"
                   " %u regions, %u irq indexes)", c->name, rep.argsz,
                   rep.num_regions, rep.num_irqs);
        return dev_done(vbasedev, false);
    }
    *info = (struct vfio_device_info) {
        .argsz = sizeof(*info),
        .flags = rep.flags,
        .num_regions = rep.num_regions,
        .num_irqs = rep.num_irqs,
    };
    return dev_done(vbasedev, true);
}

/*
 * Whether we may mmap a region fd from the server.  The server keeps the
 * fd and could shrink it under our mapping (and under KVM's memslot of
 * it), so we only map an fd that is sealed against shrinking and covers
 * the region; otherwise the region is trapped, which is slower but safe.
 */
static bool client_region_fd_safe(VFIOUserClient *c, uint32_t index,
                                  const struct vfio_region_info *info, int fd)
{
    const char *why = NULL;
    struct stat st;

    if (!qemu_peer_fd_seal_shrink(fd)) {
        why = "cannot be sealed against shrinking";
    } else if (fstat(fd, &st) < 0 || info->offset > (uint64_t)st.st_size ||
               info->size > (uint64_t)st.st_size - info->offset) {
        why = "is smaller than the region";
    }
    trace_vfio_user_region_fd(c->name, index, why ? why : "sealed");
    if (why) {
        warn_report("vfio-user %s: region %u: the server's fd %s; the region"
                    " is trapped instead of mapped", c->name, index, why);
        return false;
    }
    return true;
}

static bool vfio_user_get_region_info(VFIODevice *vbasedev, uint32_t index,
                                      struct vfio_region_info **info,
                                      int *fd, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    uint32_t argsz = REGION_INFO_FIRST_LEN;
    struct vfio_region_info req, hdr;
    VFIOUserMsg reply;
    int attempt;

    for (attempt = 0; attempt < 2; attempt++) {
        req = (struct vfio_region_info) { .argsz = argsz, .index = index };
        if (!client_request(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, false, &reply, errp)) {
            return dev_done(vbasedev, false);
        }
        if (reply.nfds > 1 || reply.len < sizeof(hdr)) {
            error_setg(errp, "vfio-user %s: region %u info reply of %zu"
                       " bytes with %zu fds", c->name, index, reply.len,
                       reply.nfds);
            msg_clear(&reply);
            return dev_done(vbasedev, false);
        }
        memcpy(&hdr, reply.payload, sizeof(hdr));
        if (hdr.index != index) {
            error_setg(errp, "vfio-user %s: asked for region %u info, got"
                       " region %u", c->name, index, hdr.index);
            msg_clear(&reply);
            return dev_done(vbasedev, false);
        }
        if (hdr.argsz <= reply.len) {
            break;
        }
        /* Our buffer was too small for the chain: ask again, once. */
        msg_clear(&reply);
        if (hdr.argsz > REGION_INFO_MAX_LEN || attempt) {
            error_setg(errp, "vfio-user %s: region %u info needs %u bytes"
                       " (limit %u)", c->name, index, hdr.argsz,
                       hdr.argsz > REGION_INFO_MAX_LEN ? REGION_INFO_MAX_LEN
                                                       : argsz);
            return dev_done(vbasedev, false);
        }
        argsz = hdr.argsz;
    }
    /* Bytes past argsz are not part of the info. */
    reply.len = MIN(reply.len, (size_t)MAX(hdr.argsz, sizeof(hdr)));
    if (!vfio_region_info_check((void *)reply.payload, reply.len, errp)) {
        error_prepend(errp, "vfio-user %s: ", c->name);
        msg_clear(&reply);
        return dev_done(vbasedev, false);
    }
    *info = (struct vfio_region_info *)g_steal_pointer(&reply.payload);
    if (reply.nfds && ((*info)->flags & VFIO_REGION_INFO_FLAG_MMAP) &&
        client_region_fd_safe(c, index, *info, reply.fds[0])) {
        *fd = reply.fds[0];
        reply.nfds = 0;
    } else {
        /* Nothing to mmap through: the region can only be trapped. */
        (*info)->flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
        *fd = -1;
    }
    msg_clear(&reply);
    trace_vfio_user_region_info(c->name, index, (*info)->flags,
                                (*info)->size, *fd);
    return dev_done(vbasedev, true);
}

static bool vfio_user_region_read(VFIODevice *vbasedev, uint32_t index,
                                  uint64_t off, uint32_t size, void *buf,
                                  Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    uint64_t max = c->caps.max_data_xfer_size;
    uint32_t done = 0;

    while (done < size) {
        uint32_t count = MIN(size - done, max);
        VFIOUserRegionRW req = {
            .offset = off + done, .region = index, .count = count,
        };
        VFIOUserMsg reply;
        bool ok;

        if (!client_request(c, VFIO_USER_REGION_READ, &req, sizeof(req),
                            NULL, 0, false, &reply, errp)) {
            return dev_done(vbasedev, false);
        }
        ok = reply_check(c, &reply, "REGION_READ", sizeof(req) + count,
                         errp) &&
             vfio_user_region_rw_reply_check(reply.payload, reply.len, false,
                                             index, req.offset, count, errp);
        if (ok) {
            memcpy((uint8_t *)buf + done, reply.payload + sizeof(req), count);
        }
        msg_clear(&reply);
        if (!ok) {
            return dev_done(vbasedev, false);
        }
        done += count;
    }
    return dev_done(vbasedev, true);
}

static bool vfio_user_region_write(VFIODevice *vbasedev, uint32_t index,
                                   uint64_t off, uint32_t size,
                                   const void *buf, bool post, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    uint64_t max = c->caps.max_data_xfer_size;
    uint32_t done = 0;

    while (done < size) {
        uint32_t count = MIN(size - done, max);
        g_autofree VFIOUserRegionRW *req = g_malloc(sizeof(*req) + count);
        VFIOUserMsg reply;
        bool ok;

        *req = (VFIOUserRegionRW) {
            .offset = off + done, .region = index, .count = count,
        };
        memcpy(req->data, (const uint8_t *)buf + done, count);
        if (!client_request(c, VFIO_USER_REGION_WRITE, req,
                            sizeof(*req) + count, NULL, 0, post, &reply,
                            errp)) {
            return dev_done(vbasedev, false);
        }
        if (!post) {
            ok = reply_check(c, &reply, "REGION_WRITE", sizeof(*req), errp) &&
                 vfio_user_region_rw_reply_check(reply.payload, reply.len,
                                                 true, index, req->offset,
                                                 count, errp);
            msg_clear(&reply);
            if (!ok) {
                return dev_done(vbasedev, false);
            }
        }
        done += count;
    }
    return dev_done(vbasedev, true);
}

static bool vfio_user_get_irq_info(VFIODevice *vbasedev,
                                   struct vfio_irq_info *info, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    struct vfio_irq_info req = { .argsz = sizeof(req), .index = info->index };
    struct vfio_irq_info rep;
    VFIOUserMsg reply;

    if (!client_request(c, VFIO_USER_DEVICE_GET_IRQ_INFO, &req, sizeof(req),
                        NULL, 0, false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    if (!reply_check(c, &reply, "DEVICE_GET_IRQ_INFO", sizeof(rep), errp)) {
        msg_clear(&reply);
        return dev_done(vbasedev, false);
    }
    memcpy(&rep, reply.payload, sizeof(rep));
    msg_clear(&reply);
    if (rep.index != req.index || rep.argsz < sizeof(rep) ||
        rep.count > IRQ_MAX_COUNT) {
        error_setg(errp, "vfio-user %s: implausible irq info for index %u"
                   " (index %u, argsz %u, count %u)", c->name, req.index,
                   rep.index, rep.argsz, rep.count);
        return dev_done(vbasedev, false);
    }
    info->argsz = sizeof(*info);
    info->flags = rep.flags;
    info->count = rep.count;
    return dev_done(vbasedev, true);
}

/* One SET_IRQS message; @fds NULL for no fds. */
static bool set_irqs_one(VFIOUserClient *c, const struct vfio_irq_set *tmpl,
                         uint32_t start, uint32_t count, const void *data,
                         size_t data_len, const int *fds, size_t nfds,
                         Error **errp)
{
    g_autofree struct vfio_irq_set *req = g_malloc0(sizeof(*req) + data_len);

    req->argsz = sizeof(*req) + data_len;
    req->flags = tmpl->flags;
    req->index = tmpl->index;
    req->start = start;
    req->count = count;
    if (data_len) {
        memcpy(req->data, data, data_len);
    }
    return client_request(c, VFIO_USER_DEVICE_SET_IRQS, req,
                          sizeof(*req) + data_len, fds, nfds, false, NULL,
                          errp);
}

static bool vfio_user_set_irqs(VFIODevice *vbasedev,
                               const struct vfio_irq_set *irq_set,
                               const int *fds, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    uint32_t data_type = irq_set->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    uint32_t i, n, max_fds;

    if (data_type == VFIO_IRQ_SET_DATA_BOOL) {
        if (irq_set->argsz < sizeof(*irq_set) + (uint64_t)irq_set->count) {
            error_setg(errp, "vfio-user %s: SET_IRQS DATA_BOOL without its"
                       " %u bytes", c->name, irq_set->count);
            return false;
        }
        return dev_done(vbasedev,
                        set_irqs_one(c, irq_set, irq_set->start,
                                     irq_set->count, irq_set->data,
                                     irq_set->count, NULL, 0, errp));
    }
    if (data_type != VFIO_IRQ_SET_DATA_EVENTFD || !irq_set->count) {
        return dev_done(vbasedev,
                        set_irqs_one(c, irq_set, irq_set->start,
                                     irq_set->count, NULL, 0, NULL, 0,
                                     errp));
    }
    if (!fds) {
        error_setg(errp, "vfio-user %s: SET_IRQS DATA_EVENTFD without fds",
                   c->name);
        return false;
    }
    /*
     * Runs of valid fds go out at most max_msg_fds at a time; runs of -1
     * go out without fds, which de-assigns those vectors.
     */
    max_fds = MAX(MIN(c->caps.max_msg_fds, CLIENT_MAX_SEND_FDS), 1);
    for (i = 0; i < irq_set->count; i += n) {
        bool assign = fds[i] >= 0;

        for (n = 1; i + n < irq_set->count &&
                    (fds[i + n] >= 0) == assign &&
                    (!assign || n < max_fds); n++) {
            /* extend the run */
        }
        if (!set_irqs_one(c, irq_set, irq_set->start + i, n, NULL, 0,
                          assign ? fds + i : NULL, assign ? n : 0, errp)) {
            return dev_done(vbasedev, false);
        }
    }
    return dev_done(vbasedev, true);
}

static bool vfio_user_reset(VFIODevice *vbasedev, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    VFIOUserMsg reply;
    bool ok;

    if (!client_request(c, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0, false,
                        &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    ok = reply_check(c, &reply, "DEVICE_RESET", 0, errp);
    msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

static bool vfio_user_dma_map(VFIODevice *vbasedev, uint64_t iova,
                              uint64_t size, int fd, uint64_t fd_offset,
                              void *vaddr, bool readonly, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    VFIOUserDMAMap req = {
        .argsz = sizeof(req),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ |
                 (readonly ? 0 : VFIO_USER_DMA_MAP_FLAG_WRITE),
        .offset = fd >= 0 ? fd_offset : 0,
        .address = iova,
        .size = size,
    };
    VFIOUserMsg reply;
    bool ok;

    trace_vfio_user_dma_map(c->name, iova, size, fd, readonly);
    if (!client_request(c, VFIO_USER_DMA_MAP, &req, sizeof(req),
                        fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0, false, &reply,
                        errp)) {
        return dev_done(vbasedev, false);
    }
    /* No payload, or the request echoed back. */
    ok = reply_check(c, &reply, "DMA_MAP", reply.len ? sizeof(req) : 0,
                     errp);
    msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

static bool vfio_user_dma_unmap(VFIODevice *vbasedev, uint64_t iova,
                                uint64_t size, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    VFIOUserDMAUnmap req = {
        .argsz = sizeof(req), .address = iova, .size = size,
    };
    VFIOUserMsg reply;
    bool ok;

    trace_vfio_user_dma_unmap(c->name, iova, size);
    if (!client_request(c, VFIO_USER_DMA_UNMAP, &req, sizeof(req), NULL, 0,
                        false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    ok = reply_check(c, &reply, "DMA_UNMAP", reply.len ? sizeof(req) : 0,
                     errp);
    msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

static void vfio_user_close(VFIODevice *vbasedev)
{
    vfio_user_client_free(vbasedev->backend);
    vbasedev->backend = NULL;
}

const VFIODeviceOps vfio_user_device_ops = {
    .get_device_info = vfio_user_get_device_info,
    .get_region_info = vfio_user_get_region_info,
    .region_read = vfio_user_region_read,
    .region_write = vfio_user_region_write,
    .get_irq_info = vfio_user_get_irq_info,
    .set_irqs = vfio_user_set_irqs,
    .reset = vfio_user_reset,
    .dma_map = vfio_user_dma_map,
    .dma_unmap = vfio_user_dma_unmap,
    .close = vfio_user_close,
};

bool vfio_user_device_attach(VFIODevice *vbasedev, VFIOUserClient *client,
                             Error **errp)
{
    struct vfio_device_info info;

    vbasedev->ops = &vfio_user_device_ops;
    vbasedev->backend = client;
    vbasedev->fd = -1;
    if (!vfio_user_get_device_info(vbasedev, &info, errp)) {
        return false;
    }
    vbasedev->flags = info.flags;
    vbasedev->num_regions = info.num_regions;
    vbasedev->num_irqs = info.num_irqs;
    return true;
}
