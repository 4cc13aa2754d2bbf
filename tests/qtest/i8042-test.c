/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The i8042 keyboard controller of the pc and q35 machines, through
 * ports 0x60/0x64: controller commands (self-test, interface tests, the
 * command byte, the output port), the PS/2 keyboard's commands, QMP
 * send-key and HMP sendkey reaching the guest as set 1 scancodes (set 2
 * with translation off) with IRQ 1 raised, the reset line, and hostile
 * guest programming.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

#define DATA 0x60
#define CMD 0x64
#define STAT_OBF 0x01
#define STAT_SYS 0x04
#define STAT_AUX_OBF 0x20
#define MS 1000000LL
#define KBD_PATH "/machine/i8042"

static const char *machines[] = { "pc", "q35" };

static QTestState *start(const char *machine, const char *extra)
{
    QTestState *qts = qtest_initf("-M %s -nodefaults %s", machine,
                                  extra ? extra : "");

    qtest_irq_intercept_out(qts, KBD_PATH);
    return qts;
}

/* Reads one byte that must be waiting (OBF set), and returns it. */
static uint8_t read_byte(QTestState *qts)
{
    g_assert_cmphex(qtest_inb(qts, CMD) & STAT_OBF, ==, STAT_OBF);
    return qtest_inb(qts, DATA);
}

static void assert_empty(QTestState *qts)
{
    g_assert_cmphex(qtest_inb(qts, CMD) & STAT_OBF, ==, 0);
    g_assert_false(qtest_get_irq(qts, 0));
}

/* The bytes the guest can read now must be exactly want[0..n). */
static void expect_bytes(QTestState *qts, const uint8_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* The keyboard's line is up while a keyboard byte waits. */
        g_assert_true(qtest_get_irq(qts, 0));
        g_assert_cmphex(qtest_inb(qts, CMD) & STAT_AUX_OBF, ==, 0);
        g_assert_cmphex(read_byte(qts), ==, want[i]);
    }
    assert_empty(qts);
}

static void send_cad(QTestState *qts, const char *hold)
{
    JsonNode *r = qtest_qmp_assert_success(
        qts, "{'execute':'send-key','arguments':{'keys':["
        "{'type':'qcode','data':'ctrl'},{'type':'qcode','data':'alt'},"
        "{'type':'qcode','data':'delete'}]%s}}", hold ? hold : "");

    json_node_unref(r);
}

static void test_self_test(void)
{
    for (int m = 0; m < 2; m++) {
        QTestState *qts = start(machines[m], NULL);

        assert_empty(qts);
        g_assert_cmphex(qtest_inb(qts, CMD) & STAT_SYS, ==, STAT_SYS);
        qtest_outb(qts, CMD, 0xaa);
        g_assert_cmphex(read_byte(qts), ==, 0x55);
        assert_empty(qts);
        qtest_outb(qts, CMD, 0xab);
        g_assert_cmphex(read_byte(qts), ==, 0x00);
        qtest_outb(qts, CMD, 0xa9);
        g_assert_cmphex(read_byte(qts), ==, 0x00);
        assert_empty(qts);
        /* The output port: reset line high (not in reset), A20 on. */
        qtest_outb(qts, CMD, 0xd0);
        g_assert_cmphex(read_byte(qts) & 0x03, ==, 0x03);
        qtest_quit(qts);
    }
}

static void test_command_byte(void)
{
    QTestState *qts = start("pc", NULL);

    /* As firmware leaves it: XLATE, SYS, both interrupts. */
    qtest_outb(qts, CMD, 0x20);
    g_assert_cmphex(read_byte(qts), ==, 0x47);
    qtest_outb(qts, CMD, 0x60);
    qtest_outb(qts, DATA, 0x61);
    qtest_outb(qts, CMD, 0x20);
    g_assert_cmphex(read_byte(qts), ==, 0x61);
    /* The SYS flag of the status register follows bit 2. */
    g_assert_cmphex(qtest_inb(qts, CMD) & STAT_SYS, ==, 0);
    /* 0xA7 / 0xA8 and 0xAD / 0xAE flip the disable bits. */
    qtest_outb(qts, CMD, 0xa8);
    qtest_outb(qts, CMD, 0xad);
    qtest_outb(qts, CMD, 0x20);
    g_assert_cmphex(read_byte(qts), ==, 0x51);
    qtest_outb(qts, CMD, 0xae);
    qtest_outb(qts, CMD, 0xa7);
    qtest_outb(qts, CMD, 0x20);
    g_assert_cmphex(read_byte(qts), ==, 0x61);
    /* Controller RAM beyond the command byte. */
    qtest_outb(qts, CMD, 0x65);
    qtest_outb(qts, DATA, 0x5a);
    qtest_outb(qts, CMD, 0x25);
    g_assert_cmphex(read_byte(qts), ==, 0x5a);
    /* A system reset restores the default. */
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute':'system_reset'}"));
    json_object_unref(qtest_qmp_eventwait(qts, "RESET"));
    qtest_outb(qts, CMD, 0x20);
    g_assert_cmphex(read_byte(qts), ==, 0x47);
    qtest_quit(qts);
}

static void test_keyboard_commands(void)
{
    QTestState *qts = start("q35", NULL);
    static const uint8_t reset[] = { 0xfa, 0xaa };
    static const uint8_t ident_xlate[] = { 0xfa, 0xab, 0x41 };
    static const uint8_t ident[] = { 0xfa, 0xab, 0x83 };
    static const uint8_t ack2[] = { 0xfa, 0xfa };
    static const uint8_t ack[] = { 0xfa };
    static const uint8_t echo[] = { 0xee };
    static const uint8_t resend[] = { 0xfe };
    static const uint8_t set_xlate[] = { 0xfa, 0xfa, 0x41 };
    static const uint8_t set1[] = { 0xfa, 0xfa, 0x01 };

    qtest_outb(qts, DATA, 0xff);
    expect_bytes(qts, reset, sizeof(reset));
    qtest_outb(qts, DATA, 0xf2);
    expect_bytes(qts, ident_xlate, sizeof(ident_xlate));
    qtest_outb(qts, DATA, 0xee);
    expect_bytes(qts, echo, sizeof(echo));
    qtest_outb(qts, DATA, 0xed);
    expect_bytes(qts, ack, 1);
    qtest_outb(qts, DATA, 0x07);
    expect_bytes(qts, ack, 1);
    qtest_outb(qts, DATA, 0xf4);
    expect_bytes(qts, ack, 1);
    /* Scancode set: query (translated: 0x41 is set 2), then set 1. */
    qtest_outb(qts, DATA, 0xf0);
    qtest_outb(qts, DATA, 0x00);
    expect_bytes(qts, set_xlate, sizeof(set_xlate));
    qtest_outb(qts, DATA, 0xf0);
    qtest_outb(qts, DATA, 0x01);
    expect_bytes(qts, ack2, sizeof(ack2));
    /* Without translation the query answers plainly. */
    qtest_outb(qts, CMD, 0x60);
    qtest_outb(qts, DATA, 0x07);
    qtest_outb(qts, DATA, 0xf0);
    qtest_outb(qts, DATA, 0x00);
    expect_bytes(qts, set1, sizeof(set1));
    qtest_outb(qts, DATA, 0xf2);
    expect_bytes(qts, ident, sizeof(ident));
    /* Not a command: "resend". */
    qtest_outb(qts, DATA, 0x42);
    expect_bytes(qts, resend, sizeof(resend));
    /* With the keyboard interrupt off, the byte waits without IRQ 1. */
    qtest_outb(qts, CMD, 0x60);
    qtest_outb(qts, DATA, 0x04);
    qtest_outb(qts, DATA, 0xee);
    g_assert_false(qtest_get_irq(qts, 0));
    g_assert_cmphex(read_byte(qts), ==, 0xee);
    qtest_quit(qts);
}

static void test_mouse_commands(void)
{
    QTestState *qts = start("pc", NULL);

    qtest_outb(qts, CMD, 0xa8);
    qtest_outb(qts, CMD, 0xd4);
    qtest_outb(qts, DATA, 0xff);
    for (int i = 0; i < 3; i++) {
        static const uint8_t want[] = { 0xfa, 0xaa, 0x00 };

        g_assert_cmphex(qtest_inb(qts, CMD) & (STAT_OBF | STAT_AUX_OBF),
                        ==, STAT_OBF | STAT_AUX_OBF);
        /* The mouse's line (12), not the keyboard's. */
        g_assert_true(qtest_get_irq(qts, 1));
        g_assert_false(qtest_get_irq(qts, 0));
        g_assert_cmphex(qtest_inb(qts, DATA), ==, want[i]);
    }
    g_assert_false(qtest_get_irq(qts, 1));
    /*
     * 0xD3 loops a byte back as the mouse's, as Linux's AUX probe
     * checks, even with the mouse port disabled; 0xD2 as the
     * keyboard's.
     */
    qtest_outb(qts, CMD, 0xa7);
    qtest_outb(qts, CMD, 0xd3);
    qtest_outb(qts, DATA, 0x5a);
    g_assert_cmphex(qtest_inb(qts, CMD) & (STAT_OBF | STAT_AUX_OBF), ==,
                    STAT_OBF | STAT_AUX_OBF);
    g_assert_true(qtest_get_irq(qts, 1));
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0x5a);
    qtest_outb(qts, CMD, 0xad);
    qtest_outb(qts, CMD, 0xd2);
    qtest_outb(qts, DATA, 0xa5);
    g_assert_cmphex(qtest_inb(qts, CMD) & (STAT_OBF | STAT_AUX_OBF), ==,
                    STAT_OBF);
    g_assert_true(qtest_get_irq(qts, 0));
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0xa5);
    qtest_outb(qts, CMD, 0xae);
    qtest_outb(qts, CMD, 0xa8);
    qtest_outb(qts, CMD, 0xd4);
    qtest_outb(qts, DATA, 0xf2);
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0xfa);
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0x00);
    qtest_quit(qts);
}

static void test_send_key_set1(void)
{
    static const uint8_t make[] = { 0x1d, 0x38, 0xe0, 0x53 };
    static const uint8_t brk[] = { 0xe0, 0xd3, 0xb8, 0x9d };

    for (int m = 0; m < 2; m++) {
        QTestState *qts = start(machines[m], NULL);

        send_cad(qts, NULL);
        expect_bytes(qts, make, sizeof(make));
        /* Released after the default 100 ms, in reverse order. */
        qtest_clock_step(qts, 99 * MS);
        assert_empty(qts);
        qtest_clock_step(qts, 1 * MS);
        expect_bytes(qts, brk, sizeof(brk));
        qtest_quit(qts);
    }
}

static void test_send_key_set2(void)
{
    static const uint8_t make[] = { 0x14, 0x11, 0xe0, 0x71 };
    static const uint8_t brk[] = { 0xe0, 0xf0, 0x71, 0xf0, 0x11,
                                   0xf0, 0x14 };
    QTestState *qts = start("q35", NULL);

    /* XLATE off: the keyboard's own set 2 reaches the guest. */
    qtest_outb(qts, CMD, 0x60);
    qtest_outb(qts, DATA, 0x07);
    send_cad(qts, ", 'hold-time': 500");
    expect_bytes(qts, make, sizeof(make));
    qtest_clock_step(qts, 400 * MS);
    assert_empty(qts);
    qtest_clock_step(qts, 100 * MS);
    expect_bytes(qts, brk, sizeof(brk));
    qtest_quit(qts);
}

static void test_send_key_number_and_hmp(void)
{
    static const uint8_t ctrl_r[] = { 0xe0, 0x1d };
    static const uint8_t a_make[] = { 0x1e };
    static const uint8_t make[] = { 0x1d, 0x38, 0xe0, 0x53 };
    static const uint8_t brk[] = { 0xe0, 0xd3, 0xb8, 0x9d };
    QTestState *qts = start("pc", NULL);
    JsonNode *r;

    /* "number" keys are XT codes, 0x80 | code for 0xE0 ones. */
    r = qtest_qmp_assert_success(qts, "{'execute':'send-key','arguments':"
                                 "{'keys':[{'type':'number','data':157}],"
                                 "'hold-time':0}}");
    json_node_unref(r);
    expect_bytes(qts, ctrl_r, sizeof(ctrl_r));
    qtest_clock_step(qts, 1 * MS);
    g_assert_cmphex(read_byte(qts), ==, 0xe0);
    g_assert_cmphex(read_byte(qts), ==, 0x9d);
    r = qtest_qmp_assert_success(qts, "{'execute':'send-key','arguments':"
                                 "{'keys':[{'type':'number','data':30}]}}");
    json_node_unref(r);
    expect_bytes(qts, a_make, sizeof(a_make));
    qtest_clock_step(qts, 100 * MS);
    g_assert_cmphex(read_byte(qts), ==, 0x9e);
    /* HMP, as virsh send-key --hmp or a console user types it. */
    r = qtest_qmp_assert_success(qts, "{'execute':'human-monitor-command',"
                                 "'arguments':{'command-line':"
                                 "'sendkey ctrl-alt-delete'}}");
    g_assert_cmpstr(json_node_get_string(r), ==, "");
    json_node_unref(r);
    expect_bytes(qts, make, sizeof(make));
    qtest_clock_step(qts, 100 * MS);
    expect_bytes(qts, brk, sizeof(brk));
    qtest_quit(qts);
}

/* input-send-event without 'device' reaches the PS/2 keyboard too. */
static void test_input_send_event(void)
{
    static const uint8_t make[] = { 0x1d, 0x1e };
    static const uint8_t brk[] = { 0x9e, 0x9d };
    QTestState *qts = start("pc", NULL);
    JsonNode *r;
    JsonObject *e;

    r = qtest_qmp_assert_success(qts, "{'execute':'input-send-event',"
        "'arguments':{'events':["
        "{'type':'key','data':{'down':true,'key':"
        "{'type':'qcode','data':'ctrl'}}},"
        "{'type':'key','data':{'down':true,'key':"
        "{'type':'number','data':30}}}]}}");
    json_node_unref(r);
    expect_bytes(qts, make, sizeof(make));
    r = qtest_qmp_assert_success(qts, "{'execute':'input-send-event',"
        "'arguments':{'events':["
        "{'type':'key','data':{'down':false,'key':"
        "{'type':'qcode','data':'a'}}},"
        "{'type':'key','data':{'down':false,'key':"
        "{'type':'qcode','data':'ctrl'}}}]}}");
    json_node_unref(r);
    expect_bytes(qts, brk, sizeof(brk));
    /* An unknown key fails the whole command: nothing is sent. */
    e = qtest_qmp(qts, "{'execute':'input-send-event','arguments':"
                  "{'events':[{'type':'key','data':{'down':true,'key':"
                  "{'type':'qcode','data':'a'}}},"
                  "{'type':'key','data':{'down':true,'key':"
                  "{'type':'qcode','data':'nosuchkey'}}}]}}");
    g_assert_nonnull(qtest_qmp_error_desc(e));
    json_object_unref(e);
    assert_empty(qts);
    qtest_quit(qts);
}

static void assert_error(QTestState *qts, const char *cmd,
                         const char *needle)
{
    JsonObject *r = qtest_qmp(qts, "%s", cmd);

    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), needle));
    json_object_unref(r);
}

static void test_send_key_errors(void)
{
    QTestState *qts = start("pc", NULL);
    JsonObject *r;

    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'qcode','data':'ctrl'},"
                 "{'type':'qcode','data':'nosuchkey'}]}}", "nosuchkey");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'warp','data':'a'}]}}", "warp");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'number','data':'a'}]}}", "integer");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'number','data':4096}]}}", "4096");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'qcode'}]}}", "data");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':[]}}",
                 "keys");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':["
                 "{'type':'qcode','data':'a'}],'hold-time':-1}}",
                 "hold-time");
    assert_error(qts, "{'execute':'send-key','arguments':{'keys':[1]}}",
                 "KeyValue");
    assert_error(qts, "{'execute':'human-monitor-command','arguments':"
                 "{'command-line':'sendkey ctrl-nosuchkey'}}", "nosuchkey");
    /* A bound on one command's keys, not a crash. */
    {
        GString *cmd = g_string_new("{'execute':'send-key','arguments':"
                                    "{'keys':[");

        for (int i = 0; i < 257; i++) {
            g_string_append_printf(cmd, "%s{'type':'qcode','data':'a'}",
                                   i ? "," : "");
        }
        g_string_append(cmd, "]}}");
        assert_error(qts, cmd->str, "at most 256");
        g_string_free(cmd, true);
    }
    assert_error(qts, "{'execute':'human-monitor-command','arguments':"
                 "{'command-line':'sendkey a-a-a-a-a-a-a-a-a-a-a-a-a-a-a-a-a'}}",
                 "too many keys");
    /* Missing 'keys' is the dispatcher's error. */
    r = qtest_qmp(qts, "{'execute':'send-key','arguments':{}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    json_object_unref(r);
    /* Nothing was pressed by the failed commands. */
    qtest_clock_step(qts, 200 * MS);
    assert_empty(qts);
    qtest_quit(qts);
}

static void test_scanning_and_disable(void)
{
    static const uint8_t make[] = { 0x1d, 0x38, 0xe0, 0x53 };
    QTestState *qts = start("pc", NULL);

    /* 0xAD holds the keyboard's bytes in its queue until 0xAE. */
    qtest_outb(qts, CMD, 0xad);
    send_cad(qts, ", 'hold-time': 1000");
    assert_empty(qts);
    qtest_outb(qts, CMD, 0xae);
    expect_bytes(qts, make, sizeof(make));
    qtest_clock_step(qts, 1000 * MS);
    for (int i = 0; i < 4; i++) {
        read_byte(qts);
    }
    /* 0xF5: the keyboard stops scanning; keys are lost. */
    qtest_outb(qts, DATA, 0xf5);
    g_assert_cmphex(read_byte(qts), ==, 0xfa);
    send_cad(qts, NULL);
    qtest_clock_step(qts, 100 * MS);
    assert_empty(qts);
    qtest_outb(qts, DATA, 0xf4);
    g_assert_cmphex(read_byte(qts), ==, 0xfa);
    send_cad(qts, NULL);
    expect_bytes(qts, make, sizeof(make));
    qtest_quit(qts);
}

static void test_reset_line(void)
{
    for (int m = 0; m < 2; m++) {
        QTestState *qts = start(machines[m], NULL);
        JsonObject *ev;

        qtest_outb(qts, CMD, 0xfe);
        ev = qtest_qmp_eventwait(qts, "RESET");
        g_assert_true(json_object_get_boolean_member(
                          json_object_get_object_member(ev, "data"),
                          "guest"));
        json_object_unref(ev);
        /* The output port's bit 0 low does the same. */
        qtest_outb(qts, CMD, 0xd1);
        qtest_outb(qts, DATA, 0x02);
        ev = qtest_qmp_eventwait(qts, "RESET");
        json_object_unref(ev);
        /* 0xFF pulses no line. */
        qtest_outb(qts, CMD, 0xff);
        g_assert_null(qtest_qmp_eventwait_timeout(qts, "RESET", 300));
        qtest_quit(qts);
    }
}

static void test_reset_line_no_reboot(void)
{
    QTestState *qts = start("pc", "-no-reboot");

    qtest_outb(qts, CMD, 0xfe);
    qtest_qmp_wait_shutdown(qts, "guest-reset");
    qtest_wait_exit(qts);
    qtest_quit(qts);
}

static void test_hostile(void)
{
    QTestState *qts = start("pc", NULL);
    GRand *rand = g_rand_new_with_seed(0x8042);
    bool after_d1 = false;
    JsonNode *r;
    int reads;

    for (int i = 0; i < 20000; i++) {
        uint8_t v = g_rand_int_range(rand, 0, 256);

        switch (g_rand_int_range(rand, 0, 4)) {
        case 0:
            /* Everything but the reset line (tested above). */
            if (v >= 0xf0 && !(v & 1)) {
                v |= 1;
            }
            qtest_outb(qts, CMD, v);
            after_d1 = v == 0xd1;
            break;
        case 1:
            qtest_outb(qts, DATA, after_d1 ? v | 1 : v);
            after_d1 = false;
            break;
        case 2:
            qtest_inb(qts, DATA);
            break;
        default:
            qtest_inb(qts, CMD);
            break;
        }
        if (i % 2000 == 0) {
            send_cad(qts, ", 'hold-time': 0");
        }
    }
    g_rand_free(rand);
    /* Whatever it queued drains in bounded time. */
    for (reads = 0; reads < 4096 && (qtest_inb(qts, CMD) & STAT_OBF);
         reads++) {
        qtest_inb(qts, DATA);
    }
    g_assert_cmpint(reads, <, 4096);
    r = qtest_qmp_assert_success(qts, "{'execute':'query-status'}");
    json_node_unref(r);
    /* And the controller still works. */
    qtest_outb(qts, CMD, 0x60);
    qtest_outb(qts, DATA, 0x47);
    qtest_outb(qts, CMD, 0xaa);
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0x55);
    qtest_outb(qts, DATA, 0xff);
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0xfa);
    g_assert_cmphex(qtest_inb(qts, DATA), ==, 0xaa);
    qtest_quit(qts);
}

/* A flood of keys the guest never reads: bounded, no torn sequences. */
static void test_queue_bound(void)
{
    QTestState *qts = start("pc", NULL);
    uint8_t last = 0;
    int reads = 0;

    for (int i = 0; i < 200; i++) {
        send_cad(qts, ", 'hold-time': 0");
        qtest_clock_step(qts, 1 * MS);
    }
    while (qtest_inb(qts, CMD) & STAT_OBF) {
        last = qtest_inb(qts, DATA);
        reads++;
        /* The queue and the output buffer, no more. */
        g_assert_cmpint(reads, <=, 257);
    }
    g_assert_cmpint(reads, >=, 250);
    /* A key's bytes go in whole: no dangling 0xE0 prefix. */
    g_assert_cmphex(last, !=, 0xe0);
    /* Once read, keys flow again. */
    send_cad(qts, NULL);
    g_assert_cmphex(read_byte(qts), ==, 0x1d);
    qtest_quit(qts);
}

static void test_qom(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults");
    JsonNode *r = qtest_qmp_assert_success(
        qts, "{'execute':'qom-get','arguments':{'path':'" KBD_PATH "',"
        "'property':'type'}}");
    g_autofree char *qtree = NULL;

    g_assert_cmpstr(json_node_get_string(r), ==, "i8042");
    json_node_unref(r);
    r = qtest_qmp_assert_success(qts, "{'execute':'human-monitor-command',"
                                 "'arguments':{'command-line':"
                                 "'info qtree'}}");
    qtree = g_strdup(json_node_get_string(r));
    json_node_unref(r);
    g_assert_nonnull(strstr(qtree, "i8042"));
    /* Not user-creatable: there is one, at fixed ports. */
    r = NULL;
    {
        JsonObject *e = qtest_qmp(qts, "{'execute':'device_add','arguments':"
                                  "{'driver':'i8042'}}");

        g_assert_nonnull(qtest_qmp_error_desc(e));
        json_object_unref(e);
    }
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/i8042/self-test", test_self_test);
    g_test_add_func("/i8042/command-byte", test_command_byte);
    g_test_add_func("/i8042/keyboard-commands", test_keyboard_commands);
    g_test_add_func("/i8042/mouse-commands", test_mouse_commands);
    g_test_add_func("/i8042/send-key/set1", test_send_key_set1);
    g_test_add_func("/i8042/send-key/set2", test_send_key_set2);
    g_test_add_func("/i8042/send-key/number-and-hmp",
                   test_send_key_number_and_hmp);
    g_test_add_func("/i8042/send-key/errors", test_send_key_errors);
    g_test_add_func("/i8042/input-send-event", test_input_send_event);
    g_test_add_func("/i8042/scanning-and-disable", test_scanning_and_disable);
    g_test_add_func("/i8042/reset-line", test_reset_line);
    g_test_add_func("/i8042/reset-line-no-reboot", test_reset_line_no_reboot);
    g_test_add_func("/i8042/hostile", test_hostile);
    g_test_add_func("/i8042/queue-bound", test_queue_bound);
    g_test_add_func("/i8042/qom", test_qom);
    return g_test_run();
}
