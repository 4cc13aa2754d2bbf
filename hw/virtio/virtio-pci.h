/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio-pci, modern only (virtio 1.x, 4.1): the transport shared by
 * virtio-blk-pci and virtio-net-pci.  Private to hw/virtio/.
 *
 * BAR1 holds the MSI-X table and PBA; BAR4 (32-bit memory, 16 KiB) holds
 * the common configuration (0x0000), ISR (0x1000), device configuration
 * (0x2000) and the notification area (0x3000, queue N at N * 4).
 *
 * Threads.  Guest register accesses run with the BQL held (a vCPU thread
 * or the qtest server).  When the driver sets DRIVER_OK the transport
 * starts the device's worker: an I/O thread with its own GMainContext
 * that watches each queue's host notifier (the eventfd KVM signals
 * through an ioeventfd on the notify address, or that the trapped notify
 * write signals) plus any fd the device adds.  The worker never takes the
 * BQL: it reaches guest RAM through a GuestMemMap and raises interrupts
 * by signalling the vector's eventfd, which is a KVM irqfd on the fast
 * path, or a main-loop handler calling msix_notify() otherwise.
 *
 * The device status follows virtio-status.h: DRIVER_OK starts the worker
 * at most once between resets, FAILED stops it, and reset (or unplug)
 * stops and joins it exactly once before anything it used is freed.
 */
#ifndef HW_VIRTIO_VIRTIO_PCI_H
#define HW_VIRTIO_VIRTIO_PCI_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/event_notifier.h"
#include "system/memory.h"
#include "hw/pci/pci.h"
#include "hw/virtio/virtqueue.h"

#define TYPE_VIRTIO_PCI "virtio-pci"
#define VIRTIO_PCI(obj) OBJECT_CHECK(VirtIOPCIProxy, (obj), TYPE_VIRTIO_PCI)
#define VIRTIO_PCI_CLASS(oc) \
    OBJECT_CLASS_CHECK(VirtIOPCIClass, (oc), TYPE_VIRTIO_PCI)
#define VIRTIO_PCI_GET_CLASS(obj) \
    OBJECT_GET_CLASS(VirtIOPCIClass, (obj), TYPE_VIRTIO_PCI)

#define VIRTIO_PCI_VENDOR_ID 0x1af4
#define VIRTIO_PCI_DEVICE_ID_BASE 0x1040
#define VIRTIO_PCI_MAX_QUEUES 64

/* BAR4 layout. */
#define VIRTIO_PCI_BAR 4
#define VIRTIO_PCI_MSIX_BAR 1
#define VIRTIO_PCI_COMMON_OFF 0x0000
#define VIRTIO_PCI_ISR_OFF 0x1000
#define VIRTIO_PCI_DEVICE_OFF 0x2000
#define VIRTIO_PCI_NOTIFY_OFF 0x3000
#define VIRTIO_PCI_REGION_SIZE 0x1000
#define VIRTIO_PCI_BAR_SIZE 0x4000
#define VIRTIO_PCI_NOTIFY_MULT 4

typedef struct VirtIOPCIProxy VirtIOPCIProxy;

typedef struct VirtIOPCIQueue {
    VirtQueue vq;
    uint16_t max_size;
    uint16_t vector;
    bool enabled;
    /* The device serves it in the kernel (vhost): no worker watch. */
    bool external;
    EventNotifier host_notifier;
    bool ioeventfd_assigned;
    uint64_t ioeventfd_addr;
} VirtIOPCIQueue;

typedef struct VirtIOPCIVector {
    EventNotifier notifier;
    int virq;               /* KVM GSI while irqfd is attached, else -1 */
    VirtIOPCIProxy *proxy;
} VirtIOPCIVector;

struct VirtIOPCIProxy {
    PCIDevice parent_obj;

    MemoryRegion bar;
    MemoryRegion common;
    MemoryRegion isr_region;
    MemoryRegion device_region;
    MemoryRegion notify;
    MemoryRegion msix_bar;

    /* Set by the device's realize. */
    unsigned nvqs;
    uint64_t host_features;
    uint8_t *config;
    uint32_t config_len;

    /* Driver-visible state (BQL). */
    uint64_t guest_features;
    uint32_t dfselect;
    uint32_t gfselect;
    uint16_t config_vector;
    uint8_t status;
    uint8_t config_generation;
    uint16_t queue_sel;
    uint32_t isr;               /* atomic: the worker sets bits */
    uint8_t pci_cfg_cap;        /* config offset of VIRTIO_PCI_CAP_PCI_CFG */

    VirtIOPCIQueue vqs[VIRTIO_PCI_MAX_QUEUES];
    unsigned nvectors;
    VirtIOPCIVector *vectors;
    EventNotifier intx_notifier;
    struct GuestMemTracker *mem;

    /* The worker. */
    GThread *thread;
    GMainContext *ctx;          /* main thread's reference */
    GMainContext *worker_ctx;   /* the worker's own reference */
    EventNotifier stop_notifier;
    bool stopping;              /* atomic: set by the main thread */
    /*
     * Atomic.  Set by the main thread before it stops the worker for a
     * device reset: what the drain completes then is not signalled.  A
     * VM stop signals it like any completion, so the interrupt reaches
     * the guest (or the saved state) instead of being owed forever.
     */
    bool resetting;
    GSList *watches;
    bool running;

    /* Statistics for telemetry and the bench. */
    uint64_t kicks;
    uint64_t interrupts;
    uint64_t slow_path_interrupts;  /* delivered by the main loop (BQL) */

    /* Migration (virtio-pci.c's "migration" section). */
    struct VMChangeStateEntry *vmstate_entry;
    bool stopped_by_vm;         /* the worker waits for the VM to run */
    bool loading;               /* incoming: no pci_cfg window side effects */

    /* Properties. */
    bool ioeventfd;
    bool irqfd;
    uint32_t vectors_prop;
};

typedef struct VirtIOPCIClass {
    PCIDeviceClass parent_class;

    uint16_t virtio_id;         /* set by virtio_pci_class_set_device() */
    /* Sets nvqs, vqs[].max_size, host_features, config. */
    bool (*realize)(VirtIOPCIProxy *proxy, Error **errp);
    void (*unrealize)(VirtIOPCIProxy *proxy);
    /* Device config bytes the driver wrote (after the copy). */
    void (*config_written)(VirtIOPCIProxy *proxy, uint32_t off, unsigned len);
    /* BQL; features are final. May mark queues external, add watches. */
    bool (*start)(VirtIOPCIProxy *proxy, Error **errp);
    /* Worker thread: a queue was kicked (or the worker just started). */
    void (*handle_queue)(VirtIOPCIProxy *proxy, unsigned q, GuestMemMap *map);
    /* Worker thread, last thing before it exits: finish in-flight work. */
    void (*drain)(VirtIOPCIProxy *proxy);
    /*
     * BQL, worker joined (VM stop or reset): take back the queues marked
     * external at start, their positions into the VirtQueues.
     */
    void (*stop)(VirtIOPCIProxy *proxy);
    /* BQL, worker gone: back to the initial state. */
    void (*reset)(VirtIOPCIProxy *proxy);
} VirtIOPCIClass;

/*
 * For a device's class_init: the virtio device type (VIRTIO_ID_*) and the
 * PCI class code, from which the PCI device and subsystem ids follow.
 */
void virtio_pci_class_set_device(ObjectClass *klass, uint16_t virtio_id,
                                 uint16_t class_id);

/* For the device's start hook: watch fd in the worker. */
typedef gboolean (*VirtIOPCIWatchFn)(gint fd, GIOCondition cond,
                                     gpointer opaque);
void virtio_pci_worker_watch(VirtIOPCIProxy *proxy, int fd,
                             GIOCondition cond, VirtIOPCIWatchFn fn,
                             void *opaque);
/* Worker thread: raise the queue's interrupt if the driver wants it. */
void virtio_pci_notify_queue(VirtIOPCIProxy *proxy, unsigned q,
                             GuestMemMap *map);
/*
 * The device configuration changed (BQL): bumps the generation and
 * raises the configuration change interrupt once the driver is running.
 */
void virtio_pci_notify_config(VirtIOPCIProxy *proxy);
/* Worker thread: the queue is unusable; ask the driver for a reset. */
void virtio_pci_set_needs_reset(VirtIOPCIProxy *proxy, const char *why);
bool virtio_pci_has_feature(VirtIOPCIProxy *proxy, unsigned bit);
/* The vector's eventfd for vhost's call fd (NULL if none). */
EventNotifier *virtio_pci_queue_guest_notifier(VirtIOPCIProxy *proxy,
                                               unsigned q);
GuestMemMap *virtio_pci_get_mem(VirtIOPCIProxy *proxy);
const char *virtio_pci_name(VirtIOPCIProxy *proxy);

/*
 * The transport's migration state; a device with more nests it first
 * (VMSTATE_STRUCT(parent_obj, ..., vmstate_virtio_pci, VirtIOPCIProxy)).
 */
struct VMStateDescription;
extern const struct VMStateDescription vmstate_virtio_pci;

/* The proxy's "virtio-backend" child, as in QEMU's object tree. */
Object *virtio_pci_backend(VirtIOPCIProxy *proxy);

#endif
