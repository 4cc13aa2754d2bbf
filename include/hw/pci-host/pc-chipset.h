/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The chipset functions of the pc and q35 machines that firmware looks
 * for by vendor/device ID (SeaBIOS and OVMF refuse unknown host bridges):
 *   i440FX  00.0 of pc  (8086:1237): PAM at 0x59, SMRAM at 0x72;
 *   mch     00.0 of q35 (8086:29c0): PCIEXBAR at 0x60, PAM at 0x90,
 *           SMRAM at 0x9d, ESMRAMC at 0x9e;
 *   ICH9-LPC 1f.0 of q35 (8086:2918): PMBASE 0x40, ACPI_CNTL 0x44,
 *           PIRQ routing 0x60-0x63/0x68-0x6b, RCBA 0xf0.
 * Both host functions carry the subsystem ID 1af4:1100 ("QEMU virtual
 * machine") that SeaBIOS checks before it trusts fw_cfg.
 *
 * SMRAM registers hold their values and lock bits, but there is no SMM:
 * the ICH9's SMI_EN reads with APMC_EN set, which tells SeaBIOS SMM is
 * already set up.
 */
#ifndef HW_PCI_HOST_PC_CHIPSET_H
#define HW_PCI_HOST_PC_CHIPSET_H

#include "hw/pci/pci.h"

#define TYPE_I440FX_PCI_DEVICE  "i440FX"
#define TYPE_MCH_PCI_DEVICE     "mch"
#define TYPE_ICH9_LPC_DEVICE    "ICH9-LPC"
/* pc's 01.3 with firmware (OVMF reads its PM base there). */
#define TYPE_PIIX4_PM_FUNCTION  "x-piix4-pm-function"
#define PCI_DEVICE_ID_INTEL_82371AB_3 0x7113
#define PIIX4_PM_DEVFN          0x0b
#define PIIX4_PMBA              0x40
#define PIIX4_DEVACTB           0x58
#define PIIX4_PMREGMISC         0x80
#define PIIX4_PMREGMISC_PMIOSE  0x01

#define PCI_SUBVENDOR_ID_REDHAT_QUMRANET 0x1af4
#define PCI_SUBDEVICE_ID_QEMU   0x1100
#define PCI_DEVICE_ID_INTEL_82441 0x1237
#define PCI_DEVICE_ID_INTEL_Q35_MCH 0x29c0
#define PCI_DEVICE_ID_INTEL_ICH9_LPC 0x2918

#define I440FX_PAM0             0x59
#define I440FX_SMRAM            0x72
#define MCH_PCIEXBAR            0x60
#define MCH_PAM0                0x90
#define MCH_SMRAM               0x9d
#define MCH_ESMRAMC             0x9e
#define MCH_PCIEXBAR_EN         0x1
/* Where firmware (and Conduit, without firmware) puts the q35 ECAM. */
#define MCH_PCIEXBAR_DEFAULT    0xb0000000ULL
#define MCH_PCIEXBAR_SIZE       0x10000000ULL

#define ICH9_LPC_PMBASE         0x40
#define ICH9_LPC_ACPI_CNTL      0x44
#define ICH9_LPC_ACPI_CNTL_ACPI_EN 0x80
#define ICH9_LPC_PIRQA_ROUT     0x60
#define ICH9_LPC_PIRQE_ROUT     0x68
#define ICH9_LPC_RCBA           0xf0
#define ICH9_LPC_RCBA_EN        0x1
#define ICH9_RCBA_SIZE          0x4000
/* In the PM block: GPE0 (16 bytes), SMI_EN, SMI_STS. */
#define ICH9_PMIO_GPE0          0x20
#define ICH9_PMIO_GPE0_LEN      16
#define ICH9_PMIO_SMI_EN        0x30
#define ICH9_PMIO_SMI_EN_APMC_EN (1u << 5)

/*
 * Firmware boot: PAM decoding of 0xc0000..0xfffff on, with isa_bios the
 * ROM shown on the PCI side at the top of the window.  Without firmware
 * the window stays RAM (Conduit puts its tables there).
 */
void pc_chipset_enable_pam(PCIDevice *host_func, MemoryRegion *system,
                           MemoryRegion *ram, MemoryRegion *isa_bios);

/* Without firmware, Conduit programs what firmware would (at reset). */
void pc_chipset_firmware_setup(PCIDevice *host_func, PCIDevice *lpc);

/*
 * Where the chipset decodes the ACPI PM block: the board installs the
 * hook that moves it (hw/acpi/pm.c's block), so the chipset knows the
 * registers and not the device behind them.
 */
typedef void (*PCChipsetPMHook)(void *opaque, bool enabled, uint16_t base);

/* The PIIX4 PM function moves the PM block on pc (PMBA, PMIOSE). */
void piix4_pm_func_set_pm(PCIDevice *func, PCChipsetPMHook hook,
                          void *opaque);

/* The ICH9 LPC moves it on q35 (PMBASE, ACPI_EN). */
void ich9_lpc_set_pm(PCIDevice *lpc, PCChipsetPMHook hook, void *opaque);
/* ICH9-LPC's disable_s3 / disable_s4 properties. */
void ich9_lpc_sleep_states(PCIDevice *lpc, uint8_t *disable_s3,
                           uint8_t *disable_s4);

#endif
