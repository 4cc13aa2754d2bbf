/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user device ops: the VFIODeviceIOOps backend on a VFIOUserClient
 * (hw/vfio-user/client.c, the transport).  Each op is one request; every
 * reply is checked for its size and fds before a field is read, and what
 * the server reports is bounded before it is handed out.
 */
#include "qemu/osdep.h"
#include <sys/stat.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/peer-mem.h"
#include "client.h"
#include "qemu/vfio-region-info.h"
#include "trace.h"

#define CLIENT_MAX_SEND_FDS     VFIO_USER_LIMIT_MAX_FDS
/* A region info reply (with its chain) larger than this is refused. */
#define REGION_INFO_MAX_LEN     (64 * 1024)
#define REGION_INFO_FIRST_LEN   512
/* Sanity bounds on what a device may report. */
#define DEVICE_MAX_REGIONS      64
#define DEVICE_MAX_IRQ_INDEXES  64
#define IRQ_MAX_COUNT           4096

/* ---- VFIODeviceIOOps ---- */

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

    if (!vfio_user_client_request(c, VFIO_USER_DEVICE_GET_INFO, &req,
                                  sizeof(req), NULL, 0, false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    if (!vfio_user_reply_check(c, &reply, "DEVICE_GET_INFO", sizeof(rep),
                               errp)) {
        vfio_user_msg_clear(&reply);
        return dev_done(vbasedev, false);
    }
    memcpy(&rep, reply.payload, sizeof(rep));
    vfio_user_msg_clear(&reply);
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
        if (!vfio_user_client_request(c, VFIO_USER_DEVICE_GET_REGION_INFO,
                                      &req, sizeof(req), NULL, 0, false,
                                      &reply, errp)) {
            return dev_done(vbasedev, false);
        }
        if (reply.nfds > 1 || reply.len < sizeof(hdr)) {
            error_setg(errp, "vfio-user %s: region %u info reply of %zu"
                       " bytes with %zu fds", c->name, index, reply.len,
                       reply.nfds);
            vfio_user_msg_clear(&reply);
            return dev_done(vbasedev, false);
        }
        memcpy(&hdr, reply.payload, sizeof(hdr));
        if (hdr.index != index) {
            error_setg(errp, "vfio-user %s: asked for region %u info, got"
                       " region %u", c->name, index, hdr.index);
            vfio_user_msg_clear(&reply);
            return dev_done(vbasedev, false);
        }
        if (hdr.argsz <= reply.len) {
            break;
        }
        /* Our buffer was too small for the chain: ask again, once. */
        vfio_user_msg_clear(&reply);
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
        vfio_user_msg_clear(&reply);
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
    vfio_user_msg_clear(&reply);
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

        if (!vfio_user_client_request(c, VFIO_USER_REGION_READ, &req,
                                      sizeof(req), NULL, 0, false, &reply,
                                      errp)) {
            return dev_done(vbasedev, false);
        }
        ok = vfio_user_reply_check(c, &reply, "REGION_READ",
                                   sizeof(req) + count, errp) &&
             vfio_user_region_rw_reply_check(reply.payload, reply.len, false,
                                             index, req.offset, count, errp);
        if (ok) {
            memcpy((uint8_t *)buf + done, reply.payload + sizeof(req), count);
        }
        vfio_user_msg_clear(&reply);
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
        if (!vfio_user_client_request(c, VFIO_USER_REGION_WRITE, req,
                                      sizeof(*req) + count, NULL, 0, post,
                                      &reply, errp)) {
            return dev_done(vbasedev, false);
        }
        if (!post) {
            ok = vfio_user_reply_check(c, &reply, "REGION_WRITE", sizeof(*req),
                                       errp) &&
                 vfio_user_region_rw_reply_check(reply.payload, reply.len,
                                                 true, index, req->offset,
                                                 count, errp);
            vfio_user_msg_clear(&reply);
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

    if (!vfio_user_client_request(c, VFIO_USER_DEVICE_GET_IRQ_INFO, &req,
                                  sizeof(req), NULL, 0, false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    if (!vfio_user_reply_check(c, &reply, "DEVICE_GET_IRQ_INFO", sizeof(rep),
                               errp)) {
        vfio_user_msg_clear(&reply);
        return dev_done(vbasedev, false);
    }
    memcpy(&rep, reply.payload, sizeof(rep));
    vfio_user_msg_clear(&reply);
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
    return vfio_user_client_request(c, VFIO_USER_DEVICE_SET_IRQS, req,
                                    sizeof(*req) + data_len, fds, nfds, false,
                                    NULL, errp);
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

    if (!vfio_user_client_request(c, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0,
                                  false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    ok = vfio_user_reply_check(c, &reply, "DEVICE_RESET", 0, errp);
    vfio_user_msg_clear(&reply);
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
    if (!vfio_user_client_request(c, VFIO_USER_DMA_MAP, &req, sizeof(req),
                                  fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0, false,
                                  &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    /* No payload, or the request echoed back. */
    ok = vfio_user_reply_check(c, &reply, "DMA_MAP",
                               reply.len ? sizeof(req) : 0, errp);
    vfio_user_msg_clear(&reply);
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
    if (!vfio_user_client_request(c, VFIO_USER_DMA_UNMAP, &req, sizeof(req),
                                  NULL, 0, false, &reply, errp)) {
        return dev_done(vbasedev, false);
    }
    ok = vfio_user_reply_check(c, &reply, "DMA_UNMAP",
                               reply.len ? sizeof(req) : 0, errp);
    vfio_user_msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

/* ---- Migration ---- */

/*
 * One DEVICE_FEATURE: @in (in_len bytes) after the header, a reply of
 * exactly @out_len data bytes into @out.  A refusal by the server (an
 * error reply on a live connection) sets *@not_supported.
 */
static bool feature_call(VFIODevice *vbasedev, uint32_t flags,
                         const void *in, size_t in_len, void *out,
                         size_t out_len, bool *not_supported, Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    size_t len = sizeof(VFIOUserDeviceFeature) + in_len;
    g_autofree VFIOUserDeviceFeature *req = g_malloc0(len);
    VFIOUserMsg reply;
    bool ok;

    if (not_supported) {
        *not_supported = false;
    }
    req->argsz = sizeof(*req) + MAX(in_len, out_len);
    req->flags = flags;
    if (in_len) {
        memcpy(req->data, in, in_len);
    }
    if (!vfio_user_client_request(c, VFIO_USER_DEVICE_FEATURE, req, len,
                                  NULL, 0, false, &reply, errp)) {
        if (not_supported && !c->broken) {
            *not_supported = true;
        }
        return dev_done(vbasedev, false);
    }
    ok = vfio_user_reply_check(c, &reply, "DEVICE_FEATURE", reply.len,
                               errp) &&
         vfio_user_device_feature_reply_check(reply.payload, reply.len,
                                              flags, out_len, errp);
    if (ok && out_len) {
        memcpy(out, reply.payload + sizeof(VFIOUserDeviceFeature), out_len);
    }
    if (!ok) {
        error_prepend(errp, "vfio-user %s: ", c->name);
    }
    vfio_user_msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

static bool vfio_user_device_feature(VFIODevice *vbasedev, uint32_t flags,
                                     void *data, size_t in_len,
                                     size_t out_len, bool *not_supported,
                                     Error **errp)
{
    return feature_call(vbasedev, flags, data, in_len, data, out_len,
                        not_supported, errp);
}

static bool vfio_user_mig_data_read(VFIODevice *vbasedev, int data_fd,
                                    void *buf, size_t size, size_t *got,
                                    Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    VFIOUserMigData req;
    VFIOUserMsg reply;
    uint32_t n;
    bool ok;

    size = MIN(size, c->caps.max_data_xfer_size);
    req = (VFIOUserMigData) {
        .argsz = sizeof(req) + size, .size = size,
    };
    if (!vfio_user_client_request(c, VFIO_USER_MIG_DATA_READ, &req,
                                  sizeof(req), NULL, 0, false, &reply,
                                  errp)) {
        return dev_done(vbasedev, false);
    }
    ok = vfio_user_reply_check(c, &reply, "MIG_DATA_READ", reply.len,
                               errp) &&
         vfio_user_mig_data_read_reply_check(reply.payload, reply.len,
                                             size, errp);
    if (ok) {
        memcpy(&n, reply.payload + 4, 4);
        memcpy(buf, reply.payload + sizeof(req), n);
        *got = n;
    } else {
        error_prepend(errp, "vfio-user %s: ", c->name);
    }
    vfio_user_msg_clear(&reply);
    return dev_done(vbasedev, ok);
}

static bool vfio_user_mig_data_write(VFIODevice *vbasedev, int data_fd,
                                     const void *buf, size_t size,
                                     Error **errp)
{
    VFIOUserClient *c = dev_client(vbasedev);
    size_t chunk = MAX(c->caps.max_data_xfer_size, 1);

    while (size) {
        size_t n = MIN(size, chunk);
        g_autofree VFIOUserMigData *req = g_malloc(sizeof(*req) + n);
        VFIOUserMsg reply;
        bool ok;

        /* The request's own size: libvfio-user insists on that. */
        req->argsz = sizeof(*req) + n;
        req->size = n;
        memcpy(req->data, buf, n);
        if (!vfio_user_client_request(c, VFIO_USER_MIG_DATA_WRITE, req,
                                      sizeof(*req) + n, NULL, 0, false,
                                      &reply, errp)) {
            return dev_done(vbasedev, false);
        }
        /* No payload, or (some servers) the header echoed. */
        ok = vfio_user_reply_check(c, &reply, "MIG_DATA_WRITE",
                                   reply.len ? sizeof(*req) : 0, errp);
        vfio_user_msg_clear(&reply);
        if (!ok) {
            return dev_done(vbasedev, false);
        }
        buf = (const uint8_t *)buf + n;
        size -= n;
    }
    return dev_done(vbasedev, true);
}

static bool vfio_user_dma_logging_start(VFIODevice *vbasedev,
                                        uint64_t page_size,
                                        const uint64_t (*ranges)[2],
                                        uint32_t n, Error **errp)
{
    size_t len = sizeof(VFIOUserDmaLoggingControl) +
                 (size_t)n * sizeof(VFIOUserDmaLoggingRange);
    g_autofree uint8_t *data = g_malloc0(len);
    VFIOUserDmaLoggingControl ctl = {
        .page_size = page_size, .num_ranges = n,
    };

    memcpy(data, &ctl, sizeof(ctl));
    for (uint32_t i = 0; i < n; i++) {
        VFIOUserDmaLoggingRange r = {
            .iova = ranges[i][0], .length = ranges[i][1],
        };

        memcpy(data + sizeof(ctl) + i * sizeof(r), &r, sizeof(r));
    }
    /* The reply echoes the control (the page size it chose). */
    if (!feature_call(vbasedev, VFIO_DEVICE_FEATURE_SET |
                      VFIO_USER_FEATURE_DMA_LOGGING_START, data, len,
                      data, len, NULL, errp)) {
        return false;
    }
    memcpy(&ctl, data, sizeof(ctl));
    if (ctl.page_size != page_size) {
        error_setg(errp, "vfio-user %s: the device logs DMA at 0x%" PRIx64
                   " bytes, not the 0x%" PRIx64 " asked for",
                   vbasedev->name, ctl.page_size, page_size);
        return false;
    }
    return true;
}

static bool vfio_user_dma_logging_stop(VFIODevice *vbasedev, Error **errp)
{
    return feature_call(vbasedev, VFIO_DEVICE_FEATURE_SET |
                        VFIO_USER_FEATURE_DMA_LOGGING_STOP, NULL, 0, NULL, 0,
                        NULL, errp);
}

static bool vfio_user_dma_logging_report(VFIODevice *vbasedev, uint64_t iova,
                                         uint64_t length, uint64_t page_size,
                                         uint64_t *bitmap, Error **errp)
{
    VFIOUserDmaLoggingReport rep = {
        .iova = iova, .length = length, .page_size = page_size,
    };
    size_t bm = vfio_user_dirty_bitmap_size(length, page_size);
    g_autofree uint8_t *out = g_malloc(sizeof(rep) + bm);

    if (!feature_call(vbasedev, VFIO_DEVICE_FEATURE_GET |
                      VFIO_USER_FEATURE_DMA_LOGGING_REPORT, &rep,
                      sizeof(rep), out, sizeof(rep) + bm, NULL, errp)) {
        return false;
    }
    if (memcmp(out, &rep, sizeof(rep))) {
        error_setg(errp, "vfio-user %s: DMA_LOGGING_REPORT reply is for "
                   "another range", vbasedev->name);
        return false;
    }
    memcpy(bitmap, out + sizeof(rep), bm);
    return true;
}

static void vfio_user_close(VFIODevice *vbasedev)
{
    vfio_user_client_free(vbasedev->backend);
    vbasedev->backend = NULL;
}

const VFIODeviceIOOps vfio_user_device_io_ops = {
    .get_device_info = vfio_user_get_device_info,
    .get_region_info = vfio_user_get_region_info,
    .region_read = vfio_user_region_read,
    .region_write = vfio_user_region_write,
    .posts_writes = true,
    .get_irq_info = vfio_user_get_irq_info,
    .set_irqs = vfio_user_set_irqs,
    .reset = vfio_user_reset,
    .dma_map = vfio_user_dma_map,
    .dma_unmap = vfio_user_dma_unmap,
    .close = vfio_user_close,
    .device_feature = vfio_user_device_feature,
    .mig_data_read = vfio_user_mig_data_read,
    .mig_data_write = vfio_user_mig_data_write,
    .dma_logging_start = vfio_user_dma_logging_start,
    .dma_logging_stop = vfio_user_dma_logging_stop,
    .dma_logging_report = vfio_user_dma_logging_report,
};

bool vfio_user_device_attach(VFIODevice *vbasedev, VFIOUserClient *client,
                             Error **errp)
{
    struct vfio_device_info info;

    vbasedev->ops = &vfio_user_device_io_ops;
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
