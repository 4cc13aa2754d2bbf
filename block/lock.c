/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Image locking as QEMU's file driver does it, so that Conduit, QEMU and
 * qemu-img see each other: open file description (OFD) read locks on
 * single bytes of the image, byte 100 + n meaning "this user holds
 * permission n" and byte 200 + n "this user does not let others hold
 * permission n" (n: 0 consistent read, 1 write, 2 write unchanged,
 * 3 resize).  Taking a permission fails when someone refuses to share
 * it; refusing to share one fails when someone holds it.  The locks go
 * with the fd.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/block_int.h"

#define BLOCK_LOCK_PERM_BASE 100
#define BLOCK_LOCK_SHARED_BASE 200

static const char *const block_perm_names[BLOCK_PERM_BITS] = {
    "consistent read", "write", "write unchanged", "resize",
};

static int block_lock_byte(int fd, int type, off_t byte)
{
    struct flock fl = {
        .l_whence = SEEK_SET, .l_start = byte, .l_len = 1, .l_type = type,
    };

    return fcntl(fd, F_OFD_SETLK, &fl) < 0 ? -errno : 0;
}

/* Does another open file description hold a lock on @byte? */
static bool block_lock_taken(int fd, off_t byte)
{
    struct flock fl = {
        .l_whence = SEEK_SET, .l_start = byte, .l_len = 1, .l_type = F_WRLCK,
    };

    return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

bool block_lock_apply(BlockNode *bs, uint64_t perm, uint64_t unshared,
                      Error **errp)
{
    for (int n = 0; n < BLOCK_PERM_BITS; n++) {
        bool want = perm & (1u << n), refuse = unshared & (1u << n);

        if (want && block_lock_taken(bs->fd, BLOCK_LOCK_SHARED_BASE + n)) {
            error_setg(errp, "Failed to get \"%s\" lock",
                       block_perm_names[n]);
            error_append_hint(errp, "Is another process using the image "
                              "[%s]?\n", bs->filename);
            return false;
        }
        if (refuse && block_lock_taken(bs->fd, BLOCK_LOCK_PERM_BASE + n)) {
            error_setg(errp, "Failed to get shared \"%s\" lock",
                       block_perm_names[n]);
            error_append_hint(errp, "Is another process using the image "
                              "[%s]?\n", bs->filename);
            return false;
        }
    }
    for (int n = 0; n < BLOCK_PERM_BITS; n++) {
        int r1 = block_lock_byte(bs->fd, perm & (1u << n) ? F_RDLCK
                                                         : F_UNLCK,
                                 BLOCK_LOCK_PERM_BASE + n);
        int r2 = block_lock_byte(bs->fd, unshared & (1u << n) ? F_RDLCK
                                                             : F_UNLCK,
                                 BLOCK_LOCK_SHARED_BASE + n);

        if (r1 == -EINVAL || r2 == -EINVAL || r1 == -ENOLCK ||
            r2 == -ENOLCK) {
            return true;    /* the file system has no OFD locks */
        }
        if (r1 < 0 || r2 < 0) {
            error_setg_errno(errp, -(r1 < 0 ? r1 : r2), "Failed to lock "
                             "byte %d of '%s'", BLOCK_LOCK_PERM_BASE + n,
                             bs->filename);
            return false;
        }
    }
    bs->lock_perm = perm;
    bs->lock_unshared = unshared;
    return true;
}
