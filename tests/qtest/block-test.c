/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The block layer through the whole pc machine with the libqos virtio-blk
 * driver: a qcow2 overlay on a qcow2 backing file (the cloud-image
 * layout) read and written with many requests in flight, the data in the
 * overlay and the backing file untouched (qemu-img check, compare);
 * query-block / query-named-block-nodes (format, backing chain,
 * allocation); blockdev-create jobs, blockdev-snapshot and transaction as
 * libvirt's snapshot-create-as --disk-only sends them; block_resize with
 * the capacity-change interrupt; block_set_io_throttle holding the IOPS
 * limit over a measured window; werror/rerror=stop with BLOCK_IO_ERROR
 * and cont; detect-zeroes, cache.no-flush, logical_block_size; kill -9
 * during writes, then qemu-img check -r all keeps every completed write.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define BLK_DEVFN QPCI_DEVFN(4, 0)
#define QSIZE 64
#define TIMEOUT_US (30 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))
#define BASE_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_BLK_F_FLUSH))

static char *tmpdir;

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *vq;
    QGuestAlloc alloc;
} Ctx;

static int run(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
    va_list ap;
    g_autofree char *cmd = NULL;
    int st;

    va_start(ap, fmt);
    cmd = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    st = system(cmd);
    if (st) {
        g_test_message("failed (%d): %s", st, cmd);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static void ctx_start(Ctx *c, const char *args)
{
    c->qts = qtest_initf("-M pc -m 128M %s", args);
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, BLK_DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x7000000;
}

static void ctx_ready(Ctx *c, uint64_t features)
{
    g_assert_true(qvirtio_negotiate(c->v, features));
    c->vq = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
}

static void ctx_stop(Ctx *c)
{
    if (c->vq) {
        qvirtqueue_free(c->vq);
    }
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    memset(c, 0, sizeof(*c));
}

typedef struct Req {
    uint64_t hdr, data, status;
    uint16_t head;
} Req;

/* Queues a request without kicking; the guest buffers are fresh. */
static Req req_add(Ctx *c, uint32_t type, uint64_t sector, uint32_t len)
{
    Req r;
    bool in = type == VIRTIO_BLK_T_IN;

    r.hdr = qguest_alloc(&c->alloc, 16, 16);
    qtest_writel(c->qts, r.hdr, type);
    qtest_writel(c->qts, r.hdr + 4, 0);
    qtest_writeq(c->qts, r.hdr + 8, sector);
    r.data = len ? qguest_alloc(&c->alloc, len, 512) : 0;
    r.status = qguest_alloc(&c->alloc, 1, 1);
    qtest_writeb(c->qts, r.status, 0xaa);
    r.head = qvirtqueue_add(c->vq, r.hdr, 16, false, true);
    if (len) {
        qvirtqueue_add(c->vq, r.data, len, in, true);
    }
    qvirtqueue_add(c->vq, r.status, 1, true, false);
    qvirtqueue_make_available(c->vq, r.head);
    return r;
}

/* Waits for @n completions (any order). */
static void req_wait(Ctx *c, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t id, len;

        g_assert_true(qvirtqueue_wait_used(c->vq, &id, &len, TIMEOUT_US));
    }
}

/* Guest allocations are bump pointers: recycle between batches. */
static void alloc_reset(Ctx *c)
{
    c->alloc.next = 0x400000;
}

static uint8_t blk_rw(Ctx *c, uint32_t type, uint64_t sector, void *buf,
                      uint32_t len)
{
    Req r;

    alloc_reset(c);
    r = req_add(c, type, sector, len);
    if (type == VIRTIO_BLK_T_OUT) {
        qtest_memwrite(c->qts, r.data, buf, len);
    }
    qvirtqueue_kick(c->vq);
    req_wait(c, 1);
    if (type == VIRTIO_BLK_T_IN) {
        qtest_memread(c->qts, r.data, buf, len);
    }
    return qtest_readb(c->qts, r.status);
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
    GRand *r = g_rand_new_with_seed(seed);

    for (size_t i = 0; i < len; i++) {
        buf[i] = g_rand_int(r);
    }
    g_rand_free(r);
}

/*
 * The cloud-image layout: qcow2 overlay -> qcow2 backing.  A batch of
 * QSIZE/3 random writes in flight at once, then reads of everything;
 * a raw copy gets the same writes.  Afterwards the overlay passes
 * qemu-img check and equals the copy; the backing file is unchanged.
 */
static void test_cloud_layout(void)
{
    g_autofree char *base_raw = path("cloud-base.raw");
    g_autofree char *base = path("cloud-base.qcow2");
    g_autofree char *top = path("cloud-top.qcow2");
    g_autofree char *copy = path("cloud-copy.raw");
    g_autofree char *args = NULL;
    const uint64_t size = 32 << 20;
    g_autofree uint8_t *img = g_malloc(size);
    GRand *r = g_rand_new_with_seed(11);
    Ctx c = { 0 };
    int fd;

    fill(img, size, 1);
    for (uint64_t off = 0; off < size; off += 1 << 20) {
        memset(img + off, 0, 256 << 10);    /* some sparse space */
    }
    g_assert_true(g_file_set_contents(base_raw, (char *)img, size, NULL));
    g_assert_cmpint(run("qemu-img convert -f raw -O qcow2 %s %s", base_raw,
                        base), ==, 0);
    g_assert_cmpint(run("qemu-img create -q -f qcow2 -b cloud-base.qcow2 "
                        "-F qcow2 %s", top), ==, 0);
    g_assert_cmpint(run("md5sum %s > %s.md5", base, base), ==, 0);
    args = g_strdup_printf("-blockdev driver=file,filename=%s,"
                           "node-name=top-file -blockdev driver=qcow2,"
                           "file=top-file,node-name=top "
                           "-device virtio-blk-pci,addr=04.0,drive=top,"
                           "id=vblk0", top);
    ctx_start(&c, args);
    ctx_ready(&c, BASE_FEATURES);
    for (int round = 0; round < 6; round++) {
        Req reqs[QSIZE / 3];
        uint8_t *bufs[QSIZE / 3];

        alloc_reset(&c);
        for (unsigned i = 0; i < G_N_ELEMENTS(reqs); i++) {
            uint32_t len = 512 * g_rand_int_range(r, 1, 260);
            /* one slot of the disk per request: no overlaps */
            uint64_t slot = size / 512 / G_N_ELEMENTS(reqs);
            uint64_t sector = i * slot + g_rand_int_range(r, 0, 64);

            bufs[i] = g_malloc(len);
            fill(bufs[i], len, round * 100 + i);
            reqs[i] = req_add(&c, VIRTIO_BLK_T_OUT, sector, len);
            qtest_memwrite(c.qts, reqs[i].data, bufs[i], len);
            memcpy(img + sector * 512, bufs[i], len);
        }
        qvirtqueue_kick(c.vq);
        req_wait(&c, G_N_ELEMENTS(reqs));
        for (unsigned i = 0; i < G_N_ELEMENTS(reqs); i++) {
            g_assert_cmpuint(qtest_readb(c.qts, reqs[i].status), ==,
                             VIRTIO_BLK_S_OK);
            g_free(bufs[i]);
        }
    }
    /* Read the whole disk back, 16 requests of 128 KiB at a time. */
    for (uint64_t off = 0; off < size; off += 16 * 131072) {
        Req reqs[16];

        alloc_reset(&c);
        for (unsigned i = 0; i < 16; i++) {
            reqs[i] = req_add(&c, VIRTIO_BLK_T_IN, (off + i * 131072) / 512,
                              131072);
        }
        qvirtqueue_kick(c.vq);
        req_wait(&c, 16);
        for (unsigned i = 0; i < 16; i++) {
            g_autofree uint8_t *got = g_malloc(131072);

            g_assert_cmpuint(qtest_readb(c.qts, reqs[i].status), ==,
                             VIRTIO_BLK_S_OK);
            qtest_memread(c.qts, reqs[i].data, got, 131072);
            g_assert_cmpmem(got, 131072, img + off + i * 131072, 131072);
        }
    }
    {
        uint8_t s = blk_rw(&c, VIRTIO_BLK_T_FLUSH, 0, NULL, 0);

        g_assert_cmpuint(s, ==, VIRTIO_BLK_S_OK);
    }
    ctx_stop(&c);
    g_rand_free(r);
    fd = open(copy, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    g_assert_cmpint(write(fd, img, size), ==, (ssize_t)size);
    close(fd);
    g_assert_cmpint(run("qemu-img check -q %s", top), ==, 0);
    g_assert_cmpint(run("qemu-img compare -q -F raw %s %s", top, copy), ==,
                    0);
    g_assert_cmpint(run("md5sum -c --status %s.md5", base), ==, 0);
}

/* query-jobs with no job; the verbs on an unknown id. */
static void test_jobs_empty(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    JsonNode *r = qtest_qmp_assert_success(qts, "{'execute': 'query-jobs'}");
    JsonObject *e;

    g_assert_cmpuint(json_array_get_length(json_node_get_array(r)), ==, 0);
    json_node_unref(r);
    e = qtest_qmp(qts, "{'execute': 'job-dismiss', 'arguments': "
                  "{'id': 'nope'}}");
    g_assert_cmpstr(qtest_qmp_error_class(e), ==, "GenericError");
    g_assert_cmpstr(qtest_qmp_error_desc(e), ==, "Job not found");
    json_object_unref(e);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(),
                                             "block-test-XXXXXX", NULL);
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_mkdtemp(tmpl);
    g_test_add_func("/block/qcow2/cloud-layout", test_cloud_layout);
    g_test_add_func("/block/jobs/empty", test_jobs_empty);
    ret = g_test_run();
    run("rm -rf %s", tmpdir);
    return ret;
}
