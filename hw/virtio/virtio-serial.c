/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-serial-pci, its "virtio-serial-bus" and the ports on it,
 * virtserialport and virtconsole (virtio 1.2, 5.3 Console Device), with
 * QEMU's device, bus and property names:
 *
 *   -device virtio-serial-pci,id=vser0[,max_ports=N]
 *   -device virtserialport,bus=vser0.0,nr=1,chardev=ID,name=NAME[,id=...]
 *   -device virtconsole,chardev=ID            (port 0 if free)
 *
 * With VIRTIO_CONSOLE_F_MULTIPORT (always offered) queue 0/1 are port
 * 0's receive/transmit queues, 2/3 the control queues (device to driver,
 * driver to device) and port N > 0 has 2 + 2N / 3 + 2N.  The control
 * protocol: the driver says DEVICE_READY, the device announces each port
 * (PORT_ADD), the driver answers PORT_READY, the device tells the
 * port's kind (CONSOLE_PORT), name (PORT_NAME) and whether the host end
 * is connected (PORT_OPEN); PORT_OPEN from the driver says a guest
 * program opened or closed the port, which QMP announces as
 * VSERPORT_CHANGE and query-chardev shows as "frontend-open".
 *
 * Bytes go to and come from the port's chardev; host input is taken only
 * while the guest has the port open and has posted buffers (the chardev
 * holds the rest).  The queues are served in the main loop, where the
 * chardevs live: the transport's worker only schedules a bottom half.
 * Control messages from the driver are parsed as hostile input: sizes,
 * port ids and event codes are checked and anything else is logged and
 * dropped.
 */
#include "qemu/osdep.h"
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "chardev/char.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "monitor/monitor.h"
#include "hw/virtio/virtio-pci.h"
#include "trace.h"

#define TYPE_VIRTIO_SERIAL_PCI "virtio-serial-pci"
#define TYPE_VIRTIO_SERIAL_BUS "virtio-serial-bus"
#define TYPE_VIRTIO_SERIAL_PORT "virtio-serial-port"
#define TYPE_VIRTSERIALPORT "virtserialport"
#define TYPE_VIRTCONSOLE "virtconsole"

#define VIRTIO_SERIAL_PCI(obj) \
    OBJECT_CHECK(VirtIOSerialPCI, (obj), TYPE_VIRTIO_SERIAL_PCI)
#define VIRTIO_SERIAL_PORT(obj) \
    OBJECT_CHECK(VirtIOSerialPort, (obj), TYPE_VIRTIO_SERIAL_PORT)

#define PORT_ID_UNSET UINT32_MAX
#define SERIAL_QUEUE_SIZE 128
#define CTRL_QUEUE_SIZE 32
#define SERIAL_MAX_PORTS ((VIRTIO_PCI_MAX_QUEUES / 2) - 1)
/* Largest control message the driver may send that we read. */
#define CTRL_MSG_MAX 64
#define RX_CHUNK 4096
#define SERIAL_BATCH 256

typedef struct VirtIOSerialPCI VirtIOSerialPCI;

typedef struct VirtIOSerialPort {
    DeviceState parent_obj;

    VirtIOSerialPCI *vser;
    CharBackend chr;
    bool is_console;
    bool guest_ready;           /* the driver answered PORT_READY */
    bool guest_open;            /* a guest program has it open */
    bool host_open;             /* the chardev has a peer */
    bool mig_guest_open;        /* incoming: guest_open on the source */
    VirtQueueElement *rx_elem;  /* a receive buffer we hold */
    bool rx_held;
    VirtQueueElement *tx_elem;
    uint64_t rx_bytes, tx_bytes;

    /* Properties. */
    uint32_t id;                /* "nr" */
    char *name;
    char *chardev;
} VirtIOSerialPort;

struct VirtIOSerialPCI {
    VirtIOPCIProxy parent_obj;

    BusState *bus;
    VirtIOSerialPort **ports;   /* [max_ports], by id */
    QEMUBH *bh;
    uint64_t kicked;            /* atomic: bit per queue */
    GQueue ctrl_out;            /* GByteArray: messages for the driver */
    VirtQueueElement *elem;
    bool multiport;             /* negotiated */
    bool driver_ready;          /* DEVICE_READY seen */

    /* Properties. */
    uint32_t max_ports;
    bool emergency_write;
};

/* Realized devices, for x-query-virtio-serial (BQL). */
static GSList *virtio_serial_devices;

static unsigned rx_queue(uint32_t id)
{
    return id == 0 ? 0 : 2 + 2 * id;
}

#define CTRL_RX 2   /* device -> driver */
#define CTRL_TX 3   /* driver -> device */

static const char *port_name(VirtIOSerialPort *port)
{
    DeviceState *d = DEVICE(port);

    return d->id ? d->id : (port->name ? port->name : "port");
}

static void serial_accept_input(VirtIOSerialPort *port)
{
    if (port->chr.chr) {
        qemu_chr_fe_accept_input(&port->chr);
    }
}

/* ---- control messages to the driver ------------------------------------ */

static void serial_flush_ctrl(VirtIOSerialPCI *s, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);
    VirtQueue *vq = &proxy->vqs[CTRL_RX].vq;
    bool pushed = false;

    if (!proxy->running || !s->multiport || !proxy->vqs[CTRL_RX].enabled) {
        return;
    }
    while (!g_queue_is_empty(&s->ctrl_out)) {
        GByteArray *msg;
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, s->elem, &why);
        size_t n;

        if (res == VIRTQUEUE_EMPTY) {
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            break;
        }
        if (res == VIRTQUEUE_BROKEN) {
            virtio_pci_set_needs_reset(proxy, why);
            break;
        }
        if (res == VIRTQUEUE_BAD_CHAIN || s->elem->in_len < 8) {
            qemu_log_guest_error("virtio-serial %s: bad control buffer %u: "
                                 "%s\n", virtio_pci_name(proxy),
                                 s->elem->index, why ? why : "too small");
            virtqueue_push(vq, map, s->elem->index, 0);
            pushed = true;
            continue;
        }
        msg = g_queue_pop_head(&s->ctrl_out);
        n = iov_from_buf(s->elem->sg + s->elem->out_num, s->elem->in_num, 0,
                         msg->data, msg->len);
        virtqueue_push(vq, map, s->elem->index, n);
        g_byte_array_unref(msg);
        pushed = true;
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, CTRL_RX, map);
    }
}

static void serial_send_ctrl(VirtIOSerialPCI *s, uint32_t id, uint16_t event,
                             uint16_t value, const char *extra)
{
    struct virtio_console_control c = {
        .id = GUINT32_TO_LE(id),
        .event = GUINT16_TO_LE(event),
        .value = GUINT16_TO_LE(value),
    };
    GByteArray *msg = g_byte_array_new();
    GuestMemMap *map;

    g_byte_array_append(msg, (const guint8 *)&c, sizeof(c));
    if (extra) {
        /* PORT_NAME: the name follows, NUL-terminated. */
        g_byte_array_append(msg, (const guint8 *)extra, strlen(extra) + 1);
    }
    trace_virtio_serial_ctrl_out(virtio_pci_name(VIRTIO_PCI(s)), id, event,
                                 value);
    g_queue_push_tail(&s->ctrl_out, msg);
    map = virtio_pci_get_mem(VIRTIO_PCI(s));
    serial_flush_ctrl(s, map);
    guest_mem_map_unref(map);
}

static void serial_clear_ctrl(VirtIOSerialPCI *s)
{
    GByteArray *msg;

    while ((msg = g_queue_pop_head(&s->ctrl_out))) {
        g_byte_array_unref(msg);
    }
}

/* ---- port state -------------------------------------------------------- */

static void port_set_guest_open(VirtIOSerialPort *port, bool open)
{
    JsonObject *data;

    if (port->guest_open == open) {
        return;
    }
    port->guest_open = open;
    if (port->chr.chr) {
        qemu_chr_fe_set_open(&port->chr, open);
    }
    trace_virtio_serial_guest_open(port_name(port), port->id, open);
    data = json_object_new();
    json_object_set_string_member(data, "id",
                                  DEVICE(port)->id ? DEVICE(port)->id : "");
    json_object_set_boolean_member(data, "open", open);
    qapi_event_send("VSERPORT_CHANGE", data);
    if (open) {
        serial_accept_input(port);
    }
}

static void port_announce(VirtIOSerialPCI *s, VirtIOSerialPort *port)
{
    if (s->driver_ready && s->multiport) {
        serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_PORT_ADD, 1, NULL);
    }
}

static void port_ready(VirtIOSerialPCI *s, VirtIOSerialPort *port)
{
    port->guest_ready = true;
    if (port->is_console) {
        serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_CONSOLE_PORT, 1, NULL);
    }
    if (port->name) {
        serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_PORT_NAME, 1,
                         port->name);
    }
    if (port->host_open) {
        serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL);
    }
}

/* ---- control messages from the driver ---------------------------------- */

static void serial_handle_ctrl_msg(VirtIOSerialPCI *s, const uint8_t *buf,
                                   size_t len)
{
    struct virtio_console_control c;
    VirtIOSerialPort *port = NULL;
    uint32_t id;
    uint16_t event, value;

    if (len < sizeof(c)) {
        qemu_log_guest_error("virtio-serial %s: short control message (%zu "
                             "bytes)\n", virtio_pci_name(VIRTIO_PCI(s)),
                             len);
        return;
    }
    memcpy(&c, buf, sizeof(c));
    id = GUINT32_FROM_LE(c.id);
    event = GUINT16_FROM_LE(c.event);
    value = GUINT16_FROM_LE(c.value);
    trace_virtio_serial_ctrl_in(virtio_pci_name(VIRTIO_PCI(s)), id, event,
                                value);
    if (event == VIRTIO_CONSOLE_DEVICE_READY) {
        if (!value) {
            error_report("virtio-serial %s: the guest driver failed to set "
                         "up the device", virtio_pci_name(VIRTIO_PCI(s)));
            return;
        }
        s->driver_ready = true;
        for (uint32_t i = 0; i < s->max_ports; i++) {
            if (s->ports[i]) {
                port_announce(s, s->ports[i]);
            }
        }
        return;
    }
    if (id < s->max_ports) {
        port = s->ports[id];
    }
    if (!port) {
        qemu_log_guest_error("virtio-serial %s: control event %u for port "
                             "%u, which does not exist\n",
                             virtio_pci_name(VIRTIO_PCI(s)), event, id);
        return;
    }
    switch (event) {
    case VIRTIO_CONSOLE_PORT_READY:
        if (!value) {
            error_report("virtio-serial %s: the guest could not add port %u "
                         "(%s)", virtio_pci_name(VIRTIO_PCI(s)), id,
                         port_name(port));
            return;
        }
        if (port->guest_ready) {
            qemu_log_guest_error("virtio-serial %s: port %u ready twice\n",
                                 virtio_pci_name(VIRTIO_PCI(s)), id);
            return;
        }
        port_ready(s, port);
        break;
    case VIRTIO_CONSOLE_PORT_OPEN:
        port_set_guest_open(port, value != 0);
        break;
    default:
        qemu_log_guest_error("virtio-serial %s: unexpected control event %u "
                             "from the driver\n",
                             virtio_pci_name(VIRTIO_PCI(s)), event);
        break;
    }
}

/* ---- data -------------------------------------------------------------- */

/* Guest to host: what the port's transmit queue holds goes to its chardev. */
static void serial_port_tx(VirtIOSerialPCI *s, VirtIOSerialPort *port,
                           unsigned q, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);
    VirtQueue *vq = &proxy->vqs[q].vq;
    bool pushed = false;

    for (unsigned done = 0; done < SERIAL_BATCH; done++) {
        VirtQueueElement *elem = port ? port->tx_elem : s->elem;
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, elem, &why);

        if (res == VIRTQUEUE_EMPTY) {
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            break;
        }
        if (res == VIRTQUEUE_BROKEN) {
            virtio_pci_set_needs_reset(proxy, why);
            break;
        }
        pushed = true;
        if (res == VIRTQUEUE_BAD_CHAIN) {
            qemu_log_guest_error("virtio-serial %s: bad buffer %u on queue "
                                 "%u: %s\n", virtio_pci_name(proxy),
                                 elem->index, q, why);
            virtqueue_push(vq, map, elem->index, 0);
            continue;
        }
        /* No port, or nobody at the host end: the bytes are dropped. */
        if (port && port->chr.chr &&
            qemu_chr_fe_backend_connected(&port->chr)) {
            for (unsigned i = 0; i < elem->out_num; i++) {
                if (qemu_chr_fe_write_all(&port->chr, elem->sg[i].iov_base,
                                          elem->sg[i].iov_len) < 0) {
                    break;
                }
            }
            port->tx_bytes += elem->out_len;
        }
        virtqueue_push(vq, map, elem->index, 0);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, q, map);
    }
    if (!virtqueue_empty(vq, map)) {
        __atomic_fetch_or(&s->kicked, 1ull << q, __ATOMIC_SEQ_CST);
        qemu_bh_schedule(s->bh);
    }
}

/* The driver posted bytes on the control transmit queue. */
static void serial_ctrl_tx(VirtIOSerialPCI *s, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);
    VirtQueue *vq = &proxy->vqs[CTRL_TX].vq;
    bool pushed = false;

    for (unsigned done = 0; done < SERIAL_BATCH; done++) {
        uint8_t buf[CTRL_MSG_MAX];
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, s->elem, &why);
        uint16_t head;
        size_t n;

        if (res == VIRTQUEUE_EMPTY) {
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            break;
        }
        if (res == VIRTQUEUE_BROKEN) {
            virtio_pci_set_needs_reset(proxy, why);
            break;
        }
        pushed = true;
        head = s->elem->index;
        if (res == VIRTQUEUE_BAD_CHAIN) {
            qemu_log_guest_error("virtio-serial %s: bad control buffer %u: "
                                 "%s\n", virtio_pci_name(proxy), head, why);
            virtqueue_push(vq, map, head, 0);
            continue;
        }
        n = iov_to_buf(s->elem->sg, s->elem->out_num, 0, buf, sizeof(buf));
        /* Handling may reuse s->elem (replies): return the buffer first. */
        virtqueue_push(vq, map, head, 0);
        serial_handle_ctrl_msg(s, buf, n);
    }
    if (pushed) {
        virtio_pci_notify_queue(proxy, CTRL_TX, map);
    }
}

/* ---- chardev front-end (host to guest) --------------------------------- */

/* Holds a receive buffer of the port if the guest posted one. */
static bool port_get_rx(VirtIOSerialPort *port, GuestMemMap *map)
{
    VirtIOPCIProxy *proxy = VIRTIO_PCI(port->vser);
    unsigned q = rx_queue(port->id);
    VirtQueue *vq = &proxy->vqs[q].vq;

    while (!port->rx_held) {
        const char *why;
        VirtQueuePop res = virtqueue_pop(vq, map, port->rx_elem, &why);

        if (res == VIRTQUEUE_EMPTY) {
            if (virtqueue_enable_notify(vq, map)) {
                continue;
            }
            return false;
        }
        if (res == VIRTQUEUE_BROKEN) {
            virtio_pci_set_needs_reset(proxy, why);
            return false;
        }
        if (res == VIRTQUEUE_BAD_CHAIN || !port->rx_elem->in_len) {
            qemu_log_guest_error("virtio-serial %s: bad receive buffer %u: "
                                 "%s\n", virtio_pci_name(proxy),
                                 port->rx_elem->index,
                                 why ? why : "not writable");
            virtqueue_push(vq, map, port->rx_elem->index, 0);
            virtio_pci_notify_queue(proxy, q, map);
            continue;
        }
        port->rx_held = true;
    }
    return true;
}

static bool port_rx_usable(VirtIOSerialPort *port)
{
    VirtIOSerialPCI *s = port->vser;
    VirtIOPCIProxy *proxy = s ? VIRTIO_PCI(s) : NULL;

    if (!proxy || !proxy->running || !proxy->vqs[rx_queue(port->id)].enabled) {
        return false;
    }
    /* Without multiport, port 0 is open whenever the driver runs. */
    return port->guest_open;
}

static int port_can_read(void *opaque)
{
    VirtIOSerialPort *port = opaque;
    GuestMemMap *map;
    bool ok;

    if (!port_rx_usable(port)) {
        return 0;
    }
    map = virtio_pci_get_mem(VIRTIO_PCI(port->vser));
    ok = port_get_rx(port, map);
    guest_mem_map_unref(map);
    return ok ? MIN(port->rx_elem->in_len, RX_CHUNK) : 0;
}

static void port_read(void *opaque, const uint8_t *buf, int size)
{
    VirtIOSerialPort *port = opaque;
    VirtIOPCIProxy *proxy;
    GuestMemMap *map;
    unsigned q;

    if (!port_rx_usable(port)) {
        return;
    }
    proxy = VIRTIO_PCI(port->vser);
    q = rx_queue(port->id);
    map = virtio_pci_get_mem(proxy);
    while (size > 0) {
        size_t n;

        if (!port_get_rx(port, map)) {
            qemu_log_guest_error("virtio-serial %s: %d bytes for port %u "
                                 "dropped: no receive buffer\n",
                                 virtio_pci_name(proxy), size, port->id);
            break;
        }
        n = iov_from_buf(port->rx_elem->sg + port->rx_elem->out_num,
                         port->rx_elem->in_num, 0, buf, size);
        virtqueue_push(&proxy->vqs[q].vq, map, port->rx_elem->index, n);
        port->rx_held = false;
        port->rx_bytes += n;
        buf += n;
        size -= n;
        if (!n) {
            break;
        }
    }
    virtio_pci_notify_queue(proxy, q, map);
    guest_mem_map_unref(map);
}

static void port_event(void *opaque, QEMUChrEvent event)
{
    VirtIOSerialPort *port = opaque;
    VirtIOSerialPCI *s = port->vser;
    bool open = event == CHR_EVENT_OPENED;

    if (port->host_open == open) {
        return;
    }
    port->host_open = open;
    trace_virtio_serial_host_open(port_name(port), port->id, open);
    if (s && port->guest_ready && s->multiport &&
        VIRTIO_PCI(s)->running) {
        serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_PORT_OPEN, open, NULL);
    }
}

/* ---- queues (main loop) ------------------------------------------------ */

static void serial_bh(void *opaque)
{
    VirtIOSerialPCI *s = opaque;
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);
    uint64_t kicked = __atomic_exchange_n(&s->kicked, 0, __ATOMIC_SEQ_CST);
    GuestMemMap *map;

    if (!proxy->running || !kicked) {
        return;
    }
    map = virtio_pci_get_mem(proxy);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        if (!(kicked & (1ull << q)) || !proxy->vqs[q].enabled) {
            continue;
        }
        if (q == CTRL_RX) {
            serial_flush_ctrl(s, map);
        } else if (q == CTRL_TX) {
            serial_ctrl_tx(s, map);
        } else {
            uint32_t id = q < 2 ? 0 : (q - 2) / 2;
            VirtIOSerialPort *port = id < s->max_ports ? s->ports[id] : NULL;

            if (q & 1) {
                serial_port_tx(s, port, q, map);
            } else if (port) {
                /* New receive buffers: let the chardev deliver again. */
                serial_accept_input(port);
            }
        }
    }
    guest_mem_map_unref(map);
}

static void serial_handle_queue(VirtIOPCIProxy *proxy, unsigned q,
                                GuestMemMap *map)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);

    __atomic_fetch_or(&s->kicked, 1ull << q, __ATOMIC_SEQ_CST);
    qemu_bh_schedule(s->bh);
}

static bool serial_start(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);

    s->multiport = virtio_pci_has_feature(proxy, VIRTIO_CONSOLE_F_MULTIPORT);
    __atomic_store_n(&s->kicked, 0, __ATOMIC_SEQ_CST);
    if (!s->multiport && s->ports[0]) {
        /* A single-port driver has port 0 open all the time. */
        s->ports[0]->guest_ready = true;
        port_set_guest_open(s->ports[0], true);
    }
    return true;
}

static void serial_reset(VirtIOPCIProxy *proxy)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);

    s->driver_ready = false;
    s->multiport = false;
    serial_clear_ctrl(s);
    if (s->bh) {
        qemu_bh_cancel(s->bh);
    }
    __atomic_store_n(&s->kicked, 0, __ATOMIC_SEQ_CST);
    for (uint32_t i = 0; s->ports && i < s->max_ports; i++) {
        VirtIOSerialPort *port = s->ports[i];

        if (port) {
            port->guest_ready = false;
            port->rx_held = false;
            port_set_guest_open(port, false);
        }
    }
}

static void serial_config_written(VirtIOPCIProxy *proxy, uint32_t off,
                                  unsigned len)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);
    struct virtio_console_config *cfg = (void *)proxy->config;
    uint32_t emerg = offsetof(struct virtio_console_config, emerg_wr);

    if (off <= emerg && off + len > emerg && s->emergency_write &&
        virtio_pci_has_feature(proxy, VIRTIO_CONSOLE_F_EMERG_WRITE)) {
        uint8_t c = GUINT32_FROM_LE(cfg->emerg_wr);

        /* Emergency write: one byte to port 0, even before any setup. */
        if (s->ports[0] && s->ports[0]->chr.chr) {
            qemu_chr_fe_write_all(&s->ports[0]->chr, &c, 1);
        }
    }
    /* Nothing else is the driver's to change. */
    cfg->emerg_wr = 0;
    cfg->cols = cfg->rows = 0;
    cfg->max_nr_ports = GUINT32_TO_LE(s->max_ports);
}

static bool serial_realize(VirtIOPCIProxy *proxy, Error **errp)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);
    struct virtio_console_config *cfg;

    if (!s->max_ports || s->max_ports > SERIAL_MAX_PORTS) {
        error_setg(errp, "virtio-serial-pci %s: max_ports=%u is not between "
                   "1 and %u", virtio_pci_name(proxy), s->max_ports,
                   SERIAL_MAX_PORTS);
        return false;
    }
    proxy->nvqs = 2 * (s->max_ports + 1);
    for (unsigned q = 0; q < proxy->nvqs; q++) {
        proxy->vqs[q].max_size = (q == CTRL_RX || q == CTRL_TX)
                                 ? CTRL_QUEUE_SIZE : SERIAL_QUEUE_SIZE;
    }
    proxy->host_features |= 1ull << VIRTIO_CONSOLE_F_MULTIPORT;
    if (s->emergency_write) {
        proxy->host_features |= 1ull << VIRTIO_CONSOLE_F_EMERG_WRITE;
    }
    /* One vector for the configuration, the others shared by the queues. */
    if (!proxy->vectors_prop) {
        proxy->vectors_prop = s->max_ports + 1;
    }
    proxy->config_len = sizeof(struct virtio_console_config);
    proxy->config = g_malloc0(proxy->config_len);
    cfg = (void *)proxy->config;
    cfg->max_nr_ports = GUINT32_TO_LE(s->max_ports);
    s->ports = g_new0(VirtIOSerialPort *, s->max_ports);
    s->elem = g_new0(VirtQueueElement, 1);
    s->bh = qemu_bh_new(serial_bh, s);
    g_queue_init(&s->ctrl_out);
    /* "<id>.0", where virtserialport and virtconsole plug in. */
    s->bus = qbus_new(TYPE_VIRTIO_SERIAL_BUS, DEVICE(s), NULL);
    s->bus->hotplug_allowed = true;
    virtio_serial_devices = g_slist_append(virtio_serial_devices, s);
    return true;
}

static void serial_unrealize(VirtIOPCIProxy *proxy)
{
    VirtIOSerialPCI *s = VIRTIO_SERIAL_PCI(proxy);

    virtio_serial_devices = g_slist_remove(virtio_serial_devices, s);
    serial_clear_ctrl(s);
    if (s->bh) {
        qemu_bh_delete(s->bh);
        s->bh = NULL;
    }
    g_clear_pointer(&s->elem, g_free);
    g_clear_pointer(&s->ports, g_free);
}

/* ---- ports ------------------------------------------------------------- */

static bool port_realize(DeviceState *dev, Error **errp)
{
    VirtIOSerialPort *port = VIRTIO_SERIAL_PORT(dev);
    BusState *bus = dev->parent_bus;
    VirtIOSerialPCI *s;
    const char *type = object_get_typename(OBJECT(dev));

    if (!bus || !bus->parent ||
        !object_dynamic_cast(OBJECT(bus->parent), TYPE_VIRTIO_SERIAL_PCI)) {
        error_setg(errp, "%s needs a virtio-serial bus", type);
        return false;
    }
    s = VIRTIO_SERIAL_PCI(bus->parent);
    if (port->id == PORT_ID_UNSET) {
        uint32_t i = port->is_console && !s->ports[0] ? 0 : 1;

        while (i < s->max_ports && s->ports[i]) {
            i++;
        }
        if (i >= s->max_ports) {
            error_setg(errp, "virtio-serial-bus: Maximum port limit for this "
                       "device reached");
            return false;
        }
        port->id = i;
    } else if (port->id == 0 && !port->is_console) {
        error_setg(errp, "virtio-serial-bus: Port number 0 on virtio-serial "
                   "devices reserved for virtconsole devices for backward "
                   "compatibility.");
        return false;
    } else if (port->id >= s->max_ports) {
        error_setg(errp, "virtio-serial-bus: Out-of-range port id specified, "
                   "max. allowed: %u", s->max_ports - 1);
        return false;
    } else if (s->ports[port->id]) {
        error_setg(errp, "virtio-serial-bus: A port already exists at id %u",
                   port->id);
        return false;
    }
    if (port->name) {
        for (uint32_t i = 0; i < s->max_ports; i++) {
            if (s->ports[i] && s->ports[i]->name &&
                !strcmp(s->ports[i]->name, port->name)) {
                error_setg(errp, "virtio-serial-bus: A port already exists "
                           "by the name %s", port->name);
                return false;
            }
        }
    }
    if (port->chardev) {
        Chardev *chr = qemu_chr_find(port->chardev);

        if (!chr) {
            error_setg(errp, "Property '%s.chardev' can't find value '%s'",
                       type, port->chardev);
            return false;
        }
        if (!qemu_chr_fe_init(&port->chr, chr, errp)) {
            return false;
        }
        qemu_chr_fe_set_handlers(&port->chr, port_can_read, port_read,
                                 port_event, port);
        /* Closed until a guest program opens the port. */
        qemu_chr_fe_set_open(&port->chr, false);
        port->host_open = qemu_chr_fe_backend_connected(&port->chr);
    } else {
        memset(&port->chr, 0, sizeof(port->chr));
    }
    port->vser = s;
    port->rx_elem = g_new0(VirtQueueElement, 1);
    port->tx_elem = g_new0(VirtQueueElement, 1);
    s->ports[port->id] = port;
    trace_virtio_serial_port(virtio_pci_name(VIRTIO_PCI(s)), port->id,
                             port->name ? port->name : "", true);
    /* Hot-plugged under a running driver: announce it. */
    if (VIRTIO_PCI(s)->running) {
        port_announce(s, port);
    }
    return true;
}

static void port_unrealize(DeviceState *dev)
{
    VirtIOSerialPort *port = VIRTIO_SERIAL_PORT(dev);
    VirtIOSerialPCI *s = port->vser;

    if (s && s->ports && s->ports[port->id] == port) {
        if (VIRTIO_PCI(s)->running && s->driver_ready && s->multiport) {
            serial_send_ctrl(s, port->id, VIRTIO_CONSOLE_PORT_REMOVE, 1,
                             NULL);
        }
        s->ports[port->id] = NULL;
    }
    if (port->chr.chr) {
        qemu_chr_fe_deinit(&port->chr, false);
    }
    g_clear_pointer(&port->rx_elem, g_free);
    g_clear_pointer(&port->tx_elem, g_free);
    port->vser = NULL;
}

/* Telemetry: each port's state (tests). */
static void qmp_x_query_virtio_serial(JsonObject *args, JsonNode **ret,
                                      Error **errp)
{
    JsonArray *list = json_array_new();

    for (GSList *d = virtio_serial_devices; d; d = d->next) {
        VirtIOSerialPCI *s = d->data;

        for (GList *l = s->bus->children; l; l = l->next) {
            VirtIOSerialPort *port = VIRTIO_SERIAL_PORT(l->data);
            JsonObject *o = json_object_new();

            json_object_set_string_member(o, "id",
                                          DEVICE(port)->id ? DEVICE(port)->id
                                                           : "");
            json_object_set_int_member(o, "nr", port->id);
            json_object_set_string_member(o, "name",
                                          port->name ? port->name : "");
            json_object_set_boolean_member(o, "guest-ready",
                                           port->guest_ready);
            json_object_set_boolean_member(o, "guest-open", port->guest_open);
            json_object_set_boolean_member(o, "host-open", port->host_open);
            json_object_set_int_member(o, "rx-bytes", port->rx_bytes);
            json_object_set_int_member(o, "tx-bytes", port->tx_bytes);
            json_object_set_string_member(o, "device",
                                          virtio_pci_name(VIRTIO_PCI(s)));
            json_array_add_object_element(list, o);
        }
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void __attribute__((constructor)) virtio_serial_qmp_register(void)
{
    qmp_register_command_args("x-query-virtio-serial",
                              qmp_x_query_virtio_serial, "", 0);
}

/* ---- types ------------------------------------------------------------- */

static const Property virtio_serial_props[] = {
    DEFINE_PROP_UINT32("max_ports", VirtIOSerialPCI, max_ports, 31,
                       .description = "ports the device offers (at most "
                                      "31)"),
    DEFINE_PROP_BOOL("emergency-write", VirtIOSerialPCI, emergency_write,
                     true,
                     .description = "offer VIRTIO_CONSOLE_F_EMERG_WRITE"),
    DEFINE_PROP_END_OF_LIST(),
};

static const Property virtio_serial_port_props[] = {
    DEFINE_PROP_UINT32("nr", VirtIOSerialPort, id, PORT_ID_UNSET,
                       .description = "port number (default: the first "
                                      "free one)"),
    DEFINE_PROP_STRING("name", VirtIOSerialPort, name,
                       .description = "name the guest sees "
                                      "(/dev/virtio-ports/NAME)"),
    DEFINE_PROP_STRING("chardev", VirtIOSerialPort, chardev,
                       .description = "id of the chardev of the host end"),
    DEFINE_PROP_END_OF_LIST(),
};

/* ---- migration --------------------------------------------------------- */

/*
 * The VM is stopped: a receive buffer a port holds (popped, not yet
 * filled) goes back to its queue, so the destination pops it again and
 * the guest loses no buffer.  Only port_get_rx pops a port's receive
 * queue, so the held element is the last one taken from it.  If the
 * migration fails, the source pops it again when it next needs one.
 */
static bool serial_pre_save(void *opaque, Error **errp)
{
    VirtIOSerialPCI *s = opaque;
    VirtIOPCIProxy *proxy = VIRTIO_PCI(s);

    for (uint32_t i = 0; i < s->max_ports; i++) {
        VirtIOSerialPort *port = s->ports[i];

        if (port && port->rx_held) {
            proxy->vqs[rx_queue(port->id)].vq.last_avail_idx--;
            port->rx_held = false;
        }
    }
    return true;
}

/* The driver's handshake: DEVICE_READY seen, MULTIPORT negotiated. */
static const VMStateDescription vmstate_virtio_serial = {
    .name = "virtio-serial",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = serial_pre_save,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, VirtIOSerialPCI, vmstate_virtio_pci,
                       VirtIOPCIProxy),
        VMSTATE_BOOL(driver_ready, VirtIOSerialPCI),
        VMSTATE_BOOL(multiport, VirtIOSerialPCI),
        VMSTATE_END_OF_LIST()
    },
};

static bool port_pre_save(void *opaque, Error **errp)
{
    VirtIOSerialPort *port = opaque;

    port->mig_guest_open = port->guest_open;
    return true;
}

/*
 * A program in the guest had the port open: the destination's chardev
 * front end opens too (query-chardev's frontend-open, VSERPORT_CHANGE),
 * which is what tells libvirt the guest agent is there.  Whether the
 * host end is connected is the destination's own business: when its
 * peer connects, the driver hears PORT_OPEN as usual.
 */
static bool port_post_load(void *opaque, int version_id, Error **errp)
{
    VirtIOSerialPort *port = opaque;

    port_set_guest_open(port, port->mig_guest_open);
    return true;
}

static const VMStateDescription vmstate_virtio_serial_port = {
    .name = "virtio-serial-port",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = port_pre_save,
    .post_load = port_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(guest_ready, VirtIOSerialPort),
        VMSTATE_BOOL(mig_guest_open, VirtIOSerialPort),
        VMSTATE_END_OF_LIST()
    },
};

static void virtio_serial_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    VirtIOPCIClass *vc = VIRTIO_PCI_CLASS(klass);

    dc->desc = "virtio serial ports and consoles (virtio 1.x, PCI)";
    dc->vmsd = &vmstate_virtio_serial;
    device_class_set_props(dc, virtio_serial_props);
    /* Class: simple communication controller, other. */
    virtio_pci_class_set_device(klass, VIRTIO_ID_CONSOLE, 0x0780);
    vc->realize = serial_realize;
    vc->unrealize = serial_unrealize;
    vc->config_written = serial_config_written;
    vc->start = serial_start;
    vc->handle_queue = serial_handle_queue;
    vc->reset = serial_reset;
}

static void virtio_serial_port_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    device_class_set_props(dc, virtio_serial_port_props);
    dc->bus_type = TYPE_VIRTIO_SERIAL_BUS;
    dc->vmsd = &vmstate_virtio_serial_port;
    dc->realize = port_realize;
    dc->unrealize = port_unrealize;
    dc->user_creatable = true;
    dc->hotpluggable = true;
}

static void virtserialport_class_init(ObjectClass *klass, void *data)
{
    DEVICE_CLASS(klass)->desc = "virtio serial port";
}

static void virtconsole_class_init(ObjectClass *klass, void *data)
{
    DEVICE_CLASS(klass)->desc = "virtio console (hvc)";
}

static void virtconsole_init(Object *obj)
{
    VIRTIO_SERIAL_PORT(obj)->is_console = true;
}

static const TypeInfo virtio_serial_types[] = {
    {
        .name = TYPE_VIRTIO_SERIAL_PCI,
        .parent = TYPE_VIRTIO_PCI,
        .instance_size = sizeof(VirtIOSerialPCI),
        .class_init = virtio_serial_class_init,
    },
    {
        .name = TYPE_VIRTIO_SERIAL_BUS,
        .parent = TYPE_BUS,
        .instance_size = sizeof(BusState),
        .class_size = sizeof(BusClass),
    },
    {
        .name = TYPE_VIRTIO_SERIAL_PORT,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(VirtIOSerialPort),
        .class_size = sizeof(DeviceClass),
        .class_init = virtio_serial_port_class_init,
        .abstract = true,
    },
    {
        .name = TYPE_VIRTSERIALPORT,
        .parent = TYPE_VIRTIO_SERIAL_PORT,
        .class_init = virtserialport_class_init,
    },
    {
        .name = TYPE_VIRTCONSOLE,
        .parent = TYPE_VIRTIO_SERIAL_PORT,
        .class_init = virtconsole_class_init,
        .instance_init = virtconsole_init,
    },
};

DEFINE_TYPES(virtio_serial_types)
