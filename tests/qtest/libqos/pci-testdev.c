/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos pci-testdev: see pci-testdev.h.
 */
#include "qemu/osdep.h"
#include "libqos/pci-pc.h"
#include "libqos/pci-testdev.h"

void qpci_testdev_start(QPCITestdev *t, const char *extra)
{
    t->qts = qtest_initf("-M pc -m 64M -device pci-testdev,addr=04.0%s",
                         extra ? extra : "");
    t->bus = qpci_new_pc(t->qts);
    t->dev = qpci_device_find(t->bus, TESTDEV_DEVFN);
    g_assert_nonnull(t->dev);
    t->bar0 = qpci_bar(t->dev, 0);
    g_assert_cmphex(t->bar0.addr, !=, QPCI_BAR_NONE);
}

void qpci_testdev_stop(QPCITestdev *t)
{
    qpci_device_free(t->dev);
    qpci_free_pc(t->bus);
    qtest_quit(t->qts);
}
