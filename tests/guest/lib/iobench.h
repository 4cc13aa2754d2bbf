/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device-independent half of a block benchmark guest (nvme,
 * virtio-blk): the mode= option, random block choice, the CPL3 loop that
 * keeps qd reads in flight until `ios` have completed, latency statistics
 * and the RESULT line the host side parses.
 *
 * The driver supplies two callbacks, both called at CPL3 from the loop:
 * start() submits the first reads and rings the doorbells; reap() takes
 * every completion there is, recording each with io_bench_complete() and
 * submitting a new read in its place while io_bench_want_more() says so,
 * rings the doorbells, and returns whether it found any completion.
 *
 * Latency of one read = TSC when its completion is seen minus TSC when it
 * was submitted.  IOPS = completed reads / (first submission .. last
 * completion).  Percentiles are nearest-rank.
 */
#ifndef GUEST_IOBENCH_H
#define GUEST_IOBENCH_H

#include "libguest.h"

/* Give up when no read completes for this long. */
#define IO_BENCH_STALL_MS 5000

typedef struct IoBench IoBench;

typedef struct IoBenchOps {
    void (*start)(IoBench *b);
    bool (*reap)(IoBench *b);
} IoBenchOps;

struct IoBench {
    /* Set by the driver */
    const IoBenchOps *ops;
    void *opaque;               /* the driver's device */
    uint64_t ios;               /* reads to complete */
    unsigned qd;                /* reads in flight (per queue) */
    bool irq;                   /* mode=irq: wait for an interrupt */
    unsigned irq_vector;        /* interrupts counted: irq_vectors */
    unsigned irq_vectors;       /* vectors from irq_vector on */

    /* Filled by io_bench_measure() */
    uint64_t *lat;              /* cycles, one per completed read */
    uint64_t submitted, completed, errors, irqs;
    uint64_t unsignalled;       /* mode=irq: completions no interrupt told */
    uint64_t start, end, rng;
    bool stalled;
    uint64_t p50, p90, p99, min, max, sum;
    uint64_t tmean;             /* 10 % trimmed mean of the samples */
};

/* mode=poll|irq from the command line: true for irq; panics otherwise. */
bool io_bench_cmdline_irq(void);
static inline const char *io_bench_mode(const IoBench *b)
{
    return b->irq ? "irq" : "poll";
}

/* A pseudo-random number in [0, n) (xorshift64: cheap, spreads reads). */
uint64_t io_bench_random(IoBench *b, uint64_t n);

/* The driver has just submitted a read. */
static inline void io_bench_submitted(IoBench *b)
{
    b->submitted++;
}
/* Whether another read should be submitted. */
static inline bool io_bench_want_more(const IoBench *b)
{
    return b->submitted < b->ios;
}
/* Whether all reads have completed: reap() stops taking completions. */
static inline bool io_bench_done(const IoBench *b)
{
    return b->completed == b->ios;
}
/*
 * Records one completion: @latency in cycles (0 for a completion that
 * names no read of ours), and whether it is an error.
 */
static inline void io_bench_complete(IoBench *b, uint64_t latency, bool error)
{
    if (error) {
        b->errors++;
    }
    b->lat[b->completed++] = latency;
}

/*
 * Runs the benchmark at CPL3 and reports "N reads completed, M errors"
 * (and, with mode=irq, that interrupts signalled them and that none was
 * found only by looking again after IO_BENCH_STALL_MS without one: a lost
 * interrupt), then sorts the samples and computes the statistics.
 */
void io_bench_measure(IoBench *b);

/*
 * Prints "RESULT iops=... p50_ns=... p99_ns=... ios=... <params>
 * min_ns=... max_ns=... avg_ns=... p90_ns=... tmean_ns=... irqs=...
 * errors=... unsignalled=... tsc_khz=... tsc_method=...", where @params is the driver's
 * own key=value list.  tmean_ns is the 10 % trimmed mean of the samples
 * (the lowest and the highest tenth dropped): a figure a few descheduled
 * samples cannot move, from which the host derives a trimmed throughput.
 */
void io_bench_print_result(const IoBench *b, const char *params);

#endif
