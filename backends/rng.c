/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rng-random and rng-builtin (system/rng.h), with QEMU's type and
 * property names: rng-random's "filename" (default /dev/urandom) is
 * opened when the object is created, so a bad path is an error at
 * start-up, naming the object.
 */
#include "qemu/osdep.h"
#include <sys/random.h>
#include "qapi/error.h"
#include "system/rng.h"
#include "system/user-creatable.h"
#include "trace.h"

struct RngBackend {
    Object parent_obj;
    char *filename;             /* rng-random */
    int fd;                     /* rng-random, once complete */
    bool builtin;
    char *user;                 /* the front-end holding it */
};

#define RNG_BACKEND(obj) OBJECT_CHECK(RngBackend, (obj), TYPE_RNG_BACKEND)

RngBackend *rng_backend_find(const char *id, Error **errp)
{
    g_autofree char *path = g_strdup_printf("/objects/%s", id);
    Object *obj = object_resolve_path(path, NULL);

    if (!obj) {
        error_setg(errp, "Device '%s' not found", id);
        return NULL;
    }
    if (!object_dynamic_cast(obj, TYPE_RNG_BACKEND)) {
        error_setg(errp, "Invalid parameter 'rng': object '%s' is a %s, "
                   "not an rng backend", id, object_get_typename(obj));
        error_append_hint(errp, "Use -object rng-random,id=%s or "
                          "rng-builtin,id=%s.\n", id, id);
        return NULL;
    }
    return RNG_BACKEND(obj);
}

RngBackend *rng_backend_new_builtin(void)
{
    return RNG_BACKEND(object_new(TYPE_RNG_BUILTIN));
}

bool rng_backend_claim(RngBackend *rng, const char *user, Error **errp)
{
    if (rng->user) {
        error_setg(errp, "rng backend '%s' is already in use by %s",
                   rng_backend_name(rng), rng->user);
        return false;
    }
    rng->user = g_strdup(user);
    return true;
}

void rng_backend_release(RngBackend *rng)
{
    g_clear_pointer(&rng->user, g_free);
}

const char *rng_backend_name(RngBackend *rng)
{
    return rng->builtin ? "rng-builtin" : rng->filename;
}

ssize_t rng_backend_read(RngBackend *rng, void *buf, size_t len)
{
    ssize_t r;

    do {
        r = rng->builtin ? getrandom(buf, len, GRND_NONBLOCK)
                         : read(rng->fd, buf, len);
    } while (r < 0 && errno == EINTR);
    if (r < 0 && errno == EAGAIN) {
        return 0;
    }
    if (r == 0 && !rng->builtin) {
        /* The end of a regular file: no more entropy there, ever. */
        return -1;
    }
    trace_rng_backend_read(rng_backend_name(rng), len, r);
    return r;
}

int rng_backend_wait_fd(RngBackend *rng)
{
    return rng->builtin ? -1 : rng->fd;
}

/* ---- rng-random -------------------------------------------------------- */

static char *rng_random_get_filename(Object *obj, Error **errp)
{
    return g_strdup(RNG_BACKEND(obj)->filename);
}

static bool rng_random_set_filename(Object *obj, const char *v, Error **errp)
{
    RngBackend *rng = RNG_BACKEND(obj);

    if (rng->fd >= 0) {
        error_setg(errp, "rng-random: filename cannot change once opened");
        return false;
    }
    g_free(rng->filename);
    rng->filename = g_strdup(v);
    return true;
}

static bool rng_random_complete(Object *obj, Error **errp)
{
    RngBackend *rng = RNG_BACKEND(obj);

    if (!rng->filename || !*rng->filename) {
        error_setg(errp, "rng-random: filename must not be empty");
        return false;
    }
    rng->fd = open(rng->filename, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (rng->fd < 0) {
        error_setg_errno(errp, errno, "Could not open '%s'", rng->filename);
        return false;
    }
    return true;
}

static void rng_random_init(Object *obj)
{
    RngBackend *rng = RNG_BACKEND(obj);

    rng->fd = -1;
    rng->filename = g_strdup("/dev/urandom");
}

static void rng_backend_finalize(Object *obj)
{
    RngBackend *rng = RNG_BACKEND(obj);

    if (rng->fd >= 0) {
        close(rng->fd);
    }
    g_free(rng->filename);
    g_free(rng->user);
}

static void rng_random_class_init(ObjectClass *oc, void *data)
{
    ObjectProperty *p;

    USER_CREATABLE_CLASS(oc)->complete = rng_random_complete;
    p = object_class_property_add_str(oc, "filename", rng_random_get_filename,
                                      rng_random_set_filename);
    object_property_set_description(p, "the file to read random bytes from "
                                       "(default /dev/urandom)");
}

/* ---- rng-builtin ------------------------------------------------------- */

static void rng_builtin_init(Object *obj)
{
    RngBackend *rng = RNG_BACKEND(obj);

    rng->fd = -1;
    rng->builtin = true;
}

static const TypeInfo rng_types[] = {
    {
        .name = TYPE_RNG_BACKEND,
        .parent = TYPE_USER_CREATABLE,
        .instance_size = sizeof(RngBackend),
        .instance_finalize = rng_backend_finalize,
        .abstract = true,
    },
    {
        .name = TYPE_RNG_RANDOM,
        .parent = TYPE_RNG_BACKEND,
        .instance_init = rng_random_init,
        .class_init = rng_random_class_init,
    },
    {
        .name = TYPE_RNG_BUILTIN,
        .parent = TYPE_RNG_BACKEND,
        .instance_init = rng_builtin_init,
    },
};

DEFINE_TYPES(rng_types)
