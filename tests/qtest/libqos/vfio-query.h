/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos x-query-vfio: the one vfio device's answer, a BAR of it, and
 * whether an offset lies in its "mapped" or "trapped" ranges.
 */
#ifndef LIBQOS_VFIO_QUERY_H
#define LIBQOS_VFIO_QUERY_H

#include <json-glib/json-glib.h>
#include "libqtest.h"

/* The number of vfio devices x-query-vfio reports. */
int qvfio_query_count(QTestState *qts);
/* The only vfio device's object (asserts there is one); unref it. */
JsonObject *qvfio_query_device(QTestState *qts);
/* BAR @nr's object inside @dev (borrowed), or NULL if it has none. */
JsonObject *qvfio_query_bar(JsonObject *dev, int nr);
/* Whether BAR offset @off lies in @bar's @key ranges ("mapped"...). */
bool qvfio_bar_covers(JsonObject *bar, const char *key, uint64_t off);

#endif
