/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Block benchmark guests' common part: see iobench.h.
 */
#include "iobench.h"

bool io_bench_cmdline_irq(void)
{
    char mode[8] = "poll";

    cmdline_get("mode", mode, sizeof(mode));
    if (strcmp(mode, "poll") && strcmp(mode, "irq")) {
        panic("mode=%s: expected poll or irq", mode);
    }
    return !strcmp(mode, "irq");
}

uint64_t io_bench_random(IoBench *b, uint64_t n)
{
    b->rng ^= b->rng << 13;
    b->rng ^= b->rng >> 7;
    b->rng ^= b->rng << 17;
    return b->rng % n;
}

static uint64_t io_bench_irq_total(const IoBench *b)
{
    uint64_t sum = 0;
    unsigned i;

    for (i = b->irq_vector; i < b->irq_vector + b->irq_vectors; i++) {
        sum += irq_counts[i];
    }
    return sum;
}

static bool io_bench_stalled_since(uint64_t last_progress)
{
    return rdtsc() - last_progress > tsc_khz() * IO_BENCH_STALL_MS;
}

/* The hot loop, at CPL3. */
static uint64_t io_bench_run(void *arg)
{
    IoBench *b = arg;
    uint64_t last_progress, irq_start = io_bench_irq_total(b);
    bool waited_out = false;

    b->start = rdtsc();
    b->ops->start(b);
    last_progress = rdtsc();
    while (b->completed < b->ios) {
        uint64_t seen = io_bench_irq_total(b);

        if (b->ops->reap(b)) {
            /*
             * A completion found after the wait below gave up: it was in
             * the ring, but its interrupt never came.
             */
            b->unsignalled += waited_out;
            waited_out = false;
            last_progress = rdtsc();
            continue;
        }
        if (io_bench_stalled_since(last_progress)) {
            b->stalled = true;
            break;
        }
        if (b->irq) {
            /* Completions are found only after their interrupt. */
            while (io_bench_irq_total(b) == seen &&
                   !io_bench_stalled_since(last_progress)) {
                cpu_relax();
            }
            waited_out = io_bench_irq_total(b) == seen;
        } else {
            cpu_relax();
        }
    }
    b->end = rdtsc();
    b->irqs = io_bench_irq_total(b) - irq_start;
    return b->completed;
}

static void sift_down(uint64_t *a, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        uint64_t t;

        if (child >= n) {
            return;
        }
        if (child + 1 < n && a[child + 1] > a[child]) {
            child++;
        }
        if (a[root] >= a[child]) {
            return;
        }
        t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* Nearest-rank percentile of a sorted array. */
static uint64_t percentile(const uint64_t *a, size_t n, unsigned pct)
{
    size_t rank = (n * pct + 99) / 100;

    return a[rank ? rank - 1 : 0];
}

/*
 * Heapsort and percentiles, at CPL3: 100k entries would take seconds
 * where CPL0 is emulated.
 */
static uint64_t io_bench_stats(void *arg)
{
    IoBench *b = arg;
    uint64_t *a = b->lat;
    size_t n = b->completed, i;

    for (i = n / 2; i-- > 0;) {
        sift_down(a, i, n);
    }
    for (i = n; i-- > 1;) {
        uint64_t t = a[0];

        a[0] = a[i];
        a[i] = t;
        sift_down(a, 0, i);
    }
    b->sum = 0;
    for (i = 0; i < n; i++) {
        b->sum += a[i];
    }
    if (n) {
        b->min = a[0];
        b->max = a[n - 1];
        /* The 10 % trimmed mean: the lowest and highest tenth dropped. */
        size_t lo = n / 10, hi = n - n / 10;
        uint64_t tsum = 0;

        b->p50 = percentile(a, n, 50);
        b->p90 = percentile(a, n, 90);
        b->p99 = percentile(a, n, 99);
        for (i = lo; i < hi; i++) {
            tsum += a[i];
        }
        b->tmean = tsum / (hi - lo);
    }
    return 0;
}

void io_bench_measure(IoBench *b)
{
    b->rng = 0x9e3779b97f4a7c15ULL;
    b->lat = alloc_pages_uninit(ALIGN_UP(b->ios * sizeof(uint64_t),
                                         PAGE_SIZE) / PAGE_SIZE);
    if (!b->lat) {
        panic("ios=%lu: not enough RAM for the latency samples", b->ios);
    }
    run_user(io_bench_run, b);
    report(!b->stalled && b->completed == b->ios && b->errors == 0,
           "%lu reads completed, %lu errors%s", b->completed, b->errors,
           b->stalled ? " (stalled: no completion for 5 s)" : "");
    if (b->irq) {
        report(b->irqs > 0, "completions signalled by %lu MSI-X interrupts",
               b->irqs);
        report(b->unsignalled == 0, "no completion waited %u ms for an "
               "interrupt that never came (%lu did)", IO_BENCH_STALL_MS,
               b->unsignalled);
    }
    run_user(io_bench_stats, b);
}

void io_bench_print_result(const IoBench *b, const char *params)
{
    uint64_t khz = tsc_khz(), elapsed = b->end - b->start;
    uint64_t iops = elapsed ? b->completed * khz * 1000 / elapsed : 0;

    printf("RESULT iops=%lu p50_ns=%lu p99_ns=%lu ios=%lu %s "
           "min_ns=%lu max_ns=%lu avg_ns=%lu p90_ns=%lu tmean_ns=%lu "
           "irqs=%lu errors=%lu unsignalled=%lu tsc_khz=%lu tsc_method=%s\n",
           iops, tsc_to_ns(b->p50), tsc_to_ns(b->p99), b->completed, params,
           tsc_to_ns(b->min), tsc_to_ns(b->max),
           b->completed ? tsc_to_ns(b->sum / b->completed) : 0,
           tsc_to_ns(b->p90), tsc_to_ns(b->tmean), b->irqs,
           b->errors, b->unsignalled, khz, tsc_method());
}
