/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * PVH direct boot: an ELF image (32- or 64-bit) whose XEN_ELFNOTE_PHYS32_ENTRY
 * note gives a 32-bit entry point.  Its PT_LOAD segments go to their
 * physical addresses, an hvm_start_info block (command line, memory map,
 * -initrd as module 0) goes at PVH_START_INFO_ADDR, and the boot vCPU
 * enters in flat 32-bit protected mode with EBX pointing at the block.
 */
#include "qemu/osdep.h"
#include <elf.h>
#include "hw/i386/x86-boot.h"
#include "hw/boards.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "trace.h"

bool pvh_is_elf(const uint8_t *buf, size_t len)
{
    return len >= EI_NIDENT && !memcmp(buf, ELFMAG, SELFMAG);
}

/* [off, off + size) inside a buffer of len bytes, without overflow. */
static bool range_ok(uint64_t off, uint64_t size, size_t len)
{
    return off <= len && size <= len - off;
}

/* The fields we need from either ELF class. */
typedef struct ElfPhdrInfo {
    uint32_t type;
    uint64_t offset;
    uint64_t paddr;
    uint64_t filesz;
    uint64_t memsz;
} ElfPhdrInfo;

static void elf_read_phdr(const uint8_t *p, bool is64, ElfPhdrInfo *ph)
{
    if (is64) {
        Elf64_Phdr h;
        memcpy(&h, p, sizeof(h));
        *ph = (ElfPhdrInfo) { h.p_type, h.p_offset, h.p_paddr, h.p_filesz,
                              h.p_memsz };
    } else {
        Elf32_Phdr h;
        memcpy(&h, p, sizeof(h));
        *ph = (ElfPhdrInfo) { h.p_type, h.p_offset, h.p_paddr, h.p_filesz,
                              h.p_memsz };
    }
}

/*
 * Looks for the "Xen" note of type PHYS32_ENTRY in a PT_NOTE segment.
 * Notes are 4-byte aligned in both ELF classes as used by x86 kernels.
 */
static bool pvh_find_entry_note(const uint8_t *notes, uint64_t size,
                                uint32_t *entry)
{
    uint64_t off = 0;

    while (size - off >= 12) {
        uint32_t namesz, descsz, type;
        uint64_t name_off, desc_off, next;

        memcpy(&namesz, notes + off, 4);
        memcpy(&descsz, notes + off + 4, 4);
        memcpy(&type, notes + off + 8, 4);
        name_off = off + 12;
        desc_off = name_off + (((uint64_t)namesz + 3) & ~3ULL);
        next = desc_off + (((uint64_t)descsz + 3) & ~3ULL);
        if (desc_off > size || next > size) {
            return false;
        }
        if (type == XEN_ELFNOTE_PHYS32_ENTRY && namesz == 4 &&
            !memcmp(notes + name_off, "Xen", 4) &&
            (descsz == 4 || descsz == 8)) {
            uint64_t v = 0;
            memcpy(&v, notes + desc_off, descsz);
            if (v > UINT32_MAX) {
                return false;
            }
            *entry = v;
            return true;
        }
        off = next;
    }
    return false;
}

bool pvh_parse_elf(const uint8_t *buf, size_t len, PvhImage *img,
                   Error **errp)
{
    bool is64;
    uint64_t phoff;
    unsigned phentsize, phnum;
    bool have_entry = false;
    g_autofree PvhSegment *segs = NULL;
    size_t nr = 0;

    *img = (PvhImage) { 0 };
    if (!pvh_is_elf(buf, len)) {
        error_setg(errp, "not an ELF file");
        return false;
    }
    if (buf[EI_DATA] != ELFDATA2LSB) {
        error_setg(errp, "ELF image is not little-endian");
        return false;
    }
    if (buf[EI_CLASS] == ELFCLASS64 && len >= sizeof(Elf64_Ehdr)) {
        Elf64_Ehdr eh;
        memcpy(&eh, buf, sizeof(eh));
        is64 = true;
        if (eh.e_machine != EM_X86_64) {
            error_setg(errp, "ELF64 image is not for x86-64 (machine %u)",
                       eh.e_machine);
            return false;
        }
        phoff = eh.e_phoff;
        phentsize = eh.e_phentsize;
        phnum = eh.e_phnum;
        if (phentsize != sizeof(Elf64_Phdr)) {
            error_setg(errp, "bad ELF program header size %u", phentsize);
            return false;
        }
    } else if (buf[EI_CLASS] == ELFCLASS32 && len >= sizeof(Elf32_Ehdr)) {
        Elf32_Ehdr eh;
        memcpy(&eh, buf, sizeof(eh));
        is64 = false;
        if (eh.e_machine != EM_386 && eh.e_machine != EM_X86_64) {
            error_setg(errp, "ELF32 image is not for x86 (machine %u)",
                       eh.e_machine);
            return false;
        }
        phoff = eh.e_phoff;
        phentsize = eh.e_phentsize;
        phnum = eh.e_phnum;
        if (phentsize != sizeof(Elf32_Phdr)) {
            error_setg(errp, "bad ELF program header size %u", phentsize);
            return false;
        }
    } else {
        error_setg(errp, "truncated or unknown-class ELF header");
        return false;
    }
    if (!phnum || !range_ok(phoff, (uint64_t)phnum * phentsize, len)) {
        error_setg(errp, "ELF program headers lie outside the file");
        return false;
    }
    segs = g_new0(PvhSegment, phnum);
    for (unsigned i = 0; i < phnum; i++) {
        ElfPhdrInfo ph;

        elf_read_phdr(buf + phoff + (uint64_t)i * phentsize, is64, &ph);
        if (ph.type == PT_NOTE) {
            if (!range_ok(ph.offset, ph.filesz, len)) {
                error_setg(errp, "ELF note segment %u lies outside the file",
                           i);
                return false;
            }
            if (!have_entry) {
                have_entry = pvh_find_entry_note(buf + ph.offset, ph.filesz,
                                                 &img->entry);
            }
        } else if (ph.type == PT_LOAD) {
            if (!range_ok(ph.offset, ph.filesz, len)) {
                error_setg(errp, "ELF segment %u lies outside the file", i);
                return false;
            }
            if (ph.filesz > ph.memsz || ph.paddr + ph.memsz < ph.paddr) {
                error_setg(errp, "ELF segment %u has inconsistent sizes", i);
                return false;
            }
            segs[nr++] = (PvhSegment) {
                .paddr = ph.paddr, .offset = ph.offset,
                .filesz = ph.filesz, .memsz = ph.memsz,
            };
        }
    }
    if (!have_entry) {
        error_setg(errp, "ELF image has no PVH entry note "
                   "(XEN_ELFNOTE_PHYS32_ENTRY)");
        return false;
    }
    if (!nr) {
        error_setg(errp, "ELF image has no loadable segment");
        return false;
    }
    img->segments = g_steal_pointer(&segs);
    img->nr_segments = nr;
    return true;
}

size_t pvh_build_start_info(uint8_t *out, size_t out_size, uint64_t base,
                            uint64_t cmdline_paddr,
                            uint64_t initrd_paddr, uint64_t initrd_size,
                            const X86MemMapEntry *map, size_t nr_map)
{
    HvmStartInfo info = {
        .magic = PVH_START_INFO_MAGIC,
        .version = 1,
        .cmdline_paddr = cmdline_paddr,
    };
    size_t off = sizeof(info);

    if (out_size < off) {
        return 0;
    }
    memset(out, 0, out_size);
    if (initrd_size) {
        HvmModlistEntry mod = { .paddr = initrd_paddr, .size = initrd_size };

        if (out_size - off < sizeof(mod)) {
            return 0;
        }
        info.nr_modules = 1;
        info.modlist_paddr = base + off;
        memcpy(out + off, &mod, sizeof(mod));
        off += sizeof(mod);
    }
    if ((out_size - off) / sizeof(HvmMemmapEntry) < nr_map) {
        return 0;
    }
    info.memmap_paddr = base + off;
    info.memmap_entries = nr_map;
    for (size_t i = 0; i < nr_map; i++) {
        HvmMemmapEntry e = {
            .addr = map[i].addr, .size = map[i].size, .type = map[i].type,
        };
        memcpy(out + off, &e, sizeof(e));
        off += sizeof(e);
    }
    memcpy(out, &info, sizeof(info));
    return off;
}

/* Guest RAM below 4 GiB that the loader may fill, for overlap checks. */
static bool pvh_fits_low_ram(uint64_t addr, uint64_t size, uint64_t below_4g)
{
    return addr <= below_4g && size <= below_4g - addr;
}

static bool overlaps(uint64_t a, uint64_t asz, uint64_t b, uint64_t bsz)
{
    return a < b + bsz && b < a + asz;
}

void pvh_start_info_set_rsdp(uint8_t *block, uint64_t rsdp_paddr)
{
    HvmStartInfo info;

    memcpy(&info, block, sizeof(info));
    info.rsdp_paddr = rsdp_paddr;
    memcpy(block, &info, sizeof(info));
}

bool pvh_load(MachineState *ms, const uint8_t *image, size_t len,
              uint64_t below_4g, uint64_t above_4g, Error **errp)
{
    PvhImage img;
    X86MemMapEntry map[8];
    size_t nr_map = x86_build_memmap(below_4g, above_4g, map, G_N_ELEMENTS(map));
    uint8_t block[PVH_CMDLINE_ADDR - PVH_START_INFO_ADDR];
    const char *cmdline = ms->kernel_cmdline ? ms->kernel_cmdline : "";
    size_t cmdline_len = strlen(cmdline) + 1;
    g_autofree uint8_t *initrd = NULL;
    gsize initrd_size = 0;
    uint64_t initrd_addr = 0, image_end = 0;
    size_t block_len;

    if (!pvh_parse_elf(image, len, &img, errp)) {
        return false;
    }
    for (size_t i = 0; i < img.nr_segments; i++) {
        PvhSegment *s = &img.segments[i];

        if (!pvh_fits_low_ram(s->paddr, s->memsz, below_4g) ||
            overlaps(s->paddr, s->memsz, PVH_START_INFO_ADDR,
                     PVH_CMDLINE_ADDR + PVH_CMDLINE_MAX -
                     PVH_START_INFO_ADDR)) {
            error_setg(errp, "ELF segment at 0x%" PRIx64 " size 0x%" PRIx64
                       " does not fit in guest RAM (or overlaps the boot "
                       "block at 0x%x-0x%x)", s->paddr, s->memsz,
                       PVH_START_INFO_ADDR, PVH_CMDLINE_ADDR + PVH_CMDLINE_MAX);
            g_free(img.segments);
            return false;
        }
        image_end = MAX(image_end, s->paddr + s->memsz);
    }
    if (cmdline_len > PVH_CMDLINE_MAX) {
        error_setg(errp, "kernel command line longer than %d bytes",
                   PVH_CMDLINE_MAX - 1);
        g_free(img.segments);
        return false;
    }
    if (ms->initrd_filename) {
        g_autoptr(GError) gerr = NULL;

        if (!g_file_get_contents(ms->initrd_filename, (gchar **)&initrd,
                                 &initrd_size, &gerr)) {
            error_setg(errp, "cannot read initrd: %s", gerr->message);
            g_free(img.segments);
            return false;
        }
        /* Top of low RAM, page aligned, above the image. */
        initrd_addr = (below_4g - initrd_size) & ~0xfffULL;
        if (initrd_size > below_4g || initrd_addr < image_end ||
            initrd_addr < PVH_CMDLINE_ADDR + PVH_CMDLINE_MAX) {
            error_setg(errp, "initrd %s (%" G_GSIZE_FORMAT " bytes) does not "
                       "fit in guest RAM", ms->initrd_filename, initrd_size);
            g_free(img.segments);
            return false;
        }
    }
    block_len = pvh_build_start_info(block, sizeof(block), PVH_START_INFO_ADDR,
                                     PVH_CMDLINE_ADDR, initrd_addr,
                                     initrd_size, map, nr_map);
    g_assert(block_len);
    pvh_start_info_set_rsdp(block, x86_acpi_rsdp_addr(ms));

    for (size_t i = 0; i < img.nr_segments; i++) {
        PvhSegment *s = &img.segments[i];
        g_autofree uint8_t *zero = g_malloc0(MIN(s->memsz - s->filesz,
                                                 1024 * 1024) + 1);

        address_space_write(&address_space_memory, s->paddr,
                            image + s->offset, s->filesz);
        /* bss: RAM starts zeroed, but a reset must clear it again. */
        for (uint64_t done = s->filesz; done < s->memsz;) {
            uint64_t n = MIN(s->memsz - done, 1024 * 1024);
            address_space_write(&address_space_memory, s->paddr + done,
                                zero, n);
            done += n;
        }
        trace_pvh_load_segment(s->paddr, s->filesz, s->memsz);
    }
    address_space_write(&address_space_memory, PVH_START_INFO_ADDR, block,
                        block_len);
    address_space_write(&address_space_memory, PVH_CMDLINE_ADDR, cmdline,
                        cmdline_len);
    if (initrd_size) {
        address_space_write(&address_space_memory, initrd_addr, initrd,
                            initrd_size);
    }
    x86_boot_set_entry(&(X86BootEntry) {
        .mode = X86_BOOT_PVH32,
        .entry = img.entry,
        .arg = PVH_START_INFO_ADDR,
    });
    trace_pvh_load(img.entry, PVH_START_INFO_ADDR, initrd_addr, initrd_size);
    g_free(img.segments);
    return true;
}
