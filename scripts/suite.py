"""Shared by the suite-wide tests: where the ONNX backend suite is, and how to run ppqfmt."""
import glob
import os
import subprocess

SUITES = ('node', 'pytorch-converted', 'pytorch-operator', 'simple')
SUITE_DIR = '/usr/share/libonnx-testdata/data'


def find_cases(suite_dir, filt=''):
    """[(suite/case, path to model.onnx)] for every case whose name contains filt."""
    cases = []
    for suite in SUITES:
        for model in sorted(glob.glob(os.path.join(suite_dir, suite, '*', 'model.onnx'))):
            name = '%s/%s' % (suite, os.path.basename(os.path.dirname(model)))
            if not filt or filt in name:
                cases.append((name, model))
    return cases


def run_ppqfmt(cmd, out):
    """Runs ppqfmt (cmd: full argv); returns None when it wrote out, else the reason."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        return 'ppqfmt timed out after 120s'
    if p.returncode != 0:
        err = p.stderr.decode('utf-8', 'replace').strip()
        return 'ppqfmt exit %d: %s' % (p.returncode, ' | '.join(err.splitlines()[-3:]) or '(no stderr)')
    if not os.path.exists(out):
        return 'ppqfmt exit 0 but wrote no output'
    return None
