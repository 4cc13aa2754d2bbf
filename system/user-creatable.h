/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Objects made with -object (QEMU's "user-creatable" interface): a type
 * derived from TYPE_USER_CREATABLE gets its properties from the option
 * and is checked by complete() before it is added at /objects/ID.
 */
#ifndef SYSTEM_USER_CREATABLE_H
#define SYSTEM_USER_CREATABLE_H

#include <stdbool.h>
#include "qemu/typedefs.h"
#include "qom/object.h"

#define TYPE_USER_CREATABLE "user-creatable"

typedef struct UserCreatableClass {
    ObjectClass parent_class;
    /* Called once every property is set; false with errp to refuse. */
    bool (*complete)(Object *obj, Error **errp);
} UserCreatableClass;

#define USER_CREATABLE_CLASS(klass) \
    OBJECT_CLASS_CHECK(UserCreatableClass, (klass), TYPE_USER_CREATABLE)
#define USER_CREATABLE_GET_CLASS(obj) \
    OBJECT_GET_CLASS(UserCreatableClass, (obj), TYPE_USER_CREATABLE)

/* -object TYPE,id=ID,prop=value... or its JSON form. */
bool user_creatable_add_opts(QemuOpts *opts, Error **errp);

#endif
