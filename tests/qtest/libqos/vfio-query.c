/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos x-query-vfio helpers (see vfio-query.h).
 */
#include "qemu/osdep.h"
#include "libqos/vfio-query.h"

int qvfio_query_count(QTestState *qts)
{
    JsonNode *ret = qtest_qmp_assert_success(qts,
                                             "{'execute': 'x-query-vfio'}");
    int n = json_array_get_length(json_node_get_array(ret));

    json_node_unref(ret);
    return n;
}

JsonObject *qvfio_query_device(QTestState *qts)
{
    JsonNode *ret = qtest_qmp_assert_success(qts,
                                             "{'execute': 'x-query-vfio'}");
    JsonArray *arr = json_node_get_array(ret);
    JsonObject *dev;

    g_assert_cmpint(json_array_get_length(arr), ==, 1);
    dev = json_object_ref(json_array_get_object_element(arr, 0));
    json_node_unref(ret);
    return dev;
}

JsonObject *qvfio_query_bar(JsonObject *dev, int nr)
{
    JsonArray *bars = json_object_get_array_member(dev, "bars");
    guint i;

    for (i = 0; i < json_array_get_length(bars); i++) {
        JsonObject *b = json_array_get_object_element(bars, i);

        if (json_object_get_int_member(b, "bar") == nr) {
            return b;
        }
    }
    return NULL;
}

bool qvfio_bar_covers(JsonObject *bar, const char *key, uint64_t off)
{
    JsonArray *arr = json_object_get_array_member(bar, key);
    guint i;

    for (i = 0; i < json_array_get_length(arr); i++) {
        JsonObject *r = json_array_get_object_element(arr, i);
        uint64_t start = json_object_get_int_member(r, "offset");
        uint64_t size = json_object_get_int_member(r, "size");

        if (off >= start && off - start < size) {
            return true;
        }
    }
    return false;
}
