/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libqos NVMe driver; see nvme.h. */
#include "qemu/osdep.h"
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "config-host.h"
#include "libqos/nvme.h"
#include "tests/exe-wrapper.h"

#define QNVME_SQE_SIZE 64
#define QNVME_CQE_SIZE 16
#define QNVME_PAGE 4096
#define QNVME_TIMEOUT_US (60 * G_USEC_PER_SEC)

void qnvme_init(QNvme *n, QPCIDevice *dev, uint64_t ram_start,
                uint64_t ram_end)
{
    memset(n, 0, sizeof(*n));
    n->qts = dev->bus->qts;
    n->dev = dev;
    n->mem_next = ram_start;
    n->mem_end = ram_end;
    n->bar0 = qpci_bar(dev, 0);
    g_assert_cmphex(n->bar0.addr, !=, QPCI_BAR_NONE);
    qpci_device_enable(dev);
}

uint64_t qnvme_alloc(QNvme *n, uint64_t size)
{
    uint64_t addr = n->mem_next;

    size = QEMU_ALIGN_UP(size, QNVME_PAGE);
    g_assert_cmphex(addr + size, <=, n->mem_end);
    n->mem_next += size;
    qtest_memset(n->qts, addr, 0, size);
    return addr;
}

uint32_t qnvme_reg_read(QNvme *n, uint32_t reg)
{
    return qpci_io_readl(n->dev, n->bar0, reg);
}

void qnvme_reg_write(QNvme *n, uint32_t reg, uint32_t val)
{
    qpci_io_writel(n->dev, n->bar0, reg, val);
}

static void qnvme_queue_init(QNvme *n, QNvmeQueue *q, uint16_t qid,
                             uint16_t depth)
{
    q->qid = qid;
    q->depth = depth;
    q->sq = qnvme_alloc(n, depth * QNVME_SQE_SIZE);
    q->cq = qnvme_alloc(n, depth * QNVME_CQE_SIZE);
    q->sq_tail = 0;
    q->cq_head = 0;
    q->phase = true;
}

bool qnvme_enable(QNvme *n)
{
    gint64 deadline;

    qnvme_queue_init(n, &n->admin, 0, 16);
    qnvme_reg_write(n, QNVME_REG_CC, 0);
    deadline = g_get_monotonic_time() + QNVME_TIMEOUT_US;
    while (qnvme_reg_read(n, QNVME_REG_CSTS) & 1) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    qnvme_reg_write(n, QNVME_REG_AQA, (15u << 16) | 15u);
    qnvme_reg_write(n, QNVME_REG_ASQ, n->admin.sq);
    qnvme_reg_write(n, QNVME_REG_ASQ + 4, n->admin.sq >> 32);
    qnvme_reg_write(n, QNVME_REG_ACQ, n->admin.cq);
    qnvme_reg_write(n, QNVME_REG_ACQ + 4, n->admin.cq >> 32);
    /* EN, 4 KiB pages, 64-byte SQEs, 16-byte CQEs. */
    qnvme_reg_write(n, QNVME_REG_CC, 1u | (6u << 16) | (4u << 20));
    deadline = g_get_monotonic_time() + QNVME_TIMEOUT_US;
    while (!(qnvme_reg_read(n, QNVME_REG_CSTS) & 1)) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    return true;
}

static void qnvme_doorbell(QNvme *n, uint16_t qid, bool cq, uint16_t val)
{
    qpci_io_writel(n->dev, n->bar0,
                   QNVME_DOORBELL_BASE + (2 * qid + (cq ? 1 : 0)) * 4, val);
}

static void qnvme_submit(QNvme *n, QNvmeQueue *q, const QNvmeCmd *cmd)
{
    uint8_t sqe[QNVME_SQE_SIZE] = { 0 };
    uint16_t cid = n->next_cid++;

    sqe[0] = cmd->opcode;
    stw_le_p(sqe + 2, cid);
    stl_le_p(sqe + 4, cmd->nsid);
    stq_le_p(sqe + 24, cmd->prp1);
    stq_le_p(sqe + 32, cmd->prp2);
    stl_le_p(sqe + 40, cmd->cdw10);
    stl_le_p(sqe + 44, cmd->cdw11);
    stl_le_p(sqe + 48, cmd->cdw12);
    qtest_memwrite(n->qts, q->sq + q->sq_tail * QNVME_SQE_SIZE, sqe,
                   sizeof(sqe));
    q->sq_tail = (q->sq_tail + 1) % q->depth;
    qnvme_doorbell(n, q->qid, false, q->sq_tail);
}

static bool qnvme_reap(QNvme *n, QNvmeQueue *q, QNvmeCqe *cqe)
{
    uint64_t addr = q->cq + q->cq_head * QNVME_CQE_SIZE;
    gint64 deadline = g_get_monotonic_time() + QNVME_TIMEOUT_US;
    uint8_t raw[QNVME_CQE_SIZE];
    uint16_t status;

    for (;;) {
        qtest_memread(n->qts, addr, raw, sizeof(raw));
        status = lduw_le_p(raw + 14);
        if ((status & 1) == q->phase) {
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(500);
    }
    cqe->result = ldl_le_p(raw);
    cqe->sq_head = lduw_le_p(raw + 8);
    cqe->sqid = lduw_le_p(raw + 10);
    cqe->cid = lduw_le_p(raw + 12);
    cqe->status = status >> 1;
    q->cq_head = (q->cq_head + 1) % q->depth;
    if (!q->cq_head) {
        q->phase = !q->phase;
    }
    qnvme_doorbell(n, q->qid, true, q->cq_head);
    return true;
}

bool qnvme_admin(QNvme *n, const QNvmeCmd *cmd, QNvmeCqe *cqe)
{
    qnvme_submit(n, &n->admin, cmd);
    return qnvme_reap(n, &n->admin, cqe);
}

void qnvme_submit_admin(QNvme *n, const QNvmeCmd *cmd)
{
    qnvme_submit(n, &n->admin, cmd);
}

bool qnvme_wait_admin(QNvme *n, QNvmeCqe *cqe)
{
    return qnvme_reap(n, &n->admin, cqe);
}

void qnvme_submit_io(QNvme *n, const QNvmeCmd *cmd)
{
    qnvme_submit(n, &n->io, cmd);
}

bool qnvme_wait_io(QNvme *n, QNvmeCqe *cqe)
{
    return qnvme_reap(n, &n->io, cqe);
}

bool qnvme_io(QNvme *n, const QNvmeCmd *cmd, QNvmeCqe *cqe)
{
    qnvme_submit_io(n, cmd);
    return qnvme_wait_io(n, cqe);
}

bool qnvme_identify_ctrl(QNvme *n, uint64_t buf)
{
    QNvmeCmd cmd = { .opcode = QNVME_ADM_IDENTIFY, .prp1 = buf, .cdw10 = 1 };
    QNvmeCqe cqe;

    return qnvme_admin(n, &cmd, &cqe) && cqe.status == 0;
}

bool qnvme_create_io_queues(QNvme *n, uint16_t depth, uint16_t vector)
{
    QNvmeCmd cq = { .opcode = QNVME_ADM_CREATE_CQ };
    QNvmeCmd sq = { .opcode = QNVME_ADM_CREATE_SQ };
    QNvmeCqe cqe;

    qnvme_queue_init(n, &n->io, 1, depth);
    cq.prp1 = n->io.cq;
    cq.cdw10 = ((uint32_t)(depth - 1) << 16) | 1;
    /* Physically contiguous, interrupts enabled on @vector. */
    cq.cdw11 = ((uint32_t)vector << 16) | 2 | 1;
    if (!qnvme_admin(n, &cq, &cqe) || cqe.status) {
        return false;
    }
    sq.prp1 = n->io.sq;
    sq.cdw10 = ((uint32_t)(depth - 1) << 16) | 1;
    sq.cdw11 = (1u << 16) | 1;
    return qnvme_admin(n, &sq, &cqe) && cqe.status == 0;
}

bool qnvme_rw(QNvme *n, bool write, uint64_t lba, uint16_t nlb, uint64_t buf,
              QNvmeCqe *cqe)
{
    QNvmeCmd cmd = {
        .opcode = write ? QNVME_CMD_WRITE : QNVME_CMD_READ,
        .nsid = 1,
        .prp1 = buf,
        .cdw10 = lba,
        .cdw11 = lba >> 32,
        .cdw12 = nlb - 1,
    };

    return qnvme_io(n, &cmd, cqe);
}

uint64_t qnvme_enable_identify(QNvme *n)
{
    uint64_t id = qnvme_alloc(n, 4096);

    g_assert_true(qnvme_enable(n));
    g_assert_true(qnvme_identify_ctrl(n, id));
    return id;
}

/* ---- the vfio-user-nvme server ---- */

static const char *qnvme_server_binary(void)
{
    const char *env = getenv("VFIO_USER_NVME");

    return env ? env : CONDUIT_BUILD_DIR "/vfio-user-nvme";
}

/* A failed assertion aborts the test: do not leave the server behind. */
static void qnvme_server_child_setup(gpointer data)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
}

void qnvme_server_start_within(QNvmeServer *s, const char *extra_args,
                               gint64 wait_us)
{
    g_autofree char *cmd = NULL;
    g_autofree char *wrapped = NULL;
    g_auto(GStrv) argv = NULL;
    g_autoptr(GError) err = NULL;
    gint64 deadline;

    memset(s, 0, sizeof(*s));
    s->dir = g_dir_make_tmp("qnvme-server-XXXXXX", &err);
    g_assert_no_error(err);
    s->sock = g_build_filename(s->dir, "nvme.sock", NULL);
    cmd = g_strdup_printf("%s --socket %s --backend ram --size 16M %s",
                          qnvme_server_binary(), s->sock,
                          extra_args ? extra_args : "");
    wrapped = test_wrap_command(cmd);
    g_assert_true(g_shell_parse_argv(wrapped, NULL, &argv, &err));
    /* Its stdout would corrupt the TAP stream. */
    g_assert_true(g_spawn_async(NULL, argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD |
                                G_SPAWN_STDOUT_TO_DEV_NULL,
                                qnvme_server_child_setup, NULL, &s->pid,
                                &err));
    g_assert_no_error(err);
    deadline = g_get_monotonic_time() + wait_us;
    while (!g_file_test(s->sock, G_FILE_TEST_EXISTS)) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_usleep(2000);
    }
}

void qnvme_server_start(QNvmeServer *s, const char *extra_args)
{
    qnvme_server_start_within(s, extra_args, 10 * G_USEC_PER_SEC);
}

int qnvme_server_kill(QNvmeServer *s, int sig)
{
    int status = -1;

    if (s->pid > 0) {
        kill(s->pid, sig);
        waitpid(s->pid, &status, 0);
        g_spawn_close_pid(s->pid);
        s->pid = 0;
    }
    return status;
}

int qnvme_server_stop(QNvmeServer *s)
{
    int status = qnvme_server_kill(s, SIGTERM);

    unlink(s->sock);
    rmdir(s->dir);
    g_free(s->sock);
    g_free(s->dir);
    s->sock = NULL;
    s->dir = NULL;
    return status;
}
