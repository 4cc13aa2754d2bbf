/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the vfio-user server library (libvfu) decoding
 * whatever a client sends: every command, including SET_IRQS and DMA_MAP
 * with fd counts that do not match, over a socketpair attached with
 * vfu_attach_fd() and served by vfu_dispatch() in this thread.
 *
 * Input: a flags byte (bit 0: open with a valid VERSION handshake), then
 * message records: fdspec (bits 0-2: how many fds ride along, bit 3:
 * 64 KiB memfds instead of eventfds), len (2 bytes LE), len bytes sent
 * verbatim.  After each message the "device" touches the first and last
 * byte of every DMA range the server mapped, and fires each interrupt, as
 * a device model would.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "contrib/vfio-user/libvfu/libvfu.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BAR0_SIZE   0x4000
#define BAR2_SIZE   0x1000
#define NVECTORS    4
#define MEMFD_SIZE  0x10000
#define MAX_RANGES  64

typedef struct FuzzDev {
    VfuCtx *ctx;
    uint8_t bar2[BAR2_SIZE];
    struct { uint64_t iova, size; } ranges[MAX_RANGES];
    unsigned nr_ranges;
} FuzzDev;

static FuzzDev dev;
static volatile uint8_t sink;

static void dev_reset(VfuCtx *ctx, void *opaque, VfuResetReason reason)
{
    memset(dev.bar2, 0, sizeof(dev.bar2));
}

static void dev_dma_map(VfuCtx *ctx, void *opaque, uint64_t iova,
                        uint64_t size)
{
    g_assert(dev.nr_ranges < MAX_RANGES);
    dev.ranges[dev.nr_ranges].iova = iova;
    dev.ranges[dev.nr_ranges].size = size;
    dev.nr_ranges++;
}

static void dev_dma_unmap(VfuCtx *ctx, void *opaque, uint64_t iova,
                          uint64_t size)
{
    for (unsigned i = 0; i < dev.nr_ranges; i++) {
        if (dev.ranges[i].iova == iova && dev.ranges[i].size == size) {
            dev.ranges[i] = dev.ranges[--dev.nr_ranges];
            return;
        }
    }
    g_assert_not_reached();
}

static int bar2_access(VfuCtx *ctx, void *opaque, uint32_t index,
                       uint64_t offset, void *buf, uint32_t count,
                       bool is_write)
{
    /* libvfu promises the access lies inside the region. */
    g_assert(offset <= BAR2_SIZE && count <= BAR2_SIZE - offset);
    if (is_write) {
        memcpy(dev.bar2 + offset, buf, count);
    } else {
        memcpy(buf, dev.bar2 + offset, count);
    }
    return count;
}

static const VfuDeviceOps dev_ops = {
    .reset = dev_reset,
    .dma_map = dev_dma_map,
    .dma_unmap = dev_dma_unmap,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    VFIOUserCaps caps = {
        .max_msg_fds = 8,
        .max_data_xfer_size = 0x10000,
        .max_dma_maps = MAX_RANGES,
        .pgsizes = 4096,
    };
    VfuPciIds ids = { .vendor_id = 0x1b36, .device_id = 0x0010,
                      .class_code = 0x010802 };
    VfuSparseArea sparse[] = { { 0x1000, 0x1000 }, { 0x3000, 0x1000 } };
    VfuRegionInfo bar0 = {
        .size = BAR0_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .sparse = sparse, .nr_sparse = 2, .msix_mappable = true,
        .bar_flags = PCI_BASE_ADDRESS_MEM_TYPE_64,
    };
    VfuRegionInfo bar2 = {
        .size = BAR2_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1, .access = bar2_access,
    };

    signal(SIGPIPE, SIG_IGN);
    bar0.fd = memfd_create("fuzz-bar0", MFD_CLOEXEC);
    g_assert(bar0.fd >= 0 && ftruncate(bar0.fd, BAR0_SIZE) == 0);
    dev.ctx = vfu_create_ctx(NULL, &dev_ops, &dev, &caps, &error_abort);
    g_assert(vfu_pci_init(dev.ctx, &ids, &error_abort));
    g_assert(vfu_setup_region(dev.ctx, VFIO_PCI_BAR0_REGION_INDEX, &bar0,
                              &error_abort));
    g_assert(vfu_setup_region(dev.ctx, VFIO_PCI_BAR2_REGION_INDEX, &bar2,
                              &error_abort));
    g_assert(vfu_setup_irq(dev.ctx, VFIO_PCI_INTX_IRQ_INDEX, 1,
                           &error_abort));
    g_assert(vfu_pci_add_msix_cap(dev.ctx, NVECTORS, 0, 0x2000, 0, 0x2800,
                                  &error_abort));
    return 0;
}

static void send_record(int fd, const uint8_t *buf, size_t len,
                        uint8_t fdspec)
{
    size_t nfds = fdspec & 7;
    int fds[8];

    for (size_t i = 0; i < nfds; i++) {
        if (fdspec & 8) {
            fds[i] = memfd_create("fuzz-dma", MFD_CLOEXEC);
            g_assert(fds[i] >= 0 && ftruncate(fds[i], MEMFD_SIZE) == 0);
        } else {
            fds[i] = eventfd(0, EFD_CLOEXEC);
            g_assert(fds[i] >= 0);
        }
    }
    if (len) {
        qemu_send_with_fds(fd, buf, len, fds, nfds, NULL);
    }
    for (size_t i = 0; i < nfds; i++) {
        close(fds[i]);
    }
}

static void send_version(int fd)
{
    VFIOUserCaps caps;
    g_autofree void *payload = NULL;
    g_autofree uint8_t *msg = NULL;
    size_t len;

    vfio_user_caps_init_default(&caps);
    caps.max_msg_fds = 8;
    payload = vfio_user_version_build(VFIO_USER_MAJOR, VFIO_USER_MINOR, &caps,
                                      &len);
    msg = g_malloc0(sizeof(VFIOUserHdr) + len);
    vfio_user_hdr_init((VFIOUserHdr *)msg, 0, VFIO_USER_VERSION,
                       sizeof(VFIOUserHdr) + len, VFIO_USER_F_TYPE_COMMAND);
    memcpy(msg + sizeof(VFIOUserHdr), payload, len);
    send_record(fd, msg, sizeof(VFIOUserHdr) + len, 0);
}

static void drain(int fd)
{
    char buf[65536];

    while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
        continue;
    }
}

/* What a device model does between messages. */
static void device_activity(void)
{
    vfu_dma_lock(dev.ctx);
    for (unsigned i = 0; i < dev.nr_ranges; i++) {
        uint8_t *p = vfu_dma_ptr(dev.ctx, dev.ranges[i].iova,
                                 dev.ranges[i].size, false);

        if (p) {
            sink ^= p[0] ^ p[dev.ranges[i].size - 1];
        }
    }
    vfu_dma_unlock(dev.ctx);
    vfu_irq_trigger(dev.ctx, VFIO_PCI_INTX_IRQ_INDEX, 0);
    for (uint32_t v = 0; v < NVECTORS; v++) {
        vfu_irq_trigger(dev.ctx, VFIO_PCI_MSIX_IRQ_INDEX, v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    size_t off = 1;

    if (size < 1) {
        return 0;
    }
    g_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    g_assert(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
    g_assert(vfu_attach_fd(dev.ctx, sv[1], &error_abort));

    if (data[0] & 1) {
        send_version(sv[0]);
    }
    while (off + 3 <= size) {
        uint8_t fdspec = data[off];
        size_t len = data[off + 1] | (data[off + 2] << 8);

        off += 3;
        len = MIN(len, size - off);
        send_record(sv[0], data + off, len, fdspec);
        off += len;
    }
    /* End of input is end of file: a short message cannot stall us. */
    shutdown(sv[0], SHUT_WR);

    while (vfu_is_attached(dev.ctx)) {
        g_assert(vfu_dispatch(dev.ctx, &error_abort));
        drain(sv[0]);
        device_activity();
    }
    /* Losing the client unmapped everything. */
    g_assert(dev.nr_ranges == 0);
    close(sv[0]);
    return 0;
}
