/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user conformance, server side: vfio-user-nvme (and so libvfu)
 * driven message by message over a real socket, checked against the
 * vfio-user specification and, where it leaves latitude, against what
 * Linux's vfio-pci does with the same structures (linux/vfio.h).
 *
 * Messages that real clients send are reproduced byte for byte where a
 * defect was found with them (QEMU 10.2's GET_REGION_INFO with argsz 32,
 * its INTx unmask eventfd); hostile fds (not eventfds) check that no
 * client can wedge the server.  Waiting is bounded by a receive timeout
 * on the client socket (a liveness bound, never a performance check).
 *
 * The server binary comes from $VFIO_USER_NVME (set by meson).
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "vfio-user/protocol.h"
#include "qemu/vfio-region-info.h"
#include "server-process.h"

/* Liveness bound on a reply; CONFORMANCE_LIVENESS_S raises it (valgrind). */
static int LIVENESS_S = 10;

typedef struct Conn {
    int fd;
    uint16_t id;
} Conn;

typedef struct Reply {
    int err;                /* 0, or the errno of an error reply */
    GByteArray *data;
    int fd;                 /* first fd received, or -1 */
} Reply;

static const char *server_bin;

/* ---- Server process ---- */

static void server_start(VuServer *s, const char *args)
{
    g_autofree char *all = g_strdup_printf("--backend null %s",
                                           args ? args : "");

    vu_server_start(s, server_bin, all, 6 * LIVENESS_S * G_USEC_PER_SEC);
}

/* ---- Messages ---- */

static void conn_open_raw(Conn *c, VuServer *s)
{
    struct timeval tv = { .tv_sec = LIVENESS_S };

    c->fd = unix_connect_path(s->sock, &error_abort);
    c->id = 1;
    g_assert_cmpint(setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
                               sizeof(tv)), ==, 0);
}

static void msg_send(Conn *c, uint16_t cmd, uint32_t flags, const void *p,
                     size_t len, const int *fds, size_t nfds)
{
    g_autofree uint8_t *buf = g_malloc0(sizeof(VFIOUserHdr) + len);

    vfio_user_hdr_init((VFIOUserHdr *)buf, c->id, cmd,
                       sizeof(VFIOUserHdr) + len, flags);
    if (len) {
        memcpy(buf + sizeof(VFIOUserHdr), p, len);
    }
    g_assert_cmpint(qemu_send_with_fds(c->fd, buf, sizeof(VFIOUserHdr) + len,
                                       fds, nfds, &error_abort), ==,
                    sizeof(VFIOUserHdr) + len);
}

/*
 * Receives the reply to the last message sent.  Returns false if none came
 * within the liveness bound or the connection was closed.
 */
static bool msg_reply(Conn *c, uint16_t cmd, Reply *r)
{
    VFIOUserHdr hdr;
    int fds[8];
    size_t nfds = ARRAY_SIZE(fds);
    Error *err = NULL;
    ssize_t n;

    r->data = g_byte_array_new();
    r->fd = -1;
    r->err = -1;
    n = qemu_recv_with_fds(c->fd, &hdr, sizeof(hdr), fds, &nfds, &err);
    if (n != sizeof(hdr)) {
        error_free(err);
        return false;
    }
    g_assert_cmpuint(hdr.id, ==, c->id);
    g_assert_cmpuint(hdr.command, ==, cmd);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_REPLY);
    g_assert_cmpuint(hdr.size, >=, sizeof(hdr));
    if (hdr.size > sizeof(hdr)) {
        size_t none = 0;

        g_byte_array_set_size(r->data, hdr.size - sizeof(hdr));
        g_assert_cmpint(qemu_recv_with_fds(c->fd, r->data->data,
                                           r->data->len, NULL, &none,
                                           &error_abort), ==, r->data->len);
    }
    for (size_t i = 0; i < nfds; i++) {
        if (i == 0) {
            r->fd = fds[0];
        } else {
            close(fds[i]);
        }
    }
    r->err = hdr.flags & VFIO_USER_F_ERROR ? (int)hdr.error_reply : 0;
    if (hdr.flags & VFIO_USER_F_ERROR) {
        /* An error reply carries no payload. */
        g_assert_cmpuint(r->data->len, ==, 0);
    }
    c->id++;
    return true;
}

static void reply_clear(Reply *r)
{
    if (r->data) {
        g_byte_array_free(r->data, true);
        r->data = NULL;
    }
    if (r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
}

/* Sends a command; returns the reply's errno (0 on success). */
static int call(Conn *c, uint16_t cmd, const void *p, size_t len,
                const int *fds, size_t nfds, Reply *out)
{
    Reply r;
    int err;

    msg_send(c, cmd, VFIO_USER_F_TYPE_COMMAND, p, len, fds, nfds);
    if (!msg_reply(c, cmd, &r)) {
        g_error("no reply to %s within %d s: the server is wedged",
                vfio_user_command_name(cmd), LIVENESS_S);
    }
    err = r.err;
    if (out) {
        *out = r;
    } else {
        reply_clear(&r);
    }
    return err;
}

static const char client_json[] =
    "{\"capabilities\":{\"max_msg_fds\":8,"
    "\"max_data_xfer_size\":1048576,"
    "\"x-conduit-unknown\":{\"nested\":[1,2,3]},"
    "\"migration\":{\"pgsize\":4096,\"max_bitmap_size\":1048576}}}";

static GByteArray *version_payload(uint16_t major, uint16_t minor,
                                   const char *json)
{
    GByteArray *b = g_byte_array_new();

    g_byte_array_append(b, (const guint8 *)&major, 2);
    g_byte_array_append(b, (const guint8 *)&minor, 2);
    if (json) {
        g_byte_array_append(b, (const guint8 *)json, strlen(json) + 1);
    }
    return b;
}

static void conn_open(Conn *c, VuServer *s)
{
    g_autoptr(GByteArray) v = version_payload(0, 1, client_json);

    conn_open_raw(c, s);
    g_assert_cmpint(call(c, VFIO_USER_VERSION, v->data, v->len, NULL, 0,
                         NULL), ==, 0);
}

static void conn_close(Conn *c)
{
    close(c->fd);
    c->fd = -1;
}

static int set_irqs(Conn *c, uint32_t flags, uint32_t index, uint32_t start,
                    uint32_t count, const void *data, size_t data_len,
                    const int *fds, size_t nfds)
{
    g_autofree uint8_t *buf = g_malloc0(sizeof(struct vfio_irq_set) +
                                        data_len);
    struct vfio_irq_set *s = (struct vfio_irq_set *)buf;

    s->argsz = sizeof(*s) + data_len;
    s->flags = flags;
    s->index = index;
    s->start = start;
    s->count = count;
    if (data_len) {
        memcpy(s->data, data, data_len);
    }
    return call(c, VFIO_USER_DEVICE_SET_IRQS, buf, s->argsz, fds, nfds,
                NULL);
}

static bool eventfd_fired(int fd)
{
    uint64_t v;

    return read(fd, &v, sizeof(v)) == sizeof(v) && v > 0;
}

static bool eventfd_wait(int fd)
{
    GPollFD pfd = { .fd = fd, .events = G_IO_IN };

    return g_poll(&pfd, 1, LIVENESS_S * 1000) == 1 && eventfd_fired(fd);
}

static void region_write32(Conn *c, uint32_t region, uint64_t off,
                           uint32_t v)
{
    uint8_t buf[sizeof(VFIOUserRegionRW) + 4];
    VFIOUserRegionRW *rw = (VFIOUserRegionRW *)buf;

    rw->offset = off;
    rw->region = region;
    rw->count = 4;
    v = htole32(v);
    memcpy(rw->data, &v, 4);
    g_assert_cmpint(call(c, VFIO_USER_REGION_WRITE, buf, sizeof(buf), NULL, 0,
                         NULL), ==, 0);
}

static uint32_t region_read32(Conn *c, uint32_t region, uint64_t off)
{
    VFIOUserRegionRW rw = { .offset = off, .region = region, .count = 4 };
    Reply r;
    uint32_t v;

    g_assert_cmpint(call(c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, sizeof(rw) + 4);
    memcpy(&v, r.data->data + sizeof(rw), 4);
    reply_clear(&r);
    return le32toh(v);
}

/* ---- VERSION ---- */

static void test_version_caps(void)
{
    g_autoptr(GByteArray) v = version_payload(0, 1, client_json);
    VFIOUserCaps caps;
    uint16_t major, minor;
    const char *json;
    VuServer s;
    Conn c;
    Reply r;

    server_start(&s, NULL);
    conn_open_raw(&c, &s);
    /* Unknown keys (and a migration object) in the client's JSON: fine. */
    g_assert_cmpint(call(&c, VFIO_USER_VERSION, v->data, v->len, NULL, 0,
                         &r), ==, 0);
    g_assert_cmpuint(r.data->len, >, 4);
    json = (const char *)r.data->data + 4;
    /* The version data is a NUL-terminated JSON string. */
    g_assert_cmpuint(r.data->data[r.data->len - 1], ==, 0);
    g_assert_true(vfio_user_version_parse(r.data->data, r.data->len, &major,
                                          &minor, &caps, &error_abort));
    g_assert_cmpuint(major, ==, 0);
    g_assert_cmpuint(minor, <=, 1);
    g_assert_nonnull(strstr(json, "\"max_msg_fds\""));
    g_assert_nonnull(strstr(json, "\"max_data_xfer_size\""));
    g_assert_cmpuint(caps.max_msg_fds, >=, 1);
    g_assert_cmpuint(caps.max_data_xfer_size, >=, 4096);
    /* The server does not do migration: it must not offer it. */
    g_assert_null(strstr(json, "migration"));
    reply_clear(&r);

    /* A second VERSION on a negotiated connection is an error. */
    g_assert_cmpint(call(&c, VFIO_USER_VERSION, v->data, v->len, NULL, 0,
                         NULL), !=, 0);
    conn_close(&c);

    /* No version data at all: the spec's defaults apply. */
    conn_open_raw(&c, &s);
    g_byte_array_set_size(v, 4);
    g_assert_cmpint(call(&c, VFIO_USER_VERSION, v->data, v->len, NULL, 0,
                         NULL), ==, 0);
    conn_close(&c);
    vu_server_stop(&s);
}

static void test_version_refused(void)
{
    g_autoptr(GByteArray) bad_major = version_payload(1, 0, client_json);
    g_autoptr(GByteArray) bad_json = version_payload(0, 1, "{\"capab");
    VFIOUserDeviceInfo info = { .argsz = sizeof(info) };
    VuServer s;
    Conn c;
    Reply r;

    server_start(&s, NULL);
    /* A command before VERSION gets an error reply. */
    conn_open_raw(&c, &s);
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_INFO, &info, sizeof(info),
                         NULL, 0, NULL), ==, EINVAL);
    conn_close(&c);
    /* An unknown major version is refused. */
    conn_open_raw(&c, &s);
    g_assert_cmpint(call(&c, VFIO_USER_VERSION, bad_major->data,
                         bad_major->len, NULL, 0, NULL), !=, 0);
    conn_close(&c);
    /* Malformed JSON is refused. */
    conn_open_raw(&c, &s);
    g_assert_cmpint(call(&c, VFIO_USER_VERSION, bad_json->data,
                         bad_json->len, NULL, 0, NULL), ==, EINVAL);
    conn_close(&c);
    /* And the server still serves a good client. */
    conn_open(&c, &s);
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_INFO, &info, sizeof(info),
                         NULL, 0, &r), ==, 0);
    reply_clear(&r);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DEVICE_GET_INFO ---- */

static void test_device_info(void)
{
    VFIOUserDeviceInfo info = { .argsz = sizeof(info) }, got;
    VuServer s;
    Conn c;
    Reply r;

    server_start(&s, NULL);
    conn_open(&c, &s);
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_INFO, &info, sizeof(info),
                         NULL, 0, &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, sizeof(got));
    memcpy(&got, r.data->data, sizeof(got));
    g_assert_cmpuint(got.argsz, ==, sizeof(got));
    g_assert_true(got.flags & VFIO_DEVICE_FLAGS_PCI);
    g_assert_true(got.flags & VFIO_DEVICE_FLAGS_RESET);
    g_assert_cmpuint(got.num_regions, >=, VFIO_PCI_CONFIG_REGION_INDEX + 1);
    g_assert_cmpuint(got.num_irqs, ==, VFIO_PCI_NUM_IRQS);
    reply_clear(&r);
    /* argsz below the structure is refused. */
    info.argsz = 8;
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_INFO, &info, sizeof(info),
                         NULL, 0, NULL), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DEVICE_GET_REGION_INFO ---- */

/*
 * QEMU 10.2's first request for every region: a 48-byte message whose
 * argsz is 32 (just struct vfio_region_info).  A region with a capability
 * chain must answer without the CAPS flag and with the argsz it needs;
 * the chain comes at that argsz.
 */
static void check_region_info_argsz(Conn *c, uint32_t index,
                                    bool expect_caps)
{
    struct vfio_region_info req = { .argsz = 32, .index = index }, *info;
    uint32_t needed;
    Reply r;

    g_assert_cmpint(call(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, 32);
    info = (struct vfio_region_info *)r.data->data;
    g_assert_cmpuint(info->index, ==, index);
    g_assert_cmpuint(info->cap_offset, ==, 0);
    g_assert_false(info->flags & VFIO_REGION_INFO_FLAG_CAPS);
    needed = info->argsz;
    if (!expect_caps) {
        g_assert_cmpuint(needed, ==, 32);
        reply_clear(&r);
        return;
    }
    g_assert_cmpuint(needed, >, 32);
    reply_clear(&r);

    req.argsz = needed;
    g_assert_cmpint(call(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, needed);
    info = (struct vfio_region_info *)r.data->data;
    g_assert_cmpuint(info->argsz, ==, needed);
    g_assert_true(info->flags & VFIO_REGION_INFO_FLAG_CAPS);
    g_assert_cmpuint(info->cap_offset, >=, 32);
    g_assert_true(vfio_region_info_check((void *)r.data->data, r.data->len,
                                         &error_abort));
    /* A mappable region comes with its fd. */
    if (info->flags & VFIO_REGION_INFO_FLAG_MMAP) {
        g_assert_cmpint(r.fd, >=, 0);
    }
    reply_clear(&r);

    /* A larger argsz gets the same reply, not padding. */
    req.argsz = needed + 512;
    g_assert_cmpint(call(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, needed);
    reply_clear(&r);
}

static bool region_has_caps(Conn *c, uint32_t index)
{
    struct vfio_region_info req = { .argsz = 4096, .index = index };
    Reply r;
    bool caps;

    g_assert_cmpint(call(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, &r), ==, 0);
    caps = ((struct vfio_region_info *)r.data->data)->flags &
           VFIO_REGION_INFO_FLAG_CAPS;
    reply_clear(&r);
    return caps;
}

typedef struct Layout {
    const char *args;
    uint32_t caps_region;       /* a region that must carry a chain */
    /*
     * The chain is a sparse mmap area beside the table, which exists only
     * where the table does not share BAR0's one page with everything
     * (4 KiB pages; at 64 KiB BAR0 is a single page and nothing is
     * mappable, so no chain).
     */
    bool caps_need_small_pages;
} Layout;

static const Layout layouts[] = {
    { "", VFIO_PCI_BAR0_REGION_INDEX + 4 },
    { "--msix-bar 0 --msix-table-offset 0x2000 --msix-pba-offset 0x3000",
      VFIO_PCI_BAR0_REGION_INDEX },
    { "--no-msix-mappable --msix-bar 0 --msix-table-offset 0x2000 "
      "--msix-pba-offset 0x3000", VFIO_PCI_BAR0_REGION_INDEX, true },
};

static void test_region_info_argsz(gconstpointer opaque)
{
    const Layout *l = opaque;
    struct vfio_region_info req = { .argsz = 16, .index = 0 };
    VuServer s;
    Conn c;

    server_start(&s, l->args);
    conn_open(&c, &s);
    g_assert_true(region_has_caps(&c, l->caps_region) ==
                  (!l->caps_need_small_pages || getpagesize() == 4096));
    for (uint32_t i = 0; i <= VFIO_PCI_CONFIG_REGION_INDEX; i++) {
        check_region_info_argsz(&c, i, region_has_caps(&c, i));
    }
    /* argsz below the structure, or a region that does not exist. */
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, NULL), ==, EINVAL);
    req.argsz = 32;
    req.index = 1000;
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                         sizeof(req), NULL, 0, NULL), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DEVICE_GET_IRQ_INFO ---- */

static struct vfio_irq_info irq_info(Conn *c, uint32_t index)
{
    struct vfio_irq_info info = { .argsz = sizeof(info), .index = index };
    Reply r;

    g_assert_cmpint(call(c, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                         sizeof(info), NULL, 0, &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, sizeof(info));
    memcpy(&info, r.data->data, sizeof(info));
    reply_clear(&r);
    g_assert_cmpuint(info.argsz, ==, sizeof(info));
    g_assert_cmpuint(info.index, ==, index);
    return info;
}

static void test_irq_info(void)
{
    struct vfio_irq_info info;
    VuServer s;
    Conn c;

    server_start(&s, NULL);
    conn_open(&c, &s);
    info = irq_info(&c, VFIO_PCI_INTX_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 1);
    g_assert_cmphex(info.flags, ==, VFIO_IRQ_INFO_EVENTFD |
                    VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED);
    info = irq_info(&c, VFIO_PCI_MSIX_IRQ_INDEX);
    g_assert_cmpuint(info.count, >=, 2);
    g_assert_true(info.flags & VFIO_IRQ_INFO_EVENTFD);
    g_assert_false(info.flags & VFIO_IRQ_INFO_AUTOMASKED);
    /* The error interrupt exists, as on a PCIe device under vfio-pci. */
    info = irq_info(&c, VFIO_PCI_ERR_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 1);
    g_assert_cmphex(info.flags, ==, VFIO_IRQ_INFO_EVENTFD);
    info = irq_info(&c, VFIO_PCI_REQ_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 0);
    info = irq_info(&c, VFIO_PCI_MSI_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 0);

    info = (struct vfio_irq_info) { .argsz = 8, .index = 0 };
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                         sizeof(info), NULL, 0, NULL), ==, EINVAL);
    info = (struct vfio_irq_info) { .argsz = sizeof(info),
                                    .index = VFIO_PCI_NUM_IRQS };
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_GET_IRQ_INFO, &info,
                         sizeof(info), NULL, 0, NULL), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DEVICE_SET_IRQS ---- */

#define A_TRIGGER   VFIO_IRQ_SET_ACTION_TRIGGER
#define A_MASK      VFIO_IRQ_SET_ACTION_MASK
#define A_UNMASK    VFIO_IRQ_SET_ACTION_UNMASK
#define D_NONE      VFIO_IRQ_SET_DATA_NONE
#define D_BOOL      VFIO_IRQ_SET_DATA_BOOL
#define D_EVENTFD   VFIO_IRQ_SET_DATA_EVENTFD

typedef struct IrqCase {
    uint32_t index;
    uint32_t action;
    uint32_t data;
    int err;
} IrqCase;

/* What Linux's vfio-pci accepts for each index, action and data type. */
static const IrqCase irq_matrix[] = {
    { VFIO_PCI_INTX_IRQ_INDEX, A_TRIGGER, D_EVENTFD, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_TRIGGER, D_NONE, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_TRIGGER, D_BOOL, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_MASK, D_NONE, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_MASK, D_BOOL, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_MASK, D_EVENTFD, EINVAL },
    { VFIO_PCI_INTX_IRQ_INDEX, A_UNMASK, D_NONE, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_UNMASK, D_BOOL, 0 },
    { VFIO_PCI_INTX_IRQ_INDEX, A_UNMASK, D_EVENTFD, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_TRIGGER, D_EVENTFD, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_TRIGGER, D_NONE, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_TRIGGER, D_BOOL, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_MASK, D_NONE, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_UNMASK, D_BOOL, 0 },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_MASK, D_EVENTFD, EINVAL },
    { VFIO_PCI_MSIX_IRQ_INDEX, A_UNMASK, D_EVENTFD, EINVAL },
    { VFIO_PCI_ERR_IRQ_INDEX, A_TRIGGER, D_EVENTFD, 0 },
    { VFIO_PCI_ERR_IRQ_INDEX, A_TRIGGER, D_NONE, 0 },
    { VFIO_PCI_ERR_IRQ_INDEX, A_TRIGGER, D_BOOL, 0 },
    { VFIO_PCI_ERR_IRQ_INDEX, A_MASK, D_NONE, EINVAL },
    { VFIO_PCI_ERR_IRQ_INDEX, A_UNMASK, D_EVENTFD, EINVAL },
    /* No vectors: any count of 1 is out of range. */
    { VFIO_PCI_REQ_IRQ_INDEX, A_TRIGGER, D_EVENTFD, EINVAL },
    { VFIO_PCI_MSI_IRQ_INDEX, A_TRIGGER, D_NONE, EINVAL },
};

static void test_set_irqs_matrix(void)
{
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    uint8_t one = 1;
    VuServer s;
    Conn c;

    server_start(&s, NULL);
    conn_open(&c, &s);
    for (unsigned i = 0; i < ARRAY_SIZE(irq_matrix); i++) {
        const IrqCase *k = &irq_matrix[i];
        int err;

        if (k->data == D_EVENTFD) {
            /* The server keeps its own copy of an fd it accepts. */
            int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

            if (k->index == VFIO_PCI_MSIX_IRQ_INDEX &&
                k->action == A_TRIGGER) {
                close(fd);
                fd = dup(efd);
            }
            err = set_irqs(&c, k->action | k->data, k->index, 0, 1, NULL, 0,
                           &fd, 1);
            close(fd);
        } else if (k->data == D_BOOL) {
            err = set_irqs(&c, k->action | k->data, k->index, 0, 1, &one, 1,
                           NULL, 0);
        } else {
            err = set_irqs(&c, k->action | k->data, k->index, 0, 1, NULL, 0,
                           NULL, 0);
        }
        if (err != k->err) {
            g_error("SET_IRQS index %u flags 0x%x: error %d, expected %d",
                    k->index, k->action | k->data, err, k->err);
        }
    }
    /* The loopback triggers above signalled the MSI-X vector 0 eventfd. */
    g_assert_true(eventfd_fired(efd));

    /* Malformed requests. */
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | A_MASK | D_NONE,
                             VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0, NULL, 0),
                    ==, EINVAL);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE | D_BOOL,
                             VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0, NULL, 0),
                    ==, EINVAL);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE | 0x100,
                             VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0, NULL, 0),
                    ==, EINVAL);
    /* count 0 only disables a whole index, with DATA_NONE|TRIGGER. */
    g_assert_cmpint(set_irqs(&c, A_MASK | D_NONE, VFIO_PCI_MSIX_IRQ_INDEX, 0,
                             0, NULL, 0, NULL, 0), ==, EINVAL);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE, VFIO_PCI_MSIX_IRQ_INDEX,
                             0, 0, NULL, 0, NULL, 0), ==, 0);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE, VFIO_PCI_MSIX_IRQ_INDEX,
                             0, 4096, NULL, 0, NULL, 0), ==, EINVAL);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE, VFIO_PCI_NUM_IRQS, 0, 1,
                             NULL, 0, NULL, 0), ==, EINVAL);
    /* DATA_BOOL needs one byte per vector; EVENTFD one fd per vector. */
    g_assert_cmpint(set_irqs(&c, A_MASK | D_BOOL, VFIO_PCI_MSIX_IRQ_INDEX, 0,
                             2, &one, 1, NULL, 0), ==, EINVAL);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD,
                             VFIO_PCI_MSIX_IRQ_INDEX, 0, 2, NULL, 0, &efd, 1),
                    ==, EINVAL);
    /* DATA_NONE with an fd attached. */
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE, VFIO_PCI_MSIX_IRQ_INDEX,
                             0, 1, NULL, 0, &efd, 1), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
    close(efd);
}

/* Every kind of fd that is not an eventfd is refused, for every use. */
static void test_set_irqs_not_eventfd(void)
{
    int pipefd[2], sv[2];
    int memfd = memfd_create("x", MFD_CLOEXEC);
    int bad[4];
    VuServer s;
    Conn c;

    g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), ==, 0);
    bad[0] = pipefd[1];
    bad[1] = memfd;
    bad[2] = sv[0];
    bad[3] = open("/dev/null", O_WRONLY | O_CLOEXEC);
    server_start(&s, NULL);
    conn_open(&c, &s);
    for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
        g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD,
                                 VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0,
                                 &bad[i], 1), ==, EINVAL);
        g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD,
                                 VFIO_PCI_INTX_IRQ_INDEX, 0, 1, NULL, 0,
                                 &bad[i], 1), ==, EINVAL);
        g_assert_cmpint(set_irqs(&c, A_UNMASK | D_EVENTFD,
                                 VFIO_PCI_INTX_IRQ_INDEX, 0, 1, NULL, 0,
                                 &bad[i], 1), ==, EINVAL);
        g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD,
                                 VFIO_PCI_ERR_IRQ_INDEX, 0, 1, NULL, 0,
                                 &bad[i], 1), ==, EINVAL);
    }
    conn_close(&c);
    vu_server_stop(&s);
    for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
        close(bad[i]);
    }
    close(pipefd[0]);
    close(sv[1]);
}

/*
 * Regression (issue 15.3): a client hands the server a dup of its own end
 * of the socket as the INTx "eventfd".  If the server kept it, the client
 * socket would never reach EOF when the client exits, and the next client
 * would wait in the backlog forever.
 */
static void test_set_irqs_own_socket(void)
{
    g_autoptr(GByteArray) v = version_payload(0, 1, client_json);
    int own;
    VuServer s;
    Conn c;
    Reply r;

    int err;

    server_start(&s, NULL);
    conn_open(&c, &s);
    own = dup(c.fd);
    err = set_irqs(&c, A_TRIGGER | D_EVENTFD, VFIO_PCI_INTX_IRQ_INDEX, 0, 1,
                   NULL, 0, &own, 1);
    close(own);
    conn_close(&c);

    /* The next client is served. */
    conn_open_raw(&c, &s);
    msg_send(&c, VFIO_USER_VERSION, VFIO_USER_F_TYPE_COMMAND, v->data,
             v->len, NULL, 0);
    if (!msg_reply(&c, VFIO_USER_VERSION, &r)) {
        g_error("the next client was not served within %d s", LIVENESS_S);
    }
    g_assert_cmpint(r.err, ==, 0);
    reply_clear(&r);
    conn_close(&c);
    /* And the socket was refused as an eventfd in the first place. */
    g_assert_cmpint(err, ==, EINVAL);
    vu_server_stop(&s);
}

/*
 * Regression (issue 15.3): a pipe shrunk to one page posing as the MSI-X
 * eventfd, then 513 loopback triggers (8 bytes each, one more than the
 * pipe holds).  Signalling must never block the server.
 */
static void test_set_irqs_full_pipe(void)
{
    int pipefd[2];
    struct vfio_irq_info info;
    VuServer s;
    Conn c;

    g_assert_cmpint(pipe2(pipefd, O_CLOEXEC), ==, 0);
    g_assert_cmpint(fcntl(pipefd[1], F_SETPIPE_SZ, 4096), ==, 4096);
    int err;

    server_start(&s, NULL);
    conn_open(&c, &s);
    err = set_irqs(&c, A_TRIGGER | D_EVENTFD, VFIO_PCI_MSIX_IRQ_INDEX, 0, 1,
                   NULL, 0, &pipefd[1], 1);
    for (int i = 0; i < 513; i++) {
        /* call() fails the test if the server stops answering. */
        g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE,
                                 VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0,
                                 NULL, 0), ==, 0);
    }
    info = irq_info(&c, VFIO_PCI_MSIX_IRQ_INDEX);
    g_assert_cmpuint(info.count, >=, 1);
    /* The pipe was refused as an eventfd in the first place. */
    g_assert_cmpint(err, ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
    close(pipefd[0]);
    close(pipefd[1]);
}

/* An eventfd at its ceiling is "already signalled": no blocking either. */
static void test_set_irqs_saturated_eventfd(void)
{
    int efd = eventfd(0, EFD_CLOEXEC);      /* blocking on purpose */
    uint64_t max = 0xfffffffffffffffeull;
    VuServer s;
    Conn c;

    g_assert_cmpint(write(efd, &max, sizeof(max)), ==, sizeof(max));
    server_start(&s, NULL);
    conn_open(&c, &s);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD,
                             VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0, &efd, 1),
                    ==, 0);
    /* The client flips the shared file back to blocking mode. */
    g_assert_cmpint(fcntl(efd, F_SETFL, fcntl(efd, F_GETFL) & ~O_NONBLOCK),
                    ==, 0);
    for (int i = 0; i < 4; i++) {
        g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_NONE,
                                 VFIO_PCI_MSIX_IRQ_INDEX, 0, 1, NULL, 0,
                                 NULL, 0), ==, 0);
    }
    conn_close(&c);
    vu_server_stop(&s);
    close(efd);
}

/*
 * The error interrupt: QEMU registers an eventfd on VFIO_PCI_ERR_IRQ_INDEX;
 * a fatal controller error (here: CC.EN with an unsupported page size,
 * which the NVMe model answers with CSTS.CFS) signals it.
 */
static void test_err_irq(void)
{
    int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    VuServer s;
    Conn c;

    server_start(&s, NULL);
    conn_open(&c, &s);
    g_assert_cmpint(set_irqs(&c, A_TRIGGER | D_EVENTFD, VFIO_PCI_ERR_IRQ_INDEX,
                             0, 1, NULL, 0, &efd, 1), ==, 0);
    g_assert_false(eventfd_fired(efd));
    region_write32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x24, 0x000f000f);
    region_write32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x14, 1 | (15u << 7));
    g_assert_cmphex(region_read32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x1c) & 2,
                    ==, 2);
    g_assert_true(eventfd_wait(efd));
    conn_close(&c);
    vu_server_stop(&s);
    close(efd);
}

/* ---- REGION_READ / REGION_WRITE ---- */

static void test_region_io_limits(void)
{
    VFIOUserRegionRW rw = { .region = VFIO_PCI_CONFIG_REGION_INDEX,
                            .count = 4 };
    VuServer s;
    Conn c;
    Reply r;
    uint32_t id;

    server_start(&s, NULL);
    conn_open(&c, &s);
    /* The reply echoes offset, region and count, then the data. */
    g_assert_cmpint(call(&c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         &r), ==, 0);
    g_assert_cmpuint(r.data->len, ==, sizeof(rw) + 4);
    g_assert_cmpmem(r.data->data, sizeof(rw), &rw, sizeof(rw));
    memcpy(&id, r.data->data + sizeof(rw), 4);
    g_assert_cmphex(le32toh(id) & 0xffff, ==, 0x1b36);
    reply_clear(&r);
    /* Past the end, across the end, a missing region, too large. */
    rw.offset = 4096;
    g_assert_cmpint(call(&c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         NULL), ==, EINVAL);
    rw.offset = 254;
    g_assert_cmpint(call(&c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         NULL), ==, EINVAL);
    rw.offset = 0;
    rw.region = 99;
    g_assert_cmpint(call(&c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         NULL), ==, EINVAL);
    rw.region = VFIO_PCI_BAR0_REGION_INDEX;
    rw.count = 64 * 1024 * 1024;
    g_assert_cmpint(call(&c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL, 0,
                         NULL), !=, 0);
    /* A write whose payload is shorter than its count. */
    rw.count = 8;
    g_assert_cmpint(call(&c, VFIO_USER_REGION_WRITE, &rw, sizeof(rw), NULL, 0,
                         NULL), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DEVICE_RESET ---- */

static void test_device_reset(void)
{
    VuServer s;
    Conn c;

    server_start(&s, NULL);
    conn_open(&c, &s);
    region_write32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x24, 0x000f000f);
    region_write32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x14, 1 | (15u << 7));
    g_assert_cmphex(region_read32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x1c), ==,
                    2);
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0, NULL),
                    ==, 0);
    g_assert_cmphex(region_read32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x14), ==,
                    0);
    g_assert_cmphex(region_read32(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x1c), ==,
                    0);
    /* DEVICE_RESET has no payload. */
    g_assert_cmpint(call(&c, VFIO_USER_DEVICE_RESET, &c.id, 2, NULL, 0,
                         NULL), ==, EINVAL);
    conn_close(&c);
    vu_server_stop(&s);
}

/* ---- DMA_MAP / DMA_UNMAP ---- */

static void test_dma_map_flags(void)
{
    VFIOUserDMAMap map = {
        .argsz = sizeof(map),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ | VFIO_USER_DMA_MAP_FLAG_WRITE,
        .address = 0x100000000ull, .size = 0x10000,
    };
    VFIOUserDMAUnmap unmap = { .argsz = sizeof(unmap),
                               .address = 0x100000000ull, .size = 0x10000 };
    int memfd = memfd_create("ram", MFD_CLOEXEC);
    VuServer s;
    Conn c;

    g_assert_cmpint(ftruncate(memfd, 0x20000), ==, 0);
    server_start(&s, NULL);
    conn_open(&c, &s);
    /* With an fd, and without one (message-based DMA). */
    g_assert_cmpint(call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), &memfd, 1,
                         NULL), ==, 0);
    map.address = 0x200000000ull;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL, 0,
                         NULL), ==, 0);
    /* Unknown flags, an empty range, a short argsz. */
    map.address = 0x300000000ull;
    map.flags = 0x80;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL, 0,
                         NULL), ==, EINVAL);
    map.flags = VFIO_USER_DMA_MAP_FLAG_READ;
    map.size = 0;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL, 0,
                         NULL), ==, EINVAL);
    map.size = 0x1000;
    map.argsz = 16;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL, 0,
                         NULL), ==, EINVAL);
    /* Unmap: exact ranges; unknown flags refused. */
    unmap.flags = 0x80;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_UNMAP, &unmap, sizeof(unmap), NULL,
                         0, NULL), ==, EINVAL);
    unmap.flags = 0;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_UNMAP, &unmap, sizeof(unmap), NULL,
                         0, NULL), ==, 0);
    unmap.address = 0x200000000ull;
    g_assert_cmpint(call(&c, VFIO_USER_DMA_UNMAP, &unmap, sizeof(unmap), NULL,
                         0, NULL), ==, 0);
    conn_close(&c);
    vu_server_stop(&s);
    close(memfd);
}

/* ---- Error replies ---- */

static void test_unknown_command(void)
{
    struct vfio_irq_info info;
    VuServer s;
    Conn c;

    server_start(&s, NULL);
    conn_open(&c, &s);
    /* An unknown command gets an error reply; the connection stays. */
    g_assert_cmpint(call(&c, 0x7ff, NULL, 0, NULL, 0, NULL), !=, 0);
    info = irq_info(&c, VFIO_PCI_INTX_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 1);
    /* A command marked NO_REPLY gets none, even when it fails. */
    msg_send(&c, 0x7ff, VFIO_USER_F_TYPE_COMMAND | VFIO_USER_F_NO_REPLY, NULL,
             0, NULL, 0);
    c.id++;
    info = irq_info(&c, VFIO_PCI_INTX_IRQ_INDEX);
    g_assert_cmpuint(info.count, ==, 1);
    conn_close(&c);
    vu_server_stop(&s);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    server_bin = g_getenv("VFIO_USER_NVME");
    if (!server_bin) {
        g_printerr("VFIO_USER_NVME is not set\n");
        return 1;
    }
    if (g_getenv("CONFORMANCE_LIVENESS_S")) {
        LIVENESS_S = MAX(1, atoi(g_getenv("CONFORMANCE_LIVENESS_S")));
    }
    signal(SIGPIPE, SIG_IGN);
    g_test_add_func("/vfio-user/server/version/caps-json", test_version_caps);
    g_test_add_func("/vfio-user/server/version/refused",
                    test_version_refused);
    g_test_add_func("/vfio-user/server/device-info", test_device_info);
    for (unsigned i = 0; i < ARRAY_SIZE(layouts); i++) {
        g_autofree char *name =
            g_strdup_printf("/vfio-user/server/region-info/argsz-32/layout%u",
                            i);

        g_test_add_data_func(name, &layouts[i], test_region_info_argsz);
    }
    g_test_add_func("/vfio-user/server/irq-info", test_irq_info);
    g_test_add_func("/vfio-user/server/set-irqs/matrix",
                    test_set_irqs_matrix);
    g_test_add_func("/vfio-user/server/set-irqs/not-eventfd-refused",
                    test_set_irqs_not_eventfd);
    g_test_add_func("/vfio-user/server/set-irqs/own-socket-next-client",
                    test_set_irqs_own_socket);
    g_test_add_func("/vfio-user/server/set-irqs/full-pipe-no-block",
                    test_set_irqs_full_pipe);
    g_test_add_func("/vfio-user/server/set-irqs/saturated-eventfd-no-block",
                    test_set_irqs_saturated_eventfd);
    g_test_add_func("/vfio-user/server/err-irq/fatal-signals",
                    test_err_irq);
    g_test_add_func("/vfio-user/server/region-io/limits",
                    test_region_io_limits);
    g_test_add_func("/vfio-user/server/device-reset", test_device_reset);
    g_test_add_func("/vfio-user/server/dma/map-flags", test_dma_map_flags);
    g_test_add_func("/vfio-user/server/unknown-command",
                    test_unknown_command);
    return g_test_run();
}
