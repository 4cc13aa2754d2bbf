/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * piix3-usb-uhci with usb-tablet and usb-kbd, driven by a UHCI driver
 * written here from the UHCI Design Guide 1.1 and USB 2.0 chapter 9: the
 * PCI identity at 00:01.2 (behind the PIIX3 function 0), port status and
 * reset, enumeration by control transfers (GET_DESCRIPTOR, SET_ADDRESS,
 * SET_CONFIGURATION, the HID report descriptor), interrupt IN reports
 * after QMP input-send-event (NAK while there is none), and schedules a
 * guest got wrong: looping queue heads and TDs, a frame list outside RAM.
 * The frame timer runs on the virtual clock, which the test steps.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "hw/usb/uhci-regs.h"

#define UHCI_DEVFN QPCI_DEVFN(1, 2)
#define FRAMELIST 0x100000ull
#define QH 0x101000ull
#define TDS 0x102000ull
#define DATA 0x103000ull
#define MS 1000000ll
#define USB_TOKEN_SETUP_PID 0x2d
#define USB_TOKEN_IN_PID 0x69
#define USB_TOKEN_OUT_PID 0xe1
#define qmp_ok(qts, ...) \
    json_node_unref(qtest_qmp_assert_success(qts, __VA_ARGS__))

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar bar;
} Ctx;

static void ctx_start(Ctx *c, const char *extra)
{
    c->qts = qtest_initf("-M pc -m 64M "
                         "-device piix3-usb-uhci,id=usb,bus=pci.0,"
                         "addr=0x1.0x2 "
                         "-device usb-tablet,id=input0,bus=usb.0,port=1 %s",
                         extra ? extra : "");
    c->bus = qpci_new_pc(c->qts);
    c->dev = qpci_device_find(c->bus, UHCI_DEVFN);
    g_assert_nonnull(c->dev);
    qpci_device_enable(c->dev);
    c->bar = qpci_bar(c->dev, 4);
}

static void ctx_stop(Ctx *c)
{
    qpci_device_free(c->dev);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
}

static uint16_t rd(Ctx *c, unsigned reg)
{
    return qpci_io_readw(c->dev, c->bar, reg);
}

static void wr(Ctx *c, unsigned reg, uint16_t v)
{
    qpci_io_writew(c->dev, c->bar, reg, v);
}

/* Every frame points at one queue head; the controller runs. */
static void start_schedule(Ctx *c)
{
    wr(c, UHCI_USBCMD, UHCI_CMD_HCRESET);
    for (int i = 0; i < 1024; i++) {
        qtest_writel(c->qts, FRAMELIST + 4 * i, QH | UHCI_LINK_QH);
    }
    qtest_writel(c->qts, QH, UHCI_LINK_TERM);
    qtest_writel(c->qts, QH + 4, UHCI_LINK_TERM);
    qpci_io_writel(c->dev, c->bar, UHCI_FLBASEADD, FRAMELIST);
    wr(c, UHCI_USBINTR, 0xf);
    wr(c, UHCI_USBCMD, UHCI_CMD_RS | UHCI_CMD_CF | UHCI_CMD_MAXP);
    g_assert_cmphex(rd(c, UHCI_USBSTS) & UHCI_STS_HCH, ==, 0);
}

static void port_reset_enable(Ctx *c, unsigned port)
{
    unsigned reg = UHCI_PORTSC1 + 2 * port;

    wr(c, reg, UHCI_PORT_PR);
    wr(c, reg, 0);
    wr(c, reg, UHCI_PORT_PE | UHCI_PORT_CSC | UHCI_PORT_PEC);
    g_assert_cmphex(rd(c, reg) & (UHCI_PORT_PE | UHCI_PORT_CCS), ==,
                    UHCI_PORT_PE | UHCI_PORT_CCS);
}

/* Writes a TD; returns its address. */
static uint64_t put_td(Ctx *c, unsigned i, uint32_t link, unsigned pid,
                       unsigned addr, unsigned ep, bool toggle, unsigned len,
                       uint64_t buf)
{
    uint64_t td = TDS + 32 * i;
    uint32_t maxlen = (len - 1) & 0x7ff;

    qtest_writel(c->qts, td, link);
    qtest_writel(c->qts, td + 4, UHCI_TD_ACTIVE | UHCI_TD_CERR_MASK);
    qtest_writel(c->qts, td + 8, pid | (addr << 8) | (ep << 15) |
                 ((uint32_t)toggle << 19) | (maxlen << 21));
    qtest_writel(c->qts, td + 12, buf);
    return td;
}

static uint32_t td_ctrl(Ctx *c, uint64_t td)
{
    return qtest_readl(c->qts, td + 4);
}

/* Runs frames until the queue is empty (or gives up). */
static void run_frames(Ctx *c, int max)
{
    for (int i = 0; i < max; i++) {
        qtest_clock_step(c->qts, MS);
        if (qtest_readl(c->qts, QH + 4) & UHCI_LINK_TERM) {
            return;
        }
    }
}

/*
 * A control transfer: SETUP, IN or OUT data of len bytes (0: none),
 * status.  Returns the bytes the data stage moved, -1 on a stall.
 */
static int control(Ctx *c, unsigned addr, const uint8_t setup[8],
                   unsigned len, uint8_t *data)
{
    bool in = setup[0] & 0x80;
    uint64_t td0, tdd = 0, tds;
    uint32_t ctrl;

    qtest_memwrite(c->qts, DATA, setup, 8);
    if (!in && len) {
        qtest_memwrite(c->qts, DATA + 64, data, len);
    }
    td0 = TDS;
    tds = TDS + 64;
    put_td(c, 0, len ? (TDS + 32) | UHCI_LINK_DEPTH : tds | UHCI_LINK_DEPTH,
           USB_TOKEN_SETUP_PID, addr, 0, false, 8, DATA);
    if (len) {
        tdd = put_td(c, 1, tds | UHCI_LINK_DEPTH,
                     in ? USB_TOKEN_IN_PID : USB_TOKEN_OUT_PID, addr, 0, true,
                     len, DATA + 64);
    }
    /* Status: the other direction, zero length. */
    put_td(c, 2, UHCI_LINK_TERM, in ? USB_TOKEN_OUT_PID : USB_TOKEN_IN_PID,
           addr, 0, true, 0, 0);
    qtest_writel(c->qts, QH + 4, td0);
    run_frames(c, 20);
    if (td_ctrl(c, td0) & UHCI_TD_ACTIVE) {
        return -2;
    }
    ctrl = tdd ? td_ctrl(c, tdd) : td_ctrl(c, tds);
    if ((td_ctrl(c, td0) & UHCI_TD_STALLED) || (ctrl & UHCI_TD_STALLED) ||
        (td_ctrl(c, tds) & UHCI_TD_STALLED)) {
        /* The queue stopped at the failing TD: take it off. */
        qtest_writel(c->qts, QH + 4, UHCI_LINK_TERM);
        return -1;
    }
    if (!tdd) {
        return 0;
    }
    if (in) {
        unsigned n = ((ctrl & UHCI_TD_ACTLEN_MASK) + 1) & 0x7ff;

        qtest_memread(c->qts, DATA + 64, data, n);
        return n;
    }
    return len;
}

static void enumerate(Ctx *c, unsigned addr)
{
    static const uint8_t get_dev[8] = { 0x80, 6, 0, 1, 0, 0, 18, 0 };
    uint8_t set_addr[8] = { 0x00, 5, addr, 0, 0, 0, 0, 0 };
    static const uint8_t set_cfg[8] = { 0x00, 9, 1, 0, 0, 0, 0, 0 };
    uint8_t d[64];

    g_assert_cmpint(control(c, 0, get_dev, 18, d), ==, 18);
    g_assert_cmphex(d[0], ==, 18);
    g_assert_cmphex(d[1], ==, 1);
    g_assert_cmphex(d[8] | (d[9] << 8), ==, 0x0627);
    g_assert_cmpint(control(c, 0, set_addr, 0, NULL), ==, 0);
    /* Address 0 no longer answers. */
    g_assert_cmpint(control(c, 0, get_dev, 18, d), ==, -1);
    g_assert_cmpint(control(c, addr, get_dev, 18, d), ==, 18);
    g_assert_cmpint(control(c, addr, set_cfg, 0, NULL), ==, 0);
}

static void test_pci_identity(void)
{
    Ctx c = { 0 };
    QPCIDevice *f0;

    ctx_start(&c, NULL);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x8086);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_DEVICE_ID), ==, 0x7020);
    g_assert_cmphex(qpci_config_readl(c.dev, PCI_CLASS_REVISION) >> 8, ==,
                    0x0c0300);
    g_assert_cmpuint(qpci_config_readb(c.dev, PCI_INTERRUPT_PIN), ==, 4);
    g_assert_cmpuint(qpci_config_readb(c.dev, UHCI_PCI_SBRN), ==, 0x10);
    /* Function 0 of the slot: the PIIX3, multifunction. */
    f0 = qpci_device_find(c.bus, QPCI_DEVFN(1, 0));
    g_assert_nonnull(f0);
    g_assert_cmphex(qpci_config_readw(f0, PCI_DEVICE_ID), ==, 0x7000);
    g_assert_cmphex(qpci_config_readb(f0, PCI_HEADER_TYPE) & 0x80, ==, 0x80);
    qpci_device_free(f0);
    ctx_stop(&c);
}

static void test_ports(void)
{
    Ctx c = { 0 };

    ctx_start(&c, NULL);
    wr(&c, UHCI_USBCMD, UHCI_CMD_HCRESET);
    g_assert_cmphex(rd(&c, UHCI_USBSTS) & UHCI_STS_HCH, ==, UHCI_STS_HCH);
    /* Port 1 has the tablet (connect change pending), port 2 nothing. */
    g_assert_cmphex(rd(&c, UHCI_PORTSC1) & (UHCI_PORT_CCS | UHCI_PORT_CSC |
                                            UHCI_PORT_ALWAYS1), ==,
                    UHCI_PORT_CCS | UHCI_PORT_CSC | UHCI_PORT_ALWAYS1);
    g_assert_cmphex(rd(&c, UHCI_PORTSC2) & (UHCI_PORT_CCS | UHCI_PORT_ALWAYS1),
                    ==, UHCI_PORT_ALWAYS1);
    /* Bit 7 is how a driver counts ports: there is no third one. */
    g_assert_cmphex(rd(&c, 0x14) & UHCI_PORT_ALWAYS1, ==, 0);
    /* Change bits clear on write 1; an empty port cannot be enabled. */
    wr(&c, UHCI_PORTSC1, UHCI_PORT_CSC);
    g_assert_cmphex(rd(&c, UHCI_PORTSC1) & UHCI_PORT_CSC, ==, 0);
    wr(&c, UHCI_PORTSC2, UHCI_PORT_PE);
    g_assert_cmphex(rd(&c, UHCI_PORTSC2) & UHCI_PORT_PE, ==, 0);
    port_reset_enable(&c, 0);
    /* Hot-plug into port 2: connect and its change bit. */
    qtest_qmp_device_add(c.qts, "usb-kbd", "kbd0", "{'bus': 'usb.0'}");
    g_assert_cmphex(rd(&c, UHCI_PORTSC2) & (UHCI_PORT_CCS | UHCI_PORT_CSC),
                    ==, UHCI_PORT_CCS | UHCI_PORT_CSC);
    qtest_qmp_device_del(c.qts, "kbd0");
    g_assert_cmphex(rd(&c, UHCI_PORTSC2) & UHCI_PORT_CCS, ==, 0);
    ctx_stop(&c);
}

static void test_enumerate_and_report(void)
{
    Ctx c = { 0 };
    static const uint8_t get_cfg[8] = { 0x80, 6, 0, 2, 0, 0, 34, 0 };
    static const uint8_t get_rep[8] = { 0x81, 6, 0, 0x22, 0, 0, 100, 0 };
    static const uint8_t set_idle[8] = { 0x21, 0x0a, 0, 0, 0, 0, 0, 0 };
    static const uint8_t bad_req[8] = { 0x80, 6, 0, 0x77, 0, 0, 8, 0 };
    uint8_t d[128];
    uint64_t td;
    int n;
    uint16_t frnum;

    ctx_start(&c, NULL);
    start_schedule(&c);
    port_reset_enable(&c, 0);
    frnum = rd(&c, UHCI_FRNUM);
    enumerate(&c, 5);
    /* Frames went by on the virtual clock. */
    g_assert_cmpuint(rd(&c, UHCI_FRNUM), !=, frnum);
    g_assert_cmpint(control(&c, 5, get_cfg, 34, d), ==, 34);
    /* Interface: HID, no boot subclass (a tablet); endpoint 0x81 int. */
    g_assert_cmphex(d[9 + 5], ==, 3);
    g_assert_cmphex(d[18 + 9 + 2], ==, 0x81);
    g_assert_cmphex(d[18 + 9 + 3], ==, 3);
    n = control(&c, 5, get_rep, 100, d);
    g_assert_cmpint(n, >, 40);
    /* Usage Page (Generic Desktop), Usage (Mouse). */
    g_assert_cmphex(d[0], ==, 0x05);
    g_assert_cmphex(d[1], ==, 0x01);
    g_assert_cmpint(control(&c, 5, set_idle, 0, NULL), ==, 0);
    /* An unknown descriptor type stalls; the pipe works afterwards. */
    g_assert_cmpint(control(&c, 5, bad_req, 8, d), ==, -1);
    g_assert_cmpint(control(&c, 5, get_cfg, 9, d), ==, 9);

    /* Interrupt IN: NAK (still active) while there is no input. */
    td = put_td(&c, 4, UHCI_LINK_TERM, USB_TOKEN_IN_PID, 5, 1, false, 8,
                DATA + 256);
    qtest_writel(c.qts, td + 4, UHCI_TD_ACTIVE | UHCI_TD_IOC |
                 UHCI_TD_CERR_MASK);
    wr(&c, UHCI_USBSTS, 0xff);
    qtest_writel(c.qts, QH + 4, td);
    qtest_clock_step(c.qts, 5 * MS);
    g_assert_cmphex(td_ctrl(&c, td) & (UHCI_TD_ACTIVE | UHCI_TD_NAK), ==,
                    UHCI_TD_ACTIVE | UHCI_TD_NAK);
    qmp_ok(c.qts, "{'execute':'input-send-event',"
                             "'arguments':{'events':["
                             "{'type':'abs','data':{'axis':'x','value':4660}},"
                             "{'type':'abs','data':{'axis':'y','value':32767}},"
                             "{'type':'btn','data':{'down':true,"
                             "'button':'left'}}]}}");
    qtest_clock_step(c.qts, 2 * MS);
    g_assert_cmphex(td_ctrl(&c, td) & UHCI_TD_ACTIVE, ==, 0);
    g_assert_cmpuint(((td_ctrl(&c, td) & UHCI_TD_ACTLEN_MASK) + 1) & 0x7ff,
                     ==, 6);
    qtest_memread(c.qts, DATA + 256, d, 6);
    g_assert_cmphex(d[0], ==, 1);
    g_assert_cmphex(d[1] | (d[2] << 8), ==, 4660);
    g_assert_cmphex(d[3] | (d[4] << 8), ==, 32767);
    /* IOC: USBINT set, the line raised. */
    g_assert_cmphex(rd(&c, UHCI_USBSTS) & UHCI_STS_USBINT, ==,
                    UHCI_STS_USBINT);
    ctx_stop(&c);
}

/*
 * A running schedule migrates: the destination's controller runs on
 * (its frame timer re-armed), the tablet keeps its address and
 * configuration, and the interrupt TD the source left waiting (NAK)
 * completes there when input arrives.
 */
static void test_migrate(void)
{
    Ctx c = { 0 }, d;
    g_autofree char *dir = g_dir_make_tmp("uhci-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = NULL;
    uint8_t r[8];
    uint64_t td;

    ctx_start(&c, NULL);
    start_schedule(&c);
    port_reset_enable(&c, 0);
    enumerate(&c, 5);
    td = put_td(&c, 4, UHCI_LINK_TERM, USB_TOKEN_IN_PID, 5, 1, false, 8,
                DATA + 256);
    qtest_writel(c.qts, td + 4, UHCI_TD_ACTIVE | UHCI_TD_IOC |
                 UHCI_TD_CERR_MASK);
    qtest_writel(c.qts, QH + 4, td);
    qtest_clock_step(c.qts, 5 * MS);
    g_assert_cmphex(td_ctrl(&c, td) & (UHCI_TD_ACTIVE | UHCI_TD_NAK), ==,
                    UHCI_TD_ACTIVE | UHCI_TD_NAK);

    d.qts = qtest_initf("-M pc -m 64M "
                        "-device piix3-usb-uhci,id=usb,bus=pci.0,"
                        "addr=0x1.0x2 "
                        "-device usb-tablet,id=input0,bus=usb.0,port=1 "
                        "-incoming unix:%s", sock);
    uri = g_strdup_printf("unix:%s", sock);
    qtest_migrate_and_wait(c.qts, d.qts, uri);
    d.bus = qpci_new_pc(d.qts);
    d.dev = qpci_device_find(d.bus, UHCI_DEVFN);
    g_assert_nonnull(d.dev);
    d.bar = qpci_bar(d.dev, 4);
    g_assert_cmphex(rd(&d, UHCI_USBSTS) & UHCI_STS_HCH, ==, 0);
    g_assert_cmphex(rd(&d, UHCI_PORTSC1) & (UHCI_PORT_PE | UHCI_PORT_CCS),
                    ==, UHCI_PORT_PE | UHCI_PORT_CCS);

    qmp_ok(d.qts, "{'execute':'input-send-event','arguments':{'events':["
           "{'type':'abs','data':{'axis':'x','value':777}},"
           "{'type':'abs','data':{'axis':'y','value':888}}]}}");
    qtest_clock_step(d.qts, 3 * MS);
    g_assert_cmphex(td_ctrl(&d, td) & UHCI_TD_ACTIVE, ==, 0);
    qtest_memread(d.qts, DATA + 256, r, 6);
    g_assert_cmphex(r[1] | (r[2] << 8), ==, 777);
    g_assert_cmphex(r[3] | (r[4] << 8), ==, 888);
    g_assert_cmphex(rd(&d, UHCI_USBSTS) & UHCI_STS_USBINT, ==,
                    UHCI_STS_USBINT);

    ctx_stop(&d);
    ctx_stop(&c);
    unlink(sock);
    rmdir(dir);
}

/* Reports the usb-kbd (the second HID device) holds for the host. */
static int64_t kbd_queued(Ctx *c)
{
    JsonObject *r = qtest_qmp(c->qts, "{'execute':'x-query-usb'}");
    JsonArray *a = json_object_get_array_member(r, "return");
    int64_t n = json_object_get_int_member(json_array_get_object_element(a,
                                                                         1),
                                           "queued");

    json_object_unref(r);
    return n;
}

static void test_keyboard(void)
{
    Ctx c = { 0 };
    static const uint8_t set_leds[8] = { 0x21, 0x09, 0, 2, 0, 0, 1, 0 };
    uint8_t d[16], led = 0x02;
    uint64_t td;
    JsonObject *r;

    ctx_start(&c, "-device usb-kbd,id=kbd0,bus=usb.0,port=2");
    start_schedule(&c);
    port_reset_enable(&c, 1);
    enumerate(&c, 7);
    g_assert_cmpint(control(&c, 7, set_leds, 1, &led), ==, 1);
    r = qtest_qmp(c.qts, "{'execute':'x-query-usb'}");
    {
        JsonArray *a = json_object_get_array_member(r, "return");
        JsonObject *k = json_array_get_object_element(a, 1);

        g_assert_cmpstr(json_object_get_string_member(k, "id"), ==, "kbd0");
        g_assert_cmpint(json_object_get_int_member(k, "leds"), ==, 2);
        g_assert_cmpint(json_object_get_int_member(k, "addr"), ==, 7);
    }
    json_object_unref(r);
    qmp_ok(c.qts, "{'execute':'input-send-event',"
                             "'arguments':{'device':'kbd0','events':["
                             "{'type':'key','data':{'down':true,'key':"
                             "{'type':'qcode','data':'shift'}}},"
                             "{'type':'key','data':{'down':true,'key':"
                             "{'type':'qcode','data':'a'}}}]}}");
    td = put_td(&c, 4, UHCI_LINK_TERM, USB_TOKEN_IN_PID, 7, 1, false, 8,
                DATA + 256);
    qtest_writel(c.qts, QH + 4, td);
    qtest_clock_step(c.qts, 2 * MS);
    g_assert_cmphex(td_ctrl(&c, td) & UHCI_TD_ACTIVE, ==, 0);
    qtest_memread(c.qts, DATA + 256, d, 8);
    /* Boot report: left shift, key 'a' (usage 4). */
    g_assert_cmphex(d[0], ==, 0x02);
    g_assert_cmphex(d[2], ==, 0x04);
    /*
     * send-key reaches the usb-kbd too: a report per key pressed, then
     * one per key released after the hold time.
     */
    qmp_ok(c.qts, "{'execute':'send-key','arguments':{'keys':["
                  "{'type':'qcode','data':'ctrl'},"
                  "{'type':'qcode','data':'alt'},"
                  "{'type':'qcode','data':'delete'}]}}");
    g_assert_cmpint(kbd_queued(&c), ==, 3);
    for (unsigned i = 0; i < 3; i++) {
        td = put_td(&c, 5 + i, UHCI_LINK_TERM, USB_TOKEN_IN_PID, 7, 1,
                    !(i & 1), 8, DATA + 256);
        qtest_writel(c.qts, QH + 4, td);
        qtest_clock_step(c.qts, 2 * MS);
        g_assert_cmphex(td_ctrl(&c, td) & UHCI_TD_ACTIVE, ==, 0);
    }
    qtest_memread(c.qts, DATA + 256, d, 8);
    /* Shift (still down), ctrl and alt; keys 'a' and Delete (0x4c). */
    g_assert_cmphex(d[0], ==, 0x07);
    g_assert_cmphex(d[2], ==, 0x04);
    g_assert_cmphex(d[3], ==, 0x4c);
    g_assert_cmpint(kbd_queued(&c), ==, 0);
    qtest_clock_step(c.qts, 100 * MS);
    g_assert_cmpint(kbd_queued(&c), ==, 3);
    /* A bad event is a QMP error, not a crash. */
    r = qtest_qmp(c.qts, "{'execute':'input-send-event','arguments':"
                  "{'events':[{'type':'key','data':{'down':true,'key':"
                  "{'type':'qcode','data':'nosuchkey'}}}]}}");
    g_assert_nonnull(qtest_qmp_error_desc(r));
    json_object_unref(r);
    r = qtest_qmp(c.qts, "{'execute':'input-send-event','arguments':"
                  "{'events':[{'type':'warp'}]}}");
    g_assert_nonnull(qtest_qmp_error_desc(r));
    json_object_unref(r);
    ctx_stop(&c);
}

static void test_hostile_schedule(void)
{
    Ctx c = { 0 };
    uint64_t td;

    ctx_start(&c, NULL);
    start_schedule(&c);
    port_reset_enable(&c, 0);
    /* A queue head linked to itself, holding a TD linked to itself. */
    td = put_td(&c, 0, TDS | UHCI_LINK_DEPTH, USB_TOKEN_IN_PID, 0, 1, false,
                8, DATA);
    qtest_writel(c.qts, QH, QH | UHCI_LINK_QH);
    qtest_writel(c.qts, QH + 4, td);
    qtest_clock_step(c.qts, 20 * MS);
    /* A TD with a MaxLen far beyond a full-speed packet: babble. */
    td = put_td(&c, 1, UHCI_LINK_TERM, USB_TOKEN_IN_PID, 0, 0, false, 2000,
                DATA);
    qtest_writel(c.qts, QH, UHCI_LINK_TERM);
    qtest_writel(c.qts, QH + 4, td);
    qtest_clock_step(c.qts, 2 * MS);
    g_assert_cmphex(td_ctrl(&c, td) & (UHCI_TD_ACTIVE | UHCI_TD_BABBLE), ==,
                    UHCI_TD_BABBLE);
    /* Still running; the monitor answers. */
    qmp_ok(c.qts, "{'execute':'query-status'}");
    g_assert_cmphex(rd(&c, UHCI_USBSTS) & UHCI_STS_HCH, ==, 0);
    /* A frame list outside RAM: process error, the controller halts. */
    qpci_io_writel(c.dev, c.bar, UHCI_FLBASEADD, 0xfec00000u);
    qtest_clock_step(c.qts, 2 * MS);
    g_assert_cmphex(rd(&c, UHCI_USBSTS) & (UHCI_STS_HCPE | UHCI_STS_HCH), ==,
                    UHCI_STS_HCPE | UHCI_STS_HCH);
    qmp_ok(c.qts, "{'execute':'query-status'}");
    ctx_stop(&c);
}

static void test_usb_option(void)
{
    QTestState *qts = qtest_init("-M pc -usb -usbdevice tablet");
    JsonObject *r = qtest_qmp(qts, "{'execute':'x-query-usb'}");
    JsonArray *a = json_object_get_array_member(r, "return");

    g_assert_cmpuint(json_array_get_length(a), ==, 1);
    g_assert_cmpstr(json_object_get_string_member(
                        json_array_get_object_element(a, 0), "bus"), ==,
                    "usb-bus.0");
    json_object_unref(r);
    qtest_quit(qts);
    qtest_assert_start_fails("-accel qtest -M pc -usbdevice joystick",
                             "could not add USB device 'joystick'");
    qtest_assert_start_fails("-accel qtest -M pc -device usb-tablet",
                             "No 'usb-bus' bus found");
    qtest_assert_start_fails("-accel qtest -M pc -usb "
                             "-device usb-tablet,port=3",
                             "usb port 3 (bus usb-bus.0) not found");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/usb-uhci/pci-identity", test_pci_identity);
    g_test_add_func("/usb-uhci/ports", test_ports);
    g_test_add_func("/usb-uhci/tablet/enumerate-and-report",
                    test_enumerate_and_report);
    g_test_add_func("/usb-uhci/keyboard", test_keyboard);
    g_test_add_func("/usb-uhci/tablet/migrate", test_migrate);
    g_test_add_func("/usb-uhci/hostile/schedule", test_hostile_schedule);
    g_test_add_func("/usb-uhci/usb-option", test_usb_option);
    return g_test_run();
}
