/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Region-info capability chains: a bounded walker, parsers for the
 * capabilities Conduit uses, and a builder for well-formed buffers.
 * The rules are stated once, in qemu/vfio-region-info.h.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/vfio-region-info.h"
#include "trace.h"

/* Alignment of every capability (see the header for why 8). */
#define CAP_ALIGN 8

/* A capability body we understand and need complete (header included). */
static size_t cap_min_size(uint16_t id)
{
    switch (id) {
    case VFIO_REGION_INFO_CAP_SPARSE_MMAP:
        return sizeof(struct vfio_region_info_cap_sparse_mmap);
    case VFIO_REGION_INFO_CAP_TYPE:
        return sizeof(struct vfio_region_info_cap_type);
    default:
        return sizeof(struct vfio_info_cap_header);
    }
}

/* Bytes the caller may look at: both argsz and what is really there. */
static bool chain_limit(const struct vfio_region_info *info, size_t len,
                        size_t *limit, Error **errp)
{
    if (len < sizeof(*info)) {
        error_setg(errp, "region info truncated: %zu bytes, need %zu",
                   len, sizeof(*info));
        return false;
    }
    if (info->argsz < sizeof(*info)) {
        error_setg(errp, "region %u info: argsz %u smaller than the header",
                   info->index, info->argsz);
        return false;
    }
    *limit = MIN((size_t)info->argsz, len);
    return true;
}

/*
 * Checks the capability at @off: aligned, after the fixed header, header
 * and known body inside @limit.  Returns the (aligned) header.
 */
static const struct vfio_info_cap_header *
cap_at(const struct vfio_region_info *info, size_t limit, uint64_t off,
       Error **errp)
{
    const struct vfio_info_cap_header *hdr;

    if (off < sizeof(*info)) {
        error_setg(errp, "region %u info: capability offset 0x%" PRIx64
                   " overlaps the info header", info->index, off);
        return NULL;
    }
    if (off % CAP_ALIGN) {
        error_setg(errp, "region %u info: capability offset 0x%" PRIx64
                   " is not %d-byte aligned", info->index, off, CAP_ALIGN);
        return NULL;
    }
    if (off > limit || limit - off < sizeof(*hdr)) {
        error_setg(errp, "region %u info: capability offset 0x%" PRIx64
                   " outside the %zu-byte buffer", info->index, off, limit);
        return NULL;
    }
    hdr = (const void *)((const uint8_t *)info + off);
    if (limit - off < cap_min_size(hdr->id)) {
        error_setg(errp, "region %u info: capability %u at 0x%" PRIx64
                   " truncated", info->index, hdr->id, off);
        return NULL;
    }
    if (hdr->next && hdr->next <= off) {
        /* Offsets only grow, so a chain visits each byte at most once. */
        error_setg(errp, "region %u info: capability at 0x%" PRIx64
                   " links backwards to 0x%x (loop)", info->index, off,
                   hdr->next);
        return NULL;
    }
    if (hdr->next && hdr->next - off < cap_min_size(hdr->id)) {
        error_setg(errp, "region %u info: capability %u at 0x%" PRIx64
                   " overlaps the next one at 0x%x", info->index, hdr->id,
                   off, hdr->next);
        return NULL;
    }
    return hdr;
}

/*
 * Walks the chain; stops at the first capability with @id (if @id is not
 * 0) or at the end.  *@found is NULL at the end of the chain.
 */
static bool chain_walk(const struct vfio_region_info *info, size_t len,
                       int id, const struct vfio_info_cap_header **found,
                       Error **errp)
{
    size_t limit;
    uint64_t off;

    *found = NULL;
    if (!chain_limit(info, len, &limit, errp)) {
        return false;
    }
    if (!(info->flags & VFIO_REGION_INFO_FLAG_CAPS)) {
        return true;
    }
    for (off = info->cap_offset; off; ) {
        const struct vfio_info_cap_header *hdr = cap_at(info, limit, off,
                                                        errp);
        if (!hdr) {
            return false;
        }
        trace_vfio_region_info_cap(info->index, off, hdr->id, hdr->version);
        if (id > 0 && hdr->id == id) {
            *found = hdr;
            return true;
        }
        off = hdr->next;
    }
    return true;
}

bool vfio_region_info_check(const struct vfio_region_info *info, size_t len,
                            Error **errp)
{
    VFIORegionCaps caps;

    if (!vfio_region_info_parse_caps(info, len, &caps, errp)) {
        return false;
    }
    vfio_region_caps_clear(&caps);
    return true;
}

bool vfio_region_info_find_cap(const struct vfio_region_info *info,
                               size_t len, uint16_t id,
                               const struct vfio_info_cap_header **cap,
                               Error **errp)
{
    const struct vfio_info_cap_header *hdr;

    if (!chain_walk(info, len, id ? id : -1, &hdr, errp)) {
        return false;
    }
    *cap = hdr;
    return true;
}

bool vfio_region_info_get_sparse(const struct vfio_region_info *info,
                                 size_t len, bool *found,
                                 VFIOSparseArea **areas, uint32_t *nr_areas,
                                 Error **errp)
{
    const struct vfio_info_cap_header *hdr;
    struct vfio_region_info_cap_sparse_mmap sparse;
    const uint8_t *first;
    uint64_t off, end, room;
    VFIOSparseArea *out;
    uint32_t i;

    if (!vfio_region_info_find_cap(info, len, VFIO_REGION_INFO_CAP_SPARSE_MMAP,
                                   &hdr, errp)) {
        return false;
    }
    if (!hdr) {
        *found = false;
        *areas = NULL;
        *nr_areas = 0;
        return true;
    }
    memcpy(&sparse, hdr, sizeof(sparse));
    off = (const uint8_t *)hdr - (const uint8_t *)info;
    /* Room for areas: up to the next capability, or to the end. */
    end = MIN((size_t)info->argsz, len);
    if (sparse.header.next) {
        end = MIN(end, (uint64_t)sparse.header.next);
    }
    room = end - off - sizeof(sparse);
    if (sparse.nr_areas > room / sizeof(struct vfio_region_sparse_mmap_area)) {
        error_setg(errp, "region %u info: sparse mmap capability claims %u"
                   " areas but has room for %" PRIu64, info->index,
                   sparse.nr_areas,
                   room / sizeof(struct vfio_region_sparse_mmap_area));
        return false;
    }
    out = sparse.nr_areas ? g_new(VFIOSparseArea, sparse.nr_areas) : NULL;
    first = (const uint8_t *)hdr + sizeof(sparse);
    for (i = 0; i < sparse.nr_areas; i++) {
        struct vfio_region_sparse_mmap_area a;

        memcpy(&a, first + i * sizeof(a), sizeof(a));
        if (a.offset > info->size || a.size > info->size - a.offset) {
            error_setg(errp, "region %u info: sparse area %u [0x%" PRIx64
                       " + 0x%" PRIx64 "] outside the 0x%" PRIx64
                       "-byte region", info->index, i,
                       (uint64_t)a.offset, (uint64_t)a.size,
                       (uint64_t)info->size);
            g_free(out);
            return false;
        }
        out[i].offset = a.offset;
        out[i].size = a.size;
    }
    *found = true;
    *areas = out;
    *nr_areas = sparse.nr_areas;
    return true;
}

bool vfio_region_info_get_type(const struct vfio_region_info *info,
                               size_t len, bool *found, uint32_t *type,
                               uint32_t *subtype, Error **errp)
{
    const struct vfio_info_cap_header *hdr;
    struct vfio_region_info_cap_type cap;

    if (!vfio_region_info_find_cap(info, len, VFIO_REGION_INFO_CAP_TYPE,
                                   &hdr, errp)) {
        return false;
    }
    *found = hdr != NULL;
    if (hdr) {
        memcpy(&cap, hdr, sizeof(cap));
        *type = cap.type;
        *subtype = cap.subtype;
    }
    return true;
}

bool vfio_region_info_has_msix_mappable(const struct vfio_region_info *info,
                                        size_t len, bool *found,
                                        Error **errp)
{
    const struct vfio_info_cap_header *hdr;

    if (!vfio_region_info_find_cap(info, len,
                                   VFIO_REGION_INFO_CAP_MSIX_MAPPABLE,
                                   &hdr, errp)) {
        return false;
    }
    *found = hdr != NULL;
    return true;
}

bool vfio_region_info_parse_caps(const struct vfio_region_info *info,
                                 size_t len, VFIORegionCaps *caps,
                                 Error **errp)
{
    const struct vfio_info_cap_header *end;
    VFIORegionCaps c = { 0 };

    memset(caps, 0, sizeof(*caps));
    /* The whole chain first, so a bad tail is not hidden by early finds. */
    if (!chain_walk(info, len, 0, &end, errp) ||
        !vfio_region_info_get_sparse(info, len, &c.has_sparse,
                                     &c.sparse_areas, &c.nr_sparse_areas,
                                     errp) ||
        !vfio_region_info_get_type(info, len, &c.has_type, &c.type,
                                   &c.subtype, errp) ||
        !vfio_region_info_has_msix_mappable(info, len, &c.msix_mappable,
                                            errp)) {
        vfio_region_caps_clear(&c);
        return false;
    }
    *caps = c;
    return true;
}

void vfio_region_caps_clear(VFIORegionCaps *caps)
{
    g_free(caps->sparse_areas);
    memset(caps, 0, sizeof(*caps));
}

/* Builder */

struct VFIORegionInfoBuilder {
    GByteArray *buf;
    size_t last_cap;            /* offset of the last header, 0 if none */
};

VFIORegionInfoBuilder *vfio_region_info_builder_new(uint32_t index,
                                                    uint32_t flags,
                                                    uint64_t size,
                                                    uint64_t offset)
{
    VFIORegionInfoBuilder *b = g_new0(VFIORegionInfoBuilder, 1);
    struct vfio_region_info info = {
        .argsz = sizeof(info),
        .flags = flags,
        .index = index,
        .size = size,
        .offset = offset,
    };

    b->buf = g_byte_array_new();
    g_byte_array_append(b->buf, (const guint8 *)&info, sizeof(info));
    return b;
}

void vfio_region_info_builder_add_raw(VFIORegionInfoBuilder *b, uint16_t id,
                                      uint16_t version, const void *body,
                                      size_t body_len)
{
    struct vfio_info_cap_header hdr = { .id = id, .version = version };
    static const uint8_t zeros[CAP_ALIGN];
    size_t off;

    g_byte_array_append(b->buf, zeros,
                        ROUND_UP(b->buf->len, CAP_ALIGN) - b->buf->len);
    off = b->buf->len;
    if (b->last_cap) {
        struct vfio_info_cap_header *prev =
            (void *)(b->buf->data + b->last_cap);
        prev->next = off;
    } else {
        struct vfio_region_info *info = (void *)b->buf->data;
        info->cap_offset = off;
    }
    g_byte_array_append(b->buf, (const guint8 *)&hdr, sizeof(hdr));
    if (body_len) {
        g_byte_array_append(b->buf, body, body_len);
    }
    b->last_cap = off;
}

void vfio_region_info_builder_add_sparse(VFIORegionInfoBuilder *b,
                                         const VFIOSparseArea *areas,
                                         uint32_t nr_areas)
{
    size_t body_len = sizeof(uint32_t) * 2 +
                      nr_areas * sizeof(struct vfio_region_sparse_mmap_area);
    g_autofree uint8_t *body = g_malloc0(body_len);
    uint32_t i;

    memcpy(body, &nr_areas, sizeof(nr_areas));
    for (i = 0; i < nr_areas; i++) {
        struct vfio_region_sparse_mmap_area a = {
            .offset = areas[i].offset,
            .size = areas[i].size,
        };
        memcpy(body + 8 + i * sizeof(a), &a, sizeof(a));
    }
    vfio_region_info_builder_add_raw(b, VFIO_REGION_INFO_CAP_SPARSE_MMAP, 1,
                                     body, body_len);
}

void vfio_region_info_builder_add_type(VFIORegionInfoBuilder *b,
                                       uint32_t type, uint32_t subtype)
{
    uint32_t body[2] = { type, subtype };

    vfio_region_info_builder_add_raw(b, VFIO_REGION_INFO_CAP_TYPE, 1,
                                     body, sizeof(body));
}

void vfio_region_info_builder_add_msix_mappable(VFIORegionInfoBuilder *b)
{
    vfio_region_info_builder_add_raw(b, VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, 1,
                                     NULL, 0);
}

struct vfio_region_info *vfio_region_info_builder_finish(
    VFIORegionInfoBuilder *b, size_t *len)
{
    struct vfio_region_info *info = (void *)b->buf->data;

    info->argsz = b->buf->len;
    if (b->last_cap) {
        info->flags |= VFIO_REGION_INFO_FLAG_CAPS;
    }
    *len = b->buf->len;
    info = (void *)g_byte_array_free(b->buf, false);
    g_free(b);
    return info;
}

void vfio_region_info_builder_free(VFIORegionInfoBuilder *b)
{
    if (b) {
        g_byte_array_unref(b->buf);
        g_free(b);
    }
}
