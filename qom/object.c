/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM-lite: types, classes, reference counted objects, properties and the
 * composition tree.
 */
#include "qemu/osdep.h"
#include "qom/object.h"
#include "qapi/error.h"
#include "qemu/option.h"

typedef struct TypeImpl TypeImpl;

struct TypeImpl {
    char *name;
    char *parent_name;
    TypeImpl *parent;           /* resolved on class init */
    size_t instance_size;
    size_t class_size;
    void (*class_init)(ObjectClass *klass, void *data);
    void *class_data;
    void (*instance_init)(Object *obj);
    void (*instance_post_init)(Object *obj);
    void (*instance_finalize)(Object *obj);
    bool abstract;
    char **interfaces;          /* NULL-terminated names */
    ObjectClass *class;
};

static GHashTable *type_table;  /* name -> TypeImpl * */

static GHashTable *type_table_get(void)
{
    if (!type_table) {
        type_table = g_hash_table_new(g_str_hash, g_str_equal);
    }
    return type_table;
}

static TypeImpl *type_get_by_name(const char *name)
{
    return name ? g_hash_table_lookup(type_table_get(), name) : NULL;
}

Type type_register_static(const TypeInfo *info)
{
    TypeImpl *ti;
    size_t n = 0;

    g_assert(info->name);
    if (type_get_by_name(info->name)) {
        fprintf(stderr, "type '%s' registered twice\n", info->name);
        abort();
    }
    ti = g_new0(TypeImpl, 1);
    ti->name = g_strdup(info->name);
    ti->parent_name = g_strdup(info->parent);
    ti->instance_size = info->instance_size;
    ti->class_size = info->class_size;
    ti->class_init = info->class_init;
    ti->class_data = info->class_data;
    ti->instance_init = info->instance_init;
    ti->instance_post_init = info->instance_post_init;
    ti->instance_finalize = info->instance_finalize;
    ti->abstract = info->abstract;
    for (const InterfaceInfo *ii = info->interfaces; ii && ii->type; ii++) {
        n++;
    }
    ti->interfaces = g_new0(char *, n + 1);
    for (size_t i = 0; i < n; i++) {
        ti->interfaces[i] = g_strdup(info->interfaces[i].type);
    }
    g_hash_table_insert(type_table_get(), ti->name, ti);
    return ti;
}

void type_register_static_array(const TypeInfo *infos, int nr_infos)
{
    for (int i = 0; i < nr_infos; i++) {
        type_register_static(&infos[i]);
    }
}

static TypeImpl *type_get_parent(TypeImpl *ti)
{
    if (ti->parent_name && !ti->parent) {
        ti->parent = type_get_by_name(ti->parent_name);
        if (!ti->parent) {
            fprintf(stderr, "type '%s': unknown parent type '%s'\n",
                    ti->name, ti->parent_name);
            abort();
        }
    }
    return ti->parent;
}

static size_t type_class_size(TypeImpl *ti)
{
    for (; ti; ti = type_get_parent(ti)) {
        if (ti->class_size) {
            return ti->class_size;
        }
    }
    return sizeof(ObjectClass);
}

static size_t type_instance_size(TypeImpl *ti)
{
    for (; ti; ti = type_get_parent(ti)) {
        if (ti->instance_size) {
            return ti->instance_size;
        }
    }
    return sizeof(Object);
}

static void type_initialize(TypeImpl *ti)
{
    TypeImpl *parent;
    size_t class_size;

    if (ti->class) {
        return;
    }
    class_size = type_class_size(ti);
    ti->class = g_malloc0(class_size);
    parent = type_get_parent(ti);
    if (parent) {
        type_initialize(parent);
        g_assert(type_class_size(parent) <= class_size);
        memcpy(ti->class, parent->class, type_class_size(parent));
        /* Class properties belong to the class that declared them. */
        ti->class->properties = NULL;
    }
    ti->class->type = ti;
    if (ti->class_init) {
        ti->class_init(ti->class, ti->class_data);
    }
}

static bool type_is_ancestor(TypeImpl *ti, TypeImpl *target)
{
    for (; ti; ti = type_get_parent(ti)) {
        if (ti == target) {
            return true;
        }
        for (char **i = ti->interfaces; *i; i++) {
            if (!strcmp(*i, target->name)) {
                return true;
            }
        }
    }
    return false;
}

ObjectClass *object_class_by_name(const char *typename)
{
    TypeImpl *ti = type_get_by_name(typename);

    if (!ti) {
        return NULL;
    }
    type_initialize(ti);
    return ti->class;
}

ObjectClass *object_class_get_parent(ObjectClass *klass)
{
    TypeImpl *parent = type_get_parent(klass->type);

    if (!parent) {
        return NULL;
    }
    type_initialize(parent);
    return parent->class;
}

const char *object_class_get_name(ObjectClass *klass)
{
    return klass->type->name;
}

bool object_class_is_abstract(ObjectClass *klass)
{
    return klass->type->abstract;
}

ObjectClass *object_class_dynamic_cast(ObjectClass *klass,
                                       const char *typename)
{
    TypeImpl *target;

    if (!klass) {
        return NULL;
    }
    target = type_get_by_name(typename);
    if (!target || !type_is_ancestor(klass->type, target)) {
        return NULL;
    }
    return klass;
}

ObjectClass *object_class_dynamic_cast_assert(ObjectClass *klass,
                                              const char *typename,
                                              const char *file, int line,
                                              const char *func)
{
    ObjectClass *ret = object_class_dynamic_cast(klass, typename);

    if (!ret && klass) {
        fprintf(stderr, "%s:%d:%s: class '%s' is not a subtype of '%s'\n",
                file, line, func, object_class_get_name(klass), typename);
        abort();
    }
    return ret;
}

static gint class_name_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(object_class_get_name((ObjectClass *)a),
                  object_class_get_name((ObjectClass *)b));
}

GSList *object_class_get_list(const char *parent_typename,
                              bool include_abstract)
{
    TypeImpl *parent = parent_typename ? type_get_by_name(parent_typename)
                                       : NULL;
    GSList *list = NULL;
    GHashTableIter iter;
    gpointer value;

    if (parent_typename && !parent) {
        return NULL;
    }
    g_hash_table_iter_init(&iter, type_table_get());
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        TypeImpl *ti = value;

        if (ti->abstract && !include_abstract) {
            continue;
        }
        if (parent && !type_is_ancestor(ti, parent)) {
            continue;
        }
        list = g_slist_prepend(list, object_class_by_name(ti->name));
    }
    return g_slist_sort(list, class_name_cmp);
}

/* ---- objects ---- */

static void object_init_with_type(Object *obj, TypeImpl *ti)
{
    TypeImpl *parent = type_get_parent(ti);

    if (parent) {
        object_init_with_type(obj, parent);
    }
    if (ti->instance_init) {
        ti->instance_init(obj);
    }
}

static void object_post_init_with_type(Object *obj, TypeImpl *ti)
{
    TypeImpl *parent = type_get_parent(ti);

    if (parent) {
        object_post_init_with_type(obj, parent);
    }
    if (ti->instance_post_init) {
        ti->instance_post_init(obj);
    }
}

static void object_initialize_with_type(Object *obj, size_t size,
                                        TypeImpl *ti)
{
    type_initialize(ti);
    if (ti->abstract) {
        fprintf(stderr, "cannot instantiate abstract type '%s'\n", ti->name);
        abort();
    }
    g_assert(size >= type_instance_size(ti));
    memset(obj, 0, size);
    obj->class = ti->class;
    obj->ref = 1;
    object_init_with_type(obj, ti);
    object_post_init_with_type(obj, ti);
}

Object *object_new_with_class(ObjectClass *klass)
{
    TypeImpl *ti = klass->type;
    size_t size = type_instance_size(ti);
    Object *obj = g_malloc(size);

    object_initialize_with_type(obj, size, ti);
    obj->free = g_free;
    return obj;
}

Object *object_new(const char *typename)
{
    TypeImpl *ti = type_get_by_name(typename);

    if (!ti) {
        fprintf(stderr, "unknown type '%s'\n", typename);
        abort();
    }
    type_initialize(ti);
    return object_new_with_class(ti->class);
}

Object *object_ref(void *opaque)
{
    Object *obj = opaque;

    if (obj) {
        g_atomic_int_inc(&obj->ref);
    }
    return obj;
}

static void object_property_free(ObjectProperty *prop)
{
    g_free(prop->name);
    g_free(prop->type);
    g_free(prop->description);
    g_free(prop);
}

static void object_property_del_all(Object *obj)
{
    /* Releasing a child property may drop the last reference to a child
     * whose finalize touches nothing of ours, so detach the list first. */
    while (obj->properties) {
        ObjectProperty *prop = obj->properties->data;

        obj->properties = g_list_delete_link(obj->properties,
                                             obj->properties);
        if (prop->release) {
            prop->release(obj, prop->name, prop->opaque);
        }
        object_property_free(prop);
    }
}

static void object_finalize(Object *obj)
{
    object_property_del_all(obj);
    for (TypeImpl *ti = obj->class->type; ti; ti = type_get_parent(ti)) {
        if (ti->instance_finalize) {
            ti->instance_finalize(obj);
        }
    }
    g_assert(obj->ref == 0);
    if (obj->free) {
        obj->free(obj);
    }
}

void object_unref(void *opaque)
{
    Object *obj = opaque;

    if (!obj) {
        return;
    }
    g_assert(obj->ref > 0);
    if (g_atomic_int_dec_and_test(&obj->ref)) {
        object_finalize(obj);
    }
}

ObjectClass *object_get_class(Object *obj)
{
    return obj->class;
}

const char *object_get_typename(const Object *obj)
{
    return obj->class->type->name;
}

Object *object_dynamic_cast(Object *obj, const char *typename)
{
    if (obj && object_class_dynamic_cast(obj->class, typename)) {
        return obj;
    }
    return NULL;
}

Object *object_dynamic_cast_assert(Object *obj, const char *typename,
                                   const char *file, int line,
                                   const char *func)
{
    if (obj && !object_dynamic_cast(obj, typename)) {
        fprintf(stderr, "%s:%d:%s: object of type '%s' is not a '%s'\n",
                file, line, func, object_get_typename(obj), typename);
        abort();
    }
    return obj;
}

/* ---- properties ---- */

ObjectProperty *object_class_property_find(ObjectClass *klass,
                                           const char *name)
{
    for (; klass; klass = object_class_get_parent(klass)) {
        for (GList *l = klass->properties; l; l = l->next) {
            ObjectProperty *prop = l->data;
            if (!strcmp(prop->name, name)) {
                return prop;
            }
        }
    }
    return NULL;
}

ObjectProperty *object_property_find(Object *obj, const char *name)
{
    for (GList *l = obj->properties; l; l = l->next) {
        ObjectProperty *prop = l->data;
        if (!strcmp(prop->name, name)) {
            return prop;
        }
    }
    return object_class_property_find(obj->class, name);
}

ObjectProperty *object_property_find_err(Object *obj, const char *name,
                                         Error **errp)
{
    ObjectProperty *prop = object_property_find(obj, name);

    if (!prop) {
        error_setg(errp, "Property '%s.%s' not found",
                   object_get_typename(obj), name);
    }
    return prop;
}

static ObjectProperty *property_new(const char *name, const char *type,
                                    ObjectPropertyGet *get,
                                    ObjectPropertySet *set,
                                    ObjectPropertyRelease *release,
                                    void *opaque)
{
    ObjectProperty *prop = g_new0(ObjectProperty, 1);

    prop->name = g_strdup(name);
    prop->type = g_strdup(type);
    prop->get = get;
    prop->set = set;
    prop->release = release;
    prop->opaque = opaque;
    return prop;
}

ObjectProperty *object_property_add(Object *obj, const char *name,
                                    const char *type,
                                    ObjectPropertyGet *get,
                                    ObjectPropertySet *set,
                                    ObjectPropertyRelease *release,
                                    void *opaque)
{
    ObjectProperty *prop;

    if (object_property_find(obj, name)) {
        fprintf(stderr, "attempt to add duplicate property '%s' to "
                "object (type '%s')\n", name, object_get_typename(obj));
        abort();
    }
    prop = property_new(name, type, get, set, release, opaque);
    obj->properties = g_list_append(obj->properties, prop);
    return prop;
}

ObjectProperty *object_class_property_add(ObjectClass *klass,
                                          const char *name,
                                          const char *type,
                                          ObjectPropertyGet *get,
                                          ObjectPropertySet *set,
                                          ObjectPropertyRelease *release,
                                          void *opaque)
{
    ObjectProperty *prop;

    if (object_class_property_find(klass, name)) {
        fprintf(stderr, "attempt to add duplicate property '%s' to "
                "class '%s'\n", name, object_class_get_name(klass));
        abort();
    }
    prop = property_new(name, type, get, set, release, opaque);
    klass->properties = g_list_append(klass->properties, prop);
    return prop;
}

void object_property_set_description(ObjectProperty *prop,
                                     const char *description)
{
    g_free(prop->description);
    prop->description = g_strdup(description);
}

JsonObject *object_property_info(const ObjectProperty *prop)
{
    JsonObject *o = json_object_new();

    json_object_set_string_member(o, "name", prop->name);
    json_object_set_string_member(o, "type", prop->type);
    if (prop->description) {
        json_object_set_string_member(o, "description", prop->description);
    }
    return o;
}

void object_property_iter_init(ObjectPropertyIterator *iter, Object *obj)
{
    iter->next = obj->properties;
    iter->klass = obj->class;
}

void object_class_property_iter_init(ObjectPropertyIterator *iter,
                                     ObjectClass *klass)
{
    iter->next = NULL;
    iter->klass = klass;
}

ObjectProperty *object_property_iter_next(ObjectPropertyIterator *iter)
{
    while (!iter->next) {
        if (!iter->klass) {
            return NULL;
        }
        iter->next = iter->klass->properties;
        iter->klass = object_class_get_parent(iter->klass);
    }
    ObjectProperty *prop = iter->next->data;
    iter->next = iter->next->next;
    return prop;
}

JsonNode *object_property_get_json(Object *obj, const char *name,
                                   Error **errp)
{
    ObjectProperty *prop = object_property_find_err(obj, name, errp);

    if (!prop) {
        return NULL;
    }
    if (!prop->get) {
        error_setg(errp, "Property '%s.%s' is not readable",
                   object_get_typename(obj), name);
        return NULL;
    }
    return prop->get(obj, name, prop->opaque, errp);
}

bool object_property_set_json(Object *obj, const char *name,
                              JsonNode *value, Error **errp)
{
    ObjectProperty *prop = object_property_find_err(obj, name, errp);

    if (!prop) {
        return false;
    }
    if (!prop->set) {
        error_setg(errp, "Property '%s.%s' is read-only",
                   object_get_typename(obj), name);
        return false;
    }
    return prop->set(obj, name, value, prop->opaque, errp);
}

bool object_property_parse(Object *obj, const char *name, const char *str,
                           Error **errp)
{
    g_autoptr(JsonNode) node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, str);
    return object_property_set_json(obj, name, node, errp);
}

/*
 * Stock value conversions: a setter gets either the native JSON type or a
 * string from the command line.
 */
static bool json_to_bool(JsonNode *node, const char *name, bool *out,
                         Error **errp)
{
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType t = json_node_get_value_type(node);
        if (t == G_TYPE_BOOLEAN) {
            *out = json_node_get_boolean(node);
            return true;
        }
        if (t == G_TYPE_STRING &&
            qemu_strtobool(json_node_get_string(node), out, NULL)) {
            return true;
        }
    }
    error_setg(errp, "Parameter '%s' expects 'on' or 'off'", name);
    return false;
}

static bool json_to_u64(JsonNode *node, const char *name, uint64_t *out,
                        Error **errp)
{
    if (JSON_NODE_HOLDS_VALUE(node)) {
        GType t = json_node_get_value_type(node);
        if (t == G_TYPE_INT64 && json_node_get_int(node) >= 0) {
            *out = json_node_get_int(node);
            return true;
        }
        if (t == G_TYPE_STRING &&
            qemu_strtosz(json_node_get_string(node), out, NULL)) {
            return true;
        }
    }
    error_setg(errp, "Parameter '%s' expects a non-negative number", name);
    return false;
}

static bool json_to_str(JsonNode *node, const char *name, const char **out,
                        Error **errp)
{
    if (JSON_NODE_HOLDS_VALUE(node) &&
        json_node_get_value_type(node) == G_TYPE_STRING) {
        *out = json_node_get_string(node);
        return true;
    }
    error_setg(errp, "Parameter '%s' expects a string", name);
    return false;
}

bool object_property_get_bool(Object *obj, const char *name, Error **errp)
{
    g_autoptr(JsonNode) node = object_property_get_json(obj, name, errp);
    bool v = false;

    if (node && !json_to_bool(node, name, &v, errp)) {
        return false;
    }
    return v;
}

uint64_t object_property_get_uint(Object *obj, const char *name,
                                  Error **errp)
{
    g_autoptr(JsonNode) node = object_property_get_json(obj, name, errp);
    uint64_t v = 0;

    if (node && !json_to_u64(node, name, &v, errp)) {
        return 0;
    }
    return v;
}

char *object_property_get_str(Object *obj, const char *name, Error **errp)
{
    g_autoptr(JsonNode) node = object_property_get_json(obj, name, errp);
    const char *s;

    if (!node || !json_to_str(node, name, &s, errp)) {
        return NULL;
    }
    return g_strdup(s);
}

bool object_property_set_bool(Object *obj, const char *name, bool value,
                              Error **errp)
{
    g_autoptr(JsonNode) node = json_node_new(JSON_NODE_VALUE);

    json_node_set_boolean(node, value);
    return object_property_set_json(obj, name, node, errp);
}

bool object_property_set_uint(Object *obj, const char *name, uint64_t value,
                              Error **errp)
{
    g_autoptr(JsonNode) node = json_node_new(JSON_NODE_VALUE);

    /* JSON integers are signed 64-bit; go through a string above that. */
    if (value > INT64_MAX) {
        g_autofree char *s = g_strdup_printf("%" PRIu64, value);
        json_node_set_string(node, s);
    } else {
        json_node_set_int(node, value);
    }
    return object_property_set_json(obj, name, node, errp);
}

bool object_property_set_str(Object *obj, const char *name,
                             const char *value, Error **errp)
{
    g_autoptr(JsonNode) node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, value);
    return object_property_set_json(obj, name, node, errp);
}

/* ---- convenience properties ---- */

typedef struct BoolProperty {
    ObjectBoolGet *get;
    ObjectBoolSet *set;
} BoolProperty;

static JsonNode *bool_prop_get(Object *obj, const char *name, void *opaque,
                               Error **errp)
{
    BoolProperty *bp = opaque;
    Error *err = NULL;
    bool v = bp->get(obj, &err);
    JsonNode *node;

    if (err) {
        error_propagate(errp, err);
        return NULL;
    }
    node = json_node_new(JSON_NODE_VALUE);
    json_node_set_boolean(node, v);
    return node;
}

static bool bool_prop_set(Object *obj, const char *name, JsonNode *value,
                          void *opaque, Error **errp)
{
    BoolProperty *bp = opaque;
    bool v;

    return json_to_bool(value, name, &v, errp) && bp->set(obj, v, errp);
}

static BoolProperty *bool_prop_new(ObjectBoolGet *get, ObjectBoolSet *set)
{
    BoolProperty *bp = g_new(BoolProperty, 1);

    bp->get = get;
    bp->set = set;
    return bp;
}

ObjectProperty *object_class_property_add_bool(ObjectClass *klass,
                                               const char *name,
                                               ObjectBoolGet *get,
                                               ObjectBoolSet *set)
{
    /* Class properties live as long as the program: nothing to release. */
    return object_class_property_add(klass, name, "bool",
                                     get ? bool_prop_get : NULL,
                                     set ? bool_prop_set : NULL, NULL,
                                     bool_prop_new(get, set));
}

typedef struct StrProperty {
    ObjectStrGet *get;
    ObjectStrSet *set;
} StrProperty;

static JsonNode *str_prop_get(Object *obj, const char *name, void *opaque,
                              Error **errp)
{
    StrProperty *sp = opaque;
    Error *err = NULL;
    g_autofree char *v = sp->get(obj, &err);
    JsonNode *node;

    if (err) {
        error_propagate(errp, err);
        return NULL;
    }
    node = json_node_new(JSON_NODE_VALUE);
    json_node_set_string(node, v ? v : "");
    return node;
}

static bool str_prop_set(Object *obj, const char *name, JsonNode *value,
                         void *opaque, Error **errp)
{
    StrProperty *sp = opaque;
    const char *v;

    return json_to_str(value, name, &v, errp) && sp->set(obj, v, errp);
}

static StrProperty *str_prop_new(ObjectStrGet *get, ObjectStrSet *set)
{
    StrProperty *sp = g_new(StrProperty, 1);

    sp->get = get;
    sp->set = set;
    return sp;
}

ObjectProperty *object_class_property_add_str(ObjectClass *klass,
                                              const char *name,
                                              ObjectStrGet *get,
                                              ObjectStrSet *set)
{
    return object_class_property_add(klass, name, "str",
                                     get ? str_prop_get : NULL,
                                     set ? str_prop_set : NULL, NULL,
                                     str_prop_new(get, set));
}

/* The opaque of a field property packs offset and width. */
typedef struct UintField {
    size_t offset;
    unsigned width;
} UintField;

static const char *uint_type_name(unsigned width)
{
    switch (width) {
    case 1: return "uint8";
    case 2: return "uint16";
    case 4: return "uint32";
    default: return "uint64";
    }
}

static JsonNode *uint_field_get(Object *obj, const char *name, void *opaque,
                                Error **errp)
{
    UintField *f = opaque;
    void *p = (char *)obj + f->offset;
    uint64_t v;
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    switch (f->width) {
    case 1: v = *(uint8_t *)p; break;
    case 2: v = *(uint16_t *)p; break;
    case 4: v = *(uint32_t *)p; break;
    default: v = *(uint64_t *)p; break;
    }
    json_node_set_int(node, (int64_t)v);
    return node;
}

static bool uint_field_set(Object *obj, const char *name, JsonNode *value,
                           void *opaque, Error **errp)
{
    UintField *f = opaque;
    void *p = (char *)obj + f->offset;
    uint64_t v;

    if (!json_to_u64(value, name, &v, errp)) {
        return false;
    }
    if (f->width < 8 && v >> (f->width * 8)) {
        error_setg(errp, "Parameter '%s' expects %s", name,
                   uint_type_name(f->width));
        return false;
    }
    switch (f->width) {
    case 1: *(uint8_t *)p = v; break;
    case 2: *(uint16_t *)p = v; break;
    case 4: *(uint32_t *)p = v; break;
    default: *(uint64_t *)p = v; break;
    }
    return true;
}

static UintField *uint_field_new(size_t offset, unsigned width)
{
    UintField *f = g_new(UintField, 1);

    g_assert(width == 1 || width == 2 || width == 4 || width == 8);
    f->offset = offset;
    f->width = width;
    return f;
}

ObjectProperty *object_class_property_add_uint(ObjectClass *klass,
                                               const char *name,
                                               size_t offset, unsigned width,
                                               bool writable)
{
    return object_class_property_add(klass, name, uint_type_name(width),
                                     uint_field_get,
                                     writable ? uint_field_set : NULL, NULL,
                                     uint_field_new(offset, width));
}

static JsonNode *uint64_ptr_get(Object *obj, const char *name, void *opaque,
                                Error **errp)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_int(node, (int64_t)*(const uint64_t *)opaque);
    return node;
}

ObjectProperty *object_property_add_uint64_ptr(Object *obj, const char *name,
                                               const uint64_t *v)
{
    return object_property_add(obj, name, "uint64", uint64_ptr_get, NULL,
                               NULL, (void *)v);
}

/* ---- composition tree ---- */

static Object *root_object;

static JsonNode *path_node(const Object *target)
{
    g_autofree char *path = object_get_canonical_path(target);
    JsonNode *node = json_node_new(JSON_NODE_VALUE);

    json_node_set_string(node, path ? path : "");
    return node;
}

static JsonNode *child_prop_get(Object *obj, const char *name, void *opaque,
                                Error **errp)
{
    return path_node(opaque);
}

static void child_prop_release(Object *obj, const char *name, void *opaque)
{
    Object *child = opaque;

    /*
     * The parent is going away (or deleted the property by name) without
     * object_unparent: tear the child down first all the same, so that a
     * realized device is unrealized and leaves its bus before it is freed.
     */
    if (child->class->unparent) {
        child->class->unparent(child);
    }
    child->parent = NULL;
    object_unref(child);
}

static bool is_child_property(const ObjectProperty *prop)
{
    return prop->get == child_prop_get;
}

ObjectProperty *object_property_add_child(Object *parent, const char *name,
                                          Object *child)
{
    g_autofree char *type = g_strdup_printf("child<%s>",
                                            object_get_typename(child));
    ObjectProperty *prop;

    g_assert(!child->parent);
    prop = object_property_add(parent, name, type, child_prop_get, NULL,
                               child_prop_release, child);
    object_ref(child);
    child->parent = parent;
    return prop;
}

static ObjectProperty *child_property_of(Object *parent, const Object *child)
{
    for (GList *l = parent->properties; l; l = l->next) {
        ObjectProperty *prop = l->data;
        if (is_child_property(prop) && prop->opaque == child) {
            return prop;
        }
    }
    return NULL;
}

void object_unparent(Object *obj)
{
    ObjectProperty *prop;

    if (!obj->parent) {
        return;
    }
    /* Run the hook while the canonical path still resolves. */
    if (obj->class->unparent) {
        obj->class->unparent(obj);
    }
    /* The hook may already have detached it. */
    if (obj->parent) {
        Object *parent = obj->parent;

        prop = child_property_of(parent, obj);
        g_assert(prop);
        /* Drop the link by hand: releasing it would run the hook again. */
        parent->properties = g_list_remove(parent->properties, prop);
        object_property_free(prop);
        obj->parent = NULL;
        object_unref(obj);
    }
}

const char *object_get_canonical_path_component(const Object *obj)
{
    ObjectProperty *prop;

    if (!obj->parent) {
        return NULL;
    }
    prop = child_property_of(obj->parent, obj);
    return prop ? prop->name : NULL;
}

char *object_get_canonical_path(const Object *obj)
{
    GString *path = g_string_new(NULL);
    Object *root = object_get_root();

    while (obj != root) {
        const char *component = object_get_canonical_path_component(obj);

        if (!component) {
            g_string_free(path, TRUE);
            return NULL;
        }
        g_string_prepend(path, component);
        g_string_prepend_c(path, '/');
        obj = obj->parent;
    }
    if (!path->len) {
        g_string_append_c(path, '/');
    }
    return g_string_free(path, FALSE);
}

Object *object_resolve_path_component(Object *parent, const char *part)
{
    for (GList *l = parent->properties; l; l = l->next) {
        ObjectProperty *prop = l->data;
        if (is_child_property(prop) && !strcmp(prop->name, part)) {
            return prop->opaque;
        }
    }
    return NULL;
}

static Object *resolve_from(Object *start, char **parts)
{
    Object *obj = start;

    for (; *parts && obj; parts++) {
        if (!**parts) {
            continue;   /* "//" or a trailing "/" */
        }
        obj = object_resolve_path_component(obj, *parts);
    }
    return obj;
}

typedef struct PartialSearch {
    char **parts;
    const char *typename;
    Object *found;
    bool ambiguous;
} PartialSearch;

static int partial_search_cb(Object *child, void *opaque)
{
    PartialSearch *s = opaque;
    Object *hit = resolve_from(child, s->parts + 1);

    /* child must itself be named like the first part */
    if (hit && !strcmp(object_get_canonical_path_component(child),
                       s->parts[0]) &&
        (!s->typename || object_dynamic_cast(hit, s->typename))) {
        if (s->found && s->found != hit) {
            s->ambiguous = true;
            return 1;
        }
        s->found = hit;
    }
    return 0;
}

Object *object_resolve_path_type(const char *path, const char *typename,
                                 bool *ambiguous)
{
    g_auto(GStrv) parts = NULL;
    Object *obj;

    if (ambiguous) {
        *ambiguous = false;
    }
    if (!path || !*path) {
        return NULL;
    }
    parts = g_strsplit(path, "/", 0);
    if (path[0] == '/') {
        obj = resolve_from(object_get_root(), parts);
        if (obj && typename && !object_dynamic_cast(obj, typename)) {
            return NULL;
        }
        return obj;
    }
    PartialSearch s = { .parts = parts, .typename = typename };
    object_child_foreach_recursive(object_get_root(), partial_search_cb, &s);
    if (s.ambiguous) {
        if (ambiguous) {
            *ambiguous = true;
        }
        return NULL;
    }
    return s.found;
}

Object *object_resolve_path(const char *path, bool *ambiguous)
{
    return object_resolve_path_type(path, NULL, ambiguous);
}

static int do_child_foreach(Object *obj,
                            int (*fn)(Object *child, void *opaque),
                            void *opaque, bool recurse)
{
    /* Snapshot: fn may unparent children while we walk. */
    g_autoptr(GPtrArray) children = g_ptr_array_new_with_free_func(
        object_unref);
    int ret = 0;

    for (GList *l = obj->properties; l; l = l->next) {
        ObjectProperty *prop = l->data;
        if (is_child_property(prop)) {
            g_ptr_array_add(children, object_ref(prop->opaque));
        }
    }
    for (guint i = 0; i < children->len && !ret; i++) {
        Object *child = g_ptr_array_index(children, i);

        ret = fn(child, opaque);
        if (!ret && recurse) {
            ret = do_child_foreach(child, fn, opaque, true);
        }
    }
    return ret;
}

int object_child_foreach_recursive(Object *obj,
                                   int (*fn)(Object *child, void *opaque),
                                   void *opaque)
{
    return do_child_foreach(obj, fn, opaque, true);
}

Object *object_get_root(void)
{
    if (!root_object) {
        root_object = object_new(TYPE_CONTAINER);
    }
    return root_object;
}

Object *container_get(Object *root, const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, "/", 0);
    Object *obj = root;

    for (char **p = parts; *p; p++) {
        Object *child;

        if (!**p) {
            continue;
        }
        child = object_resolve_path_component(obj, *p);
        if (!child) {
            child = object_new(TYPE_CONTAINER);
            object_property_add_child(obj, *p, child);
            object_unref(child);
        }
        obj = child;
    }
    return obj;
}

static char *object_type_get(Object *obj, Error **errp)
{
    return g_strdup(object_get_typename(obj));
}

static void object_class_init(ObjectClass *oc, void *data)
{
    object_class_property_add_str(oc, "type", object_type_get, NULL);
}

static const TypeInfo object_core_types[] = {
    {
        .name = TYPE_OBJECT,
        .instance_size = sizeof(Object),
        .class_size = sizeof(ObjectClass),
        .class_init = object_class_init,
        .abstract = true,
    }, {
        .name = TYPE_INTERFACE,
        .abstract = true,
    }, {
        .name = TYPE_CONTAINER,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(Object),
    },
};

DEFINE_TYPES(object_core_types)
