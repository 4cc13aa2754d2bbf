/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Refcount repair for qcow2 images opened read-write with the dirty bit
 * set (lazy refcounts, or a crash while they were in use): the refcount
 * of every cluster is counted again from what references it -- the
 * header, the L1 and refcount tables, refcount blocks, L2 tables, data
 * and compressed clusters -- and every refcount that differs is
 * rewritten.  Creating a missing refcount block takes a cluster itself,
 * so the count runs again until nothing changes.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/block_int.h"
#include "block/qcow2-int.h"
#include "trace.h"

#define QCOW2_REPAIR_MAX_CLUSTERS (1ull << 28)

typedef struct Qcow2Count {
    uint32_t *refs;
    uint64_t n;
    bool bad;
} Qcow2Count;

static void qcow2_count_range(BDRVQcow2 *s, Qcow2Count *c, uint64_t off,
                              uint64_t len)
{
    uint64_t first = off >> s->m.h.cluster_bits;
    uint64_t last = (off + len - 1) >> s->m.h.cluster_bits;

    if (!len) {
        return;
    }
    for (uint64_t i = first; i <= last; i++) {
        if (i >= c->n) {
            c->bad = true;
            return;
        }
        c->refs[i]++;
    }
}

static int qcow2_count_all(BDRVQcow2 *s, Qcow2Count *c, Error **errp)
{
    g_autofree uint64_t *l2 = g_malloc(s->cs);
    int ret;

    memset(c->refs, 0, c->n * sizeof(*c->refs));
    c->bad = false;
    qcow2_count_range(s, c, 0, s->cs);
    qcow2_count_range(s, c, s->m.h.l1_table_offset, s->l1_size * 8);
    qcow2_count_range(s, c, s->m.h.refcount_table_offset,
                      s->m.h.refcount_table_clusters * s->cs);
    for (uint64_t i = 0; i < s->reftable_entries; i++) {
        if (s->reftable[i] & QCOW2_OFFSET_MASK) {
            qcow2_count_range(s, c, s->reftable[i] & QCOW2_OFFSET_MASK, s->cs);
        }
    }
    for (uint64_t i = 0; i < s->l1_size; i++) {
        uint64_t l2_off = s->l1[i] & QCOW2_OFFSET_MASK;

        if (!l2_off) {
            continue;
        }
        qcow2_count_range(s, c, l2_off, s->cs);
        ret = block_file_pread(s->leaf, l2_off, l2, s->cs);
        if (ret < 0) {
            error_setg_errno(errp, -ret, "qcow2 %s: cannot read an L2 table "
                             "to repair refcounts", s->name);
            return ret;
        }
        for (uint64_t j = 0; j < s->m.l2_entries; j++) {
            Qcow2Cluster cl = qcow2_decode_l2(&s->m, GUINT64_FROM_BE(l2[j]));

            switch (cl.type) {
            case QCOW2_CLUSTER_NORMAL:
            case QCOW2_CLUSTER_ZERO_ALLOC:
                qcow2_count_range(s, c, cl.host_offset, s->cs);
                break;
            case QCOW2_CLUSTER_COMPRESSED: {
                uint64_t first, count;

                qcow2_compressed_span(&s->m, &cl, &first, &count);
                for (uint64_t k = 0; k < count; k++) {
                    qcow2_count_range(s, c, first + k * s->cs, 1);
                }
                break;
            }
            case QCOW2_CLUSTER_INVALID:
                c->bad = true;
                break;
            default:
                break;
            }
        }
    }
    if (c->bad) {
        error_setg(errp, "qcow2 %s: metadata references clusters outside "
                   "the image; cannot repair the refcounts", s->name);
        error_append_hint(errp, "Run qemu-img check -r all on the image.\n");
        return -EIO;
    }
    return 0;
}

int qcow2_repair_refcounts(BDRVQcow2 *s, Error **errp)
{
    Qcow2Count c = { 0 };
    uint64_t fixed = 0;
    int ret = 0;

    if (s->m.h.nb_snapshots || s->m.has_bitmaps_ext) {
        error_setg(errp, "qcow2 %s: the image is dirty and has snapshots or "
                   "bitmaps, whose refcounts Conduit cannot repair", s->name);
        error_append_hint(errp, "Run qemu-img check -r all on the image.\n");
        return -ENOTSUP;
    }
    {
        /* Each L2 table is a cluster of its own in a sane image. */
        uint64_t tables = 0;

        for (uint64_t i = 0; i < s->l1_size; i++) {
            tables += !!(s->l1[i] & QCOW2_OFFSET_MASK);
        }
        if (tables > DIV_ROUND_UP(s->file_end, s->cs)) {
            error_setg(errp, "qcow2 %s: the L1 table names more L2 tables "
                       "than the image has clusters", s->name);
            error_append_hint(errp, "Run qemu-img check -r all on the "
                              "image.\n");
            return -EIO;
        }
    }
    for (int round = 0; round < 4; round++) {
        uint64_t changed = 0, limit;

        c.n = DIV_ROUND_UP(s->file_end, s->cs) + 1;
        if (c.n > QCOW2_REPAIR_MAX_CLUSTERS) {
            error_setg(errp, "qcow2 %s: too large to repair on open",
                       s->name);
            error_append_hint(errp, "Run qemu-img check -r all on the "
                              "image.\n");
            ret = -EFBIG;
            break;
        }
        g_free(c.refs);
        c.refs = g_try_new(uint32_t, c.n);
        if (!c.refs) {
            ret = -ENOMEM;
            error_setg(errp, "qcow2 %s: out of memory for the repair",
                       s->name);
            break;
        }
        ret = qcow2_count_all(s, &c, errp);
        if (ret < 0) {
            break;
        }
        /* Every cluster a refcount block covers, and every counted one. */
        limit = MAX(c.n, 0);
        for (uint64_t rt = 0; rt < s->reftable_entries; rt++) {
            if (s->reftable[rt] & QCOW2_OFFSET_MASK) {
                limit = MAX(limit, (rt + 1) * s->m.rb_entries);
            }
        }
        for (uint64_t i = 0; i < limit; i++) {
            uint64_t want = i < c.n ? c.refs[i] : 0, have;
            uint64_t old_entries = s->reftable_entries;

            ret = qcow2_get_refcount(s, i, &have);
            if (ret < 0) {
                break;
            }
            if (have == want) {
                continue;
            }
            ret = qcow2_set_refcount(s, i, want);
            if (ret < 0) {
                break;
            }
            changed++;
            if (s->reftable_entries != old_entries ||
                DIV_ROUND_UP(s->file_end, s->cs) + 1 > c.n) {
                break;      /* the layout moved: count again */
            }
        }
        if (ret < 0) {
            error_setg_errno(errp, -ret, "qcow2 %s: could not repair the "
                             "refcounts", s->name);
            break;
        }
        fixed += changed;
        if (!changed) {
            break;
        }
    }
    g_free(c.refs);
    if (ret == 0) {
        s->free_hint = 1;
        ret = block_file_flush(s->leaf);
        trace_qcow2_repair(s->name, fixed);
    }
    return ret;
}
