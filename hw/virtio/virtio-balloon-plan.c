/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-balloon's decisions (virtio-balloon.h), from the virtio 1.2
 * specification, 5.5, and QEMU's documentation of QMP "balloon".
 */
#include "qemu/osdep.h"
#include <linux/virtio_balloon.h>
#include "hw/virtio/virtio-balloon.h"

uint32_t virtio_balloon_target_pages(uint64_t ram_size, uint64_t target)
{
    if (target > ram_size) {
        target = ram_size;
    }
    return MIN((ram_size - target) >> VIRTIO_BALLOON_PFN_SHIFT, UINT32_MAX);
}

void virtio_balloon_map_queues(uint64_t features, bool have_reporting,
                               int role_queue[4])
{
    int q = 0;

    role_queue[0] = q++;
    role_queue[1] = q++;
    role_queue[2] = (features & (1ull << VIRTIO_BALLOON_F_STATS_VQ)) ? q++
                                                                       : -1;
    /* Free page hinting is never offered: it numbers no queue. */
    role_queue[3] = have_reporting &&
                    (features & (1ull << VIRTIO_BALLOON_F_REPORTING)) ? q++
                                                                        : -1;
}

size_t virtio_balloon_next_run(const uint32_t *pfns, size_t n, size_t i,
                               uint64_t *first, uint64_t *count)
{
    size_t j = i + 1;

    *first = pfns[i];
    while (j < n && (uint64_t)pfns[j] == *first + (j - i)) {
        j++;
    }
    *count = j - i;
    return j;
}
