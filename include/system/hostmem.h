/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory back-ends (-object memory-backend-ram|memfd|file): the host
 * memory behind guest RAM, chosen by the user instead of Conduit's
 * default memfd.  hugetlbfs files and MFD_HUGETLB memfds give huge
 * pages; prealloc=on touches every page before the guest runs (and fails
 * at start, not later with SIGBUS, when the host has too few);
 * share=off maps privately.  The machine takes one as its RAM
 * (-machine memory-backend=ID, -mem-path), or one per -numa node.
 */
#ifndef SYSTEM_HOSTMEM_H
#define SYSTEM_HOSTMEM_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"

#define TYPE_MEMORY_BACKEND "memory-backend"
#define TYPE_MEMORY_BACKEND_RAM "memory-backend-ram"
#define TYPE_MEMORY_BACKEND_MEMFD "memory-backend-memfd"
#define TYPE_MEMORY_BACKEND_FILE "memory-backend-file"

typedef struct HostMemoryBackend HostMemoryBackend;

/* The back-end -object id=@id created, or NULL with errp set. */
HostMemoryBackend *host_memory_backend_find(const char *id, Error **errp);
/* Its RAM region (allocated when the object was completed). */
MemoryRegion *host_memory_backend_get_memory(HostMemoryBackend *be);
uint64_t host_memory_backend_size(HostMemoryBackend *be);
/* The page size backing it (4 KiB, or the huge page size). */
uint64_t host_memory_backend_pagesize(HostMemoryBackend *be);
/*
 * Each back-end backs one thing: false with errp naming @user if it is
 * taken already.
 */
bool host_memory_backend_claim(HostMemoryBackend *be, const char *user,
                               Error **errp);

/* -mem-path and -mem-prealloc: the machine's implicit back-end. */
void host_memory_set_mem_path(const char *path);
void host_memory_set_prealloc(bool on);
/*
 * The machine's RAM from -mem-path/-mem-prealloc, when either was given:
 * a memory-backend-file (or -ram) of @size, or NULL (errp unset: neither
 * was given; set: it could not be made).
 */
HostMemoryBackend *host_memory_implicit_backend(uint64_t size, Error **errp);

#endif
