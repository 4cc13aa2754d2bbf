/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The BAR mechanism (hw/vfio/bar.c) with a fake backend and a memfd as
 * device memory: which accesses are forwarded, which are served by
 * load/store on the mapping (trapped but mapped), and which land on a
 * RAM-device region and are never counted -- the trap rule that makes
 * qtest see what KVM would.  It links hw/vfio/bar.c and bar-plan.c with
 * the memory API only (region info parsing is in qemuutil): the BAR needs
 * nothing of the PCI device model but the two hooks it calls.
 */
#include "qemu/osdep.h"
#include <sys/mman.h>
#include "qapi/error.h"
#include "system/memory.h"
#include "hw/vfio/bar.h"

#define KiB 1024ULL
/*
 * The rig mmaps for real, so its geometry is the 4 KiB-page layout the
 * cases describe scaled by the host's page size (x16 on a 64 KiB ppc64le
 * host under make check-ppc64le): O(0x1000) is the second host page.
 */
static uint64_t page_scale = 1;
#define O(x) ((uint64_t)(x) * page_scale)
#define BAR_SIZE O(16 * KiB)
#define RW_MMAP (VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | \
                 VFIO_REGION_INFO_FLAG_MMAP)

typedef struct Fake {
    unsigned reads, writes;
    uint64_t last_off;
    uint32_t last_val;
    bool fail;                  /* the backend refuses every access */
    unsigned access_done;       /* VFIOBarHooks calls */
    unsigned backend_failed;
} Fake;

static Fake fake;

static bool fake_read(VFIODevice *vbasedev, uint32_t index, uint64_t off,
                      uint32_t size, void *buf, Error **errp)
{
    fake.reads++;
    fake.last_off = off;
    if (fake.fail) {
        error_setg(errp, "fake read failed");
        return false;
    }
    memset(buf, 0x5a, size);
    return true;
}

static bool fake_write(VFIODevice *vbasedev, uint32_t index, uint64_t off,
                       uint32_t size, const void *buf, bool post,
                       Error **errp)
{
    fake.writes++;
    fake.last_off = off;
    fake.last_val = ldn_le_p(buf, size);
    if (fake.fail) {
        error_setg(errp, "fake write failed");
        return false;
    }
    return true;
}

static const VFIODeviceIOOps fake_ops = {
    .region_read = fake_read,
    .region_write = fake_write,
};

/* A backend like vfio-user's, whose region writes may be posted. */
static const VFIODeviceIOOps fake_posting_ops = {
    .region_read = fake_read,
    .region_write = fake_write,
    .posts_writes = true,
};

/* The x-coalesce-trapped-writes inputs of the next rig (zero: auto, 0 CPUs). */
static VFIOCoalesceMode rig_coalesce;
static long rig_online_cpus;
static bool rig_posting;

static void hook_access_done(void *opaque)
{
    g_assert_true(opaque == &fake);
    fake.access_done++;
}

static void hook_backend_failed(void *opaque)
{
    g_assert_true(opaque == &fake);
    fake.backend_failed++;
}

static const VFIOBarHooks hooks = {
    .access_done = hook_access_done,
    .backend_failed = hook_backend_failed,
};

typedef struct Rig {
    VFIODevice vbasedev;
    VFIOBar *bar;
    AddressSpace as;
    uint8_t *shadow;            /* our own view of the device memory */
    int fd;
} Rig;

/*
 * @flags: the region's VFIO_REGION_INFO_FLAG_*; @ro_fd: the BAR is
 * mmapped through a read-only fd, as the kernel gives for a region
 * without VFIO_REGION_INFO_FLAG_WRITE.
 */
static void rig_start_flags(Rig *r, bool cap, uint64_t page,
                            uint64_t table_off, uint64_t pba_off,
                            bool pba_on, uint32_t flags, bool ro_fd)
{
    VFIOBarPlanInput in = {
        .host_page_size = O(4096),
        .page_size_override = page == O(4096) ? 0 : page,
        .msix_mappable = VFIO_MSIX_MAPPABLE_AUTO,
        .table = { true, table_off, 0x100, true },
        .pba = { pba_off != 0, pba_off, 8, pba_on },
        .lazy_pba = true,
        .coalesce = rig_coalesce,
        .online_cpus = rig_online_cpus,
    };

    memset(&fake, 0, sizeof(fake));
    memset(r, 0, sizeof(*r));
    r->vbasedev.name = g_strdup("fake");
    r->vbasedev.ops = rig_posting ? &fake_posting_ops : &fake_ops;
    r->vbasedev.fd = -1;
    r->bar = g_new0(VFIOBar, 1);
    vfio_bar_init(r->bar, NULL, &r->vbasedev, 0, &hooks, &fake);
    /* What vfio_bar_get_info() would have read from the region info. */
    r->bar->caps = (VFIORegionCaps) { .msix_mappable = cap };
    r->bar->region.size = BAR_SIZE;
    r->bar->region.flags = flags;
    r->bar->bar_size = BAR_SIZE;
    r->fd = memfd_create("fake-bar", 0);
    g_assert_cmpint(r->fd, >=, 0);
    g_assert_cmpint(ftruncate(r->fd, BAR_SIZE), ==, 0);
    r->shadow = mmap(NULL, BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
                     r->fd, 0);
    g_assert_true(r->shadow != MAP_FAILED);
    if (ro_fd) {
        g_autofree char *path = g_strdup_printf("/proc/self/fd/%d", r->fd);

        r->bar->region.mmap_fd = open(path, O_RDONLY);
    } else {
        r->bar->region.mmap_fd = dup(r->fd);
    }
    g_assert_cmpint(r->bar->region.mmap_fd, >=, 0);
    g_assert_true(vfio_bar_realize(r->bar, &in, &error_abort));
    address_space_init(&r->as, &r->bar->container, "fake-bar");
}

static void rig_start(Rig *r, bool cap, uint64_t page, uint64_t table_off,
                      uint64_t pba_off, bool pba_on)
{
    rig_start_flags(r, cap, page, table_off, pba_off, pba_on, RW_MMAP, false);
}

static void rig_stop(Rig *r)
{
    address_space_destroy(&r->as);
    vfio_bar_teardown(r->bar);
    g_free(r->bar);
    munmap(r->shadow, BAR_SIZE);
    close(r->fd);
    g_free(r->vbasedev.name);
}

static void counts(Rig *r, uint64_t *fr, uint64_t *fw, uint64_t *sr,
                   uint64_t *sw)
{
    vfio_bar_get_counts(r->bar, fr, fw, sr, sw);
}

/* 4 KiB pages, capability: page O(0x1000) under the table is served. */
static void test_table_page_served(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start(&r, true, O(4096), O(0x1800), 0, false);
    address_space_stl_le(&r.as, O(0x1000) + 4, 0xabcd, NULL);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000) + 4), ==, 0xabcd);
    r.shadow[O(0x1000) + 8] = 0x77;
    g_assert_cmphex(address_space_ldub(&r.as, O(0x1000) + 8, NULL), ==, 0x77);
    /* An untrapped mapped page: RAM-device, never counted. */
    address_space_stl_le(&r.as, O(0x2000), 0x1234, NULL);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x2000)), ==, 0x1234);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(sw, ==, 1);
    g_assert_cmpuint(sr, ==, 1);
    g_assert_cmpuint(fw + fr, ==, 0);
    g_assert_cmpuint(fake.writes + fake.reads, ==, 0);
    rig_stop(&r);
}

/* Without the capability the table page is forwarded to the backend. */
static void test_table_page_forwarded(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start(&r, false, O(4096), O(0x1800), 0, false);
    address_space_stl_le(&r.as, O(0x1000) + 4, 0xabcd, NULL);
    g_assert_cmpuint(fake.writes, ==, 1);
    g_assert_cmphex(fake.last_off, ==, O(0x1000) + 4);
    g_assert_cmphex(fake.last_val, ==, 0xabcd);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000) + 4), ==, 0);
    g_assert_cmphex(address_space_ldl_le(&r.as, O(0x2000) - 4, NULL), ==,
                    0x5a5a5a5a);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(fw, ==, 1);
    g_assert_cmpuint(fr, ==, 1);
    g_assert_cmpuint(sw + sr, ==, 0);
    rig_stop(&r);
}

/*
 * The 64 KiB-page case with a whole-BAR mappable region (no sparse
 * areas, as the kernel offers): mapped, but its one page is trapped by
 * the table overlay, so every access is served from the mapping.
 */
static void test_64k_page_whole_bar_served(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start(&r, true, O(64 * KiB), O(0x3000), 0, false);
    g_assert_true(r.bar->plan->whole_bar_mapped);
    g_assert_cmpuint(r.bar->plan->nr_trapped, ==, 1);
    address_space_stl_le(&r.as, 0x0, 1, NULL);
    address_space_stl_le(&r.as, O(0x1000), 2, NULL);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000)), ==, 2);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(sw, ==, 2);
    g_assert_cmpuint(fw, ==, 0);
    rig_stop(&r);
}

/* Lazy PBA: the page turns trapped and back as the overlay toggles. */
static void test_pba_view_switch(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start(&r, true, O(4096), O(0x3000), O(0x1c00), false);
    g_assert_false(vfio_bar_plan_is_trapped(r.bar->plan, O(0x1000)));
    address_space_stl_le(&r.as, O(0x1000), 1, NULL);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(sw, ==, 0);

    vfio_bar_set_pba_view(r.bar, true);
    g_assert_true(vfio_bar_plan_is_trapped(r.bar->plan, O(0x1000)));
    address_space_stl_le(&r.as, O(0x1000), 2, NULL);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000)), ==, 2);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(sw, ==, 1);

    vfio_bar_set_pba_view(r.bar, false);
    g_assert_false(vfio_bar_plan_is_trapped(r.bar->plan, O(0x1000)));
    address_space_stl_le(&r.as, O(0x1000), 3, NULL);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000)), ==, 3);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(sw, ==, 1);
    g_assert_cmpuint(fw, ==, 0);
    rig_stop(&r);
}

/* Hidden mappings (INTx pending, broken): everything is forwarded. */
static void test_hidden_mappings_forward(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start(&r, true, O(4096), O(0x1800), 0, false);
    vfio_bar_set_mappings_hidden(r.bar, true);
    address_space_stl_le(&r.as, O(0x2000), 9, NULL);
    g_assert_cmpuint(fake.writes, ==, 1);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x2000)), ==, 0);
    vfio_bar_set_mappings_hidden(r.bar, false);
    address_space_stl_le(&r.as, O(0x2000), 9, NULL);
    g_assert_cmpuint(fake.writes, ==, 1);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x2000)), ==, 9);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(fw, ==, 1);
    rig_stop(&r);
}

/* Every access that reaches the device through a trap is announced. */
static void test_hooks_access_done(void)
{
    Rig r;

    rig_start(&r, false, O(4096), O(0x1800), 0, false);
    address_space_stl_le(&r.as, O(0x1000) + 4, 1, NULL);      /* forwarded */
    g_assert_cmpuint(address_space_ldl_le(&r.as, O(0x1000), NULL), ==,
                     0x5a5a5a5a);
    g_assert_cmpuint(fake.access_done, ==, 2);
    address_space_stl_le(&r.as, O(0x2000), 1, NULL);      /* RAM-device */
    g_assert_cmpuint(fake.access_done, ==, 2);
    g_assert_cmpuint(fake.backend_failed, ==, 0);
    rig_stop(&r);

    rig_start(&r, true, O(4096), O(0x1800), 0, false);
    address_space_stl_le(&r.as, O(0x1000) + 4, 1, NULL);      /* mmap-served */
    g_assert_cmpuint(fake.access_done, ==, 1);
    rig_stop(&r);
}

/* A failing backend is reported through the hook; reads give all-ones. */
static void test_hooks_backend_failed(void)
{
    Rig r;

    rig_start(&r, false, O(4096), O(0x1800), 0, false);
    fake.fail = true;
    g_assert_cmphex(address_space_ldl_le(&r.as, O(0x1000), NULL), ==,
                    0xffffffff);
    address_space_stl_le(&r.as, O(0x1000) + 4, 1, NULL);
    g_assert_cmpuint(fake.backend_failed, ==, 2);
    g_assert_cmpuint(fake.access_done, ==, 0);
    /* A broken device is not asked at all. */
    r.vbasedev.broken = true;
    g_assert_cmphex(address_space_ldl_le(&r.as, O(0x1000), NULL), ==,
                    0xffffffff);
    g_assert_cmpuint(fake.reads, ==, 1);
    rig_stop(&r);
}

/*
 * A region without VFIO_REGION_INFO_FLAG_WRITE is mapped PROT_READ (the
 * kernel's fd refuses PROT_WRITE); guest writes to it are dropped.
 */
static void test_readonly_region(void)
{
    Rig r;
    uint64_t fr, fw, sr, sw;

    rig_start_flags(&r, true, O(4096), O(0x1800), 0, false,
                    VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_MMAP,
                    true);
    g_assert_cmpuint(r.bar->nr_mmaps, ==, 1);
    r.shadow[O(0x2000)] = 0x42;
    r.shadow[O(0x1000) + 8] = 0x43;
    g_assert_cmphex(address_space_ldub(&r.as, O(0x2000), NULL), ==, 0x42);
    g_assert_cmphex(address_space_ldub(&r.as, O(0x1000) + 8, NULL), ==, 0x43);
    /* RAM-device page and mmap-served (table) page: both dropped. */
    address_space_stl_le(&r.as, O(0x2000), 0x1234, NULL);
    address_space_stl_le(&r.as, O(0x1000) + 4, 0x1234, NULL);
    g_assert_cmphex(r.shadow[O(0x2000)], ==, 0x42);
    g_assert_cmphex(ldl_le_p(r.shadow + O(0x1000) + 4), ==, 0);
    counts(&r, &fr, &fw, &sr, &sw);
    g_assert_cmpuint(fw + fake.writes, ==, 0);
    rig_stop(&r);
}

/*
 * Every mapping is aligned like the BAR's physical address would be:
 * congruent to its offset modulo min(region size, 1 GiB), so the kernel
 * may back it with huge pages.
 */
static void test_mmap_alignment(void)
{
    Rig r;
    uint64_t align = vfio_bar_plan_mmap_align(BAR_SIZE, O(4096));
    uint32_t i;

    g_assert_cmpuint(align, ==, BAR_SIZE);
    /* No capability: two areas around the table page. */
    rig_start(&r, false, O(4096), O(0x1800), 0, false);
    g_assert_cmpuint(r.bar->nr_mmaps, ==, 2);
    for (i = 0; i < r.bar->nr_mmaps; i++) {
        VFIOMmap *m = &r.bar->mmaps[i];

        g_assert_cmpuint(((uintptr_t)m->mmap - m->offset) % align, ==, 0);
    }
    /* The mapping is the device memory at that offset. */
    r.shadow[O(0x2000) + 4] = 0x99;
    g_assert_cmphex(((uint8_t *)r.bar->mmaps[1].mmap)[4], ==, 0x99);
    rig_stop(&r);
}

/* ---- x-coalesce-trapped-writes ---------------------------------------- */

static GString *zones;

static void zone_add(MemoryListener *l, MemoryRegionSection *s, hwaddr addr,
                     hwaddr len)
{
    g_string_append_printf(zones, "%s0x%" PRIx64 "+0x%" PRIx64,
                           zones->len ? " " : "", addr / page_scale,
                           len / page_scale);
}

/*
 * The ranges of the BAR that KVM would be told to coalesce (as a
 * listener of the BAR's address space sees them, in 4 KiB-page units)
 * for a table on page 0x1000 and the given inputs: with the capability
 * that page is trapped but mapped (served), without it unmapped
 * (forwarded to the backend).
 */
static char *coalesced_zones(bool cap, VFIOCoalesceMode mode, long cpus,
                             bool posting)
{
    MemoryListener l = { .coalesced_io_add = zone_add, .name = "kvm-like" };
    Rig r;

    rig_coalesce = mode;
    rig_online_cpus = cpus;
    rig_posting = posting;
    rig_start(&r, cap, O(4096), O(0x1800), 0, false);
    rig_coalesce = VFIO_COALESCE_AUTO;
    rig_online_cpus = 0;
    rig_posting = false;
    zones = g_string_new(NULL);
    memory_listener_register(&l, &r.as);
    memory_listener_unregister(&l);
    rig_stop(&r);
    return g_string_free(g_steal_pointer(&zones), false);
}

#define assert_zones(expect, ...) do {                                  \
        g_autofree char *got_ = coalesced_zones(__VA_ARGS__);          \
        g_assert_cmpstr(got_, ==, expect);                              \
    } while (0)

/*
 * auto coalesces only on a host with cores for the vCPU, the server's
 * poller and the drainer; on and off decide alone.  Only the trapped
 * page is ever a zone: the mapped pages never exit anyway.
 */
static void test_coalesce_served_page(void)
{
    assert_zones("", true, VFIO_COALESCE_AUTO, 1, false);
    assert_zones("", true, VFIO_COALESCE_AUTO,
                 VFIO_BAR_PLAN_COALESCE_MIN_CPUS - 1, false);
    assert_zones("0x1000+0x1000", true, VFIO_COALESCE_AUTO,
                 VFIO_BAR_PLAN_COALESCE_MIN_CPUS, false);
    assert_zones("0x1000+0x1000", true, VFIO_COALESCE_AUTO, 64, false);
    assert_zones("0x1000+0x1000", true, VFIO_COALESCE_ON, 1, false);
    assert_zones("", true, VFIO_COALESCE_OFF, 64, false);
}

/*
 * An unmapped page is a zone only when the backend can post its writes
 * (vfio-user's REGION_WRITE); the kernel backend's pwrite gains nothing.
 */
static void test_coalesce_forwarded_page(void)
{
    assert_zones("", false, VFIO_COALESCE_ON, 64, false);
    assert_zones("0x1000+0x1000", false, VFIO_COALESCE_ON, 1, true);
    assert_zones("0x1000+0x1000", false, VFIO_COALESCE_AUTO, 64, true);
    assert_zones("", false, VFIO_COALESCE_AUTO, 2, true);
    assert_zones("", false, VFIO_COALESCE_OFF, 64, true);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    page_scale = MAX(getpagesize(), 4096) / 4096;
    g_test_add_func("/vfio/bar/table-page-mmap-served",
                    test_table_page_served);
    g_test_add_func("/vfio/bar/table-page-forwarded-without-cap",
                    test_table_page_forwarded);
    g_test_add_func("/vfio/bar/64k-page-whole-bar-served",
                    test_64k_page_whole_bar_served);
    g_test_add_func("/vfio/bar/lazy-pba-view-switch", test_pba_view_switch);
    g_test_add_func("/vfio/bar/hidden-mappings-forward",
                    test_hidden_mappings_forward);
    g_test_add_func("/vfio/bar/hooks/access-done", test_hooks_access_done);
    g_test_add_func("/vfio/bar/mmap/read-only-region", test_readonly_region);
    g_test_add_func("/vfio/bar/mmap/huge-page-alignment",
                    test_mmap_alignment);
    g_test_add_func("/vfio/bar/hooks/backend-failed",
                    test_hooks_backend_failed);
    g_test_add_func("/vfio/bar/coalesce/served-page-needs-cores",
                    test_coalesce_served_page);
    g_test_add_func("/vfio/bar/coalesce/forwarded-page-needs-posting",
                    test_coalesce_forwarded_page);
    return g_test_run();
}
