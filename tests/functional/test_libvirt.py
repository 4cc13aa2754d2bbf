#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""libvirt drives Conduit: the capability probe, a domain's life cycle,
vfio-user through <qemu:commandline> and hot-plug, and <hostdev>.

Debian's libvirt 9.0 runs in a private libvirtd (libvirt_env.py) and is
pointed at conduit-system-x86_64 / -ppc64 as <emulator>.  Cases:

- probe: `virsh domcapabilities --virttype qemu` is refused (no TCG); the
  ppc64 binary (qtest only) probes and libvirt records neither kvm nor
  tcg for it; with /dev/kvm, --virttype kvm succeeds and shows <hostdev>
  with subsystem pci (and the vfio back-end where the host has VFIO).
- life cycle (needs /dev/kvm): define, start --paused, `virsh console`
  on the pty sees the guest's output after resume, vcpupin really moves
  the vCPU thread (query-cpus-fast thread ids), domstats, shutdown (works
  or names what is missing), destroy, undefine; and a serial log file
  that libvirt passes with -add-fd (/dev/fdset/N).
- vfio-user (needs /dev/kvm, vfio-user-nvme): the <qemu:commandline>
  form, and device_del/device_add through qemu-monitor-command.
- hostdev (needs LIBVIRT_HOSTDEV_BDF: a PCI function libvirt may take,
  set by test_libvirt_nested.py inside its TCG guest): managed='yes'
  binds it to vfio-pci, the nvme guest does I/O, x-query-vfio shows BAR0
  mapped whole, detach-device/attach-device --live, nodedev-reattach.

Environment: CONDUIT_BINARY, CONDUIT_PPC64_BINARY, VFIO_USER_NVME,
GUEST_DIR, LIBVIRT_HOSTDEV_BDF.  Exits 77 when libvirt is not installed.
"""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import guestboot  # noqa: E402
import libvirt_env  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
CONDUIT_PPC64 = os.environ.get('CONDUIT_PPC64_BINARY', '')
VFIO_USER_NVME = os.environ.get('VFIO_USER_NVME', '')
HOSTDEV_BDF = os.environ.get('LIBVIRT_HOSTDEV_BDF', '')
# Guards against a hang only; nothing asserts on time.
WAIT = int(os.environ.get('LIBVIRT_TEST_WAIT', '300'))


def domain_xml(name, kernel, append='', vcpus=1, serial='pty',
               serial_path=None, devices='', qemu_args=()):
    if serial == 'file':
        chardev = ("<serial type='file'><source path='%s'/>"
                   "<target port='0'/></serial>" % serial_path)
    else:
        chardev = ("<serial type='pty'><target port='0'/></serial>"
                   "<console type='pty'><target type='serial' port='0'/>"
                   "</console>")
    cmdline = ''
    if qemu_args:
        cmdline = '<qemu:commandline>%s</qemu:commandline>' % ''.join(
            "<qemu:arg value='%s'/>" % a for a in qemu_args)
    return '''<domain type='kvm'
        xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>%(name)s</name>
  <memory unit='MiB'>128</memory>
  <vcpu placement='static'>%(vcpus)d</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>%(kernel)s</kernel>
    <cmdline>%(append)s</cmdline>
  </os>
  <features><acpi/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>%(emulator)s</emulator>
    <controller type='usb' model='none'/>
    %(chardev)s
    <memballoon model='none'/>
    %(devices)s
  </devices>
  %(cmdline)s
</domain>
''' % dict(name=name, kernel=kernel, append=append, vcpus=vcpus,
           emulator=CONDUIT, chardev=chardev, devices=devices,
           cmdline=cmdline)


def hostdev_xml(bdf):
    dom, bus, rest = bdf.split(':')
    slot, fn = rest.split('.')
    return ("<hostdev mode='subsystem' type='pci' managed='yes'>"
            "<source><address domain='0x%s' bus='0x%s' slot='0x%s' "
            "function='0x%s'/></source><alias name='hostdev0'/></hostdev>"
            % (dom, bus, slot, fn))


def vfio_available():
    groups = '/sys/kernel/iommu_groups'
    return os.path.exists('/dev/vfio/vfio') and os.path.isdir(groups) and \
        bool(os.listdir(groups))


class LibvirtTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = libvirt_env.unavailable_reason()
        if why:
            raise unittest.SkipTest(why)
        if not CONDUIT or not os.access(CONDUIT, os.X_OK):
            raise unittest.SkipTest('CONDUIT_BINARY not built')
        cls.tmp = tempfile.TemporaryDirectory(prefix='conduit-libvirt-')
        cls.lv = libvirt_env.Libvirtd(os.path.join(cls.tmp.name, 'lv'),
                                      timeout=WAIT)
        os.makedirs(cls.lv.tmp)
        try:
            cls.lv.start_or_cleanup()
        except BaseException:
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.lv.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.domains = []

    def tearDown(self):
        for name in self.domains:
            self.lv.virsh('destroy', name, check=False)
            self.lv.virsh('undefine', name, check=False)

    # ---- helpers ----

    def need_kvm(self):
        if not guestboot.kvm_usable():
            self.skipTest('no usable /dev/kvm')

    def guest(self, name):
        path = guestboot.guest_image(name)
        if not os.path.exists(path):
            self.skipTest('guest image %s not built' % path)
        return path

    def domcaps(self, binary, arch, machine, virttype):
        return self.lv.virsh('domcapabilities', '--emulatorbin', binary,
                             '--arch', arch, '--machine', machine,
                             '--virttype', virttype, check=False)

    def caps_cache(self, binary):
        """libvirt's cached probe result for @binary (an XML tree)."""
        d = self.lv.path('cache', 'qemu', 'capabilities')
        for f in os.listdir(d):
            root = ET.parse(os.path.join(d, f)).getroot()
            if root.findtext('emulator') == binary:
                return root
        self.fail('no capabilities cache entry for %s in %s' % (binary, d))

    def define(self, xml):
        name = ET.fromstring(xml).findtext('name')
        path = self.lv.path('%s.xml' % name)
        with open(path, 'w') as f:
            f.write(xml)
        self.lv.virsh('define', path)
        self.domains.append(name)
        return name

    def hmp_qmp(self, dom, cmd, **args):
        req = {'execute': cmd}
        if args:
            req['arguments'] = args
        r = self.lv.virsh('qemu-monitor-command', dom, json.dumps(req))
        reply = json.loads(r.stdout)
        self.assertIn('return', reply, r.stdout)
        return reply['return']

    def wait_for(self, what, fn, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = fn()
            if v:
                return v
            time.sleep(0.5)
        self.fail('timed out waiting for ' + what)

    def read(self, path):
        try:
            with open(path, errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def domstate(self, dom):
        return self.lv.virsh('domstate', dom).stdout.strip()

    # ---- probe ----

    def test_probe_tcg_refused(self):
        r = self.domcaps(CONDUIT, 'x86_64', 'pc', 'qemu')
        self.assertNotEqual(r.returncode, 0, r.stdout)
        # libvirt's wording depends on whether the probe ran under KVM
        # (then no machine is recorded for TCG at all).
        self.assertRegex(r.stderr, r"does not support virt type 'qemu'|"
                                   r"machine 'pc' is not supported")
        caps = self.caps_cache(CONDUIT)
        flags = {f.get('name') for f in caps.iter('flag')}
        self.assertNotIn('tcg', flags)
        self.assertIn('vfio-pci', flags)
        self.assertEqual(caps.findtext('arch'), 'x86_64')
        # The probe saw exactly the machines Conduit has.
        machines = {m.get('name') for m in caps.iter('machine')}
        self.assertEqual(machines, {'pc'})  # libvirt drops 'none'

    def test_probe_ppc64(self):
        if not CONDUIT_PPC64 or not os.access(CONDUIT_PPC64, os.X_OK):
            self.skipTest('CONDUIT_PPC64_BINARY not built')
        for virttype, why in (('qemu', "does not support virt type 'qemu'"),
                              ('kvm', "")):
            r = self.domcaps(CONDUIT_PPC64, 'ppc64', 'pseries', virttype)
            self.assertNotEqual(r.returncode, 0, r.stdout)
            self.assertIn(why, r.stderr)
        caps = self.caps_cache(CONDUIT_PPC64)
        self.assertEqual(caps.findtext('arch'), 'ppc64')
        flags = {f.get('name') for f in caps.iter('flag')}
        # qtest only: libvirt must see neither accelerator.
        self.assertNotIn('kvm', flags)
        self.assertNotIn('tcg', flags)
        self.assertIn('pseries', {m.get('name') for m in caps.iter('machine')})

    def test_probe_kvm_hostdev(self):
        self.need_kvm()
        r = self.domcaps(CONDUIT, 'x86_64', 'pc', 'kvm')
        self.assertEqual(r.returncode, 0, r.stderr)
        root = ET.fromstring(r.stdout)
        self.assertEqual(root.findtext('domain'), 'kvm')
        hostdev = root.find('devices/hostdev')
        self.assertEqual(hostdev.get('supported'), 'yes', r.stdout)
        subsys = [v.text for v in hostdev.findall(
            "enum[@name='subsysType']/value")]
        self.assertIn('pci', subsys, r.stdout)
        backends = [v.text for v in hostdev.findall(
            "enum[@name='pciBackend']/value")]
        if vfio_available():
            self.assertIn('vfio', backends, r.stdout)
        else:
            # libvirt lists the back-end only where the host has VFIO.
            self.assertNotIn('vfio', backends, r.stdout)
        flags = {f.get('name') for f in self.caps_cache(CONDUIT).iter('flag')}
        self.assertIn('kvm', flags)

    # ---- life cycle ----

    def console_open(self, dom):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(libvirt_env.VIRSH, [libvirt_env.VIRSH, '-c', self.lv.uri,
                                         'console', '--force', dom])
        return pid, fd

    def console_read_until(self, fd, needle):
        buf = b''
        deadline = time.monotonic() + WAIT
        while needle.encode() not in buf and time.monotonic() < deadline:
            r, _, _ = select.select([fd], [], [], 1)
            if r:
                try:
                    buf += os.read(fd, 4096)
                except OSError:
                    break
        return buf.decode(errors='replace')

    def test_lifecycle(self):
        self.need_kvm()
        dom = self.define(domain_xml('conduit-life', self.guest('hello'),
                                     vcpus=2))
        self.lv.virsh('start', '--paused', dom)
        self.assertEqual(self.domstate(dom), 'paused')
        pid, fd = self.console_open(dom)
        try:
            # Resume only once the console is attached, so that the
            # guest's first line cannot go out before anyone listens.
            out = self.console_read_until(fd, 'Escape character')
            self.lv.virsh('resume', dom)
            out += self.console_read_until(fd, 'unexpected failures')
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            os.close(fd)
        self.assertIn('Connected to domain', out)
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertEqual(self.domstate(dom), 'running')

        cpus = self.hmp_qmp(dom, 'query-cpus-fast')
        self.assertEqual([c['cpu-index'] for c in cpus], [0, 1])
        tids = [c['thread-id'] for c in cpus]
        ncpu = os.cpu_count()
        target = ncpu - 1
        self.lv.virsh('vcpupin', dom, '1', str(target))
        self.assertEqual(os.sched_getaffinity(tids[1]), {target})
        r = self.lv.virsh('vcpupin', dom)
        self.assertRegex(r.stdout, r'\b1\s+%d\b' % target)

        stats = self.lv.virsh('domstats', dom).stdout
        self.assertIn('state.state=1', stats)
        self.assertIn('vcpu.current=2', stats)
        self.assertIn('vcpu.1.state=1', stats)

        r = self.lv.virsh('shutdown', dom, check=False)
        if r.returncode:
            # No ACPI power button (yet): the error must say what failed.
            self.assertRegex(r.stderr, r'(?i)powerdown|acpi|not supported|'
                                       r'not found', r.stderr)
        else:
            # system_powerdown pressed the ACPI power button (issue 18).
            # This PVH test guest has no ACPI driver and keeps running; a
            # Linux guest powers off (test_linux_platform checks that).
            self.assertIn(self.domstate(dom), ('running', 'shut off'))
        self.lv.virsh('destroy', dom, check=False)
        self.assertEqual(self.domstate(dom), 'shut off')
        self.lv.virsh('undefine', dom)
        self.domains.remove(dom)
        r = self.lv.virsh('dominfo', dom, check=False)
        self.assertNotEqual(r.returncode, 0)

    def test_serial_log_fd_passed(self):
        # <serial type='file'>: libvirt opens the file and passes it with
        # -add-fd; Conduit writes through /dev/fdset/N.
        self.need_kvm()
        log = self.lv.path('serial-file.log')
        dom = self.define(domain_xml('conduit-file', self.guest('hello'),
                                     serial='file', serial_path=log))
        self.lv.virsh('start', dom)
        out = self.wait_for('SUMMARY in %s' % log,
                            lambda: 'SUMMARY' in self.read(log) and
                            self.read(log))
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        cmdline = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        self.assertIn('/dev/fdset/', cmdline)
        self.assertIn('-add-fd', cmdline)
        self.lv.virsh('destroy', dom)

    # ---- vfio-user ----

    def start_nvme_server(self, name):
        if not VFIO_USER_NVME or not os.access(VFIO_USER_NVME, os.X_OK):
            self.skipTest('VFIO_USER_NVME not built')
        sock = self.lv.path(name + '.sock')
        proc = subprocess.Popen([VFIO_USER_NVME, '--socket', sock,
                                 '--backend', 'null'],
                                stdout=subprocess.DEVNULL)
        self.addCleanup(lambda: (proc.kill(), proc.wait()))
        self.wait_for('vfio-user socket', lambda: os.path.exists(sock),
                      timeout=30)
        return sock

    def test_vfio_user_commandline_and_hotplug(self):
        self.need_kvm()
        sock = self.start_nvme_server('nvme-vu')
        log = self.lv.path('vu.log')
        dom = self.define(domain_xml(
            'conduit-vu', self.guest('nvme'),
            append='qd=4 ios=200 mode=irq', serial='file', serial_path=log,
            qemu_args=['-device', 'vfio-user-pci,id=vu0,socket=' + sock]))
        self.lv.virsh('start', dom)
        out = self.wait_for('RESULT', lambda: 'SUMMARY' in self.read(log)
                            and self.read(log))
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT iops=\d+ .*errors=0')
        devs = self.hmp_qmp(dom, 'x-query-vfio')
        self.assertEqual([d['id'] for d in devs], ['vu0'])
        # Hot-unplug and plug again through libvirt's monitor pass-through.
        self.hmp_qmp(dom, 'device_del', id='vu0')
        self.wait_for('vu0 gone', lambda: not self.hmp_qmp(dom,
                                                           'x-query-vfio'))
        self.hmp_qmp(dom, 'device_add', driver='vfio-user-pci', id='vu1',
                     socket=sock)
        devs = self.hmp_qmp(dom, 'x-query-vfio')
        self.assertEqual([d['id'] for d in devs], ['vu1'])
        self.lv.virsh('destroy', dom)

    # ---- hostdev ----

    def driver_of(self, bdf):
        link = '/sys/bus/pci/devices/%s/driver' % bdf
        return os.path.basename(os.readlink(link)) if os.path.exists(link) \
            else None

    def test_hostdev_managed(self):
        if not HOSTDEV_BDF:
            self.skipTest('LIBVIRT_HOSTDEV_BDF not set (the nested test '
                          'sets it inside its guest)')
        self.need_kvm()
        bdf = HOSTDEV_BDF
        host_driver = self.driver_of(bdf)
        log = self.lv.path('hostdev.log')
        hostdev = hostdev_xml(bdf)
        dom = self.define(domain_xml(
            'conduit-hostdev', self.guest('nvme'),
            append='qd=4 ios=200 mode=irq verify=1', serial='file',
            serial_path=log, devices=hostdev))
        self.lv.virsh('start', dom)
        self.assertEqual(self.driver_of(bdf), 'vfio-pci')
        cmdline = self.read(self.lv.path('log', 'qemu', dom + '.log'))
        self.assertIn('vfio-pci', cmdline)
        out = self.wait_for('SUMMARY', lambda: 'SUMMARY' in self.read(log)
                            and self.read(log))
        self.assertRegex(out, r'SUMMARY: \d+ tests, 0 unexpected failures')
        self.assertRegex(out, r'RESULT iops=\d+ .*errors=0')

        def bar0_whole():
            devs = self.hmp_qmp(dom, 'x-query-vfio')
            self.assertEqual(len(devs), 1, devs)
            bar0 = [b for b in devs[0]['bars'] if b['bar'] == 0][0]
            # One mmap over the whole BAR (the kernel's MSIX_MAPPABLE);
            # only the emulated MSI-X table overlay traps.
            self.assertTrue(bar0['msix-mappable'], bar0)
            self.assertEqual(bar0['mapped'],
                             [{'offset': 0, 'size': bar0['size']}], bar0)
            msix = devs[0]['msix']
            for t in bar0['trapped']:
                self.assertEqual(msix['bar'], 0, devs[0])
                self.assertLessEqual(t['offset'], msix['table-offset'])
                self.assertLess(msix['table-offset'], t['offset'] + t['size'])
            return devs[0]
        bar0_whole()
        print('hostdev x-query-vfio BAR0 mapped whole')

        xml = self.lv.path('hostdev-dev.xml')
        with open(xml, 'w') as f:
            f.write(hostdev)
        self.lv.virsh('detach-device', dom, xml, '--live')
        self.wait_for('hostdev gone', lambda: not self.hmp_qmp(
            dom, 'x-query-vfio'), timeout=60)
        self.assertNotIn('<hostdev', self.lv.virsh('dumpxml', dom).stdout)
        self.lv.virsh('attach-device', dom, xml, '--live')
        self.assertIn('<hostdev', self.lv.virsh('dumpxml', dom).stdout)
        bar0_whole()
        self.lv.virsh('destroy', dom)
        # managed='yes': libvirt gave the function back on destroy.
        self.wait_for('host driver back', lambda: self.driver_of(bdf) ==
                      host_driver, timeout=60)
        nodedev = 'pci_' + re.sub(r'[:.]', '_', bdf)
        self.lv.virsh('nodedev-detach', nodedev)
        self.assertEqual(self.driver_of(bdf), 'vfio-pci')
        self.lv.virsh('nodedev-reattach', nodedev)
        self.assertEqual(self.driver_of(bdf), host_driver)


if __name__ == '__main__':
    sys.exit(guestboot.main())
