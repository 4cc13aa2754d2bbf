/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the split virtqueue parser (hw/virtio/virtqueue.c)
 * on a fuzzed 64 KiB guest in two RAM ranges.
 *
 * Input: 8 bytes of queue set-up (size exponent, ring offsets, features),
 * then the guest RAM image.  Every element popped must map only bytes
 * inside guest RAM; push and notification logic run on what was popped.
 */
#include "qemu/osdep.h"
#include "hw/virtio/virtqueue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RAM_GPA 0x100000ull
#define RAM_SIZE 0x10000ull

static uint8_t ram[RAM_SIZE];
static VirtQueueElement elem;

static void check_inside(const struct iovec *v)
{
    uint8_t *p = v->iov_base;

    assert(p >= ram && p + v->iov_len <= ram + RAM_SIZE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GuestMemRange r[2] = {
        { RAM_GPA, 0x8000, ram },
        { RAM_GPA + 0x9000, RAM_SIZE - 0x8000, ram + 0x8000 },
    };
    GuestMemMap *map;
    VirtQueue vq = { 0 };

    if (size < 8) {
        return 0;
    }
    memset(ram, 0, sizeof(ram));
    memcpy(ram, data + 8, MIN(size - 8, sizeof(ram)));
    vq.num = 1u << (data[0] % 11);
    vq.desc = RAM_GPA + (data[1] << 8);
    vq.avail = RAM_GPA + (data[2] << 8);
    vq.used = RAM_GPA + (data[3] << 8);
    vq.indirect = data[4] & 1;
    vq.event_idx = data[4] & 2;
    vq.last_avail_idx = data[5] | data[6] << 8;
    vq.used_idx = vq.last_avail_idx;
    map = guest_mem_map_new(r, 2);
    if (virtqueue_rings_valid(&vq, map)) {
        for (int i = 0; i < 64; i++) {
            const char *why;
            VirtQueuePop res = virtqueue_pop(&vq, map, &elem, &why);
            size_t out = 0, in = 0;

            if (res == VIRTQUEUE_EMPTY || res == VIRTQUEUE_BROKEN) {
                assert(res != VIRTQUEUE_BROKEN || why);
                break;
            }
            assert(elem.index < vq.num);
            assert(elem.out_num + elem.in_num <= VIRTQUEUE_MAX_SG);
            for (unsigned k = 0; k < elem.out_num + elem.in_num; k++) {
                check_inside(&elem.sg[k]);
                *(k < elem.out_num ? &out : &in) += elem.sg[k].iov_len;
            }
            assert(out == elem.out_len && in == elem.in_len);
            assert(res == VIRTQUEUE_OK || why);
            virtqueue_push(&vq, map, elem.index, elem.in_len);
            virtqueue_should_notify(&vq, map);
        }
        virtqueue_enable_notify(&vq, map);
    }
    guest_mem_map_unref(map);
    return 0;
}
