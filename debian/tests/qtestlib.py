"""Minimal qtest + QMP client for the installed-package tests.

Runs an installed conduit-system-* binary under -accel qtest.  Like the
in-tree libqtest, this side listens on two UNIX sockets and the binary
connects to them, so there is no start-up race.  Standard library only:
autopkgtest runs it against the installed packages, not the build tree.
"""

import json
import os
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BINDIR = os.environ.get("CONDUIT_BINDIR", "/usr/bin")
# A cross build's tests (make check-ppc64le) start its binaries through
# meson's exe_wrapper (qemu-user): this host cannot exec them directly.
EXE_WRAPPER = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
TIMEOUT = float(os.environ.get("QTEST_TIMEOUT", "60"))


class TestFailure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise TestFailure(what)
    print("ok -", what, flush=True)


class LineSocket:
    def __init__(self, sock, what):
        self.sock = sock
        self.what = what
        self.buf = b""

    def send(self, text):
        self.sock.sendall(text.encode() + b"\n")

    def readline(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure("timeout waiting for a %s reply" % self.what)
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
            data = self.sock.recv(65536)
            if not data:
                raise TestFailure("%s connection closed" % self.what)
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode().rstrip("\r")


class Machine:
    """One conduit-system-* process driven over qtest and QMP."""

    def __init__(self, binary, args, workdir):
        self.workdir = workdir
        self.log_path = os.path.join(workdir, os.path.basename(binary) + ".log")
        listeners = {}
        for name in ("qtest", "qmp"):
            lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            lsock.bind(os.path.join(workdir, name + ".sock"))
            lsock.listen(1)
            listeners[name] = lsock
        cmd = EXE_WRAPPER + [os.path.join(BINDIR, binary),
               "-qtest", "unix:" + os.path.join(workdir, "qtest.sock"),
               "-qmp", "unix:" + os.path.join(workdir, "qmp.sock"),
               "-accel", "qtest", "-display", "none"] + args
        print("# starting", " ".join(cmd), flush=True)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + TIMEOUT
        conns = {}
        # The binary connects both sockets in an order of its choosing.
        while len(conns) < 2:
            waiting = [s for n, s in listeners.items() if n not in conns]
            ready, _, _ = select.select(waiting, [], [], 0.1)
            for lsock in ready:
                name = [n for n, s in listeners.items() if s is lsock][0]
                conns[name] = LineSocket(lsock.accept()[0], name)
            if self.proc.poll() is not None:
                raise TestFailure("%s exited with status %d before "
                                  "connecting" % (binary, self.proc.returncode))
            if time.monotonic() > deadline:
                raise TestFailure("%s did not connect its sockets" % binary)
        for lsock in listeners.values():
            lsock.close()
        self.qtest = conns["qtest"]
        self.qmp_sock = conns["qmp"]
        greeting = self._qmp_read()
        if "QMP" not in greeting:
            raise TestFailure("no QMP greeting: %r" % greeting)
        self.qmp("qmp_capabilities")

    # ---- QMP ----

    def _qmp_read(self):
        deadline = time.monotonic() + TIMEOUT
        while True:
            msg = json.loads(self.qmp_sock.readline(deadline))
            if "event" not in msg:
                return msg

    def qmp_raw(self, command, **arguments):
        req = {"execute": command}
        if arguments:
            req["arguments"] = arguments
        self.qmp_sock.send(json.dumps(req))
        return self._qmp_read()

    def qmp(self, command, **arguments):
        resp = self.qmp_raw(command, **arguments)
        if "return" not in resp:
            raise TestFailure("QMP %s failed: %r" % (command, resp))
        return resp["return"]

    # ---- qtest ----

    def cmd(self, line):
        self.qtest.send(line)
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self.qtest.readline(deadline)
            if reply.startswith("IRQ "):
                continue
            if reply == "OK":
                return None
            if reply.startswith("OK "):
                return reply[3:]
            raise TestFailure("qtest '%s': %s" % (line, reply))

    def read_int(self, op, addr):
        return int(self.cmd("%s 0x%x" % (op, addr)), 0)

    def readl(self, addr):
        return self.read_int("readl", addr)

    def readq(self, addr):
        return self.read_int("readq", addr)

    def writel(self, addr, val):
        self.cmd("writel 0x%x 0x%x" % (addr, val))

    def memwrite(self, addr, data):
        self.cmd("write 0x%x 0x%x 0x%s" % (addr, len(data), data.hex()))

    def memread(self, addr, size):
        return bytes.fromhex(self.cmd("read 0x%x 0x%x" % (addr, size))[2:])

    def memset(self, addr, size, byte):
        self.cmd("memset 0x%x 0x%x 0x%x" % (addr, size, byte))

    # ---- PCI configuration space through 0xcf8/0xcfc (pc machine) ----

    def pci_cfg_readl(self, devfn, offset):
        self.cmd("outl 0xcf8 0x%x" % (0x80000000 | devfn << 8 | offset & 0xfc))
        return int(self.cmd("inl 0xcfc"), 0)

    def pci_cfg_writel(self, devfn, offset, val):
        self.cmd("outl 0xcf8 0x%x" % (0x80000000 | devfn << 8 | offset & 0xfc))
        self.cmd("outl 0xcfc 0x%x" % val)

    def quit(self):
        self.qmp_sock.send(json.dumps({"execute": "quit"}))
        try:
            status = self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise TestFailure("the binary did not exit after QMP quit")
        return status

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def run(test):
    """Runs test(workdir) with a scratch directory; exit status 0 or 1."""
    workdir = tempfile.mkdtemp(prefix="conduit-autopkgtest-")
    status = 1
    try:
        test(workdir)
        status = 0
    except TestFailure as exc:
        print("not ok -", exc, flush=True)
        for name in sorted(os.listdir(workdir)):
            if name.endswith(".log"):
                print("# ---- %s ----" % name)
                with open(os.path.join(workdir, name), errors="replace") as f:
                    sys.stdout.write(f.read())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("PASS" if status == 0 else "FAIL", flush=True)
    sys.exit(status)


def stop_process(proc, sig=signal.SIGTERM):
    """Stops a helper process; returns its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            return proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise TestFailure("process %d ignored signal %d" % (proc.pid, sig))
    return proc.returncode
