/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * IOPS of vfio-user-nvme --backend null through the test client
 * (nvme-client.h): 4 KiB reads with polled (mmapped), trapped
 * (REGION_WRITE + reply) and posted (NO_REPLY) doorbells, QD 1 and 32,
 * side by side in one run, with the server's CPU use while idle.
 *
 *   nvme-client-bench [SECONDS_PER_RUN [IDLE_SECONDS]]
 *
 * The server binary comes from $VFIO_USER_NVME (set by meson).
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "qemu/sockets.h"
#include "qemu/vfio-region-info.h"
#include "tests/exe-wrapper.h"
#include "nvme-client.h"

static void bench_submit_read(Client *c, uint16_t cid, uint64_t n)
{
    NvmeCmd cmd = {
        .opcode = 0x02, .nsid = htole32(1), .cid = htole16(cid),
        .prp1 = htole64(GUEST_IOVA + DATA_OFF + 4096 * cid),
        .cdw10 = (uint32_t)((n * 8) & 0xfffff), .cdw11 = 0, .cdw12 = 7,
    };

    io_submit_cmd(c, &cmd, false);
}

/* 4 KiB reads kept qd deep for the given time; returns IOPS. */
static double bench_run(Client *c, unsigned qd, double seconds)
{
    gint64 start = g_get_monotonic_time();
    gint64 end = start + seconds * G_USEC_PER_SEC;
    gint64 last_progress = start;
    unsigned outstanding = qd;
    uint64_t done = 0;
    bool stopping = false;

    for (unsigned i = 0; i < qd; i++) {
        bench_submit_read(c, i, i);
    }
    ring(c, 2, c->sq_tail);
    while (!stopping || outstanding) {
        unsigned reaped = 0, refill = 0;
        NvmeCqe cqe;

        while (cq_peek(c, IOCQ_OFF, c->cq_head, c->cq_phase, &cqe)) {
            g_assert_cmpuint(le16toh(cqe.status) >> 1, ==, 0);
            if (++c->cq_head == IO_QSIZE) {
                c->cq_head = 0;
                c->cq_phase = !c->cq_phase;
            }
            reaped++;
            done++;
            if (!stopping) {
                bench_submit_read(c, le16toh(cqe.cid), done);
                refill++;
            }
        }
        if (reaped) {
            outstanding -= reaped;
            ring(c, 3, c->cq_head);
            if (refill) {
                ring(c, 2, c->sq_tail);
                outstanding += refill;
            }
            stopping = g_get_monotonic_time() >= end;
            last_progress = g_get_monotonic_time();
        } else if (g_get_monotonic_time() - last_progress > 5) {
            /*
             * Nothing for a moment: halt until the CQ's MSI-X vector
             * fires, as a guest vCPU would, leaving the CPU to the server.
             * Clear the eventfd first and look again, so that a completion
             * that raced with us is not missed.
             */
            struct pollfd pfd = { .fd = c->irq_fd[1], .events = POLLIN };

            irq_drain(c, 1);
            if (!cq_peek(c, IOCQ_OFF, c->cq_head, c->cq_phase, &cqe)) {
                poll(&pfd, 1, 10);
            }
            last_progress = g_get_monotonic_time();
        }
    }
    return done / ((g_get_monotonic_time() - start) / (double)G_USEC_PER_SEC);
}

static int bench(double seconds, double idle_seconds)
{
    static const struct {
        DoorbellMode mode;
        const char *name;
    } modes[] = {
        { DB_POLLED, "polled (mmapped doorbells)" },
        { DB_TRAPPED, "trapped (REGION_WRITE + reply)" },
        { DB_POSTED, "trapped, posted (REGION_WRITE, NO_REPLY)" },
    };
    static const unsigned qds[] = { 1, 32 };
    long hz = sysconf(_SC_CLK_TCK);
    g_autofree char *args = NULL;
    double iops[3][2];
    VuServer s;
    Client c;
    uint64_t t0;

    args = g_strdup_printf("--backend null %s",
                           g_getenv("NVME_BENCH_ARGS") ?: "");
    server_start(&s, args);
    client_bringup(&c, &s, DB_POLLED);
    /* Measure a device that has been idle for a while (past 2 s). */
    g_usleep(3 * G_USEC_PER_SEC);
    t0 = proc_cpu_ticks(s.pid);
    g_usleep(idle_seconds * G_USEC_PER_SEC);
    printf("idle enabled controller, %.0f s: server CPU %.2f%% of one core\n",
           idle_seconds,
           100.0 * (proc_cpu_ticks(s.pid) - t0) / hz / idle_seconds);
    client_close(&c);

    for (unsigned m = 0; m < ARRAY_SIZE(modes); m++) {
        client_bringup(&c, &s, modes[m].mode);
        for (unsigned q = 0; q < ARRAY_SIZE(qds); q++) {
            iops[m][q] = bench_run(&c, qds[q], seconds);
        }
        client_close(&c);
    }
    vu_server_stop(&s);

    printf("vfio-user-nvme --backend null, 4 KiB reads, %.1f s per run\n",
           seconds);
    printf("%-44s %12s %12s\n", "doorbells", "QD1 IOPS", "QD32 IOPS");
    for (unsigned m = 0; m < ARRAY_SIZE(modes); m++) {
        printf("%-44s %12.0f %12.0f\n", modes[m].name, iops[m][0],
               iops[m][1]);
    }
    printf("polled/trapped ratio: QD1 %.2fx, QD32 %.2fx\n",
           iops[0][0] / iops[1][0], iops[0][1] / iops[1][1]);
    return 0;
}

int main(int argc, char **argv)
{
    nvme_client_init();
    return bench(argc >= 2 ? g_ascii_strtod(argv[1], NULL) : 3.0,
                 argc >= 3 ? g_ascii_strtod(argv[2], NULL) : 5.0);
}
