/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the shared vfio-user codecs (util/vfio-user-codec.c)
 * on arbitrary payloads.  Byte 0 picks the decoder, byte 1 the number of
 * fds that "arrived" with the message, the rest is the payload.  After a
 * successful decode the target touches everything the decoder vouched
 * for, so an over-promise shows up as an ASan report.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "vfio-user/protocol.h"
#include "qemu/vfio-region-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

static void touch(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint8_t x = 0;

    for (size_t i = 0; i < len; i++) {
        x ^= b[i];
    }
    sink = x;
}

static void fuzz_version(const void *buf, size_t len)
{
    VFIOUserCaps caps, ours, out, again;
    g_autofree void *rebuilt = NULL;
    uint16_t major, minor, major2, minor2;
    size_t rlen;

    if (!vfio_user_version_parse(buf, len, &major, &minor, &caps, NULL)) {
        return;
    }
    /* What we accepted must survive our own encoder unchanged. */
    rebuilt = vfio_user_version_build(major, minor, &caps, &rlen);
    g_assert(vfio_user_version_parse(rebuilt, rlen, &major2, &minor2,
                                     &again, NULL));
    g_assert(major2 == major && minor2 == minor);
    g_assert(caps.max_msg_fds == again.max_msg_fds);
    g_assert(caps.max_data_xfer_size == again.max_data_xfer_size);
    g_assert(caps.max_dma_maps == again.max_dma_maps);
    g_assert(caps.pgsizes == again.pgsizes);
    vfio_user_caps_init_default(&ours);
    if (vfio_user_caps_negotiate(&ours, &caps, &out, NULL)) {
        uint64_t granule = out.pgsizes & -out.pgsizes;

        g_assert(out.max_msg_fds <= ours.max_msg_fds);
        g_assert(out.max_data_xfer_size <= ours.max_data_xfer_size);
        /* Maps in a granule both sides can map; larger sizes both name. */
        g_assert(out.pgsizes);
        g_assert(granule >= (ours.pgsizes & -ours.pgsizes) &&
                 granule >= (caps.pgsizes & -caps.pgsizes));
        g_assert((out.pgsizes & ~granule & ~(ours.pgsizes & caps.pgsizes))
                 == 0);
    }
}

static void fuzz_region_info(const void *buf, size_t len)
{
    static const uint16_t ids[] = {
        VFIO_REGION_INFO_CAP_SPARSE_MMAP, VFIO_REGION_INFO_CAP_TYPE,
        VFIO_REGION_INFO_CAP_MSIX_MAPPABLE, 0, 0xffff,
    };

    const struct vfio_region_info *info = buf;

    /* A reply as the client sees it: the one chain definition decides. */
    if (!vfio_region_info_check(info, len, NULL)) {
        return;
    }
    for (size_t i = 0; i < ARRAY_SIZE(ids); i++) {
        const struct vfio_info_cap_header *cap;

        g_assert(vfio_region_info_find_cap(info, len, ids[i], &cap, NULL));
        if (cap) {
            g_assert((const uint8_t *)cap >= (const uint8_t *)buf);
            g_assert((const uint8_t *)cap + sizeof(*cap) <=
                     (const uint8_t *)buf + len);
            touch(cap, sizeof(*cap));
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autofree uint8_t *buf = NULL;
    uint8_t which;
    size_t nfds, len;
    int err_no = 0;

    if (size < 2) {
        return 0;
    }
    which = data[0];
    nfds = data[1] & 0x7f;
    len = size - 2;
    /* Real payloads sit in their own (aligned) allocation of exact size. */
    buf = g_malloc(len ? len : 1);
    memcpy(buf, data + 2, len);

    switch (which % 16) {
    case 0: {
        VFIOUserHdr hdr;

        if (len >= sizeof(hdr)) {
            memcpy(&hdr, buf, sizeof(hdr));
            if (vfio_user_hdr_validate(&hdr, 4096, NULL)) {
                g_assert(hdr.size >= sizeof(hdr));
                g_assert(hdr.size - sizeof(hdr) <= 4096);
            }
        }
        sink = vfio_user_command_name(which >> 4)[0];
        break;
    }
    case 1:
        fuzz_version(buf, len);
        break;
    case 2: {
        VFIOUserDMAMap map;

        if (vfio_user_dma_map_decode(buf, len, nfds, &map, &err_no, NULL)) {
            g_assert(map.size);
        } else {
            g_assert(err_no > 0);
        }
        break;
    }
    case 3: {
        VFIOUserDMAUnmap unmap;

        if (!vfio_user_dma_unmap_decode(buf, len, nfds, &unmap, &err_no,
                                        NULL)) {
            g_assert(err_no > 0);
        }
        break;
    }
    case 4:
    case 5: {
        const VFIOUserRegionRW *rw;
        bool is_write = which % 12 == 5;

        if (vfio_user_region_rw_decode(buf, len, is_write, 65536, nfds, &rw,
                                       &err_no, NULL)) {
            g_assert(rw->count <= 65536);
            if (is_write) {
                touch(rw->data, rw->count);
            }
        } else {
            g_assert(err_no > 0);
        }
        break;
    }
    case 6:
    case 7: {
        const VFIOUserDMARW *rw;
        bool is_write = which % 12 == 7;

        if (vfio_user_dma_rw_decode(buf, len, is_write, 65536, nfds, &rw,
                                    &err_no, NULL)) {
            g_assert(rw->count <= 65536);
            if (is_write) {
                touch(rw->data, rw->count);
            }
        } else {
            g_assert(err_no > 0);
        }
        break;
    }
    case 8: {
        const struct vfio_irq_set *s;

        if (vfio_user_irq_set_decode(buf, len, nfds, 1 + (which >> 4), &s,
                                     &err_no, NULL)) {
            g_assert(s->argsz == len);
            g_assert((uint64_t)s->start + s->count <= 1u + (which >> 4));
            if (s->flags & VFIO_IRQ_SET_DATA_BOOL) {
                touch(s->data, s->count);
            }
        } else {
            g_assert(err_no > 0);
        }
        break;
    }
    case 9:
        fuzz_region_info(buf, len);
        break;
    case 10:
        if (len >= 24) {
            uint32_t region, count;
            uint64_t offset;

            memcpy(&region, buf, 4);
            memcpy(&count, buf + 4, 4);
            memcpy(&offset, buf + 8, 8);
            vfio_user_region_rw_reply_check(buf + 16, len - 16, which & 0x10,
                                            region, offset, count, NULL);
        }
        break;
    case 11:
        if (len >= 24) {
            uint64_t address, count;

            memcpy(&address, buf, 8);
            memcpy(&count, buf + 8, 8);
            vfio_user_dma_rw_reply_check(buf + 16, len - 16, which & 0x10,
                                         address, count, NULL);
        }
        break;
    case 12: {
        uint32_t feature, flags;
        const uint8_t *fdata;
        size_t flen;

        if (vfio_user_device_feature_decode(buf, len, nfds, &feature, &flags,
                                            &fdata, &flen, &err_no, NULL)) {
            touch(fdata, flen);
            vfio_user_device_feature_reply_check(buf, len, flags, flen,
                                                 NULL);
        }
        break;
    }
    case 13: {
        VFIOUserDmaLoggingControl ctl;
        const VFIOUserDmaLoggingRange *r;

        if (vfio_user_dma_logging_start_decode(buf, len, &ctl, &r, &err_no,
                                               NULL)) {
            touch(r, (size_t)ctl.num_ranges * sizeof(*r));
        }
        break;
    }
    case 14: {
        VFIOUserDmaLoggingReport rep;
        size_t bm;

        vfio_user_dma_logging_report_decode(buf, len, 65536, &rep, &bm,
                                            &err_no, NULL);
        break;
    }
    case 15: {
        const VFIOUserMigData *m;

        if (vfio_user_mig_data_decode(buf, len, which & 0x10, 65536, nfds,
                                      &m, &err_no, NULL)) {
            touch(m->data, (which & 0x10) ? m->size : 0);
        }
        vfio_user_mig_data_read_reply_check(buf, len, 65536, NULL);
        vfio_mig_next_state(len ? buf[0] : 0, len > 1 ? buf[1] : 0,
                            which & 0x20);
        break;
    }
    }
    return 0;
}
