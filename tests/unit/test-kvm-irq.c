/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The KVM interrupt API against the real /dev/kvm: KVM_SIGNAL_MSI, MSI
 * routes + irqfds (the vfio fast path), route updates and the errors for
 * bad GSIs.  Delivery is checked in the in-kernel LAPIC's IRR of a vCPU
 * that never runs, so no guest code is needed.
 */
#include "qemu/osdep.h"
#include <linux/kvm.h>
#include "accel/kvm/kvm-internal.h"
#include "system/kvm.h"
#include "system/accel.h"
#include "qemu/event_notifier.h"
#include "qapi/error.h"

#define APIC_SVR 0xf0
#define APIC_IRR 0x200
#define MSI_ADDR 0xfee00000ULL      /* destination APIC ID 0, physical */

static int vcpu_fd = -1;

/*
 * meson runs this through tests/functional/kvmtest.py, which runs it
 * where /dev/kvm works (inside an L1 guest if need be).  Run by hand
 * without it, it skips; with CI=true that is a failure.
 */
static bool have_kvm(void)
{
    const char *ci = getenv("CI");

    if (access("/dev/kvm", R_OK | W_OK)) {
        if (ci && !g_ascii_strcasecmp(ci, "true")) {
            g_test_message("no usable /dev/kvm, and CI=true");
            g_test_fail();
        } else {
            g_test_skip("no usable /dev/kvm (kvmtest.py runs it nested)");
        }
        return false;
    }
    return true;
}

/* One vCPU with a software-enabled LAPIC, to receive the interrupts. */
static void setup_once(void)
{
    struct kvm_lapic_state lapic;
    uint32_t svr = 0x1ff;

    if (vcpu_fd >= 0) {
        return;
    }
    g_assert_true(accel_init_machine(accel_find("kvm"), NULL, NULL,
                                     &error_abort));
    g_assert_true(kvm_enabled());
    g_assert_true(kvm_msi_via_irqfd_enabled());
    vcpu_fd = ioctl(kvm_state->vm_fd, KVM_CREATE_VCPU, 0);
    g_assert_cmpint(vcpu_fd, >=, 0);
    g_assert_cmpint(ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic), ==, 0);
    memcpy(lapic.regs + APIC_SVR, &svr, 4);
    g_assert_cmpint(ioctl(vcpu_fd, KVM_SET_LAPIC, &lapic), ==, 0);
}

static bool irr_bit(unsigned vector)
{
    struct kvm_lapic_state lapic;
    uint32_t reg;

    g_assert_cmpint(ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic), ==, 0);
    memcpy(&reg, lapic.regs + APIC_IRR + (vector / 32) * 0x10, 4);
    return reg & (1u << (vector % 32));
}

/* Clears the IRR by writing the LAPIC state back without the bit. */
static void clear_irr(void)
{
    struct kvm_lapic_state lapic;

    g_assert_cmpint(ioctl(vcpu_fd, KVM_GET_LAPIC, &lapic), ==, 0);
    for (int i = 0; i < 8; i++) {
        memset(lapic.regs + APIC_IRR + i * 0x10, 0, 4);
    }
    g_assert_cmpint(ioctl(vcpu_fd, KVM_SET_LAPIC, &lapic), ==, 0);
}

/* irqfd injection may complete on a kernel worker: poll for a while. */
static bool wait_irr_bit(unsigned vector)
{
    for (int i = 0; i < 2000; i++) {
        if (irr_bit(vector)) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

static void test_signal_msi(void)
{
    if (!have_kvm()) {
        return;
    }
    setup_once();
    clear_irr();
    g_assert_false(irr_bit(0x51));
    g_assert_true(kvm_irqchip_send_msi(MSI_ADDR, 0x51, &error_abort));
    g_assert_true(irr_bit(0x51));
}

static void test_irqfd_route(void)
{
    EventNotifier n;
    int virq;

    if (!have_kvm()) {
        return;
    }
    setup_once();
    clear_irr();
    g_assert_cmpint(event_notifier_init(&n, 0), ==, 0);
    virq = kvm_irqchip_add_msi_route(MSI_ADDR, 0x62, &error_abort);
    g_assert_cmpint(virq, >=, 24);
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
    g_assert_true(kvm_irqchip_add_irqfd_notifier(&n, virq, &error_abort));

    /* The device side: just signal the eventfd. */
    event_notifier_set(&n);
    g_assert_true(wait_irr_bit(0x62));

    /* A new message for the same GSI retargets the vector. */
    clear_irr();
    g_assert_true(kvm_irqchip_update_msi_route(virq, MSI_ADDR, 0x63,
                                               &error_abort));
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
    event_notifier_set(&n);
    g_assert_true(wait_irr_bit(0x63));
    g_assert_false(irr_bit(0x62));

    /* Detached: signalling no longer injects anything. */
    clear_irr();
    g_assert_true(kvm_irqchip_remove_irqfd_notifier(&n, virq, &error_abort));
    kvm_irqchip_release_virq(virq);
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
    event_notifier_set(&n);
    g_usleep(20 * 1000);
    g_assert_false(irr_bit(0x63));
    event_notifier_cleanup(&n);
}

static void test_bad_gsi(void)
{
    EventNotifier n;
    Error *err = NULL;
    int a, b;

    if (!have_kvm()) {
        return;
    }
    setup_once();
    g_assert_cmpint(event_notifier_init(&n, 0), ==, 0);
    /* Never allocated, an IOAPIC pin, negative: all refused. */
    g_assert_false(kvm_irqchip_update_msi_route(4000, MSI_ADDR, 1, &err));
    g_assert_nonnull(err);
    g_clear_pointer(&err, error_free);
    g_assert_false(kvm_irqchip_update_msi_route(4, MSI_ADDR, 1, &err));
    g_assert_nonnull(err);
    g_clear_pointer(&err, error_free);
    g_assert_false(kvm_irqchip_add_irqfd_notifier(&n, -1, &err));
    g_assert_nonnull(err);
    g_clear_pointer(&err, error_free);
    kvm_irqchip_release_virq(-5);
    kvm_irqchip_release_virq(100000);

    /* A released GSI is reused and cannot be attached once freed. */
    a = kvm_irqchip_add_msi_route(MSI_ADDR, 0x70, &error_abort);
    kvm_irqchip_release_virq(a);
    g_assert_false(kvm_irqchip_add_irqfd_notifier(&n, a, &err));
    g_assert_nonnull(err);
    g_clear_pointer(&err, error_free);
    b = kvm_irqchip_add_msi_route(MSI_ADDR, 0x71, &error_abort);
    g_assert_cmpint(a, ==, b);
    kvm_irqchip_release_virq(b);
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
    event_notifier_cleanup(&n);
}

static void test_table_full(void)
{
    g_autoptr(GArray) virqs = g_array_new(false, false, sizeof(int));
    Error *err = NULL;
    int v;

    if (!have_kvm()) {
        return;
    }
    setup_once();
    while ((v = kvm_irqchip_add_msi_route(MSI_ADDR, 0x40, &err)) >= 0) {
        g_array_append_val(virqs, v);
        g_assert_cmpuint(virqs->len, <=, 4096);
    }
    g_assert_nonnull(err);
    g_assert_nonnull(strstr(error_get_pretty(err), "full"));
    error_free(err);
    g_assert_cmpuint(virqs->len, >, 100);
    /* KVM takes the largest table we can build. */
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
    for (guint i = 0; i < virqs->len; i++) {
        kvm_irqchip_release_virq(g_array_index(virqs, int, i));
    }
    g_assert_true(kvm_irqchip_commit_routes(&error_abort));
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/kvm/irq/signal-msi-reaches-lapic", test_signal_msi);
    g_test_add_func("/kvm/irq/irqfd-route-injects-and-retargets",
                    test_irqfd_route);
    g_test_add_func("/kvm/irq/bad-gsi-refused", test_bad_gsi);
    g_test_add_func("/kvm/irq/full-routing-table", test_table_full);
    ret = g_test_run();
    if (vcpu_fd >= 0) {
        close(vcpu_fd);
    }
    accel_cleanup();
    return ret;
}
