/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ACPI fixed hardware (ACPI 6.5, 4.8): PM1a_STS/PM1a_EN at +0, PM1a_CNT
 * at +4, the 32-bit PM timer at +8.  Only the power-button and timer
 * status bits exist; the SCI is level-triggered and stays up while an
 * enabled status bit is set.  SCI_EN reads as 1: with no SMI_CMD port the
 * platform is always in ACPI mode.
 */
#include "qemu/osdep.h"
#include "migration/vmstate.h"
#include "hw/acpi/pm.h"
#include "hw/acpi/acpi-tables.h"
#include "hw/boards.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "qemu/timer.h"
#include "system/runstate.h"
#include "trace.h"

#define PM1_STS_BITS (ACPI_PM1_TMR | ACPI_PM1_PWRBTN | ACPI_PM1_WAK)
/* Events that can raise the SCI. */
#define PM1_EN_BITS (ACPI_PM1_TMR | ACPI_PM1_PWRBTN)
/*
 * Enables the guest may set: also the global lock and RTC alarm ones,
 * which never fire here but must read back (ACPICA checks).
 */
#define PM1_EN_WRITABLE (PM1_EN_BITS | ACPI_PM1_GBL | ACPI_PM1_RTC)
#define PM1_CNT_SLP_TYP_MASK (7u << ACPI_PM1_CNT_SLP_TYP_SHIFT)
#define PM_TIMER_HZ 3579545ULL

/* ---- the register logic ---- */

void acpi_pm1_reset(AcpiPm1 *pm)
{
    pm->sts = 0;
    pm->en = 0;
    pm->cnt = ACPI_PM1_CNT_SCI_EN;
}

static uint8_t pm1_byte(const AcpiPm1 *pm, unsigned off)
{
    uint16_t reg;

    switch (off / 2) {
    case 0:
        reg = pm->sts;
        break;
    case 1:
        reg = pm->en;
        break;
    case 2:
        reg = pm->cnt;
        break;
    default:
        return 0;
    }
    return reg >> (8 * (off & 1));
}

uint64_t acpi_pm1_read(const AcpiPm1 *pm, unsigned off, unsigned size)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < size; i++) {
        v |= (uint64_t)pm1_byte(pm, off + i) << (8 * i);
    }
    return v;
}

AcpiPmAction acpi_pm1_write(AcpiPm1 *pm, unsigned off, uint64_t val,
                            unsigned size)
{
    /* Spread the access over the three 16-bit registers it covers. */
    uint16_t bytes[3] = { 0 }, touched[3] = { 0 };
    AcpiPmAction action = ACPI_PM_NONE;

    for (unsigned i = 0; i < size; i++) {
        unsigned o = off + i;

        if (o >= 6) {
            break;
        }
        bytes[o / 2] |= (uint16_t)((val >> (8 * i)) & 0xff) << (8 * (o & 1));
        touched[o / 2] |= 0xff << (8 * (o & 1));
    }
    /* Status bits are write-one-to-clear. */
    pm->sts &= ~(bytes[0] & touched[0] & PM1_STS_BITS);
    pm->en = (pm->en & ~touched[1]) |
             (bytes[1] & touched[1] & PM1_EN_WRITABLE);
    if (touched[2]) {
        uint16_t typ = PM1_CNT_SLP_TYP_MASK & touched[2];

        pm->cnt = (pm->cnt & ~typ) | (bytes[2] & typ);
        pm->cnt |= ACPI_PM1_CNT_SCI_EN;
        if (bytes[2] & touched[2] & ACPI_PM1_CNT_SLP_EN) {
            unsigned slp_typ = (pm->cnt & PM1_CNT_SLP_TYP_MASK) >>
                               ACPI_PM1_CNT_SLP_TYP_SHIFT;

            if (slp_typ == ACPI_S5_SLP_TYP ||
                (slp_typ == ACPI_S4_SLP_TYP && pm->s4_enabled)) {
                action = ACPI_PM_POWER_OFF;
            }
        }
    }
    return action;
}

bool acpi_pm1_sci_level(const AcpiPm1 *pm)
{
    return (pm->sts & pm->en & PM1_EN_BITS) != 0;
}

void acpi_pm1_press_power_button(AcpiPm1 *pm)
{
    pm->sts |= ACPI_PM1_PWRBTN;
}

/* ---- the device ---- */

typedef struct AcpiPmState {
    DeviceState parent_obj;

    MemoryRegion io;
    AcpiPm1 pm1;
    qemu_irq sci;
    /* QEMU's PIIX4_PM properties: 1 removes \_S3 / \_S4 from the DSDT. */
    uint8_t disable_s3, disable_s4;
} AcpiPmState;

#define ACPI_PM(obj) OBJECT_CHECK(AcpiPmState, (obj), TYPE_ACPI_PM)

static void acpi_pm_update_sci(AcpiPmState *s)
{
    qemu_set_irq(s->sci, acpi_pm1_sci_level(&s->pm1));
}

/* 3.579545 MHz from the virtual clock, so it stops with the VM. */
static uint32_t acpi_pm_timer(void)
{
    uint64_t ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    return (uint32_t)((ns / 1000000000ULL) * PM_TIMER_HZ +
                      (ns % 1000000000ULL) * PM_TIMER_HZ / 1000000000ULL);
}

static uint64_t acpi_pm_read(void *opaque, hwaddr addr, unsigned size)
{
    AcpiPmState *s = opaque;
    uint64_t v;

    if (addr >= ACPI_PM_TMR_OFFSET) {
        v = acpi_pm_timer() >> (8 * (addr - ACPI_PM_TMR_OFFSET));
        v &= size >= 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1;
    } else {
        v = acpi_pm1_read(&s->pm1, addr, size);
    }
    trace_acpi_pm_read(addr, size, v);
    return v;
}

static void acpi_pm_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    AcpiPmState *s = opaque;

    trace_acpi_pm_write(addr, size, val);
    if (addr >= ACPI_PM_TMR_OFFSET) {
        return;                 /* the timer is read-only */
    }
    if (acpi_pm1_write(&s->pm1, addr, val, size) == ACPI_PM_POWER_OFF) {
        trace_acpi_pm_power_off();
        qemu_system_shutdown_request_cause(SHUTDOWN_CAUSE_GUEST_SHUTDOWN, 0);
    }
    acpi_pm_update_sci(s);
}

static const MemoryRegionOps acpi_pm_ops = {
    .read = acpi_pm_read,
    .write = acpi_pm_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
};

static void acpi_pm_powerdown(void *opaque)
{
    AcpiPmState *s = opaque;

    acpi_pm1_press_power_button(&s->pm1);
    trace_acpi_pm_power_button(s->pm1.en);
    acpi_pm_update_sci(s);
}

static void acpi_pm_reset(DeviceState *dev)
{
    AcpiPmState *s = ACPI_PM(dev);

    acpi_pm1_reset(&s->pm1);
    s->pm1.s4_enabled = !s->disable_s4;
    acpi_pm_update_sci(s);
}

static bool acpi_pm_realize(DeviceState *dev, Error **errp)
{
    AcpiPmState *s = ACPI_PM(dev);

    if (s->disable_s3 > 1 || s->disable_s4 > 1) {
        error_setg(errp, "%s: disable_s3 and disable_s4 are 0 or 1",
                   object_get_typename(OBJECT(dev)));
        return false;
    }
    /*
     * Resuming from S3 starts at the firmware's reset vector, which finds
     * the OS waking vector; a direct -kernel boot has no firmware for it.
     */
    if (!s->disable_s3) {
        error_setg(errp, "%s.disable_s3=0: S3 (suspend to RAM) is not "
                   "supported: resuming needs firmware, which Conduit's "
                   "direct kernel boot does not run",
                   object_get_typename(OBJECT(dev)));
        error_append_hint(errp, "Use -global %s.disable_s3=1 (libvirt: "
                          "<pm><suspend-to-mem enabled='no'/></pm>).\n",
                          object_get_typename(OBJECT(dev)));
        return false;
    }
    memory_region_init_io(&s->io, OBJECT(s), &acpi_pm_ops, s, "acpi-pm",
                          ACPI_PM_SIZE);
    memory_region_add_subregion(get_system_io(), ACPI_PM_BASE, &s->io);
    qdev_init_gpio_out(dev, &s->sci, 1);
    acpi_pm1_reset(&s->pm1);
    s->pm1.s4_enabled = !s->disable_s4;
    qemu_register_powerdown_handler(acpi_pm_powerdown, s);
    return true;
}

void acpi_pm_sleep_states(DeviceState *pm, bool *s3, bool *s4)
{
    AcpiPmState *s = ACPI_PM(pm);

    *s3 = !s->disable_s3;
    *s4 = !s->disable_s4;
}

/*
 * Defaults: S3 off (there is no resume path without firmware), S4 on as
 * in QEMU (it powers off once the guest saved its image).
 */
static const Property acpi_pm_props[] = {
    DEFINE_PROP_UINT8("disable_s3", AcpiPmState, disable_s3, 1),
    DEFINE_PROP_UINT8("disable_s4", AcpiPmState, disable_s4, 0),
    DEFINE_PROP_END_OF_LIST(),
};

static void acpi_pm_finalize(Object *obj)
{
    AcpiPmState *s = ACPI_PM(obj);

    if (memory_region_size(&s->io)) {
        qemu_unregister_powerdown_handler(acpi_pm_powerdown, s);
        memory_region_finalize(&s->io);
    }
}

static bool acpi_pm_post_load(void *opaque, int version_id, Error **errp)
{
    acpi_pm_update_sci(opaque);
    return true;
}

/* PM1 status, enable and control; the PM timer is the virtual clock's. */
static const VMStateDescription vmstate_acpi_pm = {
    .name = "acpi-pm",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = acpi_pm_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(pm1.sts, AcpiPmState),
        VMSTATE_UINT16(pm1.en, AcpiPmState),
        VMSTATE_UINT16(pm1.cnt, AcpiPmState),
        VMSTATE_END_OF_LIST()
    },
};

static void acpi_pm_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "ACPI PM1 event/control blocks, PM timer and SCI";
    dc->realize = acpi_pm_realize;
    dc->reset = acpi_pm_reset;
    dc->vmsd = &vmstate_acpi_pm;
    dc->user_creatable = false;
    device_class_set_props(dc, acpi_pm_props);
}

static void piix4_pm_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "the pc machine's ACPI power management (PIIX4 PM's name)";
}

DeviceState *acpi_pm_create(MachineState *ms, qemu_irq sci, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_PIIX4_PM);

    object_property_add_child(OBJECT(ms), "acpi-pm", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    if (sci) {
        qdev_connect_gpio_out(dev, 0, sci);
    }
    return dev;
}

static const TypeInfo acpi_pm_types[] = {
    {
        .name = TYPE_ACPI_PM,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(AcpiPmState),
        .class_init = acpi_pm_class_init,
        .instance_finalize = acpi_pm_finalize,
    }, {
        .name = TYPE_PIIX4_PM,
        .parent = TYPE_ACPI_PM,
        .instance_size = sizeof(AcpiPmState),
        .class_init = piix4_pm_class_init,
    },
};

DEFINE_TYPES(acpi_pm_types)
