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

/* ---- Device features and migration (VFIO_USER_DEVICE_FEATURE) ---- */

/*
 * The request and reply are struct vfio_device_feature: argsz (the
 * largest reply payload the client takes), flags (feature index in the
 * low 16 bits, GET / SET / PROBE) and the feature's data.  What the
 * kernel uAPI passes by pointer (DMA-logging ranges, the dirty bitmap)
 * travels inline; migration data travels in MIG_DATA_READ / WRITE
 * instead of a data fd.  Bookworm's <linux/vfio.h> predates some of
 * these, so they are spelled here.
 */
typedef struct VFIOUserDeviceFeature {
    uint32_t argsz;
    uint32_t flags;
    uint8_t data[];
} VFIOUserDeviceFeature;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDeviceFeature) != 8);

#ifndef VFIO_MIGRATION_PRE_COPY
#define VFIO_MIGRATION_PRE_COPY                 (1 << 2)
#endif
#define VFIO_USER_FEATURE_MIGRATION             1
#define VFIO_USER_FEATURE_MIG_DEVICE_STATE      2
#define VFIO_USER_FEATURE_DMA_LOGGING_START     6
#define VFIO_USER_FEATURE_DMA_LOGGING_STOP      7
#define VFIO_USER_FEATURE_DMA_LOGGING_REPORT    8
#define VFIO_USER_FEATURE_MIG_DATA_SIZE         9
#define VFIO_USER_FEATURE_FLAGS_KNOWN \
    (VFIO_DEVICE_FEATURE_MASK | VFIO_DEVICE_FEATURE_GET | \
     VFIO_DEVICE_FEATURE_SET | VFIO_DEVICE_FEATURE_PROBE)

/* enum vfio_device_mig_state, PRE_COPY included. */
typedef enum VFIOMigState {
    VFIO_MIG_STATE_ERROR = 0,
    VFIO_MIG_STATE_STOP = 1,
    VFIO_MIG_STATE_RUNNING = 2,
    VFIO_MIG_STATE_STOP_COPY = 3,
    VFIO_MIG_STATE_RESUMING = 4,
    VFIO_MIG_STATE_RUNNING_P2P = 5,
    VFIO_MIG_STATE_PRE_COPY = 6,
    VFIO_MIG_STATE_PRE_COPY_P2P = 7,
    VFIO_MIG_STATE_COUNT,
} VFIOMigState;

/* VFIO_DEVICE_FEATURE_MIGRATION data (GET reply). */
typedef struct VFIOUserFeatureMigration {
    uint64_t flags;             /* VFIO_MIGRATION_STOP_COPY, _PRE_COPY */
} VFIOUserFeatureMigration;

/* VFIO_DEVICE_FEATURE_MIG_DEVICE_STATE data (SET request, GET reply). */
typedef struct VFIOUserFeatureMigState {
    uint32_t device_state;
    int32_t data_fd;            /* -1 in vfio-user */
} VFIOUserFeatureMigState;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserFeatureMigState) != 8);

/* VFIO_DEVICE_FEATURE_MIG_DATA_SIZE data (GET reply). */
typedef struct VFIOUserFeatureMigDataSize {
    uint64_t stop_copy_length;
} VFIOUserFeatureMigDataSize;

/* DMA_LOGGING_START data: this header, then num_ranges ranges. */
typedef struct VFIOUserDmaLoggingControl {
    uint64_t page_size;
    uint32_t num_ranges;
    uint32_t reserved;
} VFIOUserDmaLoggingControl;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDmaLoggingControl) != 16);

typedef struct VFIOUserDmaLoggingRange {
    uint64_t iova;
    uint64_t length;
} VFIOUserDmaLoggingRange;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDmaLoggingRange) != 16);

/* DMA_LOGGING_REPORT data (GET); the reply appends the u64 bitmap. */
typedef struct VFIOUserDmaLoggingReport {
    uint64_t iova;
    uint64_t length;
    uint64_t page_size;
} VFIOUserDmaLoggingReport;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserDmaLoggingReport) != 24);

/* Most ranges a client may ask to log; our own ceiling. */
#define VFIO_USER_LIMIT_LOG_RANGES      1024

/* VFIO_USER_MIG_DATA_READ request (no data) / reply, and WRITE request. */
typedef struct VFIOUserMigData {
    uint32_t argsz;
    uint32_t size;
    uint8_t data[];
} VFIOUserMigData;
QEMU_BUILD_BUG_ON(sizeof(VFIOUserMigData) != 8);

const char *vfio_mig_state_name(uint32_t state);

/*
 * The v2 state machine: the next direct arc on the way from @cur to
 * @target (shortest path, no saving state inside the path), as the
 * kernel and the vfio-user spec define it.  @pre_copy: the device offers
 * PRE_COPY.  VFIO_MIG_STATE_ERROR when @target cannot be reached from
 * @cur (STOP_COPY -> PRE_COPY, unsupported or invalid states).  @cur ==
 * @target returns @target.
 */
VFIOMigState vfio_mig_next_state(uint32_t cur, uint32_t target,
                                 bool pre_copy);

/*
 * DEVICE_FEATURE request (server side): header present, argsz covers
 * the header, only known flag bits, GET and SET not both unless probing,
 * no fds.  *feature, *flags and the data that follows are returned.
 */
bool vfio_user_device_feature_decode(const void *payload, size_t len,
                                     size_t nfds, uint32_t *feature,
                                     uint32_t *flags, const uint8_t **data,
                                     size_t *data_len, int *err_no,
                                     Error **errp);
/*
 * DEVICE_FEATURE reply (client side): echoes the request's flags, its
 * argsz matches its length and it carries exactly @want data bytes.
 */
bool vfio_user_device_feature_reply_check(const void *payload, size_t len,
                                          uint32_t flags, size_t want,
                                          Error **errp);
/*
 * DMA_LOGGING_START data: page_size a power of two (4 KiB .. 1 GiB),
 * num_ranges at most VFIO_USER_LIMIT_LOG_RANGES and exactly present,
 * every range non-empty, page aligned, not wrapping, none overlapping.
 */
bool vfio_user_dma_logging_start_decode(const uint8_t *data, size_t len,
                                        VFIOUserDmaLoggingControl *ctl,
                                        const VFIOUserDmaLoggingRange **ranges,
                                        int *err_no, Error **errp);
/*
 * DMA_LOGGING_REPORT data: page_size a power of two >= 512, length a
 * non-zero multiple of it, no wrap, and the bitmap (one bit per page,
 * in u64 words) at most @max_bitmap bytes.  *bitmap_len gets its size.
 */
bool vfio_user_dma_logging_report_decode(const uint8_t *data, size_t len,
                                         uint64_t max_bitmap,
                                         VFIOUserDmaLoggingReport *rep,
                                         size_t *bitmap_len, int *err_no,
                                         Error **errp);
/* Bytes of the report bitmap for @length at @page_size (u64 words). */
static inline uint64_t vfio_user_dirty_bitmap_size(uint64_t length,
                                                   uint64_t page_size)
{
    uint64_t pages = length / page_size;

    return (pages + 63) / 64 * 8;
}
/*
 * MIG_DATA_READ request (server): exactly 8 bytes, size in 1..max_xfer.
 * MIG_DATA_WRITE request: 8 + size bytes, size in 1..max_xfer.
 */
bool vfio_user_mig_data_decode(const void *payload, size_t len,
                               bool is_write, uint64_t max_xfer,
                               size_t nfds, const VFIOUserMigData **out,
                               int *err_no, Error **errp);
/*
 * MIG_DATA_READ reply (client): size at most @asked, argsz = 8 + size,
 * and the payload at least argsz and at most 8 + @asked bytes (padding
 * after the data, as libvfio-user sends it, is ignored).
 */
bool vfio_user_mig_data_read_reply_check(const void *payload, size_t len,
                                         uint32_t asked, Error **errp);

#endif
