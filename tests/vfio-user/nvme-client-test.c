/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme driven by the test client (nvme-client.h) over a real
 * socket: I/O with polled, trapped and posted doorbells, flush to a file,
 * reset, INTx, disconnects, BAR0 layouts, bad options, and the trust
 * boundaries of docs/devel/trust-boundaries.rst.  GTest (TAP).
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
#include "qemu/vfio-region-info.h"
#include "tests/exe-wrapper.h"
#include "nvme-client.h"

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
    NvmeCmd cmd;
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
    NvmeCmd cmd;
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
    NvmeCmd cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw10 = 1 };
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
    NvmeCmd cmd = { .opcode = 0x06, .prp1 = htole64(GUEST_IOVA + ID_OFF),
                    .cdw10 = 1 };
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
                                                 "%s", nvme_server_bin, cases[i]);
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

/* ---- Trust boundaries (docs/devel/trust-boundaries.rst) ---- */

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
    NvmeCmd cmd;

    server_start(&s, "--backend ram --size 4M");
    client_bringup(&c, &s, DB_POLLED);
    /* CQ 2 at an address nobody mapped, SQ 2 in client memory. */
    cmd = (NvmeCmd) { .opcode = 0x05, .prp1 = htole64(0x10000),
                      .cdw10 = (15u << 16) | 2, .cdw11 = 1 };
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    cmd = (NvmeCmd) { .opcode = 0x01,
                      .prp1 = htole64(GUEST_IOVA + PRP_LIST_OFF),
                      .cdw10 = (15u << 16) | 2, .cdw11 = (2u << 16) | 1 };
    g_assert_cmphex(admin(&c, &cmd, NULL), ==, 0);
    cmd = (NvmeCmd) { .opcode = 0x00, .nsid = htole32(1), .cid = 1 };
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

/*
 * An I/O SQ in memory mapped without an fd: the poller must fetch its
 * entries with DMA_READ messages.  Returns the request it sent.
 */
static VFIOUserDMARW msg_only_sq_fetch(Client *c, uint16_t *req_id)
{
    g_autofree uint8_t *body = NULL;
    VFIOUserDMARW rw;
    VFIOUserHdr hdr;
    NvmeCmd cmd;
    size_t len;

    dma_map_range(c, MSG_ONLY_IOVA, MSG_ONLY_SIZE, -1);
    cmd = (NvmeCmd) { .opcode = 0x05, .prp1 = htole64(GUEST_IOVA + 0x5000),
                      .cdw10 = (15u << 16) | 2, .cdw11 = 1 };
    g_assert_cmphex(admin(c, &cmd, NULL), ==, 0);
    cmd = (NvmeCmd) { .opcode = 0x01, .prp1 = htole64(MSG_ONLY_IOVA),
                      .cdw10 = (15u << 16) | 2, .cdw11 = (2u << 16) | 1 };
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
    NvmeCmd flush = { .opcode = 0x00, .nsid = htole32(1), .cid = 0x77 };
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
    nvme_client_init();
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
