/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel VFIO backend: a VFIODeviceIOOps over /dev/vfio (type1 IOMMU
 * container, or no-IOMMU), for devices bound to the host's vfio-pci.
 *
 * Opening a device resolves its IOMMU group from sysfs, opens
 * /dev/vfio/N (or /dev/vfio/noiommu-N, loudly), checks the group is
 * viable, attaches it to a container (one already open if the kernel
 * accepts the group there, else a new one with the best IOMMU type it
 * offers: type1v2, type1, no-IOMMU), and gets the device fd.  Devices of
 * one group share the group; groups share containers where possible, and
 * a container counts identical DMA mappings so that every device's
 * listener may map the same guest RAM.
 *
 * All system calls go through vfio-ioctl.h.  Every failure is an Error
 * naming the device and the step; a failed open leaves nothing behind.
 */
#ifndef HW_VFIO_VFIO_KERNEL_H
#define HW_VFIO_VFIO_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/vfio.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "hw/vfio/vfio-device.h"

#define VFIO_KERNEL_SYSFS_PCI "/sys/bus/pci/devices"

/* A valid IOVA window of the container's IOMMU (inclusive end). */
typedef struct VFIOIovaRange {
    uint64_t start;
    uint64_t end;
} VFIOIovaRange;

typedef struct VFIOContainer {
    int fd;
    int iommu_type;             /* VFIO_TYPE1v2_IOMMU, ..., NOIOMMU */
    uint64_t pgsizes;           /* supported IOMMU page sizes (bitmap) */
    GArray *iova_ranges;        /* VFIOIovaRange; empty: no restriction */
    bool has_dma_avail;
    uint32_t dma_avail;         /* mappings the kernel still allows */
    GArray *mappings;           /* VFIODmaMapping (container.c) */
    unsigned int refs;          /* groups attached */
} VFIOContainer;

typedef struct VFIOGroup {
    int fd;
    int groupid;
    bool noiommu;
    VFIOContainer *container;
    unsigned int ndevices;
    GList *devices;             /* names of the devices open in it */
} VFIOGroup;

/*
 * Resolves @host ("DDDD:BB:DD.F", or "BB:DD.F" for domain 0) to its
 * sysfs directory (g_free).  Only the syntax is checked here.
 */
char *vfio_kernel_host_to_sysfsdev(const char *host, Error **errp);

/*
 * Opens the device at @sysfsdev (a /sys/bus/pci/devices/... path) and
 * binds it to @vbasedev: ops, backend, fd, flags, num_regions, num_irqs.
 * vbasedev->name is set to the device's name (its BDF, g_strdup'ed: the
 * device model frees it) if NULL.  On failure nothing stays open and
 * @vbasedev is untouched.
 */
bool vfio_kernel_device_attach(VFIODevice *vbasedev, const char *sysfsdev,
                               Error **errp);

extern const VFIODeviceIOOps vfio_kernel_device_io_ops;

/* ---- groups and containers (hw/vfio/container.c) ---- */

/* Opens (or takes another reference on) group @groupid for @devname. */
VFIOGroup *vfio_group_get(int groupid, const char *devname, Error **errp);
/* Drops a device reference; the last one detaches and closes. */
void vfio_group_put(VFIOGroup *group);

/*
 * Maps [@iova, @iova + @size) to @vaddr in @container.  The range is
 * trimmed inwards to the IOMMU's smallest page; a range that vanishes is
 * not an error.  Identical mappings are reference-counted.
 */
bool vfio_container_dma_map(VFIOContainer *container, const char *devname,
                            uint64_t iova, uint64_t size, void *vaddr,
                            bool readonly, Error **errp);
bool vfio_container_dma_unmap(VFIOContainer *container, const char *devname,
                              uint64_t iova, uint64_t size, Error **errp);

/*
 * Registers a group with KVM's VFIO pseudo-device (KVM_DEV_VFIO_GROUP)
 * while KVM is in use.  The KVM accelerator installs these; without them
 * groups are simply not registered (qtest, TCG).
 */
typedef struct VFIOKvmGroupOps {
    bool (*add)(int group_fd, Error **errp);
    void (*del)(int group_fd);
} VFIOKvmGroupOps;
void vfio_kernel_set_kvm_group_ops(const VFIOKvmGroupOps *ops);

#endif
