/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * USB HID devices with QEMU's names: usb-tablet (absolute pointer, 0 to
 * 0x7fff on both axes, three buttons and a wheel), usb-kbd (a boot
 * protocol keyboard) and usb-mouse (relative).  Written from the HID
 * 1.11 specification (class requests 7.2, the boot keyboard report of
 * appendix B) and HID Usage Tables.
 *
 * Input arrives with QMP input-send-event (QEMU's InputEvent shapes:
 * key/btn/abs/rel); each command is one report per device that takes
 * part.  Reports wait in a small queue for the interrupt IN endpoint,
 * which NAKs while it is empty (idle rate 0, as Linux asks).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "monitor/monitor.h"
#include "hw/usb/usb.h"
#include "hw/input/input.h"
#include "trace.h"

#define TYPE_USB_HID "usb-hid"
#define USB_HID(obj) OBJECT_CHECK(USBHIDState, (obj), TYPE_USB_HID)

#define HID_REQ_GET_REPORT 0x01
#define HID_REQ_GET_IDLE 0x02
#define HID_REQ_GET_PROTOCOL 0x03
#define HID_REQ_SET_REPORT 0x09
#define HID_REQ_SET_IDLE 0x0a
#define HID_REQ_SET_PROTOCOL 0x0b
#define DESC_HID 0x21
#define DESC_REPORT 0x22

#define HID_QUEUE 16
#define HID_REPORT_MAX 8
#define ABS_MAX 0x7fff

typedef enum HIDKind { HID_TABLET, HID_KEYBOARD, HID_MOUSE } HIDKind;

typedef struct USBHIDState {
    USBDevice parent_obj;

    HIDKind kind;
    uint8_t protocol;           /* 0 boot, 1 report */
    uint8_t idle;
    uint8_t leds;
    /* Current state. */
    uint8_t buttons;
    int32_t x, y;               /* tablet: absolute */
    int32_t dx, dy, dz;         /* mouse and wheel: accumulated */
    uint8_t modifiers;
    uint8_t keys[6];
    /* Reports not yet fetched by the host. */
    uint8_t queue[HID_QUEUE][HID_REPORT_MAX];
    unsigned head, count;
    uint64_t reports_sent;
} USBHIDState;

typedef struct USBHIDClass {
    USBDeviceClass parent_class;
    HIDKind kind;
    const uint8_t *report_desc;
    unsigned report_desc_len;
    unsigned report_len;
} USBHIDClass;

#define USB_HID_GET_CLASS(obj) \
    OBJECT_GET_CLASS(USBHIDClass, (obj), TYPE_USB_HID)
#define USB_HID_CLASS(klass) \
    OBJECT_CLASS_CHECK(USBHIDClass, (klass), TYPE_USB_HID)

/* ---- descriptors ------------------------------------------------------- */

static const uint8_t tablet_report_desc[] = {
    0x05, 0x01,         /* Usage Page (Generic Desktop) */
    0x09, 0x02,         /* Usage (Mouse) */
    0xa1, 0x01,         /* Collection (Application) */
    0x09, 0x01,         /*   Usage (Pointer) */
    0xa1, 0x00,         /*   Collection (Physical) */
    0x05, 0x09,         /*     Usage Page (Button) */
    0x19, 0x01,         /*     Usage Minimum (1) */
    0x29, 0x03,         /*     Usage Maximum (3) */
    0x15, 0x00,         /*     Logical Minimum (0) */
    0x25, 0x01,         /*     Logical Maximum (1) */
    0x95, 0x03,         /*     Report Count (3) */
    0x75, 0x01,         /*     Report Size (1) */
    0x81, 0x02,         /*     Input (Data, Variable, Absolute) */
    0x95, 0x01,         /*     Report Count (1) */
    0x75, 0x05,         /*     Report Size (5) */
    0x81, 0x01,         /*     Input (Constant) */
    0x05, 0x01,         /*     Usage Page (Generic Desktop) */
    0x09, 0x30,         /*     Usage (X) */
    0x09, 0x31,         /*     Usage (Y) */
    0x15, 0x00,         /*     Logical Minimum (0) */
    0x26, 0xff, 0x7f,   /*     Logical Maximum (32767) */
    0x35, 0x00,         /*     Physical Minimum (0) */
    0x46, 0xff, 0x7f,   /*     Physical Maximum (32767) */
    0x75, 0x10,         /*     Report Size (16) */
    0x95, 0x02,         /*     Report Count (2) */
    0x81, 0x02,         /*     Input (Data, Variable, Absolute) */
    0x05, 0x01,         /*     Usage Page (Generic Desktop) */
    0x09, 0x38,         /*     Usage (Wheel) */
    0x15, 0x81,         /*     Logical Minimum (-127) */
    0x25, 0x7f,         /*     Logical Maximum (127) */
    0x35, 0x00,         /*     Physical Minimum (0) */
    0x45, 0x00,         /*     Physical Maximum (0) */
    0x75, 0x08,         /*     Report Size (8) */
    0x95, 0x01,         /*     Report Count (1) */
    0x81, 0x06,         /*     Input (Data, Variable, Relative) */
    0xc0,               /*   End Collection */
    0xc0,               /* End Collection */
};

static const uint8_t mouse_report_desc[] = {
    0x05, 0x01, 0x09, 0x02, 0xa1, 0x01, 0x09, 0x01, 0xa1, 0x00,
    0x05, 0x09, 0x19, 0x01, 0x29, 0x03, 0x15, 0x00, 0x25, 0x01,
    0x95, 0x03, 0x75, 0x01, 0x81, 0x02, 0x95, 0x01, 0x75, 0x05,
    0x81, 0x01,
    0x05, 0x01,         /* Usage Page (Generic Desktop) */
    0x09, 0x30,         /* Usage (X) */
    0x09, 0x31,         /* Usage (Y) */
    0x09, 0x38,         /* Usage (Wheel) */
    0x15, 0x81,         /* Logical Minimum (-127) */
    0x25, 0x7f,         /* Logical Maximum (127) */
    0x75, 0x08,         /* Report Size (8) */
    0x95, 0x03,         /* Report Count (3) */
    0x81, 0x06,         /* Input (Data, Variable, Relative) */
    0xc0, 0xc0,
};

/* The boot keyboard (HID 1.11 appendix B.1): modifiers, reserved, 6 keys. */
static const uint8_t kbd_report_desc[] = {
    0x05, 0x01,         /* Usage Page (Generic Desktop) */
    0x09, 0x06,         /* Usage (Keyboard) */
    0xa1, 0x01,         /* Collection (Application) */
    0x05, 0x07,         /*   Usage Page (Key Codes) */
    0x19, 0xe0,         /*   Usage Minimum (224) */
    0x29, 0xe7,         /*   Usage Maximum (231) */
    0x15, 0x00,         /*   Logical Minimum (0) */
    0x25, 0x01,         /*   Logical Maximum (1) */
    0x75, 0x01,         /*   Report Size (1) */
    0x95, 0x08,         /*   Report Count (8) */
    0x81, 0x02,         /*   Input (Data, Variable, Absolute): modifiers */
    0x95, 0x01,         /*   Report Count (1) */
    0x75, 0x08,         /*   Report Size (8) */
    0x81, 0x01,         /*   Input (Constant): reserved */
    0x95, 0x05,         /*   Report Count (5) */
    0x75, 0x01,         /*   Report Size (1) */
    0x05, 0x08,         /*   Usage Page (LEDs) */
    0x19, 0x01,         /*   Usage Minimum (1) */
    0x29, 0x05,         /*   Usage Maximum (5) */
    0x91, 0x02,         /*   Output (Data, Variable, Absolute): LEDs */
    0x95, 0x01,         /*   Report Count (1) */
    0x75, 0x03,         /*   Report Size (3) */
    0x91, 0x01,         /*   Output (Constant) */
    0x95, 0x06,         /*   Report Count (6) */
    0x75, 0x08,         /*   Report Size (8) */
    0x15, 0x00,         /*   Logical Minimum (0) */
    0x25, 0xff,         /*   Logical Maximum (255) */
    0x05, 0x07,         /*   Usage Page (Key Codes) */
    0x19, 0x00,         /*   Usage Minimum (0) */
    0x29, 0xff,         /*   Usage Maximum (255) */
    0x81, 0x00,         /*   Input (Data, Array): key codes */
    0xc0,               /* End Collection */
};

/* Device descriptor: full speed, 64-byte control endpoint. */
#define HID_DEVICE_DESC(product)                                          \
    { 18, 1, 0x00, 0x02, 0, 0, 0, 64,                                     \
      0x27, 0x06, (product) & 0xff, (product) >> 8, 0x00, 0x00,           \
      1, 2, 3, 1 }

static const uint8_t mouse_device_desc[18] = HID_DEVICE_DESC(0x0001);
static const uint8_t tablet_device_desc[18] = HID_DEVICE_DESC(0x0001);
static const uint8_t kbd_device_desc[18] = HID_DEVICE_DESC(0x0001);

/* Configuration + interface + HID + endpoint (34 bytes). */
#define HID_CONFIG_DESC(subclass, protocol, rlen, maxp)                   \
    { 9, 2, 34, 0, 1, 1, 4, 0xa0, 50,                                     \
      9, 4, 0, 0, 1, 3, (subclass), (protocol), 0,                        \
      9, DESC_HID, 0x01, 0x01, 0, 1, DESC_REPORT, (rlen) & 0xff,          \
      (rlen) >> 8,                                                        \
      7, 5, 0x81, 3, (maxp), 0, 10 }

static const uint8_t tablet_config_desc[34] =
    HID_CONFIG_DESC(0, 0, sizeof(tablet_report_desc), 8);
static const uint8_t mouse_config_desc[34] =
    HID_CONFIG_DESC(1, 2, sizeof(mouse_report_desc), 4);
static const uint8_t kbd_config_desc[34] =
    HID_CONFIG_DESC(1, 1, sizeof(kbd_report_desc), 8);

static const char *const tablet_strings[] = {
    "QEMU", "QEMU USB Tablet", "28754", "HID Tablet", NULL,
};
static const char *const mouse_strings[] = {
    "QEMU", "QEMU USB Mouse", "89126", "HID Mouse", NULL,
};
static const char *const kbd_strings[] = {
    "QEMU", "QEMU USB Keyboard", "68284", "HID Keyboard", NULL,
};

/* ---- reports ----------------------------------------------------------- */

static unsigned hid_build_report(USBHIDState *h, uint8_t *r)
{
    switch (h->kind) {
    case HID_TABLET:
        r[0] = h->buttons;
        r[1] = h->x & 0xff;
        r[2] = h->x >> 8;
        r[3] = h->y & 0xff;
        r[4] = h->y >> 8;
        r[5] = (uint8_t)(int8_t)CLAMP(-h->dz, -127, 127);
        h->dz = 0;
        return 6;
    case HID_MOUSE:
        r[0] = h->buttons;
        r[1] = (uint8_t)(int8_t)CLAMP(h->dx, -127, 127);
        r[2] = (uint8_t)(int8_t)CLAMP(h->dy, -127, 127);
        r[3] = (uint8_t)(int8_t)CLAMP(-h->dz, -127, 127);
        h->dx = h->dy = h->dz = 0;
        return 4;
    case HID_KEYBOARD:
        r[0] = h->modifiers;
        r[1] = 0;
        memcpy(r + 2, h->keys, 6);
        return 8;
    }
    return 0;
}

static void hid_queue_report(USBHIDState *h)
{
    USBHIDClass *hc = USB_HID_GET_CLASS(h);
    uint8_t *slot;

    if (h->count == HID_QUEUE) {
        /* Full: the newest state replaces the last queued report. */
        slot = h->queue[(h->head + h->count - 1) % HID_QUEUE];
    } else {
        slot = h->queue[(h->head + h->count) % HID_QUEUE];
        h->count++;
    }
    memset(slot, 0, HID_REPORT_MAX);
    hid_build_report(h, slot);
    trace_usb_hid_report(DEVICE(h)->id ? DEVICE(h)->id : "", h->count);
    (void)hc;
    usb_device_wakeup(USB_DEVICE(h), 1);
}

static int hid_handle_data(USBDevice *dev, int pid, unsigned ep,
                           uint8_t *buf, unsigned len)
{
    USBHIDState *h = USB_HID(dev);
    USBHIDClass *hc = USB_HID_GET_CLASS(dev);
    unsigned n;

    if (pid != USB_TOKEN_IN || ep != 1) {
        return USB_RET_STALL;
    }
    if (!h->count) {
        return USB_RET_NAK;
    }
    n = MIN(len, hc->report_len);
    memcpy(buf, h->queue[h->head], n);
    h->head = (h->head + 1) % HID_QUEUE;
    h->count--;
    h->reports_sent++;
    return n;
}

static int hid_handle_control(USBDevice *dev, const USBSetup *s,
                              uint8_t *data)
{
    USBHIDState *h = USB_HID(dev);
    USBHIDClass *hc = USB_HID_GET_CLASS(dev);
    USBDeviceClass *uc = USB_DEVICE_CLASS(hc);

    switch ((s->bmRequestType << 8) | s->bRequest) {
    case (0x81 << 8) | 6:   /* GET_DESCRIPTOR to the interface */
        if ((s->wValue >> 8) == DESC_REPORT) {
            memcpy(data, hc->report_desc, hc->report_desc_len);
            return hc->report_desc_len;
        }
        if ((s->wValue >> 8) == DESC_HID) {
            memcpy(data, uc->config_desc + 18, 9);
            return 9;
        }
        return USB_RET_STALL;
    case (0xa1 << 8) | HID_REQ_GET_REPORT: {
        uint8_t r[HID_REPORT_MAX] = { 0 };
        unsigned n = hid_build_report(h, r);

        memcpy(data, r, n);
        return n;
    }
    case (0xa1 << 8) | HID_REQ_GET_IDLE:
        data[0] = h->idle;
        return 1;
    case (0xa1 << 8) | HID_REQ_GET_PROTOCOL:
        data[0] = h->protocol;
        return 1;
    case (0x21 << 8) | HID_REQ_SET_REPORT:
        /* The keyboard's LEDs (output report). */
        if (h->kind == HID_KEYBOARD && s->wLength >= 1) {
            h->leds = data[0];
        }
        return 0;
    case (0x21 << 8) | HID_REQ_SET_IDLE:
        h->idle = s->wValue >> 8;
        return 0;
    case (0x21 << 8) | HID_REQ_SET_PROTOCOL:
        h->protocol = s->wValue & 1;
        return 0;
    default:
        return USB_RET_STALL;
    }
}

static void hid_handle_reset(USBDevice *dev)
{
    USBHIDState *h = USB_HID(dev);

    h->protocol = 1;
    h->idle = 0;
    h->head = h->count = 0;
}

/* ---- input ------------------------------------------------------------- */

static const struct {
    const char *qcode;
    uint8_t usage;
} qcode_usage[] = {
    { "ret", 0x28 }, { "esc", 0x29 }, { "backspace", 0x2a }, { "tab", 0x2b },
    { "spc", 0x2c }, { "minus", 0x2d }, { "equal", 0x2e },
    { "bracket_left", 0x2f }, { "bracket_right", 0x30 },
    { "backslash", 0x31 }, { "semicolon", 0x33 }, { "apostrophe", 0x34 },
    { "grave_accent", 0x35 }, { "comma", 0x36 }, { "dot", 0x37 },
    { "slash", 0x38 }, { "caps_lock", 0x39 }, { "print", 0x46 },
    { "scroll_lock", 0x47 }, { "pause", 0x48 }, { "insert", 0x49 },
    { "home", 0x4a }, { "pgup", 0x4b }, { "delete", 0x4c }, { "end", 0x4d },
    { "pgdn", 0x4e }, { "right", 0x4f }, { "left", 0x50 }, { "down", 0x51 },
    { "up", 0x52 }, { "num_lock", 0x53 }, { "kp_divide", 0x54 },
    { "kp_multiply", 0x55 }, { "kp_subtract", 0x56 }, { "kp_add", 0x57 },
    { "kp_enter", 0x58 }, { "kp_0", 0x62 }, { "kp_decimal", 0x63 },
    { "less", 0x64 }, { "menu", 0x65 },
    { "ctrl", 0xe0 }, { "shift", 0xe1 }, { "alt", 0xe2 }, { "meta_l", 0xe3 },
    { "ctrl_r", 0xe4 }, { "shift_r", 0xe5 }, { "alt_r", 0xe6 },
    { "meta_r", 0xe7 },
};

uint8_t usb_hid_usage_of_qcode(const char *q)
{
    if (q[0] >= 'a' && q[0] <= 'z' && !q[1]) {
        return 0x04 + (q[0] - 'a');
    }
    if (q[0] >= '1' && q[0] <= '9' && !q[1]) {
        return 0x1e + (q[0] - '1');
    }
    if (!strcmp(q, "0")) {
        return 0x27;
    }
    if (q[0] == 'f' && g_ascii_isdigit(q[1])) {
        int n = atoi(q + 1);

        if (n >= 1 && n <= 12) {
            return 0x3a + n - 1;
        }
    }
    if (!strncmp(q, "kp_", 3) && q[3] >= '1' && q[3] <= '9' && !q[4]) {
        return 0x59 + (q[3] - '1');
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(qcode_usage); i++) {
        if (!strcmp(q, qcode_usage[i].qcode)) {
            return qcode_usage[i].usage;
        }
    }
    return 0;
}

static bool hid_key(USBHIDState *h, uint8_t usage, bool down)
{
    if (usage >= 0xe0 && usage <= 0xe7) {
        uint8_t bit = 1u << (usage - 0xe0);

        h->modifiers = down ? h->modifiers | bit : h->modifiers & ~bit;
        return true;
    }
    for (unsigned i = 0; i < 6; i++) {
        if (h->keys[i] == usage) {
            if (!down) {
                memmove(h->keys + i, h->keys + i + 1, 5 - i);
                h->keys[5] = 0;
            }
            return true;
        }
    }
    if (down) {
        for (unsigned i = 0; i < 6; i++) {
            if (!h->keys[i]) {
                h->keys[i] = usage;
                return true;
            }
        }
    }
    return true;
}

static void hid_collect(Object *obj, GSList **list)
{
    if (object_dynamic_cast(obj, TYPE_USB_HID) && DEVICE(obj)->realized) {
        *list = g_slist_append(*list, obj);
    }
}

static int hid_walk(Object *child, void *opaque)
{
    hid_collect(child, opaque);
    return 0;
}

/* One event for every device of the kind that takes it. */
static bool hid_apply_event(GSList *devs, JsonObject *ev, GSList **touched,
                            Error **errp)
{
    const char *type = json_object_has_member(ev, "type")
                       ? json_object_get_string_member(ev, "type") : NULL;
    JsonObject *data = json_object_has_member(ev, "data") &&
                       JSON_NODE_HOLDS_OBJECT(json_object_get_member(ev,
                                                                     "data"))
                       ? json_object_get_object_member(ev, "data") : NULL;

    if (!type || !data) {
        error_setg(errp, "Invalid parameter 'events': each event needs "
                   "'type' and 'data'");
        return false;
    }
    for (GSList *l = devs; l; l = l->next) {
        USBHIDState *h = l->data;
        bool used = false;

        if (!strcmp(type, "key")) {
            JsonObject *key;
            const char *ktype;
            uint8_t usage = 0;

            if (h->kind != HID_KEYBOARD) {
                continue;
            }
            key = json_object_has_member(data, "key")
                  ? json_object_get_object_member(data, "key") : NULL;
            ktype = key && json_object_has_member(key, "type")
                    ? json_object_get_string_member(key, "type") : NULL;
            if (!ktype || !json_object_has_member(data, "down")) {
                error_setg(errp, "Invalid parameter 'events': a key event "
                           "needs 'down' and 'key'");
                return false;
            }
            if (!strcmp(ktype, "qcode")) {
                usage = usb_hid_usage_of_qcode(
                    json_object_get_string_member(key, "data"));
            } else if (!strcmp(ktype, "number")) {
                error_setg(errp, "key numbers are not supported; use a "
                           "qcode");
                return false;
            }
            if (!usage) {
                error_setg(errp, "Invalid parameter 'key': unknown qcode");
                return false;
            }
            used = hid_key(h, usage,
                           json_object_get_boolean_member(data, "down"));
        } else if (!strcmp(type, "btn")) {
            const char *b = json_object_has_member(data, "button")
                            ? json_object_get_string_member(data, "button")
                            : "";
            bool down = json_object_has_member(data, "down") &&
                        json_object_get_boolean_member(data, "down");
            uint8_t bit = !strcmp(b, "left") ? 1 : !strcmp(b, "right") ? 2 :
                          !strcmp(b, "middle") ? 4 : 0;

            if (h->kind == HID_KEYBOARD) {
                continue;
            }
            if (!strcmp(b, "wheel-up") || !strcmp(b, "wheel-down")) {
                if (down) {
                    h->dz += !strcmp(b, "wheel-up") ? -1 : 1;
                }
                used = true;
            } else if (bit) {
                h->buttons = down ? h->buttons | bit : h->buttons & ~bit;
                used = true;
            }
        } else if (!strcmp(type, "abs") || !strcmp(type, "rel")) {
            const char *axis = json_object_has_member(data, "axis")
                               ? json_object_get_string_member(data, "axis")
                               : "";
            int64_t v = json_object_has_member(data, "value")
                        ? json_object_get_int_member(data, "value") : 0;
            bool abs = type[0] == 'a';

            if (h->kind == HID_KEYBOARD ||
                (abs != (h->kind == HID_TABLET))) {
                continue;
            }
            if (!strcmp(axis, "x")) {
                if (abs) {
                    h->x = CLAMP(v, 0, ABS_MAX);
                } else {
                    h->dx += CLAMP(v, -1000, 1000);
                }
                used = true;
            } else if (!strcmp(axis, "y")) {
                if (abs) {
                    h->y = CLAMP(v, 0, ABS_MAX);
                } else {
                    h->dy += CLAMP(v, -1000, 1000);
                }
                used = true;
            }
        } else {
            error_setg(errp, "Invalid parameter 'type': '%s' is not key, btn, "
                       "abs or rel", type);
            return false;
        }
        if (used && !g_slist_find(*touched, h)) {
            *touched = g_slist_append(*touched, h);
        }
    }
    return true;
}

static void hid_input_key(void *opaque, InputKey key, bool down);

/*
 * Without 'device', a key event also goes to the keyboards outside USB
 * (the i8042's): the input layer's key for it, 0 when it is not a key
 * event, false with errp set when the key is unknown.
 */
static bool hid_event_legacy_key(JsonObject *ev, InputKey *key, bool *down,
                                 Error **errp)
{
    JsonObject *data, *kv;
    const char *type, *ktype;
    JsonNode *kdata;

    *key = 0;
    type = json_object_has_member(ev, "type") &&
           JSON_NODE_HOLDS_VALUE(json_object_get_member(ev, "type"))
           ? json_object_get_string_member(ev, "type") : NULL;
    if (!type || strcmp(type, "key") ||
        !json_object_has_member(ev, "data") ||
        !JSON_NODE_HOLDS_OBJECT(json_object_get_member(ev, "data"))) {
        return true;
    }
    data = json_object_get_object_member(ev, "data");
    if (!json_object_has_member(data, "key") ||
        !JSON_NODE_HOLDS_OBJECT(json_object_get_member(data, "key")) ||
        !json_object_has_member(data, "down")) {
        return true;        /* hid_apply_event() names what is missing */
    }
    kv = json_object_get_object_member(data, "key");
    kdata = json_object_get_member(kv, "data");
    ktype = json_object_has_member(kv, "type") &&
            JSON_NODE_HOLDS_VALUE(json_object_get_member(kv, "type"))
            ? json_object_get_string_member(kv, "type") : NULL;
    if (ktype && kdata && JSON_NODE_HOLDS_VALUE(kdata)) {
        if (!strcmp(ktype, "qcode") &&
            json_node_get_value_type(kdata) == G_TYPE_STRING) {
            *key = input_key_from_qcode(json_node_get_string(kdata));
        } else if (!strcmp(ktype, "number") &&
                   json_node_get_value_type(kdata) == G_TYPE_INT64) {
            *key = input_key_from_number(json_node_get_int(kdata));
        }
    }
    if (!*key) {
        error_setg(errp, "Invalid parameter 'key': unknown qcode");
        return false;
    }
    *down = json_object_get_boolean_member(data, "down");
    return true;
}

static void qmp_input_send_event(JsonObject *args, JsonNode **ret,
                                 Error **errp)
{
    JsonArray *events = json_object_get_array_member(args, "events");
    GSList *devs = NULL, *touched = NULL;
    Object *machine = qdev_get_machine();
    bool legacy = !json_object_has_member(args, "device");
    g_autoptr(GArray) legacy_keys = g_array_new(false, false,
                                                sizeof(InputKey));
    g_autoptr(GArray) legacy_down = g_array_new(false, false, sizeof(bool));

    if (machine) {
        object_child_foreach_recursive(machine, hid_walk, &devs);
    }
    if (json_object_has_member(args, "device")) {
        const char *id = json_object_get_string_member(args, "device");
        GSList *only = NULL;

        for (GSList *l = devs; l; l = l->next) {
            if (DEVICE(l->data)->id && !strcmp(DEVICE(l->data)->id, id)) {
                only = g_slist_append(only, l->data);
            }
        }
        g_slist_free(devs);
        devs = only;
        if (!devs) {
            error_setg(errp, "Device '%s' is not an input device", id);
            return;
        }
    }
    for (unsigned i = 0; i < json_array_get_length(events); i++) {
        JsonNode *n = json_array_get_element(events, i);

        if (!JSON_NODE_HOLDS_OBJECT(n)) {
            error_setg(errp, "Invalid parameter 'events': expected objects");
            goto out;
        }
        if (legacy) {
            InputKey key;
            bool down;

            if (!hid_event_legacy_key(json_node_get_object(n), &key, &down,
                                      errp)) {
                goto out;
            }
            if (key) {
                g_array_append_val(legacy_keys, key);
                g_array_append_val(legacy_down, down);
            }
        }
        if (!hid_apply_event(devs, json_node_get_object(n), &touched, errp)) {
            goto out;
        }
    }
    /* Like a sync: one report per device whose state moved. */
    for (GSList *l = touched; l; l = l->next) {
        hid_queue_report(l->data);
    }
    for (guint i = 0; i < legacy_keys->len; i++) {
        input_key_event_except(g_array_index(legacy_keys, InputKey, i),
                               g_array_index(legacy_down, bool, i),
                               hid_input_key);
    }
out:
    g_slist_free(devs);
    g_slist_free(touched);
}

/* Telemetry for tests: reports the host took. */
static void qmp_x_query_usb(JsonObject *args, JsonNode **ret, Error **errp)
{
    GSList *devs = NULL;
    JsonArray *list = json_array_new();
    Object *machine = qdev_get_machine();

    if (machine) {
        object_child_foreach_recursive(machine, hid_walk, &devs);
    }
    for (GSList *l = devs; l; l = l->next) {
        USBHIDState *h = l->data;
        USBDevice *u = USB_DEVICE(h);
        JsonObject *o = json_object_new();

        json_object_set_string_member(o, "id", DEVICE(h)->id ? DEVICE(h)->id
                                                             : "");
        json_object_set_string_member(o, "type",
                                      object_get_typename(OBJECT(h)));
        json_object_set_string_member(o, "bus", u->bus ? u->bus->qbus.name
                                                       : "");
        json_object_set_int_member(o, "port", u->port + 1);
        json_object_set_int_member(o, "addr", u->addr);
        json_object_set_int_member(o, "configuration", u->configuration);
        json_object_set_int_member(o, "protocol", h->protocol);
        json_object_set_int_member(o, "leds", h->leds);
        json_object_set_int_member(o, "queued", h->count);
        json_object_set_int_member(o, "reports-sent", h->reports_sent);
        json_array_add_object_element(list, o);
    }
    g_slist_free(devs);
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void __attribute__((constructor)) usb_hid_qmp_register(void)
{
    qmp_register_command_args("input-send-event", qmp_input_send_event,
                              "*device:s *head:i events:a", 0);
    qmp_register_command_args("x-query-usb", qmp_x_query_usb, "", 0);
}

/* ---- migration --------------------------------------------------------- */

static bool usb_hid_post_load(void *opaque, int version_id, Error **errp)
{
    USBHIDState *h = opaque;

    if (h->head >= HID_QUEUE || h->count > HID_QUEUE) {
        error_setg(errp, "%s %s: report queue at %u with %u reports, it "
                   "holds %u", object_get_typename(OBJECT(h)),
                   DEVICE(h)->id ? DEVICE(h)->id : "(no id)", h->head,
                   h->count, HID_QUEUE);
        return false;
    }
    return true;
}

/* Reports queued but not fetched move too: no input is lost. */
static const VMStateDescription vmstate_usb_hid = {
    .name = "usb-hid",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = usb_hid_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, USBHIDState, vmstate_usb_device,
                       USBDevice),
        VMSTATE_UINT8_MAX(protocol, USBHIDState, 1),
        VMSTATE_UINT8(idle, USBHIDState),
        VMSTATE_UINT8(leds, USBHIDState),
        VMSTATE_UINT8(buttons, USBHIDState),
        VMSTATE_INT32(x, USBHIDState),
        VMSTATE_INT32(y, USBHIDState),
        VMSTATE_INT32(dx, USBHIDState),
        VMSTATE_INT32(dy, USBHIDState),
        VMSTATE_INT32(dz, USBHIDState),
        VMSTATE_UINT8(modifiers, USBHIDState),
        VMSTATE_UINT8_ARRAY(keys, USBHIDState),
        VMSTATE_BUFFER(queue, USBHIDState),
        VMSTATE_UINT32(head, USBHIDState),
        VMSTATE_UINT32(count, USBHIDState),
        VMSTATE_UINT64(reports_sent, USBHIDState),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- types ------------------------------------------------------------- */

static void usb_hid_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    USBDeviceClass *uc = USB_DEVICE_CLASS(klass);

    dc->user_creatable = true;
    dc->vmsd = &vmstate_usb_hid;
    uc->handle_control = hid_handle_control;
    uc->handle_data = hid_handle_data;
    uc->handle_reset = hid_handle_reset;
}

/* send-key's events (the input layer's): one report per key change. */
static void hid_input_key(void *opaque, InputKey key, bool down)
{
    USBHIDState *h = opaque;
    const InputKeyInfo *info = input_key_info(key);
    uint8_t usage = info ? usb_hid_usage_of_qcode(info->qcode) : 0;

    if (!DEVICE(h)->realized || !usage) {
        return;
    }
    hid_key(h, usage, down);
    hid_queue_report(h);
}

static void usb_hid_init(Object *obj)
{
    USBHIDState *h = USB_HID(obj);

    h->kind = USB_HID_GET_CLASS(obj)->kind;
    h->protocol = 1;
    if (h->kind == HID_KEYBOARD) {
        input_keyboard_register(hid_input_key, h);
    }
}

static void usb_hid_finalize(Object *obj)
{
    input_keyboard_unregister(obj);
}

#define HID_CLASS_INIT(fn, k, desc_, dev_, cfg_, rep_, strs, len)           \
    static void fn(ObjectClass *klass, void *data)                          \
    {                                                                       \
        USBHIDClass *hc = USB_HID_CLASS(klass);                             \
        USBDeviceClass *uc = USB_DEVICE_CLASS(klass);                       \
                                                                            \
        DEVICE_CLASS(klass)->desc = desc_;                                  \
        hc->kind = k;                                                       \
        hc->report_desc = rep_;                                             \
        hc->report_desc_len = sizeof(rep_);                                 \
        hc->report_len = len;                                               \
        uc->device_desc = dev_;                                             \
        uc->config_desc = cfg_;                                             \
        uc->config_desc_len = sizeof(cfg_);                                 \
        uc->strings = strs;                                                 \
    }

HID_CLASS_INIT(usb_tablet_class_init, HID_TABLET, "QEMU USB Tablet",
               tablet_device_desc, tablet_config_desc, tablet_report_desc,
               tablet_strings, 6)
HID_CLASS_INIT(usb_mouse_class_init, HID_MOUSE, "QEMU USB Mouse",
               mouse_device_desc, mouse_config_desc, mouse_report_desc,
               mouse_strings, 4)
HID_CLASS_INIT(usb_kbd_class_init, HID_KEYBOARD, "QEMU USB Keyboard",
               kbd_device_desc, kbd_config_desc, kbd_report_desc,
               kbd_strings, 8)

static const TypeInfo usb_hid_types[] = {
    {
        .name = TYPE_USB_HID,
        .parent = TYPE_USB_DEVICE,
        .instance_size = sizeof(USBHIDState),
        .instance_init = usb_hid_init,
        .instance_finalize = usb_hid_finalize,
        .class_size = sizeof(USBHIDClass),
        .class_init = usb_hid_class_init,
        .abstract = true,
    },
    {
        .name = "usb-tablet",
        .parent = TYPE_USB_HID,
        .class_init = usb_tablet_class_init,
    },
    {
        .name = "usb-mouse",
        .parent = TYPE_USB_HID,
        .class_init = usb_mouse_class_init,
    },
    {
        .name = "usb-kbd",
        .parent = TYPE_USB_HID,
        .class_init = usb_kbd_class_init,
    },
};

DEFINE_TYPES(usb_hid_types)
