/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -rtc and the host time the guest's clock chips run on; see
 * include/system/rtc.h.
 */
#include "qemu/osdep.h"
#include "system/rtc.h"
#include "qemu/option.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"

static RtcClock rtc_clock = RTC_CLOCK_HOST;
static int64_t rtc_offset_s;
/* For clock=rt and clock=vm: the wall clock when the guest clock began. */
static int64_t rtc_start_real_us, rtc_start_mono_us;
static bool rtc_started;

bool rtc_parse_base(const char *base, int64_t now_s, int64_t *offset_s,
                    Error **errp)
{
    struct tm tm = { 0 };
    const char *end;
    time_t now = now_s, t;

    if (!strcmp(base, "utc")) {
        *offset_s = 0;
        return true;
    }
    if (!strcmp(base, "localtime")) {
        struct tm local;

        /* The guest's clock shows the host's local time. */
        if (!localtime_r(&now, &local)) {
            error_setg(errp, "-rtc base=localtime: the host's time zone "
                       "cannot be read");
            return false;
        }
        *offset_s = local.tm_gmtoff;
        return true;
    }
    end = strptime(base, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end || *end) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(base, "%Y-%m-%d", &tm);
    }
    if (!end || *end || tm.tm_year < 0 || tm.tm_year > 9999 - 1900) {
        error_setg(errp, "invalid datetime format");
        error_append_hint(errp, "valid formats: '2006-06-17T16:01:21' or "
                          "'2006-06-17'\n");
        return false;
    }
    t = timegm(&tm);
    *offset_s = (int64_t)t - now_s;
    return true;
}

bool rtc_parse_option(const char *arg, Error **errp)
{
    static const char *const keys[] = { "base", "clock", "driftfix", NULL };
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, "base", errp);
    const char *base, *clock, *driftfix;

    if (!opts) {
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        if (!g_strv_contains(keys, qemu_opts_key(opts, i))) {
            error_setg(errp, "Invalid parameter '%s'", qemu_opts_key(opts, i));
            return false;
        }
    }
    base = qemu_opt_get(opts, "base");
    clock = qemu_opt_get(opts, "clock");
    driftfix = qemu_opt_get(opts, "driftfix");
    if (base && !rtc_parse_base(base, g_get_real_time() / G_USEC_PER_SEC,
                                &rtc_offset_s, errp)) {
        return false;
    }
    if (clock) {
        if (!strcmp(clock, "host")) {
            rtc_clock = RTC_CLOCK_HOST;
        } else if (!strcmp(clock, "rt")) {
            rtc_clock = RTC_CLOCK_RT;
        } else if (!strcmp(clock, "vm")) {
            rtc_clock = RTC_CLOCK_VM;
        } else {
            error_setg(errp, "invalid option value '%s'", clock);
            error_append_hint(errp, "clock= is host, rt or vm\n");
            return false;
        }
    }
    if (driftfix) {
        if (!strcmp(driftfix, "slew")) {
            qdev_prop_register_global("mc146818rtc", "lost_tick_policy",
                                      "slew");
        } else if (!strcmp(driftfix, "none")) {
            qdev_prop_register_global("mc146818rtc", "lost_tick_policy",
                                      "discard");
        } else {
            error_setg(errp, "invalid option value '%s'", driftfix);
            error_append_hint(errp, "driftfix= is none or slew\n");
            return false;
        }
    }
    return true;
}

static void rtc_start(void)
{
    if (!rtc_started) {
        rtc_started = true;
        rtc_start_real_us = g_get_real_time();
        rtc_start_mono_us = g_get_monotonic_time();
    }
}

int64_t rtc_now_us(void)
{
    rtc_start();
    switch (rtc_clock) {
    case RTC_CLOCK_RT:
        return rtc_start_real_us + (g_get_monotonic_time() -
                                    rtc_start_mono_us);
    case RTC_CLOCK_VM:
        return rtc_start_real_us +
               qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) / SCALE_US;
    default:
        return g_get_real_time();
    }
}

int64_t rtc_base_offset_s(void)
{
    return rtc_offset_s;
}

RtcClock rtc_clock_source(void)
{
    return rtc_clock;
}
