/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qtest line protocol's error handling and clock control, and the
 * command-line start-up paths (errors, help output).
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include <sys/wait.h>

static QTestState *qts;

static void assert_fail(const char *line)
{
    g_autofree char *reply = qtest_raw_cmd(qts, line);

    g_test_message("'%s' -> '%s'", line, reply);
    g_assert_true(g_str_has_prefix(reply, "FAIL "));
    g_assert_cmpuint(strlen(reply), >, 5);
}

static void assert_still_answers(void)
{
    qtest_writel(qts, 0x100000, 0x600df00d);
    g_assert_cmphex(qtest_readl(qts, 0x100000), ==, 0x600df00d);
}

static void test_unknown_command(void)
{
    g_autofree char *reply = qtest_raw_cmd(qts, "frobnicate 1 2");

    g_assert_cmpstr(reply, ==, "FAIL Unknown command 'frobnicate'");
    assert_still_answers();
}

static void test_bad_numbers(void)
{
    assert_fail("readb xyz");
    assert_fail("readl 0x10g0");
    assert_fail("readq -1");
    assert_fail("writel 0x1000 banana");
    assert_fail("writeb 0x1000 0x100");         /* does not fit a byte */
    assert_fail("outb 0x10000 1");               /* port out of range */
    assert_fail("memset 0x1000 4 0x1ff");        /* pattern not a byte */
    assert_fail("read 0x1000 0xffffffffffff");   /* absurd size */
    assert_still_answers();
}

static void test_wrong_arg_count(void)
{
    assert_fail("readb");
    assert_fail("readb 0x1000 0x2000");
    assert_fail("writew 0x1000");
    assert_fail("write 0x1000 4");
    assert_fail("b64read 0x1000");
    assert_fail("endianness big");
    assert_still_answers();
}

static void test_bad_buffers(void)
{
    assert_fail("write 0x1000 2 0x123");         /* odd digit count */
    assert_fail("write 0x1000 1 0xaabb");        /* more data than size */
    assert_fail("write 0x1000 2 0xzz00");
    assert_fail("write 0x1000 2 aabb");          /* no 0x prefix */
    assert_fail("b64write 0x1000 4 !!!!");
    assert_still_answers();
}

/*
 * One command must not hold the main loop for long: a transfer is
 * bounded (4 MiB), and a large read at the bound is still answered.
 */
static void test_transfer_bounds(void)
{
    g_autofree char *big = NULL;

    assert_fail("read 0 155667788");
    assert_fail("b64read 0 0x400001");
    assert_fail("memset 0 0x400001 0");
    big = qtest_raw_cmd(qts, "read 0x100000 0x400000");
    g_assert_true(g_str_has_prefix(big, "OK 0x"));
    g_assert_cmpuint(strlen(big), ==, 5 + 2 * 0x400000);
    assert_still_answers();
}

static void test_short_write_zero_fills(void)
{
    g_autofree char *ok = NULL;

    qtest_writel(qts, 0x101000, 0xffffffff);
    ok = qtest_raw_cmd(qts, "write 0x101000 4 0xab");
    g_assert_cmpstr(ok, ==, "OK");
    g_assert_cmphex(qtest_readl(qts, 0x101000), ==, 0xab);
}

static void test_blank_lines_ignored(void)
{
    /* Blank lines get no reply, so the next reply is the readb's. */
    g_autofree char *reply = NULL;

    qtest_writeb(qts, 0x102000, 0x5e);
    reply = qtest_raw_cmd(qts, "\n\r\nreadb 0x102000");
    g_assert_cmpstr(reply, ==, "OK 0x5e");
}

static void test_endianness(void)
{
    g_autofree char *reply = qtest_raw_cmd(qts, "endianness");

    g_assert_cmpstr(reply, ==, "OK little");
}

static void test_clock(void)
{
    int64_t t0 = qtest_clock_step(qts, 0);
    int64_t t1 = qtest_clock_step(qts, 1000);
    int64_t t2 = qtest_clock_step(qts, 250);

    /* The virtual clock is manual under qtest: it moves exactly. */
    g_assert_cmpint(t1, ==, t0 + 1000);
    g_assert_cmpint(t2, ==, t1 + 250);
    g_assert_cmpint(qtest_clock_set(qts, t2 + 100000), ==, t2 + 100000);
    /* Setting it backwards leaves it where it is. */
    g_assert_cmpint(qtest_clock_set(qts, t0), ==, t2 + 100000);
    assert_fail("clock_step abc");
    assert_fail("clock_set");
}

static void test_cmdline_unknown_device(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status = qtest_run_expect_fail(
        "-M pc -accel qtest -display none -device foo", &out, &err);

    g_test_message("stderr: %s", err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "-device foo"));
}

/* QEMU's wording, with the option as the location prefix. */
static void test_cmdline_unknown_accel(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status = qtest_run_expect_fail("-M pc -display none -accel nosuch",
                                       &out, &err);

    g_test_message("stderr: %s", err);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, ": -accel nosuch: invalid accelerator "
                                 "nosuch\n"));
}

static void test_cmdline_chardev_errors(void)
{
    static const char *const bad[] = {
        "-chardev socket,id=c0,path=/nonexistent-dir/x.sock,server=on,wait=off",
        "-chardev socket,id=c0,path=/nonexistent-dir/x.sock",
        "-chardev bogus,id=c0",
        "-chardev socket,id=c0",
        "-chardev socket,id=c0,fd=99999",
        "-qmp unix:/nonexistent-dir/q.sock,server,nowait",
        "-qmp tcp:1.2.3.4:5",
    };
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *args = g_strdup_printf(
            "-M pc -accel qtest -display none %s", bad[i]);
        g_autofree char *out = NULL, *err = NULL;
        int status = qtest_run_expect_fail(args, &out, &err);

        g_test_message("%s -> %s", bad[i], err);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 1);
        g_assert_cmpuint(strlen(err), >, 0);
    }
}

static void test_qtest_log(void)
{
    g_autofree char *dir = g_dir_make_tmp("qtest-log-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "qtest.log", NULL);
    g_autofree char *text = NULL;
    QTestState *s;

    s = qtest_initf("-M pc -m 64M -qtest-log %s", log);
    qtest_writeb(s, 0x103000, 0x11);
    g_assert_cmphex(qtest_readb(s, 0x103000), ==, 0x11);
    qtest_quit(s);
    g_assert_true(g_file_get_contents(log, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "readb 0x103000"));
    g_assert_nonnull(strstr(text, "OK 0x11"));
    unlink(log);
    rmdir(dir);
}

static void test_cmdline_bad_option(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status = qtest_run_expect_fail("-no-such-option", &out, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err, "no-such-option"));
}

static void test_cmdline_device_help(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status = qtest_run_expect_fail("-M pc -device help", &out, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_cmpuint(strlen(out) + strlen(err), >, 0);
}

/* -machine TYPE,help lists that machine's properties, not the machines. */
static void test_cmdline_machine_type_help(void)
{
    g_autofree char *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;
    int status = qtest_run_expect_fail("-machine pc,help", &out, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_true(g_str_has_prefix(out, "pc-i440fx-8.2-machine options:\n"));
    g_assert_nonnull(strstr(out, "\n  kernel=<str>\n"));
    g_assert_null(strstr(out, "Supported machines"));

    status = qtest_run_expect_fail("-machine nosuch,help", &out2, &err2);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    g_assert_nonnull(strstr(err2, "-machine nosuch,help: unsupported machine "
                                  "type 'nosuch'"));
}

static void test_cmdline_machine_help(void)
{
    g_autofree char *out = NULL, *err = NULL;
    int status = qtest_run_expect_fail("-M help", &out, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_nonnull(strstr(out, "pc"));
}

static void assert_ok(const char *line)
{
    g_autofree char *reply = qtest_raw_cmd(qts, line);

    g_test_message("'%s' -> '%.40s'", line, reply);
    g_assert_true(g_str_has_prefix(reply, "OK"));
}

static void test_wrapping_addresses(void)
{
    /* Accesses at the top of the address space must not wrap or crash. */
    assert_ok("readq 0xffffffffffffffff");
    assert_ok("read 0xfffffffffffffff0 0x20");
    assert_ok("memset 0xffffffffffffff00 0x1000 0");
    assert_ok("writeq 0xfffffffffffffffc 0x1122334455667788");
    assert_ok("b64write 0xffffffffffffffff 4 AAAAAA==");
    assert_ok("inl 0xfffe");
    assert_ok("outl 0xffff 1");
    /* Nothing spilled into low RAM. */
    g_assert_cmphex(qtest_readq(qts, 0), ==, 0);
    assert_still_answers();
}

static void test_irq_intercept(void)
{
    /* The pc MSI window shows each MSI as a GPIO line of /machine/msi. */
    QTestState *s = qtest_init("-M pc -m 64M");
    g_autofree char *bad = NULL, *set = NULL;

    bad = qtest_raw_cmd(s, "irq_intercept_in /no/such/device");
    g_assert_true(g_str_has_prefix(bad, "FAIL"));
    qtest_irq_intercept_in(s, "/machine/msi");
    g_assert_false(qtest_get_irq(s, 0x21));
    qtest_writel(s, 0xfee00000, 0x21);
    g_assert_true(qtest_get_irq(s, 0x21));
    g_assert_false(qtest_get_irq(s, 0x22));
    /* A second MSI on the same vector: still raised after the edge. */
    qtest_writel(s, 0xfee00000, 0x21);
    g_assert_true(qtest_get_irq(s, 0x21));
    set = qtest_raw_cmd(s, "set_irq_in /machine/msi unnamed 0x21 0");
    g_assert_cmpstr(set, ==, "OK");
    g_assert_false(qtest_get_irq(s, 0x21));
    qtest_quit(s);
}

/* Last: the binary must exit cleanly (no crash, no sanitizer report). */
static void test_clean_exit(void)
{
    qtest_quit(qts);
    qts = NULL;
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/qtest-protocol/errors/unknown-command",
                    test_unknown_command);
    g_test_add_func("/qtest-protocol/errors/bad-numbers", test_bad_numbers);
    g_test_add_func("/qtest-protocol/errors/wrong-arg-count",
                    test_wrong_arg_count);
    g_test_add_func("/qtest-protocol/errors/bad-buffers", test_bad_buffers);
    g_test_add_func("/qtest-protocol/errors/transfer-bounds",
                    test_transfer_bounds);
    g_test_add_func("/qtest-protocol/write/short-data-zero-fills",
                    test_short_write_zero_fills);
    g_test_add_func("/qtest-protocol/lines/blank-ignored",
                    test_blank_lines_ignored);
    g_test_add_func("/qtest-protocol/endianness/pc-is-little",
                    test_endianness);
    g_test_add_func("/qtest-protocol/clock/step-and-set-exact", test_clock);
    g_test_add_func("/cmdline/device/unknown-exits-1",
                    test_cmdline_unknown_device);
    g_test_add_func("/cmdline/option/unknown-exits-1",
                    test_cmdline_bad_option);
    g_test_add_func("/cmdline/accel/unknown-names-option",
                    test_cmdline_unknown_accel);
    g_test_add_func("/cmdline/chardev/errors-exit-1",
                    test_cmdline_chardev_errors);
    g_test_add_func("/cmdline/qtest-log/records-traffic", test_qtest_log);
    g_test_add_func("/cmdline/device/help-lists", test_cmdline_device_help);
    g_test_add_func("/cmdline/machine/type-help-lists-properties",
                    test_cmdline_machine_type_help);
    g_test_add_func("/cmdline/machine/help-lists-pc",
                    test_cmdline_machine_help);
    g_test_add_func("/qtest-protocol/edges/wrapping-addresses",
                    test_wrapping_addresses);
    g_test_add_func("/qtest-protocol/irq/intercept-in-reports-lines",
                    test_irq_intercept);
    g_test_add_func("/qtest-protocol/exit/clean-after-sigterm",
                    test_clean_exit);

    qts = qtest_init("-M pc -m 64M");
    ret = g_test_run();
    qtest_quit(qts);
    return ret;
}
