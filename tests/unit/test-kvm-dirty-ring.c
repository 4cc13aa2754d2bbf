/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM dirty ring's harvest and size check, against a fake ring laid
 * out as KVM lays out a vCPU's (no /dev/kvm needed).
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "qapi/error.h"

#define ENTRIES 8

typedef struct Marks {
    GArray *pages;              /* slot << 32 | offset, in mark order */
} Marks;

static void mark(void *opaque, uint32_t slot, uint64_t offset)
{
    Marks *m = opaque;
    uint64_t v = (uint64_t)slot << 32 | offset;

    g_array_append_val(m->pages, v);
}

/* What KVM does: the entry's fields first, its DIRTY flag last. */
static void publish(struct kvm_dirty_gfn *ring, uint32_t idx, uint32_t slot,
                    uint64_t offset)
{
    struct kvm_dirty_gfn *e = &ring[idx % ENTRIES];

    e->slot = slot;
    e->offset = offset;
    __atomic_store_n(&e->flags, KVM_DIRTY_GFN_F_DIRTY, __ATOMIC_RELEASE);
}

/* What KVM_RESET_DIRTY_RINGS does to the entries we flagged. */
static unsigned kernel_reset(struct kvm_dirty_gfn *ring)
{
    unsigned n = 0;

    for (unsigned i = 0; i < ENTRIES; i++) {
        if (ring[i].flags == KVM_DIRTY_GFN_F_RESET) {
            ring[i].flags = 0;
            n++;
        }
    }
    return n;
}

static void test_harvest_in_order_then_stop(void)
{
    struct kvm_dirty_gfn ring[ENTRIES] = { 0 };
    Marks m = { .pages = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
    uint32_t fetch = 0;

    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, 0);
    publish(ring, 0, 1, 10);
    publish(ring, 1, 1, 11);
    publish(ring, 2, (1 << 16) | 3, 7);     /* address space 1, slot 3 */
    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, 3);
    g_assert_cmpuint(fetch, ==, 3);
    g_assert_cmpuint(m.pages->len, ==, 3);
    g_assert_cmphex(g_array_index(m.pages, uint64_t, 0), ==, 1ull << 32 | 10);
    g_assert_cmphex(g_array_index(m.pages, uint64_t, 1), ==, 1ull << 32 | 11);
    g_assert_cmphex(g_array_index(m.pages, uint64_t, 2), ==,
                    (uint64_t)((1 << 16) | 3) << 32 | 7);
    /* Every harvested entry is handed back, and none is taken twice. */
    for (unsigned i = 0; i < 3; i++) {
        g_assert_cmpuint(ring[i].flags, ==, KVM_DIRTY_GFN_F_RESET);
    }
    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, 0);
    g_assert_cmpuint(kernel_reset(ring), ==, 3);
    g_array_free(m.pages, TRUE);
}

/* An entry not yet published stops the walk, even with later ones set. */
static void test_gap_stops_the_walk(void)
{
    struct kvm_dirty_gfn ring[ENTRIES] = { 0 };
    Marks m = { .pages = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
    uint32_t fetch = 0;

    publish(ring, 0, 0, 1);
    publish(ring, 2, 0, 3);
    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, 1);
    g_assert_cmpuint(fetch, ==, 1);
    publish(ring, 1, 0, 2);
    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, 2);
    g_assert_cmpuint(fetch, ==, 3);
    for (unsigned i = 0; i < 3; i++) {
        g_assert_cmpuint(g_array_index(m.pages, uint64_t, i), ==, i + 1);
    }
    g_array_free(m.pages, TRUE);
}

/* Laps of the ring: the index wraps, the walk takes at most one lap. */
static void test_wraps_and_full_ring(void)
{
    struct kvm_dirty_gfn ring[ENTRIES] = { 0 };
    Marks m = { .pages = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
    uint32_t fetch = 0, published = 0;

    for (unsigned lap = 0; lap < 5; lap++) {
        /* A full ring: KVM exits with KVM_EXIT_DIRTY_RING_FULL here. */
        for (unsigned i = 0; i < ENTRIES; i++) {
            publish(ring, published, 2, published);
            published++;
        }
        g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark,
                                                &m), ==, ENTRIES);
        g_assert_cmpuint(kernel_reset(ring), ==, ENTRIES);
        /* A few more, straddling the end of the ring. */
        for (unsigned i = 0; i < 3; i++) {
            publish(ring, published, 2, published);
            published++;
        }
        g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark,
                                                &m), ==, 3);
        g_assert_cmpuint(kernel_reset(ring), ==, 3);
    }
    g_assert_cmpuint(fetch, ==, published);
    g_assert_cmpuint(m.pages->len, ==, published);
    for (unsigned i = 0; i < published; i++) {
        g_assert_cmphex(g_array_index(m.pages, uint64_t, i), ==,
                        2ull << 32 | i);
    }
    g_array_free(m.pages, TRUE);
}

/* A ring whose every entry stays flagged (never reset) is walked once. */
static void test_one_lap_at_most(void)
{
    struct kvm_dirty_gfn ring[ENTRIES] = { 0 };
    Marks m = { .pages = g_array_new(FALSE, FALSE, sizeof(uint64_t)) };
    uint32_t fetch = 0;

    for (unsigned i = 0; i < ENTRIES; i++) {
        ring[i].flags = KVM_DIRTY_GFN_F_DIRTY | KVM_DIRTY_GFN_F_RESET;
    }
    g_assert_cmpuint(kvm_dirty_ring_harvest(ring, ENTRIES, &fetch, mark, &m),
                     ==, ENTRIES);
    g_array_free(m.pages, TRUE);
}

static void test_sizes(void)
{
    static const struct {
        uint32_t entries;
        size_t page;
        const char *err;
    } cases[] = {
        { 0, 4096, NULL },              /* the dirty bitmap */
        { 256, 4096, NULL },            /* one page of entries */
        { 4096, 4096, NULL },
        { 65536, 4096, NULL },          /* KVM's limit is checked later */
        { 128, 4096, "at least 256 entries" },
        { 4096, 65536, NULL },
        { 2048, 65536, "at least 4096 entries" },
        { 1000, 4096, "must be a power of two" },
        { 3, 4096, "must be a power of two" },
        { 0x80000001u, 4096, "must be a power of two" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        Error *err = NULL;
        bool ok = kvm_dirty_ring_check_size(cases[i].entries, cases[i].page,
                                            &err);

        g_assert_cmpint(ok, ==, !cases[i].err);
        if (cases[i].err) {
            g_autofree char *want = g_strdup_printf("dirty-ring-size=%u: ",
                                                    cases[i].entries);

            g_assert_nonnull(err);
            g_assert_true(g_str_has_prefix(error_get_pretty(err), want));
            g_assert_nonnull(strstr(error_get_pretty(err), cases[i].err));
            error_free(err);
        } else {
            g_assert_null(err);
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kvm/dirty-ring/harvest-in-order",
                    test_harvest_in_order_then_stop);
    g_test_add_func("/kvm/dirty-ring/gap-stops", test_gap_stops_the_walk);
    g_test_add_func("/kvm/dirty-ring/wraps", test_wraps_and_full_ring);
    g_test_add_func("/kvm/dirty-ring/one-lap", test_one_lap_at_most);
    g_test_add_func("/kvm/dirty-ring/sizes", test_sizes);
    return g_test_run();
}
