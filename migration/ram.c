/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest RAM as live state: iterative pre-copy driven by the memory API's
 * dirty log (see memory_global_dirty_log_start(): writes through the
 * memory API, device writes through host pointers, and KVM's dirty log at
 * each sync).  Zero pages travel as a header only.
 *
 * Chunks (under idstr "ram"):
 *   RAM_OP_BLOCKS: u32 n, then n x { name:str8 size:u64 page_size:u32 }
 *     -- once, first; the destination must have the same blocks
 *   RAM_OP_PAGES: block:u32 count:u32, then count x { page:u64 kind:u8
 *     [page_size bytes if kind == RAM_PAGE_DATA] }
 */
#include "qemu/osdep.h"
#include <sys/uio.h>
#include "migration/migration.h"
#include "migration/ram.h"
#include "system/memory.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "trace.h"

#define RAM_OP_BLOCKS 1
#define RAM_OP_PAGES 2
#define RAM_PAGE_ZERO 0
#define RAM_PAGE_DATA 1
#define RAM_MAX_BLOCKS 64
#define RAM_PAGES_PER_CHUNK 256
/*
 * ... and at most about this many bytes: 256 pages of 64 KiB (a POWER
 * host's) with their headers would pass the stream's 16 MiB chunk bound.
 */
#define RAM_CHUNK_BYTES (1024 * 1024)

typedef struct RamBlock {
    MemoryRegion *mr;
    char *idstr;
    uint64_t pages;
    uint64_t cursor;            /* next page the scan looks at */
    /* Cached extents of the memfd (bytes): a hole reads as zeros. */
    uint64_t hole_lo, hole_hi;
    uint64_t data_lo, data_hi;
} RamBlock;

static struct {
    GPtrArray *blocks;          /* RamBlock * */
    uint64_t page_size;
    bool blocks_sent;
    bool blocks_loaded;
    MigrationRamStats stats;
} ram;

static void ram_block_free(gpointer p)
{
    RamBlock *b = p;

    g_free(b->idstr);
    g_free(b);
}

static char *ram_block_idstr(MemoryRegion *mr)
{
    Object *owner = memory_region_owner(mr);
    const char *name = memory_region_name(mr);

    /* The machine's RAM has a well-known name; a device's is qualified. */
    if (owner && object_dynamic_cast(owner, "device")) {
        g_autofree char *path = object_get_canonical_path(owner);
        return g_strdup_printf("%s/%s", path, name);
    }
    return g_strdup(name);
}

static void ram_collect_one(MemoryRegion *mr, void *opaque)
{
    RamBlock *b = g_new0(RamBlock, 1);

    b->mr = mr;
    b->idstr = ram_block_idstr(mr);
    b->pages = DIV_ROUND_UP(memory_region_size(mr), ram.page_size);
    g_ptr_array_add(ram.blocks, b);
}

static void ram_collect(void)
{
    if (ram.blocks) {
        g_ptr_array_free(ram.blocks, true);
    }
    ram.page_size = getpagesize();
    ram.blocks = g_ptr_array_new_with_free_func(ram_block_free);
    memory_foreach_ram(ram_collect_one, NULL);
}

static bool page_is_zero(const uint8_t *p, size_t len)
{
    const uint64_t *w = (const uint64_t *)p;

    for (size_t i = 0; i < len / 8; i += 4) {
        if (w[i] | w[i + 1] | w[i + 2] | w[i + 3]) {
            return false;
        }
    }
    return true;
}

/*
 * Is the page a hole of the RAM's memfd?  Such a page is zero, and
 * reading it would allocate it (shmem), so neither side touches it: the
 * source sends it as a zero page unread, the destination leaves its own
 * hole alone.  lseek(SEEK_DATA/SEEK_HOLE) answers, cached per extent.
 *
 * While the guest runs a hole can fill at any time, so the source trusts
 * a cached data extent (reading data is always right) but asks afresh
 * for every hole, after it took the page's dirty bit: a write that
 * filled it before shows in the lseek, one after sets the bit again.
 * The destination alone writes its RAM and drops the hole cache when it
 * does (with_hole_cache).
 */
static bool ram_page_in_hole(RamBlock *b, uint64_t page, bool with_hole_cache)
{
    int fd = memory_region_get_fd(b->mr);
    uint64_t size = memory_region_size(b->mr);
    uint64_t off = page * ram.page_size;
    uint64_t base;
    off_t d, h;

    if (fd < 0) {
        return false;
    }
    if (with_hole_cache && off >= b->hole_lo && off < b->hole_hi) {
        return true;
    }
    if (off >= b->data_lo && off < b->data_hi) {
        return false;
    }
    base = memory_region_get_fd_offset(b->mr);
    d = lseek(fd, base + off, SEEK_DATA);
    if (d < 0 || (uint64_t)d >= base + off + ram.page_size) {
        b->hole_lo = off;
        b->hole_hi = d < 0 ? size : MIN((uint64_t)d - base, size);
        /* A partial page of data counts as data. */
        b->hole_hi = QEMU_ALIGN_DOWN(b->hole_hi, ram.page_size);
        return b->hole_hi > off;
    }
    h = lseek(fd, base + off, SEEK_HOLE);
    b->data_lo = QEMU_ALIGN_DOWN(off, ram.page_size);
    b->data_hi = h < 0 ? size : QEMU_ALIGN_UP(MIN((uint64_t)h - base, size),
                                              ram.page_size);
    return false;
}

/* ---- source ---- */

static bool ram_setup(void *opaque, Error **errp)
{
    ram_collect();
    memset(&ram.stats, 0, sizeof(ram.stats));
    ram.stats.page_size = ram.page_size;
    ram.blocks_sent = false;
    memory_global_dirty_log_start();
    for (guint i = 0; i < ram.blocks->len; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);

        ram.stats.total += memory_region_size(b->mr);
    }
    return true;
}

static uint64_t ram_dirty_pages(void)
{
    uint64_t n = 0;

    for (guint i = 0; ram.blocks && i < ram.blocks->len; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);

        n += memory_region_dirty_count(b->mr);
    }
    return n;
}

static uint64_t ram_pending(void *opaque)
{
    uint64_t n = ram_dirty_pages();

    ram.stats.remaining = n * ram.page_size;
    return ram.stats.remaining;
}

void ram_sync_dirty_log(void)
{
    memory_global_dirty_log_sync();
    ram.stats.dirty_sync_count++;
    /* Pages written since may have filled holes: forget the extents. */
    for (guint i = 0; ram.blocks && i < ram.blocks->len; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);

        b->hole_lo = b->hole_hi = b->data_lo = b->data_hi = 0;
    }
}

static void put_blocks(GByteArray *out)
{
    mig_put_u32(out, 0);        /* chunk length, patched by the caller */
    mig_put_u8(out, RAM_OP_BLOCKS);
    mig_put_u32(out, ram.blocks->len);
    for (guint i = 0; i < ram.blocks->len; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);

        mig_put_str(out, b->idstr);
        mig_put_u64(out, memory_region_size(b->mr));
        mig_put_u32(out, ram.page_size);
    }
}

/*
 * Appends chunks of dirty pages (each "len:u32 chunk") until about max
 * bytes are out or no page is dirty.  Returns the number of pages sent.
 */
static uint64_t ram_send_dirty(GByteArray *out, size_t max)
{
    uint64_t sent = 0;

    for (guint i = 0; i < ram.blocks->len && out->len < max; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);
        const uint8_t *base = memory_region_get_ram_ptr(b->mr);
        uint64_t scanned = 0;

        while (scanned < b->pages && out->len < max) {
            guint at = out->len;
            uint32_t count = 0, len;
            guint count_at;

            mig_put_u32(out, 0);
            mig_put_u8(out, RAM_OP_PAGES);
            mig_put_u32(out, i);
            count_at = out->len;
            mig_put_u32(out, 0);
            while (scanned < b->pages && count < RAM_PAGES_PER_CHUNK &&
                   out->len - at < RAM_CHUNK_BYTES) {
                uint64_t page = b->cursor;
                const uint8_t *p = base + page * ram.page_size;
                size_t plen = MIN(ram.page_size, memory_region_size(b->mr) -
                                  page * ram.page_size);

                b->cursor = (b->cursor + 1) % b->pages;
                scanned++;
                if (!memory_region_test_and_clear_dirty_page(b->mr, page)) {
                    continue;
                }
                /* query-migrate's remaining falls as the pass goes on. */
                if (ram.stats.remaining >= ram.page_size) {
                    ram.stats.remaining -= ram.page_size;
                }
                mig_put_u64(out, page);
                if (plen == ram.page_size &&
                    (ram_page_in_hole(b, page, false) ||
                     page_is_zero(p, plen))) {
                    mig_put_u8(out, RAM_PAGE_ZERO);
                    ram.stats.duplicate++;
                } else {
                    mig_put_u8(out, RAM_PAGE_DATA);
                    mig_put_bytes(out, p, plen);
                    if (plen < ram.page_size) {
                        static const uint8_t pad[65536];
                        mig_put_bytes(out, pad, ram.page_size - plen);
                    }
                    ram.stats.normal++;
                    ram.stats.normal_bytes += ram.page_size;
                }
                count++;
            }
            if (!count) {
                g_byte_array_set_size(out, at);
                continue;
            }
            sent += count;
            len = GUINT32_TO_LE(out->len - at - 4);
            memcpy(out->data + at, &len, 4);
            count = GUINT32_TO_LE(count);
            memcpy(out->data + count_at, &count, 4);
        }
    }
    return sent;
}

static bool ram_iterate(void *opaque, GByteArray *out, size_t max,
                        Error **errp)
{
    if (!ram.blocks_sent) {
        guint at = out->len;
        uint32_t len;

        put_blocks(out);
        len = GUINT32_TO_LE(out->len - at - 4);
        memcpy(out->data + at, &len, 4);
        ram.blocks_sent = true;
    }
    ram_send_dirty(out, max);
    return true;
}

static bool ram_complete(void *opaque, GByteArray *out, Error **errp)
{
    ram_sync_dirty_log();
    ram_iterate(opaque, out, SIZE_MAX, errp);
    ram.stats.remaining = 0;
    return true;
}

static void ram_cleanup(void *opaque)
{
    memory_global_dirty_log_stop();
}

/* ---- destination ---- */

static bool ram_load_blocks(MigBuf *c, Error **errp)
{
    uint32_t n;

    ram_collect();
    if (!mig_buf_get_u32(c, &n, errp)) {
        return false;
    }
    if (n != ram.blocks->len) {
        error_setg(errp, "RAM: the stream has %u RAM blocks, this VM %u "
                   "(is -m/-machine the same on both sides?)", n,
                   ram.blocks->len);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        RamBlock *b = g_ptr_array_index(ram.blocks, i);
        char name[256];
        uint64_t size;
        uint32_t psize;

        if (!mig_buf_get_str(c, name, errp) ||
            !mig_buf_get_u64(c, &size, errp) ||
            !mig_buf_get_u32(c, &psize, errp)) {
            return false;
        }
        if (strcmp(name, b->idstr) || size != memory_region_size(b->mr)) {
            error_setg(errp, "RAM block %u: the stream has '%s' of 0x%" PRIx64
                       " bytes, this VM '%s' of 0x%" PRIx64 " (is -m the same "
                       "on both sides?)", i, name, size, b->idstr,
                       memory_region_size(b->mr));
            return false;
        }
        if (psize != ram.page_size) {
            error_setg(errp, "RAM: stream page size %u, host page size %"
                       PRIu64, psize, ram.page_size);
            return false;
        }
    }
    ram.blocks_loaded = true;
    return true;
}

/*
 * Data pages for consecutive pages of one block, written to its memfd
 * with one pwritev() instead of a store to each page through the
 * mapping: the kernel then allocates the shmem pages without a page
 * fault each, which halved the destination's CPU time per GiB here.
 */
#define RAM_LOAD_IOV 64

typedef struct RamLoadRun {
    int fd;
    uint64_t fd_base;           /* the block's offset in its fd */
    uint8_t *base;              /* its mapping */
    uint64_t first;             /* the run's first page */
    unsigned n;
    struct iovec iov[RAM_LOAD_IOV];
} RamLoadRun;

static void ram_load_run_flush(RamLoadRun *r)
{
    uint64_t off = r->first * ram.page_size;
    unsigned i = 0;
    size_t done = 0;            /* bytes of iov[i] already written */

    while (i < r->n) {
        struct iovec iov[RAM_LOAD_IOV];
        unsigned n = r->n - i;
        ssize_t got;

        memcpy(iov, r->iov + i, n * sizeof(iov[0]));
        iov[0].iov_base = (uint8_t *)iov[0].iov_base + done;
        iov[0].iov_len -= done;
        got = pwritev(r->fd, iov, n, r->fd_base + off);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            /* Left to the mapping, as without an fd. */
            for (; i < r->n; i++, done = 0) {
                memcpy(r->base + off, (uint8_t *)r->iov[i].iov_base + done,
                       r->iov[i].iov_len - done);
                off += r->iov[i].iov_len - done;
            }
            break;
        }
        off += got;
        while (got > 0) {
            size_t left = r->iov[i].iov_len - done;

            if ((size_t)got >= left) {
                got -= left;
                i++;
                done = 0;
            } else {
                done += got;
                got = 0;
            }
        }
    }
    r->n = 0;
}

static void ram_load_run_add(RamLoadRun *r, uint64_t page, const uint8_t *p,
                             size_t len)
{
    if (r->n && (page != r->first + r->n || r->n == RAM_LOAD_IOV)) {
        ram_load_run_flush(r);
    }
    if (!r->n) {
        r->first = page;
    }
    r->iov[r->n].iov_base = (void *)p;
    r->iov[r->n].iov_len = len;
    r->n++;
}

static bool ram_load_pages(MigBuf *c, Error **errp)
{
    uint32_t idx, count;
    RamLoadRun run;
    bool ok = false;
    RamBlock *b;
    uint8_t *base;
    uint64_t size;

    if (!ram.blocks_loaded) {
        error_setg(errp, "RAM: pages before the block list");
        return false;
    }
    if (!mig_buf_get_u32(c, &idx, errp) || !mig_buf_get_u32(c, &count, errp)) {
        return false;
    }
    if (idx >= ram.blocks->len) {
        error_setg(errp, "RAM: block %u out of range", idx);
        return false;
    }
    b = g_ptr_array_index(ram.blocks, idx);
    base = memory_region_get_ram_ptr(b->mr);
    size = memory_region_size(b->mr);
    run.fd = memory_region_get_fd(b->mr);
    run.fd_base = run.fd >= 0 ? memory_region_get_fd_offset(b->mr) : 0;
    run.base = base;
    run.n = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t page;
        uint8_t kind;
        uint8_t *p;
        size_t plen;

        if (!mig_buf_get_u64(c, &page, errp) ||
            !mig_buf_get_u8(c, &kind, errp)) {
            goto out;
        }
        if (page >= b->pages) {
            error_setg(errp, "RAM block '%s': page %" PRIu64 " out of range",
                       b->idstr, page);
            goto out;
        }
        p = base + page * ram.page_size;
        plen = MIN(ram.page_size, size - page * ram.page_size);
        switch (kind) {
        case RAM_PAGE_ZERO:
            /* The lseek below must see every data page before it. */
            ram_load_run_flush(&run);
            /* Untouched pages stay unallocated. */
            if (!ram_page_in_hole(b, page, true) &&
                !page_is_zero(p, plen & ~31UL)) {
                memset(p, 0, plen);
            }
            break;
        case RAM_PAGE_DATA:
            if (mig_buf_left(c) < ram.page_size) {
                error_setg(errp, "RAM: page data truncated");
                goto out;
            }
            if (run.fd >= 0 && plen == ram.page_size) {
                ram_load_run_add(&run, page, c->data + c->pos, plen);
            } else {
                memcpy(p, c->data + c->pos, plen);
            }
            c->pos += ram.page_size;
            if (page * ram.page_size >= b->hole_lo &&
                page * ram.page_size < b->hole_hi) {
                b->hole_lo = b->hole_hi = 0;    /* it is data now */
            }
            break;
        default:
            error_setg(errp, "RAM: unknown page kind %u", kind);
            goto out;
        }
    }
    ok = true;
out:
    /* What came before an error is loaded, as it would be page by page. */
    ram_load_run_flush(&run);
    return ok;
}

static bool ram_load(void *opaque, MigBuf *c, Error **errp)
{
    uint8_t op;

    if (!mig_buf_get_u8(c, &op, errp)) {
        return false;
    }
    switch (op) {
    case RAM_OP_BLOCKS:
        return ram_load_blocks(c, errp);
    case RAM_OP_PAGES:
        return ram_load_pages(c, errp);
    default:
        error_setg(errp, "RAM: unknown chunk type %u", op);
        return false;
    }
}

static bool ram_load_done(void *opaque, Error **errp)
{
    if (!ram.blocks_loaded && ram.blocks && ram.blocks->len) {
        error_setg(errp, "RAM: the stream carried no RAM");
        return false;
    }
    return true;
}

const MigrationRamStats *ram_get_stats(void)
{
    return &ram.stats;
}

void ram_reset_load_state(void)
{
    ram.blocks_loaded = false;
}

static const SaveLiveOps ram_ops = {
    .setup = ram_setup,
    .pending = ram_pending,
    .iterate = ram_iterate,
    .complete = ram_complete,
    .load = ram_load,
    .load_done = ram_load_done,
    .cleanup = ram_cleanup,
};

void ram_register(void)
{
    register_savevm_live("ram", &ram_ops, NULL);
}
