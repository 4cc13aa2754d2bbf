/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qemu-xhci with usb-tablet, driven by an xHCI driver written here from
 * the xHCI 1.2 specification: capabilities and the Supported Protocol
 * capabilities, reset, the command ring (Enable Slot, Address Device,
 * Configure Endpoint, Evaluate Context, Stop Endpoint, Set TR Dequeue,
 * Reset Device, No-Op), the event ring with its cycle bit and ERDP/EHB,
 * port reset and Port Status Change events, a control transfer on EP0
 * (GET_DESCRIPTOR), an interrupt IN transfer completed by QMP
 * input-send-event, and rings and contexts a guest got wrong.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "hw/usb/xhci-regs.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define DCBAA 0x100000ull
#define CMD_RING 0x101000ull
#define ERST 0x102000ull
#define EV_RING 0x103000ull
#define INPUT 0x104000ull
#define OUTPUT 0x105000ull
#define EP0_RING 0x106000ull
#define EP1_RING 0x107000ull
#define DATA 0x108000ull
#define EV_TRBS 64
#define RING_TRBS 32
#define qmp_ok(qts, ...) \
    json_node_unref(qtest_qmp_assert_success(qts, __VA_ARGS__))

typedef struct Ring {
    uint64_t base;
    unsigned idx;
    bool cycle;
} Ring;

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
    Ring cmd, ep0, ep1;
    unsigned ev_idx;
    bool ev_cycle;
} Ctx;

typedef struct Event {
    uint64_t param;
    uint32_t status, control;
} Event;

static uint32_t rd(Ctx *c, unsigned off)
{
    return qpci_io_readl(c->dev, c->bar, off);
}

static void wr(Ctx *c, unsigned off, uint32_t v)
{
    qpci_io_writel(c->dev, c->bar, off, v);
}

static void wr64(Ctx *c, unsigned off, uint64_t v)
{
    wr(c, off, v);
    wr(c, off + 4, v >> 32);
}

static void ring_init(Ctx *c, Ring *r, uint64_t base)
{
    r->base = base;
    r->idx = 0;
    r->cycle = true;
    qtest_memset(c->qts, base, 0, 16 * RING_TRBS);
    /* The last TRB links back, toggling the cycle. */
    qtest_writeq(c->qts, base + 16 * (RING_TRBS - 1), base);
    qtest_writel(c->qts, base + 16 * (RING_TRBS - 1) + 8, 0);
    qtest_writel(c->qts, base + 16 * (RING_TRBS - 1) + 12,
                 (TRB_LINK << TRB_TYPE_SHIFT) | TRB_TC);
}

static uint64_t ring_put(Ctx *c, Ring *r, uint64_t param, uint32_t status,
                         uint32_t control)
{
    uint64_t a = r->base + 16 * r->idx;

    qtest_writeq(c->qts, a, param);
    qtest_writel(c->qts, a + 8, status);
    qtest_writel(c->qts, a + 12, (control & ~TRB_C) | (r->cycle ? TRB_C : 0));
    if (++r->idx == RING_TRBS - 1) {
        uint64_t l = r->base + 16 * r->idx;
        uint32_t lc = qtest_readl(c->qts, l + 12);

        qtest_writel(c->qts, l + 12, (lc & ~TRB_C) | (r->cycle ? TRB_C : 0));
        r->idx = 0;
        r->cycle = !r->cycle;
    }
    return a;
}

static void doorbell(Ctx *c, unsigned slot, unsigned target)
{
    wr(c, XHCI_DOORBELL_OFF + 4 * slot, target);
}

/* The next event, or false if none arrives in a few tries. */
static bool next_event(Ctx *c, Event *e)
{
    for (int i = 0; i < 200; i++) {
        uint64_t a = EV_RING + 16 * c->ev_idx;
        uint32_t ctrl = qtest_readl(c->qts, a + 12);

        if (!!(ctrl & TRB_C) == c->ev_cycle) {
            e->param = qtest_readq(c->qts, a);
            e->status = qtest_readl(c->qts, a + 8);
            e->control = ctrl;
            if (++c->ev_idx == EV_TRBS) {
                c->ev_idx = 0;
                c->ev_cycle = !c->ev_cycle;
            }
            /* Consumed: move ERDP, clear EHB. */
            wr64(c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERDP,
                 (EV_RING + 16 * c->ev_idx) | XHCI_ERDP_EHB);
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

static Event expect_event(Ctx *c, unsigned type)
{
    Event e;

    g_assert_true(next_event(c, &e));
    g_assert_cmpuint(TRB_TYPE(e.control), ==, type);
    return e;
}

static unsigned command(Ctx *c, uint64_t param, uint32_t control,
                        unsigned *slot)
{
    uint64_t a = ring_put(c, &c->cmd, param, 0, control);
    Event e;

    doorbell(c, 0, 0);
    e = expect_event(c, TRB_EV_CMD_COMPLETE);
    g_assert_cmphex(e.param, ==, a);
    if (slot) {
        *slot = e.control >> 24;
    }
    return e.status >> 24;
}

static void ctx_start(Ctx *c, const char *extra)
{
    c->qts = qtest_initf("-M pc -m 64M -device qemu-xhci,id=usb,addr=04.0%s "
                         "-device usb-tablet,id=input0,bus=usb.0,port=1",
                         extra ? extra : "");
    c->bus = qpci_new_pc(c->qts);
    c->dev = qpci_device_find(c->bus, DEVFN);
    g_assert_nonnull(c->dev);
    qpci_device_enable(c->dev);
    c->bar = qpci_bar(c->dev, 0);
}

static void ctx_stop(Ctx *c)
{
    qpci_device_free(c->dev);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
}

/* Reset and run, as a driver's init does. */
static void xhci_up(Ctx *c)
{
    wr(c, XHCI_OPER + XHCI_USBCMD, XHCI_CMD_HCRST);
    g_assert_cmphex(rd(c, XHCI_OPER + XHCI_USBSTS) & XHCI_STS_CNR, ==, 0);
    wr(c, XHCI_OPER + XHCI_CONFIG, 8);
    qtest_memset(c->qts, DCBAA, 0, 8 * 9);
    wr64(c, XHCI_OPER + XHCI_DCBAAP, DCBAA);
    ring_init(c, &c->cmd, CMD_RING);
    wr64(c, XHCI_OPER + XHCI_CRCR, CMD_RING | XHCI_CRCR_RCS);
    qtest_memset(c->qts, EV_RING, 0, 16 * EV_TRBS);
    qtest_writeq(c->qts, ERST, EV_RING);
    qtest_writel(c->qts, ERST + 8, EV_TRBS);
    qtest_writel(c->qts, ERST + 12, 0);
    c->ev_idx = 0;
    c->ev_cycle = true;
    wr(c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERSTSZ, 1);
    wr64(c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERDP, EV_RING);
    wr64(c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERSTBA, ERST);
    wr(c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_IMAN, XHCI_IMAN_IE);
    wr(c, XHCI_OPER + XHCI_USBCMD, XHCI_CMD_RS | XHCI_CMD_INTE);
    g_assert_cmphex(rd(c, XHCI_OPER + XHCI_USBSTS) & XHCI_STS_HCH, ==, 0);
}

static void port_reset(Ctx *c, unsigned port)
{
    unsigned off = XHCI_PORTS_OFF + 0x10 * (port - 1);
    Event e;

    /* The connection of the tablet comes first. */
    e = expect_event(c, TRB_EV_PORT_STATUS);
    g_assert_cmpuint(e.param >> 24, ==, port);
    wr(c, off, XHCI_PORT_PP | XHCI_PORT_CSC);
    wr(c, off, XHCI_PORT_PP | XHCI_PORT_PR);
    e = expect_event(c, TRB_EV_PORT_STATUS);
    g_assert_cmpuint(e.param >> 24, ==, port);
    g_assert_cmphex(rd(c, off) & (XHCI_PORT_PED | XHCI_PORT_PRC |
                                  XHCI_PORT_CCS), ==,
                    XHCI_PORT_PED | XHCI_PORT_PRC | XHCI_PORT_CCS);
    g_assert_cmpuint((rd(c, off) & XHCI_PORT_SPEED_MASK) >>
                     XHCI_PORT_SPEED_SHIFT, ==, XHCI_SPEED_FULL);
    wr(c, off, XHCI_PORT_PP | XHCI_PORT_PRC);
}

static void put_ctx(Ctx *c, uint64_t addr, const uint32_t ctx[8])
{
    for (int i = 0; i < 8; i++) {
        qtest_writel(c->qts, addr + 4 * i, ctx[i]);
    }
}

/* Enable Slot + Address Device for the device on port 1. */
static unsigned address_device(Ctx *c)
{
    unsigned slot;
    uint32_t icc[8] = { 0, 3 };
    uint32_t sctx[8] = { (1u << 27) | (XHCI_SPEED_FULL << 20), 1u << 16 };
    uint32_t ep0[8] = { 0, (3u << 1) | (EP_TYPE_CONTROL << 3) | (64u << 16),
                        (uint32_t)EP0_RING | 1, 0, 8 };

    g_assert_cmpuint(command(c, 0, TRB_CMD_ENABLE_SLOT << TRB_TYPE_SHIFT,
                             &slot), ==, CC_SUCCESS);
    g_assert_cmpuint(slot, ==, 1);
    qtest_memset(c->qts, OUTPUT, 0, 32 * 32);
    qtest_writeq(c->qts, DCBAA + 8 * slot, OUTPUT);
    qtest_memset(c->qts, INPUT, 0, 33 * 32);
    put_ctx(c, INPUT, icc);
    put_ctx(c, INPUT + 32, sctx);
    ring_init(c, &c->ep0, EP0_RING);
    put_ctx(c, INPUT + 64, ep0);
    g_assert_cmpuint(command(c, INPUT, (TRB_CMD_ADDRESS_DEVICE <<
                                        TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_SUCCESS);
    /* Output slot context: addressed, USB address = slot id. */
    g_assert_cmpuint(qtest_readl(c->qts, OUTPUT + 12) >> 27, ==,
                     SLOT_ADDRESSED);
    g_assert_cmpuint(qtest_readl(c->qts, OUTPUT + 12) & 0xff, ==, slot);
    g_assert_cmpuint(qtest_readl(c->qts, OUTPUT + 32) & 7, ==, EP_RUNNING);
    return slot;
}

/* A control IN transfer on EP0; returns the event's completion code. */
static unsigned control_in(Ctx *c, unsigned slot, const uint8_t setup[8],
                           unsigned len, uint32_t *residual)
{
    uint64_t sp;
    Event e;

    memcpy(&sp, setup, 8);
    ring_put(c, &c->ep0, GUINT64_FROM_LE(sp), 8,
             (TRB_SETUP << TRB_TYPE_SHIFT) | TRB_IDT | (3u << 16));
    ring_put(c, &c->ep0, DATA, len,
             (TRB_DATA << TRB_TYPE_SHIFT) | TRB_DIR_IN | TRB_ISP);
    ring_put(c, &c->ep0, 0, 0, (TRB_STATUS << TRB_TYPE_SHIFT) | TRB_IOC);
    doorbell(c, slot, 1);
    g_assert_true(next_event(c, &e));
    g_assert_cmpuint(TRB_TYPE(e.control), ==, TRB_EV_TRANSFER);
    g_assert_cmpuint(e.control >> 24, ==, slot);
    g_assert_cmpuint((e.control >> 16) & 0x1f, ==, 1);
    if ((e.status >> 24) == CC_SHORT_PACKET) {
        /* The short data stage first, then the status stage's IOC. */
        *residual = e.status & 0xffffff;
        g_assert_cmpuint(expect_event(c, TRB_EV_TRANSFER).status >> 24, ==,
                         CC_SUCCESS);
        return CC_SHORT_PACKET;
    }
    *residual = 0;
    return e.status >> 24;
}

/* SET_CONFIGURATION 1, then Configure Endpoint for the tablet's EP1 IN. */
static void configure_tablet(Ctx *c, unsigned slot)
{
    uint32_t icc[8] = { 0, 1 | (1u << 3) };
    uint32_t sctx[8] = { (3u << 27) | (XHCI_SPEED_FULL << 20), 1u << 16 };
    uint32_t ep1[8] = { 10u << 16, (3u << 1) | (EP_TYPE_INT_IN << 3) |
                                   (8u << 16),
                        (uint32_t)EP1_RING | 1, 0, 8 };
    static const uint8_t set_cfg[8] = { 0, 9, 1, 0, 0, 0, 0, 0 };
    uint64_t sp;

    memcpy(&sp, set_cfg, 8);
    ring_put(c, &c->ep0, GUINT64_FROM_LE(sp), 8,
             (TRB_SETUP << TRB_TYPE_SHIFT) | TRB_IDT);
    ring_put(c, &c->ep0, 0, 0, (TRB_STATUS << TRB_TYPE_SHIFT) |
             TRB_DIR_IN | TRB_IOC);
    doorbell(c, slot, 1);
    g_assert_cmpuint(expect_event(c, TRB_EV_TRANSFER).status >> 24, ==,
                     CC_SUCCESS);
    qtest_memset(c->qts, INPUT, 0, 33 * 32);
    put_ctx(c, INPUT, icc);
    put_ctx(c, INPUT + 32, sctx);
    ring_init(c, &c->ep1, EP1_RING);
    put_ctx(c, INPUT + 32 * 4, ep1);
    g_assert_cmpuint(command(c, INPUT, (TRB_CMD_CONFIGURE_EP <<
                                         TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_SUCCESS);
    g_assert_cmpuint(qtest_readl(c->qts, OUTPUT + 12) >> 27, ==,
                     SLOT_CONFIGURED);
    g_assert_cmpuint(qtest_readl(c->qts, OUTPUT + 32 * 3) & 7, ==, EP_RUNNING);
}

static void test_capabilities(void)
{
    Ctx c = { 0 };
    uint32_t hcs1, hcc1, x;

    ctx_start(&c, NULL);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x1b36);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_DEVICE_ID), ==, 0x000d);
    g_assert_cmphex(qpci_config_readl(c.dev, PCI_CLASS_REVISION) >> 8, ==,
                    0x0c0330);
    g_assert_cmpuint(qpci_find_capability(c.dev, PCI_CAP_ID_MSIX, 0), !=, 0);
    g_assert_cmphex(rd(&c, 0) & 0xff, ==, XHCI_CAPLENGTH);
    g_assert_cmphex(rd(&c, 0) >> 16, ==, 0x0100);
    hcs1 = rd(&c, XHCI_CAP_HCSPARAMS1);
    g_assert_cmpuint(hcs1 & 0xff, ==, 64);
    g_assert_cmpuint(hcs1 >> 24, ==, 8);
    hcc1 = rd(&c, XHCI_CAP_HCCPARAMS1);
    g_assert_cmpuint(hcc1 & 1, ==, 1);          /* 64-bit */
    g_assert_cmpuint(hcc1 & 4, ==, 0);          /* 32-byte contexts */
    /* Supported Protocol capabilities: USB 2.0 ports 1-4, 3.0 ports 5-8. */
    x = (hcc1 >> 16) * 4;
    g_assert_cmphex(rd(&c, x) & 0xff, ==, 2);
    g_assert_cmphex(rd(&c, x) >> 24, ==, 2);
    g_assert_cmphex(rd(&c, x + 4), ==, 0x20425355);
    g_assert_cmphex(rd(&c, x + 8) & 0xffff, ==, 0x0401);
    x += ((rd(&c, x) >> 8) & 0xff) * 4;
    g_assert_cmphex(rd(&c, x) >> 24, ==, 3);
    g_assert_cmphex(rd(&c, x + 8) & 0xffff, ==, 0x0405);
    g_assert_cmpuint(rd(&c, XHCI_CAP_DBOFF), ==, XHCI_DOORBELL_OFF);
    g_assert_cmpuint(rd(&c, XHCI_CAP_RTSOFF), ==, XHCI_RUNTIME_OFF);
    g_assert_cmpuint(rd(&c, XHCI_OPER + XHCI_PAGESIZE), ==, 1);
    /* The tablet on port 1, powered; an empty USB 3 port. */
    g_assert_cmphex(rd(&c, XHCI_PORTS_OFF) & (XHCI_PORT_CCS | XHCI_PORT_PP),
                    ==, XHCI_PORT_CCS | XHCI_PORT_PP);
    g_assert_cmphex(rd(&c, XHCI_PORTS_OFF + 0x40) & XHCI_PORT_CCS, ==, 0);
    ctx_stop(&c);
}

/*
 * p2=15,p3=15 (what libvirt writes for virt-install's controller): 30
 * root hub ports, USB 2.0 ports 1-15 and 3.0 ports 16-30.
 */
static void test_port_counts(void)
{
    Ctx c = { 0 };
    uint32_t x;

    ctx_start(&c, ",p2=15,p3=15");
    g_assert_cmpuint(rd(&c, XHCI_CAP_HCSPARAMS1) >> 24, ==, 30);
    x = (rd(&c, XHCI_CAP_HCCPARAMS1) >> 16) * 4;
    g_assert_cmphex(rd(&c, x + 8) & 0xffff, ==, 0x0f01);
    x += ((rd(&c, x) >> 8) & 0xff) * 4;
    g_assert_cmphex(rd(&c, x) >> 24, ==, 3);
    g_assert_cmphex(rd(&c, x + 8) & 0xffff, ==, 0x0f10);
    /* The last USB 3 port is powered and empty; past it, nothing. */
    g_assert_cmphex(rd(&c, XHCI_PORTS_OFF + 29 * 0x10) & XHCI_PORT_PP, ==,
                    XHCI_PORT_PP);
    g_assert_cmphex(rd(&c, XHCI_PORTS_OFF + 30 * 0x10), ==, 0);
    ctx_stop(&c);
}

static void test_enumerate_and_report(void)
{
    Ctx c = { 0 };
    static const uint8_t get_dev[8] = { 0x80, 6, 0, 1, 0, 0, 18, 0 };
    static const uint8_t get_cfg[8] = { 0x80, 6, 0, 2, 0, 0, 255, 0 };
    static const uint8_t bad[8] = { 0x80, 6, 0, 0x55, 0, 0, 8, 0 };
    uint8_t d[64];
    uint32_t res;
    unsigned slot, cc;
    Event e;

    ctx_start(&c, NULL);
    xhci_up(&c);
    port_reset(&c, 1);
    slot = address_device(&c);

    g_assert_cmpuint(control_in(&c, slot, get_dev, 18, &res), ==,
                     CC_SUCCESS);
    qtest_memread(c.qts, DATA, d, 18);
    g_assert_cmphex(d[0], ==, 18);
    g_assert_cmphex(d[8] | (d[9] << 8), ==, 0x0627);
    /* Asking for more than there is: a short packet, 255 - 34 left. */
    g_assert_cmpuint(control_in(&c, slot, get_cfg, 255, &res), ==,
                     CC_SHORT_PACKET);
    g_assert_cmpuint(res, ==, 255 - 34);
    /* A request the device refuses: stall, the endpoint halts. */
    g_assert_cmpuint(control_in(&c, slot, bad, 8, &res), ==, CC_STALL_ERROR);
    g_assert_cmpuint(qtest_readl(c.qts, OUTPUT + 32) & 7, ==, EP_HALTED);
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_RESET_EP << TRB_TYPE_SHIFT) |
                             (1u << 16) | (slot << 24), NULL), ==,
                     CC_SUCCESS);
    ring_init(&c, &c.ep0, EP0_RING);
    g_assert_cmpuint(command(&c, EP0_RING | 1,
                             (TRB_CMD_SET_TR_DEQUEUE << TRB_TYPE_SHIFT) |
                             (1u << 16) | (slot << 24), NULL), ==,
                     CC_SUCCESS);
    /* Restarted by the doorbell: the pipe works again. */
    qmp_ok(c.qts, "{'execute':'query-status'}");

    configure_tablet(&c, slot);

    /* Interrupt IN: nothing to report yet, no event. */
    ring_put(&c, &c.ep1, DATA + 512, 8, (TRB_NORMAL << TRB_TYPE_SHIFT) |
             TRB_ISP | TRB_IOC);
    doorbell(&c, slot, 3);
    g_assert_false(next_event(&c, &e));
    qmp_ok(c.qts, "{'execute':'input-send-event','arguments':{'events':["
           "{'type':'abs','data':{'axis':'x','value':1000}},"
           "{'type':'abs','data':{'axis':'y','value':2000}}]}}");
    e = expect_event(&c, TRB_EV_TRANSFER);
    /* A 6-byte report in an 8-byte buffer: short packet, 2 left. */
    g_assert_cmpuint(e.status >> 24, ==, CC_SHORT_PACKET);
    g_assert_cmpuint(e.status & 0xffffff, ==, 2);
    g_assert_cmpuint((e.control >> 16) & 0x1f, ==, 3);
    qtest_memread(c.qts, DATA + 512, d, 6);
    g_assert_cmpuint(d[1] | (d[2] << 8), ==, 1000);
    g_assert_cmpuint(d[3] | (d[4] << 8), ==, 2000);

    /* Stop Endpoint records where the ring stands. */
    cc = command(&c, 0, (TRB_CMD_STOP_EP << TRB_TYPE_SHIFT) | (3u << 16) |
                 (slot << 24), NULL);
    g_assert_cmpuint(cc, ==, CC_SUCCESS);
    g_assert_cmpuint(qtest_readl(c.qts, OUTPUT + 32 * 3) & 7, ==, EP_STOPPED);
    g_assert_cmphex(qtest_readl(c.qts, OUTPUT + 32 * 3 + 8) & ~0xfu, ==,
                    (uint32_t)EP1_RING + 16);
    /* Evaluate Context, Reset Device, Disable Slot, No-Op. */
    put_ctx(&c, INPUT, (uint32_t[8]){ 0, 2 });
    g_assert_cmpuint(command(&c, INPUT, (TRB_CMD_EVALUATE_CTX <<
                                         TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_SUCCESS);
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_RESET_DEVICE << TRB_TYPE_SHIFT) |
                             (slot << 24), NULL), ==, CC_SUCCESS);
    g_assert_cmpuint(qtest_readl(c.qts, OUTPUT + 12) >> 27, ==, SLOT_DEFAULT);
    g_assert_cmpuint(command(&c, 0, TRB_CMD_NOOP << TRB_TYPE_SHIFT, NULL), ==,
                     CC_SUCCESS);
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_DISABLE_SLOT << TRB_TYPE_SHIFT) |
                             (slot << 24), NULL), ==, CC_SUCCESS);
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_DISABLE_SLOT << TRB_TYPE_SHIFT) |
                             (slot << 24), NULL), ==, CC_SLOT_NOT_ENABLED);
    ctx_stop(&c);
}

/*
 * The tablet in use when the VM migrates: a report the tablet queued on
 * the source (no TD was waiting) is fetched on the destination, a TD
 * left waiting (NAK) there completes when input arrives, and the command
 * ring, the event ring and the endpoint ring go on where they stood.
 * Without the controller's state the destination starts halted and
 * reset; without the tablet's, the queued report is lost.
 */
static void test_migrate(void)
{
    Ctx c = { 0 }, d;
    g_autofree char *dir = g_dir_make_tmp("xhci-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = NULL;
    QTestState *dst;
    unsigned slot;
    uint8_t r[8];
    Event e;

    ctx_start(&c, NULL);
    xhci_up(&c);
    port_reset(&c, 1);
    slot = address_device(&c);
    configure_tablet(&c, slot);
    /* Queued in the tablet: no TD asks for it yet. */
    qmp_ok(c.qts, "{'execute':'input-send-event','arguments':{'events':["
           "{'type':'abs','data':{'axis':'x','value':1234}},"
           "{'type':'abs','data':{'axis':'y','value':4321}}]}}");
    g_assert_false(next_event(&c, &e));

    dst = qtest_initf("-M pc -m 64M -device qemu-xhci,id=usb,addr=04.0 "
                      "-device usb-tablet,id=input0,bus=usb.0,port=1 "
                      "-incoming unix:%s", sock);
    uri = g_strdup_printf("unix:%s", sock);
    qtest_migrate_and_wait(c.qts, dst, uri);

    /* The driver (this test) goes on against the destination. */
    d = c;
    d.qts = dst;
    d.bus = qpci_new_pc(dst);
    d.dev = qpci_device_find(d.bus, DEVFN);
    g_assert_nonnull(d.dev);
    d.bar = qpci_bar(d.dev, 0);
    g_assert_cmphex(rd(&d, XHCI_OPER + XHCI_USBSTS) & XHCI_STS_HCH, ==, 0);
    g_assert_cmpuint(qtest_readl(dst, OUTPUT + 12) >> 27, ==,
                     SLOT_CONFIGURED);

    ring_put(&d, &d.ep1, DATA + 512, 8, (TRB_NORMAL << TRB_TYPE_SHIFT) |
             TRB_ISP | TRB_IOC);
    doorbell(&d, slot, 3);
    e = expect_event(&d, TRB_EV_TRANSFER);
    g_assert_cmpuint(e.status >> 24, ==, CC_SHORT_PACKET);
    g_assert_cmpuint((e.control >> 16) & 0x1f, ==, 3);
    qtest_memread(dst, DATA + 512, r, 6);
    g_assert_cmpuint(r[1] | (r[2] << 8), ==, 1234);
    g_assert_cmpuint(r[3] | (r[4] << 8), ==, 4321);

    /* A TD that waits for input, then a command. */
    ring_put(&d, &d.ep1, DATA + 520, 8, (TRB_NORMAL << TRB_TYPE_SHIFT) |
             TRB_ISP | TRB_IOC);
    doorbell(&d, slot, 3);
    g_assert_false(next_event(&d, &e));
    qmp_ok(dst, "{'execute':'input-send-event','arguments':{'events':["
           "{'type':'btn','data':{'down':true,'button':'left'}}]}}");
    e = expect_event(&d, TRB_EV_TRANSFER);
    qtest_memread(dst, DATA + 520, r, 1);
    g_assert_cmpuint(r[0] & 1, ==, 1);
    g_assert_cmpuint(command(&d, 0, TRB_CMD_NOOP << TRB_TYPE_SHIFT, NULL), ==,
                     CC_SUCCESS);

    qpci_device_free(d.dev);
    qpci_free_pc(d.bus);
    qtest_quit(dst);
    ctx_stop(&c);
    unlink(sock);
    rmdir(dir);
}

static void test_interrupts_intx(void)
{
    Ctx c = { 0 };
    unsigned off = XHCI_RUNTIME_OFF + XHCI_INTR0;

    ctx_start(&c, ",msix=off");
    xhci_up(&c);
    /* The connect event set IP and EHB; EINT in USBSTS. */
    g_assert_cmphex(rd(&c, off + XHCI_IMAN) & XHCI_IMAN_IP, ==, XHCI_IMAN_IP);
    g_assert_cmphex(rd(&c, off + XHCI_ERDP) & XHCI_ERDP_EHB, ==,
                    XHCI_ERDP_EHB);
    g_assert_cmphex(rd(&c, XHCI_OPER + XHCI_USBSTS) & XHCI_STS_EINT, ==,
                    XHCI_STS_EINT);
    wr(&c, off + XHCI_IMAN, XHCI_IMAN_IE | XHCI_IMAN_IP);
    g_assert_cmphex(rd(&c, off + XHCI_IMAN) & XHCI_IMAN_IP, ==, 0);
    /* Consuming the event clears EHB. */
    expect_event(&c, TRB_EV_PORT_STATUS);
    g_assert_cmphex(rd(&c, off + XHCI_ERDP) & XHCI_ERDP_EHB, ==, 0);
    ctx_stop(&c);
}

static void test_hostile(void)
{
    Ctx c = { 0 };
    uint32_t icc[8] = { 0, 3 };
    unsigned slot;
    JsonObject *r;

    ctx_start(&c, NULL);
    xhci_up(&c);
    expect_event(&c, TRB_EV_PORT_STATUS);
    /* Commands for slots that do not exist. */
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_ADDRESS_DEVICE <<
                                     TRB_TYPE_SHIFT) | (200u << 24), NULL),
                     ==, CC_SLOT_NOT_ENABLED);
    g_assert_cmpuint(command(&c, 0, (TRB_CMD_STOP_EP << TRB_TYPE_SHIFT) |
                             (5u << 24), NULL), ==, CC_SLOT_NOT_ENABLED);
    /* An unknown command type. */
    g_assert_cmpuint(command(&c, 0, 45u << TRB_TYPE_SHIFT, NULL), ==,
                     CC_SLOT_NOT_ENABLED);
    g_assert_cmpuint(command(&c, 0, TRB_CMD_ENABLE_SLOT << TRB_TYPE_SHIFT,
                             &slot), ==, CC_SUCCESS);
    /* Address Device: input context outside RAM; no output context. */
    g_assert_cmpuint(command(&c, 0xfee00000ull, (TRB_CMD_ADDRESS_DEVICE <<
                                                 TRB_TYPE_SHIFT) |
                             (slot << 24), NULL), ==, CC_TRB_ERROR);
    put_ctx(&c, INPUT, icc);
    qtest_writeq(c.qts, DCBAA + 8 * slot, 0);
    g_assert_cmpuint(command(&c, INPUT, (TRB_CMD_ADDRESS_DEVICE <<
                                         TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_TRB_ERROR);
    /* A port number that is no root port (the slot context says 99). */
    qtest_writeq(c.qts, DCBAA + 8 * slot, OUTPUT);
    put_ctx(&c, INPUT + 32, (uint32_t[8]){ 1u << 27, 99u << 16 });
    g_assert_cmpuint(command(&c, INPUT, (TRB_CMD_ADDRESS_DEVICE <<
                                         TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_USB_TRANSACTION_ERROR);
    /* Configure Endpoint before Address Device: context state error. */
    g_assert_cmpuint(command(&c, INPUT, (TRB_CMD_CONFIGURE_EP <<
                                         TRB_TYPE_SHIFT) | (slot << 24),
                             NULL), ==, CC_CONTEXT_STATE_ERROR);
    /* Doorbells for nothing. */
    doorbell(&c, 63, 5);
    doorbell(&c, slot, 200);
    /* A command ring that is a link TRB pointing at itself. */
    {
        uint64_t a = CMD_RING + 16 * c.cmd.idx;

        qtest_writeq(c.qts, a, a);
        qtest_writel(c.qts, a + 8, 0);
        qtest_writel(c.qts, a + 12, (TRB_LINK << TRB_TYPE_SHIFT) |
                     (c.cmd.cycle ? TRB_C : 0));
        doorbell(&c, 0, 0);
    }
    r = qtest_qmp(c.qts, "{'execute':'x-query-xhci'}");
    g_assert_true(json_object_has_member(r, "return"));
    json_object_unref(r);
    /* An event ring segment table outside RAM: HCE, no crash. */
    wr(&c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERSTSZ, 1);
    wr64(&c, XHCI_RUNTIME_OFF + XHCI_INTR0 + XHCI_ERSTBA, 0xfee00000ull);
    g_assert_cmphex(rd(&c, XHCI_OPER + XHCI_USBSTS) & XHCI_STS_HCE, ==,
                    XHCI_STS_HCE);
    qmp_ok(c.qts, "{'execute':'query-status'}");
    ctx_stop(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/usb-xhci/capabilities", test_capabilities);
    g_test_add_func("/usb-xhci/port-counts", test_port_counts);
    g_test_add_func("/usb-xhci/tablet/enumerate-and-report",
                    test_enumerate_and_report);
    g_test_add_func("/usb-xhci/interrupter/intx", test_interrupts_intx);
    g_test_add_func("/usb-xhci/tablet/migrate", test_migrate);
    g_test_add_func("/usb-xhci/hostile", test_hostile);
    return g_test_run();
}
