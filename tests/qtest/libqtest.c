/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libqtest: runs a conduit-system-* binary under the qtest accelerator and
 * talks to it over two UNIX sockets that this process listens on (the
 * binary connects: no start-up race, no polling for socket files).
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "config-host.h"
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "tests/exe-wrapper.h"


struct QTestState {
    pid_t pid;
    bool reaped;
    int status;
    int qtest_fd;
    int qmp_fd;
    int stderr_fd;
    GString *qtest_rx;
    GString *qmp_rx;
    GString *stderr_text;
    GQueue *events;         /* JsonObject * */
    GHashTable *irq_raised;     /* line numbers currently raised */
    bool big_endian;
    char *tmpdir;
    char *qtest_path;
    char *qmp_path;
};

static GList *live_children;    /* pid_t as pointers, killed at exit */

static void qtest_kill_all_children(void)
{
    GList *l;

    for (l = live_children; l; l = l->next) {
        kill(GPOINTER_TO_INT(l->data), SIGKILL);
    }
}

static int qtest_timeout_ms(void)
{
    const char *env = getenv("QTEST_TIMEOUT");
    int secs = env ? atoi(env) : 0;

    return (secs > 0 ? secs : 60) * 1000;
}

const char *qtest_get_binary(void)
{
    const char *env = getenv("QTEST_BINARY");

    return env && *env ? env : CONDUIT_BUILD_DIR "/conduit-system-x86_64";
}

static void qtest_drain_stderr(QTestState *s)
{
    char buf[4096];
    ssize_t n;

    while (s->stderr_fd >= 0) {
        n = read(s->stderr_fd, buf, sizeof(buf));
        if (n > 0) {
            g_string_append_len(s->stderr_text, buf, n);
            /* Keep the child's messages visible in the test log. */
            if (write(STDERR_FILENO, buf, n) < 0) {
                /* nothing useful to do */
            }
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            return;
        }
        close(s->stderr_fd);
        s->stderr_fd = -1;
    }
}

static bool qtest_reap(QTestState *s, int options)
{
    pid_t r;

    if (s->reaped) {
        return true;
    }
    do {
        r = waitpid(s->pid, &s->status, options);
    } while (r < 0 && errno == EINTR);
    if (r == s->pid) {
        s->reaped = true;
        live_children = g_list_remove(live_children, GINT_TO_POINTER(s->pid));
        return true;
    }
    return false;
}

static void G_GNUC_NORETURN G_GNUC_PRINTF(2, 3)
qtest_fatal(QTestState *s, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (s) {
        int i;

        /* Give a dying child a moment so its last words are captured. */
        for (i = 0; i < 100 && !qtest_reap(s, WNOHANG); i++) {
            qtest_drain_stderr(s);
            g_usleep(10 * 1000);
        }
        if (!s->reaped) {
            kill(s->pid, SIGKILL);
            qtest_reap(s, 0);
        }
        if (s->stderr_fd >= 0) {
            fcntl(s->stderr_fd, F_SETFL, 0);
            qtest_drain_stderr(s);
        }
        g_printerr("libqtest: child status 0x%x\n", s->status);
    }
    g_error("libqtest: %s", msg);
}

bool qtest_probe_child(QTestState *s)
{
    return !qtest_reap(s, WNOHANG);
}

const char *qtest_get_stderr(QTestState *s)
{
    qtest_drain_stderr(s);
    return s->stderr_text->str;
}

/*
 * Waits until fd is readable; collects stderr meanwhile.  Returns false
 * on timeout or if the child exited with nothing left to read.
 */
static bool qtest_wait_fd(QTestState *s, int fd, int timeout_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;

    for (;;) {
        struct pollfd pfd[2] = {
            { .fd = fd, .events = POLLIN },
            { .fd = s->stderr_fd, .events = POLLIN },
        };
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;
        int r;

        if (left <= 0) {
            return false;
        }
        r = poll(pfd, s->stderr_fd >= 0 ? 2 : 1, MIN(left, 100));
        if (r < 0 && errno != EINTR) {
            return false;
        }
        if (pfd[0].revents) {
            return true;
        }
        if (s->stderr_fd >= 0 && pfd[1].revents) {
            qtest_drain_stderr(s);
        }
        if (r == 0 && !qtest_probe_child(s)) {
            /* One last look: the child may have written before dying. */
            return poll(pfd, 1, 0) > 0;
        }
    }
}

/* Reads one '\n'-terminated line from fd into a new string (no newline). */
static char *qtest_read_line(QTestState *s, int fd, GString *rx,
                             const char *what)
{
    char buf[4096];
    char *nl;
    ssize_t n;

    while (!(nl = memchr(rx->str, '\n', rx->len))) {
        if (!qtest_wait_fd(s, fd, qtest_timeout_ms())) {
            qtest_fatal(s, "timeout or child exit waiting for %s "
                        "(child %s)", what,
                        qtest_probe_child(s) ? "alive" : "exited");
        }
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            qtest_fatal(s, "%s: connection closed by the child", what);
        }
        g_string_append_len(rx, buf, n);
    }
    {
        size_t len = nl - rx->str;
        char *line = g_strndup(rx->str, len);

        g_string_erase(rx, 0, len + 1);
        if (len && line[len - 1] == '\r') {
            line[len - 1] = '\0';
        }
        return line;
    }
}

static void qtest_send_all(QTestState *s, int fd, const char *data,
                           size_t len)
{
    while (len) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            qtest_fatal(s, "send failed: %s", g_strerror(errno));
        }
        data += n;
        len -= n;
    }
}

static int qtest_listen(const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert(fd >= 0);
    g_assert(strlen(path) < sizeof(addr.sun_path));
    strcpy(addr.sun_path, path);
    g_assert(bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0);
    g_assert(listen(fd, 1) == 0);
    return fd;
}

static int qtest_accept(QTestState *s, int lfd, const char *what)
{
    int fd;

    if (!qtest_wait_fd(s, lfd, qtest_timeout_ms())) {
        qtest_fatal(s, "the binary did not connect its %s socket "
                    "(child %s)", what,
                    qtest_probe_child(s) ? "alive" : "exited");
    }
    fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        qtest_fatal(s, "accept: %s", g_strerror(errno));
    }
    return fd;
}

static void qtest_child_setup(pid_t parent)
{
    /* Die with the test, even if it crashes. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(1);
    }
}

static pid_t qtest_spawn(GPtrArray *argv, int *out_fd, int *err_fd)
{
    int out_pipe[2] = { -1, -1 }, err_pipe[2];
    pid_t parent = getpid();
    pid_t pid;

    if (test_exe_wrapper()) {
        g_auto(GStrv) wrapper = NULL;

        /* A cross build's binary runs through the same wrapper as we do. */
        g_assert_true(g_shell_parse_argv(test_exe_wrapper(), NULL, &wrapper,
                                         NULL));
        for (int i = g_strv_length(wrapper) - 1; i >= 0; i--) {
            g_ptr_array_insert(argv, 0, g_strdup(wrapper[i]));
        }
    }
    g_assert(pipe2(err_pipe, O_CLOEXEC) == 0);
    if (out_fd) {
        g_assert(pipe2(out_pipe, O_CLOEXEC) == 0);
    }
    static bool atexit_done;
    if (!atexit_done) {
        atexit(qtest_kill_all_children);
        atexit_done = true;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    g_assert(pid >= 0);
    if (pid == 0) {
        qtest_child_setup(parent);
        dup2(err_pipe[1], STDERR_FILENO);
        if (out_fd) {
            dup2(out_pipe[1], STDOUT_FILENO);
        }
        execv(argv->pdata[0], (char **)argv->pdata);
        fprintf(stderr, "exec %s: %s\n", (char *)argv->pdata[0],
                strerror(errno));
        _exit(127);
    }
    live_children = g_list_prepend(live_children, GINT_TO_POINTER(pid));
    close(err_pipe[1]);
    fcntl(err_pipe[0], F_SETFL, O_NONBLOCK);
    *err_fd = err_pipe[0];
    if (out_fd) {
        close(out_pipe[1]);
        fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
        *out_fd = out_pipe[0];
    }
    return pid;
}

static void qtest_add_args(GPtrArray *argv, const char *args)
{
    g_auto(GStrv) extra = NULL;
    GError *gerr = NULL;
    int i;

    if (!args || !*args || strspn(args, " \t\n") == strlen(args)) {
        return;
    }
    if (!g_shell_parse_argv(args, NULL, &extra, &gerr)) {
        g_error("libqtest: cannot parse arguments '%s': %s", args,
                gerr->message);
    }
    for (i = 0; extra[i]; i++) {
        g_ptr_array_add(argv, g_strdup(extra[i]));
    }
}

static JsonObject *qtest_parse_object(QTestState *s, const char *text)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) gerr = NULL;
    JsonNode *root;

    if (!json_parser_load_from_data(parser, text, -1, &gerr)) {
        qtest_fatal(s, "bad JSON from the binary: %s: %s", gerr->message,
                    text);
    }
    root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        qtest_fatal(s, "QMP message is not an object: %s", text);
    }
    return json_node_dup_object(root);
}

/* Next QMP message of any kind. */
static JsonObject *qtest_qmp_read_message(QTestState *s)
{
    g_autofree char *line = NULL;

    do {
        g_free(line);
        line = qtest_read_line(s, s->qmp_fd, s->qmp_rx, "a QMP message");
    } while (!*line);
    return qtest_parse_object(s, line);
}

QTestState *qtest_init(const char *extra_args)
{
    QTestState *s = g_new0(QTestState, 1);
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(JsonObject) greeting = NULL;
    g_autoptr(JsonNode) ret = NULL;
    g_autoptr(GError) gerr = NULL;
    int qtest_lfd, qmp_lfd;
    char *reply;

    s->tmpdir = g_dir_make_tmp("qtest-XXXXXX", &gerr);
    g_assert_no_error(gerr);
    s->qtest_path = g_build_filename(s->tmpdir, "qtest.sock", NULL);
    s->qmp_path = g_build_filename(s->tmpdir, "qmp.sock", NULL);
    s->qtest_rx = g_string_new(NULL);
    s->qmp_rx = g_string_new(NULL);
    s->stderr_text = g_string_new(NULL);
    s->events = g_queue_new();
    s->irq_raised = g_hash_table_new(g_direct_hash, g_direct_equal);
    s->qtest_fd = s->qmp_fd = -1;
    qtest_lfd = qtest_listen(s->qtest_path);
    qmp_lfd = qtest_listen(s->qmp_path);

    g_ptr_array_add(argv, g_strdup(qtest_get_binary()));
    g_ptr_array_add(argv, g_strdup("-qtest"));
    g_ptr_array_add(argv, g_strdup_printf("unix:%s", s->qtest_path));
    if (getenv("QTEST_LOG")) {
        g_ptr_array_add(argv, g_strdup("-qtest-log"));
        g_ptr_array_add(argv, g_strdup("/dev/fd/2"));
    }
    g_ptr_array_add(argv, g_strdup("-qmp"));
    g_ptr_array_add(argv, g_strdup_printf("unix:%s", s->qmp_path));
    g_ptr_array_add(argv, g_strdup("-accel"));
    g_ptr_array_add(argv, g_strdup("qtest"));
    g_ptr_array_add(argv, g_strdup("-display"));
    g_ptr_array_add(argv, g_strdup("none"));
    qtest_add_args(argv, extra_args);
    g_ptr_array_add(argv, NULL);

    s->pid = qtest_spawn(argv, NULL, &s->stderr_fd);
    /* The binary connects QMP and qtest in its own order: take both. */
    s->qtest_fd = qtest_accept(s, qtest_lfd, "qtest");
    s->qmp_fd = qtest_accept(s, qmp_lfd, "QMP");
    close(qtest_lfd);
    close(qmp_lfd);
    unlink(s->qtest_path);
    unlink(s->qmp_path);

    greeting = qtest_qmp_read_message(s);
    if (!json_object_has_member(greeting, "QMP")) {
        qtest_fatal(s, "no QMP greeting");
    }
    ret = qtest_qmp_assert_success(s, "{'execute': 'qmp_capabilities'}");

    reply = qtest_raw_cmd(s, "endianness");
    s->big_endian = !strcmp(reply, "OK big");
    g_free(reply);
    return s;
}

QTestState *qtest_initf(const char *fmt, ...)
{
    g_autofree char *args = NULL;
    va_list ap;

    va_start(ap, fmt);
    args = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    return qtest_init(args);
}

int qtest_wait_exit(QTestState *s)
{
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)qtest_timeout_ms() * 1000;

    while (!qtest_reap(s, WNOHANG)) {
        if (g_get_monotonic_time() > deadline) {
            qtest_fatal(s, "the binary did not exit");
        }
        qtest_drain_stderr(s);
        g_usleep(10 * 1000);
    }
    qtest_drain_stderr(s);
    return s->status;
}

void qtest_quit(QTestState *s)
{
    if (!s) {
        return;
    }
    if (!s->reaped) {
        gint64 deadline = g_get_monotonic_time() +
                          (gint64)qtest_timeout_ms() * 1000;

        kill(s->pid, SIGTERM);
        while (!qtest_reap(s, WNOHANG) && g_get_monotonic_time() < deadline) {
            qtest_drain_stderr(s);
            g_usleep(5 * 1000);
        }
        if (!s->reaped) {
            kill(s->pid, SIGKILL);
            qtest_reap(s, 0);
            g_test_message("libqtest: child ignored SIGTERM, killed");
            g_test_fail();
        } else if (!WIFEXITED(s->status) || WEXITSTATUS(s->status)) {
            /* A crash or a sanitizer report at exit is a test failure. */
            g_test_message("libqtest: child ended abnormally (status 0x%x)",
                           s->status);
            g_test_fail();
        }
    }
    qtest_drain_stderr(s);
    if (s->qtest_fd >= 0) {
        close(s->qtest_fd);
    }
    if (s->qmp_fd >= 0) {
        close(s->qmp_fd);
    }
    if (s->stderr_fd >= 0) {
        close(s->stderr_fd);
    }
    g_queue_free_full(s->events, (GDestroyNotify)json_object_unref);
    g_hash_table_destroy(s->irq_raised);
    g_string_free(s->qtest_rx, TRUE);
    g_string_free(s->qmp_rx, TRUE);
    g_string_free(s->stderr_text, TRUE);
    rmdir(s->tmpdir);
    g_free(s->tmpdir);
    g_free(s->qtest_path);
    g_free(s->qmp_path);
    g_free(s);
}

int qtest_run_expect_fail(const char *args, char **stdout_text,
                          char **stderr_text)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)qtest_timeout_ms() * 1000;
    int out_fd, err_fd, status;
    pid_t pid, r;

    g_ptr_array_add(argv, g_strdup(qtest_get_binary()));
    qtest_add_args(argv, args);
    g_ptr_array_add(argv, NULL);
    pid = qtest_spawn(argv, &out_fd, &err_fd);

    while (out_fd >= 0 || err_fd >= 0) {
        struct pollfd pfd[2] = {
            { .fd = out_fd, .events = POLLIN },
            { .fd = err_fd, .events = POLLIN },
        };
        char buf[4096];
        int i;

        if (g_get_monotonic_time() > deadline) {
            kill(pid, SIGKILL);
            g_error("libqtest: '%s' did not exit", args);
        }
        if (poll(pfd, 2, 100) <= 0) {
            continue;
        }
        for (i = 0; i < 2; i++) {
            int *fd = i ? &err_fd : &out_fd;
            GString *dst = i ? err : out;
            ssize_t n;

            if (*fd < 0 || !pfd[i].revents) {
                continue;
            }
            n = read(*fd, buf, sizeof(buf));
            if (n > 0) {
                g_string_append_len(dst, buf, n);
            } else if (n == 0 || errno != EAGAIN) {
                close(*fd);
                *fd = -1;
            }
        }
    }
    do {
        r = waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    live_children = g_list_remove(live_children, GINT_TO_POINTER(pid));
    if (stdout_text) {
        *stdout_text = g_strdup(out->str);
    }
    if (stderr_text) {
        *stderr_text = g_strdup(err->str);
    }
    return status;
}

void qtest_assert_start_fails(const char *args, const char *needle)
{
    g_autofree char *err = NULL;
    int status = qtest_run_expect_fail(args, NULL, &err);

    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
    if (!strstr(err, needle)) {
        g_error("'%s': expected '%s' on stderr, got '%s'", args, needle,
                err);
    }
}

/* ---- qtest protocol ---- */

static void qtest_handle_irq_line(QTestState *s, const char *line)
{
    const char *p = line + 4;
    bool raise = g_str_has_prefix(p, "raise ");
    int n;

    if (!raise && !g_str_has_prefix(p, "lower ")) {
        qtest_fatal(s, "bad IRQ line '%s'", line);
    }
    n = atoi(p + 6);
    if (n < 0) {
        qtest_fatal(s, "IRQ number out of range in '%s'", line);
    }
    if (raise) {
        g_hash_table_add(s->irq_raised, GINT_TO_POINTER(n));
    } else {
        g_hash_table_remove(s->irq_raised, GINT_TO_POINTER(n));
    }
}

char *qtest_raw_cmd(QTestState *s, const char *line)
{
    g_autofree char *out = g_strconcat(line, "\n", NULL);

    qtest_send_all(s, s->qtest_fd, out, strlen(out));
    for (;;) {
        char *reply = qtest_read_line(s, s->qtest_fd, s->qtest_rx,
                                      "a qtest reply");
        if (g_str_has_prefix(reply, "IRQ ")) {
            qtest_handle_irq_line(s, reply);
            g_free(reply);
            continue;
        }
        return reply;
    }
}

/* Sends a command that must succeed; returns what follows "OK". */
static char *G_GNUC_PRINTF(2, 3) qtest_cmd_ok(QTestState *s,
                                              const char *fmt, ...)
{
    g_autofree char *line = NULL;
    g_autofree char *reply = NULL;
    va_list ap;

    va_start(ap, fmt);
    line = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    reply = qtest_raw_cmd(s, line);
    if (!strcmp(reply, "OK")) {
        return g_strdup("");
    }
    if (!g_str_has_prefix(reply, "OK ")) {
        qtest_fatal(s, "'%s' -> '%s'", line, reply);
    }
    return g_strdup(reply + 3);
}

static uint64_t qtest_cmd_value(QTestState *s, const char *line)
{
    g_autofree char *v = qtest_cmd_ok(s, "%s", line);
    char *end;
    uint64_t val;

    errno = 0;
    val = g_ascii_strtoull(v, &end, 0);
    if (errno || end == v || *end) {
        qtest_fatal(s, "'%s': bad value '%s'", line, v);
    }
    return val;
}

static uint64_t qtest_read_n(QTestState *s, const char *cmd, uint64_t addr)
{
    g_autofree char *line = g_strdup_printf("%s 0x%" PRIx64, cmd, addr);

    return qtest_cmd_value(s, line);
}

uint8_t qtest_readb(QTestState *s, uint64_t addr)
{
    return qtest_read_n(s, "readb", addr);
}

uint16_t qtest_readw(QTestState *s, uint64_t addr)
{
    return qtest_read_n(s, "readw", addr);
}

uint32_t qtest_readl(QTestState *s, uint64_t addr)
{
    return qtest_read_n(s, "readl", addr);
}

uint64_t qtest_readq(QTestState *s, uint64_t addr)
{
    return qtest_read_n(s, "readq", addr);
}

static void qtest_write_n(QTestState *s, const char *cmd, uint64_t addr,
                          uint64_t value)
{
    g_free(qtest_cmd_ok(s, "%s 0x%" PRIx64 " 0x%" PRIx64, cmd, addr, value));
}

void qtest_writeb(QTestState *s, uint64_t addr, uint8_t value)
{
    qtest_write_n(s, "writeb", addr, value);
}

void qtest_writew(QTestState *s, uint64_t addr, uint16_t value)
{
    qtest_write_n(s, "writew", addr, value);
}

void qtest_writel(QTestState *s, uint64_t addr, uint32_t value)
{
    qtest_write_n(s, "writel", addr, value);
}

void qtest_writeq(QTestState *s, uint64_t addr, uint64_t value)
{
    qtest_write_n(s, "writeq", addr, value);
}

void qtest_memread(QTestState *s, uint64_t addr, void *data, size_t size)
{
    g_autofree char *v = qtest_cmd_ok(s, "read 0x%" PRIx64 " 0x%zx", addr,
                                      size);
    uint8_t *out = data;
    size_t i;

    if (strncmp(v, "0x", 2) || strlen(v + 2) != size * 2) {
        qtest_fatal(s, "read: bad reply '%.64s'", v);
    }
    for (i = 0; i < size; i++) {
        int hi = g_ascii_xdigit_value(v[2 + 2 * i]);
        int lo = g_ascii_xdigit_value(v[3 + 2 * i]);
        if (hi < 0 || lo < 0) {
            qtest_fatal(s, "read: bad hex in reply");
        }
        out[i] = hi << 4 | lo;
    }
}

void qtest_memwrite(QTestState *s, uint64_t addr, const void *data,
                    size_t size)
{
    g_autoptr(GString) line = g_string_new(NULL);
    const uint8_t *in = data;
    size_t i;

    g_string_printf(line, "write 0x%" PRIx64 " 0x%zx 0x", addr, size);
    for (i = 0; i < size; i++) {
        g_string_append_printf(line, "%02x", in[i]);
    }
    g_free(qtest_cmd_ok(s, "%s", line->str));
}

void qtest_bufread(QTestState *s, uint64_t addr, void *data, size_t size)
{
    g_autofree char *v = qtest_cmd_ok(s, "b64read 0x%" PRIx64 " 0x%zx",
                                      addr, size);
    g_autofree guchar *dec = NULL;
    gsize len = 0;

    dec = g_base64_decode(v, &len);
    if (len != size) {
        qtest_fatal(s, "b64read: %zu bytes back for %zu", (size_t)len, size);
    }
    memcpy(data, dec, size);
}

void qtest_bufwrite(QTestState *s, uint64_t addr, const void *data,
                    size_t size)
{
    g_autofree char *enc = g_base64_encode(data, size);

    g_free(qtest_cmd_ok(s, "b64write 0x%" PRIx64 " 0x%zx %s", addr, size,
                        enc));
}

void qtest_memset(QTestState *s, uint64_t addr, uint8_t pattern, size_t size)
{
    g_free(qtest_cmd_ok(s, "memset 0x%" PRIx64 " 0x%zx 0x%02x", addr, size,
                        pattern));
}

static uint32_t qtest_in_n(QTestState *s, const char *cmd, uint16_t port)
{
    g_autofree char *line = g_strdup_printf("%s 0x%x", cmd, port);

    return qtest_cmd_value(s, line);
}

uint8_t qtest_inb(QTestState *s, uint16_t port)
{
    return qtest_in_n(s, "inb", port);
}

uint16_t qtest_inw(QTestState *s, uint16_t port)
{
    return qtest_in_n(s, "inw", port);
}

uint32_t qtest_inl(QTestState *s, uint16_t port)
{
    return qtest_in_n(s, "inl", port);
}

void qtest_outb(QTestState *s, uint16_t port, uint8_t value)
{
    g_free(qtest_cmd_ok(s, "outb 0x%x 0x%x", port, value));
}

void qtest_outw(QTestState *s, uint16_t port, uint16_t value)
{
    g_free(qtest_cmd_ok(s, "outw 0x%x 0x%x", port, value));
}

void qtest_outl(QTestState *s, uint16_t port, uint32_t value)
{
    g_free(qtest_cmd_ok(s, "outl 0x%x 0x%x", port, value));
}

void qtest_irq_intercept_in(QTestState *s, const char *qom_path)
{
    g_free(qtest_cmd_ok(s, "irq_intercept_in %s", qom_path));
}

void qtest_irq_intercept_out(QTestState *s, const char *qom_path)
{
    g_free(qtest_cmd_ok(s, "irq_intercept_out %s", qom_path));
}

bool qtest_get_irq(QTestState *s, int num)
{
    g_assert(num >= 0);
    /* A round trip makes sure every IRQ line sent before it was seen. */
    g_free(qtest_cmd_ok(s, "endianness"));
    return g_hash_table_contains(s->irq_raised, GINT_TO_POINTER(num));
}

int64_t qtest_clock_step(QTestState *s, int64_t step_ns)
{
    g_autofree char *line = g_strdup_printf("clock_step %" PRIi64, step_ns);

    return qtest_cmd_value(s, line);
}

int64_t qtest_clock_set(QTestState *s, int64_t val_ns)
{
    g_autofree char *line = g_strdup_printf("clock_set %" PRIi64, val_ns);

    return qtest_cmd_value(s, line);
}

bool qtest_big_endian(QTestState *s)
{
    return s->big_endian;
}

/* ---- QMP ---- */

/* Turns 'single quoted' JSON strings into "double quoted" ones. */
static char *qtest_json_requote(const char *in)
{
    GString *out = g_string_new(NULL);
    char quote = 0;
    const char *p;

    for (p = in; *p; p++) {
        char c = *p;

        if (!quote) {
            if (c == '\'' || c == '"') {
                quote = c;
                g_string_append_c(out, '"');
            } else {
                g_string_append_c(out, c);
            }
            continue;
        }
        if (c == '\\' && p[1]) {
            if (quote == '\'' && p[1] == '\'') {
                g_string_append_c(out, '\'');
            } else {
                g_string_append_c(out, c);
                g_string_append_c(out, p[1]);
            }
            p++;
        } else if (c == quote) {
            g_string_append_c(out, '"');
            quote = 0;
        } else if (c == '"') {
            g_string_append(out, "\\\"");
        } else {
            g_string_append_c(out, c);
        }
    }
    return g_string_free(out, FALSE);
}

void qtest_qmp_send_raw(QTestState *s, const char *text)
{
    qtest_send_all(s, s->qmp_fd, text, strlen(text));
}

JsonObject *qtest_qmp_receive(QTestState *s)
{
    for (;;) {
        JsonObject *msg = qtest_qmp_read_message(s);

        if (json_object_has_member(msg, "event")) {
            g_queue_push_tail(s->events, msg);
            continue;
        }
        return msg;
    }
}

JsonObject *qtest_vqmp(QTestState *s, const char *fmt, va_list ap)
{
    g_autofree char *text = g_strdup_vprintf(fmt, ap);
    g_autofree char *json = qtest_json_requote(text);
    g_autofree char *line = g_strconcat(json, "\n", NULL);

    /*
     * One send: the binary acts on the closing brace, and after "quit" a
     * separate newline would hit a closed socket.
     */
    qtest_qmp_send_raw(s, line);
    return qtest_qmp_receive(s);
}

JsonObject *qtest_qmp(QTestState *s, const char *fmt, ...)
{
    JsonObject *r;
    va_list ap;

    va_start(ap, fmt);
    r = qtest_vqmp(s, fmt, ap);
    va_end(ap);
    return r;
}

pid_t qtest_pid(QTestState *s)
{
    return s->pid;
}

JsonObject *qtest_qmp_fds(QTestState *s, const int *fds, size_t nfds,
                          const char *fmt, ...)
{
    g_autofree char *text = NULL;
    g_autofree char *json = NULL;
    g_autofree char *line = NULL;
    char control[CMSG_SPACE(16 * sizeof(int))] = { 0 };
    struct iovec iov;
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
    struct cmsghdr *cmsg;
    va_list ap;
    ssize_t n;

    g_assert_cmpuint(nfds, >=, 1);
    g_assert_cmpuint(nfds, <=, 16);
    va_start(ap, fmt);
    text = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    json = qtest_json_requote(text);
    line = g_strconcat(json, "\n", NULL);
    iov.iov_base = line;
    iov.iov_len = strlen(line);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
    cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(nfds * sizeof(int));
    memcpy(CMSG_DATA(cmsg), fds, nfds * sizeof(int));
    do {
        n = sendmsg(s->qmp_fd, &msg, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)iov.iov_len) {
        qtest_fatal(s, "sendmsg with fds failed: %s", g_strerror(errno));
    }
    return qtest_qmp_receive(s);
}

const char *qtest_qmp_error_class(JsonObject *reply)
{
    JsonObject *err = json_object_has_member(reply, "error") ?
        json_object_get_object_member(reply, "error") : NULL;

    return err ? json_object_get_string_member(err, "class") : NULL;
}

const char *qtest_qmp_error_desc(JsonObject *reply)
{
    JsonObject *err = json_object_has_member(reply, "error") ?
        json_object_get_object_member(reply, "error") : NULL;

    return err ? json_object_get_string_member(err, "desc") : NULL;
}

JsonNode *qtest_qmp_assert_success(QTestState *s, const char *fmt, ...)
{
    g_autoptr(JsonObject) reply = NULL;
    va_list ap;

    va_start(ap, fmt);
    reply = qtest_vqmp(s, fmt, ap);
    va_end(ap);
    if (!json_object_has_member(reply, "return")) {
        qtest_fatal(s, "QMP command failed: %s: %s",
                    qtest_qmp_error_class(reply) ?: "?",
                    qtest_qmp_error_desc(reply) ?: "?");
    }
    return json_node_copy(json_object_get_member(reply, "return"));
}

static JsonObject *qtest_take_event(QTestState *s, const char *event)
{
    GList *l;

    for (l = s->events->head; l; l = l->next) {
        JsonObject *ev = l->data;

        if (!strcmp(json_object_get_string_member(ev, "event"), event)) {
            g_queue_delete_link(s->events, l);
            return ev;
        }
    }
    return NULL;
}

JsonObject *qtest_qmp_eventwait_timeout(QTestState *s, const char *event,
                                        int timeout_ms)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    JsonObject *ev;

    while (!(ev = qtest_take_event(s, event))) {
        gint64 left = (deadline - g_get_monotonic_time()) / 1000;

        if (!strchr(s->qmp_rx->str, '\n')) {
            if (left <= 0 || !qtest_wait_fd(s, s->qmp_fd, left)) {
                return NULL;
            }
        }
        {
            char buf[4096];
            ssize_t n;

            if (!strchr(s->qmp_rx->str, '\n')) {
                n = read(s->qmp_fd, buf, sizeof(buf));
                if (n <= 0) {
                    return NULL;
                }
                g_string_append_len(s->qmp_rx, buf, n);
                continue;
            }
        }
        {
            JsonObject *msg = qtest_qmp_read_message(s);

            if (!json_object_has_member(msg, "event")) {
                qtest_fatal(s, "unexpected QMP reply while waiting for %s",
                            event);
            }
            g_queue_push_tail(s->events, msg);
        }
    }
    return ev;
}

JsonObject *qtest_qmp_eventwait(QTestState *s, const char *event)
{
    JsonObject *ev = qtest_qmp_eventwait_timeout(s, event,
                                                 qtest_timeout_ms());

    if (!ev) {
        qtest_fatal(s, "timeout waiting for QMP event %s", event);
    }
    return ev;
}

const char *qtest_migrate_status(QTestState *s)
{
    static char buf[64];
    g_autoptr(JsonObject) r = qtest_qmp(s, "{'execute': 'query-migrate'}");
    JsonObject *ret = json_object_get_object_member(r, "return");

    g_strlcpy(buf, json_object_has_member(ret, "status") ?
              json_object_get_string_member(ret, "status") : "none",
              sizeof(buf));
    return buf;
}

const char *qtest_migrate_wait_status(QTestState *s, const char *want,
                                      gint64 timeout_us)
{
    g_auto(GStrv) names = g_strsplit(want, "|", 0);
    gint64 deadline = g_get_monotonic_time() + timeout_us;

    for (;;) {
        const char *st = qtest_migrate_status(s);

        if (g_strv_contains((const char *const *)names, st)) {
            return st;
        }
        if (g_get_monotonic_time() > deadline) {
            g_error("migration status stayed '%s', wanted %s", st, want);
        }
        g_usleep(20 * 1000);
    }
}

void qtest_migrate_and_wait(QTestState *src, QTestState *dst,
                            const char *uri)
{
    const gint64 limit = 60 * G_USEC_PER_SEC;

    json_node_unref(qtest_qmp_assert_success(src,
        "{'execute': 'migrate', 'arguments': {'uri': '%s'}}", uri));
    g_assert_cmpstr(qtest_migrate_wait_status(src, "completed|failed",
                                              limit), ==, "completed");
    g_assert_cmpstr(qtest_migrate_wait_status(dst, "completed|failed",
                                              limit), ==, "completed");
}

void qtest_qmp_wait_shutdown(QTestState *s, const char *reason)
{
    JsonObject *ev = qtest_qmp_eventwait(s, "SHUTDOWN");

    g_assert_cmpstr(json_object_get_string_member(
                        json_object_get_object_member(ev, "data"), "reason"),
                    ==, reason);
    json_object_unref(ev);
}

void qtest_qmp_device_add(QTestState *s, const char *driver, const char *id,
                          const char *fmt, ...)
{
    g_autoptr(JsonObject) args = NULL;
    g_autoptr(JsonObject) cmd = json_object_new();
    g_autoptr(JsonObject) reply = NULL;
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_node_new(JSON_NODE_OBJECT);
    g_autofree char *text = NULL;
    va_list ap;

    if (fmt && *fmt) {
        g_autofree char *props = NULL;
        g_autofree char *json = NULL;

        va_start(ap, fmt);
        props = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        json = qtest_json_requote(props);
        args = qtest_parse_object(s, json);
    } else {
        args = json_object_new();
    }
    json_object_set_string_member(args, "driver", driver);
    if (id) {
        json_object_set_string_member(args, "id", id);
    }
    json_object_set_string_member(cmd, "execute", "device_add");
    json_object_set_object_member(cmd, "arguments", json_object_ref(args));
    json_node_set_object(root, cmd);
    json_generator_set_root(gen, root);
    text = json_generator_to_data(gen, NULL);
    {
        g_autofree char *line = g_strconcat(text, "\n", NULL);
        qtest_qmp_send_raw(s, line);
    }
    reply = qtest_qmp_receive(s);
    if (!json_object_has_member(reply, "return")) {
        qtest_fatal(s, "device_add %s failed: %s", driver,
                    qtest_qmp_error_desc(reply) ?: "?");
    }
}

void qtest_qmp_device_del(QTestState *s, const char *id)
{
    g_autoptr(JsonNode) ret = NULL;
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)qtest_timeout_ms() * 1000;

    ret = qtest_qmp_assert_success(s,
        "{'execute': 'device_del', 'arguments': {'id': '%s'}}", id);
    for (;;) {
        int left = (deadline - g_get_monotonic_time()) / 1000;
        g_autoptr(JsonObject) ev =
            qtest_qmp_eventwait_timeout(s, "DEVICE_DELETED", MAX(left, 0));
        JsonObject *data;

        if (!ev) {
            qtest_fatal(s, "no DEVICE_DELETED for '%s'", id);
        }
        data = json_object_has_member(ev, "data") ?
            json_object_get_object_member(ev, "data") : NULL;
        if (data && json_object_has_member(data, "device") &&
            !g_strcmp0(json_object_get_string_member(data, "device"), id)) {
            return;
        }
    }
}
