/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Trust boundaries in the memory API: the per-device re-entrancy guard
 * (a device's own DMA or MSI aimed at its own registers) and DMA that may
 * only reach guest RAM (address_space_dma_rw_ram).
 */
#include "qemu/osdep.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qom/object.h"

#define DEV_A_BASE 0x1000
#define DEV_A2_BASE 0x2000
#define DEV_B_BASE 0x3000
#define RAM_BASE 0x10000
#define RAM_SIZE 0x2000
#define ROM_BASE 0x20000

/*
 * A device whose register 0 forwards every write to @target (its "DMA" or
 * "MSI"), and whose register 8 reads from @target.
 */
typedef struct FwdDev {
    MemoryRegion mr;
    AddressSpace *as;
    hwaddr target;
    unsigned writes;
    unsigned reads;
    MemTxResult last_result;
    uint32_t last_read;
} FwdDev;

static uint64_t fwd_read(void *opaque, hwaddr addr, unsigned size)
{
    FwdDev *d = opaque;

    d->reads++;
    if (addr == 8) {
        d->last_read = address_space_ldl_le(d->as, d->target,
                                            &d->last_result);
        return d->last_read;
    }
    return 0x1234;
}

static void fwd_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    FwdDev *d = opaque;

    d->writes++;
    if (addr == 0) {
        d->last_result = MEMTX_OK;
        address_space_stl_le(d->as, d->target, data, &d->last_result);
    }
}

static const MemoryRegionOps fwd_ops = {
    .read = fwd_read,
    .write = fwd_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
};

typedef struct Fixture {
    MemoryRegion root, ram, rom, io_ram_dev;
    uint8_t ram_dev_mem[0x1000];
    AddressSpace as;
    Object *owner_a, *owner_b;
    FwdDev a, a2, b;
} Fixture;

static void fwd_init(Fixture *f, FwdDev *d, Object *owner, const char *name,
                     hwaddr base)
{
    memset(d, 0, sizeof(*d));
    d->as = &f->as;
    memory_region_init_io(&d->mr, owner, &fwd_ops, d, name, 0x100);
    memory_region_add_subregion(&f->root, base, &d->mr);
}

static void fixture_init(Fixture *f)
{
    memset(f, 0, sizeof(*f));
    f->owner_a = object_new(TYPE_CONTAINER);
    f->owner_b = object_new(TYPE_CONTAINER);
    memory_region_init(&f->root, NULL, "root", 0x100000);
    address_space_init(&f->as, &f->root, "guard-test");
    /* a and a2 are two regions of one device; b is another device. */
    fwd_init(f, &f->a, f->owner_a, "dev-a", DEV_A_BASE);
    fwd_init(f, &f->a2, f->owner_a, "dev-a-bar2", DEV_A2_BASE);
    fwd_init(f, &f->b, f->owner_b, "dev-b", DEV_B_BASE);
    memory_region_init_ram(&f->ram, NULL, "ram", RAM_SIZE, &error_abort);
    memory_region_add_subregion(&f->root, RAM_BASE, &f->ram);
    memory_region_init_ram(&f->rom, NULL, "rom", 0x1000, &error_abort);
    memory_region_set_readonly(&f->rom, true);
    memory_region_add_subregion(&f->root, ROM_BASE, &f->rom);
    memory_region_init_ram_device_ptr(&f->io_ram_dev, NULL, "bar-mmap",
                                      sizeof(f->ram_dev_mem), f->ram_dev_mem);
    memory_region_add_subregion(&f->root, RAM_BASE + RAM_SIZE,
                                &f->io_ram_dev);
}

static void fixture_finalize(Fixture *f)
{
    address_space_destroy(&f->as);
    memory_region_finalize(&f->a.mr);
    memory_region_finalize(&f->a2.mr);
    memory_region_finalize(&f->b.mr);
    memory_region_finalize(&f->ram);
    memory_region_finalize(&f->rom);
    memory_region_finalize(&f->io_ram_dev);
    memory_region_finalize(&f->root);
    object_unref(f->owner_a);
    object_unref(f->owner_b);
}

/* Without the guard this recursion overflows the stack. */
static void test_guard_self_write(void)
{
    Fixture f;
    unsigned long errors = qemu_guest_error_count();
    MemTxResult r = MEMTX_OK;

    fixture_init(&f);
    f.a.target = DEV_A_BASE;
    address_space_stl_le(&f.as, DEV_A_BASE, 0x55, &r);
    g_assert_cmpint(r, ==, MEMTX_OK);
    g_assert_cmpuint(f.a.writes, ==, 1);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_ERROR);
    g_assert_cmpuint(qemu_guest_error_count(), ==, errors + 1);

    /* The guard was released: the next access works again. */
    f.a.target = RAM_BASE;
    address_space_stl_le(&f.as, DEV_A_BASE, 0x66, &r);
    g_assert_cmpuint(f.a.writes, ==, 2);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_OK);
    g_assert_cmphex(address_space_ldl_le(&f.as, RAM_BASE, NULL), ==, 0x66);
    fixture_finalize(&f);
}

/* Another region of the same device (e.g. its MSI-X table) is guarded. */
static void test_guard_same_owner(void)
{
    Fixture f;

    fixture_init(&f);
    f.a.target = DEV_A2_BASE + 4;
    address_space_stl_le(&f.as, DEV_A_BASE, 1, NULL);
    g_assert_cmpuint(f.a.writes, ==, 1);
    g_assert_cmpuint(f.a2.writes, ==, 0);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_ERROR);
    fixture_finalize(&f);
}

/* A -> B is fine; A -> B -> A is cut at the second A. */
static void test_guard_chain(void)
{
    Fixture f;

    fixture_init(&f);
    f.a.target = DEV_B_BASE + 4;
    address_space_stl_le(&f.as, DEV_A_BASE, 1, NULL);
    g_assert_cmpuint(f.b.writes, ==, 1);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_OK);

    f.a.target = DEV_B_BASE;
    f.b.target = DEV_A_BASE;
    address_space_stl_le(&f.as, DEV_A_BASE, 2, NULL);
    g_assert_cmpuint(f.a.writes, ==, 2);
    g_assert_cmpuint(f.b.writes, ==, 2);
    g_assert_cmpint(f.b.last_result, ==, MEMTX_ERROR);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_OK);
    fixture_finalize(&f);
}

/* A re-entrant read returns all ones; a direct dispatch is guarded too. */
static void test_guard_read(void)
{
    Fixture f;
    uint64_t v = 0;

    fixture_init(&f);
    f.a.target = DEV_A_BASE + 4;
    g_assert_cmphex(address_space_ldl_le(&f.as, DEV_A_BASE + 8, NULL), ==,
                    0xffffffff);
    g_assert_cmpuint(f.a.reads, ==, 1);
    g_assert_cmpint(f.a.last_result, ==, MEMTX_ERROR);

    f.a.target = DEV_A_BASE + 4;
    g_assert_cmpint(memory_region_dispatch_read(&f.a.mr, 8, &v, 4), ==,
                    MEMTX_OK);
    g_assert_cmphex(v, ==, 0xffffffff);
    g_assert_cmpuint(f.a.reads, ==, 2);
    fixture_finalize(&f);
}

/* ---- DMA may reach guest RAM only ------------------------------------- */

static void test_dma_ram_ok(void)
{
    Fixture f;
    uint8_t buf[16], back[16];

    fixture_init(&f);
    for (unsigned i = 0; i < sizeof(buf); i++) {
        buf[i] = i + 1;
    }
    g_assert_true(address_space_dma_rw_ram(&f.as, RAM_BASE + 8, buf,
                                           sizeof(buf), true, "test",
                                           &error_abort));
    g_assert_true(address_space_dma_rw_ram(&f.as, RAM_BASE + 8, back,
                                           sizeof(back), false, "test",
                                           &error_abort));
    g_assert_cmpmem(buf, sizeof(buf), back, sizeof(back));
    /* Reading ROM is fine; zero length is a no-op. */
    g_assert_true(address_space_dma_rw_ram(&f.as, ROM_BASE, back, 4, false,
                                           "test", &error_abort));
    g_assert_true(address_space_dma_rw_ram(&f.as, DEV_A_BASE, back, 0, true,
                                           "test", &error_abort));
    fixture_finalize(&f);
}

static void assert_dma_refused(Fixture *f, hwaddr addr, hwaddr len,
                               bool is_write, const char *what)
{
    g_autofree uint8_t *buf = g_malloc0(len);
    unsigned long errors = qemu_guest_error_count();
    Error *err = NULL;

    g_assert_false(address_space_dma_rw_ram(&f->as, addr, buf, len, is_write,
                                            "peer", &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), "peer: DMA"));
    g_assert_nonnull(strstr(error_get_pretty(err), what));
    error_free(err);
    g_assert_cmpuint(qemu_guest_error_count(), ==, errors + 1);
}

static void test_dma_refuses_non_ram(void)
{
    Fixture f;

    fixture_init(&f);
    f.a.target = DEV_A_BASE;
    assert_dma_refused(&f, DEV_A_BASE, 4, true, "MMIO");
    assert_dma_refused(&f, DEV_A_BASE, 4, false, "MMIO");
    g_assert_cmpuint(f.a.writes + f.a.reads, ==, 0);
    assert_dma_refused(&f, 0x80000, 4, false, "nothing is there");
    assert_dma_refused(&f, ROM_BASE, 4, true, "read-only");
    assert_dma_refused(&f, RAM_BASE + RAM_SIZE, 4, false, "device memory");
    assert_dma_refused(&f, UINT64_MAX - 1, 4, false, "wraps");
    fixture_finalize(&f);
}

/* A range that is RAM at first and MMIO later moves no byte at all. */
static void test_dma_all_or_nothing(void)
{
    Fixture f;
    uint8_t buf[32];
    uint8_t *ram;

    fixture_init(&f);
    ram = memory_region_get_ram_ptr(&f.ram);
    memset(buf, 0xab, sizeof(buf));
    assert_dma_refused(&f, RAM_BASE + RAM_SIZE - 16, 0x1000 + 32, true,
                       "device memory");
    for (unsigned i = RAM_SIZE - 16; i < RAM_SIZE; i++) {
        g_assert_cmpuint(ram[i], ==, 0);
    }
    /* Across two RAM pieces of one region: fine. */
    g_assert_true(address_space_dma_rw_ram(&f.as, RAM_BASE + 0xff0, buf,
                                           sizeof(buf), true, "test",
                                           &error_abort));
    g_assert_cmpuint(ram[0x1000], ==, 0xab);
    fixture_finalize(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/memory/guard/self-write", test_guard_self_write);
    g_test_add_func("/memory/guard/same-owner", test_guard_same_owner);
    g_test_add_func("/memory/guard/chain", test_guard_chain);
    g_test_add_func("/memory/guard/read", test_guard_read);
    g_test_add_func("/memory/dma-ram/ram-ok", test_dma_ram_ok);
    g_test_add_func("/memory/dma-ram/refuses-non-ram",
                    test_dma_refuses_non_ram);
    g_test_add_func("/memory/dma-ram/all-or-nothing",
                    test_dma_all_or_nothing);
    return g_test_run();
}
