/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memory-backend-ram, -memfd and -file; see include/system/hostmem.h.
 */
#include "qemu/osdep.h"
#include "system/hostmem.h"
#include "system/memory.h"
#include "system/user-creatable.h"
#include "qemu/option.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "qom/object.h"
#include <sys/mman.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "trace.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#define MFD_HUGE_SHIFT 26

typedef enum HostMemKind {
    HOSTMEM_RAM,
    HOSTMEM_MEMFD,
    HOSTMEM_FILE,
} HostMemKind;

struct HostMemoryBackend {
    Object parent_obj;

    HostMemKind kind;
    uint64_t size;
    bool share, share_set;
    bool prealloc;
    uint64_t prealloc_threads;
    bool dump, merge;
    char *host_nodes, *policy;
    /* memfd */
    bool hugetlb, seal;
    uint64_t hugetlbsize;
    /* file */
    char *mem_path;
    uint64_t align;
    bool discard_data, readonly, pmem;

    uint64_t pagesize;
    MemoryRegion mr;
    bool allocated;
    char *user;                 /* who backs guest RAM with it */
};

#define MEMORY_BACKEND(obj) \
    OBJECT_CHECK(HostMemoryBackend, (obj), TYPE_MEMORY_BACKEND)

static char *mem_path_opt;
static bool prealloc_opt;
static unsigned implicit_count;

/* ---- properties ---- */

static char *hostmem_get_size(Object *obj, Error **errp)
{
    return g_strdup_printf("%" PRIu64, MEMORY_BACKEND(obj)->size);
}

static bool hostmem_set_size(Object *obj, const char *value, Error **errp)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);
    uint64_t v;

    if (be->allocated) {
        error_setg(errp, "cannot change property 'size' of %s",
                   object_get_typename(obj));
        return false;
    }
    if (!qemu_strtosz(value, &v, errp)) {
        error_prepend(errp, "Parameter 'size': ");
        return false;
    }
    if (!v) {
        error_setg(errp, "Invalid parameter 'size': it must not be 0");
        return false;
    }
    be->size = v;
    return true;
}

static char *hostmem_get_hugetlbsize(Object *obj, Error **errp)
{
    return g_strdup_printf("%" PRIu64, MEMORY_BACKEND(obj)->hugetlbsize);
}

static bool hostmem_set_hugetlbsize(Object *obj, const char *value,
                                    Error **errp)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);
    uint64_t v;

    if (!qemu_strtosz(value, &v, errp)) {
        return false;
    }
    if (v && (v & (v - 1))) {
        error_setg(errp, "hugetlbsize %" PRIu64 " is not a power of 2", v);
        return false;
    }
    be->hugetlbsize = v;
    return true;
}

static char *hostmem_get_align(Object *obj, Error **errp)
{
    return g_strdup_printf("%" PRIu64, MEMORY_BACKEND(obj)->align);
}

static bool hostmem_set_align(Object *obj, const char *value, Error **errp)
{
    uint64_t v;

    if (!qemu_strtosz(value, &v, errp)) {
        return false;
    }
    if (v && (v & (v - 1))) {
        error_setg(errp, "align %" PRIu64 " is not a power of 2", v);
        return false;
    }
    MEMORY_BACKEND(obj)->align = v;
    return true;
}

#define HOSTMEM_BOOL(field, propname)                                     \
    static bool hostmem_get_##field(Object *obj, Error **errp)            \
    {                                                                     \
        return MEMORY_BACKEND(obj)->field;                                \
    }                                                                     \
    static bool hostmem_set_##field(Object *obj, bool v, Error **errp)    \
    {                                                                     \
        MEMORY_BACKEND(obj)->field = v;                                   \
        return true;                                                      \
    }
HOSTMEM_BOOL(prealloc, "prealloc")
HOSTMEM_BOOL(dump, "dump")
HOSTMEM_BOOL(merge, "merge")
HOSTMEM_BOOL(hugetlb, "hugetlb")
HOSTMEM_BOOL(seal, "seal")
HOSTMEM_BOOL(discard_data, "discard-data")
HOSTMEM_BOOL(readonly, "readonly")
HOSTMEM_BOOL(pmem, "pmem")

static bool hostmem_get_share(Object *obj, Error **errp)
{
    return MEMORY_BACKEND(obj)->share;
}

static bool hostmem_set_share(Object *obj, bool v, Error **errp)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);

    be->share = v;
    be->share_set = true;
    return true;
}

#define HOSTMEM_STR(field)                                                \
    static char *hostmem_get_##field(Object *obj, Error **errp)           \
    {                                                                     \
        return g_strdup(MEMORY_BACKEND(obj)->field);                      \
    }                                                                     \
    static bool hostmem_set_##field(Object *obj, const char *v,           \
                                    Error **errp)                         \
    {                                                                     \
        HostMemoryBackend *be = MEMORY_BACKEND(obj);                      \
        g_free(be->field);                                                \
        be->field = g_strdup(v);                                          \
        return true;                                                      \
    }
HOSTMEM_STR(mem_path)
HOSTMEM_STR(host_nodes)
HOSTMEM_STR(policy)

static char *hostmem_get_threads(Object *obj, Error **errp)
{
    return g_strdup_printf("%" PRIu64, MEMORY_BACKEND(obj)->prealloc_threads);
}

static bool hostmem_set_threads(Object *obj, const char *value, Error **errp)
{
    uint64_t v;

    if (!qemu_strtou64(value, &v, errp) || !v || v > 256) {
        error_setg(errp, "Parameter 'prealloc-threads' expects 1-256");
        return false;
    }
    MEMORY_BACKEND(obj)->prealloc_threads = v;
    return true;
}

/* libvirt sets this; Conduit's RAM blocks have no migration id yet. */
static bool hostmem_get_canonical(Object *obj, Error **errp)
{
    return false;
}

static bool hostmem_set_canonical(Object *obj, bool v, Error **errp)
{
    return true;
}

/* ---- allocation ---- */

static int hostmem_open_file(HostMemoryBackend *be, uint64_t *pagesize,
                             Error **errp)
{
    struct statfs fs;
    struct stat st;
    int fd, flags = be->readonly ? O_RDONLY : O_RDWR;

    if (stat(be->mem_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* A directory (-mem-path, libvirt's hugepage mount): a file of our
         * own there, gone from the name space at once. */
        g_autofree char *tmpl = g_build_filename(be->mem_path,
                                                 "conduit_back_mem.XXXXXX",
                                                 NULL);

        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd < 0) {
            error_setg_errno(errp, errno, "unable to create backing store "
                             "for memory in %s", be->mem_path);
            return -1;
        }
        unlink(tmpl);
    } else {
        fd = open(be->mem_path, flags | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            error_setg_errno(errp, errno, "can't open backing store %s for "
                             "guest RAM", be->mem_path);
            return -1;
        }
    }
    *pagesize = sysconf(_SC_PAGESIZE);
    if (fstatfs(fd, &fs) == 0 && fs.f_type == HUGETLBFS_MAGIC) {
        *pagesize = fs.f_bsize;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        (uint64_t)st.st_size < be->size && !be->readonly &&
        ftruncate(fd, QEMU_ALIGN_UP(be->size, *pagesize)) < 0) {
        error_setg_errno(errp, errno, "cannot size %s to %" PRIu64 " bytes",
                         be->mem_path, be->size);
        close(fd);
        return -1;
    }
    return fd;
}

static int hostmem_open_memfd(HostMemoryBackend *be, const char *name,
                              uint64_t *pagesize, Error **errp)
{
    unsigned flags = MFD_CLOEXEC;
    int fd;

    *pagesize = sysconf(_SC_PAGESIZE);
    if (be->kind == HOSTMEM_MEMFD && be->hugetlb) {
        flags |= MFD_HUGETLB;
        if (be->hugetlbsize) {
            flags |= (unsigned)__builtin_ctzll(be->hugetlbsize) << MFD_HUGE_SHIFT;
            *pagesize = be->hugetlbsize;
        } else {
            *pagesize = 2 << 20;    /* the default huge page on x86 */
        }
    } else if (be->kind == HOSTMEM_MEMFD && be->seal) {
        flags |= MFD_ALLOW_SEALING;
    }
    fd = memfd_create(name, flags);
    if (fd < 0) {
        error_setg_errno(errp, errno, "%s: memfd_create%s", name,
                         (flags & MFD_HUGETLB) ? " (hugetlb)" : "");
        return -1;
    }
    if (ftruncate(fd, QEMU_ALIGN_UP(be->size, *pagesize)) < 0) {
        error_setg_errno(errp, errno, "%s: cannot size memfd to %" PRIu64,
                         name, be->size);
        close(fd);
        return -1;
    }
    if ((flags & MFD_ALLOW_SEALING) &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)
        < 0) {
        trace_hostmem_unsealed(name, errno);
    }
    return fd;
}

/* Every page now: a host short of (huge) pages fails here, not later. */
static bool hostmem_prealloc(HostMemoryBackend *be, int fd, Error **errp)
{
    void *ptr = memory_region_get_ram_ptr(&be->mr);
    uint64_t len = QEMU_ALIGN_UP(be->size, be->pagesize);

    /* A file system can say "no space" for the whole range at once. */
    if (fd >= 0 && fallocate(fd, 0, 0, len) < 0 && errno != EOPNOTSUPP &&
        errno != ENODEV && errno != EINVAL) {
        error_setg_errno(errp, errno, "unable to preallocate %" PRIu64
                         " bytes of %s", len,
                         be->mem_path ? be->mem_path : "memory");
        return false;
    }
    if (madvise(ptr, len, MADV_POPULATE_WRITE) == 0) {
        return true;
    }
    if (errno != EINVAL) {
        error_setg_errno(errp, errno, "unable to preallocate memory (%"
                         PRIu64 " bytes%s)", len, be->pagesize >
                         (uint64_t)sysconf(_SC_PAGESIZE) ?
                         ", huge pages: are enough reserved?" : "");
        return false;
    }
    /* Older kernels: touch each page (the fallocate above reserved them). */
    for (uint64_t off = 0; off < len; off += be->pagesize) {
        volatile uint8_t *p = (uint8_t *)ptr + off;

        *p = *p;
    }
    return true;
}

static bool hostmem_complete(Object *obj, Error **errp)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);
    const char *id = object_get_canonical_path_component(obj);
    g_autofree char *name = g_strdup(id ? id : object_get_typename(obj));
    bool shared;
    int fd;

    if (!be->size) {
        error_setg(errp, "%s: property 'size' is required",
                   object_get_typename(obj));
        return false;
    }
    if (be->host_nodes || (be->policy && strcmp(be->policy, "default"))) {
        error_setg(errp, "%s: host-nodes and policy (NUMA binding of guest "
                   "memory) are not supported", object_get_typename(obj));
        error_append_hint(errp, "Leave out <numatune> (libvirt) or bind the "
                          "whole process with numactl.\n");
        return false;
    }
    if (be->pmem) {
        error_setg(errp, "memory-backend-file: pmem=on is not supported");
        return false;
    }
    if (be->kind == HOSTMEM_FILE) {
        if (!be->mem_path) {
            error_setg(errp, "memory-backend-file: property 'mem-path' is "
                       "required");
            return false;
        }
        if (be->readonly && be->share) {
            /* A shared mapping of a read-only fd cannot be writable. */
            error_setg(errp, "memory-backend-file: readonly=on needs "
                       "share=off (writes stay private)");
            return false;
        }
        fd = hostmem_open_file(be, &be->pagesize, errp);
    } else {
        fd = hostmem_open_memfd(be, name, &be->pagesize, errp);
    }
    if (fd < 0) {
        return false;
    }
    if (be->align && be->align > be->pagesize) {
        be->pagesize = be->align;
    }
    if (be->size % be->pagesize) {
        error_setg(errp, "backing store size 0x%" PRIx64 " is not aligned "
                   "to its page size 0x%" PRIx64, be->size, be->pagesize);
        close(fd);
        return false;
    }
    shared = be->share;
    if (!memory_region_init_ram_from_fd(&be->mr, obj, name, be->size,
                                        be->pagesize, fd, shared, errp)) {
        return false;
    }
    be->allocated = true;
    if (!be->dump) {
        madvise(memory_region_get_ram_ptr(&be->mr), be->size, MADV_DONTDUMP);
    }
    if (be->merge) {
        madvise(memory_region_get_ram_ptr(&be->mr), be->size, MADV_MERGEABLE);
    }
    if (be->prealloc &&
        !hostmem_prealloc(be, shared ? memory_region_get_fd(&be->mr) : -1,
                          errp)) {
        error_prepend(errp, "%s '%s': ", object_get_typename(obj), name);
        return false;
    }
    trace_hostmem_alloc(name, be->size, be->pagesize, shared, be->prealloc);
    return true;
}

/* ---- API ---- */

HostMemoryBackend *host_memory_backend_find(const char *id, Error **errp)
{
    Object *container = container_get(object_get_root(), "/objects");
    Object *obj = object_resolve_path_component(container, id);

    if (!obj || !object_dynamic_cast(obj, TYPE_MEMORY_BACKEND)) {
        error_setg(errp, "Memory backend '%s' not found", id);
        return NULL;
    }
    return MEMORY_BACKEND(obj);
}

MemoryRegion *host_memory_backend_get_memory(HostMemoryBackend *be)
{
    return &be->mr;
}

uint64_t host_memory_backend_size(HostMemoryBackend *be)
{
    return be->size;
}

uint64_t host_memory_backend_pagesize(HostMemoryBackend *be)
{
    return be->pagesize;
}

bool host_memory_backend_claim(HostMemoryBackend *be, const char *user,
                               Error **errp)
{
    if (be->user) {
        error_setg(errp, "memory backend '%s' can't be used multiple times "
                   "(already used by %s)",
                   object_get_canonical_path_component(OBJECT(be)), be->user);
        return false;
    }
    be->user = g_strdup(user);
    return true;
}

void host_memory_set_mem_path(const char *path)
{
    g_free(mem_path_opt);
    mem_path_opt = g_strdup(path);
}

void host_memory_set_prealloc(bool on)
{
    prealloc_opt = on;
}

HostMemoryBackend *host_memory_implicit_backend(uint64_t size, Error **errp)
{
    Object *container = container_get(object_get_root(), "/objects");
    g_autofree char *id = NULL;
    Object *obj;

    if (!mem_path_opt && !prealloc_opt) {
        return NULL;
    }
    if (implicit_count++) {
        error_setg(errp, "-mem-path: the machine's RAM exists already");
        return NULL;
    }
    obj = object_new(mem_path_opt ? TYPE_MEMORY_BACKEND_FILE
                                  : TYPE_MEMORY_BACKEND_RAM);
    id = g_strdup("pc.ram");
    MEMORY_BACKEND(obj)->size = size;
    MEMORY_BACKEND(obj)->prealloc = prealloc_opt;
    if (mem_path_opt) {
        MEMORY_BACKEND(obj)->mem_path = g_strdup(mem_path_opt);
        /* -mem-path maps privately, as in QEMU (share=off). */
        MEMORY_BACKEND(obj)->share = false;
    }
    object_property_add_child(container, id, obj);
    object_unref(obj);
    if (!hostmem_complete(obj, errp)) {
        error_prepend(errp, "%s: ", mem_path_opt ? "-mem-path" :
                      "-mem-prealloc");
        object_unparent(obj);
        return NULL;
    }
    return MEMORY_BACKEND(obj);
}

/* ---- types ---- */

static void hostmem_init(Object *obj)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);

    be->dump = true;
    be->merge = true;
    be->seal = true;
    be->prealloc_threads = 1;
}

static void hostmem_finalize(Object *obj)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);

    if (be->allocated && be->discard_data) {
        madvise(memory_region_get_ram_ptr(&be->mr), be->size, MADV_REMOVE);
    }
    if (be->allocated) {
        memory_region_finalize(&be->mr);
    }
    g_free(be->mem_path);
    g_free(be->host_nodes);
    g_free(be->policy);
    g_free(be->user);
}

static void hostmem_class_init(ObjectClass *oc, void *data)
{
    USER_CREATABLE_CLASS(oc)->complete = hostmem_complete;
    object_class_property_add_str(oc, "size", hostmem_get_size,
                                  hostmem_set_size);
    object_class_property_add_bool(oc, "share", hostmem_get_share,
                                   hostmem_set_share);
    object_class_property_add_bool(oc, "prealloc", hostmem_get_prealloc,
                                   hostmem_set_prealloc);
    object_class_property_add_str(oc, "prealloc-threads", hostmem_get_threads,
                                  hostmem_set_threads);
    object_class_property_add_bool(oc, "dump", hostmem_get_dump,
                                   hostmem_set_dump);
    object_class_property_add_bool(oc, "merge", hostmem_get_merge,
                                   hostmem_set_merge);
    object_class_property_add_str(oc, "host-nodes", hostmem_get_host_nodes,
                                  hostmem_set_host_nodes);
    object_class_property_add_str(oc, "policy", hostmem_get_policy,
                                  hostmem_set_policy);
    object_class_property_add_bool(oc, "x-use-canonical-path-for-ramblock-id",
                                   hostmem_get_canonical,
                                   hostmem_set_canonical);
}

static void hostmem_ram_init(Object *obj)
{
    MEMORY_BACKEND(obj)->kind = HOSTMEM_RAM;
}

static void hostmem_memfd_init(Object *obj)
{
    HostMemoryBackend *be = MEMORY_BACKEND(obj);

    be->kind = HOSTMEM_MEMFD;
    be->share = true;           /* QEMU's default for memfd */
}

static void hostmem_memfd_class_init(ObjectClass *oc, void *data)
{
    object_class_property_add_bool(oc, "hugetlb", hostmem_get_hugetlb,
                                   hostmem_set_hugetlb);
    object_class_property_add_str(oc, "hugetlbsize", hostmem_get_hugetlbsize,
                                  hostmem_set_hugetlbsize);
    object_class_property_add_bool(oc, "seal", hostmem_get_seal,
                                   hostmem_set_seal);
}

static void hostmem_file_init(Object *obj)
{
    MEMORY_BACKEND(obj)->kind = HOSTMEM_FILE;
}

static void hostmem_file_class_init(ObjectClass *oc, void *data)
{
    object_class_property_add_str(oc, "mem-path", hostmem_get_mem_path,
                                  hostmem_set_mem_path);
    object_class_property_add_str(oc, "align", hostmem_get_align,
                                  hostmem_set_align);
    object_class_property_add_bool(oc, "discard-data",
                                   hostmem_get_discard_data,
                                   hostmem_set_discard_data);
    object_class_property_add_bool(oc, "readonly", hostmem_get_readonly,
                                   hostmem_set_readonly);
    object_class_property_add_bool(oc, "pmem", hostmem_get_pmem,
                                   hostmem_set_pmem);
}

static const TypeInfo hostmem_types[] = {
    {
        .name = TYPE_MEMORY_BACKEND,
        .parent = TYPE_USER_CREATABLE,
        .instance_size = sizeof(HostMemoryBackend),
        .instance_init = hostmem_init,
        .instance_finalize = hostmem_finalize,
        .class_init = hostmem_class_init,
        .abstract = true,
    }, {
        .name = TYPE_MEMORY_BACKEND_RAM,
        .parent = TYPE_MEMORY_BACKEND,
        .instance_size = sizeof(HostMemoryBackend),
        .instance_init = hostmem_ram_init,
    }, {
        .name = TYPE_MEMORY_BACKEND_MEMFD,
        .parent = TYPE_MEMORY_BACKEND,
        .instance_size = sizeof(HostMemoryBackend),
        .instance_init = hostmem_memfd_init,
        .class_init = hostmem_memfd_class_init,
    }, {
        .name = TYPE_MEMORY_BACKEND_FILE,
        .parent = TYPE_MEMORY_BACKEND,
        .instance_size = sizeof(HostMemoryBackend),
        .instance_init = hostmem_file_init,
        .class_init = hostmem_file_class_init,
    },
};

DEFINE_TYPES(hostmem_types)
