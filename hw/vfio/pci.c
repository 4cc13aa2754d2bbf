/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-pci-base: the device model.  Its two drivers are subclasses:
 * vfio-pci (kernel VFIO) in hw/vfio/pci-kernel.c, vfio-user-pci in
 * hw/vfio-user/pci.c.
 *
 * Config space is read from the device with the bits Conduit emulates
 * (BARs, ROM BAR, interrupt line, MSI and MSI-X capabilities, memory and
 * I/O decode) overlaid from our own copy; writes go to the device (except
 * BAR addresses) and to our copy.  The MSI-X capability is parsed before
 * the BARs are built so that vfio_bar_plan() knows where the table is.
 * Interrupts reach Conduit through eventfds the backend signals; MSI-X
 * vectors may be handed to a fast path (KVM irqfd) while deliverable.
 */
#include "qemu/osdep.h"
#include "migration/migration.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "hw/qdev-properties.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "migration.h"
#include "msix-reloc.h"
#include "pci.h"
#include "trace.h"

#define VFIO_CAP_TTL 48
#define VFIO_MSIX_CAP_SIZE 12

static GList *vfio_pci_device_list;
static const VFIOPCIIrqBypassOps *vfio_irq_bypass_ops;

GList *vfio_pci_devices(void)
{
    return vfio_pci_device_list;
}

void vfio_pci_set_irq_bypass_ops(const VFIOPCIIrqBypassOps *ops)
{
    vfio_irq_bypass_ops = ops;
}

static uint32_t all_ones32(int len)
{
    return len >= 4 ? ~0u : (1u << (8 * len)) - 1;
}

/* ---- broken backend ---- */

static void vfio_pci_update_mmaps(VFIOPCIDevice *vdev)
{
    bool hide = vdev->vbasedev.broken || vdev->intx_pending;
    int i;

    if (vdev->realized) {
        for (i = 0; i < PCI_ROM_SLOT; i++) {
            vfio_bar_set_mappings_hidden(&vdev->bars[i], hide);
        }
    }
}

static void vfio_pci_mmap_bh(void *opaque)
{
    vfio_pci_update_mmaps(opaque);
}

/*
 * Changing the memory topology must not happen in the middle of the
 * guest access that triggered it (EOI, peer found gone): defer.
 */
static void vfio_pci_update_mmaps_later(VFIOPCIDevice *vdev)
{
    if (!vdev->mmap_bh) {
        vdev->mmap_bh = qemu_bh_new(vfio_pci_mmap_bh, vdev);
    }
    qemu_bh_schedule(vdev->mmap_bh);
}

void vfio_pci_check_broken(VFIOPCIDevice *vdev)
{
    if (!vdev->vbasedev.broken || vdev->broken_reported) {
        return;
    }
    vdev->broken_reported = true;
    error_report("vfio %s: device lost (backend closed or failed); its "
                 "BARs now read all-ones and drop writes",
                 vdev->vbasedev.name);
    vfio_pci_update_mmaps_later(vdev);
}

static bool vfio_pci_set_irqs(VFIOPCIDevice *vdev, uint32_t index,
                              uint32_t flags, uint32_t start, uint32_t count,
                              const int *fds, Error **errp)
{
    struct vfio_irq_set set = {
        .argsz = sizeof(set),
        .flags = flags,
        .index = index,
        .start = start,
        .count = count,
    };

    trace_vfio_pci_set_irqs(vdev->vbasedev.name, index, flags, start, count);
    if (!vfio_device_set_irqs(&vdev->vbasedev, &set, fds, errp)) {
        vfio_pci_check_broken(vdev);
        return false;
    }
    return true;
}

static void vfio_pci_report_irq_error(VFIOPCIDevice *vdev, Error *err)
{
    if (!vdev->vbasedev.broken) {
        error_report_err(err);
    } else {
        error_free(err);
    }
}

/* ---- INTx ---- */

static void vfio_intx_handler(EventNotifier *e)
{
    VFIOPCIDevice *vdev = container_of(e, VFIOPCIDevice, intx_notifier);

    if (!event_notifier_test_and_clear(e)) {
        return;
    }
    trace_vfio_intx(vdev->vbasedev.name);
    vdev->intx_pending = true;
    pci_set_irq(PCI_DEVICE(vdev), 1);
    /* Until the EOI, every BAR access must reach us. */
    vfio_pci_update_mmaps(vdev);
}

/*
 * Without an EOI hook, any BAR access after an INTx is taken as the
 * guest servicing it: lower the line, let the device raise it again and
 * give the mappings back.
 */
static void vfio_pci_intx_eoi(VFIOPCIDevice *vdev)
{
    Error *err = NULL;

    if (!vdev->intx_pending) {
        return;
    }
    vdev->intx_pending = false;
    pci_set_irq(PCI_DEVICE(vdev), 0);
    vfio_pci_update_mmaps_later(vdev);
    if (!vfio_pci_set_irqs(vdev, VFIO_PCI_INTX_IRQ_INDEX,
                           VFIO_IRQ_SET_DATA_NONE |
                           VFIO_IRQ_SET_ACTION_UNMASK, 0, 1, NULL, &err)) {
        vfio_pci_report_irq_error(vdev, err);
    }
}

static bool vfio_intx_enable(VFIOPCIDevice *vdev, Error **errp)
{
    struct vfio_irq_info info = { .argsz = sizeof(info),
                                  .index = VFIO_PCI_INTX_IRQ_INDEX };
    int fd;

    if (!PCI_DEVICE(vdev)->config[PCI_INTERRUPT_PIN]) {
        return true;
    }
    if (!vfio_device_get_irq_info(&vdev->vbasedev, &info, errp)) {
        return false;
    }
    if (!info.count || !(info.flags & VFIO_IRQ_INFO_EVENTFD)) {
        return true;
    }
    if (event_notifier_init(&vdev->intx_notifier, 0) < 0) {
        error_setg(errp, "vfio %s: cannot create the INTx eventfd",
                   vdev->vbasedev.name);
        return false;
    }
    fd = event_notifier_get_fd(&vdev->intx_notifier);
    if (!vfio_pci_set_irqs(vdev, VFIO_PCI_INTX_IRQ_INDEX,
                           VFIO_IRQ_SET_DATA_EVENTFD |
                           VFIO_IRQ_SET_ACTION_TRIGGER, 0, 1, &fd, errp)) {
        event_notifier_cleanup(&vdev->intx_notifier);
        return false;
    }
    event_notifier_set_handler(&vdev->intx_notifier, vfio_intx_handler);
    vdev->intx_enabled = true;
    return true;
}

static void vfio_intx_disable(VFIOPCIDevice *vdev)
{
    Error *err = NULL;

    if (!vdev->intx_enabled) {
        return;
    }
    if (!vdev->vbasedev.broken &&
        !vfio_pci_set_irqs(vdev, VFIO_PCI_INTX_IRQ_INDEX,
                           VFIO_IRQ_SET_DATA_NONE |
                           VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL, &err)) {
        vfio_pci_report_irq_error(vdev, err);
    }
    event_notifier_cleanup(&vdev->intx_notifier);
    vdev->intx_enabled = false;
    if (vdev->intx_pending) {
        vdev->intx_pending = false;
        pci_set_irq(PCI_DEVICE(vdev), 0);
        vfio_pci_update_mmaps_later(vdev);
    }
}

/* ---- MSI-X and MSI vectors ---- */

/* msix.c announces the lazy PBA: show the BAR view that matches it. */
static void vfio_msix_pba_changed(PCIDevice *pdev, bool enabled)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);

    if (!vdev->msix.relocated) {
        vfio_bar_set_pba_view(&vdev->bars[vdev->msix.pba_bar], enabled);
    }
}

static void vfio_msix_vector_handler(EventNotifier *e)
{
    VFIOPCIVector *v = container_of(e, VFIOPCIVector, notifier);
    VFIOPCIDevice *vdev = v->vdev;

    if (!event_notifier_test_and_clear(e)) {
        return;
    }
    trace_vfio_msix_vector(vdev->vbasedev.name, v->nr);
    vdev->msix_slow_path_irqs++;
    /* Delivers, or sets the pending bit (and enables a lazy PBA). */
    msix_notify(PCI_DEVICE(vdev), v->nr);
}

static void vfio_msi_vector_handler(EventNotifier *e)
{
    VFIOPCIVector *v = container_of(e, VFIOPCIVector, notifier);

    if (!event_notifier_test_and_clear(e)) {
        return;
    }
    trace_vfio_msi_vector(v->vdev->vbasedev.name, v->nr);
    msi_notify(PCI_DEVICE(v->vdev), v->nr);
}

static VFIOPCIVector *vfio_vectors_new(VFIOPCIDevice *vdev, uint32_t n,
                                       EventNotifierHandler *handler,
                                       int *fds, Error **errp)
{
    VFIOPCIVector *vecs = g_new0(VFIOPCIVector, n);
    uint32_t i;

    for (i = 0; i < n; i++) {
        vecs[i].vdev = vdev;
        vecs[i].nr = i;
        if (event_notifier_init(&vecs[i].notifier, 0) < 0) {
            error_setg(errp, "vfio %s: cannot create eventfd for vector %u",
                       vdev->vbasedev.name, i);
            while (i--) {
                event_notifier_cleanup(&vecs[i].notifier);
            }
            g_free(vecs);
            return NULL;
        }
        fds[i] = event_notifier_get_fd(&vecs[i].notifier);
        event_notifier_set_handler(&vecs[i].notifier, handler);
    }
    return vecs;
}

static void vfio_vectors_free(VFIOPCIDevice *vdev, VFIOPCIVector *vecs,
                              uint32_t n)
{
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (vecs[i].bypassed && vfio_irq_bypass_ops) {
            vfio_irq_bypass_ops->detach(PCI_DEVICE(vdev), i,
                event_notifier_get_fd(&vecs[i].notifier));
        }
        event_notifier_cleanup(&vecs[i].notifier);
    }
    g_free(vecs);
}

static void vfio_irq_index_disable(VFIOPCIDevice *vdev, uint32_t index,
                                   VFIOPCIVector **vecs, uint32_t *n)
{
    Error *err = NULL;

    if (!*n) {
        return;
    }
    if (!vdev->vbasedev.broken &&
        !vfio_pci_set_irqs(vdev, index, VFIO_IRQ_SET_DATA_NONE |
                           VFIO_IRQ_SET_ACTION_TRIGGER, 0, 0, NULL, &err)) {
        vfio_pci_report_irq_error(vdev, err);
    }
    vfio_vectors_free(vdev, *vecs, *n);
    *vecs = NULL;
    *n = 0;
}

static void vfio_irq_index_enable(VFIOPCIDevice *vdev, uint32_t index,
                                  uint32_t n, EventNotifierHandler *handler,
                                  VFIOPCIVector **vecs, uint32_t *nr)
{
    g_autofree int *fds = g_new(int, n);
    Error *err = NULL;
    VFIOPCIVector *v;

    v = vfio_vectors_new(vdev, n, handler, fds, &err);
    if (!v) {
        error_report_err(err);
        return;
    }
    if (!vfio_pci_set_irqs(vdev, index, VFIO_IRQ_SET_DATA_EVENTFD |
                           VFIO_IRQ_SET_ACTION_TRIGGER, 0, n, fds, &err)) {
        vfio_pci_report_irq_error(vdev, err);
        vfio_vectors_free(vdev, v, n);
        return;
    }
    *vecs = v;
    *nr = n;
}

static int vfio_msix_vector_use(PCIDevice *pdev, unsigned int vector,
                                MSIMessage msg)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);
    VFIOPCIVector *v;
    int fd;

    if (vector >= vdev->nr_msix_vectors || !vfio_irq_bypass_ops) {
        return 0;   /* the eventfd handler serves it */
    }
    v = &vdev->msix_vectors[vector];
    fd = event_notifier_get_fd(&v->notifier);
    if (v->bypassed) {
        vfio_irq_bypass_ops->detach(pdev, vector, fd);
        v->bypassed = false;
    }
    if (vfio_irq_bypass_ops->attach(pdev, vector, fd, msg)) {
        event_notifier_set_handler(&v->notifier, NULL);
        v->bypassed = true;
    } else {
        event_notifier_set_handler(&v->notifier, vfio_msix_vector_handler);
    }
    return 0;
}

static void vfio_msix_vector_release(PCIDevice *pdev, unsigned int vector)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);
    VFIOPCIVector *v;

    if (vector >= vdev->nr_msix_vectors) {
        return;
    }
    v = &vdev->msix_vectors[vector];
    if (!v->bypassed) {
        return;
    }
    vfio_irq_bypass_ops->detach(pdev, vector,
                                event_notifier_get_fd(&v->notifier));
    v->bypassed = false;
    event_notifier_set_handler(&v->notifier, vfio_msix_vector_handler);
    /* An event that raced with the release is now pending, not lost. */
    if (event_notifier_test_and_clear(&v->notifier)) {
        vdev->msix_slow_path_irqs++;
        msix_notify(pdev, vector);
    }
}

static void vfio_pci_update_irqs(VFIOPCIDevice *vdev)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);

    if (vdev->vbasedev.broken) {
        return;
    }
    if (msix_present(pdev)) {
        if (msix_enabled(pdev) && !vdev->nr_msix_vectors) {
            vfio_irq_index_enable(vdev, VFIO_PCI_MSIX_IRQ_INDEX,
                                  vdev->msix.entries,
                                  vfio_msix_vector_handler,
                                  &vdev->msix_vectors,
                                  &vdev->nr_msix_vectors);
            /*
             * The use notifiers ran before the eventfds existed: offer
             * the vectors that are already deliverable to the fast path.
             */
            for (unsigned int v = 0; v < vdev->nr_msix_vectors; v++) {
                if (!msix_is_masked(pdev, v)) {
                    vfio_msix_vector_use(pdev, v, msix_get_message(pdev, v));
                }
            }
        } else if (!msix_enabled(pdev) && vdev->nr_msix_vectors) {
            vfio_irq_index_disable(vdev, VFIO_PCI_MSIX_IRQ_INDEX,
                                   &vdev->msix_vectors,
                                   &vdev->nr_msix_vectors);
        }
    }
    if (vdev->msi_cap) {
        unsigned int n = msi_enabled(pdev) ? msi_nr_vectors_allocated(pdev)
                                           : 0;

        if (n != vdev->nr_msi_vectors) {
            vfio_irq_index_disable(vdev, VFIO_PCI_MSI_IRQ_INDEX,
                                   &vdev->msi_vectors,
                                   &vdev->nr_msi_vectors);
            if (n) {
                vfio_irq_index_enable(vdev, VFIO_PCI_MSI_IRQ_INDEX, n,
                                      vfio_msi_vector_handler,
                                      &vdev->msi_vectors,
                                      &vdev->nr_msi_vectors);
            }
        }
    }
}

/* ---- config space ---- */

static uint32_t vfio_pci_read_config(PCIDevice *pdev, uint32_t addr, int len)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);
    uint32_t emu_bits = ldn_le_p(pdev->emulated_config_bits + addr, len);
    uint32_t emu = pci_default_read_config(pdev, addr, len);
    uint32_t phys = 0;
    uint8_t buf[8];
    Error *err = NULL;

    if (emu_bits != all_ones32(len)) {
        if (vdev->vbasedev.broken) {
            return all_ones32(len);
        }
        if (!vfio_device_region_read(&vdev->vbasedev,
                                     VFIO_PCI_CONFIG_REGION_INDEX, addr, len,
                                     buf, &err)) {
            qemu_log_guest_error("vfio %s: config read 0x%x: %s\n",
                                 vdev->vbasedev.name, addr,
                                 error_get_pretty(err));
            error_free(err);
            vfio_pci_check_broken(vdev);
            return all_ones32(len);
        }
        phys = ldn_le_p(buf, len);
    }
    return (phys & ~emu_bits) | (emu & emu_bits);
}

static bool vfio_pci_is_bar_reg(uint32_t addr, int len)
{
    return (addr >= PCI_BASE_ADDRESS_0 &&
            addr + len <= PCI_BASE_ADDRESS_5 + 4) ||
           (addr >= PCI_ROM_ADDRESS && addr + len <= PCI_ROM_ADDRESS + 4);
}

static void vfio_pci_write_config(PCIDevice *pdev, uint32_t addr,
                                  uint32_t val, int len)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);
    uint8_t buf[8];
    Error *err = NULL;

    trace_vfio_pci_write_config(vdev->vbasedev.name, addr, val, len);
    /*
     * The device sees every write but those to the BAR registers, whose
     * addresses mean nothing to it: a vfio-user server, like the kernel,
     * tracks MSI/MSI-X enable and decode bits in its own config space.
     */
    if (!vfio_pci_is_bar_reg(addr, len) && !vdev->vbasedev.broken) {
        stn_le_p(buf, len, val);
        if (!vfio_device_region_write(&vdev->vbasedev,
                                      VFIO_PCI_CONFIG_REGION_INDEX, addr,
                                      len, buf, false, &err)) {
            qemu_log_guest_error("vfio %s: config write 0x%x: %s\n",
                                 vdev->vbasedev.name, addr,
                                 error_get_pretty(err));
            error_free(err);
            vfio_pci_check_broken(vdev);
        }
    }
    /* Our copy tracks BARs, decode and the MSI/MSI-X state machines. */
    pci_default_write_config(pdev, addr, val, len);
    vfio_pci_update_irqs(vdev);
}

static void vfio_pci_emulate(PCIDevice *pdev, uint32_t off, uint32_t len)
{
    memset(pdev->emulated_config_bits + off, 0xff, len);
}

static uint8_t vfio_pci_find_cap(const uint8_t *config, uint8_t id)
{
    uint8_t pos = config[PCI_CAPABILITY_LIST] & ~3;
    int ttl = VFIO_CAP_TTL;

    if (!(lduw_le_p(config + PCI_STATUS) & PCI_STATUS_CAP_LIST)) {
        return 0;
    }
    while (pos >= PCI_CONFIG_HEADER_SIZE && ttl--) {
        if (config[pos + PCI_CAP_LIST_ID] == id) {
            return pos;
        }
        pos = config[pos + PCI_CAP_LIST_NEXT] & ~3;
    }
    return 0;
}

static bool vfio_pci_read_phys_config(VFIOPCIDevice *vdev, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    g_autofree struct vfio_region_info *info = NULL;
    int fd = -1;

    if (!vfio_device_get_region_info(&vdev->vbasedev,
                                     VFIO_PCI_CONFIG_REGION_INDEX, &info,
                                     &fd, errp)) {
        return false;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (info->size < PCI_CONFIG_SPACE_SIZE) {
        error_setg(errp, "vfio %s: config space of 0x%llx bytes is too "
                   "small", vdev->vbasedev.name,
                   (unsigned long long)info->size);
        return false;
    }
    vdev->config_region_size = MIN(info->size, pdev->config_size);
    if (!vfio_device_region_read(&vdev->vbasedev,
                                 VFIO_PCI_CONFIG_REGION_INDEX, 0,
                                 pdev->config_size, pdev->config, errp)) {
        error_prepend(errp, "vfio %s: reading config space: ",
                      vdev->vbasedev.name);
        return false;
    }
    return true;
}

/* ---- BARs ---- */

static void vfio_pci_bar_access_done(void *opaque)
{
    vfio_pci_intx_eoi(opaque);
}

static void vfio_pci_backend_failed(void *opaque)
{
    vfio_pci_check_broken(opaque);
}

static const VFIOBarHooks vfio_pci_bar_hooks = {
    .access_done = vfio_pci_bar_access_done,
    .backend_failed = vfio_pci_backend_failed,
};

static bool vfio_pci_get_regions(VFIOPCIDevice *vdev, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    int i;

    for (i = 0; i < PCI_ROM_SLOT; i++) {
        VFIOBar *bar = &vdev->bars[i];

        vfio_bar_init(bar, OBJECT(vdev), &vdev->vbasedev, i,
                      &vfio_pci_bar_hooks, vdev);
        if (i && vdev->bars[i - 1].mem64) {
            continue;   /* upper half of the previous BAR */
        }
        if (!vfio_bar_get_info(bar,
                               pci_get_long(pdev->config + pci_bar_reg(i)),
                               errp)) {
            return false;
        }
    }
    return true;
}

/* ---- expansion ROM ---- */

/* PCI ROM BARs decode 2 KiB at least; a larger image is a peer's mistake. */
#define VFIO_ROM_MIN_SIZE 0x800
#define VFIO_ROM_MAX_SIZE (16u << 20)

static uint64_t vfio_rom_read(void *opaque, hwaddr addr, unsigned size)
{
    VFIOPCIDevice *vdev = opaque;
    uint64_t val = 0;

    if (addr + size <= vdev->rom_size) {
        val = ldn_le_p(vdev->rom_data + addr, size);
    }
    return val;
}

static void vfio_rom_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    /* A ROM: the guest cannot change it. */
}

static const MemoryRegionOps vfio_rom_ops = {
    .read = vfio_rom_read,
    .write = vfio_rom_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 4 },
    .impl = { .min_access_size = 1, .max_access_size = 4 },
};

/*
 * The image is read once: later reads come from our copy, so a ROM BAR
 * never costs a backend round trip.  Any trouble only hides the ROM.
 */
static void vfio_pci_setup_rom(VFIOPCIDevice *vdev)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    g_autofree struct vfio_region_info *info = NULL;
    Error *err = NULL;
    uint64_t bar_size;
    int fd = -1;

    if (!pdev->rombar) {
        return;
    }
    if (!vfio_device_get_region_info(&vdev->vbasedev,
                                     VFIO_PCI_ROM_REGION_INDEX, &info, &fd,
                                     &err)) {
        /* Devices without a ROM region may refuse the index. */
        error_free(err);
        return;
    }
    if (fd >= 0) {
        close(fd);
    }
    if (!info->size || !(info->flags & VFIO_REGION_INFO_FLAG_READ)) {
        return;
    }
    if (info->size > VFIO_ROM_MAX_SIZE) {
        warn_report("vfio %s: option ROM of 0x%llx bytes is larger than "
                    "16 MiB; not exposed", vdev->vbasedev.name,
                    (unsigned long long)info->size);
        return;
    }
    bar_size = MAX(pow2ceil(info->size), VFIO_ROM_MIN_SIZE);
    vdev->rom_data = g_try_malloc0(bar_size);
    if (!vdev->rom_data) {
        warn_report("vfio %s: no memory for the option ROM; not exposed",
                    vdev->vbasedev.name);
        return;
    }
    if (!vfio_device_region_read(&vdev->vbasedev, VFIO_PCI_ROM_REGION_INDEX,
                                 0, info->size, vdev->rom_data, &err)) {
        error_prepend(&err, "vfio %s: option ROM not exposed: ",
                      vdev->vbasedev.name);
        warn_report_err(err);
        g_clear_pointer(&vdev->rom_data, g_free);
        vfio_pci_check_broken(vdev);
        return;
    }
    vdev->rom_size = bar_size;
    memory_region_init_io(&vdev->rom, OBJECT(vdev), &vfio_rom_ops, vdev,
                          "vfio-rom", bar_size);
    pci_register_bar(pdev, PCI_ROM_SLOT, 0, &vdev->rom);
    trace_vfio_pci_rom(vdev->vbasedev.name, info->size, bar_size);
}

static bool vfio_msix_parse(VFIOPCIDevice *vdev, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    VFIOMsixInfo *m = &vdev->msix;
    uint8_t pos = vfio_pci_find_cap(pdev->config, PCI_CAP_ID_MSIX);
    uint32_t table, pba;
    uint64_t table_size, pba_size;

    if (!pos) {
        return true;
    }
    if (pos + VFIO_MSIX_CAP_SIZE > PCI_CONFIG_SPACE_SIZE) {
        error_setg(errp, "vfio %s: MSI-X capability at 0x%x is truncated",
                   vdev->vbasedev.name, pos);
        return false;
    }
    table = pci_get_long(pdev->config + pos + PCI_MSIX_TABLE);
    pba = pci_get_long(pdev->config + pos + PCI_MSIX_PBA);
    m->entries = (pci_get_word(pdev->config + pos + PCI_MSIX_FLAGS) &
                  PCI_MSIX_FLAGS_QSIZE) + 1;
    m->table_bar = table & PCI_MSIX_TABLE_BIR;
    m->table_offset = table & PCI_MSIX_TABLE_OFFSET;
    m->pba_bar = pba & PCI_MSIX_PBA_BIR;
    m->pba_offset = pba & PCI_MSIX_PBA_OFFSET;
    table_size = msix_table_size(m->entries);
    pba_size = msix_pba_size(m->entries);
    if (m->table_bar >= PCI_ROM_SLOT || m->pba_bar >= PCI_ROM_SLOT ||
        !vdev->bars[m->table_bar].region.size ||
        !vdev->bars[m->pba_bar].region.size ||
        vdev->bars[m->table_bar].type == PCI_BASE_ADDRESS_SPACE_IO ||
        vdev->bars[m->pba_bar].type == PCI_BASE_ADDRESS_SPACE_IO ||
        m->table_offset + table_size > vdev->bars[m->table_bar].region.size ||
        m->pba_offset + pba_size > vdev->bars[m->pba_bar].region.size) {
        error_setg(errp, "vfio %s: MSI-X table (BAR%u+0x%x) or PBA "
                   "(BAR%u+0x%x) of %u vectors is not inside a memory BAR",
                   vdev->vbasedev.name, m->table_bar, m->table_offset,
                   m->pba_bar, m->pba_offset, m->entries);
        return false;
    }
    m->cap = pos;
    m->emu_table_bar = m->table_bar;
    m->emu_table_offset = m->table_offset;
    m->emu_pba_bar = m->pba_bar;
    m->emu_pba_offset = m->pba_offset;
    return true;
}

/* What vfio_bar_plan() needs from the device, MSI-X parts aside. */
static VFIOBarPlanInput vfio_pci_bar_plan_input(VFIOPCIDevice *vdev,
                                                VFIOBar *bar)
{
    return (VFIOBarPlanInput) {
        .bar = bar->nr,
        .size = bar->region.size,
        .flags = bar->region.flags,
        .caps = &bar->caps,
        .host_page_size = vdev->host_page_size,
        .page_size_override = vdev->page_size_override,
        .no_mmap = vdev->no_mmap || bar->region.mmap_fd < 0,
        .msix_mappable = vdev->msix_mappable,
        .no_msix_emulation = vdev->no_msix_emulation,
        .lazy_pba = vdev->lazy_pba,
        .coalesce = vdev->coalesce_prop == ON_OFF_AUTO_ON ? VFIO_COALESCE_ON
                    : vdev->coalesce_prop == ON_OFF_AUTO_OFF
                    ? VFIO_COALESCE_OFF : VFIO_COALESCE_AUTO,
        .online_cpus = sysconf(_SC_NPROCESSORS_ONLN),
        /* Why the default could not move the table, for the hint. */
        .relocation_refusal = vdev->msix.relocation_impossible ?
                              vdev->msix.decision : NULL,
    };
}

/* x-msix-relocation: what msix-reloc.c decides from (msix-reloc.h). */
static VFIOMsixRelocInput vfio_msix_relocation_input(VFIOPCIDevice *vdev)
{
    VFIOMsixInfo *m = &vdev->msix;
    VFIOMsixRelocInput in = {
        .mode = vdev->msix_relocation,
        .entries = m->entries,
        .table_bar = m->table_bar,
        .table_offset = m->table_offset,
        .pba_bar = m->pba_bar,
        .pba_offset = m->pba_offset,
        .page_size = vdev->page_size_override ?: vdev->host_page_size,
    };

    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        in.slots[i] = (VFIOMsixRelocSlot) {
            .size = vdev->bars[i].region.size,
            .io = vdev->bars[i].type == PCI_BASE_ADDRESS_SPACE_IO,
            .mem64 = vdev->bars[i].mem64,
            .upper_half = i && vdev->bars[i - 1].mem64,
        };
        in.bar_plans[i] = vfio_pci_bar_plan_input(vdev, &vdev->bars[i]);
    }
    return in;
}

/* Decides, then moves the emulated table and PBA as decided. */
static bool vfio_msix_relocate(VFIOPCIDevice *vdev, Error **errp)
{
    VFIOMsixInfo *m = &vdev->msix;
    VFIOMsixRelocInput in;
    VFIOMsixRelocDecision d;

    if (!m->cap) {
        return true;
    }
    in = vfio_msix_relocation_input(vdev);
    if (!vfio_msix_relocation_decide(&in, &d, errp)) {
        error_prepend(errp, "vfio %s: x-msix-relocation: ",
                      vdev->vbasedev.name);
        return false;
    }
    if (d.relocated) {
        m->relocated = true;
        m->emu_table_bar = m->emu_pba_bar = d.bar;
        m->emu_table_offset = d.table_offset;
        m->emu_pba_offset = d.pba_offset;
        vdev->bars[d.bar].bar_size = d.bar_size;
        if (d.new_bar) {
            vdev->bars[d.bar].type = PCI_BASE_ADDRESS_SPACE_MEMORY;
        }
        trace_vfio_msix_relocate(vdev->vbasedev.name, d.bar, d.bar_size,
                                 d.table_offset, d.pba_offset);
    }
    m->relocation_impossible = d.impossible;
    g_free(m->decision);
    m->decision = g_steal_pointer(&d.explanation);
    trace_vfio_msix_relocation_decision(vdev->vbasedev.name, m->decision);
    if (d.notable) {
        info_report("vfio %s: %s", vdev->vbasedev.name, m->decision);
    }
    return true;
}

static bool vfio_pci_build_bar(VFIOPCIDevice *vdev, VFIOBar *bar,
                               Error **errp)
{
    VFIOMsixInfo *m = &vdev->msix;
    VFIOBarPlanInput in = vfio_pci_bar_plan_input(vdev, bar);

    if (m->cap && m->table_bar == bar->nr) {
        in.table = (VFIOBarPlanMsixPart) {
            .present = true,
            .offset = m->table_offset,
            .size = msix_table_size(m->entries),
            .enabled = !m->relocated,
        };
    }
    if (m->cap && m->pba_bar == bar->nr && !m->relocated) {
        in.pba = (VFIOBarPlanMsixPart) {
            .present = true,
            .offset = m->pba_offset,
            .size = msix_pba_size(m->entries),
            .enabled = !vdev->lazy_pba,
        };
    }
    return vfio_bar_realize(bar, &in, errp);
}

/* ---- realize / exit ---- */

static void vfio_pci_fix_cap_link(PCIDevice *pdev, const uint8_t *phys,
                                  uint8_t pos)
{
    pdev->config[PCI_CAPABILITY_LIST] = phys[PCI_CAPABILITY_LIST];
    pdev->config[pos + PCI_CAP_LIST_NEXT] = phys[pos + PCI_CAP_LIST_NEXT];
}

static bool vfio_pci_setup_caps(VFIOPCIDevice *vdev, const uint8_t *phys,
                                Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    VFIOMsixInfo *m = &vdev->msix;
    uint8_t pos;

    if (m->cap) {
        VFIOBar *tb = &vdev->bars[m->emu_table_bar];
        VFIOBar *pb = &vdev->bars[m->emu_pba_bar];

        if (msix_init(pdev, m->entries, &tb->container, m->emu_table_bar,
                      m->emu_table_offset, &pb->container, m->emu_pba_bar,
                      m->emu_pba_offset, m->cap, errp) < 0) {
            return false;
        }
        vfio_pci_fix_cap_link(pdev, phys, m->cap);
        vfio_pci_emulate(pdev, m->cap, VFIO_MSIX_CAP_SIZE);
        msix_set_pba_notifier(pdev, vfio_msix_pba_changed);
        /*
         * A lazy PBA lets the device's page show through while nothing
         * is pending.  A relocated PBA has no device page below it, only
         * unassigned space that reads all-ones: it stays emulated (its
         * page traps nothing else, so that costs no exit).
         */
        msix_set_lazy_pba(pdev, vdev->lazy_pba && !m->relocated);
        if (vdev->no_msix_emulation) {
            msix_set_table_emulated(pdev, false);
        }
        msix_set_vector_notifiers(pdev, vfio_msix_vector_use,
                                  vfio_msix_vector_release, NULL);
    }
    pos = vfio_pci_find_cap(phys, PCI_CAP_ID_MSI);
    if (pos) {
        uint16_t flags = pci_get_word(phys + pos + PCI_MSI_FLAGS);
        unsigned int nr = 1u << ((flags & PCI_MSI_FLAGS_QMASK) >> 1);
        bool is64 = flags & PCI_MSI_FLAGS_64BIT;
        bool maskbit = flags & PCI_MSI_FLAGS_MASKBIT;
        int ret;

        if (nr > 32) {
            error_setg(errp, "vfio %s: MSI capability offers %u vectors",
                       vdev->vbasedev.name, nr);
            return false;
        }
        ret = msi_init(pdev, pos, nr, is64, maskbit, errp);
        if (ret < 0) {
            return false;
        }
        vdev->msi_cap = pos;
        vfio_pci_fix_cap_link(pdev, phys, pos);
        vfio_pci_emulate(pdev, pos, (is64 ? 14 : 10) + (maskbit ? 10 : 0));
    }
    return true;
}

static bool vfio_pci_realize_common(VFIOPCIDevice *vdev, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);
    g_autofree uint8_t *phys = NULL;
    Object *machine = qdev_get_machine();
    int i;

    if (!(vdev->vbasedev.flags & VFIO_DEVICE_FLAGS_PCI) ||
        vdev->vbasedev.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
        error_setg(errp, "vfio %s: not a PCI device (flags 0x%x, %u "
                   "regions)", vdev->vbasedev.name, vdev->vbasedev.flags,
                   vdev->vbasedev.num_regions);
        return false;
    }
    vdev->host_page_size = sysconf(_SC_PAGESIZE);
    vdev->msix_mappable = vdev->msix_mappable_prop == ON_OFF_AUTO_ON
                          ? VFIO_MSIX_MAPPABLE_ON
                          : vdev->msix_mappable_prop == ON_OFF_AUTO_OFF
                          ? VFIO_MSIX_MAPPABLE_OFF : VFIO_MSIX_MAPPABLE_AUTO;
    vdev->no_msix_emulation = machine &&
        object_property_get_bool(machine, "vfio-no-msix-emulation", NULL);

    if (!vfio_pci_read_phys_config(vdev, errp)) {
        return false;
    }
    phys = g_memdup2(pdev->config, pdev->config_size);
    pdev->emulated_config_bits = g_malloc0(pdev->config_size);
    /* Our copy starts from the device's; the BARs are ours to fill. */
    memset(pdev->config + PCI_BASE_ADDRESS_0, 0, 24);
    memset(pdev->config + PCI_ROM_ADDRESS, 0, 4);
    pdev->config[PCI_INTERRUPT_LINE] = 0;
    pci_set_word(pdev->config + PCI_COMMAND, 0);
    vfio_pci_emulate(pdev, PCI_BASE_ADDRESS_0, 24);
    vfio_pci_emulate(pdev, PCI_ROM_ADDRESS, 4);
    vfio_pci_emulate(pdev, PCI_INTERRUPT_LINE, 1);
    pdev->emulated_config_bits[PCI_COMMAND] =
        PCI_COMMAND_IO | PCI_COMMAND_MEMORY;

    /* The BAR registers of the device tell the types. */
    memcpy(pdev->config + PCI_BASE_ADDRESS_0, phys + PCI_BASE_ADDRESS_0, 24);
    if (!vfio_pci_get_regions(vdev, errp)) {
        return false;
    }
    memset(pdev->config + PCI_BASE_ADDRESS_0, 0, 24);
    if (!vfio_msix_parse(vdev, errp) || !vfio_msix_relocate(vdev, errp)) {
        return false;
    }
    for (i = 0; i < PCI_ROM_SLOT; i++) {
        if (!vfio_pci_build_bar(vdev, &vdev->bars[i], errp)) {
            return false;
        }
    }
    for (i = 0; i < PCI_ROM_SLOT; i++) {
        VFIOBar *bar = &vdev->bars[i];

        if (bar->bar_size) {
            pci_register_bar(pdev, i, bar->type, &bar->container);
        }
    }
    vfio_pci_setup_rom(vdev);
    if (!vfio_pci_setup_caps(vdev, phys, errp)) {
        return false;
    }
    if (!vfio_intx_enable(vdev, errp)) {
        return false;
    }
    if (!vfio_dma_listener_start(&vdev->dma, &vdev->vbasedev,
                                 vfio_pci_backend_failed, vdev, errp)) {
        return false;
    }
    vdev->realized = true;
    vfio_pci_device_list = g_list_append(vfio_pci_device_list, vdev);
    return true;
}

/* Everything but the BAR regions, which go once the PCI core let go. */
static void vfio_pci_teardown(VFIOPCIDevice *vdev)
{
    PCIDevice *pdev = PCI_DEVICE(vdev);

    vfio_pci_device_list = g_list_remove(vfio_pci_device_list, vdev);
    vdev->realized = false;
    vfio_dma_listener_stop(&vdev->dma);
    vfio_intx_disable(vdev);
    if (msix_present(pdev)) {
        msix_unset_vector_notifiers(pdev);
    }
    vfio_irq_index_disable(vdev, VFIO_PCI_MSIX_IRQ_INDEX,
                           &vdev->msix_vectors, &vdev->nr_msix_vectors);
    vfio_irq_index_disable(vdev, VFIO_PCI_MSI_IRQ_INDEX, &vdev->msi_vectors,
                           &vdev->nr_msi_vectors);
    if (msix_present(pdev)) {
        msix_uninit(pdev, &vdev->bars[vdev->msix.emu_table_bar].container,
                    &vdev->bars[vdev->msix.emu_pba_bar].container);
    }
    if (vdev->msi_cap) {
        msi_uninit(pdev);
        vdev->msi_cap = 0;
    }
    vfio_device_close(&vdev->vbasedev);
    g_clear_pointer(&pdev->emulated_config_bits, g_free);
    if (vdev->mmap_bh) {
        qemu_bh_delete(vdev->mmap_bh);
        vdev->mmap_bh = NULL;
    }
}

/*
 * The device's internal state lives in the device (or its server): it
 * moves if the device has a migration driver (hw/vfio/migration.c);
 * otherwise, or with enable-migration=off, QEMU's blocker keeps the VM
 * from moving without it.  enable-migration=on makes a device without
 * one fail to realize, as in QEMU.
 */
static bool vfio_pci_migration_init(VFIOPCIDevice *vdev, Error **errp)
{
    g_autofree char *path = object_get_canonical_path(OBJECT(vdev));
    g_autofree char *idstr = g_strdup_printf("%s/vfio", path);
    Error *why = NULL;

    if (vdev->enable_migration != ON_OFF_AUTO_OFF) {
        vdev->migration = vfio_migration_new(&vdev->vbasedev, &vdev->dma,
                                             idstr, &why);
        if (vdev->migration) {
            return true;
        }
        if (vdev->enable_migration == ON_OFF_AUTO_ON) {
            error_setg(errp, "%s %s: enable-migration=on, but the device "
                       "cannot migrate: %s",
                       object_get_typename(OBJECT(vdev)),
                       vdev->vbasedev.name, error_get_pretty(why));
            error_free(why);
            return false;
        }
    } else {
        error_setg(&why, "enable-migration=off");
    }
    error_setg(&vdev->migration_blocker, "%s %s: VFIO device doesn't "
               "support migration (%s)", object_get_typename(OBJECT(vdev)),
               vdev->vbasedev.name, error_get_pretty(why));
    error_free(why);
    if (!migrate_add_blocker(vdev->migration_blocker, errp)) {
        error_free(vdev->migration_blocker);
        vdev->migration_blocker = NULL;
        return false;
    }
    return true;
}

bool vfio_pci_realize_device(VFIOPCIDevice *vdev, Error **errp)
{
    if (!vfio_pci_realize_common(vdev, errp)) {
        vfio_pci_teardown(vdev);
        return false;
    }
    if (!vfio_pci_migration_init(vdev, errp)) {
        vfio_pci_teardown(vdev);
        return false;
    }
    trace_vfio_pci_realize(vdev->vbasedev.name);
    return true;
}

static void vfio_pci_exit(PCIDevice *pdev)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);

    if (vdev->migration_blocker) {
        migrate_del_blocker(vdev->migration_blocker);
        g_clear_pointer(&vdev->migration_blocker, error_free);
    }
    g_clear_pointer(&vdev->migration, vfio_migration_free);
    vfio_pci_teardown(vdev);
}

static void vfio_pci_reset(PCIDevice *pdev)
{
    VFIOPCIDevice *vdev = VFIO_PCI(pdev);
    Error *err = NULL;

    if (!vdev->realized) {
        return;
    }
    trace_vfio_pci_reset(vdev->vbasedev.name);
    /* The PCI core reset MSI/MSI-X already: follow in the backend. */
    vfio_pci_update_irqs(vdev);
    vfio_intx_disable(vdev);
    if (!vdev->vbasedev.broken &&
        (vdev->vbasedev.flags & VFIO_DEVICE_FLAGS_RESET) &&
        !vfio_device_reset(&vdev->vbasedev, &err)) {
        warn_report_err(err);
        err = NULL;
        vfio_pci_check_broken(vdev);
    }
    if (!vdev->vbasedev.broken && !vfio_intx_enable(vdev, &err)) {
        warn_report_err(err);
        vfio_pci_check_broken(vdev);
    }
}

static void vfio_pci_instance_init(Object *obj)
{
    VFIOPCIDevice *vdev = VFIO_PCI(obj);

    vdev->vbasedev.fd = -1;
    /* Teardown closes what a failed realize may not have reached. */
    for (int i = 0; i < PCI_ROM_SLOT; i++) {
        vdev->bars[i].region.mmap_fd = -1;
    }
}

static void vfio_pci_instance_finalize(Object *obj)
{
    VFIOPCIDevice *vdev = VFIO_PCI(obj);
    int i;

    /* Only once the PCI core has unmapped the BARs (unrealize). */
    if (PCI_DEVICE(vdev)->bus) {
        return;
    }
    for (i = 0; i < PCI_ROM_SLOT; i++) {
        vfio_bar_teardown(&vdev->bars[i]);
    }
    if (vdev->rom_size) {
        memory_region_finalize(&vdev->rom);
        vdev->rom_size = 0;
    }
    g_clear_pointer(&vdev->rom_data, g_free);
    g_clear_pointer(&vdev->msix.decision, g_free);
    g_clear_pointer(&vdev->vbasedev.name, g_free);
}

/* ---- types ---- */

static const Property vfio_pci_common_props[] = {
    DEFINE_PROP_BOOL("x-no-mmap", VFIOPCIDevice, no_mmap, false,
                     .description = "trap every BAR access (no mmap)"),
    DEFINE_PROP_ON_OFF_AUTO("x-msix-mappable", VFIOPCIDevice,
                            msix_mappable_prop, ON_OFF_AUTO_AUTO,
                            .description = "map the whole BAR holding the "
                                           "MSI-X table when the region "
                                           "advertises MSIX_MAPPABLE"),
    DEFINE_PROP_BOOL("x-lazy-pba", VFIOPCIDevice, lazy_pba, true,
                     .description = "show the emulated PBA only while a "
                                    "vector is pending"),
    DEFINE_PROP_SIZE("x-host-page-size", VFIOPCIDevice, page_size_override,
                     0, .description = "plan BAR mappings for this larger "
                                       "host page size (e.g. 64k)"),
    DEFINE_PROP_ENUM("x-msix-relocation", VFIOPCIDevice, msix_relocation,
                     VFIO_MSIX_RELOCATION_WHERE_HELPFUL,
                     vfio_msix_relocation_names,
                     .description = "move the emulated MSI-X table and PBA "
                                    "to another BAR: where-helpful (only "
                                    "if that untraps a mappable page), "
                                    "off, auto, bar0..bar5"),
    DEFINE_PROP_ON_OFF_AUTO("x-coalesce-trapped-writes", VFIOPCIDevice,
                            coalesce_prop, ON_OFF_AUTO_AUTO,
                            .description = "let KVM complete writes to "
                                           "registers on a trapped page "
                                           "without an exit (coalesced "
                                           "MMIO); MSI-X stays exact"),
    DEFINE_PROP_ON_OFF_AUTO("enable-migration", VFIOPCIDevice,
                            enable_migration, ON_OFF_AUTO_AUTO),
    DEFINE_PROP_INT32("bootindex", VFIOPCIDevice, bootindex, -1,
                      .description = "boot order (accepted for "
                                     "compatibility)"),
    DEFINE_PROP_END_OF_LIST(),
};

static void vfio_pci_base_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(klass);

    device_class_set_props(dc, vfio_pci_common_props);
    pc->exit = vfio_pci_exit;
    pc->reset = vfio_pci_reset;
    pc->config_read = vfio_pci_read_config;
    pc->config_write = vfio_pci_write_config;
}

static const TypeInfo vfio_pci_types[] = {
    {
        .name = TYPE_VFIO_PCI_BASE,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(VFIOPCIDevice),
        .instance_init = vfio_pci_instance_init,
        .instance_finalize = vfio_pci_instance_finalize,
        .class_init = vfio_pci_base_class_init,
        .abstract = true,
    },
};

DEFINE_TYPES(vfio_pci_types)
