/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the NVMe controller model of vfio-user-nvme
 * (contrib/vfio-user/nvme) on fuzzed submission-queue entries, PRP lists
 * and register/doorbell programming, with DMA into a fuzzed 256 KiB
 * "guest".  It drives the controller the way the server does, through
 * nvme_ctrl_reg_write/doorbell_write/poll, without a socket.
 *
 * Input: a mode byte (bit 0: start with the controller enabled and one
 * I/O queue pair created; bit 1: ring doorbells by storing into BAR0 and
 * polling, like the poller thread), then operations (see do_op()).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "contrib/vfio-user/nvme/nvme.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GUEST_BASE  0x100000ull
#define GUEST_SIZE  0x40000
#define ASQ_OFF     0x0000
#define ACQ_OFF     0x1000
#define IOSQ_OFF    0x2000
#define IOCQ_OFF    0x3000
#define QSIZE       16
#define NVECTORS    5

typedef struct Fuzz {
    uint8_t *mem;
    NvmeOptions opts;
    NvmeBackend *be;
    NvmeCtrl n;
    uint8_t bar[NVME_BAR0_MIN_SIZE];
    bool polled;
    uint16_t asq_tail, iosq_tail;
    unsigned irqs;
} Fuzz;

static Fuzz fz;

static bool guest_in(uint64_t iova, uint64_t len)
{
    return iova >= GUEST_BASE && len <= GUEST_SIZE &&
           iova - GUEST_BASE <= GUEST_SIZE - len;
}

static void *guest_ptr(void *opaque, uint64_t iova, uint64_t len, bool write)
{
    /* The upper 4 KiB has no pointer: only the copy path reaches it. */
    if (!guest_in(iova, len) || iova + len > GUEST_BASE + GUEST_SIZE - 4096) {
        return NULL;
    }
    return fz.mem + (iova - GUEST_BASE);
}

static bool guest_rw(void *opaque, uint64_t iova, void *buf, uint64_t len,
                     bool write)
{
    if (!guest_in(iova, len)) {
        return false;
    }
    if (write) {
        memcpy(fz.mem + (iova - GUEST_BASE), buf, len);
    } else {
        memcpy(buf, fz.mem + (iova - GUEST_BASE), len);
    }
    return true;
}

static const NvmeDmaOps guest_dma_ops = {
    .ptr = guest_ptr,
    .rw = guest_rw,
};

static void fuzz_irq(void *opaque, unsigned vector)
{
    g_assert(vector < NVECTORS);
    fz.irqs++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fz.mem = g_malloc0(GUEST_SIZE);
    nvme_options_init(&fz.opts);
    fz.opts.backend = NVME_BACKEND_RAM;
    fz.opts.size = 256 * 1024;
    fz.be = nvme_backend_new(&fz.opts, &error_abort);
    return 0;
}

static void ring(unsigned idx, uint32_t val)
{
    if (fz.polled) {
        stl_le_p(fz.bar + NVME_DB_BASE + 4 * idx, val);
        for (unsigned i = 0; i < 64 && nvme_ctrl_poll(&fz.n); i++) {
            continue;
        }
    } else {
        nvme_ctrl_doorbell_write(&fz.n, NVME_DB_BASE + 4 * idx, val);
    }
}

static void submit(uint64_t sq_off, uint16_t *tail, unsigned db,
                   const uint8_t *cmd)
{
    memcpy(fz.mem + sq_off + *tail * NVME_SQES, cmd, NVME_SQES);
    *tail = nvme_q_next(*tail, QSIZE);
    ring(db, *tail);
}

static void setup_queues(void)
{
    uint8_t cmd[NVME_SQES] = { 0 };
    NvmeCmd *c = (NvmeCmd *)cmd;

    nvme_ctrl_reg_write(&fz.n, NVME_REG_AQA,
                        ((QSIZE - 1) << 16) | (QSIZE - 1), 4);
    nvme_ctrl_reg_write(&fz.n, NVME_REG_ASQ, GUEST_BASE + ASQ_OFF, 8);
    nvme_ctrl_reg_write(&fz.n, NVME_REG_ACQ, GUEST_BASE + ACQ_OFF, 8);
    nvme_ctrl_reg_write(&fz.n, NVME_REG_CC,
                        NVME_CC_EN | (6 << 16) | (4 << 20), 4);
    c->opcode = NVME_ADM_CREATE_CQ;
    c->prp1 = htole64(GUEST_BASE + IOCQ_OFF);
    c->cdw10 = htole32(((QSIZE - 1) << 16) | 1);
    c->cdw11 = htole32((1u << 16) | 3);
    submit(ASQ_OFF, &fz.asq_tail, 0, cmd);
    c->opcode = NVME_ADM_CREATE_SQ;
    c->prp1 = htole64(GUEST_BASE + IOSQ_OFF);
    c->cdw11 = htole32((1u << 16) | 1);
    submit(ASQ_OFF, &fz.asq_tail, 0, cmd);
    /* Consume both completions. */
    ring(1, 2);
}

/* One operation; returns the bytes it used, 0 at the end of the input. */
static size_t do_op(const uint8_t *p, size_t left)
{
    uint8_t op;

    if (left < 1) {
        return 0;
    }
    op = p[0] % 8;
    p++;
    left--;
    switch (op) {
    case 0:     /* admin command */
    case 1:     /* I/O command on queue 1 */
        if (left < NVME_SQES) {
            return 0;
        }
        if (op == 0) {
            submit(ASQ_OFF, &fz.asq_tail, 0, p);
        } else {
            submit(IOSQ_OFF, &fz.iosq_tail, 2, p);
        }
        return 1 + NVME_SQES;
    case 2: {   /* guest memory: PRP lists, queue entries, data */
        uint32_t off;
        uint8_t len;

        if (left < 5) {
            return 0;
        }
        off = ldl_le_p(p) % GUEST_SIZE;
        len = MIN(p[4], left - 5);
        len = MIN(len, GUEST_SIZE - off);
        memcpy(fz.mem + off, p + 5, len);
        return 1 + 5 + len;
    }
    case 3:     /* register write */
        if (left < 11) {
            return 0;
        }
        nvme_ctrl_reg_write(&fz.n, lduw_le_p(p) % NVME_DB_BASE,
                            ldq_le_p(p + 3), p[2] & 1 ? 8 : 4);
        return 1 + 11;
    case 4:     /* doorbell write, any offset in the doorbell page */
        if (left < 6) {
            return 0;
        }
        if (fz.polled) {
            ring(lduw_le_p(p) % ((NVME_BAR0_MIN_SIZE - NVME_DB_BASE) / 4),
                 ldl_le_p(p + 2));
        } else {
            nvme_ctrl_doorbell_write(&fz.n, NVME_DB_BASE +
                                     lduw_le_p(p) % (NVME_BAR0_MIN_SIZE -
                                                     NVME_DB_BASE),
                                     ldl_le_p(p + 2));
        }
        return 1 + 6;
    case 5:     /* register read */
        if (left < 3) {
            return 0;
        }
        nvme_ctrl_reg_read(&fz.n, lduw_le_p(p) % NVME_DB_BASE,
                           p[2] & 1 ? 8 : 4);
        return 1 + 3;
    case 6:
        nvme_ctrl_poll(&fz.n);
        return 1;
    default:
        nvme_ctrl_reset(&fz.n);
        fz.asq_tail = fz.iosq_tail = 0;
        return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    NvmeCtrlConfig cfg = {
        .backend = fz.be,
        .bar = fz.bar,
        .bar_size = sizeof(fz.bar),
        .max_ioqs = 4,
        .nvectors = NVECTORS,
        .lba_size = 512,
        .serial = "FUZZ0001",
        .dma = { .ops = &guest_dma_ops },
        .irq_notify = fuzz_irq,
    };
    size_t off = 1, used;

    if (size < 1) {
        return 0;
    }
    memset(fz.mem, 0, GUEST_SIZE);
    memset(fz.bar, 0, sizeof(fz.bar));
    fz.asq_tail = fz.iosq_tail = 0;
    fz.polled = data[0] & 2;
    g_assert(nvme_ctrl_init(&fz.n, &cfg, &error_abort));
    if (data[0] & 1) {
        setup_queues();
    }
    while ((used = do_op(data + off, size - off))) {
        off += used;
    }
    /*
     * Whatever happened, a disable/enable cycle brings the controller
     * back (an earlier shutdown while disabled may leave SHST set).
     */
    nvme_ctrl_reg_write(&fz.n, NVME_REG_CC, 0, 4);
    g_assert(!(nvme_ctrl_reg_read(&fz.n, NVME_REG_CSTS, 4) &
               (NVME_CSTS_RDY | NVME_CSTS_CFS)));
    memset(fz.mem, 0, GUEST_SIZE);
    fz.asq_tail = fz.iosq_tail = 0;
    setup_queues();
    g_assert(nvme_ctrl_reg_read(&fz.n, NVME_REG_CSTS, 4) == NVME_CSTS_RDY);
    nvme_ctrl_reg_write(&fz.n, NVME_REG_CC, 0, 4);
    nvme_ctrl_drain(&fz.n);
    nvme_ctrl_cleanup(&fz.n);
    return 0;
}
