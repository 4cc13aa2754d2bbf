/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos virtio: a driver for virtio-pci modern devices written from the
 * virtio 1.x specification, for qtests.  It finds the capabilities,
 * negotiates features, sets up split virtqueues in guest RAM (a simple
 * bump allocator) and submits descriptor chains, including deliberately
 * broken ones.
 */
#ifndef LIBQOS_VIRTIO_H
#define LIBQOS_VIRTIO_H

#include <stdbool.h>
#include <stdint.h>
#include "libqos/pci.h"

typedef struct QGuestAlloc {
    uint64_t next;
    uint64_t end;
} QGuestAlloc;

uint64_t qguest_alloc(QGuestAlloc *a, uint64_t size, uint64_t align);

typedef struct QVirtioPCI {
    QTestState *qts;
    QPCIDevice *pdev;
    QPCIBar bar;
    uint64_t common, isr, device, notify;
    uint32_t notify_mult;
} QVirtioPCI;

typedef struct QVirtQueue {
    QVirtioPCI *vdev;
    uint16_t index;
    uint16_t num;
    uint64_t desc, avail, used;
    uint16_t free_head;         /* next descriptor to hand out */
    uint16_t avail_idx;
    uint16_t last_used;
    uint16_t notify_off;
} QVirtQueue;

/* Finds the vendor capabilities of the device at devfn (enables it). */
QVirtioPCI *qvirtio_pci_new(QPCIBus *bus, int devfn);
void qvirtio_pci_free(QVirtioPCI *v);

uint8_t qvirtio_get_status(QVirtioPCI *v);
void qvirtio_set_status(QVirtioPCI *v, uint8_t status);
void qvirtio_reset(QVirtioPCI *v);
uint64_t qvirtio_device_features(QVirtioPCI *v);
void qvirtio_set_driver_features(QVirtioPCI *v, uint64_t features);
/* reset, ACKNOWLEDGE, DRIVER, features, FEATURES_OK: true if accepted. */
bool qvirtio_negotiate(QVirtioPCI *v, uint64_t features);
uint16_t qvirtio_num_queues(QVirtioPCI *v);
uint8_t qvirtio_config_readb(QVirtioPCI *v, uint64_t off);
uint32_t qvirtio_config_readl(QVirtioPCI *v, uint64_t off);
uint64_t qvirtio_config_readq(QVirtioPCI *v, uint64_t off);

/* Sets queue index up (num descriptors, MSI-X vector or 0xffff), enabled. */
QVirtQueue *qvirtqueue_setup(QVirtioPCI *v, QGuestAlloc *a, uint16_t index,
                             uint16_t num, uint16_t vector);
void qvirtqueue_free(QVirtQueue *vq);
/* Writes descriptor i; returns i. */
uint16_t qvirtqueue_set_desc(QVirtQueue *vq, uint16_t i, uint64_t addr,
                             uint32_t len, uint16_t flags, uint16_t next);
/* Takes the next free descriptor (wrapping) for a buffer. */
uint16_t qvirtqueue_add(QVirtQueue *vq, uint64_t addr, uint32_t len,
                        bool write, bool next);
/* Puts head on the available ring (no notify). */
void qvirtqueue_make_available(QVirtQueue *vq, uint16_t head);
void qvirtqueue_kick(QVirtQueue *vq);
/*
 * Waits (up to timeout_us of wall time) for the next used element;
 * returns false on timeout.
 */
bool qvirtqueue_wait_used(QVirtQueue *vq, uint32_t *id, uint32_t *len,
                          uint64_t timeout_us);
uint16_t qvirtqueue_used_idx(QVirtQueue *vq);

#endif
