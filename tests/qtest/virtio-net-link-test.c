/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * virtio-net-pci's link and MTU as libvirt and Nova use them: QMP
 * set_link by NIC id or netdev id changes VIRTIO_NET_S_LINK_UP with a
 * configuration change (virtio 1.2, 5.1.4), frames stop while the link
 * is down, and host_mtu offers VIRTIO_NET_F_MTU with the size in the
 * configuration.  The backend is a datagram socketpair.
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
    close(c->sock);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-net/set-link", test_set_link);
    g_test_add_func("/virtio-net/host-mtu", test_host_mtu);
    return g_test_run();
}
