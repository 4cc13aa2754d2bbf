/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Coalesced MMIO under KVM.
 *
 * A MemoryListener turns the memory API's coalesced ranges into KVM zones
 * (KVM_REGISTER_COALESCED_MMIO): the kernel completes a guest write there
 * without leaving the guest and appends it to a ring in the kvm_run
 * mapping.  Entries are replayed in order through the normal dispatch
 * (address_space_write), under the BQL, from two places:
 *   - every vCPU, before it handles any exit: an exiting read on a page
 *     with coalesced writes therefore sees all of them, and so does any
 *     other trapped access (MSI-X table, PBA);
 *   - the drainer thread, which looks at the ring without the BQL, spins
 *     briefly after the last entry and then backs off (see
 *     kvm_coalesced_next_sleep()), so a guest that stops writing leaves an
 *     empty ring and an idle drainer costs almost nothing.  While no zone
 *     is registered it sleeps on a condition variable.
 * A topology change drains first (listener begin), so no entry outlives
 * the view it was written against.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include <sys/prctl.h>
#include "accel/kvm/kvm-internal.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "trace.h"

/* Longest drainer sleep while the guest is active. */
#define KVM_COALESCED_MAX_SLEEP_NS (64 * 1000ll)

static struct {
    int offset;                 /* ring page in kvm_run, 0: no capability */
    struct kvm_coalesced_mmio_ring *ring;
    uint32_t ring_max;
    MemoryListener listener;
    bool listener_registered;
    GThread *thread;
    GMutex lock;
    GCond cond;
    bool quit;                  /* lock */
    uint32_t zones;             /* lock; read atomically by the drainer */
    uint64_t replayed, vcpu_drains, drainer_drains;     /* BQL */
} kc;

static int64_t kvm_coalesced_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void kvm_coalesced_apply(void *opaque, uint64_t addr,
                                const uint8_t *data, uint32_t len, bool pio)
{
    trace_kvm_coalesced_replay(addr, len, pio);
    address_space_write(pio ? &address_space_io : &address_space_memory,
                        addr, data, len);
    kc.replayed++;
}

void kvm_coalesced_flush(bool vcpu)
{
    static bool flushing;       /* BQL */
    uint32_t n;

    /*
     * A write being replayed may change the topology (listener begin,
     * zone removal) and so ask for a flush again: the drain in progress
     * already applies everything in order, and a nested one would apply
     * the current entry twice.
     */
    if (flushing || !kc.ring ||
        !kvm_coalesced_ring_pending(kc.ring, kc.ring_max)) {
        return;
    }
    flushing = true;
    memory_set_replaying_coalesced(true);
    n = kvm_coalesced_ring_drain(kc.ring, kc.ring_max, kvm_coalesced_apply,
                                 NULL);
    memory_set_replaying_coalesced(false);
    flushing = false;
    if (vcpu) {
        kc.vcpu_drains++;
    } else {
        kc.drainer_drains++;
    }
    trace_kvm_coalesced_flush(vcpu, n);
}

static void kvm_coalesced_zone(hwaddr addr, hwaddr len, bool add)
{
    struct kvm_coalesced_mmio_zone zone = { .addr = addr, .size = len };

    if (!kc.offset) {
        return;
    }
    if (!add) {
        /* Writes queued for the zone land before it goes away. */
        kvm_coalesced_flush(false);
    }
    if (ioctl(kvm_state->vm_fd, add ? KVM_REGISTER_COALESCED_MMIO
                                    : KVM_UNREGISTER_COALESCED_MMIO,
              &zone) < 0) {
        /* Still correct without it: the writes exit as before. */
        warn_report("kvm: cannot %s coalesced MMIO zone [0x%" PRIx64
                    " + 0x%" PRIx64 "]: %s", add ? "register" : "unregister",
                    (uint64_t)addr, (uint64_t)len, strerror(errno));
        return;
    }
    trace_kvm_coalesced_zone(addr, len, add);
    g_mutex_lock(&kc.lock);
    kc.zones += add ? 1 : -1;
    g_cond_broadcast(&kc.cond);
    g_mutex_unlock(&kc.lock);
}

static void kvm_coalesced_io_add(MemoryListener *l,
                                 MemoryRegionSection *section, hwaddr addr,
                                 hwaddr len)
{
    kvm_coalesced_zone(addr, len, true);
}

static void kvm_coalesced_io_del(MemoryListener *l,
                                 MemoryRegionSection *section, hwaddr addr,
                                 hwaddr len)
{
    kvm_coalesced_zone(addr, len, false);
}

static void kvm_coalesced_begin(MemoryListener *l)
{
    kvm_coalesced_flush(false);
}

static gpointer kvm_coalesced_drainer(gpointer opaque)
{
    int64_t last_work = kvm_coalesced_now_ns(), sleep_ns = 0;

    /* The default 50 us timer slack would swamp microsecond sleeps. */
    prctl(PR_SET_TIMERSLACK, 1000ul);
    g_mutex_lock(&kc.lock);
    while (!kc.quit) {
        int64_t now;

        if (!kc.zones) {
            g_cond_wait(&kc.cond, &kc.lock);
            last_work = kvm_coalesced_now_ns();
            sleep_ns = 0;
            continue;
        }
        g_mutex_unlock(&kc.lock);
        if (kvm_coalesced_ring_pending(kc.ring, kc.ring_max)) {
            bql_lock();
            kvm_coalesced_flush(false);
            bql_unlock();
            last_work = kvm_coalesced_now_ns();
            sleep_ns = 0;
        } else {
            now = kvm_coalesced_now_ns();
            sleep_ns = kvm_coalesced_next_sleep(now - last_work, sleep_ns,
                                                KVM_COALESCED_MAX_SLEEP_NS);
            if (sleep_ns) {
                struct timespec ts = {
                    .tv_sec = sleep_ns / 1000000000ll,
                    .tv_nsec = sleep_ns % 1000000000ll,
                };
                nanosleep(&ts, NULL);
            } else {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        }
        g_mutex_lock(&kc.lock);
    }
    g_mutex_unlock(&kc.lock);
    return NULL;
}

void kvm_coalesced_init(KVMState *s)
{
    int ret = ioctl(s->fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO);

    memset(&kc, 0, sizeof(kc));
    g_mutex_init(&kc.lock);
    g_cond_init(&kc.cond);
    kc.offset = ret > 0 ? ret : 0;
    trace_kvm_coalesced_init(kc.offset);
    if (!kc.offset) {
        return;
    }
    kc.listener = (MemoryListener) {
        .begin = kvm_coalesced_begin,
        .coalesced_io_add = kvm_coalesced_io_add,
        .coalesced_io_del = kvm_coalesced_io_del,
        .priority = 10,
        .name = "kvm-coalesced-mmio",
    };
    memory_listener_register(&kc.listener, &address_space_memory);
    kc.listener_registered = true;
}

void kvm_coalesced_start(KVMState *s)
{
    long page = getpagesize();

    if (!kc.offset || !s->nr_vcpus || !s->vcpus[0].run ||
        (size_t)(kc.offset + 1) * page > s->run_size) {
        return;
    }
    kc.ring = (void *)((uint8_t *)s->vcpus[0].run + kc.offset * page);
    kc.ring_max = (page - sizeof(struct kvm_coalesced_mmio_ring)) /
                  sizeof(struct kvm_coalesced_mmio);
    kc.thread = g_thread_new("kvm-coalesced", kvm_coalesced_drainer, NULL);
}

void kvm_coalesced_cleanup(KVMState *s)
{
    if (kc.thread) {
        g_mutex_lock(&kc.lock);
        kc.quit = true;
        g_cond_broadcast(&kc.cond);
        g_mutex_unlock(&kc.lock);
        g_thread_join(kc.thread);
        kc.thread = NULL;
    }
    if (kc.listener_registered) {
        memory_listener_unregister(&kc.listener);
        kc.listener_registered = false;
    }
    kc.ring = NULL;
    kc.offset = 0;
}

void kvm_coalesced_get_stats(KVMCoalescedStats *st)
{
    *st = (KVMCoalescedStats) {
        .zones = __atomic_load_n(&kc.zones, __ATOMIC_RELAXED),
        .ring_size = kc.ring ? kc.ring_max : 0,
        .pending = kc.ring ? kvm_coalesced_ring_pending(kc.ring,
                                                        kc.ring_max) : 0,
        .replayed = kc.replayed,
        .vcpu_drains = kc.vcpu_drains,
        .drainer_drains = kc.drainer_drains,
    };
}
