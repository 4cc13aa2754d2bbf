/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw/vfio/migration.c: a VFIODevice's own state as migration state,
 * through the v2 uAPI the kernel and vfio-user share.  Private to
 * hw/vfio.
 */
#ifndef HW_VFIO_MIGRATION_H
#define HW_VFIO_MIGRATION_H

#include <stdbool.h>
#include "qemu/typedefs.h"
#include "hw/vfio/vfio-device.h"
#include "dma.h"

typedef struct VFIOMigration VFIOMigration;

/*
 * Asks the device whether it migrates (VFIO_DEVICE_FEATURE_MIGRATION
 * with STOP_COPY); if so, registers its data as live state @idstr (the
 * same on both sides), stops and starts it with the VM and merges the
 * pages it writes (DMA logging over @dma's maps) into RAM migration.
 * NULL with *errp set, saying why, when it cannot migrate: the caller
 * keeps the migration blocker then.
 */
VFIOMigration *vfio_migration_new(VFIODevice *vbasedev, VFIODma *dma,
                                  const char *idstr, Error **errp);
void vfio_migration_free(VFIOMigration *m);

#endif
