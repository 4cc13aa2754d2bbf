/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-net-pci's link and MTU as libvirt and Nova use them: QMP
 * set_link by NIC id or netdev id changes VIRTIO_NET_S_LINK_UP with a
 * configuration change (virtio 1.2, 5.1.4), frames stop while the link
 * is down, and host_mtu offers VIRTIO_NET_F_MTU with the size in the
 * configuration.  The backend is a datagram socketpair; the multiqueue
 * case uses a multiqueue tap (queues=2) and the control queue's
 * VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET (5.1.6.5.5), and the option errors of
 * -netdev tap,fds=/vhostfds=/queues=.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <poll.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define NET_DEVFN QPCI_DEVFN(5, 0)
#define QSIZE 16
#define HDR 12
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))
#define qmp_ok(qts, ...) \
    json_node_unref(qtest_qmp_assert_success(qts, __VA_ARGS__))

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *rx, *tx;
    QGuestAlloc alloc;
    int sock;
} Ctx;

static void ctx_start(Ctx *c, const char *dev_opts)
{
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    c->sock = sv[0];
    c->qts = qtest_initf("-M pc -m 64M -netdev socket,id=n0,fd=%d "
                         "-device virtio-net-pci,addr=05.0,netdev=n0,id=nic0"
                         "%s", sv[1], dev_opts ? dev_opts : "");
    close(sv[1]);
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, NET_DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x3000000;
}

static void ctx_ready(Ctx *c, uint64_t features)
{
    g_assert_true(qvirtio_negotiate(c->v, features));
    c->rx = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE, VIRTIO_MSI_NO_VECTOR);
    c->tx = qvirtqueue_setup(c->v, &c->alloc, 1, QSIZE, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
}

static void ctx_stop(Ctx *c)
{
    g_free(c->rx);
    g_free(c->tx);
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    if (c->sock >= 0) {
        close(c->sock);
    }
}

static uint16_t link_status(Ctx *c)
{
    return qpci_io_readw(c->v->pdev, c->v->bar,
                         c->v->device +
                         offsetof(struct virtio_net_config, status));
}

static uint8_t generation(Ctx *c)
{
    return qpci_io_readb(c->v->pdev, c->v->bar,
                         c->v->common + VIRTIO_PCI_COMMON_CFGGENERATION);
}

/* Sends one 60-byte frame; true if it reached the socket. */
static bool send_frame(Ctx *c)
{
    uint64_t b = qguest_alloc(&c->alloc, HDR + 60, 16);
    struct pollfd pfd = { .fd = c->sock, .events = POLLIN };
    uint8_t got[128];

    qtest_memset(c->qts, b, 0, HDR);
    qtest_memset(c->qts, b + HDR, 0x5a, 60);
    qvirtqueue_make_available(c->tx, qvirtqueue_add(c->tx, b, HDR + 60,
                                                    false, false));
    qvirtqueue_kick(c->tx);
    g_assert_true(qvirtqueue_wait_used(c->tx, NULL, NULL, TIMEOUT_US));
    if (poll(&pfd, 1, 200) != 1) {
        return false;
    }
    return recv(c->sock, got, sizeof(got), 0) == 60;
}

static void test_set_link(void)
{
    Ctx c = { 0 };
    uint8_t gen;
    JsonObject *r;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_STATUS));
    g_assert_cmphex(link_status(&c) & VIRTIO_NET_S_LINK_UP, ==,
                    VIRTIO_NET_S_LINK_UP);
    g_assert_true(send_frame(&c));

    gen = generation(&c);
    qmp_ok(c.qts, "{'execute':'set_link','arguments':{'name':'nic0',"
           "'up':false}}");
    g_assert_cmphex(link_status(&c) & VIRTIO_NET_S_LINK_UP, ==, 0);
    /* The driver was told: the configuration generation moved. */
    g_assert_cmpuint(generation(&c), !=, gen);
    /* No carrier: the frame is consumed and goes nowhere. */
    g_assert_false(send_frame(&c));

    /* By the netdev's id, as libvirt's domif-setlink may. */
    qmp_ok(c.qts, "{'execute':'set_link','arguments':{'name':'n0',"
           "'up':true}}");
    g_assert_cmphex(link_status(&c) & VIRTIO_NET_S_LINK_UP, ==,
                    VIRTIO_NET_S_LINK_UP);
    g_assert_true(send_frame(&c));

    r = qtest_qmp(c.qts, "{'execute':'set_link','arguments':{'name':'nope',"
                  "'up':true}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "DeviceNotFound");
    g_assert_cmpstr(qtest_qmp_error_desc(r), ==, "Device 'nope' not found");
    json_object_unref(r);
    r = qtest_qmp(c.qts, "{'execute':'set_link','arguments':{'name':'nic0'}}");
    g_assert_nonnull(qtest_qmp_error_desc(r));
    json_object_unref(r);
    ctx_stop(&c);
}

static void test_host_mtu(void)
{
    Ctx c = { 0 };

    ctx_start(&c, ",host_mtu=1400");
    g_assert_true(qvirtio_device_features(c.v) & F(VIRTIO_NET_F_MTU));
    g_assert_cmpuint(qpci_io_readw(c.v->pdev, c.v->bar, c.v->device +
                                   offsetof(struct virtio_net_config, mtu)),
                     ==, 1400);
    ctx_stop(&c);
    ctx_start(&c, NULL);
    g_assert_false(qvirtio_device_features(c.v) & F(VIRTIO_NET_F_MTU));
    ctx_stop(&c);
    {
        int sv[2];
        g_autofree char *args = NULL;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
        args = g_strdup_printf("-accel qtest -M pc -netdev socket,id=n0,"
                               "fd=%d -device virtio-net-pci,netdev=n0,"
                               "host_mtu=10", sv[1]);
        qtest_assert_start_fails(args, "host_mtu=10 is out of range");
        close(sv[0]);
        close(sv[1]);
    }
}

/* One control command: class, cmd, 2 data bytes; returns the ack. */
static uint8_t ctrl_cmd(Ctx *c, QVirtQueue *cvq, uint8_t cls, uint8_t cmd,
                        uint16_t data)
{
    uint64_t b = qguest_alloc(&c->alloc, 8, 8);
    uint16_t head;

    qtest_writeb(c->qts, b, cls);
    qtest_writeb(c->qts, b + 1, cmd);
    qtest_writew(c->qts, b + 2, data);
    qtest_writeb(c->qts, b + 4, 0xee);
    head = qvirtqueue_add(cvq, b, 4, false, true);
    qvirtqueue_add(cvq, b + 4, 1, true, false);
    qvirtqueue_make_available(cvq, head);
    qvirtqueue_kick(cvq);
    g_assert_true(qvirtqueue_wait_used(cvq, NULL, NULL, TIMEOUT_US));
    return qtest_readb(c->qts, b + 4);
}

static void test_mq(void)
{
    g_autofree char *ifname = g_strdup_printf("cndtmq%u",
                                              (unsigned)getpid() % 100000);
    g_autofree char *args = g_strdup_printf(
        "-M pc -m 64M -netdev tap,id=n0,ifname=%s,queues=2,script=no,"
        "downscript=no -device virtio-net-pci,addr=05.0,netdev=n0,id=nic0,"
        "mq=on,vectors=6", ifname);
    Ctx c = { 0 };
    QVirtQueue *q[5];
    uint64_t f;

    if (access("/dev/net/tun", R_OK | W_OK)) {
        g_test_skip("no /dev/net/tun");
        return;
    }
    c.qts = qtest_init(args);
    c.bus = qpci_new_pc(c.qts);
    c.v = qvirtio_pci_new(c.bus, NET_DEVFN);
    c.alloc.next = 0x200000;
    c.alloc.end = 0x3000000;
    c.sock = -1;
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_NET_F_MQ));
    g_assert_true(f & F(VIRTIO_NET_F_CTRL_VQ));
    /* rx0 tx0 rx1 tx1 ctrl. */
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 5);
    g_assert_cmpuint(qpci_io_readw(c.v->pdev, c.v->bar, c.v->device +
                                   offsetof(struct virtio_net_config,
                                            max_virtqueue_pairs)), ==, 2);
    g_assert_true(qvirtio_negotiate(c.v, F(VIRTIO_F_VERSION_1) |
                                    F(VIRTIO_NET_F_MQ) |
                                    F(VIRTIO_NET_F_CTRL_VQ)));
    for (int i = 0; i < 5; i++) {
        q[i] = qvirtqueue_setup(c.v, &c.alloc, i, QSIZE,
                                VIRTIO_MSI_NO_VECTOR);
    }
    qvirtio_set_status(c.v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
    g_assert_cmpuint(ctrl_cmd(&c, q[4], VIRTIO_NET_CTRL_MQ,
                              VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2), ==,
                     VIRTIO_NET_OK);
    /* More pairs than offered, zero pairs, an unknown class. */
    g_assert_cmpuint(ctrl_cmd(&c, q[4], VIRTIO_NET_CTRL_MQ,
                              VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 3), ==,
                     VIRTIO_NET_ERR);
    g_assert_cmpuint(ctrl_cmd(&c, q[4], VIRTIO_NET_CTRL_MQ,
                              VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 0), ==,
                     VIRTIO_NET_ERR);
    g_assert_cmpuint(ctrl_cmd(&c, q[4], 77, 0, 0), ==, VIRTIO_NET_ERR);
    /* A control buffer without an ack byte comes back with nothing. */
    {
        uint64_t b = qguest_alloc(&c.alloc, 8, 8);
        uint32_t len;

        qvirtqueue_make_available(q[4], qvirtqueue_add(q[4], b, 4, false,
                                                       false));
        qvirtqueue_kick(q[4]);
        g_assert_true(qvirtqueue_wait_used(q[4], NULL, &len, TIMEOUT_US));
        g_assert_cmpuint(len, ==, 0);
    }
    /* Both TX queues take frames (the tap drops them: nobody reads). */
    for (int i = 1; i < 4; i += 2) {
        uint64_t b = qguest_alloc(&c.alloc, HDR + 60, 16);

        qtest_memset(c.qts, b, 0, HDR + 60);
        qvirtqueue_make_available(q[i], qvirtqueue_add(q[i], b, HDR + 60,
                                                       false, false));
        qvirtqueue_kick(q[i]);
        g_assert_true(qvirtqueue_wait_used(q[i], NULL, NULL, TIMEOUT_US));
    }
    g_assert_cmphex(qvirtio_get_status(c.v) & VIRTIO_CONFIG_S_NEEDS_RESET,
                    ==, 0);
    for (int i = 0; i < 5; i++) {
        g_free(q[i]);
    }
    qvirtio_pci_free(c.v);
    qpci_free_pc(c.bus);
    qtest_quit(c.qts);
}

static void test_mq_errors(void)
{
    int sv[2];
    g_autofree char *args = NULL;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
    args = g_strdup_printf("-accel qtest -M pc -netdev socket,id=n0,fd=%d "
                           "-device virtio-net-pci,netdev=n0,mq=on", sv[1]);
    qtest_assert_start_fails(args, "mq=on needs a multiqueue netdev");
    close(sv[0]);
    close(sv[1]);
    qtest_assert_start_fails("-accel qtest -M pc -netdev tap,id=n0,fds=3:4,"
                             "vhostfds=5", "The number of fds passed does "
                             "not match the number of vhostfds passed");
    qtest_assert_start_fails("-accel qtest -M pc -netdev tap,id=n0,fds=3:4,"
                             "queues=3", "queues=3 does not match the 2 fds");
    qtest_assert_start_fails("-accel qtest -M pc -netdev tap,id=n0,"
                             "queues=0", "queues=0: expected 1 to 16");
    qtest_assert_start_fails("-accel qtest -M pc -netdev tap,id=n0,fds=3::4",
                             "fds=3::4: expected 1 to 16 fds");
    qtest_assert_start_fails("-accel qtest -M pc -netdev tap,id=n0,fds=3,"
                             "ifname=x", "fds= excludes fd= and ifname=");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-net/set-link", test_set_link);
    g_test_add_func("/virtio-net/host-mtu", test_host_mtu);
    g_test_add_func("/virtio-net/mq/tap-queues", test_mq);
    g_test_add_func("/virtio-net/mq/option-errors", test_mq_errors);
    return g_test_run();
}
