/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Migration between two Conduit processes under qtest: RAM (written by
 * qtest, also while the migration runs, which the dirty log must catch),
 * every transport (unix, tcp, fd from getfd, exec, file), -incoming defer
 * + migrate-incoming (virsh restore), QMP shapes (query-migrate,
 * capabilities, parameters, events, run states), pause-before-switchover,
 * cancel, the return path, faults (the destination dies, the stream is
 * truncated or corrupted: a clear error, the source keeps running), and
 * dump-guest-memory.
 */
#include "qemu/osdep.h"
#include <elf.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "libqtest.h"

#define RAM_MB 64
#define MiB (1024 * 1024ULL)

static char *tmpdir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmpdir, name, NULL);
}

static const char *status_of(QTestState *s)
{
    return qtest_migrate_status(s);
}

static const char *runstate_of(QTestState *s)
{
    static char buf[64];
    g_autoptr(JsonObject) r = qtest_qmp(s, "{'execute': 'query-status'}");
    JsonObject *ret = json_object_get_object_member(r, "return");

    g_strlcpy(buf, json_object_get_string_member(ret, "status"), sizeof(buf));
    return buf;
}

/* Polls until status is one of the |-separated names; returns it. */
static const char *wait_status(QTestState *s, const char *want)
{
    return qtest_migrate_wait_status(s, want, 120 * G_USEC_PER_SEC);
}

static void enable_events(QTestState *s)
{
    g_autoptr(JsonNode) r = qtest_qmp_assert_success(s,
        "{'execute': 'migrate-set-capabilities', 'arguments': "
        "{'capabilities': [{'capability': 'events', 'state': true}]}}");
}

/* A pattern that differs per page and per generation. */
static void fill(QTestState *s, uint64_t addr, size_t len, uint32_t seed)
{
    g_autofree uint32_t *buf = g_malloc(len);

    for (size_t i = 0; i < len / 4; i++) {
        buf[i] = seed * 0x9e3779b1u + (uint32_t)(addr / 4 + i);
    }
    /* One qtest request carries at most a few MiB. */
    for (size_t off = 0; off < len; off += MiB) {
        qtest_bufwrite(s, addr + off, (uint8_t *)buf + off, MIN(MiB, len - off));
    }
}

static void check(QTestState *s, uint64_t addr, size_t len, uint32_t seed)
{
    g_autofree uint32_t *buf = g_malloc(len);

    for (size_t off = 0; off < len; off += MiB) {
        qtest_bufread(s, addr + off, (uint8_t *)buf + off, MIN(MiB, len - off));
    }
    for (size_t i = 0; i < len / 4; i++) {
        if (buf[i] != seed * 0x9e3779b1u + (uint32_t)(addr / 4 + i)) {
            g_error("guest RAM at 0x%" PRIx64 " differs after migration",
                    addr + i * 4);
        }
    }
}

static QTestState *start_src(const char *extra)
{
    return qtest_initf("-m %d %s", RAM_MB, extra ? extra : "");
}

static QTestState *start_dst(const char *incoming, const char *extra)
{
    return qtest_initf("-m %d -incoming '%s' %s", RAM_MB, incoming,
                       extra ? extra : "");
}

static void test_qmp_shapes(void)
{
    QTestState *s = start_src(NULL);
    g_autoptr(JsonObject) r = NULL;
    g_autoptr(JsonNode) caps = NULL;
    g_autoptr(JsonNode) params = NULL;
    JsonArray *list;
    JsonObject *p;
    bool seen_events = false, seen_pbs = false, seen_rp = false;

    r = qtest_qmp(s, "{'execute': 'query-migrate'}");
    g_assert_cmpuint(json_object_get_size(
        json_object_get_object_member(r, "return")), ==, 0);

    caps = qtest_qmp_assert_success(s,
        "{'execute': 'query-migrate-capabilities'}");
    list = json_node_get_array(caps);
    for (guint i = 0; i < json_array_get_length(list); i++) {
        JsonObject *c = json_array_get_object_element(list, i);
        const char *name = json_object_get_string_member(c, "capability");

        g_assert_false(json_object_get_boolean_member(c, "state"));
        seen_events |= !strcmp(name, "events");
        seen_pbs |= !strcmp(name, "pause-before-switchover");
        seen_rp |= !strcmp(name, "return-path");
    }
    g_assert_true(seen_events && seen_pbs && seen_rp);

    /* A capability Conduit does not implement is refused, by name... */
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate-set-capabilities', 'arguments': "
                  "{'capabilities': [{'capability': 'events', 'state': true},"
                  " {'capability': 'xbzrle', 'state': true}]}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "xbzrle"));
    /* ...and changes nothing; switching it off is fine. */
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate-set-capabilities', 'arguments': "
                  "{'capabilities': [{'capability': 'xbzrle', 'state': "
                  "false}]}}");
    g_assert_true(json_object_has_member(r, "return"));

    {
        g_autoptr(JsonNode) ok = qtest_qmp_assert_success(s,
            "{'execute': 'migrate-set-parameters', 'arguments': "
            "{'downtime-limit': 123, 'max-bandwidth': 1048576, "
            "'tls-creds': '', 'tls-hostname': ''}}");
    }
    params = qtest_qmp_assert_success(s,
        "{'execute': 'query-migrate-parameters'}");
    p = json_node_get_object(params);
    g_assert_cmpint(json_object_get_int_member(p, "downtime-limit"), ==, 123);
    g_assert_cmpint(json_object_get_int_member(p, "max-bandwidth"), ==,
                    1048576);
    g_assert_cmpint(json_object_get_int_member(p, "announce-rounds"), ==, 5);

    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate-set-parameters', 'arguments': "
                  "{'downtime-limit': -1}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate-set-parameters', 'arguments': "
                  "{'tls-creds': 'tls0'}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");

    /* Bad addresses: a clear error, nothing started. */
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'gopher:x'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "gopher"));
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'unix:/nonexistent/sock'}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'fd:nosuchfd'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "nosuchfd"));
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(s, "{'execute': 'migrate-incoming', 'arguments': "
                  "{'uri': 'unix:/tmp/x'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "-incoming"));
    g_assert_cmpstr(status_of(s), ==, "none");
    g_assert_cmpstr(runstate_of(s), ==, "running");
    qtest_quit(s);
}

static void assert_event_status(QTestState *s, const char *status)
{
    g_autoptr(JsonObject) ev = qtest_qmp_eventwait(s, "MIGRATION");
    JsonObject *d = json_object_get_object_member(ev, "data");

    g_assert_cmpstr(json_object_get_string_member(d, "status"), ==, status);
}

/* Migrates src -> dst over uri (dst already listening). */
static void migrate_and_check(QTestState *src, QTestState *dst,
                              const char *uri)
{
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;
    JsonObject *ret, *ram;

    fill(src, 0x100000, 4 * MiB, 1);
    fill(src, (RAM_MB - 1) * MiB, MiB, 2);
    enable_events(src);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", uri);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    assert_event_status(src, "setup");
    assert_event_status(src, "active");
    {
        g_autoptr(JsonObject) pass = qtest_qmp_eventwait(src,
                                                         "MIGRATION_PASS");
        g_autoptr(JsonObject) stop = qtest_qmp_eventwait(src, "STOP");
    }
    assert_event_status(src, "device");
    assert_event_status(src, "completed");
    g_assert_cmpstr(runstate_of(src), ==, "postmigrate");

    r = qtest_qmp(src, "{'execute': 'query-migrate'}");
    ret = json_object_get_object_member(r, "return");
    g_assert_cmpstr(json_object_get_string_member(ret, "status"), ==,
                    "completed");
    g_assert_true(json_object_has_member(ret, "downtime"));
    g_assert_true(json_object_has_member(ret, "total-time"));
    g_assert_true(json_object_has_member(ret, "setup-time"));
    ram = json_object_get_object_member(ret, "ram");
    g_assert_cmpint(json_object_get_int_member(ram, "total"), ==,
                    RAM_MB * MiB);
    g_assert_cmpint(json_object_get_int_member(ram, "remaining"), ==, 0);
    /* 5 MiB of data at least once; the rest is zero pages. */
    g_assert_cmpint(json_object_get_int_member(ram, "normal-bytes"), >=,
                    5 * MiB);
    g_assert_cmpint(json_object_get_int_member(ram, "duplicate"), >, 0);
    g_assert_cmpint(json_object_get_int_member(ram, "dirty-sync-count"), >=,
                    2);

    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0x100000, 4 * MiB, 1);
    check(dst, (RAM_MB - 1) * MiB, MiB, 2);
    g_assert_cmphex(qtest_readq(dst, 0x800000), ==, 0);
}

static void test_unix(void)
{
    g_autofree char *sock = tmp_path("mig.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, NULL);
    QTestState *src = start_src(NULL);

    g_assert_cmpstr(runstate_of(dst), ==, "inmigrate");
    migrate_and_check(src, dst, inc);
    /* No -S on the destination: it runs at once. */
    g_assert_cmpstr(runstate_of(dst), ==, "running");
    qtest_quit(src);
    qtest_quit(dst);
}

/*
 * libvirt gives the machine its RAM as a memory backend object
 * (-machine memory-backend=pc.ram): that RAM moves too.
 */
static void test_memory_backend(void)
{
    g_autofree char *sock = tmp_path("backend.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    g_autofree char *args = g_strdup_printf(
        "-object memory-backend-ram,id=pc.ram,size=%dM "
        "-machine pc,memory-backend=pc.ram -incoming %s", RAM_MB, inc);
    QTestState *dst = qtest_initf("-m %d %s", RAM_MB, args);
    QTestState *src = qtest_initf("-m %d -object memory-backend-ram,id=pc.ram,"
                                  "size=%dM -machine pc,memory-backend=pc.ram",
                                  RAM_MB, RAM_MB);

    migrate_and_check(src, dst, inc);
    qtest_quit(src);
    qtest_quit(dst);
}

static void test_tcp_defer(void)
{
    QTestState *dst = start_dst("defer", "-S");
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;
    JsonObject *sa;
    g_autofree char *uri = NULL;

    g_assert_cmpstr(runstate_of(dst), ==, "inmigrate");
    enable_events(dst);
    ok = qtest_qmp_assert_success(dst, "{'execute': 'migrate-incoming', "
                                  "'arguments': {'uri': 'tcp:127.0.0.1:0'}}");
    assert_event_status(dst, "setup");
    /* Port 0: query-migrate says where it listens. */
    r = qtest_qmp(dst, "{'execute': 'query-migrate'}");
    sa = json_array_get_object_element(json_object_get_array_member(
        json_object_get_object_member(r, "return"), "socket-address"), 0);
    uri = g_strdup_printf("tcp:127.0.0.1:%s",
                          json_object_get_string_member(sa, "port"));
    migrate_and_check(src, dst, uri);
    /* -S: the destination waits for cont (libvirt's way). */
    g_assert_cmpstr(runstate_of(dst), ==, "paused");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(dst, "{'execute': 'cont'}");
    g_assert_cmpstr(runstate_of(dst), ==, "running");
    qtest_quit(src);
    qtest_quit(dst);
}

/* virsh save / restore: stop, migrate to an fd from getfd; later a
 * destination with -S -incoming defer loads it through migrate-incoming. */
static void test_fd_save_restore(void)
{
    g_autofree char *path = tmp_path("saved.img");
    QTestState *src = start_src(NULL), *dst;
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;
    int fd;

    fill(src, 0x300000, 2 * MiB, 7);
    ok = qtest_qmp_assert_success(src, "{'execute': 'stop'}");
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    g_assert_cmpint(fd, >=, 0);
    r = qtest_qmp_fds(src, &fd, 1, "{'execute': 'getfd', 'arguments': "
                     "{'fdname': 'migrate'}}");
    g_assert_true(json_object_has_member(r, "return"));
    close(fd);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': 'fd:migrate', 'detach': true}}");
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    g_assert_cmpstr(runstate_of(src), ==, "postmigrate");
    qtest_quit(src);

    dst = start_dst("defer", "-S");
    fd = open(path, O_RDONLY);
    g_assert_cmpint(fd, >=, 0);
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp_fds(dst, &fd, 1, "{'execute': 'getfd', 'arguments': "
                     "{'fdname': 'restore'}}");
    close(fd);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(dst, "{'execute': 'migrate-incoming', "
                                  "'arguments': {'uri': 'fd:restore'}}");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    g_assert_cmpstr(runstate_of(dst), ==, "paused");
    check(dst, 0x300000, 2 * MiB, 7);
    qtest_quit(dst);
}

static void test_exec_file(void)
{
    g_autofree char *path = tmp_path("exec.img");
    g_autofree char *out = g_strdup_printf("exec:cat > %s", path);
    g_autofree char *in = g_strdup_printf("exec:cat %s", path);
    g_autofree char *file = g_strdup_printf("file:%s", path);
    QTestState *src = start_src(NULL), *dst;
    g_autoptr(JsonNode) ok = NULL;

    fill(src, 0x500000, MiB, 9);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", out);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    qtest_quit(src);

    dst = start_dst(in, NULL);
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0x500000, MiB, 9);
    qtest_quit(dst);

    /* The same image through file: and the channels argument's twin. */
    dst = start_dst(file, "-S");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0x500000, MiB, 9);
    qtest_quit(dst);
}

/*
 * Writes while the migration runs (bandwidth held low) must reach the
 * destination: qtest's writes go through the memory API, whose dirty log
 * sends the pages again.
 */
static void test_dirty_pages(void)
{
    g_autofree char *sock = tmp_path("dirty.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, NULL);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    uint32_t gen;

    fill(src, 0, 16 * MiB, 100);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-parameters',"
                                  " 'arguments': {'max-bandwidth': 4194304}}");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    wait_status(src, "active");
    /* Rewrite pages the first pass has sent already, several times. */
    for (gen = 101; gen < 106; gen++) {
        g_usleep(200 * 1000);
        fill(src, 0, 2 * MiB, gen);
        fill(src, 8 * MiB, 64 * 1024, gen);
    }
    g_assert_cmpstr(status_of(src), ==, "active");
    {
        /* What libvirt's domjobinfo shows: the pass at work. */
        g_autoptr(JsonObject) q = qtest_qmp(src,
                                            "{'execute': 'query-migrate'}");
        JsonObject *ram = json_object_get_object_member(
            json_object_get_object_member(q, "return"), "ram");

        g_assert_cmpint(json_object_get_int_member(ram, "transferred"), >,
                        0);
        g_assert_cmpint(json_object_get_int_member(ram, "remaining"), <,
                        json_object_get_int_member(ram, "total"));
    }
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-parameters',"
                                  " 'arguments': {'max-bandwidth': 0}}");
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0, 2 * MiB, gen - 1);
    check(dst, 2 * MiB, 6 * MiB, 100);
    check(dst, 8 * MiB, 64 * 1024, gen - 1);
    check(dst, 8 * MiB + 64 * 1024, 8 * MiB - 64 * 1024, 100);
    qtest_quit(src);
    qtest_quit(dst);
}

static void test_pause_before_switchover(void)
{
    g_autofree char *sock = tmp_path("pbs.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, NULL);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;

    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-capabilities',"
                                  " 'arguments': {'capabilities': ["
                                  "{'capability': 'pause-before-switchover', "
                                  "'state': true}]}}");
    fill(src, 0x100000, MiB, 3);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    g_assert_cmpstr(wait_status(src, "pre-switchover|failed"), ==,
                    "pre-switchover");
    g_assert_cmpstr(runstate_of(src), ==, "finish-migrate");
    /* Only from pre-switchover. */
    r = qtest_qmp(src, "{'execute': 'migrate-continue', 'arguments': "
                  "{'state': 'active'}}");
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-continue', "
                                  "'arguments': {'state': 'pre-switchover'}}");
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0x100000, MiB, 3);
    qtest_quit(src);
    qtest_quit(dst);
}

static void test_cancel(void)
{
    g_autofree char *sock = tmp_path("cancel.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, NULL);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;

    fill(src, 0, 8 * MiB, 11);
    enable_events(src);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-parameters',"
                                  " 'arguments': {'max-bandwidth': 1048576}}");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    wait_status(src, "active");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate_cancel'}");
    g_assert_cmpstr(wait_status(src, "cancelled|completed|failed"), ==,
                    "cancelled");
    g_assert_cmpstr(runstate_of(src), ==, "running");
    check(src, 0, 8 * MiB, 11);
    /* The destination saw the stream end early: it gives up and exits. */
    g_assert_cmpint(WEXITSTATUS(qtest_wait_exit(dst)), ==, 1);
    g_assert_nonnull(strstr(qtest_get_stderr(dst), "load of migration failed"));
    qtest_quit(dst);

    /* The source can migrate again afterwards. */
    dst = start_dst(inc, NULL);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-parameters',"
                                  " 'arguments': {'max-bandwidth': 0}}");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    check(dst, 0, 8 * MiB, 11);
    qtest_quit(src);
    qtest_quit(dst);
}

/* The destination dies mid-stream: the source fails cleanly and runs on. */
static void test_dest_dies(void)
{
    g_autofree char *sock = tmp_path("dies.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, NULL);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;
    JsonObject *ret;

    fill(src, 0, 8 * MiB, 21);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-parameters',"
                                  " 'arguments': {'max-bandwidth': 1048576}}");
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    wait_status(src, "active");
    qtest_quit(dst);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "failed");
    r = qtest_qmp(src, "{'execute': 'query-migrate'}");
    ret = json_object_get_object_member(r, "return");
    g_assert_nonnull(strstr(json_object_get_string_member(ret, "error-desc"),
                            "write failed"));
    g_assert_cmpstr(runstate_of(src), ==, "running");
    check(src, 0, 8 * MiB, 21);
    qtest_quit(src);
}

/* A saved stream, cut short or with a flipped byte, is refused clearly. */
static void save_to(const char *path, uint32_t seed)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;

    fill(src, 0x100000, MiB, seed);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", uri);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    qtest_quit(src);
}

/*
 * Loads path through -incoming defer + migrate-incoming (so the failure
 * cannot race with the test's connection set-up) and expects the
 * destination to exit 1 naming needle.
 */
static void expect_load_failure_m(const char *path, int ram_mb,
                                  const char *needle)
{
    QTestState *dst = qtest_initf("-m %d -incoming defer", ram_mb);
    g_autoptr(JsonObject) r = NULL;

    r = qtest_qmp(dst, "{'execute': 'migrate-incoming', 'arguments': "
                  "{'uri': 'file:%s'}}", path);
    g_assert_true(json_object_has_member(r, "return"));
    g_assert_cmpint(WEXITSTATUS(qtest_wait_exit(dst)), ==, 1);
    if (!strstr(qtest_get_stderr(dst), needle)) {
        g_error("expected '%s' in: %s", needle, qtest_get_stderr(dst));
    }
    qtest_quit(dst);
}

static void expect_load_failure(const char *path, const char *needle)
{
    expect_load_failure_m(path, RAM_MB, needle);
}

static void test_truncated_corrupted(void)
{
    g_autofree char *path = tmp_path("cut.img");
    g_autofree char *data = NULL;
    gsize len;
    char *dev;

    save_to(path, 5);
    g_assert_true(g_file_get_contents(path, &data, &len, NULL));

    /* Cut in the middle of the RAM, and just before the end record. */
    g_assert_true(g_file_set_contents(path, data, len / 2, NULL));
    expect_load_failure(path, "ended unexpectedly");
    g_assert_true(g_file_set_contents(path, data, len - 3, NULL));
    expect_load_failure(path, "ended unexpectedly");

    /* A flipped byte inside the clock's state: its checksum catches it. */
    dev = memmem(data, len, "timer", 5);
    g_assert_nonnull(dev);
    dev[16] ^= 0x40;
    g_assert_true(g_file_set_contents(path, data, len, NULL));
    expect_load_failure(path, "checksum");
    dev[16] ^= 0x40;

    /* Not a stream at all. */
    data[0] = 'X';
    g_assert_true(g_file_set_contents(path, data, len, NULL));
    expect_load_failure(path, "bad magic");

    /* A destination with another RAM size names the mismatch. */
    data[0] = 'C';
    g_assert_true(g_file_set_contents(path, data, len, NULL));
    expect_load_failure_m(path, 32, "is -m the same");
}

/*
 * return-path: the source waits for the destination's verdict, so a
 * destination that refuses the state leaves the source running.
 */
static void test_return_path(void)
{
    g_autofree char *sock = tmp_path("rp.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = qtest_initf("-m 32 -incoming %s", inc);
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;

    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-capabilities',"
                                  " 'arguments': {'capabilities': ["
                                  "{'capability': 'return-path', "
                                  "'state': true}]}}");
    fill(src, 0x100000, MiB, 4);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': '%s'}}", inc);
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "failed");
    r = qtest_qmp(src, "{'execute': 'query-migrate'}");
    g_assert_nonnull(strstr(json_object_get_string_member(
        json_object_get_object_member(r, "return"), "error-desc"),
        "destination"));
    g_assert_cmpstr(runstate_of(src), ==, "running");
    qtest_wait_exit(dst);
    qtest_quit(dst);

    /* A non-socket transport cannot carry a return path. */
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(src, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'exec:cat > /dev/null'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "return-path"));
    qtest_quit(src);
}

/*
 * libvirt's unix:// migration URI: libvirt connects the socket itself and
 * hands it over with getfd, with return-path set; the return path runs
 * over that fd.  A pipe given the same way is refused.
 */
static void test_return_path_fd(void)
{
    g_autofree char *sock = tmp_path("rpfd.sock");
    g_autofree char *inc = g_strdup_printf("unix:%s", sock);
    QTestState *dst = start_dst(inc, "-S");
    QTestState *src = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) r = NULL;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd, pipefd[2];

    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate-set-capabilities',"
                                  " 'arguments': {'capabilities': ["
                                  "{'capability': 'return-path', "
                                  "'state': true}]}}");
    /* A pipe cannot carry the destination's verdict back. */
    g_assert_cmpint(pipe(pipefd), ==, 0);
    r = qtest_qmp_fds(src, &pipefd[1], 1, "{'execute': 'getfd', "
                      "'arguments': {'fdname': 'pipe'}}");
    g_assert_true(json_object_has_member(r, "return"));
    close(pipefd[1]);
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp(src, "{'execute': 'migrate', 'arguments': "
                  "{'uri': 'fd:pipe'}}");
    g_assert_nonnull(strstr(qtest_qmp_error_desc(r), "not a socket"));
    close(pipefd[0]);
    g_assert_cmpstr(runstate_of(src), ==, "running");

    fill(src, 0x200000, MiB, 5);
    g_strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_clear_pointer(&r, json_object_unref);
    r = qtest_qmp_fds(src, &fd, 1, "{'execute': 'getfd', 'arguments': "
                      "{'fdname': 'migrate'}}");
    g_assert_true(json_object_has_member(r, "return"));
    close(fd);
    g_clear_pointer(&ok, json_node_unref);
    ok = qtest_qmp_assert_success(src, "{'execute': 'migrate', 'arguments': "
                                  "{'uri': 'fd:migrate'}}");
    g_assert_cmpstr(wait_status(src, "completed|failed"), ==, "completed");
    g_assert_cmpstr(wait_status(dst, "completed|failed"), ==, "completed");
    g_assert_cmpstr(runstate_of(src), ==, "postmigrate");
    check(dst, 0x200000, MiB, 5);
    qtest_quit(src);
    qtest_quit(dst);
}

static void test_dump(void)
{
    g_autofree char *path = tmp_path("core.elf");
    QTestState *s = start_src(NULL);
    g_autoptr(JsonNode) ok = NULL;
    g_autoptr(JsonObject) ev = NULL;
    g_autofree char *data = NULL;
    g_autoptr(JsonObject) r = NULL;
    gsize len;
    Elf64_Ehdr *eh;
    Elf64_Phdr *ph;
    bool found = false;

    qtest_writeq(s, 0x123450, 0x1122334455667788ULL);
    ok = qtest_qmp_assert_success(s, "{'execute': 'dump-guest-memory', "
                                  "'arguments': {'paging': false, "
                                  "'protocol': 'file:%s', 'detach': true}}",
                                  path);
    ev = qtest_qmp_eventwait(s, "DUMP_COMPLETED");
    g_assert_cmpstr(json_object_get_string_member(
        json_object_get_object_member(json_object_get_object_member(
            ev, "data"), "result"), "status"), ==, "completed");
    g_assert_cmpstr(runstate_of(s), ==, "running");
    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    eh = (Elf64_Ehdr *)data;
    g_assert_cmpint(memcmp(eh->e_ident, ELFMAG, SELFMAG), ==, 0);
    g_assert_cmpint(eh->e_type, ==, ET_CORE);
    g_assert_cmpint(eh->e_machine, ==, EM_X86_64);
    ph = (Elf64_Phdr *)(data + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && ph[i].p_paddr <= 0x123450 &&
            ph[i].p_paddr + ph[i].p_filesz > 0x123458) {
            uint64_t v;

            memcpy(&v, data + ph[i].p_offset + 0x123450 - ph[i].p_paddr, 8);
            g_assert_cmphex(v, ==, 0x1122334455667788ULL);
            found = true;
        }
    }
    g_assert_true(found);
    r = qtest_qmp(s, "{'execute': 'dump-guest-memory', 'arguments': "
                  "{'paging': false, 'protocol': 'file:%s', "
                  "'format': 'kdump-zlib'}}", path);
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    qtest_quit(s);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmpdir = g_dir_make_tmp("migration-test-XXXXXX", NULL);
    g_test_add_func("/migration/qmp-shapes", test_qmp_shapes);
    g_test_add_func("/migration/unix", test_unix);
    g_test_add_func("/migration/tcp-defer", test_tcp_defer);
    g_test_add_func("/migration/memory-backend", test_memory_backend);
    g_test_add_func("/migration/fd-save-restore", test_fd_save_restore);
    g_test_add_func("/migration/exec-file", test_exec_file);
    g_test_add_func("/migration/dirty-pages", test_dirty_pages);
    g_test_add_func("/migration/pause-before-switchover",
                   test_pause_before_switchover);
    g_test_add_func("/migration/cancel", test_cancel);
    g_test_add_func("/migration/fault/dest-dies", test_dest_dies);
    g_test_add_func("/migration/fault/truncated-corrupted",
                   test_truncated_corrupted);
    g_test_add_func("/migration/return-path", test_return_path);
    g_test_add_func("/migration/return-path-fd", test_return_path_fd);
    g_test_add_func("/migration/dump-guest-memory", test_dump);
    ret = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf %s", tmpdir);
    if (system(cmd)) {
        /* best effort */
    }
    return ret;
}
