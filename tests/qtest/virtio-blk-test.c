/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-blk-pci through the whole pc machine with the libqos virtio
 * driver: discovery and feature negotiation, queue set-up, reads, writes
 * and flushes checked against the image file, MSI-X completion
 * interrupts, requests the guest got wrong (out of range, malformed or
 * looping chains, buffers outside RAM, broken rings), read-only and
 * O_DIRECT images, reset with requests in flight, and command-line
 * errors.
 */
#include "qemu/osdep.h"
#include <linux/falloc.h>
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/virtio.h"

#define BLK_DEVFN QPCI_DEVFN(4, 0)
#define IMG_SIZE (4 * 1024 * 1024)
#define QSIZE 16
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define MSI_TARGET 0x100000ULL
#define F(bit) (1ull << (bit))
#define BASE_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_BLK_F_FLUSH))

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *vq;
    QGuestAlloc alloc;
    char *img;
    int img_fd;
} Ctx;

static char *make_image(const char *dir)
{
    g_autofree char *tmpl = g_build_filename(dir, "virtio-blk-XXXXXX", NULL);
    int fd = g_mkstemp(tmpl);
    g_autofree uint8_t *buf = g_malloc(IMG_SIZE);

    g_assert_cmpint(fd, >=, 0);
    /* Each sector starts with its number, the rest a pattern. */
    for (size_t i = 0; i < IMG_SIZE; i++) {
        buf[i] = (uint8_t)(i * 7 + 3);
    }
    for (size_t s = 0; s < IMG_SIZE / 512; s++) {
        memcpy(buf + s * 512, &s, sizeof(uint32_t));
    }
    g_assert_cmpint(write(fd, buf, IMG_SIZE), ==, IMG_SIZE);
    close(fd);
    return g_steal_pointer(&tmpl);
}

static void ctx_start_args(Ctx *c, const char *dir, const char *node_opts,
                           const char *dev_opts)
{
    c->img = make_image(dir ? dir : g_get_tmp_dir());
    c->img_fd = open(c->img, O_RDWR);
    g_assert_cmpint(c->img_fd, >=, 0);
    c->qts = qtest_initf("-M pc -m 64M "
                         "-blockdev driver=file,filename=%s,node-name=disk0%s "
                         "-device virtio-blk-pci,addr=04.0,drive=disk0,"
                         "id=vblk0,serial=CNDT-SERIAL-0001%s",
                         c->img, node_opts ? node_opts : "",
                         dev_opts ? dev_opts : "");
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, BLK_DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x3000000;
}

static void ctx_start(Ctx *c)
{
    ctx_start_args(c, NULL, NULL, NULL);
}

static void ctx_stop(Ctx *c)
{
    if (c->vq) {
        qvirtqueue_free(c->vq);
    }
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    close(c->img_fd);
    unlink(c->img);
    g_free(c->img);
}

/* Negotiates, sets queue 0 up and sets DRIVER_OK. */
static void ctx_ready(Ctx *c, uint64_t features, uint16_t vector)
{
    g_assert_true(qvirtio_negotiate(c->v, features));
    c->vq = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE, vector);
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
    g_assert_cmphex(qvirtio_get_status(c->v) & VIRTIO_CONFIG_S_NEEDS_RESET,
                    ==, 0);
}

static uint64_t put_header(Ctx *c, uint32_t type, uint64_t sector)
{
    uint64_t hdr = qguest_alloc(&c->alloc, 16, 16);

    qtest_writel(c->qts, hdr, type);
    qtest_writel(c->qts, hdr + 4, 0);
    qtest_writeq(c->qts, hdr + 8, sector);
    return hdr;
}

/*
 * A well-formed request: header, optional data (device-writable for
 * reads), status.  Returns the status byte; *used_len gets the length.
 */
static uint8_t blk_request(Ctx *c, uint32_t type, uint64_t sector,
                           uint64_t data, uint32_t len, uint32_t *used_len)
{
    uint64_t hdr = put_header(c, type, sector);
    uint64_t status = qguest_alloc(&c->alloc, 1, 1);
    bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
    uint16_t head;
    uint32_t id;

    qtest_writeb(c->qts, status, 0xaa);
    head = qvirtqueue_add(c->vq, hdr, 16, false, true);
    if (len) {
        qvirtqueue_add(c->vq, data, len, in, true);
    }
    qvirtqueue_add(c->vq, status, 1, true, false);
    qvirtqueue_make_available(c->vq, head);
    qvirtqueue_kick(c->vq);
    g_assert_true(qvirtqueue_wait_used(c->vq, &id, used_len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    return qtest_readb(c->qts, status);
}

static void test_discovery(void)
{
    Ctx c = { 0 };
    uint64_t f;

    ctx_start(&c);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, PCI_VENDOR_ID), ==, 0x1af4);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, PCI_DEVICE_ID), ==, 0x1042);
    g_assert_cmpuint(qpci_config_readb(c.v->pdev, PCI_REVISION_ID), >=, 1);
    g_assert_cmpuint(c.v->notify_mult, ==, 4);
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 1);
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_F_VERSION_1));
    g_assert_true(f & F(VIRTIO_BLK_F_FLUSH));
    g_assert_true(f & F(VIRTIO_RING_F_INDIRECT_DESC));
    g_assert_false(f & F(VIRTIO_BLK_F_RO));
    g_assert_cmpuint(qvirtio_config_readq(c.v, 0), ==, IMG_SIZE / 512);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 20), ==, 512);
    /* MSI-X: one vector per queue plus config. */
    g_assert_cmpuint(qpci_msix_table_size(c.v->pdev), ==, 2);
    ctx_stop(&c);
}

static void test_features_refused(void)
{
    Ctx c = { 0 };

    ctx_start(&c);
    /* No VERSION_1: a modern device refuses FEATURES_OK. */
    g_assert_false(qvirtio_negotiate(c.v, F(VIRTIO_BLK_F_FLUSH)));
    /* A feature the device did not offer. */
    g_assert_false(qvirtio_negotiate(c.v, F(VIRTIO_F_VERSION_1) | F(50)));
    g_assert_true(qvirtio_negotiate(c.v, BASE_FEATURES));
    /* DRIVER_OK without queues is fine; reset brings status to 0. */
    qvirtio_reset(c.v);
    ctx_stop(&c);
}

static void test_read_write_flush(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint8_t data[1024], check[1024];
    uint32_t len;
    char id[21] = { 0 };

    ctx_start(&c);
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, sizeof(data), 4096);

    /* Read sectors 10-11: the image's content arrives in guest RAM. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 10, buf, 1024, &len),
                     ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(len, ==, 1025);
    qtest_memread(c.qts, buf, data, sizeof(data));
    g_assert_cmpint(pread(c.img_fd, check, sizeof(check), 10 * 512), ==,
                    sizeof(check));
    g_assert_cmpmem(data, sizeof(data), check, sizeof(check));
    g_assert_cmpuint(*(uint32_t *)data, ==, 10);

    /* Write sectors 100-101: the file has the guest's bytes. */
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i ^ 0x5a;
    }
    qtest_memwrite(c.qts, buf, data, sizeof(data));
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_OUT, 100, buf, 1024, &len),
                     ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(len, ==, 1);
    g_assert_cmpint(pread(c.img_fd, check, sizeof(check), 100 * 512), ==,
                    sizeof(check));
    g_assert_cmpmem(data, sizeof(data), check, sizeof(check));

    /* Flush, and the last sector (end of the disk) is reachable. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &len), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, IMG_SIZE / 512 - 1, buf,
                                 512, &len), ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c.qts, buf), ==, IMG_SIZE / 512 - 1);

    /* GET_ID returns the serial. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_GET_ID, 0, buf, 20, &len),
                     ==, VIRTIO_BLK_S_OK);
    qtest_memread(c.qts, buf, id, 20);
    g_assert_cmpstr(id, ==, "CNDT-SERIAL-0001");

    /* query-blockstats counted it all. */
    {
        JsonNode *r = qtest_qmp_assert_success(c.qts,
                                              "{'execute':'query-blockstats'}");
        JsonObject *st = json_object_get_object_member(
            json_array_get_object_element(json_node_get_array(r), 0), "stats");

        g_assert_cmpint(json_object_get_int_member(st, "rd_operations"), ==,
                        2);
        g_assert_cmpint(json_object_get_int_member(st, "wr_operations"), ==,
                        1);
        g_assert_cmpint(json_object_get_int_member(st, "flush_operations"),
                        ==, 1);
        json_node_unref(r);
    }
    ctx_stop(&c);
}

static uint64_t virtio_stat(Ctx *c, const char *key)
{
    JsonNode *r = qtest_qmp_assert_success(c->qts,
                                          "{'execute':'x-query-virtio'}");
    JsonObject *o = json_array_get_object_element(json_node_get_array(r), 0);
    uint64_t v = json_object_get_int_member(o, key);

    json_node_unref(r);
    return v;
}

/* A member of queue q's entry in x-query-virtio's "queues". */
static int64_t queue_stat(Ctx *c, unsigned q, const char *key)
{
    JsonNode *r = qtest_qmp_assert_success(c->qts,
                                          "{'execute':'x-query-virtio'}");
    JsonObject *o = json_array_get_object_element(json_node_get_array(r), 0);
    JsonArray *queues = json_object_get_array_member(o, "queues");
    int64_t v = -2;

    for (unsigned i = 0; i < json_array_get_length(queues); i++) {
        JsonObject *e = json_array_get_object_element(queues, i);

        if (json_object_get_int_member(e, "index") == q) {
            v = json_object_get_int_member(e, key);
        }
    }
    json_node_unref(r);
    g_assert_cmpint(v, !=, -2);
    return v;
}

static void test_msix_vector(unsigned vector)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint32_t len;

    ctx_start(&c);
    qpci_msix_enable(c.v->pdev);
    qpci_msix_set_vector(c.v->pdev, vector, MSI_TARGET, 0x4242);
    qpci_msix_mask_vector(c.v->pdev, vector, false);
    qtest_writel(c.qts, MSI_TARGET, 0);
    ctx_ready(&c, BASE_FEATURES, vector);
    buf = qguest_alloc(&c.alloc, 512, 4096);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 3, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    /* The interrupt travels through the main loop: wait for it. */
    for (int i = 0; i < 10000 && qtest_readl(c.qts, MSI_TARGET) != 0x4242;
         i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET), ==, 0x4242);

    /* Masked: the completion leaves the vector pending instead. */
    qtest_writel(c.qts, MSI_TARGET, 0);
    qpci_msix_mask_vector(c.v->pdev, vector, true);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 4, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    for (int i = 0; i < 10000 && !qpci_msix_pending(c.v->pdev, vector); i++) {
        g_usleep(1000);
    }
    g_assert_true(qpci_msix_pending(c.v->pdev, vector));
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET), ==, 0);
    qpci_msix_mask_vector(c.v->pdev, vector, false);
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET), ==, 0x4242);

    /* No KVM here: every kick trapped, every interrupt took the slow path. */
    g_assert_cmpuint(virtio_stat(&c, "kicks"), >=, 1);
    g_assert_cmpuint(virtio_stat(&c, "ioeventfds"), ==, 0);
    g_assert_cmpuint(virtio_stat(&c, "irqfds"), ==, 0);
    g_assert_cmpuint(virtio_stat(&c, "slow-path-interrupts"), ==, 2);
    /* Both requests went round: the driver's indices and ours agree. */
    g_assert_cmpint(queue_stat(&c, 0, "avail-idx"), ==, 2);
    g_assert_cmpint(queue_stat(&c, 0, "last-avail-idx"), ==, 2);
    g_assert_cmpint(queue_stat(&c, 0, "used-idx"), ==, 2);
    g_assert_cmpint(queue_stat(&c, 0, "device-used-idx"), ==, 2);
    g_assert_cmpint(queue_stat(&c, 0, "vector"), ==, vector);
    g_assert_cmpint(queue_stat(&c, 0, "size"), >, 0);
    ctx_stop(&c);
}

static void test_msix_completion(void)
{
    test_msix_vector(1);
}

static void test_msix_vector0(void)
{
    test_msix_vector(0);
}

/* Submits a chain that starts at head and returns (status, used len). */
static uint8_t submit_raw(Ctx *c, uint16_t head, uint64_t status,
                          uint32_t *len)
{
    uint32_t id;

    qtest_writeb(c->qts, status, 0xaa);
    qvirtqueue_make_available(c->vq, head);
    qvirtqueue_kick(c->vq);
    g_assert_true(qvirtqueue_wait_used(c->vq, &id, len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    return qtest_readb(c->qts, status);
}

/* Submits a chain the device cannot answer: NEEDS_RESET, then reset. */
static void submit_expect_reset(Ctx *c, uint16_t head)
{
    qvirtqueue_make_available(c->vq, head);
    qvirtqueue_kick(c->vq);
    for (int i = 0; i < 10000 && !(qvirtio_get_status(c->v) &
                                   VIRTIO_CONFIG_S_NEEDS_RESET); i++) {
        g_usleep(1000);
    }
    g_assert_true(qvirtio_get_status(c->v) & VIRTIO_CONFIG_S_NEEDS_RESET);
    g_assert_cmpuint(qvirtqueue_used_idx(c->vq), ==, c->vq->last_used);
    qvirtqueue_free(c->vq);
    c->vq = NULL;
    ctx_ready(c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
}

static void test_bad_requests(void)
{
    Ctx c = { 0 };
    uint64_t buf, hdr, status, itable;
    uint32_t len;

    ctx_start(&c);
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, 4096, 4096);

    /* Past the end, and straddling the end. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, IMG_SIZE / 512, buf,
                                 512, &len), ==, VIRTIO_BLK_S_IOERR);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_OUT, IMG_SIZE / 512 - 1,
                                 buf, 1024, &len), ==, VIRTIO_BLK_S_IOERR);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, UINT64_MAX, buf, 512,
                                 &len), ==, VIRTIO_BLK_S_IOERR);
    /* Not a multiple of the sector size; an unknown request type. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 0, buf, 100, &len), ==,
                     VIRTIO_BLK_S_IOERR);
    g_assert_cmpuint(blk_request(&c, 0x77, 0, buf, 512, &len), ==,
                     VIRTIO_BLK_S_UNSUPP);

    /* A header shorter than 16 bytes. */
    hdr = put_header(&c, VIRTIO_BLK_T_IN, 0);
    status = qguest_alloc(&c.alloc, 1, 1);
    qvirtqueue_set_desc(c.vq, 0, hdr, 8, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(c.vq, 1, status, 1, VRING_DESC_F_WRITE, 0);
    g_assert_cmpuint(submit_raw(&c, 0, status, &len), ==, VIRTIO_BLK_S_IOERR);

    /* Data pointing outside guest RAM (64 MiB) and at the APIC. */
    qvirtqueue_set_desc(c.vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qtest_writel(c.qts, hdr, VIRTIO_BLK_T_IN);
    qvirtqueue_set_desc(c.vq, 1, 0x10000000000ull, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    qvirtqueue_set_desc(c.vq, 2, status, 1, VRING_DESC_F_WRITE, 0);
    g_assert_cmpuint(submit_raw(&c, 0, status, &len), !=, VIRTIO_BLK_S_OK);
    qvirtqueue_set_desc(c.vq, 1, 0xfee00000ull, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    g_assert_cmpuint(submit_raw(&c, 0, status, &len), !=, VIRTIO_BLK_S_OK);

    /*
     * Chains without a usable end have no status byte, and no other byte
     * may stand in for it: the device asks for a reset instead.
     * A loop: 0 -> 1 -> 2 -> 1 ...
     */
    qvirtqueue_set_desc(c.vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(c.vq, 1, status, 1,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    qvirtqueue_set_desc(c.vq, 2, status, 1,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
    submit_expect_reset(&c, 0);

    /* next out of range; a readable descriptor after a writable one. */
    qvirtqueue_set_desc(c.vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(c.vq, 1, buf, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, QSIZE + 3);
    qvirtqueue_set_desc(c.vq, 2, status, 1, VRING_DESC_F_WRITE, 0);
    submit_expect_reset(&c, 0);
    qvirtqueue_set_desc(c.vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(c.vq, 1, status, 1,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    qvirtqueue_set_desc(c.vq, 2, buf, 512, 0, 0);
    submit_expect_reset(&c, 0);

    /* Indirect table: not negotiated here, so refused. */
    itable = qguest_alloc(&c.alloc, 48, 16);
    qvirtqueue_set_desc(c.vq, 0, itable, 48, VRING_DESC_F_INDIRECT, 0);
    submit_expect_reset(&c, 0);

    /* After all that, a good request still works. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 7, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c.qts, buf), ==, 7);

    /* A head index out of range breaks the ring: NEEDS_RESET. */
    qvirtqueue_make_available(c.vq, QSIZE + 1);
    qvirtqueue_kick(c.vq);
    for (int i = 0; i < 10000 && !(qvirtio_get_status(c.v) &
                                   VIRTIO_CONFIG_S_NEEDS_RESET); i++) {
        g_usleep(1000);
    }
    g_assert_true(qvirtio_get_status(c.v) & VIRTIO_CONFIG_S_NEEDS_RESET);
    /* Reset recovers the device. */
    qvirtqueue_free(c.vq);
    c.vq = NULL;
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 8, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c.qts, buf), ==, 8);
    ctx_stop(&c);
}

static void test_indirect(void)
{
    Ctx c = { 0 };
    uint64_t buf, hdr, status, itable;
    uint32_t len, id;

    ctx_start(&c);
    ctx_ready(&c, BASE_FEATURES | F(VIRTIO_RING_F_INDIRECT_DESC),
              VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, 512, 4096);
    hdr = put_header(&c, VIRTIO_BLK_T_IN, 21);
    status = qguest_alloc(&c.alloc, 1, 1);
    itable = qguest_alloc(&c.alloc, 48, 16);
    qtest_writeq(c.qts, itable, hdr);
    qtest_writel(c.qts, itable + 8, 16);
    qtest_writew(c.qts, itable + 12, VRING_DESC_F_NEXT);
    qtest_writew(c.qts, itable + 14, 1);
    qtest_writeq(c.qts, itable + 16, buf);
    qtest_writel(c.qts, itable + 24, 512);
    qtest_writew(c.qts, itable + 28, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT);
    qtest_writew(c.qts, itable + 30, 2);
    qtest_writeq(c.qts, itable + 32, status);
    qtest_writel(c.qts, itable + 40, 1);
    qtest_writew(c.qts, itable + 44, VRING_DESC_F_WRITE);
    qtest_writew(c.qts, itable + 46, 0);
    qvirtqueue_set_desc(c.vq, 5, itable, 48, VRING_DESC_F_INDIRECT, 0);
    qvirtqueue_make_available(c.vq, 5);
    qvirtqueue_kick(c.vq);
    g_assert_true(qvirtqueue_wait_used(c.vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, 5);
    g_assert_cmpuint(len, ==, 513);
    g_assert_cmpuint(qtest_readb(c.qts, status), ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c.qts, buf), ==, 21);

    /* A nested indirect descriptor: a chain without an end, refused. */
    qtest_writew(c.qts, itable + 28, VRING_DESC_F_INDIRECT);
    qtest_writel(c.qts, itable + 24, 48);
    submit_expect_reset(&c, 5);
    ctx_stop(&c);
}

static void test_read_only(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint32_t len;
    uint8_t before[512], after[512];

    ctx_start_args(&c, NULL, ",read-only=on", NULL);
    g_assert_true(qvirtio_device_features(c.v) & F(VIRTIO_BLK_F_RO));
    ctx_ready(&c, BASE_FEATURES | F(VIRTIO_BLK_F_RO), VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, 512, 4096);
    g_assert_cmpint(pread(c.img_fd, before, 512, 0), ==, 512);
    qtest_memset(c.qts, buf, 0xee, 512);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_OUT, 0, buf, 512, &len), ==,
                     VIRTIO_BLK_S_IOERR);
    g_assert_cmpint(pread(c.img_fd, after, 512, 0), ==, 512);
    g_assert_cmpmem(before, 512, after, 512);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 0, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    ctx_stop(&c);
}

static void test_direct_unaligned(void)
{
    Ctx c = { 0 };
    const char *dir = g_getenv("G_TEST_BUILDDIR");
    uint64_t buf;
    uint32_t len;
    uint8_t data[512], check[512];

    ctx_start_args(&c, dir, ",cache.direct=on", NULL);
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    /* A buffer at an odd address goes through the bounce buffer. */
    buf = qguest_alloc(&c.alloc, 2048, 4096) + 3;
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = 0xc0 ^ i;
    }
    qtest_memwrite(c.qts, buf, data, sizeof(data));
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_OUT, 33, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_cmpint(pread(c.img_fd, check, 512, 33 * 512), ==, 512);
    g_assert_cmpmem(data, 512, check, 512);
    qtest_memset(c.qts, buf, 0, 512);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 33, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    qtest_memread(c.qts, buf, check, 512);
    g_assert_cmpmem(data, 512, check, 512);
    {
        JsonNode *r = qtest_qmp_assert_success(c.qts,
                                              "{'execute':'query-block'}");
        JsonObject *ins = json_object_get_object_member(
            json_array_get_object_element(json_node_get_array(r), 0),
            "inserted");

        g_assert_true(json_object_get_boolean_member(
            json_object_get_object_member(ins, "cache"), "direct"));
        json_node_unref(r);
    }
    ctx_stop(&c);
}

static void test_reset_mid_io(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint32_t len;

    ctx_start(&c);
    for (int round = 0; round < 3; round++) {
        ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
        buf = qguest_alloc(&c.alloc, 4096 * 5, 4096);
        /* Five requests in flight, then reset at once. */
        for (int i = 0; i < 5; i++) {
            uint64_t hdr = put_header(&c, VIRTIO_BLK_T_IN, i * 8);
            uint64_t st = qguest_alloc(&c.alloc, 1, 1);
            uint16_t head = qvirtqueue_add(c.vq, hdr, 16, false, true);

            qvirtqueue_add(c.vq, buf + i * 4096, 4096, true, true);
            qvirtqueue_add(c.vq, st, 1, true, false);
            qvirtqueue_make_available(c.vq, head);
        }
        qvirtqueue_kick(c.vq);
        qvirtio_reset(c.v);
        qvirtqueue_free(c.vq);
        c.vq = NULL;
    }
    /* The device works after the resets. */
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, 512, 4096);
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_IN, 9, buf, 512, &len), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c.qts, buf), ==, 9);
    /* A system reset with the queue live, too. */
    qtest_qmp_assert_success(c.qts, "{'execute':'system_reset'}");
    g_assert_cmpuint(qvirtio_get_status(c.v), ==, 0);
    ctx_stop(&c);
}

static void test_query_nodes(void)
{
    Ctx c = { 0 };
    JsonNode *r;
    JsonArray *a;
    bool seen = false;

    ctx_start(&c);
    r = qtest_qmp_assert_success(c.qts,
                                 "{'execute':'query-named-block-nodes',"
                                 " 'arguments':{'flat':true}}");
    a = json_node_get_array(r);
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);

        if (!strcmp(json_object_get_string_member(o, "node-name"),
                     "disk0")) {
            seen = true;
            g_assert_cmpstr(json_object_get_string_member(o, "drv"), ==,
                            "file");
            g_assert_cmpstr(json_object_get_string_member(o, "file"), ==,
                            c.img);
            g_assert_cmpint(json_object_get_int_member(
                json_object_get_object_member(o, "image"), "virtual-size"),
                ==, IMG_SIZE);
        }
    }
    g_assert_true(seen);
    json_node_unref(r);
    r = qtest_qmp_assert_success(c.qts, "{'execute':'query-block'}");
    a = json_node_get_array(r);
    g_assert_cmpuint(json_array_get_length(a), ==, 1);
    g_assert_cmpstr(json_object_get_string_member(
        json_array_get_object_element(a, 0), "qdev"), ==,
        "/machine/peripheral/vblk0/virtio-backend");
    json_node_unref(r);
    ctx_stop(&c);
}

static bool qom_has_child(QTestState *qts, const char *path, const char *name)
{
    JsonNode *r = qtest_qmp_assert_success(qts, "{'execute':'qom-list',"
                                           " 'arguments':{'path':'%s'}}",
                                           path);
    JsonArray *a = json_node_get_array(r);
    bool found = false;

    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);

        found |= !strcmp(json_object_get_string_member(o, "name"), name) &&
                 g_str_has_prefix(json_object_get_string_member(o, "type"),
                                  "child<");
    }
    json_node_unref(r);
    return found;
}

/*
 * The command line libvirt 9.0 writes for <disk type='file'> with
 * <driver type='raw' cache='writethrough'/> and <boot order='1'/>: a
 * "file" node, a "raw" node on it, and -device with bootindex and
 * write-cache.  query-block and query-blockstats name the device by its
 * "virtio-backend" child, the path libvirt looks disks up by.
 */
static void test_libvirt_shapes(void)
{
    Ctx c = { 0 };
    g_autofree char *dev = NULL;
    uint8_t data[512], check[512];
    const char *qdev = "/machine/peripheral/virtio-disk0/virtio-backend";
    JsonNode *r;
    JsonObject *o;
    uint64_t buf;
    uint32_t len;

    c.img = make_image(g_get_tmp_dir());
    c.img_fd = open(c.img, O_RDWR);
    dev = g_strdup_printf(
        "-blockdev '{\"driver\":\"file\",\"filename\":\"%s\","
        "\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,"
        "\"discard\":\"unmap\",\"cache\":{\"direct\":false,"
        "\"no-flush\":false}}' "
        "-blockdev '{\"node-name\":\"libvirt-1-format\",\"read-only\":false,"
        "\"discard\":\"unmap\",\"cache\":{\"direct\":false,"
        "\"no-flush\":false},\"driver\":\"raw\","
        "\"file\":\"libvirt-1-storage\"}' "
        "-device '{\"driver\":\"virtio-blk-pci\",\"bus\":\"pci.0\","
        "\"addr\":\"0x4\",\"drive\":\"libvirt-1-format\","
        "\"id\":\"virtio-disk0\",\"bootindex\":1,\"write-cache\":\"off\"}'",
        c.img);
    c.qts = qtest_initf("-M pc -m 64M %s", dev);
    c.bus = qpci_new_pc(c.qts);
    c.v = qvirtio_pci_new(c.bus, BLK_DEVFN);
    c.alloc.next = 0x200000;
    c.alloc.end = 0x3000000;

    /* write-cache=off: no volatile cache, so no FLUSH to negotiate ... */
    g_assert_false(qvirtio_device_features(c.v) & F(VIRTIO_BLK_F_FLUSH));
    ctx_ready(&c, F(VIRTIO_F_VERSION_1), VIRTIO_MSI_NO_VECTOR);
    buf = qguest_alloc(&c.alloc, sizeof(data), 4096);
    memset(data, 0xc5, sizeof(data));
    qtest_memwrite(c.qts, buf, data, sizeof(data));
    /* ... and a write is in the file when it completes. */
    g_assert_cmpuint(blk_request(&c, VIRTIO_BLK_T_OUT, 7, buf, 512, &len),
                     ==, VIRTIO_BLK_S_OK);
    g_assert_cmpint(pread(c.img_fd, check, sizeof(check), 7 * 512), ==,
                    sizeof(check));
    g_assert_cmpmem(data, sizeof(data), check, sizeof(check));

    g_assert_true(qom_has_child(c.qts, "/machine/peripheral/virtio-disk0",
                                "virtio-backend"));
    r = qtest_qmp_assert_success(c.qts, "{'execute':'query-block'}");
    g_assert_cmpuint(json_array_get_length(json_node_get_array(r)), ==, 1);
    o = json_array_get_object_element(json_node_get_array(r), 0);
    g_assert_cmpstr(json_object_get_string_member(o, "qdev"), ==, qdev);
    g_assert_cmpstr(json_object_get_string_member(
        json_object_get_object_member(o, "inserted"), "node-name"), ==,
        "libvirt-1-format");
    json_node_unref(r);
    r = qtest_qmp_assert_success(c.qts, "{'execute':'query-blockstats'}");
    o = json_array_get_object_element(json_node_get_array(r), 0);
    g_assert_cmpstr(json_object_get_string_member(o, "qdev"), ==, qdev);
    g_assert_cmpint(json_object_get_int_member(
        json_object_get_object_member(o, "stats"), "wr_operations"), ==, 1);
    json_node_unref(r);
    ctx_stop(&c);
}

/* One DISCARD or WRITE_ZEROES segment; returns the status byte. */
static uint8_t blk_segment(Ctx *c, uint32_t type, uint64_t sector,
                           uint32_t n, uint32_t flags)
{
    uint64_t seg = qguest_alloc(&c->alloc, 16, 16);
    uint32_t len;

    qtest_writeq(c->qts, seg, sector);
    qtest_writel(c->qts, seg + 8, n);
    qtest_writel(c->qts, seg + 12, flags);
    return blk_request(c, type, 0, seg, 16, &len);
}

static bool image_range_is(int fd, uint64_t off, size_t len, uint8_t val)
{
    g_autofree uint8_t *buf = g_malloc(len);

    g_assert_cmpint(pread(fd, buf, len, off), ==, len);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != val) {
            return false;
        }
    }
    return true;
}

/* Whether the file system under dir can punch holes at all. */
static bool can_punch_holes(const char *dir)
{
    g_autofree char *p = g_build_filename(dir, "punch-XXXXXX", NULL);
    int fd = g_mkstemp(p);
    bool ok;

    g_assert_cmpint(fd, >=, 0);
    ok = ftruncate(fd, 65536) == 0 &&
         fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                   4096) == 0;
    close(fd);
    unlink(p);
    return ok;
}

static uint64_t blockstat(Ctx *c, const char *member)
{
    JsonNode *r = qtest_qmp_assert_success(c->qts,
                                           "{'execute':'query-blockstats'}");
    JsonArray *a = json_node_get_array(r);
    uint64_t v = 0;

    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *o = json_array_get_object_element(a, i);

        if (!strcmp(json_object_get_string_member(o, "node-name"),
                    "disk0")) {
            v = json_object_get_int_member(
                json_object_get_object_member(o, "stats"), member);
        }
    }
    json_node_unref(r);
    return v;
}

static void test_discard_write_zeroes(void)
{
    const uint64_t feat = BASE_FEATURES | F(VIRTIO_BLK_F_DISCARD) |
                          F(VIRTIO_BLK_F_WRITE_ZEROES);
    const uint64_t cap = IMG_SIZE / 512;
    Ctx c = { 0 };
    struct stat st0, st1;

    /* discard=unmap: DISCARD frees the blocks, the range reads zero. */
    ctx_start_args(&c, NULL, ",discard=unmap", NULL);
    g_assert_true(qvirtio_device_features(c.v) & F(VIRTIO_BLK_F_DISCARD));
    g_assert_true(qvirtio_device_features(c.v) &
                  F(VIRTIO_BLK_F_WRITE_ZEROES));
    g_assert_cmpuint(qvirtio_config_readl(c.v, offsetof(struct
                     virtio_blk_config, max_discard_seg)), ==, 16);
    g_assert_cmpuint(qvirtio_config_readl(c.v, offsetof(struct
                     virtio_blk_config, discard_sector_alignment)), ==, 8);
    g_assert_cmpuint(qvirtio_config_readl(c.v, offsetof(struct
                     virtio_blk_config, max_discard_sectors)), >=, cap);
    g_assert_cmpuint(qvirtio_config_readb(c.v, offsetof(struct
                     virtio_blk_config, write_zeroes_may_unmap)), ==, 1);
    ctx_ready(&c, feat, VIRTIO_MSI_NO_VECTOR);
    g_assert_cmpint(fstat(c.img_fd, &st0), ==, 0);
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_DISCARD, 2048, 2048, 0), ==,
                     VIRTIO_BLK_S_OK);
    if (can_punch_holes(g_get_tmp_dir())) {
        g_assert_true(image_range_is(c.img_fd, 2048 * 512, 1 << 20, 0));
        g_assert_cmpint(fstat(c.img_fd, &st1), ==, 0);
        g_assert_cmpint(st1.st_blocks, <, st0.st_blocks);
        g_assert_cmpuint(st1.st_size, ==, IMG_SIZE);
    }
    g_assert_cmpuint(blockstat(&c, "unmap_operations"), ==, 1);
    g_assert_cmpuint(blockstat(&c, "unmap_bytes"), ==, 1 << 20);
    /* The sector before the range is untouched. */
    g_assert_false(image_range_is(c.img_fd, 2047 * 512, 512, 0));
    /* WRITE_ZEROES with unmap, at the very end of the disk. */
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_WRITE_ZEROES, cap - 8, 8,
                                 VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_true(image_range_is(c.img_fd, (cap - 8) * 512, 4096, 0));
    /* The guest got it wrong: out of range, unmap on DISCARD, flags. */
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_DISCARD, cap - 7, 8, 0), ==,
                     VIRTIO_BLK_S_IOERR);
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_DISCARD, 0, 8,
                                 VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP), ==,
                     VIRTIO_BLK_S_UNSUPP);
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_WRITE_ZEROES, 0, 8, 4), ==,
                     VIRTIO_BLK_S_UNSUPP);
    g_assert_false(image_range_is(c.img_fd, 0, 512, 0));
    ctx_stop(&c);

    /* Default discard=ignore: DISCARD succeeds, data stays (as QEMU). */
    c = (Ctx) { 0 };
    ctx_start(&c);
    g_assert_cmpuint(qvirtio_config_readb(c.v, offsetof(struct
                     virtio_blk_config, write_zeroes_may_unmap)), ==, 0);
    ctx_ready(&c, feat, VIRTIO_MSI_NO_VECTOR);
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_DISCARD, 16, 8, 0), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_false(image_range_is(c.img_fd, 16 * 512, 512, 0));
    /* WRITE_ZEROES still zeroes (written, not freed). */
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_WRITE_ZEROES, 16, 8,
                                 VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP), ==,
                     VIRTIO_BLK_S_OK);
    g_assert_true(image_range_is(c.img_fd, 16 * 512, 4096, 0));
    ctx_stop(&c);

    /* Not negotiated, and not offered: UNSUPP, nothing changes. */
    c = (Ctx) { 0 };
    ctx_start_args(&c, NULL, NULL, ",discard=off,write-zeroes=off");
    g_assert_false(qvirtio_device_features(c.v) & F(VIRTIO_BLK_F_DISCARD));
    g_assert_false(qvirtio_device_features(c.v) &
                   F(VIRTIO_BLK_F_WRITE_ZEROES));
    ctx_ready(&c, BASE_FEATURES, VIRTIO_MSI_NO_VECTOR);
    g_assert_cmpuint(blk_segment(&c, VIRTIO_BLK_T_WRITE_ZEROES, 16, 8, 0), ==,
                     VIRTIO_BLK_S_UNSUPP);
    g_assert_false(image_range_is(c.img_fd, 16 * 512, 512, 0));
    ctx_stop(&c);

    /* Read-only: neither is offered. */
    c = (Ctx) { 0 };
    ctx_start_args(&c, NULL, ",read-only=on", NULL);
    g_assert_false(qvirtio_device_features(c.v) & F(VIRTIO_BLK_F_DISCARD));
    ctx_stop(&c);
}

static void test_cmdline_errors(void)
{
    g_autofree char *img = make_image(g_get_tmp_dir());
    g_autofree char *a = NULL;

    qtest_assert_start_fails("-M pc -accel qtest -device virtio-blk-pci",
                             "drive property not set");
    qtest_assert_start_fails("-M pc -accel qtest "
                             "-device virtio-blk-pci,drive=nope",
                             "drive 'nope' not found");
    qtest_assert_start_fails("-M pc -accel qtest "
                             "-blockdev driver=file,node-name=x",
                             "Parameter 'filename' is missing");
    qtest_assert_start_fails("-M pc -accel qtest -blockdev "
                             "driver=file,filename=/nonexistent/img,"
                             "node-name=x",
                             "Could not open '/nonexistent/img'");
    a = g_strdup_printf("-M pc -accel qtest -drive file=%s,if=ide,id=d", img);
    qtest_assert_start_fails(a, "-drive");
    g_free(a);
    a = g_strdup_printf("-M pc -accel qtest -drive file=%s,if=none,id=d,"
                        "format=vmdk", img);
    qtest_assert_start_fails(a, "Unknown driver 'vmdk'");
    g_free(a);
    /* A raw file opened as qcow2: QEMU's message. */
    a = g_strdup_printf("-M pc -accel qtest -drive file=%s,if=none,id=d,"
                        "format=qcow2", img);
    qtest_assert_start_fails(a, "Image is not in qcow2 format");
    g_free(a);
    a = g_strdup_printf("-M pc -accel qtest -drive file=%s,if=none,id=d,"
                        "format=raw,discard=sometimes", img);
    qtest_assert_start_fails(a, "Invalid discard option 'sometimes'");
    g_free(a);
    a = g_strdup_printf("-M pc -accel qtest -drive file=%s,if=none,id=d,"
                        "format=raw -device virtio-blk-pci,drive=d "
                        "-device virtio-blk-pci,drive=d", img);
    qtest_assert_start_fails(a, "Conflicts with use by");
    unlink(img);
}

static void test_drive_short_form(void)
{
    g_autofree char *img = make_image(g_get_tmp_dir());
    QTestState *qts = qtest_initf("-M pc -m 64M -drive file=%s,if=none,"
                                  "id=drv0,format=raw,readonly=on "
                                  "-device virtio-blk-pci,addr=05.0,"
                                  "drive=drv0", img);
    QPCIBus *bus = qpci_new_pc(qts);
    QVirtioPCI *v = qvirtio_pci_new(bus, QPCI_DEVFN(5, 0));
    JsonNode *r;

    g_assert_true(qvirtio_device_features(v) & F(VIRTIO_BLK_F_RO));
    r = qtest_qmp_assert_success(qts, "{'execute':'query-block'}");
    g_assert_cmpstr(json_object_get_string_member(
        json_array_get_object_element(json_node_get_array(r), 0), "device"),
        ==, "drv0");
    json_node_unref(r);
    qvirtio_pci_free(v);
    qpci_free_pc(bus);
    qtest_quit(qts);
    unlink(img);
}

static void test_hotplug(void)
{
    g_autofree char *img = make_image(g_get_tmp_dir());
    QTestState *qts = qtest_init("-M pc -m 64M");
    QPCIBus *bus = qpci_new_pc(qts);
    JsonObject *r;
    QPCIDevice *d;

    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'file','filename':'%s',"
                             "'node-name':'hp0'}}", img);
    /* A node nobody uses cannot be used twice, nor deleted while used. */
    r = qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                  "{'driver':'file','filename':'%s','node-name':'hp0'}}", img);
    g_assert_nonnull(qtest_qmp_error_desc(r));
    json_object_unref(r);
    qtest_qmp_assert_success(qts, "{'execute':'device_add','arguments':"
                             "{'driver':'virtio-blk-pci','drive':'hp0',"
                             "'id':'hpdisk','addr':'06.0'}}");
    d = qpci_device_find(bus, QPCI_DEVFN(6, 0));
    g_assert_nonnull(d);
    g_assert_cmphex(qpci_config_readw(d, PCI_DEVICE_ID), ==, 0x1042);
    qpci_device_free(d);
    r = qtest_qmp(qts, "{'execute':'blockdev-del','arguments':"
                  "{'node-name':'hp0'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "busy"));
    json_object_unref(r);
    qtest_qmp_device_del(qts, "hpdisk");
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-del','arguments':"
                             "{'node-name':'hp0'}}");
    r = qtest_qmp(qts, "{'execute':'query-named-block-nodes'}");
    g_assert_cmpuint(json_array_get_length(
        json_object_get_array_member(r, "return")), ==, 0);
    json_object_unref(r);
    qpci_free_pc(bus);
    qtest_quit(qts);
    unlink(img);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-blk/discovery", test_discovery);
    g_test_add_func("/virtio-blk/features/refused", test_features_refused);
    g_test_add_func("/virtio-blk/read-write-flush", test_read_write_flush);
    g_test_add_func("/virtio-blk/msix", test_msix_completion);
    g_test_add_func("/virtio-blk/msix-vector0", test_msix_vector0);
    g_test_add_func("/virtio-blk/bad-requests", test_bad_requests);
    g_test_add_func("/virtio-blk/indirect", test_indirect);
    g_test_add_func("/virtio-blk/read-only", test_read_only);
    g_test_add_func("/virtio-blk/direct-unaligned", test_direct_unaligned);
    g_test_add_func("/virtio-blk/reset-mid-io", test_reset_mid_io);
    g_test_add_func("/virtio-blk/query-nodes", test_query_nodes);
    g_test_add_func("/virtio-blk/discard-write-zeroes",
                    test_discard_write_zeroes);
    g_test_add_func("/virtio-blk/libvirt-shapes", test_libvirt_shapes);
    g_test_add_func("/virtio-blk/cmdline-errors", test_cmdline_errors);
    g_test_add_func("/virtio-blk/drive-short-form", test_drive_short_form);
    g_test_add_func("/virtio-blk/hotplug", test_hotplug);
    return g_test_run();
}
