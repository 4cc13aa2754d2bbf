/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: IRQ indexes, SET_IRQS and vector triggering.
 *
 * Each vector holds the client's eventfd (or -1), a mask bit and a latched
 * pending bit.  irq_lock makes vfu_irq_trigger() safe from device threads
 * while the dispatch thread swaps eventfds.
 */
#include "qemu/osdep.h"
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "libvfu-internal.h"
#include "trace.h"

void vfu_irq_init(VfuCtx *ctx)
{
    g_mutex_init(&ctx->irq_lock);
}

bool vfu_setup_irq(VfuCtx *ctx, uint32_t index, uint32_t count,
                   Error **errp)
{
    VfuIrqIndex *irq;

    if (index >= VFIO_PCI_NUM_IRQS || index == VFIO_PCI_ERR_IRQ_INDEX ||
        index == VFIO_PCI_REQ_IRQ_INDEX) {
        error_setg(errp, "libvfu: IRQ index %u not supported", index);
        return false;
    }
    if (count > 2048 || (index == VFIO_PCI_INTX_IRQ_INDEX && count > 1) ||
        (index == VFIO_PCI_MSI_IRQ_INDEX && count > 32)) {
        error_setg(errp, "libvfu: IRQ index %u cannot have %u vectors",
                   index, count);
        return false;
    }
    g_mutex_lock(&ctx->irq_lock);
    irq = &ctx->irqs[index];
    for (uint32_t i = 0; i < irq->count; i++) {
        if (irq->vec[i].fd >= 0) {
            close(irq->vec[i].fd);
        }
    }
    g_free(irq->vec);
    irq->count = count;
    irq->vec = g_new0(VfuIrqVector, count);
    for (uint32_t i = 0; i < count; i++) {
        irq->vec[i].fd = -1;
    }
    g_mutex_unlock(&ctx->irq_lock);
    if (index == VFIO_PCI_INTX_IRQ_INDEX && ctx->config) {
        ctx->config[PCI_INTERRUPT_PIN] = count ? 1 : 0;
    }
    return true;
}

static void signal_fd(int fd)
{
    uint64_t one = 1;

    if (write(fd, &one, sizeof(one)) < 0) {
        /* EAGAIN means the counter is saturated: already signalled. */
    }
}

int vfu_irq_trigger(VfuCtx *ctx, uint32_t index, uint32_t vector)
{
    VfuIrqVector *v;
    int ret;

    if (index >= VFIO_PCI_NUM_IRQS) {
        return -EINVAL;
    }
    g_mutex_lock(&ctx->irq_lock);
    if (vector >= ctx->irqs[index].count) {
        ret = -EINVAL;
    } else {
        v = &ctx->irqs[index].vec[vector];
        if (v->fd < 0) {
            ret = -ENOENT;
        } else if (v->masked) {
            v->pending = true;
            ret = -EAGAIN;
        } else {
            signal_fd(v->fd);
            ret = 0;
        }
    }
    g_mutex_unlock(&ctx->irq_lock);
    trace_vfu_irq_trigger(index, vector, ret);
    return ret;
}

bool vfu_irq_ready(VfuCtx *ctx, uint32_t index, uint32_t vector)
{
    bool ready = false;

    if (index >= VFIO_PCI_NUM_IRQS) {
        return false;
    }
    g_mutex_lock(&ctx->irq_lock);
    if (vector < ctx->irqs[index].count) {
        VfuIrqVector *v = &ctx->irqs[index].vec[vector];

        ready = v->fd >= 0 && !v->masked;
    }
    g_mutex_unlock(&ctx->irq_lock);
    return ready;
}

int vfu_handle_get_irq_info(VfuCtx *ctx, VfuMsg *msg)
{
    struct vfio_irq_info info;

    if (msg->len != sizeof(info) || msg->nfds) {
        return -EINVAL;
    }
    memcpy(&info, msg->payload, sizeof(info));
    if (info.argsz < sizeof(info) || info.index >= VFIO_PCI_NUM_IRQS) {
        return -EINVAL;
    }
    info.argsz = sizeof(info);
    info.count = ctx->irqs[info.index].count;
    info.flags = 0;
    if (info.count) {
        info.flags = VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE;
        if (info.index == VFIO_PCI_MSI_IRQ_INDEX) {
            info.flags |= VFIO_IRQ_INFO_NORESIZE;
        }
    }
    g_byte_array_append(msg->reply, (const guint8 *)&info, sizeof(info));
    return 0;
}

/* Called with irq_lock held. */
static void vector_set_fd(VfuIrqVector *v, int fd)
{
    if (v->fd >= 0) {
        close(v->fd);
    }
    v->fd = fd;
    v->pending = false;
}

int vfu_handle_set_irqs(VfuCtx *ctx, VfuMsg *msg)
{
    const struct vfio_irq_set *s;
    VfuIrqIndex *irq;
    Error *err = NULL;
    int err_no = EINVAL;
    uint32_t index, data, action;
    int ret = 0;

    if (msg->len < VFIO_USER_IRQ_SET_SIZE) {
        return -EINVAL;
    }
    memcpy(&index, msg->payload + offsetof(struct vfio_irq_set, index),
           sizeof(index));
    if (index >= VFIO_PCI_NUM_IRQS) {
        return -EINVAL;
    }
    irq = &ctx->irqs[index];
    if (!vfio_user_irq_set_decode(msg->payload, msg->len, msg->nfds,
                                  irq->count, &s, &err_no, &err)) {
        trace_vfu_msg_error(msg->hdr.id, "DEVICE_SET_IRQS",
                            error_get_pretty(err));
        error_free(err);
        return -err_no;
    }
    trace_vfu_set_irqs(index, s->flags, s->start, s->count, msg->nfds);
    data = s->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    action = s->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;

    g_mutex_lock(&ctx->irq_lock);
    if (s->count == 0) {
        /* DATA_NONE|TRIGGER with count 0: disable the whole index. */
        for (uint32_t i = 0; i < irq->count; i++) {
            vector_set_fd(&irq->vec[i], -1);
            irq->vec[i].masked = false;
        }
    } else if (data == VFIO_IRQ_SET_DATA_EVENTFD) {
        if (action != VFIO_IRQ_SET_ACTION_TRIGGER) {
            ret = -ENOTSUP;
        } else {
            for (uint32_t i = 0; i < s->count; i++) {
                int fd = -1;

                if (msg->nfds) {
                    fd = msg->fds[i];
                    msg->fds[i] = -1;   /* now ours */
                }
                vector_set_fd(&irq->vec[s->start + i], fd);
            }
        }
    } else {
        for (uint32_t i = 0; i < s->count; i++) {
            VfuIrqVector *v = &irq->vec[s->start + i];

            if (data == VFIO_IRQ_SET_DATA_BOOL && !s->data[i]) {
                continue;
            }
            switch (action) {
            case VFIO_IRQ_SET_ACTION_TRIGGER:
                if (v->fd >= 0) {
                    signal_fd(v->fd);
                }
                break;
            case VFIO_IRQ_SET_ACTION_MASK:
                v->masked = true;
                break;
            case VFIO_IRQ_SET_ACTION_UNMASK:
                v->masked = false;
                if (v->pending && v->fd >= 0) {
                    signal_fd(v->fd);
                }
                v->pending = false;
                break;
            }
        }
    }
    g_mutex_unlock(&ctx->irq_lock);
    if (ret == 0 && ctx->ops->irq_update) {
        ctx->ops->irq_update(ctx, ctx->opaque, index, s->start,
                             s->count ? s->count : irq->count);
    }
    return ret;
}

void vfu_irq_release_all(VfuCtx *ctx)
{
    g_mutex_lock(&ctx->irq_lock);
    for (int i = 0; i < VFIO_PCI_NUM_IRQS; i++) {
        for (uint32_t v = 0; v < ctx->irqs[i].count; v++) {
            vector_set_fd(&ctx->irqs[i].vec[v], -1);
            ctx->irqs[i].vec[v].masked = false;
        }
    }
    g_mutex_unlock(&ctx->irq_lock);
}

void vfu_irq_free(VfuCtx *ctx)
{
    vfu_irq_release_all(ctx);
    for (int i = 0; i < VFIO_PCI_NUM_IRQS; i++) {
        g_free(ctx->irqs[i].vec);
        ctx->irqs[i].vec = NULL;
        ctx->irqs[i].count = 0;
    }
    g_mutex_clear(&ctx->irq_lock);
}
