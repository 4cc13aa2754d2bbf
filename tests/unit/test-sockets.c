/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * UNIX socket helpers: listen/connect and SCM_RIGHTS fd passing.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include "qapi/error.h"
#include "qemu/sockets.h"

static int count_fds(void)
{
    g_autoptr(GDir) dir = g_dir_open("/proc/self/fd", 0, NULL);
    int n = 0;

    while (g_dir_read_name(dir)) {
        n++;
    }
    return n;
}

static void make_pair(int sv[2])
{
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
                    ==, 0);
}

static void test_fds_roundtrip(void)
{
    int sv[2], p[2], fds[4];
    size_t nfds = ARRAY_SIZE(fds);
    char buf[6] = { 0 };

    make_pair(sv);
    g_assert_cmpint(pipe(p), ==, 0);
    g_assert_cmpint(qemu_send_with_fds(sv[0], "hello", 6, p, 2,
                                       &error_abort), ==, 6);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 6, fds, &nfds,
                                       &error_abort), ==, 6);
    g_assert_cmpstr(buf, ==, "hello");
    g_assert_cmpuint(nfds, ==, 2);
    /* Received fds are new descriptors for the same pipe, close-on-exec. */
    g_assert_cmpint(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, !=, 0);
    g_assert_cmpint(write(fds[1], "x", 1), ==, 1);
    g_assert_cmpint(read(p[0], buf, 1), ==, 1);
    g_assert_cmpint(buf[0], ==, 'x');
    for (int i = 0; i < 2; i++) {
        close(fds[i]);
        close(p[i]);
        close(sv[i]);
    }
}

static void test_exact_length_and_eof(void)
{
    int sv[2];
    char buf[8];
    size_t nfds = 0;
    Error *err = NULL;

    make_pair(sv);
    /* Two sends, one receive of both: exact-length reassembly. */
    qemu_send_with_fds(sv[0], "abcd", 4, NULL, 0, &error_abort);
    qemu_send_with_fds(sv[0], "efgh", 4, NULL, 0, &error_abort);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 8, NULL, &nfds,
                                       &error_abort), ==, 8);
    g_assert_cmpmem(buf, 8, "abcdefgh", 8);
    /* End of file in the middle is an error, before the start is 0. */
    qemu_send_with_fds(sv[0], "xy", 2, NULL, 0, &error_abort);
    close(sv[0]);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 4, NULL, &nfds, &err), ==,
                    -1);
    error_free_or_abort(&err);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 4, NULL, &nfds, &err), ==,
                    0);
    g_assert_null(err);
    close(sv[1]);
}

static void test_surplus_fds_closed(void)
{
    int sv[2], p[2], fds[1] = { -1 };
    int before;
    size_t nfds = 1;
    int many[3];
    char buf[4];
    Error *err = NULL;

    make_pair(sv);
    g_assert_cmpint(pipe(p), ==, 0);
    many[0] = p[0];
    many[1] = p[1];
    many[2] = p[0];
    before = count_fds();
    g_assert_cmpint(qemu_send_with_fds(sv[0], "abc", 4, many, 3,
                                       &error_abort), ==, 4);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 4, fds, &nfds, &err), ==,
                    -1);
    error_free_or_abort(&err);
    g_assert_cmpuint(nfds, ==, 0);
    /* Nothing received was kept open. */
    g_assert_cmpint(count_fds(), ==, before);
    /* fds with no room at all. */
    nfds = 0;
    qemu_send_with_fds(sv[0], "abc", 4, many, 1, &error_abort);
    g_assert_cmpint(qemu_recv_with_fds(sv[1], buf, 4, NULL, &nfds, &err), ==,
                    -1);
    error_free_or_abort(&err);
    g_assert_cmpint(count_fds(), ==, before);
    for (int i = 0; i < 2; i++) {
        close(p[i]);
        close(sv[i]);
    }
}

static void test_send_errors(void)
{
    int sv[2];
    Error *err = NULL;

    make_pair(sv);
    close(sv[1]);
    /* A closed peer is an error, not SIGPIPE. */
    g_assert_cmpint(qemu_send_with_fds(sv[0], "abc", 3, NULL, 0, &err), ==,
                    -1);
    error_free_or_abort(&err);
    g_assert_cmpint(qemu_send_with_fds(sv[0], "abc", 0, NULL, 0, &err), ==,
                    -1);
    error_free_or_abort(&err);
    close(sv[0]);
}

static void test_listen_connect(void)
{
    g_autofree char *dir = g_dir_make_tmp("sockets-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "s", NULL);
    g_autofree char *file = g_build_filename(dir, "f", NULL);
    g_autofree char *longpath = g_strnfill(200, 'x');
    Error *err = NULL;
    int l, c, a;

    l = unix_listen_path(path, &error_abort);
    /* Only the final name exists: the temporary one was renamed. */
    {
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name = g_dir_read_name(d);

        g_assert_cmpstr(name, ==, "s");
        g_assert_null(g_dir_read_name(d));
    }
    c = unix_connect_path(path, &error_abort);
    a = accept(l, NULL, NULL);
    g_assert_cmpint(a, >=, 0);
    g_assert_cmpint(qemu_send_with_fds(c, "ping", 4, NULL, 0, &error_abort),
                    ==, 4);
    close(a);
    close(c);
    close(l);
    /* A stale socket file is replaced. */
    l = unix_listen_path(path, &error_abort);
    close(l);
    /* Anything else at the path is left alone. */
    g_assert_true(g_file_set_contents(file, "keep", -1, NULL));
    g_assert_cmpint(unix_listen_path(file, &err), ==, -1);
    error_free_or_abort(&err);
    g_assert_true(g_file_test(file, G_FILE_TEST_IS_REGULAR));
    g_assert_cmpint(unix_listen_path(longpath, &err), ==, -1);
    error_free_or_abort(&err);
    g_assert_cmpint(unix_listen_path("", &err), ==, -1);
    error_free_or_abort(&err);
    unlink(path);
    g_assert_cmpint(unix_connect_path(path, &err), ==, -1);
    error_free_or_abort(&err);
    unlink(file);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/sockets/fds/roundtrip", test_fds_roundtrip);
    g_test_add_func("/sockets/recv/exact-length-and-eof",
                    test_exact_length_and_eof);
    g_test_add_func("/sockets/recv/surplus-fds-closed",
                    test_surplus_fds_closed);
    g_test_add_func("/sockets/send/errors", test_send_errors);
    g_test_add_func("/sockets/unix/listen-connect", test_listen_connect);
    return g_test_run();
}
