/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: NVM command set (Read, Write, Flush, Write Zeroes).
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "nvme.h"
#include "trace.h"

static void nvme_io_finish(NvmeCtrl *n, NvmeRequest *req)
{
    if (req->status == NVME_SUCCESS && req->bounce &&
        req->be_op == NVME_BE_READ &&
        !nvme_sgl_to_guest(&n->dma, &req->sgl, req->bounce)) {
        req->status = NVME_DATA_TRANSFER_ERROR | NVME_DNR;
    }
    if (req->status == NVME_SUCCESS && !req->bounce &&
        req->be_op == NVME_BE_READ && n->dma.ops->mark_dirty) {
        /* The backend read straight into guest memory. */
        for (unsigned i = 0; i < req->sgl.nseg; i++) {
            n->dma.ops->mark_dirty(n->dma.opaque, req->sgl.seg[i].iova,
                                   req->sgl.seg[i].len);
        }
    }
    if (req->status == NVME_SUCCESS) {
        if (req->be_op == NVME_BE_READ) {
            n->host_reads++;
            n->units_read += req->be_len / 512;
        } else if (req->be_op == NVME_BE_WRITE) {
            n->host_writes++;
            n->units_written += req->be_len / 512;
        }
    }
    nvme_req_complete(n, req);
}

void nvme_io_backend_done(NvmeRequest *req, void *opaque)
{
    nvme_io_finish(opaque, req);
}

/*
 * Points req->iov at guest memory when every segment is mapped and
 * suitably aligned for the backend; otherwise at a bounce buffer.
 */
static uint16_t nvme_io_map_data(NvmeCtrl *n, NvmeRequest *req)
{
    unsigned align = nvme_backend_alignment(n->backend);
    bool direct = true;

    req->niov = 0;
    for (unsigned i = 0; i < req->sgl.nseg; i++) {
        NvmeSeg *seg = &req->sgl.seg[i];
        void *p = n->dma.ops->ptr(n->dma.opaque, seg->iova, seg->len,
                                  req->be_op == NVME_BE_READ);

        if (!p || ((uintptr_t)p | seg->len) & (align - 1)) {
            direct = false;
            break;
        }
        req->iov[i].iov_base = p;
        req->iov[i].iov_len = seg->len;
    }
    if (direct) {
        req->niov = req->sgl.nseg;
        return NVME_SUCCESS;
    }
    /* Bounded by NVME_MAX_XFER, so not a guest-sized allocation. */
    req->bounce = g_aligned_alloc(1, req->be_len, MAX(align, 4096));
    if (req->be_op == NVME_BE_WRITE &&
        !nvme_sgl_from_guest(&n->dma, &req->sgl, req->bounce)) {
        return NVME_DATA_TRANSFER_ERROR | NVME_DNR;
    }
    req->iov[0].iov_base = req->bounce;
    req->iov[0].iov_len = req->be_len;
    req->niov = 1;
    return NVME_SUCCESS;
}

static uint16_t nvme_io_lba_range(NvmeCtrl *n, NvmeRequest *req)
{
    uint64_t slba = le32toh(req->cmd.cdw10) |
                    ((uint64_t)le32toh(req->cmd.cdw11) << 32);
    uint32_t nlb = (le32toh(req->cmd.cdw12) & 0xffff) + 1;

    if (slba >= n->nlbas || nlb > n->nlbas - slba) {
        trace_nvme_lba_range(slba, nlb, n->nlbas);
        return NVME_LBA_RANGE | NVME_DNR;
    }
    req->be_offset = slba << n->lba_shift;
    req->be_len = (uint64_t)nlb << n->lba_shift;
    return NVME_SUCCESS;
}

static uint16_t nvme_io_prepare(NvmeCtrl *n, NvmeRequest *req)
{
    uint32_t nsid = le32toh(req->cmd.nsid);
    uint16_t st;

    if (req->cmd.flags & 0xc0) {
        return NVME_INVALID_FIELD | NVME_DNR;   /* SGLs not supported */
    }
    switch (req->cmd.opcode) {
    case NVME_CMD_FLUSH:
        if (nsid != 1 && nsid != 0xffffffff) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        req->be_op = NVME_BE_FLUSH;
        req->be_offset = 0;
        req->be_len = 0;
        return NVME_SUCCESS;
    case NVME_CMD_WRITE_ZEROES:
        if (nsid != 1) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        req->be_op = NVME_BE_WRITE_ZEROES;
        return nvme_io_lba_range(n, req);
    case NVME_CMD_READ:
    case NVME_CMD_WRITE:
        if (nsid != 1) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        req->be_op = req->cmd.opcode == NVME_CMD_READ ? NVME_BE_READ
                                                      : NVME_BE_WRITE;
        st = nvme_io_lba_range(n, req);
        if (st != NVME_SUCCESS) {
            return st;
        }
        if (req->be_len > NVME_MAX_XFER) {
            return NVME_INVALID_FIELD | NVME_DNR;   /* above MDTS */
        }
        st = nvme_prp_map(&n->dma, le64toh(req->cmd.prp1),
                          le64toh(req->cmd.prp2), req->be_len, n->page_size,
                          &req->sgl);
        if (st != NVME_SUCCESS) {
            return st;
        }
        return nvme_io_map_data(n, req);
    default:
        qemu_log_guest_error("nvme: unsupported I/O opcode 0x%x",
                             req->cmd.opcode);
        return NVME_INVALID_OPCODE | NVME_DNR;
    }
}

void nvme_io_exec(NvmeCtrl *n, NvmeRequest *req)
{
    req->status = nvme_io_prepare(n, req);
    if (req->status != NVME_SUCCESS) {
        nvme_req_complete(n, req);
        return;
    }
    if (nvme_backend_submit(n->backend, req)) {
        nvme_io_finish(n, req);
    }
}
