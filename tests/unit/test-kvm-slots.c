/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kvm_plan_slot(): which part of a RAM section becomes a KVM memslot.
 */
#include "qemu/osdep.h"
#include "accel/kvm/kvm-internal.h"

#define PAGE 0x1000ULL
#define PAGE64K 0x10000ULL

static void test_aligned_whole(void)
{
    KVMSlotPlan p = kvm_plan_slot(0x100000, 0x200000, 0x7f0000100000, PAGE);

    g_assert_true(p.mapped);
    g_assert_cmphex(p.gpa, ==, 0x100000);
    g_assert_cmphex(p.size, ==, 0x200000);
    g_assert_cmphex(p.hva, ==, 0x7f0000100000);
    g_assert_cmphex(p.head, ==, 0);
    g_assert_cmphex(p.tail, ==, 0);
}

static void test_unaligned_head_tail(void)
{
    /* A section starting 0x800 into a page, ending 0x400 into another. */
    KVMSlotPlan p = kvm_plan_slot(0xe0000800, 0x3000 - 0x800 + 0x400,
                                  0x7f0000000800, PAGE);

    g_assert_true(p.mapped);
    g_assert_cmphex(p.gpa, ==, 0xe0001000);
    g_assert_cmphex(p.size, ==, 0x2000);
    g_assert_cmphex(p.hva, ==, 0x7f0000001000);
    g_assert_cmphex(p.head, ==, 0x800);
    g_assert_cmphex(p.tail, ==, 0x400);
    g_assert_cmphex(p.head + p.size + p.tail, ==, 0x3000 - 0x800 + 0x400);
}

static void test_sub_page_not_mapped(void)
{
    /* Less than a page after rounding: all of it stays in userspace. */
    KVMSlotPlan p = kvm_plan_slot(0xe0000800, 0x800 + 0xfff, 0x7f0000000800,
                                  PAGE);

    g_assert_false(p.mapped);
    p = kvm_plan_slot(0xe0000000, 0x800, 0x7f0000000000, PAGE);
    g_assert_false(p.mapped);
}

static void test_misaligned_host(void)
{
    /* Guest page-aligned, host pointer not: KVM cannot map any of it. */
    KVMSlotPlan p = kvm_plan_slot(0xe0000000, 0x10000, 0x7f0000000400, PAGE);

    g_assert_false(p.mapped);
    g_assert_cmphex(p.head, ==, 0x10000);
}

static void test_large_host_pages(void)
{
    /*
     * With 64 KiB host pages a 4 KiB-aligned hole in a BAR (an MSI-X table
     * page) cuts the surrounding pieces back to 64 KiB boundaries.
     */
    KVMSlotPlan p = kvm_plan_slot(0xe0001000, 0x3f000, 0x7f0000001000,
                                  PAGE64K);

    g_assert_true(p.mapped);
    g_assert_cmphex(p.gpa, ==, 0xe0010000);
    g_assert_cmphex(p.size, ==, 0x30000);
    g_assert_cmphex(p.head, ==, 0xf000);
    g_assert_cmphex(p.tail, ==, 0);
}

static void test_degenerate(void)
{
    g_assert_false(kvm_plan_slot(0x1000, 0, 0x1000, PAGE).mapped);
    /* Wrapping past 2^64 is refused, not mapped at a bogus address. */
    g_assert_false(kvm_plan_slot(UINT64_MAX - 0xfff, 0x2000, 0x1000,
                                 PAGE).mapped);
    g_assert_false(kvm_plan_slot(UINT64_MAX - 0x7ff, 0x800, 0x7ff800 + 0x800,
                                 PAGE).mapped);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kvm/slot-plan/aligned-section-mapped-whole",
                    test_aligned_whole);
    g_test_add_func("/kvm/slot-plan/unaligned-head-and-tail-left-out",
                    test_unaligned_head_tail);
    g_test_add_func("/kvm/slot-plan/sub-page-section-stays-trapped",
                    test_sub_page_not_mapped);
    g_test_add_func("/kvm/slot-plan/host-offset-mismatch-not-mapped",
                    test_misaligned_host);
    g_test_add_func("/kvm/slot-plan/64k-host-pages",
                    test_large_host_pages);
    g_test_add_func("/kvm/slot-plan/empty-and-wrapping-refused",
                    test_degenerate);
    return g_test_run();
}
