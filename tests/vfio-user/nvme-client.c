/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vfio-user NVMe test client library (nvme-client.h): messages,
 * connection set-up, interrupts and the NVMe driver steps.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "qemu/vfio-region-info.h"
#include "tests/exe-wrapper.h"
#include "nvme-client.h"

const char *nvme_server_bin;

void nvme_client_init(void)
{
    nvme_server_bin = g_getenv("VFIO_USER_NVME");
    if (!nvme_server_bin) {
        nvme_server_bin = "./vfio-user-nvme";
    }
    signal(SIGPIPE, SIG_IGN);
}

/* ---- Server process ---- */

void server_start(VuServer *s, const char *args)
{
    vu_server_start(s, nvme_server_bin, args, WAIT_US);
}

bool server_alive(VuServer *s)
{
    int status;

    return waitpid(s->pid, &status, WNOHANG) == 0;
}

/* ---- Messages ---- */

void vu_send(Client *c, uint16_t cmd, uint32_t flags,
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
int vu_call(Client *c, uint16_t cmd, const void *payload, size_t len,
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

void region_write(Client *c, uint32_t region, uint64_t offset,
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

void region_read(Client *c, uint32_t region, uint64_t offset,
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
uint32_t *reg_mapped(Client *c, uint64_t off)
{
    if (c->mode != DB_POLLED || !c->db_map || c->db_map_off != 0) {
        return NULL;
    }
    return (uint32_t *)(c->db_map + off);
}

uint32_t reg_read32(Client *c, uint64_t off)
{
    uint32_t *p = reg_mapped(c, off);
    uint32_t v;

    if (p) {
        return le32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
    }
    region_read(c, VFIO_PCI_BAR0_REGION_INDEX, off, &v, 4);
    return le32toh(v);
}

void reg_write32(Client *c, uint64_t off, uint32_t v)
{
    uint32_t *p = reg_mapped(c, off);

    v = htole32(v);
    if (p) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        return;
    }
    region_write(c, VFIO_PCI_BAR0_REGION_INDEX, off, &v, 4, false);
}

void reg_write64(Client *c, uint64_t off, uint64_t v)
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

GByteArray *region_info(Client *c, uint32_t index, int *fd)
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
const struct vfio_info_cap_header *region_cap(GByteArray *info,
                                              uint16_t id)
{
    const struct vfio_info_cap_header *cap;

    g_assert_true(vfio_region_info_find_cap((void *)info->data, info->len,
                                            id, &cap, &error_abort));
    return cap;
}

/* Its areas fit before the next capability: the check made sure. */
const struct vfio_region_info_cap_sparse_mmap *
region_sparse(GByteArray *info)
{
    return (const void *)region_cap(info, VFIO_REGION_INFO_CAP_SPARSE_MMAP);
}

bool region_msix_mappable(GByteArray *info)
{
    return region_cap(info, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE) != NULL;
}

void client_connect(Client *c, VuServer *s)
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

void client_map_memory(Client *c)
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

void client_read_config(Client *c)
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

void client_map_bar0_part(Client *c, const struct vfio_region_info *ri,
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
GByteArray *client_map_bar0(Client *c)
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

void client_setup_irqs(Client *c)
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
uint64_t irq_wait(Client *c, int vector)
{
    struct pollfd pfd = { .fd = c->irq_fd[vector], .events = POLLIN };
    uint64_t v = 0;

    g_assert_cmpint(poll(&pfd, 1, WAIT_US / 1000), ==, 1);
    g_assert_cmpint(read(c->irq_fd[vector], &v, sizeof(v)), ==, sizeof(v));
    return v;
}

void irq_drain(Client *c, int vector)
{
    uint64_t v;

    while (read(c->irq_fd[vector], &v, sizeof(v)) == sizeof(v)) {
        /* discard */
    }
}

void client_close(Client *c)
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

void ring(Client *c, unsigned idx, uint32_t val)
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
bool cq_peek(Client *c, uint64_t cq_off, uint16_t head, bool phase,
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

NvmeCqe cq_wait(Client *c, uint64_t cq_off, uint16_t *head,
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

uint16_t admin(Client *c, NvmeCmd *cmd, uint32_t *result)
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

void nvme_enable(Client *c)
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

void nvme_identify(Client *c)
{
    uint8_t *id = c->mem + ID_OFF;
    NvmeCmd cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw10 = 1 };

    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    g_assert_cmpmem(id + 24, 7, "Conduit", 7);          /* MN */
    g_assert_cmphex(ldl_le_p(id + 80), ==, 0x10400);    /* VER */
    g_assert_cmphex(id[512], ==, 0x66);                  /* SQES */
    g_assert_cmphex(id[513], ==, 0x44);                  /* CQES */
    g_assert_cmpuint(ldl_le_p(id + 516), ==, 1);         /* NN */
    /* The admin CQ's vector fired. */
    g_assert_cmpuint(irq_wait(c, 0), >=, 1);

    cmd = (NvmeCmd) { .opcode = 0x06, .nsid = htole32(1),
                      .prp1 = htole64(GUEST_IOVA + ID_OFF) };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    g_assert_cmpuint(ldq_le_p(id), >, 0);                /* NSZE */
    g_assert_cmpuint((ldl_le_p(id + 128) >> 16) & 0xff, ==, 9);
}

void nvme_create_io_queues(Client *c)
{
    NvmeCmd cmd = { .opcode = 0x09, .cdw10 = 0x07, .cdw11 = 0x00000000 };
    uint32_t result;

    g_assert_cmphex(admin(c, &cmd, &result), ==, 0);
    g_assert_cmpuint(result & 0xffff, >=, 0);
    cmd = (NvmeCmd) { .opcode = 0x05, .prp1 = htole64(GUEST_IOVA + IOCQ_OFF),
                      .cdw10 = ((IO_QSIZE - 1) << 16) | 1,
                      .cdw11 = (1u << 16) | 3 };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    cmd = (NvmeCmd) { .opcode = 0x01, .prp1 = htole64(GUEST_IOVA + IOSQ_OFF),
                      .cdw10 = ((IO_QSIZE - 1) << 16) | 1,
                      .cdw11 = (1u << 16) | 1 };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    c->sq_tail = c->cq_head = 0;
    c->cq_phase = true;
}

void io_submit_cmd(Client *c, NvmeCmd *cmd, bool doorbell)
{
    memcpy(c->mem + IOSQ_OFF + c->sq_tail * 64, cmd, 64);
    c->sq_tail = (c->sq_tail + 1) % IO_QSIZE;
    if (doorbell) {
        ring(c, 2, c->sq_tail);
    }
}

uint16_t io_cmd(Client *c, NvmeCmd *cmd)
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
void rw_cmd(Client *c, NvmeCmd *cmd, uint8_t opcode, uint64_t lba,
            uint64_t data_off, unsigned slot)
{
    uint64_t list_off = PRP_LIST_OFF + slot * 64;

    for (unsigned i = 0; i < 3; i++) {
        stq_le_p(c->mem + list_off + 8 * i,
                 GUEST_IOVA + data_off + 4096 * (i + 1));
    }
    *cmd = (NvmeCmd) {
        .opcode = opcode, .nsid = htole32(1),
        .prp1 = htole64(GUEST_IOVA + data_off),
        .prp2 = htole64(GUEST_IOVA + list_off),
        .cdw10 = lba & 0xffffffff, .cdw11 = lba >> 32, .cdw12 = 31,
    };
}

void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
    }
}

/* Writes 4 x 16 KiB at lba, reads them back elsewhere, compares. */
void write_read_pattern(Client *c, uint64_t lba, uint32_t seed)
{
    NvmeCmd cmd;

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

void nvme_flush(Client *c)
{
    NvmeCmd cmd = { .opcode = 0x00, .nsid = htole32(1) };

    g_assert_cmphex(io_cmd(c, &cmd), ==, 0);
}

void nvme_shutdown(Client *c)
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
void client_attach(Client *c, VuServer *s, DoorbellMode mode)
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
void client_bringup(Client *c, VuServer *s, DoorbellMode mode)
{
    client_attach(c, s, mode);
    client_setup_irqs(c);
    nvme_enable(c);
    nvme_identify(c);
    nvme_create_io_queues(c);
}

/* ---- Helpers the trust-boundary tests share ---- */

uint32_t csts_wait(Client *c, uint32_t mask, uint32_t want)
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

/* The next message, whatever it is; fails after WAIT_US (hang guard). */
uint8_t *vu_recv_any(Client *c, VFIOUserHdr *hdr, size_t *len)
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

void dma_map_range(Client *c, uint64_t iova, uint64_t size, int fd)
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

/* CPU time (user + system, in clock ticks) @pid has used so far. */
uint64_t proc_cpu_ticks(GPid pid)
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
