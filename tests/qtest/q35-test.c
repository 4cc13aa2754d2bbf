/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The chipsets under qtest, the test playing the firmware: the IDs
 * SeaBIOS and OVMF look for, the q35 ECAM moved by PCIEXBAR, the ICH9
 * PM block moved by PMBASE / ACPI_EN (with SMI_EN saying "no SMM"), PAM
 * switching the BIOS window between ROM and RAM on both chipsets, the
 * SMRAM lock, and the reset control register at 0xcf9.
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "fw-helpers.h"

#define LPC_DEVFN ((0x1f << 3) | 0)
#define ECAM_DEFAULT 0xb0000000ULL

static char *bios_path;

static void test_ids(void)
{
    /* The root bus is "pcie.0", as libvirt addresses it on q35. */
    QTestState *qts = qtest_init("-M q35 -nodefaults -device "
                                 "pcie-root-port,port=16,chassis=1,id=pci.1,"
                                 "bus=pcie.0,multifunction=on,addr=0x2");

    g_assert_cmphex(pci0_readl(qts, 0, 0), ==, 0x29c08086);
    g_assert_cmphex(pci0_readl(qts, 0, 0x2c), ==, 0x11001af4);
    g_assert_cmphex(pci0_readl(qts, LPC_DEVFN, 0), ==, 0x29188086);
    g_assert_cmphex(pci0_readl(qts, LPC_DEVFN, 0x08) >> 16, ==, 0x0601);
    qtest_quit(qts);

    qts = qtest_init("-M pc -nodefaults");
    g_assert_cmphex(pci0_readl(qts, 0, 0), ==, 0x12378086);
    g_assert_cmphex(pci0_readl(qts, 0, 0x2c), ==, 0x11001af4);
    /* pc has no LPC at 1f.0. */
    g_assert_cmphex(pci0_readl(qts, LPC_DEVFN, 0), ==, 0xffffffff);
    qtest_quit(qts);

    /* The versioned names are the same boards. */
    qts = qtest_init("-M pc-q35-7.2 -nodefaults");
    g_assert_cmphex(pci0_readl(qts, 0, 0), ==, 0x29c08086);
    qtest_quit(qts);
    qts = qtest_init("-M pc-i440fx-5.2 -nodefaults");
    g_assert_cmphex(pci0_readl(qts, 0, 0), ==, 0x12378086);
    qtest_quit(qts);
}

static void test_pciexbar(void)
{
    QTestState *qts = qtest_init("-M q35 -m 256 -nodefaults");

    /* Without firmware Conduit leaves ECAM where firmware would. */
    g_assert_cmphex(pci0_readl(qts, 0, 0x60), ==, ECAM_DEFAULT | 1);
    g_assert_cmphex(qtest_readl(qts, ECAM_DEFAULT), ==, 0x29c08086);
    g_assert_cmphex(qtest_readl(qts, ECAM_DEFAULT + (0x1f << 15)), ==,
                    0x29188086);
    /* Move it to 0xe0000000 with 64 buses (length 10b). */
    pci0_writel(qts, 0, 0x60, 0);
    g_assert_cmphex(qtest_readl(qts, ECAM_DEFAULT), ==, 0xffffffff);
    pci0_writel(qts, 0, 0x64, 0);
    pci0_writel(qts, 0, 0x60, 0xe0000000 | (2 << 1) | 1);
    g_assert_cmphex(qtest_readl(qts, 0xe0000000), ==, 0x29c08086);
    g_assert_cmphex(qtest_readl(qts, ECAM_DEFAULT), ==, 0xffffffff);
    /* 64 MiB: bus 64 is outside the window. */
    g_assert_cmphex(qtest_readl(qts, 0xe0000000 + (64ULL << 20)), ==,
                    0xffffffff);
    /* ECAM writes reach config space (the LPC's PIRQA routing). */
    qtest_writeb(qts, 0xe0000000 + (0x1f << 15) + 0x60, 0x0b);
    g_assert_cmphex(pci0_readb(qts, LPC_DEVFN, 0x60), ==, 0x0b);
    qtest_quit(qts);
}

static void test_pmbase(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults");
    uint32_t t0, t1;

    g_assert_cmphex(pci0_readl(qts, LPC_DEVFN, 0x40), ==, 0x601);
    g_assert_cmphex(pci0_readb(qts, LPC_DEVFN, 0x44), ==, 0x80);
    t0 = qtest_inl(qts, 0x608);
    qtest_clock_step(qts, 1000000);
    t1 = qtest_inl(qts, 0x608);
    g_assert_cmpuint(t1 - t0, >=, 3000);
    /* APMC_EN reads set: firmware takes SMM as set up already. */
    g_assert_true(qtest_inl(qts, 0x630) & (1u << 5));
    qtest_outl(qts, 0x630, 0);
    g_assert_true(qtest_inl(qts, 0x630) & (1u << 5));

    /* Firmware moves the block; ACPI_EN off hides it. */
    pci0_writel(qts, LPC_DEVFN, 0x40, 0xb001);
    g_assert_cmphex(qtest_inl(qts, 0x608), ==, 0xffffffff);
    t0 = qtest_inl(qts, 0xb008);
    qtest_clock_step(qts, 1000000);
    g_assert_cmpuint(qtest_inl(qts, 0xb008) - t0, >=, 3000);
    pci0_writeb(qts, LPC_DEVFN, 0x44, 0);
    g_assert_cmphex(qtest_inl(qts, 0xb008), ==, 0xffffffff);
    qtest_quit(qts);
}

/* PAM0 (BIOS segment) and PAM1 (0xc0000/0xc4000) on either chipset. */
static void check_pam(const char *machine, int pam0)
{
    QTestState *qts = qtest_initf("-M %s -m 256 -bios %s -nodefaults",
                                  machine, bios_path);
    const uint64_t rom = 256 * 1024;

    /* Reset: PCI everywhere, the ROM's top shows at 0xf0000. */
    g_assert_cmphex(pci0_readb(qts, 0, pam0), ==, 0);
    g_assert_cmphex(qtest_readb(qts, 0xffff0), ==,
                    fw_dummy_byte(rom - 0x10));
    g_assert_cmphex(qtest_readb(qts, 0xe0000), ==,
                    fw_dummy_byte(rom - 0x20000));
    g_assert_cmphex(qtest_readb(qts, 0xfffffff0), ==,
                    fw_dummy_byte(rom - 0x10));
    /* Writes to the ROM are lost. */
    qtest_writeb(qts, 0xffff0, ~fw_dummy_byte(rom - 0x10));
    g_assert_cmphex(qtest_readb(qts, 0xffff0), ==,
                    fw_dummy_byte(rom - 0x10));
    /* 0xc0000 on the PCI side: nothing there. */
    g_assert_cmphex(qtest_readl(qts, 0xc0000), ==, 0xffffffff);

    /* Read-write RAM, as SeaBIOS sets it to copy itself. */
    pci0_writeb(qts, 0, pam0, 0x30);
    pci0_writeb(qts, 0, pam0 + 1, 0x33);
    qtest_writel(qts, 0xf0000, 0x12345678);
    g_assert_cmphex(qtest_readl(qts, 0xf0000), ==, 0x12345678);
    qtest_writel(qts, 0xc0000, 0xcafe0001);
    g_assert_cmphex(qtest_readl(qts, 0xc0000), ==, 0xcafe0001);
    /* Read-only RAM: reads stay, writes go to PCI. */
    pci0_writeb(qts, 0, pam0, 0x10);
    qtest_writel(qts, 0xf0000, 0xdeadbeef);
    g_assert_cmphex(qtest_readl(qts, 0xf0000), ==, 0x12345678);
    /* Back to PCI: the ROM again, the RAM kept underneath. */
    pci0_writeb(qts, 0, pam0, 0x00);
    g_assert_cmphex(qtest_readb(qts, 0xf0000), ==,
                    fw_dummy_byte(rom - 0x10000));
    pci0_writeb(qts, 0, pam0, 0x30);
    g_assert_cmphex(qtest_readl(qts, 0xf0000), ==, 0x12345678);
    /* The reserved low nibble of PAM0 is read-only. */
    pci0_writeb(qts, 0, pam0, 0x3f);
    g_assert_cmphex(pci0_readb(qts, 0, pam0), ==, 0x30);
    qtest_quit(qts);
}

static void test_pam(void)
{
    check_pam("pc", 0x59);
    check_pam("q35", 0x90);
}

/* pc with firmware: the PM block behind 01.3's PMBA, as OVMF expects. */
static void test_piix4_pm(void)
{
    QTestState *qts = qtest_initf("-M pc -bios %s -nodefaults", bios_path);
    const int devfn = (1 << 3) | 3;
    uint32_t t0;

    g_assert_cmphex(pci0_readl(qts, devfn, 0), ==, 0x71138086);
    /* APMC_EN preset in DEVACTB: no SMM to set up. */
    g_assert_cmphex(pci0_readb(qts, devfn, 0x5b) & 0x02, ==, 0x02);
    g_assert_cmphex(qtest_inl(qts, 0x608), ==, 0xffffffff);
    pci0_writel(qts, devfn, 0x40, 0x600 | 1);
    pci0_writeb(qts, devfn, 0x80, 0x01);
    t0 = qtest_inl(qts, 0x608);
    qtest_clock_step(qts, 1000000);
    g_assert_cmpuint(qtest_inl(qts, 0x608) - t0, >=, 3000);
    qtest_quit(qts);

    /* Without firmware, no 01.3: Conduit's block sits at 0x600. */
    qts = qtest_init("-M pc -nodefaults");
    g_assert_cmphex(pci0_readl(qts, devfn, 0), ==, 0xffffffff);
    t0 = qtest_inl(qts, 0x608);
    qtest_clock_step(qts, 1000000);
    g_assert_cmpuint(qtest_inl(qts, 0x608) - t0, >=, 3000);
    qtest_quit(qts);
}

/* pcie-pci-bridge: a conventional bus behind a PCIe function. */
static void test_pcie_pci_bridge(void)
{
    QTestState *qts = qtest_init(
        "-M q35 -nodefaults -device pcie-pci-bridge,id=pci.2,addr=0x3 "
        "-device pci-testdev,bus=pci.2,addr=0x5");
    const int bdevfn = 3 << 3;
    JsonObject *r;

    g_assert_cmphex(pci0_readl(qts, bdevfn, 0), ==, 0x000e1b36);
    g_assert_cmphex(pci0_readb(qts, bdevfn, 0x0e) & 0x7f, ==, 1);
    /* PCIe capability: a PCI Express to PCI bridge (type 7). */
    g_assert_cmphex(pci0_readb(qts, bdevfn, 0x40), ==, 0x10);
    g_assert_cmphex((pci0_readl(qts, bdevfn, 0x40) >> 20) & 0xf, ==, 7);
    /* Firmware numbers the bus; then the device answers on bus 1. */
    pci0_writel(qts, bdevfn, 0x18, 0x00010100);
    qtest_outl(qts, 0xcf8, 0x80000000u | (1 << 16) | ((5 << 3) << 8));
    g_assert_cmphex(qtest_inl(qts, 0xcfc), ==, 0x00011d0c);
    /* No SHPC: hot-plug onto the bridge is refused. */
    r = qtest_qmp(qts, "{'execute':'device_add','arguments':"
                  "{'driver':'pci-testdev','bus':'pci.2','id':'hp'}}");
    g_assert_nonnull(json_object_get_member(r, "error"));
    json_object_unref(r);
    qtest_quit(qts);
}

static void test_smram_lock(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults");

    g_assert_cmphex(pci0_readb(qts, 0, 0x9d), ==, 0x02);
    pci0_writeb(qts, 0, 0x9d, 0x4a);            /* D_OPEN | G_SMRAME */
    g_assert_cmphex(pci0_readb(qts, 0, 0x9d), ==, 0x4a);
    pci0_writeb(qts, 0, 0x9d, 0x1a);            /* D_LCK */
    g_assert_cmphex(pci0_readb(qts, 0, 0x9d), ==, 0x1a);
    /* Locked: D_OPEN cannot be set, the lock cannot be cleared. */
    pci0_writeb(qts, 0, 0x9d, 0x42);
    g_assert_cmphex(pci0_readb(qts, 0, 0x9d) & 0x50, ==, 0x10);
    qtest_quit(qts);
}

static void test_reset_control(void)
{
    const char *machines[] = { "pc", "q35" };

    for (int m = 0; m < 2; m++) {
        QTestState *qts = qtest_initf("-M %s -nodefaults", machines[m]);
        JsonObject *ev;

        /* Bits 1 and 3 only select the kind of reset. */
        qtest_outb(qts, 0xcf9, 0x02);
        g_assert_cmphex(qtest_inb(qts, 0xcf9), ==, 0x02);
        qtest_outb(qts, 0xcf9, 0x06);
        ev = qtest_qmp_eventwait(qts, "RESET");
        json_object_unref(ev);
        qtest_quit(qts);
    }
}

static void test_no_reboot(void)
{
    QTestState *qts = qtest_init("-M q35 -nodefaults -no-reboot");

    qtest_outb(qts, 0xcf9, 0x06);
    qtest_qmp_wait_shutdown(qts, "guest-reset");
    qtest_wait_exit(qts);
    qtest_quit(qts);
}

static void test_query_machines(void)
{
    QTestState *qts = qtest_init("-M none");
    JsonObject *r = qtest_qmp(qts, "{'execute':'query-machines'}");
    JsonArray *list = json_object_get_array_member(r, "return");
    bool pc = false, q35 = false, old = false;

    for (guint i = 0; i < json_array_get_length(list); i++) {
        JsonObject *m = json_array_get_object_element(list, i);
        const char *name = json_object_get_string_member(m, "name");
        const char *alias = json_object_get_string_member_with_default(
            m, "alias", NULL);
        bool def = json_object_get_boolean_member_with_default(
            m, "is-default", false);

        if (!strcmp(name, "pc-i440fx-8.2")) {
            pc = true;
            g_assert_cmpstr(alias, ==, "pc");
            g_assert_true(def);
        } else if (!strcmp(name, "pc-q35-8.2")) {
            q35 = true;
            g_assert_cmpstr(alias, ==, "q35");
            g_assert_false(def);
        } else if (!strcmp(name, "pc-q35-6.2")) {
            old = true;
            g_assert_null(alias);
        } else {
            /* "pc" and "q35" are aliases, never names. */
            g_assert_cmpstr(name, !=, "pc");
            g_assert_cmpstr(name, !=, "q35");
        }
    }
    g_assert_true(pc && q35 && old);
    json_object_unref(r);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    bios_path = fw_make_dummy_bios();
    g_test_add_func("/q35/ids", test_ids);
    g_test_add_func("/q35/pciexbar", test_pciexbar);
    g_test_add_func("/q35/pmbase", test_pmbase);
    g_test_add_func("/q35/pam", test_pam);
    g_test_add_func("/q35/smram-lock", test_smram_lock);
    g_test_add_func("/pc/piix4-pm", test_piix4_pm);
    g_test_add_func("/q35/pcie-pci-bridge", test_pcie_pci_bridge);
    g_test_add_func("/q35/reset-control", test_reset_control);
    g_test_add_func("/q35/no-reboot", test_no_reboot);
    g_test_add_func("/q35/query-machines", test_query_machines);
    ret = g_test_run();
    unlink(bios_path);
    g_free(bios_path);
    return ret;
}
