/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device state across a migration between two Conduit processes (qtest):
 * a virtio-blk-pci whose driver set it up on the source goes on working
 * on the destination (features, rings, used index, a request submitted
 * just before the migration completes exactly once), its MSI-X table
 * and a pending bit move with it, and so do the CMOS RTC's RAM and the
 * UART's registers.  Also: a destination with a different device at the
 * same place refuses the state clearly.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/virtio.h"
#include "libqos/nvme.h"

#define BLK_DEVFN QPCI_DEVFN(4, 0)
#define IMG_SIZE (4 * 1024 * 1024)
#define QSIZE 16
#define TIMEOUT_US (30 * G_USEC_PER_SEC)
#define MSI_TARGET 0x100000ULL
#define F(bit) (1ull << (bit))
#define VECTOR 1

static char *tmpdir;

static const char *mig_status(QTestState *s)
{
    return qtest_migrate_status(s);
}

static void wait_done(QTestState *s)
{
    gint64 deadline = g_get_monotonic_time() + 120 * G_USEC_PER_SEC;
    const char *st;

    while (strcmp(st = mig_status(s), "completed")) {
        g_assert_cmpstr(st, !=, "failed");
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(20 * 1000);
    }
}

static QTestState *start(const char *img, const char *extra)
{
    return qtest_initf("-M pc -m 64M -serial null "
                       "-blockdev driver=file,filename=%s,node-name=disk0 "
                       "-device virtio-blk-pci,addr=04.0,drive=disk0,"
                       "id=vblk0 %s", img, extra ? extra : "");
}

static void migrate(QTestState *src, QTestState *dst, const char *uri)
{
    g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src,
        "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", uri);

    wait_done(src);
    wait_done(dst);
}

static uint64_t put_request(QTestState *qts, QVirtQueue *vq, QGuestAlloc *a,
                            uint32_t type, uint64_t sector, uint64_t data,
                            uint64_t *status)
{
    uint64_t hdr = qguest_alloc(a, 16, 16);
    uint16_t head;

    *status = qguest_alloc(a, 1, 1);
    qtest_writel(qts, hdr, type);
    qtest_writel(qts, hdr + 4, 0);
    qtest_writeq(qts, hdr + 8, sector);
    qtest_writeb(qts, *status, 0xaa);
    head = qvirtqueue_add(vq, hdr, 16, false, true);
    qvirtqueue_add(vq, data, 512, type == VIRTIO_BLK_T_IN, true);
    qvirtqueue_add(vq, *status, 1, true, false);
    qvirtqueue_make_available(vq, head);
    qvirtqueue_kick(vq);
    return head;
}

static void wait_used(QVirtQueue *vq, uint16_t head)
{
    uint32_t id, len;

    g_assert_true(qvirtqueue_wait_used(vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
}

static void wait_msi(QTestState *qts)
{
    for (int i = 0; i < 20000 && qtest_readl(qts, MSI_TARGET) != 0x4242;
         i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qtest_readl(qts, MSI_TARGET), ==, 0x4242);
}

static void test_virtio_blk_msix_isa(void)
{
    g_autofree char *img = g_build_filename(tmpdir, "disk.img", NULL);
    g_autofree char *sock = g_build_filename(tmpdir, "dev.sock", NULL);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    g_autofree char *inc = g_strdup_printf("-incoming %s", uri);
    g_autofree uint8_t *pattern = g_malloc(512);
    g_autofree uint8_t *got = g_malloc(512);
    QTestState *src, *dst;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *vq;
    QGuestAlloc alloc = { .next = 0x200000, .end = 0x3000000 };
    uint64_t data, data2, status, status2, rbuf, rstatus;
    uint16_t head, head2;
    int fd;

    fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(ftruncate(fd, IMG_SIZE), ==, 0);
    close(fd);

    src = start(img, NULL);
    bus = qpci_new_pc(src);
    v = qvirtio_pci_new(bus, BLK_DEVFN);
    qpci_msix_enable(v->pdev);
    qpci_msix_set_vector(v->pdev, VECTOR, MSI_TARGET, 0x4242);
    qpci_msix_mask_vector(v->pdev, VECTOR, false);
    g_assert_true(qvirtio_negotiate(v, F(VIRTIO_F_VERSION_1) |
                                       F(VIRTIO_BLK_F_FLUSH)));
    vq = qvirtqueue_setup(v, &alloc, 0, QSIZE, VECTOR);
    qvirtio_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);

    /* A first write, with its interrupt. */
    for (int i = 0; i < 512; i++) {
        pattern[i] = i * 13 + 1;
    }
    data = qguest_alloc(&alloc, 512, 512);
    qtest_memwrite(src, data, pattern, 512);
    qtest_writel(src, MSI_TARGET, 0);
    head = put_request(src, vq, &alloc, VIRTIO_BLK_T_OUT, 5, data, &status);
    wait_used(vq, head);
    wait_msi(src);
    g_assert_cmpuint(qtest_readb(src, status), ==, VIRTIO_BLK_S_OK);

    /* Masked, the next completion leaves the vector pending. */
    qtest_writel(src, MSI_TARGET, 0);
    qpci_msix_mask_vector(v->pdev, VECTOR, true);
    data2 = qguest_alloc(&alloc, 512, 512);
    qtest_memset(src, data2, 0x77, 512);
    /* Submitted just before the migration: completed exactly once. */
    head2 = put_request(src, vq, &alloc, VIRTIO_BLK_T_OUT, 9, data2,
                        &status2);

    /* ISA devices: a CMOS RAM byte and the UART scratch register. */
    qtest_outb(src, 0x70, 0x40);
    qtest_outb(src, 0x71, 0x5a);
    qtest_outb(src, 0x3f8 + 7, 0xa5);
    qtest_outb(src, 0x3f8 + 3, 0x1b);       /* LCR: 8 bits, even parity */
    /* The i8042: translation off, the keyboard's ID half read. */
    qtest_outb(src, 0x64, 0x60);
    qtest_outb(src, 0x60, 0x07);
    qtest_outb(src, 0x60, 0xf2);
    g_assert_cmphex(qtest_inb(src, 0x60), ==, 0xfa);

    dst = start(img, inc);
    migrate(src, dst, uri);
    qvirtio_pci_free(v);
    qpci_free_pc(bus);
    qtest_quit(src);

    /* The destination carries on from the migrated rings. */
    bus = qpci_new_pc(dst);
    v = qvirtio_pci_new(bus, BLK_DEVFN);
    vq->vdev = v;
    g_assert_cmphex(qvirtio_get_status(v), ==,
                    VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
                    VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
    g_assert_true(qpci_msix_enabled(v->pdev));
    g_assert_true(qpci_msix_masked(v->pdev, VECTOR));
    wait_used(vq, head2);
    g_assert_cmpuint(qtest_readb(dst, status2), ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qvirtqueue_used_idx(vq), ==, 2);
    /* The pending bit came along: unmasking delivers it here. */
    g_assert_true(qpci_msix_pending(v->pdev, VECTOR));
    g_assert_cmphex(qtest_readl(dst, MSI_TARGET), ==, 0);
    qpci_msix_mask_vector(v->pdev, VECTOR, false);
    wait_msi(dst);

    /* A new request on the destination reads what the source wrote. */
    qtest_writel(dst, MSI_TARGET, 0);
    rbuf = qguest_alloc(&alloc, 512, 512);
    head = put_request(dst, vq, &alloc, VIRTIO_BLK_T_IN, 5, rbuf, &rstatus);
    wait_used(vq, head);
    wait_msi(dst);
    g_assert_cmpuint(qtest_readb(dst, rstatus), ==, VIRTIO_BLK_S_OK);
    qtest_memread(dst, rbuf, got, 512);
    g_assert_cmpint(memcmp(got, pattern, 512), ==, 0);
    g_assert_cmpuint(qvirtqueue_used_idx(vq), ==, 3);

    qtest_outb(dst, 0x70, 0x40);
    g_assert_cmphex(qtest_inb(dst, 0x71), ==, 0x5a);
    g_assert_cmphex(qtest_inb(dst, 0x3f8 + 7), ==, 0xa5);
    g_assert_cmphex(qtest_inb(dst, 0x3f8 + 3), ==, 0x1b);
    g_assert_cmphex(qtest_inb(dst, 0x64) & 0x01, ==, 0x01);
    g_assert_cmphex(qtest_inb(dst, 0x60), ==, 0xab);
    g_assert_cmphex(qtest_inb(dst, 0x60), ==, 0x83);
    qtest_outb(dst, 0x64, 0x20);
    g_assert_cmphex(qtest_inb(dst, 0x60), ==, 0x07);

    /* The image holds both writes, once each. */
    fd = open(img, O_RDONLY);
    g_assert_cmpint(pread(fd, got, 512, 5 * 512), ==, 512);
    g_assert_cmpint(memcmp(got, pattern, 512), ==, 0);
    g_assert_cmpint(pread(fd, got, 512, 9 * 512), ==, 512);
    for (int i = 0; i < 512; i++) {
        g_assert_cmphex(got[i], ==, 0x77);
    }
    close(fd);

    qvirtqueue_free(vq);
    qvirtio_pci_free(v);
    qpci_free_pc(bus);
    qtest_quit(dst);
}

/* The destination has another device at the stream's path: refused. */
static void test_device_mismatch(void)
{
    g_autofree char *img = g_build_filename(tmpdir, "mm.img", NULL);
    g_autofree char *file = g_build_filename(tmpdir, "mm.state", NULL);
    g_autofree char *uri = g_strdup_printf("file:%s", file);
    QTestState *src, *dst;
    g_autoptr(JsonObject) r = NULL;
    int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);

    g_assert_cmpint(ftruncate(fd, IMG_SIZE), ==, 0);
    close(fd);
    src = start(img, NULL);
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(src,
            "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", uri);
    }
    wait_done(src);
    qtest_quit(src);

    /* No virtio-blk: its section is unknown here. */
    dst = qtest_initf("-M pc -m 64M -serial null -incoming defer");
    r = qtest_qmp(dst, "{'execute': 'migrate-incoming', 'arguments': "
                  "{'uri': '%s'}}", uri);
    g_assert_cmpint(WEXITSTATUS(qtest_wait_exit(dst)), ==, 1);
    g_assert_nonnull(strstr(qtest_get_stderr(dst), "unknown device"));
    qtest_quit(dst);
}

/*
 * A passed-through device without a migration driver (the server run
 * with --no-migration) blocks migration with QEMU's error, and the VM
 * runs on; unplugging it lifts the blocker.  enable-migration=off blocks
 * a device that could migrate.
 */
static void test_vfio_user_blocker(void)
{
    g_autofree char *file = g_build_filename(tmpdir, "blk.state", NULL);
    QNvmeServer srv;
    QTestState *s;
    g_autoptr(JsonObject) r = NULL;
    g_autoptr(JsonObject) st = NULL;

    qnvme_server_start(&srv, "--no-migration");
    s = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=nvme0,addr=04.0,"
                    "socket=%s", srv.sock);
    r = qtest_qmp(s, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'file:%s'}}", file);
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r),
                            "VFIO device doesn't support migration"));
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "vfio-user-pci"));
    {
        g_autoptr(JsonObject) q = qtest_qmp(s, "{'execute': 'query-migrate'}");
        JsonArray *why = json_object_get_array_member(
            json_object_get_object_member(q, "return"), "blocked-reasons");

        g_assert_cmpuint(json_array_get_length(why), ==, 1);
        g_assert_nonnull(strstr(json_array_get_string_element(why, 0),
                                "nvme0") ?: strstr(json_array_get_string_element(
                                    why, 0), "vfio-user-pci"));
    }
    st = qtest_qmp(s, "{'execute': 'query-status'}");
    g_assert_cmpstr(json_object_get_string_member(
        json_object_get_object_member(st, "return"), "status"), ==,
        "running");
    g_assert_cmpstr(mig_status(s), ==, "none");
    qtest_qmp_device_del(s, "nvme0");
    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(s,
            "{'execute': 'migrate', 'arguments': {'uri': 'file:%s'}}", file);
    }
    wait_done(s);
    qtest_quit(s);
    qnvme_server_stop(&srv);

    qnvme_server_start(&srv, NULL);
    s = qtest_initf("-M pc -m 64M -device vfio-user-pci,id=nvme0,addr=04.0,"
                    "socket=%s,enable-migration=off", srv.sock);
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'file:%s'}}", file);
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r),
                            "VFIO device doesn't support migration "
                            "(enable-migration=off)"));
    qtest_quit(s);
    qnvme_server_stop(&srv);

    /* enable-migration=on and a device without a driver: no realize. */
    qnvme_server_start(&srv, "--no-migration");
    s = qtest_initf("-M pc -m 64M");
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'device_add', 'arguments': {'driver': "
                  "'vfio-user-pci', 'id': 'nvme1', 'socket': '%s', "
                  "'enable-migration': 'on'}}", srv.sock);
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r),
                            "enable-migration=on"));
    qtest_quit(s);
    qnvme_server_stop(&srv);
}

int main(int argc, char **argv)
{
    g_autofree char *cmd = NULL;
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("migration-devices-XXXXXX", NULL);
    g_test_add_func("/migration/devices/virtio-blk-msix-isa",
                    test_virtio_blk_msix_isa);
    g_test_add_func("/migration/devices/mismatch", test_device_mismatch);
    g_test_add_func("/migration/devices/vfio-user-blocker",
                    test_vfio_user_blocker);
    ret = g_test_run();
    cmd = g_strdup_printf("rm -rf %s", tmpdir);
    if (system(cmd)) {
        /* best effort */
    }
    return ret;
}
