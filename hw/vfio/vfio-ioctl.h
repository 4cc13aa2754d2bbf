/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The system-call seam of the kernel VFIO backend.
 *
 * Every call the backend makes on /dev/vfio, on sysfs and on the
 * process limits goes through one VFIOIoctlOps table, so unit tests can
 * replace the kernel with recorded replies (including malformed ones)
 * and exercise every error path without VFIO on the machine.  Each op
 * follows the libc convention of the call it stands for: -1 with errno
 * set on failure.  BARs are mmapped by the device model (hw/vfio/bar.c)
 * from vbasedev->fd, so mmap is not part of the seam.
 */
#ifndef HW_VFIO_VFIO_IOCTL_H
#define HW_VFIO_VFIO_IOCTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/resource.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef struct VFIOIoctlOps {
    int (*open)(const char *path, int flags);
    int (*close)(int fd);
    int (*ioctl)(int fd, unsigned long request, void *arg);
    ssize_t (*pread)(int fd, void *buf, size_t count, off_t offset);
    ssize_t (*pwrite)(int fd, const void *buf, size_t count, off_t offset);
    /* read(2)/write(2) on a migration data fd (a stream). */
    ssize_t (*read)(int fd, void *buf, size_t count);
    ssize_t (*write)(int fd, const void *buf, size_t count);
    /* readlink(2) on sysfs, e.g. the device's iommu_group link. */
    ssize_t (*readlink)(const char *path, char *buf, size_t size);
    /* access(2) on sysfs: does the device exist at all? */
    int (*access)(const char *path, int mode);
    /* getrlimit(2), for RLIMIT_MEMLOCK in error messages. */
    int (*getrlimit)(int resource, struct rlimit *rlim);
} VFIOIoctlOps;

/* The real system calls. */
extern const VFIOIoctlOps vfio_ioctl_host_ops;

/* The table in use: the host's unless a test installed its own. */
const VFIOIoctlOps *vfio_ioctl_ops(void);
/* Installs @ops (NULL: back to the host's).  For unit tests. */
void vfio_ioctl_set_ops(const VFIOIoctlOps *ops);

#endif
