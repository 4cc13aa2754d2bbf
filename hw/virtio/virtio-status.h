/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The device status field as a state machine (virtio 1.2, 2.1 and 3.1):
 * a pure function from the status the device holds and the byte the
 * driver wrote to the status it holds next and what the transport must
 * do.  Private to hw/virtio/.
 *
 * The rules, for any byte sequence the driver may write:
 *   - 0 resets the device, from any state;
 *   - the driver sets bits and never clears them (3.1.1): a write that
 *     leaves out a bit the device holds keeps it, and a second
 *     DRIVER_OK (or FEATURES_OK) is a no-op;
 *   - bits the specification does not define, and DEVICE_NEEDS_RESET
 *     (the device's to set), are ignored;
 *   - FEATURES_OK is held only if the features the driver wrote are
 *     acceptable (3.1.1 step 5: the driver re-reads it);
 *   - DRIVER_OK starts the device exactly once, and only with
 *     FEATURES_OK held and neither FAILED nor DEVICE_NEEDS_RESET; without
 *     FEATURES_OK it is an error the device reports with
 *     DEVICE_NEEDS_RESET;
 *   - FAILED (the driver gave up) stops the device; after it only a
 *     reset changes the status.
 */
#ifndef HW_VIRTIO_VIRTIO_STATUS_H
#define HW_VIRTIO_VIRTIO_STATUS_H

#include <stdbool.h>
#include <stdint.h>

/* The bits a driver may set (DEVICE_NEEDS_RESET is the device's). */
#define VIRTIO_STATUS_DRIVER_BITS 0x8f

typedef struct VirtIOStatusPlan {
    bool reset;             /* reset the device; nothing else applies */
    bool start;             /* DRIVER_OK accepted: start the device */
    bool stop;              /* FAILED: stop processing buffers */
    bool features_refused;  /* FEATURES_OK asked for and withheld */
    bool needs_reset;       /* DRIVER_OK without FEATURES_OK */
    uint8_t ignored;        /* written bits that had no effect (logged) */
    uint8_t status;         /* the status from now on */
} VirtIOStatusPlan;

/*
 * old: the status the device holds; val: the byte written;
 * features_ok: whether the driver's features are acceptable now.
 */
VirtIOStatusPlan virtio_status_plan(uint8_t old, uint8_t val,
                                    bool features_ok);

#endif
