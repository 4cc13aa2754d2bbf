/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a system binary is built for.  Each target's file (target-x86_64.c,
 * target-ppc64.c), linked into that binary only, registers its TargetInfo
 * from a constructor; common code asks target_info().
 */
#ifndef SYSTEM_TARGET_INFO_H
#define SYSTEM_TARGET_INFO_H

#include <stdbool.h>
#include <glib.h>
#include "qemu/typedefs.h"

typedef struct TargetInfo {
    /* QEMU's name of the target architecture ("x86_64", "ppc64"). */
    const char *arch;
    /*
     * The -cpu models the binary accepts, NULL-terminated; empty when
     * the target has no accelerator that runs vCPUs.
     */
    const char *const *cpu_models;
    /*
     * -cpu MODEL,OPTS: the target's options after the model name; NULL
     * when it takes none.
     */
    bool (*parse_cpu_opts)(const char *model, const char *opts,
                           Error **errp);
    /*
     * query-cpu-definitions: the features of @model this host cannot
     * give (a new GPtrArray of names; NULL: none, or unknown without
     * KVM); and whether the model is the same on every host.
     */
    GPtrArray *(*cpu_unavailable_features)(const char *model);
    bool (*cpu_migration_safe)(const char *model);
} TargetInfo;

void target_info_register(const TargetInfo *info);
/* The registered target (a placeholder in unit tests that link none). */
const TargetInfo *target_info(void);

#endif
