/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Interrupts with the in-kernel irqchip: KVM_SIGNAL_MSI for emulated
 * devices, GSI routes + irqfds for passthrough vectors, and ISA lines.
 *
 * KVM_SET_GSI_ROUTING replaces the whole table, so the table we hand over
 * always starts with the PIC/IOAPIC pins KVM would route by default,
 * followed by one entry per allocated MSI route.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/kvm.h"
#include "qemu/event_notifier.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "hw/pci/pci_host.h"
#include "trace.h"

#define KVM_NR_IOAPIC_PINS 24
#define KVM_NR_PIC_PINS 16
/* MSI routes start above the IOAPIC pins. */
#define KVM_FIRST_MSI_GSI KVM_NR_IOAPIC_PINS

typedef struct KVMMsiRoute {
    bool used;
    uint64_t address;
    uint32_t data;
} KVMMsiRoute;

static KVMMsiRoute *kvm_msi_routes;     /* indexed by gsi - first MSI GSI */
static unsigned kvm_nr_msi_routes;
static bool kvm_routes_dirty;
uint64_t kvm_stat_signal_msi;

bool kvm_msi_via_irqfd_enabled(void)
{
    return kvm_state && kvm_state->irqchip && kvm_msi_routes;
}

static bool kvm_irq_check(Error **errp)
{
    if (!kvm_msi_via_irqfd_enabled()) {
        error_setg(errp, "KVM in-kernel irqchip is not in use");
        return false;
    }
    return true;
}

bool kvm_irqchip_send_msi(uint64_t address, uint32_t data, Error **errp)
{
    struct kvm_msi msi = {
        .address_lo = (uint32_t)address,
        .address_hi = address >> 32,
        .data = data,
    };
    int ret;

    if (!kvm_irq_check(errp)) {
        return false;
    }
    ret = ioctl(kvm_state->vm_fd, KVM_SIGNAL_MSI, &msi);
    trace_kvm_signal_msi(address, data, ret);
    kvm_stat_signal_msi++;
    if (ret < 0) {
        error_setg_errno(errp, errno, "KVM_SIGNAL_MSI 0x%" PRIx64 "/0x%x",
                         address, data);
        return false;
    }
    /* 0 means the message was blocked (e.g. no LAPIC matched): not fatal. */
    return true;
}

/* The pc machine hands every write to its MSI window to us. */
static void kvm_pc_msi_handler(uint64_t address, uint32_t data, void *opaque)
{
    Error *err = NULL;

    if (!kvm_irqchip_send_msi(address, data, &err)) {
        warn_report_err(err);
    }
}

void kvm_set_irq_line(unsigned int gsi, int level)
{
    struct kvm_irq_level irq = { .irq = gsi, .level = level };

    if (!kvm_state || !kvm_state->irqchip) {
        return;
    }
    if (ioctl(kvm_state->vm_fd, KVM_IRQ_LINE, &irq) < 0) {
        warn_report("kvm: KVM_IRQ_LINE %u=%d: %s", gsi, level,
                    strerror(errno));
    }
}

int kvm_irqchip_add_msi_route(uint64_t address, uint32_t data, Error **errp)
{
    if (!kvm_irq_check(errp)) {
        return -1;
    }
    for (unsigned i = 0; i < kvm_nr_msi_routes; i++) {
        if (!kvm_msi_routes[i].used) {
            kvm_msi_routes[i] = (KVMMsiRoute) {
                .used = true, .address = address, .data = data,
            };
            kvm_routes_dirty = true;
            trace_kvm_msi_route_add(KVM_FIRST_MSI_GSI + i, address, data);
            return KVM_FIRST_MSI_GSI + i;
        }
    }
    error_setg(errp, "KVM GSI routing table full (%u MSI routes)",
               kvm_nr_msi_routes);
    return -1;
}

static KVMMsiRoute *kvm_msi_route_find(int virq)
{
    if (!kvm_msi_routes || virq < KVM_FIRST_MSI_GSI ||
        virq - KVM_FIRST_MSI_GSI >= (int)kvm_nr_msi_routes ||
        !kvm_msi_routes[virq - KVM_FIRST_MSI_GSI].used) {
        return NULL;
    }
    return &kvm_msi_routes[virq - KVM_FIRST_MSI_GSI];
}

bool kvm_irqchip_update_msi_route(int virq, uint64_t address, uint32_t data,
                                  Error **errp)
{
    KVMMsiRoute *route;

    if (!kvm_irq_check(errp)) {
        return false;
    }
    route = kvm_msi_route_find(virq);
    if (!route) {
        error_setg(errp, "KVM GSI %d is not an allocated MSI route", virq);
        return false;
    }
    if (route->address != address || route->data != data) {
        route->address = address;
        route->data = data;
        kvm_routes_dirty = true;
        trace_kvm_msi_route_update(virq, address, data);
    }
    return true;
}

void kvm_irqchip_release_virq(int virq)
{
    KVMMsiRoute *route = kvm_msi_route_find(virq);

    if (route) {
        route->used = false;
        kvm_routes_dirty = true;
        trace_kvm_msi_route_release(virq);
    }
}

static unsigned kvm_fill_default_routes(struct kvm_irq_routing_entry *e)
{
    unsigned n = 0;

    for (unsigned pin = 0; pin < KVM_NR_PIC_PINS; pin++) {
        e[n++] = (struct kvm_irq_routing_entry) {
            .gsi = pin, .type = KVM_IRQ_ROUTING_IRQCHIP,
            .u.irqchip = {
                .irqchip = pin < 8 ? KVM_IRQCHIP_PIC_MASTER
                                   : KVM_IRQCHIP_PIC_SLAVE,
                .pin = pin % 8,
            },
        };
    }
    for (unsigned pin = 0; pin < KVM_NR_IOAPIC_PINS; pin++) {
        e[n++] = (struct kvm_irq_routing_entry) {
            .gsi = pin, .type = KVM_IRQ_ROUTING_IRQCHIP,
            .u.irqchip = { .irqchip = KVM_IRQCHIP_IOAPIC, .pin = pin },
        };
    }
    return n;
}

bool kvm_irqchip_commit_routes(Error **errp)
{
    g_autofree struct kvm_irq_routing *table = NULL;
    unsigned max = KVM_NR_PIC_PINS + KVM_NR_IOAPIC_PINS + kvm_nr_msi_routes;
    unsigned n;

    if (!kvm_irq_check(errp)) {
        return false;
    }
    if (!kvm_routes_dirty) {
        return true;
    }
    table = g_malloc0(sizeof(*table) +
                      max * sizeof(struct kvm_irq_routing_entry));
    n = kvm_fill_default_routes(table->entries);
    for (unsigned i = 0; i < kvm_nr_msi_routes; i++) {
        if (kvm_msi_routes[i].used) {
            table->entries[n++] = (struct kvm_irq_routing_entry) {
                .gsi = KVM_FIRST_MSI_GSI + i,
                .type = KVM_IRQ_ROUTING_MSI,
                .u.msi = {
                    .address_lo = (uint32_t)kvm_msi_routes[i].address,
                    .address_hi = kvm_msi_routes[i].address >> 32,
                    .data = kvm_msi_routes[i].data,
                },
            };
        }
    }
    table->nr = n;
    if (ioctl(kvm_state->vm_fd, KVM_SET_GSI_ROUTING, table) < 0) {
        error_setg_errno(errp, errno, "KVM_SET_GSI_ROUTING (%u entries)", n);
        return false;
    }
    kvm_routes_dirty = false;
    trace_kvm_commit_routes(n);
    return true;
}

bool kvm_irqfd_fd(int fd, int virq, bool assign, Error **errp)
{
    struct kvm_irqfd irqfd = {
        .fd = fd,
        .gsi = virq,
        .flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN,
    };

    if (!kvm_irq_check(errp)) {
        return false;
    }
    if (virq < 0 || (assign && !kvm_msi_route_find(virq))) {
        error_setg(errp, "KVM GSI %d is not an allocated MSI route", virq);
        return false;
    }
    if (ioctl(kvm_state->vm_fd, KVM_IRQFD, &irqfd) < 0) {
        error_setg_errno(errp, errno, "KVM_IRQFD %s fd %d gsi %d",
                         assign ? "assign" : "deassign", irqfd.fd, virq);
        return false;
    }
    trace_kvm_irqfd(irqfd.fd, virq, assign);
    return true;
}

bool kvm_irqchip_add_irqfd_notifier(EventNotifier *n, int virq, Error **errp)
{
    return kvm_irqfd_fd(event_notifier_get_fd(n), virq, true, errp);
}

bool kvm_irqchip_remove_irqfd_notifier(EventNotifier *n, int virq,
                                       Error **errp)
{
    return kvm_irqfd_fd(event_notifier_get_fd(n), virq, false, errp);
}

bool kvm_irq_init(KVMState *s, Error **errp)
{
    /* The table size limit; GSIs must stay below it too. */
    int max_entries = ioctl(s->fd, KVM_CHECK_EXTENSION, KVM_CAP_IRQ_ROUTING);

    if (!s->irqchip) {
        return true;
    }
    if (max_entries <= KVM_NR_PIC_PINS + KVM_NR_IOAPIC_PINS) {
        max_entries = 1024;
    }
    /* The default PIC/IOAPIC entries share the table with the MSI ones. */
    kvm_nr_msi_routes = MIN(max_entries, 4096) - KVM_NR_PIC_PINS -
                        KVM_NR_IOAPIC_PINS;
    kvm_msi_routes = g_new0(KVMMsiRoute, kvm_nr_msi_routes);
    pc_msi_set_handler(kvm_pc_msi_handler, NULL);
    return true;
}

void kvm_irq_cleanup(KVMState *s)
{
    pc_msi_set_handler(NULL, NULL);
    g_clear_pointer(&kvm_msi_routes, g_free);
    kvm_nr_msi_routes = 0;
}
