/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qtest server in-process: commands go over a socketpair, the main
 * loop is pumped here.  Covers what the x86 qtests cannot: big-endian
 * targets, registered commands (rtas) and clock_step to a timer deadline.
 */
#include "qemu/osdep.h"
#include "system/qtest.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include <sys/socket.h>

static int client_fd;
static GString *rx;

/* Sends a line and pumps the loop until the reply line arrives. */
static char *cmd(const char *line)
{
    g_autofree char *out = g_strconcat(line, "\n", NULL);
    int spins;

    g_assert_cmpint(write(client_fd, out, strlen(out)), ==, strlen(out));
    for (spins = 0; spins < 100000; spins++) {
        char buf[4096];
        ssize_t n;
        char *nl = strchr(rx->str, '\n');

        if (nl) {
            char *reply = g_strndup(rx->str, nl - rx->str);
            g_string_erase(rx, 0, nl - rx->str + 1);
            return reply;
        }
        main_loop_wait(false);
        n = read(client_fd, buf, sizeof(buf));
        if (n > 0) {
            g_string_append_len(rx, buf, n);
        }
    }
    g_assert_not_reached();
}

static void assert_reply(const char *line, const char *expect)
{
    g_autofree char *r = cmd(line);

    g_assert_cmpstr(r, ==, expect);
}

static void test_little_endian(void)
{
    memory_set_target_big_endian(false);
    assert_reply("endianness", "OK little");
    assert_reply("writel 0x100 0x11223344", "OK");
    assert_reply("readb 0x100", "OK 0x44");
    assert_reply("readw 0x102", "OK 0x1122");
    assert_reply("read 0x100 4", "OK 0x44332211");
}

static void test_big_endian(void)
{
    memory_set_target_big_endian(true);
    assert_reply("endianness", "OK big");
    assert_reply("writel 0x200 0x11223344", "OK");
    assert_reply("read 0x200 4", "OK 0x11223344");
    assert_reply("readb 0x200", "OK 0x11");
    assert_reply("readw 0x202", "OK 0x3344");
    assert_reply("readl 0x200", "OK 0x11223344");
    assert_reply("writeq 0x208 0x0102030405060708", "OK");
    assert_reply("read 0x208 8", "OK 0x0102030405060708");
    assert_reply("readq 0x208", "OK 0x0102030405060708");
    assert_reply("writew 0x210 0xabcd", "OK");
    assert_reply("readb 0x210", "OK 0xab");
    memory_set_target_big_endian(false);
}

static bool rtas_cmd(int argc, char **argv, GString *reply, Error **errp)
{
    if (argc != 2 || strcmp(argv[1], "get-time-of-day")) {
        error_setg(errp, "rtas: unsupported call");
        return false;
    }
    g_string_append(reply, "0");
    return true;
}

static void test_registered_command(void)
{
    qtest_register_command("rtas", rtas_cmd);
    assert_reply("rtas get-time-of-day", "OK 0");
    assert_reply("rtas nope", "FAIL rtas: unsupported call");
    assert_reply("rtasx", "FAIL Unknown command 'rtasx'");
}

static int timer_hits;
static int64_t timer_seen;

static void timer_cb(void *opaque)
{
    timer_hits++;
    timer_seen = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void test_clock_step_to_deadline(void)
{
    QEMUTimer *t = timer_new_ns(QEMU_CLOCK_VIRTUAL, timer_cb, NULL);

    assert_reply("clock_step 10", "FAIL the virtual clock is not under "
                 "qtest control");
    qemu_clock_virtual_set_manual(true);
    timer_mod_ns(t, 5000);
    assert_reply("clock_step 100", "OK 100");
    g_assert_cmpint(timer_hits, ==, 0);
    /* No argument: to the next deadline, running the timer there. */
    assert_reply("clock_step", "OK 5000");
    g_assert_cmpint(timer_hits, ==, 1);
    g_assert_cmpint(timer_seen, ==, 5000);
    /* Nothing armed: the clock stays. */
    assert_reply("clock_step", "OK 5000");
    timer_mod_ns(t, 7000);
    assert_reply("clock_set 9000", "OK 9000");
    g_assert_cmpint(timer_hits, ==, 2);
    g_assert_cmpint(timer_seen, ==, 7000);
    timer_free(t);
}

int main(int argc, char **argv)
{
    MemoryRegion *ram = g_new0(MemoryRegion, 1);
    g_autofree char *spec = NULL;
    int sv[2];

    g_test_init(&argc, &argv, NULL);
    qemu_init_main_loop();
    bql_lock();
    g_assert_true(memory_region_init_ram(ram, NULL, "test-ram", 0x10000,
                                         &error_abort));
    memory_region_add_subregion(get_system_memory(), 0, ram);

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                    ==, 0);
    client_fd = sv[0];
    fcntl(client_fd, F_SETFL, O_NONBLOCK);
    rx = g_string_new(NULL);
    spec = g_strdup_printf("fd:%d", sv[1]);
    g_assert_true(qtest_server_init(spec, NULL, &error_abort));

    g_test_add_func("/qtest-server/endianness/little", test_little_endian);
    g_test_add_func("/qtest-server/endianness/big", test_big_endian);
    g_test_add_func("/qtest-server/command/registered-rtas",
                    test_registered_command);
    g_test_add_func("/qtest-server/clock/step-to-timer-deadline",
                    test_clock_step_to_deadline);
    return g_test_run();
}
