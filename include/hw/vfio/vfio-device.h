/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * VFIO device access, independent of the backend.
 *
 * A VFIODevice is what vfio-pci (and anything else built on VFIO) talks
 * to.  The backend behind it is either the kernel (ioctls and pread/pwrite
 * on a device fd) or vfio-user (messages on a UNIX socket); both implement
 * VFIODeviceIOOps with the same semantics, expressed in the kernel uAPI
 * structures of <linux/vfio.h> so that callers need not care which one
 * they have.
 *
 * Conventions for every op:
 * - the last argument is "Error **errp"; a bool op returns false on
 *   failure with *errp set, and leaves its outputs untouched;
 * - everything a backend returns (sizes, counts, offsets, fds) has been
 *   validated by the backend before it is handed out, so callers may
 *   trust the shapes but must still bound values against their own needs;
 * - once a backend failed irrecoverably (peer gone) it sets
 *   vbasedev->broken; the helpers below then fail fast, and the device
 *   model reads all-ones and drops writes.
 */
#ifndef HW_VFIO_VFIO_DEVICE_H
#define HW_VFIO_VFIO_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/vfio.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "qapi/error.h"

typedef struct VFIODevice VFIODevice;
typedef struct VFIODeviceIOOps VFIODeviceIOOps;

struct VFIODeviceIOOps {
    /*
     * Fills @info (argsz/flags/num_regions/num_irqs).  Device-info
     * capabilities are not used by Conduit and are not returned.
     */
    bool (*get_device_info)(VFIODevice *vbasedev,
                            struct vfio_device_info *info, Error **errp);
    /*
     * Returns in *@info a g_malloc'ed buffer holding the whole region
     * info including its capability chain (info->argsz is the buffer
     * length; walk it with qemu/vfio-region-info.h), and in *@fd the fd to
     * mmap the region through: the kernel backend returns -1 (callers
     * mmap vbasedev->fd at info->offset); vfio-user returns the fd the
     * server passed (owned by the caller from then on, to be mmapped at
     * info->offset), or -1 when the region has none.
     */
    bool (*get_region_info)(VFIODevice *vbasedev, uint32_t index,
                            struct vfio_region_info **info, int *fd,
                            Error **errp);
    /* Reads/writes exactly @size bytes at @off inside region @index. */
    bool (*region_read)(VFIODevice *vbasedev, uint32_t index, uint64_t off,
                        uint32_t size, void *buf, Error **errp);
    /*
     * @post: the caller does not need to wait for completion (posted MMIO
     * write); a backend may still wait.  Errors of a posted write may be
     * reported later or only through vbasedev->broken.
     */
    bool (*region_write)(VFIODevice *vbasedev, uint32_t index, uint64_t off,
                         uint32_t size, const void *buf, bool post,
                         Error **errp);
    /*
     * A posted region_write returns before the device has it (vfio-user
     * sends a message without waiting), so batching trapped writes
     * through KVM's coalesced ring saves a round trip each.
     */
    bool posts_writes;
    /* @info->index is the input; flags and count are filled in. */
    bool (*get_irq_info)(VFIODevice *vbasedev, struct vfio_irq_info *info,
                         Error **errp);
    /*
     * @irq_set is the header (flags, index, start, count) plus, for
     * VFIO_IRQ_SET_DATA_BOOL only, its count bytes of data (argsz covers
     * them).  For VFIO_IRQ_SET_DATA_EVENTFD the eventfds are in @fds
     * (count entries, -1 to unassign) and not in irq_set->data; the
     * backend puts them in the ioctl buffer or passes them as SCM_RIGHTS.
     * @fds is NULL for DATA_NONE and DATA_BOOL.  The caller keeps
     * ownership of the fds.
     */
    bool (*set_irqs)(VFIODevice *vbasedev, const struct vfio_irq_set *irq_set,
                     const int *fds, Error **errp);
    /* Function-level reset of the device (VFIO_DEVICE_RESET). */
    bool (*reset)(VFIODevice *vbasedev, Error **errp);
    /*
     * Makes guest memory [@iova, @iova + @size) reachable by the device.
     * The memory is @fd at @fd_offset (memfd-backed guest RAM), mapped in
     * Conduit at @vaddr; the kernel backend uses @vaddr, vfio-user sends
     * @fd.  @readonly: the device may only read it.
     */
    bool (*dma_map)(VFIODevice *vbasedev, uint64_t iova, uint64_t size,
                    int fd, uint64_t fd_offset, void *vaddr, bool readonly,
                    Error **errp);
    bool (*dma_unmap)(VFIODevice *vbasedev, uint64_t iova, uint64_t size,
                      Error **errp);
    /* Releases the backend (fds, socket, threads).  Never fails. */
    void (*close)(VFIODevice *vbasedev);

    /*
     * Migration (v2 uAPI semantics, hw/vfio/migration.c; all optional).
     *
     * device_feature: VFIO_DEVICE_FEATURE with @flags (feature index |
     * GET/SET/PROBE); the first @in_len bytes of @data go to the device,
     * and a successful reply's data, which must be exactly @out_len
     * bytes, comes back in @data.  @not_supported (may be NULL) is set
     * when the device refused the feature itself (ENOTTY and the like)
     * rather than the transport failing.
     */
    bool (*device_feature)(VFIODevice *vbasedev, uint32_t flags, void *data,
                           size_t in_len, size_t out_len,
                           bool *not_supported, Error **errp);
    /*
     * Migration data.  @data_fd is what MIG_DEVICE_STATE returned (the
     * kernel's data fd; -1 for vfio-user, which uses MIG_DATA_READ /
     * WRITE messages).  read returns in *@got the bytes read, at most
     * @size; fewer (0 included) means no more for now.
     */
    bool (*mig_data_read)(VFIODevice *vbasedev, int data_fd, void *buf,
                          size_t size, size_t *got, Error **errp);
    bool (*mig_data_write)(VFIODevice *vbasedev, int data_fd,
                           const void *buf, size_t size, Error **errp);
    /*
     * DMA dirty-page logging of device writes: start over @n ranges at
     * @page_size, stop, and report (and clear) the pages written in
     * [@iova, @iova + @length) as a bitmap of u64 words, a bit per
     * @page_size.
     */
    bool (*dma_logging_start)(VFIODevice *vbasedev, uint64_t page_size,
                              const uint64_t (*ranges)[2], uint32_t n,
                              Error **errp);
    bool (*dma_logging_stop)(VFIODevice *vbasedev, Error **errp);
    bool (*dma_logging_report)(VFIODevice *vbasedev, uint64_t iova,
                               uint64_t length, uint64_t page_size,
                               uint64_t *bitmap, Error **errp);
};

struct VFIODevice {
    char *name;                 /* for messages: host BDF or socket path */
    const VFIODeviceIOOps *ops;
    void *backend;              /* backend private state */
    int fd;                     /* kernel device fd, -1 for vfio-user */
    uint32_t flags;             /* VFIO_DEVICE_FLAGS_* */
    uint32_t num_regions;
    uint32_t num_irqs;
    /* Set by a backend that lost its device (peer closed, fatal error). */
    bool broken;
};

/*
 * Thin wrappers that refuse to call into a backend that is gone, so a
 * device model never dispatches into a dead peer or a NULL op.
 */
#define VFIO_DEVICE_HAS_OP(vbasedev, op) \
    ((vbasedev)->ops && (vbasedev)->ops->op)

static inline bool vfio_device_check(VFIODevice *vbasedev, bool has_op,
                                     Error **errp)
{
    if (vbasedev->broken) {
        error_setg(errp, "vfio %s: device is broken (backend lost)",
                   vbasedev->name ? vbasedev->name : "?");
        return false;
    }
    if (!has_op) {
        error_setg(errp, "vfio %s: operation not supported by the backend",
                   vbasedev->name ? vbasedev->name : "?");
        return false;
    }
    return true;
}

static inline bool vfio_device_region_read(VFIODevice *vbasedev,
                                           uint32_t index, uint64_t off,
                                           uint32_t size, void *buf,
                                           Error **errp)
{
    return vfio_device_check(vbasedev,
                             VFIO_DEVICE_HAS_OP(vbasedev, region_read),
                             errp) &&
           vbasedev->ops->region_read(vbasedev, index, off, size, buf, errp);
}

static inline bool vfio_device_region_write(VFIODevice *vbasedev,
                                            uint32_t index, uint64_t off,
                                            uint32_t size, const void *buf,
                                            bool post, Error **errp)
{
    return vfio_device_check(vbasedev,
                             VFIO_DEVICE_HAS_OP(vbasedev, region_write),
                             errp) &&
           vbasedev->ops->region_write(vbasedev, index, off, size, buf,
                                       post, errp);
}

static inline bool vfio_device_get_region_info(VFIODevice *vbasedev,
                                               uint32_t index,
                                               struct vfio_region_info **info,
                                               int *fd, Error **errp)
{
    return vfio_device_check(vbasedev,
                             VFIO_DEVICE_HAS_OP(vbasedev, get_region_info),
                             errp) &&
           vbasedev->ops->get_region_info(vbasedev, index, info, fd, errp);
}

static inline bool vfio_device_get_irq_info(VFIODevice *vbasedev,
                                            struct vfio_irq_info *info,
                                            Error **errp)
{
    return vfio_device_check(vbasedev,
                             VFIO_DEVICE_HAS_OP(vbasedev, get_irq_info),
                             errp) &&
           vbasedev->ops->get_irq_info(vbasedev, info, errp);
}

static inline bool vfio_device_set_irqs(VFIODevice *vbasedev,
                                        const struct vfio_irq_set *irq_set,
                                        const int *fds, Error **errp)
{
    return vfio_device_check(vbasedev, VFIO_DEVICE_HAS_OP(vbasedev, set_irqs),
                             errp) &&
           vbasedev->ops->set_irqs(vbasedev, irq_set, fds, errp);
}

static inline bool vfio_device_reset(VFIODevice *vbasedev, Error **errp)
{
    return vfio_device_check(vbasedev, VFIO_DEVICE_HAS_OP(vbasedev, reset),
                             errp) &&
           vbasedev->ops->reset(vbasedev, errp);
}

static inline bool vfio_device_dma_map(VFIODevice *vbasedev, uint64_t iova,
                                       uint64_t size, int fd,
                                       uint64_t fd_offset, void *vaddr,
                                       bool readonly, Error **errp)
{
    return vfio_device_check(vbasedev, VFIO_DEVICE_HAS_OP(vbasedev, dma_map),
                             errp) &&
           vbasedev->ops->dma_map(vbasedev, iova, size, fd, fd_offset, vaddr,
                                  readonly, errp);
}

static inline bool vfio_device_dma_unmap(VFIODevice *vbasedev, uint64_t iova,
                                         uint64_t size, Error **errp)
{
    return vfio_device_check(vbasedev, VFIO_DEVICE_HAS_OP(vbasedev, dma_unmap),
                             errp) &&
           vbasedev->ops->dma_unmap(vbasedev, iova, size, errp);
}

/* Releases the backend; safe on a broken device and to call twice. */
static inline void vfio_device_close(VFIODevice *vbasedev)
{
    if (vbasedev->ops && vbasedev->ops->close) {
        vbasedev->ops->close(vbasedev);
    }
    vbasedev->ops = NULL;
}

#endif
