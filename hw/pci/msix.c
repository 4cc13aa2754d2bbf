/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MSI-X emulation: capability, vector table, pending bit array, vector
 * notifiers and lazy PBA.  The rules are in include/hw/pci/msix.h.
 *
 * The table and the PBA are plain byte arrays in the guest's layout
 * (little-endian); the MemoryRegions only expose them.  Everything that
 * changes whether a vector can deliver funnels into
 * msix_handle_mask_update(), which fires the notifiers and delivers a
 * pending vector.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "trace.h"

#define MSIX_CAP_LENGTH 12
#define MSIX_MAX_ENTRIES (PCI_MSIX_FLAGS_QSIZE + 1)
/* High byte of Message Control: enable and function mask. */
#define MSIX_CONTROL_OFFSET (PCI_MSIX_FLAGS + 1)
#define MSIX_ENABLE_MASK (PCI_MSIX_FLAGS_ENABLE >> 8)
#define MSIX_MASKALL_MASK (PCI_MSIX_FLAGS_MASKALL >> 8)

static uint8_t *msix_entry(PCIDevice *dev, unsigned int vector)
{
    return dev->msix_table + vector * PCI_MSIX_ENTRY_SIZE;
}

bool msix_present(const PCIDevice *dev)
{
    return dev->cap_present & QEMU_PCI_CAP_MSIX;
}

bool msix_enabled(const PCIDevice *dev)
{
    return msix_present(dev) &&
           (dev->config[dev->msix_cap + MSIX_CONTROL_OFFSET] &
            MSIX_ENABLE_MASK);
}

static bool msix_compute_function_masked(PCIDevice *dev)
{
    return !msix_enabled(dev) ||
           (dev->config[dev->msix_cap + MSIX_CONTROL_OFFSET] &
            MSIX_MASKALL_MASK);
}

bool msix_function_masked(const PCIDevice *dev)
{
    return dev->msix_function_masked;
}

unsigned int msix_nr_vectors(const PCIDevice *dev)
{
    return msix_present(dev) ? dev->msix_entries_nr : 0;
}

static bool msix_vector_valid(const PCIDevice *dev, unsigned int vector)
{
    return msix_present(dev) && vector < dev->msix_entries_nr;
}

bool msix_vector_masked(PCIDevice *dev, unsigned int vector)
{
    if (!msix_vector_valid(dev, vector)) {
        return true;
    }
    return ldl_le_p(msix_entry(dev, vector) + PCI_MSIX_ENTRY_VECTOR_CTRL) &
           PCI_MSIX_ENTRY_CTRL_MASKBIT;
}

static bool msix_is_masked_with(PCIDevice *dev, unsigned int vector,
                                bool function_masked)
{
    return function_masked || msix_vector_masked(dev, vector);
}

bool msix_is_masked(PCIDevice *dev, unsigned int vector)
{
    return msix_is_masked_with(dev, vector, dev->msix_function_masked);
}

MSIMessage msix_get_message(PCIDevice *dev, unsigned int vector)
{
    MSIMessage msg = { 0 };
    uint8_t *e;

    if (!msix_vector_valid(dev, vector)) {
        return msg;
    }
    e = msix_entry(dev, vector);
    msg.address = ldq_le_p(e + PCI_MSIX_ENTRY_LOWER_ADDR);
    msg.data = ldl_le_p(e + PCI_MSIX_ENTRY_DATA);
    return msg;
}

/* ---- pending bits and lazy PBA ---- */

static bool msix_any_pending(PCIDevice *dev)
{
    uint32_t i, n = msix_pba_size(dev->msix_entries_nr);

    for (i = 0; i < n; i++) {
        if (dev->msix_pba[i]) {
            return true;
        }
    }
    return false;
}

static void msix_update_pba_region(PCIDevice *dev)
{
    bool enable = !dev->msix_pba_lazy || msix_any_pending(dev);

    if (memory_region_is_enabled(&dev->msix_pba_mmio) != enable) {
        trace_msix_pba_region_enable(dev->name, enable);
        memory_region_set_enabled(&dev->msix_pba_mmio, enable);
        if (dev->msix_pba_notifier) {
            dev->msix_pba_notifier(dev, enable);
        }
    }
}

bool msix_is_pending(PCIDevice *dev, unsigned int vector)
{
    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return false;
    }
    return dev->msix_pba[vector / 8] & (1u << (vector % 8));
}

void msix_set_pending(PCIDevice *dev, unsigned int vector)
{
    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return;
    }
    trace_msix_set_pending(dev->name, vector);
    dev->msix_pba[vector / 8] |= 1u << (vector % 8);
    if (dev->msix_pba_lazy) {
        msix_update_pba_region(dev);
    }
}

void msix_clr_pending(PCIDevice *dev, unsigned int vector)
{
    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return;
    }
    trace_msix_clr_pending(dev->name, vector);
    dev->msix_pba[vector / 8] &= ~(1u << (vector % 8));
    if (dev->msix_pba_lazy) {
        msix_update_pba_region(dev);
    }
}

void msix_set_lazy_pba(PCIDevice *dev, bool lazy)
{
    if (!msix_present(dev)) {
        return;
    }
    dev->msix_pba_lazy = lazy;
    msix_update_pba_region(dev);
}

bool msix_pba_enabled(PCIDevice *dev)
{
    return msix_present(dev) && memory_region_is_enabled(&dev->msix_pba_mmio);
}

void msix_set_pba_notifier(PCIDevice *dev, MSIXPbaNotifier notifier)
{
    if (!msix_present(dev)) {
        return;
    }
    dev->msix_pba_notifier = notifier;
    if (notifier) {
        notifier(dev, msix_pba_enabled(dev));
    }
}

void msix_set_table_emulated(PCIDevice *dev, bool emulated)
{
    if (!msix_present(dev)) {
        return;
    }
    memory_region_set_enabled(&dev->msix_table_mmio, emulated);
}

MemoryRegion *msix_table_region(PCIDevice *dev)
{
    return msix_present(dev) ? &dev->msix_table_mmio : NULL;
}

MemoryRegion *msix_pba_region(PCIDevice *dev)
{
    return msix_present(dev) ? &dev->msix_pba_mmio : NULL;
}

/* ---- delivery and notifiers ---- */

void msix_notify(PCIDevice *dev, unsigned int vector)
{
    MSIMessage msg;

    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return;
    }
    /* A function with MSI-X disabled signals nothing, not even pending. */
    if (!msix_enabled(dev)) {
        return;
    }
    if (msix_is_masked(dev, vector)) {
        msix_set_pending(dev, vector);
        return;
    }
    msg = msix_get_message(dev, vector);
    trace_msix_notify(dev->name, vector, msg.address, msg.data);
    msi_send_message(dev, msg);
}

static void msix_vector_use(PCIDevice *dev, unsigned int vector)
{
    int ret;

    if (!dev->msix_vector_use_notifier) {
        return;
    }
    ret = dev->msix_vector_use_notifier(dev, vector,
                                        msix_get_message(dev, vector));
    trace_msix_vector_use(dev->name, vector, ret);
    dev->msix_vector_armed[vector] = ret >= 0;
}

static void msix_vector_release(PCIDevice *dev, unsigned int vector)
{
    if (!dev->msix_vector_release_notifier ||
        !dev->msix_vector_armed[vector]) {
        return;
    }
    dev->msix_vector_armed[vector] = false;
    trace_msix_vector_release(dev->name, vector);
    dev->msix_vector_release_notifier(dev, vector);
}

/* was_masked: whether the vector could not deliver before the change. */
static void msix_handle_mask_update(PCIDevice *dev, unsigned int vector,
                                    bool was_masked)
{
    bool is_masked = msix_is_masked(dev, vector);

    if (is_masked == was_masked) {
        return;
    }
    trace_msix_mask_update(dev->name, vector, is_masked);
    if (is_masked) {
        msix_vector_release(dev, vector);
        return;
    }
    msix_vector_use(dev, vector);
    if (msix_is_pending(dev, vector)) {
        msix_clr_pending(dev, vector);
        msix_notify(dev, vector);
    }
}

/* After the message of a deliverable vector changed. */
static void msix_handle_message_update(PCIDevice *dev, unsigned int vector,
                                       MSIMessage old)
{
    MSIMessage msg = msix_get_message(dev, vector);

    if (msix_is_masked(dev, vector) ||
        (msg.address == old.address && msg.data == old.data)) {
        return;
    }
    msix_vector_use(dev, vector);
}

int msix_set_vector_notifiers(PCIDevice *dev,
                              MSIVectorUseNotifier use_notifier,
                              MSIVectorReleaseNotifier release_notifier,
                              MSIVectorPollNotifier poll_notifier)
{
    unsigned int v;
    int ret;

    assert(use_notifier && release_notifier);
    if (!msix_present(dev)) {
        return -ENOTSUP;
    }
    dev->msix_vector_use_notifier = use_notifier;
    dev->msix_vector_release_notifier = release_notifier;
    dev->msix_vector_poll_notifier = poll_notifier;

    for (v = 0; v < dev->msix_entries_nr; v++) {
        if (msix_is_masked(dev, v)) {
            continue;
        }
        ret = use_notifier(dev, v, msix_get_message(dev, v));
        trace_msix_vector_use(dev->name, v, ret);
        if (ret < 0) {
            /* Leave things as they were: no notifiers, nothing in use. */
            msix_unset_vector_notifiers(dev);
            return ret;
        }
        dev->msix_vector_armed[v] = true;
    }
    if (poll_notifier && !dev->msix_function_masked) {
        poll_notifier(dev, 0, dev->msix_entries_nr);
    }
    return 0;
}

void msix_unset_vector_notifiers(PCIDevice *dev)
{
    unsigned int v;

    if (!msix_present(dev) || !dev->msix_vector_use_notifier) {
        return;
    }
    for (v = 0; v < dev->msix_entries_nr; v++) {
        msix_vector_release(dev, v);
    }
    dev->msix_vector_use_notifier = NULL;
    dev->msix_vector_release_notifier = NULL;
    dev->msix_vector_poll_notifier = NULL;
}

/* ---- capability ---- */

void msix_write_config(PCIDevice *dev, uint32_t addr, uint32_t val, int len)
{
    bool was_function_masked;
    unsigned int v;

    if (!msix_present(dev) ||
        addr + len <= dev->msix_cap + MSIX_CONTROL_OFFSET ||
        addr > dev->msix_cap + MSIX_CONTROL_OFFSET) {
        return;
    }
    was_function_masked = dev->msix_function_masked;
    dev->msix_function_masked = msix_compute_function_masked(dev);
    if (was_function_masked == dev->msix_function_masked) {
        return;
    }
    trace_msix_function_mask_update(dev->name, msix_enabled(dev),
                                    dev->msix_function_masked);
    for (v = 0; v < dev->msix_entries_nr; v++) {
        msix_handle_mask_update(dev, v,
                                msix_is_masked_with(dev, v,
                                                    was_function_masked));
    }
}

void msix_set_message(PCIDevice *dev, unsigned int vector, MSIMessage msg)
{
    uint8_t *e;
    bool was_masked;
    MSIMessage old;

    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return;
    }
    e = msix_entry(dev, vector);
    was_masked = msix_is_masked(dev, vector);
    old = msix_get_message(dev, vector);
    stq_le_p(e + PCI_MSIX_ENTRY_LOWER_ADDR, msg.address);
    stl_le_p(e + PCI_MSIX_ENTRY_DATA, msg.data);
    stl_le_p(e + PCI_MSIX_ENTRY_VECTOR_CTRL,
             ldl_le_p(e + PCI_MSIX_ENTRY_VECTOR_CTRL) &
             ~PCI_MSIX_ENTRY_CTRL_MASKBIT);
    if (was_masked) {
        msix_handle_mask_update(dev, vector, was_masked);
    } else {
        msix_handle_message_update(dev, vector, old);
    }
}

void msix_clear_message(PCIDevice *dev, unsigned int vector)
{
    uint8_t *e;
    bool was_masked;

    if (!msix_present(dev) || vector >= dev->msix_entries_nr) {
        return;
    }
    e = msix_entry(dev, vector);
    was_masked = msix_is_masked(dev, vector);
    /* Masked first, so no half-cleared message is ever deliverable. */
    stl_le_p(e + PCI_MSIX_ENTRY_VECTOR_CTRL,
             ldl_le_p(e + PCI_MSIX_ENTRY_VECTOR_CTRL) |
             PCI_MSIX_ENTRY_CTRL_MASKBIT);
    if (!was_masked) {
        msix_handle_mask_update(dev, vector, was_masked);
    }
    stq_le_p(e + PCI_MSIX_ENTRY_LOWER_ADDR, 0);
    stl_le_p(e + PCI_MSIX_ENTRY_DATA, 0);
}

/* ---- table and PBA regions ---- */

/*
 * The memory API enforces 4/8-byte aligned accesses; the checks here keep
 * the arrays safe even if a caller dispatches directly.
 */
static bool msix_access_ok(hwaddr addr, unsigned size, uint32_t limit)
{
    return (size == 4 || size == 8) && !(addr & (size - 1)) &&
           addr < limit && limit - addr >= size;
}

static uint64_t msix_table_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    PCIDevice *dev = opaque;
    uint64_t val;

    if (!msix_access_ok(addr, size, msix_table_size(dev->msix_entries_nr))) {
        qemu_log_guest_error("%s: bad MSI-X table read at 0x%" HWADDR_PRIx
                             " size %u\n", dev->name, addr, size);
        return ~0ULL;
    }
    val = ldn_le_p(dev->msix_table + addr, size);
    trace_msix_table_read(dev->name, addr, val, size);
    return val;
}

static void msix_table_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    PCIDevice *dev = opaque;
    unsigned int vector = addr / PCI_MSIX_ENTRY_SIZE;
    uint8_t *ctrl;
    bool was_masked;
    MSIMessage old;

    if (!msix_access_ok(addr, size, msix_table_size(dev->msix_entries_nr))) {
        qemu_log_guest_error("%s: bad MSI-X table write at 0x%" HWADDR_PRIx
                             " size %u\n", dev->name, addr, size);
        return;
    }
    trace_msix_table_write(dev->name, addr, val, size);
    was_masked = msix_is_masked(dev, vector);
    old = msix_get_message(dev, vector);
    stn_le_p(dev->msix_table + addr, size, val);
    /* Reserved vector control bits read as zero. */
    ctrl = msix_entry(dev, vector) + PCI_MSIX_ENTRY_VECTOR_CTRL;
    stl_le_p(ctrl, ldl_le_p(ctrl) & PCI_MSIX_ENTRY_CTRL_MASKBIT);

    if (msix_is_masked(dev, vector) != was_masked) {
        msix_handle_mask_update(dev, vector, was_masked);
    } else {
        msix_handle_message_update(dev, vector, old);
    }
}

static uint64_t msix_pba_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    PCIDevice *dev = opaque;
    uint64_t val;

    if (!msix_access_ok(addr, size, msix_pba_size(dev->msix_entries_nr))) {
        qemu_log_guest_error("%s: bad MSI-X PBA read at 0x%" HWADDR_PRIx
                             " size %u\n", dev->name, addr, size);
        return ~0ULL;
    }
    if (dev->msix_vector_poll_notifier) {
        unsigned int start = addr * 8;
        unsigned int end = MIN((addr + size) * 8, dev->msix_entries_nr);

        if (start < end) {
            dev->msix_vector_poll_notifier(dev, start, end);
        }
    }
    val = ldn_le_p(dev->msix_pba + addr, size);
    trace_msix_pba_read(dev->name, addr, val, size);
    return val;
}

static void msix_pba_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    PCIDevice *dev = opaque;

    qemu_log_guest_error("%s: write to the MSI-X PBA at 0x%" HWADDR_PRIx
                         " ignored (size %u)\n", dev->name, addr, size);
}

static const MemoryRegionOps msix_table_mmio_ops = {
    .read = msix_table_mmio_read,
    .write = msix_table_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

static const MemoryRegionOps msix_pba_mmio_ops = {
    .read = msix_pba_mmio_read,
    .write = msix_pba_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

static void msix_mask_all(PCIDevice *dev)
{
    unsigned int v;

    for (v = 0; v < dev->msix_entries_nr; v++) {
        stl_le_p(msix_entry(dev, v) + PCI_MSIX_ENTRY_VECTOR_CTRL,
                 PCI_MSIX_ENTRY_CTRL_MASKBIT);
    }
}

int msix_init(PCIDevice *dev, unsigned short nentries,
              MemoryRegion *table_bar, uint8_t table_bar_nr,
              uint32_t table_offset, MemoryRegion *pba_bar,
              uint8_t pba_bar_nr, uint32_t pba_offset, uint8_t cap_pos,
              Error **errp)
{
    uint32_t table_size = msix_table_size(nentries);
    uint32_t pba_size = msix_pba_size(nentries);
    uint8_t *cap;
    int ret;

    if (nentries < 1 || nentries > MSIX_MAX_ENTRIES) {
        error_setg(errp, "%s: MSI-X vector count %u out of range 1..%u",
                   dev->name, nentries, MSIX_MAX_ENTRIES);
        return -EINVAL;
    }
    if (table_bar_nr >= PCI_ROM_SLOT || pba_bar_nr >= PCI_ROM_SLOT) {
        error_setg(errp, "%s: MSI-X table/PBA BAR index out of range",
                   dev->name);
        return -EINVAL;
    }
    if ((table_offset & PCI_MSIX_TABLE_BIR) || (pba_offset & PCI_MSIX_PBA_BIR)) {
        error_setg(errp, "%s: MSI-X table offset 0x%x or PBA offset 0x%x "
                   "is not 8-byte aligned", dev->name, table_offset,
                   pba_offset);
        return -EINVAL;
    }
    if ((uint64_t)table_offset + table_size > memory_region_size(table_bar) ||
        (uint64_t)pba_offset + pba_size > memory_region_size(pba_bar)) {
        error_setg(errp, "%s: MSI-X table or PBA does not fit in its BAR",
                   dev->name);
        return -EINVAL;
    }
    if (table_bar == pba_bar &&
        (uint64_t)table_offset < (uint64_t)pba_offset + pba_size &&
        (uint64_t)pba_offset < (uint64_t)table_offset + table_size) {
        error_setg(errp, "%s: MSI-X table [0x%x, 0x%x) and PBA [0x%x, 0x%x) "
                   "overlap", dev->name, table_offset,
                   table_offset + table_size, pba_offset,
                   pba_offset + pba_size);
        return -EINVAL;
    }

    ret = pci_add_capability(dev, PCI_CAP_ID_MSIX, cap_pos, MSIX_CAP_LENGTH,
                             errp);
    if (ret < 0) {
        return ret;
    }
    dev->msix_cap = ret;
    cap = dev->config + dev->msix_cap;
    pci_set_word(cap + PCI_MSIX_FLAGS, nentries - 1);
    pci_set_long(cap + PCI_MSIX_TABLE, table_offset | table_bar_nr);
    pci_set_long(cap + PCI_MSIX_PBA, pba_offset | pba_bar_nr);
    /* Only enable and function mask are the guest's to change. */
    dev->wmask[dev->msix_cap + MSIX_CONTROL_OFFSET] |=
        MSIX_ENABLE_MASK | MSIX_MASKALL_MASK;

    dev->msix_entries_nr = nentries;
    dev->msix_table = g_malloc0(table_size);
    dev->msix_pba = g_malloc0(pba_size);
    dev->msix_vector_armed = g_new0(bool, nentries);
    dev->msix_function_masked = true;
    dev->msix_pba_lazy = false;
    dev->msix_table_bar = table_bar;
    dev->msix_pba_bar = pba_bar;
    msix_mask_all(dev);

    memory_region_init_io(&dev->msix_table_mmio, OBJECT(dev),
                          &msix_table_mmio_ops, dev, "msix-table",
                          table_size);
    memory_region_init_io(&dev->msix_pba_mmio, OBJECT(dev),
                          &msix_pba_mmio_ops, dev, "msix-pba", pba_size);
    memory_region_transaction_begin();
    memory_region_add_subregion_overlap(table_bar, table_offset,
                                        &dev->msix_table_mmio, 1);
    memory_region_add_subregion_overlap(pba_bar, pba_offset,
                                        &dev->msix_pba_mmio, 1);
    memory_region_transaction_commit();
    dev->cap_present |= QEMU_PCI_CAP_MSIX;
    trace_msix_init(dev->name, nentries, table_bar_nr, table_offset,
                    pba_bar_nr, pba_offset);
    return 0;
}

void msix_uninit(PCIDevice *dev, MemoryRegion *table_bar,
                 MemoryRegion *pba_bar)
{
    if (!msix_present(dev)) {
        return;
    }
    msix_unset_vector_notifiers(dev);
    dev->msix_pba_notifier = NULL;
    memory_region_transaction_begin();
    memory_region_del_subregion(dev->msix_table_bar, &dev->msix_table_mmio);
    memory_region_del_subregion(dev->msix_pba_bar, &dev->msix_pba_mmio);
    memory_region_transaction_commit();
    memory_region_finalize(&dev->msix_table_mmio);
    memory_region_finalize(&dev->msix_pba_mmio);
    pci_del_capability(dev, PCI_CAP_ID_MSIX, MSIX_CAP_LENGTH);
    g_clear_pointer(&dev->msix_table, g_free);
    g_clear_pointer(&dev->msix_pba, g_free);
    g_clear_pointer(&dev->msix_vector_armed, g_free);
    dev->msix_entries_nr = 0;
    dev->msix_cap = 0;
    dev->msix_table_bar = NULL;
    dev->msix_pba_bar = NULL;
    dev->cap_present &= ~QEMU_PCI_CAP_MSIX;
}

void msix_reset(PCIDevice *dev)
{
    unsigned int v;

    if (!msix_present(dev)) {
        return;
    }
    for (v = 0; v < dev->msix_entries_nr; v++) {
        msix_vector_release(dev, v);
    }
    dev->config[dev->msix_cap + MSIX_CONTROL_OFFSET] &=
        ~(MSIX_ENABLE_MASK | MSIX_MASKALL_MASK);
    dev->msix_function_masked = true;
    memset(dev->msix_table, 0, msix_table_size(dev->msix_entries_nr));
    memset(dev->msix_pba, 0, msix_pba_size(dev->msix_entries_nr));
    msix_mask_all(dev);
    msix_update_pba_region(dev);
}
