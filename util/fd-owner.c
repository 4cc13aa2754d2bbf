/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Ownership of fds named by number (fd-owner.h).  BQL (management
 * commands and start-up only).
 */
#include "qemu/osdep.h"
#include <dirent.h>
#include "qapi/error.h"
#include "qemu/fd-owner.h"

static GHashTable *fd_inherited;    /* fds open at start-up */
static GHashTable *fd_owners;       /* fd -> owner description */

void qemu_fd_note_inherited(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *de;

    if (!fd_inherited) {
        fd_inherited = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    if (!dir) {
        return;
    }
    while ((de = readdir(dir))) {
        int fd = atoi(de->d_name);

        /* The listing's own fd is in it: leave it out. */
        if (g_ascii_isdigit(de->d_name[0]) && fd > STDERR_FILENO &&
            fd != dirfd(dir)) {
            g_hash_table_add(fd_inherited, GINT_TO_POINTER(fd));
        }
    }
    closedir(dir);
}

const char *qemu_fd_owner(int fd)
{
    return fd_owners ? g_hash_table_lookup(fd_owners, GINT_TO_POINTER(fd))
                     : NULL;
}

bool qemu_fd_check_number(int fd, Error **errp)
{
    const char *owner = qemu_fd_owner(fd);

    if (fd < 0 || fcntl(fd, F_GETFD) < 0) {
        error_setg(errp, "expects an open file descriptor, got '%d'", fd);
        return false;
    }
    if (owner) {
        error_setg(errp, "expects a file descriptor no other backend uses, "
                   "but fd %d belongs to %s", fd, owner);
        return false;
    }
    if (fd <= STDERR_FILENO ||
        (fd_inherited &&
         !g_hash_table_contains(fd_inherited, GINT_TO_POINTER(fd)))) {
        error_setg(errp, "expects a file descriptor passed to Conduit, but "
                   "fd %d is one Conduit %s", fd,
                   fd <= STDERR_FILENO ? "uses for standard I/O"
                                       : "opened itself");
        error_append_hint(errp, "Pass the fd at start-up, or send it with "
                          "getfd and use its name.\n");
        return false;
    }
    return true;
}

bool qemu_fd_claim(int fd, const char *owner, Error **errp)
{
    const char *cur = qemu_fd_owner(fd);

    if (cur) {
        error_setg(errp, "fd %d already belongs to %s", fd, cur);
        return false;
    }
    if (!fd_owners) {
        fd_owners = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                          g_free);
    }
    g_hash_table_insert(fd_owners, GINT_TO_POINTER(fd), g_strdup(owner));
    return true;
}

void qemu_fd_release(int fd)
{
    if (fd_owners) {
        g_hash_table_remove(fd_owners, GINT_TO_POINTER(fd));
    }
}
