/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP query-fdsets: the -add-fd sets as QEMU lists them.  Kept apart from
 * fdset.c so that the fdsets, which chardevs open, do not depend on the
 * monitor, which runs on a chardev.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "monitor/monitor.h"
#include "system/fdset.h"

typedef struct FdsetList {
    GHashTable *sets;           /* set id -> its JsonObject in list */
    JsonArray *list;
} FdsetList;

static void fdset_list_add(int64_t set_id, int fd, const char *member_opaque,
                           void *opaque)
{
    FdsetList *l = opaque;
    JsonObject *set = g_hash_table_lookup(l->sets, &set_id);
    JsonObject *fdinfo = json_object_new();

    if (!set) {
        int64_t *key = g_new(int64_t, 1);

        *key = set_id;
        set = json_object_new();
        json_object_set_int_member(set, "fdset-id", set_id);
        json_object_set_array_member(set, "fds", json_array_new());
        g_hash_table_insert(l->sets, key, set);
        json_array_add_object_element(l->list, set);
    }
    json_object_set_int_member(fdinfo, "fd", fd);
    if (member_opaque) {
        json_object_set_string_member(fdinfo, "opaque", member_opaque);
    }
    json_array_add_object_element(json_object_get_array_member(set, "fds"),
                                  fdinfo);
}

static void qmp_query_fdsets(JsonObject *args, JsonNode **ret, Error **errp)
{
    g_autoptr(GHashTable) sets = g_hash_table_new_full(g_int64_hash,
                                                       g_int64_equal,
                                                       g_free, NULL);
    FdsetList l = { .sets = sets, .list = json_array_new() };

    fdset_foreach(fdset_list_add, &l);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, l.list);
}

static void __attribute__((constructor)) qmp_fdset_register(void)
{
    qmp_register_command_args("query-fdsets", qmp_query_fdsets, "",
                              QCO_ALLOW_PRECONFIG);
}
