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
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), 'scripts',
                     'bench')
sys.path.insert(0, BENCH)
import nested  # noqa: E402


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
        if nested.kvm_usable():
            self.skipTest('/dev/kvm is usable here: it would run the bench')
        with tempfile.TemporaryDirectory() as tmp:
            for name in ('run', 'virtio-blk', 'all'):
                proc = subprocess.run(
                    [sys.executable, os.path.join(BENCH, name),
                     '--build-dir', tmp, '--nested=off'],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                out = proc.stdout.decode()
                self.assertEqual(proc.returncode, 0, out)
                self.assertIn('Nothing measured', out, name)
                self.assertEqual(os.listdir(tmp), [], name)


if __name__ == '__main__':
    unittest.main(verbosity=2)
