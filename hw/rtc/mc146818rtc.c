/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MC146818A-compatible CMOS RTC: port 0x70 selects one of 128 bytes
 * (bit 7, the NMI mask on PCs, is ignored), port 0x71 reads or writes it.
 *
 * The clock is not ticked: registers 0-9 and the century byte (0x32) are
 * computed on each read from the host time -rtc chose (system/rtc.c: the
 * wall clock, monotonic time or the VM clock, from base= utc, localtime
 * or a date) plus an offset that the guest moves by writing them.  Every
 * read is a consistent snapshot, so the update-in-progress bit never
 * needs to be set.  SET (status B bit 7) freezes the registers the guest
 * sees until it is cleared, as on the chip, so the usual "set SET, write
 * the date, clear SET" sequence lands exactly.
 *
 * Interrupts: update-ended and alarm flags come from a timer on the
 * virtual clock (so a paused VM gets none) armed only while UIE or AIE is
 * enabled; IRQF and the IRQ line follow the enabled flags until status C
 * is read.  The periodic interrupt (PIE, at the rate status A selects)
 * runs on the virtual clock too.  A tick is lost when the guest has not
 * yet read status C for the previous one, or when the host ran the timer
 * late; with lost_tick_policy=slew (-rtc driftfix=slew, libvirt's
 * tickpolicy='catchup') each lost tick is counted and delivered later,
 * between the regular ones, so a guest that counts ticks keeps time.
 * The day of week is always derived from the date; a write to it is
 * dropped.
 */
#include "qemu/osdep.h"
#include "migration/vmstate.h"
#include "hw/rtc/mc146818rtc.h"
#include "hw/qdev-core.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/qdev-properties.h"
#include "monitor/monitor.h"
#include "system/rtc.h"
#include "qom/object.h"
#include "trace.h"

/* Status A on a PC after the BIOS: 32.768 kHz time base, 1024 Hz rate. */
#define RTC_REG_A_PC_DEFAULT 0x26
/* An alarm byte with both top bits set matches every value. */
#define RTC_ALARM_DONT_CARE 0xc0
#define RTC_HOURS_PM 0x80
/* Century and year registers hold two digits each. */
#define RTC_YEAR_MIN 0
#define RTC_YEAR_MAX 9999
/* The time base: 32.768 kHz. */
#define RTC_BASE_HZ 32768
/* Bounds what a guest that never acknowledges can make us owe it. */
#define RTC_MAX_COALESCED (1u << 16)

typedef enum RtcLostTickPolicy {
    RTC_LOST_TICK_DISCARD,
    RTC_LOST_TICK_DELAY,
    RTC_LOST_TICK_SLEW,
} RtcLostTickPolicy;

static const char *const rtc_lost_tick_policy_names[] = {
    "discard", "delay", "slew", NULL,
};

typedef struct RTCState {
    DeviceState parent_obj;

    MemoryRegion io;
    qemu_irq irq;
    QEMUTimer *update_timer;
    uint8_t index;
    /* RAM, alarms and status A-D; the time bytes here are unused. */
    uint8_t cmos[RTC_CMOS_SIZE];
    int64_t offset_s;           /* guest clock minus host wall clock */
    struct tm frozen;           /* what the guest sees while SET is set */
    /* The periodic interrupt. */
    int lost_tick_policy;       /* RtcLostTickPolicy */
    QEMUTimer *periodic_timer;
    QEMUTimer *catchup_timer;
    int64_t period_ns;          /* 0: not running */
    int64_t next_periodic_ns;
    uint32_t coalesced;         /* lost ticks still owed (slew) */
    uint64_t ticks_lost, ticks_reinjected;      /* for x-query / traces */
} RTCState;

static GSList *rtc_devices;     /* RTCState *: for rtc-reset-reinjection */

#define MC146818_RTC(obj) OBJECT_CHECK(RTCState, (obj), TYPE_MC146818_RTC)

static bool rtc_binary(RTCState *s)
{
    return s->cmos[RTC_REG_B] & RTC_REG_B_DM_BINARY;
}

static bool rtc_24h(RTCState *s)
{
    return s->cmos[RTC_REG_B] & RTC_REG_B_24H;
}

/* Unsigned: a field frozen out of range must not shift a negative. */
static uint8_t rtc_encode(RTCState *s, unsigned v)
{
    return rtc_binary(s) ? v : ((v / 10) << 4) | (v % 10);
}

/* Bad BCD digits give out-of-range fields; timegm() normalises them. */
static int rtc_decode(RTCState *s, uint8_t reg)
{
    return rtc_binary(s) ? reg : (reg >> 4) * 10 + (reg & 0x0f);
}

static uint8_t rtc_encode_hours(RTCState *s, int hour)
{
    int h12 = hour % 12;

    if (rtc_24h(s)) {
        return rtc_encode(s, hour);
    }
    return rtc_encode(s, h12 ? h12 : 12) | (hour >= 12 ? RTC_HOURS_PM : 0);
}

static int rtc_decode_hours(RTCState *s, uint8_t reg)
{
    if (rtc_24h(s)) {
        return rtc_decode(s, reg);
    }
    /* 12 AM is midnight, 12 PM is noon. */
    return rtc_decode(s, reg & ~RTC_HOURS_PM) % 12 +
           ((reg & RTC_HOURS_PM) ? 12 : 0);
}

static void rtc_guest_tm_at(RTCState *s, int64_t host_s, struct tm *tm)
{
    time_t t = host_s + s->offset_s;

    if (!gmtime_r(&t, tm)) {
        /* Unreachable from decoded registers; keep a sane clock anyway. */
        t = host_s;
        s->offset_s = 0;
        gmtime_r(&t, tm);
    }
}

static void rtc_get_tm(RTCState *s, struct tm *tm)
{
    if (s->cmos[RTC_REG_B] & RTC_REG_B_SET) {
        *tm = s->frozen;
        return;
    }
    rtc_guest_tm_at(s, rtc_now_us() / G_USEC_PER_SEC, tm);
}

static void rtc_set_tm(RTCState *s, const struct tm *tm)
{
    struct tm normalised = *tm;
    time_t t = timegm(&normalised);
    int year = normalised.tm_year + 1900;

    /*
     * Out-of-range fields normalise to a real date, but a month 0 in year
     * 0000 would leave the four digits the registers can show.
     */
    if (year < RTC_YEAR_MIN || year > RTC_YEAR_MAX) {
        qemu_log_guest_error("mc146818rtc: date outside years %d-%d "
                             "ignored\n", RTC_YEAR_MIN, RTC_YEAR_MAX);
        return;
    }
    s->offset_s = (int64_t)t - rtc_now_us() / G_USEC_PER_SEC;
    trace_mc146818_rtc_set_time(s->offset_s);
}

static uint8_t rtc_read_time(RTCState *s, uint8_t index)
{
    struct tm tm;
    int year;

    rtc_get_tm(s, &tm);
    year = tm.tm_year + 1900;
    switch (index) {
    case RTC_SECONDS:
        return rtc_encode(s, tm.tm_sec);
    case RTC_MINUTES:
        return rtc_encode(s, tm.tm_min);
    case RTC_HOURS:
        return rtc_encode_hours(s, tm.tm_hour);
    case RTC_DAY_OF_WEEK:
        /* Frozen fields were written one by one: derive it from the date. */
        timegm(&tm);
        return rtc_encode(s, tm.tm_wday + 1);  /* 1 = Sunday */
    case RTC_DAY_OF_MONTH:
        return rtc_encode(s, tm.tm_mday);
    case RTC_MONTH:
        return rtc_encode(s, tm.tm_mon + 1);
    case RTC_YEAR:
        return rtc_encode(s, year % 100);
    default:    /* RTC_CENTURY */
        return rtc_encode(s, year / 100);
    }
}

static void rtc_write_time(RTCState *s, uint8_t index, uint8_t val)
{
    struct tm tm;
    int year;

    rtc_get_tm(s, &tm);
    year = tm.tm_year + 1900;
    switch (index) {
    case RTC_SECONDS:
        tm.tm_sec = rtc_decode(s, val);
        break;
    case RTC_MINUTES:
        tm.tm_min = rtc_decode(s, val);
        break;
    case RTC_HOURS:
        tm.tm_hour = rtc_decode_hours(s, val);
        break;
    case RTC_DAY_OF_WEEK:
        return;
    case RTC_DAY_OF_MONTH:
        tm.tm_mday = rtc_decode(s, val);
        break;
    case RTC_MONTH:
        tm.tm_mon = rtc_decode(s, val) - 1;
        break;
    case RTC_YEAR:
        tm.tm_year = year / 100 * 100 + rtc_decode(s, val) - 1900;
        break;
    default:    /* RTC_CENTURY */
        tm.tm_year = rtc_decode(s, val) * 100 + year % 100 - 1900;
        break;
    }
    /*
     * While SET is held the fields stay as written (a date that is briefly
     * invalid between two writes must not be normalised away); the offset
     * follows every write so the clock is right whenever SET drops.
     */
    if (s->cmos[RTC_REG_B] & RTC_REG_B_SET) {
        s->frozen = tm;
    }
    rtc_set_tm(s, &tm);
}

static bool rtc_is_time_reg(uint8_t index)
{
    switch (index) {
    case RTC_SECONDS:
    case RTC_MINUTES:
    case RTC_HOURS:
    case RTC_DAY_OF_WEEK:
    case RTC_DAY_OF_MONTH:
    case RTC_MONTH:
    case RTC_YEAR:
    case RTC_CENTURY:
        return true;
    default:
        return false;   /* the alarm bytes in between are plain storage */
    }
}

static void rtc_update_irq(RTCState *s)
{
    uint8_t enabled = s->cmos[RTC_REG_B] &
                      (RTC_REG_B_PIE | RTC_REG_B_AIE | RTC_REG_B_UIE);
    /* The C flags sit at the same bit positions as their B enables. */
    bool pending = s->cmos[RTC_REG_C] & enabled;

    if (pending) {
        s->cmos[RTC_REG_C] |= RTC_REG_C_IRQF;
    } else {
        s->cmos[RTC_REG_C] &= ~RTC_REG_C_IRQF;
    }
    qemu_set_irq(s->irq, pending);
}

static void rtc_arm_update_timer(RTCState *s)
{
    int64_t to_next_ns;

    if (!(s->cmos[RTC_REG_B] & (RTC_REG_B_UIE | RTC_REG_B_AIE))) {
        timer_del(s->update_timer);
        return;
    }
    to_next_ns = (G_USEC_PER_SEC - rtc_now_us() % G_USEC_PER_SEC) *
                 SCALE_US;
    /* Fired a little early for this second: aim at the next one. */
    if (to_next_ns < 100 * SCALE_MS) {
        to_next_ns += NANOSECONDS_PER_SECOND;
    }
    timer_mod_ns(s->update_timer,
                 qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + to_next_ns);
}

static bool rtc_alarm_matches(uint8_t alarm, uint8_t now)
{
    return (alarm & RTC_ALARM_DONT_CARE) == RTC_ALARM_DONT_CARE ||
           alarm == now;
}

/* The end of an update cycle, once per second of the guest clock. */
static void rtc_update_timer_cb(void *opaque)
{
    RTCState *s = opaque;
    struct tm tm;

    if (!(s->cmos[RTC_REG_B] & RTC_REG_B_SET)) {
        /* Rounded: the timer may run a little either side of the tick. */
        rtc_guest_tm_at(s, (rtc_now_us() + G_USEC_PER_SEC / 2) /
                           G_USEC_PER_SEC, &tm);
        s->cmos[RTC_REG_C] |= RTC_REG_C_UF;
        if (rtc_alarm_matches(s->cmos[RTC_SECONDS_ALARM],
                              rtc_encode(s, tm.tm_sec)) &&
            rtc_alarm_matches(s->cmos[RTC_MINUTES_ALARM],
                              rtc_encode(s, tm.tm_min)) &&
            rtc_alarm_matches(s->cmos[RTC_HOURS_ALARM],
                              rtc_encode_hours(s, tm.tm_hour))) {
            s->cmos[RTC_REG_C] |= RTC_REG_C_AF;
        }
        rtc_update_irq(s);
        trace_mc146818_rtc_irq(s->cmos[RTC_REG_C]);
    }
    rtc_arm_update_timer(s);
}

/* Status A's rate select: none, or 2^(RS-1) cycles of 32.768 kHz. */
static int64_t rtc_periodic_period_ns(uint8_t reg_a)
{
    unsigned rs = reg_a & 0x0f;

    if (!rs) {
        return 0;
    }
    if (rs <= 2) {
        rs += 7;                /* 256 and 128 Hz, as the chip does */
    }
    return (int64_t)(1u << (rs - 1)) * NANOSECONDS_PER_SECOND / RTC_BASE_HZ;
}

/* Status A or B changed: start, retune or stop the periodic timer. */
static void rtc_periodic_update(RTCState *s)
{
    int64_t period = (s->cmos[RTC_REG_B] & RTC_REG_B_PIE)
                     ? rtc_periodic_period_ns(s->cmos[RTC_REG_A]) : 0;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (period == s->period_ns) {
        return;
    }
    trace_mc146818_rtc_periodic(s->period_ns, period);
    s->period_ns = period;
    if (!period) {
        timer_del(s->periodic_timer);
        timer_del(s->catchup_timer);
        s->coalesced = 0;
        return;
    }
    s->next_periodic_ns = now + period;
    timer_mod_ns(s->periodic_timer, s->next_periodic_ns);
}

static void rtc_periodic_cb(void *opaque)
{
    RTCState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t due, lost;

    if (!s->period_ns) {
        return;
    }
    /* Every period that has passed since the last tick is due now. */
    due = 1 + (now > s->next_periodic_ns
               ? (uint64_t)(now - s->next_periodic_ns) / s->period_ns : 0);
    s->next_periodic_ns += due * s->period_ns;
    lost = due - 1;
    if (s->cmos[RTC_REG_C] & RTC_REG_C_PF) {
        lost++;                 /* the previous one was never taken */
    }
    s->cmos[RTC_REG_C] |= RTC_REG_C_PF;
    rtc_update_irq(s);
    if (lost) {
        s->ticks_lost += lost;
        if (s->lost_tick_policy == RTC_LOST_TICK_SLEW) {
            s->coalesced = MIN((uint64_t)s->coalesced + lost,
                               RTC_MAX_COALESCED);
        }
        trace_mc146818_rtc_lost_ticks(lost, s->coalesced);
    }
    timer_mod_ns(s->periodic_timer, s->next_periodic_ns);
}

/*
 * Re-injection of a lost tick: a quarter period after the guest took the
 * last one, so owed ticks go out four times faster than the rate.
 */
static void rtc_catchup_arm(RTCState *s)
{
    if (s->coalesced && s->period_ns &&
        !(s->cmos[RTC_REG_C] & RTC_REG_C_PF)) {
        timer_mod_ns(s->catchup_timer,
                     qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                     MAX(s->period_ns / 4, 10 * SCALE_US));
    }
}

static void rtc_catchup_cb(void *opaque)
{
    RTCState *s = opaque;

    /* Not taken yet (a regular tick came first): wait for the ack. */
    if (!s->coalesced || !s->period_ns ||
        (s->cmos[RTC_REG_C] & RTC_REG_C_PF)) {
        return;
    }
    s->coalesced--;
    s->ticks_reinjected++;
    s->cmos[RTC_REG_C] |= RTC_REG_C_PF;
    rtc_update_irq(s);
    trace_mc146818_rtc_reinject(s->coalesced);
}

static void rtc_write_reg_b(RTCState *s, uint8_t val)
{
    bool was_set = s->cmos[RTC_REG_B] & RTC_REG_B_SET;
    bool set = val & RTC_REG_B_SET;

    if (set) {
        /* The chip drops UIE while its update cycle is stopped. */
        val &= ~RTC_REG_B_UIE;
    }
    if (set && !was_set) {
        rtc_get_tm(s, &s->frozen);
    }
    s->cmos[RTC_REG_B] = val;
    if (was_set && !set) {
        /* The clock resumes from exactly what the guest wrote. */
        rtc_set_tm(s, &s->frozen);
    }
    rtc_update_irq(s);
    rtc_arm_update_timer(s);
    rtc_periodic_update(s);
}

static uint8_t rtc_read_data(RTCState *s)
{
    uint8_t index = s->index;
    uint8_t val;

    if (rtc_is_time_reg(index)) {
        return rtc_read_time(s, index);
    }
    switch (index) {
    case RTC_REG_A:
        return s->cmos[RTC_REG_A] & ~RTC_REG_A_UIP;
    case RTC_REG_C:
        val = s->cmos[RTC_REG_C];
        s->cmos[RTC_REG_C] = 0;
        rtc_update_irq(s);
        if (val & RTC_REG_C_PF) {
            rtc_catchup_arm(s);
        }
        return val;
    case RTC_REG_D:
        return RTC_REG_D_VRT;   /* the battery is always good */
    default:
        return s->cmos[index];
    }
}

static void rtc_write_data(RTCState *s, uint8_t val)
{
    uint8_t index = s->index;

    if (rtc_is_time_reg(index)) {
        rtc_write_time(s, index, val);
        return;
    }
    switch (index) {
    case RTC_REG_A:
        s->cmos[RTC_REG_A] = val & ~RTC_REG_A_UIP;
        rtc_periodic_update(s);
        break;
    case RTC_REG_B:
        rtc_write_reg_b(s, val);
        break;
    case RTC_REG_C:
    case RTC_REG_D:
        /* Read-only on the chip. */
        break;
    default:
        s->cmos[index] = val;
        break;
    }
}

static uint64_t rtc_io_read(void *opaque, hwaddr addr, unsigned size)
{
    RTCState *s = opaque;
    uint8_t val;

    if (addr == 0) {
        return 0xff;            /* the index register is write-only */
    }
    val = rtc_read_data(s);
    trace_mc146818_rtc_read(s->index, val);
    return val;
}

static void rtc_io_write(void *opaque, hwaddr addr, uint64_t val,
                         unsigned size)
{
    RTCState *s = opaque;

    if (addr == 0) {
        /* Bit 7 masks NMIs on PCs; there is no NMI source to mask here. */
        s->index = val & (RTC_CMOS_SIZE - 1);
        return;
    }
    trace_mc146818_rtc_write(s->index, val);
    rtc_write_data(s, val);
}

static const MemoryRegionOps rtc_io_ops = {
    .read = rtc_io_read,
    .write = rtc_io_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 1 },
};

/* CMOS RAM and the clock are battery-backed: a reset keeps them. */
static void rtc_reset(DeviceState *dev)
{
    RTCState *s = MC146818_RTC(dev);

    s->index = 0;
    s->cmos[RTC_REG_B] = RTC_REG_B_24H;    /* BCD, 24h, no interrupts */
    s->cmos[RTC_REG_C] = 0;
    rtc_update_irq(s);
    timer_del(s->update_timer);
    rtc_periodic_update(s);
    s->coalesced = 0;
}

static int rtc_find_other(Object *obj, void *opaque)
{
    DeviceState *dev = (DeviceState *)object_dynamic_cast(obj,
                                                          TYPE_MC146818_RTC);

    return dev && dev != opaque && dev->realized;
}

static bool rtc_realize(DeviceState *dev, Error **errp)
{
    RTCState *s = MC146818_RTC(dev);

    if (object_child_foreach_recursive(object_get_root(), rtc_find_other,
                                       dev)) {
        error_setg(errp, "the machine already has an RTC at I/O port 0x%x",
                   RTC_ISA_BASE);
        return false;
    }
    /* Power-on state of a machine without firmware to set it up. */
    memset(s->cmos, 0, sizeof(s->cmos));
    s->cmos[RTC_REG_A] = RTC_REG_A_PC_DEFAULT;
    s->cmos[RTC_REG_B] = RTC_REG_B_24H;
    if (s->lost_tick_policy == RTC_LOST_TICK_DELAY) {
        error_setg(errp, "mc146818rtc: lost_tick_policy=delay is not "
                   "supported");
        error_append_hint(errp, "Use discard or slew (-rtc driftfix=slew).\n");
        return false;
    }
    s->offset_s = rtc_base_offset_s();
    s->update_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rtc_update_timer_cb,
                                   s);
    s->periodic_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rtc_periodic_cb, s);
    s->catchup_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rtc_catchup_cb, s);
    s->period_ns = 0;
    rtc_devices = g_slist_prepend(rtc_devices, s);
    memory_region_init_io(&s->io, OBJECT(dev), &rtc_io_ops, s, "rtc", 2);
    memory_region_add_subregion(get_system_io(), RTC_ISA_BASE, &s->io);
    return true;
}

static void rtc_unrealize(DeviceState *dev)
{
    RTCState *s = MC146818_RTC(dev);

    timer_free(s->update_timer);
    s->update_timer = NULL;
    timer_free(s->periodic_timer);
    s->periodic_timer = NULL;
    timer_free(s->catchup_timer);
    s->catchup_timer = NULL;
    rtc_devices = g_slist_remove(rtc_devices, s);
    memory_region_del_subregion(get_system_io(), &s->io);
    memory_region_finalize(&s->io);
}

DeviceState *mc146818_rtc_create(MachineState *ms, qemu_irq irq,
                                 Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_MC146818_RTC);

    MC146818_RTC(dev)->irq = irq;
    object_property_add_child(OBJECT(ms), "rtc", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    return dev;
}

static const Property rtc_props[] = {
    DEFINE_PROP_ENUM("lost_tick_policy", RTCState, lost_tick_policy,
                     RTC_LOST_TICK_DISCARD, rtc_lost_tick_policy_names),
    DEFINE_PROP_END_OF_LIST(),
};

/* After the guest's clock was set: forget the ticks still owed. */
static void qmp_rtc_reset_reinjection(JsonObject *args, JsonNode **ret,
                                      Error **errp)
{
    for (GSList *l = rtc_devices; l; l = l->next) {
        RTCState *s = l->data;

        s->coalesced = 0;
        timer_del(s->catchup_timer);
    }
}

static bool rtc_post_load(void *opaque, int version_id, Error **errp)
{
    RTCState *s = opaque;
    struct tm *f = &s->frozen;

    if (f->tm_sec < 0 || f->tm_sec > 60 || f->tm_min < 0 || f->tm_min > 59 ||
        f->tm_hour < 0 || f->tm_hour > 23 || f->tm_mday < 0 ||
        f->tm_mday > 31 || f->tm_mon < 0 || f->tm_mon > 11 ||
        f->tm_year < RTC_YEAR_MIN - 1900 - 1 ||
        f->tm_year > RTC_YEAR_MAX - 1900 || f->tm_wday < 0 ||
        f->tm_wday > 6) {
        error_setg(errp, "mc146818rtc: frozen time out of range");
        return false;
    }
    /* Timers follow the registers, against the migrated virtual clock. */
    s->period_ns = 0;
    rtc_periodic_update(s);
    rtc_arm_update_timer(s);
    rtc_update_irq(s);
    return true;
}

static const VMStateDescription vmstate_rtc = {
    .name = "mc146818rtc",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rtc_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_MAX(index, RTCState, RTC_CMOS_SIZE - 1),
        VMSTATE_UINT8_ARRAY(cmos, RTCState),
        VMSTATE_INT64(offset_s, RTCState),
        VMSTATE_INT32(frozen.tm_sec, RTCState),
        VMSTATE_INT32(frozen.tm_min, RTCState),
        VMSTATE_INT32(frozen.tm_hour, RTCState),
        VMSTATE_INT32(frozen.tm_mday, RTCState),
        VMSTATE_INT32(frozen.tm_mon, RTCState),
        VMSTATE_INT32(frozen.tm_year, RTCState),
        VMSTATE_INT32(frozen.tm_wday, RTCState),
        VMSTATE_INT32(frozen.tm_yday, RTCState),
        VMSTATE_UINT32(coalesced, RTCState),
        VMSTATE_END_OF_LIST()
    },
};

static void rtc_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    /* Listed like QEMU's; the pc machine creates the only one it can have. */
    dc->desc = "MC146818 CMOS RTC at ports 0x70-0x71 (created by the pc "
               "machine)";
    dc->realize = rtc_realize;
    dc->unrealize = rtc_unrealize;
    dc->reset = rtc_reset;
    dc->vmsd = &vmstate_rtc;
    device_class_set_props(dc, rtc_props);
}

static const TypeInfo rtc_types[] = {
    {
        .name = TYPE_MC146818_RTC,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(RTCState),
        .class_init = rtc_class_init,
    },
};

DEFINE_TYPES(rtc_types)

static void __attribute__((constructor)) rtc_qmp_register(void)
{
    qmp_register_command_args("rtc-reset-reinjection",
                              qmp_rtc_reset_reinjection, "", 0);
}
