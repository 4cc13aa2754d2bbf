/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query-pci (QEMU's PciInfo shape) and the text of HMP "info pci" and
 * "info qtree", for management tools and people: what the guest sees in
 * configuration space, with the BARs where they are mapped now.
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/pci-qmp.h"
#include "hw/qdev-core.h"
#include "monitor/monitor.h"
#include "qom/object.h"
#include <linux/pci_regs.h>

static JsonObject *pci_region_info(PCIDevice *d, int bar)
{
    const PCIIORegion *r = &d->io_regions[bar];
    JsonObject *o = json_object_new();
    bool io = r->type & PCI_BASE_ADDRESS_SPACE_IO;

    json_object_set_int_member(o, "bar", bar);
    json_object_set_string_member(o, "type", io ? "io" : "memory");
    json_object_set_int_member(o, "address",
                               r->addr == PCI_BAR_UNMAPPED ? -1 : r->addr);
    json_object_set_int_member(o, "size", r->size);
    if (!io) {
        json_object_set_boolean_member(o, "prefetch", r->type &
                                       PCI_BASE_ADDRESS_MEM_PREFETCH);
        json_object_set_boolean_member(o, "mem_type_64", r->type &
                                       PCI_BASE_ADDRESS_MEM_TYPE_64);
    }
    return o;
}

static JsonArray *pci_bus_devices(PCIBus *bus, int bus_num);

static JsonObject *pci_device_info(PCIDevice *d, int bus_num)
{
    uint8_t *c = d->config;
    JsonObject *o = json_object_new();
    JsonObject *cls = json_object_new();
    JsonObject *id = json_object_new();
    JsonArray *regions = json_array_new();
    uint8_t pin = c[PCI_INTERRUPT_PIN];

    json_object_set_int_member(o, "bus", bus_num);
    json_object_set_int_member(o, "slot", PCI_SLOT(d->devfn));
    json_object_set_int_member(o, "function", PCI_FUNC(d->devfn));
    json_object_set_int_member(cls, "class",
                               pci_get_word(c + PCI_CLASS_DEVICE));
    json_object_set_object_member(o, "class_info", cls);
    json_object_set_int_member(id, "vendor", pci_get_word(c + PCI_VENDOR_ID));
    json_object_set_int_member(id, "device", pci_get_word(c + PCI_DEVICE_ID));
    if ((c[PCI_HEADER_TYPE] & 0x7f) == PCI_HEADER_TYPE_NORMAL) {
        json_object_set_int_member(id, "subsystem-vendor",
                                   pci_get_word(c +
                                                PCI_SUBSYSTEM_VENDOR_ID));
        json_object_set_int_member(id, "subsystem",
                                   pci_get_word(c + PCI_SUBSYSTEM_ID));
    }
    json_object_set_object_member(o, "id", id);
    if (pin) {
        json_object_set_int_member(o, "irq", c[PCI_INTERRUPT_LINE]);
    }
    json_object_set_int_member(o, "irq_pin", pin);
    json_object_set_string_member(o, "qdev_id", d->qdev.id ? d->qdev.id : "");
    for (int i = 0; i < PCI_NUM_REGIONS; i++) {
        if (d->io_regions[i].size) {
            json_array_add_object_element(regions, pci_region_info(d, i));
        }
    }
    json_object_set_array_member(o, "regions", regions);
    if (d->secondary_bus) {
        JsonObject *br = json_object_new();
        JsonObject *range = json_object_new();
        int sec = c[PCI_SECONDARY_BUS];

        json_object_set_int_member(range, "number", c[PCI_PRIMARY_BUS]);
        json_object_set_int_member(range, "secondary", sec);
        json_object_set_int_member(range, "subordinate",
                                   c[PCI_SUBORDINATE_BUS]);
        json_object_set_object_member(br, "bus", range);
        json_object_set_array_member(br, "devices",
                                     pci_bus_devices(d->secondary_bus, sec));
        json_object_set_object_member(o, "pci_bridge", br);
    }
    return o;
}

static JsonArray *pci_bus_devices(PCIBus *bus, int bus_num)
{
    JsonArray *list = json_array_new();

    for (int devfn = 0; devfn < PCI_DEVFN_MAX; devfn++) {
        if (bus->devices[devfn]) {
            json_array_add_object_element(
                list, pci_device_info(bus->devices[devfn], bus_num));
        }
    }
    return list;
}

static int pci_find_roots(Object *obj, void *opaque)
{
    BusState *b = (BusState *)object_dynamic_cast(obj, TYPE_PCI_BUS);

    if (b && !(b->parent && object_dynamic_cast(OBJECT(b->parent),
                                                TYPE_PCI_DEVICE))) {
        g_ptr_array_add(opaque, b);
    }
    return 0;
}

GPtrArray *pci_root_buses(void)
{
    GPtrArray *roots = g_ptr_array_new();

    object_child_foreach_recursive(object_get_root(), pci_find_roots, roots);
    return roots;
}

JsonArray *pci_query(void)
{
    g_autoptr(GPtrArray) roots = pci_root_buses();
    JsonArray *list = json_array_new();

    for (guint i = 0; i < roots->len; i++) {
        JsonObject *o = json_object_new();

        json_object_set_int_member(o, "bus", 0);
        json_object_set_array_member(o, "devices",
                                     pci_bus_devices(roots->pdata[i], 0));
        json_array_add_object_element(list, o);
    }
    return list;
}

static void qmp_query_pci(JsonObject *args, JsonNode **ret, Error **errp)
{
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, pci_query());
}

/* ---- HMP text ---- */

static void pci_text_bus(GString *out, PCIBus *bus, int bus_num)
{
    for (int devfn = 0; devfn < PCI_DEVFN_MAX; devfn++) {
        PCIDevice *d = bus->devices[devfn];
        uint8_t *c;

        if (!d) {
            continue;
        }
        c = d->config;
        g_string_append_printf(out, "  Bus %2d, device %3d, function %d:\r\n",
                               bus_num, PCI_SLOT(devfn), PCI_FUNC(devfn));
        g_string_append_printf(out, "    Class %04x: PCI device %04x:%04x\r\n",
                               pci_get_word(c + PCI_CLASS_DEVICE),
                               pci_get_word(c + PCI_VENDOR_ID),
                               pci_get_word(c + PCI_DEVICE_ID));
        if (c[PCI_INTERRUPT_PIN]) {
            g_string_append_printf(out, "      IRQ %d, pin %c\r\n",
                                   c[PCI_INTERRUPT_LINE],
                                   'A' + c[PCI_INTERRUPT_PIN] - 1);
        }
        for (int i = 0; i < PCI_NUM_REGIONS; i++) {
            const PCIIORegion *r = &d->io_regions[i];
            bool io = r->type & PCI_BASE_ADDRESS_SPACE_IO;

            if (!r->size) {
                continue;
            }
            g_string_append_printf(
                out, "      BAR%d: %s at 0x%" PRIx64 " [0x%" PRIx64 "].\r\n",
                i, io ? "I/O" : (r->type & PCI_BASE_ADDRESS_MEM_TYPE_64)
                                ? "64 bit memory" : "32 bit memory",
                r->addr == PCI_BAR_UNMAPPED ? (uint64_t)-1 : r->addr,
                r->addr == PCI_BAR_UNMAPPED ? (uint64_t)-1
                                            : r->addr + r->size - 1);
        }
        g_string_append_printf(out, "      id \"%s\"\r\n",
                               d->qdev.id ? d->qdev.id : "");
        if (d->secondary_bus) {
            pci_text_bus(out, d->secondary_bus, c[PCI_SECONDARY_BUS]);
        }
    }
}

char *pci_info_text(void)
{
    g_autoptr(GPtrArray) roots = pci_root_buses();
    GString *out = g_string_new(NULL);

    for (guint i = 0; i < roots->len; i++) {
        pci_text_bus(out, roots->pdata[i], 0);
    }
    return g_string_free(out, FALSE);
}

static void __attribute__((constructor)) pci_qmp_register(void)
{
    qmp_register_command_args("query-pci", qmp_query_pci, "", 0);
}
