/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user client transport against a fake server thread on a
 * socketpair: negotiation, every op, fd passing, chunking, server
 * requests, stale replies after a timeout, and a server that misbehaves
 * or dies.
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "hw/vfio-user/client.h"
#include "qemu/vfio-region-info.h"

#define REGION_SIZE 0x10000
#define SERVER_MAX_FDS 64

typedef struct IrqMsg {
    uint32_t flags;
    uint32_t start;
    uint32_t count;
    size_t nfds;
    uint32_t payload_len;
    uint8_t data[2];            /* DATA_BOOL bytes, when present */
} IrqMsg;

typedef struct FakeServer {
    int fd;
    GThread *thread;
    /* behaviour */
    uint16_t major;
    bool version_error;
    bool close_on_version;
    uint32_t max_msg_fds;
    uint64_t max_xfer;
    int region_fd;                  /* passed with region 0 info, or -1 */
    GByteArray *region_info;        /* reply for region 0 info */
    bool short_read_reply;
    int write_errno;
    bool die_on_reset;
    bool stall_reset;               /* reply late, once released */
    bool fd_on_reset_reply;
    bool garbage_on_irq_info;
    bool dma_read_on_write;         /* ask the client for DMA first */
    bool flood_on_reset;            /* DMA_WRITEs until released */
    bool stall_first_read;          /* reply to one read late */
    bool wrong_region_index;
    bool small_clears_caps;         /* short region info: no CAPS flag */
    /* state and observations, under lock */
    GMutex lock;
    GCond cond;
    bool released;
    bool dma_write_replied;
    uint8_t region[REGION_SIZE];
    uint8_t dma_seen[16];
    GArray *irq_msgs;
    uint32_t max_chunk;
    int posted_writes;
    int dma_maps;
} FakeServer;

static void server_send(FakeServer *s, const VFIOUserHdr *req, uint32_t err,
                        const void *payload, size_t len, int fd)
{
    g_autofree uint8_t *buf = g_malloc0(sizeof(VFIOUserHdr) + len);
    VFIOUserHdr *hdr = (VFIOUserHdr *)buf;

    vfio_user_hdr_init(hdr, req->id, req->command, sizeof(*hdr) + len,
                       VFIO_USER_F_TYPE_REPLY |
                       (err ? VFIO_USER_F_ERROR : 0));
    hdr->error_reply = err;
    if (len) {
        memcpy(buf + sizeof(*hdr), payload, len);
    }
    qemu_send_with_fds(s->fd, buf, sizeof(*hdr) + len, &fd, fd >= 0,
                       &error_abort);
}

/* Returns false at end of file. */
static bool server_recv(FakeServer *s, VFIOUserHdr *hdr, uint8_t **payload,
                        int *fds, size_t *nfds)
{
    size_t none = 0;

    *nfds = SERVER_MAX_FDS;
    if (qemu_recv_with_fds(s->fd, hdr, sizeof(*hdr), fds, nfds, NULL) <= 0) {
        return false;
    }
    *payload = g_malloc0(hdr->size - sizeof(*hdr) + 1);
    if (hdr->size > sizeof(*hdr)) {
        g_assert_cmpint(qemu_recv_with_fds(s->fd, *payload,
                                           hdr->size - sizeof(*hdr), NULL,
                                           &none, NULL), >, 0);
    }
    return true;
}

static void server_version(FakeServer *s, VFIOUserHdr *hdr)
{
    VFIOUserCaps caps = {
        .max_msg_fds = s->max_msg_fds,
        .max_data_xfer_size = s->max_xfer,
        .max_dma_maps = 100,
        .pgsizes = 4096,
    };
    g_autofree void *reply = NULL;
    size_t len;

    reply = vfio_user_version_build(s->major, 1, &caps, &len);
    server_send(s, hdr, 0, reply, len, -1);
}

static void server_region_info(FakeServer *s, VFIOUserHdr *hdr,
                               const uint8_t *payload)
{
    struct vfio_region_info req, *info;

    memcpy(&req, payload, sizeof(req));
    g_assert_cmpuint(req.index, ==, 0);
    info = (void *)s->region_info->data;
    if (req.argsz < s->region_info->len) {
        struct vfio_region_info small = *info;

        small.argsz = s->region_info->len;
        small.cap_offset = 0;
        if (s->small_clears_caps) {
            /* As libvfu and libvfio-user answer: no chain, no flag. */
            small.flags &= ~VFIO_REGION_INFO_FLAG_CAPS;
        }
        server_send(s, hdr, 0, &small, sizeof(small), -1);
        return;
    }
    if (s->wrong_region_index) {
        info->index = 1;
    }
    server_send(s, hdr, 0, info, s->region_info->len, s->region_fd);
    info->index = 0;
}

static void server_region_rw(FakeServer *s, VFIOUserHdr *hdr,
                             uint8_t *payload, bool is_write)
{
    VFIOUserRegionRW *rw = (void *)payload;

    if (!is_write && s->stall_first_read) {
        s->stall_first_read = false;
        g_mutex_lock(&s->lock);
        while (!s->released) {
            g_cond_wait(&s->cond, &s->lock);
        }
        g_mutex_unlock(&s->lock);
    }

    g_assert_cmpuint(rw->offset + rw->count, <=, REGION_SIZE);
    g_mutex_lock(&s->lock);
    s->max_chunk = MAX(s->max_chunk, rw->count);
    if (is_write) {
        memcpy(s->region + rw->offset, rw->data, rw->count);
        if (hdr->flags & VFIO_USER_F_NO_REPLY) {
            s->posted_writes++;
        }
    }
    g_mutex_unlock(&s->lock);
    if (is_write) {
        if (s->write_errno) {
            server_send(s, hdr, s->write_errno, NULL, 0, -1);
        } else if (!(hdr->flags & VFIO_USER_F_NO_REPLY)) {
            server_send(s, hdr, 0, rw, sizeof(*rw), -1);
        }
    } else {
        g_autofree uint8_t *reply = g_malloc(sizeof(*rw) + rw->count);

        memcpy(reply, rw, sizeof(*rw));
        memcpy(reply + sizeof(*rw), s->region + rw->offset, rw->count);
        server_send(s, hdr, 0, reply,
                    sizeof(*rw) + rw->count - s->short_read_reply, -1);
    }
}

/* Reads guest memory through the client while a request is pending. */
static void server_dma_read(FakeServer *s)
{
    struct {
        VFIOUserHdr hdr;
        VFIOUserDMARW rw;
    } req = { .rw = { .address = 0x1000, .count = 16 } };
    g_autofree uint8_t *payload = NULL;
    int fds[SERVER_MAX_FDS];
    VFIOUserHdr hdr;
    size_t nfds;

    vfio_user_hdr_init(&req.hdr, 0x7000, VFIO_USER_DMA_READ, sizeof(req),
                       VFIO_USER_F_TYPE_COMMAND);
    qemu_send_with_fds(s->fd, &req, sizeof(req), NULL, 0, &error_abort);
    g_assert_true(server_recv(s, &hdr, &payload, fds, &nfds));
    g_assert_cmpuint(hdr.id, ==, 0x7000);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_REPLY);
    g_assert_cmpuint(hdr.size, ==, sizeof(req) + 16);
    g_mutex_lock(&s->lock);
    memcpy(s->dma_seen, payload + sizeof(req.rw), 16);
    g_mutex_unlock(&s->lock);
}

#define FLOOD_REQUESTS 10

/* Queues requests that need no reply, then holds the reply back. */
static void server_flood(FakeServer *s)
{
    uint64_t storage[5];
    VFIOUserHdr *hdr = (VFIOUserHdr *)storage;
    VFIOUserDMARW *rw = (VFIOUserDMARW *)(hdr + 1);
    int i;

    vfio_user_hdr_init(hdr, 0x7100, VFIO_USER_DMA_WRITE, sizeof(storage),
                       VFIO_USER_F_TYPE_COMMAND | VFIO_USER_F_NO_REPLY);
    *rw = (VFIOUserDMARW) { .address = 0x20, .count = 8 };
    memcpy(rw->data, "flooding", 8);
    for (i = 0; i < FLOOD_REQUESTS; i++) {
        qemu_send_with_fds(s->fd, storage, sizeof(storage), NULL, 0,
                           &error_abort);
    }
    g_mutex_lock(&s->lock);
    while (!s->released) {
        g_cond_wait(&s->cond, &s->lock);
    }
    g_mutex_unlock(&s->lock);
}

static gpointer server_thread(gpointer opaque)
{
    FakeServer *s = opaque;

    for (;;) {
        g_autofree uint8_t *payload = NULL;
        int fds[SERVER_MAX_FDS];
        VFIOUserHdr hdr;
        size_t nfds, i;

        if (!server_recv(s, &hdr, &payload, fds, &nfds)) {
            break;
        }
        if ((hdr.flags & VFIO_USER_F_TYPE_MASK) == VFIO_USER_F_TYPE_REPLY) {
            /* The client's answer to an unsolicited DMA_WRITE. */
            g_mutex_lock(&s->lock);
            s->dma_write_replied = hdr.command == VFIO_USER_DMA_WRITE &&
                                   !(hdr.flags & VFIO_USER_F_ERROR);
            g_cond_broadcast(&s->cond);
            g_mutex_unlock(&s->lock);
            continue;
        }
        switch (hdr.command) {
        case VFIO_USER_VERSION:
            if (s->close_on_version) {
                goto out;
            }
            if (s->version_error) {
                server_send(s, &hdr, ENOTSUP, NULL, 0, -1);
            } else {
                server_version(s, &hdr);
            }
            break;
        case VFIO_USER_DEVICE_GET_INFO: {
            VFIOUserDeviceInfo info = {
                16, VFIO_DEVICE_FLAGS_PCI | VFIO_DEVICE_FLAGS_RESET, 9, 5,
            };
            server_send(s, &hdr, 0, &info, sizeof(info), -1);
            break;
        }
        case VFIO_USER_DEVICE_GET_REGION_INFO:
            server_region_info(s, &hdr, payload);
            break;
        case VFIO_USER_REGION_READ:
            server_region_rw(s, &hdr, payload, false);
            break;
        case VFIO_USER_REGION_WRITE:
            if (s->dma_read_on_write) {
                server_dma_read(s);
            }
            server_region_rw(s, &hdr, payload, true);
            break;
        case VFIO_USER_DEVICE_GET_IRQ_INFO: {
            struct vfio_irq_info info;

            if (s->garbage_on_irq_info) {
                VFIOUserHdr bad = { .id = hdr.id, .command = hdr.command,
                                    .size = 0xffffffff,
                                    .flags = VFIO_USER_F_TYPE_REPLY };
                qemu_send_with_fds(s->fd, &bad, sizeof(bad), NULL, 0,
                                   &error_abort);
                break;
            }
            memcpy(&info, payload, sizeof(info));
            info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE;
            info.count = info.index == VFIO_PCI_MSIX_IRQ_INDEX ? 16 : 1;
            server_send(s, &hdr, 0, &info, sizeof(info), -1);
            break;
        }
        case VFIO_USER_DEVICE_SET_IRQS: {
            struct vfio_irq_set set;
            IrqMsg m;

            memcpy(&set, payload, sizeof(set));
            m = (IrqMsg) {
                .flags = set.flags, .start = set.start, .count = set.count,
                .nfds = nfds, .payload_len = hdr.size - sizeof(hdr),
            };
            memcpy(m.data, payload + sizeof(set),
                   MIN(sizeof(m.data), m.payload_len - sizeof(set)));
            /* Tell each eventfd which vector it was assigned to. */
            for (i = 0; i < nfds; i++) {
                uint64_t v = set.start + i + 1;

                g_assert_cmpint(write(fds[i], &v, sizeof(v)), ==, sizeof(v));
            }
            g_mutex_lock(&s->lock);
            g_array_append_val(s->irq_msgs, m);
            g_mutex_unlock(&s->lock);
            server_send(s, &hdr, 0, NULL, 0, -1);
            break;
        }
        case VFIO_USER_DEVICE_RESET:
            if (s->die_on_reset) {
                goto out;
            }
            if (s->flood_on_reset) {
                server_flood(s);
            }
            if (s->stall_reset) {
                g_mutex_lock(&s->lock);
                while (!s->released) {
                    g_cond_wait(&s->cond, &s->lock);
                }
                g_mutex_unlock(&s->lock);
            }
            server_send(s, &hdr, 0, NULL, 0,
                        s->fd_on_reset_reply ? s->region_fd : -1);
            break;
        case VFIO_USER_DMA_MAP:
            g_assert_cmpuint(nfds, ==, 1);
            g_mutex_lock(&s->lock);
            s->dma_maps++;
            g_mutex_unlock(&s->lock);
            server_send(s, &hdr, 0, NULL, 0, -1);
            break;
        case VFIO_USER_DMA_UNMAP:
            server_send(s, &hdr, 0, payload, hdr.size - sizeof(hdr), -1);
            break;
        default:
            server_send(s, &hdr, ENOSYS, NULL, 0, -1);
            break;
        }
        for (i = 0; i < nfds; i++) {
            close(fds[i]);
        }
    }
out:
    close(s->fd);
    s->fd = -1;
    return NULL;
}

static FakeServer *server_new(void)
{
    static const VFIOSparseArea areas[] = { { 0, 0x1000 }, { 0x2000, 0x2000 } };
    FakeServer *s = g_new0(FakeServer, 1);
    VFIORegionInfoBuilder *b;
    struct vfio_region_info *info;
    size_t len;

    s->major = VFIO_USER_MAJOR;
    s->max_msg_fds = 8;
    s->max_xfer = 4096;
    /* A well-behaved server: a sealable memfd as large as the region. */
    s->region_fd = memfd_create("fake-bar0", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    g_assert_cmpint(s->region_fd, >=, 0);
    g_assert_cmpint(ftruncate(s->region_fd, REGION_SIZE), ==, 0);
    g_assert_cmpint(pwrite(s->region_fd, "bar0-data", 9, 0), ==, 9);
    b = vfio_region_info_builder_new(0, VFIO_REGION_INFO_FLAG_READ |
                                     VFIO_REGION_INFO_FLAG_WRITE |
                                     VFIO_REGION_INFO_FLAG_MMAP,
                                     REGION_SIZE, 0);
    vfio_region_info_builder_add_sparse(b, areas, ARRAY_SIZE(areas));
    vfio_region_info_builder_add_msix_mappable(b);
    info = vfio_region_info_builder_finish(b, &len);
    s->region_info = g_byte_array_new_take((guint8 *)info, len);
    s->irq_msgs = g_array_new(false, false, sizeof(IrqMsg));
    g_mutex_init(&s->lock);
    g_cond_init(&s->cond);
    return s;
}

/* Starts the server thread; returns the client end of the socketpair. */
static int server_start(FakeServer *s)
{
    int sv[2];

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                    ==, 0);
    s->fd = sv[1];
    s->thread = g_thread_new("fake-vfio-user", server_thread, s);
    return sv[0];
}

static void server_free(FakeServer *s)
{
    g_mutex_lock(&s->lock);
    s->released = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    g_thread_join(s->thread);
    close(s->region_fd);
    g_byte_array_unref(s->region_info);
    g_array_free(s->irq_msgs, true);
    g_mutex_clear(&s->lock);
    g_cond_clear(&s->cond);
    g_free(s);
}

/* Connects a VFIODevice to a started server. */
static void device_open(VFIODevice *dev, FakeServer *s, uint32_t timeout_ms)
{
    VFIOUserClient *c = vfio_user_client_new(server_start(s), "fake",
                                             timeout_ms, &error_abort);

    memset(dev, 0, sizeof(*dev));
    dev->name = (char *)"fake";
    g_assert_true(vfio_user_device_attach(dev, c, &error_abort));
}

static void device_close(VFIODevice *dev)
{
    vfio_device_close(dev);
    g_assert_null(dev->ops);
}

/* Open fds of this process, to catch leaked received fds. */
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

static void assert_error_contains(Error *err, const char *needle)
{
    g_assert_nonnull(err);
    if (!strstr(error_get_pretty(err), needle)) {
        g_error("error '%s' does not mention '%s'", error_get_pretty(err),
                needle);
    }
}

static void test_negotiation(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    const VFIOUserCaps *caps;

    s->max_msg_fds = 2;
    s->max_xfer = 512;
    device_open(&dev, s, 0);
    caps = vfio_user_client_caps(dev.backend);
    g_assert_cmpuint(caps->max_msg_fds, ==, 2);
    g_assert_cmpuint(caps->max_data_xfer_size, ==, 512);
    g_assert_cmpuint(caps->max_dma_maps, ==, 100);
    /*
     * The peer maps 4 KiB pages; we map host pages, so the maps go in host
     * pages: 64 KiB on POWER, where a common-bit rule refused to connect.
     */
    g_assert_cmpuint(caps->pgsizes, ==, MAX(4096, getpagesize()));
    /* Device info read at attach. */
    g_assert_cmpuint(dev.num_regions, ==, 9);
    g_assert_cmpuint(dev.num_irqs, ==, 5);
    g_assert_true(dev.flags & VFIO_DEVICE_FLAGS_PCI);
    g_assert_cmpint(dev.fd, ==, -1);
    g_assert_false(dev.broken);
    device_close(&dev);
    /* A closed device refuses every op and may be closed again. */
    g_assert_false(vfio_device_reset(&dev, &err));
    assert_error_contains(err, "vfio fake: operation not supported");
    error_free(err);
    vfio_device_close(&dev);
    server_free(s);
}

static void test_version_refused(void)
{
    static const struct {
        bool bad_major, error, close;
        const char *needle;
    } cases[] = {
        { true, false, false, "server speaks protocol 1.1" },
        { false, true, false, "VERSION failed: Operation not supported" },
        { false, false, true, "closed the connection" },
    };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(cases); i++) {
        FakeServer *s = server_new();
        Error *err = NULL;

        s->major = cases[i].bad_major ? 1 : VFIO_USER_MAJOR;
        s->version_error = cases[i].error;
        s->close_on_version = cases[i].close;
        g_assert_null(vfio_user_client_new(server_start(s), "fake", 0, &err));
        assert_error_contains(err, cases[i].needle);
        error_free(err);
        server_free(s);
    }
}

static void test_connect_missing_socket(void)
{
    g_autofree char *dir = g_dir_make_tmp("vfio-user-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "none.sock", NULL);
    Error *err = NULL;

    g_assert_null(vfio_user_client_connect(path, 0, &err));
    assert_error_contains(err, "cannot connect");
    error_free(err);
    rmdir(dir);
}

static void test_region_rw_chunked(void)
{
    FakeServer *s = server_new();
    g_autofree uint8_t *out = g_malloc(10000), *in = g_malloc0(10000);
    VFIODevice dev;
    uint32_t v = 0;
    int i;

    s->max_xfer = 4096;
    device_open(&dev, s, 0);
    for (i = 0; i < 10000; i++) {
        out[i] = g_test_rand_int();
    }
    /* 10000 bytes go as 4096 + 4096 + 1808. */
    g_assert_true(vfio_device_region_write(&dev, 0, 0x100, 10000, out, false,
                                           &error_abort));
    g_assert_true(vfio_device_region_read(&dev, 0, 0x100, 10000, in,
                                          &error_abort));
    g_assert_cmpmem(in, 10000, out, 10000);
    g_assert_cmpmem(s->region + 0x100, 10000, out, 10000);
    g_assert_cmpuint(s->max_chunk, ==, 4096);

    /* A posted write needs no reply; the next request orders it. */
    v = 0xfeedbeef;
    g_assert_true(vfio_device_region_write(&dev, 0, 0x1000, 4, &v, true,
                                           &error_abort));
    v = 0;
    g_assert_true(vfio_device_region_read(&dev, 0, 0x1000, 4, &v,
                                          &error_abort));
    g_assert_cmphex(v, ==, 0xfeedbeef);
    g_assert_cmpint(s->posted_writes, ==, 1);
    device_close(&dev);
    server_free(s);
}

static void test_region_info_with_fd(void)
{
    FakeServer *s = server_new();
    g_autofree struct vfio_region_info *info = NULL;
    VFIORegionCaps caps;
    VFIODevice dev;
    char buf[9];
    int fd = -1;

    device_open(&dev, s, 0);
    g_assert_true(dev.ops->get_region_info(&dev, 0, &info, &fd,
                                           &error_abort));
    g_assert_cmpuint(info->size, ==, REGION_SIZE);
    g_assert_true(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
    g_assert_true(vfio_region_info_parse_caps(info, info->argsz, &caps,
                                              &error_abort));
    g_assert_true(caps.msix_mappable);
    g_assert_cmpuint(caps.nr_sparse_areas, ==, 2);
    g_assert_cmphex(caps.sparse_areas[1].offset, ==, 0x2000);
    vfio_region_caps_clear(&caps);
    /* The fd is the server's memfd: same contents. */
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(pread(fd, buf, sizeof(buf), 0), ==, sizeof(buf));
    g_assert_cmpmem(buf, sizeof(buf), "bar0-data", 9);
    close(fd);
    g_clear_pointer(&info, g_free);

    /* Without an fd the region cannot be mmapped, whatever it says. */
    {
        int saved = s->region_fd;

        s->region_fd = -1;
        g_assert_true(dev.ops->get_region_info(&dev, 0, &info, &fd,
                                               &error_abort));
        s->region_fd = saved;
    }
    g_assert_cmpint(fd, ==, -1);
    g_assert_false(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
    device_close(&dev);
    server_free(s);
}

/*
 * The server shrinks its region fd after we mapped it: the client sealed
 * the fd on receipt, so the shrink fails and our mapping stays valid.
 */
static void test_region_fd_shrink_sealed(void)
{
    FakeServer *s = server_new();
    g_autofree struct vfio_region_info *info = NULL;
    VFIODevice dev;
    uint8_t *map;
    int fd = -1;

    device_open(&dev, s, 0);
    g_assert_true(dev.ops->get_region_info(&dev, 0, &info, &fd,
                                           &error_abort));
    g_assert_cmpint(fd, >=, 0);
    g_assert_true(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
    g_assert_cmpint(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK, ==,
                    F_SEAL_SHRINK);
    map = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
               info->offset);
    g_assert_true(map != MAP_FAILED);
    /* The server's own fd is the same file: its shrink is refused. */
    g_assert_cmpint(ftruncate(s->region_fd, 0), ==, -1);
    g_assert_cmpint(errno, ==, EPERM);
    /* Register accesses through the mapping (the MSI-X page, say). */
    g_assert_cmpmem(map, 9, "bar0-data", 9);
    stl_le_p(map + REGION_SIZE - 4, 0x11223344);
    g_assert_cmphex(ldl_le_p(map + REGION_SIZE - 4), ==, 0x11223344);
    g_assert_false(dev.broken);
    munmap(map, REGION_SIZE);
    close(fd);
    device_close(&dev);
    server_free(s);
}

/*
 * A region fd we cannot seal (a memfd without MFD_ALLOW_SEALING, a
 * regular file) or that is smaller than the region is not handed out for
 * mmap: the region is trapped, so a later shrink cannot reach us.
 */
static void test_region_fd_unsafe_trapped(void)
{
    FakeServer *s = server_new();
    g_autofree char *name = NULL;
    int fds[3];
    VFIODevice dev;
    int before;

    fds[0] = memfd_create("fake-bar0-unsealable", MFD_CLOEXEC);
    fds[1] = g_file_open_tmp("fake-bar0-XXXXXX", &name, NULL);
    fds[2] = memfd_create("fake-bar0-short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    g_assert_cmpint(fds[1], >=, 0);
    unlink(name);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(fds[i], >=, 0);
        g_assert_cmpint(ftruncate(fds[i], i == 2 ? REGION_SIZE / 2
                                                 : REGION_SIZE), ==, 0);
    }
    device_open(&dev, s, 0);
    before = count_fds();
    for (int i = 0; i < 3; i++) {
        g_autofree struct vfio_region_info *info = NULL;
        uint32_t v = 0xabcd1234 + i;
        int fd = 0;

        s->region_fd = fds[i];
        g_assert_true(dev.ops->get_region_info(&dev, 0, &info, &fd,
                                               &error_abort));
        g_assert_cmpint(fd, ==, -1);
        g_assert_false(info->flags & VFIO_REGION_INFO_FLAG_MMAP);
        /* The received fd was closed, not leaked. */
        g_assert_cmpint(count_fds(), ==, before);
        /*
         * The server may shrink it now: we never mapped it.  (The short
         * memfd was sealed on receipt, before its size was found wanting.)
         */
        g_assert_cmpint(ftruncate(fds[i], 0), ==, i == 2 ? -1 : 0);
        /* The region still works, through messages. */
        g_assert_true(vfio_device_region_write(&dev, 0, 0x10, 4, &v, false,
                                               &error_abort));
        v = 0;
        g_assert_true(vfio_device_region_read(&dev, 0, 0x10, 4, &v,
                                              &error_abort));
        g_assert_cmphex(v, ==, 0xabcd1234 + i);
        g_assert_false(dev.broken);
    }
    s->region_fd = -1;
    for (int i = 0; i < 3; i++) {
        close(fds[i]);
    }
    device_close(&dev);
    server_free(s);
}

static void region_info_retry(bool small_clears_caps)
{
    FakeServer *s = server_new();
    VFIOSparseArea areas[40];
    g_autofree struct vfio_region_info *info = NULL;
    VFIORegionInfoBuilder *b;
    VFIORegionCaps caps;
    VFIODevice dev;
    size_t len;
    int fd, i;

    for (i = 0; i < 40; i++) {
        areas[i] = (VFIOSparseArea) { i * 0x400, 0x100 };
    }
    b = vfio_region_info_builder_new(0, VFIO_REGION_INFO_FLAG_READ |
                                     VFIO_REGION_INFO_FLAG_MMAP,
                                     REGION_SIZE, 0);
    vfio_region_info_builder_add_sparse(b, areas, 40);
    g_byte_array_unref(s->region_info);
    info = vfio_region_info_builder_finish(b, &len);
    g_assert_cmpuint(len, >, 512);      /* more than the first request */
    s->region_info = g_byte_array_new_take((guint8 *)g_steal_pointer(&info),
                                           len);
    s->small_clears_caps = small_clears_caps;
    device_open(&dev, s, 0);
    g_assert_true(dev.ops->get_region_info(&dev, 0, &info, &fd,
                                           &error_abort));
    g_assert_cmpuint(info->argsz, ==, len);
    g_assert_true(vfio_region_info_parse_caps(info, info->argsz, &caps,
                                              &error_abort));
    g_assert_cmpuint(caps.nr_sparse_areas, ==, 40);
    g_assert_cmphex(caps.sparse_areas[39].offset, ==, 39 * 0x400);
    vfio_region_caps_clear(&caps);
    close(fd);
    device_close(&dev);
    server_free(s);
}

static void test_region_info_retry_large_chain(void)
{
    /* vfio-pci style: the short reply keeps CAPS with cap_offset 0. */
    region_info_retry(false);
}

static void test_region_info_retry_no_caps_flag(void)
{
    /* vfio-user servers: the short reply has no CAPS flag. */
    region_info_retry(true);
}

static void test_region_info_malformed(void)
{
    FakeServer *s = server_new();
    g_autofree struct vfio_region_info *info = NULL;
    struct vfio_info_cap_header *cap;
    Error *err = NULL;
    VFIODevice dev;
    int fd = 1234;
    int fds_before;
    uint32_t v;

    /* The last capability links back to the first: a loop. */
    cap = (void *)(s->region_info->data + s->region_info->len - 8);
    cap->next = sizeof(struct vfio_region_info);
    device_open(&dev, s, 0);
    fds_before = count_fds();
    g_assert_false(dev.ops->get_region_info(&dev, 0, &info, &fd, &err));
    assert_error_contains(err, "loop");
    error_free(err);
    g_assert_null(info);
    g_assert_cmpint(fd, ==, 1234);
    g_assert_cmpint(count_fds(), ==, fds_before);
    /* The stream is still in sync: the device keeps working. */
    g_assert_false(dev.broken);
    g_assert_true(vfio_device_region_read(&dev, 0, 0, 4, &v, &error_abort));
    device_close(&dev);
    server_free(s);
}

static void test_irqs(void)
{
    FakeServer *s = server_new();
    struct vfio_irq_info irq = { .argsz = sizeof(irq),
                                 .index = VFIO_PCI_MSIX_IRQ_INDEX };
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_MSIX_IRQ_INDEX,
        .start = 3,
        .count = 7,
    };
    int fds[7];
    VFIODevice dev;
    IrqMsg *m;
    int i;

    s->max_msg_fds = 2;
    device_open(&dev, s, 0);
    g_assert_true(dev.ops->get_irq_info(&dev, &irq, &error_abort));
    g_assert_cmpuint(irq.count, ==, 16);
    g_assert_true(irq.flags & VFIO_IRQ_INFO_EVENTFD);

    /* vectors 3..9; 6 and 7 de-assigned (-1) */
    for (i = 0; i < 7; i++) {
        fds[i] = (i == 3 || i == 4) ? -1 : eventfd(0, EFD_CLOEXEC);
    }
    g_assert_true(dev.ops->set_irqs(&dev, &set, fds, &error_abort));
    /* 3,4 | 5 | 6,7 (no fds) | 8,9 with max_msg_fds 2 */
    g_assert_cmpuint(s->irq_msgs->len, ==, 4);
    m = &g_array_index(s->irq_msgs, IrqMsg, 0);
    g_assert_cmpuint(m[0].start, ==, 3);
    g_assert_cmpuint(m[0].count, ==, 2);
    g_assert_cmpuint(m[0].nfds, ==, 2);
    g_assert_cmpuint(m[1].start, ==, 5);
    g_assert_cmpuint(m[1].count, ==, 1);
    g_assert_cmpuint(m[1].nfds, ==, 1);
    g_assert_cmpuint(m[2].start, ==, 6);
    g_assert_cmpuint(m[2].count, ==, 2);
    g_assert_cmpuint(m[2].nfds, ==, 0);
    g_assert_cmpuint(m[3].start, ==, 8);
    g_assert_cmpuint(m[3].count, ==, 2);
    g_assert_cmpuint(m[3].nfds, ==, 2);
    /* Each eventfd reached the server as its own vector. */
    for (i = 0; i < 7; i++) {
        uint64_t val;

        if (fds[i] < 0) {
            continue;
        }
        g_assert_cmpint(read(fds[i], &val, sizeof(val)), ==, sizeof(val));
        g_assert_cmpuint(val, ==, set.start + i + 1);
        close(fds[i]);
    }

    /* DATA_BOOL carries its bytes; DATA_NONE "disable all" has count 0. */
    g_array_set_size(s->irq_msgs, 0);
    {
        /* A vfio_irq_set followed by two bytes of data. */
        uint64_t storage[4] = { 0 };
        struct vfio_irq_set *bset = (struct vfio_irq_set *)storage;
        struct vfio_irq_set none = {
            sizeof(none), VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
            VFIO_PCI_MSIX_IRQ_INDEX, 0, 0,
        };
        Error *err = NULL;

        *bset = (struct vfio_irq_set) {
            .argsz = sizeof(*bset) + 2,
            .flags = VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_ACTION_MASK,
            .index = VFIO_PCI_MSIX_IRQ_INDEX,
            .start = 0,
            .count = 2,
        };
        bset->data[0] = 1;
        g_assert_true(dev.ops->set_irqs(&dev, bset, NULL, &error_abort));
        g_assert_true(dev.ops->set_irqs(&dev, &none, NULL, &error_abort));
        g_assert_cmpuint(s->irq_msgs->len, ==, 2);
        m = &g_array_index(s->irq_msgs, IrqMsg, 0);
        g_assert_cmphex(m[0].flags, ==, bset->flags);
        g_assert_cmpuint(m[0].payload_len, ==, sizeof(*bset) + 2);
        g_assert_cmpuint(m[0].data[0], ==, 1);
        g_assert_cmpuint(m[0].data[1], ==, 0);
        g_assert_cmpuint(m[1].count, ==, 0);
        g_assert_cmpuint(m[1].payload_len, ==, sizeof(none));
        /* A DATA_BOOL set without its data is refused locally. */
        bset->argsz = sizeof(*bset);
        g_assert_false(dev.ops->set_irqs(&dev, bset, NULL, &err));
        assert_error_contains(err, "DATA_BOOL");
        error_free(err);
        g_assert_cmpuint(s->irq_msgs->len, ==, 2);
    }
    device_close(&dev);
    server_free(s);
}

static void test_dma_map_unmap_reset(void)
{
    FakeServer *s = server_new();
    VFIODevice dev;
    int memfd = memfd_create("guest-ram", MFD_CLOEXEC);

    device_open(&dev, s, 0);
    g_assert_true(vfio_device_dma_map(&dev, 0x100000, 0x200000, memfd, 0,
                                      NULL, false, &error_abort));
    g_assert_cmpint(s->dma_maps, ==, 1);
    g_assert_true(vfio_device_dma_unmap(&dev, 0x100000, 0x200000,
                                        &error_abort));
    g_assert_true(vfio_device_reset(&dev, &error_abort));
    close(memfd);
    device_close(&dev);
    server_free(s);
}

static void test_error_reply(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v = 1;

    s->write_errno = EACCES;
    device_open(&dev, s, 0);
    g_assert_false(vfio_device_region_write(&dev, 0, 0, 4, &v, false, &err));
    assert_error_contains(err, "REGION_WRITE failed: Permission denied");
    error_free(err);
    g_assert_false(dev.broken);
    device_close(&dev);
    server_free(s);
}

static void test_bad_replies(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v;

    int fds_before;

    s->short_read_reply = true;
    s->fd_on_reset_reply = true;
    device_open(&dev, s, 0);
    fds_before = count_fds();
    g_assert_false(vfio_device_region_read(&dev, 0, 0, 4, &v, &err));
    assert_error_contains(err, "REGION_READ reply is 19 bytes, expected 20");
    g_clear_pointer(&err, error_free);
    g_assert_false(dev.ops->reset(&dev, &err));
    assert_error_contains(err, "unexpected fds");
    g_clear_pointer(&err, error_free);
    g_assert_false(dev.broken);
    /* The fd that came with the bad reply was closed. */
    g_assert_cmpint(count_fds(), ==, fds_before);
    device_close(&dev);
    server_free(s);
}

static void test_timeout_then_stale_reply(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v = 0;

    s->stall_reset = true;
    memcpy(s->region, "\x11\x22\x33\x44", 4);
    device_open(&dev, s, 50);
    g_assert_false(dev.ops->reset(&dev, &err));
    assert_error_contains(err, "no reply to DEVICE_RESET within 50 ms");
    error_free(err);
    g_assert_false(dev.broken);
    /* Now the late reply arrives first; it must not be taken for ours. */
    g_mutex_lock(&s->lock);
    s->released = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    g_assert_true(vfio_device_region_read(&dev, 0, 0, 4, &v, &error_abort));
    g_assert_cmphex(v, ==, 0x44332211);
    device_close(&dev);
    server_free(s);
}

static void test_server_dies(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v;

    s->die_on_reset = true;
    device_open(&dev, s, 0);
    g_assert_false(dev.ops->reset(&dev, &err));
    assert_error_contains(err, "closed the connection");
    g_clear_pointer(&err, error_free);
    g_assert_true(dev.broken);
    g_assert_true(vfio_user_client_is_broken(dev.backend));
    /* From now on, everything fails fast and cleanly. */
    g_assert_false(vfio_device_region_read(&dev, 0, 0, 4, &v, &err));
    assert_error_contains(err, "broken");
    g_clear_pointer(&err, error_free);
    g_assert_false(dev.ops->reset(&dev, &err));
    assert_error_contains(err, "connection to the server is lost");
    g_clear_pointer(&err, error_free);
    g_assert_false(vfio_user_client_process_incoming(dev.backend, &err));
    g_clear_pointer(&err, error_free);
    device_close(&dev);
    server_free(s);
}

static void test_garbage_header_breaks(void)
{
    FakeServer *s = server_new();
    struct vfio_irq_info irq = { .argsz = sizeof(irq) };
    Error *err = NULL;
    VFIODevice dev;

    s->garbage_on_irq_info = true;
    device_open(&dev, s, 0);
    g_assert_false(dev.ops->get_irq_info(&dev, &irq, &err));
    assert_error_contains(err, "exceeds the limit");
    error_free(err);
    g_assert_true(dev.broken);
    device_close(&dev);
    server_free(s);
}

static uint8_t guest_ram[0x2000];
static int dma_calls;
static gulong dma_delay_us;

static bool fake_dma(void *opaque, uint64_t addr, void *buf, uint64_t len,
                     bool is_write, Error **errp)
{
    dma_calls++;
    if (dma_delay_us) {
        g_usleep(dma_delay_us);
    }
    if (addr > sizeof(guest_ram) || len > sizeof(guest_ram) - addr) {
        error_setg(errp, "outside guest RAM");
        return false;
    }
    if (is_write) {
        memcpy(guest_ram + addr, buf, len);
    } else {
        memcpy(buf, guest_ram + addr, len);
    }
    return true;
}

static void test_server_dma_requests(void)
{
    FakeServer *s = server_new();
    VFIODevice dev;
    uint32_t v = 7;
    /* header, DMA_WRITE fixed part, 8 bytes of data */
    uint64_t storage[5];
    VFIOUserHdr *w_hdr = (VFIOUserHdr *)storage;
    VFIOUserDMARW *w_rw = (VFIOUserDMARW *)(w_hdr + 1);

    memcpy(guest_ram + 0x1000, "sixteen-bytes-ok", 16);
    s->dma_read_on_write = true;
    device_open(&dev, s, 0);
    vfio_user_client_set_dma_handler(dev.backend, fake_dma, NULL);
    /* The server reads guest memory before it answers the write. */
    g_assert_true(vfio_device_region_write(&dev, 0, 0, 4, &v, false,
                                           &error_abort));
    g_assert_cmpmem(s->dma_seen, 16, "sixteen-bytes-ok", 16);

    /* An unsolicited DMA_WRITE, served from the main-loop handler. */
    vfio_user_hdr_init(w_hdr, 0x7001, VFIO_USER_DMA_WRITE, sizeof(storage),
                       VFIO_USER_F_TYPE_COMMAND);
    *w_rw = (VFIOUserDMARW) { .address = 0x10, .count = 8 };
    memcpy(w_rw->data, "written!", 8);
    qemu_send_with_fds(s->fd, storage, sizeof(storage), NULL, 0,
                       &error_abort);
    g_assert_true(vfio_user_client_process_incoming(dev.backend,
                                                    &error_abort));
    g_assert_cmpmem(guest_ram + 0x10, 8, "written!", 8);
    g_mutex_lock(&s->lock);
    while (!s->dma_write_replied) {
        g_cond_wait(&s->cond, &s->lock);
    }
    g_mutex_unlock(&s->lock);
    device_close(&dev);
    server_free(s);
}

/*
 * A server that never stops sending requests cannot keep the main loop in
 * the client's handler: each call serves a bounded batch.
 */
static void test_incoming_flood_is_batched(void)
{
    FakeServer *s = server_new();
    VFIODevice dev;
    const unsigned n = 200;
    uint64_t storage[5];
    VFIOUserHdr *hdr = (VFIOUserHdr *)storage;
    VFIOUserDMARW *rw = (VFIOUserDMARW *)(hdr + 1);
    unsigned calls = 0;
    int start;

    device_open(&dev, s, 0);
    vfio_user_client_set_dma_handler(dev.backend, fake_dma, NULL);
    start = dma_calls;
    for (unsigned i = 0; i < n; i++) {
        vfio_user_hdr_init(hdr, 0x7100 + i, VFIO_USER_DMA_WRITE,
                           sizeof(storage),
                           VFIO_USER_F_TYPE_COMMAND | VFIO_USER_F_NO_REPLY);
        *rw = (VFIOUserDMARW) { .address = 0x20, .count = 8 };
        memcpy(rw->data, "flooding", 8);
        qemu_send_with_fds(s->fd, storage, sizeof(storage), NULL, 0,
                           &error_abort);
    }
    g_assert_true(vfio_user_client_process_incoming(dev.backend,
                                                    &error_abort));
    g_assert_cmpint(dma_calls - start, >, 0);
    g_assert_cmpint(dma_calls - start, <, n);
    while (dma_calls - start < (int)n) {
        g_assert_cmpuint(++calls, <, n);
        g_assert_true(vfio_user_client_process_incoming(dev.backend,
                                                        &error_abort));
    }
    g_assert_cmpmem(guest_ram + 0x20, 8, "flooding", 8);
    device_close(&dev);
    server_free(s);
}

static void test_stale_reply_same_command(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v = 0;

    s->stall_first_read = true;
    memcpy(s->region, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    device_open(&dev, s, 50);
    g_assert_false(vfio_device_region_read(&dev, 0, 0, 4, &v, &err));
    assert_error_contains(err, "no reply to REGION_READ");
    error_free(err);
    g_mutex_lock(&s->lock);
    s->released = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    /* The late reply to the first read is not this read's reply. */
    g_assert_true(vfio_device_region_read(&dev, 0, 4, 4, &v, &error_abort));
    g_assert_cmphex(v, ==, 0x08070605);
    device_close(&dev);
    server_free(s);
}

static void test_region_info_wrong_index(void)
{
    FakeServer *s = server_new();
    g_autofree struct vfio_region_info *info = NULL;
    Error *err = NULL;
    VFIODevice dev;
    int fd = -1;
    int fds_before;

    s->wrong_region_index = true;
    device_open(&dev, s, 0);
    fds_before = count_fds();
    g_assert_false(vfio_device_get_region_info(&dev, 0, &info, &fd, &err));
    assert_error_contains(err, "asked for region 0 info, got region 1");
    error_free(err);
    g_assert_null(info);
    g_assert_cmpint(count_fds(), ==, fds_before);
    device_close(&dev);
    server_free(s);
}

static void test_timeout_despite_server_requests(void)
{
    FakeServer *s = server_new();
    Error *err = NULL;
    VFIODevice dev;
    uint32_t v = 0;

    s->flood_on_reset = true;
    memcpy(s->region, "\x55\x66\x77\x88", 4);
    device_open(&dev, s, 50);
    vfio_user_client_set_dma_handler(dev.backend, fake_dma, NULL);
    dma_calls = 0;
    /* Each request takes 20 ms to serve; ten of them outlast 50 ms. */
    dma_delay_us = 20000;
    g_assert_false(vfio_device_reset(&dev, &err));
    assert_error_contains(err, "no reply to DEVICE_RESET within 50 ms");
    error_free(err);
    /* The deadline held although requests kept arriving. */
    g_assert_cmpint(dma_calls, >=, 1);
    g_assert_cmpint(dma_calls, <, FLOOD_REQUESTS);
    g_assert_cmpmem(guest_ram + 0x20, 8, "flooding", 8);
    dma_delay_us = 0;
    g_mutex_lock(&s->lock);
    s->released = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    /* The rest is served on the way; the stale reset reply dropped. */
    g_assert_true(vfio_device_region_read(&dev, 0, 0, 4, &v, &error_abort));
    g_assert_cmphex(v, ==, 0x88776655);
    g_assert_cmpint(dma_calls, ==, FLOOD_REQUESTS);
    g_assert_false(dev.broken);
    device_close(&dev);
    server_free(s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user/client/negotiation", test_negotiation);
    g_test_add_func("/vfio-user/client/version-refused",
                    test_version_refused);
    g_test_add_func("/vfio-user/client/connect-missing-socket",
                    test_connect_missing_socket);
    g_test_add_func("/vfio-user/client/region-rw-chunked",
                    test_region_rw_chunked);
    g_test_add_func("/vfio-user/client/region-info/fd-passing",
                    test_region_info_with_fd);
    g_test_add_func("/vfio-user/client/region-fd/shrink-refused-by-seal",
                    test_region_fd_shrink_sealed);
    g_test_add_func("/vfio-user/client/region-fd/unsafe-fd-trapped",
                    test_region_fd_unsafe_trapped);
    g_test_add_func("/vfio-user/client/region-info/retry-large-chain",
                    test_region_info_retry_large_chain);
    g_test_add_func("/vfio-user/client/region-info/retry-without-caps-flag",
                    test_region_info_retry_no_caps_flag);
    g_test_add_func("/vfio-user/client/region-info/malformed-chain",
                    test_region_info_malformed);
    g_test_add_func("/vfio-user/client/irqs/split-by-max-fds", test_irqs);
    g_test_add_func("/vfio-user/client/dma-map-unmap-reset",
                    test_dma_map_unmap_reset);
    g_test_add_func("/vfio-user/client/error-reply-errno", test_error_reply);
    g_test_add_func("/vfio-user/client/bad-replies", test_bad_replies);
    g_test_add_func("/vfio-user/client/timeout-then-stale-reply",
                    test_timeout_then_stale_reply);
    g_test_add_func("/vfio-user/client/stale-reply-same-command",
                    test_stale_reply_same_command);
    g_test_add_func("/vfio-user/client/region-info/wrong-index",
                    test_region_info_wrong_index);
    g_test_add_func("/vfio-user/client/timeout-despite-server-requests",
                    test_timeout_despite_server_requests);
    g_test_add_func("/vfio-user/client/server-dies/device-broken",
                    test_server_dies);
    g_test_add_func("/vfio-user/client/garbage-header/device-broken",
                    test_garbage_header_breaks);
    g_test_add_func("/vfio-user/client/server-dma-requests",
                    test_server_dma_requests);
    g_test_add_func("/vfio-user/client/incoming-flood-is-batched",
                    test_incoming_flood_is_batched);
    return g_test_run();
}
