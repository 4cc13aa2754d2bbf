/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk-pci num-queues (what libvirt writes for <driver queues=N>
 * and Nova for multiqueue flavors): VIRTIO_BLK_F_MQ and num_queues in
 * the configuration (virtio 1.2, 5.2.4), a request on each queue
 * completing on that queue with the image's bytes, and the range check.
 */
#include "qemu/osdep.h"
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define NQ 4
#define QSIZE 16
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))

static void test_num_queues(void)
{
    g_autofree char *img = g_build_filename(g_get_tmp_dir(),
                                            "vblk-mq-XXXXXX", NULL);
    int fd = g_mkstemp(img);
    uint8_t sector[512];
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *q[NQ];
    QGuestAlloc alloc = { 0x200000, 0x2000000 };

    g_assert_cmpint(fd, >=, 0);
    for (int s = 0; s < 8; s++) {
        memset(sector, 0x10 + s, sizeof(sector));
        g_assert_cmpint(write(fd, sector, sizeof(sector)), ==, 512);
    }
    close(fd);
    qts = qtest_initf("-M pc -m 64M -blockdev driver=file,filename=%s,"
                      "node-name=d0 -device virtio-blk-pci,drive=d0,"
                      "addr=04.0,num-queues=%d", img, NQ);
    bus = qpci_new_pc(qts);
    v = qvirtio_pci_new(bus, DEVFN);
    g_assert_true(qvirtio_device_features(v) & F(VIRTIO_BLK_F_MQ));
    g_assert_cmpuint(qvirtio_num_queues(v), ==, NQ);
    g_assert_cmpuint(qpci_io_readw(v->pdev, v->bar, v->device +
                                   offsetof(struct virtio_blk_config,
                                            num_queues)), ==, NQ);
    g_assert_true(qvirtio_negotiate(v, F(VIRTIO_F_VERSION_1) |
                                    F(VIRTIO_BLK_F_MQ)));
    for (int i = 0; i < NQ; i++) {
        q[i] = qvirtqueue_setup(v, &alloc, i, QSIZE, VIRTIO_MSI_NO_VECTOR);
    }
    qvirtio_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
    /* Sector i read through queue i: it completes there, right bytes. */
    for (int i = NQ - 1; i >= 0; i--) {
        uint64_t hdr = qguest_alloc(&alloc, 16, 16);
        uint64_t data = qguest_alloc(&alloc, 512, 512);
        uint64_t st = qguest_alloc(&alloc, 1, 1);
        uint16_t head;
        uint32_t id, len;

        qtest_writel(qts, hdr, VIRTIO_BLK_T_IN);
        qtest_writel(qts, hdr + 4, 0);
        qtest_writeq(qts, hdr + 8, i);
        qtest_writeb(qts, st, 0xaa);
        head = qvirtqueue_add(q[i], hdr, 16, false, true);
        qvirtqueue_add(q[i], data, 512, true, true);
        qvirtqueue_add(q[i], st, 1, true, false);
        qvirtqueue_make_available(q[i], head);
        qvirtqueue_kick(q[i]);
        g_assert_true(qvirtqueue_wait_used(q[i], &id, &len, TIMEOUT_US));
        g_assert_cmpuint(id, ==, head);
        g_assert_cmpuint(qtest_readb(qts, st), ==, VIRTIO_BLK_S_OK);
        g_assert_cmpuint(qtest_readb(qts, data + 100), ==, 0x10 + i);
        for (int j = 0; j < NQ; j++) {
            if (j != i) {
                g_assert_cmpuint(qvirtqueue_used_idx(q[j]), ==,
                                 j > i ? 1 : 0);
            }
        }
    }
    for (int i = 0; i < NQ; i++) {
        g_free(q[i]);
    }
    qvirtio_pci_free(v);
    qpci_free_pc(bus);
    qtest_quit(qts);
    unlink(img);
}

static void test_num_queues_range(void)
{
    g_autofree char *img = g_build_filename(g_get_tmp_dir(),
                                            "vblk-mq-XXXXXX", NULL);
    int fd = g_mkstemp(img);
    g_autofree char *args = NULL;

    g_assert_cmpint(ftruncate(fd, 1 << 20), ==, 0);
    close(fd);
    for (int n = 0; n < 2; n++) {
        g_free(args);
        args = g_strdup_printf("-accel qtest -M pc -blockdev driver=file,"
                               "filename=%s,node-name=d0 -device "
                               "virtio-blk-pci,drive=d0,num-queues=%d", img,
                               n ? 33 : 0);
        qtest_assert_start_fails(args, n ? "num-queues=33 is not between"
                                         : "num-queues=0 is not between");
    }
    unlink(img);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-blk/num-queues", test_num_queues);
    g_test_add_func("/virtio-blk/num-queues/range", test_num_queues_range);
    return g_test_run();
}
