/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QOM-lite: type hierarchy, casts, class inheritance, properties and the
 * composition tree.
 */
#include "qemu/osdep.h"
#include "qom/object.h"
#include "qapi/error.h"

#define TYPE_ANIMAL "test-animal"
#define TYPE_DOG "test-dog"
#define TYPE_PUPPY "test-puppy"
#define TYPE_CAT "test-cat"
#define TYPE_PET_IFACE "test-pet"

typedef struct Animal {
    Object parent_obj;
    int legs;
    bool happy;
    uint32_t weight;
    char *name;
    char *init_trace;
} Animal;

typedef struct AnimalClass {
    ObjectClass parent_class;
    const char *(*sound)(Animal *a);
} AnimalClass;

#define ANIMAL(obj) OBJECT_CHECK(Animal, (obj), TYPE_ANIMAL)
#define ANIMAL_CLASS(k) OBJECT_CLASS_CHECK(AnimalClass, (k), TYPE_ANIMAL)
#define ANIMAL_GET_CLASS(obj) OBJECT_GET_CLASS(AnimalClass, (obj), TYPE_ANIMAL)

static int finalized;

static const char *dog_sound(Animal *a)
{
    return "woof";
}

static const char *cat_sound(Animal *a)
{
    return "meow";
}

static void append_trace(Animal *a, const char *what)
{
    char *old = a->init_trace;

    a->init_trace = g_strconcat(old ? old : "", what, NULL);
    g_free(old);
}

static bool animal_get_happy(Object *obj, Error **errp)
{
    return ANIMAL(obj)->happy;
}

static bool animal_set_happy(Object *obj, bool value, Error **errp)
{
    ANIMAL(obj)->happy = value;
    return true;
}

static char *animal_get_name(Object *obj, Error **errp)
{
    return g_strdup(ANIMAL(obj)->name);
}

static bool animal_set_name(Object *obj, const char *value, Error **errp)
{
    if (!*value) {
        error_setg(errp, "a name must not be empty");
        return false;
    }
    g_free(ANIMAL(obj)->name);
    ANIMAL(obj)->name = g_strdup(value);
    return true;
}

static void animal_class_init(ObjectClass *oc, void *data)
{
    object_class_property_add_bool(oc, "happy", animal_get_happy,
                                   animal_set_happy);
    object_class_property_add_str(oc, "name", animal_get_name,
                                  animal_set_name);
    object_class_property_add_uint(oc, "weight",
                                   offsetof(Animal, weight), 4, true);
    object_class_property_add_uint(oc, "legs", offsetof(Animal, legs), 4,
                                   false);
}

static void animal_init(Object *obj)
{
    ANIMAL(obj)->legs = 4;
    append_trace(ANIMAL(obj), "A");
}

static void animal_finalize(Object *obj)
{
    g_free(ANIMAL(obj)->name);
    g_free(ANIMAL(obj)->init_trace);
    finalized++;
}

static void dog_class_init(ObjectClass *oc, void *data)
{
    ANIMAL_CLASS(oc)->sound = dog_sound;
}

static void dog_init(Object *obj)
{
    append_trace(ANIMAL(obj), "D");
}

static void puppy_init(Object *obj)
{
    append_trace(ANIMAL(obj), "P");
}

static void cat_class_init(ObjectClass *oc, void *data)
{
    ANIMAL_CLASS(oc)->sound = cat_sound;
}

static const InterfaceInfo pet_ifaces[] = {
    { TYPE_PET_IFACE },
    { }
};

static const TypeInfo test_types[] = {
    {
        .name = TYPE_PET_IFACE,
        .parent = TYPE_INTERFACE,
        .abstract = true,
    }, {
        .name = TYPE_ANIMAL,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(Animal),
        .class_size = sizeof(AnimalClass),
        .class_init = animal_class_init,
        .instance_init = animal_init,
        .instance_finalize = animal_finalize,
        .abstract = true,
    }, {
        .name = TYPE_DOG,
        .parent = TYPE_ANIMAL,
        .class_init = dog_class_init,
        .instance_init = dog_init,
        .interfaces = pet_ifaces,
    }, {
        /* Inherits the dog's class_init result without its own. */
        .name = TYPE_PUPPY,
        .parent = TYPE_DOG,
        .instance_init = puppy_init,
    }, {
        .name = TYPE_CAT,
        .parent = TYPE_ANIMAL,
        .class_init = cat_class_init,
    },
};

DEFINE_TYPES(test_types)

static void test_casts(void)
{
    Object *dog = object_new(TYPE_DOG);
    Object *cat = object_new(TYPE_CAT);

    g_assert(object_dynamic_cast(dog, TYPE_ANIMAL) == dog);
    g_assert(object_dynamic_cast(dog, TYPE_OBJECT) == dog);
    g_assert(object_dynamic_cast(dog, TYPE_PET_IFACE) == dog);
    g_assert_null(object_dynamic_cast(cat, TYPE_PET_IFACE));
    g_assert_null(object_dynamic_cast(cat, TYPE_DOG));
    g_assert_null(object_dynamic_cast(dog, "no-such-type"));
    g_assert_cmpstr(object_get_typename(dog), ==, TYPE_DOG);
    g_assert(ANIMAL(dog) == (Animal *)dog);
    g_assert_nonnull(object_class_dynamic_cast(object_class_by_name(TYPE_PUPPY),
                                               TYPE_DOG));
    g_assert_null(object_class_dynamic_cast(object_class_by_name(TYPE_CAT),
                                            TYPE_DOG));
    g_assert_null(object_class_by_name("no-such-type"));
    object_unref(dog);
    object_unref(cat);
}

static void test_bad_cast_aborts(void)
{
    if (g_test_subprocess()) {
        Object *cat = object_new(TYPE_CAT);
        /* A cat is no dog: a programming error, so abort. */
        OBJECT_CHECK(Animal, cat, TYPE_DOG);
        return;
    }
    g_test_trap_subprocess(NULL, 0, 0);
    g_test_trap_assert_failed();
    g_test_trap_assert_stderr("*is not a 'test-dog'*");
}

static void test_class_inheritance(void)
{
    Object *puppy = object_new(TYPE_PUPPY);
    Object *cat = object_new(TYPE_CAT);

    g_assert_cmpstr(ANIMAL_GET_CLASS(puppy)->sound(ANIMAL(puppy)), ==,
                    "woof");
    g_assert_cmpstr(ANIMAL_GET_CLASS(cat)->sound(ANIMAL(cat)), ==, "meow");
    /* instance_init runs from the root type down. */
    g_assert_cmpstr(ANIMAL(puppy)->init_trace, ==, "ADP");
    g_assert_cmpint(ANIMAL(puppy)->legs, ==, 4);
    g_assert(object_class_get_parent(object_get_class(puppy)) ==
             object_class_by_name(TYPE_DOG));
    object_unref(puppy);
    object_unref(cat);
}

static void test_class_list(void)
{
    GSList *list = object_class_get_list(TYPE_ANIMAL, false);
    GSList *all = object_class_get_list(TYPE_ANIMAL, true);

    g_assert_cmpuint(g_slist_length(list), ==, 3);
    /* Sorted by name. */
    g_assert_cmpstr(object_class_get_name(list->data), ==, TYPE_CAT);
    g_assert_cmpstr(object_class_get_name(list->next->data), ==, TYPE_DOG);
    g_assert_cmpstr(object_class_get_name(list->next->next->data), ==,
                    TYPE_PUPPY);
    g_assert_cmpuint(g_slist_length(all), ==, 4);
    g_assert_true(object_class_is_abstract(object_class_by_name(TYPE_ANIMAL)));
    g_slist_free(list);
    g_slist_free(all);
}

static void test_refcount_finalize(void)
{
    Object *dog = object_new(TYPE_DOG);
    int before = finalized;

    object_ref(dog);
    object_unref(dog);
    g_assert_cmpint(finalized, ==, before);
    object_unref(dog);
    g_assert_cmpint(finalized, ==, before + 1);
}

static void test_properties(void)
{
    g_autoptr(Object) dog = object_new(TYPE_DOG);
    Error *err = NULL;
    g_autofree char *name = NULL;
    g_autoptr(JsonNode) node = NULL;

    g_assert_true(object_property_parse(dog, "happy", "on", &error_abort));
    g_assert_true(object_property_get_bool(dog, "happy", &error_abort));
    g_assert_true(object_property_set_bool(dog, "happy", false,
                                           &error_abort));
    g_assert_false(ANIMAL(dog)->happy);

    g_assert_true(object_property_set_str(dog, "name", "rex", &error_abort));
    name = object_property_get_str(dog, "name", &error_abort);
    g_assert_cmpstr(name, ==, "rex");
    g_assert_false(object_property_set_str(dog, "name", "", &err));
    g_assert_cmpstr(error_get_pretty(err), ==, "a name must not be empty");
    error_free(err);
    err = NULL;

    g_assert_true(object_property_parse(dog, "weight", "0x20", &error_abort));
    g_assert_cmpuint(object_property_get_uint(dog, "weight", &error_abort),
                     ==, 32);
    node = object_property_get_json(dog, "weight", &error_abort);
    g_assert_cmpint(json_node_get_int(node), ==, 32);
    g_assert_false(object_property_set_uint(dog, "weight", 1ULL << 32, &err));
    g_assert_nonnull(strstr(error_get_pretty(err), "uint32"));
    error_free(err);
    err = NULL;

    g_assert_false(object_property_parse(dog, "happy", "maybe", &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Parameter 'happy' expects 'on' or 'off'");
    error_free(err);
    err = NULL;

    g_assert_false(object_property_parse(dog, "legs", "3", &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Property 'test-dog.legs' is read-only");
    error_free(err);
    err = NULL;

    g_assert_false(object_property_parse(dog, "wings", "2", &err));
    g_assert_cmpstr(error_get_pretty(err), ==,
                    "Property 'test-dog.wings' not found");
    error_free(err);
    err = NULL;

    /* Every object reports its type. */
    g_autofree char *type = object_property_get_str(dog, "type",
                                                    &error_abort);
    g_assert_cmpstr(type, ==, TYPE_DOG);
}

static void test_property_iteration(void)
{
    g_autoptr(Object) dog = object_new(TYPE_DOG);
    g_autoptr(GString) names = g_string_new(NULL);
    ObjectPropertyIterator iter;
    ObjectProperty *prop;
    uint64_t counter = 7;

    object_property_add_uint64_ptr(dog, "counter", &counter);
    object_property_iter_init(&iter, dog);
    while ((prop = object_property_iter_next(&iter))) {
        g_string_append_printf(names, "%s:%s ", prop->name, prop->type);
    }
    /* Instance properties first, then the class chain from the leaf. */
    g_assert_cmpstr(names->str, ==,
                    "counter:uint64 happy:bool name:str weight:uint32 "
                    "legs:uint32 type:str ");
    counter = 9;
    g_assert_cmpuint(object_property_get_uint(dog, "counter", &error_abort),
                     ==, 9);
}

static void test_composition(void)
{
    Object *root = object_get_root();
    Object *zoo = container_get(root, "/zoo/north");
    Object *dog = object_new(TYPE_DOG);
    Object *cat = object_new(TYPE_CAT);
    Object *cat2 = object_new(TYPE_CAT);
    g_autofree char *path = NULL;
    g_autoptr(JsonNode) node = NULL;
    bool ambiguous;
    int before;

    g_assert(container_get(root, "/zoo/north") == zoo);
    object_property_add_child(zoo, "rex", dog);
    object_property_add_child(zoo, "tom", cat);
    object_property_add_child(container_get(root, "/zoo/south"), "tom",
                              cat2);
    object_unref(dog);
    object_unref(cat);
    object_unref(cat2);

    path = object_get_canonical_path(dog);
    g_assert_cmpstr(path, ==, "/zoo/north/rex");
    g_assert(object_resolve_path("/zoo/north/rex", NULL) == dog);
    g_assert_null(object_resolve_path("/zoo/north/nobody", NULL));
    g_assert(object_resolve_path("rex", &ambiguous) == dog);
    g_assert_false(ambiguous);
    g_assert(object_resolve_path("north/tom", &ambiguous) == cat);
    g_assert_null(object_resolve_path("tom", &ambiguous));
    g_assert_true(ambiguous);
    g_assert(object_resolve_path_type("/zoo/north/rex", TYPE_DOG, NULL) ==
             dog);
    g_assert_null(object_resolve_path_type("/zoo/north/rex", TYPE_CAT, NULL));

    node = object_property_get_json(zoo, "rex", &error_abort);
    g_assert_cmpstr(json_node_get_string(node), ==, "/zoo/north/rex");
    g_assert_cmpstr(object_property_find(zoo, "rex")->type, ==,
                    "child<test-dog>");

    /* The tree held the last references: unparenting finalizes. */
    before = finalized;
    object_unparent(dog);
    g_assert_cmpint(finalized, ==, before + 1);
    g_assert_null(object_resolve_path("/zoo/north/rex", NULL));
    object_unparent(container_get(root, "/zoo"));
    g_assert_cmpint(finalized, ==, before + 3);
    g_assert_null(object_resolve_path("/zoo", NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/qom/cast/subtypes-and-interfaces", test_casts);
    g_test_add_func("/qom/cast/wrong-type-aborts", test_bad_cast_aborts);
    g_test_add_func("/qom/class/inherits-and-overrides",
                    test_class_inheritance);
    g_test_add_func("/qom/class/list-sorted-abstract-filter",
                    test_class_list);
    g_test_add_func("/qom/ref/last-unref-finalizes", test_refcount_finalize);
    g_test_add_func("/qom/property/get-set-parse-errors", test_properties);
    g_test_add_func("/qom/property/iteration-order",
                    test_property_iteration);
    g_test_add_func("/qom/tree/paths-resolve-unparent", test_composition);
    return g_test_run();
}
