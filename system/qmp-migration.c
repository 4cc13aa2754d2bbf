/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration capabilities.  Conduit does not migrate (a passed-through
 * device's state cannot be moved), so the only capability is "events":
 * whether MIGRATION events would be sent.  Management tools switch it on
 * at every start; that is honest to accept, as no migration will ever
 * produce one.  Any other capability is refused by name.
 */
#include "qemu/osdep.h"
#include "monitor/monitor.h"
#include "qapi/error.h"

static bool migration_events;

static void qmp_query_migrate_capabilities(JsonObject *args, JsonNode **ret,
                                           Error **errp)
{
    JsonArray *list = json_array_new();
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "capability", "events");
    json_object_set_boolean_member(o, "state", migration_events);
    json_array_add_object_element(list, o);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

/* Checks the whole list first, so a refused request changes nothing. */
static void qmp_migrate_set_capabilities(JsonObject *args, JsonNode **ret,
                                         Error **errp)
{
    JsonArray *caps = json_object_get_array_member(args, "capabilities");
    guint n = json_array_get_length(caps);
    int events = -1;

    for (guint i = 0; i < n; i++) {
        JsonNode *node = json_array_get_element(caps, i);
        JsonObject *c = JSON_NODE_HOLDS_OBJECT(node)
                        ? json_node_get_object(node) : NULL;
        JsonNode *name = c ? json_object_get_member(c, "capability") : NULL;
        JsonNode *state = c ? json_object_get_member(c, "state") : NULL;
        const char *cap;

        if (!name || !state || !JSON_NODE_HOLDS_VALUE(name) ||
            json_node_get_value_type(name) != G_TYPE_STRING ||
            !JSON_NODE_HOLDS_VALUE(state) ||
            json_node_get_value_type(state) != G_TYPE_BOOLEAN) {
            error_setg(errp, "capabilities[%u]: expected an object "
                       "{\"capability\": string, \"state\": bool}", i);
            return;
        }
        cap = json_node_get_string(name);
        if (!strcmp(cap, "events")) {
            events = json_node_get_boolean(state);
        } else if (json_node_get_boolean(state)) {
            error_setg(errp, "Migration capability '%s' is not supported: "
                       "Conduit does not support migration", cap);
            return;
        }
    }
    if (events >= 0) {
        migration_events = events;
    }
}

static void __attribute__((constructor)) qmp_migration_register(void)
{
    qmp_register_command_args("query-migrate-capabilities",
                              qmp_query_migrate_capabilities, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("migrate-set-capabilities",
                              qmp_migrate_set_capabilities,
                              "capabilities:a", QCO_ALLOW_PRECONFIG);
}
