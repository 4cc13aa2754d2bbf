/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP commands of the core: version and status, run control, device
 * hot-plug and QOM introspection.
 */
#include "qemu/osdep.h"
#include "monitor/monitor.h"
#include "system/runstate.h"
#include "system/system.h"
#include "qemu/option.h"
#include "qapi/error.h"
#include "hw/qdev-core.h"
#include "hw/qdev-qtree.h"
#include "hw/pci/pci-qmp.h"
#include "hw/input/input.h"
#include "qom/object.h"
#include "system/accel.h"
#include "chardev/char.h"
#include "system/memory.h"
#include "system/address-spaces.h"

static void qmp_query_version(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *v = json_object_new();
    JsonObject *qemu = json_object_new();

    /* QEMU-compatible level for management tools; ours in "package". */
    json_object_set_int_member(qemu, "major", 8);
    json_object_set_int_member(qemu, "minor", 2);
    json_object_set_int_member(qemu, "micro", 0);
    json_object_set_object_member(v, "qemu", qemu);
    json_object_set_string_member(v, "package", "Conduit " CONDUIT_VERSION);
    *ret = qmp_node_new_object(v);
}

static void qmp_query_status(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *s = json_object_new();

    json_object_set_boolean_member(s, "running", runstate_is_running());
    json_object_set_boolean_member(s, "singlestep", false);
    json_object_set_string_member(s, "status", runstate_name(runstate_get()));
    *ret = qmp_node_new_object(s);
}

static void qmp_stop(JsonObject *args, JsonNode **ret, Error **errp)
{
    if (runstate_is_running()) {
        vm_stop(RUN_STATE_PAUSED);
    }
}

static void qmp_cont(JsonObject *args, JsonNode **ret, Error **errp)
{
    if (runstate_check(RUN_STATE_INTERNAL_ERROR) ||
        runstate_check(RUN_STATE_SHUTDOWN)) {
        error_setg(errp, "Resetting the Virtual Machine is required");
        return;
    }
    if (runstate_check(RUN_STATE_INMIGRATE)) {
        /* QEMU's answer: run once the incoming state is loaded. */
        autostart = true;
        return;
    }
    vm_start();
}

static void qmp_system_reset(JsonObject *args, JsonNode **ret, Error **errp)
{
    qemu_system_reset_request_cause(SHUTDOWN_CAUSE_HOST_QMP_SYSTEM_RESET);
}

static void qmp_system_powerdown(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    qemu_system_powerdown_request();
}

static void qmp_quit(JsonObject *args, JsonNode **ret, Error **errp)
{
    /* The reply goes out before the main loop acts on this. */
    qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_HOST_QMP_QUIT, 0);
}

static void qmp_device_add(JsonObject *args, JsonNode **ret, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_from_json_object(args, errp);

    if (!opts) {
        return;
    }
    qdev_device_add(opts, errp);
}

static DeviceState *qmp_find_device(const char *id, Error **errp)
{
    DeviceState *dev = qdev_find_by_id(id);

    if (!dev && id[0] == '/') {
        Object *obj = object_resolve_path(id, NULL);
        if (obj && object_dynamic_cast(obj, TYPE_DEVICE)) {
            dev = (DeviceState *)obj;
        }
    }
    if (!dev) {
        error_set(errp, ERROR_CLASS_DEVICE_NOT_FOUND,
                  "Device '%s' not found", id);
    }
    return dev;
}

static void qmp_device_del(JsonObject *args, JsonNode **ret, Error **errp)
{
    DeviceState *dev =
        qmp_find_device(json_object_get_string_member(args, "id"), errp);

    if (dev) {
        qdev_unplug(dev, errp);
    }
}

static Object *qmp_resolve(const char *path, Error **errp)
{
    bool ambiguous = false;
    Object *obj = object_resolve_path(path, &ambiguous);

    if (!obj) {
        if (ambiguous) {
            error_setg(errp, "Path '%s' is ambiguous", path);
        } else {
            error_set(errp, ERROR_CLASS_DEVICE_NOT_FOUND,
                      "Device '%s' not found", path);
        }
    }
    return obj;
}

static void qmp_qom_list(JsonObject *args, JsonNode **ret, Error **errp)
{
    Object *obj = qmp_resolve(json_object_get_string_member(args, "path"),
                              errp);
    ObjectPropertyIterator iter;
    ObjectProperty *prop;
    JsonArray *list;

    if (!obj) {
        return;
    }
    list = json_array_new();
    object_property_iter_init(&iter, obj);
    while ((prop = object_property_iter_next(&iter))) {
        json_array_add_object_element(list, object_property_info(prop));
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void qmp_qom_get(JsonObject *args, JsonNode **ret, Error **errp)
{
    Object *obj = qmp_resolve(json_object_get_string_member(args, "path"),
                              errp);

    if (obj) {
        *ret = object_property_get_json(
            obj, json_object_get_string_member(args, "property"), errp);
    }
}

static void qmp_qom_set(JsonObject *args, JsonNode **ret, Error **errp)
{
    Object *obj = qmp_resolve(json_object_get_string_member(args, "path"),
                              errp);

    if (obj) {
        object_property_set_json(
            obj, json_object_get_string_member(args, "property"),
            json_object_get_member(args, "value"), errp);
    }
}

static void qmp_query_kvm(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *k = json_object_new();

    json_object_set_boolean_member(k, "enabled", accel_is_kvm());
    json_object_set_boolean_member(k, "present", access("/dev/kvm", F_OK) == 0);
    *ret = qmp_node_new_object(k);
}

/*
 * A few human monitor commands, for tools that send them through QMP.
 * Output is text, as from the HMP console.
 */
static void qmp_human_monitor_command(JsonObject *args, JsonNode **ret,
                                      Error **errp)
{
    const char *line = json_object_get_string_member(args, "command-line");
    g_auto(GStrv) words = g_strsplit_set(line, " \t", -1);
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *out = NULL;
    size_t i;

    for (i = 0; words[i]; i++) {
        if (*words[i]) {
            g_ptr_array_add(argv, words[i]);
        }
    }
    if (!argv->len) {
        *ret = qmp_node_new_string("");
        return;
    }
    if (argv->len == 2 && !strcmp(argv->pdata[0], "info") &&
        !strcmp(argv->pdata[1], "status")) {
        out = g_strdup_printf("VM status: %s\r\n",
                              runstate_is_running() ? "running" :
                              runstate_check(RUN_STATE_PRELAUNCH) ?
                              "paused (prelaunch)" :
                              runstate_name(runstate_get()));
    } else if (argv->len == 2 && !strcmp(argv->pdata[0], "info") &&
               !strcmp(argv->pdata[1], "version")) {
        out = g_strdup("8.2.0 (Conduit " CONDUIT_VERSION ")\r\n");
    } else if (argv->len == 2 && !strcmp(argv->pdata[0], "info") &&
               !strcmp(argv->pdata[1], "pci")) {
        out = pci_info_text();
    } else if (argv->len == 2 && !strcmp(argv->pdata[0], "info") &&
               !strcmp(argv->pdata[1], "qtree")) {
        out = qdev_qtree_text();
    } else if (argv->len == 1 && !strcmp(argv->pdata[0], "stop")) {
        qmp_stop(args, ret, errp);
    } else if (argv->len == 1 && (!strcmp(argv->pdata[0], "cont") ||
                                  !strcmp(argv->pdata[0], "c"))) {
        qmp_cont(args, ret, errp);
    } else if (argv->len == 1 && !strcmp(argv->pdata[0], "system_reset")) {
        qmp_system_reset(args, ret, errp);
    } else if ((argv->len == 2 || argv->len == 3) &&
               !strcmp(argv->pdata[0], "sendkey")) {
        guint64 hold = 100;

        if (argv->len == 3 &&
            !g_ascii_string_to_unsigned(argv->pdata[2], 10, 0, INT64_MAX,
                                        &hold, NULL)) {
            error_setg(errp, "invalid hold-time '%s'",
                       (char *)argv->pdata[2]);
            return;
        }
        if (!input_hmp_sendkey(argv->pdata[1], hold, errp)) {
            return;
        }
    } else {
        error_setg(errp, "unknown or unsupported human monitor command: '%s'",
                   line);
        return;
    }
    if (*ret) {
        json_node_unref(*ret);
    }
    *ret = qmp_node_new_string(out ? out : "");
}

static void qmp_query_chardev_one(Chardev *chr, void *opaque)
{
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "label", qemu_chr_get_label(chr));
    json_object_set_string_member(o, "filename", qemu_chr_get_filename(chr));
    json_object_set_boolean_member(o, "frontend-open",
                                   qemu_chr_frontend_open(chr));
    json_array_add_object_element(opaque, o);
}

static void qmp_query_chardev(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    qemu_chr_foreach(qmp_query_chardev_one, list);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

typedef struct IoCountersWalk {
    const char *space;
    GHashTable *seen;           /* MemoryRegion *: listed once each */
    JsonArray *list;
} IoCountersWalk;

static bool qmp_io_counters_one(const FlatRange *fr, void *opaque)
{
    IoCountersWalk *w = opaque;
    MemoryRegion *mr = fr->mr;
    Object *owner = memory_region_owner(mr);
    uint64_t reads, writes;
    JsonObject *o;

    /* Only I/O regions dispatch through callbacks and count. */
    if (memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
        !g_hash_table_add(w->seen, mr)) {
        return false;
    }
    memory_region_get_access_counts(mr, &reads, &writes);
    o = json_object_new();
    json_object_set_string_member(o, "address-space", w->space);
    json_object_set_string_member(o, "name", memory_region_name(mr));
    if (owner) {
        g_autofree char *path = object_get_canonical_path(owner);

        if (path) {
            json_object_set_string_member(o, "owner", path);
        }
    }
    json_object_set_int_member(o, "address", fr->addr);
    json_object_set_int_member(o, "reads", reads);
    json_object_set_int_member(o, "writes", writes);
    json_array_add_object_element(w->list, o);
    return false;
}

/* The per-region dispatch counters of every mapped I/O region. */
static void qmp_x_query_io_counters(JsonObject *args, JsonNode **ret,
                                    Error **errp)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
    IoCountersWalk w = { .seen = seen, .list = json_array_new() };
    AddressSpace *spaces[] = { address_space_memory_get(),
                               address_space_io_get() };

    for (size_t i = 0; i < G_N_ELEMENTS(spaces); i++) {
        w.space = address_space_name(spaces[i]);
        flatview_for_each_range(address_space_get_flatview(spaces[i]),
                                qmp_io_counters_one, &w);
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, w.list);
}

static void __attribute__((constructor)) qmp_cmds_register(void)
{
    qmp_register_command_args("query-version", qmp_query_version, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-status", qmp_query_status, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("stop", qmp_stop, "", 0);
    qmp_register_command_args("cont", qmp_cont, "", 0);
    qmp_register_command_args("system_reset", qmp_system_reset, "", 0);
    qmp_register_command_args("quit", qmp_quit, "", QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("system_powerdown", qmp_system_powerdown, "",
                              0);
    qmp_register_command_args("device_add", qmp_device_add,
                              "driver:s *id:s *bus:s **", 0);
    qmp_register_command_args("device_del", qmp_device_del, "id:s", 0);
    qmp_register_command_args("query-chardev", qmp_query_chardev, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-kvm", qmp_query_kvm, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("human-monitor-command",
                              qmp_human_monitor_command,
                              "command-line:s *cpu-index:i", 0);
    qmp_register_command_args("x-query-io-counters", qmp_x_query_io_counters,
                              "", 0);
    qmp_register_command_args("qom-list", qmp_qom_list, "path:s",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("qom-get", qmp_qom_get,
                              "path:s property:s", QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("qom-set", qmp_qom_set,
                              "path:s property:s value:any",
                              QCO_ALLOW_PRECONFIG);
}
