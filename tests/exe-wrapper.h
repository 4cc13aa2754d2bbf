/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of a cross build (make check-ppc64le) run under meson's exe_wrapper,
 * qemu-user with 64 KiB pages, which meson test exports as
 * MESON_EXE_WRAPPER.  This host cannot exec the build's binaries by itself
 * (no binfmt_misc), so a test that starts conduit-system-*, vfio-user-nvme
 * or itself must go through the same wrapper.  Native builds: no wrapper,
 * nothing changes.
 */
#ifndef TESTS_EXE_WRAPPER_H
#define TESTS_EXE_WRAPPER_H

#include <stdbool.h>
#include <stdlib.h>
#include <glib.h>

/* The wrapper's command line ("qemu-ppc64le-static -p 65536"), or NULL. */
static inline const char *test_exe_wrapper(void)
{
    const char *w = g_getenv("MESON_EXE_WRAPPER");

    return w && *w ? w : NULL;
}

/* A shell-style command line, prefixed with the wrapper if there is one. */
static inline char *test_wrap_command(const char *cmd)
{
    const char *w = test_exe_wrapper();

    return w ? g_strdup_printf("%s %s", w, cmd) : g_strdup(cmd);
}

/*
 * g_test_trap_subprocess() re-executes the test binary, which cannot work
 * through a wrapper: there the test forks instead.  Use as
 *
 *     if (test_trap_child()) {
 *         ... what must fail or print ...;
 *         exit(0);
 *     }
 *     g_test_trap_assert_...();
 *
 * True in the child; false in the parent once the child has finished.
 */
static inline bool test_trap_child(void)
{
    if (!test_exe_wrapper()) {
        if (g_test_subprocess()) {
            return true;
        }
        g_test_trap_subprocess(NULL, 0, 0);
        return false;
    }
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    return g_test_trap_fork(0, 0);
    G_GNUC_END_IGNORE_DEPRECATIONS
}

#endif
