/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * i8042: the PC/AT keyboard controller with its PS/2 keyboard and mouse.
 *
 * Port 0x64 reads the status register and takes controller commands;
 * port 0x60 is the output buffer (one byte the guest reads, from the
 * controller, the keyboard or the mouse) and, written, either a
 * command's argument or a byte for the keyboard.  The command byte (the
 * controller's RAM byte 0) enables the two interrupts, disables either
 * port and turns on set 2 -> set 1 translation (XLATE), which firmware
 * and Linux leave on; with it the keyboard's key codes reach the guest
 * as set 1.  Controller command 0xFE (any 0xF0..0xFF with bit 0 clear)
 * and an output port write with bit 0 clear pulse the CPU reset line.
 *
 * Everything the guest writes is bounded: each side has a fixed queue
 * that drops what does not fit, and unknown commands are ignored (the
 * controller) or answered with 0xFE "resend" (the devices), as hardware
 * does.
 */
#include "qemu/osdep.h"
#include "hw/input/i8042.h"
#include "hw/input/input.h"
#include "hw/qdev-core.h"
#include "hw/boards.h"
#include "hw/irq.h"
#include "migration/vmstate.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "system/runstate.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "trace.h"

/* Status register (read from 0x64). */
#define I8042_STAT_OBF      0x01    /* output buffer full */
#define I8042_STAT_IBF      0x02    /* input buffer full (never: instant) */
#define I8042_STAT_SYS      0x04    /* system flag, from the command byte */
#define I8042_STAT_CMD      0x08    /* last write was to 0x64 */
#define I8042_STAT_UNLOCKED 0x10    /* keyboard not inhibited */
#define I8042_STAT_AUX_OBF  0x20    /* the output byte is the mouse's */

/* Command byte. */
#define I8042_CB_KBD_INT    0x01
#define I8042_CB_AUX_INT    0x02
#define I8042_CB_SYS        0x04
#define I8042_CB_KBD_OFF    0x10
#define I8042_CB_AUX_OFF    0x20
#define I8042_CB_XLATE      0x40
/* As firmware leaves it: both interrupts, POST passed, translation. */
#define I8042_CB_DEFAULT    (I8042_CB_KBD_INT | I8042_CB_AUX_INT | \
                             I8042_CB_SYS | I8042_CB_XLATE)

/* Output port (0xD0 / 0xD1). */
#define I8042_OUT_RESET     0x01    /* low: CPU in reset */
#define I8042_OUT_A20       0x02
#define I8042_OUT_KBD_OBF   0x10
#define I8042_OUT_AUX_OBF   0x20

/* Device replies. */
#define PS2_ACK             0xfa
#define PS2_RESEND          0xfe
#define PS2_BAT_OK          0xaa
#define PS2_ECHO            0xee

#define I8042_CTRL_QUEUE    16
#define I8042_DEV_QUEUE     256

typedef struct I8042Queue {
    uint8_t data[I8042_DEV_QUEUE];
    unsigned head;
    unsigned count;
    unsigned size;
} I8042Queue;

typedef struct I8042State {
    DeviceState parent_obj;

    MemoryRegion io_data;
    MemoryRegion io_cmd;
    qemu_irq irq[2];            /* 0: keyboard (IRQ 1), 1: mouse (IRQ 12) */

    uint8_t status;
    uint8_t ram[32];            /* ram[0] is the command byte */
    uint8_t outport;
    uint8_t pending;            /* controller command awaiting its data */
    uint8_t out;                /* output buffer */
    bool out_full;
    bool out_aux;
    I8042Queue ctrl;            /* replies, and 0xD2 bytes (as the keyboard's) */
    I8042Queue ctrl_aux;        /* 0xD3 bytes, as the mouse's */
    I8042Queue kbd;
    I8042Queue aux;

    /* The keyboard. */
    uint8_t scan_set;           /* 1 or 2 */
    bool scanning;
    uint8_t leds;
    uint8_t kbd_pending;        /* command awaiting its argument */
    uint8_t kbd_last;           /* for 0xFE resend */

    /* The mouse. */
    bool aux_stream;
    uint8_t aux_pending;
    uint8_t aux_rate;
    uint8_t aux_resolution;
    bool aux_scaling;
} I8042State;

#define I8042(obj) OBJECT_CHECK(I8042State, (obj), TYPE_I8042)

static void i8042_queue_reset(I8042Queue *q, unsigned size)
{
    q->head = q->count = 0;
    q->size = size;
}

static bool i8042_queue_push(I8042Queue *q, uint8_t byte)
{
    if (q->count >= q->size) {
        return false;
    }
    q->data[(q->head + q->count) % q->size] = byte;
    q->count++;
    return true;
}

static uint8_t i8042_queue_pop(I8042Queue *q)
{
    uint8_t byte = q->data[q->head];

    q->head = (q->head + 1) % q->size;
    q->count--;
    return byte;
}

/* Moves the next byte into the output buffer and sets the IRQ lines. */
static void i8042_update(I8042State *s)
{
    uint8_t cb = s->ram[0];
    bool kbd_irq, aux_irq;

    if (!s->out_full) {
        /* What the controller itself writes bypasses the port disables. */
        if (s->ctrl.count) {
            s->out = i8042_queue_pop(&s->ctrl);
            s->out_full = true;
            s->out_aux = false;
        } else if (s->ctrl_aux.count) {
            s->out = i8042_queue_pop(&s->ctrl_aux);
            s->out_full = true;
            s->out_aux = true;
        } else if (s->kbd.count && !(cb & I8042_CB_KBD_OFF)) {
            s->out = i8042_queue_pop(&s->kbd);
            s->out_full = true;
            s->out_aux = false;
        } else if (s->aux.count && !(cb & I8042_CB_AUX_OFF)) {
            s->out = i8042_queue_pop(&s->aux);
            s->out_full = true;
            s->out_aux = true;
        }
    }
    s->status &= ~(I8042_STAT_OBF | I8042_STAT_AUX_OBF);
    if (s->out_full) {
        s->status |= I8042_STAT_OBF | (s->out_aux ? I8042_STAT_AUX_OBF : 0);
    }
    kbd_irq = s->out_full && !s->out_aux && (cb & I8042_CB_KBD_INT);
    aux_irq = s->out_full && s->out_aux && (cb & I8042_CB_AUX_INT);
    qemu_set_irq(s->irq[0], kbd_irq);
    qemu_set_irq(s->irq[1], aux_irq);
}

static void i8042_ctrl_reply(I8042State *s, uint8_t byte)
{
    i8042_queue_push(&s->ctrl, byte);
}

static void i8042_kbd_reply(I8042State *s, uint8_t byte)
{
    s->kbd_last = byte;
    i8042_queue_push(&s->kbd, byte);
}

static void i8042_aux_reply(I8042State *s, uint8_t byte)
{
    i8042_queue_push(&s->aux, byte);
}

/* ---- the keyboard ------------------------------------------------------ */

static void i8042_kbd_defaults(I8042State *s)
{
    s->scan_set = 2;
    s->leds = 0;
    s->kbd_pending = 0;
}

static bool i8042_xlate(I8042State *s)
{
    return s->ram[0] & I8042_CB_XLATE;
}

static void i8042_key(void *opaque, InputKey key, bool down)
{
    I8042State *s = opaque;
    uint8_t buf[8];
    size_t n;

    if (!s->scanning) {
        return;
    }
    /* Set 2 leaves the keyboard; the controller may translate it. */
    n = input_key_scancodes(key, down,
                            s->scan_set == 2 && i8042_xlate(s) ? 1
                                                               : s->scan_set,
                            buf);
    /* A sequence goes in whole or not at all (the queue overran). */
    if (s->kbd.count + n > s->kbd.size) {
        trace_i8042_kbd_overrun(n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        i8042_queue_push(&s->kbd, buf[i]);
    }
    i8042_update(s);
}

static void i8042_kbd_command(I8042State *s, uint8_t val)
{
    switch (val) {
    case 0xed:          /* set LEDs */
    case 0xf0:          /* get / set scancode set */
    case 0xf3:          /* typematic rate */
        i8042_kbd_reply(s, PS2_ACK);
        s->kbd_pending = val;
        break;
    case 0xee:
        i8042_kbd_reply(s, PS2_ECHO);
        break;
    case 0xf2:          /* identify: an MF2 keyboard */
        i8042_kbd_reply(s, PS2_ACK);
        i8042_kbd_reply(s, 0xab);
        i8042_kbd_reply(s, i8042_xlate(s) ? 0x41 : 0x83);
        break;
    case 0xf4:
        i8042_queue_reset(&s->kbd, I8042_DEV_QUEUE);
        s->scanning = true;
        i8042_kbd_reply(s, PS2_ACK);
        break;
    case 0xf5:
        i8042_queue_reset(&s->kbd, I8042_DEV_QUEUE);
        i8042_kbd_defaults(s);
        s->scanning = false;
        i8042_kbd_reply(s, PS2_ACK);
        break;
    case 0xf6:
        i8042_queue_reset(&s->kbd, I8042_DEV_QUEUE);
        i8042_kbd_defaults(s);
        i8042_kbd_reply(s, PS2_ACK);
        break;
    case 0xf7 ... 0xfd: /* set 3 key types */
        i8042_kbd_reply(s, PS2_ACK);
        break;
    case 0xfe:
        i8042_queue_push(&s->kbd, s->kbd_last);
        break;
    case 0xff:          /* reset and self-test */
        i8042_queue_reset(&s->kbd, I8042_DEV_QUEUE);
        i8042_kbd_defaults(s);
        s->scanning = true;
        i8042_kbd_reply(s, PS2_ACK);
        i8042_kbd_reply(s, PS2_BAT_OK);
        break;
    default:
        trace_i8042_kbd_unknown(val);
        i8042_kbd_reply(s, PS2_RESEND);
        break;
    }
}

static void i8042_kbd_write(I8042State *s, uint8_t val)
{
    uint8_t cmd = s->kbd_pending;

    trace_i8042_kbd_write(val, cmd);
    s->kbd_pending = 0;
    /* A command byte where an argument was due starts that command. */
    if (cmd && val < 0xed) {
        switch (cmd) {
        case 0xed:
            s->leds = val & 7;
            i8042_kbd_reply(s, PS2_ACK);
            return;
        case 0xf0:
            if (val == 0) {
                static const uint8_t xlated[] = { 0, 0x43, 0x41, 0x3f };

                i8042_kbd_reply(s, PS2_ACK);
                i8042_kbd_reply(s, i8042_xlate(s) ? xlated[s->scan_set]
                                                  : s->scan_set);
            } else if (val == 1 || val == 2) {
                s->scan_set = val;
                i8042_kbd_reply(s, PS2_ACK);
            } else {
                /* Set 3 is not offered; a guest falls back to set 2. */
                i8042_kbd_reply(s, PS2_RESEND);
            }
            return;
        default:        /* 0xf3: the rate is of no consequence here */
            i8042_kbd_reply(s, PS2_ACK);
            return;
        }
    }
    i8042_kbd_command(s, val);
}

/* ---- the mouse --------------------------------------------------------- */

static void i8042_aux_defaults(I8042State *s)
{
    s->aux_stream = false;
    s->aux_pending = 0;
    s->aux_rate = 100;
    s->aux_resolution = 2;
    s->aux_scaling = false;
}

static void i8042_aux_write(I8042State *s, uint8_t val)
{
    uint8_t cmd = s->aux_pending;

    trace_i8042_aux_write(val, cmd);
    s->aux_pending = 0;
    if (cmd == 0xf3) {
        s->aux_rate = val;
        i8042_aux_reply(s, PS2_ACK);
        return;
    }
    if (cmd == 0xe8) {
        s->aux_resolution = val & 3;
        i8042_aux_reply(s, PS2_ACK);
        return;
    }
    switch (val) {
    case 0xe6:
    case 0xe7:
        s->aux_scaling = val == 0xe7;
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xe8:
    case 0xf3:
        s->aux_pending = val;
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xe9:          /* status request */
        i8042_aux_reply(s, PS2_ACK);
        i8042_aux_reply(s, (s->aux_stream ? 0x20 : 0) |
                           (s->aux_scaling ? 0x10 : 0));
        i8042_aux_reply(s, s->aux_resolution);
        i8042_aux_reply(s, s->aux_rate);
        break;
    case 0xea:
    case 0xf0:
    case 0xec:
    case 0xee:
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xeb:          /* read data: a packet with no motion */
        i8042_aux_reply(s, PS2_ACK);
        i8042_aux_reply(s, 0x08);
        i8042_aux_reply(s, 0);
        i8042_aux_reply(s, 0);
        break;
    case 0xf2:          /* identify: a standard PS/2 mouse */
        i8042_aux_reply(s, PS2_ACK);
        i8042_aux_reply(s, 0x00);
        break;
    case 0xf4:
        s->aux_stream = true;
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xf5:
        s->aux_stream = false;
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xf6:
        i8042_aux_defaults(s);
        i8042_aux_reply(s, PS2_ACK);
        break;
    case 0xff:
        i8042_queue_reset(&s->aux, I8042_DEV_QUEUE);
        i8042_aux_defaults(s);
        i8042_aux_reply(s, PS2_ACK);
        i8042_aux_reply(s, PS2_BAT_OK);
        i8042_aux_reply(s, 0x00);
        break;
    default:
        i8042_aux_reply(s, PS2_RESEND);
        break;
    }
}

/* ---- the controller ---------------------------------------------------- */

static void i8042_pulse_reset(I8042State *s)
{
    trace_i8042_reset_request();
    qemu_system_guest_reset_request();
}

static void i8042_set_command_byte(I8042State *s, uint8_t val)
{
    s->ram[0] = val;
    s->status = (s->status & ~I8042_STAT_SYS) | (val & I8042_CB_SYS);
}

static void i8042_write_command(I8042State *s, uint8_t val)
{
    trace_i8042_command(val);
    s->status |= I8042_STAT_CMD;
    s->pending = 0;
    switch (val) {
    case 0x20 ... 0x3f:
        i8042_ctrl_reply(s, s->ram[val & 0x1f]);
        break;
    case 0x60 ... 0x7f:
    case 0xd1:          /* write output port */
    case 0xd2:          /* write keyboard output buffer */
    case 0xd3:          /* write mouse output buffer */
    case 0xd4:          /* write to the mouse */
        s->pending = val;
        break;
    case 0xa7:
        s->ram[0] |= I8042_CB_AUX_OFF;
        break;
    case 0xa8:
        s->ram[0] &= ~I8042_CB_AUX_OFF;
        break;
    case 0xa9:          /* mouse interface test: no error */
    case 0xab:          /* keyboard interface test: no error */
        i8042_ctrl_reply(s, 0x00);
        break;
    case 0xaa:          /* self-test: passed */
        s->status |= I8042_STAT_SYS;
        i8042_ctrl_reply(s, 0x55);
        break;
    case 0xad:
        s->ram[0] |= I8042_CB_KBD_OFF;
        break;
    case 0xae:
        s->ram[0] &= ~I8042_CB_KBD_OFF;
        break;
    case 0xc0:          /* input port */
    case 0xe0:          /* test inputs */
        i8042_ctrl_reply(s, 0x00);
        break;
    case 0xd0:
        i8042_ctrl_reply(s, s->outport |
                         (s->out_full && !s->out_aux ? I8042_OUT_KBD_OBF : 0) |
                         (s->out_full && s->out_aux ? I8042_OUT_AUX_OBF : 0));
        break;
    case 0xdd:
        s->outport &= ~I8042_OUT_A20;
        break;
    case 0xdf:
        s->outport |= I8042_OUT_A20;
        break;
    case 0xf0 ... 0xff: /* pulse output lines: bit 0 low is the reset */
        if (!(val & 1)) {
            i8042_pulse_reset(s);
        }
        break;
    default:
        trace_i8042_command_unknown(val);
        break;
    }
}

static void i8042_write_data(I8042State *s, uint8_t val)
{
    uint8_t cmd = s->pending;

    s->status &= ~I8042_STAT_CMD;
    s->pending = 0;
    switch (cmd) {
    case 0x60:
        i8042_set_command_byte(s, val);
        break;
    case 0x61 ... 0x7f:
        s->ram[cmd & 0x1f] = val;
        break;
    case 0xd1:
        s->outport = val & ~(I8042_OUT_KBD_OBF | I8042_OUT_AUX_OBF);
        if (!(val & I8042_OUT_RESET)) {
            i8042_pulse_reset(s);
        }
        break;
    case 0xd2:
        i8042_queue_push(&s->ctrl, val);
        break;
    case 0xd3:
        i8042_queue_push(&s->ctrl_aux, val);
        break;
    case 0xd4:
        i8042_aux_write(s, val);
        break;
    default:
        /* Sending to the keyboard enables its interface again. */
        s->ram[0] &= ~I8042_CB_KBD_OFF;
        i8042_kbd_write(s, val);
        break;
    }
}

static uint64_t i8042_data_read(void *opaque, hwaddr addr, unsigned size)
{
    I8042State *s = opaque;
    uint8_t val = s->out;

    if (s->out_full) {
        s->out_full = false;
        /* The line drops, so a next byte makes a new edge. */
        qemu_set_irq(s->irq[s->out_aux ? 1 : 0], 0);
        i8042_update(s);
    }
    trace_i8042_data_read(val);
    return val;
}

static void i8042_data_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    I8042State *s = opaque;

    trace_i8042_data_write(val);
    i8042_write_data(s, val);
    i8042_update(s);
}

static uint64_t i8042_cmd_read(void *opaque, hwaddr addr, unsigned size)
{
    I8042State *s = opaque;

    return s->status;
}

static void i8042_cmd_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    I8042State *s = opaque;

    i8042_write_command(s, val);
    i8042_update(s);
}

static const MemoryRegionOps i8042_data_ops = {
    .read = i8042_data_read,
    .write = i8042_data_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 1 },
};

static const MemoryRegionOps i8042_cmd_ops = {
    .read = i8042_cmd_read,
    .write = i8042_cmd_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 1 },
};

static void i8042_reset(DeviceState *dev)
{
    I8042State *s = I8042(dev);

    memset(s->ram, 0, sizeof(s->ram));
    s->status = I8042_STAT_CMD | I8042_STAT_UNLOCKED;
    i8042_set_command_byte(s, I8042_CB_DEFAULT);
    s->outport = I8042_OUT_RESET | I8042_OUT_A20;
    s->pending = 0;
    s->out = 0;
    s->out_full = false;
    s->out_aux = false;
    i8042_queue_reset(&s->ctrl, I8042_CTRL_QUEUE);
    i8042_queue_reset(&s->ctrl_aux, I8042_CTRL_QUEUE);
    i8042_queue_reset(&s->kbd, I8042_DEV_QUEUE);
    i8042_queue_reset(&s->aux, I8042_DEV_QUEUE);
    i8042_kbd_defaults(s);
    s->scanning = true;
    s->kbd_last = 0;
    i8042_aux_defaults(s);
    i8042_update(s);
}

static bool i8042_realize(DeviceState *dev, Error **errp)
{
    I8042State *s = I8042(dev);

    memory_region_init_io(&s->io_data, OBJECT(dev), &i8042_data_ops, s,
                          "i8042-data", 1);
    memory_region_init_io(&s->io_cmd, OBJECT(dev), &i8042_cmd_ops, s,
                          "i8042-cmd", 1);
    memory_region_add_subregion(get_system_io(), I8042_DATA_PORT,
                                &s->io_data);
    memory_region_add_subregion(get_system_io(), I8042_CMD_PORT,
                                &s->io_cmd);
    qdev_init_gpio_out(dev, s->irq, 2);
    input_keyboard_register(i8042_key, s);
    i8042_reset(dev);
    return true;
}

static void i8042_unrealize(DeviceState *dev)
{
    I8042State *s = I8042(dev);

    input_keyboard_unregister(s);
    memory_region_del_subregion(get_system_io(), &s->io_data);
    memory_region_del_subregion(get_system_io(), &s->io_cmd);
    memory_region_finalize(&s->io_data);
    memory_region_finalize(&s->io_cmd);
}

static bool i8042_post_load(void *opaque, int version_id, Error **errp)
{
    I8042State *s = opaque;

    /* The queue bounds are the table's; the set must be one we speak. */
    if (s->scan_set < 1) {
        error_setg(errp, "i8042: scancode set %u in the stream is not 1 or 2",
                   s->scan_set);
        return false;
    }
    qemu_set_irq(s->irq[0], 0);
    qemu_set_irq(s->irq[1], 0);
    i8042_update(s);
    return true;
}

static const VMStateDescription vmstate_i8042 = {
    .name = "pckbd",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = i8042_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(status, I8042State),
        VMSTATE_UINT8_ARRAY(ram, I8042State),
        VMSTATE_UINT8(outport, I8042State),
        VMSTATE_UINT8(pending, I8042State),
        VMSTATE_UINT8(out, I8042State),
        VMSTATE_BOOL(out_full, I8042State),
        VMSTATE_BOOL(out_aux, I8042State),
        VMSTATE_UINT8_ARRAY(ctrl.data, I8042State),
        VMSTATE_UINT32_MAX(ctrl.head, I8042State, I8042_CTRL_QUEUE - 1),
        VMSTATE_UINT32_MAX(ctrl.count, I8042State, I8042_CTRL_QUEUE),
        VMSTATE_UINT8_ARRAY(ctrl_aux.data, I8042State),
        VMSTATE_UINT32_MAX(ctrl_aux.head, I8042State, I8042_CTRL_QUEUE - 1),
        VMSTATE_UINT32_MAX(ctrl_aux.count, I8042State, I8042_CTRL_QUEUE),
        VMSTATE_UINT8_ARRAY(kbd.data, I8042State),
        VMSTATE_UINT32_MAX(kbd.head, I8042State, I8042_DEV_QUEUE - 1),
        VMSTATE_UINT32_MAX(kbd.count, I8042State, I8042_DEV_QUEUE),
        VMSTATE_UINT8_ARRAY(aux.data, I8042State),
        VMSTATE_UINT32_MAX(aux.head, I8042State, I8042_DEV_QUEUE - 1),
        VMSTATE_UINT32_MAX(aux.count, I8042State, I8042_DEV_QUEUE),
        VMSTATE_UINT8_MAX(scan_set, I8042State, 2),
        VMSTATE_BOOL(scanning, I8042State),
        VMSTATE_UINT8(leds, I8042State),
        VMSTATE_UINT8(kbd_pending, I8042State),
        VMSTATE_UINT8(kbd_last, I8042State),
        VMSTATE_BOOL(aux_stream, I8042State),
        VMSTATE_UINT8(aux_pending, I8042State),
        VMSTATE_UINT8(aux_rate, I8042State),
        VMSTATE_UINT8(aux_resolution, I8042State),
        VMSTATE_BOOL(aux_scaling, I8042State),
        VMSTATE_END_OF_LIST()
    },
};

DeviceState *i8042_create(MachineState *ms, qemu_irq kbd_irq,
                          qemu_irq aux_irq, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_I8042);

    object_property_add_child(OBJECT(ms), "i8042", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    qdev_connect_gpio_out(dev, 0, kbd_irq);
    qdev_connect_gpio_out(dev, 1, aux_irq);
    return dev;
}

static void i8042_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "PC keyboard controller with PS/2 keyboard and mouse";
    /* The pc and q35 machines always have one, at fixed ports. */
    dc->user_creatable = false;
    dc->realize = i8042_realize;
    dc->unrealize = i8042_unrealize;
    dc->reset = i8042_reset;
    dc->vmsd = &vmstate_i8042;
}

static const TypeInfo i8042_types[] = {
    {
        .name = TYPE_I8042,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(I8042State),
        .class_init = i8042_class_init,
    },
};

DEFINE_TYPES(i8042_types)
