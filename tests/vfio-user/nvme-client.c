/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A vfio-user client that drives vfio-user-nvme the way a VMM and a guest
 * driver would: VERSION, DMA_MAP of a memfd "guest RAM", config space,
 * region info with its capability chain, SET_IRQS eventfds for MSI-X, then
 * NVMe itself (enable, Identify, I/O queues, Read/Write/Flush) with the
 * doorbells either stored into the mmapped BAR0 (polled by the server) or
 * sent as REGION_WRITE messages (trapped).
 *
 *   nvme-client              GTest (TAP) functional tests
 *   nvme-client --bench [S]  IOPS with --backend null, polled vs trapped
 *                            doorbells, QD 1 and 32, S seconds each
 *
 * The server binary comes from $VFIO_USER_NVME (set by meson).
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "vfio-user/protocol.h"
#include "qemu/vfio-region-info.h"
#include "tests/exe-wrapper.h"
#include "server-process.h"

#define GUEST_IOVA      0x100000000ull
#define GUEST_SIZE      (8 * 1024 * 1024)
#define ASQ_OFF         0x0000
#define ACQ_OFF         0x1000
#define IOSQ_OFF        0x2000
#define IOCQ_OFF        0x3000
#define ID_OFF          0x4000
#define PRP_LIST_OFF    0x8000
#define DATA_OFF        0x100000
#define READ_OFF        0x200000
#define ADMIN_QSIZE     32
#define IO_QSIZE        64
#define WAIT_US         (10 * G_USEC_PER_SEC)   /* liveness bound only */

#define REG_CAP     0x00
#define REG_VS      0x08
#define REG_CC      0x14
#define REG_CSTS    0x1c
#define REG_AQA     0x24
#define REG_ASQ     0x28
#define REG_ACQ     0x30
#define DB_BASE     0x1000
#define CC_ENABLE   (1u | (6u << 16) | (4u << 20))

typedef struct NvmeSqe {
    uint8_t opcode;
    uint8_t flags;
    uint16_t cid;
    uint32_t nsid;
    uint64_t rsvd;
    uint64_t mptr;
    uint64_t prp1;
    uint64_t prp2;
    uint32_t cdw[6];        /* cdw10..cdw15 */
} NvmeSqe;
QEMU_BUILD_BUG_ON(sizeof(NvmeSqe) != 64);

typedef struct NvmeCqe {
    uint32_t result;
    uint32_t rsvd;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t cid;
    uint16_t status;
} NvmeCqe;

typedef enum DoorbellMode {
    DB_POLLED,          /* store into the mmapped BAR0 */
    DB_TRAPPED,         /* REGION_WRITE, waiting for the reply */
    DB_POSTED,          /* REGION_WRITE with NO_REPLY */
} DoorbellMode;

typedef struct Client {
    int sock;
    uint16_t id;
    unsigned posted;        /* NO_REPLY messages sent */
    int mem_fd;
    uint8_t *mem;
    int bar0_fd;
    uint64_t bar0_size;
    uint8_t *db_map;        /* mmap of the BAR0 part holding 0x1000 */
    uint64_t db_map_off;
    uint64_t db_map_len;
    int irq_fd[2];
    uint8_t msix_cap;
    DoorbellMode mode;
    uint16_t asq_tail, acq_head;
    bool acq_phase;
    uint16_t sq_tail, cq_head;
    bool cq_phase;
    uint16_t cid;
} Client;

static const char *server_bin;

/* ---- Server process ---- */

static void server_start(VuServer *s, const char *args)
{
    vu_server_start(s, server_bin, args, WAIT_US);
}

static bool server_alive(VuServer *s)
{
    int status;

    return waitpid(s->pid, &status, WNOHANG) == 0;
}

/* ---- Messages ---- */

static void vu_send(Client *c, uint16_t cmd, uint32_t flags,
                    const void *payload, size_t len, const int *fds,
                    size_t nfds, uint16_t *id)
{
    g_autofree uint8_t *buf = g_malloc(sizeof(VFIOUserHdr) + len);

    *id = c->id++;
    vfio_user_hdr_init((VFIOUserHdr *)buf, *id, cmd,
                       sizeof(VFIOUserHdr) + len, flags);
    if (len) {
        memcpy(buf + sizeof(VFIOUserHdr), payload, len);
    }
    g_assert_cmpint(qemu_send_with_fds(c->sock, buf, sizeof(VFIOUserHdr) + len,
                                       fds, nfds, &error_abort), ==,
                    sizeof(VFIOUserHdr) + len);
}

/*
 * Sends a command and returns the reply's errno (0 on success).  The
 * payload of the reply goes to *reply, an fd that came with it to *rfd.
 */
static int vu_call(Client *c, uint16_t cmd, const void *payload, size_t len,
                   const int *fds, size_t nfds, GByteArray **reply, int *rfd)
{
    VFIOUserHdr hdr;
    int rfds[4];
    size_t nrfds = ARRAY_SIZE(rfds);
    uint16_t id;
    g_autofree uint8_t *body = NULL;
    size_t body_len;

    vu_send(c, cmd, VFIO_USER_F_TYPE_COMMAND, payload, len, fds, nfds, &id);
    g_assert_cmpint(qemu_recv_with_fds(c->sock, &hdr, sizeof(hdr), rfds,
                                       &nrfds, &error_abort), ==,
                    sizeof(hdr));
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_REPLY);
    g_assert_cmpuint(hdr.id, ==, id);
    g_assert_cmpuint(hdr.command, ==, cmd);
    g_assert_cmpuint(hdr.size, >=, sizeof(hdr));
    body_len = hdr.size - sizeof(hdr);
    if (body_len) {
        size_t none = 0;

        body = g_malloc(body_len);
        g_assert_cmpint(qemu_recv_with_fds(c->sock, body, body_len, NULL,
                                           &none, &error_abort), ==,
                        body_len);
    }
    if (rfd) {
        *rfd = nrfds ? rfds[0] : -1;
    } else {
        for (size_t i = 0; i < nrfds; i++) {
            close(rfds[i]);
        }
    }
    if (reply) {
        *reply = g_byte_array_new();
        g_byte_array_append(*reply, body, body_len);
    }
    return hdr.flags & VFIO_USER_F_ERROR ? (int)hdr.error_reply : 0;
}

static void region_write(Client *c, uint32_t region, uint64_t offset,
                         const void *data, uint32_t count, bool posted)
{
    g_autofree uint8_t *buf = g_malloc(sizeof(VFIOUserRegionRW) + count);
    VFIOUserRegionRW *rw = (VFIOUserRegionRW *)buf;
    uint16_t id;

    rw->offset = offset;
    rw->region = region;
    rw->count = count;
    memcpy(rw->data, data, count);
    if (posted) {
        vu_send(c, VFIO_USER_REGION_WRITE,
                VFIO_USER_F_TYPE_COMMAND | VFIO_USER_F_NO_REPLY, buf,
                sizeof(*rw) + count, NULL, 0, &id);
        c->posted++;
        return;
    }
    g_assert_cmpint(vu_call(c, VFIO_USER_REGION_WRITE, buf,
                            sizeof(*rw) + count, NULL, 0, NULL, NULL), ==, 0);
}

static void region_read(Client *c, uint32_t region, uint64_t offset,
                        void *data, uint32_t count)
{
    VFIOUserRegionRW rw = { .offset = offset, .region = region,
                            .count = count };
    g_autoptr(GByteArray) reply = NULL;

    g_assert_cmpint(vu_call(c, VFIO_USER_REGION_READ, &rw, sizeof(rw), NULL,
                            0, &reply, NULL), ==, 0);
    g_assert_cmpuint(reply->len, ==, sizeof(rw) + count);
    memcpy(data, reply->data + sizeof(rw), count);
}

/*
 * In DB_POLLED mode with the register page mapped (the server's default),
 * registers are loads and stores on the mapping, as a guest's would be;
 * otherwise REGION_READ/WRITE messages.
 */
static uint32_t *reg_mapped(Client *c, uint64_t off)
{
    if (c->mode != DB_POLLED || !c->db_map || c->db_map_off != 0) {
        return NULL;
    }
    return (uint32_t *)(c->db_map + off);
}

static uint32_t reg_read32(Client *c, uint64_t off)
{
    uint32_t *p = reg_mapped(c, off);
    uint32_t v;

    if (p) {
        return le32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
    }
    region_read(c, VFIO_PCI_BAR0_REGION_INDEX, off, &v, 4);
    return le32toh(v);
}

static void reg_write32(Client *c, uint64_t off, uint32_t v)
{
    uint32_t *p = reg_mapped(c, off);

    v = htole32(v);
    if (p) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        return;
    }
    region_write(c, VFIO_PCI_BAR0_REGION_INDEX, off, &v, 4, false);
}

static void reg_write64(Client *c, uint64_t off, uint64_t v)
{
    if (reg_mapped(c, off)) {
        reg_write32(c, off, v);
        reg_write32(c, off + 4, v >> 32);
        return;
    }
    v = htole64(v);
    region_write(c, VFIO_PCI_BAR0_REGION_INDEX, off, &v, 8, false);
}

/* ---- Connection set-up ---- */

static GByteArray *region_info(Client *c, uint32_t index, int *fd)
{
    struct vfio_region_info req = { .argsz = 1024, .index = index };
    GByteArray *reply = NULL;
    struct vfio_region_info *info;
    g_autoptr(Error) err = NULL;

    g_assert_cmpint(vu_call(c, VFIO_USER_DEVICE_GET_REGION_INFO, &req,
                            sizeof(req), NULL, 0, &reply, fd), ==, 0);
    g_assert_cmpuint(reply->len, >=, sizeof(*info));
    /* The chain is valid by the one definition Conduit's client uses. */
    if (!vfio_region_info_check((void *)reply->data, reply->len, &err)) {
        g_error("region %u info: %s", index, error_get_pretty(err));
    }
    info = (struct vfio_region_info *)reply->data;
    g_assert_cmpuint(info->index, ==, index);
    return reply;
}

/* A capability of a chain region_info() checked, or NULL. */
static const struct vfio_info_cap_header *region_cap(GByteArray *info,
                                                     uint16_t id)
{
    const struct vfio_info_cap_header *cap;

    g_assert_true(vfio_region_info_find_cap((void *)info->data, info->len,
                                            id, &cap, &error_abort));
    return cap;
}

/* Its areas fit before the next capability: the check made sure. */
static const struct vfio_region_info_cap_sparse_mmap *
region_sparse(GByteArray *info)
{
    return (const void *)region_cap(info, VFIO_REGION_INFO_CAP_SPARSE_MMAP);
}

static bool region_msix_mappable(GByteArray *info)
{
    return region_cap(info, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE) != NULL;
}

static void client_connect(Client *c, VuServer *s)
{
    g_autofree void *ver = NULL;
    g_autoptr(GByteArray) reply = NULL;
    VFIOUserCaps caps, peer;
    uint16_t major, minor;
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    size_t len;

    memset(c, 0, sizeof(*c));
    c->bar0_fd = -1;
    c->irq_fd[0] = c->irq_fd[1] = -1;
    /* The socket file appears just before listen(): retry briefly. */
    for (;;) {
        g_autoptr(Error) err = NULL;

        c->sock = unix_connect_path(s->sock, &err);
        if (c->sock >= 0) {
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            g_error("%s", error_get_pretty(err));
        }
        g_usleep(1000);
    }
    vfio_user_caps_init_default(&caps);
    caps.max_msg_fds = 8;
    ver = vfio_user_version_build(VFIO_USER_MAJOR, VFIO_USER_MINOR, &caps,
                                  &len);
    g_assert_cmpint(vu_call(c, VFIO_USER_VERSION, ver, len, NULL, 0, &reply,
                            NULL), ==, 0);
    g_assert_true(vfio_user_version_parse(reply->data, reply->len, &major,
                                          &minor, &peer, &error_abort));
    g_assert_cmpuint(major, ==, VFIO_USER_MAJOR);
    g_assert_true(peer.pgsizes & 4096);
}

static void client_map_memory(Client *c)
{
    VFIOUserDMAMap map = {
        .argsz = sizeof(map),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ | VFIO_USER_DMA_MAP_FLAG_WRITE,
        .offset = 0,
        .address = GUEST_IOVA,
        .size = GUEST_SIZE,
    };

    c->mem_fd = memfd_create("guest-ram", MFD_CLOEXEC);
    g_assert_cmpint(c->mem_fd, >=, 0);
    g_assert_cmpint(ftruncate(c->mem_fd, GUEST_SIZE), ==, 0);
    c->mem = mmap(NULL, GUEST_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                  c->mem_fd, 0);
    g_assert_true(c->mem != MAP_FAILED);
    g_assert_cmpint(vu_call(c, VFIO_USER_DMA_MAP, &map, sizeof(map),
                            &c->mem_fd, 1, NULL, NULL), ==, 0);
}

static void client_read_config(Client *c)
{
    uint8_t cfg[256];
    uint8_t pos;
    unsigned hops = 0;

    region_read(c, VFIO_PCI_CONFIG_REGION_INDEX, 0, cfg, sizeof(cfg));
    g_assert_cmphex(lduw_le_p(cfg + PCI_CLASS_DEVICE), ==, 0x0108);
    g_assert_cmphex(cfg[PCI_CLASS_PROG], ==, 0x02);
    g_assert_true(lduw_le_p(cfg + PCI_STATUS) & PCI_STATUS_CAP_LIST);
    g_assert_cmpuint(cfg[PCI_INTERRUPT_PIN], ==, 1);
    /* BAR0: 64-bit memory. */
    g_assert_cmphex(cfg[PCI_BASE_ADDRESS_0] & 0x7, ==,
                    PCI_BASE_ADDRESS_MEM_TYPE_64);
    for (pos = cfg[PCI_CAPABILITY_LIST]; pos && hops < 48; hops++) {
        if (cfg[pos] == PCI_CAP_ID_MSIX) {
            c->msix_cap = pos;
            break;
        }
        pos = cfg[pos + 1];
    }
    g_assert_cmpuint(c->msix_cap, !=, 0);
}

static void client_map_bar0_part(Client *c, const struct vfio_region_info *ri,
                                 uint64_t offset, uint64_t size)
{
    c->db_map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
                     c->bar0_fd, ri->offset + offset);
    g_assert_true(c->db_map != MAP_FAILED);
    c->db_map_off = offset;
    c->db_map_len = size;
}

/*
 * BAR0 info; maps the whole BAR when there is no sparse list, else the
 * sparse area holding the doorbells if there is one.
 */
static GByteArray *client_map_bar0(Client *c)
{
    GByteArray *info = region_info(c, VFIO_PCI_BAR0_REGION_INDEX,
                                   &c->bar0_fd);
    const struct vfio_region_info *ri = (void *)info->data;
    const struct vfio_region_info_cap_sparse_mmap *sp = region_sparse(info);

    c->bar0_size = ri->size;
    g_assert_cmpuint(c->bar0_size, >=, 0x4000);
    g_assert_true(is_power_of_2(c->bar0_size));
    if (!(ri->flags & VFIO_REGION_INFO_FLAG_MMAP)) {
        g_assert_cmpint(c->bar0_fd, <, 0);
        return info;
    }
    g_assert_cmpint(c->bar0_fd, >=, 0);
    if (!sp) {
        client_map_bar0_part(c, ri, 0, c->bar0_size);
        return info;
    }
    for (uint32_t i = 0; i < sp->nr_areas; i++) {
        const struct vfio_region_sparse_mmap_area *a = &sp->areas[i];

        g_assert_cmphex(a->offset + a->size, <=, c->bar0_size);
        if (a->offset <= DB_BASE && a->offset + a->size > DB_BASE) {
            client_map_bar0_part(c, ri, a->offset, a->size);
        }
    }
    return info;
}

static void client_setup_irqs(Client *c)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_MSIX_IRQ_INDEX,
        .start = 0,
        .count = 2,
    };
    struct vfio_irq_info irq = { .argsz = sizeof(irq),
                                 .index = VFIO_PCI_MSIX_IRQ_INDEX };
    g_autoptr(GByteArray) reply = NULL;
    uint16_t ctl;

    g_assert_cmpint(vu_call(c, VFIO_USER_DEVICE_GET_IRQ_INFO, &irq,
                            sizeof(irq), NULL, 0, &reply, NULL), ==, 0);
    g_assert_cmpuint(reply->len, >=, sizeof(irq));
    memcpy(&irq, reply->data, sizeof(irq));
    /* One vector per CQ: admin + I/O queues. */
    g_assert_cmpuint(irq.count, >=, 2);
    g_assert_cmpuint(irq.count, <=, 65);
    for (int i = 0; i < 2; i++) {
        c->irq_fd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    }
    g_assert_cmpint(vu_call(c, VFIO_USER_DEVICE_SET_IRQS, &set, sizeof(set),
                            c->irq_fd, 2, NULL, NULL), ==, 0);
    /* Enable MSI-X in config space, as the guest driver would. */
    region_read(c, VFIO_PCI_CONFIG_REGION_INDEX, c->msix_cap + PCI_MSIX_FLAGS,
                &ctl, 2);
    ctl |= PCI_MSIX_FLAGS_ENABLE;
    region_write(c, VFIO_PCI_CONFIG_REGION_INDEX,
                 c->msix_cap + PCI_MSIX_FLAGS, &ctl, 2, false);
}

/* Waits for an MSI-X vector's eventfd; returns its count. */
static uint64_t irq_wait(Client *c, int vector)
{
    struct pollfd pfd = { .fd = c->irq_fd[vector], .events = POLLIN };
    uint64_t v = 0;

    g_assert_cmpint(poll(&pfd, 1, WAIT_US / 1000), ==, 1);
    g_assert_cmpint(read(c->irq_fd[vector], &v, sizeof(v)), ==, sizeof(v));
    return v;
}

static void irq_drain(Client *c, int vector)
{
    uint64_t v;

    while (read(c->irq_fd[vector], &v, sizeof(v)) == sizeof(v)) {
        /* discard */
    }
}

static void client_close(Client *c)
{
    if (c->db_map) {
        munmap(c->db_map, c->db_map_len);
    }
    if (c->mem) {
        munmap(c->mem, GUEST_SIZE);
    }
    for (int i = 0; i < 2; i++) {
        if (c->irq_fd[i] >= 0) {
            close(c->irq_fd[i]);
        }
    }
    if (c->bar0_fd >= 0) {
        close(c->bar0_fd);
    }
    if (c->mem_fd > 0) {
        close(c->mem_fd);
    }
    close(c->sock);
    memset(c, 0, sizeof(*c));
}

/* ---- NVMe ---- */

static void ring(Client *c, unsigned idx, uint32_t val)
{
    uint64_t off = DB_BASE + 4ull * idx;

    if (c->mode == DB_POLLED) {
        g_assert_nonnull(c->db_map);
        __atomic_store_n((uint32_t *)(c->db_map + off - c->db_map_off),
                         htole32(val), __ATOMIC_RELEASE);
        return;
    }
    val = htole32(val);
    region_write(c, VFIO_PCI_BAR0_REGION_INDEX, off, &val, 4,
                 c->mode == DB_POSTED);
}

/* Returns true with *cqe filled if a new entry is at *head. */
static bool cq_peek(Client *c, uint64_t cq_off, uint16_t head, bool phase,
                    NvmeCqe *cqe)
{
    const NvmeCqe *slot = (const NvmeCqe *)(c->mem + cq_off) + head;
    uint16_t st = __atomic_load_n(&slot->status, __ATOMIC_ACQUIRE);

    if ((le16toh(st) & 1) != phase) {
        return false;
    }
    memcpy(cqe, slot, sizeof(*cqe));
    return true;
}

static NvmeCqe cq_wait(Client *c, uint64_t cq_off, uint16_t *head,
                       bool *phase, uint16_t size)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    NvmeCqe cqe;

    while (!cq_peek(c, cq_off, *head, *phase, &cqe)) {
        if (g_get_monotonic_time() > deadline) {
            g_error("no completion at CQ offset 0x%" PRIx64 " head %u",
                    cq_off, *head);
        }
        g_usleep(10);
    }
    if (++*head == size) {
        *head = 0;
        *phase = !*phase;
    }
    return cqe;
}

static uint16_t admin(Client *c, NvmeSqe *cmd, uint32_t *result)
{
    NvmeCqe cqe;

    cmd->cid = htole16(++c->cid);
    memcpy(c->mem + ASQ_OFF + c->asq_tail * 64, cmd, 64);
    c->asq_tail = (c->asq_tail + 1) % ADMIN_QSIZE;
    ring(c, 0, c->asq_tail);
    cqe = cq_wait(c, ACQ_OFF, &c->acq_head, &c->acq_phase, ADMIN_QSIZE);
    ring(c, 1, c->acq_head);
    g_assert_cmpuint(le16toh(cqe.cid), ==, c->cid);
    g_assert_cmpuint(le16toh(cqe.sq_id), ==, 0);
    if (result) {
        *result = le32toh(cqe.result);
    }
    return le16toh(cqe.status) >> 1;
}

static void nvme_enable(Client *c)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    uint64_t cap;

    region_read(c, VFIO_PCI_BAR0_REGION_INDEX, REG_CAP, &cap, 8);
    cap = le64toh(cap);
    g_assert_cmpuint(cap & 0xffff, >=, IO_QSIZE - 1);     /* MQES */
    g_assert_cmpuint((cap >> 32) & 0xf, ==, 0);           /* DSTRD */
    g_assert_true((cap >> 37) & 1);                        /* NVM */
    g_assert_cmphex(reg_read32(c, REG_VS), ==, 0x10400);
    /* A fresh (or reset) controller is disabled. */
    g_assert_cmphex(reg_read32(c, REG_CC), ==, 0);
    g_assert_cmphex(reg_read32(c, REG_CSTS), ==, 0);

    memset(c->mem, 0, DATA_OFF);
    reg_write32(c, REG_AQA, ((ADMIN_QSIZE - 1) << 16) | (ADMIN_QSIZE - 1));
    reg_write64(c, REG_ASQ, GUEST_IOVA + ASQ_OFF);
    reg_write64(c, REG_ACQ, GUEST_IOVA + ACQ_OFF);
    reg_write32(c, REG_CC, CC_ENABLE);
    while (!(reg_read32(c, REG_CSTS) & 1)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(100);
    }
    g_assert_cmphex(reg_read32(c, REG_CSTS), ==, 1);
    if (reg_mapped(c, REG_CSTS)) {
        uint32_t csts;

        /* The trapped view agrees with the mapped one. */
        region_read(c, VFIO_PCI_BAR0_REGION_INDEX, REG_CSTS, &csts, 4);
        g_assert_cmphex(le32toh(csts), ==, 1);
        g_assert_cmphex(le64toh(*(uint64_t *)(c->db_map + REG_CAP)), ==, cap);
    }
    c->asq_tail = c->acq_head = 0;
    c->acq_phase = true;
}

static void nvme_identify(Client *c)
{
    uint8_t *id = c->mem + ID_OFF;
    NvmeSqe cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw = { 1 } };

    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    g_assert_cmpmem(id + 24, 7, "Conduit", 7);          /* MN */
    g_assert_cmphex(ldl_le_p(id + 80), ==, 0x10400);    /* VER */
    g_assert_cmphex(id[512], ==, 0x66);                  /* SQES */
    g_assert_cmphex(id[513], ==, 0x44);                  /* CQES */
    g_assert_cmpuint(ldl_le_p(id + 516), ==, 1);         /* NN */
    /* The admin CQ's vector fired. */
    g_assert_cmpuint(irq_wait(c, 0), >=, 1);

    cmd = (NvmeSqe) { .opcode = 0x06, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_IOVA + ID_OFF) };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    g_assert_cmpuint(ldq_le_p(id), >, 0);                /* NSZE */
    g_assert_cmpuint((ldl_le_p(id + 128) >> 16) & 0xff, ==, 9);
}

static void nvme_create_io_queues(Client *c)
{
    NvmeSqe cmd = { .opcode = 0x09, .cdw = { 0x07, 0x00000000 } };
    uint32_t result;

    g_assert_cmphex(admin(c, &cmd, &result), ==, 0);
    g_assert_cmpuint(result & 0xffff, >=, 0);
    cmd = (NvmeSqe) { .opcode = 0x05, .prp1 = htole64(GUEST_IOVA + IOCQ_OFF),
                      .cdw = { ((IO_QSIZE - 1) << 16) | 1,
                               (1u << 16) | 3 } };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    cmd = (NvmeSqe) { .opcode = 0x01, .prp1 = htole64(GUEST_IOVA + IOSQ_OFF),
                      .cdw = { ((IO_QSIZE - 1) << 16) | 1,
                               (1u << 16) | 1 } };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    c->sq_tail = c->cq_head = 0;
    c->cq_phase = true;
}

static void io_submit_cmd(Client *c, NvmeSqe *cmd, bool doorbell)
{
    memcpy(c->mem + IOSQ_OFF + c->sq_tail * 64, cmd, 64);
    c->sq_tail = (c->sq_tail + 1) % IO_QSIZE;
    if (doorbell) {
        ring(c, 2, c->sq_tail);
    }
}

static uint16_t io_cmd(Client *c, NvmeSqe *cmd)
{
    NvmeCqe cqe;

    cmd->cid = htole16(++c->cid);
    io_submit_cmd(c, cmd, true);
    cqe = cq_wait(c, IOCQ_OFF, &c->cq_head, &c->cq_phase, IO_QSIZE);
    ring(c, 3, c->cq_head);
    g_assert_cmpuint(le16toh(cqe.cid), ==, c->cid);
    g_assert_cmpuint(le16toh(cqe.sq_id), ==, 1);
    return le16toh(cqe.status) >> 1;
}

/* A 16 KiB command at data_off, with a PRP list for pages 2-4. */
static void rw_cmd(Client *c, NvmeSqe *cmd, uint8_t opcode, uint64_t lba,
                   uint64_t data_off, unsigned slot)
{
    uint64_t list_off = PRP_LIST_OFF + slot * 64;

    for (unsigned i = 0; i < 3; i++) {
        stq_le_p(c->mem + list_off + 8 * i,
                 GUEST_IOVA + data_off + 4096 * (i + 1));
    }
    *cmd = (NvmeSqe) {
        .opcode = opcode, .nsid = htole32(1),
        .prp1 = htole64(GUEST_IOVA + data_off),
        .prp2 = htole64(GUEST_IOVA + list_off),
        .cdw = { lba & 0xffffffff, lba >> 32, 31 },
    };
}

static void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
    }
}

/* Writes 4 x 16 KiB at lba, reads them back elsewhere, compares. */
static void write_read_pattern(Client *c, uint64_t lba, uint32_t seed)
{
    NvmeSqe cmd;

    fill_pattern(c->mem + DATA_OFF, 4 * 16384, seed);
    irq_drain(c, 1);
    for (unsigned i = 0; i < 4; i++) {
        rw_cmd(c, &cmd, 0x01, lba + 32 * i, DATA_OFF + 16384 * i, i);
        g_assert_cmphex(io_cmd(c, &cmd), ==, 0);
    }
    /* The I/O CQ's vector fired (possibly coalesced into fewer counts). */
    g_assert_cmpuint(irq_wait(c, 1), >=, 1);
    memset(c->mem + READ_OFF, 0xa5, 4 * 16384);
    for (unsigned i = 0; i < 4; i++) {
        rw_cmd(c, &cmd, 0x02, lba + 32 * i, READ_OFF + 16384 * i, i);
        g_assert_cmphex(io_cmd(c, &cmd), ==, 0);
    }
    g_assert_cmpmem(c->mem + READ_OFF, 4 * 16384, c->mem + DATA_OFF,
                    4 * 16384);
}

static void nvme_flush(Client *c)
{
    NvmeSqe cmd = { .opcode = 0x00, .nsid = htole32(1) };

    g_assert_cmphex(io_cmd(c, &cmd), ==, 0);
}

static void nvme_shutdown(Client *c)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;

    reg_write32(c, REG_CC, CC_ENABLE | (1u << 14));
    while ((reg_read32(c, REG_CSTS) & 0xc) != 0x8) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(100);
    }
    reg_write32(c, REG_CC, 0);
    /* Through the mapping the disable takes a poller pass to show. */
    while (reg_read32(c, REG_CSTS) & 1) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(100);
    }
}

/* Connected, guest memory shared, config space read, BAR0 mapped. */
static void client_attach(Client *c, VuServer *s, DoorbellMode mode)
{
    g_autoptr(GByteArray) bar0 = NULL;

    client_connect(c, s);
    c->mode = mode;
    client_map_memory(c);
    client_read_config(c);
    bar0 = client_map_bar0(c);
    if (mode == DB_POLLED) {
        g_assert_nonnull(c->db_map);
    }
}

/* Everything up to working I/O queues. */
static void client_bringup(Client *c, VuServer *s, DoorbellMode mode)
{
    client_attach(c, s, mode);
    client_setup_irqs(c);
    nvme_enable(c);
    nvme_identify(c);
    nvme_create_io_queues(c);
}

/* ---- Tests ---- */

static void test_ram(DoorbellMode mode)
{
    VuServer s;
    Client c;

    server_start(&s, "--backend ram --size 16M");
    client_bringup(&c, &s, mode);
    write_read_pattern(&c, 1000, mode);
    nvme_flush(&c);
    nvme_shutdown(&c);
    client_close(&c);
    vu_server_stop(&s);
}

static void test_ram_polled(void)
{
    test_ram(DB_POLLED);
}

static void test_ram_trapped(void)
{
    test_ram(DB_TRAPPED);
}

static void test_ram_posted(void)
{
    test_ram(DB_POSTED);
}

static void test_file(DoorbellMode mode)
{
    VuServer s;
    Client c;
    g_autoptr(GError) gerr = NULL;
    g_autofree char *dir = g_dir_make_tmp("nvme-disk-XXXXXX", &gerr);
    g_autofree char *path = g_build_filename(dir, "disk.img", NULL);
    g_autofree char *args = g_strdup_printf("--backend file:%s --size 8M "
                                            "--aio-depth 8", path);
    g_autofree uint8_t *disk = g_malloc(4 * 16384);
    int fd;

    g_assert_no_error(gerr);
    server_start(&s, args);
    client_bringup(&c, &s, mode);
    write_read_pattern(&c, 2048, 7 + mode);
    nvme_flush(&c);

    /* Durable and really in the file: read it behind the server's back. */
    fd = open(path, O_RDONLY);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(pread(fd, disk, 4 * 16384, 2048 * 512), ==, 4 * 16384);
    close(fd);
    g_assert_cmpmem(disk, 4 * 16384, c.mem + DATA_OFF, 4 * 16384);

    nvme_shutdown(&c);
    client_close(&c);
    vu_server_stop(&s);
    unlink(path);
    rmdir(dir);
}

static void test_file_polled(void)
{
    test_file(DB_POLLED);
}

static void test_file_trapped(void)
{
    test_file(DB_TRAPPED);
}

static void test_disconnect_mid_io(void)
{
    VuServer s;
    Client c;
    NvmeSqe cmd;
    uint8_t *stale;
    uint64_t stale_off, stale_len;

    server_start(&s, "--backend ram --size 16M");
    client_bringup(&c, &s, DB_POLLED);
    /* Queue 32 writes, ring once and vanish while they run. */
    for (unsigned i = 0; i < 32; i++) {
        rw_cmd(&c, &cmd, 0x01, 32 * i, DATA_OFF + 16384 * (i % 8), i);
        cmd.cid = htole16(1000 + i);
        io_submit_cmd(&c, &cmd, false);
    }
    ring(&c, 2, c.sq_tail);
    client_close(&c);

    /* The server resets the device and serves the next client. */
    client_bringup(&c, &s, DB_TRAPPED);
    write_read_pattern(&c, 4000, 42);
    g_assert_true(server_alive(&s));

    /* Leave with BAR0 still mapped: that must not reach the next client. */
    stale = c.db_map;
    stale_off = c.db_map_off;
    stale_len = c.db_map_len;
    g_assert_nonnull(stale);
    c.db_map = NULL;
    client_close(&c);
    client_bringup(&c, &s, DB_POLLED);
    stl_le_p(stale + DB_BASE + 8 - stale_off, 5);     /* SQ1 tail */
    g_assert_cmpuint(ldl_le_p(c.db_map + DB_BASE + 8 - c.db_map_off), ==, 0);
    write_read_pattern(&c, 8000, 43);
    nvme_shutdown(&c);
    client_close(&c);
    munmap(stale, stale_len);
    vu_server_stop(&s);
}

static void test_no_mmap_is_trap_only(void)
{
    VuServer s;
    Client c;
    g_autoptr(GByteArray) info = NULL;

    server_start(&s, "--backend ram --size 4M --no-mmap");
    client_connect(&c, &s);
    info = client_map_bar0(&c);
    g_assert_false(((struct vfio_region_info *)info->data)->flags &
                   VFIO_REGION_INFO_FLAG_MMAP);
    g_assert_null(c.db_map);
    client_close(&c);
    client_bringup(&c, &s, DB_TRAPPED);
    write_read_pattern(&c, 0, 5);
    client_close(&c);
    vu_server_stop(&s);
}

/* Odd-sized or straddling BAR0 accesses get answers or errors, no harm. */
static void test_odd_bar0_accesses(void)
{
    VFIOUserRegionRW straddle = { .offset = 0xffe,
                                  .region = VFIO_PCI_BAR0_REGION_INDEX,
                                  .count = 4 };
    uint8_t b[8];
    uint16_t vs_major;
    VuServer s;
    Client c;

    server_start(&s, "--backend null");
    client_connect(&c, &s);
    /* A 2-byte read of VS's upper half. */
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_VS + 2, &vs_major, 2);
    g_assert_cmphex(le16toh(vs_major), ==, 1);
    /* One byte of CAP. */
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_CAP + 2, b, 1);
    g_assert_cmphex(b[0], ==, 0x01);                    /* CQR */
    /* Registers and doorbells in one access: refused. */
    g_assert_cmpint(vu_call(&c, VFIO_USER_REGION_READ, &straddle,
                            sizeof(straddle), NULL, 0, NULL, NULL), ==,
                    EINVAL);
    /* Odd-sized register and doorbell writes are ignored. */
    memset(b, 0xff, sizeof(b));
    region_write(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_CC, b, 2, false);
    region_write(&c, VFIO_PCI_BAR0_REGION_INDEX, DB_BASE, b, 1, false);
    region_write(&c, VFIO_PCI_BAR0_REGION_INDEX, DB_BASE + 2, b, 4, false);
    g_assert_cmphex(reg_read32(&c, REG_CC), ==, 0);
    g_assert_cmphex(reg_read32(&c, REG_CSTS), ==, 0);
    client_close(&c);
    client_bringup(&c, &s, DB_TRAPPED);
    client_close(&c);
    vu_server_stop(&s);
}

static void test_msix_table_on_doorbell_page(void)
{
    VuServer s;
    Client c;
    g_autoptr(GByteArray) info = NULL;
    const struct vfio_region_info_cap_sparse_mmap *sp;
    uint8_t cfg[256];
    uint32_t table;

    server_start(&s, "--backend null --msix-bar 0 --msix-table-offset 0x1800 "
                 "--msix-pba-offset 0x1c00 --no-msix-mappable");
    client_connect(&c, &s);
    region_read(&c, VFIO_PCI_CONFIG_REGION_INDEX, 0, cfg, sizeof(cfg));
    client_read_config(&c);
    table = ldl_le_p(cfg + c.msix_cap + PCI_MSIX_TABLE);
    g_assert_cmphex(table, ==, 0x1800);             /* BIR 0 */
    g_assert_cmphex(ldl_le_p(cfg + c.msix_cap + PCI_MSIX_PBA), ==, 0x1c00);
    info = client_map_bar0(&c);
    g_assert_false(region_msix_mappable(info));
    /*
     * As Linux without the capability: everything but the host page
     * holding the table (and the doorbells), registers included.  With
     * 64 KiB pages (POWER) that page is all of BAR0: nothing to map.
     */
    sp = region_sparse(info);
    if (getpagesize() == 0x1000) {
        g_assert_nonnull(sp);
        g_assert_cmpuint(sp->nr_areas, ==, 2);
        g_assert_cmphex(sp->areas[0].offset, ==, 0);
        g_assert_cmphex(sp->areas[0].size, ==, 0x1000);
        g_assert_cmphex(sp->areas[1].offset, ==, 0x2000);
        g_assert_cmphex(sp->areas[1].size, ==, 0x2000);
    } else {
        g_assert_null(sp);
        g_assert_false(((struct vfio_region_info *)info->data)->flags &
                       VFIO_REGION_INFO_FLAG_MMAP);
    }
    g_assert_null(c.db_map);
    client_close(&c);
    vu_server_stop(&s);

    /* With MSIX_MAPPABLE: the whole BAR, no sparse list, as Linux. */
    server_start(&s, "--backend null --msix-bar 0 --msix-table-offset 0x1800 "
                 "--msix-pba-offset 0x1c00");
    client_bringup(&c, &s, DB_POLLED);
    g_clear_pointer(&info, g_byte_array_unref);
    info = region_info(&c, VFIO_PCI_BAR0_REGION_INDEX, NULL);
    g_assert_true(region_msix_mappable(info));
    g_assert_null(region_sparse(info));
    g_assert_true(((struct vfio_region_info *)info->data)->flags &
                  VFIO_REGION_INFO_FLAG_MMAP);
    g_assert_cmphex(c.db_map_off, ==, 0);
    /* BAR0 is at least a host page, so that all of it maps. */
    g_assert_cmphex(c.db_map_len, ==, MAX(0x4000, getpagesize()));
    client_close(&c);
    vu_server_stop(&s);
}

/* The default BAR0 (MSI-X in BAR4): one plain mappable region. */
static void test_default_bar0_plain_mmap(void)
{
    VuServer s;
    Client c;
    g_autoptr(GByteArray) info = NULL;

    server_start(&s, "--backend null");
    client_connect(&c, &s);
    info = client_map_bar0(&c);
    g_assert_true(((struct vfio_region_info *)info->data)->flags &
                  VFIO_REGION_INFO_FLAG_MMAP);
    g_assert_null(region_sparse(info));
    g_assert_false(region_msix_mappable(info));
    g_assert_nonnull(c.db_map);
    g_assert_cmphex(c.db_map_off, ==, 0);
    g_assert_cmphex(c.db_map_len, ==, c.bar0_size);
    client_close(&c);
    vu_server_stop(&s);
}

/*
 * Registers written only through the mapping enable and disable the
 * controller (the poller notices them), CSTS and CAP read through it.
 */
static void test_mapped_registers(void)
{
    VuServer s;
    Client c;
    uint32_t v;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    g_assert_nonnull(reg_mapped(&c, REG_CC));
    write_read_pattern(&c, 8, 21);
    /* A scribble over read-only VS is repaired by the next pass. */
    reg_write32(&c, REG_VS, 0);
    {
        gint64 deadline = g_get_monotonic_time() + WAIT_US;

        while (reg_read32(&c, REG_VS) != 0x10400) {
            g_assert_cmpint(g_get_monotonic_time(), <, deadline);
            g_usleep(100);
        }
    }
    nvme_shutdown(&c);
    /* CC.EN = 0 stored through the mapping reached the controller. */
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_CSTS, &v, 4);
    g_assert_cmphex(le32toh(v) & 1, ==, 0);
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_CC, &v, 4);
    g_assert_cmphex(le32toh(v), ==, 0);
    /* And enabling through the mapping works again after a disable. */
    nvme_enable(&c);
    nvme_identify(&c);
    client_close(&c);
    vu_server_stop(&s);
}

/* 32 writes at once through an aio depth of 2: all complete, all land. */
static void test_file_queue_depth(void)
{
    VuServer s;
    Client c;
    g_autoptr(GError) gerr = NULL;
    g_autofree char *dir = g_dir_make_tmp("nvme-disk-XXXXXX", &gerr);
    g_autofree char *path = g_build_filename(dir, "disk.img", NULL);
    g_autofree char *args = g_strdup_printf("--backend file:%s --size 8M "
                                            "--aio-depth 2", path);
    g_autofree uint8_t *disk = g_malloc(32 * 16384);
    bool seen[32] = { false };
    NvmeSqe cmd;
    int fd;

    g_assert_no_error(gerr);
    server_start(&s, args);
    client_bringup(&c, &s, DB_POLLED);
    fill_pattern(c.mem + DATA_OFF, 32 * 16384, 99);
    for (unsigned i = 0; i < 32; i++) {
        rw_cmd(&c, &cmd, 0x01, 32 * i, DATA_OFF + 16384 * i, i);
        cmd.cid = htole16(500 + i);
        io_submit_cmd(&c, &cmd, false);
    }
    ring(&c, 2, c.sq_tail);
    for (unsigned i = 0; i < 32; i++) {
        NvmeCqe cqe = cq_wait(&c, IOCQ_OFF, &c.cq_head, &c.cq_phase,
                              IO_QSIZE);
        unsigned idx = le16toh(cqe.cid) - 500;

        g_assert_cmpuint(idx, <, 32);
        g_assert_false(seen[idx]);
        seen[idx] = true;
        g_assert_cmphex(le16toh(cqe.status) >> 1, ==, 0);
    }
    ring(&c, 3, c.cq_head);
    nvme_flush(&c);
    fd = open(path, O_RDONLY);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(pread(fd, disk, 32 * 16384, 0), ==, 32 * 16384);
    close(fd);
    g_assert_cmpmem(disk, 32 * 16384, c.mem + DATA_OFF, 32 * 16384);
    client_close(&c);
    vu_server_stop(&s);
    unlink(path);
    rmdir(dir);
}

/* DEVICE_RESET returns the controller to its power-on state. */
static void test_device_reset(void)
{
    VuServer s;
    Client c;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    write_read_pattern(&c, 64, 11);
    g_assert_cmpint(vu_call(&c, VFIO_USER_DEVICE_RESET, NULL, 0, NULL, 0,
                            NULL, NULL), ==, 0);
    /* nvme_enable() checks CC and CSTS read back as 0. */
    client_setup_irqs(&c);
    nvme_enable(&c);
    nvme_identify(&c);
    nvme_create_io_queues(&c);
    write_read_pattern(&c, 64, 12);
    client_close(&c);
    vu_server_stop(&s);
}

/* INTx signals c->irq_fd[0]: SET_IRQS as QEMU 10.2 sends it (0x24). */
static void client_intx_trigger(Client *c)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_INTX_IRQ_INDEX,
        .start = 0,
        .count = 1,
    };

    c->irq_fd[0] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    g_assert_cmphex(set.flags, ==, 0x24);
    g_assert_cmpint(vu_call(c, VFIO_USER_DEVICE_SET_IRQS, &set, sizeof(set),
                            c->irq_fd, 1, NULL, NULL), ==, 0);
}

/* Without MSI-X enabled, completions raise INTx. */
static void test_intx(void)
{
    NvmeSqe cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw = { 1 } };
    VuServer s;
    Client c;

    server_start(&s, "--backend null --msix-bar 2");
    client_attach(&c, &s, DB_TRAPPED);
    client_intx_trigger(&c);
    nvme_enable(&c);
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    g_assert_cmpuint(irq_wait(&c, 0), >=, 1);
    client_close(&c);
    vu_server_stop(&s);
}

/*
 * INTx the way QEMU 10.2 sets it up under KVM: the trigger eventfd
 * (SET_IRQS flags 0x24) and an unmask eventfd (flags 0x14, ACTION_UNMASK |
 * DATA_EVENTFD), which KVM signals as the irqfd resample fd after the
 * guest's EOI.  INTx is automasked when it fires; completions meanwhile
 * are latched and delivered when the client unmasks, by the eventfd or by
 * SET_IRQS UNMASK|DATA_NONE.
 */
static void test_intx_unmask_eventfd(void)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_UNMASK,
        .index = VFIO_PCI_INTX_IRQ_INDEX,
        .start = 0,
        .count = 1,
    };
    NvmeSqe cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw = { 1 } };
    struct pollfd pfd;
    int unmask = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    uint64_t one = 1;
    VuServer s;
    Client c;

    server_start(&s, "--backend null --msix-bar 2");
    client_attach(&c, &s, DB_TRAPPED);
    client_intx_trigger(&c);
    g_assert_cmphex(set.flags, ==, 0x14);
    g_assert_cmpint(vu_call(&c, VFIO_USER_DEVICE_SET_IRQS, &set, sizeof(set),
                            &unmask, 1, NULL, NULL), ==, 0);
    nvme_enable(&c);

    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    g_assert_cmpuint(irq_wait(&c, 0), >=, 1);
    /* Automasked: the next completion is latched, not signalled... */
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    pfd = (struct pollfd) { .fd = c.irq_fd[0], .events = POLLIN };
    g_assert_cmpint(poll(&pfd, 1, 100), ==, 0);
    /* ...until the resample/unmask eventfd is signalled. */
    g_assert_cmpint(write(unmask, &one, sizeof(one)), ==, sizeof(one));
    g_assert_cmpuint(irq_wait(&c, 0), >=, 1);

    /* The same with SET_IRQS UNMASK|DATA_NONE (QEMU without KVM). */
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    g_assert_cmpint(poll(&pfd, 1, 100), ==, 0);
    set.flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DEVICE_SET_IRQS, &set, sizeof(set),
                            NULL, 0, NULL, NULL), ==, 0);
    g_assert_cmpuint(irq_wait(&c, 0), >=, 1);

    /* QEMU drops the unmask eventfd with fd -1: count 1, no fd. */
    set.flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_UNMASK;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DEVICE_SET_IRQS, &set, sizeof(set),
                            NULL, 0, NULL, NULL), ==, 0);
    close(unmask);
    client_close(&c);
    vu_server_stop(&s);
}

static void test_bad_options_exit_1(void)
{
    static const char *const cases[] = {
        "--bogus", "--backend tape", "--msix-table-offset 0x1001",
        "--msix-bar 0 --msix-table-offset 0x1000", "--size 0",
    };

    for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
        g_autofree char *plain = g_strdup_printf("%s --socket /nonexistent/s "
                                                 "%s", server_bin, cases[i]);
        g_autofree char *cmd = test_wrap_command(plain);
        g_autofree char *err = NULL;
        g_auto(GStrv) argv = g_strsplit(cmd, " ", -1);
        int status;

        g_assert_true(g_spawn_sync(NULL, argv, NULL, 0, NULL, NULL, NULL,
                                   &err, &status, NULL));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_nonnull(strstr(err, "--"));
    }
}

/* ---- Benchmark ---- */

static void bench_submit_read(Client *c, uint16_t cid, uint64_t n)
{
    NvmeSqe cmd = {
        .opcode = 0x02, .nsid = htole32(1), .cid = htole16(cid),
        .prp1 = htole64(GUEST_IOVA + DATA_OFF + 4096 * cid),
        .cdw = { (uint32_t)((n * 8) & 0xfffff), 0, 7 },
    };

    io_submit_cmd(c, &cmd, false);
}

/* 4 KiB reads kept qd deep for the given time; returns IOPS. */
static double bench_run(Client *c, unsigned qd, double seconds)
{
    gint64 start = g_get_monotonic_time();
    gint64 end = start + seconds * G_USEC_PER_SEC;
    gint64 last_progress = start;
    unsigned outstanding = qd;
    uint64_t done = 0;
    bool stopping = false;

    for (unsigned i = 0; i < qd; i++) {
        bench_submit_read(c, i, i);
    }
    ring(c, 2, c->sq_tail);
    while (!stopping || outstanding) {
        unsigned reaped = 0, refill = 0;
        NvmeCqe cqe;

        while (cq_peek(c, IOCQ_OFF, c->cq_head, c->cq_phase, &cqe)) {
            g_assert_cmpuint(le16toh(cqe.status) >> 1, ==, 0);
            if (++c->cq_head == IO_QSIZE) {
                c->cq_head = 0;
                c->cq_phase = !c->cq_phase;
            }
            reaped++;
            done++;
            if (!stopping) {
                bench_submit_read(c, le16toh(cqe.cid), done);
                refill++;
            }
        }
        if (reaped) {
            outstanding -= reaped;
            ring(c, 3, c->cq_head);
            if (refill) {
                ring(c, 2, c->sq_tail);
                outstanding += refill;
            }
            stopping = g_get_monotonic_time() >= end;
            last_progress = g_get_monotonic_time();
        } else if (g_get_monotonic_time() - last_progress > 5) {
            /*
             * Nothing for a moment: halt until the CQ's MSI-X vector
             * fires, as a guest vCPU would, leaving the CPU to the server.
             * Clear the eventfd first and look again, so that a completion
             * that raced with us is not missed.
             */
            struct pollfd pfd = { .fd = c->irq_fd[1], .events = POLLIN };

            irq_drain(c, 1);
            if (!cq_peek(c, IOCQ_OFF, c->cq_head, c->cq_phase, &cqe)) {
                poll(&pfd, 1, 10);
            }
            last_progress = g_get_monotonic_time();
        }
    }
    return done / ((g_get_monotonic_time() - start) / (double)G_USEC_PER_SEC);
}

static uint64_t proc_cpu_ticks(GPid pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/stat", pid);
    g_autofree char *text = NULL;
    g_auto(GStrv) f = NULL;
    char *p;

    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return 0;
    }
    p = strrchr(text, ')');
    f = g_strsplit(p + 2, " ", -1);
    /* Fields 14 and 15 (utime, stime) are 12 and 13 after the comm. */
    return g_ascii_strtoull(f[11], NULL, 10) + g_ascii_strtoull(f[12], NULL,
                                                                10);
}

static int bench(double seconds, double idle_seconds)
{
    static const struct {
        DoorbellMode mode;
        const char *name;
    } modes[] = {
        { DB_POLLED, "polled (mmapped doorbells)" },
        { DB_TRAPPED, "trapped (REGION_WRITE + reply)" },
        { DB_POSTED, "trapped, posted (REGION_WRITE, NO_REPLY)" },
    };
    static const unsigned qds[] = { 1, 32 };
    long hz = sysconf(_SC_CLK_TCK);
    g_autofree char *args = NULL;
    double iops[3][2];
    VuServer s;
    Client c;
    uint64_t t0;

    args = g_strdup_printf("--backend null %s",
                           g_getenv("NVME_BENCH_ARGS") ?: "");
    server_start(&s, args);
    client_bringup(&c, &s, DB_POLLED);
    /* Measure a device that has been idle for a while (past 2 s). */
    g_usleep(3 * G_USEC_PER_SEC);
    t0 = proc_cpu_ticks(s.pid);
    g_usleep(idle_seconds * G_USEC_PER_SEC);
    printf("idle enabled controller, %.0f s: server CPU %.2f%% of one core\n",
           idle_seconds,
           100.0 * (proc_cpu_ticks(s.pid) - t0) / hz / idle_seconds);
    client_close(&c);

    for (unsigned m = 0; m < ARRAY_SIZE(modes); m++) {
        client_bringup(&c, &s, modes[m].mode);
        for (unsigned q = 0; q < ARRAY_SIZE(qds); q++) {
            iops[m][q] = bench_run(&c, qds[q], seconds);
        }
        client_close(&c);
    }
    vu_server_stop(&s);

    printf("vfio-user-nvme --backend null, 4 KiB reads, %.1f s per run\n",
           seconds);
    printf("%-44s %12s %12s\n", "doorbells", "QD1 IOPS", "QD32 IOPS");
    for (unsigned m = 0; m < ARRAY_SIZE(modes); m++) {
        printf("%-44s %12.0f %12.0f\n", modes[m].name, iops[m][0],
               iops[m][1]);
    }
    printf("polled/trapped ratio: QD1 %.2fx, QD32 %.2fx\n",
           iops[0][0] / iops[1][0], iops[0][1] / iops[1][1]);
    return 0;
}

/* ---- Trust boundaries (docs/devel/trust-boundaries.rst) ---- */

static uint32_t csts_wait(Client *c, uint32_t mask, uint32_t want)
{
    gint64 deadline = g_get_monotonic_time() + WAIT_US;
    uint32_t v;

    while (((v = reg_read32(c, REG_CSTS)) & mask) != want) {
        if (g_get_monotonic_time() > deadline) {
            g_error("CSTS stuck at 0x%x, waiting for 0x%x under mask 0x%x",
                    v, want, mask);
        }
        g_usleep(100);
    }
    return v;
}

/*
 * What a driver recovering from CSTS.CFS does, through the mapping and
 * with no delay between the stores: CC.EN=0, the admin queue registers,
 * CC.EN=1.  The controller must come back ready without CFS.
 */
static void reset_back_to_back(Client *c)
{
    /* Fresh admin queues, as a driver's reset makes them. */
    memset(c->mem + ASQ_OFF, 0, ACQ_OFF + 0x1000 - ASQ_OFF);
    /* Let the poller settle into its sleep, as after a real error. */
    g_usleep(2000);
    reg_write32(c, REG_CC, 0);
    reg_write32(c, REG_AQA, ((ADMIN_QSIZE - 1) << 16) | (ADMIN_QSIZE - 1));
    reg_write64(c, REG_ASQ, GUEST_IOVA + ASQ_OFF);
    reg_write64(c, REG_ACQ, GUEST_IOVA + ACQ_OFF);
    reg_write32(c, REG_CC, CC_ENABLE);
    g_assert_cmphex(csts_wait(c, 0x3, 0x1), ==, 0x1);
    c->asq_tail = c->acq_head = 0;
    c->acq_phase = true;
    irq_drain(c, 0);
    nvme_identify(c);
}

/* CFS from a refused enable (RDY stays 0), then the reset. */
static void test_reset_after_refused_enable(void)
{
    VuServer s;
    Client c;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    g_assert_nonnull(reg_mapped(&c, REG_CC));
    for (int round = 0; round < 3; round++) {
        reg_write32(&c, REG_CC, 0);
        csts_wait(&c, 0x1, 0);
        /* An admin SQ of one entry: the enable is refused with CFS. */
        memset(c.mem, 0, DATA_OFF);
        reg_write32(&c, REG_AQA, 0);
        reg_write32(&c, REG_CC, CC_ENABLE);
        g_assert_cmphex(csts_wait(&c, 0x3, 0x2), ==, 0x2);
        reset_back_to_back(&c);
    }
    nvme_create_io_queues(&c);
    write_read_pattern(&c, 16, 31);
    client_close(&c);
    vu_server_stop(&s);
}

/* CFS while running (a CQ outside client memory: RDY stays 1). */
static void test_reset_after_runtime_fatal(void)
{
    VuServer s;
    Client c;
    NvmeSqe cmd;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    /* CQ 2 at an address nobody mapped, SQ 2 in client memory. */
    cmd = (NvmeSqe) { .opcode = 0x05, .prp1 = htole64(0x10000),
                      .cdw = { (15u << 16) | 2, 1 } };
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    cmd = (NvmeSqe) { .opcode = 0x01,
                      .prp1 = htole64(GUEST_IOVA + PRP_LIST_OFF),
                      .cdw = { (15u << 16) | 2, (2u << 16) | 1 } };
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    cmd = (NvmeSqe) { .opcode = 0x00, .nsid = htole32(1), .cid = 1 };
    memcpy(c.mem + PRP_LIST_OFF, &cmd, sizeof(cmd));
    ring(&c, 4, 1);
    g_assert_cmphex(csts_wait(&c, 0x3, 0x3), ==, 0x3);
    reset_back_to_back(&c);
    nvme_create_io_queues(&c);
    write_read_pattern(&c, 16, 32);
    client_close(&c);
    vu_server_stop(&s);
}

#define MSG_ONLY_IOVA 0x200000000ull
#define MSG_ONLY_SIZE 0x10000ull
#define SIDE_IOVA     0x300000000ull

/* The next message, whatever it is; fails after WAIT_US (hang guard). */
static uint8_t *vu_recv_any(Client *c, VFIOUserHdr *hdr, size_t *len)
{
    struct pollfd pfd = { .fd = c->sock, .events = POLLIN };
    uint8_t *body = NULL;
    size_t nfds = 0;

    if (poll(&pfd, 1, WAIT_US / 1000 / 2) != 1) {
        g_error("the server sent nothing for %d s", (int)(WAIT_US / 2000000));
    }
    g_assert_cmpint(qemu_recv_with_fds(c->sock, hdr, sizeof(*hdr), NULL,
                                       &nfds, &error_abort), ==,
                    sizeof(*hdr));
    *len = hdr->size - sizeof(*hdr);
    if (*len) {
        body = g_malloc(*len);
        g_assert_cmpint(qemu_recv_with_fds(c->sock, body, *len, NULL, &nfds,
                                           &error_abort), ==, *len);
    }
    return body;
}

static void dma_map_range(Client *c, uint64_t iova, uint64_t size, int fd)
{
    VFIOUserDMAMap map = {
        .argsz = sizeof(map),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ | VFIO_USER_DMA_MAP_FLAG_WRITE,
        .address = iova,
        .size = size,
    };

    g_assert_cmpint(vu_call(c, VFIO_USER_DMA_MAP, &map, sizeof(map),
                            fd >= 0 ? &fd : NULL, fd >= 0, NULL, NULL),
                    ==, 0);
}

/*
 * An I/O SQ in memory mapped without an fd: the poller must fetch its
 * entries with DMA_READ messages.  Returns the request it sent.
 */
static VFIOUserDMARW msg_only_sq_fetch(Client *c, uint16_t *req_id)
{
    g_autofree uint8_t *body = NULL;
    VFIOUserDMARW rw;
    VFIOUserHdr hdr;
    NvmeSqe cmd;
    size_t len;

    dma_map_range(c, MSG_ONLY_IOVA, MSG_ONLY_SIZE, -1);
    cmd = (NvmeSqe) { .opcode = 0x05, .prp1 = htole64(GUEST_IOVA + 0x5000),
                      .cdw = { (15u << 16) | 2, 1 } };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    cmd = (NvmeSqe) { .opcode = 0x01, .prp1 = htole64(MSG_ONLY_IOVA),
                      .cdw = { (15u << 16) | 2, (2u << 16) | 1 } };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    memset(c->mem + 0x5000, 0, 0x1000);
    ring(c, 4, 1);
    body = vu_recv_any(c, &hdr, &len);
    g_assert_cmpuint(hdr.command, ==, VFIO_USER_DMA_READ);
    g_assert_cmpuint(hdr.flags & VFIO_USER_F_TYPE_MASK, ==,
                     VFIO_USER_F_TYPE_COMMAND);
    g_assert_cmpuint(len, ==, sizeof(rw));
    memcpy(&rw, body, sizeof(rw));
    g_assert_cmphex(rw.address, ==, MSG_ONLY_IOVA);
    g_assert_cmpuint(rw.count, ==, 64);
    *req_id = hdr.id;
    return rw;
}

/* Sends DMA_UNMAP and returns the id to match its reply. */
static uint16_t dma_unmap_send(Client *c, uint64_t iova, uint64_t size)
{
    VFIOUserDMAUnmap u = { .argsz = sizeof(u), .address = iova,
                           .size = size };
    uint16_t id;

    vu_send(c, VFIO_USER_DMA_UNMAP, VFIO_USER_F_TYPE_COMMAND, &u, sizeof(u),
            NULL, 0, &id);
    return id;
}

static void dma_unmap_reply_wait(Client *c, uint16_t id)
{
    for (;;) {
        g_autofree uint8_t *body = NULL;
        VFIOUserHdr hdr;
        size_t len;

        body = vu_recv_any(c, &hdr, &len);
        if ((hdr.flags & VFIO_USER_F_TYPE_MASK) == VFIO_USER_F_TYPE_REPLY &&
            hdr.id == id) {
            g_assert_cmpuint(hdr.command, ==, VFIO_USER_DMA_UNMAP);
            g_assert_false(hdr.flags & VFIO_USER_F_ERROR);
            return;
        }
        /* Further DMA requests for the unmapped range go unanswered. */
        g_assert_cmpuint(hdr.command, ==, VFIO_USER_DMA_READ);
    }
}

/*
 * The client takes back the memory the poller is waiting on, without
 * answering: DMA_UNMAP is served at once (the poller's request fails), and
 * the server keeps serving.
 */
static void test_unmap_races_poller_dma(void)
{
    VuServer s;
    Client c;
    uint16_t req_id;
    uint32_t v;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    msg_only_sq_fetch(&c, &req_id);
    dma_unmap_reply_wait(&c, dma_unmap_send(&c, MSG_ONLY_IOVA,
                                            MSG_ONLY_SIZE));
    /* The lost SQ entry is the controller's fatal error; it still answers. */
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, REG_CSTS, &v, 4);
    g_assert_cmphex(le32toh(v) & 0x3, ==, 0x3);
    g_assert_cmphex(csts_wait(&c, 0x3, 0x3), ==, 0x3);
    reset_back_to_back(&c);
    nvme_create_io_queues(&c);
    write_read_pattern(&c, 16, 33);
    g_assert_true(server_alive(&s));
    client_close(&c);
    vu_server_stop(&s);
}

/*
 * The poller waits for our DMA_READ reply while we unmap another, mapped
 * range (whose drain needs the controller lock) and only then answer: the
 * server must deliver our reply while it waits for that lock.
 */
static void test_unmap_while_poller_waits_for_reply(void)
{
    g_autofree uint8_t *reply = NULL;
    VuServer s;
    Client c;
    VFIOUserDMARW rw;
    NvmeSqe flush = { .opcode = 0x00, .nsid = htole32(1), .cid = 0x77 };
    uint16_t req_id, unmap_id;
    uint32_t intms;
    NvmeCqe cqe;
    uint16_t head = 0;
    bool phase = true;
    int side_fd;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    side_fd = memfd_create("side", MFD_CLOEXEC);
    g_assert_cmpint(ftruncate(side_fd, 0x10000), ==, 0);
    dma_map_range(&c, SIDE_IOVA, 0x10000, side_fd);
    close(side_fd);

    rw = msg_only_sq_fetch(&c, &req_id);
    unmap_id = dma_unmap_send(&c, SIDE_IOVA, 0x10000);
    /* A posted write behind it is kept and served afterwards, in order. */
    intms = htole32(1u << 5);
    region_write(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x0c, &intms, 4, true);
    /* Only now the answer to the poller's DMA_READ: a Flush command. */
    reply = g_malloc0(sizeof(rw) + 64);
    memcpy(reply, &rw, sizeof(rw));
    memcpy(reply + sizeof(rw), &flush, sizeof(flush));
    {
        VFIOUserHdr hdr;
        g_autofree uint8_t *msg = g_malloc(sizeof(hdr) + sizeof(rw) + 64);

        vfio_user_hdr_init(&hdr, req_id, VFIO_USER_DMA_READ,
                           sizeof(hdr) + sizeof(rw) + 64,
                           VFIO_USER_F_TYPE_REPLY);
        memcpy(msg, &hdr, sizeof(hdr));
        memcpy(msg + sizeof(hdr), reply, sizeof(rw) + 64);
        g_assert_cmpint(qemu_send_with_fds(c.sock, msg,
                                           sizeof(hdr) + sizeof(rw) + 64,
                                           NULL, 0, &error_abort),
                        ==, sizeof(hdr) + sizeof(rw) + 64);
    }
    dma_unmap_reply_wait(&c, unmap_id);
    /* The flush fetched through the message completed on CQ 2. */
    cqe = cq_wait(&c, 0x5000, &head, &phase, 16);
    g_assert_cmpuint(le16toh(cqe.cid), ==, 0x77);
    g_assert_cmpuint(le16toh(cqe.status) >> 1, ==, 0);
    g_assert_cmphex(reg_read32(&c, REG_CSTS), ==, 1);
    region_read(&c, VFIO_PCI_BAR0_REGION_INDEX, 0x0c, &intms, 4);
    g_assert_cmphex(le32toh(intms), ==, 1u << 5);
    g_assert_true(server_alive(&s));
    client_close(&c);
    vu_server_stop(&s);
}

/*
 * Many small DMA_MAPs (the tree keeps each one O(log n)); overlap and
 * exact-match rules at the neighbours of each range.
 */
static void test_many_dma_maps(void)
{
    VuServer s;
    Client c;
    const unsigned n = 4096;
    uint64_t ticks;
    gint64 t0;
    VFIOUserDMAMap map = {
        .argsz = sizeof(map),
        .flags = VFIO_USER_DMA_MAP_FLAG_READ,
    };
    VFIOUserDMAUnmap u = { .argsz = sizeof(u) };

    server_start(&s, "--backend ram --size 4M");
    client_connect(&c, &s);
    t0 = g_get_monotonic_time();
    ticks = proc_cpu_ticks(s.pid);
    /* Every other page, from the top down. */
    for (unsigned i = n; i-- > 0;) {
        map.address = MSG_ONLY_IOVA + 0x2000ull * i;
        map.size = 0x1000;
        g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map),
                                NULL, 0, NULL, NULL), ==, 0);
    }
    g_test_message("%u DMA_MAPs: %" PRId64 " us, server CPU %" PRIu64
                   " ms", n, g_get_monotonic_time() - t0,
                   (proc_cpu_ticks(s.pid) - ticks) * 1000 /
                   sysconf(_SC_CLK_TCK));
    /* Overlaps: straddling the end, the start, containing, inside. */
    map.address = MSG_ONLY_IOVA + 0x2000 * 7 + 0x800;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, EEXIST);
    map.address = MSG_ONLY_IOVA + 0x2000 * 7 - 0x800;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, EEXIST);
    map.address = MSG_ONLY_IOVA + 0x2000 * 7 - 0x1000;
    map.size = 0x4000;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, EEXIST);
    map.address = MSG_ONLY_IOVA + 0x2000 * 7 + 0x100;
    map.size = 0x100;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, EEXIST);
    /* The holes between them are free, and exactly as large as they are. */
    map.address = MSG_ONLY_IOVA + 0x2000 * 7 + 0x1000;
    map.size = 0x1000;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, 0);
    /* Unmap wants an exact match. */
    u.address = MSG_ONLY_IOVA + 0x2000 * 9;
    u.size = 0x2000;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_UNMAP, &u, sizeof(u), NULL, 0,
                            NULL, NULL), ==, ENOENT);
    u.size = 0x1000;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_UNMAP, &u, sizeof(u), NULL, 0,
                            NULL, NULL), ==, 0);
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_UNMAP, &u, sizeof(u), NULL, 0,
                            NULL, NULL), ==, ENOENT);
    /* The range at the very top of the space. */
    map.address = UINT64_MAX - 0xfff;
    map.size = 0x1000;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, 0);
    map.address = UINT64_MAX - 0x1fff;
    map.size = 0x1001;
    g_assert_cmpint(vu_call(&c, VFIO_USER_DMA_MAP, &map, sizeof(map), NULL,
                            0, NULL, NULL), ==, EEXIST);
    client_close(&c);
    vu_server_stop(&s);
}


/*
 * A client that floods requests and never reads the replies: the server
 * must not block in send() for ever, but drop it (after its 10 s message
 * timeout) and serve the next client.
 */
static void test_client_that_never_reads(void)
{
    VFIOUserRegionRW rw = { .offset = 0,
                            .region = VFIO_PCI_CONFIG_REGION_INDEX,
                            .count = 256 };
    g_autofree void *ver = NULL;
    struct pollfd pfd;
    VFIOUserCaps caps;
    VFIOUserHdr hdr;
    VuServer s;
    Client c, c2 = { 0 };
    unsigned sent = 0;
    uint16_t id;
    size_t len;
    int sock2;

    server_start(&s, "--backend ram --size 4M");
    client_connect(&c, &s);
    g_assert_cmpint(fcntl(c.sock, F_SETFL, O_NONBLOCK), ==, 0);
    for (;;) {
        uint8_t buf[sizeof(VFIOUserHdr) + sizeof(rw)];
        ssize_t n;

        vfio_user_hdr_init((VFIOUserHdr *)buf, c.id++,
                           VFIO_USER_REGION_READ, sizeof(buf),
                           VFIO_USER_F_TYPE_COMMAND);
        memcpy(buf + sizeof(VFIOUserHdr), &rw, sizeof(rw));
        n = send(c.sock, buf, sizeof(buf), MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
            break;
        }
        g_assert_cmpint(n, ==, sizeof(buf));
        sent++;
        g_assert_cmpuint(sent, <, 1000000);
    }
    g_test_message("%u requests sent before the server stopped reading",
                   sent);

    /* The next client is served once the first has been dropped. */
    sock2 = unix_connect_path(s.sock, &error_abort);
    vfio_user_caps_init_default(&caps);
    ver = vfio_user_version_build(VFIO_USER_MAJOR, VFIO_USER_MINOR, &caps,
                                  &len);
    c2.sock = sock2;
    vu_send(&c2, VFIO_USER_VERSION, VFIO_USER_F_TYPE_COMMAND, ver, len, NULL,
            0, &id);
    pfd = (struct pollfd) { .fd = sock2, .events = POLLIN };
    if (poll(&pfd, 1, 3 * WAIT_US / 1000) != 1) {
        g_error("a client that never reads wedged the server");
    }
    g_assert_cmpint(recv(sock2, &hdr, sizeof(hdr), MSG_WAITALL), ==,
                    sizeof(hdr));
    g_assert_cmpuint(hdr.command, ==, VFIO_USER_VERSION);
    g_assert_false(hdr.flags & VFIO_USER_F_ERROR);
    close(sock2);
    close(c.sock);
    vu_server_stop(&s);
}

int main(int argc, char **argv)
{
    server_bin = g_getenv("VFIO_USER_NVME");
    if (!server_bin) {
        server_bin = "./vfio-user-nvme";
    }
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "--bench")) {
        return bench(argc >= 3 ? g_ascii_strtod(argv[2], NULL) : 3.0,
                     argc >= 4 ? g_ascii_strtod(argv[3], NULL) : 5.0);
    }
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vfio-user-nvme/ram/polled-doorbells", test_ram_polled);
    g_test_add_func("/vfio-user-nvme/ram/trapped-doorbells",
                    test_ram_trapped);
    g_test_add_func("/vfio-user-nvme/ram/posted-trapped-doorbells",
                    test_ram_posted);
    g_test_add_func("/vfio-user-nvme/file/polled-flush-reaches-disk",
                    test_file_polled);
    g_test_add_func("/vfio-user-nvme/file/trapped-flush-reaches-disk",
                    test_file_trapped);
    g_test_add_func("/vfio-user-nvme/file/aio-depth-limits-not-loses",
                    test_file_queue_depth);
    g_test_add_func("/vfio-user-nvme/device-reset", test_device_reset);
    g_test_add_func("/vfio-user-nvme/intx-without-msix", test_intx);
    g_test_add_func("/vfio-user-nvme/intx-unmask-eventfd",
                    test_intx_unmask_eventfd);
    g_test_add_func("/vfio-user-nvme/disconnect-mid-io-recovers",
                    test_disconnect_mid_io);
    g_test_add_func("/vfio-user-nvme/odd-bar0-accesses",
                    test_odd_bar0_accesses);
    g_test_add_func("/vfio-user-nvme/no-mmap-is-trap-only",
                    test_no_mmap_is_trap_only);
    g_test_add_func("/vfio-user-nvme/layout/default-bar0-plain-mmap",
                    test_default_bar0_plain_mmap);
    g_test_add_func("/vfio-user-nvme/ram/mapped-registers-enable-disable",
                    test_mapped_registers);
    g_test_add_func("/vfio-user-nvme/layout/msix-table-on-doorbell-page",
                    test_msix_table_on_doorbell_page);
    g_test_add_func("/vfio-user-nvme/options/bad-options-exit-1",
                    test_bad_options_exit_1);
    g_test_add_func("/vfio-user-nvme/trust/reset-after-refused-enable",
                    test_reset_after_refused_enable);
    g_test_add_func("/vfio-user-nvme/trust/reset-after-runtime-fatal",
                    test_reset_after_runtime_fatal);
    g_test_add_func("/vfio-user-nvme/trust/unmap-races-poller-dma",
                    test_unmap_races_poller_dma);
    g_test_add_func("/vfio-user-nvme/trust/unmap-while-poller-waits-reply",
                    test_unmap_while_poller_waits_for_reply);
    g_test_add_func("/vfio-user-nvme/trust/many-dma-maps",
                    test_many_dma_maps);
    g_test_add_func("/vfio-user-nvme/trust/client-that-never-reads",
                    test_client_that_never_reads);
    return g_test_run();
}
