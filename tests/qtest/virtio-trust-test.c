/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio as a hostile guest drives it (issue 26, the guest side of
 * docs/devel/trust-boundaries.rst), over qtest with the libqos virtio
 * 1.x driver:
 *  - device_status as the specification's state machine: DRIVER_OK
 *    twice, bits cleared and set again, FAILED, undefined bits and long
 *    random sequences always end in a defined state, reset always
 *    completes, and the device works afterwards (virtio-blk, virtio-net);
 *  - device_del of a started virtio-blk-pci leaves no fd or kernel AIO
 *    context behind;
 *  - a -netdev socket whose peer closed does not make Conduit spin;
 *  - the PCI configuration access capability (VIRTIO_PCI_CAP_PCI_CFG);
 *  - DEVICE_NEEDS_RESET comes with a configuration change notification
 *    (ISR bit 1 under INTx, the config vector's MSI-X message);
 *  - a malformed chain gets IOERR in its status byte, never in a data
 *    buffer, or the device asks for a reset.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <poll.h>
#include <linux/pci_regs.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqtest.h"
#include "libqos/pci.h"
#include "libqos/pci-pc.h"
#include "libqos/msix.h"
#include "libqos/virtio.h"

#define BLK_DEVFN QPCI_DEVFN(4, 0)
#define NET_DEVFN QPCI_DEVFN(5, 0)
#define HP_DEVFN QPCI_DEVFN(6, 0)
#define IMG_SIZE (1024 * 1024)
#define QSIZE 16
#define TIMEOUT_US (20 * G_USEC_PER_SEC)
#define MSI_TARGET 0x100000ULL
#define F(bit) (1ull << (bit))
#define BLK_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_BLK_F_FLUSH))
#define NET_FEATURES F(VIRTIO_F_VERSION_1)
#define S_ACK VIRTIO_CONFIG_S_ACKNOWLEDGE
#define S_DRV VIRTIO_CONFIG_S_DRIVER
#define S_FOK VIRTIO_CONFIG_S_FEATURES_OK
#define S_DOK VIRTIO_CONFIG_S_DRIVER_OK
#define S_FAILED VIRTIO_CONFIG_S_FAILED
#define S_NR VIRTIO_CONFIG_S_NEEDS_RESET
#define S_ALL (S_ACK | S_DRV | S_FOK | S_DOK)
/* What the device may ever show: the driver's bits and NEEDS_RESET. */
#define S_DEFINED (S_ALL | S_FAILED | S_NR)

typedef struct Ctx {
    QTestState *qts;
    QPCIBus *bus;
    QVirtioPCI *v;
    QVirtQueue *vq[2];
    unsigned nvqs;
    QGuestAlloc alloc;
    char *img;
    int sock;                   /* virtio-net: our end of the socketpair */
    bool net;
} Ctx;

static char *make_image(void)
{
    g_autofree char *tmpl = g_build_filename(g_get_tmp_dir(),
                                             "virtio-trust-XXXXXX", NULL);
    g_autofree uint8_t *buf = g_malloc(IMG_SIZE);
    int fd = g_mkstemp(tmpl);

    g_assert_cmpint(fd, >=, 0);
    for (size_t s = 0; s < IMG_SIZE / 512; s++) {
        memset(buf + s * 512, (uint8_t)s, 512);
        memcpy(buf + s * 512, &s, sizeof(uint32_t));
    }
    g_assert_cmpint(write(fd, buf, IMG_SIZE), ==, IMG_SIZE);
    close(fd);
    return g_steal_pointer(&tmpl);
}

static void ctx_common(Ctx *c, int devfn)
{
    c->bus = qpci_new_pc(c->qts);
    c->v = qvirtio_pci_new(c->bus, devfn);
    c->alloc.next = 0x200000;
    c->alloc.end = 0x3000000;
}

static void blk_start(Ctx *c, const char *extra)
{
    c->img = make_image();
    c->qts = qtest_initf("-M pc -m 64M "
                         "-blockdev driver=file,filename=%s,node-name=disk0 "
                         "-device virtio-blk-pci,addr=04.0,drive=disk0,"
                         "id=vblk0 %s", c->img, extra ? extra : "");
    c->nvqs = 1;
    ctx_common(c, BLK_DEVFN);
}

static void net_start(Ctx *c, int type)
{
    int sv[2];

    /* The child inherits sv[1] (no CLOEXEC) under the same number. */
    g_assert_cmpint(socketpair(AF_UNIX, type, 0, sv), ==, 0);
    fcntl(sv[0], F_SETFD, FD_CLOEXEC);
    c->sock = sv[0];
    c->net = true;
    c->qts = qtest_initf("-M pc -m 64M -netdev socket,id=n0,fd=%d "
                         "-device virtio-net-pci,addr=05.0,netdev=n0,id=nic0,"
                         "mac=52:54:00:ab:cd:ef", sv[1]);
    close(sv[1]);
    c->nvqs = 2;
    ctx_common(c, NET_DEVFN);
}

static void ctx_free_queues(Ctx *c)
{
    for (unsigned i = 0; i < 2; i++) {
        g_free(c->vq[i]);
        c->vq[i] = NULL;
    }
}

static void ctx_stop(Ctx *c)
{
    ctx_free_queues(c);
    qvirtio_pci_free(c->v);
    qpci_free_pc(c->bus);
    qtest_quit(c->qts);
    if (c->img) {
        unlink(c->img);
        g_free(c->img);
    }
    if (c->net && c->sock >= 0) {
        close(c->sock);
    }
}

static void assert_alive(Ctx *c)
{
    g_autoptr(JsonNode) r = qtest_qmp_assert_success(
        c->qts, "{'execute':'query-status'}");

    g_assert_nonnull(r);
}

/* Negotiates and sets the queues up, without DRIVER_OK. */
static void ctx_setup(Ctx *c, uint16_t vector)
{
    ctx_free_queues(c);
    g_assert_true(qvirtio_negotiate(c->v, c->net ? NET_FEATURES
                                                 : BLK_FEATURES));
    for (unsigned i = 0; i < c->nvqs; i++) {
        c->vq[i] = qvirtqueue_setup(c->v, &c->alloc, i, QSIZE, vector);
    }
}

static void ctx_ready(Ctx *c)
{
    ctx_setup(c, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, S_ALL);
    g_assert_cmphex(qvirtio_get_status(c->v), ==, S_ALL);
}

static uint64_t blk_header(Ctx *c, uint32_t type, uint64_t sector)
{
    uint64_t hdr = qguest_alloc(&c->alloc, 16, 16);

    qtest_writel(c->qts, hdr, type);
    qtest_writel(c->qts, hdr + 4, 0);
    qtest_writeq(c->qts, hdr + 8, sector);
    return hdr;
}

/* Reads one sector and checks it arrived; the device must be working. */
static void blk_check_io(Ctx *c, uint64_t sector)
{
    QVirtQueue *vq = c->vq[0];
    uint64_t hdr = blk_header(c, VIRTIO_BLK_T_IN, sector);
    uint64_t buf = qguest_alloc(&c->alloc, 512, 512);
    uint64_t status = qguest_alloc(&c->alloc, 1, 1);
    uint16_t head;
    uint32_t id, len;

    qtest_writeb(c->qts, status, 0xaa);
    head = qvirtqueue_add(vq, hdr, 16, false, true);
    qvirtqueue_add(vq, buf, 512, true, true);
    qvirtqueue_add(vq, status, 1, true, false);
    qvirtqueue_make_available(vq, head);
    qvirtqueue_kick(vq);
    g_assert_true(qvirtqueue_wait_used(vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    g_assert_cmpuint(qtest_readb(c->qts, status), ==, VIRTIO_BLK_S_OK);
    g_assert_cmpuint(qtest_readl(c->qts, buf), ==, sector);
}

/* Sends one frame on TX and checks it leaves on the socket. */
static void net_check_io(Ctx *c, uint8_t seed)
{
    QVirtQueue *vq = c->vq[1];
    uint8_t frame[12 + 60], got[128];
    uint64_t buf = qguest_alloc(&c->alloc, sizeof(frame), 64);
    struct pollfd p = { c->sock, POLLIN, 0 };
    uint16_t head;
    uint32_t id;

    memset(frame, 0, 12);
    memset(frame + 12, seed, sizeof(frame) - 12);
    qtest_memwrite(c->qts, buf, frame, sizeof(frame));
    head = qvirtqueue_add(vq, buf, sizeof(frame), false, false);
    qvirtqueue_make_available(vq, head);
    qvirtqueue_kick(vq);
    g_assert_true(qvirtqueue_wait_used(vq, &id, NULL, TIMEOUT_US));
    g_assert_cmpuint(id, ==, head);
    g_assert_cmpint(poll(&p, 1, 20000), ==, 1);
    g_assert_cmpint(recv(c->sock, got, sizeof(got), 0), ==, 60);
    g_assert_cmpuint(got[0], ==, seed);
}

static void check_io(Ctx *c, unsigned n)
{
    if (c->net) {
        net_check_io(c, 0x40 + n);
    } else {
        blk_check_io(c, n % (IMG_SIZE / 512));
    }
}

/* After anything: a reset completes, and the device works again. */
static void check_recovers(Ctx *c, unsigned n)
{
    qvirtio_reset(c->v);
    ctx_ready(c);
    check_io(c, n);
    assert_alive(c);
}

/*
 * DRIVER_OK again, alone or with bits left out and set again: the worker
 * starts once, a reset stops it once (this hung or used freed memory).
 */
static void status_sequences(Ctx *c)
{
    static const uint8_t seqs[][4] = {
        { S_ALL, 0 },                       /* DRIVER_OK twice */
        { S_DOK, S_ALL, 0 },                /* DRIVER_OK alone, then all */
        { S_ACK | S_DRV | S_FOK, S_ALL, 0 },/* DRIVER_OK cleared, set */
        { S_ACK, S_ALL, S_ALL, 0 },
        { S_ALL | 0x30, S_ALL, 0 },         /* undefined bits */
        { S_NR | S_ALL, 0 },                /* the device's own bit */
    };

    /* Whatever the status reads back: the reset after each completes. */
    for (unsigned i = 0; i < G_N_ELEMENTS(seqs); i++) {
        ctx_ready(c);
        for (unsigned j = 0; j < 4 && seqs[i][j]; j++) {
            qvirtio_set_status(c->v, seqs[i][j]);
        }
        qvirtio_reset(c->v);
        assert_alive(c);
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(seqs); i++) {
        ctx_ready(c);
        check_io(c, i);
        for (unsigned j = 0; j < 4 && seqs[i][j]; j++) {
            qvirtio_set_status(c->v, seqs[i][j]);
            /* A driver cannot clear bits: the device keeps all four. */
            g_assert_cmphex(qvirtio_get_status(c->v), ==, S_ALL);
        }
        /* Still one worker, still serving the queue. */
        check_io(c, i + 100);
        qvirtio_reset(c->v);
    }
    /* FAILED stops the device; only a reset changes the status after. */
    ctx_ready(c);
    qvirtio_set_status(c->v, S_ALL | S_FAILED);
    g_assert_cmphex(qvirtio_get_status(c->v), ==, S_ALL | S_FAILED);
    qvirtio_set_status(c->v, S_ALL);
    g_assert_cmphex(qvirtio_get_status(c->v), ==, S_ALL | S_FAILED);
    check_recovers(c, 7);
    /* FAILED before DRIVER_OK: DRIVER_OK then does not start anything. */
    ctx_setup(c, VIRTIO_MSI_NO_VECTOR);
    qvirtio_set_status(c->v, S_ACK | S_FAILED);
    qvirtio_set_status(c->v, S_ALL);
    g_assert_cmphex(qvirtio_get_status(c->v) & S_DOK, ==, 0);
    check_recovers(c, 8);
    /* DRIVER_OK without FEATURES_OK: the device needs a reset. */
    qvirtio_reset(c->v);
    qvirtio_set_status(c->v, S_ACK | S_DRV | S_DOK);
    g_assert_cmphex(qvirtio_get_status(c->v) & S_NR, ==, S_NR);
    qvirtio_set_status(c->v, S_ALL);
    g_assert_cmphex(qvirtio_get_status(c->v) & S_NR, ==, S_NR);
    check_recovers(c, 9);
}

/* Random bytes, resets among them: every state defined, always. */
static void status_garbage(Ctx *c)
{
    static const uint8_t fixed[] = {
        0xff, 0x80, 0x8f, S_FAILED, S_ALL, 0x40, 0x10, 0x20, 0x30, 0x7f,
        S_DOK, S_FOK | S_DOK, 0xfe, 0x01, 0xc0,
    };
    g_autoptr(GRand) rand = g_rand_new_with_seed(26);
    uint8_t last = 0;

    ctx_ready(c);
    for (unsigned i = 0; i < G_N_ELEMENTS(fixed); i++) {
        qvirtio_set_status(c->v, fixed[i]);
        g_assert_cmphex(qvirtio_get_status(c->v) & ~S_DEFINED, ==, 0);
    }
    for (unsigned i = 0; i < 400; i++) {
        uint8_t val = g_rand_int_range(rand, 0, 8) == 0 ? 0
                      : g_rand_int_range(rand, 0, 256);
        uint8_t st;

        qvirtio_set_status(c->v, val);
        st = qvirtio_get_status(c->v);
        g_assert_cmphex(st & ~S_DEFINED, ==, 0);
        if (val == 0) {
            g_assert_cmphex(st, ==, 0);
        } else if (!(last & S_FAILED)) {
            /* Bits the driver set stay set (FEATURES_OK may be refused). */
            g_assert_cmphex(st & val & (S_ACK | S_DRV | S_FAILED), ==,
                            val & (S_ACK | S_DRV | S_FAILED));
        }
        /* Every few writes the queues are set up again, enabled or not. */
        if (i % 50 == 25) {
            ctx_setup(c, VIRTIO_MSI_NO_VECTOR);
        }
        last = st;
        if (i % 100 == 99) {
            assert_alive(c);
        }
    }
    check_recovers(c, 11);
}

static void test_blk_status_sequences(void)
{
    Ctx c = { 0 };

    blk_start(&c, NULL);
    status_sequences(&c);
    ctx_stop(&c);
}

static void test_blk_status_garbage(void)
{
    Ctx c = { 0 };

    blk_start(&c, NULL);
    status_garbage(&c);
    ctx_stop(&c);
}

static void test_net_status_sequences(void)
{
    Ctx c = { 0 };

    net_start(&c, SOCK_DGRAM);
    status_sequences(&c);
    ctx_stop(&c);
}

static void test_net_status_garbage(void)
{
    Ctx c = { 0 };

    net_start(&c, SOCK_DGRAM);
    status_garbage(&c);
    ctx_stop(&c);
}

/* ---- device_del leaks --------------------------------------------------- */

static unsigned count_fds(pid_t pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int)pid);
    GDir *d = g_dir_open(path, 0, NULL);
    unsigned n = 0;

    g_assert_nonnull(d);
    while (g_dir_read_name(d)) {
        n++;
    }
    g_dir_close(d);
    return n;
}

/* Kernel AIO contexts of the process: each io_setup() maps a ring. */
static unsigned count_aio_rings(pid_t pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/maps", (int)pid);
    g_autofree char *maps = NULL;
    unsigned n = 0;

    g_assert_true(g_file_get_contents(path, &maps, NULL, NULL));
    for (char *p = maps; (p = strstr(p, "/[aio]")); p++) {
        n++;
    }
    return n;
}

static long aio_nr(void)
{
    g_autofree char *s = NULL;

    if (!g_file_get_contents("/proc/sys/fs/aio-nr", &s, NULL, NULL)) {
        return -1;
    }
    return atol(s);
}

static void test_blk_unplug_leaks(void)
{
    Ctx c = { 0 };
    unsigned fds0 = 0, rings0 = 0;

    /* qemu-user (check-ppc64le) emulates io_setup without an [aio] map. */
    if (getenv("MESON_EXE_WRAPPER")) {
        g_test_skip("under qemu-user the AIO rings are not visible in maps");
        return;
    }
    long nr0 = aio_nr();

    c.img = make_image();
    c.qts = qtest_init("-M pc -m 64M");
    c.bus = qpci_new_pc(c.qts);
    c.nvqs = 1;
    for (unsigned i = 0; i < 10; i++) {
        qtest_qmp_assert_success(c.qts, "{'execute':'blockdev-add',"
                                 "'arguments':{'driver':'file',"
                                 "'filename':'%s','node-name':'hp0'}}",
                                 c.img);
        qtest_qmp_assert_success(c.qts, "{'execute':'device_add',"
                                 "'arguments':{'driver':'virtio-blk-pci',"
                                 "'drive':'hp0','id':'hpdisk',"
                                 "'addr':'06.0'}}");
        c.v = qvirtio_pci_new(c.bus, HP_DEVFN);
        c.alloc.next = 0x200000;
        c.alloc.end = 0x3000000;
        ctx_ready(&c);
        blk_check_io(&c, i);
        /* Started: an AIO context and its eventfd exist now. */
        g_assert_cmpuint(count_aio_rings(qtest_pid(c.qts)), >=, 1);
        if (i == 0) {
            qtest_qmp_device_del(c.qts, "hpdisk");
            qtest_qmp_assert_success(c.qts, "{'execute':'blockdev-del',"
                                     "'arguments':{'node-name':'hp0'}}");
            fds0 = count_fds(qtest_pid(c.qts));
            rings0 = count_aio_rings(qtest_pid(c.qts));
        } else {
            qtest_qmp_device_del(c.qts, "hpdisk");
            qtest_qmp_assert_success(c.qts, "{'execute':'blockdev-del',"
                                     "'arguments':{'node-name':'hp0'}}");
        }
        ctx_free_queues(&c);
        qvirtio_pci_free(c.v);
        c.v = NULL;
    }
    g_assert_cmpuint(rings0, ==, 0);
    g_assert_cmpuint(count_aio_rings(qtest_pid(c.qts)), ==, 0);
    g_assert_cmpuint(count_fds(qtest_pid(c.qts)), ==, fds0);
    if (nr0 >= 0) {
        g_test_message("aio-nr %ld -> %ld over 10 cycles (host-wide)", nr0,
                       aio_nr());
    }
    qpci_free_pc(c.bus);
    qtest_quit(c.qts);
    unlink(c.img);
    g_free(c.img);
}

/* ---- a socket backend whose peer closed --------------------------------- */

static double cpu_seconds(pid_t pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
    g_autofree char *s = NULL;
    unsigned long ut, st;
    char *p;

    g_assert_true(g_file_get_contents(path, &s, NULL, NULL));
    p = strrchr(s, ')');
    g_assert_nonnull(p);
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt */
    g_assert_cmpint(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
                           "%*u %lu %lu", &ut, &st), ==, 2);
    return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

/* read-like system calls the process made (/proc/PID/io syscr). */
static uint64_t read_syscalls(pid_t pid)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/io", (int)pid);
    g_autofree char *s = NULL;
    char *p;

    g_assert_true(g_file_get_contents(path, &s, NULL, NULL));
    p = strstr(s, "syscr:");
    g_assert_nonnull(p);
    return g_ascii_strtoull(p + 6, NULL, 10);
}

static void test_net_peer_closed(void)
{
    Ctx c = { 0 };
    pid_t pid;
    double cpu;
    uint64_t reads;

    net_start(&c, SOCK_SEQPACKET);
    pid = qtest_pid(c.qts);
    ctx_ready(&c);
    /* Receive buffers posted: the backend fd is watched. */
    for (unsigned i = 0; i < 4; i++) {
        uint64_t buf = qguest_alloc(&c.alloc, 2048, 64);

        qvirtqueue_make_available(c.vq[0],
                                  qvirtqueue_add(c.vq[0], buf, 2048, true,
                                                 false));
    }
    qvirtqueue_kick(c.vq[0]);
    net_check_io(&c, 1);
    close(c.sock);
    c.sock = -1;
    g_usleep(G_USEC_PER_SEC / 2);
    /*
     * A spin on the dead fd reads it over and over (hundreds of thousands
     * of read() calls in 3 s, a whole core however loaded the host is);
     * idle, with nobody talking to it, the process reads next to nothing.
     */
    cpu = cpu_seconds(pid);
    reads = read_syscalls(pid);
    g_usleep(3 * G_USEC_PER_SEC);
    cpu = cpu_seconds(pid) - cpu;
    reads = read_syscalls(pid) - reads;
    g_test_message("over 3 s with the peer gone: %.2f s CPU, %" PRIu64
                   " reads", cpu, reads);
    g_assert_cmpuint(reads, <, 1000);
    /* The report says what happened, once. */
    for (int i = 0; i < 20000 && !strstr(qtest_get_stderr(c.qts),
                                         "peer closed"); i++) {
        g_usleep(1000);
    }
    g_assert_nonnull(strstr(qtest_get_stderr(c.qts),
                            "netdev n0: the peer closed the socket"));
    assert_alive(&c);
    /* Reset and start again: still no spin, TX frames are dropped. */
    qvirtio_reset(c.v);
    ctx_ready(&c);
    reads = read_syscalls(pid);
    g_usleep(2 * G_USEC_PER_SEC);
    g_assert_cmpuint(read_syscalls(pid) - reads, <, 1000);
    assert_alive(&c);
    ctx_stop(&c);
}

/* ---- VIRTIO_PCI_CAP_PCI_CFG --------------------------------------------- */

static uint8_t find_pci_cfg_cap(QPCIDevice *d)
{
    uint8_t pos = 0;

    while ((pos = qpci_find_capability(d, PCI_CAP_ID_VNDR, pos))) {
        if (qpci_config_readb(d, pos + VIRTIO_PCI_CAP_CFG_TYPE) ==
            VIRTIO_PCI_CAP_PCI_CFG) {
            return pos;
        }
    }
    return 0;
}

/* The BAR the common configuration capability names. */
static unsigned virtio_bar_index(QPCIDevice *d)
{
    uint8_t pos = 0;

    while ((pos = qpci_find_capability(d, PCI_CAP_ID_VNDR, pos))) {
        if (qpci_config_readb(d, pos + VIRTIO_PCI_CAP_CFG_TYPE) ==
            VIRTIO_PCI_CAP_COMMON_CFG) {
            return qpci_config_readb(d, pos + VIRTIO_PCI_CAP_BAR);
        }
    }
    g_assert_not_reached();
}

static void cfg_window(QPCIDevice *d, uint8_t cap, uint8_t bar, uint32_t off,
                       uint32_t len)
{
    qpci_config_writeb(d, cap + VIRTIO_PCI_CAP_BAR, bar);
    qpci_config_writel(d, cap + VIRTIO_PCI_CAP_OFFSET, off);
    qpci_config_writel(d, cap + VIRTIO_PCI_CAP_LENGTH, len);
}

static void test_pci_cfg_cap(void)
{
    Ctx c = { 0 };
    QPCIDevice *d;
    uint8_t cap;
    unsigned bar;
    uint64_t common, device;

    blk_start(&c, NULL);
    d = c.v->pdev;
    cap = find_pci_cfg_cap(d);
    g_assert_cmpuint(cap, !=, 0);
    g_assert_cmpuint(qpci_config_readb(d, cap + VIRTIO_PCI_CAP_LEN), ==,
                     sizeof(struct virtio_pci_cfg_cap));
    bar = virtio_bar_index(d);
    common = c.v->common;
    device = c.v->device;

    /* Reads: num_queues (2 bytes), capacity (4 bytes of device config). */
    cfg_window(d, cap, bar, common + VIRTIO_PCI_COMMON_NUMQ, 2);
    g_assert_cmpuint(qpci_config_readw(d, cap + 16), ==, 1);
    cfg_window(d, cap, bar, device, 4);
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==, IMG_SIZE / 512);
    /* The window and the BAR are the same registers. */
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==,
                     qvirtio_config_readl(c.v, 0));

    /* Writes: device_status through the window, seen through the BAR. */
    qvirtio_reset(c.v);
    cfg_window(d, cap, bar, common + VIRTIO_PCI_COMMON_STATUS, 1);
    qpci_config_writeb(d, cap + 16, S_ACK);
    g_assert_cmphex(qvirtio_get_status(c.v), ==, S_ACK);
    qpci_config_writeb(d, cap + 16, S_ACK | S_DRV);
    g_assert_cmphex(qvirtio_get_status(c.v), ==, S_ACK | S_DRV);
    g_assert_cmphex(qpci_config_readb(d, cap + 16), ==, S_ACK | S_DRV);

    /* Accesses the specification forbids are dropped (read 0). */
    cfg_window(d, cap, bar, common + VIRTIO_PCI_COMMON_NUMQ, 3);
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==, 0);
    cfg_window(d, cap, bar, common + VIRTIO_PCI_COMMON_NUMQ + 1, 2);
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==, 0);
    cfg_window(d, cap, bar, 0x7fffffff, 4);
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==, 0);
    cfg_window(d, cap, 1, 0, 4);
    g_assert_cmpuint(qpci_config_readl(d, cap + 16), ==, 0);
    cfg_window(d, cap, 9, common + VIRTIO_PCI_COMMON_STATUS, 1);
    qpci_config_writeb(d, cap + 16, 0);
    g_assert_cmphex(qvirtio_get_status(c.v), ==, S_ACK | S_DRV);

    /* A whole bring-up through the BAR still works afterwards. */
    check_recovers(&c, 3);
    ctx_stop(&c);
}

/* ---- DEVICE_NEEDS_RESET and the configuration change notification ------- */

static void break_ring(Ctx *c)
{
    /* A head index out of range: the ring is unusable. */
    qvirtqueue_make_available(c->vq[0], QSIZE + 1);
    qvirtqueue_kick(c->vq[0]);
    for (int i = 0; i < 20000 && !(qvirtio_get_status(c->v) & S_NR); i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qvirtio_get_status(c->v) & S_NR, ==, S_NR);
}

static void test_needs_reset_intx(void)
{
    Ctx c = { 0 };
    uint8_t isr = 0;

    blk_start(&c, NULL);
    ctx_ready(&c);
    /* Nothing pending yet. */
    g_assert_cmphex(qpci_io_readb(c.v->pdev, c.v->bar, c.v->isr), ==, 0);
    break_ring(&c);
    /* ISR bit 1: a configuration change (and INTx raised for it). */
    for (int i = 0; i < 20000 && !isr; i++) {
        isr = qpci_io_readb(c.v->pdev, c.v->bar, c.v->isr);
        if (!isr) {
            g_usleep(1000);
        }
    }
    g_assert_cmphex(isr & VIRTIO_PCI_ISR_CONFIG, ==, VIRTIO_PCI_ISR_CONFIG);
    /* Read to clear. */
    g_assert_cmphex(qpci_io_readb(c.v->pdev, c.v->bar, c.v->isr), ==, 0);
    check_recovers(&c, 5);
    ctx_stop(&c);
}

static void test_needs_reset_msix(void)
{
    Ctx c = { 0 };
    QPCIDevice *d;

    blk_start(&c, NULL);
    d = c.v->pdev;
    qpci_msix_enable(d);
    /* Vector 0 for configuration changes, vector 1 for the queue. */
    qpci_msix_set_vector(d, 0, MSI_TARGET, 0xc0f1);
    qpci_msix_set_vector(d, 1, MSI_TARGET + 4, 0x0001);
    qpci_msix_mask_vector(d, 0, false);
    qpci_msix_mask_vector(d, 1, false);
    qtest_writel(c.qts, MSI_TARGET, 0);
    ctx_setup(&c, 1);
    qpci_io_writew(d, c.v->bar, c.v->common + VIRTIO_PCI_COMMON_MSIX, 0);
    g_assert_cmpuint(qpci_io_readw(d, c.v->bar,
                                   c.v->common + VIRTIO_PCI_COMMON_MSIX),
                     ==, 0);
    qvirtio_set_status(c.v, S_ALL);
    blk_check_io(&c, 2);
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET), ==, 0);
    break_ring(&c);
    for (int i = 0; i < 20000 && qtest_readl(c.qts, MSI_TARGET) != 0xc0f1;
         i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qtest_readl(c.qts, MSI_TARGET), ==, 0xc0f1);
    check_recovers(&c, 6);
    ctx_stop(&c);
}

/* ---- malformed chains ---------------------------------------------------- */

static void test_bad_chain_status(void)
{
    Ctx c = { 0 };
    QVirtQueue *vq;
    uint64_t hdr, data, status, data2;
    uint8_t junk[512];
    uint32_t id, len;

    blk_start(&c, NULL);
    ctx_ready(&c);
    vq = c.vq[0];
    hdr = blk_header(&c, VIRTIO_BLK_T_IN, 1);
    data = qguest_alloc(&c.alloc, 512, 512);
    data2 = qguest_alloc(&c.alloc, 512, 512);
    status = qguest_alloc(&c.alloc, 1, 1);

    /*
     * header, a writable data buffer in RAM, one outside RAM, the status:
     * the chain cannot be served, its status byte says IOERR and the
     * data buffer is not touched.
     */
    qtest_memset(c.qts, data, 0xee, 512);
    qtest_writeb(c.qts, status, 0xaa);
    qvirtqueue_set_desc(vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(vq, 1, data, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    qvirtqueue_set_desc(vq, 2, 0x10000000000ull, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 3);
    qvirtqueue_set_desc(vq, 3, status, 1, VRING_DESC_F_WRITE, 0);
    qvirtqueue_make_available(vq, 0);
    qvirtqueue_kick(vq);
    g_assert_true(qvirtqueue_wait_used(vq, &id, &len, TIMEOUT_US));
    g_assert_cmpuint(id, ==, 0);
    g_assert_cmpuint(len, ==, 1);
    g_assert_cmpuint(qtest_readb(c.qts, status), ==, VIRTIO_BLK_S_IOERR);
    qtest_memread(c.qts, data, junk, sizeof(junk));
    for (size_t i = 0; i < sizeof(junk); i++) {
        g_assert_cmphex(junk[i], ==, 0xee);
    }
    g_assert_cmphex(qvirtio_get_status(c.v) & S_NR, ==, 0);

    /* Same through an indirect-less chain with the status too far away. */
    qtest_memset(c.qts, data2, 0xee, 512);
    qtest_writeb(c.qts, status, 0xaa);
    qvirtqueue_set_desc(vq, 4, hdr, 16, VRING_DESC_F_NEXT, 5);
    qvirtqueue_set_desc(vq, 5, data2, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 6);
    qvirtqueue_set_desc(vq, 6, status, 1, 0, 0);  /* readable "status" */
    qvirtqueue_make_available(vq, 4);
    qvirtqueue_kick(vq);
    /* No status byte anywhere: NEEDS_RESET, nothing written. */
    for (int i = 0; i < 20000 && !(qvirtio_get_status(c.v) & S_NR); i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qvirtio_get_status(c.v) & S_NR, ==, S_NR);
    qtest_memread(c.qts, data2, junk, sizeof(junk));
    for (size_t i = 0; i < sizeof(junk); i++) {
        g_assert_cmphex(junk[i], ==, 0xee);
    }
    g_assert_cmphex(qtest_readb(c.qts, status), ==, 0xaa);
    check_recovers(&c, 4);

    /* A loop has no end: NEEDS_RESET, the data buffer is not written. */
    vq = c.vq[0];
    hdr = blk_header(&c, VIRTIO_BLK_T_IN, 1);
    qtest_memset(c.qts, data, 0xee, 512);
    qvirtqueue_set_desc(vq, 0, hdr, 16, VRING_DESC_F_NEXT, 1);
    qvirtqueue_set_desc(vq, 1, data, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 2);
    qvirtqueue_set_desc(vq, 2, data, 512,
                        VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
    qvirtqueue_make_available(vq, 0);
    qvirtqueue_kick(vq);
    for (int i = 0; i < 20000 && !(qvirtio_get_status(c.v) & S_NR); i++) {
        g_usleep(1000);
    }
    g_assert_cmphex(qvirtio_get_status(c.v) & S_NR, ==, S_NR);
    qtest_memread(c.qts, data, junk, sizeof(junk));
    for (size_t i = 0; i < sizeof(junk); i++) {
        g_assert_cmphex(junk[i], ==, 0xee);
    }
    check_recovers(&c, 5);
    ctx_stop(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtio-trust/blk/status/sequences",
                    test_blk_status_sequences);
    g_test_add_func("/virtio-trust/blk/status/garbage",
                    test_blk_status_garbage);
    g_test_add_func("/virtio-trust/net/status/sequences",
                    test_net_status_sequences);
    g_test_add_func("/virtio-trust/net/status/garbage",
                    test_net_status_garbage);
    g_test_add_func("/virtio-trust/blk/unplug-leaks", test_blk_unplug_leaks);
    g_test_add_func("/virtio-trust/net/socket-peer-closed",
                    test_net_peer_closed);
    g_test_add_func("/virtio-trust/pci-cfg-cap", test_pci_cfg_cap);
    g_test_add_func("/virtio-trust/needs-reset/intx", test_needs_reset_intx);
    g_test_add_func("/virtio-trust/needs-reset/msix", test_needs_reset_msix);
    g_test_add_func("/virtio-trust/bad-chain/status-byte",
                    test_bad_chain_status);
    return g_test_run();
}
