/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: device migration (VFIO_USER_DEVICE_FEATURE with the v2 state
 * machine, MIG_DATA_READ/WRITE) and DMA dirty-page logging.
 *
 * The library owns the protocol: it validates every request
 * (util/vfio-user-codec.c), walks a requested state change as direct
 * arcs and hands the device one arc at a time, and keeps the dirty
 * bitmaps the device fills through vfu_dma_mark_dirty().
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "libvfu-internal.h"
#include "trace.h"

/* Our ceiling on logged pages (a 32 MiB bitmap: 1 TiB at 4 KiB). */
#define VFU_LOG_MAX_PAGES   (1ull << 28)

bool vfu_setup_migration(VfuCtx *ctx, const VfuMigrationOps *ops,
                         uint64_t flags, Error **errp)
{
    if (!ops || !ops->transition || !ops->read_data || !ops->write_data) {
        error_setg(errp, "libvfu: migration needs transition, read_data "
                   "and write_data callbacks");
        return false;
    }
    if (!(flags & VFIO_MIGRATION_STOP_COPY) ||
        (flags & ~(uint64_t)(VFIO_MIGRATION_STOP_COPY |
                             VFIO_MIGRATION_PRE_COPY))) {
        error_setg(errp, "libvfu: migration flags 0x%" PRIx64 " invalid "
                   "(STOP_COPY required, PRE_COPY optional)", flags);
        return false;
    }
    ctx->mig_ops = ops;
    ctx->mig_flags = flags;
    ctx->mig_state = VFIO_MIG_STATE_RUNNING;
    return true;
}

uint32_t vfu_migration_state(VfuCtx *ctx)
{
    return ctx->mig_state;
}

/* ---- Dirty logging ---- */

static void log_stop(VfuCtx *ctx)
{
    g_mutex_lock(&ctx->log_lock);
    for (uint32_t i = 0; i < ctx->nr_log_ranges; i++) {
        g_free(ctx->log_ranges[i].bitmap);
    }
    g_clear_pointer(&ctx->log_ranges, g_free);
    ctx->nr_log_ranges = 0;
    ctx->log_page_size = 0;
    g_mutex_unlock(&ctx->log_lock);
}

void vfu_dma_mark_dirty(VfuCtx *ctx, uint64_t iova, uint64_t len)
{
    uint64_t last;

    if (!len || !__atomic_load_n(&ctx->log_page_size, __ATOMIC_ACQUIRE)) {
        return;
    }
    last = iova + len - 1;
    if (last < iova) {
        return;
    }
    g_mutex_lock(&ctx->log_lock);
    for (uint32_t i = 0; i < ctx->nr_log_ranges; i++) {
        VfuLogRange *r = &ctx->log_ranges[i];
        uint64_t lo, hi;

        if (!vfio_user_ranges_overlap(iova, len, r->iova, r->length)) {
            continue;
        }
        lo = (MAX(iova, r->iova) - r->iova) / ctx->log_page_size;
        hi = (MIN(last, r->iova + r->length - 1) - r->iova) /
             ctx->log_page_size;
        for (uint64_t p = lo; p <= hi; p++) {
            r->bitmap[p / 64] |= 1ull << (p % 64);
        }
    }
    g_mutex_unlock(&ctx->log_lock);
}

typedef struct LogBuild {
    GArray *ranges;             /* VFIOUserDmaLoggingRange */
    uint64_t page_size;
} LogBuild;

static gboolean log_add_mapped(gpointer key, gpointer value, gpointer opaque)
{
    VfuDmaRange *d = value;
    LogBuild *b = opaque;
    VFIOUserDmaLoggingRange r = {
        .iova = QEMU_ALIGN_DOWN(d->iova, b->page_size),
    };

    r.length = QEMU_ALIGN_UP(d->iova + d->size, b->page_size) - r.iova;
    g_array_append_val(b->ranges, r);
    return FALSE;
}

static int log_start(VfuCtx *ctx, const uint8_t *data, size_t len,
                     GByteArray *reply)
{
    g_autoptr(GArray) ranges = g_array_new(false, false,
                                           sizeof(VFIOUserDmaLoggingRange));
    VFIOUserDmaLoggingControl ctl;
    const VFIOUserDmaLoggingRange *in;
    Error *err = NULL;
    int err_no = EINVAL;
    uint64_t pages = 0;
    VfuLogRange *lr;

    if (!vfio_user_dma_logging_start_decode(data, len, &ctl, &in, &err_no,
                                            &err)) {
        trace_vfu_msg_error(0, "DMA_LOGGING_START", error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    if (ctx->log_page_size) {
        return -EBUSY;
    }
    if (ctl.num_ranges) {
        g_array_append_vals(ranges, in, ctl.num_ranges);
    } else {
        /* "Log every write": every range mapped now. */
        LogBuild b = { .ranges = ranges, .page_size = ctl.page_size };

        vfu_dma_lock(ctx);
        g_tree_foreach(ctx->dma, log_add_mapped, &b);
        vfu_dma_unlock(ctx);
    }
    for (guint i = 0; i < ranges->len; i++) {
        pages += g_array_index(ranges, VFIOUserDmaLoggingRange, i).length /
                 ctl.page_size;
        if (pages > VFU_LOG_MAX_PAGES) {
            return -E2BIG;
        }
    }
    lr = g_new0(VfuLogRange, MAX(ranges->len, 1));
    for (guint i = 0; i < ranges->len; i++) {
        VFIOUserDmaLoggingRange *r = &g_array_index(ranges,
                                                    VFIOUserDmaLoggingRange,
                                                    i);

        lr[i].iova = r->iova;
        lr[i].length = r->length;
        lr[i].bitmap = g_new0(uint64_t,
                              vfio_user_dirty_bitmap_size(r->length,
                                                          ctl.page_size) / 8);
    }
    g_mutex_lock(&ctx->log_lock);
    ctx->log_ranges = lr;
    ctx->nr_log_ranges = ranges->len;
    __atomic_store_n(&ctx->log_page_size, ctl.page_size, __ATOMIC_RELEASE);
    g_mutex_unlock(&ctx->log_lock);
    trace_vfu_dma_logging(1, ctl.page_size, ranges->len);
    /* The same control back: we log at the page size asked for. */
    g_byte_array_append(reply, data, len);
    return 0;
}

/*
 * Sets the report bits for [rep->iova, +length) from every dirty logged
 * page overlapping it, and clears the logged pages the report covers
 * entirely.  Called with log_lock held.
 */
static uint64_t log_report(VfuCtx *ctx, const VFIOUserDmaLoggingReport *rep,
                           uint64_t *out)
{
    uint64_t lps = ctx->log_page_size, rend = rep->iova + rep->length - 1;
    uint64_t dirty = 0;

    for (uint32_t i = 0; i < ctx->nr_log_ranges; i++) {
        VfuLogRange *r = &ctx->log_ranges[i];
        uint64_t lo, hi;

        if (!vfio_user_ranges_overlap(rep->iova, rep->length, r->iova,
                                      r->length)) {
            continue;
        }
        lo = (MAX(rep->iova, r->iova) - r->iova) / lps;
        hi = (MIN(rend, r->iova + r->length - 1) - r->iova) / lps;
        for (uint64_t p = lo; p <= hi; p++) {
            uint64_t a, b;

            if (!(r->bitmap[p / 64] & (1ull << (p % 64)))) {
                continue;
            }
            a = r->iova + p * lps;
            b = a + lps - 1;
            for (uint64_t q = (MAX(a, rep->iova) - rep->iova) /
                              rep->page_size;
                 q <= (MIN(b, rend) - rep->iova) / rep->page_size; q++) {
                out[q / 64] |= 1ull << (q % 64);
            }
            if (a >= rep->iova && b <= rend) {
                r->bitmap[p / 64] &= ~(1ull << (p % 64));
            }
            dirty++;
        }
    }
    return dirty;
}

static int log_report_msg(VfuCtx *ctx, const uint8_t *data, size_t len,
                          GByteArray *reply)
{
    uint64_t max = MIN(ctx->peer.max_data_xfer_size,
                       ctx->ours.max_data_xfer_size);
    VFIOUserDmaLoggingReport rep;
    Error *err = NULL;
    int err_no = EINVAL;
    size_t bm_len, at;
    uint64_t dirty;

    if (!vfio_user_dma_logging_report_decode(data, len, max, &rep, &bm_len,
                                             &err_no, &err)) {
        trace_vfu_msg_error(0, "DMA_LOGGING_REPORT", error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    if (!ctx->log_page_size) {
        return -EINVAL;
    }
    g_byte_array_append(reply, data, len);
    at = reply->len;
    g_byte_array_set_size(reply, at + bm_len);
    memset(reply->data + at, 0, bm_len);
    g_mutex_lock(&ctx->log_lock);
    dirty = log_report(ctx, &rep, (uint64_t *)(reply->data + at));
    g_mutex_unlock(&ctx->log_lock);
    trace_vfu_dma_logging_report(rep.iova, rep.length, rep.page_size, dirty);
    return 0;
}

/* ---- State machine ---- */

static int mig_set_state(VfuCtx *ctx, uint32_t target)
{
    bool pre = ctx->mig_flags & VFIO_MIGRATION_PRE_COPY;

    if (target == VFIO_MIG_STATE_ERROR ||
        vfio_mig_next_state(ctx->mig_state, target, pre) ==
        VFIO_MIG_STATE_ERROR) {
        return -EINVAL;
    }
    while (ctx->mig_state != target) {
        uint32_t next = vfio_mig_next_state(ctx->mig_state, target, pre);
        int ret;

        if (next == VFIO_MIG_STATE_ERROR) {
            return -EINVAL;
        }
        ret = ctx->mig_ops->transition(ctx, ctx->opaque, ctx->mig_state,
                                       next);
        trace_vfu_mig_transition(vfio_mig_state_name(ctx->mig_state),
                                 vfio_mig_state_name(next), ret);
        if (ret < 0) {
            return ret;
        }
        ctx->mig_state = next;
    }
    return 0;
}

static void reply_header(GByteArray *reply, uint32_t flags, size_t data_len)
{
    VFIOUserDeviceFeature f = {
        .argsz = sizeof(f) + data_len, .flags = flags,
    };

    g_byte_array_append(reply, (const guint8 *)&f, sizeof(f));
}

int vfu_handle_device_feature(VfuCtx *ctx, VfuMsg *msg)
{
    const VFIOUserDeviceFeature *req = (const void *)msg->payload;
    uint32_t feature, flags, ops;
    const uint8_t *data;
    size_t data_len;
    Error *err = NULL;
    int err_no = EINVAL;
    bool get, set, probe;

    if (!vfio_user_device_feature_decode(msg->payload, msg->len, msg->nfds,
                                         &feature, &flags, &data, &data_len,
                                         &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id, "DEVICE_FEATURE",
                            error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    get = flags & VFIO_DEVICE_FEATURE_GET;
    set = flags & VFIO_DEVICE_FEATURE_SET;
    probe = flags & VFIO_DEVICE_FEATURE_PROBE;
    if (!ctx->mig_flags) {
        return -ENOTTY;
    }
    switch (feature) {
    case VFIO_USER_FEATURE_MIGRATION:
        ops = VFIO_DEVICE_FEATURE_GET;
        break;
    case VFIO_USER_FEATURE_MIG_DEVICE_STATE:
        ops = VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_SET;
        break;
    case VFIO_USER_FEATURE_MIG_DATA_SIZE:
        if (!ctx->mig_ops->data_size) {
            return -ENOTTY;
        }
        ops = VFIO_DEVICE_FEATURE_GET;
        break;
    case VFIO_USER_FEATURE_DMA_LOGGING_START:
    case VFIO_USER_FEATURE_DMA_LOGGING_STOP:
        ops = VFIO_DEVICE_FEATURE_SET;
        break;
    case VFIO_USER_FEATURE_DMA_LOGGING_REPORT:
        ops = VFIO_DEVICE_FEATURE_GET;
        break;
    default:
        return -ENOTTY;
    }
    if ((get && !(ops & VFIO_DEVICE_FEATURE_GET)) ||
        (set && !(ops & VFIO_DEVICE_FEATURE_SET))) {
        return -EINVAL;
    }
    if (probe) {
        g_byte_array_append(msg->reply, msg->payload, msg->len);
        return 0;
    }
    switch (feature) {
    case VFIO_USER_FEATURE_MIGRATION: {
        VFIOUserFeatureMigration m = { .flags = ctx->mig_flags };

        if (data_len || req->argsz < sizeof(*req) + sizeof(m)) {
            return -EINVAL;
        }
        reply_header(msg->reply, flags, sizeof(m));
        g_byte_array_append(msg->reply, (const guint8 *)&m, sizeof(m));
        return 0;
    }
    case VFIO_USER_FEATURE_MIG_DEVICE_STATE: {
        VFIOUserFeatureMigState st;
        int ret;

        if (req->argsz < sizeof(*req) + sizeof(st) ||
            data_len != (set ? sizeof(st) : 0)) {
            return -EINVAL;
        }
        if (set) {
            memcpy(&st, data, sizeof(st));
            ret = mig_set_state(ctx, st.device_state);
            if (ret < 0) {
                return ret;
            }
        }
        st = (VFIOUserFeatureMigState) {
            .device_state = ctx->mig_state, .data_fd = -1,
        };
        reply_header(msg->reply, flags, sizeof(st));
        g_byte_array_append(msg->reply, (const guint8 *)&st, sizeof(st));
        return 0;
    }
    case VFIO_USER_FEATURE_MIG_DATA_SIZE: {
        VFIOUserFeatureMigDataSize ds;

        if (data_len || req->argsz < sizeof(*req) + sizeof(ds)) {
            return -EINVAL;
        }
        ds.stop_copy_length = ctx->mig_ops->data_size(ctx, ctx->opaque);
        reply_header(msg->reply, flags, sizeof(ds));
        g_byte_array_append(msg->reply, (const guint8 *)&ds, sizeof(ds));
        return 0;
    }
    case VFIO_USER_FEATURE_DMA_LOGGING_START:
        reply_header(msg->reply, flags, data_len);
        return log_start(ctx, data, data_len, msg->reply);
    case VFIO_USER_FEATURE_DMA_LOGGING_STOP:
        if (data_len) {
            return -EINVAL;
        }
        trace_vfu_dma_logging(0, 0, 0);
        log_stop(ctx);
        reply_header(msg->reply, flags, 0);
        return 0;
    case VFIO_USER_FEATURE_DMA_LOGGING_REPORT: {
        int ret;

        reply_header(msg->reply, flags, 0);
        ret = log_report_msg(ctx, data, data_len, msg->reply);
        if (ret == 0) {
            ((VFIOUserDeviceFeature *)msg->reply->data)->argsz =
                msg->reply->len;
            if (req->argsz < msg->reply->len) {
                return -EINVAL;
            }
        }
        return ret;
    }
    }
    return -ENOTTY;
}

int vfu_handle_mig_data(VfuCtx *ctx, VfuMsg *msg, bool is_write)
{
    uint64_t max = MIN(ctx->peer.max_data_xfer_size,
                       ctx->ours.max_data_xfer_size);
    const VFIOUserMigData *m;
    Error *err = NULL;
    int err_no = EINVAL;
    VFIOUserMigData hdr;
    ssize_t n;

    if (!ctx->mig_flags) {
        return -ENOTTY;
    }
    if (!vfio_user_mig_data_decode(msg->payload, msg->len, is_write, max,
                                   msg->nfds, &m, &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id, is_write ? "MIG_DATA_WRITE"
                                                  : "MIG_DATA_READ",
                            error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    if (is_write) {
        int ret;

        if (ctx->mig_state != VFIO_MIG_STATE_RESUMING) {
            return -EINVAL;
        }
        ret = ctx->mig_ops->write_data(ctx, ctx->opaque, m->data, m->size);
        trace_vfu_mig_data(1, m->size, ret);
        return ret < 0 ? ret : 0;
    }
    if (ctx->mig_state != VFIO_MIG_STATE_STOP_COPY &&
        ctx->mig_state != VFIO_MIG_STATE_PRE_COPY) {
        return -EINVAL;
    }
    g_byte_array_set_size(msg->reply, sizeof(hdr) + m->size);
    n = ctx->mig_ops->read_data(ctx, ctx->opaque,
                                msg->reply->data + sizeof(hdr), m->size);
    trace_vfu_mig_data(0, m->size, n);
    if (n < 0) {
        return n;
    }
    if ((uint64_t)n > m->size) {
        return -EIO;
    }
    hdr = (VFIOUserMigData) { .argsz = sizeof(hdr) + n, .size = n };
    memcpy(msg->reply->data, &hdr, sizeof(hdr));
    g_byte_array_set_size(msg->reply, sizeof(hdr) + n);
    return 0;
}

void vfu_migration_reset(VfuCtx *ctx)
{
    log_stop(ctx);
    ctx->mig_state = VFIO_MIG_STATE_RUNNING;
}

void vfu_migration_free(VfuCtx *ctx)
{
    log_stop(ctx);
    g_mutex_clear(&ctx->log_lock);
}
