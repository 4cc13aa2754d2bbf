/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * -daemonize as QEMU does it, and the start-up options libvirt passes
 * that describe rather than build (see vl-compat.h).  What Conduit cannot
 * honour is refused by name, never ignored.
 */
#include "qemu/osdep.h"
#include "qemu/option.h"
#include "qemu/error-report.h"
#include "qemu/trace.h"
#include "qapi/error.h"
#include "monitor/monitor.h"
#include "system/target-info.h"
#include "system/vl-compat.h"
#include "system/system.h"
#include "hw/firmware/smbios.h"
#include <sys/wait.h>

/* ---- -daemonize ---- */

static int daemon_status_fd = -1;

void daemonize_start(void)
{
    int fds[2];
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0) {
        error_report("-daemonize: pipe: %s", strerror(errno));
        exit(1);
    }
    pid = fork();
    if (pid < 0) {
        error_report("-daemonize: fork: %s", strerror(errno));
        exit(1);
    }
    if (pid > 0) {
        char status = 1;
        ssize_t n;

        close(fds[1]);
        do {
            n = read(fds[0], &status, 1);
        } while (n < 0 && errno == EINTR);
        waitpid(pid, NULL, 0);
        /* EOF: the daemon exited; it has reported why on stderr. */
        _exit(n == 1 && status == 0 ? 0 : 1);
    }
    close(fds[0]);
    if (setsid() < 0) {
        error_report("-daemonize: setsid: %s", strerror(errno));
        exit(1);
    }
    /* A second fork: the daemon can never reacquire a terminal. */
    pid = fork();
    if (pid < 0) {
        error_report("-daemonize: fork: %s", strerror(errno));
        exit(1);
    }
    if (pid > 0) {
        _exit(0);
    }
    daemon_status_fd = fds[1];
    umask(027);
}

void daemonize_done(void)
{
    char ok = 0;
    int null_fd;

    if (daemon_status_fd < 0) {
        return;
    }
    if (chdir("/") < 0) {
        error_report("-daemonize: chdir /: %s", strerror(errno));
        exit(1);
    }
    null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0) {
        error_report("-daemonize: /dev/null: %s", strerror(errno));
        exit(1);
    }
    dup2(null_fd, STDIN_FILENO);
    dup2(null_fd, STDOUT_FILENO);
    /* With -D the log file has the messages; otherwise they are lost. */
    if (trace_get_logfile() == stderr) {
        dup2(null_fd, STDERR_FILENO);
    }
    close(null_fd);
    if (write(daemon_status_fd, &ok, 1) != 1) {
        /* The parent is gone: nobody to tell, keep running. */
    }
    close(daemon_status_fd);
    daemon_status_fd = -1;
}

/* ---- option parsers ---- */

static QemuOpts *parse_keys(const char *arg, const char *implied,
                            const char *const *allowed, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, implied, errp);

    if (!opts) {
        return NULL;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);

        if (!g_strv_contains(allowed, key)) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return NULL;
        }
    }
    if (qemu_opts_id(opts)) {
        error_setg(errp, "Invalid parameter 'id'");
        return NULL;
    }
    return g_steal_pointer(&opts);
}

bool vl_parse_overcommit(const char *arg, bool *mem_lock, Error **errp)
{
    static const char *const keys[] = { "mem-lock", "cpu-pm", NULL };
    g_autoptr(QemuOpts) opts = parse_keys(arg, NULL, keys, errp);
    Error *err = NULL;
    bool lock, cpu_pm;

    if (!opts) {
        return false;
    }
    lock = qemu_opt_get_bool(opts, "mem-lock", *mem_lock, &err);
    if (!err) {
        cpu_pm = qemu_opt_get_bool(opts, "cpu-pm", false, &err);
    }
    if (err) {
        error_propagate(errp, err);
        return false;
    }
    if (cpu_pm) {
        error_setg(errp, "cpu-pm=on is not supported: Conduit's vCPUs "
                   "always exit to the host on HLT and MWAIT");
        return false;
    }
    *mem_lock = lock;
    return true;
}

static char *qemu_uuid;
int boot_reboot_timeout = -1;

bool vl_parse_uuid(const char *arg, Error **errp)
{
    static const int groups[] = { 8, 4, 4, 4, 12 };
    const char *p = arg;

    for (size_t g = 0; g < ARRAY_SIZE(groups); g++) {
        for (int i = 0; i < groups[g]; i++, p++) {
            if (!g_ascii_isxdigit(*p)) {
                goto bad;
            }
        }
        if (*p != (g + 1 < ARRAY_SIZE(groups) ? '-' : '\0')) {
            goto bad;
        }
        p++;
    }
    g_free(qemu_uuid);
    qemu_uuid = g_ascii_strdown(arg, -1);
    return true;
bad:
    error_setg(errp, "Fail to parse UUID string. Wrong format.");
    error_append_hint(errp, "Expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx "
                      "(hex)\n");
    return false;
}

/* -smbios type=1,uuid= stands for -uuid when that is not given, as in QEMU. */
static char *qemu_uuid_string(void)
{
    const SmbiosConfig *smbios = smbios_cmdline_config();
    const uint8_t *u = smbios->t1.uuid;

    if (qemu_uuid) {
        return g_strdup(qemu_uuid);
    }
    if (!smbios->t1.has_uuid) {
        return NULL;
    }
    return g_strdup_printf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                           "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                           u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
                           u[12], u[13], u[14], u[15]);
}

bool qemu_uuid_get(uint8_t uuid[16])
{
    g_autofree char *str = qemu_uuid_string();

    return str && smbios_parse_uuid(str, uuid);
}

static void qmp_query_uuid(JsonObject *args, JsonNode **ret, Error **errp)
{
    JsonObject *o = json_object_new();
    g_autofree char *uuid = qemu_uuid_string();

    json_object_set_string_member(o, "UUID", uuid ? uuid :
                                  "00000000-0000-0000-0000-000000000000");
    *ret = qmp_node_new_object(o);
}

bool vl_parse_boot(const char *arg, Error **errp)
{
    static const char *const keys[] = {
        "order", "once", "menu", "splash", "splash-time", "reboot-timeout",
        "strict", NULL,
    };
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, "order", errp);
    const char *rt;
    Error *err = NULL;

    if (!opts) {
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        bool known = false;

        for (const char *const *k = keys; *k; k++) {
            known |= !strcmp(key, *k);
        }
        if (!known) {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
    }
    /* Legacy drive letters: firmware follows bootindex; accepted. */
    qemu_opt_get_bool(opts, "strict", false, &err);
    if (!err) {
        qemu_opt_get_bool(opts, "menu", false, &err);
    }
    if (err) {
        error_propagate(errp, err);
        return false;
    }
    rt = qemu_opt_get(opts, "reboot-timeout");
    if (rt) {
        char *end;
        long v = strtol(rt, &end, 10);

        if (*end || v < -1 || v > 0xffff) {
            error_setg(errp, "reboot timeout is invalid, it should be a "
                       "value between -1 and 65535");
            return false;
        }
        boot_reboot_timeout = v;
    }
    return true;
}

bool vl_parse_action(const char *arg, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, NULL, errp);

    if (!opts) {
        return false;
    }
    for (size_t i = 0; i < qemu_opts_count(opts); i++) {
        const char *key = qemu_opts_key(opts, i);
        const char *val = qemu_opts_value(opts, i);

        if (!strcmp(key, "reboot") &&
            (!strcmp(val, "reset") || !strcmp(val, "shutdown"))) {
            no_reboot = !strcmp(val, "shutdown");
        } else if (!strcmp(key, "shutdown") &&
                   (!strcmp(val, "poweroff") || !strcmp(val, "pause"))) {
            no_shutdown = !strcmp(val, "pause");
        } else if ((!strcmp(key, "panic") &&
                    (!strcmp(val, "shutdown") || !strcmp(val, "none") ||
                     !strcmp(val, "pause"))) ||
                   (!strcmp(key, "watchdog") && !strcmp(val, "reset"))) {
            /* The defaults QEMU and libvirt write; nothing to change. */
        } else if (!strcmp(key, "reboot") || !strcmp(key, "shutdown") ||
                   !strcmp(key, "panic") || !strcmp(key, "watchdog")) {
            error_setg(errp, "Parameter '%s' does not accept value '%s'",
                       key, val);
            return false;
        } else {
            error_setg(errp, "Invalid parameter '%s'", key);
            return false;
        }
    }
    return true;
}

bool vl_parse_audiodev(const char *arg, Error **errp)
{
    g_autoptr(QemuOpts) opts = arg[0] == '{'
                               ? qemu_opts_from_json(arg, errp)
                               : qemu_opts_parse(arg, "driver", errp);
    const char *driver;

    if (!opts) {
        return false;
    }
    driver = qemu_opt_get(opts, "driver");
    if (!driver) {
        error_setg(errp, "Parameter 'driver' is missing");
        return false;
    }
    if (strcmp(driver, "none")) {
        error_setg(errp, "audio driver '%s' is not available: Conduit has "
                   "no sound devices (only 'none')", driver);
        return false;
    }
    if (!qemu_opts_id(opts)) {
        error_setg(errp, "Parameter 'id' is missing");
        return false;
    }
    return true;
}

bool vl_parse_msg(const char *arg, Error **errp)
{
    static const char *const keys[] = { "timestamp", "guest-name", NULL };
    g_autoptr(QemuOpts) opts = parse_keys(arg, NULL, keys, errp);
    Error *err = NULL;
    bool timestamp, guest_name = false;

    if (!opts) {
        return false;
    }
    timestamp = qemu_opt_get_bool(opts, "timestamp", false, &err);
    if (!err) {
        guest_name = qemu_opt_get_bool(opts, "guest-name", false, &err);
    }
    if (err) {
        error_propagate(errp, err);
        return false;
    }
    if (guest_name) {
        error_setg(errp, "guest-name=on is not supported");
        return false;
    }
    error_report_set_timestamps(timestamp);
    return true;
}

static void print_cpu_models(void)
{
    const char *const *m = target_info()->cpu_models;

    if (!*m) {
        printf("%s has no CPU models: its only accelerator (qtest) runs "
               "no vCPUs\n", error_get_progname());
    }
    for (; *m; m++) {
        printf("%s\n", *m);
    }
}

/*
 * The vCPU is the host CPU as KVM offers it, so only the model names
 * that mean that are accepted; the target says which changes it takes
 * (x86: kvm=, pmu=, migratable= and CPUID features).
 */
bool vl_parse_cpu(const char *arg, Error **errp)
{
    g_auto(GStrv) parts = g_strsplit(arg, ",", 2);

    if (!strcmp(parts[0], "help") || !strcmp(parts[0], "?")) {
        print_cpu_models();
        exit(0);
    }
    if (!g_strv_contains(target_info()->cpu_models, parts[0])) {
        error_setg(errp, "unable to find CPU model '%s'", parts[0]);
        error_append_hint(errp, "Use -cpu help to list the models\n");
        return false;
    }
    if (parts[1] && !target_info()->parse_cpu_opts) {
        error_setg(errp, "CPU features ('%s') cannot be changed: the vCPU "
                   "is the host CPU as KVM offers it", parts[1]);
        return false;
    }
    return !target_info()->parse_cpu_opts ||
           target_info()->parse_cpu_opts(parts[0], parts[1] ? parts[1] : "",
                                         errp);
}

bool vl_parse_sandbox(const char *arg, Error **errp)
{
    g_autoptr(QemuOpts) opts = qemu_opts_parse(arg, "enable", errp);
    Error *err = NULL;

    if (!opts) {
        return false;
    }
    if (qemu_opt_get_bool(opts, "enable", false, &err)) {
        error_setg(errp, "Conduit is built without seccomp support: "
                   "-sandbox on is not available");
        return false;
    }
    if (err) {
        error_propagate(errp, err);
        return false;
    }
    return true;
}

static void __attribute__((constructor)) vl_compat_register(void)
{
    qmp_register_command_args("query-uuid", qmp_query_uuid, "",
                              QCO_ALLOW_PRECONFIG);
}
