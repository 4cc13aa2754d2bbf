/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vfio-user-nvme server as a child of a test program: see
 * server-process.h.
 */
#include "qemu/osdep.h"
#include <sys/prctl.h>
#include <sys/wait.h>
#include "tests/exe-wrapper.h"
#include "server-process.h"

static void vu_server_child_setup(gpointer data)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
}

void vu_server_start(VuServer *s, const char *bin, const char *args,
                     gint64 wait_us)
{
    g_autoptr(GError) gerr = NULL;
    g_autofree char *cmd = NULL;
    g_autofree char *wrapped = NULL;
    g_auto(GStrv) argv = NULL;
    gint64 deadline = g_get_monotonic_time() + wait_us;

    s->dir = g_dir_make_tmp("vu-server-XXXXXX", &gerr);
    g_assert_no_error(gerr);
    s->sock = g_build_filename(s->dir, "nvme.sock", NULL);
    cmd = g_strdup_printf("%s --socket %s %s", bin, s->sock,
                          args ? args : "");
    /* Under make check-ppc64le the server runs through qemu-user too. */
    wrapped = test_wrap_command(g_strstrip(cmd));
    argv = g_strsplit(wrapped, " ", -1);
    g_assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                vu_server_child_setup, NULL, &s->pid,
                                &gerr));
    g_assert_no_error(gerr);
    while (!g_file_test(s->sock, G_FILE_TEST_EXISTS)) {
        int status;

        g_assert_cmpint(waitpid(s->pid, &status, WNOHANG), ==, 0);
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(2000);
    }
}

void vu_server_stop(VuServer *s)
{
    int status;

    g_assert_cmpint(kill(s->pid, SIGTERM), ==, 0);
    g_assert_cmpint(waitpid(s->pid, &status, 0), ==, s->pid);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    g_assert_false(g_file_test(s->sock, G_FILE_TEST_EXISTS));
    g_spawn_close_pid(s->pid);
    g_free(s->sock);
    rmdir(s->dir);
    g_free(s->dir);
}
