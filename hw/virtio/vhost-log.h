/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vhost dirty log (<linux/vhost.h>, VHOST_SET_LOG_BASE): one bit per
 * VHOST_LOG_PAGE of guest-physical address space, bit b of 64-bit word w
 * standing for the page at (w * 64 + b) * VHOST_LOG_PAGE.  The kernel
 * sets bits with atomic ORs while the guest runs; Conduit takes each word
 * with an atomic exchange, so no bit set meanwhile is lost.
 */
#ifndef HW_VIRTIO_VHOST_LOG_H
#define HW_VIRTIO_VHOST_LOG_H

#include <stddef.h>
#include <stdint.h>

#define VHOST_LOG_PAGE_SIZE 0x1000ull
#define VHOST_LOG_WORD_SPAN (64 * VHOST_LOG_PAGE_SIZE)

/* Words a log covering guest-physical [0, end) needs (at least one). */
size_t vhost_log_words(uint64_t end);

typedef void (*VhostLogPageFn)(uint64_t gpa, void *opaque);

/*
 * Takes every bit set in @log (@nwords words), clearing it, and calls
 * @fn once per page, in ascending address order; returns the number of
 * pages.
 */
uint64_t vhost_log_harvest(uint64_t *log, size_t nwords, VhostLogPageFn fn,
                           void *opaque);

#endif
