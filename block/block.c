/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block nodes: -blockdev and -drive parsing, opening, lookup.
 */
#include "qemu/osdep.h"
#include <linux/falloc.h>
#include <linux/fs.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/option.h"
#include "hw/qdev-core.h"
#include "block/block.h"
#include "trace.h"

struct BlockNode {
    char *node_name;
    char *driver;           /* "file" or "raw" */
    char *filename;
    BlockNode *file;        /* raw: the protocol node below */
    char *drive_id;         /* -drive id, top node only */
    int fd;                 /* file nodes */
    bool read_only;
    bool direct;
    bool unmap;             /* discard=unmap: DISCARD frees blocks */
    bool blkdev;            /* file nodes: a block device, not a file */
    unsigned alignment;
    uint64_t size;
    DeviceState *dev;
    Object *user;           /* query-block's "qdev" (dev or a child) */
    BlockNode *parent;      /* the raw node using this file node */
    bool inline_child;      /* made by its parent's blockdev-add: goes too */
    GMutex stats_lock;
    BlockStats stats;
};

static GPtrArray *block_nodes;
static unsigned block_auto_names;

static BlockNode *block_find_node(const char *name)
{
    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        BlockNode *bs = g_ptr_array_index(block_nodes, i);

        if (!strcmp(bs->node_name, name)) {
            return bs;
        }
    }
    return NULL;
}

BlockNode *block_find(const char *name)
{
    BlockNode *bs;

    if (!name) {
        return NULL;
    }
    bs = block_find_node(name);
    if (bs) {
        return bs;
    }
    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        bs = g_ptr_array_index(block_nodes, i);
        if (bs->drive_id && !strcmp(bs->drive_id, name)) {
            return bs;
        }
    }
    return NULL;
}

static bool block_check_name(const char *name, Error **errp)
{
    if (!*name || strlen(name) > 31 || !g_ascii_isalpha(name[0])) {
        error_setg(errp, "Invalid node-name: '%s'", name);
        error_append_hint(errp, "A node-name starts with a letter and has at "
                          "most 31 characters.\n");
        return false;
    }
    for (const char *p = name; *p; p++) {
        if (!g_ascii_isalnum(*p) && !strchr("-._", *p)) {
            error_setg(errp, "Invalid node-name: '%s'", name);
            return false;
        }
    }
    if (block_find(name)) {
        error_setg(errp, "Duplicate nodes with node-name='%s'", name);
        return false;
    }
    return true;
}

static BlockNode *block_node_new(const char *name, const char *driver)
{
    BlockNode *bs = g_new0(BlockNode, 1);

    if (name) {
        bs->node_name = g_strdup(name);
    } else {
        bs->node_name = g_strdup_printf("#block%03u", block_auto_names++);
    }
    bs->driver = g_strdup(driver);
    bs->fd = -1;
    bs->alignment = 512;
    g_mutex_init(&bs->stats_lock);
    if (!block_nodes) {
        block_nodes = g_ptr_array_new();
    }
    g_ptr_array_add(block_nodes, bs);
    return bs;
}

static void block_node_drop(BlockNode *bs)
{
    g_ptr_array_remove(block_nodes, bs);
    if (bs->fd >= 0) {
        close(bs->fd);
    }
    g_free(bs->node_name);
    g_free(bs->driver);
    g_free(bs->filename);
    g_free(bs->drive_id);
    g_mutex_clear(&bs->stats_lock);
    g_free(bs);
}

/* What a file that cannot be a disk is, for the error message. */
static const char *block_file_type(mode_t mode)
{
    return S_ISFIFO(mode) ? "a FIFO" :
           S_ISCHR(mode) ? "a character device" :
           S_ISSOCK(mode) ? "a socket" :
           S_ISDIR(mode) ? "a directory" :
           S_ISLNK(mode) ? "a symbolic link" : "not a regular file";
}

/*
 * Opening never blocks: a FIFO would wait in open() for a writer (and
 * with it QMP, or the start of the VM), so the open is O_NONBLOCK and
 * O_NOCTTY, the type is checked on the fd, and only then is the fd made
 * blocking for the I/O paths.  What is not a regular file or a block
 * device is refused, by name and type.
 */
static bool block_file_open(BlockNode *bs, Error **errp)
{
    int flags = (bs->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC |
                O_NONBLOCK | O_NOCTTY;
    struct stat st;

    if (bs->direct) {
        flags |= O_DIRECT;
    }
    /* Nothing else is opened at all (a tape, a tty: open has effects). */
    if (stat(bs->filename, &st) == 0 && !S_ISREG(st.st_mode) &&
        !S_ISBLK(st.st_mode)) {
        goto bad_type;
    }
    bs->fd = open(bs->filename, flags);
    if (bs->fd < 0 && bs->direct && errno == EINVAL) {
        error_setg(errp, "Could not open '%s': filesystem does not support "
                   "O_DIRECT", bs->filename);
        error_append_hint(errp, "Use cache.direct=off (cache=writeback) or "
                          "an image on another filesystem.\n");
        return false;
    }
    if (bs->fd < 0) {
        error_setg_errno(errp, errno, "Could not open '%s'", bs->filename);
        return false;
    }
    if (fstat(bs->fd, &st) < 0) {
        error_setg_errno(errp, errno, "Could not stat '%s'", bs->filename);
        return false;
    }
    if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
        goto bad_type;
    }
    if (fcntl(bs->fd, F_SETFL, fcntl(bs->fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        error_setg_errno(errp, errno, "Could not open '%s'", bs->filename);
        return false;
    }
    bs->blkdev = S_ISBLK(st.st_mode);
    if (bs->blkdev) {
        int ssz = 512;

        if (ioctl(bs->fd, BLKGETSIZE64, &bs->size) < 0) {
            error_setg_errno(errp, errno, "Could not get the size of '%s'",
                             bs->filename);
            return false;
        }
        if (ioctl(bs->fd, BLKSSZGET, &ssz) == 0 && ssz > 512) {
            bs->alignment = ssz;
        }
    } else {
        bs->size = st.st_size;
    }
    if (bs->direct && bs->alignment < 4096) {
        /* Memory alignment: be safe on filesystems with 4 KiB blocks. */
        bs->alignment = 4096;
    }
    return true;

bad_type:
    error_setg(errp, "Could not open '%s': it is %s, not a regular file or "
               "block device", bs->filename, block_file_type(st.st_mode));
    error_append_hint(errp, "A disk image is a regular file or a block "
                      "device.\n");
    return false;
}

/* Keys -blockdev accepts but that change nothing here. */
static const char *const blockdev_ignored_keys[] = {
    "auto-read-only", "detect-zeroes", "locking", "aio",
    "cache.no-flush", "force-share", "aio-max-batch", NULL,
};

/* The JSON types of the keys above (QEMU's BlockdevOptions). */
static const QemuOptType blockdev_key_types[] = {
    { "driver", "str" }, { "node-name", "str" }, { "filename", "str" },
    { "file", "object" }, { "read-only", "bool" },
    { "auto-read-only", "bool" }, { "force-share", "bool" },
    { "cache", "object" }, { "cache.direct", "bool" },
    { "cache.no-flush", "bool" }, { "discard", "str" },
    { "detect-zeroes", "str" }, { "locking", "str" }, { "aio", "str" },
    { "aio-max-batch", "int" }, { NULL, NULL },
};

typedef struct BlockdevParse {
    const char *driver;
    const char *node_name;
    const char *filename;
    const char *file;
    bool read_only;
    bool direct;
    const char *discard;
    QemuOpts *file_opts;        /* file.* keys: an inline protocol node */
} BlockdevParse;

/* discard=ignore|off|unmap|on, as QEMU's BlockdevDiscardOptions. */
static bool block_parse_discard(const char *value, bool *unmap, Error **errp)
{
    if (!value || !strcmp(value, "ignore") || !strcmp(value, "off")) {
        *unmap = false;
    } else if (!strcmp(value, "unmap") || !strcmp(value, "on")) {
        *unmap = true;
    } else {
        error_setg(errp, "Invalid discard option '%s'", value);
        error_append_hint(errp, "Use discard=ignore or discard=unmap.\n");
        return false;
    }
    return true;
}

static bool blockdev_parse_key(void *opaque, const char *key,
                               const char *value, Error **errp)
{
    BlockdevParse *p = opaque;

    if (!strcmp(key, "driver")) {
        p->driver = value;
    } else if (!strcmp(key, "node-name")) {
        p->node_name = value;
    } else if (!strcmp(key, "filename")) {
        p->filename = value;
    } else if (!strcmp(key, "file")) {
        p->file = value;
    } else if (g_str_has_prefix(key, "file.")) {
        if (!p->file_opts) {
            p->file_opts = qemu_opts_new(NULL);
        }
        qemu_opt_set(p->file_opts, key + 5, value);
    } else if (!strcmp(key, "read-only")) {
        return qemu_strtobool(value, &p->read_only, errp);
    } else if (!strcmp(key, "cache.direct")) {
        return qemu_strtobool(value, &p->direct, errp);
    } else if (!strcmp(key, "discard")) {
        bool unmap;

        p->discard = value;
        return block_parse_discard(value, &unmap, errp);
    } else if (!g_strv_contains(blockdev_ignored_keys, key)) {
        error_setg(errp, "Parameter '%s' is unexpected", key);
        return false;
    }
    return true;
}

BlockNode *blockdev_add(QemuOpts *opts, Error **errp)
{
    BlockdevParse p = { 0 };
    BlockNode *bs = NULL, *child = NULL;
    bool inline_child = false;
    unsigned auto_names = block_auto_names;
    bool ok = false;

    if (!qemu_opts_check_types(opts, blockdev_key_types, "file.", errp) ||
        !qemu_opt_foreach(opts, blockdev_parse_key, &p, errp)) {
        goto out;
    }
    if (!p.driver) {
        error_setg(errp, "Parameter 'driver' is missing");
        goto out;
    }
    if (p.node_name && !block_check_name(p.node_name, errp)) {
        goto out;
    }
    if (!strcmp(p.driver, "file") || !strcmp(p.driver, "host_device")) {
        if (!p.filename) {
            error_setg(errp, "Parameter 'filename' is missing");
            goto out;
        }
        if (p.file || p.file_opts) {
            error_setg(errp, "Parameter 'file' is unexpected");
            goto out;
        }
        bs = block_node_new(p.node_name, "file");
        bs->filename = g_strdup(p.filename);
        bs->read_only = p.read_only;
        bs->direct = p.direct;
        block_parse_discard(p.discard, &bs->unmap, &error_abort);
        ok = block_file_open(bs, errp);
    } else if (!strcmp(p.driver, "raw")) {
        if (p.filename) {
            error_setg(errp, "Parameter 'filename' is unexpected");
            goto out;
        }
        if (p.file_opts) {
            /* file.driver=file,file.filename=...: an inline child */
            if (!qemu_opt_has(p.file_opts, "read-only")) {
                qemu_opt_set(p.file_opts, "read-only",
                             p.read_only ? "on" : "off");
            }
            if (p.direct && !qemu_opt_has(p.file_opts, "cache.direct")) {
                qemu_opt_set(p.file_opts, "cache.direct", "on");
            }
            if (p.discard && !qemu_opt_has(p.file_opts, "discard")) {
                qemu_opt_set(p.file_opts, "discard", p.discard);
            }
            child = blockdev_add(p.file_opts, errp);
            if (!child) {
                goto out;
            }
            inline_child = true;
            /* A node and its inline child cannot share a name. */
            if (p.node_name && !block_check_name(p.node_name, errp)) {
                goto out;
            }
        } else if (p.file) {
            child = block_find_node(p.file);
            if (!child) {
                error_setg(errp, "Cannot find device='' nor node-name='%s'",
                           p.file);
                goto out;
            }
        } else {
            error_setg(errp, "Parameter 'file' is missing");
            goto out;
        }
        if (child->parent || child->dev || strcmp(child->driver, "file")) {
            error_setg(errp, "node '%s' is already in use",
                       child->node_name);
            goto out;
        }
        if (!p.read_only && child->read_only) {
            error_setg(errp, "raw node on read-only node '%s' must be "
                       "read-only", child->node_name);
            error_append_hint(errp, "Add read-only=on.\n");
            goto out;
        }
        bs = block_node_new(p.node_name, "raw");
        bs->file = child;
        child->parent = bs;
        child->inline_child = inline_child;
        bs->read_only = p.read_only;
        bs->direct = child->direct;
        block_parse_discard(p.discard, &bs->unmap, &error_abort);
        bs->size = child->size;
        bs->alignment = child->alignment;
        bs->filename = g_strdup(child->filename);
        ok = true;
    } else {
        error_setg(errp, "Unknown driver '%s'", p.driver);
        error_append_hint(errp, "Supported: file, host_device, raw.\n");
    }
out:
    if (p.file_opts) {
        qemu_opts_free(p.file_opts);
    }
    if (!ok) {
        /* A failed add leaves nothing: no node, no fd, no name used. */
        if (bs) {
            block_node_drop(bs);
            bs = NULL;
        }
        if (inline_child) {
            block_node_drop(child);
        }
        block_auto_names = auto_names;
    }
    if (bs) {
        trace_blockdev_add(bs->node_name, bs->driver, bs->filename,
                           bs->read_only, bs->direct, bs->size);
    }
    return bs;
}

typedef struct DriveParse {
    const char *file;
    const char *iface;
    const char *format;
    const char *cache;
    const char *node_name;
    const char *discard;
    bool read_only;
} DriveParse;

static const char *const drive_ignored_keys[] = {
    "aio", "media", "detect-zeroes", "werror", "rerror",
    "auto-read-only", NULL,
};

static bool drive_parse_key(void *opaque, const char *key, const char *value,
                            Error **errp)
{
    DriveParse *p = opaque;

    if (!strcmp(key, "file")) {
        p->file = value;
    } else if (!strcmp(key, "if")) {
        p->iface = value;
    } else if (!strcmp(key, "format")) {
        p->format = value;
    } else if (!strcmp(key, "cache")) {
        p->cache = value;
    } else if (!strcmp(key, "node-name")) {
        p->node_name = value;
    } else if (!strcmp(key, "discard")) {
        bool unmap;

        p->discard = value;
        return block_parse_discard(value, &unmap, errp);
    } else if (!strcmp(key, "readonly") || !strcmp(key, "read-only")) {
        return qemu_strtobool(value, &p->read_only, errp);
    } else if (!g_strv_contains(drive_ignored_keys, key)) {
        error_setg(errp, "Invalid parameter '%s'", key);
        return false;
    }
    return true;
}

BlockNode *drive_add(QemuOpts *opts, Error **errp)
{
    DriveParse p = { 0 };
    const char *id = qemu_opts_id(opts);
    g_autoptr(QemuOpts) fo = qemu_opts_new(NULL);
    bool direct = false;
    BlockNode *file, *top;

    if (!qemu_opt_foreach(opts, drive_parse_key, &p, errp)) {
        return NULL;
    }
    if (!p.file) {
        error_setg(errp, "Parameter 'file' is missing");
        error_append_hint(errp, "An empty drive needs a removable device, "
                          "which Conduit does not have.\n");
        return NULL;
    }
    if (!p.iface || strcmp(p.iface, "none")) {
        error_setg(errp, "Drive interface '%s' is not supported",
                   p.iface ? p.iface : "ide");
        error_append_hint(errp, "Use if=none,id=ID and -device "
                          "virtio-blk-pci,drive=ID.\n");
        return NULL;
    }
    if (!id) {
        error_setg(errp, "Parameter 'id' is missing");
        return NULL;
    }
    if (block_find(id)) {
        error_setg(errp, "Duplicate ID '%s' for drive", id);
        return NULL;
    }
    if (!p.format) {
        warn_report("Image format was not specified for '%s' and probing "
                    "guessed raw; specify format=raw to silence this.",
                    p.file);
    } else if (strcmp(p.format, "raw")) {
        error_setg(errp, "Unknown driver '%s'", p.format);
        error_append_hint(errp, "Conduit reads raw images only "
                          "(qemu-img convert -O raw).\n");
        return NULL;
    }
    if (p.cache) {
        if (!strcmp(p.cache, "none") || !strcmp(p.cache, "directsync")) {
            direct = true;
        } else if (strcmp(p.cache, "writeback") &&
                   strcmp(p.cache, "writethrough") &&
                   strcmp(p.cache, "unsafe")) {
            error_setg(errp, "invalid cache option '%s'", p.cache);
            return NULL;
        }
    }
    if (p.node_name && !block_check_name(p.node_name, errp)) {
        return NULL;
    }
    qemu_opt_set(fo, "driver", "file");
    qemu_opt_set(fo, "filename", p.file);
    qemu_opt_set(fo, "read-only", p.read_only ? "on" : "off");
    qemu_opt_set(fo, "cache.direct", direct ? "on" : "off");
    if (p.discard) {
        qemu_opt_set(fo, "discard", p.discard);
    }
    file = blockdev_add(fo, errp);
    if (!file) {
        return NULL;
    }
    top = block_node_new(p.node_name, "raw");
    top->file = file;
    file->parent = top;
    top->read_only = p.read_only;
    top->direct = direct;
    block_parse_discard(p.discard, &top->unmap, &error_abort);
    top->size = file->size;
    top->alignment = file->alignment;
    top->filename = g_strdup(file->filename);
    top->drive_id = g_strdup(id);
    return top;
}

bool blockdev_del(const char *name, Error **errp)
{
    BlockNode *bs = block_find_node(name);

    if (!bs) {
        error_setg(errp, "Failed to find node with node-name='%s'", name);
        return false;
    }
    if (bs->dev || bs->parent) {
        error_setg(errp, "Node '%s' is busy: it is used by %s", name,
                   bs->dev ? "a device" : bs->parent->node_name);
        error_append_hint(errp, "device_del its device (or blockdev-del "
                          "the node above it) first.\n");
        return false;
    }
    if (bs->drive_id) {
        error_setg(errp, "Node '%s' belongs to -drive %s", name,
                   bs->drive_id);
        return false;
    }
    if (bs->file) {
        bs->file->parent = NULL;
        /* A child defined inline lives and dies with its parent. */
        if (bs->file->inline_child) {
            block_node_drop(bs->file);
        }
    }
    block_node_drop(bs);
    return true;
}

bool block_attach(BlockNode *bs, DeviceState *dev, Object *user,
                  Error **errp)
{
    if (bs->dev || bs->parent) {
        error_setg(errp, "node '%s' is already in use by %s",
                   bs->node_name, bs->dev ? (bs->dev->id ? bs->dev->id
                                                         : "a device")
                                          : bs->parent->node_name);
        return false;
    }
    bs->dev = dev;
    bs->user = user ? user : OBJECT(dev);
    return true;
}

void block_detach(BlockNode *bs)
{
    bs->dev = NULL;
    bs->user = NULL;
}

static BlockNode *block_leaf(const BlockNode *bs)
{
    while (bs->file) {
        bs = bs->file;
    }
    return (BlockNode *)bs;
}

int block_node_fd(BlockNode *bs);
int block_node_fd(BlockNode *bs)
{
    return block_leaf(bs)->fd;
}

const char *block_node_name(const BlockNode *bs)
{
    return bs->node_name;
}

uint64_t block_size(const BlockNode *bs)
{
    return bs->size;
}

bool block_is_read_only(const BlockNode *bs)
{
    return bs->read_only;
}

bool block_may_unmap(const BlockNode *bs)
{
    for (; bs; bs = bs->file) {
        if (!bs->unmap) {
            return false;
        }
    }
    return true;
}

bool block_is_direct(const BlockNode *bs)
{
    return block_leaf(bs)->direct;
}

unsigned block_alignment(const BlockNode *bs)
{
    return block_leaf(bs)->alignment;
}

void block_account(BlockNode *bs, int kind, uint64_t bytes, bool failed)
{
    g_mutex_lock(&bs->stats_lock);
    if (failed) {
        bs->stats.failed_ops++;
    } else if (kind == BLOCK_ACCT_READ) {
        bs->stats.rd_ops++;
        bs->stats.rd_bytes += bytes;
    } else if (kind == BLOCK_ACCT_WRITE) {
        bs->stats.wr_ops++;
        bs->stats.wr_bytes += bytes;
    } else if (kind == BLOCK_ACCT_DISCARD) {
        bs->stats.unmap_ops++;
        bs->stats.unmap_bytes += bytes;
    } else {
        bs->stats.flush_ops++;
    }
    g_mutex_unlock(&bs->stats_lock);
}

void block_foreach(void (*fn)(BlockNode *bs, void *opaque), void *opaque)
{
    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        fn(g_ptr_array_index(block_nodes, i), opaque);
    }
}

void block_node_info(BlockNode *bs, BlockNodeInfo *info)
{
    info->node_name = bs->node_name;
    info->driver = bs->driver;
    info->filename = bs->filename;
    info->file_child = bs->file ? bs->file->node_name : NULL;
    info->drive_id = bs->drive_id;
    info->dev = bs->dev;
    info->user = bs->user;
    info->size = bs->size;
    info->read_only = bs->read_only;
    info->direct = block_is_direct(bs);
    g_mutex_lock(&bs->stats_lock);
    info->stats = bs->stats;
    g_mutex_unlock(&bs->stats_lock);
}

int block_flush(BlockNode *bs)
{
    int fd = block_node_fd(bs);

    if (bs->read_only) {
        return 0;
    }
    return fdatasync(fd) < 0 ? -errno : 0;
}

/* Deallocates [offset, offset + len): the range reads as zeroes after. */
static int block_punch(int fd, bool blkdev, uint64_t offset, uint64_t len)
{
    if (blkdev) {
        uint64_t range[2] = { offset, len };

        return ioctl(fd, BLKDISCARD, range) < 0 ? -errno : 0;
    }
    if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  offset, len) < 0) {
        return -errno;
    }
    return 0;
}

int block_discard(BlockNode *bs, uint64_t offset, uint64_t len)
{
    int ret;

    if (bs->read_only) {
        return -EROFS;
    }
    if (offset > bs->size || len > bs->size - offset) {
        return -EINVAL;
    }
    if (!block_may_unmap(bs) || !len) {
        return 0;       /* discard=ignore: a hint we may drop, as QEMU */
    }
    ret = block_punch(block_node_fd(bs), block_leaf(bs)->blkdev, offset,
                      len);
    trace_block_discard(bs->node_name, offset, len, ret);
    /* A filesystem without hole punching keeps the data: still fine. */
    return ret == -EOPNOTSUPP ? 0 : ret;
}

/* Writes zeroes with pwrite, in aligned chunks (works with O_DIRECT). */
static int block_write_zero_buffer(BlockNode *bs, uint64_t offset,
                                   uint64_t len)
{
    const size_t chunk = 1 << 20;
    unsigned align = MAX(block_alignment(bs), 4096);
    int fd = block_node_fd(bs);
    void *zero;
    int ret = 0;

    if (block_is_direct(bs) && (offset % block_alignment(bs) ||
                                len % block_alignment(bs))) {
        return -EINVAL;
    }
    if (posix_memalign(&zero, align, chunk)) {
        return -ENOMEM;
    }
    memset(zero, 0, chunk);
    while (len) {
        size_t n = MIN(len, chunk);
        ssize_t w = pwrite(fd, zero, n, offset);

        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            ret = w < 0 ? -errno : -EIO;
            break;
        }
        offset += w;
        len -= w;
    }
    free(zero);
    return ret;
}

int block_write_zeroes(BlockNode *bs, uint64_t offset, uint64_t len,
                       bool may_unmap)
{
    bool blkdev = block_leaf(bs)->blkdev;
    int fd = block_node_fd(bs);
    int ret = -EOPNOTSUPP;

    if (bs->read_only) {
        return -EROFS;
    }
    if (offset > bs->size || len > bs->size - offset) {
        return -EINVAL;
    }
    if (!len) {
        return 0;
    }
    if (may_unmap && block_may_unmap(bs)) {
        ret = block_punch(fd, blkdev, offset, len);
    }
    if (ret < 0 && blkdev) {
        uint64_t range[2] = { offset, len };

        ret = ioctl(fd, BLKZEROOUT, range) < 0 ? -errno : 0;
    } else if (ret < 0 &&
               fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                         offset, len) == 0) {
        ret = 0;
    }
    if (ret < 0) {
        ret = block_write_zero_buffer(bs, offset, len);
    }
    trace_block_write_zeroes(bs->node_name, offset, len, may_unmap, ret);
    return ret;
}
