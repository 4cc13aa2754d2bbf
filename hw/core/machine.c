/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The abstract machine type: the object at /machine, its generic
 * properties, machine lookup by short name, and init-done callbacks.
 */
#include "qemu/osdep.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "system/memory.h"
#include "qapi/error.h"
#include "system/hostmem.h"
#include "system/numa.h"
#include "qemu/error-report.h"
#include "trace.h"

MachineState *current_machine;

/* "pc-machine" -> "pc"; types without the suffix keep their name. */
char *machine_class_short_name(MachineClass *mc)
{
    const char *type = object_class_get_name(OBJECT_CLASS(mc));

    if (g_str_has_suffix(type, TYPE_MACHINE_SUFFIX)) {
        return g_strndup(type, strlen(type) - strlen(TYPE_MACHINE_SUFFIX));
    }
    return g_strdup(mc->name ? mc->name : type);
}

MachineClass *machine_find_class(const char *name)
{
    g_autofree char *type = g_strconcat(name, TYPE_MACHINE_SUFFIX, NULL);
    ObjectClass *oc = object_class_by_name(type);

    if (!oc) {
        oc = object_class_by_name(name);
    }
    if (!oc || !object_class_dynamic_cast(oc, TYPE_MACHINE) ||
        object_class_is_abstract(oc)) {
        return NULL;
    }
    return MACHINE_CLASS(oc);
}

MachineClass *machine_default_class(void)
{
    GSList *list = object_class_get_list(TYPE_MACHINE, false);
    MachineClass *found = NULL;

    for (GSList *l = list; l; l = l->next) {
        MachineClass *mc = MACHINE_CLASS(l->data);
        if (mc->is_default) {
            found = mc;
            break;
        }
    }
    g_slist_free(list);
    return found;
}

void machine_print_list(FILE *out)
{
    GSList *list = object_class_get_list(TYPE_MACHINE, false);

    fprintf(out, "Supported machines are:\n");
    for (GSList *l = list; l; l = l->next) {
        MachineClass *mc = MACHINE_CLASS(l->data);
        g_autofree char *name = machine_class_short_name(mc);

        fprintf(out, "%-20s %s%s\n", name, mc->desc ? mc->desc : "",
                mc->is_default ? " (default)" : "");
    }
    g_slist_free(list);
}

static gint machine_prop_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const ObjectProperty *)a)->name,
                  ((const ObjectProperty *)b)->name);
}

bool machine_print_props(FILE *out, const char *name, Error **errp)
{
    MachineClass *mc = machine_find_class(name);
    ObjectPropertyIterator iter;
    ObjectProperty *prop;
    GList *props = NULL;

    if (!mc) {
        error_setg(errp, "unsupported machine type '%s'", name);
        error_append_hint(errp, "Use -machine help to list supported "
                          "machines\n");
        return false;
    }
    object_class_property_iter_init(&iter, OBJECT_CLASS(mc));
    while ((prop = object_property_iter_next(&iter))) {
        /* Only what the command line can set. */
        if (prop->set) {
            props = g_list_insert_sorted(props, prop, machine_prop_cmp);
        }
    }
    fprintf(out, "%s options:\n", object_class_get_name(OBJECT_CLASS(mc)));
    for (GList *l = props; l; l = l->next) {
        ObjectProperty *p = l->data;
        g_autofree char *head = g_strdup_printf("%s=<%s>", p->name, p->type);

        if (p->description) {
            fprintf(out, "  %-24s - %s\n", head, p->description);
        } else {
            fprintf(out, "  %s\n", head);
        }
    }
    g_list_free(props);
    return true;
}

bool machine_resolve_memory(MachineState *ms, Error **errp)
{
    HostMemoryBackend *be;
    uint64_t size;

    if (!ms->memory_backend) {
        return true;
    }
    if (numa_state()) {
        error_setg(errp, "'-machine memory-backend' and '-numa memdev' "
                   "properties are mutually exclusive");
        return false;
    }
    be = host_memory_backend_find(ms->memory_backend, errp);
    if (!be) {
        return false;
    }
    size = host_memory_backend_size(be);
    if (ms->ram_size_set && size != ms->ram_size) {
        error_setg(errp, "Machine memory size does not match the size of "
                   "the memory backend");
        return false;
    }
    ms->ram_size = size;
    return true;
}

/* RAM made of the -numa nodes' back-ends, one after the other. */
static bool machine_alloc_numa_ram(MachineState *ms, const NumaState *ns,
                                   const char *name, Error **errp)
{
    MemoryRegion *mr = g_new0(MemoryRegion, 1);
    uint64_t off = 0;

    memory_region_init(mr, OBJECT(ms), name, ms->ram_size);
    for (unsigned i = 0; i < ns->num_nodes; i++) {
        if (!ns->nodes[i].memdev) {
            continue;
        }
        memory_region_add_subregion(
            mr, off, host_memory_backend_get_memory(ns->nodes[i].memdev));
        off += ns->nodes[i].size;
    }
    ms->ram = mr;
    ms->ram_owned = true;
    return true;
}

bool machine_alloc_ram(MachineState *ms, const char *name, Error **errp)
{
    const NumaState *ns = numa_state();
    HostMemoryBackend *be = NULL;
    Error *err = NULL;
    MemoryRegion *mr;

    if (ms->memory_backend) {
        be = host_memory_backend_find(ms->memory_backend, errp);
        if (!be || !host_memory_backend_claim(be, "the machine's RAM",
                                              errp)) {
            return false;
        }
    } else if (ns) {
        if (!machine_alloc_numa_ram(ms, ns, name, errp)) {
            return false;
        }
        goto done;
    } else {
        be = host_memory_implicit_backend(ms->ram_size, &err);
        if (err) {
            error_propagate(errp, err);
            return false;
        }
    }
    if (be) {
        ms->ram = host_memory_backend_get_memory(be);
        ms->ram_owned = false;
        goto done;
    }
    mr = g_new0(MemoryRegion, 1);
    if (!memory_region_init_ram(mr, OBJECT(ms), name, ms->ram_size, errp)) {
        g_free(mr);
        return false;
    }
    ms->ram = mr;
    ms->ram_owned = true;
    if (!ms->dump_guest_core) {
        /* A guest's memory stays out of Conduit's core dumps. */
        if (madvise(memory_region_get_ram_ptr(mr), ms->ram_size,
                    MADV_DONTDUMP)) {
            warn_report("-machine dump-guest-core=off: madvise failed: %s",
                        strerror(errno));
        }
    }
done:
    trace_machine_init(object_get_typename(OBJECT(ms)), ms->ram_size);
    return true;
}

typedef struct InitDoneEntry {
    MachineInitDoneFn *fn;
    void *opaque;
} InitDoneEntry;

static GList *init_done_list;
static bool init_done;

void qemu_run_machine_init_done(void)
{
    init_done = true;
    for (GList *l = init_done_list; l; l = l->next) {
        InitDoneEntry *e = l->data;
        e->fn(e->opaque);
    }
    g_list_free_full(init_done_list, g_free);
    init_done_list = NULL;
}

/* ---- generic machine properties (-machine key=val) ---- */

#define MACHINE_STR_PROP(field, propname)                               \
    static char *machine_get_##field(Object *obj, Error **errp)         \
    {                                                                   \
        return g_strdup(MACHINE(obj)->field);                           \
    }                                                                   \
    static bool machine_set_##field(Object *obj, const char *value,     \
                                    Error **errp)                       \
    {                                                                   \
        MachineState *ms = MACHINE(obj);                                \
        g_free(ms->field);                                              \
        ms->field = g_strdup(value);                                    \
        return true;                                                    \
    }

MACHINE_STR_PROP(kernel_filename, "kernel")
MACHINE_STR_PROP(initrd_filename, "initrd")
MACHINE_STR_PROP(kernel_cmdline, "append")
MACHINE_STR_PROP(firmware, "firmware")
MACHINE_STR_PROP(memory_backend, "memory-backend")

static bool machine_get_usb(Object *obj, Error **errp)
{
    return MACHINE(obj)->usb;
}

/* The machine creates its USB controller (pc: piix3-usb-uhci at 1.2). */
static bool machine_set_usb(Object *obj, bool value, Error **errp)
{
    MACHINE(obj)->usb = value;
    return true;
}

static bool machine_get_dump_guest_core(Object *obj, Error **errp)
{
    return MACHINE(obj)->dump_guest_core;
}

static bool machine_set_dump_guest_core(Object *obj, bool value,
                                        Error **errp)
{
    MachineState *ms = MACHINE(obj);

    if (ms->ram) {
        error_setg(errp, "dump-guest-core can only be set before the "
                   "machine is built");
        return false;
    }
    ms->dump_guest_core = value;
    return true;
}

/* acpi=on|off|auto, as QEMU spells it; auto means on. */
static char *machine_get_acpi(Object *obj, Error **errp)
{
    return g_strdup(MACHINE(obj)->acpi ? "on" : "off");
}

static bool machine_set_acpi(Object *obj, const char *value, Error **errp)
{
    MachineState *ms = MACHINE(obj);

    if (!strcmp(value, "on") || !strcmp(value, "auto")) {
        ms->acpi = true;
    } else if (!strcmp(value, "off")) {
        ms->acpi = false;
    } else {
        error_setg(errp, "Parameter 'acpi' does not accept value '%s'",
                   value);
        error_append_hint(errp, "Use on, off or auto.\n");
        return false;
    }
    return true;
}

/* Read-only views of MachineState.smp, for qom-get on /machine. */
static const struct {
    const char *name;
    size_t offset;
} machine_smp_props[] = {
    { "smp-cpus", offsetof(MachineState, smp.cpus) },
    { "smp-max-cpus", offsetof(MachineState, smp.max_cpus) },
    { "smp-sockets", offsetof(MachineState, smp.sockets) },
    { "smp-dies", offsetof(MachineState, smp.dies) },
    { "smp-cores", offsetof(MachineState, smp.cores) },
    { "smp-threads", offsetof(MachineState, smp.threads) },
};

static void machine_class_init(ObjectClass *oc, void *data)
{
    MachineClass *mc = MACHINE_CLASS(oc);

    mc->default_ram_size = 128 * 1024 * 1024;
    mc->max_cpus = 1;
    object_class_property_add_str(oc, "kernel", machine_get_kernel_filename,
                                  machine_set_kernel_filename);
    object_class_property_add_str(oc, "initrd", machine_get_initrd_filename,
                                  machine_set_initrd_filename);
    object_class_property_add_str(oc, "append", machine_get_kernel_cmdline,
                                  machine_set_kernel_cmdline);
    object_class_property_add_str(oc, "firmware", machine_get_firmware,
                                  machine_set_firmware);
    object_class_property_add_str(oc, "acpi", machine_get_acpi,
                                  machine_set_acpi);
    object_class_property_add_str(oc, "memory-backend",
                                  machine_get_memory_backend,
                                  machine_set_memory_backend);
    object_class_property_add_uint(oc, "ram-size",
                                   offsetof(MachineState, ram_size), 8,
                                   false);
    object_class_property_add_bool(oc, "usb", machine_get_usb,
                                   machine_set_usb);
    object_class_property_add_bool(oc, "dump-guest-core",
                                   machine_get_dump_guest_core,
                                   machine_set_dump_guest_core);
    /* The resolved -smp topology, read-only (no CPU hot-plug). */
    for (size_t i = 0; i < ARRAY_SIZE(machine_smp_props); i++) {
        object_class_property_add_uint(oc, machine_smp_props[i].name,
                                       machine_smp_props[i].offset, 4, false);
    }
}

static void machine_initfn(Object *obj)
{
    MachineState *ms = MACHINE(obj);

    ms->ram_size = MACHINE_GET_CLASS(obj)->default_ram_size;
    ms->dump_guest_core = true;
    ms->acpi = true;
    ms->smp = (CpuTopology) {
        .cpus = 1, .max_cpus = 1, .sockets = 1, .dies = 1, .cores = 1,
        .threads = 1,
    };
}

static void machine_finalize(Object *obj)
{
    MachineState *ms = MACHINE(obj);

    if (ms->ram && ms->ram_owned) {
        memory_region_finalize(ms->ram);
        g_free(ms->ram);
    }
    g_free(ms->memory_backend);
    g_free(ms->kernel_filename);
    g_free(ms->initrd_filename);
    g_free(ms->kernel_cmdline);
    g_free(ms->firmware);
    if (current_machine == ms) {
        current_machine = NULL;
    }
}

static const TypeInfo machine_types[] = {
    {
        .name = TYPE_MACHINE,
        .parent = TYPE_OBJECT,
        .instance_size = sizeof(MachineState),
        .class_size = sizeof(MachineClass),
        .class_init = machine_class_init,
        .instance_init = machine_initfn,
        .instance_finalize = machine_finalize,
        .abstract = true,
    },
};

DEFINE_TYPES(machine_types)
