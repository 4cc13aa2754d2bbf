/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Split virtqueue device side (virtqueue.h).  Written from the virtio 1.x
 * specification, section 2.7, with the layouts of <linux/virtio_ring.h>.
 */
#include "qemu/osdep.h"
#include "system/memory.h"
#include <linux/virtio_ring.h>
#include "hw/virtio/virtqueue.h"

/* Ring field offsets (2.7.6, 2.7.8). */
#define AVAIL_FLAGS 0
#define AVAIL_IDX 2
#define AVAIL_RING 4
#define USED_FLAGS 0
#define USED_IDX 2
#define USED_RING 4
#define USED_ELEM_SIZE 8
#define DESC_SIZE 16

static uint16_t ld16(const void *p)
{
    uint16_t v = __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
    return GUINT16_FROM_LE(v);
}

static void st16(void *p, uint16_t v)
{
    __atomic_store_n((uint16_t *)p, GUINT16_TO_LE(v), __ATOMIC_RELAXED);
}

static size_t avail_size(const VirtQueue *vq)
{
    return AVAIL_RING + 2 * (size_t)vq->num + 2;
}

static size_t used_size(const VirtQueue *vq)
{
    return USED_RING + USED_ELEM_SIZE * (size_t)vq->num + 2;
}

void virtqueue_reset_state(VirtQueue *vq)
{
    vq->last_avail_idx = 0;
    vq->used_idx = 0;
    vq->signalled_used = 0;
    vq->signalled_used_valid = false;
    vq->broken = false;
}

bool virtqueue_rings_valid(const VirtQueue *vq, const GuestMemMap *map)
{
    if (!vq->num || (vq->num & (vq->num - 1)) ||
        vq->num > VIRTQUEUE_MAX_SIZE) {
        return false;
    }
    if ((vq->desc & 15) || (vq->avail & 1) || (vq->used & 3)) {
        return false;
    }
    return guest_mem_translate(map, vq->desc, DESC_SIZE * (size_t)vq->num) &&
           guest_mem_translate(map, vq->avail, avail_size(vq)) &&
           guest_mem_translate(map, vq->used, used_size(vq));
}

static uint8_t *avail_ptr(const VirtQueue *vq, const GuestMemMap *map)
{
    return guest_mem_translate(map, vq->avail, avail_size(vq));
}

static uint8_t *used_ptr(const VirtQueue *vq, const GuestMemMap *map)
{
    return guest_mem_translate(map, vq->used, used_size(vq));
}

bool virtqueue_empty(VirtQueue *vq, const GuestMemMap *map)
{
    uint8_t *avail = avail_ptr(vq, map);

    if (!avail || vq->broken) {
        return true;
    }
    return ld16(avail + AVAIL_IDX) == vq->last_avail_idx;
}

typedef struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
} Desc;

static void desc_load(Desc *d, const uint8_t *p)
{
    struct vring_desc raw;

    memcpy(&raw, p, sizeof(raw));
    d->addr = GUINT64_FROM_LE(raw.addr);
    d->len = GUINT32_FROM_LE(raw.len);
    d->flags = GUINT16_FROM_LE(raw.flags);
    d->next = GUINT16_FROM_LE(raw.next);
}

/* Maps one buffer into elem, splitting it where RAM ranges end. */
static const char *map_buffer(VirtQueueElement *elem, const GuestMemMap *map,
                              const Desc *d)
{
    uint64_t addr = d->addr, left = d->len;
    bool write = d->flags & VRING_DESC_F_WRITE;

    if (!write && elem->in_num) {
        return "readable descriptor after a writable one";
    }
    if (addr + left < addr) {
        return "buffer wraps the address space";
    }
    while (left) {
        uint64_t contig = 0;
        void *p = guest_mem_translate_part(map, addr, left, &contig);
        unsigned n = elem->out_num + elem->in_num;

        if (!p) {
            return "buffer outside guest RAM";
        }
        if (n >= VIRTQUEUE_MAX_SG) {
            return "too many buffer pieces";
        }
        elem->sg[n].iov_base = p;
        elem->sg[n].iov_len = contig;
        if (write) {
            elem->in_num++;
            elem->in_len += contig;
        } else {
            elem->out_num++;
            elem->out_len += contig;
        }
        addr += contig;
        left -= contig;
    }
    return NULL;
}

/* Walks a table of max descriptors at table starting from index i. */
static const char *walk_table(VirtQueue *vq, const GuestMemMap *map,
                              VirtQueueElement *elem, const uint8_t *table,
                              unsigned max, unsigned i, bool in_indirect)
{
    unsigned count = 0;

    for (;;) {
        Desc d;
        const char *why;

        if (i >= max) {
            return "descriptor index out of range";
        }
        if (++count > max) {
            return "descriptor chain loops";
        }
        desc_load(&d, table + (size_t)i * DESC_SIZE);
        if (d.flags & VRING_DESC_F_INDIRECT) {
            const uint8_t *itable;

            if (in_indirect) {
                return "nested indirect table";
            }
            if (!vq->indirect) {
                return "indirect descriptor not negotiated";
            }
            if (d.flags & VRING_DESC_F_NEXT) {
                return "indirect descriptor with NEXT";
            }
            if (!d.len || d.len % DESC_SIZE ||
                d.len / DESC_SIZE > VIRTQUEUE_MAX_SG) {
                return "bad indirect table length";
            }
            itable = guest_mem_translate(map, d.addr, d.len);
            if (!itable) {
                return "indirect table outside guest RAM";
            }
            return walk_table(vq, map, elem, itable, d.len / DESC_SIZE, 0,
                              true);
        }
        why = map_buffer(elem, map, &d);
        if (why) {
            return why;
        }
        if (!(d.flags & VRING_DESC_F_NEXT)) {
            return NULL;
        }
        i = d.next;
    }
}

/*
 * A chain that could not be mapped: find its last descriptor by its
 * structure alone (bounded like walk_table, same indirect rules) and, if
 * that is a device-writable buffer whose last byte is guest RAM, where
 * a status byte would be.  NULL if the chain has no such end.
 */
static uint8_t *chain_tail_byte(VirtQueue *vq, const GuestMemMap *map,
                                const uint8_t *table, unsigned max,
                                unsigned i, bool in_indirect)
{
    for (unsigned count = 0;; count++) {
        Desc d;

        if (i >= max || count >= max) {
            return NULL;
        }
        desc_load(&d, table + (size_t)i * DESC_SIZE);
        if (d.flags & VRING_DESC_F_INDIRECT) {
            const uint8_t *itable;

            if (in_indirect || !vq->indirect ||
                (d.flags & VRING_DESC_F_NEXT) || !d.len ||
                d.len % DESC_SIZE || d.len / DESC_SIZE > VIRTQUEUE_MAX_SG) {
                return NULL;
            }
            itable = guest_mem_translate(map, d.addr, d.len);
            return itable ? chain_tail_byte(vq, map, itable,
                                            d.len / DESC_SIZE, 0, true)
                          : NULL;
        }
        if (!(d.flags & VRING_DESC_F_NEXT)) {
            if (!(d.flags & VRING_DESC_F_WRITE) || !d.len ||
                d.addr + d.len < d.addr) {
                return NULL;
            }
            return guest_mem_translate(map, d.addr + d.len - 1, 1);
        }
        i = d.next;
    }
}

VirtQueuePop virtqueue_pop(VirtQueue *vq, const GuestMemMap *map,
                           VirtQueueElement *elem, const char **why)
{
    uint8_t *avail, *desc;
    uint16_t avail_idx, head;
    const char *err;

    *why = NULL;
    if (vq->broken) {
        return VIRTQUEUE_BROKEN;
    }
    avail = avail_ptr(vq, map);
    desc = guest_mem_translate(map, vq->desc, DESC_SIZE * (size_t)vq->num);
    if (!avail || !desc) {
        *why = "rings not in guest RAM";
        vq->broken = true;
        return VIRTQUEUE_BROKEN;
    }
    avail_idx = ld16(avail + AVAIL_IDX);
    if (avail_idx == vq->last_avail_idx) {
        return VIRTQUEUE_EMPTY;
    }
    if ((uint16_t)(avail_idx - vq->last_avail_idx) > vq->num) {
        *why = "available index ran ahead of the ring";
        vq->broken = true;
        return VIRTQUEUE_BROKEN;
    }
    /* Read the ring entry only after seeing the index (2.7.13). */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    head = ld16(avail + AVAIL_RING + 2 * (vq->last_avail_idx % vq->num));
    if (head >= vq->num) {
        *why = "head descriptor index out of range";
        vq->broken = true;
        return VIRTQUEUE_BROKEN;
    }
    vq->last_avail_idx++;

    elem->index = head;
    elem->out_num = elem->in_num = 0;
    elem->out_len = elem->in_len = 0;
    elem->tail = NULL;
    err = walk_table(vq, map, elem, desc, vq->num, head, false);
    if (err) {
        *why = err;
        elem->tail = chain_tail_byte(vq, map, desc, vq->num, head, false);
        return VIRTQUEUE_BAD_CHAIN;
    }
    return VIRTQUEUE_OK;
}

bool virtqueue_push(VirtQueue *vq, const GuestMemMap *map, uint16_t index,
                    uint32_t len)
{
    uint8_t *used = used_ptr(vq, map);
    struct vring_used_elem e;
    uint8_t *slot;

    if (!used) {
        vq->broken = true;
        return false;
    }
    slot = used + USED_RING + USED_ELEM_SIZE * (vq->used_idx % vq->num);
    e.id = GUINT32_TO_LE(index);
    e.len = GUINT32_TO_LE(len);
    memcpy(slot, &e, sizeof(e));
    /* The element is visible before the index that publishes it. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    vq->used_idx++;
    st16(used + USED_IDX, vq->used_idx);
    /* Migration's dirty log: these pages changed without the memory API. */
    memory_ram_mark_dirty_hva(slot, sizeof(e));
    memory_ram_mark_dirty_hva(used + USED_IDX, 2);
    return true;
}

bool virtqueue_should_notify(VirtQueue *vq, const GuestMemMap *map)
{
    uint8_t *avail = avail_ptr(vq, map);
    uint16_t old, new, event;
    bool valid;

    if (!avail) {
        return false;
    }
    /* Our used index store before reading the driver's wishes. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!vq->event_idx) {
        return !(ld16(avail + AVAIL_FLAGS) & VRING_AVAIL_F_NO_INTERRUPT);
    }
    old = vq->signalled_used;
    valid = vq->signalled_used_valid;
    new = vq->signalled_used = vq->used_idx;
    vq->signalled_used_valid = true;
    if (!valid) {
        return true;
    }
    /* used_event sits after the available ring (2.7.10). */
    event = ld16(avail + AVAIL_RING + 2 * vq->num);
    return (uint16_t)(new - event - 1) < (uint16_t)(new - old);
}

bool virtqueue_enable_notify(VirtQueue *vq, const GuestMemMap *map)
{
    uint8_t *used = used_ptr(vq, map);

    if (vq->event_idx && used) {
        /* avail_event sits after the used ring. */
        st16(used + USED_RING + USED_ELEM_SIZE * vq->num, vq->last_avail_idx);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return !virtqueue_empty(vq, map);
}

void virtqueue_snapshot(const VirtQueue *vq, const GuestMemMap *map,
                        VirtQueueSnapshot *s)
{
    uint8_t *avail = vq->num && map ? avail_ptr(vq, map) : NULL;
    uint8_t *used = vq->num && map ? used_ptr(vq, map) : NULL;

    s->avail_idx = avail ? ld16(avail + AVAIL_IDX) : -1;
    s->avail_flags = avail ? ld16(avail + AVAIL_FLAGS) : -1;
    s->used_event = avail && vq->event_idx ?
                    ld16(avail + AVAIL_RING + 2 * vq->num) : -1;
    s->used_idx = used ? ld16(used + USED_IDX) : -1;
    s->avail_event = used && vq->event_idx ?
                     ld16(used + USED_RING + USED_ELEM_SIZE * vq->num) : -1;
    s->last_avail_idx = __atomic_load_n(&vq->last_avail_idx,
                                        __ATOMIC_RELAXED);
    s->device_used_idx = __atomic_load_n(&vq->used_idx, __ATOMIC_RELAXED);
    s->signalled_used = __atomic_load_n(&vq->signalled_used,
                                        __ATOMIC_RELAXED);
    s->signalled_used_valid = __atomic_load_n(&vq->signalled_used_valid,
                                              __ATOMIC_RELAXED);
    s->event_idx = vq->event_idx;
    s->broken = __atomic_load_n(&vq->broken, __ATOMIC_RELAXED);
}

size_t iov_size(const struct iovec *iov, unsigned n)
{
    size_t s = 0;

    for (unsigned i = 0; i < n; i++) {
        s += iov[i].iov_len;
    }
    return s;
}

static size_t iov_copy(const struct iovec *iov, unsigned n, size_t offset,
                       void *buf, size_t len, bool to_iov)
{
    size_t done = 0;

    for (unsigned i = 0; i < n && done < len; i++) {
        size_t l = iov[i].iov_len;

        if (offset >= l) {
            offset -= l;
            continue;
        }
        l = MIN(l - offset, len - done);
        if (to_iov) {
            memory_ram_mark_dirty_hva((uint8_t *)iov[i].iov_base + offset,
                                      l);
            memcpy((uint8_t *)iov[i].iov_base + offset, (uint8_t *)buf + done,
                   l);
        } else {
            memcpy((uint8_t *)buf + done, (uint8_t *)iov[i].iov_base + offset,
                   l);
        }
        done += l;
        offset = 0;
    }
    return done;
}

size_t iov_to_buf(const struct iovec *iov, unsigned n, size_t offset,
                  void *buf, size_t len)
{
    return iov_copy(iov, n, offset, buf, len, false);
}

size_t iov_from_buf(const struct iovec *iov, unsigned n, size_t offset,
                    const void *buf, size_t len)
{
    return iov_copy(iov, n, offset, (void *)buf, len, true);
}
