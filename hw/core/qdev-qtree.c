/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HMP "info qtree": the device tree as buses and devices, each device
 * with its qdev properties, in QEMU's layout.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-qtree.h"
#include "qom/object.h"

static void qtree_indent(GString *out, int level)
{
    g_string_append_printf(out, "%*s", level * 2, "");
}

static void qtree_props(GString *out, DeviceState *dev, int level)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

    for (ObjectClass *oc = object_get_class(OBJECT(dev)); oc;
         oc = object_class_get_parent(oc)) {
        DeviceClass *dc = (DeviceClass *)object_class_dynamic_cast(
            oc, TYPE_DEVICE);

        if (!dc || !dc->props_) {
            continue;
        }
        for (const Property *p = dc->props_; p->name; p++) {
            g_autoptr(JsonNode) v = object_property_get_json(OBJECT(dev),
                                                             p->name, NULL);
            g_autofree char *text = NULL;

            if (!v || !g_hash_table_add(seen, (gpointer)p->name)) {
                continue;
            }
            if (JSON_NODE_HOLDS_VALUE(v) &&
                json_node_get_value_type(v) == G_TYPE_STRING) {
                text = g_strdup_printf("\"%s\"", json_node_get_string(v));
            } else {
                text = json_to_string(v, false);
            }
            qtree_indent(out, level);
            g_string_append_printf(out, "%s = %s\r\n", p->name, text);
        }
    }
}

static void qtree_bus(GString *out, BusState *bus, int level);

static void qtree_dev(GString *out, DeviceState *dev, int level)
{
    qtree_indent(out, level);
    g_string_append_printf(out, "dev: %s, id \"%s\"\r\n",
                           object_get_typename(OBJECT(dev)),
                           dev->id ? dev->id : "");
    qtree_props(out, dev, level + 1);
    for (GList *l = dev->child_bus; l; l = l->next) {
        qtree_bus(out, l->data, level + 1);
    }
}

static void qtree_bus(GString *out, BusState *bus, int level)
{
    qtree_indent(out, level);
    g_string_append_printf(out, "bus: %s\r\n", bus->name);
    qtree_indent(out, level + 1);
    g_string_append_printf(out, "type %s\r\n",
                           object_get_typename(OBJECT(bus)));
    for (GList *l = bus->children; l; l = l->next) {
        qtree_dev(out, l->data, level + 1);
    }
}

/* Devices on no bus (the machine's own): the roots of the tree. */
static int qtree_find_roots(Object *obj, void *opaque)
{
    DeviceState *dev = (DeviceState *)object_dynamic_cast(obj, TYPE_DEVICE);

    if (dev && !dev->parent_bus && dev->realized) {
        g_ptr_array_add(opaque, dev);
    }
    return 0;
}

char *qdev_qtree_text(void)
{
    g_autoptr(GPtrArray) roots = g_ptr_array_new();
    GString *out = g_string_new(NULL);

    object_child_foreach_recursive(object_get_root(), qtree_find_roots,
                                   roots);
    g_string_append(out, "bus: main-system-bus\r\n  type System\r\n");
    for (guint i = 0; i < roots->len; i++) {
        qtree_dev(out, roots->pdata[i], 1);
    }
    return g_string_free(out, FALSE);
}
