/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -rtc: where the guest's real-time clock starts (base=utc, localtime
 * or a fixed date) and which host clock drives it (clock=host, rt, vm).
 * The clock chips (hw/rtc/) read the time through these; driftfix=slew
 * becomes their lost_tick_policy property.
 */
#ifndef SYSTEM_RTC_H
#define SYSTEM_RTC_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

typedef enum RtcClock {
    RTC_CLOCK_HOST,     /* the host's wall clock, steps with it */
    RTC_CLOCK_RT,       /* monotonic host time: immune to host steps */
    RTC_CLOCK_VM,       /* the guest's virtual clock: stops while paused */
} RtcClock;

/*
 * "-rtc [base=utc|localtime|DATE][,clock=host|rt|vm][,driftfix=none|slew]"
 * DATE is "2006-06-17T16:01:21" or "2006-06-17" (UTC).  driftfix=slew
 * registers the global mc146818rtc.lost_tick_policy=slew.
 */
bool rtc_parse_option(const char *arg, Error **errp);

/* Pure, for tests: seconds from @now (UTC) to what base= names. */
bool rtc_parse_base(const char *base, int64_t now_s, int64_t *offset_s,
                    Error **errp);

/* The guest clock's time base, in microseconds since the epoch (UTC). */
int64_t rtc_now_us(void);
/* Added to rtc_now_us() at power-on: localtime's zone, DATE's offset. */
int64_t rtc_base_offset_s(void);
RtcClock rtc_clock_source(void);

#endif
