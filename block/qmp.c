/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP query-block and query-named-block-nodes: the block nodes as libvirt
 * reads them (QEMU's BlockInfo and BlockDeviceInfo shapes, the members
 * Conduit has).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/option.h"
#include "monitor/monitor.h"
#include "qom/object.h"
#include "hw/qdev-core.h"
#include "block/block.h"

static JsonObject *block_device_info(BlockNode *bs)
{
    BlockNodeInfo info;
    JsonObject *o = json_object_new();
    JsonObject *image = json_object_new();
    JsonObject *cache = json_object_new();

    block_node_info(bs, &info);
    json_object_set_string_member(o, "node-name", info.node_name);
    json_object_set_string_member(o, "drv", info.driver);
    json_object_set_string_member(o, "file", info.filename);
    json_object_set_boolean_member(o, "ro", info.read_only);
    json_object_set_boolean_member(o, "encrypted", false);
    json_object_set_boolean_member(o, "encryption_key_missing", false);
    json_object_set_int_member(o, "backing_file_depth", 0);
    json_object_set_string_member(o, "detect_zeroes", "off");
    json_object_set_int_member(o, "write_threshold", 0);
    for (const char *const *k = (const char *const[]){
             "bps", "bps_rd", "bps_wr", "iops", "iops_rd", "iops_wr", NULL };
         *k; k++) {
        json_object_set_int_member(o, *k, 0);
    }
    json_object_set_boolean_member(cache, "writeback", true);
    json_object_set_boolean_member(cache, "direct", info.direct);
    json_object_set_boolean_member(cache, "no-flush", false);
    json_object_set_object_member(o, "cache", cache);
    json_object_set_string_member(image, "filename", info.filename);
    json_object_set_string_member(image, "format", info.driver);
    json_object_set_int_member(image, "virtual-size", info.size);
    json_object_set_boolean_member(image, "dirty-flag", false);
    json_object_set_object_member(o, "image", image);
    return o;
}

static void qmp_named_node_one(BlockNode *bs, void *opaque)
{
    json_array_add_object_element(opaque, block_device_info(bs));
}

static void qmp_query_named_block_nodes(JsonObject *args, JsonNode **ret,
                                        Error **errp)
{
    JsonArray *list = json_array_new();

    /* Every node is listed whether or not "flat" is set: no backing chains. */
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
    json_object_set_string_member(o, "io-status", "ok");
    json_object_set_object_member(o, "inserted", block_device_info(bs));
    json_array_add_object_element(opaque, o);
}

static void qmp_query_block(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    block_foreach(qmp_query_block_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void qmp_query_blockstats_one(BlockNode *bs, void *opaque)
{
    BlockNodeInfo info;
    JsonObject *o, *st;

    block_node_info(bs, &info);
    if (!info.dev && !info.drive_id) {
        return;
    }
    o = json_object_new();
    st = json_object_new();
    json_object_set_string_member(o, "device",
                                  info.drive_id ? info.drive_id : "");
    json_object_set_string_member(o, "node-name", info.node_name);
    if (info.dev) {
        g_autofree char *path = object_get_canonical_path(info.user);

        json_object_set_string_member(o, "qdev", path ? path : "");
    }
    json_object_set_int_member(st, "rd_operations", info.stats.rd_ops);
    json_object_set_int_member(st, "wr_operations", info.stats.wr_ops);
    json_object_set_int_member(st, "flush_operations", info.stats.flush_ops);
    json_object_set_int_member(st, "rd_bytes", info.stats.rd_bytes);
    json_object_set_int_member(st, "wr_bytes", info.stats.wr_bytes);
    json_object_set_int_member(st, "unmap_operations", info.stats.unmap_ops);
    json_object_set_int_member(st, "unmap_bytes", info.stats.unmap_bytes);
    json_object_set_int_member(st, "failed_rd_operations",
                               info.stats.failed_ops);
    json_object_set_object_member(o, "stats", st);
    json_array_add_object_element(opaque, o);
}

static void qmp_query_blockstats(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    JsonArray *list = json_array_new();

    block_foreach(qmp_query_blockstats_one, list);
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

/*
 * Called from main() once the constructors ran, so these replace any
 * placeholder registered by one of them.
 */
void block_qmp_init(void)
{
    qmp_register_command_args("query-block", qmp_query_block, "", 0);
    qmp_register_command_args("query-named-block-nodes",
                              qmp_query_named_block_nodes, "*flat:b", 0);
    qmp_register_command_args("query-blockstats", qmp_query_blockstats,
                              "*query-nodes:b", 0);
    qmp_register_command_args("blockdev-add", qmp_blockdev_add,
                              "driver:s node-name:s **", 0);
    qmp_register_command_args("blockdev-del", qmp_blockdev_del,
                              "node-name:s", 0);
}
