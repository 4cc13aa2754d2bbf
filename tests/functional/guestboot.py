# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the tests/guest images and check what they report.

A guest prints PASS/FAIL/SKIP lines and a final
"SUMMARY: N tests, M unexpected failures" on its serial port, then writes
its exit code to the isa-debug-exit port 0xf4.  The VMM exits with
(code << 1) | 1, so a passing guest makes the VMM exit 1, report failures
exit 3 and an unexpected exception exit 5 (see tests/guest/lib/libguest.h).
"""

import fcntl
import os
import re
import shutil
import subprocess
import sys
import selectors
import time
import unittest

EXIT_PASS = 1
EXIT_FAIL = 3
EXIT_FATAL = 5
# Guards against a hung guest only; no test asserts on time.
BOOT_TIMEOUT = int(os.environ.get('GUEST_BOOT_TIMEOUT', '600'))

SUMMARY_RE = re.compile(r'^SUMMARY: (\d+) tests, (\d+) unexpected failures'
                        r'(?:, (\d+) skipped)?', re.M)
RESULT_RE = re.compile(r'^RESULT (.*)$', re.M)


def guest_dir():
    return os.environ.get('GUEST_DIR',
                          os.path.join(os.getcwd(), 'tests', 'guest'))


def guest_image(name):
    return os.path.join(guest_dir(), name + '.elf')


KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01


def kvm_api():
    """(ok, why): /dev/kvm opens, speaks KVM API 12 and creates a VM.
    Asked of the device, not read off the file's existence or mode: a
    /dev/kvm bound to /dev/null (how tests hide it) is not KVM.
    CONDUIT_HIDE_KVM=1 answers no.  kvmtest's probe builds on this."""
    if (os.environ.get('CONDUIT_HIDE_KVM') or '').lower() in \
            ('1', 'y', 'yes', 'true', 'on'):
        return False, '/dev/kvm hidden (CONDUIT_HIDE_KVM=1)'
    try:
        fd = os.open('/dev/kvm', os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return False, '/dev/kvm: %s' % e.strerror
    try:
        ver = fcntl.ioctl(fd, KVM_GET_API_VERSION, 0)
        if ver != 12:
            return False, 'KVM_GET_API_VERSION is %d, not 12' % ver
        os.close(fcntl.ioctl(fd, KVM_CREATE_VM, 0))
    except OSError as e:
        return False, 'KVM ioctl failed: %s' % e.strerror
    finally:
        os.close(fd)
    return True, 'KVM API 12, KVM_CREATE_VM works'


def kvm_usable():
    return kvm_api()[0]


def qemu_binary():
    """QEMU_SYSTEM_X86_64 or qemu-system-x86_64 on PATH; None if absent."""
    return shutil.which(os.environ.get('QEMU_SYSTEM_X86_64',
                                       'qemu-system-x86_64'))


def require_qemu_and(binaries):
    """For tests that boot a guest of Debian's QEMU: its path, or
    unittest.SkipTest when it or one of @binaries ((path, env var name)
    pairs, built by meson) is missing."""
    qemu = qemu_binary()
    if not qemu:
        raise unittest.SkipTest('qemu-system-x86_64 is not installed')
    for path, what in binaries:
        if not path or not os.access(path, os.X_OK):
            raise unittest.SkipTest('%s is not built (%s)' % (what, path))
    return qemu


class GuestRun:
    def __init__(self, argv, returncode, output):
        self.argv = argv
        self.returncode = returncode
        self.output = output
        self.silent = False

    def summary(self):
        """(tests, failures, skipped) from the last SUMMARY line, or None."""
        found = SUMMARY_RE.findall(self.output)
        if not found:
            return None
        tests, failures, skipped = found[-1]
        return int(tests), int(failures), int(skipped or 0)

    def result(self):
        """The key=value pairs of the last RESULT line, or None."""
        found = RESULT_RE.findall(self.output)
        if not found:
            return None
        return dict(kv.split('=', 1) for kv in found[-1].split() if '=' in kv)

    def describe(self):
        return '%s\nexit status %s\n--- output ---\n%s' % (
            ' '.join(self.argv), self.returncode, self.output)


def stream(argv, timeout, silence=None, stop=None, log=None):
    """Runs @argv with its output collected as it comes; returns (exit
    status or None if killed, [(time, chunk)], why killed or None).  It
    is killed after @timeout seconds, after @silence seconds without
    output if set, or when @stop(chunks) returns True; @log, a binary
    file, gets a copy of the output."""
    chunks = []
    why = None
    start = last = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        while True:
            now = time.monotonic()
            if now - start > timeout:
                why = '(timed out)'
            elif silence and now - last > silence:
                why = '(silent for %d s: killed)' % silence
            elif stop and stop(chunks):
                why = '(stopped)'
            if why:
                break
            if not sel.select(timeout=min(0.05 if stop else 1,
                                          start + timeout - now)):
                continue
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:
                break
            last = time.monotonic()
            chunks.append((last, data))
            if log:
                log.write(data)
                log.flush()
    except BaseException:
        proc.kill()
        raise
    finally:
        sel.close()
        if why and proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    return (None if why else proc.returncode), chunks, why


def boot(argv, timeout=None, silence=None):
    """Runs a VMM command line to completion; returns a GuestRun.
    @timeout (default BOOT_TIMEOUT) only guards against a hung guest.
    @silence, if set, kills a guest that has printed nothing for that many
    seconds (GuestRun.silent is then True): a nested L1 guest that prints
    a heartbeat (kvfio_image.L1_HEARTBEAT) and stops printing it is
    wedged, and waiting for @timeout only makes CI slower.  With
    GUESTBOOT_LIVE_LOG=path the output is also appended to that file as
    it comes, so that a long nested run can be followed."""
    live = os.environ.get('GUESTBOOT_LIVE_LOG')
    log = open(live, 'ab') if live else None
    try:
        rc, chunks, why = stream(argv, timeout or BOOT_TIMEOUT, silence,
                                 log=log)
    finally:
        if log:
            log.close()
    out = b''.join(c for _, c in chunks).decode('utf-8', 'replace')
    out = out.replace('\r', '')
    if why:
        run = GuestRun(argv, None, out + '\n' + why)
        run.silent = why.startswith('(silent')
        return run
    return GuestRun(argv, rc, out)


class GuestTestCase(unittest.TestCase):
    def assertPassed(self, run, min_tests=1):
        """Exit status 1 and a SUMMARY with no failures and no FAIL line."""
        summary = run.summary()
        self.assertIsNotNone(summary, 'no SUMMARY line\n' + run.describe())
        tests, failures, _ = summary
        self.assertEqual(failures, 0, run.describe())
        self.assertGreaterEqual(tests, min_tests, run.describe())
        self.assertNotIn('FAIL:', run.output, run.describe())
        self.assertEqual(run.returncode, EXIT_PASS, run.describe())

    def assertLine(self, run, line):
        self.assertIn(line, run.output.splitlines(), run.describe())


def main():
    """unittest.main(), but exit 77 (meson: skipped) if every test skipped."""
    prog = unittest.main(exit=False, verbosity=2)
    res = prog.result
    if not res.wasSuccessful():
        return 1
    # A skipped setUpClass counts as one skip and no test run.
    if res.skipped and len(res.skipped) >= res.testsRun:
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main())
