/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Self-announcement after a switchover (and announce-self): a RARP frame
 * from each NIC's MAC address on its tap, in rounds, so that switches
 * and bridges learn at once where the guest now lives.  Timing follows
 * the announce-* parameters: the first round after announce-initial ms,
 * each next one announce-step ms later than the previous gap, capped at
 * announce-max, announce-rounds rounds in all.
 */
#include "qemu/osdep.h"
#include "migration/misc.h"
#include "monitor/monitor.h"
#include "net/net.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "trace.h"

#define VNET_HDR_LEN 12

typedef struct AnnounceTimer {
    QEMUTimer *timer;
    unsigned round, rounds, delay, max, step;
    char **only;                /* interface (netdev) ids, or NULL: all */
} AnnounceTimer;

static bool parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];

    if (!s || sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5]) != 6) {
        return false;
    }
    for (int i = 0; i < 6; i++) {
        mac[i] = v[i];
    }
    return true;
}

/* A RARP request "who is mac" from mac (RFC 903), padded to 60 bytes. */
static size_t build_rarp(uint8_t *buf, const uint8_t mac[6])
{
    static const uint8_t tail[] = {
        0x80, 0x35,             /* ethertype RARP */
        0x00, 0x01,             /* hardware: Ethernet */
        0x08, 0x00,             /* protocol: IPv4 */
        0x06, 0x04,             /* address lengths */
        0x00, 0x03,             /* reverse request */
    };
    size_t n = 0;

    memset(buf, 0, 60);
    memset(buf, 0xff, 6);               /* broadcast */
    memcpy(buf + 6, mac, 6);
    n = 12;
    memcpy(buf + n, tail, sizeof(tail));
    n += sizeof(tail);
    memcpy(buf + n, mac, 6);            /* sender hardware */
    n += 6 + 4;                         /* sender IP 0 */
    memcpy(buf + n, mac, 6);            /* target hardware */
    return 60;
}

static void announce_backend(NetBackend *nb, void *opaque)
{
    AnnounceTimer *t = opaque;
    uint8_t frame[VNET_HDR_LEN + 60] = { 0 };
    g_autofree char *mac_str = NULL;
    uint8_t mac[6];
    size_t off;

    if (!nb->is_tap || !nb->dev || nb->fd < 0) {
        return;
    }
    if (t->only && !g_strv_contains((const char *const *)t->only, nb->id)) {
        return;
    }
    mac_str = object_property_get_str(OBJECT(nb->dev), "mac", NULL);
    if (!parse_mac(mac_str, mac)) {
        return;
    }
    off = nb->vnet_hdr ? VNET_HDR_LEN : 0;
    build_rarp(frame + off, mac);
    if (write(nb->fd, frame, off + 60) < 0) {
        trace_migration_announce_failed(nb->id, errno);
        return;
    }
    trace_migration_announce(nb->id, mac_str, t->round);
}

static void announce_tick(void *opaque)
{
    AnnounceTimer *t = opaque;

    netdev_foreach(announce_backend, t);
    if (++t->round >= t->rounds) {
        timer_free(t->timer);
        g_strfreev(t->only);
        g_free(t);
        return;
    }
    t->delay = MIN(t->delay + t->step, t->max);
    timer_mod(t->timer, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + t->delay);
}

static void announce_start(unsigned initial, unsigned max, unsigned rounds,
                           unsigned step, char **only)
{
    AnnounceTimer *t = g_new0(AnnounceTimer, 1);

    if (!rounds) {
        g_strfreev(only);
        g_free(t);
        return;
    }
    t->rounds = rounds;
    t->delay = initial;
    t->max = max;
    t->step = step;
    t->only = only;
    t->timer = timer_new_ms(QEMU_CLOCK_REALTIME, announce_tick, t);
    timer_mod(t->timer, qemu_clock_get_ms(QEMU_CLOCK_REALTIME) + initial);
}

void migration_incoming_announce(void)
{
    unsigned initial, max, rounds, step;

    migration_get_announce_params(&initial, &max, &rounds, &step);
    announce_start(initial, max, rounds, step, NULL);
}

static void qmp_announce_self(JsonObject *args, JsonNode **ret, Error **errp)
{
    int64_t v[4];
    static const char *const names[4] = {
        "initial", "max", "rounds", "step"
    };
    char **only = NULL;

    for (int i = 0; i < 4; i++) {
        v[i] = json_object_get_int_member(args, names[i]);
        if (v[i] < 0 || v[i] > 100000) {
            error_setg(errp, "Parameter '%s' expects a value between 0 and "
                       "100000", names[i]);
            return;
        }
    }
    if (json_object_has_member(args, "interfaces")) {
        JsonArray *a = json_object_get_array_member(args, "interfaces");
        guint n = json_array_get_length(a);

        only = g_new0(char *, n + 1);
        for (guint i = 0; i < n; i++) {
            JsonNode *e = json_array_get_element(a, i);

            if (!JSON_NODE_HOLDS_VALUE(e) ||
                json_node_get_value_type(e) != G_TYPE_STRING) {
                error_setg(errp, "Parameter 'interfaces' expects a list of "
                           "strings");
                g_strfreev(only);
                return;
            }
            only[i] = g_strdup(json_node_get_string(e));
        }
    }
    announce_start(v[0], v[1], v[2], v[3], only);
}

static void __attribute__((constructor)) announce_register(void)
{
    qmp_register_command_args("announce-self", qmp_announce_self,
                              "initial:i max:i rounds:i step:i "
                              "*interfaces:a *id:s", 0);
}
