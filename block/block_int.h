/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block layer's inside (private to block/): the node structure, the
 * format-driver interface, and request mapping.
 *
 * A request on a node is *mapped* into extents, each a byte range of one
 * host file descriptor and the part of the request's iovec it fills.  A
 * protocol node (file) maps to itself; raw maps to its file child; qcow2
 * translates through its L1/L2 tables, fills zero and compressed clusters
 * and does allocating (copy-on-write) writes itself, and maps unallocated
 * clusters to its backing node.  The extents are then read or written
 * synchronously (block_map_run) or through libaio (aio.c), so the hot
 * path -- reads and overwrites of allocated clusters -- costs one lookup
 * in the L2 cache and no metadata I/O.
 */
#ifndef BLOCK_BLOCK_INT_H
#define BLOCK_BLOCK_INT_H

#include <glib.h>
#include <stdint.h>
#include <sys/uio.h>
#include "block/block.h"
#include "block/throttle.h"

typedef struct BlockMap BlockMap;

#define qatomic_read(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define qatomic_set(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define qatomic_xchg(p, v) __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST)
#define qatomic_inc(p) __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST)
#define qatomic_dec(p) __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST)
#include <json-glib/json-glib.h>

typedef struct BlockFormatDriver {
    const char *name;
    /* @opts holds the driver's own keys; every other key is consumed. */
    bool (*open)(BlockNode *bs, QemuOpts *opts, Error **errp);
    void (*close)(BlockNode *bs);
    /* Maps [off, off+len) of the request at request byte qoff; -errno. */
    int (*map)(BlockNode *bs, bool write, uint64_t off, uint64_t len,
               BlockMap *m, size_t qoff);
    /* Metadata to the file, then the file to the medium; 0 or -errno. */
    int (*flush)(BlockNode *bs);
    int (*discard)(BlockNode *bs, uint64_t off, uint64_t len);
    int (*write_zeroes)(BlockNode *bs, uint64_t off, uint64_t len,
                        bool may_unmap);
    bool (*truncate)(BlockNode *bs, uint64_t size, Error **errp);
    /* At exit: metadata out, the image marked clean (lazy refcounts). */
    void (*mark_clean)(BlockNode *bs);
    /* query-block's "image": cluster-size, dirty-flag, format-specific. */
    void (*image_info)(BlockNode *bs, JsonObject *image);
    /* Is the range's first byte allocated in this node (not backing)? */
} BlockFormatDriver;

extern const BlockFormatDriver qcow2_driver;

struct BlockNode {
    char *node_name;
    char *driver;           /* "file", "raw", "qcow2" */
    char *filename;
    BlockNode *file;        /* format nodes: the protocol node below */
    BlockNode *backing;     /* qcow2: the backing node, or NULL */
    char *backing_fmt;      /* what the image header names, for query */
    char *backing_name;     /* the image header's backing file name */
    char *drive_id;         /* -drive id, top node only */
    int fd;                 /* file nodes */
    bool read_only;
    bool direct;
    bool unmap;             /* discard=unmap: DISCARD frees blocks */
    bool blkdev;            /* file nodes: a block device, not a file */
    bool no_flush;          /* cache.no-flush: flush is a no-op */
    bool implicit;          /* opened by its parent; closed with it */
    int detect_zeroes;      /* BLOCK_DETECT_ZEROES_* */
    unsigned alignment;
    uint64_t size;
    const BlockFormatDriver *fmt;   /* qcow2; NULL for file and raw */
    void *opaque;                   /* the format driver's state */
    DeviceState *dev;
    Object *user;           /* query-block's "qdev" (dev or a child) */
    bool share_rw;          /* every device on it has share-rw=on */
    bool locking;           /* file nodes: image locks taken (lock.c) */
    bool force_share;
    uint64_t lock_perm, lock_unshared;
    GSList *shared_users;   /* further devices (DeviceState, Object) */
    BlockNode *parent;      /* the node using this one (file or backing) */
    GMutex stats_lock;
    BlockStats stats;

    /*
     * Held by the I/O thread while it maps a request and by the main
     * thread while it changes the graph or the size (blockdev-snapshot,
     * block_resize): the format driver's metadata is under it.
     */
    GMutex lock;
    /* Requests of a device on this node that have not completed. */
    unsigned inflight;      /* atomic */
    /* Device-level state on the top node of a device. */
    BlockErrorAction werror, rerror;
    ThrottleGroupState *throttle;
    char *throttle_group;
    GSList *resize_notifiers;       /* BlockResizeNotifier */
    BlockNode *redirect;            /* blockdev-snapshot: the new top */
    uint64_t wr_highest_offset;     /* atomic: end of the highest write */
    int io_status;                  /* atomic: BLOCK_IO_STATUS_* */
};

#define BLOCK_IO_STATUS_OK 0
#define BLOCK_IO_STATUS_FAILED 1
#define BLOCK_IO_STATUS_NOSPACE 2

/* Image locking (lock.c), QEMU's permission bits. */
#define BLOCK_PERM_CONSISTENT_READ (1u << 0)
#define BLOCK_PERM_WRITE (1u << 1)
#define BLOCK_PERM_WRITE_UNCHANGED (1u << 2)
#define BLOCK_PERM_RESIZE (1u << 3)
#define BLOCK_PERM_BITS 4
bool block_lock_apply(BlockNode *bs, uint64_t perm, uint64_t unshared,
                      Error **errp);
/* A device (or a snapshot overlay) writes through @bs: take write locks. */
bool block_lock_for_device(BlockNode *bs, bool share_rw, Error **errp);

/* The node that holds the data fd for a file-level access. */
BlockNode *block_leaf(const BlockNode *bs);

/* ---- request mapping ---- */

typedef struct BlockExtent {
    BlockNode *leaf;        /* a file node */
    uint64_t host_off;
    uint64_t len;
    size_t qoff;            /* where in the request's iovec */
} BlockExtent;

struct BlockMap {
    const struct iovec *iov;
    unsigned niov;
    GArray *ext;            /* BlockExtent */
};

void block_map_init(BlockMap *m, const struct iovec *iov, unsigned niov);
void block_map_destroy(BlockMap *m);
/* Maps a request (or part of one) on @bs; the node lock is held. */
int block_map(BlockNode *bs, bool write, uint64_t off, uint64_t len,
              BlockMap *m, size_t qoff);
/* Runs the mapped extents synchronously; 0 or -errno. */
int block_map_run(BlockMap *m, bool write);

/* iovec helpers */
size_t block_iov_to_buf(const struct iovec *iov, unsigned niov, size_t off,
                        void *buf, size_t len);
size_t block_iov_from_buf(const struct iovec *iov, unsigned niov, size_t off,
                          const void *buf, size_t len);
void block_iov_memset(const struct iovec *iov, unsigned niov, size_t off,
                      int c, size_t len);
/* The part [off, off+len) of an iovec, appended to @out (struct iovec). */
void block_iov_slice(const struct iovec *iov, unsigned niov, size_t off,
                     size_t len, GArray *out);
bool block_iov_is_zero(const struct iovec *iov, unsigned niov);

/*
 * Synchronous I/O on a file node's fd with O_DIRECT bouncing; short reads
 * (end of file) read zeroes.  0 or -errno.
 */
int block_file_preadv(BlockNode *leaf, uint64_t off, const struct iovec *iov,
                      unsigned niov);
int block_file_pwritev(BlockNode *leaf, uint64_t off, const struct iovec *iov,
                       unsigned niov);
int block_file_pread(BlockNode *leaf, uint64_t off, void *buf, size_t len);
int block_file_pwrite(BlockNode *leaf, uint64_t off, const void *buf,
                      size_t len);
int block_file_flush(BlockNode *leaf);
int block_file_punch(BlockNode *leaf, uint64_t off, uint64_t len);
int64_t block_file_length(BlockNode *leaf);

/* Synchronous reads and writes on any node (takes the node lock). */
int block_node_preadv(BlockNode *bs, uint64_t off, const struct iovec *iov,
                      unsigned niov);
int block_node_pwritev(BlockNode *bs, uint64_t off, const struct iovec *iov,
                       unsigned niov);

/* Opening nodes (block.c). */
BlockNode *block_node_new(const char *name, const char *driver);
void block_node_drop(BlockNode *bs);
/* Opens an image by file name as a read-only backing node. */
BlockNode *block_open_backing(const char *filename, const char *format,
                              bool direct, Error **errp);
/* Closes a node and the implicit nodes below it. */
void block_node_close_tree(BlockNode *bs);
/* Size changes (block_resize): tells the device. */
void block_notify_resize(BlockNode *bs);

#endif
