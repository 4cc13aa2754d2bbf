/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MC146818A-compatible CMOS real-time clock at the pc's ports 0x70/0x71.
 */
#ifndef HW_RTC_MC146818RTC_H
#define HW_RTC_MC146818RTC_H

#include <stdint.h>
#include "qemu/typedefs.h"
#include "hw/irq.h"

#define TYPE_MC146818_RTC "mc146818rtc"

#define RTC_ISA_BASE 0x70
#define RTC_ISA_IRQ 8

/* Register indexes (port 0x70) of the clock and its control registers. */
#define RTC_SECONDS 0x00
#define RTC_SECONDS_ALARM 0x01
#define RTC_MINUTES 0x02
#define RTC_MINUTES_ALARM 0x03
#define RTC_HOURS 0x04
#define RTC_HOURS_ALARM 0x05
#define RTC_DAY_OF_WEEK 0x06
#define RTC_DAY_OF_MONTH 0x07
#define RTC_MONTH 0x08
#define RTC_YEAR 0x09
#define RTC_REG_A 0x0a
#define RTC_REG_B 0x0b
#define RTC_REG_C 0x0c
#define RTC_REG_D 0x0d
#define RTC_CENTURY 0x32

#define RTC_REG_A_UIP 0x80
#define RTC_REG_B_SET 0x80
#define RTC_REG_B_PIE 0x40
#define RTC_REG_B_AIE 0x20
#define RTC_REG_B_UIE 0x10
#define RTC_REG_B_DM_BINARY 0x04
#define RTC_REG_B_24H 0x02
#define RTC_REG_C_IRQF 0x80
#define RTC_REG_C_PF 0x40
#define RTC_REG_C_AF 0x20
#define RTC_REG_C_UF 0x10
#define RTC_REG_D_VRT 0x80

#define RTC_CMOS_SIZE 128

/*
 * Creates the RTC as /machine/rtc at RTC_ISA_BASE, raising irq (may be
 * NULL: no interrupts are delivered, the flags in status C still work).
 */
DeviceState *mc146818_rtc_create(MachineState *ms, qemu_irq irq,
                                 Error **errp);
/* Sets a CMOS RAM byte past the clock registers (firmware's config). */
void mc146818rtc_set_cmos_data(DeviceState *rtc, unsigned addr, uint8_t val);

#endif
