/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DMA listener: makes guest RAM reachable by the device.
 *
 * Every RAM section of the system address space is mapped through the
 * backend's dma_map (vfio-user sends the RAM's memfd; the kernel backend
 * will use the IOMMU), and unmapped when the section goes away.  Device
 * memory (RAM-device regions, including our own BARs) is skipped: no
 * peer-to-peer.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/address-spaces.h"
#include "dma.h"
#include "trace.h"

static void vfio_dma_backend_failed(VFIODma *dma)
{
    if (dma->backend_failed) {
        dma->backend_failed(dma->opaque);
    }
}

static bool vfio_dma_section_wanted(MemoryRegionSection *section)
{
    return memory_region_is_ram(section->mr) &&
           !memory_region_is_ram_device(section->mr) && section->size;
}

static void vfio_dma_region_add(MemoryListener *listener,
                                MemoryRegionSection *section)
{
    VFIODma *dma = container_of(listener, VFIODma, listener);
    VFIODevice *vbasedev = dma->vbasedev;
    MemoryRegion *mr = section->mr;
    VFIODmaMap map = {
        .iova = section->offset_within_address_space,
        .size = section->size,
    };
    uint8_t *ptr;
    int fd;
    Error *err = NULL;

    if (!vfio_dma_section_wanted(section) || vbasedev->broken) {
        return;
    }
    fd = memory_region_get_fd(mr);
    ptr = memory_region_get_ram_ptr(mr);
    trace_vfio_pci_dma_map(vbasedev->name, map.iova, map.size, fd);
    if (!vfio_device_dma_map(vbasedev, map.iova, map.size, fd,
                             fd >= 0 ? memory_region_get_fd_offset(mr) +
                                       section->offset_within_region : 0,
                             ptr ? ptr + section->offset_within_region
                                 : NULL,
                             section->readonly, &err)) {
        /* The device cannot reach this RAM; it still works elsewhere. */
        warn_report("vfio %s: DMA map [0x%" PRIx64 " + 0x%" PRIx64 "]: %s",
                    vbasedev->name, map.iova, map.size,
                    error_get_pretty(err));
        error_free(err);
        vfio_dma_backend_failed(dma);
        return;
    }
    map.hva = ptr ? ptr + section->offset_within_region : NULL;
    g_array_append_val(dma->maps, map);
}

static void vfio_dma_region_del(MemoryListener *listener,
                                MemoryRegionSection *section)
{
    VFIODma *dma = container_of(listener, VFIODma, listener);
    VFIODevice *vbasedev = dma->vbasedev;
    uint64_t iova = section->offset_within_address_space;
    Error *err = NULL;
    guint i;

    if (!vfio_dma_section_wanted(section)) {
        return;
    }
    for (i = 0; i < dma->maps->len; i++) {
        VFIODmaMap *map = &g_array_index(dma->maps, VFIODmaMap, i);

        if (map->iova != iova || map->size != section->size) {
            continue;
        }
        g_array_remove_index_fast(dma->maps, i);
        trace_vfio_pci_dma_unmap(vbasedev->name, iova, section->size);
        if (!vbasedev->broken &&
            !vfio_device_dma_unmap(vbasedev, iova, section->size,
                                   &err)) {
            warn_report("vfio %s: DMA unmap [0x%" PRIx64 " + 0x%" PRIx64
                        "]: %s", vbasedev->name, iova, section->size,
                        error_get_pretty(err));
            error_free(err);
            vfio_dma_backend_failed(dma);
        }
        return;
    }
}

bool vfio_dma_listener_start(VFIODma *dma, VFIODevice *vbasedev,
                             void (*backend_failed)(void *opaque),
                             void *opaque, Error **errp)
{
    dma->vbasedev = vbasedev;
    dma->backend_failed = backend_failed;
    dma->opaque = opaque;
    dma->maps = g_array_new(false, false, sizeof(VFIODmaMap));
    dma->listener = (MemoryListener) {
        .region_add = vfio_dma_region_add,
        .region_del = vfio_dma_region_del,
        .name = "vfio-dma",
        .priority = 10,
    };
    memory_listener_register(&dma->listener, &address_space_memory);
    dma->registered = true;
    if (vbasedev->broken) {
        error_setg(errp, "vfio %s: device lost while mapping guest memory",
                   vbasedev->name);
        return false;
    }
    return true;
}

void vfio_dma_listener_stop(VFIODma *dma)
{
    if (dma->registered) {
        /* region_del for every section unmaps what is still mapped. */
        memory_listener_unregister(&dma->listener);
        dma->registered = false;
    }
    g_clear_pointer(&dma->maps, g_array_unref);
}
