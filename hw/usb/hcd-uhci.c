/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * piix3-usb-uhci: the PIIX3's USB function (8086:7020), a UHCI host
 * controller with two root ports, as QEMU names it (what -usb adds on
 * pc, and libvirt's implicit controller at 00:01.2).  Written from the
 * Universal Host Controller Interface Design Guide, revision 1.1.
 *
 * While the schedule runs (USBCMD.RS) a timer walks one frame per
 * millisecond of virtual time (catching up at most a few frames when the
 * host was late): the frame list entry, then queue heads (horizontal
 * links) and their transfer descriptors (vertical), executing each active
 * TD against the device with the TD's address.  Everything is read from
 * guest RAM and trusted in nothing: link pointers may loop (each frame
 * has a budget of elements and stops at a queue head it already visited
 * without progress), lengths are clamped to the TD's MaxLen, and a
 * pointer outside RAM ends the frame with HCPE (host controller process
 * error), as the guide says for a schedule the controller cannot follow.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "hw/pci/pci.h"
#include "system/address-spaces.h"
#include "hw/usb/usb.h"
#include "hw/usb/uhci-regs.h"
#include "trace.h"

#define TYPE_PIIX3_USB_UHCI "piix3-usb-uhci"
#define UHCI(obj) OBJECT_CHECK(UHCIState, (obj), TYPE_PIIX3_USB_UHCI)

#define UHCI_PORTS 2
#define UHCI_FRAME_NS 1000000
/* Frames handled in one timer run when the host was late. */
#define UHCI_MAX_CATCHUP 8
/* Schedule elements (QHs + TDs) one frame may visit. */
#define UHCI_FRAME_BUDGET 512
#define UHCI_QH_SEEN 32
#define UHCI_MAX_PACKET 1280

typedef struct UHCIState {
    PCIDevice parent_obj;

    MemoryRegion io;
    USBBus *bus;
    QEMUTimer *frame_timer;
    int64_t next_frame_ns;

    uint16_t cmd;
    uint16_t sts;
    uint16_t intr;
    uint16_t frnum;
    uint32_t flbase;
    uint8_t sofmod;
    uint16_t portsc[UHCI_PORTS];
    bool irq_level;
    uint8_t buf[UHCI_MAX_PACKET];

    uint64_t frames, tds;
} UHCIState;

static AddressSpace *uhci_as(UHCIState *s)
{
    return pci_get_address_space(PCI_DEVICE(s));
}

static bool uhci_read32(UHCIState *s, uint32_t addr, uint32_t *v)
{
    uint32_t le;

    if (!address_space_dma_rw_ram(uhci_as(s), addr, &le, 4, false,
                                  TYPE_PIIX3_USB_UHCI, NULL)) {
        return false;
    }
    *v = GUINT32_FROM_LE(le);
    return true;
}

static bool uhci_write32(UHCIState *s, uint32_t addr, uint32_t v)
{
    uint32_t le = GUINT32_TO_LE(v);

    return address_space_dma_rw_ram(uhci_as(s), addr, &le, 4, true,
                                    TYPE_PIIX3_USB_UHCI, NULL);
}

/* ---- interrupts -------------------------------------------------------- */

static void uhci_update_irq(UHCIState *s)
{
    bool level = ((s->sts & UHCI_STS_USBINT) &&
                  (s->intr & (UHCI_INTR_IOC | UHCI_INTR_SPD))) ||
                 ((s->sts & UHCI_STS_ERROR) && (s->intr & UHCI_INTR_TOCRC)) ||
                 ((s->sts & UHCI_STS_RD) && (s->intr & UHCI_INTR_RESUME)) ||
                 (s->sts & (UHCI_STS_HSE | UHCI_STS_HCPE));

    if (level != s->irq_level) {
        s->irq_level = level;
        pci_set_irq(PCI_DEVICE(s), level);
    }
}

/* ---- transfer descriptors ---------------------------------------------- */

typedef enum TDResult {
    TD_DONE,            /* retired: advance the queue */
    TD_NAK,             /* still active: try again next frame */
    TD_STOP,            /* retired, but the queue stops here */
    TD_INACTIVE,        /* not active: the queue is stopped */
    TD_BAD,             /* could not be read: schedule error */
} TDResult;

static TDResult uhci_run_td(UHCIState *s, uint32_t td_addr, uint32_t *link,
                            bool *ioc)
{
    uint32_t td[4], ctrl, token;
    unsigned pid, addr, ep, maxlen;
    USBDevice *dev;
    int r;

    for (int i = 0; i < 4; i++) {
        if (!uhci_read32(s, td_addr + 4 * i, &td[i])) {
            return TD_BAD;
        }
    }
    *link = td[0];
    ctrl = td[1];
    token = td[2];
    if (!(ctrl & UHCI_TD_ACTIVE)) {
        return TD_INACTIVE;
    }
    s->tds++;
    pid = token & 0xff;
    addr = (token >> 8) & 0x7f;
    ep = (token >> 15) & 0xf;
    /* MaxLen is n - 1; 0x7ff means a zero-length packet. */
    maxlen = ((token >> 21) + 1) & 0x7ff;
    dev = NULL;
    /* Only enabled ports take part in bus traffic. */
    for (unsigned i = 0; i < UHCI_PORTS; i++) {
        USBDevice *d = s->bus->port_dev[i];

        if (d && d->addr == addr && (s->portsc[i] & UHCI_PORT_PE)) {
            dev = d;
            break;
        }
    }
    trace_uhci_td(td_addr, pid, addr, ep, maxlen, ctrl);
    if (maxlen > sizeof(s->buf)) {
        /* More than any full-speed packet: babble. */
        r = USB_RET_BABBLE;
    } else if (!dev || (pid != USB_TOKEN_IN && pid != USB_TOKEN_OUT &&
                        pid != USB_TOKEN_SETUP)) {
        r = USB_RET_NODEV;
    } else {
        if (pid == USB_TOKEN_IN) {
            r = usb_device_handle_packet(dev, pid, ep, s->buf, maxlen);
            if (r > 0 && !address_space_dma_rw_ram(uhci_as(s), td[3], s->buf,
                                                   r, true,
                                                   TYPE_PIIX3_USB_UHCI,
                                                   NULL)) {
                return TD_BAD;
            }
        } else {
            if (maxlen && !address_space_dma_rw_ram(uhci_as(s), td[3], s->buf,
                                                    maxlen, false,
                                                    TYPE_PIIX3_USB_UHCI,
                                                    NULL)) {
                return TD_BAD;
            }
            r = usb_device_handle_packet(dev, pid, ep, s->buf, maxlen);
        }
    }
    if (r == USB_RET_NAK) {
        if (!(ctrl & UHCI_TD_NAK)) {
            uhci_write32(s, td_addr + 4, ctrl | UHCI_TD_NAK);
        }
        return TD_NAK;
    }
    ctrl &= ~(UHCI_TD_ACTIVE | UHCI_TD_STATUS_MASK | UHCI_TD_ACTLEN_MASK);
    if (r >= 0) {
        /* ActLen is n - 1 as well. */
        ctrl |= (r - 1) & UHCI_TD_ACTLEN_MASK;
        uhci_write32(s, td_addr + 4, ctrl);
        if (ctrl & UHCI_TD_IOC) {
            *ioc = true;
        }
        if (pid == USB_TOKEN_IN && (unsigned)r < maxlen &&
            (ctrl & UHCI_TD_SPD)) {
            /* A short packet ends the transfer: the queue stops here. */
            s->sts |= UHCI_STS_USBINT;
            return TD_STOP;
        }
        return TD_DONE;
    }
    switch (r) {
    case USB_RET_STALL:
        ctrl |= UHCI_TD_STALLED;
        break;
    case USB_RET_BABBLE:
        ctrl |= UHCI_TD_STALLED | UHCI_TD_BABBLE;
        break;
    default:
        /* Nobody answered: timeout, retired at once (errors counted out). */
        ctrl |= UHCI_TD_STALLED | UHCI_TD_CRCTO;
        ctrl &= ~UHCI_TD_CERR_MASK;
        break;
    }
    ctrl |= UHCI_TD_ACTLEN_MASK;
    uhci_write32(s, td_addr + 4, ctrl);
    s->sts |= UHCI_STS_ERROR;
    if (ctrl & UHCI_TD_IOC) {
        *ioc = true;
    }
    return TD_STOP;
}

/* ---- the schedule ------------------------------------------------------ */

static void uhci_process_frame(UHCIState *s)
{
    uint32_t link, qh_seen[UHCI_QH_SEEN];
    unsigned nseen = 0, budget = UHCI_FRAME_BUDGET;
    uint64_t progress = 0, progress_at_seen[UHCI_QH_SEEN];
    bool ioc = false;

    s->frames++;
    if (!uhci_read32(s, s->flbase + 4 * (s->frnum & 0x3ff), &link)) {
        goto schedule_error;
    }
    while (!(link & UHCI_LINK_TERM) && budget) {
        uint32_t addr = link & ~0xfu;

        budget--;
        if (link & UHCI_LINK_QH) {
            uint32_t head, elem;
            unsigned i;

            /* A queue head seen before with nothing done since: loop. */
            for (i = 0; i < nseen; i++) {
                if (qh_seen[i] == addr) {
                    break;
                }
            }
            if (i < nseen && progress_at_seen[i] == progress) {
                break;
            }
            if (i == nseen && nseen < UHCI_QH_SEEN) {
                qh_seen[nseen] = addr;
                progress_at_seen[nseen++] = progress;
            } else if (i < nseen) {
                progress_at_seen[i] = progress;
            }
            if (!uhci_read32(s, addr, &head) ||
                !uhci_read32(s, addr + 4, &elem)) {
                goto schedule_error;
            }
            /* The queue's TDs, depth first, until one is not done. */
            while (!(elem & UHCI_LINK_TERM) && budget) {
                uint32_t next;
                TDResult r;

                budget--;
                if (elem & UHCI_LINK_QH) {
                    /* Nested queue heads: not followed (Linux uses none). */
                    break;
                }
                r = uhci_run_td(s, elem & ~0xfu, &next, &ioc);
                if (r == TD_BAD) {
                    goto schedule_error;
                }
                if (r != TD_DONE) {
                    break;
                }
                progress++;
                elem = next;
                if (!uhci_write32(s, addr + 4, elem)) {
                    goto schedule_error;
                }
            }
            link = head;
        } else {
            uint32_t next;
            TDResult r = uhci_run_td(s, addr, &next, &ioc);

            if (r == TD_BAD) {
                goto schedule_error;
            }
            if (r == TD_DONE) {
                progress++;
            }
            link = next;
        }
    }
    if (ioc) {
        s->sts |= UHCI_STS_USBINT;
    }
    return;

schedule_error:
    qemu_log_guest_error("piix3-usb-uhci: frame %u: schedule pointer "
                         "outside guest RAM; controller halted\n",
                         s->frnum);
    s->sts |= UHCI_STS_HCPE | UHCI_STS_HCH;
    s->cmd &= ~UHCI_CMD_RS;
}

static void uhci_frame_timer(void *opaque)
{
    UHCIState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned n = 0;

    while (s->next_frame_ns <= now && n < UHCI_MAX_CATCHUP &&
           (s->cmd & UHCI_CMD_RS)) {
        uhci_process_frame(s);
        s->frnum = (s->frnum + 1) & 0x7ff;
        s->next_frame_ns += UHCI_FRAME_NS;
        n++;
    }
    if (s->next_frame_ns <= now) {
        /* Far behind (a stopped VM): frames lost, as on real hardware. */
        s->next_frame_ns = now + UHCI_FRAME_NS;
    }
    uhci_update_irq(s);
    if (s->cmd & UHCI_CMD_RS) {
        timer_mod_ns(s->frame_timer, s->next_frame_ns);
    }
}

/* ---- registers --------------------------------------------------------- */

static void uhci_port_attach(USBBus *bus, unsigned port)
{
    UHCIState *s = bus->opaque;

    s->portsc[port] |= UHCI_PORT_CCS | UHCI_PORT_CSC;
    /* A globally suspended controller wakes with resume detect. */
    if ((s->cmd & UHCI_CMD_EGSM) && !(s->cmd & UHCI_CMD_RS)) {
        s->sts |= UHCI_STS_RD;
    }
    uhci_update_irq(s);
}

static void uhci_port_detach(USBBus *bus, unsigned port)
{
    UHCIState *s = bus->opaque;

    s->portsc[port] &= ~(UHCI_PORT_CCS | UHCI_PORT_PE);
    s->portsc[port] |= UHCI_PORT_CSC | UHCI_PORT_PEC;
    if ((s->cmd & UHCI_CMD_EGSM) && !(s->cmd & UHCI_CMD_RS)) {
        s->sts |= UHCI_STS_RD;
    }
    uhci_update_irq(s);
}

static const USBPortOps uhci_port_ops = {
    .attach = uhci_port_attach,
    .detach = uhci_port_detach,
};

static void uhci_reset_regs(UHCIState *s)
{
    s->cmd = 0;
    s->sts = UHCI_STS_HCH;
    s->intr = 0;
    s->frnum = 0;
    s->flbase = 0;
    s->sofmod = 64;
    timer_del(s->frame_timer);
    for (unsigned i = 0; i < UHCI_PORTS; i++) {
        USBDevice *dev = s->bus->port_dev[i];

        s->portsc[i] = dev ? UHCI_PORT_CCS | UHCI_PORT_CSC : 0;
        if (dev) {
            usb_device_reset(dev);
        }
    }
    uhci_update_irq(s);
}

static void uhci_write_cmd(UHCIState *s, uint16_t val)
{
    uint16_t old = s->cmd;

    if (val & UHCI_CMD_HCRESET) {
        uhci_reset_regs(s);
        return;
    }
    if (val & UHCI_CMD_GRESET) {
        /* Global reset: bus reset of every device, registers kept. */
        for (unsigned i = 0; i < UHCI_PORTS; i++) {
            if (s->bus->port_dev[i]) {
                usb_device_reset(s->bus->port_dev[i]);
            }
        }
    }
    s->cmd = val & (UHCI_CMD_RS | UHCI_CMD_GRESET | UHCI_CMD_EGSM |
                    UHCI_CMD_FGR | UHCI_CMD_SWDBG | UHCI_CMD_CF |
                    UHCI_CMD_MAXP);
    if ((val & UHCI_CMD_RS) && !(old & UHCI_CMD_RS)) {
        s->sts &= ~UHCI_STS_HCH;
        s->next_frame_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                           UHCI_FRAME_NS;
        timer_mod_ns(s->frame_timer, s->next_frame_ns);
    } else if (!(val & UHCI_CMD_RS) && (old & UHCI_CMD_RS)) {
        s->sts |= UHCI_STS_HCH;
        timer_del(s->frame_timer);
    }
    trace_uhci_cmd(old, s->cmd);
}

static void uhci_write_portsc(UHCIState *s, unsigned port, uint16_t val)
{
    USBDevice *dev = s->bus->port_dev[port];
    uint16_t ps = s->portsc[port];

    /* Write-1-to-clear change bits. */
    ps &= ~(val & (UHCI_PORT_CSC | UHCI_PORT_PEC));
    if ((val & UHCI_PORT_PR) && !(ps & UHCI_PORT_PR)) {
        /* Port reset: the device sees a bus reset; the port is disabled. */
        if (dev) {
            usb_device_reset(dev);
        }
        ps &= ~UHCI_PORT_PE;
    }
    ps = (ps & ~(UHCI_PORT_PE | UHCI_PORT_PR | UHCI_PORT_RD |
                 UHCI_PORT_SUSP)) |
         (val & (UHCI_PORT_PR | UHCI_PORT_RD | UHCI_PORT_SUSP));
    /* Only a connected port can be enabled. */
    if ((val & UHCI_PORT_PE) && (ps & UHCI_PORT_CCS)) {
        ps |= UHCI_PORT_PE;
    }
    s->portsc[port] = ps;
    trace_uhci_portsc(port + 1, val, ps);
}

static uint64_t uhci_io_read(void *opaque, hwaddr addr, unsigned size)
{
    UHCIState *s = opaque;
    uint64_t v;

    switch (addr) {
    case UHCI_USBCMD:
        v = s->cmd;
        break;
    case UHCI_USBSTS:
        v = s->sts;
        break;
    case UHCI_USBINTR:
        v = s->intr;
        break;
    case UHCI_FRNUM:
        v = s->frnum;
        break;
    case UHCI_FLBASEADD:
        v = s->flbase;
        break;
    case UHCI_FLBASEADD + 2:
        v = s->flbase >> 16;
        break;
    case UHCI_SOFMOD:
        v = s->sofmod;
        break;
    case UHCI_PORTSC1:
    case UHCI_PORTSC2:
        /* Bit 7 always reads 1: that is how drivers count ports. */
        v = s->portsc[(addr - UHCI_PORTSC1) / 2] | UHCI_PORT_ALWAYS1;
        if (s->bus->port_dev[(addr - UHCI_PORTSC1) / 2]) {
            /* Idle full-speed line: D+ high (J state). */
            v |= UHCI_PORT_LS_DPLUS;
        }
        break;
    default:
        v = 0;
        break;
    }
    if (size == 4 && addr == UHCI_USBCMD) {
        v |= (uint64_t)s->sts << 16;
    } else if (size == 4 && addr == UHCI_USBINTR) {
        v |= (uint64_t)s->frnum << 16;
    } else if (size == 4 && addr == UHCI_PORTSC1) {
        v |= (uint64_t)(s->portsc[1] | UHCI_PORT_ALWAYS1 |
                        (s->bus->port_dev[1] ? UHCI_PORT_LS_DPLUS : 0))
             << 16;
    }
    return v;
}

static void uhci_io_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    UHCIState *s = opaque;

    if (size == 4 && addr != UHCI_FLBASEADD) {
        /* A 32-bit write covers two 16-bit registers. */
        uhci_io_write(opaque, addr, val & 0xffff, 2);
        uhci_io_write(opaque, addr + 2, val >> 16, 2);
        return;
    }
    switch (addr) {
    case UHCI_USBCMD:
        uhci_write_cmd(s, val);
        break;
    case UHCI_USBSTS:
        s->sts &= ~(val & (UHCI_STS_USBINT | UHCI_STS_ERROR | UHCI_STS_RD |
                           UHCI_STS_HSE | UHCI_STS_HCPE));
        break;
    case UHCI_USBINTR:
        s->intr = val & 0xf;
        break;
    case UHCI_FRNUM:
        /* Writable only while halted. */
        if (s->sts & UHCI_STS_HCH) {
            s->frnum = val & 0x7ff;
        }
        break;
    case UHCI_FLBASEADD:
        if (size == 4) {
            s->flbase = val & ~0xfffu;
        } else {
            s->flbase = (s->flbase & 0xffff0000u) | (val & 0xf000);
        }
        break;
    case UHCI_FLBASEADD + 2:
        s->flbase = (s->flbase & 0xffff) | ((uint32_t)val << 16);
        break;
    case UHCI_SOFMOD:
        s->sofmod = val & 0x7f;
        break;
    case UHCI_PORTSC1:
    case UHCI_PORTSC2:
        uhci_write_portsc(s, (addr - UHCI_PORTSC1) / 2, val);
        break;
    default:
        qemu_log_guest_error("piix3-usb-uhci: write to 0x%x ignored\n",
                             (unsigned)addr);
        break;
    }
    uhci_update_irq(s);
}

static const MemoryRegionOps uhci_io_ops = {
    .read = uhci_io_read,
    .write = uhci_io_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

/* ---- PCI --------------------------------------------------------------- */

static bool uhci_realize(PCIDevice *dev, Error **errp)
{
    UHCIState *s = UHCI(dev);

    dev->config[PCI_CLASS_PROG] = 0x00;
    /* Serial bus release number: USB 1.0. */
    dev->config[UHCI_PCI_SBRN] = 0x10;
    /* Legacy support: PIRQD routed, no SMI (the value firmware leaves). */
    pci_set_word(dev->config + UHCI_PCI_LEGSUP, 0x2000);
    pci_set_word(dev->wmask + UHCI_PCI_LEGSUP, 0xffff);
    dev->config[PCI_INTERRUPT_PIN] = 4;     /* INTD, as the PIIX3's */
    memory_region_init_io(&s->io, OBJECT(s), &uhci_io_ops, s, "uhci", 0x20);
    pci_register_bar(dev, 4, PCI_BASE_ADDRESS_SPACE_IO, &s->io);
    s->bus = usb_bus_new(DEVICE(s), UHCI_PORTS, &uhci_port_ops, s);
    s->frame_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, uhci_frame_timer, s);
    uhci_reset_regs(s);
    return true;
}

static void uhci_exit(PCIDevice *dev)
{
    UHCIState *s = UHCI(dev);

    timer_free(s->frame_timer);
    s->frame_timer = NULL;
}

static void uhci_pci_reset(PCIDevice *dev)
{
    uhci_reset_regs(UHCI(dev));
}

static void uhci_finalize(Object *obj)
{
    UHCIState *s = UHCI(obj);

    if (!PCI_DEVICE(s)->bus && memory_region_size(&s->io)) {
        memory_region_finalize(&s->io);
    }
}

/* ---- migration --------------------------------------------------------- */

/*
 * The frame list, queue heads and TDs are in guest RAM; the controller
 * has its registers and when its next frame is due (virtual clock,
 * restored first), where a running schedule's timer is armed again.
 */
static bool uhci_post_load(void *opaque, int version_id, Error **errp)
{
    UHCIState *s = opaque;

    s->frnum &= 0x7ff;
    if (s->cmd & UHCI_CMD_RS) {
        timer_mod_ns(s->frame_timer, s->next_frame_ns);
    } else {
        timer_del(s->frame_timer);
    }
    return true;
}

static const VMStateDescription vmstate_uhci = {
    .name = "piix3-usb-uhci",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = uhci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(parent_obj, UHCIState, vmstate_pci_device, PCIDevice),
        VMSTATE_UINT16(cmd, UHCIState),
        VMSTATE_UINT16(sts, UHCIState),
        VMSTATE_UINT16(intr, UHCIState),
        VMSTATE_UINT16(frnum, UHCIState),
        VMSTATE_UINT32(flbase, UHCIState),
        VMSTATE_UINT8(sofmod, UHCIState),
        VMSTATE_UINT16_ARRAY(portsc, UHCIState),
        VMSTATE_BOOL(irq_level, UHCIState),
        VMSTATE_INT64(next_frame_ns, UHCIState),
        VMSTATE_UINT64(frames, UHCIState),
        VMSTATE_UINT64(tds, UHCIState),
        VMSTATE_END_OF_LIST()
    },
};

static void uhci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    dc->desc = "PIIX3 USB UHCI host controller";
    dc->user_creatable = true;
    dc->hotpluggable = false;
    dc->vmsd = &vmstate_uhci;
    pc->realize = uhci_realize;
    pc->exit = uhci_exit;
    pc->reset = uhci_pci_reset;
    pc->vendor_id = 0x8086;
    pc->device_id = 0x7020;
    pc->revision = 0x01;
    pc->class_id = 0x0c03;
    pc->subsystem_vendor_id = 0x1af4;
    pc->subsystem_id = 0x1100;
}

static const TypeInfo uhci_types[] = {
    {
        .name = TYPE_PIIX3_USB_UHCI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(UHCIState),
        .instance_finalize = uhci_finalize,
        .class_init = uhci_class_init,
    },
};

DEFINE_TYPES(uhci_types)
