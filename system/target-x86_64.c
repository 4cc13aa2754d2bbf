/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conduit-system-x86_64: the target's name, and its one CPU.  vCPUs run
 * under KVM with the CPUID that KVM supports on this host (less what
 * Conduit does not emulate), which is what QEMU calls "host"; "max" is
 * the same CPU under KVM, as in QEMU.
 */
#include "qemu/osdep.h"
#include "system/target-info.h"
#include "hw/i386/x86-cpu.h"

static const char *const x86_64_cpu_models[] = { "host", "max", "qemu64", NULL };

static bool x86_64_parse_cpu_opts(const char *model, const char *opts,
                                  Error **errp)
{
    return x86_cpu_parse_options(x86_cpu_cmdline_config(), model, opts,
                                 errp);
}

static const TargetInfo x86_64_target = {
    .arch = "x86_64",
    .cpu_models = x86_64_cpu_models,
    .parse_cpu_opts = x86_64_parse_cpu_opts,
    .cpu_unavailable_features = x86_cpu_unavailable_features,
    .cpu_migration_safe = x86_cpu_migration_safe,
};

static void __attribute__((constructor)) target_x86_64_register(void)
{
    target_info_register(&x86_64_target);
}
