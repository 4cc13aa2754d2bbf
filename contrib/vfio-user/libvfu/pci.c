/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: PCI config space (region VFIO_PCI_CONFIG_REGION_INDEX).
 *
 * A plain type 0 header: identity bytes read-only, the usual command bits
 * writable, BAR registers whose writable bits follow the BAR size (so an
 * all-ones write reads back as the size mask), and a capability list the
 * device appends to.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "libvfu-internal.h"

/* Command bits a driver may change: I/O, memory, bus master, SERR, ... */
#define VFU_PCI_COMMAND_WMASK (PCI_COMMAND_IO | PCI_COMMAND_MEMORY | \
                               PCI_COMMAND_MASTER | PCI_COMMAND_PARITY | \
                               PCI_COMMAND_SERR | PCI_COMMAND_INTX_DISABLE)

int vfu_pci_region_access(VfuCtx *ctx, void *opaque, uint32_t index,
                          uint64_t offset, void *buf, uint32_t count,
                          bool is_write)
{
    uint8_t *in = buf;

    /* The caller checked offset + count against the region size. */
    if (!is_write) {
        memcpy(buf, ctx->config + offset, count);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        uint8_t wmask = ctx->config_wmask[offset + i];
        uint8_t *b = &ctx->config[offset + i];

        *b = (*b & ~wmask) | (in[i] & wmask);
    }
    if (ctx->ops->config_write) {
        ctx->ops->config_write(ctx, ctx->opaque, offset, count);
    }
    return 0;
}

static void set_wmask32(VfuCtx *ctx, uint32_t off, uint32_t mask)
{
    stl_le_p(ctx->config_wmask + off, mask);
}

bool vfu_pci_update_bar(VfuCtx *ctx, uint32_t bar, Error **errp)
{
    const VfuRegion *r = &ctx->regions[bar];
    uint32_t off = PCI_BASE_ADDRESS_0 + bar * 4;
    uint64_t size = r->info.size;
    uint32_t flags = r->info.bar_flags;
    bool io = flags & PCI_BASE_ADDRESS_SPACE_IO;
    bool mem64 = !io && (flags & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
                        PCI_BASE_ADDRESS_MEM_TYPE_64;

    if (!r->present || !size) {
        stl_le_p(ctx->config + off, 0);
        set_wmask32(ctx, off, 0);
        return true;
    }
    if (!is_power_of_2(size) || size < (io ? 4 : 16) ||
        (!mem64 && size > (io ? 0x10000 : 0x80000000ULL))) {
        error_setg(errp, "libvfu: BAR %u size 0x%" PRIx64 " is not a valid "
                   "%s BAR size", bar, size, io ? "I/O" : "memory");
        return false;
    }
    if (flags & ~(io ? PCI_BASE_ADDRESS_SPACE_IO
                     : (PCI_BASE_ADDRESS_MEM_TYPE_MASK |
                        PCI_BASE_ADDRESS_MEM_PREFETCH)) ||
        (!io && (flags & PCI_BASE_ADDRESS_MEM_TYPE_MASK) &&
         !mem64)) {
        error_setg(errp, "libvfu: BAR %u flags 0x%x invalid", bar, flags);
        return false;
    }
    if (mem64 && (bar == VFIO_PCI_BAR5_REGION_INDEX ||
                  ctx->regions[bar + 1].present)) {
        error_setg(errp, "libvfu: 64-bit BAR %u needs BAR %u free", bar,
                   bar + 1);
        return false;
    }
    stl_le_p(ctx->config + off, flags);
    set_wmask32(ctx, off, ~(uint32_t)(size - 1) & (io ? ~3u : ~0xfu));
    if (mem64) {
        stl_le_p(ctx->config + off + 4, 0);
        set_wmask32(ctx, off + 4, ~(uint32_t)((size - 1) >> 32));
    }
    return true;
}

bool vfu_pci_init(VfuCtx *ctx, const VfuPciIds *ids, Error **errp)
{
    VfuRegionInfo info = {
        .size = VFU_PCI_CONFIG_SIZE,
        .flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE,
        .fd = -1,
        .access = vfu_pci_region_access,
    };
    uint8_t *c;

    if (ctx->config) {
        error_setg(errp, "libvfu: config space already initialised");
        return false;
    }
    if (!vfu_setup_region(ctx, VFIO_PCI_CONFIG_REGION_INDEX, &info, errp)) {
        return false;
    }
    c = ctx->config = g_malloc0(VFU_PCI_CONFIG_SIZE);
    ctx->config_wmask = g_malloc0(VFU_PCI_CONFIG_SIZE);
    ctx->config_next_cap = PCI_STD_HEADER_SIZEOF;
    stw_le_p(c + PCI_VENDOR_ID, ids->vendor_id);
    stw_le_p(c + PCI_DEVICE_ID, ids->device_id);
    c[PCI_REVISION_ID] = ids->revision;
    c[PCI_CLASS_PROG] = ids->class_code;
    stw_le_p(c + PCI_CLASS_DEVICE, ids->class_code >> 8);
    c[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
    stw_le_p(c + PCI_SUBSYSTEM_VENDOR_ID, ids->subsys_vendor_id);
    stw_le_p(c + PCI_SUBSYSTEM_ID, ids->subsys_id);
    stw_le_p(ctx->config_wmask + PCI_COMMAND, VFU_PCI_COMMAND_WMASK);
    ctx->config_wmask[PCI_CACHE_LINE_SIZE] = 0xff;
    ctx->config_wmask[PCI_LATENCY_TIMER] = 0xff;
    ctx->config_wmask[PCI_INTERRUPT_LINE] = 0xff;
    if (ctx->irqs[VFIO_PCI_INTX_IRQ_INDEX].count) {
        c[PCI_INTERRUPT_PIN] = 1;
    }
    for (uint32_t bar = 0; bar <= VFIO_PCI_BAR5_REGION_INDEX; bar++) {
        if (ctx->regions[bar].present &&
            !vfu_pci_update_bar(ctx, bar, errp)) {
            return false;
        }
    }
    return true;
}

uint8_t *vfu_pci_config(VfuCtx *ctx)
{
    return ctx->config;
}

void vfu_pci_set_wmask(VfuCtx *ctx, uint32_t offset, const uint8_t *mask,
                       uint32_t len)
{
    if (!ctx->config || offset > VFU_PCI_CONFIG_SIZE ||
        len > VFU_PCI_CONFIG_SIZE - offset) {
        return;
    }
    memcpy(ctx->config_wmask + offset, mask, len);
}

uint8_t vfu_pci_add_cap(VfuCtx *ctx, uint8_t cap_id, const void *body,
                        size_t body_len, Error **errp)
{
    uint32_t off;
    uint8_t *link;
    int hops = 0;

    if (!ctx->config) {
        error_setg(errp, "libvfu: vfu_pci_init() first");
        return 0;
    }
    off = QEMU_ALIGN_UP(ctx->config_next_cap, 4);
    if (off + 2 + body_len > VFU_PCI_CONFIG_SIZE) {
        error_setg(errp, "libvfu: no room for capability 0x%x (%zu bytes)",
                   cap_id, body_len + 2);
        return 0;
    }
    ctx->config[off] = cap_id;
    ctx->config[off + 1] = 0;
    if (body_len) {
        memcpy(ctx->config + off + 2, body, body_len);
    }
    /* Append, keeping the order the device added them in. */
    link = &ctx->config[PCI_CAPABILITY_LIST];
    while (*link && hops++ < 64) {
        link = &ctx->config[*link + 1];
    }
    *link = off;
    stw_le_p(ctx->config + PCI_STATUS,
             lduw_le_p(ctx->config + PCI_STATUS) | PCI_STATUS_CAP_LIST);
    ctx->config_next_cap = off + 2 + body_len;
    return off;
}

uint8_t vfu_pci_add_msix_cap(VfuCtx *ctx, uint16_t nvectors,
                             uint8_t table_bir, uint32_t table_offset,
                             uint8_t pba_bir, uint32_t pba_offset,
                             Error **errp)
{
    uint8_t body[PCI_CAP_MSIX_SIZEOF - 2];
    static const uint8_t ctrl_wmask[2] = {
        0, (PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL) >> 8,
    };
    uint8_t off;

    if (nvectors < 1 || nvectors > 2048) {
        error_setg(errp, "libvfu: MSI-X vector count %u out of range",
                   nvectors);
        return 0;
    }
    if (table_bir > 5 || pba_bir > 5 || (table_offset & 7) ||
        (pba_offset & 7)) {
        error_setg(errp, "libvfu: MSI-X table/PBA location invalid "
                   "(BIR %u/%u, offsets 0x%x/0x%x)", table_bir, pba_bir,
                   table_offset, pba_offset);
        return 0;
    }
    stw_le_p(body, nvectors - 1);
    stl_le_p(body + 2, table_offset | table_bir);
    stl_le_p(body + 6, pba_offset | pba_bir);
    off = vfu_pci_add_cap(ctx, PCI_CAP_ID_MSIX, body, sizeof(body), errp);
    if (!off) {
        return 0;
    }
    vfu_pci_set_wmask(ctx, off + PCI_MSIX_FLAGS, ctrl_wmask, 2);
    if (!vfu_setup_irq(ctx, VFIO_PCI_MSIX_IRQ_INDEX, nvectors, errp)) {
        return 0;
    }
    return off;
}

void vfu_pci_snapshot(VfuCtx *ctx)
{
    if (ctx->config && !ctx->config_reset) {
        ctx->config_reset = g_memdup2(ctx->config, VFU_PCI_CONFIG_SIZE);
    }
}

void vfu_pci_reset(VfuCtx *ctx)
{
    if (ctx->config && ctx->config_reset) {
        memcpy(ctx->config, ctx->config_reset, VFU_PCI_CONFIG_SIZE);
    }
}

void vfu_pci_free(VfuCtx *ctx)
{
    g_free(ctx->config);
    g_free(ctx->config_wmask);
    g_free(ctx->config_reset);
}
