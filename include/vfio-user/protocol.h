/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user protocol: wire structures, constants and the shared codecs.
 *
 * Used by both ends: the server library (contrib/vfio-user/libvfu) and the
 * client backend (hw/vfio-user).  Facts follow QEMU's
 * docs/interop/vfio-user.rst; all data is host-endian.  Every message is a
 * 16-byte VFIOUserHdr followed by a command-specific payload; the payload
 * structs below do not include the header.
 *
 * The codecs (util/vfio-user-codec.c) never trust the peer: each validator
 * checks sizes, counts, offsets and fd counts and returns false with an
 * Error (and, where a reply is due, an errno for the error reply) instead of
 * touching anything out of range.
 */
#ifndef VFIO_USER_PROTOCOL_H
#define VFIO_USER_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/vfio.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

#define VFIO_USER_MAJOR 0
#define VFIO_USER_MINOR 1

typedef enum VFIOUserCommand {
    VFIO_USER_VERSION                   = 1,
    VFIO_USER_DMA_MAP                   = 2,
    VFIO_USER_DMA_UNMAP                 = 3,
    VFIO_USER_DEVICE_GET_INFO           = 4,
    VFIO_USER_DEVICE_GET_REGION_INFO    = 5,
    VFIO_USER_DEVICE_GET_REGION_IO_FDS  = 6,
    VFIO_USER_DEVICE_GET_IRQ_INFO       = 7,
    VFIO_USER_DEVICE_SET_IRQS           = 8,
    VFIO_USER_REGION_READ               = 9,
    VFIO_USER_REGION_WRITE              = 10,
    VFIO_USER_DMA_READ                  = 11,
    VFIO_USER_DMA_WRITE                 = 12,
    VFIO_USER_DEVICE_RESET              = 13,
    VFIO_USER_REGION_WRITE_MULTI        = 15,
    VFIO_USER_DEVICE_FEATURE            = 16,
    VFIO_USER_MIG_DATA_READ             = 17,
    VFIO_USER_MIG_DATA_WRITE            = 18,
    VFIO_USER_MAX_COMMAND,
} VFIOUserCommand;

/* Header flags. */
#define VFIO_USER_F_TYPE_MASK       0xfu
#define VFIO_USER_F_TYPE_COMMAND    0x0u
#define VFIO_USER_F_TYPE_REPLY      0x1u
#define VFIO_USER_F_NO_REPLY        (1u << 4)
#define VFIO_USER_F_ERROR           (1u << 5)
#define VFIO_USER_F_KNOWN           (VFIO_USER_F_TYPE_MASK | \
                                     VFIO_USER_F_NO_REPLY | VFIO_USER_F_ERROR)

typedef struct VFIOUserHdr {
    uint16_t id;
    uint16_t command;
    uint32_t size;          /* whole message, header included */
    uint32_t flags;
    uint32_t error_reply;   /* errno, valid in replies with F_ERROR */
} VFIOUserHdr;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserHdr) != 16);

/*
 * Capability defaults the spec prescribes when a key is absent, and our
 * own hard ceilings on what a peer may announce.
 */
#define VFIO_USER_DEF_MAX_FDS           1
#define VFIO_USER_DEF_MAX_DATA_XFER     (1024 * 1024)
#define VFIO_USER_DEF_MAX_DMA_MAPS      65535
#define VFIO_USER_DEF_PGSIZES           4096
#define VFIO_USER_LIMIT_MAX_FDS         64
#define VFIO_USER_LIMIT_MAX_DATA_XFER   (64 * 1024 * 1024)
#define VFIO_USER_LIMIT_VERSION_JSON    4096
/*
 * A message may carry at most max_data_xfer_size bytes of data plus this
 * much fixed structure (region/DMA rw headers, irq-set header, ...).
 */
#define VFIO_USER_MSG_OVERHEAD          64

/* VFIO_USER_VERSION payload: version data is NUL-terminated JSON. */
typedef struct VFIOUserVersion {
    uint16_t major;
    uint16_t minor;
    char capabilities[];
} VFIOUserVersion;

typedef struct VFIOUserCaps {
    uint32_t max_msg_fds;
    uint64_t max_data_xfer_size;
    uint64_t max_dma_maps;
    uint64_t pgsizes;
} VFIOUserCaps;

/* VFIO_USER_DMA_MAP */
#define VFIO_USER_DMA_MAP_FLAG_READ     (1u << 0)
#define VFIO_USER_DMA_MAP_FLAG_WRITE    (1u << 1)
typedef struct VFIOUserDMAMap {
    uint32_t argsz;
    uint32_t flags;
    uint64_t offset;        /* into the fd; 0 when no fd is passed */
    uint64_t address;       /* IOVA */
    uint64_t size;
} VFIOUserDMAMap;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDMAMap) != 32);

/* VFIO_USER_DMA_UNMAP; the only flag accepted is VFIO_DMA_UNMAP_FLAG_ALL. */
typedef struct VFIOUserDMAUnmap {
    uint32_t argsz;
    uint32_t flags;
    uint64_t address;
    uint64_t size;
} VFIOUserDMAUnmap;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDMAUnmap) != 24);

/* VFIO_USER_DEVICE_GET_INFO (vfio_device_info without the cap fields) */
typedef struct VFIOUserDeviceInfo {
    uint32_t argsz;
    uint32_t flags;
    uint32_t num_regions;
    uint32_t num_irqs;
} VFIOUserDeviceInfo;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDeviceInfo) != 16);

/*
 * VFIO_USER_DEVICE_GET_REGION_INFO uses struct vfio_region_info (32 bytes)
 * followed by a capability chain, built and checked as the kernel's are
 * (qemu/vfio-region-info.h); VFIO_USER_DEVICE_GET_IRQ_INFO uses struct
 * vfio_irq_info; VFIO_USER_DEVICE_SET_IRQS uses struct vfio_irq_set with
 * eventfds (if any) as SCM_RIGHTS.
 */
#define VFIO_USER_REGION_INFO_SIZE  ((uint32_t)sizeof(struct vfio_region_info))
#define VFIO_USER_IRQ_INFO_SIZE     ((uint32_t)sizeof(struct vfio_irq_info))
#define VFIO_USER_IRQ_SET_SIZE      ((uint32_t)sizeof(struct vfio_irq_set))
QEMU_BUILD_BUG_ON(sizeof(struct vfio_region_info) != 32);
QEMU_BUILD_BUG_ON(sizeof(struct vfio_irq_set) != 20);

/* VFIO_USER_REGION_READ / VFIO_USER_REGION_WRITE */
typedef struct VFIOUserRegionRW {
    uint64_t offset;
    uint32_t region;
    uint32_t count;
    uint8_t data[];         /* write request, read reply */
} VFIOUserRegionRW;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserRegionRW) != 16);

/* VFIO_USER_DMA_READ / VFIO_USER_DMA_WRITE (server -> client) */
typedef struct VFIOUserDMARW {
    uint64_t address;
    uint64_t count;
    uint8_t data[];         /* write request, read reply */
} VFIOUserDMARW;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDMARW) != 16);

/* ---- Shared codecs (util/vfio-user-codec.c) ---- */

/* "VERSION", "DMA_MAP", ...; "UNKNOWN" for anything else. */
const char *vfio_user_command_name(uint16_t command);

void vfio_user_hdr_init(VFIOUserHdr *hdr, uint16_t id, uint16_t command,
                        uint32_t size, uint32_t flags);

/*
 * Validates a received header: size covers the header, payload is at most
 * max_payload bytes, type is command or reply, no unknown flag bits.
 */
bool vfio_user_hdr_validate(const VFIOUserHdr *hdr, size_t max_payload,
                            Error **errp);

/* Largest payload a peer that negotiated max_data_xfer_size may send. */
static inline size_t vfio_user_max_payload(uint64_t max_data_xfer_size)
{
    return max_data_xfer_size + VFIO_USER_MSG_OVERHEAD;
}

/* Fills caps with the spec's defaults (what an absent key means). */
void vfio_user_caps_init_default(VFIOUserCaps *caps);

/*
 * Builds a VERSION payload (major, minor, JSON + NUL); *len gets its size.
 * Free with g_free.
 */
void *vfio_user_version_build(uint16_t major, uint16_t minor,
                              const VFIOUserCaps *caps, size_t *len);

/* The JSON text {"capabilities":{...}} for caps; free with g_free. */
char *vfio_user_caps_to_json(const VFIOUserCaps *caps);

/*
 * Parses a VERSION payload.  Absent version data or absent keys yield the
 * defaults; wrong types, zero/oversized values, missing NUL or bad JSON
 * fail.  Unknown keys are ignored, as the spec allows.
 */
bool vfio_user_version_parse(const void *payload, size_t len,
                             uint16_t *major, uint16_t *minor,
                             VFIOUserCaps *caps, Error **errp);

/*
 * The DMA page sizes both sides can work with.  Each side names the page
 * sizes it maps in (the client: its host page size, 4 KiB on x86, 64 KiB
 * on POWER); one that maps in pages of P also handles any map aligned to
 * a multiple of P.  So the maps must be aligned to the larger of the two
 * smallest sizes, the granule, which the result's lowest bit names; the
 * result also keeps the larger sizes both sides name.  0 when either side
 * names none.
 */
uint64_t vfio_user_pgsizes_negotiate(uint64_t ours, uint64_t peer);

/*
 * What both sides may rely on: the minimum of each limit, the page sizes
 * of vfio_user_pgsizes_negotiate().  Fails when a side names no page size.
 */
bool vfio_user_caps_negotiate(const VFIOUserCaps *ours,
                              const VFIOUserCaps *peer,
                              VFIOUserCaps *out, Error **errp);

/*
 * Validators for client requests.  On failure *err_no (if non-NULL) gets
 * the errno for the error reply.  nfds is the number of fds that arrived
 * with the message.
 */
bool vfio_user_dma_map_decode(const void *payload, size_t len, size_t nfds,
                              VFIOUserDMAMap *out, int *err_no, Error **errp);
bool vfio_user_dma_unmap_decode(const void *payload, size_t len, size_t nfds,
                                VFIOUserDMAUnmap *out, int *err_no,
                                Error **errp);
/* True when [a, a+asize) and [b, b+bsize) share a byte (sizes > 0). */
bool vfio_user_ranges_overlap(uint64_t a, uint64_t asize,
                              uint64_t b, uint64_t bsize);

/*
 * REGION_READ/WRITE request: fixed part present, count <= max_xfer, and
 * the payload length exact (16 for reads, 16 + count for writes).  No fds.
 */
bool vfio_user_region_rw_decode(const void *payload, size_t len,
                                bool is_write, uint64_t max_xfer,
                                size_t nfds, const VFIOUserRegionRW **out,
                                int *err_no, Error **errp);
/*
 * REGION_READ/WRITE reply: matches the request's region/offset/count; a
 * read reply carries exactly count bytes.
 */
bool vfio_user_region_rw_reply_check(const void *payload, size_t len,
                                     bool is_write, uint32_t region,
                                     uint64_t offset, uint32_t count,
                                     Error **errp);
/* DMA_READ/WRITE request (client side decoding), same rules. */
bool vfio_user_dma_rw_decode(const void *payload, size_t len, bool is_write,
                             uint64_t max_xfer, size_t nfds,
                             const VFIOUserDMARW **out, int *err_no,
                             Error **errp);
/* DMA_READ/WRITE reply (server side), same rules as the region reply. */
bool vfio_user_dma_rw_reply_check(const void *payload, size_t len,
                                  bool is_write, uint64_t address,
                                  uint64_t count, Error **errp);

/*
 * SET_IRQS: exactly one DATA and one ACTION flag and nothing else; argsz
 * consistent with len; start+count within index_count (count == 0 only for
 * DATA_NONE|TRIGGER with start 0, "disable all"); DATA_BOOL carries count
 * bytes; DATA_EVENTFD carries count fds or none (de-assign); other forms
 * carry no fds.
 */
bool vfio_user_irq_set_decode(const void *payload, size_t len, size_t nfds,
                              uint32_t index_count,
                              const struct vfio_irq_set **out, int *err_no,
                              Error **errp);

#endif
