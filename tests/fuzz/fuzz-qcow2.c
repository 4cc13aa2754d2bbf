/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: qcow2 images are user input.  The input is an image
 * file: its header and extensions go through qcow2_parse_header(), its
 * L1/L2 tables, refcounts and compressed clusters through the driver as
 * a node opened read-only (reads everywhere) and then read-write
 * (writes, write-zeroes, discards, a resize, flush and close -- with a
 * dirty image, the refcount repair first).  Nothing may crash, leak or
 * hang; errors are fine.
 *
 * Input: 1 control byte (bit 0: also open read-write; bits 1-7: seed of
 * the operations), then the image bytes (at most 4 MiB are used).
 */
#include "qemu/osdep.h"
#include <sys/mman.h>
#include "qapi/error.h"
#include "qemu/option.h"
#include "block/block_int.h"
#include "block/qcow2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static BlockNode *fuzz_open(int fd, bool rw)
{
    g_autofree char *str = g_strdup_printf(
        "driver=qcow2,file.driver=file,file.filename=/proc/self/fd/%d,"
        "read-only=%s,l2-cache-size=262144", fd, rw ? "off" : "on");
    g_autoptr(QemuOpts) opts = qemu_opts_parse(str, NULL, &error_abort);
    Error *err = NULL;
    BlockNode *bs = blockdev_add(opts, &err);

    error_free(err);
    return bs;
}

static uint64_t fuzz_rand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static void fuzz_ops(BlockNode *bs, uint64_t seed, bool rw)
{
    uint64_t size = block_size(bs), st = seed * 2654435761u + 1;
    g_autofree uint8_t *buf = g_malloc(65536);

    for (int i = 0; i < 24 && size; i++) {
        uint64_t len = 512 * (1 + fuzz_rand(&st) % 128);
        uint64_t off = (fuzz_rand(&st) % MAX(size / 512, 1)) * 512;
        unsigned op = rw ? fuzz_rand(&st) % 6 : 0;
        struct iovec v = { buf, len };

        if (off + len > size) {
            len = size - off;
            v.iov_len = len;
        }
        if (!len) {
            continue;
        }
        switch (op) {
        case 0:
        case 1:
            block_node_preadv(bs, off, &v, 1);
            break;
        case 2:
        case 3:
            memset(buf, i, len);
            block_node_pwritev(bs, off, &v, 1);
            break;
        case 4:
            block_write_zeroes(bs, off, len, i & 1);
            break;
        default:
            block_discard(bs, off, len);
            break;
        }
    }
    if (rw) {
        Error *err = NULL;

        if (size < (1ull << 32) &&
            !block_resize(bs, ROUND_UP(size, 512) + (1 << 20), &err)) {
            error_free(err);
        }
        block_flush(bs);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Qcow2Meta m;
    Error *err = NULL;
    BlockNode *bs;
    int fd;

    if (size < 2) {
        return 0;
    }
    /* The pure parser on its own. */
    if (!qcow2_parse_header(data + 1, size - 1, size - 1, &m, &err)) {
        error_free(err);
        err = NULL;
    }
    fd = memfd_create("fuzz-qcow2", MFD_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    if (write(fd, data + 1, MIN(size - 1, 4u << 20)) < 0) {
        close(fd);
        return 0;
    }
    bs = fuzz_open(fd, false);
    if (bs) {
        fuzz_ops(bs, data[0] >> 1, false);
        block_node_close_tree(bs);
    }
    if (data[0] & 1) {
        bs = fuzz_open(fd, true);
        if (bs) {
            fuzz_ops(bs, data[0] >> 1, true);
            block_node_close_tree(bs);
        }
    }
    close(fd);
    return 0;
}
