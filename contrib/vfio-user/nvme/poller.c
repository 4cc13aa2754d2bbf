/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: the doorbell poller thread.
 *
 * When the client maps BAR0, register and doorbell writes are plain stores
 * into our memfd and nothing tells us about them: this thread looks.  It
 * spins for a short while after the last piece of work, then sleeps for
 * exponentially longer periods bounded by --poll-max-sleep-us, so a busy
 * device answers within microseconds and an idle one costs (almost)
 * nothing (see the idle tiers below).  That holds with the controller
 * disabled too, since CC.EN may arrive through the mapping; only when BAR0
 * cannot be mapped, or no client is attached to a disabled controller, does
 * it block until kicked.  Backend (libaio)
 * completions wake it through their eventfd at any time.
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "nvme.h"
#include "poller.h"
#include "trace.h"

#define NVME_POLL_SPIN_NS   (20 * 1000)
/*
 * A device idle for a while is probably idle for longer: past these
 * marks the sleeps stretch to 1 ms and then 4 ms, so that a long-idle
 * device costs well under 1% of a core.  The first command after such a
 * pause waits at most that long; under load the bound is the option.
 */
#define NVME_POLL_IDLE_NS       (200 * 1000 * 1000ll)
#define NVME_POLL_IDLE_SLEEP_NS (1000 * 1000ll)
#define NVME_POLL_DEEP_NS       (2000 * 1000 * 1000ll)
#define NVME_POLL_DEEP_SLEEP_NS (4000 * 1000ll)

static inline void nvme_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ volatile("" ::: "memory");
#endif
}

static int64_t nvme_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void nvme_poller_wait(NvmePoller *p, int64_t timeout_ns)
{
    struct pollfd fds[2] = {
        { .fd = p->kick_fd, .events = POLLIN },
        { .fd = nvme_backend_event_fd(p->ctrl->backend), .events = POLLIN },
    };
    struct timespec ts = {
        .tv_sec = timeout_ns / 1000000000ll,
        .tv_nsec = timeout_ns % 1000000000ll,
    };
    uint64_t v;

    p->sleeps++;
    if (ppoll(fds, fds[1].fd >= 0 ? 2 : 1, timeout_ns < 0 ? NULL : &ts,
              NULL) > 0 && (fds[0].revents & POLLIN)) {
        if (read(p->kick_fd, &v, sizeof(v)) < 0 && errno != EAGAIN) {
            warn_report("poller eventfd: %s", strerror(errno));
        }
    }
}

static gpointer nvme_poller_thread(gpointer opaque)
{
    NvmePoller *p = opaque;
    int64_t last_work = nvme_now_ns();
    int64_t sleep_ns = 0;

    /* The default 50 us timer slack would swamp our 1-128 us sleeps. */
    prctl(PR_SET_TIMERSLACK, 1000ul);

    while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
        int64_t now;

        if (nvme_ctrl_poll(p->ctrl)) {
            p->passes_with_work++;
            last_work = nvme_now_ns();
            sleep_ns = 0;
            continue;
        }
        if (!p->poll_doorbells ||
            (!nvme_ctrl_enabled(p->ctrl) &&
             !__atomic_load_n(&p->client, __ATOMIC_ACQUIRE))) {
            /* Nothing to watch: only a kick or a backend event matters. */
            nvme_poller_wait(p, -1);
            last_work = nvme_now_ns();
            sleep_ns = 0;
            continue;
        }
        now = nvme_now_ns();
        if (now - last_work < NVME_POLL_SPIN_NS) {
            nvme_cpu_relax();
            continue;
        }
        sleep_ns = sleep_ns ? MIN(sleep_ns * 2, p->max_sleep_ns) : 1000;
        if (now - last_work > NVME_POLL_DEEP_NS) {
            nvme_poller_wait(p, MAX(sleep_ns, NVME_POLL_DEEP_SLEEP_NS));
        } else if (now - last_work > NVME_POLL_IDLE_NS) {
            nvme_poller_wait(p, MAX(sleep_ns, NVME_POLL_IDLE_SLEEP_NS));
        } else {
            nvme_poller_wait(p, sleep_ns);
        }
    }
    return NULL;
}

bool nvme_poller_start(NvmePoller *p, NvmeCtrl *ctrl, bool poll_doorbells,
                       unsigned max_sleep_us, Error **errp)
{
    memset(p, 0, sizeof(*p));
    p->ctrl = ctrl;
    p->poll_doorbells = poll_doorbells;
    p->max_sleep_ns = max_sleep_us * 1000ll;
    p->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->kick_fd < 0) {
        error_setg_errno(errp, errno, "poller eventfd");
        return false;
    }
    p->thread = g_thread_try_new("nvme-poller", nvme_poller_thread, p, NULL);
    if (!p->thread) {
        error_setg(errp, "cannot start the doorbell poller thread");
        close(p->kick_fd);
        p->kick_fd = -1;
        return false;
    }
    return true;
}

void nvme_poller_kick(void *opaque)
{
    NvmePoller *p = opaque;
    uint64_t one = 1;

    if (p->kick_fd >= 0 && write(p->kick_fd, &one, sizeof(one)) < 0 &&
        errno != EAGAIN) {
        warn_report("poller kick: %s", strerror(errno));
    }
}

void nvme_poller_set_client(NvmePoller *p, bool attached)
{
    __atomic_store_n(&p->client, attached, __ATOMIC_RELEASE);
    nvme_poller_kick(p);
}

void nvme_poller_stop(NvmePoller *p)
{
    if (!p->thread) {
        return;
    }
    __atomic_store_n(&p->stop, true, __ATOMIC_RELEASE);
    nvme_poller_kick(p);
    g_thread_join(p->thread);
    trace_nvme_poller_stats(p->sleeps, p->passes_with_work);
    p->thread = NULL;
    close(p->kick_fd);
    p->kick_fd = -1;
}
