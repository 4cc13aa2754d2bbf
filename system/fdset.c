/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File descriptor sets, as QEMU's -add-fd: each set is a number holding
 * descriptors the parent passed, each with an optional opaque string.
 * Opening "/dev/fdset/N" duplicates the member whose access mode matches
 * the request, so the owner keeps control of which files Conduit may
 * write without Conduit ever resolving a path.  The QMP side
 * (query-fdsets) is qmp-fdset.c's: fdsets sit below the chardevs that
 * open them and the monitor that runs on those.
 */
#include "qemu/osdep.h"
#include "qemu/fd-owner.h"
#include "qemu/option.h"
#include "qapi/error.h"
#include "system/fdset.h"

#define FDSET_PREFIX "/dev/fdset/"

typedef struct FdsetMember {
    int64_t set_id;
    int fd;
    char *opaque;
} FdsetMember;

static GArray *fdset_members;   /* FdsetMember, in the order added */

bool fdset_add_fd(int64_t set_id, int fd, const char *opaque, Error **errp)
{
    FdsetMember m = { .set_id = set_id, .fd = fd };
    int fdflags;

    if (set_id < 0) {
        error_setg(errp, "fdset id must be a non-negative integer");
        return false;
    }
    if (fd <= STDERR_FILENO) {
        error_setg(errp, "fd %d is stdin, stdout or stderr: not a file "
                   "descriptor to add to a set", fd);
        return false;
    }
    fdflags = fcntl(fd, F_GETFD);
    if (fdflags < 0) {
        error_setg_errno(errp, errno, "fd %d is not an open file descriptor",
                         fd);
        return false;
    }
    for (guint i = 0; fdset_members && i < fdset_members->len; i++) {
        if (g_array_index(fdset_members, FdsetMember, i).fd == fd) {
            error_setg(errp, "fd %d is already in fdset %" PRId64, fd,
                       g_array_index(fdset_members, FdsetMember, i).set_id);
            return false;
        }
    }
    fcntl(fd, F_SETFD, fdflags | FD_CLOEXEC);
    if (!fdset_members) {
        fdset_members = g_array_new(FALSE, TRUE, sizeof(FdsetMember));
    }
    m.opaque = g_strdup(opaque);
    g_array_append_val(fdset_members, m);
    return true;
}

static bool fdset_parse_int(const char *key, const char *s, int64_t max,
                            int64_t *out, Error **errp)
{
    char *end;
    long long v;

    errno = 0;
    v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || errno || v < 0 || v > max) {
        error_setg(errp, "Parameter '%s' expects a non-negative integer",
                   key);
        return false;
    }
    *out = v;
    return true;
}

bool fdset_parse_add_fd(const char *arg, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, NULL, errp);
    int64_t set_id, fd;

    if (!opts) {
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);

        if (strcmp(key, "fd") && strcmp(key, "set") && strcmp(key, "opaque")) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
    }
    if (!qemu_opt_get(opts, "fd")) {
        error_setg(errp, "fd option is required and must be non-negative");
        return false;
    }
    if (!qemu_opt_get(opts, "set")) {
        error_setg(errp, "set option is required and must be non-negative");
        return false;
    }
    if (!fdset_parse_int("fd", qemu_opt_get(opts, "fd"), INT_MAX, &fd,
                         errp) ||
        !fdset_parse_int("set", qemu_opt_get(opts, "set"), INT64_MAX,
                         &set_id, errp)) {
        return false;
    }
    /* A number: an fd passed to us that no backend owns (fd-owner.h). */
    if (!qemu_fd_check_number(fd, errp)) {
        error_prepend(errp, "Parameter 'fd' ");
        return false;
    }
    if (!fdset_add_fd(set_id, fd, qemu_opt_get(opts, "opaque"), errp)) {
        return false;
    }
    {
        g_autofree char *owner = g_strdup_printf("fd set %" PRId64, set_id);

        qemu_fd_claim(fd, owner, NULL);
    }
    return true;
}

int fdset_open(const char *path, int flags, mode_t mode, Error **errp)
{
    int64_t set_id;
    bool in_set = false;
    int fd;

    if (!g_str_has_prefix(path, FDSET_PREFIX)) {
        fd = open(path, flags | O_CLOEXEC, mode);
        if (fd < 0) {
            error_setg_errno(errp, errno, "Could not open '%s'", path);
        }
        return fd;
    }
    if (!fdset_parse_int("fdset", path + strlen(FDSET_PREFIX), INT64_MAX,
                         &set_id, NULL)) {
        error_setg(errp, "'%s': expected /dev/fdset/N with N a set number",
                   path);
        return -1;
    }
    for (guint i = 0; fdset_members && i < fdset_members->len; i++) {
        FdsetMember *m = &g_array_index(fdset_members, FdsetMember, i);
        int fl;

        if (m->set_id != set_id) {
            continue;
        }
        in_set = true;
        fl = fcntl(m->fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) != (flags & O_ACCMODE)) {
            continue;
        }
        fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            error_setg_errno(errp, errno, "'%s': cannot duplicate fd %d",
                             path, m->fd);
            return -1;
        }
        if ((flags & O_APPEND) && !(fl & O_APPEND) &&
            fcntl(fd, F_SETFL, fl | O_APPEND) < 0) {
            error_setg_errno(errp, errno, "'%s': cannot set O_APPEND", path);
            close(fd);
            return -1;
        }
        return fd;
    }
    if (!in_set) {
        error_setg(errp, "'%s': there is no fdset %" PRId64, path, set_id);
        error_append_hint(errp, "Pass the descriptor with -add-fd "
                          "fd=M,set=%" PRId64 "\n", set_id);
    } else {
        error_setg(errp, "'%s': fdset %" PRId64 " has no descriptor open "
                   "for %s", path, set_id,
                   (flags & O_ACCMODE) == O_RDONLY ? "reading" :
                   (flags & O_ACCMODE) == O_WRONLY ? "writing" :
                   "reading and writing");
    }
    return -1;
}

void fdset_foreach(FdsetMemberFn *fn, void *opaque)
{
    for (guint i = 0; fdset_members && i < fdset_members->len; i++) {
        FdsetMember *m = &g_array_index(fdset_members, FdsetMember, i);

        fn(m->set_id, m->fd, m->opaque, opaque);
    }
}
