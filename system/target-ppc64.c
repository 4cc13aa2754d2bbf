/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conduit-system-ppc64: the target's name.  Its only accelerator is
 * qtest, which runs no vCPUs, so there is no CPU model to offer.
 */
#include "qemu/osdep.h"
#include "system/target-info.h"

static const char *const ppc64_cpu_models[] = { NULL };

static const TargetInfo ppc64_target = {
    .arch = "ppc64",
    .cpu_models = ppc64_cpu_models,
};

static void __attribute__((constructor)) target_ppc64_register(void)
{
    target_info_register(&ppc64_target);
}
