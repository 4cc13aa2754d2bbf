/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SMBIOS structure table and entry points (DMTF DSP0134 3.x): -smbios
 * parsing and pure builders; see include/hw/firmware/smbios.h.
 */
#include "qemu/osdep.h"
#include "hw/firmware/smbios.h"
#include "qemu/option.h"
#include "qapi/error.h"

#define SMBIOS_MAX_USER_TABLES (64 * 1024)
/* Type 17 structures cover RAM in pieces of this size, as QEMU's do. */
#define SMBIOS_DIMM_MAX (16ull << 30)

/* Handles: one range per type, so that a table's handle names its type. */
#define SMBIOS_HANDLE_T0        0x0000
#define SMBIOS_HANDLE_T1        0x0100
#define SMBIOS_HANDLE_T2        0x0200
#define SMBIOS_HANDLE_T3        0x0300
#define SMBIOS_HANDLE_T4        0x0400
#define SMBIOS_HANDLE_T11       0x0b00
#define SMBIOS_HANDLE_T16       0x1000
#define SMBIOS_HANDLE_T17       0x1100
#define SMBIOS_HANDLE_T19       0x1300
#define SMBIOS_HANDLE_T32       0x2000
#define SMBIOS_HANDLE_T127      0x7f00

SmbiosConfig *smbios_config_new(void)
{
    SmbiosConfig *cfg = g_new0(SmbiosConfig, 1);

    cfg->t0.release_major = cfg->t0.release_minor = -1;
    cfg->t4.processor_family = -1;
    cfg->t11_strings = g_ptr_array_new_with_free_func(g_free);
    cfg->user_tables = g_byte_array_new();
    return cfg;
}

void smbios_config_free(SmbiosConfig *cfg)
{
    char **strs[] = {
        &cfg->t0.vendor, &cfg->t0.version, &cfg->t0.date,
        &cfg->t1.manufacturer, &cfg->t1.product, &cfg->t1.version,
        &cfg->t1.serial, &cfg->t1.sku, &cfg->t1.family,
        &cfg->t2.manufacturer, &cfg->t2.product, &cfg->t2.version,
        &cfg->t2.serial, &cfg->t2.asset, &cfg->t2.location,
        &cfg->t3.manufacturer, &cfg->t3.version, &cfg->t3.serial,
        &cfg->t3.asset, &cfg->t3.sku,
        &cfg->t4.sock_pfx, &cfg->t4.manufacturer, &cfg->t4.version,
        &cfg->t4.serial, &cfg->t4.asset, &cfg->t4.part,
        &cfg->t17.loc_pfx, &cfg->t17.bank, &cfg->t17.manufacturer,
        &cfg->t17.serial, &cfg->t17.asset, &cfg->t17.part,
    };

    if (!cfg) {
        return;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(strs); i++) {
        g_free(*strs[i]);
    }
    g_ptr_array_free(cfg->t11_strings, TRUE);
    g_byte_array_free(cfg->user_tables, TRUE);
    g_free(cfg);
}

bool smbios_parse_uuid(const char *str, uint8_t uuid[16])
{
    static const int groups[] = { 8, 4, 4, 4, 12 };
    const char *p = str;
    unsigned n = 0;

    for (size_t g = 0; g < G_N_ELEMENTS(groups); g++) {
        for (int i = 0; i < groups[g]; i += 2) {
            if (!g_ascii_isxdigit(p[0]) || !g_ascii_isxdigit(p[1])) {
                return false;
            }
            uuid[n++] = g_ascii_xdigit_value(p[0]) << 4 |
                        g_ascii_xdigit_value(p[1]);
            p += 2;
        }
        if (*p != (g + 1 < G_N_ELEMENTS(groups) ? '-' : '\0')) {
            return false;
        }
        p++;
    }
    return true;
}

/* ---- -smbios ---- */

typedef enum SmbiosFieldKind {
    SF_STR, SF_UINT, SF_BOOL, SF_UUID, SF_RELEASE,
} SmbiosFieldKind;

typedef struct SmbiosField {
    const char *key;
    SmbiosFieldKind kind;
    size_t off;                 /* in SmbiosConfig */
    uint64_t max;               /* SF_UINT */
} SmbiosField;

#define F_STR(k, m) { k, SF_STR, offsetof(SmbiosConfig, m), 0 }
#define F_UINT(k, m, mx) { k, SF_UINT, offsetof(SmbiosConfig, m), mx }

static const SmbiosField t0_fields[] = {
    F_STR("vendor", t0.vendor), F_STR("version", t0.version),
    F_STR("date", t0.date),
    { "release", SF_RELEASE, 0, 0 },
    { "uefi", SF_BOOL, offsetof(SmbiosConfig, t0.uefi), 0 },
    { NULL },
};
static const SmbiosField t1_fields[] = {
    F_STR("manufacturer", t1.manufacturer), F_STR("product", t1.product),
    F_STR("version", t1.version), F_STR("serial", t1.serial),
    F_STR("sku", t1.sku), F_STR("family", t1.family),
    { "uuid", SF_UUID, 0, 0 },
    { NULL },
};
static const SmbiosField t2_fields[] = {
    F_STR("manufacturer", t2.manufacturer), F_STR("product", t2.product),
    F_STR("version", t2.version), F_STR("serial", t2.serial),
    F_STR("asset", t2.asset), F_STR("location", t2.location),
    { NULL },
};
static const SmbiosField t3_fields[] = {
    F_STR("manufacturer", t3.manufacturer), F_STR("version", t3.version),
    F_STR("serial", t3.serial), F_STR("asset", t3.asset),
    F_STR("sku", t3.sku),
    { NULL },
};
static const SmbiosField t4_fields[] = {
    F_STR("sock_pfx", t4.sock_pfx), F_STR("manufacturer", t4.manufacturer),
    F_STR("version", t4.version), F_STR("serial", t4.serial),
    F_STR("asset", t4.asset), F_STR("part", t4.part),
    F_UINT("max-speed", t4.max_speed, 0xffff),
    F_UINT("current-speed", t4.current_speed, 0xffff),
    F_UINT("processor-family", t4.processor_family, 0xffff),
    { "processor-id", SF_UINT, offsetof(SmbiosConfig, t4.processor_id),
      UINT64_MAX },
    { NULL },
};
static const SmbiosField t17_fields[] = {
    F_STR("loc_pfx", t17.loc_pfx), F_STR("bank", t17.bank),
    F_STR("manufacturer", t17.manufacturer), F_STR("serial", t17.serial),
    F_STR("asset", t17.asset), F_STR("part", t17.part),
    F_UINT("speed", t17.speed, 0xffff),
    { NULL },
};

static bool smbios_set_field(SmbiosConfig *cfg, const SmbiosField *f,
                             const char *value, Error **errp)
{
    void *p = (char *)cfg + f->off;
    uint64_t v;

    switch (f->kind) {
    case SF_STR:
        /* A string that would end the string set early is refused. */
        if (!*value) {
            error_setg(errp, "-smbios: '%s' must not be empty", f->key);
            return false;
        }
        g_free(*(char **)p);
        *(char **)p = g_strdup(value);
        return true;
    case SF_BOOL:
        return qemu_strtobool(value, (bool *)p, errp);
    case SF_UINT:
        if (!qemu_strtou64(value, &v, errp)) {
            error_prepend(errp, "-smbios %s: ", f->key);
            return false;
        }
        if (v > f->max) {
            error_setg(errp, "-smbios %s=%s is out of range (at most %"
                       PRIu64 ")", f->key, value, f->max);
            return false;
        }
        if (!strcmp(f->key, "processor-family")) {
            cfg->t4.processor_family = v;
        } else if (!strcmp(f->key, "processor-id")) {
            cfg->t4.processor_id = v;
            cfg->t4.has_processor_id = true;
        } else {
            *(unsigned *)p = v;
        }
        return true;
    case SF_UUID:
        if (!smbios_parse_uuid(value, cfg->t1.uuid)) {
            error_setg(errp, "Invalid UUID");
            error_append_hint(errp, "Expected xxxxxxxx-xxxx-xxxx-xxxx-"
                              "xxxxxxxxxxxx (hex)\n");
            return false;
        }
        cfg->t1.has_uuid = true;
        return true;
    case SF_RELEASE: {
        unsigned major, minor;
        char end;

        if (sscanf(value, "%u.%u%c", &major, &minor, &end) != 2 ||
            major > 255 || minor > 255) {
            error_setg(errp, "Invalid release '%s'", value);
            error_append_hint(errp, "Expected MAJOR.MINOR, each 0-255\n");
            return false;
        }
        cfg->t0.release_major = major;
        cfg->t0.release_minor = minor;
        return true;
    }
    }
    g_assert_not_reached();
}

/* A string of the structure set: no control characters, no NUL. */
static bool smbios_check_type11(const char *s, Error **errp)
{
    if (!*s) {
        error_setg(errp, "-smbios type=11: a value must not be empty");
        return false;
    }
    return true;
}

static bool smbios_parse_type11(SmbiosConfig *cfg, QemuOpts *opts,
                                Error **errp)
{
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        const char *val = qemu_opts_value(opts, i);

        if (!strcmp(key, "type")) {
            continue;
        }
        if (!strcmp(key, "value")) {
            if (!smbios_check_type11(val, errp)) {
                return false;
            }
            g_ptr_array_add(cfg->t11_strings, g_strdup(val));
        } else if (!strcmp(key, "path")) {
            g_autoptr(GError) gerr = NULL;
            g_autofree char *text = NULL;
            gsize len;

            if (!g_file_get_contents(val, &text, &len, &gerr)) {
                error_setg(errp, "-smbios type=11,path=%s: %s", val,
                           gerr->message);
                return false;
            }
            if (strlen(text) != len) {
                error_setg(errp, "-smbios type=11,path=%s: the file has a "
                           "NUL byte", val);
                return false;
            }
            if (!smbios_check_type11(text, errp)) {
                return false;
            }
            g_ptr_array_add(cfg->t11_strings, g_steal_pointer(&text));
        } else {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
    }
    if (cfg->t11_strings->len > 255) {
        error_setg(errp, "-smbios type=11: at most 255 strings");
        return false;
    }
    return true;
}

/* Length of the string set at @p (up to and including its double NUL). */
static size_t smbios_strings_len(const uint8_t *p, size_t avail)
{
    size_t i = 0;

    /* No strings: two NULs. */
    if (avail >= 2 && p[0] == 0 && p[1] == 0) {
        return 2;
    }
    while (i + 1 < avail) {
        if (p[i] == 0 && p[i + 1] == 0) {
            return i + 2;
        }
        i++;
    }
    return 0;
}

bool smbios_add_user_tables(SmbiosConfig *cfg, const uint8_t *data,
                            size_t len, const char *name, Error **errp)
{
    bool seen[256] = { false };
    size_t off = 0;

    if (!len) {
        error_setg(errp, "-smbios file=%s: the file is empty", name);
        return false;
    }
    if (cfg->user_tables->len + len > SMBIOS_MAX_USER_TABLES) {
        error_setg(errp, "-smbios file=%s: too large (all files together "
                   "at most %d bytes)", name, SMBIOS_MAX_USER_TABLES);
        return false;
    }
    while (off < len) {
        uint8_t type, slen;
        size_t strs;

        if (len - off < 4) {
            error_setg(errp, "-smbios file=%s: truncated structure header "
                       "at offset %zu", name, off);
            return false;
        }
        type = data[off];
        slen = data[off + 1];
        if (slen < 4 || slen > len - off) {
            error_setg(errp, "-smbios file=%s: structure at offset %zu "
                       "(type %u) has bad length %u", name, off, type, slen);
            return false;
        }
        strs = smbios_strings_len(data + off + slen, len - off - slen);
        if (!strs) {
            error_setg(errp, "-smbios file=%s: structure at offset %zu "
                       "(type %u) has no terminated string set", name, off,
                       type);
            return false;
        }
        if (type == 127) {
            error_setg(errp, "-smbios file=%s: type 127 (end of table) is "
                       "Conduit's to add", name);
            return false;
        }
        /* These describe the one system: a second would contradict it. */
        if ((type == 0 || type == 1 || type == 2 || type == 3 ||
             type == 32) && (seen[type] || cfg->user_has_type[type])) {
            error_setg(errp, "-smbios file=%s: more than one type %u "
                       "structure", name, type);
            return false;
        }
        seen[type] = true;
        off += slen + strs;
    }
    for (int t = 0; t < 256; t++) {
        cfg->user_has_type[t] |= seen[t];
    }
    g_byte_array_append(cfg->user_tables, data, len);
    return true;
}

bool smbios_parse_option(SmbiosConfig *cfg, const char *arg, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, NULL, errp);
    const SmbiosField *fields;
    const char *type_str, *file;
    uint64_t type;

    if (!opts) {
        return false;
    }
    file = qemu_opt_get(opts, "file");
    type_str = qemu_opt_get(opts, "type");
    if (file) {
        g_autoptr(GError) gerr = NULL;
        g_autofree char *data = NULL;
        gsize len;

        if (qemu_opts_count(opts) != 1) {
            error_setg(errp, "-smbios file= takes no other parameter");
            return false;
        }
        if (!g_file_get_contents(file, &data, &len, &gerr)) {
            error_setg(errp, "Could not open '%s': %s", file, gerr->message);
            return false;
        }
        return smbios_add_user_tables(cfg, (const uint8_t *)data, len, file,
                                      errp);
    }
    if (!type_str) {
        error_setg(errp, "-smbios: need 'type' or 'file'");
        return false;
    }
    if (!qemu_strtou64(type_str, &type, NULL)) {
        error_setg(errp, "Invalid SMBIOS type '%s'", type_str);
        return false;
    }
    switch (type) {
    case 0:
        fields = t0_fields;
        break;
    case 1:
        fields = t1_fields;
        break;
    case 2:
        fields = t2_fields;
        break;
    case 3:
        fields = t3_fields;
        break;
    case 4:
        fields = t4_fields;
        break;
    case 11:
        return smbios_parse_type11(cfg, opts, errp);
    case 17:
        fields = t17_fields;
        break;
    default:
        error_setg(errp, "Don't know how to build fields for SMBIOS type %"
                   PRIu64, type);
        error_append_hint(errp, "Conduit builds types 0, 1, 2, 3, 4, 11 "
                          "and 17 from fields; other types can come from "
                          "-smbios file=\n");
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        const SmbiosField *f;

        if (!strcmp(key, "type")) {
            continue;
        }
        for (f = fields; f->key && strcmp(f->key, key); f++) {
            /* search */
        }
        if (!f->key) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
        if (!smbios_set_field(cfg, f, qemu_opts_value(opts, i), errp)) {
            return false;
        }
    }
    return true;
}

/* ---- building ---- */

/* One structure: the formatted area, then its strings. */
typedef struct SmbiosStruct {
    GByteArray *b;
    GPtrArray *strings;         /* const char *, borrowed */
} SmbiosStruct;

static void ss_start(SmbiosStruct *s, uint8_t type, uint16_t handle)
{
    uint8_t hdr[4] = { type, 0, handle & 0xff, handle >> 8 };

    s->b = g_byte_array_new();
    s->strings = g_ptr_array_new();
    g_byte_array_append(s->b, hdr, 4);
}

static void ss_put(SmbiosStruct *s, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        uint8_t c = v >> (8 * i);

        g_byte_array_append(s->b, &c, 1);
    }
}

/* A string field: its number in the set, 0 for none. */
static void ss_str(SmbiosStruct *s, const char *str)
{
    if (!str || !*str) {
        ss_put(s, 0, 1);
        return;
    }
    for (guint i = 0; i < s->strings->len; i++) {
        if (!strcmp(g_ptr_array_index(s->strings, i), str)) {
            ss_put(s, i + 1, 1);
            return;
        }
    }
    g_ptr_array_add(s->strings, (gpointer)str);
    ss_put(s, s->strings->len, 1);
}

static void ss_finish(SmbiosStruct *s, SmbiosTables *t)
{
    size_t start = t->table->len;

    s->b->data[1] = s->b->len;
    g_byte_array_append(t->table, s->b->data, s->b->len);
    for (guint i = 0; i < s->strings->len; i++) {
        const char *str = g_ptr_array_index(s->strings, i);

        g_byte_array_append(t->table, (const guint8 *)str, strlen(str) + 1);
    }
    if (!s->strings->len) {
        g_byte_array_append(t->table, (const guint8 *)"", 1);
    }
    g_byte_array_append(t->table, (const guint8 *)"", 1);
    t->nr_structs++;
    t->max_struct = MAX(t->max_struct, t->table->len - start);
    g_byte_array_free(s->b, TRUE);
    g_ptr_array_free(s->strings, TRUE);
}

static const char *or_default(const char *v, const char *def)
{
    return v ? v : def;
}

static void build_type0(const SmbiosConfig *cfg, SmbiosTables *t)
{
    SmbiosStruct s;
    uint8_t ext2 = 1 << 4;      /* the table describes a virtual machine */

    if (cfg->t0.uefi) {
        ext2 |= 1 << 3;
    }
    ss_start(&s, 0, SMBIOS_HANDLE_T0);
    ss_str(&s, or_default(cfg->t0.vendor, "Conduit"));
    ss_str(&s, or_default(cfg->t0.version, CONDUIT_VERSION));
    ss_put(&s, 0xe800, 2);      /* starting segment: a 96 KiB image */
    ss_str(&s, or_default(cfg->t0.date, "01/01/2026"));
    ss_put(&s, 0, 1);           /* ROM size 64 KiB */
    ss_put(&s, 1 << 3, 8);      /* characteristics not supported */
    ss_put(&s, 1 << 0, 1);      /* extension 1: ACPI */
    ss_put(&s, ext2, 1);
    ss_put(&s, cfg->t0.release_major >= 0 ? cfg->t0.release_major : 0, 1);
    ss_put(&s, cfg->t0.release_minor >= 0 ? cfg->t0.release_minor : 0, 1);
    ss_put(&s, 0xff, 1);        /* no embedded controller */
    ss_put(&s, 0xff, 1);
    ss_put(&s, 0, 2);           /* extended ROM size (3.1) */
    ss_finish(&s, t);
}

/* RFC 4122 order to SMBIOS 2.6+ order (first three fields LE). */
static void uuid_to_smbios(const uint8_t in[16], uint8_t out[16])
{
    memcpy(out, in, 16);
    out[0] = in[3];
    out[1] = in[2];
    out[2] = in[1];
    out[3] = in[0];
    out[4] = in[5];
    out[5] = in[4];
    out[6] = in[7];
    out[7] = in[6];
}

static void build_type1(const SmbiosConfig *cfg, const SmbiosMachine *m,
                        SmbiosTables *t)
{
    SmbiosStruct s;
    uint8_t uuid[16] = { 0 };

    if (cfg->t1.has_uuid) {
        uuid_to_smbios(cfg->t1.uuid, uuid);
    } else if (m->uuid_set) {
        uuid_to_smbios(m->uuid, uuid);
    }
    ss_start(&s, 1, SMBIOS_HANDLE_T1);
    ss_str(&s, or_default(cfg->t1.manufacturer, "Conduit"));
    ss_str(&s, or_default(cfg->t1.product, m->product));
    ss_str(&s, or_default(cfg->t1.version, m->version));
    ss_str(&s, cfg->t1.serial);
    g_byte_array_append(s.b, uuid, 16);
    ss_put(&s, 0x06, 1);        /* wake-up type: power switch */
    ss_str(&s, cfg->t1.sku);
    ss_str(&s, cfg->t1.family);
    ss_finish(&s, t);
}

static void build_type2(const SmbiosConfig *cfg, const SmbiosMachine *m,
                        SmbiosTables *t)
{
    SmbiosStruct s;

    ss_start(&s, 2, SMBIOS_HANDLE_T2);
    ss_str(&s, or_default(cfg->t2.manufacturer, "Conduit"));
    ss_str(&s, or_default(cfg->t2.product, m->product));
    ss_str(&s, or_default(cfg->t2.version, m->version));
    ss_str(&s, cfg->t2.serial);
    ss_str(&s, cfg->t2.asset);
    ss_put(&s, 0x01, 1);        /* a hosting board */
    ss_str(&s, cfg->t2.location);
    ss_put(&s, SMBIOS_HANDLE_T3, 2);
    ss_put(&s, 0x0a, 1);        /* motherboard */
    ss_put(&s, 0, 1);           /* no contained objects */
    ss_finish(&s, t);
}

static void build_type3(const SmbiosConfig *cfg, const SmbiosMachine *m,
                        SmbiosTables *t)
{
    SmbiosStruct s;

    ss_start(&s, 3, SMBIOS_HANDLE_T3);
    ss_str(&s, or_default(cfg->t3.manufacturer, "Conduit"));
    ss_put(&s, 0x01, 1);        /* type: other */
    ss_str(&s, or_default(cfg->t3.version, m->version));
    ss_str(&s, cfg->t3.serial);
    ss_str(&s, cfg->t3.asset);
    ss_put(&s, 0x03, 1);        /* boot-up state: safe */
    ss_put(&s, 0x03, 1);        /* power supply: safe */
    ss_put(&s, 0x03, 1);        /* thermal: safe */
    ss_put(&s, 0x02, 1);        /* security: unknown */
    ss_put(&s, 0, 4);           /* OEM-defined */
    ss_put(&s, 0, 1);           /* height: unspecified */
    ss_put(&s, 0, 1);           /* power cords: unspecified */
    ss_put(&s, 0, 1);           /* no contained elements ... */
    ss_put(&s, 3, 1);           /* ... of 3 bytes each */
    ss_str(&s, cfg->t3.sku);
    ss_finish(&s, t);
}

static void build_type4(const SmbiosConfig *cfg, const SmbiosMachine *m,
                        unsigned socket, SmbiosTables *t)
{
    unsigned per_socket = m->cores_per_socket * m->threads_per_core;
    unsigned first = socket * per_socket;
    unsigned threads_enabled = m->cpus > first ?
                               MIN(per_socket, m->cpus - first) : 0;
    unsigned cores_enabled = DIV_ROUND_UP(threads_enabled,
                                          m->threads_per_core);
    unsigned family = cfg->t4.processor_family >= 0 ?
                      cfg->t4.processor_family : 0x01;   /* other */
    g_autofree char *sock = g_strdup_printf("%s %u",
                                            or_default(cfg->t4.sock_pfx,
                                                       "CPU"), socket);
    SmbiosStruct s;

    ss_start(&s, 4, SMBIOS_HANDLE_T4 + socket);
    ss_str(&s, sock);
    ss_put(&s, 0x03, 1);        /* central processor */
    ss_put(&s, family > 0xfd ? 0xfe : family, 1);
    ss_str(&s, or_default(cfg->t4.manufacturer, "Conduit"));
    ss_put(&s, cfg->t4.has_processor_id ? cfg->t4.processor_id : 0, 8);
    ss_str(&s, or_default(cfg->t4.version, "Conduit vCPU"));
    ss_put(&s, 0, 1);           /* voltage: unknown */
    ss_put(&s, 0, 2);           /* external clock: unknown */
    ss_put(&s, cfg->t4.max_speed ? cfg->t4.max_speed : 2000, 2);
    ss_put(&s, cfg->t4.current_speed ? cfg->t4.current_speed : 2000, 2);
    /* Socket populated; CPU enabled, or disabled by the BIOS. */
    ss_put(&s, threads_enabled ? 0x41 : 0x42, 1);
    ss_put(&s, 0x01, 1);        /* upgrade: other */
    ss_put(&s, 0xffff, 2);      /* no cache information */
    ss_put(&s, 0xffff, 2);
    ss_put(&s, 0xffff, 2);
    ss_str(&s, cfg->t4.serial);
    ss_str(&s, cfg->t4.asset);
    ss_str(&s, cfg->t4.part);
    ss_put(&s, MIN(m->cores_per_socket, 0xff), 1);
    ss_put(&s, MIN(cores_enabled, 0xff), 1);
    ss_put(&s, MIN(per_socket, 0xff), 1);
    ss_put(&s, 0x04, 2);        /* 64-bit capable */
    ss_put(&s, family, 2);
    ss_put(&s, m->cores_per_socket, 2);
    ss_put(&s, cores_enabled, 2);
    ss_put(&s, per_socket, 2);
    ss_finish(&s, t);
}

static void build_type11(const SmbiosConfig *cfg, SmbiosTables *t)
{
    SmbiosStruct s;

    ss_start(&s, 11, SMBIOS_HANDLE_T11);
    ss_put(&s, cfg->t11_strings->len, 1);
    for (guint i = 0; i < cfg->t11_strings->len; i++) {
        /* Each string counts, even a repeated one. */
        g_ptr_array_add(s.strings, g_ptr_array_index(cfg->t11_strings, i));
    }
    ss_finish(&s, t);
}

static void build_type16(const SmbiosMachine *m, unsigned nr_dimms,
                         SmbiosTables *t)
{
    uint64_t kib = m->ram_size / 1024;
    SmbiosStruct s;

    ss_start(&s, 16, SMBIOS_HANDLE_T16);
    ss_put(&s, 0x01, 1);        /* location: other */
    ss_put(&s, 0x03, 1);        /* use: system memory */
    ss_put(&s, 0x06, 1);        /* error correction: multi-bit ECC */
    ss_put(&s, kib < 0x80000000ull ? kib : 0x80000000ull, 4);
    ss_put(&s, 0xfffe, 2);      /* no error information */
    ss_put(&s, nr_dimms, 2);
    ss_put(&s, kib < 0x80000000ull ? 0 : m->ram_size, 8);
    ss_finish(&s, t);
}

static void build_type17(const SmbiosConfig *cfg, unsigned i, uint64_t size,
                         SmbiosTables *t)
{
    uint64_t mib = size >> 20;
    g_autofree char *loc = g_strdup_printf("%s %u",
                                           or_default(cfg->t17.loc_pfx,
                                                      "DIMM"), i);
    SmbiosStruct s;

    ss_start(&s, 17, SMBIOS_HANDLE_T17 + i);
    ss_put(&s, SMBIOS_HANDLE_T16, 2);
    ss_put(&s, 0xfffe, 2);      /* no error information */
    ss_put(&s, 0xffff, 2);      /* total width: unknown */
    ss_put(&s, 0xffff, 2);      /* data width: unknown */
    ss_put(&s, mib < 0x7fff ? mib : 0x7fff, 2);
    ss_put(&s, 0x09, 1);        /* form factor: DIMM */
    ss_put(&s, 0, 1);           /* not in a set */
    ss_str(&s, loc);
    ss_str(&s, cfg->t17.bank);
    ss_put(&s, 0x07, 1);        /* type: RAM */
    ss_put(&s, 0x02, 2);        /* type detail: other */
    ss_put(&s, cfg->t17.speed, 2);
    ss_str(&s, or_default(cfg->t17.manufacturer, "Conduit"));
    ss_str(&s, cfg->t17.serial);
    ss_str(&s, cfg->t17.asset);
    ss_str(&s, cfg->t17.part);
    ss_put(&s, 0, 1);           /* attributes: unknown rank */
    ss_put(&s, mib < 0x7fff ? 0 : mib, 4);
    ss_put(&s, cfg->t17.speed, 2);  /* configured speed */
    ss_put(&s, 0, 2);           /* voltages: unknown */
    ss_put(&s, 0, 2);
    ss_put(&s, 0, 2);
    ss_finish(&s, t);
}

static void build_type19(unsigned i, uint64_t addr, uint64_t size,
                         SmbiosTables *t)
{
    uint64_t start_kib = addr / 1024, end_kib = (addr + size) / 1024 - 1;
    bool ext = end_kib >= 0xffffffffull;
    SmbiosStruct s;

    ss_start(&s, 19, SMBIOS_HANDLE_T19 + i);
    ss_put(&s, ext ? 0xffffffffu : start_kib, 4);
    ss_put(&s, ext ? 0xffffffffu : end_kib, 4);
    ss_put(&s, SMBIOS_HANDLE_T16, 2);
    ss_put(&s, 1, 1);           /* partition width */
    ss_put(&s, ext ? addr : 0, 8);
    ss_put(&s, ext ? addr + size - 1 : 0, 8);
    ss_finish(&s, t);
}

static void build_type32(SmbiosTables *t)
{
    SmbiosStruct s;

    ss_start(&s, 32, SMBIOS_HANDLE_T32);
    ss_put(&s, 0, 6);           /* reserved */
    ss_put(&s, 0, 1);           /* no errors detected */
    ss_finish(&s, t);
}

static void build_type127(SmbiosTables *t)
{
    SmbiosStruct s;

    ss_start(&s, 127, SMBIOS_HANDLE_T127);
    ss_finish(&s, t);
}

/* Appends the user's structures, counting them. */
static void add_user_tables(const SmbiosConfig *cfg, SmbiosTables *t)
{
    const uint8_t *p = cfg->user_tables->data;
    size_t len = cfg->user_tables->len, off = 0;

    while (off < len) {
        size_t slen = p[off + 1];
        size_t all = slen + smbios_strings_len(p + off + slen,
                                               len - off - slen);

        g_byte_array_append(t->table, p + off, all);
        t->nr_structs++;
        t->max_struct = MAX(t->max_struct, all);
        off += all;
    }
}

/* No two structures share a handle (a file= one may collide with ours). */
static bool check_handles(const SmbiosTables *t, Error **errp)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(NULL, NULL);
    const uint8_t *p = t->table->data;
    size_t off = 0, len = t->table->len;

    while (off < len) {
        unsigned handle = p[off + 2] | p[off + 3] << 8;
        size_t slen = p[off + 1];

        if (!g_hash_table_add(seen, GUINT_TO_POINTER(handle + 1))) {
            error_setg(errp, "-smbios file=: structure type %u has handle "
                       "0x%04x, which another structure uses", p[off],
                       handle);
            error_append_hint(errp, "Conduit numbers its own tables 0xTT00 "
                              "+ n (TT the type in hex); pick other "
                              "handles in the file.\n");
            return false;
        }
        off += slen + smbios_strings_len(p + off + slen, len - off - slen);
    }
    return true;
}

bool smbios_build_tables(const SmbiosConfig *cfg, const SmbiosMachine *m,
                         SmbiosTables *t, Error **errp)
{
    unsigned sockets = MAX(m->sockets, 1u);
    /* At most 256 devices (their handles): larger ones for huge RAM. */
    uint64_t dimm_size = MAX(SMBIOS_DIMM_MAX,
                             ROUND_UP(DIV_ROUND_UP(m->ram_size, 256),
                                      1ull << 20));
    unsigned nr_dimms = MAX(DIV_ROUND_UP(m->ram_size, dimm_size), 1);
    const bool *have = cfg->user_has_type;
    SmbiosMachine mm = *m;

    memset(t, 0, sizeof(*t));
    t->table = g_byte_array_new();
    mm.cores_per_socket = MAX(m->cores_per_socket, 1u);
    mm.threads_per_core = MAX(m->threads_per_core, 1u);

    if (!have[0]) {
        build_type0(cfg, t);
    }
    if (!have[1]) {
        build_type1(cfg, &mm, t);
    }
    if (!have[2]) {
        build_type2(cfg, &mm, t);
    }
    if (!have[3]) {
        build_type3(cfg, &mm, t);
    }
    if (!have[4]) {
        if (sockets > 0x100) {
            error_setg(errp, "SMBIOS: %u sockets do not fit the type 4 "
                       "handles", sockets);
            smbios_tables_free(t);
            return false;
        }
        for (unsigned i = 0; i < sockets; i++) {
            build_type4(cfg, &mm, i, t);
        }
    }
    if (!have[11] && cfg->t11_strings->len) {
        build_type11(cfg, t);
    }
    if (!have[16]) {
        build_type16(&mm, nr_dimms, t);
    }
    if (!have[17]) {
        uint64_t left = m->ram_size;

        for (unsigned i = 0; i < nr_dimms; i++) {
            uint64_t size = MIN(left, dimm_size);

            build_type17(cfg, i, size, t);
            left -= size;
        }
    }
    if (!have[19]) {
        for (unsigned i = 0; i < m->nr_ranges && i < 2; i++) {
            if (m->ranges[i].size) {
                build_type19(i, m->ranges[i].addr, m->ranges[i].size, t);
            }
        }
    }
    if (!have[32]) {
        build_type32(t);
    }
    add_user_tables(cfg, t);
    build_type127(t);
    if (!check_handles(t, errp)) {
        smbios_tables_free(t);
        return false;
    }
    return true;
}

void smbios_tables_free(SmbiosTables *t)
{
    if (t->table) {
        g_byte_array_free(t->table, TRUE);
        t->table = NULL;
    }
}

static uint8_t smbios_checksum(const uint8_t *p, size_t len)
{
    uint8_t sum = 0;

    for (size_t i = 0; i < len; i++) {
        sum += p[i];
    }
    return -sum;
}

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        p[i] = v >> (8 * i);
    }
}

void smbios_build_entry_point_30(const SmbiosTables *t, uint64_t table_addr,
                                 uint8_t ep[SMBIOS_EP30_SIZE])
{
    memset(ep, 0, SMBIOS_EP30_SIZE);
    memcpy(ep, "_SM3_", 5);
    ep[6] = SMBIOS_EP30_SIZE;
    ep[7] = SMBIOS_MAJOR;
    ep[8] = SMBIOS_MINOR;
    ep[9] = 0;                  /* docrev */
    ep[10] = 0x01;              /* entry point revision: 3.0 */
    put_le(ep + 0x0c, t->table->len, 4);    /* maximum size */
    put_le(ep + 0x10, table_addr, 8);
    ep[5] = smbios_checksum(ep, SMBIOS_EP30_SIZE);
}

bool smbios_build_entry_point_21(const SmbiosTables *t, uint32_t table_addr,
                                 uint8_t ep[SMBIOS_EP21_SIZE])
{
    if (t->table->len > 0xffff || t->max_struct > 0xffff ||
        t->nr_structs > 0xffff) {
        return false;
    }
    memset(ep, 0, SMBIOS_EP21_SIZE);
    memcpy(ep, "_SM_", 4);
    ep[5] = SMBIOS_EP21_SIZE;
    /* A 2.x anchor names the 2.8 level: its structures are a subset. */
    ep[6] = 2;
    ep[7] = 8;
    put_le(ep + 0x08, t->max_struct, 2);
    ep[0x0a] = 0;               /* entry point revision 0 */
    memcpy(ep + 0x10, "_DMI_", 5);
    put_le(ep + 0x16, t->table->len, 2);
    put_le(ep + 0x18, table_addr, 4);
    put_le(ep + 0x1c, t->nr_structs, 2);
    ep[0x1e] = 0x28;            /* BCD revision 2.8 */
    ep[0x15] = smbios_checksum(ep + 0x10, 0x0f);
    ep[4] = smbios_checksum(ep, SMBIOS_EP21_SIZE);
    return true;
}

SmbiosConfig *smbios_cmdline_config(void)
{
    static SmbiosConfig *cfg;

    if (!cfg) {
        cfg = smbios_config_new();
    }
    return cfg;
}
