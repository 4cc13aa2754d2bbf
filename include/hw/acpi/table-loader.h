/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ACPI table-loader: how firmware (SeaBIOS, OVMF) installs the tables
 * Conduit builds.  fw_cfg carries three files: etc/acpi/tables (the
 * tables, their pointer fields holding offsets into that file),
 * etc/acpi/rsdp (the RSDP, likewise) and etc/table-loader, a list of
 * 128-byte commands telling the firmware to allocate each file, add a
 * file's address to each pointer field and recompute each checksum
 * (the format QEMU's hw/acpi/bios-linker-loader.c defines).
 *
 * acpi_build_loader_files() turns the blob of acpi_build_tables() built
 * at base 0 into the three files; pure, unit-tested.
 */
#ifndef HW_ACPI_TABLE_LOADER_H
#define HW_ACPI_TABLE_LOADER_H

#include <glib.h>
#include "hw/acpi/acpi-tables.h"

#define ACPI_LOADER_FILE        "etc/table-loader"
#define ACPI_TABLES_FILE        "etc/acpi/tables"
#define ACPI_RSDP_FILE          "etc/acpi/rsdp"

#define ACPI_LOADER_CMD_SIZE    128
#define ACPI_LOADER_FILESZ      56

/* Command types. */
#define ACPI_LOADER_ALLOCATE    1
#define ACPI_LOADER_ADD_POINTER 2
#define ACPI_LOADER_ADD_CHECKSUM 3

/* ALLOCATE zones: anywhere (high), or the 0xf0000 segment (RSDP). */
#define ACPI_LOADER_ZONE_HIGH   1
#define ACPI_LOADER_ZONE_FSEG   2

typedef struct AcpiLoaderFiles {
    GByteArray *loader;
    GByteArray *tables;
    GByteArray *rsdp;
} AcpiLoaderFiles;

/*
 * t must come from acpi_build_tables(p, 0, t): its pointers hold blob
 * offsets.  Every pointer targets the tables; those inside the RSDP are
 * patched from etc/acpi/rsdp.
 */
void acpi_build_loader_files(const AcpiTables *t, AcpiLoaderFiles *out);
void acpi_loader_files_free(AcpiLoaderFiles *f);

#endif
