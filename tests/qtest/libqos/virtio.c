/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqos virtio-pci driver (virtio.h).
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include <linux/virtio_config.h>
#include <linux/virtio_pci.h>
#include <linux/virtio_ring.h>
#include "libqos/virtio.h"

uint64_t qguest_alloc(QGuestAlloc *a, uint64_t size, uint64_t align)
{
    uint64_t addr = (a->next + align - 1) & ~(align - 1);

    g_assert_cmpuint(addr + size, <=, a->end);
    a->next = addr + size;
    return addr;
}

QVirtioPCI *qvirtio_pci_new(QPCIBus *bus, int devfn)
{
    QVirtioPCI *v = g_new0(QVirtioPCI, 1);
    uint8_t pos = 0;
    int bar = -1;

    v->pdev = qpci_device_find(bus, devfn);
    g_assert_nonnull(v->pdev);
    v->qts = bus->qts;
    qpci_device_enable(v->pdev);
    while ((pos = qpci_find_capability(v->pdev, PCI_CAP_ID_VNDR, pos))) {
        uint8_t type = qpci_config_readb(v->pdev, pos + VIRTIO_PCI_CAP_CFG_TYPE);
        uint32_t off = qpci_config_readl(v->pdev, pos + VIRTIO_PCI_CAP_OFFSET);

        bar = qpci_config_readb(v->pdev, pos + VIRTIO_PCI_CAP_BAR);
        switch (type) {
        case VIRTIO_PCI_CAP_COMMON_CFG:
            v->common = off;
            break;
        case VIRTIO_PCI_CAP_ISR_CFG:
            v->isr = off;
            break;
        case VIRTIO_PCI_CAP_DEVICE_CFG:
            v->device = off;
            break;
        case VIRTIO_PCI_CAP_NOTIFY_CFG:
            v->notify = off;
            v->notify_mult = qpci_config_readl(v->pdev,
                                               pos + VIRTIO_PCI_NOTIFY_CAP_MULT);
            break;
        }
    }
    g_assert_cmpint(bar, >=, 0);
    v->bar = qpci_bar(v->pdev, bar);
    g_assert_cmphex(v->bar.addr, !=, QPCI_BAR_NONE);
    return v;
}

void qvirtio_pci_free(QVirtioPCI *v)
{
    qpci_device_free(v->pdev);
    g_free(v);
}

static uint64_t common(QVirtioPCI *v, unsigned off)
{
    return v->common + off;
}

uint8_t qvirtio_get_status(QVirtioPCI *v)
{
    return qpci_io_readb(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_STATUS));
}

void qvirtio_set_status(QVirtioPCI *v, uint8_t status)
{
    qpci_io_writeb(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_STATUS),
                   status);
}

void qvirtio_reset(QVirtioPCI *v)
{
    qvirtio_set_status(v, 0);
    g_assert_cmpuint(qvirtio_get_status(v), ==, 0);
}

uint64_t qvirtio_device_features(QVirtioPCI *v)
{
    uint64_t f;

    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_DFSELECT), 0);
    f = qpci_io_readl(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_DF));
    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_DFSELECT), 1);
    f |= (uint64_t)qpci_io_readl(v->pdev, v->bar,
                                 common(v, VIRTIO_PCI_COMMON_DF)) << 32;
    return f;
}

void qvirtio_set_driver_features(QVirtioPCI *v, uint64_t features)
{
    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_GFSELECT), 0);
    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_GF),
                   (uint32_t)features);
    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_GFSELECT), 1);
    qpci_io_writel(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_GF),
                   features >> 32);
}

bool qvirtio_negotiate(QVirtioPCI *v, uint64_t features)
{
    uint8_t s = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER;

    qvirtio_reset(v);
    qvirtio_set_status(v, VIRTIO_CONFIG_S_ACKNOWLEDGE);
    qvirtio_set_status(v, s);
    qvirtio_set_driver_features(v, features);
    qvirtio_set_status(v, s | VIRTIO_CONFIG_S_FEATURES_OK);
    return qvirtio_get_status(v) & VIRTIO_CONFIG_S_FEATURES_OK;
}

uint16_t qvirtio_num_queues(QVirtioPCI *v)
{
    return qpci_io_readw(v->pdev, v->bar, common(v, VIRTIO_PCI_COMMON_NUMQ));
}

uint8_t qvirtio_config_readb(QVirtioPCI *v, uint64_t off)
{
    return qpci_io_readb(v->pdev, v->bar, v->device + off);
}

uint32_t qvirtio_config_readl(QVirtioPCI *v, uint64_t off)
{
    return qpci_io_readl(v->pdev, v->bar, v->device + off);
}

uint64_t qvirtio_config_readq(QVirtioPCI *v, uint64_t off)
{
    return qvirtio_config_readl(v, off) |
           (uint64_t)qvirtio_config_readl(v, off + 4) << 32;
}

QVirtQueue *qvirtqueue_setup(QVirtioPCI *v, QGuestAlloc *a, uint16_t index,
                             uint16_t num, uint16_t vector)
{
    QVirtQueue *vq = g_new0(QVirtQueue, 1);
    QPCIDevice *d = v->pdev;
    uint16_t max;

    vq->vdev = v;
    vq->index = index;
    qpci_io_writew(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_SELECT), index);
    max = qpci_io_readw(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_SIZE));
    g_assert_cmpuint(max, >=, num);
    vq->num = num;
    vq->desc = qguest_alloc(a, 16 * num, 4096);
    vq->avail = qguest_alloc(a, 6 + 2 * num, 4096);
    vq->used = qguest_alloc(a, 6 + 8 * num, 4096);
    qtest_memset(v->qts, vq->desc, 0, 16 * num);
    qtest_memset(v->qts, vq->avail, 0, 6 + 2 * num);
    qtest_memset(v->qts, vq->used, 0, 6 + 8 * num);
    qpci_io_writew(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_SIZE), num);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_DESCLO), vq->desc);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_DESCHI), 0);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_AVAILLO),
                   vq->avail);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_AVAILHI), 0);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_USEDLO), vq->used);
    qpci_io_writel(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_USEDHI), 0);
    qpci_io_writew(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_MSIX), vector);
    vq->notify_off = qpci_io_readw(d, v->bar,
                                   common(v, VIRTIO_PCI_COMMON_Q_NOFF));
    qpci_io_writew(d, v->bar, common(v, VIRTIO_PCI_COMMON_Q_ENABLE), 1);
    g_assert_cmpuint(qpci_io_readw(d, v->bar,
                                   common(v, VIRTIO_PCI_COMMON_Q_ENABLE)),
                     ==, 1);
    return vq;
}

void qvirtqueue_free(QVirtQueue *vq)
{
    g_free(vq);
}

uint16_t qvirtqueue_set_desc(QVirtQueue *vq, uint16_t i, uint64_t addr,
                             uint32_t len, uint16_t flags, uint16_t next)
{
    uint64_t d = vq->desc + 16ull * i;
    QTestState *qts = vq->vdev->qts;

    qtest_writeq(qts, d, addr);
    qtest_writel(qts, d + 8, len);
    qtest_writew(qts, d + 12, flags);
    qtest_writew(qts, d + 14, next);
    return i;
}

uint16_t qvirtqueue_add(QVirtQueue *vq, uint64_t addr, uint32_t len,
                        bool write, bool next)
{
    uint16_t i = vq->free_head;

    vq->free_head = (i + 1) % vq->num;
    return qvirtqueue_set_desc(vq, i, addr, len,
                               (write ? VRING_DESC_F_WRITE : 0) |
                               (next ? VRING_DESC_F_NEXT : 0),
                               next ? vq->free_head : 0);
}

void qvirtqueue_make_available(QVirtQueue *vq, uint16_t head)
{
    QTestState *qts = vq->vdev->qts;

    qtest_writew(qts, vq->avail + 4 + 2 * (vq->avail_idx % vq->num), head);
    vq->avail_idx++;
    qtest_writew(qts, vq->avail + 2, vq->avail_idx);
}

void qvirtqueue_kick(QVirtQueue *vq)
{
    QVirtioPCI *v = vq->vdev;

    qpci_io_writew(v->pdev, v->bar,
                   v->notify + (uint64_t)vq->notify_off * v->notify_mult,
                   vq->index);
}

uint16_t qvirtqueue_used_idx(QVirtQueue *vq)
{
    return qtest_readw(vq->vdev->qts, vq->used + 2);
}

bool qvirtqueue_wait_used(QVirtQueue *vq, uint32_t *id, uint32_t *len,
                          uint64_t timeout_us)
{
    gint64 deadline = g_get_monotonic_time() + timeout_us;
    QTestState *qts = vq->vdev->qts;

    while (qvirtqueue_used_idx(vq) == vq->last_used) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    {
        uint64_t e = vq->used + 4 + 8 * (vq->last_used % vq->num);

        if (id) {
            *id = qtest_readl(qts, e);
        }
        if (len) {
            *len = qtest_readl(qts, e + 4);
        }
    }
    vq->last_used++;
    return true;
}
