/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The target a system binary registered (see target-info.h). */
#include "qemu/osdep.h"
#include "system/target-info.h"

static const char *const no_cpu_models[] = { NULL };
static const TargetInfo no_target = {
    .arch = "none",
    .cpu_models = no_cpu_models,
};
static const TargetInfo *registered;

void target_info_register(const TargetInfo *info)
{
    registered = info;
}

const TargetInfo *target_info(void)
{
    return registered ? registered : &no_target;
}
