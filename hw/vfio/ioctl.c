/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel VFIO backend's system-call seam (see vfio-ioctl.h).
 */
#include "qemu/osdep.h"
#include "vfio-ioctl.h"

static int host_open(const char *path, int flags)
{
    return open(path, flags | O_CLOEXEC);
}

static int host_ioctl(int fd, unsigned long request, void *arg)
{
    return ioctl(fd, request, arg);
}

static int host_getrlimit(int resource, struct rlimit *rlim)
{
    return getrlimit(resource, rlim);
}

const VFIOIoctlOps vfio_ioctl_host_ops = {
    .open = host_open,
    .close = close,
    .ioctl = host_ioctl,
    .pread = pread,
    .pwrite = pwrite,
    .read = read,
    .write = write,
    .readlink = readlink,
    .access = access,
    .getrlimit = host_getrlimit,
};

static const VFIOIoctlOps *current_ops = &vfio_ioctl_host_ops;

const VFIOIoctlOps *vfio_ioctl_ops(void)
{
    return current_ops;
}

void vfio_ioctl_set_ops(const VFIOIoctlOps *ops)
{
    current_ops = ops ? ops : &vfio_ioctl_host_ops;
}
