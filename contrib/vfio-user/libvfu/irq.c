/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvfu: IRQ indexes, SET_IRQS and vector triggering.
 *
 * Each vector holds the client's eventfd (or -1), a mask bit and a latched
 * pending bit.  irq_lock makes vfu_irq_trigger() safe from device threads
 * while the dispatch thread swaps eventfds.
 *
 * The semantics follow Linux's vfio-pci, which clients are written
 * against:
 *  - INTx is level-like and AUTOMASKED: signalling it masks it, and the
 *    client unmasks it after the guest's EOI, either with SET_IRQS
 *    ACTION_UNMASK (DATA_NONE/DATA_BOOL) or by signalling the unmask
 *    eventfd it registered with ACTION_UNMASK|DATA_EVENTFD (QEMU does so
 *    under KVM, as a resample fd).  A trigger while masked is latched and
 *    delivered on unmask.
 *  - MSI and MSI-X vectors may be masked and unmasked with DATA_NONE or
 *    DATA_BOOL; masked triggers are latched.
 *  - The error and request indexes only have a trigger eventfd.
 *
 * An IRQ fd comes from the client, so it is hostile: only a real eventfd
 * is accepted, it is switched to non-blocking mode, and signalling never
 * waits (a saturated counter is already signalled).
 */
#include "qemu/osdep.h"
#include <poll.h>
#include <linux/pci_regs.h>
#include "qapi/error.h"
#include "libvfu-internal.h"
#include "trace.h"

void vfu_irq_init(VfuCtx *ctx)
{
    g_mutex_init(&ctx->irq_lock);
}

static uint32_t irq_max_count(uint32_t index)
{
    switch (index) {
    case VFIO_PCI_INTX_IRQ_INDEX:
    case VFIO_PCI_ERR_IRQ_INDEX:
    case VFIO_PCI_REQ_IRQ_INDEX:
        return 1;
    case VFIO_PCI_MSI_IRQ_INDEX:
        return 32;
    case VFIO_PCI_MSIX_IRQ_INDEX:
        return 2048;
    default:
        return 0;
    }
}

static void vector_set_fd(VfuIrqVector *v, int fd);
static void vector_set_unmask_fd(VfuIrqVector *v, int fd);

bool vfu_setup_irq(VfuCtx *ctx, uint32_t index, uint32_t count,
                   Error **errp)
{
    VfuIrqIndex *irq;

    if (index >= VFIO_PCI_NUM_IRQS) {
        error_setg(errp, "libvfu: IRQ index %u not supported", index);
        return false;
    }
    if (count > irq_max_count(index)) {
        error_setg(errp, "libvfu: IRQ index %u cannot have %u vectors",
                   index, count);
        return false;
    }
    g_mutex_lock(&ctx->irq_lock);
    irq = &ctx->irqs[index];
    for (uint32_t i = 0; i < irq->count; i++) {
        vector_set_fd(&irq->vec[i], -1);
        vector_set_unmask_fd(&irq->vec[i], -1);
    }
    g_free(irq->vec);
    irq->count = count;
    irq->vec = g_new0(VfuIrqVector, count);
    for (uint32_t i = 0; i < count; i++) {
        irq->vec[i].fd = -1;
        irq->vec[i].unmask_fd = -1;
    }
    g_mutex_unlock(&ctx->irq_lock);
    if (index == VFIO_PCI_INTX_IRQ_INDEX && ctx->config) {
        ctx->config[PCI_INTERRUPT_PIN] = count ? 1 : 0;
    }
    return true;
}

bool vfu_fd_is_eventfd(int fd)
{
    static const char want[] = "anon_inode:[eventfd]";
    char path[64], target[sizeof(want) + 1];
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    n = readlink(path, target, sizeof(target));
    return n == sizeof(want) - 1 && !memcmp(target, want, n);
}

/* Never waits: called with irq_lock held, possibly on a device thread. */
static void signal_fd(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    uint64_t one = 1;

    /*
     * The fd is non-blocking, but its flags are shared with the client,
     * which could clear O_NONBLOCK again: look before writing.  Not
     * writable means the counter is saturated, i.e. already signalled.
     */
    if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLOUT)) {
        return;
    }
    if (write(fd, &one, sizeof(one)) < 0) {
        /* EAGAIN: saturated meanwhile, which is signalled too. */
    }
}

/* Signals an unmasked vector; INTx masks itself when it fires. */
static void vector_fire(uint32_t index, VfuIrqVector *v)
{
    signal_fd(v->fd);
    if (index == VFIO_PCI_INTX_IRQ_INDEX) {
        v->masked = true;
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
            vector_fire(index, v);
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
        info.flags = VFIO_IRQ_INFO_EVENTFD;
        switch (info.index) {
        case VFIO_PCI_INTX_IRQ_INDEX:
            info.flags |= VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED;
            break;
        case VFIO_PCI_MSI_IRQ_INDEX:
            info.flags |= VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_NORESIZE;
            break;
        case VFIO_PCI_MSIX_IRQ_INDEX:
            info.flags |= VFIO_IRQ_INFO_MASKABLE;
            break;
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

/* Called with irq_lock held (or on the dispatch thread before use). */
static void vector_set_unmask_fd(VfuIrqVector *v, int fd)
{
    if (v->unmask_fd >= 0) {
        close(v->unmask_fd);
    }
    v->unmask_fd = fd;
}

/* Called with irq_lock held. */
static void vector_unmask(uint32_t index, VfuIrqVector *v)
{
    v->masked = false;
    if (v->pending && v->fd >= 0) {
        v->pending = false;
        vector_fire(index, v);
    }
}

/* Which actions and data types an index accepts (as vfio-pci does). */
static bool set_irqs_supported(uint32_t index, uint32_t action,
                               uint32_t data)
{
    if (action == VFIO_IRQ_SET_ACTION_TRIGGER) {
        return true;
    }
    switch (index) {
    case VFIO_PCI_INTX_IRQ_INDEX:
        /* No mask eventfd: vfio-pci has none either. */
        return !(action == VFIO_IRQ_SET_ACTION_MASK &&
                 data == VFIO_IRQ_SET_DATA_EVENTFD);
    case VFIO_PCI_MSI_IRQ_INDEX:
    case VFIO_PCI_MSIX_IRQ_INDEX:
        return data != VFIO_IRQ_SET_DATA_EVENTFD;
    default:
        return false;
    }
}

int vfu_handle_set_irqs(VfuCtx *ctx, VfuMsg *msg)
{
    const struct vfio_irq_set *s;
    VfuIrqIndex *irq;
    Error *err = NULL;
    int err_no = EINVAL;
    uint32_t index, data, action;

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
    if (s->count && !set_irqs_supported(index, action, data)) {
        trace_vfu_msg_error(msg->hdr.id, "DEVICE_SET_IRQS",
                            "action not supported for this index");
        return -EINVAL;
    }
    /* Validate every fd before changing anything. */
    for (size_t i = 0; i < msg->nfds; i++) {
        int fl;

        if (!vfu_fd_is_eventfd(msg->fds[i])) {
            trace_vfu_irq_fd_refused(index, s->start + i);
            return -EINVAL;
        }
        fl = fcntl(msg->fds[i], F_GETFL);
        if (fl < 0 || fcntl(msg->fds[i], F_SETFL, fl | O_NONBLOCK) < 0) {
            return -EINVAL;
        }
    }

    g_mutex_lock(&ctx->irq_lock);
    if (s->count == 0) {
        /* DATA_NONE|TRIGGER with count 0: disable the whole index. */
        for (uint32_t i = 0; i < irq->count; i++) {
            vector_set_fd(&irq->vec[i], -1);
            vector_set_unmask_fd(&irq->vec[i], -1);
            irq->vec[i].masked = false;
        }
    } else if (data == VFIO_IRQ_SET_DATA_EVENTFD) {
        for (uint32_t i = 0; i < s->count; i++) {
            VfuIrqVector *v = &irq->vec[s->start + i];
            int fd = -1;

            if (msg->nfds) {
                fd = msg->fds[i];
                msg->fds[i] = -1;   /* now ours */
            }
            if (action == VFIO_IRQ_SET_ACTION_UNMASK) {
                vector_set_unmask_fd(v, fd);
            } else {
                vector_set_fd(v, fd);
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
                /* Loopback: signal the eventfd, masked or not. */
                if (v->fd >= 0) {
                    signal_fd(v->fd);
                }
                break;
            case VFIO_IRQ_SET_ACTION_MASK:
                v->masked = true;
                break;
            case VFIO_IRQ_SET_ACTION_UNMASK:
                vector_unmask(index, v);
                break;
            }
        }
    }
    g_mutex_unlock(&ctx->irq_lock);
    if (ctx->ops->irq_update) {
        ctx->ops->irq_update(ctx, ctx->opaque, index, s->start,
                             s->count ? s->count : irq->count);
    }
    return 0;
}

int vfu_irq_unmask_poll_fd(VfuCtx *ctx)
{
    VfuIrqIndex *intx = &ctx->irqs[VFIO_PCI_INTX_IRQ_INDEX];

    /* Only the dispatch thread changes unmask fds: no lock needed. */
    return intx->count ? intx->vec[0].unmask_fd : -1;
}

void vfu_irq_service_unmask(VfuCtx *ctx)
{
    VfuIrqIndex *intx = &ctx->irqs[VFIO_PCI_INTX_IRQ_INDEX];
    uint64_t v;
    int fd = vfu_irq_unmask_poll_fd(ctx);

    if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v)) {
        return;     /* Spurious: the fd is non-blocking. */
    }
    g_mutex_lock(&ctx->irq_lock);
    vector_unmask(VFIO_PCI_INTX_IRQ_INDEX, &intx->vec[0]);
    g_mutex_unlock(&ctx->irq_lock);
    trace_vfu_irq_unmask_eventfd(fd);
    if (ctx->ops->irq_update) {
        ctx->ops->irq_update(ctx, ctx->opaque, VFIO_PCI_INTX_IRQ_INDEX, 0, 1);
    }
}

void vfu_irq_release_all(VfuCtx *ctx)
{
    g_mutex_lock(&ctx->irq_lock);
    for (int i = 0; i < VFIO_PCI_NUM_IRQS; i++) {
        for (uint32_t v = 0; v < ctx->irqs[i].count; v++) {
            vector_set_fd(&ctx->irqs[i].vec[v], -1);
            vector_set_unmask_fd(&ctx->irqs[i].vec[v], -1);
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
