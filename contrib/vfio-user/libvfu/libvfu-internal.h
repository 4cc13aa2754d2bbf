/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu internals shared by its source files (not for devices).
 */
#ifndef LIBVFU_INTERNAL_H
#define LIBVFU_INTERNAL_H

#include <pthread.h>
#include <glib.h>
#include "libvfu.h"

/* A handler's return value that drops the client instead of replying. */
#define VFU_DISCONNECT (-10000)
/* Longest a client may pause inside one message (or a DMA reply). */
#define VFU_MSG_TIMEOUT_S 10

typedef struct VfuRegion {
    bool present;
    VfuRegionInfo info;     /* info.sparse points at sparse below */
    VfuSparseArea *sparse;
    int fd;                 /* our dup of info.fd, or -1 */
    uint64_t reads;         /* REGION_READ messages served */
    uint64_t writes;        /* REGION_WRITE messages served */
} VfuRegion;

typedef struct VfuIrqVector {
    int fd;                 /* trigger eventfd, or -1 */
    int unmask_fd;          /* INTx: the client signals it to unmask */
    bool masked;
    bool pending;
} VfuIrqVector;

typedef struct VfuIrqIndex {
    uint32_t count;
    VfuIrqVector *vec;
} VfuIrqIndex;

typedef struct VfuDmaRange {
    uint64_t iova;
    uint64_t size;
    uint32_t flags;         /* VFIO_USER_DMA_MAP_FLAG_* */
    void *map_base;         /* NULL: message-only range */
    size_t map_len;
    uint8_t *ptr;           /* host address of iova */
    int guard;              /* SIGBUS guard slot (fd not sealed), or -1 */
} VfuDmaRange;

/* A server->client request waiting for its reply. */
typedef struct VfuPending {
    uint16_t id;
    uint16_t command;
    bool is_write;
    uint64_t address;
    uint64_t count;
    void *buf;              /* read destination */
    bool done;
    int err;
} VfuPending;

/* A received message being processed on the dispatch thread. */
typedef struct VfuMsg {
    VFIOUserHdr hdr;
    uint8_t *payload;
    size_t len;
    int fds[VFIO_USER_LIMIT_MAX_FDS];
    size_t nfds;
    /* Filled by handlers that succeed. */
    GByteArray *reply;
    int reply_fd;
} VfuMsg;

/* One logged IOVA range and its bitmap (a bit per page). */
typedef struct VfuLogRange {
    uint64_t iova;
    uint64_t length;
    uint64_t *bitmap;
} VfuLogRange;

struct VfuCtx {
    const VfuDeviceOps *ops;
    void *opaque;

    char *socket_path;
    int listen_fd;
    int conn_fd;
    int stop_fd;
    bool negotiated;
    bool conn_broken;
    VFIOUserCaps ours;
    VFIOUserCaps peer;
    uint64_t max_dma_maps;  /* negotiated with the current client */

    /* Set while vfu_dispatch() runs, to recognise the dispatch thread. */
    bool dispatching;
    pthread_t dispatch_tid;

    VfuRegion regions[VFIO_PCI_NUM_REGIONS];

    uint8_t *config;
    uint8_t *config_wmask;
    uint8_t *config_reset;  /* snapshot taken when the first client came */
    uint32_t config_next_cap;

    GMutex irq_lock;
    VfuIrqIndex irqs[VFIO_PCI_NUM_IRQS];

    pthread_rwlock_t dma_lock;
    GTree *dma;             /* VfuDmaRange, by iova; key == value */
    GPtrArray *dma_guarded; /* the ranges under a SIGBUS guard */
    /*
     * Commands read by the dispatch thread while a handler waited for a
     * DMA reply (vfu_serve_replies, inline DMA): processed, in order, right
     * after that handler.  Bounded by VFU_MAX_DEFERRED.
     */
    GQueue *deferred;       /* VfuMsg * */

    GMutex send_lock;
    GMutex req_lock;
    GCond req_cond;
    GPtrArray *pending;     /* VfuPending */
    uint16_t next_id;

    /* Migration (migration.c) */
    const VfuMigrationOps *mig_ops;
    uint64_t mig_flags;         /* 0: migration not offered */
    uint32_t mig_state;
    GMutex log_lock;            /* the logged ranges and their bitmaps */
    VfuLogRange *log_ranges;
    uint32_t nr_log_ranges;
    uint64_t log_page_size;     /* 0: not logging */
};

/* libvfu.c */
bool vfu_send(VfuCtx *ctx, uint16_t id, uint16_t command, uint32_t flags,
              uint32_t error, const void *payload, size_t len, int fd);
int vfu_recv(VfuCtx *ctx, VfuMsg *msg, Error **errp);
void vfu_msg_free_fds(VfuMsg *msg);
bool vfu_on_dispatch_thread(VfuCtx *ctx);

/* pci.c */
int vfu_pci_region_access(VfuCtx *ctx, void *opaque, uint32_t index,
                          uint64_t offset, void *buf, uint32_t count,
                          bool is_write);
bool vfu_pci_update_bar(VfuCtx *ctx, uint32_t bar, Error **errp);
void vfu_pci_reset(VfuCtx *ctx);
void vfu_pci_snapshot(VfuCtx *ctx);
void vfu_pci_free(VfuCtx *ctx);

/* irq.c */
void vfu_irq_init(VfuCtx *ctx);
int vfu_handle_get_irq_info(VfuCtx *ctx, VfuMsg *msg);
int vfu_handle_set_irqs(VfuCtx *ctx, VfuMsg *msg);
void vfu_irq_release_all(VfuCtx *ctx);
void vfu_irq_free(VfuCtx *ctx);
/* The INTx unmask eventfd to poll (dispatch thread), or -1. */
int vfu_irq_unmask_poll_fd(VfuCtx *ctx);
/* The unmask eventfd was signalled: consume it and unmask INTx. */
void vfu_irq_service_unmask(VfuCtx *ctx);
/* Is fd an eventfd?  Anything else is refused as an IRQ fd. */
bool vfu_fd_is_eventfd(int fd);

/* migration.c */
int vfu_handle_device_feature(VfuCtx *ctx, VfuMsg *msg);
int vfu_handle_mig_data(VfuCtx *ctx, VfuMsg *msg, bool is_write);
/* Client gone or DEVICE_RESET: logging off, back to RUNNING. */
void vfu_migration_reset(VfuCtx *ctx);
void vfu_migration_free(VfuCtx *ctx);

/* dma.c */
void vfu_dma_init(VfuCtx *ctx);
int vfu_handle_dma_map(VfuCtx *ctx, VfuMsg *msg);
int vfu_handle_dma_unmap(VfuCtx *ctx, VfuMsg *msg);
void vfu_dma_unmap_all(VfuCtx *ctx);
void vfu_dma_handle_reply(VfuCtx *ctx, VfuMsg *msg);
void vfu_dma_fail_pending(VfuCtx *ctx);
void vfu_dma_free(VfuCtx *ctx);
bool vfu_dma_peer_faulted(VfuCtx *ctx);
/* The next deferred command (caller processes and frees it), or NULL. */
VfuMsg *vfu_deferred_pop(VfuCtx *ctx);
void vfu_deferred_clear(VfuCtx *ctx);
void vfu_msg_free(VfuMsg *msg);

#endif
