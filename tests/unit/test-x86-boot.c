/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Direct-boot building blocks: PVH ELF parsing (crafted images, good and
 * malformed), the hvm_start_info block, the pc memory map, and the Linux
 * boot_params zero page.
 */
#include "qemu/osdep.h"
#include <elf.h>
#include "hw/i386/x86-boot.h"
#include "hw/i386/topology.h"
#include "qapi/error.h"

/* ---- crafted ELF images ---- */

typedef struct ElfSpec {
    bool elf32;
    bool with_note;
    uint32_t note_type;
    uint32_t desc_size;         /* 4 or 8 */
    uint32_t entry;
    uint64_t load_paddr;
    uint32_t code_size;
    uint32_t bss;
} ElfSpec;

static GByteArray *make_note(const ElfSpec *s)
{
    GByteArray *n = g_byte_array_new();
    uint32_t hdr[3] = { 4, s->desc_size, s->note_type };
    uint64_t desc = s->entry;

    /* A harmless note first, so the parser has to walk past it. */
    uint32_t other[3] = { 4, 4, 1 };
    uint32_t other_desc = 0x12345678;
    g_byte_array_append(n, (uint8_t *)other, sizeof(other));
    g_byte_array_append(n, (const uint8_t *)"GNU", 4);
    g_byte_array_append(n, (uint8_t *)&other_desc, 4);

    g_byte_array_append(n, (uint8_t *)hdr, sizeof(hdr));
    g_byte_array_append(n, (const uint8_t *)"Xen", 4);
    g_byte_array_append(n, (uint8_t *)&desc, s->desc_size);
    return n;
}

static GByteArray *make_elf(const ElfSpec *s)
{
    GByteArray *img = g_byte_array_new();
    g_autoptr(GByteArray) note = make_note(s);
    size_t ehsize = s->elf32 ? sizeof(Elf32_Ehdr) : sizeof(Elf64_Ehdr);
    size_t phsize = s->elf32 ? sizeof(Elf32_Phdr) : sizeof(Elf64_Phdr);
    unsigned phnum = s->with_note ? 2 : 1;
    size_t note_off = ehsize + phnum * phsize;
    size_t code_off = 0x1000;
    g_autofree uint8_t *code = g_malloc(s->code_size);

    memset(code, 0x90, s->code_size);
    g_byte_array_set_size(img, code_off + s->code_size);
    memset(img->data, 0, img->len);
    if (s->elf32) {
        Elf32_Ehdr eh = {
            .e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
            .e_entry = s->load_paddr, .e_phoff = ehsize,
            .e_ehsize = ehsize, .e_phentsize = phsize, .e_phnum = phnum,
        };
        Elf32_Phdr load = {
            .p_type = PT_LOAD, .p_offset = code_off,
            .p_vaddr = s->load_paddr, .p_paddr = s->load_paddr,
            .p_filesz = s->code_size, .p_memsz = s->code_size + s->bss,
        };
        Elf32_Phdr pn = {
            .p_type = PT_NOTE, .p_offset = note_off, .p_filesz = note->len,
        };
        memcpy(eh.e_ident, ELFMAG, SELFMAG);
        eh.e_ident[EI_CLASS] = ELFCLASS32;
        eh.e_ident[EI_DATA] = ELFDATA2LSB;
        eh.e_ident[EI_VERSION] = EV_CURRENT;
        memcpy(img->data, &eh, sizeof(eh));
        memcpy(img->data + ehsize, &load, sizeof(load));
        if (s->with_note) {
            memcpy(img->data + ehsize + phsize, &pn, sizeof(pn));
        }
    } else {
        Elf64_Ehdr eh = {
            .e_type = ET_EXEC, .e_machine = EM_X86_64,
            .e_version = EV_CURRENT, .e_entry = s->load_paddr,
            .e_phoff = ehsize, .e_ehsize = ehsize, .e_phentsize = phsize,
            .e_phnum = phnum,
        };
        Elf64_Phdr load = {
            .p_type = PT_LOAD, .p_offset = code_off,
            .p_vaddr = 0xffffffff80000000ULL + s->load_paddr,
            .p_paddr = s->load_paddr,
            .p_filesz = s->code_size, .p_memsz = s->code_size + s->bss,
        };
        Elf64_Phdr pn = {
            .p_type = PT_NOTE, .p_offset = note_off, .p_filesz = note->len,
        };
        memcpy(eh.e_ident, ELFMAG, SELFMAG);
        eh.e_ident[EI_CLASS] = ELFCLASS64;
        eh.e_ident[EI_DATA] = ELFDATA2LSB;
        eh.e_ident[EI_VERSION] = EV_CURRENT;
        memcpy(img->data, &eh, sizeof(eh));
        memcpy(img->data + ehsize, &load, sizeof(load));
        if (s->with_note) {
            memcpy(img->data + ehsize + phsize, &pn, sizeof(pn));
        }
    }
    if (s->with_note) {
        memcpy(img->data + note_off, note->data, note->len);
    }
    memcpy(img->data + code_off, code, s->code_size);
    return img;
}

static const ElfSpec good64 = {
    .with_note = true, .note_type = XEN_ELFNOTE_PHYS32_ENTRY,
    .desc_size = 4, .entry = 0x100040, .load_paddr = 0x100000,
    .code_size = 0x200, .bss = 0x3000,
};

static void test_pvh_elf64(void)
{
    g_autoptr(GByteArray) img = make_elf(&good64);
    PvhImage pvh;

    g_assert_true(pvh_parse_elf(img->data, img->len, &pvh, &error_abort));
    g_assert_cmphex(pvh.entry, ==, 0x100040);
    g_assert_cmpuint(pvh.nr_segments, ==, 1);
    /* The physical, not the virtual, address. */
    g_assert_cmphex(pvh.segments[0].paddr, ==, 0x100000);
    g_assert_cmphex(pvh.segments[0].offset, ==, 0x1000);
    g_assert_cmphex(pvh.segments[0].filesz, ==, 0x200);
    g_assert_cmphex(pvh.segments[0].memsz, ==, 0x3200);
    g_free(pvh.segments);
}

static void test_pvh_elf32_desc8(void)
{
    ElfSpec s = good64;
    PvhImage pvh;

    s.elf32 = true;
    s.desc_size = 8;
    s.entry = 0x200010;
    s.load_paddr = 0x200000;
    g_autoptr(GByteArray) img = make_elf(&s);
    g_assert_true(pvh_parse_elf(img->data, img->len, &pvh, &error_abort));
    g_assert_cmphex(pvh.entry, ==, 0x200010);
    g_assert_cmphex(pvh.segments[0].paddr, ==, 0x200000);
    g_free(pvh.segments);
}

static void expect_parse_error(const uint8_t *buf, size_t len,
                               const char *substring)
{
    Error *err = NULL;
    PvhImage pvh;

    g_assert_false(pvh_parse_elf(buf, len, &pvh, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), substring));
    g_assert_null(pvh.segments);
    error_free(err);
}

static void test_pvh_no_note(void)
{
    ElfSpec s = good64;

    s.with_note = false;
    g_autoptr(GByteArray) img = make_elf(&s);
    expect_parse_error(img->data, img->len, "no PVH entry note");

    /* A note of another type with the right name is not the entry. */
    s.with_note = true;
    s.note_type = 17;
    g_autoptr(GByteArray) img2 = make_elf(&s);
    expect_parse_error(img2->data, img2->len, "no PVH entry note");
}

static void test_pvh_malformed(void)
{
    g_autoptr(GByteArray) img = make_elf(&good64);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img->data;
    Elf64_Phdr *ph = (Elf64_Phdr *)(img->data + sizeof(*eh));
    uint32_t *namesz;
    static const uint8_t junk[] = "MZ this is not an ELF file";

    expect_parse_error(junk, sizeof(junk), "not an ELF");
    /* Truncated inside the program headers. */
    expect_parse_error(img->data, sizeof(*eh) + 10, "outside the file");
    /* Segment running past the end of the file. */
    ph[0].p_filesz = img->len;
    expect_parse_error(img->data, img->len, "outside the file");
    ph[0].p_filesz = 0x200;
    /* filesz > memsz. */
    ph[0].p_memsz = 0x10;
    expect_parse_error(img->data, img->len, "inconsistent sizes");
    ph[0].p_memsz = 0x3200;
    /* A note whose name size points far past the segment: no crash. */
    namesz = (uint32_t *)(img->data + ph[1].p_offset);
    *namesz = 0xfffffff0;
    expect_parse_error(img->data, img->len, "no PVH entry note");
    *namesz = 4;
    /* Wrong machine. */
    eh->e_machine = EM_AARCH64;
    expect_parse_error(img->data, img->len, "not for x86-64");
    eh->e_machine = EM_X86_64;
    /* Program header count pointing outside. */
    eh->e_phnum = 0xffff;
    expect_parse_error(img->data, img->len, "outside the file");
}

/* ---- hvm_start_info ---- */

static void test_start_info(void)
{
    X86MemMapEntry map[8];
    size_t nr = x86_build_memmap(128 << 20, 0, map, G_N_ELEMENTS(map));
    uint8_t block[1024];
    size_t len = pvh_build_start_info(block, sizeof(block), 0x6000, 0x20000,
                                      0x7f00000, 0x1234, map, nr);
    HvmStartInfo si;
    HvmModlistEntry mod;
    HvmMemmapEntry e;

    g_assert_cmpuint(sizeof(HvmStartInfo), ==, 56);
    g_assert_cmpuint(sizeof(HvmModlistEntry), ==, 32);
    g_assert_cmpuint(sizeof(HvmMemmapEntry), ==, 24);
    g_assert_cmpuint(len, ==, 56 + 32 + nr * 24);
    memcpy(&si, block, sizeof(si));
    g_assert_cmphex(si.magic, ==, PVH_START_INFO_MAGIC);
    g_assert_cmpuint(si.version, ==, 1);
    g_assert_cmphex(si.cmdline_paddr, ==, 0x20000);
    g_assert_cmpuint(si.nr_modules, ==, 1);
    g_assert_cmphex(si.modlist_paddr, ==, 0x6000 + 56);
    memcpy(&mod, block + 56, sizeof(mod));
    g_assert_cmphex(mod.paddr, ==, 0x7f00000);
    g_assert_cmphex(mod.size, ==, 0x1234);
    g_assert_cmphex(si.memmap_paddr, ==, 0x6000 + 56 + 32);
    g_assert_cmpuint(si.memmap_entries, ==, nr);
    for (size_t i = 0; i < nr; i++) {
        memcpy(&e, block + 56 + 32 + i * 24, sizeof(e));
        g_assert_cmphex(e.addr, ==, map[i].addr);
        g_assert_cmphex(e.size, ==, map[i].size);
        g_assert_cmpuint(e.type, ==, map[i].type);
    }

    /* Without an initrd there is no module list. */
    len = pvh_build_start_info(block, sizeof(block), 0x6000, 0x20000, 0, 0,
                               map, nr);
    memcpy(&si, block, sizeof(si));
    g_assert_cmpuint(si.nr_modules, ==, 0);
    g_assert_cmphex(si.modlist_paddr, ==, 0);
    g_assert_cmphex(si.memmap_paddr, ==, 0x6000 + 56);
    g_assert_cmpuint(len, ==, 56 + nr * 24);

    /* The RSDP pointer (ACPI on) lands in rsdp_paddr only. */
    pvh_start_info_set_rsdp(block, X86_ACPI_RSDP_ADDR);
    memcpy(&si, block, sizeof(si));
    g_assert_cmphex(si.rsdp_paddr, ==, 0xe0000);
    g_assert_cmphex(si.memmap_paddr, ==, 0x6000 + 56);
    g_assert_cmpuint(si.memmap_entries, ==, nr);

    /* Too small a buffer: refused, not overrun. */
    g_assert_cmpuint(pvh_build_start_info(block, 56 + 32 + 24, 0x6000, 0,
                                          0x1000, 1, map, nr), ==, 0);
}

static void test_memmap(void)
{
    X86MemMapEntry map[8];
    size_t nr = x86_build_memmap(0xe0000000ULL, 0x40000000ULL, map,
                                 G_N_ELEMENTS(map));
    uint64_t ram = 0;

    g_assert_cmpuint(nr, ==, 4);
    g_assert_cmphex(map[0].addr, ==, 0);
    g_assert_cmphex(map[0].size, ==, 0x9fc00);
    g_assert_cmphex(map[1].addr, ==, 0x100000);
    g_assert_cmphex(map[1].addr + map[1].size, ==, 0xe0000000ULL);
    g_assert_cmpuint(map[2].type, ==, X86_E820_RESERVED);
    g_assert_cmphex(map[3].addr, ==, 0x100000000ULL);
    g_assert_cmphex(map[3].size, ==, 0x40000000ULL);
    for (size_t i = 1; i < nr; i++) {
        g_assert_cmphex(map[i].addr, >=, map[i - 1].addr + map[i - 1].size);
    }
    for (size_t i = 0; i < nr; i++) {
        if (map[i].type == X86_E820_RAM) {
            ram += map[i].size;
        }
    }
    g_assert_cmphex(ram, ==, 0x9fc00 + 0xe0000000ULL - 0x100000 +
                    0x40000000ULL);
    /* The caller's array bounds the count. */
    g_assert_cmpuint(x86_build_memmap(0xe0000000ULL, 1 << 30, map, 2), ==, 2);
}

/* ---- Linux boot_params ---- */

static uint8_t *make_bzimage(size_t len, uint16_t version, uint16_t xlf)
{
    uint8_t *img = g_malloc0(len);

    img[0x1f1] = 1;                         /* setup_sects: 2 sectors total */
    img[0x1fe] = 0x55;
    img[0x1ff] = 0xaa;
    img[0x200] = 0xeb;
    img[0x201] = 0x66;                      /* header ends at 0x268 */
    memcpy(img + 0x202, "HdrS", 4);
    img[0x206] = version & 0xff;
    img[0x207] = version >> 8;
    img[0x211] = 0x00;
    img[0x22c] = 0xff;                      /* initrd_addr_max 0x7fffffff */
    img[0x22d] = 0xff;
    img[0x22e] = 0xff;
    img[0x22f] = 0x7f;
    img[0x236] = xlf & 0xff;
    img[0x238] = 0x00;                      /* cmdline_size 2048 */
    img[0x239] = 0x08;
    img[0x260] = 0x00;                      /* init_size 0x20000 */
    img[0x262] = 0x02;
    img[0x267] = 0x5a;                      /* last header byte */
    img[0x268] = 0xcc;                      /* first byte past the header */
    return img;
}

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void test_boot_params(void)
{
    g_autofree uint8_t *img = make_bzimage(0x2000, 0x020f, 0x1);
    X86MemMapEntry map[8];
    LinuxBootConfig cfg = {
        .cmdline_paddr = LINUX_CMDLINE_ADDR,
        .cmdline_size = 20,
        .initrd_paddr = 0x7000000,
        .initrd_size = 0x123456,
        .map = map,
    };
    LinuxImageInfo info;
    uint8_t bp[4096];

    cfg.nr_map = x86_build_memmap(128 << 20, 0, map, G_N_ELEMENTS(map));
    g_assert_true(linux_is_bzimage(img, 0x2000));
    g_assert_true(linux_build_boot_params(img, 0x2000, &cfg, bp, &info,
                                          &error_abort));
    g_assert_cmpuint(info.setup_size, ==, 1024);
    g_assert_cmphex(info.version, ==, 0x020f);
    g_assert_cmphex(info.initrd_addr_max, ==, 0x7fffffff);
    g_assert_cmpuint(info.cmdline_max, ==, 2048);
    /* The setup header is copied through to its end and no further. */
    g_assert_cmpmem(bp + 0x202, 4, "HdrS", 4);
    g_assert_cmphex(bp[0x267], ==, 0x5a);
    g_assert_cmphex(bp[0x268], ==, 0);
    g_assert_cmphex(bp[0x1f1], ==, 1);
    /* What the loader fills in. */
    g_assert_cmphex(bp[0x210], ==, 0xff);
    g_assert_cmphex(bp[0x211] & 0x81, ==, 0x81);
    g_assert_cmphex(bp[0x1fa] | bp[0x1fb] << 8, ==, 0xffff);
    g_assert_cmphex(rd32(bp + 0x228), ==, LINUX_CMDLINE_ADDR);
    g_assert_cmphex(rd32(bp + 0x0c8), ==, 0);
    g_assert_cmphex(rd32(bp + 0x218), ==, 0x7000000);
    g_assert_cmphex(rd32(bp + 0x21c), ==, 0x123456);
    g_assert_cmpuint(bp[0x1e8], ==, cfg.nr_map);
    for (size_t i = 0; i < cfg.nr_map; i++) {
        const uint8_t *e = bp + 0x2d0 + i * 20;
        g_assert_cmphex(rd64(e), ==, map[i].addr);
        g_assert_cmphex(rd64(e + 8), ==, map[i].size);
        g_assert_cmpuint(rd32(e + 16), ==, map[i].type);
    }
    /* Nothing else of the zero page is touched. */
    for (size_t i = 0x2d0 + cfg.nr_map * 20; i < sizeof(bp); i++) {
        g_assert_cmphex(bp[i], ==, 0);
    }
    /* No ACPI: acpi_rsdp_addr stays 0. */
    g_assert_cmphex(rd64(bp + 0x070), ==, 0);

    /* With ACPI the RSDP address goes to acpi_rsdp_addr (protocol 2.14). */
    cfg.rsdp_paddr = X86_ACPI_RSDP_ADDR;
    g_assert_true(linux_build_boot_params(img, 0x2000, &cfg, bp, &info,
                                          &error_abort));
    g_assert_cmphex(rd64(bp + 0x070), ==, 0xe0000);
}

static void expect_bp_error(const uint8_t *img, size_t len,
                            const LinuxBootConfig *cfg, const char *sub)
{
    LinuxImageInfo info;
    uint8_t bp[4096];
    Error *err = NULL;

    g_assert_false(linux_build_boot_params(img, len, cfg, bp, &info, &err));
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), sub));
    error_free(err);
}

static void test_boot_params_errors(void)
{
    g_autofree uint8_t *old = make_bzimage(0x2000, 0x020a, 0x1);
    g_autofree uint8_t *no64 = make_bzimage(0x2000, 0x020f, 0x0);
    g_autofree uint8_t *good = make_bzimage(0x2000, 0x020f, 0x1);
    LinuxBootConfig cfg = { .cmdline_paddr = 0x20000, .cmdline_size = 1 };

    expect_bp_error(old, 0x2000, &cfg, "too old");
    expect_bp_error(no64, 0x2000, &cfg, "no 64-bit entry");
    expect_bp_error(good, 0x300, &cfg, "not a Linux bzImage");
    /* Setup sectors covering the whole file. */
    good[0x1f1] = 60;
    expect_bp_error(good, 0x2000, &cfg, "covers the whole file");
    good[0x1f1] = 1;
    cfg.cmdline_size = 4096;
    expect_bp_error(good, 0x2000, &cfg, "command line longer");
    cfg.cmdline_size = 1;
    cfg.initrd_paddr = 0x7ffff000;
    cfg.initrd_size = 0x2000;
    expect_bp_error(good, 0x2000, &cfg, "initrd ends above");
}

/* APIC IDs pack thread, core, die and package in ceil(log2) fields. */
static void test_apic_ids(void)
{
    CpuTopology t = { .cpus = 6, .max_cpus = 6, .sockets = 2, .dies = 1,
                      .cores = 3, .threads = 1 };
    const uint32_t want_3c[] = { 0, 1, 2, 4, 5, 6 };
    CpuTopology u = { .cpus = 12, .max_cpus = 12, .sockets = 1, .dies = 1,
                      .cores = 6, .threads = 2 };
    CpuTopology p2 = { .cpus = 8, .max_cpus = 8, .sockets = 2, .dies = 1,
                       .cores = 2, .threads = 2 };
    X86TopoFields f;

    for (unsigned i = 0; i < 6; i++) {
        g_assert_cmpuint(x86_apic_id_from_index(&t, i), ==, want_3c[i]);
    }
    f = x86_topo_fields(&t);
    g_assert_cmpuint(f.smt_width, ==, 0);
    g_assert_cmpuint(f.core_width, ==, 2);
    g_assert_cmpuint(f.pkg_shift, ==, 2);
    /* 6 cores x 2 threads: core 5 thread 1 is (5 << 1) | 1. */
    g_assert_cmpuint(x86_apic_id_from_index(&u, 11), ==, 11);
    f = x86_topo_fields(&u);
    g_assert_cmpuint(f.pkg_shift, ==, 4);
    g_assert_cmpuint(x86_topo_ids(&u, 7).core, ==, 3);
    /* Powers of two: the index is the ID. */
    for (unsigned i = 0; i < 8; i++) {
        g_assert_cmpuint(x86_apic_id_from_index(&p2, i), ==, i);
    }
    g_assert_cmpuint(x86_topo_ids(&p2, 5).pkg, ==, 1);
}

/* The UC ranges cover [hole, 4 GiB) exactly, in aligned pieces. */
static void test_mtrr_plan(void)
{
    const uint64_t holes[] = { 0xe0000000ULL, 0xb0000000ULL, 0x80000000ULL,
                               0xc0000000ULL };
    X86MtrrPlan p;

    for (size_t h = 0; h < G_N_ELEMENTS(holes); h++) {
        uint64_t at = holes[h];

        x86_mtrr_plan(holes[h], 40, 8, &p);
        g_assert_cmphex(p.def_type, ==, 0xc06);
        for (unsigned i = 0; i < p.nr_var; i++) {
            uint64_t size = ((~(p.var_mask[i] & ~0xfffULL)) &
                             ((1ULL << 40) - 1)) + 1;

            g_assert_cmphex(p.var_base[i] & ~0xfffULL, ==, at);
            g_assert_cmpuint(p.var_base[i] & 0xff, ==, 0);     /* UC */
            g_assert_true(p.var_mask[i] & (1u << 11));
            g_assert_cmphex(at % size, ==, 0);
            at += size;
        }
        g_assert_cmphex(at, ==, 0x100000000ULL);
    }
    x86_mtrr_plan(0xb0000000ULL, 40, 8, &p);
    g_assert_cmpuint(p.nr_var, ==, 2);
    /* Fixed ranges: WB, except the VGA window at 0xa0000. */
    for (int i = 0; i < X86_MTRR_NR_FIXED; i++) {
        g_assert_cmphex(p.fixed[i], ==, p.fixed_msr[i] == 0x259 ? 0 :
                        0x0606060606060606ULL);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/x86-boot/pvh/elf64-entry-note-and-segments",
                    test_pvh_elf64);
    g_test_add_func("/x86-boot/pvh/elf32-with-8-byte-note",
                    test_pvh_elf32_desc8);
    g_test_add_func("/x86-boot/pvh/missing-note-rejected", test_pvh_no_note);
    g_test_add_func("/x86-boot/pvh/malformed-elf-rejected",
                    test_pvh_malformed);
    g_test_add_func("/x86-boot/pvh/start-info-layout", test_start_info);
    g_test_add_func("/x86-boot/memmap/pc-layout", test_memmap);
    g_test_add_func("/x86-boot/topology/apic-ids", test_apic_ids);
    g_test_add_func("/x86-boot/mtrr/plan", test_mtrr_plan);
    g_test_add_func("/x86-boot/linux/boot-params", test_boot_params);
    g_test_add_func("/x86-boot/linux/bad-images-rejected",
                    test_boot_params_errors);
    return g_test_run();
}
