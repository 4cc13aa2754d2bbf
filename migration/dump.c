/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dump-guest-memory: guest RAM as an ELF64 core (format "elf", paging
 * false), one PT_LOAD per RAM range of the system address space with its
 * guest-physical address, as `virsh dump` and crash(8) read it.  The VM
 * is paused while its memory is written and resumed afterwards; with
 * "detach" the writing happens in a thread and DUMP_COMPLETED tells the
 * end (it is sent in both cases, as QEMU does).
 */
#include "qemu/osdep.h"
#include <elf.h>
#include "monitor/monitor.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "system/runstate.h"
#include "qemu/main-loop.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "system/target-info.h"
#include "trace.h"

typedef struct DumpRange {
    uint64_t gpa;
    uint64_t size;
    const uint8_t *hva;
} DumpRange;

typedef enum DumpStatus {
    DUMP_STATUS_NONE,
    DUMP_STATUS_ACTIVE,
    DUMP_STATUS_COMPLETED,
    DUMP_STATUS_FAILED,
} DumpStatus;

static const char *const dump_status_names[] = {
    "none", "active", "completed", "failed",
};

static struct {
    DumpStatus status;
    uint64_t completed, total;
    int fd;
    GArray *ranges;             /* DumpRange */
    bool resume;
    char *error;
    GThread *thread;
    QEMUBH *done_bh;
} dump = { .fd = -1 };

static bool collect_range(const FlatRange *fr, void *opaque)
{
    GArray *ranges = opaque;
    const uint8_t *base = memory_region_get_ram_ptr(fr->mr);
    DumpRange r;

    if (!memory_region_is_ram(fr->mr) || memory_region_is_ram_device(fr->mr) ||
        !base) {
        return true;
    }
    r.gpa = fr->addr;
    r.size = fr->size;
    r.hva = base + fr->offset_in_region;
    g_array_append_val(ranges, r);
    return true;
}

static bool write_full(int fd, const void *buf, size_t len, Error **errp)
{
    const uint8_t *p = buf;

    while (len) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            fd_set w;

            FD_ZERO(&w);
            FD_SET(fd, &w);
            select(fd + 1, NULL, &w, NULL, NULL);
            continue;
        }
        if (n <= 0) {
            error_setg_errno(errp, n < 0 ? errno : EIO,
                             "dump: write failed");
            return false;
        }
        p += n;
        len -= n;
        __atomic_add_fetch(&dump.completed, n, __ATOMIC_RELAXED);
    }
    return true;
}

/* The whole ELF file: header, program headers, then the ranges. */
static bool dump_write(Error **errp)
{
    bool be = memory_target_is_big_endian();
    bool ppc = !strcmp(target_info()->arch, "ppc64");
    guint n = dump.ranges->len;
    Elf64_Ehdr eh = { 0 };
    g_autofree Elf64_Phdr *ph = g_new0(Elf64_Phdr, n);
    uint64_t off = sizeof(eh) + n * sizeof(Elf64_Phdr);

#define E16(x) (be ? GUINT16_TO_BE(x) : GUINT16_TO_LE(x))
#define E32(x) (be ? GUINT32_TO_BE(x) : GUINT32_TO_LE(x))
#define E64(x) (be ? GUINT64_TO_BE(x) : GUINT64_TO_LE(x))
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = be ? ELFDATA2MSB : ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    eh.e_type = E16(ET_CORE);
    eh.e_machine = E16(ppc ? EM_PPC64 : EM_X86_64);
    eh.e_version = E32(EV_CURRENT);
    eh.e_phoff = E64(sizeof(eh));
    eh.e_ehsize = E16(sizeof(eh));
    eh.e_phentsize = E16(sizeof(Elf64_Phdr));
    eh.e_phnum = E16(n);
    for (guint i = 0; i < n; i++) {
        DumpRange *r = &g_array_index(dump.ranges, DumpRange, i);

        ph[i].p_type = E32(PT_LOAD);
        ph[i].p_flags = E32(PF_R | PF_W | PF_X);
        ph[i].p_offset = E64(off);
        ph[i].p_paddr = E64(r->gpa);
        ph[i].p_vaddr = E64(r->gpa);
        ph[i].p_filesz = E64(r->size);
        ph[i].p_memsz = E64(r->size);
        off += r->size;
    }
#undef E16
#undef E32
#undef E64
    if (!write_full(dump.fd, &eh, sizeof(eh), errp) ||
        !write_full(dump.fd, ph, n * sizeof(Elf64_Phdr), errp)) {
        return false;
    }
    for (guint i = 0; i < n; i++) {
        DumpRange *r = &g_array_index(dump.ranges, DumpRange, i);

        for (uint64_t done = 0; done < r->size; done += 1024 * 1024) {
            if (!write_full(dump.fd, r->hva + done,
                            MIN(1024 * 1024, r->size - done), errp)) {
                return false;
            }
        }
    }
    return true;
}

static void dump_finish(void)
{
    JsonObject *d = json_object_new();
    JsonObject *result = json_object_new();

    close(dump.fd);
    dump.fd = -1;
    g_array_free(dump.ranges, true);
    dump.ranges = NULL;
    if (dump.resume) {
        vm_start();
    }
    json_object_set_string_member(result, "status",
                                  dump_status_names[dump.status]);
    json_object_set_int_member(result, "completed", dump.completed);
    json_object_set_int_member(result, "total", dump.total);
    json_object_set_object_member(d, "result", result);
    if (dump.error) {
        json_object_set_string_member(d, "error", dump.error);
    }
    qapi_event_send("DUMP_COMPLETED", d);
}

static void dump_set_result(bool ok, Error *err)
{
    dump.status = ok ? DUMP_STATUS_COMPLETED : DUMP_STATUS_FAILED;
    g_free(dump.error);
    dump.error = ok ? NULL : g_strdup(error_get_pretty(err));
    error_free(err);
}

static gpointer dump_thread(gpointer opaque)
{
    Error *err = NULL;
    bool ok = dump_write(&err);

    bql_lock();
    dump_set_result(ok, err);
    qemu_bh_schedule(dump.done_bh);
    bql_unlock();
    return NULL;
}

static void dump_done_bh(void *opaque)
{
    if (dump.thread) {
        bql_unlock();
        g_thread_join(dump.thread);
        bql_lock();
        dump.thread = NULL;
    }
    dump_finish();
}

static void qmp_dump_guest_memory(JsonObject *args, JsonNode **ret,
                                  Error **errp)
{
    const char *protocol = json_object_get_string_member(args, "protocol");
    const char *format = json_object_get_string_member_with_default(
        args, "format", "elf");
    bool detach = json_object_get_boolean_member_with_default(args, "detach",
                                                              false);
    Error *err = NULL;
    int fd;

    if (json_object_get_boolean_member(args, "paging")) {
        error_setg(errp, "dump-guest-memory: paging=true is not supported "
                   "(Conduit writes guest-physical memory only)");
        return;
    }
    if (strcmp(format, "elf")) {
        error_setg(errp, "dump-guest-memory: format '%s' is not supported",
                   format);
        error_append_hint(errp, "query-dump-guest-memory-capability lists "
                          "the formats (elf).\n");
        return;
    }
    if (json_object_has_member(args, "begin") ||
        json_object_has_member(args, "length")) {
        error_setg(errp, "dump-guest-memory: begin/length need paging=true");
        return;
    }
    if (dump.status == DUMP_STATUS_ACTIVE) {
        error_setg(errp, "there is a dump in process, please wait");
        return;
    }
    if (g_str_has_prefix(protocol, "fd:")) {
        fd = monitor_fd_param(protocol + 3, errp);
        if (fd < 0) {
            return;
        }
    } else if (g_str_has_prefix(protocol, "file:")) {
        fd = open(protocol + 5, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                  0600);
        if (fd < 0) {
            error_setg_errno(errp, errno, "dump-guest-memory: cannot open "
                             "'%s'", protocol + 5);
            return;
        }
    } else {
        error_setg(errp, "Invalid protocol '%s' (use fd:NAME or file:PATH)",
                   protocol);
        return;
    }
    dump.fd = fd;
    dump.ranges = g_array_new(false, false, sizeof(DumpRange));
    flatview_for_each_range(address_space_get_flatview(
                                &address_space_memory),
                            collect_range, dump.ranges);
    dump.total = 0;
    for (guint i = 0; i < dump.ranges->len; i++) {
        dump.total += g_array_index(dump.ranges, DumpRange, i).size;
    }
    dump.completed = 0;
    dump.status = DUMP_STATUS_ACTIVE;
    dump.resume = runstate_is_running();
    if (dump.resume) {
        vm_stop(RUN_STATE_PAUSED);
    }
    trace_dump_guest_memory(dump.ranges->len, dump.total, detach);
    if (detach) {
        if (!dump.done_bh) {
            dump.done_bh = qemu_bh_new(dump_done_bh, NULL);
        }
        dump.thread = g_thread_new("dump", dump_thread, NULL);
        return;
    }
    dump_set_result(dump_write(&err), NULL);
    if (dump.status == DUMP_STATUS_FAILED) {
        /* Keep a copy for the event, give the caller the error. */
        dump.error = g_strdup(error_get_pretty(err));
        error_propagate(errp, err);
    }
    dump_finish();
}

static void qmp_query_dump(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "status",
                                  dump_status_names[dump.status]);
    json_object_set_int_member(o, "completed",
                               __atomic_load_n(&dump.completed,
                                               __ATOMIC_RELAXED));
    json_object_set_int_member(o, "total", dump.total);
    *ret = qmp_node_new_object(o);
}

static void qmp_query_dump_caps(JsonObject *args, JsonNode **ret,
                                Error **errp)
{
    JsonObject *o = json_object_new();
    JsonArray *a = json_array_new();

    json_array_add_string_element(a, "elf");
    json_object_set_array_member(o, "formats", a);
    *ret = qmp_node_new_object(o);
}

static void __attribute__((constructor)) dump_register(void)
{
    qmp_register_command_args("dump-guest-memory", qmp_dump_guest_memory,
                              "paging:b protocol:s *detach:b *begin:i "
                              "*length:i *format:s", 0);
    qmp_register_command_args("query-dump", qmp_query_dump, "", 0);
    qmp_register_command_args("query-dump-guest-memory-capability",
                              qmp_query_dump_caps, "", 0);
}
