/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qcow2 metadata, the pure part (private to block/): the header and its
 * extensions parsed and validated from hostile bytes, L1/L2 entry
 * decoding, refcount block entries of every width the format allows, and
 * the geometry that follows from the header.  Nothing here does I/O; the
 * driver (qcow2.c), the unit tests and the fuzz target share it.
 *
 * Format facts are from the qcow2 specification (QEMU's
 * docs/interop/qcow2.txt); all numbers on disk are big-endian.
 */
#ifndef BLOCK_QCOW2_H
#define BLOCK_QCOW2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define QCOW2_MAGIC 0x514649fbu             /* "QFI\xfb" */
#define QCOW2_V2_HEADER_LEN 72
#define QCOW2_V3_HEADER_LEN 104
#define QCOW2_MIN_CLUSTER_BITS 9
#define QCOW2_MAX_CLUSTER_BITS 21           /* 2 MiB */
#define QCOW2_MAX_BACKING_NAME 1023
#define QCOW2_MAX_L1_BYTES (32u << 20)
#define QCOW2_MAX_REFTABLE_BYTES (8u << 20)
#define QCOW2_MAX_EXT_STRING 1023

/* incompatible_features */
#define QCOW2_INCOMPAT_DIRTY        (1ull << 0)
#define QCOW2_INCOMPAT_CORRUPT      (1ull << 1)
#define QCOW2_INCOMPAT_DATA_FILE    (1ull << 2)
#define QCOW2_INCOMPAT_COMPRESSION  (1ull << 3)
#define QCOW2_INCOMPAT_EXTL2        (1ull << 4)
/* compatible_features */
#define QCOW2_COMPAT_LAZY_REFCOUNTS (1ull << 0)
/* autoclear_features */
#define QCOW2_AUTOCLEAR_BITMAPS     (1ull << 0)

/* Header extension types. */
#define QCOW2_EXT_END               0x00000000u
#define QCOW2_EXT_BACKING_FORMAT    0xe2792acau
#define QCOW2_EXT_FEATURE_TABLE     0x6803f857u
#define QCOW2_EXT_BITMAPS           0x23852875u
#define QCOW2_EXT_CRYPTO            0x0537be77u
#define QCOW2_EXT_DATA_FILE         0x44415441u

/* L1 / L2 entry bits */
#define QCOW2_OFLAG_COPIED          (1ull << 63)
#define QCOW2_OFLAG_COMPRESSED      (1ull << 62)
#define QCOW2_OFLAG_ZERO            (1ull << 0)
#define QCOW2_OFFSET_MASK           0x00fffffffffffe00ull   /* bits 9-55 */
#define QCOW2_L1E_RESERVED          0x7f000000000001ffull
#define QCOW2_L2E_STD_RESERVED      0x3f000000000001feull
#define QCOW2_REFT_RESERVED         0x00000000000001ffull

typedef struct Qcow2Header {
    uint32_t version;
    uint64_t backing_file_offset;
    uint32_t backing_file_size;
    uint32_t cluster_bits;
    uint64_t size;
    uint32_t crypt_method;
    uint32_t l1_size;
    uint64_t l1_table_offset;
    uint64_t refcount_table_offset;
    uint32_t refcount_table_clusters;
    uint32_t nb_snapshots;
    uint64_t snapshots_offset;
    uint64_t incompatible_features;
    uint64_t compatible_features;
    uint64_t autoclear_features;
    uint32_t refcount_order;
    uint32_t header_length;
    uint8_t compression_type;
} Qcow2Header;

/* What the header and its extensions say, validated. */
typedef struct Qcow2Meta {
    Qcow2Header h;
    uint64_t cluster_size;
    uint64_t l2_entries;            /* entries per L2 table */
    uint64_t rb_entries;            /* entries per refcount block */
    uint64_t reftable_entries;
    char backing_file[QCOW2_MAX_BACKING_NAME + 1];   /* "" when none */
    char backing_format[QCOW2_MAX_EXT_STRING + 1];   /* "" when none */
    uint64_t ext_end;               /* first byte after the extensions */
    /* Unknown incompatible bits, named from the feature table if any. */
    uint64_t unknown_incompat;
    char unknown_incompat_name[64];
    bool has_bitmaps_ext;
} Qcow2Meta;

/*
 * Parses and validates the first cluster of an image (@len bytes; at
 * least the header, at most one cluster are looked at).  @file_size
 * bounds offsets (0: not checked).  Every field an implementation relies
 * on is checked; features Conduit does not implement are refused with a
 * message naming them.  Read-only callers may accept the dirty and corrupt
 * bits (the caller decides; the meta records them).
 */
bool qcow2_parse_header(const uint8_t *buf, size_t len, uint64_t file_size,
                        Qcow2Meta *m, Error **errp);

/* Serialises the header fields (not the extensions) into buf. */
void qcow2_build_header(const Qcow2Header *h, uint8_t *buf);

/* Geometry. */
static inline uint64_t qcow2_l1_index(const Qcow2Meta *m, uint64_t off)
{
    return (off >> m->h.cluster_bits) / m->l2_entries;
}

static inline uint64_t qcow2_l2_index(const Qcow2Meta *m, uint64_t off)
{
    return (off >> m->h.cluster_bits) % m->l2_entries;
}

/* L1 entries needed for a virtual size. */
uint64_t qcow2_l1_entries_for(uint32_t cluster_bits, uint64_t size);

/* Decoded L2 entry. */
typedef enum Qcow2ClusterType {
    QCOW2_CLUSTER_UNALLOCATED,  /* reads from the backing file, or zeroes */
    QCOW2_CLUSTER_ZERO_PLAIN,   /* reads as zeroes, no host cluster */
    QCOW2_CLUSTER_ZERO_ALLOC,   /* reads as zeroes, host cluster reserved */
    QCOW2_CLUSTER_NORMAL,
    QCOW2_CLUSTER_COMPRESSED,
    QCOW2_CLUSTER_INVALID,      /* reserved bits, misaligned offset */
} Qcow2ClusterType;

typedef struct Qcow2Cluster {
    Qcow2ClusterType type;
    uint64_t host_offset;       /* NORMAL, ZERO_ALLOC: cluster; COMPRESSED: byte */
    uint64_t compressed_len;    /* COMPRESSED: bytes to read */
    bool copied;                /* refcount is exactly one */
} Qcow2Cluster;

Qcow2Cluster qcow2_decode_l2(const Qcow2Meta *m, uint64_t entry);
/* The host clusters a compressed cluster's bytes touch: first and count. */
void qcow2_compressed_span(const Qcow2Meta *m, const Qcow2Cluster *c,
                           uint64_t *first, uint64_t *count);
/* An L2 entry for a compressed cluster (for tests and the fuzz seeds). */
uint64_t qcow2_encode_compressed(const Qcow2Meta *m, uint64_t host_offset,
                                 uint64_t len);

/* Refcount block entries of width 1 << refcount_order bits. */
uint64_t qcow2_refblock_get(const uint8_t *block, uint32_t order,
                            uint64_t index);
void qcow2_refblock_set(uint8_t *block, uint32_t order, uint64_t index,
                        uint64_t value);
static inline uint64_t qcow2_refcount_max(uint32_t order)
{
    return order >= 6 ? UINT64_MAX : (1ull << (1u << order)) - 1;
}

static inline uint64_t qcow2_be64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

static inline uint32_t qcow2_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | p[3];
}

static inline void qcow2_put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = v & 0xff;
        v >>= 8;
    }
}

static inline void qcow2_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

#endif
