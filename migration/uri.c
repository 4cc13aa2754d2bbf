/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration addresses: parsing (pure) and opening (see uri.h).
 */
#include "qemu/osdep.h"
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include "migration/uri.h"
#include "monitor/monitor.h"
#include "qemu/sockets.h"
#include "qemu/option.h"
#include "qapi/error.h"

void migration_addr_clear(MigrationAddr *a)
{
    g_free(a->host);
    g_free(a->port);
    g_free(a->path);
    g_free(a->fd);
    g_strfreev(a->argv);
    memset(a, 0, sizeof(*a));
}

/* "HOST:PORT", "[V6]:PORT", ":PORT" (any host). */
static bool parse_host_port(const char *s, MigrationAddr *a, Error **errp)
{
    const char *colon;

    if (s[0] == '[') {
        const char *end = strchr(s, ']');

        if (!end || end[1] != ':') {
            error_setg(errp, "invalid IPv6 address in '%s'", s);
            return false;
        }
        a->host = g_strndup(s + 1, end - s - 1);
        colon = end + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon) {
            error_setg(errp, "'%s': expected HOST:PORT", s);
            return false;
        }
        a->host = g_strndup(s, colon - s);
    }
    a->port = g_strdup(colon + 1);
    if (!a->port[0] || strspn(a->port, "0123456789") != strlen(a->port) ||
        atoi(a->port) > 65535) {
        error_setg(errp, "'%s': invalid port", s);
        return false;
    }
    return true;
}

bool migration_uri_parse(const char *uri, bool allow_defer, MigrationAddr *a,
                         Error **errp)
{
    memset(a, 0, sizeof(*a));
    if (allow_defer && !strcmp(uri, "defer")) {
        a->transport = MIG_TRANSPORT_DEFER;
        return true;
    }
    if (g_str_has_prefix(uri, "tcp:")) {
        a->transport = MIG_TRANSPORT_TCP;
        if (!parse_host_port(uri + 4, a, errp)) {
            migration_addr_clear(a);
            return false;
        }
        return true;
    }
    if (g_str_has_prefix(uri, "unix:")) {
        a->transport = MIG_TRANSPORT_UNIX;
        if (!uri[5]) {
            error_setg(errp, "unix: needs a path");
            return false;
        }
        a->path = g_strdup(uri + 5);
        return true;
    }
    if (g_str_has_prefix(uri, "fd:")) {
        a->transport = MIG_TRANSPORT_FD;
        if (!uri[3]) {
            error_setg(errp, "fd: needs a file descriptor number or name");
            return false;
        }
        a->fd = g_strdup(uri + 3);
        return true;
    }
    if (g_str_has_prefix(uri, "exec:")) {
        a->transport = MIG_TRANSPORT_EXEC;
        if (!uri[5]) {
            error_setg(errp, "exec: needs a command");
            return false;
        }
        a->argv = g_new0(char *, 4);
        a->argv[0] = g_strdup("/bin/sh");
        a->argv[1] = g_strdup("-c");
        a->argv[2] = g_strdup(uri + 5);
        return true;
    }
    if (g_str_has_prefix(uri, "file:")) {
        const char *opt = strstr(uri + 5, ",offset=");

        a->transport = MIG_TRANSPORT_FILE;
        a->path = opt ? g_strndup(uri + 5, opt - (uri + 5))
                      : g_strdup(uri + 5);
        if (opt && !qemu_strtou64(opt + 8, &a->offset, NULL)) {
            error_setg(errp, "file: invalid offset '%s'", opt + 8);
            migration_addr_clear(a);
            return false;
        }
        if (!a->path[0]) {
            error_setg(errp, "file: needs a path");
            migration_addr_clear(a);
            return false;
        }
        return true;
    }
    error_setg(errp, "unknown migration protocol: %s", uri);
    error_append_hint(errp, "Use tcp:HOST:PORT, unix:PATH, fd:NAME, "
                      "exec:COMMAND or file:PATH.\n");
    return false;
}

static const char *member_str(JsonObject *o, const char *name)
{
    JsonNode *n = o ? json_object_get_member(o, name) : NULL;

    if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_STRING) {
        return NULL;
    }
    return json_node_get_string(n);
}

static bool parse_channel_addr(JsonObject *addr, MigrationAddr *a,
                               Error **errp)
{
    const char *transport = member_str(addr, "transport");

    if (!transport) {
        error_setg(errp, "Parameter 'transport' is missing");
        return false;
    }
    if (!strcmp(transport, "socket")) {
        const char *type = member_str(addr, "type");

        if (!g_strcmp0(type, "inet")) {
            const char *host = member_str(addr, "host");
            const char *port = member_str(addr, "port");

            if (!host || !port) {
                error_setg(errp, "socket address of type inet needs 'host' "
                           "and 'port'");
                return false;
            }
            a->transport = MIG_TRANSPORT_TCP;
            a->host = g_strdup(host);
            a->port = g_strdup(port);
            return true;
        }
        if (!g_strcmp0(type, "unix")) {
            const char *path = member_str(addr, "path");

            if (!path) {
                error_setg(errp, "Parameter 'path' is missing");
                return false;
            }
            a->transport = MIG_TRANSPORT_UNIX;
            a->path = g_strdup(path);
            return true;
        }
        if (!g_strcmp0(type, "fd")) {
            const char *str = member_str(addr, "str");

            if (!str) {
                error_setg(errp, "Parameter 'str' is missing");
                return false;
            }
            a->transport = MIG_TRANSPORT_FD;
            a->fd = g_strdup(str);
            return true;
        }
        error_setg(errp, "socket address type '%s' is not supported",
                   type ? type : "");
        return false;
    }
    if (!strcmp(transport, "exec")) {
        JsonNode *n = json_object_get_member(addr, "args");
        JsonArray *args = n && JSON_NODE_HOLDS_ARRAY(n)
                          ? json_node_get_array(n) : NULL;
        guint len = args ? json_array_get_length(args) : 0;

        if (!len) {
            error_setg(errp, "exec channel needs a non-empty 'args' array");
            return false;
        }
        a->transport = MIG_TRANSPORT_EXEC;
        a->argv = g_new0(char *, len + 1);
        for (guint i = 0; i < len; i++) {
            JsonNode *e = json_array_get_element(args, i);

            if (!JSON_NODE_HOLDS_VALUE(e) ||
                json_node_get_value_type(e) != G_TYPE_STRING) {
                error_setg(errp, "exec 'args' must be strings");
                migration_addr_clear(a);
                return false;
            }
            a->argv[i] = g_strdup(json_node_get_string(e));
        }
        return true;
    }
    if (!strcmp(transport, "file")) {
        const char *filename = member_str(addr, "filename");
        JsonNode *off = json_object_get_member(addr, "offset");

        if (!filename) {
            error_setg(errp, "Parameter 'filename' is missing");
            return false;
        }
        a->transport = MIG_TRANSPORT_FILE;
        a->path = g_strdup(filename);
        if (off && JSON_NODE_HOLDS_VALUE(off) &&
            json_node_get_value_type(off) == G_TYPE_INT64 &&
            json_node_get_int(off) >= 0) {
            a->offset = json_node_get_int(off);
        }
        return true;
    }
    error_setg(errp, "migration transport '%s' is not supported", transport);
    return false;
}

bool migration_channels_parse(JsonArray *channels, MigrationAddr *a,
                              Error **errp)
{
    guint n = json_array_get_length(channels);
    JsonNode *node;
    JsonObject *ch, *addr;
    const char *type;

    memset(a, 0, sizeof(*a));
    if (n != 1) {
        error_setg(errp, "Channel list has more than one entries");
        if (!n) {
            error_setg(errp, "Channel list is empty");
        }
        return false;
    }
    node = json_array_get_element(channels, 0);
    ch = JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
    type = member_str(ch, "channel-type");
    if (!type || strcmp(type, "main")) {
        error_setg(errp, "Channel type must be 'main'");
        return false;
    }
    node = json_object_get_member(ch, "addr");
    addr = node && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node)
                                               : NULL;
    if (!addr) {
        error_setg(errp, "Parameter 'addr' is missing");
        return false;
    }
    return parse_channel_addr(addr, a, errp);
}

/* ---- opening ---- */

static int inet_socket(const MigrationAddr *a, bool listen_side,
                       Error **errp)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = listen_side ? AI_PASSIVE : 0,
    };
    struct addrinfo *res = NULL, *ai;
    const char *host = a->host && a->host[0] && strcmp(a->host, "0") ?
                       a->host : NULL;
    int err, fd = -1, saved = 0;

    err = getaddrinfo(host, a->port, &hints, &res);
    if (err) {
        error_setg(errp, "address resolution failed for %s:%s: %s",
                   a->host ? a->host : "", a->port, gai_strerror(err));
        return -1;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        int one = 1;

        if (listen_side && !host && ai->ai_family == AF_INET && ai->ai_next) {
            /* Prefer the IPv6 wildcard, which also takes IPv4. */
            continue;
        }
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
                    ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        if (listen_side) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                listen(fd, 1) == 0) {
                break;
            }
        } else {
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                break;
            }
        }
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        error_setg_errno(errp, saved, "Failed to %s socket %s:%s",
                         listen_side ? "bind" : "connect",
                         a->host ? a->host : "", a->port);
    }
    return fd;
}

static int exec_spawn(char **argv, bool outgoing, pid_t *child, Error **errp)
{
    GError *gerr = NULL;
    GPid pid;
    int in = -1, out = -1;

    if (!g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                  NULL, NULL, &pid,
                                  outgoing ? &in : NULL,
                                  outgoing ? NULL : &out, NULL, &gerr)) {
        error_setg(errp, "exec: cannot run '%s': %s", argv[0],
                   gerr->message);
        g_error_free(gerr);
        return -1;
    }
    *child = pid;
    return outgoing ? in : out;
}

static int file_open(const MigrationAddr *a, bool outgoing, Error **errp)
{
    int fd = open(a->path, outgoing ? O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
                                    : O_RDONLY | O_CLOEXEC, 0600);

    if (fd < 0) {
        error_setg_errno(errp, errno, "file: cannot open '%s'", a->path);
        return -1;
    }
    if (a->offset && lseek(fd, a->offset, SEEK_SET) < 0) {
        error_setg_errno(errp, errno, "file: cannot seek '%s'", a->path);
        close(fd);
        return -1;
    }
    return fd;
}

int migration_addr_connect(const MigrationAddr *a, pid_t *child, Error **errp)
{
    *child = -1;
    switch (a->transport) {
    case MIG_TRANSPORT_TCP:
        return inet_socket(a, false, errp);
    case MIG_TRANSPORT_UNIX:
        return unix_connect_path(a->path, errp);
    case MIG_TRANSPORT_FD:
        return monitor_fd_param(a->fd, errp);
    case MIG_TRANSPORT_EXEC:
        return exec_spawn(a->argv, true, child, errp);
    case MIG_TRANSPORT_FILE:
        return file_open(a, true, errp);
    default:
        error_setg(errp, "'defer' is only valid for -incoming");
        return -1;
    }
}

int migration_addr_listen(const MigrationAddr *a, bool *listening,
                          pid_t *child, Error **errp)
{
    *listening = false;
    *child = -1;
    switch (a->transport) {
    case MIG_TRANSPORT_TCP:
        *listening = true;
        return inet_socket(a, true, errp);
    case MIG_TRANSPORT_UNIX: {
        int fd;

        unlink(a->path);
        fd = unix_listen_path(a->path, errp);
        *listening = fd >= 0;
        return fd;
    }
    case MIG_TRANSPORT_FD:
        return monitor_fd_param(a->fd, errp);
    case MIG_TRANSPORT_EXEC:
        return exec_spawn(a->argv, false, child, errp);
    case MIG_TRANSPORT_FILE:
        return file_open(a, false, errp);
    default:
        error_setg(errp, "nothing to listen on for 'defer'");
        return -1;
    }
}

char *migration_socket_describe(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN];

    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
        return NULL;
    }
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)&ss;

        inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
        return g_strdup_printf("%s:%u", host, ntohs(s->sin_port));
    }
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
        return g_strdup_printf("%s:%u", host, ntohs(s->sin6_port));
    }
    return NULL;
}
