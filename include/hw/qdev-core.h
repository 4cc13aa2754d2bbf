/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qdev: devices and buses on top of QOM.
 *
 * A device is created with qdev_new(), configured through its properties,
 * then realized (optionally onto a bus).  Realize is where it claims
 * resources; unrealize gives them back.  Buses are QOM children of the
 * device that provides them ("pci.0" under the host bridge) and list the
 * devices plugged into them.
 *
 * User-created devices (-device / device_add) live at
 * /machine/peripheral/ID or /machine/peripheral-anon/device[N].
 */
#ifndef HW_QDEV_CORE_H
#define HW_QDEV_CORE_H

#include <stdbool.h>
#include <stdio.h>
#include <glib.h>
#include "qemu/typedefs.h"
#include "qom/object.h"
#include "hw/irq.h"

typedef struct Property Property;

#define TYPE_DEVICE "device"
#define TYPE_BUS "bus"

typedef bool (*DeviceRealize)(DeviceState *dev, Error **errp);
typedef void (*DeviceUnrealize)(DeviceState *dev);
typedef void (*DeviceReset)(DeviceState *dev);

struct DeviceClass {
    ObjectClass parent_class;

    const char *desc;
    /* This class's own table (END_OF_LIST terminated); set it with
     * device_class_set_props().  Parent properties are inherited. */
    const Property *props_;
    DeviceRealize realize;
    DeviceUnrealize unrealize;
    DeviceReset reset;
    /* May -device / device_add create it? */
    bool user_creatable;
    /* May it be added or removed while the machine runs? */
    bool hotpluggable;
    /* Bus type this device plugs into; NULL for a bus-less device. */
    const char *bus_type;
    /* Its migration state (include/migration/vmstate.h); NULL: none. */
    const struct VMStateDescription *vmsd;
};

typedef struct DeviceGpioIn {
    qemu_irq *lines;
    int n;
} DeviceGpioIn;

typedef struct DeviceGpioOut {
    qemu_irq *pins;             /* the device's own array of outputs */
    int n;
    qemu_irq *intercepts;       /* lines installed by intercept, or NULL */
} DeviceGpioOut;

struct DeviceState {
    Object parent_obj;

    char *id;                   /* user-given id, or NULL */
    bool realized;
    bool hotplugged;            /* created while the machine was running */
    BusState *parent_bus;
    GList *child_bus;           /* BusState *, in creation order */
    int num_child_bus;
    DeviceGpioIn gpio_in;
    DeviceGpioOut gpio_out;
};

typedef struct BusClass {
    ObjectClass parent_class;

    /*
     * Called when dev is about to be plugged into bus (before realize):
     * check the address properties, assign a free slot, or veto.
     */
    bool (*check_address)(BusState *bus, DeviceState *dev, Error **errp);
    /*
     * Called by qdev_unplug() before dev is unrealized: veto (return
     * false) or prepare the removal.
     */
    bool (*unplug)(BusState *bus, DeviceState *dev, Error **errp);
    /* Bus-level reset, run before its children are reset. */
    void (*reset)(BusState *bus);
    /* Optional: a printable address of dev on this bus ("02.0"). */
    char *(*get_dev_path)(DeviceState *dev);
} BusClass;

struct BusState {
    Object obj;

    char *name;
    DeviceState *parent;        /* the device providing the bus, or NULL */
    GList *children;            /* DeviceState *, in plug order */
    int num_children;
    bool hotplug_allowed;
    bool realized;
    /*
     * Set by a hot-plug controller (a PCIe slot) that removes devices in
     * cooperation with the guest: qdev_unplug() hands the request over and
     * returns; the controller calls qdev_unplug_complete() once the guest
     * released the device, or fails the request with errp.
     */
    bool (*unplug_request)(BusState *bus, DeviceState *dev, Error **errp);
};

#define DEVICE(obj) OBJECT_CHECK(DeviceState, (obj), TYPE_DEVICE)
#define DEVICE_CLASS(klass) OBJECT_CLASS_CHECK(DeviceClass, (klass), TYPE_DEVICE)
#define DEVICE_GET_CLASS(obj) OBJECT_GET_CLASS(DeviceClass, (obj), TYPE_DEVICE)
#define BUS(obj) OBJECT_CHECK(BusState, (obj), TYPE_BUS)
#define BUS_CLASS(klass) OBJECT_CLASS_CHECK(BusClass, (klass), TYPE_BUS)
#define BUS_GET_CLASS(obj) OBJECT_GET_CLASS(BusClass, (obj), TYPE_BUS)

/* Set by the command line once the machine is built; later adds are hotplug. */
extern bool qdev_hotplug;

/* ---- devices ---- */

/* Aborts on an unknown type (programming error); see qdev_try_new(). */
DeviceState *qdev_new(const char *name);
DeviceState *qdev_try_new(const char *name);
/*
 * Plugs dev into bus (may be NULL for bus-less devices) and realizes it.
 * On failure dev is unplugged again and stays unrealized.
 */
bool qdev_realize(DeviceState *dev, BusState *bus, Error **errp);
/*
 * Makes obj the next /machine/unattached/device[N], the canonical home
 * realize gives a board device without a parent (the vCPUs get theirs
 * this way, first, as on QEMU's pc).
 */
void qdev_add_unattached(Object *obj);
/* Same, and drops the caller's reference (the bus/parent keeps it alive). */
bool qdev_realize_and_unref(DeviceState *dev, BusState *bus, Error **errp);
void qdev_unrealize(DeviceState *dev);
/* Detaches a not-yet-realized device from its bus (error unwinding). */
void qdev_set_parent_bus(DeviceState *dev, BusState *bus);

/* Resets one device: its reset method, then its child buses' devices. */
void device_cold_reset(DeviceState *dev);
/* Resets every realized device and runs the qemu_register_reset handlers. */
void qemu_devices_reset(void);
typedef void QEMUResetHandler(void *opaque);
void qemu_register_reset(QEMUResetHandler *func, void *opaque);
void qemu_unregister_reset(QEMUResetHandler *func, void *opaque);

void device_class_set_props(DeviceClass *dc, const Property *props);

/* The machine object (/machine); NULL before it exists. */
Object *qdev_get_machine(void);
/* Finds a user device by id (under /machine/peripheral); NULL if none. */
DeviceState *qdev_find_by_id(const char *id);
/*
 * Creates, configures and realizes a device from options (driver=, id=,
 * bus=, and properties).  Shared by -device and QMP device_add.  On
 * failure nothing is left behind.  Returns a borrowed pointer (the QOM
 * tree owns the device).
 */
DeviceState *qdev_device_add(QemuOpts *opts, Error **errp);
/*
 * Removes a device: bus veto/prepare, unrealize, unparent, then the
 * DEVICE_DELETED event.  Refused, as by QEMU, unless the device is
 * hot-pluggable and sits on a bus that allows hot-plug ("Bus '%s' does not
 * support hotplugging" / "Device '%s' does not support hotplugging"); a
 * device on no bus is part of the board and is never removed.  On a bus
 * with an unplug_request handler the removal is only requested (true:
 * accepted, completed later).
 */
bool qdev_unplug(DeviceState *dev, Error **errp);
/* Unrealize, unparent, DEVICE_DELETED: the end of every removal. */
void qdev_unplug_complete(DeviceState *dev);
/* Prints "name  - desc" for every user-creatable device type. */
void qdev_print_device_list(FILE *out);

/* ---- GPIO lines ---- */

/* Creates n input lines; handler(opaque=dev, line, level). */
void qdev_init_gpio_in(DeviceState *dev, qemu_irq_handler handler, int n);
qemu_irq qdev_get_gpio_in(DeviceState *dev, int n);
/* Declares that pins[0..n-1] are dev's outputs (initially unconnected). */
void qdev_init_gpio_out(DeviceState *dev, qemu_irq *pins, int n);
void qdev_connect_gpio_out(DeviceState *dev, int n, qemu_irq input_pin);
/* Redirects every input line of dev to handler (gets the line number). */
bool qdev_intercept_gpio_in(DeviceState *dev, qemu_irq_handler handler,
                            void *opaque, Error **errp);
/* Routes every output of dev to handler instead of what it was wired to. */
bool qdev_intercept_gpio_out(DeviceState *dev, qemu_irq_handler handler,
                             void *opaque, Error **errp);

/* ---- buses ---- */

/* name NULL: "<parent id or type>.<n>". */
BusState *qbus_new(const char *typename, DeviceState *parent,
                   const char *name);
/* Finds a bus by name ("pci.0") or by a path ending in the name. */
BusState *qbus_find(const char *path, Error **errp);
/* The first bus (in creation order) of the given type, or NULL. */
BusState *qbus_find_by_type(const char *typename);
void qbus_reset_all(BusState *bus);

#endif
