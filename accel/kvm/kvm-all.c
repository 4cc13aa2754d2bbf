/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM accelerator: the VM, its memory and interrupts (kvm-memory.c,
 * kvm-irq.c), and one thread per vCPU.  What depends on the guest
 * architecture (irqchip, CPUID, registers at reset) is kvm-x86.c's,
 * behind kvm_arch_ops.
 *
 * A vCPU thread runs KVM_RUN without the BQL and takes it to dispatch an
 * exit (port I/O and MMIO into the address spaces, shutdown, errors).
 * Other threads get a vCPU out of the guest with a "kick": set
 * run->immediate_exit, then SIGUSR1, so a kick that lands just before
 * KVM_RUN is not lost.  vCPUs run only while the VM is running.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/kvm.h"
#include "system/accel.h"
#include "system/runstate.h"
#include "system/system.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "monitor/monitor.h"
#include "trace.h"

#define KVM_SIG_KICK SIGUSR1
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
    KVMDirtyRingStats rst;

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
    kvm_dirty_ring_get_stats(&rst);
    json_object_set_int_member(o, "dirty-ring-size",
                               kvm_state->dirty_ring_size);
    json_object_set_int_member(o, "dirty-ring-pages", rst.pages);
    json_object_set_int_member(o, "dirty-ring-full-exits", rst.full_exits);
    json_object_set_int_member(o, "dirty-ring-resets", rst.resets);
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

/*
 * The VM cannot continue.  With -no-shutdown it stays in the
 * internal-error state for inspection over QMP; otherwise Conduit exits
 * with status 1.
 */
static void kvm_vm_failed(KVMVCPU *cpu, const char *what)
{
    kvm_arch_ops.report_vcpu(cpu, what);
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
    case KVM_EXIT_DIRTY_RING_FULL:
        kvm_dirty_ring_full(cpu);
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
            kvm_arch_ops.reset_vcpu(kvm_state, cpu);
        }
        if (cpu->nmi_pending) {
            Error *err = NULL;

            cpu->nmi_pending = false;
            if (!kvm_arch_ops.inject_nmi(cpu, &err)) {
                warn_report_err(err);
            }
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
        if (!kvm_vcpus_running &&
            (cpu->run->exit_reason == KVM_EXIT_IO ||
             cpu->run->exit_reason == KVM_EXIT_MMIO)) {
            /*
             * Stopping: let KVM complete the access now (an immediate
             * exit re-enters only for that), so the registers a
             * migration reads are past the instruction.
             */
            __atomic_store_n(&cpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
            bql_unlock();
            ioctl(cpu->fd, KVM_RUN, 0);
            bql_lock();
        }
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

static bool kvm_create_vcpu(KVMState *s, KVMVCPU *cpu,
                            const CpuTopology *smp, Error **errp)
{
    cpu->fd = ioctl(s->vm_fd, KVM_CREATE_VCPU,
                    kvm_arch_ops.vcpu_id ? kvm_arch_ops.vcpu_id(smp, cpu->index)
                                         : (unsigned long)cpu->index);
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
    if (!kvm_dirty_ring_map_vcpu(s, cpu, errp)) {
        return false;
    }
    if (!kvm_arch_ops.init_vcpu(s, cpu, smp, errp)) {
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

    /* vCPUs from cpus up to max_cpus would be hot-plugged: not created. */
    s->nr_vcpus = topo->cpus ? topo->cpus : 1;
    s->vcpus = g_new0(KVMVCPU, s->nr_vcpus);
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        s->vcpus[i].index = i;
        s->vcpus[i].fd = -1;
        if (!kvm_create_vcpu(s, &s->vcpus[i], topo, errp)) {
            return false;
        }
    }
    qemu_register_reset(kvm_reset_vcpus, NULL);
    kvm_x86_state_register(s);
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

/* -accel kvm's properties. */
typedef struct KVMAccelState {
    AccelState parent_obj;
    uint32_t dirty_ring_size;
} KVMAccelState;

static uint32_t kvm_accel_dirty_ring_size(void)
{
    AccelState *a = current_accel();

    return a && object_dynamic_cast(OBJECT(a), TYPE_KVM_ACCEL) ?
           ((KVMAccelState *)a)->dirty_ring_size : 0;
}

static bool kvm_accel_check_props(AccelState *accel, Error **errp)
{
    KVMAccelState *k = (KVMAccelState *)accel;

    return kvm_dirty_ring_check_size(k->dirty_ring_size, getpagesize(),
                                     errp);
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
    /* Before any vCPU exists, as KVM requires. */
    if (!kvm_dirty_ring_enable(s, kvm_accel_dirty_ring_size(), errp)) {
        goto fail;
    }
    if (!kvm_arch_ops.init_vm(s, errp)) {
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
    kvm_arch_ops.cleanup_vm(s);
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
        kvm_dirty_ring_unmap_vcpu(s, cpu);
        if (cpu->fd >= 0) {
            close(cpu->fd);
        }
        kvm_arch_ops.cleanup_vcpu(cpu);
    }
    g_free(s->vcpus);
    kvm_arch_ops.cleanup_vm(s);
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
    ObjectProperty *p;

    p = object_class_property_add_uint(oc, "dirty-ring-size",
                                       offsetof(KVMAccelState,
                                                dirty_ring_size),
                                       sizeof(uint32_t), true);
    object_property_set_description(p, "entries of each vCPU's dirty ring "
                                       "(a power of two; 0: the dirty "
                                       "bitmap)");

    ac->name = "kvm";
    ac->init_machine = kvm_init_machine;
    ac->check_props = kvm_accel_check_props;
    ac->start_vcpus = kvm_start_vcpus;
    ac->cleanup = kvm_accel_cleanup;
    ac->vcpu_thread_id = kvm_vcpu_thread_id;
}

/*
 * inject-nmi: an NMI on every vCPU, as QEMU does on x86; each vCPU takes
 * it on its own thread before it next enters the guest (kicked now).
 */
static void qmp_inject_nmi(JsonObject *args, JsonNode **ret, Error **errp)
{
    if (!kvm_state || !kvm_state->nr_vcpus) {
        error_setg(errp, "inject-nmi: no vCPU runs (the accelerator is not "
                   "KVM)");
        return;
    }
    if (!kvm_arch_ops.inject_nmi) {
        error_setg(errp, "this feature or command is not currently "
                   "supported");
        return;
    }
    for (unsigned i = 0; i < kvm_state->nr_vcpus; i++) {
        kvm_state->vcpus[i].nmi_pending = true;
        kvm_vcpu_kick(&kvm_state->vcpus[i]);
    }
}

static const TypeInfo kvm_accel_types[] = {
    {
        .name = TYPE_KVM_ACCEL,
        .parent = TYPE_ACCEL,
        .instance_size = sizeof(KVMAccelState),
        .class_size = sizeof(AccelClass),
        .class_init = kvm_accel_class_init,
    },
};

DEFINE_TYPES(kvm_accel_types)

static void __attribute__((constructor)) kvm_qmp_register(void)
{
    qmp_register_command_args("x-query-kvm", qmp_x_query_kvm, "", 0);
    qmp_register_command_args("inject-nmi", qmp_inject_nmi, "", 0);
}
