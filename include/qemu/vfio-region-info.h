/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Region-info capability chains (struct vfio_region_info + caps): the one
 * definition of a valid chain, for everything that reads or writes one --
 * the kernel backend (hw/vfio/device-kernel.c), the vfio-user client
 * (hw/vfio-user/device.c), the vfio-user server library (libvfu builds
 * its GET_REGION_INFO replies with the builder) and the test clients.
 *
 * A chain read here comes from the kernel or from a vfio-user peer, so it
 * is untrusted: every walker bounds each capability by the smaller of
 * info->argsz and the length actually held, requires offsets to lie after
 * the fixed header, to be 8-byte aligned and to strictly increase along
 * the chain (which rules out loops), and checks that a known capability's
 * body fits before the next one.  A malformed chain yields an Error,
 * never a crash or hang.
 *
 * Why 8-byte alignment, for both sides: the kernel places every
 * capability at an 8-byte aligned offset (vfio_info_add_capability()
 * rounds each to sizeof(u64)), the capabilities hold u64 fields (sparse
 * areas) that a reader may then load in place, and the vfio-user spec
 * reuses the kernel's layout, which libvfio-user follows too.  A
 * 4-byte-aligned chain is therefore malformed from any peer, and our own
 * builder never makes one.
 */
#ifndef QEMU_VFIO_REGION_INFO_H
#define QEMU_VFIO_REGION_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/vfio.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/* One mmappable piece of a region (VFIO_REGION_INFO_CAP_SPARSE_MMAP). */
typedef struct VFIOSparseArea {
    uint64_t offset;
    uint64_t size;
} VFIOSparseArea;

/* What Conduit uses out of a region's capability chain. */
typedef struct VFIORegionCaps {
    bool has_sparse;            /* SPARSE_MMAP present (maybe 0 areas) */
    uint32_t nr_sparse_areas;
    VFIOSparseArea *sparse_areas;   /* g_free'd by vfio_region_caps_clear */
    bool has_type;
    uint32_t type;              /* VFIO_REGION_TYPE_* */
    uint32_t subtype;
    bool msix_mappable;         /* VFIO_REGION_INFO_CAP_MSIX_MAPPABLE */
} VFIORegionCaps;

/*
 * Validates the whole chain (every header reachable and in bounds, no
 * loop, known capabilities complete).  @len is the number of bytes held
 * at @info.  A buffer without VFIO_REGION_INFO_FLAG_CAPS or with
 * cap_offset 0 has an empty chain and is valid.
 */
bool vfio_region_info_check(const struct vfio_region_info *info, size_t len,
                            Error **errp);

/*
 * Finds the first capability with @id.  Returns false (and sets errp) if
 * the chain is malformed up to and including the capability found;
 * otherwise true, with *@cap pointing inside @info, or NULL if absent.
 * The header lies at an 8-byte aligned offset inside @info; read bodies with
 * memcpy or the parsers below.
 */
bool vfio_region_info_find_cap(const struct vfio_region_info *info,
                               size_t len, uint16_t id,
                               const struct vfio_info_cap_header **cap,
                               Error **errp);

/*
 * Copies out the SPARSE_MMAP areas.  *@found tells whether the capability
 * is present; *@areas (g_free) is NULL when there are no areas.  An area
 * whose offset + size wraps or goes beyond info->size is an error.
 */
bool vfio_region_info_get_sparse(const struct vfio_region_info *info,
                                 size_t len, bool *found,
                                 VFIOSparseArea **areas, uint32_t *nr_areas,
                                 Error **errp);
bool vfio_region_info_get_type(const struct vfio_region_info *info,
                               size_t len, bool *found, uint32_t *type,
                               uint32_t *subtype, Error **errp);
bool vfio_region_info_has_msix_mappable(const struct vfio_region_info *info,
                                        size_t len, bool *found,
                                        Error **errp);

/* All of the above in one pass; on failure @caps is left cleared. */
bool vfio_region_info_parse_caps(const struct vfio_region_info *info,
                                 size_t len, VFIORegionCaps *caps,
                                 Error **errp);
void vfio_region_caps_clear(VFIORegionCaps *caps);

/*
 * Builder for well-formed info buffers (the vfio-user server side, unit
 * tests, fuzzer seeds).  Capabilities are appended in call order, 8-byte
 * aligned, and linked; argsz is the final length.
 */
typedef struct VFIORegionInfoBuilder VFIORegionInfoBuilder;

VFIORegionInfoBuilder *vfio_region_info_builder_new(uint32_t index,
                                                    uint32_t flags,
                                                    uint64_t size,
                                                    uint64_t offset);
void vfio_region_info_builder_add_sparse(VFIORegionInfoBuilder *b,
                                         const VFIOSparseArea *areas,
                                         uint32_t nr_areas);
void vfio_region_info_builder_add_type(VFIORegionInfoBuilder *b,
                                       uint32_t type, uint32_t subtype);
void vfio_region_info_builder_add_msix_mappable(VFIORegionInfoBuilder *b);
/* Any capability: a header with @id/@version followed by @body. */
void vfio_region_info_builder_add_raw(VFIORegionInfoBuilder *b, uint16_t id,
                                      uint16_t version, const void *body,
                                      size_t body_len);
/*
 * Frees the builder and returns the buffer (g_free); *@len is its length,
 * equal to info->argsz.  Sets VFIO_REGION_INFO_FLAG_CAPS if a capability
 * was added.
 */
struct vfio_region_info *vfio_region_info_builder_finish(
    VFIORegionInfoBuilder *b, size_t *len);
void vfio_region_info_builder_free(VFIORegionInfoBuilder *b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(VFIORegionInfoBuilder,
                              vfio_region_info_builder_free)

#endif
