/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option parsing: key=val lists, escaping, implied keys, help, JSON
 * flattening and the number/size/bool parsers.
 */
#include "qemu/osdep.h"
#include "qemu/option.h"
#include "qapi/error.h"

static void test_parse_basic(void)
{
    g_autoptr(QemuOpts) opts = NULL;

    opts = qemu_opts_parse("vfio-pci,host=0000:01:00.0,id=nic0,x-no-mmap=on",
                           "driver", &error_abort);
    g_assert_cmpstr(qemu_opts_id(opts), ==, "nic0");
    g_assert_cmpstr(qemu_opt_get(opts, "driver"), ==, "vfio-pci");
    g_assert_cmpstr(qemu_opt_get(opts, "host"), ==, "0000:01:00.0");
    g_assert_cmpstr(qemu_opt_get(opts, "x-no-mmap"), ==, "on");
    g_assert_null(qemu_opt_get(opts, "id"));
    g_assert_null(qemu_opt_get(opts, "missing"));
    g_assert_cmpuint(qemu_opts_count(opts), ==, 3);
    g_assert_cmpstr(qemu_opts_key(opts, 0), ==, "driver");
    g_assert_cmpstr(qemu_opts_key(opts, 2), ==, "x-no-mmap");
    g_assert_false(qemu_opts_has_help(opts));
}

static void test_parse_escaped_comma(void)
{
    g_autoptr(QemuOpts) opts = NULL;
    g_autofree char *str = NULL;

    opts = qemu_opts_parse("path=/tmp/a,,b,,,,c,x=1", NULL, &error_abort);
    g_assert_cmpstr(qemu_opt_get(opts, "path"), ==, "/tmp/a,b,,c");
    g_assert_cmpstr(qemu_opt_get(opts, "x"), ==, "1");
    str = qemu_opts_to_string(opts);
    g_assert_cmpstr(str, ==, "path=/tmp/a,,b,,,,c,x=1");
}

static void test_parse_implied_key(void)
{
    g_autoptr(QemuOpts) m = qemu_opts_parse("pc", "type", &error_abort);
    g_autoptr(QemuOpts) n = qemu_opts_parse("pc,accel=qtest", "type",
                                            &error_abort);
    g_autoptr(QemuOpts) k = qemu_opts_parse("size=64M", "size",
                                            &error_abort);
    /* Without an implied key, a bare word is a flag. */
    g_autoptr(QemuOpts) f = qemu_opts_parse("server,wait=off", NULL,
                                            &error_abort);

    g_assert_cmpstr(qemu_opt_get(m, "type"), ==, "pc");
    g_assert_cmpstr(qemu_opt_get(n, "type"), ==, "pc");
    g_assert_cmpstr(qemu_opt_get(n, "accel"), ==, "qtest");
    g_assert_cmpstr(qemu_opt_get(k, "size"), ==, "64M");
    g_assert_cmpuint(qemu_opts_count(k), ==, 1);
    g_assert_cmpstr(qemu_opt_get(f, "server"), ==, "on");
    g_assert_cmpstr(qemu_opt_get(f, "wait"), ==, "off");
}

static void test_parse_help(void)
{
    g_autoptr(QemuOpts) a = qemu_opts_parse("help", "driver", &error_abort);
    g_autoptr(QemuOpts) b = qemu_opts_parse("vfio-pci,help", "driver",
                                            &error_abort);
    g_autoptr(QemuOpts) c = qemu_opts_parse("?", "type", &error_abort);
    g_autoptr(QemuOpts) d = qemu_opts_parse("e1000,helper=x", "driver",
                                            &error_abort);

    g_assert_true(qemu_opts_has_help(a));
    g_assert_null(qemu_opt_get(a, "driver"));
    g_assert_true(qemu_opts_has_help(b));
    g_assert_cmpstr(qemu_opt_get(b, "driver"), ==, "vfio-pci");
    g_assert_true(qemu_opts_has_help(c));
    g_assert_false(qemu_opts_has_help(d));
}

static void test_parse_errors(void)
{
    Error *err = NULL;

    g_assert_null(qemu_opts_parse("a=1,id=x,id=y", NULL, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "'id'"));
    error_free(err);
    err = NULL;
    g_assert_null(qemu_opts_parse("a=1,=2", NULL, &err));
    g_assert_nonnull(err);
    error_free(err);
}

static void test_repeat_and_del(void)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse("a=1,b=2,a=3", NULL,
                                               &error_abort);
    g_autofree char *stolen = NULL;

    g_assert_cmpstr(qemu_opt_get(opts, "a"), ==, "3");
    g_assert_cmpint(qemu_opt_del(opts, "a"), ==, 2);
    g_assert_false(qemu_opt_has(opts, "a"));
    g_assert_cmpuint(qemu_opts_count(opts), ==, 1);
    stolen = qemu_opt_steal(opts, "b");
    g_assert_cmpstr(stolen, ==, "2");
    g_assert_cmpuint(qemu_opts_count(opts), ==, 0);
}

static void test_json_flatten(void)
{
    g_autoptr(QemuOpts) opts = NULL;

    opts = qemu_opts_from_json("{\"driver\": \"vfio-user-pci\", \"id\": \"d0\","
                               " \"socket\": {\"type\": \"unix\","
                               " \"path\": \"/x\"}, \"x-msix-relocation\": 3,"
                               " \"x-no-mmap\": true, \"flag\": false}",
                               &error_abort);
    g_assert_cmpstr(qemu_opts_id(opts), ==, "d0");
    g_assert_cmpstr(qemu_opt_get(opts, "driver"), ==, "vfio-user-pci");
    g_assert_cmpstr(qemu_opt_get(opts, "socket.type"), ==, "unix");
    g_assert_cmpstr(qemu_opt_get(opts, "socket.path"), ==, "/x");
    g_assert_cmpstr(qemu_opt_get(opts, "x-msix-relocation"), ==, "3");
    g_assert_cmpstr(qemu_opt_get(opts, "x-no-mmap"), ==, "on");
    g_assert_true(qemu_opt_get_bool(opts, "x-no-mmap", false, &error_abort));
    g_assert_false(qemu_opt_get_bool(opts, "flag", true, &error_abort));
    g_assert_null(qemu_opt_get(opts, "socket"));
}

/* "backing": null (libvirt's -blockdev for an image without one). */
static void test_json_null_backing(void)
{
    g_autoptr(QemuOpts) opts = NULL;

    opts = qemu_opts_from_json("{\"driver\": \"qcow2\", \"file\": \"f\","
                               " \"backing\": null}", &error_abort);
    g_assert_cmpstr(qemu_opt_get(opts, "backing"), ==, "");
    qemu_opts_free(opts);
    opts = qemu_opts_from_json("{\"driver\": \"qcow2\", \"file\": {"
                               "\"driver\": \"qcow2\", \"backing\": null}}",
                               &error_abort);
    g_assert_cmpstr(qemu_opt_get(opts, "file.backing"), ==, "");
}

static void test_json_errors(void)
{
    static const char *const bad[] = {
        "{\"driver\": ",            /* truncated */
        "[1, 2]",                   /* not an object */
        "\"str\"",
        "{\"a\": [1]}",             /* lists unsupported */
        "{\"a\": null}",
        "{\"id\": 5}",              /* id must be a string */
        "",
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        Error *err = NULL;
        g_assert_null(qemu_opts_from_json(bad[i], &err));
        g_assert_nonnull(err);
        error_free(err);
    }
}

static void test_sizes(void)
{
    static const struct {
        const char *str;
        uint64_t val;
    } good[] = {
        { "0", 0 }, { "4096", 4096 }, { "4k", 4096 }, { "4K", 4096 },
        { "64M", 64ULL << 20 }, { "1G", 1ULL << 30 }, { "2T", 2ULL << 40 },
        { "0x1000", 0x1000 }, { "512B", 512 },
    };
    static const char *const bad[] = {
        "", "M", "64X", "64MB", "-1", "1.5G", " 4", "99999999999999999999",
        "16E", "0x",
    };
    uint64_t v;

    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        g_assert_true(qemu_strtosz(good[i].str, &v, &error_abort));
        g_assert_cmpuint(v, ==, good[i].val);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        Error *err = NULL;
        g_assert_false(qemu_strtosz(bad[i], &v, &err));
        g_assert_nonnull(err);
        error_free(err);
    }
    g_assert_true(qemu_strtosz_MiB("512", &v, &error_abort));
    g_assert_cmpuint(v, ==, 512ULL << 20);
    g_assert_true(qemu_strtosz_MiB("2G", &v, &error_abort));
    g_assert_cmpuint(v, ==, 2ULL << 30);
}

static void test_bools(void)
{
    static const char *const on[] = { "on", "yes", "true", "ON", "True" };
    static const char *const off[] = { "off", "no", "false", "OFF" };
    bool b;
    Error *err = NULL;

    for (size_t i = 0; i < G_N_ELEMENTS(on); i++) {
        b = false;
        g_assert_true(qemu_strtobool(on[i], &b, &error_abort));
        g_assert_true(b);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(off); i++) {
        b = true;
        g_assert_true(qemu_strtobool(off[i], &b, &error_abort));
        g_assert_false(b);
    }
    g_assert_false(qemu_strtobool("1", &b, &err));
    g_assert_nonnull(err);
    error_free(err);
}

static void test_numbers(void)
{
    uint64_t u;
    int64_t i;
    Error *err = NULL;

    g_assert_true(qemu_strtou64("0x10", &u, &error_abort));
    g_assert_cmpuint(u, ==, 16);
    g_assert_true(qemu_strtou64("18446744073709551615", &u, &error_abort));
    g_assert_cmpuint(u, ==, UINT64_MAX);
    g_assert_false(qemu_strtou64("18446744073709551616", &u, NULL));
    g_assert_false(qemu_strtou64("12a", &u, NULL));
    g_assert_false(qemu_strtou64("-1", &u, NULL));
    g_assert_true(qemu_strtoi64("-9223372036854775808", &i, &error_abort));
    g_assert_cmpint(i, ==, INT64_MIN);
    g_assert_false(qemu_strtoi64("9223372036854775808", &i, NULL));
    g_assert_true(qemu_strtoi64("-0x10", &i, &error_abort));
    g_assert_cmpint(i, ==, -16);
    g_assert_false(qemu_strtoi64("", &i, &err));
    g_assert_nonnull(err);
    error_free(err);
}

static void test_typed_getters(void)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse("n=0x20,s=64M,b=no,bad=zz",
                                               NULL, &error_abort);
    Error *err = NULL;

    g_assert_cmpuint(qemu_opt_get_number(opts, "n", 0, &error_abort), ==, 32);
    g_assert_cmpuint(qemu_opt_get_size(opts, "s", 0, &error_abort), ==,
                     64ULL << 20);
    g_assert_false(qemu_opt_get_bool(opts, "b", true, &error_abort));
    g_assert_cmpuint(qemu_opt_get_number(opts, "missing", 7, &error_abort),
                     ==, 7);
    qemu_opt_get_number(opts, "bad", 0, &err);
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Parameter 'bad' expects a number");
    error_free(err);
    err = NULL;
    qemu_opt_get_bool(opts, "bad", false, &err);
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Parameter 'bad' expects 'on' or 'off'");
    error_free(err);
}

static bool count_cb(void *opaque, const char *key, const char *value,
                     Error **errp)
{
    GString *acc = opaque;

    if (!strcmp(key, "stop")) {
        error_setg(errp, "stopped at %s", value);
        return false;
    }
    g_string_append_printf(acc, "%s:%s;", key, value);
    return true;
}

static void test_foreach(void)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse("a=1,b=2,stop=3,c=4", NULL,
                                               &error_abort);
    g_autoptr(GString) acc = g_string_new(NULL);
    Error *err = NULL;

    g_assert_false(qemu_opt_foreach(opts, count_cb, acc, &err));
    g_assert_cmpstr(acc->str, ==, "a:1;b:2;");
    g_assert_cmpstr(error_get_pretty(err), ==, "stopped at 3");
    error_free(err);
}

/* JSON values keep their type; the declared type decides what fits. */
static void test_json_kinds(void)
{
    g_autoptr(QemuOpts) opts = qemu_opts_from_json(
        "{\"s\":\"x\",\"i\":12,\"d\":1.5,\"b\":true,\"o\":{},"
        "\"n\":{\"k\":false}}", &error_abort);
    g_autoptr(QemuOpts) text = qemu_opts_parse("s=x,i=12,b=on", NULL,
                                               &error_abort);
    static const QemuOptKind want[] = {
        QEMU_OPT_JSON_STRING, QEMU_OPT_JSON_INT, QEMU_OPT_JSON_NUMBER,
        QEMU_OPT_JSON_BOOL, QEMU_OPT_JSON_OBJECT, QEMU_OPT_JSON_BOOL,
    };
    static const QemuOptType types[] = {
        { "s", "str" }, { "i", "uint16" }, { "d", "number" },
        { "b", "bool" }, { "k", "bool" }, { NULL, NULL },
    };
    static const QemuOptType wrong[] = {
        { "i", "str" }, { NULL, NULL },
    };
    Error *err = NULL;

    g_assert_cmpuint(qemu_opts_count(opts), ==, G_N_ELEMENTS(want));
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        g_assert_cmpint(qemu_opts_kind(opts, i), ==, want[i]);
    }
    g_assert_cmpstr(qemu_opts_key(opts, 4), ==, "o");
    g_assert_cmpstr(qemu_opts_key(opts, 5), ==, "n.k");
    for (size_t i = 0; i < qemu_opts_count(text); i++) {
        g_assert_cmpint(qemu_opts_kind(text, i), ==, QEMU_OPT_TEXT);
    }
    /* Text fits anything; JSON only its own type. */
    g_assert_true(qemu_opt_kind_check("x", QEMU_OPT_TEXT, "bool", NULL));
    g_assert_true(qemu_opt_kind_check("x", QEMU_OPT_JSON_INT, "int32",
                                      NULL));
    g_assert_true(qemu_opt_kind_check("x", QEMU_OPT_JSON_STRING,
                                      "OnOffAuto", NULL));
    g_assert_false(qemu_opt_kind_check("x", QEMU_OPT_JSON_STRING, "uint8",
                                       NULL));
    g_assert_false(qemu_opt_kind_check("x", QEMU_OPT_JSON_NUMBER, "size",
                                       NULL));
    g_assert_false(qemu_opt_kind_check("x", QEMU_OPT_JSON_OBJECT, "str",
                                       NULL));
    g_assert_false(qemu_opt_kind_check("serial", QEMU_OPT_JSON_INT, "str",
                                       &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Parameter 'serial' expects a string (str)");
    error_free(err);
    err = NULL;
    /* The {} is refused unless the key takes an object ("o" does not). */
    g_assert_false(qemu_opts_check_types(opts, types, "n.", &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "Parameter 'o'"));
    error_free(err);
    err = NULL;
    qemu_opt_del(opts, "o");
    g_assert_true(qemu_opts_check_types(opts, types, "n.", &error_abort));
    g_assert_false(qemu_opts_check_types(opts, wrong, NULL, &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Parameter 'i' expects a string (str)");
    error_free(err);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/option/parse/basic", test_parse_basic);
    g_test_add_func("/option/parse/escaped-comma", test_parse_escaped_comma);
    g_test_add_func("/option/parse/implied-key", test_parse_implied_key);
    g_test_add_func("/option/parse/help", test_parse_help);
    g_test_add_func("/option/parse/errors", test_parse_errors);
    g_test_add_func("/option/repeat-and-del", test_repeat_and_del);
    g_test_add_func("/option/json/flatten-nested", test_json_flatten);
    g_test_add_func("/option/json/null-backing", test_json_null_backing);
    g_test_add_func("/option/json/bad-input-rejected", test_json_errors);
    g_test_add_func("/option/strtosz/suffixes-and-errors", test_sizes);
    g_test_add_func("/option/strtobool/spellings", test_bools);
    g_test_add_func("/option/strtou64/range-and-garbage", test_numbers);
    g_test_add_func("/option/get/typed-with-errors", test_typed_getters);
    g_test_add_func("/option/foreach/stops-on-error", test_foreach);
    g_test_add_func("/option/json/kinds-and-types", test_json_kinds);
    return g_test_run();
}
