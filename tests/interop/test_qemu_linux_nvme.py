#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""QEMU's vfio-user client + Linux's nvme driver + vfio-user-nvme.

The nested set-up of tests/functional/test_linux_nvme.py (Debian's QEMU
runs L1 under TCG with SVM; L1 loads kvm-amd), with the peer QEMU
(CONDUIT_PEER_QEMU, >= 10.1) as the VMM inside L1 instead of Conduit:
-accel kvm, guest RAM from memory-backend-memfd,share=on and
-device '{"driver":"vfio-user-pci","socket":{...}}' with the server's
default options, then each layout option.  L2 is the same kernel and the
same init as in test_linux_nvme: the driver binds, 1 MiB of random data
is written with O_DIRECT + fsync and read back, L1 checks the bytes in
the backing file.  Under KVM QEMU registers an INTx unmask (resample)
eventfd and an error-IRQ eventfd, which the server must accept.

The server runs with --stats: BAR0's REGION_WRITE count shows whether
QEMU kept BAR0 mapped (the mapped layouts must not forward doorbells).

Environment: CONDUIT_PEER_QEMU (skips without it), VFIO_USER_NVME
(meson), QEMU_PEER_CASES=default,... to run fewer layouts.
"""
import gzip
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'functional'))
import interop  # noqa: E402

PEER = interop.peer_qemu()
SERVER = interop.need_env('VFIO_USER_NVME')
os.environ.setdefault('CONDUIT_BINARY', PEER)
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402
import test_linux_nvme as tln  # noqa: E402

TIMEOUT = int(os.environ.get('LINUX_NVME_TIMEOUT', '3000'))
BIOS_FILES = ('bios-256k.bin', 'linuxboot_dma.bin', 'kvmvapic.bin')

# name: (server options, BAR0 doorbells forwarded as REGION_WRITE?)
CASES = {
    'default': ('', False),
    'msix-bar0': ('--msix-bar 0', False),
    'msix-doorbell-page': ('--msix-bar 0 --msix-table-offset 0x1800 '
                           '--msix-pba-offset 0x1c00', False),
    'withheld': ('--msix-bar 0 --msix-table-offset 0x1800 '
                 '--msix-pba-offset 0x1c00 --no-msix-mappable', True),
    'no-mmap': ('--no-mmap', True),
}

L1_INIT = kvfio_image.L1_KVM_PROLOGUE + r'''/peer/qemu-system-x86_64 --version | sed 's/^/NESTED-PEER-VERSION /'
run_case() {
    name=$1 srvargs=$2
    rm -f /tmp/disk.img /tmp/nvme.sock /tmp/qmp.in /tmp/l2.log
    truncate -s @DISK_MIB@M /tmp/disk.img
    /conduit/vfio-user-nvme --socket /tmp/nvme.sock --stats \
        --backend file:/tmp/disk.img $srvargs 2>/tmp/server.err &
    srv=$!
    for i in $(seq 100); do [ -S /tmp/nvme.sock ] && break; usleep 100000; done
    mkfifo /tmp/qmp.in
    /peer/qemu-system-x86_64 -accel kvm -M pc -cpu host -m 256 \
        -object memory-backend-memfd,id=ram,size=256M,share=on \
        -machine memory-backend=ram -nodefaults -net none -L /peer/bios \
        -display none -serial file:/tmp/l2.log -qmp stdio \
        -kernel /conduit/bzImage -initrd /conduit/l2.cpio \
        -append "console=ttyS0 acpi=off panic=-1 loglevel=4 noxsave nosoftlockup" \
        -device '{"driver":"vfio-user-pci","id":"nvme0","socket":{"type":"unix","path":"/tmp/nvme.sock"}}' \
        </tmp/qmp.in >/tmp/qmp.out 2>/tmp/conduit.err &
    vm=$!
    exec 3>/tmp/qmp.in
    echo '{"execute":"qmp_capabilities"}' >&3
    for i in $(seq 1200); do
        grep -q "L2-DONE" /tmp/l2.log 2>/dev/null && break
        kill -0 $vm 2>/dev/null || break
        sleep 1
    done
    echo '{"execute":"quit"}' >&3
    exec 3>&-
    wait $vm
    echo "NESTED-CONDUIT-EXIT $name $?"
    kill $srv
    wait $srv
    echo "NESTED-SERVER-EXIT $name $?"
    sed "s/^/NESTED-L2 $name /" /tmp/l2.log
    sed "s/^/NESTED-STDERR $name /" /tmp/conduit.err /tmp/server.err
    echo "NESTED-DISK-MD5 $name $(dd if=/tmp/disk.img bs=1k \
        skip=@DATA_OFFSET_KIB@ count=1024 2>/dev/null | md5sum | cut -d' ' -f1)"
}
@CASES@
echo "NESTED-END"
poweroff -f
'''


def build_l1_initrd(mods_dir, bzimage, l2_initrd, cases, bios_dir):
    kvm = kvfio_image.module_load_order(mods_dir, kvfio_image.KVM_MODULES)
    c = kvfio_image.Cpio()
    c.add_file('bin/busybox', '/bin/busybox', 0o755)
    for ko in kvm:
        c.add_file('lib/modules/' + os.path.basename(ko), ko, 0o644)
    libs = set(kvfio_image.shared_libraries(PEER))
    libs.update(kvfio_image.shared_libraries(SERVER))
    c.add_file('peer/qemu-system-x86_64', PEER, 0o755)
    c.add_file('conduit/vfio-user-nvme', SERVER, 0o755)
    for lib in sorted(libs):
        c.add_file(lib, os.path.realpath(lib), 0o755)
    for f in BIOS_FILES:
        c.add_file('peer/bios/' + f, os.path.join(bios_dir, f), 0o644)
    c.add_file('conduit/bzImage', bzimage, 0o644)
    c.add_data('conduit/l2.cpio', l2_initrd)
    calls = '\n'.join("run_case %s '%s'" % (n, CASES[n][0]) for n in cases)
    init = L1_INIT.replace('@KVM_MODULES@',
                           ' '.join(os.path.basename(k) for k in kvm))
    init = init.replace('@DISK_MIB@', str(tln.DISK_MIB))
    init = init.replace('@DATA_OFFSET_KIB@', str(tln.DATA_OFFSET_KIB))
    init = init.replace('@CASES@', calls)
    c.add_data('init', init.encode(), 0o755)
    return gzip.compress(c.finish(), 1)


def find_bios_dir():
    """The peer's firmware: its build tree's pc-bios, or QEMU_PEER_BIOS."""
    cands = [os.environ.get('QEMU_PEER_BIOS', ''),
             os.path.join(os.path.dirname(PEER), 'pc-bios'),
             os.path.join(os.path.dirname(PEER), 'qemu-bundle', 'usr',
                          'local', 'share', 'qemu')]
    for d in cands:
        if d and all(os.path.exists(os.path.join(d, f)) for f in BIOS_FILES):
            return d
    raise unittest.SkipTest('no firmware (%s) next to %s; set QEMU_PEER_BIOS'
                            % (', '.join(BIOS_FILES), PEER))


class QemuLinuxNvme(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(SERVER, 'VFIO_USER_NVME')])
        bios = find_bios_dir()
        try:
            cls.l1 = kvfio_image.NestedL1('qemu-peer-nvme-')
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        cls.cases = [c for c in os.environ.get('QEMU_PEER_CASES',
                                               ','.join(CASES)).split(',')
                     if c in CASES]
        initrd = build_l1_initrd(cls.l1.mods, cls.l1.bzimage,
                                 tln.build_l2_initrd(cls.l1.mods),
                                 cls.cases, bios)
        cls.l1_run = cls.l1.boot(cls.qemu, initrd, TIMEOUT,
                                 log_env='LINUX_NVME_LOG')
        cls.out = cls.l1_run.output

    @classmethod
    def tearDownClass(cls):
        cls.l1.cleanup()

    def setUp(self):
        kvfio_image.check_l1(self, self.l1_run)

    def check_case(self, name):
        if name not in self.cases:
            self.skipTest('not in QEMU_PEER_CASES')
        r = tln.CaseResult(self.out, name)
        stderr = [line[len('NESTED-STDERR %s ' % name):]
                  for line in self.out.splitlines()
                  if line.startswith('NESTED-STDERR %s ' % name)]
        ctx = '%s\n%s\n%s' % (name, '\n'.join(r.l2), '\n'.join(stderr))
        self.assertIn('L2-DONE', r.l2, ctx)
        self.assertFalse([x for x in r.l2 if x.startswith('L2-ERROR')], ctx)
        self.assertEqual(r.conduit_exit, 0, ctx)
        self.assertEqual(r.value('STATE'), 'live', ctx)
        self.assertEqual(int(r.value('SECTORS')), tln.DISK_MIB * 2048, ctx)
        written = r.value('MD5-WRITTEN')
        self.assertRegex(written or '', r'^[0-9a-f]{32}$', ctx)
        self.assertEqual(r.value('MD5-READ'), written, ctx)
        self.assertEqual(r.disk_md5, written, ctx)
        irqs = r.irqs()
        self.assertGreater(irqs.get('nvme0q1', 0), 0, ctx)
        # QEMU attached without complaint.
        for bad in ('failed to get region', 'Could not enable error',
                    'Failed to setup INTx'):
            self.assertFalse([x for x in stderr if bad in x], ctx)
        stats = {}
        for x in stderr:
            m = re.match(r'vfio-user-nvme: stats region (\d+) REGION_READ '
                         r'(\d+) REGION_WRITE (\d+)', x)
            if m:
                stats[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        self.assertIn(0, stats, ctx)
        print('%s: BAR0 REGION_READ %d REGION_WRITE %d, irqs %s'
              % (name, stats[0][0], stats[0][1], irqs))
        return stats[0][1]

    def run_case(self, name):
        writes = self.check_case(name)
        # Linux's driver rang hundreds of doorbells for its queues and the
        # 16 x 128 KiB of I/O: forwarded, every one is a REGION_WRITE.
        if CASES[name][1]:
            self.assertGreater(writes, 16)
        else:
            self.assertEqual(writes, 0, 'QEMU did not keep BAR0 mapped')


for _name in CASES:
    setattr(QemuLinuxNvme, 'test_' + _name.replace('-', '_'),
            lambda self, n=_name: self.run_case(n))


if __name__ == '__main__':
    sys.exit(guestboot.main())
