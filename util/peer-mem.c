/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory shared with an untrusted peer: shrink seals and the SIGBUS guard.
 * See include/qemu/peer-mem.h.
 *
 * The guard table is a fixed array so the signal handler can read it
 * without locks or allocation: a slot is published by storing its start
 * address last (release) and retired by clearing it first.
 */
#include "qemu/osdep.h"
#include <pthread.h>
#include "qemu/peer-mem.h"
#include "trace.h"

typedef struct PeerMemSlot {
    uintptr_t start;        /* 0: not published; read by the handler */
    size_t len;
    bool faulted;           /* set by the handler */
    bool claimed;           /* owned by a caller (possibly not yet live) */
} PeerMemSlot;

static PeerMemSlot peer_mem_slots[QEMU_PEER_MEM_GUARD_SLOTS];
static struct sigaction peer_mem_prev;
static uintptr_t peer_mem_page_size;
static int peer_mem_install_errno;
static pthread_once_t peer_mem_once = PTHREAD_ONCE_INIT;

bool qemu_peer_fd_seal_shrink(int fd)
{
    int seals = fcntl(fd, F_GET_SEALS);

    /* EINVAL: a file system without seals (regular files). */
    if (seals < 0) {
        return false;
    }
    if (seals & F_SEAL_SHRINK) {
        return true;
    }
    if (seals & F_SEAL_SEAL) {
        return false;
    }
    return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0;
}

/* Hands a SIGBUS we do not own to whoever had it before us. */
static void peer_mem_chain(int sig, siginfo_t *info, void *uc)
{
    if (peer_mem_prev.sa_flags & SA_SIGINFO) {
        peer_mem_prev.sa_sigaction(sig, info, uc);
    } else if (peer_mem_prev.sa_handler != SIG_DFL &&
               peer_mem_prev.sa_handler != SIG_IGN) {
        peer_mem_prev.sa_handler(sig);
    } else {
        /*
         * Default action: die.  The raised signal stays pending until we
         * return, so both a real fault and a kill() terminate as SIGBUS.
         */
        struct sigaction dfl = { .sa_handler = SIG_DFL };

        sigemptyset(&dfl.sa_mask);
        sigaction(SIGBUS, &dfl, NULL);
        raise(SIGBUS);
    }
}

static void peer_mem_sigbus(int sig, siginfo_t *info, void *uc)
{
    int saved_errno = errno;
    uintptr_t addr = (uintptr_t)info->si_addr;

    /* Only a kernel-reported access past the end of a file is ours. */
    if (info->si_code == BUS_ADRERR) {
        for (size_t i = 0; i < QEMU_PEER_MEM_GUARD_SLOTS; i++) {
            PeerMemSlot *s = &peer_mem_slots[i];
            uintptr_t start = __atomic_load_n(&s->start, __ATOMIC_ACQUIRE);
            void *page;

            if (!start || addr < start || addr - start >= s->len) {
                continue;
            }
            page = mmap((void *)(addr & ~(peer_mem_page_size - 1)),
                        peer_mem_page_size, PROT_READ | PROT_WRITE,
                        MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (page == MAP_FAILED) {
                break;
            }
            __atomic_store_n(&s->faulted, true, __ATOMIC_RELEASE);
            errno = saved_errno;
            return;
        }
    }
    errno = saved_errno;
    peer_mem_chain(sig, info, uc);
}

/*
 * Installed on first use rather than at start-up so that a sanitizer's
 * handler, installed before main(), is the one we chain to.
 */
static void peer_mem_install(void)
{
    struct sigaction sa = {
        .sa_sigaction = peer_mem_sigbus,
        .sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK,
    };

    peer_mem_page_size = sysconf(_SC_PAGESIZE);
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, &peer_mem_prev) < 0) {
        peer_mem_install_errno = errno;
    }
}

int qemu_peer_mem_guard(void *base, size_t len)
{
    pthread_once(&peer_mem_once, peer_mem_install);
    if (peer_mem_install_errno) {
        return -peer_mem_install_errno;
    }
    for (int i = 0; i < QEMU_PEER_MEM_GUARD_SLOTS; i++) {
        PeerMemSlot *s = &peer_mem_slots[i];
        bool expected = false;

        if (!__atomic_compare_exchange_n(&s->claimed, &expected, true, false,
                                         __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED)) {
            continue;
        }
        s->len = len;
        __atomic_store_n(&s->faulted, false, __ATOMIC_RELAXED);
        __atomic_store_n(&s->start, (uintptr_t)base, __ATOMIC_RELEASE);
        trace_peer_mem_guard(base, len, i);
        return i;
    }
    return -ENOSPC;
}

void qemu_peer_mem_unguard(int slot)
{
    PeerMemSlot *s;

    if (slot < 0 || slot >= QEMU_PEER_MEM_GUARD_SLOTS) {
        return;
    }
    s = &peer_mem_slots[slot];
    trace_peer_mem_unguard(slot,
                           __atomic_load_n(&s->faulted, __ATOMIC_ACQUIRE));
    __atomic_store_n(&s->start, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&s->claimed, false, __ATOMIC_RELEASE);
}

bool qemu_peer_mem_faulted(int slot)
{
    if (slot < 0 || slot >= QEMU_PEER_MEM_GUARD_SLOTS) {
        return false;
    }
    return __atomic_load_n(&peer_mem_slots[slot].faulted, __ATOMIC_ACQUIRE);
}
