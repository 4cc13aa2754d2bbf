/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP introspection for management tools (libvirt probes a binary with
 * these before it writes a command line): the target, the QMP schema,
 * QOM types and their properties, machines, CPU models and vCPU threads.
 *
 * Every answer is computed from what the binary really has: the schema
 * from the command table, types from the type registry, properties from
 * the classes.  Nothing here is a fixed list that could drift.
 */
#include "qemu/osdep.h"
#include "monitor/monitor.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "system/accel.h"
#include "system/target-info.h"

static JsonNode *qmp_node_take_array(JsonArray *list)
{
    JsonNode *node = json_node_new(JSON_NODE_ARRAY);

    json_node_take_array(node, list);
    return node;
}

static void qmp_query_target(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *t = json_object_new();

    json_object_set_string_member(t, "arch", target_info()->arch);
    *ret = qmp_node_new_object(t);
}

/* ---- query-qmp-schema ---- */

typedef struct SchemaBuilder {
    JsonArray *list;
    bool need_any_array;
} SchemaBuilder;

static void schema_add_builtin(JsonArray *list, const char *name,
                               const char *json_type)
{
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "name", name);
    json_object_set_string_member(o, "meta-type", "builtin");
    json_object_set_string_member(o, "json-type", json_type);
    json_array_add_object_element(list, o);
}

/*
 * Argument types as the dispatcher checks them.  Structured arguments
 * ("object", "array") are checked only for their JSON kind, so that is
 * all the schema claims: "any", or an array of "any".
 */
static const char *schema_member_type(SchemaBuilder *b, const char *type)
{
    if (!strcmp(type, "object")) {
        return "any";
    }
    if (!strcmp(type, "array")) {
        b->need_any_array = true;
        return "[any]";
    }
    return type;
}

static void schema_add_command(const char *name, const QmpArgInfo *args,
                               size_t nr_args, bool args_known,
                               bool extra_args, void *opaque)
{
    SchemaBuilder *b = opaque;
    g_autofree char *arg_type = g_strdup_printf("q_obj_%s-arg", name);
    JsonObject *cmd = json_object_new();
    JsonObject *obj = json_object_new();
    JsonArray *members = json_array_new();

    json_object_set_string_member(cmd, "name", name);
    json_object_set_string_member(cmd, "meta-type", "command");
    json_object_set_string_member(cmd, "arg-type", arg_type);
    /* Return values are not declared per command: "any" is the truth. */
    json_object_set_string_member(cmd, "ret-type", "any");
    json_object_set_boolean_member(cmd, "allow-oob", false);
    json_array_add_object_element(b->list, cmd);

    for (size_t i = 0; i < nr_args; i++) {
        JsonObject *m = json_object_new();

        json_object_set_string_member(m, "name", args[i].name);
        json_object_set_string_member(m, "type",
                                      schema_member_type(b, args[i].type));
        if (args[i].optional) {
            json_object_set_null_member(m, "default");
        }
        json_array_add_object_element(members, m);
    }
    json_object_set_string_member(obj, "name", arg_type);
    json_object_set_string_member(obj, "meta-type", "object");
    json_object_set_array_member(obj, "members", members);
    /*
     * A command that takes further driver-specific arguments (device_add)
     * says so in a feature, as the schema has no way to type them.
     */
    if (extra_args || !args_known) {
        JsonArray *features = json_array_new();

        json_array_add_string_element(features, "x-conduit-open-arguments");
        json_object_set_array_member(obj, "features", features);
    }
    json_array_add_object_element(b->list, obj);
}

static void qmp_query_qmp_schema(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    SchemaBuilder b = { .list = json_array_new() };

    qmp_foreach_command(schema_add_command, &b);
    schema_add_builtin(b.list, "str", "string");
    schema_add_builtin(b.list, "int", "int");
    schema_add_builtin(b.list, "bool", "boolean");
    schema_add_builtin(b.list, "number", "number");
    schema_add_builtin(b.list, "any", "value");
    if (b.need_any_array) {
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "name", "[any]");
        json_object_set_string_member(o, "meta-type", "array");
        json_object_set_string_member(o, "element-type", "any");
        json_array_add_object_element(b.list, o);
    }
    *ret = qmp_node_take_array(b.list);
}

/* ---- QOM types and properties ---- */

static void qmp_qom_list_types(JsonObject *args, JsonNode **ret,
                               Error **errp)
{
    const char *implements = json_object_get_string_member_with_default(
        args, "implements", NULL);
    bool abstract = json_object_get_boolean_member_with_default(
        args, "abstract", false);
    GSList *types = object_class_get_list(implements, abstract);
    JsonArray *list = json_array_new();

    for (GSList *l = types; l; l = l->next) {
        ObjectClass *oc = l->data;
        ObjectClass *parent = object_class_get_parent(oc);
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "name", object_class_get_name(oc));
        if (object_class_is_abstract(oc)) {
            json_object_set_boolean_member(o, "abstract", true);
        }
        if (parent) {
            json_object_set_string_member(o, "parent",
                                          object_class_get_name(parent));
        }
        json_array_add_object_element(list, o);
    }
    g_slist_free(types);
    *ret = qmp_node_take_array(list);
}

/* Class properties up the chain; only settable ones when @settable. */
static JsonArray *class_property_list(ObjectClass *oc, bool settable)
{
    JsonArray *list = json_array_new();
    ObjectPropertyIterator iter;
    ObjectProperty *prop;

    object_class_property_iter_init(&iter, oc);
    while ((prop = object_property_iter_next(&iter))) {
        if (!settable || prop->set) {
            json_array_add_object_element(list, object_property_info(prop));
        }
    }
    return list;
}

static void qmp_device_list_properties(JsonObject *args, JsonNode **ret,
                                       Error **errp)
{
    const char *name = json_object_get_string_member(args, "typename");
    ObjectClass *oc = object_class_by_name(name);

    if (!oc) {
        error_set(errp, ERROR_CLASS_DEVICE_NOT_FOUND,
                  "Device '%s' not found", name);
        return;
    }
    if (!object_class_dynamic_cast(oc, TYPE_DEVICE) ||
        object_class_is_abstract(oc)) {
        error_setg(errp, "Parameter 'typename' expects a non-abstract "
                   "device type");
        return;
    }
    *ret = qmp_node_take_array(class_property_list(oc, true));
}

/*
 * Types this binary does not have answer an empty list: nothing can be
 * set on them, which is the truth, and a prober asking about optional
 * back-ends (memory-backend-file, ...) learns it without an error.
 */
static void qmp_qom_list_properties(JsonObject *args, JsonNode **ret,
                                    Error **errp)
{
    const char *name = json_object_get_string_member(args, "typename");
    ObjectClass *oc = object_class_by_name(name);

    *ret = qmp_node_take_array(oc ? class_property_list(oc, false)
                                  : json_array_new());
}

/* ---- machines and CPUs ---- */

static void qmp_query_machines(JsonObject *args, JsonNode **ret,
                               Error **errp)
{
    GSList *machines = object_class_get_list(TYPE_MACHINE, false);
    JsonArray *list = json_array_new();

    for (GSList *l = machines; l; l = l->next) {
        MachineClass *mc = MACHINE_CLASS(l->data);
        g_autofree char *name = machine_class_short_name(mc);
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "name", name);
        if (mc->alias) {
            json_object_set_string_member(o, "alias", mc->alias);
        }
        if (mc->is_default) {
            json_object_set_boolean_member(o, "is-default", true);
        }
        json_object_set_int_member(o, "cpu-max",
                                   mc->max_cpus ? mc->max_cpus : 1);
        /* No CPU hot-plug; NUMA nodes take memdev= (not mem=). */
        json_object_set_boolean_member(o, "hotpluggable-cpus", false);
        json_object_set_boolean_member(o, "numa-mem-supported", false);
        json_object_set_boolean_member(o, "deprecated", false);
        /* -machine memory-backend= takes an -object of this id. */
        if (mc->default_ram_id) {
            json_object_set_string_member(o, "default-ram-id",
                                          mc->default_ram_id);
        }
        json_array_add_object_element(list, o);
    }
    g_slist_free(machines);
    *ret = qmp_node_take_array(list);
}

static void qmp_query_cpu_definitions(JsonObject *args, JsonNode **ret,
                                      Error **errp)
{
    JsonArray *list = json_array_new();

    for (const char *const *m = target_info()->cpu_models; *m; m++) {
        JsonObject *o = json_object_new();
        JsonArray *missing = json_array_new();
        const TargetInfo *ti = target_info();
        g_autoptr(GPtrArray) names = ti->cpu_unavailable_features ?
                                     ti->cpu_unavailable_features(*m) : NULL;

        for (guint i = 0; names && i < names->len; i++) {
            json_array_add_string_element(missing,
                                          g_ptr_array_index(names, i));
        }
        json_object_set_string_member(o, "name", *m);
        /* host and max are the host's CPU: not migration-safe. */
        json_object_set_boolean_member(o, "migration-safe",
                                       ti->cpu_migration_safe &&
                                       ti->cpu_migration_safe(*m));
        json_object_set_boolean_member(o, "static", false);
        json_object_set_array_member(o, "unavailable-features", missing);
        json_object_set_boolean_member(o, "deprecated", false);
        json_array_add_object_element(list, o);
    }
    *ret = qmp_node_take_array(list);
}

/* Conduit has no TPM device model or back-end. */
static void qmp_query_tpm_empty(JsonObject *args, JsonNode **ret,
                                Error **errp)
{
    *ret = qmp_node_take_array(json_array_new());
}

/*
 * One entry per running vCPU with its host thread id (for pinning).  The
 * qtest accelerator runs no vCPUs, so it answers an empty list.
 */
/* CpuInstanceProperties of vCPU index, as QEMU's x86 boards give them. */
static JsonObject *qmp_cpu_props(const CpuTopology *t, unsigned i)
{
    JsonObject *props = json_object_new();

    json_object_set_int_member(props, "socket-id",
                               i / (t->threads * t->cores * t->dies));
    if (t->dies > 1) {
        json_object_set_int_member(props, "die-id",
                                   i / (t->threads * t->cores) % t->dies);
    }
    json_object_set_int_member(props, "core-id", i / t->threads % t->cores);
    json_object_set_int_member(props, "thread-id", i % t->threads);
    return props;
}

/* The QOM path of present vCPU index, or NULL. */
static char *qmp_cpu_qom_path(MachineState *ms, unsigned i)
{
    if (!ms->cpu_objs || i >= ms->smp.cpus || !ms->cpu_objs[i]) {
        return NULL;
    }
    return object_get_canonical_path(ms->cpu_objs[i]);
}

static void qmp_query_cpus_fast(JsonObject *args, JsonNode **ret,
                                Error **errp)
{
    JsonArray *list = json_array_new();
    MachineState *ms = current_machine;
    unsigned nr = ms ? ms->smp.cpus : 0;

    for (unsigned i = 0; i < nr; i++) {
        int tid = accel_vcpu_thread_id(i);
        g_autofree char *path = NULL;
        JsonObject *o;

        if (tid < 0) {
            continue;
        }
        o = json_object_new();
        json_object_set_int_member(o, "cpu-index", i);
        path = qmp_cpu_qom_path(ms, i);
        if (path) {
            json_object_set_string_member(o, "qom-path", path);
        }
        json_object_set_int_member(o, "thread-id", tid);
        json_object_set_string_member(o, "target", target_info()->arch);
        json_object_set_object_member(o, "props", qmp_cpu_props(&ms->smp, i));
        json_array_add_object_element(list, o);
    }
    *ret = qmp_node_take_array(list);
}

/*
 * Every vCPU -smp maxcpus allows, as QEMU lists them (the last first):
 * its type, topology properties and, when present, its QOM path.
 */
static void qmp_query_hotpluggable_cpus(JsonObject *args, JsonNode **ret,
                                        Error **errp)
{
    MachineState *ms = current_machine;
    JsonArray *list;
    const char *type;

    if (!ms || !ms->cpu_objs || !ms->smp.cpus || !ms->cpu_objs[0]) {
        error_setg(errp, "The feature 'query-hotpluggable-cpus' is not "
                   "enabled");
        return;
    }
    type = object_get_typename(ms->cpu_objs[0]);
    list = json_array_new();
    for (unsigned i = ms->smp.max_cpus; i-- > 0;) {
        JsonObject *o = json_object_new();
        g_autofree char *path = qmp_cpu_qom_path(ms, i);

        json_object_set_string_member(o, "type", type);
        json_object_set_int_member(o, "vcpus-count", 1);
        json_object_set_object_member(o, "props", qmp_cpu_props(&ms->smp, i));
        if (path) {
            json_object_set_string_member(o, "qom-path", path);
        }
        json_array_add_object_element(list, o);
    }
    *ret = qmp_node_take_array(list);
}

static void __attribute__((constructor)) qmp_probe_register(void)
{
    qmp_register_command_args("query-target", qmp_query_target, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-qmp-schema", qmp_query_qmp_schema, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("qom-list-types", qmp_qom_list_types,
                              "*implements:s *abstract:b",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("device-list-properties",
                              qmp_device_list_properties, "typename:s",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("qom-list-properties",
                              qmp_qom_list_properties, "typename:s",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-machines", qmp_query_machines,
                              "*compat-props:b", QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-cpu-definitions",
                              qmp_query_cpu_definitions, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-cpus-fast", qmp_query_cpus_fast, "", 0);
    qmp_register_command_args("query-hotpluggable-cpus",
                              qmp_query_hotpluggable_cpus, "", 0);
    qmp_register_command_args("query-tpm-models", qmp_query_tpm_empty, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-tpm-types", qmp_query_tpm_empty, "",
                              QCO_ALLOW_PRECONFIG);
}
