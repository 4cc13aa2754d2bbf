#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A Debian disk image booted through GRUB by SeaBIOS and by OVMF, on q35
and on pc, with a vfio-user NVMe controller behind a PCIe root port.

The image (tests/functional/debian_image.py: debootstrap'ed bookworm,
GPT with a BIOS boot partition and an ESP, GRUB for both firmwares) is
built once per cache, converted to qcow2 (the backing file) and booted
through a qcow2 overlay made for the run: the cloud-image layout.  Every
case boots the overlay; the guest's test init logs which firmware started it, appends a
line to /var/log/conduit-boots on its root disk, writes a marker to the
first sector of the NVMe namespace and powers off through ACPI.  The case
then checks: Conduit exited 0 (the guest's S5), the serial console shows
GRUB and the kernel, firmware=bios|efi as expected, the NVMe marker is in
the server's backing file; at the end `qemu-img check` finds the overlay
clean, the overlay holds clusters of its own, the backing file is
untouched and the root file system (read through the chain) holds one
line per boot, in order.

  seabios_q35   no firmware option: Conduit's default (bios-256k.bin)
  ovmf_q35      -blockdev + -machine pflash0=,pflash1= (libvirt's way),
                a per-VM copy of OVMF_VARS_4M.fd; bootindex on the disk
  seabios_pc    -bios bios-256k.bin, bootindex on the disk
  ovmf_pc       -drive if=pflash (OVMF finds its PM timer at 01.3)

Boot times (Conduit start to power-off) are printed, never asserted.
Needs KVM that can run firmware: directly, or in the shared nested L1
guest (kvmtest.py).  Environment (set by meson): CONDUIT_BINARY,
VFIO_USER_NVME, CONDUIT_IMAGE_CACHE.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import debian_image  # noqa: E402
import kvmtest  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
SERVER = os.environ.get('VFIO_USER_NVME', '')
OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd'
OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd'
SEABIOS = '/usr/share/seabios/bios-256k.bin'
NVME_MIB = 16
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('FIRMWARE_BOOT_TIMEOUT', '240'))


def pflash_blockdev(code, vars_):
    """What libvirt writes for <loader type='pflash'> + <nvram>."""
    return [
        '-blockdev', '{"driver":"file","filename":"%s","node-name":'
        '"libvirt-pflash0-storage","auto-read-only":true,"discard":'
        '"unmap"}' % code,
        '-blockdev', '{"node-name":"libvirt-pflash0-format","read-only":'
        'true,"driver":"raw","file":"libvirt-pflash0-storage"}',
        '-blockdev', '{"driver":"file","filename":"%s","node-name":'
        '"libvirt-pflash1-storage","auto-read-only":true,"discard":'
        '"unmap"}' % vars_,
        '-blockdev', '{"node-name":"libvirt-pflash1-format","read-only":'
        'false,"driver":"raw","file":"libvirt-pflash1-storage"}',
    ]


class FirmwareBootTest(unittest.TestCase):
    boots = []      # (case, firmware) in boot order

    @classmethod
    def setUpClass(cls):
        for path, what in ((CONDUIT, 'CONDUIT_BINARY'),
                           (SERVER, 'VFIO_USER_NVME')):
            if not path or not os.access(path, os.X_OK):
                raise unittest.SkipTest('%s is not built' % what)
        for f in (OVMF_CODE, OVMF_VARS, SEABIOS):
            if not os.path.exists(f):
                raise unittest.SkipTest('%s is missing (scripts/install-deps '
                                        'installs seabios and ovmf)' % f)
        if not shutil.which('qemu-img'):
            raise unittest.SkipTest('qemu-img is missing (scripts/install-'
                                    'deps installs qemu-utils)')
        try:
            cls.backing = debian_image.qcow2_image()
        except debian_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        cls.backing_mtime = os.stat(cls.backing).st_mtime_ns
        cls.tmp = tempfile.TemporaryDirectory(prefix='conduit-fw-')
        # The cloud-image layout: a qcow2 overlay on the qcow2 backing
        # file; every write of every boot lands in the overlay.
        cls.disk = os.path.join(cls.tmp.name, 'overlay.qcow2')
        subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F',
                        'qcow2', '-b', cls.backing, cls.disk], check=True)
        print('FIRMWARE-IMAGE overlay %s on %s (%d MiB)' %
              (cls.disk, cls.backing, os.path.getsize(cls.backing) >> 20))
        sys.stdout.flush()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def boot(self, case, machine, firmware_args):
        sock = self.path(case + '.sock')
        backing = self.path(case + '-nvme.img')
        log = self.path(case + '-serial.log')
        dbg = self.path(case + '-firmware.log')
        with open(backing, 'wb') as f:
            f.truncate(NVME_MIB << 20)
        server = subprocess.Popen([SERVER, '--socket', sock, '--backend',
                                   'file:' + backing],
                                  stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        try:
            for _ in range(100):
                if os.path.exists(sock):
                    break
                time.sleep(0.1)
            argv = ([CONDUIT, '-accel', 'kvm', '-M', machine, '-m', '512',
                     '-smp', '2', '-nodefaults', '-display', 'none',
                     '-serial', 'file:' + log, '-no-reboot',
                     # The firmware's own log (SeaBIOS and OVMF use 0x402).
                     '-chardev', 'file,id=fwlog,path=' + dbg,
                     '-device', 'isa-debugcon,iobase=0x402,chardev=fwlog'] +
                    firmware_args +
                    ['-drive', 'file=%s,if=none,id=root,format=qcow2' %
                     self.disk,
                     '-device', 'virtio-blk-pci,drive=root,bootindex=1',
                     '-device', 'pcie-root-port,id=rp1,chassis=1,slot=1',
                     '-device', 'vfio-user-pci,socket=%s,bus=rp1,id=nvme0' %
                     sock])
            print('FIRMWARE-CASE %s: %s' % (case, ' '.join(argv)))
            sys.stdout.flush()
            start = time.monotonic()
            rc, out = self.run_watched(argv, log, case, dbg)
            seconds = time.monotonic() - start
        finally:
            server.terminate()
            server.wait()
        with open(log, errors='replace') as f:
            console = f.read()
        with open(dbg, errors='replace') as f:
            self.fwlog = f.read()
        with open(backing, 'rb') as f:
            sector = f.read(512)
        print('FIRMWARE-BOOT %s %s: %.1f s from start to power-off' %
              (case, machine, seconds))
        sys.stdout.flush()
        return rc, out, console, sector, seconds

    def run_watched(self, argv, log, case, dbg=None):
        """Runs Conduit; every 30 s prints the console's last line (a
        sign of life for the L1 watchdog, and where a hang stopped)."""
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(argv, stdout=out,
                                    stderr=subprocess.STDOUT)
            deadline = time.monotonic() + TIMEOUT
            while proc.poll() is None and time.monotonic() < deadline:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    try:
                        with open(log, errors='replace') as f:
                            tail = f.read()[-300:].strip().splitlines()
                    except OSError:
                        tail = []
                    fw = []
                    if dbg:
                        try:
                            with open(dbg, errors='replace') as f:
                                fw = f.read()[-400:].strip().splitlines()
                        except OSError:
                            pass
                    print('FIRMWARE-WAIT %s: console: %s | firmware: %s' %
                          (case, tail[-1][-120:] if tail else '(no output)',
                           ' / '.join(fw[-3:])[-240:] if fw else '-'))
                    sys.stdout.flush()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                rc = None
            else:
                rc = proc.returncode
            out.seek(0)
            return rc, out.read().decode(errors='replace')

    def check(self, case, machine, firmware_args, fw):
        rc, out, console, sector, _ = self.boot(case, machine, firmware_args)
        what = 'conduit: %s\nconsole:\n%s\nfirmware log:\n%s' % (
            out[-3000:], console[-6000:], self.fwlog[-4000:])
        if rc != 0 or 'CONDUIT-BOOTED' not in console:
            # Now, not at the end: a later case may take the L1 guest down.
            for line in what.splitlines()[-150:]:
                print('FIRMWARE-FAIL %s: %s' % (case, line))
            sys.stdout.flush()
        self.assertEqual(rc, 0, what)
        self.assertIn('CONDUIT-GRUB loading linux', console, what)
        self.assertIn('CONDUIT-BOOTED firmware=%s' % fw, console, what)
        self.assertIn('CONDUIT-NVME-WRITTEN %s' % fw, console, what)
        self.assertIn('CONDUIT-CPUS 2', console, what)
        for table in ('FACP', 'APIC', 'MCFG', 'DSDT'):
            self.assertIn(table, console.split('CONDUIT-ACPI')[1]
                          .splitlines()[0], what)
        self.assertTrue(sector.startswith(b'CONDUIT-NVME %s ' %
                                          fw.encode()), sector[:64])
        FirmwareBootTest.boots.append((case, fw))

    def test_1_seabios_q35(self):
        # Without firmware options Conduit boots SeaBIOS, as QEMU does.
        self.check('seabios_q35', 'q35', [], 'bios')

    def test_3_ovmf_q35(self):
        vars_ = self.path('ovmf_q35-VARS.fd')
        shutil.copy(OVMF_VARS, vars_)
        self.check('ovmf_q35', 'pc-q35-8.2',
                   pflash_blockdev(OVMF_CODE, vars_) +
                   ['-machine', 'pflash0=libvirt-pflash0-format,'
                    'pflash1=libvirt-pflash1-format'], 'efi')
        # OVMF wrote its variables (boot options) to the per-VM copy.
        with open(OVMF_VARS, 'rb') as a, open(vars_, 'rb') as b:
            self.assertNotEqual(a.read(), b.read())

    def test_2_seabios_pc(self):
        self.check('seabios_pc', 'pc', ['-bios', SEABIOS], 'bios')

    def test_4_ovmf_pc(self):
        vars_ = self.path('ovmf_pc-VARS.fd')
        shutil.copy(OVMF_VARS, vars_)
        self.check('ovmf_pc', 'pc-i440fx-8.2',
                   ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,'
                    'file=' + OVMF_CODE,
                    '-drive', 'if=pflash,format=raw,unit=1,file=' + vars_],
                   'efi')

    def test_5_root_disk_holds_every_boot(self):
        if not FirmwareBootTest.boots:
            self.skipTest('no case booted')
        check = subprocess.run(['qemu-img', 'check', self.disk],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
        self.assertEqual(check.returncode, 0, check.stdout.decode())
        # The guests' writes are in the overlay, the backing file is as
        # it was built.
        self.assertEqual(os.stat(self.backing).st_mtime_ns,
                         self.backing_mtime)
        m = subprocess.run(['qemu-img', 'map', '--output=json', self.disk],
                           stdout=subprocess.PIPE, check=True)
        own = [e for e in json.loads(m.stdout)
               if e.get('depth') == 0 and e.get('data')]
        self.assertTrue(own, 'no cluster allocated in the overlay')
        full = self.path('disk.raw')
        subprocess.run(['qemu-img', 'convert', '-O', 'raw', self.disk, full],
                       check=True)
        start = debian_image.ROOT_START * debian_image.SECTOR
        part = self.path('root.ext4')
        # The root partition on its own, for debugfs (no mounts needed).
        subprocess.run(['dd', 'if=' + full, 'of=' + part, 'bs=1M',
                        'iflag=skip_bytes', 'skip=%d' % start,
                        'conv=sparse', 'status=none'], check=True)
        r = subprocess.run(['debugfs', '-R', 'cat /var/log/conduit-boots',
                            part], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, check=True)
        lines = r.stdout.decode().split()
        fws = [w for w in lines if w in ('bios', 'efi')]
        self.assertEqual(fws, [fw for _, fw in FirmwareBootTest.boots],
                         r.stdout.decode())
        fsck = subprocess.run(['e2fsck', '-fn', part],
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        self.assertEqual(fsck.returncode, 0, fsck.stdout.decode()[-2000:])

if __name__ == '__main__':
    # The image is built on the test machine (debootstrap needs the
    # network); the shared L1 guest sees it through the read-only root.
    if not kvmtest.in_l1():
        try:
            debian_image.qcow2_image()
        except debian_image.Unavailable as e:
            print('debian image: %s' % e)
    sys.exit(kvmtest.main('distro'))
