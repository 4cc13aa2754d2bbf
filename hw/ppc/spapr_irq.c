/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pseries interrupt source controller: numbered sources, one GPIO
 * input line per number, so qtest irq_intercept_in on /machine/ics sees
 * every source as "IRQ raise N".  Numbers below SPAPR_IRQ_MSI_BASE are
 * level sources (PHB INTx); the rest form a pool that ibm,change-msi
 * allocates from.  No presentation layer: there are no vCPUs to take the
 * interrupt, so a source's state is all there is.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/irq.h"
#include "hw/qdev-core.h"
#include "hw/ppc/spapr.h"
#include "trace.h"

struct SpaprIcsState {
    DeviceState parent_obj;

    uint8_t level[SPAPR_IRQ_NR];
    bool msi_used[SPAPR_IRQ_NR_MSI];
};

#define SPAPR_ICS(obj) OBJECT_CHECK(SpaprIcsState, (obj), TYPE_SPAPR_ICS)

static void spapr_ics_set_irq(void *opaque, int n, int level)
{
    SpaprIcsState *ics = SPAPR_ICS(opaque);

    ics->level[n] = !!level;
    trace_spapr_irq_set(n, level);
}

static bool spapr_irq_valid(uint32_t irq)
{
    return irq < SPAPR_IRQ_NR;
}

void spapr_irq_set_level(SpaprIcsState *ics, uint32_t irq, int level)
{
    if (!spapr_irq_valid(irq)) {
        qemu_log_guest_error("spapr-ics: no interrupt source 0x%x", irq);
        return;
    }
    qemu_set_irq(qdev_get_gpio_in(DEVICE(ics), irq), level);
}

void spapr_irq_pulse(SpaprIcsState *ics, uint32_t irq)
{
    if (!spapr_irq_valid(irq) || irq < SPAPR_IRQ_MSI_BASE) {
        qemu_log_guest_error("spapr-ics: MSI to 0x%x, which is not an MSI "
                             "source", irq);
        return;
    }
    if (!ics->msi_used[irq - SPAPR_IRQ_MSI_BASE]) {
        /* A stale vector after a free: real hardware drops it too. */
        qemu_log_guest_error("spapr-ics: MSI to unallocated source 0x%x",
                             irq);
        return;
    }
    /* An edge: drop and raise, so each message is seen as a new raise. */
    spapr_irq_set_level(ics, irq, 0);
    spapr_irq_set_level(ics, irq, 1);
}

int spapr_irq_alloc_block(SpaprIcsState *ics, unsigned int count)
{
    unsigned int align, start, i;

    if (!count || count > SPAPR_IRQ_NR_MSI) {
        return -1;
    }
    /* MSI blocks (at most 32) need natural alignment; more is waste. */
    align = MIN(pow2ceil(count), 32);
    for (start = 0; start + count <= SPAPR_IRQ_NR_MSI; start += align) {
        for (i = 0; i < count && !ics->msi_used[start + i]; i++) {
            /* scan the candidate block */
        }
        if (i == count) {
            for (i = 0; i < count; i++) {
                ics->msi_used[start + i] = true;
            }
            trace_spapr_irq_alloc(SPAPR_IRQ_MSI_BASE + start, count);
            return SPAPR_IRQ_MSI_BASE + start;
        }
    }
    return -1;
}

void spapr_irq_free_block(SpaprIcsState *ics, int first, unsigned int count)
{
    unsigned int i;

    if (first < SPAPR_IRQ_MSI_BASE ||
        count > SPAPR_IRQ_NR - (unsigned int)first) {
        return;
    }
    trace_spapr_irq_free(first, count);
    for (i = 0; i < count; i++) {
        bool *used = &ics->msi_used[first - SPAPR_IRQ_MSI_BASE + i];

        /* A freed source drops its line; untouched ones stay quiet. */
        if (*used) {
            *used = false;
            spapr_irq_set_level(ics, first + i, 0);
        }
    }
}

void spapr_irq_free_all(SpaprIcsState *ics)
{
    spapr_irq_free_block(ics, SPAPR_IRQ_MSI_BASE, SPAPR_IRQ_NR_MSI);
}

static bool spapr_ics_realize(DeviceState *dev, Error **errp)
{
    qdev_init_gpio_in(dev, spapr_ics_set_irq, SPAPR_IRQ_NR);
    return true;
}

static void spapr_ics_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "pseries interrupt source controller";
    dc->realize = spapr_ics_realize;
    dc->user_creatable = false;
}

SpaprIcsState *spapr_ics_create(MachineState *ms, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_SPAPR_ICS);

    object_property_add_child(OBJECT(ms), "ics", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    return SPAPR_ICS(dev);
}

static const TypeInfo spapr_ics_types[] = {
    {
        .name = TYPE_SPAPR_ICS,
        .parent = TYPE_DEVICE,
        .instance_size = sizeof(SpaprIcsState),
        .class_init = spapr_ics_class_init,
    },
};

DEFINE_TYPES(spapr_ics_types)
