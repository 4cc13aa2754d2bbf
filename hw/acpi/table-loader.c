/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table-loader's command list (see include/hw/acpi/table-loader.h).
 * Every command is 128 bytes: a little-endian 32-bit type, then its
 * arguments, zero-padded.
 */
#include "qemu/osdep.h"
#include "hw/acpi/table-loader.h"

static uint8_t *loader_cmd(GByteArray *loader, uint32_t type)
{
    size_t off = loader->len;

    g_byte_array_set_size(loader, off + ACPI_LOADER_CMD_SIZE);
    memset(loader->data + off, 0, ACPI_LOADER_CMD_SIZE);
    stl_le_p(loader->data + off, type);
    return loader->data + off + 4;
}

static void loader_name(uint8_t *field, const char *file)
{
    g_assert(strlen(file) < ACPI_LOADER_FILESZ);
    memcpy(field, file, strlen(file));
}

static void loader_allocate(GByteArray *loader, const char *file,
                            uint32_t align, uint8_t zone)
{
    uint8_t *a = loader_cmd(loader, ACPI_LOADER_ALLOCATE);

    loader_name(a, file);
    stl_le_p(a + ACPI_LOADER_FILESZ, align);
    a[ACPI_LOADER_FILESZ + 4] = zone;
}

static void loader_add_pointer(GByteArray *loader, const char *dest,
                               const char *src, uint32_t offset,
                               uint8_t size)
{
    uint8_t *a = loader_cmd(loader, ACPI_LOADER_ADD_POINTER);

    loader_name(a, dest);
    loader_name(a + ACPI_LOADER_FILESZ, src);
    stl_le_p(a + 2 * ACPI_LOADER_FILESZ, offset);
    a[2 * ACPI_LOADER_FILESZ + 4] = size;
}

static void loader_add_checksum(GByteArray *loader, const char *file,
                                uint32_t csum, uint32_t start, uint32_t len)
{
    uint8_t *a = loader_cmd(loader, ACPI_LOADER_ADD_CHECKSUM);

    loader_name(a, file);
    stl_le_p(a + ACPI_LOADER_FILESZ, csum);
    stl_le_p(a + ACPI_LOADER_FILESZ + 4, start);
    stl_le_p(a + ACPI_LOADER_FILESZ + 8, len);
}

void acpi_build_loader_files(const AcpiTables *t, AcpiLoaderFiles *out)
{
    const size_t ts = t->tables_start;
    const size_t rsdp_len = ts > 36 ? 36 : ts;

    g_assert(t->base == 0 && ts >= 36);
    out->loader = g_byte_array_new();
    out->rsdp = g_byte_array_new();
    out->tables = g_byte_array_new();
    g_byte_array_append(out->rsdp, t->blob->data, rsdp_len);
    g_byte_array_append(out->tables, t->blob->data + ts, t->blob->len - ts);

    /* The FACS wants 64-byte alignment; the RSDP sits in the F segment. */
    loader_allocate(out->loader, ACPI_TABLES_FILE, 64, ACPI_LOADER_ZONE_HIGH);
    loader_allocate(out->loader, ACPI_RSDP_FILE, 16, ACPI_LOADER_ZONE_FSEG);
    for (guint i = 0; i < t->pointers->len; i++) {
        const AcpiPointer *p = &g_array_index(t->pointers, AcpiPointer, i);
        bool in_rsdp = p->offset < ts;
        GByteArray *file = in_rsdp ? out->rsdp : out->tables;
        size_t off = in_rsdp ? p->offset : p->offset - ts;
        uint64_t target;

        /* From a blob offset to one relative to etc/acpi/tables. */
        if (p->size == 8) {
            target = ldq_le_p(file->data + off);
            g_assert(target >= ts);
            stq_le_p(file->data + off, target - ts);
        } else {
            target = ldl_le_p(file->data + off);
            g_assert(target >= ts);
            stl_le_p(file->data + off, target - ts);
        }
        loader_add_pointer(out->loader,
                           in_rsdp ? ACPI_RSDP_FILE : ACPI_TABLES_FILE,
                           ACPI_TABLES_FILE, off, p->size);
    }
    /* Checksums last: they cover the patched pointers. */
    for (guint i = 0; i < t->checksums->len; i++) {
        const AcpiChecksum *c = &g_array_index(t->checksums, AcpiChecksum,
                                               i);
        bool in_rsdp = c->start < ts;
        size_t d = in_rsdp ? 0 : ts;
        GByteArray *file = in_rsdp ? out->rsdp : out->tables;

        /* Valid before patching too, for readers of the raw file. */
        file->data[c->csum - d] = 0;
        file->data[c->csum - d] = -acpi_checksum(file->data + c->start - d,
                                                 c->len);
        loader_add_checksum(out->loader,
                            in_rsdp ? ACPI_RSDP_FILE : ACPI_TABLES_FILE,
                            c->csum - d, c->start - d, c->len);
    }
}

void acpi_loader_files_free(AcpiLoaderFiles *f)
{
    if (f->loader) {
        g_byte_array_unref(f->loader);
    }
    if (f->tables) {
        g_byte_array_unref(f->tables);
    }
    if (f->rsdp) {
        g_byte_array_unref(f->rsdp);
    }
    memset(f, 0, sizeof(*f));
}
