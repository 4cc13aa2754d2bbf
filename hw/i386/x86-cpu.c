/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 -cpu options and the CPUID changes they make; see
 * include/hw/i386/x86-cpu.h.  Bit positions from the Intel SDM vol. 2A
 * (CPUID), AMD APM vol. 3 (E.1) and Linux's KVM paravirt ABI.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-cpu.h"
#include "qemu/option.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "qom/object.h"

#define KVM_CPUID_SIGNATURE 0x40000000u
#define KVM_CPUID_LAST 0x400000ffu
#define CPUID_1_ECX_PDCM_BIT 15
#define CPUID_80000007_EDX_INVTSC_BIT 8

#define F1C(n, b) { n, 1, 0, X86_ECX, b }
#define F1D(n, b) { n, 1, 0, X86_EDX, b }
#define F7B(n, b) { n, 7, 0, X86_EBX, b }
#define F7C(n, b) { n, 7, 0, X86_ECX, b }
#define F7D(n, b) { n, 7, 0, X86_EDX, b }
#define FXC(n, b) { n, 0x80000001, 0, X86_ECX, b }
#define FXD(n, b) { n, 0x80000001, 0, X86_EDX, b }
#define FKVM(n, b) { n, 0x40000001, 0, X86_EAX, b }

static const X86FeatureBit x86_features[] = {
    F1C("pni", 0), F1C("pclmulqdq", 1), F1C("dtes64", 2),
    F1C("monitor", 3), F1C("ds-cpl", 4), F1C("vmx", 5), F1C("smx", 6),
    F1C("est", 7), F1C("tm2", 8), F1C("ssse3", 9), F1C("cid", 10),
    F1C("fma", 12), F1C("cx16", 13), F1C("xtpr", 14), F1C("pdcm", 15),
    F1C("pcid", 17), F1C("dca", 18), F1C("sse4.1", 19), F1C("sse4.2", 20),
    F1C("x2apic", 21), F1C("movbe", 22), F1C("popcnt", 23),
    F1C("tsc-deadline", 24), F1C("aes", 25), F1C("xsave", 26),
    F1C("avx", 28), F1C("f16c", 29), F1C("rdrand", 30),
    F1C("hypervisor", 31),
    F1D("fpu", 0), F1D("vme", 1), F1D("de", 2), F1D("pse", 3), F1D("tsc", 4),
    F1D("msr", 5), F1D("pae", 6), F1D("mce", 7), F1D("cx8", 8),
    F1D("apic", 9), F1D("sep", 11), F1D("mtrr", 12), F1D("pge", 13),
    F1D("mca", 14), F1D("cmov", 15), F1D("pat", 16), F1D("pse36", 17),
    F1D("pn", 18), F1D("clflush", 19), F1D("ds", 21), F1D("acpi", 22),
    F1D("mmx", 23), F1D("fxsr", 24), F1D("sse", 25), F1D("sse2", 26),
    F1D("ss", 27), F1D("ht", 28), F1D("tm", 29), F1D("ia64", 30),
    F1D("pbe", 31),
    F7B("fsgsbase", 0), F7B("tsc-adjust", 1), F7B("bmi1", 3), F7B("hle", 4),
    F7B("avx2", 5), F7B("smep", 7), F7B("bmi2", 8), F7B("erms", 9),
    F7B("invpcid", 10), F7B("rtm", 11), F7B("mpx", 14), F7B("avx512f", 16),
    F7B("avx512dq", 17), F7B("rdseed", 18), F7B("adx", 19), F7B("smap", 20),
    F7B("avx512ifma", 21), F7B("clflushopt", 23), F7B("clwb", 24),
    F7B("avx512pf", 26), F7B("avx512er", 27), F7B("avx512cd", 28),
    F7B("sha-ni", 29), F7B("avx512bw", 30), F7B("avx512vl", 31),
    F7C("avx512vbmi", 1), F7C("umip", 2), F7C("pku", 3),
    F7C("avx512vbmi2", 6), F7C("gfni", 8), F7C("vaes", 9),
    F7C("vpclmulqdq", 10), F7C("avx512vnni", 11), F7C("avx512bitalg", 12),
    F7C("avx512-vpopcntdq", 14), F7C("la57", 16), F7C("rdpid", 22),
    F7C("cldemote", 25), F7C("movdiri", 27), F7C("movdir64b", 28),
    F7D("avx512-4vnniw", 2), F7D("avx512-4fmaps", 3), F7D("fsrm", 4),
    F7D("md-clear", 10), F7D("serialize", 14), F7D("tsx-ldtrk", 16),
    F7D("spec-ctrl", 26), F7D("stibp", 27), F7D("flush-l1d", 28),
    F7D("arch-capabilities", 29), F7D("core-capability", 30),
    F7D("ssbd", 31),
    FXC("lahf-lm", 0), FXC("cmp-legacy", 1), FXC("svm", 2),
    FXC("extapic", 3), FXC("cr8legacy", 4), FXC("abm", 5), FXC("sse4a", 6),
    FXC("misalignsse", 7), FXC("3dnowprefetch", 8), FXC("osvw", 9),
    FXC("ibs", 10), FXC("xop", 11), FXC("skinit", 12), FXC("wdt", 13),
    FXC("lwp", 15), FXC("fma4", 16), FXC("tce", 17), FXC("nodeid-msr", 19),
    FXC("tbm", 21), FXC("topoext", 22), FXC("perfctr-core", 23),
    FXC("perfctr-nb", 24),
    FXD("syscall", 11), FXD("nx", 20), FXD("mmxext", 22),
    FXD("fxsr-opt", 25), FXD("pdpe1gb", 26), FXD("rdtscp", 27),
    FXD("lm", 29), FXD("3dnowext", 30), FXD("3dnow", 31),
    { "arat", 6, 0, X86_EAX, 2 },
    F7B("sgx", 2), F7B("fdp-excptn-only", 6), F7B("zero-fcs-fds", 13),
    F7B("pcommit", 22), F7B("intel-pt", 25),
    F7C("waitpkg", 5), F7C("bus-lock-detect", 24), F7C("sgxlc", 30),
    F7C("pks", 31),
    F7D("avx512-vp2intersect", 8), F7D("pconfig", 18), F7D("arch-lbr", 19),
    F7D("avx512-fp16", 23), F7D("amx-bf16", 22), F7D("amx-tile", 24),
    F7D("amx-int8", 25),
    FXC("mwaitx", 29),
    { "invtsc", 0x80000007, 0, X86_EDX, 8 },
    { "clzero", 0x80000008, 0, X86_EBX, 0 },
    { "xsaveerptr", 0x80000008, 0, X86_EBX, 2 },
    { "wbnoinvd", 0x80000008, 0, X86_EBX, 9 },
    { "ibrs", 0x80000008, 0, X86_EBX, 14 },
    { "stibp-always-on", 0x80000008, 0, X86_EBX, 17 },
    { "amd-no-ssb", 0x80000008, 0, X86_EBX, 26 },
    { "amd-psfd", 0x80000008, 0, X86_EBX, 28 },
    { "npt", 0x8000000a, 0, X86_EDX, 0 },
    { "lbrv", 0x8000000a, 0, X86_EDX, 1 },
    { "svm-lock", 0x8000000a, 0, X86_EDX, 2 },
    { "nrip-save", 0x8000000a, 0, X86_EDX, 3 },
    { "tsc-scale", 0x8000000a, 0, X86_EDX, 4 },
    { "vmcb-clean", 0x8000000a, 0, X86_EDX, 5 },
    { "flushbyasid", 0x8000000a, 0, X86_EDX, 6 },
    { "decodeassists", 0x8000000a, 0, X86_EDX, 7 },
    { "pause-filter", 0x8000000a, 0, X86_EDX, 10 },
    { "pfthreshold", 0x8000000a, 0, X86_EDX, 12 },
    { "avic", 0x8000000a, 0, X86_EDX, 13 },
    { "v-vmsave-vmload", 0x8000000a, 0, X86_EDX, 15 },
    { "vgif", 0x8000000a, 0, X86_EDX, 16 },
    { "vnmi", 0x8000000a, 0, X86_EDX, 25 },
    { "svme-addr-chk", 0x8000000a, 0, X86_EDX, 28 },
    { "ibpb", 0x80000008, 0, X86_EBX, 12 },
    { "amd-stibp", 0x80000008, 0, X86_EBX, 15 },
    { "amd-ssbd", 0x80000008, 0, X86_EBX, 24 },
    { "virt-ssbd", 0x80000008, 0, X86_EBX, 25 },
    { "xsaveopt", 0xd, 1, X86_EAX, 0 },
    { "xsavec", 0xd, 1, X86_EAX, 1 },
    { "xgetbv1", 0xd, 1, X86_EAX, 2 },
    { "xsaves", 0xd, 1, X86_EAX, 3 },
    FKVM("kvmclock", 0), FKVM("kvm-nopiodelay", 1), FKVM("kvm-mmu", 2),
    FKVM("kvm-asyncpf", 4), FKVM("kvm-steal-time", 5),
    FKVM("kvm-pv-eoi", 6), FKVM("kvm-pv-unhalt", 7),
    FKVM("kvm-pv-tlb-flush", 9), FKVM("kvm-asyncpf-vmexit", 10),
    FKVM("kvm-pv-ipi", 11), FKVM("kvm-poll-control", 12),
    FKVM("kvm-pv-sched-yield", 13), FKVM("kvm-asyncpf-int", 14),
    FKVM("kvm-msi-ext-dest-id", 15), FKVM("kvmclock-stable-bit", 24),
};

/* QEMU's spellings with '_' are the same features. */
const X86FeatureBit *x86_cpu_feature_find(const char *name)
{
    g_autofree char *n = g_strdelimit(g_strdup(name), "_", '-');

    if (!strcmp(n, "sse4-1")) {
        strcpy(n, "sse4.1");
    } else if (!strcmp(n, "sse4-2")) {
        strcpy(n, "sse4.2");
    } else if (!strcmp(n, "sse3")) {
        strcpy(n, "pni");
    } else if (!strcmp(n, "pclmuldq")) {
        strcpy(n, "pclmulqdq");
    }
    for (size_t i = 0; i < G_N_ELEMENTS(x86_features); i++) {
        if (!strcmp(x86_features[i].name, n)) {
            return &x86_features[i];
        }
    }
    return NULL;
}

void x86_cpu_feature_foreach(void (*fn)(const X86FeatureBit *f, void *op),
                             void *opaque)
{
    for (size_t i = 0; i < G_N_ELEMENTS(x86_features); i++) {
        fn(&x86_features[i], opaque);
    }
}

/*
 * Named models: a feature set.  The vCPU keeps the host's vendor,
 * family, model and stepping; every feature of the table outside the
 * set is cleared (those the set names are kept where the host has
 * them).  qemu64 is QEMU's baseline x86-64 model, which libvirt's
 * host-model builds on (qemu64 plus the host's features).
 */
static const char *const x86_model_qemu64[] = {
    "fpu", "de", "pse", "tsc", "msr", "mce", "cx8", "pge", "cmov", "pat",
    "fxsr", "mmx", "sse", "sse2", "pae", "sep", "apic", "mtrr", "clflush",
    "pse36", "pni", "cx16", "lm", "syscall", "nx", "lahf-lm", "svm", NULL,
};

static const struct {
    const char *name;
    const char *const *features;
} x86_models[] = {
    { "qemu64", x86_model_qemu64 },
};

const char *const *x86_cpu_model_features(const char *model)
{
    for (size_t i = 0; i < G_N_ELEMENTS(x86_models); i++) {
        if (!strcmp(x86_models[i].name, model)) {
            return x86_models[i].features;
        }
    }
    return NULL;
}

static bool x86_model_has(const char *const *features, const char *name)
{
    for (; features && *features; features++) {
        if (!strcmp(*features, name)) {
            return true;
        }
    }
    return false;
}

/* Features of IA32_ARCH_CAPABILITIES and the VMX capability MSRs. */
static bool x86_cpu_msr_feature(const char *name)
{
    static const char *const arch_caps[] = {
        "rdctl-no", "ibrs-all", "rsba", "skip-l1dfl-vmentry", "ssb-no",
        "mds-no", "pschange-mc-no", "tsx-ctrl", "taa-no", "sbdr-ssdp-no",
        "fbsdp-no", "psdp-no", "fb-clear", "pbrsb-no", "gds-no", "rfds-no",
        NULL,
    };
    g_autofree char *n = g_strdelimit(g_strdup(name), "_", '-');

    return g_str_has_prefix(n, "vmx-") || g_strv_contains(arch_caps, n);
}

void x86_cpu_config_init(X86CPUConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->kvm = true;
    cfg->pmu = true;
    cfg->migratable = true;
}

static void x86_cpu_change(X86CPUConfig *cfg, const X86FeatureBit *f,
                           bool on)
{
    /* The last word on a feature wins: drop it from the other list. */
    const X86FeatureBit **other = on ? cfg->clear : cfg->set;
    unsigned *nr_other = on ? &cfg->nr_clear : &cfg->nr_set;
    const X86FeatureBit **list = on ? cfg->set : cfg->clear;
    unsigned *nr = on ? &cfg->nr_set : &cfg->nr_clear;

    for (unsigned i = 0; i < *nr_other; i++) {
        if (other[i] == f) {
            other[i] = other[--*nr_other];
            break;
        }
    }
    for (unsigned i = 0; i < *nr; i++) {
        if (list[i] == f) {
            return;
        }
    }
    list[(*nr)++] = f;
}

bool x86_cpu_parse_options(X86CPUConfig *cfg, const char *model,
                           const char *opts, Error **errp)
{
    g_auto(GStrv) items = g_strsplit(opts ? opts : "", ",", -1);

    cfg->model = g_intern_string(model);
    cfg->model_features = x86_cpu_model_features(model);

    for (char **it = items; *it; it++) {
        const char *item = *it, *eq = strchr(item, '=');
        g_autofree char *name = NULL;
        const X86FeatureBit *f;
        bool on;

        if (!*item) {
            continue;
        }
        if (item[0] == '+' || item[0] == '-') {
            name = g_strdup(item + 1);
            on = item[0] == '+';
        } else if (eq) {
            name = g_strndup(item, eq - item);
            if (!qemu_strtobool(eq + 1, &on, NULL)) {
                error_setg(errp, "Property '%s.%s' doesn't take value '%s'",
                           model, name, eq + 1);
                return false;
            }
        } else {
            /* A bare name turns the feature on, as in QEMU. */
            name = g_strdup(item);
            on = true;
        }
        if ((item[0] == '+' || item[0] == '-') && eq) {
            error_setg(errp, "'%s': a +/- feature takes no value", item);
            return false;
        }
        if (!strcmp(name, "kvm")) {
            cfg->kvm = on;
            continue;
        }
        if (!strcmp(name, "pmu")) {
            cfg->pmu = on;
            continue;
        }
        if (!strcmp(name, "migratable")) {
            cfg->migratable = on;
            continue;
        }
        f = x86_cpu_feature_find(name);
        if (!f && x86_cpu_msr_feature(name)) {
            /*
             * Reported through a capability MSR, not CPUID: KVM gives the
             * guest the host's value, so "on" is what happens anyway and
             * "off" cannot be honoured.
             */
            if (!on) {
                error_setg(errp, "%s=off is not supported: KVM reports the "
                           "host's %s capability MSR to the guest", name,
                           g_str_has_prefix(name, "vmx-") ? "VMX" :
                           "IA32_ARCH_CAPABILITIES");
                return false;
            }
            continue;
        }
        if (!f) {
            error_setg(errp, "Property '%s-x86_64-cpu.%s' not found", model,
                       name);
            error_append_hint(errp, "Conduit's vCPU is the host's CPU; it "
                              "takes kvm=, pmu=, migratable= and QEMU's "
                              "CPUID feature names (qom-list-properties "
                              "host-x86_64-cpu lists them).\n");
            return false;
        }
        if (cfg->nr_set >= X86_CPU_MAX_FEATURE_CHANGES ||
            cfg->nr_clear >= X86_CPU_MAX_FEATURE_CHANGES) {
            error_setg(errp, "too many CPU feature changes");
            return false;
        }
        x86_cpu_change(cfg, f, on);
    }
    return true;
}

bool x86_cpu_feature_in(const X86FeatureBit *f, uint32_t function,
                        uint32_t index)
{
    /* Leaves 1 and 0x800000xx ignore the subleaf. */
    return f->leaf == function &&
           (f->subleaf == index || (function != 7 && function != 0xd));
}

/* The registers that hold only feature bits (SDM, APM). */
static const struct {
    uint32_t leaf, subleaf;
    X86Reg reg;
    uint32_t keep;              /* bits that are not features to mask */
} x86_feature_regs[] = {
    { 1, 0, X86_ECX, (1u << 27) | (1u << 31) },     /* OSXSAVE, hypervisor */
    { 1, 0, X86_EDX, 0 },
    { 7, 0, X86_EBX, 0 },
    { 7, 0, X86_ECX, 1u << 4 },                     /* OSPKE */
    { 7, 0, X86_EDX, 0 },
    { 0xd, 1, X86_EAX, 0 },
    { 0x80000001, 0, X86_ECX, 0 },
    { 0x80000001, 0, X86_EDX, 0 },
    { 0x80000007, 0, X86_EDX, 0 },
    { 0x80000008, 0, X86_EBX, 0 },
};

/* A named model: each feature register keeps only the model's bits. */
static void x86_cpu_apply_model(const X86CPUConfig *cfg, uint32_t function,
                                uint32_t index, uint32_t regs[4])
{
    for (size_t r = 0; r < G_N_ELEMENTS(x86_feature_regs); r++) {
        uint32_t allowed = x86_feature_regs[r].keep;

        if (x86_feature_regs[r].leaf != function ||
            (x86_feature_regs[r].subleaf != index &&
             (function == 7 || function == 0xd))) {
            continue;
        }
        for (size_t i = 0; i < G_N_ELEMENTS(x86_features); i++) {
            const X86FeatureBit *f = &x86_features[i];
            bool keep = x86_model_has(cfg->model_features, f->name);

            for (unsigned j = 0; !keep && j < cfg->nr_set; j++) {
                keep = cfg->set[j] == f;
            }
            if (keep && f->leaf == function &&
                f->reg == x86_feature_regs[r].reg &&
                x86_cpu_feature_in(f, function, index)) {
                allowed |= 1u << f->bit;
            }
        }
        regs[x86_feature_regs[r].reg] &= allowed;
    }
}

bool x86_cpu_apply_cpuid(const X86CPUConfig *cfg, uint32_t function,
                         uint32_t index, uint32_t regs[4])
{
    if (!cfg->kvm && function >= KVM_CPUID_SIGNATURE &&
        function <= KVM_CPUID_LAST) {
        return false;
    }
    if (!cfg->pmu) {
        if (function == 0xa) {
            regs[0] = regs[1] = regs[2] = regs[3] = 0;
        }
        /* No PMU: no perfmon capabilities MSR either. */
        if (function == 1) {
            regs[X86_ECX] &= ~(1u << CPUID_1_ECX_PDCM_BIT);
        }
    }
    if (cfg->model_features) {
        x86_cpu_apply_model(cfg, function, index, regs);
    }
    if (cfg->migratable && function == 0x80000007) {
        regs[X86_EDX] &= ~(1u << CPUID_80000007_EDX_INVTSC_BIT);
    }
    for (unsigned i = 0; i < cfg->nr_clear; i++) {
        if (x86_cpu_feature_in(cfg->clear[i], function, index)) {
            regs[cfg->clear[i]->reg] &= ~(1u << cfg->clear[i]->bit);
        }
    }
    /*
     * A forced-on bit is a request, not a fabrication: the entry already
     * holds what KVM and the host support, so set stays set and an
     * unsupported one stays clear (kvm-x86.c warns about it).
     */
    return true;
}

static X86CPUConfig x86_cmdline_cpu;
static bool x86_cmdline_cpu_ready;

X86CPUConfig *x86_cpu_cmdline_config(void)
{
    if (!x86_cmdline_cpu_ready) {
        x86_cpu_config_init(&x86_cmdline_cpu);
        x86_cmdline_cpu_ready = true;
    }
    return &x86_cmdline_cpu;
}

/*
 * The CPU types as QOM shows them to management tools: what -cpu host
 * and -cpu max take, listed by qom-list-properties.  libvirt asks for
 * max-x86_64-cpu's properties only when qom-list-types names it, as it
 * does a concrete type; finding "migratable" there it offers
 * hostPassthroughMigratable, which is what makes virt-install choose
 * host-passthrough.  They are not user-creatable (object-add refuses
 * them): Conduit has no CPU objects to set them on, -cpu is the way.
 */
#define TYPE_X86_CPU "x86_64-cpu"

static bool x86_cpu_prop_get(Object *obj, Error **errp)
{
    return false;
}

static bool x86_cpu_prop_set(Object *obj, bool value, Error **errp)
{
    error_setg(errp, "vCPU properties are set with -cpu host,NAME=on|off");
    return false;
}

static void x86_cpu_add_feature_prop(const X86FeatureBit *f, void *opaque)
{
    object_class_property_add_bool(opaque, f->name, x86_cpu_prop_get,
                                   x86_cpu_prop_set);
}

static void x86_cpu_class_init(ObjectClass *oc, void *data)
{
    static const char *const own[] = { "kvm", "pmu", "migratable" };

    for (size_t i = 0; i < G_N_ELEMENTS(own); i++) {
        object_class_property_add_bool(oc, own[i], x86_cpu_prop_get,
                                       x86_cpu_prop_set);
    }
    x86_cpu_feature_foreach(x86_cpu_add_feature_prop, oc);
}

static const TypeInfo x86_cpu_types[] = {
    {
        .name = TYPE_X86_CPU,
        .parent = TYPE_OBJECT,
        .class_init = x86_cpu_class_init,
        .abstract = true,
    }, {
        .name = "host-" TYPE_X86_CPU,
        .parent = TYPE_X86_CPU,
    }, {
        .name = "max-" TYPE_X86_CPU,
        .parent = TYPE_X86_CPU,
    }, {
        .name = "qemu64-" TYPE_X86_CPU,
        .parent = TYPE_X86_CPU,
    },
};

DEFINE_TYPES(x86_cpu_types)
