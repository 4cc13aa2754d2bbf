/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest protocol server.  One request per line, one reply line each
 * ("OK[ value]" / "FAIL reason"); intercepted interrupt lines report
 * changes unprompted as "IRQ raise N" / "IRQ lower N".
 *
 * Everything the client sends is untrusted: numbers are parsed strictly,
 * sizes are bounded, and a bad line only ever produces a FAIL reply.
 */
#include "qemu/osdep.h"
#include "system/qtest.h"
#include "chardev/char.h"
#include "qemu/timer.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "system/memory.h"
#include "system/address-spaces.h"
#include "hw/qdev-core.h"
#include "qom/object.h"
#include "trace.h"

/*
 * Largest read/write/memset one request may ask for.  The reply is one
 * line, so this bounds how long a command holds the main loop, and a hex
 * reply (twice the size) must fit the chardev's output queue.
 */
#define QTEST_MAX_XFER (4 * 1024 * 1024)
/* Longest request line (a b64write of QTEST_MAX_XFER fits). */
#define QTEST_MAX_LINE (QTEST_MAX_XFER / 3 * 4 + 4096)

static bool qtest_accel_on;
static CharBackend qtest_be;
static bool qtest_chr_ready;
static GString *qtest_inbuf;
static bool qtest_discarding;       /* dropping an over-long line */
static FILE *qtest_log;
static int64_t qtest_log_start;
static DeviceState *irq_intercept_dev;
static GHashTable *irq_levels;      /* line -> level, for change detection */
static GHashTable *qtest_commands;  /* name -> QTestCommandFunc */

void qtest_set_enabled(bool enabled)
{
    qtest_accel_on = enabled;
}

void qtest_register_command(const char *name, QTestCommandFunc fn)
{
    if (!qtest_commands) {
        qtest_commands = g_hash_table_new_full(g_str_hash, g_str_equal,
                                               g_free, NULL);
    }
    g_hash_table_replace(qtest_commands, g_strdup(name), (gpointer)fn);
}

static void qtest_log_line(char dir, const char *line)
{
    if (!qtest_log) {
        return;
    }
    fprintf(qtest_log, "[%c +%.6f] %s\n", dir,
            (qemu_clock_get_ns(QEMU_CLOCK_REALTIME) - qtest_log_start) / 1e9,
            line);
    fflush(qtest_log);
}

static void qtest_send_line(const char *line)
{
    g_autofree char *out = g_strconcat(line, "\n", NULL);

    qtest_log_line('S', line);
    qemu_chr_fe_write_all(&qtest_be, (const uint8_t *)out, strlen(out));
}

void qtest_sendf(const char *fmt, ...)
{
    g_autofree char *line = NULL;
    va_list ap;

    if (!qtest_chr_ready) {
        return;
    }
    va_start(ap, fmt);
    line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qtest_send_line(line);
}

/* ---- parsing helpers ---- */

static bool qtest_parse_u64(const char *s, uint64_t *v, Error **errp)
{
    char *end;

    if (!s || !*s || *s == '-' || *s == '+' || g_ascii_isspace(*s)) {
        goto bad;
    }
    errno = 0;
    *v = g_ascii_strtoull(s, &end, 0);
    if (errno || *end) {
        goto bad;
    }
    return true;
bad:
    error_setg(errp, "invalid number '%s'", s ? s : "");
    return false;
}

static bool qtest_parse_size(const char *s, uint64_t *v, Error **errp)
{
    if (!qtest_parse_u64(s, v, errp)) {
        return false;
    }
    if (*v > QTEST_MAX_XFER) {
        error_setg(errp, "size %s too large (max %d)", s, QTEST_MAX_XFER);
        return false;
    }
    return true;
}

static bool qtest_check_args(int argc, int want_min, int want_max,
                             Error **errp)
{
    if (argc - 1 < want_min || argc - 1 > want_max) {
        error_setg(errp, "wrong number of arguments");
        return false;
    }
    return true;
}

/* ---- IRQ interception ---- */

static void qtest_irq_handler(void *opaque, int n, int level)
{
    gpointer key = GINT_TO_POINTER(n);
    int old = GPOINTER_TO_INT(g_hash_table_lookup(irq_levels, key));

    level = !!level;
    if (old == level) {
        return;
    }
    g_hash_table_insert(irq_levels, key, GINT_TO_POINTER(level));
    qtest_sendf("IRQ %s %d", level ? "raise" : "lower", n);
}

static bool qtest_irq_intercept(const char *path, bool in, Error **errp)
{
    bool ambiguous = false;
    Object *obj = object_resolve_path(path, &ambiguous);
    DeviceState *dev;

    if (!obj || !object_dynamic_cast(obj, TYPE_DEVICE)) {
        error_setg(errp, "Unknown device '%s'", path);
        return false;
    }
    dev = (DeviceState *)obj;
    if (irq_intercept_dev) {
        if (irq_intercept_dev == dev) {
            return true;
        }
        error_setg(errp, "IRQ intercept already enabled");
        return false;
    }
    if (in) {
        if (!qdev_intercept_gpio_in(dev, qtest_irq_handler, NULL, errp)) {
            return false;
        }
    } else if (!qdev_intercept_gpio_out(dev, qtest_irq_handler, NULL,
                                        errp)) {
        return false;
    }
    irq_intercept_dev = dev;
    return true;
}

/* ---- commands ---- */

static AddressSpace *qtest_mem(void)
{
    return &address_space_memory;
}

static bool qtest_cmd_read_n(char **argv, unsigned size, GString *out,
                             Error **errp)
{
    uint64_t addr, v;
    uint8_t buf[8];

    if (!qtest_parse_u64(argv[1], &addr, errp)) {
        return false;
    }
    /* Unassigned addresses read as on hardware (all ones), not FAIL. */
    address_space_read(qtest_mem(), addr, buf, size);
    if (memory_target_is_big_endian()) {
        v = 0;
        for (unsigned i = 0; i < size; i++) {
            v = (v << 8) | buf[i];
        }
    } else {
        v = ldn_le_p(buf, size);
    }
    g_string_append_printf(out, "0x%0*" PRIx64, size * 2, v);
    return true;
}

static bool qtest_cmd_write_n(char **argv, unsigned size, Error **errp)
{
    uint64_t addr, v;
    uint8_t buf[8];

    if (!qtest_parse_u64(argv[1], &addr, errp) ||
        !qtest_parse_u64(argv[2], &v, errp)) {
        return false;
    }
    if (size < 8 && v >> (size * 8)) {
        error_setg(errp, "value '%s' does not fit in %u bytes", argv[2],
                   size);
        return false;
    }
    if (memory_target_is_big_endian()) {
        for (unsigned i = 0; i < size; i++) {
            buf[size - 1 - i] = v >> (i * 8);
        }
    } else {
        stn_le_p(buf, size, v);
    }
    address_space_write(qtest_mem(), addr, buf, size);
    return true;
}

static bool qtest_cmd_in(char **argv, unsigned size, GString *out,
                         Error **errp)
{
    uint64_t port, v;

    if (!qtest_parse_u64(argv[1], &port, errp)) {
        return false;
    }
    if (port > 0xffff) {
        error_setg(errp, "port '%s' out of range", argv[1]);
        return false;
    }
    v = size == 1 ? cpu_inb(port) : size == 2 ? cpu_inw(port) : cpu_inl(port);
    g_string_append_printf(out, "0x%0*" PRIx64, size * 2, v);
    return true;
}

static bool qtest_cmd_out(char **argv, unsigned size, Error **errp)
{
    uint64_t port, v;

    if (!qtest_parse_u64(argv[1], &port, errp) ||
        !qtest_parse_u64(argv[2], &v, errp)) {
        return false;
    }
    if (port > 0xffff) {
        error_setg(errp, "port '%s' out of range", argv[1]);
        return false;
    }
    if (v >> (size * 8)) {
        error_setg(errp, "value '%s' does not fit in %u bytes", argv[2],
                   size);
        return false;
    }
    if (size == 1) {
        cpu_outb(port, v);
    } else if (size == 2) {
        cpu_outw(port, v);
    } else {
        cpu_outl(port, v);
    }
    return true;
}

static bool qtest_cmd_read_buf(char **argv, bool b64, GString *out,
                               Error **errp)
{
    g_autofree uint8_t *data = NULL;
    uint64_t addr, size;

    if (!qtest_parse_u64(argv[1], &addr, errp) ||
        !qtest_parse_size(argv[2], &size, errp)) {
        return false;
    }
    data = g_try_malloc0(size ? size : 1);
    if (!data) {
        error_setg(errp, "out of memory");
        return false;
    }
    address_space_read(qtest_mem(), addr, data, size);
    if (b64) {
        g_autofree char *enc = g_base64_encode(data, size);
        g_string_append(out, enc);
    } else {
        static const char digits[] = "0123456789abcdef";
        size_t start;

        g_string_append(out, "0x");
        start = out->len;
        g_string_set_size(out, start + 2 * size);
        for (uint64_t i = 0; i < size; i++) {
            out->str[start + 2 * i] = digits[data[i] >> 4];
            out->str[start + 2 * i + 1] = digits[data[i] & 0xf];
        }
    }
    return true;
}

static int hexval(char c)
{
    return g_ascii_xdigit_value(c);
}

static bool qtest_cmd_write_buf(char **argv, Error **errp)
{
    g_autofree uint8_t *data = NULL;
    uint64_t addr, size, i;
    const char *hex = argv[3];
    size_t hexlen;

    if (!qtest_parse_u64(argv[1], &addr, errp) ||
        !qtest_parse_size(argv[2], &size, errp)) {
        return false;
    }
    if (strncmp(hex, "0x", 2) && strncmp(hex, "0X", 2)) {
        error_setg(errp, "data must start with 0x");
        return false;
    }
    hex += 2;
    hexlen = strlen(hex);
    if (hexlen % 2 || hexlen / 2 > size) {
        error_setg(errp, "data has %zu hex digits for %" PRIu64 " bytes",
                   hexlen, size);
        return false;
    }
    data = g_try_malloc0(size ? size : 1);
    if (!data) {
        error_setg(errp, "out of memory");
        return false;
    }
    /* Missing trailing bytes are written as zero. */
    for (i = 0; i < hexlen / 2; i++) {
        int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            error_setg(errp, "invalid hex data");
            return false;
        }
        data[i] = hi << 4 | lo;
    }
    address_space_write(qtest_mem(), addr, data, size);
    return true;
}

static bool qtest_cmd_b64write(char **argv, Error **errp)
{
    g_autofree guchar *data = NULL;
    uint64_t addr, size;
    gsize len = 0;
    const char *p;

    if (!qtest_parse_u64(argv[1], &addr, errp) ||
        !qtest_parse_size(argv[2], &size, errp)) {
        return false;
    }
    for (p = argv[3]; *p; p++) {
        if (!g_ascii_isalnum(*p) && *p != '+' && *p != '/' && *p != '=') {
            error_setg(errp, "invalid base64 data");
            return false;
        }
    }
    data = g_base64_decode(argv[3], &len);
    if (len != size) {
        warn_report("qtest: b64write: %" PRIu64 " bytes requested, %zu "
                    "given; writing %" PRIu64, size, (size_t)len,
                    MIN(size, (uint64_t)len));
    }
    address_space_write(qtest_mem(), addr, data, MIN(size, (uint64_t)len));
    return true;
}

static bool qtest_cmd_memset(char **argv, Error **errp)
{
    g_autofree uint8_t *data = NULL;
    uint64_t addr, size, pattern;

    if (!qtest_parse_u64(argv[1], &addr, errp) ||
        !qtest_parse_size(argv[2], &size, errp) ||
        !qtest_parse_u64(argv[3], &pattern, errp)) {
        return false;
    }
    if (pattern > 0xff) {
        error_setg(errp, "pattern '%s' is not a byte", argv[3]);
        return false;
    }
    data = g_try_malloc(size ? size : 1);
    if (!data) {
        error_setg(errp, "out of memory");
        return false;
    }
    memset(data, pattern, size);
    address_space_write(qtest_mem(), addr, data, size);
    return true;
}

static bool qtest_cmd_clock(int argc, char **argv, GString *out,
                            Error **errp)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t v;
    int64_t dest;

    if (!qemu_clock_virtual_is_manual()) {
        error_setg(errp, "the virtual clock is not under qtest control");
        return false;
    }
    if (!strcmp(argv[0], "clock_set")) {
        if (!qtest_check_args(argc, 1, 1, errp) ||
            !qtest_parse_u64(argv[1], &v, errp)) {
            return false;
        }
        dest = MIN(v, (uint64_t)INT64_MAX);
    } else if (argc > 1) {
        if (!qtest_check_args(argc, 0, 1, errp) ||
            !qtest_parse_u64(argv[1], &v, errp)) {
            return false;
        }
        dest = v > (uint64_t)(INT64_MAX - now) ? INT64_MAX : now + (int64_t)v;
    } else {
        /* To the next timer deadline; nowhere if none is armed. */
        dest = qemu_clock_next_expire_ns(QEMU_CLOCK_VIRTUAL);
        if (dest < now) {
            dest = now;
        }
    }
    qtest_clock_warp(dest);
    g_string_append_printf(out, "%" PRIi64,
                           qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return true;
}

static bool qtest_cmd_set_irq_in(int argc, char **argv, Error **errp)
{
    Object *obj;
    uint64_t n;
    int64_t level;
    char *end;

    if (!qtest_check_args(argc, 4, 4, errp)) {
        return false;
    }
    obj = object_resolve_path(argv[1], NULL);
    if (!obj || !object_dynamic_cast(obj, TYPE_DEVICE)) {
        error_setg(errp, "Unknown device '%s'", argv[1]);
        return false;
    }
    if (strcmp(argv[2], "unnamed")) {
        error_setg(errp, "only unnamed GPIO lines are supported");
        return false;
    }
    if (!qtest_parse_u64(argv[3], &n, errp)) {
        return false;
    }
    errno = 0;
    level = g_ascii_strtoll(argv[4], &end, 0);
    if (errno || *end || !*argv[4]) {
        error_setg(errp, "invalid level '%s'", argv[4]);
        return false;
    }
    if (n >= (uint64_t)((DeviceState *)obj)->gpio_in.n) {
        error_setg(errp, "no input line %s", argv[3]);
        return false;
    }
    qemu_set_irq(qdev_get_gpio_in((DeviceState *)obj, n), level);
    return true;
}

/* Returns true with @out filled (after "OK") or false with errp set. */
static bool qtest_dispatch(int argc, char **argv, GString *out, Error **errp)
{
    static const struct {
        const char *name;
        unsigned size;
    } sized[] = {
        { "readb", 1 }, { "readw", 2 }, { "readl", 4 }, { "readq", 8 },
        { "writeb", 1 }, { "writew", 2 }, { "writel", 4 }, { "writeq", 8 },
        { "inb", 1 }, { "inw", 2 }, { "inl", 4 },
        { "outb", 1 }, { "outw", 2 }, { "outl", 4 },
    };
    const char *cmd = argv[0];
    QTestCommandFunc fn;
    size_t i;

    for (i = 0; i < ARRAY_SIZE(sized); i++) {
        unsigned size = sized[i].size;

        if (strcmp(cmd, sized[i].name)) {
            continue;
        }
        if (g_str_has_prefix(cmd, "read")) {
            return qtest_check_args(argc, 1, 1, errp) &&
                   qtest_cmd_read_n(argv, size, out, errp);
        }
        if (g_str_has_prefix(cmd, "write")) {
            return qtest_check_args(argc, 2, 2, errp) &&
                   qtest_cmd_write_n(argv, size, errp);
        }
        if (g_str_has_prefix(cmd, "in")) {
            return qtest_check_args(argc, 1, 1, errp) &&
                   qtest_cmd_in(argv, size, out, errp);
        }
        return qtest_check_args(argc, 2, 2, errp) &&
               qtest_cmd_out(argv, size, errp);
    }
    if (!strcmp(cmd, "read") || !strcmp(cmd, "b64read")) {
        return qtest_check_args(argc, 2, 2, errp) &&
               qtest_cmd_read_buf(argv, cmd[0] == 'b', out, errp);
    }
    if (!strcmp(cmd, "write")) {
        return qtest_check_args(argc, 3, 3, errp) &&
               qtest_cmd_write_buf(argv, errp);
    }
    if (!strcmp(cmd, "b64write")) {
        return qtest_check_args(argc, 3, 3, errp) &&
               qtest_cmd_b64write(argv, errp);
    }
    if (!strcmp(cmd, "memset")) {
        return qtest_check_args(argc, 3, 3, errp) &&
               qtest_cmd_memset(argv, errp);
    }
    if (!strcmp(cmd, "clock_step") || !strcmp(cmd, "clock_set")) {
        return qtest_cmd_clock(argc, argv, out, errp);
    }
    if (!strcmp(cmd, "irq_intercept_in") || !strcmp(cmd, "irq_intercept_out")) {
        return qtest_check_args(argc, 1, 1, errp) &&
               qtest_irq_intercept(argv[1], !strcmp(cmd, "irq_intercept_in"),
                                   errp);
    }
    if (!strcmp(cmd, "set_irq_in")) {
        return qtest_cmd_set_irq_in(argc, argv, errp);
    }
    if (!strcmp(cmd, "endianness")) {
        if (!qtest_check_args(argc, 0, 0, errp)) {
            return false;
        }
        g_string_append(out, memory_target_is_big_endian() ? "big" : "little");
        return true;
    }
    fn = qtest_commands ? g_hash_table_lookup(qtest_commands, cmd) : NULL;
    if (fn) {
        return fn(argc, argv, out, errp);
    }
    error_setg(errp, "Unknown command '%s'", cmd);
    return false;
}

static void qtest_process_line(char *line)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_auto(GStrv) words = NULL;
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    Error *err = NULL;
    size_t len = strlen(line);
    size_t i;

    if (len && line[len - 1] == '\r') {
        line[len - 1] = '\0';
    }
    qtest_log_line('R', line);
    words = g_strsplit(line, " ", -1);
    for (i = 0; words[i]; i++) {
        if (*words[i]) {
            g_ptr_array_add(argv, words[i]);
        }
    }
    if (!argv->len) {
        /* QEMU ignores blank lines too. */
        return;
    }
    g_ptr_array_add(argv, NULL);
    trace_qtest_command((const char *)argv->pdata[0]);
    if (qtest_dispatch(argv->len - 1, (char **)argv->pdata, out, &err)) {
        g_autofree char *reply = out->len ?
            g_strdup_printf("OK %s", out->str) : g_strdup("OK");
        qtest_send_line(reply);
    } else {
        g_autofree char *reply =
            g_strdup_printf("FAIL %s", error_get_pretty(err));
        error_free(err);
        qtest_send_line(reply);
    }
}

static int qtest_can_read(void *opaque)
{
    return 65536;
}

static void qtest_read(void *opaque, const uint8_t *buf, int size)
{
    int i;

    for (i = 0; i < size; i++) {
        if (buf[i] == '\n') {
            if (qtest_discarding) {
                qtest_discarding = false;
                qtest_send_line("FAIL line too long");
            } else {
                g_autofree char *line =
                    g_strndup(qtest_inbuf->str, qtest_inbuf->len);
                qtest_process_line(line);
            }
            g_string_truncate(qtest_inbuf, 0);
            continue;
        }
        if (qtest_discarding) {
            continue;
        }
        if (qtest_inbuf->len >= QTEST_MAX_LINE) {
            qtest_discarding = true;
            g_string_truncate(qtest_inbuf, 0);
            continue;
        }
        /* NUL bytes would cut the line short: keep them visible as bad. */
        g_string_append_c(qtest_inbuf, buf[i] ? buf[i] : '?');
    }
}

static void qtest_event(void *opaque, QEMUChrEvent event)
{
    g_string_truncate(qtest_inbuf, 0);
    qtest_discarding = false;
    if (event == CHR_EVENT_OPENED) {
        qtest_log_start = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
        g_hash_table_remove_all(irq_levels);
        qtest_chr_ready = true;
    } else {
        qtest_chr_ready = false;
    }
}

bool qtest_server_init(const char *spec, const char *logfile, Error **errp)
{
    Chardev *chr;

    if (qtest_inbuf) {
        error_setg(errp, "qtest server already started");
        return false;
    }
    chr = qemu_chr_new("qtest", spec, errp);
    if (!chr) {
        if (errp && !*errp) {
            error_setg(errp, "qtest needs a character device, not '%s'",
                       spec);
        }
        return false;
    }
    if (!qemu_chr_fe_init(&qtest_be, chr, errp)) {
        return false;
    }
    if (logfile) {
        qtest_log = !strcmp(logfile, "-") ? stderr : fopen(logfile, "w");
        if (!qtest_log) {
            error_setg_errno(errp, errno, "Could not open qtest log '%s'",
                             logfile);
            qemu_chr_fe_deinit(&qtest_be, true);
            return false;
        }
    }
    qtest_inbuf = g_string_new(NULL);
    irq_levels = g_hash_table_new(g_direct_hash, g_direct_equal);
    qtest_log_start = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    qemu_chr_fe_set_handlers(&qtest_be, qtest_can_read, qtest_read,
                             qtest_event, NULL);
    return true;
}
