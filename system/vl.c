/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command line: parse every option first, then build the system in a
 * fixed order (chardevs and monitors, accelerator, board, -device, reset,
 * start) and run the main loop.
 *
 * Start-up errors are reported with the option that caused them
 * ("conduit-system-x86_64: -device foo: ...") and exit with status 1.
 */
#include "qemu/osdep.h"
#include "qemu/datadir.h"
#include "system/system.h"
#include "migration/misc.h"
#include "system/accel.h"
#include "system/runstate.h"
#include "system/qtest.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/qdev-properties.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/option.h"
#include "qemu/trace.h"
#include "qemu/main-loop.h"
#include "chardev/char.h"
#include "block/block.h"
#include "net/net.h"
#include "monitor/monitor.h"
#include "system/fdset.h"
#include "system/user-creatable.h"
#include "system/vl-compat.h"
#include "hw/firmware/smbios.h"
#include "system/rtc.h"
#include "system/numa.h"
#include "system/hostmem.h"

const char *qemu_name;
bool autostart = true;

static Chardev *serial_hds[MAX_SERIAL_PORTS];

Chardev *serial_hd(int i)
{
    return i >= 0 && i < MAX_SERIAL_PORTS ? serial_hds[i] : NULL;
}

/* One option occurrence, kept with its text for error locations. */
typedef struct CmdlineOpt {
    const char *name;           /* as typed, e.g. "-device" */
    const char *arg;
    QemuOpts *opts;             /* parsed form, when the option has one */
} CmdlineOpt;

typedef enum OptIndex {
    OPT_MACHINE, OPT_M, OPT_MEMORY, OPT_ACCEL, OPT_ENABLE_KVM, OPT_DEVICE,
    OPT_QMP, OPT_CHARDEV, OPT_MON, OPT_QTEST, OPT_QTEST_LOG, OPT_SERIAL,
    OPT_NOGRAPHIC, OPT_DISPLAY, OPT_VGA, OPT_NAME, OPT_S, OPT_DAEMONIZE,
    OPT_SMP, OPT_KERNEL, OPT_INITRD, OPT_APPEND, OPT_NODEFAULTS,
    OPT_NO_SHUTDOWN, OPT_NO_REBOOT, OPT_NO_USER_CONFIG, OPT_TRACE, OPT_LOGFILE,
    OPT_LOG, OPT_VERSION, OPT_HELP, OPT_H, OPT_PIDFILE, OPT_GLOBAL,
    OPT_OBJECT, OPT_OVERCOMMIT, OPT_UUID, OPT_RTC, OPT_BOOT, OPT_ADD_FD,
    OPT_AUDIODEV, OPT_MSG, OPT_CPU, OPT_SANDBOX,
    OPT_SMBIOS, OPT_NO_HPET, OPT_NUMA, OPT_MEM_PATH, OPT_MEM_PREALLOC,
    OPT_NO_ACPI,
    OPT_USB, OPT_USBDEVICE,
    OPT_BLOCKDEV, OPT_DRIVE, OPT_NETDEV,
    OPT_BIOS, OPT_DATADIR, OPT_ACTION, OPT_INCOMING,
} OptIndex;

typedef struct OptDef {
    const char *name;
    OptIndex index;
    bool has_arg;
    const char *args;           /* for --help */
    const char *help;
    /*
     * The keys of a KEY=VALUE option, "name:type ...", for
     * query-command-line-options (types as QEMU names them: string,
     * boolean, number, size).
     */
    const char *params;
} OptDef;

static const OptDef opt_defs[] = {
    { "machine", OPT_MACHINE, true, "TYPE[,prop=value...]",
      "select the machine (-machine help lists them) and set its properties" },
    { "M", OPT_M, true, "TYPE[,prop=value...]", "same as -machine" },
    { "m", OPT_MEMORY, true, "[size=]SIZE",
      "guest RAM size (default unit MiB; suffixes k, M, G, T)",
      "size:size slots:number maxmem:size" },
    { "accel", OPT_ACCEL, true, "NAME", "accelerator: kvm or qtest "
      "(-accel help lists them; repeat to give fallbacks)",
      "accel:string" },
    { "enable-kvm", OPT_ENABLE_KVM, false, "", "same as -accel kvm" },
    { "device", OPT_DEVICE, true, "DRIVER[,prop=value...] | JSON",
      "add a device (-device help lists them, -device DRIVER,help its "
      "properties)" },
    { "qmp", OPT_QMP, true, "CHARDEV-SPEC",
      "QMP monitor on unix:PATH[,server=on,wait=off], stdio, fd=N..." },
    { "global", OPT_GLOBAL, true, "DRIVER.PROP=VALUE",
      "default a property of every DRIVER device" },
    { "chardev", OPT_CHARDEV, true, "BACKEND,id=ID[,...]",
      "create a character device",
      "backend:string path:string server:boolean wait:boolean fd:string "
      "append:boolean" },
    { "blockdev", OPT_BLOCKDEV, true,
      "driver=file|raw,node-name=N[,filename=F][,file=N][,read-only=on]"
      "[,cache.direct=on] | JSON", "define a block node" },
    { "drive", OPT_DRIVE, true,
      "file=F,if=none,id=ID[,format=raw][,readonly=on][,cache=none]",
      "define a drive (a raw image) for -device ...,drive=ID" },
    { "netdev", OPT_NETDEV, true,
      "tap,id=ID[,ifname=N|fd=N][,script=no,downscript=no][,vhost=on|off] | "
      "socket,id=ID,fd=N", "define a network backend" },
    { "mon", OPT_MON, true, "chardev=ID[,mode=control]",
      "QMP monitor on an existing chardev",
      "chardev:string mode:string pretty:boolean" },
    { "qtest", OPT_QTEST, true, "CHARDEV-SPEC",
      "qtest protocol server (implies -accel qtest)" },
    { "qtest-log", OPT_QTEST_LOG, true, "FILE", "log qtest traffic to FILE" },
    { "serial", OPT_SERIAL, true, "CHARDEV-SPEC",
      "back the next serial port with a chardev (none: no port)" },
    { "nographic", OPT_NOGRAPHIC, false, "",
      "no display; first serial port on stdio" },
    { "display", OPT_DISPLAY, true, "none", "display type (only none)" },
    { "vga", OPT_VGA, true, "none", "VGA card (only none)" },
    { "name", OPT_NAME, true, "[guest=]NAME", "name of the guest",
      "guest:string process:string debug-threads:boolean" },
    { "S", OPT_S, false, "", "do not start the guest (use QMP cont)" },
    { "daemonize", OPT_DAEMONIZE, false, "",
      "run in the background once started (the parent exits 0 when the "
      "monitors listen and the pid file is written, 1 on error)" },
    { "smp", OPT_SMP, true,
      "[cpus=]N[,maxcpus=,sockets=,dies=,cores=,threads=]",
      "number of vCPUs and their topology",
      "cpus:number maxcpus:number sockets:number dies:number "
      "clusters:number books:number drawers:number cores:number "
      "threads:number" },
    { "kernel", OPT_KERNEL, true, "FILE", "kernel image (Linux or PVH ELF)" },
    { "bios", OPT_BIOS, true, "FILE",
      "firmware image (default: bios-256k.bin, Debian's SeaBIOS)" },
    { "L", OPT_DATADIR, true, "DIR",
      "search DIR for firmware first (-L help lists the directories)" },
    { "action", OPT_ACTION, true, "reboot=reset|shutdown[,shutdown=poweroff]",
      "what a guest reboot or shutdown does",
      "reboot:string shutdown:string panic:string watchdog:string" },
    { "initrd", OPT_INITRD, true, "FILE", "initial ram disk" },
    { "append", OPT_APPEND, true, "CMDLINE", "kernel command line" },
    { "nodefaults", OPT_NODEFAULTS, false, "", "create no default devices" },
    { "no-shutdown", OPT_NO_SHUTDOWN, false, "",
      "stop (do not exit) when the guest shuts down" },
    { "no-reboot", OPT_NO_REBOOT, false, "", "exit instead of rebooting" },
    { "no-acpi", OPT_NO_ACPI, false, "",
      "no ACPI tables (same as -machine acpi=off)" },
    { "no-hpet", OPT_NO_HPET, false, "",
      "no HPET (same as -machine hpet=off; the pc machine has none)" },
    { "no-user-config", OPT_NO_USER_CONFIG, false, "",
      "accepted for compatibility (there are no config files)" },
    { "trace", OPT_TRACE, true, "[enable=]PATTERN|events=FILE|file=FILE",
      "enable trace events (-trace help lists them)",
      "enable:string events:string file:string" },
    { "D", OPT_LOGFILE, true, "FILE", "send trace and log output to FILE" },
    { "d", OPT_LOG, true, "ITEM[,...]", "enable logging (guest_errors)" },
    { "pidfile", OPT_PIDFILE, true, "FILE", "write the process id to FILE" },
    { "object", OPT_OBJECT, true, "TYPE,id=ID[,prop=value...] | JSON",
      "create an object (types: secret)" },
    { "overcommit", OPT_OVERCOMMIT, true, "mem-lock=on|off[,cpu-pm=off]",
      "mem-lock=on locks all of Conduit's memory (mlockall)",
      "mem-lock:boolean cpu-pm:boolean" },
    { "uuid", OPT_UUID, true, "UUID", "the guest's UUID (query-uuid)" },
    { "rtc", OPT_RTC, true,
      "[base=utc|localtime|DATE][,clock=host|rt|vm][,driftfix=none|slew]",
      "real-time clock: where it starts, which host clock drives it, and "
      "whether lost periodic ticks are caught up (slew)",
      "base:string clock:string driftfix:string" },
    { "boot", OPT_BOOT, true, "[strict=on|off][,menu=off]",
      "accepted for compatibility: Conduit boots only -kernel",
      "strict:boolean menu:boolean" },
    { "add-fd", OPT_ADD_FD, true, "fd=M,set=N[,opaque=TEXT]",
      "put inherited fd M in set N, to open as /dev/fdset/N",
      "fd:number set:number opaque:string" },
    { "audiodev", OPT_AUDIODEV, true, "none,id=ID | JSON",
      "audio back-end (only 'none': Conduit has no sound devices)" },
    { "msg", OPT_MSG, true, "timestamp=on|off",
      "prefix error messages with the time",
      "timestamp:boolean guest-name:boolean" },
    { "cpu", OPT_CPU, true, "MODEL",
      "vCPU model (-cpu help lists them; no feature changes)" },
    { "sandbox", OPT_SANDBOX, true, "off",
      "only 'off': Conduit is built without a seccomp sandbox" },
    { "incoming", OPT_INCOMING, true,
      "tcp:HOST:PORT | unix:PATH | fd:N | exec:CMD | file:PATH | defer",
      "wait for the VM's state from a migration (defer: given later with "
      "QMP migrate-incoming)" },
    { "smbios", OPT_SMBIOS, true,
      "file=BINARY | type=0|1|2|3|4|11|17[,field=value...]",
      "SMBIOS tables: load structures from a file, or set the fields of "
      "one of Conduit's (type=1,serial=...,uuid=...)" },
    { "numa", OPT_NUMA, true,
      "node[,nodeid=N][,cpus=A[-B]][,memdev=ID] | dist,src=N,dst=M,val=D",
      "a guest NUMA node (its vCPUs and memory back-end) or the distance "
      "between two (ACPI SRAT and SLIT)" },
    { "mem-path", OPT_MEM_PATH, true, "PATH",
      "guest RAM from a file in PATH (a hugetlbfs mount for huge pages)" },
    { "mem-prealloc", OPT_MEM_PREALLOC, false, "",
      "allocate every page of guest RAM at start (fails if the host has "
      "too few)" },
    { "usb", OPT_USB, false, "",
      "the machine's USB controller (same as -machine usb=on)" },
    { "usbdevice", OPT_USBDEVICE, true, "tablet|mouse|keyboard",
      "a USB HID device (same as -usb -device usb-tablet, ...)" },
    { "version", OPT_VERSION, false, "", "print the version and exit" },
    { "help", OPT_HELP, false, "", "print this help and exit" },
    { "h", OPT_H, false, "", "same as -help" },
};

/* Everything the command line asked for, gathered before building. */
typedef struct VlConfig {
    GPtrArray *machine_opts;    /* QemuOpts *, in order */
    GPtrArray *machine_args;    /* the text of each, for error locations */
    const char *memory_arg;
    uint64_t ram_size;
    bool ram_size_set;
    GPtrArray *accels;          /* char *, in preference order */
    /* Beside each of accels: its -accel properties, "name", "value", ... */
    GPtrArray *accel_props;     /* GPtrArray * of char *, or NULL */
    GArray *devices;            /* CmdlineOpt */
    GArray *chardevs;           /* CmdlineOpt */
    GArray *backends;           /* CmdlineOpt: -blockdev, -drive, -netdev */
    GArray *mons;               /* CmdlineOpt */
    GPtrArray *qmp_specs;       /* char * */
    GPtrArray *serial_specs;    /* char * */
    const char *qtest_spec;
    const char *qtest_log;
    bool nographic;
    bool nodefaults;
    bool no_acpi;
    bool usb;                   /* -usb / -usbdevice */
    SmpConfig smp;
    const char *smp_arg;        /* the last -smp, for error locations */
    const char *kernel;
    const char *initrd;
    const char *bios;
    int pflash_units;           /* -drive if=pflash seen so far */
    const char *append;
    const char *pidfile;
    const char *machine_loc_name;   /* the -machine that named the type */
    const char *machine_loc_arg;
    GArray *objects;            /* CmdlineOpt */
    bool daemonize;
    bool mem_lock;
    const char *incoming;
} VlConfig;


static void print_version(void)
{
    printf("Conduit emulator version %s (QEMU-compatible 8.2.0)\n",
           CONDUIT_VERSION);
}

static void print_help(const char *progname)
{
    print_version();
    printf("usage: %s [options]\n\n", progname);
    for (size_t i = 0; i < ARRAY_SIZE(opt_defs); i++) {
        g_autofree char *head = g_strdup_printf("-%s %s", opt_defs[i].name,
                                                opt_defs[i].args);
        printf("%-46s %s\n", head, opt_defs[i].help);
    }
    printf("\nOptions may also be written with two leading dashes.\n");
}

static const OptDef *lookup_opt(const char *arg)
{
    const char *name = arg + 1;

    if (*name == '-') {
        name++;
    }
    for (size_t i = 0; i < ARRAY_SIZE(opt_defs); i++) {
        if (!strcmp(opt_defs[i].name, name)) {
            return &opt_defs[i];
        }
    }
    return NULL;
}

/* Reports err against the current location and exits: start-up only. */
static void QEMU_NORETURN fatal_err(Error *err)
{
    error_report_err(err);
    exit(1);
}

static QemuOpts *parse_or_die(const char *arg, const char *implied)
{
    Error *err = NULL;
    QemuOpts *opts = qemu_opts_parse(arg, implied, &err);

    if (!opts) {
        fatal_err(err);
    }
    return opts;
}

/* Only the listed keys may appear (with an implied key counted as one). */
static void check_keys(QemuOpts *opts, const char *const *allowed)
{
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        bool ok = false;

        for (const char *const *a = allowed; *a; a++) {
            if (!strcmp(key, *a)) {
                ok = true;
                break;
            }
        }
        if (!ok) {
            error_report("Invalid parameter '%s'", key);
            exit(1);
        }
    }
    if (qemu_opts_id(opts)) {
        error_report("Invalid parameter 'id'");
        exit(1);
    }
}

static void parse_memory(VlConfig *cfg, const char *arg)
{
    static const char *const keys[] = { "size", "slots", "maxmem", NULL };
    g_autoptr(QemuOpts) opts = parse_or_die(arg, "size");
    const char *size = qemu_opt_get(opts, "size");
    Error *err = NULL;

    check_keys(opts, keys);
    if (size) {
        if (!qemu_strtosz_MiB(size, &cfg->ram_size, &err)) {
            error_prepend(&err, "Invalid RAM size: ");
            fatal_err(err);
        }
        if (!cfg->ram_size) {
            error_report("RAM size must not be zero");
            exit(1);
        }
        cfg->ram_size_set = true;
    }
    if (!machine_memory_check(opts, size ? cfg->ram_size : 0, &err)) {
        fatal_err(err);
    }
}

static void parse_log_items(const char *arg)
{
    g_auto(GStrv) items = g_strsplit(arg, ",", 0);

    for (char **i = items; *i; i++) {
        if (!strcmp(*i, "guest_errors")) {
            qemu_set_log_guest_errors(true);
        } else if (!strcmp(*i, "help")) {
            printf("Log items (comma separated):\n"
                   "guest_errors  log when the guest programs a device "
                   "incorrectly\n");
            exit(0);
        } else if (**i) {
            error_report("unknown logging item '%s' (-d help lists them)",
                         *i);
            exit(1);
        }
    }
}

static void handle_device_help(QemuOpts *opts)
{
    const char *driver = qemu_opt_get(opts, "driver");
    Error *err = NULL;

    if (!driver) {
        qdev_print_device_list(stdout);
        exit(0);
    }
    if (!qdev_print_props(stdout, driver, &err)) {
        fatal_err(err);
    }
    exit(0);
}

/*
 * A misspelt driver is reported before anything is built, so the user sees
 * the real mistake rather than a later accelerator or board error.
 */
static void check_device_driver(QemuOpts *opts)
{
    const char *driver = qemu_opt_get(opts, "driver");
    ObjectClass *oc = driver ? object_class_by_name(driver) : NULL;

    if (driver && (!oc || !object_class_dynamic_cast(oc, TYPE_DEVICE))) {
        error_report("'%s' is not a valid device model name", driver);
        exit(1);
    }
}

/* "-global DRIVER.PROP=VALUE" or "driver=D,property=P,value=V". */
static void parse_global(const char *arg)
{
    g_autofree char *driver = NULL;
    g_autofree char *prop = NULL;
    g_autofree char *value = NULL;
    ObjectClass *oc;

    if (g_str_has_prefix(arg, "driver=")) {
        static const char *const keys[] = {
            "driver", "property", "value", NULL
        };
        g_autoptr(QemuOpts) opts = parse_or_die(arg, NULL);
        check_keys(opts, keys);
        driver = g_strdup(qemu_opt_get(opts, "driver"));
        prop = g_strdup(qemu_opt_get(opts, "property"));
        value = g_strdup(qemu_opt_get(opts, "value"));
    } else {
        const char *dot = strchr(arg, '.');
        const char *eq = dot ? strchr(dot, '=') : NULL;

        if (dot && eq) {
            driver = g_strndup(arg, dot - arg);
            prop = g_strndup(dot + 1, eq - dot - 1);
            value = g_strdup(eq + 1);
        }
    }
    if (!driver || !*driver || !prop || !*prop || !value) {
        error_report("expected DRIVER.PROPERTY=VALUE");
        exit(1);
    }
    oc = object_class_by_name(driver);
    if (!oc || !object_class_dynamic_cast(oc, TYPE_DEVICE)) {
        error_report("'%s' is not a valid device model name", driver);
        exit(1);
    }
    if (!object_class_property_find(oc, prop)) {
        error_report("Property '%s.%s' not found", driver, prop);
        exit(1);
    }
    qdev_prop_register_global(driver, prop, value);
}

/* query-command-line-options: the KEY=VALUE options and their keys. */
static JsonObject *cmdline_option_info(const OptDef *def)
{
    JsonObject *o = json_object_new();
    JsonArray *params = json_array_new();
    g_auto(GStrv) words = g_strsplit(def->params, " ", -1);

    for (char **w = words; *w; w++) {
        const char *colon = strchr(*w, ':');
        g_autofree char *name = NULL;
        JsonObject *p = json_object_new();

        g_assert(colon);
        name = g_strndup(*w, colon - *w);
        json_object_set_string_member(p, "name", name);
        json_object_set_string_member(p, "type", colon + 1);
        json_array_add_object_element(params, p);
    }
    json_object_set_string_member(o, "option", def->name);
    json_object_set_array_member(o, "parameters", params);
    return o;
}

static void qmp_query_command_line_options(JsonObject *args, JsonNode **ret,
                                           Error **errp)
{
    const char *option = json_object_get_string_member_with_default(
        args, "option", NULL);
    JsonArray *list = json_array_new();

    for (size_t i = 0; i < ARRAY_SIZE(opt_defs); i++) {
        if (!opt_defs[i].params ||
            (option && strcmp(option, opt_defs[i].name))) {
            continue;
        }
        json_array_add_object_element(list, cmdline_option_info(&opt_defs[i]));
    }
    if (option && !json_array_get_length(list)) {
        json_array_unref(list);
        error_setg(errp, "invalid option name: %s", option);
        return;
    }
    *ret = json_node_new(JSON_NODE_ARRAY);
    json_node_take_array(*ret, list);
}

static void __attribute__((constructor)) vl_register_qmp(void)
{
    qmp_register_command_args("query-command-line-options",
                              qmp_query_command_line_options, "*option:s",
                              QCO_ALLOW_PRECONFIG);
}

static void vl_accel_props_free(gpointer props)
{
    if (props) {
        g_ptr_array_unref(props);
    }
}

/* Appends accelerator @name, with its -accel properties (or NULL). */
static void vl_add_accel(VlConfig *cfg, const char *name, GPtrArray *props)
{
    g_ptr_array_add(cfg->accels, g_strdup(name));
    g_ptr_array_add(cfg->accel_props, props ? g_ptr_array_ref(props) : NULL);
}

static void parse_one(VlConfig *cfg, const OptDef *def, const char *name,
                      const char *arg)
{
    CmdlineOpt co = { .name = name, .arg = arg };
    Error *err = NULL;

    switch (def->index) {
    case OPT_MACHINE:
    case OPT_M: {
        QemuOpts *opts = parse_or_die(arg, "type");
        if (qemu_opts_has_help(opts) ||
            !g_strcmp0(qemu_opt_get(opts, "type"), "help")) {
            char *type = g_strdup(qemu_opt_get(opts, "type"));
            bool ok = true;

            qemu_opts_free(opts);
            /* -machine TYPE,help lists TYPE's properties, as in QEMU. */
            if (type && strcmp(type, "help")) {
                ok = machine_print_props(stdout, type, &err);
            } else {
                machine_print_list(stdout);
            }
            g_free(type);
            if (!ok) {
                loc_push_cmdline(name, arg);
                fatal_err(err);
            }
            exit(0);
        }
        if (qemu_opt_get(opts, "type")) {
            cfg->machine_loc_name = name;
            cfg->machine_loc_arg = arg;
        }
        g_ptr_array_add(cfg->machine_opts, opts);
        g_ptr_array_add(cfg->machine_args, (char *)arg);
        break;
    }
    case OPT_MEMORY:
        parse_memory(cfg, arg);
        break;
    case OPT_ACCEL: {
        g_autoptr(QemuOpts) opts = parse_or_die(arg, "accel");
        const char *accel = qemu_opt_get(opts, "accel");
        if (qemu_opts_has_help(opts)) {
            accel_print_list(stdout);
            exit(0);
        }
        if (!accel) {
            error_report("Parameter 'accel' is missing");
            exit(1);
        }
        /* The rest are the accelerator's properties (dirty-ring-size). */
        g_autoptr(GPtrArray) props = g_ptr_array_new_with_free_func(g_free);
        for (size_t k = 0; k < qemu_opts_count(opts); k++) {
            if (strcmp(qemu_opts_key(opts, k), "accel")) {
                g_ptr_array_add(props, g_strdup(qemu_opts_key(opts, k)));
                g_ptr_array_add(props, g_strdup(qemu_opts_value(opts, k)));
            }
        }
        /* "kvm:qtest" lists fallbacks, as QEMU's accel= did. */
        g_auto(GStrv) names = g_strsplit(accel, ":", 0);
        for (char **n = names; *n; n++) {
            vl_add_accel(cfg, *n, props->len ? props : NULL);
        }
        break;
    }
    case OPT_ENABLE_KVM:
        vl_add_accel(cfg, "kvm", NULL);
        break;
    case OPT_DEVICE:
        if (arg[0] == '{') {
            co.opts = qemu_opts_from_json(arg, &err);
        } else {
            co.opts = qemu_opts_parse(arg, "driver", &err);
        }
        if (!co.opts) {
            fatal_err(err);
        }
        if (qemu_opts_has_help(co.opts) ||
            !g_strcmp0(qemu_opt_get(co.opts, "driver"), "help")) {
            if (!g_strcmp0(qemu_opt_get(co.opts, "driver"), "help")) {
                qemu_opt_del(co.opts, "driver");
            }
            handle_device_help(co.opts);
        }
        check_device_driver(co.opts);
        g_array_append_val(cfg->devices, co);
        break;
    case OPT_QMP:
        g_ptr_array_add(cfg->qmp_specs, (char *)arg);
        break;
    case OPT_CHARDEV:
        co.opts = parse_or_die(arg, "backend");
        g_array_append_val(cfg->chardevs, co);
        break;
    case OPT_BLOCKDEV:
    case OPT_DRIVE:
    case OPT_NETDEV:
        if (arg[0] == '{') {
            co.opts = qemu_opts_from_json(arg, &err);
            if (!co.opts) {
                loc_push_cmdline(name, arg);
                fatal_err(err);
            }
        } else {
            co.opts = parse_or_die(arg, def->index == OPT_NETDEV ? "type"
                                                                 : NULL);
        }
        g_array_append_val(cfg->backends, co);
        break;
    case OPT_MON:
        co.opts = parse_or_die(arg, "chardev");
        g_array_append_val(cfg->mons, co);
        break;
    case OPT_QTEST:
        cfg->qtest_spec = arg;
        break;
    case OPT_QTEST_LOG:
        cfg->qtest_log = arg;
        break;
    case OPT_SERIAL:
        if (cfg->serial_specs->len >= MAX_SERIAL_PORTS) {
            error_report("too many serial ports (at most %d)",
                         MAX_SERIAL_PORTS);
            exit(1);
        }
        g_ptr_array_add(cfg->serial_specs, (char *)arg);
        break;
    case OPT_NOGRAPHIC:
        cfg->nographic = true;
        break;
    case OPT_DISPLAY: {
        g_autoptr(QemuOpts) opts = parse_or_die(arg, "type");
        if (g_strcmp0(qemu_opt_get(opts, "type"), "none")) {
            error_report("Display '%s' is not available (only 'none')",
                         qemu_opt_get(opts, "type") ?: "");
            exit(1);
        }
        break;
    }
    case OPT_VGA:
        if (strcmp(arg, "none")) {
            error_report("VGA card '%s' is not available (only 'none')",
                         arg);
            exit(1);
        }
        break;
    case OPT_NAME: {
        static const char *const keys[] = {
            "guest", "process", "debug-threads", NULL
        };
        g_autoptr(QemuOpts) opts = parse_or_die(arg, "guest");
        check_keys(opts, keys);
        g_free((char *)qemu_name);
        qemu_name = g_strdup(qemu_opt_get(opts, "guest"));
        break;
    }
    case OPT_S:
        autostart = false;
        break;
    case OPT_DAEMONIZE:
        cfg->daemonize = true;
        break;
    case OPT_OBJECT:
        co.opts = arg[0] == '{' ? qemu_opts_from_json(arg, &err)
                                : qemu_opts_parse(arg, "qom-type", &err);
        if (!co.opts) {
            fatal_err(err);
        }
        g_array_append_val(cfg->objects, co);
        break;
    case OPT_OVERCOMMIT:
        if (!vl_parse_overcommit(arg, &cfg->mem_lock, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_UUID:
        if (!vl_parse_uuid(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_RTC:
        if (!rtc_parse_option(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_BOOT:
        if (!vl_parse_boot(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_ADD_FD:
        if (!fdset_parse_add_fd(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_AUDIODEV:
        if (!vl_parse_audiodev(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_MSG:
        if (!vl_parse_msg(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_CPU:
        if (!vl_parse_cpu(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_SANDBOX:
        if (!vl_parse_sandbox(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_SMBIOS:
        if (!smbios_parse_option(smbios_cmdline_config(), arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_SMP:
        if (!machine_smp_config_parse(&cfg->smp, arg, &err)) {
            fatal_err(err);
        }
        cfg->smp_arg = arg;
        break;
    case OPT_KERNEL:
        cfg->kernel = arg;
        break;
    case OPT_INITRD:
        cfg->initrd = arg;
        break;
    case OPT_BIOS:
        cfg->bios = arg;
        break;
    case OPT_DATADIR:
        if (!strcmp(arg, "help")) {
            qemu_list_data_dirs(stdout);
            exit(0);
        }
        qemu_add_data_dir(arg);
        break;
    case OPT_ACTION:
        if (!vl_parse_action(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_APPEND:
        cfg->append = arg;
        break;
    case OPT_NODEFAULTS:
        cfg->nodefaults = true;
        break;
    case OPT_NO_SHUTDOWN:
        no_shutdown = true;
        break;
    case OPT_NO_REBOOT:
        no_reboot = true;
        break;
    case OPT_NO_ACPI:
        cfg->no_acpi = true;
        break;
    case OPT_USB:
        cfg->usb = true;
        break;
    case OPT_USBDEVICE: {
        static const char *const names[][2] = {
            { "tablet", "usb-tablet" }, { "mouse", "usb-mouse" },
            { "keyboard", "usb-kbd" },
        };
        const char *driver = NULL;

        for (unsigned i = 0; i < G_N_ELEMENTS(names); i++) {
            if (!strcmp(arg, names[i][0])) {
                driver = names[i][1];
            }
        }
        if (!driver) {
            loc_push_cmdline(name, arg);
            error_report("could not add USB device '%s'", arg);
            fprintf(stderr, "Conduit's -usbdevice knows tablet, mouse and "
                         "keyboard; use -device for others.\n");
            exit(1);
        }
        cfg->usb = true;
        co.opts = qemu_opts_parse(driver, "driver", &error_fatal);
        g_array_append_val(cfg->devices, co);
        break;
    }
    case OPT_NO_USER_CONFIG:
        break;
    case OPT_NUMA:
        if (!numa_parse_option(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_MEM_PATH:
        host_memory_set_mem_path(arg);
        break;
    case OPT_MEM_PREALLOC:
        host_memory_set_prealloc(true);
        break;
    case OPT_NO_HPET:
        /* What the machine is anyway (pc's hpet property is off). */
        break;
    case OPT_TRACE:
        if (!strcmp(arg, "help") || !strcmp(arg, "?") ||
            !strcmp(arg, "enable=help")) {
            trace_list_events(stdout);
            exit(0);
        }
        if (!trace_opt_parse(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_LOGFILE:
        if (!trace_set_logfile(arg, &err)) {
            fatal_err(err);
        }
        break;
    case OPT_LOG:
        parse_log_items(arg);
        break;
    case OPT_PIDFILE:
        cfg->pidfile = arg;
        break;
    case OPT_GLOBAL:
        parse_global(arg);
        break;
    case OPT_INCOMING:
        cfg->incoming = arg;
        block_defer_write_locks();
        break;
    case OPT_VERSION:
        print_version();
        exit(0);
    case OPT_HELP:
    case OPT_H:
        print_help(error_get_progname());
        exit(0);
    }
}

static void parse_cmdline(VlConfig *cfg, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        const char *arg = NULL;
        const OptDef *def;

        if (name[0] != '-' || !name[1]) {
            error_report("%s: unexpected argument (disk images are not "
                         "supported; use -device)", name);
            exit(1);
        }
        def = lookup_opt(name);
        if (!def) {
            error_report("%s: invalid option", name);
            exit(1);
        }
        if (def->has_arg) {
            if (i + 1 >= argc) {
                error_report("%s: requires an argument", name);
                exit(1);
            }
            arg = argv[++i];
        }
        loc_push_cmdline(name, arg);
        parse_one(cfg, def, name, arg);
        loc_pop();
    }
}

/* ---- building the system ---- */

static MachineClass *select_machine(VlConfig *cfg)
{
    const char *type = NULL;
    MachineClass *mc;

    for (guint i = 0; i < cfg->machine_opts->len; i++) {
        const char *t = qemu_opt_get(g_ptr_array_index(cfg->machine_opts, i),
                                     "type");
        if (t) {
            type = t;
        }
    }
    if (!type) {
        mc = machine_default_class();
        if (mc) {
            return mc;
        }
        error_report("No machine specified, and there is no default");
    } else {
        mc = machine_find_class(type);
        if (mc) {
            return mc;
        }
        loc_push_cmdline(cfg->machine_loc_name, cfg->machine_loc_arg);
        error_report("unsupported machine type '%s'", type);
        loc_pop();
    }
    fprintf(stderr, "Use -machine help to list supported machines\n");
    exit(1);
}

static void apply_machine_opts(VlConfig *cfg, MachineState *ms)
{
    for (guint i = 0; i < cfg->machine_opts->len; i++) {
        QemuOpts *opts = g_ptr_array_index(cfg->machine_opts, i);

        for (size_t k = 0; k < qemu_opts_count(opts); k++) {
            const char *key = qemu_opts_key(opts, k);
            const char *val = qemu_opts_value(opts, k);
            Error *err = NULL;

            if (!strcmp(key, "type")) {
                continue;
            }
            if (!strcmp(key, "accel")) {
                g_auto(GStrv) names = g_strsplit(val, ":", 0);
                for (char **n = names; *n; n++) {
                    vl_add_accel(cfg, *n, NULL);
                }
                continue;
            }
            if (!object_property_parse(OBJECT(ms), key, val, &err)) {
                loc_push_cmdline("-machine",
                                 g_ptr_array_index(cfg->machine_args, i));
                fatal_err(err);
            }
        }
    }
}

/*
 * The "none" machine runs no guest code, so when none of the requested
 * accelerators exists (a prober asking for kvm:tcg of a binary that has
 * neither) it comes up on qtest, which query-kvm and qom-list-types then
 * report truthfully.
 */
static bool init_accel_none_fallback(MachineClass *mc, MachineState *ms)
{
    Error *err = NULL;

    if (strcmp(object_class_get_name(OBJECT_CLASS(mc)),
               MACHINE_TYPE_NAME("none")) || !accel_find("qtest")) {
        return false;
    }
    if (!accel_init_machine(accel_find("qtest"), ms, NULL, &err)) {
        error_free(err);
        return false;
    }
    warn_report("no requested accelerator is available; the 'none' "
                "machine runs on qtest");
    return true;
}

static void init_accel(VlConfig *cfg, MachineClass *mc, MachineState *ms)
{
    Error *err = NULL;

    if (!cfg->accels->len) {
        /* -qtest implies the qtest accelerator, as in QEMU. */
        const char *def = cfg->qtest_spec ? "qtest"
                          : mc->default_accel ? mc->default_accel : "kvm";
        vl_add_accel(cfg, def, NULL);
    }
    for (guint i = 0; i < cfg->accels->len; i++) {
        const char *name = g_ptr_array_index(cfg->accels, i);
        AccelClass *ac = accel_find(name);
        bool last = i + 1 == cfg->accels->len;
        const GPtrArray *props = g_ptr_array_index(cfg->accel_props, i);

        if (!ac) {
            if (last && init_accel_none_fallback(mc, ms)) {
                return;
            }
            /* QEMU's wording, prefixed with the option as QEMU does. */
            loc_push_cmdline("-accel", name);
            error_report("invalid accelerator %s", name);
            if (!strcmp(name, "tcg")) {
                fprintf(stderr, "Conduit has no TCG (it runs guests only with "
                             "KVM); -accel help lists the accelerators\n");
            }
            loc_pop();
            if (last) {
                exit(1);
            }
            continue;
        }
        /* A property the accelerator lacks or refuses is a typo. */
        if (!accel_check_props(ac, props, &err)) {
            if (!last) {
                warn_report("-accel %s: %s; trying the next accelerator",
                            name, error_get_pretty(err));
                error_free(err);
                err = NULL;
                continue;
            }
            error_prepend(&err, "-accel %s: ", name);
            fatal_err(err);
        }
        if (accel_init_machine(ac, ms, props, &err)) {
            return;
        }
        if (last && init_accel_none_fallback(mc, ms)) {
            error_free(err);
            return;
        }
        if (last) {
            error_prepend(&err, "failed to initialize %s: ", name);
            fatal_err(err);
        }
        warn_report("failed to initialize %s: %s; trying the next "
                    "accelerator", name, error_get_pretty(err));
        error_free(err);
        err = NULL;
    }
}

/* -nographic puts serial0 on stdio unless a monitor already uses it. */
static bool stdio_taken(VlConfig *cfg)
{
    for (guint i = 0; i < cfg->qmp_specs->len; i++) {
        if (g_str_has_prefix(g_ptr_array_index(cfg->qmp_specs, i), "stdio")) {
            return true;
        }
    }
    for (guint i = 0; i < cfg->chardevs->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->chardevs, CmdlineOpt, i);
        if (!g_strcmp0(qemu_opt_get(co->opts, "backend"), "stdio")) {
            return true;
        }
    }
    return cfg->qtest_spec && g_str_has_prefix(cfg->qtest_spec, "stdio");
}

static void create_objects(VlConfig *cfg)
{
    for (guint i = 0; i < cfg->objects->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->objects, CmdlineOpt, i);
        Error *err = NULL;

        loc_push_cmdline(co->name, co->arg);
        if (!user_creatable_add_opts(co->opts, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
}

/* A daemon has no terminal: stdio back-ends cannot work. */
static void check_daemonize_stdio(VlConfig *cfg)
{
    bool serial_stdio = false;

    for (guint i = 0; i < cfg->serial_specs->len; i++) {
        serial_stdio |= g_str_has_prefix(
            g_ptr_array_index(cfg->serial_specs, i), "stdio");
    }
    if (stdio_taken(cfg) || serial_stdio ||
        (cfg->nographic && !cfg->nodefaults && !cfg->serial_specs->len)) {
        error_report("-daemonize cannot be used with stdio chardevs "
                     "(-nographic without -nodefaults, -serial stdio, "
                     "-qmp stdio, -chardev stdio)");
        exit(1);
    }
}

static void init_chardevs_and_monitors(VlConfig *cfg)
{
    Error *err = NULL;

    for (guint i = 0; i < cfg->chardevs->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->chardevs, CmdlineOpt, i);
        loc_push_cmdline(co->name, co->arg);
        if (!qemu_chr_new_from_opts(co->opts, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
    for (guint i = 0; i < cfg->qmp_specs->len; i++) {
        const char *spec = g_ptr_array_index(cfg->qmp_specs, i);
        g_autofree char *label = g_strdup_printf("compat_monitor%u", i);
        Chardev *chr;

        loc_push_cmdline("-qmp", spec);
        chr = qemu_chr_new(label, spec, &err);
        if (!chr || !monitor_init_qmp(chr, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
    for (guint i = 0; i < cfg->mons->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->mons, CmdlineOpt, i);
        loc_push_cmdline(co->name, co->arg);
        if (!monitor_init_opts(co->opts, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
    if (!cfg->serial_specs->len && cfg->nographic && !cfg->nodefaults &&
        !stdio_taken(cfg)) {
        g_ptr_array_add(cfg->serial_specs, (char *)"stdio");
    }
    for (guint i = 0; i < cfg->serial_specs->len; i++) {
        const char *spec = g_ptr_array_index(cfg->serial_specs, i);
        g_autofree char *label = g_strdup_printf("serial%u", i);

        if (!strcmp(spec, "none")) {
            continue;
        }
        loc_push_cmdline("-serial", spec);
        serial_hds[i] = qemu_chr_new(label, spec, &err);
        if (!serial_hds[i]) {
            fatal_err(err);
        }
        loc_pop();
    }
}

/*
 * -drive if=pflash[,unit=N]: the drive becomes node "pflashN" and the
 * machine's pflashN property, as QEMU's pc does.
 */
static bool drive_add_pflash(VlConfig *cfg, MachineState *ms, QemuOpts *opts,
                             Error **errp)
{
    g_autoptr(GString) text = g_string_new(NULL);
    g_autoptr(QemuOpts) none = NULL;
    const char *unit_s = qemu_opt_get(opts, "unit");
    int unit = unit_s ? atoi(unit_s) : cfg->pflash_units;
    g_autofree char *id = NULL;
    g_autofree char *prop = NULL;

    if (qemu_opt_get(opts, "index")) {
        unit = atoi(qemu_opt_get(opts, "index"));
    }
    if (unit < 0 || unit > 1) {
        error_setg(errp, "pflash unit %d is out of range (0 or 1)", unit);
        return false;
    }
    id = g_strdup_printf("pflash%d", unit);
    for (size_t k = 0; k < qemu_opts_count(opts); k++) {
        const char *key = qemu_opts_key(opts, k);
        const char *val = qemu_opts_value(opts, k);

        if (!strcmp(key, "if") || !strcmp(key, "unit") ||
            !strcmp(key, "index")) {
            continue;
        }
        g_string_append_printf(text, "%s=", key);
        for (const char *c = val; *c; c++) {
            g_string_append_c(text, *c);
            if (*c == ',') {
                g_string_append_c(text, ',');
            }
        }
        g_string_append_c(text, ',');
    }
    g_string_append_printf(text, "if=none,id=%s", id);
    none = qemu_opts_parse(text->str, NULL, errp);
    if (!none || !drive_add(none, errp)) {
        return false;
    }
    prop = g_strdup_printf("pflash%d", unit);
    cfg->pflash_units = unit + 1;
    return object_property_parse(OBJECT(ms), prop, id, errp);
}

/* Block nodes and network backends, in command-line order. */
static void create_backends(VlConfig *cfg)
{
    block_qmp_init();
    for (guint i = 0; i < cfg->backends->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->backends, CmdlineOpt, i);
        Error *err = NULL;
        bool ok;

        loc_push_cmdline(co->name, co->arg);
        if (strstr(co->name, "blockdev")) {
            ok = blockdev_add(co->opts, &err) != NULL;
        } else if (strstr(co->name, "drive") &&
                   !g_strcmp0(qemu_opt_get(co->opts, "if"), "pflash")) {
            ok = drive_add_pflash(cfg, current_machine, co->opts, &err);
        } else if (strstr(co->name, "drive")) {
            ok = drive_add(co->opts, &err) != NULL;
        } else {
            ok = netdev_add(co->opts, &err) != NULL;
        }
        if (!ok) {
            fatal_err(err);
        }
        loc_pop();
    }
}

static void create_devices(VlConfig *cfg)
{
    for (guint i = 0; i < cfg->devices->len; i++) {
        CmdlineOpt *co = &g_array_index(cfg->devices, CmdlineOpt, i);
        Error *err = NULL;

        loc_push_cmdline(co->name, co->arg);
        if (!qdev_device_add(co->opts, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
}

static void write_pidfile(const char *path)
{
    g_autofree char *text = g_strdup_printf("%d\n", (int)getpid());
    g_autoptr(GError) gerr = NULL;

    if (!g_file_set_contents(path, text, -1, &gerr)) {
        error_report("cannot write pid file %s: %s", path, gerr->message);
        exit(1);
    }
}

static void vl_config_free(VlConfig *cfg)
{
    for (guint i = 0; i < cfg->devices->len; i++) {
        qemu_opts_free(g_array_index(cfg->devices, CmdlineOpt, i).opts);
    }
    for (guint i = 0; i < cfg->chardevs->len; i++) {
        qemu_opts_free(g_array_index(cfg->chardevs, CmdlineOpt, i).opts);
    }
    for (guint i = 0; i < cfg->backends->len; i++) {
        qemu_opts_free(g_array_index(cfg->backends, CmdlineOpt, i).opts);
    }
    g_array_free(cfg->backends, TRUE);
    for (guint i = 0; i < cfg->mons->len; i++) {
        qemu_opts_free(g_array_index(cfg->mons, CmdlineOpt, i).opts);
    }
    g_array_free(cfg->devices, TRUE);
    g_array_free(cfg->chardevs, TRUE);
    g_array_free(cfg->mons, TRUE);
    for (guint i = 0; i < cfg->objects->len; i++) {
        qemu_opts_free(g_array_index(cfg->objects, CmdlineOpt, i).opts);
    }
    g_array_free(cfg->objects, TRUE);
    g_ptr_array_free(cfg->machine_opts, TRUE);
    g_ptr_array_free(cfg->machine_args, TRUE);
    g_ptr_array_free(cfg->accels, TRUE);
    g_ptr_array_free(cfg->accel_props, TRUE);
    g_ptr_array_free(cfg->qmp_specs, TRUE);
    g_ptr_array_free(cfg->serial_specs, TRUE);
}

int qemu_main(int argc, char **argv)
{
    VlConfig cfg = { 0 };
    MachineClass *mc;
    MachineState *ms;
    Error *err = NULL;
    int status;

    error_set_progname(argv[0]);
    cfg.machine_opts = g_ptr_array_new_with_free_func(
        (GDestroyNotify)qemu_opts_free);
    cfg.machine_args = g_ptr_array_new();
    cfg.accels = g_ptr_array_new_with_free_func(g_free);
    cfg.accel_props = g_ptr_array_new_with_free_func(vl_accel_props_free);
    cfg.devices = g_array_new(FALSE, TRUE, sizeof(CmdlineOpt));
    cfg.chardevs = g_array_new(FALSE, TRUE, sizeof(CmdlineOpt));
    cfg.backends = g_array_new(FALSE, TRUE, sizeof(CmdlineOpt));
    cfg.mons = g_array_new(FALSE, TRUE, sizeof(CmdlineOpt));
    cfg.qmp_specs = g_ptr_array_new();
    cfg.serial_specs = g_ptr_array_new();
    cfg.objects = g_array_new(FALSE, TRUE, sizeof(CmdlineOpt));

    parse_cmdline(&cfg, argc, argv);
    if (cfg.daemonize) {
        check_daemonize_stdio(&cfg);
        daemonize_start();
    }

    qemu_init_main_loop();
    mc = select_machine(&cfg);

    ms = MACHINE(object_new_with_class(OBJECT_CLASS(mc)));
    object_property_add_child(object_get_root(), "machine", OBJECT(ms));
    object_unref(ms);
    current_machine = ms;
    /* As in QEMU, these exist before any device has an id (libvirt lists
     * /machine/peripheral at every start). */
    container_get(OBJECT(ms), "/peripheral");
    container_get(OBJECT(ms), "/peripheral-anon");
    if (cfg.ram_size_set) {
        ms->ram_size = cfg.ram_size;
        ms->ram_size_set = true;
    }
    if (cfg.smp_arg) {
        loc_push_cmdline("-smp", cfg.smp_arg);
        if (!machine_parse_smp(mc, &cfg.smp, &ms->smp, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
    if (cfg.no_acpi) {
        ms->acpi = false;
    }
    apply_machine_opts(&cfg, ms);
    if (cfg.usb) {
        ms->usb = true;
    }
    if (cfg.kernel) {
        g_free(ms->kernel_filename);
        ms->kernel_filename = g_strdup(cfg.kernel);
    }
    if (cfg.initrd) {
        g_free(ms->initrd_filename);
        ms->initrd_filename = g_strdup(cfg.initrd);
    }
    if (cfg.bios) {
        g_free(ms->firmware);
        ms->firmware = g_strdup(cfg.bios);
    }
    if (cfg.append) {
        g_free(ms->kernel_cmdline);
        ms->kernel_cmdline = g_strdup(cfg.append);
    }
    if ((ms->initrd_filename || ms->kernel_cmdline) && !ms->kernel_filename) {
        error_report("-initrd and -append only work together with -kernel");
        exit(1);
    }

    create_objects(&cfg);
    if (!numa_complete(ms, MAX(ms->smp.max_cpus, ms->smp.cpus), &err) ||
        !machine_resolve_memory(ms, &err)) {
        fatal_err(err);
    }
    init_chardevs_and_monitors(&cfg);
    init_accel(&cfg, mc, ms);
    if (cfg.qtest_spec) {
        loc_push_cmdline("-qtest", cfg.qtest_spec);
        if (!qtest_server_init(cfg.qtest_spec, cfg.qtest_log, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }

    /* Block nodes first: the board maps pflash drives (OVMF). */
    create_backends(&cfg);
    if (mc->init && !mc->init(ms, &err)) {
        fatal_err(err);
    }
    if (ms->usb && !qbus_find_by_type("usb-bus")) {
        error_report("-machine usb=on: the %s machine has no USB controller",
                     object_class_get_name(OBJECT_CLASS(mc)));
        fprintf(stderr, "Add one with -device qemu-xhci, or use usb=off.\n");
        exit(1);
    }
    create_devices(&cfg);
    qdev_hotplug = true;
    qemu_run_machine_init_done();
    qemu_system_reset(SHUTDOWN_CAUSE_NONE);
    migration_init();
    if (!accel_start_vcpus(ms, &err)) {
        fatal_err(err);
    }
    if (cfg.mem_lock && mlockall(MCL_CURRENT | MCL_FUTURE) < 0) {
        error_report("-overcommit mem-lock=on: mlockall: %s (is the "
                     "memlock limit high enough?)", strerror(errno));
        exit(1);
    }
    if (cfg.pidfile) {
        write_pidfile(cfg.pidfile);
    }
    if (cfg.incoming) {
        loc_push_cmdline("-incoming", cfg.incoming);
        if (!migration_incoming_init(cfg.incoming, &err)) {
            fatal_err(err);
        }
        loc_pop();
    }
    daemonize_done();
    if (autostart && !cfg.incoming) {
        vm_start();
    }

    status = qemu_main_loop();

    if (cfg.pidfile) {
        unlink(cfg.pidfile);
    }
    /*
     * The machine is left alone: the process is exiting, and tearing the
     * device tree down here would only add ordering hazards.  Sockets and
     * the accelerator's host resources are what must be released.
     */
    accel_cleanup();
    block_exit();
    monitor_cleanup();
    qemu_chr_cleanup_all();
    vl_config_free(&cfg);
    return status;
}
