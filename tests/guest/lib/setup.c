/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runtime set-up at CPL0: descriptor tables, the PVH start info (command
 * line, memory map), a page allocator, interrupt dispatch and exceptions.
 */
#include "libguest.h"
#include "segments.h"

#define HVM_START_MAGIC 0x336ec578
#define HVM_MEMMAP_TYPE_RAM 1
#define PTE_PRESENT_RW_USER 0x7ULL
#define PDE_2M_RW_USER 0x87ULL
#define FOUR_GIB (4ULL << 30)
#define DEFAULT_RAM_TOP (32ULL << 20)

struct hvm_start_info {
    uint32_t magic;
    uint32_t version;
    uint32_t flags;
    uint32_t nr_modules;
    uint64_t modlist_paddr;
    uint64_t cmdline_paddr;
    uint64_t rsdp_paddr;
    uint64_t memmap_paddr;          /* version >= 1 */
    uint32_t memmap_entries;
    uint32_t reserved;
};

struct hvm_memmap_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;
    uint32_t reserved;
};

typedef struct IdtEntry {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_high;
    uint32_t reserved;
} __attribute__((packed)) IdtEntry;

typedef struct Tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed)) Tss;

typedef struct IrqSlot {
    IrqHandler fn;
    void *opaque;
} IrqSlot;

extern uint32_t pvh_start_info;
extern uint64_t gdt[];
extern uint64_t pml4[], pdpt[];
extern char isr_stubs[];
extern char irq_count_stubs[];
extern char user_exit_point[];
void __attribute__((noreturn)) user_return_entry(uint64_t value);
extern char trap_stack_top[];
extern char _end[];

static IdtEntry idt[256] __attribute__((aligned(16)));
static Tss tss __attribute__((aligned(16)));
static IrqSlot irq_slots[256];
volatile uint64_t irq_counts[256];
static const char *cmdline_str = "";
static uint64_t ram_end = DEFAULT_RAM_TOP;
static uint64_t alloc_next;
static uint64_t high_ram;

static const char *const exception_names[32] = {
    "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO",
    "#TS", "#NP", "#SS", "#GP", "#PF", "#15", "#MF", "#AC", "#MC", "#XM",
    "#VE", "#CP",
};

static void idt_set(unsigned vector, void *handler, unsigned dpl)
{
    uint64_t addr = (uint64_t)handler;
    IdtEntry *e = &idt[vector];

    e->offset_low = addr & 0xffff;
    e->selector = KERNEL_CS;
    e->ist = 0;
    e->type_attr = 0x8e | (dpl << 5);       /* present, interrupt gate */
    e->offset_mid = (addr >> 16) & 0xffff;
    e->offset_high = addr >> 32;
    e->reserved = 0;
}

static void descriptors_init(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr = { sizeof(idt) - 1, (uint64_t)idt };
    uint64_t base = (uint64_t)&tss, limit = sizeof(tss) - 1;
    unsigned i;

    for (i = 0; i < 256; i++) {
        idt_set(i, isr_stubs + 16 * i, 0);
    }
    __asm__ __volatile__("lidt %0" : : "m"(idtr));

    /* Interrupts taken at CPL3 land on their own stack, never on the
     * kernel stack that run_user() parked its frame on. */
    tss.rsp[0] = (uint64_t)trap_stack_top;
    tss.iomap_base = sizeof(tss);
    gdt[TSS_SEL / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
                       (0x89ULL << 40) | (((limit >> 16) & 0xf) << 48) |
                       (((base >> 24) & 0xff) << 56);
    gdt[TSS_SEL / 8 + 1] = base >> 32;
    __asm__ __volatile__("ltr %w0" : : "r"(TSS_SEL));
}

/* 8259s: remap away from the exception vectors, then mask everything. */
static void pic_disable(void)
{
    outb(0x20, 0x11);
    outb(0xa0, 0x11);
    outb(0x21, 0x20);
    outb(0xa1, 0x28);
    outb(0x21, 0x04);
    outb(0xa1, 0x02);
    outb(0x21, 0x01);
    outb(0xa1, 0x01);
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
}

static void start_info_parse(void)
{
    const struct hvm_start_info *si =
        (const void *)(uint64_t)pvh_start_info;
    const struct hvm_memmap_entry *map;
    uint32_t i;

    if (!si || si->magic != HVM_START_MAGIC) {
        printf("warning: no PVH start info (ebx=0x%x)\n", pvh_start_info);
        return;
    }
    if (si->cmdline_paddr && si->cmdline_paddr < FOUR_GIB) {
        cmdline_str = (const char *)si->cmdline_paddr;
    }
    if (si->version < 1 || !si->memmap_paddr || !si->memmap_entries) {
        printf("warning: no PVH memory map, assuming %lu MiB of RAM\n",
               ram_end >> 20);
        return;
    }
    map = (const void *)si->memmap_paddr;
    for (i = 0; i < si->memmap_entries; i++) {
        if (map[i].type == HVM_MEMMAP_TYPE_RAM &&
            map[i].addr <= (uint64_t)_end &&
            map[i].addr + map[i].size > (uint64_t)_end) {
            ram_end = map[i].addr + map[i].size;
        }
        if (map[i].type == HVM_MEMMAP_TYPE_RAM && map[i].addr >= FOUR_GIB &&
            map[i].size >= (2ULL << 20) && !high_ram) {
            high_ram = map[i].addr;
        }
    }
    if (ram_end > FOUR_GIB) {
        ram_end = FOUR_GIB;
    }
}

void guest_start(void)
{
    int code;

    serial_init();
    descriptors_init();
    pic_disable();
    start_info_parse();
    alloc_next = (uint64_t)_end;
    code = main();
    exit(code);
}

const char *cmdline(void)
{
    return cmdline_str;
}

bool cmdline_get(const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    const char *p = cmdline_str;

    while (*p) {
        const char *word = p;
        size_t n = 0;

        while (*p && *p != ' ') {
            p++;
        }
        if (p - word > (long)klen && !strncmp(word, key, klen) &&
            word[klen] == '=') {
            const char *v = word + klen + 1;

            while (v < p && n + 1 < size) {
                buf[n++] = *v++;
            }
            if (size) {
                buf[n] = '\0';
            }
            return true;
        }
        while (*p == ' ') {
            p++;
        }
    }
    return false;
}

uint64_t cmdline_u64(const char *key, uint64_t def)
{
    char buf[32];
    const char *p = buf;
    uint64_t v = 0;
    unsigned base = 10;

    if (!cmdline_get(key, buf, sizeof(buf))) {
        return def;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!*p) {
        panic("command line: %s= needs a number", key);
    }
    for (; *p; p++) {
        unsigned d;

        if (*p >= '0' && *p <= '9') {
            d = *p - '0';
        } else if (base == 16 && *p >= 'a' && *p <= 'f') {
            d = *p - 'a' + 10;
        } else if (base == 16 && *p >= 'A' && *p <= 'F') {
            d = *p - 'A' + 10;
        } else {
            panic("command line: %s=%s is not a number", key, buf);
        }
        if (v > (UINT64_MAX - d) / base) {
            panic("command line: %s=%s is too large", key, buf);
        }
        v = v * base + d;
    }
    return v;
}

uint64_t ram_high_start(void)
{
    return high_ram;
}

uint64_t ram_top(void)
{
    return ram_end;
}

void *alloc_pages_uninit(size_t npages)
{
    uint64_t addr = ALIGN_UP(alloc_next, PAGE_SIZE);

    if (addr >= ram_end || npages > (ram_end - addr) / PAGE_SIZE) {
        return NULL;
    }
    alloc_next = addr + npages * PAGE_SIZE;
    return (void *)addr;
}

void *alloc_pages(size_t npages)
{
    void *p = alloc_pages_uninit(npages);

    if (p) {
        memset(p, 0, npages * PAGE_SIZE);
    }
    return p;
}

bool map_identity(uint64_t addr, uint64_t size)
{
    uint64_t a, end = ALIGN_UP(addr + size, 2ULL << 20);

    for (a = addr & ~((2ULL << 20) - 1); a < end; a += 2ULL << 20) {
        unsigned i4 = (a >> 39) & 511, i3 = (a >> 30) & 511;
        unsigned i2 = (a >> 21) & 511;
        uint64_t *dirptr, *dir;

        if (a >> 48) {
            return false;
        }
        if (!(pml4[i4] & 1)) {
            dirptr = alloc_pages(1);
            if (!dirptr) {
                return false;
            }
            pml4[i4] = (uint64_t)dirptr | PTE_PRESENT_RW_USER;
        }
        dirptr = (uint64_t *)(pml4[i4] & ~0xfffULL);
        if (!(dirptr[i3] & 1)) {
            dir = alloc_pages(1);
            if (!dir) {
                return false;
            }
            dirptr[i3] = (uint64_t)dir | PTE_PRESENT_RW_USER;
        }
        dir = (uint64_t *)(dirptr[i3] & ~0xfffULL);
        dir[i2] = a | PDE_2M_RW_USER;
    }
    return true;
}

void irq_register(unsigned vector, IrqHandler fn, void *opaque)
{
    irq_slots[vector & 255].opaque = opaque;
    irq_slots[vector & 255].fn = fn;
}

void irq_set_count_only(unsigned vector)
{
    if (vector >= 32 && vector < 256) {
        idt_set(vector, irq_count_stubs + 16 * (vector - 32), 0);
    }
}

uint64_t irq_count(unsigned vector)
{
    return irq_counts[vector & 255];
}

static void exception(GuestFrame *f)
{
    uint64_t cr2;

    __asm__ __volatile__("mov %%cr2, %0" : "=r"(cr2));
    printf("FATAL: unexpected exception %lu (%s) at rip=0x%lx cpl=%lu "
           "error=0x%lx cr2=0x%lx rsp=0x%lx\n",
           f->vector, exception_names[f->vector] ? exception_names[f->vector]
                                                 : "reserved",
           f->rip, f->cs & 3, f->error, cr2, f->rsp);
    exit(EXIT_FATAL);
}

void isr_dispatch(GuestFrame *f);
void isr_dispatch(GuestFrame *f)
{
    unsigned v = f->vector;

    if (v == 6 && (f->cs & 3) == 3 && f->rip == (uint64_t)user_exit_point) {
        /* The ud2 that ends run_user(): back to its caller at CPL0. */
        user_return_entry(f->rdi);
    }
    if (v < 32) {
        exception(f);
    }
    irq_counts[v]++;
    if (irq_slots[v].fn) {
        irq_slots[v].fn(v, irq_slots[v].opaque);
    }
    /* 0xff is the APIC spurious vector, which takes no EOI. */
    if (v != 0xff) {
        apic_eoi();
    }
}
