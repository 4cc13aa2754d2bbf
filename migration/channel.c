/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Buffered migration channel (see channel.h).
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "migration/channel.h"
#include "qapi/error.h"

#define MIG_FILE_BUF (256 * 1024)
#define RATE_WINDOW_NS (100 * 1000 * 1000LL)

struct MigFile {
    int fd;                     /* -1 for memory channels */
    int cancel_fd;              /* eventfd, -1 for memory channels */
    bool cancelled;
    Error *err;                 /* the sticky first error */
    uint8_t *buf;
    size_t buf_len;             /* write: pending; read: valid bytes */
    size_t buf_pos;             /* read: consumed */
    const uint8_t *mem;         /* memory reader */
    size_t mem_len, mem_pos;
    GByteArray *mem_out;        /* memory writer */
    uint64_t bytes;
    uint64_t rate_limit;
    int64_t window_start;
    uint64_t window_bytes;
    bool buf_reading;           /* buf holds read-ahead, not output */
    bool watch_peer;
    bool peer_spoke;
    int write_timeout_ms;       /* -1: none */
};

static int64_t now_ns(void)
{
    return g_get_monotonic_time() * 1000;
}

MigFile *mig_file_new_fd(int fd)
{
    MigFile *f = g_new0(MigFile, 1);
    int fl = fcntl(fd, F_GETFL);

    f->fd = fd;
    f->write_timeout_ms = -1;
    f->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    f->buf = g_malloc(MIG_FILE_BUF);
    if (fl >= 0 && !(fl & O_NONBLOCK)) {
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    }
    return f;
}

MigFile *mig_file_new_mem_reader(const uint8_t *data, size_t len)
{
    MigFile *f = g_new0(MigFile, 1);

    f->fd = -1;
    f->cancel_fd = -1;
    f->mem = data;
    f->mem_len = len;
    return f;
}

MigFile *mig_file_new_mem_writer(GByteArray *out)
{
    MigFile *f = g_new0(MigFile, 1);

    f->fd = -1;
    f->cancel_fd = -1;
    f->mem_out = out;
    return f;
}

void mig_file_free(MigFile *f)
{
    if (!f) {
        return;
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    if (f->cancel_fd >= 0) {
        close(f->cancel_fd);
    }
    error_free(f->err);
    g_free(f->buf);
    g_free(f);
}

static bool sticky(MigFile *f, Error **errp)
{
    if (__atomic_load_n(&f->cancelled, __ATOMIC_ACQUIRE) && !f->err) {
        error_setg(&f->err, "migration cancelled");
    }
    if (f->err) {
        error_setg(errp, "%s", error_get_pretty(f->err));
        return true;
    }
    return false;
}

/* Waits until fd is ready for events or the channel is cancelled. */
static bool wait_fd(MigFile *f, short events, int timeout_ms, Error **errp)
{
    bool peer = events == POLLOUT && f->watch_peer;
    struct pollfd p[2] = {
        { .fd = f->fd, .events = events | (peer ? POLLIN : 0) },
        { .fd = f->cancel_fd, .events = POLLIN },
    };
    int r;

    do {
        r = poll(p, f->cancel_fd >= 0 ? 2 : 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        error_setg_errno(&f->err, errno, "migration channel: poll");
    } else if (r == 0) {
        error_setg(&f->err, "migration channel: the peer does not read "
                   "(timed out)");
    } else if (p[1].revents) {
        __atomic_store_n(&f->cancelled, true, __ATOMIC_RELEASE);
    } else if (peer && (p[0].revents & POLLIN) && !(p[0].revents & POLLOUT)) {
        f->peer_spoke = true;
        error_setg(&f->err, "the destination stopped reading the stream");
    }
    return !sticky(f, errp);
}

static bool write_all(MigFile *f, const uint8_t *p, size_t len, Error **errp)
{
    while (len) {
        ssize_t n = write(f->fd, p, len);

        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(f, POLLOUT, f->write_timeout_ms, errp)) {
                return false;
            }
            continue;
        }
        if (n <= 0) {
            error_setg_errno(&f->err, n < 0 ? errno : EPIPE,
                             "migration channel: write failed");
            return !sticky(f, errp);
        }
        p += n;
        len -= n;
        if (sticky(f, errp)) {
            return false;
        }
    }
    return true;
}

/* Sleeps (cancellably) while this window's budget is spent. */
static bool rate_limit(MigFile *f, size_t len, Error **errp)
{
    uint64_t budget;
    int64_t now;

    if (!f->rate_limit || f->fd < 0) {
        return true;
    }
    budget = MAX(f->rate_limit / 10, 1);
    now = now_ns();
    if (now - f->window_start >= RATE_WINDOW_NS) {
        f->window_start = now;
        f->window_bytes = 0;
    }
    f->window_bytes += len;
    while (f->window_bytes > budget) {
        int64_t left = f->window_start + RATE_WINDOW_NS - now_ns();

        if (left > 0) {
            struct pollfd p = { .fd = f->cancel_fd, .events = POLLIN };

            if (poll(&p, 1, (int)(left / 1000000) + 1) > 0) {
                __atomic_store_n(&f->cancelled, true, __ATOMIC_RELEASE);
            }
            if (sticky(f, errp)) {
                return false;
            }
        }
        f->window_start += RATE_WINDOW_NS;
        f->window_bytes -= MIN(f->window_bytes, budget);
    }
    return true;
}

bool mig_file_flush(MigFile *f, Error **errp)
{
    size_t len;

    if (sticky(f, errp)) {
        return false;
    }
    if (f->mem_out || !f->buf_len || f->buf_reading) {
        return true;
    }
    len = f->buf_len;
    f->buf_len = 0;
    return rate_limit(f, len, errp) && write_all(f, f->buf, len, errp);
}

bool mig_file_write(MigFile *f, const void *buf, size_t len, Error **errp)
{
    const uint8_t *p = buf;

    if (sticky(f, errp)) {
        return false;
    }
    f->bytes += len;
    if (f->buf_reading) {
        /* Turning round (a verdict after reading): drop the read-ahead. */
        f->buf_reading = false;
        f->buf_len = f->buf_pos = 0;
    }
    if (f->mem_out) {
        g_byte_array_append(f->mem_out, p, len);
        return true;
    }
    while (len) {
        size_t n = MIN(len, MIG_FILE_BUF - f->buf_len);

        memcpy(f->buf + f->buf_len, p, n);
        f->buf_len += n;
        p += n;
        len -= n;
        if (f->buf_len == MIG_FILE_BUF && !mig_file_flush(f, errp)) {
            return false;
        }
    }
    return true;
}

bool mig_file_read(MigFile *f, void *buf, size_t len, Error **errp)
{
    uint8_t *p = buf;

    if (sticky(f, errp)) {
        return false;
    }
    if (f->mem) {
        if (len > f->mem_len - f->mem_pos) {
            error_setg(&f->err, "migration stream ended unexpectedly");
            return !sticky(f, errp);
        }
        memcpy(p, f->mem + f->mem_pos, len);
        f->mem_pos += len;
        f->bytes += len;
        return true;
    }
    while (len) {
        size_t avail = f->buf_len - f->buf_pos;
        ssize_t n;

        if (avail) {
            size_t k = MIN(avail, len);

            memcpy(p, f->buf + f->buf_pos, k);
            f->buf_pos += k;
            p += k;
            len -= k;
            f->bytes += k;
            continue;
        }
        n = read(f->fd, f->buf, MIG_FILE_BUF);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(f, POLLIN, -1, errp)) {
                return false;
            }
            continue;
        }
        if (n < 0) {
            error_setg_errno(&f->err, errno, "migration channel: read failed");
            return !sticky(f, errp);
        }
        if (n == 0) {
            error_setg(&f->err, "migration stream ended unexpectedly (the "
                       "source closed the connection)");
            return !sticky(f, errp);
        }
        f->buf_len = n;
        f->buf_pos = 0;
        f->buf_reading = true;
        if (sticky(f, errp)) {
            return false;
        }
    }
    return true;
}

uint64_t mig_file_bytes(const MigFile *f)
{
    return f->bytes;
}

void mig_file_set_rate_limit(MigFile *f, uint64_t bytes_per_sec)
{
    f->rate_limit = bytes_per_sec;
}

void mig_file_cancel(MigFile *f)
{
    uint64_t one = 1;

    __atomic_store_n(&f->cancelled, true, __ATOMIC_RELEASE);
    if (f->cancel_fd >= 0 && write(f->cancel_fd, &one, sizeof(one)) < 0) {
        /* Already signalled (counter full): nothing more to do. */
    }
}

void mig_file_watch_peer(MigFile *f)
{
    f->watch_peer = true;
}

bool mig_file_peer_spoke(const MigFile *f)
{
    return f->peer_spoke;
}

void mig_file_set_write_timeout(MigFile *f, int timeout_ms)
{
    f->write_timeout_ms = timeout_ms > 0 ? timeout_ms : -1;
}

int mig_file_fd(const MigFile *f)
{
    return f->fd;
}

void mig_file_close(MigFile *f)
{
    if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
    }
    if (!f->err) {
        error_setg(&f->err, "migration channel closed");
    }
}

void mig_file_shutdown(MigFile *f)
{
    if (f->fd >= 0) {
        shutdown(f->fd, SHUT_RDWR);
    }
}
