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


static JsonNode *qmp_ok(QTestState *qts, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);
static JsonNode *qmp_ok(QTestState *qts, const char *fmt, ...)
{
    va_list ap;
    JsonObject *r;
    JsonNode *ret;

    va_start(ap, fmt);
    r = qtest_vqmp(qts, fmt, ap);
    va_end(ap);
    if (!json_object_has_member(r, "return")) {
        g_test_message("QMP error: %s", qtest_qmp_error_desc(r));
        g_assert_not_reached();
    }
    ret = json_node_copy(json_object_get_member(r, "return"));
    json_object_unref(r);
    return ret;
}

/* Waits for JOB_STATUS_CHANGE @status of job @id. */
static void wait_job_status(QTestState *qts, const char *id,
                            const char *status)
{
    for (;;) {
        JsonObject *ev = qtest_qmp_eventwait(qts, "JOB_STATUS_CHANGE");
        JsonObject *d = json_object_get_object_member(ev, "data");
        bool match = !strcmp(json_object_get_string_member(d, "id"), id) &&
                     !strcmp(json_object_get_string_member(d, "status"),
                             status);

        json_object_unref(ev);
        if (match) {
            return;
        }
    }
}

/* blockdev-create as libvirt runs it: job, concluded, no error, dismiss. */
static void create_job(QTestState *qts, const char *id, const char *options)
{
    JsonNode *r;
    JsonObject *job;

    json_node_unref(qmp_ok(qts, "{'execute': 'blockdev-create', 'arguments':"
                           " {'job-id': '%s', 'options': %s}}", id, options));
    wait_job_status(qts, id, "concluded");
    r = qmp_ok(qts, "{'execute': 'query-jobs'}");
    job = json_array_get_object_element(json_node_get_array(r), 0);
    g_assert_cmpstr(json_object_get_string_member(job, "id"), ==, id);
    g_assert_cmpstr(json_object_get_string_member(job, "type"), ==,
                    "create");
    g_assert_cmpstr(json_object_get_string_member(job, "status"), ==,
                    "concluded");
    if (json_object_has_member(job, "error")) {
        g_test_message("job error: %s",
                       json_object_get_string_member(job, "error"));
        g_assert_not_reached();
    }
    json_node_unref(r);
    json_node_unref(qmp_ok(qts, "{'execute': 'job-dismiss', 'arguments': "
                           "{'id': '%s'}}", id));
    wait_job_status(qts, id, "null");
}

static JsonObject *find_node(JsonArray *nodes, const char *name)
{
    for (guint i = 0; i < json_array_get_length(nodes); i++) {
        JsonObject *n = json_array_get_object_element(nodes, i);

        if (!strcmp(json_object_get_string_member(n, "node-name"), name)) {
            return n;
        }
    }
    return NULL;
}

/*
 * libvirt's snapshot-create-as --disk-only on a running guest with a
 * -blockdev qcow2 disk (JSON, backing null): blockdev-create of the
 * overlay's file and qcow2 (jobs), blockdev-add of both with backing
 * null, transaction blockdev-snapshot.  The guest's writes after it go
 * to the overlay; the base keeps what was written before.
 */
static void test_snapshot_libvirt_flow(void)
{
    g_autofree char *base = path("snap-base.qcow2");
    g_autofree char *ov = path("snap-overlay.qcow2");
    g_autofree char *args = NULL;
    g_autofree char *opts = NULL;
    uint8_t a[4096], b[4096], got[4096];
    JsonNode *r;
    JsonObject *top, *img, *bimg;
    Ctx c = { 0 };

    g_assert_cmpint(run("qemu-img create -q -f qcow2 %s 16M", base), ==, 0);
    args = g_strdup_printf(
        "-blockdev '{\"driver\":\"file\",\"filename\":\"%s\","
        "\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,"
        "\"discard\":\"unmap\"}' "
        "-blockdev '{\"node-name\":\"libvirt-1-format\",\"read-only\":false,"
        "\"driver\":\"qcow2\",\"file\":\"libvirt-1-storage\","
        "\"backing\":null}' "
        "-device virtio-blk-pci,addr=04.0,drive=libvirt-1-format,"
        "id=virtio-disk0", base);
    ctx_start(&c, args);
    ctx_ready(&c, BASE_FEATURES);
    memset(a, 0xa1, sizeof(a));
    memset(b, 0xb2, sizeof(b));
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_OUT, 8, a, 4096), ==, 0);

    opts = g_strdup_printf("{'driver': 'file', 'filename': '%s', 'size': 0}",
                           ov);
    create_job(c.qts, "create-libvirt-2-storage", opts);
    json_node_unref(qmp_ok(c.qts, "{'execute': 'blockdev-add', 'arguments': "
                           "{'driver': 'file', 'filename': '%s', "
                           "'node-name': 'libvirt-2-storage', "
                           "'auto-read-only': true, 'discard': 'unmap'}}",
                           ov));
    g_free(opts);
    opts = g_strdup_printf("{'driver': 'qcow2', 'file': 'libvirt-2-storage',"
                           " 'size': 16777216, 'backing-file': '%s', "
                           "'backing-fmt': 'qcow2'}", base);
    create_job(c.qts, "create-libvirt-2-format", opts);
    json_node_unref(qmp_ok(c.qts, "{'execute': 'blockdev-add', 'arguments': "
                           "{'node-name': 'libvirt-2-format', 'read-only': "
                           "false, 'driver': 'qcow2', 'file': "
                           "'libvirt-2-storage', 'backing': null}}"));
    json_node_unref(qmp_ok(c.qts, "{'execute': 'transaction', 'arguments': "
                           "{'actions': [{'type': 'blockdev-snapshot', "
                           "'data': {'node': 'libvirt-1-format', 'overlay': "
                           "'libvirt-2-format'}}]}}"));
    /* The guest keeps running; writes land in the overlay. */
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_OUT, 16, b, 4096), ==, 0);
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_IN, 8, got, 4096), ==, 0);
    g_assert_cmpmem(got, 4096, a, 4096);
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_IN, 16, got, 4096), ==, 0);
    g_assert_cmpmem(got, 4096, b, 4096);
    /* query-block: the overlay on top, the base as its backing image. */
    r = qmp_ok(c.qts, "{'execute': 'query-block'}");
    top = json_object_get_object_member(
        json_array_get_object_element(json_node_get_array(r), 0),
        "inserted");
    g_assert_cmpstr(json_object_get_string_member(top, "node-name"), ==,
                    "libvirt-2-format");
    g_assert_cmpstr(json_object_get_string_member(top, "drv"), ==, "qcow2");
    g_assert_cmpint(json_object_get_int_member(top, "backing_file_depth"),
                    ==, 1);
    g_assert_cmpstr(json_object_get_string_member(top, "backing_file"), ==,
                    base);
    img = json_object_get_object_member(top, "image");
    g_assert_cmpstr(json_object_get_string_member(img, "format"), ==,
                    "qcow2");
    g_assert_cmpint(json_object_get_int_member(img, "virtual-size"), ==,
                    16 << 20);
    g_assert_cmpint(json_object_get_int_member(img, "cluster-size"), ==,
                    65536);
    g_assert_true(json_object_has_member(img, "actual-size"));
    bimg = json_object_get_object_member(img, "backing-image");
    g_assert_nonnull(bimg);
    g_assert_cmpstr(json_object_get_string_member(bimg, "filename"), ==,
                    base);
    g_assert_cmpstr(json_object_get_string_member(
        json_object_get_object_member(img, "format-specific"), "type"), ==,
        "qcow2");
    json_node_unref(r);
    /* The other verbs refuse sensibly. */
    {
        JsonObject *e = qtest_qmp(c.qts, "{'execute': 'blockdev-snapshot', "
                                  "'arguments': {'node': 'libvirt-1-format', "
                                  "'overlay': 'libvirt-2-format'}}");

        g_assert_nonnull(qtest_qmp_error_desc(e));
        json_object_unref(e);
        e = qtest_qmp(c.qts, "{'execute': 'blockdev-create', 'arguments': "
                      "{'job-id': 'j', 'options': {'driver': 'vmdk'}}}");
        g_assert_nonnull(strstr(qtest_qmp_error_desc(e), "vmdk"));
        json_object_unref(e);
    }
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_FLUSH, 0, NULL, 0), ==, 0);
    ctx_stop(&c);
    g_assert_cmpint(run("qemu-img check -q %s", ov), ==, 0);
    g_assert_cmpint(run("qemu-img check -q %s", base), ==, 0);
    /* The base has sector 8's data but not sector 16's. */
    g_assert_cmpint(run("qemu-io -f qcow2 -r -c 'read -P 0xa1 4096 4096' "
                        "-c 'read -P 0 8192 4096' %s > %s.out 2>&1 && "
                        "! grep -q verification %s.out && "
                        "[ $(grep -c 'read 4096/4096' %s.out) = 2 ]", base,
                        base, base, base), ==, 0);
    g_assert_cmpint(run("qemu-io -f qcow2 -r -c 'read -P 0xb2 8192 4096' "
                        "%s > %s.out 2>&1 && ! grep -q verification %s.out "
                        "&& grep -q 'read 4096/4096' %s.out", ov, ov, ov, ov),
                    ==, 0);
    g_assert_cmpint(run("qemu-img info %s | grep -q 'backing file: %s'", ov,
                        base), ==, 0);
}

/* blockdev-snapshot-sync in a transaction: Conduit makes the overlay. */
static void test_snapshot_sync(void)
{
    g_autofree char *base = path("sync-base.raw");
    g_autofree char *ov = path("sync-overlay.qcow2");
    g_autofree char *args = NULL;
    uint8_t a[512], got[512];
    JsonNode *r;
    JsonObject *n;
    Ctx c = { 0 };

    g_assert_cmpint(run("truncate -s 8M %s", base), ==, 0);
    args = g_strdup_printf("-drive file=%s,if=none,id=drive0,format=raw "
                           "-device virtio-blk-pci,addr=04.0,drive=drive0",
                           base);
    ctx_start(&c, args);
    ctx_ready(&c, BASE_FEATURES);
    json_node_unref(qmp_ok(c.qts, "{'execute': 'transaction', 'arguments': "
                           "{'actions': [{'type': 'blockdev-snapshot-sync', "
                           "'data': {'device': 'drive0', 'snapshot-file': "
                           "'%s', 'snapshot-node-name': 'snap0', 'format': "
                           "'qcow2'}}]}}", ov));
    memset(a, 0x3c, sizeof(a));
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_OUT, 3, a, 512), ==, 0);
    g_assert_cmpuint(blk_rw(&c, VIRTIO_BLK_T_IN, 3, got, 512), ==, 0);
    g_assert_cmpmem(got, 512, a, 512);
    r = qmp_ok(c.qts, "{'execute': 'query-named-block-nodes'}");
    n = find_node(json_node_get_array(r), "snap0");
    g_assert_nonnull(n);
    g_assert_cmpstr(json_object_get_string_member(n, "drv"), ==, "qcow2");
    g_assert_cmpint(json_object_get_int_member(n, "backing_file_depth"), ==,
                    1);
    json_node_unref(r);
    /* query-block still names the drive, now with the overlay. */
    r = qmp_ok(c.qts, "{'execute': 'query-block'}");
    n = json_array_get_object_element(json_node_get_array(r), 0);
    g_assert_cmpstr(json_object_get_string_member(n, "device"), ==, "drive0");
    g_assert_cmpstr(json_object_get_string_member(
        json_object_get_object_member(n, "inserted"), "node-name"), ==,
        "snap0");
    json_node_unref(r);
    ctx_stop(&c);
    g_assert_cmpint(run("qemu-img check -q %s", ov), ==, 0);
    /* the raw base is untouched: all zeroes */
    g_assert_cmpint(run("cmp -s -n 8388608 %s /dev/zero", base), ==, 0);
}

/* A failing action leaves everything as it was. */
static void test_transaction_atomic(void)
{
    g_autofree char *base = path("tx-base.qcow2");
    g_autofree char *ov = path("tx-ov.qcow2");
    g_autofree char *args = NULL;
    JsonObject *e;
    JsonNode *r;
    Ctx c = { 0 };

    g_assert_cmpint(run("qemu-img create -q -f qcow2 %s 4M", base), ==, 0);
    args = g_strdup_printf("-blockdev driver=qcow2,node-name=disk,"
                           "file.driver=file,file.filename=%s "
                           "-device virtio-blk-pci,addr=04.0,drive=disk",
                           base);
    ctx_start(&c, args);
    e = qtest_qmp(c.qts, "{'execute': 'transaction', 'arguments': "
                  "{'actions': [{'type': 'blockdev-snapshot-sync', 'data': "
                  "{'node-name': 'disk', 'snapshot-file': '%s', "
                  "'snapshot-node-name': 'ov1'}}, {'type': "
                  "'blockdev-snapshot', 'data': {'node': 'disk', "
                  "'overlay': 'nonexistent'}}]}}", ov);
    g_assert_cmpstr(qtest_qmp_error_class(e), ==, "GenericError");
    json_object_unref(e);
    r = qmp_ok(c.qts, "{'execute': 'query-named-block-nodes'}");
    g_assert_null(find_node(json_node_get_array(r), "ov1"));
    json_node_unref(r);
    r = qmp_ok(c.qts, "{'execute': 'query-block'}");
    g_assert_cmpstr(json_object_get_string_member(json_object_get_object_member(
        json_array_get_object_element(json_node_get_array(r), 0), "inserted"),
        "node-name"), ==, "disk");
    json_node_unref(r);
    ctx_stop(&c);
}

/* A sparse raw file reports its real allocation (domblkinfo). */
static void test_query_allocation(void)
{
    g_autofree char *img = path("sparse.raw");
    g_autofree char *args = NULL;
    JsonNode *r;
    JsonObject *n, *st;
    int64_t actual;
    QTestState *qts;

    g_assert_cmpint(run("truncate -s 1G %s && dd if=/dev/urandom of=%s "
                        "bs=64k count=4 conv=notrunc status=none", img, img),
                    ==, 0);
    args = g_strdup_printf("-M pc -m 64M -blockdev driver=file,filename=%s,"
                           "node-name=f -blockdev driver=raw,file=f,"
                           "node-name=r", img);
    qts = qtest_init(args);
    r = qmp_ok(qts, "{'execute': 'query-named-block-nodes', 'arguments': "
               "{'flat': true}}");
    n = json_object_get_object_member(find_node(json_node_get_array(r), "r"),
                                      "image");
    g_assert_cmpint(json_object_get_int_member(n, "virtual-size"), ==,
                    1 << 30);
    actual = json_object_get_int_member(n, "actual-size");
    g_assert_cmpint(actual, >=, 256 << 10);
    g_assert_cmpint(actual, <, 16 << 20);
    json_node_unref(r);
    r = qmp_ok(qts, "{'execute': 'query-blockstats', 'arguments': "
               "{'query-nodes': true}}");
    g_assert_cmpuint(json_array_get_length(json_node_get_array(r)), ==, 2);
    st = json_object_get_object_member(find_node(json_node_get_array(r), "f"),
                                       "stats");
    g_assert_true(json_object_has_member(st, "wr_highest_offset"));
    json_node_unref(r);
    qtest_quit(qts);
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
    g_test_add_func("/block/snapshot/libvirt-flow",
                    test_snapshot_libvirt_flow);
    g_test_add_func("/block/snapshot/sync", test_snapshot_sync);
    g_test_add_func("/block/snapshot/transaction-atomic",
                    test_transaction_atomic);
    g_test_add_func("/block/query/allocation", test_query_allocation);
    ret = g_test_run();
    run("rm -rf %s", tmpdir);
    return ret;
}
