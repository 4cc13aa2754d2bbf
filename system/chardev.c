/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Character devices: socket (UNIX or TCP, client or listening, raw or
 * telnet; or an inherited fd), stdio, file, pty and null back-ends, and
 * the front-end API.  Any back-end can also log what the front-end
 * writes (logfile=, logappend=), whether or not a peer is connected.
 *
 * Input is read only while a front-end with a read handler is attached,
 * has seen CHR_EVENT_OPENED and accepts bytes (can_read > 0).  Teardown
 * after a write error is deferred to a bottom half so a front-end never
 * sees CHR_EVENT_CLOSED from inside its own write call.
 */
#include "qemu/osdep.h"
#include "qemu/fd-owner.h"
#include "chardev/char.h"
#include "system/fdset.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qemu/option.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include <poll.h>
#include <termios.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "trace.h"

/* Telnet (RFC 854, 857, 858): the bytes a server needs. */
#define TN_IAC  255
#define TN_DONT 254
#define TN_DO   253
#define TN_WONT 252
#define TN_WILL 251
#define TN_SB   250
#define TN_SE   240
#define TN_OPT_ECHO 1
#define TN_OPT_SGA  3
#define TN_OPT_LINEMODE 34

typedef enum TelnetState {
    TELNET_DATA,
    TELNET_IAC,         /* after IAC */
    TELNET_OPTION,      /* after IAC WILL/WONT/DO/DONT */
    TELNET_SB,          /* in a subnegotiation */
    TELNET_SB_IAC,      /* IAC inside one */
    TELNET_CR,          /* after CR: a NUL that follows is padding */
} TelnetState;

typedef enum ChardevKind {
    CHARDEV_KIND_SOCKET,
    CHARDEV_KIND_STDIO,
    CHARDEV_KIND_FILE,
    CHARDEV_KIND_NULL,
    CHARDEV_KIND_PTY,
} ChardevKind;

struct Chardev {
    char *label;
    ChardevKind kind;
    int in_fd;              /* -1: no input */
    int out_fd;             /* -1: output dropped */
    bool out_is_socket;
    int listen_fd;          /* socket server, -1 otherwise */
    int claimed_fd;         /* a passed fd= it owns (fd-owner.h), or -1 */
    char *unlink_path;      /* socket file we bound */
    bool connected;
    bool opened_sent;       /* front-end has seen OPENED for this peer */
    bool read_watch;
    bool write_watch;
    bool throttled;         /* front-end's can_read returned 0 */
    GString *outbuf;        /* output the peer has not taken yet */
    CharBackend *be;
    QEMUBH *open_bh;
    QEMUBH *disconnect_bh;
    char *filename;         /* for query-chardev */
    int pty_fd;             /* pty master, -1 otherwise */
    QEMUTimer *pty_timer;   /* polls for a process opening the slave */
    GArray *msgfds;         /* SCM_RIGHTS fds of the last socket read */
    int log_fd;             /* logfile=, -1 if none */
    bool telnet;            /* telnet=on: negotiate, filter, escape */
    TelnetState telnet_state;
    bool nodelay;
};

/* At most this many fds ride along one read (more are closed). */
#define CHR_MAX_MSGFDS 16

/* What a spec or option list asks for. */
typedef struct ChardevConfig {
    const char *backend;
    const char *path;
    bool server;
    bool wait;
    bool wait_set;
    int fd;                 /* -1 if not given */
    bool append;
    const char *host, *port;        /* TCP */
    bool telnet, nodelay;
    const char *logfile;
    bool logappend;
} ChardevConfig;

/* A pty has no connect event: look for a slave user this often. */
#define CHR_PTY_POLL_MS 200

/*
 * Output a peer does not read is queued, never waited for, up to this
 * much; beyond it the peer is dropped.
 */
#define CHR_MAX_OUTBUF (16 * 1024 * 1024)
/* At deletion, queued output gets this long to drain (final events). */
#define CHR_FLUSH_AT_EXIT_MS 1000

static GHashTable *chardevs;    /* label -> Chardev */

static void chr_update_watch(Chardev *chr);
static void chr_remove_watches(Chardev *chr);
static void chr_accept(void *opaque);

Chardev *qemu_chr_find(const char *id)
{
    return chardevs && id ? g_hash_table_lookup(chardevs, id) : NULL;
}

const char *qemu_chr_get_label(const Chardev *chr)
{
    return chr->label;
}

const char *qemu_chr_get_filename(const Chardev *chr)
{
    return chr->filename;
}

bool qemu_chr_has_frontend(const Chardev *chr)
{
    return chr->be != NULL;
}

bool qemu_chr_frontend_open(const Chardev *chr)
{
    return chr->be && !chr->be->fe_closed;
}

void qemu_chr_fe_set_open(CharBackend *be, bool open)
{
    be->fe_closed = !open;
}

static gint chr_compare_label(gconstpointer a, gconstpointer b)
{
    return strcmp(((const Chardev *)a)->label, ((const Chardev *)b)->label);
}

void qemu_chr_foreach(void (*fn)(Chardev *chr, void *opaque), void *opaque)
{
    g_autoptr(GList) all = NULL;
    GList *l;

    if (!chardevs) {
        return;
    }
    all = g_list_sort(g_hash_table_get_values(chardevs), chr_compare_label);
    for (l = all; l; l = l->next) {
        fn(l->data, opaque);
    }
}

static void chr_send_event(Chardev *chr, QEMUChrEvent event)
{
    CharBackend *be = chr->be;

    if (be && be->chr_event) {
        be->chr_event(be->opaque, event);
    }
}

static void chr_set_listening(Chardev *chr, bool on)
{
    if (chr->listen_fd >= 0) {
        qemu_set_fd_handler(chr->listen_fd, on ? chr_accept : NULL, NULL,
                            chr);
    }
}

/* Closes the received fds the front-end did not take. */
static void chr_drop_msgfds(Chardev *chr)
{
    for (guint i = 0; chr->msgfds && i < chr->msgfds->len; i++) {
        close(g_array_index(chr->msgfds, int, i));
    }
    if (chr->msgfds) {
        g_array_set_size(chr->msgfds, 0);
    }
}

/* Drops the peer; a listening socket waits for the next one. */
static void chr_disconnect(Chardev *chr)
{
    bool was_open = chr->opened_sent;

    if (!chr->connected) {
        return;
    }
    trace_chardev_disconnect(chr->label);
    chr_remove_watches(chr);
    g_string_truncate(chr->outbuf, 0);
    chr_drop_msgfds(chr);
    if (chr->kind == CHARDEV_KIND_SOCKET) {
        /* A passed connected socket closes here: its number is free. */
        if (chr->in_fd == chr->claimed_fd) {
            qemu_fd_release(chr->claimed_fd);
            chr->claimed_fd = -1;
        }
        close(chr->in_fd);
    }
    if (chr->kind == CHARDEV_KIND_SOCKET || chr->kind == CHARDEV_KIND_PTY) {
        chr->out_fd = -1;
    }
    if (chr->pty_timer) {
        timer_mod_ns(chr->pty_timer, qemu_clock_get_ns(QEMU_CLOCK_REALTIME) +
                     CHR_PTY_POLL_MS * SCALE_MS);
    }
    chr->in_fd = -1;
    chr->connected = false;
    chr->opened_sent = false;
    qemu_bh_cancel(chr->open_bh);
    if (was_open) {
        chr_send_event(chr, CHR_EVENT_CLOSED);
    }
    chr_set_listening(chr, true);
}

static void chr_disconnect_bh(void *opaque)
{
    chr_disconnect(opaque);
}

/*
 * A socket read that keeps the fds sent along (for QMP getfd): they
 * replace any the front-end did not take from the previous read.
 */
static ssize_t chr_recv(Chardev *chr, uint8_t *buf, size_t len)
{
    union {
        char buf[CMSG_SPACE(CHR_MAX_MSGFDS * sizeof(int))];
        struct cmsghdr align;
    } control;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = control.buf, .msg_controllen = sizeof(control.buf),
    };
    ssize_t n = recvmsg(chr->in_fd, &msg, MSG_CMSG_CLOEXEC);

    if (n < 0) {
        return n;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
         c = CMSG_NXTHDR(&msg, c)) {
        size_t count;

        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
            c->cmsg_len < CMSG_LEN(0)) {
            continue;
        }
        chr_drop_msgfds(chr);
        if (!chr->msgfds) {
            chr->msgfds = g_array_new(false, false, sizeof(int));
        }
        count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int fd;

            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
            g_array_append_val(chr->msgfds, fd);
        }
    }
    return n;
}

/*
 * Strips telnet commands from @buf in place (the state carries over
 * between reads); returns how many data bytes are left.  An escaped IAC
 * is one data byte; negotiations and subnegotiations are dropped, as is
 * the NUL a client sends after CR.
 */
static size_t chr_telnet_filter(int *state, uint8_t *buf, size_t len)
{
    size_t out = 0;

    for (size_t i = 0; i < len; i++) {
        uint8_t c = buf[i];

        switch ((TelnetState)*state) {
        case TELNET_CR:
            *state = TELNET_DATA;
            if (c == 0) {
                break;
            }
            /* fall through */
        case TELNET_DATA:
            if (c == TN_IAC) {
                *state = TELNET_IAC;
            } else {
                buf[out++] = c;
                if (c == '\r') {
                    *state = TELNET_CR;
                }
            }
            break;
        case TELNET_IAC:
            if (c == TN_IAC) {
                buf[out++] = c;
                *state = TELNET_DATA;
            } else if (c >= TN_WILL && c <= TN_DONT) {
                *state = TELNET_OPTION;
            } else if (c == TN_SB) {
                *state = TELNET_SB;
            } else {
                *state = TELNET_DATA;   /* a two-byte command */
            }
            break;
        case TELNET_OPTION:
            *state = TELNET_DATA;
            break;
        case TELNET_SB:
            if (c == TN_IAC) {
                *state = TELNET_SB_IAC;
            }
            break;
        case TELNET_SB_IAC:
            *state = c == TN_SE ? TELNET_DATA : TELNET_SB;
            break;
        }
    }
    return out;
}

/* The server's side of character mode: it echoes, no go-aheads. */
static void chr_telnet_negotiate(Chardev *chr)
{
    static const uint8_t neg[] = {
        TN_IAC, TN_WILL, TN_OPT_ECHO,
        TN_IAC, TN_WILL, TN_OPT_SGA,
        TN_IAC, TN_DONT, TN_OPT_LINEMODE,
        TN_IAC, TN_DO, TN_OPT_SGA,
    };

    chr->telnet_state = TELNET_DATA;
    g_string_append_len(chr->outbuf, (const char *)neg, sizeof(neg));
}

static void chr_read_ready(void *opaque)
{
    Chardev *chr = opaque;
    CharBackend *be = chr->be;
    uint8_t buf[4096];
    int max = sizeof(buf);
    ssize_t n;

    if (!be || !be->chr_read) {
        chr_update_watch(chr);
        return;
    }
    if (be->chr_can_read) {
        max = MIN(max, be->chr_can_read(be->opaque));
        if (max <= 0) {
            /* Resumed by qemu_chr_fe_accept_input(). */
            chr->throttled = true;
            chr_update_watch(chr);
            return;
        }
    }
    if (chr->kind == CHARDEV_KIND_SOCKET) {
        n = chr_recv(chr, buf, max);
    } else {
        n = read(chr->in_fd, buf, max);
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (n <= 0 && chr->kind != CHARDEV_KIND_SOCKET &&
        chr->kind != CHARDEV_KIND_PTY) {
        /* stdin at EOF (e.g. /dev/null): output keeps working. */
        chr_remove_watches(chr);
        chr->in_fd = -1;
        chr_update_watch(chr);
        return;
    }
    if (n <= 0) {
        chr_disconnect(chr);
        return;
    }
    if (chr->telnet) {
        int state = chr->telnet_state;

        n = chr_telnet_filter(&state, buf, n);
        chr->telnet_state = state;
        if (!n) {
            return;
        }
    }
    be->chr_read(be->opaque, buf, n);
}

/* Sends queued output; false if the peer is gone. */
static bool chr_flush(Chardev *chr)
{
    while (chr->outbuf->len) {
        ssize_t n;

        if (chr->out_is_socket) {
            n = send(chr->out_fd, chr->outbuf->str, chr->outbuf->len,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            n = write(chr->out_fd, chr->outbuf->str, chr->outbuf->len);
        }
        if (n > 0) {
            g_string_erase(chr->outbuf, 0, n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n < 0 && errno == EAGAIN;
    }
    return true;
}

static void chr_write_ready(void *opaque)
{
    Chardev *chr = opaque;

    if (!chr_flush(chr)) {
        if (chr->kind == CHARDEV_KIND_SOCKET || chr->kind == CHARDEV_KIND_PTY) {
            chr_disconnect(chr);
            return;
        }
        g_string_truncate(chr->outbuf, 0);     /* e.g. a full disk */
    }
    chr_update_watch(chr);
}

static void chr_remove_watches(Chardev *chr)
{
    if (chr->read_watch) {
        qemu_set_fd_handler(chr->in_fd, NULL, NULL, NULL);
    }
    if (chr->write_watch) {
        qemu_set_fd_handler(chr->out_fd, NULL, NULL, NULL);
    }
    chr->read_watch = false;
    chr->write_watch = false;
}

/* Watches for input and for room to send queued output, as needed. */
static void chr_update_watch(Chardev *chr)
{
    CharBackend *be = chr->be;
    bool want_read = chr->connected && chr->in_fd >= 0 && chr->opened_sent &&
                     !chr->throttled && be && be->chr_read;
    bool want_write = chr->connected && chr->out_fd >= 0 &&
                      chr->outbuf->len > 0;

    if (want_read == chr->read_watch && want_write == chr->write_watch) {
        return;
    }
    if (chr->in_fd >= 0 && chr->in_fd == chr->out_fd) {
        qemu_set_fd_handler(chr->in_fd, want_read ? chr_read_ready : NULL,
                            want_write ? chr_write_ready : NULL, chr);
    } else {
        if (want_read != chr->read_watch) {
            qemu_set_fd_handler(chr->in_fd, want_read ? chr_read_ready : NULL,
                                NULL, chr);
        }
        if (want_write != chr->write_watch) {
            qemu_set_fd_handler(chr->out_fd, NULL,
                                want_write ? chr_write_ready : NULL, chr);
        }
    }
    chr->read_watch = want_read;
    chr->write_watch = want_write;
}

/* Tells the front-end about the peer, then starts reading. */
static void chr_deliver_open(Chardev *chr)
{
    if (!chr->connected || chr->opened_sent || !chr->be) {
        return;
    }
    chr->opened_sent = true;
    chr_send_event(chr, CHR_EVENT_OPENED);
    if (chr->connected) {
        chr_update_watch(chr);
    }
}

static void chr_open_bh(void *opaque)
{
    chr_deliver_open(opaque);
}

static void chr_set_connected(Chardev *chr, int in_fd, int out_fd)
{
    chr->in_fd = in_fd;
    chr->out_fd = out_fd;
    chr->connected = true;
    chr->opened_sent = false;
    chr->throttled = false;
    if (chr->be) {
        qemu_bh_schedule(chr->open_bh);
    }
}

static void chr_accept(void *opaque)
{
    Chardev *chr = opaque;
    int fd;

    fd = accept4(chr->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        return;
    }
    if (chr->connected) {
        /* One client at a time. */
        close(fd);
        return;
    }
    trace_chardev_accept(chr->label, fd);
    if (chr->nodelay) {
        int one = 1;

        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    chr_set_listening(chr, false);
    chr_set_connected(chr, fd, fd);
    if (chr->telnet) {
        chr_telnet_negotiate(chr);
        chr_flush(chr);
    }
    chr_deliver_open(chr);
}

/* ---- back-end set-up ---- */

static bool unix_addr(const char *path, struct sockaddr_un *addr,
                      Error **errp)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (!path || !*path) {
        error_setg(errp, "chardev: socket path is missing");
        return false;
    }
    if (strlen(path) >= sizeof(addr->sun_path)) {
        error_setg(errp, "UNIX socket path '%s' is too long", path);
        return false;
    }
    strcpy(addr->sun_path, path);
    return true;
}

/* host=, port=: a TCP listener or client (IPv4 or IPv6). */
static bool chr_tcp_open(Chardev *chr, const ChardevConfig *cfg,
                         Error **errp)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
        .ai_flags = cfg->server ? AI_PASSIVE : 0,
    };
    struct addrinfo *res = NULL, *ai;
    const char *host = cfg->host && *cfg->host ? cfg->host : NULL;
    int rc, fd = -1, saved = 0;

    if (!cfg->port || !*cfg->port) {
        error_setg(errp, "chardev: socket: 'port' is required with "
                   "'host'");
        return false;
    }
    if (!cfg->server && !host) {
        host = "localhost";
    }
    rc = getaddrinfo(host, cfg->port, &hints, &res);
    if (rc) {
        error_setg(errp, "address resolution failed for %s:%s: %s",
                   host ? host : "", cfg->port, gai_strerror(rc));
        return false;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        int one = 1;

        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        if (cfg->server) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                listen(fd, 1) == 0) {
                break;
            }
        } else if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            break;
        }
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        error_setg_errno(errp, saved, "Failed to %s %s:%s",
                         cfg->server ? "listen on" : "connect to",
                         host ? host : "*", cfg->port);
        return false;
    }
    chr->out_is_socket = true;
    if (!cfg->server) {
        if (cfg->nodelay) {
            int one = 1;

            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        chr_set_connected(chr, fd, fd);
        return true;
    }
    chr->listen_fd = fd;
    if (cfg->wait) {
        int cfd;

        info_report("waiting for connection on: %s%s:%s,server=on",
                    cfg->telnet ? "telnet:" : "tcp:", host ? host : "",
                    cfg->port);
        do {
            cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        } while (cfd < 0 && errno == EINTR);
        if (cfd < 0) {
            error_setg_errno(errp, errno, "Failed to accept on %s:%s",
                             host ? host : "", cfg->port);
            return false;
        }
        chr_set_connected(chr, cfd, cfd);
        if (chr->telnet) {
            chr_telnet_negotiate(chr);
            chr_flush(chr);
        }
        return true;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    chr_set_listening(chr, true);
    return true;
}

static bool chr_socket_open(Chardev *chr, const ChardevConfig *cfg,
                            Error **errp)
{
    struct sockaddr_un addr;
    int fd;

    chr->telnet = cfg->telnet;
    chr->nodelay = cfg->nodelay;
    if (cfg->fd < 0 && (cfg->host || cfg->port)) {
        return chr_tcp_open(chr, cfg, errp);
    }
    if (cfg->telnet) {
        error_setg(errp, "chardev: telnet=on needs a TCP socket (host=, "
                   "port=)");
        return false;
    }
    chr->out_is_socket = true;
    if (cfg->fd >= 0) {
        struct stat st;
        int listening = 0;
        socklen_t len = sizeof(listening);

        if (fstat(cfg->fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
            error_setg(errp, "chardev: fd %d is not a socket", cfg->fd);
            return false;
        }
        if (getsockopt(cfg->fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
                       &len) < 0) {
            error_setg_errno(errp, errno, "chardev: fd %d", cfg->fd);
            return false;
        }
        fcntl(cfg->fd, F_SETFD, FD_CLOEXEC);
        fcntl(cfg->fd, F_SETFL, fcntl(cfg->fd, F_GETFL) | O_NONBLOCK);
        if (listening) {
            chr->listen_fd = cfg->fd;
            chr_set_listening(chr, true);
        } else {
            chr_set_connected(chr, cfg->fd, cfg->fd);
        }
        return true;
    }

    if (!unix_addr(cfg->path, &addr, errp)) {
        return false;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error_setg_errno(errp, errno, "Failed to create socket");
        return false;
    }
    if (!cfg->server) {
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
            error_setg_errno(errp, errno, "Failed to connect to '%s'",
                             cfg->path);
            close(fd);
            return false;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        chr_set_connected(chr, fd, fd);
        return true;
    }

    /* A stale socket file from an earlier run would make bind() fail. */
    {
        struct stat st;
        if (stat(cfg->path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            unlink(cfg->path);
        }
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
        listen(fd, 1) < 0) {
        error_setg_errno(errp, errno, "Failed to bind socket to %s",
                         cfg->path);
        close(fd);
        return false;
    }
    chr->listen_fd = fd;
    chr->unlink_path = g_strdup(cfg->path);
    if (cfg->wait) {
        int cfd;

        info_report("waiting for connection on: %s,server=on", cfg->path);
        do {
            cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        } while (cfd < 0 && errno == EINTR);
        if (cfd < 0) {
            error_setg_errno(errp, errno, "Failed to accept on %s",
                             cfg->path);
            return false;
        }
        chr_set_connected(chr, cfd, cfd);
        return true;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    chr_set_listening(chr, true);
    return true;
}

static bool chr_file_open(Chardev *chr, const ChardevConfig *cfg,
                          Error **errp)
{
    int flags = O_WRONLY | O_CREAT | (cfg->append ? O_APPEND : O_TRUNC);
    int fd;

    if (!cfg->path || !*cfg->path) {
        error_setg(errp, "chardev: file: path is missing");
        return false;
    }
    /* /dev/fdset/N: a descriptor passed with -add-fd. */
    fd = fdset_open(cfg->path, flags, 0666, errp);
    if (fd < 0) {
        return false;
    }
    chr_set_connected(chr, -1, fd);
    return true;
}

static void chr_pty_poll(void *opaque)
{
    Chardev *chr = opaque;
    struct pollfd pfd = { .fd = chr->pty_fd, .events = POLLIN };

    if (chr->connected) {
        return;
    }
    /* The master reports POLLHUP while no process has the slave open. */
    if (poll(&pfd, 1, 0) >= 0 && !(pfd.revents & POLLHUP)) {
        chr_set_connected(chr, chr->pty_fd, chr->pty_fd);
        chr_deliver_open(chr);
        return;
    }
    timer_mod_ns(chr->pty_timer, qemu_clock_get_ns(QEMU_CLOCK_REALTIME) +
                 CHR_PTY_POLL_MS * SCALE_MS);
}

static bool chr_pty_open(Chardev *chr, const char *label, Error **errp)
{
    struct termios tio;
    char name[128];
    int fd;

    fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || grantpt(fd) < 0 || unlockpt(fd) < 0 ||
        ptsname_r(fd, name, sizeof(name)) != 0) {
        error_setg_errno(errp, errno, "Failed to create a pty");
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    /* Bytes pass through untouched: no echo, no line editing. */
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        tcsetattr(fd, TCSAFLUSH, &tio);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    chr->pty_fd = fd;
    chr->filename = g_strdup_printf("pty:%s", name);
    chr->pty_timer = timer_new_ns(QEMU_CLOCK_REALTIME, chr_pty_poll, chr);
    timer_mod_ns(chr->pty_timer, qemu_clock_get_ns(QEMU_CLOCK_REALTIME));
    /* libvirt and users look for this line. */
    info_report("char device redirected to %s (label %s)", name, label);
    return true;
}

static Chardev *chr_create(const char *label, const ChardevConfig *cfg,
                           Error **errp)
{
    g_autofree Chardev *chr = NULL;
    bool ok;

    if (!label || !*label) {
        error_setg(errp, "chardev: no id specified");
        return NULL;
    }
    if (qemu_chr_find(label)) {
        error_setg(errp, "Duplicate chardev ID '%s'", label);
        return NULL;
    }
    chr = g_new0(Chardev, 1);
    chr->in_fd = -1;
    chr->out_fd = -1;
    chr->listen_fd = -1;
    chr->claimed_fd = -1;
    chr->pty_fd = -1;
    chr->log_fd = -1;
    chr->outbuf = g_string_new(NULL);
    chr->open_bh = qemu_bh_new(chr_open_bh, chr);
    chr->disconnect_bh = qemu_bh_new(chr_disconnect_bh, chr);

    if (cfg->logfile) {
        /* /dev/fdset/N: libvirt passes the log it opened with -add-fd. */
        chr->log_fd = fdset_open(cfg->logfile, O_WRONLY | O_CREAT |
                                 (cfg->logappend ? O_APPEND : O_TRUNC),
                                 0666, errp);
        if (chr->log_fd < 0) {
            error_prepend(errp, "chardev '%s': logfile: ", label);
            g_string_free(chr->outbuf, TRUE);
            qemu_bh_delete(chr->open_bh);
            qemu_bh_delete(chr->disconnect_bh);
            return NULL;
        }
    }
    if (!strcmp(cfg->backend, "socket")) {
        chr->kind = CHARDEV_KIND_SOCKET;
        ok = chr_socket_open(chr, cfg, errp);
    } else if (!strcmp(cfg->backend, "stdio")) {
        chr->kind = CHARDEV_KIND_STDIO;
        chr_set_connected(chr, STDIN_FILENO, STDOUT_FILENO);
        ok = true;
    } else if (!strcmp(cfg->backend, "file")) {
        chr->kind = CHARDEV_KIND_FILE;
        ok = chr_file_open(chr, cfg, errp);
    } else if (!strcmp(cfg->backend, "null")) {
        chr->kind = CHARDEV_KIND_NULL;
        chr_set_connected(chr, -1, -1);
        ok = true;
    } else if (!strcmp(cfg->backend, "pty")) {
        chr->kind = CHARDEV_KIND_PTY;
        ok = chr_pty_open(chr, label, errp);
    } else {
        error_setg(errp, "'%s' is not a valid char driver name",
                   cfg->backend);
        ok = false;
    }
    if (!ok) {
        if (chr->log_fd >= 0) {
            close(chr->log_fd);
        }
        g_string_free(chr->outbuf, TRUE);
        qemu_bh_delete(chr->open_bh);
        qemu_bh_delete(chr->disconnect_bh);
        g_free(chr->unlink_path);
        if (chr->listen_fd >= 0) {
            chr_set_listening(chr, false);
            close(chr->listen_fd);
        }
        return NULL;
    }
    chr->label = g_strdup(label);
    if (chr->kind == CHARDEV_KIND_SOCKET && cfg->fd >= 0) {
        g_autofree char *owner = g_strdup_printf("chardev '%s'", label);

        /* The fd is the chardev's now: no backend may name it again. */
        if (qemu_fd_claim(cfg->fd, owner, NULL)) {
            chr->claimed_fd = cfg->fd;
        }
    }
    if (!chr->filename) {
        if (chr->kind == CHARDEV_KIND_SOCKET && cfg->fd >= 0) {
            chr->filename = g_strdup_printf("fd:%d", cfg->fd);
        } else if (chr->kind == CHARDEV_KIND_SOCKET && cfg->port) {
            chr->filename = g_strdup_printf("%s:%s:%s%s",
                                            cfg->telnet ? "telnet" : "tcp",
                                            cfg->host ? cfg->host : "",
                                            cfg->port,
                                            cfg->server ? ",server=on" : "");
        } else if (chr->kind == CHARDEV_KIND_SOCKET) {
            chr->filename = g_strdup_printf("unix:%s%s", cfg->path,
                                            cfg->server ? ",server=on" : "");
        } else if (chr->kind == CHARDEV_KIND_FILE) {
            chr->filename = g_strdup_printf("file:%s", cfg->path);
        } else {
            chr->filename = g_strdup(cfg->backend);
        }
    }
    if (!chardevs) {
        chardevs = g_hash_table_new(g_str_hash, g_str_equal);
    }
    g_hash_table_insert(chardevs, chr->label, chr);
    trace_chardev_new(chr->label, cfg->backend);
    return g_steal_pointer(&chr);
}

/* ---- option parsing ---- */

static bool chr_parse_fd(const char *str, int *fd, Error **errp)
{
    uint64_t v;

    if (!qemu_strtou64(str, &v, NULL) || v > INT_MAX) {
        error_setg(errp, "Parameter 'fd' expects a file descriptor number");
        return false;
    }
    /* Only an fd passed to us, and that no backend owns (fd-owner.h). */
    if (!qemu_fd_check_number(v, errp)) {
        error_prepend(errp, "Parameter 'fd' ");
        return false;
    }
    *fd = v;
    return true;
}

static bool chr_check_opt(void *opaque, const char *key, const char *value,
                          Error **errp)
{
    static const char *const known[] = {
        "backend", "id", "path", "server", "wait", "fd", "append",
        "nodelay", "telnet", "mux", "logfile", "logappend", "signal",
        "host", "port",
    };
    size_t i;

    for (i = 0; i < ARRAY_SIZE(known); i++) {
        if (!strcmp(key, known[i])) {
            return true;
        }
    }
    error_setg(errp, "Invalid parameter '%s'", key);
    return false;
}

Chardev *qemu_chr_new_from_opts(QemuOpts *opts, Error **errp)
{
    ChardevConfig cfg = { .fd = -1 };
    const char *id = qemu_opts_id(opts);
    const char *fd_str;
    Error *local_err = NULL;

    if (!id) {
        id = qemu_opt_get(opts, "id");
    }
    cfg.backend = qemu_opt_get(opts, "backend");
    if (!cfg.backend) {
        error_setg(errp, "chardev: \"%s\" missing backend",
                   id ? id : "(null)");
        return NULL;
    }
    if (!qemu_opt_foreach(opts, chr_check_opt, NULL, errp)) {
        return NULL;
    }
    cfg.path = qemu_opt_get(opts, "path");
    cfg.server = qemu_opt_get_bool(opts, "server", false, &local_err);
    if (!local_err) {
        cfg.wait_set = qemu_opt_has(opts, "wait");
        cfg.wait = qemu_opt_get_bool(opts, "wait", true, &local_err);
    }
    if (!local_err) {
        cfg.append = qemu_opt_get_bool(opts, "append", false, &local_err);
    }
    if (!local_err) {
        cfg.telnet = qemu_opt_get_bool(opts, "telnet", false, &local_err);
    }
    if (!local_err) {
        cfg.nodelay = qemu_opt_get_bool(opts, "nodelay", false, &local_err);
    }
    if (!local_err) {
        cfg.logappend = qemu_opt_get_bool(opts, "logappend", false,
                                          &local_err);
    }
    if (!local_err && qemu_opt_get_bool(opts, "mux", false, &local_err)) {
        error_setg(errp, "chardev '%s': mux=on is not supported: a chardev "
                   "has one front-end", id ? id : "");
        return NULL;
    }
    if (local_err) {
        error_propagate(errp, local_err);
        return NULL;
    }
    cfg.host = qemu_opt_get(opts, "host");
    cfg.port = qemu_opt_get(opts, "port");
    cfg.logfile = qemu_opt_get(opts, "logfile");
    if (cfg.logappend && !cfg.logfile) {
        error_setg(errp, "chardev '%s': logappend needs logfile",
                   id ? id : "");
        return NULL;
    }
    if ((cfg.host || cfg.port || cfg.telnet) &&
        strcmp(cfg.backend, "socket")) {
        error_setg(errp, "chardev '%s': host=, port= and telnet= are for "
                   "the socket back-end", id ? id : "");
        return NULL;
    }
    if (cfg.path && (cfg.host || cfg.port)) {
        error_setg(errp, "chardev '%s': give either path= (UNIX) or "
                   "host=/port= (TCP)", id ? id : "");
        return NULL;
    }
    fd_str = qemu_opt_get(opts, "fd");
    if (fd_str && !chr_parse_fd(fd_str, &cfg.fd, errp)) {
        return NULL;
    }
    if (!strcmp(cfg.backend, "socket") && cfg.fd < 0 && !cfg.path &&
        !cfg.port && !cfg.host) {
        error_setg(errp, "chardev: socket: 'path', 'port' or 'fd' is "
                   "required");
        return NULL;
    }
    if (!cfg.server) {
        cfg.wait = false;
    }
    return chr_create(id, &cfg, errp);
}

static bool chr_legacy_flag(const char *item, const char *name, bool *value,
                            Error **errp)
{
    g_autofree char *negated = g_strconcat("no", name, NULL);
    size_t len = strlen(name);

    if (!strcmp(item, name)) {
        *value = true;
        return true;
    }
    if (!strcmp(item, negated)) {
        *value = false;
        return true;
    }
    if (!strncmp(item, name, len) && item[len] == '=') {
        return qemu_strtobool(item + len + 1, value, errp);
    }
    error_setg(errp, "Invalid parameter '%s'", item);
    return false;
}

Chardev *qemu_chr_new(const char *label, const char *spec, Error **errp)
{
    ChardevConfig cfg = { .fd = -1 };
    g_auto(GStrv) items = NULL;
    size_t i;

    if (!spec || !strcmp(spec, "none")) {
        return NULL;
    }
    if (g_str_has_prefix(spec, "chardev:")) {
        Chardev *chr = qemu_chr_find(spec + 8);
        if (!chr) {
            error_setg(errp, "chardev '%s' not found", spec + 8);
        }
        return chr;
    }
    if (!strcmp(spec, "stdio") || !strcmp(spec, "null") ||
        !strcmp(spec, "pty")) {
        cfg.backend = spec;
        return chr_create(label, &cfg, errp);
    }
    if (g_str_has_prefix(spec, "file:")) {
        cfg.backend = "file";
        cfg.path = spec + 5;
        return chr_create(label, &cfg, errp);
    }
    if (g_str_has_prefix(spec, "fd:")) {
        cfg.backend = "socket";
        if (!chr_parse_fd(spec + 3, &cfg.fd, errp)) {
            return NULL;
        }
        return chr_create(label, &cfg, errp);
    }
    if (!g_str_has_prefix(spec, "unix:")) {
        error_setg(errp, "chardev: unsupported specification '%s'", spec);
        return NULL;
    }
    cfg.backend = "socket";
    items = g_strsplit(spec + 5, ",", -1);
    cfg.path = items[0];
    cfg.wait = true;
    for (i = 1; items[i]; i++) {
        bool ok;
        if (g_str_has_prefix(items[i], "server") ||
            g_str_has_prefix(items[i], "noserver")) {
            ok = chr_legacy_flag(items[i], "server", &cfg.server, errp);
        } else if (g_str_has_suffix(items[i], "wait") ||
                   g_str_has_prefix(items[i], "wait=")) {
            ok = chr_legacy_flag(items[i], "wait", &cfg.wait, errp);
        } else {
            error_setg(errp, "Invalid parameter '%s'", items[i]);
            ok = false;
        }
        if (!ok) {
            return NULL;
        }
    }
    if (!cfg.server) {
        cfg.wait = false;
    }
    return chr_create(label, &cfg, errp);
}

void qemu_chr_delete(Chardev *chr)
{
    if (!chr) {
        return;
    }
    if (chr->be) {
        chr->be->chr = NULL;
        chr->be = NULL;
    }
    /* Last words (e.g. the SHUTDOWN event) still reach a slow reader. */
    if (chr->connected && chr->out_fd >= 0 && chr->outbuf->len) {
        int waited;

        for (waited = 0; waited < CHR_FLUSH_AT_EXIT_MS && chr->outbuf->len &&
             chr_flush(chr); waited += 10) {
            struct pollfd pfd = { .fd = chr->out_fd, .events = POLLOUT };
            poll(&pfd, 1, 10);
        }
    }
    chr_disconnect(chr);
    chr_set_listening(chr, false);
    if (chr->listen_fd >= 0) {
        close(chr->listen_fd);
    }
    if (chr->claimed_fd >= 0) {
        qemu_fd_release(chr->claimed_fd);
    }
    if (chr->unlink_path) {
        unlink(chr->unlink_path);
        g_free(chr->unlink_path);
    }
    if (chr->kind == CHARDEV_KIND_FILE && chr->out_fd >= 0) {
        close(chr->out_fd);
    }
    if (chr->log_fd >= 0) {
        close(chr->log_fd);
    }
    timer_free(chr->pty_timer);
    if (chr->pty_fd >= 0) {
        close(chr->pty_fd);
    }
    g_free(chr->filename);
    chr_remove_watches(chr);
    chr_drop_msgfds(chr);
    if (chr->msgfds) {
        g_array_free(chr->msgfds, TRUE);
    }
    g_string_free(chr->outbuf, TRUE);
    qemu_bh_delete(chr->open_bh);
    qemu_bh_delete(chr->disconnect_bh);
    if (chardevs) {
        g_hash_table_remove(chardevs, chr->label);
    }
    g_free(chr->label);
    g_free(chr);
}

void qemu_chr_cleanup_all(void)
{
    GList *all, *l;

    if (!chardevs) {
        return;
    }
    all = g_hash_table_get_values(chardevs);
    for (l = all; l; l = l->next) {
        qemu_chr_delete(l->data);
    }
    g_list_free(all);
}

/* ---- front-end ---- */

bool qemu_chr_fe_init(CharBackend *be, Chardev *chr, Error **errp)
{
    memset(be, 0, sizeof(*be));
    if (!chr) {
        return true;
    }
    if (chr->be) {
        error_setg(errp, "Chardev '%s' is busy", chr->label);
        return false;
    }
    chr->be = be;
    be->chr = chr;
    return true;
}

void qemu_chr_fe_deinit(CharBackend *be, bool del)
{
    Chardev *chr = be->chr;

    if (!chr) {
        return;
    }
    qemu_chr_fe_set_handlers(be, NULL, NULL, NULL, NULL);
    chr->be = NULL;
    be->chr = NULL;
    chr->opened_sent = false;
    if (del) {
        qemu_chr_delete(chr);
    }
}

void qemu_chr_fe_set_handlers(CharBackend *be,
                              IOCanReadHandler *fd_can_read,
                              IOReadHandler *fd_read,
                              IOEventHandler *fd_event,
                              void *opaque)
{
    Chardev *chr = be->chr;

    be->chr_can_read = fd_can_read;
    be->chr_read = fd_read;
    be->chr_event = fd_event;
    be->opaque = opaque;
    if (!chr) {
        return;
    }
    if (!fd_can_read && !fd_read && !fd_event) {
        chr->opened_sent = false;
    } else if (chr->connected && !chr->opened_sent) {
        qemu_bh_schedule(chr->open_bh);
    }
    chr_update_watch(chr);
}

bool qemu_chr_fe_backend_connected(CharBackend *be)
{
    return be->chr && be->chr->connected;
}

int qemu_chr_fe_take_msgfd(CharBackend *be)
{
    Chardev *chr = be->chr;
    int fd;

    if (!chr || !chr->msgfds || !chr->msgfds->len) {
        return -1;
    }
    fd = g_array_index(chr->msgfds, int, chr->msgfds->len - 1);
    g_array_set_size(chr->msgfds, chr->msgfds->len - 1);
    return fd;
}

void qemu_chr_fe_accept_input(CharBackend *be)
{
    if (be->chr) {
        be->chr->throttled = false;
        chr_update_watch(be->chr);
    }
}

/* Everything the front-end writes, connected peer or not. */
static void chr_write_log(Chardev *chr, const uint8_t *buf, int len)
{
    while (len > 0) {
        ssize_t n = write(chr->log_fd, buf, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            trace_chardev_log_error(chr->label, errno);
            return;             /* a full disk loses log, not the guest */
        }
        buf += n;
        len -= n;
    }
}

int qemu_chr_fe_write_all(CharBackend *be, const uint8_t *buf, int len)
{
    Chardev *chr = be->chr;
    g_autofree uint8_t *escaped = NULL;
    int in_len = len;

    if (chr && chr->log_fd >= 0 && len > 0) {
        chr_write_log(chr, buf, len);
    }
    if (!chr || !chr->connected || len < 0) {
        return -1;
    }
    if (chr->telnet && memchr(buf, TN_IAC, len)) {
        int n = 0;

        escaped = g_malloc(len * 2);
        for (int i = 0; i < len; i++) {
            escaped[n++] = buf[i];
            if (buf[i] == TN_IAC) {
                escaped[n++] = TN_IAC;
            }
        }
        buf = escaped;
        len = n;
    }
    if (chr->kind == CHARDEV_KIND_NULL) {
        return len;
    }
    if (chr->out_fd < 0) {
        return -1;
    }
    if (chr->outbuf->len + len > CHR_MAX_OUTBUF) {
        /* The peer stopped reading long ago: drop it from the loop. */
        if (chr->kind == CHARDEV_KIND_SOCKET || chr->kind == CHARDEV_KIND_PTY) {
            qemu_bh_schedule(chr->disconnect_bh);
        }
        return -1;
    }
    /* Queue behind anything pending so bytes stay in order. */
    g_string_append_len(chr->outbuf, (const char *)buf, len);
    if (!chr_flush(chr)) {
        if (chr->kind == CHARDEV_KIND_SOCKET || chr->kind == CHARDEV_KIND_PTY) {
            qemu_bh_schedule(chr->disconnect_bh);
        }
        g_string_truncate(chr->outbuf, 0);
        return -1;
    }
    chr_update_watch(chr);
    return in_len;
}
