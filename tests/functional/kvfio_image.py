# SPDX-License-Identifier: GPL-2.0-or-later
"""Builds what test_kernel_vfio.py boots: Debian's kernel and an initramfs.

The kernel comes from the linux-image-amd64 package (/boot/vmlinuz-VER and
/usr/lib/modules/VER).  Its uncompressed vmlinux is cut out of the bzImage
so QEMU can boot it through PVH without the decompressor.  The initramfs is
two concatenated gzipped cpio archives (the kernel unpacks each in turn): a
cached base (busybox, the vfio modules, /init) and a per-run part with
Conduit, the driver and every shared library they link.
"""

import glob
import gzip
import json
import lzma
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zlib

# Loaded at boot, dependencies first (each module's depends= is followed).
VFIO_MODULES = ['irqbypass', 'vfio', 'vfio_virqfd', 'vfio_iommu_type1',
                'vfio-pci-core', 'vfio-pci']
# Packed too, loaded only by the KVM case (-cpu max offers SVM under TCG).
KVM_MODULES = ['kvm', 'kvm-amd']

ELF_MAGIC = b'\x7fELF'


class Unavailable(Exception):
    """A package the test needs is missing: the test is skipped."""


def find_kernel():
    """(version, bzImage path, modules dir) of the newest usable kernel."""
    found = []
    for path in glob.glob('/boot/vmlinuz-*'):
        ver = path[len('/boot/vmlinuz-'):]
        mods = os.path.join('/usr/lib/modules', ver)
        if os.path.exists(os.path.join(mods, 'kernel/drivers/vfio/pci',
                                       'vfio-pci.ko')) and \
                os.access(path, os.R_OK):
            found.append((ver, path, mods))
    if not found:
        raise Unavailable('no readable /boot/vmlinuz-* with vfio modules '
                          '(scripts/install-deps installs linux-image-amd64)')
    found.sort(key=lambda t: [(0, int(x), '') if x.isdigit() else (1, 0, x)
                              for x in re.split(r'[.-]', t[0])])
    return found[-1]


def extract_vmlinux(bzimage):
    """The ELF vmlinux inside a bzImage, or None if no known payload."""
    with open(bzimage, 'rb') as f:
        data = f.read()
    # The payload's compressed stream sits inside the setup+decompressor;
    # try each magic where it occurs and keep the first that yields an ELF.
    magics = [
        (b'\xfd7zXZ\x00', lambda d: lzma.LZMADecompressor().decompress(d)),
        (b'\x1f\x8b\x08', lambda d: zlib.decompressobj(31).decompress(d)),
    ]
    for magic, inflate in magics:
        pos = data.find(magic)
        while pos >= 0:
            try:
                out = inflate(data[pos:])
            except (lzma.LZMAError, zlib.error, EOFError):
                out = b''
            if out.startswith(ELF_MAGIC):
                return out
            pos = data.find(magic, pos + 1)
    return None


def module_depends(ko):
    """The module names a .ko depends on (its modinfo depends=)."""
    modinfo = shutil.which('modinfo') or '/usr/sbin/modinfo'
    if os.path.exists(modinfo):
        out = subprocess.run([modinfo, '-F', 'depends', ko],
                             stdout=subprocess.PIPE, check=True).stdout
        text = out.decode().strip()
    else:
        with open(ko, 'rb') as f:
            m = re.search(rb'depends=([^\x00]*)\x00', f.read())
        text = m.group(1).decode() if m else ''
    return [d.replace('_', '-') for d in text.split(',') if d]


def find_module(mods_dir, name):
    pats = {name, name.replace('-', '_'), name.replace('_', '-')}
    for root, _, files in os.walk(os.path.join(mods_dir, 'kernel')):
        for f in files:
            if f.endswith('.ko') and f[:-3] in pats:
                return os.path.join(root, f)
    raise Unavailable('kernel module %s not found in %s' % (name, mods_dir))


def module_load_order(mods_dir, wanted):
    """Paths of @wanted and everything they depend on, dependencies first."""
    order, seen = [], set()

    def visit(name, stack):
        key = name.replace('_', '-')
        if key in seen:
            return
        if key in stack:
            raise RuntimeError('module dependency loop at ' + name)
        path = find_module(mods_dir, name)
        for dep in module_depends(path):
            visit(dep, stack | {key})
        seen.add(key)
        order.append(path)

    for name in wanted:
        visit(name, set())
    return order


class Cpio:
    """A newc cpio archive writer."""

    def __init__(self):
        self.parts = []
        self.ino = 1
        self.dirs = set()

    def _entry(self, name, mode, data=b''):
        hdr = '070701' + ''.join('%08x' % v for v in (
            self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0,
            len(name) + 1, 0))
        self.ino += 1
        buf = hdr.encode() + name.encode() + b'\0'
        buf += b'\0' * (-len(buf) % 4)
        buf += data + b'\0' * (-len(data) % 4)
        self.parts.append(buf)

    def mkdir(self, path):
        path = path.strip('/')
        if not path or path in self.dirs:
            return
        self.mkdir(os.path.dirname(path))
        self.dirs.add(path)
        self._entry(path, stat.S_IFDIR | 0o755)

    def add_data(self, path, data, mode=0o644):
        path = path.strip('/')
        self.mkdir(os.path.dirname(path))
        self._entry(path, stat.S_IFREG | mode, data)

    def add_file(self, path, src, mode=None):
        with open(src, 'rb') as f:
            data = f.read()
        if mode is None:
            mode = os.stat(src).st_mode & 0o777
        self.add_data(path, data, mode)

    def add_symlink(self, path, target):
        path = path.strip('/')
        self.mkdir(os.path.dirname(path))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def finish(self):
        self._entry('TRAILER!!!', 0)
        out = b''.join(self.parts)
        return out + b'\0' * (-len(out) % 512)


def shared_libraries(binary):
    """Absolute paths of the libraries @binary loads (ldd), loader too."""
    out = subprocess.run(['ldd', binary], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    libs = []
    for line in out.splitlines():
        m = re.search(r'(/\S+) \(0x', line)
        if m and os.path.exists(m.group(1)):
            libs.append(m.group(1))
    return libs


# How every /init here starts: busybox's applets and the kernel's file
# systems.
INIT_PROLOGUE = r'''#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
'''

# Every nested L1 guest prints this while it is alive, so that boot_l1()
# can tell a wedged L1 (TCG's nested SVM has stopped one for good, its
# vCPUs in soft lockup, CI 2026-12-02) from one that is only busy, and
# kill it after L1_SILENCE seconds instead of waiting for the test's
# whole timeout.
L1_HEARTBEAT = r'''(while sleep 20; do echo "NESTED-ALIVE"; done) &
'''
L1_SILENCE = int(os.environ.get('NESTED_L1_SILENCE', '150'))
L1_ATTEMPTS = 3

# How a nested L1's /init starts (kvm_l1_initrd fills @KVM_MODULES@):
# KVM loaded, or NESTED-NO-KVM and power off; check_l1() reads both.
L1_KVM_PROLOGUE = INIT_PROLOGUE + L1_HEARTBEAT + r'''echo "NESTED-BOOTED"
for m in @KVM_MODULES@; do
    insmod /lib/modules/$m || echo "NESTED-ERROR insmod $m"
done
if [ ! -c /dev/kvm ]; then
    echo "NESTED-NO-KVM"
    poweroff -f
fi
'''

INIT = INIT_PROLOGUE + L1_HEARTBEAT + r'''echo "KVFIO-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m || echo "KVFIO-ERROR insmod $m"
done
bdf=
for d in /sys/bus/pci/devices/*; do
    [ "$(cat $d/class)" = 0x010802 ] && bdf=${d##*/}
done
[ -n "$bdf" ] || echo "KVFIO-ERROR no NVMe function (class 0x010802)"
echo "KVFIO-NVME $bdf"
echo vfio-pci > /sys/bus/pci/devices/$bdf/driver_override
echo $bdf > /sys/bus/pci/drivers_probe
echo "KVFIO-DRIVER $(basename $(readlink /sys/bus/pci/devices/$bdf/driver))"
echo "KVFIO-GROUP $(basename $(readlink /sys/bus/pci/devices/$bdf/iommu_group))"
ls /dev/vfio
# kvfio-driver's memlock test runs Conduit as an unprivileged user.
grp=$(basename $(readlink /sys/bus/pci/devices/$bdf/iommu_group))
chmod 666 /dev/vfio/vfio /dev/vfio/$grp
# The per-run archive says what to run: the qtest driver by default.
if [ -r /conduit/run.sh ]; then
    . /conduit/run.sh
elif [ -x /conduit/kvfio-driver ]; then
    KVFIO_HOST=$bdf QTEST_BINARY=/conduit/conduit-system-x86_64 \
        /conduit/kvfio-driver --tap -k
    echo "KVFIO-RESULT $?"
fi
poweroff -f
'''


def base_path(cache, version):
    """Where build_base() keeps its archive in @cache: named after the
    kernel and /init, so that a changed /init is never booted stale."""
    import hashlib
    return os.path.join(cache, 'base-%s-%s.cpio.gz' % (
        version, hashlib.sha256(INIT.encode()).hexdigest()[:12]))


def build_base(path, mods_dir):
    """The cached base archive: busybox, the vfio modules, /init."""
    busybox = '/bin/busybox'
    if not os.access(busybox, os.X_OK):
        raise Unavailable('busybox-static is not installed')
    mods = module_load_order(mods_dir, VFIO_MODULES)
    kvm_mods = [m for m in module_load_order(mods_dir, KVM_MODULES)
                if m not in mods]
    c = Cpio()
    c.add_file('bin/busybox', busybox, 0o755)
    for ko in mods + kvm_mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    c.add_data('lib/modules/kvm-order',
               ' '.join(os.path.basename(k) for k in kvm_mods).encode())
    for d in ('proc', 'sys', 'dev', 'tmp', 'conduit'):
        c.mkdir(d)
    names = ' '.join(os.path.basename(k) for k in mods)
    c.add_data('init', INIT.replace('@MODULES@', names).encode(), 0o755)
    data = gzip.compress(c.finish(), 6)
    # The next archive must start 4-byte aligned; zeros are skipped.
    data += b'\0' * (-len(data) % 4)
    tmp = path + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)


def build_payload(binaries, run_script=None, files=()):
    """The per-run archive: @binaries under /conduit, their libraries,
    data @files under /conduit, and /conduit/run.sh if given."""
    c = Cpio()
    for f in files:
        c.add_file('conduit/' + os.path.basename(f), f, 0o644)
    libs = set()
    for b in binaries:
        c.add_file('conduit/' + os.path.basename(b), b, 0o755)
        libs.update(shared_libraries(b))
    for lib in sorted(libs):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    if run_script:
        c.add_data('conduit/run.sh', run_script.encode(), 0o755)
    return gzip.compress(c.finish(), 1)


# An L1 that loads its own list of modules (@MODULES@), then needs KVM.
L1_MODULES_PROLOGUE = INIT_PROLOGUE + L1_HEARTBEAT + r'''echo "NESTED-BOOTED"
for m in @MODULES@; do
    insmod /lib/modules/$m 2>/dev/null || echo "NESTED-WARN insmod $m"
done
if [ ! -c /dev/kvm ]; then
    echo "NESTED-NO-KVM"
    poweroff -f
fi
'''


def busybox_initrd(mods_dir, modules, init, binaries=(), files=(),
                   placeholder='@MODULES@'):
    """An uncompressed archive: busybox; @modules and what they need under
    /lib/modules; @init as /init, its @placeholder replaced by their file
    names in load order; @binaries, (path in the archive, host path)
    pairs, with their shared libraries; @files, (path in the archive,
    host path or bytes) pairs."""
    mods = module_load_order(mods_dir, modules)
    c = Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in mods:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    libs = set()
    for dest, src in binaries:
        c.add_file(dest, src, 0o755)
        libs.update(shared_libraries(src))
    for lib in sorted(libs):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    for dest, src in files:
        if isinstance(src, bytes):
            c.add_data(dest, src)
        else:
            c.add_file(dest, src, 0o644)
    init = init.replace(placeholder,
                        ' '.join(os.path.basename(k) for k in mods))
    c.add_data('init', init.encode(), 0o755)
    return c.finish()


def kvm_l1_initrd(mods_dir, init, binaries, files=()):
    """A gzip'd archive for an L1 guest that runs Conduit under KVM:
    busybox, the KVM modules (@KVM_MODULES@ in @init becomes their names
    in load order), @binaries under /conduit with their libraries, and
    @files, (name under /conduit, source path or bytes) pairs."""
    return gzip.compress(busybox_initrd(
        mods_dir, KVM_MODULES, init,
        binaries=[('conduit/' + os.path.basename(b), b) for b in binaries],
        files=[('conduit/' + name, src) for name, src in files],
        placeholder='@KVM_MODULES@'), 1)


def l1_argv(qemu, kernel, initrd, memory='1G', smp=1):
    """Debian's QEMU (TCG, -cpu max offers SVM) booting an L1 guest.
    no_timer_check: on a loaded host TCG's timer can look broken to the
    kernel's IO-APIC check, which then panics at boot."""
    return [qemu, '-accel', 'tcg', '-M', 'q35', '-m', memory,
            '-smp', str(smp),
            '-cpu', 'max', '-nographic', '-no-reboot', '-nodefaults',
            '-serial', 'stdio', '-kernel', kernel, '-initrd', initrd,
            '-append', 'console=ttyS0 panic=-1 quiet loglevel=3 '
            'no_timer_check']


def cached_vmlinux(cache, version, bzimage):
    """The kernel's ELF image (PVH entry: no decompression at every boot),
    extracted once into @cache; @bzimage if it cannot be extracted."""
    vmlinux = os.path.join(cache, 'vmlinux-%s' % version)
    if not os.path.exists(vmlinux):
        elf = extract_vmlinux(bzimage)
        if not elf:
            return bzimage
        with open(vmlinux + '.tmp', 'wb') as f:
            f.write(elf)
        os.replace(vmlinux + '.tmp', vmlinux)
    return vmlinux


class NestedL1:
    """What every nested test starts from: Debian's kernel (the bzImage
    for L2, its vmlinux for L1, which boots faster under TCG), its
    modules, and a scratch directory.  Raises Unavailable when busybox or
    the kernel is missing."""

    def __init__(self, prefix):
        if not os.access('/bin/busybox', os.X_OK):
            raise Unavailable('busybox-static is not installed')
        self.version, self.bzimage, self.mods = find_kernel()
        vmlinux = extract_vmlinux(self.bzimage)
        if not vmlinux:
            raise Unavailable('cannot extract vmlinux from ' + self.bzimage)
        self._tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.kernel = self.path('vmlinux')
        with open(self.kernel, 'wb') as f:
            f.write(vmlinux)

    def path(self, name):
        return os.path.join(self._tmp.name, name)

    def boot(self, qemu, initrd, timeout, memory='1G', log_env=None):
        """Boots L1 (l1_argv) with @initrd (bytes) until it powers off;
        returns the guestboot.GuestRun.  If the environment variable
        @log_env names a file, the whole console is written there."""
        import guestboot
        import time
        path = self.path('initrd')
        with open(path, 'wb') as f:
            f.write(initrd)
        start = time.monotonic()
        run = boot_l1(l1_argv(qemu, self.kernel, path, memory), timeout)
        run.seconds = time.monotonic() - start
        if log_env and os.environ.get(log_env):
            with open(os.environ[log_env], 'w') as f:
                f.write(run.output)
        return run

    def cleanup(self):
        self._tmp.cleanup()


def boot_l1(argv, timeout):
    """guestboot.boot() for an L1 guest whose /init prints L1_HEARTBEAT:
    one that stops printing for L1_SILENCE seconds is killed and booted
    again (L1_ATTEMPTS boots in all); the test's log says so, with the end
    of what the wedged guest printed.  Returns the last GuestRun, its
    .l1_hangs the number of guests killed before it."""
    import guestboot
    hangs = 0
    while True:
        run = guestboot.boot(argv, timeout, silence=L1_SILENCE)
        if not run.silent or hangs + 1 >= L1_ATTEMPTS:
            break
        hangs += 1
        report_l1_hang(run, 'booting it again')
    run.l1_hangs = hangs
    return run


def report_l1_hang(run, then):
    """Says in the test's log that the L1 guest of @run was killed as
    wedged, what happens @then, and the last lines it printed."""
    print('NESTED-L1-HANG: the L1 guest printed nothing for %d s, killed; '
          '%s.  Its last lines:' % (L1_SILENCE, then))
    for line in run.output.splitlines()[-15:]:
        print('NESTED-L1-HANG |', line)
    sys.stdout.flush()


# What the L1 kernel prints when one of its vCPUs stopped running its
# tasks (pr_emerg, so it passes loglevel=3): under TCG's nested SVM the
# vCPU running an L2 guest has sat in KVM_RUN for minutes (CI,
# 2026-12-02) while the other kept the heartbeat going.
L1_STALL_RE = re.compile(r'BUG: soft lockup - CPU#\d+ stuck for \d+s!.*')


def l1_stalls(output):
    """The soft lockups the L1 kernel reported in @output."""
    return [m.group(0).strip() for m in L1_STALL_RE.finditer(output)]


def l1_rerun_reason(run, failed):
    """Why the cases of an L1 run that did not pass run again in a new L1:
    'hang' if the guest went silent (killed), 'stall' if cases @failed
    while its kernel reported a soft lockup; None if they stand."""
    if run.silent:
        return 'hang'
    if failed and l1_stalls(run.output):
        return 'stall'
    return None


def report_l1_stall(run, failed):
    """Says that cases @failed ran while the L1 of @run had a vCPU in soft
    lockup, and that they run again in a new L1."""
    print('NESTED-L1-STALL: the L1 kernel reported %s while %s failed; '
          'a new L1 runs them again' % ('; '.join(l1_stalls(run.output)),
                                        ' '.join(failed)))
    sys.stdout.flush()


def prefixed(out, prefix):
    """The lines of @out that start with @prefix, without it."""
    return [line[len(prefix):] for line in out.splitlines()
            if line.startswith(prefix)]


def json_prefixed(out, prefix):
    """The JSON messages (QMP replies, events) on lines with @prefix."""
    msgs = []
    for line in prefixed(out, prefix):
        try:
            msgs.append(json.loads(line))
        except ValueError:
            pass
    return msgs


def check_l1(test, run):
    """Skips @test when L1 had no /dev/kvm (fails under CI=true); fails it
    unless L1 booted and ran its script to the end (NESTED-BOOTED ...
    NESTED-END).  Says how the case ran: nested, in the test's own L1
    guest (these need devices in L1 that the shared one has not)."""
    import kvmtest
    if 'NESTED-NO-KVM' in run.output:
        kvmtest.require_l1_kvm(test)
    test.assertIn('NESTED-BOOTED', run.output, run.describe())
    test.assertIn('NESTED-END', run.output, run.describe())
    print('KVM-WAY: %s.%s nested %.1fs (its own L1 guest)' % (
        os.path.splitext(os.path.basename(sys.argv[0]))[0],
        test._testMethodName, getattr(run, 'seconds', 0.0)))


# What an L1 guest needs to see the test machine's root file system: the
# modules (load order from module_load_order()), QEMU's -virtfs share and
# the shell that mounts it at /host, with a fresh /tmp, /run, /proc, /sys
# and /dev, so that `chroot /host` runs the installed python3 and the
# build tree at their usual paths and writes nothing to the host.
HOSTROOT_MODULES = ['virtio_pci', '9pnet_virtio', '9p']

HOSTROOT_MOUNT = r'''mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose \
    hostroot /host || echo "HOSTROOT-ERROR 9p mount"
mount -t tmpfs tmp /host/tmp
mount -t tmpfs run /host/run
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm
mount -t devpts -o ptmxmode=0666 devpts /host/dev/pts
mount -t tmpfs shm /host/dev/shm
'''


def virtfs_argv(path, tag, readonly=True):
    """QEMU arguments sharing @path of the test machine as 9p @tag."""
    return ['-virtfs', 'local,path=%s,mount_tag=%s,security_model=none,%s'
            'multidevs=remap' % (path, tag,
                                 'readonly=on,' if readonly else '')]


def hostroot_argv():
    """The read-only share of / that HOSTROOT_MOUNT mounts."""
    return virtfs_argv('/', 'hostroot')
