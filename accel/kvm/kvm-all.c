/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM accelerator: the VM, its in-kernel irqchip and PIT, and one
 * thread per vCPU.
 *
 * A vCPU thread runs KVM_RUN without the BQL and takes it to dispatch an
 * exit (port I/O and MMIO into the address spaces, shutdown, errors).
 * Other threads get a vCPU out of the guest with a "kick": set
 * run->immediate_exit, then SIGUSR1, so a kick that lands just before
 * KVM_RUN is not lost.  vCPUs run only while the VM is running.
 */
#include "qemu/osdep.h"
#include <cpuid.h>
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/kvm.h"
#include "system/accel.h"
#include "system/runstate.h"
#include "system/system.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/i386/x86-boot.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "monitor/monitor.h"
#include "trace.h"

#define KVM_SIG_KICK SIGUSR1
/* Below the pc machine's BIOS area; Intel needs both for real mode. */
#define KVM_TSS_ADDR 0xfeffd000
#define KVM_IDENTITY_MAP_ADDR 0xfeffc000

#define CPUID_1_ECX_CX16 (1u << 13)
#define CPUID_1_ECX_MONITOR (1u << 3)
#define CPUID_1_ECX_X2APIC (1u << 21)
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)

#define MSR_IA32_CR_PAT 0x277
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_PAT_DEFAULT 0x0007040600070406ULL
#define MISC_ENABLE_FAST_STRING 1

KVMState *kvm_state;

static GMutex kvm_run_lock;
static GCond kvm_run_cond;
static bool kvm_vcpus_running;      /* kvm_run_lock */
static bool kvm_vcpus_quit;         /* kvm_run_lock */
static VMChangeStateEntry *kvm_vmstate_entry;

static uint64_t kvm_stat_exits, kvm_stat_mmio, kvm_stat_pio;

bool kvm_enabled(void)
{
    return kvm_state != NULL;
}

void kvm_get_exit_stats(KVMExitStats *stats)
{
    *stats = (KVMExitStats) {
        .exits = kvm_stat_exits,
        .mmio = kvm_stat_mmio,
        .pio = kvm_stat_pio,
        .signal_msi = kvm_stat_signal_msi,
    };
}

/* x-query-kvm: exit counters, for telemetry next to x-query-vfio. */
static void qmp_x_query_kvm(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *o;
    JsonNode *node;
    KVMExitStats st;
    KVMCoalescedStats cst;

    if (!kvm_state) {
        error_setg(errp, "KVM is not in use");
        return;
    }
    kvm_get_exit_stats(&st);
    o = json_object_new();
    json_object_set_int_member(o, "vcpus", kvm_state->nr_vcpus);
    json_object_set_int_member(o, "exits", st.exits);
    json_object_set_int_member(o, "mmio-exits", st.mmio);
    json_object_set_int_member(o, "pio-exits", st.pio);
    json_object_set_int_member(o, "signal-msi", st.signal_msi);
    kvm_coalesced_get_stats(&cst);
    json_object_set_int_member(o, "coalesced-zones", cst.zones);
    json_object_set_int_member(o, "coalesced-ring-size", cst.ring_size);
    json_object_set_int_member(o, "coalesced-pending", cst.pending);
    json_object_set_int_member(o, "coalesced-writes", cst.replayed);
    json_object_set_int_member(o, "coalesced-vcpu-drains", cst.vcpu_drains);
    json_object_set_int_member(o, "coalesced-drainer-drains",
                               cst.drainer_drains);
    node = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(node, o);
    *ret = node;
}

static void kvm_kick_handler(int sig)
{
    /* Only there to make KVM_RUN return -EINTR. */
}

/* Caller holds the BQL (so the vCPU re-checks its flags before running). */
static void kvm_vcpu_kick(KVMVCPU *cpu)
{
    if (!cpu->thread) {
        return;
    }
    __atomic_store_n(&cpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
    pthread_kill(cpu->tid, KVM_SIG_KICK);
}

static void kvm_kick_all(void)
{
    for (unsigned i = 0; kvm_state && i < kvm_state->nr_vcpus; i++) {
        kvm_vcpu_kick(&kvm_state->vcpus[i]);
    }
}

/* ---- CPUID ------------------------------------------------------------ */

static bool kvm_get_supported_cpuid(KVMState *s, Error **errp)
{
    for (int n = 64; n <= 4096; n *= 2) {
        struct kvm_cpuid2 *c = g_malloc0(sizeof(*c) +
                                         n * sizeof(struct kvm_cpuid_entry2));
        c->nent = n;
        if (ioctl(s->fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
            s->cpuid = c;
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

/* log2 of a power of 2. */
static unsigned kvm_cpuid_shift(unsigned n)
{
    return n > 1 ? 32 - __builtin_clz(n - 1) : 0;
}

/* Leaf 0xB: subleaf 0 the SMT level, 1 the core level, then invalid. */
static void kvm_cpuid_topology_leaf(struct kvm_cpuid_entry2 *e,
                                    unsigned threads, unsigned pkg_cpus)
{
    switch (e->index) {
    case 0:
        e->eax = kvm_cpuid_shift(threads);
        e->ebx = threads;
        e->ecx = (1 << 8) | e->index;
        break;
    case 1:
        e->eax = kvm_cpuid_shift(pkg_cpus);
        e->ebx = pkg_cpus;
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
 * cmpxchg16b and MONITOR, which some KVM backends cannot run.
 */
static void kvm_filter_cpuid_entry(struct kvm_cpuid_entry2 *e,
                                   unsigned index, const KVMState *s)
{
    unsigned nr_vcpus = s->nr_vcpus;

    unsigned a, b, c, d;

    switch (e->function) {
    case 1:
        __cpuid(1, a, b, c, d);
        e->ecx &= c | CPUID_1_ECX_X2APIC | CPUID_1_ECX_TSC_DEADLINE |
                  CPUID_1_ECX_HYPERVISOR;
        e->ecx &= ~(CPUID_1_ECX_CX16 | CPUID_1_ECX_MONITOR);
        e->ecx |= CPUID_1_ECX_HYPERVISOR;
        e->edx &= d;
        /* APIC ID and logical processor count (per package if known). */
        e->ebx = (e->ebx & 0xffff) |
                 (MIN(s->cpuid_pkg_cpus ? s->cpuid_pkg_cpus : nr_vcpus,
                      255) << 16) |
                 (index << 24);
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
        /*
         * With power-of-2 counts, APIC ID == vCPU index already encodes
         * the -smp topology, so the levels can describe it; otherwise
         * only the x2APIC ID is ours.
         */
        if (s->cpuid_pkg_cpus) {
            kvm_cpuid_topology_leaf(e, s->cpuid_threads, s->cpuid_pkg_cpus);
        }
        e->edx = index;
        break;
    case 0x1f:
        e->edx = index;
        break;
    case 0x80000001:
        __cpuid(0x80000001, a, b, c, d);
        e->ecx &= c;
        e->edx &= d;
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

static bool kvm_vcpu_set_cpuid(KVMState *s, KVMVCPU *cpu, Error **errp)
{
    size_t size = sizeof(*s->cpuid) +
                  s->cpuid->nent * sizeof(struct kvm_cpuid_entry2);
    g_autofree struct kvm_cpuid2 *c =
        g_malloc0(size + 3 * sizeof(struct kvm_cpuid_entry2));

    memcpy(c, s->cpuid, size);
    if (s->cpuid_pkg_cpus) {
        kvm_cpuid_add_topology_subleaves(c);
    }
    for (unsigned i = 0; i < c->nent; i++) {
        kvm_filter_cpuid_entry(&c->entries[i], cpu->index, s);
    }
    if (ioctl(cpu->fd, KVM_SET_CPUID2, c) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: KVM_SET_CPUID2", cpu->index);
        return false;
    }
    return true;
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

static void kvm_vcpu_load_reset_state(KVMVCPU *cpu)
{
    const X86BootEntry *boot = x86_boot_get_entry();
    bool bsp = cpu->index == 0;
    struct kvm_sregs sregs = *cpu->reset_sregs;
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
    if (kvm_state->irqchip && ioctl(cpu->fd, KVM_SET_MP_STATE, &mp) < 0) {
        warn_report("kvm: vCPU %d: KVM_SET_MP_STATE: %s", cpu->index,
                    strerror(errno));
    }
    trace_kvm_vcpu_reset(cpu->index, boot->mode, regs.rip);
}

/* Machine reset (BQL held): every vCPU reloads its state before running. */
static void kvm_reset_vcpus(void *opaque)
{
    for (unsigned i = 0; i < kvm_state->nr_vcpus; i++) {
        kvm_state->vcpus[i].reset_pending = true;
    }
    g_mutex_lock(&kvm_run_lock);
    g_cond_broadcast(&kvm_run_cond);    /* wakes parked vCPUs */
    g_mutex_unlock(&kvm_run_lock);
    kvm_kick_all();
}

/* ---- exits ------------------------------------------------------------ */

static void kvm_report_registers(KVMVCPU *cpu, const char *what)
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

/*
 * The VM cannot continue.  With -no-shutdown it stays in the
 * internal-error state for inspection over QMP; otherwise Conduit exits
 * with status 1.
 */
static void kvm_vm_failed(KVMVCPU *cpu, const char *what)
{
    kvm_report_registers(cpu, what);
    cpu->parked = true;
    if (!no_shutdown) {
        qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_HOST_ERROR, 1);
    }
    vm_stop(RUN_STATE_INTERNAL_ERROR);
}

static void kvm_guest_reset(void)
{
    if (no_reboot) {
        qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_GUEST_RESET, 0);
    } else {
        qemu_system_reset_request();
    }
}

static void kvm_handle_io(struct kvm_run *run)
{
    uint8_t *data = (uint8_t *)run + run->io.data_offset;
    bool is_write = run->io.direction == KVM_EXIT_IO_OUT;

    for (uint32_t i = 0; i < run->io.count; i++) {
        address_space_rw(&address_space_io, run->io.port, data,
                         run->io.size, is_write);
        data += run->io.size;
    }
}

static void kvm_handle_internal_error(KVMVCPU *cpu)
{
    struct kvm_run *run = cpu->run;
    g_autoptr(GString) what = g_string_new(NULL);

    g_string_printf(what, "KVM internal error, suberror %u",
                    run->internal.suberror);
    if (run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION) {
        g_string_append(what, " (instruction emulation failed)");
    }
    for (uint32_t i = 0; i < MIN(run->internal.ndata, 16u); i++) {
        g_string_append_printf(what, "%s%llx", i ? " " : ": data ",
                               run->internal.data[i]);
    }
    kvm_vm_failed(cpu, what->str);
}

/* Called with the BQL; false if the VM was stopped. */
static bool kvm_handle_exit(KVMVCPU *cpu)
{
    struct kvm_run *run = cpu->run;
    g_autofree char *what = NULL;

    kvm_stat_exits++;
    switch (run->exit_reason) {
    case KVM_EXIT_IO:
        kvm_stat_pio++;
        trace_kvm_exit_io(cpu->index, run->io.port, run->io.direction,
                          run->io.size, run->io.count);
        kvm_handle_io(run);
        return true;
    case KVM_EXIT_MMIO:
        kvm_stat_mmio++;
        trace_kvm_exit_mmio(cpu->index, run->mmio.phys_addr,
                            run->mmio.is_write, run->mmio.len);
        address_space_rw(&address_space_memory, run->mmio.phys_addr,
                         run->mmio.data, run->mmio.len, run->mmio.is_write);
        return true;
    case KVM_EXIT_INTR:
    case KVM_EXIT_IRQ_WINDOW_OPEN:
        return true;
    case KVM_EXIT_HLT:
        /* Only without an in-kernel LAPIC, which we always create. */
        return true;
    case KVM_EXIT_SHUTDOWN:
        /* A triple fault: running on would only fault again. */
        trace_kvm_exit_shutdown(cpu->index);
        cpu->parked = true;
        kvm_guest_reset();
        return true;
    case KVM_EXIT_SYSTEM_EVENT:
        switch (run->system_event.type) {
        case KVM_SYSTEM_EVENT_SHUTDOWN:
            qemu_system_shutdown_request(0);
            break;
        case KVM_SYSTEM_EVENT_RESET:
            kvm_guest_reset();
            break;
        case KVM_SYSTEM_EVENT_CRASH:
            qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_GUEST_PANIC, 1);
            break;
        }
        return true;
    case KVM_EXIT_INTERNAL_ERROR:
        kvm_handle_internal_error(cpu);
        return false;
    case KVM_EXIT_FAIL_ENTRY:
        what = g_strdup_printf("VM entry failed, hardware reason 0x%llx",
                               run->fail_entry.hardware_entry_failure_reason);
        kvm_vm_failed(cpu, what);
        return false;
    default:
        what = g_strdup_printf("unhandled KVM exit reason %u",
                               run->exit_reason);
        kvm_vm_failed(cpu, what);
        return false;
    }
}

/*
 * Waits (BQL dropped) until the VM runs or Conduit quits.  Returns false
 * on quit.  Lock order: BQL, then kvm_run_lock.
 */
static bool kvm_vcpu_wait_runnable(KVMVCPU *cpu)
{
    for (;;) {
        bool runnable = !cpu->parked || cpu->reset_pending;

        g_mutex_lock(&kvm_run_lock);
        if (kvm_vcpus_quit || (kvm_vcpus_running && runnable)) {
            bool quit = kvm_vcpus_quit;
            g_mutex_unlock(&kvm_run_lock);
            return !quit;
        }
        bql_unlock();
        g_cond_wait(&kvm_run_cond, &kvm_run_lock);
        g_mutex_unlock(&kvm_run_lock);
        bql_lock();
    }
}

static gpointer kvm_vcpu_thread(gpointer opaque)
{
    KVMVCPU *cpu = opaque;
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, KVM_SIG_KICK);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);

    bql_lock();
    while (kvm_vcpu_wait_runnable(cpu)) {
        int ret, err;

        if (cpu->reset_pending) {
            cpu->reset_pending = false;
            cpu->parked = false;
            kvm_vcpu_load_reset_state(cpu);
        }
        /* Flags were checked under the BQL; a later kick sets it again. */
        __atomic_store_n(&cpu->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
        bql_unlock();
        ret = ioctl(cpu->fd, KVM_RUN, 0);
        err = errno;
        bql_lock();
        /* Queued writes land before anything this exit does. */
        kvm_coalesced_flush(true);
        if (ret < 0) {
            if (err == EINTR || err == EAGAIN) {
                continue;
            }
            g_autofree char *what = g_strdup_printf("KVM_RUN failed: %s",
                                                    strerror(err));
            kvm_vm_failed(cpu, what);
            continue;
        }
        kvm_handle_exit(cpu);
    }
    bql_unlock();
    return NULL;
}

static void kvm_vm_state_change(void *opaque, bool running, RunState state)
{
    g_mutex_lock(&kvm_run_lock);
    kvm_vcpus_running = running;
    g_cond_broadcast(&kvm_run_cond);
    g_mutex_unlock(&kvm_run_lock);
    if (!running) {
        kvm_kick_all();
    }
}

/* ---- setup ------------------------------------------------------------ */

static bool kvm_create_vcpu(KVMState *s, KVMVCPU *cpu, Error **errp)
{
    cpu->fd = ioctl(s->vm_fd, KVM_CREATE_VCPU, cpu->index);
    if (cpu->fd < 0) {
        error_setg_errno(errp, errno, "KVM_CREATE_VCPU %d", cpu->index);
        return false;
    }
    cpu->run = mmap(NULL, s->run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                    cpu->fd, 0);
    if (cpu->run == MAP_FAILED) {
        cpu->run = NULL;
        error_setg_errno(errp, errno, "vCPU %d: mmap of kvm_run",
                         cpu->index);
        return false;
    }
    cpu->reset_sregs = g_new0(struct kvm_sregs, 1);
    if (ioctl(cpu->fd, KVM_GET_SREGS, cpu->reset_sregs) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: KVM_GET_SREGS", cpu->index);
        return false;
    }
    if (!kvm_vcpu_set_cpuid(s, cpu, errp)) {
        return false;
    }
    cpu->reset_pending = true;
    return true;
}

static gpointer kvm_vcpu_thread_start(gpointer opaque)
{
    KVMVCPU *cpu = opaque;

    cpu->host_tid = gettid();
    __atomic_store_n(&cpu->tid, pthread_self(), __ATOMIC_RELEASE);
    return kvm_vcpu_thread(cpu);
}

static bool kvm_start_vcpus(MachineState *ms, Error **errp)
{
    KVMState *s = kvm_state;
    sigset_t set, old;

    const CpuTopology *topo = &ms->smp;
    unsigned pkg_cpus = topo->dies * topo->cores * topo->threads;

    /* vCPUs from cpus up to max_cpus would be hot-plugged: not created. */
    s->nr_vcpus = topo->cpus ? topo->cpus : 1;
    if (is_power_of_2(topo->threads) && is_power_of_2(pkg_cpus)) {
        s->cpuid_threads = topo->threads;
        s->cpuid_pkg_cpus = pkg_cpus;
    }
    s->vcpus = g_new0(KVMVCPU, s->nr_vcpus);
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        s->vcpus[i].index = i;
        s->vcpus[i].fd = -1;
        if (!kvm_create_vcpu(s, &s->vcpus[i], errp)) {
            return false;
        }
    }
    qemu_register_reset(kvm_reset_vcpus, NULL);
    kvm_vmstate_entry = qemu_add_vm_change_state_handler(kvm_vm_state_change,
                                                         NULL);
    /*
     * Threads start with the kick signal blocked so that tid is known
     * before one can arrive; each unblocks it itself.
     */
    sigemptyset(&set);
    sigaddset(&set, KVM_SIG_KICK);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        g_autofree char *name = g_strdup_printf("CPU %u/KVM", i);
        KVMVCPU *cpu = &s->vcpus[i];

        cpu->thread = g_thread_new(name, kvm_vcpu_thread_start, cpu);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* tid is written by each thread before it can be kicked. */
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        while (!__atomic_load_n(&s->vcpus[i].tid, __ATOMIC_ACQUIRE)) {
            g_usleep(100);
        }
    }
    kvm_coalesced_start(s);
    return true;
}

static bool kvm_init_machine(MachineState *ms, Error **errp)
{
    g_autofree KVMState *s = g_new0(KVMState, 1);
    struct sigaction sa = { .sa_handler = kvm_kick_handler };
    int ret;

    s->vm_fd = -1;
    s->fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
    if (s->fd < 0) {
        error_setg_errno(errp, errno, "Could not access KVM kernel module");
        return false;
    }
    ret = ioctl(s->fd, KVM_GET_API_VERSION, 0);
    if (ret != KVM_API_VERSION) {
        error_setg(errp, "KVM API version %d, expected %d", ret,
                   KVM_API_VERSION);
        goto fail;
    }
    ret = ioctl(s->fd, KVM_GET_VCPU_MMAP_SIZE, 0);
    if (ret <= 0) {
        error_setg_errno(errp, errno, "KVM_GET_VCPU_MMAP_SIZE");
        goto fail;
    }
    s->run_size = ret;
    if (ms && ms->smp.cpus > 1) {
        int max = ioctl(s->fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
        if (max > 0 && ms->smp.cpus > (unsigned)max) {
            error_setg(errp, "-smp %u exceeds KVM's limit of %d vCPUs",
                       ms->smp.cpus, max);
            goto fail;
        }
    }
    do {
        s->vm_fd = ioctl(s->fd, KVM_CREATE_VM, 0);
    } while (s->vm_fd < 0 && errno == EINTR);
    if (s->vm_fd < 0) {
        error_setg_errno(errp, errno, "KVM_CREATE_VM");
        goto fail;
    }
    if (ioctl(s->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0) {
        error_setg_errno(errp, errno, "KVM_SET_TSS_ADDR");
        goto fail;
    }
    uint64_t idmap = KVM_IDENTITY_MAP_ADDR;
    if (ioctl(s->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0) {
        trace_kvm_no_identity_map(errno);
    }
    if (ioctl(s->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
        error_setg_errno(errp, errno, "KVM_CREATE_IRQCHIP");
        goto fail;
    }
    s->irqchip = true;
    /*
     * With the default speaker emulation, OUT2 read back through port 0x61
     * goes high within microseconds on some hosts, breaking the usual PIT
     * channel 2 TSC calibration; the "dummy" variant reports it correctly.
     */
    struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
    if (ioctl(s->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
        warn_report("kvm: no in-kernel PIT: %s", strerror(errno));
    }
    if (!kvm_get_supported_cpuid(s, errp)) {
        goto fail;
    }
    sigaction(KVM_SIG_KICK, &sa, NULL);

    kvm_state = g_steal_pointer(&s);
    if (!kvm_memory_init(kvm_state, errp) ||
        !kvm_irq_init(kvm_state, errp)) {
        s = g_steal_pointer(&kvm_state);
        kvm_memory_cleanup(s);
        kvm_irq_cleanup(s);
        goto fail;
    }
    kvm_vfio_init(kvm_state);
    kvm_coalesced_init(kvm_state);
    trace_kvm_init(kvm_state->run_size);
    return true;

fail:
    g_free(s->cpuid);
    if (s->vm_fd >= 0) {
        close(s->vm_fd);
    }
    close(s->fd);
    return false;
}

static void kvm_accel_cleanup(void)
{
    KVMState *s = kvm_state;

    if (!s) {
        return;
    }
    /*
     * Under the BQL, so each vCPU either sees the flag before entering the
     * guest or gets the kick (immediate_exit stays set) after.
     */
    bql_lock();
    g_mutex_lock(&kvm_run_lock);
    kvm_vcpus_quit = true;
    g_cond_broadcast(&kvm_run_cond);
    g_mutex_unlock(&kvm_run_lock);
    kvm_kick_all();
    bql_unlock();
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        KVMVCPU *cpu = &s->vcpus[i];

        if (cpu->thread) {
            g_thread_join(cpu->thread);
            cpu->thread = NULL;
        }
    }
    if (kvm_vmstate_entry) {
        qemu_del_vm_change_state_handler(kvm_vmstate_entry);
        kvm_vmstate_entry = NULL;
    }
    qemu_unregister_reset(kvm_reset_vcpus, NULL);
    kvm_coalesced_cleanup(s);
    kvm_vfio_cleanup(s);
    kvm_irq_cleanup(s);
    kvm_memory_cleanup(s);
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        KVMVCPU *cpu = &s->vcpus[i];

        if (cpu->run) {
            munmap(cpu->run, s->run_size);
        }
        if (cpu->fd >= 0) {
            close(cpu->fd);
        }
        g_free(cpu->reset_sregs);
    }
    g_free(s->vcpus);
    g_free(s->cpuid);
    close(s->vm_fd);
    close(s->fd);
    g_free(s);
    kvm_state = NULL;
}

static int kvm_vcpu_thread_id(unsigned index)
{
    KVMState *s = kvm_state;

    return s && index < s->nr_vcpus && s->vcpus[index].tid
           ? s->vcpus[index].host_tid : -1;
}

static void kvm_accel_class_init(ObjectClass *oc, void *data)
{
    AccelClass *ac = ACCEL_CLASS(oc);

    ac->name = "kvm";
    ac->init_machine = kvm_init_machine;
    ac->start_vcpus = kvm_start_vcpus;
    ac->cleanup = kvm_accel_cleanup;
    ac->vcpu_thread_id = kvm_vcpu_thread_id;
}

static const TypeInfo kvm_accel_type = {
    .name = TYPE_KVM_ACCEL,
    .parent = TYPE_ACCEL,
    .instance_size = sizeof(AccelState),
    .class_size = sizeof(AccelClass),
    .class_init = kvm_accel_class_init,
};

static void kvm_register_types(void)
{
    type_register_static(&kvm_accel_type);
    qmp_register_command_args("x-query-kvm", qmp_x_query_kvm, "", 0);
}

type_init(kvm_register_types)
