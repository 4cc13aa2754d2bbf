/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block-layer queries while Conduit has no block layer: there are no
 * drives and no block nodes, and the answers say exactly that.  libvirt
 * asks both at every domain start.  A block layer replaces this file.
 */
#include "qemu/osdep.h"
#include "monitor/monitor.h"

static void qmp_query_block(JsonObject *args, JsonNode **ret, Error **errp)
{
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, json_array_new());
}

static void qmp_query_named_block_nodes(JsonObject *args, JsonNode **ret,
                                        Error **errp)
{
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, json_array_new());
}

static void __attribute__((constructor)) qmp_block_register(void)
{
    qmp_register_command_args("query-block", qmp_query_block, "", 0);
    qmp_register_command_args("query-named-block-nodes",
                              qmp_query_named_block_nodes, "*flat:b", 0);
}
