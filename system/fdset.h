/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File descriptor sets (-add-fd): descriptors a parent process hands
 * over, opened later by path as /dev/fdset/N.  This is how libvirt gives
 * Conduit files it opened itself (the serial log, for example).
 */
#ifndef SYSTEM_FDSET_H
#define SYSTEM_FDSET_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

/* Adopts @fd (made close-on-exec) into set @set_id. */
bool fdset_add_fd(int64_t set_id, int fd, const char *opaque, Error **errp);
/* Parses "-add-fd fd=M,set=N[,opaque=S]" and adopts the descriptor. */
bool fdset_parse_add_fd(const char *arg, Error **errp);
/*
 * open(2) that understands /dev/fdset/N: a duplicate of a descriptor of
 * set N whose access mode matches @flags (O_APPEND is applied to it).
 * Other paths are opened normally.  Returns -1 with errp set on failure.
 */
int fdset_open(const char *path, int flags, mode_t mode, Error **errp);

/* Calls @fn for every descriptor of every set, in the order added. */
typedef void FdsetMemberFn(int64_t set_id, int fd, const char *member_opaque,
                           void *opaque);
void fdset_foreach(FdsetMemberFn *fn, void *opaque);

#endif
