/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Kernel VFIO groups and containers: /dev/vfio/N and /dev/vfio/vfio.
 *
 * Groups are opened once and shared by their devices; a group joins the
 * first open container that the kernel lets it join (same IOMMU domain
 * rules), else a new container with the best IOMMU type.  The container
 * owns the IOMMU's constraints (page sizes, valid IOVA ranges, mapping
 * budget) and the DMA mappings, counted so that the listeners of several
 * devices sharing it may map the same guest RAM.
 */
#include "qemu/osdep.h"
#include <sys/resource.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "vfio-ioctl.h"
#include "hw/vfio/vfio-kernel.h"
#include "trace.h"

/* The kernel's IOMMU info with its capabilities is a few hundred bytes. */
#define IOMMU_INFO_MAX_LEN (64 * 1024)
/* More valid IOVA windows than any real IOMMU reports. */
#define IOMMU_MAX_IOVA_RANGES 1024

typedef struct VFIODmaMapping {
    uint64_t iova;
    uint64_t size;
    unsigned int refs;
} VFIODmaMapping;

static GList *vfio_groups;
static GList *vfio_containers;
static const VFIOKvmGroupOps *kvm_group_ops;

static const char *iommu_type_name(int type)
{
    switch (type) {
    case VFIO_TYPE1v2_IOMMU:
        return "type1v2";
    case VFIO_TYPE1_IOMMU:
        return "type1";
    case VFIO_NOIOMMU_IOMMU:
        return "no-IOMMU";
    default:
        return "unknown";
    }
}

void vfio_kernel_set_kvm_group_ops(const VFIOKvmGroupOps *ops)
{
    kvm_group_ops = ops;
}

/*
 * Walks the capability chain of a type1 IOMMU info buffer of @len bytes.
 * Offsets must be 8-byte aligned, after the fixed header, strictly
 * increasing (no loops) and each capability must fit before the next.
 */
static bool iommu_info_parse_caps(VFIOContainer *container,
                                  const struct vfio_iommu_type1_info *info,
                                  size_t len, const char *devname,
                                  Error **errp)
{
    const uint8_t *buf = (const uint8_t *)info;
    uint32_t off = info->cap_offset;
    uint32_t prev = 0;

    while (off) {
        struct vfio_info_cap_header hdr;
        uint32_t end;

        if (off < sizeof(*info) || off % 4 || off <= prev ||
            off > len - sizeof(hdr)) {
            error_setg(errp, "vfio %s: IOMMU info capability at offset %u is"
                       " out of range (%zu bytes of info)", devname, off, len);
            return false;
        }
        memcpy(&hdr, buf + off, sizeof(hdr));
        end = hdr.next ? hdr.next : len;
        if (hdr.next && (hdr.next <= off || hdr.next > len)) {
            error_setg(errp, "vfio %s: IOMMU info capability %u at offset %u"
                       " links to offset %u, out of range", devname, hdr.id,
                       off, hdr.next);
            return false;
        }
        trace_vfio_iommu_info_cap(devname, off, hdr.id, hdr.version);
        if (hdr.id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
            struct vfio_iommu_type1_info_cap_iova_range cap;
            uint32_t i;

            if (end - off < sizeof(cap)) {
                error_setg(errp, "vfio %s: truncated IOVA range capability",
                           devname);
                return false;
            }
            memcpy(&cap, buf + off, sizeof(cap));
            if (cap.nr_iovas > IOMMU_MAX_IOVA_RANGES ||
                cap.nr_iovas * sizeof(struct vfio_iova_range) >
                end - off - sizeof(cap)) {
                error_setg(errp, "vfio %s: IOVA range capability claims %u"
                           " ranges in %u bytes", devname, cap.nr_iovas,
                           end - off);
                return false;
            }
            g_array_set_size(container->iova_ranges, 0);
            for (i = 0; i < cap.nr_iovas; i++) {
                struct vfio_iova_range r;
                VFIOIovaRange range;

                memcpy(&r, buf + off + sizeof(cap) + i * sizeof(r),
                       sizeof(r));
                if (r.start > r.end) {
                    error_setg(errp, "vfio %s: IOVA range %u is inverted"
                               " (0x%" PRIx64 " > 0x%" PRIx64 ")", devname, i,
                               (uint64_t)r.start, (uint64_t)r.end);
                    return false;
                }
                range = (VFIOIovaRange) { .start = r.start, .end = r.end };
                g_array_append_val(container->iova_ranges, range);
            }
        } else if (hdr.id == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL) {
            struct vfio_iommu_type1_info_dma_avail cap;

            if (end - off < sizeof(cap)) {
                error_setg(errp, "vfio %s: truncated DMA mapping budget"
                           " capability", devname);
                return false;
            }
            memcpy(&cap, buf + off, sizeof(cap));
            container->has_dma_avail = true;
            container->dma_avail = cap.avail;
        }
        prev = off;
        off = hdr.next;
    }
    return true;
}

/* VFIO_IOMMU_GET_INFO with the argsz retry protocol. */
static bool container_get_iommu_info(VFIOContainer *container,
                                     const char *devname, Error **errp)
{
    const VFIOIoctlOps *sys = vfio_ioctl_ops();
    uint32_t argsz = sizeof(struct vfio_iommu_type1_info);
    g_autofree struct vfio_iommu_type1_info *info = NULL;
    VFIOContainer parsed;
    int attempt;

    for (attempt = 0; ; attempt++) {
        g_free(info);
        info = g_malloc0(argsz);
        info->argsz = argsz;
        if (sys->ioctl(container->fd, VFIO_IOMMU_GET_INFO, info) < 0) {
            error_setg_errno(errp, errno, "vfio %s: cannot get the IOMMU's"
                             " info", devname);
            return false;
        }
        if (info->argsz < offsetof(struct vfio_iommu_type1_info, cap_offset)) {
            error_setg(errp, "vfio %s: IOMMU info reply has a bad argsz (%u)",
                       devname, info->argsz);
            return false;
        }
        if (info->argsz <= argsz) {
            break;
        }
        /* The capabilities did not fit: ask again, once, bounded. */
        if (attempt || info->argsz > IOMMU_INFO_MAX_LEN) {
            error_setg(errp, "vfio %s: IOMMU info needs %u bytes (limit %u)",
                       devname, info->argsz,
                       attempt ? argsz : IOMMU_INFO_MAX_LEN);
            return false;
        }
        argsz = info->argsz;
    }

    /*
     * Parse into a scratch copy: a container other groups already use
     * keeps its constraints if the new reply is malformed.
     */
    parsed = (VFIOContainer) {
        .iova_ranges = g_array_new(false, false, sizeof(VFIOIovaRange)),
    };
    parsed.pgsizes = info->flags & VFIO_IOMMU_INFO_PGSIZES ?
                     info->iova_pgsizes : 0;
    if (!parsed.pgsizes) {
        /* No page sizes reported: the host page is always supported. */
        parsed.pgsizes = (uint64_t)sysconf(_SC_PAGESIZE);
    }
    if ((info->flags & VFIO_IOMMU_INFO_CAPS) && info->cap_offset &&
        !iommu_info_parse_caps(&parsed, info, MIN(argsz, info->argsz),
                               devname, errp)) {
        g_array_unref(parsed.iova_ranges);
        return false;
    }
    g_array_unref(container->iova_ranges);
    container->iova_ranges = parsed.iova_ranges;
    container->pgsizes = parsed.pgsizes;
    container->has_dma_avail = parsed.has_dma_avail;
    container->dma_avail = parsed.dma_avail;
    trace_vfio_container_iommu_info(devname, container->pgsizes,
                                    container->iova_ranges->len);
    return true;
}

static void container_free(VFIOContainer *container)
{
    if (container->fd >= 0) {
        vfio_ioctl_ops()->close(container->fd);
    }
    g_array_unref(container->iova_ranges);
    g_array_unref(container->mappings);
    g_free(container);
}

/* A new container for @group: API check, IOMMU type, constraints. */
static VFIOContainer *container_new(VFIOGroup *group, const char *devname,
                                    Error **errp)
{
    const VFIOIoctlOps *sys = vfio_ioctl_ops();
    static const int types[] = { VFIO_TYPE1v2_IOMMU, VFIO_TYPE1_IOMMU };
    VFIOContainer *container = g_new0(VFIOContainer, 1);
    int version, i;

    container->iova_ranges = g_array_new(false, false, sizeof(VFIOIovaRange));
    container->mappings = g_array_new(false, false, sizeof(VFIODmaMapping));
    container->fd = sys->open("/dev/vfio/vfio", O_RDWR);
    if (container->fd < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot open /dev/vfio/vfio",
                         devname);
        error_append_hint(errp, "Is the vfio module loaded "
                          "(modprobe vfio-pci)?\n");
        goto fail;
    }
    version = sys->ioctl(container->fd, VFIO_GET_API_VERSION, NULL);
    if (version != VFIO_API_VERSION) {
        error_setg(errp, "vfio %s: /dev/vfio/vfio speaks VFIO API version %d,"
                   " Conduit needs version %d", devname, version,
                   VFIO_API_VERSION);
        goto fail;
    }

    container->iommu_type = -1;
    if (group->noiommu) {
        if (sys->ioctl(container->fd, VFIO_CHECK_EXTENSION,
                       (void *)(uintptr_t)VFIO_NOIOMMU_IOMMU) > 0) {
            container->iommu_type = VFIO_NOIOMMU_IOMMU;
        }
    } else {
        for (i = 0; i < ARRAY_SIZE(types); i++) {
            if (sys->ioctl(container->fd, VFIO_CHECK_EXTENSION,
                           (void *)(uintptr_t)types[i]) > 0) {
                container->iommu_type = types[i];
                break;
            }
        }
    }
    if (container->iommu_type < 0) {
        error_setg(errp, "vfio %s: the kernel offers no %s IOMMU type for"
                   " group %d", devname,
                   group->noiommu ? "no-IOMMU" : "type1/type1v2",
                   group->groupid);
        goto fail;
    }

    if (sys->ioctl(group->fd, VFIO_GROUP_SET_CONTAINER, &container->fd) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot add group %d to a"
                         " container", devname, group->groupid);
        goto fail;
    }
    if (sys->ioctl(container->fd, VFIO_SET_IOMMU,
                   (void *)(uintptr_t)container->iommu_type) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot set the %s IOMMU for"
                         " group %d", devname,
                         iommu_type_name(container->iommu_type),
                         group->groupid);
        sys->ioctl(group->fd, VFIO_GROUP_UNSET_CONTAINER, NULL);
        goto fail;
    }
    if (container->iommu_type != VFIO_NOIOMMU_IOMMU &&
        !container_get_iommu_info(container, devname, errp)) {
        sys->ioctl(group->fd, VFIO_GROUP_UNSET_CONTAINER, NULL);
        goto fail;
    }
    trace_vfio_container_new(devname, container->fd,
                             iommu_type_name(container->iommu_type));
    return container;

fail:
    container_free(container);
    return NULL;
}

/* Puts @group into a container: a shared one if the kernel accepts. */
static bool group_attach_container(VFIOGroup *group, const char *devname,
                                   Error **errp)
{
    const VFIOIoctlOps *sys = vfio_ioctl_ops();
    VFIOContainer *container;
    GList *l;

    for (l = vfio_containers; l; l = l->next) {
        container = l->data;
        if ((container->iommu_type == VFIO_NOIOMMU_IOMMU) != group->noiommu) {
            continue;
        }
        if (sys->ioctl(group->fd, VFIO_GROUP_SET_CONTAINER,
                       &container->fd) == 0) {
            /* The IOMMU constraints may narrow with the new group. */
            if (container->iommu_type != VFIO_NOIOMMU_IOMMU &&
                !container_get_iommu_info(container, devname, errp)) {
                sys->ioctl(group->fd, VFIO_GROUP_UNSET_CONTAINER, NULL);
                return false;
            }
            trace_vfio_group_share_container(group->groupid, container->fd);
            group->container = container;
            container->refs++;
            return true;
        }
    }
    container = container_new(group, devname, errp);
    if (!container) {
        return false;
    }
    container->refs = 1;
    group->container = container;
    vfio_containers = g_list_prepend(vfio_containers, container);
    return true;
}

static void group_detach_container(VFIOGroup *group)
{
    VFIOContainer *container = group->container;

    vfio_ioctl_ops()->ioctl(group->fd, VFIO_GROUP_UNSET_CONTAINER, NULL);
    group->container = NULL;
    if (--container->refs == 0) {
        vfio_containers = g_list_remove(vfio_containers, container);
        container_free(container);
    }
}

VFIOGroup *vfio_group_get(int groupid, const char *devname, Error **errp)
{
    const VFIOIoctlOps *sys = vfio_ioctl_ops();
    struct vfio_group_status status = { .argsz = sizeof(status) };
    g_autofree char *path = NULL;
    VFIOGroup *group;
    GList *l;

    for (l = vfio_groups; l; l = l->next) {
        group = l->data;
        if (group->groupid == groupid) {
            group->ndevices++;
            return group;
        }
    }

    group = g_new0(VFIOGroup, 1);
    group->groupid = groupid;
    path = g_strdup_printf("/dev/vfio/%d", groupid);
    group->fd = sys->open(path, O_RDWR);
    if (group->fd < 0 && errno == ENOENT) {
        g_autofree char *noiommu_path =
            g_strdup_printf("/dev/vfio/noiommu-%d", groupid);

        group->fd = sys->open(noiommu_path, O_RDWR);
        if (group->fd >= 0) {
            group->noiommu = true;
            warn_report("vfio %s: group %d has NO IOMMU: the device can DMA"
                        " anywhere in host memory, and Conduit cannot"
                        " protect the host from it", devname, groupid);
        } else {
            errno = ENOENT;
        }
    }
    if (group->fd < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot open group %d (%s)",
                         devname, groupid, path);
        error_append_hint(errp, "Bind the device to vfio-pci and check the"
                          " permissions of %s.\n", path);
        g_free(group);
        return NULL;
    }

    if (sys->ioctl(group->fd, VFIO_GROUP_GET_STATUS, &status) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot get the status of"
                         " group %d", devname, groupid);
        goto fail;
    }
    if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE)) {
        error_setg(errp, "vfio %s: group %d is not viable: every device in"
                   " it must be bound to vfio-pci or to no driver", devname,
                   groupid);
        error_append_hint(errp, "The group's devices are listed in"
                          " /sys/kernel/iommu_groups/%d/devices.\n", groupid);
        goto fail;
    }
    if (!group_attach_container(group, devname, errp)) {
        goto fail;
    }
    if (kvm_group_ops && !kvm_group_ops->add(group->fd, errp)) {
        error_prepend(errp, "vfio %s: group %d: ", devname, groupid);
        group_detach_container(group);
        goto fail;
    }
    group->ndevices = 1;
    vfio_groups = g_list_prepend(vfio_groups, group);
    trace_vfio_group_open(devname, groupid, group->fd, group->noiommu);
    return group;

fail:
    sys->close(group->fd);
    g_free(group);
    return NULL;
}

void vfio_group_put(VFIOGroup *group)
{
    if (!group || --group->ndevices) {
        return;
    }
    if (kvm_group_ops) {
        kvm_group_ops->del(group->fd);
    }
    group_detach_container(group);
    vfio_groups = g_list_remove(vfio_groups, group);
    trace_vfio_group_close(group->groupid);
    vfio_ioctl_ops()->close(group->fd);
    g_free(group);
}

/*
 * Trims [@iova, @iova + @size) inwards to the IOMMU's smallest page.
 * Returns false when nothing is left.
 */
static bool container_trim(VFIOContainer *container, uint64_t *iova,
                           uint64_t *size)
{
    uint64_t pg = container->pgsizes & -container->pgsizes;
    uint64_t start, end;

    if (*size == 0 || *iova + *size < *iova || *iova > UINT64_MAX - pg) {
        return false;
    }
    start = (*iova + pg - 1) & ~(pg - 1);
    end = (*iova + *size) & ~(pg - 1);
    if (end <= start) {
        return false;
    }
    *iova = start;
    *size = end - start;
    return true;
}

static int container_find_mapping(VFIOContainer *container, uint64_t iova,
                                  uint64_t size)
{
    guint i;

    for (i = 0; i < container->mappings->len; i++) {
        VFIODmaMapping *m = &g_array_index(container->mappings,
                                           VFIODmaMapping, i);
        if (m->iova == iova && m->size == size) {
            return i;
        }
    }
    return -1;
}

static uint64_t container_mapped_bytes(VFIOContainer *container)
{
    uint64_t total = 0;
    guint i;

    for (i = 0; i < container->mappings->len; i++) {
        total += g_array_index(container->mappings, VFIODmaMapping, i).size;
    }
    return total;
}

static bool container_range_valid(VFIOContainer *container, uint64_t iova,
                                  uint64_t size)
{
    guint i;

    if (!container->iova_ranges->len) {
        return true;
    }
    for (i = 0; i < container->iova_ranges->len; i++) {
        VFIOIovaRange *r = &g_array_index(container->iova_ranges,
                                          VFIOIovaRange, i);
        if (iova >= r->start && iova + size - 1 <= r->end) {
            return true;
        }
    }
    return false;
}

/*
 * ENOMEM from MAP_DMA almost always means the pinned pages would exceed
 * RLIMIT_MEMLOCK.  The limit goes into the message itself (callers may
 * print only that), how to raise it into the hint.
 */
static void set_memlock_error(VFIOContainer *container, const char *devname,
                              uint64_t iova, uint64_t size, Error **errp)
{
    struct rlimit rl;

    if (vfio_ioctl_ops()->getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
        rl.rlim_cur != RLIM_INFINITY) {
        error_setg(errp, "vfio %s: cannot pin %" PRIu64 " KiB of guest"
                   " memory at IOVA 0x%" PRIx64 " for DMA: the locked-memory"
                   " limit (RLIMIT_MEMLOCK, ulimit -l) is %llu KiB and %"
                   PRIu64 " KiB are pinned already", devname, size / 1024,
                   iova, (unsigned long long)rl.rlim_cur / 1024,
                   container_mapped_bytes(container) / 1024);
    } else {
        error_setg(errp, "vfio %s: cannot pin %" PRIu64 " KiB of guest"
                   " memory at IOVA 0x%" PRIx64 " for DMA: %s (locked-memory"
                   " limit or host memory)", devname, size / 1024, iova,
                   strerror(ENOMEM));
    }
    error_append_hint(errp, "The device needs all of guest RAM pinned. Raise"
                      " the limit above guest RAM size: 'ulimit -l unlimited'"
                      " in the shell that starts Conduit,"
                      " LimitMEMLOCK=infinity in a systemd unit, or a memlock"
                      " line in /etc/security/limits.conf.\n");
}

bool vfio_container_dma_map(VFIOContainer *container, const char *devname,
                            uint64_t iova, uint64_t size, void *vaddr,
                            bool readonly, Error **errp)
{
    uint64_t start = iova, len = size;
    struct vfio_iommu_type1_dma_map map;
    VFIODmaMapping mapping;
    int idx;

    if (container->iommu_type == VFIO_NOIOMMU_IOMMU) {
        return true;
    }
    if (!container_trim(container, &start, &len)) {
        trace_vfio_container_dma_skip(devname, iova, size);
        return true;
    }
    if (!container_range_valid(container, start, len)) {
        error_setg(errp, "vfio %s: guest memory at IOVA [0x%" PRIx64
                   ", 0x%" PRIx64 "] lies outside the IOMMU's valid ranges",
                   devname, start, start + len - 1);
        return false;
    }
    idx = container_find_mapping(container, start, len);
    if (idx >= 0) {
        g_array_index(container->mappings, VFIODmaMapping, idx).refs++;
        return true;
    }

    map = (struct vfio_iommu_type1_dma_map) {
        .argsz = sizeof(map),
        .flags = VFIO_DMA_MAP_FLAG_READ |
                 (readonly ? 0 : VFIO_DMA_MAP_FLAG_WRITE),
        .vaddr = (uintptr_t)vaddr + (start - iova),
        .iova = start,
        .size = len,
    };
    trace_vfio_container_dma_map(devname, start, len, readonly);
    if (vfio_ioctl_ops()->ioctl(container->fd, VFIO_IOMMU_MAP_DMA,
                                &map) < 0) {
        int err = errno;

        if (err == ENOMEM) {
            set_memlock_error(container, devname, start, len, errp);
            return false;
        }
        error_setg_errno(errp, err, "vfio %s: cannot map %" PRIu64 " KiB of"
                         " guest memory at IOVA 0x%" PRIx64 " for DMA",
                         devname, len / 1024, start);
        if (err == ENOSPC) {
            error_append_hint(errp, "The IOMMU's mapping budget is spent%s;"
                              " raise vfio_iommu_type1's dma_entry_limit"
                              " module parameter.\n",
                              container->has_dma_avail ? "" : " (probably)");
        }
        return false;
    }
    if (container->has_dma_avail && container->dma_avail) {
        container->dma_avail--;
    }
    mapping = (VFIODmaMapping) { .iova = start, .size = len, .refs = 1 };
    g_array_append_val(container->mappings, mapping);
    return true;
}

bool vfio_container_dma_unmap(VFIOContainer *container, const char *devname,
                              uint64_t iova, uint64_t size, Error **errp)
{
    uint64_t start = iova, len = size;
    struct vfio_iommu_type1_dma_unmap unmap;
    VFIODmaMapping *m;
    int idx;

    if (container->iommu_type == VFIO_NOIOMMU_IOMMU ||
        !container_trim(container, &start, &len)) {
        return true;
    }
    idx = container_find_mapping(container, start, len);
    if (idx < 0) {
        /* Never mapped (or trimmed to nothing): nothing to undo. */
        trace_vfio_container_dma_skip(devname, iova, size);
        return true;
    }
    m = &g_array_index(container->mappings, VFIODmaMapping, idx);
    if (--m->refs) {
        return true;
    }
    g_array_remove_index_fast(container->mappings, idx);
    unmap = (struct vfio_iommu_type1_dma_unmap) {
        .argsz = sizeof(unmap), .iova = start, .size = len,
    };
    trace_vfio_container_dma_unmap(devname, start, len);
    if (vfio_ioctl_ops()->ioctl(container->fd, VFIO_IOMMU_UNMAP_DMA,
                                &unmap) < 0) {
        error_setg_errno(errp, errno, "vfio %s: cannot unmap IOVA 0x%" PRIx64
                         " (+0x%" PRIx64 ")", devname, start, len);
        return false;
    }
    if (container->has_dma_avail) {
        container->dma_avail++;
    }
    return true;
}
