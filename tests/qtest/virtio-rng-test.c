/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-rng-pci with the libqos virtio driver (virtio 1.2, 5.4): buffers
 * come back filled from rng-random (a file we control, so the bytes can
 * be checked) and rng-builtin; max-bytes/period hold the rate (the
 * virtual clock runs under qtest's control); buffers the guest got wrong
 * come back empty; and the command line errors QEMU gives.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define QSIZE 8
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *vq;
    QGuestAlloc alloc;
} Ctx;

static void ctx_start(Ctx *c, const char *args)
{
    c->qts = qtest_initf("-M pc -m 64M %s", args);
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x2000000;
    g_assert_true(qvirtio_negotiate(c->v, F(VIRTIO_F_VERSION_1)));
    c->vq = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
}

static void ctx_stop(Ctx *c)
{
    g_free(c->vq);
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
}

static uint16_t post(Ctx *c, uint64_t buf, uint32_t len, bool write)
{
    uint16_t head = qvirtqueue_add(c->vq, buf, len, write, false);

    qvirtqueue_make_available(c->vq, head);
    qvirtqueue_kick(c->vq);
    return head;
}

static char *pattern_file(void)
{
    char *path = g_build_filename(g_get_tmp_dir(), "rng-XXXXXX", NULL);
    int fd = g_mkstemp(path);
    uint8_t buf[4096];

    g_assert_cmpint(fd, >=, 0);
    for (unsigned i = 0; i < sizeof(buf); i++) {
        buf[i] = i * 13 + 1;
    }
    g_assert_cmpint(write(fd, buf, sizeof(buf)), ==, sizeof(buf));
    close(fd);
    return path;
}

static void test_discovery(void)
{
    QTestState *qts = qtest_init("-M pc -device virtio-rng-pci,addr=04.0");
    QPCIBus *bus = qpci_new_pc(qts);
    QVirtioPCI *v = qvirtio_pci_new(bus, DEVFN);

    g_assert_cmphex(qpci_config_readw(v->pdev, PCI_DEVICE_ID), ==, 0x1044);
    g_assert_cmpuint(qvirtio_num_queues(v), ==, 1);
    qvirtio_pci_free(v);
    qpci_free_pc(bus);
    qtest_quit(qts);
}

static void test_rng_random_file(void)
{
    g_autofree char *path = pattern_file();
    g_autofree char *args = g_strdup_printf(
        "-object rng-random,id=objrng0,filename=%s "
        "-device virtio-rng-pci,rng=objrng0,addr=04.0,id=rng0", path);
    Ctx c = { 0 };
    uint64_t buf;
    uint8_t got[100];
    uint32_t id, len;

    ctx_start(&c, args);
    buf = qguest_alloc(&c.alloc, sizeof(got), 16);
    post(&c, buf, sizeof(got), true);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, sizeof(got));
    qtest_memread(c.qts, buf, got, sizeof(got));
    /* The bytes are the file's, in order. */
    for (unsigned i = 0; i < sizeof(got); i++) {
        g_assert_cmpuint(got[i], ==, (uint8_t)(i * 13 + 1));
    }
    /* The next buffer continues where the last ended. */
    post(&c, buf, 10, true);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 10);
    g_assert_cmpuint(qtest_readb(c.qts, buf), ==, (uint8_t)(100 * 13 + 1));
    ctx_stop(&c);
    unlink(path);
}

static void test_builtin_and_default(void)
{
    const char *variants[] = {
        "-object rng-builtin,id=rng0 -device virtio-rng-pci,rng=rng0,addr=04.0",
        "-device virtio-rng-pci,addr=04.0",
        "-object rng-random,id=r -device virtio-rng-pci,rng=r,addr=04.0",
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(variants); i++) {
        Ctx c = { 0 };
        uint64_t a, b;
        uint8_t x[64], y[64];
        uint32_t len;

        ctx_start(&c, variants[i]);
        a = qguest_alloc(&c.alloc, 64, 16);
        b = qguest_alloc(&c.alloc, 64, 16);
        qtest_memset(c.qts, a, 0, 64);
        post(&c, a, 64, true);
        g_assert_true(qvirtqueue_wait_used(c.vq, NULL, &len, TIMEOUT_US));
        g_assert_cmpuint(len, ==, 64);
        post(&c, b, 64, true);
        g_assert_true(qvirtqueue_wait_used(c.vq, NULL, &len, TIMEOUT_US));
        qtest_memread(c.qts, a, x, 64);
        qtest_memread(c.qts, b, y, 64);
        /* Random: two buffers never match (2^-512). */
        g_assert_true(memcmp(x, y, 64) != 0);
        ctx_stop(&c);
    }
}

static void test_rate_limit(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint32_t len;

    ctx_start(&c, "-object rng-builtin,id=r "
              "-device virtio-rng-pci,rng=r,addr=04.0,max-bytes=16,"
              "period=1000");
    buf = qguest_alloc(&c.alloc, 64, 16);
    /* 16 bytes per second: a 64-byte buffer gets 16. */
    post(&c, buf, 64, true);
    g_assert_true(qvirtqueue_wait_used(c.vq, NULL, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 16);
    /* The quota is gone: the next buffer waits for the next period. */
    post(&c, buf, 64, true);
    g_usleep(100000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.vq), ==, 1);
    qtest_clock_step(c.qts, 500ll * 1000 * 1000);
    g_usleep(50000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.vq), ==, 1);
    qtest_clock_step(c.qts, 600ll * 1000 * 1000);
    g_assert_true(qvirtqueue_wait_used(c.vq, NULL, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 16);
    ctx_stop(&c);
}

/*
 * A rate-limited guest migrates with a buffer waiting for the next
 * period: the destination fills it once its period comes, so the
 * guest's read does not wait forever.
 */
static void test_migrate(void)
{
    Ctx c = { 0 }, d = { 0 };
    g_autofree char *dir = g_dir_make_tmp("rng-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = NULL;
    static const char dev[] = "-object rng-builtin,id=r "
        "-device virtio-rng-pci,rng=r,addr=04.0,max-bytes=16,period=1000";
    uint64_t buf;
    uint32_t len, id;
    uint16_t head;

    ctx_start(&c, dev);
    buf = qguest_alloc(&c.alloc, 64, 16);
    post(&c, buf, 64, true);
    g_assert_true(qvirtqueue_wait_used(c.vq, NULL, &len, TIMEOUT_US));
    /* The quota is gone: this one is held until the next period. */
    head = post(&c, buf, 64, true);
    g_usleep(100000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.vq), ==, 1);

    d.qts = qtest_initf("-M pc -m 64M %s -incoming unix:%s", dev, sock);
    uri = g_strdup_printf("unix:%s", sock);
    qtest_migrate_and_wait(c.qts, d.qts, uri);
    d.bus = qpci_new_pc(d.qts);
    d.v = qvirtio_pci_new(d.bus, DEVFN);
    d.vq = g_memdup2(c.vq, sizeof(QVirtQueue));
    d.vq->vdev = d.v;
    qtest_clock_step(d.qts, 1100ll * 1000 * 1000);
    g_assert_true(qvirtqueue_wait_used(d.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    g_assert_cmpuint(len, ==, 16);
    ctx_stop(&d);
    ctx_stop(&c);
    unlink(sock);
    rmdir(dir);
}

static void test_bad_buffers(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint32_t id, len;
    uint16_t head;

    ctx_start(&c, "-device virtio-rng-pci,addr=04.0");
    buf = qguest_alloc(&c.alloc, 64, 16);
    /* Read-only: nothing to fill, returned with length 0. */
    head = post(&c, buf, 64, false);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    g_assert_cmpuint(len, ==, 0);
    /* Outside guest RAM. */
    head = post(&c, 0xfee00000ull, 64, true);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 0);
    /* A looping chain. */
    head = qvirtqueue_set_desc(c.vq, 3, buf, 8,
                               VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 3);
    qvirtqueue_make_available(c.vq, head);
    qvirtqueue_kick(c.vq);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, 3);
    /* Still serving good buffers afterwards. */
    post(&c, buf, 32, true);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(len, ==, 32);
    ctx_stop(&c);
}

static void test_command_line_errors(void)
{
    qtest_assert_start_fails("-M pc -accel qtest -object rng-random,id=r,"
                             "filename=/nonexistent/rng",
                             "Could not open '/nonexistent/rng'");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-rng-pci,period=0",
                             "'period' parameter expects a positive integer");
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-rng-pci,rng=nosuch",
                             "Device 'nosuch' not found");
    qtest_assert_start_fails("-M pc -accel qtest -object rng-builtin,id=r "
                             "-device virtio-rng-pci,rng=r "
                             "-device virtio-rng-pci,rng=r",
                             "already in use");
    qtest_assert_start_fails("-M pc -accel qtest -object rng-egd,id=r,chardev=c",
                             "invalid object type: rng-egd");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-rng/discovery", test_discovery);
    g_test_add_func("/virtio-rng/rng-random/file-bytes", test_rng_random_file);
    g_test_add_func("/virtio-rng/rng-builtin/random", test_builtin_and_default);
    g_test_add_func("/virtio-rng/rate-limit", test_rate_limit);
    g_test_add_func("/virtio-rng/migrate", test_migrate);
    g_test_add_func("/virtio-rng/hostile/bad-buffers", test_bad_buffers);
    g_test_add_func("/virtio-rng/command-line-errors",
                    test_command_line_errors);
    return g_test_run();
}
