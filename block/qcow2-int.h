/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qcow2 driver's state, shared by qcow2.c (I/O, allocation) and
 * qcow2-check.c (refcount repair of a dirty image).  Private to block/.
 */
#ifndef BLOCK_QCOW2_INT_H
#define BLOCK_QCOW2_INT_H

#include <glib.h>
#include "block/qcow2.h"

typedef struct Qcow2Cache {
    GHashTable *map;            /* uint64_t offset -> Qcow2CacheEntry */
    GQueue lru;                 /* most recent first */
    size_t cluster_size;
    unsigned max;
} Qcow2Cache;

typedef struct BDRVQcow2 {
    Qcow2Meta m;
    const char *name;           /* the node's name, for messages */
    BlockNode *leaf;            /* the protocol node holding the image */
    uint64_t cs;                /* cluster size */
    uint64_t *l1;               /* host byte order */
    uint64_t l1_size;
    uint64_t *reftable;         /* host byte order */
    uint64_t reftable_entries;
    Qcow2Cache l2_cache;
    Qcow2Cache rb_cache;
    uint64_t free_hint;         /* no free cluster below this index */
    uint64_t file_end;          /* bytes in the image file we know of */
    bool writable;
    bool lazy;                  /* lazy refcounts in effect */
    bool dirty_set;             /* we set the dirty bit */
    bool corrupt_reported;
    /* The last decompressed cluster (sequential reads). */
    uint8_t *dcache;
    uint64_t dcache_host;
    bool dcache_valid;
} BDRVQcow2;

void qcow2_signal_corruption(BDRVQcow2 *s, const char *fmt, ...)
    G_GNUC_PRINTF(2, 3);
int qcow2_get_refcount(BDRVQcow2 *s, uint64_t idx, uint64_t *out);
int qcow2_update_refcount(BDRVQcow2 *s, uint64_t idx, int64_t delta);
int qcow2_alloc_clusters(BDRVQcow2 *s, uint64_t n, uint64_t *host);
int qcow2_lookup(BDRVQcow2 *s, uint64_t off, uint64_t *entry);
/* Rebuilds the refcounts of a dirty image from its L1/L2 tables. */
int qcow2_repair_refcounts(BDRVQcow2 *s, Error **errp);
/* Sets cluster @idx's refcount to @value (repair). */
int qcow2_set_refcount(BDRVQcow2 *s, uint64_t idx, uint64_t value);

#endif
