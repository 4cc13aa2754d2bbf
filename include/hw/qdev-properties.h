/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Typed device properties: a device declares a table of Property entries
 * (name, type, field offset in the instance struct, default, description).
 * They are set from strings ("-device drv,name=value"), printed for
 * "-device drv,help", and exposed as QOM properties for qom-get.
 */
#ifndef HW_QDEV_PROPERTIES_H
#define HW_QDEV_PROPERTIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <glib.h>
#include "qemu/typedefs.h"
#include "hw/qdev-core.h"
#include "qemu/option.h"

typedef struct PropertyInfo PropertyInfo;

struct Property {
    const char *name;
    const PropertyInfo *info;
    ptrdiff_t offset;
    union {
        int64_t i;
        uint64_t u;
    } defval;
    bool set_default;
    /* For enum properties: names indexed by value, NULL-terminated. */
    const char *const *enum_table;
    const char *description;
};

struct PropertyInfo {
    const char *type;           /* shown in help: "bool", "uint32", ... */
    const char *description;    /* what values look like */
    /* Parses str into the field; errp says what was expected. */
    bool (*parse)(const Property *prop, void *field, const char *str,
                  Error **errp);
    /* Formats the field; g_free the result. */
    char *(*print)(const Property *prop, const void *field);
    void (*set_default)(const Property *prop, void *field);
    void (*release)(const Property *prop, void *field);
    /* JSON value for qom-get; NULL means a string from print(). */
    JsonNode *(*get_json)(const Property *prop, const void *field);
};

typedef enum OnOffAuto {
    ON_OFF_AUTO_AUTO,
    ON_OFF_AUTO_ON,
    ON_OFF_AUTO_OFF,
    ON_OFF_AUTO__MAX,
} OnOffAuto;

extern const char *const OnOffAuto_lookup[];

/* A host PCI address "DDDD:BB:DD.F" (or "BB:DD.F", domain 0). */
typedef struct PCIHostDeviceAddress {
    unsigned int domain;
    unsigned int bus;
    unsigned int slot;
    unsigned int function;
} PCIHostDeviceAddress;

extern const PropertyInfo qdev_prop_bool;
extern const PropertyInfo qdev_prop_uint8;
extern const PropertyInfo qdev_prop_uint16;
extern const PropertyInfo qdev_prop_uint32;
extern const PropertyInfo qdev_prop_int32;
extern const PropertyInfo qdev_prop_uint64;
extern const PropertyInfo qdev_prop_int64;
extern const PropertyInfo qdev_prop_size;
extern const PropertyInfo qdev_prop_string;
extern const PropertyInfo qdev_prop_on_off_auto;
extern const PropertyInfo qdev_prop_enum;
extern const PropertyInfo qdev_prop_pci_devfn;
extern const PropertyInfo qdev_prop_pci_host_devaddr;

/* Compile-time check that the field has the expected C type. */
#define QDEV_PROP_CHECK_TYPE(State, field, type) \
    (offsetof(State, field) + \
     0 * sizeof(&((State *)0)->field == (type *)0))

#define DEFINE_PROP_SIGNED(_name, State, field, def, info_, type, ...) { \
        .name = (_name), .info = &(info_),                              \
        .offset = QDEV_PROP_CHECK_TYPE(State, field, type),             \
        .set_default = true, .defval.i = (type)(def), __VA_ARGS__ }
#define DEFINE_PROP_UNSIGNED(_name, State, field, def, info_, type, ...) { \
        .name = (_name), .info = &(info_),                              \
        .offset = QDEV_PROP_CHECK_TYPE(State, field, type),             \
        .set_default = true, .defval.u = (type)(def), __VA_ARGS__ }

/* The optional trailing argument is a description: .description = "..." */
#define DEFINE_PROP_BOOL(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_bool, bool, __VA_ARGS__)
#define DEFINE_PROP_UINT8(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_uint8, uint8_t, __VA_ARGS__)
#define DEFINE_PROP_UINT16(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_uint16, uint16_t, __VA_ARGS__)
#define DEFINE_PROP_UINT32(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_uint32, uint32_t, __VA_ARGS__)
#define DEFINE_PROP_INT32(n, S, f, d, ...) \
    DEFINE_PROP_SIGNED(n, S, f, d, qdev_prop_int32, int32_t, __VA_ARGS__)
#define DEFINE_PROP_UINT64(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_uint64, uint64_t, __VA_ARGS__)
#define DEFINE_PROP_INT64(n, S, f, d, ...) \
    DEFINE_PROP_SIGNED(n, S, f, d, qdev_prop_int64, int64_t, __VA_ARGS__)
/* Accepts 4k / 64M / 1G style suffixes. */
#define DEFINE_PROP_SIZE(n, S, f, d, ...) \
    DEFINE_PROP_UNSIGNED(n, S, f, d, qdev_prop_size, uint64_t, __VA_ARGS__)
/* A char * field, g_free'd on finalize; default NULL. */
#define DEFINE_PROP_STRING(_name, State, field, ...) {                  \
        .name = (_name), .info = &qdev_prop_string,                     \
        .offset = QDEV_PROP_CHECK_TYPE(State, field, char *),           \
        __VA_ARGS__ }
#define DEFINE_PROP_ON_OFF_AUTO(n, S, f, d, ...) \
    DEFINE_PROP_SIGNED(n, S, f, d, qdev_prop_on_off_auto, OnOffAuto, \
                       __VA_ARGS__)
/* An int-sized enum field; table holds the names, NULL-terminated. */
#define DEFINE_PROP_ENUM(_name, State, field, def, table, ...) {        \
        .name = (_name), .info = &qdev_prop_enum,                       \
        .offset = offsetof(State, field) +                              \
                  0 * sizeof(char[sizeof(((State *)0)->field) == sizeof(int) \
                                  ? 1 : -1]),                           \
        .set_default = true, .defval.i = (def), .enum_table = (table),  \
        __VA_ARGS__ }
/*
 * An int32_t devfn; -1 (the default) means "let the bus choose".
 * Accepts "slot.fn", "slot" (hex) or a number like 0x2 (= slot 2).
 */
#define DEFINE_PROP_PCI_DEVFN(n, S, f, d, ...) \
    DEFINE_PROP_SIGNED(n, S, f, d, qdev_prop_pci_devfn, int32_t, __VA_ARGS__)
#define DEFINE_PROP_PCI_HOST_DEVADDR(_name, State, field, ...) {        \
        .name = (_name), .info = &qdev_prop_pci_host_devaddr,           \
        .offset = QDEV_PROP_CHECK_TYPE(State, field, PCIHostDeviceAddress), \
        __VA_ARGS__ }
#define DEFINE_PROP_END_OF_LIST() { }

/* Sets a property from a string; errors name the property and value. */
bool qdev_prop_parse(DeviceState *dev, const char *name, const char *value,
                     Error **errp);
/* These abort on failure: for board code setting known-good values. */
void qdev_prop_set_bool(DeviceState *dev, const char *name, bool value);
void qdev_prop_set_uint32(DeviceState *dev, const char *name, uint32_t value);
void qdev_prop_set_int32(DeviceState *dev, const char *name, int32_t value);
void qdev_prop_set_uint64(DeviceState *dev, const char *name, uint64_t value);

/* The qdev Property of the device's class chain, or NULL. */
const Property *qdev_find_prop(DeviceState *dev, const char *name);
/*
 * A value of @kind (qemu/option.h) for property @name: JSON must bring the
 * type the property declares ("-device X,help"), text may spell any.
 */
bool qdev_prop_check_kind(DeviceState *dev, const char *name,
                          QemuOptKind kind, Error **errp);
const Property *qdev_class_find_prop(DeviceClass *dc, const char *name);
/*
 * "-device DRIVER,help": one line per property,
 * "  name=<type>  - description (default: X)".  False if no such driver.
 */
bool qdev_print_props(FILE *out, const char *driver, Error **errp);

/*
 * "-global DRIVER.PROP=VALUE": every device of DRIVER (or a subtype) gets
 * the value right after its defaults, before anything else sets it.
 */
void qdev_prop_register_global(const char *driver, const char *property,
                               const char *value);
/* Applies the registered globals to dev (called by the device type). */
void qdev_prop_apply_globals(DeviceState *dev);

/* Used by qdev.c: apply defaults, free strings. */
void qdev_prop_set_defaults(DeviceState *dev, const Property *props);
void qdev_prop_release_all(DeviceState *dev, const Property *props);

#endif
