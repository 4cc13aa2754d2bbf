/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM_IOEVENTFD: a guest store to an MMIO address signals an eventfd in
 * the kernel instead of exiting to Conduit (virtio queue notifications).
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "qapi/error.h"
#include "system/kvm.h"
#include "kvm-internal.h"
#include "trace.h"

bool kvm_set_ioeventfd_mmio(int fd, uint64_t addr, unsigned size,
                            bool assign, Error **errp)
{
    struct kvm_ioeventfd ioe = {
        .addr = addr,
        .len = size,
        .fd = fd,
        .flags = assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN,
    };

    if (!kvm_state) {
        error_setg(errp, "ioeventfd needs the kvm accelerator");
        return false;
    }
    if (size != 0 && size != 1 && size != 2 && size != 4 && size != 8) {
        error_setg(errp, "ioeventfd length %u is not 0, 1, 2, 4 or 8", size);
        return false;
    }
    if (ioctl(kvm_state->vm_fd, KVM_IOEVENTFD, &ioe) < 0) {
        error_setg_errno(errp, errno, "KVM_IOEVENTFD %s fd %d at 0x%" PRIx64,
                         assign ? "assign" : "deassign", fd, addr);
        return false;
    }
    trace_kvm_ioeventfd(fd, addr, size, assign);
    return true;
}
