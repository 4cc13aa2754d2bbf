/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vhost dirty log's layout and harvest (vhost-log.h), from the
 * description of VHOST_SET_LOG_BASE and VHOST_F_LOG_ALL in
 * <linux/vhost.h>.
 */
#include "qemu/osdep.h"
#include "hw/virtio/vhost-log.h"

size_t vhost_log_words(uint64_t end)
{
    uint64_t words = end / VHOST_LOG_WORD_SPAN +
                     !!(end % VHOST_LOG_WORD_SPAN);

    return MAX(words, 1);
}

uint64_t vhost_log_harvest(uint64_t *log, size_t nwords, VhostLogPageFn fn,
                           void *opaque)
{
    uint64_t pages = 0;

    for (size_t w = 0; w < nwords; w++) {
        uint64_t bits;

        /* A plain read first: most words are zero, and stay unwritten. */
        if (!__atomic_load_n(&log[w], __ATOMIC_RELAXED)) {
            continue;
        }
        bits = __atomic_exchange_n(&log[w], 0, __ATOMIC_ACQ_REL);
        while (bits) {
            unsigned b = __builtin_ctzll(bits);

            bits &= bits - 1;
            fn((w * 64 + b) * VHOST_LOG_PAGE_SIZE, opaque);
            pages++;
        }
    }
    return pages;
}
