/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel VFIO backend against a fake kernel behind the ioctl seam.
 *
 * The fake answers from recorded replies: byte images of what Linux 6.1's
 * vfio, vfio_iommu_type1 and vfio-pci return for an emulated NVMe function
 * (BAR0 16 KiB with MSIX_MAPPABLE, MSI-X with NORESIZE), applying the
 * kernel's argsz rules to them, and tests swap in malformed replies (bad
 * argsz, capability chains out of range, a non-viable group, a wrong API
 * version, a too-low locked-memory limit).  Every ioctl is logged so tests
 * check what the backend asked for, and every fd must be closed at the end.
 */
#include "qemu/osdep.h"
#include <endian.h>
#include <sys/resource.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/vfio/vfio-ioctl.h"
#include "hw/vfio/vfio-kernel.h"
#include "qemu/vfio-region-info.h"
#include "vfio-user/protocol.h"

#define FD_CONTAINER_BASE 100
#define FD_GROUP_BASE 200
#define FD_DEVICE_BASE 300

/*
 * Recorded: VFIO_IOMMU_GET_INFO from Linux 6.1 under QEMU's intel-iommu
 * (4K/2M/1G pages; MIGRATION at 24, DMA_AVAIL at 56, IOVA_RANGE at 68 with
 * the MSI window carved out).  The kernel packs capabilities without
 * padding, so the third one is only 4-byte aligned.  Little-endian words.
 */
static const uint32_t rec_iommu_info[] = {
    0x74, 0x3,                  /* argsz 116, flags PGSIZES|CAPS */
    0x40201000, 0x0,            /* iova_pgsizes 4K|2M|1G */
    0x18, 0,                    /* cap_offset 24, pad */
    /* 24: MIGRATION id 2 version 1 next 56 */
    0x00010002, 0x38, 0x0, 0x0, 0x1000, 0x0, 0x10000000, 0x0,
    /* 56: DMA_AVAIL id 3 version 1 next 68, avail 65535 */
    0x00010003, 0x44, 0xffff,
    /* 68: IOVA_RANGE id 1 version 1 next 0, 2 ranges */
    0x00010001, 0, 2, 0,
    0x00000000, 0x0, 0xfedfffff, 0x0,
    0xfef00000, 0x0, 0xffffffff, 0x7f,
};

/* Recorded: VFIO_DEVICE_GET_INFO of vfio-pci (RESET|PCI, 9 regions, 5 irqs) */
static const uint32_t rec_device_info[] = { 20, 0x3, 9, 5, 0 };

/* Recorded: region 0 (BAR0, 16 KiB, mmap, MSIX_MAPPABLE cap at 32). */
static const uint32_t rec_bar0_info[] = {
    40, 0xf, 0, 32,             /* argsz, flags R|W|MMAP|CAPS, index, cap */
    0x4000, 0, 0, 0,            /* size, offset 0 */
    0x00010003, 0,              /* MSIX_MAPPABLE id 3 version 1 next 0 */
};

/* Recorded: region 7 (config space, 4 KiB at 7 << 40, no caps). */
static const uint32_t rec_config_info[] = {
    32, 0x3, 7, 0,
    0x1000, 0, 0, 0x700,
};

typedef struct FakeIoctl {
    int fd;
    unsigned long request;
    uint32_t index, flags, start, count;
    int32_t fds[8];
    uint64_t iova, size;
} FakeIoctl;

typedef struct FakeKernel {
    /* Sysfs and /dev. */
    const char *group_link;     /* iommu_group link target, NULL: none */
    bool noiommu;               /* only /dev/vfio/noiommu-N exists */
    bool no_vfio;               /* /dev/vfio/vfio missing */
    int api_version;
    bool has_type1v2, has_type1;
    bool viable;
    bool accept_shared;         /* SET_CONTAINER on an existing container */
    bool device_fd_fails;
    int map_errno;
    rlim_t memlock;
    /* Replies (byte images). */
    const void *iommu_info;
    size_t iommu_info_len;
    const void *device_info;
    size_t device_info_len;
    const void *bar0_info;
    size_t bar0_info_len;
    uint32_t irq_flags[5];
    uint32_t irq_count[5];
    uint8_t config[0x100];
    /* State. */
    int next_container, next_group, next_device;
    int open_fds;
    int irq_type;               /* armed irq index, -1: none */
    uint32_t irq_nvec;          /* vectors armed */
    int container_groups[16];   /* groups in container fd (100 + i) */
    int group_container[16];    /* container fd of group fd (200 + i) */
    GArray *log;                /* FakeIoctl */
    uint64_t last_pread_off;
    /* Migration (v2 uAPI), as a driver with STOP_COPY would answer. */
    uint64_t mig_flags;         /* 0: VFIO_DEVICE_FEATURE_MIGRATION ENOTTY */
    uint32_t mig_state;
    const uint8_t *mig_data;    /* what STOP_COPY reads produce */
    size_t mig_data_len, mig_data_pos;
    GByteArray *mig_written;    /* what RESUMING got */
    uint64_t log_page_size, log_ranges[2][2];
    uint32_t log_nranges;
} FakeKernel;

#define FD_MIG_DATA 77

static FakeKernel fk;

static void fake_reset(void)
{
    if (fk.log) {
        g_array_unref(fk.log);
    }
    memset(&fk, 0, sizeof(fk));
    fk.group_link = "../../../kernel/iommu_groups/12";
    fk.api_version = VFIO_API_VERSION;
    fk.has_type1v2 = fk.has_type1 = true;
    fk.viable = true;
    fk.accept_shared = true;
    fk.memlock = 64 * 1024 * 1024;
    fk.iommu_info = rec_iommu_info;
    fk.iommu_info_len = sizeof(rec_iommu_info);
    fk.device_info = rec_device_info;
    fk.device_info_len = sizeof(rec_device_info);
    fk.bar0_info = rec_bar0_info;
    fk.bar0_info_len = sizeof(rec_bar0_info);
    fk.irq_flags[VFIO_PCI_INTX_IRQ_INDEX] = VFIO_IRQ_INFO_EVENTFD |
        VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED;
    fk.irq_count[VFIO_PCI_INTX_IRQ_INDEX] = 1;
    fk.irq_flags[VFIO_PCI_MSIX_IRQ_INDEX] = VFIO_IRQ_INFO_EVENTFD |
        VFIO_IRQ_INFO_NORESIZE;
    fk.irq_count[VFIO_PCI_MSIX_IRQ_INDEX] = 65;
    fk.config[0] = 0x36;        /* vendor 1b36 (Red Hat), device 0010 */
    fk.config[1] = 0x1b;
    fk.config[2] = 0x10;
    fk.next_container = FD_CONTAINER_BASE;
    fk.next_group = FD_GROUP_BASE;
    fk.next_device = FD_DEVICE_BASE;
    fk.log = g_array_new(false, true, sizeof(FakeIoctl));
    fk.irq_type = -1;
    fk.mig_state = VFIO_MIG_STATE_RUNNING;
}

/* VFIO_DEVICE_FEATURE as vfio-pci with a v2 migration driver does it. */
static int fake_feature(struct vfio_device_feature *f)
{
    uint32_t feature = f->flags & VFIO_DEVICE_FEATURE_MASK;
    bool set = f->flags & VFIO_DEVICE_FEATURE_SET;

    if (!fk.mig_flags) {
        errno = ENOTTY;
        return -1;
    }
    switch (feature) {
    case VFIO_USER_FEATURE_MIGRATION:
        g_assert_cmpuint(f->argsz, >=, sizeof(*f) + 8);
        memcpy(f->data, &fk.mig_flags, 8);
        return 0;
    case VFIO_USER_FEATURE_MIG_DEVICE_STATE: {
        VFIOUserFeatureMigState st;

        g_assert_cmpuint(f->argsz, >=, sizeof(*f) + sizeof(st));
        memcpy(&st, f->data, sizeof(st));
        if (!set) {
            st.device_state = fk.mig_state;
            st.data_fd = -1;
        } else {
            /* The kernel walks combined arcs itself. */
            if (vfio_mig_next_state(fk.mig_state, st.device_state, false) ==
                VFIO_MIG_STATE_ERROR) {
                errno = EINVAL;
                return -1;
            }
            fk.mig_state = st.device_state;
            st.data_fd = (st.device_state == VFIO_MIG_STATE_STOP_COPY ||
                          st.device_state == VFIO_MIG_STATE_RESUMING) ?
                         FD_MIG_DATA : -1;
            fk.mig_data_pos = 0;
        }
        memcpy(f->data, &st, sizeof(st));
        return 0;
    }
    case VFIO_USER_FEATURE_MIG_DATA_SIZE: {
        uint64_t len = fk.mig_data_len;

        memcpy(f->data, &len, 8);
        return 0;
    }
    case VFIO_USER_FEATURE_DMA_LOGGING_START: {
        uint64_t ctl[3];

        memcpy(ctl, f->data, sizeof(ctl));
        fk.log_page_size = ctl[0];
        fk.log_nranges = (uint32_t)ctl[1];
        g_assert_cmpuint(fk.log_nranges, <=, 2);
        memcpy(fk.log_ranges, (void *)(uintptr_t)ctl[2],
               fk.log_nranges * 16);
        return 0;
    }
    case VFIO_USER_FEATURE_DMA_LOGGING_STOP:
        fk.log_page_size = 0;
        return 0;
    case VFIO_USER_FEATURE_DMA_LOGGING_REPORT: {
        uint64_t rep[4];

        memcpy(rep, f->data, sizeof(rep));
        if (!fk.log_page_size) {
            errno = EINVAL;
            return -1;
        }
        /* Pages 1 and 3 of the range were written. */
        ((uint64_t *)(uintptr_t)rep[3])[0] = 0xa;
        return 0;
    }
    }
    errno = ENOTTY;
    return -1;
}

static ssize_t fake_read(int fd, void *buf, size_t count)
{
    size_t n;

    g_assert_cmpint(fd, ==, FD_MIG_DATA);
    g_assert_cmpuint(fk.mig_state, ==, VFIO_MIG_STATE_STOP_COPY);
    /* Short reads, as a stream gives them. */
    n = MIN(MIN(count, 3), fk.mig_data_len - fk.mig_data_pos);
    memcpy(buf, fk.mig_data + fk.mig_data_pos, n);
    fk.mig_data_pos += n;
    return n;
}

static ssize_t fake_write(int fd, const void *buf, size_t count)
{
    g_assert_cmpint(fd, ==, FD_MIG_DATA);
    if (fk.mig_state != VFIO_MIG_STATE_RESUMING) {
        errno = EINVAL;
        return -1;
    }
    count = MIN(count, 5);
    g_byte_array_append(fk.mig_written, buf, count);
    return count;
}

/*
 * vfio-pci's SET_IRQS rules: one interrupt type armed at a time; an armed
 * MSI/MSI-X block cannot grow; disabling an index that is not armed, and
 * INTx unmask/mask while INTx is not armed, are EINVAL.
 */
static int fake_set_irqs(const struct vfio_irq_set *s)
{
    uint32_t data = s->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    uint32_t action = s->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
    int index = s->index;

    if (action != VFIO_IRQ_SET_ACTION_TRIGGER) {
        if (index != VFIO_PCI_INTX_IRQ_INDEX ||
            fk.irq_type != VFIO_PCI_INTX_IRQ_INDEX) {
            errno = EINVAL;
            return -1;
        }
        return 0;
    }
    if (data == VFIO_IRQ_SET_DATA_NONE && s->count == 0) {
        if (fk.irq_type == index) {
            fk.irq_type = -1;
            fk.irq_nvec = 0;
            return 0;
        }
        errno = EINVAL;
        return -1;
    }
    if (fk.irq_type != -1 && fk.irq_type != index) {
        errno = EINVAL;
        return -1;
    }
    if (fk.irq_type == index && s->start + s->count > fk.irq_nvec) {
        errno = EINVAL;
        return -1;
    }
    if (fk.irq_type == -1 && data == VFIO_IRQ_SET_DATA_EVENTFD) {
        fk.irq_type = index;
        fk.irq_nvec = s->start + s->count;
    }
    return 0;
}

static int fake_open(const char *path, int flags)
{
    if (!strcmp(path, "/dev/vfio/vfio") && !fk.no_vfio) {
        fk.open_fds++;
        return fk.next_container++;
    }
    if ((!fk.noiommu && !strcmp(path, "/dev/vfio/12")) ||
        (!fk.noiommu && !strcmp(path, "/dev/vfio/13")) ||
        (fk.noiommu && !strcmp(path, "/dev/vfio/noiommu-12"))) {
        fk.open_fds++;
        return fk.next_group++;
    }
    errno = ENOENT;
    return -1;
}

static int fake_close(int fd)
{
    g_assert_cmpint(fk.open_fds, >, 0);
    fk.open_fds--;
    return 0;
}

static int fake_access(const char *path, int mode);

static ssize_t fake_readlink(const char *path, char *buf, size_t size)
{
    g_autofree char *dir = g_path_get_dirname(path);
    const char *target = fk.group_link;

    if (g_str_has_prefix(path, "/sys/bus/pci/devices/0000:00:05.0")) {
        target = "../../../kernel/iommu_groups/13";
    }
    if (!target || fake_access(dir, F_OK) < 0) {
        errno = ENOENT;
        return -1;
    }
    strncpy(buf, target, size);
    return MIN(strlen(target), size);
}

/* The fake host has functions 00:04.0, 00:04.1 and 00:05.0. */
static int fake_access(const char *path, int mode)
{
    static const char *const devs[] = {
        "/sys/bus/pci/devices/0000:00:04.0",
        "/sys/bus/pci/devices/0000:00:04.1",
        "/sys/bus/pci/devices/0000:00:05.0",
    };
    int i;

    for (i = 0; i < ARRAY_SIZE(devs); i++) {
        if (!strcmp(path, devs[i])) {
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

static int fake_getrlimit(int resource, struct rlimit *rlim)
{
    g_assert_cmpint(resource, ==, RLIMIT_MEMLOCK);
    rlim->rlim_cur = rlim->rlim_max = fk.memlock;
    return 0;
}

/*
 * The kernel's argsz rule for info with capabilities: when the caller's
 * buffer is too small, only the fixed part is written, argsz says how
 * much is needed and cap_offset is 0.
 */
static void reply_info(void *arg, const void *rec, size_t rec_len,
                       size_t fixed_len, size_t cap_offset_at)
{
    uint32_t argsz, rec_argsz;
    uint32_t zero = 0;

    memcpy(&argsz, arg, sizeof(argsz));
    memcpy(&rec_argsz, rec, sizeof(rec_argsz));
    if (argsz >= rec_len) {
        memcpy(arg, rec, rec_len);
        /* The kernel leaves a well-formed argsz as the caller gave it. */
        if (rec_argsz >= fixed_len && rec_argsz <= rec_len) {
            memcpy(arg, &argsz, sizeof(argsz));
        }
        return;
    }
    memcpy(arg, rec, MIN(fixed_len, argsz));
    if (cap_offset_at + 4 <= MIN(fixed_len, argsz)) {
        memcpy((uint8_t *)arg + cap_offset_at, &zero, sizeof(zero));
    }
}

static void log_ioctl(int fd, unsigned long request, const void *arg)
{
    FakeIoctl e = { .fd = fd, .request = request };

    if (request == VFIO_DEVICE_SET_IRQS) {
        const struct vfio_irq_set *s = arg;

        e.index = s->index;
        e.flags = s->flags;
        e.start = s->start;
        e.count = s->count;
        if ((s->flags & VFIO_IRQ_SET_DATA_EVENTFD) && s->count <= 8) {
            memcpy(e.fds, s->data, s->count * sizeof(int32_t));
        }
    } else if (request == VFIO_IOMMU_MAP_DMA) {
        const struct vfio_iommu_type1_dma_map *m = arg;

        e.iova = m->iova;
        e.size = m->size;
        e.flags = m->flags;
    } else if (request == VFIO_IOMMU_UNMAP_DMA) {
        const struct vfio_iommu_type1_dma_unmap *m = arg;

        e.iova = m->iova;
        e.size = m->size;
    }
    g_array_append_val(fk.log, e);
}

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
    log_ioctl(fd, request, arg);
    switch (request) {
    case VFIO_GET_API_VERSION:
        return fk.api_version;
    case VFIO_CHECK_EXTENSION:
        switch ((uintptr_t)arg) {
        case VFIO_TYPE1v2_IOMMU:
            return fk.has_type1v2;
        case VFIO_TYPE1_IOMMU:
            return fk.has_type1;
        case VFIO_NOIOMMU_IOMMU:
            return fk.noiommu;
        }
        return 0;
    case VFIO_GROUP_GET_STATUS: {
        struct vfio_group_status *st = arg;

        st->flags = fk.viable ? VFIO_GROUP_FLAGS_VIABLE : 0;
        return 0;
    }
    case VFIO_GROUP_SET_CONTAINER: {
        int cfd = *(int *)arg;

        g_assert_cmpint(cfd - FD_CONTAINER_BASE, <, 16);
        g_assert_cmpint(fd - FD_GROUP_BASE, <, 16);
        if (fk.container_groups[cfd - FD_CONTAINER_BASE] &&
            !fk.accept_shared) {
            errno = EINVAL;
            return -1;
        }
        fk.container_groups[cfd - FD_CONTAINER_BASE]++;
        fk.group_container[fd - FD_GROUP_BASE] = cfd;
        return 0;
    }
    case VFIO_GROUP_UNSET_CONTAINER:
        g_assert_cmpint(fk.group_container[fd - FD_GROUP_BASE], !=, 0);
        fk.container_groups[fk.group_container[fd - FD_GROUP_BASE] -
                            FD_CONTAINER_BASE]--;
        fk.group_container[fd - FD_GROUP_BASE] = 0;
        return 0;
    case VFIO_SET_IOMMU:
        return 0;
    case VFIO_IOMMU_GET_INFO:
        reply_info(arg, fk.iommu_info, fk.iommu_info_len,
                   sizeof(struct vfio_iommu_type1_info),
                   offsetof(struct vfio_iommu_type1_info, cap_offset));
        return 0;
    case VFIO_GROUP_GET_DEVICE_FD:
        if (fk.device_fd_fails) {
            errno = ENODEV;
            return -1;
        }
        fk.open_fds++;
        return fk.next_device++;
    case VFIO_DEVICE_GET_INFO:
        reply_info(arg, fk.device_info, fk.device_info_len,
                   fk.device_info_len, 16);
        return 0;
    case VFIO_DEVICE_GET_REGION_INFO: {
        struct vfio_region_info *ri = arg;

        if (ri->index == 0) {
            reply_info(arg, fk.bar0_info, fk.bar0_info_len,
                       sizeof(struct vfio_region_info),
                       offsetof(struct vfio_region_info, cap_offset));
        } else if (ri->index == VFIO_PCI_CONFIG_REGION_INDEX) {
            reply_info(arg, rec_config_info, sizeof(rec_config_info),
                       sizeof(rec_config_info), 12);
        } else {
            uint32_t argsz = ri->argsz, index = ri->index;

            memset(ri, 0, sizeof(*ri));
            ri->argsz = argsz;
            ri->index = index;
        }
        return 0;
    }
    case VFIO_DEVICE_GET_IRQ_INFO: {
        struct vfio_irq_info *ii = arg;

        if (ii->index >= 5) {
            errno = EINVAL;
            return -1;
        }
        ii->flags = fk.irq_flags[ii->index];
        ii->count = fk.irq_count[ii->index];
        return 0;
    }
    case VFIO_DEVICE_SET_IRQS:
        return fake_set_irqs(arg);
    case VFIO_DEVICE_RESET:
        return 0;
    case VFIO_DEVICE_FEATURE:
        return fake_feature(arg);
    case VFIO_IOMMU_MAP_DMA:
        if (fk.map_errno) {
            errno = fk.map_errno;
            return -1;
        }
        return 0;
    case VFIO_IOMMU_UNMAP_DMA:
        return 0;
    }
    errno = ENOTTY;
    return -1;
}

static ssize_t fake_pread(int fd, void *buf, size_t count, off_t offset)
{
    uint64_t base = 0x700ULL << 32;

    g_assert_cmpint(fd, >=, FD_DEVICE_BASE);
    fk.last_pread_off = offset;
    g_assert_cmpuint(offset, >=, base);
    g_assert_cmpuint(offset - base + count, <=, sizeof(fk.config));
    /* Short reads happen: hand out at most 2 bytes per call. */
    count = MIN(count, 2);
    memcpy(buf, fk.config + (offset - base), count);
    return count;
}

static ssize_t fake_pwrite(int fd, const void *buf, size_t count,
                           off_t offset)
{
    uint64_t base = 0x700ULL << 32;

    g_assert_cmpuint(offset, >=, base);
    g_assert_cmpuint(offset - base + count, <=, sizeof(fk.config));
    memcpy(fk.config + (offset - base), buf, count);
    return count;
}

static const VFIOIoctlOps fake_ops = {
    .open = fake_open,
    .close = fake_close,
    .ioctl = fake_ioctl,
    .pread = fake_pread,
    .pwrite = fake_pwrite,
    .read = fake_read,
    .write = fake_write,
    .readlink = fake_readlink,
    .access = fake_access,
    .getrlimit = fake_getrlimit,
};

static unsigned count_ioctls(unsigned long request)
{
    unsigned n = 0;
    guint i;

    for (i = 0; i < fk.log->len; i++) {
        n += g_array_index(fk.log, FakeIoctl, i).request == request;
    }
    return n;
}

static const FakeIoctl *last_ioctl(unsigned long request, unsigned back)
{
    guint i;

    for (i = fk.log->len; i-- > 0;) {
        const FakeIoctl *e = &g_array_index(fk.log, FakeIoctl, i);

        if (e->request == request && back-- == 0) {
            return e;
        }
    }
    return NULL;
}

static void assert_error(Error *err, const char *needle)
{
    g_assert_nonnull(err);
    if (!strstr(error_get_pretty(err), needle)) {
        g_error("error '%s' does not mention '%s'", error_get_pretty(err),
                needle);
    }
}

static void assert_hint(Error *err, const char *needle)
{
    const char *hint = error_get_hint(err);

    if (!hint || !strstr(hint, needle)) {
        g_error("hint '%s' does not mention '%s'", hint ? hint : "(none)",
                needle);
    }
}

#define NVME "/sys/bus/pci/devices/0000:00:04.0"

/* Attach must fail with @needle and leave no fd open. */
static void attach_fails(const char *needle)
{
    VFIODevice dev = { .fd = -1 };
    Error *err = NULL;

    g_assert_false(vfio_kernel_device_attach(&dev, NVME, &err));
    assert_error(err, needle);
    assert_error(err, "vfio 0000:00:04.0: ");
    g_assert_null(dev.ops);
    g_assert_null(dev.backend);
    g_assert_cmpint(fk.open_fds, ==, 0);
    error_free(err);
}

static void attach_ok(VFIODevice *dev, const char *sysfsdev)
{
    memset(dev, 0, sizeof(*dev));
    dev->fd = -1;
    g_assert_true(vfio_kernel_device_attach(dev, sysfsdev, &error_abort));
}

/* Closes the backend and frees the name attach gave the device. */
static void dev_close(VFIODevice *dev)
{
    vfio_device_close(dev);
    g_clear_pointer(&dev->name, g_free);
}

static VFIOGroup *dev_group(VFIODevice *dev)
{
    /* The backend's first members are the name and the group. */
    struct {
        char *name;
        VFIOGroup *group;
    } *head = dev->backend;

    return head->group;
}

static void test_host_parse(void)
{
    g_autofree char *a = vfio_kernel_host_to_sysfsdev("0000:06:12.1",
                                                      &error_abort);
    g_autofree char *b = vfio_kernel_host_to_sysfsdev("06:12.1",
                                                      &error_abort);
    static const char *const bad[] = {
        "", "06:12", "0000:06:12.8", "0000:06:20.1", "0000:06:12.1x",
        "zz:00.0", "00000:06:12.1",
    };
    int i;

    g_assert_cmpstr(a, ==, "/sys/bus/pci/devices/0000:06:12.1");
    g_assert_cmpstr(b, ==, a);
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        Error *err = NULL;

        g_assert_null(vfio_kernel_host_to_sysfsdev(bad[i], &err));
        assert_error(err, "is not a PCI address");
        error_free(err);
    }
}

static void test_attach_ok(void)
{
    VFIODevice dev;
    VFIOGroup *group;
    VFIOIovaRange *r;

    fake_reset();
    attach_ok(&dev, NVME "/");
    g_assert(dev.ops == &vfio_kernel_device_io_ops);
    g_assert_cmpint(dev.fd, ==, FD_DEVICE_BASE);
    g_assert_cmphex(dev.flags, ==, VFIO_DEVICE_FLAGS_PCI |
                    VFIO_DEVICE_FLAGS_RESET);
    g_assert_cmpuint(dev.num_regions, ==, 9);
    g_assert_cmpuint(dev.num_irqs, ==, 5);
    g_assert_cmpstr(dev.name, ==, "0000:00:04.0");

    group = dev_group(&dev);
    g_assert_cmpint(group->groupid, ==, 12);
    g_assert_false(group->noiommu);
    g_assert_cmpint(group->container->iommu_type, ==, VFIO_TYPE1v2_IOMMU);
    g_assert_cmphex(group->container->pgsizes, ==, 0x40201000);
    g_assert_cmpuint(group->container->iova_ranges->len, ==, 2);
    r = &g_array_index(group->container->iova_ranges, VFIOIovaRange, 1);
    g_assert_cmphex(r->start, ==, 0xfef00000);
    g_assert_cmphex(r->end, ==, 0x7fffffffffULL);
    g_assert_true(group->container->has_dma_avail);
    g_assert_cmpuint(group->container->dma_avail, ==, 65535);
    /* The info did not fit at first: asked twice (argsz retry). */
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_GET_INFO), ==, 2);

    dev_close(&dev);
    g_assert_null(dev.backend);
    g_assert_cmpint(fk.open_fds, ==, 0);
    g_assert_cmpuint(count_ioctls(VFIO_GROUP_UNSET_CONTAINER), ==, 1);
}

/*
 * The v2 migration uAPI through the backend ops hw/vfio/migration.c
 * uses: the feature probe, state changes that hand out the data fd,
 * STOP_COPY data read to its end in short reads, RESUMING data written
 * in short writes, and DMA logging with ranges and bitmap by pointer.
 */
static void test_migration_v2(void)
{
    static const uint8_t state[] = "device state of seventeen+ bytes";
    const VFIODeviceIOOps *ops = &vfio_kernel_device_io_ops;
    VFIOUserFeatureMigState st = { .device_state = VFIO_MIG_STATE_STOP,
                                   .data_fd = -1 };
    uint64_t flags = 0, ranges[2][2] = { { 0, 0x100000 },
                                         { 0x100000000ull, 0x200000 } };
    uint64_t bitmap[1] = { 0 };
    uint8_t buf[64];
    size_t got, total = 0;
    bool nosup = false;
    VFIODevice dev;
    Error *err = NULL;

    fake_reset();
    attach_ok(&dev, NVME "/");
    /* Without a driver: ENOTTY, which is "not supported", not broken. */
    g_assert_false(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_GET |
                                       VFIO_USER_FEATURE_MIGRATION, &flags,
                                       0, 8, &nosup, &err));
    g_assert_true(nosup);
    error_free(err);
    err = NULL;

    fk.mig_flags = VFIO_MIGRATION_STOP_COPY;
    fk.mig_data = state;
    fk.mig_data_len = sizeof(state);
    fk.mig_written = g_byte_array_new();
    g_assert_true(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_GET |
                                      VFIO_USER_FEATURE_MIGRATION, &flags,
                                      0, 8, &nosup, &error_abort));
    g_assert_cmphex(flags, ==, VFIO_MIGRATION_STOP_COPY);

    g_assert_true(ops->dma_logging_start(&dev, 4096, ranges, 2,
                                         &error_abort));
    g_assert_cmpuint(fk.log_nranges, ==, 2);
    g_assert_cmphex(fk.log_ranges[1][0], ==, 0x100000000ull);
    g_assert_cmphex(fk.log_ranges[1][1], ==, 0x200000);
    g_assert_true(ops->dma_logging_report(&dev, 0, 0x40000, 4096, bitmap,
                                          &error_abort));
    g_assert_cmphex(bitmap[0], ==, 0xa);
    g_assert_true(ops->dma_logging_stop(&dev, &error_abort));
    g_assert_cmpuint(fk.log_page_size, ==, 0);

    g_assert_true(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_SET |
                                      VFIO_USER_FEATURE_MIG_DEVICE_STATE,
                                      &st, sizeof(st), sizeof(st), NULL,
                                      &error_abort));
    g_assert_cmpint(st.data_fd, ==, -1);
    st.device_state = VFIO_MIG_STATE_STOP_COPY;
    g_assert_true(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_SET |
                                      VFIO_USER_FEATURE_MIG_DEVICE_STATE,
                                      &st, sizeof(st), sizeof(st), NULL,
                                      &error_abort));
    g_assert_cmpint(st.data_fd, ==, FD_MIG_DATA);
    do {
        g_assert_true(ops->mig_data_read(&dev, st.data_fd, buf + total,
                                         sizeof(buf) - total, &got,
                                         &error_abort));
        total += got;
    } while (got);
    g_assert_cmpuint(total, ==, sizeof(state));
    g_assert_true(!memcmp(buf, state, sizeof(state)));

    /* STOP_COPY -> RESUMING goes through STOP in the kernel. */
    st.device_state = VFIO_MIG_STATE_RESUMING;
    g_assert_true(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_SET |
                                      VFIO_USER_FEATURE_MIG_DEVICE_STATE,
                                      &st, sizeof(st), sizeof(st), NULL,
                                      &error_abort));
    g_assert_true(ops->mig_data_write(&dev, st.data_fd, state,
                                      sizeof(state), &error_abort));
    g_assert_cmpuint(fk.mig_written->len, ==, sizeof(state));
    g_assert_true(!memcmp(fk.mig_written->data, state, sizeof(state)));
    /* Data outside RESUMING is refused with the kernel's errno. */
    st.device_state = VFIO_MIG_STATE_RUNNING;
    g_assert_true(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_SET |
                                      VFIO_USER_FEATURE_MIG_DEVICE_STATE,
                                      &st, sizeof(st), sizeof(st), NULL,
                                      &error_abort));
    g_assert_false(ops->mig_data_write(&dev, FD_MIG_DATA, state, 4, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "writing migration"));
    error_free(err);
    err = NULL;
    /* PRE_COPY is not offered: refused. */
    st.device_state = VFIO_MIG_STATE_PRE_COPY;
    g_assert_false(ops->device_feature(&dev, VFIO_DEVICE_FEATURE_SET |
                                       VFIO_USER_FEATURE_MIG_DEVICE_STATE,
                                       &st, sizeof(st), sizeof(st), NULL,
                                       &err));
    error_free(err);
    g_byte_array_unref(fk.mig_written);
    dev_close(&dev);
}

static void test_attach_type1_fallback(void)
{
    VFIODevice dev;

    fake_reset();
    fk.has_type1v2 = false;
    attach_ok(&dev, NVME);
    g_assert_cmpint(dev_group(&dev)->container->iommu_type, ==,
                    VFIO_TYPE1_IOMMU);
    dev_close(&dev);

    fake_reset();
    fk.has_type1v2 = fk.has_type1 = false;
    attach_fails("no type1/type1v2 IOMMU type for group 12");
}

static void test_attach_errors(void)
{
    VFIODevice dev = { .fd = -1 };
    Error *err = NULL;

    fake_reset();
    fk.group_link = NULL;
    attach_fails("no IOMMU group");

    fake_reset();
    g_assert_false(vfio_kernel_device_attach(&dev,
                   "/sys/bus/pci/devices/0000:00:1f.7", &err));
    assert_error(err, "vfio 0000:00:1f.7: no such host device");
    g_assert_cmpint(fk.open_fds, ==, 0);
    error_free(err);
    err = NULL;

    fake_reset();
    fk.group_link = "../../../kernel/iommu_groups/twelve";
    attach_fails("names no group number");

    fake_reset();
    fk.viable = false;
    attach_fails("group 12 is not viable");

    fake_reset();
    fk.api_version = 1;
    attach_fails("speaks VFIO API version 1, Conduit needs version 0");

    fake_reset();
    fk.no_vfio = true;
    attach_fails("cannot open /dev/vfio/vfio");

    fake_reset();
    fk.device_fd_fails = true;
    g_assert_false(vfio_kernel_device_attach(&dev, NVME, &err));
    assert_error(err, "cannot get the device from group 12");
    assert_hint(err, "driver_override");
    g_assert_cmpint(fk.open_fds, ==, 0);
    error_free(err);

    /* A device that is not PCI (e.g. a platform device). */
    {
        static const uint32_t platform[] = { 20, 0x4, 3, 1, 0 };

        fake_reset();
        fk.device_info = platform;
        attach_fails("not a PCI device");
    }
    {
        static const uint32_t bad_argsz[] = { 8, 0x3, 9, 5, 0 };

        fake_reset();
        fk.device_info = bad_argsz;
        attach_fails("device info reply has a bad argsz (8)");
    }
    {
        static const uint32_t many[] = { 20, 0x3, 100000, 5, 0 };

        fake_reset();
        fk.device_info = many;
        attach_fails("implausible device info");
    }
}

static void test_iommu_info_malformed(void)
{
    uint32_t bad[ARRAY_SIZE(rec_iommu_info)];

    /* The first capability points past the end of the info. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[4] = 200;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("out of range");

    /* A capability links backwards (a loop). */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[15] = 24;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("links to offset 24, out of range");

    /* IOVA_RANGE claims more ranges than its bytes hold. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[19] = 40;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("claims 40 ranges");

    /* A capability offset that is not even 4-byte aligned. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[4] = 26;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("out of range");

    /* A truncated DMA_AVAIL: the next capability starts inside it. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[15] = 60;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("truncated DMA mapping budget");

    /* An inverted range. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[21] = 0xfef00000;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("inverted");

    /* argsz smaller than the fixed part. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[0] = 4;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("bad argsz (4)");

    /* A kernel that keeps asking for more. */
    memcpy(bad, rec_iommu_info, sizeof(bad));
    bad[0] = 1 << 20;
    fake_reset();
    fk.iommu_info = bad;
    attach_fails("IOMMU info needs 1048576 bytes");
}

static void test_region_info(void)
{
    g_autofree struct vfio_region_info *info = NULL;
    VFIORegionCaps caps = { 0 };
    VFIODevice dev;
    int fd = 77;

    fake_reset();
    attach_ok(&dev, NVME);
    g_assert_true(vfio_device_get_region_info(&dev, 0, &info, &fd,
                                              &error_abort));
    g_assert_cmpint(fd, ==, -1);
    g_assert_cmpuint(info->size, ==, 0x4000);
    g_assert_cmpuint(info->argsz, ==, 40);
    /* Too small at first: the chain came with the second ask. */
    g_assert_cmpuint(count_ioctls(VFIO_DEVICE_GET_REGION_INFO), ==, 2);
    g_assert_true(vfio_region_info_parse_caps(info, info->argsz, &caps,
                                              &error_abort));
    g_assert_true(caps.msix_mappable);
    vfio_region_caps_clear(&caps);
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static void region_info_fails(const uint32_t *rec, size_t len,
                              const char *needle)
{
    g_autofree struct vfio_region_info *info = NULL;
    VFIODevice dev;
    Error *err = NULL;
    int fd;

    fake_reset();
    fk.bar0_info = rec;
    fk.bar0_info_len = len;
    attach_ok(&dev, NVME);
    g_assert_false(vfio_device_get_region_info(&dev, 0, &info, &fd, &err));
    g_assert_null(info);
    assert_error(err, needle);
    assert_error(err, "vfio 0000:00:04.0: ");
    error_free(err);
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static void test_region_info_malformed(void)
{
    uint32_t bad[ARRAY_SIZE(rec_bar0_info)];
    g_autofree struct vfio_region_info *info = NULL;
    VFIODevice dev;
    Error *err = NULL;
    int fd;

    /* The capability lies beyond argsz. */
    memcpy(bad, rec_bar0_info, sizeof(bad));
    bad[3] = 64;
    region_info_fails(bad, sizeof(bad), "region 0");

    /* The chain links past its end. */
    memcpy(bad, rec_bar0_info, sizeof(bad));
    bad[9] = 0x1000;
    region_info_fails(bad, sizeof(bad), "region 0");

    /* argsz too small to hold the fixed part. */
    memcpy(bad, rec_bar0_info, sizeof(bad));
    bad[0] = 12;
    region_info_fails(bad, sizeof(bad), "bad argsz (12)");

    /* Keeps growing: more than the kernel could ever need. */
    memcpy(bad, rec_bar0_info, sizeof(bad));
    bad[0] = 1 << 24;
    region_info_fails(bad, sizeof(bad), "needs 16777216 bytes");

    /* Offset + size wraps around. */
    memcpy(bad, rec_bar0_info, sizeof(bad));
    bad[6] = 0xffffffff;
    bad[7] = 0xffffffff;
    region_info_fails(bad, sizeof(bad), "wraps");

    /* A region the device does not have. */
    fake_reset();
    attach_ok(&dev, NVME);
    g_assert_false(vfio_device_get_region_info(&dev, 9, &info, &fd, &err));
    assert_error(err, "no region 9 (the device has 9)");
    error_free(err);
    dev_close(&dev);
}

static void test_region_rw(void)
{
    VFIODevice dev;
    uint32_t id = 0;
    uint16_t cmd = 0x0406;
    Error *err = NULL;

    fake_reset();
    attach_ok(&dev, NVME);
    /* The config region is at the offset its info gives, short reads. */
    g_assert_true(vfio_device_region_read(&dev, VFIO_PCI_CONFIG_REGION_INDEX,
                                          0, 4, &id, &error_abort));
    g_assert_cmphex(le32toh(id), ==, 0x00101b36);
    g_assert_cmphex(fk.last_pread_off, ==, (0x700ULL << 32) + 2);
    g_assert_true(vfio_device_region_write(&dev, VFIO_PCI_CONFIG_REGION_INDEX,
                                           4, 2, &cmd, false, &error_abort));
    g_assert_cmpuint(fk.config[4], ==, 0x06);
    g_assert_cmpuint(fk.config[5], ==, 0x04);
    /* Past the region's end. */
    g_assert_false(vfio_device_region_read(&dev, VFIO_PCI_CONFIG_REGION_INDEX,
                                           0xffe, 4, &id, &err));
    assert_error(err, "cannot read 4 bytes at 0xffe of region 7");
    error_free(err);
    dev_close(&dev);
}

static void test_dma_map(void)
{
    static uint8_t ram[0x10000];
    VFIODevice dev;
    const FakeIoctl *e;
    Error *err = NULL;

    fake_reset();
    attach_ok(&dev, NVME);
    /* Trimmed inwards to the IOMMU's 4 KiB pages. */
    g_assert_true(vfio_device_dma_map(&dev, 0x800, 0x9000, -1, 0, ram + 0x800,
                                      false, &error_abort));
    e = last_ioctl(VFIO_IOMMU_MAP_DMA, 0);
    g_assert_nonnull(e);
    g_assert_cmphex(e->iova, ==, 0x1000);
    g_assert_cmphex(e->size, ==, 0x8000);
    g_assert_cmphex(e->flags, ==, VFIO_DMA_MAP_FLAG_READ |
                    VFIO_DMA_MAP_FLAG_WRITE);
    /* Less than a page: nothing to map, not an error. */
    g_assert_true(vfio_device_dma_map(&dev, 0x100000, 0x800, -1, 0, ram,
                                      true, &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_MAP_DMA), ==, 1);
    /* The MSI window is not a valid IOVA range. */
    g_assert_false(vfio_device_dma_map(&dev, 0xfee00000, 0x1000, -1, 0, ram,
                                       false, &err));
    assert_error(err, "outside the IOMMU's valid ranges");
    error_free(err);
    err = NULL;
    g_assert_true(vfio_device_dma_unmap(&dev, 0x800, 0x9000, &error_abort));
    e = last_ioctl(VFIO_IOMMU_UNMAP_DMA, 0);
    g_assert_nonnull(e);
    g_assert_cmphex(e->iova, ==, 0x1000);
    g_assert_cmphex(e->size, ==, 0x8000);

    /* Locked-memory limit too low: the kernel says ENOMEM. */
    fk.map_errno = ENOMEM;
    fk.memlock = 64 * 1024;
    g_assert_false(vfio_device_dma_map(&dev, 0, 0x10000, -1, 0, ram, false,
                                       &err));
    assert_error(err, "vfio 0000:00:04.0: cannot pin 64 KiB of guest memory"
                 " at IOVA 0x0 for DMA: the locked-memory limit"
                 " (RLIMIT_MEMLOCK, ulimit -l) is 64 KiB and 0 KiB are pinned"
                 " already");
    assert_hint(err, "LimitMEMLOCK");
    error_free(err);
    err = NULL;
    fk.memlock = RLIM_INFINITY;
    g_assert_false(vfio_device_dma_map(&dev, 0, 0x10000, -1, 0, ram, false,
                                       &err));
    assert_error(err, "Cannot allocate memory (locked-memory limit");
    error_free(err);
    err = NULL;
    fk.map_errno = ENOSPC;
    g_assert_false(vfio_device_dma_map(&dev, 0, 0x10000, -1, 0, ram, false,
                                       &err));
    assert_error(err, "cannot map 64 KiB of guest memory at IOVA 0x0");
    assert_hint(err, "dma_entry_limit");
    error_free(err);
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static void test_shared_group_and_container(void)
{
    static uint8_t ram[0x2000];
    VFIODevice a, b, c;

    fake_reset();
    attach_ok(&a, NVME);
    attach_ok(&b, "/sys/bus/pci/devices/0000:00:04.1");
    /* Same group: opened once. */
    g_assert(dev_group(&a) == dev_group(&b));
    g_assert_cmpuint(dev_group(&a)->ndevices, ==, 2);
    /* The same device twice in one process is refused. */
    {
        VFIODevice again = { .fd = -1 };
        Error *err = NULL;

        g_assert_false(vfio_kernel_device_attach(&again, NVME, &err));
        assert_error(err, "already in use");
        error_free(err);
        g_assert_cmpint(fk.open_fds, ==, 1 + 1 + 2);
        g_assert_cmpuint(dev_group(&a)->ndevices, ==, 2);
    }
    /* Another group joins the open container. */
    attach_ok(&c, "/sys/bus/pci/devices/0000:00:05.0");
    g_assert(dev_group(&c) != dev_group(&a));
    g_assert(dev_group(&c)->container == dev_group(&a)->container);
    g_assert_cmpuint(count_ioctls(VFIO_SET_IOMMU), ==, 1);
    /* The constraints were read again for the joined group (argsz retry). */
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_GET_INFO), ==, 4);
    g_assert_cmpint(fk.open_fds, ==, 1 + 2 + 3);

    /* Every device's listener maps the same RAM: one kernel mapping. */
    g_assert_true(vfio_device_dma_map(&a, 0, 0x2000, -1, 0, ram, false,
                                      &error_abort));
    g_assert_true(vfio_device_dma_map(&c, 0, 0x2000, -1, 0, ram, false,
                                      &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_MAP_DMA), ==, 1);
    g_assert_true(vfio_device_dma_unmap(&a, 0, 0x2000, &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_UNMAP_DMA), ==, 0);
    g_assert_true(vfio_device_dma_unmap(&c, 0, 0x2000, &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_UNMAP_DMA), ==, 1);

    dev_close(&a);
    g_assert_cmpint(fk.open_fds, ==, 5);
    dev_close(&b);
    g_assert_cmpint(fk.open_fds, ==, 3);
    dev_close(&c);
    g_assert_cmpint(fk.open_fds, ==, 0);

    /*
     * A malformed reply when a group joins: that group fails, the shared
     * container keeps the constraints it had.
     */
    {
        uint32_t bad[ARRAY_SIZE(rec_iommu_info)];
        Error *err = NULL;

        fake_reset();
        attach_ok(&a, NVME);
        memcpy(bad, rec_iommu_info, sizeof(bad));
        bad[19] = 40;
        fk.iommu_info = bad;
        c = (VFIODevice) { .fd = -1 };
        g_assert_false(vfio_kernel_device_attach(&c,
                       "/sys/bus/pci/devices/0000:00:05.0", &err));
        assert_error(err, "vfio 0000:00:05.0: IOVA range capability claims");
        error_free(err);
        g_assert_cmpuint(dev_group(&a)->container->iova_ranges->len, ==, 2);
        g_assert_cmpuint(dev_group(&a)->container->refs, ==, 1);
        g_assert_cmpint(fk.container_groups[0], ==, 1);
        dev_close(&a);
        g_assert_cmpint(fk.open_fds, ==, 0);
    }

    /* A kernel that refuses to share gets a container per group. */
    fake_reset();
    fk.accept_shared = false;
    attach_ok(&a, NVME);
    attach_ok(&c, "/sys/bus/pci/devices/0000:00:05.0");
    g_assert(dev_group(&c)->container != dev_group(&a)->container);
    g_assert_cmpuint(count_ioctls(VFIO_SET_IOMMU), ==, 2);
    dev_close(&a);
    dev_close(&c);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static GString *warnings;

static void capture_report(const char *msg, void *opaque)
{
    g_string_append(warnings, msg);
}

static void test_noiommu(void)
{
    static uint8_t ram[0x1000];
    VFIODevice dev;

    fake_reset();
    fk.noiommu = true;
    warnings = g_string_new("");
    error_report_set_sink(capture_report, NULL);
    attach_ok(&dev, NVME);
    error_report_set_sink(NULL, NULL);
    g_assert_nonnull(strstr(warnings->str, "group 12 has NO IOMMU"));
    g_string_free(warnings, true);
    g_assert_true(dev_group(&dev)->noiommu);
    g_assert_cmpint(dev_group(&dev)->container->iommu_type, ==,
                    VFIO_NOIOMMU_IOMMU);
    /* No IOMMU: nothing to map, and no IOMMU info to ask for. */
    g_assert_true(vfio_device_dma_map(&dev, 0, 0x1000, -1, 0, ram, false,
                                      &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_MAP_DMA), ==, 0);
    g_assert_cmpuint(count_ioctls(VFIO_IOMMU_GET_INFO), ==, 0);
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static void set_irq(VFIODevice *dev, uint32_t index, uint32_t flags,
                    uint32_t count, const int *fds)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set), .flags = flags, .index = index, .count = count,
    };

    g_assert_true(vfio_device_set_irqs(dev, &set, fds, &error_abort));
}

static void set_msix(VFIODevice *dev, uint32_t start, uint32_t count,
                     const int *fds)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_MSIX_IRQ_INDEX,
        .start = start,
        .count = count,
    };

    g_assert_true(vfio_device_set_irqs(dev, &set, fds, &error_abort));
}

static void test_irqs_noresize(void)
{
    const int fd0[] = { 40 }, fd3[] = { 43 }, fd1[] = { 41 };
    struct vfio_irq_set none = {
        .argsz = sizeof(none),
        .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
        .index = VFIO_PCI_MSIX_IRQ_INDEX,
    };
    struct vfio_irq_info info = { .index = VFIO_PCI_MSIX_IRQ_INDEX };
    const FakeIoctl *e;
    VFIODevice dev;
    Error *err = NULL;

    fake_reset();
    attach_ok(&dev, NVME);
    g_assert_true(vfio_device_get_irq_info(&dev, &info, &error_abort));
    g_assert_cmpuint(info.count, ==, 65);
    g_assert_true(info.flags & VFIO_IRQ_INFO_NORESIZE);

    set_msix(&dev, 0, 1, fd0);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmpuint(e->start, ==, 0);
    g_assert_cmpuint(e->count, ==, 1);
    g_assert_cmpint(e->fds[0], ==, 40);

    /* Growing a NORESIZE index: disable, then all vectors at once. */
    set_msix(&dev, 3, 1, fd3);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 1);
    g_assert_cmphex(e->flags, ==, VFIO_IRQ_SET_DATA_NONE |
                    VFIO_IRQ_SET_ACTION_TRIGGER);
    g_assert_cmpuint(e->count, ==, 0);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmpuint(e->start, ==, 0);
    g_assert_cmpuint(e->count, ==, 4);
    g_assert_cmpint(e->fds[0], ==, 40);
    g_assert_cmpint(e->fds[1], ==, -1);
    g_assert_cmpint(e->fds[2], ==, -1);
    g_assert_cmpint(e->fds[3], ==, 43);

    /* Inside the enabled range: in place. */
    set_msix(&dev, 1, 1, fd1);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmpuint(e->start, ==, 1);
    g_assert_cmpuint(e->count, ==, 1);
    g_assert_cmpint(e->fds[0], ==, 41);

    /* Disable, then the first vector again: no extra disable. */
    g_assert_true(vfio_device_set_irqs(&dev, &none, NULL, &error_abort));
    set_msix(&dev, 0, 1, fd0);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 1);
    g_assert_cmphex(e->flags & VFIO_IRQ_SET_DATA_TYPE_MASK, ==,
                    VFIO_IRQ_SET_DATA_NONE);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmpuint(e->count, ==, 1);

    /* More vectors than the device has, and an index it lacks. */
    {
        int fds[1] = { 50 };
        struct vfio_irq_set big = {
            .argsz = sizeof(big),
            .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
            .index = VFIO_PCI_MSIX_IRQ_INDEX, .start = 65, .count = 1,
        };

        g_assert_false(vfio_device_set_irqs(&dev, &big, fds, &err));
        assert_error(err, "has 65 vectors, 66 asked");
        error_free(err);
        err = NULL;
        big.index = 7;
        g_assert_false(vfio_device_set_irqs(&dev, &big, fds, &err));
        assert_error(err, "no irq index 7");
        error_free(err);
    }
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

static void test_intx_unmask_and_reset(void)
{
    /* Header plus one bool, as the kernel wants it in one buffer. */
    union {
        struct vfio_irq_set hdr;
        uint8_t bytes[sizeof(struct vfio_irq_set) + 1];
    } unmask = {
        .hdr = {
            .argsz = sizeof(struct vfio_irq_set) + 1,
            .flags = VFIO_IRQ_SET_DATA_BOOL | VFIO_IRQ_SET_ACTION_UNMASK,
            .index = VFIO_PCI_INTX_IRQ_INDEX, .start = 0, .count = 1,
        },
    };
    const int efd[] = { 60 };
    struct vfio_irq_set unmask_fd = {
        .argsz = sizeof(unmask_fd),
        .flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_UNMASK,
        .index = VFIO_PCI_INTX_IRQ_INDEX, .count = 1,
    };
    const FakeIoctl *e;
    VFIODevice dev;
    Error *err = NULL;

    unmask.bytes[sizeof(struct vfio_irq_set)] = 1;
    fake_reset();
    attach_ok(&dev, NVME);
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_TRIGGER, 1, efd);
    g_assert_true(vfio_device_set_irqs(&dev, &unmask.hdr, NULL,
                                       &error_abort));
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmphex(e->flags, ==, unmask.hdr.flags);
    g_assert_true(vfio_device_set_irqs(&dev, &unmask_fd, efd, &error_abort));
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmphex(e->flags, ==, unmask_fd.flags);
    g_assert_cmpint(e->fds[0], ==, 60);
    /* A bool array that argsz does not cover. */
    unmask.hdr.argsz = sizeof(struct vfio_irq_set);
    g_assert_false(vfio_device_set_irqs(&dev, &unmask.hdr, NULL, &err));
    assert_error(err, "1 bools in argsz");
    error_free(err);
    err = NULL;

    g_assert_true(vfio_device_reset(&dev, &error_abort));
    g_assert_cmpuint(count_ioctls(VFIO_DEVICE_RESET), ==, 1);
    dev.flags &= ~VFIO_DEVICE_FLAGS_RESET;
    g_assert_false(vfio_device_reset(&dev, &err));
    assert_error(err, "has no reset");
    error_free(err);
    dev_close(&dev);
    g_assert_cmpint(fk.open_fds, ==, 0);
}

/*
 * The device model keeps INTx set up while the guest switches to MSI-X;
 * the kernel refuses MSI-X while INTx is armed, so the backend suspends
 * INTx and re-arms it (trigger and unmask eventfds) when MSI-X goes off.
 */
static void test_intx_suspended_under_msix(void)
{
    const int intx_fd[] = { 70 }, unmask_fd[] = { 71 }, new_fd[] = { 72 };
    const int msix_fds[] = { 80, 81 };
    const FakeIoctl *e;
    VFIODevice dev;

    fake_reset();
    attach_ok(&dev, NVME);
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_TRIGGER, 1, intx_fd);
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_UNMASK, 1, unmask_fd);
    g_assert_cmpint(fk.irq_type, ==, VFIO_PCI_INTX_IRQ_INDEX);

    set_irq(&dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_TRIGGER, 2, msix_fds);
    g_assert_cmpint(fk.irq_type, ==, VFIO_PCI_MSIX_IRQ_INDEX);
    g_assert_cmpuint(fk.irq_nvec, ==, 2);

    /* INTx requests meanwhile are kept, not sent (the kernel refuses). */
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE |
            VFIO_IRQ_SET_ACTION_UNMASK, 1, NULL);
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_TRIGGER, 1, new_fd);
    g_assert_cmpint(fk.irq_type, ==, VFIO_PCI_MSIX_IRQ_INDEX);

    /* MSI-X off: INTx is armed again with the latest eventfds. */
    set_irq(&dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE |
            VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
    g_assert_cmpint(fk.irq_type, ==, VFIO_PCI_INTX_IRQ_INDEX);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 1);
    g_assert_cmpuint(e->index, ==, VFIO_PCI_INTX_IRQ_INDEX);
    g_assert_cmphex(e->flags, ==, VFIO_IRQ_SET_DATA_EVENTFD |
                    VFIO_IRQ_SET_ACTION_TRIGGER);
    g_assert_cmpint(e->fds[0], ==, 72);
    e = last_ioctl(VFIO_DEVICE_SET_IRQS, 0);
    g_assert_cmphex(e->flags, ==, VFIO_IRQ_SET_DATA_EVENTFD |
                    VFIO_IRQ_SET_ACTION_UNMASK);
    g_assert_cmpint(e->fds[0], ==, 71);

    /* INTx disabled while suspended is simply not re-armed. */
    set_irq(&dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_EVENTFD |
            VFIO_IRQ_SET_ACTION_TRIGGER, 1, msix_fds);
    set_irq(&dev, VFIO_PCI_INTX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE |
            VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
    set_irq(&dev, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_IRQ_SET_DATA_NONE |
            VFIO_IRQ_SET_ACTION_TRIGGER, 0, NULL);
    g_assert_cmpint(fk.irq_type, ==, -1);
    dev_close(&dev);
}

/*
 * Random corruptions of the recorded replies (bytes flipped, argsz
 * changed): attach and region info either work or fail with an Error,
 * never crash or read out of bounds (ASan in make check), and never
 * leave an fd open.
 */
static void test_mutated_replies(void)
{
    uint32_t iommu[ARRAY_SIZE(rec_iommu_info)];
    uint32_t bar0[ARRAY_SIZE(rec_bar0_info)];
    uint32_t devinfo[ARRAY_SIZE(rec_device_info)];
    int round, attached = 0, described = 0;

    for (round = 0; round < 2000; round++) {
        g_autofree struct vfio_region_info *info = NULL;
        uint32_t *target;
        size_t words;
        VFIODevice dev = { .fd = -1 };
        Error *err = NULL;
        int flips, fd;

        memcpy(iommu, rec_iommu_info, sizeof(iommu));
        memcpy(bar0, rec_bar0_info, sizeof(bar0));
        memcpy(devinfo, rec_device_info, sizeof(devinfo));
        switch (g_test_rand_int_range(0, 3)) {
        case 0:
            target = iommu;
            words = ARRAY_SIZE(iommu);
            break;
        case 1:
            target = bar0;
            words = ARRAY_SIZE(bar0);
            break;
        default:
            target = devinfo;
            words = ARRAY_SIZE(devinfo);
            break;
        }
        for (flips = g_test_rand_int_range(1, 4); flips; flips--) {
            uint32_t w = g_test_rand_int_range(0, words);

            if (g_test_rand_bit()) {
                target[w] ^= 1u << g_test_rand_int_range(0, 32);
            } else {
                /* Small values hit the offset and size checks. */
                target[w] = g_test_rand_int_range(0, 160);
            }
        }
        fake_reset();
        fk.iommu_info = iommu;
        fk.bar0_info = bar0;
        fk.device_info = devinfo;
        if (!vfio_kernel_device_attach(&dev, NVME, &err)) {
            g_assert_nonnull(err);
            error_free(err);
            g_assert_cmpint(fk.open_fds, ==, 0);
            continue;
        }
        attached++;
        if (vfio_device_get_region_info(&dev, 0, &info, &fd, &err)) {
            VFIORegionCaps caps = { 0 };

            /* What we hand out is consistent with what we held. */
            g_assert_cmpuint(info->argsz, >=, sizeof(*info));
            described++;
            if (vfio_region_info_parse_caps(info, info->argsz, &caps,
                                            NULL)) {
                vfio_region_caps_clear(&caps);
            }
        } else {
            g_assert_nonnull(err);
            error_free(err);
        }
        dev_close(&dev);
        g_assert_cmpint(fk.open_fds, ==, 0);
    }
    /* Both outcomes were exercised. */
    g_test_message("%d attached, %d region infos accepted", attached,
                   described);
    g_assert_cmpint(attached, >, 0);
    g_assert_cmpint(attached, <, 2000);
}

static GArray *kvm_added;       /* group fds registered with "KVM" */
static bool kvm_refuse;

static bool fake_kvm_add(int group_fd, Error **errp)
{
    if (kvm_refuse) {
        error_setg(errp, "KVM_SET_DEVICE_ATTR: Operation not permitted");
        return false;
    }
    g_array_append_val(kvm_added, group_fd);
    return true;
}

static void fake_kvm_del(int group_fd)
{
    guint i;

    for (i = 0; i < kvm_added->len; i++) {
        if (g_array_index(kvm_added, int, i) == group_fd) {
            g_array_remove_index(kvm_added, i);
            return;
        }
    }
    g_assert_not_reached();
}

static const VFIOKvmGroupOps fake_kvm_ops = {
    .add = fake_kvm_add,
    .del = fake_kvm_del,
};

/* With KVM in use, each group is registered once while it is open. */
static void test_kvm_group_registration(void)
{
    VFIODevice a, b;

    kvm_added = g_array_new(false, false, sizeof(int));
    vfio_kernel_set_kvm_group_ops(&fake_kvm_ops);
    fake_reset();
    attach_ok(&a, NVME);
    attach_ok(&b, "/sys/bus/pci/devices/0000:00:04.1");
    g_assert_cmpuint(kvm_added->len, ==, 1);
    g_assert_cmpint(g_array_index(kvm_added, int, 0), ==,
                    dev_group(&a)->fd);
    dev_close(&a);
    g_assert_cmpuint(kvm_added->len, ==, 1);
    dev_close(&b);
    g_assert_cmpuint(kvm_added->len, ==, 0);

    /* KVM refuses the group: the device fails, nothing stays open. */
    fake_reset();
    kvm_refuse = true;
    attach_fails("group 12: KVM_SET_DEVICE_ATTR");
    kvm_refuse = false;
    vfio_kernel_set_kvm_group_ops(NULL);
    g_array_unref(kvm_added);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    vfio_ioctl_set_ops(&fake_ops);
    g_test_add_func("/vfio-kernel/host/parse", test_host_parse);
    g_test_add_func("/vfio-kernel/attach/type1v2-with-iommu-caps",
                    test_attach_ok);
    g_test_add_func("/vfio-kernel/attach/type1-fallback",
                    test_attach_type1_fallback);
    g_test_add_func("/vfio-kernel/attach/errors-leave-nothing-open",
                    test_attach_errors);
    g_test_add_func("/vfio-kernel/iommu-info/malformed",
                    test_iommu_info_malformed);
    g_test_add_func("/vfio-kernel/region-info/argsz-retry-msix-mappable",
                    test_region_info);
    g_test_add_func("/vfio-kernel/region-info/malformed",
                    test_region_info_malformed);
    g_test_add_func("/vfio-kernel/region/rw-at-info-offset", test_region_rw);
    g_test_add_func("/vfio-kernel/replies/mutated-never-crash",
                    test_mutated_replies);
    g_test_add_func("/vfio-kernel/dma/trim-ranges-memlock", test_dma_map);
    g_test_add_func("/vfio-kernel/group/shared-group-and-container",
                    test_shared_group_and_container);
    g_test_add_func("/vfio-kernel/group/noiommu-warns", test_noiommu);
    g_test_add_func("/vfio-kernel/group/kvm-registration",
                    test_kvm_group_registration);
    g_test_add_func("/vfio-kernel/irq/msix-noresize-grow",
                    test_irqs_noresize);
    g_test_add_func("/vfio-kernel/irq/intx-suspended-under-msix",
                    test_intx_suspended_under_msix);
    g_test_add_func("/vfio-kernel/migration/v2-uapi", test_migration_v2);
    g_test_add_func("/vfio-kernel/irq/intx-unmask-and-reset",
                    test_intx_unmask_and_reset);
    return g_test_run();
}
