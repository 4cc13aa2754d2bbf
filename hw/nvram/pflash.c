/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CFI parallel flash, Intel command set (see include/hw/nvram/pflash.h).
 *
 * The region is a container: the array as read-only RAM above an I/O
 * region.  In array mode the RAM is enabled and every write reaches the
 * I/O callback through memory_region_set_readonly_writes(); in the other
 * modes the RAM is disabled so reads return status, identifier or query
 * bytes.
 */
#include "qemu/osdep.h"
#include "hw/nvram/pflash.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "migration/vmstate.h"
#include "block/block.h"
#include "system/memory.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "trace.h"

/* ---- the command state machine ---- */

void pflash_cmd_reset(PflashCmdState *st)
{
    memset(st, 0, sizeof(*st));
    st->mode = PFLASH_MODE_ARRAY;
    st->status = PFLASH_SR_READY;
}

/* The CFI query table, byte-wide (JESD68-01, CFI 1.1). */
static uint8_t pflash_cfi_byte(uint64_t size, uint64_t off)
{
    uint32_t blocks = size / PFLASH_SECTOR_SIZE;

    switch (off) {
    case 0x10: return 'Q';
    case 0x11: return 'R';
    case 0x12: return 'Y';
    case 0x13: return 0x01;         /* primary command set: Intel/Sharp */
    case 0x14: return 0x00;
    case 0x15: return 0x31;         /* extended table at 0x31 */
    case 0x16: return 0x00;
    case 0x1b: return 0x45;         /* Vcc min 4.5 V */
    case 0x1c: return 0x55;         /* Vcc max 5.5 V */
    case 0x1f: return 0x07;         /* typical byte program 2^7 us */
    case 0x20: return 0x07;         /* typical buffer program 2^7 us */
    case 0x21: return 0x0a;         /* typical block erase 2^10 ms */
    case 0x23: return 0x04;
    case 0x24: return 0x04;
    case 0x25: return 0x04;
    case 0x27: return __builtin_ctzll(size);  /* device size 2^n */
    case 0x28: return 0x00;         /* x8 interface */
    case 0x29: return 0x00;
    case 0x2a: return 0x08;         /* write buffer 2^8 bytes */
    case 0x2b: return 0x00;
    case 0x2c: return 0x01;         /* one erase block region */
    case 0x2d: return (blocks - 1) & 0xff;
    case 0x2e: return (blocks - 1) >> 8;
    case 0x2f: return (PFLASH_SECTOR_SIZE / 256) & 0xff;
    case 0x30: return (PFLASH_SECTOR_SIZE / 256) >> 8;
    case 0x31: return 'P';
    case 0x32: return 'R';
    case 0x33: return 'I';
    case 0x34: return '1';
    case 0x35: return '0';
    default: return 0;
    }
}

uint8_t pflash_cmd_read(const PflashCmdState *st, uint64_t size,
                        uint64_t off)
{
    switch (st->mode) {
    case PFLASH_MODE_STATUS:
        return st->status;
    case PFLASH_MODE_ID:
        /* Manufacturer at 0, device at 1, block lock status at 2. */
        switch (off & (PFLASH_SECTOR_SIZE - 1)) {
        case 0: return PFLASH_ID_MANUFACTURER;
        case 1: return PFLASH_ID_DEVICE;
        default: return 0;
        }
    case PFLASH_MODE_CFI:
        return pflash_cfi_byte(size, off);
    default:
        return 0xff;
    }
}

PflashOp pflash_cmd_write(PflashCmdState *st, uint64_t size, uint64_t off,
                          uint8_t val)
{
    PflashOp op = { PFLASH_NONE, 0, NULL, 0 };
    uint8_t cmd = st->cmd;

    st->cmd = 0;
    switch (cmd) {
    case 0x10:
    case 0x40:
        /* Program: this cycle carries the byte. */
        st->buf[0] = val;
        op = (PflashOp){ PFLASH_PROGRAM, off, st->buf, 1 };
        st->status |= PFLASH_SR_READY;      /* done at once */
        st->mode = PFLASH_MODE_STATUS;
        return op;
    case 0x20:
        if (val == 0xd0) {
            op = (PflashOp){ PFLASH_ERASE,
                             off & ~(uint64_t)(PFLASH_SECTOR_SIZE - 1),
                             NULL, PFLASH_SECTOR_SIZE };
            st->status |= PFLASH_SR_READY;
        } else {
            st->status |= PFLASH_SR_ERASE_ERR | PFLASH_SR_PROGRAM_ERR;
        }
        st->mode = PFLASH_MODE_STATUS;
        return op;
    case 0x60:
        /* Lock-bit set (0x01) or clear (0xd0): there are no locks. */
        st->mode = PFLASH_MODE_STATUS;
        return op;
    case 0xe8:
        /* Write to buffer: the count (N - 1), then N bytes, then 0xd0. */
        st->buf_count = (uint32_t)val + 1;
        st->buf_len = 0;
        st->buf_start = off;
        st->cmd = 0xe9;
        return op;
    case 0xe9:
        if (st->buf_len < st->buf_count) {
            uint64_t expect = st->buf_start + st->buf_len;

            if (off != expect || st->buf_len >= sizeof(st->buf)) {
                /* Out-of-sequence data: the buffer write fails. */
                st->status |= PFLASH_SR_PROGRAM_ERR;
                st->mode = PFLASH_MODE_STATUS;
                return op;
            }
            st->buf[st->buf_len++] = val;
            st->cmd = 0xe9;
            return op;
        }
        if (val == 0xd0) {
            op = (PflashOp){ PFLASH_PROGRAM, st->buf_start, st->buf,
                             st->buf_len };
            st->status |= PFLASH_SR_READY;
        } else {
            st->status |= PFLASH_SR_PROGRAM_ERR | PFLASH_SR_ERASE_ERR;
        }
        st->mode = PFLASH_MODE_STATUS;
        return op;
    default:
        break;
    }

    /* A new command. */
    switch (val) {
    case 0x00:
    case 0xf0:
    case 0xff:
        st->mode = PFLASH_MODE_ARRAY;
        break;
    case 0x10:
    case 0x40:
    case 0x20:
    case 0x60:
        st->cmd = val;
        break;
    case 0xe8:
        st->cmd = val;
        st->status |= PFLASH_SR_READY;  /* a buffer is available */
        st->mode = PFLASH_MODE_STATUS;
        break;
    case 0x50:
        st->status = 0;
        st->mode = PFLASH_MODE_ARRAY;
        break;
    case 0x70:
        st->mode = PFLASH_MODE_STATUS;
        break;
    case 0x90:
        st->mode = PFLASH_MODE_ID;
        break;
    case 0x98:
        st->mode = PFLASH_MODE_CFI;
        break;
    default:
        /* Unknown: the chip flags a command sequence error. */
        st->status |= PFLASH_SR_PROGRAM_ERR | PFLASH_SR_ERASE_ERR;
        st->mode = PFLASH_MODE_STATUS;
        trace_pflash_bad_command(off, val);
        break;
    }
    return op;
}

/* ---- the device ---- */

typedef struct PflashState {
    DeviceState parent_obj;

    BlockNode *bs;
    BlockAIO *aio;
    uint64_t size;
    bool read_only;
    MemoryRegion container;
    MemoryRegion array;         /* RAM, read-only */
    MemoryRegion cmd_io;
    PflashCmdState st;
} PflashState;

#define PFLASH_CFI01(obj) OBJECT_CHECK(PflashState, (obj), TYPE_PFLASH_CFI01)

static void pflash_io_done(void *opaque, ssize_t ret)
{
    *(ssize_t *)opaque = ret;
}

/* Synchronous read or write of [off, off + len) of the backing node. */
static bool pflash_backing_rw(PflashState *s, bool write, uint64_t off,
                              uint64_t len, Error **errp)
{
    unsigned align = MAX(block_alignment(s->bs), 512u);
    uint64_t start = QEMU_ALIGN_DOWN(off, align);
    uint64_t end = MIN(QEMU_ALIGN_UP(off + len, align), s->size);
    uint8_t *base = memory_region_get_ram_ptr(&s->array);
    ssize_t ret = -EINPROGRESS;
    struct iovec iov;
    void *buf;

    /* Direct I/O wants an aligned buffer: bounce through one. */
    if (posix_memalign(&buf, MAX(align, 4096u), end - start)) {
        error_setg(errp, "out of memory");
        return false;
    }
    if (write) {
        memcpy(buf, base + start, end - start);
    }
    iov = (struct iovec){ buf, end - start };
    if (!block_aio_rw(s->aio, write, start, &iov, 1, pflash_io_done, &ret)) {
        ret = -EIO;
    } else {
        block_aio_drain(s->aio);
    }
    if (ret >= 0 && !write) {
        memcpy(base + start, buf, end - start);
    }
    free(buf);
    if (ret < 0 || (uint64_t)ret != end - start) {
        error_setg_errno(errp, ret < 0 ? -ret : EIO,
                         "%s: cannot %s the flash image", DEVICE(s)->id
                         ? DEVICE(s)->id : memory_region_name(&s->array),
                         write ? "write" : "read");
        return false;
    }
    return true;
}

static void pflash_update_mode(PflashState *s)
{
    memory_region_set_enabled(&s->array, s->st.mode == PFLASH_MODE_ARRAY);
}

static void pflash_apply(PflashState *s, const PflashOp *op)
{
    uint8_t *base = memory_region_get_ram_ptr(&s->array);
    Error *err = NULL;

    if (op->action == PFLASH_NONE) {
        return;
    }
    if (op->off >= s->size || op->len > s->size - op->off) {
        s->st.status |= PFLASH_SR_PROGRAM_ERR;
        return;
    }
    if (s->read_only) {
        s->st.status |= op->action == PFLASH_ERASE ? PFLASH_SR_ERASE_ERR
                                                   : PFLASH_SR_PROGRAM_ERR;
        s->st.status |= PFLASH_SR_LOCKED;
        return;
    }
    if (op->action == PFLASH_ERASE) {
        memset(base + op->off, 0xff, op->len);
    } else {
        /* Programming only clears bits; erasing sets them. */
        for (uint32_t i = 0; i < op->len; i++) {
            base[op->off + i] &= op->data[i];
        }
    }
    trace_pflash_update(memory_region_name(&s->array), op->action, op->off,
                        op->len);
    if (s->bs && !pflash_backing_rw(s, true, op->off, op->len, &err)) {
        error_report_err(err);
        s->st.status |= PFLASH_SR_PROGRAM_ERR;
    }
}

static uint64_t pflash_io_read(void *opaque, hwaddr addr, unsigned size)
{
    PflashState *s = opaque;

    return pflash_cmd_read(&s->st, s->size, addr);
}

static void pflash_io_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    PflashState *s = opaque;
    PflashOp op = pflash_cmd_write(&s->st, s->size, addr, val);

    pflash_apply(s, &op);
    pflash_update_mode(s);
}

static const MemoryRegionOps pflash_io_ops = {
    .read = pflash_io_read,
    .write = pflash_io_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8 },
    /* A byte-wide chip: wider accesses are byte cycles. */
    .impl = { .min_access_size = 1, .max_access_size = 1 },
};

static void pflash_reset(DeviceState *dev)
{
    PflashState *s = PFLASH_CFI01(dev);

    pflash_cmd_reset(&s->st);
    pflash_update_mode(s);
}

static void pflash_finalize(Object *obj)
{
    PflashState *s = PFLASH_CFI01(obj);

    if (s->aio) {
        block_aio_free(s->aio);
        s->aio = NULL;
    }
    if (memory_region_size(&s->container)) {
        memory_region_finalize(&s->array);
        memory_region_finalize(&s->cmd_io);
        memory_region_finalize(&s->container);
    }
}

/* ---- migration --------------------------------------------------------- */

/*
 * The array is RAM and moves with the guest's RAM; the command state
 * machine moves here, so a firmware caught between the cycles of a
 * variable write (a program setup, a write-to-buffer half sent) goes on
 * with the next cycle on the destination.
 */
static bool pflash_post_load(void *opaque, int version_id, Error **errp)
{
    PflashState *s = opaque;
    PflashCmdState *st = &s->st;

    if (st->buf_count > sizeof(st->buf) || st->buf_len > st->buf_count ||
        st->buf_start > s->size || st->buf_len > s->size - st->buf_start) {
        error_setg(errp, "%s: write buffer of %u bytes (%u expected) at "
                   "0x%" PRIx64 " out of range",
                   memory_region_name(&s->array), st->buf_len,
                   st->buf_count, st->buf_start);
        return false;
    }
    pflash_update_mode(s);
    return true;
}

static const VMStateDescription vmstate_pflash = {
    .name = "pflash_cfi01",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = pflash_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32_MAX(st.mode, PflashState, PFLASH_MODE_CFI),
        VMSTATE_UINT8(st.cmd, PflashState),
        VMSTATE_UINT8(st.status, PflashState),
        VMSTATE_UINT32(st.buf_count, PflashState),
        VMSTATE_UINT64(st.buf_start, PflashState),
        VMSTATE_BUFFER(st.buf, PflashState),
        VMSTATE_UINT32(st.buf_len, PflashState),
        VMSTATE_END_OF_LIST()
    },
};

static void pflash_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "CFI parallel flash, Intel command set (firmware, variables)";
    dc->vmsd = &vmstate_pflash;
    dc->reset = pflash_reset;
    dc->user_creatable = false;
}

DeviceState *pflash_cfi01_create(MachineState *ms, const char *name,
                                 BlockNode *bs, Error **errp)
{
    DeviceState *dev;
    PflashState *s;
    uint64_t size = block_size(bs);

    if (size < PFLASH_SECTOR_SIZE || size % PFLASH_SECTOR_SIZE ||
        size > 64 * 1024 * 1024) {
        error_setg(errp, "%s: flash image '%s' is 0x%" PRIx64 " bytes; it "
                   "must be a multiple of 4 KiB, at most 64 MiB", name,
                   block_node_name(bs), size);
        return NULL;
    }
    dev = qdev_new(TYPE_PFLASH_CFI01);
    s = PFLASH_CFI01(dev);
    s->size = size;
    s->bs = bs;
    s->read_only = block_is_read_only(bs);
    object_property_add_child(OBJECT(ms), name, OBJECT(dev));
    object_unref(OBJECT(dev));
    if (!block_attach(bs, dev, OBJECT(dev), errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    s->aio = block_aio_new(bs, 1, errp);
    if (!s->aio) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    memory_region_init(&s->container, OBJECT(dev), name, size);
    if (!memory_region_init_ram(&s->array, OBJECT(dev), name, size, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    memory_region_init_io(&s->cmd_io, OBJECT(dev), &pflash_io_ops, s,
                          "pflash-cmd", size);
    memory_region_set_readonly(&s->array, true);
    memory_region_set_readonly_writes(&s->array, &s->cmd_io);
    memory_region_add_subregion_overlap(&s->container, 0, &s->array, 1);
    memory_region_add_subregion(&s->container, 0, &s->cmd_io);
    if (!pflash_backing_rw(s, false, 0, size, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    if (!qdev_realize(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    pflash_cmd_reset(&s->st);
    return dev;
}

MemoryRegion *pflash_region(DeviceState *dev)
{
    return &PFLASH_CFI01(dev)->container;
}

static const TypeInfo pflash_type_info = {
    .name = TYPE_PFLASH_CFI01,
    .parent = TYPE_DEVICE,
    .instance_size = sizeof(PflashState),
    .class_init = pflash_class_init,
    .instance_finalize = pflash_finalize,
};

static void pflash_register_types(void)
{
    type_register_static(&pflash_type_info);
}

type_init(pflash_register_types)
