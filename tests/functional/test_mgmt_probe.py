#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a management tool's probe and start-up see, without KVM or libvirt.

libvirt probes with -daemonize and QMP introspection, then starts domains
with options such as -object secret, -add-fd and -device isa-serial.
These cases run Conduit under qtest and check each answer against what
the binary really has, so a regression in any of them fails here even on
machines without /dev/kvm or libvirt (test_libvirt.py covers libvirt
itself).

Environment (set by meson): CONDUIT_BINARY, CONDUIT_PPC64_BINARY.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestboot  # noqa: E402

CONDUIT = os.environ.get('CONDUIT_BINARY', '')
CONDUIT_PPC64 = os.environ.get('CONDUIT_PPC64_BINARY', '')
WAIT = 60


class Qmp:
    def __init__(self, path):
        deadline = time.monotonic() + WAIT
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.settimeout(WAIT)
        self.buf = b''
        greeting = self.recv()
        assert 'QMP' in greeting, greeting
        self.cmd('qmp_capabilities')

    def recv(self):
        while True:
            # Each reply and event is one JSON value on one line.
            line, sep, rest = self.buf.partition(b'\n')
            if sep:
                self.buf = rest
                if line.strip():
                    return json.loads(line)
                continue
            data = self.sock.recv(65536)
            if not data:
                raise EOFError('monitor closed')
            self.buf += data

    def raw(self, name, **args):
        req = {'execute': name}
        if args:
            req['arguments'] = args
        self.sock.sendall(json.dumps(req).encode() + b'\n')
        while True:
            r = self.recv()
            if 'event' not in r:
                return r

    def raw_fds(self, fds, name, **args):
        """A command with @fds attached (SCM_RIGHTS), as libvirt's getfd."""
        req = {'execute': name, 'arguments': args}
        socket.send_fds(self.sock, [json.dumps(req).encode() + b'\n'], fds)
        while True:
            r = self.recv()
            if 'event' not in r:
                return r

    def cmd(self, name, **args):
        r = self.raw(name, **args)
        if 'error' in r:
            raise AssertionError('%s: %s' % (name, r['error']))
        return r['return']

    def close(self):
        self.sock.close()


class MgmtProbeTest(unittest.TestCase):
    def setUp(self):
        if not CONDUIT or not os.access(CONDUIT, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built')
        self.tmp = tempfile.TemporaryDirectory(prefix='conduit-mgmt-')
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for stream in (p.stdout, p.stderr):
                if stream:
                    stream.close()
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def start(self, *args, binary=None, pass_fds=()):
        qmp = self.path('qmp-%d.sock' % len(self.procs))
        argv = [binary or CONDUIT, '-qmp',
                'unix:%s,server=on,wait=off' % qmp] + list(args)
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             pass_fds=pass_fds, universal_newlines=True)
        self.procs.append(p)
        try:
            mon = Qmp(qmp)
        except (OSError, EOFError):
            p.kill()
            out, err = p.communicate()
            self.fail('Conduit did not start: %s %s' % (out, err))
        self.addCleanup(mon.close)
        return mon

    def run_conduit(self, *args, binary=None):
        return subprocess.run([binary or CONDUIT] + list(args),
                              stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=WAIT)

    def assertRefused(self, args, *needles):
        r = self.run_conduit('-M', 'none', '-accel', 'qtest', *args)
        self.assertEqual(r.returncode, 1, (args, r.stdout, r.stderr))
        for n in needles:
            self.assertIn(n, r.stderr, args)

    # ---- -daemonize ----

    def probe_argv(self, binary=None):
        return ['-S', '-no-user-config', '-nodefaults', '-nographic',
                '-machine', 'none,accel=kvm:tcg',
                '-qmp', 'unix:%s,server=on,wait=off' % self.path('probe.sock'),
                '-pidfile', self.path('probe.pid'), '-daemonize']

    def check_daemon(self, binary):
        r = self.run_conduit(*self.probe_argv(), binary=binary)
        self.assertEqual(r.returncode, 0, r.stderr)
        # Both exist once the parent has exited: no waiting needed.
        with open(self.path('probe.pid')) as f:
            pid = int(f.read())
        self.assertTrue(os.path.exists('/proc/%d' % pid))
        mon = Qmp(self.path('probe.sock'))
        try:
            self.assertEqual(mon.cmd('query-status')['status'], 'prelaunch')
            kvm = mon.cmd('query-kvm')
            types = {t['name'] for t in mon.cmd('qom-list-types')}
            mon.cmd('quit')
        finally:
            mon.close()
        for _ in range(WAIT * 10):
            if not os.path.exists('/proc/%d' % pid):
                break
            time.sleep(0.1)
        self.assertFalse(os.path.exists('/proc/%d' % pid))
        return kvm, types

    def test_daemonize_probe(self):
        kvm, types = self.check_daemon(CONDUIT)
        self.assertNotIn('tcg-accel', types)
        self.assertEqual(kvm['enabled'], guestboot.kvm_usable())

    def test_daemonize_probe_ppc64(self):
        if not CONDUIT_PPC64 or not os.access(CONDUIT_PPC64, os.X_OK):
            self.skipTest('CONDUIT_PPC64_BINARY not built')
        kvm, types = self.check_daemon(CONDUIT_PPC64)
        self.assertFalse(kvm['enabled'])
        self.assertFalse({'kvm-accel', 'tcg-accel'} & types)

    def test_daemonize_failure_exits_1(self):
        # The kernel is loaded after the fork: the daemon fails, the
        # parent reports status 1 and the error reaches its stderr.
        r = self.run_conduit('-M', 'pc', '-accel', 'qtest', '-nodefaults',
                             '-kernel', self.path('missing-kernel'),
                             '-pidfile', self.path('x.pid'), '-daemonize')
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('missing-kernel', r.stderr)
        self.assertFalse(os.path.exists(self.path('x.pid')))

    def test_daemonize_refuses_stdio(self):
        r = self.run_conduit('-M', 'none', '-accel', 'qtest', '-nographic',
                             '-daemonize')
        self.assertEqual(r.returncode, 1)
        self.assertIn('-daemonize cannot be used with stdio', r.stderr)

    # ---- QMP introspection ----

    def test_schema_matches_command_table(self):
        mon = self.start('-M', 'none', '-accel', 'qtest')
        commands = {c['name'] for c in mon.cmd('query-commands')}
        schema = mon.cmd('query-qmp-schema')
        by_name = {e['name']: e for e in schema}
        self.assertEqual(len(by_name), len(schema), 'duplicate names')
        in_schema = {e['name'] for e in schema
                     if e['meta-type'] == 'command'}
        self.assertEqual(in_schema, commands)
        for e in schema:
            for key in ('arg-type', 'ret-type', 'element-type'):
                if key in e:
                    self.assertIn(e[key], by_name, e)
            for m in e.get('members', []):
                self.assertIn(m['type'], by_name, e)
        def args(cmd):
            return {m['name']: (m['type'], 'default' in m) for m in
                    by_name[by_name[cmd]['arg-type']]['members']}
        self.assertEqual(args('qom-get'), {'path': ('str', False),
                                           'property': ('str', False)})
        self.assertEqual(args('query-named-block-nodes'),
                         {'flat': ('bool', True)})
        self.assertEqual(args('migrate-set-capabilities'),
                         {'capabilities': ('[any]', False)})
        # Nothing Conduit lacks is claimed.
        for absent in ('object-add', 'chardev-add'):
            self.assertNotIn(absent, by_name)
        self.assertIn('query-hotpluggable-cpus', by_name)
        self.assertEqual(args('query-hotpluggable-cpus'), {})
        # send-key (issue 28) takes QEMU's arguments.
        self.assertIn('send-key', by_name)
        self.assertEqual(args('send-key'),
                         {'keys': ('[any]', False),
                          'hold-time': ('int', True)})
        # ... and what it has since the block layer (issue 19) is.
        for present in ('blockdev-add', 'blockdev-del', 'netdev_add',
                        'netdev_del', 'query-blockstats', 'migrate',
                        'migrate-incoming', 'query-migrate'):
            self.assertIn(present, by_name)

    def test_introspection(self):
        mon = self.start('-M', 'none', '-accel', 'qtest',
                         '-uuid', 'C0FFEE00-1234-5678-9abc-def012345678')
        self.assertEqual(mon.cmd('query-target'), {'arch': 'x86_64'})
        types = {t['name']: t for t in mon.cmd('qom-list-types')}
        # max-x86_64-cpu listed: libvirt probes its properties (and so
        # offers host-passthrough migratable=on) only then.
        for t in ('vfio-pci', 'vfio-user-pci', 'isa-serial', 'qtest-accel',
                  'kvm-accel', 'secret', 'pc-i440fx-8.2-machine',
                  'pc-q35-8.2-machine', 'max-x86_64-cpu',
                  'host-x86_64-cpu'):
            self.assertIn(t, types)
        self.assertNotIn('tcg-accel', types)
        accels = {t['name'] for t in mon.cmd('qom-list-types',
                                             implements='accel')}
        self.assertEqual(accels, {'kvm-accel', 'qtest-accel'})
        # Types this binary lacks answer an empty list.
        self.assertEqual(mon.cmd('qom-list-properties',
                                 typename='no-such-type'), [])
        backend = {p['name'] for p in mon.cmd('qom-list-properties',
                                              typename='memory-backend-file')}
        self.assertTrue({'size', 'mem-path', 'share', 'prealloc',
                         'discard-data'} <= backend, backend)
        cpu = {p['name'] for p in mon.cmd('qom-list-properties',
                                          typename='max-x86_64-cpu')}
        self.assertTrue({'migratable', 'pmu', 'kvm', 'vmx'} <= cpu, cpu)
        secret = {p['name'] for p in mon.cmd('qom-list-properties',
                                             typename='secret')}
        self.assertTrue({'data', 'file', 'format'} <= secret, secret)
        vfio = {p['name']: p for p in mon.cmd('device-list-properties',
                                              typename='vfio-pci')}
        self.assertIn('host', vfio)
        self.assertIn('x-msix-mappable', vfio)
        r = mon.raw('device-list-properties', typename='no-such-device')
        self.assertEqual(r['error']['class'], 'DeviceNotFound')
        machines = {m['name']: m for m in mon.cmd('query-machines')}
        # QEMU's shape: versioned names, "pc" and "q35" as aliases.
        self.assertIn('none', machines)
        self.assertNotIn('pc', machines)
        pc = machines['pc-i440fx-8.2']
        self.assertTrue(pc.get('is-default'))
        self.assertEqual(pc.get('alias'), 'pc')
        self.assertEqual(pc['cpu-max'], 255)
        self.assertEqual(machines['pc-q35-8.2'].get('alias'), 'q35')
        self.assertIn('pc-q35-7.2', machines)
        self.assertEqual([m for m in machines.values()
                          if m.get('is-default')], [pc])
        opts = {o['option']: {p['name'] for p in o['parameters']}
                for o in mon.cmd('query-command-line-options')}
        self.assertIn('mem-lock', opts['overcommit'])
        self.assertIn('strict', opts['boot'])
        self.assertNotIn('sandbox', opts)
        r = mon.raw('query-command-line-options', option='sandbox')
        self.assertIn('invalid option name', r['error']['desc'])
        self.assertEqual([c['name'] for c in
                          mon.cmd('query-cpu-definitions')],
                         ['host', 'max', 'qemu64'])
        # The expansion reads what KVM would give a vCPU: none here.
        r = mon.raw('query-cpu-model-expansion', type='full',
                    model={'name': 'host'})
        self.assertIn('needs the KVM accelerator', r['error']['desc'])
        r = mon.raw('query-cpu-model-expansion', type='full',
                    model={'name': 'Haswell'})
        self.assertEqual(r['error']['desc'],
                         "The CPU type 'Haswell' is not a recognized CPU "
                         "model")
        self.assertEqual(mon.cmd('query-tpm-models'), [])
        self.assertEqual(mon.cmd('query-tpm-types'), [])
        self.assertEqual(mon.cmd('query-uuid'),
                         {'UUID': 'c0ffee00-1234-5678-9abc-def012345678'})

    def test_start_time_qmp(self):
        mon = self.start('-M', 'pc', '-accel', 'qtest', '-nodefaults')
        def caps():
            return {c['capability']: c['state'] for c in
                    mon.cmd('query-migrate-capabilities')}
        self.assertEqual(caps(), {'events': False,
                                  'pause-before-switchover': False,
                                  'return-path': False})
        mon.cmd('migrate-set-capabilities',
                capabilities=[{'capability': 'events', 'state': True}])
        self.assertTrue(caps()['events'])
        r = mon.raw('migrate-set-capabilities', capabilities=[
            {'capability': 'events', 'state': False},
            {'capability': 'xbzrle', 'state': True}])
        self.assertIn("'xbzrle'", r['error']['desc'])
        # A refused request changed nothing.
        self.assertTrue(caps()['events'])
        mon.cmd('migrate-set-capabilities',
                capabilities=[{'capability': 'xbzrle', 'state': False}])
        r = mon.raw('migrate-set-capabilities', capabilities=['events'])
        self.assertIn('capabilities[0]', r['error']['desc'])
        self.assertEqual(mon.cmd('query-block'), [])
        self.assertEqual(mon.cmd('query-named-block-nodes', flat=True), [])
        # QEMU has /machine/peripheral before any device has an id.
        self.assertEqual(mon.cmd('qom-list', path='/machine/peripheral')[0]
                         ['name'], 'type')
        # qtest runs no vCPUs: no threads to report.
        self.assertEqual(mon.cmd('query-cpus-fast'), [])

    # ---- start-up options ----

    def test_libvirt_start_options(self):
        secret = self.path('master-key.aes')
        with open(secret, 'wb') as f:
            f.write(os.urandom(32))
        log = self.path('serial.log')
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.addCleanup(os.close, fd)
        mon = self.start(
            '-name', 'guest=dom,debug-threads=on', '-S',
            '-object', 'secret,id=masterKey0,format=raw,file=' + secret,
            '-machine', 'pc,usb=off,dump-guest-core=off',
            '-accel', 'qtest', '-cpu', 'host', '-m', '64',
            '-overcommit', 'mem-lock=off', '-smp', '1',
            '-uuid', '4f2b0a4e-7c58-4c63-9f1e-0e4a1c2b3d4e',
            '-no-user-config', '-nodefaults', '-rtc', 'base=utc',
            '-boot', 'strict=on', '-msg', 'timestamp=on',
            '-add-fd', 'set=0,fd=%d,opaque=serial0-log' % fd,
            '-chardev', 'file,id=charserial0,path=/dev/fdset/0,append=on',
            '-device', 'isa-serial,chardev=charserial0,id=serial0,index=0',
            '-audiodev', '{"id":"audio1","driver":"none"}',
            '-sandbox', 'off', pass_fds=(fd,))
        self.assertEqual(mon.cmd('query-fdsets'), [
            {'fdset-id': 0, 'fds': [{'fd': fd, 'opaque': 'serial0-log'}]}])
        self.assertEqual(mon.cmd('qom-get', path='/objects/masterKey0',
                                 property='format'), 'raw')
        self.assertFalse(mon.cmd('qom-get', path='/machine',
                                 property='dump-guest-core'))
        peripherals = {p['name'] for p in
                       mon.cmd('qom-list', path='/machine/peripheral')}
        self.assertIn('serial0', peripherals)
        mon.cmd('quit')

    def test_getfd_netdev_hotplug(self):
        # libvirt hot-plugs a NIC with getfd (the tap fd rides on the
        # command), netdev_add fd=NAME and device_add.
        mon = self.start('-M', 'pc', '-accel', 'qtest', '-m', '64',
                         '-nodefaults')
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(a.close)
        self.addCleanup(b.close)
        r = mon.raw('getfd', fdname='nofd')
        self.assertIn('No file descriptor supplied', r['error']['desc'])
        r = mon.raw_fds([b.fileno()], 'getfd', fdname='1bad')
        self.assertIn('digit', r['error']['desc'])
        r = mon.raw('closefd', fdname='never')
        self.assertIn("'never' not found", r['error']['desc'])
        # Named, closed: gone.
        self.assertEqual(mon.raw_fds([b.fileno()], 'getfd',
                                     fdname='dropped'), {'return': {}})
        mon.cmd('closefd', fdname='dropped')
        r = mon.raw('netdev_add', type='socket', id='n0', fd='dropped')
        self.assertIn("'dropped' has not been found", r['error']['desc'])
        # Named, taken by netdev_add (and so not there a second time).
        self.assertEqual(mon.raw_fds([b.fileno()], 'getfd',
                                     fdname='hostnet1-fd'), {'return': {}})
        mon.cmd('netdev_add', type='socket', id='hostnet1', fd='hostnet1-fd')
        mon.cmd('device_add', driver='virtio-net-pci', netdev='hostnet1',
                id='net1', addr='0x5')
        self.assertIn('/machine/peripheral/net1',
                      [d['qom-path'] for d in mon.cmd('x-query-virtio')])
        r = mon.raw('netdev_add', type='socket', id='n2', fd='hostnet1-fd')
        self.assertIn('has not been found', r['error']['desc'])
        # A named fd the backend cannot use is closed, not leaked: the
        # peer of a socketpair sees its other end go.
        c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(c.close)
        mon.raw_fds([d.fileno()], 'getfd', fdname='not-a-tap')
        d.close()
        c.send(b'still open in Conduit')
        r = mon.raw('netdev_add', type='tap', id='t0', fd='not-a-tap')
        self.assertIn('not a tap device', r['error']['desc'])
        with self.assertRaises(OSError):
            c.send(b'closed now')
        mon.cmd('quit')

    def test_fdset_file_chardev_writes(self):
        log = self.path('fdset.log')
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.addCleanup(os.close, fd)
        qtest = self.path('qtest.sock')
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(qtest)
        srv.listen(1)
        self.addCleanup(srv.close)
        p = subprocess.Popen(
            [CONDUIT, '-M', 'pc', '-accel', 'qtest', '-nodefaults',
             '-qtest', 'unix:' + qtest,
             '-add-fd', 'set=7,fd=%d' % fd,
             '-chardev', 'file,id=c0,path=/dev/fdset/7,append=on',
             '-device', 'isa-serial,chardev=c0,id=com1,index=0'],
            pass_fds=(fd,), stdin=subprocess.DEVNULL)
        self.procs.append(p)
        srv.settimeout(WAIT)
        conn, _ = srv.accept()
        self.addCleanup(conn.close)
        f = conn.makefile('rw')
        self.addCleanup(f.close)
        for b in b'via fdset\n':
            f.write('outb 0x3f8 0x%x\n' % b)
            f.flush()
            self.assertEqual(f.readline().strip(), 'OK')
        with open(log) as lf:
            self.assertEqual(lf.read(), 'via fdset\n')

    def test_refused_options_name_themselves(self):
        self.assertRefused(['-sandbox', 'on'], 'seccomp')
        self.assertRefused(['-overcommit', 'cpu-pm=on'], 'cpu-pm')
        self.assertRefused(['-rtc', 'base=tomorrow'], 'datetime format')
        self.assertRefused(['-audiodev', 'pa,id=a'], "'pa'")
        self.assertRefused(['-cpu', 'Skylake-Client'], 'Skylake-Client')
        self.assertRefused(['-cpu', 'host,+frob'],
                           "Property 'host-x86_64-cpu.frob' not found")
        self.assertRefused(['-uuid', 'not-a-uuid'], 'UUID')
        self.assertRefused(['-object', 'memory-backend-file,id=m,size=1M'],
                           "'mem-path' is required")
        self.assertRefused(['-object', 'frob-backend,id=m'],
                           'invalid object type: frob-backend', 'secret')
        self.assertRefused(['-object', 'secret,id=s,data=x,keyid=k'],
                           'encrypted secrets')
        self.assertRefused(['-add-fd', 'set=1,fd=99'], "'99'")
        self.assertRefused(['-chardev', 'file,id=c,path=/dev/fdset/5'],
                           'no fdset 5')
        self.assertRefused(['-machine', 'none,usb=on'], 'USB')
        self.assertRefused(['-msg', 'guest-name=on'], 'guest-name')
        self.assertRefused(['-device', 'isa-serial,chardev=nope'],
                           "can't find value 'nope'")
        # <driver io=...>: aio is checked, never ignored (QEMU's rules).
        img = self.path('aio.img')
        with open(img, 'wb') as f:
            f.truncate(1 << 20)
        self.assertRefused(['-blockdev', 'driver=file,filename=%s,'
                            'aio=native' % img],
                           'aio=native was specified, but it requires '
                           'cache.direct=on')
        self.assertRefused(['-blockdev', 'driver=file,filename=%s,'
                            'aio=io_uring' % img], 'aio=io_uring')
        self.assertRefused(['-blockdev', 'driver=file,filename=%s,'
                            'aio=frob' % img],
                           "Parameter 'aio' does not accept value 'frob'")
        self.assertRefused(['-blockdev', 'driver=raw,aio=threads,'
                            'file.driver=file,file.filename=%s' % img],
                           "Parameter 'aio' is unexpected")
        self.assertRefused(['-drive', 'id=d0,if=none,format=raw,file=%s,'
                            'aio=native' % img], 'cache.direct=on')


if __name__ == '__main__':
    sys.exit(guestboot.main())
