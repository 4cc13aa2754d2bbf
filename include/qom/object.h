/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM-lite: a small single-inheritance type system with reference counted
 * objects, named properties and a composition tree.
 *
 * Types are registered from constructors (type_init) and their classes are
 * built lazily on first use, so registration order never matters.  A class
 * starts as a byte copy of its parent class, then the type's class_init runs
 * on it: method pointers are inherited unless overridden.
 *
 * Interfaces are markers only: a class listing an interface in
 * TypeInfo.interfaces passes object_class_dynamic_cast() to that interface
 * name (the result is the class itself; interfaces carry no methods).
 *
 * Properties (name, type string, getter, setter) serve qom-list/qom-get/
 * qom-set and "-machine key=val".  Getters produce a json-glib JsonNode.
 * Setters receive a JsonNode which may be a native JSON value or a string
 * (from the command line); the stock setters accept both.
 */
#ifndef QOM_OBJECT_H
#define QOM_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include "qemu/compiler.h"
#include "qemu/typedefs.h"

typedef struct TypeImpl *Type;
typedef struct ObjectProperty ObjectProperty;

#define TYPE_OBJECT "object"
#define TYPE_INTERFACE "interface"
#define TYPE_CONTAINER "container"

typedef struct InterfaceInfo {
    const char *type;
} InterfaceInfo;

typedef struct TypeInfo {
    const char *name;
    const char *parent;
    size_t instance_size;       /* 0: inherit the parent's */
    size_t class_size;          /* 0: inherit the parent's */
    void (*class_init)(ObjectClass *klass, void *data);
    void *class_data;
    void (*instance_init)(Object *obj);
    void (*instance_post_init)(Object *obj);
    void (*instance_finalize)(Object *obj);
    bool abstract;
    const InterfaceInfo *interfaces;    /* terminated by { } */
} TypeInfo;

struct ObjectClass {
    Type type;
    /* Class-level properties declared by this class only, in order. */
    GList *properties;
    /* Called by object_unparent() before the parent drops its reference. */
    void (*unparent)(Object *obj);
};

struct Object {
    ObjectClass *class;
    void (*free)(void *obj);    /* NULL for embedded objects */
    GList *properties;          /* instance properties, in order */
    uint32_t ref;
    Object *parent;             /* composition parent, or NULL */
};

typedef JsonNode *(ObjectPropertyGet)(Object *obj, const char *name,
                                      void *opaque, Error **errp);
typedef bool (ObjectPropertySet)(Object *obj, const char *name,
                                 JsonNode *value, void *opaque,
                                 Error **errp);
typedef void (ObjectPropertyRelease)(Object *obj, const char *name,
                                     void *opaque);

struct ObjectProperty {
    char *name;
    char *type;                 /* "bool", "str", "uint64", "child<T>"... */
    char *description;
    ObjectPropertyGet *get;     /* NULL: write-only */
    ObjectPropertySet *set;     /* NULL: read-only */
    ObjectPropertyRelease *release;
    void *opaque;
};

/* Iterates instance properties first, then class properties up the chain. */
typedef struct ObjectPropertyIterator {
    GList *next;
    ObjectClass *klass;
} ObjectPropertyIterator;

/* ---- types and classes ---- */

Type type_register_static(const TypeInfo *info);
void type_register_static_array(const TypeInfo *infos, int nr_infos);

#define type_init(function)                                         \
    static void __attribute__((constructor)) do_type_init_##function(void) \
    {                                                               \
        function();                                                 \
    }

/* Registers every element of a TypeInfo array. */
#define DEFINE_TYPES(type_array)                                    \
    static void do_define_types_##type_array(void)                  \
    {                                                               \
        type_register_static_array(type_array, ARRAY_SIZE(type_array)); \
    }                                                               \
    type_init(do_define_types_##type_array)

ObjectClass *object_class_by_name(const char *typename);
ObjectClass *object_class_get_parent(ObjectClass *klass);
const char *object_class_get_name(ObjectClass *klass);
bool object_class_is_abstract(ObjectClass *klass);
/* NULL if klass is not (a subtype of) typename. */
ObjectClass *object_class_dynamic_cast(ObjectClass *klass,
                                       const char *typename);
ObjectClass *object_class_dynamic_cast_assert(ObjectClass *klass,
                                              const char *typename,
                                              const char *file, int line,
                                              const char *func);
/* Every class derived from parent_typename (NULL: all), sorted by name. */
GSList *object_class_get_list(const char *parent_typename,
                              bool include_abstract);

/* ---- objects ---- */

/* Aborts on an unknown or abstract type: that is a programming error. */
Object *object_new(const char *typename);
Object *object_new_with_class(ObjectClass *klass);

Object *object_ref(void *obj);
void object_unref(void *obj);

ObjectClass *object_get_class(Object *obj);
const char *object_get_typename(const Object *obj);
Object *object_dynamic_cast(Object *obj, const char *typename);
Object *object_dynamic_cast_assert(Object *obj, const char *typename,
                                   const char *file, int line,
                                   const char *func);

#define OBJECT(obj) ((Object *)(obj))
#define OBJECT_CLASS(klass) ((ObjectClass *)(klass))

#define OBJECT_CHECK(type, obj, name) \
    ((type *)object_dynamic_cast_assert(OBJECT(obj), (name), \
                                        __FILE__, __LINE__, __func__))
#define OBJECT_CLASS_CHECK(class_type, klass, name) \
    ((class_type *)object_class_dynamic_cast_assert(OBJECT_CLASS(klass), \
                                                    (name), __FILE__, \
                                                    __LINE__, __func__))
#define OBJECT_GET_CLASS(class_type, obj, name) \
    OBJECT_CLASS_CHECK(class_type, object_get_class(OBJECT(obj)), name)

/*
 * Declares the instance/class typedefs and the checked cast helpers
 * MODULE_OBJ_NAME(obj), MODULE_OBJ_NAME##_CLASS(klass) and
 * MODULE_OBJ_NAME##_GET_CLASS(obj); TYPE_##MODULE_OBJ_NAME must be defined.
 * The structs themselves are defined by the caller.
 */
#define OBJECT_DECLARE_TYPE(InstanceType, ClassType, MODULE_OBJ_NAME)   \
    typedef struct InstanceType InstanceType;                           \
    typedef struct ClassType ClassType;                                 \
    G_DEFINE_AUTOPTR_CLEANUP_FUNC(InstanceType, object_unref)           \
    static inline QEMU_UNUSED InstanceType *                            \
    MODULE_OBJ_NAME(const void *obj)                                    \
    {                                                                   \
        return OBJECT_CHECK(InstanceType, obj, TYPE_##MODULE_OBJ_NAME); \
    }                                                                   \
    static inline QEMU_UNUSED ClassType *                               \
    MODULE_OBJ_NAME##_CLASS(const void *klass)                          \
    {                                                                   \
        return OBJECT_CLASS_CHECK(ClassType, klass,                     \
                                  TYPE_##MODULE_OBJ_NAME);              \
    }                                                                   \
    static inline QEMU_UNUSED ClassType *                               \
    MODULE_OBJ_NAME##_GET_CLASS(const void *obj)                        \
    {                                                                   \
        return OBJECT_GET_CLASS(ClassType, obj, TYPE_##MODULE_OBJ_NAME); \
    }

/* Same, for types without their own class struct. */
#define OBJECT_DECLARE_SIMPLE_TYPE(InstanceType, MODULE_OBJ_NAME)       \
    typedef struct InstanceType InstanceType;                           \
    G_DEFINE_AUTOPTR_CLEANUP_FUNC(InstanceType, object_unref)           \
    static inline QEMU_UNUSED InstanceType *                            \
    MODULE_OBJ_NAME(const void *obj)                                    \
    {                                                                   \
        return OBJECT_CHECK(InstanceType, obj, TYPE_##MODULE_OBJ_NAME); \
    }

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Object, object_unref)

/* ---- properties ---- */

/* Aborts if the name is already taken on obj: a programming error. */
ObjectProperty *object_property_add(Object *obj, const char *name,
                                    const char *type,
                                    ObjectPropertyGet *get,
                                    ObjectPropertySet *set,
                                    ObjectPropertyRelease *release,
                                    void *opaque);
ObjectProperty *object_class_property_add(ObjectClass *klass,
                                          const char *name,
                                          const char *type,
                                          ObjectPropertyGet *get,
                                          ObjectPropertySet *set,
                                          ObjectPropertyRelease *release,
                                          void *opaque);
void object_property_set_description(ObjectProperty *prop,
                                     const char *description);
/* The property as QMP lists it: name, type and, if set, description. */
JsonObject *object_property_info(const ObjectProperty *prop);

/*
 * Convenience properties backed by callbacks; set may be NULL (read-only).
 * Setters return false with errp set to reject a value.
 */
typedef bool (ObjectBoolGet)(Object *obj, Error **errp);
typedef bool (ObjectBoolSet)(Object *obj, bool value, Error **errp);
typedef char *(ObjectStrGet)(Object *obj, Error **errp);
typedef bool (ObjectStrSet)(Object *obj, const char *value, Error **errp);

ObjectProperty *object_class_property_add_bool(ObjectClass *klass,
                                               const char *name,
                                               ObjectBoolGet *get,
                                               ObjectBoolSet *set);
ObjectProperty *object_class_property_add_str(ObjectClass *klass,
                                              const char *name,
                                              ObjectStrGet *get,
                                              ObjectStrSet *set);
/*
 * An unsigned integer field at (char *)obj + offset of the given width
 * (1, 2, 4 or 8 bytes); writable when writable is true.
 */
ObjectProperty *object_class_property_add_uint(ObjectClass *klass,
                                               const char *name,
                                               size_t offset, unsigned width,
                                               bool writable);
/* Read-only view of a uint64_t that lives elsewhere (e.g. a counter). */
ObjectProperty *object_property_add_uint64_ptr(Object *obj, const char *name,
                                               const uint64_t *v);

/* NULL if not found (no error). */
ObjectProperty *object_property_find(Object *obj, const char *name);
/* Sets "Property 'TYPE.NAME' not found" when missing. */
ObjectProperty *object_property_find_err(Object *obj, const char *name,
                                         Error **errp);
ObjectProperty *object_class_property_find(ObjectClass *klass,
                                           const char *name);

void object_property_iter_init(ObjectPropertyIterator *iter, Object *obj);
void object_class_property_iter_init(ObjectPropertyIterator *iter,
                                     ObjectClass *klass);
ObjectProperty *object_property_iter_next(ObjectPropertyIterator *iter);

/* The caller owns the returned node (json_node_unref). */
JsonNode *object_property_get_json(Object *obj, const char *name,
                                   Error **errp);
bool object_property_set_json(Object *obj, const char *name,
                              JsonNode *value, Error **errp);
/* Sets from a command-line string ("on", "64M", "0x10", ...). */
bool object_property_parse(Object *obj, const char *name, const char *str,
                           Error **errp);
bool object_property_get_bool(Object *obj, const char *name, Error **errp);
uint64_t object_property_get_uint(Object *obj, const char *name,
                                  Error **errp);
/* g_free the result. */
char *object_property_get_str(Object *obj, const char *name, Error **errp);
bool object_property_set_bool(Object *obj, const char *name, bool value,
                              Error **errp);
bool object_property_set_uint(Object *obj, const char *name, uint64_t value,
                              Error **errp);
bool object_property_set_str(Object *obj, const char *name,
                             const char *value, Error **errp);

/* ---- composition tree ---- */

Object *object_get_root(void);
/* Returns the container at path (e.g. "/machine/peripheral"), creating it. */
Object *container_get(Object *root, const char *path);
/*
 * Adds a "child<TYPE>" property to parent; the link takes a reference
 * (the caller keeps its own).  Aborts if name is taken.
 */
ObjectProperty *object_property_add_child(Object *parent, const char *name,
                                          Object *child);
/* Removes obj from its parent (runs the class unparent hook first). */
void object_unparent(Object *obj);
/* The name of the child property in the parent; NULL if unparented. */
const char *object_get_canonical_path_component(const Object *obj);
/* "/machine/peripheral/ID"; NULL if obj is not attached to the root. */
char *object_get_canonical_path(const Object *obj);
/* The child named "part" of parent, or NULL. */
Object *object_resolve_path_component(Object *parent, const char *part);
/*
 * Absolute paths ("/machine/peripheral/nic0") resolve from the root; a
 * partial path ("nic0", "peripheral/nic0") matches a unique suffix anywhere
 * in the tree (*ambiguous is set when several match).
 */
Object *object_resolve_path(const char *path, bool *ambiguous);
Object *object_resolve_path_type(const char *path, const char *typename,
                                 bool *ambiguous);
/*
 * Calls fn on each descendant, depth first, children in insertion order;
 * stops at a non-zero return.
 */
int object_child_foreach_recursive(Object *obj,
                                   int (*fn)(Object *child, void *opaque),
                                   void *opaque);

#endif
