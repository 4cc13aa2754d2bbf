/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -m slots=/maxmem= checks (hw/core/machine-mem.c): what QEMU refuses is
 * refused, with its texts; what it accepts is accepted.
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "qapi/error.h"
#include "qemu/option.h"

static void check(const char *arg, uint64_t size, const char *needle)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, "size", &error_abort);
    Error *err = NULL;
    bool ok = machine_memory_check(opts, size, &err);

    if (!needle) {
        g_assert_null(err);
        g_assert_true(ok);
        return;
    }
    g_assert_false(ok);
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), needle));
    error_free(err);
}

static void test_accepted(void)
{
    check("1G", 1ull << 30, NULL);
    check("1G,slots=0", 1ull << 30, NULL);
    check("1G,maxmem=1G", 1ull << 30, NULL);
    check("1G,slots=4,maxmem=4G", 1ull << 30, NULL);
    check("size=2G,slots=16,maxmem=8G", 2ull << 30, NULL);
}

static void test_refused(void)
{
    check("1G,slots=garbage", 1ull << 30, "Parameter 'slots' expects");
    check("1G,slots=-1", 1ull << 30, "Parameter 'slots' expects");
    check("1G,maxmem=lots", 1ull << 30, "Parameter 'maxmem' expects");
    check("2G,maxmem=1G", 2ull << 30,
          "maximum memory size (0x40000000) must be at least the initial "
          "memory size (0x80000000)");
    check("1G,slots=4", 1ull << 30, "missing 'maxmem' option");
    check("1G,maxmem=4G", 1ull << 30, "no hotplug slots were specified");
    check("1G,slots=1000,maxmem=4G", 1ull << 30, "is more than 256");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/machine-mem/accepted", test_accepted);
    g_test_add_func("/machine-mem/refused", test_refused);
    return g_test_run();
}
