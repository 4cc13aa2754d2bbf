/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * x86 KVM state for migration: each vCPU's registers, system registers,
 * FPU/XSAVE, XCRs, LAPIC, MSRs (every one KVM lists and lets us read),
 * MP state, pending events and debug registers; VM-wide, the in-kernel
 * PIC pair, IOAPIC, PIT and kvmclock.
 *
 * The kernel's structs travel as raw buffers (the same uAPI on both
 * hosts); their sizes are checked by the table, their contents by KVM
 * itself when they are set, and any refusal fails the load with the
 * ioctl's name.  State is read while the VM is stopped (vCPUs outside
 * KVM_RUN) and written before it first runs; a loaded vCPU skips the
 * reset state it would otherwise load on its first run.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "migration/migration.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

#define KVM_STATE_MAX_MSRS 512

typedef struct KVMX86CPUState {
    KVMVCPU *cpu;
    struct kvm_regs regs;
    struct kvm_sregs sregs;
    struct kvm_xcrs xcrs;
    struct kvm_lapic_state lapic;
    struct kvm_vcpu_events events;
    struct kvm_mp_state mp;
    struct kvm_debugregs debugregs;
    uint8_t *xsave;             /* xsave_size bytes */
    uint32_t nmsrs;
    struct kvm_msr_entry msrs[KVM_STATE_MAX_MSRS];
} KVMX86CPUState;

typedef struct KVMX86VMState {
    struct kvm_clock_data clock;
    struct kvm_irqchip pic_master;
    struct kvm_irqchip pic_slave;
    struct kvm_irqchip ioapic;
    struct kvm_pit_state2 pit;
    bool has_pit;
} KVMX86VMState;

static uint32_t xsave_size;
static uint32_t *msr_list;      /* the MSRs this host lets us read */
static uint32_t nr_msr_list;
static KVMX86VMState vm_state;

static bool vcpu_ioctl(KVMVCPU *cpu, unsigned long req, void *arg,
                       const char *name, Error **errp)
{
    if (ioctl(cpu->fd, req, arg) < 0) {
        error_setg_errno(errp, errno, "vCPU %d: %s", cpu->index, name);
        return false;
    }
    return true;
}

/* KVM_GET_MSR_INDEX_LIST, kept to the MSRs that vCPU 0 reads. */
static void kvm_x86_probe_msrs(KVMState *s, KVMVCPU *cpu0)
{
    struct kvm_msr_list probe = { .nmsrs = 0 };
    g_autofree struct kvm_msr_list *list = NULL;
    g_autofree struct kvm_msrs *one = g_malloc0(sizeof(*one) +
                                                sizeof(struct kvm_msr_entry));

    if (ioctl(s->fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG) {
        return;
    }
    list = g_malloc0(sizeof(*list) + probe.nmsrs * sizeof(uint32_t));
    list->nmsrs = probe.nmsrs;
    if (ioctl(s->fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
        return;
    }
    msr_list = g_new0(uint32_t, MIN(list->nmsrs, KVM_STATE_MAX_MSRS));
    for (uint32_t i = 0; i < list->nmsrs &&
                         nr_msr_list < KVM_STATE_MAX_MSRS; i++) {
        one->nmsrs = 1;
        one->entries[0] = (struct kvm_msr_entry) {
            .index = list->indices[i],
        };
        if (ioctl(cpu0->fd, KVM_GET_MSRS, one) == 1) {
            msr_list[nr_msr_list++] = list->indices[i];
        }
    }
    trace_kvm_x86_state_msrs(list->nmsrs, nr_msr_list);
}

/* ---- a vCPU ---- */

static bool cpu_pre_save(void *opaque, Error **errp)
{
    KVMX86CPUState *st = opaque;
    KVMVCPU *cpu = st->cpu;
    g_autofree struct kvm_msrs *msrs = NULL;
    int n;

    if (!vcpu_ioctl(cpu, KVM_GET_REGS, &st->regs, "KVM_GET_REGS", errp) ||
        !vcpu_ioctl(cpu, KVM_GET_SREGS, &st->sregs, "KVM_GET_SREGS",
                    errp) ||
        !vcpu_ioctl(cpu, xsave_size > 4096 ? KVM_GET_XSAVE2 : KVM_GET_XSAVE,
                    st->xsave, "KVM_GET_XSAVE", errp) ||
        !vcpu_ioctl(cpu, KVM_GET_LAPIC, &st->lapic, "KVM_GET_LAPIC", errp) ||
        !vcpu_ioctl(cpu, KVM_GET_VCPU_EVENTS, &st->events,
                    "KVM_GET_VCPU_EVENTS", errp) ||
        !vcpu_ioctl(cpu, KVM_GET_MP_STATE, &st->mp, "KVM_GET_MP_STATE",
                    errp) ||
        !vcpu_ioctl(cpu, KVM_GET_DEBUGREGS, &st->debugregs,
                    "KVM_GET_DEBUGREGS", errp)) {
        return false;
    }
    if (ioctl(cpu->fd, KVM_GET_XCRS, &st->xcrs) < 0) {
        memset(&st->xcrs, 0, sizeof(st->xcrs));     /* no XSAVE on host */
    }
    msrs = g_malloc0(sizeof(*msrs) + nr_msr_list *
                     sizeof(struct kvm_msr_entry));
    msrs->nmsrs = nr_msr_list;
    for (uint32_t i = 0; i < nr_msr_list; i++) {
        msrs->entries[i].index = msr_list[i];
    }
    n = ioctl(cpu->fd, KVM_GET_MSRS, msrs);
    if (n != (int)nr_msr_list) {
        error_setg(errp, "vCPU %d: KVM_GET_MSRS read %d of %u MSRs",
                   cpu->index, n, nr_msr_list);
        return false;
    }
    st->nmsrs = nr_msr_list;
    memcpy(st->msrs, msrs->entries, n * sizeof(struct kvm_msr_entry));
    return true;
}

static bool cpu_post_load(void *opaque, int version_id, Error **errp)
{
    KVMX86CPUState *st = opaque;
    KVMVCPU *cpu = st->cpu;
    g_autofree struct kvm_msrs *msrs = NULL;
    int n;

    msrs = g_malloc0(sizeof(*msrs) + st->nmsrs *
                     sizeof(struct kvm_msr_entry));
    msrs->nmsrs = st->nmsrs;
    memcpy(msrs->entries, st->msrs, st->nmsrs * sizeof(struct kvm_msr_entry));
    if (!vcpu_ioctl(cpu, KVM_SET_SREGS, &st->sregs, "KVM_SET_SREGS", errp) ||
        !vcpu_ioctl(cpu, KVM_SET_REGS, &st->regs, "KVM_SET_REGS", errp) ||
        !vcpu_ioctl(cpu, KVM_SET_XSAVE, st->xsave, "KVM_SET_XSAVE", errp) ||
        !vcpu_ioctl(cpu, KVM_SET_LAPIC, &st->lapic, "KVM_SET_LAPIC", errp)) {
        return false;
    }
    if (st->xcrs.nr_xcrs &&
        !vcpu_ioctl(cpu, KVM_SET_XCRS, &st->xcrs, "KVM_SET_XCRS", errp)) {
        return false;
    }
    n = ioctl(cpu->fd, KVM_SET_MSRS, msrs);
    if (n != (int)st->nmsrs) {
        error_setg(errp, "vCPU %d: KVM_SET_MSRS refused MSR 0x%x (%d of %u "
                   "set): is the destination's CPU model the same?",
                   cpu->index, n >= 0 && (uint32_t)n < st->nmsrs ?
                   st->msrs[n].index : 0, n, st->nmsrs);
        return false;
    }
    st->events.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING |
                        KVM_VCPUEVENT_VALID_SIPI_VECTOR;
    if (!vcpu_ioctl(cpu, KVM_SET_MP_STATE, &st->mp, "KVM_SET_MP_STATE",
                    errp) ||
        !vcpu_ioctl(cpu, KVM_SET_VCPU_EVENTS, &st->events,
                    "KVM_SET_VCPU_EVENTS", errp) ||
        !vcpu_ioctl(cpu, KVM_SET_DEBUGREGS, &st->debugregs,
                    "KVM_SET_DEBUGREGS", errp)) {
        return false;
    }
    /* The migrated state, not the boot state, is what runs. */
    cpu->reset_pending = false;
    cpu->parked = false;
    trace_kvm_x86_state_cpu_loaded(cpu->index, st->regs.rip);
    return true;
}

static bool xsave_put(GByteArray *out, void *opaque, void *field,
                      Error **errp)
{
    KVMX86CPUState *st = opaque;

    mig_put_bytes(out, st->xsave, xsave_size);
    return true;
}

static bool xsave_get(MigBuf *b, void *opaque, void *field, Error **errp)
{
    KVMX86CPUState *st = opaque;

    if (mig_buf_left(b) != xsave_size) {
        error_setg(errp, "XSAVE area of %zu bytes, this host's is %u",
                   mig_buf_left(b), xsave_size);
        return false;
    }
    return mig_buf_get(b, st->xsave, xsave_size, errp);
}

static const VMStateInfo xsave_info = {
    .name = "xsave", .put = xsave_put, .get = xsave_get,
};

static bool msrs_put(GByteArray *out, void *opaque, void *field,
                     Error **errp)
{
    KVMX86CPUState *st = opaque;

    mig_put_u32(out, st->nmsrs);
    for (uint32_t i = 0; i < st->nmsrs; i++) {
        mig_put_u32(out, st->msrs[i].index);
        mig_put_u64(out, st->msrs[i].data);
    }
    return true;
}

static bool msrs_get(MigBuf *b, void *opaque, void *field, Error **errp)
{
    KVMX86CPUState *st = opaque;
    uint32_t n;

    if (!mig_buf_get_u32(b, &n, errp)) {
        return false;
    }
    if (n > KVM_STATE_MAX_MSRS) {
        error_setg(errp, "%u MSRs, at most %u", n, KVM_STATE_MAX_MSRS);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        st->msrs[i] = (struct kvm_msr_entry) { 0 };
        if (!mig_buf_get_u32(b, &st->msrs[i].index, errp) ||
            !mig_buf_get_u64(b, (uint64_t *)&st->msrs[i].data, errp)) {
            return false;
        }
    }
    st->nmsrs = n;
    return true;
}

static const VMStateInfo msrs_info = {
    .name = "msrs", .put = msrs_put, .get = msrs_get,
};

static const VMStateDescription vmstate_kvm_cpu = {
    .name = "kvm-x86-cpu",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = cpu_pre_save,
    .post_load = cpu_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BUFFER(regs, KVMX86CPUState),
        VMSTATE_BUFFER(sregs, KVMX86CPUState),
        VMSTATE_CUSTOM("xsave", KVMX86CPUState, xsave, xsave_info),
        VMSTATE_BUFFER(xcrs, KVMX86CPUState),
        VMSTATE_BUFFER(lapic, KVMX86CPUState),
        VMSTATE_BUFFER(events, KVMX86CPUState),
        VMSTATE_BUFFER(mp, KVMX86CPUState),
        VMSTATE_BUFFER(debugregs, KVMX86CPUState),
        VMSTATE_CUSTOM("msrs", KVMX86CPUState, msrs, msrs_info),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- the VM: irqchip, PIT, clock ---- */

static bool vm_ioctl(unsigned long req, void *arg, const char *name,
                     Error **errp)
{
    if (ioctl(kvm_state->vm_fd, req, arg) < 0) {
        error_setg_errno(errp, errno, "%s", name);
        return false;
    }
    return true;
}

static bool vm_pre_save(void *opaque, Error **errp)
{
    KVMX86VMState *st = opaque;

    st->pic_master.chip_id = KVM_IRQCHIP_PIC_MASTER;
    st->pic_slave.chip_id = KVM_IRQCHIP_PIC_SLAVE;
    st->ioapic.chip_id = KVM_IRQCHIP_IOAPIC;
    if (!vm_ioctl(KVM_GET_IRQCHIP, &st->pic_master, "KVM_GET_IRQCHIP",
                  errp) ||
        !vm_ioctl(KVM_GET_IRQCHIP, &st->pic_slave, "KVM_GET_IRQCHIP",
                  errp) ||
        !vm_ioctl(KVM_GET_IRQCHIP, &st->ioapic, "KVM_GET_IRQCHIP", errp) ||
        !vm_ioctl(KVM_GET_CLOCK, &st->clock, "KVM_GET_CLOCK", errp)) {
        return false;
    }
    st->has_pit = ioctl(kvm_state->vm_fd, KVM_GET_PIT2, &st->pit) == 0;
    return true;
}

static bool vm_post_load(void *opaque, int version_id, Error **errp)
{
    KVMX86VMState *st = opaque;
    struct kvm_clock_data clock = { .clock = st->clock.clock };

    if (st->pic_master.chip_id != KVM_IRQCHIP_PIC_MASTER ||
        st->pic_slave.chip_id != KVM_IRQCHIP_PIC_SLAVE ||
        st->ioapic.chip_id != KVM_IRQCHIP_IOAPIC) {
        error_setg(errp, "irqchip ids out of order");
        return false;
    }
    if (!vm_ioctl(KVM_SET_IRQCHIP, &st->pic_master, "KVM_SET_IRQCHIP",
                  errp) ||
        !vm_ioctl(KVM_SET_IRQCHIP, &st->pic_slave, "KVM_SET_IRQCHIP",
                  errp) ||
        !vm_ioctl(KVM_SET_IRQCHIP, &st->ioapic, "KVM_SET_IRQCHIP", errp)) {
        return false;
    }
    if (st->has_pit &&
        !vm_ioctl(KVM_SET_PIT2, &st->pit, "KVM_SET_PIT2", errp)) {
        return false;
    }
    /* The guest's clock goes on from where the source stopped it. */
    if (!vm_ioctl(KVM_SET_CLOCK, &clock, "KVM_SET_CLOCK", errp)) {
        return false;
    }
    trace_kvm_x86_state_vm_loaded(st->clock.clock);
    return true;
}

static const VMStateDescription vmstate_kvm_vm = {
    .name = "kvm-x86-vm",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = vm_pre_save,
    .post_load = vm_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_BUFFER(pic_master, KVMX86VMState),
        VMSTATE_BUFFER(pic_slave, KVMX86VMState),
        VMSTATE_BUFFER(ioapic, KVMX86VMState),
        VMSTATE_BUFFER(pit, KVMX86VMState),
        VMSTATE_BOOL(has_pit, KVMX86VMState),
        VMSTATE_BUFFER(clock, KVMX86VMState),
        VMSTATE_END_OF_LIST()
    },
};

void kvm_x86_state_register(KVMState *s)
{
    int sz;

    if (!s->nr_vcpus) {
        return;
    }
    sz = ioctl(s->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
    xsave_size = MAX(sz, (int)sizeof(struct kvm_xsave));
    kvm_x86_probe_msrs(s, &s->vcpus[0]);
    for (unsigned i = 0; i < s->nr_vcpus; i++) {
        KVMX86CPUState *st = g_new0(KVMX86CPUState, 1);
        g_autofree char *id = g_strdup_printf("cpu/%u", i);

        st->cpu = &s->vcpus[i];
        st->xsave = g_malloc0(xsave_size);
        vmstate_register(id, &vmstate_kvm_cpu, st);
    }
    vmstate_register("kvm-x86-vm", &vmstate_kvm_vm, &vm_state);
}
