/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: guest memory access and PRP walking.
 *
 * Everything here reads guest-controlled pointers, so every step is
 * bounds-checked and failures become NVMe status codes, never crashes.
 */
#include "qemu/osdep.h"
#include "nvme.h"
#include "trace.h"

bool nvme_dma_read(const NvmeDma *dma, uint64_t iova, void *buf,
                   uint64_t len)
{
    void *p;

    if (iova + len < iova) {
        return false;
    }
    p = dma->ops->ptr(dma->opaque, iova, len, false);
    if (p) {
        memcpy(buf, p, len);
        return true;
    }
    return dma->ops->rw && dma->ops->rw(dma->opaque, iova, buf, len, false);
}

bool nvme_dma_write(const NvmeDma *dma, uint64_t iova, const void *buf,
                    uint64_t len)
{
    void *p;

    if (iova + len < iova) {
        return false;
    }
    p = dma->ops->ptr(dma->opaque, iova, len, true);
    if (p) {
        memcpy(p, buf, len);
        if (dma->ops->mark_dirty) {
            dma->ops->mark_dirty(dma->opaque, iova, len);
        }
        return true;
    }
    return dma->ops->rw &&
           dma->ops->rw(dma->opaque, iova, (void *)buf, len, true);
}

static bool nvme_sgl_add(NvmeSgl *sgl, uint64_t iova, uint32_t len)
{
    if (sgl->nseg == NVME_MAX_SEGS) {
        return false;
    }
    sgl->seg[sgl->nseg].iova = iova;
    sgl->seg[sgl->nseg].len = len;
    sgl->nseg++;
    sgl->total += len;
    return true;
}

uint16_t nvme_prp_map(const NvmeDma *dma, uint64_t prp1, uint64_t prp2,
                      uint64_t len, uint32_t page_size, NvmeSgl *sgl)
{
    uint64_t page_mask = page_size - 1;
    uint64_t rem, first, list;
    unsigned hops = 0;

    sgl->nseg = 0;
    sgl->total = 0;
    if (len == 0) {
        return NVME_SUCCESS;
    }
    if (len > NVME_MAX_XFER || !is_power_of_2(page_size)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    /* PRP entries are dword aligned (NVMe 1.4, 4.3). */
    if (prp1 & 3) {
        trace_nvme_prp_error("prp1 offset", prp1);
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    first = MIN(len, page_size - (prp1 & page_mask));
    nvme_sgl_add(sgl, prp1, first);
    rem = len - first;
    if (rem == 0) {
        return NVME_SUCCESS;
    }
    if (rem <= page_size) {
        /* PRP2 is the second (and last) data page. */
        if (prp2 & page_mask) {
            trace_nvme_prp_error("prp2 offset", prp2);
            return NVME_INVALID_PRP_OFFSET | NVME_DNR;
        }
        nvme_sgl_add(sgl, prp2, rem);
        return NVME_SUCCESS;
    }

    /* PRP2 points at a list; its last slot may chain to the next list. */
    if (prp2 & 7) {
        trace_nvme_prp_error("prp list offset", prp2);
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    list = prp2;
    while (rem) {
        uint64_t slots_left = (page_size - (list & page_mask)) / 8;
        uint64_t entry;

        if (!nvme_dma_read(dma, list, &entry, sizeof(entry))) {
            trace_nvme_prp_error("prp list unreadable", list);
            return NVME_DATA_TRANSFER_ERROR | NVME_DNR;
        }
        entry = le64toh(entry);
        if (slots_left == 1 && rem > page_size) {
            /* Chain pointer: the next list page. */
            /* A chain that points at its own last slot would never end. */
            if (entry & 7 || ++hops > NVME_MAX_SEGS) {
                trace_nvme_prp_error("prp chain", entry);
                return NVME_INVALID_PRP_OFFSET | NVME_DNR;
            }
            list = entry;
            continue;
        }
        if (entry & page_mask) {
            trace_nvme_prp_error("prp entry offset", entry);
            return NVME_INVALID_PRP_OFFSET | NVME_DNR;
        }
        if (!nvme_sgl_add(sgl, entry, MIN(rem, page_size))) {
            /* Cannot happen while len <= NVME_MAX_XFER; stay defensive. */
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        rem -= MIN(rem, page_size);
        list += 8;
    }
    return NVME_SUCCESS;
}

bool nvme_sgl_to_guest(const NvmeDma *dma, const NvmeSgl *sgl,
                       const void *buf)
{
    const uint8_t *p = buf;

    for (unsigned i = 0; i < sgl->nseg; i++) {
        if (!nvme_dma_write(dma, sgl->seg[i].iova, p, sgl->seg[i].len)) {
            return false;
        }
        p += sgl->seg[i].len;
    }
    return true;
}

bool nvme_sgl_from_guest(const NvmeDma *dma, const NvmeSgl *sgl, void *buf)
{
    uint8_t *p = buf;

    for (unsigned i = 0; i < sgl->nseg; i++) {
        if (!nvme_dma_read(dma, sgl->seg[i].iova, p, sgl->seg[i].len)) {
            return false;
        }
        p += sgl->seg[i].len;
    }
    return true;
}
