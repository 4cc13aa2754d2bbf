/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos NVMe driver: just enough of NVMe 1.4 to drive a controller
 * through the guest view (BAR0 registers and doorbells, queues and data
 * in guest RAM) from a qtest.  Completions are polled in RAM.
 */
#ifndef LIBQOS_NVME_H
#define LIBQOS_NVME_H

#include <stdbool.h>
#include <stdint.h>
#include "libqos/pci.h"

#define QNVME_REG_CAP   0x00
#define QNVME_REG_VS    0x08
#define QNVME_REG_CC    0x14
#define QNVME_REG_CSTS  0x1c
#define QNVME_REG_AQA   0x24
#define QNVME_REG_ASQ   0x28
#define QNVME_REG_ACQ   0x30
#define QNVME_DOORBELL_BASE 0x1000

#define QNVME_ADM_CREATE_SQ 0x01
#define QNVME_ADM_CREATE_CQ 0x05
#define QNVME_ADM_IDENTIFY  0x06
#define QNVME_CMD_WRITE     0x01
#define QNVME_CMD_READ      0x02

typedef struct QNvmeCmd {
    uint8_t opcode;
    uint32_t nsid;
    uint64_t prp1;
    uint64_t prp2;
    uint32_t cdw10, cdw11, cdw12;
} QNvmeCmd;

typedef struct QNvmeCqe {
    uint32_t result;
    uint16_t sq_head;
    uint16_t sqid;
    uint16_t cid;
    uint16_t status;            /* without the phase bit */
} QNvmeCqe;

typedef struct QNvmeQueue {
    uint16_t qid;
    uint16_t depth;
    uint64_t sq;                /* guest addresses */
    uint64_t cq;
    uint16_t sq_tail;
    uint16_t cq_head;
    bool phase;
} QNvmeQueue;

typedef struct QNvme {
    QTestState *qts;
    QPCIDevice *dev;
    QPCIBar bar0;
    uint64_t mem_next;          /* bump allocator in guest RAM */
    uint64_t mem_end;
    uint16_t next_cid;
    QNvmeQueue admin;
    QNvmeQueue io;
} QNvme;

/* Uses guest RAM [ram_start, ram_end) for queues and buffers. */
void qnvme_init(QNvme *n, QPCIDevice *dev, uint64_t ram_start,
                uint64_t ram_end);
/* Page-aligned guest memory, zeroed. */
uint64_t qnvme_alloc(QNvme *n, uint64_t size);
uint32_t qnvme_reg_read(QNvme *n, uint32_t reg);
void qnvme_reg_write(QNvme *n, uint32_t reg, uint32_t val);
/* Admin queues, CC.EN, then waits for CSTS.RDY.  False on timeout. */
bool qnvme_enable(QNvme *n);
/* Submits and waits for the completion (polling RAM). */
bool qnvme_admin(QNvme *n, const QNvmeCmd *cmd, QNvmeCqe *cqe);
bool qnvme_io(QNvme *n, const QNvmeCmd *cmd, QNvmeCqe *cqe);
/* Identify controller (CNS 1) into a 4 KiB guest buffer. */
bool qnvme_identify_ctrl(QNvme *n, uint64_t buf);
/*
 * Bring-up: enables the controller and Identifies it into a fresh 4 KiB
 * guest buffer, asserting each step.  Returns the buffer's address.
 */
uint64_t qnvme_enable_identify(QNvme *n);
/* I/O queue pair 1 of @depth entries; CQ interrupts on @vector. */
bool qnvme_create_io_queues(QNvme *n, uint16_t depth, uint16_t vector);
/* One read or write of @nlb blocks at @lba from/to guest @buf. */
bool qnvme_rw(QNvme *n, bool write, uint64_t lba, uint16_t nlb, uint64_t buf,
              QNvmeCqe *cqe);
/* Submits without waiting; qnvme_wait_admin() then reaps it. */
void qnvme_submit_admin(QNvme *n, const QNvmeCmd *cmd);
bool qnvme_wait_admin(QNvme *n, QNvmeCqe *cqe);
/* Submits without waiting; qnvme_wait_io() then reaps it. */
void qnvme_submit_io(QNvme *n, const QNvmeCmd *cmd);
bool qnvme_wait_io(QNvme *n, QNvmeCqe *cqe);

/*
 * The in-tree vfio-user-nvme server ($VFIO_USER_NVME, else the build
 * tree's), on a socket in a fresh temporary directory.
 */
typedef struct QNvmeServer {
    GPid pid;                   /* 0 once reaped */
    char *dir;
    char *sock;
} QNvmeServer;

/*
 * Starts "--backend ram --size 16M @extra_args" and waits for the socket
 * file, which appears only once the server listens.  The server dies
 * with the test if a failed assertion aborts it.
 */
void qnvme_server_start(QNvmeServer *s, const char *extra_args);
/* The same, giving the socket @wait_us to appear instead of 10 s. */
void qnvme_server_start_within(QNvmeServer *s, const char *extra_args,
                               gint64 wait_us);
/* Sends @sig if the server still runs, reaps it; its wait status or -1. */
int qnvme_server_kill(QNvmeServer *s, int sig);
/*
 * SIGTERM if still running, then removes the socket and directory.
 * Returns the wait status, or -1 if the server was already reaped.
 */
int qnvme_server_stop(QNvmeServer *s);

#endif
