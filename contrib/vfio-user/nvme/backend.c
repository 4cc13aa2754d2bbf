/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: storage backends.
 *
 * null: reads return zeroes, writes vanish (the fastest possible device).
 * ram:  a buffer of --size bytes.
 * file: a file or block device driven with libaio, O_DIRECT when the file
 *       system takes it.  Flush is an aio fdsync where the kernel supports
 *       it and fdatasync() otherwise, so data is durable once Flush
 *       completes.  With the write cache disabled, writes carry RWF_DSYNC.
 */
#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "nvme.h"
#include "trace.h"

#define NVME_AIO_MAX_EVENTS 64

struct NvmeBackend {
    NvmeBackendType type;
    uint64_t size;
    uint8_t *ram;
    /* file */
    int fd;
    bool direct;
    bool write_cache;
    bool fdsync_unsupported;
    unsigned align;
    io_context_t ctx;
    bool sync_io;           /* no Linux AIO here: preadv/pwritev inline */
    int efd;
    unsigned capacity;
    unsigned inflight;
    NvmeBackendDone *done;
    void *done_opaque;
};

/* Reads 512 bytes at 512 with O_DIRECT: refused if the device wants 4K. */
static bool nvme_file_direct_512_ok(int fd)
{
    void *buf = g_aligned_alloc(1, 4096, 4096);
    ssize_t r = pread(fd, buf, 512, 512);

    g_aligned_free(buf);
    return r >= 0 || errno != EINVAL;
}

static bool nvme_file_open(NvmeBackend *be, const NvmeOptions *o,
                           Error **errp)
{
    int flags = O_RDWR | O_CLOEXEC | (o->size ? O_CREAT : 0);
    struct stat st;
    uint64_t size;

    be->fd = open(o->file_path, flags | O_DIRECT, 0600);
    be->direct = be->fd >= 0;
    if (be->fd >= 0 && o->lba_size < 4096 &&
        !nvme_file_direct_512_ok(be->fd)) {
        close(be->fd);
        be->fd = -1;
        be->direct = false;
    }
    if (be->fd < 0) {
        be->fd = open(o->file_path, flags, 0600);
        if (be->fd < 0) {
            error_setg_errno(errp, errno, "--backend file:%s: cannot open",
                             o->file_path);
            return false;
        }
        warn_report("--backend file:%s: O_DIRECT is not available here; "
                    "using the page cache", o->file_path);
    }
    if (fstat(be->fd, &st) < 0) {
        error_setg_errno(errp, errno, "--backend file:%s: cannot stat",
                         o->file_path);
        return false;
    }
    if (S_ISBLK(st.st_mode)) {
        if (ioctl(be->fd, BLKGETSIZE64, &size) < 0) {
            error_setg_errno(errp, errno, "--backend file:%s: cannot get "
                             "the device size", o->file_path);
            return false;
        }
    } else {
        size = st.st_size;
        if (o->size > size) {
            if (ftruncate(be->fd, o->size) < 0) {
                error_setg_errno(errp, errno, "--backend file:%s: cannot "
                                 "grow to %" PRIu64 " bytes", o->file_path,
                                 o->size);
                return false;
            }
            size = o->size;
        }
    }
    if (o->size && o->size < size) {
        size = o->size;
    }
    be->size = QEMU_ALIGN_DOWN(size, o->lba_size);
    if (be->size == 0) {
        error_setg(errp, "--backend file:%s: empty; give --size to create "
                   "or grow it", o->file_path);
        return false;
    }
    be->align = be->direct ? o->lba_size : 1;
    return true;
}

static bool nvme_file_aio_init(NvmeBackend *be, const NvmeOptions *o,
                               Error **errp)
{
    int r;

    be->capacity = MIN(o->aio_depth * o->max_ioqs, 4096u);
    r = io_setup(be->capacity, &be->ctx);
    if (r == -ENOSYS) {
        /*
         * A kernel without CONFIG_AIO, a seccomp filter, or qemu-user (the
         * ppc64le test runs): serve each request synchronously instead.
         */
        warn_report("--backend file:%s: Linux AIO is unavailable (io_setup: "
                    "%s); file I/O is synchronous", o->file_path,
                    strerror(-r));
        be->ctx = 0;
        be->sync_io = true;
        r = 0;
    }
    if (r < 0) {
        error_setg_errno(errp, -r, "--backend file:%s: io_setup(%u)",
                         o->file_path, be->capacity);
        return false;
    }
    be->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (be->efd < 0) {
        error_setg_errno(errp, errno, "eventfd");
        return false;
    }
    return true;
}

NvmeBackend *nvme_backend_new(const NvmeOptions *o, Error **errp)
{
    NvmeBackend *be = g_new0(NvmeBackend, 1);

    be->type = o->backend;
    be->fd = -1;
    be->efd = -1;
    be->align = 1;
    switch (o->backend) {
    case NVME_BACKEND_NULL:
        be->size = o->size;
        break;
    case NVME_BACKEND_RAM:
        be->size = o->size;
        be->ram = g_try_malloc0(o->size);
        if (!be->ram) {
            error_setg(errp, "--size %" PRIu64 ": cannot allocate the RAM "
                       "backend", o->size);
            goto fail;
        }
        break;
    case NVME_BACKEND_FILE:
        if (!nvme_file_open(be, o, errp) ||
            !nvme_file_aio_init(be, o, errp)) {
            goto fail;
        }
        break;
    }
    be->write_cache = true;
    return be;

fail:
    nvme_backend_free(be);
    return NULL;
}

void nvme_backend_free(NvmeBackend *be)
{
    if (!be) {
        return;
    }
    if (be->ctx) {
        io_destroy(be->ctx);
    }
    if (be->efd >= 0) {
        close(be->efd);
    }
    if (be->fd >= 0) {
        close(be->fd);
    }
    g_free(be->ram);
    g_free(be);
}

uint64_t nvme_backend_size(NvmeBackend *be)
{
    return be->size;
}

uint8_t *nvme_backend_ram(NvmeBackend *be)
{
    return be->type == NVME_BACKEND_RAM ? be->ram : NULL;
}

bool nvme_backend_has_vwc(NvmeBackend *be)
{
    return be->type == NVME_BACKEND_FILE;
}

unsigned nvme_backend_alignment(NvmeBackend *be)
{
    return be->align;
}

void nvme_backend_set_write_cache(NvmeBackend *be, bool enable)
{
    be->write_cache = enable;
}

int nvme_backend_event_fd(NvmeBackend *be)
{
    return be->efd;
}

unsigned nvme_backend_inflight(NvmeBackend *be)
{
    return be->inflight;
}

void nvme_backend_sync(NvmeBackend *be)
{
    if (be->fd >= 0 && fdatasync(be->fd) < 0) {
        warn_report("fdatasync: %s", strerror(errno));
    }
}

static void nvme_iov_memset(NvmeRequest *req)
{
    for (unsigned i = 0; i < req->niov; i++) {
        memset(req->iov[i].iov_base, 0, req->iov[i].iov_len);
    }
}

static void nvme_ram_rw(NvmeBackend *be, NvmeRequest *req)
{
    uint8_t *p = be->ram + req->be_offset;

    for (unsigned i = 0; i < req->niov; i++) {
        if (req->be_op == NVME_BE_READ) {
            memcpy(req->iov[i].iov_base, p, req->iov[i].iov_len);
        } else {
            memcpy(p, req->iov[i].iov_base, req->iov[i].iov_len);
        }
        p += req->iov[i].iov_len;
    }
}

static uint16_t nvme_file_write_zeroes(NvmeBackend *be, uint64_t offset,
                                       uint64_t len)
{
    g_autofree void *zeroes = NULL;
    size_t chunk = 1024 * 1024;

    if (fallocate(be->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                  offset, len) == 0) {
        return NVME_SUCCESS;
    }
    /* No ZERO_RANGE here: write them (aligned for O_DIRECT). */
    zeroes = g_aligned_alloc0(1, chunk, 4096);
    while (len) {
        size_t n = MIN(len, chunk);
        ssize_t r = pwrite(be->fd, zeroes, n, offset);

        if (r <= 0) {
            g_aligned_free(g_steal_pointer(&zeroes));
            return NVME_INTERNAL_ERROR;
        }
        offset += r;
        len -= r;
    }
    g_aligned_free(g_steal_pointer(&zeroes));
    return NVME_SUCCESS;
}

/* Without Linux AIO: the request completes before this returns. */
static void nvme_file_sync_rw(NvmeBackend *be, NvmeRequest *req)
{
    ssize_t r;

    if (req->be_op == NVME_BE_READ) {
        r = preadv(be->fd, req->iov, req->niov, req->be_offset);
    } else {
        r = pwritev2(be->fd, req->iov, req->niov, req->be_offset,
                     be->write_cache ? 0 : RWF_DSYNC);
    }
    if (r != (ssize_t)req->be_len) {
        trace_nvme_aio_error(req->be_op, r < 0 ? -errno : r);
        req->status = NVME_INTERNAL_ERROR;
    }
}

static bool nvme_file_submit(NvmeBackend *be, NvmeRequest *req)
{
    struct iocb *iocbs[1] = { &req->iocb };
    int r;

    if (be->sync_io) {
        switch (req->be_op) {
        case NVME_BE_READ:
        case NVME_BE_WRITE:
            nvme_file_sync_rw(be, req);
            return true;
        case NVME_BE_FLUSH:
            req->status = fdatasync(be->fd) == 0 ? NVME_SUCCESS
                                                 : NVME_INTERNAL_ERROR;
            return true;
        case NVME_BE_WRITE_ZEROES:
            break;
        }
    }

    switch (req->be_op) {
    case NVME_BE_READ:
        io_prep_preadv(&req->iocb, be->fd, req->iov, req->niov,
                       req->be_offset);
        break;
    case NVME_BE_WRITE:
        io_prep_pwritev(&req->iocb, be->fd, req->iov, req->niov,
                        req->be_offset);
        if (!be->write_cache) {
            req->iocb.aio_rw_flags = RWF_DSYNC;
        }
        break;
    case NVME_BE_FLUSH:
        if (be->fdsync_unsupported) {
            req->status = fdatasync(be->fd) == 0 ? NVME_SUCCESS
                                                 : NVME_INTERNAL_ERROR;
            return true;
        }
        io_prep_fdsync(&req->iocb, be->fd);
        break;
    case NVME_BE_WRITE_ZEROES:
        req->status = nvme_file_write_zeroes(be, req->be_offset, req->be_len);
        return true;
    }
    io_set_eventfd(&req->iocb, be->efd);
    req->iocb.data = req;

    /* The context is full: complete something before adding more. */
    while (be->inflight >= be->capacity) {
        nvme_backend_reap(be, true);
    }
    r = io_submit(be->ctx, 1, iocbs);
    if (r == 1) {
        be->inflight++;
        return false;
    }
    if (req->be_op == NVME_BE_FLUSH && r == -EINVAL) {
        /* Kernel or file system without aio fsync: do it synchronously. */
        be->fdsync_unsupported = true;
        req->status = fdatasync(be->fd) == 0 ? NVME_SUCCESS
                                             : NVME_INTERNAL_ERROR;
        return true;
    }
    trace_nvme_aio_submit_error(req->be_op, r);
    req->status = NVME_INTERNAL_ERROR;
    return true;
}

bool nvme_backend_submit(NvmeBackend *be, NvmeRequest *req)
{
    trace_nvme_backend_submit(req->be_op, req->be_offset, req->be_len);
    req->status = NVME_SUCCESS;
    switch (be->type) {
    case NVME_BACKEND_NULL:
        if (req->be_op == NVME_BE_READ) {
            nvme_iov_memset(req);
        }
        return true;
    case NVME_BACKEND_RAM:
        if (req->be_op == NVME_BE_READ || req->be_op == NVME_BE_WRITE) {
            nvme_ram_rw(be, req);
        } else if (req->be_op == NVME_BE_WRITE_ZEROES) {
            memset(be->ram + req->be_offset, 0, req->be_len);
        }
        return true;
    case NVME_BACKEND_FILE:
        return nvme_file_submit(be, req);
    }
    return true;
}

void nvme_backend_set_completion(NvmeBackend *be, NvmeBackendDone *done,
                                 void *opaque)
{
    be->done = done;
    be->done_opaque = opaque;
}

unsigned nvme_backend_reap(NvmeBackend *be, bool wait)
{
    struct io_event ev[NVME_AIO_MAX_EVENTS];
    struct timespec zero = { 0, 0 };
    uint64_t count;
    int r;

    if (be->type != NVME_BACKEND_FILE || be->inflight == 0) {
        return 0;
    }
    if (read(be->efd, &count, sizeof(count)) < 0 && errno != EAGAIN) {
        warn_report("aio eventfd: %s", strerror(errno));
    }
    r = io_getevents(be->ctx, wait ? 1 : 0, NVME_AIO_MAX_EVENTS, ev,
                     wait ? NULL : &zero);
    if (r < 0) {
        return 0;
    }
    for (int i = 0; i < r; i++) {
        NvmeRequest *req = ev[i].data;
        long res = (long)ev[i].res;

        be->inflight--;
        if (req->be_op == NVME_BE_FLUSH) {
            req->status = res == 0 ? NVME_SUCCESS : NVME_INTERNAL_ERROR;
        } else {
            req->status = res == (long)req->be_len ? NVME_SUCCESS
                                                   : NVME_INTERNAL_ERROR;
        }
        if (req->status != NVME_SUCCESS) {
            trace_nvme_aio_error(req->be_op, res);
        }
        be->done(req, be->done_opaque);
    }
    /* More may be queued than one batch returned: look again soon. */
    if (r == NVME_AIO_MAX_EVENTS) {
        count = 1;
        if (write(be->efd, &count, sizeof(count)) < 0) {
            /* The poller still runs its next pass; nothing is lost. */
        }
    }
    return r;
}
