/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one walker of VMStateDescription tables, in both directions (see
 * include/migration/vmstate.h for the wire form).  The reader trusts
 * nothing: names, kinds, sizes and counts must match its own table, every
 * read is bounded by the MigBuf, and nesting is limited.
 */
#include "qemu/osdep.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "trace.h"

#define VMSTATE_MAX_DEPTH 8

/* ---- bounded reader ---- */

bool mig_buf_get(MigBuf *b, void *out, size_t n, Error **errp)
{
    if (n > mig_buf_left(b)) {
        error_setg(errp, "migration stream truncated: %zu bytes needed at "
                   "offset %zu, %zu left", n, b->pos, mig_buf_left(b));
        return false;
    }
    if (out) {
        memcpy(out, b->data + b->pos, n);
    }
    b->pos += n;
    return true;
}

bool mig_buf_get_u8(MigBuf *b, uint8_t *v, Error **errp)
{
    return mig_buf_get(b, v, 1, errp);
}

bool mig_buf_get_u16(MigBuf *b, uint16_t *v, Error **errp)
{
    uint16_t x;

    if (!mig_buf_get(b, &x, 2, errp)) {
        return false;
    }
    *v = GUINT16_FROM_LE(x);
    return true;
}

bool mig_buf_get_u32(MigBuf *b, uint32_t *v, Error **errp)
{
    uint32_t x;

    if (!mig_buf_get(b, &x, 4, errp)) {
        return false;
    }
    *v = GUINT32_FROM_LE(x);
    return true;
}

bool mig_buf_get_u64(MigBuf *b, uint64_t *v, Error **errp)
{
    uint64_t x;

    if (!mig_buf_get(b, &x, 8, errp)) {
        return false;
    }
    *v = GUINT64_FROM_LE(x);
    return true;
}

bool mig_buf_get_str(MigBuf *b, char *out, Error **errp)
{
    uint8_t len;

    if (!mig_buf_get_u8(b, &len, errp) || !mig_buf_get(b, out, len, errp)) {
        return false;
    }
    out[len] = '\0';
    if (strlen(out) != len) {
        error_setg(errp, "migration stream: NUL inside a name");
        return false;
    }
    return true;
}

/* ---- writer ---- */

void mig_put_u8(GByteArray *out, uint8_t v)
{
    g_byte_array_append(out, &v, 1);
}

void mig_put_u16(GByteArray *out, uint16_t v)
{
    v = GUINT16_TO_LE(v);
    g_byte_array_append(out, (uint8_t *)&v, 2);
}

void mig_put_u32(GByteArray *out, uint32_t v)
{
    v = GUINT32_TO_LE(v);
    g_byte_array_append(out, (uint8_t *)&v, 4);
}

void mig_put_u64(GByteArray *out, uint64_t v)
{
    v = GUINT64_TO_LE(v);
    g_byte_array_append(out, (uint8_t *)&v, 8);
}

void mig_put_str(GByteArray *out, const char *s)
{
    size_t n = MIN(strlen(s), 255);

    mig_put_u8(out, n);
    g_byte_array_append(out, (const uint8_t *)s, n);
}

void mig_put_bytes(GByteArray *out, const void *p, size_t n)
{
    g_byte_array_append(out, p, n);
}

/* ---- field helpers ---- */

static bool kind_is_scalar(VMStateKind k)
{
    return k >= VMS_UINT8 && k <= VMS_INT64;
}

/* The size a scalar kind must have in the struct and on the wire. */
static size_t kind_size(VMStateKind k)
{
    switch (k) {
    case VMS_UINT8:
    case VMS_BOOL:
        return 1;
    case VMS_UINT16:
        return 2;
    case VMS_UINT32:
    case VMS_INT32:
        return 4;
    case VMS_UINT64:
    case VMS_INT64:
        return 8;
    default:
        return 0;
    }
}

static bool field_present(const VMStateField *f, void *opaque, int version)
{
    if (f->version_id > version) {
        return false;
    }
    return !f->field_exists || f->field_exists(opaque, version);
}

static uint32_t field_count(const VMStateField *f, void *opaque)
{
    if (f->varray) {
        uint32_t n = *(uint32_t *)((uint8_t *)opaque + f->num_offset);
        return MIN(n, f->num);
    }
    return f->num;
}

static uint64_t scalar_load_host(const void *p, size_t size)
{
    switch (size) {
    case 1:
        return *(const uint8_t *)p;
    case 2:
        return *(const uint16_t *)p;
    case 4:
        return *(const uint32_t *)p;
    default:
        return *(const uint64_t *)p;
    }
}

static void scalar_store_host(void *p, size_t size, uint64_t v)
{
    switch (size) {
    case 1:
        *(uint8_t *)p = v;
        break;
    case 2:
        *(uint16_t *)p = v;
        break;
    case 4:
        *(uint32_t *)p = v;
        break;
    default:
        *(uint64_t *)p = v;
        break;
    }
}

/* ---- save ---- */

static bool vmstate_save_depth(GByteArray *out, const VMStateDescription *vmsd,
                               void *opaque, int depth, Error **errp);

static bool save_field(GByteArray *out, const VMStateField *f, void *opaque,
                       int depth, Error **errp)
{
    uint8_t *base = (uint8_t *)opaque + f->offset;
    uint32_t n = field_count(f, opaque);

    mig_put_u8(out, 'F');
    mig_put_str(out, f->name);
    mig_put_u8(out, f->kind);
    mig_put_u32(out, n);
    mig_put_u32(out, f->kind == VMS_STRUCT || f->kind == VMS_CUSTOM ? 0
                                                                    : f->size);
    if (kind_is_scalar(f->kind)) {
        g_assert(f->size == kind_size(f->kind));
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = scalar_load_host(base + i * f->size, f->size);

            if (f->kind == VMS_BOOL) {
                v = !!v;
            }
            switch (f->size) {
            case 1:
                mig_put_u8(out, v);
                break;
            case 2:
                mig_put_u16(out, v);
                break;
            case 4:
                mig_put_u32(out, v);
                break;
            default:
                mig_put_u64(out, v);
                break;
            }
        }
        return true;
    }
    switch (f->kind) {
    case VMS_BUFFER:
        mig_put_bytes(out, base, n);
        return true;
    case VMS_STRUCT:
        for (uint32_t i = 0; i < n; i++) {
            if (!vmstate_save_depth(out, f->vmsd, base + i * f->size,
                                    depth + 1, errp)) {
                return false;
            }
        }
        return true;
    case VMS_CUSTOM: {
        guint at = out->len;

        mig_put_u32(out, 0);
        if (!f->info->put(out, opaque, base, errp)) {
            return false;
        }
        uint32_t len = GUINT32_TO_LE(out->len - at - 4);
        memcpy(out->data + at, &len, 4);
        return true;
    }
    default:
        g_assert_not_reached();
    }
}

static bool vmstate_save_depth(GByteArray *out, const VMStateDescription *vmsd,
                               void *opaque, int depth, Error **errp)
{
    g_assert(depth < VMSTATE_MAX_DEPTH);
    if (vmsd->pre_save && !vmsd->pre_save(opaque, errp)) {
        error_prepend(errp, "%s: ", vmsd->name);
        return false;
    }
    mig_put_u8(out, 'S');
    mig_put_str(out, vmsd->name);
    mig_put_u32(out, vmsd->version_id);
    for (const VMStateField *f = vmsd->fields; f && f->name; f++) {
        if (field_present(f, opaque, vmsd->version_id) &&
            !save_field(out, f, opaque, depth, errp)) {
            return false;
        }
    }
    mig_put_u8(out, 'E');
    for (const VMStateDescription *const *sub = vmsd->subsections;
         sub && *sub; sub++) {
        if ((*sub)->needed && !(*sub)->needed(opaque)) {
            continue;
        }
        mig_put_u8(out, 'U');
        if (!vmstate_save_depth(out, *sub, opaque, depth + 1, errp)) {
            return false;
        }
    }
    mig_put_u8(out, 'E');
    return true;
}

bool vmstate_save(GByteArray *out, const VMStateDescription *vmsd,
                  void *opaque, Error **errp)
{
    return vmstate_save_depth(out, vmsd, opaque, 0, errp);
}

/* ---- load ---- */

static bool vmstate_load_depth(MigBuf *b, const VMStateDescription *vmsd,
                               void *opaque, int depth, Error **errp);

static bool expect_tag(MigBuf *b, uint8_t want, const char *where,
                       Error **errp)
{
    uint8_t tag;

    if (!mig_buf_get_u8(b, &tag, errp)) {
        return false;
    }
    if (tag != want) {
        error_setg(errp, "%s: expected tag '%c', found 0x%02x", where, want,
                   tag);
        return false;
    }
    return true;
}

static bool load_field(MigBuf *b, const VMStateDescription *vmsd,
                       const VMStateField *f, void *opaque, int depth,
                       Error **errp)
{
    uint8_t *base = (uint8_t *)opaque + f->offset;
    char name[256];
    uint8_t kind;
    uint32_t n, esize, want_esize;

    if (!expect_tag(b, 'F', vmsd->name, errp) ||
        !mig_buf_get_str(b, name, errp) ||
        !mig_buf_get_u8(b, &kind, errp) ||
        !mig_buf_get_u32(b, &n, errp) ||
        !mig_buf_get_u32(b, &esize, errp)) {
        return false;
    }
    if (strcmp(name, f->name)) {
        error_setg(errp, "%s: field '%s' expected, stream has '%s'",
                   vmsd->name, f->name, name);
        return false;
    }
    want_esize = f->kind == VMS_STRUCT || f->kind == VMS_CUSTOM ? 0 : f->size;
    if (kind != f->kind || esize != want_esize) {
        error_setg(errp, "%s.%s: stream has kind %u size %u, expected kind "
                   "%u size %u", vmsd->name, f->name, kind, esize, f->kind,
                   want_esize);
        return false;
    }
    if (f->varray ? n > f->num : n != f->num) {
        error_setg(errp, "%s.%s: %u elements in the stream, %s %u",
                   vmsd->name, f->name, n, f->varray ? "at most" : "expected",
                   f->num);
        return false;
    }
    if (f->varray) {
        *(uint32_t *)((uint8_t *)opaque + f->num_offset) = n;
    }
    if (kind_is_scalar(f->kind)) {
        for (uint32_t i = 0; i < n; i++) {
            uint64_t v = 0;
            uint8_t raw[8];

            if (!mig_buf_get(b, raw, f->size, errp)) {
                return false;
            }
            for (size_t k = 0; k < f->size; k++) {
                v |= (uint64_t)raw[k] << (8 * k);
            }
            if (f->kind == VMS_BOOL && v > 1) {
                error_setg(errp, "%s.%s: boolean value %" PRIu64,
                           vmsd->name, f->name, v);
                return false;
            }
            if (f->max && v > f->max) {
                error_setg(errp, "%s.%s: value %" PRIu64 " above the limit %"
                           PRIu64, vmsd->name, f->name, v, f->max);
                return false;
            }
            scalar_store_host(base + i * f->size, f->size, v);
        }
        return true;
    }
    switch (f->kind) {
    case VMS_BUFFER:
        return mig_buf_get(b, base, n, errp);
    case VMS_STRUCT:
        for (uint32_t i = 0; i < n; i++) {
            if (!vmstate_load_depth(b, f->vmsd, base + i * f->size,
                                    depth + 1, errp)) {
                error_prepend(errp, "%s.%s[%u]: ", vmsd->name, f->name, i);
                return false;
            }
        }
        return true;
    case VMS_CUSTOM: {
        uint32_t len;
        MigBuf sub;

        if (!mig_buf_get_u32(b, &len, errp)) {
            return false;
        }
        if (len > mig_buf_left(b)) {
            error_setg(errp, "%s.%s: %u bytes claimed, %zu left", vmsd->name,
                       f->name, len, mig_buf_left(b));
            return false;
        }
        sub = (MigBuf) { .data = b->data + b->pos, .len = len };
        b->pos += len;
        if (!f->info->get(&sub, opaque, base, errp)) {
            error_prepend(errp, "%s.%s: ", vmsd->name, f->name);
            return false;
        }
        if (mig_buf_left(&sub)) {
            error_setg(errp, "%s.%s: %zu stray bytes", vmsd->name, f->name,
                       mig_buf_left(&sub));
            return false;
        }
        return true;
    }
    default:
        g_assert_not_reached();
    }
}

static bool vmstate_load_depth(MigBuf *b, const VMStateDescription *vmsd,
                               void *opaque, int depth, Error **errp)
{
    char name[256];
    uint32_t version;
    uint8_t tag;

    if (depth >= VMSTATE_MAX_DEPTH) {
        error_setg(errp, "%s: nested too deeply", vmsd->name);
        return false;
    }
    if (!expect_tag(b, 'S', vmsd->name, errp) ||
        !mig_buf_get_str(b, name, errp) ||
        !mig_buf_get_u32(b, &version, errp)) {
        return false;
    }
    if (strcmp(name, vmsd->name)) {
        error_setg(errp, "state '%s' expected, stream has '%s'", vmsd->name,
                   name);
        return false;
    }
    if (version > (uint32_t)vmsd->version_id ||
        (int)version < vmsd->minimum_version_id) {
        error_setg(errp, "%s: stream version %u not supported (this side "
                   "loads %d to %d)", vmsd->name, version,
                   vmsd->minimum_version_id, vmsd->version_id);
        return false;
    }
    trace_vmstate_load(vmsd->name, version);
    if (vmsd->pre_load && !vmsd->pre_load(opaque, errp)) {
        return false;
    }
    for (const VMStateField *f = vmsd->fields; f && f->name; f++) {
        if (field_present(f, opaque, version) &&
            !load_field(b, vmsd, f, opaque, depth, errp)) {
            return false;
        }
    }
    if (!expect_tag(b, 'E', vmsd->name, errp)) {
        return false;
    }
    for (;;) {
        const VMStateDescription *const *sub;
        MigBuf peek;
        char subname[256];

        if (!mig_buf_get_u8(b, &tag, errp)) {
            return false;
        }
        if (tag == 'E') {
            break;
        }
        if (tag != 'U') {
            error_setg(errp, "%s: bad subsection tag 0x%02x", vmsd->name, tag);
            return false;
        }
        peek = *b;
        if (!expect_tag(&peek, 'S', vmsd->name, errp) ||
            !mig_buf_get_str(&peek, subname, errp)) {
            return false;
        }
        for (sub = vmsd->subsections; sub && *sub; sub++) {
            if (!strcmp((*sub)->name, subname)) {
                break;
            }
        }
        if (!sub || !*sub) {
            error_setg(errp, "%s: unknown subsection '%s'", vmsd->name,
                       subname);
            return false;
        }
        if (!vmstate_load_depth(b, *sub, opaque, depth + 1, errp)) {
            return false;
        }
    }
    if (vmsd->post_load && !vmsd->post_load(opaque, version, errp)) {
        error_prepend(errp, "%s: ", vmsd->name);
        return false;
    }
    return true;
}

bool vmstate_load(MigBuf *b, const VMStateDescription *vmsd, void *opaque,
                  Error **errp)
{
    return vmstate_load_depth(b, vmsd, opaque, 0, errp);
}
