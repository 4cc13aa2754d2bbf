/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: -machine and -device option strings.  The input is
 * "MACHINE-OPTS\nDEVICE-OPTS": the first line is parsed as -machine does
 * (util/option.c, implied key "type") and each property is applied to a
 * fresh, not yet initialised pc machine object; the second line is parsed
 * as -device does (implied key "driver") and goes through
 * qdev_device_add() on a pc machine built under the qtest accelerator.
 * A device that comes up is removed again, so inputs do not pile up.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/main-loop.h"
#include "qemu/option.h"
#include "qom/object.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "pc-machine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static MachineClass *pc_class;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    pc_class = fuzz_pc_machine_init();
    return 0;
}

static void fuzz_machine(const char *str)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(str, "type", NULL);
    Object *ms;

    if (!opts) {
        return;
    }
    ms = object_new_with_class(OBJECT_CLASS(pc_class));
    for (size_t k = 0; k < qemu_opts_count(opts); k++) {
        const char *key = qemu_opts_key(opts, k);
        Error *err = NULL;

        if (!strcmp(key, "type") || !strcmp(key, "accel")) {
            continue;
        }
        if (!object_property_parse(ms, key, qemu_opts_value(opts, k), &err)) {
            error_free(err);
        }
    }
    object_unref(ms);
}

static void fuzz_device(const char *str)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(str, "driver", NULL);
    Error *err = NULL;
    DeviceState *dev;

    /* "help" prints the property table and exits the program. */
    if (!opts || qemu_opts_has_help(opts)) {
        return;
    }
    dev = qdev_device_add(opts, &err);
    if (!dev) {
        error_free(err);
        return;
    }
    if (!qdev_unplug(dev, &err)) {
        /* Not hot-unpluggable: tear it down as machine exit would. */
        error_free(err);
        object_unparent(OBJECT(dev));
    }
    main_loop_wait(true);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree char *text = g_strndup((const char *)data, size);
    char *nl = strchr(text, '\n');

    if (nl) {
        *nl = '\0';
        fuzz_device(nl + 1);
    }
    fuzz_machine(text);
    return 0;
}
