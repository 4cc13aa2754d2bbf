/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Request mapping and synchronous I/O (block_int.h): iovec helpers, the
 * file-level pread/pwrite every format driver's metadata goes through
 * (with the bounce O_DIRECT needs), and mapped requests run without
 * libaio (backing reads for copy-on-write, blockdev-create, tests).
 */
#include "qemu/osdep.h"
#include <linux/falloc.h>
#include <linux/fs.h>
#include "block/block_int.h"

size_t block_iov_to_buf(const struct iovec *iov, unsigned niov, size_t off,
                        void *buf, size_t len)
{
    size_t done = 0;

    for (unsigned i = 0; i < niov && done < len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t n = MIN(iov[i].iov_len - off, len - done);

        memcpy((uint8_t *)buf + done, (uint8_t *)iov[i].iov_base + off, n);
        done += n;
        off = 0;
    }
    return done;
}

size_t block_iov_from_buf(const struct iovec *iov, unsigned niov, size_t off,
                          const void *buf, size_t len)
{
    size_t done = 0;

    for (unsigned i = 0; i < niov && done < len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t n = MIN(iov[i].iov_len - off, len - done);

        memcpy((uint8_t *)iov[i].iov_base + off, (const uint8_t *)buf + done,
               n);
        done += n;
        off = 0;
    }
    return done;
}

void block_iov_memset(const struct iovec *iov, unsigned niov, size_t off,
                      int c, size_t len)
{
    for (unsigned i = 0; i < niov && len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        size_t n = MIN(iov[i].iov_len - off, len);

        memset((uint8_t *)iov[i].iov_base + off, c, n);
        len -= n;
        off = 0;
    }
}

void block_iov_slice(const struct iovec *iov, unsigned niov, size_t off,
                     size_t len, GArray *out)
{
    for (unsigned i = 0; i < niov && len; i++) {
        if (off >= iov[i].iov_len) {
            off -= iov[i].iov_len;
            continue;
        }
        struct iovec v = {
            .iov_base = (uint8_t *)iov[i].iov_base + off,
            .iov_len = MIN(iov[i].iov_len - off, len),
        };

        g_array_append_val(out, v);
        len -= v.iov_len;
        off = 0;
    }
}

static bool block_buf_is_zero(const uint8_t *p, size_t len)
{
    while (len && ((uintptr_t)p & 7)) {
        if (*p++) {
            return false;
        }
        len--;
    }
    for (; len >= 8; p += 8, len -= 8) {
        if (*(const uint64_t *)p) {
            return false;
        }
    }
    while (len--) {
        if (*p++) {
            return false;
        }
    }
    return true;
}

bool block_iov_is_zero(const struct iovec *iov, unsigned niov)
{
    for (unsigned i = 0; i < niov; i++) {
        if (!block_buf_is_zero(iov[i].iov_base, iov[i].iov_len)) {
            return false;
        }
    }
    return true;
}

BlockNode *block_leaf(const BlockNode *bs)
{
    while (bs->file) {
        bs = bs->file;
    }
    return (BlockNode *)bs;
}

static bool block_file_aligned(BlockNode *leaf, uint64_t off,
                               const struct iovec *iov, unsigned niov)
{
    unsigned a = leaf->direct ? leaf->alignment : 1;

    if (a <= 1) {
        return true;
    }
    if (off % a) {
        return false;
    }
    for (unsigned i = 0; i < niov; i++) {
        if ((uintptr_t)iov[i].iov_base % a || iov[i].iov_len % a) {
            return false;
        }
    }
    return true;
}

static size_t block_iov_total(const struct iovec *iov, unsigned niov)
{
    size_t len = 0;

    for (unsigned i = 0; i < niov; i++) {
        len += iov[i].iov_len;
    }
    return len;
}

/* preadv/pwritev until done; reads past the end of file give zeroes. */
static int block_fd_rw(int fd, bool write, uint64_t off,
                       const struct iovec *iov, unsigned niov)
{
    size_t len = block_iov_total(iov, niov), done = 0;

    while (done < len) {
        g_autoptr(GArray) part = g_array_new(false, false,
                                             sizeof(struct iovec));
        ssize_t n;

        block_iov_slice(iov, niov, done, len - done, part);
        n = write ? pwritev(fd, (struct iovec *)part->data, part->len,
                            off + done)
                  : preadv(fd, (struct iovec *)part->data, part->len,
                           off + done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return -errno;
        }
        if (n == 0) {
            if (write) {
                return -EIO;
            }
            block_iov_memset(iov, niov, done, 0, len - done);
            return 0;
        }
        done += n;
    }
    return 0;
}

static int block_file_rw(BlockNode *leaf, bool write, uint64_t off,
                         const struct iovec *iov, unsigned niov)
{
    unsigned a = leaf->alignment;
    size_t len;
    uint64_t start, end;
    uint8_t *bounce;
    struct iovec biov;
    int ret;

    if (block_file_aligned(leaf, off, iov, niov)) {
        return block_fd_rw(leaf->fd, write, off, iov, niov);
    }
    /* O_DIRECT: an aligned bounce covering the range (read-modify-write). */
    len = block_iov_total(iov, niov);
    start = off - off % a;
    end = ROUND_UP(off + len, a);
    if (posix_memalign((void **)&bounce, MAX(a, 4096), end - start)) {
        return -ENOMEM;
    }
    biov = (struct iovec) { bounce, end - start };
    if (!write || start != off || end != off + len) {
        ret = block_fd_rw(leaf->fd, false, start, &biov, 1);
        if (ret < 0) {
            free(bounce);
            return ret;
        }
    }
    if (write) {
        block_iov_to_buf(iov, niov, 0, bounce + (off - start), len);
        ret = block_fd_rw(leaf->fd, true, start, &biov, 1);
    } else {
        block_iov_from_buf(iov, niov, 0, bounce + (off - start), len);
        ret = 0;
    }
    free(bounce);
    return ret;
}

int block_file_preadv(BlockNode *leaf, uint64_t off, const struct iovec *iov,
                      unsigned niov)
{
    return block_file_rw(leaf, false, off, iov, niov);
}

int block_file_pwritev(BlockNode *leaf, uint64_t off, const struct iovec *iov,
                       unsigned niov)
{
    return block_file_rw(leaf, true, off, iov, niov);
}

int block_file_pread(BlockNode *leaf, uint64_t off, void *buf, size_t len)
{
    struct iovec v = { buf, len };

    return block_file_rw(leaf, false, off, &v, 1);
}

int block_file_pwrite(BlockNode *leaf, uint64_t off, const void *buf,
                      size_t len)
{
    struct iovec v = { (void *)buf, len };

    return block_file_rw(leaf, true, off, &v, 1);
}

int block_file_flush(BlockNode *leaf)
{
    return fdatasync(leaf->fd) < 0 ? -errno : 0;
}

int block_file_punch(BlockNode *leaf, uint64_t off, uint64_t len)
{
    if (leaf->blkdev) {
        uint64_t range[2] = { off, len };

        return ioctl(leaf->fd, BLKDISCARD, range) < 0 ? -errno : 0;
    }
    if (fallocate(leaf->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  off, len) < 0) {
        return -errno;
    }
    return 0;
}

int64_t block_file_length(BlockNode *leaf)
{
    struct stat st;
    uint64_t size;

    if (leaf->blkdev) {
        return ioctl(leaf->fd, BLKGETSIZE64, &size) < 0 ? -errno
                                                       : (int64_t)size;
    }
    return fstat(leaf->fd, &st) < 0 ? -errno : st.st_size;
}

void block_map_init(BlockMap *m, const struct iovec *iov, unsigned niov)
{
    m->iov = iov;
    m->niov = niov;
    m->ext = g_array_new(false, false, sizeof(BlockExtent));
}

void block_map_destroy(BlockMap *m)
{
    if (m->ext) {
        g_array_free(m->ext, true);
        m->ext = NULL;
    }
}

/* Appends an extent, merging it with the previous one when contiguous. */
static void block_map_add(BlockMap *m, BlockNode *leaf, uint64_t host_off,
                          uint64_t len, size_t qoff)
{
    if (m->ext->len) {
        BlockExtent *e = &g_array_index(m->ext, BlockExtent, m->ext->len - 1);

        if (e->leaf == leaf && e->host_off + e->len == host_off &&
            e->qoff + e->len == qoff) {
            e->len += len;
            return;
        }
    }
    g_array_append_val(m->ext, ((BlockExtent) {
        .leaf = leaf, .host_off = host_off, .len = len, .qoff = qoff,
    }));
}

int block_map(BlockNode *bs, bool write, uint64_t off, uint64_t len,
              BlockMap *m, size_t qoff)
{
    if (!len) {
        return 0;
    }
    if (bs->fmt) {
        return bs->fmt->map(bs, write, off, len, m, qoff);
    }
    if (bs->file) {
        return block_map(bs->file, write, off, len, m, qoff);
    }
    block_map_add(m, bs, off, len, qoff);
    return 0;
}

/* Public to format drivers through block_map(): used by qcow2. */
void block_map_add_extent(BlockMap *m, BlockNode *leaf, uint64_t host_off,
                          uint64_t len, size_t qoff);
void block_map_add_extent(BlockMap *m, BlockNode *leaf, uint64_t host_off,
                          uint64_t len, size_t qoff)
{
    block_map_add(m, leaf, host_off, len, qoff);
}

int block_map_run(BlockMap *m, bool write)
{
    for (guint i = 0; i < m->ext->len; i++) {
        BlockExtent *e = &g_array_index(m->ext, BlockExtent, i);
        g_autoptr(GArray) part = g_array_new(false, false,
                                             sizeof(struct iovec));
        int ret;

        block_iov_slice(m->iov, m->niov, e->qoff, e->len, part);
        ret = block_file_rw(e->leaf, write, e->host_off,
                            (struct iovec *)part->data, part->len);
        if (ret < 0) {
            return ret;
        }
    }
    return 0;
}

static int block_node_rw(BlockNode *bs, bool write, uint64_t off,
                         const struct iovec *iov, unsigned niov)
{
    size_t len = block_iov_total(iov, niov);
    BlockMap m;
    int ret;

    if (off > bs->size || len > bs->size - off) {
        return -EINVAL;
    }
    block_map_init(&m, iov, niov);
    g_mutex_lock(&bs->lock);
    ret = block_map(bs, write, off, len, &m, 0);
    g_mutex_unlock(&bs->lock);
    if (ret >= 0) {
        ret = block_map_run(&m, write);
    }
    block_map_destroy(&m);
    return ret;
}

int block_node_preadv(BlockNode *bs, uint64_t off, const struct iovec *iov,
                      unsigned niov)
{
    return block_node_rw(bs, false, off, iov, niov);
}

int block_node_pwritev(BlockNode *bs, uint64_t off, const struct iovec *iov,
                       unsigned niov)
{
    if (bs->read_only) {
        return -EROFS;
    }
    return block_node_rw(bs, true, off, iov, niov);
}
