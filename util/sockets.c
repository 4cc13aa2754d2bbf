/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UNIX domain socket helpers with SCM_RIGHTS fd passing.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <sys/un.h>
#include "qapi/error.h"
#include "qemu/sockets.h"

static bool unix_fill_addr(struct sockaddr_un *addr, const char *path,
                           Error **errp)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (!path || !*path) {
        error_setg(errp, "UNIX socket path is empty");
        return false;
    }
    if (strlen(path) >= sizeof(addr->sun_path)) {
        error_setg(errp, "UNIX socket path '%s' is too long (max %zu bytes)",
                   path, sizeof(addr->sun_path) - 1);
        return false;
    }
    strcpy(addr->sun_path, path);
    return true;
}

/*
 * Binds and listens under a temporary name, then renames it into place:
 * whoever sees @path appear can connect at once, with no window in which
 * the file exists but connect() is refused.
 */
int unix_listen_path(const char *path, Error **errp)
{
    struct sockaddr_un addr;
    struct stat st;
    g_autofree char *tmp = NULL;
    const char *bound;
    int fd;

    if (!unix_fill_addr(&addr, path, errp)) {
        return -1;
    }
    /* A socket file left by a previous run would make bind() fail. */
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            error_setg(errp, "cannot listen on '%s': file exists and is not "
                       "a socket", path);
            return -1;
        }
        unlink(path);
    }
    tmp = g_strdup_printf("%s.%d.tmp", path, (int)getpid());
    if (strlen(tmp) < sizeof(addr.sun_path)) {
        strcpy(addr.sun_path, tmp);
        unlink(tmp);
    }
    bound = addr.sun_path;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error_setg_errno(errp, errno, "cannot create UNIX socket");
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        error_setg_errno(errp, errno, "cannot bind UNIX socket to '%s'", path);
        close(fd);
        return -1;
    }
    if (listen(fd, 1) < 0) {
        error_setg_errno(errp, errno, "cannot listen on '%s'", path);
        goto fail;
    }
    if (strcmp(bound, path) && rename(bound, path) < 0) {
        error_setg_errno(errp, errno, "cannot move UNIX socket into place "
                         "at '%s'", path);
        goto fail;
    }
    return fd;

fail:
    close(fd);
    unlink(bound);
    return -1;
}

int unix_connect_path(const char *path, Error **errp)
{
    struct sockaddr_un addr;
    int fd, ret;

    if (!unix_fill_addr(&addr, path, errp)) {
        return -1;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error_setg_errno(errp, errno, "cannot create UNIX socket");
        return -1;
    }
    do {
        ret = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
    } while (ret < 0 && errno == EINTR);
    if (ret < 0) {
        error_setg_errno(errp, errno, "cannot connect to '%s'", path);
        close(fd);
        return -1;
    }
    return fd;
}

ssize_t qemu_send_with_fds(int sock, const void *buf, size_t len,
                           const int *fds, size_t nfds, Error **errp)
{
    const uint8_t *p = buf;
    size_t done = 0;

    if (nfds > QEMU_SOCKET_MAX_FDS) {
        error_setg(errp, "cannot send %zu fds in one message (max %d)",
                   nfds, QEMU_SOCKET_MAX_FDS);
        return -1;
    }
    if (len == 0) {
        error_setg(errp, "cannot send an empty message");
        return -1;
    }
    while (done < len) {
        struct iovec iov = { .iov_base = (void *)(p + done),
                             .iov_len = len - done };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        g_autofree char *control = NULL;
        ssize_t n;

        /* The fds ride on the first chunk only. */
        if (done == 0 && nfds) {
            size_t clen = CMSG_SPACE(nfds * sizeof(int));
            struct cmsghdr *cmsg;

            control = g_malloc0(clen);
            msg.msg_control = control;
            msg.msg_controllen = clen;
            cmsg = CMSG_FIRSTHDR(&msg);
            cmsg->cmsg_level = SOL_SOCKET;
            cmsg->cmsg_type = SCM_RIGHTS;
            cmsg->cmsg_len = CMSG_LEN(nfds * sizeof(int));
            memcpy(CMSG_DATA(cmsg), fds, nfds * sizeof(int));
        }
        n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error_setg_errno(errp, errno, "socket send failed");
            return -1;
        }
        done += n;
    }
    return len;
}

static void close_fds(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        close(fds[i]);
    }
}

ssize_t qemu_recv_with_fds(int sock, void *buf, size_t len, int *fds,
                           size_t *nfds_inout, Error **errp)
{
    uint8_t *p = buf;
    size_t cap = nfds_inout ? *nfds_inout : 0;
    size_t got_fds = 0;
    bool surplus = false;
    size_t done = 0;
    /* Room for whatever the kernel may attach, so surplus can be closed. */
    union {
        char buf[CMSG_SPACE(QEMU_SOCKET_MAX_FDS * sizeof(int))];
        struct cmsghdr align;
    } control;

    if (nfds_inout) {
        *nfds_inout = 0;
    }
    if (len == 0) {
        error_setg(errp, "cannot receive an empty message");
        return -1;
    }
    while (done < len) {
        struct iovec iov = { .iov_base = p + done, .iov_len = len - done };
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1,
            .msg_control = control.buf, .msg_controllen = sizeof(control.buf),
        };
        struct cmsghdr *cmsg;
        ssize_t n;

        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error_setg_errno(errp, errno, "socket receive failed");
            goto fail;
        }
        for (cmsg = CMSG_FIRSTHDR(&msg); cmsg;
             cmsg = CMSG_NXTHDR(&msg, cmsg)) {
            size_t count;
            int *in;

            if (cmsg->cmsg_level != SOL_SOCKET ||
                cmsg->cmsg_type != SCM_RIGHTS ||
                cmsg->cmsg_len < CMSG_LEN(0)) {
                continue;
            }
            count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            in = (int *)CMSG_DATA(cmsg);
            for (size_t i = 0; i < count; i++) {
                int fd;

                memcpy(&fd, &in[i], sizeof(fd));
                if (got_fds < cap) {
                    fds[got_fds++] = fd;
                } else {
                    surplus = true;
                    close(fd);
                }
            }
        }
        if (msg.msg_flags & MSG_CTRUNC) {
            surplus = true;
        }
        if (n == 0) {
            if (done == 0 && got_fds == 0 && !surplus) {
                return 0;
            }
            error_setg(errp, "connection closed in the middle of a message "
                       "(%zu of %zu bytes)", done, len);
            goto fail;
        }
        done += n;
    }
    if (surplus) {
        error_setg(errp, "peer sent more file descriptors than allowed (%zu)",
                   cap);
        goto fail;
    }
    if (nfds_inout) {
        *nfds_inout = got_fds;
    }
    return len;

fail:
    close_fds(fds, got_fds);
    return -1;
}
