/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Conduit's vfio-user client (hw/vfio-user/client.c + device.c) against
 * our own server library (libvfu) in a thread of this process: the two
 * ends of the protocol must agree on every message, and the region info
 * they exchange must feed vfio_bar_plan() the way the qtests expect.
 *
 * Its pair, test-libvfu.c, tests the server alone with a hand-written
 * client; see there for which test goes where.
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "hw/vfio-user/client.h"
#include "qemu/vfio-region-info.h"
#include "hw/vfio/bar-plan.h"
#include "contrib/vfio-user/libvfu/libvfu.h"

#define BAR0_SIZE 0x4000
#define BAR4_SIZE 0x2000
#define NVECTORS 4
#define TABLE_OFFSET 0x3000
#define PBA_OFFSET 0x3800
#define MAX_XFER 4096

typedef struct Server {
    VfuCtx *ctx;
    GThread *thread;
    char *dir;
    char *path;
    int bar0_fd;
    uint8_t *bar0;
    uint8_t bar4[BAR4_SIZE];
    gint resets;
    gint max_access;
} Server;

static void srv_reset(VfuCtx *ctx, void *opaque, VfuResetReason reason)
{
    if (reason == VFU_RESET_CLIENT_REQUEST) {
        g_atomic_int_inc(&((Server *)opaque)->resets);
    }
}

static int bar4_access(VfuCtx *ctx, void *opaque, uint32_t index,
                       uint64_t offset, void *buf, uint32_t count,
                       bool is_write)
{
    Server *s = opaque;

    if (count > (uint32_t)g_atomic_int_get(&s->max_access)) {
        g_atomic_int_set(&s->max_access, count);
    }
    if (offset == 0 && is_write) {
        return -EACCES;         /* a read-only register */
    }
    if (is_write) {
        memcpy(s->bar4 + offset, buf, count);
    } else {
        memcpy(buf, s->bar4 + offset, count);
    }
    return 0;
}

static const VfuDeviceOps srv_ops = { .reset = srv_reset };

static gpointer srv_thread(gpointer opaque)
{
    Server *s = opaque;

    g_assert_true(vfu_run(s->ctx, &error_abort));
    return NULL;
}

static Server *server_start(bool msix_mappable)
{
    static const VFIOUserCaps caps = {
        .max_msg_fds = 2,
        .max_data_xfer_size = MAX_XFER,
        .max_dma_maps = 16,
        .pgsizes = 4096,
    };
    VfuPciIds ids = {
        .vendor_id = 0x1b36, .device_id = 0x0010, .class_code = 0x010802,
    };
    Server *s = g_new0(Server, 1);
    VfuRegionInfo bar0 = {
        .size = BAR0_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .msix_mappable = msix_mappable,
    };
    VfuRegionInfo bar4 = {
        .size = BAR4_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1, .access = bar4_access, .opaque = s,
    };

    s->dir = g_dir_make_tmp("vfio-user-XXXXXX", NULL);
    g_assert_nonnull(s->dir);
    s->path = g_build_filename(s->dir, "sock", NULL);
    s->ctx = vfu_create_ctx(s->path, &srv_ops, s, &caps, &error_abort);
    s->bar0_fd = memfd_create("bar0", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    g_assert_cmpint(ftruncate(s->bar0_fd, BAR0_SIZE), ==, 0);
    s->bar0 = mmap(NULL, BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                   s->bar0_fd, 0);
    g_assert_true(s->bar0 != MAP_FAILED);
    bar0.fd = s->bar0_fd;
    g_assert_true(vfu_pci_init(s->ctx, &ids, &error_abort));
    g_assert_true(vfu_setup_region(s->ctx, VFIO_PCI_BAR0_REGION_INDEX, &bar0,
                                   &error_abort));
    g_assert_true(vfu_setup_region(s->ctx, VFIO_PCI_BAR4_REGION_INDEX, &bar4,
                                   &error_abort));
    g_assert_cmpuint(vfu_pci_add_msix_cap(s->ctx, NVECTORS, 0, TABLE_OFFSET,
                                          0, PBA_OFFSET, &error_abort), !=, 0);
    s->thread = g_thread_new("vfu-server", srv_thread, s);
    return s;
}

static void server_stop(Server *s)
{
    if (s->ctx) {
        vfu_stop(s->ctx);
        g_thread_join(s->thread);
        vfu_destroy_ctx(s->ctx);
    }
    munmap(s->bar0, BAR0_SIZE);
    close(s->bar0_fd);
    rmdir(s->dir);
    g_free(s->path);
    g_free(s->dir);
    g_free(s);
}

static void device_open(VFIODevice *dev, Server *s)
{
    VFIOUserClient *c = vfio_user_client_connect(s->path, 0, &error_abort);

    memset(dev, 0, sizeof(*dev));
    dev->name = s->path;
    g_assert_true(vfio_user_device_attach(dev, c, &error_abort));
}

static void test_attach_and_config(void)
{
    Server *s = server_start(true);
    const VFIOUserCaps *caps;
    VFIODevice dev;
    uint16_t ids[2];

    device_open(&dev, s);
    caps = vfio_user_client_caps(dev.backend);
    g_assert_cmpuint(caps->max_msg_fds, ==, 2);
    g_assert_cmpuint(caps->max_data_xfer_size, ==, MAX_XFER);
    g_assert_cmpuint(dev.num_regions, ==, VFIO_PCI_NUM_REGIONS);
    g_assert_cmpuint(dev.num_irqs, ==, VFIO_PCI_NUM_IRQS);
    g_assert_true(dev.flags & VFIO_DEVICE_FLAGS_PCI);
    g_assert_true(dev.flags & VFIO_DEVICE_FLAGS_RESET);
    g_assert_true(vfio_device_region_read(&dev, VFIO_PCI_CONFIG_REGION_INDEX,
                                          PCI_VENDOR_ID, 4, ids,
                                          &error_abort));
    g_assert_cmphex(ids[0], ==, 0x1b36);
    g_assert_cmphex(ids[1], ==, 0x0010);
    vfio_device_close(&dev);
    server_stop(s);
}

/* Region info from the wire to the plan, for the seed layout. */
static void plan_bar0(VFIODevice *dev, VFIOMsixMappableMode mode,
                      uint64_t page_override, const char *expect)
{
    g_autofree struct vfio_region_info *info = NULL;
    g_autoptr(VFIOBarPlan) plan = NULL;
    g_autofree char *desc = NULL;
    VFIORegionCaps caps;
    VFIOBarPlanInput in;
    int fd = -1;

    g_assert_true(vfio_device_get_region_info(dev, VFIO_PCI_BAR0_REGION_INDEX,
                                              &info, &fd, &error_abort));
    g_assert_cmpint(fd, >=, 0);
    g_assert_true(vfio_region_info_parse_caps(info, info->argsz, &caps,
                                              &error_abort));
    in = (VFIOBarPlanInput) {
        .bar = 0,
        .size = info->size,
        .flags = info->flags,
        .caps = &caps,
        .table = { true, TABLE_OFFSET, NVECTORS * 16, true },
        .pba = { true, PBA_OFFSET, 8, false },
        .host_page_size = 4096,
        .page_size_override = page_override,
        .msix_mappable = mode,
    };
    plan = vfio_bar_plan(&in, &error_abort);
    desc = vfio_bar_plan_describe(plan);
    g_assert_cmpstr(desc, ==, expect);
    vfio_region_caps_clear(&caps);
    close(fd);
}

static void test_bar0_plan(void)
{
    Server *s = server_start(true);
    g_autofree struct vfio_region_info *info = NULL;
    VFIODevice dev;
    uint8_t *map;
    int fd = -1;

    device_open(&dev, s);
    /* The fd passed with the info maps the server's own BAR memory. */
    g_assert_true(vfio_device_get_region_info(&dev, VFIO_PCI_BAR0_REGION_INDEX,
                                              &info, &fd, &error_abort));
    g_assert_cmpuint(info->size, ==, BAR0_SIZE);
    g_assert_true(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
    map = mmap(NULL, BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               info->offset);
    g_assert_true(map != MAP_FAILED);
    memcpy(map + 0x1000, "doorbell", 8);
    g_assert_cmpmem(s->bar0 + 0x1000, 8, "doorbell", 8);
    munmap(map, BAR0_SIZE);
    close(fd);

    /* 4 KiB pages: one mapping, the table's page trapped. */
    plan_bar0(&dev, VFIO_MSIX_MAPPABLE_AUTO, 0,
              "bar0 size 0x4000 page 0x1000 msix-mappable whole-bar"
              " mmap [0x0+0x4000] trapped [0x3000+0x1000]"
              " table 0x3000+0x40 on pba 0x3800+0x8 off");
    /* The seed's 64 KiB-page case: mapped, but its one page trapped. */
    plan_bar0(&dev, VFIO_MSIX_MAPPABLE_AUTO, 0x10000,
              "bar0 size 0x4000 page 0x10000 msix-mappable whole-bar"
              " mmap [0x0+0x4000] trapped [0x0+0x4000]"
              " table 0x3000+0x40 on pba 0x3800+0x8 off");
    /* Capability ignored: nothing of the small BAR can be mapped. */
    plan_bar0(&dev, VFIO_MSIX_MAPPABLE_OFF, 0x10000,
              "bar0 size 0x4000 page 0x10000 mmap [] trapped [0x0+0x4000]"
              " table 0x3000+0x40 on pba 0x3800+0x8 off");
    vfio_device_close(&dev);
    server_stop(s);
}

static void test_bar0_plan_without_capability(void)
{
    Server *s = server_start(false);
    VFIODevice dev;

    device_open(&dev, s);
    plan_bar0(&dev, VFIO_MSIX_MAPPABLE_AUTO, 0,
              "bar0 size 0x4000 page 0x1000 mmap [0x0+0x3000]"
              " trapped [0x3000+0x1000]"
              " table 0x3000+0x40 on pba 0x3800+0x8 off");
    vfio_device_close(&dev);
    server_stop(s);
}

static void test_trapped_bar_rw(void)
{
    Server *s = server_start(true);
    g_autofree uint8_t *out = g_malloc(6000), *in = g_malloc0(6000);
    g_autofree struct vfio_region_info *info = NULL;
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v = 1;
    int fd = -1, i;

    device_open(&dev, s);
    g_assert_true(vfio_device_get_region_info(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                              &info, &fd, &error_abort));
    g_assert_cmpint(fd, ==, -1);
    g_assert_false(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
    for (i = 0; i < 6000; i++) {
        out[i] = i * 7;
    }
    /* Larger than max_data_xfer_size: the client splits it. */
    g_assert_true(vfio_device_region_write(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                           0x100, 6000, out, false,
                                           &error_abort));
    g_assert_true(vfio_device_region_read(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                          0x100, 6000, in, &error_abort));
    g_assert_cmpmem(in, 6000, out, 6000);
    g_assert_cmpint(g_atomic_int_get(&s->max_access), ==, MAX_XFER);
    /* The device's errno comes back in the error. */
    g_assert_false(vfio_device_region_write(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                            0, 4, &v, false, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "Permission denied"));
    g_clear_pointer(&err, error_free);
    /* Out of the region: refused by the server, the link survives. */
    g_assert_false(vfio_device_region_read(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                           BAR4_SIZE - 2, 4, &v, &err));
    g_clear_pointer(&err, error_free);
    g_assert_false(dev.broken);
    g_assert_true(vfio_device_region_read(&dev, VFIO_PCI_BAR4_REGION_INDEX,
                                          0x100, 4, &v, &error_abort));
    vfio_device_close(&dev);
    server_stop(s);
}

static void test_msix_eventfds(void)
{
    Server *s = server_start(true);
    struct vfio_irq_info irq = { .argsz = sizeof(irq),
                                 .index = VFIO_PCI_MSIX_IRQ_INDEX };
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_MSIX_IRQ_INDEX,
        .start = 0,
        .count = NVECTORS,
    };
    int efds[NVECTORS];
    VFIODevice dev;
    int i;

    device_open(&dev, s);
    g_assert_true(vfio_device_get_irq_info(&dev, &irq, &error_abort));
    g_assert_cmpuint(irq.count, ==, NVECTORS);
    for (i = 0; i < NVECTORS; i++) {
        efds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    }
    /* Four fds with max_msg_fds 2: sent as two messages. */
    g_assert_true(vfio_device_set_irqs(&dev, &set, efds, &error_abort));
    for (i = 0; i < NVECTORS; i++) {
        g_assert_true(vfu_irq_ready(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, i));
    }
    g_assert_cmpint(vfu_irq_trigger(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 2), ==,
                    0);
    for (i = 0; i < NVECTORS; i++) {
        uint64_t val = 0;
        ssize_t n = read(efds[i], &val, sizeof(val));

        g_assert_cmpint(n, ==, i == 2 ? (ssize_t)sizeof(val) : -1);
        g_assert_cmpuint(val, ==, i == 2 ? 1 : 0);
    }
    /* De-assign vectors 1 and 2 (fd -1), keep 0 and 3. */
    efds[1] = efds[2] = -1;
    g_assert_true(vfio_device_set_irqs(&dev, &set, efds, &error_abort));
    g_assert_true(vfu_irq_ready(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 0));
    g_assert_false(vfu_irq_ready(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 1));
    g_assert_false(vfu_irq_ready(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 2));
    g_assert_true(vfu_irq_ready(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 3));
    vfio_device_close(&dev);
    server_stop(s);
    for (i = 0; i < NVECTORS; i++) {
        if (efds[i] >= 0) {
            close(efds[i]);
        }
    }
}

static void test_dma_and_reset(void)
{
    Server *s = server_start(true);
    int memfd = memfd_create("guest-ram", MFD_CLOEXEC);
    uint8_t *ram, buf[5];
    VFIODevice dev;

    g_assert_cmpint(ftruncate(memfd, 0x4000), ==, 0);
    ram = mmap(NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    g_assert_true(ram != MAP_FAILED);
    memcpy(ram + 0x2100, "guest", 5);
    device_open(&dev, s);
    /* Guest RAM at IOVA 0x100000, from offset 0x1000 of its memfd. */
    g_assert_true(vfio_device_dma_map(&dev, 0x100000, 0x3000, memfd, 0x1000,
                                      ram + 0x1000, false, &error_abort));
    g_assert_cmpuint(vfu_dma_count(s->ctx), ==, 1);
    g_assert_cmpint(vfu_dma_write(s->ctx, 0x100010, "hello", 5), ==, 0);
    g_assert_cmpmem(ram + 0x1010, 5, "hello", 5);
    g_assert_cmpint(vfu_dma_read(s->ctx, 0x101100, buf, 5), ==, 0);
    g_assert_cmpmem(buf, 5, "guest", 5);
    g_assert_true(vfio_device_dma_unmap(&dev, 0x100000, 0x3000,
                                        &error_abort));
    g_assert_cmpuint(vfu_dma_count(s->ctx), ==, 0);

    g_assert_true(vfio_device_reset(&dev, &error_abort));
    g_assert_cmpint(g_atomic_int_get(&s->resets), ==, 1);
    vfio_device_close(&dev);
    server_stop(s);
    munmap(ram, 0x4000);
    close(memfd);
}

static void test_server_gone(void)
{
    Server *s = server_start(true);
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v;

    device_open(&dev, s);
    vfu_stop(s->ctx);
    g_thread_join(s->thread);
    vfu_destroy_ctx(s->ctx);
    s->ctx = NULL;
    g_assert_false(vfio_device_region_read(&dev, VFIO_PCI_CONFIG_REGION_INDEX,
                                           0, 4, &v, &err));
    g_assert_nonnull(err);
    error_free(err);
    g_assert_true(dev.broken);
    vfio_device_close(&dev);
    server_stop(s);
}


/* ---- Migration through the real client ---- */

typedef struct MigDev {
    GString *arcs;              /* "2>1 1>3 ..." */
    uint8_t state[10000];
    size_t pos;
    GByteArray *got;
} MigDev;

static MigDev mig_dev;

static int mig_transition(VfuCtx *ctx, void *opaque, uint32_t from,
                          uint32_t to)
{
    g_string_append_printf(mig_dev.arcs, "%u>%u ", from, to);
    mig_dev.pos = 0;
    return 0;
}

static ssize_t mig_read(VfuCtx *ctx, void *opaque, void *buf, uint64_t size)
{
    size_t n = MIN(size, sizeof(mig_dev.state) - mig_dev.pos);

    memcpy(buf, mig_dev.state + mig_dev.pos, n);
    mig_dev.pos += n;
    return n;
}

static int mig_write(VfuCtx *ctx, void *opaque, const void *buf,
                     uint64_t size)
{
    g_byte_array_append(mig_dev.got, buf, size);
    return 0;
}

static const VfuMigrationOps mig_ops = {
    .transition = mig_transition,
    .read_data = mig_read,
    .write_data = mig_write,
};

static bool set_state(VFIODevice *dev, uint32_t state, Error **errp)
{
    VFIOUserFeatureMigState st = { .device_state = state, .data_fd = -1 };

    return dev->ops->device_feature(dev, VFIO_DEVICE_FEATURE_SET |
                                    VFIO_USER_FEATURE_MIG_DEVICE_STATE, &st,
                                    sizeof(st), sizeof(st), NULL, errp) &&
           st.device_state == state;
}

static void test_migration(void)
{
    Server *s;
    VFIODevice dev;
    uint64_t flags = 0, bm[1];
    uint8_t buf[MAX_XFER];
    size_t got, total = 0;
    bool nosup = false;
    Error *err = NULL;

    mig_dev.arcs = g_string_new("");
    mig_dev.got = g_byte_array_new();
    for (size_t i = 0; i < sizeof(mig_dev.state); i++) {
        mig_dev.state[i] = i * 7;
    }
    s = server_start(false);
    g_assert_false(vfu_setup_migration(s->ctx, &mig_ops,
                                       VFIO_MIGRATION_PRE_COPY, &err));
    error_free_or_abort(&err);
    g_assert_true(vfu_setup_migration(s->ctx, &mig_ops,
                                      VFIO_MIGRATION_STOP_COPY,
                                      &error_abort));
    device_open(&dev, s);
    g_assert_true(dev.ops->device_feature(&dev, VFIO_DEVICE_FEATURE_GET |
                                          VFIO_USER_FEATURE_MIGRATION,
                                          &flags, 0, 8, &nosup,
                                          &error_abort));
    g_assert_cmphex(flags, ==, VFIO_MIGRATION_STOP_COPY);
    /* No MIG_DATA_SIZE callback: refused as unsupported. */
    g_assert_false(dev.ops->device_feature(&dev, VFIO_DEVICE_FEATURE_GET |
                                           VFIO_USER_FEATURE_MIG_DATA_SIZE,
                                           &flags, 0, 8, &nosup, &err));
    g_assert_true(nosup);
    error_free_or_abort(&err);
    /* Data outside a saving state is refused. */
    g_assert_false(dev.ops->mig_data_read(&dev, -1, buf, sizeof(buf), &got,
                                          &err));
    error_free_or_abort(&err);
    g_assert_false(dev.broken);

    /* RUNNING -> STOP_COPY walks through STOP; data in 4 KiB reads. */
    g_assert_true(set_state(&dev, VFIO_MIG_STATE_STOP_COPY, &error_abort));
    g_assert_cmpstr(mig_dev.arcs->str, ==, "2>1 1>3 ");
    do {
        g_assert_true(dev.ops->mig_data_read(&dev, -1, buf, sizeof(buf),
                                             &got, &error_abort));
        g_assert_true(!memcmp(buf, mig_dev.state + total, got));
        total += got;
    } while (got);
    g_assert_cmpuint(total, ==, sizeof(mig_dev.state));
    /* STOP_COPY -> PRE_COPY is never allowed (nor offered here). */
    g_assert_false(set_state(&dev, VFIO_MIG_STATE_PRE_COPY, &err));
    error_free_or_abort(&err);
    /* STOP_COPY -> RESUMING goes through STOP; writes split at 4 KiB. */
    g_string_truncate(mig_dev.arcs, 0);
    g_assert_true(set_state(&dev, VFIO_MIG_STATE_RESUMING, &error_abort));
    g_assert_cmpstr(mig_dev.arcs->str, ==, "3>1 1>4 ");
    g_assert_true(dev.ops->mig_data_write(&dev, -1, mig_dev.state,
                                          sizeof(mig_dev.state),
                                          &error_abort));
    g_assert_cmpuint(mig_dev.got->len, ==, sizeof(mig_dev.state));
    g_assert_true(set_state(&dev, VFIO_MIG_STATE_RUNNING, &error_abort));

    /* DMA logging: a report before START is refused; nothing mapped. */
    g_assert_false(dev.ops->dma_logging_report(&dev, 0, 0x40000, 4096, bm,
                                               &err));
    error_free_or_abort(&err);
    {
        const uint64_t ranges[1][2] = { { 0x100000, 0x40000 } };

        g_assert_true(dev.ops->dma_logging_start(&dev, 4096, ranges, 1,
                                                 &error_abort));
        vfu_dma_mark_dirty(s->ctx, 0x100000 + 3 * 4096 + 100, 4096);
        bm[0] = ~0ull;
        g_assert_true(dev.ops->dma_logging_report(&dev, 0x100000, 0x40000,
                                                  4096, bm, &error_abort));
        /* Pages 3 and 4 (the write straddles them); reported once. */
        g_assert_cmphex(bm[0], ==, 0x18);
        g_assert_true(dev.ops->dma_logging_report(&dev, 0x100000, 0x40000,
                                                  4096, bm, &error_abort));
        g_assert_cmphex(bm[0], ==, 0);
        /* Twice START is refused; STOP ends it. */
        g_assert_false(dev.ops->dma_logging_start(&dev, 4096, ranges, 1,
                                                  &err));
        error_free_or_abort(&err);
        g_assert_true(dev.ops->dma_logging_stop(&dev, &error_abort));
    }
    g_assert_false(dev.broken);
    vfio_device_close(&dev);
    server_stop(s);
    g_string_free(mig_dev.arcs, true);
    g_byte_array_unref(mig_dev.got);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user/libvfu/attach-and-config",
                    test_attach_and_config);
    g_test_add_func("/vfio-user/libvfu/bar0-plan/msix-mappable",
                    test_bar0_plan);
    g_test_add_func("/vfio-user/libvfu/bar0-plan/no-capability",
                    test_bar0_plan_without_capability);
    g_test_add_func("/vfio-user/libvfu/trapped-bar-rw", test_trapped_bar_rw);
    g_test_add_func("/vfio-user/libvfu/msix-eventfds", test_msix_eventfds);
    g_test_add_func("/vfio-user/libvfu/dma-and-reset", test_dma_and_reset);
    g_test_add_func("/vfio-user/libvfu/migration", test_migration);
    g_test_add_func("/vfio-user/libvfu/server-gone/device-broken",
                    test_server_gone);
    return g_test_run();
}
