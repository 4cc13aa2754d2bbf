/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * query-cpu-model-expansion for x86, and what query-cpu-definitions
 * says a model lacks on this host: both from the CPUID a vCPU would
 * really get (accel/kvm/kvm-x86.c), so libvirt's host-model is built
 * from what the guest will see.
 */
#include "qemu/osdep.h"
#include "hw/i386/x86-cpu.h"
#include "monitor/monitor.h"
#include "qapi/error.h"

typedef struct X86CpuView {
    GArray *cpuid;              /* X86CpuidEntry */
} X86CpuView;

static const X86CpuidEntry *x86_view_leaf(const X86CpuView *v,
                                          uint32_t function, uint32_t index)
{
    for (guint i = 0; i < v->cpuid->len; i++) {
        const X86CpuidEntry *e = &g_array_index(v->cpuid, X86CpuidEntry, i);

        if (e->function == function &&
            (e->index == index || (function != 7 && function != 0xd &&
                                   function != 0xb && function != 4 &&
                                   function != 0x14))) {
            return e;
        }
    }
    return NULL;
}

typedef struct FeatureWalk {
    const X86CpuView *view;
    JsonObject *props;
    const char *const *only;    /* report just these (NULL: all) */
    GPtrArray *missing;
} FeatureWalk;

static bool x86_view_has(const X86CpuView *v, const X86FeatureBit *f)
{
    const X86CpuidEntry *e = x86_view_leaf(v, f->leaf, f->subleaf);

    return e && (e->regs[f->reg] & (1u << f->bit));
}

static void x86_expand_one(const X86FeatureBit *f, void *opaque)
{
    FeatureWalk *w = opaque;

    json_object_set_boolean_member(w->props, f->name,
                                   x86_view_has(w->view, f));
}

static void x86_missing_one(const X86FeatureBit *f, void *opaque)
{
    FeatureWalk *w = opaque;

    for (const char *const *n = w->only; *n; n++) {
        if (!strcmp(*n, f->name) && !x86_view_has(w->view, f)) {
            g_ptr_array_add(w->missing, g_strdup(f->name));
        }
    }
}

static bool x86_model_known(const char *name)
{
    return !strcmp(name, "host") || !strcmp(name, "max") ||
           x86_cpu_model_features(name);
}

/* Leaf 1's signature, leaf 0's vendor and the brand string. */
static void x86_expand_ids(const X86CpuView *v, JsonObject *props)
{
    const X86CpuidEntry *l0 = x86_view_leaf(v, 0, 0);
    const X86CpuidEntry *l1 = x86_view_leaf(v, 1, 0);
    char vendor[13] = "", brand[49] = "";

    if (l0) {
        memcpy(vendor, &l0->regs[1], 4);
        memcpy(vendor + 4, &l0->regs[3], 4);
        memcpy(vendor + 8, &l0->regs[2], 4);
        json_object_set_string_member(props, "vendor", vendor);
    }
    if (l1) {
        uint32_t eax = l1->regs[0];
        unsigned family = (eax >> 8) & 0xf, model = (eax >> 4) & 0xf;

        if (family == 0xf) {
            family += (eax >> 20) & 0xff;
        }
        if (family >= 6) {
            model |= ((eax >> 16) & 0xf) << 4;
        }
        json_object_set_int_member(props, "family", family);
        json_object_set_int_member(props, "model", model);
        json_object_set_int_member(props, "stepping", eax & 0xf);
    }
    for (unsigned i = 0; i < 3; i++) {
        const X86CpuidEntry *e = x86_view_leaf(v, 0x80000002 + i, 0);

        if (e) {
            memcpy(brand + 16 * i, e->regs, 16);
        }
    }
    if (brand[0]) {
        json_object_set_string_member(props, "model-id",
                                      g_strstrip(brand));
    }
}

static void qmp_query_cpu_model_expansion(JsonObject *args, JsonNode **ret,
                                          Error **errp)
{
    const char *type = json_object_get_string_member(args, "type");
    JsonObject *model = json_object_get_object_member(args, "model");
    const char *name;
    X86CPUConfig cfg;
    g_autoptr(GString) opts = g_string_new(NULL);
    X86CpuView view;
    JsonObject *out, *props;
    FeatureWalk w;

    if (strcmp(type, "static") && strcmp(type, "full")) {
        error_setg(errp, "The requested expansion type is not supported");
        return;
    }
    if (!model || !json_object_has_member(model, "name")) {
        error_setg(errp, "Parameter 'model.name' is missing");
        return;
    }
    name = json_object_get_string_member(model, "name");
    if (!name || !x86_model_known(name)) {
        error_setg(errp, "The CPU type '%s' is not a recognized CPU model",
                   name ? name : "");
        return;
    }
    if (json_object_has_member(model, "props")) {
        JsonNode *pn = json_object_get_member(model, "props");
        g_autoptr(GList) keys = NULL;

        if (!JSON_NODE_HOLDS_OBJECT(pn)) {
            error_setg(errp, "Parameter 'model.props' expects an object");
            return;
        }
        keys = json_object_get_members(json_node_get_object(pn));
        for (GList *l = keys; l; l = l->next) {
            JsonNode *v = json_object_get_member(json_node_get_object(pn),
                                                 l->data);

            if (!JSON_NODE_HOLDS_VALUE(v) ||
                json_node_get_value_type(v) != G_TYPE_BOOLEAN) {
                error_setg(errp, "Parameter 'model.props.%s' expects a "
                           "boolean", (const char *)l->data);
                return;
            }
            g_string_append_printf(opts, "%s%s=%s", opts->len ? "," : "",
                                   (const char *)l->data,
                                   json_node_get_boolean(v) ? "on" : "off");
        }
    }
    x86_cpu_config_init(&cfg);
    if (!x86_cpu_parse_options(&cfg, name, opts->str, errp)) {
        return;
    }
    view.cpuid = kvm_x86_guest_cpuid(&cfg, errp);
    if (!view.cpuid) {
        return;
    }
    out = json_object_new();
    props = json_object_new();
    w = (FeatureWalk) { .view = &view, .props = props };
    x86_cpu_feature_foreach(x86_expand_one, &w);
    x86_expand_ids(&view, props);
    if (!strcmp(type, "full")) {
        json_object_set_boolean_member(props, "kvm", cfg.kvm);
        json_object_set_boolean_member(props, "pmu", cfg.pmu);
        json_object_set_boolean_member(props, "migratable", cfg.migratable);
    }
    /* Static: everything spelt out on the base model, as QEMU does. */
    json_object_set_string_member(out, "name",
                                  strcmp(type, "static") ? name : "base");
    json_object_set_object_member(out, "props", props);
    g_array_free(view.cpuid, true);
    *ret = json_node_new(JSON_NODE_OBJECT);
    json_node_take_object(*ret, json_object_new());
    json_object_set_object_member(json_node_get_object(*ret), "model", out);
}

GPtrArray *x86_cpu_unavailable_features(const char *model)
{
    const char *const *features = x86_cpu_model_features(model);
    X86CPUConfig cfg;
    X86CpuView view;
    FeatureWalk w;
    GPtrArray *missing;

    if (!features) {
        return NULL;            /* host, max: whatever the host has */
    }
    x86_cpu_config_init(&cfg);
    view.cpuid = kvm_x86_guest_cpuid(&cfg, NULL);
    if (!view.cpuid) {
        return NULL;
    }
    missing = g_ptr_array_new_with_free_func(g_free);
    w = (FeatureWalk) { .view = &view, .only = features, .missing = missing };
    x86_cpu_feature_foreach(x86_missing_one, &w);
    g_array_free(view.cpuid, true);
    return missing;
}

bool x86_cpu_migration_safe(const char *model)
{
    return x86_cpu_model_features(model) != NULL;
}

static void __attribute__((constructor)) x86_cpu_qmp_register(void)
{
    qmp_register_command_args("query-cpu-model-expansion",
                              qmp_query_cpu_model_expansion,
                              "type:s model:o", 0);
}
