/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -object secret: a secret given inline (data=) or in a file (file=), raw
 * or base64.  libvirt passes its per-domain master key this way at every
 * start.  Conduit has nothing that decrypts secrets with other secrets,
 * so keyid=/iv= (encrypted secrets) are refused rather than ignored.
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/user-creatable.h"

#define TYPE_SECRET "secret"

typedef struct Secret {
    Object parent_obj;
    char *data;
    char *file;
    char *format;               /* "raw" (default) or "base64" */
    GBytes *value;              /* once complete */
} Secret;

#define SECRET(obj) OBJECT_CHECK(Secret, (obj), TYPE_SECRET)

#define SECRET_STR_PROP(field)                                            \
    static char *secret_get_##field(Object *obj, Error **errp)            \
    {                                                                     \
        return g_strdup(SECRET(obj)->field);                              \
    }                                                                     \
    static bool secret_set_##field(Object *obj, const char *v,            \
                                   Error **errp)                          \
    {                                                                     \
        Secret *s = SECRET(obj);                                          \
        g_free(s->field);                                                 \
        s->field = g_strdup(v);                                           \
        return true;                                                      \
    }

SECRET_STR_PROP(data)
SECRET_STR_PROP(file)
SECRET_STR_PROP(format)

static bool secret_set_encrypted(Object *obj, const char *v, Error **errp)
{
    error_setg(errp, "secret: encrypted secrets (keyid=, iv=) are not "
               "supported by Conduit");
    return false;
}

static bool secret_complete(Object *obj, Error **errp)
{
    Secret *s = SECRET(obj);
    g_autofree char *contents = NULL;
    gsize len;

    if (!!s->data == !!s->file) {
        error_setg(errp, "secret: exactly one of 'data' and 'file' must be "
                   "given");
        return false;
    }
    if (s->file) {
        g_autoptr(GError) gerr = NULL;

        if (!g_file_get_contents(s->file, &contents, &len, &gerr)) {
            error_setg(errp, "secret: cannot read '%s': %s", s->file,
                       gerr->message);
            return false;
        }
    } else {
        contents = g_strdup(s->data);
        len = strlen(contents);
    }
    if (!s->format || !strcmp(s->format, "raw")) {
        s->value = g_bytes_new(contents, len);
    } else if (!strcmp(s->format, "base64")) {
        guchar *raw;
        gsize raw_len;

        for (gsize i = 0; i < len; i++) {
            if (!g_ascii_isalnum(contents[i]) &&
                !strchr("+/=\n", contents[i])) {
                error_setg(errp, "secret: the data is not valid base64");
                return false;
            }
        }
        raw = g_base64_decode(contents, &raw_len);
        s->value = g_bytes_new_take(raw, raw_len);
    } else {
        error_setg(errp, "secret: format '%s' is not 'raw' or 'base64'",
                   s->format);
        return false;
    }
    return true;
}

static void secret_finalize(Object *obj)
{
    Secret *s = SECRET(obj);

    g_free(s->data);
    g_free(s->file);
    g_free(s->format);
    if (s->value) {
        g_bytes_unref(s->value);
    }
}

static void secret_class_init(ObjectClass *oc, void *data)
{
    USER_CREATABLE_CLASS(oc)->complete = secret_complete;
    object_class_property_add_str(oc, "data", secret_get_data,
                                  secret_set_data);
    object_class_property_add_str(oc, "file", secret_get_file,
                                  secret_set_file);
    object_class_property_add_str(oc, "format", secret_get_format,
                                  secret_set_format);
    object_class_property_add_str(oc, "keyid", NULL, secret_set_encrypted);
    object_class_property_add_str(oc, "iv", NULL, secret_set_encrypted);
}

static const TypeInfo secret_types[] = {
    {
        .name = TYPE_SECRET,
        .parent = TYPE_USER_CREATABLE,
        .instance_size = sizeof(Secret),
        .class_init = secret_class_init,
        .instance_finalize = secret_finalize,
    },
};

DEFINE_TYPES(secret_types)
