/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: a whole virtio-pci device as a hostile guest drives
 * it.  A pc machine under the qtest accelerator carries a virtio-blk-pci
 * (on a 1 MiB file node) and a virtio-net-pci (on a datagram socketpair
 * whose other end the harness drains and feeds); the input programs the
 * device through PCI config space (including the PCI_CFG window and the
 * MSI-X capability), the common configuration, ISR, device configuration
 * and notify registers of BAR4, the MSI-X table, and a 64 KiB window of
 * guest RAM where the virtqueues and buffers live.  The transport's
 * worker thread serves the queues as it does for a guest.
 *
 * Input: a device byte (bit 0: virtio-net instead of virtio-blk), then
 * operations, each an opcode byte and its operands (see do_op()).  Every
 * input starts and ends with a reset, which must complete and leave the
 * status 0; the status may never show a bit the specification does not
 * define.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "qemu/option.h"
#include "qom/object.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "system/address-spaces.h"
#include "system/memory.h"
#include "block/block.h"
#include "net/net.h"
#include "pc-machine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BAR4_ADDR 0xd0000000ull
#define BAR1_ADDR 0xd0100000ull
#define GUEST_WIN 0x100000ull
#define GUEST_WIN_SIZE 0x10000
#define COMMON(off) (BAR4_ADDR + 0x0000 + (off))
#define ISR_ADDR (BAR4_ADDR + 0x1000)
#define DEVCFG(off) (BAR4_ADDR + 0x2000 + (off))
#define NOTIFY(q) (BAR4_ADDR + 0x3000 + 4 * (q))
#define MAX_OPS 256

typedef struct FuzzDev {
    int devfn;
    unsigned nvqs;
} FuzzDev;

static FuzzDev devs[2] = {
    { .devfn = 4 << 3, .nvqs = 1 },     /* virtio-blk-pci, addr=04.0 */
    { .devfn = 5 << 3, .nvqs = 2 },     /* virtio-net-pci, addr=05.0 */
};
static int net_peer = -1;
static const uint8_t zeroes[GUEST_WIN_SIZE];

static void cfg_addr(int devfn, uint8_t off)
{
    cpu_outl(0xcf8, 0x80000000u | (devfn << 8) | (off & 0xfc));
}

static void cfg_write(int devfn, uint8_t off, uint32_t val, unsigned size)
{
    cfg_addr(devfn, off);
    switch (size) {
    case 1:
        cpu_outb(0xcfc + (off & 3), val);
        break;
    case 2:
        cpu_outw(0xcfc + (off & 2), val);
        break;
    default:
        cpu_outl(0xcfc, val);
        break;
    }
}

static uint32_t cfg_read(int devfn, uint8_t off, unsigned size)
{
    cfg_addr(devfn, off);
    switch (size) {
    case 1:
        return cpu_inb(0xcfc + (off & 3));
    case 2:
        return cpu_inw(0xcfc + (off & 2));
    default:
        return cpu_inl(0xcfc);
    }
}

static void mmio_write(uint64_t addr, uint32_t val, unsigned size)
{
    uint8_t buf[4];

    stl_le_p(buf, val);
    address_space_write(&address_space_memory, addr, buf, size);
}

static uint32_t mmio_read(uint64_t addr, unsigned size)
{
    uint8_t buf[4] = { 0 };

    address_space_read(&address_space_memory, addr, buf, size);
    return ldl_le_p(buf) & (size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1);
}

static void map_bars(int devfn)
{
    cfg_write(devfn, PCI_COMMAND, 0, 2);
    cfg_write(devfn, PCI_BASE_ADDRESS_4, BAR4_ADDR, 4);
    cfg_write(devfn, PCI_BASE_ADDRESS_1, BAR1_ADDR, 4);
    cfg_write(devfn, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
}

static void unmap_bars(int devfn)
{
    cfg_write(devfn, PCI_COMMAND, 0, 2);
}

static uint8_t status_read(void)
{
    return mmio_read(COMMON(VIRTIO_PCI_COMMON_STATUS), 1);
}

static void status_check(void)
{
    /* Only the driver's bits and DEVICE_NEEDS_RESET ever show. */
    g_assert_cmphex(status_read() & ~0xcf, ==, 0);
}

static void device_reset(void)
{
    mmio_write(COMMON(VIRTIO_PCI_COMMON_STATUS), 0, 1);
    g_assert_cmphex(status_read(), ==, 0);
}

/* What the net peer sent, and frames for the device to receive. */
static void net_pump(const uint8_t *frame, size_t len)
{
    uint8_t buf[2048];

    while (recv(net_peer, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
        continue;
    }
    if (frame) {
        send(net_peer, frame, len, MSG_DONTWAIT);
    }
}

/* A driver's bring-up in one op, so the fuzzer reaches DRIVER_OK easily. */
static void bring_up(const FuzzDev *d, uint32_t feat_lo, uint32_t feat_hi,
                     uint8_t qlog, uint8_t vector, bool msix)
{
    uint16_t qsize = 1u << (qlog % 5 + 2);     /* 4 .. 64 */

    device_reset();
    mmio_write(COMMON(VIRTIO_PCI_COMMON_STATUS), 1, 1);
    mmio_write(COMMON(VIRTIO_PCI_COMMON_STATUS), 3, 1);
    mmio_write(COMMON(VIRTIO_PCI_COMMON_GFSELECT), 0, 4);
    mmio_write(COMMON(VIRTIO_PCI_COMMON_GF), feat_lo, 4);
    mmio_write(COMMON(VIRTIO_PCI_COMMON_GFSELECT), 1, 4);
    mmio_write(COMMON(VIRTIO_PCI_COMMON_GF), feat_hi | 1, 4); /* VERSION_1 */
    mmio_write(COMMON(VIRTIO_PCI_COMMON_STATUS), 0xb, 1);
    if (msix) {
        uint8_t pos = cfg_read(d->devfn, PCI_CAPABILITY_LIST, 1);

        /* Find MSI-X and enable it; the table is at BAR1 offset 0. */
        for (int i = 0; i < 16 && pos; i++) {
            if (cfg_read(d->devfn, pos, 1) == PCI_CAP_ID_MSIX) {
                cfg_write(d->devfn, pos + PCI_MSIX_FLAGS + 1,
                          PCI_MSIX_FLAGS_ENABLE >> 8, 1);
                break;
            }
            pos = cfg_read(d->devfn, pos + 1, 1);
        }
        for (unsigned v = 0; v < d->nvqs + 1; v++) {
            mmio_write(BAR1_ADDR + 16 * v, 0xfee00000, 4);
            mmio_write(BAR1_ADDR + 16 * v + 8, 0x40 + v, 4);
            mmio_write(BAR1_ADDR + 16 * v + 12, 0, 4);
        }
        mmio_write(COMMON(VIRTIO_PCI_COMMON_MSIX), vector % 4, 2);
    }
    for (unsigned q = 0; q < d->nvqs; q++) {
        uint64_t base = GUEST_WIN + q * 0x4000;

        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_SELECT), q, 2);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_SIZE), qsize, 2);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_DESCLO), base, 4);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_DESCHI), 0, 4);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_AVAILLO), base + 0x1000, 4);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_AVAILHI), 0, 4);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_USEDLO), base + 0x2000, 4);
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_USEDHI), 0, 4);
        if (msix) {
            mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_MSIX), (vector + q) % 4, 2);
        }
        mmio_write(COMMON(VIRTIO_PCI_COMMON_Q_ENABLE), 1, 2);
    }
    mmio_write(COMMON(VIRTIO_PCI_COMMON_STATUS), 0xf, 1);
    status_check();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    g_autofree char *img = g_build_filename(g_get_tmp_dir(),
                                            "fuzz-virtio-pci-XXXXXX", NULL);
    g_autofree char *blk = NULL;
    g_autofree char *net = NULL;
    QemuOpts *opts;
    int fd, sv[2];

    fuzz_pc_machine_init();

    /* The disk: a 1 MiB file, removed at once (the fd keeps it). */
    fd = g_mkstemp(img);
    g_assert(fd >= 0);
    g_assert(ftruncate(fd, 1024 * 1024) == 0);
    blk = g_strdup_printf("driver=file,filename=%s,node-name=fz0", img);
    opts = qemu_opts_parse(blk, NULL, &error_abort);
    g_assert(blockdev_add(opts, &error_abort));
    qemu_opts_free(opts);
    unlink(img);
    close(fd);
    opts = qemu_opts_parse("driver=virtio-blk-pci,drive=fz0,addr=04.0,"
                           "id=fzblk", NULL, &error_abort);
    g_assert(qdev_device_add(opts, &error_abort));
    qemu_opts_free(opts);

    /* The NIC: a datagram socketpair, our end drained by net_pump(). */
    g_assert(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
    net_peer = sv[0];
    net = g_strdup_printf("type=socket,id=fzn0,fd=%d", sv[1]);
    opts = qemu_opts_parse(net, NULL, &error_abort);
    g_assert(netdev_add(opts, &error_abort));
    qemu_opts_free(opts);
    opts = qemu_opts_parse("driver=virtio-net-pci,netdev=fzn0,addr=05.0,"
                           "id=fznic", NULL, &error_abort);
    g_assert(qdev_device_add(opts, &error_abort));
    qemu_opts_free(opts);
    return 0;
}

typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

static uint32_t take(Input *in, unsigned n)
{
    uint32_t v = 0;

    for (unsigned i = 0; i < n && in->left; i++, in->left--) {
        v |= (uint32_t)*in->p++ << (8 * i);
    }
    return v;
}

static unsigned take_size(Input *in)
{
    static const unsigned sizes[] = { 1, 2, 4, 4 };

    return sizes[take(in, 1) & 3];
}

static void do_op(const FuzzDev *d, Input *in)
{
    uint8_t op = take(in, 1);
    unsigned size, len;
    uint32_t off, val;
    uint8_t buf[64];

    switch (op % 12) {
    case 0:     /* common config write: offset, size, value */
        off = take(in, 1) % 0x40;
        size = take_size(in);
        val = take(in, size);
        mmio_write(COMMON(off), val, size);
        if (off == VIRTIO_PCI_COMMON_STATUS && val == 0 && size == 1) {
            g_assert_cmphex(status_read(), ==, 0);
        }
        status_check();
        break;
    case 1:     /* common config read */
        off = take(in, 1) % 0x40;
        mmio_read(COMMON(off), take_size(in));
        break;
    case 2:     /* notify a queue (maybe one that does not exist) */
        val = take(in, 1) % 4;
        mmio_write(NOTIFY(val), val, 2);
        break;
    case 3:     /* guest RAM: offset in the window, length, bytes */
        off = take(in, 2) % GUEST_WIN_SIZE;
        len = take(in, 1) % sizeof(buf);
        len = MIN(len, GUEST_WIN_SIZE - off);
        len = MIN(len, in->left);
        memcpy(buf, in->p, len);
        in->p += len;
        in->left -= len;
        address_space_write(&address_space_memory, GUEST_WIN + off, buf,
                            len);
        break;
    case 4:     /* guest RAM: a 64-bit descriptor-sized word */
        off = take(in, 2) % (GUEST_WIN_SIZE - 8);
        stq_le_p(buf, (uint64_t)take(in, 4) | (uint64_t)take(in, 4) << 32);
        address_space_write(&address_space_memory, GUEST_WIN + off, buf, 8);
        break;
    case 5:     /* device config write / read */
        off = take(in, 1) % 0x40;
        size = take_size(in);
        if (take(in, 1) & 1) {
            mmio_write(DEVCFG(off), take(in, size), size);
        } else {
            mmio_read(DEVCFG(off), size);
        }
        break;
    case 6:     /* ISR read (clears it) */
        mmio_read(ISR_ADDR, 1);
        break;
    case 7: {   /* the whole bring-up */
        uint32_t lo = take(in, 4), hi = take(in, 4);
        uint8_t qlog = take(in, 1), vec = take(in, 1);

        bring_up(d, lo, hi & 0x7, qlog, vec, vec & 0x80);
        break;
    }
    case 8:     /* PCI config write (BARs stay where they are) */
        off = 0x34 + take(in, 1) % (0x100 - 0x34);
        size = take_size(in);
        val = take(in, size);
        cfg_write(d->devfn, off & ~(size - 1), val, size);
        break;
    case 9:     /* PCI config read (the PCI_CFG window reads the BAR) */
        off = 0x34 + take(in, 1) % (0x100 - 0x34);
        size = take_size(in);
        cfg_read(d->devfn, off & ~(size - 1), size);
        break;
    case 10:    /* MSI-X table/PBA */
        off = take(in, 2) % 0x1000 & ~3u;
        if (take(in, 1) & 1) {
            mmio_write(BAR1_ADDR + off, take(in, 4), 4);
        } else {
            mmio_read(BAR1_ADDR + off, 4);
        }
        break;
    case 11:    /* let the main loop run; the net peer sends a frame */
        len = take(in, 1) % sizeof(buf);
        len = MIN(len, in->left);
        memcpy(buf, in->p, len);
        in->p += len;
        in->left -= len;
        if (d->nvqs == 2) {
            net_pump(len ? buf : NULL, len);
        }
        main_loop_wait(false);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size };
    const FuzzDev *d;

    if (!size) {
        return 0;
    }
    d = &devs[take(&in, 1) & 1];
    map_bars(d->devfn);
    device_reset();
    for (unsigned n = 0; n < MAX_OPS && in.left; n++) {
        do_op(d, &in);
    }
    /* A reset completes whatever the guest did, and joins the worker. */
    map_bars(d->devfn);
    device_reset();
    unmap_bars(d->devfn);
    /* Interrupt handlers, and the zeroed window for the next input. */
    main_loop_wait(false);
    address_space_write(&address_space_memory, GUEST_WIN, zeroes,
                        sizeof(zeroes));
    if (d->nvqs == 2) {
        net_pump(NULL, 0);
    }
    return 0;
}
