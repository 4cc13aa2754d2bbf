# SPDX-License-Identifier: GPL-2.0-or-later
"""Statistics for `make bench` that hold on a shared, noisy machine.

Pure functions, unit-tested with fixed inputs
(tests/functional/test_bench_plumbing.py).  What the benchmark reports:

- per run, from the guest's RESULT line: p50, p90, p99 latency and the
  10 % trimmed mean of the samples (tmean: the lowest and the highest
  tenth dropped, centred on the p50).  The trimmed throughput is Little's law on that mean,
  in_flight / tmean: the I/Os a descheduled vCPU or server held up for
  milliseconds fall outside the trimmed band and cannot move it, while
  the raw throughput (completed / elapsed) is printed beside it;
- over the repeats of a scenario: the median, the minimum and maximum,
  and the spread (max - min) / median;
- for a ratio of two scenarios (Conduit over its peer): the median of the
  per-repeat ratios (runs of one repeat are interleaved, so they share a
  neighbour's noise) with the minimum and maximum of those ratios as its
  interval, and a bootstrap 95 % interval of the ratio of medians
  (seeded, so a run's output is reproducible from its CSV).
"""
import random
import statistics


def percentile(values, pct):
    """Nearest-rank percentile, the guest's definition (lib/iobench.c)."""
    a = sorted(v for v in values if v is not None)
    if not a:
        return None
    rank = (len(a) * pct + 99) // 100
    return a[rank - 1 if rank else 0]


def trimmed_mean(values, lo=10, hi=90):
    """The trimmed mean the guest computes as tmean_ns: the lowest @lo and
    the highest 100 - @hi percent of the samples dropped (floor of the
    count each side), the mean of the rest; all of them when too few."""
    a = sorted(v for v in values if v is not None)
    if not a:
        return None
    n = len(a)
    band = a[n * lo // 100:n - n * (100 - hi) // 100] or a
    return sum(band) / len(band)


def trimmed_iops(tmean_ns, in_flight):
    """Throughput from the trimmed mean latency (Little's law): @in_flight
    I/Os (queue depth times queues) each taking @tmean_ns."""
    if not tmean_ns or not in_flight:
        return None
    return in_flight * 1e9 / tmean_ns


def spread(values):
    """{n, median, min, max, spread} of the repeats' @values (None
    ignored); spread = (max - min) / median, None without a median."""
    v = [x for x in values if x is not None]
    if not v:
        return {'n': 0, 'median': None, 'min': None, 'max': None,
                'spread': None}
    med = statistics.median(v)
    return {'n': len(v), 'median': med, 'min': min(v), 'max': max(v),
            'spread': (max(v) - min(v)) / med if med else None}


def paired_ratios(num, den):
    """Per-repeat ratios of two dicts {repeat: value}; repeats where
    either side is missing or the denominator is 0 are left out."""
    return [num[r] / den[r] for r in sorted(num)
            if r in den and num[r] is not None and den[r]]


def ratio_interval(num, den):
    """(median, min, max) of the paired per-repeat ratios of @num over
    @den ({repeat: value}); (None, None, None) without a pair."""
    r = paired_ratios(num, den)
    if not r:
        return None, None, None
    return statistics.median(r), min(r), max(r)


def bootstrap_ratio(num, den, resamples=2000, level=0.95, seed=1):
    """Bootstrap interval (lo, hi) of median(@num) / median(@den), two
    lists of repeat values, resampled independently with a fixed seed;
    (None, None) if either is empty or a median is 0."""
    a = [x for x in num if x is not None]
    b = [x for x in den if x is not None]
    if not a or not b:
        return None, None
    rng = random.Random(seed)
    out = []
    for _ in range(resamples):
        ma = statistics.median(rng.choice(a) for _ in a)
        mb = statistics.median(rng.choice(b) for _ in b)
        if mb:
            out.append(ma / mb)
    if not out:
        return None, None
    out.sort()
    k = int(round((1 - level) / 2 * (len(out) - 1)))
    return out[k], out[len(out) - 1 - k]


def per_io(delta, ios):
    """A counter's change over a run, per I/O (None if unknown)."""
    if delta is None or not ios:
        return None
    return delta / ios


def fmt_interval(mid, lo, hi, digits=2):
    """'1.23 [1.01-1.40]', or '-' without a value."""
    if mid is None:
        return '-'
    f = '%%.%df' % digits
    if lo is None or hi is None:
        return f % mid
    return (f + ' [' + f + '-' + f + ']') % (mid, lo, hi)


def fmt_spread(s, digits=0):
    """'1234 ±5%' from spread(): the median and the relative spread."""
    if s['median'] is None:
        return '-'
    f = '%%.%df' % digits
    if s['spread'] is None or s['n'] < 2:
        return f % s['median']
    return (f + ' ±%.0f%%') % (s['median'], 50 * s['spread'])
