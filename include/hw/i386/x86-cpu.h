/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -cpu host|max options for x86: the CPUID a passthrough guest sees is
 * the host's (as KVM supports it), changed as asked: kvm=off hides the
 * KVM signature leaves, pmu=off empties the performance-monitoring leaf,
 * migratable=on drops what cannot move between hosts (invtsc), and
 * "+feat"/"-feat"/"feat=on|off" set or clear named CPUID bits.  The
 * parser and x86_cpu_apply_cpuid() are pure; kvm-x86.c calls the latter
 * on every CPUID entry before KVM_SET_CPUID2.
 */
#ifndef HW_I386_X86_CPU_H
#define HW_I386_X86_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"

#define X86_CPU_MAX_FEATURE_CHANGES 128

typedef enum X86Reg {
    X86_EAX, X86_EBX, X86_ECX, X86_EDX,
} X86Reg;

typedef struct X86FeatureBit {
    const char *name;
    uint32_t leaf, subleaf;
    X86Reg reg;
    uint8_t bit;
} X86FeatureBit;

typedef struct X86CPUConfig {
    bool kvm;                   /* the KVM signature leaves (default on) */
    bool pmu;                   /* leaf 0xA (default on) */
    bool migratable;            /* drop non-migratable bits (default on) */
    /* The -cpu model ("host", "max", "qemu64"; NULL: not given). */
    const char *model;
    /* A named model's feature set (NULL for host/max: the host's). */
    const char *const *model_features;
    /* Named bits to force on (only where the host has them) or off. */
    const X86FeatureBit *set[X86_CPU_MAX_FEATURE_CHANGES];
    unsigned nr_set;
    const X86FeatureBit *clear[X86_CPU_MAX_FEATURE_CHANGES];
    unsigned nr_clear;
} X86CPUConfig;

/* The CPUID bit of a QEMU feature name ("avx2", "vmx", ...), or NULL. */
const X86FeatureBit *x86_cpu_feature_find(const char *name);
/* Calls fn for every name the table knows. */
void x86_cpu_feature_foreach(void (*fn)(const X86FeatureBit *f, void *op),
                             void *opaque);

void x86_cpu_config_init(X86CPUConfig *cfg);
/* A named model's features (NULL-terminated), NULL for host/max. */
const char *const *x86_cpu_model_features(const char *model);
/*
 * "kvm=off,pmu=off,-vmx,+avx2,x2apic=on,migratable=on" (after the model
 * name).  Unknown names and bad values are errors with QEMU's wording.
 */
bool x86_cpu_parse_options(X86CPUConfig *cfg, const char *model,
                           const char *opts, Error **errp);
/*
 * One CPUID entry (as KVM and the host support it) as the guest will see
 * it.  Returns false when the entry must be dropped (the KVM leaves with
 * kvm=off).  A forced-on bit is never fabricated: it stays as the host
 * has it (see x86_cpu_feature_in() to report what is missing).
 */
bool x86_cpu_apply_cpuid(const X86CPUConfig *cfg, uint32_t function,
                         uint32_t index, uint32_t regs[4]);

/* Whether @f lives in CPUID entry (@function, @index). */
bool x86_cpu_feature_in(const X86FeatureBit *f, uint32_t function,
                        uint32_t index);

typedef struct X86CpuidEntry {
    uint32_t function, index;
    uint32_t regs[4];
} X86CpuidEntry;

/*
 * The CPUID a single vCPU would get with @cfg (accel/kvm/kvm-x86.c), as
 * an array of X86CpuidEntry; NULL with errp set without KVM.
 */
GArray *kvm_x86_guest_cpuid(const X86CPUConfig *cfg, Error **errp);

/* query-cpu-definitions' view of a model (hw/i386/x86-cpu-qmp.c). */
GPtrArray *x86_cpu_unavailable_features(const char *model);
bool x86_cpu_migration_safe(const char *model);

/* The configuration -cpu gave this run. */
X86CPUConfig *x86_cpu_cmdline_config(void);

#endif
