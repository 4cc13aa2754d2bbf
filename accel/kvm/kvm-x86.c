/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The x86 half of the KVM accelerator, behind KVMArchOps (kvm-internal.h):
 * everything kvm-all.c must not know about the guest architecture.
 *
 *   VM      the TSS and identity-map pages, the in-kernel irqchip and PIT,
 *           and the CPUID KVM supports (read once);
 *   vCPU    the CPUID each vCPU sees (host-filtered, with the -smp
 *           topology), the reset state KVM created it with;
 *   reset   registers, segments, FPU, MSRs and MP state for the boot
 *           protocol of hw/i386/x86-boot.h (PVH, 64-bit Linux, or the
 *           reset vector);
 *   report  a register dump for a VM that cannot continue.
 *
 * New per-vCPU x86 state (MTRRs, migration's register get/set) belongs
 * here, in KVMArchVCPU and beside kvm_x86_reset_vcpu().
 */
#include "qemu/osdep.h"
#include <cpuid.h>
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "hw/boards.h"
#include "hw/i386/x86-boot.h"
#include "hw/i386/x86-cpu.h"
#include "hw/i386/topology.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

/* Below the pc machine's BIOS area; Intel needs both for real mode. */
#define KVM_TSS_ADDR 0xfeffd000
#define KVM_IDENTITY_MAP_ADDR 0xfeffc000

#define CPUID_1_ECX_CX16 (1u << 13)
#define CPUID_1_ECX_MONITOR (1u << 3)
#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_1_EDX_HTT (1u << 28)
#define CPUID_80000001_ECX_CMP_LEGACY (1u << 1)

#define MSR_IA32_CR_PAT 0x277
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_PAT_DEFAULT 0x0007040600070406ULL
#define MISC_ENABLE_FAST_STRING 1

/* VM-wide x86 state. */
struct KVMArchState {
    struct kvm_cpuid2 *cpuid;       /* KVM_GET_SUPPORTED_CPUID */
};

/* Per-vCPU x86 state. */
struct KVMArchVCPU {
    struct kvm_sregs reset_sregs;   /* as KVM created the vCPU */
};

/* ---- CPUID ------------------------------------------------------------ */

static bool kvm_get_supported_cpuid(KVMState *s, KVMArchState *x86,
                                    Error **errp)
{
    for (int n = 64; n <= 4096; n *= 2) {
        struct kvm_cpuid2 *c = g_malloc0(sizeof(*c) +
                                         n * sizeof(struct kvm_cpuid_entry2));
        c->nent = n;
        if (ioctl(s->fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
            x86->cpuid = c;
            return true;
        }
        g_free(c);
        if (errno != E2BIG) {
            break;
        }
    }
    error_setg_errno(errp, errno, "KVM_GET_SUPPORTED_CPUID");
    return false;
}

/* Leaf 0xB: subleaf 0 the SMT level, 1 the core level, then invalid. */
static void kvm_cpuid_topology_leaf(struct kvm_cpuid_entry2 *e,
                                    const CpuTopology *smp,
                                    const X86TopoFields *f)
{
    switch (e->index) {
    case 0:
        e->eax = f->smt_width;
        e->ebx = smp->threads;
        e->ecx = (1 << 8) | e->index;
        break;
    case 1:
        e->eax = f->pkg_shift;
        e->ebx = smp->threads * smp->cores * smp->dies;
        e->ecx = (2 << 8) | e->index;
        break;
    default:
        e->eax = 0;
        e->ebx = 0;
        e->ecx = e->index & 0xff;
        break;
    }
}

/*
 * What a guest may rely on: what KVM supports and the host CPU really
 * executes (nested or paravirtual KVMs can advertise more), minus
 * cmpxchg16b and MONITOR, which some KVM backends cannot run; and the
 * -smp topology (include/hw/i386/topology.h) in every leaf Intel and
 * AMD guests read it from.
 */
static void kvm_filter_cpuid_entry(struct kvm_cpuid_entry2 *e,
                                   unsigned index, const CpuTopology *smp)
{
    X86TopoFields f = x86_topo_fields(smp);
    X86TopoIds id = x86_topo_ids(smp, index);
    uint32_t apic_id = x86_apic_id_from_index(smp, index);
    unsigned pkg_cpus = smp->threads * smp->cores * smp->dies;
    unsigned a, b, c, d;

    switch (e->function) {
    case 1:
        __cpuid(1, a, b, c, d);
        e->ecx &= c | CPUID_1_ECX_X2APIC | CPUID_1_ECX_TSC_DEADLINE |
                  CPUID_1_ECX_HYPERVISOR;
        e->ecx &= ~(CPUID_1_ECX_CX16 | CPUID_1_ECX_MONITOR);
        e->ecx |= CPUID_1_ECX_HYPERVISOR;
        e->edx &= d;
        /* Addressable IDs per package, and the initial APIC ID. */
        e->ebx = (e->ebx & 0xffff) |
                 (MIN(1u << f.pkg_shift, 255u) << 16) |
                 ((apic_id & 0xff) << 24);
        if (pkg_cpus > 1) {
            e->edx |= CPUID_1_EDX_HTT;
        } else {
            e->edx &= ~CPUID_1_EDX_HTT;
        }
        break;
    case 4:
        /* Intel: addressable core IDs per package - 1 in EAX[31:26]. */
        if (e->eax & 0x1f) {
            e->eax = (e->eax & 0x03ffffff) |
                     (((1u << (f.core_width + f.die_width)) - 1) << 26);
        }
        break;
    case 7:
        if (e->index == 0) {
            __cpuid_count(7, 0, a, b, c, d);
            e->ebx &= b;
            e->ecx &= c;
            e->edx &= d;
        }
        break;
    case 0xb:
        kvm_cpuid_topology_leaf(e, smp, &f);
        e->edx = apic_id;
        break;
    case 0x1f:
        e->edx = apic_id;
        break;
    case 0x80000001:
        __cpuid(0x80000001, a, b, c, d);
        e->ecx &= c;
        e->edx &= d;
        /* AMD: the package's cores share leaf 1's logical count. */
        if (pkg_cpus > 1) {
            e->ecx |= CPUID_80000001_ECX_CMP_LEGACY;
        } else {
            e->ecx &= ~CPUID_80000001_ECX_CMP_LEGACY;
        }
        break;
    case 0x80000008:
        /* AMD: APIC ID bits below the package, logical CPUs - 1. */
        e->ecx = (e->ecx & ~0xf0ffu) | (f.pkg_shift << 12) |
                 ((pkg_cpus - 1) & 0xff);
        break;
    case 0x8000001e:
        /* AMD topology extensions: extended APIC ID, core, node. */
        e->eax = apic_id;
        e->ebx = ((smp->threads - 1) << 8) |
                 ((id.die * smp->cores + id.core) & 0xff);
        e->ecx = id.pkg & 0xff;
        e->edx = 0;
        break;
    }
}

/*
 * KVM may list fewer leaf 0xB subleaves than the levels we describe (a
 * nested KVM lists only subleaf 0): add the SMT, core and terminating
 * ones, for the filter to fill in.  c has room for 3 more entries.
 */
static void kvm_cpuid_add_topology_subleaves(struct kvm_cpuid2 *c)
{
    bool has_leaf = false, has_sub[3] = { false, false, false };

    for (unsigned i = 0; i < c->nent; i++) {
        if (c->entries[i].function == 0xb) {
            has_leaf = true;
            if (c->entries[i].index < 3) {
                has_sub[c->entries[i].index] = true;
            }
        }
    }
    for (unsigned sub = 0; has_leaf && sub < 3; sub++) {
        if (!has_sub[sub]) {
            c->entries[c->nent++] = (struct kvm_cpuid_entry2) {
                .function = 0xb,
                .index = sub,
                .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX,
            };
        }
    }
}

/*
 * What -cpu host,... asked for (hw/i386/x86-cpu.c): entries dropped or
 * changed; a forced-on feature the host lacks is reported, as QEMU does.
 */
static void kvm_cpuid_apply_config(struct kvm_cpuid2 *c, int index,
                                   const X86CPUConfig *cfg, bool warn)
{
    unsigned out = 0;

    for (unsigned i = 0; i < c->nent; i++) {
        struct kvm_cpuid_entry2 *e = &c->entries[i];
        uint32_t regs[4] = { e->eax, e->ebx, e->ecx, e->edx };

        if (!x86_cpu_apply_cpuid(cfg, e->function, e->index, regs)) {
            continue;
        }
        e->eax = regs[0];
        e->ebx = regs[1];
        e->ecx = regs[2];
        e->edx = regs[3];
        c->entries[out++] = *e;
    }
    c->nent = out;
    for (unsigned f = 0; warn && index == 0 && f < cfg->nr_set; f++) {
        const X86FeatureBit *bit = cfg->set[f];
        bool have = false;

        for (unsigned i = 0; i < c->nent; i++) {
            const struct kvm_cpuid_entry2 *e = &c->entries[i];
            uint32_t regs[4] = { e->eax, e->ebx, e->ecx, e->edx };

            if (x86_cpu_feature_in(bit, e->function, e->index)) {
                have |= regs[bit->reg] & (1u << bit->bit);
            }
        }
        if (!have) {
            warn_report("host doesn't support requested feature: "
                        "CPUID.%02XH:%s.%s [bit %u]", bit->leaf,
                        (const char *[]){ "EAX", "EBX", "ECX", "EDX" }
                        [bit->reg], bit->name, bit->bit);
        }
    }
}

/* The CPUID vCPU @index gets: KVM's, filtered, then -cpu's changes. */
static struct kvm_cpuid2 *kvm_x86_build_cpuid(KVMState *s, int index,
                                              const CpuTopology *smp,
                                              const X86CPUConfig *cfg,
                                              bool warn)
{
    const struct kvm_cpuid2 *supported = s->arch->cpuid;
    size_t size = sizeof(*supported) +
                  supported->nent * sizeof(struct kvm_cpuid_entry2);
    struct kvm_cpuid2 *c = g_malloc0(size +
                                     3 * sizeof(struct kvm_cpuid_entry2));

    memcpy(c, supported, size);
    kvm_cpuid_add_topology_subleaves(c);
    for (unsigned i = 0; i < c->nent; i++) {
        kvm_filter_cpuid_entry(&c->entries[i], index, smp);
    }
    kvm_cpuid_apply_config(c, index, cfg, warn);
    return c;
}

static bool kvm_vcpu_set_cpuid(KVMState *s, KVMVCPU *cpu,
                               const CpuTopology *smp, Error **errp)
{
    g_autofree struct kvm_cpuid2 *c =
        kvm_x86_build_cpuid(s, cpu->index, smp, x86_cpu_cmdline_config(),
                            true);

    if (ioctl(cpu->fd, KVM_SET_CPUID2, c) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: KVM_SET_CPUID2", cpu->index);
        return false;
    }
    return true;
}

GArray *kvm_x86_guest_cpuid(const X86CPUConfig *cfg, Error **errp)
{
    static const CpuTopology one = {
        .cpus = 1, .max_cpus = 1, .sockets = 1, .dies = 1, .cores = 1,
        .threads = 1,
    };
    g_autofree struct kvm_cpuid2 *c = NULL;
    GArray *out;

    if (!kvm_state || !kvm_state->arch || !kvm_state->arch->cpuid) {
        error_setg(errp, "CPU model expansion needs the KVM accelerator");
        return NULL;
    }
    c = kvm_x86_build_cpuid(kvm_state, 0, &one, cfg, false);
    out = g_array_sized_new(false, false, sizeof(X86CpuidEntry), c->nent);
    for (unsigned i = 0; i < c->nent; i++) {
        const struct kvm_cpuid_entry2 *e = &c->entries[i];
        X86CpuidEntry x = {
            .function = e->function, .index = e->index,
            .regs = { e->eax, e->ebx, e->ecx, e->edx },
        };

        g_array_append_val(out, x);
    }
    return out;
}

/* ---- the VM ----------------------------------------------------------- */

static bool kvm_x86_init_vm(KVMState *s, Error **errp)
{
    g_autofree KVMArchState *x86 = g_new0(KVMArchState, 1);
    uint64_t idmap = KVM_IDENTITY_MAP_ADDR;
    struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

    if (ioctl(s->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0) {
        error_setg_errno(errp, errno, "KVM_SET_TSS_ADDR");
        return false;
    }
    if (ioctl(s->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0) {
        trace_kvm_no_identity_map(errno);
    }
    if (ioctl(s->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
        error_setg_errno(errp, errno, "KVM_CREATE_IRQCHIP");
        return false;
    }
    s->irqchip = true;
    /*
     * With the default speaker emulation, OUT2 read back through port 0x61
     * goes high within microseconds on some hosts, breaking the usual PIT
     * channel 2 TSC calibration; the "dummy" variant reports it correctly.
     */
    if (ioctl(s->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
        warn_report("kvm: no in-kernel PIT: %s", strerror(errno));
    }
    if (!kvm_get_supported_cpuid(s, x86, errp)) {
        return false;
    }
    s->arch = g_steal_pointer(&x86);
    return true;
}

static void kvm_x86_cleanup_vm(KVMState *s)
{
    if (s->arch) {
        g_free(s->arch->cpuid);
        g_clear_pointer(&s->arch, g_free);
    }
}

/* ---- a vCPU ----------------------------------------------------------- */

static bool kvm_x86_init_vcpu(KVMState *s, KVMVCPU *cpu,
                              const CpuTopology *smp, Error **errp)
{
    cpu->arch = g_new0(KVMArchVCPU, 1);
    if (ioctl(cpu->fd, KVM_GET_SREGS, &cpu->arch->reset_sregs) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: KVM_GET_SREGS", cpu->index);
        return false;
    }
    return kvm_vcpu_set_cpuid(s, cpu, smp, errp);
}

static void kvm_x86_cleanup_vcpu(KVMVCPU *cpu)
{
    g_clear_pointer(&cpu->arch, g_free);
}

/* ---- vCPU state at reset ----------------------------------------------- */

static void kvm_seg_flat(struct kvm_segment *seg, uint16_t selector,
                         uint8_t type, bool code64)
{
    *seg = (struct kvm_segment) {
        .base = 0,
        .limit = 0xffffffff,
        .selector = selector,
        .type = type,
        .present = 1,
        .dpl = 0,
        .db = code64 ? 0 : 1,
        .s = 1,
        .l = code64 ? 1 : 0,
        .g = 1,
    };
}

static void kvm_sregs_for_boot(struct kvm_sregs *sregs,
                               const X86BootEntry *boot)
{
    struct kvm_segment data;

    switch (boot->mode) {
    case X86_BOOT_PVH32:
        /* The PVH ABI: flat 32-bit segments, CR0.PE only, no paging. */
        kvm_seg_flat(&sregs->cs, 0x8, 0xb, false);
        kvm_seg_flat(&data, 0x10, 0x3, false);
        sregs->cr0 = 0x11;          /* PE | ET */
        sregs->cr3 = 0;
        sregs->cr4 = 0;
        sregs->efer = 0;
        break;
    case X86_BOOT_LINUX64:
        kvm_seg_flat(&sregs->cs, X86_BOOT_CS, 0xb, true);
        kvm_seg_flat(&data, X86_BOOT_DS, 0x3, false);
        sregs->cr0 = 0x80050033;    /* PG | AM | WP | NE | ET | MP | PE */
        sregs->cr3 = boot->cr3;
        sregs->cr4 = 0x20;          /* PAE */
        sregs->efer = 0x500;        /* LME | LMA */
        sregs->gdt.base = boot->gdt_base;
        sregs->gdt.limit = boot->gdt_limit;
        break;
    default:
        return;
    }
    sregs->ds = sregs->es = sregs->fs = sregs->gs = sregs->ss = data;
    /* A usable TSS for the entry checks; the guest loads its own. */
    sregs->tr.type = 0xb;
    sregs->tr.present = 1;
    sregs->tr.s = 0;
}

#define MSR_MTRR_CAP 0xfe
#define MSR_MTRR_DEF_TYPE 0x2ff
#define MSR_MTRR_PHYS_BASE0 0x200

/*
 * MTRRs: the architectural reset state (off) for firmware, which sets
 * them itself; for the direct kernel boot what firmware would leave
 * (x86_mtrr_plan), so Linux keeps PAT and write-combining.
 */
static void kvm_x86_reset_mtrrs(KVMVCPU *cpu, bool firmware)
{
    g_autofree struct kvm_msrs *msrs =
        g_malloc0(sizeof(*msrs) + (1 + X86_MTRR_NR_FIXED +
                                   2 * X86_MTRR_MAX_VAR + 1) *
                  sizeof(struct kvm_msr_entry));
    struct kvm_msr_entry *e = msrs->entries;
    X86MtrrPlan plan;
    unsigned a, b, c, d, vcnt, n = 0;

    msrs->nmsrs = 1;
    e[0].index = MSR_MTRR_CAP;
    if (ioctl(cpu->fd, KVM_GET_MSRS, msrs) != 1) {
        trace_kvm_vcpu_msrs_partial(cpu->index);
        return;
    }
    vcnt = MIN(e[0].data & 0xff, (uint64_t)X86_MTRR_MAX_VAR);
    __cpuid(0x80000000, a, b, c, d);
    if (a >= 0x80000008) {
        __cpuid(0x80000008, a, b, c, d);
    } else {
        a = 36;
    }
    x86_mtrr_plan(x86_pci_hole_start(), a & 0xff, vcnt, &plan);
    e[n++] = (struct kvm_msr_entry) {
        .index = MSR_MTRR_DEF_TYPE, .data = firmware ? 0 : plan.def_type,
    };
    for (int i = 0; i < X86_MTRR_NR_FIXED; i++) {
        e[n++] = (struct kvm_msr_entry) {
            .index = plan.fixed_msr[i], .data = firmware ? 0 : plan.fixed[i],
        };
    }
    for (unsigned i = 0; i < vcnt; i++) {
        bool set = !firmware && i < plan.nr_var;

        e[n++] = (struct kvm_msr_entry) {
            .index = MSR_MTRR_PHYS_BASE0 + 2 * i,
            .data = set ? plan.var_base[i] : 0,
        };
        e[n++] = (struct kvm_msr_entry) {
            .index = MSR_MTRR_PHYS_BASE0 + 2 * i + 1,
            .data = set ? plan.var_mask[i] : 0,
        };
    }
    msrs->nmsrs = n;
    if (ioctl(cpu->fd, KVM_SET_MSRS, msrs) != (int)n) {
        trace_kvm_vcpu_msrs_partial(cpu->index);
    }
}

static void kvm_x86_reset_vcpu(KVMState *s, KVMVCPU *cpu)
{
    const X86BootEntry *boot = x86_boot_get_entry();
    bool bsp = cpu->index == 0;
    struct kvm_sregs sregs = cpu->arch->reset_sregs;
    struct kvm_regs regs = { .rflags = 0x2 };
    struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };
    struct kvm_mp_state mp = {
        .mp_state = bsp ? KVM_MP_STATE_RUNNABLE : KVM_MP_STATE_UNINITIALIZED,
    };
    g_autofree struct kvm_msrs *msrs =
        g_malloc0(sizeof(*msrs) + 2 * sizeof(struct kvm_msr_entry));

    msrs->nmsrs = 2;
    msrs->entries[0] = (struct kvm_msr_entry) {
        .index = MSR_IA32_CR_PAT, .data = MSR_PAT_DEFAULT,
    };
    msrs->entries[1] = (struct kvm_msr_entry) {
        .index = MSR_IA32_MISC_ENABLE, .data = MISC_ENABLE_FAST_STRING,
    };
    sregs.apic_base = 0xfee00000 | (1 << 11) | (bsp ? (1 << 8) : 0);
    if (bsp) {
        kvm_sregs_for_boot(&sregs, boot);
        if (boot->mode == X86_BOOT_PVH32) {
            regs.rip = boot->entry;
            regs.rbx = boot->arg;
        } else if (boot->mode == X86_BOOT_LINUX64) {
            regs.rip = boot->entry;
            regs.rsi = boot->arg;
        } else {
            regs.rip = 0xfff0;
            regs.rdx = 0x600;
        }
    } else {
        regs.rip = 0xfff0;
    }
    if (ioctl(cpu->fd, KVM_SET_SREGS, &sregs) < 0 ||
        ioctl(cpu->fd, KVM_SET_REGS, &regs) < 0 ||
        ioctl(cpu->fd, KVM_SET_FPU, &fpu) < 0) {
        error_report("kvm: vCPU %d: cannot load the reset state: %s",
                     cpu->index, strerror(errno));
    }
    if (ioctl(cpu->fd, KVM_SET_MSRS, msrs) != 2) {
        trace_kvm_vcpu_msrs_partial(cpu->index);
    }
    if (s->irqchip && ioctl(cpu->fd, KVM_SET_MP_STATE, &mp) < 0) {
        warn_report("kvm: vCPU %d: KVM_SET_MP_STATE: %s", cpu->index,
                    strerror(errno));
    }
    kvm_x86_reset_mtrrs(cpu, boot->mode == X86_BOOT_RESET);
    trace_kvm_vcpu_reset(cpu->index, boot->mode, regs.rip);
}

/* ---- a VM that cannot continue ----------------------------------------- */

static void kvm_x86_report_vcpu(KVMVCPU *cpu, const char *what)
{
    struct kvm_regs r;
    struct kvm_sregs s;

    if (ioctl(cpu->fd, KVM_GET_REGS, &r) < 0 ||
        ioctl(cpu->fd, KVM_GET_SREGS, &s) < 0) {
        error_report("kvm: vCPU %d: %s (registers unavailable: %s)",
                     cpu->index, what, strerror(errno));
        return;
    }
    error_report("kvm: vCPU %d: %s\n"
                 "RAX=%016llx RBX=%016llx RCX=%016llx RDX=%016llx\n"
                 "RSI=%016llx RDI=%016llx RBP=%016llx RSP=%016llx\n"
                 "R8 =%016llx R9 =%016llx R10=%016llx R11=%016llx\n"
                 "R12=%016llx R13=%016llx R14=%016llx R15=%016llx\n"
                 "RIP=%016llx RFL=%08llx CPL=%d\n"
                 "CS =%04x %016llx %08x L=%d DB=%d\n"
                 "SS =%04x %016llx %08x\n"
                 "CR0=%08llx CR2=%016llx CR3=%016llx CR4=%08llx "
                 "EFER=%08llx\n"
                 "GDT=%016llx %04x IDT=%016llx %04x",
                 cpu->index, what,
                 r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp,
                 r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15,
                 r.rip, r.rflags, s.cs.dpl,
                 s.cs.selector, s.cs.base, s.cs.limit, s.cs.l, s.cs.db,
                 s.ss.selector, s.ss.base, s.ss.limit,
                 s.cr0, s.cr2, s.cr3, s.cr4, s.efer,
                 s.gdt.base, s.gdt.limit, s.idt.base, s.idt.limit);
}

bool kvm_pit_set_reinject(bool reinject, Error **errp)
{
    struct kvm_reinject_control rc = { .pit_reinject = reinject };

    if (!kvm_state || kvm_state->vm_fd < 0) {
        error_setg(errp, "kvm-pit: no KVM VM");
        return false;
    }
    if (ioctl(kvm_state->vm_fd, KVM_REINJECT_CONTROL, &rc) < 0) {
        error_setg_errno(errp, errno, "kvm-pit: KVM_REINJECT_CONTROL");
        return false;
    }
    return true;
}

static bool kvm_x86_inject_nmi(KVMVCPU *cpu, Error **errp)
{
    if (ioctl(cpu->fd, KVM_NMI) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: KVM_NMI", cpu->index);
        return false;
    }
    return true;
}

/* x86's vCPU id is its initial APIC ID. */
static unsigned long kvm_x86_vcpu_id(const CpuTopology *smp, unsigned index)
{
    return x86_apic_id_from_index(smp, index);
}

const KVMArchOps kvm_arch_ops = {
    .vcpu_id = kvm_x86_vcpu_id,
    .inject_nmi = kvm_x86_inject_nmi,
    .init_vm = kvm_x86_init_vm,
    .cleanup_vm = kvm_x86_cleanup_vm,
    .init_vcpu = kvm_x86_init_vcpu,
    .cleanup_vcpu = kvm_x86_cleanup_vcpu,
    .reset_vcpu = kvm_x86_reset_vcpu,
    .report_vcpu = kvm_x86_report_vcpu,
};
