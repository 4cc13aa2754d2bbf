/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Typed device properties: parsing, printing, defaults, and the bridge to
 * QOM properties.
 */
#include "qemu/osdep.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qemu/option.h"
#include "qemu/error-report.h"

const char *const OnOffAuto_lookup[] = { "auto", "on", "off", NULL };

static void *prop_field(DeviceState *dev, const Property *prop)
{
    return (char *)dev + prop->offset;
}

/* ---- bool ---- */

static bool parse_bool(const Property *prop, void *field, const char *str,
                       Error **errp)
{
    if (!qemu_strtobool(str, field, NULL)) {
        error_setg(errp, "expected 'on' or 'off'");
        return false;
    }
    return true;
}

static char *print_bool(const Property *prop, const void *field)
{
    return g_strdup(*(const bool *)field ? "on" : "off");
}

static void default_bool(const Property *prop, void *field)
{
    *(bool *)field = prop->defval.u != 0;
}

static JsonNode *json_bool(const Property *prop, const void *field)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_boolean(node, *(const bool *)field);
    return node;
}

const PropertyInfo qdev_prop_bool = {
    .type = "bool",
    .description = "on/off",
    .parse = parse_bool,
    .print = print_bool,
    .set_default = default_bool,
    .get_json = json_bool,
};

/* ---- integers ---- */

static bool parse_unsigned(const char *str, uint64_t max, const char *type,
                           uint64_t *out, Error **errp)
{
    if (!qemu_strtou64(str, out, NULL) || *out > max) {
        error_setg(errp, "expected a %s (0 to %" PRIu64 ")", type, max);
        return false;
    }
    return true;
}

static bool parse_signed(const char *str, int64_t min, int64_t max,
                         const char *type, int64_t *out, Error **errp)
{
    if (!qemu_strtoi64(str, out, NULL) || *out < min || *out > max) {
        error_setg(errp, "expected an %s (%" PRId64 " to %" PRId64 ")",
                   type, min, max);
        return false;
    }
    return true;
}

static bool parse_uint8(const Property *prop, void *field, const char *str,
                        Error **errp)
{
    uint64_t v;

    if (!parse_unsigned(str, UINT8_MAX, "uint8", &v, errp)) {
        return false;
    }
    *(uint8_t *)field = v;
    return true;
}

static bool parse_uint16(const Property *prop, void *field, const char *str,
                         Error **errp)
{
    uint64_t v;

    if (!parse_unsigned(str, UINT16_MAX, "uint16", &v, errp)) {
        return false;
    }
    *(uint16_t *)field = v;
    return true;
}

static bool parse_uint32(const Property *prop, void *field, const char *str,
                         Error **errp)
{
    uint64_t v;

    if (!parse_unsigned(str, UINT32_MAX, "uint32", &v, errp)) {
        return false;
    }
    *(uint32_t *)field = v;
    return true;
}

static bool parse_uint64(const Property *prop, void *field, const char *str,
                         Error **errp)
{
    uint64_t v;

    if (!parse_unsigned(str, UINT64_MAX, "uint64", &v, errp)) {
        return false;
    }
    *(uint64_t *)field = v;
    return true;
}

static bool parse_int32(const Property *prop, void *field, const char *str,
                        Error **errp)
{
    int64_t v;

    if (!parse_signed(str, INT32_MIN, INT32_MAX, "int32", &v, errp)) {
        return false;
    }
    *(int32_t *)field = v;
    return true;
}

static bool parse_int64(const Property *prop, void *field, const char *str,
                        Error **errp)
{
    int64_t v;

    if (!parse_signed(str, INT64_MIN, INT64_MAX, "int64", &v, errp)) {
        return false;
    }
    *(int64_t *)field = v;
    return true;
}

static char *print_uint8(const Property *prop, const void *field)
{
    return g_strdup_printf("%u", *(const uint8_t *)field);
}

static char *print_uint16(const Property *prop, const void *field)
{
    return g_strdup_printf("%u", *(const uint16_t *)field);
}

static char *print_uint32(const Property *prop, const void *field)
{
    return g_strdup_printf("%" PRIu32, *(const uint32_t *)field);
}

static char *print_uint64(const Property *prop, const void *field)
{
    return g_strdup_printf("%" PRIu64, *(const uint64_t *)field);
}

static char *print_int32(const Property *prop, const void *field)
{
    return g_strdup_printf("%" PRId32, *(const int32_t *)field);
}

static char *print_int64(const Property *prop, const void *field)
{
    return g_strdup_printf("%" PRId64, *(const int64_t *)field);
}

static void default_uint8(const Property *prop, void *field)
{
    *(uint8_t *)field = prop->defval.u;
}

static void default_uint16(const Property *prop, void *field)
{
    *(uint16_t *)field = prop->defval.u;
}

static void default_uint32(const Property *prop, void *field)
{
    *(uint32_t *)field = prop->defval.u;
}

static void default_uint64(const Property *prop, void *field)
{
    *(uint64_t *)field = prop->defval.u;
}

static void default_int32(const Property *prop, void *field)
{
    *(int32_t *)field = prop->defval.i;
}

static void default_int64(const Property *prop, void *field)
{
    *(int64_t *)field = prop->defval.i;
}

static JsonNode *int_node(int64_t v)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_int(node, v);
    return node;
}

static JsonNode *json_uint8(const Property *prop, const void *field)
{
    return int_node(*(const uint8_t *)field);
}

static JsonNode *json_uint16(const Property *prop, const void *field)
{
    return int_node(*(const uint16_t *)field);
}

static JsonNode *json_uint32(const Property *prop, const void *field)
{
    return int_node(*(const uint32_t *)field);
}

static JsonNode *json_uint64(const Property *prop, const void *field)
{
    /* JSON integers are signed 64-bit here; larger values go as text. */
    uint64_t v = *(const uint64_t *)field;
    JsonNode *node;

    if (v <= INT64_MAX) {
        return int_node(v);
    }
    g_autofree char *text = g_strdup_printf("%" PRIu64, v);

    node = json_node_new(JSON_NODE_VALUE);
    json_node_set_string(node, text);
    return node;
}

static JsonNode *json_int32(const Property *prop, const void *field)
{
    return int_node(*(const int32_t *)field);
}

static JsonNode *json_int64(const Property *prop, const void *field)
{
    return int_node(*(const int64_t *)field);
}

const PropertyInfo qdev_prop_uint8 = {
    .type = "uint8",
    .parse = parse_uint8, .print = print_uint8,
    .set_default = default_uint8, .get_json = json_uint8,
};

const PropertyInfo qdev_prop_uint16 = {
    .type = "uint16",
    .parse = parse_uint16, .print = print_uint16,
    .set_default = default_uint16, .get_json = json_uint16,
};

const PropertyInfo qdev_prop_uint32 = {
    .type = "uint32",
    .parse = parse_uint32, .print = print_uint32,
    .set_default = default_uint32, .get_json = json_uint32,
};

const PropertyInfo qdev_prop_uint64 = {
    .type = "uint64",
    .parse = parse_uint64, .print = print_uint64,
    .set_default = default_uint64, .get_json = json_uint64,
};

const PropertyInfo qdev_prop_int32 = {
    .type = "int32",
    .parse = parse_int32, .print = print_int32,
    .set_default = default_int32, .get_json = json_int32,
};

const PropertyInfo qdev_prop_int64 = {
    .type = "int64",
    .parse = parse_int64, .print = print_int64,
    .set_default = default_int64, .get_json = json_int64,
};

/* ---- size ---- */

static bool parse_size(const Property *prop, void *field, const char *str,
                       Error **errp)
{
    if (!qemu_strtosz(str, field, NULL)) {
        error_setg(errp, "expected a size like 4096, 64k, 1M or 2G");
        return false;
    }
    return true;
}

static char *print_size(const Property *prop, const void *field)
{
    uint64_t v = *(const uint64_t *)field;
    static const char suffixes[] = "KMGTPE";
    int i = -1;

    /* Print exact multiples with a suffix, like the user would type. */
    while (v && !(v & 1023) && i < (int)sizeof(suffixes) - 2) {
        v >>= 10;
        i++;
    }
    if (i < 0) {
        return g_strdup_printf("%" PRIu64, v);
    }
    return g_strdup_printf("%" PRIu64 "%c", v, suffixes[i]);
}

const PropertyInfo qdev_prop_size = {
    .type = "size",
    .description = "bytes, with an optional k/M/G/T suffix",
    .parse = parse_size, .print = print_size,
    .set_default = default_uint64, .get_json = json_uint64,
};

/* ---- string ---- */

static bool parse_string(const Property *prop, void *field, const char *str,
                         Error **errp)
{
    char **p = field;

    g_free(*p);
    *p = g_strdup(str);
    return true;
}

static char *print_string(const Property *prop, const void *field)
{
    const char *s = *(char *const *)field;

    return g_strdup(s ? s : "");
}

static void release_string(const Property *prop, void *field)
{
    char **p = field;

    g_free(*p);
    *p = NULL;
}

const PropertyInfo qdev_prop_string = {
    .type = "str",
    .parse = parse_string, .print = print_string,
    .release = release_string,
};

/* ---- enums ---- */

static const char *const *enum_table(const Property *prop)
{
    return prop->info == &qdev_prop_on_off_auto ? OnOffAuto_lookup
                                                : prop->enum_table;
}

static bool parse_enum(const Property *prop, void *field, const char *str,
                       Error **errp)
{
    const char *const *table = enum_table(prop);
    g_autoptr(GString) names = g_string_new(NULL);

    for (int i = 0; table[i]; i++) {
        if (!strcmp(table[i], str)) {
            *(int *)field = i;
            return true;
        }
        g_string_append_printf(names, "%s'%s'", i ? ", " : "", table[i]);
    }
    error_setg(errp, "expected one of %s", names->str);
    return false;
}

static char *print_enum(const Property *prop, const void *field)
{
    const char *const *table = enum_table(prop);
    int v = *(const int *)field;

    for (int i = 0; table[i]; i++) {
        if (i == v) {
            return g_strdup(table[i]);
        }
    }
    return g_strdup_printf("%d", v);
}

static void default_enum(const Property *prop, void *field)
{
    *(int *)field = prop->defval.i;
}

QEMU_BUILD_BUG_ON(sizeof(OnOffAuto) != sizeof(int));

const PropertyInfo qdev_prop_on_off_auto = {
    .type = "OnOffAuto",
    .description = "on/off/auto",
    .parse = parse_enum, .print = print_enum, .set_default = default_enum,
};

const PropertyInfo qdev_prop_enum = {
    .type = "enum",
    .parse = parse_enum, .print = print_enum, .set_default = default_enum,
};

/* ---- PCI addresses ---- */

/* A hex number of at most max_digits, the whole of [s, end). */
static bool parse_hex_part(const char *s, const char *end, int max_digits,
                           unsigned *out)
{
    unsigned v = 0;

    /* libvirt writes each part with 0x: addr=0x1.0x2. */
    if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
    }
    if (end == s || end - s > max_digits) {
        return false;
    }
    for (; s < end; s++) {
        if (!g_ascii_isxdigit(*s)) {
            return false;
        }
        v = v * 16 + g_ascii_xdigit_value(*s);
    }
    *out = v;
    return true;
}

static bool parse_pci_devfn(const Property *prop, void *field,
                            const char *str, Error **errp)
{
    const char *dot = strchr(str, '.');
    unsigned slot, fn = 0;
    uint64_t num;

    if (dot) {
        if (!parse_hex_part(str, dot, 2, &slot) ||
            !parse_hex_part(dot + 1, dot + strlen(dot), 1, &fn)) {
            goto bad;
        }
    } else if (g_str_has_prefix(str, "0x") || g_str_has_prefix(str, "0X")) {
        /* libvirt writes addr=0x2: a slot number. */
        if (!qemu_strtou64(str, &num, NULL) || num > 0x1f) {
            goto bad;
        }
        slot = num;
    } else if (!parse_hex_part(str, str + strlen(str), 2, &slot)) {
        goto bad;
    }
    if (slot > 0x1f || fn > 7) {
        goto bad;
    }
    *(int32_t *)field = (slot << 3) | fn;
    return true;

bad:
    error_setg(errp, "expected a PCI slot address: slot[.function] in hex, "
               "slot 0-1f, function 0-7 (e.g. 02.0)");
    return false;
}

static char *print_pci_devfn(const Property *prop, const void *field)
{
    int32_t devfn = *(const int32_t *)field;

    if (devfn < 0) {
        return g_strdup("<unset>");
    }
    return g_strdup_printf("%02x.%x", devfn >> 3, devfn & 7);
}

const PropertyInfo qdev_prop_pci_devfn = {
    .type = "int32",
    .description = "slot and optional function number, e.g. 06.0 or 06",
    .parse = parse_pci_devfn, .print = print_pci_devfn,
    .set_default = default_int32,
};

static bool parse_pci_host_devaddr(const Property *prop, void *field,
                                   const char *str, Error **errp)
{
    PCIHostDeviceAddress addr = { 0 };
    g_auto(GStrv) parts = g_strsplit(str, ":", 0);
    guint n = g_strv_length(parts);
    const char *bus, *slotfn, *dot;

    if (n == 3) {
        if (!parse_hex_part(parts[0], parts[0] + strlen(parts[0]), 4,
                            &addr.domain)) {
            goto bad;
        }
        bus = parts[1];
        slotfn = parts[2];
    } else if (n == 2) {
        bus = parts[0];
        slotfn = parts[1];
    } else {
        goto bad;
    }
    dot = strchr(slotfn, '.');
    if (!dot ||
        !parse_hex_part(bus, bus + strlen(bus), 2, &addr.bus) ||
        !parse_hex_part(slotfn, dot, 2, &addr.slot) ||
        !parse_hex_part(dot + 1, dot + strlen(dot), 1, &addr.function) ||
        addr.slot > 0x1f || addr.function > 7) {
        goto bad;
    }
    *(PCIHostDeviceAddress *)field = addr;
    return true;

bad:
    error_setg(errp, "expected a host PCI address DDDD:BB:DD.F or BB:DD.F");
    return false;
}

static char *print_pci_host_devaddr(const Property *prop, const void *field)
{
    const PCIHostDeviceAddress *a = field;

    return g_strdup_printf("%04x:%02x:%02x.%x", a->domain, a->bus, a->slot,
                           a->function);
}

const PropertyInfo qdev_prop_pci_host_devaddr = {
    .type = "str",
    .description = "host PCI address DDDD:BB:DD.F",
    .parse = parse_pci_host_devaddr, .print = print_pci_host_devaddr,
};

/* ---- QOM bridge ---- */

static JsonNode *qdev_prop_get(Object *obj, const char *name, void *opaque,
                               Error **errp)
{
    const Property *prop = opaque;
    void *field = prop_field(DEVICE(obj), prop);
    JsonNode *node;

    if (prop->info->get_json) {
        return prop->info->get_json(prop, field);
    }
    g_autofree char *text = prop->info->print(prop, field);

    node = json_node_new(JSON_NODE_VALUE);
    json_node_set_string(node, text);
    return node;
}

/* Command-line strings and native JSON values both end up as text. */
static char *json_to_text(JsonNode *value)
{
    GType t;

    if (!JSON_NODE_HOLDS_VALUE(value)) {
        return NULL;
    }
    t = json_node_get_value_type(value);
    if (t == G_TYPE_STRING) {
        return g_strdup(json_node_get_string(value));
    }
    if (t == G_TYPE_BOOLEAN) {
        return g_strdup(json_node_get_boolean(value) ? "on" : "off");
    }
    if (t == G_TYPE_INT64) {
        return g_strdup_printf("%" PRId64, json_node_get_int(value));
    }
    return NULL;
}

static bool qdev_prop_set(Object *obj, const char *name, JsonNode *value,
                          void *opaque, Error **errp)
{
    const Property *prop = opaque;
    DeviceState *dev = DEVICE(obj);
    g_autofree char *text = json_to_text(value);
    Error *err = NULL;

    if (dev->realized) {
        error_setg(errp, "Attempt to set property '%s' on device '%s' "
                   "(type '%s') after it was realized", name,
                   dev->id ? dev->id : "<anon>", object_get_typename(obj));
        return false;
    }
    if (!text) {
        error_setg(errp, "Property '%s.%s' expects a %s value",
                   object_get_typename(obj), name, prop->info->type);
        return false;
    }
    if (!prop->info->parse(prop, prop_field(dev, prop), text, &err)) {
        error_propagate_prepend(errp, err,
                                "Property '%s.%s' doesn't take value '%s': ",
                                object_get_typename(obj), name, text);
        return false;
    }
    return true;
}

void device_class_set_props(DeviceClass *dc, const Property *props)
{
    ObjectClass *oc = OBJECT_CLASS(dc);

    dc->props_ = props;
    for (const Property *prop = props; prop->name; prop++) {
        ObjectProperty *op = object_class_property_add(oc, prop->name,
                                                       prop->info->type,
                                                       qdev_prop_get,
                                                       qdev_prop_set, NULL,
                                                       (void *)prop);
        object_property_set_description(op, prop->description
                                             ? prop->description
                                             : prop->info->description);
    }
}

static bool is_qdev_property(const ObjectProperty *op)
{
    return op->get == qdev_prop_get;
}

const Property *qdev_class_find_prop(DeviceClass *dc, const char *name)
{
    ObjectProperty *op = object_class_property_find(OBJECT_CLASS(dc), name);

    return op && is_qdev_property(op) ? op->opaque : NULL;
}

const Property *qdev_find_prop(DeviceState *dev, const char *name)
{
    return qdev_class_find_prop(DEVICE_GET_CLASS(dev), name);
}

void qdev_prop_set_defaults(DeviceState *dev, const Property *props)
{
    for (const Property *prop = props; prop->name; prop++) {
        if (prop->set_default && prop->info->set_default) {
            prop->info->set_default(prop, prop_field(dev, prop));
        }
    }
}

void qdev_prop_release_all(DeviceState *dev, const Property *props)
{
    for (const Property *prop = props; prop->name; prop++) {
        if (prop->info->release) {
            prop->info->release(prop, prop_field(dev, prop));
        }
    }
}

bool qdev_prop_check_kind(DeviceState *dev, const char *name,
                          QemuOptKind kind, Error **errp)
{
    const Property *prop;
    const char *type;

    if (kind == QEMU_OPT_TEXT) {
        return true;
    }
    if (!strcmp(name, "driver") || !strcmp(name, "bus")) {
        return qemu_opt_kind_check(name, kind, "str", errp);
    }
    prop = qdev_find_prop(dev, name);
    if (!prop) {
        /* Not a qdev property: setting it reports what is wrong. */
        if (kind == QEMU_OPT_JSON_OBJECT) {
            error_setg(errp, "Parameter '%s' expects a scalar value", name);
            return false;
        }
        return true;
    }
    type = prop->info->type;
    /* A PCI address is "04.0" or a devfn number, as QEMU takes it. */
    if (prop->info == &qdev_prop_pci_devfn) {
        type = "str-or-int";
    }
    return qemu_opt_kind_check(name, kind, type, errp);
}

bool qdev_prop_parse(DeviceState *dev, const char *name, const char *value,
                     Error **errp)
{
    return object_property_parse(OBJECT(dev), name, value, errp);
}

static void prop_set_or_abort(DeviceState *dev, const char *name,
                              const char *value)
{
    Error *err = NULL;

    if (!qdev_prop_parse(dev, name, value, &err)) {
        fprintf(stderr, "%s\n", error_get_pretty(err));
        abort();
    }
}

void qdev_prop_set_bool(DeviceState *dev, const char *name, bool value)
{
    prop_set_or_abort(dev, name, value ? "on" : "off");
}

void qdev_prop_set_uint32(DeviceState *dev, const char *name, uint32_t value)
{
    g_autofree char *s = g_strdup_printf("%" PRIu32, value);
    prop_set_or_abort(dev, name, s);
}

void qdev_prop_set_int32(DeviceState *dev, const char *name, int32_t value)
{
    const Property *prop = qdev_find_prop(dev, name);
    g_autofree char *s = NULL;

    /* devfn properties take addresses, not raw numbers. */
    if (prop && prop->info == &qdev_prop_pci_devfn) {
        g_assert(!dev->realized);
        *(int32_t *)prop_field(dev, prop) = value;
        return;
    }
    s = g_strdup_printf("%" PRId32, value);
    prop_set_or_abort(dev, name, s);
}

void qdev_prop_set_uint64(DeviceState *dev, const char *name, uint64_t value)
{
    g_autofree char *s = g_strdup_printf("%" PRIu64, value);
    prop_set_or_abort(dev, name, s);
}

static gint prop_name_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const Property *)a)->name, ((const Property *)b)->name);
}

bool qdev_print_props(FILE *out, const char *driver, Error **errp)
{
    ObjectClass *oc = object_class_by_name(driver);
    g_autoptr(GList) props = NULL;
    ObjectPropertyIterator iter;
    ObjectProperty *op;

    if (!oc || !object_class_dynamic_cast(oc, TYPE_DEVICE) ||
        object_class_is_abstract(oc)) {
        error_setg(errp, "'%s' is not a valid device model name", driver);
        return false;
    }
    object_class_property_iter_init(&iter, oc);
    while ((op = object_property_iter_next(&iter))) {
        if (is_qdev_property(op)) {
            props = g_list_insert_sorted(props, op->opaque, prop_name_cmp);
        }
    }
    if (!props) {
        fprintf(out, "There are no options for %s.\n", driver);
        return true;
    }
    fprintf(out, "%s options:\n", driver);
    for (GList *l = props; l; l = l->next) {
        const Property *prop = l->data;
        const char *desc = prop->description ? prop->description
                                             : prop->info->description;
        g_autofree char *head = g_strdup_printf("  %s=<%s>", prop->name,
                                                prop->info->type);
        g_autofree char *def = NULL;

        if (prop->set_default && prop->info->set_default) {
            /* Big enough and aligned for any property field. */
            union { uint64_t u; char c[32]; } field = { 0 };
            prop->info->set_default(prop, &field);
            def = prop->info->print(prop, &field);
        }
        fprintf(out, "%-26s", head);
        if (desc || def) {
            fprintf(out, " - %s", desc ? desc : "");
            if (def) {
                fprintf(out, "%s(default: %s)", desc ? " " : "", def);
            }
        }
        fputc('\n', out);
    }
    return true;
}

/* ---- -global ---- */

typedef struct GlobalProp {
    char *driver;
    char *property;
    char *value;
} GlobalProp;

static GPtrArray *global_props;

void qdev_prop_register_global(const char *driver, const char *property,
                               const char *value)
{
    GlobalProp *g = g_new(GlobalProp, 1);

    if (!global_props) {
        global_props = g_ptr_array_new();
    }
    g->driver = g_strdup(driver);
    g->property = g_strdup(property);
    g->value = g_strdup(value);
    g_ptr_array_add(global_props, g);
}

void qdev_prop_apply_globals(DeviceState *dev)
{
    for (guint i = 0; global_props && i < global_props->len; i++) {
        GlobalProp *g = g_ptr_array_index(global_props, i);
        Error *err = NULL;

        if (!object_dynamic_cast(OBJECT(dev), g->driver)) {
            continue;
        }
        /* The command line validated the name; a bad value only warns. */
        if (!object_property_parse(OBJECT(dev), g->property, g->value,
                                   &err)) {
            warn_report("-global %s.%s=%s: %s", g->driver, g->property,
                        g->value, error_get_pretty(err));
            error_free(err);
        }
    }
}
