/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O throttling (private to block/): QEMU's leaky-bucket model of
 * block_set_io_throttle and the throttling.* options.  Six buckets --
 * bytes and operations, each total, read and write -- leak at their
 * average rate; a request may start while every bucket that applies is
 * below its size (avg / 10, or max * burst_length when a burst is set),
 * then fills them.  Pure functions of the time they are given; the I/O
 * thread (aio.c) queues requests that must wait and arms a timer.
 */
#ifndef BLOCK_THROTTLE_H
#define BLOCK_THROTTLE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

typedef enum ThrottleBucketType {
    THROTTLE_BPS_TOTAL,
    THROTTLE_BPS_READ,
    THROTTLE_BPS_WRITE,
    THROTTLE_OPS_TOTAL,
    THROTTLE_OPS_READ,
    THROTTLE_OPS_WRITE,
    THROTTLE_BUCKETS,
} ThrottleBucketType;

typedef struct ThrottleBucket {
    uint64_t avg;           /* units per second; 0: unlimited */
    uint64_t max;           /* burst rate; 0: none */
    uint64_t burst_length;  /* seconds the burst may last (>= 1) */
    double level;
    double burst_level;
} ThrottleBucket;

typedef struct ThrottleConfig {
    ThrottleBucket b[THROTTLE_BUCKETS];
    uint64_t op_size;       /* iops_size: bytes counted as one op; 0 off */
} ThrottleConfig;

/* One per throttle group (a node's own, or a named group). */
typedef struct ThrottleGroupState {
    GMutex lock;
    char *name;
    ThrottleConfig cfg;
    int64_t last_ns;
    unsigned refs;
} ThrottleGroupState;

/* Checks the limits like QEMU (negative, max < avg, ...). */
bool throttle_config_check(const ThrottleConfig *cfg, Error **errp);
bool throttle_config_enabled(const ThrottleConfig *cfg);
/* Sets cfg from "iops", "bps_rd_max", "iops_size", ...; false if unknown. */
bool throttle_config_set(ThrottleConfig *cfg, const char *key, uint64_t v);
uint64_t throttle_config_get(const ThrottleConfig *cfg, const char *key);
/* The QMP / legacy option names, NULL-terminated. */
extern const char *const throttle_keys[];

/* Leaks every bucket up to @now_ns. */
void throttle_leak(ThrottleConfig *cfg, int64_t *last_ns, int64_t now_ns);
/*
 * Nanoseconds a request must wait before it may start (0: now).  When 0,
 * the request is accounted.
 */
int64_t throttle_schedule(ThrottleConfig *cfg, bool write, uint64_t bytes);

/* Group registry (BQL): finds or creates a named group, takes a ref. */
ThrottleGroupState *throttle_group_get(const char *name);
void throttle_group_unref(ThrottleGroupState *tg);
/* Thread-safe: may @bytes start at @now_ns? Else ns to wait. */
int64_t throttle_group_schedule(ThrottleGroupState *tg, bool write,
                                uint64_t bytes, int64_t now_ns);

#endif
