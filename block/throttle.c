/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O throttling: the leaky buckets (throttle.h) and the group registry.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "block/throttle.h"

/* Key names in ThrottleBucketType order, avg then max then length. */
const char *const throttle_keys[] = {
    "bps", "bps_rd", "bps_wr", "iops", "iops_rd", "iops_wr",
    "bps_max", "bps_rd_max", "bps_wr_max",
    "iops_max", "iops_rd_max", "iops_wr_max",
    "bps_max_length", "bps_rd_max_length", "bps_wr_max_length",
    "iops_max_length", "iops_rd_max_length", "iops_wr_max_length",
    "iops_size", NULL,
};

/* Also the -drive / throttling.* spellings. */
static const char *const throttle_alt_keys[] = {
    "bps-total", "bps-read", "bps-write",
    "iops-total", "iops-read", "iops-write",
    "bps-total-max", "bps-read-max", "bps-write-max",
    "iops-total-max", "iops-read-max", "iops-write-max",
    "bps-total-max-length", "bps-read-max-length", "bps-write-max-length",
    "iops-total-max-length", "iops-read-max-length", "iops-write-max-length",
    "iops-size", NULL,
};

static int throttle_key_index(const char *key)
{
    for (int i = 0; throttle_keys[i]; i++) {
        if (!strcmp(key, throttle_keys[i]) ||
            !strcmp(key, throttle_alt_keys[i])) {
            return i;
        }
    }
    return -1;
}

bool throttle_config_set(ThrottleConfig *cfg, const char *key, uint64_t v)
{
    int i = throttle_key_index(key);

    if (i < 0) {
        return false;
    }
    if (i < 6) {
        cfg->b[i].avg = v;
    } else if (i < 12) {
        cfg->b[i - 6].max = v;
    } else if (i < 18) {
        cfg->b[i - 12].burst_length = v;
    } else {
        cfg->op_size = v;
    }
    return true;
}

uint64_t throttle_config_get(const ThrottleConfig *cfg, const char *key)
{
    int i = throttle_key_index(key);

    if (i < 0) {
        return 0;
    }
    if (i < 6) {
        return cfg->b[i].avg;
    } else if (i < 12) {
        return cfg->b[i - 6].max;
    } else if (i < 18) {
        return MAX(cfg->b[i - 12].burst_length, 1);
    }
    return cfg->op_size;
}

bool throttle_config_enabled(const ThrottleConfig *cfg)
{
    for (int i = 0; i < THROTTLE_BUCKETS; i++) {
        if (cfg->b[i].avg) {
            return true;
        }
    }
    return false;
}

bool throttle_config_check(const ThrottleConfig *cfg, Error **errp)
{
    const ThrottleBucket *b = cfg->b;

    if ((b[THROTTLE_BPS_TOTAL].avg &&
         (b[THROTTLE_BPS_READ].avg || b[THROTTLE_BPS_WRITE].avg)) ||
        (b[THROTTLE_OPS_TOTAL].avg &&
         (b[THROTTLE_OPS_READ].avg || b[THROTTLE_OPS_WRITE].avg))) {
        error_setg(errp, "bps/iops/max total values and read/write values "
                   "cannot be used at the same time");
        return false;
    }
    for (int i = 0; i < THROTTLE_BUCKETS; i++) {
        if (b[i].avg > 1000000000000000ull || b[i].max > 1000000000000000ull) {
            error_setg(errp, "bps/iops/max values must be within [0, "
                       "1000000000000000]");
            return false;
        }
        if (b[i].max && !b[i].avg) {
            error_setg(errp, "bps_max/iops_max require corresponding "
                       "bps/iops values");
            return false;
        }
        if (b[i].max && b[i].max < b[i].avg) {
            error_setg(errp, "bps_max/iops_max cannot be lower than "
                       "bps/iops");
            return false;
        }
        if (b[i].burst_length > 1 && !b[i].max) {
            error_setg(errp, "bps_max_length/iops_max_length require "
                       "corresponding bps_max/iops_max");
            return false;
        }
        if (b[i].burst_length > 86400) {
            error_setg(errp, "bps_max_length/iops_max_length must be "
                       "between 1 and 86400");
            return false;
        }
    }
    return true;
}

void throttle_leak(ThrottleConfig *cfg, int64_t *last_ns, int64_t now_ns)
{
    double secs;

    if (now_ns <= *last_ns) {
        return;
    }
    secs = (now_ns - *last_ns) / 1e9;
    *last_ns = now_ns;
    for (int i = 0; i < THROTTLE_BUCKETS; i++) {
        ThrottleBucket *b = &cfg->b[i];

        b->level = MAX(0.0, b->level - b->avg * secs);
        if (b->max) {
            b->burst_level = MAX(0.0, b->burst_level - b->max * secs);
        }
    }
}

/* How long the bucket needs to drain below its size, in ns. */
static int64_t throttle_bucket_wait(const ThrottleBucket *b)
{
    double size, extra, wait = 0;

    if (!b->avg) {
        return 0;
    }
    if (b->max) {
        double burst_size = b->max / 10.0;

        size = (double)b->max * MAX(b->burst_length, 1);
        if (b->burst_level > burst_size) {
            wait = (b->burst_level - burst_size) / b->max;
        }
    } else {
        size = b->avg / 10.0;
    }
    extra = b->level - size;
    if (extra > 0) {
        wait = MAX(wait, extra / b->avg);
    }
    return (int64_t)(wait * 1e9) + (wait > 0);
}

int64_t throttle_schedule(ThrottleConfig *cfg, bool write, uint64_t bytes)
{
    ThrottleBucketType rw_bps = write ? THROTTLE_BPS_WRITE : THROTTLE_BPS_READ;
    ThrottleBucketType rw_ops = write ? THROTTLE_OPS_WRITE : THROTTLE_OPS_READ;
    ThrottleBucketType use[4] = {
        THROTTLE_BPS_TOTAL, rw_bps, THROTTLE_OPS_TOTAL, rw_ops,
    };
    double ops = 1;
    int64_t wait = 0;

    if (cfg->op_size && bytes > cfg->op_size) {
        ops = (double)bytes / cfg->op_size;
    }
    for (int i = 0; i < 4; i++) {
        wait = MAX(wait, throttle_bucket_wait(&cfg->b[use[i]]));
    }
    if (wait) {
        return wait;
    }
    for (int i = 0; i < 4; i++) {
        double units = i < 2 ? (double)bytes : ops;
        ThrottleBucket *b = &cfg->b[use[i]];

        if (b->avg) {
            b->level += units;
            if (b->max) {
                b->burst_level += units;
            }
        }
    }
    return 0;
}

static GHashTable *throttle_groups;
/* Groups no node uses any more (see throttle_group_unref). */
static GSList *throttle_retired;

ThrottleGroupState *throttle_group_get(const char *name)
{
    ThrottleGroupState *tg = NULL;

    if (name) {
        if (!throttle_groups) {
            throttle_groups = g_hash_table_new(g_str_hash, g_str_equal);
        }
        tg = g_hash_table_lookup(throttle_groups, name);
    }
    if (!tg) {
        tg = g_new0(ThrottleGroupState, 1);
        g_mutex_init(&tg->lock);
        tg->name = g_strdup(name);
        if (name) {
            g_hash_table_insert(throttle_groups, tg->name, tg);
        }
    }
    tg->refs++;
    return tg;
}

void throttle_group_unref(ThrottleGroupState *tg)
{
    if (!tg || --tg->refs) {
        return;
    }
    if (tg->name) {
        g_hash_table_remove(throttle_groups, tg->name);
    }
    /*
     * Not freed: an I/O thread may still be looking at it (the node's
     * pointer changed under the BQL, the thread reads it without).  It is
     * small and replaced only by block_set_io_throttle.
     */
    throttle_retired = g_slist_prepend(throttle_retired, tg);
}

int64_t throttle_group_schedule(ThrottleGroupState *tg, bool write,
                                uint64_t bytes, int64_t now_ns)
{
    int64_t wait;

    g_mutex_lock(&tg->lock);
    if (!tg->last_ns) {
        tg->last_ns = now_ns;
    }
    throttle_leak(&tg->cfg, &tg->last_ns, now_ns);
    wait = throttle_schedule(&tg->cfg, write, bytes);
    g_mutex_unlock(&tg->lock);
    return wait;
}
