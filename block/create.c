/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Image creation and external snapshots, as libvirt's
 * snapshot-create-as --disk-only drives them: blockdev-create (a job;
 * driver file or qcow2), blockdev-add of the overlay with backing null,
 * then transaction with a blockdev-snapshot action, which puts the
 * overlay on top of the disk's node while the guest runs.  Also
 * blockdev-snapshot-sync, which creates and opens the overlay itself.
 *
 * A new qcow2 image is laid out as qemu-img lays it out: the header (with
 * the backing file name and its format extension), a one-cluster
 * refcount table, one refcount block, and an empty L1 table that the
 * driver then sizes by growing the image to the requested size.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/option.h"
#include "monitor/monitor.h"
#include "block/block_int.h"
#include "qemu/job.h"
#include "qemu/main-loop.h"
#include "block/qcow2.h"
#include "trace.h"

/* ---- JSON argument helpers (the command's options object) ---- */

static bool opt_has(JsonObject *o, const char *key)
{
    return json_object_has_member(o, key) &&
           !json_object_get_null_member(o, key);
}

static bool opt_str(JsonObject *o, const char *key, const char **out,
                    bool required, Error **errp)
{
    JsonNode *n = json_object_get_member(o, key);

    *out = NULL;
    if (!n || JSON_NODE_HOLDS_NULL(n)) {
        if (required) {
            error_setg(errp, "Parameter '%s' is missing", key);
            return false;
        }
        return true;
    }
    if (!JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_STRING) {
        error_setg(errp, "Invalid parameter type for '%s', expected: string",
                   key);
        return false;
    }
    *out = json_node_get_string(n);
    return true;
}

static bool opt_int(JsonObject *o, const char *key, int64_t *out,
                    int64_t def, bool required, Error **errp)
{
    JsonNode *n = json_object_get_member(o, key);

    *out = def;
    if (!n) {
        if (required) {
            error_setg(errp, "Parameter '%s' is missing", key);
            return false;
        }
        return true;
    }
    if (!JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_INT64) {
        error_setg(errp, "Invalid parameter type for '%s', expected: "
                   "integer", key);
        return false;
    }
    *out = json_node_get_int(n);
    return true;
}

static bool opt_bool(JsonObject *o, const char *key, bool *out, bool def,
                     Error **errp)
{
    JsonNode *n = json_object_get_member(o, key);

    *out = def;
    if (!n) {
        return true;
    }
    if (!JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_BOOLEAN) {
        error_setg(errp, "Invalid parameter type for '%s', expected: "
                   "boolean", key);
        return false;
    }
    *out = json_node_get_boolean(n);
    return true;
}

static bool opt_only(JsonObject *o, const char *const *known, Error **errp)
{
    g_autoptr(GList) members = json_object_get_members(o);

    for (GList *l = members; l; l = l->next) {
        if (!g_strv_contains(known, l->data)) {
            error_setg(errp, "Parameter '%s' is unexpected",
                       (const char *)l->data);
            return false;
        }
    }
    return true;
}

/* ---- driver=file ---- */

static const char *const create_file_keys[] = {
    "driver", "filename", "size", "preallocation", "nocow",
    "extent-size-hint", NULL,
};

static bool create_file_check(JsonObject *o, Error **errp)
{
    const char *filename, *prealloc;
    int64_t size;

    if (!opt_only(o, create_file_keys, errp) ||
        !opt_str(o, "filename", &filename, true, errp) ||
        !opt_int(o, "size", &size, 0, true, errp) ||
        !opt_str(o, "preallocation", &prealloc, false, errp)) {
        return false;
    }
    if (size < 0) {
        error_setg(errp, "Parameter 'size' expects a non-negative size");
        return false;
    }
    if (prealloc && strcmp(prealloc, "off") && strcmp(prealloc, "falloc") &&
        strcmp(prealloc, "full")) {
        error_setg(errp, "Unsupported preallocation mode '%s'", prealloc);
        error_append_hint(errp, "Use off, falloc or full.\n");
        return false;
    }
    return true;
}

static bool create_file_run(JsonObject *o, Error **errp)
{
    const char *filename = json_object_get_string_member(o, "filename");
    int64_t size = json_object_get_int_member(o, "size");
    const char *prealloc = opt_has(o, "preallocation") ?
        json_object_get_string_member(o, "preallocation") : "off";
    int fd = open(filename, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    struct stat st;
    bool ok = false;

    if (fd < 0) {
        error_setg_errno(errp, errno, "Could not create '%s'", filename);
        return false;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        error_setg(errp, "'%s' is not a regular file", filename);
        goto out;
    }
    if (ftruncate(fd, 0) < 0 || ftruncate(fd, size) < 0) {
        error_setg_errno(errp, errno, "Could not resize file '%s'", filename);
        goto out;
    }
    if (!strcmp(prealloc, "falloc") && size &&
        posix_fallocate(fd, 0, size) != 0) {
        error_setg(errp, "Could not preallocate '%s'", filename);
        goto out;
    }
    if (!strcmp(prealloc, "full")) {
        g_autofree uint8_t *zero = g_malloc0(1 << 20);

        for (int64_t off = 0; off < size; off += 1 << 20) {
            size_t n = MIN(size - off, 1 << 20);

            if (pwrite(fd, zero, n, off) != (ssize_t)n) {
                error_setg_errno(errp, errno, "Could not preallocate '%s'",
                                 filename);
                goto out;
            }
        }
    }
    ok = true;
out:
    close(fd);
    return ok;
}

/* ---- driver=qcow2 ---- */

static const char *const create_qcow2_keys[] = {
    "driver", "file", "size", "version", "backing-file", "backing-fmt",
    "cluster-size", "preallocation", "lazy-refcounts", "refcount-bits",
    "compression-type", "extended-l2", "encrypt", "data-file", "data-file-raw",
    NULL,
};

static bool create_qcow2_check(JsonObject *o, Error **errp)
{
    const char *file, *version, *backing, *fmt, *prealloc, *ctype;
    int64_t size, cluster_size, refcount_bits;
    bool lazy, extl2;
    BlockNode *node;

    if (!opt_only(o, create_qcow2_keys, errp) ||
        !opt_str(o, "file", &file, true, errp) ||
        !opt_int(o, "size", &size, 0, true, errp) ||
        !opt_str(o, "version", &version, false, errp) ||
        !opt_str(o, "backing-file", &backing, false, errp) ||
        !opt_str(o, "backing-fmt", &fmt, false, errp) ||
        !opt_int(o, "cluster-size", &cluster_size, 65536, false, errp) ||
        !opt_str(o, "preallocation", &prealloc, false, errp) ||
        !opt_bool(o, "lazy-refcounts", &lazy, false, errp) ||
        !opt_int(o, "refcount-bits", &refcount_bits, 16, false, errp) ||
        !opt_str(o, "compression-type", &ctype, false, errp) ||
        !opt_bool(o, "extended-l2", &extl2, false, errp)) {
        return false;
    }
    if (opt_has(o, "encrypt")) {
        error_setg(errp, "qcow2: encryption is not supported");
        return false;
    }
    if (opt_has(o, "data-file")) {
        error_setg(errp, "qcow2: external data files are not supported");
        return false;
    }
    if (extl2) {
        error_setg(errp, "qcow2: extended L2 entries are not supported");
        return false;
    }
    if (ctype && strcmp(ctype, "zlib")) {
        error_setg(errp, "qcow2: compression type '%s' is not supported",
                   ctype);
        return false;
    }
    if (size < 0 || size % 512) {
        error_setg(errp, "Image size must be a multiple of 512 bytes");
        return false;
    }
    if (version && strcmp(version, "v2") && strcmp(version, "v3")) {
        error_setg(errp, "Invalid parameter 'version': '%s'", version);
        return false;
    }
    if (cluster_size < 512 || cluster_size > (2 << 20) ||
        (cluster_size & (cluster_size - 1))) {
        error_setg(errp, "Cluster size must be a power of two between 512 "
                   "and 2048k");
        return false;
    }
    if (refcount_bits < 1 || refcount_bits > 64 ||
        (refcount_bits & (refcount_bits - 1))) {
        error_setg(errp, "Refcount width must be a power of two and may "
                   "not exceed 64 bits");
        return false;
    }
    if (version && !strcmp(version, "v2") && (lazy || refcount_bits != 16)) {
        error_setg(errp, "%s only supported with compatibility level 1.1 "
                   "and above (use version=v3 or greater)",
                   lazy ? "Lazy refcounts" : "Different refcount widths "
                   "than 16 bits are");
        return false;
    }
    if (prealloc && strcmp(prealloc, "off")) {
        error_setg(errp, "qcow2: preallocation mode '%s' is not supported",
                   prealloc);
        error_append_hint(errp, "Use preallocation=off.\n");
        return false;
    }
    if (fmt && !backing) {
        error_setg(errp, "Backing format cannot be used without backing "
                   "file");
        return false;
    }
    if (backing && strlen(backing) > QCOW2_MAX_BACKING_NAME) {
        error_setg(errp, "Backing file name too long");
        return false;
    }
    node = block_find(file);
    if (!node) {
        error_setg(errp, "Cannot find device='' nor node-name='%s'", file);
        return false;
    }
    if (node->fmt || node->file || strcmp(node->driver, "file")) {
        error_setg(errp, "blockdev-create for qcow2 needs a protocol node: "
                   "'%s' is a %s node", file, node->driver);
        return false;
    }
    return true;
}

/* Writes an empty image with room for nothing, then grows it. */
static bool create_qcow2_run(JsonObject *o, Error **errp)
{
    BlockNode *file = block_find(json_object_get_string_member(o, "file"));
    int64_t size = json_object_get_int_member(o, "size");
    int64_t cs = 65536, rbits = 16;
    bool lazy = false;
    const char *version = NULL, *backing = NULL, *fmt = NULL;
    uint32_t bits;
    g_autofree uint8_t *buf = NULL;
    Qcow2Header h = { 0 };
    size_t off;
    BlockNode *bs;
    g_autoptr(QemuOpts) opts = qemu_opts_new(NULL);
    bool ok;
    int ret;

    opt_int(o, "cluster-size", &cs, 65536, false, &error_abort);
    opt_int(o, "refcount-bits", &rbits, 16, false, &error_abort);
    opt_bool(o, "lazy-refcounts", &lazy, false, &error_abort);
    opt_str(o, "version", &version, false, &error_abort);
    opt_str(o, "backing-file", &backing, false, &error_abort);
    opt_str(o, "backing-fmt", &fmt, false, &error_abort);
    if (!file || file->parent || file->dev || file->read_only) {
        error_setg(errp, "Node '%s' is in use or read-only",
                   json_object_get_string_member(o, "file"));
        return false;
    }
    bits = __builtin_ctzll(cs);
    h.version = version && !strcmp(version, "v2") ? 2 : 3;
    h.cluster_bits = bits;
    h.refcount_table_offset = cs;
    h.refcount_table_clusters = 1;
    h.refcount_order = __builtin_ctzll(rbits);
    h.header_length = h.version == 3 ? 112 : QCOW2_V2_HEADER_LEN;
    h.compatible_features = lazy ? QCOW2_COMPAT_LAZY_REFCOUNTS : 0;
    buf = g_malloc0(3 * cs);
    off = h.header_length;
    if (fmt) {
        size_t n = strlen(fmt);

        qcow2_put_be32(buf + off, QCOW2_EXT_BACKING_FORMAT);
        qcow2_put_be32(buf + off + 4, n);
        memcpy(buf + off + 8, fmt, n);
        off += 8 + ROUND_UP(n, 8);
    }
    off += 8;                           /* the end-of-extensions marker */
    if (backing) {
        h.backing_file_offset = off;
        h.backing_file_size = strlen(backing);
        if (off + h.backing_file_size > (uint64_t)cs) {
            error_setg(errp, "Backing file name does not fit in the first "
                       "cluster (cluster size %" PRId64 ")", cs);
            return false;
        }
        memcpy(buf + off, backing, h.backing_file_size);
    }
    qcow2_build_header(&h, buf);
    /* refcount table -> block at cluster 2, which counts clusters 0-2 */
    qcow2_put_be64(buf + cs, 2 * cs);
    for (int i = 0; i < 3; i++) {
        qcow2_refblock_set(buf + 2 * cs, h.refcount_order, i, 1);
    }
    if (!file->blkdev && ftruncate(file->fd, 0) < 0) {
        error_setg_errno(errp, errno, "Could not truncate '%s'",
                         file->filename);
        return false;
    }
    ret = block_file_pwrite(file, 0, buf, 3 * cs);
    if (ret == 0) {
        ret = block_file_flush(file);
    }
    if (ret < 0) {
        error_setg_errno(errp, -ret, "Could not write the new image to '%s'",
                         file->filename);
        return false;
    }
    /* Open it (without its backing file) and grow it to size. */
    bs = block_node_new(NULL, "qcow2");
    bs->file = file;
    file->parent = bs;
    bs->alignment = file->alignment;
    bs->direct = file->direct;
    bs->filename = g_strdup(file->filename);
    bs->fmt = &qcow2_driver;
    qemu_opt_set(opts, "x-backing-node", "");
    ok = qcow2_driver.open(bs, opts, errp);
    if (ok && size) {
        ok = qcow2_driver.truncate(bs, size, errp);
    }
    file->parent = NULL;
    bs->file = NULL;
    if (!ok) {
        bs->fmt = NULL;
    }
    block_node_drop(bs);
    if (ok) {
        file->size = block_file_length(file);
    }
    return ok;
}

/* ---- blockdev-create ---- */

typedef struct CreateJob {
    JsonObject *options;
    QEMUBH *bh;
    Job *job;
} CreateJob;

/* The work, from a bottom half after blockdev-create returned. */
static void blockdev_create_job_run(void *opaque)
{
    CreateJob *cj = opaque;
    JsonObject *o = cj->options;
    const char *driver = json_object_get_string_member(o, "driver");
    Error *err = NULL;
    bool ok;

    if (job_status(cj->job) != JOB_STATUS_CREATED) {
        return;             /* cancelled before it started */
    }
    job_start(cj->job);
    trace_blockdev_create(job_id(cj->job), driver);
    if (!strcmp(driver, "file")) {
        ok = create_file_run(o, &err);
    } else {
        ok = create_qcow2_run(o, &err);
    }
    job_completed(cj->job, ok ? NULL : error_get_pretty(err));
    error_free(err);
}

static void blockdev_create_job_free(Job *job)
{
    CreateJob *cj = job_opaque(job);

    qemu_bh_delete(cj->bh);
    json_object_unref(cj->options);
    g_free(cj);
}

static const JobDriver blockdev_create_job = {
    .type = JOB_TYPE_CREATE,
    .free = blockdev_create_job_free,
};

static void qmp_blockdev_create(JsonObject *args, JsonNode **ret,
                                Error **errp)
{
    const char *id = json_object_get_string_member(args, "job-id");
    JsonObject *o = json_object_get_object_member(args, "options");
    const char *driver;
    CreateJob *cj;

    if (!o) {
        error_setg(errp, "Invalid parameter type for 'options', expected: "
                   "object");
        return;
    }
    if (!opt_str(o, "driver", &driver, true, errp)) {
        return;
    }
    if (!strcmp(driver, "file")) {
        if (!create_file_check(o, errp)) {
            return;
        }
    } else if (!strcmp(driver, "qcow2")) {
        if (!create_qcow2_check(o, errp)) {
            return;
        }
    } else {
        error_setg(errp, "Driver '%s' does not support blockdev-create",
                   driver);
        error_append_hint(errp, "Supported: file, qcow2.\n");
        return;
    }
    /* As QEMU: manual dismiss. */
    cj = g_new0(CreateJob, 1);
    cj->options = json_object_ref(o);
    cj->bh = qemu_bh_new(blockdev_create_job_run, cj);
    cj->job = job_create(id, &blockdev_create_job, cj, false, errp);
    if (!cj->job) {
        qemu_bh_delete(cj->bh);
        json_object_unref(cj->options);
        g_free(cj);
        return;
    }
    qemu_bh_schedule(cj->bh);
}

/* ---- snapshots ---- */

/* What one snapshot action will do, checked before anything changes. */
typedef struct SnapshotAction {
    BlockNode *node;            /* the current top of the disk */
    BlockNode *overlay;
    bool opened;                /* blockdev-snapshot-sync opened overlay */
} SnapshotAction;

static bool snapshot_check(BlockNode *node, BlockNode *overlay,
                           Error **errp)
{
    if (node->parent || node->redirect) {
        error_setg(errp, "Node '%s' is not the top of its chain",
                   node->node_name);
        return false;
    }
    if (overlay == node) {
        error_setg(errp, "The overlay must not be the node itself");
        return false;
    }
    if (overlay->dev || overlay->parent || overlay->drive_id) {
        error_setg(errp, "The overlay '%s' is already in use",
                   overlay->node_name);
        return false;
    }
    if (!overlay->fmt) {
        error_setg(errp, "The overlay '%s' does not support backing images",
                   overlay->node_name);
        return false;
    }
    if (overlay->backing) {
        error_setg(errp, "The overlay '%s' already has a backing image",
                   overlay->node_name);
        error_append_hint(errp, "Add it with \"backing\": null.\n");
        return false;
    }
    if (overlay->read_only && !node->read_only) {
        error_setg(errp, "The overlay '%s' is read-only", overlay->node_name);
        return false;
    }
    /* The device will write to the overlay: its image locks first. */
    if (node->dev && !overlay->read_only &&
        !block_lock_for_device(overlay, node->share_rw, errp)) {
        return false;
    }
    return true;
}

/* Puts @overlay on top of @node; the device (if any) follows. */
static void snapshot_commit(SnapshotAction *a)
{
    BlockNode *node = a->node, *ov = a->overlay;
    int64_t deadline;

    block_flush(node);
    g_mutex_lock(&node->lock);
    ov->backing = node;
    node->parent = ov;
    node->implicit = false;
    ov->dev = node->dev;
    ov->user = node->user;
    node->dev = NULL;
    node->user = NULL;
    ov->drive_id = node->drive_id;
    node->drive_id = NULL;
    ov->throttle = node->throttle;
    node->throttle = NULL;
    ov->throttle_group = node->throttle_group;
    node->throttle_group = NULL;
    ov->werror = node->werror;
    ov->rerror = node->rerror;
    ov->detect_zeroes = ov->detect_zeroes ? ov->detect_zeroes
                                          : node->detect_zeroes;
    qatomic_set(&node->redirect, ov);
    g_mutex_unlock(&node->lock);
    /* Requests that started on the old top complete there. */
    deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (qatomic_read(&node->inflight) &&
           g_get_monotonic_time() < deadline) {
        g_usleep(1000);
    }
    trace_blockdev_snapshot(node->node_name, ov->node_name);
}

static bool snapshot_prepare(JsonObject *data, SnapshotAction *a,
                             Error **errp)
{
    const char *node_name, *overlay;
    BlockNode *node, *ov;

    if (!opt_str(data, "node", &node_name, true, errp) ||
        !opt_str(data, "overlay", &overlay, true, errp)) {
        return false;
    }
    node = block_find(node_name);
    if (!node) {
        error_setg(errp, "Cannot find device='%s' nor node-name='%s'",
                   node_name, node_name);
        return false;
    }
    ov = block_find(overlay);
    if (!ov || ov->drive_id) {
        error_setg(errp, "Cannot find device='' nor node-name='%s'", overlay);
        return false;
    }
    if (!snapshot_check(node, ov, errp)) {
        return false;
    }
    a->node = node;
    a->overlay = ov;
    return true;
}

/* blockdev-snapshot-sync: creates (mode=absolute-paths) and opens. */
static bool snapshot_sync_prepare(JsonObject *data, SnapshotAction *a,
                                  Error **errp)
{
    const char *device, *node_name, *file, *snap_name, *format, *mode;
    BlockNode *node;
    g_autoptr(QemuOpts) opts = qemu_opts_new(NULL);

    if (!opt_str(data, "device", &device, false, errp) ||
        !opt_str(data, "node-name", &node_name, false, errp) ||
        !opt_str(data, "snapshot-file", &file, true, errp) ||
        !opt_str(data, "snapshot-node-name", &snap_name, false, errp) ||
        !opt_str(data, "format", &format, false, errp) ||
        !opt_str(data, "mode", &mode, false, errp)) {
        return false;
    }
    if (!device && !node_name) {
        error_setg(errp, "Cannot find device= nor node_name=");
        return false;
    }
    node = block_find(node_name ? node_name : device);
    if (!node) {
        error_setg(errp, "Cannot find device='%s' nor node-name='%s'",
                   device ? device : "", node_name ? node_name : "");
        return false;
    }
    if (format && strcmp(format, "qcow2")) {
        error_setg(errp, "Snapshot format '%s' is not supported", format);
        error_append_hint(errp, "Use format=qcow2.\n");
        return false;
    }
    if (mode && strcmp(mode, "absolute-paths") && strcmp(mode, "existing")) {
        error_setg(errp, "Invalid parameter 'mode': '%s'", mode);
        return false;
    }
    if (node->parent || node->redirect) {
        error_setg(errp, "Node '%s' is not the top of its chain",
                   node->node_name);
        return false;
    }
    if (!mode || !strcmp(mode, "absolute-paths")) {
        g_autoptr(JsonObject) fo = json_object_new();
        g_autoptr(JsonObject) qo = json_object_new();
        g_autoptr(QemuOpts) fopts = qemu_opts_new(NULL);
        BlockNode *fnode;
        bool ok;

        json_object_set_string_member(fo, "driver", "file");
        json_object_set_string_member(fo, "filename", file);
        json_object_set_int_member(fo, "size", 0);
        if (!create_file_run(fo, errp)) {
            return false;
        }
        qemu_opt_set(fopts, "driver", "file");
        qemu_opt_set(fopts, "filename", file);
        fnode = blockdev_add(fopts, errp);
        if (!fnode) {
            return false;
        }
        json_object_set_string_member(qo, "driver", "qcow2");
        json_object_set_string_member(qo, "file", fnode->node_name);
        json_object_set_int_member(qo, "size", node->size);
        json_object_set_string_member(qo, "backing-file", node->filename);
        json_object_set_string_member(qo, "backing-fmt",
                                      node->fmt ? node->fmt->name : "raw");
        ok = create_qcow2_check(qo, errp) && create_qcow2_run(qo, errp);
        block_node_drop(fnode);
        if (!ok) {
            return false;
        }
    }
    if (snap_name) {
        qemu_opt_set(opts, "node-name", snap_name);
    }
    qemu_opt_set(opts, "driver", "qcow2");
    qemu_opt_set(opts, "file.driver", "file");
    qemu_opt_set(opts, "file.filename", file);
    qemu_opt_set(opts, "backing", "");
    if (node->direct) {
        qemu_opt_set(opts, "cache.direct", "on");
    }
    a->overlay = blockdev_add(opts, errp);
    if (!a->overlay) {
        return false;
    }
    a->opened = true;
    a->node = node;
    if (!snapshot_check(node, a->overlay, errp)) {
        block_node_close_tree(a->overlay);
        return false;
    }
    return true;
}

static void snapshot_abort(SnapshotAction *a)
{
    if (a->opened && a->overlay) {
        block_node_close_tree(a->overlay);
    }
}

static void qmp_blockdev_snapshot(JsonObject *args, JsonNode **ret,
                                  Error **errp)
{
    SnapshotAction a = { 0 };

    if (snapshot_prepare(args, &a, errp)) {
        snapshot_commit(&a);
    }
}

static void qmp_blockdev_snapshot_sync(JsonObject *args, JsonNode **ret,
                                       Error **errp)
{
    SnapshotAction a = { 0 };

    if (snapshot_sync_prepare(args, &a, errp)) {
        snapshot_commit(&a);
    }
}

/* transaction: every action prepared, then all committed (or none). */
static void qmp_transaction(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *actions = json_object_get_array_member(args, "actions");
    guint n = actions ? json_array_get_length(actions) : 0;
    g_autofree SnapshotAction *acts = g_new0(SnapshotAction, MAX(n, 1));
    guint i;

    if (!actions) {
        error_setg(errp, "Invalid parameter type for 'actions', expected: "
                   "array");
        return;
    }
    for (i = 0; i < n; i++) {
        JsonObject *act = json_array_get_object_element(actions, i);
        const char *type = act ? json_object_get_string_member_with_default(
                                     act, "type", NULL) : NULL;
        JsonObject *data = act && json_object_has_member(act, "data") ?
                           json_object_get_object_member(act, "data") : NULL;
        bool ok;

        if (!type || !data) {
            error_setg(errp, "Invalid transaction action %u: needs 'type' "
                       "and 'data'", i);
            break;
        }
        if (!strcmp(type, "blockdev-snapshot")) {
            ok = snapshot_prepare(data, &acts[i], errp);
        } else if (!strcmp(type, "blockdev-snapshot-sync")) {
            ok = snapshot_sync_prepare(data, &acts[i], errp);
        } else {
            error_setg(errp, "Transaction action '%s' is not supported",
                       type);
            error_append_hint(errp, "Supported: blockdev-snapshot, "
                              "blockdev-snapshot-sync.\n");
            ok = false;
        }
        if (!ok) {
            break;
        }
        /* Two actions on one disk would conflict. */
        for (guint j = 0; j < i; j++) {
            if (acts[j].node == acts[i].node ||
                acts[j].overlay == acts[i].overlay) {
                error_setg(errp, "Node '%s' is used by two actions",
                           acts[i].node->node_name);
                i++;
                goto abort;
            }
        }
    }
    if (i < n) {
        goto abort;
    }
    for (i = 0; i < n; i++) {
        snapshot_commit(&acts[i]);
    }
    return;
abort:
    while (i-- > 0) {
        snapshot_abort(&acts[i]);
    }
}

void block_create_qmp_init(void);
void block_create_qmp_init(void)
{
    qmp_register_command_args("blockdev-create", qmp_blockdev_create,
                              "job-id:s options:o", 0);
    qmp_register_command_args("blockdev-snapshot", qmp_blockdev_snapshot,
                              "node:s overlay:s", 0);
    qmp_register_command_args("blockdev-snapshot-sync",
                              qmp_blockdev_snapshot_sync,
                              "*device:s *node-name:s snapshot-file:s "
                              "*snapshot-node-name:s *format:s *mode:s", 0);
    qmp_register_command_args("transaction", qmp_transaction,
                              "actions:a *properties:o", 0);
}
