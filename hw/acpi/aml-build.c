/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * AML builder: each constructor encodes its node per ACPI 6.5 chapter 20
 * (opcodes from 20.3, PkgLength from 20.2.4) and chapter 6.4 (resource
 * descriptors).  Containers keep their body apart until they are closed,
 * because the PkgLength in front of it depends on its final size.
 */
#include "qemu/osdep.h"
#include "hw/acpi/aml-build.h"

/* Opcodes (ACPI 6.5, 20.2). */
#define AML_ZERO_OP             0x00
#define AML_ONE_OP              0x01
#define AML_NAME_OP             0x08
#define AML_BYTE_PREFIX         0x0a
#define AML_WORD_PREFIX         0x0b
#define AML_DWORD_PREFIX        0x0c
#define AML_STRING_PREFIX       0x0d
#define AML_QWORD_PREFIX        0x0e
#define AML_SCOPE_OP            0x10
#define AML_BUFFER_OP           0x11
#define AML_PACKAGE_OP          0x12
#define AML_METHOD_OP           0x14
#define AML_DUAL_NAME_PREFIX    0x2e
#define AML_MULTI_NAME_PREFIX   0x2f
#define AML_EXT_OP_PREFIX       0x5b
#define AML_EXT_DEVICE_OP       0x82
#define AML_ROOT_CHAR           0x5c
#define AML_PARENT_PREFIX_CHAR  0x5e
#define AML_LOCAL0_OP           0x60
#define AML_ARG0_OP             0x68
#define AML_STORE_OP            0x70
#define AML_AND_OP              0x7b
#define AML_OR_OP               0x7d
#define AML_NOTIFY_OP           0x86
#define AML_CREATE_DWORD_FIELD_OP 0x8a
#define AML_LEQUAL_OP           0x93
#define AML_IF_OP               0xa0
#define AML_ELSE_OP             0xa1
#define AML_RETURN_OP           0xa4
#define AML_ONES_OP             0xff

/* Resource descriptor tags (6.4). */
#define RES_IRQ_NO_FLAGS        0x22    /* small, length 2 */
#define RES_IO                  0x47    /* small, length 7 */
#define RES_END_TAG             0x79    /* small, length 1 */
#define RES_MEMORY32_FIXED      0x86    /* large */
#define RES_DWORD_ADDRESS       0x87
#define RES_WORD_ADDRESS        0x88
#define RES_QWORD_ADDRESS       0x8a

#define RES_TYPE_MEMORY         0
#define RES_TYPE_IO             1
#define RES_TYPE_BUS            2
/* General flags: _MAF | _MIF, positive decode, producer. */
#define RES_FLAGS_FIXED_WINDOW  0x0c
#define RES_IO_ENTIRE_RANGE     0x03
#define RES_MEM_READ_WRITE      0x01

typedef enum AmlKind {
    AML_PLAIN,          /* body is the whole encoding */
    AML_BLOCK,          /* op, PkgLength, body */
    AML_PACKAGE,        /* op, PkgLength, NumElements, body */
    AML_BUFFER,         /* op, PkgLength, BufferSize, body */
    AML_RESOURCES,      /* a buffer whose body gets the End Tag */
} AmlKind;

struct Aml {
    AmlKind kind;
    uint8_t op[2];
    unsigned op_len;
    unsigned nelems;    /* AML_PACKAGE */
    GByteArray *body;
};

static Aml *aml_new(AmlKind kind)
{
    Aml *a = g_new0(Aml, 1);

    a->kind = kind;
    a->body = g_byte_array_new();
    return a;
}

static Aml *aml_new_op(AmlKind kind, uint8_t op)
{
    Aml *a = aml_new(kind);

    a->op[0] = op;
    a->op_len = 1;
    return a;
}

void aml_free(Aml *aml)
{
    if (aml) {
        g_byte_array_unref(aml->body);
        g_free(aml);
    }
}

static void put8(GByteArray *b, uint8_t v)
{
    g_byte_array_append(b, &v, 1);
}

static void put16(GByteArray *b, uint16_t v)
{
    put8(b, v);
    put8(b, v >> 8);
}

static void put32(GByteArray *b, uint32_t v)
{
    put16(b, v);
    put16(b, v >> 16);
}

static void put64(GByteArray *b, uint64_t v)
{
    put32(b, v);
    put32(b, v >> 32);
}

size_t aml_pkg_length(uint8_t out[4], size_t body_len)
{
    size_t total;
    size_t n;

    /* The length counts its own bytes: pick the smallest that fits. */
    if (body_len + 1 <= 0x3f) {
        out[0] = body_len + 1;
        return 1;
    }
    for (n = 2; n <= 4; n++) {
        total = body_len + n;
        if (total < (1u << (4 + 8 * (n - 1)))) {
            break;
        }
    }
    g_assert(n <= 4);
    out[0] = ((n - 1) << 6) | (total & 0xf);
    for (size_t i = 1; i < n; i++) {
        out[i] = total >> (4 + 8 * (i - 1));
    }
    return n;
}

static void put_pkg_length(GByteArray *b, size_t body_len)
{
    uint8_t len[4];

    g_byte_array_append(b, len, aml_pkg_length(len, body_len));
}

/* The smallest integer encoding (20.2.3 ComputationalData). */
static void put_integer(GByteArray *b, uint64_t v)
{
    if (v == 0) {
        put8(b, AML_ZERO_OP);
    } else if (v == 1) {
        put8(b, AML_ONE_OP);
    } else if (v == UINT64_MAX) {
        put8(b, AML_ONES_OP);
    } else if (v <= UINT8_MAX) {
        put8(b, AML_BYTE_PREFIX);
        put8(b, v);
    } else if (v <= UINT16_MAX) {
        put8(b, AML_WORD_PREFIX);
        put16(b, v);
    } else if (v <= UINT32_MAX) {
        put8(b, AML_DWORD_PREFIX);
        put32(b, v);
    } else {
        put8(b, AML_QWORD_PREFIX);
        put64(b, v);
    }
}

GByteArray *aml_serialize(Aml *aml)
{
    GByteArray *out = g_byte_array_new();
    GByteArray *payload = g_byte_array_new();

    switch (aml->kind) {
    case AML_PLAIN:
        g_byte_array_append(out, aml->op, aml->op_len);
        g_byte_array_append(out, aml->body->data, aml->body->len);
        break;
    case AML_BLOCK:
        g_byte_array_append(payload, aml->body->data, aml->body->len);
        break;
    case AML_PACKAGE:
        g_assert(aml->nelems <= UINT8_MAX);
        put8(payload, aml->nelems);
        g_byte_array_append(payload, aml->body->data, aml->body->len);
        break;
    case AML_RESOURCES:
        put8(aml->body, RES_END_TAG | 1);
        put8(aml->body, 0);     /* checksum 0: "treat as correct" */
        /* fall through */
    case AML_BUFFER:
        put_integer(payload, aml->body->len);
        g_byte_array_append(payload, aml->body->data, aml->body->len);
        break;
    }
    if (aml->kind != AML_PLAIN) {
        g_byte_array_append(out, aml->op, aml->op_len);
        put_pkg_length(out, payload->len);
        g_byte_array_append(out, payload->data, payload->len);
    }
    g_byte_array_unref(payload);
    aml_free(aml);
    return out;
}

void aml_append(Aml *parent, Aml *child)
{
    GByteArray *enc = aml_serialize(child);

    g_byte_array_append(parent->body, enc->data, enc->len);
    g_byte_array_unref(enc);
    if (parent->kind == AML_PACKAGE) {
        parent->nelems++;
    }
}

Aml *aml_list(void)
{
    return aml_new(AML_PLAIN);
}

/* ---- names ---- */

static bool aml_name_char_ok(char c, bool lead)
{
    return (c >= 'A' && c <= 'Z') || c == '_' || (!lead && c >= '0' &&
                                                  c <= '9');
}

bool aml_encode_namestring(GByteArray *out, const char *name)
{
    g_autoptr(GByteArray) enc = g_byte_array_new();
    g_auto(GStrv) segs = NULL;
    const char *p = name;
    guint nseg;

    if (*p == '\\') {
        put8(enc, AML_ROOT_CHAR);
        p++;
    } else {
        while (*p == '^') {
            put8(enc, AML_PARENT_PREFIX_CHAR);
            p++;
        }
    }
    if (!*p) {
        put8(enc, AML_ZERO_OP);         /* NullName, e.g. "\\" alone */
        g_byte_array_append(out, enc->data, enc->len);
        return true;
    }
    segs = g_strsplit(p, ".", -1);
    nseg = g_strv_length(segs);
    if (nseg > 255) {
        return false;
    }
    if (nseg == 2) {
        put8(enc, AML_DUAL_NAME_PREFIX);
    } else if (nseg > 2) {
        put8(enc, AML_MULTI_NAME_PREFIX);
        put8(enc, nseg);
    }
    for (guint i = 0; i < nseg; i++) {
        size_t len = strlen(segs[i]);

        if (len == 0 || len > 4) {
            return false;
        }
        for (size_t j = 0; j < 4; j++) {
            char c = j < len ? segs[i][j] : '_';

            if (!aml_name_char_ok(c, j == 0)) {
                return false;
            }
            put8(enc, c);
        }
    }
    g_byte_array_append(out, enc->data, enc->len);
    return true;
}

static void put_name(GByteArray *b, const char *name)
{
    /* Names come from our own code: a bad one is a programming error. */
    if (!aml_encode_namestring(b, name)) {
        g_error("invalid AML name '%s'", name);
    }
}

Aml *aml_name(const char *name)
{
    Aml *a = aml_new(AML_PLAIN);

    put_name(a->body, name);
    return a;
}

Aml *aml_arg(unsigned n)
{
    Aml *a = aml_new(AML_PLAIN);

    g_assert(n <= 6);
    put8(a->body, AML_ARG0_OP + n);
    return a;
}

Aml *aml_local(unsigned n)
{
    Aml *a = aml_new(AML_PLAIN);

    g_assert(n <= 7);
    put8(a->body, AML_LOCAL0_OP + n);
    return a;
}

/* ---- data ---- */

Aml *aml_int(uint64_t value)
{
    Aml *a = aml_new(AML_PLAIN);

    put_integer(a->body, value);
    return a;
}

Aml *aml_string(const char *str)
{
    Aml *a = aml_new(AML_PLAIN);

    put8(a->body, AML_STRING_PREFIX);
    g_byte_array_append(a->body, (const guint8 *)str, strlen(str) + 1);
    return a;
}

/*
 * EISA ID: three letters of five bits each (A = 1) and four hex digits,
 * stored most significant byte first, so "PNP0A03" is the DWord
 * 0x030ad041.
 */
Aml *aml_eisaid(const char *id)
{
    uint32_t v;

    g_assert(strlen(id) == 7);
    v = ((uint32_t)(id[0] - 0x40) & 0x1f) << 26 |
        ((uint32_t)(id[1] - 0x40) & 0x1f) << 21 |
        ((uint32_t)(id[2] - 0x40) & 0x1f) << 16 |
        (uint32_t)strtoul(id + 3, NULL, 16);
    return aml_int(GUINT32_SWAP_LE_BE(v));
}

static int hexval(char c)
{
    return g_ascii_xdigit_value(c);
}

/*
 * "aabbccdd-eeff-gghh-iijj-kkllmmnnoopp" -> dd cc bb aa ff ee hh gg ii jj
 * kk ll mm nn oo pp: the first three fields little-endian (19.6.143).
 */
Aml *aml_touuid(const char *uuid)
{
    static const uint8_t order[16] = {
        3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15,
    };
    uint8_t raw[16], out[16];
    size_t n = 0;

    for (const char *p = uuid; *p && n < 16; p++) {
        if (*p == '-') {
            continue;
        }
        g_assert(hexval(p[0]) >= 0 && hexval(p[1]) >= 0);
        raw[n++] = hexval(p[0]) << 4 | hexval(p[1]);
        p++;
    }
    g_assert(n == 16);
    for (size_t i = 0; i < 16; i++) {
        out[i] = raw[order[i]];
    }
    return aml_buffer(out, sizeof(out));
}

Aml *aml_buffer(const uint8_t *data, size_t len)
{
    Aml *a = aml_new_op(AML_BUFFER, AML_BUFFER_OP);

    g_byte_array_append(a->body, data, len);
    return a;
}

Aml *aml_package(void)
{
    return aml_new_op(AML_PACKAGE, AML_PACKAGE_OP);
}

/* ---- named objects ---- */

Aml *aml_name_decl(const char *name, Aml *value)
{
    Aml *a = aml_new(AML_PLAIN);

    put8(a->body, AML_NAME_OP);
    put_name(a->body, name);
    aml_append(a, value);
    return a;
}

Aml *aml_scope(const char *name)
{
    Aml *a = aml_new_op(AML_BLOCK, AML_SCOPE_OP);

    put_name(a->body, name);
    return a;
}

Aml *aml_device(const char *name)
{
    Aml *a = aml_new_op(AML_BLOCK, AML_EXT_OP_PREFIX);

    a->op[1] = AML_EXT_DEVICE_OP;
    a->op_len = 2;
    put_name(a->body, name);
    return a;
}

Aml *aml_method(const char *name, unsigned nargs, bool serialized)
{
    Aml *a = aml_new_op(AML_BLOCK, AML_METHOD_OP);

    g_assert(nargs <= 7);
    put_name(a->body, name);
    put8(a->body, nargs | (serialized ? 1 << 3 : 0));
    return a;
}

/* ---- statements ---- */

Aml *aml_if(Aml *predicate)
{
    Aml *a = aml_new_op(AML_BLOCK, AML_IF_OP);

    aml_append(a, predicate);
    return a;
}

Aml *aml_else(void)
{
    return aml_new_op(AML_BLOCK, AML_ELSE_OP);
}

static Aml *aml_op_args(uint8_t op, Aml *a1, Aml *a2, Aml *a3)
{
    Aml *a = aml_new(AML_PLAIN);

    put8(a->body, op);
    aml_append(a, a1);
    if (a2) {
        aml_append(a, a2);
    }
    if (a3) {
        aml_append(a, a3);
    }
    return a;
}

Aml *aml_return(Aml *value)
{
    return aml_op_args(AML_RETURN_OP, value, NULL, NULL);
}

Aml *aml_store(Aml *src, Aml *dst)
{
    return aml_op_args(AML_STORE_OP, src, dst, NULL);
}

/* Target is a SuperName, or NullName when the result is not stored. */
static Aml *aml_target(Aml *target)
{
    return target ? target : aml_int(0);
}

Aml *aml_and(Aml *a, Aml *b, Aml *target)
{
    return aml_op_args(AML_AND_OP, a, b, aml_target(target));
}

Aml *aml_or(Aml *a, Aml *b, Aml *target)
{
    return aml_op_args(AML_OR_OP, a, b, aml_target(target));
}

Aml *aml_lequal(Aml *a, Aml *b)
{
    return aml_op_args(AML_LEQUAL_OP, a, b, NULL);
}

Aml *aml_create_dword_field(Aml *buf, Aml *index, const char *name)
{
    Aml *a = aml_op_args(AML_CREATE_DWORD_FIELD_OP, buf, index, NULL);

    put_name(a->body, name);
    return a;
}

Aml *aml_notify(Aml *object, Aml *value)
{
    return aml_op_args(AML_NOTIFY_OP, object, value, NULL);
}

/* ---- resource templates ---- */

Aml *aml_resource_template(void)
{
    return aml_new_op(AML_RESOURCES, AML_BUFFER_OP);
}

Aml *aml_io(uint16_t min, uint16_t max, uint8_t align, uint8_t len)
{
    Aml *a = aml_new(AML_PLAIN);

    put8(a->body, RES_IO | 7);
    put8(a->body, 1);           /* decodes 16 address bits */
    put16(a->body, min);
    put16(a->body, max);
    put8(a->body, align);
    put8(a->body, len);
    return a;
}

Aml *aml_irq_no_flags(unsigned irq)
{
    Aml *a = aml_new(AML_PLAIN);

    g_assert(irq < 16);
    put8(a->body, RES_IRQ_NO_FLAGS | 2);
    put16(a->body, 1u << irq);
    return a;
}

Aml *aml_memory32_fixed(uint32_t base, uint32_t len, bool rw)
{
    Aml *a = aml_new(AML_PLAIN);

    put8(a->body, RES_MEMORY32_FIXED);
    put16(a->body, 9);
    put8(a->body, rw ? 1 : 0);
    put32(a->body, base);
    put32(a->body, len);
    return a;
}

/*
 * The Word/DWord/QWord Address Space descriptors share a layout: tag,
 * length, resource type, general flags, type-specific flags, then
 * granularity, minimum, maximum, translation offset and length, each
 * 'width' bytes.
 */
static Aml *aml_address_space(uint8_t tag, unsigned width, uint8_t type,
                              uint8_t type_flags, uint64_t min, uint64_t max)
{
    Aml *a = aml_new(AML_PLAIN);
    uint64_t fields[5] = { 0, min, max, 0, max - min + 1 };

    put8(a->body, tag);
    put16(a->body, 3 + 5 * width);
    put8(a->body, type);
    put8(a->body, RES_FLAGS_FIXED_WINDOW);
    put8(a->body, type_flags);
    for (int i = 0; i < 5; i++) {
        switch (width) {
        case 2:
            put16(a->body, fields[i]);
            break;
        case 4:
            put32(a->body, fields[i]);
            break;
        default:
            put64(a->body, fields[i]);
            break;
        }
    }
    return a;
}

Aml *aml_word_bus_number(uint16_t min, uint16_t max)
{
    return aml_address_space(RES_WORD_ADDRESS, 2, RES_TYPE_BUS, 0, min, max);
}

Aml *aml_word_io(uint16_t min, uint16_t max)
{
    return aml_address_space(RES_WORD_ADDRESS, 2, RES_TYPE_IO,
                             RES_IO_ENTIRE_RANGE, min, max);
}

Aml *aml_dword_memory(uint32_t min, uint32_t max)
{
    return aml_address_space(RES_DWORD_ADDRESS, 4, RES_TYPE_MEMORY,
                             RES_MEM_READ_WRITE, min, max);
}

Aml *aml_qword_memory(uint64_t min, uint64_t max)
{
    return aml_address_space(RES_QWORD_ADDRESS, 8, RES_TYPE_MEMORY,
                             RES_MEM_READ_WRITE, min, max);
}
