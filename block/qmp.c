/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP query-block and query-named-block-nodes: the block nodes as libvirt
 * reads them (QEMU's BlockInfo, BlockDeviceInfo and ImageInfo shapes:
 * format, the backing chain as backing-image, virtual and actual size),
 * query-blockstats, blockdev-add/-del, block_set_io_throttle and
 * block_resize.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/option.h"
#include "monitor/monitor.h"
#include "qom/object.h"
#include "hw/qdev-core.h"
#include "block/block_int.h"

bool block_set_throttle(BlockNode *bs, const ThrottleConfig *cfg,
                        const char *group, Error **errp);
void block_create_qmp_init(void);

static const char *const detect_zeroes_names[] = { "off", "on", "unmap" };

/* ImageInfo of a node, with its backing chain below (backing-image). */
static JsonObject *block_image_info(BlockNode *bs, unsigned depth)
{
    JsonObject *image = json_object_new();
    int64_t actual = block_allocated_bytes(bs);

    json_object_set_string_member(image, "filename", bs->filename);
    json_object_set_string_member(image, "format", bs->driver);
    json_object_set_int_member(image, "virtual-size", bs->size);
    if (actual >= 0) {
        json_object_set_int_member(image, "actual-size", actual);
    }
    json_object_set_boolean_member(image, "dirty-flag", false);
    if (bs->fmt && bs->fmt->image_info && bs->opaque) {
        bs->fmt->image_info(bs, image);
    }
    if (bs->backing_name) {
        json_object_set_string_member(image, "backing-filename",
                                      bs->backing_name);
    }
    if (bs->backing) {
        json_object_set_string_member(image, "full-backing-filename",
                                      bs->backing->filename);
        json_object_set_string_member(image, "backing-filename-format",
                                      bs->backing->driver);
        if (!bs->backing_name) {
            json_object_set_string_member(image, "backing-filename",
                                          bs->backing->filename);
        }
        if (depth < 64) {
            json_object_set_object_member(image, "backing-image",
                                          block_image_info(bs->backing,
                                                           depth + 1));
        }
    } else if (bs->backing_fmt) {
        json_object_set_string_member(image, "backing-filename-format",
                                      bs->backing_fmt);
    }
    return image;
}

static JsonObject *block_device_info(BlockNode *bs, bool with_chain)
{
    BlockNodeInfo info;
    JsonObject *o = json_object_new();
    JsonObject *cache = json_object_new();
    JsonObject *image;
    ThrottleGroupState *tg = bs->throttle;
    unsigned depth = 0;

    block_node_info(bs, &info);
    for (BlockNode *b = bs->backing; b; b = b->backing) {
        depth++;
    }
    json_object_set_string_member(o, "node-name", info.node_name);
    json_object_set_string_member(o, "drv", info.driver);
    json_object_set_string_member(o, "file", info.filename);
    if (bs->backing) {
        json_object_set_string_member(o, "backing_file",
                                      bs->backing_name ? bs->backing_name
                                                       : bs->backing->filename);
    }
    json_object_set_boolean_member(o, "ro", info.read_only);
    json_object_set_boolean_member(o, "encrypted", false);
    json_object_set_boolean_member(o, "encryption_key_missing", false);
    json_object_set_int_member(o, "backing_file_depth", depth);
    json_object_set_string_member(o, "detect_zeroes",
                                  detect_zeroes_names[bs->detect_zeroes]);
    json_object_set_int_member(o, "write_threshold", 0);
    for (const char *const *k = throttle_keys; *k; k++) {
        /* QEMU reports the *_length keys only with a burst set */
        if (g_str_has_suffix(*k, "_length") &&
            !(tg && throttle_config_enabled(&tg->cfg))) {
            continue;
        }
        json_object_set_int_member(o, *k,
                                   tg ? throttle_config_get(&tg->cfg, *k) : 0);
    }
    if (tg && bs->throttle_group) {
        json_object_set_string_member(o, "group", bs->throttle_group);
    }
    json_object_set_boolean_member(cache, "writeback", true);
    json_object_set_boolean_member(cache, "direct", info.direct);
    json_object_set_boolean_member(cache, "no-flush",
                                   bs->no_flush || block_leaf(bs)->no_flush);
    json_object_set_object_member(o, "cache", cache);
    image = block_image_info(bs, with_chain ? 0 : 64);
    json_object_set_object_member(o, "image", image);
    return o;
}

static void qmp_named_node_one(BlockNode *bs, void *opaque)
{
    json_array_add_object_element(opaque, block_device_info(bs, true));
}

static void qmp_query_named_block_nodes(JsonObject *args, JsonNode **ret,
                                        Error **errp)
{
    JsonArray *list = json_array_new();

    /* Every node is listed, flat or not (QEMU's output for both). */
    block_foreach(qmp_named_node_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void qmp_query_block_one(BlockNode *bs, void *opaque)
{
    BlockNodeInfo info;
    JsonObject *o;

    block_node_info(bs, &info);
    /* A BlockBackend: a node a device uses, or a -drive's top node. */
    if (!info.dev && !info.drive_id) {
        return;
    }
    o = json_object_new();
    json_object_set_string_member(o, "device",
                                  info.drive_id ? info.drive_id : "");
    if (info.dev) {
        g_autofree char *path = object_get_canonical_path(info.user);

        json_object_set_string_member(o, "qdev", path ? path : "");
    }
    json_object_set_boolean_member(o, "locked", false);
    json_object_set_boolean_member(o, "removable", false);
    json_object_set_string_member(o, "type", "unknown");
    json_object_set_string_member(o, "io-status",
                                  (const char *const[]) { "ok", "failed",
                                  "nospace" }[qatomic_read(&bs->io_status)]);
    json_object_set_object_member(o, "inserted", block_device_info(bs, true));
    json_array_add_object_element(opaque, o);
}

static void qmp_query_block(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    block_foreach(qmp_query_block_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static JsonObject *block_stats_object(BlockNode *bs, BlockNodeInfo *info)
{
    JsonObject *st = json_object_new();

    json_object_set_int_member(st, "wr_highest_offset",
                               qatomic_read(&bs->wr_highest_offset));
    json_object_set_int_member(st, "rd_operations", info->stats.rd_ops);
    json_object_set_int_member(st, "wr_operations", info->stats.wr_ops);
    json_object_set_int_member(st, "flush_operations", info->stats.flush_ops);
    json_object_set_int_member(st, "rd_bytes", info->stats.rd_bytes);
    json_object_set_int_member(st, "wr_bytes", info->stats.wr_bytes);
    json_object_set_int_member(st, "unmap_operations", info->stats.unmap_ops);
    json_object_set_int_member(st, "unmap_bytes", info->stats.unmap_bytes);
    json_object_set_int_member(st, "failed_rd_operations",
                               info->stats.failed_ops);
    return st;
}

/* The node below, as "parent": what domblkinfo reads (wr_highest). */
static void block_stats_parent(BlockNode *bs, JsonObject *o)
{
    if (bs->file) {
        BlockNodeInfo fi;
        JsonObject *p = json_object_new();

        block_node_info(bs->file, &fi);
        json_object_set_string_member(p, "node-name", fi.node_name);
        json_object_set_object_member(p, "stats",
                                      block_stats_object(bs->file, &fi));
        json_object_set_object_member(o, "parent", p);
    }
}

static void qmp_query_blockstats_one(BlockNode *bs, void *opaque)
{
    BlockNodeInfo info;
    JsonObject *o;

    block_node_info(bs, &info);
    if (!info.dev && !info.drive_id) {
        return;
    }
    o = json_object_new();
    json_object_set_string_member(o, "device",
                                  info.drive_id ? info.drive_id : "");
    json_object_set_string_member(o, "node-name", info.node_name);
    if (info.dev) {
        g_autofree char *path = object_get_canonical_path(info.user);

        json_object_set_string_member(o, "qdev", path ? path : "");
    }
    json_object_set_object_member(o, "stats", block_stats_object(bs, &info));
    block_stats_parent(bs, o);
    json_array_add_object_element(opaque, o);
}

/* query-nodes=true: every node by node-name (libvirt -blockdev mode). */
static void qmp_query_blockstats_node(BlockNode *bs, void *opaque)
{
    BlockNodeInfo info;
    JsonObject *o = json_object_new();

    block_node_info(bs, &info);
    json_object_set_string_member(o, "node-name", info.node_name);
    json_object_set_object_member(o, "stats", block_stats_object(bs, &info));
    block_stats_parent(bs, o);
    json_array_add_object_element(opaque, o);
}

static void qmp_query_blockstats(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    JsonArray *list = json_array_new();
    bool nodes = json_object_get_boolean_member_with_default(args,
                                                             "query-nodes",
                                                             false);

    block_foreach(nodes ? qmp_query_blockstats_node
                        : qmp_query_blockstats_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

/* blockdev-add: the same arguments as -blockdev's JSON form. */
static void qmp_blockdev_add(JsonObject *args, JsonNode **ret, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_from_json_object(args, errp);

    if (opts) {
        blockdev_add(opts, errp);
    }
}

static void qmp_blockdev_del(JsonObject *args, JsonNode **ret, Error **errp)
{
    const char *name = json_object_get_string_member(args, "node-name");

    blockdev_del(name, errp);
}

/* The node a device uses, by -drive id, node-name, or qdev id/path. */
typedef struct BlockBackendFind {
    const char *id;
    BlockNode *found;
} BlockBackendFind;

static void block_find_by_qdev(BlockNode *bs, void *opaque)
{
    BlockBackendFind *f = opaque;
    BlockNodeInfo info;

    block_node_info(bs, &info);
    if (!info.dev || f->found) {
        return;
    }
    if (info.dev->id && !strcmp(info.dev->id, f->id)) {
        f->found = bs;
    } else {
        g_autofree char *path = object_get_canonical_path(info.user);
        g_autofree char *dpath = object_get_canonical_path(OBJECT(info.dev));

        if ((path && !strcmp(path, f->id)) ||
            (dpath && !strcmp(dpath, f->id))) {
            f->found = bs;
        }
    }
}

static BlockNode *block_backend_find(const char *device, const char *id,
                                     Error **errp)
{
    BlockNode *bs = NULL;

    if (device && *device) {
        bs = block_find(device);
        if (bs && !bs->drive_id && !bs->dev) {
            bs = NULL;
        }
    } else if (id) {
        BlockBackendFind f = { .id = id };

        block_foreach(block_find_by_qdev, &f);
        bs = f.found;
    }
    if (!bs) {
        error_setg(errp, "Device '%s' not found", device && *device ? device
                                                  : id ? id : "");
    }
    return bs;
}

static void qmp_block_set_io_throttle(JsonObject *args, JsonNode **ret,
                                      Error **errp)
{
    const char *device = json_object_get_string_member_with_default(
        args, "device", NULL);
    const char *id = json_object_get_string_member_with_default(args, "id",
                                                                NULL);
    const char *group = json_object_get_string_member_with_default(
        args, "group", NULL);
    ThrottleConfig cfg = { 0 };
    BlockNode *bs;

    if (!device && !id) {
        error_setg(errp, "Need exactly one of 'device' and 'id'");
        return;
    }
    for (const char *const *k = throttle_keys; *k; k++) {
        JsonNode *n = json_object_get_member(args, *k);
        int64_t v;

        if (!n) {
            continue;
        }
        v = json_node_get_int(n);
        if (v < 0) {
            error_setg(errp, "bps/iops/max values must be within [0, "
                       "1000000000000000]");
            return;
        }
        throttle_config_set(&cfg, *k, v);
    }
    bs = block_backend_find(device, id, errp);
    if (bs) {
        block_set_throttle(bs, &cfg, group, errp);
    }
}

static void qmp_block_resize(JsonObject *args, JsonNode **ret, Error **errp)
{
    const char *device = json_object_get_string_member_with_default(
        args, "device", NULL);
    const char *node = json_object_get_string_member_with_default(
        args, "node-name", NULL);
    int64_t size = json_object_get_int_member(args, "size");
    BlockNode *bs;

    if ((device && node) || (!device && !node)) {
        error_setg(errp, "Need exactly one of 'device' and 'node-name'");
        return;
    }
    if (size < 0) {
        error_setg(errp, "Parameter 'size' expects a >0 size");
        return;
    }
    bs = block_find(device ? device : node);
    if (!bs) {
        error_setg(errp, device ? "Device '%s' not found"
                                : "Cannot find device='' nor node-name='%s'",
                   device ? device : node);
        return;
    }
    block_resize(bs, size, errp);
}

/*
 * Called from main() once the constructors ran, so these replace any
 * placeholder registered by one of them.
 */
void block_qmp_init(void)
{
    block_create_qmp_init();
    qmp_register_command_args("query-block", qmp_query_block, "", 0);
    qmp_register_command_args("query-named-block-nodes",
                              qmp_query_named_block_nodes, "*flat:b", 0);
    qmp_register_command_args("query-blockstats", qmp_query_blockstats,
                              "*query-nodes:b", 0);
    qmp_register_command_args("blockdev-add", qmp_blockdev_add,
                              "driver:s node-name:s **", 0);
    qmp_register_command_args("blockdev-del", qmp_blockdev_del,
                              "node-name:s", 0);
    qmp_register_command_args("block_set_io_throttle",
                              qmp_block_set_io_throttle,
                              "*device:s *id:s bps:i bps_rd:i bps_wr:i "
                              "iops:i iops_rd:i iops_wr:i *bps_max:i "
                              "*bps_rd_max:i *bps_wr_max:i *iops_max:i "
                              "*iops_rd_max:i *iops_wr_max:i "
                              "*bps_max_length:i *bps_rd_max_length:i "
                              "*bps_wr_max_length:i *iops_max_length:i "
                              "*iops_rd_max_length:i *iops_wr_max_length:i "
                              "*iops_size:i *group:s", 0);
    qmp_register_command_args("block_resize", qmp_block_resize,
                              "*device:s *node-name:s size:i", 0);
}
