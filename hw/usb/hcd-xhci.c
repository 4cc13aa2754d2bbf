/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu-xhci: an xHCI host controller (1b36:000d, as QEMU names and
 * numbers it) with 4 USB 2.0 root ports (1-4, where usb-tablet and
 * usb-kbd attach) and 4 USB 3 ports (5-8, never connected), 64 device
 * slots, one interrupter, MSI-X with an INTx fallback.  Written from the
 * eXtensible Host Controller Interface specification 1.2.
 *
 * Everything the driver puts in memory is hostile: the command ring,
 * transfer rings, the event ring segment table, device and input
 * contexts.  Rings are walked with a TRB budget per doorbell (a ring of
 * link TRBs pointing at each other ends the walk), TRB lengths are
 * bounded by the bounce buffer, slot and endpoint ids by the context
 * arrays, and a pointer outside guest RAM fails the command or transfer
 * (TRB Error) or, for the event ring, sets HSE and halts the controller.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "hw/qdev-properties.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "monitor/monitor.h"
#include "system/address-spaces.h"
#include "hw/usb/usb.h"
#include "hw/usb/xhci-regs.h"
#include "trace.h"

#define TYPE_QEMU_XHCI "qemu-xhci"
#define XHCI(obj) OBJECT_CHECK(XHCIState, (obj), TYPE_QEMU_XHCI)

/*
 * Root hub ports: p2 USB 2 ports, then p3 USB 3 ports (QEMU's properties,
 * 4 each by default, at most 15 each: libvirt writes p2=15,p3=15 for
 * <controller type='usb' model='qemu-xhci' ports='15'/>).  Devices
 * attach to the USB 2 ports.
 */
#define XHCI_PORTS_DEFAULT 4
#define XHCI_PORTS_MAX 15
#define XHCI_MAX_SLOTS 64
#define XHCI_NR_EPS 32          /* DCI 1..31 */
#define XHCI_RING_BUDGET 1024   /* TRBs per ring walk */
#define XHCI_XFER_MAX 65536
#define XHCI_MSIX_VECTORS 1

typedef struct XHCIRing {
    uint64_t dequeue;
    bool ccs;
} XHCIRing;

typedef struct XHCIEndpoint {
    uint8_t state;              /* EP_* */
    uint8_t type;
    XHCIRing ring;
    bool nak_wait;              /* the head TD got NAK: wait for wakeup */
} XHCIEndpoint;

typedef struct XHCISlot {
    bool enabled;
    uint8_t state;              /* SLOT_* (0: enabled, not addressed) */
    unsigned port;              /* root hub port, 1-based; 0 none */
    uint64_t ctx;               /* output device context */
    XHCIEndpoint ep[XHCI_NR_EPS];
} XHCISlot;

typedef struct XHCIState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    MemoryRegion cap_oper;
    MemoryRegion runtime;
    MemoryRegion doorbell;
    USBBus *bus;

    /* Operational. */
    uint32_t usbcmd, usbsts, dnctrl, config;
    uint64_t dcbaap;
    uint64_t crcr;
    XHCIRing cmd_ring;
    bool cmd_running;
    uint32_t p2, p3;            /* USB 2 and USB 3 root hub ports */
    uint32_t portsc[2 * XHCI_PORTS_MAX];

    /* Interrupter 0. */
    uint32_t iman, imod, erstsz;
    uint64_t erstba, erdp;
    /* Event ring producer. */
    uint64_t ev_seg_base;
    uint32_t ev_seg_size;
    uint32_t ev_seg_idx;
    uint32_t ev_idx;
    bool ev_pcs;
    bool ev_valid;
    uint64_t events, events_dropped;

    int64_t mfindex_start;
    XHCISlot slots[XHCI_MAX_SLOTS + 1];
    uint8_t buf[XHCI_XFER_MAX];

    /* Properties. */
    bool msix;
} XHCIState;

static AddressSpace *xhci_as(XHCIState *s)
{
    return pci_get_address_space(PCI_DEVICE(s));
}

static bool xhci_dma(XHCIState *s, uint64_t addr, void *buf, size_t len,
                     bool write)
{
    return address_space_dma_rw_ram(xhci_as(s), addr, buf, len, write,
                                    TYPE_QEMU_XHCI, NULL);
}

typedef struct TRB {
    uint64_t param;
    uint32_t status;
    uint32_t control;
} TRB;

static bool xhci_read_trb(XHCIState *s, uint64_t addr, TRB *t)
{
    uint32_t raw[4];

    if ((addr & 0xf) || !xhci_dma(s, addr, raw, 16, false)) {
        return false;
    }
    t->param = GUINT32_FROM_LE(raw[0]) |
               ((uint64_t)GUINT32_FROM_LE(raw[1]) << 32);
    t->status = GUINT32_FROM_LE(raw[2]);
    t->control = GUINT32_FROM_LE(raw[3]);
    return true;
}

static bool xhci_ctx_read(XHCIState *s, uint64_t addr, uint32_t *ctx)
{
    if (!xhci_dma(s, addr, ctx, XHCI_CTX_SIZE, false)) {
        return false;
    }
    for (int i = 0; i < 8; i++) {
        ctx[i] = GUINT32_FROM_LE(ctx[i]);
    }
    return true;
}

static bool xhci_ctx_write(XHCIState *s, uint64_t addr, const uint32_t *ctx)
{
    uint32_t le[8];

    for (int i = 0; i < 8; i++) {
        le[i] = GUINT32_TO_LE(ctx[i]);
    }
    return xhci_dma(s, addr, le, XHCI_CTX_SIZE, true);
}

/* ---- interrupts and the event ring ------------------------------------- */

static void xhci_update_intx(XHCIState *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    bool level = (s->iman & XHCI_IMAN_IP) && (s->iman & XHCI_IMAN_IE) &&
                 (s->usbcmd & XHCI_CMD_INTE);

    if (!msix_enabled(d)) {
        pci_set_irq(d, level);
    }
}

/* The interrupter fires unless the handler is still busy (EHB). */
static void xhci_interrupt(XHCIState *s)
{
    PCIDevice *d = PCI_DEVICE(s);

    if (s->erdp & XHCI_ERDP_EHB) {
        return;
    }
    s->erdp |= XHCI_ERDP_EHB;
    s->iman |= XHCI_IMAN_IP;
    s->usbsts |= XHCI_STS_EINT;
    if (!(s->iman & XHCI_IMAN_IE) || !(s->usbcmd & XHCI_CMD_INTE)) {
        return;
    }
    if (msix_enabled(d)) {
        /* With MSI-X, IP clears once the message is sent (5.5.2.1). */
        s->iman &= ~XHCI_IMAN_IP;
        msix_notify(d, 0);
    } else {
        xhci_update_intx(s);
    }
}

static bool xhci_load_segment(XHCIState *s)
{
    uint32_t e[4];

    if (!xhci_dma(s, s->erstba + 16ull * s->ev_seg_idx, e, 16, false)) {
        return false;
    }
    s->ev_seg_base = (GUINT32_FROM_LE(e[0]) |
                      ((uint64_t)GUINT32_FROM_LE(e[1]) << 32)) & ~0x3full;
    s->ev_seg_size = GUINT32_FROM_LE(e[2]) & 0xffff;
    s->ev_idx = 0;
    /* Segments of 16 to 4096 TRBs (6.5). */
    return s->ev_seg_size >= 16 && s->ev_seg_size <= 4096;
}

static void xhci_halt_error(XHCIState *s, const char *why)
{
    qemu_log_guest_error("qemu-xhci: %s; host system error, halted\n", why);
    s->usbsts |= XHCI_STS_HSE | XHCI_STS_HCH;
    s->usbcmd &= ~XHCI_CMD_RS;
    s->ev_valid = false;
}

static uint64_t xhci_ev_enqueue_addr(XHCIState *s)
{
    return s->ev_seg_base + 16ull * s->ev_idx;
}

static void xhci_event(XHCIState *s, uint64_t param, uint32_t status,
                       uint32_t control)
{
    uint32_t raw[4];
    uint64_t addr;

    if (!s->ev_valid) {
        s->events_dropped++;
        return;
    }
    addr = xhci_ev_enqueue_addr(s);
    /* Full: the next slot is where software has yet to read (ERDP). */
    {
        uint32_t next_idx = s->ev_idx + 1;
        uint64_t next = s->ev_seg_base + 16ull * next_idx;

        if (next_idx == s->ev_seg_size && s->erstsz == 1) {
            next = s->ev_seg_base;
        }
        if ((s->erdp & ~0xfull) == next) {
            s->events_dropped++;
            qemu_log_guest_error("qemu-xhci: event ring full, event "
                                 "dropped\n");
            xhci_interrupt(s);
            return;
        }
    }
    raw[0] = GUINT32_TO_LE((uint32_t)param);
    raw[1] = GUINT32_TO_LE(param >> 32);
    raw[2] = GUINT32_TO_LE(status);
    raw[3] = GUINT32_TO_LE((control & ~TRB_C) | (s->ev_pcs ? TRB_C : 0));
    if (!xhci_dma(s, addr, raw, 16, true)) {
        xhci_halt_error(s, "event ring outside guest RAM");
        return;
    }
    trace_xhci_event(TRB_TYPE(control), status >> 24, param);
    s->events++;
    if (++s->ev_idx == s->ev_seg_size) {
        if (++s->ev_seg_idx >= s->erstsz) {
            s->ev_seg_idx = 0;
            s->ev_pcs = !s->ev_pcs;
        }
        if (!xhci_load_segment(s)) {
            xhci_halt_error(s, "bad event ring segment table entry");
            return;
        }
    }
    xhci_interrupt(s);
}

static void xhci_event_ring_init(XHCIState *s)
{
    s->ev_seg_idx = 0;
    s->ev_pcs = true;
    s->ev_valid = false;
    if (!s->erstsz) {
        return;
    }
    if (s->erstsz > 8 || !xhci_load_segment(s)) {
        qemu_log_guest_error("qemu-xhci: bad event ring segment table "
                             "(%u entries at 0x%" PRIx64 ")\n", s->erstsz,
                             s->erstba);
        s->usbsts |= XHCI_STS_HCE;
        return;
    }
    s->ev_valid = true;
}

static void xhci_cmd_complete(XHCIState *s, uint64_t trb, unsigned cc,
                              unsigned slot)
{
    xhci_event(s, trb, (uint32_t)cc << 24,
               (TRB_EV_CMD_COMPLETE << TRB_TYPE_SHIFT) |
               ((uint32_t)slot << 24));
}

static unsigned xhci_nports(XHCIState *s)
{
    return s->p2 + s->p3;
}

static void xhci_port_event(XHCIState *s, unsigned port)
{
    if (!(s->usbcmd & XHCI_CMD_RS)) {
        return;
    }
    s->usbsts |= XHCI_STS_PCD;
    xhci_event(s, (uint64_t)port << 24, CC_SUCCESS << 24,
               TRB_EV_PORT_STATUS << TRB_TYPE_SHIFT);
}

/* ---- ports ------------------------------------------------------------- */

static void xhci_port_connect(XHCIState *s, unsigned i, bool attached)
{
    uint32_t ps = XHCI_PORT_PP;

    if (attached) {
        ps |= XHCI_PORT_CCS | (XHCI_SPEED_FULL << XHCI_PORT_SPEED_SHIFT) |
              (XHCI_PLS_POLLING << XHCI_PORT_PLS_SHIFT);
    } else {
        ps |= XHCI_PLS_RXDETECT << XHCI_PORT_PLS_SHIFT;
    }
    s->portsc[i] = ps | (s->portsc[i] & XHCI_PORT_WAKE_MASK) |
                   XHCI_PORT_CSC;
    if ((s->portsc[i] ^ ps) & XHCI_PORT_PED) {
        s->portsc[i] |= XHCI_PORT_PEC;
    }
    xhci_port_event(s, i + 1);
}

static void xhci_usb_attach(USBBus *bus, unsigned port)
{
    xhci_port_connect(bus->opaque, port, true);
}

static void xhci_usb_detach(USBBus *bus, unsigned port)
{
    XHCIState *s = bus->opaque;

    /* Slots on that port lose their device. */
    for (unsigned i = 1; i <= XHCI_MAX_SLOTS; i++) {
        if (s->slots[i].port == port + 1) {
            s->slots[i].port = 0;
        }
    }
    xhci_port_connect(s, port, false);
}

static void xhci_kick_ep(XHCIState *s, unsigned slotid, unsigned dci);

static void xhci_usb_wakeup(USBBus *bus, unsigned port, unsigned ep)
{
    XHCIState *s = bus->opaque;
    unsigned dci = ep * 2 + 1;      /* interrupt IN */

    for (unsigned i = 1; i <= XHCI_MAX_SLOTS; i++) {
        if (s->slots[i].enabled && s->slots[i].port == port + 1 &&
            dci < XHCI_NR_EPS && s->slots[i].ep[dci].nak_wait) {
            s->slots[i].ep[dci].nak_wait = false;
            xhci_kick_ep(s, i, dci);
        }
    }
}

static const USBPortOps xhci_port_ops = {
    .attach = xhci_usb_attach,
    .detach = xhci_usb_detach,
    .wakeup = xhci_usb_wakeup,
};

static USBDevice *xhci_port_dev(XHCIState *s, unsigned port)
{
    if (port < 1 || port > s->p2) {
        return NULL;
    }
    return s->bus->port_dev[port - 1];
}

static void xhci_write_portsc(XHCIState *s, unsigned i, uint32_t val)
{
    uint32_t ps = s->portsc[i];
    USBDevice *dev = i < s->p2 ? s->bus->port_dev[i] : NULL;

    /* RW1C change bits; PED is cleared by writing 1 (disable). */
    ps &= ~(val & XHCI_PORT_CHANGES);
    if ((val & XHCI_PORT_PED) && (ps & XHCI_PORT_PED)) {
        ps &= ~XHCI_PORT_PED;
    }
    ps = (ps & ~XHCI_PORT_WAKE_MASK) | (val & XHCI_PORT_WAKE_MASK);
    if ((val & (XHCI_PORT_PR | XHCI_PORT_WPR)) && dev) {
        /* Reset: the device sees a bus reset, the port is enabled in U0. */
        usb_device_reset(dev);
        ps &= ~XHCI_PORT_PLS_MASK;
        ps |= XHCI_PORT_PED | XHCI_PORT_PRC |
              (XHCI_PLS_U0 << XHCI_PORT_PLS_SHIFT);
        s->portsc[i] = ps;
        trace_xhci_port(i + 1, val, ps);
        xhci_port_event(s, i + 1);
        return;
    }
    if ((val & XHCI_PORT_LWS) && (ps & XHCI_PORT_CCS)) {
        unsigned pls = (val & XHCI_PORT_PLS_MASK) >> XHCI_PORT_PLS_SHIFT;

        /*
         * A USB 2 port is asked for U3 (suspend), Resume (the driver's
         * resume signalling) and U0 again.
         */
        if (pls == XHCI_PLS_U0 || pls == XHCI_PLS_U3 ||
            pls == XHCI_PLS_RESUME) {
            ps = (ps & ~XHCI_PORT_PLS_MASK) | (pls << XHCI_PORT_PLS_SHIFT);
            if (pls == XHCI_PLS_U0) {
                ps |= XHCI_PORT_PLC;
                s->portsc[i] = ps;
                xhci_port_event(s, i + 1);
            }
        }
    }
    s->portsc[i] = ps;
    trace_xhci_port(i + 1, val, ps);
}

/* ---- transfers --------------------------------------------------------- */

static void xhci_ep_ctx_update(XHCIState *s, unsigned slotid, unsigned dci)
{
    XHCISlot *sl = &s->slots[slotid];
    XHCIEndpoint *ep = &sl->ep[dci];
    uint32_t ctx[8];
    uint64_t addr = sl->ctx + XHCI_CTX_SIZE * dci;

    if (!sl->ctx || !xhci_ctx_read(s, addr, ctx)) {
        return;
    }
    ctx[0] = (ctx[0] & ~7u) | ep->state;
    ctx[2] = (uint32_t)ep->ring.dequeue | (ep->ring.ccs ? 1 : 0);
    ctx[3] = ep->ring.dequeue >> 32;
    xhci_ctx_write(s, addr, ctx);
}

static void xhci_xfer_event(XHCIState *s, uint64_t trb, unsigned cc,
                            uint32_t residual, unsigned slotid, unsigned dci)
{
    xhci_event(s, trb, ((uint32_t)cc << 24) | (residual & 0xffffff),
               (TRB_EV_TRANSFER << TRB_TYPE_SHIFT) | (dci << 16) |
               ((uint32_t)slotid << 24));
}

/*
 * One TRB's packet: returns bytes moved or USB_RET_*.  *len gets what
 * the TRB asked for.
 */
static int xhci_trb_packet(XHCIState *s, USBDevice *dev, unsigned dci,
                           const TRB *t, bool *in, uint32_t *len)
{
    unsigned type = TRB_TYPE(t->control);
    unsigned epnum = dci / 2;
    int pid, r;

    *len = t->status & 0x1ffff;
    if (type == TRB_SETUP) {
        uint8_t setup[8];
        uint64_t p = GUINT64_TO_LE(t->param);

        *in = false;
        if (!(t->control & TRB_IDT) || *len != 8) {
            return USB_RET_BABBLE;
        }
        memcpy(setup, &p, 8);
        return usb_device_handle_packet(dev, USB_TOKEN_SETUP, 0, setup, 8);
    }
    if (type == TRB_STATUS) {
        *in = t->control & TRB_DIR_IN;
        *len = 0;
        return usb_device_handle_packet(dev, *in ? USB_TOKEN_IN
                                                 : USB_TOKEN_OUT, 0,
                                        s->buf, 0);
    }
    if (dci == 1) {
        *in = t->control & TRB_DIR_IN;
    } else {
        *in = dci & 1;
    }
    pid = *in ? USB_TOKEN_IN : USB_TOKEN_OUT;
    if (*len > sizeof(s->buf)) {
        return USB_RET_BABBLE;
    }
    if (!*in) {
        if (t->control & TRB_IDT) {
            uint64_t p = GUINT64_TO_LE(t->param);

            if (*len > 8) {
                return USB_RET_BABBLE;
            }
            memcpy(s->buf, &p, *len);
        } else if (*len && !xhci_dma(s, t->param, s->buf, *len, false)) {
            return USB_RET_BABBLE;
        }
        return usb_device_handle_packet(dev, pid, epnum, s->buf, *len);
    }
    r = usb_device_handle_packet(dev, pid, epnum, s->buf, *len);
    if (r > 0 && !xhci_dma(s, t->param, s->buf, r, true)) {
        return USB_RET_BABBLE;
    }
    return r;
}

/* Walks an endpoint's transfer ring while there is work. */
static void xhci_kick_ep(XHCIState *s, unsigned slotid, unsigned dci)
{
    XHCISlot *sl = &s->slots[slotid];
    XHCIEndpoint *ep = &sl->ep[dci];
    USBDevice *dev = xhci_port_dev(s, sl->port);
    unsigned budget = XHCI_RING_BUDGET;
    bool skip_td = false;

    if (!(s->usbcmd & XHCI_CMD_RS) || ep->state != EP_RUNNING) {
        return;
    }
    while (budget--) {
        uint64_t addr = ep->ring.dequeue;
        TRB t;
        unsigned type, cc;
        uint32_t len;
        bool in;
        int r;

        if (!xhci_read_trb(s, addr, &t)) {
            qemu_log_guest_error("qemu-xhci: slot %u ep %u: transfer ring "
                                 "at 0x%" PRIx64 " is not in guest RAM\n",
                                 slotid, dci, addr);
            ep->state = EP_HALTED;
            xhci_xfer_event(s, addr, CC_TRB_ERROR, 0, slotid, dci);
            break;
        }
        if (!!(t.control & TRB_C) != ep->ring.ccs) {
            break;          /* the ring is empty */
        }
        type = TRB_TYPE(t.control);
        if (type == TRB_LINK) {
            ep->ring.dequeue = t.param & ~0xfull;
            if (t.control & TRB_TC) {
                ep->ring.ccs = !ep->ring.ccs;
            }
            continue;
        }
        if (skip_td) {
            /* The rest of a TD after a short packet. */
            skip_td = t.control & TRB_CH;
            ep->ring.dequeue += 16;
            continue;
        }
        if (type == TRB_NOOP || type == TRB_EVENT_DATA) {
            if (t.control & TRB_IOC) {
                xhci_xfer_event(s, type == TRB_EVENT_DATA ? t.param : addr,
                                CC_SUCCESS, 0, slotid, dci);
            }
            ep->ring.dequeue += 16;
            continue;
        }
        if (type != TRB_NORMAL && type != TRB_SETUP && type != TRB_DATA &&
            type != TRB_STATUS) {
            qemu_log_guest_error("qemu-xhci: slot %u ep %u: TRB type %u "
                                 "not supported\n", slotid, dci, type);
            xhci_xfer_event(s, addr, CC_TRB_ERROR, 0, slotid, dci);
            ep->ring.dequeue += 16;
            continue;
        }
        if (!dev) {
            ep->state = EP_HALTED;
            xhci_xfer_event(s, addr, CC_USB_TRANSACTION_ERROR, 0, slotid,
                            dci);
            break;
        }
        r = xhci_trb_packet(s, dev, dci, &t, &in, &len);
        trace_xhci_xfer(slotid, dci, type, len, r);
        if (r == USB_RET_NAK) {
            /* The device has nothing yet: it wakes us up when it has. */
            ep->nak_wait = true;
            break;
        }
        if (r < 0) {
            cc = r == USB_RET_STALL ? CC_STALL_ERROR :
                 r == USB_RET_BABBLE ? CC_BABBLE : CC_USB_TRANSACTION_ERROR;
            ep->state = EP_HALTED;
            ep->ring.dequeue += 16;
            xhci_xfer_event(s, addr, cc, len, slotid, dci);
            break;
        }
        ep->ring.dequeue += 16;
        if (in && (uint32_t)r < len) {
            /* Short packet: report it; the TD's other TRBs are skipped. */
            if (t.control & (TRB_ISP | TRB_IOC)) {
                xhci_xfer_event(s, addr, CC_SHORT_PACKET, len - r, slotid,
                                dci);
            }
            skip_td = t.control & TRB_CH;
            continue;
        }
        if (t.control & TRB_IOC) {
            xhci_xfer_event(s, addr, CC_SUCCESS, 0, slotid, dci);
        }
    }
    xhci_ep_ctx_update(s, slotid, dci);
}

/* ---- commands ---------------------------------------------------------- */

static bool xhci_dcbaa_entry(XHCIState *s, unsigned slotid, uint64_t *ctx)
{
    uint64_t le;

    if (!xhci_dma(s, s->dcbaap + 8ull * slotid, &le, 8, false)) {
        return false;
    }
    *ctx = GUINT64_FROM_LE(le) & ~0x3full;
    return *ctx != 0;
}

static void xhci_disable_eps(XHCISlot *sl, unsigned from)
{
    for (unsigned i = from; i < XHCI_NR_EPS; i++) {
        memset(&sl->ep[i], 0, sizeof(sl->ep[i]));
    }
}

static bool xhci_set_address(USBDevice *dev, unsigned addr)
{
    uint8_t setup[8] = { 0x00, 5, addr, 0, 0, 0, 0, 0 };
    uint8_t none[1];

    return usb_device_handle_packet(dev, USB_TOKEN_SETUP, 0, setup, 8) == 8 &&
           usb_device_handle_packet(dev, USB_TOKEN_IN, 0, none, 0) == 0;
}

/* Takes an endpoint from an input context entry. */
static unsigned xhci_ep_from_ctx(XHCIEndpoint *ep, const uint32_t *ctx,
                                 unsigned dci)
{
    unsigned type = (ctx[1] >> 3) & 7;
    uint64_t deq = ((uint64_t)ctx[3] << 32) | (ctx[2] & ~0xfu);

    if (!type || (dci == 1) != (type == EP_TYPE_CONTROL) ||
        (dci > 1 && (dci & 1) != (type >= 5))) {
        return CC_PARAMETER_ERROR;
    }
    if (!deq) {
        return CC_PARAMETER_ERROR;
    }
    ep->type = type;
    ep->ring.dequeue = deq;
    ep->ring.ccs = ctx[2] & 1;
    ep->state = EP_RUNNING;
    ep->nak_wait = false;
    return CC_SUCCESS;
}

static unsigned xhci_address_device(XHCIState *s, unsigned slotid,
                                    uint64_t input, bool bsr)
{
    XHCISlot *sl = &s->slots[slotid];
    uint32_t icc[8], slot[8], ep0[8];
    unsigned port, cc;
    USBDevice *dev;

    if (!xhci_ctx_read(s, input, icc) ||
        !xhci_ctx_read(s, input + XHCI_CTX_SIZE, slot) ||
        !xhci_ctx_read(s, input + 2 * XHCI_CTX_SIZE, ep0)) {
        return CC_TRB_ERROR;
    }
    /* Add flags: the slot (A0) and EP0 (A1), nothing dropped. */
    if (icc[0] || (icc[1] & 3) != 3) {
        return CC_TRB_ERROR;
    }
    if (!xhci_dcbaa_entry(s, slotid, &sl->ctx)) {
        return CC_TRB_ERROR;
    }
    port = (slot[1] >> 16) & 0xff;
    dev = xhci_port_dev(s, port);
    if (!dev || !(s->portsc[port - 1] & XHCI_PORT_PED)) {
        return CC_USB_TRANSACTION_ERROR;
    }
    sl->port = port;
    cc = xhci_ep_from_ctx(&sl->ep[1], ep0, 1);
    if (cc != CC_SUCCESS) {
        return cc;
    }
    if (!bsr && !xhci_set_address(dev, slotid)) {
        return CC_USB_TRANSACTION_ERROR;
    }
    sl->state = bsr ? SLOT_DEFAULT : SLOT_ADDRESSED;
    slot[3] = ((uint32_t)sl->state << SLOT_STATE_SHIFT) |
              (bsr ? 0 : slotid);
    ep0[0] = (ep0[0] & ~7u) | EP_RUNNING;
    if (!xhci_ctx_write(s, sl->ctx, slot) ||
        !xhci_ctx_write(s, sl->ctx + XHCI_CTX_SIZE, ep0)) {
        return CC_TRB_ERROR;
    }
    return CC_SUCCESS;
}

static unsigned xhci_configure_ep(XHCIState *s, unsigned slotid,
                                  uint64_t input, bool dc)
{
    XHCISlot *sl = &s->slots[slotid];
    uint32_t icc[8], slot[8], out_slot[8];

    if (sl->state < SLOT_ADDRESSED) {
        return CC_CONTEXT_STATE_ERROR;
    }
    if (!xhci_ctx_read(s, sl->ctx, out_slot)) {
        return CC_TRB_ERROR;
    }
    if (dc) {
        xhci_disable_eps(sl, 2);
        sl->state = SLOT_ADDRESSED;
        out_slot[3] = (out_slot[3] & 0xff) |
                      ((uint32_t)SLOT_ADDRESSED << SLOT_STATE_SHIFT);
        return xhci_ctx_write(s, sl->ctx, out_slot) ? CC_SUCCESS
                                                    : CC_TRB_ERROR;
    }
    if (!xhci_ctx_read(s, input, icc) ||
        !xhci_ctx_read(s, input + XHCI_CTX_SIZE, slot)) {
        return CC_TRB_ERROR;
    }
    /* Validate every added context first: all or nothing. */
    for (unsigned dci = 2; dci < XHCI_NR_EPS; dci++) {
        uint32_t ctx[8];
        XHCIEndpoint probe = { 0 };

        if (!(icc[1] & (1u << dci))) {
            continue;
        }
        if (!xhci_ctx_read(s, input + XHCI_CTX_SIZE * (dci + 1), ctx) ||
            xhci_ep_from_ctx(&probe, ctx, dci) != CC_SUCCESS) {
            return CC_PARAMETER_ERROR;
        }
    }
    for (unsigned dci = 2; dci < XHCI_NR_EPS; dci++) {
        uint32_t ctx[8];

        if (icc[0] & (1u << dci)) {
            memset(&sl->ep[dci], 0, sizeof(sl->ep[dci]));
            if (xhci_ctx_read(s, sl->ctx + XHCI_CTX_SIZE * dci, ctx)) {
                ctx[0] &= ~7u;
                xhci_ctx_write(s, sl->ctx + XHCI_CTX_SIZE * dci, ctx);
            }
        }
        if (!(icc[1] & (1u << dci))) {
            continue;
        }
        xhci_ctx_read(s, input + XHCI_CTX_SIZE * (dci + 1), ctx);
        xhci_ep_from_ctx(&sl->ep[dci], ctx, dci);
        ctx[0] = (ctx[0] & ~7u) | EP_RUNNING;
        if (!xhci_ctx_write(s, sl->ctx + XHCI_CTX_SIZE * dci, ctx)) {
            return CC_TRB_ERROR;
        }
    }
    sl->state = SLOT_CONFIGURED;
    /* Context Entries come from the input slot context. */
    out_slot[0] = (out_slot[0] & ~(0x1fu << 27)) | (slot[0] & (0x1fu << 27));
    out_slot[3] = (out_slot[3] & 0xff) |
                  ((uint32_t)SLOT_CONFIGURED << SLOT_STATE_SHIFT);
    return xhci_ctx_write(s, sl->ctx, out_slot) ? CC_SUCCESS : CC_TRB_ERROR;
}

static unsigned xhci_evaluate_ctx(XHCIState *s, unsigned slotid,
                                  uint64_t input)
{
    XHCISlot *sl = &s->slots[slotid];
    uint32_t icc[8], in[8], out[8];

    if (!sl->ctx || !xhci_ctx_read(s, input, icc)) {
        return CC_TRB_ERROR;
    }
    if (icc[1] & 1) {
        if (!xhci_ctx_read(s, input + XHCI_CTX_SIZE, in) ||
            !xhci_ctx_read(s, sl->ctx, out)) {
            return CC_TRB_ERROR;
        }
        /* Max exit latency and interrupter target. */
        out[1] = (out[1] & ~0xffffu) | (in[1] & 0xffff);
        out[2] = (out[2] & ~(0x3ffu << 22)) | (in[2] & (0x3ffu << 22));
        xhci_ctx_write(s, sl->ctx, out);
    }
    if (icc[1] & 2) {
        if (!xhci_ctx_read(s, input + 2 * XHCI_CTX_SIZE, in) ||
            !xhci_ctx_read(s, sl->ctx + XHCI_CTX_SIZE, out)) {
            return CC_TRB_ERROR;
        }
        /* EP0's max packet size. */
        out[1] = (out[1] & 0xffff) | (in[1] & 0xffff0000u);
        xhci_ctx_write(s, sl->ctx + XHCI_CTX_SIZE, out);
    }
    return CC_SUCCESS;
}

static void xhci_run_command(XHCIState *s, uint64_t addr, const TRB *t)
{
    unsigned type = TRB_TYPE(t->control);
    unsigned slotid = t->control >> 24;
    unsigned dci = (t->control >> 16) & 0x1f;
    XHCISlot *sl = slotid && slotid <= XHCI_MAX_SLOTS ? &s->slots[slotid]
                                                      : NULL;
    unsigned cc = CC_SUCCESS;

    trace_xhci_command(type, slotid, t->param);
    if (type != TRB_CMD_ENABLE_SLOT && type != TRB_CMD_NOOP &&
        (!sl || !sl->enabled)) {
        xhci_cmd_complete(s, addr, CC_SLOT_NOT_ENABLED, slotid);
        return;
    }
    switch (type) {
    case TRB_CMD_ENABLE_SLOT: {
        unsigned max = MIN(s->config & 0xff, XHCI_MAX_SLOTS);

        for (slotid = 1; slotid <= max; slotid++) {
            if (!s->slots[slotid].enabled) {
                break;
            }
        }
        if (slotid > max) {
            xhci_cmd_complete(s, addr, CC_NO_SLOTS, 0);
            return;
        }
        memset(&s->slots[slotid], 0, sizeof(s->slots[slotid]));
        s->slots[slotid].enabled = true;
        break;
    }
    case TRB_CMD_DISABLE_SLOT:
        memset(sl, 0, sizeof(*sl));
        break;
    case TRB_CMD_ADDRESS_DEVICE:
        cc = xhci_address_device(s, slotid, t->param & ~0xfull,
                                 t->control & TRB_BSR);
        break;
    case TRB_CMD_CONFIGURE_EP:
        cc = xhci_configure_ep(s, slotid, t->param & ~0xfull,
                               t->control & TRB_DC);
        break;
    case TRB_CMD_EVALUATE_CTX:
        cc = xhci_evaluate_ctx(s, slotid, t->param & ~0xfull);
        break;
    case TRB_CMD_RESET_EP:
        if (dci < 1 || sl->ep[dci].state != EP_HALTED) {
            cc = CC_CONTEXT_STATE_ERROR;
            break;
        }
        sl->ep[dci].state = EP_STOPPED;
        xhci_ep_ctx_update(s, slotid, dci);
        break;
    case TRB_CMD_STOP_EP:
        if (dci < 1 || sl->ep[dci].state == EP_DISABLED) {
            cc = CC_CONTEXT_STATE_ERROR;
            break;
        }
        sl->ep[dci].state = EP_STOPPED;
        sl->ep[dci].nak_wait = false;
        xhci_ep_ctx_update(s, slotid, dci);
        break;
    case TRB_CMD_SET_TR_DEQUEUE:
        if (dci < 1 || (sl->ep[dci].state != EP_STOPPED &&
                        sl->ep[dci].state != EP_ERROR)) {
            cc = CC_CONTEXT_STATE_ERROR;
            break;
        }
        sl->ep[dci].ring.dequeue = t->param & ~0xfull;
        sl->ep[dci].ring.ccs = t->param & 1;
        xhci_ep_ctx_update(s, slotid, dci);
        break;
    case TRB_CMD_RESET_DEVICE: {
        uint32_t slot[8];

        xhci_disable_eps(sl, 2);
        sl->state = SLOT_DEFAULT;
        if (xhci_port_dev(s, sl->port)) {
            usb_device_reset(xhci_port_dev(s, sl->port));
        }
        if (sl->ctx && xhci_ctx_read(s, sl->ctx, slot)) {
            slot[3] = (uint32_t)SLOT_DEFAULT << SLOT_STATE_SHIFT;
            xhci_ctx_write(s, sl->ctx, slot);
        }
        break;
    }
    case TRB_CMD_NOOP:
        slotid = 0;
        break;
    default:
        qemu_log_guest_error("qemu-xhci: command TRB type %u not "
                             "supported\n", type);
        cc = CC_TRB_ERROR;
        break;
    }
    if (dci >= XHCI_NR_EPS) {
        cc = CC_TRB_ERROR;
    }
    xhci_cmd_complete(s, addr, cc, slotid);
}

static void xhci_process_commands(XHCIState *s)
{
    unsigned budget = XHCI_RING_BUDGET;

    if (!(s->usbcmd & XHCI_CMD_RS)) {
        return;
    }
    s->cmd_running = true;
    while (budget--) {
        uint64_t addr = s->cmd_ring.dequeue;
        TRB t;

        if (!xhci_read_trb(s, addr, &t)) {
            qemu_log_guest_error("qemu-xhci: command ring at 0x%" PRIx64
                                 " is not in guest RAM\n", addr);
            break;
        }
        if (!!(t.control & TRB_C) != s->cmd_ring.ccs) {
            break;
        }
        if (TRB_TYPE(t.control) == TRB_LINK) {
            s->cmd_ring.dequeue = t.param & ~0xfull;
            if (t.control & TRB_TC) {
                s->cmd_ring.ccs = !s->cmd_ring.ccs;
            }
            continue;
        }
        s->cmd_ring.dequeue += 16;
        xhci_run_command(s, addr, &t);
    }
}

/* ---- reset ------------------------------------------------------------- */

static void xhci_reset(XHCIState *s)
{
    s->usbcmd = 0;
    s->usbsts = XHCI_STS_HCH;
    s->dnctrl = 0;
    s->config = 0;
    s->dcbaap = 0;
    s->crcr = 0;
    s->cmd_ring.dequeue = 0;
    s->cmd_ring.ccs = false;
    s->cmd_running = false;
    s->iman = s->imod = s->erstsz = 0;
    s->erstba = s->erdp = 0;
    s->ev_valid = false;
    s->events = s->events_dropped = 0;
    memset(s->slots, 0, sizeof(s->slots));
    for (unsigned i = 0; i < xhci_nports(s); i++) {
        bool attached = i < s->p2 && s->bus->port_dev[i];

        s->portsc[i] = 0;
        xhci_port_connect(s, i, attached);
        if (!attached) {
            s->portsc[i] &= ~XHCI_PORT_CSC;
        }
        if (attached) {
            usb_device_reset(s->bus->port_dev[i]);
        }
    }
    xhci_update_intx(s);
}

/* ---- registers --------------------------------------------------------- */

static uint32_t xhci_extcap_read(XHCIState *s, unsigned off)
{
    /* Two Supported Protocol capabilities: USB 2.0 then USB 3.0. */
    const uint32_t caps[] = {
        /* ID 2, next 4 dwords on, revision 2.00 */
        0x02000402, 0x20425355, (s->p2 << 8) | 1, 0,
        /* ID 2, last, revision 3.00 */
        0x03000002, 0x20425355,
        (s->p3 << 8) | (s->p2 + 1), 0,
    };

    return off / 4 < G_N_ELEMENTS(caps) ? caps[off / 4] : 0;
}

static uint64_t xhci_cap_oper_read(void *opaque, hwaddr addr, unsigned size)
{
    XHCIState *s = opaque;
    uint32_t v = 0;

    if (addr < XHCI_EXTCAP_OFF) {
        switch (addr & ~3) {
        case 0x00:
            v = XHCI_CAPLENGTH | (0x0100 << 16);
            break;
        case XHCI_CAP_HCSPARAMS1:
            v = XHCI_MAX_SLOTS | (1 << 8) | (xhci_nports(s) << 24);
            break;
        case XHCI_CAP_HCSPARAMS2:
            /* IST 1 frame... no scratchpads, ERST max 2^3. */
            v = 0x0f | (3 << 4);
            break;
        case XHCI_CAP_HCCPARAMS1:
            /* 64-bit, 32-byte contexts, xECP at XHCI_EXTCAP_OFF. */
            v = 1 | ((XHCI_EXTCAP_OFF / 4) << 16);
            break;
        case XHCI_CAP_DBOFF:
            v = XHCI_DOORBELL_OFF;
            break;
        case XHCI_CAP_RTSOFF:
            v = XHCI_RUNTIME_OFF;
            break;
        }
    } else if (addr < XHCI_OPER) {
        v = xhci_extcap_read(s, addr - XHCI_EXTCAP_OFF);
    } else if (addr < XHCI_PORTS_OFF) {
        switch (addr - XHCI_OPER) {
        case XHCI_USBCMD:
            v = s->usbcmd;
            break;
        case XHCI_USBSTS:
            v = s->usbsts;
            break;
        case XHCI_PAGESIZE:
            v = 1;      /* 4 KiB */
            break;
        case XHCI_DNCTRL:
            v = s->dnctrl;
            break;
        case XHCI_CRCR:
            /* The pointer reads as zero; CRR says whether it runs. */
            v = s->cmd_running ? XHCI_CRCR_CRR : 0;
            break;
        case XHCI_DCBAAP:
            v = s->dcbaap;
            break;
        case XHCI_DCBAAP + 4:
            v = s->dcbaap >> 32;
            break;
        case XHCI_CONFIG:
            v = s->config;
            break;
        }
    } else {
        unsigned port = (addr - XHCI_PORTS_OFF) / 0x10;

        if (port < xhci_nports(s) && ((addr - XHCI_PORTS_OFF) & 0xf) == 0) {
            v = s->portsc[port];
        }
    }
    return v;
}

static void xhci_cap_oper_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    XHCIState *s = opaque;

    if (addr < XHCI_OPER) {
        return;         /* capabilities are read-only */
    }
    if (addr >= XHCI_PORTS_OFF) {
        unsigned port = (addr - XHCI_PORTS_OFF) / 0x10;

        if (port < xhci_nports(s) && ((addr - XHCI_PORTS_OFF) & 0xf) == 0) {
            xhci_write_portsc(s, port, val);
        }
        return;
    }
    switch (addr - XHCI_OPER) {
    case XHCI_USBCMD: {
        uint32_t old = s->usbcmd;

        if (val & XHCI_CMD_HCRST) {
            xhci_reset(s);
            return;
        }
        s->usbcmd = val & (XHCI_CMD_RS | XHCI_CMD_INTE | XHCI_CMD_HSEE |
                           XHCI_CMD_EWE);
        if ((val & XHCI_CMD_RS) && !(old & XHCI_CMD_RS)) {
            s->usbsts &= ~XHCI_STS_HCH;
            s->mfindex_start = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
            /* Ports that changed while halted get their events now. */
            for (unsigned i = 0; i < xhci_nports(s); i++) {
                if (s->portsc[i] & XHCI_PORT_CHANGES) {
                    xhci_port_event(s, i + 1);
                }
            }
        } else if (!(val & XHCI_CMD_RS) && (old & XHCI_CMD_RS)) {
            s->usbsts |= XHCI_STS_HCH;
            s->cmd_running = false;
        }
        xhci_update_intx(s);
        trace_xhci_usbcmd(old, s->usbcmd);
        break;
    }
    case XHCI_USBSTS:
        s->usbsts &= ~(val & (XHCI_STS_HSE | XHCI_STS_EINT | XHCI_STS_PCD |
                              XHCI_STS_HCE));
        xhci_update_intx(s);
        break;
    case XHCI_DNCTRL:
        s->dnctrl = val & 0xffff;
        break;
    case XHCI_CRCR:
        if (s->cmd_running) {
            /* Only CS/CA matter while it runs. */
            if (val & (XHCI_CRCR_CS | XHCI_CRCR_CA)) {
                s->cmd_running = false;
                xhci_event(s, s->cmd_ring.dequeue, 24u << 24,
                           TRB_EV_CMD_COMPLETE << TRB_TYPE_SHIFT);
            }
            break;
        }
        s->crcr = (s->crcr & 0xffffffff00000000ull) | (uint32_t)val;
        s->cmd_ring.dequeue = s->crcr & ~0x3full;
        s->cmd_ring.ccs = val & XHCI_CRCR_RCS;
        break;
    case XHCI_CRCR + 4:
        if (!s->cmd_running) {
            s->crcr = (s->crcr & 0xffffffffull) | ((uint64_t)val << 32);
            s->cmd_ring.dequeue = s->crcr & ~0x3full;
        }
        break;
    case XHCI_DCBAAP:
        s->dcbaap = (s->dcbaap & 0xffffffff00000000ull) |
                    ((uint32_t)val & ~0x3fu);
        break;
    case XHCI_DCBAAP + 4:
        s->dcbaap = (s->dcbaap & 0xffffffffull) | ((uint64_t)val << 32);
        break;
    case XHCI_CONFIG:
        s->config = MIN(val & 0xff, XHCI_MAX_SLOTS);
        break;
    default:
        break;
    }
}

static const MemoryRegionOps xhci_cap_oper_ops = {
    .read = xhci_cap_oper_read,
    .write = xhci_cap_oper_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static uint64_t xhci_runtime_read(void *opaque, hwaddr addr, unsigned size)
{
    XHCIState *s = opaque;

    if (addr == XHCI_MFINDEX) {
        int64_t ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->mfindex_start;

        return (s->usbcmd & XHCI_CMD_RS) ? (ns / 125000) & 0x3fff : 0;
    }
    switch (addr - XHCI_INTR0) {
    case XHCI_IMAN:
        return s->iman;
    case XHCI_IMOD:
        return s->imod;
    case XHCI_ERSTSZ:
        return s->erstsz;
    case XHCI_ERSTBA:
        return (uint32_t)s->erstba;
    case XHCI_ERSTBA + 4:
        return s->erstba >> 32;
    case XHCI_ERDP:
        return (uint32_t)s->erdp;
    case XHCI_ERDP + 4:
        return s->erdp >> 32;
    }
    return 0;
}

static void xhci_runtime_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    XHCIState *s = opaque;

    switch (addr - XHCI_INTR0) {
    case XHCI_IMAN:
        if (val & XHCI_IMAN_IP) {
            s->iman &= ~XHCI_IMAN_IP;
        }
        s->iman = (s->iman & ~XHCI_IMAN_IE) | (val & XHCI_IMAN_IE);
        xhci_update_intx(s);
        break;
    case XHCI_IMOD:
        s->imod = val;
        break;
    case XHCI_ERSTSZ:
        s->erstsz = val & 0xffff;
        break;
    case XHCI_ERSTBA:
        s->erstba = (s->erstba & 0xffffffff00000000ull) |
                    ((uint32_t)val & ~0x3fu);
        break;
    case XHCI_ERSTBA + 4:
        /*
         * Drivers write the 64-bit register low half first: the event
         * ring starts (4.9.4) once the high half is in.
         */
        s->erstba = (s->erstba & 0xffffffffull) | ((uint64_t)val << 32);
        xhci_event_ring_init(s);
        break;
    case XHCI_ERDP: {
        bool busy = s->erdp & XHCI_ERDP_EHB;

        s->erdp = (s->erdp & 0xffffffff00000000ull) |
                  ((uint32_t)val & ~0xfu);
        /* EHB is RW1C; writing it says the handler is done. */
        if (busy && !(val & XHCI_ERDP_EHB)) {
            s->erdp |= XHCI_ERDP_EHB;
        }
        if (!(s->erdp & XHCI_ERDP_EHB) && s->ev_valid &&
            (s->erdp & ~0xfull) != xhci_ev_enqueue_addr(s)) {
            /* Events the handler has not seen yet: interrupt again. */
            xhci_interrupt(s);
        }
        break;
    }
    case XHCI_ERDP + 4:
        s->erdp = (s->erdp & 0xffffffffull) | ((uint64_t)val << 32);
        break;
    }
}

static const MemoryRegionOps xhci_runtime_ops = {
    .read = xhci_runtime_read,
    .write = xhci_runtime_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static uint64_t xhci_doorbell_read(void *opaque, hwaddr addr, unsigned size)
{
    return 0;
}

static void xhci_doorbell_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    XHCIState *s = opaque;
    unsigned slotid = addr / 4;
    unsigned target = val & 0xff;

    trace_xhci_doorbell(slotid, target);
    if (!(s->usbcmd & XHCI_CMD_RS)) {
        return;
    }
    if (slotid == 0) {
        if (target == 0) {
            xhci_process_commands(s);
        }
        return;
    }
    if (slotid > XHCI_MAX_SLOTS || !s->slots[slotid].enabled ||
        target < 1 || target >= XHCI_NR_EPS) {
        qemu_log_guest_error("qemu-xhci: doorbell %u target %u rung for "
                             "nothing\n", slotid, target);
        return;
    }
    /* A doorbell restarts a stopped endpoint (4.6.9, 4.8.3). */
    if (s->slots[slotid].ep[target].state == EP_STOPPED) {
        s->slots[slotid].ep[target].state = EP_RUNNING;
    }
    s->slots[slotid].ep[target].nak_wait = false;
    xhci_kick_ep(s, slotid, target);
}

static const MemoryRegionOps xhci_doorbell_ops = {
    .read = xhci_doorbell_read,
    .write = xhci_doorbell_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

/* ---- PCI --------------------------------------------------------------- */

static bool xhci_realize(PCIDevice *dev, Error **errp)
{
    XHCIState *s = XHCI(dev);

    dev->config[PCI_CLASS_PROG] = 0x30;     /* xHCI */
    dev->config[PCI_INTERRUPT_PIN] = 1;
    /* Serial bus release number: USB 3.0. */
    dev->config[0x60] = 0x30;
    memory_region_init(&s->mmio, OBJECT(s), "xhci", XHCI_BAR_SIZE);
    memory_region_init_io(&s->cap_oper, OBJECT(s), &xhci_cap_oper_ops, s,
                          "xhci-cap-oper", XHCI_RUNTIME_OFF);
    memory_region_init_io(&s->runtime, OBJECT(s), &xhci_runtime_ops, s,
                          "xhci-runtime", 0x1000);
    memory_region_init_io(&s->doorbell, OBJECT(s), &xhci_doorbell_ops, s,
                          "xhci-doorbell", 0x1000);
    memory_region_add_subregion(&s->mmio, 0, &s->cap_oper);
    memory_region_add_subregion(&s->mmio, XHCI_RUNTIME_OFF, &s->runtime);
    memory_region_add_subregion(&s->mmio, XHCI_DOORBELL_OFF, &s->doorbell);
    pci_register_bar(dev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);
    if (s->msix &&
        msix_init(dev, XHCI_MSIX_VECTORS, &s->mmio, 0, XHCI_MSIX_OFF,
                  &s->mmio, 0, XHCI_MSIX_PBA_OFF, 0, errp) < 0) {
        return false;
    }
    if (s->p2 < 1 || s->p2 > XHCI_PORTS_MAX ||
        s->p3 < 1 || s->p3 > XHCI_PORTS_MAX) {
        error_setg(errp, "qemu-xhci: p2=%u, p3=%u: each must be 1 to %d",
                   s->p2, s->p3, XHCI_PORTS_MAX);
        return false;
    }
    s->bus = usb_bus_new(DEVICE(s), s->p2, &xhci_port_ops, s);
    xhci_reset(s);
    return true;
}

static void xhci_exit(PCIDevice *dev)
{
    XHCIState *s = XHCI(dev);

    if (msix_present(dev)) {
        msix_uninit(dev, &s->mmio, &s->mmio);
    }
}

static void xhci_pci_reset(PCIDevice *dev)
{
    xhci_reset(XHCI(dev));
}

static void xhci_finalize(Object *obj)
{
    XHCIState *s = XHCI(obj);

    if (PCI_DEVICE(s)->bus || !memory_region_size(&s->mmio)) {
        return;
    }
    memory_region_finalize(&s->cap_oper);
    memory_region_finalize(&s->runtime);
    memory_region_finalize(&s->doorbell);
    memory_region_finalize(&s->mmio);
}

/* Telemetry for tests. */
static GSList *xhci_devices;

static void qmp_x_query_xhci(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonArray *list = json_array_new();

    for (GSList *l = xhci_devices; l; l = l->next) {
        XHCIState *s = l->data;
        JsonObject *o = json_object_new();
        unsigned slots = 0;

        for (unsigned i = 1; i <= XHCI_MAX_SLOTS; i++) {
            slots += s->slots[i].enabled;
        }
        json_object_set_string_member(o, "id", DEVICE(s)->id ? DEVICE(s)->id
                                                             : "");
        json_object_set_int_member(o, "events", s->events);
        json_object_set_int_member(o, "events-dropped", s->events_dropped);
        json_object_set_int_member(o, "slots", slots);
        json_object_set_int_member(o, "usbsts", s->usbsts);
        json_array_add_object_element(list, o);
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void __attribute__((constructor)) xhci_qmp_register(void)
{
    qmp_register_command_args("x-query-xhci", qmp_x_query_xhci, "", 0);
}

static bool xhci_realize_tracked(PCIDevice *dev, Error **errp)
{
    if (!xhci_realize(dev, errp)) {
        return false;
    }
    xhci_devices = g_slist_append(xhci_devices, dev);
    return true;
}

static void xhci_exit_tracked(PCIDevice *dev)
{
    xhci_devices = g_slist_remove(xhci_devices, dev);
    xhci_exit(dev);
}

static const Property xhci_props[] = {
    DEFINE_PROP_BOOL("msix", XHCIState, msix, true,
                     .description = "MSI-X (else INTx)"),
    DEFINE_PROP_UINT32("p2", XHCIState, p2, XHCI_PORTS_DEFAULT,
                       .description = "USB 2 root hub ports (1-15)"),
    DEFINE_PROP_UINT32("p3", XHCIState, p3, XHCI_PORTS_DEFAULT,
                       .description = "USB 3 root hub ports (1-15)"),
    DEFINE_PROP_END_OF_LIST(),
};

/* ---- migration --------------------------------------------------------- */

/*
 * Everything else a driver set up (device contexts, transfer, command
 * and event rings, the segment table) lives in guest RAM and moves with
 * it; the controller keeps where it stands in each ring.
 */
static const VMStateDescription vmstate_xhci_ep = {
    .name = "xhci-endpoint",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_MAX(state, XHCIEndpoint, EP_ERROR),
        VMSTATE_UINT8_MAX(type, XHCIEndpoint, 7),
        VMSTATE_UINT64(ring.dequeue, XHCIEndpoint),
        VMSTATE_BOOL(ring.ccs, XHCIEndpoint),
        VMSTATE_BOOL(nak_wait, XHCIEndpoint),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_xhci_slot = {
    .name = "xhci-slot",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(enabled, XHCISlot),
        VMSTATE_UINT8_MAX(state, XHCISlot, SLOT_CONFIGURED),
        VMSTATE_UINT32(port, XHCISlot),
        VMSTATE_UINT64(ctx, XHCISlot),
        VMSTATE_STRUCT_ARRAY(ep, XHCISlot, vmstate_xhci_ep, XHCIEndpoint),
        VMSTATE_END_OF_LIST()
    },
};

static bool xhci_post_load(void *opaque, int version_id, Error **errp)
{
    XHCIState *s = opaque;
    unsigned nports = xhci_nports(s);

    if (s->config > XHCI_MAX_SLOTS || s->erstsz > 8 ||
        (s->ev_valid && (!s->erstsz || s->ev_seg_idx >= s->erstsz ||
                         s->ev_idx >= s->ev_seg_size))) {
        error_setg(errp, "qemu-xhci %s: %u slots enabled, or event ring "
                   "segment %u of %u at entry %u of %u, out of range",
                   DEVICE(s)->id ? DEVICE(s)->id : "(no id)", s->config,
                   s->ev_seg_idx, s->erstsz, s->ev_idx, s->ev_seg_size);
        return false;
    }
    for (unsigned i = 0; i <= XHCI_MAX_SLOTS; i++) {
        if (s->slots[i].port > nports) {
            error_setg(errp, "qemu-xhci %s: slot %u on root port %u, the "
                       "controller has %u (same p2/p3 on both sides?)",
                       DEVICE(s)->id ? DEVICE(s)->id : "(no id)", i,
                       s->slots[i].port, nports);
            return false;
        }
    }
    return true;
}

static const VMStateDescription vmstate_xhci = {
    .name = "qemu-xhci",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = xhci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, XHCIState, vmstate_pci_device, PCIDevice),
        VMSTATE_UINT32(usbcmd, XHCIState),
        VMSTATE_UINT32(usbsts, XHCIState),
        VMSTATE_UINT32(dnctrl, XHCIState),
        VMSTATE_UINT32(config, XHCIState),
        VMSTATE_UINT64(dcbaap, XHCIState),
        VMSTATE_UINT64(crcr, XHCIState),
        VMSTATE_UINT64(cmd_ring.dequeue, XHCIState),
        VMSTATE_BOOL(cmd_ring.ccs, XHCIState),
        VMSTATE_BOOL(cmd_running, XHCIState),
        VMSTATE_UINT32_ARRAY(portsc, XHCIState),
        VMSTATE_UINT32(iman, XHCIState),
        VMSTATE_UINT32(imod, XHCIState),
        VMSTATE_UINT32(erstsz, XHCIState),
        VMSTATE_UINT64(erstba, XHCIState),
        VMSTATE_UINT64(erdp, XHCIState),
        VMSTATE_UINT64(ev_seg_base, XHCIState),
        VMSTATE_UINT32(ev_seg_size, XHCIState),
        VMSTATE_UINT32(ev_seg_idx, XHCIState),
        VMSTATE_UINT32(ev_idx, XHCIState),
        VMSTATE_BOOL(ev_pcs, XHCIState),
        VMSTATE_BOOL(ev_valid, XHCIState),
        VMSTATE_UINT64(events, XHCIState),
        VMSTATE_UINT64(events_dropped, XHCIState),
        /* On the virtual clock, which is restored first. */
        VMSTATE_INT64(mfindex_start, XHCIState),
        VMSTATE_STRUCT_ARRAY(slots, XHCIState, vmstate_xhci_slot, XHCISlot),
        VMSTATE_END_OF_LIST()
    },
};

static void xhci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "xHCI USB host controller (QEMU's qemu-xhci)";
    dc->user_creatable = true;
    dc->hotpluggable = true;
    dc->vmsd = &vmstate_xhci;
    device_class_set_props(dc, xhci_props);
    pc->realize = xhci_realize_tracked;
    pc->exit = xhci_exit_tracked;
    pc->reset = xhci_pci_reset;
    pc->vendor_id = 0x1b36;
    pc->device_id = 0x000d;
    pc->revision = 0x01;
    pc->class_id = 0x0c03;
    pc->subsystem_vendor_id = 0x1af4;
    pc->subsystem_id = 0x1100;
}

static const TypeInfo xhci_types[] = {
    {
        .name = TYPE_QEMU_XHCI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(XHCIState),
        .instance_finalize = xhci_finalize,
        .class_init = xhci_class_init,
    },
};

DEFINE_TYPES(xhci_types)
