/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Buses: a named QOM child of the device that provides it, listing the
 * devices plugged into it.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "qapi/error.h"
#include "trace.h"

/* Every live bus in creation order, for lookups by name or type. */
static GList *all_buses;

static char *qbus_default_name(const char *typename, DeviceState *parent)
{
    g_autofree char *base = NULL;
    int n = 0;

    if (parent && parent->id) {
        return g_strdup_printf("%s.%d", parent->id, parent->num_child_bus);
    }
    base = g_ascii_strdown(typename, -1);
    /* First free "<type>.N". */
    for (;;) {
        g_autofree char *name = g_strdup_printf("%s.%d", base, n);
        GList *l;

        for (l = all_buses; l; l = l->next) {
            if (!strcmp(((BusState *)l->data)->name, name)) {
                break;
            }
        }
        if (!l) {
            return g_steal_pointer(&name);
        }
        n++;
    }
}

static void qbus_setup(BusState *bus, const char *typename,
                       DeviceState *parent, const char *name)
{
    bus->name = name ? g_strdup(name) : qbus_default_name(typename, parent);
    bus->parent = parent;
    all_buses = g_list_append(all_buses, bus);
    trace_qbus_new(typename, bus->name);
    if (parent) {
        parent->child_bus = g_list_append(parent->child_bus, bus);
        parent->num_child_bus++;
        object_property_add_child(OBJECT(parent), bus->name, OBJECT(bus));
        /* The composition link now owns the bus. */
        object_unref(bus);
    }
}

BusState *qbus_new(const char *typename, DeviceState *parent,
                   const char *name)
{
    BusState *bus = BUS(object_new(typename));

    qbus_setup(bus, typename, parent, name);
    return bus;
}

BusState *qbus_find(const char *path, Error **errp)
{
    const char *name = strrchr(path, '/');

    name = name ? name + 1 : path;
    for (GList *l = all_buses; l; l = l->next) {
        BusState *bus = l->data;
        if (!strcmp(bus->name, name)) {
            return bus;
        }
    }
    error_setg(errp, "Bus '%s' not found", path);
    return NULL;
}

BusState *qbus_find_by_type(const char *typename)
{
    for (GList *l = all_buses; l; l = l->next) {
        if (object_dynamic_cast(l->data, typename)) {
            return l->data;
        }
    }
    return NULL;
}

void qbus_reset_all(BusState *bus)
{
    BusClass *bc = BUS_GET_CLASS(bus);

    if (bc->reset) {
        bc->reset(bus);
    }
    for (GList *l = bus->children; l; l = l->next) {
        DeviceState *dev = l->data;
        if (dev->realized) {
            device_cold_reset(dev);
        }
    }
}

/* Before the bus goes away, its devices go first. */
static void bus_unparent(Object *obj)
{
    BusState *bus = BUS(obj);

    while (bus->children) {
        DeviceState *dev = DEVICE(object_ref(bus->children->data));

        if (OBJECT(dev)->parent) {
            object_unparent(OBJECT(dev));
        }
        /* Not in the tree (or the hook left it): just detach it. */
        qdev_unrealize(dev);
        qdev_set_parent_bus(dev, NULL);
        object_unref(dev);
    }
}

static void bus_finalize(Object *obj)
{
    BusState *bus = BUS(obj);

    all_buses = g_list_remove(all_buses, bus);
    /* Still listed when finalized without going through unparent. */
    if (bus->parent) {
        bus->parent->child_bus = g_list_remove(bus->parent->child_bus, bus);
        bus->parent->num_child_bus--;
    }
    g_free(bus->name);
}

static JsonNode *bus_hotplug_get(Object *obj, const char *name,
                                 void *opaque, Error **errp)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_boolean(node, BUS(obj)->hotplug_allowed);
    return node;
}

static void bus_class_init(ObjectClass *oc, void *data)
{
    oc->unparent = bus_unparent;
    object_class_property_add(oc, "hotplug-allowed", "bool", bus_hotplug_get,
                              NULL, NULL, NULL);
}

static const TypeInfo bus_types[] = {
    {
        .name = TYPE_BUS,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(BusState),
        .class_size = sizeof(BusClass),
        .class_init = bus_class_init,
        .instance_finalize = bus_finalize,
        .abstract = true,
    },
};

DEFINE_TYPES(bus_types)
