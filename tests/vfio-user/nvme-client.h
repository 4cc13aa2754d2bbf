/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A vfio-user client library for tests: drives vfio-user-nvme the way a
 * VMM and a guest driver would -- VERSION, DMA_MAP of a memfd "guest
 * RAM", config space, region info with its capability chain (checked as
 * Conduit's client checks it, qemu/vfio-region-info.h), SET_IRQS eventfds
 * for MSI-X, then NVMe itself (enable, Identify, I/O queues,
 * Read/Write/Flush) with the doorbells either stored into the mmapped
 * BAR0 (polled by the server) or sent as REGION_WRITE messages (trapped).
 * Every step asserts; a server that stops answering fails the test after
 * WAIT_US instead of hanging it.
 *
 * Users: nvme-client-test.c (the functional and trust-boundary tests)
 * and nvme-client-bench.c (IOPS, polled vs trapped doorbells).
 */
#ifndef TESTS_VFIO_USER_NVME_CLIENT_H
#define TESTS_VFIO_USER_NVME_CLIENT_H

#include <glib.h>
#include "vfio-user/protocol.h"
#include "contrib/vfio-user/nvme/nvme.h"   /* NvmeCmd, NvmeCqe */
#include "server-process.h"

/* Guest memory layout (offsets into the memfd at GUEST_IOVA). */
#define GUEST_IOVA      0x100000000ull
#define GUEST_SIZE      (8 * 1024 * 1024)
#define ASQ_OFF         0x0000
#define ACQ_OFF         0x1000
#define IOSQ_OFF        0x2000
#define IOCQ_OFF        0x3000
#define ID_OFF          0x4000
#define PRP_LIST_OFF    0x8000
#define DATA_OFF        0x100000
#define READ_OFF        0x200000
#define ADMIN_QSIZE     32
#define IO_QSIZE        64
#define WAIT_US         (10 * G_USEC_PER_SEC)   /* liveness bound only */

#define REG_CAP     0x00
#define REG_VS      0x08
#define REG_CC      0x14
#define REG_CSTS    0x1c
#define REG_AQA     0x24
#define REG_ASQ     0x28
#define REG_ACQ     0x30
#define DB_BASE     0x1000
#define CC_ENABLE   (1u | (6u << 16) | (4u << 20))

typedef enum DoorbellMode {
    DB_POLLED,          /* store into the mmapped BAR0 */
    DB_TRAPPED,         /* REGION_WRITE, waiting for the reply */
    DB_POSTED,          /* REGION_WRITE with NO_REPLY */
} DoorbellMode;

typedef struct Client {
    int sock;
    uint16_t id;
    unsigned posted;        /* NO_REPLY messages sent */
    int mem_fd;
    uint8_t *mem;
    int bar0_fd;
    uint64_t bar0_size;
    uint8_t *db_map;        /* mmap of the BAR0 part holding 0x1000 */
    uint64_t db_map_off;
    uint64_t db_map_len;
    int irq_fd[2];
    uint8_t msix_cap;
    DoorbellMode mode;
    uint16_t asq_tail, acq_head;
    bool acq_phase;
    uint16_t sq_tail, cq_head;
    bool cq_phase;
    uint16_t cid;
} Client;

void server_start(VuServer *s, const char *args);

bool server_alive(VuServer *s);

void vu_send(Client *c, uint16_t cmd, uint32_t flags,
             const void *payload, size_t len, const int *fds,
             size_t nfds, uint16_t *id);

/*
 * Sends a command and returns the reply's errno (0 on success).  The
 * payload of the reply goes to *reply, an fd that came with it to *rfd.
 */
int vu_call(Client *c, uint16_t cmd, const void *payload, size_t len,
            const int *fds, size_t nfds, GByteArray **reply, int *rfd);

void region_write(Client *c, uint32_t region, uint64_t offset,
                  const void *data, uint32_t count, bool posted);

void region_read(Client *c, uint32_t region, uint64_t offset,
                 void *data, uint32_t count);

/*
 * In DB_POLLED mode with the register page mapped (the server's default),
 * registers are loads and stores on the mapping, as a guest's would be;
 * otherwise REGION_READ/WRITE messages.
 */
uint32_t *reg_mapped(Client *c, uint64_t off);

uint32_t reg_read32(Client *c, uint64_t off);

void reg_write32(Client *c, uint64_t off, uint32_t v);

void reg_write64(Client *c, uint64_t off, uint64_t v);

GByteArray *region_info(Client *c, uint32_t index, int *fd);

/* A capability of a chain region_info() checked, or NULL. */
const struct vfio_info_cap_header *region_cap(GByteArray *info,
                                              uint16_t id);

/* Its areas fit before the next capability: the check made sure. */
const struct vfio_region_info_cap_sparse_mmap *
region_sparse(GByteArray *info);

bool region_msix_mappable(GByteArray *info);

void client_connect(Client *c, VuServer *s);

void client_map_memory(Client *c);

void client_read_config(Client *c);

void client_map_bar0_part(Client *c, const struct vfio_region_info *ri,
                          uint64_t offset, uint64_t size);

/*
 * BAR0 info; maps the whole BAR when there is no sparse list, else the
 * sparse area holding the doorbells if there is one.
 */
GByteArray *client_map_bar0(Client *c);

void client_setup_irqs(Client *c);

/* Waits for an MSI-X vector's eventfd; returns its count. */
uint64_t irq_wait(Client *c, int vector);

void irq_drain(Client *c, int vector);

void client_close(Client *c);

void ring(Client *c, unsigned idx, uint32_t val);

/* Returns true with *cqe filled if a new entry is at *head. */
bool cq_peek(Client *c, uint64_t cq_off, uint16_t head, bool phase,
             NvmeCqe *cqe);

NvmeCqe cq_wait(Client *c, uint64_t cq_off, uint16_t *head,
                bool *phase, uint16_t size);

uint16_t admin(Client *c, NvmeCmd *cmd, uint32_t *result);

void nvme_enable(Client *c);

void nvme_identify(Client *c);

void nvme_create_io_queues(Client *c);

void io_submit_cmd(Client *c, NvmeCmd *cmd, bool doorbell);

uint16_t io_cmd(Client *c, NvmeCmd *cmd);

/* A 16 KiB command at data_off, with a PRP list for pages 2-4. */
void rw_cmd(Client *c, NvmeCmd *cmd, uint8_t opcode, uint64_t lba,
            uint64_t data_off, unsigned slot);

void fill_pattern(uint8_t *p, size_t len, uint32_t seed);

/* Writes 4 x 16 KiB at lba, reads them back elsewhere, compares. */
void write_read_pattern(Client *c, uint64_t lba, uint32_t seed);

void nvme_flush(Client *c);

void nvme_shutdown(Client *c);

/* Connected, guest memory shared, config space read, BAR0 mapped. */
void client_attach(Client *c, VuServer *s, DoorbellMode mode);

/* Everything up to working I/O queues. */
void client_bringup(Client *c, VuServer *s, DoorbellMode mode);

uint32_t csts_wait(Client *c, uint32_t mask, uint32_t want);

/* The next message, whatever it is; fails after WAIT_US (hang guard). */
uint8_t *vu_recv_any(Client *c, VFIOUserHdr *hdr, size_t *len);

void dma_map_range(Client *c, uint64_t iova, uint64_t size, int fd);

/* CPU time (user + system, in clock ticks) @pid has used so far. */
uint64_t proc_cpu_ticks(GPid pid);

/* The server binary: $VFIO_USER_NVME, set by nvme_client_init(). */
extern const char *nvme_server_bin;
/* Reads $VFIO_USER_NVME (the server binary); ignores SIGPIPE. */
void nvme_client_init(void);

#endif
