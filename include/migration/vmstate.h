/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device state as data.  A VMStateDescription lists a device's fields
 * once (name, kind, where it lives in the device struct, since which
 * version it exists); the same table drives the writer and the reader.
 *
 * Wire form of one description (all integers little-endian), which makes
 * a section self-describing: a reader checks every field's name, kind,
 * element size and count against its own table before it stores a byte.
 *
 *   'S' name:str8 version:u32
 *     per field present at that version:
 *       'F' name:str8 kind:u8 count:u32 elem_size:u32 payload
 *   'E'
 *     per needed subsection: 'U' <a description, recursively>
 *   'E'
 *
 * Payloads: scalars are elem_size bytes each; BUFFER is count bytes;
 * STRUCT is count nested descriptions; CUSTOM is a u32 length and that
 * many bytes, parsed by the field's VMStateInfo from a bounded buffer.
 *
 * A stream is hostile input: every length is bounded by the buffer it
 * comes from and by the destination's own table, a scalar with a .max is
 * range-checked, and post_load hooks check what ties fields together
 * (an index below a size) before the device uses any of it.
 */
#ifndef MIGRATION_VMSTATE_H
#define MIGRATION_VMSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include "qemu/typedefs.h"

typedef struct VMStateDescription VMStateDescription;

/* A bounded reader over bytes that came from a stream. */
typedef struct MigBuf {
    const uint8_t *data;
    size_t len;
    size_t pos;
} MigBuf;

bool mig_buf_get(MigBuf *b, void *out, size_t n, Error **errp);
bool mig_buf_get_u8(MigBuf *b, uint8_t *v, Error **errp);
bool mig_buf_get_u16(MigBuf *b, uint16_t *v, Error **errp);
bool mig_buf_get_u32(MigBuf *b, uint32_t *v, Error **errp);
bool mig_buf_get_u64(MigBuf *b, uint64_t *v, Error **errp);
/* A str8: u8 length + bytes; out must hold 256 bytes (NUL-terminated). */
bool mig_buf_get_str(MigBuf *b, char *out, Error **errp);
static inline size_t mig_buf_left(const MigBuf *b)
{
    return b->len - b->pos;
}

void mig_put_u8(GByteArray *out, uint8_t v);
void mig_put_u16(GByteArray *out, uint16_t v);
void mig_put_u32(GByteArray *out, uint32_t v);
void mig_put_u64(GByteArray *out, uint64_t v);
void mig_put_str(GByteArray *out, const char *s);   /* at most 255 bytes */
void mig_put_bytes(GByteArray *out, const void *p, size_t n);

typedef enum VMStateKind {
    VMS_UINT8 = 1,
    VMS_UINT16,
    VMS_UINT32,
    VMS_UINT64,
    VMS_BOOL,
    VMS_INT32,
    VMS_INT64,
    VMS_BUFFER,
    VMS_STRUCT,
    VMS_CUSTOM,
} VMStateKind;

/* A field the table cannot describe: the device writes and parses it. */
typedef struct VMStateInfo {
    const char *name;
    bool (*put)(GByteArray *out, void *opaque, void *field, Error **errp);
    /* b holds exactly the bytes put() wrote (or hostile ones). */
    bool (*get)(MigBuf *b, void *opaque, void *field, Error **errp);
} VMStateInfo;

typedef struct VMStateField {
    const char *name;
    VMStateKind kind;
    size_t offset;              /* of the field in the state struct */
    size_t size;                /* one element, bytes */
    uint32_t num;               /* elements (1 for a plain scalar) */
    /*
     * Variable-length array: the uint32_t at num_offset holds the count
     * (at most num).  The reader stores the count it read there.
     */
    bool varray;
    size_t num_offset;
    const VMStateDescription *vmsd;     /* VMS_STRUCT */
    const VMStateInfo *info;            /* VMS_CUSTOM */
    int version_id;                     /* present from this version on */
    /* A scalar read above max is refused (0: no limit). */
    uint64_t max;
    /* Optional: false leaves the field out of the stream and table walk. */
    bool (*field_exists)(void *opaque, int version_id);
} VMStateField;

struct VMStateDescription {
    const char *name;
    int version_id;
    int minimum_version_id;
    bool (*pre_save)(void *opaque, Error **errp);
    bool (*pre_load)(void *opaque, Error **errp);
    /* Validates and applies the loaded fields; false fails the load. */
    bool (*post_load)(void *opaque, int version_id, Error **errp);
    /* Subsections: sent only when needed() says so. */
    bool (*needed)(void *opaque);
    const VMStateField *fields;     /* ends with VMSTATE_END_OF_LIST() */
    const VMStateDescription *const *subsections;   /* NULL-terminated */
};

/* Encodes the state at opaque per vmsd; false (errp set) if pre_save fails. */
bool vmstate_save(GByteArray *out, const VMStateDescription *vmsd,
                  void *opaque, Error **errp);
/*
 * Decodes one description from b into opaque.  On failure the device may
 * hold a partial state; the caller must not run the VM.
 */
bool vmstate_load(MigBuf *b, const VMStateDescription *vmsd, void *opaque,
                  Error **errp);

/* ---- table helpers ---- */

#define vmstate_offset(type, field) offsetof(type, field)
#define vmstate_elem_size(type, field) sizeof(((type *)0)->field)
#define vmstate_array_len(type, field) \
    (sizeof(((type *)0)->field) / sizeof(((type *)0)->field[0]))

#define VMSTATE_SCALAR_V(_f, _s, _kind, _v) {                           \
    .name = #_f, .kind = (_kind), .offset = offsetof(_s, _f),           \
    .size = vmstate_elem_size(_s, _f), .num = 1, .version_id = (_v),    \
}
#define VMSTATE_UINT8_V(f, s, v)  VMSTATE_SCALAR_V(f, s, VMS_UINT8, v)
#define VMSTATE_UINT16_V(f, s, v) VMSTATE_SCALAR_V(f, s, VMS_UINT16, v)
#define VMSTATE_UINT32_V(f, s, v) VMSTATE_SCALAR_V(f, s, VMS_UINT32, v)
#define VMSTATE_UINT64_V(f, s, v) VMSTATE_SCALAR_V(f, s, VMS_UINT64, v)
#define VMSTATE_UINT8(f, s)  VMSTATE_UINT8_V(f, s, 0)
#define VMSTATE_UINT16(f, s) VMSTATE_UINT16_V(f, s, 0)
#define VMSTATE_UINT32(f, s) VMSTATE_UINT32_V(f, s, 0)
#define VMSTATE_UINT64(f, s) VMSTATE_UINT64_V(f, s, 0)
#define VMSTATE_INT32(f, s)  VMSTATE_SCALAR_V(f, s, VMS_INT32, 0)
#define VMSTATE_INT64(f, s)  VMSTATE_SCALAR_V(f, s, VMS_INT64, 0)
#define VMSTATE_BOOL(f, s)   VMSTATE_SCALAR_V(f, s, VMS_BOOL, 0)
#define VMSTATE_BOOL_V(f, s, v) VMSTATE_SCALAR_V(f, s, VMS_BOOL, v)

/* A scalar whose loaded value must not exceed _max. */
#define VMSTATE_UINT32_MAX(_f, _s, _max) {                              \
    .name = #_f, .kind = VMS_UINT32, .offset = offsetof(_s, _f),        \
    .size = 4, .num = 1, .max = (_max),                                 \
}
#define VMSTATE_UINT16_MAX(_f, _s, _max) {                              \
    .name = #_f, .kind = VMS_UINT16, .offset = offsetof(_s, _f),        \
    .size = 2, .num = 1, .max = (_max),                                 \
}
#define VMSTATE_UINT8_MAX(_f, _s, _max) {                               \
    .name = #_f, .kind = VMS_UINT8, .offset = offsetof(_s, _f),         \
    .size = 1, .num = 1, .max = (_max),                                 \
}

/* Fixed arrays of scalars (the element type sets the size). */
#define VMSTATE_ARRAY_V(_f, _s, _kind, _v) {                            \
    .name = #_f, .kind = (_kind), .offset = offsetof(_s, _f),           \
    .size = sizeof(((_s *)0)->_f[0]),                                   \
    .num = vmstate_array_len(_s, _f), .version_id = (_v),               \
}
#define VMSTATE_UINT8_ARRAY(f, s)  VMSTATE_ARRAY_V(f, s, VMS_UINT8, 0)
#define VMSTATE_UINT16_ARRAY(f, s) VMSTATE_ARRAY_V(f, s, VMS_UINT16, 0)
#define VMSTATE_UINT32_ARRAY(f, s) VMSTATE_ARRAY_V(f, s, VMS_UINT32, 0)
#define VMSTATE_UINT64_ARRAY(f, s) VMSTATE_ARRAY_V(f, s, VMS_UINT64, 0)
#define VMSTATE_BOOL_ARRAY(f, s)   VMSTATE_ARRAY_V(f, s, VMS_BOOL, 0)

/* A byte buffer of a fixed size (the whole of a uint8_t array field). */
#define VMSTATE_BUFFER(_f, _s) {                                        \
    .name = #_f, .kind = VMS_BUFFER, .offset = offsetof(_s, _f),        \
    .size = 1, .num = sizeof(((_s *)0)->_f),                            \
}

/* One nested struct / a fixed array of them. */
#define VMSTATE_STRUCT(_f, _s, _vmsd, _type) {                          \
    .name = #_f, .kind = VMS_STRUCT, .offset = offsetof(_s, _f),        \
    .size = sizeof(_type), .num = 1, .vmsd = &(_vmsd),                  \
}
#define VMSTATE_STRUCT_ARRAY(_f, _s, _vmsd, _type) {                    \
    .name = #_f, .kind = VMS_STRUCT, .offset = offsetof(_s, _f),        \
    .size = sizeof(_type), .num = vmstate_array_len(_s, _f),            \
    .vmsd = &(_vmsd),                                                   \
}
/* The first *(uint32_t *)(s + num_field) of the array _f. */
#define VMSTATE_STRUCT_VARRAY(_f, _s, _numf, _vmsd, _type) {            \
    .name = #_f, .kind = VMS_STRUCT, .offset = offsetof(_s, _f),        \
    .size = sizeof(_type), .num = vmstate_array_len(_s, _f),            \
    .varray = true, .num_offset = offsetof(_s, _numf), .vmsd = &(_vmsd),\
}

/* A field parsed by hand (ring state, a timer). */
#define VMSTATE_CUSTOM(_name, _s, _f, _info) {                          \
    .name = (_name), .kind = VMS_CUSTOM, .offset = offsetof(_s, _f),    \
    .num = 1, .info = &(_info),                                         \
}

#define VMSTATE_END_OF_LIST() { .name = NULL }

#endif
