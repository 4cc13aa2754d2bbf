/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MSI capability emulation (PCI 3.0 6.8.1).
 *
 * Layout depends on two choices made at init: 64-bit addressing moves the
 * data register by 4 bytes, and per-vector masking appends mask and
 * pending registers.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "system/memory.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "trace.h"

#define MSI_MAX_VECTORS 32
#define MSI_FLAGS_QSIZE_SHIFT 4
#define MSI_FLAGS_QMASK_SHIFT 1

static uint16_t msi_flags(const PCIDevice *dev)
{
    return pci_get_word(dev->config + dev->msi_cap + PCI_MSI_FLAGS);
}

static bool msi_is_64bit(uint16_t flags)
{
    return flags & PCI_MSI_FLAGS_64BIT;
}

static bool msi_has_mask(uint16_t flags)
{
    return flags & PCI_MSI_FLAGS_MASKBIT;
}

static uint32_t msi_data_off(uint16_t flags)
{
    return msi_is_64bit(flags) ? PCI_MSI_DATA_64 : PCI_MSI_DATA_32;
}

static uint32_t msi_mask_off(uint16_t flags)
{
    return msi_is_64bit(flags) ? PCI_MSI_MASK_64 : PCI_MSI_MASK_32;
}

static uint32_t msi_pending_off(uint16_t flags)
{
    return msi_is_64bit(flags) ? PCI_MSI_PENDING_64 : PCI_MSI_PENDING_32;
}

static uint8_t msi_cap_size(uint16_t flags)
{
    if (msi_has_mask(flags)) {
        return msi_is_64bit(flags) ? 0x18 : 0x14;
    }
    return msi_is_64bit(flags) ? 0x0e : 0x0a;
}

static unsigned int msi_nr_vectors_capable(uint16_t flags)
{
    return 1u << ((flags & PCI_MSI_FLAGS_QMASK) >> MSI_FLAGS_QMASK_SHIFT);
}

bool msi_enabled(const PCIDevice *dev)
{
    return (dev->cap_present & QEMU_PCI_CAP_MSI) &&
           (msi_flags(dev) & PCI_MSI_FLAGS_ENABLE);
}

unsigned int msi_nr_vectors_allocated(const PCIDevice *dev)
{
    if (!msi_enabled(dev)) {
        return 0;
    }
    return 1u << ((msi_flags(dev) & PCI_MSI_FLAGS_QSIZE) >>
                  MSI_FLAGS_QSIZE_SHIFT);
}

int msi_init(PCIDevice *dev, uint8_t offset, unsigned int nr_vectors,
             bool msi64bit, bool msi_per_vector_mask, Error **errp)
{
    uint16_t flags = 0;
    uint8_t *cap, *wmask;
    int ret;

    if (nr_vectors < 1 || nr_vectors > MSI_MAX_VECTORS ||
        !is_power_of_2(nr_vectors)) {
        error_setg(errp, "%s: MSI vector count %u is not a power of two "
                   "in 1..%u", dev->name, nr_vectors, MSI_MAX_VECTORS);
        return -EINVAL;
    }
    flags |= (__builtin_ctz(nr_vectors) << MSI_FLAGS_QMASK_SHIFT) &
             PCI_MSI_FLAGS_QMASK;
    if (msi64bit) {
        flags |= PCI_MSI_FLAGS_64BIT;
    }
    if (msi_per_vector_mask) {
        flags |= PCI_MSI_FLAGS_MASKBIT;
    }
    ret = pci_add_capability(dev, PCI_CAP_ID_MSI, offset, msi_cap_size(flags),
                             errp);
    if (ret < 0) {
        return ret;
    }
    dev->msi_cap = ret;
    dev->cap_present |= QEMU_PCI_CAP_MSI;
    cap = dev->config + dev->msi_cap;
    wmask = dev->wmask + dev->msi_cap;
    pci_set_word(cap + PCI_MSI_FLAGS, flags);

    pci_set_word(wmask + PCI_MSI_FLAGS,
                 PCI_MSI_FLAGS_QSIZE | PCI_MSI_FLAGS_ENABLE);
    pci_set_long(wmask + PCI_MSI_ADDRESS_LO, 0xfffffffc);
    if (msi64bit) {
        pci_set_long(wmask + PCI_MSI_ADDRESS_HI, 0xffffffff);
    }
    pci_set_word(wmask + msi_data_off(flags), 0xffff);
    if (msi_per_vector_mask) {
        pci_set_long(wmask + msi_mask_off(flags),
                     nr_vectors == 32 ? 0xffffffff : (1u << nr_vectors) - 1);
    }
    return dev->msi_cap;
}

void msi_uninit(PCIDevice *dev)
{
    if (!(dev->cap_present & QEMU_PCI_CAP_MSI)) {
        return;
    }
    pci_del_capability(dev, PCI_CAP_ID_MSI, msi_cap_size(msi_flags(dev)));
    dev->cap_present &= ~QEMU_PCI_CAP_MSI;
    dev->msi_cap = 0;
}

void msi_reset(PCIDevice *dev)
{
    uint16_t flags;
    uint8_t *cap;

    if (!(dev->cap_present & QEMU_PCI_CAP_MSI)) {
        return;
    }
    cap = dev->config + dev->msi_cap;
    flags = msi_flags(dev);
    pci_set_word(cap + PCI_MSI_FLAGS,
                 flags & ~(PCI_MSI_FLAGS_QSIZE | PCI_MSI_FLAGS_ENABLE));
    pci_set_long(cap + PCI_MSI_ADDRESS_LO, 0);
    if (msi_is_64bit(flags)) {
        pci_set_long(cap + PCI_MSI_ADDRESS_HI, 0);
    }
    pci_set_word(cap + msi_data_off(flags), 0);
    if (msi_has_mask(flags)) {
        pci_set_long(cap + msi_mask_off(flags), 0);
        pci_set_long(cap + msi_pending_off(flags), 0);
    }
}

bool msi_is_masked(const PCIDevice *dev, unsigned int vector)
{
    uint16_t flags = msi_flags(dev);

    if (!msi_has_mask(flags)) {
        return false;
    }
    return pci_get_long(dev->config + dev->msi_cap + msi_mask_off(flags)) &
           (1u << vector);
}

MSIMessage msi_get_message(PCIDevice *dev, unsigned int vector)
{
    uint16_t flags = msi_flags(dev);
    uint8_t *cap = dev->config + dev->msi_cap;
    unsigned int nr = msi_nr_vectors_allocated(dev);
    MSIMessage msg;

    msg.address = pci_get_long(cap + PCI_MSI_ADDRESS_LO);
    if (msi_is_64bit(flags)) {
        msg.address |= (uint64_t)pci_get_long(cap + PCI_MSI_ADDRESS_HI) << 32;
    }
    msg.data = pci_get_word(cap + msi_data_off(flags));
    /* With multiple messages the vector number replaces the low bits. */
    if (nr > 1) {
        msg.data = (msg.data & ~(nr - 1)) | (vector & (nr - 1));
    }
    return msg;
}

void msi_send_message(PCIDevice *dev, MSIMessage msg)
{
    MemTxResult res;

    address_space_stl_le(pci_get_address_space(dev), msg.address, msg.data,
                         &res);
}

void msi_notify(PCIDevice *dev, unsigned int vector)
{
    uint16_t flags;
    MSIMessage msg;

    if (!msi_enabled(dev) || vector >= msi_nr_vectors_allocated(dev)) {
        return;
    }
    flags = msi_flags(dev);
    if (msi_is_masked(dev, vector)) {
        uint8_t *pending = dev->config + dev->msi_cap + msi_pending_off(flags);

        pci_set_long(pending, pci_get_long(pending) | (1u << vector));
        trace_msi_set_pending(dev->name, vector);
        return;
    }
    msg = msi_get_message(dev, vector);
    trace_msi_notify(dev->name, vector, msg.address, msg.data);
    msi_send_message(dev, msg);
}

void msi_write_config(PCIDevice *dev, uint32_t addr, uint32_t val, int len)
{
    uint16_t flags;
    uint8_t *cap;
    unsigned int qmask, nr, v;
    uint32_t pending;

    if (!(dev->cap_present & QEMU_PCI_CAP_MSI)) {
        return;
    }
    flags = msi_flags(dev);
    if (addr + len <= dev->msi_cap || addr >= dev->msi_cap + msi_cap_size(flags)) {
        return;
    }
    cap = dev->config + dev->msi_cap;
    /* A guest asking for more vectors than offered gets what is offered. */
    qmask = (flags & PCI_MSI_FLAGS_QMASK) >> MSI_FLAGS_QMASK_SHIFT;
    if (((flags & PCI_MSI_FLAGS_QSIZE) >> MSI_FLAGS_QSIZE_SHIFT) > qmask) {
        flags = (flags & ~PCI_MSI_FLAGS_QSIZE) |
                (qmask << MSI_FLAGS_QSIZE_SHIFT);
        pci_set_word(cap + PCI_MSI_FLAGS, flags);
    }
    if (!msi_enabled(dev) || !msi_has_mask(flags)) {
        return;
    }
    /* Deliver what became unmasked while pending. */
    nr = msi_nr_vectors_allocated(dev);
    pending = pci_get_long(cap + msi_pending_off(flags));
    for (v = 0; v < nr && v < msi_nr_vectors_capable(flags); v++) {
        if ((pending & (1u << v)) && !msi_is_masked(dev, v)) {
            pending &= ~(1u << v);
            pci_set_long(cap + msi_pending_off(flags), pending);
            msi_notify(dev, v);
        }
    }
}
