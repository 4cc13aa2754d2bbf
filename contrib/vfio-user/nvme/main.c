/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: an NVMe controller served over vfio-user with libvfu.
 *
 * This file binds the model (nvme.h) to the server library: PCI identity,
 * BAR0 as a memfd the client may map (doorbells polled there), the MSI-X
 * BAR, IRQs, DMA, reset on disconnect and the signal handling.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <sys/mman.h>
#include "qemu/error-report.h"
#include "qemu/trace.h"
#include "qapi/error.h"
#include "contrib/vfio-user/libvfu/libvfu.h"
#include "nvme.h"
#include "poller.h"
#include "trace.h"

/*
 * A test ID in the QEMU range; Linux's nvme driver binds by class code
 * (mass storage / NVM / NVMe), not by ID, so no quirks apply.
 */
#define NVME_PCI_VENDOR     0x1b36
#define NVME_PCI_DEVICE     0x00f0
#define NVME_PCI_CLASS      0x010802

typedef struct NvmeServer {
    NvmeOptions opts;
    NvmeBarLayout layout;
    VfuCtx *ctx;
    NvmeBackend *backend;
    NvmeCtrl ctrl;
    NvmePoller poller;
    bool ctrl_ready;
    bool stopping;          /* no new BAR0 memfd for a client to come */
    int bar0_fd;
    uint8_t *bar0;
    int msix_fd;
    uint8_t *msix_mem;
    uint8_t msix_cap;
    /* Migration data being saved (STOP_COPY) or received (RESUMING). */
    GByteArray *mig_buf;
    size_t mig_pos;
} NvmeServer;

static VfuCtx *nvme_signal_ctx;

/* ---- DMA accessor over libvfu ---- */

static __thread bool nvme_dma_read_locked;

static void *nvme_vfu_dma_ptr(void *opaque, uint64_t iova, uint64_t len,
                              bool write)
{
    NvmeServer *s = opaque;

    return vfu_dma_ptr(s->ctx, iova, len, write);
}

static bool nvme_vfu_dma_rw(void *opaque, uint64_t iova, void *buf,
                            uint64_t len, bool write)
{
    NvmeServer *s = opaque;
    bool locked = nvme_dma_read_locked;
    int r;

    /* Message-based DMA must not run under the read lock (libvfu.h). */
    if (locked) {
        vfu_dma_unlock(s->ctx);
    }
    r = write ? vfu_dma_write(s->ctx, iova, buf, len)
              : vfu_dma_read(s->ctx, iova, buf, len);
    if (locked) {
        vfu_dma_lock(s->ctx);
    }
    return r == 0;
}

static void nvme_vfu_dma_begin(void *opaque)
{
    NvmeServer *s = opaque;

    vfu_dma_lock(s->ctx);
    nvme_dma_read_locked = true;
}

static void nvme_vfu_dma_end(void *opaque)
{
    NvmeServer *s = opaque;

    nvme_dma_read_locked = false;
    vfu_dma_unlock(s->ctx);
}

static void nvme_vfu_mark_dirty(void *opaque, uint64_t iova, uint64_t len)
{
    NvmeServer *s = opaque;

    vfu_dma_mark_dirty(s->ctx, iova, len);
}

static const NvmeDmaOps nvme_vfu_dma_ops = {
    .ptr = nvme_vfu_dma_ptr,
    .mark_dirty = nvme_vfu_mark_dirty,
    .rw = nvme_vfu_dma_rw,
    .begin = nvme_vfu_dma_begin,
    .end = nvme_vfu_dma_end,
};

/* ---- Interrupts ---- */

static bool nvme_msix_enabled(NvmeServer *s)
{
    uint16_t ctl = lduw_le_p(vfu_pci_config(s->ctx) + s->msix_cap +
                             PCI_MSIX_FLAGS);

    return ctl & PCI_MSIX_FLAGS_ENABLE;
}

static void nvme_irq_notify(void *opaque, unsigned vector)
{
    NvmeServer *s = opaque;

    if (vector == NVME_IRQ_FATAL) {
        /* Error recovery: as vfio-pci signals an AER fatal error. */
        vfu_irq_trigger(s->ctx, VFIO_PCI_ERR_IRQ_INDEX, 0);
    } else if (nvme_msix_enabled(s)) {
        /* Masked vectors are latched by libvfu and sent on unmask. */
        vfu_irq_trigger(s->ctx, VFIO_PCI_MSIX_IRQ_INDEX, vector);
    } else if (!(s->ctrl.intms & 1)) {
        vfu_irq_trigger(s->ctx, VFIO_PCI_INTX_IRQ_INDEX, 0);
    }
}

/* ---- Regions ---- */

static int nvme_bar0_access(VfuCtx *ctx, void *opaque, uint32_t index,
                            uint64_t offset, void *buf, uint32_t count,
                            bool is_write)
{
    NvmeServer *s = opaque;
    uint64_t end = offset + count;

    trace_nvme_region_access(0, offset, count, is_write);
    if (offset < NVME_DB_BASE) {
        if (end > NVME_DB_BASE) {
            return -EINVAL;
        }
        if (is_write) {
            if (count == 4 || count == 8) {
                nvme_ctrl_reg_write(&s->ctrl, offset, ldn_le_p(buf, count),
                                    count);
            } else {
                qemu_log_guest_error("nvme: %u-byte register write at 0x%"
                                     PRIx64 " ignored", count, offset);
            }
            return 0;
        }
        /* Reads of any size: assemble from the dwords they cover. */
        for (uint64_t dw = offset & ~3ull; dw < end; dw += 4) {
            uint8_t tmp[4];

            stl_le_p(tmp, nvme_ctrl_reg_read(&s->ctrl, dw, 4));
            for (unsigned i = 0; i < 4; i++) {
                if (dw + i >= offset && dw + i < end) {
                    ((uint8_t *)buf)[dw + i - offset] = tmp[i];
                }
            }
        }
        return 0;
    }
    if (is_write && offset < NVME_DB_BASE + 8 * NVME_MAX_QUEUES) {
        if (count != 4 || offset & 3) {
            qemu_log_guest_error("nvme: %u-byte doorbell write at 0x%" PRIx64
                                 " ignored", count, offset);
            return 0;
        }
        nvme_ctrl_doorbell_write(&s->ctrl, offset, ldl_le_p(buf));
        return 0;
    }
    /* Doorbell reads, the MSI-X table/PBA and unused space: memory. */
    if (is_write) {
        memcpy(s->bar0 + offset, buf, count);
    } else {
        memcpy(buf, s->bar0 + offset, count);
    }
    return 0;
}

static int nvme_msix_bar_access(VfuCtx *ctx, void *opaque, uint32_t index,
                                uint64_t offset, void *buf, uint32_t count,
                                bool is_write)
{
    NvmeServer *s = opaque;

    trace_nvme_region_access(index, offset, count, is_write);
    /* The client emulates MSI-X; these bytes are only memory to us. */
    if (is_write) {
        memcpy(s->msix_mem + offset, buf, count);
    } else {
        memcpy(buf, s->msix_mem + offset, count);
    }
    return 0;
}

static uint8_t *nvme_memfd_map(const char *name, uint64_t size, int *fd,
                               Error **errp)
{
    void *p;

    *fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (*fd < 0) {
        error_setg_errno(errp, errno, "memfd_create(%s)", name);
        return NULL;
    }
    if (ftruncate(*fd, size) < 0) {
        error_setg_errno(errp, errno, "ftruncate(%s)", name);
        return NULL;
    }
    /* The client maps this fd: a fixed size spares it a SIGBUS defence. */
    if (fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
        error_setg_errno(errp, errno, "sealing %s", name);
        return NULL;
    }
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
        error_setg_errno(errp, errno, "mmap(%s)", name);
        return NULL;
    }
    return p;
}

/* ---- Migration ---- */

/*
 * Most a destination accepts: the controller state is a few KiB, a ram
 * namespace travels whole (plus a byte per 4 KiB block).
 */
static uint64_t nvme_mig_limit(NvmeServer *s)
{
    uint64_t ram = nvme_backend_ram(s->backend) ?
                   nvme_backend_size(s->backend) : 0;

    return 1024 * 1024 + ram + ram / 4096;
}

static int nvme_mig_transition(VfuCtx *ctx, void *opaque, uint32_t from,
                               uint32_t to)
{
    NvmeServer *s = opaque;
    Error *err = NULL;

    trace_nvme_mig_transition(from, to);
    switch (to) {
    case VFIO_MIG_STATE_STOP:
        if (from == VFIO_MIG_STATE_RUNNING) {
            nvme_ctrl_pause(&s->ctrl);
        } else if (from == VFIO_MIG_STATE_RESUMING) {
            bool ok = s->mig_buf &&
                      nvme_ctrl_load(&s->ctrl, s->mig_buf->data,
                                     s->mig_buf->len, &err);

            g_clear_pointer(&s->mig_buf, g_byte_array_unref);
            if (!ok) {
                if (err) {
                    error_report_err(err);
                }
                return -EINVAL;
            }
        } else {
            g_clear_pointer(&s->mig_buf, g_byte_array_unref);
        }
        return 0;
    case VFIO_MIG_STATE_RUNNING:
        nvme_ctrl_resume(&s->ctrl);
        return 0;
    case VFIO_MIG_STATE_STOP_COPY:
        g_clear_pointer(&s->mig_buf, g_byte_array_unref);
        s->mig_buf = g_byte_array_new();
        s->mig_pos = 0;
        nvme_ctrl_save(&s->ctrl, s->mig_buf);
        return 0;
    case VFIO_MIG_STATE_RESUMING:
        g_clear_pointer(&s->mig_buf, g_byte_array_unref);
        s->mig_buf = g_byte_array_new();
        return 0;
    default:
        return -EINVAL;
    }
}

static ssize_t nvme_mig_read(VfuCtx *ctx, void *opaque, void *buf,
                             uint64_t size)
{
    NvmeServer *s = opaque;
    size_t n;

    if (!s->mig_buf) {
        return -EINVAL;
    }
    n = MIN(size, s->mig_buf->len - s->mig_pos);
    memcpy(buf, s->mig_buf->data + s->mig_pos, n);
    s->mig_pos += n;
    return n;
}

static int nvme_mig_write(VfuCtx *ctx, void *opaque, const void *buf,
                          uint64_t size)
{
    NvmeServer *s = opaque;

    if (!s->mig_buf) {
        return -EINVAL;
    }
    if (s->mig_buf->len + size > nvme_mig_limit(s)) {
        error_report("nvme: more migration data than a controller has "
                     "(%" PRIu64 " bytes at most)", nvme_mig_limit(s));
        return -EFBIG;
    }
    g_byte_array_append(s->mig_buf, buf, size);
    return 0;
}

static uint64_t nvme_mig_data_size(VfuCtx *ctx, void *opaque)
{
    NvmeServer *s = opaque;

    if (s->mig_buf && vfu_migration_state(ctx) == VFIO_MIG_STATE_STOP_COPY) {
        return s->mig_buf->len - s->mig_pos;
    }
    /* An estimate: the registers and queues, and a ram namespace. */
    return 4096 + (nvme_backend_ram(s->backend) ?
                   nvme_backend_size(s->backend) : 0);
}

static const VfuMigrationOps nvme_mig_ops = {
    .transition = nvme_mig_transition,
    .read_data = nvme_mig_read,
    .write_data = nvme_mig_write,
    .data_size = nvme_mig_data_size,
};

/* ---- libvfu device callbacks ---- */

static bool nvme_bar0_setup(NvmeServer *s, Error **errp);

static void nvme_vfu_reset(VfuCtx *ctx, void *opaque, VfuResetReason reason)
{
    NvmeServer *s = opaque;
    Error *err = NULL;

    trace_nvme_client_reset();
    g_clear_pointer(&s->mig_buf, g_byte_array_unref);
    if (reason == VFU_RESET_LOST_CLIENT && s->ctrl_ready) {
        nvme_poller_set_client(&s->poller, false);
    }
    if (s->ctrl_ready) {
        nvme_ctrl_reset(&s->ctrl);
    }
    if (reason == VFU_RESET_LOST_CLIENT && s->bar0 && !s->stopping &&
        !nvme_bar0_setup(s, &err)) {
        /* Keep serving with the old memfd: still correct, less isolated. */
        warn_report_err(err);
    }
}

/*
 * The dispatch thread waits for the controller lock, which the poller may
 * hold while it waits for the client to answer a DMA_READ/WRITE: deliver
 * that answer meanwhile (only this thread reads the socket).
 */
static void nvme_vfu_lock_wait(void *opaque)
{
    NvmeServer *s = opaque;

    vfu_serve_replies(s->ctx, 0);
}

static void nvme_vfu_dma_unmap(VfuCtx *ctx, void *opaque, uint64_t iova,
                               uint64_t size)
{
    NvmeServer *s = opaque;

    /* libaio may be writing into that memory: let it finish first. */
    if (s->ctrl_ready) {
        nvme_ctrl_drain(&s->ctrl);
    }
}

static void nvme_vfu_attach(VfuCtx *ctx, void *opaque)
{
    NvmeServer *s = opaque;

    nvme_poller_set_client(&s->poller, true);
}

static const VfuDeviceOps nvme_vfu_ops = {
    .reset = nvme_vfu_reset,
    .attach = nvme_vfu_attach,
    .dma_unmap = nvme_vfu_dma_unmap,
};

/*
 * (Re)creates BAR0's memfd and registers the region.  Each client gets a
 * fresh memfd, so a previous client that kept its mapping cannot reach the
 * next one's doorbells.
 */
static bool nvme_bar0_setup(NvmeServer *s, Error **errp)
{
    NvmeBarLayout *l = &s->layout;
    VfuSparseArea areas[NVME_MAX_SPARSE_AREAS];
    VfuRegionInfo bar0 = {
        .size = l->bar0_size,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1,
        .bar_flags = PCI_BASE_ADDRESS_MEM_TYPE_64,
        .msix_mappable = l->msix_bar == 0 && s->opts.msix_mappable,
        .access = nvme_bar0_access,
        .opaque = s,
    };
    uint8_t *old = s->bar0;
    int old_fd = s->bar0_fd;
    int fd;
    uint8_t *mem = nvme_memfd_map("nvme-bar0", l->bar0_size, &fd, errp);

    if (!mem) {
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    if (l->bar0_mmap) {
        for (unsigned i = 0; i < l->nr_areas; i++) {
            areas[i].offset = l->areas[i].offset;
            areas[i].size = l->areas[i].size;
        }
        bar0.fd = fd;
        bar0.sparse = areas;
        bar0.nr_sparse = l->nr_areas;
    }
    if (!vfu_setup_region(s->ctx, VFIO_PCI_BAR0_REGION_INDEX, &bar0, errp)) {
        munmap(mem, l->bar0_size);
        close(fd);
        return false;
    }
    if (s->ctrl_ready) {
        /* NvmeCtrl holds the registers and publishes them into @mem. */
        nvme_ctrl_set_bar(&s->ctrl, mem);
    }
    s->bar0 = mem;
    s->bar0_fd = fd;
    if (old) {
        munmap(old, l->bar0_size);
    }
    if (old_fd >= 0) {
        close(old_fd);
    }
    return true;
}

static bool nvme_server_setup(NvmeServer *s, Error **errp)
{
    NvmeBarLayout *l = &s->layout;
    VfuPciIds ids = {
        .vendor_id = NVME_PCI_VENDOR,
        .device_id = NVME_PCI_DEVICE,
        .subsys_vendor_id = NVME_PCI_VENDOR,
        .subsys_id = NVME_PCI_DEVICE,
        .class_code = NVME_PCI_CLASS,
        .revision = 2,
    };
    NvmeCtrlConfig cfg;

    s->backend = nvme_backend_new(&s->opts, errp);
    if (!s->backend) {
        return false;
    }
    s->ctx = vfu_create_ctx(s->opts.socket_path, &nvme_vfu_ops, s, NULL,
                            errp);
    if (!s->ctx || !vfu_pci_init(s->ctx, &ids, errp)) {
        return false;
    }
    vfu_pci_config(s->ctx)[PCI_INTERRUPT_PIN] = 1;
    if (!s->opts.no_migration &&
        !vfu_setup_migration(s->ctx, &nvme_mig_ops, VFIO_MIGRATION_STOP_COPY,
                             errp)) {
        return false;
    }

    if (!nvme_bar0_setup(s, errp)) {
        return false;
    }
    if (l->msix_bar != 0) {
        VfuRegionInfo msix = {
            .size = l->msix_bar_size,
            .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
            .fd = -1,
            .msix_mappable = s->opts.msix_mappable,
            .access = nvme_msix_bar_access,
            .opaque = s,
        };

        s->msix_mem = nvme_memfd_map("nvme-msix", l->msix_bar_size,
                                     &s->msix_fd, errp);
        if (!s->msix_mem) {
            return false;
        }
        /* Without MSIX_MAPPABLE a client must not map the table: trap all. */
        if (s->opts.mmap && s->opts.msix_mappable) {
            msix.fd = s->msix_fd;
        }
        if (!vfu_setup_region(s->ctx, VFIO_PCI_BAR0_REGION_INDEX + l->msix_bar,
                              &msix, errp)) {
            return false;
        }
    }
    s->msix_cap = vfu_pci_add_msix_cap(s->ctx, l->nvectors, l->msix_bar,
                                       l->table_offset, l->msix_bar,
                                       l->pba_offset, errp);
    if (!s->msix_cap ||
        !vfu_setup_irq(s->ctx, VFIO_PCI_INTX_IRQ_INDEX, 1, errp) ||
        !vfu_setup_irq(s->ctx, VFIO_PCI_ERR_IRQ_INDEX, 1, errp)) {
        return false;
    }

    cfg = (NvmeCtrlConfig) {
        .backend = s->backend,
        .bar = s->bar0,
        .bar_size = l->bar0_size,
        .max_ioqs = l->max_ioqs,
        .nvectors = l->nvectors,
        .sq_depth = s->opts.backend == NVME_BACKEND_FILE ?
                    s->opts.aio_depth : 0,
        .lba_size = s->opts.lba_size,
        .serial = s->opts.serial,
        .dma = { .ops = &nvme_vfu_dma_ops, .opaque = s },
        .irq_notify = nvme_irq_notify,
        .irq_opaque = s,
        .kick = nvme_poller_kick,
        .kick_opaque = &s->poller,
        .lock_wait = nvme_vfu_lock_wait,
        .lock_wait_opaque = s,
    };
    if (!nvme_ctrl_init(&s->ctrl, &cfg, errp)) {
        return false;
    }
    s->ctrl_ready = true;
    return nvme_poller_start(&s->poller, &s->ctrl,
                             l->bar0_mmap,
                             s->opts.poll_max_sleep_us, errp);
}

/* One line per region that got messages, for tests and interop runs. */
static void nvme_print_stats(NvmeServer *s)
{
    for (uint32_t i = 0; i < VFIO_PCI_NUM_REGIONS; i++) {
        uint64_t reads, writes;

        vfu_region_stats(s->ctx, i, &reads, &writes);
        fprintf(stderr, "vfio-user-nvme: stats region %u REGION_READ %"
                PRIu64 " REGION_WRITE %" PRIu64 "\n", i, reads, writes);
    }
}

static void nvme_server_teardown(NvmeServer *s)
{
    s->stopping = true;
    nvme_poller_stop(&s->poller);
    if (s->ctx) {
        vfu_destroy_ctx(s->ctx);
    }
    if (s->ctrl_ready) {
        nvme_ctrl_cleanup(&s->ctrl);
    }
    nvme_backend_free(s->backend);
    if (s->bar0) {
        munmap(s->bar0, s->layout.bar0_size);
    }
    if (s->msix_mem) {
        munmap(s->msix_mem, s->layout.msix_bar_size);
    }
    if (s->bar0_fd >= 0) {
        close(s->bar0_fd);
    }
    if (s->msix_fd >= 0) {
        close(s->msix_fd);
    }
    if (s->opts.socket_path) {
        unlink(s->opts.socket_path);
    }
}

static void nvme_signal_handler(int sig)
{
    if (nvme_signal_ctx) {
        vfu_stop(nvme_signal_ctx);
    }
}

int main(int argc, char **argv)
{
    g_autofree NvmeServer *s = g_new0(NvmeServer, 1);
    struct sigaction sa = { .sa_handler = nvme_signal_handler };
    Error *err = NULL;
    int ret = 0;

    error_set_progname(argv[0]);
    s->bar0_fd = -1;
    s->msix_fd = -1;
    nvme_options_init(&s->opts);
    if (!nvme_options_parse(&s->opts, argc, argv, &err)) {
        error_report_err(err);
        nvme_options_free(&s->opts);
        return 1;
    }
    if (s->opts.help) {
        nvme_options_usage(stdout, argv[0]);
        nvme_options_free(&s->opts);
        return 0;
    }
    if ((s->opts.trace && !trace_opt_parse(s->opts.trace, &err)) ||
        !nvme_layout_compute(&s->opts, sysconf(_SC_PAGESIZE), &s->layout,
                             &err)) {
        error_report_err(err);
        nvme_options_free(&s->opts);
        return 1;
    }

    signal(SIGPIPE, SIG_IGN);
    if (!nvme_server_setup(s, &err)) {
        error_report_err(err);
        nvme_server_teardown(s);
        nvme_options_free(&s->opts);
        return 1;
    }
    nvme_signal_ctx = s->ctx;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    if (!vfu_run(s->ctx, &err)) {
        error_report_err(err);
        ret = 1;
    }
    nvme_signal_ctx = NULL;
    if (s->opts.stats) {
        nvme_print_stats(s);
    }
    nvme_server_teardown(s);
    nvme_options_free(&s->opts);
    return ret;
}
