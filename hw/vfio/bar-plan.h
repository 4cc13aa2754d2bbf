/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio_bar_plan(): how a device BAR is mapped into the guest.
 *
 * A pure decision (no I/O, no global state): from the region's flags and
 * capabilities, the MSI-X table/PBA location, the host page size, the
 * device options and the machine policy, it returns which parts of the
 * BAR are mmapped, which emulated overlays sit on top, and which host
 * pages therefore still exit to Conduit under KVM.  The mechanism
 * (mmap, MemoryRegions) executes the plan; telemetry reports it.
 *
 * Rules, in order:
 *  1. no VFIO_REGION_INFO_FLAG_MMAP, or x-no-mmap: nothing is mmapped and
 *     the whole BAR traps;
 *  2. the region advertises MSIX_MAPPABLE and x-msix-mappable is not off:
 *     one mmap of the whole BAR (or, if the region also has SPARSE_MMAP,
 *     exactly the sparse areas clipped to host pages: the device says
 *     nothing else may be mapped); the MSI-X table and PBA are overlays
 *     on top of the mapping;
 *  3. otherwise the mappable areas (the sparse areas, or the whole BAR)
 *     minus the host pages covering the MSI-X table, whether or not the
 *     table overlay is enabled: without the capability the host kernel
 *     refuses to mmap those pages.  The PBA is not cut out, as Linux's
 *     vfio-pci only protects the table; an enabled PBA overlay on a
 *     mapped page just makes that page trap.
 * Every area starts on a host page and ends on one or at the end of the
 * BAR (a BAR smaller than a page is mapped whole: the host backs the rest
 * of the page); areas are sorted, disjoint and merged when adjacent.
 *
 * Trapped pages are those not covered by an area, plus the host pages
 * under an *enabled* overlay, clipped to the BAR.  A BAR smaller than a
 * host page that holds the table thus maps nothing without the
 * capability, and is mapped but entirely trapped with it.
 *
 * Writes to trapped pages (x-coalesce-trapped-writes): with "on", or with
 * "auto" on a host with at least VFIO_BAR_PLAN_COALESCE_MIN_CPUS online,
 * writes to the registers of trapped but mapped pages are coalesced (KVM
 * completes them in the kernel and Conduit replays them from the ring),
 * and so are writes to unmapped pages when the backend posts writes
 * (vfio-user); the MSI-X overlays never are.  What "auto" trades: each
 * write saves an exit (~25-37 us on the reference machine) but reaches
 * the device only when a vCPU next exits or the drainer thread finds it,
 * and the drainer spins while the guest writes.  With fewer cores than
 * busy threads (vCPU, server poller, drainer) it steals the time it was
 * meant to save; `make bench` measures both (docs/system/vfio.rst).
 */
#ifndef HW_VFIO_BAR_PLAN_H
#define HW_VFIO_BAR_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "qemu/vfio-region-info.h"

/* x-msix-mappable */
typedef enum VFIOMsixMappableMode {
    VFIO_MSIX_MAPPABLE_AUTO,    /* use the capability if advertised */
    VFIO_MSIX_MAPPABLE_ON,      /* require it when this BAR holds the table */
    VFIO_MSIX_MAPPABLE_OFF,     /* ignore it: cut the table pages out */
} VFIOMsixMappableMode;

/* x-coalesce-trapped-writes */
typedef enum VFIOCoalesceMode {
    VFIO_COALESCE_AUTO,         /* on with enough cores (see above) */
    VFIO_COALESCE_ON,
    VFIO_COALESCE_OFF,
} VFIOCoalesceMode;

/* "auto" coalesces with cores for the vCPU, the poller and the drainer. */
#define VFIO_BAR_PLAN_COALESCE_MIN_CPUS 4

/* Where the MSI-X table or PBA lies, if it is in this BAR. */
typedef struct VFIOBarPlanMsixPart {
    bool present;
    uint64_t offset;            /* inside the BAR */
    uint64_t size;              /* > 0 when present */
    /*
     * Whether the emulated overlay is enabled: the PBA may be lazily
     * disabled; the table is disabled when relocated elsewhere.
     * vfio-no-msix-emulation also disables the table (see below).
     */
    bool enabled;
} VFIOBarPlanMsixPart;

typedef struct VFIOBarPlanInput {
    uint32_t bar;               /* BAR number, for messages and describe */
    uint64_t size;              /* region size, 0 for an absent BAR */
    uint32_t flags;             /* VFIO_REGION_INFO_FLAG_* */
    const VFIORegionCaps *caps; /* parsed capabilities, NULL for none */
    VFIOBarPlanMsixPart table;
    VFIOBarPlanMsixPart pba;
    /* Real host page size (sysconf): a power of two >= 4096. */
    uint64_t host_page_size;
    /* x-host-page-size: 0, or a power of two >= host_page_size. */
    uint64_t page_size_override;
    bool no_mmap;               /* x-no-mmap */
    VFIOMsixMappableMode msix_mappable;   /* x-msix-mappable */
    /* Machine policy vfio-no-msix-emulation (spapr): table overlay off. */
    bool no_msix_emulation;
    /*
     * x-lazy-pba: the PBA overlay shows only while a vector is pending
     * (pba.enabled is its state now).  Only vfio_bar_plan_explain() reads
     * it: the plan holds both PBA states whatever it says.
     */
    bool lazy_pba;
    /*
     * Why x-msix-relocation's default wanted to move the table off a
     * mapped page and could not (NULL: it could, or did not try).  Only
     * vfio_bar_plan_explain() reads it.
     */
    const char *relocation_refusal;
    VFIOCoalesceMode coalesce;  /* x-coalesce-trapped-writes */
    long online_cpus;           /* the host's, for coalesce auto */
    bool posts_writes;          /* the backend can post region writes */
    /* The device, for the trace event (may be NULL). */
    const char *name;
} VFIOBarPlanInput;

typedef struct VFIOBarRange {
    uint64_t offset;
    uint64_t size;
} VFIOBarRange;

typedef enum VFIOBarOverlayKind {
    VFIO_BAR_OVERLAY_MSIX_TABLE,
    VFIO_BAR_OVERLAY_MSIX_PBA,
} VFIOBarOverlayKind;

typedef struct VFIOBarOverlay {
    VFIOBarOverlayKind kind;
    uint64_t offset;
    uint64_t size;
    bool enabled;
} VFIOBarOverlay;

typedef struct VFIOBarPlan {
    uint32_t bar;
    uint64_t size;
    uint64_t page_size;         /* the one the plan was made for */
    bool msix_mappable;         /* the capability was used */
    bool whole_bar_mapped;      /* one area covering [0, size) */
    uint32_t nr_areas;          /* mmap areas, sorted, disjoint */
    VFIOBarRange *areas;
    uint32_t nr_overlays;       /* table first if present, then PBA */
    VFIOBarOverlay overlays[2];
    /* Pages exiting under KVM, merged: the view for the PBA's state. */
    uint32_t nr_trapped;
    VFIOBarRange *trapped;
    /*
     * Both trapped sets, precomputed: [0] with the PBA overlay disabled,
     * [1] with it enabled (the same when there is no PBA overlay), so
     * that lazy PBA only selects one.
     */
    uint32_t nr_trapped_view[2];
    VFIOBarRange *trapped_view[2];
    /* Coalesced writes: to trapped mapped pages, to unmapped pages. */
    bool coalesce_served;
    bool coalesce_forward;
} VFIOBarPlan;

/*
 * Makes the plan.  Fails (with a message naming the BAR) on inconsistent
 * input: a page size that is not a power of two >= 4096, an override
 * smaller than the real page size or not a power of two, a table or PBA
 * that is empty or does not fit in the BAR, or x-msix-mappable=on for a
 * BAR that holds the table but lacks the capability.  Free the result
 * with vfio_bar_plan_free() (or g_autoptr(VFIOBarPlan)).
 */
VFIOBarPlan *vfio_bar_plan(const VFIOBarPlanInput *in, Error **errp);
void vfio_bar_plan_free(VFIOBarPlan *plan);

/*
 * Enables or disables an overlay and updates the trapped pages; the
 * areas do not change.  For the PBA (lazy PBA) that only selects the
 * precomputed view.  Returns false if the plan has no such overlay.
 */
bool vfio_bar_plan_set_overlay_enabled(VFIOBarPlan *plan,
                                       VFIOBarOverlayKind kind, bool enabled);

/* Whether BAR offset @offset lies on a trapped page. */
bool vfio_bar_plan_is_trapped(const VFIOBarPlan *plan, uint64_t offset);

/*
 * Why host page @page of the BAR traps, as a hint naming the option that
 * would stop it (or saying that none can), or NULL when no option helps
 * or the page does not trap because of the plan.  @in is what @plan was
 * made from.  The hot-page warning of hw/vfio/bar.c prints it.
 */
const char *vfio_bar_plan_explain(const VFIOBarPlanInput *in,
                                  const VFIOBarPlan *plan, uint64_t page);

/*
 * How the mechanism maps a region, as the kernel allows (pure too):
 * the mmap protection its VFIO_REGION_INFO_FLAG_READ/WRITE flags grant
 * (a read-only region mapped read-write fails on a real kernel), and the
 * address alignment that lets the kernel back a pfnmap with huge pages:
 * the region's size rounded down to a power of two, at most 1 GiB, and
 * at least @page_size.
 */
int vfio_bar_plan_mmap_prot(uint32_t region_flags);
uint64_t vfio_bar_plan_mmap_align(uint64_t region_size, uint64_t page_size);

/*
 * One line for the trace event and x-query-vfio, e.g.
 * "bar0 size 0x4000 page 0x10000 msix-mappable whole-bar
 *  mmap [0x0+0x4000] trapped [0x0+0x4000] table 0x3000+0x100 on
 *  pba 0x3800+0x8 off".  g_free the result.
 */
char *vfio_bar_plan_describe(const VFIOBarPlan *plan);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(VFIOBarPlan, vfio_bar_plan_free)

#endif
