/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The management side of docs/devel/trust-boundaries.rst (issue 26), as a
 * careless client drives it over QMP and the command line:
 *  - blockdev-add / -blockdev of a FIFO (or a directory, a character
 *    device, a socket) never blocks and is refused by name and type;
 *  - a failed blockdev-add, netdev_add or device_add leaves nothing
 *    behind: nodes, fds (counted in /proc/PID/fd), names;
 *  - a node and its inline child cannot share a name;
 *  - a numeric fd= that another backend or Conduit itself owns is
 *    refused: no fd ever has two owners;
 *  - JSON values must have the type the property declares ({} for a
 *    scalar, 12 or true for a string);
 *  - -m with a bad slots= or a maxmem= below the size stops start-up.
 * After each, the VM still answers QMP.
 */
#include "qemu/osdep.h"
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "libqtest.h"

static void assert_alive(QTestState *qts)
{
    g_autoptr(JsonNode) r = qtest_qmp_assert_success(
        qts, "{'execute':'query-status'}");

    g_assert_nonnull(r);
}

static unsigned count_fds(QTestState *qts)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/fd",
                                            (int)qtest_pid(qts));
    GDir *d = g_dir_open(path, 0, NULL);
    unsigned n = 0;

    g_assert_nonnull(d);
    while (g_dir_read_name(d)) {
        n++;
    }
    g_dir_close(d);
    return n;
}

static unsigned count_nodes(QTestState *qts)
{
    JsonObject *r = qtest_qmp(qts, "{'execute':'query-named-block-nodes'}");
    unsigned n = json_array_get_length(json_object_get_array_member(r,
                                                                    "return"));

    json_object_unref(r);
    return n;
}

/* The command fails with GenericError and a description containing all. */
static void assert_error(JsonObject *r, const char *needle,
                         const char *needle2)
{
    const char *desc = qtest_qmp_error_desc(r);

    g_assert_nonnull(desc);
    g_assert_cmpstr(qtest_qmp_error_class(r), ==, "GenericError");
    if (!strstr(desc, needle) || (needle2 && !strstr(desc, needle2))) {
        g_error("expected '%s'%s%s in '%s'", needle, needle2 ? " and " : "",
                needle2 ? needle2 : "", desc);
    }
    json_object_unref(r);
}

static char *make_image(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(ftruncate(fd, 1024 * 1024), ==, 0);
    close(fd);
    return path;
}

/* ---- 7: files that cannot be disks ---------------------------------- */

static void test_blockdev_fifo(void)
{
    g_autofree char *dir = g_dir_make_tmp("trust-mgmt-XXXXXX", NULL);
    g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
    g_autofree char *sock = g_build_filename(dir, "sock", NULL);
    g_autofree char *args = NULL;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    QTestState *qts;
    int sfd;

    g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
    sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    g_strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
    g_assert_cmpint(bind(sfd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);

    /* QMP: no writer on the FIFO, and the reply comes at once anyway. */
    qts = qtest_init("-M pc -m 64M");
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'f0','read-only':true}}", fifo),
                 fifo, "is a FIFO");
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'f1'}}", fifo), fifo, "is a FIFO");
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'f2','read-only':true}}", dir),
                 dir, "is a directory");
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'/dev/null',"
                           "'node-name':'f3','read-only':true}}"),
                 "/dev/null", "is a character device");
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'f4','read-only':true}}", sock),
                 sock, "is a socket");
    /* Inline, under raw. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'f5',"
                           "'read-only':true,'file':{'driver':'file',"
                           "'filename':'%s'}}}", fifo), fifo, "is a FIFO");
    g_assert_cmpuint(count_nodes(qts), ==, 0);
    assert_alive(qts);
    qtest_quit(qts);

    /* The command line: start-up fails at once, naming the option. */
    args = g_strdup_printf("-M pc -accel qtest -display none "
                           "-blockdev driver=file,filename=%s,node-name=f0,"
                           "read-only=on", fifo);
    qtest_assert_start_fails(args, "is a FIFO, not a regular file or block "
                             "device");
    close(sfd);
    unlink(sock);
    unlink(fifo);
    rmdir(dir);
}

/* ---- 8: a failed blockdev-add leaves nothing ------------------------- */

static void test_blockdev_failed_add(void)
{
    g_autofree char *dir = g_dir_make_tmp("trust-mgmt-XXXXXX", NULL);
    g_autofree char *img = make_image(dir, "disk.img");
    QTestState *qts = qtest_init("-M pc -m 64M");
    unsigned fds = count_fds(qts), nodes = count_nodes(qts);
    JsonObject *r;

    /* The inline child opens, then the raw node fails: both go. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'r0',"
                           "'read-only':false,'file':{'driver':'file',"
                           "'filename':'%s','read-only':true}}}", img),
                 "must be read-only", NULL);
    g_assert_cmpuint(count_nodes(qts), ==, nodes);
    g_assert_cmpuint(count_fds(qts), ==, fds);
    /* Same with a named child: its name is free again. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'r0',"
                           "'read-only':false,'file':{'driver':'file',"
                           "'filename':'%s','read-only':true,"
                           "'node-name':'c0'}}}", img),
                 "must be read-only", NULL);
    g_assert_cmpuint(count_nodes(qts), ==, nodes);
    g_assert_cmpuint(count_fds(qts), ==, fds);

    /* A node and its inline child cannot both be called 'dup'. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'dup',"
                           "'file':{'driver':'file','filename':'%s',"
                           "'node-name':'dup'}}}", img),
                 "Duplicate nodes with node-name='dup'", NULL);
    g_assert_cmpuint(count_nodes(qts), ==, nodes);
    g_assert_cmpuint(count_fds(qts), ==, fds);

    /* Every name used above can be used now, and deleted again. */
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'file','filename':'%s',"
                             "'node-name':'c0'}}", img);
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'raw','node-name':'dup',"
                             "'file':'c0'}}");
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-del','arguments':"
                             "{'node-name':'dup'}}");
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-del','arguments':"
                             "{'node-name':'c0'}}");
    /* An automatic name is not used up by a failure either. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'r1',"
                           "'read-only':false,'file':{'driver':'file',"
                           "'filename':'%s','read-only':true}}}", img),
                 "must be read-only", NULL);
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'raw','node-name':'r1',"
                             "'file':{'driver':'file','filename':'%s'}}}",
                             img);
    r = qtest_qmp(qts, "{'execute':'query-named-block-nodes'}");
    {
        JsonArray *a = json_object_get_array_member(r, "return");
        bool found = false;

        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = json_array_get_object_element(a, i);
            const char *n = json_object_get_string_member(o, "node-name");

            found |= !strcmp(n, "#block000");
        }
        g_assert_true(found);
    }
    json_object_unref(r);
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-del','arguments':"
                             "{'node-name':'r1'}}");
    g_assert_cmpuint(count_fds(qts), ==, fds);
    assert_alive(qts);
    qtest_quit(qts);
    unlink(img);
    rmdir(dir);
}

/* ---- 8: failed netdev_add / device_add leave nothing ------------------ */

static void test_failed_netdev_device_add(void)
{
    g_autofree char *dir = g_dir_make_tmp("trust-mgmt-XXXXXX", NULL);
    g_autofree char *img = make_image(dir, "disk.img");
    QTestState *qts = qtest_init("-M pc -m 64M");
    unsigned fds = count_fds(qts);
    int pfd[2];
    JsonObject *r;

    /* A pipe is no datagram socket: the named fd is taken and closed. */
    g_assert_cmpint(pipe(pfd), ==, 0);
    qtest_qmp_fds(qts, &pfd[0], 1, "{'execute':'getfd','arguments':"
                  "{'fdname':'pipe0'}}");
    g_assert_cmpuint(count_fds(qts), ==, fds + 1);
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'socket','id':'n0','fd':'pipe0'}}"),
                 "is not a datagram socket", NULL);
    g_assert_cmpuint(count_fds(qts), ==, fds);
    /* The id is free: a good netdev_add with it works, and goes. */
    {
        int sv[2];

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), ==, 0);
        qtest_qmp_fds(qts, &sv[1], 1, "{'execute':'getfd','arguments':"
                      "{'fdname':'sock0'}}");
        qtest_qmp_assert_success(qts, "{'execute':'netdev_add','arguments':"
                                 "{'type':'socket','id':'n0',"
                                 "'fd':'sock0'}}");
        qtest_qmp_assert_success(qts, "{'execute':'netdev_del','arguments':"
                                 "{'id':'n0'}}");
        close(sv[0]);
        close(sv[1]);
    }
    g_assert_cmpuint(count_fds(qts), ==, fds);
    close(pfd[0]);
    close(pfd[1]);

    /* device_add that fails late (realize): node not held, id free. */
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'file','filename':'%s',"
                             "'node-name':'d0'}}", img);
    fds = count_fds(qts);
    assert_error(qtest_qmp(qts, "{'execute':'device_add','arguments':"
                           "{'driver':'virtio-blk-pci','drive':'d0',"
                           "'id':'vd0','queue-size':3}}"),
                 "queue-size=3", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'device_add','arguments':"
                           "{'driver':'virtio-blk-pci','drive':'nope',"
                           "'id':'vd0'}}"), "'nope' not found", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'device_add','arguments':"
                           "{'driver':'virtio-blk-pci','drive':'d0',"
                           "'id':'vd0','max-discard-sectors':0}}"),
                 "must not be 0", NULL);
    g_assert_cmpuint(count_fds(qts), ==, fds);
    r = qtest_qmp(qts, "{'execute':'qom-list','arguments':"
                  "{'path':'/machine/peripheral'}}");
    {
        JsonArray *a = json_object_get_array_member(r, "return");

        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = json_array_get_object_element(a, i);

            g_assert_cmpstr(json_object_get_string_member(o, "name"), !=,
                            "vd0");
        }
    }
    json_object_unref(r);
    /* The node is not held: it can be deleted, made again and used. */
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-del','arguments':"
                             "{'node-name':'d0'}}");
    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'file','filename':'%s',"
                             "'node-name':'d0'}}", img);
    qtest_qmp_assert_success(qts, "{'execute':'device_add','arguments':"
                             "{'driver':'virtio-blk-pci','drive':'d0',"
                             "'id':'vd0'}}");
    assert_alive(qts);
    qtest_quit(qts);
    unlink(img);
    rmdir(dir);
}

/* ---- 9: numeric fds ---------------------------------------------------- */

/* An fd the process opened itself (an eventfd), found in /proc/PID/fd. */
static int find_own_fd(QTestState *qts, const char *what)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/fd",
                                            (int)qtest_pid(qts));
    GDir *d = g_dir_open(path, 0, NULL);
    const char *name;
    int fd = -1;

    while (fd < 0 && (name = g_dir_read_name(d))) {
        g_autofree char *link = g_build_filename(path, name, NULL);
        g_autofree char *target = g_file_read_link(link, NULL);

        if (target && strstr(target, what)) {
            fd = atoi(name);
        }
    }
    g_dir_close(d);
    return fd;
}

static bool fd_is_socket(QTestState *qts, int fd)
{
    g_autofree char *link = g_strdup_printf("/proc/%d/fd/%d",
                                            (int)qtest_pid(qts), fd);
    g_autofree char *target = g_file_read_link(link, NULL);

    return target && g_str_has_prefix(target, "socket:");
}

/*
 * A passed connected socket a chardev owns (fd=N) closes when its peer
 * hangs up; the number is then free, and a later getfd may get it.  The
 * backend taking that fd by name must get it (before: the chardev's
 * claim outlived the socket and netdev_add aborted Conduit).
 */
static void test_chardev_fd_reused(void)
{
    int s[2], n;
    g_autofree char *gone = NULL;
    char name[16] = "";
    QTestState *qts;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM, 0, s), ==, 0);
    /* Only s[1] goes to Conduit: the peer's end stays ours. */
    fcntl(s[0], F_SETFD, FD_CLOEXEC);
    n = s[1];
    qts = qtest_initf("-M pc -m 64M -chardev socket,id=c0,fd=%d "
                      "-serial chardev:c0", n);
    close(s[1]);
    close(s[0]);
    gone = g_strdup_printf("/proc/%d/fd/%d", (int)qtest_pid(qts), n);
    for (int i = 0; i < 500 && g_file_test(gone, G_FILE_TEST_EXISTS); i++) {
        g_usleep(10000);
    }
    g_assert_false(g_file_test(gone, G_FILE_TEST_EXISTS));
    /* Names until one of the passed fds lands on number n. */
    for (int i = 0; i < 32 && !name[0]; i++) {
        int d[2];
        struct stat st, mine;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), ==, 0);
        json_object_unref(qtest_qmp_fds(qts, &d[1], 1,
                                        "{'execute':'getfd','arguments':"
                                        "{'fdname':'g%d'}}", i));
        if (stat(gone, &st) == 0 && fstat(d[1], &mine) == 0 &&
            st.st_ino == mine.st_ino) {
            g_snprintf(name, sizeof(name), "g%d", i);
        }
        close(d[0]);
        close(d[1]);
    }
    g_assert_cmpstr(name, !=, "");
    json_node_unref(qtest_qmp_assert_success(qts,
        "{'execute':'netdev_add','arguments':"
        "{'type':'socket','id':'n0','fd':'%s'}}", name));
    assert_alive(qts);
    qtest_quit(qts);
}

static void test_numeric_fds(void)
{
    int a[2], b[2];
    QTestState *qts;
    int own;

    /* The child inherits a[1] and b[1] (no CLOEXEC) by number. */
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, a), ==, 0);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, b), ==, 0);
    fcntl(a[0], F_SETFD, FD_CLOEXEC);
    fcntl(b[0], F_SETFD, FD_CLOEXEC);
    qts = qtest_initf("-M pc -m 64M -netdev socket,id=n0,fd=%d "
                      "-device virtio-net-pci,netdev=n0,id=nic0", a[1]);

    /* Another backend's fd: refused, and n0 keeps it. */
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'socket','id':'n1','fd':'%d'}}", a[1]),
                 "Parameter 'fd' expects", "belongs to netdev 'n0'");
    g_assert_true(fd_is_socket(qts, a[1]));
    /* Conduit's own fds: an eventfd, the QMP socket, stdio. */
    own = find_own_fd(qts, "eventfd");
    g_assert_cmpint(own, >, 2);
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'tap','id':'n2','fd':'%d'}}", own),
                 "Parameter 'fd' expects", "Conduit opened itself");
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'socket','id':'n2','fd':'2'}}"),
                 "Parameter 'fd' expects", "standard I/O");
    /* A getfd'd fd by its number is Conduit's: use its name instead. */
    {
        int c[2], before, taken = -1;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, c), ==, 0);
        before = count_fds(qts);
        qtest_qmp_fds(qts, &c[1], 1, "{'execute':'getfd','arguments':"
                      "{'fdname':'c1'}}");
        g_assert_cmpuint(count_fds(qts), ==, before + 1);
        for (int fd = 3; fd < 1024 && taken < 0; fd++) {
            g_autofree char *link = g_strdup_printf(
                "/proc/%d/fd/%d", (int)qtest_pid(qts), fd);
            struct stat st, mine;

            if (stat(link, &st) == 0 && fstat(c[1], &mine) == 0 &&
                st.st_ino == mine.st_ino) {
                taken = fd;
            }
        }
        g_assert_cmpint(taken, >, 2);
        assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                               "{'type':'socket','id':'n2','fd':'%d'}}",
                               taken), "Conduit opened itself", NULL);
        qtest_qmp_assert_success(qts, "{'execute':'netdev_add','arguments':"
                                 "{'type':'socket','id':'n2','fd':'c1'}}");
        close(c[0]);
        close(c[1]);
    }
    /* An inherited fd nobody owns is fine, once. */
    qtest_qmp_assert_success(qts, "{'execute':'netdev_add','arguments':"
                             "{'type':'socket','id':'n3','fd':'%d'}}", b[1]);
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'socket','id':'n4','fd':'%d'}}", b[1]),
                 "belongs to netdev 'n3'", NULL);
    /* The sequence: n0's fd survives the others' removal. */
    qtest_qmp_assert_success(qts, "{'execute':'netdev_del','arguments':"
                             "{'id':'n3'}}");
    qtest_qmp_assert_success(qts, "{'execute':'netdev_del','arguments':"
                             "{'id':'n2'}}");
    g_assert_true(fd_is_socket(qts, a[1]));
    qtest_qmp_assert_success(qts, "{'execute':'system_reset'}");
    assert_alive(qts);
    qtest_quit(qts);
    close(a[0]);
    close(a[1]);
    close(b[0]);
    close(b[1]);

    /* The command line: two backends on one fd. */
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, a), ==, 0);
    {
        g_autofree char *args = g_strdup_printf(
            "-M pc -accel qtest -display none -netdev socket,id=n0,fd=%d "
            "-netdev socket,id=n1,fd=%d", a[1], a[1]);

        qtest_assert_start_fails(args, "belongs to netdev 'n0'");
    }
    close(a[0]);
    close(a[1]);
}

/* ---- 10: JSON types ---------------------------------------------------- */

static void test_json_types(void)
{
    g_autofree char *dir = g_dir_make_tmp("trust-mgmt-XXXXXX", NULL);
    g_autofree char *img = make_image(dir, "disk.img");
    QTestState *qts = qtest_init("-M pc -m 64M");
    static const char *const bad_device[][2] = {
        { "'queue-size':{}", "Parameter 'queue-size' expects" },
        { "'discard':{}", "Parameter 'discard' expects" },
        { "'serial':{}", "Parameter 'serial' expects" },
        { "'serial':12", "Parameter 'serial' expects a string" },
        { "'serial':true", "Parameter 'serial' expects a string" },
        { "'discard':'on'", "Parameter 'discard' expects a boolean" },
        { "'discard':1", "Parameter 'discard' expects a boolean" },
        { "'queue-size':'64'", "Parameter 'queue-size' expects an integer" },
        { "'queue-size':1.5", "Parameter 'queue-size' expects an integer" },
        { "'write-cache':true", "Parameter 'write-cache' expects a string" },
        { "'drive':7", "Parameter 'drive' expects a string" },
    };

    qtest_qmp_assert_success(qts, "{'execute':'blockdev-add','arguments':"
                             "{'driver':'file','filename':'%s',"
                             "'node-name':'d0'}}", img);
    for (size_t i = 0; i < G_N_ELEMENTS(bad_device); i++) {
        assert_error(qtest_qmp(qts, "{'execute':'device_add','arguments':"
                               "{'driver':'virtio-blk-pci','drive':'d0',"
                               "'id':'vd%zu',%s}}", i, bad_device[i][0]),
                     bad_device[i][1], NULL);
    }
    /* blockdev-add and netdev_add check their keys the same way. */
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'d1','read-only':{}}}", img),
                 "Parameter 'read-only' expects", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'d1','read-only':'on'}}", img),
                 "Parameter 'read-only' expects a boolean", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'raw','node-name':'d1',"
                           "'file':{'driver':'file','filename':'%s',"
                           "'read-only':1}}}", img),
                 "Parameter 'file.read-only' expects a boolean", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'blockdev-add','arguments':"
                           "{'driver':'file','filename':'%s',"
                           "'node-name':'d1','discard':{}}}", img),
                 "Parameter 'discard' expects", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'socket','id':'n0','fd':3}}"),
                 "Parameter 'fd' expects a string", NULL);
    assert_error(qtest_qmp(qts, "{'execute':'netdev_add','arguments':"
                           "{'type':'tap','id':'n0','vhost':'on'}}"),
                 "Parameter 'vhost' expects a boolean", NULL);
    g_assert_cmpuint(count_nodes(qts), ==, 1);

    /* The right types work: what libvirt sends. */
    qtest_qmp_assert_success(qts, "{'execute':'device_add','arguments':"
                             "{'driver':'virtio-blk-pci','drive':'d0',"
                             "'id':'vd0','serial':'S1','queue-size':64,"
                             "'discard':false,'write-cache':'on',"
                             "'bootindex':1,'addr':'0x6'}}");
    assert_alive(qts);
    qtest_quit(qts);

    /* -device in JSON on the command line is checked too. */
    {
        g_autofree char *args = g_strdup_printf(
            "-M pc -accel qtest -display none "
            "-blockdev driver=file,filename=%s,node-name=d0 "
            "-device '{\"driver\":\"virtio-blk-pci\",\"drive\":\"d0\","
            "\"serial\":12}'", img);

        qtest_assert_start_fails(args, "Parameter 'serial' expects a "
                                 "string");
    }
    unlink(img);
    rmdir(dir);
}

/* ---- 11: -m ------------------------------------------------------------ */

static void test_memory_options(void)
{
    qtest_assert_start_fails("-M pc -accel qtest -display none "
                             "-m 1G,slots=garbage",
                             "-m 1G,slots=garbage: Parameter 'slots' "
                             "expects");
    qtest_assert_start_fails("-M pc -accel qtest -display none "
                             "-m 2G,maxmem=1G",
                             "-m 2G,maxmem=1G: invalid value of maxmem");
    qtest_assert_start_fails("-M pc -accel qtest -display none "
                             "-m 1G,maxmem=junk",
                             "Parameter 'maxmem' expects");
    qtest_assert_start_fails("-M pc -accel qtest -display none "
                             "-m 1G,slots=2",
                             "missing 'maxmem' option");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trust-mgmt/blockdev/fifo", test_blockdev_fifo);
    g_test_add_func("/trust-mgmt/blockdev/failed-add",
                    test_blockdev_failed_add);
    g_test_add_func("/trust-mgmt/failed-netdev-device-add",
                    test_failed_netdev_device_add);
    g_test_add_func("/trust-mgmt/numeric-fds", test_numeric_fds);
    g_test_add_func("/trust-mgmt/chardev-fd-reused", test_chardev_fd_reused);
    g_test_add_func("/trust-mgmt/json-types", test_json_types);
    g_test_add_func("/trust-mgmt/memory-options", test_memory_options);
    return g_test_run();
}
