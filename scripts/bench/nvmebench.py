# SPDX-License-Identifier: GPL-2.0-or-later
"""One run of the tests/guest `nvme` guest under KVM against vfio-user-nvme.

Shared by scripts/demo and scripts/bench/run.  A run starts the server
(--backend null) with the given options, boots Conduit with -no-shutdown
and a QMP socket, waits for the guest's SHUTDOWN event (isa-debug-exit),
then reads x-query-vfio and x-query-kvm before quitting, so the counters
cover exactly the guest's run.
"""
import json
import os
import socket
import subprocess
import sys
import time

TIMEOUT = 900

# BAR0 of vfio-user-nvme: registers at 0, doorbells from 0x1000.
TABLE_ON_DOORBELL_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x1800',
                          '--msix-pba-offset', '0x1c00']
PBA_ON_DOORBELL_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x2000',
                        '--msix-pba-offset', '0x1800']
TABLE_IN_BAR0_OWN_PAGE = ['--msix-bar', '0', '--msix-table-offset', '0x2000',
                          '--msix-pba-offset', '0x3000']
TABLE_IN_BAR4 = ['--msix-bar', '4']


class Qmp:
    def __init__(self, path, timeout=30):
        deadline = time.time() + timeout
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.sock.settimeout(TIMEOUT)
        self.buf = b''
        self.events = []
        self.recv()                             # greeting
        self.cmd('qmp_capabilities')

    def recv(self):
        while b'\n' not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError('QMP connection closed')
            self.buf += data
        line, self.buf = self.buf.split(b'\n', 1)
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {'execute': name}
        if args:
            msg['arguments'] = args
        self.sock.sendall(json.dumps(msg).encode() + b'\n')
        while True:
            resp = self.recv()
            if 'event' in resp:
                self.events.append(resp)
                continue
            if 'error' in resp:
                raise RuntimeError('%s: %s' % (name, resp['error']))
            return resp.get('return')

    def wait_event(self, name):
        for ev in self.events:
            if ev['event'] == name:
                return ev
        while True:
            resp = self.recv()
            if resp.get('event') == name:
                return resp
            if 'event' in resp:
                self.events.append(resp)


def kvm_usable():
    return os.access('/dev/kvm', os.R_OK | os.W_OK)


def start_server(build, tmp, extra):
    sock = os.path.join(tmp, 'nvme.sock')
    if os.path.exists(sock):
        os.unlink(sock)
    argv = [os.path.join(build, 'vfio-user-nvme'), '--socket', sock,
            '--backend', 'null', '--queues', '4'] + list(extra)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not os.path.exists(sock):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError('vfio-user-nvme did not start: ' +
                               ' '.join(argv))
        time.sleep(0.02)
    return proc, sock


def parse_result(serial):
    for line in reversed(serial.splitlines()):
        if line.startswith('RESULT '):
            return dict(kv.split('=', 1) for kv in line.split()[1:]
                        if '=' in kv)
    return None


def trapped_counts(vfio):
    """(forwarded, mmap-served, emulated MSI-X) accesses of one device."""
    fwd = served = 0
    for bar in vfio['bars']:
        fwd += bar['forwarded-reads'] + bar['forwarded-writes']
        served += bar['mmap-served-reads'] + bar['mmap-served-writes']
    msix = vfio.get('msix', {})
    emulated = msix.get('table-accesses', 0) + msix.get('pba-accesses', 0)
    return fwd, served, emulated


def run_guest(build, tmp, server_args, device_opts, qd, ios, mode='poll',
              server_extra=()):
    """Boots the nvme guest once.  Returns a dict of per-run numbers."""
    server, sock = start_server(build, tmp,
                                list(server_args) + list(server_extra))
    qmp_path = os.path.join(tmp, 'qmp.sock')
    serial = os.path.join(tmp, 'serial.log')
    for p in (qmp_path, serial):
        if os.path.exists(p):
            os.unlink(p)
    argv = [os.path.join(build, 'conduit-system-x86_64'), '-accel', 'kvm',
            '-m', '256', '-display', 'none', '-nodefaults',
            '-serial', 'file:' + serial, '-no-shutdown',
            '-qmp', 'unix:%s,server=on,wait=off' % qmp_path,
            '-kernel', os.path.join(build, 'tests', 'guest', 'nvme.elf'),
            '-append', 'qd=%d ios=%d mode=%s' % (qd, ios, mode),
            '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
            '-device', 'vfio-user-pci,id=nvme0,socket=' + sock +
            ''.join(',' + o for o in device_opts)]
    vmm = None
    status = None
    try:
        # Inside the try: a missing VMM binary must not leave the server.
        vmm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        qmp = Qmp(qmp_path)
        ev = qmp.wait_event('SHUTDOWN')
        status = ev.get('data', {}).get('x-exit-status')
        vfio = qmp.cmd('x-query-vfio')[0]
        kvm = qmp.cmd('x-query-kvm')
        qmp.cmd('quit')
        vmm.wait(timeout=30)
    finally:
        if vmm and vmm.poll() is None:
            vmm.kill()
            vmm.wait()
        server.terminate()
        server.wait()
    with open(serial, errors='replace') as f:
        out = f.read()
    result = parse_result(out)
    if status != 1 or result is None:
        sys.stderr.write(out + vmm.stderr.read().decode(errors='replace'))
        raise RuntimeError('guest failed (exit status %s): %s' %
                           (status, ' '.join(argv)))
    n = int(result['ios'])
    fwd, served, emulated = trapped_counts(vfio)
    return {
        'iops': int(result['iops']),
        'p50_us': int(result['p50_ns']) / 1000.0,
        'p99_us': int(result['p99_ns']) / 1000.0,
        'ios': n,
        'exits_per_io': kvm['mmio-exits'] / n,
        'forwarded_per_io': fwd / n,
        'served_per_io': served / n,
        'trapped_per_io': (fwd + served + emulated) / n,
        'trapped': [r for b in vfio['bars'] for r in b['trapped']],
        # MSI-X events Conduit's eventfd handler took (KVM irqfd: none).
        'irqs_per_io': int(result.get('irqs', 0)) / n,
        'slow_path_per_io':
            vfio.get('msix', {}).get('slow-path-interrupts', 0) / n,
    }
