/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory shared with an untrusted peer through an fd (vfio-user DMA
 * ranges, BAR region fds).
 *
 * A mapping of a file faults with SIGBUS once the file shrinks below it,
 * and the peer holding the fd can shrink it at any time.  Two defences:
 *
 * - Seal: qemu_peer_fd_seal_shrink() makes a memfd refuse to shrink for
 *   everyone, for good.  Check the size after sealing, then map.
 * - Guard, for fds that cannot be sealed (regular files, memfds created
 *   without MFD_ALLOW_SEALING): qemu_peer_mem_guard() registers a mapping
 *   with a process-wide SIGBUS handler.  A fault there is repaired by
 *   mapping a private zero page over the faulting page, so the access
 *   completes harmlessly, and the slot is marked faulted; the owner polls
 *   qemu_peer_mem_faulted() at a safe point and drops the peer.  SIGBUS
 *   anywhere else goes to the handler that was installed before ours
 *   (e.g. ASan's) or kills the process as usual.
 */
#ifndef QEMU_PEER_MEM_H
#define QEMU_PEER_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many mappings can be guarded at once, process-wide. */
#define QEMU_PEER_MEM_GUARD_SLOTS 1024

/*
 * True if fd is now sealed against shrinking (F_SEAL_SHRINK was there or
 * could be added); false if it cannot be (not a memfd, or its seals are
 * sealed).  Sets no error: the caller picks the fallback.
 */
bool qemu_peer_fd_seal_shrink(int fd);

/*
 * Guards [base, base + len) (base page-aligned).  Returns a slot >= 0, or
 * -ENOSPC when every slot is taken, or -errno if the handler cannot be
 * installed.  Thread-safe.
 */
int qemu_peer_mem_guard(void *base, size_t len);
/*
 * Releases a slot (no-op for a negative one).  Call it before munmap and
 * only when no thread can still touch the mapping.
 */
void qemu_peer_mem_unguard(int slot);
/* Whether an access to the slot's mapping hit a missing page. */
bool qemu_peer_mem_faulted(int slot);

#endif
