/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pc machine's ACPI tables as one pure function: a description of the
 * platform in, one blob out (RSDP, FACS, DSDT, FADT, MADT, MCFG, XSDT,
 * RSDT), laid out for a given guest-physical base address with every
 * pointer and checksum filled in.  hw/i386/acpi-pc.c gathers the
 * description from the machine and copies the blob into guest RAM.
 */
#ifndef HW_ACPI_ACPI_TABLES_H
#define HW_ACPI_ACPI_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#define ACPI_OEM_ID "CONDUI"
#define ACPI_OEM_TABLE_ID "CONDUIT "
#define ACPI_CREATOR_ID "CNDT"

/* Fixed-hardware register blocks of the pc machine (I/O ports). */
#define ACPI_PM_BASE            0x600
#define ACPI_PM1_EVT_OFFSET     0       /* PM1a_STS (2), PM1a_EN (2) */
#define ACPI_PM1_CNT_OFFSET     4       /* PM1a_CNT (2) */
#define ACPI_PM_TMR_OFFSET      8       /* PM_TMR (4) */
#define ACPI_PM_SIZE            12
#define ACPI_SCI_IRQ            9
/* SLP_TYP the DSDT's \_S5 names: writing it with SLP_EN powers off. */
#define ACPI_S5_SLP_TYP         5
/*
 * S4: the guest has saved its memory (hibernation) and asks to be powered
 * off; the machine powers off as for S5.  Offered unless disable_s4.
 */
#define ACPI_S4_SLP_TYP         4

/* PM1 status/enable bits (ACPI 6.5, 4.8.4.1). */
#define ACPI_PM1_TMR            (1u << 0)
#define ACPI_PM1_GBL            (1u << 5)
#define ACPI_PM1_PWRBTN         (1u << 8)
#define ACPI_PM1_RTC            (1u << 10)
#define ACPI_PM1_WAK            (1u << 15)
/* PM1 control bits (4.8.4.2). */
#define ACPI_PM1_CNT_SCI_EN     (1u << 0)
#define ACPI_PM1_CNT_SLP_TYP_SHIFT 10
#define ACPI_PM1_CNT_SLP_EN     (1u << 13)

#define ACPI_PCI_INTX_GSI_BASE  16      /* PCI INTA..D of slot 0 */
#define ACPI_IOAPIC_ADDR        0xfec00000u
#define ACPI_LAPIC_ADDR         0xfee00000u

typedef struct AcpiNumaMem {
    uint64_t base, size;
    uint32_t node;
} AcpiNumaMem;

typedef struct AcpiPlatform {
    unsigned nr_cpus;               /* enabled processors */
    unsigned max_cpus;              /* the rest are listed disabled */
    const uint32_t *apic_ids;       /* max_cpus entries */
    uint64_t ecam_base;
    uint8_t ecam_last_bus;
    uint32_t mmio32_base, mmio32_end;       /* end exclusive */
    uint64_t mmio64_base, mmio64_end;       /* 0 size: none */
    bool serial[4];                 /* COM1..COM4 present */
    const uint16_t *serial_iobase;  /* 4 entries */
    const uint8_t *serial_irq;
    bool rtc;
    bool i8042;                     /* keyboard and PS/2 mouse */
    uint64_t ecam_size;             /* bytes the PNP0C02 device reserves */
    uint16_t pm_base;               /* PM1a/timer block; 0: ACPI_PM_BASE */
    uint16_t gpe0_base;             /* 0: no GPE0 block */
    uint8_t gpe0_len;
    bool s4;                        /* \_S4 present (no disable_s4) */
    /* NUMA (-numa): SRAT and SLIT when numa_nodes > 0. */
    unsigned numa_nodes;
    const uint32_t *cpu_node;       /* max_cpus entries */
    const AcpiNumaMem *numa_mem;    /* guest-physical ranges of each node */
    unsigned nr_numa_mem;
    const uint8_t *numa_distance;   /* numa_nodes x numa_nodes, row-major */
} AcpiPlatform;

/* A pointer field in the blob (to a place in the blob), size 4 or 8. */
typedef struct AcpiPointer {
    size_t offset;
    uint8_t size;
} AcpiPointer;

/* A checksum byte at csum covering [start, start + len) of the blob. */
typedef struct AcpiChecksum {
    size_t start, len, csum;
} AcpiChecksum;

typedef struct AcpiTables {
    GByteArray *blob;           /* copy to base */
    uint64_t base;
    /* Offsets in blob. */
    size_t rsdp, facs, dsdt, fadt, madt, mcfg, xsdt, rsdt;
    size_t tables_start;        /* first table after the RSDP */
    GArray *pointers;           /* AcpiPointer, each holding base + offset */
    GArray *checksums;          /* AcpiChecksum */
    size_t srat, slit;          /* 0: not built */
} AcpiTables;

/* The reset register the FADT names (the chipset's 0xcf9) and its value. */
#define ACPI_RESET_PORT         0xcf9
#define ACPI_RESET_VALUE        0x06

/* Sum of bytes is 0 mod 256 when the checksum byte is right. */
uint8_t acpi_checksum(const uint8_t *data, size_t len);

/* The DSDT's AML (a whole table with header and checksum). */
GByteArray *acpi_build_dsdt(const AcpiPlatform *p);
GByteArray *acpi_build_madt(const AcpiPlatform *p);
GByteArray *acpi_build_mcfg(const AcpiPlatform *p);
/* NUMA affinity (ACPI 6.5, 5.2.16) and distances (5.2.17). */
GByteArray *acpi_build_srat(const AcpiPlatform *p);
GByteArray *acpi_build_slit(const AcpiPlatform *p);
/* FADT pointing at facs and dsdt. */
GByteArray *acpi_build_fadt(const AcpiPlatform *p, uint64_t facs,
                            uint64_t dsdt);
/* Offsets of the FADT's pointer fields. */
#define ACPI_FADT_FIRMWARE_CTRL 36
#define ACPI_FADT_DSDT          40
#define ACPI_FADT_X_FIRMWARE_CTRL 132
#define ACPI_FADT_X_DSDT        140

/*
 * Builds every table for a blob copied at base (below 4 GiB, 16-byte
 * aligned: the RSDP comes first, so base is where a guest's legacy scan
 * or the boot protocols find it).  Free with acpi_tables_free().
 */
void acpi_build_tables(const AcpiPlatform *p, uint64_t base, AcpiTables *t);
void acpi_tables_free(AcpiTables *t);

#endif
