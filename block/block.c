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
#include "block/block_int.h"
#include "system/runstate.h"
#include "trace.h"

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

BlockNode *block_node_new(const char *name, const char *driver)
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
    bs->werror = BLOCK_ERROR_AUTO;
    bs->rerror = BLOCK_ERROR_AUTO;
    g_mutex_init(&bs->stats_lock);
    g_mutex_init(&bs->lock);
    if (!block_nodes) {
        block_nodes = g_ptr_array_new();
    }
    g_ptr_array_add(block_nodes, bs);
    return bs;
}

void block_node_drop(BlockNode *bs)
{
    g_ptr_array_remove(block_nodes, bs);
    if (bs->fmt && bs->opaque) {
        bs->fmt->close(bs);
    }
    if (bs->fd >= 0) {
        close(bs->fd);
    }
    throttle_group_unref(bs->throttle);
    g_free(bs->throttle_group);
    g_free(bs->backing_fmt);
    g_free(bs->backing_name);
    g_slist_free_full(bs->resize_notifiers, g_free);
    g_mutex_clear(&bs->lock);
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

/*
 * The image locks of a file node: what it holds and refuses to share.
 * As in QEMU the permissions come from the users: a read-only node
 * (a backing file) wants consistent reads and so refuses writers; a
 * writable node holds only read until a device uses it (@attached),
 * then holds write and refuses other writers unless the device said
 * share-rw=on.  force-share=on (read-only) holds and refuses nothing.
 */
static bool block_file_lock(BlockNode *bs, bool attached, bool share_rw,
                            Error **errp)
{
    uint64_t perm = BLOCK_PERM_CONSISTENT_READ, unshared = 0;

    if (!bs->locking || bs->blkdev) {
        return true;
    }
    if (bs->read_only) {
        unshared = BLOCK_PERM_WRITE | BLOCK_PERM_RESIZE;
    } else if (attached) {
        /* resize is taken by block_resize only, as QEMU's devices do */
        perm |= BLOCK_PERM_WRITE | BLOCK_PERM_WRITE_UNCHANGED;
        unshared = share_rw ? BLOCK_PERM_RESIZE
                            : BLOCK_PERM_WRITE | BLOCK_PERM_RESIZE;
    }
    if (bs->force_share) {
        perm = 0;
        unshared = 0;
    }
    return block_lock_apply(bs, perm, unshared, errp);
}

/* A device (or blockdev-snapshot) starts writing through @bs. */
bool block_lock_for_device(BlockNode *bs, bool share_rw, Error **errp)
{
    BlockNode *leaf = block_leaf(bs);

    if (leaf->read_only || leaf->fd < 0) {
        return true;
    }
    return block_file_lock(leaf, true, share_rw, errp);
}

/* Keys -blockdev accepts but that change nothing here. */
static const char *const blockdev_ignored_keys[] = {
    "auto-read-only", "aio-max-batch", NULL,
};

/* The JSON types of the keys (QEMU's BlockdevOptions and qcow2's). */
static const QemuOptType blockdev_key_types[] = {
    { "driver", "str" }, { "node-name", "str" }, { "filename", "str" },
    { "file", "object" }, { "backing", "object" }, { "read-only", "bool" },
    { "auto-read-only", "bool" }, { "force-share", "bool" },
    { "cache", "object" }, { "cache.direct", "bool" },
    { "cache.no-flush", "bool" }, { "discard", "str" },
    { "detect-zeroes", "str" }, { "locking", "str" }, { "aio", "str" },
    { "aio-max-batch", "int" }, { "lazy-refcounts", "bool" },
    { "pass-discard-request", "bool" }, { "pass-discard-snapshot", "bool" },
    { "pass-discard-other", "bool" }, { NULL, NULL },
};

typedef struct BlockdevParse {
    const char *driver;
    const char *node_name;
    const char *filename;
    const char *file;
    const char *backing;
    bool has_backing;
    bool read_only;
    bool direct;
    bool no_flush;
    const char *discard;
    const char *detect_zeroes;
    const char *locking;
    const char *aio;
    bool force_share;
    QemuOpts *file_opts;        /* file.* keys: an inline protocol node */
    QemuOpts *backing_opts;     /* backing.* keys: an inline backing node */
    QemuOpts *drv_opts;         /* the format driver's own keys */
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

/*
 * aio=threads|native|io_uring (BlockdevAioOptions) on a file node.  The
 * file is served by Linux AIO either way (block/aio.c), which is what
 * aio=native asks for; io_uring is not there.  As in QEMU, aio=native
 * needs cache.direct=on.
 */
static bool block_check_aio(const char *aio, bool direct, Error **errp)
{
    if (!aio || !strcmp(aio, "threads") ||
        (!strcmp(aio, "native") && direct)) {
        return true;
    }
    if (!strcmp(aio, "native")) {
        error_setg(errp, "aio=native was specified, but it requires "
                   "cache.direct=on, which was not specified.");
    } else if (!strcmp(aio, "io_uring")) {
        error_setg(errp, "aio=io_uring is not supported");
        error_append_hint(errp, "Conduit submits file I/O with Linux AIO: "
                          "use aio=native with cache.direct=on, or "
                          "aio=threads.\n");
    } else {
        error_setg(errp, "Parameter 'aio' does not accept value '%s'", aio);
    }
    return false;
}

/* detect-zeroes=off|on|unmap (BlockdevDetectZeroesOptions). */
static bool block_parse_detect_zeroes(const char *value, int *out,
                                      Error **errp)
{
    if (!value || !strcmp(value, "off")) {
        *out = BLOCK_DETECT_ZEROES_OFF;
    } else if (!strcmp(value, "on")) {
        *out = BLOCK_DETECT_ZEROES_ON;
    } else if (!strcmp(value, "unmap")) {
        *out = BLOCK_DETECT_ZEROES_UNMAP;
    } else {
        error_setg(errp, "Parameter 'detect-zeroes' does not accept value "
                   "'%s'", value);
        error_append_hint(errp, "Use off, on or unmap.\n");
        return false;
    }
    return true;
}

static void block_sub_opt(QemuOpts **opts, const char *key,
                          const char *value)
{
    if (!*opts) {
        *opts = qemu_opts_new(NULL);
    }
    qemu_opt_set(*opts, key, value);
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
        block_sub_opt(&p->file_opts, key + 5, value);
    } else if (!strcmp(key, "backing")) {
        p->backing = value;
        p->has_backing = true;
    } else if (g_str_has_prefix(key, "backing.")) {
        block_sub_opt(&p->backing_opts, key + 8, value);
    } else if (!strcmp(key, "read-only")) {
        return qemu_strtobool(value, &p->read_only, errp);
    } else if (!strcmp(key, "cache.direct")) {
        return qemu_strtobool(value, &p->direct, errp);
    } else if (!strcmp(key, "cache.no-flush")) {
        return qemu_strtobool(value, &p->no_flush, errp);
    } else if (!strcmp(key, "discard")) {
        bool unmap;

        p->discard = value;
        return block_parse_discard(value, &unmap, errp);
    } else if (!strcmp(key, "detect-zeroes")) {
        int dz;

        p->detect_zeroes = value;
        return block_parse_detect_zeroes(value, &dz, errp);
    } else if (!strcmp(key, "locking")) {
        if (strcmp(value, "on") && strcmp(value, "off") &&
            strcmp(value, "auto")) {
            error_setg(errp, "Parameter 'locking' does not accept value "
                       "'%s'", value);
            return false;
        }
        p->locking = value;
    } else if (!strcmp(key, "force-share")) {
        return qemu_strtobool(value, &p->force_share, errp);
    } else if (!strcmp(key, "aio")) {
        p->aio = value;
    } else if (!g_strv_contains(blockdev_ignored_keys, key)) {
        /* A format driver's own option, or a mistake it reports. */
        block_sub_opt(&p->drv_opts, key, value);
    }
    return true;
}

/* The first key of @opts (for "Parameter 'x' is unexpected"). */
static bool block_refuse_opts(QemuOpts *opts, Error **errp)
{
    if (opts && qemu_opts_count(opts)) {
        error_setg(errp, "Parameter '%s' is unexpected",
                   qemu_opts_key(opts, 0));
        return false;
    }
    return true;
}

/* The child of a format node: file=NODE, or file.* an inline one. */
static BlockNode *blockdev_open_file(BlockdevParse *p, Error **errp)
{
    BlockNode *child;

    if (p->filename) {
        error_setg(errp, "Parameter 'filename' is unexpected");
        return NULL;
    }
    if (p->file_opts) {
        /* file.driver=file,file.filename=...: an inline child */
        if (!qemu_opt_has(p->file_opts, "read-only")) {
            qemu_opt_set(p->file_opts, "read-only",
                         p->read_only ? "on" : "off");
        }
        if (p->direct && !qemu_opt_has(p->file_opts, "cache.direct")) {
            qemu_opt_set(p->file_opts, "cache.direct", "on");
        }
        if (p->discard && !qemu_opt_has(p->file_opts, "discard")) {
            qemu_opt_set(p->file_opts, "discard", p->discard);
        }
        if (p->no_flush && !qemu_opt_has(p->file_opts, "cache.no-flush")) {
            qemu_opt_set(p->file_opts, "cache.no-flush", "on");
        }
        child = blockdev_add(p->file_opts, errp);
        if (child) {
            child->implicit = true;
            /* A node and its inline child cannot share a name. */
            if (p->node_name && block_find(p->node_name)) {
                error_setg(errp, "Duplicate nodes with node-name='%s'",
                           p->node_name);
                block_node_drop(child);
                return NULL;
            }
        }
        return child;
    }
    if (!p->file) {
        error_setg(errp, "Parameter 'file' is missing");
        return NULL;
    }
    child = block_find_node(p->file);
    if (!child) {
        error_setg(errp, "Cannot find device='' nor node-name='%s'", p->file);
        return NULL;
    }
    if (child->parent || child->dev || strcmp(child->driver, "file")) {
        error_setg(errp, "node '%s' is already in use", child->node_name);
        return NULL;
    }
    return child;
}

/* Options every node takes, set on a freshly made node. */
static bool blockdev_common(BlockNode *bs, BlockdevParse *p, Error **errp)
{
    bs->read_only = p->read_only;
    bs->no_flush = p->no_flush;
    block_parse_discard(p->discard, &bs->unmap, &error_abort);
    return block_parse_detect_zeroes(p->detect_zeroes, &bs->detect_zeroes,
                                     errp);
}

/* driver=raw or driver=qcow2 over a protocol node. */
static BlockNode *blockdev_open_format(BlockdevParse *p,
                                       const BlockFormatDriver *fmt,
                                       Error **errp)
{
    BlockNode *child, *bs;

    if (!fmt && !block_refuse_opts(p->drv_opts, errp)) {
        return NULL;
    }
    if (!fmt && (p->has_backing || p->backing_opts)) {
        error_setg(errp, "Parameter 'backing' is unexpected");
        return NULL;
    }
    child = blockdev_open_file(p, errp);
    if (!child) {
        return NULL;
    }
    if (!p->read_only && child->read_only) {
        error_setg(errp, "%s node on read-only node '%s' must be read-only",
                   p->driver, child->node_name);
        error_append_hint(errp, "Add read-only=on.\n");
        goto fail_child;
    }
    bs = block_node_new(p->node_name, p->driver);
    bs->file = child;
    child->parent = bs;
    bs->direct = child->direct;
    bs->alignment = child->alignment;
    bs->filename = g_strdup(child->filename);
    bs->size = child->size;
    if (!blockdev_common(bs, p, errp)) {
        goto fail;
    }
    if (fmt) {
        g_autoptr(QemuOpts) drv = p->drv_opts ? NULL : qemu_opts_new(NULL);
        QemuOpts *o = p->drv_opts ? p->drv_opts : drv;
        BlockNode *backing = NULL;

        /* backing: a node-name, null/"" for none, backing.* inline */
        if (p->backing_opts) {
            if (!qemu_opt_has(p->backing_opts, "read-only")) {
                qemu_opt_set(p->backing_opts, "read-only", "on");
            }
            backing = blockdev_add(p->backing_opts, errp);
            if (!backing) {
                goto fail;
            }
            backing->implicit = true;
            qemu_opt_set(o, "x-backing-node", backing->node_name);
        } else if (p->has_backing && p->backing && *p->backing) {
            backing = block_find_node(p->backing);
            if (!backing) {
                error_setg(errp, "Cannot find device='' nor node-name='%s'",
                           p->backing);
                goto fail;
            }
            if (backing->parent || backing->dev || backing == bs) {
                error_setg(errp, "node '%s' is already in use",
                           backing->node_name);
                goto fail;
            }
            qemu_opt_set(o, "x-backing-node", backing->node_name);
        } else if (p->has_backing) {
            qemu_opt_set(o, "x-backing-node", "");
        }
        bs->fmt = fmt;
        if (!fmt->open(bs, o, errp)) {
            bs->fmt = NULL;
            if (backing && backing->implicit && p->backing_opts) {
                block_node_close_tree(backing);
            }
            goto fail;
        }
    }
    return bs;
fail:
    child->parent = NULL;
    bs->file = NULL;
    block_node_drop(bs);
fail_child:
    if (child->implicit) {
        block_node_drop(child);
    }
    return NULL;
}

BlockNode *blockdev_add(QemuOpts *opts, Error **errp)
{
    BlockdevParse p = { 0 };
    BlockNode *bs = NULL;
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
        if (p.has_backing || p.backing_opts) {
            error_setg(errp, "Parameter 'backing' is unexpected");
            goto out;
        }
        if (!block_refuse_opts(p.drv_opts, errp)) {
            goto out;
        }
        if (p.force_share && !p.read_only) {
            error_setg(errp, "force-share=on can only be used with "
                       "read-only images");
            goto out;
        }
        if (!block_check_aio(p.aio, p.direct, errp)) {
            goto out;
        }
        bs = block_node_new(p.node_name, "file");
        bs->filename = g_strdup(p.filename);
        bs->direct = p.direct;
        bs->locking = !p.locking || strcmp(p.locking, "off");
        bs->force_share = p.force_share;
        ok = blockdev_common(bs, &p, errp) && block_file_open(bs, errp) &&
             block_file_lock(bs, false, false, errp);
    } else if (p.aio) {
        /* A protocol option: a format node has none. */
        error_setg(errp, "Parameter 'aio' is unexpected");
    } else if (!strcmp(p.driver, "raw")) {
        bs = blockdev_open_format(&p, NULL, errp);
        ok = bs != NULL;
    } else if (!strcmp(p.driver, "qcow2")) {
        bs = blockdev_open_format(&p, &qcow2_driver, errp);
        ok = bs != NULL;
    } else {
        error_setg(errp, "Unknown driver '%s'", p.driver);
        error_append_hint(errp, "Supported: file, host_device, raw, "
                          "qcow2.\n");
    }
out:
    if (p.file_opts) {
        qemu_opts_free(p.file_opts);
    }
    if (p.backing_opts) {
        qemu_opts_free(p.backing_opts);
    }
    if (p.drv_opts) {
        qemu_opts_free(p.drv_opts);
    }
    if (!ok) {
        /* A failed add leaves nothing: no node, no fd, no name used. */
        if (bs) {
            block_node_drop(bs);
            bs = NULL;
        }
        block_auto_names = auto_names;
    }
    if (bs) {
        trace_blockdev_add(bs->node_name, bs->driver, bs->filename,
                           bs->read_only, bs->direct, bs->size);
    }
    return bs;
}

/* Probes an image's format by its first bytes: qcow2 or raw. */
static const char *block_probe_format(const char *filename)
{
    uint8_t magic[4];
    int fd = open(filename, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t n;

    if (fd < 0) {
        return "raw";
    }
    n = pread(fd, magic, sizeof(magic), 0);
    close(fd);
    if (n == 4 && magic[0] == 'Q' && magic[1] == 'F' && magic[2] == 'I' &&
        magic[3] == 0xfb) {
        return "qcow2";
    }
    return "raw";
}

BlockNode *block_open_backing(const char *filename, const char *format,
                              bool direct, Error **errp)
{
    g_autoptr(QemuOpts) o = qemu_opts_new(NULL);
    BlockNode *bs;

    if (!format || !*format) {
        format = block_probe_format(filename);
        warn_report("Image format of the backing file '%s' is not recorded "
                    "in the image: probed %s", filename, format);
    }
    if (strcmp(format, "raw") && strcmp(format, "qcow2")) {
        error_setg(errp, "Backing file '%s' has format '%s', which is not "
                   "supported", filename, format);
        error_append_hint(errp, "Supported backing formats: raw, qcow2.\n");
        return NULL;
    }
    qemu_opt_set(o, "driver", format);
    qemu_opt_set(o, "read-only", "on");
    qemu_opt_set(o, "file.driver", "file");
    qemu_opt_set(o, "file.filename", filename);
    if (direct) {
        qemu_opt_set(o, "cache.direct", "on");
    }
    bs = blockdev_add(o, errp);
    if (bs) {
        bs->implicit = true;
    }
    return bs;
}

void block_node_close_tree(BlockNode *bs)
{
    BlockNode *file = bs->file, *backing = bs->backing;

    if (bs->fmt && bs->opaque) {
        bs->fmt->close(bs);
    }
    bs->fmt = NULL;
    bs->file = NULL;
    bs->backing = NULL;
    block_node_drop(bs);
    if (file) {
        file->parent = NULL;
        if (file->implicit) {
            block_node_close_tree(file);
        }
    }
    if (backing) {
        backing->parent = NULL;
        if (backing->implicit) {
            block_node_close_tree(backing);
        }
    }
}

typedef struct DriveParse {
    const char *file;
    const char *iface;
    const char *format;
    const char *cache;
    const char *node_name;
    const char *discard;
    const char *detect_zeroes;
    const char *werror;
    const char *rerror;
    const char *throttle_group;
    const char *aio;
    bool read_only;
    QemuOpts *throttle;         /* throttling.* and the legacy bps=... */
    QemuOpts *fmt_opts;         /* format options (lazy-refcounts, ...) */
} DriveParse;

static const char *const drive_ignored_keys[] = {
    "media", "auto-read-only", NULL,
};

static const char *const drive_fmt_keys[] = {
    "lazy-refcounts", "l2-cache-size", "refcount-cache-size", "cache-size",
    "cache-clean-interval", "pass-discard-request", "pass-discard-snapshot",
    "pass-discard-other", "backing", NULL,
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
    } else if (!strcmp(key, "aio")) {
        p->aio = value;
    } else if (!strcmp(key, "node-name")) {
        p->node_name = value;
    } else if (!strcmp(key, "discard")) {
        bool unmap;

        p->discard = value;
        return block_parse_discard(value, &unmap, errp);
    } else if (!strcmp(key, "detect-zeroes")) {
        int dz;

        p->detect_zeroes = value;
        return block_parse_detect_zeroes(value, &dz, errp);
    } else if (!strcmp(key, "werror")) {
        BlockErrorAction a;

        p->werror = value;
        return block_parse_error_action(value, &a, errp);
    } else if (!strcmp(key, "rerror")) {
        BlockErrorAction a;

        p->rerror = value;
        if (!block_parse_error_action(value, &a, errp)) {
            return false;
        }
        if (a == BLOCK_ERROR_ENOSPC) {
            error_setg(errp, "enospc is not supported as rerror");
            return false;
        }
        return true;
    } else if (!strcmp(key, "throttling.group")) {
        p->throttle_group = value;
    } else if (g_str_has_prefix(key, "throttling.") ||
               g_strv_contains(throttle_keys, key)) {
        ThrottleConfig probe = { 0 };
        const char *k = g_str_has_prefix(key, "throttling.") ? key + 11 : key;

        if (!throttle_config_set(&probe, k, 0)) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
        block_sub_opt(&p->throttle, k, value);
    } else if (!strcmp(key, "readonly") || !strcmp(key, "read-only")) {
        return qemu_strtobool(value, &p->read_only, errp);
    } else if (g_strv_contains(drive_fmt_keys, key)) {
        block_sub_opt(&p->fmt_opts, key, value);
    } else if (!g_strv_contains(drive_ignored_keys, key)) {
        error_setg(errp, "Invalid parameter '%s'", key);
        return false;
    }
    return true;
}

static void drive_parse_free(DriveParse *p)
{
    if (p->throttle) {
        qemu_opts_free(p->throttle);
    }
    if (p->fmt_opts) {
        qemu_opts_free(p->fmt_opts);
    }
}

/* Applies throttling.* of -drive (or block_set_io_throttle) to a node. */
bool block_set_throttle(BlockNode *bs, const ThrottleConfig *cfg,
                        const char *group, Error **errp);

BlockNode *drive_add(QemuOpts *opts, Error **errp)
{
    DriveParse p = { 0 };
    const char *id = qemu_opts_id(opts);
    g_autoptr(QemuOpts) fo = qemu_opts_new(NULL);
    bool direct = false, no_flush = false;
    BlockNode *top = NULL;

    if (!qemu_opt_foreach(opts, drive_parse_key, &p, errp)) {
        goto out;
    }
    if (!p.file) {
        error_setg(errp, "Parameter 'file' is missing");
        error_append_hint(errp, "An empty drive needs a removable device, "
                          "which Conduit does not have.\n");
        goto out;
    }
    if (!p.iface || strcmp(p.iface, "none")) {
        error_setg(errp, "Drive interface '%s' is not supported",
                   p.iface ? p.iface : "ide");
        error_append_hint(errp, "Use if=none,id=ID and -device "
                          "virtio-blk-pci,drive=ID.\n");
        goto out;
    }
    if (!id) {
        error_setg(errp, "Parameter 'id' is missing");
        goto out;
    }
    if (block_find(id)) {
        error_setg(errp, "Duplicate ID '%s' for drive", id);
        goto out;
    }
    if (!p.format) {
        p.format = block_probe_format(p.file);
        warn_report("Image format was not specified for '%s' and probing "
                    "guessed %s; specify format=%s to silence this.",
                    p.file, p.format, p.format);
    } else if (strcmp(p.format, "raw") && strcmp(p.format, "qcow2")) {
        error_setg(errp, "Unknown driver '%s'", p.format);
        error_append_hint(errp, "Supported formats: raw, qcow2.\n");
        goto out;
    }
    if (p.fmt_opts && strcmp(p.format, "qcow2")) {
        error_setg(errp, "Invalid parameter '%s'", qemu_opts_key(p.fmt_opts,
                                                                 0));
        goto out;
    }
    if (p.cache) {
        if (!strcmp(p.cache, "none") || !strcmp(p.cache, "directsync")) {
            direct = true;
        } else if (!strcmp(p.cache, "unsafe")) {
            no_flush = true;
        } else if (strcmp(p.cache, "writeback") &&
                   strcmp(p.cache, "writethrough")) {
            error_setg(errp, "invalid cache option '%s'", p.cache);
            goto out;
        }
    }
    if (p.node_name && !block_check_name(p.node_name, errp)) {
        goto out;
    }
    qemu_opt_set(fo, "driver", p.format);
    if (p.node_name) {
        qemu_opt_set(fo, "node-name", p.node_name);
    }
    qemu_opt_set(fo, "file.driver", "file");
    qemu_opt_set(fo, "file.filename", p.file);
    if (p.aio) {
        qemu_opt_set(fo, "file.aio", p.aio);
    }
    qemu_opt_set(fo, "read-only", p.read_only ? "on" : "off");
    qemu_opt_set(fo, "cache.direct", direct ? "on" : "off");
    if (no_flush) {
        qemu_opt_set(fo, "cache.no-flush", "on");
    }
    if (p.discard) {
        qemu_opt_set(fo, "discard", p.discard);
    }
    if (p.detect_zeroes) {
        qemu_opt_set(fo, "detect-zeroes", p.detect_zeroes);
    }
    for (size_t i = 0; p.fmt_opts && i < qemu_opts_count(p.fmt_opts); i++) {
        qemu_opt_set(fo, qemu_opts_key(p.fmt_opts, i),
                     qemu_opts_value(p.fmt_opts, i));
    }
    top = blockdev_add(fo, errp);
    if (!top) {
        goto out;
    }
    top->drive_id = g_strdup(id);
    if (p.werror) {
        block_parse_error_action(p.werror, &top->werror, &error_abort);
    }
    if (p.rerror) {
        block_parse_error_action(p.rerror, &top->rerror, &error_abort);
    }
    if (p.throttle || p.throttle_group) {
        ThrottleConfig cfg = { 0 };

        for (size_t i = 0; p.throttle && i < qemu_opts_count(p.throttle);
             i++) {
            uint64_t v;

            if (!qemu_strtou64(qemu_opts_value(p.throttle, i), &v, errp)) {
                goto fail;
            }
            throttle_config_set(&cfg, qemu_opts_key(p.throttle, i), v);
        }
        if (!block_set_throttle(top, &cfg, p.throttle_group, errp)) {
            goto fail;
        }
    }
    goto out;
fail:
    g_free(top->drive_id);
    top->drive_id = NULL;
    block_node_close_tree(top);
    top = NULL;
out:
    drive_parse_free(&p);
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
    if (bs->implicit) {
        error_setg(errp, "Node '%s' is not a node created by blockdev-add",
                   name);
        return false;
    }
    block_node_close_tree(bs);
    return true;
}

/* A device's node after blockdev-snapshot: the overlay on top of it. */
static BlockNode *block_active(const BlockNode *bs)
{
    BlockNode *next;

    while ((next = qatomic_read(&((BlockNode *)bs)->redirect))) {
        bs = next;
    }
    return (BlockNode *)bs;
}

static bool block_locks_deferred;
static VMChangeStateEntry *block_lock_vmstate;

/* Write locks of every node a device uses: take (running) or drop. */
static void block_lock_devices(bool take)
{
    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        BlockNode *bs = g_ptr_array_index(block_nodes, i);
        BlockNode *leaf = block_leaf(bs);
        Error *err = NULL;

        if (!bs->dev || bs->read_only || leaf->fd < 0 || !leaf->locking) {
            continue;
        }
        if (take && !block_lock_for_device(bs, bs->share_rw, &err)) {
            error_report_err(err);
        } else if (!take) {
            block_file_lock(leaf, false, false, NULL);
        }
    }
}

static void block_lock_vm_state(void *opaque, bool running, RunState state)
{
    if (running && block_locks_deferred) {
        block_locks_deferred = false;
        block_lock_devices(true);
    } else if (!running && state == RUN_STATE_FINISH_MIGRATE) {
        /* The destination takes over the images. */
        block_lock_devices(false);
        block_locks_deferred = true;
    }
}

void block_defer_write_locks(void)
{
    block_locks_deferred = true;
}

bool block_attach_shared(BlockNode *bs, DeviceState *dev, Object *user,
                         bool share_rw, Error **errp)
{
    const char *other;

    bs = block_active(bs);
    if (bs->dev && share_rw && bs->share_rw && !bs->parent) {
        bs->shared_users = g_slist_append(bs->shared_users, dev);
        bs->shared_users = g_slist_append(bs->shared_users,
                                          user ? user : OBJECT(dev));
        return true;
    }
    if (bs->dev || bs->parent) {
        other = bs->dev ? (bs->dev->id ? bs->dev->id : "a device")
                        : bs->parent->node_name;
        if (bs->dev && !bs->read_only) {
            error_setg(errp, "Conflicts with use by %s as 'root', which does "
                       "not allow 'write' on %s", other, bs->node_name);
            error_append_hint(errp, "Set share-rw=on on every device that "
                              "uses the node to share it.\n");
        } else {
            error_setg(errp, "node '%s' is already in use by %s",
                       bs->node_name, other);
        }
        return false;
    }
    if (!block_lock_vmstate) {
        block_lock_vmstate =
            qemu_add_vm_change_state_handler(block_lock_vm_state, NULL);
    }
    if (!bs->read_only && !block_locks_deferred &&
        !block_lock_for_device(bs, share_rw, errp)) {
        return false;
    }
    bs->dev = dev;
    bs->user = user ? user : OBJECT(dev);
    bs->share_rw = share_rw;
    return true;
}

bool block_attach(BlockNode *bs, DeviceState *dev, Object *user,
                  Error **errp)
{
    return block_attach_shared(bs, dev, user, false, errp);
}

void block_detach_dev(BlockNode *bs, DeviceState *dev)
{
    bs = block_active(bs);
    if (bs->dev != dev) {
        GSList *l = g_slist_find(bs->shared_users, dev);

        if (l && l->next) {
            bs->shared_users = g_slist_delete_link(bs->shared_users, l->next);
            bs->shared_users = g_slist_remove(bs->shared_users, dev);
        }
        return;
    }
    bs->dev = NULL;
    bs->user = NULL;
    if (bs->shared_users) {
        /* The next sharer becomes the one query-block shows. */
        bs->dev = bs->shared_users->data;
        bs->user = bs->shared_users->next->data;
        bs->shared_users = g_slist_delete_link(bs->shared_users,
                                               bs->shared_users);
        bs->shared_users = g_slist_delete_link(bs->shared_users,
                                               bs->shared_users);
    }
}

void block_detach(BlockNode *bs)
{
    block_detach_dev(bs, block_active(bs)->dev);
}

const char *block_node_name(const BlockNode *bs)
{
    return bs->node_name;
}

uint64_t block_size(const BlockNode *bs)
{
    return block_active(bs)->size;
}

bool block_is_read_only(const BlockNode *bs)
{
    return block_active(bs)->read_only;
}

bool block_may_unmap(const BlockNode *bs)
{
    for (bs = block_active(bs); bs; bs = bs->file) {
        if (!bs->unmap) {
            return false;
        }
    }
    return true;
}

bool block_is_direct(const BlockNode *bs)
{
    return block_leaf(block_active(bs))->direct;
}

unsigned block_alignment(const BlockNode *bs)
{
    return block_leaf(block_active(bs))->alignment;
}

void block_account(BlockNode *bs, int kind, uint64_t bytes, bool failed)
{
    bs = block_active(bs);
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

int64_t block_allocated_bytes(BlockNode *bs)
{
    BlockNode *leaf = block_leaf(bs);
    struct stat st;

    if (leaf->fd < 0 || fstat(leaf->fd, &st) < 0) {
        return -1;
    }
    if (leaf->blkdev) {
        return 0;           /* as QEMU: a block device allocates nothing */
    }
    return (int64_t)st.st_blocks * 512;
}

int block_flush(BlockNode *bs)
{
    int ret;

    bs = block_active(bs);
    if (bs->read_only || bs->no_flush) {
        return 0;
    }
    if (bs->fmt && bs->fmt->flush) {
        g_mutex_lock(&bs->lock);
        ret = bs->fmt->flush(bs);
        g_mutex_unlock(&bs->lock);
        return ret;
    }
    if (block_leaf(bs)->no_flush) {
        return 0;
    }
    return block_file_flush(block_leaf(bs));
}

int block_discard(BlockNode *bs, uint64_t offset, uint64_t len)
{
    int ret;

    bs = block_active(bs);
    if (bs->read_only) {
        return -EROFS;
    }
    if (offset > bs->size || len > bs->size - offset) {
        return -EINVAL;
    }
    if (!bs->unmap || !len) {
        return 0;       /* discard=ignore: a hint we may drop, as QEMU */
    }
    if (bs->fmt) {
        g_mutex_lock(&bs->lock);
        ret = bs->fmt->discard(bs, offset, len);
        g_mutex_unlock(&bs->lock);
    } else if (!block_may_unmap(bs)) {
        return 0;
    } else {
        ret = block_file_punch(block_leaf(bs), offset, len);
    }
    trace_block_discard(bs->node_name, offset, len, ret);
    /* A filesystem without hole punching keeps the data: still fine. */
    return ret == -EOPNOTSUPP ? 0 : ret;
}

/* Writes zeroes with pwrite, in aligned chunks (works with O_DIRECT). */
static int block_write_zero_buffer(BlockNode *leaf, uint64_t offset,
                                   uint64_t len)
{
    const size_t chunk = 1 << 20;
    void *zero;
    int ret = 0;

    if (posix_memalign(&zero, MAX(leaf->alignment, 4096), chunk)) {
        return -ENOMEM;
    }
    memset(zero, 0, chunk);
    while (len && ret == 0) {
        size_t n = MIN(len, chunk);

        ret = block_file_pwrite(leaf, offset, zero, n);
        offset += n;
        len -= n;
    }
    free(zero);
    return ret;
}

/* A file node: zeroes by hole punching, zero range, or writing them. */
int block_file_write_zeroes(BlockNode *leaf, uint64_t offset, uint64_t len,
                            bool unmap);
int block_file_write_zeroes(BlockNode *leaf, uint64_t offset, uint64_t len,
                            bool unmap)
{
    int ret = -EOPNOTSUPP;

    if (unmap && leaf->unmap) {
        ret = block_file_punch(leaf, offset, len);
    }
    if (ret < 0 && leaf->blkdev) {
        uint64_t range[2] = { offset, len };

        ret = ioctl(leaf->fd, BLKZEROOUT, range) < 0 ? -errno : 0;
    } else if (ret < 0 &&
               fallocate(leaf->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                         offset, len) == 0) {
        ret = 0;
    }
    if (ret < 0) {
        ret = block_write_zero_buffer(leaf, offset, len);
    }
    return ret;
}

int block_write_zeroes(BlockNode *bs, uint64_t offset, uint64_t len,
                       bool may_unmap)
{
    int ret;

    bs = block_active(bs);
    if (bs->read_only) {
        return -EROFS;
    }
    if (offset > bs->size || len > bs->size - offset) {
        return -EINVAL;
    }
    if (!len) {
        return 0;
    }
    if (bs->fmt) {
        g_mutex_lock(&bs->lock);
        ret = bs->fmt->write_zeroes(bs, offset, len,
                                    may_unmap && bs->unmap);
        g_mutex_unlock(&bs->lock);
    } else {
        ret = block_file_write_zeroes(block_leaf(bs), offset, len,
                                      may_unmap && bs->unmap);
    }
    trace_block_write_zeroes(bs->node_name, offset, len, may_unmap, ret);
    return ret;
}

/* ---- block_resize, error policies, throttling ---- */

typedef struct BlockResizeNotifier {
    BlockResizeFn *fn;
    void *opaque;
} BlockResizeNotifier;

void block_add_resize_notifier(BlockNode *bs, BlockResizeFn *fn,
                               void *opaque)
{
    BlockResizeNotifier *n = g_new(BlockResizeNotifier, 1);

    n->fn = fn;
    n->opaque = opaque;
    bs->resize_notifiers = g_slist_append(bs->resize_notifiers, n);
}

void block_remove_resize_notifier(BlockNode *bs, BlockResizeFn *fn,
                                  void *opaque)
{
    for (GSList *l = bs->resize_notifiers; l; l = l->next) {
        BlockResizeNotifier *n = l->data;

        if (n->fn == fn && n->opaque == opaque) {
            bs->resize_notifiers = g_slist_delete_link(bs->resize_notifiers,
                                                       l);
            g_free(n);
            return;
        }
    }
}

/* The notifiers sit on the node the device attached to. */
void block_notify_resize(BlockNode *bs)
{
    uint64_t size = block_size(bs);

    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        BlockNode *n = g_ptr_array_index(block_nodes, i);

        if (block_active(n) != bs) {
            continue;
        }
        for (GSList *l = n->resize_notifiers; l; l = l->next) {
            BlockResizeNotifier *rn = l->data;

            rn->fn(rn->opaque, size);
        }
    }
}

bool block_resize(BlockNode *bs, uint64_t size, Error **errp)
{
    bool ok = true;

    bs = block_active(bs);
    if (bs->read_only) {
        error_setg(errp, "Cannot resize read-only node '%s'", bs->node_name);
        return false;
    }
    if (size % 512) {
        error_setg(errp, "The new size must be a multiple of 512");
        return false;
    }
    if (size == bs->size) {
        return true;
    }
    g_mutex_lock(&bs->lock);
    if (bs->fmt) {
        ok = bs->fmt->truncate(bs, size, errp);
    } else {
        BlockNode *leaf = block_leaf(bs);

        if (leaf->blkdev) {
            int64_t len = block_file_length(leaf);

            if (len < 0 || (uint64_t)len < size) {
                error_setg(errp, "Cannot grow device files");
                ok = false;
            }
        } else if (ftruncate(leaf->fd, size) < 0) {
            error_setg_errno(errp, errno, "Could not resize file '%s'",
                             leaf->filename);
            ok = false;
        }
        if (ok) {
            for (BlockNode *n = bs; n; n = n->file) {
                n->size = size;
            }
        }
    }
    g_mutex_unlock(&bs->lock);
    if (ok) {
        block_notify_resize(bs);
    }
    return ok;
}

static const char *const block_error_names[] = {
    [BLOCK_ERROR_REPORT] = "report",
    [BLOCK_ERROR_IGNORE] = "ignore",
    [BLOCK_ERROR_ENOSPC] = "enospc",
    [BLOCK_ERROR_STOP] = "stop",
    [BLOCK_ERROR_AUTO] = "auto",
};

bool block_parse_error_action(const char *value, BlockErrorAction *out,
                              Error **errp)
{
    for (unsigned i = 0; i < G_N_ELEMENTS(block_error_names); i++) {
        if (!strcmp(value, block_error_names[i])) {
            *out = i;
            return true;
        }
    }
    error_setg(errp, "'%s' invalid %s error action", value,
               "read/write");
    error_append_hint(errp, "Use report, ignore, enospc, stop or auto.\n");
    return false;
}

const char *block_error_action_name(BlockErrorAction a)
{
    return a < G_N_ELEMENTS(block_error_names) ? block_error_names[a] : "?";
}

void block_set_error_policy(BlockNode *bs, BlockErrorAction werror,
                            BlockErrorAction rerror)
{
    if (werror != BLOCK_ERROR_AUTO) {
        bs->werror = werror;
    }
    if (rerror != BLOCK_ERROR_AUTO) {
        bs->rerror = rerror;
    }
}

bool block_set_throttle(BlockNode *bs, const ThrottleConfig *cfg,
                        const char *group, Error **errp)
{
    ThrottleGroupState *tg;

    if (!throttle_config_check(cfg, errp)) {
        return false;
    }
    if (!throttle_config_enabled(cfg) && !group) {
        /* All zero: throttling off for this node. */
        tg = bs->throttle;
        qatomic_set(&bs->throttle, NULL);
        throttle_group_unref(tg);
        g_free(bs->throttle_group);
        bs->throttle_group = NULL;
        return true;
    }
    tg = bs->throttle;
    if (!tg || g_strcmp0(tg->name, group)) {
        /* A named group is shared; without a name the node has its own. */
        ThrottleGroupState *old = tg;

        tg = throttle_group_get(group);
        qatomic_set(&bs->throttle, tg);
        throttle_group_unref(old);
        g_free(bs->throttle_group);
        bs->throttle_group = g_strdup(group ? group : bs->node_name);
    }
    g_mutex_lock(&tg->lock);
    for (int i = 0; i < THROTTLE_BUCKETS; i++) {
        tg->cfg.b[i].avg = cfg->b[i].avg;
        tg->cfg.b[i].max = cfg->b[i].max;
        tg->cfg.b[i].burst_length = cfg->b[i].burst_length;
        tg->cfg.b[i].level = 0;
        tg->cfg.b[i].burst_level = 0;
    }
    tg->cfg.op_size = cfg->op_size;
    g_mutex_unlock(&tg->lock);
    return true;
}

void block_exit(void)
{
    for (guint i = 0; block_nodes && i < block_nodes->len; i++) {
        BlockNode *bs = g_ptr_array_index(block_nodes, i);

        if (bs->fmt && bs->fmt->mark_clean && bs->opaque) {
            g_mutex_lock(&bs->lock);
            bs->fmt->mark_clean(bs);
            g_mutex_unlock(&bs->lock);
        }
    }
}
