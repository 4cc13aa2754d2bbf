# SPDX-License-Identifier: GPL-2.0-or-later
"""A private libvirtd for tests: own configuration, sockets and state.

Debian's libvirtd runs privileged as root with state under /run/libvirt,
/var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and /etc/libvirt.
The daemon is started in its own mount namespace where each of those is a
directory of the test's temporary tree (and /run a tmpfs), so nothing is
written outside it; its sockets live in the temporary tree too, and virsh
connects with qemu:///system?socket=....  It has its own network
namespace as well: the tap devices libvirt creates, and any bridge a test
makes for them (netns_run()), never appear on the host.  stop() kills the
daemon and every process it left (domains, probes); the namespaces go with
them.

No systemd is needed.  The QEMU driver runs emulators as root without
cgroups, security drivers or per-domain namespaces (none of which exist
in the test machines), and writes their stdio to files (no virtlogd).
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

LIBVIRTD = '/usr/sbin/libvirtd'
VIRSH = shutil.which('virsh') or '/usr/bin/virsh'
NSENTER = shutil.which('nsenter') or '/usr/bin/nsenter'
# Bind-mounted over these inside the daemon's mount namespace.
STATE_DIRS = {
    'lib': '/var/lib/libvirt',
    'cache': '/var/cache/libvirt',
    'log': '/var/log/libvirt',
    'etc': '/etc/libvirt',
}

QEMU_CONF = '''user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
'''


def hugetlbfs_available():
    try:
        with open('/proc/filesystems') as f:
            return any(line.split()[-1] == 'hugetlbfs' for line in f
                       if line.strip())
    except OSError:
        return False


def reserve_hugepages(count):
    """At least @count free 2 MiB pages (raising vm.nr_hugepages, which
    needs root); returns the old setting for release_hugepages(), or
    None if it could not be done."""
    path = '/proc/sys/vm/nr_hugepages'
    free = '/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages'
    try:
        with open(path) as f:
            old = int(f.read())
        with open(free) as f:
            have = int(f.read())
        if have < count:
            with open(path, 'w') as f:
                f.write(str(old + count - have))
        with open(free) as f:
            if int(f.read()) < count:
                release_hugepages(old)
                return None
        return old
    except (OSError, ValueError):
        return None


def release_hugepages(old):
    try:
        with open('/proc/sys/vm/nr_hugepages', 'w') as f:
            f.write(str(old))
    except OSError:
        pass


def unavailable_reason():
    """Why libvirt cannot run here, or None."""
    if os.geteuid() != 0:
        return 'libvirt tests need root (a privileged libvirtd)'
    for path in (LIBVIRTD, VIRSH):
        if not os.access(path, os.X_OK):
            return ('%s missing (scripts/install-deps installs '
                    'libvirt-daemon-system and libvirt-clients)' % path)
    for path in STATE_DIRS.values():
        if not os.path.isdir(path):
            return '%s missing (libvirt-daemon-system not installed?)' % path
    try:
        subprocess.run(['getent', 'passwd', 'libvirt-qemu'], check=True,
                       stdout=subprocess.DEVNULL)
    except (OSError, subprocess.CalledProcessError):
        return 'no libvirt-qemu user (install libvirt-daemon-system)'
    for tool in ('unshare', 'nsenter'):
        if not shutil.which(tool):
            return '%s(1) missing (util-linux)' % tool
    return None


class Libvirtd:
    def __init__(self, tmpdir=None, timeout=60, emulators=(), hostname=None,
                 host_uuid=None):
        # A second daemon that libvirt must take for another host (the
        # destination of `virsh migrate`): its own host UUID, and its own
        # UTS namespace with @hostname (libvirt refuses a migration
        # whose two ends have the same UUID or the same name).
        self.hostname = hostname
        self.host_uuid = host_uuid
        # (name, path) pairs: path found as name on the daemon's PATH, so
        # that its capabilities list it (virt-install picks from them).
        self.emulators = list(emulators)
        self.own_tmp = tmpdir is None
        self.tmp = tmpdir or tempfile.mkdtemp(prefix='conduit-libvirt-')
        self.timeout = timeout
        self.proc = None
        self.sockdir = os.path.join(self.tmp, 'sock')
        self.uri = 'qemu:///system?socket=%s/libvirt-sock' % self.sockdir
        self.logfile = os.path.join(self.tmp, 'libvirtd.log')

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def start(self):
        for d in list(STATE_DIRS) + ['sock', 'run']:
            os.makedirs(self.path(d), exist_ok=True)
        os.makedirs(self.path('etc', 'qemu'), exist_ok=True)
        with open(self.path('etc', 'libvirtd.conf'), 'w') as f:
            f.write('unix_sock_dir = "%s"\n' % self.sockdir)
            f.write('auth_unix_ro = "none"\nauth_unix_rw = "none"\n')
            f.write('unix_sock_rw_perms = "0700"\n')
            f.write('log_outputs = "1:file:%s"\n' % self.logfile)
            f.write('log_filters = "1:qemu 1:util.command 3:rpc 3:event '
                    '3:util.json 3:util.object 3:util.threadjob"\n')
            f.write('keepalive_interval = -1\n')
            if self.host_uuid:
                f.write('host_uuid = "%s"\n' % self.host_uuid)
        with open(self.path('etc', 'qemu.conf'), 'w') as f:
            f.write(QEMU_CONF)
        mounts = ['/bin/mount --make-rprivate /',
                  '/bin/mount -t tmpfs -o mode=0755 tmpfs /run',
                  # virsh console locks the pty there (/var/lock).
                  '/bin/mkdir -p /run/lock']
        if self.hostname:
            mounts.append('/bin/hostname %s' % self.hostname)
        # Huge pages for <memoryBacking><hugepages/>: libvirt finds the
        # mount in /proc/mounts; this one is the daemon's alone.
        if hugetlbfs_available():
            mounts += ['/bin/mkdir -p /dev/hugepages',
                       '/bin/mount -t hugetlbfs -o pagesize=2M hugetlbfs '
                       '/dev/hugepages']
        for name, target in STATE_DIRS.items():
            mounts.append('/bin/mount --bind %s %s' % (self.path(name),
                                                      target))
        script = ' && '.join(mounts) + ' && exec %s --pid-file %s' % (
            LIBVIRTD, self.path('run', 'libvirtd.pid'))
        self.daemon_log = open(self.path('libvirtd.stderr'), 'w')
        # Without /usr/bin on PATH libvirtd does not find (and probe at
        # start-up) every qemu-system-* installed: only our emulator.
        env = dict(os.environ, PATH=self.daemon_path())
        self.proc = subprocess.Popen(
            ['/usr/bin/unshare', '--mount', '--net'] +
            (['--uts'] if self.hostname else []) + ['--', '/bin/sh', '-c',
                                                    script],
            stdout=self.daemon_log, stderr=subprocess.STDOUT,
            start_new_session=True, env=env)
        deadline = time.monotonic() + self.timeout
        sock = os.path.join(self.sockdir, 'libvirt-sock')
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('libvirtd exited: %s' % self.log_tail())
            if os.path.exists(sock):
                self.mntns = os.readlink('/proc/%d/ns/mnt' % self.proc.pid)
                r = self.virsh('list', '--all', check=False)
                if r.returncode == 0:
                    return self
            time.sleep(0.2)
        raise RuntimeError('libvirtd did not come up: %s' % self.log_tail())

    def restart(self):
        """Stops libvirtd (SIGTERM, as a package upgrade does) and starts
        a new one in the same namespaces and state directories, where
        the domains it left keep running; returns once virsh answers.
        libvirt then reconnects to each domain's monitor."""
        anchor = [p for p in self.namespace_pids() if p != self.proc.pid]
        if not anchor:
            raise RuntimeError('nothing runs in the namespace to restart '
                               'libvirtd beside')
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(self.timeout)
        env = dict(os.environ, PATH=self.daemon_path())
        # -r and -w: the domain's root and directory too (a chroot, in
        # the nested test), not the namespace's.
        self.proc = subprocess.Popen(
            [NSENTER, '-t', str(anchor[0]), '-m', '-n', '-r', '-w'] +
            (['-u'] if self.hostname else []) + ['--',
             LIBVIRTD, '--pid-file', self.path('run', 'libvirtd.pid')],
            stdout=self.daemon_log, stderr=subprocess.STDOUT,
            start_new_session=True, env=env)
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('libvirtd exited: %s' % self.log_tail())
            r = self.virsh('list', '--all', check=False)
            if r.returncode == 0:
                return self
            time.sleep(0.2)
        raise RuntimeError('libvirtd did not come back: %s' %
                           self.log_tail())

    def daemon_path(self):
        if not self.emulators:
            return '/usr/sbin:/sbin'
        bindir = self.path('bin')
        os.makedirs(bindir, exist_ok=True)
        for name, target in self.emulators:
            link = os.path.join(bindir, name)
            if not os.path.lexists(link):
                os.symlink(target, link)
        return bindir + ':/usr/sbin:/sbin'

    def netns_argv(self, argv):
        """@argv run in the daemon's network namespace (where its taps
        are), keeping the caller's mount namespace."""
        return [NSENTER, '--net=/proc/%d/ns/net' % self.proc.pid] + \
            list(argv)

    def netns_run(self, *argv, check=True):
        r = subprocess.run(self.netns_argv(argv), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=self.timeout)
        if check and r.returncode:
            raise AssertionError('%s failed (%d): %s%s' % (
                ' '.join(argv), r.returncode, r.stdout, r.stderr))
        return r

    def log_tail(self, n=4000):
        out = ''
        for p in (self.path('libvirtd.stderr'), self.logfile):
            try:
                with open(p, errors='replace') as f:
                    out += f.read()[-n:]
            except OSError:
                pass
        return out

    def virsh(self, *args, check=True, timeout=None, input=None):
        r = subprocess.run([VIRSH, '-q', '-c', self.uri] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, input=input,
                           timeout=timeout or self.timeout)
        if check and r.returncode:
            raise AssertionError('virsh %s failed (%d): %s%s' % (
                ' '.join(args), r.returncode, r.stdout, r.stderr))
        return r

    def stop(self):
        """Kills the daemon and everything in its mount namespace (domains
        and probes, which daemonize out of its process tree); removes the
        tree."""
        if self.proc and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.kill_namespace()
        if getattr(self, 'daemon_log', None):
            self.daemon_log.close()
        if self.own_tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def kill_namespace(self):
        if not getattr(self, 'mntns', None):
            return
        for _ in range(50):
            left = [p for p in self.namespace_pids() if p != os.getpid()]
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def namespace_pids(self):
        pids = []
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            try:
                if os.readlink('/proc/%s/ns/mnt' % pid) == self.mntns:
                    pids.append(int(pid))
            except OSError:
                continue
        return pids

    def start_or_cleanup(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __enter__(self):
        return self.start_or_cleanup()

    def __exit__(self, *exc):
        self.stop()
