/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's MC146818 CMOS RTC through ports 0x70/0x71: status
 * registers, the clock against the host's (BCD, binary, 12h), setting the
 * date under SET, CMOS RAM, index decoding, update/alarm flags on the
 * virtual clock, reset, and a second RTC being refused.
 */
#include "qemu/osdep.h"
#include <sys/wait.h>
#include "libqtest.h"

#define RTC_INDEX 0x70
#define RTC_DATA 0x71
#define NMI_MASK 0x80

#define REG_SECONDS 0x00
#define REG_SECONDS_ALARM 0x01
#define REG_MINUTES 0x02
#define REG_MINUTES_ALARM 0x03
#define REG_HOURS 0x04
#define REG_HOURS_ALARM 0x05
#define REG_DAY_OF_WEEK 0x06
#define REG_DAY_OF_MONTH 0x07
#define REG_MONTH 0x08
#define REG_YEAR 0x09
#define REG_A 0x0a
#define REG_B 0x0b
#define REG_C 0x0c
#define REG_D 0x0d
#define REG_CENTURY 0x32

#define B_SET 0x80
#define B_AIE 0x20
#define B_UIE 0x10
#define B_DM_BINARY 0x04
#define B_24H 0x02
#define B_PIE 0x40
#define C_IRQF 0x80
#define C_PF 0x40
#define C_AF 0x20
#define C_UF 0x10

/* Reading the host clock and the registers is not atomic; allow this. */
#define CLOCK_SLACK_S 2
#define NS_PER_S 1000000000LL

static uint8_t rtc_read(QTestState *qts, uint8_t reg)
{
    qtest_outb(qts, RTC_INDEX, reg);
    return qtest_inb(qts, RTC_DATA);
}

static void rtc_write(QTestState *qts, uint8_t reg, uint8_t val)
{
    qtest_outb(qts, RTC_INDEX, reg);
    qtest_outb(qts, RTC_DATA, val);
}

static int from_bcd(uint8_t v)
{
    g_assert_cmpuint(v & 0x0f, <=, 9);
    g_assert_cmpuint(v >> 4, <=, 9);
    return (v >> 4) * 10 + (v & 0x0f);
}

static uint8_t to_bcd(int v)
{
    return ((v / 10) << 4) | (v % 10);
}

/* The clock's date and time, decoded per the current status B. */
static GDateTime *rtc_read_datetime(QTestState *qts)
{
    uint8_t b = rtc_read(qts, REG_B);
    int (*dec)(uint8_t) = NULL;
    uint8_t raw_hour;
    int sec, min, hour, mday, mon, year;

    g_assert_true(b & B_24H);
    if (!(b & B_DM_BINARY)) {
        dec = from_bcd;
    }
#define DEC(v) (dec ? dec(v) : (int)(v))
    sec = DEC(rtc_read(qts, REG_SECONDS));
    min = DEC(rtc_read(qts, REG_MINUTES));
    raw_hour = rtc_read(qts, REG_HOURS);
    hour = DEC(raw_hour);
    mday = DEC(rtc_read(qts, REG_DAY_OF_MONTH));
    mon = DEC(rtc_read(qts, REG_MONTH));
    year = DEC(rtc_read(qts, REG_CENTURY)) * 100 +
           DEC(rtc_read(qts, REG_YEAR));
#undef DEC
    return g_date_time_new_utc(year, mon, mday, hour, min, sec);
}

static GTimeSpan abs_span(GTimeSpan s)
{
    return s < 0 ? -s : s;
}

/*
 * True if the RTC reads within CLOCK_SLACK_S of @expected (host time plus
 * @offset_s).  One retry covers a minute/hour/day rolling over between
 * two register reads.
 */
static bool rtc_matches_host(QTestState *qts, GTimeSpan offset_us)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        g_autoptr(GDateTime) expected = g_date_time_add(now, offset_us);
        g_autoptr(GDateTime) rtc = rtc_read_datetime(qts);

        g_assert_nonnull(rtc);
        if (abs_span(g_date_time_difference(rtc, expected)) <=
            CLOCK_SLACK_S * G_TIME_SPAN_SECOND) {
            return true;
        }
    }
    return false;
}

static void test_status_registers(void)
{
    QTestState *qts = qtest_init("-machine pc");

    /* Status A: update-in-progress never shows, divider bits writable. */
    for (int i = 0; i < 100; i++) {
        g_assert_cmphex(rtc_read(qts, REG_A) & 0x80, ==, 0);
    }
    g_assert_cmphex(rtc_read(qts, REG_A), ==, 0x26);
    rtc_write(qts, REG_A, 0xa5);
    g_assert_cmphex(rtc_read(qts, REG_A), ==, 0x25);
    /* Status D: valid RAM and time (battery good), read-only. */
    g_assert_cmphex(rtc_read(qts, REG_D), ==, 0x80);
    rtc_write(qts, REG_D, 0x00);
    g_assert_cmphex(rtc_read(qts, REG_D), ==, 0x80);
    /* Status B after reset: BCD, 24 h, no interrupts, clock running. */
    g_assert_cmphex(rtc_read(qts, REG_B), ==, B_24H);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, 0);
    qtest_quit(qts);
}

static void test_bcd_time_is_host_time(void)
{
    QTestState *qts = qtest_init("-machine pc");

    g_assert_true(rtc_matches_host(qts, 0));
    /* Day of week, 1 = Sunday; retried once for a midnight rollover. */
    for (int attempt = 0; attempt < 2; attempt++) {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        int dow = from_bcd(rtc_read(qts, REG_DAY_OF_WEEK));

        if (dow == g_date_time_get_day_of_week(now) % 7 + 1) {
            break;
        }
        g_assert_cmpint(attempt, ==, 0);
    }
    qtest_quit(qts);
}

static void test_binary_mode(void)
{
    QTestState *qts = qtest_init("-machine pc");
    bool binary_seen = false;

    rtc_write(qts, REG_B, B_24H | B_DM_BINARY);
    g_assert_true(rtc_matches_host(qts, 0));
    /*
     * The century (20 = 0x14) reads differently from its BCD form (0x20);
     * so do most years.  Retry once for an hour rollover.
     */
    g_assert_cmphex(rtc_read(qts, REG_CENTURY), ==, 20);
    for (int attempt = 0; attempt < 2 && !binary_seen; attempt++) {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        uint8_t hour = rtc_read(qts, REG_HOURS);

        binary_seen = hour == g_date_time_get_hour(now);
    }
    g_assert_true(binary_seen);
    rtc_write(qts, REG_B, B_24H);
    g_assert_cmphex(rtc_read(qts, REG_CENTURY), ==, 0x20);
    qtest_quit(qts);
}

static void test_12h_mode(void)
{
    QTestState *qts = qtest_init("-machine pc");
    bool matched = false;

    rtc_write(qts, REG_B, 0);   /* BCD, 12 h */
    for (int attempt = 0; attempt < 2 && !matched; attempt++) {
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();
        int hour = g_date_time_get_hour(now);
        uint8_t expected = to_bcd(hour % 12 ? hour % 12 : 12) |
                           (hour >= 12 ? 0x80 : 0);

        matched = rtc_read(qts, REG_HOURS) == expected;
    }
    g_assert_true(matched);
    qtest_quit(qts);
}

/* 2031-07-15 10:20:30 UTC, a Tuesday, written the way Linux does. */
static void rtc_set_date_2031(QTestState *qts)
{
    uint8_t b = rtc_read(qts, REG_B);

    rtc_write(qts, REG_B, b | B_SET);
    rtc_write(qts, REG_SECONDS, 0x30);
    rtc_write(qts, REG_MINUTES, 0x20);
    rtc_write(qts, REG_HOURS, 0x10);
    rtc_write(qts, REG_DAY_OF_MONTH, 0x15);
    rtc_write(qts, REG_MONTH, 0x07);
    rtc_write(qts, REG_YEAR, 0x31);
    rtc_write(qts, REG_CENTURY, 0x20);
    /* Frozen while SET is held: exactly what was written. */
    g_assert_cmphex(rtc_read(qts, REG_SECONDS), ==, 0x30);
    g_assert_cmphex(rtc_read(qts, REG_YEAR), ==, 0x31);
    g_assert_cmphex(rtc_read(qts, REG_DAY_OF_WEEK), ==, 3);
    rtc_write(qts, REG_B, b);
}

static GTimeSpan offset_to_2031(void)
{
    g_autoptr(GDateTime) target = g_date_time_new_utc(2031, 7, 15,
                                                      10, 20, 30);
    g_autoptr(GDateTime) now = g_date_time_new_now_utc();

    return g_date_time_difference(target, now);
}

static void test_set_date(void)
{
    QTestState *qts = qtest_init("-machine pc");
    GTimeSpan offset;

    rtc_set_date_2031(qts);
    offset = offset_to_2031();
    /* The clock runs on from the new date and keeps its offset. */
    g_assert_cmphex(rtc_read(qts, REG_CENTURY), ==, 0x20);
    g_assert_cmphex(rtc_read(qts, REG_YEAR), ==, 0x31);
    g_assert_cmphex(rtc_read(qts, REG_MONTH), ==, 0x07);
    g_assert_cmphex(rtc_read(qts, REG_DAY_OF_MONTH), ==, 0x15);
    g_assert_true(rtc_matches_host(qts, offset));
    /* Binary mode shows the same moment. */
    rtc_write(qts, REG_B, B_24H | B_DM_BINARY);
    g_assert_cmpuint(rtc_read(qts, REG_YEAR), ==, 31);
    g_assert_true(rtc_matches_host(qts, offset));
    qtest_quit(qts);
}

static void test_set_date_binary_12h(void)
{
    QTestState *qts = qtest_init("-machine pc");

    /* 2019-12-31 11:59:50 PM, binary 12 h. */
    rtc_write(qts, REG_B, B_SET | B_DM_BINARY);
    rtc_write(qts, REG_SECONDS, 50);
    rtc_write(qts, REG_MINUTES, 59);
    rtc_write(qts, REG_HOURS, 0x80 | 11);
    rtc_write(qts, REG_DAY_OF_MONTH, 31);
    rtc_write(qts, REG_MONTH, 12);
    rtc_write(qts, REG_YEAR, 19);
    rtc_write(qts, REG_CENTURY, 20);
    rtc_write(qts, REG_B, B_24H | B_SET);
    /* The same frozen moment, now in BCD 24 h. */
    g_assert_cmphex(rtc_read(qts, REG_HOURS), ==, 0x23);
    g_assert_cmphex(rtc_read(qts, REG_YEAR), ==, 0x19);
    rtc_write(qts, REG_B, B_24H);
    {
        g_autoptr(GDateTime) target = g_date_time_new_utc(2019, 12, 31,
                                                          23, 59, 50);
        g_autoptr(GDateTime) now = g_date_time_new_now_utc();

        g_assert_true(rtc_matches_host(qts,
                                       g_date_time_difference(target, now)));
    }
    qtest_quit(qts);
}

/* Every byte in every time register, in every mode: no crash, no UB. */
static void test_any_time_value_is_safe(void)
{
    static const uint8_t time_regs[] = {
        REG_SECONDS, REG_MINUTES, REG_HOURS, REG_DAY_OF_WEEK,
        REG_DAY_OF_MONTH, REG_MONTH, REG_YEAR, REG_CENTURY,
    };
    QTestState *qts = qtest_init("-machine pc");

    for (unsigned mode = 0; mode < 4; mode++) {
        uint8_t b = (mode & 1 ? B_DM_BINARY : 0) | (mode & 2 ? B_24H : 0);

        for (unsigned r = 0; r < G_N_ELEMENTS(time_regs); r++) {
            for (unsigned v = 0; v < 256; v++) {
                rtc_write(qts, REG_B, b | B_SET);
                rtc_write(qts, time_regs[r], v);
                rtc_read(qts, time_regs[r]);
                rtc_write(qts, REG_B, b);
                rtc_read(qts, time_regs[r]);
            }
        }
    }
    /* Still a working clock afterwards. */
    rtc_write(qts, REG_B, B_24H);
    rtc_set_date_2031(qts);
    g_assert_true(rtc_matches_host(qts, offset_to_2031()));
    g_assert_cmphex(rtc_read(qts, REG_D), ==, 0x80);
    qtest_quit(qts);
}

static void test_cmos_ram(void)
{
    QTestState *qts = qtest_init("-machine pc");

    g_assert_cmphex(rtc_read(qts, 0x40), ==, 0);
    rtc_write(qts, 0x40, 0x5a);
    rtc_write(qts, 0x7f, 0xc3);
    rtc_write(qts, 0x0e, 0x11);
    g_assert_cmphex(rtc_read(qts, 0x40), ==, 0x5a);
    g_assert_cmphex(rtc_read(qts, 0x41), ==, 0);
    g_assert_cmphex(rtc_read(qts, 0x7f), ==, 0xc3);
    g_assert_cmphex(rtc_read(qts, 0x0e), ==, 0x11);
    /* The alarm bytes between the time registers are storage too. */
    rtc_write(qts, REG_SECONDS_ALARM, 0x45);
    rtc_write(qts, REG_HOURS_ALARM, 0xc0);
    g_assert_cmphex(rtc_read(qts, REG_SECONDS_ALARM), ==, 0x45);
    g_assert_cmphex(rtc_read(qts, REG_HOURS_ALARM), ==, 0xc0);
    /* Reading does not move the index. */
    qtest_outb(qts, RTC_INDEX, 0x40);
    g_assert_cmphex(qtest_inb(qts, RTC_DATA), ==, 0x5a);
    g_assert_cmphex(qtest_inb(qts, RTC_DATA), ==, 0x5a);
    qtest_quit(qts);
}

static void test_index_decoding(void)
{
    QTestState *qts = qtest_init("-machine pc");

    rtc_write(qts, 0x40, 0xa7);
    /* Bit 7 is the NMI mask: index 0xc0 is byte 0x40, 0x8d is status D. */
    g_assert_cmphex(rtc_read(qts, 0x40 | NMI_MASK), ==, 0xa7);
    g_assert_cmphex(rtc_read(qts, REG_D | NMI_MASK), ==, 0x80);
    rtc_write(qts, 0x41 | NMI_MASK, 0x3c);
    g_assert_cmphex(rtc_read(qts, 0x41), ==, 0x3c);
    g_assert_cmphex(rtc_read(qts, REG_A | NMI_MASK), ==, 0x26);
    qtest_quit(qts);
}

static void test_update_and_alarm_flags(void)
{
    QTestState *qts = qtest_init("-machine pc");

    /* No interrupt enabled: no flags, however long the clock runs. */
    qtest_clock_step(qts, 3 * NS_PER_S);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, 0);

    rtc_write(qts, REG_B, B_24H | B_UIE);
    qtest_clock_step(qts, 2 * NS_PER_S);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, C_IRQF | C_UF);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, 0);   /* read clears */

    /* An alarm of don't-care bytes matches every second. */
    rtc_write(qts, REG_SECONDS_ALARM, 0xff);
    rtc_write(qts, REG_MINUTES_ALARM, 0xff);
    rtc_write(qts, REG_HOURS_ALARM, 0xff);
    rtc_write(qts, REG_B, B_24H | B_AIE);
    qtest_clock_step(qts, 2 * NS_PER_S);
    /* UF is set too but, not enabled, raises no IRQF on its own. */
    g_assert_cmphex(rtc_read(qts, REG_C), ==, C_IRQF | C_AF | C_UF);

    /* An alarm hour that cannot match (hour 0x3f): UF only, no IRQF. */
    rtc_write(qts, REG_HOURS_ALARM, 0x3f);
    qtest_clock_step(qts, 2 * NS_PER_S);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, C_UF);

    /* SET stops the update cycle (and clears UIE). */
    rtc_write(qts, REG_B, B_24H | B_SET | B_UIE | B_AIE);
    g_assert_cmphex(rtc_read(qts, REG_B), ==, B_24H | B_SET | B_AIE);
    qtest_clock_step(qts, 2 * NS_PER_S);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, 0);
    qtest_quit(qts);
}

static void test_reset_keeps_clock_and_ram(void)
{
    QTestState *qts = qtest_init("-machine pc");
    GTimeSpan offset;
    JsonNode *ret;
    JsonObject *ev;

    rtc_write(qts, 0x50, 0x99);
    rtc_write(qts, REG_B, B_24H);
    rtc_set_date_2031(qts);
    offset = offset_to_2031();
    rtc_write(qts, REG_B, B_DM_BINARY | B_UIE);
    ret = qtest_qmp_assert_success(qts, "{'execute': 'system_reset'}");
    json_node_unref(ret);
    ev = qtest_qmp_eventwait(qts, "RESET");
    json_object_unref(ev);
    g_assert_cmphex(rtc_read(qts, REG_B), ==, B_24H);
    g_assert_cmphex(rtc_read(qts, 0x50), ==, 0x99);
    g_assert_true(rtc_matches_host(qts, offset));
    qtest_quit(qts);
}

static void test_second_rtc_refused(void)
{
    g_autofree char *args = g_strdup_printf("-machine pc -accel qtest "
                                            "-display none "
                                            "-device mc146818rtc");
    g_autofree char *err = NULL;
    int status = qtest_run_expect_fail(args, NULL, &err);
    QTestState *qts;
    JsonObject *reply;

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "already has an RTC"));

    /* Hot-adding one is an error reply, and the first keeps working. */
    qts = qtest_init("-machine pc");
    reply = qtest_qmp(qts, "{'execute': 'device_add', "
                           "'arguments': {'driver': 'mc146818rtc'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    json_object_unref(reply);
    g_assert_cmphex(rtc_read(qts, REG_D), ==, 0x80);
    qtest_quit(qts);
}

static void test_listed_in_device_help(void)
{
    g_autofree char *out = NULL;
    int status = qtest_run_expect_fail("-device help", &out, NULL);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_nonnull(strstr(out, "name \"mc146818rtc\""));
}

/* Status A for 2 Hz periodic interrupts: 32.768 kHz base, rate 15. */
#define A_2HZ 0x2f
#define PERIOD_2HZ_NS (NS_PER_S / 2)

/*
 * Polls status C every 100 ms of virtual time for @ns, as an interrupt
 * handler would; returns how many periodic interrupts were taken.
 */
static unsigned rtc_take_periodic(QTestState *qts, int64_t ns)
{
    unsigned taken = 0;

    for (int64_t t = 0; t < ns; t += NS_PER_S / 10) {
        qtest_clock_step(qts, NS_PER_S / 10);
        if (rtc_read(qts, REG_C) & C_PF) {
            taken++;
        }
    }
    return taken;
}

/* The guest stops taking interrupts for 3 s (6 ticks), then resumes. */
static unsigned rtc_ticks_after_stall(const char *extra, bool reset)
{
    g_autofree char *args = g_strdup_printf("-machine pc %s", extra);
    QTestState *qts = qtest_init(args);
    unsigned taken;

    rtc_write(qts, REG_A, A_2HZ);
    rtc_write(qts, REG_B, B_24H | B_PIE);
    qtest_clock_step(qts, 3 * NS_PER_S);
    if (reset) {
        json_node_unref(qtest_qmp_assert_success(
            qts, "{'execute': 'rtc-reset-reinjection'}"));
    }
    taken = rtc_take_periodic(qts, 8 * NS_PER_S);
    /* Periodic interrupts off: nothing more, and no ticks owed later. */
    rtc_write(qts, REG_B, B_24H);
    g_assert_cmpuint(rtc_take_periodic(qts, 2 * NS_PER_S), ==, 0);
    qtest_quit(qts);
    return taken;
}

static void test_periodic_rate(void)
{
    QTestState *qts = qtest_init("-machine pc");

    /* PIE without a rate: nothing. */
    rtc_write(qts, REG_A, 0x20);
    rtc_write(qts, REG_B, B_24H | B_PIE);
    g_assert_cmpuint(rtc_take_periodic(qts, 2 * NS_PER_S), ==, 0);
    /* 2 Hz, taken promptly: exactly one per period. */
    rtc_write(qts, REG_A, A_2HZ);
    g_assert_cmpuint(rtc_take_periodic(qts, 5 * NS_PER_S), ==, 10);
    /* PF comes with IRQF while PIE is on. */
    qtest_clock_step(qts, PERIOD_2HZ_NS);
    g_assert_cmphex(rtc_read(qts, REG_C), ==, C_IRQF | C_PF);
    qtest_quit(qts);
}

/*
 * 3 s stalled + 8 s taking = 22 periods.  driftfix=slew delivers every
 * one of them (the 5 lost during the stall come later, between regular
 * ticks); without it (and after rtc-reset-reinjection) they are gone.
 */
static void test_periodic_slew_catches_up(void)
{
    g_assert_cmpuint(rtc_ticks_after_stall("-rtc base=utc,driftfix=slew",
                                           false), ==, 22 - 6 + 1 + 5);
    g_assert_cmpuint(rtc_ticks_after_stall("-rtc driftfix=none", false), ==,
                     22 - 6 + 1);
    g_assert_cmpuint(rtc_ticks_after_stall("", false), ==, 22 - 6 + 1);
    g_assert_cmpuint(rtc_ticks_after_stall("-rtc driftfix=slew", true), ==,
                     22 - 6 + 1);
    g_assert_cmpuint(rtc_ticks_after_stall(
                         "-global mc146818rtc.lost_tick_policy=slew", false),
                     ==, 22 - 6 + 1 + 5);
}

static void test_base_date(void)
{
    QTestState *qts = qtest_init("-machine pc -rtc base=2006-06-17T16:01:21");
    g_autoptr(GDateTime) rtc = rtc_read_datetime(qts);
    g_autoptr(GDateTime) want = g_date_time_new_utc(2006, 6, 17, 16, 1, 21);

    g_assert_cmpint(abs_span(g_date_time_difference(rtc, want)), <=,
                    CLOCK_SLACK_S * G_TIME_SPAN_SECOND);
    qtest_quit(qts);

    qts = qtest_init("-machine pc -rtc base=2031-01-02");
    g_date_time_unref(want);
    want = g_date_time_new_utc(2031, 1, 2, 0, 0, 0);
    g_date_time_unref(rtc);
    rtc = rtc_read_datetime(qts);
    g_assert_cmpint(abs_span(g_date_time_difference(rtc, want)), <=,
                    CLOCK_SLACK_S * G_TIME_SPAN_SECOND);
    qtest_quit(qts);
}

static void test_base_localtime(void)
{
    const char *old_tz = g_getenv("TZ");
    g_autofree char *saved = g_strdup(old_tz);
    QTestState *qts;

    /* Five hours behind UTC, no daylight saving: the child inherits it. */
    g_setenv("TZ", "XST5", TRUE);
    qts = qtest_init("-machine pc -rtc base=localtime");
    if (saved) {
        g_setenv("TZ", saved, TRUE);
    } else {
        g_unsetenv("TZ");
    }
    g_assert_true(rtc_matches_host(qts, -5 * G_TIME_SPAN_HOUR));
    qtest_quit(qts);
}

/* clock=vm: the guest clock runs with the virtual clock, not the host's. */
static void test_clock_vm(void)
{
    QTestState *qts = qtest_init("-machine pc -rtc clock=vm");

    g_assert_true(rtc_matches_host(qts, 0));
    qtest_clock_step(qts, 3600 * NS_PER_S);
    g_assert_true(rtc_matches_host(qts, G_TIME_SPAN_HOUR));
    qtest_quit(qts);
}

static void test_bad_rtc_options(void)
{
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-rtc base=yesterday", "invalid datetime format");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-rtc clock=sundial", "invalid option value "
                             "'sundial'");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-rtc driftfix=fast", "invalid option value "
                             "'fast'");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-rtc base=utc,tick=1", "Invalid parameter "
                             "'tick'");
    qtest_assert_start_fails("-machine pc -accel qtest -display none "
                             "-global mc146818rtc.lost_tick_policy=delay",
                             "lost_tick_policy=delay is not supported");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rtc/status/uip-clear-vrt-set", test_status_registers);
    g_test_add_func("/rtc/clock/bcd-is-host-time", test_bcd_time_is_host_time);
    g_test_add_func("/rtc/clock/binary-mode", test_binary_mode);
    g_test_add_func("/rtc/clock/12h-mode", test_12h_mode);
    g_test_add_func("/rtc/clock/set-date-keeps-offset", test_set_date);
    g_test_add_func("/rtc/clock/set-date-binary-12h",
                   test_set_date_binary_12h);
    g_test_add_func("/rtc/clock/any-time-value-is-safe",
                    test_any_time_value_is_safe);
    g_test_add_func("/rtc/cmos/ram-read-back", test_cmos_ram);
    g_test_add_func("/rtc/cmos/index-ignores-nmi-bit", test_index_decoding);
    g_test_add_func("/rtc/irq/update-and-alarm-flags",
                   test_update_and_alarm_flags);
    g_test_add_func("/rtc/reset/keeps-clock-and-ram",
                   test_reset_keeps_clock_and_ram);
    g_test_add_func("/rtc/device/second-refused", test_second_rtc_refused);
    g_test_add_func("/rtc/device/listed-in-help", test_listed_in_device_help);
    g_test_add_func("/rtc/periodic/rate", test_periodic_rate);
    g_test_add_func("/rtc/periodic/slew-catches-up",
                    test_periodic_slew_catches_up);
    g_test_add_func("/rtc/option/base-date", test_base_date);
    g_test_add_func("/rtc/option/base-localtime", test_base_localtime);
    g_test_add_func("/rtc/option/clock-vm", test_clock_vm);
    g_test_add_func("/rtc/option/bad", test_bad_rtc_options);
    return g_test_run();
}
