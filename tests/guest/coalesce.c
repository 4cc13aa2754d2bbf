/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * coalesce: writes to the registers of a trapped page that KVM completes
 * without an exit (x-coalesce-trapped-writes=on), against vfio-user-nvme
 * with its MSI-X table on the doorbell page (0x1800) and the controller
 * left disabled, so doorbells are plain memory the guest can read back.
 *
 *  1. ordering: NWRITES doorbell writes (fewer than half a ring holds), then
 *     a read of each doorbell sees the last value written to it;
 *  2. table writes stay exact: MSI-X table writes interleaved with
 *     doorbell writes read back at once; the guest prints how many table
 *     accesses it made so the host can check each one exited;
 *  3. after the summary, TAIL more doorbell writes and then the guest
 *     stops (cli; hlt: no exit ever again): only the drainer can empty
 *     the ring, and the host checks it does.
 * Writes run at CPL3, as a driver's hot path would.
 */
#include "pci.h"

#define NVME_CLASS 0x010802
#define DOORBELLS 0x1000
#define NR_DB 8
#define TABLE_ROUNDS 16

static PciDev devs[PCI_MAX_DEVICES];
static uint64_t regs;
static PciMsix msix;
static unsigned table_accesses;

static uint32_t db_value(unsigned i)
{
    return 0x5a000000u | i;
}

static uint64_t user_doorbell_writes(void *arg)
{
    unsigned n = (uintptr_t)arg;

    for (unsigned i = 0; i < n; i++) {
        mmio_write32(regs + DOORBELLS + 4 * (i % NR_DB), db_value(i));
    }
    return 0;
}

/* Returns how many doorbells read back something else than expected. */
static uint64_t user_doorbell_check(void *arg)
{
    unsigned n = (uintptr_t)arg;
    uint64_t bad = 0;

    for (unsigned d = 0; d < NR_DB && d < n; d++) {
        /* The last i < n with i % NR_DB == d. */
        unsigned last = d + ((n - 1 - d) / NR_DB) * NR_DB;

        bad += mmio_read32(regs + DOORBELLS + 4 * d) != db_value(last);
    }
    return bad;
}

/* Table message data written between doorbell writes, read back at once. */
static uint64_t user_table_rounds(void *arg)
{
    uint64_t bad = 0;

    for (unsigned r = 0; r < TABLE_ROUNDS; r++) {
        uint64_t data = msix.table + (r % msix.nvec) * 16 + 8;

        mmio_write32(regs + DOORBELLS + 4 * (r % NR_DB), db_value(1000 + r));
        mmio_write32(data, 0xc0de0000u | r);
        mmio_write32(regs + DOORBELLS + 4 * (r % NR_DB), db_value(2000 + r));
        bad += mmio_read32(data) != (0xc0de0000u | r);
        table_accesses += 2;
    }
    return bad;
}

static uint64_t settle_ticks;

static uint64_t user_settle_then_write(void *arg)
{
    uint64_t until = rdtsc() + settle_ticks;

    while (rdtsc() < until) {
        cpu_relax();
    }
    return user_doorbell_writes(arg);
}

int main(void)
{
    unsigned nwrites = cmdline_u64("nwrites", 80);
    unsigned tail = cmdline_u64("tail", 50);
    uint64_t bad;
    PciDev *d;
    int count, code;

    count = pci_scan(devs, PCI_MAX_DEVICES);
    d = pci_find_class(devs, count, NVME_CLASS);
    if (!d || !pci_bar_assign(devs, count, d) || d->bar[0].size < 0x2000 ||
        d->bar[0].io || !pci_msix_init(d, &msix)) {
        report(false, "NVMe controller with MSI-X in BAR0");
        return report_summary();
    }
    pci_enable(d);
    regs = d->bar[0].addr;
    report(msix.table == regs + 0x1800, "MSI-X table on the doorbell page "
           "(0x%lx)", msix.table - regs);

    run_user(user_doorbell_writes, (void *)(uintptr_t)nwrites);
    bad = run_user(user_doorbell_check, (void *)(uintptr_t)nwrites);
    report(!bad, "a read after %u queued writes sees the last of each "
           "(%lu doorbells differ)", nwrites, bad);

    bad = run_user(user_table_rounds, NULL);
    report(!bad, "%u table writes between doorbell writes read back "
           "(%lu differ)", TABLE_ROUNDS, bad);
    printf("COALESCE table-accesses=%u doorbell-writes=%u\n",
           table_accesses, nwrites + 2 * TABLE_ROUNDS);

    code = report_summary();
    if (code) {
        return code;
    }
    /*
     * Say so first (serial output exits, and an exit drains the ring),
     * let that settle, write, and never exit again: the drainer alone
     * must empty the ring.
     */
    settle_ticks = tsc_khz() * 20;     /* 20 ms; calibrated at CPL0 */
    printf("COALESCE-IDLE tail=%u\n", tail);
    irq_disable();
    run_user(user_settle_then_write, (void *)(uintptr_t)tail);
    for (;;) {
        __asm__ volatile("hlt");
    }
}
