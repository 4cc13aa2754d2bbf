/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcie-root-port under qtest, with the test playing the guest's pciehp
 * driver through ECAM: the port's identity and PCIe capability, the slot
 * registers' access rules (PCIe Base 7.5.3.9-11), and the whole hot-plug
 * dialogue: device_add -> presence detect changed (MSI) -> guest powers
 * on -> link up (MSI) -> device_del -> attention button (MSI) -> second
 * device_del refused as pending -> guest powers off -> DEVICE_DELETED.
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "libqos/nvme.h"

#define ECAM 0xe0000000ULL
#define RP_DEVFN (4 << 3)
#define SEC_BUS 1
#define EXP 0x40            /* PCIe capability offset */
#define MSI 0x80
#define SLTCAP (EXP + 0x14)
#define SLTCTL (EXP + 0x18)
#define SLTSTA (EXP + 0x1a)
#define LNKCAP (EXP + 0x0c)
#define LNKSTA (EXP + 0x12)

#define SLTCTL_ABPE 0x0001
#define SLTCTL_PDCE 0x0008
#define SLTCTL_HPIE 0x0020
#define SLTCTL_PIC_ON 0x0100
#define SLTCTL_PIC_OFF 0x0300
#define SLTCTL_AIC_OFF 0x00c0
#define SLTCTL_PCC 0x0400
#define SLTCTL_DLLSCE 0x1000
#define SLTSTA_ABP 0x0001
#define SLTSTA_PDC 0x0008
#define SLTSTA_PDS 0x0040
#define SLTSTA_DLLSC 0x0100
#define LNKSTA_DLLLA 0x2000

#define RP_ARGS "-device pcie-root-port,id=rp1,chassis=1,slot=5,addr=04.0"

static uint64_t cfg_addr(int bus, int devfn, int off)
{
    return ECAM + ((uint64_t)bus << 20) + ((uint64_t)devfn << 12) + off;
}

static uint16_t rp_readw(QTestState *qts, int off)
{
    return qtest_readw(qts, cfg_addr(0, RP_DEVFN, off));
}

static uint32_t rp_readl(QTestState *qts, int off)
{
    return qtest_readl(qts, cfg_addr(0, RP_DEVFN, off));
}

static void rp_writew(QTestState *qts, int off, uint16_t v)
{
    qtest_writew(qts, cfg_addr(0, RP_DEVFN, off), v);
}

static void rp_writel(QTestState *qts, int off, uint32_t v)
{
    qtest_writel(qts, cfg_addr(0, RP_DEVFN, off), v);
}

static uint16_t child_vendor(QTestState *qts)
{
    return qtest_readw(qts, cfg_addr(SEC_BUS, 0, 0));
}

/* What pciehp does at probe: bus numbers, MSI, event enables. */
static void guest_setup(QTestState *qts, uint16_t power)
{
    /* primary 0, secondary 1, subordinate 1 */
    rp_writel(qts, 0x18, SEC_BUS << 16 | SEC_BUS << 8);
    rp_writel(qts, MSI + 4, 0xfee00000);
    rp_writel(qts, MSI + 8, 0);
    rp_writew(qts, MSI + 12, 0x41);
    rp_writew(qts, MSI + 2, 1);                 /* MSI enable */
    rp_writew(qts, 0x04, 0x0006);               /* memory, bus master */
    rp_writew(qts, SLTCTL, SLTCTL_ABPE | SLTCTL_PDCE | SLTCTL_HPIE |
              SLTCTL_DLLSCE | SLTCTL_AIC_OFF | power);
    qtest_irq_intercept_in(qts, "/machine/msi");
}

static void set_msi_data(QTestState *qts, uint16_t data)
{
    rp_writew(qts, MSI + 12, data);
}

static void test_config(void)
{
    QTestState *qts = qtest_init(RP_ARGS);
    uint16_t sta;

    g_assert_cmphex(rp_readw(qts, 0x00), ==, 0x1d0c);
    g_assert_cmphex(qtest_readb(qts, cfg_addr(0, RP_DEVFN, 0x0e)) & 0x7f,
                    ==, 1);                     /* type 1 header */
    g_assert_cmphex(rp_readw(qts, 0x0a), ==, 0x0604);
    g_assert_cmphex(rp_readw(qts, 0x06) & 0x10, ==, 0x10);     /* caps */
    /* Capability list: MSI, then PCI Express. */
    g_assert_cmphex(qtest_readb(qts, cfg_addr(0, RP_DEVFN, 0x34)), ==, MSI);
    g_assert_cmphex(qtest_readb(qts, cfg_addr(0, RP_DEVFN, MSI)), ==, 0x05);
    g_assert_cmphex(qtest_readb(qts, cfg_addr(0, RP_DEVFN, MSI + 1)), ==,
                    EXP);
    g_assert_cmphex(qtest_readb(qts, cfg_addr(0, RP_DEVFN, EXP)), ==, 0x10);
    /* Version 2, root port, slot implemented. */
    g_assert_cmphex(rp_readw(qts, EXP + 2), ==, 0x0142);
    /* Hot-plug capable with button, power controller, indicators, NCCS,
     * physical slot 5; link reports DLL link active. */
    g_assert_cmphex(rp_readl(qts, SLTCAP), ==, 5 << 19 | 0x0004005b);
    g_assert_cmphex(rp_readl(qts, LNKCAP) & (1 << 20), ==, 1 << 20);
    /* Empty slot after reset: not present, powered off, link down. */
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_PDS, ==, 0);
    g_assert_cmphex(rp_readw(qts, SLTCTL) & SLTCTL_PCC, ==, SLTCTL_PCC);
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, 0);
    /* Unconfigured bus numbers forward nothing. */
    g_assert_cmphex(child_vendor(qts), ==, 0xffff);

    /* Slot capabilities are read-only, presence is read-only. */
    rp_writel(qts, SLTCAP, 0);
    g_assert_cmphex(rp_readl(qts, SLTCAP), ==, 5 << 19 | 0x0004005b);
    rp_writew(qts, SLTSTA, 0xffff);
    sta = rp_readw(qts, SLTSTA);
    g_assert_cmphex(sta, ==, 0);
    /* Bus numbers and slot control are writable. */
    rp_writel(qts, 0x18, 0x00020100);
    g_assert_cmphex(rp_readl(qts, 0x18) & 0xffffff, ==, 0x020100);
    rp_writew(qts, SLTCTL, SLTCTL_HPIE | SLTCTL_PCC | SLTCTL_PIC_OFF);
    g_assert_cmphex(rp_readw(qts, SLTCTL), ==,
                    SLTCTL_HPIE | SLTCTL_PCC | SLTCTL_PIC_OFF);
    qtest_quit(qts);
}

static void test_hotplug_sequence(void)
{
    QTestState *qts = qtest_init(RP_ARGS);
    JsonObject *ev, *reply;

    guest_setup(qts, SLTCTL_PCC | SLTCTL_PIC_OFF);

    /* device_add: presence detected and the button pressed, one MSI. */
    qtest_qmp_device_add(qts, "pci-testdev", "hp1", "{'bus': 'rp1'}");
    g_assert_true(qtest_get_irq(qts, 0x41));
    g_assert_cmphex(rp_readw(qts, SLTSTA) &
                    (SLTSTA_PDS | SLTSTA_PDC | SLTSTA_ABP), ==,
                    SLTSTA_PDS | SLTSTA_PDC | SLTSTA_ABP);
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, 0);
    /* Routed by bus number through the port. */
    g_assert_cmphex(child_vendor(qts), ==, 0x1d0c);

    /* The guest acknowledges and powers the slot on: the link comes up. */
    rp_writew(qts, SLTSTA, SLTSTA_PDC | SLTSTA_ABP);
    g_assert_cmphex(rp_readw(qts, SLTSTA) & (SLTSTA_PDC | SLTSTA_ABP), ==, 0);
    set_msi_data(qts, 0x42);
    rp_writew(qts, SLTCTL, SLTCTL_ABPE | SLTCTL_PDCE | SLTCTL_HPIE |
              SLTCTL_DLLSCE | SLTCTL_AIC_OFF | SLTCTL_PIC_ON);
    g_assert_true(qtest_get_irq(qts, 0x42));
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, LNKSTA_DLLLA);
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_DLLSC, ==, SLTSTA_DLLSC);
    rp_writew(qts, SLTSTA, SLTSTA_DLLSC);

    /* device_del: the attention button, the device stays for now. */
    set_msi_data(qts, 0x43);
    reply = qtest_qmp(qts, "{'execute': 'device_del', 'arguments': "
                      "{'id': 'hp1'}}");
    g_assert_true(json_object_has_member(reply, "return"));
    json_object_unref(reply);
    g_assert_true(qtest_get_irq(qts, 0x43));
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_ABP, ==, SLTSTA_ABP);
    g_assert_cmphex(child_vendor(qts), ==, 0x1d0c);

    /* A second device_del says the removal is pending. */
    reply = qtest_qmp(qts, "{'execute': 'device_del', 'arguments': "
                      "{'id': 'hp1'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                            "already in the process of unplug"));
    json_object_unref(reply);

    /* The guest releases it and powers the slot off: now it goes. */
    rp_writew(qts, SLTSTA, SLTSTA_ABP);
    set_msi_data(qts, 0x44);
    rp_writew(qts, SLTCTL, SLTCTL_ABPE | SLTCTL_PDCE | SLTCTL_HPIE |
              SLTCTL_DLLSCE | SLTCTL_AIC_OFF | SLTCTL_PIC_OFF | SLTCTL_PCC);
    ev = qtest_qmp_eventwait(qts, "DEVICE_DELETED");
    g_assert_cmpstr(json_object_get_string_member(
                        json_object_get_object_member(ev, "data"), "device"),
                    ==, "hp1");
    json_object_unref(ev);
    g_assert_true(qtest_get_irq(qts, 0x44));
    g_assert_cmphex(rp_readw(qts, SLTSTA) & (SLTSTA_PDS | SLTSTA_PDC), ==,
                    SLTSTA_PDC);
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, 0);
    g_assert_cmphex(child_vendor(qts), ==, 0xffff);

    /* The slot takes a device again. */
    rp_writew(qts, SLTSTA, 0xffff);
    qtest_qmp_device_add(qts, "pci-testdev", "hp2", "{'bus': 'rp1'}");
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_PDS, ==, SLTSTA_PDS);
    g_assert_cmphex(child_vendor(qts), ==, 0x1d0c);
    qtest_quit(qts);
}

static void test_unplug_powered_off_slot_is_immediate(void)
{
    QTestState *qts = qtest_init(RP_ARGS);

    guest_setup(qts, SLTCTL_PCC | SLTCTL_PIC_OFF);
    qtest_qmp_device_add(qts, "pci-testdev", "hp1", "{'bus': 'rp1'}");
    /* Never powered on: nothing in the guest uses it. */
    qtest_qmp_device_del(qts, "hp1");
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_PDS, ==, 0);
    g_assert_cmphex(child_vendor(qts), ==, 0xffff);
    qtest_quit(qts);
}

static void test_guest_never_answers(void)
{
    QTestState *qts = qtest_init(RP_ARGS " -device pci-testdev,bus=rp1,"
                                 "id=cold1");
    JsonObject *reply, *ev;

    /* Cold-plugged: present, powered and linked at reset. */
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_PDS, ==, SLTSTA_PDS);
    g_assert_cmphex(rp_readw(qts, SLTCTL) & SLTCTL_PCC, ==, 0);
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, LNKSTA_DLLLA);
    guest_setup(qts, SLTCTL_PIC_ON);

    reply = qtest_qmp(qts, "{'execute': 'device_del', 'arguments': "
                      "{'id': 'cold1'}}");
    g_assert_true(json_object_has_member(reply, "return"));
    json_object_unref(reply);
    /* The guest ignores the button: the device stays. */
    g_assert_null(qtest_qmp_eventwait_timeout(qts, "DEVICE_DELETED", 300));
    g_assert_cmphex(child_vendor(qts), ==, 0x1d0c);
    reply = qtest_qmp(qts, "{'execute': 'qom-get', 'arguments': "
                      "{'path': 'cold1', 'property': 'addr'}}");
    json_object_unref(reply);
    reply = qtest_qmp(qts, "{'execute': 'device_del', 'arguments': "
                      "{'id': 'cold1'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                            "already in the process of unplug"));
    json_object_unref(reply);

    /* A machine reset ends the pending removal. */
    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'system_reset'}"));
    ev = qtest_qmp_eventwait(qts, "DEVICE_DELETED");
    json_object_unref(ev);
    qtest_quit(qts);
}

/*
 * INTx behind the port: the device's INTA leaves the port as its INTA,
 * swizzled by the port's slot (4) onto root-bus line (4 + 0) % 4 = 0.
 */
static void test_intx_forwarded(void)
{
    QTestState *qts = qtest_init(RP_ARGS " -device pci-testdev,bus=rp1,"
                                 "id=cold1");
    const uint64_t bar0 = 0xe2000000;

    qtest_irq_intercept_out(qts, "/machine/pci-host");
    rp_writel(qts, 0x18, SEC_BUS << 16 | SEC_BUS << 8);
    qtest_writel(qts, cfg_addr(SEC_BUS, 0, 0x10), bar0);
    qtest_writew(qts, cfg_addr(SEC_BUS, 0, 0x04), 0x0002);    /* memory */
    g_assert_cmphex(qtest_readl(qts, bar0), ==, 0x54444e43);   /* magic */

    qtest_writel(qts, bar0 + 0x0c, 1);
    g_assert_true(qtest_get_irq(qts, 0));
    g_assert_false(qtest_get_irq(qts, 1));
    qtest_writel(qts, bar0 + 0x0c, 0);
    g_assert_false(qtest_get_irq(qts, 0));
    /* The device's Interrupt Disable gates it before the port. */
    qtest_writew(qts, cfg_addr(SEC_BUS, 0, 0x04), 0x0402);
    qtest_writel(qts, bar0 + 0x0c, 1);
    g_assert_false(qtest_get_irq(qts, 0));
    qtest_writew(qts, cfg_addr(SEC_BUS, 0, 0x04), 0x0002);
    g_assert_true(qtest_get_irq(qts, 0));
    qtest_quit(qts);
}

/* The real thing: the vfio-user NVMe server's controller behind the port. */
static void test_vfio_user_nvme(void)
{
    QNvmeServer srv;
    QTestState *qts;
    JsonObject *ev;

    qnvme_server_start(&srv, NULL);
    qts = qtest_init(RP_ARGS);
    guest_setup(qts, SLTCTL_PCC | SLTCTL_PIC_OFF);
    qtest_qmp_device_add(qts, "vfio-user-pci", "nvme1",
                         "{'bus': 'rp1', 'socket': '%s'}", srv.sock);
    g_assert_true(qtest_get_irq(qts, 0x41));
    rp_writew(qts, SLTSTA, SLTSTA_ABP);
    /* The controller answers config cycles for bus 1, device 0. */
    g_assert_cmphex(qtest_readw(qts, cfg_addr(SEC_BUS, 0, 0x0a)), ==,
                    0x0108);
    g_assert_cmphex(qtest_readb(qts, cfg_addr(SEC_BUS, 0, 0x09)), ==, 0x02);
    rp_writew(qts, SLTSTA, SLTSTA_PDC);
    rp_writew(qts, SLTCTL, SLTCTL_ABPE | SLTCTL_PDCE | SLTCTL_HPIE |
              SLTCTL_DLLSCE | SLTCTL_AIC_OFF | SLTCTL_PIC_ON);
    g_assert_cmphex(rp_readw(qts, LNKSTA) & LNKSTA_DLLLA, ==, LNKSTA_DLLLA);

    json_node_unref(qtest_qmp_assert_success(
        qts, "{'execute': 'device_del', 'arguments': {'id': 'nvme1'}}"));
    g_assert_cmphex(rp_readw(qts, SLTSTA) & SLTSTA_ABP, ==, SLTSTA_ABP);
    rp_writew(qts, SLTSTA, SLTSTA_ABP | SLTSTA_DLLSC);
    rp_writew(qts, SLTCTL, SLTCTL_ABPE | SLTCTL_PDCE | SLTCTL_HPIE |
              SLTCTL_DLLSCE | SLTCTL_AIC_OFF | SLTCTL_PIC_OFF | SLTCTL_PCC);
    ev = qtest_qmp_eventwait(qts, "DEVICE_DELETED");
    json_object_unref(ev);
    g_assert_cmphex(child_vendor(qts), ==, 0xffff);
    /* Conduit let go of the server cleanly; the VM runs on. */
    g_assert_true(qtest_probe_child(qts));
    qtest_quit(qts);
    qnvme_server_stop(&srv);
}

static void test_bad_bus(void)
{
    QTestState *qts = qtest_init(RP_ARGS);
    JsonObject *reply;

    /* The root port itself cannot be hot-plugged. */
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                      "{'driver': 'pcie-root-port', 'id': 'rp2'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    json_object_unref(reply);
    /* A link has device 0 only; the hint names the fix. */
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                      "{'driver': 'pci-testdev', 'id': 'hp0', 'bus': 'rp1', "
                      "'addr': '01.0'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply),
                            "a PCIe link has device 0 only"));
    json_object_unref(reply);
    /* One device per port: the slot's function 0 is taken. */
    qtest_qmp_device_add(qts, "pci-testdev", "hp1", "{'bus': 'rp1'}");
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                      "{'driver': 'pci-testdev', 'id': 'hp2', 'bus': 'rp1', "
                      "'addr': '00.0'}}");
    g_assert_nonnull(qtest_qmp_error_desc(reply));
    json_object_unref(reply);
    /* Without addr there is no free slot left either. */
    reply = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                      "{'driver': 'pci-testdev', 'id': 'hp3', 'bus': 'rp1'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(reply), "no slot available"));
    json_object_unref(reply);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pcie-root-port/config", test_config);
    g_test_add_func("/pcie-root-port/hotplug-sequence",
                    test_hotplug_sequence);
    g_test_add_func("/pcie-root-port/unplug-powered-off-slot-is-immediate",
                    test_unplug_powered_off_slot_is_immediate);
    g_test_add_func("/pcie-root-port/guest-never-answers",
                    test_guest_never_answers);
    g_test_add_func("/pcie-root-port/bad-bus", test_bad_bus);
    g_test_add_func("/pcie-root-port/vfio-user-nvme", test_vfio_user_nvme);
    g_test_add_func("/pcie-root-port/intx-forwarded", test_intx_forwarded);
    return g_test_run();
}
