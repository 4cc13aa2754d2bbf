/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query-hotpluggable-cpus on the pc and q35 machines: one entry per
 * vCPU -smp maxcpus allows, the last first, with QEMU's x86 shape
 * (type, vcpus-count, props with socket/die/core/thread ids) and the
 * qom-path of the vCPUs that are present, which is a real object.
 */
#include "qemu/osdep.h"
#include "libqtest.h"

static JsonArray *query(QTestState *qts, JsonNode **keep)
{
    *keep = qtest_qmp_assert_success(qts, "{'execute':"
                                     "'query-hotpluggable-cpus'}");
    return json_node_get_array(*keep);
}

static void check_entry(QTestState *qts, JsonObject *e, const char *type,
                        int socket, int die, int core, int thread,
                        int device)
{
    JsonObject *props = json_object_get_object_member(e, "props");

    g_assert_cmpstr(json_object_get_string_member(e, "type"), ==, type);
    g_assert_cmpint(json_object_get_int_member(e, "vcpus-count"), ==, 1);
    g_assert_cmpint(json_object_get_int_member(props, "socket-id"), ==,
                    socket);
    if (die < 0) {
        g_assert_false(json_object_has_member(props, "die-id"));
        g_assert_cmpuint(json_object_get_size(props), ==, 3);
    } else {
        g_assert_cmpint(json_object_get_int_member(props, "die-id"), ==, die);
        g_assert_cmpuint(json_object_get_size(props), ==, 4);
    }
    g_assert_cmpint(json_object_get_int_member(props, "core-id"), ==, core);
    g_assert_cmpint(json_object_get_int_member(props, "thread-id"), ==,
                    thread);
    if (device < 0) {
        g_assert_false(json_object_has_member(e, "qom-path"));
    } else {
        g_autofree char *want = g_strdup_printf(
            "/machine/unattached/device[%d]", device);
        const char *path = json_object_get_string_member(e, "qom-path");
        JsonNode *t;

        g_assert_cmpstr(path, ==, want);
        /* The path names a real object of the listed type. */
        t = qtest_qmp_assert_success(qts, "{'execute':'qom-get','arguments':"
                                     "{'path':'%s','property':'type'}}",
                                     path);
        g_assert_cmpstr(json_node_get_string(t), ==, type);
        json_node_unref(t);
    }
}

static void test_shape(void)
{
    const char *machines[] = { "pc", "q35" };

    for (int m = 0; m < 2; m++) {
        QTestState *qts = qtest_initf("-M %s -smp 2,maxcpus=4,sockets=2,"
                                      "cores=2", machines[m]);
        JsonNode *keep;
        JsonArray *a = query(qts, &keep);
        const char *t = "qemu64-x86_64-cpu";

        g_assert_cmpuint(json_array_get_length(a), ==, 4);
        check_entry(qts, json_array_get_object_element(a, 0), t, 1, -1, 1, 0,
                    -1);
        check_entry(qts, json_array_get_object_element(a, 1), t, 1, -1, 0, 0,
                    -1);
        check_entry(qts, json_array_get_object_element(a, 2), t, 0, -1, 1, 0,
                    1);
        check_entry(qts, json_array_get_object_element(a, 3), t, 0, -1, 0, 0,
                    0);
        json_node_unref(keep);
        /* Listing them is not hot-plug: device_add of one is refused. */
        {
            JsonObject *r = qtest_qmp(qts, "{'execute':'device_add',"
                                      "'arguments':{'driver':'%s',"
                                      "'socket-id':1,'core-id':1,"
                                      "'thread-id':0}}", t);

            g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
            json_object_unref(r);
        }
        a = query(qts, &keep);
        g_assert_false(json_object_has_member(
                           json_array_get_object_element(a, 0), "qom-path"));
        json_node_unref(keep);
        qtest_quit(qts);
    }
}

static void test_dies_and_threads(void)
{
    QTestState *qts = qtest_init("-cpu max -smp 3,maxcpus=8,sockets=2,dies=2,"
                                 "cores=1,threads=2");
    JsonNode *keep;
    JsonArray *a = query(qts, &keep);
    const char *t = "max-x86_64-cpu";

    g_assert_cmpuint(json_array_get_length(a), ==, 8);
    /* Index 7: socket 1, die 1, thread 1; index 2: socket 0, die 1. */
    check_entry(qts, json_array_get_object_element(a, 0), t, 1, 1, 0, 1, -1);
    check_entry(qts, json_array_get_object_element(a, 5), t, 0, 1, 0, 0, 2);
    check_entry(qts, json_array_get_object_element(a, 6), t, 0, 0, 0, 1, 1);
    check_entry(qts, json_array_get_object_element(a, 7), t, 0, 0, 0, 0, 0);
    json_node_unref(keep);
    qtest_quit(qts);
}

static void test_default_one_cpu(void)
{
    QTestState *qts = qtest_init("-cpu host");
    JsonNode *keep;
    JsonArray *a = query(qts, &keep);

    g_assert_cmpuint(json_array_get_length(a), ==, 1);
    check_entry(qts, json_array_get_object_element(a, 0), "host-x86_64-cpu",
                0, -1, 0, 0, 0);
    json_node_unref(keep);
    qtest_quit(qts);
}

static void test_no_cpus_machine(void)
{
    QTestState *qts = qtest_init("-M none");
    JsonObject *r = qtest_qmp(qts, "{'execute':'query-hotpluggable-cpus'}");

    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r),
                            "query-hotpluggable-cpus"));
    json_object_unref(r);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hotpluggable-cpus/shape", test_shape);
    g_test_add_func("/hotpluggable-cpus/dies-and-threads",
                    test_dies_and_threads);
    g_test_add_func("/hotpluggable-cpus/default-one-cpu",
                    test_default_one_cpu);
    g_test_add_func("/hotpluggable-cpus/none-machine", test_no_cpus_machine);
    return g_test_run();
}
