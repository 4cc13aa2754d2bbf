/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qdev: device life cycle (new, realize, unrealize, unplug), user device
 * creation from options, reset, and GPIO lines.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qemu/option.h"
#include "monitor/monitor.h"
#include "trace.h"

bool qdev_hotplug;

/* ---- class chain helpers ---- */

/* Calls fn for each class in dev's chain that declared its own props. */
static void foreach_own_props(DeviceState *dev, bool base_first,
                              void (*fn)(DeviceState *, const Property *))
{
    g_autoptr(GPtrArray) tables = g_ptr_array_new();
    ObjectClass *oc = object_get_class(OBJECT(dev));

    for (; oc && object_class_dynamic_cast(oc, TYPE_DEVICE);
         oc = object_class_get_parent(oc)) {
        ObjectClass *parent = object_class_get_parent(oc);
        const Property *own = DEVICE_CLASS(oc)->props_;
        const Property *inherited = NULL;

        if (parent && object_class_dynamic_cast(parent, TYPE_DEVICE)) {
            inherited = DEVICE_CLASS(parent)->props_;
        }
        if (own && own != inherited) {
            g_ptr_array_add(tables, (void *)own);
        }
    }
    for (guint i = 0; i < tables->len; i++) {
        guint idx = base_first ? tables->len - 1 - i : i;
        fn(dev, g_ptr_array_index(tables, idx));
    }
}

/* ---- devices ---- */

DeviceState *qdev_try_new(const char *name)
{
    ObjectClass *oc = object_class_by_name(name);

    if (!oc || !object_class_dynamic_cast(oc, TYPE_DEVICE) ||
        object_class_is_abstract(oc)) {
        return NULL;
    }
    return DEVICE(object_new_with_class(oc));
}

DeviceState *qdev_new(const char *name)
{
    DeviceState *dev = qdev_try_new(name);

    if (!dev) {
        fprintf(stderr, "unknown device type '%s'\n", name);
        abort();
    }
    return dev;
}

void qdev_set_parent_bus(DeviceState *dev, BusState *bus)
{
    BusState *old = dev->parent_bus;

    if (old == bus) {
        return;
    }
    /* Take the new reference before dropping the old one. */
    if (bus) {
        object_ref(dev);
        bus->children = g_list_append(bus->children, dev);
        bus->num_children++;
    }
    dev->parent_bus = bus;
    if (old) {
        old->children = g_list_remove(old->children, dev);
        old->num_children--;
        object_unref(dev);
    }
}

static int unattached_count;

void qdev_add_unattached(Object *obj)
{
    g_autofree char *name = g_strdup_printf("device[%d]",
                                            unattached_count++);

    object_property_add_child(container_get(qdev_get_machine(),
                                            "/unattached"),
                              name, obj);
}

bool qdev_realize(DeviceState *dev, BusState *bus, Error **errp)
{
    DeviceClass *dc = DEVICE_GET_CLASS(dev);
    const char *type = object_get_typename(OBJECT(dev));
    bool attached_here = false;

    if (dev->realized) {
        error_setg(errp, "Device '%s' is already realized", type);
        return false;
    }
    if (bus) {
        if (!dc->bus_type || !object_dynamic_cast(OBJECT(bus), dc->bus_type)) {
            error_setg(errp, "Device '%s' can't go on %s bus", type,
                       object_get_typename(OBJECT(bus)));
            return false;
        }
        qdev_set_parent_bus(dev, bus);
        BusClass *bc = BUS_GET_CLASS(bus);
        if (bc->check_address && !bc->check_address(bus, dev, errp)) {
            qdev_set_parent_bus(dev, NULL);
            return false;
        }
    }
    /* Board devices without a home still get a canonical path. */
    if (!OBJECT(dev)->parent) {
        qdev_add_unattached(OBJECT(dev));
        attached_here = true;
    }
    if (dc->realize && !dc->realize(dev, errp)) {
        trace_qdev_realize_failed(type, dev->id ? dev->id : "");
        if (attached_here) {
            /* The caller's reference keeps dev alive. */
            object_unparent(OBJECT(dev));
        }
        qdev_set_parent_bus(dev, NULL);
        return false;
    }
    trace_qdev_realize(type, dev->id ? dev->id : "");
    dev->realized = true;
    for (GList *l = dev->child_bus; l; l = l->next) {
        ((BusState *)l->data)->realized = true;
    }
    return true;
}

bool qdev_realize_and_unref(DeviceState *dev, BusState *bus, Error **errp)
{
    bool ok = qdev_realize(dev, bus, errp);

    object_unref(dev);
    return ok;
}

void qdev_unrealize(DeviceState *dev)
{
    DeviceClass *dc = DEVICE_GET_CLASS(dev);

    if (!dev->realized) {
        return;
    }
    /* Children first: they may still use what the parent provides. */
    for (GList *b = dev->child_bus; b; b = b->next) {
        BusState *bus = b->data;
        for (GList *l = bus->children; l; l = l->next) {
            qdev_unrealize(l->data);
        }
        bus->realized = false;
    }
    trace_qdev_unrealize(object_get_typename(OBJECT(dev)),
                         dev->id ? dev->id : "");
    if (dc->unrealize) {
        dc->unrealize(dev);
    }
    dev->realized = false;
}

static void device_unparent(Object *obj)
{
    DeviceState *dev = DEVICE(obj);

    qdev_unrealize(dev);
    while (dev->child_bus) {
        BusState *bus = dev->child_bus->data;

        /* Detach first, so a bus kept alive elsewhere cannot loop us. */
        dev->child_bus = g_list_remove(dev->child_bus, bus);
        dev->num_child_bus--;
        bus->parent = NULL;
        object_unparent(OBJECT(bus));
    }
    qdev_set_parent_bus(dev, NULL);
}

void device_cold_reset(DeviceState *dev)
{
    DeviceClass *dc = DEVICE_GET_CLASS(dev);

    if (dc->reset) {
        dc->reset(dev);
    }
    for (GList *l = dev->child_bus; l; l = l->next) {
        qbus_reset_all(l->data);
    }
}

typedef struct ResetEntry {
    QEMUResetHandler *func;
    void *opaque;
} ResetEntry;

static GList *reset_handlers;

void qemu_register_reset(QEMUResetHandler *func, void *opaque)
{
    ResetEntry *e = g_new(ResetEntry, 1);

    e->func = func;
    e->opaque = opaque;
    reset_handlers = g_list_append(reset_handlers, e);
}

void qemu_unregister_reset(QEMUResetHandler *func, void *opaque)
{
    for (GList *l = reset_handlers; l; l = l->next) {
        ResetEntry *e = l->data;
        if (e->func == func && e->opaque == opaque) {
            reset_handlers = g_list_delete_link(reset_handlers, l);
            g_free(e);
            return;
        }
    }
}

/* Roots of the device tree: realized devices that sit on no bus. */
static int reset_root_device(Object *obj, void *opaque)
{
    DeviceState *dev = (DeviceState *)object_dynamic_cast(obj, TYPE_DEVICE);

    if (dev && dev->realized && !dev->parent_bus) {
        device_cold_reset(dev);
    }
    return 0;
}

void qemu_devices_reset(void)
{
    int n = 0;

    object_child_foreach_recursive(object_get_root(), reset_root_device,
                                   NULL);
    for (GList *l = reset_handlers; l; l = l->next) {
        ResetEntry *e = l->data;
        e->func(e->opaque);
        n++;
    }
    trace_qdev_reset_all(n);
}

Object *qdev_get_machine(void)
{
    /* Unit tests run without a machine: a container stands in. */
    return container_get(object_get_root(), "/machine");
}

DeviceState *qdev_find_by_id(const char *id)
{
    Object *peripheral = object_resolve_path("/machine/peripheral", NULL);
    Object *obj;

    if (!peripheral || !id) {
        return NULL;
    }
    obj = object_resolve_path_component(peripheral, id);
    return obj ? (DeviceState *)object_dynamic_cast(obj, TYPE_DEVICE) : NULL;
}

/* QEMU's rule: a letter, then letters, digits, '-', '.', '_'. */
static bool id_wellformed(const char *id)
{
    if (!g_ascii_isalpha(id[0])) {
        return false;
    }
    for (const char *p = id + 1; *p; p++) {
        if (!g_ascii_isalnum(*p) && !strchr("-._", *p)) {
            return false;
        }
    }
    return true;
}

static BusState *qdev_choose_bus(DeviceClass *dc, const char *driver,
                                 const char *bus_path, Error **errp)
{
    BusState *bus;

    if (bus_path) {
        bus = qbus_find(bus_path, errp);
        if (!bus) {
            return NULL;
        }
        if (!dc->bus_type || !object_dynamic_cast(OBJECT(bus), dc->bus_type)) {
            error_setg(errp, "Device '%s' can't go on %s bus", driver,
                       object_get_typename(OBJECT(bus)));
            return NULL;
        }
        return bus;
    }
    if (!dc->bus_type) {
        return NULL;
    }
    bus = qbus_find_by_type(dc->bus_type);
    if (!bus) {
        error_setg(errp, "No '%s' bus found for device '%s'", dc->bus_type,
                   driver);
    }
    return bus;
}

static bool set_one_prop(void *opaque, const char *key, const char *value,
                         Error **errp)
{
    DeviceState *dev = opaque;

    if (!strcmp(key, "driver") || !strcmp(key, "bus")) {
        return true;
    }
    return qdev_prop_parse(dev, key, value, errp);
}

DeviceState *qdev_device_add(QemuOpts *opts, Error **errp)
{
    const char *driver = qemu_opt_get(opts, "driver");
    const char *id = qemu_opts_id(opts);
    const char *bus_path = qemu_opt_get(opts, "bus");
    ObjectClass *oc;
    DeviceClass *dc;
    BusState *bus;
    DeviceState *dev;
    Object *container;
    g_autofree char *name = NULL;
    g_autofree char *path = NULL;

    if (!driver) {
        error_setg(errp, "Parameter 'driver' is missing");
        return NULL;
    }
    oc = object_class_by_name(driver);
    if (!oc || !object_class_dynamic_cast(oc, TYPE_DEVICE)) {
        error_setg(errp, "'%s' is not a valid device model name", driver);
        return NULL;
    }
    if (object_class_is_abstract(oc)) {
        error_setg(errp, "Parameter 'driver' expects a non-abstract device "
                   "type");
        return NULL;
    }
    dc = DEVICE_CLASS(oc);
    if (!dc->user_creatable) {
        error_setg(errp, "Parameter 'driver' expects a pluggable device type");
        return NULL;
    }
    if (id) {
        if (!id_wellformed(id)) {
            error_setg(errp, "Parameter 'id' expects an identifier");
            error_append_hint(errp, "Identifiers consist of letters, digits, "
                              "'-', '.', '_', starting with a letter.\n");
            return NULL;
        }
        if (qdev_find_by_id(id)) {
            error_setg(errp, "Duplicate device ID '%s'", id);
            return NULL;
        }
    }
    bus = qdev_choose_bus(dc, driver, bus_path, errp);
    if (!bus && (bus_path || dc->bus_type)) {
        return NULL;
    }
    if (qdev_hotplug) {
        if (bus && !bus->hotplug_allowed) {
            error_setg(errp, "Bus '%s' does not support hotplugging",
                       bus->name);
            return NULL;
        }
        if (!dc->hotpluggable) {
            error_setg(errp, "Device '%s' does not support hotplugging",
                       driver);
            return NULL;
        }
    }

    dev = DEVICE(object_new_with_class(oc));
    dev->id = g_strdup(id);
    dev->hotplugged = qdev_hotplug;
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);

        /* JSON values have their own type: it must be the declared one. */
        if (!qdev_prop_check_kind(dev, key, qemu_opts_kind(opts, i), errp) ||
            !set_one_prop(dev, key, qemu_opts_value(opts, i), errp)) {
            object_unref(dev);
            return NULL;
        }
    }

    if (id) {
        container = container_get(qdev_get_machine(), "/peripheral");
        name = g_strdup(id);
    } else {
        container = container_get(qdev_get_machine(), "/peripheral-anon");
        for (int n = 0;; n++) {
            g_free(name);
            name = g_strdup_printf("device[%d]", n);
            if (!object_resolve_path_component(container, name)) {
                break;
            }
        }
    }
    object_property_add_child(container, name, OBJECT(dev));
    path = object_get_canonical_path(OBJECT(dev));

    if (!qdev_realize(dev, bus, errp)) {
        object_unparent(OBJECT(dev));
        object_unref(dev);
        return NULL;
    }
    trace_qdev_device_add(driver, id ? id : "", path);
    /* The QOM tree holds the device from here on. */
    object_unref(dev);
    return dev;
}

bool qdev_unplug(DeviceState *dev, Error **errp)
{
    DeviceClass *dc = DEVICE_GET_CLASS(dev);
    BusState *bus = dev->parent_bus;

    /*
     * Only a hot-pluggable device on a hot-pluggable bus may go.  A device
     * on no bus (host bridge, MSI window, RTC, ...) is part of the board:
     * nothing could plug it back.
     */
    if (bus && !bus->hotplug_allowed) {
        error_setg(errp, "Bus '%s' does not support hotplugging", bus->name);
        return false;
    }
    if (!dc->hotpluggable || !bus || !dev->realized) {
        error_setg(errp, "Device '%s' does not support hotplugging",
                   object_get_typename(OBJECT(dev)));
        return false;
    }
    if (BUS_GET_CLASS(bus)->unplug &&
        !BUS_GET_CLASS(bus)->unplug(bus, dev, errp)) {
        return false;
    }
    if (bus && bus->unplug_request) {
        return bus->unplug_request(bus, dev, errp);
    }
    qdev_unplug_complete(dev);
    return true;
}

void qdev_unplug_complete(DeviceState *dev)
{
    g_autofree char *path = object_get_canonical_path(OBJECT(dev));
    g_autofree char *id = g_strdup(dev->id);
    JsonObject *data;

    trace_qdev_unplug(object_get_typename(OBJECT(dev)), path ? path : "");
    if (OBJECT(dev)->parent) {
        object_unparent(OBJECT(dev));
    } else {
        qdev_unrealize(dev);
        qdev_set_parent_bus(dev, NULL);
    }

    data = json_object_new();
    if (id) {
        json_object_set_string_member(data, "device", id);
    }
    json_object_set_string_member(data, "path", path ? path : "");
    qapi_event_send("DEVICE_DELETED", data);
}

void qdev_print_device_list(FILE *out)
{
    GSList *list = object_class_get_list(TYPE_DEVICE, false);

    for (GSList *l = list; l; l = l->next) {
        DeviceClass *dc = DEVICE_CLASS(l->data);

        if (!dc->user_creatable) {
            continue;
        }
        fprintf(out, "name \"%s\"", object_class_get_name(l->data));
        if (dc->bus_type) {
            fprintf(out, ", bus %s", dc->bus_type);
        }
        if (dc->desc) {
            fprintf(out, ", desc \"%s\"", dc->desc);
        }
        fputc('\n', out);
    }
    g_slist_free(list);
}

/* ---- GPIO ---- */

void qdev_init_gpio_in(DeviceState *dev, qemu_irq_handler handler, int n)
{
    int old = dev->gpio_in.n;

    dev->gpio_in.lines = g_renew(qemu_irq, dev->gpio_in.lines, old + n);
    for (int i = 0; i < n; i++) {
        dev->gpio_in.lines[old + i] = qemu_allocate_irq(handler, dev, old + i);
    }
    dev->gpio_in.n = old + n;
}

qemu_irq qdev_get_gpio_in(DeviceState *dev, int n)
{
    g_assert(n >= 0 && n < dev->gpio_in.n);
    return dev->gpio_in.lines[n];
}

void qdev_init_gpio_out(DeviceState *dev, qemu_irq *pins, int n)
{
    g_assert(!dev->gpio_out.pins);
    dev->gpio_out.pins = pins;
    dev->gpio_out.n = n;
    for (int i = 0; i < n; i++) {
        pins[i] = NULL;
    }
}

void qdev_connect_gpio_out(DeviceState *dev, int n, qemu_irq input_pin)
{
    g_assert(n >= 0 && n < dev->gpio_out.n);
    dev->gpio_out.pins[n] = input_pin;
}

bool qdev_intercept_gpio_in(DeviceState *dev, qemu_irq_handler handler,
                            void *opaque, Error **errp)
{
    if (!dev->gpio_in.n) {
        error_setg(errp, "Device '%s' has no GPIO input lines",
                   object_get_typename(OBJECT(dev)));
        return false;
    }
    for (int i = 0; i < dev->gpio_in.n; i++) {
        qemu_irq_intercept(dev->gpio_in.lines[i], handler, opaque);
    }
    return true;
}

bool qdev_intercept_gpio_out(DeviceState *dev, qemu_irq_handler handler,
                             void *opaque, Error **errp)
{
    if (!dev->gpio_out.n) {
        error_setg(errp, "Device '%s' has no GPIO output lines",
                   object_get_typename(OBJECT(dev)));
        return false;
    }
    if (!dev->gpio_out.intercepts) {
        dev->gpio_out.intercepts = qemu_allocate_irqs(handler, opaque,
                                                      dev->gpio_out.n);
    }
    for (int i = 0; i < dev->gpio_out.n; i++) {
        qemu_irq_intercept(dev->gpio_out.intercepts[i], handler, opaque);
        dev->gpio_out.pins[i] = dev->gpio_out.intercepts[i];
    }
    return true;
}

/* ---- the device type ---- */

static void device_initfn(Object *obj)
{
    foreach_own_props(DEVICE(obj), true, qdev_prop_set_defaults);
}

/* After every instance_init: globals override defaults, not the user. */
static void device_post_init(Object *obj)
{
    qdev_prop_apply_globals(DEVICE(obj));
}

static void device_finalize(Object *obj)
{
    DeviceState *dev = DEVICE(obj);

    foreach_own_props(dev, false, qdev_prop_release_all);
    qemu_free_irqs(dev->gpio_in.lines, dev->gpio_in.n);
    qemu_free_irqs(dev->gpio_out.intercepts, dev->gpio_out.n);
    g_free(dev->id);
}

static JsonNode *device_realized_get(Object *obj, const char *name,
                                     void *opaque, Error **errp)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_boolean(node, DEVICE(obj)->realized);
    return node;
}

static JsonNode *device_parent_bus_get(Object *obj, const char *name,
                                       void *opaque, Error **errp)
{
    BusState *bus = DEVICE(obj)->parent_bus;
    g_autofree char *path = bus ? object_get_canonical_path(OBJECT(bus))
                                : NULL;
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, path ? path : "");
    return node;
}

static void device_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    oc->unparent = device_unparent;
    /* As in QEMU: classes that must not be user-made say so. */
    dc->user_creatable = true;
    dc->hotpluggable = true;
    object_class_property_add(oc, "realized", "bool", device_realized_get,
                              NULL, NULL, NULL);
    object_class_property_add(oc, "parent_bus", "link<bus>",
                              device_parent_bus_get, NULL, NULL, NULL);
}

static const TypeInfo qdev_types[] = {
    {
        .name = TYPE_DEVICE,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(DeviceState),
        .class_size = sizeof(DeviceClass),
        .class_init = device_class_init,
        .instance_init = device_initfn,
        .instance_post_init = device_post_init,
        .instance_finalize = device_finalize,
        .abstract = true,
    },
};

DEFINE_TYPES(qdev_types)
