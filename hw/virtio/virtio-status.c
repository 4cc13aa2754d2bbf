/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device status state machine (virtio-status.h).  Written from the
 * virtio 1.2 specification, 2.1 and 3.1.
 */
#include "qemu/osdep.h"
#include <linux/virtio_config.h>
#include "hw/virtio/virtio-status.h"

VirtIOStatusPlan virtio_status_plan(uint8_t old, uint8_t val,
                                    bool features_ok)
{
    VirtIOStatusPlan p = { .status = old };
    uint8_t add;

    if (val == 0) {
        p.reset = true;
        p.status = 0;
        return p;
    }
    /* Undefined bits, NEEDS_RESET, and bits already held. */
    p.ignored = val & ~VIRTIO_STATUS_DRIVER_BITS;
    add = val & VIRTIO_STATUS_DRIVER_BITS & ~old;
    if (old & VIRTIO_CONFIG_S_FAILED) {
        /* The driver gave up: only a reset brings the device back. */
        p.ignored |= add;
        return p;
    }
    if ((add & VIRTIO_CONFIG_S_FEATURES_OK) && !features_ok) {
        add &= ~VIRTIO_CONFIG_S_FEATURES_OK;
        p.features_refused = true;
    }
    p.status = old | add;
    if (add & VIRTIO_CONFIG_S_FAILED) {
        /* Whatever else came with it, the device stops here. */
        p.stop = true;
        return p;
    }
    if (add & VIRTIO_CONFIG_S_DRIVER_OK) {
        if (!(p.status & VIRTIO_CONFIG_S_FEATURES_OK)) {
            p.needs_reset = !(old & VIRTIO_CONFIG_S_NEEDS_RESET);
            p.status |= VIRTIO_CONFIG_S_NEEDS_RESET;
        } else if (!(old & VIRTIO_CONFIG_S_NEEDS_RESET)) {
            p.start = true;
        }
    }
    return p;
}
