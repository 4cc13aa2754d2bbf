/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qcow2 metadata parsing and encoding (qcow2.h): every byte comes from an
 * image file, which is user input, so every field is range-checked
 * before anything is derived from it.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/qcow2.h"

uint64_t qcow2_l1_entries_for(uint32_t cluster_bits, uint64_t size)
{
    uint64_t per_l1 = 1ull << (cluster_bits + cluster_bits - 3);

    return size / per_l1 + (size % per_l1 != 0);
}

void qcow2_build_header(const Qcow2Header *h, uint8_t *buf)
{
    qcow2_put_be32(buf + 0, QCOW2_MAGIC);
    qcow2_put_be32(buf + 4, h->version);
    qcow2_put_be64(buf + 8, h->backing_file_offset);
    qcow2_put_be32(buf + 16, h->backing_file_size);
    qcow2_put_be32(buf + 20, h->cluster_bits);
    qcow2_put_be64(buf + 24, h->size);
    qcow2_put_be32(buf + 32, h->crypt_method);
    qcow2_put_be32(buf + 36, h->l1_size);
    qcow2_put_be64(buf + 40, h->l1_table_offset);
    qcow2_put_be64(buf + 48, h->refcount_table_offset);
    qcow2_put_be32(buf + 56, h->refcount_table_clusters);
    qcow2_put_be32(buf + 60, h->nb_snapshots);
    qcow2_put_be64(buf + 64, h->snapshots_offset);
    if (h->version < 3) {
        return;
    }
    qcow2_put_be64(buf + 72, h->incompatible_features);
    qcow2_put_be64(buf + 80, h->compatible_features);
    qcow2_put_be64(buf + 88, h->autoclear_features);
    qcow2_put_be32(buf + 96, h->refcount_order);
    qcow2_put_be32(buf + 100, h->header_length);
    if (h->header_length > 104) {
        buf[104] = h->compression_type;
        memset(buf + 105, 0, MIN(h->header_length, 112) - 105);
    }
}

static const char *qcow2_incompat_name(uint64_t bit)
{
    switch (bit) {
    case QCOW2_INCOMPAT_DATA_FILE:
        return "external data file";
    case QCOW2_INCOMPAT_COMPRESSION:
        return "compression type";
    case QCOW2_INCOMPAT_EXTL2:
        return "extended L2 entries";
    default:
        return NULL;
    }
}

/* Copies a string extension (not NUL-terminated on disk). */
static bool qcow2_ext_string(const uint8_t *data, uint32_t len, char *out,
                             size_t out_size, const char *what, Error **errp)
{
    if (len >= out_size) {
        error_setg(errp, "qcow2: %s header extension too long (%u bytes)",
                   what, len);
        return false;
    }
    memcpy(out, data, len);
    out[len] = 0;
    if (strlen(out) != len) {
        error_setg(errp, "qcow2: %s header extension contains a NUL byte",
                   what);
        return false;
    }
    return true;
}

static bool qcow2_parse_extensions(const uint8_t *buf, size_t len,
                                   Qcow2Meta *m, Error **errp)
{
    uint64_t off = m->h.header_length;
    uint64_t end = MIN((uint64_t)len, m->cluster_size);
    bool seen_backing_fmt = false, seen_features = false;

    /* The backing file name may sit right after the extensions. */
    if (m->h.backing_file_offset && m->h.backing_file_offset < end) {
        end = m->h.backing_file_offset;
    }
    while (off + 8 <= end) {
        uint32_t type = qcow2_be32(buf + off);
        uint32_t elen = qcow2_be32(buf + off + 4);
        const uint8_t *data = buf + off + 8;

        off += 8;
        if (type == QCOW2_EXT_END) {
            m->ext_end = off;
            return true;
        }
        if (elen > end - off) {
            error_setg(errp, "qcow2: header extension 0x%08x overruns the "
                       "first cluster (%u bytes)", type, elen);
            return false;
        }
        switch (type) {
        case QCOW2_EXT_BACKING_FORMAT:
            if (seen_backing_fmt) {
                error_setg(errp, "qcow2: duplicate backing format extension");
                return false;
            }
            seen_backing_fmt = true;
            if (!qcow2_ext_string(data, elen, m->backing_format,
                                  sizeof(m->backing_format),
                                  "backing format", errp)) {
                return false;
            }
            break;
        case QCOW2_EXT_FEATURE_TABLE:
            if (seen_features) {
                error_setg(errp, "qcow2: duplicate feature table extension");
                return false;
            }
            seen_features = true;
            for (uint32_t i = 0; i + 48 <= elen; i += 48) {
                const uint8_t *e = data + i;

                if (e[0] == 0 && e[1] < 64 &&
                    (m->unknown_incompat & (1ull << e[1])) &&
                    !m->unknown_incompat_name[0]) {
                    size_t n = strnlen((const char *)e + 2, 46);

                    memcpy(m->unknown_incompat_name, e + 2, n);
                    m->unknown_incompat_name[n] = 0;
                }
            }
            break;
        case QCOW2_EXT_BITMAPS:
            m->has_bitmaps_ext = true;
            break;
        case QCOW2_EXT_CRYPTO:
            error_setg(errp, "qcow2: encrypted images are not supported");
            return false;
        case QCOW2_EXT_DATA_FILE:
            /* Only meaningful with the data-file bit, refused above. */
            break;
        default:
            break;          /* unknown extensions are ignored */
        }
        off += (elen + 7) & ~7ull;
    }
    /* No end marker before the cluster (or the name) ends: tolerated. */
    m->ext_end = MIN(off, end);
    return true;
}

bool qcow2_parse_header(const uint8_t *buf, size_t len, uint64_t file_size,
                        Qcow2Meta *m, Error **errp)
{
    Qcow2Header *h = &m->h;
    uint64_t known_incompat = QCOW2_INCOMPAT_DIRTY | QCOW2_INCOMPAT_CORRUPT;
    uint64_t unsupported;

    memset(m, 0, sizeof(*m));
    if (len < QCOW2_V2_HEADER_LEN || qcow2_be32(buf) != QCOW2_MAGIC) {
        error_setg(errp, "Image is not in qcow2 format");
        return false;
    }
    h->version = qcow2_be32(buf + 4);
    if (h->version != 2 && h->version != 3) {
        error_setg(errp, "Unsupported qcow2 version %u", h->version);
        error_append_hint(errp, "Versions 2 and 3 are supported.\n");
        return false;
    }
    h->backing_file_offset = qcow2_be64(buf + 8);
    h->backing_file_size = qcow2_be32(buf + 16);
    h->cluster_bits = qcow2_be32(buf + 20);
    h->size = qcow2_be64(buf + 24);
    h->crypt_method = qcow2_be32(buf + 32);
    h->l1_size = qcow2_be32(buf + 36);
    h->l1_table_offset = qcow2_be64(buf + 40);
    h->refcount_table_offset = qcow2_be64(buf + 48);
    h->refcount_table_clusters = qcow2_be32(buf + 56);
    h->nb_snapshots = qcow2_be32(buf + 60);
    h->snapshots_offset = qcow2_be64(buf + 64);
    if (h->version == 2) {
        h->refcount_order = 4;
        h->header_length = QCOW2_V2_HEADER_LEN;
    } else {
        if (len < QCOW2_V3_HEADER_LEN) {
            error_setg(errp, "qcow2: truncated version 3 header");
            return false;
        }
        h->incompatible_features = qcow2_be64(buf + 72);
        h->compatible_features = qcow2_be64(buf + 80);
        h->autoclear_features = qcow2_be64(buf + 88);
        h->refcount_order = qcow2_be32(buf + 96);
        h->header_length = qcow2_be32(buf + 100);
    }
    if (h->cluster_bits < QCOW2_MIN_CLUSTER_BITS ||
        h->cluster_bits > QCOW2_MAX_CLUSTER_BITS) {
        error_setg(errp, "Unsupported qcow2 cluster size: 2^%u bytes",
                   h->cluster_bits);
        error_append_hint(errp, "Cluster sizes from 512 bytes to 2 MiB are "
                          "supported.\n");
        return false;
    }
    m->cluster_size = 1ull << h->cluster_bits;
    m->l2_entries = m->cluster_size / 8;
    if (h->version == 3) {
        if (h->header_length < QCOW2_V3_HEADER_LEN ||
            h->header_length % 8 || h->header_length > m->cluster_size ||
            h->header_length > len) {
            error_setg(errp, "qcow2: invalid header length %u",
                       h->header_length);
            return false;
        }
        if (h->header_length > 104) {
            h->compression_type = buf[104];
        }
    }
    if (h->refcount_order > 6) {
        error_setg(errp, "qcow2: invalid refcount order %u (at most 6)",
                   h->refcount_order);
        return false;
    }
    m->rb_entries = m->cluster_size * 8 >> h->refcount_order;
    if (h->crypt_method) {
        error_setg(errp, "qcow2: encrypted images are not supported "
                   "(crypt_method %u)", h->crypt_method);
        error_append_hint(errp, "Convert it with qemu-img convert -O qcow2 "
                          "and an --object secret.\n");
        return false;
    }
    /* Incompatible features. */
    if (h->incompatible_features & QCOW2_INCOMPAT_COMPRESSION) {
        if (h->compression_type == 0) {
            error_setg(errp, "qcow2: compression type bit set but the "
                       "compression type is zlib");
            return false;
        }
    } else if (h->compression_type != 0) {
        error_setg(errp, "qcow2: compression type %u without its feature "
                   "bit", h->compression_type);
        return false;
    }
    unsupported = h->incompatible_features & ~known_incompat;
    m->unknown_incompat = unsupported;
    /* Extensions (may name an unknown feature) come before the verdict. */
    if (h->version == 3 || len > QCOW2_V2_HEADER_LEN) {
        Error *local = NULL;

        if (!qcow2_parse_extensions(buf, len, m, &local)) {
            if (unsupported) {
                error_free(local);
            } else {
                error_propagate(errp, local);
                return false;
            }
        }
    }
    if (unsupported) {
        uint64_t bit = unsupported & -unsupported;
        const char *name = qcow2_incompat_name(bit);

        if (m->unknown_incompat_name[0]) {
            name = m->unknown_incompat_name;
        }
        if (name) {
            error_setg(errp, "qcow2: unsupported feature: %s", name);
        } else {
            error_setg(errp, "qcow2: unsupported incompatible feature bit "
                       "%d", __builtin_ctzll(unsupported));
        }
        error_append_hint(errp, "Convert the image with qemu-img convert "
                          "-O qcow2 to a plain qcow2.\n");
        return false;
    }
    /* Tables. */
    if (h->l1_table_offset % m->cluster_size ||
        h->refcount_table_offset % m->cluster_size ||
        (h->nb_snapshots && h->snapshots_offset % m->cluster_size)) {
        error_setg(errp, "qcow2: a table offset is not cluster aligned");
        return false;
    }
    if (!h->refcount_table_clusters ||
        (uint64_t)h->refcount_table_clusters * m->cluster_size >
        QCOW2_MAX_REFTABLE_BYTES) {
        error_setg(errp, "qcow2: invalid refcount table size (%u clusters)",
                   h->refcount_table_clusters);
        return false;
    }
    if (!h->refcount_table_offset) {
        error_setg(errp, "qcow2: the refcount table is at offset 0");
        return false;
    }
    m->reftable_entries = (uint64_t)h->refcount_table_clusters *
                          m->cluster_size / 8;
    if ((uint64_t)h->l1_size * 8 > QCOW2_MAX_L1_BYTES) {
        error_setg(errp, "qcow2: active L1 table too large (%u entries)",
                   h->l1_size);
        return false;
    }
    if (h->size > (1ull << 62) ||
        qcow2_l1_entries_for(h->cluster_bits, h->size) > h->l1_size) {
        error_setg(errp, "qcow2: L1 table (%u entries) too small for the "
                   "virtual size %" PRIu64, h->l1_size, h->size);
        return false;
    }
    if (h->l1_size && !h->l1_table_offset) {
        error_setg(errp, "qcow2: the L1 table is at offset 0");
        return false;
    }
    if (file_size) {
        uint64_t l1_end = h->l1_table_offset + (uint64_t)h->l1_size * 8;
        uint64_t rt_end = h->refcount_table_offset +
                          (uint64_t)h->refcount_table_clusters *
                          m->cluster_size;

        /* The tables may end in a cluster the file ends in the middle of. */
        if (h->l1_table_offset > file_size ||
            l1_end > ROUND_UP(file_size, m->cluster_size) ||
            h->refcount_table_offset > file_size ||
            rt_end > ROUND_UP(file_size, m->cluster_size)) {
            error_setg(errp, "qcow2: metadata tables lie beyond the end of "
                       "the file (%" PRIu64 " bytes)", file_size);
            return false;
        }
    }
    /* The backing file name: inside the first cluster. */
    if (h->backing_file_offset) {
        if (h->backing_file_size > QCOW2_MAX_BACKING_NAME ||
            h->backing_file_offset > m->cluster_size ||
            h->backing_file_size > m->cluster_size - h->backing_file_offset ||
            h->backing_file_offset + h->backing_file_size > len ||
            h->backing_file_offset < h->header_length) {
            error_setg(errp, "qcow2: invalid backing file name location");
            return false;
        }
        memcpy(m->backing_file, buf + h->backing_file_offset,
               h->backing_file_size);
        m->backing_file[h->backing_file_size] = 0;
        if (strlen(m->backing_file) != h->backing_file_size) {
            error_setg(errp, "qcow2: backing file name contains a NUL byte");
            return false;
        }
    }
    return true;
}

Qcow2Cluster qcow2_decode_l2(const Qcow2Meta *m, uint64_t e)
{
    Qcow2Cluster c = { .type = QCOW2_CLUSTER_INVALID };

    if (e & QCOW2_OFLAG_COMPRESSED) {
        unsigned x = 62 - (m->h.cluster_bits - 8);
        uint64_t off_mask = (1ull << x) - 1;
        uint64_t sectors = ((e >> x) & ((1ull << (m->h.cluster_bits - 8)) - 1))
                           + 1;

        if (e & QCOW2_OFLAG_COPIED) {
            return c;       /* compressed clusters are never COPIED */
        }
        c.host_offset = e & off_mask;
        if (c.host_offset >> 56) {
            return c;
        }
        c.compressed_len = sectors * 512 - (c.host_offset & 511);
        c.type = QCOW2_CLUSTER_COMPRESSED;
        return c;
    }
    if (e & QCOW2_L2E_STD_RESERVED) {
        return c;
    }
    c.host_offset = e & QCOW2_OFFSET_MASK;
    c.copied = !!(e & QCOW2_OFLAG_COPIED);
    if (c.host_offset % m->cluster_size) {
        return c;
    }
    if ((e & QCOW2_OFLAG_ZERO) && m->h.version >= 3) {
        c.type = c.host_offset ? QCOW2_CLUSTER_ZERO_ALLOC
                               : QCOW2_CLUSTER_ZERO_PLAIN;
        return c;
    }
    if (e & QCOW2_OFLAG_ZERO) {
        return c;           /* reserved in version 2 */
    }
    if (!c.host_offset) {
        /* COPIED without an offset would mean an external data file. */
        c.type = c.copied ? QCOW2_CLUSTER_INVALID : QCOW2_CLUSTER_UNALLOCATED;
        return c;
    }
    c.type = QCOW2_CLUSTER_NORMAL;
    return c;
}

void qcow2_compressed_span(const Qcow2Meta *m, const Qcow2Cluster *c,
                           uint64_t *first, uint64_t *count)
{
    uint64_t start = c->host_offset >> m->h.cluster_bits;
    uint64_t last = (c->host_offset + c->compressed_len - 1) >>
                    m->h.cluster_bits;

    *first = start << m->h.cluster_bits;
    *count = last - start + 1;
}

uint64_t qcow2_encode_compressed(const Qcow2Meta *m, uint64_t host_offset,
                                 uint64_t len)
{
    unsigned x = 62 - (m->h.cluster_bits - 8);
    uint64_t end = host_offset + len;
    uint64_t sectors = ((end + 511) / 512) - host_offset / 512;

    return QCOW2_OFLAG_COMPRESSED | ((sectors - 1) << x) | host_offset;
}

uint64_t qcow2_refblock_get(const uint8_t *block, uint32_t order,
                            uint64_t index)
{
    switch (order) {
    case 0:
    case 1:
    case 2: {
        unsigned bits = 1u << order;
        uint64_t bit = index * bits;

        return (block[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
    }
    case 3:
        return block[index];
    case 4:
        return ((uint64_t)block[index * 2] << 8) | block[index * 2 + 1];
    case 5:
        return qcow2_be32(block + index * 4);
    default:
        return qcow2_be64(block + index * 8);
    }
}

void qcow2_refblock_set(uint8_t *block, uint32_t order, uint64_t index,
                        uint64_t value)
{
    switch (order) {
    case 0:
    case 1:
    case 2: {
        unsigned bits = 1u << order;
        uint64_t bit = index * bits;
        uint8_t mask = ((1u << bits) - 1) << (bit % 8);

        block[bit / 8] = (block[bit / 8] & ~mask) |
                         ((value << (bit % 8)) & mask);
        break;
    }
    case 3:
        block[index] = value;
        break;
    case 4:
        block[index * 2] = value >> 8;
        block[index * 2 + 1] = value;
        break;
    case 5:
        qcow2_put_be32(block + index * 4, value);
        break;
    default:
        qcow2_put_be64(block + index * 8, value);
        break;
    }
}
