/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error objects: propagation, prefixes, hints and the special targets.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"

static bool fail_with(int code, Error **errp)
{
    error_setg(errp, "failed with %d", code);
    return false;
}

static void test_error_set_and_prepend(void)
{
    Error *err = NULL;

    g_assert_false(fail_with(3, &err));
    g_assert_nonnull(err);
    error_prepend(&err, "vfio %s: ", "0000:01:00.0");
    g_assert_cmpstr(error_get_pretty(err), ==, "vfio 0000:01:00.0: failed with 3");
    g_assert_cmpint(error_get_class(err), ==, ERROR_CLASS_GENERIC_ERROR);
    error_free(err);
}

static void test_error_null_is_ignored(void)
{
    g_assert_false(fail_with(1, NULL));
}

static void test_error_errno(void)
{
    Error *err = NULL;

    error_setg_errno(&err, ENOENT, "no such host device");
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "no such host device: No such file or directory");
    error_free(err);
}

static void test_error_hint_and_class(void)
{
    Error *err = NULL;

    error_set(&err, ERROR_CLASS_DEVICE_NOT_FOUND, "Device '%s' not found", "x");
    error_append_hint(&err, "Try %s\n", "query-pci");
    g_assert_cmpstr(error_get_hint(err), ==, "Try query-pci\n");
    g_assert_cmpstr(error_class_name(error_get_class(err)), ==,
                    "DeviceNotFound");
    error_free(err);
}

static bool guarded(Error **errp)
{
    ERRP_GUARD();

    fail_with(7, errp);
    if (*errp) {
        error_prepend(errp, "guarded: ");
        return false;
    }
    return true;
}

static void test_error_guard(void)
{
    Error *err = NULL;

    g_assert_false(guarded(NULL));
    g_assert_false(guarded(&err));
    g_assert_cmpstr(error_get_pretty(err), ==, "guarded: failed with 7");
    error_free(err);
}

static void test_error_first_wins(void)
{
    Error *err = NULL;
    Error *second = NULL;

    fail_with(1, &err);
    fail_with(2, &second);
    error_propagate(&err, second);
    g_assert_cmpstr(error_get_pretty(err), ==, "failed with 1");
    error_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/error/set-and-prepend", test_error_set_and_prepend);
    g_test_add_func("/error/null-is-ignored", test_error_null_is_ignored);
    g_test_add_func("/error/errno", test_error_errno);
    g_test_add_func("/error/hint-and-class", test_error_hint_and_class);
    g_test_add_func("/error/guard", test_error_guard);
    g_test_add_func("/error/first-wins", test_error_first_wins);
    return g_test_run();
}
