/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Local APIC: x2APIC (MSR access) when the CPU offers it, else xAPIC at
 * its MMIO base.  Enabled with spurious vector 0xff and TPR 0 so every
 * MSI vector >= 0x20 is delivered.
 */
#include "libguest.h"

#define MSR_APIC_BASE 0x1b
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_BASE_X2APIC (1ULL << 10)
#define APIC_REG_ID 0x20
#define APIC_REG_TPR 0x80
#define APIC_REG_EOI 0xb0
#define APIC_REG_SVR 0xf0
#define APIC_SVR_ENABLE 0x100
#define APIC_SPURIOUS_VECTOR 0xff
#define X2APIC_MSR(reg) (0x800 + ((reg) >> 4))
#define CPUID_1_ECX_X2APIC (1u << 21)

static bool x2apic;
static uint64_t xapic_base = 0xfee00000;
/* Read by the count-only interrupt stubs in entry.S. */
uint8_t apic_x2apic_mode;
uint64_t apic_xapic_eoi = 0xfee00000 + APIC_REG_EOI;

static void apic_write(unsigned reg, uint32_t v)
{
    if (x2apic) {
        wrmsr(X2APIC_MSR(reg), v);
    } else {
        mmio_write32(xapic_base + reg, v);
    }
}

static uint32_t apic_read(unsigned reg)
{
    if (x2apic) {
        return rdmsr(X2APIC_MSR(reg));
    }
    return mmio_read32(xapic_base + reg);
}

void apic_init(void)
{
    uint32_t r[4];
    uint64_t base = rdmsr(MSR_APIC_BASE);

    cpuid(1, 0, r);
    x2apic = r[2] & CPUID_1_ECX_X2APIC;
    xapic_base = base & ~0xfffULL & ((1ULL << 52) - 1);
    base |= APIC_BASE_ENABLE;
    if (x2apic) {
        base |= APIC_BASE_X2APIC;
    }
    wrmsr(MSR_APIC_BASE, base);
    apic_x2apic_mode = x2apic;
    apic_xapic_eoi = xapic_base + APIC_REG_EOI;
    apic_write(APIC_REG_TPR, 0);
    apic_write(APIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
}

bool apic_is_x2apic(void)
{
    return x2apic;
}

uint32_t apic_id(void)
{
    uint32_t id = apic_read(APIC_REG_ID);

    return x2apic ? id : id >> 24;
}

void apic_eoi(void)
{
    apic_write(APIC_REG_EOI, 0);
}

uint64_t apic_msi_address(uint32_t dest)
{
    /* Physical destination mode, no redirection hint. */
    return 0xfee00000ULL | ((uint64_t)(dest & 0xff) << 12);
}

uint32_t apic_msi_data(uint8_t vector)
{
    return vector;          /* fixed delivery, edge */
}
