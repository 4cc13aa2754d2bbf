/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The ACPI fixed-hardware register blocks of the pc machine (PM1a event,
 * PM1a control, PM timer at ACPI_PM_BASE) and the SCI they raise.  The
 * device answers system_powerdown with the fixed power-button event and
 * powers the machine off when the guest enters S5.
 */
#ifndef HW_ACPI_PM_H
#define HW_ACPI_PM_H

#include <stdbool.h>
#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/irq.h"

#define TYPE_ACPI_PM "acpi-pm"
/*
 * The pc machine's instance, under the name libvirt addresses it by
 * (-global PIIX4_PM.disable_s3=1 / disable_s4=1 from <pm>).
 */
#define TYPE_PIIX4_PM "PIIX4_PM"

/*
 * Creates /machine/acpi-pm on the system I/O space; its GPIO output 0 is
 * the SCI, connected to sci (may be NULL: qtest intercepts the line).
 */
DeviceState *acpi_pm_create(MachineState *ms, qemu_irq sci, Error **errp);
/* Which sleep states the DSDT offers (disable_s3 / disable_s4 off). */
void acpi_pm_sleep_states(DeviceState *pm, bool *s3, bool *s4);

/*
 * The PM1 register logic as pure functions of the register values, for
 * the device and its unit test.
 */
typedef struct AcpiPm1 {
    uint16_t sts;
    uint16_t en;
    uint16_t cnt;
    bool s4_enabled;        /* the S4 sleep type powers off, as S5 does */
} AcpiPm1;

/* What a guest write of val (size bytes at offset off) does to pm. */
typedef enum AcpiPmAction {
    ACPI_PM_NONE,
    ACPI_PM_POWER_OFF,      /* SLP_EN with the S5 (or S4) sleep type */
} AcpiPmAction;

void acpi_pm1_reset(AcpiPm1 *pm);
uint64_t acpi_pm1_read(const AcpiPm1 *pm, unsigned off, unsigned size);
AcpiPmAction acpi_pm1_write(AcpiPm1 *pm, unsigned off, uint64_t val,
                            unsigned size);
/* The level of the SCI: an enabled status bit is set. */
bool acpi_pm1_sci_level(const AcpiPm1 *pm);
/* The power button was pressed. */
void acpi_pm1_press_power_button(AcpiPm1 *pm);

#endif
