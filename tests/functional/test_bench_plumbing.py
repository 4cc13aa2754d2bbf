#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The plumbing of `make bench` (scripts/bench), without running it.

No guest boots and nothing is timed: the benchmark itself stays out of
make check.  Checked here: the --nested option is stripped from the
arguments handed to the L1 guest, the L1 guest's shell reports every
command's exit status, the result CSVs carry the environment label on
every row with medians and QEMU ratios paired by layout, QD and repeat,
and without /dev/kvm --nested=off says so and exits 0.
"""
import csv
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'scripts',
                     'bench')
sys.path.insert(0, BENCH)
import nested  # noqa: E402
import nvmebench  # noqa: E402
import stats  # noqa: E402


def load_script(name):
    """A bench script without a .py suffix, as a module."""
    loader = importlib.machinery.SourceFileLoader(
        'bench_' + name.replace('-', '_'), os.path.join(BENCH, name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def fake_run(scenario, vmm, layout, qd, repeat, iops):
    r = {m: None for m in load_script('run').METRICS}
    r.update(scenario=scenario, vmm=vmm, layout=layout, qd=qd,
             repeat=repeat, iops=iops, ios=100, p50_us=10.0 * repeat,
             exits_per_io=0.0 if vmm == 'conduit' else None)
    return r


class BenchPlumbingTest(unittest.TestCase):
    def test_strip_nested(self):
        self.assertEqual(nested.strip_nested(
            ['--build-dir', 'b', '--nested', 'on', '--repeat', '2',
             '--nested=auto', '--only', 'db']),
            ['--build-dir', 'b', '--repeat', '2', '--only', 'db'])

    def test_l1_script_reports_each_exit_status(self):
        script = nested.l1_script(HERE, [['sh', '-c', 'exit 3'],
                                         ['echo', "it's here"], ['true']])
        out = subprocess.run(['/bin/sh', '-c', script],
                             stdout=subprocess.PIPE, check=True).stdout
        self.assertEqual(out.decode().splitlines(),
                         ['BENCH-EXIT 0 3', "it's here", 'BENCH-EXIT 1 0',
                          'BENCH-EXIT 2 0'])

    def test_label(self):
        old = os.environ.pop(nested.LABEL_ENV, None)
        try:
            self.assertEqual(nested.label(), nested.LABEL_HOST)
            self.assertFalse(nested.is_nested())
            os.environ[nested.LABEL_ENV] = nested.LABEL_NESTED
            self.assertEqual(nested.label(), 'nested: L1 = QEMU TCG')
            self.assertTrue(nested.is_nested())
        finally:
            os.environ.pop(nested.LABEL_ENV, None)
            if old is not None:
                os.environ[nested.LABEL_ENV] = old

    def test_csv_rows_labelled_medians_and_qemu_ratio(self):
        run = load_script('run')
        runs = []
        for rep, (a, q) in enumerate([(100, 50), (300, 100), (200, 400)]):
            runs.append(fake_run('db-default', 'conduit', 'db', 1, rep, a))
            runs.append(fake_run('qemu-db', 'qemu', 'db', 1, rep, q))
        runs.append(fake_run('bar4-default', 'conduit', 'bar4', 1, 0, 400))
        run.pair_with_qemu(runs)
        self.assertEqual([r['vs_qemu'] for r in runs],
                         [2.0, None, 3.0, None, 0.5, None, None])
        keys = ['db-default', 'qemu-db', 'bar4-default']
        summary = run.summarize(runs, keys, [1])
        self.assertEqual(summary['db-default', 1]['iops'], 200)
        self.assertEqual(summary['db-default', 1]['vs_qemu'], 2.0)
        self.assertEqual(summary['qemu-db', 1]['iops'], 100)
        self.assertIsNone(summary['qemu-db', 1]['exits_per_io'])
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, 'results.csv')
            summary_csv = os.path.join(tmp, 'summary.csv')
            run.write_results_csv(results, nested.LABEL_NESTED, runs)
            run.write_summary_csv(summary_csv, nested.LABEL_NESTED, keys,
                                  [1], summary)
            with open(results) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), len(runs))
            self.assertTrue(all(r['environment'] == nested.LABEL_NESTED
                                for r in rows))
            with open(summary_csv) as f:
                rows = {r['scenario']: r for r in csv.DictReader(f)}
        self.assertEqual(set(rows), set(keys))
        self.assertTrue(all(r['environment'] == nested.LABEL_NESTED
                            for r in rows.values()))
        self.assertEqual(rows['db-default']['iops_vs_reference'], '0.5')
        self.assertEqual(rows['db-default']['iops_vs_qemu'], '2.0')
        self.assertEqual(rows['qemu-db']['iops_vs_qemu'], '')

    def test_scripts_parse_their_options(self):
        for name in ('run', 'virtio-blk', 'all'):
            out = subprocess.run([sys.executable, os.path.join(BENCH, name),
                                  '--help'], stdout=subprocess.PIPE,
                                 check=True).stdout.decode()
            self.assertIn('--nested {auto,on,off}', out, name)

    def test_no_kvm_and_nested_off_measures_nothing(self):
        # Hidden (CONDUIT_HIDE_KVM=1), so that this runs on every machine,
        # with or without a usable /dev/kvm.
        env = dict(os.environ, CONDUIT_HIDE_KVM='1')
        with tempfile.TemporaryDirectory() as tmp:
            for name in ('run', 'virtio-blk', 'all'):
                proc = subprocess.run(
                    [sys.executable, os.path.join(BENCH, name),
                     '--build-dir', tmp, '--nested=off'],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    env=env)
                out = proc.stdout.decode()
                self.assertEqual(proc.returncode, 0, out)
                self.assertIn('Nothing measured', out, name)
                self.assertEqual(os.listdir(tmp), [], name)


class BenchStatsTest(unittest.TestCase):
    """scripts/bench/stats.py on fixed inputs."""

    def test_percentile_is_nearest_rank(self):
        a = list(range(1, 101))
        self.assertEqual(stats.percentile(a, 50), 50)
        self.assertEqual(stats.percentile(a, 90), 90)
        self.assertEqual(stats.percentile(a, 99), 99)
        self.assertEqual(stats.percentile([7, 3, 5], 50), 5)
        self.assertEqual(stats.percentile([4], 99), 4)
        self.assertIsNone(stats.percentile([], 50))

    def test_trimmed_mean_ignores_the_tails(self):
        # 80 samples of 10 us, 10 tiny ones, 10 descheduled ones of 5 ms.
        a = [10.0] * 80 + [1.0] * 10 + [5000.0] * 10
        self.assertEqual(stats.trimmed_mean(a), 10.0)
        self.assertGreater(sum(a) / len(a), 500)
        # The lowest and the highest tenth of 1..10 are 1 and 10.
        self.assertEqual(stats.trimmed_mean(range(1, 11)), 5.5)
        self.assertEqual(stats.trimmed_mean([4, 100]), 52)
        self.assertEqual(stats.trimmed_mean([3]), 3)
        self.assertIsNone(stats.trimmed_mean([]))

    def test_trimmed_iops_is_littles_law(self):
        self.assertEqual(stats.trimmed_iops(10000, 1), 100000)
        self.assertEqual(stats.trimmed_iops(100000, 32), 320000)
        self.assertIsNone(stats.trimmed_iops(None, 1))
        self.assertIsNone(stats.trimmed_iops(0, 1))

    def test_spread(self):
        s = stats.spread([100, 300, 200, None])
        self.assertEqual(s, {'n': 3, 'median': 200, 'min': 100, 'max': 300,
                             'spread': 1.0})
        self.assertEqual(stats.spread([None])['median'], None)
        self.assertEqual(stats.fmt_spread(s), '200 ±50%')
        self.assertEqual(stats.fmt_spread(stats.spread([5])), '5')

    def test_ratio_interval_pairs_by_repeat(self):
        num = {0: 100, 1: 300, 2: 200, 3: 50}
        den = {0: 50, 1: 100, 2: 400}
        self.assertEqual(stats.paired_ratios(num, den), [2.0, 3.0, 0.5])
        self.assertEqual(stats.ratio_interval(num, den), (2.0, 0.5, 3.0))
        self.assertEqual(stats.ratio_interval({0: 1}, {1: 1}),
                         (None, None, None))
        self.assertEqual(stats.ratio_interval({0: 1}, {0: 0}),
                         (None, None, None))
        self.assertEqual(stats.fmt_interval(2.0, 0.5, 3.0),
                         '2.00 [0.50-3.00]')
        self.assertEqual(stats.fmt_interval(None, None, None), '-')

    def test_bootstrap_brackets_the_ratio_and_is_seeded(self):
        a, b = [200, 210, 190, 205], [100, 98, 103, 101]
        lo, hi = stats.bootstrap_ratio(a, b)
        self.assertLessEqual(lo, 2.0)
        self.assertGreaterEqual(hi, 2.0)
        self.assertGreater(lo, 1.7)
        self.assertLess(hi, 2.3)
        self.assertEqual(stats.bootstrap_ratio(a, b), (lo, hi))
        self.assertEqual(stats.bootstrap_ratio([5, 5], [1, 1]), (5.0, 5.0))
        self.assertEqual(stats.bootstrap_ratio([], b), (None, None))

    def test_per_io(self):
        self.assertEqual(stats.per_io(50, 100), 0.5)
        self.assertIsNone(stats.per_io(None, 100))
        self.assertIsNone(stats.per_io(5, 0))


class BenchPinningTest(unittest.TestCase):
    def test_pin_plan_separates_vcpu_and_device_side(self):
        p = nvmebench.pin_plan([3, 1])
        self.assertEqual((p['vcpu'], p['other']), ({1}, {3}))
        self.assertEqual(p['text'],
                         'vCPU on CPU 1, server/VMM threads on CPU 3')
        p = nvmebench.pin_plan([0])
        self.assertIsNone(p['vcpu'])
        self.assertEqual(p['text'], 'not pinned (1 CPU)')

    def test_result_line_gives_the_trimmed_throughput(self):
        result = nvmebench.parse_result(
            'noise\nRESULT iops=900 p50_ns=1000 p99_ns=9000 ios=100 qd=4 '
            'queues=2 min_ns=1 max_ns=99999 avg_ns=5000 p90_ns=2000 '
            'tmean_ns=8000 irqs=0 errors=0\n')
        n = nvmebench.io_numbers(result, 100000, 20000, 30000)
        self.assertEqual(n['iops_trim'], 1e6)       # 8 in flight / 8 us
        self.assertEqual(n['iops'], 900)
        self.assertEqual((n['p50_us'], n['p90_us'], n['p99_us']),
                         (1.0, 2.0, 9.0))
        self.assertEqual(n['cpu_us_per_io'], 1.5)

    def test_the_scripts_find_what_they_call(self):
        # Every helper the bench scripts call is there (a lost one made
        # every NVMe run of a whole make bench fail).
        for name in ('start_server', 'run_guest', 'run_qemu', 'watch_peer',
                     'pin_vmm', 'pin_threads', 'kvm_vm_stat', 'stat_delta',
                     'io_numbers', 'parse_result', 'qemu_version',
                     'kill_leftovers'):
            self.assertTrue(callable(getattr(nvmebench, name, None)), name)
        vb = load_script('virtio-blk').vb
        for name in ('measure', 'run_qemu', 'run_guest', 'make_image',
                     'make_qcow2', 'blockdev_args', 'process_stat_ns'):
            self.assertTrue(callable(getattr(vb, name, None)), name)

    def test_migration_side_by_side(self):
        # scripts/bench/migration on a 16 MiB guest, once: a row per case
        # for Conduit (with its vfio-user NVMe) and for the peer (Debian's
        # QEMU here), then their ratios.  Its numbers are not looked at.
        conduit = os.environ.get('CONDUIT_BINARY', '')
        peer = os.environ.get('CONDUIT_PEER_QEMU',
                              '/usr/bin/qemu-system-x86_64')
        if not os.access(conduit, os.X_OK) or not os.access(peer, os.X_OK):
            self.skipTest('CONDUIT_BINARY not built or no %s (scripts/'
                          'install-deps installs qemu-system-x86)' % peer)
        proc = subprocess.run(
            [sys.executable, os.path.join(BENCH, 'migration'),
             '--build-dir', os.path.dirname(conduit), '--runs', '1',
             '--mib', '16', '--peer', peer],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 0, out)
        self.assertRegex(out, r'peer: QEMU emulator version')
        self.assertRegex(out, r'conduit: with a vfio-user-pci NVMe')
        for case in ('idle-zero', 'idle-full', 'dirtying'):
            for vmm in ('conduit', 'peer'):
                self.assertRegex(out, r'(?m)^%s +%s +\d+ +\d+' % (case, vmm))
            # A ratio is n/a where the peer's figure is 0 (below the
            # resolution of its clock).
            self.assertRegex(out, r'(?m)^%s( +([\d.]+|n/a)){3}$' %
                             case)
        self.assertIn('conduit / peer', out)

    def test_kvm_debugfs_absent_is_none(self):
        old = nvmebench.KVM_DEBUGFS
        with tempfile.TemporaryDirectory() as tmp:
            try:
                nvmebench.KVM_DEBUGFS = os.path.join(tmp, 'none')
                self.assertIsNone(nvmebench.kvm_vm_stat(1234))
                nvmebench.KVM_DEBUGFS = tmp
                for d, v in (('1234-11', 5), ('1234-12', 7), ('99-1', 50)):
                    os.mkdir(os.path.join(tmp, d))
                    for name in ('mmio_exits', 'exits'):
                        with open(os.path.join(tmp, d, name), 'w') as f:
                            f.write('%d\n' % (v * (10 if name == 'exits'
                                                    else 1)))
                self.assertEqual(nvmebench.kvm_vm_stat(1234),
                                 {'mmio_exits': 12, 'exits': 120})
                self.assertEqual(nvmebench.stat_delta(
                    {'mmio_exits': 12}, {'mmio_exits': 2}, 'mmio_exits'),
                    10)
                self.assertIsNone(nvmebench.stat_delta(None, {}, 'exits'))
            finally:
                nvmebench.KVM_DEBUGFS = old


class VirtioBlkBenchPlumbingTest(unittest.TestCase):
    def fake(self, key, row, rep, iops):
        vb = load_script('virtio-blk')
        group, mode, qd, op, fmt = row
        r = {m: None for m in vb.METRICS}
        r.update(key=key, group=group, mode=mode, qd=qd, op=op, fmt=fmt,
                 repeat=rep, ios=100, iops_trim=iops, iops=iops,
                 p50_us=10.0, cpu_us_per_io=3.0, exits_per_io=0.0)
        return r

    def test_rows_peers_and_ratios(self):
        vb = load_script('virtio-blk')
        plan = vb.plan_runs(['perf', 'qcow2'])
        perf = [r for r in plan if r['group'] == 'perf']
        # QD 1/16 x irq/poll x (conduit, qemu, qemu-iothread) + trapped irq
        self.assertEqual(len(perf), 2 * (2 * 3 + 1))
        self.assertEqual(set(r['key'] for r in perf if r['mode'] == 'poll'),
                         {'conduit', 'qemu', 'qemu-iothread'})
        q = [r for r in plan if r['group'] == 'qcow2']
        self.assertEqual(set((r['qd'], r['op'], r['fmt']) for r in q),
                         set((qd, op, fmt) for qd in (1, 32)
                             for op in ('read', 'write')
                             for fmt in ('raw', 'qcow2')))
        self.assertFalse(any(r['key'].startswith('qemu')
                             for r in vb.plan_runs(['perf'], peer=False)))
        row = ('perf', 'irq', 1, 'read', 'raw')
        qrow = ('qcow2', 'irq', 1, 'read', 'qcow2')
        rrow = ('qcow2', 'irq', 1, 'read', 'raw')
        runs = []
        for rep, (c, p) in enumerate([(100, 50), (300, 100), (200, 400)]):
            runs.append(self.fake('conduit', row, rep, c))
            runs.append(self.fake('qemu', row, rep, p))
            runs.append(self.fake('conduit', qrow, rep, c / 2))
            runs.append(self.fake('conduit', rrow, rep, c))
        summary = vb.summarize(runs)
        (m, lo, hi), (blo, bhi) = vb.ratios(summary, row, 'conduit', 'qemu')
        self.assertEqual((m, lo, hi), (2.0, 0.5, 3.0))
        self.assertLessEqual(blo, bhi)
        self.assertEqual(summary[row, 'conduit']['iops_trim']['median'], 200)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'virtio-blk.csv')
            vb.write_summary_csv(path, nested.LABEL_NESTED, 'QEMU 7.2',
                                 'vCPU on CPU 0, server/VMM threads on CPU 1',
                                 vb.rows_in_order(runs),
                                 ['conduit', 'qemu'], summary)
            with open(path) as f:
                rows = list(csv.DictReader(f))
        by = {(r['scenario'], r['group'], r['fmt']): r for r in rows}
        c = by['conduit', 'perf', 'raw']
        self.assertEqual((c['vs_qemu'], c['vs_qemu_min'], c['vs_qemu_max']),
                         ('2.0', '0.5', '3.0'))
        self.assertEqual(c['peer'], 'QEMU 7.2')
        self.assertEqual(c['environment'], nested.LABEL_NESTED)
        self.assertTrue(c['pinning'].startswith('vCPU on CPU 0'))
        self.assertEqual(by['qemu', 'perf', 'raw']['vs_qemu'], '')
        self.assertEqual(by['conduit', 'qcow2', 'qcow2']['qcow2_vs_raw'],
                         '0.5')

    def test_process_cpu_keeps_exited_threads(self):
        import threading
        vb = load_script('virtio-blk').vb

        def burn():
            t = time.process_time()
            while time.process_time() - t < 0.3:
                pass
        before = vb.process_stat_ns(os.getpid())
        t = threading.Thread(target=burn)
        t.start()
        t.join()
        # The thread is gone; its CPU time still counts for the process.
        self.assertGreaterEqual(vb.process_stat_ns(os.getpid()) - before,
                                200000000)
        self.assertIsNone(vb.process_stat_ns(2 ** 22 + 1))

    def test_runs_csv_round_trip_for_replot(self):
        vb = load_script('virtio-blk')
        row = ('perf', 'poll', 16, 'read', 'raw')
        runs = [self.fake('conduit', row, 0, 1234.5),
                self.fake('qemu', row, 0, 1000)]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'virtio-blk-runs.csv')
            vb.write_runs_csv(path, nested.LABEL_NESTED, 'QEMU 7.2', 'pin',
                              runs)
            env, peer, pin, back = vb.read_runs_csv(path)
        self.assertEqual((env, peer, pin),
                         (nested.LABEL_NESTED, 'QEMU 7.2', 'pin'))
        self.assertEqual([(r['key'], r['qd'], r['mode'], r['iops_trim'])
                          for r in back],
                         [('conduit', 16, 'poll', 1234.5),
                          ('qemu', 16, 'poll', 1000.0)])
        run = load_script('run')
        nruns = [fake_run('db-default/q2', 'conduit', 'db', 32, 1, 500)]
        nruns[0]['coalesce'] = False
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, 'results.csv')
            run.write_results_csv(path, nested.LABEL_NESTED, nruns, 'pin')
            env, pin, back = run.read_results_csv(path)
        self.assertEqual((env, pin), (nested.LABEL_NESTED, 'pin'))
        self.assertEqual((back[0]['scenario'], back[0]['qd'],
                          back[0]['iops'], back[0]['coalesce']),
                         ('db-default/q2', 32, 500.0, False))
        self.assertEqual(run.queues_of(back[0]['scenario']), 2)
        self.assertEqual(run.layout_of('db-default/q2'), 'db')
        self.assertEqual(run.layout_of('qemu-bar4/q4'), 'bar4')

    def test_peer_is_labelled_by_version(self):
        vb = load_script('virtio-blk')
        old = os.environ.get('CONDUIT_PEER_QEMU')
        try:
            os.environ['CONDUIT_PEER_QEMU'] = '/nonexistent/qemu'
            self.assertEqual(vb.peer_binary(),
                             (None, 'none (/nonexistent/qemu --version '
                                    'failed)'))
        finally:
            if old is None:
                os.environ.pop('CONDUIT_PEER_QEMU', None)
            else:
                os.environ['CONDUIT_PEER_QEMU'] = old


if __name__ == '__main__':
    unittest.main(verbosity=2)
