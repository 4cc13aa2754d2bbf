/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: a small vfio-user server library.
 *
 * A device (e.g. contrib/vfio-user/nvme) creates a VfuCtx bound to a UNIX
 * socket, describes its PCI config space, regions and IRQs, then either
 * calls vfu_run() or integrates vfu_get_poll_fd() + vfu_dispatch() into its
 * own loop.  One client is served at a time; when it goes away (EOF, socket
 * error, malformed message) the library unmaps all DMA, drops the IRQ
 * eventfds, calls ops->reset(VFU_RESET_LOST_CLIENT) and waits for the next
 * client.  Nothing a client sends makes the server exit.
 *
 * Threads.  vfu_dispatch()/vfu_run() and all callbacks run on one
 * "dispatch" thread.  From any thread you may call: vfu_irq_trigger(),
 * vfu_dma_read()/vfu_dma_write(), vfu_dma_ptr() (see the DMA rule below),
 * vfu_dma_lock()/vfu_dma_unlock() and vfu_stop().
 *
 * DMA rule.  The DMA table is protected by a writer-preferring rwlock.
 * A pointer from vfu_dma_ptr() is valid only while the caller holds the
 * read side (vfu_dma_lock() ... vfu_dma_unlock()); the dispatch thread
 * takes the write side to process DMA_UNMAP and disconnects, so hold the
 * read side only around a burst of accesses, never while sleeping.  Before
 * a mapped range disappears ops->dma_unmap is called (dispatch thread, no
 * lock held) so the device can drop cached pointers; DMA_READ/WRITE
 * requests still waiting on a range that goes fail with -EFAULT.  On the dispatch thread
 * itself the table cannot change under you, so callbacks may use
 * vfu_dma_ptr() without locking.
 */
#ifndef LIBVFU_H
#define LIBVFU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/vfio.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"
#include "vfio-user/protocol.h"

typedef struct VfuCtx VfuCtx;
typedef struct VfuMigrationOps VfuMigrationOps;

typedef enum VfuResetReason {
    VFU_RESET_CLIENT_REQUEST,   /* VFIO_USER_DEVICE_RESET */
    VFU_RESET_LOST_CLIENT,      /* disconnect; DMA already unmapped */
} VfuResetReason;

typedef struct VfuDeviceOps {
    /* Return the device to its power-on state.  Required. */
    void (*reset)(VfuCtx *ctx, void *opaque, VfuResetReason reason);
    /* A client finished VERSION negotiation.  Optional. */
    void (*attach)(VfuCtx *ctx, void *opaque);
    /*
     * A DMA range with a mapping (DMA_MAP with an fd) was added.  Ranges
     * without one (reached by messages) are not announced.  Optional.
     */
    void (*dma_map)(VfuCtx *ctx, void *opaque, uint64_t iova, uint64_t size);
    /*
     * A DMA range with a mapping (DMA_MAP with an fd) is about to go away
     * (DMA_UNMAP or disconnect): stop using pointers into it.  Called with
     * no lock held; if it waits for a device thread that may be waiting
     * for a DMA reply, wait with vfu_serve_replies().  Optional.
     */
    void (*dma_unmap)(VfuCtx *ctx, void *opaque, uint64_t iova,
                      uint64_t size);
    /*
     * The client wrote config space bytes [offset, offset+len) (after the
     * library applied the write masks).  Optional.
     */
    void (*config_write)(VfuCtx *ctx, void *opaque, uint32_t offset,
                         uint32_t len);
    /*
     * SET_IRQS changed eventfds or masks of vectors [start, start+count)
     * of index.  Optional.
     */
    void (*irq_update)(VfuCtx *ctx, void *opaque, uint32_t index,
                       uint32_t start, uint32_t count);
} VfuDeviceOps;

/*
 * Region access from REGION_READ/WRITE: [offset, offset+count) is inside
 * the region (the library checked).  Return 0 or a negative errno, which
 * is sent to the client in the error reply.
 */
typedef int (*VfuRegionAccessFn)(VfuCtx *ctx, void *opaque, uint32_t index,
                                 uint64_t offset, void *buf, uint32_t count,
                                 bool is_write);

typedef struct VfuSparseArea {
    uint64_t offset;        /* relative to the region start */
    uint64_t size;
} VfuSparseArea;

typedef struct VfuRegionInfo {
    uint64_t size;
    /* VFIO_REGION_INFO_FLAG_READ/WRITE; FLAG_MMAP is set when fd >= 0. */
    uint32_t flags;
    /*
     * Backing file the client may mmap (e.g. a memfd the device mapped
     * itself), or -1.  The library keeps its own dup; the caller keeps
     * ownership of fd.
     */
    int fd;
    uint64_t fd_offset;     /* where the region starts in fd */
    /* Mappable sub-ranges; none means the whole region (if fd >= 0). */
    const VfuSparseArea *sparse;
    uint32_t nr_sparse;
    /* Advertise VFIO_REGION_INFO_CAP_MSIX_MAPPABLE. */
    bool msix_mappable;
    /*
     * For BAR indexes: the low bits of the BAR register
     * (PCI_BASE_ADDRESS_SPACE_IO, PCI_BASE_ADDRESS_MEM_TYPE_64,
     * PCI_BASE_ADDRESS_MEM_PREFETCH).  A 64-bit BAR uses the next BAR
     * register for its upper half.  Size must be a power of two.
     */
    uint32_t bar_flags;
    /*
     * REGION_READ/WRITE handler, for the whole region (mmappable parts
     * too: a client that did not map them still uses messages).  NULL
     * with an fd: the library reads/writes the fd itself.
     */
    VfuRegionAccessFn access;
    void *opaque;
} VfuRegionInfo;

/* ---- Context ---- */

/*
 * Creates a context.  socket_path: listen there (a stale socket file is
 * replaced); NULL: no listener, use vfu_attach_fd() (tests, socketpair).
 * caps: what the server offers (NULL: 8 fds, 1 MiB transfers, 65535 DMA
 * maps, 4 KiB pages).
 */
VfuCtx *vfu_create_ctx(const char *socket_path, const VfuDeviceOps *ops,
                       void *opaque, const VFIOUserCaps *caps, Error **errp);
/* Drops the client (resetting the device), closes everything, frees. */
void vfu_destroy_ctx(VfuCtx *ctx);

/*
 * Serves a connected socket as the current client; the context owns fd
 * from then on.  Fails if a client is attached.  A client that stops in
 * the middle of a message for more than 10 s is dropped.
 */
bool vfu_attach_fd(VfuCtx *ctx, int fd, Error **errp);
bool vfu_is_attached(VfuCtx *ctx);
/* Drops the current client as if it disconnected. */
void vfu_detach(VfuCtx *ctx);

/* The fd to poll for input: the client socket, or the listener. */
int vfu_get_poll_fd(VfuCtx *ctx);
/*
 * Call when the poll fd is readable: accepts a client or processes one
 * message.  Client trouble is handled internally (disconnect + reset);
 * returns false only if the listener itself failed.
 */
bool vfu_dispatch(VfuCtx *ctx, Error **errp);
/* Loops poll + vfu_dispatch until vfu_stop(). */
bool vfu_run(VfuCtx *ctx, Error **errp);
/* Makes vfu_run() return soon; async-signal-safe and thread-safe. */
void vfu_stop(VfuCtx *ctx);

/* What was negotiated with the current client (defaults if none). */
const VFIOUserCaps *vfu_peer_caps(VfuCtx *ctx);

/* ---- Regions ---- */

/* index: VFIO_PCI_BAR0_REGION_INDEX..BAR5, ROM or CONFIG. */
bool vfu_setup_region(VfuCtx *ctx, uint32_t index, const VfuRegionInfo *info,
                      Error **errp);

/*
 * REGION_READ and REGION_WRITE messages region index got since the context
 * was created (all clients).  Dispatch thread, or after vfu_run() returned.
 */
void vfu_region_stats(VfuCtx *ctx, uint32_t index, uint64_t *reads,
                      uint64_t *writes);

/* ---- PCI config space (region VFIO_PCI_CONFIG_REGION_INDEX) ---- */

#define VFU_PCI_CONFIG_SIZE 256

typedef struct VfuPciIds {
    uint16_t vendor_id;
    uint16_t device_id;
    uint16_t subsys_vendor_id;
    uint16_t subsys_id;
    uint32_t class_code;    /* 24 bits: base << 16 | sub << 8 | prog-if */
    uint8_t revision;
} VfuPciIds;

/*
 * Creates the 256-byte config space (type 0 header) served as region
 * VFIO_PCI_CONFIG_REGION_INDEX by the library: standard read-only and
 * writable bits, BAR registers that answer all-ones writes with their
 * size mask (from vfu_setup_region), capability list.
 */
bool vfu_pci_init(VfuCtx *ctx, const VfuPciIds *ids, Error **errp);
/* Raw config bytes, for the device's own setup and reads. */
uint8_t *vfu_pci_config(VfuCtx *ctx);
/*
 * Appends a capability (id, next pointer filled in by the library, then
 * body of body_len bytes) at a dword-aligned offset >= 0x40; returns the
 * offset or 0 on failure (no room).  Bytes of the capability are read-only
 * unless vfu_pci_set_wmask() says otherwise.
 */
uint8_t vfu_pci_add_cap(VfuCtx *ctx, uint8_t cap_id, const void *body,
                        size_t body_len, Error **errp);
/* Makes config bytes [offset, offset+len) writable under mask bits. */
void vfu_pci_set_wmask(VfuCtx *ctx, uint32_t offset, const uint8_t *mask,
                       uint32_t len);
/*
 * MSI-X capability with nvectors (1..2048), table and PBA in the BARs and
 * offsets given (8-byte aligned).  Also sets up IRQ index
 * VFIO_PCI_MSIX_IRQ_INDEX with nvectors.  Returns the cap offset or 0.
 */
uint8_t vfu_pci_add_msix_cap(VfuCtx *ctx, uint16_t nvectors,
                             uint8_t table_bir, uint32_t table_offset,
                             uint8_t pba_bir, uint32_t pba_offset,
                             Error **errp);

/* ---- IRQs ---- */

/*
 * Declares IRQ index (VFIO_PCI_INTX_IRQ_INDEX, MSI, MSIX, ...) with count
 * vectors; undeclared indexes report count 0.
 */
bool vfu_setup_irq(VfuCtx *ctx, uint32_t index, uint32_t count,
                   Error **errp);

/*
 * Signals vector of index.  Returns 0 when the eventfd was signalled;
 * -EAGAIN when the vector is masked (the library latches it and signals
 * on unmask); -ENOENT when no eventfd is assigned (nothing is latched;
 * the device may hold it and retry after ops->irq_update); -EINVAL for a
 * bad index/vector.  Thread-safe.
 */
int vfu_irq_trigger(VfuCtx *ctx, uint32_t index, uint32_t vector);
/* True if an eventfd is assigned and the vector is not masked. */
bool vfu_irq_ready(VfuCtx *ctx, uint32_t index, uint32_t vector);

/* ---- DMA ---- */

void vfu_dma_lock(VfuCtx *ctx);
void vfu_dma_unlock(VfuCtx *ctx);
/*
 * Host pointer for [iova, iova+len) if it lies entirely inside one range
 * mapped from an fd (and that range is writable if write); NULL
 * otherwise.  See the DMA rule above.
 */
void *vfu_dma_ptr(VfuCtx *ctx, uint64_t iova, uint64_t len, bool write);
/*
 * Copy from/to client memory: through the mapping when there is one,
 * otherwise with DMA_READ/DMA_WRITE messages to the client (split at the
 * client's max_data_xfer_size).  The range must lie inside one DMA_MAP'd
 * range.  Return 0 or a negative errno (-EFAULT: not mapped).
 * Thread-safe; takes the read lock itself (do not hold it when the range
 * may be message-only).
 */
int vfu_dma_read(VfuCtx *ctx, uint64_t iova, void *buf, uint64_t len);
int vfu_dma_write(VfuCtx *ctx, uint64_t iova, const void *buf, uint64_t len);
/* Number of ranges currently mapped (for tests and tracing). */
unsigned vfu_dma_count(VfuCtx *ctx);
/*
 * For a device callback on the dispatch thread (ops->dma_unmap, a region
 * access, a reset) that must wait for one of the device's own threads:
 * call this in the wait loop.  It delivers a reply to the device's
 * DMA_READ/WRITE requests if one arrives within @timeout_ms (only the
 * dispatch thread reads the socket), so the device thread is never left
 * waiting on us while we wait on it.  A command the client posted
 * meanwhile is kept and served after the current one.  Elsewhere it just
 * sleeps briefly.
 */
void vfu_serve_replies(VfuCtx *ctx, unsigned timeout_ms);

/* ---- Migration (VFIO_USER_DEVICE_FEATURE, MIG_DATA_READ/WRITE) ---- */

/*
 * A device that can move offers these.  The library keeps the v2 state
 * machine (include/vfio-user/protocol.h, vfio_mig_next_state()): it
 * answers VFIO_DEVICE_FEATURE_MIGRATION, walks a requested state change
 * as direct arcs and calls transition() once per arc, and frames the
 * data.  Every callback runs on the dispatch thread.
 */
struct VfuMigrationOps {
    /*
     * One direct arc (vfio-user spec, "Direct State Transitions"):
     * RUNNING -> STOP must quiesce the device (no DMA, no interrupt
     * after it returns; in-flight work completed or recorded); STOP ->
     * STOP_COPY (or RUNNING -> PRE_COPY) starts a save; STOP -> RESUMING
     * starts a load; RESUMING -> STOP applies what write_data() got and
     * fails (-EINVAL) on incomplete or inconsistent data.  Return 0 or a
     * negative errno; on failure the state stays @from.  Required.
     */
    int (*transition)(VfuCtx *ctx, void *opaque, uint32_t from, uint32_t to);
    /*
     * Saving states: copies up to @size bytes of the next migration data
     * into @buf; returns the count (0: no more now) or a negative errno.
     * Required.
     */
    ssize_t (*read_data)(VfuCtx *ctx, void *opaque, void *buf,
                         uint64_t size);
    /* RESUMING: the next @size bytes; 0 or a negative errno.  Required. */
    int (*write_data)(VfuCtx *ctx, void *opaque, const void *buf,
                      uint64_t size);
    /* Optional: bytes STOP_COPY would produce now (MIG_DATA_SIZE). */
    uint64_t (*data_size)(VfuCtx *ctx, void *opaque);
};

/*
 * Offers migration with @flags (VFIO_MIGRATION_STOP_COPY, optionally
 * VFIO_MIGRATION_PRE_COPY) and DMA dirty-page logging.  Before the first
 * client.
 */
bool vfu_setup_migration(VfuCtx *ctx, const VfuMigrationOps *ops,
                         uint64_t flags, Error **errp);
/* The current migration state (RUNNING without migration). */
uint32_t vfu_migration_state(VfuCtx *ctx);

/*
 * The device wrote guest memory [iova, iova + len) (through a pointer
 * from vfu_dma_ptr()): while the client logs DMA, the pages become dirty
 * for its next DMA_LOGGING_REPORT.  Call after the data landed (before
 * the completion that tells the guest).  Any thread; vfu_dma_write()
 * marks by itself.
 */
void vfu_dma_mark_dirty(VfuCtx *ctx, uint64_t iova, uint64_t len);

#endif
