/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -kernel on the pc machine: pick the loader by format, remember the boot
 * vCPU's entry state, and load the image again at every machine reset so
 * a rebooting guest starts from pristine code and data.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-boot.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/pci/pci_host.h"
#include "hw/i386/pc.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

/* Images larger than this are not kernels we can place below 4 GiB. */
#define X86_KERNEL_MAX_SIZE (1024ULL * 1024 * 1024)

static X86BootEntry x86_boot_entry = { .mode = X86_BOOT_RESET };

typedef struct X86KernelImage {
    MachineState *ms;
    uint8_t *data;
    gsize len;
    uint64_t below_4g;
    uint64_t above_4g;
    bool is_elf;
} X86KernelImage;

static X86KernelImage x86_kernel;

void x86_boot_set_entry(const X86BootEntry *entry)
{
    x86_boot_entry = *entry;
}

const X86BootEntry *x86_boot_get_entry(void)
{
    return &x86_boot_entry;
}

static uint64_t x86_ecam_base = PC_PCI_ECAM_BASE;
static uint64_t x86_ecam_size = PC_PCI_ECAM_SIZE;

void x86_set_ecam(uint64_t base, uint64_t size)
{
    x86_ecam_base = base;
    x86_ecam_size = size;
}

uint64_t x86_pci_hole_start(void)
{
    return x86_ecam_base;
}

#define MTRR_TYPE_UC 0
#define MTRR_TYPE_WB 6
#define MTRR_DEF_FE (1u << 10)
#define MTRR_DEF_E (1u << 11)
#define MTRR_VALID (1u << 11)
#define MTRR_WB_X8 0x0606060606060606ULL

void x86_mtrr_plan(uint64_t hole_start, unsigned phys_bits, unsigned max_var,
                   X86MtrrPlan *plan)
{
    static const uint32_t fixed_msr[X86_MTRR_NR_FIXED] = {
        0x250, 0x258, 0x259, 0x268, 0x269, 0x26a, 0x26b, 0x26c, 0x26d,
        0x26e, 0x26f,
    };
    const uint64_t top = 0x100000000ULL;
    uint64_t phys_mask = (phys_bits >= 64 ? ~0ULL
                          : (1ULL << MAX(phys_bits, 36u)) - 1);
    uint64_t p = QEMU_ALIGN_UP(hole_start, 4096);

    memset(plan, 0, sizeof(*plan));
    plan->def_type = MTRR_DEF_E | MTRR_DEF_FE | MTRR_TYPE_WB;
    for (int i = 0; i < X86_MTRR_NR_FIXED; i++) {
        plan->fixed_msr[i] = fixed_msr[i];
        /* 0xa0000..0xbffff (fix16K_A0000) is the VGA window: UC. */
        plan->fixed[i] = fixed_msr[i] == 0x259 ? 0 : MTRR_WB_X8;
    }
    max_var = MIN(max_var, (unsigned)X86_MTRR_MAX_VAR);
    while (p < top && plan->nr_var < max_var) {
        uint64_t size = p ? p & -p : top;

        while (p + size > top) {
            size >>= 1;
        }
        plan->var_base[plan->nr_var] = p | MTRR_TYPE_UC;
        plan->var_mask[plan->nr_var] = (~(size - 1) & phys_mask) |
                                       MTRR_VALID;
        plan->nr_var++;
        p += size;
    }
}

uint64_t x86_acpi_rsdp_addr(MachineState *ms)
{
    return ms->acpi ? X86_ACPI_RSDP_ADDR : 0;
}

size_t x86_build_memmap(uint64_t below_4g, uint64_t above_4g,
                        X86MemMapEntry *map, size_t max)
{
    size_t n = 0;

#define X86_ADD(a, s, t) do {                                          \
        if (n < max && (s)) {                                           \
            map[n++] = (X86MemMapEntry) { (a), (s), (t) };              \
        }                                                               \
    } while (0)
    /* Conventional memory, then the legacy VGA/BIOS hole. */
    X86_ADD(0, MIN(below_4g, 0x9fc00), X86_E820_RAM);
    if (below_4g > 0x100000) {
        X86_ADD(0x100000, below_4g - 0x100000, X86_E820_RAM);
    }
    X86_ADD(x86_ecam_base, x86_ecam_size, X86_E820_RESERVED);
    X86_ADD(PC_HIGHMEM_BASE, above_4g, X86_E820_RAM);
#undef X86_ADD
    return n;
}

static bool x86_load_image(X86KernelImage *k, Error **errp)
{
    if (k->is_elf) {
        return pvh_load(k->ms, k->data, k->len, k->below_4g, k->above_4g,
                        errp);
    }
    return linux_load(k->ms, k->data, k->len, k->below_4g, k->above_4g,
                      errp);
}

static void x86_kernel_reset(void *opaque)
{
    Error *err = NULL;

    if (!x86_load_image(&x86_kernel, &err)) {
        error_report_err(err);
    }
}

bool x86_load_kernel(MachineState *ms, uint64_t below_4g, uint64_t above_4g,
                     Error **errp)
{
    g_autoptr(GError) gerr = NULL;
    X86KernelImage k = {
        .ms = ms, .below_4g = below_4g, .above_4g = above_4g,
    };
    struct stat st;

    if (stat(ms->kernel_filename, &st) == 0 &&
        (uint64_t)st.st_size > X86_KERNEL_MAX_SIZE) {
        error_setg(errp, "-kernel %s: image too large", ms->kernel_filename);
        return false;
    }
    if (!g_file_get_contents(ms->kernel_filename, (gchar **)&k.data, &k.len,
                             &gerr)) {
        error_setg(errp, "-kernel: %s", gerr->message);
        return false;
    }
    k.is_elf = pvh_is_elf(k.data, k.len);
    if (!k.is_elf && !linux_is_bzimage(k.data, k.len)) {
        error_setg(errp, "-kernel %s: neither a PVH ELF image nor a Linux "
                   "bzImage", ms->kernel_filename);
        g_free(k.data);
        return false;
    }
    if (!x86_load_image(&k, errp)) {
        error_prepend(errp, "-kernel %s: ", ms->kernel_filename);
        g_free(k.data);
        return false;
    }
    g_free(x86_kernel.data);
    x86_kernel = k;
    qemu_register_reset(x86_kernel_reset, NULL);
    trace_x86_load_kernel(ms->kernel_filename, k.is_elf);
    return true;
}
