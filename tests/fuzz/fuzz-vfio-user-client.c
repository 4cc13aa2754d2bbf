/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the vfio-user client (hw/vfio-user/client.c) against a
 * server whose every byte is fuzzed: the VERSION reply (JSON caps), replies
 * to each VFIODeviceIOOps call (region info with capability chains, IRQ
 * info, region reads), stale and error replies, and server-initiated
 * DMA_READ/DMA_WRITE requests against a small guest address space: 64 KiB
 * of RAM at 0 and, right above it, an MMIO region whose callbacks call
 * back into the very device the client serves (as a vfio-user device's
 * trapped BAR does).  Requests go through the VMM's own policy,
 * address_space_dma_rw_ram(): were they dispatched into MMIO instead, a
 * DMA_READ at 0x10000 would re-take the client's lock and hang, which
 * libFuzzer reports as a timeout (docs/devel/trust-boundaries.rst).
 *
 * The fake server is the other end of a socketpair, written before each
 * call (single thread: the socket buffer holds the answers).  Input:
 *   VERSION reply: one message record;
 *   then per call: op byte (low 4 bits: call, high 4: how many message
 *   records follow, at most 4), the records, then 8 parameter bytes.
 * A message record is: kind, nfds, len (2 bytes LE), len body bytes.
 * kind bit 0 set: the body is sent verbatim (its own header, maybe
 * lying); clear: a reply header to the call's request is made up (bit 1:
 * to the previous id, i.e. stale; bit 2: error flag; bits 4-7: errno).
 * nfds (& 7) eventfds ride along with the message.
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/vfio-user/client.h"
#include "qemu/vfio-region-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GUEST_SIZE  0x10000
#define MAX_MSGS    4

typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

typedef struct Fake {
    int peer;
    uint16_t next_id;       /* id of the client's next request */
} Fake;

/* The guest: RAM, then the device's own trapped BAR. */
static AddressSpace guest_as;
static uint8_t guest_ram[GUEST_SIZE];
static VFIODevice *bar_device;

static uint64_t fuzz_bar_read(void *opaque, hwaddr addr, unsigned size)
{
    uint32_t v = ~0u;

    if (bar_device) {
        bar_device->ops->region_read(bar_device, 0, addr, 4, &v, NULL);
    }
    return v;
}

static void fuzz_bar_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    uint32_t v = val;

    if (bar_device) {
        bar_device->ops->region_write(bar_device, 0, addr, 4, &v, false,
                                      NULL);
    }
}

static const MemoryRegionOps fuzz_bar_ops = {
    .read = fuzz_bar_read,
    .write = fuzz_bar_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

static void guest_init_once(void)
{
    static MemoryRegion root, ram, bar;

    if (root.name) {
        return;
    }
    memory_region_init(&root, NULL, "fuzz-guest", UINT64_MAX);
    memory_region_init_ram_ptr(&ram, NULL, "fuzz-ram", GUEST_SIZE,
                               guest_ram);
    memory_region_init_io(&bar, NULL, &fuzz_bar_ops, NULL, "fuzz-bar0",
                          0x1000);
    memory_region_add_subregion(&root, 0, &ram);
    memory_region_add_subregion(&root, GUEST_SIZE, &bar);
    address_space_init(&guest_as, &root, "fuzz-guest");
}

static volatile uint8_t sink;

static bool take(Input *in, void *out, size_t n)
{
    if (in->left < n) {
        return false;
    }
    memcpy(out, in->p, n);
    in->p += n;
    in->left -= n;
    return true;
}

/* What vfio-user-pci's handler does: the server may reach RAM only. */
static bool fake_dma(void *opaque, uint64_t addr, void *buf, uint64_t len,
                     bool is_write, Error **errp)
{
    return address_space_dma_rw_ram(&guest_as, addr, buf, len, is_write,
                                    "fuzz", errp);
}

/* Reads what the client sent; learns the id its next request gets. */
static void fake_drain(Fake *f)
{
    uint8_t buf[65536];
    ssize_t n;

    for (;;) {
        int fds[8];
        size_t nfds = 8;
        VFIOUserHdr hdr;

        n = recv(f->peer, &hdr, sizeof(hdr), MSG_DONTWAIT | MSG_PEEK);
        if (n < (ssize_t)sizeof(hdr)) {
            break;
        }
        if (qemu_recv_with_fds(f->peer, &hdr, sizeof(hdr), fds, &nfds,
                               NULL) != sizeof(hdr)) {
            break;
        }
        for (size_t i = 0; i < nfds; i++) {
            close(fds[i]);
        }
        if ((hdr.flags & VFIO_USER_F_TYPE_MASK) == VFIO_USER_F_TYPE_COMMAND) {
            f->next_id = hdr.id + 1;
        }
        /* The client frames correctly: the payload is all there. */
        for (size_t left = hdr.size - sizeof(hdr); left; left -= n) {
            n = recv(f->peer, buf, MIN(left, sizeof(buf)), MSG_DONTWAIT);
            if (n <= 0) {
                return;
            }
        }
    }
}

static void fake_send(Fake *f, const void *buf, size_t len, size_t nfds)
{
    int fds[8];

    for (size_t i = 0; i < nfds; i++) {
        fds[i] = eventfd(0, EFD_CLOEXEC);
        g_assert(fds[i] >= 0);
    }
    if (len) {
        qemu_send_with_fds(f->peer, buf, len, fds, nfds, NULL);
    }
    for (size_t i = 0; i < nfds; i++) {
        close(fds[i]);
    }
}

/* Queues up to @count message records from the input. */
static bool queue_msgs(Fake *f, Input *in, unsigned count, uint16_t command)
{
    for (unsigned i = 0; i < count; i++) {
        uint8_t kind, nfds;
        uint16_t len;
        g_autofree uint8_t *msg = NULL;

        if (!take(in, &kind, 1) || !take(in, &nfds, 1) ||
            !take(in, &len, 2) || in->left < len) {
            return false;
        }
        nfds &= 7;
        if (kind & 1) {
            fake_send(f, in->p, len, nfds);
        } else {
            VFIOUserHdr *hdr;

            msg = g_malloc0(sizeof(*hdr) + len);
            hdr = (VFIOUserHdr *)msg;
            vfio_user_hdr_init(hdr, f->next_id - !!(kind & 2), command,
                               sizeof(*hdr) + len,
                               VFIO_USER_F_TYPE_REPLY |
                               (kind & 4 ? VFIO_USER_F_ERROR : 0));
            hdr->error_reply = kind >> 4;
            memcpy(msg + sizeof(*hdr), in->p, len);
            fake_send(f, msg, sizeof(*hdr) + len, nfds);
        }
        in->p += len;
        in->left -= len;
    }
    return true;
}

static void check_region_info(struct vfio_region_info *info, int fd)
{
    VFIORegionCaps caps = { 0 };
    Error *err = NULL;

    /* What vfio-pci does with it: the length is argsz. */
    for (size_t i = 0; i < info->argsz; i++) {
        sink ^= ((uint8_t *)info)[i];
    }
    if (vfio_region_info_parse_caps(info, info->argsz, &caps, &err)) {
        for (uint32_t i = 0; i < caps.nr_sparse_areas; i++) {
            g_assert(caps.sparse_areas[i].offset <= info->size &&
                     caps.sparse_areas[i].size <=
                     info->size - caps.sparse_areas[i].offset);
        }
    } else {
        error_free(err);
    }
    vfio_region_caps_clear(&caps);
    if (fd >= 0) {
        close(fd);
    }
}

static void do_call(Fake *f, VFIODevice *dev, uint8_t op, const uint8_t *prm)
{
    const VFIODeviceIOOps *ops = &vfio_user_device_io_ops;
    uint32_t index = prm[0] & 0xf;
    uint64_t off = prm[1] | (prm[2] << 8);
    uint32_t len = 1 + prm[3];
    uint8_t buf[256] = { 0 };
    Error *err = NULL;

    switch (op) {
    case 0: {
        struct vfio_device_info info;

        ops->get_device_info(dev, &info, &err);
        break;
    }
    case 1: {
        struct vfio_region_info *info = NULL;
        int fd = -1;

        if (ops->get_region_info(dev, index, &info, &fd, &err)) {
            check_region_info(info, fd);
            g_free(info);
        }
        break;
    }
    case 2:
        ops->region_read(dev, index, off, len, buf, &err);
        break;
    case 3:
        ops->region_write(dev, index, off, len, buf, prm[4] & 1, &err);
        break;
    case 4: {
        struct vfio_irq_info info = { .argsz = sizeof(info), .index = index };

        if (ops->get_irq_info(dev, &info, &err)) {
            g_assert(info.argsz == sizeof(info));
        }
        break;
    }
    case 5: {
        static const uint32_t data_types[] = {
            VFIO_IRQ_SET_DATA_NONE, VFIO_IRQ_SET_DATA_BOOL,
            VFIO_IRQ_SET_DATA_EVENTFD,
        };
        uint32_t type = data_types[prm[4] % 3];
        uint32_t count = prm[5] % 8;
        g_autofree struct vfio_irq_set *set =
            g_malloc0(sizeof(*set) + count);
        int fds[8];

        set->argsz = sizeof(*set) +
                     (type == VFIO_IRQ_SET_DATA_BOOL ? count : 0);
        set->flags = type | VFIO_IRQ_SET_ACTION_TRIGGER;
        set->index = index;
        set->start = prm[6] % 8;
        set->count = count;
        for (uint32_t i = 0; i < count; i++) {
            fds[i] = (prm[7] >> i) & 1 ? eventfd(0, EFD_CLOEXEC) : -1;
            set->data[i] = (prm[7] >> i) & 1;
        }
        ops->set_irqs(dev, set, type == VFIO_IRQ_SET_DATA_EVENTFD ? fds : NULL,
                      &err);
        for (uint32_t i = 0; i < count; i++) {
            if (fds[i] >= 0) {
                close(fds[i]);
            }
        }
        break;
    }
    case 6:
        ops->reset(dev, &err);
        break;
    case 7: {
        int fd = prm[4] & 1 ? eventfd(0, EFD_CLOEXEC) : -1;

        ops->dma_map(dev, off << 12, (uint64_t)len << 12, fd, 0, NULL,
                     prm[5] & 1, &err);
        if (fd >= 0) {
            close(fd);
        }
        break;
    }
    case 8:
        ops->dma_unmap(dev, off << 12, (uint64_t)len << 12, &err);
        break;
    default:
        vfio_user_client_process_incoming(dev->backend, &err);
        break;
    }
    error_free(err);
    sink ^= buf[0];
    fake_drain(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint16_t commands[] = {
        VFIO_USER_DEVICE_GET_INFO, VFIO_USER_DEVICE_GET_REGION_INFO,
        VFIO_USER_REGION_READ, VFIO_USER_REGION_WRITE,
        VFIO_USER_DEVICE_GET_IRQ_INFO, VFIO_USER_DEVICE_SET_IRQS,
        VFIO_USER_DEVICE_RESET, VFIO_USER_DMA_MAP, VFIO_USER_DMA_UNMAP,
    };
    g_autofree Fake *f = g_new0(Fake, 1);
    Input in = { data, size };
    VFIODevice dev = { .name = (char *)"fuzz", .fd = -1 };
    VFIOUserClient *client;
    int sv[2];
    uint8_t op;

    guest_init_once();
    g_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    g_assert(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
    f->peer = sv[1];
    signal(SIGPIPE, SIG_IGN);

    /* The VERSION reply goes out before the client asks for it. */
    if (!queue_msgs(f, &in, 1, VFIO_USER_VERSION)) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    client = vfio_user_client_new(sv[0], "fuzz", 1, NULL);
    if (!client) {
        /* It closed sv[0] (ownership passed even on failure). */
        close(sv[1]);
        return 0;
    }
    vfio_user_client_set_dma_handler(client, fake_dma, f);
    fake_drain(f);
    dev.ops = &vfio_user_device_io_ops;
    dev.backend = client;
    bar_device = &dev;

    while (take(&in, &op, 1)) {
        uint8_t prm[8];
        uint8_t call = op & 0xf;

        if (!queue_msgs(f, &in, MIN(op >> 4, MAX_MSGS),
                        call < ARRAY_SIZE(commands) ? commands[call] : 0) ||
            !take(&in, prm, sizeof(prm))) {
            break;
        }
        do_call(f, &dev, call, prm);
    }
    bar_device = NULL;
    vfio_user_device_io_ops.close(&dev);
    close(sv[1]);
    return 0;
}
