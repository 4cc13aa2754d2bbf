/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's side of device passthrough: the hooks vfio installs nothing
 * without.
 *
 * IRQ bypass: while an MSI-X vector is deliverable, its eventfd is bound
 * to a GSI route with KVM_IRQFD, so the device's completion interrupt goes
 * straight into the in-kernel LAPIC and never wakes Conduit.  When the
 * vector is masked or released, vfio-pci detaches it and its own eventfd
 * handler takes over (pending bits, lazy PBA).
 *
 * Groups: the kernel backend registers each VFIO group with KVM's VFIO
 * pseudo-device, which some hosts need for coherent DMA and for the
 * kernel's irq bypass.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/kvm.h"
#include "hw/vfio/irq-bypass.h"
#include "hw/vfio/vfio-kernel.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

/* eventfd -> GSI of every vector currently on the fast path. */
static GHashTable *kvm_vfio_routes;
static int kvm_vfio_dev_fd = -1;

static bool kvm_vfio_attach(PCIDevice *dev, unsigned int vector, int fd,
                            MSIMessage msg)
{
    Error *err = NULL;
    int virq;

    if (!kvm_msi_via_irqfd_enabled() ||
        g_hash_table_contains(kvm_vfio_routes, GINT_TO_POINTER(fd))) {
        return false;
    }
    virq = kvm_irqchip_add_msi_route(msg.address, msg.data, &err);
    if (virq < 0) {
        goto fail;
    }
    if (!kvm_irqchip_commit_routes(&err) ||
        !kvm_irqfd_fd(fd, virq, true, &err)) {
        kvm_irqchip_release_virq(virq);
        goto fail;
    }
    g_hash_table_insert(kvm_vfio_routes, GINT_TO_POINTER(fd),
                        GINT_TO_POINTER(virq));
    trace_kvm_vfio_attach(vector, fd, virq);
    return true;

fail:
    /* The slow path still delivers it: say why once, not per vector. */
    warn_report_once("kvm: MSI-X vector %u stays on the slow path: %s",
                     vector, error_get_pretty(err));
    error_free(err);
    return false;
}

static void kvm_vfio_detach(PCIDevice *dev, unsigned int vector, int fd)
{
    gpointer value;
    Error *err = NULL;
    int virq;

    if (!kvm_vfio_routes ||
        !g_hash_table_lookup_extended(kvm_vfio_routes, GINT_TO_POINTER(fd),
                                      NULL, &value)) {
        return;
    }
    virq = GPOINTER_TO_INT(value);
    g_hash_table_remove(kvm_vfio_routes, GINT_TO_POINTER(fd));
    if (!kvm_irqfd_fd(fd, virq, false, &err)) {
        warn_report_err(err);
        err = NULL;
    }
    kvm_irqchip_release_virq(virq);
    if (!kvm_irqchip_commit_routes(&err)) {
        warn_report_err(err);
    }
    trace_kvm_vfio_detach(vector, fd, virq);
}

static const VFIOPCIIrqBypassOps kvm_vfio_bypass_ops = {
    .attach = kvm_vfio_attach,
    .detach = kvm_vfio_detach,
};

static bool kvm_vfio_group_attr(int group_fd, uint64_t op, Error **errp)
{
    int32_t fd = group_fd;
    struct kvm_device_attr attr = {
        .group = KVM_DEV_VFIO_GROUP,
        .attr = op,
        .addr = (uintptr_t)&fd,
    };

    if (kvm_vfio_dev_fd < 0) {
        struct kvm_create_device cd = { .type = KVM_DEV_TYPE_VFIO };

        if (ioctl(kvm_state->vm_fd, KVM_CREATE_DEVICE, &cd) < 0) {
            error_setg_errno(errp, errno, "KVM_CREATE_DEVICE (vfio)");
            return false;
        }
        kvm_vfio_dev_fd = cd.fd;
    }
    if (ioctl(kvm_vfio_dev_fd, KVM_SET_DEVICE_ATTR, &attr) < 0) {
        error_setg_errno(errp, errno, "KVM vfio device: %s group fd %d",
                         op == KVM_DEV_VFIO_GROUP_ADD ? "add" : "delete",
                         group_fd);
        return false;
    }
    return true;
}

static bool kvm_vfio_group_add(int group_fd, Error **errp)
{
    return kvm_vfio_group_attr(group_fd, KVM_DEV_VFIO_GROUP_ADD, errp);
}

static void kvm_vfio_group_del(int group_fd)
{
    Error *err = NULL;

    if (!kvm_vfio_group_attr(group_fd, KVM_DEV_VFIO_GROUP_DEL, &err)) {
        warn_report_err(err);
    }
}

static const VFIOKvmGroupOps kvm_vfio_group_ops = {
    .add = kvm_vfio_group_add,
    .del = kvm_vfio_group_del,
};

void kvm_vfio_init(KVMState *s)
{
    kvm_vfio_routes = g_hash_table_new(NULL, NULL);
    vfio_pci_set_irq_bypass_ops(&kvm_vfio_bypass_ops);
    vfio_kernel_set_kvm_group_ops(&kvm_vfio_group_ops);
}

void kvm_vfio_cleanup(KVMState *s)
{
    vfio_pci_set_irq_bypass_ops(NULL);
    vfio_kernel_set_kvm_group_ops(NULL);
    g_clear_pointer(&kvm_vfio_routes, g_hash_table_destroy);
    if (kvm_vfio_dev_fd >= 0) {
        close(kvm_vfio_dev_fd);
        kvm_vfio_dev_fd = -1;
    }
}
