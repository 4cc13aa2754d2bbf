/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The USB bus, the device base type and the default control pipe
 * (usb.h).  Written from the USB 2.0 specification, chapter 9 (device
 * framework, standard requests) and 8.5.3 (control transfers).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "hw/usb/usb.h"
#include "trace.h"

/* Standard requests (USB 2.0 table 9-4). */
#define REQ_GET_STATUS 0
#define REQ_CLEAR_FEATURE 1
#define REQ_SET_FEATURE 3
#define REQ_SET_ADDRESS 5
#define REQ_GET_DESCRIPTOR 6
#define REQ_GET_CONFIGURATION 8
#define REQ_SET_CONFIGURATION 9
#define REQ_GET_INTERFACE 10
#define REQ_SET_INTERFACE 11

#define DESC_DEVICE 1
#define DESC_CONFIG 2
#define DESC_STRING 3

#define FEATURE_ENDPOINT_HALT 0
#define FEATURE_REMOTE_WAKEUP 1

void usb_setup_parse(const uint8_t raw[8], USBSetup *s)
{
    s->bmRequestType = raw[0];
    s->bRequest = raw[1];
    s->wValue = raw[2] | (raw[3] << 8);
    s->wIndex = raw[4] | (raw[5] << 8);
    s->wLength = raw[6] | (raw[7] << 8);
}

/* ---- the bus ----------------------------------------------------------- */

USBBus *usb_bus_new(DeviceState *hc, unsigned nports, const USBPortOps *ops,
                    void *opaque)
{
    static unsigned anon_buses;
    g_autofree char *name = NULL;
    USBBus *bus;

    /* A controller without an id gets QEMU's "usb-bus.N". */
    if (!hc->id) {
        name = g_strdup_printf("%s.%u", TYPE_USB_BUS, anon_buses++);
    }
    bus = USB_BUS(qbus_new(TYPE_USB_BUS, hc, name));

    assert(nports <= USB_MAX_PORTS);
    bus->nports = nports;
    bus->ops = ops;
    bus->opaque = opaque;
    bus->qbus.hotplug_allowed = true;
    return bus;
}

USBDevice *usb_bus_find(USBBus *bus, uint8_t addr)
{
    for (unsigned i = 0; i < bus->nports; i++) {
        USBDevice *d = bus->port_dev[i];

        if (d && d->addr == addr) {
            return d;
        }
    }
    return NULL;
}

/* ---- standard requests ------------------------------------------------- */

static int usb_string_desc(USBDevice *dev, unsigned index, uint8_t *data)
{
    USBDeviceClass *uc = USB_DEVICE_GET_CLASS(dev);
    const char *str = NULL;
    unsigned n;

    if (index == 0) {
        /* LANGID table: US English. */
        data[0] = 4;
        data[1] = DESC_STRING;
        data[2] = 0x09;
        data[3] = 0x04;
        return 4;
    }
    if (index == 3 && dev->serial) {
        str = dev->serial;
    } else {
        for (unsigned i = 1; uc->strings && uc->strings[i - 1]; i++) {
            if (i == index) {
                str = uc->strings[i - 1];
                break;
            }
        }
    }
    if (!str) {
        return USB_RET_STALL;
    }
    /* UTF-16LE of an ASCII string, at most 126 characters. */
    n = MIN(strlen(str), 126);
    data[0] = 2 + 2 * n;
    data[1] = DESC_STRING;
    for (unsigned i = 0; i < n; i++) {
        data[2 + 2 * i] = str[i];
        data[3 + 2 * i] = 0;
    }
    return 2 + 2 * n;
}

/* A request with its OUT data, or filling data for IN; bytes or STALL. */
static int usb_do_request(USBDevice *dev, const USBSetup *s, uint8_t *data)
{
    USBDeviceClass *uc = USB_DEVICE_GET_CLASS(dev);
    uint8_t type = s->bmRequestType;

    trace_usb_request(DEVICE(dev)->id ? DEVICE(dev)->id : "", dev->addr,
                      type, s->bRequest, s->wValue, s->wIndex, s->wLength);
    switch ((type << 8) | s->bRequest) {
    case (0x80 << 8) | REQ_GET_DESCRIPTOR:
        switch (s->wValue >> 8) {
        case DESC_DEVICE:
            memcpy(data, uc->device_desc, 18);
            return 18;
        case DESC_CONFIG:
            if ((s->wValue & 0xff) != 0) {
                return USB_RET_STALL;
            }
            memcpy(data, uc->config_desc, uc->config_desc_len);
            return uc->config_desc_len;
        case DESC_STRING:
            return usb_string_desc(dev, s->wValue & 0xff, data);
        default:
            /* Device qualifier, other speed: a full-speed-only device. */
            return USB_RET_STALL;
        }
    case (0x00 << 8) | REQ_SET_ADDRESS:
        if (s->wValue > 127) {
            return USB_RET_STALL;
        }
        /* Takes effect once the status stage is done (9.4.6). */
        dev->pending_addr = s->wValue;
        dev->addr_pending = true;
        return 0;
    case (0x80 << 8) | REQ_GET_CONFIGURATION:
        data[0] = dev->configuration;
        return 1;
    case (0x00 << 8) | REQ_SET_CONFIGURATION:
        if (s->wValue > 1) {
            return USB_RET_STALL;
        }
        dev->configuration = s->wValue;
        dev->halted = 0;
        if (uc->handle_reset) {
            uc->handle_reset(dev);
        }
        return 0;
    case (0x80 << 8) | REQ_GET_STATUS:
        /* Bus powered; remote wakeup if enabled. */
        data[0] = dev->remote_wakeup ? 2 : 0;
        data[1] = 0;
        return 2;
    case (0x81 << 8) | REQ_GET_STATUS:
        data[0] = data[1] = 0;
        return 2;
    case (0x82 << 8) | REQ_GET_STATUS:
        data[0] = (dev->halted >> (s->wIndex & 0xf)) & 1;
        data[1] = 0;
        return 2;
    case (0x00 << 8) | REQ_SET_FEATURE:
    case (0x00 << 8) | REQ_CLEAR_FEATURE:
        if (s->wValue != FEATURE_REMOTE_WAKEUP) {
            return USB_RET_STALL;
        }
        dev->remote_wakeup = s->bRequest == REQ_SET_FEATURE;
        return 0;
    case (0x02 << 8) | REQ_SET_FEATURE:
    case (0x02 << 8) | REQ_CLEAR_FEATURE:
        if (s->wValue != FEATURE_ENDPOINT_HALT || !(s->wIndex & 0xf)) {
            return s->wValue == FEATURE_ENDPOINT_HALT ? 0 : USB_RET_STALL;
        }
        if (s->bRequest == REQ_SET_FEATURE) {
            dev->halted |= 1u << (s->wIndex & 0xf);
        } else {
            dev->halted &= ~(1u << (s->wIndex & 0xf));
        }
        return 0;
    case (0x81 << 8) | REQ_GET_INTERFACE:
        data[0] = 0;
        return 1;
    case (0x01 << 8) | REQ_SET_INTERFACE:
        /* One alternate setting per interface. */
        return s->wValue == 0 ? 0 : USB_RET_STALL;
    default:
        return uc->handle_control ? uc->handle_control(dev, s, data)
                                  : USB_RET_STALL;
    }
}

/* ---- the default control pipe ------------------------------------------ */

static int usb_control_setup(USBDevice *dev, const uint8_t *buf, unsigned len)
{
    USBSetup *s = &dev->setup;
    int r;

    if (len != 8) {
        return USB_RET_STALL;
    }
    usb_setup_parse(buf, s);
    dev->ctrl_stalled = false;
    dev->ctrl_pos = 0;
    if (s->bmRequestType & 0x80) {
        memset(dev->ctrl_buf, 0, sizeof(dev->ctrl_buf));
        r = usb_do_request(dev, s, dev->ctrl_buf);
        if (r < 0) {
            dev->ctrl_stalled = true;
            dev->ctrl_state = USB_CTRL_IDLE;
        } else {
            dev->ctrl_len = MIN((unsigned)r, s->wLength);
            dev->ctrl_state = USB_CTRL_DATA_IN;
        }
    } else if (s->wLength == 0) {
        r = usb_do_request(dev, s, dev->ctrl_buf);
        dev->ctrl_stalled = r < 0;
        dev->ctrl_state = r < 0 ? USB_CTRL_IDLE : USB_CTRL_STATUS_IN;
    } else if (s->wLength > sizeof(dev->ctrl_buf)) {
        dev->ctrl_stalled = true;
        dev->ctrl_state = USB_CTRL_IDLE;
    } else {
        dev->ctrl_len = s->wLength;
        dev->ctrl_state = USB_CTRL_DATA_OUT;
    }
    /* A SETUP is always acknowledged; a refusal stalls the next stage. */
    return 8;
}

static int usb_control_in(USBDevice *dev, uint8_t *buf, unsigned len)
{
    unsigned n;
    int r;

    if (dev->ctrl_stalled) {
        return USB_RET_STALL;
    }
    switch (dev->ctrl_state) {
    case USB_CTRL_DATA_IN:
        n = MIN(len, dev->ctrl_len - dev->ctrl_pos);
        memcpy(buf, dev->ctrl_buf + dev->ctrl_pos, n);
        dev->ctrl_pos += n;
        return n;
    case USB_CTRL_DATA_OUT:
        /* Status stage after the OUT data: now the request runs. */
        if (dev->ctrl_pos != dev->ctrl_len) {
            dev->ctrl_state = USB_CTRL_IDLE;
            return USB_RET_STALL;
        }
        r = usb_do_request(dev, &dev->setup, dev->ctrl_buf);
        dev->ctrl_state = USB_CTRL_IDLE;
        return r < 0 ? USB_RET_STALL : 0;
    case USB_CTRL_STATUS_IN:
        dev->ctrl_state = USB_CTRL_IDLE;
        if (dev->addr_pending) {
            dev->addr = dev->pending_addr;
            dev->addr_pending = false;
            trace_usb_set_address(DEVICE(dev)->id ? DEVICE(dev)->id : "",
                                  dev->addr);
        }
        return 0;
    default:
        return USB_RET_STALL;
    }
}

static int usb_control_out(USBDevice *dev, const uint8_t *buf, unsigned len)
{
    unsigned n;

    if (dev->ctrl_stalled) {
        return USB_RET_STALL;
    }
    switch (dev->ctrl_state) {
    case USB_CTRL_DATA_OUT:
        n = MIN(len, dev->ctrl_len - dev->ctrl_pos);
        memcpy(dev->ctrl_buf + dev->ctrl_pos, buf, n);
        dev->ctrl_pos += n;
        return n;
    case USB_CTRL_DATA_IN:
        /* Status stage of an IN request (the host may end data early). */
        dev->ctrl_state = USB_CTRL_IDLE;
        return 0;
    default:
        return USB_RET_STALL;
    }
}

int usb_device_handle_packet(USBDevice *dev, int pid, unsigned ep,
                             uint8_t *buf, unsigned len)
{
    USBDeviceClass *uc = USB_DEVICE_GET_CLASS(dev);

    if (ep == 0) {
        switch (pid) {
        case USB_TOKEN_SETUP:
            return usb_control_setup(dev, buf, len);
        case USB_TOKEN_IN:
            return usb_control_in(dev, buf, len);
        case USB_TOKEN_OUT:
            return usb_control_out(dev, buf, len);
        }
        return USB_RET_STALL;
    }
    if (ep > 15 || pid == USB_TOKEN_SETUP || !dev->configuration ||
        (dev->halted & (1u << ep)) || !uc->handle_data) {
        return USB_RET_STALL;
    }
    return uc->handle_data(dev, pid, ep, buf, len);
}

void usb_device_reset(USBDevice *dev)
{
    USBDeviceClass *uc = USB_DEVICE_GET_CLASS(dev);

    dev->addr = 0;
    dev->addr_pending = false;
    dev->configuration = 0;
    dev->remote_wakeup = false;
    dev->halted = 0;
    dev->ctrl_state = USB_CTRL_IDLE;
    dev->ctrl_stalled = false;
    if (uc->handle_reset) {
        uc->handle_reset(dev);
    }
}

void usb_device_wakeup(USBDevice *dev, unsigned ep)
{
    if (dev->bus && dev->port >= 0 && dev->bus->ops->wakeup) {
        dev->bus->ops->wakeup(dev->bus, dev->port, ep);
    }
}

/* ---- device life cycle ------------------------------------------------- */

static bool usb_device_realize(DeviceState *d, Error **errp)
{
    USBDevice *dev = USB_DEVICE(d);
    USBBus *bus = d->parent_bus ? USB_BUS(d->parent_bus) : NULL;
    const char *type = object_get_typename(OBJECT(d));
    int port = -1;

    if (!bus) {
        error_setg(errp, "%s: no USB bus", type);
        return false;
    }
    if (dev->port_prop) {
        char *end;
        long p = strtol(dev->port_prop, &end, 10);

        if (*end || p < 1 || p > bus->nports || bus->port_dev[p - 1]) {
            error_setg(errp, "Error: usb port %s (bus %s) not found (in "
                       "use?)", dev->port_prop, bus->qbus.name);
            return false;
        }
        port = p - 1;
    } else {
        for (unsigned i = 0; i < bus->nports; i++) {
            if (!bus->port_dev[i]) {
                port = i;
                break;
            }
        }
        if (port < 0) {
            error_setg(errp, "Error: tried to attach usb device %s to a bus "
                       "with no free ports", type);
            return false;
        }
    }
    dev->bus = bus;
    dev->port = port;
    dev->speed = USB_SPEED_FULL;
    usb_device_reset(dev);
    bus->port_dev[port] = dev;
    trace_usb_attach(bus->qbus.name, port + 1, type);
    if (bus->ops->attach) {
        bus->ops->attach(bus, port);
    }
    return true;
}

static void usb_device_unrealize(DeviceState *d)
{
    USBDevice *dev = USB_DEVICE(d);
    USBBus *bus = dev->bus;

    if (!bus || dev->port < 0) {
        return;
    }
    bus->port_dev[dev->port] = NULL;
    trace_usb_detach(bus->qbus.name, dev->port + 1);
    if (bus->ops->detach) {
        bus->ops->detach(bus, dev->port);
    }
    dev->port = -1;
    dev->bus = NULL;
}

static const Property usb_device_props[] = {
    DEFINE_PROP_STRING("port", USBDevice, port_prop,
                       .description = "root port number (1-based; default "
                                      "the first free one)"),
    DEFINE_PROP_STRING("serial", USBDevice, serial,
                       .description = "serial number string"),
    DEFINE_PROP_END_OF_LIST(),
};

/* ---- migration --------------------------------------------------------- */

static bool usb_device_post_load(void *opaque, int version_id, Error **errp)
{
    USBDevice *dev = opaque;

    if (dev->addr > 127 || dev->pending_addr > 127 ||
        dev->ctrl_pos > dev->ctrl_len) {
        error_setg(errp, "usb-device %s: address %u (pending %u) or control "
                   "transfer position %u of %u out of range",
                   DEVICE(dev)->id ? DEVICE(dev)->id : "(no id)", dev->addr,
                   dev->pending_addr, dev->ctrl_pos, dev->ctrl_len);
        return false;
    }
    return true;
}

const VMStateDescription vmstate_usb_device = {
    .name = "usb-device",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = usb_device_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(addr, USBDevice),
        VMSTATE_UINT8(pending_addr, USBDevice),
        VMSTATE_BOOL(addr_pending, USBDevice),
        VMSTATE_UINT8(configuration, USBDevice),
        VMSTATE_BOOL(remote_wakeup, USBDevice),
        VMSTATE_UINT16(halted, USBDevice),
        VMSTATE_UINT32_MAX(ctrl_state, USBDevice, USB_CTRL_STATUS_IN),
        VMSTATE_UINT8(setup.bmRequestType, USBDevice),
        VMSTATE_UINT8(setup.bRequest, USBDevice),
        VMSTATE_UINT16(setup.wValue, USBDevice),
        VMSTATE_UINT16(setup.wIndex, USBDevice),
        VMSTATE_UINT16(setup.wLength, USBDevice),
        VMSTATE_BUFFER(ctrl_buf, USBDevice),
        VMSTATE_UINT32_MAX(ctrl_len, USBDevice, USB_CTRL_BUF),
        VMSTATE_UINT32(ctrl_pos, USBDevice),
        VMSTATE_BOOL(ctrl_stalled, USBDevice),
        VMSTATE_END_OF_LIST()
    },
};

static void usb_device_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    device_class_set_props(dc, usb_device_props);
    dc->bus_type = TYPE_USB_BUS;
    dc->realize = usb_device_realize;
    dc->unrealize = usb_device_unrealize;
    dc->hotpluggable = true;
    dc->vmsd = &vmstate_usb_device;
}

static void usb_device_init(Object *obj)
{
    USB_DEVICE(obj)->port = -1;
}

static const TypeInfo usb_core_types[] = {
    {
        .name = TYPE_USB_BUS,
        .parent = TYPE_BUS,
        .instance_size = sizeof(USBBus),
        .class_size = sizeof(BusClass),
    },
    {
        .name = TYPE_USB_DEVICE,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(USBDevice),
        .instance_init = usb_device_init,
        .class_size = sizeof(USBDeviceClass),
        .class_init = usb_device_class_init,
        .abstract = true,
    },
};

DEFINE_TYPES(usb_core_types)
