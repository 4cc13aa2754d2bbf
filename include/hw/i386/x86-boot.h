/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Direct kernel boot on the pc machine: -kernel takes a PVH ELF (the
 * x86/HVM direct boot ABI) or a Linux bzImage.  The loaders put the image,
 * its boot block and command line into guest RAM and record how the boot
 * vCPU must enter it; the accelerator loads that state at every reset.
 *
 * The pure parts (ELF note parsing, hvm_start_info and boot_params
 * construction) work on buffers and are unit-tested without a VM.
 */
#ifndef HW_I386_X86_BOOT_H
#define HW_I386_X86_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "qemu/typedefs.h"

typedef enum X86BootMode {
    X86_BOOT_RESET,     /* no -kernel: the architectural reset state */
    X86_BOOT_PVH32,     /* 32-bit protected mode, paging off, EBX = arg */
    X86_BOOT_LINUX64,   /* long mode, identity paging, RSI = arg */
} X86BootMode;

typedef struct X86BootEntry {
    X86BootMode mode;
    uint64_t entry;         /* EIP / RIP */
    uint64_t arg;           /* hvm_start_info or boot_params address */
    uint64_t cr3;           /* LINUX64: identity-mapping page tables */
    uint64_t gdt_base;      /* LINUX64: GDT with the boot CS/DS */
    uint16_t gdt_limit;
} X86BootEntry;

/* Selectors the LINUX64 GDT provides (the boot protocol's __BOOT_CS/DS). */
#define X86_BOOT_CS 0x10
#define X86_BOOT_DS 0x18

void x86_boot_set_entry(const X86BootEntry *entry);
const X86BootEntry *x86_boot_get_entry(void);

/* One memory-map entry (E820 types: 1 RAM, 2 reserved). */
typedef struct X86MemMapEntry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
} X86MemMapEntry;
#define X86_E820_RAM 1
#define X86_E820_RESERVED 2

/*
 * Where the pc machine's ACPI tables start (hw/i386/acpi-pc.c): the RSDP
 * first, inside the legacy BIOS area a guest scans, so the boot
 * protocols' pointers and the scan find the same table.
 */
#define X86_ACPI_RSDP_ADDR 0xe0000
#define X86_ACPI_AREA_SIZE 0x10000
/*
 * SMBIOS entry points and table on the direct -kernel path
 * (hw/i386/smbios-pc.c): the upper half of the BIOS area, which Linux's
 * DMI scan reads.
 */
#define X86_SMBIOS_ADDR 0xf0000
#define X86_SMBIOS_AREA_SIZE 0xc000
/*
 * The MP table (hw/i386/mptable.c) on that path: the top 16 KiB of the
 * same area, which a kernel's MP floating-pointer scan also covers.
 */
#define X86_MPTABLE_ADDR 0xfc000
#define X86_MPTABLE_AREA_SIZE 0x4000
/* The RSDP address to hand to the guest: 0 with -machine acpi=off. */
uint64_t x86_acpi_rsdp_addr(MachineState *ms);

/* Where the machine's ECAM is (reserved in the memory map). */
void x86_set_ecam(uint64_t base, uint64_t size);

/* Start of the 32-bit PCI hole (the ECAM is its lowest part). */
uint64_t x86_pci_hole_start(void);

/*
 * The MTRRs firmware leaves for the OS, for the direct -kernel path
 * (Conduit plays the firmware there): enabled, write-back by default,
 * fixed ranges write-back except the legacy VGA window (uncached), and
 * uncached variable ranges covering [hole_start, 4 GiB) in naturally
 * aligned power-of-two pieces.  Pure.
 */
#define X86_MTRR_MAX_VAR 8
#define X86_MTRR_NR_FIXED 11
typedef struct X86MtrrPlan {
    uint64_t def_type;                          /* MSR 0x2ff */
    uint32_t fixed_msr[X86_MTRR_NR_FIXED];
    uint64_t fixed[X86_MTRR_NR_FIXED];
    unsigned nr_var;
    uint64_t var_base[X86_MTRR_MAX_VAR];        /* MSR 0x200 + 2n */
    uint64_t var_mask[X86_MTRR_MAX_VAR];        /* MSR 0x201 + 2n */
} X86MtrrPlan;
void x86_mtrr_plan(uint64_t hole_start, unsigned phys_bits, unsigned max_var,
                   X86MtrrPlan *plan);

/* The pc memory map for the given RAM split; returns the entry count. */
size_t x86_build_memmap(uint64_t below_4g, uint64_t above_4g,
                        X86MemMapEntry *map, size_t max);

/*
 * Loads ms->kernel_filename (PVH ELF or bzImage), ms->initrd_filename and
 * ms->kernel_cmdline into RAM and records the entry state.  False with a
 * message naming the file on any malformed or oversized input.
 */
bool x86_load_kernel(MachineState *ms, uint64_t below_4g, uint64_t above_4g,
                     Error **errp);

/* ---- PVH (hw/i386/pvh.c) --------------------------------------------- */

#define PVH_START_INFO_MAGIC 0x336ec578
#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* The ABI's hvm_start_info, version 1 (little-endian, 56 bytes). */
typedef struct HvmStartInfo {
    uint32_t magic;
    uint32_t version;
    uint32_t flags;
    uint32_t nr_modules;
    uint64_t modlist_paddr;
    uint64_t cmdline_paddr;
    uint64_t rsdp_paddr;
    uint64_t memmap_paddr;
    uint32_t memmap_entries;
    uint32_t reserved;
} HvmStartInfo;

typedef struct HvmModlistEntry {
    uint64_t paddr;
    uint64_t size;
    uint64_t cmdline_paddr;
    uint64_t reserved;
} HvmModlistEntry;

typedef struct HvmMemmapEntry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
    uint32_t reserved;
} HvmMemmapEntry;

typedef struct PvhSegment {
    uint64_t paddr;
    uint64_t offset;        /* in the file */
    uint64_t filesz;
    uint64_t memsz;
} PvhSegment;

typedef struct PvhImage {
    uint32_t entry;         /* from the XEN_ELFNOTE_PHYS32_ENTRY note */
    PvhSegment *segments;   /* PT_LOAD, g_free() it */
    size_t nr_segments;
} PvhImage;

/*
 * True if buf looks like an ELF file at all (so -kernel errors can say
 * "not a PVH image" rather than "not a bzImage").
 */
bool pvh_is_elf(const uint8_t *buf, size_t len);
/*
 * Parses an ELF32 or ELF64 little-endian x86 image: its PT_LOAD segments
 * and the PVH entry note.  Every offset and size is checked against len.
 */
bool pvh_parse_elf(const uint8_t *buf, size_t len, PvhImage *img,
                   Error **errp);

/* Where the loader puts the boot block (guest-physical). */
#define PVH_START_INFO_ADDR 0x6000
#define PVH_CMDLINE_ADDR 0x20000
#define PVH_CMDLINE_MAX 0x10000

/*
 * Builds the boot block for start_info at base: HvmStartInfo, then the
 * module list (0 or 1 entry), then the memory map, into out (out_size
 * bytes, zeroed first).  Returns the bytes used, 0 if it does not fit.
 */
size_t pvh_build_start_info(uint8_t *out, size_t out_size, uint64_t base,
                            uint64_t cmdline_paddr,
                            uint64_t initrd_paddr, uint64_t initrd_size,
                            const X86MemMapEntry *map, size_t nr_map);
/* Sets rsdp_paddr in a block built by pvh_build_start_info(). */
void pvh_start_info_set_rsdp(uint8_t *block, uint64_t rsdp_paddr);

bool pvh_load(MachineState *ms, const uint8_t *image, size_t len,
              uint64_t below_4g, uint64_t above_4g, Error **errp);

/* ---- Linux bzImage (hw/i386/linux-boot.c) ---------------------------- */

#define LINUX_BOOT_PARAMS_ADDR 0x7000
#define LINUX_CMDLINE_ADDR 0x20000
#define LINUX_GDT_ADDR 0x500
#define LINUX_PML4_ADDR 0x9000
#define LINUX_KERNEL_ADDR 0x100000

bool linux_is_bzimage(const uint8_t *buf, size_t len);

/* What linux_build_boot_params needs to know besides the image. */
typedef struct LinuxBootConfig {
    uint64_t cmdline_paddr;
    uint32_t cmdline_size;      /* including the NUL */
    uint64_t initrd_paddr;
    uint64_t initrd_size;
    const X86MemMapEntry *map;
    size_t nr_map;
    uint64_t rsdp_paddr;        /* boot_params.acpi_rsdp_addr, 0: none */
} LinuxBootConfig;

typedef struct LinuxImageInfo {
    size_t setup_size;          /* bytes of real-mode setup in the file */
    uint16_t version;
    uint64_t initrd_addr_max;
    uint32_t cmdline_max;
} LinuxImageInfo;

/*
 * Checks the setup header (magic, protocol >= 2.12, 64-bit entry) and
 * fills the 4 KiB zero page bp from it and cfg.
 */
bool linux_build_boot_params(const uint8_t *image, size_t len,
                             const LinuxBootConfig *cfg, uint8_t bp[4096],
                             LinuxImageInfo *info, Error **errp);

bool linux_load(MachineState *ms, const uint8_t *image, size_t len,
                uint64_t below_4g, uint64_t above_4g, Error **errp);

#endif
