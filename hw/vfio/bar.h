/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hw/vfio/bar.c: one device BAR, from region info to teardown.
 *
 * bar.c owns everything a BAR is made of: the region info and
 * capabilities, the fd it is mmapped through, the mmaps, the container
 * the PCI core maps, the forward region and the rendered parts.  It knows
 * nothing about PCI config space or interrupts: what it must tell the
 * device arrives through VFIOBarHooks, and what it decides with is a
 * VFIOBarPlanInput (hw/vfio/bar-plan.h).  Private to hw/vfio.
 */
#ifndef HW_VFIO_BAR_H
#define HW_VFIO_BAR_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "system/memory.h"
#include "hw/vfio/vfio-device.h"
#include "bar-plan.h"

typedef struct VFIOBar VFIOBar;

/* The device region behind a BAR, from its region info. */
typedef struct VFIORegion {
    uint32_t index;             /* VFIO_PCI_BAR0_REGION_INDEX + BAR */
    uint32_t flags;             /* VFIO_REGION_INFO_FLAG_* */
    uint64_t size;              /* 0: no device region */
    /*
     * Offset to pass to mmap(mmap_fd, ...): the region's offset inside
     * the kernel device fd, or the offset the vfio-user server gave
     * for the fd it sent with the region info.
     */
    uint64_t fd_offset;
    int mmap_fd;                /* -1: the region cannot be mmapped */
} VFIORegion;

/* One mmapped area of the BAR: plan->areas[i] for mmaps[i]. */
typedef struct VFIOMmap {
    uint64_t offset;            /* inside the region, host-page aligned */
    uint64_t size;
    void *mmap;                 /* NULL until mapped */
} VFIOMmap;

/* What a BAR tells its device.  Both may be NULL. */
typedef struct VFIOBarHooks {
    /*
     * A guest access reached the device through a trapped page (the
     * device model takes it as the EOI of a pending INTx).
     */
    void (*access_done)(void *opaque);
    /* The backend failed an access: the device may have been lost. */
    void (*backend_failed)(void *opaque);
} VFIOBarHooks;

/* Which PBA overlay state a part is rendered for. */
#define VFIO_BAR_VIEW_ALWAYS  0
#define VFIO_BAR_VIEW_PBA_OFF 1
#define VFIO_BAR_VIEW_PBA_ON  2

/* One piece of a rendered BAR: a RAM-device or an mmap-served I/O region. */
typedef struct VFIOBarPart {
    VFIOBar *bar;
    MemoryRegion mr;
    uint64_t offset;            /* inside the BAR */
    uint8_t *ptr;               /* mmap pointer for offset */
    bool served;                /* trapped page: I/O ops on the mapping */
    uint8_t view;               /* VFIO_BAR_VIEW_* */
} VFIOBarPart;

struct VFIOBar {
    /* Identity, from vfio_bar_init(). */
    VFIODevice *vbasedev;
    Object *owner;
    const VFIOBarHooks *hooks;
    void *opaque;
    uint32_t nr;

    /* The device's region, from vfio_bar_get_info(). */
    VFIORegion region;          /* region.size 0: no device region */
    VFIORegionCaps caps;
    uint8_t type;               /* PCI_BASE_ADDRESS_* low bits */
    bool mem64;
    /* As the guest sees it (>= region.size); x-msix-relocation grows it. */
    uint64_t bar_size;

    /* Rendered by vfio_bar_realize(). */
    MemoryRegion container;     /* what the PCI core maps */
    bool container_init;
    MemoryRegion forward;       /* traps to the backend, below the parts */
    bool forward_init;
    VFIOBarPlanInput plan_in;   /* what the plan was made from */
    VFIOBarPlan *plan;
    uint32_t nr_mmaps;          /* the plan's areas, as mapped */
    VFIOMmap *mmaps;
    /* Every rendered part: one view for each PBA overlay state. */
    GPtrArray *parts;
    bool pba_view;              /* which view is enabled */
    bool hidden;                /* only the forward region shows */
    /* Telemetry of the trapped pages, for hot pages. */
    GHashTable *page_hits;      /* page offset -> accesses */
    bool hot_page_warned;
};

/* Names the BAR; every other field starts empty.  Cannot fail. */
void vfio_bar_init(VFIOBar *bar, Object *owner, VFIODevice *vbasedev,
                   uint32_t nr, const VFIOBarHooks *hooks, void *opaque);
/*
 * Reads the region info and capabilities of the BAR whose config-space
 * register reads @bar_reg (which tells memory or I/O, 32 or 64 bits).
 */
bool vfio_bar_get_info(VFIOBar *bar, uint32_t bar_reg, Error **errp);
/*
 * Creates the container of bar_size bytes and, for a device region,
 * plans it with @in (the BAR's own fields are filled in here), mmaps the
 * plan's areas and renders it.
 */
bool vfio_bar_realize(VFIOBar *bar, const VFIOBarPlanInput *in,
                      Error **errp);
/* Enables the view matching the PBA overlay state (lazy PBA). */
void vfio_bar_set_pba_view(VFIOBar *bar, bool pba_enabled);
/*
 * Shows only the forward region, so every access traps: while INTx is
 * pending (any access may be the guest's EOI), and once the device is
 * broken (the forward region then reads all-ones).
 */
void vfio_bar_set_mappings_hidden(VFIOBar *bar, bool hidden);
/* Removes every part; unmaps; finalizes the regions (after unregister). */
void vfio_bar_teardown(VFIOBar *bar);
void vfio_bar_get_counts(VFIOBar *bar, uint64_t *fwd_reads,
                         uint64_t *fwd_writes, uint64_t *served_reads,
                         uint64_t *served_writes);

#endif
