/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util/fd-owner.c: a number names an fd only if it was passed to the
 * process and no backend owns it yet.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/fd-owner.h"

static void test_ownership(void)
{
    int passed[2], later[2];
    Error *err = NULL;

    g_assert_cmpint(pipe(passed), ==, 0);
    /* What is open now counts as passed to us. */
    qemu_fd_note_inherited();
    g_assert_cmpint(pipe(later), ==, 0);

    g_assert_true(qemu_fd_check_number(passed[0], &error_abort));
    /* Opened after start-up: ours. */
    g_assert_false(qemu_fd_check_number(later[0], &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "Conduit opened itself"));
    error_free(err);
    err = NULL;
    /* stdio and closed fds. */
    g_assert_false(qemu_fd_check_number(STDERR_FILENO, NULL));
    g_assert_false(qemu_fd_check_number(-1, NULL));
    /* One owner. */
    g_assert_true(qemu_fd_claim(passed[0], "netdev 'a'", &error_abort));
    g_assert_cmpstr(qemu_fd_owner(passed[0]), ==, "netdev 'a'");
    g_assert_false(qemu_fd_check_number(passed[0], &err));
    g_assert_nonnull(strstr(error_get_pretty(err),
                            "belongs to netdev 'a'"));
    error_free(err);
    err = NULL;
    g_assert_false(qemu_fd_claim(passed[0], "netdev 'b'", &err));
    error_free(err);
    qemu_fd_release(passed[0]);
    g_assert_null(qemu_fd_owner(passed[0]));
    g_assert_true(qemu_fd_check_number(passed[0], &error_abort));
    close(passed[1]);
    g_assert_false(qemu_fd_check_number(passed[1], NULL));
    close(passed[0]);
    close(later[0]);
    close(later[1]);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/fd-owner/ownership", test_ownership);
    return g_test_run();
}
