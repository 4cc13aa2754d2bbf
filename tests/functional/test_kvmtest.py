#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""kvmtest.py's decisions, without booting anything: which way a KVM test
runs for a given probe verdict, that CI=true turns "no way" into a
failure, which tests the shared L1 guest takes from meson's introspection
and the `meson test` command line, that hiding /dev/kvm hides it, and
that scripts/ci-summary lists each KVM test with its way.  Seconds.
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kvfio_image  # noqa: E402
import kvmtest  # noqa: E402

SRC = os.path.dirname(os.path.dirname(HERE))


def verdict(**ok):
    v = {'where': 'host', 'seconds': 0.0, 'why': {}, 'detail': {}}
    for need in kvmtest.NEEDS:
        v[need] = ok.get(need, False)
        v['why'][need] = '%s %s' % (need, 'works' if v[need] else 'fails')
    return v


class Environ:
    """Sets/clears environment variables for a with-block."""

    def __init__(self, **env):
        self.env = env

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.env}
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


CLEAN = {'CONDUIT_KVM_IN_L1': None, 'CONDUIT_KVM_WAY': None, 'CI': None,
         'CONDUIT_HIDE_KVM': None}


class L1Watchdog(unittest.TestCase):
    """kvfio_image.boot_l1() on stand-in guests (shell commands)."""

    def test_a_silent_guest_is_booted_again_then_given_up(self):
        with mock.patch.object(kvfio_image, 'L1_SILENCE', 1), \
                contextlib.redirect_stdout(io.StringIO()) as log:
            run = kvfio_image.boot_l1(['sh', '-c', 'echo up; sleep 5'], 30)
        self.assertTrue(run.silent)
        self.assertIsNone(run.returncode)
        self.assertEqual(run.l1_hangs, kvfio_image.L1_ATTEMPTS - 1)
        self.assertEqual(log.getvalue().count('NESTED-L1-HANG:'),
                         kvfio_image.L1_ATTEMPTS - 1)
        self.assertIn('NESTED-L1-HANG | up', log.getvalue())

    def test_a_guest_that_keeps_printing_is_left_alone(self):
        with mock.patch.object(kvfio_image, 'L1_SILENCE', 1):
            run = kvfio_image.boot_l1(
                ['sh', '-c', 'for i in 1 2 3 4; do echo alive; sleep 0.5; '
                 'done; exit 7'], 30)
        self.assertFalse(run.silent)
        self.assertEqual(run.returncode, 7)
        self.assertEqual(run.l1_hangs, 0)
        self.assertEqual(run.output.split(), ['alive'] * 4)


    def test_a_soft_lockup_reruns_only_what_failed(self):
        lockup = ('[  912.5] watchdog: BUG: soft lockup - CPU#0 stuck for '
                  '226s! [CPU 0/KVM:851]')
        run = mock.Mock(silent=False, output='NESTED-ALIVE\n' + lockup +
                        '\nNESTED-ALIVE\n')
        self.assertEqual(kvfio_image.l1_stalls(run.output), [
            'BUG: soft lockup - CPU#0 stuck for 226s! [CPU 0/KVM:851]'])
        self.assertEqual(kvfio_image.l1_rerun_reason(run, ['a']), 'stall')
        # Everything passed despite the lockup: nothing to run again.
        self.assertIsNone(kvfio_image.l1_rerun_reason(run, []))
        # A failure without a lockup is the case's own.
        run.output = 'NESTED-ALIVE\nrcu: INFO: a stall elsewhere\n'
        self.assertIsNone(kvfio_image.l1_rerun_reason(run, ['a']))
        run.silent = True
        self.assertEqual(kvfio_image.l1_rerun_reason(run, []), 'hang')
        with contextlib.redirect_stdout(io.StringIO()) as log:
            run.output = lockup
            kvfio_image.report_l1_stall(run, ['test_virt_install_xml'])
        self.assertIn('NESTED-L1-STALL', log.getvalue())
        self.assertIn('CPU#0 stuck for 226s', log.getvalue())
        self.assertIn('test_virt_install_xml', log.getvalue())


class Way(unittest.TestCase):
    def test_direct_where_the_verdict_allows(self):
        with Environ(**CLEAN):
            how, why = kvmtest.way('pvh', verdict(api=True, pvh=True))
        self.assertEqual(how, 'direct')
        self.assertIn('pvh works', why)

    def test_paravirtual_kvm_runs_pvh_direct_linux_nested(self):
        v = verdict(api=True, pvh=True, firmware=True)
        with Environ(**CLEAN), \
                mock.patch.object(kvmtest, 'nested_unavailable',
                                  return_value=None):
            self.assertEqual(kvmtest.way('pvh', v)[0], 'direct')
            self.assertEqual(kvmtest.way('firmware', v)[0], 'direct')
            how, why = kvmtest.way('linux', v)
        self.assertEqual(how, 'nested')
        self.assertIn('linux fails', why)

    def test_distro_needs_firmware_and_linux(self):
        # The paravirtual KVM runs SeaBIOS but not the kernel GRUB loads:
        # test_firmware must go nested there, not fail direct.
        for linux, firmware in ((False, True), (True, False), (True, True)):
            with mock.patch.object(kvmtest, 'probe_api',
                                   return_value=(True, 'api')), \
                    mock.patch.object(kvmtest, 'probe_pvh',
                                      return_value=(True, 'pvh')), \
                    mock.patch.object(kvmtest, 'probe_linux',
                                      return_value=(linux, 'linux', {})), \
                    mock.patch.object(kvmtest, 'probe_firmware',
                                      return_value=(firmware, 'fw')), \
                    mock.patch.object(kvmtest, 'probe_cpuid',
                                      return_value=(True, 'cpuid')), \
                    Environ(**CLEAN):
                v = kvmtest.run_probe('/bin/true', '/nonexistent')
            self.assertEqual(v['distro'], linux and firmware, v)
            self.assertIn('distro', kvmtest.describe(v))

    def test_no_kvm_goes_nested_or_nowhere(self):
        with Environ(**CLEAN):
            with mock.patch.object(kvmtest, 'nested_unavailable',
                                   return_value=None):
                self.assertEqual(kvmtest.way('api', verdict())[0], 'nested')
            with mock.patch.object(kvmtest, 'nested_unavailable',
                                   return_value='no qemu'):
                how, why = kvmtest.way('api', verdict())
        self.assertIsNone(how)
        self.assertIn('no qemu', why)

    def test_inside_l1_never_nests_again(self):
        with Environ(**dict(CLEAN, CONDUIT_KVM_IN_L1='1')), \
                mock.patch.object(kvmtest, 'nested_unavailable',
                                  return_value=None):
            self.assertEqual(kvmtest.way('pvh', verdict(pvh=True))[0],
                             'direct')
            self.assertIsNone(kvmtest.way('pvh', verdict())[0])

    def test_forced_ways(self):
        with Environ(**dict(CLEAN, CONDUIT_KVM_WAY='nested')), \
                mock.patch.object(kvmtest, 'nested_unavailable',
                                  return_value=None):
            self.assertEqual(kvmtest.way('pvh', verdict(pvh=True))[0],
                             'nested')
        with Environ(**dict(CLEAN, CONDUIT_KVM_WAY='direct')), \
                mock.patch.object(kvmtest, 'nested_unavailable',
                                  return_value=None):
            self.assertIsNone(kvmtest.way('pvh', verdict())[0])

    def test_unknown_need_is_an_error(self):
        with self.assertRaises(ValueError):
            kvmtest.way('vfio', verdict())

    def test_no_way_skips_except_in_ci(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            with Environ(**CLEAN):
                self.assertEqual(kvmtest.no_way('t', 'why'), kvmtest.SKIP)
            with Environ(**dict(CLEAN, CI='true')):
                self.assertEqual(kvmtest.no_way('t', 'why'), 1)
        self.assertIn('KVM-WAY: t none: why (skipped', out.getvalue())
        self.assertIn('CI=true makes that a failure', out.getvalue())


class Probe(unittest.TestCase):
    def test_hidden_kvm_is_no_kvm(self):
        with Environ(CONDUIT_HIDE_KVM='1'):
            ok, why = kvmtest.probe_api()
        self.assertFalse(ok)
        self.assertIn('hidden', why)

    def test_without_kvm_nothing_is_probed_further(self):
        with Environ(CONDUIT_HIDE_KVM='1'):
            v = kvmtest.run_probe('/nonexistent/conduit', '/nonexistent')
        for need in kvmtest.NEEDS:
            self.assertFalse(v[need], need)
        self.assertIn('api no', kvmtest.describe(v))

    def test_verdict_cached_for_the_run(self):
        with tempfile.TemporaryDirectory() as tmp, \
                Environ(CONDUIT_KVM_STATE_DIR=tmp,
                        CONDUIT_KVM_RUN_ID='run-a', CONDUIT_HIDE_KVM='1'):
            kvmtest._VERDICT = None
            first = kvmtest.probe('/nonexistent', tmp, quiet=True)
            kvmtest._VERDICT = None
            again = kvmtest.probe('/nonexistent', tmp, quiet=True)
            self.assertFalse(first['cached'])
            self.assertTrue(again['cached'])
            self.assertTrue(os.path.exists(os.path.join(tmp, 'run-a',
                                                        'probe.json')))
            kvmtest._VERDICT = None
            os.environ['CONDUIT_KVM_RUN_ID'] = 'run-b'
            self.assertFalse(kvmtest.probe('/nonexistent', tmp,
                                           quiet=True)['cached'])
            kvmtest._VERDICT = None

    def test_firmware_image_starts_at_the_reset_vector(self):
        img = kvmtest.firmware_image()
        self.assertEqual(len(img), 0x10000)
        # mov al, 0x2a; out 0xf4, al: the debug-exit value 0x2a.
        self.assertEqual(img[0xfff0:0xfff4], bytes.fromhex('B02AE6F4'))

    def test_linux_probe_loop_is_the_budgeted_size(self):
        src = kvmtest.LINUX_PROBE_ASM.replace(
            '@LOOPS@', str(kvmtest.LINUX_CPL0_INSNS // 2))
        self.assertIn('mov $5000000, %ecx', src)
        for step in 'ABCDEF':
            self.assertIn("$'%s'" % step, src)


class SharedL1Jobs(unittest.TestCase):
    def intro(self, tmp):
        tests = [
            {'name': 'test_kvm_a', 'cmd': ['/x/python3', 'a.py'],
             'env': {'CONDUIT_KVM_NEEDS': 'pvh'}, 'suite': ['conduit:functional'],
             'timeout': 10, 'workdir': None},
            {'name': 'test_kvm_linux', 'cmd': ['/x/python3', 'l.py'],
             'env': {'CONDUIT_KVM_NEEDS': 'linux'},
             'suite': ['conduit:functional'], 'timeout': 10, 'workdir': None},
            {'name': 'test-kvm-unit', 'cmd': ['/x/python3', 'kvmtest.py'],
             'env': {'CONDUIT_KVM_NEEDS': 'api'}, 'suite': ['conduit:unit'],
             'timeout': 10, 'workdir': None},
            {'name': 'test-other', 'cmd': ['/bin/true'], 'env': {},
             'suite': ['conduit:unit'], 'timeout': 10, 'workdir': None},
        ]
        os.makedirs(os.path.join(tmp, 'meson-info'))
        with open(os.path.join(tmp, 'meson-info', 'intro-tests.json'),
                  'w') as f:
            json.dump(tests, f)

    def jobs(self, tmp, argv, v, me='test_kvm_a'):
        with mock.patch.object(kvmtest, '_meson_parent', return_value=42), \
                mock.patch.object(kvmtest, '_proc_cmdline',
                                  return_value=argv), \
                Environ(CI='true', CONDUIT_KVM_WAY=None):
            jobs = kvmtest.nested_jobs(tmp, me, v)
        return [j['name'] for j in jobs], jobs

    def test_every_kvm_test_that_cannot_run_here(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.intro(tmp)
            names, jobs = self.jobs(tmp, ['meson', 'test', '-C', tmp],
                                    verdict())
            self.assertEqual(names, ['test_kvm_a', 'test_kvm_linux',
                                     'test-kvm-unit'])
            # The interpreter, not a shim; CI passed on; the build dir.
            self.assertEqual(jobs[0]['cmd'][0],
                             os.path.realpath(sys.executable))
            self.assertEqual(jobs[0]['env']['CI'], 'true')
            self.assertEqual(jobs[0]['workdir'], tmp)
            # A paravirtual KVM: only the Linux one goes to L1.
            names, _ = self.jobs(tmp, ['meson', 'test'],
                                 verdict(api=True, pvh=True),
                                 me='test_kvm_linux')
            self.assertEqual(names, ['test_kvm_linux'])

    def test_what_meson_was_asked_for(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.intro(tmp)
            names, _ = self.jobs(tmp, ['meson', 'test', '-C', tmp,
                                       'test_kvm_a', 'test-kvm-unit'],
                                 verdict())
            self.assertEqual(names, ['test_kvm_a', 'test-kvm-unit'])
            names, _ = self.jobs(tmp, ['meson', 'test', '--suite', 'unit'],
                                 verdict(), me='test-kvm-unit')
            self.assertEqual(names, ['test-kvm-unit'])
            names, _ = self.jobs(tmp, ['meson', 'test', '--no-suite',
                                       'unit', '--num-processes', '2'],
                                 verdict())
            self.assertEqual(names, ['test_kvm_a', 'test_kvm_linux'])


class Retry(unittest.TestCase):
    def test_a_hang_fails_one_test_and_reboots_for_the_rest(self):
        jobs = [{'name': n} for n in ('a', 'b', 'c')]
        with tempfile.TemporaryDirectory() as out:
            console = os.path.join(out, 'l1-console.log')
            with open(console, 'w') as f:
                f.write('KVMTEST-JOB-START b\nsoft lockup\n')
            with open(os.path.join(out, 'a.json'), 'w') as f:
                json.dump({'name': 'a', 'rc': 0}, f)
            first = {'console': console, 'jobs': ['a', 'b', 'c'],
                     'running': 'b'}
            booted = []

            def boot(build, rest, outdir, attempt=1):
                booted.append(([j['name'] for j in rest], attempt))
                return {'console': console, 'finished': True}
            with mock.patch.object(kvmtest, 'boot_shared_l1', boot), \
                    contextlib.redirect_stdout(io.StringIO()):
                summary = kvmtest._retry_after_a_stop('/b', jobs, out, first)
            with open(os.path.join(out, 'b.json')) as f:
                hung = json.load(f)
        self.assertEqual(booted, [(['c'], 2)])
        self.assertEqual(hung['rc'], 1)
        self.assertIn('soft lockup', hung['output'])
        self.assertEqual(summary['jobs'], ['a', 'b', 'c'])

    def test_a_finished_boot_is_not_repeated(self):
        with mock.patch.object(kvmtest, 'boot_shared_l1') as boot:
            kvmtest._retry_after_a_stop('/b', [{'name': 'a'}], '/nowhere',
                                        {'finished': True})
        boot.assert_not_called()


class CiSummary(unittest.TestCase):
    def test_lists_each_kvm_test_with_its_way(self):
        entries = [
            {'name': 'test_kvm_vmm', 'result': 'OK',
             'stdout': 'x\nKVM-WAY-IN-L1: test_kvm_vmm direct 3.0s\n'
                       'KVM-WAY: test_kvm_vmm nested 31.5s rc=0\n'},
            {'name': 'test-kvm-irq', 'result': 'OK',
             'stdout': '# KVM-WAY: test-kvm-irq direct 0.4s\nok 1\n'},
            {'name': 'test-msix', 'result': 'OK', 'stdout': 'ok 1\n'},
        ]
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, 'build', 'meson-logs', 'testlog.json')
            os.makedirs(os.path.dirname(log))
            with open(log, 'w') as f:
                for e in entries:
                    f.write(json.dumps(e) + '\n')
            out = subprocess.run([sys.executable, os.path.join(
                SRC, 'scripts', 'ci-summary'), log], stdout=subprocess.PIPE,
                universal_newlines=True).stdout
        lines = [line.split() for line in out.splitlines()
                 if line.startswith('  test')]
        self.assertEqual([line[:3] for line in lines],
                         [['test_kvm_vmm', 'nested', '31.5s'],
                          ['test-kvm-irq', 'direct', '0.4s']])
        self.assertIn('Summary: 3 passed, 0 failed, 0 skipped', out)


if __name__ == '__main__':
    unittest.main(verbosity=2)
