/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The migration stream: who contributes state (live handlers, devices
 * with a DeviceClass.vmsd, registered non-device state) and the framing
 * that carries it (see savevm.h).
 */
#include "qemu/osdep.h"
#include "migration/migration.h"
#include "migration/savevm.h"
#include "hw/qdev-core.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "qom/object.h"
#include "trace.h"

#define REC_LIVE 0x01
#define REC_DEVICE 0x02
#define REC_EOF 0xff

typedef struct LiveEntry {
    char *idstr;
    const SaveLiveOps *ops;
    void *opaque;
} LiveEntry;

typedef struct StateEntry {
    char *idstr;
    const VMStateDescription *vmsd;
    void *opaque;
    bool loaded;
} StateEntry;

static GPtrArray *live_entries;     /* LiveEntry * */
static GPtrArray *state_entries;    /* StateEntry *, non-device state */

/* ---- registration ---- */

void register_savevm_live(const char *idstr, const SaveLiveOps *ops,
                          void *opaque)
{
    LiveEntry *e = g_new0(LiveEntry, 1);

    if (!live_entries) {
        live_entries = g_ptr_array_new();
    }
    e->idstr = g_strdup(idstr);
    e->ops = ops;
    e->opaque = opaque;
    g_ptr_array_add(live_entries, e);
}

void unregister_savevm_live(const char *idstr)
{
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (!strcmp(e->idstr, idstr)) {
            g_ptr_array_remove_index(live_entries, i);
            g_free(e->idstr);
            g_free(e);
            return;
        }
    }
}

void vmstate_register(const char *idstr, const VMStateDescription *vmsd,
                      void *opaque)
{
    StateEntry *e = g_new0(StateEntry, 1);

    if (!state_entries) {
        state_entries = g_ptr_array_new();
    }
    e->idstr = g_strdup(idstr);
    e->vmsd = vmsd;
    e->opaque = opaque;
    g_ptr_array_add(state_entries, e);
}

void vmstate_unregister(const char *idstr)
{
    for (guint i = 0; state_entries && i < state_entries->len; i++) {
        StateEntry *e = g_ptr_array_index(state_entries, i);

        if (!strcmp(e->idstr, idstr)) {
            g_ptr_array_remove_index(state_entries, i);
            g_free(e->idstr);
            g_free(e);
            return;
        }
    }
}

/* ---- the list of everything with a table, devices first ---- */

static int collect_device(Object *obj, void *opaque)
{
    GPtrArray *out = opaque;
    DeviceState *dev = (DeviceState *)object_dynamic_cast(obj, TYPE_DEVICE);
    DeviceClass *dc;
    StateEntry *e;

    if (!dev || !dev->realized) {
        return 0;
    }
    dc = DEVICE_GET_CLASS(dev);
    if (!dc->vmsd) {
        return 0;
    }
    e = g_new0(StateEntry, 1);
    e->idstr = object_get_canonical_path(obj);
    e->vmsd = dc->vmsd;
    e->opaque = dev;
    g_ptr_array_add(out, e);
    return 0;
}

static void state_entry_free(gpointer p)
{
    StateEntry *e = p;

    g_free(e->idstr);
    g_free(e);
}

static GPtrArray *collect_state(void)
{
    GPtrArray *all = g_ptr_array_new_with_free_func(state_entry_free);
    Object *machine = qdev_get_machine();

    /*
     * Registered state (the virtual clock first, then vCPUs and the
     * irqchip) before the devices: device post_load hooks re-arm timers
     * against the clock the guest had.
     */
    for (guint i = 0; state_entries && i < state_entries->len; i++) {
        StateEntry *src = g_ptr_array_index(state_entries, i);
        StateEntry *e = g_new0(StateEntry, 1);

        e->idstr = g_strdup(src->idstr);
        e->vmsd = src->vmsd;
        e->opaque = src->opaque;
        g_ptr_array_add(all, e);
    }
    if (machine) {
        object_child_foreach_recursive(machine, collect_device, all);
    }
    return all;
}

/* ---- CRC ---- */

uint32_t mig_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    static uint32_t table[256];
    static gsize once;

    if (g_once_init_enter(&once)) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;

            for (int k = 0; k < 8; k++) {
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            }
            table[i] = c;
        }
        g_once_init_leave(&once, 1);
    }
    crc = ~crc;
    while (len--) {
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

/* ---- source ---- */

static bool put_u8(MigFile *f, uint8_t v, Error **errp)
{
    return mig_file_write(f, &v, 1, errp);
}

static bool put_u32(MigFile *f, uint32_t v, Error **errp)
{
    v = GUINT32_TO_LE(v);
    return mig_file_write(f, &v, 4, errp);
}

static bool put_str(MigFile *f, const char *s, Error **errp)
{
    size_t n = strlen(s);

    if (n > 255) {
        error_setg(errp, "migration: section name '%s' too long", s);
        return false;
    }
    return put_u8(f, n, errp) && mig_file_write(f, s, n, errp);
}

bool savevm_send_header(MigFile *f, Error **errp)
{
    return mig_file_write(f, MIG_STREAM_MAGIC, 8, errp) &&
           put_u32(f, MIG_STREAM_VERSION, errp);
}

bool savevm_live_setup(Error **errp)
{
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (e->ops->setup && !e->ops->setup(e->opaque, errp)) {
            error_prepend(errp, "%s: ", e->idstr);
            return false;
        }
    }
    return true;
}

uint64_t savevm_live_pending(void)
{
    uint64_t n = 0;

    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (e->ops->pending) {
            n += e->ops->pending(e->opaque);
        }
    }
    return n;
}

uint64_t savevm_live_switchover_pending(void)
{
    uint64_t n = 0;

    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (e->ops->switchover_pending) {
            n += e->ops->switchover_pending(e->opaque);
        }
    }
    return n;
}

/* Writes each "len:u32 chunk" item of buf as a REC_LIVE record. */
static bool put_live_items(MigFile *f, const char *idstr, GByteArray *buf,
                           Error **errp)
{
    size_t pos = 0;

    while (pos + 4 <= buf->len) {
        uint32_t len;

        memcpy(&len, buf->data + pos, 4);
        len = GUINT32_FROM_LE(len);
        g_assert(len <= buf->len - pos - 4 && len <= MIG_MAX_CHUNK);
        if (!put_u8(f, REC_LIVE, errp) || !put_str(f, idstr, errp) ||
            !put_u32(f, len, errp) ||
            !mig_file_write(f, buf->data + pos + 4, len, errp)) {
            return false;
        }
        pos += 4 + len;
    }
    return true;
}

bool savevm_live_iterate(MigFile *f, size_t max, Error **errp)
{
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);
        g_autoptr(GByteArray) buf = g_byte_array_new();

        if (!e->ops->iterate) {
            continue;
        }
        if (!e->ops->iterate(e->opaque, buf, max, errp)) {
            error_prepend(errp, "%s: ", e->idstr);
            return false;
        }
        if (!put_live_items(f, e->idstr, buf, errp)) {
            return false;
        }
    }
    return mig_file_flush(f, errp);
}

bool savevm_complete(MigFile *f, Error **errp)
{
    g_autoptr(GPtrArray) all = NULL;
    uint32_t ndev = 0;

    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);
        g_autoptr(GByteArray) buf = g_byte_array_new();

        if (e->ops->complete && !e->ops->complete(e->opaque, buf, errp)) {
            error_prepend(errp, "%s: ", e->idstr);
            return false;
        }
        if (!put_live_items(f, e->idstr, buf, errp)) {
            return false;
        }
    }
    all = collect_state();
    for (guint i = 0; i < all->len; i++) {
        StateEntry *e = g_ptr_array_index(all, i);
        g_autoptr(GByteArray) buf = g_byte_array_new();

        if (!vmstate_save(buf, e->vmsd, e->opaque, errp)) {
            error_prepend(errp, "%s: ", e->idstr);
            return false;
        }
        if (buf->len > MIG_MAX_CHUNK) {
            error_setg(errp, "%s: state too large (%u bytes)", e->idstr,
                       buf->len);
            return false;
        }
        trace_savevm_device(e->idstr, buf->len);
        if (!put_u8(f, REC_DEVICE, errp) || !put_str(f, e->idstr, errp) ||
            !put_u32(f, buf->len, errp) ||
            !mig_file_write(f, buf->data, buf->len, errp) ||
            !put_u32(f, mig_crc32(0, buf->data, buf->len), errp)) {
            return false;
        }
        ndev++;
    }
    return put_u8(f, REC_EOF, errp) && put_u32(f, ndev, errp) &&
           mig_file_flush(f, errp);
}

void savevm_live_cleanup(void)
{
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (e->ops->cleanup) {
            e->ops->cleanup(e->opaque);
        }
    }
}

/* ---- destination ---- */

static bool get_u8(MigFile *f, uint8_t *v, Error **errp)
{
    return mig_file_read(f, v, 1, errp);
}

static bool get_u32(MigFile *f, uint32_t *v, Error **errp)
{
    if (!mig_file_read(f, v, 4, errp)) {
        return false;
    }
    *v = GUINT32_FROM_LE(*v);
    return true;
}

static bool get_str(MigFile *f, char *out, Error **errp)
{
    uint8_t n;

    if (!get_u8(f, &n, errp) || !mig_file_read(f, out, n, errp)) {
        return false;
    }
    out[n] = '\0';
    if (strlen(out) != n) {
        error_setg(errp, "migration stream: NUL inside a section name");
        return false;
    }
    return true;
}

static LiveEntry *find_live(const char *idstr)
{
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (!strcmp(e->idstr, idstr)) {
            return e;
        }
    }
    return NULL;
}

static StateEntry *find_state(GPtrArray *all, const char *idstr)
{
    for (guint i = 0; i < all->len; i++) {
        StateEntry *e = g_ptr_array_index(all, i);

        if (!strcmp(e->idstr, idstr)) {
            return e;
        }
    }
    return NULL;
}

/* Reads a length-prefixed body of at most MIG_MAX_CHUNK bytes. */
static uint8_t *get_body(MigFile *f, const char *idstr, uint32_t *len,
                         Error **errp)
{
    uint8_t *body;

    if (!get_u32(f, len, errp)) {
        return NULL;
    }
    if (*len > MIG_MAX_CHUNK) {
        error_setg(errp, "section '%s': length %u exceeds the limit of %u",
                   idstr, *len, MIG_MAX_CHUNK);
        return NULL;
    }
    body = g_try_malloc(MAX(*len, 1));
    if (!body) {
        error_setg(errp, "section '%s': out of memory for %u bytes", idstr,
                   *len);
        return NULL;
    }
    if (!mig_file_read(f, body, *len, errp)) {
        g_free(body);
        return NULL;
    }
    return body;
}

static bool load_device(MigFile *f, GPtrArray *all, bool take_bql,
                        uint32_t *ndev, Error **errp)
{
    char idstr[256];
    g_autofree uint8_t *body = NULL;
    uint32_t len, crc;
    StateEntry *e;
    MigBuf b;
    bool ok;

    if (!get_str(f, idstr, errp)) {
        return false;
    }
    body = get_body(f, idstr, &len, errp);
    if (!body || !get_u32(f, &crc, errp)) {
        return false;
    }
    if (mig_crc32(0, body, len) != crc) {
        error_setg(errp, "device '%s': state checksum mismatch (the stream "
                   "is corrupted)", idstr);
        return false;
    }
    e = find_state(all, idstr);
    if (!e) {
        error_setg(errp, "unknown device '%s' in the migration stream (is "
                   "the destination started with the same devices?)", idstr);
        return false;
    }
    if (e->loaded) {
        error_setg(errp, "device '%s' appears twice in the stream", idstr);
        return false;
    }
    b = (MigBuf) { .data = body, .len = len };
    if (take_bql) {
        bql_lock();
    }
    ok = vmstate_load(&b, e->vmsd, e->opaque, errp);
    if (take_bql) {
        bql_unlock();
    }
    if (!ok) {
        error_prepend(errp, "device '%s': ", idstr);
        return false;
    }
    if (mig_buf_left(&b)) {
        error_setg(errp, "device '%s': %zu stray bytes after its state",
                   idstr, mig_buf_left(&b));
        return false;
    }
    e->loaded = true;
    (*ndev)++;
    return true;
}

static bool load_live(MigFile *f, Error **errp)
{
    char idstr[256];
    g_autofree uint8_t *body = NULL;
    uint32_t len;
    LiveEntry *e;
    MigBuf b;

    if (!get_str(f, idstr, errp)) {
        return false;
    }
    e = find_live(idstr);
    if (!e) {
        error_setg(errp, "unknown section '%s' in the migration stream",
                   idstr);
        return false;
    }
    body = get_body(f, idstr, &len, errp);
    if (!body) {
        return false;
    }
    b = (MigBuf) { .data = body, .len = len };
    if (!e->ops->load(e->opaque, &b, errp)) {
        error_prepend(errp, "%s: ", idstr);
        return false;
    }
    if (mig_buf_left(&b)) {
        error_setg(errp, "%s: %zu stray bytes in a chunk", idstr,
                   mig_buf_left(&b));
        return false;
    }
    return true;
}

static bool load_finish(GPtrArray *all, uint32_t ndev, uint32_t claimed,
                        Error **errp)
{
    if (claimed != ndev) {
        error_setg(errp, "migration stream: the end record counts %u "
                   "devices, %u were loaded", claimed, ndev);
        return false;
    }
    for (guint i = 0; i < all->len; i++) {
        StateEntry *e = g_ptr_array_index(all, i);

        if (!e->loaded) {
            error_setg(errp, "device '%s' is missing from the migration "
                       "stream (is the source started with the same "
                       "devices?)", e->idstr);
            return false;
        }
    }
    for (guint i = 0; live_entries && i < live_entries->len; i++) {
        LiveEntry *e = g_ptr_array_index(live_entries, i);

        if (e->ops->load_done && !e->ops->load_done(e->opaque, errp)) {
            error_prepend(errp, "%s: ", e->idstr);
            return false;
        }
    }
    return true;
}

bool loadvm_stream(MigFile *f, bool take_bql, Error **errp)
{
    g_autoptr(GPtrArray) all = NULL;
    char magic[8];
    uint32_t version, ndev = 0;

    if (!mig_file_read(f, magic, 8, errp)) {
        error_prepend(errp, "reading the stream header: ");
        return false;
    }
    if (memcmp(magic, MIG_STREAM_MAGIC, 8)) {
        error_setg(errp, "not a Conduit migration stream (bad magic)");
        return false;
    }
    if (!get_u32(f, &version, errp)) {
        return false;
    }
    if (version != MIG_STREAM_VERSION) {
        error_setg(errp, "migration stream version %u not supported (this "
                   "Conduit reads version %u)", version, MIG_STREAM_VERSION);
        return false;
    }
    if (take_bql) {
        bql_lock();
    }
    all = collect_state();
    if (take_bql) {
        bql_unlock();
    }
    for (;;) {
        uint8_t type;
        uint32_t claimed;
        bool ok;

        if (!get_u8(f, &type, errp)) {
            return false;
        }
        switch (type) {
        case REC_LIVE:
            if (!load_live(f, errp)) {
                return false;
            }
            break;
        case REC_DEVICE:
            if (!load_device(f, all, take_bql, &ndev, errp)) {
                return false;
            }
            break;
        case REC_EOF:
            if (!get_u32(f, &claimed, errp)) {
                return false;
            }
            if (take_bql) {
                bql_lock();
            }
            ok = load_finish(all, ndev, claimed, errp);
            if (take_bql) {
                bql_unlock();
            }
            return ok;
        default:
            error_setg(errp, "migration stream: unknown record type 0x%02x",
                       type);
            return false;
        }
    }
}
