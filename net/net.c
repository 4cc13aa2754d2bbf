/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -netdev tap and socket backends (net.h).
 */
#include "qemu/osdep.h"
#include <net/if.h>
#include <sys/socket.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/fd-owner.h"
#include "qemu/option.h"
#include "monitor/monitor.h"
#include "net/net.h"
#include "trace.h"

static GPtrArray *net_backends;

NetBackend *netdev_find(const char *id)
{
    for (guint i = 0; id && net_backends && i < net_backends->len; i++) {
        NetBackend *nb = g_ptr_array_index(net_backends, i);

        if (!strcmp(nb->id, id)) {
            return nb;
        }
    }
    return NULL;
}

void netdev_foreach(void (*fn)(NetBackend *nb, void *opaque), void *opaque)
{
    for (guint i = 0; net_backends && i < net_backends->len; i++) {
        fn(g_ptr_array_index(net_backends, i), opaque);
    }
}

/* A number, or a name given with QMP getfd (libvirt's NIC hot-plug). */
static bool net_parse_fd(const char *key, const char *str, int *fd,
                         Error **errp)
{
    *fd = monitor_fd_param(str, errp);
    if (*fd < 0) {
        error_prepend(errp, "Parameter '%s' ", key);
        return false;
    }
    return true;
}

/* Opens queue @q of the tap (all of them IFF_MULTI_QUEUE if several). */
static bool net_tap_open(NetBackend *nb, const char *ifname, unsigned q,
                         Error **errp)
{
    struct ifreq ifr = { 0 };
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        error_setg_errno(errp, errno, "could not open /dev/net/tun");
        return false;
    }
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR |
                    (nb->queues > 1 ? IFF_MULTI_QUEUE : 0);
    /* Later queues attach to the device the first one made. */
    if (q ? nb->ifname != NULL : ifname != NULL) {
        g_strlcpy(ifr.ifr_name, q ? nb->ifname : ifname, IFNAMSIZ);
    }
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        error_setg_errno(errp, errno, "could not configure /dev/net/tun "
                         "(%s)%s", ifname ? ifname : "new tap",
                         nb->queues > 1 ? " as a multiqueue tap" : "");
        close(fd);
        return false;
    }
    nb->fds[q] = fd;
    if (!q) {
        nb->fd = fd;
        nb->ifname = g_strdup(ifr.ifr_name);
    }
    nb->vnet_hdr = true;
    return true;
}

/*
 * A tap fd from libvirt (queue @q): find out whether it carries vnet
 * headers; the queues of one backend must be one device, alike.
 */
static bool net_tap_adopt(NetBackend *nb, int fd, unsigned q, Error **errp)
{
    struct ifreq ifr = { 0 };
    bool hdr;

    if (ioctl(fd, TUNGETIFF, &ifr) < 0) {
        error_setg_errno(errp, errno, "fd=%d is not a tap device", fd);
        return false;
    }
    hdr = ifr.ifr_flags & IFF_VNET_HDR;
    if (q && (strcmp(ifr.ifr_name, nb->ifname) || hdr != nb->vnet_hdr ||
              !(ifr.ifr_flags & IFF_MULTI_QUEUE))) {
        error_setg(errp, "fds: fd %d is not another queue of tap %s", fd,
                   nb->ifname);
        error_append_hint(errp, "Every fd must be a queue of one "
                          "IFF_MULTI_QUEUE tap.\n");
        return false;
    }
    nb->fds[q] = fd;
    if (!q) {
        nb->fd = fd;
        nb->ifname = g_strdup(ifr.ifr_name);
        nb->vnet_hdr = hdr;
    }
    return true;
}

static bool net_tap_setup_hdr(NetBackend *nb, Error **errp)
{
    int len = sizeof(struct virtio_net_hdr_mrg_rxbuf);

    for (unsigned q = 0; q < nb->queues; q++) {
        if (nb->vnet_hdr && ioctl(nb->fds[q], TUNSETVNETHDRSZ, &len) < 0) {
            error_setg_errno(errp, errno, "tap %s: TUNSETVNETHDRSZ failed",
                             nb->ifname);
            return false;
        }
        /* Nothing offloaded until the guest's features say so. */
        if (nb->vnet_hdr && ioctl(nb->fds[q], TUNSETOFFLOAD, 0) < 0) {
            warn_report("tap %s: TUNSETOFFLOAD: %s", nb->ifname,
                        g_strerror(errno));
        }
    }
    return true;
}

/* "a:b:c" into at most NET_MAX_QUEUES strings; 0 on a bad list. */
static unsigned net_split_fds(const char *str, char ***out)
{
    char **parts = g_strsplit(str, ":", 0);
    unsigned n = g_strv_length(parts);

    for (unsigned i = 0; i < n; i++) {
        if (!*parts[i]) {
            n = 0;
        }
    }
    if (n > NET_MAX_QUEUES) {
        n = 0;
    }
    *out = parts;
    return n;
}

typedef struct NetdevParse {
    const char *type;
    const char *ifname;
    const char *fd;
    const char *vhostfd;
    const char *fds;
    const char *vhostfds;
    unsigned queues;
    bool vhost;
    bool vhost_force;
    bool vnet_hdr;
    bool vnet_hdr_set;
} NetdevParse;

static bool netdev_parse_key(void *opaque, const char *key, const char *value,
                             Error **errp)
{
    NetdevParse *p = opaque;

    if (!strcmp(key, "type")) {
        p->type = value;
    } else if (!strcmp(key, "ifname")) {
        p->ifname = value;
    } else if (!strcmp(key, "fd")) {
        p->fd = value;
    } else if (!strcmp(key, "vhostfd")) {
        p->vhostfd = value;
    } else if (!strcmp(key, "script") || !strcmp(key, "downscript")) {
        if (strcmp(value, "no") && *value) {
            error_setg(errp, "%s=%s is not supported", key, value);
            error_append_hint(errp, "Configure the tap before starting "
                              "Conduit and use %s=no (libvirt does).\n",
                              key);
            return false;
        }
    } else if (!strcmp(key, "vhost")) {
        return qemu_strtobool(value, &p->vhost, errp);
    } else if (!strcmp(key, "vhostforce")) {
        return qemu_strtobool(value, &p->vhost_force, errp);
    } else if (!strcmp(key, "vnet_hdr")) {
        p->vnet_hdr_set = true;
        return qemu_strtobool(value, &p->vnet_hdr, errp);
    } else if (!strcmp(key, "fds")) {
        p->fds = value;
    } else if (!strcmp(key, "vhostfds")) {
        p->vhostfds = value;
    } else if (!strcmp(key, "queues")) {
        uint64_t n;

        if (!qemu_strtou64(value, &n, NULL) || n < 1 ||
            n > NET_MAX_QUEUES) {
            error_setg(errp, "queues=%s: expected 1 to %u", value,
                       NET_MAX_QUEUES);
            return false;
        }
        p->queues = n;
    } else if (strcmp(key, "sndbuf")) {
        error_setg(errp, "Invalid parameter '%s'", key);
        return false;
    }
    return true;
}

/*
 * A getfd name (not a number): the fd is ours once taken, so it is
 * closed if the backend cannot use it.  A number stays the caller's.
 */
static bool net_fd_is_named(const char *str)
{
    return str && !g_ascii_isdigit(str[0]);
}

/*
 * Opens or adopts the backend's fds; on failure the caller closes those
 * stored in @nb that are ours.
 */
static bool netdev_open(NetBackend *nb, const NetdevParse *p, Error **errp)
{
    int fd;

    if (!strcmp(p->type, "tap")) {
        nb->is_tap = true;
        if (p->fd && p->ifname) {
            error_setg(errp, "ifname= and fd= exclude each other");
            return false;
        }
        if (p->fds && (p->fd || p->ifname)) {
            error_setg(errp, "fds= excludes fd= and ifname=");
            return false;
        }
        if ((p->vhostfds && !p->fds) || (p->vhostfd && p->fds)) {
            error_setg(errp, "vhostfds= goes with fds=, vhostfd= with fd=");
            return false;
        }
        if (p->fds) {
            g_auto(GStrv) parts = NULL, vparts = NULL;
            unsigned n = net_split_fds(p->fds, &parts);

            if (!n) {
                error_setg(errp, "fds=%s: expected 1 to %u fds separated "
                           "by ':'", p->fds, NET_MAX_QUEUES);
                return false;
            }
            if (p->queues && p->queues != n) {
                error_setg(errp, "queues=%u does not match the %u fds",
                           p->queues, n);
                return false;
            }
            if (p->vhostfds && net_split_fds(p->vhostfds, &vparts) != n) {
                error_setg(errp, "The number of fds passed does not match "
                           "the number of vhostfds passed");
                return false;
            }
            nb->queues = n;
            for (unsigned q = 0; q < n; q++) {
                if (!net_parse_fd("fds", parts[q], &fd, errp)) {
                    return false;
                }
                if (!net_tap_adopt(nb, fd, q, errp)) {
                    if (net_fd_is_named(parts[q])) {
                        close(fd);
                    }
                    return false;
                }
                if (vparts && !net_parse_fd("vhostfds", vparts[q],
                                            &nb->vhostfds[q], errp)) {
                    return false;
                }
            }
            nb->owns_fds = net_fd_is_named(parts[0]);
        } else if (p->fd) {
            if (p->queues > 1) {
                error_setg(errp, "queues=%u needs fds= (one per queue) or "
                           "ifname=", p->queues);
                return false;
            }
            nb->queues = 1;
            if (!net_parse_fd("fd", p->fd, &fd, errp)) {
                return false;
            }
            if (!net_tap_adopt(nb, fd, 0, errp)) {
                if (net_fd_is_named(p->fd)) {
                    close(fd);
                }
                return false;
            }
        } else {
            nb->queues = p->queues ? p->queues : 1;
            nb->owns_fds = true;
            for (unsigned q = 0; q < nb->queues; q++) {
                if (!net_tap_open(nb, p->ifname, q, errp)) {
                    return false;
                }
            }
        }
        if (p->vnet_hdr_set && p->vnet_hdr && !nb->vnet_hdr) {
            error_setg(errp, "tap %s: vnet_hdr=on but the fd has no "
                       "IFF_VNET_HDR", nb->ifname);
            return false;
        }
        if (!net_tap_setup_hdr(nb, errp)) {
            return false;
        }
        nb->vhost = p->vhost || p->vhost_force;
        nb->vhost_force = p->vhost_force;
        if (p->vhostfd) {
            if (!nb->vhost) {
                nb->vhost = true;
            }
            if (!net_parse_fd("vhostfd", p->vhostfd, &nb->vhostfd, errp)) {
                return false;
            }
            if (nb->vhostfd == nb->fd) {
                error_setg(errp, "Parameter 'vhostfd' expects a file "
                           "descriptor other than fd=%d", nb->fd);
                return false;
            }
            nb->vhostfds[0] = nb->vhostfd;
        }
        if (p->vhostfds) {
            nb->vhost = true;
            nb->vhostfd = nb->vhostfds[0];
        }
    } else if (!strcmp(p->type, "socket")) {
        int type = 0;
        socklen_t len = sizeof(type);

        if (!p->fd) {
            error_setg(errp, "netdev socket needs fd=");
            error_append_hint(errp, "Pass a datagram socket (one frame per "
                              "message).\n");
            return false;
        }
        if (!net_parse_fd("fd", p->fd, &fd, errp)) {
            return false;
        }
        nb->fd = nb->fds[0] = fd;
        nb->queues = 1;
        if (p->queues > 1 || p->fds) {
            error_setg(errp, "netdev socket has one queue");
            return false;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
            (type != SOCK_DGRAM && type != SOCK_SEQPACKET)) {
            error_setg(errp, "fd=%d is not a datagram socket", fd);
            return false;
        }
        nb->seqpacket = type == SOCK_SEQPACKET;
        if (p->vhost) {
            error_setg(errp, "vhost needs a tap backend");
            return false;
        }
    } else {
        error_setg(errp, "Invalid netdev type '%s'", p->type);
        error_append_hint(errp, "Supported: tap, socket.\n");
        return false;
    }
    return true;
}

/* The JSON types of the keys above (QEMU's NetdevTapOptions, ...). */
static const QemuOptType netdev_key_types[] = {
    { "type", "str" }, { "id", "str" }, { "ifname", "str" },
    { "fd", "str" }, { "vhostfd", "str" }, { "script", "str" },
    { "downscript", "str" }, { "vhost", "bool" }, { "vhostforce", "bool" },
    { "vnet_hdr", "bool" }, { "queues", "uint32" }, { "sndbuf", "size" },
    { "fds", "str" }, { "vhostfds", "str" },
    { NULL, NULL },
};

NetBackend *netdev_add(QemuOpts *opts, Error **errp)
{
    NetdevParse p = { 0 };
    const char *id = qemu_opts_id(opts);
    g_autofree NetBackend *nb = g_new0(NetBackend, 1);

    if (!qemu_opts_check_types(opts, netdev_key_types, NULL, errp) ||
        !qemu_opt_foreach(opts, netdev_parse_key, &p, errp)) {
        return NULL;
    }
    if (!p.type) {
        error_setg(errp, "Parameter 'type' is missing");
        return NULL;
    }
    if (!id) {
        error_setg(errp, "Parameter 'id' is missing");
        return NULL;
    }
    if (netdev_find(id)) {
        error_setg(errp, "Duplicate ID '%s' for netdev", id);
        return NULL;
    }
    nb->fd = -1;
    nb->vhostfd = -1;
    for (unsigned q = 0; q < NET_MAX_QUEUES; q++) {
        nb->fds[q] = nb->vhostfds[q] = -1;
    }
    if (!netdev_open(nb, &p, errp)) {
        /* A tap we opened (ifname=), or fds named with getfd. */
        if (nb->fds[0] < 0 && nb->fd >= 0) {
            nb->fds[0] = nb->fd;
        }
        for (unsigned q = 0; q < NET_MAX_QUEUES; q++) {
            if (nb->fds[q] >= 0 &&
                (nb->owns_fds || (!p.fd && !p.fds) ||
                 net_fd_is_named(p.fd))) {
                close(nb->fds[q]);
            }
        }
        if (nb->vhostfd >= 0 && net_fd_is_named(p.vhostfd)) {
            close(nb->vhostfd);
        }
        g_free(nb->ifname);
        return NULL;
    }
    for (unsigned q = 0; q < nb->queues; q++) {
        fcntl(nb->fds[q], F_SETFL, fcntl(nb->fds[q], F_GETFL) | O_NONBLOCK);
    }
    nb->id = g_strdup(id);
    /* One owner per fd: no other backend may name these numbers now. */
    {
        g_autofree char *owner = g_strdup_printf("netdev '%s'", id);

        for (unsigned q = 0; q < nb->queues; q++) {
            qemu_fd_claim(nb->fds[q], owner, &error_abort);
            if (nb->vhostfds[q] >= 0 && nb->vhostfds[q] != nb->vhostfd) {
                qemu_fd_claim(nb->vhostfds[q], owner, &error_abort);
            }
        }
        if (nb->vhostfd >= 0 && nb->vhostfd != nb->fd) {
            qemu_fd_claim(nb->vhostfd, owner, &error_abort);
        }
    }
    trace_net_tap_open(nb->id, nb->ifname ? nb->ifname : "", nb->fd,
                       nb->vnet_hdr);
    if (!net_backends) {
        net_backends = g_ptr_array_new();
    }
    g_ptr_array_add(net_backends, nb);
    return g_steal_pointer(&nb);
}

bool netdev_attach(NetBackend *nb, DeviceState *dev, Error **errp)
{
    if (nb->dev) {
        error_setg(errp, "netdev '%s' is already in use", nb->id);
        return false;
    }
    nb->dev = dev;
    return true;
}

void netdev_detach(NetBackend *nb)
{
    nb->dev = NULL;
}

bool net_tap_set_offload(NetBackend *nb, bool csum, bool tso4, bool tso6,
                         bool ecn, Error **errp)
{
    unsigned long flags = 0;

    if (!nb->is_tap || !nb->vnet_hdr) {
        return !(csum || tso4 || tso6 || ecn);
    }
    if (csum) {
        flags |= TUN_F_CSUM;
        if (tso4) {
            flags |= TUN_F_TSO4;
        }
        if (tso6) {
            flags |= TUN_F_TSO6;
        }
        if (ecn) {
            flags |= TUN_F_TSO_ECN;
        }
    }
    for (unsigned q = 0; q < nb->queues; q++) {
        if (ioctl(nb->fds[q], TUNSETOFFLOAD, flags) < 0) {
            error_setg_errno(errp, errno, "tap %s: TUNSETOFFLOAD 0x%lx",
                             nb->ifname, flags);
            return false;
        }
    }
    return true;
}

bool netdev_del(const char *id, Error **errp)
{
    NetBackend *nb = netdev_find(id);

    if (!nb) {
        error_setg(errp, "Device '%s' not found", id);
        return false;
    }
    if (nb->dev) {
        error_setg(errp, "netdev '%s' is in use by a device", id);
        error_append_hint(errp, "device_del the NIC first.\n");
        return false;
    }
    g_ptr_array_remove(net_backends, nb);
    for (unsigned q = 0; q < nb->queues; q++) {
        if (nb->fds[q] >= 0) {
            qemu_fd_release(nb->fds[q]);
            close(nb->fds[q]);
        }
        if (nb->vhostfds[q] >= 0 && nb->vhostfds[q] != nb->vhostfd) {
            qemu_fd_release(nb->vhostfds[q]);
            close(nb->vhostfds[q]);
        }
    }
    if (nb->vhostfd >= 0) {
        qemu_fd_release(nb->vhostfd);
        close(nb->vhostfd);
    }
    g_free(nb->id);
    g_free(nb->ifname);
    g_free(nb);
    return true;
}

/* netdev_add: the arguments of -netdev's JSON form ("type", "id", ...). */
static void qmp_netdev_add(JsonObject *args, JsonNode **ret, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_from_json_object(args, errp);

    if (!opts) {
        return;
    }
    if (!qemu_opts_id(opts) && qemu_opt_get(opts, "id")) {
        g_autofree char *id = qemu_opt_steal(opts, "id");

        qemu_opts_set_id(opts, id);
    }
    netdev_add(opts, errp);
}

static void qmp_netdev_del(JsonObject *args, JsonNode **ret, Error **errp)
{
    netdev_del(json_object_get_string_member(args, "id"), errp);
}

static void __attribute__((constructor)) net_qmp_register(void)
{
    qmp_register_command_args("netdev_add", qmp_netdev_add,
                              "type:s id:s **", 0);
    qmp_register_command_args("netdev_del", qmp_netdev_del, "id:s", 0);
}
