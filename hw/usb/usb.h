/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The USB device model shared by the host controllers (hcd-uhci.c,
 * hcd-xhci.c) and the devices (hid.c).  Private to hw/usb/.
 *
 * A host controller owns a "usb-bus" (named "<controller id>.0", as in
 * QEMU) with a fixed number of root ports; a USB device (usb-tablet,
 * usb-kbd) plugs into the first free port, or the one its "port"
 * property names, and is attached (connected) from realize to unrealize.
 * Devices are full speed and sit on root ports (no hubs).
 *
 * Transfers: the controller hands a device one packet at a time
 * (usb_device_handle_packet): a token PID, an endpoint and a buffer.
 * Endpoint 0 runs the control state machine here (SETUP, data stage,
 * status stage, USB 2.0 9.3 and 8.5.3) and calls the device's
 * handle_control for the request; other endpoints go to handle_data.
 * Everything runs in the main loop with the BQL held.
 */
#ifndef HW_USB_USB_H
#define HW_USB_USB_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/qdev-core.h"

#define TYPE_USB_BUS "usb-bus"
#define TYPE_USB_DEVICE "usb-device"

#define USB_TOKEN_SETUP 0x2d
#define USB_TOKEN_IN 0x69
#define USB_TOKEN_OUT 0xe1

/* Results of a packet (>= 0: bytes transferred). */
#define USB_RET_NODEV (-1)
#define USB_RET_NAK (-2)
#define USB_RET_STALL (-3)
#define USB_RET_BABBLE (-4)

#define USB_SPEED_LOW 0
#define USB_SPEED_FULL 1
#define USB_SPEED_HIGH 2

#define USB_MAX_PORTS 16
#define USB_CTRL_BUF 4096

typedef struct USBDevice USBDevice;
typedef struct USBBus USBBus;

/* A controller's view of its root ports. */
typedef struct USBPortOps {
    /* A device was attached to / detached from port index (0-based). */
    void (*attach)(USBBus *bus, unsigned port);
    void (*detach)(USBBus *bus, unsigned port);
    /* A device has data for an interrupt IN endpoint (no more NAK). */
    void (*wakeup)(USBBus *bus, unsigned port, unsigned ep);
} USBPortOps;

struct USBBus {
    BusState qbus;
    unsigned nports;
    USBDevice *port_dev[USB_MAX_PORTS];
    const USBPortOps *ops;
    void *opaque;               /* the controller */
};

/* The setup packet (USB 2.0 9.3), host byte order. */
typedef struct USBSetup {
    uint8_t bmRequestType;
    uint8_t bRequest;
    uint16_t wValue;
    uint16_t wIndex;
    uint16_t wLength;
} USBSetup;

typedef struct USBDeviceClass {
    DeviceClass parent_class;
    /* Descriptors: device (18 bytes) and configuration (full set). */
    const uint8_t *device_desc;
    const uint8_t *config_desc;
    unsigned config_desc_len;
    const char *const *strings;     /* index 1.. ; NULL-terminated */
    /*
     * A request the core does not handle (class requests, HID report
     * descriptors).  IN: fill data (up to USB_CTRL_BUF) and return the
     * length; OUT: data holds wLength bytes.  USB_RET_STALL to refuse.
     */
    int (*handle_control)(USBDevice *dev, const USBSetup *s, uint8_t *data);
    /* A packet for endpoint ep (1..15): bytes, or USB_RET_NAK/STALL. */
    int (*handle_data)(USBDevice *dev, int pid, unsigned ep, uint8_t *buf,
                       unsigned len);
    /* Bus reset, SET_CONFIGURATION: back to the initial state. */
    void (*handle_reset)(USBDevice *dev);
} USBDeviceClass;

typedef enum USBCtrlState {
    USB_CTRL_IDLE,
    USB_CTRL_DATA_IN,       /* IN data stage, then OUT status */
    USB_CTRL_DATA_OUT,      /* OUT data stage, then IN status */
    USB_CTRL_STATUS_IN,     /* IN status stage (no-data or after OUT data) */
} USBCtrlState;

struct USBDevice {
    DeviceState parent_obj;

    USBBus *bus;
    int port;                   /* 0-based root port, -1 if none */
    uint8_t addr;
    uint8_t pending_addr;       /* SET_ADDRESS, applied after its status */
    bool addr_pending;
    uint8_t configuration;
    bool remote_wakeup;
    uint16_t halted;            /* endpoint halt bits, IN endpoints 1..15 */
    int speed;

    USBCtrlState ctrl_state;
    USBSetup setup;
    uint8_t ctrl_buf[USB_CTRL_BUF];
    unsigned ctrl_len;          /* bytes of the data stage */
    unsigned ctrl_pos;
    bool ctrl_stalled;

    /* Properties. */
    char *port_prop;            /* "port": 1-based root port number */
    char *serial;
};

#define USB_BUS(obj) OBJECT_CHECK(USBBus, (obj), TYPE_USB_BUS)
#define USB_DEVICE(obj) OBJECT_CHECK(USBDevice, (obj), TYPE_USB_DEVICE)
#define USB_DEVICE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(USBDeviceClass, (obj), TYPE_USB_DEVICE)
#define USB_DEVICE_CLASS(klass) \
    OBJECT_CLASS_CHECK(USBDeviceClass, (klass), TYPE_USB_DEVICE)

/*
 * The state every USB device carries (address, configuration, halts, a
 * control transfer in progress), for a device's own description to
 * embed as VMSTATE_STRUCT(parent_obj, ...); also the default of a USB
 * device that has nothing more.
 */
extern const struct VMStateDescription vmstate_usb_device;

/* Creates a controller's bus ("<id>.0") with nports root ports. */
USBBus *usb_bus_new(DeviceState *hc, unsigned nports, const USBPortOps *ops,
                    void *opaque);
/* The device on a root port that answers address addr, or NULL. */
USBDevice *usb_bus_find(USBBus *bus, uint8_t addr);

/* Bus reset of one device (port reset): address 0, unconfigured. */
void usb_device_reset(USBDevice *dev);
/*
 * One packet: pid SETUP/IN/OUT to endpoint ep (0..15) with buf of len
 * bytes (SETUP: 8).  Returns bytes transferred or USB_RET_*.
 */
int usb_device_handle_packet(USBDevice *dev, int pid, unsigned ep,
                             uint8_t *buf, unsigned len);
/* A device with new data for ep tells its controller. */
void usb_device_wakeup(USBDevice *dev, unsigned ep);

/* Pure: parses 8 setup bytes. */
void usb_setup_parse(const uint8_t raw[8], USBSetup *s);

/* HID boot keyboard usage of a QEMU qcode ("a", "ret", "shift"), or 0. */
uint8_t usb_hid_usage_of_qcode(const char *qcode);

#endif
