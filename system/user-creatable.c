/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -object: objects the user creates by type name (secrets, ...).  Each
 * lands at /objects/ID once its type's complete() accepts it.
 */
#include "qemu/osdep.h"
#include "qemu/option.h"
#include "qapi/error.h"
#include "system/user-creatable.h"

static bool user_creatable_id_ok(const char *id)
{
    if (!id || !g_ascii_isalpha(*id)) {
        return false;
    }
    for (const char *p = id; *p; p++) {
        if (!g_ascii_isalnum(*p) && !strchr("-._", *p)) {
            return false;
        }
    }
    return true;
}

bool user_creatable_add_opts(QemuOpts *opts, Error **errp)
{
    const char *type = qemu_opt_get(opts, "qom-type");
    const char *id = qemu_opts_id(opts);
    Object *container = container_get(object_get_root(), "/objects");
    ObjectClass *oc;
    UserCreatableClass *ucc;
    g_autoptr(Object) obj = NULL;

    if (!type) {
        error_setg(errp, "Parameter 'qom-type' is missing");
        return false;
    }
    oc = object_class_by_name(type);
    if (!oc || !object_class_dynamic_cast(oc, TYPE_USER_CREATABLE) ||
        object_class_is_abstract(oc)) {
        GSList *list = object_class_get_list(TYPE_USER_CREATABLE, false);
        g_autoptr(GString) names = g_string_new(NULL);

        for (GSList *l = list; l; l = l->next) {
            g_string_append_printf(names, "%s%s", names->len ? ", " : "",
                                   object_class_get_name(l->data));
        }
        g_slist_free(list);
        error_setg(errp, "invalid object type: %s", type);
        error_append_hint(errp, "Conduit's object types: %s\n", names->str);
        return false;
    }
    if (!id) {
        error_setg(errp, "Parameter 'id' is missing");
        return false;
    }
    if (!user_creatable_id_ok(id)) {
        error_setg(errp, "Parameter 'id' expects an identifier");
        return false;
    }
    if (object_resolve_path_component(container, id)) {
        error_setg(errp, "attempt to add duplicate property '%s' to object "
                   "(type 'container')", id);
        return false;
    }
    obj = object_new_with_class(oc);
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);

        if (!strcmp(key, "qom-type")) {
            continue;
        }
        if (!object_property_parse(obj, key, qemu_opts_value(opts, i),
                                   errp)) {
            return false;
        }
    }
    ucc = USER_CREATABLE_GET_CLASS(obj);
    if (ucc->complete && !ucc->complete(obj, errp)) {
        return false;
    }
    object_property_add_child(container, id, obj);
    return true;
}

static const TypeInfo user_creatable_types[] = {
    {
        .name = TYPE_USER_CREATABLE,
        .parent = TYPE_OBJECT,
        .class_size = sizeof(UserCreatableClass),
        .abstract = true,
    },
};

DEFINE_TYPES(user_creatable_types)
