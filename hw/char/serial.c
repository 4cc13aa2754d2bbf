/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * 8250/16550A UART: enough of the register set for polled drivers (Linux's
 * 8250 probe included) and an optional interrupt line.  Output goes
 * straight to the chardev; input lands in a 16-byte receive FIFO.
 *
 * Registers (offset, DLAB=LCR bit 7): 0 RBR/THR (DLL), 1 IER (DLM),
 * 2 IIR/FCR, 3 LCR, 4 MCR, 5 LSR, 6 MSR, 7 SCR.
 */
#include "qemu/osdep.h"
#include "migration/vmstate.h"
#include "hw/char/serial.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "chardev/char.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "trace.h"

#define UART_IER_RDI 0x01
#define UART_IER_THRI 0x02
#define UART_IIR_NO_INT 0x01
#define UART_IIR_THRI 0x02
#define UART_IIR_RDI 0x04
#define UART_IIR_FIFO 0xc0
#define UART_FCR_ENABLE 0x01
#define UART_FCR_CLEAR_RX 0x02
#define UART_LCR_DLAB 0x80
#define UART_MCR_LOOP 0x10
#define UART_LSR_DR 0x01
#define UART_LSR_OE 0x02
#define UART_LSR_THRE 0x20
#define UART_LSR_TEMT 0x40
/* Modem status with a cable plugged in: DCD, DSR, CTS. */
#define UART_MSR_CONNECTED 0xb0
#define UART_FIFO_SIZE 16

const uint16_t serial_isa_iobase[4] = { 0x3f8, 0x2f8, 0x3e8, 0x2e8 };
const uint8_t serial_isa_irq[4] = { 4, 3, 4, 3 };

typedef struct SerialState {
    DeviceState parent_obj;

    MemoryRegion io;
    CharBackend chr;
    qemu_irq irq;
    uint16_t iobase;
    bool machine_made;          /* serial_isa_create() set it up */
    char *chardev_id;           /* -device isa-serial,chardev=ID */
    int32_t index;              /* -device isa-serial,index=N (-1: next) */

    uint16_t divider;
    uint8_t ier;
    uint8_t fcr;
    uint8_t lcr;
    uint8_t mcr;
    uint8_t lsr;
    uint8_t scr;
    bool thr_ipending;          /* THRE interrupt until IIR is read */
    uint8_t rx[UART_FIFO_SIZE];
    unsigned rx_head;
    unsigned rx_count;
} SerialState;

#define ISA_SERIAL(obj) OBJECT_CHECK(SerialState, (obj), TYPE_ISA_SERIAL)

static uint8_t serial_iir(SerialState *s)
{
    uint8_t fifo = (s->fcr & UART_FCR_ENABLE) ? UART_IIR_FIFO : 0;

    if ((s->ier & UART_IER_RDI) && s->rx_count) {
        return UART_IIR_RDI | fifo;
    }
    if ((s->ier & UART_IER_THRI) && s->thr_ipending) {
        return UART_IIR_THRI | fifo;
    }
    return UART_IIR_NO_INT | fifo;
}

static void serial_update_irq(SerialState *s)
{
    qemu_set_irq(s->irq, !(serial_iir(s) & UART_IIR_NO_INT));
}

static void serial_rx_push(SerialState *s, uint8_t byte)
{
    if (s->rx_count == UART_FIFO_SIZE) {
        s->lsr |= UART_LSR_OE;
        return;
    }
    s->rx[(s->rx_head + s->rx_count) % UART_FIFO_SIZE] = byte;
    s->rx_count++;
}

static uint8_t serial_rx_pop(SerialState *s)
{
    uint8_t byte;

    if (!s->rx_count) {
        return 0;
    }
    byte = s->rx[s->rx_head];
    s->rx_head = (s->rx_head + 1) % UART_FIFO_SIZE;
    s->rx_count--;
    return byte;
}

static uint64_t serial_read(void *opaque, hwaddr addr, unsigned size)
{
    SerialState *s = opaque;
    uint8_t val = 0;

    switch (addr) {
    case 0:
        if (s->lcr & UART_LCR_DLAB) {
            val = s->divider & 0xff;
        } else {
            val = serial_rx_pop(s);
            if (s->chr.chr) {
                qemu_chr_fe_accept_input(&s->chr);
            }
        }
        break;
    case 1:
        val = (s->lcr & UART_LCR_DLAB) ? s->divider >> 8 : s->ier;
        break;
    case 2:
        val = serial_iir(s);
        if ((val & 0x0f) == UART_IIR_THRI) {
            s->thr_ipending = false;
        }
        break;
    case 3:
        val = s->lcr;
        break;
    case 4:
        val = s->mcr;
        break;
    case 5:
        val = s->lsr | UART_LSR_THRE | UART_LSR_TEMT |
              (s->rx_count ? UART_LSR_DR : 0);
        s->lsr &= ~UART_LSR_OE;
        break;
    case 6:
        if (s->mcr & UART_MCR_LOOP) {
            /* Loopback: DTR->DSR, RTS->CTS, OUT1->RI, OUT2->DCD. */
            val = ((s->mcr & 0x01) << 5) | ((s->mcr & 0x02) << 3) |
                  ((s->mcr & 0x0c) << 4);
        } else {
            val = UART_MSR_CONNECTED;
        }
        break;
    case 7:
        val = s->scr;
        break;
    }
    serial_update_irq(s);
    trace_serial_read(s->iobase, addr, val);
    return val;
}

static void serial_write(void *opaque, hwaddr addr, uint64_t val64,
                         unsigned size)
{
    SerialState *s = opaque;
    uint8_t val = val64;

    trace_serial_write(s->iobase, addr, val);
    switch (addr) {
    case 0:
        if (s->lcr & UART_LCR_DLAB) {
            s->divider = (s->divider & 0xff00) | val;
            break;
        }
        if (s->mcr & UART_MCR_LOOP) {
            serial_rx_push(s, val);
        } else if (qemu_chr_fe_backend_connected(&s->chr)) {
            qemu_chr_fe_write_all(&s->chr, &val, 1);
        }
        /* Transmission is instantaneous: THR is empty again at once. */
        s->thr_ipending = true;
        break;
    case 1:
        if (s->lcr & UART_LCR_DLAB) {
            s->divider = (s->divider & 0x00ff) | (val << 8);
        } else {
            uint8_t old = s->ier;
            s->ier = val & 0x0f;
            /* Enabling THRI with THR empty raises it at once, as on chips. */
            if (!(old & UART_IER_THRI) && (s->ier & UART_IER_THRI)) {
                s->thr_ipending = true;
            }
        }
        break;
    case 2:
        s->fcr = val & 0xc9;
        if (val & UART_FCR_CLEAR_RX) {
            s->rx_count = 0;
            s->rx_head = 0;
            if (s->chr.chr) {
                qemu_chr_fe_accept_input(&s->chr);
            }
        }
        break;
    case 3:
        s->lcr = val;
        break;
    case 4:
        s->mcr = val & 0x1f;
        break;
    case 7:
        s->scr = val;
        break;
    default:
        /* LSR and MSR are read-only. */
        break;
    }
    serial_update_irq(s);
}

static const MemoryRegionOps serial_ops = {
    .read = serial_read,
    .write = serial_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 1 },
};

static int serial_can_receive(void *opaque)
{
    SerialState *s = opaque;

    return (s->mcr & UART_MCR_LOOP) ? 0 : UART_FIFO_SIZE - s->rx_count;
}

static void serial_receive(void *opaque, const uint8_t *buf, int size)
{
    SerialState *s = opaque;

    for (int i = 0; i < size; i++) {
        serial_rx_push(s, buf[i]);
    }
    serial_update_irq(s);
}

static void serial_reset(DeviceState *dev)
{
    SerialState *s = ISA_SERIAL(dev);

    s->divider = 12;            /* 9600 baud */
    s->ier = 0;
    s->fcr = 0;
    s->lcr = 0;
    s->mcr = 0x08;              /* OUT2 */
    s->lsr = 0;
    s->scr = 0;
    s->thr_ipending = false;
    s->rx_head = 0;
    s->rx_count = 0;
    qemu_set_irq(s->irq, 0);
}

static qemu_irq (*serial_isa_irq_source)(unsigned line);
static unsigned serial_ports_used;      /* bit i: COM(i+1) exists */

void serial_isa_set_irq_source(qemu_irq (*source)(unsigned line))
{
    serial_isa_irq_source = source;
}

/*
 * -device isa-serial: the port from index= (or the first free one), its
 * legacy IRQ from the machine, the back-end from chardev=.
 */
static bool serial_realize_user(SerialState *s, Error **errp)
{
    int index = s->index;
    Chardev *chr = NULL;

    if (index < 0) {
        for (index = 0; index < 4 && (serial_ports_used & (1u << index));
             index++) {
        }
    }
    if (index >= 4) {
        error_setg(errp, "isa-serial: index=%d: there are only COM1..COM4 "
                   "(index 0..3)", index);
        return false;
    }
    if (serial_ports_used & (1u << index)) {
        error_setg(errp, "isa-serial: COM%d (index=%d) already exists",
                   index + 1, index);
        return false;
    }
    if (s->chardev_id) {
        chr = qemu_chr_find(s->chardev_id);
        if (!chr) {
            error_setg(errp, "Property 'isa-serial.chardev' can't find "
                       "value '%s'", s->chardev_id);
            return false;
        }
        if (!qemu_chr_fe_init(&s->chr, chr, errp)) {
            return false;
        }
    }
    s->index = index;
    s->iobase = serial_isa_iobase[index];
    if (serial_isa_irq_source) {
        s->irq = serial_isa_irq_source(serial_isa_irq[index]);
    }
    return true;
}

static bool serial_realize(DeviceState *dev, Error **errp)
{
    SerialState *s = ISA_SERIAL(dev);

    if (!s->machine_made && !serial_realize_user(s, errp)) {
        return false;
    }
    for (int i = 0; i < 4; i++) {
        if (serial_isa_iobase[i] == s->iobase) {
            serial_ports_used |= 1u << i;
        }
    }

    memory_region_init_io(&s->io, OBJECT(dev), &serial_ops, s, "serial", 8);
    memory_region_add_subregion(get_system_io(), s->iobase, &s->io);
    if (s->chr.chr) {
        qemu_chr_fe_set_handlers(&s->chr, serial_can_receive, serial_receive,
                                 NULL, s);
    }
    return true;
}

static void serial_unrealize(DeviceState *dev)
{
    SerialState *s = ISA_SERIAL(dev);

    if (s->chr.chr) {
        qemu_chr_fe_deinit(&s->chr, false);
    }
    memory_region_del_subregion(get_system_io(), &s->io);
    memory_region_finalize(&s->io);
    for (int i = 0; i < 4; i++) {
        if (serial_isa_iobase[i] == s->iobase) {
            serial_ports_used &= ~(1u << i);
        }
    }
}

DeviceState *serial_isa_create(MachineState *ms, int index, Chardev *chr,
                               qemu_irq irq, Error **errp)
{
    DeviceState *dev;
    SerialState *s;
    g_autofree char *name = g_strdup_printf("serial%d", index);

    if (index < 0 || index >= 4) {
        error_setg(errp, "serial port %d does not exist (COM1..COM4)",
                   index + 1);
        return NULL;
    }
    dev = qdev_new(TYPE_ISA_SERIAL);
    s = ISA_SERIAL(dev);
    s->iobase = serial_isa_iobase[index];
    s->irq = irq;
    s->machine_made = true;
    if (chr && !qemu_chr_fe_init(&s->chr, chr, errp)) {
        object_unref(OBJECT(dev));
        return NULL;
    }
    object_property_add_child(OBJECT(ms), name, OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    return dev;
}

static const Property serial_props[] = {
    DEFINE_PROP_STRING("chardev", SerialState, chardev_id,
                       .description = "ID of the character device"),
    DEFINE_PROP_INT32("index", SerialState, index, -1,
                      .description = "COM port: 0..3 (default: first free)"),
    { }
};

static bool serial_post_load(void *opaque, int version_id, Error **errp)
{
    SerialState *s = opaque;

    /* The table bounds the FIFO indices; the line follows the registers. */
    serial_update_irq(s);
    return true;
}

static const VMStateDescription vmstate_serial = {
    .name = "serial",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = serial_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(divider, SerialState),
        VMSTATE_UINT8(ier, SerialState),
        VMSTATE_UINT8(fcr, SerialState),
        VMSTATE_UINT8(lcr, SerialState),
        VMSTATE_UINT8(mcr, SerialState),
        VMSTATE_UINT8(lsr, SerialState),
        VMSTATE_UINT8(scr, SerialState),
        VMSTATE_BOOL(thr_ipending, SerialState),
        VMSTATE_UINT8_ARRAY(rx, SerialState),
        VMSTATE_UINT32_MAX(rx_head, SerialState, UART_FIFO_SIZE - 1),
        VMSTATE_UINT32_MAX(rx_count, SerialState, UART_FIFO_SIZE),
        VMSTATE_END_OF_LIST()
    },
};

static void serial_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "16550A UART at a legacy COM port (-serial or -device)";
    /* Legacy ISA: present from start-up, never hot-plugged. */
    dc->hotpluggable = false;
    device_class_set_props(dc, serial_props);
    dc->realize = serial_realize;
    dc->unrealize = serial_unrealize;
    dc->reset = serial_reset;
    dc->vmsd = &vmstate_serial;
}

static const TypeInfo serial_types[] = {
    {
        .name = TYPE_ISA_SERIAL,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(SerialState),
        .class_init = serial_class_init,
    },
};

DEFINE_TYPES(serial_types)
