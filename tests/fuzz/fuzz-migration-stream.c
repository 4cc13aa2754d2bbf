/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the migration stream decoder (migration/savevm.c,
 * vmstate.c, ram.c) on hostile bytes.  The input is a whole stream as an
 * incoming migration would read it: header, RAM chunks into a 64 KiB
 * RAM region ("fuzz.ram"), device records for one registered state
 * ("fuzzdev") whose table uses every field kind (scalars with limits, a
 * buffer, a variable array of nested structs, a hand-parsed field, a
 * subsection) and a post_load that checks what ties fields together, and
 * the end record.  Whatever the bytes, loading must fail cleanly or
 * succeed with a state that satisfies the device's own invariants
 * (checked here after every successful load).
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/memory.h"
#include "migration/migration.h"
#include "migration/channel.h"
#include "migration/savevm.h"
#include "migration/ram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RING_MAX 8

typedef struct FuzzElem {
    uint16_t a;
    uint8_t blob[8];
} FuzzElem;

typedef struct FuzzDev {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    bool flag;
    int32_t i32;
    int64_t i64;
    uint8_t buf[16];
    uint32_t nelems;
    FuzzElem elems[4];
    uint32_t index;
    uint32_t size;
    uint32_t ring_len;
    uint32_t ring[RING_MAX];
    uint32_t extra;
    uint16_t late;              /* since version 2 */
} FuzzDev;

static FuzzDev dev;
static MemoryRegion ram;

static bool ring_put(GByteArray *out, void *opaque, void *field, Error **errp)
{
    FuzzDev *d = opaque;

    mig_put_u32(out, d->ring_len);
    for (uint32_t i = 0; i < d->ring_len; i++) {
        mig_put_u32(out, d->ring[i]);
    }
    return true;
}

static bool ring_get(MigBuf *b, void *opaque, void *field, Error **errp)
{
    FuzzDev *d = opaque;
    uint32_t n;

    if (!mig_buf_get_u32(b, &n, errp)) {
        return false;
    }
    if (n > RING_MAX) {
        error_setg(errp, "ring of %u entries", n);
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!mig_buf_get_u32(b, &d->ring[i], errp)) {
            return false;
        }
    }
    d->ring_len = n;
    return true;
}

static const VMStateInfo ring_info = {
    .name = "ring", .put = ring_put, .get = ring_get,
};

static bool fuzzdev_post_load(void *opaque, int version_id, Error **errp)
{
    FuzzDev *d = opaque;

    if (d->size > RING_MAX || d->index >= d->size) {
        error_setg(errp, "index %u outside size %u", d->index, d->size);
        return false;
    }
    return true;
}

static bool extra_needed(void *opaque)
{
    return ((FuzzDev *)opaque)->extra != 0;
}

static const VMStateDescription vmstate_fuzzelem = {
    .name = "fuzzelem",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(a, FuzzElem),
        VMSTATE_BUFFER(blob, FuzzElem),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_fuzzdev_extra = {
    .name = "fuzzdev/extra",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = extra_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(extra, FuzzDev),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_fuzzdev = {
    .name = "fuzzdev",
    .version_id = 2,
    .minimum_version_id = 1,
    .post_load = fuzzdev_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(u8, FuzzDev),
        VMSTATE_UINT16(u16, FuzzDev),
        VMSTATE_UINT32(u32, FuzzDev),
        VMSTATE_UINT64(u64, FuzzDev),
        VMSTATE_BOOL(flag, FuzzDev),
        VMSTATE_INT32(i32, FuzzDev),
        VMSTATE_INT64(i64, FuzzDev),
        VMSTATE_BUFFER(buf, FuzzDev),
        VMSTATE_STRUCT_VARRAY(elems, FuzzDev, nelems, vmstate_fuzzelem,
                              FuzzElem),
        VMSTATE_UINT32_MAX(index, FuzzDev, 15),
        VMSTATE_UINT32_MAX(size, FuzzDev, RING_MAX),
        VMSTATE_CUSTOM("ring", FuzzDev, ring, ring_info),
        VMSTATE_UINT16_V(late, FuzzDev, 2),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription *const[]) {
        &vmstate_fuzzdev_extra,
        NULL
    },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool initialized;
    Error *err = NULL;
    MigFile *f;

    if (!initialized) {
        memory_region_init_ram(&ram, NULL, "fuzz.ram", 64 * 1024,
                               &error_abort);
        ram_register();
        vmstate_register("fuzzdev", &vmstate_fuzzdev, &dev);
        initialized = true;
    }
    memset(&dev, 0, sizeof(dev));
    ram_reset_load_state();
    f = mig_file_new_mem_reader(data, size);
    if (loadvm_stream(f, false, &err)) {
        /* A load that succeeds leaves a state the device can trust. */
        g_assert(dev.nelems <= 4);
        g_assert(dev.ring_len <= RING_MAX);
        g_assert(dev.index < dev.size && dev.size <= RING_MAX);
        g_assert(dev.flag == 0 || dev.flag == 1);
    } else {
        g_assert(err);
        error_free(err);
    }
    mig_file_free(f);
    return 0;
}
