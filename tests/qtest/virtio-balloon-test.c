/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-balloon-pci with the libqos virtio driver, written from the
 * virtio 1.2 specification (5.5) and QEMU's QMP documentation: the
 * target set by "balloon" reaches num_pages with a configuration change,
 * the driver's "actual" becomes BALLOON_CHANGE and query-balloon, inflated
 * pages are really given back (they read as zero afterwards), the stats
 * queue feeds qom-get guest-stats and is polled at
 * guest-stats-polling-interval, and buffers the guest got wrong (pages
 * outside RAM, looping chains, a ring index that ran ahead) neither crash
 * nor wedge the device.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <linux/virtio_balloon.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/virtio.h"

#define DEVFN QPCI_DEVFN(4, 0)
#define RAM_SIZE (64ull << 20)
#define QSIZE 16
#define TIMEOUT_US (10 * G_USEC_PER_SEC)
#define F(bit) (1ull << (bit))
#define PAGE 4096ull
/* A page the tests write, balloon and check (above the allocator). */
#define VICTIM 0x3000000ull
#define qmp_ok(qts, ...) \
    json_node_unref(qtest_qmp_assert_success(qts, __VA_ARGS__))

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *inflate, *deflate, *stats;
    QGuestAlloc alloc;
} Ctx;

static void ctx_start(Ctx *c, const char *dev_opts)
{
    c->qts = qtest_initf("-M pc -m 64M -device virtio-balloon-pci,addr=04.0,"
                         "id=balloon0%s", dev_opts ? dev_opts : "");
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, DEVFN);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x2000000;
}

static void ctx_ready(Ctx *c, uint64_t features)
{
    g_assert_true(qvirtio_negotiate(c->v, F(VIRTIO_F_VERSION_1) | features));
    c->inflate = qvirtqueue_setup(c->v, &c->alloc, 0, QSIZE,
                                  VIRTIO_MSI_NO_VECTOR);
    c->deflate = qvirtqueue_setup(c->v, &c->alloc, 1, QSIZE,
                                  VIRTIO_MSI_NO_VECTOR);
    if (features & F(VIRTIO_BALLOON_F_STATS_VQ)) {
        c->stats = qvirtqueue_setup(c->v, &c->alloc, 2, QSIZE,
                                    VIRTIO_MSI_NO_VECTOR);
    }
    qvirtio_set_status(c->v, VIRTIO_CONFIG_S_ACKNOWLEDGE |
                       VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
                       VIRTIO_CONFIG_S_DRIVER_OK);
}

static void ctx_stop(Ctx *c)
{
    g_free(c->inflate);
    g_free(c->deflate);
    g_free(c->stats);
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
}

static uint8_t config_generation(Ctx *c)
{
    return qpci_io_readb(c->v->pdev, c->v->bar,
                         c->v->common + VIRTIO_PCI_COMMON_CFGGENERATION);
}

static void set_actual(Ctx *c, uint32_t pages)
{
    qpci_io_writel(c->v->pdev, c->v->bar,
                   c->v->device +
                   offsetof(struct virtio_balloon_config, actual), pages);
}

/* Puts pfns on vq as one buffer and waits for the device to return it. */
static void send_pfns(Ctx *c, QVirtQueue *vq, const uint32_t *pfns,
                      unsigned n)
{
    uint64_t buf = qguest_alloc(&c->alloc, 4 * n, 4);
    uint16_t head;
    uint32_t id;

    for (unsigned i = 0; i < n; i++) {
        qtest_writel(c->qts, buf + 4 * i, pfns[i]);
    }
    head = qvirtqueue_add(vq, buf, 4 * n, false, false);
    qvirtqueue_make_available(vq, head);
    qvirtqueue_kick(vq);
    g_assert_true(qvirtqueue_wait_used(vq, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
}

static int64_t x_query(Ctx *c, const char *member)
{
    JsonObject *r = qtest_qmp(c->qts, "{'execute':'x-query-balloon'}");
    int64_t v = json_object_get_int_member(
        json_object_get_object_member(r, "return"), member);

    json_object_unref(r);
    return v;
}

static void test_discovery(void)
{
    Ctx c = { 0 };
    uint64_t f;

    ctx_start(&c, NULL);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, PCI_VENDOR_ID), ==, 0x1af4);
    g_assert_cmphex(qpci_config_readw(c.v->pdev, PCI_DEVICE_ID), ==, 0x1045);
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_F_VERSION_1));
    g_assert_true(f & F(VIRTIO_BALLOON_F_STATS_VQ));
    g_assert_false(f & F(VIRTIO_BALLOON_F_DEFLATE_ON_OOM));
    g_assert_false(f & F(VIRTIO_BALLOON_F_REPORTING));
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 3);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 0), ==, 0);
    ctx_stop(&c);

    ctx_start(&c, ",deflate-on-oom=on,free-page-reporting=on");
    f = qvirtio_device_features(c.v);
    g_assert_true(f & F(VIRTIO_BALLOON_F_DEFLATE_ON_OOM));
    g_assert_true(f & F(VIRTIO_BALLOON_F_REPORTING));
    g_assert_cmpuint(qvirtio_num_queues(c.v), ==, 4);
    ctx_stop(&c);
}

static void test_no_balloon(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    JsonObject *r;

    r = qtest_qmp(qts, "{'execute':'balloon','arguments':{'value':1048576}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "DeviceNotActive");
    g_assert_cmpstr(qtest_qmp_error_desc(r), ==,
                    "No balloon device has been activated");
    json_object_unref(r);
    r = qtest_qmp(qts, "{'execute':'query-balloon'}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "DeviceNotActive");
    json_object_unref(r);
    qtest_quit(qts);
}

static void test_target_and_actual(void)
{
    Ctx c = { 0 };
    JsonObject *r, *ev;
    uint8_t gen;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_BALLOON_F_STATS_VQ));
    gen = config_generation(&c);
    /* Target 48 MiB of 64: the guest should give up 16 MiB. */
    qmp_ok(c.qts, "{'execute':'balloon','arguments':"
                             "{'value':%llu}}", 48ull << 20);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 0), ==, (16 << 20) / PAGE);
    g_assert_cmpuint(config_generation(&c), !=, gen);
    /* Nothing ballooned yet: the guest still has all its RAM. */
    r = qtest_qmp(c.qts, "{'execute':'query-balloon'}");
    g_assert_cmpint(json_object_get_int_member(
                        json_object_get_object_member(r, "return"), "actual"),
                    ==, RAM_SIZE);
    json_object_unref(r);

    /* The driver reports what it holds: BALLOON_CHANGE, query-balloon. */
    set_actual(&c, (16 << 20) / PAGE);
    ev = qtest_qmp_eventwait(c.qts, "BALLOON_CHANGE");
    g_assert_cmpint(json_object_get_int_member(
                        json_object_get_object_member(ev, "data"), "actual"),
                    ==, 48 << 20);
    json_object_unref(ev);
    r = qtest_qmp(c.qts, "{'execute':'query-balloon'}");
    g_assert_cmpint(json_object_get_int_member(
                        json_object_get_object_member(r, "return"), "actual"),
                    ==, 48 << 20);
    json_object_unref(r);
    /* The driver cannot move num_pages. */
    qpci_io_writel(c.v->pdev, c.v->bar, c.v->device, 7);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 0), ==, (16 << 20) / PAGE);

    /* Above the RAM size: give everything back; 0 is refused. */
    qmp_ok(c.qts, "{'execute':'balloon','arguments':"
                             "{'value':%llu}}", RAM_SIZE * 2);
    g_assert_cmpuint(qvirtio_config_readl(c.v, 0), ==, 0);
    r = qtest_qmp(c.qts, "{'execute':'balloon','arguments':{'value':0}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_assert_cmpstr(qtest_qmp_error_desc(r), ==,
                    "Parameter 'target' expects a size");
    json_object_unref(r);
    r = qtest_qmp(c.qts, "{'execute':'balloon','arguments':{'value':'x'}}");
    g_assert_nonnull(qtest_qmp_error_class(r));
    json_object_unref(r);
    ctx_stop(&c);
}

static void test_inflate_discards(void)
{
    Ctx c = { 0 };
    uint32_t pfns[4];
    uint8_t page[PAGE];

    /*
     * A 4 KiB balloon page is smaller than a 64 KiB host page: nothing
     * can be given back by itself there, as with QEMU.
     */
    if (getpagesize() > PAGE) {
        g_test_skip("host pages are larger than the balloon's 4 KiB pages");
        return;
    }

    ctx_start(&c, NULL);
    ctx_ready(&c, 0);
    /* Two runs: VICTIM..+2 and a lone page further up. */
    for (unsigned i = 0; i < 3; i++) {
        qtest_memset(c.qts, VICTIM + i * PAGE, 0xa5, PAGE);
        pfns[i] = (VICTIM >> 12) + i;
    }
    qtest_memset(c.qts, VICTIM + 8 * PAGE, 0x5a, PAGE);
    pfns[3] = (VICTIM >> 12) + 8;
    qtest_memset(c.qts, VICTIM + 3 * PAGE, 0x77, PAGE);
    send_pfns(&c, c.inflate, pfns, 4);
    /* The host took the pages back: they read as zero now. */
    qtest_memread(c.qts, VICTIM, page, PAGE);
    for (unsigned i = 0; i < PAGE; i++) {
        g_assert_cmpuint(page[i], ==, 0);
    }
    qtest_memread(c.qts, VICTIM + 8 * PAGE, page, PAGE);
    g_assert_cmpuint(page[0], ==, 0);
    /* Its neighbour was not in the balloon and keeps its bytes. */
    g_assert_cmpuint(qtest_readb(c.qts, VICTIM + 3 * PAGE), ==, 0x77);
    g_assert_cmpint(x_query(&c, "discarded-pages"), ==, 4);

    /* Deflate: the pages are usable again. */
    send_pfns(&c, c.deflate, pfns, 4);
    qtest_writeb(c.qts, VICTIM, 0x42);
    g_assert_cmpuint(qtest_readb(c.qts, VICTIM), ==, 0x42);
    ctx_stop(&c);
}

static void put_stat(Ctx *c, uint64_t buf, unsigned i, uint16_t tag,
                     uint64_t val)
{
    qtest_writew(c->qts, buf + 10 * i, tag);
    qtest_writeq(c->qts, buf + 10 * i + 2, val);
}

static JsonObject *guest_stats(Ctx *c)
{
    JsonObject *r = qtest_qmp(c->qts, "{'execute':'qom-get','arguments':"
                              "{'path':'/machine/peripheral/balloon0',"
                              "'property':'guest-stats'}}");

    g_assert_true(json_object_has_member(r, "return"));
    return r;
}

static void test_stats(void)
{
    Ctx c = { 0 };
    uint64_t buf;
    uint16_t head;
    uint32_t id;
    JsonObject *r, *stats;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_BALLOON_F_STATS_VQ));
    r = guest_stats(&c);
    stats = json_object_get_object_member(
        json_object_get_object_member(r, "return"), "stats");
    /* Nothing reported yet. */
    g_assert_cmpint(json_object_get_int_member(stats, "stat-free-memory"), ==,
                    -1);
    g_assert_cmpint(json_object_get_int_member(
                        json_object_get_object_member(r, "return"),
                        "last-update"), ==, 0);
    json_object_unref(r);

    /* The driver's first buffer: free and total memory, an unknown tag. */
    buf = qguest_alloc(&c.alloc, 30, 8);
    put_stat(&c, buf, 0, VIRTIO_BALLOON_S_MEMFREE, 12345678);
    put_stat(&c, buf, 1, VIRTIO_BALLOON_S_MEMTOT, RAM_SIZE);
    put_stat(&c, buf, 2, 999, 1);
    head = qvirtqueue_add(c.stats, buf, 30, false, false);
    qvirtqueue_make_available(c.stats, head);
    qvirtqueue_kick(c.stats);
    for (int i = 0; i < 1000; i++) {
        r = guest_stats(&c);
        if (json_object_get_int_member(json_object_get_object_member(r,
                                       "return"), "last-update")) {
            break;
        }
        json_object_unref(r);
        r = NULL;
        g_usleep(10000);
    }
    g_assert_nonnull(r);
    stats = json_object_get_object_member(
        json_object_get_object_member(r, "return"), "stats");
    g_assert_cmpint(json_object_get_int_member(stats, "stat-free-memory"), ==,
                    12345678);
    g_assert_cmpint(json_object_get_int_member(stats, "stat-total-memory"),
                    ==, RAM_SIZE);
    g_assert_cmpint(json_object_get_int_member(stats, "stat-swap-in"), ==, -1);
    json_object_unref(r);

    /* The device holds the buffer until it asks for fresh numbers. */
    g_usleep(50000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.stats), ==, 0);
    r = qtest_qmp(c.qts, "{'execute':'qom-set','arguments':"
                  "{'path':'/machine/peripheral/balloon0',"
                  "'property':'guest-stats-polling-interval','value':-1}}");
    g_assert_cmpstr(qtest_qmp_error_desc(r), ==,
                    "timer value must be greater than zero");
    json_object_unref(r);
    qmp_ok(c.qts, "{'execute':'qom-set','arguments':"
                             "{'path':'/machine/peripheral/balloon0',"
                             "'property':'guest-stats-polling-interval',"
                             "'value':2}}");
    r = qtest_qmp(c.qts, "{'execute':'qom-get','arguments':"
                  "{'path':'/machine/peripheral/balloon0',"
                  "'property':'guest-stats-polling-interval'}}");
    g_assert_cmpint(json_object_get_int_member(r, "return"), ==, 2);
    json_object_unref(r);
    /* Turning polling on asks at once: the buffer comes back. */
    qtest_clock_step(c.qts, 1000000);
    g_assert_true(qvirtqueue_wait_used(c.stats, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    /* Refilled; the next request comes one interval (2 s) later. */
    qvirtqueue_make_available(c.stats, head);
    qvirtqueue_kick(c.stats);
    g_usleep(50000);
    qtest_clock_step(c.qts, 1000ll * 1000 * 1000);
    g_usleep(50000);
    g_assert_cmpuint(qvirtqueue_used_idx(c.stats), ==, 1);
    qtest_clock_step(c.qts, 1100ll * 1000 * 1000);
    g_assert_true(qvirtqueue_wait_used(c.stats, &id, NULL, TIMEOUT_US));
    ctx_stop(&c);
}

static int64_t balloon_actual(QTestState *qts)
{
    JsonObject *r = qtest_qmp(qts, "{'execute':'query-balloon'}");
    int64_t v = json_object_get_int_member(
        json_object_get_object_member(r, "return"), "actual");

    json_object_unref(r);
    return v;
}

/*
 * A ballooned guest migrates: the destination keeps the host's target
 * and what the driver holds (query-balloon, the config the driver
 * reads), libvirt's polling interval and the last statistics, and the
 * stats buffer the source held comes back so the destination can still
 * ask for fresh numbers.  A stop and cont keeps it too.
 */
static void test_migrate(void)
{
    Ctx c = { 0 }, d = { 0 };
    g_autofree char *dir = g_dir_make_tmp("balloon-mig-XXXXXX", NULL);
    g_autofree char *sock = g_build_filename(dir, "mig.sock", NULL);
    g_autofree char *uri = NULL;
    JsonObject *r, *stats;
    uint64_t buf;
    uint16_t head;
    uint32_t id;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_BALLOON_F_STATS_VQ));
    qmp_ok(c.qts, "{'execute':'balloon','arguments':{'value':%llu}}",
           48ull << 20);
    set_actual(&c, (16 << 20) / PAGE);
    json_object_unref(qtest_qmp_eventwait(c.qts, "BALLOON_CHANGE"));
    qmp_ok(c.qts, "{'execute':'qom-set','arguments':"
           "{'path':'/machine/peripheral/balloon0',"
           "'property':'guest-stats-polling-interval','value':5}}");
    buf = qguest_alloc(&c.alloc, 10, 8);
    put_stat(&c, buf, 0, VIRTIO_BALLOON_S_MEMFREE, 12345678);
    head = qvirtqueue_add(c.stats, buf, 10, false, false);
    qvirtqueue_make_available(c.stats, head);
    qvirtqueue_kick(c.stats);
    for (int i = 0; i < 1000; i++) {
        int64_t t;

        r = guest_stats(&c);
        t = json_object_get_int_member(json_object_get_object_member(r,
                                       "return"), "last-update");
        json_object_unref(r);
        if (t) {
            break;
        }
        g_usleep(10000);
    }
    qmp_ok(c.qts, "{'execute':'stop'}");
    qmp_ok(c.qts, "{'execute':'cont'}");
    g_usleep(50000);
    /* Held (polling comes in 5 s of virtual time). */
    g_assert_cmpuint(qvirtqueue_used_idx(c.stats), ==, 0);

    d.qts = qtest_initf("-M pc -m 64M -device virtio-balloon-pci,addr=04.0,"
                        "id=balloon0 -incoming unix:%s", sock);
    uri = g_strdup_printf("unix:%s", sock);
    qtest_migrate_and_wait(c.qts, d.qts, uri);
    d.bus = qpci_new_pc(d.qts);
    d.v = qvirtio_pci_new(d.bus, DEVFN);
    d.alloc = c.alloc;
    d.stats = g_memdup2(c.stats, sizeof(QVirtQueue));
    d.stats->vdev = d.v;

    g_assert_cmpuint(qvirtio_config_readl(d.v, 0), ==, (16 << 20) / PAGE);
    g_assert_cmpuint(qvirtio_config_readl(d.v, 4), ==, (16 << 20) / PAGE);
    g_assert_cmpint(balloon_actual(d.qts), ==, 48 << 20);
    r = qtest_qmp(d.qts, "{'execute':'qom-get','arguments':"
                  "{'path':'/machine/peripheral/balloon0',"
                  "'property':'guest-stats-polling-interval'}}");
    g_assert_cmpint(json_object_get_int_member(r, "return"), ==, 5);
    json_object_unref(r);
    r = guest_stats(&d);
    stats = json_object_get_object_member(
        json_object_get_object_member(r, "return"), "stats");
    g_assert_cmpint(json_object_get_int_member(stats, "stat-free-memory"), ==,
                    12345678);
    json_object_unref(r);
    /* The destination's poll gives the driver its buffer back. */
    qtest_clock_step(d.qts, 5100ll * 1000 * 1000);
    g_assert_true(qvirtqueue_wait_used(d.stats, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    ctx_stop(&d);
    ctx_stop(&c);
    unlink(sock);
    rmdir(dir);
}

static void test_bad_buffers(void)
{
    Ctx c = { 0 };
    uint32_t pfns[2] = { 0xfffffff0, (RAM_SIZE >> 12) + 5 };
    uint64_t buf;
    uint16_t head;
    uint32_t id;

    ctx_start(&c, NULL);
    ctx_ready(&c, F(VIRTIO_BALLOON_F_STATS_VQ));
    /* Pages beyond RAM: logged, the buffer still comes back. */
    send_pfns(&c, c.inflate, pfns, 2);
    g_assert_cmpint(x_query(&c, "discarded-pages"), ==, 0);
    /* A 3-byte buffer holds no PFN at all. */
    buf = qguest_alloc(&c.alloc, 4, 4);
    head = qvirtqueue_add(c.inflate, buf, 3, false, false);
    qvirtqueue_make_available(c.inflate, head);
    qvirtqueue_kick(c.inflate);
    g_assert_true(qvirtqueue_wait_used(c.inflate, &id, NULL, TIMEOUT_US));
    /* A chain that loops on itself is returned, not followed forever. */
    head = qvirtqueue_set_desc(c.inflate, 5, buf, 4, VRING_DESC_F_NEXT, 5);
    qvirtqueue_make_available(c.inflate, head);
    qvirtqueue_kick(c.inflate);
    g_assert_true(qvirtqueue_wait_used(c.inflate, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, 5);
    /* A second stats buffer while one is held: the old one comes back. */
    head = qvirtqueue_add(c.stats, buf, 4, false, false);
    qvirtqueue_make_available(c.stats, head);
    qvirtqueue_kick(c.stats);
    head = qvirtqueue_add(c.stats, buf, 4, false, false);
    qvirtqueue_make_available(c.stats, head);
    qvirtqueue_kick(c.stats);
    g_assert_true(qvirtqueue_wait_used(c.stats, &id, NULL, TIMEOUT_US));
    /* An available index far ahead: the queue is broken, NEEDS_RESET. */
    qtest_writew(c.qts, c.deflate->avail + 2, 1000);
    qvirtqueue_kick(c.deflate);
    for (int i = 0; i < 1000 && !(qvirtio_get_status(c.v) &
                                  VIRTIO_CONFIG_S_NEEDS_RESET); i++) {
        g_usleep(10000);
    }
    g_assert_cmphex(qvirtio_get_status(c.v) & VIRTIO_CONFIG_S_NEEDS_RESET,
                    ==, VIRTIO_CONFIG_S_NEEDS_RESET);
    /* The machine still answers, and a reset brings the device back. */
    qmp_ok(c.qts, "{'execute':'query-balloon'}");
    qvirtio_reset(c.v);
    ctx_stop(&c);
}

static void test_discard_disabled_with_vfio(void)
{
    /*
     * Kernel VFIO cannot run here (no IOMMU); what it sets is checked by
     * x-query-balloon's discard-disabled, false without it.
     */
    Ctx c = { 0 };

    ctx_start(&c, NULL);
    g_assert_cmpint(x_query(&c, "discard-disabled"), ==, 0);
    ctx_stop(&c);
}

static void test_only_one(void)
{
    qtest_assert_start_fails("-M pc -accel qtest -device virtio-balloon-pci "
                             "-device virtio-balloon-pci",
                             "Only one balloon device is supported");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-balloon/discovery", test_discovery);
    g_test_add_func("/virtio-balloon/qmp/no-device", test_no_balloon);
    g_test_add_func("/virtio-balloon/qmp/target-and-actual",
                   test_target_and_actual);
    g_test_add_func("/virtio-balloon/inflate/pages-discarded",
                   test_inflate_discards);
    g_test_add_func("/virtio-balloon/stats/guest-stats-and-polling",
                   test_stats);
    g_test_add_func("/virtio-balloon/hostile/bad-buffers", test_bad_buffers);
    g_test_add_func("/virtio-balloon/migrate", test_migrate);
    g_test_add_func("/virtio-balloon/discard-disabled-flag",
                   test_discard_disabled_with_vfio);
    g_test_add_func("/virtio-balloon/only-one", test_only_one);
    return g_test_run();
}
