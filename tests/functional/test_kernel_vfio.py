#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The kernel VFIO backend for real, inside a Linux guest of Debian's QEMU.

Our machines have no VFIO devices, but Debian's QEMU emulates what is
needed: Debian's kernel boots under TCG on q35 with intel-iommu (interrupt
remapping on) and an emulated NVMe, binds the NVMe function to vfio-pci
(driver_override + drivers_probe) and runs kvfio-driver, which starts
Conduit under -accel qtest with -device vfio-pci,host=... and checks
identify, I/O into guest RAM through the IOMMU, MSI-X completions, the
whole-BAR mapping that the kernel's MSIX_MAPPABLE allows (x-query-vfio),
libvirt's command-line forms, hot-plug, error paths, and that an
unprivileged Conduit under a 1 MiB locked-memory limit names the limit.  Its TAP output
comes back on the serial console.

A second case loads kvm-amd inside the guest (TCG's -cpu max has SVM) and
runs the tests/guest nvme image under Conduit with -accel kvm on the same
passed-through controller.

Environment (set by meson): CONDUIT_BINARY, KVFIO_DRIVER, GUEST_DIR.  Exits 77
(skipped) when qemu-system-x86_64, the kernel package or busybox-static are
missing.  The base initramfs and the vmlinux are cached next to
CONDUIT_BINARY under tests/functional/kvfio-cache.
"""
import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402
import kvmtest  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
DRIVER = os.environ.get('KVFIO_DRIVER', '')
# Guards against a hung guest only; nothing asserts on time.
TIMEOUT = int(os.environ.get('KVFIO_TIMEOUT', '900'))
DRIVER_TESTS = 7
NVME_SIGNATURE = b'CONDUIT-NVMETEST'
NVME_GUEST = os.path.join(os.environ.get('GUEST_DIR', ''), 'nvme.elf')
# The KVM case: Conduit under KVM inside the TCG guest (nested SVM) runs
# the tests/guest nvme image on the passed-through controller.
KVM_RUN = r'''
for m in $(cat /lib/modules/kvm-order); do
    insmod /lib/modules/$m || echo "KVFIO-ERROR insmod $m"
done
if [ -c /dev/kvm ]; then
    /conduit/conduit-system-x86_64 -accel kvm -M pc -m 128 -nodefaults \
        -display none -serial stdio -no-reboot \
        -device isa-debug-exit,iobase=0xf4,iosize=4 \
        -kernel /conduit/nvme.elf -append "qd=4 ios=200 mode=irq verify=1" \
        -device vfio-pci,host=$bdf,id=hostdev0 </dev/null
    echo "KVFIO-KVM-EXIT $?"
else
    echo "KVFIO-NO-KVM"
fi
'''
TAP_RE = re.compile(r'^(not ok|ok) (\d+) (\S+)', re.M)


def cache_dir():
    root = os.path.dirname(os.path.abspath(CONDUIT)) if CONDUIT else \
        os.getcwd()
    d = os.path.join(root, 'tests', 'functional', 'kvfio-cache')
    os.makedirs(d, exist_ok=True)
    return d


class KernelVfioTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY'),
                                               (DRIVER, 'KVFIO_DRIVER')])
        try:
            ver, bzimage, mods = kvfio_image.find_kernel()
            cache = cache_dir()
            cls.base = kvfio_image.base_path(cache, ver)
            if not os.path.exists(cls.base):
                kvfio_image.build_base(cls.base, mods)
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        cls.kernel = kvfio_image.cached_vmlinux(cache, ver, bzimage)
        cls.tmp = tempfile.TemporaryDirectory(prefix='kvfio-')

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def boot(self, run_script=None, files=()):
        initrd = os.path.join(self.tmp.name, 'initrd')
        with open(self.base, 'rb') as f:
            base = f.read()
        with open(initrd, 'wb') as f:
            f.write(base)
            f.write(kvfio_image.build_payload([CONDUIT, DRIVER], run_script,
                                              files))
        disk = os.path.join(self.tmp.name, 'nvme.img')
        with open(disk, 'wb') as f:
            # What the nvme guest's verify=1 expects at LBA 0.
            f.write(NVME_SIGNATURE)
            f.truncate(16 << 20)
        argv = [self.qemu, '-accel', 'tcg', '-M', 'q35', '-m', '1G',
                '-smp', '1', '-cpu', 'max', '-nographic', '-no-reboot',
                '-nodefaults', '-serial', 'stdio',
                '-device', 'intel-iommu,intremap=on',
                '-drive', 'if=none,id=nvm,format=raw,file=' + disk,
                '-device', 'nvme,drive=nvm,serial=kvfio0',
                '-kernel', self.kernel, '-initrd', initrd,
                # no_timer_check: see kvfio_image.l1_argv().
                '-append', 'console=ttyS0 intel_iommu=on panic=-1 '
                           'quiet loglevel=3 no_timer_check']
        return kvfio_image.boot_l1(argv, TIMEOUT)

    def test_nvme_through_kernel_vfio(self):
        run = self.boot()
        out = run.output
        self.assertIn('KVFIO-BOOTED', out, run.describe())
        self.assertNotIn('KVFIO-ERROR', out, run.describe())
        self.assertIn('KVFIO-DRIVER vfio-pci', out, run.describe())
        self.assertRegex(out, r'KVFIO-GROUP \d+', run.describe())
        results = TAP_RE.findall(out)
        failed = [r for r in results if r[0] != 'ok']
        self.assertEqual(failed, [], run.describe())
        self.assertEqual(len(results), DRIVER_TESTS, run.describe())
        self.assertIn('KVFIO-RESULT 0', out, run.describe())
        for _, _, name in results:
            print('ok', name)


    def test_nvme_guest_under_kvm(self):
        if not os.path.exists(NVME_GUEST):
            self.skipTest('the nvme guest image is not built (%s)' %
                          NVME_GUEST)
        run = self.boot(KVM_RUN, [NVME_GUEST])
        out = run.output
        self.assertIn('KVFIO-DRIVER vfio-pci', out, run.describe())
        self.assertNotIn('KVFIO-ERROR', out, run.describe())
        if 'KVFIO-NO-KVM' in out:
            kvmtest.require_l1_kvm(self)
        print('KVM-WAY: test_kernel_vfio.test_nvme_guest_under_kvm nested')
        self.assertIn('KVFIO-KVM-EXIT %d' % guestboot.EXIT_PASS, out,
                      run.describe())
        summary = guestboot.SUMMARY_RE.findall(out)
        self.assertTrue(summary, run.describe())
        self.assertEqual(summary[-1][1], '0', run.describe())
        print(guestboot.GuestRun(run.argv, 0, out).result())


if __name__ == '__main__':
    sys.exit(guestboot.main())
