/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel VFIO backend's device ops: ioctls and pread/pwrite on the
 * device fd that the group hands out.
 *
 * Everything the kernel returns is checked before use (argsz, indexes,
 * counts, capability chains), so a misbehaving or future kernel yields an
 * Error rather than a crash.  MSI and MSI-X are indexes whose vector count
 * the kernel cannot change while enabled (VFIO_IRQ_INFO_NORESIZE): growing
 * them here means disabling and re-enabling with every vector's eventfd,
 * which the backend remembers for that purpose.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "vfio-ioctl.h"
#include "vfio-user/protocol.h"
#include "hw/vfio/vfio-kernel.h"
#include "qemu/vfio-region-info.h"
#include "trace.h"

/* Bounds on what a PCI device's info may claim. */
#define KDEV_MAX_REGIONS 64
#define KDEV_MAX_IRQS 32
#define KDEV_MAX_IRQ_COUNT 2048
#define REGION_INFO_MAX_LEN (64 * 1024)

typedef struct VFIOKernelRegion {
    bool known;
    uint32_t flags;
    uint64_t size;
    uint64_t offset;            /* inside the device fd */
} VFIOKernelRegion;

typedef struct VFIOKernelIrq {
    bool known;
    uint32_t flags;             /* VFIO_IRQ_INFO_* */
    uint32_t count;             /* the kernel's maximum */
    uint32_t enabled;           /* vectors armed with eventfds, 0: off */
    int *fds;                   /* their eventfds (the caller's), -1: none */
    int unmask_fd;              /* INTx: the unmask eventfd, -1: none */
    bool suspended;             /* INTx: off while MSI/MSI-X is armed */
} VFIOKernelIrq;

typedef struct VFIOKernelDevice {
    char *name;                 /* the BDF */
    VFIOGroup *group;
    int fd;
    uint32_t num_regions;
    uint32_t num_irqs;
    VFIOKernelRegion *regions;
    VFIOKernelIrq *irqs;
    bool listed;                /* in group->devices */
} VFIOKernelDevice;

static VFIOKernelDevice *kdev(VFIODevice *vbasedev)
{
    return vbasedev->backend;
}

/* Parses "DDDD:BB:DD.F" or "BB:DD.F"; the whole string must match. */
static bool parse_host(const char *host, unsigned int *domain,
                       unsigned int *bus, unsigned int *slot,
                       unsigned int *func)
{
    int n = 0;

    if (sscanf(host, "%4x:%2x:%2x.%1x%n", domain, bus, slot, func, &n) == 4 &&
        !host[n]) {
        return true;
    }
    *domain = 0;
    n = 0;
    return sscanf(host, "%2x:%2x.%1x%n", bus, slot, func, &n) == 3 &&
           !host[n];
}

char *vfio_kernel_host_to_sysfsdev(const char *host, Error **errp)
{
    unsigned int domain, bus, slot, func;

    if (!host || !parse_host(host, &domain, &bus, &slot, &func) ||
        slot > 0x1f || func > 7) {
        error_setg(errp, "vfio: host '%s' is not a PCI address"
                   " (DDDD:BB:DD.F)", host ? host : "");
        return NULL;
    }
    return g_strdup_printf(VFIO_KERNEL_SYSFS_PCI "/%04x:%02x:%02x.%x",
                           domain, bus, slot, func);
}

/* The group number behind @sysfsdev's iommu_group link. */
static bool sysfsdev_group(const char *sysfsdev, const char *name,
                           int *groupid, Error **errp)
{
    g_autofree char *link = g_build_filename(sysfsdev, "iommu_group", NULL);
    g_autofree char *base = NULL;
    char target[PATH_MAX];
    ssize_t len;
    char *end;
    long id;

    len = vfio_ioctl_ops()->readlink(link, target, sizeof(target) - 1);
    if (len < 0) {
        int err = errno;

        if (err == ENOENT &&
            vfio_ioctl_ops()->access(sysfsdev, F_OK) < 0) {
            error_setg_errno(errp, err, "vfio %s: no such host device",
                             name);
            return false;
        }
        error_setg_errno(errp, err, "vfio %s: no IOMMU group (%s)", name,
                         link);
        error_append_hint(errp, "Is the IOMMU enabled (intel_iommu=on or"
                          " amd_iommu=on on the host's kernel command"
                          " line)?\n");
        return false;
    }
    target[len] = '\0';
    base = g_path_get_basename(target);
    errno = 0;
    id = strtol(base, &end, 10);
    if (errno || end == base || *end || id < 0 || id > INT_MAX) {
        error_setg(errp, "vfio %s: IOMMU group link %s -> %s names no group"
                   " number", name, link, target);
        return false;
    }
    *groupid = id;
    return true;
}

static bool kernel_get_device_info(VFIODevice *vbasedev,
                                   struct vfio_device_info *info,
                                   Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    struct vfio_device_info rep = { .argsz = sizeof(rep) };
    const size_t minsz = offsetof(struct vfio_device_info, cap_offset);

    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_GET_INFO, &rep) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot get the device info",
                         d->name);
        return false;
    }
    /* A larger argsz only announces capabilities, which are unused. */
    if (rep.argsz < minsz) {
        error_setg(errp, "vfio %s: device info reply has a bad argsz (%u)",
                   d->name, rep.argsz);
        return false;
    }
    if (rep.num_regions > KDEV_MAX_REGIONS || rep.num_irqs > KDEV_MAX_IRQS) {
        error_setg(errp, "vfio %s: implausible device info (%u regions,"
                   " %u irq indexes)", d->name, rep.num_regions,
                   rep.num_irqs);
        return false;
    }
    *info = (struct vfio_device_info) {
        .argsz = sizeof(*info),
        .flags = rep.flags,
        .num_regions = rep.num_regions,
        .num_irqs = rep.num_irqs,
    };
    return true;
}

static bool kernel_get_region_info(VFIODevice *vbasedev, uint32_t index,
                                   struct vfio_region_info **info, int *fd,
                                   Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    uint32_t argsz = sizeof(struct vfio_region_info);
    const size_t minsz = offsetof(struct vfio_region_info, offset) +
                         sizeof(uint64_t);
    g_autofree struct vfio_region_info *buf = NULL;
    uint32_t held;
    int attempt;

    if (index >= d->num_regions) {
        error_setg(errp, "vfio %s: no region %u (the device has %u)",
                   d->name, index, d->num_regions);
        return false;
    }
    for (attempt = 0; ; attempt++) {
        g_free(buf);
        buf = g_malloc0(argsz);
        buf->argsz = argsz;
        buf->index = index;
        if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_GET_REGION_INFO,
                                    buf) < 0) {
            error_setg_errno(errp, errno, "vfio %s: cannot get region %u"
                             " info", d->name, index);
            return false;
        }
        if (buf->argsz < minsz) {
            error_setg(errp, "vfio %s: region %u info reply has a bad argsz"
                       " (%u)", d->name, index, buf->argsz);
            return false;
        }
        if (buf->index != index) {
            error_setg(errp, "vfio %s: asked for region %u info, got region"
                       " %u", d->name, index, buf->index);
            return false;
        }
        if (buf->argsz <= argsz) {
            break;
        }
        /* The capability chain did not fit: ask again, once, bounded. */
        if (attempt || buf->argsz > REGION_INFO_MAX_LEN) {
            error_setg(errp, "vfio %s: region %u info needs %u bytes"
                       " (limit %u)", d->name, index, buf->argsz,
                       attempt ? argsz : REGION_INFO_MAX_LEN);
            return false;
        }
        argsz = buf->argsz;
    }
    held = argsz;
    /* What the kernel filled is argsz; the rest of our buffer is zeros. */
    if (buf->argsz < held && buf->argsz >= sizeof(*buf)) {
        held = buf->argsz;
    }
    if (buf->size && buf->offset + buf->size < buf->offset) {
        error_setg(errp, "vfio %s: region %u at 0x%" PRIx64 " of 0x%" PRIx64
                   " bytes wraps", d->name, index, (uint64_t)buf->offset,
                   (uint64_t)buf->size);
        return false;
    }
    if (!vfio_region_info_check(buf, held, errp)) {
        error_prepend(errp, "vfio %s: ", d->name);
        return false;
    }
    buf->argsz = held;
    d->regions[index] = (VFIOKernelRegion) {
        .known = true, .flags = buf->flags, .size = buf->size,
        .offset = buf->offset,
    };
    trace_vfio_kernel_region_info(d->name, index, buf->flags, buf->size,
                                  buf->offset);
    *fd = -1;
    *info = g_steal_pointer(&buf);
    return true;
}

/* The region's offset in the device fd, read once. */
static VFIOKernelRegion *kernel_region(VFIODevice *vbasedev, uint32_t index,
                                       Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    if (index < d->num_regions && !d->regions[index].known) {
        g_autofree struct vfio_region_info *info = NULL;
        int fd;

        if (!kernel_get_region_info(vbasedev, index, &info, &fd, errp)) {
            return NULL;
        }
    }
    if (index >= d->num_regions) {
        error_setg(errp, "vfio %s: no region %u", d->name, index);
        return NULL;
    }
    return &d->regions[index];
}

static bool region_access(VFIODevice *vbasedev, uint32_t index, uint64_t off,
                          uint32_t size, void *buf, bool write, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    VFIOKernelRegion *r = kernel_region(vbasedev, index, errp);
    uint32_t flag = write ? VFIO_REGION_INFO_FLAG_WRITE
                          : VFIO_REGION_INFO_FLAG_READ;
    uint32_t done = 0;

    if (!r) {
        return false;
    }
    if (!(r->flags & flag) || off > r->size || size > r->size - off) {
        error_setg(errp, "vfio %s: cannot %s %u bytes at 0x%" PRIx64
                   " of region %u (size 0x%" PRIx64 ")", d->name,
                   write ? "write" : "read", size, off, index, r->size);
        return false;
    }
    while (done < size) {
        ssize_t n = write ?
            vfio_ioctl_ops()->pwrite(d->fd, (uint8_t *)buf + done,
                                     size - done, r->offset + off + done) :
            vfio_ioctl_ops()->pread(d->fd, (uint8_t *)buf + done,
                                    size - done, r->offset + off + done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            error_setg_errno(errp, n < 0 ? errno : EIO,
                             "vfio %s: %s of %u bytes at 0x%" PRIx64
                             " of region %u failed", d->name,
                             write ? "write" : "read", size, off, index);
            return false;
        }
        done += n;
    }
    return true;
}

static bool kernel_region_read(VFIODevice *vbasedev, uint32_t index,
                               uint64_t off, uint32_t size, void *buf,
                               Error **errp)
{
    return region_access(vbasedev, index, off, size, buf, false, errp);
}

static bool kernel_region_write(VFIODevice *vbasedev, uint32_t index,
                                uint64_t off, uint32_t size, const void *buf,
                                bool post, Error **errp)
{
    return region_access(vbasedev, index, off, size, (void *)buf, true, errp);
}

static bool kernel_get_irq_info(VFIODevice *vbasedev,
                                struct vfio_irq_info *info, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    struct vfio_irq_info rep = { .argsz = sizeof(rep), .index = info->index };
    VFIOKernelIrq *irq;

    if (info->index >= d->num_irqs) {
        error_setg(errp, "vfio %s: no irq index %u (the device has %u)",
                   d->name, info->index, d->num_irqs);
        return false;
    }
    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_GET_IRQ_INFO, &rep) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot get irq index %u"
                         " info", d->name, info->index);
        return false;
    }
    if (rep.argsz < sizeof(rep) || rep.index != info->index ||
        rep.count > KDEV_MAX_IRQ_COUNT) {
        error_setg(errp, "vfio %s: bad irq info reply for index %u (argsz"
                   " %u, index %u, count %u)", d->name, info->index,
                   rep.argsz, rep.index, rep.count);
        return false;
    }
    irq = &d->irqs[info->index];
    irq->known = true;
    irq->flags = rep.flags;
    irq->count = rep.count;
    info->flags = rep.flags;
    info->count = rep.count;
    return true;
}

/* SET_IRQS with eventfds (or -1s) for [start, start + count). */
static bool irq_set_eventfds(VFIOKernelDevice *d, uint32_t index,
                             uint32_t flags, uint32_t start, uint32_t count,
                             const int *fds, Error **errp)
{
    size_t argsz = sizeof(struct vfio_irq_set) + count * sizeof(int32_t);
    g_autofree struct vfio_irq_set *set = g_malloc0(argsz);
    uint32_t i;

    set->argsz = argsz;
    set->flags = VFIO_IRQ_SET_DATA_EVENTFD | flags;
    set->index = index;
    set->start = start;
    set->count = count;
    for (i = 0; i < count; i++) {
        int32_t fd = fds[i];

        memcpy(set->data + i * sizeof(fd), &fd, sizeof(fd));
    }
    trace_vfio_kernel_set_irqs(d->name, index, set->flags, start, count);
    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_SET_IRQS, set) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot set %u eventfds from"
                         " %u of irq index %u", d->name, count, start, index);
        return false;
    }
    return true;
}

/* Disables a whole index, as DATA_NONE|TRIGGER with count 0 does. */
static bool irq_disable(VFIOKernelDevice *d, uint32_t index, Error **errp)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = index,
    };

    trace_vfio_kernel_set_irqs(d->name, index, set.flags, 0, 0);
    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_SET_IRQS, &set) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot disable irq index %u",
                         d->name, index);
        return false;
    }
    return true;
}

/*
 * Trigger eventfds for @index.  While enabled, a NORESIZE index cannot
 * grow in place: it is disabled and re-enabled with the eventfds of
 * every vector kept so far plus the new ones.
 */
static bool irq_set_triggers(VFIOKernelDevice *d, uint32_t index,
                             uint32_t start, uint32_t count, const int *fds,
                             Error **errp)
{
    VFIOKernelIrq *irq = &d->irqs[index];
    uint32_t want = start + count;
    g_autofree int *all = NULL;
    uint32_t i;

    if (irq->known && want > irq->count) {
        error_setg(errp, "vfio %s: irq index %u has %u vectors, %u asked",
                   d->name, index, irq->count, want);
        return false;
    }
    if (irq->enabled && want <= irq->enabled) {
        if (!irq_set_eventfds(d, index, VFIO_IRQ_SET_ACTION_TRIGGER, start,
                              count, fds, errp)) {
            return false;
        }
        memcpy(irq->fds + start, fds, count * sizeof(int));
        return true;
    }

    all = g_new(int, want);
    for (i = 0; i < want; i++) {
        all[i] = i < irq->enabled ? irq->fds[i] : -1;
    }
    memcpy(all + start, fds, count * sizeof(int));
    if (irq->enabled && (irq->flags & VFIO_IRQ_INFO_NORESIZE)) {
        trace_vfio_kernel_irq_resize(d->name, index, irq->enabled, want);
        if (!irq_disable(d, index, errp)) {
            return false;
        }
        irq->enabled = 0;
    }
    if (irq->enabled) {
        /* Growing in place: only the new vectors need their eventfds. */
        if (!irq_set_eventfds(d, index, VFIO_IRQ_SET_ACTION_TRIGGER,
                              start, count, fds, errp)) {
            return false;
        }
    } else if (!irq_set_eventfds(d, index, VFIO_IRQ_SET_ACTION_TRIGGER, 0,
                                 want, all, errp)) {
        g_free(irq->fds);
        irq->fds = NULL;
        return false;
    }
    g_free(irq->fds);
    irq->fds = g_steal_pointer(&all);
    irq->enabled = want;
    return true;
}

static bool irq_is_msi(uint32_t index)
{
    return index == VFIO_PCI_MSI_IRQ_INDEX || index == VFIO_PCI_MSIX_IRQ_INDEX;
}

/* MSI or MSI-X armed in the kernel. */
static bool msi_active(VFIOKernelDevice *d)
{
    uint32_t i;

    for (i = 0; i < d->num_irqs; i++) {
        if (irq_is_msi(i) && d->irqs[i].enabled) {
            return true;
        }
    }
    return false;
}

/*
 * The kernel arms one interrupt type at a time, as PCI does: INTx is off
 * while MSI or MSI-X is enabled.  The device model may keep INTx set up
 * throughout, so INTx is suspended (disabled in the kernel, its eventfds
 * kept) when MSI/MSI-X is armed, and re-armed when both are off again.
 */
static bool intx_suspend(VFIOKernelDevice *d, Error **errp)
{
    VFIOKernelIrq *intx = &d->irqs[VFIO_PCI_INTX_IRQ_INDEX];

    if (d->num_irqs <= VFIO_PCI_INTX_IRQ_INDEX || !intx->enabled ||
        intx->suspended) {
        return true;
    }
    if (!irq_disable(d, VFIO_PCI_INTX_IRQ_INDEX, errp)) {
        return false;
    }
    intx->suspended = true;
    trace_vfio_kernel_intx_suspend(d->name, true);
    return true;
}

static bool intx_resume(VFIOKernelDevice *d, Error **errp)
{
    VFIOKernelIrq *intx = &d->irqs[VFIO_PCI_INTX_IRQ_INDEX];

    if (d->num_irqs <= VFIO_PCI_INTX_IRQ_INDEX || !intx->suspended ||
        msi_active(d)) {
        return true;
    }
    intx->suspended = false;
    trace_vfio_kernel_intx_suspend(d->name, false);
    if (!irq_set_eventfds(d, VFIO_PCI_INTX_IRQ_INDEX,
                          VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, intx->fds,
                          errp)) {
        intx->enabled = 0;
        return false;
    }
    return intx->unmask_fd < 0 ||
           irq_set_eventfds(d, VFIO_PCI_INTX_IRQ_INDEX,
                            VFIO_IRQ_SET_ACTION_UNMASK, 0, 1,
                            &intx->unmask_fd, errp);
}

static void irq_forget(VFIOKernelIrq *irq)
{
    irq->enabled = 0;
    irq->suspended = false;
    irq->unmask_fd = -1;
    g_free(irq->fds);
    irq->fds = NULL;
}

/* INTx requests while suspended only update what resume will arm. */
static bool intx_set_suspended(VFIOKernelDevice *d,
                               const struct vfio_irq_set *irq_set,
                               const int *fds)
{
    VFIOKernelIrq *intx = &d->irqs[VFIO_PCI_INTX_IRQ_INDEX];
    uint32_t data = irq_set->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    uint32_t action = irq_set->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;

    trace_vfio_kernel_set_irqs_suspended(d->name, irq_set->flags,
                                         irq_set->count);
    if (action == VFIO_IRQ_SET_ACTION_TRIGGER) {
        if (data == VFIO_IRQ_SET_DATA_EVENTFD && irq_set->count == 1) {
            intx->fds[0] = fds[0];
        } else if (data == VFIO_IRQ_SET_DATA_NONE && irq_set->count == 0) {
            irq_forget(intx);
        }
    } else if (action == VFIO_IRQ_SET_ACTION_UNMASK &&
               data == VFIO_IRQ_SET_DATA_EVENTFD && irq_set->count == 1) {
        intx->unmask_fd = fds[0];
    }
    /* Mask and unmask have nothing to act on while INTx is off. */
    return true;
}

static bool kernel_set_irqs(VFIODevice *vbasedev,
                            const struct vfio_irq_set *irq_set,
                            const int *fds, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    uint32_t data = irq_set->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    uint32_t action = irq_set->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
    uint32_t index = irq_set->index;
    VFIOKernelIrq *irq;

    if (index >= d->num_irqs) {
        error_setg(errp, "vfio %s: no irq index %u (the device has %u)",
                   d->name, index, d->num_irqs);
        return false;
    }
    if (irq_set->count > KDEV_MAX_IRQ_COUNT ||
        irq_set->start > KDEV_MAX_IRQ_COUNT - irq_set->count) {
        error_setg(errp, "vfio %s: irq index %u: vectors %u+%u out of range",
                   d->name, index, irq_set->start, irq_set->count);
        return false;
    }
    if (data == VFIO_IRQ_SET_DATA_EVENTFD && !fds && irq_set->count) {
        error_setg(errp, "vfio %s: eventfds missing for irq index %u",
                   d->name, index);
        return false;
    }
    if (data == VFIO_IRQ_SET_DATA_BOOL &&
        irq_set->argsz < sizeof(*irq_set) + irq_set->count) {
        error_setg(errp, "vfio %s: irq index %u: %u bools in argsz %u",
                   d->name, index, irq_set->count, irq_set->argsz);
        return false;
    }
    irq = &d->irqs[index];
    if (!irq->known) {
        struct vfio_irq_info info = { .index = index };

        if (!kernel_get_irq_info(vbasedev, &info, errp)) {
            return false;
        }
    }
    if (index == VFIO_PCI_INTX_IRQ_INDEX && irq->suspended) {
        return intx_set_suspended(d, irq_set, fds);
    }

    if (data == VFIO_IRQ_SET_DATA_EVENTFD) {
        if (action == VFIO_IRQ_SET_ACTION_TRIGGER && irq_set->count) {
            if (irq_is_msi(index) && !irq->enabled &&
                !intx_suspend(d, errp)) {
                return false;
            }
            return irq_set_triggers(d, index, irq_set->start, irq_set->count,
                                    fds, errp);
        }
        if (!irq_set_eventfds(d, index, action, irq_set->start,
                              irq_set->count, fds, errp)) {
            return false;
        }
        if (index == VFIO_PCI_INTX_IRQ_INDEX &&
            action == VFIO_IRQ_SET_ACTION_UNMASK && irq_set->count == 1) {
            irq->unmask_fd = fds[0];
        }
        return true;
    }

    {
        size_t len = sizeof(*irq_set) +
                     (data == VFIO_IRQ_SET_DATA_BOOL ? irq_set->count : 0);
        g_autofree struct vfio_irq_set *set = g_malloc(len);

        memcpy(set, irq_set, len);
        set->argsz = len;
        trace_vfio_kernel_set_irqs(d->name, index, set->flags, set->start,
                                   set->count);
        if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_SET_IRQS, set) < 0) {
            error_setg_errno(errp, errno, "vfio %s: SET_IRQS on irq index %u"
                             " failed", d->name, index);
            return false;
        }
    }
    if (data == VFIO_IRQ_SET_DATA_NONE &&
        action == VFIO_IRQ_SET_ACTION_TRIGGER && irq_set->count == 0) {
        irq_forget(irq);
        if (irq_is_msi(index)) {
            return intx_resume(d, errp);
        }
    }
    return true;
}

static bool kernel_reset(VFIODevice *vbasedev, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    if (!(vbasedev->flags & VFIO_DEVICE_FLAGS_RESET)) {
        error_setg(errp, "vfio %s: the device has no reset", d->name);
        return false;
    }
    trace_vfio_kernel_reset(d->name);
    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_RESET, NULL) < 0) {
        error_setg_errno(errp, errno, "vfio %s: reset failed", d->name);
        return false;
    }
    return true;
}

static bool kernel_dma_map(VFIODevice *vbasedev, uint64_t iova,
                           uint64_t size, int fd, uint64_t fd_offset,
                           void *vaddr, bool readonly, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    return vfio_container_dma_map(d->group->container, d->name, iova, size,
                                  vaddr, readonly, errp);
}

static bool kernel_dma_unmap(VFIODevice *vbasedev, uint64_t iova,
                             uint64_t size, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    return vfio_container_dma_unmap(d->group->container, d->name, iova, size,
                                    errp);
}

static void kernel_device_free(VFIOKernelDevice *d)
{
    uint32_t i;

    if (d->fd >= 0) {
        vfio_ioctl_ops()->close(d->fd);
    }
    if (d->listed) {
        d->group->devices = g_list_remove(d->group->devices, d->name);
    }
    vfio_group_put(d->group);
    for (i = 0; i < d->num_irqs; i++) {
        g_free(d->irqs[i].fds);
    }
    g_free(d->irqs);
    g_free(d->regions);
    g_free(d->name);
    g_free(d);
}

static void kernel_close(VFIODevice *vbasedev)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    if (!d) {
        return;
    }
    trace_vfio_kernel_close(d->name);
    kernel_device_free(d);
    vbasedev->backend = NULL;
    vbasedev->fd = -1;
}

/* ---- Migration: the v2 uAPI (VFIO_DEVICE_FEATURE and a data fd) ---- */

/*
 * What <linux/vfio.h> 6.2+ declares for DMA logging, where bookworm's
 * 6.1 headers stop: the kernel takes the ranges and the bitmap by
 * pointer (vfio-user carries them inline).
 */
typedef struct KernelDmaLoggingControl {
    uint64_t page_size;
    uint32_t num_ranges;
    uint32_t reserved;
    uint64_t ranges;            /* user pointer to {iova, length} pairs */
} KernelDmaLoggingControl;

typedef struct KernelDmaLoggingReport {
    uint64_t iova;
    uint64_t length;
    uint64_t page_size;
    uint64_t bitmap;            /* user pointer */
} KernelDmaLoggingReport;

static bool kernel_feature(VFIOKernelDevice *d, uint32_t flags,
                           const void *in, size_t in_len, void *out,
                           size_t out_len, bool *not_supported,
                           Error **errp)
{
    size_t len = sizeof(struct vfio_device_feature) + MAX(in_len, out_len);
    g_autofree struct vfio_device_feature *f = g_malloc0(len);

    if (not_supported) {
        *not_supported = false;
    }
    f->argsz = len;
    f->flags = flags;
    if (in_len) {
        memcpy(f->data, in, in_len);
    }
    if (vfio_ioctl_ops()->ioctl(d->fd, VFIO_DEVICE_FEATURE, f) < 0) {
        if (not_supported) {
            *not_supported = errno == ENOTTY || errno == EINVAL ||
                             errno == EOPNOTSUPP;
        }
        error_setg_errno(errp, errno, "vfio %s: VFIO_DEVICE_FEATURE 0x%x",
                         d->name, flags);
        return false;
    }
    if (out_len) {
        memcpy(out, f->data, out_len);
    }
    return true;
}

static bool kernel_device_feature(VFIODevice *vbasedev, uint32_t flags,
                                  void *data, size_t in_len, size_t out_len,
                                  bool *not_supported, Error **errp)
{
    return kernel_feature(kdev(vbasedev), flags, data, in_len, data,
                          out_len, not_supported, errp);
}

static bool kernel_mig_data_read(VFIODevice *vbasedev, int data_fd,
                                 void *buf, size_t size, size_t *got,
                                 Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);
    ssize_t n;

    if (data_fd < 0) {
        error_setg(errp, "vfio %s: no migration data fd", d->name);
        return false;
    }
    do {
        n = vfio_ioctl_ops()->read(data_fd, buf, size);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        error_setg_errno(errp, errno, "vfio %s: reading migration data",
                         d->name);
        return false;
    }
    *got = n;
    return true;
}

static bool kernel_mig_data_write(VFIODevice *vbasedev, int data_fd,
                                  const void *buf, size_t size, Error **errp)
{
    VFIOKernelDevice *d = kdev(vbasedev);

    if (data_fd < 0) {
        error_setg(errp, "vfio %s: no migration data fd", d->name);
        return false;
    }
    while (size) {
        ssize_t n = vfio_ioctl_ops()->write(data_fd, buf, size);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            error_setg_errno(errp, n < 0 ? errno : EIO, "vfio %s: writing "
                             "migration data", d->name);
            return false;
        }
        buf = (const uint8_t *)buf + n;
        size -= MIN((size_t)n, size);
    }
    return true;
}

static bool kernel_dma_logging_start(VFIODevice *vbasedev,
                                     uint64_t page_size,
                                     const uint64_t (*ranges)[2], uint32_t n,
                                     Error **errp)
{
    KernelDmaLoggingControl ctl = {
        .page_size = page_size, .num_ranges = n,
        .ranges = (uintptr_t)ranges,
    };

    return kernel_feature(kdev(vbasedev), VFIO_DEVICE_FEATURE_SET |
                          VFIO_USER_FEATURE_DMA_LOGGING_START, &ctl,
                          sizeof(ctl), NULL, 0, NULL, errp);
}

static bool kernel_dma_logging_stop(VFIODevice *vbasedev, Error **errp)
{
    return kernel_feature(kdev(vbasedev), VFIO_DEVICE_FEATURE_SET |
                          VFIO_USER_FEATURE_DMA_LOGGING_STOP, NULL, 0, NULL,
                          0, NULL, errp);
}

static bool kernel_dma_logging_report(VFIODevice *vbasedev, uint64_t iova,
                                      uint64_t length, uint64_t page_size,
                                      uint64_t *bitmap, Error **errp)
{
    KernelDmaLoggingReport rep = {
        .iova = iova, .length = length, .page_size = page_size,
        .bitmap = (uintptr_t)bitmap,
    };

    return kernel_feature(kdev(vbasedev), VFIO_DEVICE_FEATURE_GET |
                          VFIO_USER_FEATURE_DMA_LOGGING_REPORT, &rep,
                          sizeof(rep), NULL, 0, NULL, errp);
}

const VFIODeviceIOOps vfio_kernel_device_io_ops = {
    .get_device_info = kernel_get_device_info,
    .get_region_info = kernel_get_region_info,
    .region_read = kernel_region_read,
    .region_write = kernel_region_write,
    .get_irq_info = kernel_get_irq_info,
    .set_irqs = kernel_set_irqs,
    .reset = kernel_reset,
    .dma_map = kernel_dma_map,
    .dma_unmap = kernel_dma_unmap,
    .close = kernel_close,
    .device_feature = kernel_device_feature,
    .mig_data_read = kernel_mig_data_read,
    .mig_data_write = kernel_mig_data_write,
    .dma_logging_start = kernel_dma_logging_start,
    .dma_logging_stop = kernel_dma_logging_stop,
    .dma_logging_report = kernel_dma_logging_report,
};

bool vfio_kernel_device_attach(VFIODevice *vbasedev, const char *sysfsdev,
                               Error **errp)
{
    g_autofree char *trimmed = g_strdup(sysfsdev ? sysfsdev : "");
    struct vfio_device_info info;
    VFIOKernelDevice *d;
    VFIODevice probe = { .fd = -1 };
    int groupid;
    uint32_t i;

    g_strchomp(trimmed);
    while (strlen(trimmed) > 1 && g_str_has_suffix(trimmed, "/")) {
        trimmed[strlen(trimmed) - 1] = '\0';
    }
    if (!*trimmed) {
        error_setg(errp, "vfio: sysfsdev is empty");
        return false;
    }
    d = g_new0(VFIOKernelDevice, 1);
    d->fd = -1;
    d->name = g_path_get_basename(trimmed);
    if (!sysfsdev_group(trimmed, d->name, &groupid, errp)) {
        goto fail;
    }
    d->group = vfio_group_get(groupid, d->name, errp);
    if (!d->group) {
        goto fail;
    }
    /* The kernel would hand out the fd twice; one device model only. */
    if (g_list_find_custom(d->group->devices, d->name,
                           (GCompareFunc)strcmp)) {
        error_setg(errp, "vfio %s: the device is already in use by another"
                   " vfio-pci device", d->name);
        goto fail;
    }
    d->fd = vfio_ioctl_ops()->ioctl(d->group->fd, VFIO_GROUP_GET_DEVICE_FD,
                                    d->name);
    if (d->fd < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot get the device from"
                         " group %d", d->name, groupid);
        error_append_hint(errp, "Is it bound to vfio-pci (echo vfio-pci >"
                          " %s/driver_override, then write its address to"
                          " /sys/bus/pci/drivers_probe)?\n", trimmed);
        d->fd = -1;
        goto fail;
    }

    probe.backend = d;
    probe.ops = &vfio_kernel_device_io_ops;
    if (!kernel_get_device_info(&probe, &info, errp)) {
        goto fail;
    }
    if (!(info.flags & VFIO_DEVICE_FLAGS_PCI)) {
        error_setg(errp, "vfio %s: not a PCI device (flags 0x%x)", d->name,
                   info.flags);
        goto fail;
    }
    if (info.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
        error_setg(errp, "vfio %s: the device has no config space region"
                   " (%u regions)", d->name, info.num_regions);
        goto fail;
    }
    d->num_regions = info.num_regions;
    d->num_irqs = info.num_irqs;
    d->regions = g_new0(VFIOKernelRegion, d->num_regions);
    d->irqs = g_new0(VFIOKernelIrq, d->num_irqs);
    for (i = 0; i < d->num_irqs; i++) {
        d->irqs[i].unmask_fd = -1;
    }

    d->group->devices = g_list_prepend(d->group->devices, d->name);
    d->listed = true;
    if (!vbasedev->name) {
        vbasedev->name = g_strdup(d->name);
    }
    vbasedev->ops = &vfio_kernel_device_io_ops;
    vbasedev->backend = d;
    vbasedev->fd = d->fd;
    vbasedev->flags = info.flags;
    vbasedev->num_regions = info.num_regions;
    vbasedev->num_irqs = info.num_irqs;
    trace_vfio_kernel_attach(d->name, groupid, d->fd, info.flags,
                             info.num_regions, info.num_irqs);
    return true;

fail:
    kernel_device_free(d);
    return false;
}
