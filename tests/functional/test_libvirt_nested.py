#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""libvirt's <hostdev> passthrough for real, inside a Linux guest.

The outer guest is the one test_kernel_vfio.py boots (Debian's QEMU under
TCG: q35 + intel-iommu + an emulated NVMe, Debian's kernel with its vfio
and kvm modules; -cpu max gives it a nested /dev/kvm).  This test shares
the test machine's root file system into it read-only over 9p and chroots
there, so the installed libvirt, python3 and this build tree are all
visible at their usual paths; /tmp, /run and libvirt's state directories
are tmpfs or bind mounts (libvirt_env.py), so nothing is written to the
host.  Inside, test_libvirt.py runs with LIBVIRT_HOSTDEV_BDF naming the
NVMe function: every case, including the KVM ones and the managed
<hostdev> (libvirt binds the NVMe to vfio-pci, the tests/guest nvme guest
does I/O, x-query-vfio shows BAR0 mapped whole, detach/attach --live,
nodedev-reattach back to the nvme driver), in one boot.

Environment (set by meson): CONDUIT_BINARY, CONDUIT_PPC64_BINARY,
VFIO_USER_NVME, GUEST_DIR.  Exits 77 when QEMU, the kernel package,
busybox-static or libvirt are missing.  The base initramfs and vmlinux
are cached with test_kernel_vfio.py's.
"""
import os
import re
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402
import kvfio_image  # noqa: E402
import kvmtest  # noqa: E402
import libvirt_env  # noqa: E402
import test_libvirt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONDUIT = os.environ.get('CONDUIT_BINARY', '')
CONDUIT_PPC64 = os.environ.get('CONDUIT_PPC64_BINARY', '')
VFIO_USER_NVME = os.environ.get('VFIO_USER_NVME', '')
GUEST_DIR = os.environ.get('GUEST_DIR', '')
# Guards against a hung guest only; nothing asserts on time.  It is the
# budget of all the L1 boots together, below meson's 2400 s, so that a
# case that hangs fails with what L1 printed instead of being killed
# with nothing to show (CI, 2026-12-03: three 1800 s boots could not fit).
TIMEOUT = int(os.environ.get('LIBVIRT_NESTED_TIMEOUT', '2100'))
# A new L1 is booted only with at least this long left.
MIN_BOOT = 300
L1_ACCEL = os.environ.get('LIBVIRT_NESTED_L1_ACCEL', 'tcg')
# Loaded from the per-run archive, dependencies first.
# tun, bridge and vhost_net: libvirt's <interface type='bridge'> (a tap
# on a bridge, /dev/vhost-net for vhost).
# loop and ext4 (crc32c: its checksums): a file system with O_DIRECT for
# cache='none' images.
EXTRA_MODULES = ['virtio_pci', '9pnet_virtio', '9p', 'nvme', 'tun', 'bridge',
                 'vhost_net', 'loop', 'crc32c_generic', 'ext4']
# Every case of test_libvirt.py must pass in there, none skipped.
CASES = ['test_disk_bridge_hostdev', 'test_hostdev_managed',
         'test_lifecycle', 'test_migrate_live', 'test_nova_domain',
         'test_probe_kvm_hostdev', 'test_probe_ppc64',
         'test_probe_tcg_refused', 'test_refusals_named',
         'test_save_restore', 'test_serial_log_fd_passed',
         'test_virt_install_xml', 'test_virt_install_xml_q35',
         'test_vfio_user_commandline_and_hotplug']
# For working on one case: only these (space-separated) run inside.
ONLY = os.environ.get('LIBVIRT_NESTED_ONLY', '').split()

RUN = r'''
for m in $(cat /lib/modules/kvm-order); do
    insmod /lib/modules/$m || echo "LVN-ERROR insmod $m"
done
for m in @EXTRA@; do
    insmod /conduit/$m || echo "LVN-ERROR insmod $m"
done
# The NVMe goes back to its own driver: libvirt must take it itself.
echo > /sys/bus/pci/devices/$bdf/driver_override
echo $bdf > /sys/bus/pci/drivers/vfio-pci/unbind
echo $bdf > /sys/bus/pci/drivers_probe
echo "LVN-HOST-DRIVER $(basename $(readlink /sys/bus/pci/devices/$bdf/driver))"
[ -c /dev/kvm ] || echo "LVN-NO-KVM"
''' + kvfio_image.HOSTROOT_MOUNT + r'''# Disk images on ext4 (tmpfs has no O_DIRECT): cache='none' works there.
imgdir=
dd if=/dev/zero of=/host/tmp/images.ext4 bs=1M count=40 2>/dev/null
if chroot /host /sbin/mkfs.ext4 -q -F /tmp/images.ext4 &&
   mkdir /host/tmp/images &&
   mount -o loop /host/tmp/images.ext4 /host/tmp/images; then
    imgdir=/tmp/images
else
    echo "LVN-WARN no ext4 image directory: cache='none' not tested"
    dmesg | tail -5
fi
echo "LVN-CHROOT"
chroot /host /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LIBVIRT_HOSTDEV_BDF=$bdf LIBVIRT_IMAGE_DIR=$imgdir \
    LIBVIRT_L2_INITRD=@L2INITRD@ \
    CONDUIT_KVM_IN_L1=1 CONDUIT_KVM_RUN_ID=l1 CONDUIT_KVM_STATE_DIR=/tmp/kvm-state \
    CONDUIT_BINARY=@CONDUIT@ \
    CONDUIT_PPC64_BINARY=@PPC64@ VFIO_USER_NVME=@NVME@ GUEST_DIR=@GUEST@ \
    /usr/bin/python3 @TEST@ @ONLY@ 2>&1
echo "LVN-RESULT $?"
'''
CASE_RE = re.compile(r'^(test_\w+) \([^)]*\) \.\.\. ', re.M)
RESULT_RE = re.compile(r'(?:^|\.\.\. )(ok|FAIL|ERROR|skipped.*)$', re.M)


def case_results(out):
    """{case: 'ok' | 'FAIL' | 'ERROR' | 'skipped ...'} from unittest -v."""
    found = {}
    for m in CASE_RE.finditer(out):
        r = RESULT_RE.search(out, m.start())
        if r:
            found[m.group(1)] = r.group(1)
    return found


class LibvirtNestedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.qemu = guestboot.require_qemu_and([(CONDUIT, 'CONDUIT_BINARY')])
        why = libvirt_env.unavailable_reason()
        if why:
            raise unittest.SkipTest(why)
        try:
            ver, bzimage, mods = kvfio_image.find_kernel()
            cache = os.path.join(os.path.dirname(os.path.abspath(CONDUIT)),
                                 'tests', 'functional', 'kvfio-cache')
            os.makedirs(cache, exist_ok=True)
            cls.base = kvfio_image.base_path(cache, ver)
            if not os.path.exists(cls.base):
                kvfio_image.build_base(cls.base, mods)
            base_mods = set(os.path.basename(m) for m in
                            kvfio_image.module_load_order(
                                mods, kvfio_image.VFIO_MODULES +
                                kvfio_image.KVM_MODULES))
            cls.extra = [m for m in kvfio_image.module_load_order(
                mods, EXTRA_MODULES) if os.path.basename(m) not in base_mods]
            # Made here, read inside over 9p (the cache is on the host).
            cls.l2_initrd = test_libvirt.l2_initrd_cached(cache, mods)
        except kvfio_image.Unavailable as e:
            raise unittest.SkipTest(str(e))
        cls.kernel = kvfio_image.cached_vmlinux(cache, ver, bzimage)
        cls.tmp = tempfile.TemporaryDirectory(prefix='libvirt-nested-')
        # The KVM probe test_libvirt runs inside finds its guest ready.
        kvmtest.linux_probe_elf(cls.tmp.name, os.path.dirname(
            os.path.abspath(CONDUIT)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def boot(self, only, timeout):
        """Boots L1 running the test_libvirt cases @only (all if empty)
        until it powers off or @timeout s pass; a GuestRun (.silent:
        killed as wedged)."""
        run_script = RUN
        for key, value in (('@EXTRA@', ' '.join(os.path.basename(m)
                                                 for m in self.extra)),
                           ('@CONDUIT@', os.path.abspath(CONDUIT)),
                           ('@PPC64@', os.path.abspath(CONDUIT_PPC64)),
                           ('@NVME@', os.path.abspath(VFIO_USER_NVME)),
                           ('@GUEST@', os.path.abspath(GUEST_DIR)),
                           ('@L2INITRD@', self.l2_initrd),
                           ('@TEST@', os.path.join(HERE, 'test_libvirt.py')),
                           ('@ONLY@', ' '.join('LibvirtTest.' + c
                                               for c in only))):
            run_script = run_script.replace(key, value)
        initrd = os.path.join(self.tmp.name, 'initrd')
        with open(self.base, 'rb') as f:
            base = f.read()
        with open(initrd, 'wb') as f:
            f.write(base)
            f.write(kvfio_image.build_payload([], run_script, self.extra))
        disk = os.path.join(self.tmp.name, 'nvme.img')
        with open(disk, 'wb') as f:
            f.write(b'CONDUIT-NVMETEST')    # what verify=1 checks
            f.truncate(16 << 20)
        # Multi-threaded TCG (the default): single-threaded, the twelve
        # cases did not finish within the 1800 s guard here (the last was
        # still running).  MTTCG once stalled on a loaded host (soft
        # lockups of both L1 vCPUs); LIBVIRT_NESTED_L1_ACCEL=tcg,thread=single
        # is the slow, safe choice.
        argv = [self.qemu, '-accel', L1_ACCEL, '-M', 'q35', '-m', '2G',
                '-smp', '2', '-cpu', 'max', '-nographic', '-no-reboot',
                '-nodefaults', '-serial', 'stdio',
                '-device', 'intel-iommu,intremap=on',
                '-drive', 'if=none,id=nvm,format=raw,file=' + disk,
                '-device', 'nvme,drive=nvm,serial=lvn0',
                *kvfio_image.hostroot_argv(),
                '-kernel', self.kernel, '-initrd', initrd,
                # no_timer_check: under TCG on a loaded host the kernel's
                # IO-APIC timer probe can miss and panic.
                '-append', 'console=ttyS0 intel_iommu=on panic=-1 '
                           'no_timer_check quiet loglevel=3']
        return guestboot.boot(argv, timeout, silence=kvfio_image.L1_SILENCE)

    def test_libvirt_in_guest(self):
        wanted = ONLY or CASES
        only = list(ONLY)
        results = {}
        # An L1 guest wedged under TCG's nested SVM (CI, 2026-12-02: the
        # vCPU running an L2 in soft lockup for 226 s, then nothing for
        # 20 minutes) is killed once silent for NESTED_L1_SILENCE s; the
        # next L1 runs only the cases not yet finished.
        # A case that failed while the L1 kernel reported a soft lockup
        # (its vCPU, the one running L2, stopped; the heartbeat went on)
        # runs again the same way: the lockup is L1's, not the case's.
        deadline = time.monotonic() + TIMEOUT
        for attempt in range(kvfio_image.L1_ATTEMPTS):
            run = self.boot(only, deadline - time.monotonic())
            got = case_results(run.output)
            results.update({c: r for c, r in got.items()
                            if r == 'ok' or results.get(c) != 'ok'})
            failed = [c for c in got if got[c] != 'ok']
            why = kvfio_image.l1_rerun_reason(run, failed)
            if not why or attempt + 1 == kvfio_image.L1_ATTEMPTS or \
                    deadline - time.monotonic() < MIN_BOOT:
                break
            only = [c for c in wanted if results.get(c) != 'ok']
            if not only:
                break
            if why == 'hang':
                kvfio_image.report_l1_hang(
                    run, 'a new one runs what was left: ' + ' '.join(only))
            else:
                kvfio_image.report_l1_stall(run, failed)
        out = run.output
        self.assertIn('KVFIO-DRIVER vfio-pci', out, run.describe())
        self.assertNotIn('LVN-ERROR', out, run.describe())
        self.assertNotIn('HOSTROOT-ERROR', out, run.describe())
        self.assertNotIn('KVFIO-ERROR', out, run.describe())
        self.assertIn('LVN-HOST-DRIVER nvme', out, run.describe())
        if 'LVN-NO-KVM' in out:
            kvmtest.require_l1_kvm(self)
        for case in wanted:
            self.assertEqual(results.get(case), 'ok',
                             '%s: %s\n%s' % (case, results.get(case),
                                             run.describe()))
        self.assertIn('LVN-RESULT 0', out, run.describe())
        for case in wanted:
            print('inside the guest: %s ... %s' % (case, results[case]))
            print('KVM-WAY: test_libvirt.%s nested' % case)
        for line in out.splitlines():
            if line.startswith(('hostdev ', 'libvirt ')):
                print(line)


if __name__ == '__main__':
    sys.exit(guestboot.main())
