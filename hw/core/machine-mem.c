/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -m size=S,slots=N,maxmem=M: the checks QEMU makes before a machine
 * exists, with its error texts.  Conduit has no memory hot-plug, so the
 * slots and the maximum are only validated; a bad value is an error at
 * start-up, never a VM started as if it had not been given.
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "qapi/error.h"
#include "qemu/option.h"

/* QEMU's limit (ACPI_MAX_RAM_SLOTS). */
#define MACHINE_MAX_RAM_SLOTS 256

bool machine_memory_check(const QemuOpts *opts, uint64_t size, Error **errp)
{
    const char *slots_str = qemu_opt_get(opts, "slots");
    const char *maxmem_str = qemu_opt_get(opts, "maxmem");
    uint64_t slots = 0, maxmem = 0;

    if (slots_str && !qemu_strtou64(slots_str, &slots, NULL)) {
        error_setg(errp, "Parameter 'slots' expects a number");
        return false;
    }
    if (maxmem_str && (!qemu_strtosz_MiB(maxmem_str, &maxmem, NULL) ||
                       !maxmem)) {
        error_setg(errp, "Parameter 'maxmem' expects a size");
        error_append_hint(errp, "A size is a number with an optional "
                          "suffix: maxmem=4G.\n");
        return false;
    }
    if (slots > MACHINE_MAX_RAM_SLOTS) {
        error_setg(errp, "invalid -m option value: slots=%" PRIu64 " is more "
                   "than %d", slots, MACHINE_MAX_RAM_SLOTS);
        return false;
    }
    if (!maxmem_str) {
        if (slots_str && slots) {
            error_setg(errp, "invalid -m option value: missing 'maxmem' "
                       "option");
            return false;
        }
        return true;
    }
    if (size && maxmem < size) {
        error_setg(errp, "invalid value of maxmem: maximum memory size "
                   "(0x%" PRIx64 ") must be at least the initial memory "
                   "size (0x%" PRIx64 ")", maxmem, size);
        return false;
    }
    if (size && maxmem > size && !slots) {
        error_setg(errp, "invalid -m option value: maxmem was specified, "
                   "but no hotplug slots were specified");
        return false;
    }
    return true;
}
