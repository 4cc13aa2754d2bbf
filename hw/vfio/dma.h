/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw/vfio/dma.c: the listener that maps guest RAM for a VFIODevice.
 * Private to hw/vfio.  It owns its mappings; a backend failure is told to
 * the device through @backend_failed.
 */
#ifndef HW_VFIO_DMA_H
#define HW_VFIO_DMA_H

#include <stdbool.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "system/memory.h"
#include "hw/vfio/vfio-device.h"

/* One mapped RAM section: where the device sees it, where we do. */
typedef struct VFIODmaMap {
    uint64_t iova;
    uint64_t size;
    uint8_t *hva;               /* NULL: RAM without a host pointer */
} VFIODmaMap;

typedef struct VFIODma {
    VFIODevice *vbasedev;
    void (*backend_failed)(void *opaque);
    void *opaque;
    MemoryListener listener;
    bool registered;
    GArray *maps;               /* VFIODmaMap */
} VFIODma;

/* Maps all guest RAM now and follows it from then on. */
bool vfio_dma_listener_start(VFIODma *dma, VFIODevice *vbasedev,
                             void (*backend_failed)(void *opaque),
                             void *opaque, Error **errp);
/* Unmaps everything (unless the device is broken) and unregisters. */
void vfio_dma_listener_stop(VFIODma *dma);

#endif
