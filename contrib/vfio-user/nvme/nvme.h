/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: the NVMe 1.4 controller model shared by its source files.
 *
 * The model knows nothing about vfio-user: guest memory is reached through
 * an NvmeDma accessor, interrupts leave through a callback, and BAR0 is a
 * plain byte buffer (a memfd mapping the client may share) whose doorbell
 * page is polled.  main.c binds it to libvfu; unit tests bind it to arrays.
 */
#ifndef CONTRIB_VFIO_USER_NVME_H
#define CONTRIB_VFIO_USER_NVME_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <glib.h>
#include <libaio.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

/* ---- Register map (NVMe 1.4, section 3.1) ---- */
#define NVME_REG_CAP        0x00
#define NVME_REG_VS         0x08
#define NVME_REG_INTMS      0x0c
#define NVME_REG_INTMC      0x10
#define NVME_REG_CC         0x14
#define NVME_REG_CSTS       0x1c
#define NVME_REG_NSSR       0x20
#define NVME_REG_AQA        0x24
#define NVME_REG_ASQ        0x28
#define NVME_REG_ACQ        0x30
#define NVME_REG_PAGE_SIZE  0x1000
/* Registers mirrored in the shared BAR0 page: CAP through ACQ. */
#define NVME_REG_SHARED_END 0x38
#define NVME_DB_BASE        0x1000
#define NVME_BAR0_MIN_SIZE  0x4000

#define NVME_VERSION_1_4    0x00010400

#define NVME_CC_EN          (1u << 0)
#define NVME_CC_CSS(cc)     (((cc) >> 4) & 0x7)
#define NVME_CC_MPS(cc)     (((cc) >> 7) & 0xf)
#define NVME_CC_AMS(cc)     (((cc) >> 11) & 0x7)
#define NVME_CC_SHN(cc)     (((cc) >> 14) & 0x3)
#define NVME_CC_IOSQES(cc)  (((cc) >> 16) & 0xf)
#define NVME_CC_IOCQES(cc)  (((cc) >> 20) & 0xf)
/*
 * Reserved CC bit the shared register page shows while CSTS.CFS is set, so
 * that the host's next CC store differs from the page (see ctrl.c).
 */
#define NVME_CC_FATAL_MARK  (1u << 31)

#define NVME_CSTS_RDY       (1u << 0)
#define NVME_CSTS_CFS       (1u << 1)
#define NVME_CSTS_SHST_MASK (3u << 2)
#define NVME_CSTS_SHST_DONE (2u << 2)

/* CAP fields we advertise. */
#define NVME_MQES           1023    /* 0-based: 1024 entries per queue */
#define NVME_CAP_TO         20      /* 500 ms units: 10 s to become ready */
#define NVME_MPSMIN         0       /* 4 KiB */
#define NVME_MPSMAX         4       /* 64 KiB */
#define NVME_MDTS           5       /* 2^5 min pages: 128 KiB per command */

#define NVME_MAX_IOQS       64
#define NVME_MAX_QUEUES     (NVME_MAX_IOQS + 1)
#define NVME_MAX_XFER       ((1u << NVME_MDTS) * 4096u)
/* Worst case: unaligned first page plus one entry per further page. */
#define NVME_MAX_SEGS       (NVME_MAX_XFER / 4096u + 1)
#define NVME_AERL           3       /* 0-based: four AERs may be held */
#define NVME_ELPE           0       /* 0-based: one error log entry */

#define NVME_IRQ_MAX_DEFERRED_PASSES 8

#define NVME_SQES           64
#define NVME_CQES           16

/* ---- Commands ---- */
typedef struct NvmeCmd {
    uint8_t opcode;
    uint8_t flags;
    uint16_t cid;
    uint32_t nsid;
    uint64_t rsvd2;
    uint64_t mptr;
    uint64_t prp1;
    uint64_t prp2;
    uint32_t cdw10;
    uint32_t cdw11;
    uint32_t cdw12;
    uint32_t cdw13;
    uint32_t cdw14;
    uint32_t cdw15;
} NvmeCmd;
/* Naturally aligned fields, no padding: the wire layout without packing. */
QEMU_BUILD_BUG_ON(sizeof(NvmeCmd) != NVME_SQES);

typedef struct NvmeCqe {
    uint32_t result;
    uint32_t rsvd;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t cid;
    uint16_t status;    /* bit 0: phase tag, bits 15:1: status field */
} NvmeCqe;
QEMU_BUILD_BUG_ON(sizeof(NvmeCqe) != NVME_CQES);
QEMU_BUILD_BUG_ON(offsetof(NvmeCqe, status) != 14);

enum NvmeAdminOpcode {
    NVME_ADM_DELETE_SQ = 0x00,
    NVME_ADM_CREATE_SQ = 0x01,
    NVME_ADM_GET_LOG_PAGE = 0x02,
    NVME_ADM_DELETE_CQ = 0x04,
    NVME_ADM_CREATE_CQ = 0x05,
    NVME_ADM_IDENTIFY = 0x06,
    NVME_ADM_ABORT = 0x08,
    NVME_ADM_SET_FEATURES = 0x09,
    NVME_ADM_GET_FEATURES = 0x0a,
    NVME_ADM_ASYNC_EVENT = 0x0c,
};

enum NvmeIoOpcode {
    NVME_CMD_FLUSH = 0x00,
    NVME_CMD_WRITE = 0x01,
    NVME_CMD_READ = 0x02,
    NVME_CMD_WRITE_ZEROES = 0x08,
};

/* Status field: SC in bits 7:0, SCT in 10:8, DNR in 14. */
#define NVME_SCT_CMD_SPECIFIC   (1u << 8)
#define NVME_DNR                (1u << 14)
enum NvmeStatus {
    NVME_SUCCESS = 0x00,
    NVME_INVALID_OPCODE = 0x01,
    NVME_INVALID_FIELD = 0x02,
    NVME_DATA_TRANSFER_ERROR = 0x04,
    NVME_INTERNAL_ERROR = 0x06,
    NVME_INVALID_NSID = 0x0b,
    NVME_INVALID_PRP_OFFSET = 0x13,
    NVME_LBA_RANGE = 0x80,
    NVME_CQ_INVALID = NVME_SCT_CMD_SPECIFIC | 0x00,
    NVME_INVALID_QID = NVME_SCT_CMD_SPECIFIC | 0x01,
    NVME_MAX_QSIZE_EXCEEDED = NVME_SCT_CMD_SPECIFIC | 0x02,
    NVME_AER_LIMIT_EXCEEDED = NVME_SCT_CMD_SPECIFIC | 0x05,
    NVME_INVALID_VECTOR = NVME_SCT_CMD_SPECIFIC | 0x08,
    NVME_INVALID_LOG_PAGE = NVME_SCT_CMD_SPECIFIC | 0x09,
    NVME_INVALID_QUEUE_DEL = NVME_SCT_CMD_SPECIFIC | 0x0c,
};

enum NvmeFeature {
    NVME_FEAT_ARBITRATION = 0x01,
    NVME_FEAT_POWER_MGMT = 0x02,
    NVME_FEAT_TEMP_THRESH = 0x04,
    NVME_FEAT_ERROR_RECOVERY = 0x05,
    NVME_FEAT_VOLATILE_WC = 0x06,
    NVME_FEAT_NUM_QUEUES = 0x07,
    NVME_FEAT_IRQ_COALESCE = 0x08,
    NVME_FEAT_IRQ_CONFIG = 0x09,
    NVME_FEAT_WRITE_ATOMIC = 0x0a,
    NVME_FEAT_ASYNC_EVENT = 0x0b,
};

enum NvmeLogPage {
    NVME_LOG_ERROR = 0x01,
    NVME_LOG_SMART = 0x02,
    NVME_LOG_FW_SLOT = 0x03,
};

/* Identify data structure offsets (NVMe 1.4, figures 247 and 249). */
#define NVME_ID_SIZE            4096
#define NVME_IDC_VID            0
#define NVME_IDC_SSVID          2
#define NVME_IDC_SN             4
#define NVME_IDC_MN             24
#define NVME_IDC_FR             64
#define NVME_IDC_RAB            72
#define NVME_IDC_IEEE           73
#define NVME_IDC_MDTS           77
#define NVME_IDC_CNTLID         78
#define NVME_IDC_VER            80
#define NVME_IDC_CNTRLTYPE      111
#define NVME_IDC_OACS           256
#define NVME_IDC_ACL            258
#define NVME_IDC_AERL           259
#define NVME_IDC_FRMW           260
#define NVME_IDC_LPA            261
#define NVME_IDC_ELPE           262
#define NVME_IDC_WCTEMP         266
#define NVME_IDC_CCTEMP         268
#define NVME_IDC_SQES           512
#define NVME_IDC_CQES           513
#define NVME_IDC_MAXCMD         514
#define NVME_IDC_NN             516
#define NVME_IDC_ONCS           520
#define NVME_IDC_VWC            525
#define NVME_IDC_SGLS           536
#define NVME_IDC_SUBNQN         768
#define NVME_IDC_PSD0           2048
#define NVME_ONCS_WRITE_ZEROES  (1u << 3)

#define NVME_IDNS_NSZE          0
#define NVME_IDNS_NCAP          8
#define NVME_IDNS_NUSE          16
#define NVME_IDNS_NSFEAT        24
#define NVME_IDNS_NLBAF         25
#define NVME_IDNS_FLBAS         26
#define NVME_IDNS_NGUID         104
#define NVME_IDNS_EUI64         120
#define NVME_IDNS_LBAF0         128

/* ---- Pure queue arithmetic (queue.c) ---- */
static inline uint16_t nvme_q_next(uint16_t idx, uint16_t size)
{
    return idx + 1 == size ? 0 : idx + 1;
}
static inline bool nvme_q_empty(uint16_t head, uint16_t tail)
{
    return head == tail;
}
/* One slot stays unused so that a full queue differs from an empty one. */
static inline bool nvme_q_full(uint16_t head, uint16_t tail, uint16_t size)
{
    return nvme_q_next(tail, size) == head;
}
static inline uint16_t nvme_q_used(uint16_t head, uint16_t tail,
                                   uint16_t size)
{
    return tail >= head ? tail - head : size - head + tail;
}
static inline uint16_t nvme_q_space(uint16_t head, uint16_t tail,
                                    uint16_t size)
{
    return size - 1 - nvme_q_used(head, tail, size);
}

/* ---- Guest memory access ---- */
typedef struct NvmeDmaOps {
    /* Host pointer to [iova, iova + len), or NULL if not directly mapped. */
    void *(*ptr)(void *opaque, uint64_t iova, uint64_t len, bool write);
    /* Copy for memory without a host mapping; false if unreachable. */
    bool (*rw)(void *opaque, uint64_t iova, void *buf, uint64_t len,
               bool write);
    /* Optional: bracket a poller pass so that ptr() results stay valid. */
    void (*begin)(void *opaque);
    void (*end)(void *opaque);
    /*
     * Optional: the model wrote [iova, iova + len) through a pointer
     * from ptr() (dirty-page logging for migration); called after the
     * data landed, before the completion that announces it.
     */
    void (*mark_dirty)(void *opaque, uint64_t iova, uint64_t len);
} NvmeDmaOps;

typedef struct NvmeDma {
    const NvmeDmaOps *ops;
    void *opaque;
} NvmeDma;

bool nvme_dma_read(const NvmeDma *dma, uint64_t iova, void *buf,
                   uint64_t len);
bool nvme_dma_write(const NvmeDma *dma, uint64_t iova, const void *buf,
                    uint64_t len);

typedef struct NvmeSeg {
    uint64_t iova;
    uint32_t len;
} NvmeSeg;

typedef struct NvmeSgl {
    NvmeSeg seg[NVME_MAX_SEGS];
    unsigned nseg;
    uint64_t total;
} NvmeSgl;

/*
 * Turns PRP1/PRP2 (and PRP lists read through @dma) describing @len bytes
 * into segments.  Returns an NVMe status: NVME_SUCCESS, or the error to
 * complete the command with.  @len must not exceed NVME_MAX_XFER.
 */
uint16_t nvme_prp_map(const NvmeDma *dma, uint64_t prp1, uint64_t prp2,
                      uint64_t len, uint32_t page_size, NvmeSgl *sgl);
/* Copies between a linear buffer and the segments; false on DMA error. */
bool nvme_sgl_to_guest(const NvmeDma *dma, const NvmeSgl *sgl,
                       const void *buf);
bool nvme_sgl_from_guest(const NvmeDma *dma, const NvmeSgl *sgl, void *buf);

/* ---- Options and BAR layout (options.c) ---- */
typedef enum NvmeBackendType {
    NVME_BACKEND_NULL,
    NVME_BACKEND_RAM,
    NVME_BACKEND_FILE,
} NvmeBackendType;

typedef struct NvmeOptions {
    char *socket_path;
    NvmeBackendType backend;
    char *file_path;
    uint64_t size;          /* null/ram capacity; file: 0 means file size */
    unsigned lba_size;
    unsigned aio_depth;
    unsigned max_ioqs;
    bool max_ioqs_set;
    int msix_bar;
    uint64_t msix_table_offset;
    uint64_t msix_pba_offset;
    bool msix_table_offset_set;
    bool msix_pba_offset_set;
    bool msix_mappable;
    bool mmap;
    bool no_migration;      /* --no-migration */
    unsigned poll_max_sleep_us;
    char *serial;
    char *trace;
    bool stats;             /* --stats: message counts on exit */
    bool help;
} NvmeOptions;

#define NVME_MAX_SPARSE_AREAS 3

typedef struct NvmeBarLayout {
    uint64_t bar0_size;
    unsigned max_ioqs;          /* I/O queue pairs: one vector each + admin */
    unsigned nvectors;
    int msix_bar;
    uint64_t msix_bar_size;     /* size of msix_bar when it is not BAR0 */
    uint64_t table_offset;
    uint64_t table_size;
    uint64_t pba_offset;
    uint64_t pba_size;
    uint64_t doorbell_end;      /* first byte after the last doorbell */
    /* The client may mmap BAR0: all of it, or the areas if nr_areas > 0. */
    bool bar0_mmap;
    unsigned nr_areas;          /* sparse mmappable parts of BAR0 */
    struct {
        uint64_t offset;
        uint64_t size;
    } areas[NVME_MAX_SPARSE_AREAS];
} NvmeBarLayout;

void nvme_options_init(NvmeOptions *o);
void nvme_options_free(NvmeOptions *o);
/* Parses argv; errors name the option.  Does not check the layout. */
bool nvme_options_parse(NvmeOptions *o, int argc, char **argv, Error **errp);
void nvme_options_usage(FILE *out, const char *argv0);
/* Places BAR0, the MSI-X table/PBA and the mmappable areas. */
bool nvme_layout_compute(const NvmeOptions *o, uint64_t host_page_size,
                         NvmeBarLayout *l, Error **errp);

/* ---- Backends (backend.c) ---- */
typedef struct NvmeBackend NvmeBackend;
typedef struct NvmeRequest NvmeRequest;

typedef enum NvmeBackendOp {
    NVME_BE_READ,
    NVME_BE_WRITE,
    NVME_BE_FLUSH,
    NVME_BE_WRITE_ZEROES,
} NvmeBackendOp;

typedef void NvmeBackendDone(NvmeRequest *req, void *opaque);

NvmeBackend *nvme_backend_new(const NvmeOptions *o, Error **errp);
void nvme_backend_free(NvmeBackend *be);
uint64_t nvme_backend_size(NvmeBackend *be);
/* Whether a volatile write cache exists (Flush does something). */
bool nvme_backend_has_vwc(NvmeBackend *be);
/* Required alignment of buffers, lengths and offsets (1 when none). */
unsigned nvme_backend_alignment(NvmeBackend *be);
void nvme_backend_set_write_cache(NvmeBackend *be, bool enable);
/*
 * Starts req->be_op on req->iov/req->niov at req->be_offset.  Returns true
 * if it completed already (req->status set); otherwise @done runs later
 * from nvme_backend_reap().
 */
bool nvme_backend_submit(NvmeBackend *be, NvmeRequest *req);
/* Eventfd that becomes readable when asynchronous work completes, or -1. */
int nvme_backend_event_fd(NvmeBackend *be);
/* Where asynchronous completions go (the controller sets this). */
void nvme_backend_set_completion(NvmeBackend *be, NvmeBackendDone *done,
                                 void *opaque);
/* Completes finished requests (waiting for one if @wait); returns count. */
unsigned nvme_backend_reap(NvmeBackend *be, bool wait);
unsigned nvme_backend_inflight(NvmeBackend *be);
/* Makes everything written so far durable (shutdown). */
void nvme_backend_sync(NvmeBackend *be);
/* The ram backend's buffer (its size is nvme_backend_size()), or NULL. */
uint8_t *nvme_backend_ram(NvmeBackend *be);

/* ---- Controller (ctrl.c, admin.c, io.c) ---- */
typedef struct NvmeSQ NvmeSQ;

struct NvmeRequest {
    NvmeSQ *sq;
    NvmeCmd cmd;
    uint16_t status;
    uint32_t result;
    NvmeRequest *next_free;
    /* Data path */
    NvmeSgl sgl;
    NvmeBackendOp be_op;
    uint64_t be_offset;
    uint64_t be_len;
    struct iovec iov[NVME_MAX_SEGS];
    unsigned niov;
    void *bounce;
    struct iocb iocb;
};

struct NvmeSQ {
    bool valid;
    uint16_t qid;
    uint16_t cqid;
    uint16_t size;
    uint16_t head;
    uint16_t tail;
    uint64_t base;
    unsigned inflight;
    NvmeRequest *reqs;
    NvmeRequest *free_reqs;
};

typedef struct NvmeCQ {
    bool valid;
    bool ien;
    bool phase;
    bool irq_pending;
    uint16_t qid;
    uint16_t size;
    uint16_t head;
    uint16_t tail;
    uint16_t vector;
    uint64_t base;
    unsigned reserved;  /* slots promised to commands already fetched */
    unsigned nr_sqs;    /* SQs completing here */
} NvmeCQ;

/*
 * A CQ's vector has completions to signal, or vector is NVME_IRQ_FATAL:
 * the controller just became fatal (CSTS.CFS), for an error interrupt.
 */
#define NVME_IRQ_FATAL  UINT_MAX
typedef void NvmeIrqNotify(void *opaque, unsigned vector);

typedef struct NvmeCtrl {
    /* pthread rather than GMutex: ThreadSanitizer understands it. */
    pthread_mutex_t lock;
    NvmeBackend *backend;
    NvmeDma dma;
    NvmeIrqNotify *irq_notify;
    void *irq_opaque;
    /* Runs (unlocked is fine) when the poller should look again. */
    void (*kick)(void *opaque);
    void *kick_opaque;
    /*
     * Called by the dispatch thread while it waits for lock (see
     * nvme_lock_serving() in ctrl.c); NULL: plain locking.
     */
    void (*lock_wait)(void *opaque);
    void *lock_wait_opaque;

    uint8_t *bar;           /* BAR0 contents: registers, doorbells */
    uint64_t bar_size;
    unsigned max_ioqs;
    unsigned nvectors;
    unsigned sq_depth;      /* commands in flight per I/O SQ, 0: no limit */
    uint32_t lba_size;
    unsigned lba_shift;
    uint64_t nlbas;
    char serial[21];

    /* Registers */
    uint64_t cap;
    uint32_t intms;
    uint32_t cc;
    uint32_t csts;
    uint32_t aqa;
    uint64_t asq;
    uint64_t acq;
    uint32_t page_size;
    /*
     * The register dwords as last published into bar[0, 0x38) (little
     * endian).  A shared dword that differs is a guest store made through
     * the client's mapping, not yet acted upon.
     */
    uint32_t reg_image[NVME_REG_SHARED_END / 4];

    NvmeSQ sq[NVME_MAX_QUEUES];
    NvmeCQ cq[NVME_MAX_QUEUES];
    unsigned qid_bound;     /* every valid qid is below this */
    bool resetting;         /* completions are dropped, not posted */
    /*
     * Migration STOP: nothing is fetched, processed or signalled; the
     * doorbells the guest stores are kept for the destination.
     */
    bool stopped;
    unsigned irq_deferred_passes;

    /* Features */
    uint32_t feat_nr_queues;    /* NSQA | NCQA << 16, 0-based */
    uint32_t feat_irq_coalesce;
    uint32_t feat_temp_thresh;
    uint32_t feat_arbitration;
    uint32_t feat_power_mgmt;
    uint32_t feat_error_recovery;
    uint32_t feat_async_event;
    bool write_cache;
    unsigned aers_held;

    /* SMART counters */
    uint64_t units_read;
    uint64_t units_written;
    uint64_t host_reads;
    uint64_t host_writes;
} NvmeCtrl;

typedef struct NvmeCtrlConfig {
    NvmeBackend *backend;
    uint8_t *bar;
    uint64_t bar_size;
    unsigned max_ioqs;
    unsigned nvectors;
    unsigned sq_depth;
    unsigned lba_size;
    const char *serial;
    NvmeDma dma;
    NvmeIrqNotify *irq_notify;
    void *irq_opaque;
    void (*kick)(void *opaque);
    void *kick_opaque;
    void (*lock_wait)(void *opaque);
    void *lock_wait_opaque;
} NvmeCtrlConfig;

bool nvme_ctrl_init(NvmeCtrl *n, const NvmeCtrlConfig *cfg, Error **errp);
void nvme_ctrl_cleanup(NvmeCtrl *n);
/* Register file (offsets below NVME_DB_BASE); sizes 4 or 8. */
uint64_t nvme_ctrl_reg_read(NvmeCtrl *n, uint64_t offset, unsigned size);
void nvme_ctrl_reg_write(NvmeCtrl *n, uint64_t offset, uint64_t val,
                         unsigned size);
/* A trapped doorbell write: stored in the BAR, then processed. */
void nvme_ctrl_doorbell_write(NvmeCtrl *n, uint64_t offset, uint32_t val);
/*
 * Looks at the registers and doorbells in the shared BAR0 and at backend
 * completions; true if work was done.
 */
bool nvme_ctrl_poll(NvmeCtrl *n);
/*
 * Moves to a new BAR0 buffer of the same size (zeroed, nobody maps it yet):
 * the registers are published there, the doorbells start at zero.
 */
void nvme_ctrl_set_bar(NvmeCtrl *n, uint8_t *bar);
/* Completes all in-flight backend work (before guest memory goes away). */
void nvme_ctrl_drain(NvmeCtrl *n);
/* Whether there is anything a poller should watch. */
bool nvme_ctrl_enabled(NvmeCtrl *n);
/* Back to power-on state (client gone, DEVICE_RESET). */
void nvme_ctrl_reset(NvmeCtrl *n);

/*
 * Migration (ctrl.c).  Pause quiesces the controller: no command is
 * fetched any more and every backend request in flight completes into
 * guest memory (its CQE posted); interrupts still owed stay recorded
 * (CQ irq_pending) and go out from whoever resumes.  Held AERs are
 * state, carried over.  Resume undoes pause and signals what is owed.
 */
void nvme_ctrl_pause(NvmeCtrl *n);
void nvme_ctrl_resume(NvmeCtrl *n);
/* Paused: the controller state (registers, queues, doorbells, AERs). */
void nvme_ctrl_save(NvmeCtrl *n, GByteArray *out);
/*
 * Paused: replaces the state with a saved one, which is hostile input:
 * every field is checked against this controller (same geometry, queues
 * inside their limits) before anything changes.
 */
bool nvme_ctrl_load(NvmeCtrl *n, const uint8_t *data, size_t len,
                    Error **errp);

/* Internal to the controller files, called with n->lock held. */
void nvme_req_complete(NvmeCtrl *n, NvmeRequest *req);
void nvme_admin_exec(NvmeCtrl *n, NvmeRequest *req);
void nvme_io_exec(NvmeCtrl *n, NvmeRequest *req);
void nvme_io_backend_done(NvmeRequest *req, void *opaque);
uint16_t nvme_create_sq(NvmeCtrl *n, uint16_t qid, uint16_t cqid,
                        uint64_t base, uint16_t size);
uint16_t nvme_create_cq(NvmeCtrl *n, uint16_t qid, uint64_t base,
                        uint16_t size, uint16_t vector, bool ien);
void nvme_delete_sq(NvmeCtrl *n, uint16_t qid);
void nvme_delete_cq(NvmeCtrl *n, uint16_t qid);
void nvme_identify_ctrl_build(NvmeCtrl *n, uint8_t *buf);
void nvme_identify_ns_build(NvmeCtrl *n, uint8_t *buf);

#endif
