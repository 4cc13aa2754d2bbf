/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TSC frequency.  First choice, under KVM: the kvmclock (pvclock) scale
 * factors KVM publishes for this vCPU give the TSC rate exactly, as the
 * host calibrated it: Hz = 10^9 * 2^32 / (tsc_to_system_mul * 2^tsc_shift).
 * Otherwise count TSC ticks across a 20 ms one-shot of PIT
 * channel 2 (mode 0, gate via port 0x61, OUT2 read back in bit 5 of port
 * 0x61), five times, and take the median.  This is a measurement, so it
 * works the same under any VMM with a PIT; one trapped port read (tens of
 * us) bounds the error of a run to ~0.2%, and the median discards runs
 * where the vCPU was descheduled (seen at +3% on a busy host).  Falls back
 * to CPUID 0x15 (crystal ratio) and then CPUID 0x16 (base MHz) when no
 * PIT answers.  A PIT whose OUT2 is already high right after the count is
 * loaded, or a result below 100 MHz, counts as no PIT.  The command line
 * option tsc=pit skips kvmclock, to cross-check the two methods.
 */
#include "libguest.h"

#define PIT_HZ 1193182ULL
#define CALIBRATE_MS 20
#define CALIBRATE_RUNS 5
#define SPEAKER_PORT 0x61

#define KVM_CPUID_SIGNATURE 0x40000000
#define KVM_CPUID_FEATURES 0x40000001
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01
#define MIN_PLAUSIBLE_KHZ 100000

typedef struct PvclockVcpuTimeInfo {
    uint32_t version;
    uint32_t pad0;
    uint64_t tsc_timestamp;
    uint64_t system_time;
    uint32_t tsc_to_system_mul;
    int8_t tsc_shift;
    uint8_t flags;
    uint8_t pad[2];
} PvclockVcpuTimeInfo;

static PvclockVcpuTimeInfo pvclock __attribute__((aligned(64)));
static uint64_t khz;
static const char *method = "none";

static uint64_t tsc_khz_pit(void)
{
    uint32_t count = PIT_HZ * CALIBRATE_MS / 1000;
    uint8_t ctl = inb(SPEAKER_PORT);
    uint64_t t0, t1, limit;

    outb(SPEAKER_PORT, (ctl & ~0x02) | 0x01);   /* gate on, speaker off */
    outb(0x43, 0xb0);                           /* ch2, lo/hi, mode 0 */
    outb(0x42, count & 0xff);
    outb(0x42, count >> 8);
    t0 = rdtsc();
    if (inb(SPEAKER_PORT) & 0x20) {
        outb(SPEAKER_PORT, ctl);
        return 0;
    }
    /* ~10 s at 10 GHz: give up rather than hang on a missing PIT. */
    limit = t0 + 100000000000ULL;
    while (!(inb(SPEAKER_PORT) & 0x20)) {
        if (rdtsc() > limit) {
            outb(SPEAKER_PORT, ctl);
            return 0;
        }
    }
    t1 = rdtsc();
    outb(SPEAKER_PORT, ctl);
    if ((t1 - t0) / CALIBRATE_MS < MIN_PLAUSIBLE_KHZ) {
        return 0;
    }
    return (t1 - t0) / CALIBRATE_MS;
}

static uint64_t tsc_khz_kvmclock(void)
{
    volatile PvclockVcpuTimeInfo *pv = &pvclock;
    uint32_t r[4], version, mul;
    int8_t shift;
    uint64_t k;

    cpuid(KVM_CPUID_SIGNATURE, 0, r);
    if (r[1] != 0x4b4d564b || r[2] != 0x564b4d56 || r[3] != 0x4d ||
        r[0] < KVM_CPUID_FEATURES) {
        return 0;
    }
    cpuid(KVM_CPUID_FEATURES, 0, r);
    if (!(r[0] & KVM_FEATURE_CLOCKSOURCE2)) {
        return 0;
    }
    wrmsr(MSR_KVM_SYSTEM_TIME_NEW, (uint64_t)&pvclock | 1);
    do {
        version = pv->version;
        barrier();
        mul = pv->tsc_to_system_mul;
        shift = pv->tsc_shift;
        barrier();
    } while ((version & 1) || version != pv->version);
    wrmsr(MSR_KVM_SYSTEM_TIME_NEW, 0);
    if (!mul || shift < -31 || shift > 31) {
        return 0;
    }
    k = (1000000ULL << 32) / mul;
    k = shift >= 0 ? k >> shift : k << -shift;
    return k >= MIN_PLAUSIBLE_KHZ ? k : 0;
}

static uint64_t tsc_khz_pit_median(void)
{
    uint64_t runs[CALIBRATE_RUNS];
    int i, j;

    for (i = 0; i < CALIBRATE_RUNS; i++) {
        uint64_t v = tsc_khz_pit();

        if (!v) {
            return 0;
        }
        for (j = i; j > 0 && runs[j - 1] > v; j--) {
            runs[j] = runs[j - 1];
        }
        runs[j] = v;
    }
    return runs[CALIBRATE_RUNS / 2];
}

static void calibrate(void)
{
    uint32_t r[4];
    char want[16] = "";

    /* tsc=pit skips kvmclock, to cross-check the two methods. */
    cmdline_get("tsc", want, sizeof(want));
    khz = strcmp(want, "pit") ? tsc_khz_kvmclock() : 0;
    if (khz) {
        method = "kvmclock";
        return;
    }
    khz = tsc_khz_pit_median();
    if (khz) {
        method = "pit";
        return;
    }
    cpuid(0, 0, r);
    if (r[0] >= 0x15) {
        cpuid(0x15, 0, r);
        if (r[0] && r[1] && r[2]) {
            khz = (uint64_t)r[2] * r[1] / r[0] / 1000;
            method = "cpuid15";
            return;
        }
    }
    cpuid(0, 0, r);
    if (r[0] >= 0x16) {
        cpuid(0x16, 0, r);
        if (r[0] & 0xffff) {
            khz = (uint64_t)(r[0] & 0xffff) * 1000;
            method = "cpuid16";
            return;
        }
    }
    khz = 1000000;          /* report cycles as if 1 GHz; flagged below */
    method = "assumed-1GHz";
}

uint64_t tsc_khz(void)
{
    if (!khz) {
        calibrate();
    }
    return khz;
}

const char *tsc_method(void)
{
    tsc_khz();
    return method;
}

uint64_t tsc_to_ns(uint64_t cycles)
{
    return cycles * 1000000 / tsc_khz();
}
