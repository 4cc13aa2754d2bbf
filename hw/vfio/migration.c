/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VFIO device migration, backend-neutral (the v2 uAPI).
 *
 * The device's internal state moves as live state: while the guest runs
 * the device logs the guest pages it writes (DMA logging) and each RAM
 * dirty-log sync folds them into the RAM bitmaps; when the VM stops the
 * device is stopped too (RUNNING -> STOP: quiesced, so the final sync
 * sees its last writes); at switchover STOP -> STOP_COPY and its data is
 * read out in chunks.  The destination takes the device RUNNING ->
 * RESUMING at the first chunk, writes them, and RESUMING -> STOP at the
 * end marker, where the device checks what it got; the VM's start then
 * takes it to RUNNING.  Config space, MSI-X table and PBA are the PCI
 * function's own table (hw/pci/pci-migration.c), replayed after.
 *
 * Chunks (each one REC_LIVE record): op:u8, then
 *   MIG_OP_DATA  bytes of device data
 *   MIG_OP_END   total:u64 (the bytes in all DATA chunks)
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "migration/migration.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "system/runstate.h"
#include "vfio-user/protocol.h"
#include "migration.h"
#include "trace.h"

#define MIG_OP_DATA         1
#define MIG_OP_END          2
#define MIG_READ_CHUNK      (1024 * 1024)
/* Our ceiling on one device's data: a stream is hostile, so is a peer. */
#define MIG_MAX_DEVICE_DATA ((uint64_t)4 * 1024 * 1024 * 1024)
#define MIG_LOG_PAGE        ((uint64_t)4096)
/* Report at most this much IOVA per request (a 32 KiB bitmap). */
#define MIG_LOG_REPORT_SPAN ((uint64_t)1 << 30)

struct VFIOMigration {
    VFIODevice *vbasedev;
    VFIODma *dma;
    char *idstr;
    uint64_t flags;             /* VFIO_MIGRATION_* the device offers */
    uint32_t state;
    int data_fd;                /* kernel: the state's data fd */
    bool has_data_size;
    bool logging;
    Error *error;               /* a failure outside a SaveLiveOps call */
    MemoryListener listener;
    bool listener_on;
    VMChangeStateEntry *vmstate;
    /* destination */
    bool resuming;
    bool loaded;
    uint64_t loaded_bytes;
};

static void mig_set_error(VFIOMigration *m, Error *err)
{
    if (!m->error) {
        m->error = err;
    } else {
        error_free(err);
    }
}

static bool mig_take_error(VFIOMigration *m, Error **errp)
{
    if (m->error) {
        error_propagate(errp, m->error);
        m->error = NULL;
        return false;
    }
    return true;
}

static bool mig_feature(VFIOMigration *m, uint32_t flags, void *data,
                        size_t in_len, size_t out_len, bool *not_supported,
                        Error **errp)
{
    VFIODevice *vbasedev = m->vbasedev;

    return vfio_device_check(vbasedev,
                             VFIO_DEVICE_HAS_OP(vbasedev, device_feature),
                             errp) &&
           vbasedev->ops->device_feature(vbasedev, flags, data, in_len,
                                         out_len, not_supported, errp);
}

/* One direct arc of the v2 state machine. */
static bool mig_set_state_arc(VFIOMigration *m, uint32_t target,
                              Error **errp)
{
    VFIOUserFeatureMigState st = { .device_state = target, .data_fd = -1 };

    trace_vfio_mig_set_state(m->vbasedev->name,
                             vfio_mig_state_name(m->state),
                             vfio_mig_state_name(target));
    if (!mig_feature(m, VFIO_DEVICE_FEATURE_SET |
                     VFIO_USER_FEATURE_MIG_DEVICE_STATE, &st, sizeof(st),
                     sizeof(st), NULL, errp)) {
        error_prepend(errp, "vfio %s: migration state %s -> %s: ",
                      m->vbasedev->name, vfio_mig_state_name(m->state),
                      vfio_mig_state_name(target));
        return false;
    }
    if (st.device_state != target) {
        error_setg(errp, "vfio %s: asked for migration state %s, the device "
                   "reports %s", m->vbasedev->name,
                   vfio_mig_state_name(target),
                   vfio_mig_state_name(st.device_state));
        return false;
    }
    if (m->data_fd >= 0 && m->data_fd != st.data_fd) {
        close(m->data_fd);
    }
    m->data_fd = st.data_fd;
    m->state = target;
    return true;
}

/*
 * Walks to @target one direct arc at a time: every device (and peer
 * library) must take those, not all take combined ones.
 */
static bool mig_set_state(VFIOMigration *m, uint32_t target, Error **errp)
{
    bool pre = m->flags & VFIO_MIGRATION_PRE_COPY;

    while (m->state != target) {
        uint32_t next = vfio_mig_next_state(m->state, target, pre);

        if (next == VFIO_MIG_STATE_ERROR) {
            error_setg(errp, "vfio %s: no way from migration state %s to %s",
                       m->vbasedev->name, vfio_mig_state_name(m->state),
                       vfio_mig_state_name(target));
            return false;
        }
        if (!mig_set_state_arc(m, next, errp)) {
            return false;
        }
    }
    return true;
}

/* ---- Dirty pages the device wrote ---- */

static bool mig_log_start(VFIOMigration *m, Error **errp)
{
    g_autofree uint64_t (*ranges)[2] = NULL;
    VFIODevice *vbasedev = m->vbasedev;
    uint32_t n = 0;

    if (!vfio_device_check(vbasedev,
                           VFIO_DEVICE_HAS_OP(vbasedev, dma_logging_start),
                           errp)) {
        return false;
    }
    ranges = g_malloc0(sizeof(*ranges) * MAX(m->dma->maps->len, 1));
    for (guint i = 0; i < m->dma->maps->len; i++) {
        VFIODmaMap *map = &g_array_index(m->dma->maps, VFIODmaMap, i);
        uint64_t lo = QEMU_ALIGN_DOWN(map->iova, MIG_LOG_PAGE);

        ranges[n][0] = lo;
        ranges[n][1] = QEMU_ALIGN_UP(map->iova + map->size, MIG_LOG_PAGE) -
                       lo;
        n++;
    }
    if (!vbasedev->ops->dma_logging_start(vbasedev, MIG_LOG_PAGE, ranges, n,
                                          errp)) {
        error_prepend(errp, "vfio %s: the device cannot log the guest "
                      "memory it writes, so migrating it would lose data: ",
                      vbasedev->name);
        return false;
    }
    m->logging = true;
    return true;
}

static void mig_log_stop(VFIOMigration *m)
{
    Error *err = NULL;

    if (!m->logging) {
        return;
    }
    m->logging = false;
    if (!m->vbasedev->broken &&
        !m->vbasedev->ops->dma_logging_stop(m->vbasedev, &err)) {
        warn_report_err(err);
    }
}

/* RAM's dirty-log sync: fold in what the device wrote. */
static void mig_log_sync(MemoryListener *listener)
{
    VFIOMigration *m = container_of(listener, VFIOMigration, listener);
    VFIODevice *vbasedev = m->vbasedev;
    Error *err = NULL;

    if (!m->logging) {
        return;
    }
    for (guint i = 0; i < m->dma->maps->len; i++) {
        VFIODmaMap *map = &g_array_index(m->dma->maps, VFIODmaMap, i);
        uint64_t lo = QEMU_ALIGN_DOWN(map->iova, MIG_LOG_PAGE);
        uint64_t hi = QEMU_ALIGN_UP(map->iova + map->size, MIG_LOG_PAGE);

        for (uint64_t at = lo; at < hi; at += MIG_LOG_REPORT_SPAN) {
            uint64_t len = MIN(MIG_LOG_REPORT_SPAN, hi - at);
            g_autofree uint64_t *bm =
                g_malloc0(vfio_user_dirty_bitmap_size(len, MIG_LOG_PAGE));
            uint64_t pages = len / MIG_LOG_PAGE, dirty = 0;

            if (!vbasedev->ops->dma_logging_report(vbasedev, at, len,
                                                   MIG_LOG_PAGE, bm, &err)) {
                error_prepend(&err, "vfio %s: reading the pages the device "
                              "wrote: ", vbasedev->name);
                mig_set_error(m, err);
                return;
            }
            for (uint64_t p = 0; p < pages; p++) {
                uint64_t iova = at + p * MIG_LOG_PAGE;

                if (!(bm[p / 64] & (1ull << (p % 64))) || !map->hva) {
                    continue;
                }
                /* Only the part of the page inside this map. */
                if (iova < map->iova) {
                    memory_ram_mark_dirty_hva(map->hva, MIG_LOG_PAGE -
                                              (map->iova - iova));
                } else {
                    memory_ram_mark_dirty_hva(map->hva + (iova - map->iova),
                                              MIN(MIG_LOG_PAGE,
                                                  map->iova + map->size -
                                                  iova));
                }
                dirty++;
            }
            trace_vfio_mig_dirty(vbasedev->name, at, len, dirty);
        }
    }
}

/* ---- VM run state ---- */

static void mig_vm_state_change(void *opaque, bool running, RunState rs)
{
    VFIOMigration *m = opaque;
    Error *err = NULL;

    if (m->vbasedev->broken || m->resuming) {
        return;
    }
    if (running) {
        if (m->state != VFIO_MIG_STATE_RUNNING &&
            !mig_set_state(m, VFIO_MIG_STATE_RUNNING, &err)) {
            error_report_err(err);
        }
    } else if (m->state == VFIO_MIG_STATE_RUNNING &&
               !mig_set_state(m, VFIO_MIG_STATE_STOP, &err)) {
        /* complete() reports it: the switchover must not go on. */
        mig_set_error(m, err);
    }
}

/* ---- Source ---- */

static bool mig_setup(void *opaque, Error **errp)
{
    VFIOMigration *m = opaque;

    error_free(m->error);
    m->error = NULL;
    if (m->vbasedev->broken) {
        error_setg(errp, "vfio %s: device is broken (backend lost)",
                   m->vbasedev->name);
        return false;
    }
    return mig_log_start(m, errp);
}

static uint64_t mig_pending(void *opaque)
{
    VFIOMigration *m = opaque;
    VFIOUserFeatureMigDataSize ds = { 0 };
    Error *err = NULL;

    if (!m->has_data_size || m->vbasedev->broken) {
        return 0;
    }
    if (!mig_feature(m, VFIO_DEVICE_FEATURE_GET |
                     VFIO_USER_FEATURE_MIG_DATA_SIZE, &ds, 0, sizeof(ds),
                     NULL, &err)) {
        error_free(err);
        return 0;
    }
    return MIN(ds.stop_copy_length, MIG_MAX_DEVICE_DATA);
}

static bool mig_iterate(void *opaque, GByteArray *out, size_t max,
                        Error **errp)
{
    /* Data moves at switchover (STOP_COPY); here only a failure shows. */
    return mig_take_error(opaque, errp);
}

static void put_chunk_header(GByteArray *out, uint32_t len, uint8_t op)
{
    mig_put_u32(out, len);
    mig_put_u8(out, op);
}

static bool mig_complete(void *opaque, GByteArray *out, Error **errp)
{
    VFIOMigration *m = opaque;
    VFIODevice *vbasedev = m->vbasedev;
    uint64_t total = 0;

    if (!mig_take_error(m, errp)) {
        return false;
    }
    /* The VM stop stopped the device; a paused VM's device too. */
    if (m->state != VFIO_MIG_STATE_STOP &&
        !mig_set_state(m, VFIO_MIG_STATE_STOP, errp)) {
        return false;
    }
    if (!mig_set_state(m, VFIO_MIG_STATE_STOP_COPY, errp) ||
        !vfio_device_check(vbasedev,
                           VFIO_DEVICE_HAS_OP(vbasedev, mig_data_read),
                           errp)) {
        return false;
    }
    for (;;) {
        guint at = out->len;
        size_t got = 0;

        put_chunk_header(out, 0, MIG_OP_DATA);
        g_byte_array_set_size(out, at + 5 + MIG_READ_CHUNK);
        if (!vbasedev->ops->mig_data_read(vbasedev, m->data_fd,
                                          out->data + at + 5,
                                          MIG_READ_CHUNK, &got, errp)) {
            error_prepend(errp, "vfio %s: reading the device state: ",
                          vbasedev->name);
            return false;
        }
        if (got > MIG_READ_CHUNK) {
            error_setg(errp, "vfio %s: the device returned more state than "
                       "asked for", vbasedev->name);
            return false;
        }
        if (!got) {
            g_byte_array_set_size(out, at);
            break;
        }
        g_byte_array_set_size(out, at + 5 + got);
        {
            uint32_t len = GUINT32_TO_LE(1 + got);

            memcpy(out->data + at, &len, 4);
        }
        total += got;
        if (total > MIG_MAX_DEVICE_DATA) {
            error_setg(errp, "vfio %s: device state exceeds %" PRIu64
                       " bytes", vbasedev->name, MIG_MAX_DEVICE_DATA);
            return false;
        }
    }
    put_chunk_header(out, 9, MIG_OP_END);
    mig_put_u64(out, total);
    trace_vfio_mig_saved(vbasedev->name, total);
    return mig_set_state(m, VFIO_MIG_STATE_STOP, errp);
}

static void mig_cleanup(void *opaque)
{
    VFIOMigration *m = opaque;

    mig_log_stop(m);
    m->resuming = false;
}

/* ---- Destination ---- */

static bool mig_load(void *opaque, MigBuf *chunk, Error **errp)
{
    VFIOMigration *m = opaque;
    VFIODevice *vbasedev = m->vbasedev;
    uint8_t op;
    uint64_t total;

    if (!mig_buf_get_u8(chunk, &op, errp)) {
        return false;
    }
    if (m->loaded) {
        error_setg(errp, "vfio %s: device data after its end marker",
                   vbasedev->name);
        return false;
    }
    if (!m->resuming) {
        if (!mig_set_state(m, VFIO_MIG_STATE_RESUMING, errp)) {
            return false;
        }
        m->resuming = true;
        m->loaded_bytes = 0;
    }
    switch (op) {
    case MIG_OP_DATA: {
        size_t n = mig_buf_left(chunk);

        if (!n || m->loaded_bytes + n > MIG_MAX_DEVICE_DATA) {
            error_setg(errp, "vfio %s: device data chunk of %zu bytes "
                       "invalid", vbasedev->name, n);
            return false;
        }
        if (!vfio_device_check(vbasedev,
                               VFIO_DEVICE_HAS_OP(vbasedev, mig_data_write),
                               errp) ||
            !vbasedev->ops->mig_data_write(vbasedev, m->data_fd,
                                           chunk->data + chunk->pos, n,
                                           errp)) {
            error_prepend(errp, "vfio %s: writing the device state: ",
                          vbasedev->name);
            return false;
        }
        chunk->pos += n;
        m->loaded_bytes += n;
        return true;
    }
    case MIG_OP_END:
        if (!mig_buf_get_u64(chunk, &total, errp)) {
            return false;
        }
        if (total != m->loaded_bytes) {
            error_setg(errp, "vfio %s: the source sent %" PRIu64 " bytes of "
                       "device state, %" PRIu64 " arrived", vbasedev->name,
                       total, m->loaded_bytes);
            return false;
        }
        /* The device checks and applies what it got. */
        if (!mig_set_state(m, VFIO_MIG_STATE_STOP, errp)) {
            return false;
        }
        m->resuming = false;
        m->loaded = true;
        trace_vfio_mig_loaded(vbasedev->name, total);
        return true;
    default:
        error_setg(errp, "vfio %s: unknown device data chunk 0x%02x",
                   vbasedev->name, op);
        return false;
    }
}

static bool mig_load_done(void *opaque, Error **errp)
{
    VFIOMigration *m = opaque;

    if (!m->loaded) {
        error_setg(errp, "vfio %s: the migration stream holds no device "
                   "state for it (or it was cut short)", m->vbasedev->name);
        return false;
    }
    m->loaded = false;
    return true;
}

static const SaveLiveOps vfio_mig_ops = {
    .setup = mig_setup,
    .switchover_pending = mig_pending,
    .iterate = mig_iterate,
    .complete = mig_complete,
    .load = mig_load,
    .load_done = mig_load_done,
    .cleanup = mig_cleanup,
};

VFIOMigration *vfio_migration_new(VFIODevice *vbasedev, VFIODma *dma,
                                  const char *idstr, Error **errp)
{
    g_autofree VFIOMigration *m = g_new0(VFIOMigration, 1);
    VFIOUserFeatureMigration feat = { 0 };
    VFIOUserFeatureMigState st = { 0 };
    VFIOUserFeatureMigDataSize ds;
    bool not_supported = false;
    Error *err = NULL;

    m->vbasedev = vbasedev;
    m->dma = dma;
    m->data_fd = -1;
    if (!VFIO_DEVICE_HAS_OP(vbasedev, device_feature) ||
        !mig_feature(m, VFIO_DEVICE_FEATURE_GET |
                     VFIO_USER_FEATURE_MIGRATION, &feat, 0, sizeof(feat),
                     &not_supported, &err)) {
        error_free(err);
        error_setg(errp, "the device has no migration driver");
        return NULL;
    }
    if (!(feat.flags & VFIO_MIGRATION_STOP_COPY)) {
        error_setg(errp, "the device offers migration without STOP_COPY "
                   "(flags 0x%" PRIx64 ")", feat.flags);
        return NULL;
    }
    if (!mig_feature(m, VFIO_DEVICE_FEATURE_GET |
                     VFIO_USER_FEATURE_MIG_DEVICE_STATE, &st, 0, sizeof(st),
                     NULL, errp)) {
        return NULL;
    }
    if (st.device_state != VFIO_MIG_STATE_RUNNING) {
        error_setg(errp, "the device is in migration state %s, not RUNNING",
                   vfio_mig_state_name(st.device_state));
        return NULL;
    }
    m->state = VFIO_MIG_STATE_RUNNING;
    m->flags = feat.flags;
    m->has_data_size = mig_feature(m, VFIO_DEVICE_FEATURE_GET |
                                   VFIO_USER_FEATURE_MIG_DATA_SIZE, &ds, 0,
                                   sizeof(ds), NULL, &err);
    error_free(err);
    m->idstr = g_strdup(idstr);
    m->listener = (MemoryListener) {
        .log_sync = mig_log_sync,
        .name = "vfio-migration",
        .priority = 20,
    };
    memory_listener_register(&m->listener, &address_space_memory);
    m->listener_on = true;
    m->vmstate = qemu_add_vm_change_state_handler(mig_vm_state_change, m);
    register_savevm_live(m->idstr, &vfio_mig_ops, m);
    trace_vfio_mig_supported(vbasedev->name, feat.flags, m->has_data_size);
    return g_steal_pointer(&m);
}

void vfio_migration_free(VFIOMigration *m)
{
    if (!m) {
        return;
    }
    unregister_savevm_live(m->idstr);
    qemu_del_vm_change_state_handler(m->vmstate);
    if (m->listener_on) {
        memory_listener_unregister(&m->listener);
    }
    mig_log_stop(m);
    if (m->data_fd >= 0) {
        close(m->data_fd);
    }
    error_free(m->error);
    g_free(m->idstr);
    g_free(m);
}
