/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * msix: Conduit's pci-testdev (1d0c:0001) raises MSI-X vectors on request
 * and the guest's handlers count them.  Checks delivery of every vector,
 * masking with the pending bit set in the PBA and delivery on unmask, the
 * function mask, and that an out-of-range vector raises nothing.  With
 * pci-testdev,msi=on, also MSI delivery and per-vector masking once MSI-X
 * is off.
 *
 * Register layout (hw/pci/pci-testdev.c): BAR0 0x00 magic "CNDT",
 * 0x04 scratch, 0x08 fire, 0x10 vector count, 0x14 fire count; BAR1
 * (I/O) mirrors them.
 */
#include "pci.h"

#define TESTDEV_VENDOR 0x1d0c
#define TESTDEV_DEVICE 0x0001
#define TESTDEV_MAGIC 0x54444e43
#define REG_MAGIC 0x00
#define REG_SCRATCH 0x04
#define REG_FIRE 0x08
#define REG_NVEC 0x10
#define REG_FIRED 0x14
#define VECTOR_BASE 0x40
#define MAX_VECTORS 64
#define MSI_VECTOR 0x60
#define TRAP_SAMPLES 1000

static PciDev devs[PCI_MAX_DEVICES];
static uint64_t regs;

/*
 * Waits for vector's count to reach want.  The bound only keeps a lost
 * interrupt from hanging the test; nothing is asserted about time.
 */
static bool wait_count(unsigned vector, uint64_t want)
{
    uint64_t deadline = rdtsc() + tsc_khz() * 5000;

    while (irq_count(vector) < want) {
        if (rdtsc() > deadline) {
            return false;
        }
        cpu_relax();
    }
    return true;
}

static void settle(void)
{
    uint64_t until = rdtsc() + tsc_khz() * 20;

    /* Long enough for a wrongly delivered interrupt to show up. */
    while (rdtsc() < until) {
        cpu_relax();
    }
}

static uint64_t user_trapped_writes(void *arg)
{
    uint64_t t0 = rdtsc();
    unsigned i;

    for (i = 0; i < TRAP_SAMPLES; i++) {
        mmio_write32(regs + REG_SCRATCH, i);
    }
    return rdtsc() - t0;
}

/* MSI, used by the device when MSI-X is disabled. */
static void check_msi(PciDev *d)
{
    uint8_t cap = pci_msi_setup(d, MSI_VECTOR, apic_id());

    if (!cap) {
        return;
    }
    pci_msi_enable(d, cap, true);
    mmio_write32(regs + REG_FIRE, 0);
    report(wait_count(MSI_VECTOR, 1), "MSI delivered once MSI-X is off");
    if (pci_msi_mask(d, cap, true)) {
        mmio_write32(regs + REG_FIRE, 0);
        settle();
        report(irq_count(MSI_VECTOR) == 1 && pci_msi_pending(d, cap),
               "masked MSI held with its pending bit set");
        pci_msi_mask(d, cap, false);
        report(wait_count(MSI_VECTOR, 2), "held MSI delivered on unmask");
    }
    pci_msi_enable(d, cap, false);
}

int main(void)
{
    PciDev *d;
    PciMsix msix;
    unsigned nvec, i, vec_ok = 0;
    int n;
    uint64_t t, cycles;
    uint32_t fired;

    tsc_khz();
    apic_init();
    irq_enable();

    n = pci_scan(devs, PCI_MAX_DEVICES);
    d = pci_find(devs, n, TESTDEV_VENDOR, TESTDEV_DEVICE);
    if (!d) {
        report_skip("pci-testdev 1d0c:0001 not present");
        return report_summary();
    }
    report(pci_bar_assign(devs, n, d) && d->bar[0].size &&
           !d->bar[0].io, "pci-testdev BAR0 at 0x%lx", d->bar[0].addr);
    pci_enable(d);
    regs = d->bar[0].addr;

    report(mmio_read32(regs + REG_MAGIC) == TESTDEV_MAGIC, "magic in BAR0");
    mmio_write32(regs + REG_SCRATCH, 0x5a5aa5a5);
    report(mmio_read32(regs + REG_SCRATCH) == 0x5a5aa5a5,
           "scratch register holds a value");
    if (d->bar[1].size && d->bar[1].io) {
        report(inl(d->bar[1].addr + REG_SCRATCH) == 0x5a5aa5a5 &&
               inl(d->bar[1].addr + REG_MAGIC) == TESTDEV_MAGIC,
               "BAR1 (I/O) mirrors the registers");
    }

    if (!pci_msix_init(d, &msix)) {
        report(false, "MSI-X capability");
        return report_summary();
    }
    nvec = mmio_read32(regs + REG_NVEC);
    report(nvec == msix.nvec, "vector register (%u) matches the table size (%u)",
           nvec, msix.nvec);
    nvec = msix.nvec < MAX_VECTORS ? msix.nvec : MAX_VECTORS;

    for (i = 0; i < nvec; i++) {
        pci_msix_set_vector(&msix, i, VECTOR_BASE + i, apic_id());
        pci_msix_mask(&msix, i, false);
    }
    pci_msix_enable(&msix, true);

    for (i = 0; i < nvec; i++) {
        mmio_write32(regs + REG_FIRE, i);
        vec_ok += wait_count(VECTOR_BASE + i, 1);
    }
    settle();
    for (i = 0; i < nvec; i++) {
        if (irq_count(VECTOR_BASE + i) != 1) {
            vec_ok = 0;
        }
    }
    report(vec_ok == nvec, "each of %u vectors delivered exactly once", nvec);
    fired = mmio_read32(regs + REG_FIRED);
    report(fired == nvec, "device counted %u fire writes", fired);

    /* Masked: the message is held and its pending bit set. */
    pci_msix_mask(&msix, 0, true);
    mmio_write32(regs + REG_FIRE, 0);
    settle();
    report(irq_count(VECTOR_BASE) == 1, "masked vector not delivered");
    report(pci_msix_pending(&msix, 0), "masked vector pending in the PBA");
    pci_msix_mask(&msix, 0, false);
    report(wait_count(VECTOR_BASE, 2), "pending vector delivered on unmask");
    report(!pci_msix_pending(&msix, 0), "pending bit cleared after delivery");

    /* Function mask: same, for the whole function. */
    pci_cfg_write16(d->bdf, msix.cap + 2,
                    pci_cfg_read16(d->bdf, msix.cap + 2) | 0x4000);
    mmio_write32(regs + REG_FIRE, 1);
    settle();
    report(irq_count(VECTOR_BASE + 1) == 1, "function mask holds the vector");
    pci_msix_enable(&msix, true);
    report(wait_count(VECTOR_BASE + 1, 2), "delivered when the function mask clears");

    mmio_write32(regs + REG_FIRE, msix.nvec);
    settle();
    t = 0;
    for (i = 0; i < 256; i++) {
        t += irq_count(i);
    }
    report(t == nvec + 2, "out-of-range vector raises nothing");

    t = rdtsc();
    mmio_write32(regs + REG_FIRE, 2);
    wait_count(VECTOR_BASE + 2, 2);
    printf("fire-to-handler: %lu ns (CPL0)\n", tsc_to_ns(rdtsc() - t));
    cycles = run_user(user_trapped_writes, NULL);
    printf("trapped MMIO write from CPL3: %lu ns each over %u writes\n",
           tsc_to_ns(cycles) / TRAP_SAMPLES, TRAP_SAMPLES);
    report(mmio_read32(regs + REG_SCRATCH) == TRAP_SAMPLES - 1,
           "CPL3 writes reached the device");

    pci_msix_enable(&msix, false);
    check_msi(d);
    return report_summary();
}
