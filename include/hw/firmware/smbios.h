/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMBIOS (DMTF DSP0134, version 3.x layouts): what -smbios and -uuid ask
 * for, and pure builders that turn it and a description of the machine
 * into the structure table and the entry points that find it.
 *
 * The same tables reach the guest two ways: the pc machine's direct
 * -kernel path copies entry point and table into the legacy BIOS area
 * (0xF0000-0xFFFFF) that Linux's DMI scan reads; a firmware boot hands
 * them to the firmware over fw_cfg (etc/smbios/smbios-tables and
 * etc/smbios/smbios-anchor), which places them itself.
 */
#ifndef HW_FIRMWARE_SMBIOS_H
#define HW_FIRMWARE_SMBIOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"

/* Sizes of the entry points (DSP0134 5.2.1 and 5.2.2). */
#define SMBIOS_EP21_SIZE 0x1f
#define SMBIOS_EP30_SIZE 0x18
/* The version the tables follow (their lengths are those of 3.0). */
#define SMBIOS_MAJOR 3
#define SMBIOS_MINOR 0

/* What the user asked for.  Strings are owned; NULL means the default. */
typedef struct SmbiosConfig {
    struct {
        char *vendor, *version, *date;
        int release_major, release_minor;   /* -1: not given */
        bool uefi;
    } t0;
    struct {
        char *manufacturer, *product, *version, *serial, *sku, *family;
        bool has_uuid;
        uint8_t uuid[16];       /* RFC 4122 byte order (as printed) */
    } t1;
    struct {
        char *manufacturer, *product, *version, *serial, *asset, *location;
    } t2;
    struct {
        char *manufacturer, *version, *serial, *asset, *sku;
    } t3;
    struct {
        char *sock_pfx, *manufacturer, *version, *serial, *asset, *part;
        int processor_family;           /* -1: default */
        bool has_processor_id;
        uint64_t processor_id;
        unsigned max_speed, current_speed;      /* MHz, 0: default */
    } t4;
    GPtrArray *t11_strings;     /* char *, in order */
    struct {
        char *loc_pfx, *bank, *manufacturer, *serial, *asset, *part;
        unsigned speed;                 /* MT/s, 0: unknown */
    } t17;
    /* -smbios file=: whole structures, already checked, in order. */
    GByteArray *user_tables;
    bool user_has_type[256];    /* a file= structure replaces ours */
} SmbiosConfig;

/* What the machine is, for the tables Conduit fills in. */
typedef struct SmbiosMachine {
    const char *product;        /* type 1 default (machine description) */
    const char *version;        /* type 1 default (machine type name) */
    unsigned sockets, cores_per_socket, threads_per_core;
    unsigned cpus;              /* enabled vCPUs (up to sockets*cores*threads) */
    uint64_t ram_size;
    /* RAM as the guest sees it: up to two ranges. */
    struct {
        uint64_t addr, size;
    } ranges[2];
    unsigned nr_ranges;
    bool uuid_set;              /* -uuid given */
    uint8_t uuid[16];           /* RFC 4122 byte order */
} SmbiosMachine;

/* The structure table and what an entry point needs to describe it. */
typedef struct SmbiosTables {
    GByteArray *table;
    unsigned nr_structs;
    size_t max_struct;          /* the largest structure, strings included */
} SmbiosTables;

SmbiosConfig *smbios_config_new(void);
void smbios_config_free(SmbiosConfig *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SmbiosConfig, smbios_config_free)

/*
 * One -smbios argument (type=N,key=value... or file=PATH) merged into
 * @cfg.  The keys and types are QEMU's; a file's structures are checked
 * (each header, formatted area and string set in bounds, no end-of-table
 * or duplicate types that must be unique).  False with @errp set naming
 * the key or the file on any bad input.
 */
bool smbios_parse_option(SmbiosConfig *cfg, const char *arg, Error **errp);
/* Checks a -smbios file= blob (as smbios_parse_option does) and adds it. */
bool smbios_add_user_tables(SmbiosConfig *cfg, const uint8_t *data,
                            size_t len, const char *name, Error **errp);
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" to 16 bytes. */
bool smbios_parse_uuid(const char *str, uint8_t uuid[16]);

/*
 * Types 0, 1, 2, 3, 4 (one per socket), 11 (when strings were given),
 * 16, 17 (one per 16 GiB), 19 (one per RAM range), 32 and 127, with the
 * user's file= structures in place of Conduit's of the same type.
 * Free with smbios_tables_free().
 */
bool smbios_build_tables(const SmbiosConfig *cfg, const SmbiosMachine *m,
                         SmbiosTables *t, Error **errp);
void smbios_tables_free(SmbiosTables *t);

/* The 64-bit entry point ("_SM3_") for @t copied at @table_addr. */
void smbios_build_entry_point_30(const SmbiosTables *t, uint64_t table_addr,
                                 uint8_t ep[SMBIOS_EP30_SIZE]);
/* The 32-bit one ("_SM_" + "_DMI_"); the table must be below 4 GiB and
 * smaller than 64 KiB (false otherwise). */
bool smbios_build_entry_point_21(const SmbiosTables *t, uint32_t table_addr,
                                 uint8_t ep[SMBIOS_EP21_SIZE]);

/* The -smbios options of this run (vl.c adds to it). */
SmbiosConfig *smbios_cmdline_config(void);

#endif
