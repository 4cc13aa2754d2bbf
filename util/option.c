/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option lists ("key=val,key=val" and JSON objects) and number parsers.
 */
#include "qemu/osdep.h"
#include "qemu/option.h"
#include "qapi/error.h"

typedef struct QemuOpt {
    char *key;
    char *value;
    QemuOptKind kind;
} QemuOpt;

struct QemuOpts {
    char *id;
    bool has_help;
    GPtrArray *items;           /* QemuOpt * */
};

/* ---- number parsers ---- */

bool qemu_strtobool(const char *str, bool *result, Error **errp)
{
    static const char *const yes[] = { "on", "yes", "true", "y" };
    static const char *const no[] = { "off", "no", "false", "n" };

    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (!g_ascii_strcasecmp(str, yes[i])) {
            *result = true;
            return true;
        }
        if (!g_ascii_strcasecmp(str, no[i])) {
            *result = false;
            return true;
        }
    }
    error_setg(errp, "'%s' is not a boolean (use 'on' or 'off')", str);
    return false;
}

/* Strict strtoull: rejects empty, signs, trailing garbage and overflow. */
static bool parse_u64(const char *str, uint64_t *result, const char **end)
{
    char *ep;

    if (!g_ascii_isdigit(*str)) {
        return false;
    }
    errno = 0;
    *result = strtoull(str, &ep, 0);
    if (errno) {
        return false;
    }
    if (end) {
        *end = ep;
        return true;
    }
    return *ep == '\0';
}

bool qemu_strtou64(const char *str, uint64_t *result, Error **errp)
{
    if (!str || !parse_u64(str, result, NULL)) {
        error_setg(errp, "'%s' is not a valid unsigned number",
                   str ? str : "");
        return false;
    }
    return true;
}

bool qemu_strtoi64(const char *str, int64_t *result, Error **errp)
{
    bool neg = false;
    const char *p = str;
    uint64_t mag;

    if (p && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    if (!p || !parse_u64(p, &mag, NULL)) {
        error_setg(errp, "'%s' is not a valid number", str ? str : "");
        return false;
    }
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > INT64_MAX) {
        error_setg(errp, "'%s' is out of range for a 64-bit integer", str);
        return false;
    }
    *result = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return true;
}

static int size_suffix_shift(char c)
{
    switch (c) {
    case 'b': case 'B': return 0;
    case 'k': case 'K': return 10;
    case 'm': case 'M': return 20;
    case 'g': case 'G': return 30;
    case 't': case 'T': return 40;
    case 'p': case 'P': return 50;
    case 'e': case 'E': return 60;
    default: return -1;
    }
}

static bool do_strtosz(const char *str, uint64_t *result, int default_shift,
                       Error **errp)
{
    const char *end;
    uint64_t v;
    int shift = default_shift;

    if (!str || !parse_u64(str, &v, &end)) {
        goto bad;
    }
    if (*end) {
        shift = size_suffix_shift(*end);
        if (shift < 0 || end[1]) {
            goto bad;
        }
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        error_setg(errp, "size '%s' is too large", str);
        return false;
    }
    *result = v << shift;
    return true;

bad:
    error_setg(errp, "'%s' is not a valid size (use a number with an "
               "optional k, M, G or T suffix)", str ? str : "");
    return false;
}

bool qemu_strtosz(const char *str, uint64_t *result, Error **errp)
{
    return do_strtosz(str, result, 0, errp);
}

bool qemu_strtosz_MiB(const char *str, uint64_t *result, Error **errp)
{
    return do_strtosz(str, result, 20, errp);
}

/* ---- option lists ---- */

static void qemu_opt_free(gpointer p)
{
    QemuOpt *opt = p;

    g_free(opt->key);
    g_free(opt->value);
    g_free(opt);
}

QemuOpts *qemu_opts_new(const char *id)
{
    QemuOpts *opts = g_new0(QemuOpts, 1);

    opts->id = g_strdup(id);
    opts->items = g_ptr_array_new_with_free_func(qemu_opt_free);
    return opts;
}

void qemu_opts_free(QemuOpts *opts)
{
    if (!opts) {
        return;
    }
    g_ptr_array_unref(opts->items);
    g_free(opts->id);
    g_free(opts);
}

const char *qemu_opts_id(const QemuOpts *opts)
{
    return opts->id;
}

void qemu_opts_set_id(QemuOpts *opts, const char *id)
{
    g_free(opts->id);
    opts->id = g_strdup(id);
}

bool qemu_opts_has_help(const QemuOpts *opts)
{
    return opts->has_help;
}

size_t qemu_opts_count(const QemuOpts *opts)
{
    return opts->items->len;
}

const char *qemu_opts_key(const QemuOpts *opts, size_t i)
{
    g_assert(i < opts->items->len);
    return ((QemuOpt *)g_ptr_array_index(opts->items, i))->key;
}

const char *qemu_opts_value(const QemuOpts *opts, size_t i)
{
    g_assert(i < opts->items->len);
    return ((QemuOpt *)g_ptr_array_index(opts->items, i))->value;
}

static void qemu_opt_set_kind(QemuOpts *opts, const char *key,
                              const char *value, QemuOptKind kind)
{
    QemuOpt *opt = g_new(QemuOpt, 1);

    opt->key = g_strdup(key);
    opt->value = g_strdup(value);
    opt->kind = kind;
    g_ptr_array_add(opts->items, opt);
}

void qemu_opt_set(QemuOpts *opts, const char *key, const char *value)
{
    qemu_opt_set_kind(opts, key, value, QEMU_OPT_TEXT);
}

QemuOptKind qemu_opts_kind(const QemuOpts *opts, size_t i)
{
    g_assert(i < opts->items->len);
    return ((QemuOpt *)g_ptr_array_index(opts->items, i))->kind;
}

/* What a declared type takes from JSON; the wording of the error. */
static bool kind_fits(QemuOptKind kind, const char *type, const char **what)
{
    static const char *const ints[] = {
        "int", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
        "int32", "int64", "size", NULL,
    };

    if (!strcmp(type, "bool")) {
        *what = "a boolean";
        return kind == QEMU_OPT_JSON_BOOL;
    }
    if (g_strv_contains(ints, type)) {
        *what = "an integer";
        return kind == QEMU_OPT_JSON_INT;
    }
    if (!strcmp(type, "number")) {
        *what = "a number";
        return kind == QEMU_OPT_JSON_INT || kind == QEMU_OPT_JSON_NUMBER;
    }
    if (!strcmp(type, "str-or-int")) {
        *what = "a string or an integer";
        return kind == QEMU_OPT_JSON_STRING || kind == QEMU_OPT_JSON_INT;
    }
    *what = "a string";
    return kind == QEMU_OPT_JSON_STRING;
}

bool qemu_opt_kind_check(const char *key, QemuOptKind kind, const char *type,
                         Error **errp)
{
    const char *what;

    /* Text (the command line) may spell any type; JSON must match. */
    if (kind == QEMU_OPT_TEXT || kind_fits(kind, type, &what)) {
        return true;
    }
    if (!strcmp(type, "str-or-int")) {
        type = "str";
    }
    error_setg(errp, "Parameter '%s' expects %s (%s)", key, what, type);
    return false;
}

bool qemu_opts_check_types(const QemuOpts *opts, const QemuOptType *types,
                           const char *prefix, Error **errp)
{
    size_t plen = prefix ? strlen(prefix) : 0;

    for (guint i = 0; i < opts->items->len; i++) {
        QemuOpt *opt = g_ptr_array_index(opts->items, i);
        const char *key = opt->key;
        const QemuOptType *t;

        while (plen && !strncmp(key, prefix, plen) && key[plen]) {
            key += plen;
        }
        for (t = types; t->key && strcmp(t->key, key); t++) {
            continue;
        }
        if (opt->kind == QEMU_OPT_JSON_OBJECT && !(t->key && t->type &&
                                                   !strcmp(t->type,
                                                           "object"))) {
            error_setg(errp, "Parameter '%s' expects %s", opt->key,
                       t->key ? "a value, not an object" : "a scalar value");
            return false;
        }
        if (t->key && t->type && strcmp(t->type, "object") &&
            !qemu_opt_kind_check(opt->key, opt->kind, t->type, errp)) {
            return false;
        }
    }
    return true;
}

static QemuOpt *find_last(const QemuOpts *opts, const char *key)
{
    for (guint i = opts->items->len; i > 0; i--) {
        QemuOpt *opt = g_ptr_array_index(opts->items, i - 1);
        if (!strcmp(opt->key, key)) {
            return opt;
        }
    }
    return NULL;
}

const char *qemu_opt_get(const QemuOpts *opts, const char *key)
{
    QemuOpt *opt = find_last(opts, key);

    return opt ? opt->value : NULL;
}

bool qemu_opt_has(const QemuOpts *opts, const char *key)
{
    return find_last(opts, key) != NULL;
}

int qemu_opt_del(QemuOpts *opts, const char *key)
{
    int removed = 0;

    for (guint i = opts->items->len; i > 0; i--) {
        QemuOpt *opt = g_ptr_array_index(opts->items, i - 1);
        if (!strcmp(opt->key, key)) {
            g_ptr_array_remove_index(opts->items, i - 1);
            removed++;
        }
    }
    return removed;
}

char *qemu_opt_steal(QemuOpts *opts, const char *key)
{
    char *value = g_strdup(qemu_opt_get(opts, key));

    qemu_opt_del(opts, key);
    return value;
}

bool qemu_opt_get_bool(const QemuOpts *opts, const char *key, bool defval,
                       Error **errp)
{
    const char *value = qemu_opt_get(opts, key);
    bool result;

    if (!value) {
        return defval;
    }
    if (!qemu_strtobool(value, &result, NULL)) {
        error_setg(errp, "Parameter '%s' expects 'on' or 'off'", key);
        return defval;
    }
    return result;
}

/* Parses key's value with parse(); "expects" names the form in the error. */
static uint64_t qemu_opt_get_u64(const QemuOpts *opts, const char *key,
                                 uint64_t defval,
                                 bool (*parse)(const char *, uint64_t *,
                                               Error **),
                                 const char *expects, Error **errp)
{
    const char *value = qemu_opt_get(opts, key);
    uint64_t result;

    if (!value) {
        return defval;
    }
    if (!parse(value, &result, NULL)) {
        error_setg(errp, "Parameter '%s' expects %s", key, expects);
        return defval;
    }
    return result;
}

uint64_t qemu_opt_get_number(const QemuOpts *opts, const char *key,
                             uint64_t defval, Error **errp)
{
    return qemu_opt_get_u64(opts, key, defval, qemu_strtou64, "a number",
                            errp);
}

uint64_t qemu_opt_get_size(const QemuOpts *opts, const char *key,
                           uint64_t defval, Error **errp)
{
    return qemu_opt_get_u64(opts, key, defval, qemu_strtosz,
                            "a size value (like 64M, 1G or 4096)", errp);
}

bool qemu_opt_foreach(const QemuOpts *opts, QemuOptsLoopFunc fn,
                      void *opaque, Error **errp)
{
    for (guint i = 0; i < opts->items->len; i++) {
        QemuOpt *opt = g_ptr_array_index(opts->items, i);
        if (!fn(opaque, opt->key, opt->value, errp)) {
            return false;
        }
    }
    return true;
}

static void append_escaped(GString *out, const char *s)
{
    for (; *s; s++) {
        if (*s == ',') {
            g_string_append_c(out, ',');
        }
        g_string_append_c(out, *s);
    }
}

char *qemu_opts_to_string(const QemuOpts *opts)
{
    GString *out = g_string_new(NULL);

    if (opts->id) {
        g_string_append(out, "id=");
        append_escaped(out, opts->id);
    }
    for (guint i = 0; i < opts->items->len; i++) {
        QemuOpt *opt = g_ptr_array_index(opts->items, i);
        if (out->len) {
            g_string_append_c(out, ',');
        }
        g_string_append(out, opt->key);
        g_string_append_c(out, '=');
        append_escaped(out, opt->value);
    }
    return g_string_free(out, FALSE);
}

/*
 * Reads one item up to an unescaped ',' (or the end), undoubling ",,".
 * Returns the position after the separator.
 */
static const char *get_item(const char *p, GString *item)
{
    g_string_truncate(item, 0);
    while (*p) {
        if (*p == ',') {
            if (p[1] != ',') {
                return p + 1;
            }
            p++;
        }
        g_string_append_c(item, *p++);
    }
    return p;
}

static bool is_help(const char *s)
{
    return !strcmp(s, "help") || !strcmp(s, "?");
}

static bool opts_add(QemuOpts *opts, const char *key, const char *value,
                     Error **errp)
{
    if (!*key) {
        error_setg(errp, "Invalid parameter ''");
        return false;
    }
    if (!strcmp(key, "id")) {
        if (opts->id) {
            error_setg(errp, "Parameter 'id' given more than once");
            return false;
        }
        opts->id = g_strdup(value);
        return true;
    }
    qemu_opt_set(opts, key, value);
    return true;
}

QemuOpts *qemu_opts_parse(const char *params, const char *implied_key,
                          Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_new(NULL);
    g_autoptr(GString) item = g_string_new(NULL);
    const char *p = params ? params : "";
    bool first = true;

    while (*p || first) {
        const char *eq;

        p = get_item(p, item);
        eq = strchr(item->str, '=');
        if (!eq && is_help(item->str)) {
            opts->has_help = true;
        } else if (!eq && first && implied_key) {
            if (item->len) {
                qemu_opt_set(opts, implied_key, item->str);
            }
        } else if (!eq) {
            if (item->len && !opts_add(opts, item->str, "on", errp)) {
                return NULL;
            }
        } else {
            g_autofree char *key = g_strndup(item->str, eq - item->str);
            if (!opts_add(opts, key, eq + 1, errp)) {
                return NULL;
            }
        }
        first = false;
    }
    return g_steal_pointer(&opts);
}

static bool flatten_json(QemuOpts *opts, const char *prefix, JsonObject *obj,
                         Error **errp);

static bool flatten_member(QemuOpts *opts, const char *key, JsonNode *node,
                           Error **errp)
{
    switch (json_node_get_node_type(node)) {
    case JSON_NODE_OBJECT:
        if (!json_object_get_size(json_node_get_object(node))) {
            /* {}: kept, so that a scalar given {} is refused by type. */
            qemu_opt_set_kind(opts, key, "", QEMU_OPT_JSON_OBJECT);
            return true;
        }
        return flatten_json(opts, key, json_node_get_object(node), errp);
    case JSON_NODE_VALUE: {
        GType t = json_node_get_value_type(node);
        g_autofree char *str = NULL;
        QemuOptKind kind;

        if (t == G_TYPE_BOOLEAN) {
            str = g_strdup(json_node_get_boolean(node) ? "on" : "off");
            kind = QEMU_OPT_JSON_BOOL;
        } else if (t == G_TYPE_INT64) {
            str = g_strdup_printf("%" PRId64, json_node_get_int(node));
            kind = QEMU_OPT_JSON_INT;
        } else if (t == G_TYPE_DOUBLE) {
            str = g_strdup_printf("%.17g", json_node_get_double(node));
            kind = QEMU_OPT_JSON_NUMBER;
        } else if (t == G_TYPE_STRING) {
            str = g_strdup(json_node_get_string(node));
            kind = QEMU_OPT_JSON_STRING;
        } else {
            error_setg(errp, "Parameter '%s' has an unsupported type", key);
            return false;
        }
        if (!strcmp(key, "id")) {
            if (t != G_TYPE_STRING) {
                error_setg(errp, "Parameter 'id' expects a string");
                return false;
            }
            qemu_opts_set_id(opts, str);
        } else {
            qemu_opt_set_kind(opts, key, str, kind);
        }
        return true;
    }
    case JSON_NODE_ARRAY:
        error_setg(errp, "Parameter '%s': lists are not supported", key);
        return false;
    case JSON_NODE_NULL:
        /*
         * Only a BlockdevRefOrNull takes null (blockdev's "backing": null,
         * no backing file), which the block layer reads as "".
         */
        if (!strcmp(key, "backing") || g_str_has_suffix(key, ".backing")) {
            qemu_opt_set(opts, key, "");
            return true;
        }
        /* fall through */
    default:
        error_setg(errp, "Parameter '%s' must not be null", key);
        return false;
    }
}

static bool flatten_json(QemuOpts *opts, const char *prefix, JsonObject *obj,
                         Error **errp)
{
    g_autoptr(GList) members = json_object_get_members(obj);

    for (GList *l = members; l; l = l->next) {
        const char *name = l->data;
        g_autofree char *key = prefix ? g_strdup_printf("%s.%s", prefix, name)
                                      : g_strdup(name);

        if (!flatten_member(opts, key, json_object_get_member(obj, name),
                            errp)) {
            return false;
        }
    }
    return true;
}

QemuOpts *qemu_opts_from_json_object(JsonObject *obj, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_new(NULL);

    if (!flatten_json(opts, NULL, obj, errp)) {
        return NULL;
    }
    return g_steal_pointer(&opts);
}

QemuOpts *qemu_opts_from_json(const char *json, Error **errp)
{
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) gerr = NULL;
    JsonNode *root;

    if (!json_parser_load_from_data(parser, json, -1, &gerr)) {
        error_setg(errp, "JSON parse error: %s", gerr->message);
        return NULL;
    }
    root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        error_setg(errp, "Expected a JSON object");
        return NULL;
    }
    return qemu_opts_from_json_object(json_node_get_object(root), errp);
}
