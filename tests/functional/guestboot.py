# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the tests/guest images and check what they report.

A guest prints PASS/FAIL/SKIP lines and a final
"SUMMARY: N tests, M unexpected failures" on its serial port, then writes
its exit code to the isa-debug-exit port 0xf4.  The VMM exits with
(code << 1) | 1, so a passing guest makes the VMM exit 1, report failures
exit 3 and an unexpected exception exit 5 (see tests/guest/lib/libguest.h).
"""

import os
import re
import shutil
import subprocess
import sys
import threading
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


def kvm_usable():
    return os.access('/dev/kvm', os.R_OK | os.W_OK)


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


def boot(argv, timeout=None):
    """Runs a VMM command line to completion; returns a GuestRun.
    @timeout (default BOOT_TIMEOUT) only guards against a hung guest."""
    live = os.environ.get('GUESTBOOT_LIVE_LOG')
    if live:
        return _boot_live(argv, timeout or BOOT_TIMEOUT, live)
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT,
                              timeout=timeout or BOOT_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        out = (e.output or b'').decode('utf-8', 'replace')
        return GuestRun(argv, None, out + '\n(timed out)')
    return GuestRun(argv, proc.returncode,
                    proc.stdout.decode('utf-8', 'replace').replace('\r', ''))


def _boot_live(argv, timeout, path):
    """As boot(), also appending the output to @path as it comes, so that
    a long nested run can be followed (GUESTBOOT_LIVE_LOG=path)."""
    chunks = []
    with open(path, 'ab') as log, \
            subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT) as proc:
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            for data in iter(lambda: proc.stdout.read1(65536), b''):
                chunks.append(data)
                log.write(data)
                log.flush()
            proc.wait()
        finally:
            expired = not timer.is_alive()
            timer.cancel()
    out = b''.join(chunks).decode('utf-8', 'replace')
    if expired:
        return GuestRun(argv, None, out + '\n(timed out)')
    return GuestRun(argv, proc.returncode, out.replace('\r', ''))


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
