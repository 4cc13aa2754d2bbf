/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block layer: named nodes opened from -blockdev / -drive, and
 * asynchronous I/O on them with libaio.
 *
 * Nodes are a small graph as in QEMU: a protocol node (driver=file) owns
 * the file descriptor; a format node (driver=raw) on top of it exposes
 * the same bytes.  A device's drive= names either node (or a -drive id);
 * block_find() resolves it.  Every node is created at start-up (BQL) and
 * lives until exit.  I/O goes through a BlockAIO, which belongs to one
 * thread (the device's worker) and needs no lock.
 */
#ifndef BLOCK_BLOCK_H
#define BLOCK_BLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "qemu/typedefs.h"

typedef struct BlockNode BlockNode;

typedef struct BlockStats {
    uint64_t rd_ops, wr_ops, flush_ops;
    uint64_t rd_bytes, wr_bytes;
    uint64_t unmap_ops, unmap_bytes;
    uint64_t failed_ops;
} BlockStats;

/* -blockdev driver=file|raw,node-name=...  (also its JSON form) */
BlockNode *blockdev_add(QemuOpts *opts, Error **errp);
/* -drive file=..,if=none,id=..,format=raw[,readonly=on][,cache=none] */
BlockNode *drive_add(QemuOpts *opts, Error **errp);

/* Registers query-block & co (main(), after the constructors). */
void block_qmp_init(void);

/* Removes an unused node added by -blockdev or blockdev-add. */
bool blockdev_del(const char *name, Error **errp);

/* A node by node-name, or the top node of a -drive by its id. */
BlockNode *block_find(const char *name);
/*
 * Claims the node for a device (one user per node).  @user is the object
 * query-block names as its "qdev": @dev, or the part of it that does the
 * I/O (a virtio proxy's "virtio-backend" child, as in QEMU).
 */
bool block_attach(BlockNode *bs, DeviceState *dev, Object *user,
                  Error **errp);
void block_detach(BlockNode *bs);

const char *block_node_name(const BlockNode *bs);
uint64_t block_size(const BlockNode *bs);
bool block_is_read_only(const BlockNode *bs);
bool block_is_direct(const BlockNode *bs);
/* discard=unmap on the node and every node below it. */
bool block_may_unmap(const BlockNode *bs);
/* Logical block size the host needs for O_DIRECT (512 otherwise). */
unsigned block_alignment(const BlockNode *bs);
/* Adds to the node's statistics (thread-safe). */
void block_account(BlockNode *bs, int kind, uint64_t bytes, bool failed);
#define BLOCK_ACCT_READ 0
#define BLOCK_ACCT_WRITE 1
#define BLOCK_ACCT_FLUSH 2
#define BLOCK_ACCT_DISCARD 3

void block_foreach(void (*fn)(BlockNode *bs, void *opaque), void *opaque);
/* For query-block / query-named-block-nodes (block/qmp.c). */
typedef struct BlockNodeInfo {
    const char *node_name;
    const char *driver;
    const char *filename;
    const char *file_child;     /* node-name of the child, or NULL */
    const char *drive_id;       /* -drive id of a top node, or NULL */
    DeviceState *dev;           /* attached device, or NULL */
    Object *user;               /* its query-block "qdev" object */
    uint64_t size;
    bool read_only;
    bool direct;
    BlockStats stats;
} BlockNodeInfo;
void block_node_info(BlockNode *bs, BlockNodeInfo *info);

/* ---- asynchronous I/O ---- */

typedef struct BlockAIO BlockAIO;
/* ret: bytes transferred, or -errno. */
typedef void BlockAIOCompletion(void *opaque, ssize_t ret);

BlockAIO *block_aio_new(BlockNode *bs, unsigned depth, Error **errp);
void block_aio_free(BlockAIO *aio);
/* Readable when completions are ready: call block_aio_poll(). */
int block_aio_fd(BlockAIO *aio);
/*
 * Starts a read or write of the iovec at byte offset.  The caller keeps
 * iov's buffers alive until cb runs.  Returns false (cb not called) when
 * the ring is full or the kernel refused: the caller fails the request.
 */
bool block_aio_rw(BlockAIO *aio, bool write, uint64_t offset,
                  const struct iovec *iov, unsigned niov,
                  BlockAIOCompletion *cb, void *opaque);
/* Runs the callbacks of completed requests. */
void block_aio_poll(BlockAIO *aio);
unsigned block_aio_inflight(BlockAIO *aio);
/* Waits for (and completes) everything in flight. */
void block_aio_drain(BlockAIO *aio);
/* Makes every completed write durable (fdatasync); 0 or -errno. */
int block_flush(BlockNode *bs);
/*
 * Synchronous; the caller's thread (a device worker) waits.  DISCARD
 * frees the range where the node has discard=unmap and is a successful
 * no-op otherwise (the data may stay).  WRITE_ZEROES makes the range
 * read as zeroes; with may_unmap and discard=unmap by freeing it.
 * 0 or -errno.
 */
int block_discard(BlockNode *bs, uint64_t offset, uint64_t len);
int block_write_zeroes(BlockNode *bs, uint64_t offset, uint64_t len,
                       bool may_unmap);

#endif
