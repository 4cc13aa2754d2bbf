/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: context, connection handling and message dispatch.
 *
 * One client at a time: while a client is attached only its socket is
 * polled, so further clients wait in the listen backlog.  Framing problems
 * (short reads, bad headers, too many fds) drop the client; a well-framed
 * but invalid request gets an error reply and the connection stays.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/sockets.h"
#include "qemu/vfio-region-info.h"
#include "libvfu-internal.h"
#include "trace.h"

/* ---- Sending and receiving ---- */

bool vfu_send(VfuCtx *ctx, uint16_t id, uint16_t command, uint32_t flags,
              uint32_t error, const void *payload, size_t len, int fd)
{
    g_autofree uint8_t *buf = g_malloc(sizeof(VFIOUserHdr) + len);
    VFIOUserHdr *hdr = (VFIOUserHdr *)buf;
    Error *err = NULL;
    ssize_t ret;

    vfio_user_hdr_init(hdr, id, command, sizeof(*hdr) + len, flags);
    hdr->error_reply = error;
    if (len) {
        memcpy(buf + sizeof(*hdr), payload, len);
    }
    g_mutex_lock(&ctx->send_lock);
    if (ctx->conn_fd < 0) {
        g_mutex_unlock(&ctx->send_lock);
        return false;
    }
    ret = qemu_send_with_fds(ctx->conn_fd, buf, sizeof(*hdr) + len,
                             &fd, fd >= 0 ? 1 : 0, &err);
    g_mutex_unlock(&ctx->send_lock);
    if (ret < 0) {
        trace_vfu_msg_error(id, vfio_user_command_name(command),
                            error_get_pretty(err));
        error_free(err);
        ctx->conn_broken = true;
        return false;
    }
    return true;
}

void vfu_msg_free_fds(VfuMsg *msg)
{
    for (size_t i = 0; i < msg->nfds; i++) {
        if (msg->fds[i] >= 0) {
            close(msg->fds[i]);
            msg->fds[i] = -1;
        }
    }
    msg->nfds = 0;
}

/* Returns 1 with a message, 0 on clean EOF, -1 on a framing error. */
int vfu_recv(VfuCtx *ctx, VfuMsg *msg, Error **errp)
{
    size_t payload_len;
    size_t nfds = MIN(ctx->ours.max_msg_fds, VFIO_USER_LIMIT_MAX_FDS);
    ssize_t ret;

    memset(msg, 0, sizeof(*msg));
    msg->reply_fd = -1;
    ret = qemu_recv_with_fds(ctx->conn_fd, &msg->hdr, sizeof(msg->hdr),
                             msg->fds, &nfds, errp);
    if (ret <= 0) {
        return ret;
    }
    msg->nfds = nfds;
    if (!vfio_user_hdr_validate(&msg->hdr,
                                vfio_user_max_payload(
                                    ctx->ours.max_data_xfer_size),
                                errp)) {
        vfu_msg_free_fds(msg);
        return -1;
    }
    payload_len = msg->hdr.size - sizeof(msg->hdr);
    if (payload_len) {
        size_t none = 0;

        msg->payload = g_try_malloc(payload_len);
        if (!msg->payload) {
            error_setg(errp, "cannot allocate %zu bytes for a message",
                       payload_len);
            vfu_msg_free_fds(msg);
            return -1;
        }
        /* fds may only accompany the start of a message. */
        ret = qemu_recv_with_fds(ctx->conn_fd, msg->payload, payload_len,
                                 NULL, &none, errp);
        if (ret <= 0) {
            if (ret == 0) {
                error_setg(errp, "connection closed after a message header");
            }
            g_free(msg->payload);
            msg->payload = NULL;
            vfu_msg_free_fds(msg);
            return -1;
        }
    }
    msg->len = payload_len;
    return 1;
}

bool vfu_on_dispatch_thread(VfuCtx *ctx)
{
    return ctx->dispatching && pthread_equal(ctx->dispatch_tid,
                                             pthread_self());
}

/* ---- Context ---- */

VfuCtx *vfu_create_ctx(const char *socket_path, const VfuDeviceOps *ops,
                       void *opaque, const VFIOUserCaps *caps, Error **errp)
{
    g_autofree VfuCtx *ctx = NULL;
    pthread_rwlockattr_t attr;
    int stop_fd;

    if (!ops || !ops->reset) {
        error_setg(errp, "libvfu: a device must provide a reset callback");
        return NULL;
    }
    if (caps && (!caps->max_msg_fds || !caps->max_data_xfer_size ||
                 !caps->max_dma_maps || !caps->pgsizes ||
                 caps->max_msg_fds > VFIO_USER_LIMIT_MAX_FDS ||
                 caps->max_data_xfer_size > VFIO_USER_LIMIT_MAX_DATA_XFER)) {
        error_setg(errp, "libvfu: invalid server capabilities");
        return NULL;
    }
    stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (stop_fd < 0) {
        error_setg_errno(errp, errno, "libvfu: cannot create eventfd");
        return NULL;
    }
    ctx = g_new0(VfuCtx, 1);
    ctx->ops = ops;
    ctx->opaque = opaque;
    ctx->stop_fd = stop_fd;
    ctx->conn_fd = -1;
    ctx->listen_fd = -1;
    if (caps) {
        ctx->ours = *caps;
    } else {
        ctx->ours = (VFIOUserCaps) {
            .max_msg_fds = 8,
            .max_data_xfer_size = VFIO_USER_DEF_MAX_DATA_XFER,
            .max_dma_maps = VFIO_USER_DEF_MAX_DMA_MAPS,
            .pgsizes = VFIO_USER_DEF_PGSIZES,
        };
    }
    vfio_user_caps_init_default(&ctx->peer);
    for (int i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
        ctx->regions[i].fd = -1;
    }
    g_mutex_init(&ctx->send_lock);
    g_mutex_init(&ctx->log_lock);
    ctx->mig_state = VFIO_MIG_STATE_RUNNING;
    g_mutex_init(&ctx->req_lock);
    g_cond_init(&ctx->req_cond);
    ctx->pending = g_ptr_array_new();
    pthread_rwlockattr_init(&attr);
    /* A busy I/O thread must not starve DMA_UNMAP. */
    pthread_rwlockattr_setkind_np(&attr,
                                  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&ctx->dma_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    vfu_irq_init(ctx);
    vfu_dma_init(ctx);

    if (socket_path) {
        ctx->listen_fd = unix_listen_path(socket_path, errp);
        if (ctx->listen_fd < 0) {
            vfu_destroy_ctx(g_steal_pointer(&ctx));
            return NULL;
        }
        ctx->socket_path = g_strdup(socket_path);
        trace_vfu_listen(socket_path, ctx->listen_fd);
    }
    return g_steal_pointer(&ctx);
}

void vfu_destroy_ctx(VfuCtx *ctx)
{
    if (!ctx) {
        return;
    }
    vfu_detach(ctx);
    if (ctx->listen_fd >= 0) {
        close(ctx->listen_fd);
        unlink(ctx->socket_path);
    }
    close(ctx->stop_fd);
    for (int i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
        if (ctx->regions[i].fd >= 0) {
            close(ctx->regions[i].fd);
        }
        g_free(ctx->regions[i].sparse);
    }
    vfu_pci_free(ctx);
    vfu_irq_free(ctx);
    vfu_dma_free(ctx);
    vfu_migration_free(ctx);
    g_ptr_array_free(ctx->pending, true);
    g_cond_clear(&ctx->req_cond);
    g_mutex_clear(&ctx->req_lock);
    g_mutex_clear(&ctx->send_lock);
    pthread_rwlock_destroy(&ctx->dma_lock);
    g_free(ctx->socket_path);
    g_free(ctx);
}

bool vfu_attach_fd(VfuCtx *ctx, int fd, Error **errp)
{
    /*
     * We only read once poll() says a message has started; a client that
     * stalls in the middle of one is dropped instead of hanging us.
     */
    struct timeval tv = { .tv_sec = VFU_MSG_TIMEOUT_S };

    if (ctx->conn_fd >= 0) {
        error_setg(errp, "libvfu: a client is already attached");
        return false;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        error_setg_errno(errp, errno, "libvfu: cannot set a receive timeout");
        return false;
    }
    /* Nor may one that stops reading our replies block us in send(). */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
        error_setg_errno(errp, errno, "libvfu: cannot set a send timeout");
        return false;
    }
    vfu_pci_snapshot(ctx);
    ctx->conn_fd = fd;
    ctx->conn_broken = false;
    ctx->negotiated = false;
    ctx->max_dma_maps = ctx->ours.max_dma_maps;
    vfio_user_caps_init_default(&ctx->peer);
    trace_vfu_client_attached(fd);
    return true;
}

bool vfu_is_attached(VfuCtx *ctx)
{
    return ctx->conn_fd >= 0;
}

static void vfu_detach_reason(VfuCtx *ctx, const char *reason)
{
    int fd;

    if (ctx->conn_fd < 0) {
        return;
    }
    trace_vfu_client_detached(reason);
    g_mutex_lock(&ctx->send_lock);
    fd = ctx->conn_fd;
    ctx->conn_fd = -1;
    g_mutex_unlock(&ctx->send_lock);
    close(fd);
    ctx->negotiated = false;
    vfu_deferred_clear(ctx);
    vfu_dma_fail_pending(ctx);
    vfu_dma_unmap_all(ctx);
    vfu_irq_release_all(ctx);
    vfu_migration_reset(ctx);
    trace_vfu_device_reset(VFU_RESET_LOST_CLIENT);
    ctx->ops->reset(ctx, ctx->opaque, VFU_RESET_LOST_CLIENT);
    vfu_pci_reset(ctx);
    vfio_user_caps_init_default(&ctx->peer);
}

void vfu_detach(VfuCtx *ctx)
{
    vfu_detach_reason(ctx, "detached by the device");
}

int vfu_get_poll_fd(VfuCtx *ctx)
{
    return ctx->conn_fd >= 0 ? ctx->conn_fd : ctx->listen_fd;
}

const VFIOUserCaps *vfu_peer_caps(VfuCtx *ctx)
{
    return &ctx->peer;
}

/* ---- Regions ---- */

bool vfu_setup_region(VfuCtx *ctx, uint32_t index, const VfuRegionInfo *info,
                      Error **errp)
{
    VfuRegion *r;
    int fd = -1;

    if (index >= VFIO_PCI_NUM_REGIONS || index == VFIO_PCI_VGA_REGION_INDEX) {
        error_setg(errp, "libvfu: region index %u not supported", index);
        return false;
    }
    if (index == VFIO_PCI_CONFIG_REGION_INDEX && ctx->config) {
        error_setg(errp, "libvfu: config space is served by vfu_pci_init()");
        return false;
    }
    if (info->flags & ~(VFIO_REGION_INFO_FLAG_READ |
                        VFIO_REGION_INFO_FLAG_WRITE)) {
        error_setg(errp, "libvfu: region %u: unsupported flags 0x%x", index,
                   info->flags);
        return false;
    }
    for (uint32_t i = 0; i < info->nr_sparse; i++) {
        const VfuSparseArea *a = &info->sparse[i];

        if (!a->size || a->offset > info->size ||
            a->size > info->size - a->offset) {
            error_setg(errp, "libvfu: region %u: sparse area %u outside the "
                       "region", index, i);
            return false;
        }
    }
    if (info->nr_sparse && info->fd < 0) {
        error_setg(errp, "libvfu: region %u: sparse areas need an fd", index);
        return false;
    }
    if (info->fd >= 0) {
        fd = fcntl(info->fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            error_setg_errno(errp, errno, "libvfu: region %u: cannot dup fd",
                             index);
            return false;
        }
    }
    r = &ctx->regions[index];
    if (r->fd >= 0) {
        close(r->fd);
    }
    g_free(r->sparse);
    r->present = true;
    r->info = *info;
    r->fd = fd;
    r->sparse = g_memdup2(info->sparse, info->nr_sparse * sizeof(*r->sparse));
    r->info.sparse = r->sparse;
    if (index <= VFIO_PCI_BAR5_REGION_INDEX && ctx->config &&
        !vfu_pci_update_bar(ctx, index, errp)) {
        r->present = false;
        return false;
    }
    return true;
}

void vfu_region_stats(VfuCtx *ctx, uint32_t index, uint64_t *reads,
                      uint64_t *writes)
{
    *reads = index < VFIO_PCI_NUM_REGIONS ? ctx->regions[index].reads : 0;
    *writes = index < VFIO_PCI_NUM_REGIONS ? ctx->regions[index].writes : 0;
}

static int handle_get_info(VfuCtx *ctx, VfuMsg *msg)
{
    VFIOUserDeviceInfo info;

    if (msg->len != sizeof(info) || msg->nfds) {
        return -EINVAL;
    }
    memcpy(&info, msg->payload, sizeof(info));
    if (info.argsz < sizeof(info)) {
        return -EINVAL;
    }
    info = (VFIOUserDeviceInfo) {
        .argsz = sizeof(info),
        .flags = VFIO_DEVICE_FLAGS_RESET | VFIO_DEVICE_FLAGS_PCI,
        .num_regions = VFIO_PCI_NUM_REGIONS,
        .num_irqs = VFIO_PCI_NUM_IRQS,
    };
    g_byte_array_append(msg->reply, (const guint8 *)&info, sizeof(info));
    return 0;
}

static int handle_get_region_info(VfuCtx *ctx, VfuMsg *msg)
{
    struct vfio_region_info req;
    g_autoptr(VFIORegionInfoBuilder) b = NULL;
    g_autofree struct vfio_region_info *info = NULL;
    const VfuRegion *r;
    uint32_t flags = 0;
    size_t len;

    if (msg->len != sizeof(req) || msg->nfds) {
        return -EINVAL;
    }
    memcpy(&req, msg->payload, sizeof(req));
    if (req.argsz < sizeof(req) || req.index >= VFIO_PCI_NUM_REGIONS) {
        return -EINVAL;
    }
    r = &ctx->regions[req.index];
    if (r->present) {
        flags = r->info.flags | (r->fd >= 0 ? VFIO_REGION_INFO_FLAG_MMAP : 0);
    }
    /* The chain as qemu/vfio-region-info.h defines it, for any client. */
    b = vfio_region_info_builder_new(req.index, flags,
                                     r->present ? r->info.size : 0,
                                     r->fd >= 0 ? r->info.fd_offset : 0);
    if (r->present && r->fd >= 0 && r->info.nr_sparse) {
        g_autofree VFIOSparseArea *areas =
            g_new0(VFIOSparseArea, r->info.nr_sparse);

        for (uint32_t i = 0; i < r->info.nr_sparse; i++) {
            areas[i].offset = r->sparse[i].offset;
            areas[i].size = r->sparse[i].size;
        }
        vfio_region_info_builder_add_sparse(b, areas, r->info.nr_sparse);
    }
    if (r->present && r->info.msix_mappable) {
        vfio_region_info_builder_add_msix_mappable(b);
    }
    info = vfio_region_info_builder_finish(g_steal_pointer(&b), &len);
    if (req.argsz < len) {
        /*
         * Too small for the chain: tell the size needed, as VFIO does.
         * The CAPS flag means "a chain is in this reply": clear it, or a
         * client that checks cap_offset (QEMU does) fails instead of
         * retrying with the argsz we return.  (vfio-pci keeps the flag;
         * that works for ioctls, where nothing more is copied out.)
         */
        info->flags &= ~VFIO_REGION_INFO_FLAG_CAPS;
        info->cap_offset = 0;
        trace_vfu_region_info(req.index, info->flags, info->size,
                              info->argsz, -1);
        g_byte_array_append(msg->reply, (const guint8 *)info, sizeof(*info));
        return 0;
    }
    trace_vfu_region_info(req.index, flags, r->present ? r->info.size : 0,
                          len, r->fd);
    g_byte_array_append(msg->reply, (const guint8 *)info, len);
    msg->reply_fd = r->fd;
    return 0;
}

static int handle_region_rw(VfuCtx *ctx, VfuMsg *msg, bool is_write)
{
    const VFIOUserRegionRW *rw;
    VfuRegion *r;
    Error *err = NULL;
    int err_no = EINVAL;
    void *data;
    int ret;

    if (!vfio_user_region_rw_decode(msg->payload, msg->len, is_write,
                                    ctx->ours.max_data_xfer_size, msg->nfds,
                                    &rw, &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id,
                            vfio_user_command_name(msg->hdr.command),
                            error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    trace_vfu_region_access(rw->region, rw->offset, rw->count, is_write);
    if (rw->region >= VFIO_PCI_NUM_REGIONS) {
        return -EINVAL;
    }
    r = &ctx->regions[rw->region];
    if (is_write) {
        r->writes++;
    } else {
        r->reads++;
    }
    if (!r->present || rw->offset > r->info.size ||
        rw->count > r->info.size - rw->offset) {
        return -EINVAL;
    }
    if (!(r->info.flags & (is_write ? VFIO_REGION_INFO_FLAG_WRITE
                                    : VFIO_REGION_INFO_FLAG_READ))) {
        return -EACCES;
    }
    /* The reply echoes the fixed part; a read reply carries the data. */
    g_byte_array_append(msg->reply, (const guint8 *)rw, sizeof(*rw));
    if (is_write) {
        data = (void *)rw->data;
    } else {
        g_byte_array_set_size(msg->reply, sizeof(*rw) + rw->count);
        data = msg->reply->data + sizeof(*rw);
        memset(data, 0, rw->count);
    }
    if (r->info.access) {
        ret = r->info.access(ctx, r->info.opaque, rw->region, rw->offset,
                             data, rw->count, is_write);
    } else if (r->fd >= 0) {
        /* No callback: the backing file is the region's whole truth. */
        off_t pos = r->info.fd_offset + rw->offset;
        ssize_t n = is_write ? pwrite(r->fd, data, rw->count, pos)
                             : pread(r->fd, data, rw->count, pos);
        ret = n == rw->count ? 0 : (n < 0 ? -errno : -EIO);
    } else {
        ret = -EINVAL;
    }
    return ret < 0 ? ret : 0;
}

static int handle_reset(VfuCtx *ctx, VfuMsg *msg)
{
    if (msg->len || msg->nfds) {
        return -EINVAL;
    }
    trace_vfu_device_reset(VFU_RESET_CLIENT_REQUEST);
    vfu_migration_reset(ctx);
    ctx->ops->reset(ctx, ctx->opaque, VFU_RESET_CLIENT_REQUEST);
    vfu_pci_reset(ctx);
    return 0;
}

static int handle_version(VfuCtx *ctx, VfuMsg *msg)
{
    g_autofree void *reply = NULL;
    VFIOUserCaps peer, offer;
    uint16_t major, minor;
    Error *err = NULL;
    size_t len;

    if (ctx->negotiated) {
        return -EINVAL;
    }
    if (msg->nfds ||
        !vfio_user_version_parse(msg->payload, msg->len, &major, &minor,
                                 &peer, &err)) {
        if (err) {
            trace_vfu_msg_error(msg->hdr.id, "VERSION",
                                error_get_pretty(err));
            error_free(err);
        }
        return -EINVAL;
    }
    trace_vfu_version(major, minor, peer.max_data_xfer_size,
                      peer.max_dma_maps, peer.pgsizes, peer.max_msg_fds);
    if (major != VFIO_USER_MAJOR) {
        return -ENOTSUP;
    }
    if (!vfio_user_pgsizes_negotiate(ctx->ours.pgsizes, peer.pgsizes)) {
        return -ENOTSUP;
    }
    ctx->peer = peer;
    /*
     * Our reply names what we accept; dma maps and page sizes are what
     * both sides support.
     */
    offer = ctx->ours;
    offer.max_dma_maps = MIN(ctx->ours.max_dma_maps, peer.max_dma_maps);
    offer.pgsizes = vfio_user_pgsizes_negotiate(ctx->ours.pgsizes,
                                                peer.pgsizes);
    ctx->max_dma_maps = offer.max_dma_maps;
    reply = vfio_user_version_build(VFIO_USER_MAJOR,
                                    MIN(minor, VFIO_USER_MINOR), &offer,
                                    &len);
    g_byte_array_append(msg->reply, reply, len);
    ctx->negotiated = true;
    if (ctx->ops->attach) {
        ctx->ops->attach(ctx, ctx->opaque);
    }
    return 0;
}

/* Returns true when the client must be dropped. */
static bool vfu_process(VfuCtx *ctx, VfuMsg *msg)
{
    uint16_t cmd = msg->hdr.command;
    uint32_t type = msg->hdr.flags & VFIO_USER_F_TYPE_MASK;
    int ret;

    trace_vfu_msg_recv(msg->hdr.id, vfio_user_command_name(cmd),
                       msg->hdr.size, msg->hdr.flags, msg->nfds);
    if (type == VFIO_USER_F_TYPE_REPLY) {
        vfu_dma_handle_reply(ctx, msg);
        return false;
    }
    if (!ctx->negotiated && cmd != VFIO_USER_VERSION) {
        vfu_send(ctx, msg->hdr.id, cmd,
                 VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR, EINVAL,
                 NULL, 0, -1);
        trace_vfu_msg_error(msg->hdr.id, vfio_user_command_name(cmd),
                            "command before VERSION");
        return true;
    }
    msg->reply = g_byte_array_new();
    switch (cmd) {
    case VFIO_USER_VERSION:
        ret = handle_version(ctx, msg);
        break;
    case VFIO_USER_DMA_MAP:
        ret = vfu_handle_dma_map(ctx, msg);
        break;
    case VFIO_USER_DMA_UNMAP:
        ret = vfu_handle_dma_unmap(ctx, msg);
        break;
    case VFIO_USER_DEVICE_GET_INFO:
        ret = handle_get_info(ctx, msg);
        break;
    case VFIO_USER_DEVICE_GET_REGION_INFO:
        ret = handle_get_region_info(ctx, msg);
        break;
    case VFIO_USER_DEVICE_GET_IRQ_INFO:
        ret = vfu_handle_get_irq_info(ctx, msg);
        break;
    case VFIO_USER_DEVICE_SET_IRQS:
        ret = vfu_handle_set_irqs(ctx, msg);
        break;
    case VFIO_USER_REGION_READ:
        ret = handle_region_rw(ctx, msg, false);
        break;
    case VFIO_USER_REGION_WRITE:
        ret = handle_region_rw(ctx, msg, true);
        break;
    case VFIO_USER_DEVICE_RESET:
        ret = handle_reset(ctx, msg);
        break;
    case VFIO_USER_DEVICE_FEATURE:
        ret = vfu_handle_device_feature(ctx, msg);
        break;
    case VFIO_USER_MIG_DATA_READ:
        ret = vfu_handle_mig_data(ctx, msg, false);
        break;
    case VFIO_USER_MIG_DATA_WRITE:
        ret = vfu_handle_mig_data(ctx, msg, true);
        break;
    default:
        ret = -ENOSYS;
        break;
    }
    if (ret == VFU_DISCONNECT) {
        return true;
    }
    if (!(msg->hdr.flags & VFIO_USER_F_NO_REPLY)) {
        if (ret < 0) {
            trace_vfu_msg_reply(msg->hdr.id, vfio_user_command_name(cmd),
                                sizeof(VFIOUserHdr), -ret);
            vfu_send(ctx, msg->hdr.id, cmd,
                     VFIO_USER_F_TYPE_REPLY | VFIO_USER_F_ERROR, -ret,
                     NULL, 0, -1);
        } else {
            int fd = msg->reply_fd;

            if (fd >= 0 && ctx->peer.max_msg_fds < 1) {
                fd = -1;
            }
            trace_vfu_msg_reply(msg->hdr.id, vfio_user_command_name(cmd),
                                sizeof(VFIOUserHdr) + msg->reply->len, 0);
            vfu_send(ctx, msg->hdr.id, cmd, VFIO_USER_F_TYPE_REPLY, 0,
                     msg->reply->data, msg->reply->len, fd);
        }
    }
    /* A failed VERSION ends the conversation. */
    return cmd == VFIO_USER_VERSION && ret < 0;
}

bool vfu_dispatch(VfuCtx *ctx, Error **errp)
{
    Error *err = NULL;
    VfuMsg msg;
    bool drop;
    int ret;

    if (ctx->conn_fd < 0) {
        int fd;

        if (ctx->listen_fd < 0) {
            error_setg(errp, "libvfu: no client and no listening socket");
            return false;
        }
        do {
            fd = accept4(ctx->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        } while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            if (errno == EAGAIN || errno == ECONNABORTED) {
                return true;
            }
            error_setg_errno(errp, errno, "libvfu: accept on %s failed",
                             ctx->socket_path);
            return false;
        }
        if (!vfu_attach_fd(ctx, fd, &err)) {
            /* Only this client is affected: keep listening. */
            warn_report_err(err);
            close(fd);
        }
        return true;
    }

    if (vfu_dma_peer_faulted(ctx)) {
        vfu_detach_reason(ctx, "client shrank its DMA memory");
        return true;
    }
    ctx->dispatch_tid = pthread_self();
    ctx->dispatching = true;
    ret = vfu_recv(ctx, &msg, &err);
    if (ret <= 0) {
        ctx->dispatching = false;
        vfu_detach_reason(ctx, ret == 0 ? "end of file"
                                        : error_get_pretty(err));
        error_free(err);
        return true;
    }
    drop = vfu_process(ctx, &msg);
    ctx->dispatching = false;
    vfu_msg_free_fds(&msg);
    if (msg.reply) {
        g_byte_array_free(msg.reply, true);
    }
    g_free(msg.payload);
    /* Commands read ahead while that handler waited, in order. */
    while (!drop && !ctx->conn_broken) {
        VfuMsg *next = vfu_deferred_pop(ctx);

        if (!next) {
            break;
        }
        ctx->dispatching = true;
        drop = vfu_process(ctx, next);
        ctx->dispatching = false;
        vfu_msg_free(next);
    }
    if (drop || ctx->conn_broken) {
        vfu_detach_reason(ctx, drop ? "protocol error" : "send failed");
    } else if (vfu_dma_peer_faulted(ctx)) {
        vfu_detach_reason(ctx, "client shrank its DMA memory");
    }
    return true;
}

bool vfu_run(VfuCtx *ctx, Error **errp)
{
    for (;;) {
        struct pollfd pfd[3] = {
            { .fd = ctx->stop_fd, .events = POLLIN },
            { .fd = vfu_get_poll_fd(ctx), .events = POLLIN },
            { .fd = vfu_irq_unmask_poll_fd(ctx), .events = POLLIN },
        };
        int n = poll(pfd, 3, -1);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error_setg_errno(errp, errno, "libvfu: poll failed");
            return false;
        }
        if (pfd[0].revents) {
            uint64_t v;

            if (read(ctx->stop_fd, &v, sizeof(v)) < 0) {
                /* Nothing to do: the counter is reset or was already. */
            }
            return true;
        }
        if (pfd[2].revents) {
            vfu_irq_service_unmask(ctx);
        }
        if (pfd[1].revents && !vfu_dispatch(ctx, errp)) {
            return false;
        }
    }
}

void vfu_stop(VfuCtx *ctx)
{
    uint64_t one = 1;

    if (write(ctx->stop_fd, &one, sizeof(one)) < 0) {
        /* Only fails if the counter would overflow: already stopping. */
    }
}
