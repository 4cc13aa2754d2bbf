/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fw_cfg device (see include/hw/nvram/fw_cfg.h for the interface and
 * QEMU's docs/specs/fw_cfg.rst for the guest-visible protocol).
 *
 * Every guest access goes through fw_cfg_select(), fw_cfg_read_byte() or
 * fw_cfg_dma_run(); all three treat the guest's key, offsets, lengths and
 * descriptor address as hostile: an unknown key reads as an empty item,
 * a read past the end yields zeroes, and a DMA the address space cannot
 * back sets the ERROR bit.
 */
#include "qemu/osdep.h"
#include "hw/nvram/fw_cfg.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "migration/vmstate.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "qapi/error.h"
#include "trace.h"

#define FW_CFG_MAX_ENTRY (FW_CFG_FILE_FIRST + FW_CFG_FILE_SLOTS)

typedef struct FWCfgEntry {
    uint8_t *data;
    size_t len;
    bool allow_write;
    FWCfgSelectCb select_cb;
    FWCfgWriteCb write_cb;
    void *opaque;
} FWCfgEntry;

struct FWCfgState {
    FWCfgEntry entries[2][FW_CFG_MAX_ENTRY];  /* [arch-local][key] */
    GPtrArray *file_names;      /* char *, index i is key FILE_FIRST + i */
    uint16_t cur_key;
    size_t cur_offset;
    bool dma;
};

/* ---- the item store ---- */

static FWCfgEntry *fw_cfg_entry(FWCfgState *s, uint16_t key)
{
    unsigned idx = key & FW_CFG_ENTRY_MASK;

    if (key == FW_CFG_INVALID || idx >= FW_CFG_MAX_ENTRY) {
        return NULL;
    }
    return &s->entries[!!(key & FW_CFG_ARCH_LOCAL)][idx];
}

static void fw_cfg_set_entry(FWCfgState *s, uint16_t key, void *data,
                             size_t len)
{
    FWCfgEntry *e = fw_cfg_entry(s, key);

    g_assert(e);
    g_free(e->data);
    e->data = data;
    e->len = data ? len : 0;
}

void fw_cfg_add_bytes(FWCfgState *s, uint16_t key, void *data, size_t len)
{
    fw_cfg_set_entry(s, key, data, len);
}

void fw_cfg_add_i16(FWCfgState *s, uint16_t key, uint16_t value)
{
    uint16_t *p = g_new(uint16_t, 1);

    stw_le_p(p, value);
    fw_cfg_add_bytes(s, key, p, sizeof(*p));
}

void fw_cfg_add_i32(FWCfgState *s, uint16_t key, uint32_t value)
{
    uint32_t *p = g_new(uint32_t, 1);

    stl_le_p(p, value);
    fw_cfg_add_bytes(s, key, p, sizeof(*p));
}

void fw_cfg_add_i64(FWCfgState *s, uint16_t key, uint64_t value)
{
    uint64_t *p = g_new(uint64_t, 1);

    stq_le_p(p, value);
    fw_cfg_add_bytes(s, key, p, sizeof(*p));
}

void fw_cfg_add_string(FWCfgState *s, uint16_t key, const char *value)
{
    fw_cfg_add_bytes(s, key, g_strdup(value), strlen(value) + 1);
}

static gint fw_cfg_name_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* FW_CFG_FILE_DIR: a big-endian count, then the files sorted by name. */
static void fw_cfg_rebuild_dir(FWCfgState *s)
{
    guint n = s->file_names->len;
    g_autoptr(GPtrArray) sorted = g_ptr_array_sized_new(n);
    size_t len = 4 + n * sizeof(FWCfgFile);
    uint8_t *dir = g_malloc0(len);

    for (guint i = 0; i < n; i++) {
        g_ptr_array_add(sorted, g_ptr_array_index(s->file_names, i));
    }
    g_ptr_array_sort(sorted, fw_cfg_name_cmp);
    stl_be_p(dir, n);
    for (guint i = 0; i < n; i++) {
        const char *name = g_ptr_array_index(sorted, i);
        uint16_t key = fw_cfg_file_key(s, name);
        FWCfgFile *f = (FWCfgFile *)(dir + 4 + i * sizeof(FWCfgFile));

        stl_be_p(&f->size, fw_cfg_entry(s, key)->len);
        ((uint8_t *)&f->select)[0] = key >> 8;
        ((uint8_t *)&f->select)[1] = key;
        strncpy(f->name, name, sizeof(f->name) - 1);
    }
    fw_cfg_set_entry(s, FW_CFG_FILE_DIR, dir, len);
}

uint16_t fw_cfg_file_key(FWCfgState *s, const char *name)
{
    for (guint i = 0; i < s->file_names->len; i++) {
        if (!strcmp(g_ptr_array_index(s->file_names, i), name)) {
            return FW_CFG_FILE_FIRST + i;
        }
    }
    return FW_CFG_INVALID;
}

uint16_t fw_cfg_add_file_callback(FWCfgState *s, const char *name,
                                  FWCfgSelectCb select_cb,
                                  FWCfgWriteCb write_cb, void *opaque,
                                  void *data, size_t len, bool read_only)
{
    FWCfgEntry *e;
    uint16_t key;

    if (strlen(name) >= FW_CFG_MAX_FILE_PATH ||
        fw_cfg_file_key(s, name) != FW_CFG_INVALID ||
        s->file_names->len >= FW_CFG_FILE_SLOTS) {
        g_free(data);
        return FW_CFG_INVALID;
    }
    key = FW_CFG_FILE_FIRST + s->file_names->len;
    g_ptr_array_add(s->file_names, g_strdup(name));
    fw_cfg_set_entry(s, key, data, len);
    e = fw_cfg_entry(s, key);
    e->select_cb = select_cb;
    e->write_cb = write_cb;
    e->opaque = opaque;
    e->allow_write = !read_only;
    fw_cfg_rebuild_dir(s);
    trace_fw_cfg_add_file(name, key, len);
    return key;
}

uint16_t fw_cfg_add_file(FWCfgState *s, const char *name, void *data,
                         size_t len)
{
    return fw_cfg_add_file_callback(s, name, NULL, NULL, NULL, data, len,
                                    true);
}

bool fw_cfg_modify_file(FWCfgState *s, const char *name, void *data,
                        size_t len)
{
    uint16_t key = fw_cfg_file_key(s, name);

    if (key == FW_CFG_INVALID) {
        g_free(data);
        return false;
    }
    fw_cfg_set_entry(s, key, data, len);
    fw_cfg_rebuild_dir(s);
    return true;
}

const void *fw_cfg_file_data(FWCfgState *s, const char *name, size_t *len)
{
    uint16_t key = fw_cfg_file_key(s, name);
    FWCfgEntry *e = key == FW_CFG_INVALID ? NULL : fw_cfg_entry(s, key);

    if (!e) {
        return NULL;
    }
    *len = e->len;
    return e->data;
}

FWCfgState *fw_cfg_new(bool dma)
{
    FWCfgState *s = g_new0(FWCfgState, 1);

    s->file_names = g_ptr_array_new_with_free_func(g_free);
    s->dma = dma;
    s->cur_key = FW_CFG_INVALID;
    fw_cfg_add_bytes(s, FW_CFG_SIGNATURE, g_memdup2("QEMU", 4), 4);
    fw_cfg_add_i32(s, FW_CFG_ID, FW_CFG_VERSION |
                   (dma ? FW_CFG_VERSION_DMA : 0));
    fw_cfg_rebuild_dir(s);
    return s;
}

void fw_cfg_free(FWCfgState *s)
{
    if (!s) {
        return;
    }
    for (int a = 0; a < 2; a++) {
        for (int i = 0; i < FW_CFG_MAX_ENTRY; i++) {
            g_free(s->entries[a][i].data);
        }
    }
    g_ptr_array_free(s->file_names, true);
    g_free(s);
}

/* ---- the guest interface ---- */

void fw_cfg_select(FWCfgState *s, uint16_t key)
{
    FWCfgEntry *e;

    /* The write channel of the legacy interface is long gone: ignored. */
    key &= ~FW_CFG_WRITE_CHANNEL;
    e = fw_cfg_entry(s, key);
    s->cur_key = e ? key : FW_CFG_INVALID;
    s->cur_offset = 0;
    trace_fw_cfg_select(key, e ? e->len : 0);
    if (e && e->select_cb) {
        e->select_cb(e->opaque);
    }
}

uint8_t fw_cfg_read_byte(FWCfgState *s)
{
    FWCfgEntry *e = fw_cfg_entry(s, s->cur_key);

    if (!e || s->cur_offset >= e->len) {
        return 0;
    }
    return e->data[s->cur_offset++];
}

/* One READ, WRITE or SKIP of len bytes at guest address addr. */
static bool fw_cfg_dma_transfer(FWCfgState *s, AddressSpace *as,
                                uint32_t control, uint64_t addr,
                                uint32_t len)
{
    FWCfgEntry *e = fw_cfg_entry(s, s->cur_key);
    size_t avail = e && s->cur_offset < e->len ? e->len - s->cur_offset : 0;
    size_t n = MIN(avail, (size_t)len);

    if (control & FW_CFG_DMA_CTL_READ) {
        /* The item's bytes, then zeroes for whatever lies past its end. */
        if (n && address_space_write(as, addr, e->data + s->cur_offset,
                                     n) != MEMTX_OK) {
            return false;
        }
        for (uint64_t done = n; done < len;) {
            static const uint8_t zeroes[256];
            uint64_t chunk = MIN(len - done, sizeof(zeroes));

            if (address_space_write(as, addr + done, zeroes, chunk) !=
                MEMTX_OK) {
                return false;
            }
            done += chunk;
        }
    } else if (control & FW_CFG_DMA_CTL_WRITE) {
        if (!e || !e->allow_write || n < len) {
            return false;
        }
        if (address_space_read(as, addr, e->data + s->cur_offset, n) !=
            MEMTX_OK) {
            return false;
        }
        if (e->write_cb) {
            e->write_cb(e->opaque, s->cur_offset, n);
        }
    }
    /* SKIP only moves the offset. */
    s->cur_offset += n;
    return true;
}

void fw_cfg_dma_run(FWCfgState *s, AddressSpace *as, uint64_t desc)
{
    FWCfgDmaAccess acc;
    uint32_t control, length, result = 0;
    uint64_t addr;

    if (address_space_read(as, desc, &acc, sizeof(acc)) != MEMTX_OK) {
        trace_fw_cfg_dma_error(desc, "descriptor unreadable");
        return;
    }
    control = ldl_be_p(&acc.control);
    length = ldl_be_p(&acc.length);
    addr = ldq_be_p(&acc.address);
    trace_fw_cfg_dma(desc, control, length, addr);
    if (control & FW_CFG_DMA_CTL_SELECT) {
        fw_cfg_select(s, control >> 16);
    }
    if (control & (FW_CFG_DMA_CTL_READ | FW_CFG_DMA_CTL_WRITE |
                   FW_CFG_DMA_CTL_SKIP)) {
        /* Exactly one of the three, in the order the spec lists them. */
        uint32_t op = control & FW_CFG_DMA_CTL_READ ? FW_CFG_DMA_CTL_READ :
                      control & FW_CFG_DMA_CTL_WRITE ? FW_CFG_DMA_CTL_WRITE :
                      FW_CFG_DMA_CTL_SKIP;

        if (!fw_cfg_dma_transfer(s, as, op, addr, length)) {
            result = FW_CFG_DMA_CTL_ERROR;
            trace_fw_cfg_dma_error(desc, "transfer failed");
        }
    }
    stl_be_p(&acc.control, result);
    address_space_write(as, desc, &acc.control, sizeof(acc.control));
}

/* ---- the x86 device ---- */

typedef struct FWCfgIoState {
    DeviceState parent_obj;

    FWCfgState *store;
    MemoryRegion comb_io;       /* 0x510: selector (16-bit), 0x511: data */
    MemoryRegion dma_io;        /* 0x514..0x51b */
    uint64_t dma_addr;
    /* Migration: the store's selection, copied in and out. */
    uint16_t mig_key;
    uint64_t mig_offset;
} FWCfgIoState;

#define FW_CFG_IO(obj) OBJECT_CHECK(FWCfgIoState, (obj), TYPE_FW_CFG_IO)

static FWCfgIoState *fw_cfg_dev;

static uint64_t fw_cfg_comb_read(void *opaque, hwaddr addr, unsigned size)
{
    FWCfgIoState *s = opaque;

    if (addr == 1 && size == 1) {
        return fw_cfg_read_byte(s->store);
    }
    return 0;
}

static void fw_cfg_comb_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    FWCfgIoState *s = opaque;

    if (addr == 0 && size == 2) {
        fw_cfg_select(s->store, val);
    }
    /* Legacy data writes (0x511) have been ignored since QEMU 2.4. */
}

static bool fw_cfg_comb_accepts(void *opaque, hwaddr addr, unsigned size,
                                bool is_write)
{
    return (addr == 0 && size == 2) || (addr == 1 && size == 1);
}

static const MemoryRegionOps fw_cfg_comb_ops = {
    .read = fw_cfg_comb_read,
    .write = fw_cfg_comb_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 2,
               .accepts = fw_cfg_comb_accepts },
};

static uint64_t fw_cfg_dma_read(void *opaque, hwaddr addr, unsigned size)
{
    /* The register reads as "QEMU CFG", the interface's signature. */
    return (FW_CFG_DMA_SIGNATURE >> (8 * (8 - addr - size))) &
           (size == 8 ? ~0ULL : (1ULL << (8 * size)) - 1);
}

static void fw_cfg_dma_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    FWCfgIoState *s = opaque;

    if (size == 4 && addr == 0) {
        s->dma_addr = (s->dma_addr & 0xffffffffULL) | (val << 32);
    } else if (size == 4 && addr == 4) {
        /* Writing the low half starts the transfer. */
        uint64_t desc = (s->dma_addr & ~0xffffffffULL) | (uint32_t)val;

        s->dma_addr = 0;
        fw_cfg_dma_run(s->store, &address_space_memory, desc);
    } else if (size == 8 && addr == 0) {
        s->dma_addr = 0;
        fw_cfg_dma_run(s->store, &address_space_memory, val);
    }
}

static bool fw_cfg_dma_accepts(void *opaque, hwaddr addr, unsigned size,
                               bool is_write)
{
    return !is_write || ((size == 4 || size == 8) && addr % size == 0);
}

static const MemoryRegionOps fw_cfg_dma_ops = {
    .read = fw_cfg_dma_read,
    .write = fw_cfg_dma_write,
    .endianness = DEVICE_BIG_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8,
               .accepts = fw_cfg_dma_accepts },
};

static bool fw_cfg_io_realize(DeviceState *dev, Error **errp)
{
    FWCfgIoState *s = FW_CFG_IO(dev);

    s->store = fw_cfg_new(true);
    memory_region_init_io(&s->comb_io, OBJECT(s), &fw_cfg_comb_ops, s,
                          "fwcfg", 2);
    memory_region_init_io(&s->dma_io, OBJECT(s), &fw_cfg_dma_ops, s,
                          "fwcfg.dma", 8);
    memory_region_add_subregion(get_system_io(), FW_CFG_IO_BASE, &s->comb_io);
    memory_region_add_subregion(get_system_io(), FW_CFG_DMA_IO_BASE,
                                &s->dma_io);
    return true;
}

static void fw_cfg_io_reset(DeviceState *dev)
{
    FWCfgIoState *s = FW_CFG_IO(dev);

    s->dma_addr = 0;
    fw_cfg_select(s->store, FW_CFG_SIGNATURE);
}

static void fw_cfg_io_finalize(Object *obj)
{
    FWCfgIoState *s = FW_CFG_IO(obj);

    if (s->store) {
        memory_region_finalize(&s->comb_io);
        memory_region_finalize(&s->dma_io);
        fw_cfg_free(s->store);
        s->store = NULL;
    }
    if (fw_cfg_dev == s) {
        fw_cfg_dev = NULL;
    }
}

/* ---- migration --------------------------------------------------------- */

static bool fw_cfg_io_pre_save(void *opaque, Error **errp)
{
    FWCfgIoState *s = opaque;

    s->mig_key = s->store->cur_key;
    s->mig_offset = s->store->cur_offset;
    return true;
}

/*
 * A guest in the middle of reading an item (a firmware, Linux's
 * qemu_fw_cfg) goes on where it was: the item is selected again here
 * (its select hook builds it, as it did on the source) and the offset
 * put back, checked against this side's item.
 */
static bool fw_cfg_io_post_load(void *opaque, int version_id, Error **errp)
{
    FWCfgIoState *s = opaque;
    FWCfgEntry *e = fw_cfg_entry(s->store, s->mig_key);

    if (s->mig_key != FW_CFG_INVALID && !e) {
        error_setg(errp, "fw_cfg: item 0x%x selected on the source does not "
                   "exist here", s->mig_key);
        return false;
    }
    fw_cfg_select(s->store, e ? s->mig_key : FW_CFG_INVALID);
    if (e && s->mig_offset > e->len) {
        error_setg(errp, "fw_cfg: offset %" PRIu64 " beyond item 0x%x of "
                   "%zu bytes", s->mig_offset, s->mig_key, e->len);
        return false;
    }
    s->store->cur_offset = e ? s->mig_offset : 0;
    return true;
}

static const VMStateDescription vmstate_fw_cfg_io = {
    .name = "fw_cfg",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = fw_cfg_io_pre_save,
    .post_load = fw_cfg_io_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT16(mig_key, FWCfgIoState),
        VMSTATE_UINT64(mig_offset, FWCfgIoState),
        VMSTATE_UINT64(dma_addr, FWCfgIoState),
        VMSTATE_END_OF_LIST()
    },
};

static void fw_cfg_io_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);

    dc->desc = "QEMU firmware configuration interface (I/O ports, DMA)";
    dc->vmsd = &vmstate_fw_cfg_io;
    dc->realize = fw_cfg_io_realize;
    dc->reset = fw_cfg_io_reset;
    dc->user_creatable = false;
}

FWCfgState *fw_cfg_init_io(MachineState *ms, Error **errp)
{
    DeviceState *dev = qdev_new(TYPE_FW_CFG_IO);

    object_property_add_child(OBJECT(ms), "fw_cfg", OBJECT(dev));
    if (!qdev_realize_and_unref(dev, NULL, errp)) {
        object_unparent(OBJECT(dev));
        return NULL;
    }
    fw_cfg_dev = FW_CFG_IO(dev);
    return fw_cfg_dev->store;
}

FWCfgState *fw_cfg_find(void)
{
    return fw_cfg_dev ? fw_cfg_dev->store : NULL;
}

static const TypeInfo fw_cfg_io_type_info = {
    .name = TYPE_FW_CFG_IO,
    .parent = TYPE_DEVICE,
    .instance_size = sizeof(FWCfgIoState),
    .class_init = fw_cfg_io_class_init,
    .instance_finalize = fw_cfg_io_finalize,
};

static void fw_cfg_register_types(void)
{
    type_register_static(&fw_cfg_io_type_info);
}

type_init(fw_cfg_register_types)
