/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QMP: greeting and negotiation, error replies for bad input, run
 * control and events, device_add/device_del error paths, several
 * monitors at once, and quit.
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

/* A second monitor (-mon) that the test drives byte by byte. */
typedef struct RawMon {
    int fd;
    GString *rx;
} RawMon;

static char *tmpdir;
static char *mon_path;

static RawMon *raw_connect(const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    RawMon *m = g_new0(RawMon, 1);

    m->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert(m->fd >= 0);
    g_assert(strlen(path) < sizeof(addr.sun_path));
    strcpy(addr.sun_path, path);
    g_assert_cmpint(connect(m->fd, (struct sockaddr *)&addr, sizeof(addr)),
                    ==, 0);
    m->rx = g_string_new(NULL);
    return m;
}

static void raw_close(RawMon *m)
{
    close(m->fd);
    g_string_free(m->rx, TRUE);
    g_free(m);
}

static void raw_send(RawMon *m, const char *text)
{
    size_t len = strlen(text);

    /* write(), not send(): the pty test uses a terminal, not a socket. */
    g_assert_cmpint(write(m->fd, text, len), ==, len);
}

/* Next message of any kind. */
static JsonObject *raw_recv_any(RawMon *m)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) gerr = NULL;
    char *nl;
    char buf[4096];
    ssize_t n;

    while (!(nl = strchr(m->rx->str, '\n'))) {
        struct pollfd pfd = { .fd = m->fd, .events = POLLIN };

        g_assert_cmpint(poll(&pfd, 1, 60000), ==, 1);
        n = read(m->fd, buf, sizeof(buf));
        g_assert_cmpint(n, >, 0);
        g_string_append_len(m->rx, buf, n);
    }
    *nl = '\0';
    g_assert_true(json_parser_load_from_data(parser, m->rx->str, -1, &gerr));
    g_string_erase(m->rx, 0, nl - m->rx->str + 1);
    return json_node_dup_object(json_parser_get_root(parser));
}

/* Next message that is not an event. */
static JsonObject *raw_recv(RawMon *m)
{
    for (;;) {
        JsonObject *msg = raw_recv_any(m);

        if (!json_object_has_member(msg, "event")) {
            return msg;
        }
        json_object_unref(msg);
    }
}

static void assert_error(JsonObject *reply, const char *cls,
                         const char *desc_prefix)
{
    JsonObject *err;

    g_assert_true(json_object_has_member(reply, "error"));
    err = json_object_get_object_member(reply, "error");
    g_assert_cmpstr(json_object_get_string_member(err, "class"), ==, cls);
    g_test_message("desc: %s", json_object_get_string_member(err, "desc"));
    if (desc_prefix) {
        g_assert_true(g_str_has_prefix(
            json_object_get_string_member(err, "desc"), desc_prefix));
    }
}

static QTestState *start_with_second_monitor(void)
{
    return qtest_initf("-M pc -m 64M "
                       "-chardev socket,id=mon1,path=%s,server=on,wait=off "
                       "-mon chardev=mon1,mode=control", mon_path);
}

static void test_negotiation(void)
{
    QTestState *qts = start_with_second_monitor();
    RawMon *m = raw_connect(mon_path);
    g_autoptr(JsonObject) greeting = raw_recv(m);
    g_autoptr(JsonObject) r1 = NULL, r2 = NULL, r3 = NULL, r4 = NULL;
    JsonObject *qmp, *ver, *qemu;

    qmp = json_object_get_object_member(greeting, "QMP");
    g_assert_nonnull(qmp);
    ver = json_object_get_object_member(qmp, "version");
    qemu = json_object_get_object_member(ver, "qemu");
    g_assert_cmpint(json_object_get_int_member(qemu, "major"), >=, 6);
    g_assert_true(json_object_has_member(qemu, "minor"));
    g_assert_true(json_object_has_member(qemu, "micro"));
    g_assert_nonnull(strstr(json_object_get_string_member(ver, "package"),
                            "Conduit"));
    g_assert_true(json_object_has_member(qmp, "capabilities"));

    raw_send(m, "{\"execute\": \"query-status\", \"id\": \"early\"}\n");
    r1 = raw_recv(m);
    assert_error(r1, "CommandNotFound",
                 "Expecting capabilities negotiation with 'qmp_capabilities'");
    g_assert_cmpstr(json_object_get_string_member(r1, "id"), ==, "early");

    raw_send(m, "{\"execute\": \"qmp_capabilities\"}\n");
    r2 = raw_recv(m);
    g_assert_true(json_object_has_member(r2, "return"));

    raw_send(m, "{\"execute\": \"qmp_capabilities\"}\n");
    r3 = raw_recv(m);
    assert_error(r3, "CommandNotFound", NULL);

    raw_send(m, "{\"execute\": \"query-status\"}\n");
    r4 = raw_recv(m);
    g_assert_true(json_object_has_member(r4, "return"));
    raw_close(m);
    qtest_quit(qts);
}

static void test_bad_input(void)
{
    QTestState *qts = start_with_second_monitor();
    RawMon *m = raw_connect(mon_path);
    static const struct {
        const char *input;
        const char *desc_prefix;
    } cases[] = {
        { "{\"execute\": query-status}\n", "JSON parse error" },
        { "}\n", "JSON parse error" },
        { "[1, 2]\n", "QMP input must be a JSON object" },
        { "\"hello\"\n", "QMP input must be a JSON object" },
        { "42\n", "QMP input must be a JSON object" },
        { "{\"arguments\": {}}\n", "QMP input lacks member 'execute'" },
        { "{\"execute\": 1}\n", "QMP input member 'execute' must be a string" },
        { "{\"execute\": \"query-status\", \"arguments\": []}\n",
          "QMP input member 'arguments' must be an object" },
        { "{\"execute\": \"query-status\", \"bogus\": 1}\n",
          "QMP input member 'bogus' is unexpected" },
        { "{\"execute\": \"query-status\", \"arguments\": {\"foo\": 1}}\n",
          "Parameter 'foo' is unexpected" },
        { "{\"execute\": \"device_del\", \"arguments\": {\"id\": 1}}\n",
          "Invalid parameter type for 'id', expected: string" },
        { "{\"execute\": \"device_del\"}\n", "Parameter 'id' is missing" },
    };
    size_t i;

    g_autoptr(JsonObject) greeting = raw_recv(m);
    g_autoptr(JsonObject) caps = NULL;

    g_assert_true(json_object_has_member(greeting, "QMP"));
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv(m);
    g_assert_true(json_object_has_member(caps, "return"));

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(JsonObject) r = NULL;

        g_test_message("input: %s", cases[i].input);
        raw_send(m, cases[i].input);
        r = raw_recv(m);
        assert_error(r, "GenericError", cases[i].desc_prefix);
    }
    {
        g_autoptr(JsonObject) r = NULL;

        raw_send(m, "{\"execute\": \"no-such-command\", \"id\": 3}");
        r = raw_recv(m);
        assert_error(r, "CommandNotFound",
                     "The command no-such-command has not been found");
        g_assert_cmpint(json_object_get_int_member(r, "id"), ==, 3);
    }
    {
        /* Absurd nesting: one error, then the monitor works again. */
        g_autoptr(GString) deep = g_string_new(NULL);
        g_autoptr(JsonObject) r = NULL, ok = NULL;

        for (i = 0; i < 5000; i++) {
            g_string_append_c(deep, '[');
        }
        for (i = 0; i < 5000; i++) {
            g_string_append_c(deep, ']');
        }
        g_string_append(deep, "\n{\"execute\": \"query-status\", \"id\": 9}");
        raw_send(m, deep->str);
        r = raw_recv(m);
        assert_error(r, "GenericError", "JSON parse error");
        ok = raw_recv(m);
        g_assert_cmpint(json_object_get_int_member(ok, "id"), ==, 9);
        g_assert_true(json_object_has_member(ok, "return"));
    }
    raw_close(m);
    /* The libqtest monitor was never disturbed. */
    g_autoptr(JsonNode) ret = qtest_qmp_assert_success(
        qts, "{'execute': 'query-status'}");
    g_assert_true(JSON_NODE_HOLDS_OBJECT(ret));
    qtest_quit(qts);
}

static void test_split_and_batched_messages(void)
{
    QTestState *qts = start_with_second_monitor();
    RawMon *m = raw_connect(mon_path);
    g_autoptr(JsonObject) greeting = raw_recv(m);
    g_autoptr(JsonObject) caps = NULL, r1 = NULL, r2 = NULL, r3 = NULL;
    const char *msg = "{\"execute\": \"query-status\", \"id\": \"a{\\\"}\"}";
    size_t i;

    g_assert_true(json_object_has_member(greeting, "QMP"));
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv(m);
    /* One byte per write: the monitor must reassemble the value. */
    for (i = 0; msg[i]; i++) {
        char one[2] = { msg[i], 0 };
        raw_send(m, one);
    }
    r1 = raw_recv(m);
    g_assert_true(json_object_has_member(r1, "return"));
    g_assert_cmpstr(json_object_get_string_member(r1, "id"), ==, "a{\"}");

    /* Two messages in one write, no separator. */
    raw_send(m, "{\"execute\": \"query-version\", \"id\": 1}"
                "{\"execute\": \"query-status\", \"id\": 2}");
    r2 = raw_recv(m);
    r3 = raw_recv(m);
    g_assert_cmpint(json_object_get_int_member(r2, "id"), ==, 1);
    g_assert_cmpint(json_object_get_int_member(r3, "id"), ==, 2);
    g_assert_true(json_object_has_member(
        json_object_get_object_member(r2, "return"), "qemu"));
    raw_close(m);
    qtest_quit(qts);
}

static void test_query_version_and_status(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonNode) v = qtest_qmp_assert_success(
        qts, "{'execute': 'query-version'}");
    g_autoptr(JsonNode) st = qtest_qmp_assert_success(
        qts, "{'execute': 'query-status'}");
    g_autoptr(JsonNode) cmds = qtest_qmp_assert_success(
        qts, "{'execute': 'query-commands'}");
    JsonObject *vo = json_node_get_object(v);
    JsonObject *so = json_node_get_object(st);
    JsonArray *ca = json_node_get_array(cmds);
    bool has_quit = false;
    guint i;

    g_assert_cmpint(json_object_get_int_member(
        json_object_get_object_member(vo, "qemu"), "major"), >=, 6);
    g_assert_true(json_object_has_member(vo, "package"));
    g_assert_true(json_object_has_member(so, "running"));
    g_assert_true(json_object_get_boolean_member(so, "running"));
    g_assert_cmpstr(json_object_get_string_member(so, "status"), ==,
                    "running");
    for (i = 0; i < json_array_get_length(ca); i++) {
        has_quit |= !strcmp(json_object_get_string_member(
            json_array_get_object_element(ca, i), "name"), "quit");
    }
    g_assert_true(has_quit);
    qtest_quit(qts);
}

static void test_stop_cont_reset(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonNode) r1 = NULL, r2 = NULL, r3 = NULL, st = NULL;
    g_autoptr(JsonObject) stop = NULL, resume = NULL, reset = NULL;
    JsonObject *data;

    r1 = qtest_qmp_assert_success(qts, "{'execute': 'stop'}");
    stop = qtest_qmp_eventwait(qts, "STOP");
    st = qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");
    g_assert_false(json_object_get_boolean_member(json_node_get_object(st),
                                                  "running"));
    g_assert_cmpstr(json_object_get_string_member(json_node_get_object(st),
                                                  "status"), ==, "paused");
    r2 = qtest_qmp_assert_success(qts, "{'execute': 'cont'}");
    resume = qtest_qmp_eventwait(qts, "RESUME");

    r3 = qtest_qmp_assert_success(qts, "{'execute': 'system_reset'}");
    reset = qtest_qmp_eventwait(qts, "RESET");
    data = json_object_get_object_member(reset, "data");
    g_assert_false(json_object_get_boolean_member(data, "guest"));
    g_assert_cmpstr(json_object_get_string_member(data, "reason"), ==,
                    "host-qmp-system-reset");
    g_assert_true(json_object_has_member(reset, "timestamp"));
    qtest_quit(qts);
}

static const char *query_status(QTestState *qts)
{
    g_autoptr(JsonNode) st = qtest_qmp_assert_success(
        qts, "{'execute': 'query-status'}");

    /* Interned: the node is freed on return. */
    return g_intern_string(json_object_get_string_member(
        json_node_get_object(st), "status"));
}

/*
 * -no-shutdown: a guest shutdown stops the VM instead of exiting; cont is
 * refused until system_reset, which leaves it in prelaunch, startable.
 */
static void test_no_shutdown_reset_cont(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M -no-shutdown "
                                 "-device isa-debug-exit,iobase=0xf4,"
                                 "iosize=0x4");
    g_autoptr(JsonObject) down = NULL, reset = NULL, refused = NULL;
    g_autoptr(JsonNode) r1 = NULL, r2 = NULL;

    qtest_outb(qts, 0xf4, 1);
    down = qtest_qmp_eventwait(qts, "SHUTDOWN");
    g_assert_true(json_object_get_boolean_member(
        json_object_get_object_member(down, "data"), "guest"));
    g_assert_cmpstr(query_status(qts), ==, "shutdown");

    refused = qtest_qmp(qts, "{'execute': 'cont'}");
    assert_error(refused, "GenericError", "Resetting the Virtual Machine");

    r1 = qtest_qmp_assert_success(qts, "{'execute': 'system_reset'}");
    reset = qtest_qmp_eventwait(qts, "RESET");
    g_assert_cmpstr(query_status(qts), ==, "prelaunch");
    r2 = qtest_qmp_assert_success(qts, "{'execute': 'cont'}");
    g_assert_cmpstr(query_status(qts), ==, "running");
    qtest_quit(qts);
}

static void test_human_monitor_command(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonNode) out = NULL, stop = NULL, out2 = NULL;
    g_autoptr(JsonObject) bad = NULL, ev = NULL;

    out = qtest_qmp_assert_success(qts,
        "{'execute': 'human-monitor-command',"
        " 'arguments': {'command-line': 'info status'}}");
    g_assert_cmpstr(json_node_get_string(out), ==, "VM status: running\r\n");
    stop = qtest_qmp_assert_success(qts, "{'execute': 'human-monitor-command',"
                                    " 'arguments': {'command-line': 'stop'}}");
    ev = qtest_qmp_eventwait(qts, "STOP");
    out2 = qtest_qmp_assert_success(qts,
        "{'execute': 'human-monitor-command',"
        " 'arguments': {'command-line': 'info status'}}");
    g_assert_cmpstr(json_node_get_string(out2), ==, "VM status: paused\r\n");
    bad = qtest_qmp(qts, "{'execute': 'human-monitor-command',"
                    " 'arguments': {'command-line': 'frob'}}");
    assert_error(bad, "GenericError", NULL);
    qtest_quit(qts);
}

static void test_device_errors(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonObject) r1 = NULL, r2 = NULL, r3 = NULL;
    g_autoptr(JsonNode) st = NULL;

    r1 = qtest_qmp(qts, "{'execute': 'device_add', "
                   "'arguments': {'driver': 'no-such-device', 'id': 'x'}}");
    assert_error(r1, "GenericError", NULL);
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r1), "no-such-device"));

    r2 = qtest_qmp(qts, "{'execute': 'device_del', "
                   "'arguments': {'id': 'nothere'}}");
    assert_error(r2, "DeviceNotFound", "Device 'nothere' not found");

    r3 = qtest_qmp(qts, "{'execute': 'qom-list', "
                   "'arguments': {'path': '/no/such/path'}}");
    g_assert_true(json_object_has_member(r3, "error"));

    /* Still alive and answering on both channels. */
    st = qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");
    qtest_writeb(qts, 0x100000, 0x42);
    g_assert_cmphex(qtest_readb(qts, 0x100000), ==, 0x42);
    qtest_quit(qts);
}

static void test_device_add_del(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonObject) dup = NULL, again = NULL;

    qtest_qmp_device_add(qts, "pci-testdev", "td0", NULL);
    /* The id is taken now. */
    dup = qtest_qmp(qts, "{'execute': 'device_add', "
                    "'arguments': {'driver': 'pci-testdev', 'id': 'td0'}}");
    assert_error(dup, "GenericError", NULL);
    qtest_qmp_device_del(qts, "td0");
    /* Gone: a second delete does not find it. */
    again = qtest_qmp(qts, "{'execute': 'device_del', "
                      "'arguments': {'id': 'td0'}}");
    assert_error(again, "DeviceNotFound", "Device 'td0' not found");
    qtest_quit(qts);
}

static void test_monitor_reconnect(void)
{
    QTestState *qts = start_with_second_monitor();
    int round;

    /* Each new client gets a greeting and must negotiate again. */
    for (round = 0; round < 2; round++) {
        RawMon *m = raw_connect(mon_path);
        g_autoptr(JsonObject) greeting = raw_recv(m);
        g_autoptr(JsonObject) early = NULL, caps = NULL;

        g_assert_true(json_object_has_member(greeting, "QMP"));
        raw_send(m, "{\"execute\": \"query-status\"}");
        early = raw_recv(m);
        assert_error(early, "CommandNotFound", NULL);
        raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
        caps = raw_recv(m);
        g_assert_true(json_object_has_member(caps, "return"));
        /* Leave a half-sent message behind: it must not leak over. */
        raw_send(m, "{\"execute\": ");
        raw_close(m);
    }
    qtest_quit(qts);
}

/* libvirt style: the monitor socket is an inherited fd. */
static void test_inherited_fds(void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    g_autofree char *lpath = g_build_filename(tmpdir, "listen.sock", NULL);
    int pair[2], lfd;
    QTestState *qts;
    RawMon *connected, *accepted;
    g_autoptr(JsonObject) g1 = NULL, g2 = NULL, caps = NULL, st = NULL;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), ==, 0);
    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    strcpy(addr.sun_path, lpath);
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
    g_assert_cmpint(listen(lfd, 1), ==, 0);
    fcntl(pair[0], F_SETFD, FD_CLOEXEC);

    qts = qtest_initf("-M pc -m 64M "
                      "-chardev socket,id=c1,fd=%d -mon chardev=c1 "
                      "-chardev socket,id=c2,fd=%d "
                      "-mon chardev=c2,mode=control",
                      pair[1], lfd);
    close(pair[1]);
    close(lfd);

    connected = g_new0(RawMon, 1);
    connected->fd = pair[0];
    connected->rx = g_string_new(NULL);
    g1 = raw_recv(connected);
    g_assert_true(json_object_has_member(g1, "QMP"));
    raw_send(connected, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv(connected);
    g_assert_true(json_object_has_member(caps, "return"));

    accepted = raw_connect(lpath);
    g2 = raw_recv(accepted);
    g_assert_true(json_object_has_member(g2, "QMP"));
    raw_send(accepted, "{\"execute\": \"query-status\"}");
    st = raw_recv(accepted);
    assert_error(st, "CommandNotFound", NULL);

    raw_close(connected);
    raw_close(accepted);
    unlink(lpath);
    qtest_quit(qts);
}

static void test_legacy_server_spec(void)
{
    g_autofree char *path = g_build_filename(tmpdir, "legacy.sock", NULL);
    QTestState *qts = qtest_initf("-M pc -m 64M -qmp unix:%s,server,nowait",
                                  path);
    RawMon *m = raw_connect(path);
    g_autoptr(JsonObject) greeting = raw_recv(m);
    g_autoptr(JsonObject) caps = NULL;

    g_assert_true(json_object_has_member(greeting, "QMP"));
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv(m);
    g_assert_true(json_object_has_member(caps, "return"));
    raw_close(m);
    qtest_quit(qts);
    /* The socket file we bound is removed at exit. */
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
}

/* Finds the "filename" of chardev @label in a query-chardev reply. */
static const char *chardev_filename(JsonArray *list, const char *label)
{
    guint i;

    for (i = 0; i < json_array_get_length(list); i++) {
        JsonObject *c = json_array_get_object_element(list, i);

        if (!strcmp(json_object_get_string_member(c, "label"), label)) {
            return json_object_get_string_member(c, "filename");
        }
    }
    return NULL;
}

static void test_pty_monitor(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M -chardev pty,id=pty0 "
                                 "-mon chardev=pty0,mode=control");
    g_autoptr(JsonNode) list = qtest_qmp_assert_success(
        qts, "{'execute': 'query-chardev'}");
    const char *filename = chardev_filename(json_node_get_array(list),
                                            "pty0");
    RawMon *m;
    g_autoptr(JsonObject) greeting = NULL, caps = NULL;

    g_assert_nonnull(filename);
    g_assert_true(g_str_has_prefix(filename, "pty:/dev/pts/"));
    m = g_new0(RawMon, 1);
    m->fd = open(filename + 4, O_RDWR | O_NOCTTY | O_CLOEXEC);
    g_assert_cmpint(m->fd, >=, 0);
    m->rx = g_string_new(NULL);
    /* Opening the slave counts as a connection: the greeting comes. */
    greeting = raw_recv(m);
    g_assert_true(json_object_has_member(greeting, "QMP"));
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}\n");
    caps = raw_recv(m);
    g_assert_true(json_object_has_member(caps, "return"));
    raw_close(m);
    qtest_quit(qts);
}

static void test_query_chardev(void)
{
    QTestState *qts = start_with_second_monitor();
    g_autoptr(JsonNode) list = qtest_qmp_assert_success(
        qts, "{'execute': 'query-chardev'}");
    g_autofree char *expect = g_strdup_printf("unix:%s,server=on", mon_path);

    g_assert_cmpstr(chardev_filename(json_node_get_array(list), "mon1"), ==,
                    expect);
    qtest_quit(qts);
}

static void test_event_broadcast(void)
{
    QTestState *qts = start_with_second_monitor();
    RawMon *m = raw_connect(mon_path);
    g_autoptr(JsonObject) greeting = raw_recv_any(m);
    g_autoptr(JsonObject) caps = NULL, ev = NULL;
    g_autoptr(JsonNode) r = NULL;

    g_assert_true(json_object_has_member(greeting, "QMP"));
    /* Not negotiated yet: this STOP must not reach the raw monitor. */
    r = qtest_qmp_assert_success(qts, "{'execute': 'stop'}");
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv_any(m);
    g_assert_true(json_object_has_member(caps, "return"));

    /* Negotiated: events from commands on the other monitor arrive. */
    json_node_unref(g_steal_pointer(&r));
    r = qtest_qmp_assert_success(qts, "{'execute': 'cont'}");
    ev = raw_recv_any(m);
    g_assert_cmpstr(json_object_get_string_member(ev, "event"), ==,
                    "RESUME");
    raw_close(m);
    qtest_quit(qts);
}

static void test_slow_reader(void)
{
    /* A client that does not read its replies must not stall the VM. */
    QTestState *qts = start_with_second_monitor();
    RawMon *m = raw_connect(mon_path);
    g_autoptr(JsonObject) greeting = raw_recv_any(m);
    g_autoptr(JsonObject) caps = NULL;
    g_autoptr(GString) burst = g_string_new(NULL);
    g_autoptr(JsonNode) st = NULL;
    const int count = 5000;
    int i;

    g_assert_true(json_object_has_member(greeting, "QMP"));
    raw_send(m, "{\"execute\": \"qmp_capabilities\"}");
    caps = raw_recv_any(m);
    for (i = 0; i < count; i++) {
        g_string_append_printf(burst, "{\"execute\": \"query-version\", "
                               "\"id\": %d}\n", i);
    }
    raw_send(m, burst->str);
    /* Meanwhile the other monitor and the qtest socket still answer. */
    st = qtest_qmp_assert_success(qts, "{'execute': 'query-status'}");
    qtest_writel(qts, 0x100000, 0xfeedface);
    g_assert_cmphex(qtest_readl(qts, 0x100000), ==, 0xfeedface);
    /* Every reply arrives, in order. */
    for (i = 0; i < count; i++) {
        g_autoptr(JsonObject) r = raw_recv_any(m);

        g_assert_cmpint(json_object_get_int_member(r, "id"), ==, i);
    }
    raw_close(m);
    qtest_quit(qts);
}

static void test_qom_list_machine(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonNode) list = qtest_qmp_assert_success(
        qts, "{'execute': 'qom-list', 'arguments': {'path': '/'}}");
    JsonArray *a = json_node_get_array(list);
    bool has_machine = false;
    guint i;

    for (i = 0; i < json_array_get_length(a); i++) {
        JsonObject *p = json_array_get_object_element(a, i);
        has_machine |= !strcmp(json_object_get_string_member(p, "name"),
                               "machine");
    }
    g_assert_true(has_machine);
    qtest_quit(qts);
}

/* The member of a property list named @name, or NULL. */
static JsonObject *find_property(JsonArray *a, const char *name)
{
    guint i;

    for (i = 0; i < json_array_get_length(a); i++) {
        JsonObject *p = json_array_get_object_element(a, i);

        if (!strcmp(json_object_get_string_member(p, "name"), name)) {
            return p;
        }
    }
    return NULL;
}

/*
 * qom-list and device-list-properties describe a property alike: name,
 * type, and a description only where it has one.
 */
static void test_property_info(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M "
                                 "-device pci-testdev,id=td0");
    g_autoptr(JsonNode) inst = qtest_qmp_assert_success(
        qts, "{'execute': 'qom-list', "
        "'arguments': {'path': '/machine/peripheral/td0'}}");
    g_autoptr(JsonNode) type = qtest_qmp_assert_success(
        qts, "{'execute': 'device-list-properties', "
        "'arguments': {'typename': 'virtio-blk-pci'}}");
    JsonObject *p;

    p = find_property(json_node_get_array(inst), "vectors");
    g_assert_nonnull(p);
    g_assert_cmpstr(json_object_get_string_member(p, "type"), ==, "uint32");
    g_assert_cmpstr(json_object_get_string_member(p, "description"), ==,
                    "number of MSI-X vectors (1..64)");
    p = find_property(json_node_get_array(inst), "realized");
    g_assert_nonnull(p);
    g_assert_cmpstr(json_object_get_string_member(p, "type"), ==, "bool");
    g_assert_false(json_object_has_member(p, "description"));

    p = find_property(json_node_get_array(type), "drive");
    g_assert_nonnull(p);
    g_assert_cmpstr(json_object_get_string_member(p, "type"), ==, "str");
    g_assert_cmpstr(json_object_get_string_member(p, "description"), ==,
                    "block node-name or -drive id");
    /* Only what can be set: no read-only state such as "realized". */
    g_assert_null(find_property(json_node_get_array(type), "realized"));
    qtest_quit(qts);
}

static void test_quit(void)
{
    QTestState *qts = qtest_init("-M pc -m 64M");
    g_autoptr(JsonObject) reply = qtest_qmp(qts, "{'execute': 'quit'}");
    g_autoptr(JsonObject) ev = NULL;
    JsonObject *data;
    int status;

    g_assert_true(json_object_has_member(reply, "return"));
    ev = qtest_qmp_eventwait(qts, "SHUTDOWN");
    data = json_object_get_object_member(ev, "data");
    g_assert_false(json_object_get_boolean_member(data, "guest"));
    g_assert_cmpstr(json_object_get_string_member(data, "reason"), ==,
                    "host-qmp-quit");
    status = qtest_wait_exit(qts);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 0);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_autoptr(GError) gerr = NULL;
    int ret;

    g_test_init(&argc, &argv, NULL);
    signal(SIGPIPE, SIG_IGN);
    tmpdir = g_dir_make_tmp("qmp-test-XXXXXX", &gerr);
    g_assert_no_error(gerr);
    mon_path = g_build_filename(tmpdir, "mon1.sock", NULL);

    g_test_add_func("/qmp/negotiation/greeting-and-order", test_negotiation);
    g_test_add_func("/qmp/errors/bad-input-gets-error", test_bad_input);
    g_test_add_func("/qmp/stream/split-and-batched",
                    test_split_and_batched_messages);
    g_test_add_func("/qmp/query/version-status-commands",
                    test_query_version_and_status);
    g_test_add_func("/qmp/runstate/stop-cont-reset-events",
                    test_stop_cont_reset);
    g_test_add_func("/qmp/hmp/info-status-and-stop",
                    test_human_monitor_command);
    g_test_add_func("/qmp/device/errors-keep-vm-alive", test_device_errors);
    g_test_add_func("/qmp/device/add-del-pci-testdev", test_device_add_del);
    g_test_add_func("/qmp/monitor/reconnect-renegotiates",
                    test_monitor_reconnect);
    g_test_add_func("/qmp/monitor/inherited-fds", test_inherited_fds);
    g_test_add_func("/qmp/monitor/legacy-server-nowait-spec",
                    test_legacy_server_spec);
    g_test_add_func("/qmp/monitor/pty-slave-open-connects",
                    test_pty_monitor);
    g_test_add_func("/qmp/query/chardev-lists-socket", test_query_chardev);
    g_test_add_func("/qmp/events/only-to-negotiated-monitors",
                    test_event_broadcast);
    g_test_add_func("/qmp/monitor/slow-reader-does-not-stall",
                    test_slow_reader);
    g_test_add_func("/qmp/qom/list-root-has-machine", test_qom_list_machine);
    g_test_add_func("/qmp/qom/property-info", test_property_info);
    g_test_add_func("/qmp/quit/shutdown-event-and-exit-0", test_quit);
    g_test_add_func("/qmp/runstate/no-shutdown-reset-then-cont",
                    test_no_shutdown_reset_cont);

    ret = g_test_run();
    unlink(mon_path);
    rmdir(tmpdir);
    g_free(mon_path);
    g_free(tmpdir);
    return ret;
}
