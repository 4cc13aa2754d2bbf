/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Accelerator selection: the abstract "accel" type, lookup by short name,
 * and the one accelerator instance the machine runs on.
 */
#include "qemu/osdep.h"
#include "system/accel.h"
#include "hw/boards.h"
#include "qapi/error.h"

static AccelState *accel_current;

/* "kvm-accel" -> "kvm" unless the class set a name. */
static char *accel_short_name(AccelClass *ac)
{
    const char *type = object_class_get_name(OBJECT_CLASS(ac));

    if (g_str_has_suffix(type, ACCEL_CLASS_SUFFIX)) {
        return g_strndup(type, strlen(type) - strlen(ACCEL_CLASS_SUFFIX));
    }
    return g_strdup(ac->name ? ac->name : type);
}

AccelClass *accel_find(const char *name)
{
    g_autofree char *type = g_strconcat(name, ACCEL_CLASS_SUFFIX, NULL);
    ObjectClass *oc = object_class_by_name(type);

    if (!oc) {
        oc = object_class_by_name(name);
    }
    if (!oc || !object_class_dynamic_cast(oc, TYPE_ACCEL) ||
        object_class_is_abstract(oc)) {
        return NULL;
    }
    return ACCEL_CLASS(oc);
}

void accel_print_list(FILE *out)
{
    GSList *list = object_class_get_list(TYPE_ACCEL, false);

    fprintf(out, "Accelerators supported in Conduit binary:\n");
    for (GSList *l = list; l; l = l->next) {
        g_autofree char *name = accel_short_name(ACCEL_CLASS(l->data));
        fprintf(out, "%s\n", name);
    }
    g_slist_free(list);
}

static bool accel_is(const char *name)
{
    g_autofree char *type = g_strconcat(name, ACCEL_CLASS_SUFFIX, NULL);

    return accel_current &&
           object_dynamic_cast(OBJECT(accel_current), type) != NULL;
}

bool accel_is_kvm(void)
{
    return accel_is("kvm");
}

AccelState *current_accel(void)
{
    return accel_current;
}

static bool accel_set_props(Object *obj, const GPtrArray *props,
                            Error **errp)
{
    AccelClass *ac = ACCEL_GET_CLASS(obj);

    for (guint i = 0; props && i + 1 < props->len; i += 2) {
        if (!object_property_parse(obj, g_ptr_array_index(props, i),
                                   g_ptr_array_index(props, i + 1), errp)) {
            return false;
        }
    }
    return !ac->check_props || ac->check_props(ACCEL(obj), errp);
}

bool accel_check_props(AccelClass *ac, const GPtrArray *props, Error **errp)
{
    Object *obj = object_new_with_class(OBJECT_CLASS(ac));
    bool ok = accel_set_props(obj, props, errp);

    object_unref(obj);
    return ok;
}

bool accel_init_machine(AccelClass *ac, MachineState *ms,
                        const GPtrArray *props, Error **errp)
{
    Object *obj = object_new_with_class(OBJECT_CLASS(ac));

    if (!accel_set_props(obj, props, errp)) {
        object_unref(obj);
        return false;
    }
    accel_current = ACCEL(obj);
    if (ms) {
        ms->accelerator = accel_current;
    }
    if (ac->init_machine && !ac->init_machine(ms, errp)) {
        if (ms) {
            ms->accelerator = NULL;
        }
        accel_current = NULL;
        object_unref(obj);
        return false;
    }
    return true;
}

bool accel_start_vcpus(MachineState *ms, Error **errp)
{
    AccelClass *ac;

    if (!accel_current) {
        return true;
    }
    ac = ACCEL_GET_CLASS(accel_current);
    return !ac->start_vcpus || ac->start_vcpus(ms, errp);
}

void accel_cleanup(void)
{
    if (!accel_current) {
        return;
    }
    if (ACCEL_GET_CLASS(accel_current)->cleanup) {
        ACCEL_GET_CLASS(accel_current)->cleanup();
    }
    object_unref(accel_current);
    accel_current = NULL;
}

static const TypeInfo accel_types[] = {
    {
        .name = TYPE_ACCEL,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(AccelState),
        .class_size = sizeof(AccelClass),
        .abstract = true,
    },
};

DEFINE_TYPES(accel_types)

int accel_vcpu_thread_id(unsigned index)
{
    AccelClass *ac = accel_current ? ACCEL_GET_CLASS(accel_current) : NULL;

    return ac && ac->vcpu_thread_id ? ac->vcpu_thread_id(index) : -1;
}
