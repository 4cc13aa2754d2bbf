/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -cpu host options: parsing, and what they do to CPUID entries.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-cpu.h"
#include "qapi/error.h"

static X86CPUConfig parse(const char *opts)
{
    X86CPUConfig cfg;

    x86_cpu_config_init(&cfg);
    g_assert_true(x86_cpu_parse_options(&cfg, "host", opts, &error_abort));
    return cfg;
}

static void test_parse(void)
{
    X86CPUConfig cfg = parse("kvm=off,pmu=off,migratable=off,-vmx,+avx2,"
                             "x2apic=on,sse4_2=off,avx2=off");
    Error *err = NULL;

    g_assert_false(cfg.kvm);
    g_assert_false(cfg.pmu);
    g_assert_false(cfg.migratable);
    /* avx2 was turned on, then off: the last word wins. */
    g_assert_cmpuint(cfg.nr_set, ==, 1);
    g_assert_cmpstr(cfg.set[0]->name, ==, "x2apic");
    g_assert_cmpuint(cfg.nr_clear, ==, 3);

    x86_cpu_config_init(&cfg);
    g_assert_false(x86_cpu_parse_options(&cfg, "host", "frobnicate=on",
                                         &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Property 'host-x86_64-cpu.frobnicate' not found");
    error_free(err);
    err = NULL;
    g_assert_false(x86_cpu_parse_options(&cfg, "host", "pmu=maybe", &err));
    error_free(err);
    err = NULL;
    g_assert_false(x86_cpu_parse_options(&cfg, "host", "+avx=on", &err));
    error_free(err);
    /* Capability-MSR features: on is what KVM does, off is refused. */
    err = NULL;
    x86_cpu_config_init(&cfg);
    g_assert_true(x86_cpu_parse_options(&cfg, "qemu64", "mds-no=on,"
                                        "vmx-exit-load-efer=on,arat=on",
                                        &error_abort));
    g_assert_false(x86_cpu_parse_options(&cfg, "qemu64", "ssb-no=off",
                                         &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "ssb-no=off"));
    error_free(err);
    err = NULL;
    g_assert_nonnull(x86_cpu_feature_find("sse4.1"));
    g_assert_true(x86_cpu_feature_find("sse4_1") ==
                  x86_cpu_feature_find("sse4.1"));
    g_assert_true(x86_cpu_feature_find("kvm_pv_eoi") ==
                  x86_cpu_feature_find("kvm-pv-eoi"));
}

static void test_apply(void)
{
    X86CPUConfig def = parse(""), cfg = parse("kvm=off,pmu=off,-vmx,-avx2,"
                                              "-kvm-pv-eoi");
    uint32_t leaf1[4] = { 0x000906ea, 0, 0xffffffff, 0xffffffff };
    uint32_t leafa[4] = { 0x07300404, 0xff, 0, 0x603 };
    uint32_t leaf7[4] = { 0, 0xffffffff, 0xffffffff, 0xffffffff };
    uint32_t leaf7_1[4] = { 0xffffffff, 0, 0, 0 };
    uint32_t inv[4] = { 0, 0, 0, 0x100 };
    uint32_t copy[4];

    /* Defaults change nothing but invtsc (migratable=on). */
    memcpy(copy, leaf1, sizeof(copy));
    g_assert_true(x86_cpu_apply_cpuid(&def, 1, 0, copy));
    g_assert_cmpmem(copy, 16, leaf1, 16);
    g_assert_true(x86_cpu_apply_cpuid(&def, 0x40000000, 0, copy));
    g_assert_true(x86_cpu_apply_cpuid(&def, 0x80000007, 0, inv));
    g_assert_cmphex(inv[3], ==, 0);

    /* kvm=off: the KVM leaves go. */
    g_assert_false(x86_cpu_apply_cpuid(&cfg, 0x40000000, 0, copy));
    g_assert_false(x86_cpu_apply_cpuid(&cfg, 0x40000001, 0, copy));
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 0x80000000, 0, copy));
    /* pmu=off: leaf 0xA empty, PDCM gone; -vmx clears ECX bit 5. */
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 0xa, 0, leafa));
    g_assert_cmphex(leafa[0] | leafa[1] | leafa[2] | leafa[3], ==, 0);
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 1, 0, leaf1));
    g_assert_cmphex(leaf1[2], ==, 0xffffffff & ~(1u << 15) & ~(1u << 5));
    g_assert_cmphex(leaf1[3], ==, 0xffffffff);
    /* -avx2 is leaf 7 subleaf 0 EBX bit 5, not subleaf 1. */
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 7, 1, leaf7_1));
    g_assert_cmphex(leaf7_1[0], ==, 0xffffffff);
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 7, 0, leaf7));
    g_assert_cmphex(leaf7[1], ==, 0xffffffff & ~(1u << 5));
    g_assert_cmphex(leaf7[2], ==, 0xffffffff);
    /* +feature never fabricates a bit the host lacks. */
    cfg = parse("+avx512f");
    leaf7[1] = 0;
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 7, 0, leaf7));
    g_assert_cmphex(leaf7[1], ==, 0);
}

/* qemu64: the host's bits outside the model's set are gone. */
static void test_named_model(void)
{
    X86CPUConfig cfg;
    uint32_t leaf1[4] = { 0, 0, 0xffffffff, 0xffffffff };
    uint32_t leaf7[4] = { 0, 0xffffffff, 0, 0 };
    uint32_t ext[4] = { 0, 0, 0xffffffff, 0xffffffff };

    x86_cpu_config_init(&cfg);
    g_assert_true(x86_cpu_parse_options(&cfg, "qemu64", "+avx2,svm=off",
                                        &error_abort));
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 1, 0, leaf1));
    /* ECX: pni (0), cx16 (13), hypervisor (31) and OSXSAVE (27, the
     * OS's to set); every other bit, named or not, is gone. */
    g_assert_cmphex(leaf1[2], ==, (1u << 0) | (1u << 13) | (1u << 31) |
                    (1u << 27));
    g_assert_true(leaf1[3] & (1u << 25));       /* sse */
    g_assert_false(leaf1[3] & (1u << 28));      /* ht */
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 7, 0, leaf7));
    g_assert_cmphex(leaf7[1], ==, 1u << 5);     /* just the +avx2 */
    g_assert_true(x86_cpu_apply_cpuid(&cfg, 0x80000001, 0, ext));
    /* lahf-lm stays, svm was turned off; syscall, nx, lm stay. */
    g_assert_cmphex(ext[2], ==, 1u << 0);
    g_assert_cmphex(ext[3], ==, (1u << 11) | (1u << 20) | (1u << 29));
    g_assert_null(x86_cpu_model_features("host"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/x86-cpu/parse", test_parse);
    g_test_add_func("/x86-cpu/apply", test_apply);
    g_test_add_func("/x86-cpu/named-model", test_named_model);
    return g_test_run();
}
