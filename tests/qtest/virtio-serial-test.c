/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-serial-pci, virtserialport and virtconsole with a driver written
 * here from the virtio 1.2 specification (5.3): the multiport control
 * handshake (DEVICE_READY, PORT_ADD, PORT_READY, CONSOLE_PORT, PORT_NAME,
 * PORT_OPEN), bytes both ways between a port and its socket chardev,
 * VSERPORT_CHANGE and query-chardev's frontend-open as the guest opens
 * and closes the port, control messages the guest got wrong, and the
 * port-number rules of QEMU's command line.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_console.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define QSIZE 16
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))
#define AGENT "org.qemu.guest_agent.0"

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *rx0, *tx0, *crx, *ctx, *rx1, *tx1;
    QGuestAlloc alloc;
    char *dir;
    char *sock;
    int host;                   /* our end of the chardev socket */
} Ctx;

static void ctx_start_with(Ctx *c, const char *extra)
{
    c->dir = g_dir_make_tmp("vser-XXXXXX", NULL);
    c->sock = g_build_filename(c->dir, "ga.sock", NULL);
    c->host = -1;
    c->qts = qtest_initf("-M pc -m 64M "
                         "-device virtio-serial-pci,id=virtio-serial0,"
                         "addr=04.0 "
                         "-chardev socket,id=charchannel0,path=%s,server=on,"
                         "wait=off "
                         "-device virtserialport,bus=virtio-serial0.0,nr=1,"
                         "chardev=charchannel0,id=channel0,name=" AGENT " "
                         "-chardev null,id=con0 "
                         "-device virtconsole,chardev=con0,id=console0 %s",
                         c->sock, extra);
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x2000000;
}

static void ctx_start(Ctx *c)
{
    ctx_start_with(c, "");
}

static void ctx_ready(Ctx *c)
{
    g_assert_true(qvirtio_negotiate(c->v, F(VIRTIO_F_VERSION_1) |
                                    F(VIRTIO_CONSOLE_F_MULTIPORT)));
    c->rx0 = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->tx0 = qvirtqueue_setup(c->v, &c->alloc, 1, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->crx = qvirtqueue_setup(c->v, &c->alloc, 2, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->ctx = qvirtqueue_setup(c->v, &c->alloc, 3, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->rx1 = qvirtqueue_setup(c->v, &c->alloc, 4, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->tx1 = qvirtqueue_setup(c->v, &c->alloc, 5, QSIZE, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
    /* Buffers for control messages from the device. */
    for (int i = 0; i < 8; i++) {
        uint64_t b = qguest_alloc(&c->alloc, 64, 8);
        qvirtqueue_make_available(c->crx,
                                  qvirtqueue_add(c->crx, b, 64, true, false));
    }
    qvirtqueue_kick(c->crx);
}

static void ctx_stop(Ctx *c)
{
    QVirtQueue **qs[] = { &c->rx0, &c->tx0, &c->crx, &c->ctx, &c->rx1,
                          &c->tx1 };

    for (unsigned i = 0; i < G_N_ELEMENTS(qs); i++) {
        g_free(*qs[i]);
    }
    if (c->host >= 0) {
        close(c->host);
    }
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    unlink(c->sock);
    rmdir(c->dir);
    g_free(c->sock);
    g_free(c->dir);
}

/* Sends a control message from the driver. */
static void ctrl_send(Ctx *c, uint32_t id, uint16_t event, uint16_t value)
{
    uint64_t b = qguest_alloc(&c->alloc, 8, 8);
    uint32_t used;

    qtest_writel(c->qts, b, id);
    qtest_writew(c->qts, b + 4, event);
    qtest_writew(c->qts, b + 6, value);
    qvirtqueue_make_available(c->ctx, qvirtqueue_add(c->ctx, b, 8, false,
                                                     false));
    qvirtqueue_kick(c->ctx);
    g_assert_true(qvirtqueue_wait_used(c->ctx, &used, NULL, TIMEOUT_US));
}

typedef struct CtrlMsg {
    uint32_t id;
    uint16_t event, value;
    char extra[56];
} CtrlMsg;

/* The next control message from the device. */
static void ctrl_recv(Ctx *c, CtrlMsg *m)
{
    uint32_t head, len;
    uint64_t addr;

    g_assert_true(qvirtqueue_wait_used(c->crx, &head, &len, TIMEOUT_US));
    g_assert_cmpuint(len, >=, 8);
    addr = qtest_readq(c->qts, c->crx->desc + 16 * head);
    m->id = qtest_readl(c->qts, addr);
    m->event = qtest_readw(c->qts, addr + 4);
    m->value = qtest_readw(c->qts, addr + 6);
    memset(m->extra, 0, sizeof(m->extra));
    if (len > 8) {
        qtest_memread(c->qts, addr + 8, m->extra,
                      MIN(len - 8, sizeof(m->extra) - 1));
    }
    /* Give the buffer back to the device. */
    qvirtqueue_make_available(c->crx, head);
    qvirtqueue_kick(c->crx);
}

static void expect_ctrl(Ctx *c, uint32_t id, uint16_t event, uint16_t value)
{
    CtrlMsg m;

    ctrl_recv(c, &m);
    g_assert_cmpuint(m.event, ==, event);
    g_assert_cmpuint(m.id, ==, id);
    g_assert_cmpuint(m.value, ==, value);
}

static int host_connect(Ctx *c)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    g_strlcpy(sa.sun_path, c->sock, sizeof(sa.sun_path));
    g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    return fd;
}

static gboolean frontend_open(Ctx *c, const char *label)
{
    JsonObject *r = qtest_qmp(c->qts, "{'execute':'query-chardev'}");
    JsonArray *a = json_object_get_array_member(r, "return");
    gboolean open = FALSE;

    for (unsigned i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);

        if (!strcmp(json_object_get_string_member(o, "label"), label)) {
            open = json_object_get_boolean_member(o, "frontend-open");
        }
    }
    json_object_unref(r);
    return open;
}

/* Driver side up to PORT_READY for both ports. */
static void handshake(Ctx *c)
{
    CtrlMsg m;
    bool seen0 = false, seen1 = false;

    ctrl_send(c, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
    for (int i = 0; i < 2; i++) {
        ctrl_recv(c, &m);
        g_assert_cmpuint(m.event, ==, VIRTIO_CONSOLE_PORT_ADD);
        seen0 |= m.id == 0;
        seen1 |= m.id == 1;
    }
    g_assert_true(seen0 && seen1);
    /* The console: CONSOLE_PORT; the null chardev counts as connected. */
    ctrl_send(c, 0, VIRTIO_CONSOLE_PORT_READY, 1);
    expect_ctrl(c, 0, VIRTIO_CONSOLE_CONSOLE_PORT, 1);
    expect_ctrl(c, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
    /* The agent channel: its name, and nobody at the host end yet. */
    ctrl_send(c, 1, VIRTIO_CONSOLE_PORT_READY, 1);
    ctrl_recv(c, &m);
    g_assert_cmpuint(m.event, ==, VIRTIO_CONSOLE_PORT_NAME);
    g_assert_cmpuint(m.id, ==, 1);
    g_assert_cmpstr(m.extra, ==, AGENT);
}

static void test_discovery(void)
{
    Ctx c = { 0 };
    uint64_t f;

    ctx_start(&c);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, PCI_DEVICE_ID), ==, 0x1043);
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_CONSOLE_F_MULTIPORT));
    g_assert_true(f & F(VIRTIO_CONSOLE_F_EMERG_WRITE));
    /* 31 ports: two queues each plus the control pair. */
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 64);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 4), ==, 31);
    ctx_stop(&c);
}

static void test_agent_channel(void)
{
    Ctx c = { 0 };
    JsonObject *ev;
    uint64_t buf;
    uint32_t len, head;
    char got[16] = { 0 };

    ctx_start(&c);
    ctx_ready(&c);
    handshake(&c);
    g_assert_false(frontend_open(&c, "charchannel0"));

    /* The host connects (libvirt, or the agent's user). */
    c.host = host_connect(&c);
    expect_ctrl(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
    /* Host bytes wait while no guest program has the port open. */
    g_assert_cmpint(write(c.host, "{\"ping\"}", 8), ==, 8);
    buf = qguest_alloc(&c.alloc, 64, 8);
    qvirtqueue_make_available(c.rx1, qvirtqueue_add(c.rx1, buf, 64, true,
                                                    false));
    qvirtqueue_kick(c.rx1);
    g_usleep(100000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.rx1), ==, 0);

    /* The agent opens the port: the event, then the bytes arrive. */
    ctrl_send(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
    ev = qtest_qmp_eventwait(c.qts, "VSERPORT_CHANGE");
    g_assert_cmpstr(json_object_get_string_member(
                        json_object_get_object_member(ev, "data"), "id"),
                    ==, "channel0");
    g_assert_true(json_object_get_boolean_member(
                      json_object_get_object_member(ev, "data"), "open"));
    json_object_unref(ev);
    g_assert_true(qvirtqueue_wait_used(c.rx1, &head, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 8);
    qtest_memread(c.qts, buf, got, 8);
    g_assert_cmpstr(got, ==, "{\"ping\"}");
    g_assert_true(frontend_open(&c, "charchannel0"));

    /* Guest to host. */
    qtest_memwrite(c.qts, buf, "{\"return\":{}}\n", 14);
    qvirtqueue_make_available(c.tx1, qvirtqueue_add(c.tx1, buf, 14, false,
                                                    false));
    qvirtqueue_kick(c.tx1);
    g_assert_true(qvirtqueue_wait_used(c.tx1, NULL, NULL, TIMEOUT_US));
    memset(got, 0, sizeof(got));
    g_assert_cmpint(read(c.host, got, 14), ==, 14);
    g_assert_cmpmem(got, 14, "{\"return\":{}}\n", 14);

    /* The host hangs up: the guest hears PORT_OPEN 0. */
    qvirtqueue_make_available(c.rx1, qvirtqueue_add(c.rx1, buf, 64, true,
                                                    false));
    qvirtqueue_kick(c.rx1);
    close(c.host);
    c.host = -1;
    expect_ctrl(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 0);

    /* The agent closes: VSERPORT_CHANGE open=false. */
    ctrl_send(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 0);
    ev = qtest_qmp_eventwait(c.qts, "VSERPORT_CHANGE");
    g_assert_false(json_object_get_boolean_member(
                       json_object_get_object_member(ev, "data"), "open"));
    json_object_unref(ev);
    g_assert_false(frontend_open(&c, "charchannel0"));
    ctx_stop(&c);
}

/*
 * The agent channel in use migrates: the guest program's open port is
 * open on the destination too (frontend-open, what libvirt reads to
 * know the agent is there), the handshake is not repeated, a receive
 * buffer posted on the source is filled by the destination's host end,
 * which the driver hears connect.
 */
static void test_migrate(void)
{
    Ctx c = { 0 }, d = { 0 };
    QVirtQueue **cq[] = { &c.rx0, &c.tx0, &c.crx, &c.ctx, &c.rx1, &c.tx1 };
    QVirtQueue **dq[] = { &d.rx0, &d.tx0, &d.crx, &d.ctx, &d.rx1, &d.tx1 };
    g_autofree char *mig = NULL, *inc = NULL, *uri = NULL;
    JsonObject *ev;
    uint64_t buf;
    uint32_t len;
    char got[16] = { 0 };

    ctx_start(&c);
    ctx_ready(&c);
    handshake(&c);
    c.host = host_connect(&c);
    expect_ctrl(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
    buf = qguest_alloc(&c.alloc, 64, 8);
    qvirtqueue_make_available(c.rx1, qvirtqueue_add(c.rx1, buf, 64, true,
                                                    false));
    qvirtqueue_kick(c.rx1);
    /* A buffer posted, the host quiet: the destination fills it. */
    ctrl_send(&c, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
    json_object_unref(qtest_qmp_eventwait(c.qts, "VSERPORT_CHANGE"));
    g_usleep(100 * 1000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.rx1), ==, 0);

    mig = g_build_filename(c.dir, "mig.sock", NULL);
    inc = g_strdup_printf("-incoming unix:%s", mig);
    ctx_start_with(&d, inc);
    uri = g_strdup_printf("unix:%s", mig);
    qtest_migrate_and_wait(c.qts, d.qts, uri);
    close(c.host);
    c.host = -1;

    /* The driver (this test) goes on against the destination. */
    d.alloc = c.alloc;
    for (unsigned i = 0; i < G_N_ELEMENTS(cq); i++) {
        *dq[i] = g_memdup2(*cq[i], sizeof(QVirtQueue));
        (*dq[i])->vdev = d.v;
    }
    /* As QEMU does, the destination says so when it loads the port. */
    ev = qtest_qmp_eventwait(d.qts, "VSERPORT_CHANGE");
    g_assert_true(json_object_get_boolean_member(
                      json_object_get_object_member(ev, "data"), "open"));
    json_object_unref(ev);
    g_assert_true(frontend_open(&d, "charchannel0"));
    d.host = host_connect(&d);
    expect_ctrl(&d, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
    g_assert_cmpint(write(d.host, "{\"ping\"}", 8), ==, 8);
    g_assert_true(qvirtqueue_wait_used(d.rx1, NULL, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 8);
    qtest_memread(d.qts, buf, got, 8);
    g_assert_cmpstr(got, ==, "{\"ping\"}");

    /* And the agent closing is seen there. */
    ctrl_send(&d, 1, VIRTIO_CONSOLE_PORT_OPEN, 0);
    ev = qtest_qmp_eventwait(d.qts, "VSERPORT_CHANGE");
    g_assert_false(json_object_get_boolean_member(
                       json_object_get_object_member(ev, "data"), "open"));
    json_object_unref(ev);
    ctx_stop(&d);
    ctx_stop(&c);
}

static void test_hostile_control(void)
{
    Ctx c = { 0 };
    uint64_t b;
    JsonObject *r;

    ctx_start(&c);
    ctx_ready(&c);
    /* Port ids that do not exist, unknown events, a short message. */
    ctrl_send(&c, 30, VIRTIO_CONSOLE_PORT_READY, 1);
    ctrl_send(&c, 0xffffffff, VIRTIO_CONSOLE_PORT_OPEN, 1);
    ctrl_send(&c, 1, 0x7777, 1);
    ctrl_send(&c, 1, VIRTIO_CONSOLE_PORT_READY, 1);
    ctrl_send(&c, 1, VIRTIO_CONSOLE_PORT_READY, 1);
    b = qguest_alloc(&c.alloc, 8, 8);
    qvirtqueue_make_available(c.ctx, qvirtqueue_add(c.ctx, b, 3, false,
                                                    false));
    qvirtqueue_kick(c.ctx);
    g_assert_true(qvirtqueue_wait_used(c.ctx, NULL, NULL, TIMEOUT_US));
    /* A looping chain on a port's transmit queue. */
    qvirtqueue_make_available(c.tx1, qvirtqueue_set_desc(c.tx1, 2, b, 8,
                                                         VRING_DESC_F_NEXT,
                                                         2));
    qvirtqueue_kick(c.tx1);
    g_assert_true(qvirtqueue_wait_used(c.tx1, NULL, NULL, TIMEOUT_US));
    /* Data on a queue of a port that does not exist (port 2). */
    /* The device still does the real handshake afterwards. */
    ctrl_send(&c, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
    r = qtest_qmp(c.qts, "{'execute':'x-query-virtio-serial'}");
    g_assert_true(json_object_has_member(r, "return"));
    json_object_unref(r);
    g_assert_cmphex(qvirtio_get_status(c.v) & VIRTIO_CONFIG_S_NEEDS_RESET,
                    ==, 0);
    ctx_stop(&c);
}

static void test_port_rules(void)
{
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-serial-pci,id=s "
                             "-device virtserialport,bus=s.0,nr=0",
                             "Port number 0 on virtio-serial devices "
                             "reserved for virtconsole devices");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-serial-pci,id=s,"
                             "max_ports=4 "
                             "-device virtserialport,bus=s.0,nr=4",
                             "Out-of-range port id specified, max. "
                             "allowed: 3");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-serial-pci,id=s "
                             "-device virtserialport,bus=s.0,name=a "
                             "-device virtserialport,bus=s.0,name=a",
                             "A port already exists by the name a");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-serial-pci,id=s "
                             "-device virtserialport,bus=s.0,nr=2 "
                             "-device virtserialport,bus=s.0,nr=2",
                             "A port already exists at id 2");
    qtest_assert_start_fails("-M pc -accel qtest -device virtserialport,name=a",
                             "No 'virtio-serial-bus' bus found");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-serial-pci,id=s "
                             "-device virtserialport,bus=s.0,chardev=nope",
                             "can't find value 'nope'");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-serial/discovery", test_discovery);
    g_test_add_func("/virtio-serial/agent-channel", test_agent_channel);
    g_test_add_func("/virtio-serial/migrate", test_migrate);
    g_test_add_func("/virtio-serial/hostile/control", test_hostile_control);
    g_test_add_func("/virtio-serial/port-rules", test_port_rules);
    return g_test_run();
}
