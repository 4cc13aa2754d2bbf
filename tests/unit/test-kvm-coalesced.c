/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The coalesced MMIO ring drain and the drainer's back-off, against a
 * fake ring laid out as KVM lays out its page (no /dev/kvm needed).
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"

#define RING_SLOTS 8

typedef struct FakeRing {
    struct kvm_coalesced_mmio_ring hdr;
    struct kvm_coalesced_mmio slots[RING_SLOTS];
} FakeRing;

/* What a device behind the zone ends up holding, plus a log of writes. */
typedef struct FakeDevice {
    uint32_t reg[16];           /* 4-byte registers from address 0x1000 */
    GArray *log;                /* addresses in apply order */
    FakeRing *ring;
    bool check_slot_held;       /* apply sees its slot not yet freed */
} FakeDevice;

static void fake_apply(void *opaque, uint64_t addr, const uint8_t *data,
                       uint32_t len, bool pio)
{
    FakeDevice *d = opaque;
    uint32_t v = 0;

    g_assert_false(pio);
    g_assert_cmpuint(len, ==, 4);
    g_assert_cmphex(addr, >=, 0x1000);
    g_assert_cmphex(addr, <, 0x1000 + sizeof(d->reg));
    if (d->check_slot_held) {
        /* The kernel may not reuse the slot while we read it. */
        g_assert_true(&d->ring->slots[d->ring->hdr.first].data[0] == data);
    }
    memcpy(&v, data, 4);
    d->reg[(addr - 0x1000) / 4] = v;
    g_array_append_val(d->log, addr);
}

/* What KVM does on a coalesced write; false when the ring is full. */
static bool kernel_write(FakeRing *r, uint64_t addr, uint32_t val)
{
    uint32_t next = (r->hdr.last + 1) % RING_SLOTS;

    if (next == r->hdr.first) {
        return false;           /* KVM exits to userspace instead */
    }
    r->slots[r->hdr.last] = (struct kvm_coalesced_mmio) {
        .phys_addr = addr, .len = 4,
    };
    memcpy(r->slots[r->hdr.last].data, &val, 4);
    r->hdr.last = next;
    return true;
}

static void device_init(FakeDevice *d, FakeRing *r)
{
    memset(d, 0, sizeof(*d));
    memset(r, 0, sizeof(*r));
    d->log = g_array_new(false, false, sizeof(uint64_t));
    d->ring = r;
}

/* A read after queued writes sees them: the last write to a register. */
static void test_in_order(void)
{
    FakeRing r;
    FakeDevice d;

    device_init(&d, &r);
    d.check_slot_held = true;
    g_assert_true(kernel_write(&r, 0x1008, 1));
    g_assert_true(kernel_write(&r, 0x1000, 2));
    g_assert_true(kernel_write(&r, 0x1008, 3));
    g_assert_cmpuint(kvm_coalesced_ring_pending(&r.hdr, RING_SLOTS), ==, 3);
    g_assert_cmpuint(kvm_coalesced_ring_drain(&r.hdr, RING_SLOTS,
                                              fake_apply, &d), ==, 3);
    g_assert_cmpuint(d.reg[2], ==, 3);
    g_assert_cmpuint(d.reg[0], ==, 2);
    g_assert_cmphex(g_array_index(d.log, uint64_t, 0), ==, 0x1008);
    g_assert_cmphex(g_array_index(d.log, uint64_t, 1), ==, 0x1000);
    g_assert_cmphex(g_array_index(d.log, uint64_t, 2), ==, 0x1008);
    /* Empty afterwards, and a second drain does nothing. */
    g_assert_cmpuint(kvm_coalesced_ring_pending(&r.hdr, RING_SLOTS), ==, 0);
    g_assert_cmpuint(kvm_coalesced_ring_drain(&r.hdr, RING_SLOTS,
                                              fake_apply, &d), ==, 0);
    g_array_free(d.log, true);
}

/* Across the end of the ring, and a full ring drains completely. */
static void test_wrap_and_full(void)
{
    FakeRing r;
    FakeDevice d;
    uint32_t i, n = 0;

    device_init(&d, &r);
    r.hdr.first = r.hdr.last = RING_SLOTS - 2;
    for (i = 0; kernel_write(&r, 0x1000 + 4 * (i % 16), 100 + i); i++) {
        n++;
    }
    g_assert_cmpuint(n, ==, RING_SLOTS - 1);
    g_assert_cmpuint(kvm_coalesced_ring_pending(&r.hdr, RING_SLOTS), ==,
                     RING_SLOTS - 1);
    g_assert_cmpuint(kvm_coalesced_ring_drain(&r.hdr, RING_SLOTS,
                                              fake_apply, &d), ==, n);
    for (i = 0; i < n; i++) {
        g_assert_cmpuint(d.reg[i], ==, 100 + i);
    }
    g_assert_cmpuint(r.hdr.first, ==, r.hdr.last);
    g_array_free(d.log, true);
}

/* A drain applies at most one ring's worth, however fast entries come. */
static void refill_apply(void *opaque, uint64_t addr, const uint8_t *data,
                         uint32_t len, bool pio)
{
    FakeDevice *d = opaque;

    fake_apply(opaque, addr, data, len, pio);
    kernel_write(d->ring, addr, 7);
}

static void test_bounded(void)
{
    FakeRing r;
    FakeDevice d;

    device_init(&d, &r);
    kernel_write(&r, 0x1000, 1);
    g_assert_cmpuint(kvm_coalesced_ring_drain(&r.hdr, RING_SLOTS,
                                              refill_apply, &d), ==,
                     RING_SLOTS);
    g_array_free(d.log, true);
}

/* Indices out of range (a corrupt page) apply nothing. */
static void test_corrupt(void)
{
    FakeRing r;
    FakeDevice d;

    device_init(&d, &r);
    r.hdr.first = 0;
    r.hdr.last = RING_SLOTS + 3;
    g_assert_cmpuint(kvm_coalesced_ring_pending(&r.hdr, RING_SLOTS), ==, 0);
    g_assert_cmpuint(kvm_coalesced_ring_drain(&r.hdr, RING_SLOTS,
                                              fake_apply, &d), ==, 0);
    g_assert_cmpuint(d.log->len, ==, 0);
    g_array_free(d.log, true);
}

static void test_backoff(void)
{
    int64_t max = 64 * 1000, s = 0;
    int i;

    /* Spins right after work. */
    g_assert_cmpint(kvm_coalesced_next_sleep(0, 0, max), ==, 0);
    g_assert_cmpint(kvm_coalesced_next_sleep(KVM_COALESCED_SPIN_NS - 1, 0,
                                             max), ==, 0);
    /* Then sleeps, doubling, bounded. */
    s = kvm_coalesced_next_sleep(KVM_COALESCED_SPIN_NS, 0, max);
    g_assert_cmpint(s, ==, KVM_COALESCED_MIN_SLEEP_NS);
    for (i = 0; i < 20; i++) {
        int64_t next = kvm_coalesced_next_sleep(KVM_COALESCED_SPIN_NS + 1,
                                                s, max);

        g_assert_cmpint(next, ==, MIN(2 * s, max));
        s = next;
    }
    g_assert_cmpint(s, ==, max);
    /* Long idle: deep sleep, whatever the bound. */
    g_assert_cmpint(kvm_coalesced_next_sleep(KVM_COALESCED_IDLE_NS + 1, s,
                                             max), ==,
                    KVM_COALESCED_IDLE_SLEEP_NS);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kvm/coalesced/drain-in-order", test_in_order);
    g_test_add_func("/kvm/coalesced/wrap-and-full", test_wrap_and_full);
    g_test_add_func("/kvm/coalesced/drain-bounded", test_bounded);
    g_test_add_func("/kvm/coalesced/corrupt-ring", test_corrupt);
    g_test_add_func("/kvm/coalesced/backoff", test_backoff);
    return g_test_run();
}
