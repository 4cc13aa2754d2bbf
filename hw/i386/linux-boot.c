/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Linux bzImage direct boot through the 64-bit boot protocol: the
 * protected-mode kernel goes to 1 MiB, a zero page (boot_params) carries
 * the setup header, command line, initrd and e820 map, and the boot vCPU
 * enters at load address + 0x200 in long mode with identity paging and
 * RSI pointing at the zero page.  Field offsets are those of the kernel's
 * Documentation/arch/x86/boot.rst.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-boot.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "trace.h"

/* Setup header, at these offsets in both the image and boot_params. */
#define BP_SETUP_SECTS 0x1f1
#define BP_VID_MODE 0x1fa
#define BP_BOOT_FLAG 0x1fe
#define BP_JUMP 0x200
#define BP_HEADER 0x202
#define BP_VERSION 0x206
#define BP_TYPE_OF_LOADER 0x210
#define BP_LOADFLAGS 0x211
#define BP_RAMDISK_IMAGE 0x218
#define BP_RAMDISK_SIZE 0x21c
#define BP_HEAP_END_PTR 0x224
#define BP_CMD_LINE_PTR 0x228
#define BP_INITRD_ADDR_MAX 0x22c
#define BP_XLOADFLAGS 0x236
#define BP_CMDLINE_SIZE 0x238
#define BP_INIT_SIZE 0x260
/* Zero-page fields outside the setup header. */
#define BP_ACPI_RSDP_ADDR 0x070
#define BP_EXT_RAMDISK_IMAGE 0x0c0
#define BP_EXT_RAMDISK_SIZE 0x0c4
#define BP_EXT_CMD_LINE_PTR 0x0c8
#define BP_E820_ENTRIES 0x1e8
#define BP_E820_TABLE 0x2d0
#define BP_E820_MAX 128

#define LOADFLAG_LOADED_HIGH 0x01
#define LOADFLAG_CAN_USE_HEAP 0x80
#define XLF_KERNEL_64 0x01
#define LINUX_HDRS_MAGIC 0x53726448     /* "HdrS" */
#define LINUX_MIN_VERSION 0x020c        /* 2.12: xloadflags, 64-bit entry */

static uint16_t get16(const uint8_t *p)
{
    return p[0] | p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
    return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = v;
    p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, v);
    put32(p + 4, v >> 32);
}

bool linux_is_bzimage(const uint8_t *buf, size_t len)
{
    return len > BP_HEADER + 4 && get32(buf + BP_HEADER) == LINUX_HDRS_MAGIC;
}

bool linux_build_boot_params(const uint8_t *image, size_t len,
                             const LinuxBootConfig *cfg, uint8_t bp[4096],
                             LinuxImageInfo *info, Error **errp)
{
    size_t hdr_end, nr_e820;
    unsigned setup_sects;

    memset(bp, 0, 4096);
    if (!linux_is_bzimage(image, len) || len < 0x400) {
        error_setg(errp, "not a Linux bzImage (no HdrS header)");
        return false;
    }
    info->version = get16(image + BP_VERSION);
    if (info->version < LINUX_MIN_VERSION) {
        error_setg(errp, "Linux boot protocol %u.%02u is too old (need 2.12 "
                   "for the 64-bit entry)", info->version >> 8,
                   info->version & 0xff);
        return false;
    }
    if (!(get16(image + BP_XLOADFLAGS) & XLF_KERNEL_64)) {
        error_setg(errp, "bzImage has no 64-bit entry point");
        return false;
    }
    setup_sects = image[BP_SETUP_SECTS] ? image[BP_SETUP_SECTS] : 4;
    info->setup_size = (setup_sects + 1) * 512;
    if (info->setup_size >= len) {
        error_setg(errp, "bzImage setup (%zu bytes) covers the whole file",
                   info->setup_size);
        return false;
    }
    /* The header ends where the jump at 0x200 lands. */
    hdr_end = BP_JUMP + 2 + image[BP_JUMP + 1];
    hdr_end = MIN(hdr_end, 0x280u);
    memcpy(bp + BP_SETUP_SECTS, image + BP_SETUP_SECTS,
           hdr_end - BP_SETUP_SECTS);
    info->initrd_addr_max = get32(image + BP_INITRD_ADDR_MAX);
    info->cmdline_max = get32(image + BP_CMDLINE_SIZE);
    if (!info->cmdline_max) {
        info->cmdline_max = 255;
    }
    if (cfg->cmdline_size > (uint64_t)info->cmdline_max + 1) {
        error_setg(errp, "kernel command line longer than the kernel's "
                   "limit of %u bytes", info->cmdline_max);
        return false;
    }
    if (cfg->initrd_size &&
        cfg->initrd_paddr + cfg->initrd_size - 1 > info->initrd_addr_max &&
        info->initrd_addr_max) {
        error_setg(errp, "initrd ends above the kernel's limit 0x%" PRIx64,
                   info->initrd_addr_max);
        return false;
    }

    put16(bp + BP_VID_MODE, 0xffff);            /* "normal" */
    bp[BP_TYPE_OF_LOADER] = 0xff;               /* undefined loader */
    bp[BP_LOADFLAGS] |= LOADFLAG_LOADED_HIGH | LOADFLAG_CAN_USE_HEAP;
    put16(bp + BP_HEAP_END_PTR, 0xfe00);
    put32(bp + BP_CMD_LINE_PTR, (uint32_t)cfg->cmdline_paddr);
    put32(bp + BP_EXT_CMD_LINE_PTR, cfg->cmdline_paddr >> 32);
    put32(bp + BP_RAMDISK_IMAGE, (uint32_t)cfg->initrd_paddr);
    put32(bp + BP_EXT_RAMDISK_IMAGE, cfg->initrd_paddr >> 32);
    put32(bp + BP_RAMDISK_SIZE, (uint32_t)cfg->initrd_size);
    put32(bp + BP_EXT_RAMDISK_SIZE, cfg->initrd_size >> 32);
    put64(bp + BP_ACPI_RSDP_ADDR, cfg->rsdp_paddr);
    nr_e820 = MIN(cfg->nr_map, (size_t)BP_E820_MAX);
    bp[BP_E820_ENTRIES] = nr_e820;
    for (size_t i = 0; i < nr_e820; i++) {
        uint8_t *e = bp + BP_E820_TABLE + i * 20;

        put64(e, cfg->map[i].addr);
        put64(e + 8, cfg->map[i].size);
        put32(e + 16, cfg->map[i].type);
    }
    return true;
}

/* Identity map of the low 4 GiB with 2 MiB pages, and a GDT. */
static void linux_write_page_tables(void)
{
    uint64_t pml4e = (LINUX_PML4_ADDR + 0x1000) | 0x3;
    uint64_t pdpt[4];
    g_autofree uint64_t *pd = g_new(uint64_t, 4 * 512);
    static const uint64_t gdt[4] = {
        0,
        0,
        0x00af9a000000ffffULL,      /* 0x10: 64-bit code, DPL0 */
        0x00cf92000000ffffULL,      /* 0x18: flat data */
    };

    for (int i = 0; i < 4; i++) {
        pdpt[i] = (LINUX_PML4_ADDR + 0x2000 + i * 0x1000) | 0x3;
    }
    for (int i = 0; i < 4 * 512; i++) {
        pd[i] = ((uint64_t)i << 21) | 0x83;     /* present, rw, 2 MiB */
    }
    address_space_write(&address_space_memory, LINUX_PML4_ADDR, &pml4e,
                        sizeof(pml4e));
    address_space_write(&address_space_memory, LINUX_PML4_ADDR + 0x1000,
                        pdpt, sizeof(pdpt));
    address_space_write(&address_space_memory, LINUX_PML4_ADDR + 0x2000,
                        pd, 4 * 512 * sizeof(uint64_t));
    address_space_write(&address_space_memory, LINUX_GDT_ADDR, gdt,
                        sizeof(gdt));
}

bool linux_load(MachineState *ms, const uint8_t *image, size_t len,
                uint64_t below_4g, uint64_t above_4g, Error **errp)
{
    X86MemMapEntry map[8];
    const char *cmdline = ms->kernel_cmdline ? ms->kernel_cmdline : "";
    LinuxBootConfig cfg = {
        .cmdline_paddr = LINUX_CMDLINE_ADDR,
        .cmdline_size = strlen(cmdline) + 1,
        .map = map,
        .rsdp_paddr = x86_acpi_rsdp_addr(ms),
    };
    LinuxImageInfo info;
    uint8_t bp[4096];
    g_autofree uint8_t *initrd = NULL;
    gsize initrd_size = 0;
    uint64_t kernel_size, kernel_end;

    cfg.nr_map = x86_build_memmap(below_4g, above_4g, map, G_N_ELEMENTS(map));
    if (strlen(cmdline) >= 0x10000) {
        error_setg(errp, "kernel command line too long");
        return false;
    }
    /* A first pass validates the header before we size the initrd. */
    if (!linux_build_boot_params(image, len, &cfg, bp, &info, errp)) {
        return false;
    }
    kernel_size = len - info.setup_size;
    kernel_end = LINUX_KERNEL_ADDR +
                 MAX(kernel_size, (uint64_t)get32(image + BP_INIT_SIZE));
    if (kernel_end > below_4g) {
        error_setg(errp, "kernel (0x%" PRIx64 " bytes in memory) does not "
                   "fit in 0x%" PRIx64 " bytes of RAM",
                   kernel_end - LINUX_KERNEL_ADDR, below_4g);
        return false;
    }
    if (ms->initrd_filename) {
        g_autoptr(GError) gerr = NULL;
        uint64_t limit = MIN(below_4g, (uint64_t)info.initrd_addr_max + 1);

        if (!g_file_get_contents(ms->initrd_filename, (gchar **)&initrd,
                                 &initrd_size, &gerr)) {
            error_setg(errp, "cannot read initrd: %s", gerr->message);
            return false;
        }
        if (initrd_size > limit ||
            ((limit - initrd_size) & ~0xfffULL) < kernel_end) {
            error_setg(errp, "initrd %s (%" G_GSIZE_FORMAT " bytes) does not "
                       "fit in guest RAM", ms->initrd_filename, initrd_size);
            return false;
        }
        cfg.initrd_paddr = (limit - initrd_size) & ~0xfffULL;
        cfg.initrd_size = initrd_size;
        if (!linux_build_boot_params(image, len, &cfg, bp, &info, errp)) {
            return false;
        }
    }
    address_space_write(&address_space_memory, LINUX_KERNEL_ADDR,
                        image + info.setup_size, kernel_size);
    address_space_write(&address_space_memory, LINUX_BOOT_PARAMS_ADDR, bp,
                        sizeof(bp));
    address_space_write(&address_space_memory, LINUX_CMDLINE_ADDR, cmdline,
                        cfg.cmdline_size);
    if (initrd_size) {
        address_space_write(&address_space_memory, cfg.initrd_paddr, initrd,
                            initrd_size);
    }
    linux_write_page_tables();
    x86_boot_set_entry(&(X86BootEntry) {
        .mode = X86_BOOT_LINUX64,
        .entry = LINUX_KERNEL_ADDR + 0x200,
        .arg = LINUX_BOOT_PARAMS_ADDR,
        .cr3 = LINUX_PML4_ADDR,
        .gdt_base = LINUX_GDT_ADDR,
        .gdt_limit = 4 * 8 - 1,
    });
    trace_linux_load(info.version, kernel_size, cfg.initrd_paddr,
                     cfg.initrd_size);
    return true;
}
