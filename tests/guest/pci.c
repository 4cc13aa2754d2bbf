/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pci: enumerate through 0xcf8/0xcfc, size every BAR, and (reassign=1)
 * clear and reassign the BARs of bus-0 endpoints ourselves, checking the
 * devices decode the new addresses.  find=VVVV:DDDD requires a device.
 */
#include "pci.h"

#define NVME_CLASS 0x010802
#define NVME_REG_VS 0x08

static PciDev devs[PCI_MAX_DEVICES];

static void print_device(PciDev *d)
{
    int i;

    printf("%02x:%02x.%x %04x:%04x class %06x (%s)\n", d->bdf >> 8,
           (d->bdf >> 3) & 31, d->bdf & 7, d->vendor, d->device,
           d->class_rev >> 8, pci_class_name(d->class_rev));
    for (i = 0; i < 6; i++) {
        PciBar *b = &d->bar[i];

        if (b->size) {
            printf("    BAR%d %s%s%s 0x%lx size 0x%lx\n", i,
                   b->io ? "io" : "mem", b->is64 ? "64" : "",
                   b->prefetch ? " pref" : "", b->addr, b->size);
        }
    }
}

static bool bars_well_formed(PciDev *d)
{
    int i;

    for (i = 0; i < 6; i++) {
        PciBar *b = &d->bar[i];

        if (b->size && ((b->size & (b->size - 1)) || (b->addr & (b->size - 1)) ||
                        (!b->io && b->size < 16) || (b->io && b->size < 4))) {
            printf("    BAR%d: size 0x%lx / address 0x%lx malformed\n", i,
                   b->size, b->addr);
            return false;
        }
    }
    return true;
}

static bool bars_disjoint(int n)
{
    int i, j, k, l;

    for (i = 0; i < n; i++) {
        for (j = 0; j < 6; j++) {
            PciBar *a = &devs[i].bar[j];

            for (k = 0; a->size && a->addr && k < n; k++) {
                for (l = 0; l < 6; l++) {
                    PciBar *b = &devs[k].bar[l];

                    if ((i != k || j != l) && b->size && b->addr &&
                        a->io == b->io && a->addr < b->addr + b->size &&
                        b->addr < a->addr + a->size) {
                        printf("    %04x BAR%d overlaps %04x BAR%d\n",
                               devs[i].bdf, j, devs[k].bdf, l);
                        return false;
                    }
                }
            }
        }
    }
    return true;
}

static bool bars_cleared(PciDev *d)
{
    int i;

    pci_cfg_write16(d->bdf, PCI_COMMAND, 0);
    for (i = 0; i < 6; i++) {
        if (d->bar[i].size) {
            pci_cfg_write32(d->bdf, PCI_BASE_ADDRESS_0 + 4 * i, 0);
            if (d->bar[i].is64) {
                pci_cfg_write32(d->bdf, PCI_BASE_ADDRESS_0 + 4 * i + 4, 0);
            }
        }
    }
    pci_bar_probe(d);
    for (i = 0; i < 6; i++) {
        if (d->bar[i].size && d->bar[i].addr) {
            return false;
        }
    }
    return true;
}

static bool is_reassignable(PciDev *d)
{
    int i;

    if (d->header_type != 0 || (d->bdf >> 8) != 0 ||
        (d->class_rev >> 16) == 0x0600) {
        return false;
    }
    for (i = 0; i < 6; i++) {
        if (d->bar[i].size) {
            return true;
        }
    }
    return false;
}

static void reassign_all(int n)
{
    bool cleared = true, assigned = true;
    int i, count = 0;

    for (i = 0; i < n; i++) {
        if (is_reassignable(&devs[i])) {
            cleared &= bars_cleared(&devs[i]);
        }
    }
    report(cleared, "cleared BARs read back as unset");
    for (i = 0; i < n; i++) {
        if (is_reassignable(&devs[i])) {
            assigned &= pci_bar_assign(devs, n, &devs[i]);
            pci_enable(&devs[i]);
            count++;
        }
    }
    report(assigned, "assigned BARs of %d devices", count);
    for (i = 0; i < n; i++) {
        PciDev saved = devs[i];

        /* What the hardware decodes must be what we assigned. */
        pci_bar_probe(&devs[i]);
        if (memcmp(&saved.bar, &devs[i].bar, sizeof(saved.bar))) {
            assigned = false;
        }
        if (is_reassignable(&devs[i])) {
            print_device(&devs[i]);
        }
    }
    report(assigned, "assigned BARs read back unchanged");
    report(bars_disjoint(n), "no two BARs overlap after assignment");
}

int main(void)
{
    char want[16];
    PciDev *nvme;
    bool ok = true;
    int n, i;

    n = pci_scan(devs, PCI_MAX_DEVICES);
    report(n > 0 && devs[0].bdf == 0 && (devs[0].class_rev >> 16) == 0x0600,
           "found %d functions, host bridge at 00:00.0", n);
    for (i = 0; i < n; i++) {
        print_device(&devs[i]);
        ok &= bars_well_formed(&devs[i]);
    }
    report(ok, "BAR sizes are powers of two and addresses aligned");
    report(bars_disjoint(n), "no two assigned BARs overlap");

    if (cmdline_get("find", want, sizeof(want))) {
        uint16_t vendor = 0, device = 0;
        const char *p = want;

        for (; *p && *p != ':'; p++) {
            vendor = vendor * 16 + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
        }
        for (p += (*p == ':'); *p; p++) {
            device = device * 16 + (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
        }
        report(pci_find(devs, n, vendor, device) != NULL,
               "device %04x:%04x present", vendor, device);
    }

    if (cmdline_u64("reassign", 0)) {
        reassign_all(n);
    }

    nvme = pci_find_class(devs, n, NVME_CLASS);
    if (nvme && nvme->bar[0].size && !nvme->bar[0].io) {
        uint32_t vs;

        pci_enable(nvme);
        vs = mmio_read32(nvme->bar[0].addr + NVME_REG_VS);
        report(vs != ~0u && (vs >> 16) >= 1,
               "NVMe controller decodes BAR0 at 0x%lx (version %u.%u)",
               nvme->bar[0].addr, vs >> 16, (vs >> 8) & 0xff);
    }
    return report_summary();
}
