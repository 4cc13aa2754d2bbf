/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: command line and BAR layout.
 *
 * The layout is a pure function of the options and the host page size so
 * that unit tests can cover every placement the project cares about.
 */
#include "qemu/osdep.h"
#include <getopt.h>
#include "qapi/error.h"
#include "nvme.h"

#define NVME_MAX_BAR_SIZE       (256ull * 1024 * 1024)
#define NVME_MSIX_BAR_MIN_SIZE  0x2000

enum {
    OPT_SOCKET = 256,
    OPT_BACKEND,
    OPT_SIZE,
    OPT_LBA_SIZE,
    OPT_AIO_DEPTH,
    OPT_QUEUES,
    OPT_MSIX_BAR,
    OPT_MSIX_TABLE_OFFSET,
    OPT_MSIX_PBA_OFFSET,
    OPT_NO_MSIX_MAPPABLE,
    OPT_NO_MMAP,
    OPT_NO_MIGRATION,
    OPT_POLL_MAX_SLEEP,
    OPT_SERIAL,
    OPT_TRACE,
    OPT_STATS,
    OPT_HELP,
};

static const struct option nvme_long_options[] = {
    { "socket", required_argument, NULL, OPT_SOCKET },
    { "backend", required_argument, NULL, OPT_BACKEND },
    { "size", required_argument, NULL, OPT_SIZE },
    { "lba-size", required_argument, NULL, OPT_LBA_SIZE },
    { "aio-depth", required_argument, NULL, OPT_AIO_DEPTH },
    { "queues", required_argument, NULL, OPT_QUEUES },
    { "msix-bar", required_argument, NULL, OPT_MSIX_BAR },
    { "msix-table-offset", required_argument, NULL, OPT_MSIX_TABLE_OFFSET },
    { "msix-pba-offset", required_argument, NULL, OPT_MSIX_PBA_OFFSET },
    { "no-msix-mappable", no_argument, NULL, OPT_NO_MSIX_MAPPABLE },
    { "no-mmap", no_argument, NULL, OPT_NO_MMAP },
    { "no-migration", no_argument, NULL, OPT_NO_MIGRATION },
    { "poll-max-sleep-us", required_argument, NULL, OPT_POLL_MAX_SLEEP },
    { "serial", required_argument, NULL, OPT_SERIAL },
    { "trace", required_argument, NULL, OPT_TRACE },
    { "stats", no_argument, NULL, OPT_STATS },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
};

void nvme_options_usage(FILE *out, const char *argv0)
{
    fprintf(out,
"Usage: %s --socket PATH [options]\n"
"Serve an NVMe 1.4 controller (one namespace) over vfio-user.\n"
"\n"
"  --socket PATH             UNIX socket to listen on (required); removed\n"
"                            on exit\n"
"  --backend null|ram|file:PATH\n"
"                            storage: null reads zeroes and drops writes,\n"
"                            ram keeps --size bytes in memory, file uses\n"
"                            libaio on PATH (O_DIRECT when possible)\n"
"                            (default: null)\n"
"  --size SIZE               capacity, suffixes K M G (default: 1G for\n"
"                            null, 64M for ram; for file, creates or grows\n"
"                            PATH to SIZE, default: its current size)\n"
"  --lba-size 512|4096       logical block size (default: 512)\n"
"  --aio-depth N             file: in-flight requests per I/O queue,\n"
"                            1-1024 (default: 64)\n"
"  --queues N                I/O queue pairs offered, 1-64 (default: 64);\n"
"                            MSI-X vectors = N + 1\n"
"  --msix-bar N              BAR holding the MSI-X table and PBA: 0, 2, 3,\n"
"                            4 or 5 (default: 4)\n"
"  --msix-table-offset OFF   table offset in that BAR, 8-byte aligned\n"
"                            (default: 0, or 0x2000 in BAR0)\n"
"  --msix-pba-offset OFF     PBA offset in that BAR, 8-byte aligned\n"
"                            (default: 0x1000, or 0x3000 in BAR0)\n"
"  --no-msix-mappable        do not advertise MSIX_MAPPABLE; the mmappable\n"
"                            areas of BAR0 then leave out the host pages\n"
"                            holding the MSI-X table (not the PBA, as\n"
"                            Linux's vfio-pci does)\n"
"  --no-migration            do not offer live migration (the client\n"
"                            then blocks it, as for any such device)\n"
"  --no-mmap                 BAR0 is trap-only: doorbells arrive as\n"
"                            REGION_WRITE messages\n"
"  --poll-max-sleep-us N     longest doorbell poller sleep while busy,\n"
"                            1-10000 (default: 128); after 0.2 s without\n"
"                            work it sleeps 1 ms, after 2 s 4 ms\n"
"  --serial STR              serial number, up to 20 characters\n"
"  --trace PATTERN           enable trace events matching PATTERN\n"
"  --stats                   on exit, print how many REGION_READ and\n"
"                            REGION_WRITE messages each region got (a\n"
"                            mapped BAR gets none for doorbells)\n"
"  --help                    show this help and exit\n"
"\n"
"BAR0 (16 KiB, or the next power of two the layout needs): registers at\n"
"0, doorbells from 0x1000 with a 4-byte stride.  SIGTERM or SIGINT stop\n"
"the server; a client disconnect resets the device and waits for the\n"
"next client.\n", argv0);
}

void nvme_options_init(NvmeOptions *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = NVME_BACKEND_NULL;
    o->lba_size = 512;
    o->aio_depth = 64;
    o->max_ioqs = NVME_MAX_IOQS;
    o->msix_bar = 4;
    o->msix_mappable = true;
    o->mmap = true;
    o->poll_max_sleep_us = 128;
}

void nvme_options_free(NvmeOptions *o)
{
    g_free(o->socket_path);
    g_free(o->file_path);
    g_free(o->serial);
    g_free(o->trace);
    memset(o, 0, sizeof(*o));
}

static bool nvme_parse_u64(const char *opt, const char *arg, bool suffix,
                           uint64_t *out, Error **errp)
{
    char *end;
    uint64_t v, mul = 1;

    errno = 0;
    v = g_ascii_strtoull(arg, &end, 0);
    if (end == arg || errno || arg[0] == '-') {
        error_setg(errp, "--%s '%s': not a number", opt, arg);
        return false;
    }
    if (suffix && *end) {
        switch (g_ascii_toupper(*end)) {
        case 'K':
            mul = 1ull << 10;
            break;
        case 'M':
            mul = 1ull << 20;
            break;
        case 'G':
            mul = 1ull << 30;
            break;
        case 'T':
            mul = 1ull << 40;
            break;
        default:
            mul = 0;
            break;
        }
        end++;
    }
    if (*end || mul == 0) {
        error_setg(errp, "--%s '%s': trailing garbage", opt, arg);
        return false;
    }
    if (v > UINT64_MAX / mul) {
        error_setg(errp, "--%s '%s': too large", opt, arg);
        return false;
    }
    *out = v * mul;
    return true;
}

static bool nvme_parse_uint(const char *opt, const char *arg, uint64_t min,
                            uint64_t max, unsigned *out, Error **errp)
{
    uint64_t v;

    if (!nvme_parse_u64(opt, arg, false, &v, errp)) {
        return false;
    }
    if (v < min || v > max) {
        error_setg(errp, "--%s %s: must be between %" PRIu64 " and %" PRIu64,
                   opt, arg, min, max);
        return false;
    }
    *out = v;
    return true;
}

/* getopt reports a missing value by the option's val: name it in full. */
static const char *nvme_option_name(int val)
{
    for (const struct option *opt = nvme_long_options; opt->name; opt++) {
        if (opt->val == val) {
            return opt->name;
        }
    }
    return NULL;
}

bool nvme_options_parse(NvmeOptions *o, int argc, char **argv, Error **errp)
{
    bool size_set = false;
    int c;

    optind = 1;
    opterr = 0;
    /* A leading ':' makes a missing value ':' rather than '?'. */
    while ((c = getopt_long(argc, argv, ":", nvme_long_options,
                            NULL)) != -1) {
        const char *name = optind > 0 && optind <= argc ?
                           argv[optind - 1] : "?";
        unsigned u;

        switch (c) {
        case OPT_SOCKET:
            if (!*optarg) {
                error_setg(errp, "--socket: empty path");
                return false;
            }
            g_free(o->socket_path);
            o->socket_path = g_strdup(optarg);
            break;
        case OPT_BACKEND:
            g_clear_pointer(&o->file_path, g_free);
            if (!strcmp(optarg, "null")) {
                o->backend = NVME_BACKEND_NULL;
            } else if (!strcmp(optarg, "ram")) {
                o->backend = NVME_BACKEND_RAM;
            } else if (g_str_has_prefix(optarg, "file:") && optarg[5]) {
                o->backend = NVME_BACKEND_FILE;
                o->file_path = g_strdup(optarg + 5);
            } else {
                error_setg(errp, "--backend '%s': expected null, ram or "
                           "file:PATH", optarg);
                return false;
            }
            break;
        case OPT_SIZE:
            if (!nvme_parse_u64("size", optarg, true, &o->size, errp)) {
                return false;
            }
            size_set = true;
            break;
        case OPT_LBA_SIZE:
            if (!nvme_parse_uint("lba-size", optarg, 512, 4096, &u, errp)) {
                return false;
            }
            if (u != 512 && u != 4096) {
                error_setg(errp, "--lba-size %s: must be 512 or 4096",
                           optarg);
                return false;
            }
            o->lba_size = u;
            break;
        case OPT_AIO_DEPTH:
            if (!nvme_parse_uint("aio-depth", optarg, 1, 1024, &o->aio_depth,
                                 errp)) {
                return false;
            }
            break;
        case OPT_QUEUES:
            if (!nvme_parse_uint("queues", optarg, 1, NVME_MAX_IOQS,
                                 &o->max_ioqs, errp)) {
                return false;
            }
            o->max_ioqs_set = true;
            break;
        case OPT_MSIX_BAR:
            if (!nvme_parse_uint("msix-bar", optarg, 0, 5, &u, errp)) {
                return false;
            }
            if (u == 1) {
                error_setg(errp, "--msix-bar 1: BAR1 is the upper half of "
                           "64-bit BAR0");
                return false;
            }
            o->msix_bar = u;
            break;
        case OPT_MSIX_TABLE_OFFSET:
            if (!nvme_parse_u64("msix-table-offset", optarg, false,
                                &o->msix_table_offset, errp)) {
                return false;
            }
            o->msix_table_offset_set = true;
            break;
        case OPT_MSIX_PBA_OFFSET:
            if (!nvme_parse_u64("msix-pba-offset", optarg, false,
                                &o->msix_pba_offset, errp)) {
                return false;
            }
            o->msix_pba_offset_set = true;
            break;
        case OPT_NO_MSIX_MAPPABLE:
            o->msix_mappable = false;
            break;
        case OPT_STATS:
            o->stats = true;
            break;
        case OPT_NO_MIGRATION:
            o->no_migration = true;
            break;
        case OPT_NO_MMAP:
            o->mmap = false;
            break;
        case OPT_POLL_MAX_SLEEP:
            if (!nvme_parse_uint("poll-max-sleep-us", optarg, 1, 10000,
                                 &o->poll_max_sleep_us, errp)) {
                return false;
            }
            break;
        case OPT_SERIAL:
            if (!*optarg || strlen(optarg) > 20) {
                error_setg(errp, "--serial '%s': 1 to 20 characters", optarg);
                return false;
            }
            for (const char *p = optarg; *p; p++) {
                if (!g_ascii_isprint(*p)) {
                    error_setg(errp, "--serial: printable ASCII only");
                    return false;
                }
            }
            g_free(o->serial);
            o->serial = g_strdup(optarg);
            break;
        case OPT_TRACE:
            g_free(o->trace);
            o->trace = g_strdup(optarg);
            break;
        case OPT_HELP:
            o->help = true;
            return true;
        case ':': {
            const char *full = nvme_option_name(optopt);

            if (full) {
                error_setg(errp, "option '--%s' requires a value", full);
            } else {
                error_setg(errp, "option '%s' requires a value", name);
            }
            return false;
        }
        default:
            error_setg(errp, "%s: unknown option (see --help)", name);
            return false;
        }
    }
    if (optind < argc) {
        error_setg(errp, "'%s': unexpected argument (see --help)",
                   argv[optind]);
        return false;
    }
    if (!o->socket_path) {
        error_setg(errp, "--socket PATH is required");
        return false;
    }
    if (!size_set && o->backend != NVME_BACKEND_FILE) {
        o->size = o->backend == NVME_BACKEND_RAM ? 64ull << 20 : 1ull << 30;
    }
    if (o->backend != NVME_BACKEND_FILE &&
        (o->size < o->lba_size || o->size % o->lba_size)) {
        error_setg(errp, "--size %" PRIu64 ": must be a non-zero multiple "
                   "of the LBA size %u", o->size, o->lba_size);
        return false;
    }
    if (o->size % o->lba_size) {
        error_setg(errp, "--size %" PRIu64 ": not a multiple of the LBA "
                   "size %u", o->size, o->lba_size);
        return false;
    }
    return true;
}

static bool nvme_ranges_overlap(uint64_t a, uint64_t alen, uint64_t b,
                                uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/*
 * Without an explicit --queues, a table placed right before the PBA (the
 * 0x1800/0x1c00 doorbell-page layout) gets as many vectors as fit there.
 */
static unsigned nvme_layout_default_ioqs(const NvmeOptions *o)
{
    unsigned ioqs = NVME_MAX_IOQS;

    if (o->max_ioqs_set || !o->msix_table_offset_set ||
        !o->msix_pba_offset_set ||
        o->msix_table_offset >= o->msix_pba_offset) {
        return o->max_ioqs;
    }
    while (ioqs > 1 &&
           o->msix_table_offset + 16ull * (ioqs + 1) > o->msix_pba_offset) {
        ioqs--;
    }
    return ioqs;
}

bool nvme_layout_compute(const NvmeOptions *o, uint64_t host_page_size,
                         NvmeBarLayout *l, Error **errp)
{
    bool in_bar0 = o->msix_bar == 0;
    uint64_t end;

    memset(l, 0, sizeof(*l));
    l->max_ioqs = nvme_layout_default_ioqs(o);
    l->nvectors = l->max_ioqs + 1;
    l->msix_bar = o->msix_bar;
    l->table_size = 16ull * l->nvectors;
    l->pba_size = 8ull * DIV_ROUND_UP(l->nvectors, 64);
    l->doorbell_end = NVME_DB_BASE + 8ull * (l->max_ioqs + 1);
    l->table_offset = o->msix_table_offset_set ? o->msix_table_offset
                      : in_bar0 ? 0x2000 : 0;
    l->pba_offset = o->msix_pba_offset_set ? o->msix_pba_offset
                    : in_bar0 ? 0x3000 : 0x1000;

    if (l->table_offset & 7) {
        error_setg(errp, "--msix-table-offset 0x%" PRIx64 ": must be 8-byte "
                   "aligned", l->table_offset);
        return false;
    }
    if (l->pba_offset & 7) {
        error_setg(errp, "--msix-pba-offset 0x%" PRIx64 ": must be 8-byte "
                   "aligned", l->pba_offset);
        return false;
    }
    if (l->table_offset >= NVME_MAX_BAR_SIZE - l->table_size ||
        l->pba_offset >= NVME_MAX_BAR_SIZE - l->pba_size) {
        error_setg(errp, "MSI-X table 0x%" PRIx64 " or PBA 0x%" PRIx64
                   " beyond the largest BAR (%llu MiB)", l->table_offset,
                   l->pba_offset, NVME_MAX_BAR_SIZE >> 20);
        return false;
    }
    if (nvme_ranges_overlap(l->table_offset, l->table_size, l->pba_offset,
                            l->pba_size)) {
        error_setg(errp, "MSI-X table [0x%" PRIx64 ", 0x%" PRIx64 ") and "
                   "PBA [0x%" PRIx64 ", 0x%" PRIx64 ") overlap",
                   l->table_offset, l->table_offset + l->table_size,
                   l->pba_offset, l->pba_offset + l->pba_size);
        error_append_hint(errp, "Each of the %u vectors (--queues + 1) takes "
                          "16 bytes of table\n", l->nvectors);
        return false;
    }
    if (in_bar0) {
        if (l->table_offset < l->doorbell_end) {
            error_setg(errp, "--msix-table-offset 0x%" PRIx64 ": overlaps "
                       "the NVMe registers or doorbells [0, 0x%" PRIx64 ")",
                       l->table_offset, l->doorbell_end);
            return false;
        }
        if (l->pba_offset < l->doorbell_end) {
            error_setg(errp, "--msix-pba-offset 0x%" PRIx64 ": overlaps "
                       "the NVMe registers or doorbells [0, 0x%" PRIx64 ")",
                       l->pba_offset, l->doorbell_end);
            return false;
        }
    }

    /*
     * A BAR the client maps is at least one host page: an mmap and a KVM
     * memslot cover whole pages, and the memfd behind the BAR is sealed
     * at this size, so a 16 KiB BAR0 on a 64 KiB-page host (POWER) would
     * end inside the page the client maps and stay trapped.
     */
    end = MAX(l->table_offset + l->table_size, l->pba_offset + l->pba_size);
    if (in_bar0) {
        l->bar0_size = MAX(MAX(NVME_BAR0_MIN_SIZE, pow2ceil(end)),
                           host_page_size);
    } else {
        l->bar0_size = MAX(NVME_BAR0_MIN_SIZE, host_page_size);
        l->msix_bar_size = MAX(MAX(NVME_MSIX_BAR_MIN_SIZE, pow2ceil(end)),
                               host_page_size);
    }

    /*
     * As Linux's vfio-pci: the whole BAR0 (registers included) is
     * mappable, and with MSIX_MAPPABLE no sparse list is needed.  Only when
     * the capability is withheld do the pages holding the table stay out;
     * pages holding only the PBA stay in.
     */
    if (!o->mmap) {
        return true;
    }
    if (in_bar0 && !o->msix_mappable) {
        uint64_t hole = QEMU_ALIGN_DOWN(l->table_offset, host_page_size);
        uint64_t hole_end = QEMU_ALIGN_UP(l->table_offset + l->table_size,
                                          host_page_size);

        if (hole > 0) {
            l->areas[l->nr_areas].offset = 0;
            l->areas[l->nr_areas].size = hole;
            l->nr_areas++;
        }
        if (hole_end < l->bar0_size) {
            l->areas[l->nr_areas].offset = hole_end;
            l->areas[l->nr_areas].size = l->bar0_size - hole_end;
            l->nr_areas++;
        }
        /* A table covering every page leaves nothing to map. */
        l->bar0_mmap = l->nr_areas > 0;
        return true;
    }
    l->bar0_mmap = true;
    return true;
}
