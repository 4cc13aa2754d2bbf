/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qcow2 format driver: a format node over a protocol node, with an
 * optional backing node (block_int.h).  Versions 2 and 3, cluster sizes
 * 512 B - 2 MiB, refcounts of every width (refcount_order 0-6), zero
 * clusters, compressed clusters (read; deflate via zlib), discard and
 * write-zeroes, lazy refcounts with the dirty bit, growing.
 *
 * Caching: L2 tables and refcount blocks are kept in LRU caches of whole
 * clusters; the L1 and refcount tables are in memory.  A read or an
 * overwrite of an allocated cluster costs a cache lookup and no metadata
 * I/O.  Caches are write-through: every metadata change is written to
 * the file before the request that needed it completes (with lazy
 * refcounts, refcount blocks are written at flush and close instead and
 * the image is marked dirty meanwhile).
 *
 * Crash safety.  Metadata is written in an order that never lets the
 * image point at something unwritten, so a process killed at any point
 * (SIGKILL: what was written reached the kernel) leaves at worst leaked
 * clusters, which qemu-img check -r all repairs:
 *   1. a cluster's refcount is raised (a new refcount block is written
 *      before the table entry pointing to it);
 *   2. the guest data (with the copy-on-write head and tail) is written;
 *   3. the L2 entry is written (a new L2 table is written before the L1
 *      entry pointing to it);
 *   4. only then are the refcounts of what the entry pointed to before
 *      (a compressed or shared cluster, a discarded one) lowered.
 * A guest flush then makes everything durable with fdatasync.
 *
 * Locking: the node lock of the top node of a chain covers the metadata
 * of every node below it (block_int.h); the I/O thread holds it while it
 * maps a request.  Allocating writes are done synchronously under it.
 */
#include "qemu/osdep.h"
#include <zlib.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/option.h"
#include <json-glib/json-glib.h>
#include "block/block_int.h"
#include "block/qcow2.h"
#include "block/qcow2-int.h"
#include "trace.h"

void block_map_add_extent(BlockMap *m, BlockNode *leaf, uint64_t host_off,
                          uint64_t len, size_t qoff);

/* ---- cluster caches ---- */

typedef struct Qcow2CacheEntry {
    uint64_t offset;
    uint8_t *data;
    bool dirty;                 /* refcount blocks with lazy refcounts */
    GList link;
} Qcow2CacheEntry;

static void qcow2_cache_init(Qcow2Cache *c, size_t cluster_size, unsigned max)
{
    c->map = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_queue_init(&c->lru);
    c->cluster_size = cluster_size;
    c->max = MAX(max, 4);
}

static int qcow2_cache_write_entry(BDRVQcow2 *s, Qcow2CacheEntry *e)
{
    int ret = block_file_pwrite(s->leaf, e->offset, e->data, s->cs);

    if (ret == 0) {
        e->dirty = false;
    }
    return ret;
}

static void qcow2_cache_free_entry(Qcow2CacheEntry *e)
{
    free(e->data);
    g_free(e);
}

static void qcow2_cache_destroy(Qcow2Cache *c)
{
    GList *l;

    if (!c->map) {
        return;
    }
    while ((l = g_queue_pop_head_link(&c->lru))) {
        qcow2_cache_free_entry(l->data);
    }
    g_hash_table_destroy(c->map);
    c->map = NULL;
}

static Qcow2CacheEntry *qcow2_cache_find(Qcow2Cache *c, uint64_t offset)
{
    Qcow2CacheEntry *e = g_hash_table_lookup(c->map, &offset);

    if (e && c->lru.head != &e->link) {
        g_queue_unlink(&c->lru, &e->link);
        g_queue_push_head_link(&c->lru, &e->link);
    }
    return e;
}

/* Makes room, then adds an entry for @offset (data not yet filled). */
static Qcow2CacheEntry *qcow2_cache_add(BDRVQcow2 *s, Qcow2Cache *c,
                                        uint64_t offset, int *err)
{
    Qcow2CacheEntry *e;

    while (g_queue_get_length(&c->lru) >= c->max) {
        GList *tail = c->lru.tail;

        e = tail->data;
        if (e->dirty && qcow2_cache_write_entry(s, e) < 0) {
            break;              /* keep it; the cache grows by one */
        }
        g_queue_unlink(&c->lru, tail);
        g_hash_table_remove(c->map, &e->offset);
        qcow2_cache_free_entry(e);
    }
    e = g_new0(Qcow2CacheEntry, 1);
    e->offset = offset;
    if (posix_memalign((void **)&e->data, MAX(s->leaf->alignment, 4096),
                       c->cluster_size)) {
        g_free(e);
        *err = -ENOMEM;
        return NULL;
    }
    e->link.data = e;
    g_queue_push_head_link(&c->lru, &e->link);
    g_hash_table_insert(c->map, &e->offset, e);
    return e;
}

static void qcow2_cache_drop(Qcow2Cache *c, uint64_t offset)
{
    Qcow2CacheEntry *e = g_hash_table_lookup(c->map, &offset);

    if (e) {
        g_queue_unlink(&c->lru, &e->link);
        g_hash_table_remove(c->map, &e->offset);
        qcow2_cache_free_entry(e);
    }
}

/* A metadata cluster, read through the cache. */
static int qcow2_cache_get(BDRVQcow2 *s, Qcow2Cache *c, uint64_t offset,
                           uint8_t **data)
{
    Qcow2CacheEntry *e = qcow2_cache_find(c, offset);
    int ret = 0;

    if (!e) {
        if (offset < s->cs || offset % s->cs || offset + s->cs > s->file_end) {
            qcow2_signal_corruption(s, "metadata cluster at 0x%" PRIx64
                                    " lies outside the image", offset);
            return -EIO;
        }
        e = qcow2_cache_add(s, c, offset, &ret);
        if (!e) {
            return ret;
        }
        ret = block_file_pread(s->leaf, offset, e->data, s->cs);
        if (ret < 0) {
            qcow2_cache_drop(c, offset);
            return ret;
        }
    }
    *data = e->data;
    return 0;
}

/* A new metadata cluster, zeroed, in the cache. */
static int qcow2_cache_new(BDRVQcow2 *s, Qcow2Cache *c, uint64_t offset,
                           uint8_t **data)
{
    Qcow2CacheEntry *e;
    int ret = 0;

    qcow2_cache_drop(c, offset);
    e = qcow2_cache_add(s, c, offset, &ret);
    if (!e) {
        return ret;
    }
    memset(e->data, 0, s->cs);
    *data = e->data;
    return 0;
}

static int qcow2_cache_flush(BDRVQcow2 *s, Qcow2Cache *c)
{
    for (GList *l = c->lru.head; l; l = l->next) {
        Qcow2CacheEntry *e = l->data;

        if (e->dirty) {
            int ret = qcow2_cache_write_entry(s, e);

            if (ret < 0) {
                return ret;
            }
        }
    }
    return 0;
}

void qcow2_signal_corruption(BDRVQcow2 *s, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (!s->corrupt_reported) {
        error_report("qcow2 %s: image is corrupt: %s (further reports "
                     "suppressed); run qemu-img check -r all on it",
                     s->name, msg);
        s->corrupt_reported = true;
    }
}

/*
 * Writes bytes [off, off+len) of a cached metadata cluster at @host.
 * With O_DIRECT the range grows to the alignment: the cache holds the
 * whole cluster, so no read-modify-write of the file is needed.
 */
static int qcow2_write_cached(BDRVQcow2 *s, uint64_t host,
                              const uint8_t *cluster, uint64_t off,
                              uint64_t len)
{
    uint64_t a = s->leaf->direct ? s->leaf->alignment : 1;

    if (a > 1 && a <= s->cs) {
        uint64_t end = ROUND_UP(off + len, a);

        off -= off % a;
        len = MIN(end, s->cs) - off;
    }
    return block_file_pwrite(s->leaf, host + off, cluster + off, len);
}

/* ---- header updates ---- */

static int qcow2_write_header_field(BDRVQcow2 *s, unsigned off, unsigned len)
{
    uint8_t buf[QCOW2_V3_HEADER_LEN + 8] = { 0 };

    qcow2_build_header(&s->m.h, buf);
    return block_file_pwrite(s->leaf, off, buf + off, len);
}

static int qcow2_set_incompat(BDRVQcow2 *s, uint64_t bits, bool on)
{
    uint64_t old = s->m.h.incompatible_features;
    int ret;

    if (s->m.h.version < 3) {
        return 0;
    }
    s->m.h.incompatible_features = on ? old | bits : old & ~bits;
    if (s->m.h.incompatible_features == old) {
        return 0;
    }
    ret = block_file_flush(s->leaf);
    if (ret == 0) {
        ret = qcow2_write_header_field(s, 72, 8);
    }
    if (ret == 0) {
        ret = block_file_flush(s->leaf);
    }
    return ret;
}

/* ---- refcounts ---- */

static uint64_t qcow2_cluster_index(BDRVQcow2 *s, uint64_t offset)
{
    return offset >> s->m.h.cluster_bits;
}

/* The refcount of cluster @idx; 0 when no refcount block covers it. */
int qcow2_get_refcount(BDRVQcow2 *s, uint64_t idx, uint64_t *out)
{
    uint64_t rt = idx / s->m.rb_entries;
    uint8_t *block = NULL;
    int ret;

    *out = 0;
    if (rt >= s->reftable_entries || !(s->reftable[rt] & QCOW2_OFFSET_MASK)) {
        return 0;
    }
    ret = qcow2_cache_get(s, &s->rb_cache, s->reftable[rt] & ~511ull, &block);
    if (ret < 0) {
        return ret;
    }
    *out = qcow2_refblock_get(block, s->m.h.refcount_order,
                              idx % s->m.rb_entries);
    return 0;
}

static int qcow2_write_reftable_entry(BDRVQcow2 *s, uint64_t rt)
{
    uint8_t be[8];

    qcow2_put_be64(be, s->reftable[rt]);
    return block_file_pwrite(s->leaf, s->m.h.refcount_table_offset + rt * 8,
                             be, 8);
}

static int qcow2_mark_dirty(BDRVQcow2 *s)
{
    if (s->dirty_set) {
        return 0;
    }
    s->dirty_set = true;
    return qcow2_set_incompat(s, QCOW2_INCOMPAT_DIRTY, true);
}

/* Sets a refcount in an existing refcount block and writes it (or
 * marks it dirty with lazy refcounts). */
static int qcow2_store_refcount(BDRVQcow2 *s, uint64_t idx, uint64_t value)
{
    uint64_t rt = idx / s->m.rb_entries, i = idx % s->m.rb_entries;
    uint32_t order = s->m.h.refcount_order;
    uint64_t rb_off = s->reftable[rt] & QCOW2_OFFSET_MASK;
    Qcow2CacheEntry *e;
    uint8_t *block = NULL;
    uint64_t byte, bytes;
    int ret;

    ret = qcow2_cache_get(s, &s->rb_cache, rb_off, &block);
    if (ret < 0) {
        return ret;
    }
    qcow2_refblock_set(block, order, i, value);
    if (value == 0 && idx < s->free_hint) {
        s->free_hint = idx;
    }
    if (s->lazy) {
        ret = qcow2_mark_dirty(s);
        e = qcow2_cache_find(&s->rb_cache, rb_off);
        if (e) {
            e->dirty = true;
        }
        return ret;
    }
    byte = (i << order) / 8;
    bytes = order >= 3 ? (1u << order) / 8 : 1;
    return qcow2_write_cached(s, rb_off, block, byte, bytes);
}

static int qcow2_grow_reftable(BDRVQcow2 *s, uint64_t min_entries);

/* Creates the refcount block for table index @rt (covering clusters
 * rt * rb_entries ...), placed in the first cluster it covers. */
static int qcow2_create_refblock(BDRVQcow2 *s, uint64_t rt)
{
    uint64_t first = rt * s->m.rb_entries;
    uint64_t off = first << s->m.h.cluster_bits;
    uint8_t *block = NULL;
    int ret;

    if (rt >= s->reftable_entries) {
        ret = qcow2_grow_reftable(s, rt + 1);
        if (ret < 0 || (s->reftable[rt] & QCOW2_OFFSET_MASK)) {
            return ret;
        }
    }
    if (off >> 56) {
        return -EFBIG;
    }
    ret = qcow2_cache_new(s, &s->rb_cache, off, &block);
    if (ret < 0) {
        return ret;
    }
    qcow2_refblock_set(block, s->m.h.refcount_order, 0, 1);
    ret = block_file_pwrite(s->leaf, off, block, s->cs);
    if (ret < 0) {
        qcow2_cache_drop(&s->rb_cache, off);
        return ret;
    }
    s->file_end = MAX(s->file_end, off + s->cs);
    s->reftable[rt] = off;
    ret = qcow2_write_reftable_entry(s, rt);
    trace_qcow2_create_refblock(s->name, rt, off, ret);
    return ret;
}

/*
 * A larger refcount table in a fresh area past everything: its own
 * refcount blocks first (covering the area), then the table; the header
 * switches to it in one write, then the old table is freed.
 */
static int qcow2_grow_reftable(BDRVQcow2 *s, uint64_t min_entries)
{
    uint64_t per_cluster = s->cs / 8, rb = s->m.rb_entries;
    uint64_t area = MAX(DIV_ROUND_UP(s->file_end, s->cs),
                        s->reftable_entries * rb);
    uint64_t new_entries, table_clusters, blocks = 1, first_rt, last_rt;
    uint64_t old_off = s->m.h.refcount_table_offset;
    uint64_t old_clusters = s->m.h.refcount_table_clusters;
    g_autofree uint64_t *table = NULL;
    g_autofree uint8_t *buf = NULL;
    uint8_t hdr[12];
    int ret;

    /* Iterate: the table must cover its own area and refcount blocks. */
    for (int round = 0; round < 8; round++) {
        uint64_t end;

        new_entries = MAX(min_entries, s->reftable_entries * 2);
        table_clusters = DIV_ROUND_UP(new_entries, per_cluster);
        end = area + blocks + table_clusters;
        first_rt = area / rb;
        last_rt = (end - 1) / rb;
        new_entries = MAX(new_entries, last_rt + 1);
        table_clusters = DIV_ROUND_UP(new_entries, per_cluster);
        end = area + blocks + table_clusters;
        if (last_rt - first_rt + 1 <= blocks && (end - 1) / rb == last_rt) {
            break;
        }
        blocks = last_rt - first_rt + 1;
    }
    new_entries = table_clusters * per_cluster;
    if (table_clusters * s->cs > QCOW2_MAX_REFTABLE_BYTES) {
        error_report("qcow2 %s: the refcount table would exceed %u bytes",
                     s->name, QCOW2_MAX_REFTABLE_BYTES);
        return -EFBIG;
    }
    if ((area + blocks + table_clusters) << s->m.h.cluster_bits >> 56) {
        return -EFBIG;
    }
    /* Refcount blocks: clusters [area, area+blocks+table_clusters) = 1. */
    buf = g_try_malloc0(s->cs);
    table = g_try_new0(uint64_t, new_entries);
    if (!buf || !table) {
        return -ENOMEM;
    }
    memcpy(table, s->reftable, s->reftable_entries * 8);
    for (uint64_t b = 0; b < blocks; b++) {
        uint64_t rt = first_rt + b;
        uint64_t boff = (area + b) << s->m.h.cluster_bits;

        memset(buf, 0, s->cs);
        for (uint64_t c = area; c < area + blocks + table_clusters; c++) {
            if (c / rb == rt) {
                qcow2_refblock_set(buf, s->m.h.refcount_order, c % rb, 1);
            }
        }
        if (table[rt]) {
            return -EIO;        /* the area was supposed to be uncovered */
        }
        table[rt] = boff;
        ret = block_file_pwrite(s->leaf, boff, buf, s->cs);
        if (ret < 0) {
            return ret;
        }
    }
    {
        g_autofree uint8_t *be = g_malloc(table_clusters * s->cs);

        for (uint64_t i = 0; i < new_entries; i++) {
            qcow2_put_be64(be + i * 8, table[i]);
        }
        ret = block_file_pwrite(s->leaf, (area + blocks) << s->m.h.cluster_bits,
                                be, table_clusters * s->cs);
        if (ret < 0) {
            return ret;
        }
    }
    ret = block_file_flush(s->leaf);
    if (ret < 0) {
        return ret;
    }
    qcow2_put_be64(hdr, (area + blocks) << s->m.h.cluster_bits);
    qcow2_put_be32(hdr + 8, table_clusters);
    ret = block_file_pwrite(s->leaf, 48, hdr, 12);
    if (ret < 0) {
        return ret;
    }
    trace_qcow2_grow_reftable(s->name, s->reftable_entries, new_entries,
                              (area + blocks) << s->m.h.cluster_bits);
    s->m.h.refcount_table_offset = (area + blocks) << s->m.h.cluster_bits;
    s->m.h.refcount_table_clusters = table_clusters;
    g_free(s->reftable);
    s->reftable = g_steal_pointer(&table);
    s->reftable_entries = new_entries;
    s->m.reftable_entries = new_entries;
    s->file_end = MAX(s->file_end,
                      (area + blocks + table_clusters) << s->m.h.cluster_bits);
    /* The old table's clusters are free now. */
    for (uint64_t c = 0; c < old_clusters; c++) {
        ret = qcow2_update_refcount(s, qcow2_cluster_index(s, old_off) + c,
                                    -1);
        if (ret < 0) {
            return ret;
        }
    }
    return 0;
}

int qcow2_update_refcount(BDRVQcow2 *s, uint64_t idx, int64_t delta)
{
    uint64_t rt = idx / s->m.rb_entries, value;
    int ret;

    if (rt >= s->reftable_entries || !(s->reftable[rt] & QCOW2_OFFSET_MASK)) {
        if (delta < 0) {
            qcow2_signal_corruption(s, "refcount of cluster %" PRIu64
                                    " below zero", idx);
            return -EIO;
        }
        ret = qcow2_create_refblock(s, rt);
        if (ret < 0) {
            return ret;
        }
    }
    ret = qcow2_get_refcount(s, idx, &value);
    if (ret < 0) {
        return ret;
    }
    if ((delta < 0 && value < (uint64_t)-delta) ||
        (delta > 0 && qcow2_refcount_max(s->m.h.refcount_order) - value <
                      (uint64_t)delta)) {
        qcow2_signal_corruption(s, "refcount of cluster %" PRIu64
                                " out of range (%" PRIu64 " %+" PRId64 ")",
                                idx, value, delta);
        return delta > 0 ? -ERANGE : -EIO;
    }
    return qcow2_store_refcount(s, idx, value + delta);
}

int qcow2_set_refcount(BDRVQcow2 *s, uint64_t idx, uint64_t value)
{
    uint64_t rt = idx / s->m.rb_entries;
    int ret;

    if (rt >= s->reftable_entries || !(s->reftable[rt] & QCOW2_OFFSET_MASK)) {
        if (!value) {
            return 0;
        }
        ret = qcow2_create_refblock(s, rt);
        if (ret < 0) {
            return ret;
        }
    }
    if (value > qcow2_refcount_max(s->m.h.refcount_order)) {
        return -ERANGE;
    }
    return qcow2_store_refcount(s, idx, value);
}

/*
 * A run too long to fit between the refcount blocks that sit at the
 * start of each range they cover: placed in fresh ranges past the end
 * of the file, after refcount blocks of its own.
 */
static int qcow2_alloc_fresh(BDRVQcow2 *s, uint64_t n, uint64_t *host)
{
    uint64_t rb = s->m.rb_entries;
    g_autofree uint8_t *buf = g_try_malloc(s->cs);
    int ret;

    if (!buf) {
        return -ENOMEM;
    }
    for (int attempt = 0; attempt < 8; attempt++) {
        uint64_t area = ROUND_UP(DIV_ROUND_UP(s->file_end, s->cs), rb);
        uint64_t blocks = DIV_ROUND_UP(n + 1, rb), first_rt, last_rt;
        bool covered = false;

        while (DIV_ROUND_UP(blocks + n, rb) > blocks) {
            blocks++;
        }
        first_rt = area / rb;
        last_rt = (area + blocks + n - 1) / rb;
        if ((area + blocks + n) << s->m.h.cluster_bits >> 56) {
            return -EFBIG;
        }
        if (last_rt >= s->reftable_entries) {
            ret = qcow2_grow_reftable(s, last_rt + 1);
            if (ret < 0) {
                return ret;
            }
            continue;       /* the table took space: place again */
        }
        for (uint64_t rt = first_rt; rt <= last_rt; rt++) {
            covered |= !!(s->reftable[rt] & QCOW2_OFFSET_MASK);
        }
        if (covered) {
            s->file_end = (last_rt + 1) * rb << s->m.h.cluster_bits;
            continue;
        }
        for (uint64_t rt = first_rt; rt <= last_rt; rt++) {
            uint64_t boff = (area + rt - first_rt) << s->m.h.cluster_bits;

            memset(buf, 0, s->cs);
            for (uint64_t c = MAX(area, rt * rb);
                 c < MIN(area + blocks + n, (rt + 1) * rb); c++) {
                qcow2_refblock_set(buf, s->m.h.refcount_order, c % rb, 1);
            }
            ret = block_file_pwrite(s->leaf, boff, buf, s->cs);
            if (ret < 0) {
                return ret;
            }
            qcow2_cache_drop(&s->rb_cache, boff);
            s->reftable[rt] = boff;
            ret = qcow2_write_reftable_entry(s, rt);
            if (ret < 0) {
                return ret;
            }
        }
        *host = (area + blocks) << s->m.h.cluster_bits;
        s->file_end = MAX(s->file_end, *host + n * s->cs);
        trace_qcow2_alloc_clusters(s->name, *host, n);
        return 0;
    }
    return -EIO;
}

/*
 * Allocates @n contiguous clusters with refcount 1; their offset in
 * *host.  Refcount blocks the run needs are created first (they take
 * the first cluster of the range they cover), then the search restarts.
 */
int qcow2_alloc_clusters(BDRVQcow2 *s, uint64_t n, uint64_t *host)
{
    uint64_t limit = (1ull << 56) >> s->m.h.cluster_bits;
    int ret;

    if (n > s->m.rb_entries / 2) {
        return qcow2_alloc_fresh(s, n, host);
    }

    for (int attempt = 0; attempt < 64; attempt++) {
        uint64_t start = MAX(s->free_hint, 1), run = 0, idx;
        bool again = false;

        for (idx = start; run < n; idx++) {
            uint64_t rc;

            if (idx >= limit) {
                return -EFBIG;
            }
            ret = qcow2_get_refcount(s, idx, &rc);
            if (ret < 0) {
                return ret;
            }
            if (rc && idx >= DIV_ROUND_UP(s->file_end, s->cs)) {
                /* Past the end of the file everything is free. */
                qcow2_signal_corruption(s, "cluster %" PRIu64 " past the "
                                        "end of the image has refcount %"
                                        PRIu64, idx, rc);
                return -EIO;
            }
            if (rc) {
                run = 0;
                if (idx == s->free_hint) {
                    s->free_hint = idx + 1;
                }
                continue;
            }
            run++;
        }
        idx -= n;
        /* Refcount blocks for the run. */
        for (uint64_t rt = idx / s->m.rb_entries;
             rt <= (idx + n - 1) / s->m.rb_entries; rt++) {
            if (rt >= s->reftable_entries ||
                !(s->reftable[rt] & QCOW2_OFFSET_MASK)) {
                ret = qcow2_create_refblock(s, rt);
                if (ret < 0) {
                    return ret;
                }
                again = true;
            }
        }
        if (again) {
            continue;
        }
        for (uint64_t i = 0; i < n; i++) {
            ret = qcow2_update_refcount(s, idx + i, 1);
            if (ret < 0) {
                return ret;
            }
        }
        if (idx == s->free_hint) {
            s->free_hint = idx + n;
        }
        *host = idx << s->m.h.cluster_bits;
        s->file_end = MAX(s->file_end, *host + n * s->cs);
        trace_qcow2_alloc_clusters(s->name, *host, n);
        return 0;
    }
    return -EIO;
}

/* Drops one reference to a host cluster; frees its space at zero. */
static int qcow2_free_cluster(BDRVQcow2 *s, uint64_t host, bool punch)
{
    uint64_t idx = qcow2_cluster_index(s, host), rc;
    int ret = qcow2_update_refcount(s, idx, -1);

    if (ret == 0 && punch && s->leaf->unmap &&
        qcow2_get_refcount(s, idx, &rc) == 0 && rc == 0) {
        block_file_punch(s->leaf, idx << s->m.h.cluster_bits, s->cs);
    }
    return ret;
}

/* Drops what an L2 entry referenced (after the entry was rewritten). */
static int qcow2_free_entry(BDRVQcow2 *s, uint64_t entry, bool punch)
{
    Qcow2Cluster c = qcow2_decode_l2(&s->m, entry);

    switch (c.type) {
    case QCOW2_CLUSTER_NORMAL:
    case QCOW2_CLUSTER_ZERO_ALLOC:
        return qcow2_free_cluster(s, c.host_offset, punch);
    case QCOW2_CLUSTER_COMPRESSED: {
        uint64_t first, count;
        int ret = 0;

        qcow2_compressed_span(&s->m, &c, &first, &count);
        for (uint64_t i = 0; i < count && ret == 0; i++) {
            ret = qcow2_free_cluster(s, first + i * s->cs, false);
        }
        return ret;
    }
    default:
        return 0;
    }
}

/* ---- L1 / L2 ---- */

static int qcow2_write_l1_entry(BDRVQcow2 *s, uint64_t i)
{
    uint8_t be[8];

    qcow2_put_be64(be, s->l1[i]);
    return block_file_pwrite(s->leaf, s->m.h.l1_table_offset + i * 8, be, 8);
}

/*
 * The L2 table for guest offset @off, loaded into the cache.  With
 * @alloc a missing table is allocated; otherwise *table is NULL for an
 * unallocated one.
 */
static int qcow2_get_l2(BDRVQcow2 *s, uint64_t off, bool alloc,
                        uint64_t **table, uint64_t *l2_off)
{
    uint64_t i = qcow2_l1_index(&s->m, off);
    uint64_t e, host;
    uint8_t *data = NULL;
    int ret;

    *table = NULL;
    if (i >= s->l1_size) {
        qcow2_signal_corruption(s, "offset 0x%" PRIx64 " beyond the L1 "
                                "table", off);
        return -EIO;
    }
    e = s->l1[i];
    if (e & QCOW2_L1E_RESERVED) {
        qcow2_signal_corruption(s, "L1 entry %" PRIu64 " has reserved bits "
                                "set (0x%" PRIx64 ")", i, e);
        return -EIO;
    }
    host = e & QCOW2_OFFSET_MASK;
    if (!host) {
        if (!alloc) {
            return 0;
        }
        ret = qcow2_alloc_clusters(s, 1, &host);
        if (ret < 0) {
            return ret;
        }
        ret = qcow2_cache_new(s, &s->l2_cache, host, &data);
        if (ret == 0) {
            ret = block_file_pwrite(s->leaf, host, data, s->cs);
        }
        if (ret < 0) {
            qcow2_cache_drop(&s->l2_cache, host);
            qcow2_free_cluster(s, host, false);
            return ret;
        }
        s->l1[i] = host | QCOW2_OFLAG_COPIED;
        ret = qcow2_write_l1_entry(s, i);
        if (ret < 0) {
            return ret;
        }
        trace_qcow2_alloc_l2(s->name, i, host);
    } else {
        if (host % s->cs) {
            qcow2_signal_corruption(s, "L2 table offset 0x%" PRIx64
                                    " unaligned", host);
            return -EIO;
        }
        ret = qcow2_cache_get(s, &s->l2_cache, host, &data);
        if (ret < 0) {
            return ret;
        }
    }
    *table = (uint64_t *)data;
    *l2_off = host;
    return 0;
}

static inline uint64_t qcow2_l2_read(const uint64_t *table, uint64_t i)
{
    return GUINT64_FROM_BE(table[i]);
}

static int qcow2_write_l2_entries(BDRVQcow2 *s, uint64_t l2_off,
                                  uint64_t *table, uint64_t first,
                                  uint64_t n)
{
    return qcow2_write_cached(s, l2_off, (const uint8_t *)table, first * 8,
                             n * 8);
}

/* The L2 entry of a guest offset (0 when its table is unallocated). */
int qcow2_lookup(BDRVQcow2 *s, uint64_t off, uint64_t *entry)
{
    uint64_t *table, l2_off;
    int ret = qcow2_get_l2(s, off, false, &table, &l2_off);

    *entry = 0;
    if (ret == 0 && table) {
        *entry = qcow2_l2_read(table, qcow2_l2_index(&s->m, off));
    }
    return ret;
}

/* ---- reading clusters ---- */

static int qcow2_decompress(BDRVQcow2 *s, const Qcow2Cluster *c,
                            uint8_t *out)
{
    z_stream z = { 0 };
    uint64_t len = MIN(c->compressed_len, 2 * s->cs + 512);
    g_autofree uint8_t *in = NULL;
    int ret, zr;

    if (s->dcache_valid && s->dcache_host == c->host_offset) {
        memcpy(out, s->dcache, s->cs);
        return 0;
    }
    if (c->host_offset >= s->file_end) {
        qcow2_signal_corruption(s, "compressed cluster at 0x%" PRIx64
                                " beyond the end of the image",
                                c->host_offset);
        return -EIO;
    }
    len = MIN(len, s->file_end - c->host_offset);
    in = g_try_malloc(len);
    if (!in) {
        return -ENOMEM;
    }
    ret = block_file_pread(s->leaf, c->host_offset, in, len);
    if (ret < 0) {
        return ret;
    }
    if (inflateInit2(&z, -12) != Z_OK) {
        return -ENOMEM;
    }
    z.next_in = in;
    z.avail_in = len;
    z.next_out = out;
    z.avail_out = s->cs;
    zr = inflate(&z, Z_FINISH);
    inflateEnd(&z);
    if ((zr != Z_STREAM_END && zr != Z_BUF_ERROR) || z.avail_out != 0) {
        qcow2_signal_corruption(s, "compressed cluster at 0x%" PRIx64
                                " does not decompress", c->host_offset);
        return -EIO;
    }
    if (!s->dcache) {
        s->dcache = g_malloc(s->cs);
    }
    memcpy(s->dcache, out, s->cs);
    s->dcache_host = c->host_offset;
    s->dcache_valid = true;
    return 0;
}

/* Reads [off, off+len) of the backing node (zeroes past its end). */
static int qcow2_read_backing(BDRVQcow2 *s, BlockNode *bs, uint64_t off,
                              uint8_t *buf, uint64_t len)
{
    BlockNode *backing = bs->backing;
    uint64_t have = 0;
    struct iovec v = { buf, len };
    BlockMap m;
    int ret = 0;

    if (backing && off < backing->size) {
        have = MIN(len, backing->size - off);
        block_map_init(&m, &v, 1);
        ret = block_map(backing, false, off, have, &m, 0);
        if (ret == 0) {
            ret = block_map_run(&m, false);
        }
        block_map_destroy(&m);
    }
    memset(buf + have, 0, len - have);
    return ret;
}

/* The current contents of [in, in+len) of the guest cluster at @goff. */
static int qcow2_read_old(BDRVQcow2 *s, BlockNode *bs, uint64_t entry,
                          uint64_t goff, uint64_t in, uint8_t *buf,
                          uint64_t len)
{
    Qcow2Cluster c = qcow2_decode_l2(&s->m, entry);
    int ret;

    if (!len) {
        return 0;
    }
    switch (c.type) {
    case QCOW2_CLUSTER_NORMAL:
        return block_file_pread(s->leaf, c.host_offset + in, buf, len);
    case QCOW2_CLUSTER_ZERO_PLAIN:
    case QCOW2_CLUSTER_ZERO_ALLOC:
        memset(buf, 0, len);
        return 0;
    case QCOW2_CLUSTER_UNALLOCATED:
        return qcow2_read_backing(s, bs, goff + in, buf, len);
    case QCOW2_CLUSTER_COMPRESSED: {
        g_autofree uint8_t *full = g_try_malloc(s->cs);

        if (!full) {
            return -ENOMEM;
        }
        ret = qcow2_decompress(s, &c, full);
        if (ret == 0) {
            memcpy(buf, full + in, len);
        }
        return ret;
    }
    default:
        qcow2_signal_corruption(s, "invalid L2 entry 0x%" PRIx64
                                " for guest offset 0x%" PRIx64, entry, goff);
        return -EIO;
    }
}

static int qcow2_map_read(BlockNode *bs, BDRVQcow2 *s, uint64_t off,
                          uint64_t len, BlockMap *m, size_t qoff)
{
    while (len) {
        uint64_t in = off & (s->cs - 1);
        uint64_t n = MIN(len, s->cs - in);
        uint64_t entry;
        Qcow2Cluster c;
        int ret = qcow2_lookup(s, off, &entry);

        if (ret < 0) {
            return ret;
        }
        c = qcow2_decode_l2(&s->m, entry);
        switch (c.type) {
        case QCOW2_CLUSTER_NORMAL:
            block_map_add_extent(m, s->leaf, c.host_offset + in, n, qoff);
            break;
        case QCOW2_CLUSTER_ZERO_PLAIN:
        case QCOW2_CLUSTER_ZERO_ALLOC:
            block_iov_memset(m->iov, m->niov, qoff, 0, n);
            break;
        case QCOW2_CLUSTER_UNALLOCATED:
            if (bs->backing && off < bs->backing->size) {
                uint64_t have = MIN(n, bs->backing->size - off);

                ret = block_map(bs->backing, false, off, have, m, qoff);
                if (ret < 0) {
                    return ret;
                }
                block_iov_memset(m->iov, m->niov, qoff + have, 0, n - have);
            } else {
                block_iov_memset(m->iov, m->niov, qoff, 0, n);
            }
            break;
        case QCOW2_CLUSTER_COMPRESSED: {
            g_autofree uint8_t *full = g_try_malloc(s->cs);

            if (!full) {
                return -ENOMEM;
            }
            ret = qcow2_decompress(s, &c, full);
            if (ret < 0) {
                return ret;
            }
            block_iov_from_buf(m->iov, m->niov, qoff, full + in, n);
            break;
        }
        default:
            qcow2_signal_corruption(s, "invalid L2 entry 0x%" PRIx64
                                    " for guest offset 0x%" PRIx64, entry,
                                    off);
            return -EIO;
        }
        off += n;
        len -= n;
        qoff += n;
    }
    return 0;
}

/* ---- writing ---- */

static bool qcow2_in_place(const BDRVQcow2 *s, uint64_t entry)
{
    Qcow2Cluster c = qcow2_decode_l2(&s->m, entry);

    return c.type == QCOW2_CLUSTER_NORMAL && c.copied;
}

/*
 * An allocating write of guest clusters [first, first+n) of one L2 table,
 * of which the request covers [off, off+len) at request byte qoff: new
 * host clusters, the old contents around the data, then the L2 entries,
 * then the old clusters' references dropped.
 */
static int qcow2_alloc_write(BlockNode *bs, BDRVQcow2 *s, uint64_t *table,
                             uint64_t l2_off, uint64_t first, uint64_t n,
                             uint64_t off, uint64_t len, BlockMap *m,
                             size_t qoff)
{
    uint64_t gstart = off & ~(s->cs - 1);
    uint64_t head = off - gstart;
    uint64_t end = off + len;
    uint64_t tail_start = end & (s->cs - 1);
    uint64_t tail = tail_start ? s->cs - tail_start : 0;
    g_autofree uint64_t *old = g_new(uint64_t, n);
    g_autofree uint8_t *hbuf = NULL, *tbuf = NULL;
    g_autoptr(GArray) iov = g_array_new(false, false, sizeof(struct iovec));
    uint64_t host;
    int ret;

    for (uint64_t i = 0; i < n; i++) {
        old[i] = qcow2_l2_read(table, first + i);
    }
    if (head) {
        hbuf = g_try_malloc(head);
        if (!hbuf) {
            return -ENOMEM;
        }
        ret = qcow2_read_old(s, bs, old[0], gstart, 0, hbuf, head);
        if (ret < 0) {
            return ret;
        }
        g_array_append_val(iov, ((struct iovec) { hbuf, head }));
    }
    block_iov_slice(m->iov, m->niov, qoff, len, iov);
    if (tail) {
        uint64_t last = end & ~(s->cs - 1);

        tbuf = g_try_malloc(tail);
        if (!tbuf) {
            return -ENOMEM;
        }
        ret = qcow2_read_old(s, bs, old[n - 1], last, tail_start, tbuf, tail);
        if (ret < 0) {
            return ret;
        }
        g_array_append_val(iov, ((struct iovec) { tbuf, tail }));
    }
    ret = qcow2_alloc_clusters(s, n, &host);
    if (ret < 0) {
        return ret;
    }
    ret = block_file_pwritev(s->leaf, host, (struct iovec *)iov->data,
                             iov->len);
    if (ret < 0) {
        for (uint64_t i = 0; i < n; i++) {
            qcow2_free_cluster(s, host + i * s->cs, false);
        }
        return ret;
    }
    for (uint64_t i = 0; i < n; i++) {
        table[first + i] = GUINT64_TO_BE((host + i * s->cs) |
                                         QCOW2_OFLAG_COPIED);
    }
    ret = qcow2_write_l2_entries(s, l2_off, table, first, n);
    if (ret < 0) {
        /* The table in memory must match the file: reload it. */
        qcow2_cache_drop(&s->l2_cache, l2_off);
        return ret;
    }
    trace_qcow2_alloc_write(s->name, off, len, host, n);
    for (uint64_t i = 0; i < n; i++) {
        Qcow2Cluster c = qcow2_decode_l2(&s->m, old[i]);

        if (c.type == QCOW2_CLUSTER_COMPRESSED && s->dcache_valid &&
            s->dcache_host == c.host_offset) {
            s->dcache_valid = false;
        }
        ret = qcow2_free_entry(s, old[i], false);
        if (ret < 0) {
            return ret;
        }
    }
    return 0;
}

static int qcow2_map_write(BlockNode *bs, BDRVQcow2 *s, uint64_t off,
                           uint64_t len, BlockMap *m, size_t qoff)
{
    while (len) {
        uint64_t *table, l2_off;
        uint64_t i = qcow2_l2_index(&s->m, off);
        uint64_t in = off & (s->cs - 1);
        uint64_t n = MIN(len, s->cs - in);
        int ret = qcow2_get_l2(s, off, true, &table, &l2_off);

        if (ret < 0) {
            return ret;
        }
        if (qcow2_in_place(s, qcow2_l2_read(table, i))) {
            uint64_t host = qcow2_l2_read(table, i) & QCOW2_OFFSET_MASK;

            block_map_add_extent(m, s->leaf, host + in, n, qoff);
        } else {
            /* A run of clusters needing allocation, in this table. */
            uint64_t k = 1, span = n;

            while (span < len && i + k < s->m.l2_entries &&
                   k < s->m.rb_entries / 2 &&
                   !qcow2_in_place(s, qcow2_l2_read(table, i + k))) {
                span += MIN(len - span, s->cs);
                k++;
            }
            ret = qcow2_alloc_write(bs, s, table, l2_off, i, k, off, span, m,
                                    qoff);
            if (ret < 0) {
                return ret;
            }
            n = span;
        }
        off += n;
        len -= n;
        qoff += n;
    }
    return 0;
}

static int qcow2_map(BlockNode *bs, bool write, uint64_t off, uint64_t len,
                     BlockMap *m, size_t qoff)
{
    BDRVQcow2 *s = bs->opaque;

    if (write) {
        if (!s->writable) {
            return -EROFS;
        }
        return qcow2_map_write(bs, s, off, len, m, qoff);
    }
    return qcow2_map_read(bs, s, off, len, m, qoff);
}

/* ---- discard, write zeroes ---- */

/*
 * Rewrites the L2 entries of the whole clusters in [off, off+len) (both
 * cluster aligned) with what @make returns, then drops old references.
 */
static int qcow2_rewrite_clusters(BlockNode *bs, BDRVQcow2 *s, uint64_t off,
                                  uint64_t len, bool zero, bool unmap)
{
    while (len) {
        uint64_t *table, l2_off;
        uint64_t i = qcow2_l2_index(&s->m, off);
        uint64_t k = MIN(len >> s->m.h.cluster_bits, s->m.l2_entries - i);
        g_autofree uint64_t *old = g_new(uint64_t, k);
        bool need_table = zero || bs->backing;
        int ret = qcow2_get_l2(s, off, false, &table, &l2_off);

        if (ret < 0) {
            return ret;
        }
        if (!table && need_table) {
            ret = qcow2_get_l2(s, off, true, &table, &l2_off);
            if (ret < 0) {
                return ret;
            }
        }
        if (table) {
            for (uint64_t j = 0; j < k; j++) {
                uint64_t e = qcow2_l2_read(table, i + j), ne;
                Qcow2Cluster c = qcow2_decode_l2(&s->m, e);

                old[j] = e;
                if (zero && !unmap && c.type == QCOW2_CLUSTER_NORMAL &&
                    c.copied) {
                    ne = e | QCOW2_OFLAG_ZERO;      /* keep the space */
                    old[j] = 0;
                } else if (zero || bs->backing) {
                    ne = QCOW2_OFLAG_ZERO;
                } else {
                    ne = 0;
                }
                if (c.type == QCOW2_CLUSTER_ZERO_ALLOC && !unmap && zero) {
                    ne = e;
                    old[j] = 0;
                }
                table[i + j] = GUINT64_TO_BE(ne);
            }
            ret = qcow2_write_l2_entries(s, l2_off, table, i, k);
            if (ret < 0) {
                qcow2_cache_drop(&s->l2_cache, l2_off);
                return ret;
            }
            for (uint64_t j = 0; j < k; j++) {
                ret = qcow2_free_entry(s, old[j], true);
                if (ret < 0) {
                    return ret;
                }
            }
        }
        off += k << s->m.h.cluster_bits;
        len -= k << s->m.h.cluster_bits;
    }
    return 0;
}

static int qcow2_discard(BlockNode *bs, uint64_t off, uint64_t len)
{
    BDRVQcow2 *s = bs->opaque;
    uint64_t start = ROUND_UP(off, s->cs);
    uint64_t end = off + len == bs->size ? ROUND_UP(off + len, s->cs)
                                         : (off + len) & ~(s->cs - 1);

    if (!s->writable) {
        return -EROFS;
    }
    if (s->m.h.version < 3 && bs->backing) {
        return 0;   /* no zero clusters: the backing file would show */
    }
    s->dcache_valid = false;
    if (end <= start) {
        return 0;   /* only partial clusters: a hint we may ignore */
    }
    return qcow2_rewrite_clusters(bs, s, start, end - start, false, true);
}

/* Zeroes written as data (partial clusters, version 2). */
static int qcow2_write_zero_data(BlockNode *bs, uint64_t off, uint64_t len)
{
    BDRVQcow2 *s = bs->opaque;
    size_t chunk = MAX(s->cs, 65536);
    g_autofree uint8_t *zero = g_malloc0(chunk);
    int ret = 0;

    while (len && ret == 0) {
        uint64_t n = MIN(len, chunk);
        struct iovec v = { zero, n };
        BlockMap m;

        block_map_init(&m, &v, 1);
        ret = qcow2_map_write(bs, s, off, n, &m, 0);
        if (ret == 0) {
            ret = block_map_run(&m, true);
        }
        block_map_destroy(&m);
        off += n;
        len -= n;
    }
    return ret;
}

static int qcow2_write_zeroes(BlockNode *bs, uint64_t off, uint64_t len,
                              bool may_unmap)
{
    BDRVQcow2 *s = bs->opaque;
    uint64_t start = ROUND_UP(off, s->cs);
    uint64_t end = off + len == bs->size ? ROUND_UP(off + len, s->cs)
                                         : (off + len) & ~(s->cs - 1);
    int ret;

    if (!s->writable) {
        return -EROFS;
    }
    s->dcache_valid = false;
    if (s->m.h.version < 3 || end <= start) {
        return qcow2_write_zero_data(bs, off, len);
    }
    if (start > off) {
        ret = qcow2_write_zero_data(bs, off, start - off);
        if (ret < 0) {
            return ret;
        }
    }
    ret = qcow2_rewrite_clusters(bs, s, start, end - start, true, may_unmap);
    if (ret == 0 && off + len > end && end < bs->size) {
        ret = qcow2_write_zero_data(bs, end, off + len - end);
    }
    return ret;
}

/* ---- flush, resize ---- */

static int qcow2_flush(BlockNode *bs)
{
    BDRVQcow2 *s = bs->opaque;
    int ret;

    if (!s->writable) {
        return 0;
    }
    ret = qcow2_cache_flush(s, &s->rb_cache);
    if (ret == 0 && !bs->file->no_flush) {
        ret = block_file_flush(s->leaf);
    }
    return ret;
}

static bool qcow2_truncate(BlockNode *bs, uint64_t size, Error **errp)
{
    BDRVQcow2 *s = bs->opaque;
    uint64_t need = qcow2_l1_entries_for(s->m.h.cluster_bits, size);
    uint8_t hdr[12], be[8];
    int ret;

    if (!s->writable) {
        error_setg(errp, "Cannot resize read-only qcow2 node '%s'",
                   bs->node_name);
        return false;
    }
    if (size < bs->size) {
        error_setg(errp, "qcow2 node '%s' cannot shrink (%" PRIu64 " -> %"
                   PRIu64 ")", bs->node_name, bs->size, size);
        error_append_hint(errp, "Shrinking would lose data; use qemu-img "
                          "resize --shrink on a stopped VM.\n");
        return false;
    }
    if (need * 8 > QCOW2_MAX_L1_BYTES) {
        error_setg(errp, "qcow2 node '%s': size %" PRIu64 " needs an L1 "
                   "table larger than 32 MiB", bs->node_name, size);
        return false;
    }
    if (need > s->l1_size) {
        uint64_t new_entries = need;
        uint64_t clusters = DIV_ROUND_UP(new_entries * 8, s->cs);
        uint64_t old_off = s->m.h.l1_table_offset;
        uint64_t old_clusters = DIV_ROUND_UP(s->l1_size * 8, s->cs);
        g_autofree uint8_t *buf = g_malloc0(clusters * s->cs);
        uint64_t *l1 = g_new0(uint64_t, new_entries);
        uint64_t host;

        memcpy(l1, s->l1, s->l1_size * 8);
        for (uint64_t i = 0; i < new_entries; i++) {
            qcow2_put_be64(buf + i * 8, l1[i]);
        }
        ret = qcow2_alloc_clusters(s, clusters, &host);
        if (ret == 0) {
            ret = block_file_pwrite(s->leaf, host, buf, clusters * s->cs);
        }
        if (ret == 0) {
            ret = block_file_flush(s->leaf);
        }
        if (ret == 0) {
            qcow2_put_be32(hdr, new_entries);
            qcow2_put_be64(hdr + 4, host);
            ret = block_file_pwrite(s->leaf, 36, hdr, 12);
        }
        if (ret < 0) {
            g_free(l1);
            error_setg_errno(errp, -ret, "qcow2 node '%s': could not grow "
                             "the L1 table", bs->node_name);
            return false;
        }
        g_free(s->l1);
        s->l1 = l1;
        s->l1_size = new_entries;
        s->m.h.l1_size = new_entries;
        s->m.h.l1_table_offset = host;
        for (uint64_t c = 0; c < old_clusters; c++) {
            qcow2_free_cluster(s, old_off + c * s->cs, false);
        }
    }
    qcow2_put_be64(be, size);
    ret = block_file_pwrite(s->leaf, 24, be, 8);
    if (ret == 0) {
        ret = block_file_flush(s->leaf);
    }
    if (ret < 0) {
        error_setg_errno(errp, -ret, "qcow2 node '%s': could not write the "
                         "new size", bs->node_name);
        return false;
    }
    s->m.h.size = size;
    bs->size = size;
    return true;
}

/* ---- open, close ---- */

static const char *const qcow2_accepted_opts[] = {
    "lazy-refcounts", "l2-cache-size", "refcount-cache-size", "cache-size",
    "cache-clean-interval", "pass-discard-request", "pass-discard-snapshot",
    "pass-discard-other", "l2-cache-entry-size", "x-backing-node",
    "overlap-check", NULL,
};

static bool qcow2_check_opts(void *opaque, const char *key, const char *value,
                             Error **errp)
{
    if (!g_strv_contains(qcow2_accepted_opts, key) &&
        !g_str_has_prefix(key, "overlap-check.")) {
        error_setg(errp, "Parameter '%s' is unexpected", key);
        return false;
    }
    return true;
}

static char *qcow2_backing_path(const char *image, const char *backing)
{
    g_autofree char *dir = NULL;

    if (g_path_is_absolute(backing) || strstr(backing, "://")) {
        return g_strdup(backing);
    }
    dir = g_path_get_dirname(image);
    return g_build_filename(dir, backing, NULL);
}

static bool qcow2_open(BlockNode *bs, QemuOpts *opts, Error **errp)
{
    BDRVQcow2 *s = g_new0(BDRVQcow2, 1);
    BlockNode *leaf = block_leaf(bs->file);
    g_autofree uint8_t *buf = NULL;
    uint64_t l2_cache_bytes, rb_cache_bytes, cs;
    int64_t flen;
    size_t hlen;
    int ret;
    bool lazy;
    const char *backing_opt;

    if (!qemu_opt_foreach(opts, qcow2_check_opts, NULL, errp)) {
        g_free(s);
        return false;
    }
    s->leaf = leaf;
    s->name = bs->node_name;
    bs->opaque = s;
    flen = block_file_length(leaf);
    if (flen < 0) {
        error_setg_errno(errp, -flen, "Could not get the size of '%s'",
                         leaf->filename);
        goto fail;
    }
    s->file_end = flen;
    hlen = MIN((uint64_t)flen, 1u << QCOW2_MAX_CLUSTER_BITS);
    buf = g_malloc0(MAX(hlen, QCOW2_V3_HEADER_LEN));
    ret = block_file_pread(leaf, 0, buf, hlen);
    if (ret < 0) {
        error_setg_errno(errp, -ret, "Could not read the qcow2 header of "
                         "'%s'", leaf->filename);
        goto fail;
    }
    if (!qcow2_parse_header(buf, hlen, flen, &s->m, errp)) {
        error_prepend(errp, "'%s': ", leaf->filename);
        goto fail;
    }
    cs = s->cs = s->m.cluster_size;
    s->writable = !bs->read_only;
    if (s->writable && (s->m.h.incompatible_features &
                        QCOW2_INCOMPAT_CORRUPT)) {
        error_setg(errp, "qcow2 image '%s' is marked corrupt; it can be "
                   "opened read-only only", leaf->filename);
        error_append_hint(errp, "Repair it with qemu-img check -r all.\n");
        goto fail;
    }
    if (s->writable && s->m.h.nb_snapshots) {
        error_setg(errp, "qcow2 image '%s' has internal snapshots, which "
                   "Conduit can read but not write", leaf->filename);
        error_append_hint(errp, "Open it read-only, or use an overlay "
                          "(qemu-img create -f qcow2 -b ... -F qcow2).\n");
        goto fail;
    }
    lazy = qemu_opt_get_bool(opts, "lazy-refcounts",
                             !!(s->m.h.compatible_features &
                                QCOW2_COMPAT_LAZY_REFCOUNTS), errp);
    if (lazy && s->m.h.version < 3) {
        error_setg(errp, "Lazy refcounts require a qcow2 image with at "
                   "least qemu 1.1 compatibility level");
        goto fail;
    }
    l2_cache_bytes = qemu_opt_get_size(opts, "l2-cache-size",
                                       MIN(32u << 20,
                                           MAX(1u << 20,
                                               s->m.h.size / (cs / 8))),
                                       errp);
    rb_cache_bytes = qemu_opt_get_size(opts, "refcount-cache-size",
                                       MAX(256u << 10, 4 * cs), errp);
    qcow2_cache_init(&s->l2_cache, cs, l2_cache_bytes / cs);
    qcow2_cache_init(&s->rb_cache, cs, rb_cache_bytes / cs);
    /* The active L1 table and the refcount table. */
    s->l1_size = s->m.h.l1_size;
    s->l1 = g_try_new0(uint64_t, MAX(s->l1_size, 1));
    s->reftable_entries = s->m.reftable_entries;
    s->reftable = g_try_new0(uint64_t, s->reftable_entries);
    if (!s->l1 || !s->reftable) {
        error_setg(errp, "qcow2 '%s': out of memory for its tables",
                   leaf->filename);
        goto fail;
    }
    ret = block_file_pread(leaf, s->m.h.l1_table_offset, s->l1,
                           s->l1_size * 8);
    if (ret == 0) {
        ret = block_file_pread(leaf, s->m.h.refcount_table_offset,
                               s->reftable, s->reftable_entries * 8);
    }
    if (ret < 0) {
        error_setg_errno(errp, -ret, "Could not read the qcow2 tables of "
                         "'%s'", leaf->filename);
        goto fail;
    }
    for (uint64_t i = 0; i < s->l1_size; i++) {
        s->l1[i] = GUINT64_FROM_BE(s->l1[i]);
    }
    for (uint64_t i = 0; i < s->reftable_entries; i++) {
        s->reftable[i] = GUINT64_FROM_BE(s->reftable[i]);
        if ((s->reftable[i] & QCOW2_REFT_RESERVED) ||
            (s->reftable[i] % cs)) {
            error_setg(errp, "qcow2 '%s': refcount table entry %" PRIu64
                       " is invalid (0x%" PRIx64 ")", leaf->filename, i,
                       s->reftable[i]);
            error_append_hint(errp, "Repair it with qemu-img check -r "
                              "all.\n");
            goto fail;
        }
    }
    bs->size = s->m.h.size;
    if (s->m.backing_file[0]) {
        bs->backing_name = g_strdup(s->m.backing_file);
    }
    if (s->m.backing_format[0]) {
        bs->backing_fmt = g_strdup(s->m.backing_format);
    }
    /* The backing node: given, refused (null), or named by the image. */
    backing_opt = qemu_opt_get(opts, "x-backing-node");
    if (backing_opt && *backing_opt) {
        bs->backing = block_find(backing_opt);
        g_assert(bs->backing);
        bs->backing->parent = bs;
    } else if (!backing_opt && s->m.backing_file[0]) {
        g_autofree char *path = qcow2_backing_path(leaf->filename,
                                                   s->m.backing_file);
        Error *local = NULL;

        bs->backing = block_open_backing(path, s->m.backing_format,
                                         leaf->direct, &local);
        if (!bs->backing) {
            error_propagate_prepend(errp, local, "Could not open backing "
                                    "file: ");
            goto fail;
        }
        bs->backing->parent = bs;
    }
    /* Writing: repair a dirty image, drop autoclear bits we don't keep. */
    if (s->writable) {
        if (s->m.h.incompatible_features & QCOW2_INCOMPAT_DIRTY) {
            ret = qcow2_repair_refcounts(s, errp);
            if (ret < 0) {
                goto fail_backing;
            }
            ret = qcow2_set_incompat(s, QCOW2_INCOMPAT_DIRTY, false);
            if (ret < 0) {
                error_setg_errno(errp, -ret, "could not mark '%s' clean",
                                 leaf->filename);
                goto fail_backing;
            }
        }
        if (s->m.h.version >= 3 && s->m.h.autoclear_features) {
            s->m.h.autoclear_features = 0;
            ret = qcow2_write_header_field(s, 88, 8);
            if (ret < 0) {
                error_setg_errno(errp, -ret, "could not update the header "
                                 "of '%s'", leaf->filename);
                goto fail_backing;
            }
        }
        s->lazy = lazy;
    }
    s->free_hint = 1;
    trace_qcow2_open(bs->node_name, s->m.h.version, cs, s->m.h.size,
                     s->m.h.refcount_order, s->lazy);
    return true;
fail_backing:
    if (bs->backing) {
        bs->backing->parent = NULL;
        if (bs->backing->implicit) {
            block_node_close_tree(bs->backing);
        }
        bs->backing = NULL;
    }
fail:
    qcow2_cache_destroy(&s->l2_cache);
    qcow2_cache_destroy(&s->rb_cache);
    g_free(s->l1);
    g_free(s->reftable);
    g_free(s);
    bs->opaque = NULL;
    return false;
}

static void qcow2_close(BlockNode *bs)
{
    BDRVQcow2 *s = bs->opaque;

    if (!s) {
        return;
    }
    if (s->writable) {
        int ret = qcow2_cache_flush(s, &s->rb_cache);

        if (ret == 0 && s->dirty_set) {
            ret = qcow2_set_incompat(s, QCOW2_INCOMPAT_DIRTY, false);
        } else if (ret == 0) {
            ret = block_file_flush(s->leaf);
        }
        if (ret < 0) {
            error_report("qcow2 %s: could not write its metadata on close: "
                         "%s", bs->node_name, g_strerror(-ret));
        }
    }
    qcow2_cache_destroy(&s->l2_cache);
    qcow2_cache_destroy(&s->rb_cache);
    g_free(s->l1);
    g_free(s->reftable);
    g_free(s->dcache);
    g_free(s);
    bs->opaque = NULL;
}

/* Lazy refcounts off from here on: the image stays clean after this. */
static void qcow2_mark_clean(BlockNode *bs)
{
    BDRVQcow2 *s = bs->opaque;
    int ret;

    if (!s || !s->writable) {
        return;
    }
    ret = qcow2_cache_flush(s, &s->rb_cache);
    if (ret == 0 && s->dirty_set) {
        s->lazy = false;
        ret = qcow2_set_incompat(s, QCOW2_INCOMPAT_DIRTY, false);
        s->dirty_set = false;
    } else if (ret == 0) {
        ret = block_file_flush(s->leaf);
    }
    if (ret < 0) {
        error_report("qcow2 %s: could not write its metadata: %s",
                     bs->node_name, g_strerror(-ret));
    }
}

static void qcow2_image_info(BlockNode *bs, JsonObject *image)
{
    BDRVQcow2 *s = bs->opaque;
    JsonObject *spec = json_object_new();
    JsonObject *data = json_object_new();

    json_object_set_int_member(image, "cluster-size", s->cs);
    json_object_set_boolean_member(image, "dirty-flag",
                                   !!(s->m.h.incompatible_features &
                                      QCOW2_INCOMPAT_DIRTY));
    json_object_set_string_member(data, "compat",
                                  s->m.h.version >= 3 ? "1.1" : "0.10");
    json_object_set_boolean_member(data, "lazy-refcounts",
                                   !!(s->m.h.compatible_features &
                                      QCOW2_COMPAT_LAZY_REFCOUNTS));
    json_object_set_boolean_member(data, "corrupt",
                                   !!(s->m.h.incompatible_features &
                                      QCOW2_INCOMPAT_CORRUPT));
    json_object_set_int_member(data, "refcount-bits",
                               1u << s->m.h.refcount_order);
    json_object_set_boolean_member(data, "extended-l2", false);
    json_object_set_string_member(data, "compression-type", "zlib");
    json_object_set_string_member(spec, "type", "qcow2");
    json_object_set_object_member(spec, "data", data);
    json_object_set_object_member(image, "format-specific", spec);
}

const BlockFormatDriver qcow2_driver = {
    .name = "qcow2",
    .open = qcow2_open,
    .close = qcow2_close,
    .map = qcow2_map,
    .flush = qcow2_flush,
    .discard = qcow2_discard,
    .write_zeroes = qcow2_write_zeroes,
    .truncate = qcow2_truncate,
    .mark_clean = qcow2_mark_clean,
    .image_info = qcow2_image_info,
};
