/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu, the server library, on its own: a server in a thread of this
 * process, driven over its UNIX socket by a tiny hand-written client
 * that can send what Conduit's client never would (malformed, out of
 * order, hostile).  Links libvfu only.
 *
 * Its pair, test-vfio-user-libvfu.c, runs Conduit's real client
 * (hw/vfio-user/client.c + device.c) against libvfu: the two ends must
 * agree.  A test of the server's own rules belongs here; a test of what
 * the client and the server do together belongs there.
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "qemu/vfio-region-info.h"
#include "contrib/vfio-user/libvfu/libvfu.h"

#define BAR0_SIZE 0x4000
#define BAR4_SIZE 0x1000
#define NVECTORS 4
/* A write here makes the device DMA-read 4 bytes from dma_probe_iova. */
#define BAR4_DMA_PROBE 0xf00

typedef struct TestDev {
    VfuCtx *ctx;
    GThread *thread;
    char *dir;
    char *path;
    int bar0_fd;
    uint8_t *bar0;
    uint8_t bar4[BAR4_SIZE];
    gint attaches;
    gint resets_client;
    gint resets_lost;
    gint config_writes;
    gint dma_maps;
    gint dma_unmaps;
    gint irq_updates;
    uint64_t dma_probe_iova;
    int dma_probe_ret;
    uint8_t dma_probe[4];
} TestDev;

/* ---- the device ---- */

static void dev_reset(VfuCtx *ctx, void *opaque, VfuResetReason reason)
{
    TestDev *d = opaque;

    if (reason == VFU_RESET_LOST_CLIENT) {
        /* The library promises DMA is gone before a lost-client reset. */
        g_assert_cmpuint(vfu_dma_count(ctx), ==, 0);
        g_atomic_int_inc(&d->resets_lost);
    } else {
        g_atomic_int_inc(&d->resets_client);
    }
}

static void dev_attach(VfuCtx *ctx, void *opaque)
{
    g_atomic_int_inc(&((TestDev *)opaque)->attaches);
}

static void dev_config_write(VfuCtx *ctx, void *opaque, uint32_t offset,
                             uint32_t len)
{
    g_atomic_int_inc(&((TestDev *)opaque)->config_writes);
}

static void dev_dma_map(VfuCtx *ctx, void *opaque, uint64_t iova,
                        uint64_t size)
{
    g_atomic_int_inc(&((TestDev *)opaque)->dma_maps);
}

static void dev_dma_unmap(VfuCtx *ctx, void *opaque, uint64_t iova,
                          uint64_t size)
{
    g_atomic_int_inc(&((TestDev *)opaque)->dma_unmaps);
}

static void dev_irq_update(VfuCtx *ctx, void *opaque, uint32_t index,
                           uint32_t start, uint32_t count)
{
    g_atomic_int_inc(&((TestDev *)opaque)->irq_updates);
}

static int bar4_access(VfuCtx *ctx, void *opaque, uint32_t index,
                       uint64_t offset, void *buf, uint32_t count,
                       bool is_write)
{
    TestDev *d = opaque;

    g_assert_cmpuint(index, ==, VFIO_PCI_BAR4_REGION_INDEX);
    g_assert_cmpuint(offset + count, <=, BAR4_SIZE);
    if (!is_write) {
        memcpy(buf, d->bar4 + offset, count);
        return 0;
    }
    if (offset == 0xffc) {
        return -EIO;    /* a register that refuses writes */
    }
    memcpy(d->bar4 + offset, buf, count);
    if (offset == BAR4_DMA_PROBE) {
        /* On the dispatch thread, against a message-only range. */
        d->dma_probe_ret = vfu_dma_read(ctx, d->dma_probe_iova,
                                        d->dma_probe, sizeof(d->dma_probe));
    }
    return 0;
}

static const VfuDeviceOps dev_ops = {
    .reset = dev_reset,
    .attach = dev_attach,
    .config_write = dev_config_write,
    .dma_map = dev_dma_map,
    .dma_unmap = dev_dma_unmap,
    .irq_update = dev_irq_update,
};

static gpointer server_thread(gpointer opaque)
{
    TestDev *d = opaque;

    g_assert_true(vfu_run(d->ctx, &error_abort));
    return NULL;
}

static TestDev *dev_start_caps(const VFIOUserCaps *caps)
{
    TestDev *d = g_new0(TestDev, 1);
    VfuPciIds ids = {
        .vendor_id = 0x1b36, .device_id = 0x0010, .class_code = 0x010802,
        .subsys_vendor_id = 0x1af4, .subsys_id = 0x1100, .revision = 2,
    };
    VfuSparseArea sparse[] = { { 0x1000, 0x2000 } };
    VfuRegionInfo bar0 = {
        .size = BAR0_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .sparse = sparse, .nr_sparse = 1, .msix_mappable = true,
        .bar_flags = PCI_BASE_ADDRESS_MEM_TYPE_64,
    };
    VfuRegionInfo bar4 = {
        .size = BAR4_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1, .access = bar4_access, .opaque = d,
    };

    d->dir = g_dir_make_tmp("libvfu-XXXXXX", NULL);
    g_assert_nonnull(d->dir);
    d->path = g_build_filename(d->dir, "sock", NULL);
    d->ctx = vfu_create_ctx(d->path, &dev_ops, d, caps, &error_abort);

    d->bar0_fd = memfd_create("bar0", MFD_CLOEXEC);
    g_assert_cmpint(d->bar0_fd, >=, 0);
    g_assert_cmpint(ftruncate(d->bar0_fd, BAR0_SIZE), ==, 0);
    d->bar0 = mmap(NULL, BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                   d->bar0_fd, 0);
    g_assert_true(d->bar0 != MAP_FAILED);
    bar0.fd = d->bar0_fd;

    g_assert_true(vfu_pci_init(d->ctx, &ids, &error_abort));
    g_assert_true(vfu_setup_region(d->ctx, VFIO_PCI_BAR0_REGION_INDEX,
                                   &bar0, &error_abort));
    g_assert_true(vfu_setup_region(d->ctx, VFIO_PCI_BAR4_REGION_INDEX,
                                   &bar4, &error_abort));
    g_assert_true(vfu_setup_irq(d->ctx, VFIO_PCI_INTX_IRQ_INDEX, 1,
                                &error_abort));
    g_assert_cmpuint(vfu_pci_add_msix_cap(d->ctx, NVECTORS, 4, 0, 4, 0x800,
                                          &error_abort), ==, 0x40);
    d->thread = g_thread_new("vfu-server", server_thread, d);
    return d;
}

static TestDev *dev_start(void)
{
    return dev_start_caps(NULL);
}

static void dev_stop(TestDev *d)
{
    vfu_stop(d->ctx);
    g_thread_join(d->thread);
    vfu_destroy_ctx(d->ctx);
    g_assert_false(g_file_test(d->path, G_FILE_TEST_EXISTS));
    munmap(d->bar0, BAR0_SIZE);
    close(d->bar0_fd);
    rmdir(d->dir);
    g_free(d->path);
    g_free(d->dir);
    g_free(d);
}

/* Open fds of this process: the server must not leak any. */
static int count_fds(void)
{
    g_autoptr(GDir) dir = g_dir_open("/proc/self/fd", 0, NULL);
    int n = 0;

    g_assert_nonnull(dir);
    while (g_dir_read_name(dir)) {
        n++;
    }
    return n;
}

/* Waits (generously) for the server thread to reach a state. */
static bool wait_for(gint *counter, int value)
{
    for (int i = 0; i < 20000; i++) {
        if (g_atomic_int_get(counter) >= value) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

/* ---- the client ---- */

static uint16_t next_id;

static void cl_send(int fd, uint16_t id, uint16_t cmd, uint32_t flags,
                    const void *payload, size_t len, const int *fds,
                    size_t nfds)
{
    g_autofree uint8_t *buf = g_malloc0(sizeof(VFIOUserHdr) + len);

    vfio_user_hdr_init((VFIOUserHdr *)buf, id, cmd, sizeof(VFIOUserHdr) + len,
                       flags);
    if (len) {
        memcpy(buf + sizeof(VFIOUserHdr), payload, len);
    }
    g_assert_cmpint(qemu_send_with_fds(fd, buf, sizeof(VFIOUserHdr) + len,
                                       fds, nfds, &error_abort), ==,
                    sizeof(VFIOUserHdr) + len);
}

/* Returns false on EOF. */
static bool cl_recv(int fd, VFIOUserHdr *hdr, uint8_t **payload,
                    int *rfd)
{
    int fds[4];
    size_t nfds = ARRAY_SIZE(fds);
    ssize_t n = qemu_recv_with_fds(fd, hdr, sizeof(*hdr), fds, &nfds, NULL);

    *payload = NULL;
    if (n <= 0) {
        return false;
    }
    g_assert_cmpuint(hdr->size, >=, sizeof(*hdr));
    g_assert_cmpuint(nfds, <=, 1);
    if (rfd) {
        *rfd = nfds ? fds[0] : -1;
    } else if (nfds) {
        close(fds[0]);
    }
    if (hdr->size > sizeof(*hdr)) {
        size_t none = 0;

        *payload = g_malloc(hdr->size - sizeof(*hdr));
        g_assert_cmpint(qemu_recv_with_fds(fd, *payload,
                                           hdr->size - sizeof(*hdr), NULL,
                                           &none, &error_abort), >, 0);
    }
    return true;
}

/*
 * One request/reply.  Returns the errno of an error reply, 0 on success,
 * -1 when the server closed the connection.
 */
static int cl_call(int fd, uint16_t cmd, const void *p, size_t len,
                   const int *fds, size_t nfds, uint8_t **reply,
                   size_t *rlen, int *rfd)
{
    uint16_t id = ++next_id;
    VFIOUserHdr hdr;
    uint8_t *payload;

    cl_send(fd, id, cmd, 0, p, len, fds, nfds);
    if (!cl_recv(fd, &hdr, &payload, rfd)) {
        return -1;
    }
    g_assert_cmpuint(hdr.id, ==, id);
    g_assert_cmpuint(hdr.command, ==, cmd);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_REPLY);
    if (rlen) {
        *rlen = hdr.size - sizeof(hdr);
    }
    if (reply) {
        *reply = payload;
    } else {
        g_free(payload);
    }
    if (hdr.flags & VFIO_USER_F_ERROR) {
        g_assert_cmpuint(hdr.size, ==, sizeof(hdr));
        g_assert_cmpuint(hdr.error_reply, !=, 0);
        return hdr.error_reply;
    }
    return 0;
}

static int cl_connect_raw(TestDev *d)
{
    struct timeval tv = { .tv_sec = 20 };
    int fd = unix_connect_path(d->path, &error_abort);

    /* A hung server fails the test instead of hanging it. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static VFIOUserCaps cl_version(int fd, uint64_t max_xfer)
{
    VFIOUserCaps caps = {
        .max_msg_fds = 4, .max_data_xfer_size = max_xfer,
        .max_dma_maps = 16, .pgsizes = 4096,
    };
    g_autofree uint8_t *reply = NULL;
    g_autofree void *req = NULL;
    uint16_t major, minor;
    size_t len, rlen;

    req = vfio_user_version_build(0, 1, &caps, &len);
    g_assert_cmpint(cl_call(fd, VFIO_USER_VERSION, req, len, NULL, 0, &reply,
                            &rlen, NULL), ==, 0);
    g_assert_true(vfio_user_version_parse(reply, rlen, &major, &minor, &caps,
                                          &error_abort));
    g_assert_cmpint(major, ==, 0);
    g_assert_cmpint(minor, ==, 1);
    return caps;
}

static int cl_connect(TestDev *d)
{
    int fd = cl_connect_raw(d);

    cl_version(fd, 1 << 20);
    return fd;
}

static int cl_region_write(int fd, uint32_t region, uint64_t offset,
                           const void *data, uint32_t count)
{
    g_autofree VFIOUserRegionRW *rw = g_malloc0(sizeof(*rw) + count);
    g_autofree uint8_t *reply = NULL;
    size_t rlen;
    int ret;

    rw->offset = offset;
    rw->region = region;
    rw->count = count;
    memcpy(rw->data, data, count);
    ret = cl_call(fd, VFIO_USER_REGION_WRITE, rw, sizeof(*rw) + count, NULL,
                  0, &reply, &rlen, NULL);
    if (ret == 0) {
        g_assert_true(vfio_user_region_rw_reply_check(reply, rlen, true,
                                                      region, offset, count,
                                                      &error_abort));
    }
    return ret;
}

static int cl_region_read(int fd, uint32_t region, uint64_t offset,
                          void *data, uint32_t count)
{
    VFIOUserRegionRW rw = { .offset = offset, .region = region,
                            .count = count };
    g_autofree uint8_t *reply = NULL;
    size_t rlen;
    int ret;

    ret = cl_call(fd, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                  &reply, &rlen, NULL);
    if (ret == 0) {
        g_assert_true(vfio_user_region_rw_reply_check(reply, rlen, false,
                                                      region, offset, count,
                                                      &error_abort));
        memcpy(data, reply + sizeof(rw), count);
    }
    return ret;
}

static uint32_t cfg_read32(int fd, uint32_t off)
{
    uint32_t v;

    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_CONFIG_REGION_INDEX, off,
                                   &v, 4), ==, 0);
    return v;
}

static void cfg_write32(int fd, uint32_t off, uint32_t v)
{
    g_assert_cmpint(cl_region_write(fd, VFIO_PCI_CONFIG_REGION_INDEX, off,
                                    &v, 4), ==, 0);
}

static int cl_dma_map(int fd, uint64_t iova, uint64_t size, uint64_t offset,
                      int memfd)
{
    VFIOUserDMAMap m = {
        .argsz = sizeof(m),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ | VFIO_USER_DMA_MAP_FLAG_WRITE,
        .offset = offset, .address = iova, .size = size,
    };

    return cl_call(fd, VFIO_USER_DMA_MAP, &m, sizeof(m), &memfd,
                   memfd >= 0 ? 1 : 0, NULL, NULL, NULL);
}

static int cl_dma_unmap(int fd, uint32_t flags, uint64_t iova, uint64_t size)
{
    VFIOUserDMAUnmap u = { sizeof(u), flags, iova, size };
    g_autofree uint8_t *reply = NULL;
    size_t rlen;
    int ret;

    ret = cl_call(fd, VFIO_USER_DMA_UNMAP, &u, sizeof(u), NULL, 0, &reply,
                  &rlen, NULL);
    if (ret == 0) {
        g_assert_cmpuint(rlen, ==, sizeof(u));
        g_assert_cmpmem(reply, rlen, &u, sizeof(u));
    }
    return ret;
}

static int cl_set_irqs(int fd, uint32_t flags, uint32_t index, uint32_t start,
                       uint32_t count, const int *fds, size_t nfds)
{
    struct vfio_irq_set s = {
        .argsz = sizeof(s), .flags = flags, .index = index, .start = start,
        .count = count,
    };

    return cl_call(fd, VFIO_USER_DEVICE_SET_IRQS, &s, sizeof(s), fds, nfds,
                   NULL, NULL, NULL);
}

/* ---- tests ---- */

static void test_version_negotiation(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect_raw(d);
    VFIOUserCaps caps;

    g_assert_cmpint(g_atomic_int_get(&d->attaches), ==, 0);
    caps = cl_version(fd, 65536);
    g_assert_cmpint(g_atomic_int_get(&d->attaches), ==, 1);

    /* The server names what it accepts; DMA maps are the common minimum. */
    g_assert_cmpuint(caps.max_msg_fds, ==, 8);
    g_assert_cmpuint(caps.max_data_xfer_size, ==, 1 << 20);
    g_assert_cmpuint(caps.max_dma_maps, ==, 16);
    g_assert_cmpuint(caps.pgsizes, ==, 4096);
    g_assert_cmpuint(vfu_peer_caps(d->ctx)->max_data_xfer_size, ==, 65536);
    /* A second VERSION on the same connection is refused. */
    {
        g_autofree void *req = NULL;
        size_t len;

        req = vfio_user_version_build(0, 1, &caps, &len);
        g_assert_cmpint(cl_call(fd, VFIO_USER_VERSION, req, len, NULL, 0,
                                NULL, NULL, NULL), ==, EINVAL);
    }
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 1));
    dev_stop(d);
}

static void test_version_required_and_checked(void)
{
    TestDev *d = dev_start();
    VFIOUserDeviceInfo info = { .argsz = sizeof(info) };
    VFIOUserCaps caps;
    g_autofree void *req = NULL;
    size_t len;
    int fd;

    /* Anything before VERSION: error reply, then the server hangs up. */
    fd = cl_connect_raw(d);
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_INFO, &info,
                            sizeof(info), NULL, 0, NULL, NULL, NULL), ==,
                    EINVAL);
    {
        VFIOUserHdr hdr;
        uint8_t *payload;

        g_assert_false(cl_recv(fd, &hdr, &payload, NULL));
    }
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 1));

    /* Wrong major. */
    fd = cl_connect_raw(d);
    vfio_user_caps_init_default(&caps);
    req = vfio_user_version_build(1, 0, &caps, &len);
    g_assert_cmpint(cl_call(fd, VFIO_USER_VERSION, req, len, NULL, 0, NULL,
                            NULL, NULL), ==, ENOTSUP);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 2));

    /* Bad JSON. */
    fd = cl_connect_raw(d);
    g_assert_cmpint(cl_call(fd, VFIO_USER_VERSION, "\0\0\1\0{]", 7, NULL, 0,
                            NULL, NULL, NULL), ==, EINVAL);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 3));

    /* And a good client still gets served. */
    fd = cl_connect(d);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 4));
    dev_stop(d);
}

static void test_device_info(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    VFIOUserDeviceInfo info = { .argsz = sizeof(info) };
    g_autofree uint8_t *reply = NULL;
    size_t rlen;

    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_INFO, &info,
                            sizeof(info), NULL, 0, &reply, &rlen, NULL), ==,
                    0);
    g_assert_cmpuint(rlen, ==, sizeof(info));
    memcpy(&info, reply, sizeof(info));
    g_assert_cmpuint(info.flags, ==,
                     VFIO_DEVICE_FLAGS_RESET | VFIO_DEVICE_FLAGS_PCI);
    g_assert_cmpuint(info.num_regions, ==, VFIO_PCI_NUM_REGIONS);
    g_assert_cmpuint(info.num_irqs, ==, VFIO_PCI_NUM_IRQS);
    /* argsz too small, and a payload of the wrong size. */
    info.argsz = 8;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_INFO, &info,
                            sizeof(info), NULL, 0, NULL, NULL, NULL), ==,
                    EINVAL);
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_INFO, &info, 8, NULL, 0,
                            NULL, NULL, NULL), ==, EINVAL);
    close(fd);
    dev_stop(d);
}

static void test_region_info_fd_and_retry(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    struct vfio_region_info req = {
        .argsz = sizeof(req), .index = VFIO_PCI_BAR0_REGION_INDEX,
    };
    struct vfio_region_info info;
    const struct vfio_info_cap_header *cap;
    g_autofree VFIOSparseArea *areas = NULL;
    uint32_t nr_areas;
    bool found;
    g_autofree uint8_t *reply = NULL;
    g_autofree uint8_t *reply2 = NULL;
    size_t rlen;
    int rfd = -1;
    uint64_t page_off;
    uint8_t *map;

    /* argsz only covers the fixed struct: told the size, no fd. */
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, &reply, &rlen, &rfd), ==,
                    0);
    g_assert_cmpuint(rlen, ==, sizeof(info));
    g_assert_cmpint(rfd, ==, -1);
    memcpy(&info, reply, sizeof(info));
    g_assert_cmpuint(info.argsz, >, sizeof(info));
    g_assert_cmpuint(info.cap_offset, ==, 0);
    /* No chain in this reply, so no CAPS flag (QEMU insists). */
    g_assert_false(info.flags & VFIO_REGION_INFO_FLAG_CAPS);

    /* Retry with the size asked for: the chain and the fd. */
    req.argsz = info.argsz;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, &reply2, &rlen, &rfd), ==,
                    0);
    g_assert_cmpuint(rlen, ==, req.argsz);
    /* The chain is valid by the one definition the client uses. */
    g_assert_true(vfio_region_info_check((void *)reply2, rlen,
                                         &error_abort));
    memcpy(&info, reply2, sizeof(info));
    g_assert_cmpuint(info.size, ==, BAR0_SIZE);
    g_assert_cmpuint(info.flags, ==, VFIO_REGION_INFO_FLAG_READ |
                     VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP |
                     VFIO_REGION_INFO_FLAG_CAPS);
    g_assert_true(vfio_region_info_get_sparse((void *)reply2, rlen, &found,
                                              &areas, &nr_areas,
                                              &error_abort));
    g_assert_true(found);
    g_assert_cmpuint(nr_areas, ==, 1);
    g_assert_cmpuint(areas[0].offset, ==, 0x1000);
    g_assert_cmpuint(areas[0].size, ==, 0x2000);
    g_assert_true(vfio_region_info_find_cap((void *)reply2, rlen,
                                            VFIO_REGION_INFO_CAP_MSIX_MAPPABLE,
                                            &cap, &error_abort));
    g_assert_nonnull(cap);

    /*
     * The fd is the device's memory: both sides see each other's stores.
     * mmap offsets are in host pages: from the page holding the area.
     */
    g_assert_cmpint(rfd, >=, 0);
    page_off = (info.offset + areas[0].offset) % getpagesize();
    map = mmap(NULL, page_off + areas[0].size, PROT_READ | PROT_WRITE,
               MAP_SHARED, rfd, info.offset + areas[0].offset - page_off);
    g_assert_true(map != MAP_FAILED);
    d->bar0[0x1008] = 0xab;
    g_assert_cmpuint(map[page_off + 8], ==, 0xab);
    map[page_off + 0x1000] = 0xcd;
    g_assert_cmpuint(d->bar0[0x2000], ==, 0xcd);
    munmap(map, page_off + areas[0].size);
    close(rfd);

    /* BAR4 has no fd: no MMAP flag, no caps, no fd. */
    req.index = VFIO_PCI_BAR4_REGION_INDEX;
    req.argsz = 256;
    g_free(reply);
    reply = NULL;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, &reply, &rlen, &rfd), ==,
                    0);
    g_assert_cmpuint(rlen, ==, sizeof(info));
    g_assert_cmpint(rfd, ==, -1);
    memcpy(&info, reply, sizeof(info));
    g_assert_cmpuint(info.flags, ==, VFIO_REGION_INFO_FLAG_READ |
                     VFIO_REGION_INFO_FLAG_WRITE);
    g_assert_cmpuint(info.size, ==, BAR4_SIZE);

    /* Out of range index; argsz below the struct. */
    req.index = VFIO_PCI_NUM_REGIONS;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, NULL, NULL, NULL), ==,
                    EINVAL);
    req.index = 0;
    req.argsz = 16;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, NULL, NULL, NULL), ==,
                    EINVAL);
    close(fd);
    dev_stop(d);
}

static void test_region_rw_callbacks(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    uint32_t v = 0x12345678, r = 0;
    g_autofree uint8_t *big = g_malloc0((1 << 20) + 1);

    g_assert_cmpint(cl_region_write(fd, VFIO_PCI_BAR4_REGION_INDEX, 0x10, &v,
                                    4), ==, 0);
    g_assert_cmpuint(ldl_le_p(d->bar4 + 0x10), ==, 0x12345678);
    stl_le_p(d->bar4 + 0x20, 0xcafef00d);
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX, 0x20, &r,
                                   4), ==, 0);
    g_assert_cmpuint(r, ==, 0xcafef00d);
    /* The device's error reaches the client. */
    g_assert_cmpint(cl_region_write(fd, VFIO_PCI_BAR4_REGION_INDEX, 0xffc,
                                    &v, 4), ==, EIO);
    /* Accesses past the end, straddling it, or to absent regions. */
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX, BAR4_SIZE,
                                   &r, 4), ==, EINVAL);
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX,
                                   BAR4_SIZE - 2, &r, 4), ==, EINVAL);
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX,
                                   UINT64_MAX - 1, &r, 4), ==, EINVAL);
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR2_REGION_INDEX, 0, &r, 4),
                    ==, EINVAL);
    g_assert_cmpint(cl_region_read(fd, 1000, 0, &r, 4), ==, EINVAL);
    /* More than max_data_xfer_size: refused, connection kept. */
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX, 0, big,
                                   (1 << 20) + 1), ==, E2BIG);
    /* BAR0 has no callback: the library serves it from the memfd. */
    d->bar0[0x30] = 0x5a;
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR0_REGION_INDEX, 0x30, &r,
                                   1), ==, 0);
    g_assert_cmpuint(r & 0xff, ==, 0x5a);
    v = 0x77;
    g_assert_cmpint(cl_region_write(fd, VFIO_PCI_BAR0_REGION_INDEX, 0x40, &v,
                                    1), ==, 0);
    g_assert_cmpuint(d->bar0[0x40], ==, 0x77);
    close(fd);
    dev_stop(d);
}

static void test_config_space(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    uint32_t v;
    int writes;

    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID), ==, 0x00101b36);
    g_assert_cmpuint(cfg_read32(fd, PCI_CLASS_REVISION), ==, 0x01080202);
    g_assert_cmpuint(cfg_read32(fd, PCI_SUBSYSTEM_VENDOR_ID), ==,
                     0x11001af4);
    /* Identity is read-only. */
    cfg_write32(fd, PCI_VENDOR_ID, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID), ==, 0x00101b36);

    /* BAR sizing: all-ones reads back the size mask and the type bits. */
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_0), ==,
                     PCI_BASE_ADDRESS_MEM_TYPE_64);
    cfg_write32(fd, PCI_BASE_ADDRESS_0, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_0), ==,
                     (uint32_t)~(BAR0_SIZE - 1) | PCI_BASE_ADDRESS_MEM_TYPE_64);
    cfg_write32(fd, PCI_BASE_ADDRESS_1, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_1), ==, 0xffffffff);
    cfg_write32(fd, PCI_BASE_ADDRESS_4, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_4), ==,
                     (uint32_t)~(BAR4_SIZE - 1));
    cfg_write32(fd, PCI_BASE_ADDRESS_4, 0xfebf1000);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_4), ==, 0xfebf1000);
    cfg_write32(fd, PCI_BASE_ADDRESS_2, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_2), ==, 0);

    /* Command: writable bits only; status says there is a cap list. */
    writes = g_atomic_int_get(&d->config_writes);
    cfg_write32(fd, PCI_COMMAND, 0xffff);
    v = cfg_read32(fd, PCI_COMMAND);
    g_assert_cmpuint(v & 0xffff, ==, PCI_COMMAND_IO | PCI_COMMAND_MEMORY |
                     PCI_COMMAND_MASTER | PCI_COMMAND_PARITY |
                     PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE);
    g_assert_true((v >> 16) & PCI_STATUS_CAP_LIST);
    g_assert_cmpint(g_atomic_int_get(&d->config_writes), ==, writes + 1);
    g_assert_cmpuint(cfg_read32(fd, PCI_INTERRUPT_LINE) >> 8 & 0xff, ==, 1);

    /* MSI-X capability as the device asked for it. */
    g_assert_cmpuint(cfg_read32(fd, PCI_CAPABILITY_LIST) & 0xff, ==, 0x40);
    v = cfg_read32(fd, 0x40);
    g_assert_cmpuint(v & 0xff, ==, PCI_CAP_ID_MSIX);
    g_assert_cmpuint((v >> 8) & 0xff, ==, 0);
    g_assert_cmpuint(v >> 16, ==, NVECTORS - 1);
    g_assert_cmpuint(cfg_read32(fd, 0x44), ==, 4);
    g_assert_cmpuint(cfg_read32(fd, 0x48), ==, 0x800 | 4);
    cfg_write32(fd, 0x40, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, 0x40) >> 16, ==,
                     PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL |
                     (NVECTORS - 1));
    cfg_write32(fd, 0x44, 0xffffffff);
    g_assert_cmpuint(cfg_read32(fd, 0x44), ==, 4);
    /* Past the end of config space. */
    g_assert_cmpint(cl_region_read(fd, VFIO_PCI_CONFIG_REGION_INDEX, 254, &v,
                                   4), ==, EINVAL);

    /* DEVICE_RESET reaches the device and restores config space. */
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0,
                            NULL, NULL, NULL), ==, 0);
    g_assert_cmpint(g_atomic_int_get(&d->resets_client), ==, 1);
    g_assert_cmpuint(cfg_read32(fd, PCI_COMMAND) & 0xffff, ==, 0);
    g_assert_cmpuint(cfg_read32(fd, 0x40) >> 16, ==, NVECTORS - 1);
    g_assert_cmpuint(cfg_read32(fd, PCI_BASE_ADDRESS_4), ==, 0);
    close(fd);
    dev_stop(d);
}

static bool eventfd_fired(int efd)
{
    uint64_t v;

    return read(efd, &v, sizeof(v)) == sizeof(v) && v > 0;
}

static void test_irqs(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    const uint32_t efd_trigger = VFIO_IRQ_SET_DATA_EVENTFD |
                                 VFIO_IRQ_SET_ACTION_TRIGGER;
    struct vfio_irq_info info = { .argsz = sizeof(info),
                                  .index = VFIO_PCI_MSIX_IRQ_INDEX };
    g_autofree uint8_t *reply = NULL;
    int efds[NVECTORS];
    size_t rlen;

    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                            sizeof(info), NULL, 0, &reply, &rlen, NULL), ==,
                    0);
    g_assert_cmpuint(rlen, ==, sizeof(info));
    memcpy(&info, reply, sizeof(info));
    g_assert_cmpuint(info.count, ==, NVECTORS);
    g_assert_true(info.flags & VFIO_IRQ_INFO_EVENTFD);
    info.index = VFIO_PCI_INTX_IRQ_INDEX;
    g_free(reply);
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                            sizeof(info), NULL, 0, &reply, &rlen, NULL), ==,
                    0);
    memcpy(&info, reply, sizeof(info));
    g_assert_cmpuint(info.count, ==, 1);
    info.index = VFIO_PCI_NUM_IRQS;
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                            sizeof(info), NULL, 0, NULL, NULL, NULL), ==,
                    EINVAL);

    for (int i = 0; i < NVECTORS; i++) {
        efds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    }
    /* Nothing assigned yet: the device is told so. */
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 2), ==,
                    -ENOENT);
    /* Missing fds and out-of-range vectors are refused. */
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_MSIX_IRQ_INDEX, 0,
                                NVECTORS, efds, 2), ==, EINVAL);
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_MSIX_IRQ_INDEX, 1,
                                NVECTORS, efds, NVECTORS), ==, EINVAL);
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_MSI_IRQ_INDEX, 0,
                                1, efds, 1), ==, EINVAL);
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_MSIX_IRQ_INDEX, 0,
                                NVECTORS, efds, NVECTORS), ==, 0);
    g_assert_cmpint(g_atomic_int_get(&d->irq_updates), ==, 1);

    /* A trigger from this (non-dispatch) thread fires just that vector. */
    g_assert_true(vfu_irq_ready(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 2));
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 2), ==,
                    0);
    g_assert_true(eventfd_fired(efds[2]));
    for (int i = 0; i < NVECTORS; i++) {
        g_assert_false(eventfd_fired(efds[i]));
    }
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX,
                                    NVECTORS), ==, -EINVAL);
    g_assert_cmpint(vfu_irq_trigger(d->ctx, 99, 0), ==, -EINVAL);

    /* Masked: latched, then delivered on unmask. */
    g_assert_cmpint(cl_set_irqs(fd, VFIO_IRQ_SET_DATA_NONE |
                                VFIO_IRQ_SET_ACTION_MASK,
                                VFIO_PCI_MSIX_IRQ_INDEX, 1, 1, NULL, 0), ==,
                    0);
    g_assert_false(vfu_irq_ready(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 1));
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 1), ==,
                    -EAGAIN);
    g_assert_false(eventfd_fired(efds[1]));
    g_assert_cmpint(cl_set_irqs(fd, VFIO_IRQ_SET_DATA_NONE |
                                VFIO_IRQ_SET_ACTION_UNMASK,
                                VFIO_PCI_MSIX_IRQ_INDEX, 1, 1, NULL, 0), ==,
                    0);
    g_assert_true(eventfd_fired(efds[1]));

    /* The client may trigger a vector itself. */
    g_assert_cmpint(cl_set_irqs(fd, VFIO_IRQ_SET_DATA_NONE |
                                VFIO_IRQ_SET_ACTION_TRIGGER,
                                VFIO_PCI_MSIX_IRQ_INDEX, 3, 1, NULL, 0), ==,
                    0);
    g_assert_true(eventfd_fired(efds[3]));

    /* De-assign one vector, then disable the whole index. */
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_MSIX_IRQ_INDEX, 0,
                                1, NULL, 0), ==, 0);
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 0), ==,
                    -ENOENT);
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 3), ==,
                    0);
    g_assert_true(eventfd_fired(efds[3]));
    g_assert_cmpint(cl_set_irqs(fd, VFIO_IRQ_SET_DATA_NONE |
                                VFIO_IRQ_SET_ACTION_TRIGGER,
                                VFIO_PCI_MSIX_IRQ_INDEX, 0, 0, NULL, 0), ==,
                    0);
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 3), ==,
                    -ENOENT);

    /* INTx works the same way. */
    g_assert_cmpint(cl_set_irqs(fd, efd_trigger, VFIO_PCI_INTX_IRQ_INDEX, 0,
                                1, efds, 1), ==, 0);
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_INTX_IRQ_INDEX, 0), ==,
                    0);
    g_assert_true(eventfd_fired(efds[0]));

    /* Disconnect drops every eventfd. */
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 1));
    g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_INTX_IRQ_INDEX, 0), ==,
                    -ENOENT);
    for (int i = 0; i < NVECTORS; i++) {
        close(efds[i]);
    }
    dev_stop(d);
}

static int make_memfd(size_t size)
{
    int fd = memfd_create("guest-ram", MFD_CLOEXEC);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(ftruncate(fd, size), ==, 0);
    return fd;
}

static void test_dma_map_ptr_bounds(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    const uint64_t iova = 0x100000, size = 0x10000;
    int ram = make_memfd(0x20000);
    uint8_t *mine = mmap(NULL, 0x20000, PROT_READ | PROT_WRITE, MAP_SHARED,
                         ram, 0);
    uint8_t *p;
    uint32_t v;

    g_assert_true(mine != MAP_FAILED);
    /* The mapping starts 0x3000 into the file (an unaligned-looking map). */
    g_assert_cmpint(cl_dma_map(fd, iova, size, 0x3000, ram), ==, 0);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 1);
    g_assert_cmpint(g_atomic_int_get(&d->dma_maps), ==, 1);

    vfu_dma_lock(d->ctx);
    p = vfu_dma_ptr(d->ctx, iova + 0x10, 4, true);
    g_assert_nonnull(p);
    stl_le_p(p, 0xdeadbeef);
    g_assert_cmpuint(ldl_le_p(mine + 0x3010), ==, 0xdeadbeef);
    g_assert_nonnull(vfu_dma_ptr(d->ctx, iova, size, false));
    g_assert_nonnull(vfu_dma_ptr(d->ctx, iova + size - 1, 1, false));
    g_assert_null(vfu_dma_ptr(d->ctx, iova + size - 1, 2, false));
    g_assert_null(vfu_dma_ptr(d->ctx, iova - 1, 2, false));
    g_assert_null(vfu_dma_ptr(d->ctx, iova + size, 1, false));
    g_assert_null(vfu_dma_ptr(d->ctx, iova, 0, false));
    g_assert_null(vfu_dma_ptr(d->ctx, iova + 8, UINT64_MAX, false));
    g_assert_null(vfu_dma_ptr(d->ctx, UINT64_MAX, 2, false));
    vfu_dma_unlock(d->ctx);

    /* vfu_dma_read/write through the mapping. */
    stl_le_p(mine + 0x3000 + 0x200, 0x01020304);
    g_assert_cmpint(vfu_dma_read(d->ctx, iova + 0x200, &v, 4), ==, 0);
    g_assert_cmpuint(v, ==, 0x01020304);
    v = 0xa5a5a5a5;
    g_assert_cmpint(vfu_dma_write(d->ctx, iova + 0x300, &v, 4), ==, 0);
    g_assert_cmpuint(ldl_le_p(mine + 0x3300), ==, 0xa5a5a5a5);
    g_assert_cmpint(vfu_dma_read(d->ctx, iova + size - 2, &v, 4), ==,
                    -EFAULT);
    g_assert_cmpint(vfu_dma_read(d->ctx, 0x5000, &v, 4), ==, -EFAULT);

    /* Overlaps are refused, adjacent ranges are fine. */
    g_assert_cmpint(cl_dma_map(fd, iova + size - 0x1000, 0x2000, 0, ram), ==,
                    EEXIST);
    g_assert_cmpint(cl_dma_map(fd, iova - 0x1000, 0x2000, 0, ram), ==,
                    EEXIST);
    g_assert_cmpint(cl_dma_map(fd, iova + size, 0x1000, 0, ram), ==, 0);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 2);
    /* Wrapping ranges and file offsets the fd cannot back. */
    g_assert_cmpint(cl_dma_map(fd, UINT64_MAX - 0xfff, 0x2000, 0, ram), ==,
                    EINVAL);
    g_assert_cmpint(cl_dma_map(fd, 0x900000, 0x1000, UINT64_MAX - 0xfff,
                               ram), ==, EINVAL);
    /* Two fds for one map; the server keeps none of them. */
    {
        int two[2] = { ram, ram };
        VFIOUserDMAMap m = { sizeof(m), 3, 0, 0x900000, 0x1000 };

        g_assert_cmpint(cl_call(fd, VFIO_USER_DMA_MAP, &m, sizeof(m), two, 2,
                                NULL, NULL, NULL), ==, EINVAL);
    }

    /* Unmap must match exactly. */
    g_assert_cmpint(cl_dma_unmap(fd, 0, iova, 0x1000), ==, ENOENT);
    g_assert_cmpint(cl_dma_unmap(fd, 0, iova, size), ==, 0);
    g_assert_cmpint(g_atomic_int_get(&d->dma_unmaps), ==, 1);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 1);
    vfu_dma_lock(d->ctx);
    g_assert_null(vfu_dma_ptr(d->ctx, iova + 0x10, 4, false));
    vfu_dma_unlock(d->ctx);
    g_assert_cmpint(cl_dma_unmap(fd, 0, iova, size), ==, ENOENT);
    g_assert_cmpint(cl_dma_unmap(fd, VFIO_DMA_UNMAP_FLAG_ALL, 0, 0), ==, 0);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
    g_assert_cmpint(g_atomic_int_get(&d->dma_unmaps), ==, 2);

    munmap(mine, 0x20000);
    close(ram);
    close(fd);
    dev_stop(d);
}

/*
 * A range reaching past the end of its memfd is refused: mmap would
 * accept it and the device's first DMA there would SIGBUS the server.
 * Found by fuzz-libvfu.
 */
static void test_dma_map_past_fd_end(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    int ram = make_memfd(0x4000);

    g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x100000, 0, ram), ==, EINVAL);
    g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x2000, 0x3000, ram), ==,
                    EINVAL);
    g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x1000, 0x5000, ram), ==,
                    EINVAL);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
    /* Exactly up to the end is fine. */
    g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x1000, 0x3000, ram), ==, 0);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 1);
    close(ram);
    close(fd);
    dev_stop(d);
}

/*
 * A client may shrink a DMA fd after DMA_MAP.  A sealable memfd is sealed
 * by the server, so the shrink fails and device accesses stay valid.
 */
static void test_dma_shrink_sealed_memfd(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);
    int ram = memfd_create("guest-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    uint8_t *mine;
    uint32_t v = 0x600dcafe;

    g_assert_cmpint(ram, >=, 0);
    g_assert_cmpint(ftruncate(ram, 0x4000), ==, 0);
    mine = mmap(NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED, ram, 0);
    g_assert_true(mine != MAP_FAILED);
    g_assert_cmpint(fcntl(ram, F_GET_SEALS) & F_SEAL_SHRINK, ==, 0);
    g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x4000, 0, ram), ==, 0);
    g_assert_cmpint(fcntl(ram, F_GET_SEALS) & F_SEAL_SHRINK, ==,
                    F_SEAL_SHRINK);
    g_assert_cmpint(ftruncate(ram, 0), ==, -1);
    g_assert_cmpint(errno, ==, EPERM);
    g_assert_cmpint(vfu_dma_write(d->ctx, 0x103000, &v, 4), ==, 0);
    g_assert_cmpuint(ldl_le_p(mine + 0x3000), ==, 0x600dcafe);
    /* The client is still served. */
    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID) & 0xffff, ==, 0x1b36);
    g_assert_cmpint(g_atomic_int_get(&d->resets_lost), ==, 0);
    munmap(mine, 0x4000);
    close(ram);
    close(fd);
    dev_stop(d);
}

static int make_tmpfile(size_t size)
{
    g_autofree char *name = NULL;
    int fd = g_file_open_tmp("libvfu-ram-XXXXXX", &name, NULL);

    g_assert_cmpint(fd, >=, 0);
    unlink(name);
    g_assert_cmpint(ftruncate(fd, size), ==, 0);
    return fd;
}

/*
 * An fd that cannot be sealed (a memfd without MFD_ALLOW_SEALING, a
 * regular file) is shrunk under the server's mapping: device accesses,
 * from a device thread or from a callback on the dispatch thread, must
 * not kill the server; they fail, the client is dropped and the next one
 * is served.
 */
static void test_dma_shrink_unsealable_fd(void)
{
    TestDev *d = dev_start();
    const uint64_t iova = 0x100000;
    int fd = cl_connect(d);
    int ram = make_memfd(0x4000);
    int file = make_tmpfile(0x4000);
    VFIOUserHdr hdr;
    uint8_t *payload;
    uint32_t v = 0x12345678;
    uint8_t *p;

    /* A device thread (this one) touches a page the client cut off. */
    g_assert_cmpint(cl_dma_map(fd, iova, 0x4000, 0, ram), ==, 0);
    g_assert_cmpint(ftruncate(ram, 0x1000), ==, 0);
    g_assert_cmpint(vfu_dma_write(d->ctx, iova + 0x2000, &v, 4), ==,
                    -EFAULT);
    vfu_dma_lock(d->ctx);
    p = vfu_dma_ptr(d->ctx, iova + 0x3000, 8, true);
    g_assert_nonnull(p);
    stl_le_p(p, 0xdeadbeef);
    g_assert_cmpuint(ldl_le_p(p + 4), ==, 0);
    vfu_dma_unlock(d->ctx);
    /* The client's next message finds itself dropped. */
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0,
                            NULL, NULL, NULL), ==, -1);
    g_assert_true(wait_for(&d->resets_lost, 1));
    g_assert_cmpint(g_atomic_int_get(&d->resets_client), ==, 0);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
    close(fd);

    /* The device itself DMAs from a shrunk file while serving a message. */
    fd = cl_connect(d);
    g_assert_cmpint(cl_dma_map(fd, iova, 0x4000, 0, file), ==, 0);
    g_assert_cmpint(ftruncate(file, 0), ==, 0);
    d->dma_probe_iova = iova + 0x40;
    d->dma_probe_ret = 1;
    g_assert_cmpint(cl_region_write(fd, VFIO_PCI_BAR4_REGION_INDEX,
                                    BAR4_DMA_PROBE, &v, 4), ==, 0);
    g_assert_cmpint(d->dma_probe_ret, ==, -EFAULT);
    g_assert_false(cl_recv(fd, &hdr, &payload, NULL));
    g_assert_true(wait_for(&d->resets_lost, 2));
    close(fd);

    /* The next client is served as usual. */
    close(ram);
    ram = make_memfd(0x4000);
    fd = cl_connect(d);
    g_assert_cmpint(cl_dma_map(fd, iova, 0x4000, 0, ram), ==, 0);
    g_assert_cmpint(vfu_dma_write(d->ctx, iova + 0x2000, &v, 4), ==, 0);
    g_assert_cmpint(vfu_dma_read(d->ctx, iova + 0x2000, &v, 4), ==, 0);
    g_assert_cmpuint(v, ==, 0x12345678);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 3));
    close(file);
    close(ram);
    dev_stop(d);
}

static void test_dma_max_maps(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect(d);

    /* cl_version() offered 16 maps; the 17th is refused. */
    for (int i = 0; i < 16; i++) {
        g_assert_cmpint(cl_dma_map(fd, 0x10000 * (i + 1), 0x1000, 0, -1), ==,
                        0);
    }
    g_assert_cmpint(cl_dma_map(fd, 0x10000000, 0x1000, 0, -1), ==, ENOSPC);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 16);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 1));
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
    dev_stop(d);
}

typedef struct DmaJob {
    VfuCtx *ctx;
    uint64_t iova;
    int write_ret;
    int read_ret;
    uint8_t data[6000];
} DmaJob;

static gpointer dma_job_thread(gpointer opaque)
{
    DmaJob *j = opaque;

    j->write_ret = vfu_dma_write(j->ctx, j->iova + 0x10, "hello", 5);
    j->read_ret = vfu_dma_read(j->ctx, j->iova + 0x100, j->data,
                               sizeof(j->data));
    return NULL;
}

/* Receives one server->client DMA request and answers it. */
static void serve_dma_request(int fd, uint16_t cmd, uint64_t address,
                              uint64_t count, uint8_t fill)
{
    g_autofree uint8_t *payload = NULL;
    g_autofree uint8_t *reply = NULL;
    const VFIOUserDMARW *rw;
    VFIOUserDMARW *out;
    VFIOUserHdr hdr;
    size_t rlen;

    g_assert_true(cl_recv(fd, &hdr, &payload, NULL));
    g_assert_cmpuint(hdr.command, ==, cmd);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_COMMAND);
    g_assert_true(vfio_user_dma_rw_decode(payload, hdr.size - sizeof(hdr),
                                          cmd == VFIO_USER_DMA_WRITE, 4096, 0,
                                          &rw, NULL, &error_abort));
    g_assert_cmpuint(rw->address, ==, address);
    g_assert_cmpuint(rw->count, ==, count);
    if (cmd == VFIO_USER_DMA_WRITE) {
        g_assert_cmpmem(rw->data, count, "hello", 5);
    }
    rlen = sizeof(*out) + (cmd == VFIO_USER_DMA_READ ? count : 0);
    reply = g_malloc0(rlen);
    out = (VFIOUserDMARW *)reply;
    out->address = address;
    out->count = count;
    if (cmd == VFIO_USER_DMA_READ) {
        memset(out->data, fill, count);
    }
    cl_send(fd, hdr.id, cmd, VFIO_USER_F_TYPE_REPLY, reply, rlen, NULL, 0);
}

static void test_dma_message_fallback(void)
{
    TestDev *d = dev_start();
    int fd = cl_connect_raw(d);
    const uint64_t iova = 0x200000;
    DmaJob job = { .ctx = d->ctx, .iova = iova };
    GThread *t;
    uint32_t v = 1;

    /* The client accepts at most 4 KiB per message: reads get split. */
    cl_version(fd, 4096);
    g_assert_cmpint(cl_dma_map(fd, iova, 0x4000, 0, -1), ==, 0);
    vfu_dma_lock(d->ctx);
    g_assert_null(vfu_dma_ptr(d->ctx, iova, 4, false));
    vfu_dma_unlock(d->ctx);

    /* From a device thread: the dispatch thread delivers the replies. */
    t = g_thread_new("dma-job", dma_job_thread, &job);
    serve_dma_request(fd, VFIO_USER_DMA_WRITE, iova + 0x10, 5, 0);
    serve_dma_request(fd, VFIO_USER_DMA_READ, iova + 0x100, 4096, 0x11);
    serve_dma_request(fd, VFIO_USER_DMA_READ, iova + 0x100 + 4096,
                      sizeof(job.data) - 4096, 0x22);
    g_thread_join(t);
    g_assert_cmpint(job.write_ret, ==, 0);
    g_assert_cmpint(job.read_ret, ==, 0);
    g_assert_cmpuint(job.data[0], ==, 0x11);
    g_assert_cmpuint(job.data[4095], ==, 0x11);
    g_assert_cmpuint(job.data[4096], ==, 0x22);
    g_assert_cmpuint(job.data[sizeof(job.data) - 1], ==, 0x22);

    /* From the dispatch thread itself, inside a region write callback. */
    d->dma_probe_iova = iova + 0x40;
    cl_send(fd, 0x4242, VFIO_USER_REGION_WRITE, 0, NULL, 0, NULL, 0);
    {
        /* An empty REGION_WRITE first: refused, connection kept. */
        VFIOUserHdr hdr;
        g_autofree uint8_t *payload = NULL;

        g_assert_true(cl_recv(fd, &hdr, &payload, NULL));
        g_assert_true(hdr.flags & VFIO_USER_F_ERROR);
        g_assert_cmpuint(hdr.error_reply, ==, EINVAL);
    }
    {
        g_autofree VFIOUserRegionRW *rw = g_malloc0(sizeof(*rw) + 4);
        VFIOUserHdr hdr;
        g_autofree uint8_t *payload = NULL;

        rw->offset = BAR4_DMA_PROBE;
        rw->region = VFIO_PCI_BAR4_REGION_INDEX;
        rw->count = 4;
        memcpy(rw->data, &v, 4);
        cl_send(fd, 77, VFIO_USER_REGION_WRITE, 0, rw, sizeof(*rw) + 4, NULL,
                0);
        serve_dma_request(fd, VFIO_USER_DMA_READ, iova + 0x40, 4, 0x5e);
        g_assert_true(cl_recv(fd, &hdr, &payload, NULL));
        g_assert_cmpuint(hdr.id, ==, 77);
        g_assert_false(hdr.flags & VFIO_USER_F_ERROR);
    }
    g_assert_cmpint(d->dma_probe_ret, ==, 0);
    g_assert_cmpuint(d->dma_probe[0], ==, 0x5e);
    g_assert_cmpuint(d->dma_probe[3], ==, 0x5e);

    /* A request pending when the client goes away fails, not hangs. */
    job.iova = iova;
    t = g_thread_new("dma-job", dma_job_thread, &job);
    {
        VFIOUserHdr hdr;
        g_autofree uint8_t *payload = NULL;

        g_assert_true(cl_recv(fd, &hdr, &payload, NULL));
        g_assert_cmpuint(hdr.command, ==, VFIO_USER_DMA_WRITE);
    }
    close(fd);
    g_thread_join(t);
    g_assert_cmpint(job.write_ret, ==, -ENOTCONN);
    g_assert_true(wait_for(&d->resets_lost, 1));
    dev_stop(d);
}

static void test_dma_message_split_by_server_limit(void)
{
    VFIOUserCaps small = { 8, 4096, 64, 4096 };
    TestDev *d = dev_start_caps(&small);
    int fd = cl_connect_raw(d);
    const uint64_t iova = 0x200000;
    DmaJob job = { .ctx = d->ctx, .iova = iova };
    VFIOUserCaps caps = cl_version(fd, 1 << 20);
    GThread *t;

    /* The client takes 1 MiB, but replies must fit the server's 4 KiB. */
    g_assert_cmpuint(caps.max_data_xfer_size, ==, 4096);
    g_assert_cmpint(cl_dma_map(fd, iova, 0x4000, 0, -1), ==, 0);
    t = g_thread_new("dma-job", dma_job_thread, &job);
    serve_dma_request(fd, VFIO_USER_DMA_WRITE, iova + 0x10, 5, 0);
    serve_dma_request(fd, VFIO_USER_DMA_READ, iova + 0x100, 4096, 0x33);
    serve_dma_request(fd, VFIO_USER_DMA_READ, iova + 0x100 + 4096,
                      sizeof(job.data) - 4096, 0x44);
    g_thread_join(t);
    g_assert_cmpint(job.read_ret, ==, 0);
    g_assert_cmpuint(job.data[sizeof(job.data) - 1], ==, 0x44);
    /* And a client request above the server's limit is refused. */
    {
        g_autofree uint8_t *buf = g_malloc0(4097);

        g_assert_cmpint(cl_region_read(fd, VFIO_PCI_BAR4_REGION_INDEX, 0, buf,
                                       4097), ==, E2BIG);
    }
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 1));
    dev_stop(d);
}

static void test_disconnect_resets_and_reconnects(void)
{
    TestDev *d = dev_start();
    int ram = make_memfd(0x10000);
    int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    int fds_before = count_fds();
    int fd;

    for (int round = 1; round <= 3; round++) {
        fd = cl_connect(d);
        g_assert_cmpint(cl_dma_map(fd, 0x100000, 0x10000, 0, ram), ==, 0);
        g_assert_cmpint(cl_set_irqs(fd, VFIO_IRQ_SET_DATA_EVENTFD |
                                    VFIO_IRQ_SET_ACTION_TRIGGER,
                                    VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, &efd, 1),
                        ==, 0);
        cfg_write32(fd, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 1);
        close(fd);
        g_assert_true(wait_for(&d->resets_lost, round));
        g_assert_cmpint(g_atomic_int_get(&d->dma_unmaps), ==, round);
        g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
        g_assert_cmpint(vfu_irq_trigger(d->ctx, VFIO_PCI_MSIX_IRQ_INDEX, 0),
                        ==, -ENOENT);
    }
    /* The next client finds a freshly reset device. */
    fd = cl_connect(d);
    g_assert_cmpuint(cfg_read32(fd, PCI_COMMAND) & 0xffff, ==, 0);
    g_assert_cmpint(g_atomic_int_get(&d->resets_client), ==, 0);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, 4));
    /* Received eventfds, DMA fds and sockets were all closed. */
    g_assert_cmpint(count_fds(), ==, fds_before);
    close(efd);
    close(ram);
    dev_stop(d);
}

static void test_garbage_input(void)
{
    TestDev *d = dev_start();
    g_autoptr(GRand) rand = g_rand_new_with_seed(0x5eed);
    int fds_before = count_fds();
    int lost = 0;
    int fd;

    /* Unknown command: ENOSYS, and the connection carries on. */
    fd = cl_connect(d);
    g_assert_cmpint(cl_call(fd, 99, "x", 1, NULL, 0, NULL, NULL, NULL), ==,
                    ENOSYS);
    g_assert_cmpint(cl_call(fd, VFIO_USER_DEVICE_GET_REGION_IO_FDS, NULL, 0,
                            NULL, 0, NULL, NULL, NULL), ==, ENOSYS);
    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID), ==, 0x00101b36);
    /* A stray reply nobody asked for is ignored. */
    cl_send(fd, 5, VFIO_USER_DMA_READ, VFIO_USER_F_TYPE_REPLY, NULL, 0,
            NULL, 0);
    /* No_reply: the server stays silent, the next call still works. */
    cl_send(fd, 6, VFIO_USER_DEVICE_RESET, VFIO_USER_F_NO_REPLY, NULL, 0,
            NULL, 0);
    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID), ==, 0x00101b36);
    g_assert_cmpint(g_atomic_int_get(&d->resets_client), ==, 1);
    /* A message that arrives in pieces is reassembled. */
    {
        uint8_t msg[16 + 16];
        VFIOUserRegionRW rw = { .offset = PCI_VENDOR_ID,
                                .region = VFIO_PCI_CONFIG_REGION_INDEX,
                                .count = 2 };
        VFIOUserHdr h;
        g_autofree uint8_t *payload = NULL;

        vfio_user_hdr_init((VFIOUserHdr *)msg, 9, VFIO_USER_REGION_READ,
                           sizeof(msg), 0);
        memcpy(msg + 16, &rw, sizeof(rw));
        for (size_t i = 0; i < sizeof(msg); i += 5) {
            qemu_send_with_fds(fd, msg + i, MIN(5, sizeof(msg) - i), NULL, 0,
                               &error_abort);
            g_usleep(100);
        }
        g_assert_true(cl_recv(fd, &h, &payload, NULL));
        g_assert_cmpuint(h.id, ==, 9);
        g_assert_cmpuint(h.size, ==, 16 + 16 + 2);
        g_assert_cmpuint(lduw_le_p(payload + 16), ==, 0x1b36);
    }
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, ++lost));

    /* Framing errors drop the client. */
    {
        static const uint32_t bad_sizes[] = { 0, 8, 15, 0x7fffffff,
                                              UINT32_MAX };

        for (size_t i = 0; i < ARRAY_SIZE(bad_sizes); i++) {
            VFIOUserHdr h;
            uint8_t *payload;

            fd = cl_connect(d);
            vfio_user_hdr_init(&h, 1, VFIO_USER_DEVICE_GET_INFO,
                               bad_sizes[i], 0);
            g_assert_cmpint(qemu_send_with_fds(fd, &h, sizeof(h), NULL, 0,
                                               &error_abort), ==, sizeof(h));
            g_assert_false(cl_recv(fd, &h, &payload, NULL));
            close(fd);
            g_assert_true(wait_for(&d->resets_lost, ++lost));
        }
    }
    /* More fds than max_msg_fds (8): dropped, fds not leaked into use. */
    {
        int many[9];
        VFIOUserDMAMap m = { sizeof(m), 3, 0, 0x100000, 0x1000 };
        VFIOUserHdr h;
        uint8_t *payload;

        for (int i = 0; i < 9; i++) {
            many[i] = eventfd(0, EFD_CLOEXEC);
        }
        fd = cl_connect(d);
        cl_send(fd, 1, VFIO_USER_DMA_MAP, 0, &m, sizeof(m), many, 9);
        g_assert_false(cl_recv(fd, &h, &payload, NULL));
        close(fd);
        g_assert_true(wait_for(&d->resets_lost, ++lost));
        for (int i = 0; i < 9; i++) {
            close(many[i]);
        }
    }
    /* A message cut short by the client closing. */
    {
        VFIOUserHdr h;

        fd = cl_connect(d);
        vfio_user_hdr_init(&h, 1, VFIO_USER_REGION_WRITE, 16 + 100, 0);
        qemu_send_with_fds(fd, &h, sizeof(h), NULL, 0, &error_abort);
        qemu_send_with_fds(fd, "abc", 3, NULL, 0, &error_abort);
        close(fd);
        g_assert_true(wait_for(&d->resets_lost, ++lost));
    }

    /* Random messages, after a valid VERSION: no crash, no hang. */
    for (int i = 0; i < 300; i++) {
        uint32_t len = g_rand_int_range(rand, 0, 200);
        g_autofree uint8_t *buf = g_malloc(16 + len);
        VFIOUserHdr *h = (VFIOUserHdr *)buf;

        for (uint32_t j = 0; j < 16 + len; j++) {
            buf[j] = g_rand_int(rand);
        }
        h->command = g_rand_int_range(rand, 0, 20);
        h->flags &= g_rand_boolean(rand) ? 0 : 0x3f;
        if (g_rand_boolean(rand)) {
            h->size = 16 + len;     /* well-framed, random content */
        }
        fd = cl_connect(d);
        qemu_send_with_fds(fd, buf, 16 + len, NULL, 0, NULL);
        close(fd);
        g_assert_true(wait_for(&d->resets_lost, ++lost));
    }

    /* Still serving. */
    fd = cl_connect(d);
    g_assert_cmpuint(cfg_read32(fd, PCI_VENDOR_ID), ==, 0x00101b36);
    g_assert_cmpuint(vfu_dma_count(d->ctx), ==, 0);
    close(fd);
    g_assert_true(wait_for(&d->resets_lost, ++lost));
    g_assert_cmpint(count_fds(), ==, fds_before);
    dev_stop(d);
}

static void test_socketpair_attach(void)
{
    TestDev *d = g_new0(TestDev, 1);
    VfuRegionInfo bar0 = {
        .size = 0x1000, .flags = VFIO_REGION_INFO_FLAG_READ, .fd = -1,
        .access = bar4_access,
    };
    Error *err = NULL;
    VfuCtx *ctx = vfu_create_ctx(NULL, &dev_ops, d, NULL, &error_abort);
    int sv[2];

    /* Bad descriptions are refused up front. */
    bar0.size = 0x1800;
    bar0.fd = -1;
    g_assert_true(vfu_pci_init(ctx, &(VfuPciIds){ .vendor_id = 1 },
                               &error_abort));
    g_assert_false(vfu_setup_region(ctx, 0, &bar0, &err));
    error_free_or_abort(&err);
    bar0.size = 0x1000;
    bar0.nr_sparse = 1;
    bar0.sparse = &(VfuSparseArea){ 0x800, 0x1000 };
    g_assert_false(vfu_setup_region(ctx, 0, &bar0, &err));
    error_free_or_abort(&err);
    bar0.nr_sparse = 0;
    g_assert_true(vfu_setup_region(ctx, 0, &bar0, &error_abort));
    g_assert_false(vfu_setup_irq(ctx, VFIO_PCI_INTX_IRQ_INDEX, 2, &err));
    error_free_or_abort(&err);
    g_assert_cmpuint(vfu_pci_add_msix_cap(ctx, 0, 0, 0, 0, 0, &err), ==, 0);
    error_free_or_abort(&err);
    g_assert_cmpuint(vfu_pci_add_msix_cap(ctx, 4, 6, 0, 0, 0, &err), ==, 0);
    error_free_or_abort(&err);
    g_assert_null(vfu_create_ctx(NULL, &(VfuDeviceOps){ 0 }, d, NULL, &err));
    error_free_or_abort(&err);

    /* Driven synchronously on this thread through a socketpair. */
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                    ==, 0);
    g_assert_true(vfu_attach_fd(ctx, sv[1], &error_abort));
    g_assert_true(vfu_is_attached(ctx));
    g_assert_cmpint(vfu_get_poll_fd(ctx), ==, sv[1]);
    {
        VFIOUserCaps caps;
        g_autofree void *req = NULL;
        size_t len;
        VFIOUserHdr hdr;
        g_autofree uint8_t *payload = NULL;

        vfio_user_caps_init_default(&caps);
        req = vfio_user_version_build(0, 1, &caps, &len);
        cl_send(sv[0], 1, VFIO_USER_VERSION, 0, req, len, NULL, 0);
        g_assert_true(vfu_dispatch(ctx, &error_abort));
        g_assert_true(cl_recv(sv[0], &hdr, &payload, NULL));
        g_assert_false(hdr.flags & VFIO_USER_F_ERROR);
    }
    close(sv[0]);
    g_assert_true(vfu_dispatch(ctx, &error_abort));
    g_assert_false(vfu_is_attached(ctx));
    g_assert_cmpint(d->resets_lost, ==, 1);
    /* No listener: nothing more to dispatch. */
    g_assert_false(vfu_dispatch(ctx, &err));
    error_free_or_abort(&err);
    vfu_destroy_ctx(ctx);
    g_free(d);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/libvfu/version/negotiates-caps",
                    test_version_negotiation);
    g_test_add_func("/libvfu/version/required-first-and-checked",
                    test_version_required_and_checked);
    g_test_add_func("/libvfu/device-info", test_device_info);
    g_test_add_func("/libvfu/region-info/fd-caps-and-argsz-retry",
                    test_region_info_fd_and_retry);
    g_test_add_func("/libvfu/region-rw/reaches-callbacks",
                    test_region_rw_callbacks);
    g_test_add_func("/libvfu/config/bar-sizing-msix-and-reset",
                    test_config_space);
    g_test_add_func("/libvfu/irq/eventfd-trigger-mask", test_irqs);
    g_test_add_func("/libvfu/dma/map-ptr-bounds-unmap",
                    test_dma_map_ptr_bounds);
    g_test_add_func("/libvfu/dma/map-past-fd-end-refused",
                    test_dma_map_past_fd_end);
    g_test_add_func("/libvfu/dma/shrink/sealed-memfd-refuses",
                    test_dma_shrink_sealed_memfd);
    g_test_add_func("/libvfu/dma/shrink/unsealable-fd-drops-client",
                    test_dma_shrink_unsealable_fd);
    g_test_add_func("/libvfu/dma/max-maps", test_dma_max_maps);
    g_test_add_func("/libvfu/dma/message-fallback",
                    test_dma_message_fallback);
    g_test_add_func("/libvfu/dma/message-split-by-server-limit",
                    test_dma_message_split_by_server_limit);
    g_test_add_func("/libvfu/disconnect/resets-and-accepts-next",
                    test_disconnect_resets_and_reconnects);
    g_test_add_func("/libvfu/robustness/garbage-input", test_garbage_input);
    g_test_add_func("/libvfu/context/socketpair-and-setup-errors",
                    test_socketpair_attach);
    return g_test_run();
}
