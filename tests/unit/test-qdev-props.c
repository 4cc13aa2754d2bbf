/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qdev properties (every type, good and bad values), device creation from
 * options and its failure paths, unplug, reset and GPIO lines.
 */
#include "qemu/osdep.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qemu/option.h"

#define TYPE_TEST_BUS "test-bus"
#define TYPE_OTHER_BUS "test-other-bus"
#define TYPE_TEST_HOST "test-host"
#define TYPE_TEST_DEV "test-dev"
#define TYPE_TEST_SUBDEV "test-subdev"
#define TYPE_TEST_ABSTRACT "test-abstract-dev"
#define TYPE_TEST_INTERNAL "test-internal-dev"
#define TYPE_TEST_ORPHAN "test-orphan-dev"

typedef enum TestMode { TEST_MODE_FAST, TEST_MODE_SLOW, TEST_MODE_OFF } TestMode;
static const char *const test_mode_lookup[] = { "fast", "slow", "off", NULL };

typedef struct TestDev {
    DeviceState parent_obj;
    bool flag;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    int32_t i32;
    uint64_t u64;
    uint64_t size;
    char *str;
    OnOffAuto ooa;
    int mode;
    int32_t devfn;
    PCIHostDeviceAddress host;
    bool fail_realize;
    uint32_t extra;
    int resets;
    qemu_irq out[2];
    int last_irq_line;
    int last_irq_level;
} TestDev;

#define TEST_DEV(obj) OBJECT_CHECK(TestDev, (obj), TYPE_TEST_DEV)

typedef struct TestHost {
    DeviceState parent_obj;
    BusState *bus;
    int resets;
} TestHost;

#define TEST_HOST(obj) OBJECT_CHECK(TestHost, (obj), TYPE_TEST_HOST)

static int dev_finalized;
static int unrealized;
static int vetoes;              /* remaining unplug vetoes */
static int bus_resets;

static const Property test_dev_props[] = {
    DEFINE_PROP_BOOL("flag", TestDev, flag, true,
                     .description = "a boolean"),
    DEFINE_PROP_UINT8("u8", TestDev, u8, 8),
    DEFINE_PROP_UINT16("u16", TestDev, u16, 16),
    DEFINE_PROP_UINT32("u32", TestDev, u32, 32),
    DEFINE_PROP_INT32("i32", TestDev, i32, -32),
    DEFINE_PROP_UINT64("u64", TestDev, u64, 64),
    DEFINE_PROP_SIZE("size", TestDev, size, 4096),
    DEFINE_PROP_STRING("str", TestDev, str),
    DEFINE_PROP_ON_OFF_AUTO("ooa", TestDev, ooa, ON_OFF_AUTO_AUTO),
    DEFINE_PROP_ENUM("mode", TestDev, mode, TEST_MODE_SLOW, test_mode_lookup),
    DEFINE_PROP_PCI_DEVFN("addr", TestDev, devfn, -1),
    DEFINE_PROP_PCI_HOST_DEVADDR("host", TestDev, host),
    DEFINE_PROP_BOOL("fail-realize", TestDev, fail_realize, false),
    DEFINE_PROP_END_OF_LIST(),
};

static const Property test_subdev_props[] = {
    DEFINE_PROP_UINT32("extra", TestDev, extra, 99),
    DEFINE_PROP_END_OF_LIST(),
};

static bool test_dev_realize(DeviceState *dev, Error **errp)
{
    if (TEST_DEV(dev)->fail_realize) {
        error_setg(errp, "realize refused on request");
        return false;
    }
    return true;
}

static void test_dev_unrealize(DeviceState *dev)
{
    unrealized++;
}

static void test_dev_reset(DeviceState *dev)
{
    TEST_DEV(dev)->resets++;
}

static void test_dev_finalize(Object *obj)
{
    dev_finalized++;
}

static void test_dev_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->desc = "unit test device";
    dc->bus_type = TYPE_TEST_BUS;
    dc->realize = test_dev_realize;
    dc->unrealize = test_dev_unrealize;
    dc->reset = test_dev_reset;
    device_class_set_props(dc, test_dev_props);
}

static void test_subdev_class_init(ObjectClass *oc, void *data)
{
    device_class_set_props(DEVICE_CLASS(oc), test_subdev_props);
}

static void test_internal_class_init(ObjectClass *oc, void *data)
{
    DEVICE_CLASS(oc)->user_creatable = false;
}

static void test_orphan_class_init(ObjectClass *oc, void *data)
{
    DEVICE_CLASS(oc)->bus_type = TYPE_OTHER_BUS;
}

static void test_host_realize_bus(TestHost *host)
{
    host->bus = qbus_new(TYPE_TEST_BUS, DEVICE(host), "tbus.0");
    host->bus->hotplug_allowed = true;
}

static void test_host_init(Object *obj)
{
    test_host_realize_bus(TEST_HOST(obj));
}

static void test_host_reset(DeviceState *dev)
{
    TEST_HOST(dev)->resets++;
}

static void test_host_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);

    dc->user_creatable = false;
    dc->reset = test_host_reset;
}

/* Rejects odd devfn values and places unset ones at slot 3. */
static bool test_bus_check_address(BusState *bus, DeviceState *dev,
                                   Error **errp)
{
    TestDev *td = TEST_DEV(dev);

    if (td->devfn >= 0 && (td->devfn & 1)) {
        error_setg(errp, "odd devfn %d refused by the bus", td->devfn);
        return false;
    }
    if (td->devfn < 0) {
        td->devfn = 3 << 3;
    }
    return true;
}

static bool test_bus_unplug(BusState *bus, DeviceState *dev, Error **errp)
{
    if (vetoes > 0) {
        vetoes--;
        error_setg(errp, "unplug vetoed by the bus");
        return false;
    }
    return true;
}

static void test_bus_reset(BusState *bus)
{
    bus_resets++;
}

static void test_bus_class_init(ObjectClass *oc, void *data)
{
    BusClass *bc = BUS_CLASS(oc);

    bc->check_address = test_bus_check_address;
    bc->unplug = test_bus_unplug;
    bc->reset = test_bus_reset;
}

static const TypeInfo test_types[] = {
    {
        .name = TYPE_TEST_BUS,
        .parent = TYPE_BUS,
        .class_size = sizeof(BusClass),
        .class_init = test_bus_class_init,
    }, {
        .name = TYPE_OTHER_BUS,
        .parent = TYPE_BUS,
    }, {
        .name = TYPE_TEST_HOST,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(TestHost),
        .instance_init = test_host_init,
        .class_init = test_host_class_init,
    }, {
        .name = TYPE_TEST_DEV,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(TestDev),
        .class_init = test_dev_class_init,
        .instance_finalize = test_dev_finalize,
    }, {
        .name = TYPE_TEST_SUBDEV,
        .parent = TYPE_TEST_DEV,
        .class_init = test_subdev_class_init,
    }, {
        .name = TYPE_TEST_ABSTRACT,
        .parent = TYPE_TEST_DEV,
        .abstract = true,
    }, {
        .name = TYPE_TEST_INTERNAL,
        .parent = TYPE_TEST_DEV,
        .class_init = test_internal_class_init,
    }, {
        .name = TYPE_TEST_ORPHAN,
        .parent = TYPE_TEST_DEV,
        .class_init = test_orphan_class_init,
    },
};

DEFINE_TYPES(test_types)

static TestHost *test_host;

static void ensure_host(void)
{
    if (!test_host) {
        DeviceState *host = qdev_new(TYPE_TEST_HOST);
        object_property_add_child(qdev_get_machine(), "host", OBJECT(host));
        qdev_realize_and_unref(host, NULL, &error_abort);
        test_host = TEST_HOST(host);
    }
}

/* Expects failure and that the message contains every given fragment. */
static void assert_err_contains(Error **errp, const char *a, const char *b,
                                const char *c)
{
    const char *msg;

    g_assert_nonnull(*errp);
    msg = error_get_pretty(*errp);
    if ((a && !strstr(msg, a)) || (b && !strstr(msg, b)) ||
        (c && !strstr(msg, c))) {
        g_error("unexpected message: %s", msg);
    }
    error_free(*errp);
    *errp = NULL;
}

static void test_defaults(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    TestDev *td = TEST_DEV(obj);

    g_assert_true(td->flag);
    g_assert_cmpuint(td->u8, ==, 8);
    g_assert_cmpuint(td->u16, ==, 16);
    g_assert_cmpuint(td->u32, ==, 32);
    g_assert_cmpint(td->i32, ==, -32);
    g_assert_cmpuint(td->u64, ==, 64);
    g_assert_cmpuint(td->size, ==, 4096);
    g_assert_null(td->str);
    g_assert_cmpint(td->ooa, ==, ON_OFF_AUTO_AUTO);
    g_assert_cmpint(td->mode, ==, TEST_MODE_SLOW);
    g_assert_cmpint(td->devfn, ==, -1);
}

static void test_parse_good(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    DeviceState *dev = DEVICE(obj);
    TestDev *td = TEST_DEV(obj);
    static const char *const bools[][2] = {
        { "off", "0" }, { "on", "1" }, { "no", "0" }, { "yes", "1" },
        { "false", "0" }, { "true", "1" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bools); i++) {
        g_assert_true(qdev_prop_parse(dev, "flag", bools[i][0],
                                      &error_abort));
        g_assert_cmpint(td->flag, ==, bools[i][1][0] == '1');
    }
    g_assert_true(qdev_prop_parse(dev, "u8", "255", &error_abort));
    g_assert_cmpuint(td->u8, ==, 255);
    g_assert_true(qdev_prop_parse(dev, "u16", "0xffff", &error_abort));
    g_assert_cmpuint(td->u16, ==, 0xffff);
    g_assert_true(qdev_prop_parse(dev, "u32", "4294967295", &error_abort));
    g_assert_cmpuint(td->u32, ==, UINT32_MAX);
    g_assert_true(qdev_prop_parse(dev, "i32", "-2147483648", &error_abort));
    g_assert_cmpint(td->i32, ==, INT32_MIN);
    g_assert_true(qdev_prop_parse(dev, "u64", "0xffffffffffffffff",
                                  &error_abort));
    g_assert_cmpuint(td->u64, ==, UINT64_MAX);
    g_assert_true(qdev_prop_parse(dev, "size", "64M", &error_abort));
    g_assert_cmpuint(td->size, ==, 64ULL << 20);
    g_assert_true(qdev_prop_parse(dev, "size", "4k", &error_abort));
    g_assert_cmpuint(td->size, ==, 4096);
    g_assert_true(qdev_prop_parse(dev, "str", "hello", &error_abort));
    g_assert_cmpstr(td->str, ==, "hello");
    g_assert_true(qdev_prop_parse(dev, "ooa", "off", &error_abort));
    g_assert_cmpint(td->ooa, ==, ON_OFF_AUTO_OFF);
    g_assert_true(qdev_prop_parse(dev, "mode", "fast", &error_abort));
    g_assert_cmpint(td->mode, ==, TEST_MODE_FAST);
}

static void test_parse_pci_addresses(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    DeviceState *dev = DEVICE(obj);
    TestDev *td = TEST_DEV(obj);
    static const struct {
        const char *str;
        int32_t devfn;
    } devfns[] = {
        { "02.0", 0x10 }, { "1f.7", 0xff }, { "3", 0x18 }, { "0x2", 0x10 },
        { "0x1f", 0xf8 }, { "a.1", 0x51 }, { "0x1.0x2", 0x0a },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(devfns); i++) {
        g_assert_true(qdev_prop_parse(dev, "addr", devfns[i].str,
                                      &error_abort));
        g_assert_cmpint(td->devfn, ==, devfns[i].devfn);
    }
    g_assert_true(qdev_prop_parse(dev, "host", "0000:01:00.0", &error_abort));
    g_assert_cmpuint(td->host.domain, ==, 0);
    g_assert_cmpuint(td->host.bus, ==, 1);
    g_assert_cmpuint(td->host.slot, ==, 0);
    g_assert_cmpuint(td->host.function, ==, 0);
    g_assert_true(qdev_prop_parse(dev, "host", "ab:1f.7", &error_abort));
    g_assert_cmpuint(td->host.bus, ==, 0xab);
    g_assert_cmpuint(td->host.slot, ==, 0x1f);
    g_assert_cmpuint(td->host.function, ==, 7);
    g_assert_true(qdev_prop_parse(dev, "host", "10de:02:03.1", &error_abort));
    g_assert_cmpuint(td->host.domain, ==, 0x10de);
}

static void test_parse_bad(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    DeviceState *dev = DEVICE(obj);
    TestDev *td = TEST_DEV(obj);
    static const struct {
        const char *prop, *value, *expect;
    } bad[] = {
        { "flag", "maybe", "'on' or 'off'" },
        { "flag", "1", "'on' or 'off'" },
        { "u8", "256", "uint8" },
        { "u8", "-1", "uint8" },
        { "u16", "65536", "uint16" },
        { "u32", "4294967296", "uint32" },
        { "u32", "12abc", "uint32" },
        { "u32", "", "uint32" },
        { "i32", "2147483648", "int32" },
        { "u64", "18446744073709551616", "uint64" },
        { "size", "64Q", "size" },
        { "size", "16E", "size" },
        { "ooa", "maybe", "'auto', 'on', 'off'" },
        { "mode", "medium", "'fast', 'slow', 'off'" },
        { "addr", "20.0", "PCI slot" },
        { "addr", "02.8", "PCI slot" },
        { "addr", "0x20", "PCI slot" },
        { "addr", "1.2.3", "PCI slot" },
        { "addr", "zz", "PCI slot" },
        { "host", "01:00", "host PCI address" },
        { "host", "0000:01:20.0", "host PCI address" },
        { "host", "00000:01:00.0", "host PCI address" },
        { "host", "0:1:2:3.0", "host PCI address" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        Error *err = NULL;
        g_autofree char *prefix = g_strdup_printf(
            "Property 'test-dev.%s' doesn't take value '%s'", bad[i].prop,
            bad[i].value);

        g_assert_false(qdev_prop_parse(dev, bad[i].prop, bad[i].value, &err));
        assert_err_contains(&err, prefix, bad[i].expect, NULL);
    }
    /* Failed parses leave the defaults alone. */
    g_assert_cmpuint(td->u8, ==, 8);
    g_assert_cmpint(td->devfn, ==, -1);
}

static void test_qom_view(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    g_autoptr(JsonNode) u32 = NULL;
    g_autoptr(JsonNode) flag = NULL;
    g_autoptr(JsonNode) addr = NULL;
    g_autoptr(JsonNode) size = NULL;
    g_autoptr(JsonNode) big = NULL;

    qdev_prop_set_uint32(DEVICE(obj), "u32", 77);
    qdev_prop_set_int32(DEVICE(obj), "addr", (5 << 3) | 2);
    qdev_prop_set_uint64(DEVICE(obj), "u64", UINT64_MAX);
    u32 = object_property_get_json(obj, "u32", &error_abort);
    flag = object_property_get_json(obj, "flag", &error_abort);
    addr = object_property_get_json(obj, "addr", &error_abort);
    size = object_property_get_json(obj, "size", &error_abort);
    big = object_property_get_json(obj, "u64", &error_abort);
    g_assert_cmpint(json_node_get_int(u32), ==, 77);
    g_assert_true(json_node_get_boolean(flag));
    g_assert_cmpstr(json_node_get_string(addr), ==, "05.2");
    g_assert_cmpint(json_node_get_int(size), ==, 4096);
    g_assert_cmpstr(json_node_get_string(big), ==, "18446744073709551615");
    /* Native JSON values set properties too (QMP qom-set, device_add). */
    g_assert_true(object_property_set_bool(obj, "flag", false, &error_abort));
    g_assert_false(TEST_DEV(obj)->flag);
    g_assert_true(object_property_set_uint(obj, "u8", 7, &error_abort));
    g_assert_cmpuint(TEST_DEV(obj)->u8, ==, 7);
}

static void test_inherited_props_and_help(void)
{
    g_autoptr(Object) obj = OBJECT(qdev_new(TYPE_TEST_SUBDEV));
    char *buf = NULL;
    size_t len = 0;
    FILE *out;
    Error *err = NULL;

    /* A subclass sees the parent's properties and defaults plus its own. */
    g_assert_cmpuint(TEST_DEV(obj)->extra, ==, 99);
    g_assert_cmpuint(TEST_DEV(obj)->u32, ==, 32);
    g_assert_true(qdev_prop_parse(DEVICE(obj), "u32", "5", &error_abort));
    g_assert_nonnull(qdev_find_prop(DEVICE(obj), "extra"));
    g_assert_nonnull(qdev_find_prop(DEVICE(obj), "flag"));

    out = open_memstream(&buf, &len);
    g_assert_true(qdev_print_props(out, TYPE_TEST_SUBDEV, &error_abort));
    fclose(out);
    g_assert_nonnull(strstr(buf, "test-subdev options:\n"));
    g_assert_nonnull(strstr(buf, "  flag=<bool>"));
    g_assert_nonnull(strstr(buf, "- a boolean (default: on)\n"));
    g_assert_nonnull(strstr(buf, "  extra=<uint32>"));
    g_assert_nonnull(strstr(buf, "(default: 99)"));
    g_assert_nonnull(strstr(buf, "(default: 4K)"));
    g_assert_nonnull(strstr(buf, "(default: slow)"));
    g_assert_nonnull(strstr(buf, "(default: <unset>)"));
    /* Sorted: "addr" comes before "u8". */
    g_assert(strstr(buf, "  addr=") < strstr(buf, "  u8="));
    free(buf);

    g_assert_false(qdev_print_props(stdout, "no-such-dev", &err));
    assert_err_contains(&err, "'no-such-dev' is not a valid device model name",
                        NULL, NULL);
}

static void test_globals(void)
{
    g_autoptr(Object) internal = NULL;
    g_autoptr(Object) plain = NULL;
    g_autoptr(Object) bad = NULL;

    qdev_prop_register_global(TYPE_TEST_INTERNAL, "u16", "1234");
    internal = OBJECT(qdev_new(TYPE_TEST_INTERNAL));
    plain = OBJECT(qdev_new(TYPE_TEST_DEV));
    /* Only the named type (and subtypes) take the global... */
    g_assert_cmpuint(TEST_DEV(internal)->u16, ==, 1234);
    g_assert_cmpuint(TEST_DEV(plain)->u16, ==, 16);
    /* ...and a value set later still wins. */
    g_assert_true(qdev_prop_parse(DEVICE(internal), "u16", "7",
                                  &error_abort));
    g_assert_cmpuint(TEST_DEV(internal)->u16, ==, 7);

    /* A bad global value warns and leaves the default. */
    qdev_prop_register_global(TYPE_TEST_INTERNAL, "u8", "999");
    bad = OBJECT(qdev_new(TYPE_TEST_INTERNAL));
    g_assert_cmpuint(TEST_DEV(bad)->u8, ==, 8);
    g_assert_cmpuint(TEST_DEV(bad)->u16, ==, 1234);
}

static DeviceState *add_device(const char *str, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(str, "driver", &error_abort);

    return qdev_device_add(opts, errp);
}

static void expect_add_fails(const char *str, const char *a, const char *b)
{
    Error *err = NULL;
    int finalized_before = dev_finalized;
    int children_before;

    ensure_host();
    children_before = test_host->bus->num_children;
    g_assert_null(add_device(str, &err));
    assert_err_contains(&err, a, b, NULL);
    /* Nothing left behind: not on the bus, not in the tree. */
    g_assert_cmpint(test_host->bus->num_children, ==, children_before);
    g_assert_null(object_resolve_path("/machine/peripheral/bad", NULL));
    g_assert_null(object_resolve_path("/machine/peripheral-anon/device[9]",
                                      NULL));
    g_assert_cmpint(dev_finalized, >=, finalized_before);
}

static void test_device_add_errors(void)
{
    int finalized_before;

    /* Before any test-other-bus exists. */
    expect_add_fails(TYPE_TEST_ORPHAN, "No 'test-other-bus' bus found",
                     "'test-orphan-dev'");
    expect_add_fails("no-such-driver,id=bad",
                     "'no-such-driver' is not a valid device model name",
                     NULL);
    expect_add_fails("id=bad", "Parameter 'driver' is missing", NULL);
    expect_add_fails(TYPE_TEST_ABSTRACT ",id=bad", "non-abstract", NULL);
    expect_add_fails(TYPE_TEST_INTERNAL ",id=bad", "pluggable", NULL);
    expect_add_fails("test-dev,id=9bad", "Parameter 'id' expects an "
                     "identifier", NULL);
    expect_add_fails("test-dev,id=bad,bus=nowhere.0",
                     "Bus 'nowhere.0' not found", NULL);

    finalized_before = dev_finalized;
    expect_add_fails("test-dev,id=bad,bogus=1",
                     "Property 'test-dev.bogus' not found", NULL);
    expect_add_fails("test-dev,id=bad,u8=300",
                     "Property 'test-dev.u8' doesn't take value '300'",
                     "uint8");
    expect_add_fails("test-dev,id=bad,fail-realize=on",
                     "realize refused on request", NULL);
    expect_add_fails("test-dev,id=bad,addr=01.1",
                     "odd devfn 9 refused by the bus", NULL);
    /* Each of those devices was created and then fully destroyed. */
    g_assert_cmpint(dev_finalized, ==, finalized_before + 4);
}

static void test_device_add_and_unplug(void)
{
    DeviceState *named, *anon;
    Error *err = NULL;
    g_autofree char *path = NULL;
    g_autofree char *anon_path = NULL;
    int before;

    ensure_host();
    named = add_device("test-dev,id=nic0,u32=7,bus=tbus.0", &error_abort);
    g_assert_true(named->realized);
    g_assert(named->parent_bus == test_host->bus);
    g_assert_cmpuint(TEST_DEV(named)->u32, ==, 7);
    /* The bus placed it. */
    g_assert_cmpint(TEST_DEV(named)->devfn, ==, 3 << 3);
    path = object_get_canonical_path(OBJECT(named));
    g_assert_cmpstr(path, ==, "/machine/peripheral/nic0");
    g_assert(qdev_find_by_id("nic0") == named);

    anon = add_device("test-subdev", &error_abort);
    anon_path = object_get_canonical_path(OBJECT(anon));
    g_assert_true(g_str_has_prefix(anon_path,
                                   "/machine/peripheral-anon/device["));
    g_assert(anon->parent_bus == test_host->bus);

    g_assert_null(add_device("test-dev,id=nic0", &err));
    assert_err_contains(&err, "Duplicate device ID 'nic0'", NULL, NULL);

    /* Realized devices refuse property changes. */
    g_assert_false(qdev_prop_parse(named, "u32", "8", &err));
    assert_err_contains(&err, "after it was realized", NULL, NULL);

    /* The bus may veto an unplug; the device then stays. */
    vetoes = 1;
    g_assert_false(qdev_unplug(named, &err));
    assert_err_contains(&err, "unplug vetoed by the bus", NULL, NULL);
    g_assert(qdev_find_by_id("nic0") == named);

    before = dev_finalized;
    unrealized = 0;
    g_assert_true(qdev_unplug(named, &error_abort));
    g_assert_cmpint(unrealized, ==, 1);
    g_assert_cmpint(dev_finalized, ==, before + 1);
    g_assert_null(qdev_find_by_id("nic0"));
    g_assert_true(qdev_unplug(anon, &error_abort));
    g_assert_cmpint(dev_finalized, ==, before + 2);
    g_assert_cmpint(test_host->bus->num_children, ==, 0);

    /* The id is free again. */
    named = add_device("test-dev,id=nic0", &error_abort);
    g_assert_true(qdev_unplug(named, &error_abort));
}

/*
 * A parent that goes away without object_unparent (its last reference is
 * dropped) must still unrealize its realized children and take them off
 * their bus: otherwise the bus keeps a realized device whose owner is gone.
 */
static void test_parent_finalize_unrealizes(void)
{
    Object *holder = object_new(TYPE_CONTAINER);
    DeviceState *dev;
    int before = dev_finalized;

    ensure_host();
    dev = qdev_new(TYPE_TEST_DEV);
    object_property_add_child(holder, "dev", OBJECT(dev));
    g_assert_true(qdev_realize_and_unref(dev, test_host->bus,
                                         &error_abort));
    g_assert_cmpint(test_host->bus->num_children, ==, 1);

    unrealized = 0;
    object_unref(holder);
    g_assert_cmpint(unrealized, ==, 1);
    g_assert_cmpint(test_host->bus->num_children, ==, 0);
    g_assert_cmpint(dev_finalized, ==, before + 1);
}

static void test_hotplug_rules(void)
{
    DeviceState *dev;
    Error *err = NULL;

    ensure_host();
    qdev_hotplug = true;
    dev = add_device("test-dev,id=hot", &error_abort);
    g_assert_true(dev->hotplugged);
    g_assert_true(qdev_unplug(dev, &error_abort));

    test_host->bus->hotplug_allowed = false;
    g_assert_null(add_device("test-dev,id=hot", &err));
    assert_err_contains(&err, "Bus 'tbus.0' does not support hotplugging",
                        NULL, NULL);
    test_host->bus->hotplug_allowed = true;
    qdev_hotplug = false;
}

static void test_reset(void)
{
    DeviceState *dev;
    int host_before, bus_before;

    ensure_host();
    dev = add_device("test-dev,id=r0", &error_abort);
    host_before = test_host->resets;
    bus_before = bus_resets;
    qemu_devices_reset();
    /* The host is a root device; its bus and the bus's devices follow. */
    g_assert_cmpint(test_host->resets, ==, host_before + 1);
    g_assert_cmpint(bus_resets, ==, bus_before + 1);
    g_assert_cmpint(TEST_DEV(dev)->resets, ==, 1);
    g_assert_true(qdev_unplug(dev, &error_abort));
}

static int reset_handler_calls;

static void count_reset(void *opaque)
{
    reset_handler_calls += GPOINTER_TO_INT(opaque);
}

static void test_reset_handlers(void)
{
    qemu_register_reset(count_reset, GINT_TO_POINTER(1));
    qemu_register_reset(count_reset, GINT_TO_POINTER(10));
    qemu_devices_reset();
    g_assert_cmpint(reset_handler_calls, ==, 11);
    qemu_unregister_reset(count_reset, GINT_TO_POINTER(10));
    qemu_devices_reset();
    g_assert_cmpint(reset_handler_calls, ==, 12);
    qemu_unregister_reset(count_reset, GINT_TO_POINTER(1));
}

static void record_irq(void *opaque, int n, int level)
{
    TestDev *td = opaque;

    td->last_irq_line = n;
    td->last_irq_level = level;
}

static int intercepted[4];

static void intercept_irq(void *opaque, int n, int level)
{
    g_assert(opaque == intercepted);
    intercepted[n] = level ? 1 : -1;
}

static void test_gpio(void)
{
    g_autoptr(Object) src_obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    g_autoptr(Object) dst_obj = OBJECT(qdev_new(TYPE_TEST_DEV));
    DeviceState *src = DEVICE(src_obj), *dst = DEVICE(dst_obj);
    TestDev *dst_td = TEST_DEV(dst);
    Error *err = NULL;

    /* Handlers get the device itself as opaque. */
    qdev_init_gpio_in(dst, record_irq, 2);
    qdev_init_gpio_in(dst, record_irq, 1);
    qdev_init_gpio_out(src, TEST_DEV(src)->out, 2);
    qdev_connect_gpio_out(src, 1, qdev_get_gpio_in(dst, 2));

    qemu_irq_raise(TEST_DEV(src)->out[1]);
    g_assert_cmpint(dst_td->last_irq_line, ==, 2);
    g_assert_cmpint(dst_td->last_irq_level, ==, 1);
    /* An unconnected output is silently ignored. */
    qemu_irq_raise(TEST_DEV(src)->out[0]);
    qemu_irq_lower(TEST_DEV(src)->out[1]);
    g_assert_cmpint(dst_td->last_irq_level, ==, 0);

    g_assert_true(qdev_intercept_gpio_in(dst, intercept_irq, intercepted,
                                         &error_abort));
    qemu_irq_raise(TEST_DEV(src)->out[1]);
    g_assert_cmpint(intercepted[2], ==, 1);
    g_assert_cmpint(dst_td->last_irq_level, ==, 0);

    g_assert_true(qdev_intercept_gpio_out(src, intercept_irq, intercepted,
                                          &error_abort));
    qemu_irq_lower(TEST_DEV(src)->out[0]);
    g_assert_cmpint(intercepted[0], ==, -1);

    g_assert_false(qdev_intercept_gpio_in(src, intercept_irq, NULL, &err));
    assert_err_contains(&err, "has no GPIO input lines", NULL, NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/qdev/props/defaults-applied", test_defaults);
    g_test_add_func("/qdev/props/parse-every-type", test_parse_good);
    g_test_add_func("/qdev/props/pci-devfn-and-host-address",
                    test_parse_pci_addresses);
    g_test_add_func("/qdev/props/bad-values-named", test_parse_bad);
    g_test_add_func("/qdev/props/qom-get-json", test_qom_view);
    g_test_add_func("/qdev/props/inherited-and-help",
                    test_inherited_props_and_help);
    g_test_add_func("/qdev/props/globals-override-defaults", test_globals);
    g_test_add_func("/qdev/device-add/failures-leave-nothing",
                    test_device_add_errors);
    g_test_add_func("/qdev/device-add/paths-and-unplug",
                    test_device_add_and_unplug);
    g_test_add_func("/qdev/device-add/hotplug-rules", test_hotplug_rules);
    g_test_add_func("/qdev/unparent/parent-finalize-unrealizes-children",
                    test_parent_finalize_unrealizes);
    g_test_add_func("/qdev/reset/tree-order", test_reset);
    g_test_add_func("/qdev/reset/handlers", test_reset_handlers);
    g_test_add_func("/qdev/gpio/connect-and-intercept", test_gpio);
    return g_test_run();
}
