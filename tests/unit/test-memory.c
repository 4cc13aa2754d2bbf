/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory API: rendering, listener diffs, dispatch and RAM backing.
 */
#include "qemu/osdep.h"
#include <ucontext.h>
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/error-report.h"

/* ---- A register-file device that logs every callback ------------------ */

typedef struct DevCall {
    bool write;
    hwaddr addr;
    unsigned size;
    uint64_t data;
} DevCall;

typedef struct TestDev {
    MemoryRegion mr;
    uint8_t regs[64];
    bool big_endian;
    bool reject;            /* accepts() answer inverted */
    DevCall calls[64];
    unsigned nr_calls;
} TestDev;

static uint64_t test_ld(const uint8_t *p, unsigned size, bool be)
{
    uint64_t v = 0;
    unsigned i;

    for (i = 0; i < size; i++) {
        v = (v << 8) | p[be ? i : size - 1 - i];
    }
    return v;
}

static void test_st(uint8_t *p, unsigned size, bool be, uint64_t v)
{
    unsigned i;

    for (i = 0; i < size; i++) {
        p[be ? size - 1 - i : i] = v;
        v >>= 8;
    }
}

static void dev_log(TestDev *d, bool write, hwaddr addr, unsigned size,
                    uint64_t data)
{
    g_assert_cmpuint(d->nr_calls, <, G_N_ELEMENTS(d->calls));
    d->calls[d->nr_calls++] = (DevCall){ write, addr, size, data };
}

static uint64_t dev_read(void *opaque, hwaddr addr, unsigned size)
{
    TestDev *d = opaque;
    uint64_t v;

    g_assert_cmpuint(addr + size, <=, sizeof(d->regs));
    v = test_ld(d->regs + addr, size, d->big_endian);
    dev_log(d, false, addr, size, v);
    return v;
}

static void dev_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    TestDev *d = opaque;

    g_assert_cmpuint(addr + size, <=, sizeof(d->regs));
    dev_log(d, true, addr, size, data);
    test_st(d->regs + addr, size, d->big_endian, data);
}

static bool dev_accepts(void *opaque, hwaddr addr, unsigned size,
                        bool is_write)
{
    TestDev *d = opaque;

    return !d->reject;
}

static const MemoryRegionOps ops_1_4 = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static const MemoryRegionOps ops_default = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
};

static const MemoryRegionOps ops_valid8_impl4 = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    .impl = { .min_access_size = 1, .max_access_size = 4 },
};

static const MemoryRegionOps ops_impl_min4 = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static const MemoryRegionOps ops_valid_min4 = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4,
               .accepts = dev_accepts },
};

static const MemoryRegionOps ops_unaligned = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4, .unaligned = true },
    .impl = { .unaligned = true },
};

/* Guests may be unaligned, the callbacks only see aligned accesses. */
static const MemoryRegionOps ops_valid_unaligned = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4, .unaligned = true },
};

static const MemoryRegionOps ops_valid_unaligned_impl4 = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4, .unaligned = true },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static const MemoryRegionOps ops_be = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_BIG_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static const MemoryRegionOps ops_native = {
    .read = dev_read,
    .write = dev_write,
    .endianness = DEVICE_NATIVE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static const MemoryRegionOps ops_read_only_cb = {
    .read = dev_read,
    .endianness = DEVICE_LITTLE_ENDIAN,
};

static void dev_init(TestDev *d, const MemoryRegionOps *ops, const char *name,
                     uint64_t size)
{
    unsigned i;

    memset(d, 0, sizeof(*d));
    for (i = 0; i < sizeof(d->regs); i++) {
        d->regs[i] = 0x10 + i;
    }
    d->big_endian = ops->endianness == DEVICE_BIG_ENDIAN;
    memory_region_init_io(&d->mr, NULL, ops, d, name, size);
}

static void assert_call(const TestDev *d, unsigned i, bool write, hwaddr addr,
                        unsigned size, uint64_t data)
{
    g_assert_cmpuint(i, <, d->nr_calls);
    g_assert_cmpint(d->calls[i].write, ==, write);
    g_assert_cmphex(d->calls[i].addr, ==, addr);
    g_assert_cmpuint(d->calls[i].size, ==, size);
    g_assert_cmphex(d->calls[i].data, ==, data);
}

/* ---- View helpers ----------------------------------------------------- */

static void assert_range(AddressSpace *as, unsigned i, hwaddr addr,
                         uint64_t size, MemoryRegion *mr, hwaddr offset)
{
    FlatView *fv = address_space_get_flatview(as);
    const FlatRange *fr = flatview_get_range(fv, i);

    g_assert_nonnull(fr);
    g_assert_cmphex(fr->addr, ==, addr);
    g_assert_cmphex(fr->size, ==, size);
    g_assert_cmpstr(memory_region_name(fr->mr), ==, memory_region_name(mr));
    g_assert_true(fr->mr == mr);
    g_assert_cmphex(fr->offset_in_region, ==, offset);
}

static unsigned nr_ranges(AddressSpace *as)
{
    return flatview_nr_ranges(address_space_get_flatview(as));
}

/* ---- A listener that records what it is told -------------------------- */

typedef struct ListenerEvent {
    char kind;              /* a(dd) d(el) n(op) b(egin) c(ommit) */
    const char *listener;
    MemoryRegion *mr;
    hwaddr addr;
    uint64_t size;
    hwaddr offset;
    bool readonly;
} ListenerEvent;

typedef struct Recorder {
    MemoryListener listener;
    GArray *events;         /* shared between recorders to check order */
} Recorder;

static void rec_push(MemoryListener *l, char kind, MemoryRegionSection *s)
{
    Recorder *r = container_of(l, Recorder, listener);
    ListenerEvent e = { .kind = kind, .listener = l->name };

    if (s) {
        g_assert_true(s->address_space == l->address_space);
        e.mr = s->mr;
        e.addr = s->offset_within_address_space;
        e.size = s->size;
        e.offset = s->offset_within_region;
        e.readonly = s->readonly;
    }
    g_array_append_val(r->events, e);
}

static void rec_begin(MemoryListener *l)
{
    rec_push(l, 'b', NULL);
}

static void rec_commit(MemoryListener *l)
{
    rec_push(l, 'c', NULL);
}

static void rec_add(MemoryListener *l, MemoryRegionSection *s)
{
    rec_push(l, 'a', s);
}

static void rec_del(MemoryListener *l, MemoryRegionSection *s)
{
    rec_push(l, 'd', s);
}

static void rec_init(Recorder *r, const char *name, unsigned priority,
                     GArray *events)
{
    memset(r, 0, sizeof(*r));
    r->listener.begin = rec_begin;
    r->listener.commit = rec_commit;
    r->listener.region_add = rec_add;
    r->listener.region_del = rec_del;
    r->listener.priority = priority;
    r->listener.name = name;
    r->events = events;
}

/* Only adds and deletes, in order. */
static GArray *rec_changes(GArray *events)
{
    GArray *out = g_array_new(false, false, sizeof(ListenerEvent));
    unsigned i;

    for (i = 0; i < events->len; i++) {
        ListenerEvent *e = &g_array_index(events, ListenerEvent, i);
        if (e->kind == 'a' || e->kind == 'd') {
            g_array_append_val(out, *e);
        }
    }
    return out;
}

static void assert_event(GArray *changes, unsigned i, char kind,
                         MemoryRegion *mr, hwaddr addr, uint64_t size,
                         hwaddr offset)
{
    ListenerEvent *e;

    g_assert_cmpuint(i, <, changes->len);
    e = &g_array_index(changes, ListenerEvent, i);
    g_assert_cmpint(e->kind, ==, kind);
    g_assert_cmpstr(memory_region_name(e->mr), ==, memory_region_name(mr));
    g_assert_cmphex(e->addr, ==, addr);
    g_assert_cmphex(e->size, ==, size);
    g_assert_cmphex(e->offset, ==, offset);
}

/* ---- Rendering -------------------------------------------------------- */

static void test_overlay_priority(void)
{
    MemoryRegion root, ram, low, tie1, tie2;
    TestDev high;
    AddressSpace as;

    memory_region_init(&root, NULL, "root", 0x10000);
    memory_region_init_ram(&ram, NULL, "ram", 0x4000, &error_abort);
    dev_init(&high, &ops_1_4, "high", 0x1000);
    memory_region_init_ram(&low, NULL, "low", 0x1000, &error_abort);
    address_space_init(&as, &root, "test");

    memory_region_add_subregion(&root, 0, &ram);
    memory_region_add_subregion_overlap(&root, 0x1000, &high.mr, 1);
    /* Below ram: must stay invisible. */
    memory_region_add_subregion_overlap(&root, 0x2000, &low, -1);

    g_assert_cmpuint(nr_ranges(&as), ==, 3);
    assert_range(&as, 0, 0x0, 0x1000, &ram, 0x0);
    assert_range(&as, 1, 0x1000, 0x1000, &high.mr, 0x0);
    assert_range(&as, 2, 0x2000, 0x2000, &ram, 0x2000);

    /* Equal priority: the one added later wins. */
    memory_region_init_ram(&tie1, NULL, "tie1", 0x100, &error_abort);
    memory_region_init_ram(&tie2, NULL, "tie2", 0x100, &error_abort);
    memory_region_add_subregion_overlap(&root, 0x8000, &tie1, 5);
    memory_region_add_subregion_overlap(&root, 0x8080, &tie2, 5);
    g_assert_cmpuint(nr_ranges(&as), ==, 5);
    assert_range(&as, 3, 0x8000, 0x80, &tie1, 0x0);
    assert_range(&as, 4, 0x8080, 0x100, &tie2, 0x0);

    /* Moving the low region out from under ram makes it visible. */
    memory_region_set_address(&low, 0x5000);
    g_assert_cmpuint(nr_ranges(&as), ==, 6);
    assert_range(&as, 3, 0x5000, 0x1000, &low, 0x0);

    address_space_destroy(&as);
    memory_region_finalize(&root);
    memory_region_finalize(&ram);
    memory_region_finalize(&high.mr);
    memory_region_finalize(&low);
    memory_region_finalize(&tie1);
    memory_region_finalize(&tie2);
}

static void test_disable_exposes_below(void)
{
    MemoryRegion root, ram;
    TestDev overlay;
    AddressSpace as;
    uint8_t *host;

    memory_region_init(&root, NULL, "root", 0x10000);
    memory_region_init_ram(&ram, NULL, "ram", 0x3000, &error_abort);
    dev_init(&overlay, &ops_1_4, "overlay", 0x1000);
    address_space_init(&as, &root, "test");
    memory_region_add_subregion(&root, 0, &ram);
    memory_region_add_subregion_overlap(&root, 0x1000, &overlay.mr, 1);
    host = memory_region_get_ram_ptr(&ram);
    host[0x1004] = 0xab;

    g_assert_cmpuint(address_space_ldub(&as, 0x1004, NULL), ==, 0x14);
    memory_region_set_enabled(&overlay.mr, false);
    g_assert_false(memory_region_is_enabled(&overlay.mr));
    g_assert_cmpuint(nr_ranges(&as), ==, 1);
    assert_range(&as, 0, 0x0, 0x3000, &ram, 0x0);
    g_assert_cmpuint(address_space_ldub(&as, 0x1004, NULL), ==, 0xab);

    memory_region_set_enabled(&overlay.mr, true);
    g_assert_cmpuint(nr_ranges(&as), ==, 3);
    g_assert_cmpuint(address_space_ldub(&as, 0x1004, NULL), ==, 0x14);

    /* A disabled container hides its whole subtree. */
    memory_region_set_enabled(&root, false);
    g_assert_cmpuint(nr_ranges(&as), ==, 0);
    memory_region_set_enabled(&root, true);

    address_space_destroy(&as);
    memory_region_finalize(&overlay.mr);
    memory_region_finalize(&ram);
    memory_region_finalize(&root);
}

static void test_alias_partial(void)
{
    MemoryRegion root, ram, alias, bar, bar_alias;
    TestDev regs;
    AddressSpace as;
    uint8_t *host;

    memory_region_init(&root, NULL, "root", 0x100000);
    memory_region_init_ram(&ram, NULL, "ram", 0x4000, &error_abort);
    host = memory_region_get_ram_ptr(&ram);
    address_space_init(&as, &root, "test");

    /* ram[0x1000, 0x1800) shows at 0x8000; ram itself is not mapped. */
    memory_region_init_alias(&alias, NULL, "alias", &ram, 0x1000, 0x800);
    g_assert_true(memory_region_is_alias(&alias));
    memory_region_add_subregion(&root, 0x8000, &alias);
    g_assert_cmpuint(nr_ranges(&as), ==, 1);
    assert_range(&as, 0, 0x8000, 0x800, &ram, 0x1000);

    address_space_stl_le(&as, 0x8010, 0xdeadbeef, NULL);
    g_assert_cmphex(ldl_le_p(host + 0x1010), ==, 0xdeadbeef);
    /* Past the alias window: unassigned even though ram continues. */
    g_assert_cmphex(address_space_ldl_le(&as, 0x8800, NULL), ==, 0xffffffff);

    memory_region_set_alias_offset(&alias, 0x2000);
    assert_range(&as, 0, 0x8000, 0x800, &ram, 0x2000);
    g_assert_cmphex(address_space_ldl_le(&as, 0x8010, NULL), ==, 0);
    host[0x2010] = 0x5a;
    g_assert_cmphex(address_space_ldub(&as, 0x8010, NULL), ==, 0x5a);

    /*
     * Two aliases continuing each other render as one range: a listener
     * (e.g. KVM) gets one slot, not two.
     */
    {
        MemoryRegion lo, hi;

        memory_region_init_alias(&lo, NULL, "lo", &ram, 0x0, 0x800);
        memory_region_init_alias(&hi, NULL, "hi", &ram, 0x800, 0x800);
        memory_region_add_subregion(&root, 0x10000, &lo);
        memory_region_add_subregion(&root, 0x10800, &hi);
        g_assert_cmpuint(nr_ranges(&as), ==, 2);
        assert_range(&as, 1, 0x10000, 0x1000, &ram, 0x0);
        memory_region_set_alias_offset(&hi, 0x1000);
        g_assert_cmpuint(nr_ranges(&as), ==, 3);
        assert_range(&as, 2, 0x10800, 0x800, &ram, 0x1000);
        memory_region_finalize(&hi);
        memory_region_finalize(&lo);
        g_assert_cmpuint(nr_ranges(&as), ==, 1);
    }

    /* Alias of part of a container: offsets inside the I/O region shift. */
    memory_region_init(&bar, NULL, "bar", 0x2000);
    dev_init(&regs, &ops_1_4, "regs", 0x40);
    memory_region_add_subregion(&bar, 0x1000, &regs.mr);
    memory_region_init_alias(&bar_alias, NULL, "bar-alias", &bar, 0x1010,
                             0x20);
    memory_region_add_subregion(&root, 0x20000, &bar_alias);
    assert_range(&as, 1, 0x20000, 0x20, &regs.mr, 0x10);
    g_assert_cmphex(address_space_ldl_le(&as, 0x20004, NULL), ==,
                    ldl_le_p(regs.regs + 0x14));
    assert_call(&regs, 0, false, 0x14, 4, ldl_le_p(regs.regs + 0x14));

    address_space_destroy(&as);
    memory_region_finalize(&bar_alias);
    memory_region_finalize(&alias);
    memory_region_finalize(&regs.mr);
    memory_region_finalize(&bar);
    memory_region_finalize(&ram);
    memory_region_finalize(&root);
}

static void test_nested_and_resize(void)
{
    MemoryRegion root, bus, ram;
    TestDev dev;
    AddressSpace as;

    memory_region_init(&root, NULL, "root", 0x100000);
    memory_region_init(&bus, NULL, "bus", 0x10000);
    memory_region_init_ram(&ram, NULL, "ram", 0x2000, &error_abort);
    dev_init(&dev, &ops_1_4, "dev", 0x40);
    address_space_init(&as, &root, "test");

    memory_region_transaction_begin();
    memory_region_add_subregion(&root, 0x40000, &bus);
    memory_region_add_subregion(&bus, 0x100, &dev.mr);
    memory_region_add_subregion(&bus, 0x1000, &ram);
    /* Nothing is visible until the outermost commit. */
    g_assert_cmpuint(nr_ranges(&as), ==, 0);
    memory_region_transaction_commit();

    g_assert_cmpuint(nr_ranges(&as), ==, 2);
    assert_range(&as, 0, 0x40100, 0x40, &dev.mr, 0);
    assert_range(&as, 1, 0x41000, 0x2000, &ram, 0);

    /* Shrinking the bus clips what sticks out of it. */
    memory_region_set_size(&bus, 0x1800);
    assert_range(&as, 1, 0x41000, 0x800, &ram, 0);
    memory_region_set_size(&ram, 0x400);
    assert_range(&as, 1, 0x41000, 0x400, &ram, 0);
    g_assert_cmpuint(memory_region_size(&ram), ==, 0x400);

    /* Removing a subregion makes its window unassigned. */
    memory_region_del_subregion(&bus, &dev.mr);
    g_assert_null(memory_region_get_container(&dev.mr));
    g_assert_cmpuint(nr_ranges(&as), ==, 1);
    g_assert_cmphex(address_space_ldub(&as, 0x40100, NULL), ==, 0xff);

    address_space_destroy(&as);
    memory_region_finalize(&dev.mr);
    memory_region_finalize(&ram);
    memory_region_finalize(&bus);
    memory_region_finalize(&root);
}

static void test_high_addresses(void)
{
    MemoryRegion root, ram;
    AddressSpace as;
    MemoryRegionSection s;

    memory_region_init(&root, NULL, "root", UINT64_MAX);
    memory_region_init_ram(&ram, NULL, "ram", 0x1000, &error_abort);
    address_space_init(&as, &root, "test");
    memory_region_add_subregion(&root, 0xfffffffe00000000ULL, &ram);
    assert_range(&as, 0, 0xfffffffe00000000ULL, 0x1000, &ram, 0);
    address_space_stq_le(&as, 0xfffffffe00000ff8ULL, 0x0102030405060708ULL,
                         NULL);
    g_assert_cmphex(address_space_ldq_le(&as, 0xfffffffe00000ff8ULL, NULL),
                    ==, 0x0102030405060708ULL);
    g_assert_true(address_space_find_section(&as, 0xfffffffe00000800ULL, &s));
    g_assert_true(s.mr == &ram);
    g_assert_cmphex(s.offset_within_region, ==, 0);
    g_assert_false(address_space_find_section(&as, 0xfffffffe00001000ULL,
                                              &s));
    /* The very end of the space reads as unassigned without wrapping. */
    g_assert_cmphex(address_space_ldl_le(&as, UINT64_MAX - 1, NULL), ==,
                    0xffffffff);

    address_space_destroy(&as);
    memory_region_finalize(&ram);
    memory_region_finalize(&root);
}

/* ---- Listeners -------------------------------------------------------- */

typedef struct ListenerFixture {
    MemoryRegion root, ram, neighbour;
    TestDev overlay;
    AddressSpace as;
    GArray *events;
    Recorder rec;
} ListenerFixture;

static void listener_fixture_init(ListenerFixture *f)
{
    memory_region_init(&f->root, NULL, "root", 0x100000);
    memory_region_init_ram(&f->ram, NULL, "ram", 0x1000, &error_abort);
    memory_region_init_ram(&f->neighbour, NULL, "neighbour", 0x1000,
                           &error_abort);
    dev_init(&f->overlay, &ops_1_4, "overlay", 0x100);
    address_space_init(&f->as, &f->root, "test");
    memory_region_add_subregion(&f->root, 0, &f->ram);
    memory_region_add_subregion(&f->root, 0x10000, &f->neighbour);
    memory_region_set_enabled(&f->overlay.mr, false);
    memory_region_add_subregion_overlap(&f->root, 0x800, &f->overlay.mr, 1);

    f->events = g_array_new(false, false, sizeof(ListenerEvent));
    rec_init(&f->rec, "rec", 0, f->events);
}

static void listener_fixture_finalize(ListenerFixture *f)
{
    address_space_destroy(&f->as);
    memory_region_finalize(&f->overlay.mr);
    memory_region_finalize(&f->neighbour);
    memory_region_finalize(&f->ram);
    memory_region_finalize(&f->root);
    g_array_free(f->events, true);
}

static void test_listener_replay(void)
{
    ListenerFixture f;
    g_autoptr(GArray) changes = NULL;

    listener_fixture_init(&f);
    memory_listener_register(&f.rec.listener, &f.as);
    g_assert_cmpuint(f.events->len, ==, 4);
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 0).kind, ==, 'b');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 3).kind, ==, 'c');
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 2);
    assert_event(changes, 0, 'a', &f.ram, 0x0, 0x1000, 0);
    assert_event(changes, 1, 'a', &f.neighbour, 0x10000, 0x1000, 0);

    g_array_set_size(f.events, 0);
    memory_listener_unregister(&f.rec.listener);
    g_array_unref(changes);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 2);
    assert_event(changes, 0, 'd', &f.neighbour, 0x10000, 0x1000, 0);
    assert_event(changes, 1, 'd', &f.ram, 0x0, 0x1000, 0);

    /* Unregistered: further changes are not reported. */
    g_array_set_size(f.events, 0);
    memory_region_set_enabled(&f.overlay.mr, true);
    g_assert_cmpuint(f.events->len, ==, 0);
    listener_fixture_finalize(&f);
}

/* ---- Coalesced MMIO ranges ------------------------------------------- */

typedef struct CoalescedZone {
    bool add;
    hwaddr addr;
    hwaddr len;
} CoalescedZone;

static GArray *coalesced_log;

static void coalesced_add(MemoryListener *l, MemoryRegionSection *s,
                          hwaddr addr, hwaddr len)
{
    CoalescedZone z = { true, addr, len };

    g_assert_true(addr >= s->offset_within_address_space &&
                  addr + len <= s->offset_within_address_space + s->size);
    g_array_append_val(coalesced_log, z);
}

static void coalesced_del(MemoryListener *l, MemoryRegionSection *s,
                          hwaddr addr, hwaddr len)
{
    CoalescedZone z = { false, addr, len };

    g_array_append_val(coalesced_log, z);
}

static void assert_zone(unsigned i, bool add, hwaddr addr, hwaddr len)
{
    CoalescedZone *z;

    g_assert_cmpuint(i, <, coalesced_log->len);
    z = &g_array_index(coalesced_log, CoalescedZone, i);
    g_assert_cmpint(z->add, ==, add);
    g_assert_cmphex(z->addr, ==, addr);
    g_assert_cmphex(z->len, ==, len);
}

/*
 * A coalesced range is announced for what the view shows of it: an
 * overlay above cuts it (the MSI-X table over doorbells), disabling the
 * region withdraws it, and clearing withdraws what was announced.
 */
static void test_coalesced_ranges(void)
{
    MemoryRegion root;
    TestDev page, table;
    AddressSpace as;
    MemoryListener l = {
        .coalesced_io_add = coalesced_add,
        .coalesced_io_del = coalesced_del,
        .name = "coalesced",
    };
    uint32_t v = 0x1234;

    coalesced_log = g_array_new(false, false, sizeof(CoalescedZone));
    memory_region_init(&root, NULL, "root", 0x100000);
    dev_init(&page, &ops_1_4, "page", 0x1000);
    dev_init(&table, &ops_1_4, "table", 0x100);
    address_space_init(&as, &root, "test");
    memory_region_add_subregion(&root, 0x4000, &page.mr);
    memory_region_add_subregion_overlap(&root, 0x4800, &table.mr, 1);
    memory_listener_register(&l, &as);
    g_assert_false(memory_region_has_coalescing(&page.mr));

    /* Marked while visible: announced at once, minus the overlay. */
    memory_region_add_coalescing(&page.mr, 0, 0x1000);
    g_assert_true(memory_region_has_coalescing(&page.mr));
    g_assert_cmpuint(coalesced_log->len, ==, 2);
    assert_zone(0, true, 0x4000, 0x800);
    assert_zone(1, true, 0x4900, 0x700);

    /* The overlay goes away: the old pieces go, the whole page comes. */
    g_array_set_size(coalesced_log, 0);
    memory_region_set_enabled(&table.mr, false);
    g_assert_cmpuint(coalesced_log->len, ==, 3);
    assert_zone(0, false, 0x4000, 0x800);
    assert_zone(1, false, 0x4900, 0x700);
    assert_zone(2, true, 0x4000, 0x1000);

    /* Disabled: withdrawn; enabled again: announced again. */
    g_array_set_size(coalesced_log, 0);
    memory_region_set_enabled(&page.mr, false);
    memory_region_set_enabled(&page.mr, true);
    g_assert_cmpuint(coalesced_log->len, ==, 2);
    assert_zone(0, false, 0x4000, 0x1000);
    assert_zone(1, true, 0x4000, 0x1000);

    /* Writes replayed from a ring are counted apart from trapped ones. */
    memory_set_replaying_coalesced(true);
    address_space_write(&as, 0x4004, &v, 4);
    memory_set_replaying_coalesced(false);
    g_assert_false(memory_replaying_coalesced());
    g_assert_cmpuint(memory_region_get_coalesced_writes(&page.mr), ==, 1);
    g_assert_cmpuint(page.mr.writes, ==, 0);
    address_space_write(&as, 0x4004, &v, 4);
    g_assert_cmpuint(memory_region_get_coalesced_writes(&page.mr), ==, 1);
    g_assert_cmpuint(page.mr.writes, ==, 1);

    /* Cleared: what was announced is withdrawn. */
    g_array_set_size(coalesced_log, 0);
    memory_region_clear_coalescing(&page.mr);
    g_assert_false(memory_region_has_coalescing(&page.mr));
    g_assert_cmpuint(coalesced_log->len, ==, 1);
    assert_zone(0, false, 0x4000, 0x1000);

    /* Marked while not in the view: announced when it shows up. */
    g_array_set_size(coalesced_log, 0);
    memory_region_del_subregion(&root, &page.mr);
    memory_region_add_coalescing(&page.mr, 0x10, 0x20);
    g_assert_cmpuint(coalesced_log->len, ==, 0);
    memory_region_add_subregion(&root, 0x8000, &page.mr);
    g_assert_cmpuint(coalesced_log->len, ==, 1);
    assert_zone(0, true, 0x8010, 0x20);
    /* Unregistering withdraws everything. */
    g_array_set_size(coalesced_log, 0);
    memory_listener_unregister(&l);
    g_assert_cmpuint(coalesced_log->len, ==, 1);
    assert_zone(0, false, 0x8010, 0x20);

    address_space_destroy(&as);
    memory_region_finalize(&table.mr);
    memory_region_finalize(&page.mr);
    memory_region_finalize(&root);
    g_array_free(coalesced_log, true);
}

static void test_listener_diff_enable(void)
{
    ListenerFixture f;
    g_autoptr(GArray) changes = NULL;

    listener_fixture_init(&f);
    memory_listener_register(&f.rec.listener, &f.as);
    g_array_set_size(f.events, 0);

    memory_region_set_enabled(&f.overlay.mr, true);
    changes = rec_changes(f.events);
    /* ram is split around the overlay; the neighbour is not touched. */
    g_assert_cmpuint(changes->len, ==, 4);
    assert_event(changes, 0, 'd', &f.ram, 0x0, 0x1000, 0);
    assert_event(changes, 1, 'a', &f.ram, 0x0, 0x800, 0);
    assert_event(changes, 2, 'a', &f.overlay.mr, 0x800, 0x100, 0);
    assert_event(changes, 3, 'a', &f.ram, 0x900, 0x700, 0x900);
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 0).kind, ==, 'b');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent,
                                  f.events->len - 1).kind, ==, 'c');

    g_array_set_size(f.events, 0);
    memory_region_set_enabled(&f.overlay.mr, false);
    g_array_unref(changes);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 4);
    assert_event(changes, 0, 'd', &f.ram, 0x0, 0x800, 0);
    assert_event(changes, 1, 'd', &f.overlay.mr, 0x800, 0x100, 0);
    assert_event(changes, 2, 'd', &f.ram, 0x900, 0x700, 0x900);
    assert_event(changes, 3, 'a', &f.ram, 0x0, 0x1000, 0);

    /* A no-op change announces nothing. */
    g_array_set_size(f.events, 0);
    memory_region_set_enabled(&f.overlay.mr, false);
    g_assert_cmpuint(f.events->len, ==, 0);

    memory_listener_unregister(&f.rec.listener);
    listener_fixture_finalize(&f);
}

static void test_listener_diff_set_address(void)
{
    ListenerFixture f;
    g_autoptr(GArray) changes = NULL;

    listener_fixture_init(&f);
    memory_listener_register(&f.rec.listener, &f.as);
    g_array_set_size(f.events, 0);

    memory_region_set_address(&f.neighbour, 0x20000);
    g_assert_cmphex(memory_region_get_address(&f.neighbour), ==, 0x20000);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 2);
    assert_event(changes, 0, 'd', &f.neighbour, 0x10000, 0x1000, 0);
    assert_event(changes, 1, 'a', &f.neighbour, 0x20000, 0x1000, 0);

    /* Readonly is part of a range's identity. */
    g_array_set_size(f.events, 0);
    memory_region_set_readonly(&f.neighbour, true);
    g_array_unref(changes);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 2);
    assert_event(changes, 0, 'd', &f.neighbour, 0x20000, 0x1000, 0);
    assert_event(changes, 1, 'a', &f.neighbour, 0x20000, 0x1000, 0);
    g_assert_false(g_array_index(changes, ListenerEvent, 0).readonly);
    g_assert_true(g_array_index(changes, ListenerEvent, 1).readonly);

    /* A transaction announces only the net change, in one begin/commit. */
    g_array_set_size(f.events, 0);
    memory_region_transaction_begin();
    memory_region_set_address(&f.neighbour, 0x30000);
    memory_region_set_address(&f.neighbour, 0x20000);
    memory_region_set_enabled(&f.overlay.mr, true);
    memory_region_set_enabled(&f.overlay.mr, false);
    memory_region_transaction_commit();
    g_assert_cmpuint(f.events->len, ==, 2);
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 0).kind, ==, 'b');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 1).kind, ==, 'c');

    memory_listener_unregister(&f.rec.listener);
    listener_fixture_finalize(&f);
}

static void test_listener_priority_order(void)
{
    ListenerFixture f;
    Recorder high;
    ListenerEvent *e;

    listener_fixture_init(&f);
    rec_init(&high, "high", 10, f.events);
    memory_listener_register(&high.listener, &f.as);
    memory_listener_register(&f.rec.listener, &f.as);
    g_array_set_size(f.events, 0);

    memory_region_set_address(&f.neighbour, 0x20000);
    /* begin x2, del (high first), add (low first), commit x2 */
    g_assert_cmpuint(f.events->len, ==, 8);
    e = &g_array_index(f.events, ListenerEvent, 2);
    g_assert_cmpint(e->kind, ==, 'd');
    g_assert_cmpstr(e->listener, ==, "high");
    e = &g_array_index(f.events, ListenerEvent, 3);
    g_assert_cmpint(e->kind, ==, 'd');
    g_assert_cmpstr(e->listener, ==, "rec");
    e = &g_array_index(f.events, ListenerEvent, 4);
    g_assert_cmpint(e->kind, ==, 'a');
    g_assert_cmpstr(e->listener, ==, "rec");
    e = &g_array_index(f.events, ListenerEvent, 5);
    g_assert_cmpint(e->kind, ==, 'a');
    g_assert_cmpstr(e->listener, ==, "high");

    /* address_space_destroy unregisters what is left, with deletions. */
    g_array_set_size(f.events, 0);
    memory_listener_unregister(&f.rec.listener);
    g_array_set_size(f.events, 0);
    address_space_destroy(&f.as);
    g_assert_null(high.listener.address_space);
    g_assert_cmpuint(f.events->len, ==, 4);
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 1).kind, ==, 'd');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 2).kind, ==, 'd');

    memory_region_finalize(&f.overlay.mr);
    memory_region_finalize(&f.neighbour);
    memory_region_finalize(&f.ram);
    memory_region_finalize(&f.root);
    g_array_free(f.events, true);
}

/* Enables the overlay when it sees the neighbour appear at 0x20000. */
static MemoryRegion *reacting_target;

static void reacting_add(MemoryListener *l, MemoryRegionSection *s)
{
    rec_add(l, s);
    if (s->offset_within_address_space == 0x20000) {
        memory_region_set_enabled(reacting_target, true);
    }
}

static void test_listener_change_from_callback(void)
{
    ListenerFixture f;
    g_autoptr(GArray) changes = NULL;

    listener_fixture_init(&f);
    f.rec.listener.region_add = reacting_add;
    reacting_target = &f.overlay.mr;
    memory_listener_register(&f.rec.listener, &f.as);
    g_array_set_size(f.events, 0);

    /* The nested change is applied in a second round, not mid-diff. */
    memory_region_set_address(&f.neighbour, 0x20000);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 6);
    assert_event(changes, 0, 'd', &f.neighbour, 0x10000, 0x1000, 0);
    assert_event(changes, 1, 'a', &f.neighbour, 0x20000, 0x1000, 0);
    assert_event(changes, 2, 'd', &f.ram, 0x0, 0x1000, 0);
    assert_event(changes, 4, 'a', &f.overlay.mr, 0x800, 0x100, 0);
    g_assert_cmpuint(nr_ranges(&f.as), ==, 4);
    /* Two full begin/commit rounds. */
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 0).kind, ==, 'b');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 3).kind, ==, 'c');
    g_assert_cmpint(g_array_index(f.events, ListenerEvent, 4).kind, ==, 'b');

    memory_listener_unregister(&f.rec.listener);
    listener_fixture_finalize(&f);
}

static void test_finalize_mapped(void)
{
    ListenerFixture f;
    g_autoptr(GArray) changes = NULL;
    int fd;

    listener_fixture_init(&f);
    memory_listener_register(&f.rec.listener, &f.as);
    g_array_set_size(f.events, 0);

    fd = memory_region_get_fd(&f.neighbour);
    g_assert_cmpint(fd, >=, 0);
    memory_region_finalize(&f.neighbour);
    changes = rec_changes(f.events);
    g_assert_cmpuint(changes->len, ==, 1);
    g_assert_cmpint(g_array_index(changes, ListenerEvent, 0).kind, ==, 'd');
    g_assert_cmphex(g_array_index(changes, ListenerEvent, 0).addr, ==,
                    0x10000);
    /* The memfd is closed. */
    g_assert_cmpint(fcntl(fd, F_GETFD), ==, -1);
    g_assert_cmpint(errno, ==, EBADF);
    /* Finalizing twice is harmless. */
    memory_region_finalize(&f.neighbour);

    memory_listener_unregister(&f.rec.listener);
    listener_fixture_finalize(&f);
}

/* ---- Dispatch --------------------------------------------------------- */

typedef struct DispatchFixture {
    MemoryRegion root, ram;
    TestDev dev;
    AddressSpace as;
} DispatchFixture;

/* ram at [0, 0x1000), the device right after it at 0x1000. */
static void dispatch_init(DispatchFixture *f, const MemoryRegionOps *ops)
{
    memory_region_init(&f->root, NULL, "root", 0x10000);
    memory_region_init_ram(&f->ram, NULL, "ram", 0x1000, &error_abort);
    dev_init(&f->dev, ops, "dev", 0x40);
    memory_region_add_subregion(&f->root, 0, &f->ram);
    memory_region_add_subregion(&f->root, 0x1000, &f->dev.mr);
    address_space_init(&f->as, &f->root, "test");
}

static void dispatch_finalize(DispatchFixture *f)
{
    address_space_destroy(&f->as);
    memory_region_finalize(&f->dev.mr);
    memory_region_finalize(&f->ram);
    memory_region_finalize(&f->root);
}

static void test_dispatch_across_boundary(void)
{
    DispatchFixture f;
    const uint8_t data[8] = { 1, 2, 3, 4, 0xa0, 0xa1, 0xa2, 0xa3 };
    uint8_t back[8];
    uint8_t *host;

    dispatch_init(&f, &ops_1_4);
    host = memory_region_get_ram_ptr(&f.ram);

    g_assert_cmpuint(address_space_write(&f.as, 0xffc, data, 8), ==,
                     MEMTX_OK);
    g_assert_cmpmem(host + 0xffc, 4, data, 4);
    g_assert_cmpuint(f.dev.nr_calls, ==, 1);
    assert_call(&f.dev, 0, true, 0x0, 4, 0xa3a2a1a0);

    g_assert_cmpuint(address_space_read(&f.as, 0xffc, back, 8), ==, MEMTX_OK);
    g_assert_cmpmem(back, 8, data, 8);
    assert_call(&f.dev, 1, false, 0x0, 4, 0xa3a2a1a0);

    /* A long read is split into the largest valid pieces. */
    f.dev.nr_calls = 0;
    {
        uint8_t big[12];
        g_assert_cmpuint(address_space_read(&f.as, 0x1000, big, 11), ==,
                         MEMTX_OK);
        g_assert_cmpmem(big, 11, f.dev.regs, 11);
        g_assert_cmpuint(f.dev.nr_calls, ==, 4);
        assert_call(&f.dev, 0, false, 0x0, 4, ldl_le_p(f.dev.regs));
        assert_call(&f.dev, 1, false, 0x4, 4, ldl_le_p(f.dev.regs + 4));
        assert_call(&f.dev, 2, false, 0x8, 2, lduw_le_p(f.dev.regs + 8));
        assert_call(&f.dev, 3, false, 0xa, 1, f.dev.regs[10]);
    }
    dispatch_finalize(&f);
}

static void test_dispatch_split_to_impl_max(void)
{
    DispatchFixture f;
    uint64_t v;

    dispatch_init(&f, &ops_valid8_impl4);
    v = address_space_ldq_le(&f.as, 0x1008, NULL);
    g_assert_cmphex(v, ==, ldq_le_p(f.dev.regs + 8));
    g_assert_cmpuint(f.dev.nr_calls, ==, 2);
    assert_call(&f.dev, 0, false, 0x8, 4, ldl_le_p(f.dev.regs + 8));
    assert_call(&f.dev, 1, false, 0xc, 4, ldl_le_p(f.dev.regs + 12));

    address_space_stq_le(&f.as, 0x1010, 0x1122334455667788ULL, NULL);
    g_assert_cmpuint(f.dev.nr_calls, ==, 4);
    assert_call(&f.dev, 2, true, 0x10, 4, 0x55667788);
    assert_call(&f.dev, 3, true, 0x14, 4, 0x11223344);
    dispatch_finalize(&f);

    /* Same outcome when valid itself stops at 4 (the default). */
    dispatch_init(&f, &ops_default);
    v = address_space_ldq_le(&f.as, 0x1000, NULL);
    g_assert_cmphex(v, ==, ldq_le_p(f.dev.regs));
    g_assert_cmpuint(f.dev.nr_calls, ==, 2);
    assert_call(&f.dev, 0, false, 0x0, 4, ldl_le_p(f.dev.regs));
    assert_call(&f.dev, 1, false, 0x4, 4, ldl_le_p(f.dev.regs + 4));
    dispatch_finalize(&f);
}

static void test_dispatch_widen_to_impl_min(void)
{
    DispatchFixture f;
    uint32_t word;

    dispatch_init(&f, &ops_impl_min4);
    word = ldl_le_p(f.dev.regs + 4);

    g_assert_cmphex(address_space_ldub(&f.as, 0x1005, NULL), ==,
                    f.dev.regs[5]);
    g_assert_cmpuint(f.dev.nr_calls, ==, 1);
    assert_call(&f.dev, 0, false, 0x4, 4, word);

    /* A byte write is a read-modify-write of the containing word. */
    address_space_stb(&f.as, 0x1006, 0xee, NULL);
    g_assert_cmpuint(f.dev.nr_calls, ==, 3);
    assert_call(&f.dev, 1, false, 0x4, 4, word);
    assert_call(&f.dev, 2, true, 0x4, 4, (word & 0xff00ffff) | 0x00ee0000);
    g_assert_cmphex(f.dev.regs[6], ==, 0xee);

    /* A full word is written directly, without reading first. */
    address_space_stl_le(&f.as, 0x1008, 0xcafef00d, NULL);
    g_assert_cmpuint(f.dev.nr_calls, ==, 4);
    assert_call(&f.dev, 3, true, 0x8, 4, 0xcafef00d);
    dispatch_finalize(&f);
}

static void test_dispatch_unaligned(void)
{
    DispatchFixture f;
    uint32_t v;

    /* Not accepting unaligned: naturally aligned power-of-two pieces. */
    dispatch_init(&f, &ops_1_4);
    v = address_space_ldl_le(&f.as, 0x1001, NULL);
    g_assert_cmphex(v, ==, ldl_le_p(f.dev.regs + 1));
    g_assert_cmpuint(f.dev.nr_calls, ==, 3);
    assert_call(&f.dev, 0, false, 0x1, 1, f.dev.regs[1]);
    assert_call(&f.dev, 1, false, 0x2, 2, lduw_le_p(f.dev.regs + 2));
    assert_call(&f.dev, 2, false, 0x4, 1, f.dev.regs[4]);
    dispatch_finalize(&f);

    /* Accepting and implementing unaligned: one call. */
    dispatch_init(&f, &ops_unaligned);
    v = address_space_ldl_le(&f.as, 0x1001, NULL);
    g_assert_cmphex(v, ==, ldl_le_p(f.dev.regs + 1));
    g_assert_cmpuint(f.dev.nr_calls, ==, 1);
    assert_call(&f.dev, 0, false, 0x1, 4, ldl_le_p(f.dev.regs + 1));

    /* Valid unaligned, implemented aligned: smaller aligned pieces. */
    dispatch_finalize(&f);
    dispatch_init(&f, &ops_valid_unaligned);
    v = address_space_ldl_le(&f.as, 0x1002, NULL);
    g_assert_cmphex(v, ==, ldl_le_p(f.dev.regs + 2));
    g_assert_cmpuint(f.dev.nr_calls, ==, 2);
    assert_call(&f.dev, 0, false, 0x2, 2, lduw_le_p(f.dev.regs + 2));
    assert_call(&f.dev, 1, false, 0x4, 2, lduw_le_p(f.dev.regs + 4));

    /* ... and when the implementation needs words: two covering words. */
    dispatch_finalize(&f);
    dispatch_init(&f, &ops_valid_unaligned_impl4);
    address_space_stw_le(&f.as, 0x1003, 0xbbaa, NULL);
    g_assert_cmpuint(f.dev.nr_calls, ==, 4);
    assert_call(&f.dev, 0, false, 0x0, 4, 0x13121110);
    assert_call(&f.dev, 1, true, 0x0, 4, 0xaa121110);
    assert_call(&f.dev, 2, false, 0x4, 4, 0x17161514);
    assert_call(&f.dev, 3, true, 0x4, 4, 0x171615bb);

    /* Direct dispatch of an unaligned access to an aligned-only region. */
    dispatch_finalize(&f);
    dispatch_init(&f, &ops_1_4);
    {
        uint64_t data = 0;
        unsigned long errs = qemu_guest_error_count();

        g_assert_cmpuint(memory_region_dispatch_read(&f.dev.mr, 2, &data, 4),
                         ==, MEMTX_DECODE_ERROR);
        g_assert_cmphex(data, ==, 0xffffffff);
        g_assert_cmpuint(qemu_guest_error_count(), ==, errs + 1);
        g_assert_cmpuint(f.dev.nr_calls, ==, 0);
        g_assert_cmpuint(memory_region_dispatch_read(&f.dev.mr, 4, &data, 4),
                         ==, MEMTX_OK);
        g_assert_cmphex(data, ==, ldl_le_p(f.dev.regs + 4));
        g_assert_cmpuint(memory_region_dispatch_write(&f.dev.mr, 8,
                                                      0x01020304, 4),
                         ==, MEMTX_OK);
        assert_call(&f.dev, 1, true, 0x8, 4, 0x01020304);
        /* Out of the region's bounds. */
        g_assert_cmpuint(memory_region_dispatch_read(&f.dev.mr, 0x40, &data,
                                                     1),
                         ==, MEMTX_DECODE_ERROR);
    }
    dispatch_finalize(&f);
}

static void test_dispatch_invalid(void)
{
    DispatchFixture f;
    unsigned long errs;
    uint8_t regs_before[64];
    uint8_t b;

    dispatch_init(&f, &ops_valid_min4);
    memcpy(regs_before, f.dev.regs, sizeof(regs_before));
    errs = qemu_guest_error_count();

    /* Below valid.min_access_size: all ones, decode error, logged. */
    g_assert_cmpuint(address_space_read(&f.as, 0x1001, &b, 1), ==,
                     MEMTX_DECODE_ERROR);
    g_assert_cmphex(b, ==, 0xff);
    g_assert_cmpuint(qemu_guest_error_count(), ==, errs + 1);
    b = 0;
    g_assert_cmpuint(address_space_write(&f.as, 0x1001, &b, 1), ==,
                     MEMTX_DECODE_ERROR);
    g_assert_cmpuint(f.dev.nr_calls, ==, 0);
    g_assert_cmpmem(f.dev.regs, 64, regs_before, 64);

    /* Refused by accepts(). */
    f.dev.reject = true;
    {
        MemTxResult r;
        uint32_t v = address_space_ldl_le(&f.as, 0x1004, &r);

        g_assert_cmpuint(r, ==, MEMTX_DECODE_ERROR);
        g_assert_cmphex(v, ==, 0xffffffff);
        address_space_stl_le(&f.as, 0x1004, 0, &r);
        g_assert_cmpuint(r, ==, MEMTX_DECODE_ERROR);
    }
    g_assert_cmpuint(f.dev.nr_calls, ==, 0);
    g_assert_cmpmem(f.dev.regs, 64, regs_before, 64);
    g_assert_cmpuint(qemu_guest_error_count(), ==, errs + 4);

    f.dev.reject = false;
    g_assert_cmphex(address_space_ldl_le(&f.as, 0x1004, NULL), ==,
                    ldl_le_p(f.dev.regs + 4));
    dispatch_finalize(&f);

    /* A region without a write callback: writes are invalid. */
    dispatch_init(&f, &ops_read_only_cb);
    {
        MemTxResult r;

        address_space_stl_le(&f.as, 0x1000, 0, &r);
        g_assert_cmpuint(r, ==, MEMTX_DECODE_ERROR);
        g_assert_cmpuint(f.dev.nr_calls, ==, 0);
    }
    dispatch_finalize(&f);
}

static void test_dispatch_unassigned(void)
{
    DispatchFixture f;
    uint8_t buf[16];
    const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t *host;

    dispatch_init(&f, &ops_1_4);
    host = memory_region_get_ram_ptr(&f.ram);

    g_assert_cmpuint(address_space_read(&f.as, 0x5000, buf, 8), ==,
                     MEMTX_DECODE_ERROR);
    g_assert_cmpmem(buf, 8, ones, 8);
    g_assert_cmpuint(address_space_write(&f.as, 0x5000, buf, 8), ==,
                     MEMTX_DECODE_ERROR);

    /* Device window ends at 0x1040: the rest reads as ones. */
    memset(buf, 0, sizeof(buf));
    g_assert_cmpuint(address_space_read(&f.as, 0x103c, buf, 12), ==,
                     MEMTX_DECODE_ERROR);
    g_assert_cmpmem(buf, 4, f.dev.regs + 0x3c, 4);
    g_assert_cmpmem(buf + 4, 8, ones, 8);

    /* Writes to the hole go nowhere; RAM before it is written. */
    memset(buf, 0x77, sizeof(buf));
    memory_region_set_address(&f.dev.mr, 0x2000);
    g_assert_cmpuint(address_space_write(&f.as, 0xff8, buf, 16), ==,
                     MEMTX_DECODE_ERROR);
    g_assert_cmpmem(host + 0xff8, 8, buf, 8);
    dispatch_finalize(&f);
}

static void test_dispatch_readonly_ram(void)
{
    DispatchFixture f;
    uint8_t *host;

    dispatch_init(&f, &ops_1_4);
    host = memory_region_get_ram_ptr(&f.ram);
    host[0x10] = 0x42;
    memory_region_set_readonly(&f.ram, true);
    g_assert_true(memory_region_is_readonly(&f.ram));
    g_assert_cmpuint(address_space_ldub(&f.as, 0x10, NULL), ==, 0x42);
    {
        MemTxResult r;

        address_space_stb(&f.as, 0x10, 0x99, &r);
        g_assert_cmpuint(r, ==, MEMTX_OK);
    }
    g_assert_cmphex(host[0x10], ==, 0x42);
    memory_region_set_readonly(&f.ram, false);
    address_space_stb(&f.as, 0x10, 0x99, NULL);
    g_assert_cmphex(host[0x10], ==, 0x99);
    dispatch_finalize(&f);
}

static void test_dispatch_endianness(void)
{
    DispatchFixture f;
    uint8_t bytes[4];

    /* A big-endian device sees guest bytes in big-endian order. */
    dispatch_init(&f, &ops_be);
    g_assert_cmphex(address_space_ldl_be(&f.as, 0x1000, NULL), ==,
                    ldl_be_p(f.dev.regs));
    assert_call(&f.dev, 0, false, 0, 4, ldl_be_p(f.dev.regs));
    address_space_stl_be(&f.as, 0x1008, 0x11223344, NULL);
    assert_call(&f.dev, 1, true, 8, 4, 0x11223344);
    g_assert_cmphex(f.dev.regs[8], ==, 0x11);
    address_space_stw_le(&f.as, 0x100c, 0xaabb, NULL);
    assert_call(&f.dev, 2, true, 0xc, 2, 0xbbaa);
    g_assert_cmphex(address_space_lduw_be(&f.as, 0x100c, NULL), ==, 0xbbaa);
    g_assert_cmphex(address_space_ldq_be(&f.as, 0x1010, NULL), ==,
                    ldq_be_p(f.dev.regs + 0x10));
    dispatch_finalize(&f);

    /* Native follows the target: little until told otherwise. */
    dispatch_init(&f, &ops_native);
    address_space_stl_le(&f.as, 0x1000, 0x11223344, NULL);
    assert_call(&f.dev, 0, true, 0, 4, 0x11223344);
    memory_set_target_big_endian(true);
    g_assert_true(memory_target_is_big_endian());
    address_space_stl_be(&f.as, 0x1004, 0x55667788, NULL);
    assert_call(&f.dev, 1, true, 4, 4, 0x55667788);
    memory_set_target_big_endian(false);
    dispatch_finalize(&f);

    /* RAM helpers: byte order in memory. */
    dispatch_init(&f, &ops_1_4);
    address_space_stl_le(&f.as, 0x20, 0x11223344, NULL);
    address_space_read(&f.as, 0x20, bytes, 4);
    g_assert_cmphex(bytes[0], ==, 0x44);
    g_assert_cmphex(address_space_ldl_be(&f.as, 0x20, NULL), ==, 0x44332211);
    address_space_stq_be(&f.as, 0x28, 0x0102030405060708ULL, NULL);
    g_assert_cmphex(address_space_ldq_le(&f.as, 0x28, NULL), ==,
                    0x0807060504030201ULL);
    address_space_stw_be(&f.as, 0x30, 0x1234, NULL);
    g_assert_cmphex(address_space_lduw_le(&f.as, 0x30, NULL), ==, 0x3412);
    dispatch_finalize(&f);
}

static void test_counters(void)
{
    DispatchFixture f;
    uint64_t reads, writes;
    uint8_t buf[16];

    dispatch_init(&f, &ops_valid8_impl4);
    memory_region_get_access_counts(&f.dev.mr, &reads, &writes);
    g_assert_cmpuint(reads, ==, 0);
    g_assert_cmpuint(writes, ==, 0);

    /* Split into two callbacks, counted as one access. */
    address_space_ldq_le(&f.as, 0x1000, NULL);
    g_assert_cmpuint(f.dev.nr_calls, ==, 2);
    address_space_stl_le(&f.as, 0x1000, 1, NULL);
    address_space_stb(&f.as, 0x1001, 1, NULL);
    memory_region_get_access_counts(&f.dev.mr, &reads, &writes);
    g_assert_cmpuint(reads, ==, 1);
    g_assert_cmpuint(writes, ==, 2);

    /* RAM is not counted, only the device part of a spanning access. */
    address_space_read(&f.as, 0xff8, buf, 16);
    memory_region_get_access_counts(&f.dev.mr, &reads, &writes);
    g_assert_cmpuint(reads, ==, 2);
    memory_region_get_access_counts(&f.ram, &reads, &writes);
    g_assert_cmpuint(reads, ==, 0);

    memory_region_reset_access_counts(&f.dev.mr);
    memory_region_get_access_counts(&f.dev.mr, &reads, &writes);
    g_assert_cmpuint(reads, ==, 0);
    g_assert_cmpuint(writes, ==, 0);
    dispatch_finalize(&f);

    /* Invalid accesses never reach the device and are not counted. */
    dispatch_init(&f, &ops_valid_min4);
    address_space_ldub(&f.as, 0x1000, NULL);
    memory_region_get_access_counts(&f.dev.mr, &reads, &writes);
    g_assert_cmpuint(reads, ==, 0);
    address_space_ldl_le(&f.as, 0x1000, NULL);
    memory_region_get_access_counts(&f.dev.mr, &reads, NULL);
    g_assert_cmpuint(reads, ==, 1);
    dispatch_finalize(&f);
}

/* ---- RAM backing ------------------------------------------------------ */

static void test_ram_memfd_shared(void)
{
    MemoryRegion root, ram;
    AddressSpace as;
    Error *err = NULL;
    uint8_t *second;
    int fd;

    memory_region_init(&root, NULL, "root", 0x100000);
    g_assert_true(memory_region_init_ram(&ram, NULL, "guest-ram", 0x3000,
                                         &err));
    g_assert_null(err);
    g_assert_true(memory_region_is_ram(&ram));
    g_assert_false(memory_region_is_ram_device(&ram));
    memory_region_add_subregion(&root, 0x10000, &ram);
    address_space_init(&as, &root, "test");

    fd = memory_region_get_fd(&ram);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpuint(memory_region_get_fd_offset(&ram), ==, 0);
    second = mmap(NULL, 0x3000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    g_assert_true(second != MAP_FAILED);
    g_assert_true(second != memory_region_get_ram_ptr(&ram));

    /* Zero-filled, and writes are visible through the other mapping. */
    g_assert_cmphex(address_space_ldq_le(&as, 0x12000, NULL), ==, 0);
    address_space_stq_le(&as, 0x12008, 0x0123456789abcdefULL, NULL);
    g_assert_cmphex(ldq_le_p(second + 0x2008), ==, 0x0123456789abcdefULL);
    stl_le_p(second + 0x100, 0xfeedface);
    g_assert_cmphex(address_space_ldl_le(&as, 0x10100, NULL), ==, 0xfeedface);

    munmap(second, 0x3000);
    address_space_destroy(&as);
    memory_region_finalize(&ram);
    memory_region_finalize(&root);

    /* Impossible sizes are errors, not crashes. */
    g_assert_false(memory_region_init_ram(&ram, NULL, "empty", 0, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), "empty"));
    error_free(err);
    err = NULL;
    g_assert_false(memory_region_init_ram(&ram, NULL, "huge",
                                          UINT64_MAX - 1, &err));
    g_assert_nonnull(err);
    error_free(err);
    memory_region_finalize(&ram);
}

/*
 * RAM-device accesses must be single loads/stores of the access width.
 * The page is PROT_NONE; each fault records its address, opens the page
 * and single-steps the faulting instruction, after which the page is
 * closed again.  So each recorded fault is one instruction touching it.
 */
#if defined(__x86_64__) && defined(__linux__)
#define TRACKED_MAX 16
static uint8_t *tracked_page;
static size_t tracked_size;
static volatile uintptr_t tracked_faults[TRACKED_MAX];
static volatile unsigned tracked_nr;

static void tracked_segv(int sig, siginfo_t *info, void *ctx)
{
    ucontext_t *uc = ctx;
    uintptr_t addr = (uintptr_t)info->si_addr;

    if (addr < (uintptr_t)tracked_page ||
        addr >= (uintptr_t)tracked_page + tracked_size) {
        abort();
    }
    if (tracked_nr < TRACKED_MAX) {
        tracked_faults[tracked_nr] = addr - (uintptr_t)tracked_page;
    }
    tracked_nr++;
    mprotect(tracked_page, tracked_size, PROT_READ | PROT_WRITE);
    uc->uc_mcontext.gregs[REG_EFL] |= 0x100;    /* TF: trap after one insn */
}

static void tracked_trap(int sig, siginfo_t *info, void *ctx)
{
    ucontext_t *uc = ctx;

    uc->uc_mcontext.gregs[REG_EFL] &= ~0x100;
    mprotect(tracked_page, tracked_size, PROT_NONE);
}

static void tracked_reset(void)
{
    tracked_nr = 0;
    mprotect(tracked_page, tracked_size, PROT_NONE);
}

static void tracked_stop(void)
{
    mprotect(tracked_page, tracked_size, PROT_READ | PROT_WRITE);
}

static void test_ram_device_exact_width(void)
{
    MemoryRegion root, bar;
    AddressSpace as;
    struct sigaction sa = { 0 }, old_segv, old_trap;
    uint64_t v = 0;
    uint8_t buf[8];

    tracked_size = getpagesize();
    tracked_page = mmap(NULL, tracked_size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert_true(tracked_page != MAP_FAILED);
    memset(tracked_page, 0, tracked_size);
    stq_le_p(tracked_page + 0x10, 0x8877665544332211ULL);

    memory_region_init(&root, NULL, "root", 0x100000);
    memory_region_init_ram_device_ptr(&bar, NULL, "bar", tracked_size,
                                      tracked_page);
    g_assert_true(memory_region_is_ram(&bar));
    g_assert_true(memory_region_is_ram_device(&bar));
    g_assert_true(memory_region_get_ram_ptr(&bar) == tracked_page);
    g_assert_cmpint(memory_region_get_fd(&bar), ==, -1);
    memory_region_add_subregion(&root, 0x40000, &bar);
    address_space_init(&as, &root, "test");

    sa.sa_sigaction = tracked_segv;
    sa.sa_flags = SA_SIGINFO;
    g_assert_cmpint(sigaction(SIGSEGV, &sa, &old_segv), ==, 0);
    sa.sa_sigaction = tracked_trap;
    g_assert_cmpint(sigaction(SIGTRAP, &sa, &old_trap), ==, 0);

    /* 4-byte read: one access at the offset. */
    tracked_reset();
    v = address_space_ldl_le(&as, 0x40010, NULL);
    tracked_stop();
    g_assert_cmphex(v, ==, 0x44332211);
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(tracked_faults[0], ==, 0x10);

    /* 8-byte aligned write: one access. */
    tracked_reset();
    address_space_stq_le(&as, 0x40018, 0x0102030405060708ULL, NULL);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(tracked_faults[0], ==, 0x18);
    g_assert_cmphex(ldq_le_p(tracked_page + 0x18), ==, 0x0102030405060708ULL);

    /* 2-byte write: one access, neighbours untouched. */
    tracked_reset();
    address_space_stw_le(&as, 0x40012, 0xbeef, NULL);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(tracked_faults[0], ==, 0x12);
    g_assert_cmphex(ldq_le_p(tracked_page + 0x10), ==, 0x88776655beef2211ULL);

    /* 4-byte write and 1-byte read: one access each. */
    tracked_reset();
    address_space_stl_le(&as, 0x40020, 0xa1b2c3d4, NULL);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(tracked_faults[0], ==, 0x20);
    g_assert_cmphex(ldl_le_p(tracked_page + 0x20), ==, 0xa1b2c3d4);
    tracked_reset();
    g_assert_cmphex(address_space_ldub(&as, 0x40023, NULL), ==, 0xa1);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(tracked_faults[0], ==, 0x23);

    /* 8 bytes at a 4-aligned offset: two naturally aligned 4-byte loads. */
    tracked_reset();
    address_space_read(&as, 0x40014, buf, 8);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 2);
    g_assert_cmphex(tracked_faults[0], ==, 0x14);
    g_assert_cmphex(tracked_faults[1], ==, 0x18);
    g_assert_cmpmem(buf, 8, tracked_page + 0x14, 8);

    /* Direct dispatch: same rule, host byte order value. */
    tracked_reset();
    g_assert_cmpuint(memory_region_dispatch_read(&bar, 0x10, &v, 2), ==,
                     MEMTX_OK);
    tracked_stop();
    g_assert_cmpuint(tracked_nr, ==, 1);
    g_assert_cmphex(v, ==, 0x2211);

    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGTRAP, &old_trap, NULL);

    /* Dispatch into RAM-device counts as a userspace trap. */
    {
        uint64_t reads, writes;

        memory_region_get_access_counts(&bar, &reads, &writes);
        g_assert_cmpuint(reads, ==, 4);
        g_assert_cmpuint(writes, ==, 3);
    }

    address_space_destroy(&as);
    memory_region_finalize(&bar);
    memory_region_finalize(&root);
    munmap(tracked_page, tracked_size);
}
#endif

/* ---- Global address spaces -------------------------------------------- */

static void test_physmem_globals(void)
{
    TestDev port;
    MemoryRegion ram;
    MemoryRegionSection s;

    g_assert_cmphex(memory_region_size(get_system_memory()), ==, UINT64_MAX);
    g_assert_cmphex(memory_region_size(get_system_io()), ==, 0x10000);
    g_assert_true(address_space_root(&address_space_memory) ==
                  get_system_memory());
    g_assert_true(address_space_root(&address_space_io) == get_system_io());

    dev_init(&port, &ops_1_4, "port", 8);
    memory_region_add_subregion(get_system_io(), 0x3f8, &port.mr);
    cpu_outb(0x3f9, 0x5a);
    assert_call(&port, 0, true, 1, 1, 0x5a);
    g_assert_cmphex(cpu_inb(0x3f9), ==, 0x5a);
    cpu_outw(0x3fa, 0x1234);
    assert_call(&port, 2, true, 2, 2, 0x1234);
    g_assert_cmphex(cpu_inw(0x3fa), ==, 0x1234);
    cpu_outl(0x3fc, 0xa1b2c3d4);
    g_assert_cmphex(cpu_inl(0x3fc), ==, 0xa1b2c3d4);
    g_assert_cmphex(cpu_inb(0x80), ==, 0xff);
    memory_region_del_subregion(get_system_io(), &port.mr);
    g_assert_cmphex(cpu_inb(0x3f9), ==, 0xff);

    memory_region_init_ram(&ram, NULL, "pc.ram", 0x10000, &error_abort);
    memory_region_add_subregion(get_system_memory(), 0x100000, &ram);
    g_assert_true(address_space_find_section(&address_space_memory, 0x100010,
                                             &s));
    g_assert_true(s.mr == &ram);
    g_assert_true(s.address_space == &address_space_memory);
    g_assert_cmphex(s.offset_within_address_space, ==, 0x100000);
    memory_region_del_subregion(get_system_memory(), &ram);
    memory_region_finalize(&ram);
    memory_region_finalize(&port.mr);
}

static bool count_ranges(const FlatRange *fr, void *opaque)
{
    unsigned *n = opaque;

    (*n)++;
    return *n == 2;
}

static void test_flatview_iteration(void)
{
    MemoryRegion root, a, b, c;
    AddressSpace as;
    unsigned n = 0;

    memory_region_init(&root, NULL, "root", 0x10000);
    memory_region_init_ram(&a, NULL, "a", 0x1000, &error_abort);
    memory_region_init_ram(&b, NULL, "b", 0x1000, &error_abort);
    memory_region_init_ram(&c, NULL, "c", 0x1000, &error_abort);
    memory_region_add_subregion(&root, 0x3000, &c);
    memory_region_add_subregion(&root, 0x1000, &a);
    memory_region_add_subregion(&root, 0x2000, &b);
    address_space_init(&as, &root, "test");
    /* Sorted by address whatever the insertion order; the callback stops. */
    assert_range(&as, 0, 0x1000, 0x1000, &a, 0);
    assert_range(&as, 1, 0x2000, 0x1000, &b, 0);
    assert_range(&as, 2, 0x3000, 0x1000, &c, 0);
    g_assert_null(flatview_get_range(address_space_get_flatview(&as), 3));
    flatview_for_each_range(address_space_get_flatview(&as), count_ranges, &n);
    g_assert_cmpuint(n, ==, 2);

    address_space_destroy(&as);
    memory_region_finalize(&a);
    memory_region_finalize(&b);
    memory_region_finalize(&c);
    memory_region_finalize(&root);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/memory/flatview/overlay-priority", test_overlay_priority);
    g_test_add_func("/memory/flatview/disable-exposes-below",
                    test_disable_exposes_below);
    g_test_add_func("/memory/flatview/alias-partial", test_alias_partial);
    g_test_add_func("/memory/flatview/nested-transaction-resize",
                    test_nested_and_resize);
    g_test_add_func("/memory/flatview/high-addresses", test_high_addresses);
    g_test_add_func("/memory/flatview/sorted-iteration",
                    test_flatview_iteration);
    g_test_add_func("/memory/listener/replay-and-unregister",
                    test_listener_replay);
    g_test_add_func("/memory/listener/diff-enable-disable",
                    test_listener_diff_enable);
    g_test_add_func("/memory/listener/diff-set-address-readonly",
                    test_listener_diff_set_address);
    g_test_add_func("/memory/listener/priority-order",
                    test_listener_priority_order);
    g_test_add_func("/memory/listener/change-from-callback",
                    test_listener_change_from_callback);
    g_test_add_func("/memory/region/finalize-mapped", test_finalize_mapped);
    g_test_add_func("/memory/dispatch/across-ram-io-boundary",
                    test_dispatch_across_boundary);
    g_test_add_func("/memory/dispatch/split-to-impl-max",
                    test_dispatch_split_to_impl_max);
    g_test_add_func("/memory/dispatch/widen-to-impl-min",
                    test_dispatch_widen_to_impl_min);
    g_test_add_func("/memory/dispatch/unaligned-pieces",
                    test_dispatch_unaligned);
    g_test_add_func("/memory/dispatch/invalid-access", test_dispatch_invalid);
    g_test_add_func("/memory/dispatch/unassigned-reads-ones",
                    test_dispatch_unassigned);
    g_test_add_func("/memory/dispatch/readonly-drops-writes",
                    test_dispatch_readonly_ram);
    g_test_add_func("/memory/dispatch/endianness", test_dispatch_endianness);
    g_test_add_func("/memory/counters/once-per-access", test_counters);
    g_test_add_func("/memory/ram/memfd-shared", test_ram_memfd_shared);
    g_test_add_func("/memory/coalesced/ranges-follow-the-view",
                    test_coalesced_ranges);
#if defined(__x86_64__) && defined(__linux__)
    g_test_add_func("/memory/ram-device/exact-width",
                    test_ram_device_exact_width);
#endif
    g_test_add_func("/memory/physmem/global-spaces", test_physmem_globals);
    return g_test_run();
}
