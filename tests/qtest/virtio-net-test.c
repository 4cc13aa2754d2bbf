/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-net-pci through the whole pc machine with the libqos virtio
 * driver and a datagram socketpair as the backend (-netdev socket,fd=):
 * configuration (MAC, link), feature negotiation, TX frames arriving on
 * the socket, RX frames landing in posted buffers with their header,
 * mergeable buffers spreading a large frame, a frame waiting for
 * buffers, bad TX chains, reset while running, and option errors.
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

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *rx, *tx;
    QGuestAlloc alloc;
    int sock;                   /* our end of the socketpair */
} Ctx;

static void ctx_start(Ctx *c, const char *dev_opts)
{
    int sv[2];

    /* The child inherits sv[1] (no CLOEXEC) under the same number. */
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    c->sock = sv[0];
    c->qts = qtest_initf("-M pc -m 64M -netdev socket,id=n0,fd=%d "
                         "-device virtio-net-pci,addr=05.0,netdev=n0,id=nic0,"
                         "mac=52:54:00:ab:cd:ef%s", sv[1],
                         dev_opts ? dev_opts : "");
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
    g_assert_cmphex(qvirtio_get_status(c->v) & VIRTIO_CONFIG_S_NEEDS_RESET,
                    ==, 0);
}

static void ctx_stop(Ctx *c)
{
    g_free(c->rx);
    g_free(c->tx);
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    close(c->sock);
}

static void fill_frame(uint8_t *f, size_t len, uint8_t seed)
{
    static const uint8_t dst[6] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

    memcpy(f, dst, 6);
    memset(f + 6, 0x02, 6);
    f[12] = 0x88;
    f[13] = 0xb5;               /* local experimental ethertype */
    for (size_t i = 14; i < len; i++) {
        f[i] = (uint8_t)(i * 31 + seed);
    }
}

static ssize_t sock_recv(Ctx *c, void *buf, size_t len)
{
    struct pollfd p = { c->sock, POLLIN, 0 };

    if (poll(&p, 1, 10000) != 1) {
        return -1;
    }
    return recv(c->sock, buf, len, 0);
}

/* Posts one device-writable buffer of len bytes on RX; returns its addr. */
static uint64_t post_rx(Ctx *c, uint32_t len)
{
    uint64_t buf = qguest_alloc(&c->alloc, len, 64);
    uint16_t head = qvirtqueue_add(c->rx, buf, len, true, false);

    qtest_memset(c->qts, buf, 0xee, len);
    qvirtqueue_make_available(c->rx, head);
    return buf;
}

static void test_config(void)
{
    Ctx c = { 0 };
    uint64_t f;
    uint8_t mac[6];

    ctx_start(&c, NULL);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, 2), ==, 0x1041);
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 2);
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_F_VERSION_1));
    g_assert_true(f & F(VIRTIO_NET_F_MAC));
    g_assert_true(f & F(VIRTIO_NET_F_STATUS));
    g_assert_true(f & F(VIRTIO_NET_F_MRG_RXBUF));
    /* A socket carries no vnet header: no offloads are offered. */
    g_assert_false(f & F(VIRTIO_NET_F_CSUM));
    g_assert_false(f & F(VIRTIO_NET_F_GUEST_TSO4));
    for (int i = 0; i < 6; i++) {
        mac[i] = qvirtio_config_readb(c.v, i);
    }
    g_assert_cmpmem(mac, 6, ((uint8_t[]){ 0x52, 0x54, 0, 0xab, 0xcd, 0xef }),
                    6);
    g_assert_cmpuint(qvirtio_config_readb(c.v, 6) & VIRTIO_NET_S_LINK_UP, ==,
                     VIRTIO_NET_S_LINK_UP);
    ctx_stop(&c);
}

static void test_tx(void)
{
    Ctx c = { 0 };
    uint8_t frame[1000], got[2000];
    uint64_t hdr, data;
    uint16_t head;
    uint32_t id;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC));
    fill_frame(frame, sizeof(frame), 1);
    hdr = qguest_alloc(&c.alloc, HDR, 16);
    data = qguest_alloc(&c.alloc, sizeof(frame), 16);
    qtest_memset(c.qts, hdr, 0, HDR);
    qtest_memwrite(c.qts, data, frame, sizeof(frame));
    /* Header and frame in separate descriptors. */
    head = qvirtqueue_add(c.tx, hdr, HDR, false, true);
    qvirtqueue_add(c.tx, data, sizeof(frame), false, false);
    qvirtqueue_make_available(c.tx, head);
    qvirtqueue_kick(c.tx);
    g_assert_cmpint(sock_recv(&c, got, sizeof(got)), ==, sizeof(frame));
    g_assert_cmpmem(got, sizeof(frame), frame, sizeof(frame));
    g_assert_true(qvirtqueue_wait_used(c.tx, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);

    /* Header and frame in one descriptor; several frames in one kick. */
    for (int i = 0; i < 3; i++) {
        uint64_t b = qguest_alloc(&c.alloc, HDR + 60, 16);

        fill_frame(frame, 60, 10 + i);
        qtest_memset(c.qts, b, 0, HDR);
        qtest_memwrite(c.qts, b + HDR, frame, 60);
        qvirtqueue_make_available(c.tx, qvirtqueue_add(c.tx, b, HDR + 60,
                                                        false, false));
    }
    qvirtqueue_kick(c.tx);
    for (int i = 0; i < 3; i++) {
        fill_frame(frame, 60, 10 + i);
        g_assert_cmpint(sock_recv(&c, got, sizeof(got)), ==, 60);
        g_assert_cmpmem(got, 60, frame, 60);
        g_assert_true(qvirtqueue_wait_used(c.tx, NULL, NULL, TIMEOUT_US));
    }

    /* A TX chain with a writable part, or too short, is refused. */
    head = qvirtqueue_add(c.tx, hdr, 4, false, false);
    qvirtqueue_make_available(c.tx, head);
    qvirtqueue_kick(c.tx);
    g_assert_true(qvirtqueue_wait_used(c.tx, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    /* ... and the queue still works. */
    fill_frame(frame, 100, 7);
    qtest_memwrite(c.qts, data, frame, 100);
    head = qvirtqueue_add(c.tx, hdr, HDR, false, true);
    qvirtqueue_add(c.tx, data, 100, false, false);
    qvirtqueue_make_available(c.tx, head);
    qvirtqueue_kick(c.tx);
    g_assert_cmpint(sock_recv(&c, got, sizeof(got)), ==, 100);
    g_assert_cmpmem(got, 100, frame, 100);
    ctx_stop(&c);
}

static void test_rx(void)
{
    Ctx c = { 0 };
    uint8_t frame[1400], got[2048];
    uint64_t buf;
    uint32_t id, len;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC));
    buf = post_rx(&c, 2048);
    qvirtqueue_kick(c.rx);
    fill_frame(frame, sizeof(frame), 3);
    g_assert_cmpint(send(c.sock, frame, sizeof(frame), 0), ==, sizeof(frame));
    g_assert_true(qvirtqueue_wait_used(c.rx, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, HDR + sizeof(frame));
    qtest_memread(c.qts, buf, got, HDR + sizeof(frame));
    /* flags 0, gso none, num_buffers 1 */
    g_assert_cmpuint(got[0], ==, 0);
    g_assert_cmpuint(got[1], ==, VIRTIO_NET_HDR_GSO_NONE);
    g_assert_cmpuint(got[10] | got[11] << 8, ==, 1);
    g_assert_cmpmem(got + HDR, sizeof(frame), frame, sizeof(frame));

    /* No buffer posted: the frame waits, and arrives after a kick. */
    fill_frame(frame, 200, 4);
    g_assert_cmpint(send(c.sock, frame, 200, 0), ==, 200);
    g_usleep(100 * 1000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.rx), ==, 1);
    buf = post_rx(&c, 2048);
    qvirtqueue_kick(c.rx);
    g_assert_true(qvirtqueue_wait_used(c.rx, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, HDR + 200);
    qtest_memread(c.qts, buf + HDR, got, 200);
    g_assert_cmpmem(got, 200, frame, 200);
    ctx_stop(&c);
}

static void test_rx_mergeable(void)
{
    Ctx c = { 0 };
    uint8_t frame[3000], got[3100];
    uint64_t b[4];
    uint32_t len[3], id;
    size_t off = 0;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MRG_RXBUF));
    for (int i = 0; i < 4; i++) {
        b[i] = post_rx(&c, 1024);
    }
    qvirtqueue_kick(c.rx);
    fill_frame(frame, sizeof(frame), 5);
    g_assert_cmpint(send(c.sock, frame, sizeof(frame), 0), ==, sizeof(frame));
    /* 12 + 3000 bytes over three 1 KiB buffers, num_buffers 3. */
    for (int i = 0; i < 3; i++) {
        g_assert_true(qvirtqueue_wait_used(c.rx, &id, &len[i], TIMEOUT_US));
    }
    g_assert_cmpuint(len[0] + len[1] + len[2], ==, HDR + sizeof(frame));
    g_assert_cmpuint(qtest_readw(c.qts, b[0] + 10), ==, 3);
    for (int i = 0; i < 3; i++) {
        qtest_memread(c.qts, b[i], got + off, len[i]);
        off += len[i];
    }
    g_assert_cmpmem(got + HDR, sizeof(frame), frame, sizeof(frame));
    ctx_stop(&c);
}

static void test_reset_running(void)
{
    Ctx c = { 0 };
    uint8_t frame[100], got[200];
    uint32_t len;

    ctx_start(&c, NULL);
    for (int round = 0; round < 3; round++) {
        ctx_ready(&c, F(VIRTIO_F_VERSION_1));
        post_rx(&c, 256);
        qvirtqueue_kick(c.rx);
        qvirtio_reset(c.v);
        g_free(c.rx);
        g_free(c.tx);
        c.rx = c.tx = NULL;
    }
    ctx_ready(&c, F(VIRTIO_F_VERSION_1));
    post_rx(&c, 256);
    qvirtqueue_kick(c.rx);
    fill_frame(frame, sizeof(frame), 9);
    g_assert_cmpint(send(c.sock, frame, sizeof(frame), 0), ==, sizeof(frame));
    g_assert_true(qvirtqueue_wait_used(c.rx, NULL, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, HDR + sizeof(frame));
    (void)got;
    ctx_stop(&c);
}

/*
 * A VM stop stops the worker and cont starts it again: RX buffers the
 * driver posted before stay usable, frames flow both ways after cont.
 */
static void test_stop_cont(void)
{
    Ctx c = { 0 };
    uint8_t frame[300], got[400];
    uint64_t hdr, data;
    uint16_t head;
    uint32_t len;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC));
    for (int round = 0; round < 3; round++) {
        post_rx(&c, 1024);
        qvirtqueue_kick(c.rx);
        json_node_unref(qtest_qmp_assert_success(c.qts,
                                                 "{'execute': 'stop'}"));
        json_node_unref(qtest_qmp_assert_success(c.qts,
                                                 "{'execute': 'cont'}"));
        fill_frame(frame, sizeof(frame), 20 + round);
        g_assert_cmpint(send(c.sock, frame, sizeof(frame), 0), ==,
                        sizeof(frame));
        g_assert_true(qvirtqueue_wait_used(c.rx, NULL, &len, TIMEOUT_US));
        g_assert_cmpuint(len, ==, HDR + sizeof(frame));

        fill_frame(frame, 100, 40 + round);
        hdr = qguest_alloc(&c.alloc, HDR + 100, 16);
        qtest_memset(c.qts, hdr, 0, HDR);
        data = hdr + HDR;
        qtest_memwrite(c.qts, data, frame, 100);
        head = qvirtqueue_add(c.tx, hdr, HDR + 100, false, false);
        qvirtqueue_make_available(c.tx, head);
        qvirtqueue_kick(c.tx);
        g_assert_cmpint(sock_recv(&c, got, sizeof(got)), ==, 100);
        g_assert_cmpmem(got, 100, frame, 100);
        g_assert_true(qvirtqueue_wait_used(c.tx, NULL, NULL, TIMEOUT_US));
    }
    ctx_stop(&c);
}

static void test_cmdline_errors(void)
{
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-net-pci",
                             "netdev property not set");
    qtest_assert_start_fails("-M pc -accel qtest "
                             "-device virtio-net-pci,netdev=x",
                             "netdev 'x' not found");
    qtest_assert_start_fails("-M pc -accel qtest "
                             "-netdev tap,id=n,script=/etc/qemu-ifup",
                             "script=/etc/qemu-ifup is not supported");
    qtest_assert_start_fails("-M pc -accel qtest -netdev user,id=n",
                             "Invalid netdev type 'user'");
    qtest_assert_start_fails("-M pc -accel qtest -netdev tap,id=n,fd=9999",
                             "expects an open file descriptor");
    /* stdin is Conduit's; an inherited pipe is no datagram socket. */
    qtest_assert_start_fails("-M pc -accel qtest -netdev socket,id=n,fd=0",
                             "fd 0 is one Conduit uses for standard I/O");
    {
        g_autofree char *args = NULL;
        int p[2];

        g_assert_cmpint(pipe(p), ==, 0);
        args = g_strdup_printf("-M pc -accel qtest -netdev socket,id=n,"
                               "fd=%d", p[0]);
        qtest_assert_start_fails(args, "is not a datagram socket");
        close(p[0]);
        close(p[1]);
    }
    if (access("/dev/vhost-net", F_OK) && !access("/dev/net/tun", R_OK)) {
        /* vhost=on where the kernel has no vhost-net. */
        qtest_assert_start_fails("-M pc -accel qtest "
                                 "-netdev tap,id=n,vhost=on "
                                 "-device virtio-net-pci,netdev=n",
                                 "cannot open /dev/vhost-net");
    }
}

static void test_hotplug(void)
{
    Ctx c = { 0 };
    int sv[2];
    uint8_t frame[80], got[200];
    JsonObject *r;
    QVirtioPCI *v2;
    QVirtQueue *tx;
    uint64_t b;

    /* A second socketpair, inherited, for the hot-plugged NIC. */
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    ctx_start(&c, NULL);
    close(sv[1]);
    qtest_qmp_assert_success(c.qts, "{'execute':'netdev_add','arguments':"
                             "{'type':'socket','id':'hp0','fd':'%d'}}",
                             sv[1]);
    qtest_qmp_assert_success(c.qts, "{'execute':'device_add','arguments':"
                             "{'driver':'virtio-net-pci','netdev':'hp0',"
                             "'id':'hpnic','addr':'07.0','bootindex':2}}");
    r = qtest_qmp(c.qts, "{'execute':'netdev_del','arguments':{'id':'hp0'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "in use"));
    json_object_unref(r);
    /* The new NIC transmits on its own backend. */
    v2 = qvirtio_pci_new(c.bus, QPCI_DEVFN(7, 0));
    g_assert_true(qvirtio_negotiate(v2, F(VIRTIO_F_VERSION_1)));
    g_free(qvirtqueue_setup(v2, &c.alloc, 0, QSIZE, VIRTIO_MSI_NO_VECTOR));
    tx = qvirtqueue_setup(v2, &c.alloc, 1, QSIZE, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(v2, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
    fill_frame(frame, sizeof(frame), 42);
    b = qguest_alloc(&c.alloc, HDR + sizeof(frame), 16);
    qtest_memset(c.qts, b, 0, HDR);
    qtest_memwrite(c.qts, b + HDR, frame, sizeof(frame));
    qvirtqueue_make_available(tx, qvirtqueue_add(tx, b, HDR + sizeof(frame),
                                                 false, false));
    qvirtqueue_kick(tx);
    {
        struct pollfd p = { sv[0], POLLIN, 0 };

        g_assert_cmpint(poll(&p, 1, 10000), ==, 1);
        g_assert_cmpint(recv(sv[0], got, sizeof(got), 0), ==, sizeof(frame));
        g_assert_cmpmem(got, sizeof(frame), frame, sizeof(frame));
    }
    g_free(tx);
    qvirtio_pci_free(v2);
    qtest_qmp_device_del(c.qts, "hpnic");
    qtest_qmp_assert_success(c.qts, "{'execute':'netdev_del','arguments':"
                             "{'id':'hp0'}}");
    close(sv[0]);
    ctx_stop(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-net/config", test_config);
    g_test_add_func("/virtio-net/tx", test_tx);
    g_test_add_func("/virtio-net/rx", test_rx);
    g_test_add_func("/virtio-net/rx-mergeable", test_rx_mergeable);
    g_test_add_func("/virtio-net/reset-running", test_reset_running);
    g_test_add_func("/virtio-net/stop-cont", test_stop_cont);
    g_test_add_func("/virtio-net/cmdline-errors", test_cmdline_errors);
    g_test_add_func("/virtio-net/hotplug", test_hotplug);
    return g_test_run();
}
