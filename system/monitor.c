/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP monitor: QEMU's JSON wire protocol on a chardev.
 *
 * Input is split into top-level JSON values by a small scanner that only
 * tracks nesting and strings; each complete value is then parsed by
 * json-glib.  This copes with messages split across reads (or several in
 * one read) without trusting the peer to send newlines.
 */
#include "qemu/osdep.h"
#include "qemu/fd-owner.h"
#include "monitor/monitor.h"
#include "chardev/char.h"
#include "qemu/option.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "trace.h"

/* Guards against a peer that never closes its value. */
#define QMP_MAX_MESSAGE (16 * 1024 * 1024)
#define QMP_MAX_DEPTH 1024

typedef enum QmpArgType {
    QMP_ARG_STRING,
    QMP_ARG_INT,
    QMP_ARG_BOOL,
    QMP_ARG_NUMBER,
    QMP_ARG_OBJECT,
    QMP_ARG_ARRAY,
    QMP_ARG_ANY,
} QmpArgType;

typedef struct QmpArg {
    char *name;
    QmpArgType type;
    bool optional;
} QmpArg;

typedef struct QmpCommand {
    char *name;
    QmpCommandFunc fn;
    unsigned flags;
    bool check_args;
    bool allow_extra;
    GArray *args;       /* QmpArg */
} QmpCommand;

typedef struct Monitor {
    CharBackend be;
    GString *inbuf;
    int depth;
    bool in_string;
    bool escape;
    bool in_scalar;
    bool discarding;    /* after an oversized value: skip to a newline */
    bool negotiated;
    bool pretty;
} Monitor;

static GHashTable *qmp_commands;    /* name -> QmpCommand */
static GList *monitors;

/* ---- command table ---- */

static void qmp_command_free(gpointer data)
{
    QmpCommand *cmd = data;
    guint i;

    if (cmd->args) {
        for (i = 0; i < cmd->args->len; i++) {
            g_free(g_array_index(cmd->args, QmpArg, i).name);
        }
        g_array_free(cmd->args, TRUE);
    }
    g_free(cmd->name);
    g_free(cmd);
}

static QmpCommand *qmp_command_add(const char *name, QmpCommandFunc fn,
                                   unsigned flags)
{
    QmpCommand *cmd = g_new0(QmpCommand, 1);

    if (!qmp_commands) {
        qmp_commands = g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
                                             qmp_command_free);
    }
    cmd->name = g_strdup(name);
    cmd->fn = fn;
    cmd->flags = flags;
    g_hash_table_replace(qmp_commands, cmd->name, cmd);
    return cmd;
}

static QmpArgType qmp_arg_type_parse(const char *t)
{
    static const struct {
        const char *name;
        QmpArgType type;
    } types[] = {
        { "s", QMP_ARG_STRING }, { "i", QMP_ARG_INT },
        { "b", QMP_ARG_BOOL }, { "n", QMP_ARG_NUMBER },
        { "o", QMP_ARG_OBJECT }, { "a", QMP_ARG_ARRAY },
        { "any", QMP_ARG_ANY },
    };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(types); i++) {
        if (!strcmp(t, types[i].name)) {
            return types[i].type;
        }
    }
    /* A typo in a spec string is a programming error. */
    g_error("qmp: bad argument type '%s'", t);
}

void qmp_register_command_args(const char *name, QmpCommandFunc fn,
                               const char *args_spec, unsigned flags)
{
    QmpCommand *cmd = qmp_command_add(name, fn, flags);
    g_auto(GStrv) words = g_strsplit(args_spec ? args_spec : "", " ", -1);
    size_t i;

    cmd->check_args = true;
    cmd->args = g_array_new(FALSE, TRUE, sizeof(QmpArg));
    for (i = 0; words[i]; i++) {
        const char *w = words[i];
        const char *colon;
        QmpArg arg = { 0 };

        if (!*w) {
            continue;
        }
        if (!strcmp(w, "**")) {
            cmd->allow_extra = true;
            continue;
        }
        if (*w == '*') {
            arg.optional = true;
            w++;
        }
        colon = strchr(w, ':');
        g_assert(colon);
        arg.name = g_strndup(w, colon - w);
        arg.type = qmp_arg_type_parse(colon + 1);
        g_array_append_val(cmd->args, arg);
    }
}

static const char *qmp_arg_type_qapi_name(QmpArgType type)
{
    switch (type) {
    case QMP_ARG_STRING: return "str";
    case QMP_ARG_INT: return "int";
    case QMP_ARG_BOOL: return "bool";
    case QMP_ARG_NUMBER: return "number";
    case QMP_ARG_OBJECT: return "object";
    case QMP_ARG_ARRAY: return "array";
    default: return "any";
    }
}

void qmp_foreach_command(QmpCommandInfoFunc fn, void *opaque)
{
    g_autoptr(GList) names = NULL;

    if (!qmp_commands) {
        return;
    }
    names = g_list_sort(g_hash_table_get_keys(qmp_commands),
                        (GCompareFunc)strcmp);
    for (GList *l = names; l; l = l->next) {
        QmpCommand *cmd = g_hash_table_lookup(qmp_commands, l->data);
        guint n = cmd->args ? cmd->args->len : 0;
        g_autofree QmpArgInfo *args = g_new0(QmpArgInfo, n + 1);

        for (guint i = 0; i < n; i++) {
            QmpArg *arg = &g_array_index(cmd->args, QmpArg, i);

            args[i].name = arg->name;
            args[i].type = qmp_arg_type_qapi_name(arg->type);
            args[i].optional = arg->optional;
        }
        fn(cmd->name, args, n, cmd->check_args, cmd->allow_extra, opaque);
    }
}

static const char *qmp_arg_type_name(QmpArgType type)
{
    switch (type) {
    case QMP_ARG_STRING: return "string";
    case QMP_ARG_INT: return "integer";
    case QMP_ARG_BOOL: return "boolean";
    case QMP_ARG_NUMBER: return "number";
    case QMP_ARG_OBJECT: return "object";
    case QMP_ARG_ARRAY: return "array";
    default: return "any";
    }
}

static bool qmp_arg_type_ok(JsonNode *node, QmpArgType type)
{
    GType vt;

    switch (type) {
    case QMP_ARG_ANY:
        return true;
    case QMP_ARG_OBJECT:
        return JSON_NODE_HOLDS_OBJECT(node);
    case QMP_ARG_ARRAY:
        return JSON_NODE_HOLDS_ARRAY(node);
    default:
        break;
    }
    if (!JSON_NODE_HOLDS_VALUE(node)) {
        return false;
    }
    vt = json_node_get_value_type(node);
    switch (type) {
    case QMP_ARG_STRING:
        return vt == G_TYPE_STRING;
    case QMP_ARG_INT:
        return vt == G_TYPE_INT64;
    case QMP_ARG_BOOL:
        return vt == G_TYPE_BOOLEAN;
    case QMP_ARG_NUMBER:
        return vt == G_TYPE_INT64 || vt == G_TYPE_DOUBLE;
    default:
        return false;
    }
}

static bool qmp_check_args(QmpCommand *cmd, JsonObject *args, Error **errp)
{
    g_autoptr(GList) members = NULL;
    GList *l;
    guint i;

    for (i = 0; i < cmd->args->len; i++) {
        QmpArg *arg = &g_array_index(cmd->args, QmpArg, i);
        JsonNode *node = json_object_get_member(args, arg->name);

        if (!node) {
            if (!arg->optional) {
                error_setg(errp, "Parameter '%s' is missing", arg->name);
                return false;
            }
            continue;
        }
        if (!qmp_arg_type_ok(node, arg->type)) {
            error_setg(errp, "Invalid parameter type for '%s', expected: %s",
                       arg->name, qmp_arg_type_name(arg->type));
            return false;
        }
    }
    if (cmd->allow_extra) {
        return true;
    }
    members = json_object_get_members(args);
    for (l = members; l; l = l->next) {
        bool known = false;

        for (i = 0; i < cmd->args->len && !known; i++) {
            known = !strcmp(g_array_index(cmd->args, QmpArg, i).name,
                            (const char *)l->data);
        }
        if (!known) {
            error_setg(errp, "Parameter '%s' is unexpected",
                       (const char *)l->data);
            return false;
        }
    }
    return true;
}

/* ---- helpers ---- */

JsonNode *qmp_node_new_object(JsonObject *obj)
{
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);

    json_node_take_object(node, obj);
    return node;
}

JsonNode *qmp_node_new_string(const char *s)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, s);
    return node;
}

static JsonObject *qmp_error_object(ErrorClass cls, const char *desc)
{
    JsonObject *reply = json_object_new();
    JsonObject *err = json_object_new();

    json_object_set_string_member(err, "class", error_class_name(cls));
    json_object_set_string_member(err, "desc", desc);
    json_object_set_object_member(reply, "error", err);
    return reply;
}

/* ---- dispatch ---- */

static void qmp_capabilities(Monitor *mon, JsonObject *args, Error **errp)
{
    JsonArray *enable;
    guint i;

    if (json_object_has_member(args, "enable")) {
        enable = json_object_get_array_member(args, "enable");
        for (i = 0; i < json_array_get_length(enable); i++) {
            JsonNode *n = json_array_get_element(enable, i);
            const char *cap = JSON_NODE_HOLDS_VALUE(n) &&
                json_node_get_value_type(n) == G_TYPE_STRING ?
                json_node_get_string(n) : "?";
            error_setg(errp, "Capability '%s' not available", cap);
            return;
        }
    }
    if (mon) {
        mon->negotiated = true;
    }
}

static void qmp_caps_dummy(JsonObject *args, JsonNode **ret, Error **errp)
{
    /* Handled by the dispatcher: it needs the monitor. */
}

static JsonObject *qmp_dispatch_node(Monitor *mon, JsonNode *req_node)
{
    JsonObject *req, *args, *reply;
    g_autoptr(JsonObject) empty_args = NULL;
    g_autoptr(GList) members = NULL;
    JsonNode *id = NULL, *exec, *argn;
    const char *name;
    QmpCommand *cmd;
    Error *err = NULL;
    JsonNode *ret = NULL;
    GList *l;

    if (!JSON_NODE_HOLDS_OBJECT(req_node)) {
        return qmp_error_object(ERROR_CLASS_GENERIC_ERROR,
                                "QMP input must be a JSON object");
    }
    req = json_node_get_object(req_node);
    id = json_object_get_member(req, "id");

    members = json_object_get_members(req);
    for (l = members; l; l = l->next) {
        const char *m = l->data;
        if (strcmp(m, "execute") && strcmp(m, "arguments") &&
            strcmp(m, "id")) {
            g_autofree char *desc =
                g_strdup_printf("QMP input member '%s' is unexpected", m);
            reply = qmp_error_object(ERROR_CLASS_GENERIC_ERROR, desc);
            goto out;
        }
    }
    exec = json_object_get_member(req, "execute");
    if (!exec) {
        reply = qmp_error_object(ERROR_CLASS_GENERIC_ERROR,
                                 "QMP input lacks member 'execute'");
        goto out;
    }
    if (!JSON_NODE_HOLDS_VALUE(exec) ||
        json_node_get_value_type(exec) != G_TYPE_STRING) {
        reply = qmp_error_object(ERROR_CLASS_GENERIC_ERROR,
                                 "QMP input member 'execute' must be a string");
        goto out;
    }
    name = json_node_get_string(exec);
    argn = json_object_get_member(req, "arguments");
    if (argn && !JSON_NODE_HOLDS_OBJECT(argn)) {
        reply = qmp_error_object(ERROR_CLASS_GENERIC_ERROR,
            "QMP input member 'arguments' must be an object");
        goto out;
    }
    if (argn) {
        args = json_node_get_object(argn);
    } else {
        empty_args = json_object_new();
        args = empty_args;
    }

    if (mon && !mon->negotiated && strcmp(name, "qmp_capabilities")) {
        reply = qmp_error_object(ERROR_CLASS_COMMAND_NOT_FOUND,
            "Expecting capabilities negotiation with 'qmp_capabilities'");
        goto out;
    }
    if ((!mon || mon->negotiated) && !strcmp(name, "qmp_capabilities")) {
        reply = qmp_error_object(ERROR_CLASS_COMMAND_NOT_FOUND,
            "Capabilities negotiation is already complete, command ignored");
        goto out;
    }
    cmd = qmp_commands ? g_hash_table_lookup(qmp_commands, name) : NULL;
    if (!cmd) {
        g_autofree char *desc =
            g_strdup_printf("The command %s has not been found", name);
        reply = qmp_error_object(ERROR_CLASS_COMMAND_NOT_FOUND, desc);
        goto out;
    }
    trace_qmp_dispatch(name);
    if (cmd->check_args && !qmp_check_args(cmd, args, &err)) {
        goto error;
    }
    if (!strcmp(name, "qmp_capabilities")) {
        qmp_capabilities(mon, args, &err);
    } else {
        cmd->fn(args, &ret, &err);
    }
error:
    if (err) {
        reply = qmp_error_object(error_get_class(err),
                                 error_get_pretty(err));
        error_free(err);
        if (ret) {
            json_node_unref(ret);
        }
        goto out;
    }
    reply = json_object_new();
    if (!ret) {
        ret = qmp_node_new_object(json_object_new());
    }
    json_object_set_member(reply, "return", ret);
out:
    if (id) {
        json_object_set_member(reply, "id", json_node_copy(id));
    }
    return reply;
}

/* ---- wire ---- */

static void monitor_send_object(Monitor *mon, JsonObject *obj)
{
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) node = qmp_node_new_object(json_object_ref(obj));
    g_autofree char *text = NULL;
    g_autofree char *line = NULL;

    json_generator_set_pretty(gen, mon->pretty);
    json_generator_set_root(gen, node);
    text = json_generator_to_data(gen, NULL);
    line = g_strconcat(text, "\r\n", NULL);
    qemu_chr_fe_write_all(&mon->be, (const uint8_t *)line, strlen(line));
}

static void monitor_send_greeting(Monitor *mon)
{
    g_autoptr(JsonObject) greeting = json_object_new();
    JsonObject *qmp = json_object_new();
    JsonObject *version = json_object_new();
    JsonObject *qemu = json_object_new();

    json_object_set_int_member(qemu, "major", 8);
    json_object_set_int_member(qemu, "minor", 2);
    json_object_set_int_member(qemu, "micro", 0);
    json_object_set_object_member(version, "qemu", qemu);
    json_object_set_string_member(version, "package",
                                  "Conduit " CONDUIT_VERSION);
    json_object_set_object_member(qmp, "version", version);
    json_object_set_array_member(qmp, "capabilities", json_array_new());
    json_object_set_object_member(greeting, "QMP", qmp);
    monitor_send_object(mon, greeting);
}

static void monitor_reset_parser(Monitor *mon)
{
    g_string_truncate(mon->inbuf, 0);
    mon->depth = 0;
    mon->in_string = false;
    mon->escape = false;
    mon->in_scalar = false;
    mon->discarding = false;
}

static void monitor_reply_error(Monitor *mon, const char *desc)
{
    g_autoptr(JsonObject) reply =
        qmp_error_object(ERROR_CLASS_GENERIC_ERROR, desc);

    monitor_send_object(mon, reply);
}

/* The monitor whose command runs now (getfd takes its socket's fd). */
static Monitor *monitor_cur;

static void monitor_handle_message(Monitor *mon)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) gerr = NULL;
    g_autoptr(JsonObject) reply = NULL;
    g_autofree char *text = g_strndup(mon->inbuf->str, mon->inbuf->len);

    monitor_reset_parser(mon);
    if (!json_parser_load_from_data(parser, text, -1, &gerr)) {
        g_autofree char *desc =
            g_strdup_printf("JSON parse error, %s", gerr->message);
        monitor_reply_error(mon, desc);
        return;
    }
    if (!json_parser_get_root(parser)) {
        monitor_reply_error(mon, "JSON parse error, empty input");
        return;
    }
    monitor_cur = mon;
    reply = qmp_dispatch_node(mon, json_parser_get_root(parser));
    monitor_cur = NULL;
    monitor_send_object(mon, reply);
}

/* Feeds one byte to the value scanner; true when a value is complete. */
static bool monitor_scan_byte(Monitor *mon, char c, bool *reprocess)
{
    *reprocess = false;
    if (mon->in_string) {
        g_string_append_c(mon->inbuf, c);
        if (mon->escape) {
            mon->escape = false;
        } else if (c == '\\') {
            mon->escape = true;
        } else if (c == '"') {
            mon->in_string = false;
            return mon->depth == 0;
        }
        return false;
    }
    if (mon->in_scalar) {
        /* (c && ...): strchr() would match the terminating NUL. */
        if (g_ascii_isspace(c) || (c && strchr("{}[]\"", c))) {
            *reprocess = !g_ascii_isspace(c);
            return true;
        }
        g_string_append_c(mon->inbuf, c);
        return false;
    }
    if (mon->depth == 0 && g_ascii_isspace(c)) {
        return false;
    }
    g_string_append_c(mon->inbuf, c);
    switch (c) {
    case '"':
        mon->in_string = true;
        return false;
    case '{':
    case '[':
        mon->depth++;
        return false;
    case '}':
    case ']':
        /* A stray closer at top level is a complete (bad) value too. */
        if (mon->depth > 0) {
            mon->depth--;
        }
        return mon->depth == 0;
    default:
        if (mon->depth == 0) {
            mon->in_scalar = true;
        }
        return false;
    }
}

static int monitor_can_read(void *opaque)
{
    return 4096;
}

static void monitor_read(void *opaque, const uint8_t *buf, int size)
{
    Monitor *mon = opaque;
    int i;

    for (i = 0; i < size; i++) {
        bool reprocess;

        if (mon->discarding) {
            mon->discarding = buf[i] != '\n';
            continue;
        }
        if (monitor_scan_byte(mon, buf[i], &reprocess)) {
            monitor_handle_message(mon);
            if (reprocess) {
                i--;
            }
            continue;
        }
        if (mon->depth > QMP_MAX_DEPTH || mon->inbuf->len > QMP_MAX_MESSAGE) {
            /* The rest of that value would only produce more errors. */
            monitor_reset_parser(mon);
            mon->discarding = true;
            monitor_reply_error(mon, "JSON parse error, "
                                "message too large or nested too deeply");
        }
    }
}

static void monitor_event(void *opaque, QEMUChrEvent event)
{
    Monitor *mon = opaque;

    monitor_reset_parser(mon);
    mon->negotiated = false;
    if (event == CHR_EVENT_OPENED) {
        monitor_send_greeting(mon);
    }
}

bool monitor_init_qmp(Chardev *chr, Error **errp)
{
    Monitor *mon;

    if (!chr) {
        error_setg(errp, "QMP monitor needs a character device");
        return false;
    }
    mon = g_new0(Monitor, 1);
    if (!qemu_chr_fe_init(&mon->be, chr, errp)) {
        g_free(mon);
        return false;
    }
    mon->inbuf = g_string_new(NULL);
    monitors = g_list_append(monitors, mon);
    qemu_chr_fe_set_handlers(&mon->be, monitor_can_read, monitor_read,
                             monitor_event, mon);
    return true;
}

bool monitor_init_opts(QemuOpts *opts, Error **errp)
{
    const char *chardev = qemu_opt_get(opts, "chardev");
    const char *mode = qemu_opt_get(opts, "mode");
    Error *local_err = NULL;
    bool pretty;
    Chardev *chr;

    if (!chardev) {
        error_setg(errp, "Parameter 'chardev' is missing");
        return false;
    }
    if (mode && strcmp(mode, "control")) {
        error_setg(errp, "monitor mode '%s' is not supported "
                   "(only mode=control, QMP)", mode);
        return false;
    }
    pretty = qemu_opt_get_bool(opts, "pretty", false, &local_err);
    if (local_err) {
        error_propagate(errp, local_err);
        return false;
    }
    chr = qemu_chr_find(chardev);
    if (!chr) {
        error_setg(errp, "chardev \"%s\" not found", chardev);
        return false;
    }
    if (!monitor_init_qmp(chr, errp)) {
        return false;
    }
    ((Monitor *)g_list_last(monitors)->data)->pretty = pretty;
    return true;
}

void monitor_cleanup(void)
{
    GList *l;

    for (l = monitors; l; l = l->next) {
        Monitor *mon = l->data;

        qemu_chr_fe_deinit(&mon->be, false);
        g_string_free(mon->inbuf, TRUE);
        g_free(mon);
    }
    g_list_free(monitors);
    monitors = NULL;
}

void qapi_event_send(const char *event, JsonObject *data)
{
    g_autoptr(JsonObject) msg = json_object_new();
    JsonObject *ts = json_object_new();
    int64_t now_us = qemu_clock_get_host_ns() / SCALE_US;
    GList *l;

    trace_qapi_event_send(event);
    json_object_set_int_member(ts, "seconds", now_us / 1000000);
    json_object_set_int_member(ts, "microseconds", now_us % 1000000);
    json_object_set_string_member(msg, "event", event);
    if (data) {
        json_object_set_object_member(msg, "data", data);
    }
    json_object_set_object_member(msg, "timestamp", ts);
    for (l = monitors; l; l = l->next) {
        Monitor *mon = l->data;

        if (mon->negotiated) {
            monitor_send_object(mon, msg);
        }
    }
}

/* query-commands lives here: it walks the command table. */
static void qmp_query_commands(JsonObject *args, JsonNode **ret,
                               Error **errp)
{
    JsonArray *list = json_array_new();
    g_autoptr(GList) names = NULL;
    JsonNode *node;
    GList *l;

    if (qmp_commands) {
        names = g_list_sort(g_hash_table_get_keys(qmp_commands),
                            (GCompareFunc)strcmp);
    }
    for (l = names; l; l = l->next) {
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "name", l->data);
        json_array_add_object_element(list, o);
    }
    node = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(node, list);
    *ret = node;
}

/*
 * Named file descriptors (getfd/closefd): a client sends an fd with the
 * getfd command (SCM_RIGHTS on a socket monitor) and names it; netdev_add
 * fd=NAME takes it (libvirt's NIC hot-plug).
 */
static GHashTable *monitor_fds;

static void monitor_fds_init(void)
{
    if (!monitor_fds) {
        monitor_fds = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                            NULL);
    }
}

static void qmp_getfd(JsonObject *args, JsonNode **ret, Error **errp)
{
    const char *name = json_object_get_string_member(args, "fdname");
    gpointer old;
    int fd;

    fd = monitor_cur ? qemu_chr_fe_take_msgfd(&monitor_cur->be) : -1;
    if (fd < 0) {
        error_setg(errp, "No file descriptor supplied via SCM_RIGHTS");
        error_append_hint(errp, "getfd needs a socket monitor and the fd "
                          "sent with the command.\n");
        return;
    }
    if (!*name || g_ascii_isdigit(name[0])) {
        close(fd);
        error_setg(errp, "Parameter 'fdname' may not start with a digit "
                   "or be empty");
        return;
    }
    /*
     * The kernel just gave us this number, so whatever claimed it before
     * has closed it: that claim is stale and must not refuse (or abort)
     * the backend that takes this fd by its name.
     */
    qemu_fd_release(fd);
    monitor_fds_init();
    if (g_hash_table_lookup_extended(monitor_fds, name, NULL, &old)) {
        close(GPOINTER_TO_INT(old));
    }
    g_hash_table_insert(monitor_fds, g_strdup(name), GINT_TO_POINTER(fd));
}

static void qmp_closefd(JsonObject *args, JsonNode **ret, Error **errp)
{
    const char *name = json_object_get_string_member(args, "fdname");
    gpointer fd;

    if (!monitor_fds ||
        !g_hash_table_lookup_extended(monitor_fds, name, NULL, &fd)) {
        error_setg(errp, "File descriptor named '%s' not found", name);
        return;
    }
    close(GPOINTER_TO_INT(fd));
    g_hash_table_remove(monitor_fds, name);
}

int monitor_fd_param(const char *str, Error **errp)
{
    gpointer fd;
    uint64_t v;

    if (g_ascii_isdigit(str[0])) {
        if (!qemu_strtou64(str, &v, NULL) || v > INT_MAX ||
            fcntl((int)v, F_GETFD) < 0) {
            error_setg(errp, "expects an open file descriptor, got '%s'",
                       str);
            return -1;
        }
        /* Only an fd passed to us, and that no backend owns yet. */
        if (!qemu_fd_check_number(v, errp)) {
            return -1;
        }
        return v;
    }
    if (!monitor_fds ||
        !g_hash_table_lookup_extended(monitor_fds, str, NULL, &fd)) {
        error_setg(errp, "File descriptor named '%s' has not been found",
                   str);
        error_append_hint(errp, "Pass it first with getfd (fdname=%s).\n",
                          str);
        return -1;
    }
    g_hash_table_remove(monitor_fds, str);
    return GPOINTER_TO_INT(fd);
}

static void __attribute__((constructor)) monitor_register_commands(void)
{
    qmp_register_command_args("qmp_capabilities", qmp_caps_dummy,
                              "*enable:a", QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("query-commands", qmp_query_commands, "",
                              QCO_ALLOW_PRECONFIG);
    qmp_register_command_args("getfd", qmp_getfd, "fdname:s", 0);
    qmp_register_command_args("closefd", qmp_closefd, "fdname:s", 0);
}
