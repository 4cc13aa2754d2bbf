/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Split virtqueue device side (hw/virtio/virtqueue.c) over a fake guest:
 * well-formed chains, every malformed-chain rule, RAM split across
 * ranges, the used ring and notification suppression.
 */
#include "qemu/osdep.h"
#include <linux/virtio_ring.h>
#include "hw/virtio/virtqueue.h"

#define RAM_GPA 0x10000ull
#define RAM_SIZE 0x10000ull
#define NUM 8
#define DESC (RAM_GPA)
#define AVAIL (RAM_GPA + 0x1000)
#define USED (RAM_GPA + 0x2000)
#define DATA (RAM_GPA + 0x4000)

typedef struct Fake {
    uint8_t *ram;
    GuestMemMap *map;
    VirtQueue vq;
    VirtQueueElement elem;
    uint16_t avail_idx;
} Fake;

static uint8_t *hva(Fake *f, uint64_t gpa)
{
    return f->ram + (gpa - RAM_GPA);
}

static void fake_init(Fake *f, bool split)
{
    GuestMemRange r[2];

    f->ram = g_malloc0(RAM_SIZE);
    if (split) {
        /* Two ranges, adjacent in the guest, apart on the host side. */
        r[0] = (GuestMemRange){ RAM_GPA, 0x5000, f->ram };
        r[1] = (GuestMemRange){ RAM_GPA + 0x5000, RAM_SIZE - 0x5000,
                                f->ram + 0x5000 };
        f->map = guest_mem_map_new(r, 2);
    } else {
        r[0] = (GuestMemRange){ RAM_GPA, RAM_SIZE, f->ram };
        f->map = guest_mem_map_new(r, 1);
    }
    memset(&f->vq, 0, sizeof(f->vq));
    f->vq.num = NUM;
    f->vq.desc = DESC;
    f->vq.avail = AVAIL;
    f->vq.used = USED;
    f->avail_idx = 0;
}

static void fake_free(Fake *f)
{
    guest_mem_map_unref(f->map);
    g_free(f->ram);
}

static void set_desc(Fake *f, uint64_t table, unsigned i, uint64_t addr,
                     uint32_t len, uint16_t flags, uint16_t next)
{
    struct vring_desc d = { addr, len, flags, next };

    memcpy(hva(f, table + 16 * i), &d, sizeof(d));
}

static void make_avail(Fake *f, uint16_t head)
{
    uint16_t *ring = (uint16_t *)hva(f, AVAIL + 4);

    ring[f->avail_idx % NUM] = head;
    f->avail_idx++;
    *(uint16_t *)hva(f, AVAIL + 2) = f->avail_idx;
}

static VirtQueuePop pop(Fake *f, const char **why)
{
    return virtqueue_pop(&f->vq, f->map, &f->elem, why);
}

static void test_rings_valid(void)
{
    Fake f;

    fake_init(&f, false);
    g_assert_true(virtqueue_rings_valid(&f.vq, f.map));
    f.vq.desc = DESC + 8;                       /* misaligned */
    g_assert_false(virtqueue_rings_valid(&f.vq, f.map));
    f.vq.desc = RAM_GPA + RAM_SIZE - 16;        /* runs off RAM */
    g_assert_false(virtqueue_rings_valid(&f.vq, f.map));
    f.vq.desc = DESC;
    f.vq.num = 6;                               /* not a power of two */
    g_assert_false(virtqueue_rings_valid(&f.vq, f.map));
    fake_free(&f);
}

static void test_good_chain(void)
{
    Fake f;
    const char *why;

    fake_init(&f, false);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_EMPTY);
    set_desc(&f, DESC, 3, DATA, 16, VRING_DESC_F_NEXT, 5);
    set_desc(&f, DESC, 5, DATA + 0x100, 512,
             VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
    set_desc(&f, DESC, 1, DATA + 0x400, 1, VRING_DESC_F_WRITE, 0);
    make_avail(&f, 3);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_OK);
    g_assert_cmpuint(f.elem.index, ==, 3);
    g_assert_cmpuint(f.elem.out_num, ==, 1);
    g_assert_cmpuint(f.elem.in_num, ==, 2);
    g_assert_cmpuint(f.elem.out_len, ==, 16);
    g_assert_cmpuint(f.elem.in_len, ==, 513);
    g_assert_true(f.elem.sg[0].iov_base == hva(&f, DATA));
    g_assert_true(f.elem.sg[2].iov_base == hva(&f, DATA + 0x400));
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_EMPTY);

    g_assert_true(virtqueue_push(&f.vq, f.map, 3, 513));
    g_assert_cmpuint(*(uint16_t *)hva(&f, USED + 2), ==, 1);
    g_assert_cmpuint(*(uint32_t *)hva(&f, USED + 4), ==, 3);
    g_assert_cmpuint(*(uint32_t *)hva(&f, USED + 8), ==, 513);
    fake_free(&f);
}

static void test_split_ranges(void)
{
    Fake f;
    const char *why;

    fake_init(&f, true);
    /* 0x4f00..0x5100 crosses the range boundary at 0x5000. */
    set_desc(&f, DESC, 0, RAM_GPA + 0x4f00, 0x200, 0, 0);
    make_avail(&f, 0);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_OK);
    g_assert_cmpuint(f.elem.out_num, ==, 2);
    g_assert_cmpuint(f.elem.sg[0].iov_len, ==, 0x100);
    g_assert_cmpuint(f.elem.sg[1].iov_len, ==, 0x100);
    fake_free(&f);
}

typedef void (*Breaker)(Fake *f);

static void bad_loop(Fake *f)
{
    set_desc(f, DESC, 0, DATA, 16, VRING_DESC_F_NEXT, 1);
    set_desc(f, DESC, 1, DATA, 16, VRING_DESC_F_NEXT, 0);
}

static void bad_self_loop(Fake *f)
{
    set_desc(f, DESC, 0, DATA, 16, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 0);
}

static void bad_next_range(Fake *f)
{
    set_desc(f, DESC, 0, DATA, 16, VRING_DESC_F_NEXT, NUM);
}

static void bad_outside_ram(Fake *f)
{
    set_desc(f, DESC, 0, RAM_GPA + RAM_SIZE - 8, 16, 0, 0);
}

static void bad_wrap(Fake *f)
{
    set_desc(f, DESC, 0, UINT64_MAX - 4, 16, 0, 0);
}

static void bad_order(Fake *f)
{
    set_desc(f, DESC, 0, DATA, 16, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
    set_desc(f, DESC, 1, DATA, 16, 0, 0);
}

static void bad_indirect_off(Fake *f)
{
    set_desc(f, DESC, 0, DATA, 32, VRING_DESC_F_INDIRECT, 0);
}

static void bad_indirect_next(Fake *f)
{
    f->vq.indirect = true;
    set_desc(f, DESC, 0, DATA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT,
             1);
}

static void bad_indirect_len(Fake *f)
{
    f->vq.indirect = true;
    set_desc(f, DESC, 0, DATA, 24, VRING_DESC_F_INDIRECT, 0);
}

static void bad_indirect_nested(Fake *f)
{
    f->vq.indirect = true;
    set_desc(f, DESC, 0, DATA + 0x800, 32, VRING_DESC_F_INDIRECT, 0);
    set_desc(f, DATA + 0x800, 0, DATA, 16, VRING_DESC_F_NEXT, 1);
    set_desc(f, DATA + 0x800, 1, DATA + 0x800, 32, VRING_DESC_F_INDIRECT, 0);
}

static void bad_indirect_loop(Fake *f)
{
    f->vq.indirect = true;
    set_desc(f, DESC, 0, DATA + 0x800, 32, VRING_DESC_F_INDIRECT, 0);
    set_desc(f, DATA + 0x800, 0, DATA, 16, VRING_DESC_F_NEXT, 1);
    set_desc(f, DATA + 0x800, 1, DATA, 16, VRING_DESC_F_NEXT, 0);
}

static void test_bad_chain(gconstpointer data)
{
    Breaker breaker = (Breaker)(uintptr_t)data;
    Fake f;
    const char *why;

    fake_init(&f, false);
    breaker(&f);
    make_avail(&f, 0);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_BAD_CHAIN);
    g_assert_nonnull(why);
    g_assert_cmpuint(f.elem.index, ==, 0);
    /* The queue itself stays usable. */
    set_desc(&f, DESC, 2, DATA, 16, 0, 0);
    make_avail(&f, 2);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_OK);
    fake_free(&f);
}

static void test_indirect_ok(void)
{
    Fake f;
    const char *why;

    fake_init(&f, false);
    f.vq.indirect = true;
    set_desc(&f, DESC, 4, DATA + 0x800, 48, VRING_DESC_F_INDIRECT, 0);
    set_desc(&f, DATA + 0x800, 0, DATA, 16, VRING_DESC_F_NEXT, 2);
    set_desc(&f, DATA + 0x800, 2, DATA + 0x100, 100,
             VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
    set_desc(&f, DATA + 0x800, 1, DATA + 0x200, 1, VRING_DESC_F_WRITE, 0);
    make_avail(&f, 4);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_OK);
    g_assert_cmpuint(f.elem.index, ==, 4);
    g_assert_cmpuint(f.elem.out_len, ==, 16);
    g_assert_cmpuint(f.elem.in_len, ==, 101);
    fake_free(&f);
}

static void test_broken_ring(void)
{
    Fake f;
    const char *why;

    fake_init(&f, false);
    make_avail(&f, NUM);                /* head out of range */
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_BROKEN);
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_BROKEN);
    virtqueue_reset_state(&f.vq);
    f.avail_idx = 0;
    /* The available index running more than NUM ahead. */
    *(uint16_t *)hva(&f, AVAIL + 2) = NUM + 1;
    g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_BROKEN);
    fake_free(&f);
}

static void test_notify(void)
{
    Fake f;
    const char *why;

    fake_init(&f, false);
    /* Without event idx: the NO_INTERRUPT flag decides. */
    g_assert_true(virtqueue_should_notify(&f.vq, f.map));
    *(uint16_t *)hva(&f, AVAIL) = VRING_AVAIL_F_NO_INTERRUPT;
    g_assert_false(virtqueue_should_notify(&f.vq, f.map));
    *(uint16_t *)hva(&f, AVAIL) = 0;

    /* With event idx: interrupt when used crosses used_event. */
    f.vq.event_idx = true;
    set_desc(&f, DESC, 0, DATA, 16, 0, 0);
    for (int i = 0; i < 3; i++) {
        make_avail(&f, 0);
        g_assert_cmpint(pop(&f, &why), ==, VIRTQUEUE_OK);
    }
    /* used_event = 1: the driver wants to hear when idx passes 1. */
    *(uint16_t *)hva(&f, AVAIL + 4 + 2 * NUM) = 1;
    virtqueue_push(&f.vq, f.map, 0, 0);         /* idx 1 */
    g_assert_true(virtqueue_should_notify(&f.vq, f.map));   /* first */
    virtqueue_push(&f.vq, f.map, 0, 0);         /* idx 2: crosses 1 */
    g_assert_true(virtqueue_should_notify(&f.vq, f.map));
    virtqueue_push(&f.vq, f.map, 0, 0);         /* idx 3: already told */
    g_assert_false(virtqueue_should_notify(&f.vq, f.map));
    /* avail_event follows what we consumed. */
    g_assert_false(virtqueue_enable_notify(&f.vq, f.map));
    g_assert_cmpuint(*(uint16_t *)hva(&f, USED + 4 + 8 * NUM), ==, 3);
    make_avail(&f, 0);
    g_assert_true(virtqueue_enable_notify(&f.vq, f.map));
    fake_free(&f);
}

static void test_iov_copy(void)
{
    uint8_t a[3], b[5], out[8];
    struct iovec iov[2] = { { a, 3 }, { b, 5 } };

    g_assert_cmpuint(iov_from_buf(iov, 2, 1, "ABCDEFGHIJ", 10), ==, 7);
    g_assert_cmpuint(iov_to_buf(iov, 2, 1, out, 8), ==, 7);
    g_assert_cmpmem(out, 7, "ABCDEFG", 7);
    g_assert_cmpuint(iov_size(iov, 2), ==, 8);
}

int main(int argc, char **argv)
{
    static const struct { const char *name; Breaker fn; } bad[] = {
        { "loop", bad_loop },
        { "self-loop", bad_self_loop },
        { "next-out-of-range", bad_next_range },
        { "outside-ram", bad_outside_ram },
        { "address-wraps", bad_wrap },
        { "readable-after-writable", bad_order },
        { "indirect-not-negotiated", bad_indirect_off },
        { "indirect-with-next", bad_indirect_next },
        { "indirect-bad-length", bad_indirect_len },
        { "indirect-nested", bad_indirect_nested },
        { "indirect-loop", bad_indirect_loop },
    };

    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/virtqueue/rings-valid", test_rings_valid);
    g_test_add_func("/virtqueue/good-chain", test_good_chain);
    g_test_add_func("/virtqueue/split-ranges", test_split_ranges);
    g_test_add_func("/virtqueue/indirect", test_indirect_ok);
    g_test_add_func("/virtqueue/broken-ring", test_broken_ring);
    g_test_add_func("/virtqueue/notify", test_notify);
    g_test_add_func("/virtqueue/iov-copy", test_iov_copy);
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *path = g_strdup_printf("/virtqueue/bad-chain/%s",
                                                bad[i].name);
        g_test_add_data_func(path, (gconstpointer)(uintptr_t)bad[i].fn,
                             test_bad_chain);
    }
    return g_test_run();
}
