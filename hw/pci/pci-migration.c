/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A PCI function's migration state: its configuration space, the INTx
 * level, and the MSI-X table and PBA.  Every PCI device has it (the
 * default DeviceClass.vmsd); a device with more state nests it first
 * (VMSTATE_STRUCT(parent_obj, ..., vmstate_pci_device, PCIDevice)).
 *
 * Loading trusts the destination's own device for what is not the
 * guest's to change: identity registers must match, read-only bits stay
 * the destination's, and only writable and write-1-to-clear bits come
 * from the stream.  The space is then replayed through the device's own
 * config_write (write-1-to-clear bits masked off, so nothing is cleared),
 * which re-creates what a guest's writes created: BAR mappings, bus
 * mastering, INTx disable, MSI and MSI-X enables (with their vector
 * notifiers, i.e. irqfds) and device-specific effects.  The MSI-X table
 * and PBA are loaded before the replay so that enabling finds them.
 */
#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "qapi/error.h"

/* Staging for what is not a plain field of PCIDevice. */
typedef struct PCIMigState {
    uint8_t config[PCIE_CONFIG_SPACE_SIZE];
    uint32_t config_size;
    uint8_t table[2048 * 16];
    uint8_t pba[2048 / 8];
} PCIMigState;

static PCIMigState *pci_mig_stage(void)
{
    static PCIMigState *st;

    if (!st) {
        st = g_new0(PCIMigState, 1);
    }
    return st;
}

static bool config_put(GByteArray *out, void *opaque, void *field,
                       Error **errp)
{
    PCIDevice *d = opaque;

    mig_put_u32(out, d->config_size);
    mig_put_bytes(out, d->config, d->config_size);
    return true;
}

static bool config_get(MigBuf *b, void *opaque, void *field, Error **errp)
{
    PCIDevice *d = opaque;
    PCIMigState *st = pci_mig_stage();
    uint32_t size;

    if (!mig_buf_get_u32(b, &size, errp)) {
        return false;
    }
    if (size != d->config_size) {
        error_setg(errp, "%s: config space of %u bytes, this device has %u "
                   "(PCI vs PCI Express?)", d->name, size, d->config_size);
        return false;
    }
    st->config_size = size;
    return mig_buf_get(b, st->config, size, errp);
}

static const VMStateInfo pci_config_info = {
    .name = "pci-config", .put = config_put, .get = config_get,
};

static size_t pba_size(const PCIDevice *d)
{
    return DIV_ROUND_UP(d->msix_entries_nr, 64) * 8;
}

static bool msix_put(GByteArray *out, void *opaque, void *field,
                     Error **errp)
{
    PCIDevice *d = opaque;

    mig_put_u32(out, d->msix_entries_nr);
    if (d->msix_entries_nr) {
        mig_put_bytes(out, d->msix_table, d->msix_entries_nr * 16);
        mig_put_bytes(out, d->msix_pba, pba_size(d));
    }
    return true;
}

static bool msix_get(MigBuf *b, void *opaque, void *field, Error **errp)
{
    PCIDevice *d = opaque;
    PCIMigState *st = pci_mig_stage();
    uint32_t n;

    if (!mig_buf_get_u32(b, &n, errp)) {
        return false;
    }
    if (n != d->msix_entries_nr) {
        error_setg(errp, "%s: %u MSI-X vectors in the stream, this device "
                   "has %u", d->name, n, d->msix_entries_nr);
        return false;
    }
    return !n || (mig_buf_get(b, st->table, n * 16, errp) &&
                  mig_buf_get(b, st->pba, pba_size(d), errp));
}

static const VMStateInfo pci_msix_info = {
    .name = "pci-msix", .put = msix_put, .get = msix_get,
};

static bool pci_identity_matches(PCIDevice *d, const uint8_t *saved,
                                 Error **errp)
{
    static const struct { unsigned off, len; const char *what; } ids[] = {
        { PCI_VENDOR_ID, 2, "vendor ID" },
        { PCI_DEVICE_ID, 2, "device ID" },
        { PCI_CLASS_DEVICE, 2, "class" },
        { PCI_HEADER_TYPE, 1, "header type" },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
        if (memcmp(d->config + ids[i].off, saved + ids[i].off, ids[i].len)) {
            error_setg(errp, "%s: the stream's %s differs from this "
                       "device's (is it the same device at the same "
                       "address?)", d->name, ids[i].what);
            return false;
        }
    }
    return true;
}

static bool pci_post_load(void *opaque, int version_id, Error **errp)
{
    PCIDevice *d = opaque;
    PCIDeviceClass *pc = PCI_DEVICE_GET_CLASS(d);
    PCIMigState *st = pci_mig_stage();
    int level = d->irq_state;

    if (level != 0 && level != 1) {
        error_setg(errp, "%s: INTx level %d", d->name, level);
        return false;
    }
    if (!pci_identity_matches(d, st->config, errp)) {
        return false;
    }
    if (d->msix_entries_nr) {
        memcpy(d->msix_table, st->table, d->msix_entries_nr * 16);
        memcpy(d->msix_pba, st->pba, pba_size(d));
    }
    for (uint32_t i = 0; i < d->config_size; i++) {
        uint8_t guest = d->wmask[i] | d->w1cmask[i];

        d->config[i] = (d->config[i] & ~guest) | (st->config[i] & guest);
    }
    /* Replay, high to low: BARs and capabilities before COMMAND. */
    for (int addr = (int)d->config_size - 4; addr >= 4; addr -= 4) {
        uint32_t wm = pci_get_long(d->wmask + addr);
        uint32_t val = pci_get_long(d->config + addr) &
                       ~pci_get_long(d->w1cmask + addr);

        if (!wm) {
            continue;
        }
        if (pc->config_write) {
            pc->config_write(d, addr, val, 4);
        } else {
            pci_default_write_config(d, addr, val, 4);
        }
    }
    /* The replay may not have put back what the guest had cleared. */
    for (uint32_t i = 0; i < d->config_size; i++) {
        if (d->w1cmask[i]) {
            d->config[i] = (d->config[i] & ~d->w1cmask[i]) |
                           (st->config[i] & d->w1cmask[i]);
        }
    }
    d->irq_state = !level;
    pci_set_irq(d, level);
    return true;
}

static bool pci_pre_load(void *opaque, Error **errp)
{
    memset(pci_mig_stage(), 0, sizeof(PCIMigState));
    return true;
}

const VMStateDescription vmstate_pci_device = {
    .name = "pci-device",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = pci_pre_load,
    .post_load = pci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_CUSTOM("config", PCIDevice, config, pci_config_info),
        VMSTATE_INT32(irq_state, PCIDevice),
        VMSTATE_CUSTOM("msix", PCIDevice, msix_table, pci_msix_info),
        VMSTATE_END_OF_LIST()
    },
};
