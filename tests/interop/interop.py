# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the interop scripts: peers from the environment, a
qtest client (the protocol QEMU and Conduit share), PCI config access
through 0xcf8/0xcfc, and a minimal NVMe driver over qtest, in the style of
tests/qtest/libqos.

Peers are never part of the tree: a script is pointed at them with
CONDUIT_PEER_QEMU (a qemu-system-x86_64 >= 10.1 built with its vfio-user
client) and CONDUIT_PEER_LIBVFIO_USER (a libvfio-user build directory),
and exits 77 (skipped) with the reason when they are not set.
"""
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
# Liveness bound for one qtest reply or one NVMe completion; nothing
# asserts on time.
WAIT_S = 60


def skip(reason):
    print('SKIP: ' + reason)
    sys.exit(SKIP)


def peer_qemu():
    q = os.environ.get('CONDUIT_PEER_QEMU', '')
    if not q:
        skip('CONDUIT_PEER_QEMU is not set (point it at a '
             'qemu-system-x86_64 >= 10.1; see docs/devel/interop.rst)')
    if not os.access(q, os.X_OK):
        skip('CONDUIT_PEER_QEMU=%s is not executable' % q)
    return q


def peer_libvfio_user():
    d = os.environ.get('CONDUIT_PEER_LIBVFIO_USER', '')
    if not d:
        skip('CONDUIT_PEER_LIBVFIO_USER is not set (point it at a '
             'libvfio-user build directory; see docs/devel/interop.rst)')
    if not os.path.isdir(d):
        skip('CONDUIT_PEER_LIBVFIO_USER=%s is not a directory' % d)
    return d


def need_env(name):
    v = os.environ.get(name, '')
    if not v or not os.access(v, os.X_OK):
        skip('%s is not set to an executable (meson sets it)' % name)
    return v


def wait_for_path(path, proc):
    deadline = time.monotonic() + WAIT_S
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError('%s exited with %d before creating %s'
                               % (proc.args[0], proc.returncode, path))
        if time.monotonic() > deadline:
            raise RuntimeError('%s never appeared' % path)
        time.sleep(0.02)


class NvmeServer:
    """vfio-user-nvme with --stats: its REGION_READ/WRITE counts."""

    def __init__(self, binary, tmp, args=(), backend='ram', size='64M'):
        self.sock = os.path.join(tmp, 'nvme.sock')
        self.errfile = open(os.path.join(tmp, 'server.err'), 'w+')
        cmd = [binary, '--socket', self.sock, '--backend', backend,
               '--size', size, '--stats'] + list(args)
        self.proc = subprocess.Popen(cmd, stderr=self.errfile)
        wait_for_path(self.sock, self.proc)

    def stop(self):
        """Stops it; returns {region: (reads, writes)}."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(WAIT_S)
        self.errfile.seek(0)
        text = self.errfile.read()
        if rc != 0:
            raise RuntimeError('vfio-user-nvme exited %d:\n%s' % (rc, text))
        stats = {}
        for line in text.splitlines():
            f = line.split()
            if len(f) == 8 and f[1] == 'stats' and f[2] == 'region':
                stats[int(f[3])] = (int(f[5]), int(f[7]))
        self.stderr = text
        self.errfile.close()
        return stats


class QTest:
    """A VMM under -accel qtest: QEMU's or Conduit's, same protocol."""

    def __init__(self, binary, tmp, args):
        path = os.path.join(tmp, 'qtest.sock')
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.errfile = open(os.path.join(tmp, 'vmm.err'), 'w+')
        cmd = [binary, '-qtest', 'unix:' + path, '-accel', 'qtest',
               '-display', 'none', '-nodefaults'] + args
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.errfile,
                                     stderr=subprocess.STDOUT)
        self.listener.settimeout(0.2)
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                self.sock, _ = self.listener.accept()
                break
            except socket.timeout:
                if self.proc.poll() is None and time.monotonic() < deadline:
                    continue
                self.proc.kill()
                self.proc.wait()
                self.listener.close()
                raise RuntimeError('the VMM never connected:\n' +
                                   self.output())
        self.listener.close()
        self.buf = b''

    def output(self):
        self.errfile.seek(0)
        return self.errfile.read()

    def cmd(self, line):
        self.sock.sendall(line.encode() + b'\n')
        deadline = time.monotonic() + WAIT_S
        while True:
            while b'\n' in self.buf:
                reply, self.buf = self.buf.split(b'\n', 1)
                reply = reply.decode()
                if reply.startswith('IRQ'):
                    continue
                if not reply.startswith('OK'):
                    raise RuntimeError('qtest %r: %r' % (line, reply))
                return reply[3:]
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                raise RuntimeError('qtest %r: no reply' % line)
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError('qtest %r: VMM went away:\n%s'
                                   % (line, self.output()))
            self.buf += data

    def readl(self, a):
        return int(self.cmd('readl 0x%x' % a), 16)

    def readw(self, a):
        return int(self.cmd('readw 0x%x' % a), 16)

    def writel(self, a, v):
        self.cmd('writel 0x%x 0x%x' % (a, v))

    def writeq(self, a, v):
        self.cmd('writeq 0x%x 0x%x' % (a, v))

    def read(self, a, n):
        return bytes.fromhex(self.cmd('read 0x%x 0x%x' % (a, n))[2:])

    def write(self, a, data):
        self.cmd('write 0x%x 0x%x 0x%s' % (a, len(data), data.hex()))

    def quit(self):
        self.sock.close()
        self.proc.terminate()
        try:
            self.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        out = self.output()
        self.errfile.close()
        return out


class Pci:
    """Type 1 config cycles on 0xcf8/0xcfc (pc and q35)."""

    def __init__(self, qt, devfn):
        self.qt = qt
        self.devfn = devfn

    def _addr(self, off):
        self.qt.cmd('outl 0xcf8 0x%x' % (0x80000000 | self.devfn << 8 |
                                          (off & 0xfc)))

    def readl(self, off):
        self._addr(off)
        return int(self.qt.cmd('inl 0xcfc'), 16)

    def writel(self, off, v):
        self._addr(off)
        self.qt.cmd('outl 0xcfc 0x%x' % v)

    def map_bars(self, base):
        """Assigns every memory BAR from base up; returns {bar: addr}."""
        bars = {}
        i = 0
        while i < 6:
            off = 0x10 + 4 * i
            self.writel(off, 0xffffffff)
            mask = self.readl(off)
            is64 = (mask & 7) == 4
            if mask == 0 or mask & 1:
                i += 1
                continue
            size = (~(mask & ~0xf) & 0xffffffff) + 1
            base = (base + size - 1) & ~(size - 1)
            self.writel(off, base & 0xffffffff)
            if is64:
                self.writel(off + 4, base >> 32)
            bars[i] = base
            base += size
            i += 2 if is64 else 1
        cmd = self.readl(0x04)
        self.writel(0x04, (cmd & 0xffff0000) | (cmd & 0xffff) | 0x6)
        return bars


class Nvme:
    """Just enough of an NVMe driver: admin queue, one I/O queue pair,
    polled completions (no interrupts under qtest)."""

    QSIZE = 16

    def __init__(self, qt, bar0, mem):
        self.qt, self.bar0, self.mem = qt, bar0, mem
        self.asq, self.acq = mem, mem + 0x1000
        self.iosq, self.iocq = mem + 0x2000, mem + 0x3000
        self.buf = mem + 0x10000
        self.tails = {0: 0, 1: 0}
        self.heads = {0: 0, 1: 0}
        self.phase = {0: 1, 1: 1}
        self.cid = 0
        self.doorbells = 0

    def enable(self):
        qt, b = self.qt, self.bar0
        for a in range(self.mem, self.mem + 0x4000, 4096):
            qt.write(a, bytes(4096))
        qt.writel(b + 0x14, 0)
        self._wait(lambda: not qt.readl(b + 0x1c) & 1, 'CSTS.RDY=0')
        # Polled completions: mask INTx (INTMS), which a VMM would
        # otherwise deliver in userspace, unmapping the BARs meanwhile.
        qt.writel(b + 0x0c, 0xffffffff)
        qt.writel(b + 0x24, (self.QSIZE - 1) << 16 | (self.QSIZE - 1))
        qt.writeq(b + 0x28, self.asq)
        qt.writeq(b + 0x30, self.acq)
        qt.writel(b + 0x14, 1 | 6 << 16 | 4 << 20)
        self._wait(lambda: qt.readl(b + 0x1c) & 1, 'CSTS.RDY=1')

    def _wait(self, cond, what):
        deadline = time.monotonic() + WAIT_S
        while not cond():
            if time.monotonic() > deadline:
                raise RuntimeError('NVMe: timed out waiting for ' + what)

    def submit(self, qid, opcode, nsid=0, prp1=0, cdw=()):
        sq = self.asq if qid == 0 else self.iosq
        cq = self.acq if qid == 0 else self.iocq
        self.cid = (self.cid + 1) & 0xffff
        cmd = bytearray(64)
        cmd[0] = opcode
        cmd[2:4] = self.cid.to_bytes(2, 'little')
        cmd[4:8] = nsid.to_bytes(4, 'little')
        cmd[24:32] = prp1.to_bytes(8, 'little')
        for i, v in enumerate(cdw):
            cmd[40 + 4 * i:44 + 4 * i] = v.to_bytes(4, 'little')
        self.qt.write(sq + 64 * self.tails[qid], bytes(cmd))
        self.tails[qid] = (self.tails[qid] + 1) % self.QSIZE
        self.qt.writel(self.bar0 + 0x1000 + 8 * qid, self.tails[qid])
        entry = cq + 16 * self.heads[qid]
        self._wait(lambda: (self.qt.readw(entry + 14) & 1) ==
                   self.phase[qid], 'a completion on queue %d' % qid)
        cqe = self.qt.read(entry, 16)
        self.heads[qid] = (self.heads[qid] + 1) % self.QSIZE
        if self.heads[qid] == 0:
            self.phase[qid] ^= 1
        self.qt.writel(self.bar0 + 0x1000 + 8 * qid + 4, self.heads[qid])
        self.doorbells += 2
        cid = int.from_bytes(cqe[12:14], 'little')
        status = int.from_bytes(cqe[14:16], 'little') >> 1
        if cid != self.cid:
            raise RuntimeError('completion for cid %d, expected %d'
                               % (cid, self.cid))
        return status, int.from_bytes(cqe[0:4], 'little')

    def identify(self):
        st, _ = self.submit(0, 0x06, prp1=self.buf, cdw=(1,))
        if st:
            raise RuntimeError('Identify failed: status 0x%x' % st)
        return self.qt.read(self.buf, 4096)

    def create_io_queues(self):
        q = (self.QSIZE - 1) << 16 | 1
        st, _ = self.submit(0, 0x05, prp1=self.iocq, cdw=(q, 1))
        if st:
            raise RuntimeError('Create I/O CQ failed: 0x%x' % st)
        st, _ = self.submit(0, 0x01, prp1=self.iosq, cdw=(q, 1 << 16 | 1))
        if st:
            raise RuntimeError('Create I/O SQ failed: 0x%x' % st)

    def rw(self, write, lba, data_or_len):
        """One 4 KiB (8 x 512 B) Write or Read at lba."""
        if write:
            self.qt.write(self.buf, data_or_len)
        st, _ = self.submit(1, 0x01 if write else 0x02, nsid=1,
                            prp1=self.buf, cdw=(lba, 0, 7))
        if st:
            raise RuntimeError('%s failed: 0x%x' %
                               ('Write' if write else 'Read', st))
        return None if write else self.qt.read(self.buf, 4096)


def tmpdir():
    return tempfile.TemporaryDirectory(prefix='conduit-interop-')
