#!/usr/bin/python3
"""Differential fuzzing of ppqfmt: random valid models, onnxruntime as the oracle.

Usage:
  scripts/fuzz_diff.py [--seconds S | --count N] [--seed BASE] [--jobs J]
                       [--save DIR] [--known FILE] [--no-shrink] [-v]
  scripts/fuzz_diff.py --replay FILE      (a model of --known's table, with its command)

Each seed gives a model (scripts/gen_random_model.py). Models that fail the full
checker or that onnxruntime cannot run are rejects (counted: a high rate means
the generator is wrong). Every other model is formatted by ppqfmt (build/ppqfmt
or $PPQFMT; run through build/tools/fork_server, its command line forked per
run, when that is built) under several configurations -- the default passes,
--passes=none and random pass subsets (--passes=a,b / --no-P --enable=P), these
often with --target-opset=N (7 <= N <= 17, above or below the model's opset) and
--input-shape (the symbolic dims of the inputs bound to the sizes fed) -- and each
output is checked:
  exit      ppqfmt exits 0
  bytes     --passes=none: the output is the input, byte for byte
  checker   onnx.checker.check_model(full_check=True) on the loaded output
  ort       onnxruntime outputs equal the reference's within 1e-5 + 1e-3*max|ref|
            (exact for integer and bool outputs; scripts/ortcheck.compare_one;
            float16: F16_ABS + F16_REL*max|ref|, or F16_ULPS ulps of the largest
            float16 value the model computes when that is more, plus F16_COND
            times the input model's own float16 rounding error per element, or
            the output's own where both compute the same function in float32:
            see check_ort). An output onnxruntime has no
            kernel for (a double Conv) is skipped and counted, not failed; so is
            ppqfmt's documented refusal (exit 2) of a --target-opset it cannot
            adapt a node to.
  value_info the types and shapes the output declares (when infer-shapes ran)
            equal those onnxruntime computes for every input, intermediate and
            output, symbols bound from the actual sizes (scripts/shape_oracle.py;
            one run of a copy with every node output made an output, which
            serves ort too when the model has no float16)
  idem      formatting the output again with the same options gives the same bytes
  selfcheck ppqfmt's own --check on the case's feeds (--check-inputs, the reference's
            outputs as the expected ones) is a second oracle: its interpreter must
            compute the input model's outputs onnxruntime computed, and its verdict
            on the formatted model must be ort's (equal or not). A node it has no
            kernel for (exit 6), and models with float16 values (onnxruntime computes
            some float16 ops in float32), are skipped and counted.
A non-SSA model (a name written twice) cannot run in onnxruntime: its reference
is the SSA model it was derived from, and its outputs are only checked with
checker and ort when de-inplace ran.

A failing check is blamed on passes and options: each pass of its configuration,
then each other option, is left out in turn, and those without which the check
passes are printed (`blame seed N CHECK: P`).
A failure is shrunk (nodes replaced by graph inputs of the same type and shape,
dead nodes dropped, while the model stays valid and the same check fails) and
saved in --save DIR (default tests/regress/diff) as diff_SEED_CONFIG_CHECK.onnx (plus
.ref.onnx, the SSA reference, for a non-SSA model); the line it prints is the
row for that folder's README. Seeds listed in --known (that README) as known
bugs are skipped.

The last lines: models/s, rejects, checks passed and failed, per pass the
number of models it changed in any configuration (from --report=json, api/report.c),
and the failures grouped by signature. The exit status is 1 when a failure is
not a known bug.
Each run (not --replay) appends one line to --ledger (tests/regress/diff/ledger.tsv: date,
commit, first and last seed, models, rejects, failing models, checks, seconds) unless its
seeds meet a recorded run's, and prints the ledger's totals: the models run over all
sessions is that file's sum. The default first seed comes from the clock (1000 a second),
moved past any recorded range. --profile prints wall ms/model per stage (generate,
checker, ppqfmt, ort, compare, the rest).
Within a case, the full checker and the all-outputs onnxruntime run are done once per
distinct output bytes (both are functions of the bytes and the case's feeds): every check
still judges every output.
New kinds of configuration become new entries of CONFIG_MAKERS; new
properties of an output, new entries of OUTPUT_CHECKS.
"""
import base64
import functools
import hashlib
import json
import multiprocessing
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import f16_lift  # noqa: E402
import gen_random_model as gen  # noqa: E402
import ortcheck  # noqa: E402
import shape_oracle  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(REPO, 'build', 'ppqfmt'))
NODE = os.environ.get('NODE', 'node')
ORT_SERVE = os.path.join(HERE, 'ort_serve.js')
# The same command line, forked per run instead of exec'd: used when present.
FORK_SERVER = os.environ.get('PPQFMT_FORK_SERVER',
                             os.path.join(os.path.dirname(PPQFMT), 'tools', 'fork_server'))
# Each case's files (the model, ppqfmt's outputs) in memory when the machine offers it:
# on a disk, creating and removing them costs more than formatting a small model.
TMP_BASE = os.environ.get('FUZZ_DIFF_TMP') or (
    '/dev/shm' if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else None)
ORT_TIMEOUT = 60
RUN_TIMEOUT = 60
SUBSETS_PER_MODEL = 2
SHRINK_SECONDS = 120
LEDGER = os.path.join(REPO, 'tests', 'regress', 'diff', 'ledger.tsv')
LEDGER_COLUMNS = ('date', 'commit', 'first_seed', 'last_seed', 'jobs', 'models', 'rejects',
                  'failing_models', 'new_failures', 'checks_passed', 'checks_failed', 'seconds')

# Wall seconds per stage of this process (generate, checker, ppqfmt, ort, compare); --profile
# prints them per model. Leaf stages only, so that they add up.
STAGES = Counter()


def timed(stage):
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                STAGES[stage] += time.perf_counter() - t
        return inner
    return wrap


# ---------------------------------------------------------------------------
# onnxruntime through one long-lived node process
# ---------------------------------------------------------------------------

class OrtServer:
    """scripts/ort_serve.js, restarted when it dies or hangs."""

    def __init__(self):
        self.proc, self.buf, self.next_id = None, b'', 0

    _shared = None

    @classmethod
    def shared(cls):
        """One server for the whole process (stopped by atexit)."""
        if cls._shared is None:
            import atexit
            cls._shared = cls()
            atexit.register(cls._shared.stop)
        return cls._shared

    def start(self):
        self.proc = subprocess.Popen([NODE, ORT_SERVE], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b''

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def _line(self):
        deadline = time.time() + ORT_TIMEOUT
        fd = self.proc.stdout.fileno()
        while b'\n' not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b'\n', 1)
        return line

    @timed('ort')
    def run(self, model_path, feeds):
        """{output name: ndarray} in model output order, or an error string."""
        if self.proc is None:
            self.start()
        self.next_id += 1
        job = {'id': self.next_id, 'model': os.path.abspath(model_path), 'inputs': [
            {'name': k, 'dtype': v.dtype.name, 'dims': list(v.shape),
             'data': _b64(np.ascontiguousarray(v).astype(v.dtype.newbyteorder('<')).tobytes())}
            for k, v in feeds.items()]}
        try:
            self.proc.stdin.write((json.dumps(job) + '\n').encode())
            self.proc.stdin.flush()
            line = self._line()
        except (BrokenPipeError, OSError):
            line = None
        if line is None:
            self.stop()
            return 'onnxruntime died or hung'
        rec = json.loads(line)
        if not rec['ok']:
            return rec['error'] or 'unknown onnxruntime error'
        return {o['name']: _from_b64(o) for o in rec['outputs']}


def _b64(data):
    return base64.b64encode(data).decode()


def _from_b64(o):
    dt = np.dtype(o['dtype'])
    arr = np.frombuffer(base64.b64decode(o['data']), dtype=dt.newbyteorder('<'))
    return arr.astype(dt).reshape(o['dims'])


# ---------------------------------------------------------------------------
# models, inputs, configurations
# ---------------------------------------------------------------------------

def feeds_for(model, seed):
    """Random inputs for model's real graph inputs, dims from the generator's record."""
    dims = gen.input_dims(model) or {}
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in ortcheck.real_inputs(model):
        tt = vi.type.tensor_type
        dtype = np.dtype(ortcheck.ONNX_DTYPES[tt.elem_type])
        shape = dims.get(vi.name) or [d.dim_value if d.HasField('dim_value') else 1
                                      for d in tt.shape.dim]
        if dtype == np.bool_:
            feeds[vi.name] = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype.kind in 'iu':
            feeds[vi.name] = rng.integers(0, 3, size=shape).astype(dtype)
        else:
            feeds[vi.name] = rng.uniform(-1, 1, size=shape).astype(dtype)
    return feeds


_PASSES = []
_DEFAULT_ON = set()


def pass_names():
    """The registry's pass names, from ppqfmt --list-passes."""
    if not _PASSES:
        out = subprocess.run([PPQFMT, '--list-passes'], capture_output=True, text=True,
                             check=True).stdout
        rows = [line.split() for line in out.splitlines() if line.strip()]
        _PASSES.extend(r[0] for r in rows)
        _DEFAULT_ON.update(r[0] for r in rows if r[1] == 'on')
    return _PASSES


def default_passes():
    pass_names()
    return _DEFAULT_ON


def config_default(rng, model):
    return 'default', []


def config_none(rng, model):
    return 'none', ['--passes=none']


def config_subset(rng, model):
    """A random pass subset (--passes=LIST, or --no-P and --enable=P from the default set),
    often with a --target-opset and an --input-shape drawn for the model."""
    names = pass_names()
    keep = [p for p in names if rng.random() < 0.5]
    if 'dedup-initializers' in keep and 'split-params' in keep:  # naming both is refused
        keep.remove(rng.choice(['dedup-initializers', 'split-params']))
    if rng.random() < 0.5:
        args = ['--passes=' + (','.join(keep) or 'none')]
    else:
        args = ['--no-' + p for p in names if p not in keep and p in default_passes()]
        extra = [p for p in keep if p not in default_passes()]
        args += ['--enable=' + ','.join(extra)] if extra else []
    if model is not None and rng.random() < 0.4:
        args += target_opset_option(rng, model)
    if model is not None and len(model.graph.output) > 1 and rng.random() < 0.2:
        args += cut_outputs_option(rng, model)
    if model is not None and rng.random() < 0.5:
        args += input_shape_options(rng, model)
    return 'subset', args


def model_opset(model):
    return max([o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')] or [1])


def target_opset_option(rng, model):
    """--target-opset=N: a raise (N from the model's opset to 17, the highest Debian's onnx
    judges) two times in three, else any N from 7 to 17 (a lowering when below the model's)."""
    low = model_opset(model) if rng.random() < 2 / 3 else 7
    return ['--target-opset=%d' % rng.randint(low, 17)] if low <= 17 else []


def cut_outputs_option(rng, model):
    """--outputs= a random part of the graph outputs (the cut: formatter/cut.c)."""
    names = [o.name for o in model.graph.output]
    keep = [n for n in names if rng.random() < 0.5] or [rng.choice(names)]
    return ['--outputs=' + ','.join(keep)]


def cut_outputs(args):
    """The output names a --outputs option keeps, or None."""
    for a in args:
        if a.startswith('--outputs='):
            return a[len('--outputs='):].split(',')
    return None


def input_shape_options(rng, model):
    """--input-shape for the graph inputs with symbolic dims: each such dim bound to the size
    the run feeds (N, or SYM:N naming the symbol), or left as declared (-1)."""
    dims = gen.input_dims(model) or {}
    out = []
    for vi in ortcheck.real_inputs(model):
        declared = vi.type.tensor_type.shape.dim
        if vi.name not in dims or not any(d.dim_param for d in declared):
            continue
        spec = []
        for d, size in zip(declared, dims[vi.name]):
            if d.dim_param and rng.random() < 0.8:
                spec.append('%s:%d' % (d.dim_param, size) if rng.random() < 0.3 else str(size))
            elif not d.dim_param and rng.random() < 0.5:
                spec.append(str(size))
            else:
                spec.append('-1')
        out.append('--input-shape=%s=%s' % (vi.name, ','.join(spec)))
    return out


# Each maker(rng, model) -> (label, ppqfmt arguments). Order matters for nothing but the report.
CONFIG_MAKERS = [config_default, config_none] + [config_subset] * SUBSETS_PER_MODEL


def configs_for(seed, model=None):
    """The configurations of seed; without its model, no option drawn for the model."""
    rng = random.Random(seed * 7919 + 13)
    out = []
    for k, mk in enumerate(CONFIG_MAKERS):
        label, args = mk(rng, model)
        out.append(('%s%d' % (label, k) if label == 'subset' else label, args))
    return out


PASS_OPTIONS = ('--passes=', '--no-', '--enable=')


def passes_run(args):
    """The set of passes a configuration runs (to know whether de-inplace ran)."""
    names = pass_names()
    on = set(default_passes())
    for a in args:
        if a.startswith('--passes='):
            v = a[len('--passes='):]
            on = set() if v == 'none' else set(names) if v == 'all' else set(v.split(','))
        elif a.startswith('--no-'):
            on.discard(a[len('--no-'):])
        elif a.startswith('--enable='):
            on |= set(a[len('--enable='):].split(','))
    return on


def other_options(args):
    """The options of args that do not choose passes (--target-opset, --input-shape)."""
    return [a for a in args if not a.startswith(PASS_OPTIONS)]


# ---------------------------------------------------------------------------
# one case: a model, its reference outputs, its checks
# ---------------------------------------------------------------------------

class Case:
    """model: the SSA model (the reference); nonssa: (x, y) when the input given to
    ppqfmt is the SSA model with y renamed x (gen_random_model.apply_nonssa), or True
    when that input is given as given_input (a saved regression model)."""

    def __init__(self, seed, model, nonssa=None, given_input=None):
        self.seed, self.model, self.nonssa = seed, model, nonssa
        self.given_input = given_input

    def input_model(self):
        if self.given_input is not None:
            return self.given_input
        if self.nonssa is None:
            return self.model
        return gen.apply_nonssa(self.model, *self.nonssa)


class ForkServer:
    """build/tools/fork_server: ppqfmt's command line in a forked child per run, no exec
    (an exec costs more than formatting a small model). Restarted when it dies."""

    _mine = None

    def __init__(self):
        self.proc = None

    @classmethod
    def mine(cls):
        """This process's server (a pool worker gets its own), or None without the binary."""
        if not os.path.exists(FORK_SERVER):
            return None
        if cls._mine is None or cls._mine.pid != os.getpid():
            cls._mine = cls()
            cls._mine.pid = os.getpid()
        return cls._mine

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, argv, err_path):
        """(exit status or None, reason) of ppqfmt argv, its stderr written to err_path."""
        if self.proc is None:
            self.proc = subprocess.Popen([FORK_SERVER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            self.proc.stdin.write(('\t'.join([err_path] + argv) + '\n').encode())
            self.proc.stdin.flush()
            fd = self.proc.stdout.fileno()
            ready = select.select([fd], [], [], RUN_TIMEOUT + 10)[0]
            line = self.proc.stdout.readline().decode().split() if ready else []
        except (BrokenPipeError, OSError):
            line = []
        if len(line) != 2:
            self.stop()
            return None, 'the fork server died or hung'
        if line[0] == 'signal':
            why = 'timed out after %ds' % RUN_TIMEOUT if int(line[1]) == 14 else \
                'killed by signal %s' % line[1]
            return None, why
        return int(line[1]), None


@timed('ppqfmt')
def ppqfmt(args, src, dst):
    """(exit status or None, stderr text) of ppqfmt with --report=json."""
    argv = args + ['--report=json', src, '-o', dst]
    server = ForkServer.mine()
    if server is not None:
        err_path = dst + '.stderr'
        rc, why = server.run(argv, err_path)
        if why:
            return None, why
        with open(err_path, 'rb') as f:
            return rc, f.read().decode(errors='replace')
    try:
        p = subprocess.run([PPQFMT] + argv, capture_output=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, 'timed out after %ds' % RUN_TIMEOUT
    return p.returncode, p.stderr.decode(errors='replace')


def report_changes(stderr):
    """Names of the passes that changed something, from --report=json on stderr."""
    start = stderr.find('{')
    try:
        rep = json.loads(stderr[start:]) if start >= 0 else {}
    except ValueError:
        return set()
    return {p['name'] for p in rep.get('passes', []) if p.get('changes')}


@timed('checker')
def full_check(model):
    onnx.checker.check_model(model, full_check=True)


def check_checker(ctx):
    """The full checker on the output; its verdict is kept per distinct output bytes within
    a case (the checker is a function of the bytes: configurations often write the same)."""
    data = _read(ctx['out'])
    memo = ctx.setdefault('memo', {}).setdefault('checker', {})
    key = hashlib.sha256(data).digest()
    if key not in memo:
        try:
            full_check(onnx.load_model_from_string(data))
            memo[key] = None
        except Exception as ex:
            memo[key] = ex
    if memo[key] is not None:
        raise memo[key]


# onnxruntime's CPU provider lacks some kernels (a double Conv, which bn-to-conv
# makes of a double BatchNormalization): such an output cannot be judged.
NO_KERNEL = 'Could not find an implementation'
SKIP = 'skip: '
# ppqfmt's documented refusal (exit 2) of a --target-opset that a node cannot be adapted to
# (a nearest Resize-10 that upsamples and downsamples at once; a Clip-11 lowered below 11):
# skipped and counted.
OPSET_REFUSED = ('cannot raise opset', 'cannot lower opset')


def run_all_outputs(ctx):
    """onnxruntime's values of the output's graph outputs and of every main-graph node output
    (a copy with all of them made outputs: one run serves the value_info check and, without
    float16, the ort check), or its error; kept in ctx."""
    if 'all_outputs' not in ctx:
        data = _read(ctx['out'])
        memo = ctx.get('memo', {}).setdefault('all_outputs', {})
        key = hashlib.sha256(data).digest()
        if key not in memo:  # the same bytes, the same feeds: the same run (within a case)
            m = onnx.load_model_from_string(data)
            path = ctx['out'] + '.all.onnx'
            shape_oracle.with_all_outputs(m, [o for n in m.graph.node for o in n.output if o],
                                          path)
            memo[key] = (ctx['ort'].run(path, ctx['feeds']), [o.name for o in m.graph.output])
        ctx['all_outputs'], ctx['out_names'] = memo[key]
    return ctx['all_outputs']


def ort_error(got):
    if NO_KERNEL in got:
        return SKIP + 'onnxruntime has no kernel: ' + got.split('\n')[0][:200]
    return 'onnxruntime refuses the output: ' + got


def check_ort(ctx):
    """The output's results against the reference's. With float16 values about, from a run
    of the output itself: onnxruntime computes some float16 ops in float32 between Casts it
    inserts (InsertCastTransformer), and an intermediate made a graph output is rounded to
    float16 there, so the all-outputs copy need not compute the same."""
    if any(a.dtype == np.float16 for a in list(ctx['ref'].values()) + list(ctx['feeds'].values())):
        got = ctx['ort'].run(ctx['out'], ctx['feeds'])
        if isinstance(got, str):
            return check_lifted(ctx, got) if REUSE_REFUSAL in got else ort_error(got)
        err = compare_outputs(ctx['ref'], got)
        if err:  # the looser float16 allowances cost onnxruntime runs: only when needed
            largest = f16_largest(ctx)
            err = compare_outputs(ctx['ref'], got, largest)
            slack = err and f16_rounding_slack(ctx)
            err = compare_outputs(ctx['ref'], got, largest, slack) if slack else err
            slack = err and slack and f16_output_slack(ctx, got, slack)
            err = compare_outputs(ctx['ref'], got, largest, slack) if slack else err
        return err
    got = run_all_outputs(ctx)
    if isinstance(got, str):
        return ort_error(got)
    return compare_outputs(ctx['ref'], {k: got[k] for k in ctx['out_names'] if k in got})


# shape_oracle's dtype names (onnx's) as numpy names.
NP_NAME = {shape_oracle.DTYPE_NAME[k]: v for k, v in ortcheck.ONNX_DTYPES.items()}


class _Counts:
    def __init__(self):
        self.c = Counter()


def inputs_contradict(model, feeds):
    """A declared input dim the fed array breaks (a number, or a symbol given two sizes), as
    'input[axis]', or None."""
    sizes = {}
    for vi in ortcheck.real_inputs(model):
        arr = feeds.get(vi.name)
        dims = vi.type.tensor_type.shape.dim
        if arr is None or len(dims) != arr.ndim:
            continue
        for k, d in enumerate(dims):
            want = d.dim_value if d.HasField('dim_value') else sizes.setdefault(d.dim_param,
                                                                               arr.shape[k]) \
                if d.dim_param else arr.shape[k]
            if want != arr.shape[k]:
                return '%s[%d]' % (vi.name, k)
    return None


def check_value_info(ctx):
    """The element types and shapes the output declares (infer-shapes wrote them) against
    those onnxruntime computes for every value, symbols bound from the actual sizes."""
    if 'infer-shapes' not in passes_run(ctx['args']):
        return None
    out = onnx.load(ctx['out'])
    clash = inputs_contradict(out, ctx['feeds'])
    if clash:  # a model older than the generator's one-size-per-symbol rule
        return SKIP + 'the fed inputs contradict their declared dims (%s)' % clash
    got = run_all_outputs(ctx)
    if isinstance(got, str):
        return ort_error(got)
    declared = shape_oracle.declared_facts(out.graph)
    actual = dict(ctx['feeds'], **got)
    problems = ['%s: dtype %s, onnxruntime %s' % (v, declared[v][0], arr.dtype.name)
                for v, arr in actual.items()
                if NP_NAME.get(declared.get(v, (None,))[0], arr.dtype.name) != arr.dtype.name]
    shape_oracle.compare_ort(declared, actual, _Counts(), problems)
    return '; '.join(problems[:4]) + (' (%d more)' % (len(problems) - 4)
                                      if len(problems) > 4 else '') if problems else None


# float16 keeps 11 significant bits: a weight folded and rounded to float16 is off by up
# to half an ulp (~5e-4 relative), and a sum of k such products drifts by several ulps
# more, so float16 outputs get ten times the float tolerance.
F16_ABS, F16_REL = 1e-4, 1e-2

# A float16 output may also be off by F16_ULPS ulps of the largest float16 value computed on
# the way (2**-10 of it per ulp): onnxruntime on the CPU computes some float16 ops in float32
# between Casts it inserts and drops a Cast pair between two such ops, so where the model has a
# Reshape or Identity (float16 kernels) in one path and not in another, it rounds an
# intermediate in one path only. Sub(Reshape(Identity(x)), x) with x = Add(a, b) of size ~1.7
# then comes out as up to 3.7e-4 instead of 0 (seed 695969965252), where ppqfmt's output,
# without the Identity, gives 0 as ONNX's semantics do. Cancellation makes max|ref| no
# measure of that rounding.
F16_ULPS = 4


def f16_largest(ctx):
    """Largest finite |value| of any float16 node output of the formatted model (its
    all-outputs run), float16 input or float16 initializer of any of its graphs: the values
    computed inside an If or Loop body are not outputs of that run, but their operands are
    among these (seed 696172150124: x - Identity(Identity(x)) inside an If, 1 ulp of x = -1.48
    off where ppqfmt's output gives 0); 0 when there is none."""
    got = run_all_outputs(ctx)
    arrs = list(got.values()) if not isinstance(got, str) else []
    arrs += list(ctx['feeds'].values()) + f16_initializers(onnx.load(ctx['out']).graph)
    arrs = [np.abs(a[np.isfinite(a)].astype(np.float64)) for a in arrs
            if getattr(a, 'dtype', None) == np.float16 and np.isfinite(a).any()]
    return max((float(a.max()) for a in arrs), default=0.0)


def f16_initializers(g):
    """The float16 initializers of g and of the graphs nested in it, as arrays."""
    found = [onnx.numpy_helper.to_array(t) for t in g.initializer
             if t.data_type == onnx.TensorProto.FLOAT16]
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.HasField('g') else []) + list(a.graphs):
                found += f16_initializers(sub)
    return found


# A float16 output element may also be off by F16_COND times the float16 rounding error of the
# reference there: how far a float16 evaluation of the input model lies from the same model
# computed in float32 (scripts/f16_lift.py), the larger of two evaluations' errors: onnxruntime's
# (which keeps chains of ops in float32 between the Casts it inserts) and one that rounds every
# op's result to float16 as the graph states. Where the model is ill-conditioned, one rounding
# more or less (a weight folded into float16, a BatchNormalization made a Conv, a LayerNorm
# decomposition made one LayerNormalization kernel) moves an output element by as much as
# rounding moves the reference: a LayerNorm over a last axis of 2 elements turned 1 ulp of its
# input into 0.02 of its output (seed 696164311135: float64 -0.3756, reference -0.3821, every
# op rounded -0.3608, ppqfmt's output -0.3557). Elsewhere the slack is a few ulps and the check
# as strict as without it; a wrong rewrite still shows where the model is well-conditioned.
F16_COND = 4


def f16_rounding_slack(ctx):
    """{float16 output: F16_COND * largest |float16 evaluation - float32 evaluation|} of the
    input model; None when a lifted run fails (no slack then)."""
    runs = lifted_reference(ctx)
    if runs is None:
        return None
    exact, rounded = runs
    slack = {}
    for k, r in ctx['ref'].items():
        if r.dtype == np.float16 and k in exact and exact[k].shape == r.shape:
            e = exact[k].astype(np.float64)
            slack[k] = F16_COND * np.abs(r.astype(np.float64) - e)
            if k in rounded and rounded[k].shape == r.shape:
                slack[k] = np.maximum(slack[k], F16_COND * np.abs(rounded[k] - e))
    return slack


def f16_output_slack(ctx, got, slack):
    """slack widened by F16_COND times the output model's own float16 rounding error (its
    float16 outputs got against the same output lifted to float32), only when the two models
    compute the same function in float32 (the lifted outputs agree within ortcheck's
    tolerance); else None. A rewrite may change where an ill-conditioned model rounds so that
    the output's float16 error is larger than both of the input's evaluations at an element
    (seed 696194153074: a LayerNorm decomposition of three nearly equal values made one
    LayerNormalization, 0.008 off where both evaluations of the input agree to 0.0002); a
    wrong rewrite still fails in float32, and where the model is well-conditioned."""
    runs = lifted_reference(ctx)
    out = runs and run_lifted(ctx, onnx.load(ctx['out']), 'out_f32.onnx')
    if not out or set(out) != set(runs[0]) or compare_outputs(runs[0], out):
        return None
    wide = dict(slack)
    for k, g in got.items():
        if k in wide and k in out and out[k].shape == g.shape:
            own = F16_COND * np.abs(g.astype(np.float64) - out[k].astype(np.float64))
            wide[k] = np.maximum(wide[k], own)
    return wide


def lifted_reference(ctx):
    """onnxruntime's outputs of the input model lifted to float32, as is and with every op's
    result rounded to float16 (once per case; {} when that run fails: its Casts can meet the
    planner bug of REUSE_REFUSAL), or None when the first run fails."""
    memo = ctx.get('memo', {})
    if 'lifted' not in memo:
        model = onnx.load(os.path.join(ctx['tmp'], 'ref.onnx'))
        exact = run_lifted(ctx, model, 'ref_f32.onnx')
        memo['lifted'] = exact and (exact, run_lifted(ctx, model, 'ref_f32_rounded.onnx',
                                                      True) or {})
    return memo['lifted']


def run_lifted(ctx, model, name, rounded=False, all_outputs=False):
    """onnxruntime's outputs of model lifted to float32 (written to tmp/name; all_outputs:
    every node output of the main graph made a graph output too), or None."""
    path = os.path.join(ctx['tmp'], name)
    try:
        lifted = f16_lift.lift_model(model, rounded)
    except Exception:  # onnx's shape inference gave up on the model
        return None
    shape_oracle.with_all_outputs(lifted, [o for n in lifted.graph.node for o in n.output if o]
                                  if all_outputs else [], path)
    got = ctx['ort'].run(path, f16_lift.lift_feeds(ctx['feeds']))
    return None if isinstance(got, str) else got


# onnxruntime refuses some valid float16 models: its buffer planner reuses a buffer between
# values it takes for one size, through the Casts it inserts around float16 kernels it lacks,
# where onnx's inference of a Slice-10 gave the wrong dims (seeds 695969980356, 696177846646)
# or where a value is a graph output and read by another node (seed 696177859243). The same
# model lifted to float32 runs (or, when the planner still reuses a buffer wrongly, that model
# with every node output made a graph output: the planner gives graph outputs buffers of their
# own): its outputs are compared instead (as float16, against the lifted input model's), so a
# wrong output still fails.
REUSE_REFUSAL = 'Shape mismatch attempting to re-use buffer'


def check_lifted(ctx, refusal):
    """check_ort for a float16 output onnxruntime refuses with REUSE_REFUSAL."""
    runs = lifted_reference(ctx)
    out = onnx.load(ctx['out'])
    got = runs and (run_lifted(ctx, out, 'out_f32.onnx') or
                    run_lifted(ctx, out, 'out_f32_all.onnx', all_outputs=True))
    if not got:
        return ort_error(refusal)
    as_ref = {k: v.astype(ctx['ref'][k].dtype) for k, v in got.items() if k in ctx['ref']}
    exact = {k: v.astype(ctx['ref'][k].dtype) for k, v in runs[0].items() if k in ctx['ref']}
    return compare_outputs(exact, as_ref, f16_largest(ctx), f16_rounding_slack(ctx))


@timed('compare')
def compare_outputs(ref, got, f16_largest=0.0, f16_slack=None):
    """None when got matches ref (ortcheck's tolerance; float16: F16_ABS + F16_REL*max|ref|,
    or F16_ULPS ulps of f16_largest when that is more, plus f16_slack[output] per element)."""
    if set(ref) != set(got):
        return 'output names differ: expected %s, got %s' % (sorted(ref), sorted(got))
    errs = []
    for name in ref:
        r, g = ref[name], got[name]
        if r.dtype == np.float16 and g.dtype == np.float16 and r.shape == g.shape:
            errs.append(_compare_f16(name, r.astype(np.float64), g.astype(np.float64),
                                     f16_largest, (f16_slack or {}).get(name, 0.0)))
        else:
            errs.append(ortcheck.compare_one(name, r, g))
    errs = [e for e in errs if e]
    return '; '.join(errs) if errs else None


def _compare_f16(name, r, g, f16_largest, slack=0.0):
    fin = np.isfinite(r)
    tol = F16_ABS + max(F16_REL * (np.abs(r[fin]).max() if fin.any() else 0.0),
                        F16_ULPS * 2.0 ** -10 * f16_largest) + np.where(
                            np.isfinite(slack), slack, 0.0)
    tol = np.broadcast_to(tol, r.shape)
    with np.errstate(invalid='ignore'):
        bad = np.where(fin, ~(np.abs(r - g) <= tol), np.where(np.isnan(r), ~np.isnan(g), r != g))
    if not bad.any():
        return None
    idx = np.unravel_index(np.argmax(bad), bad.shape)
    return ('output %s: %d of %d float16 elements differ, e.g. at %s got %r expected %r '
            '(tol %.3g)') % (name, int(bad.sum()), bad.size, tuple(int(i) for i in idx),
                             g[idx], r[idx], tol[idx])


def check_idem(ctx):
    """The output formatted again with the same options but --input-shape (the output's
    inputs are bound already: binding SYM:N where SYM is gone is a usage error)."""
    again = ctx['out'] + '.again.onnx'
    rc, err = ppqfmt([a for a in ctx['args'] if not a.startswith('--input-shape')],
                     ctx['out'], again)
    if rc != 0:
        return 'formatting the output again: exit %s: %s' % (rc, err.strip()[:300])
    if not _same_bytes(ctx['out'], again):
        return 'formatting the output again changes it (%d -> %d bytes)' % (
            os.path.getsize(ctx['out']), os.path.getsize(again))
    return None


def _same_bytes(a, b):
    return _read(a) == _read(b)


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def write_check_data(ctx):
    """The feeds as input_K.pb and the reference's outputs as output_K.pb (once per case and
    set of outputs: --cut-outputs keeps some), the folder --check-inputs reads."""
    names = hashlib.sha256('\0'.join(ctx['ref']).encode()).hexdigest()[:12]
    folder = os.path.join(ctx['tmp'], 'check_data_' + names)
    if not os.path.isdir(folder):
        os.makedirs(folder)
        for prefix, values in (('input', ctx['feeds']), ('output', ctx['ref'])):
            for k, (name, arr) in enumerate(values.items()):
                t = onnx.numpy_helper.from_array(np.asarray(arr), name)
                _write(os.path.join(folder, '%s_%d.pb' % (prefix, k)), t.SerializeToString())
    return folder


# Ops whose output jumps where their input crosses a step: a float32 rounding difference
# upstream (onnxruntime's float32 Softmax against the interpreter's double, rounded once)
# can move an input across it, which is no bug of either.
STEP_OPS = {'Floor', 'Ceil', 'Round', 'Sign', 'Greater', 'Less', 'Equal', 'GreaterOrEqual',
            'LessOrEqual', 'ArgMax', 'ArgMin', 'Cast', 'Mod', 'TopK', 'Hardmax', 'NonZero',
            'QuantizeLinear', 'DynamicQuantizeLinear', 'BitShift', 'IsInf', 'IsNaN'}


# onnxruntime's nearest Resize picks other source pixels than onnx's reference when it
# downscales (align_corners, and floor at non-integer scales; seen with 1.31.1); the
# interpreter follows onnx's reference, which the kernel oracle checks.
ORT_DEVIATES = {'Resize', 'Upsample'}


def subgraph_nodes(node):
    """Every node of node's subgraphs, nested ones too."""
    for a in node.attribute:
        for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
            for n in g.node:
                yield n
                yield from subgraph_nodes(n)


def step_upstream(path, output, ops=STEP_OPS):
    """The first op of ops that output depends on in the model at path, or None."""
    g = onnx.load(path).graph
    producer = {o: n for n in g.node for o in n.output}
    todo, seen = [output], set()
    while todo:
        n = producer.get(todo.pop())
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        inner = list(subgraph_nodes(n))  # their reads of outer values count too
        for m in [n] + inner:
            if m.op_type in ops:
                return m.op_type
        todo += list(n.input) + [name for m in inner for name in m.input]
    return None


def check_self(ctx):
    """ppqfmt --check on the case's feeds against onnxruntime: the input model's outputs
    (--check-expected) and the verdict on the formatted model (ctx['ort_verdict'])."""
    values = list(ctx['ref'].values()) + list(ctx['feeds'].values())
    if any(np.asarray(a).dtype == np.float16 for a in values):
        return SKIP + 'float16 values'
    if ctx['nonssa']:
        return SKIP + 'a non-SSA input (its reference is another model)'
    ort_verdict = ctx['ort_verdict'] if 'ort_verdict' in ctx else check_ort(ctx)
    if ort_verdict and ort_verdict.startswith(SKIP):
        return SKIP + 'no ort verdict'
    args = ctx['args'] + ['--check-inputs=' + write_check_data(ctx), '--check-expected']
    rc, err = ppqfmt(args, ctx['src'], ctx['out'] + '.self.onnx')
    last = err.strip().split('\n')[-1] if err.strip() else ''
    if rc == 6:
        node = re.search(r"node '[^']*' \(([^)]+)\)", last)
        return SKIP + '--check cannot run ' + (node.group(1) if node else last[-80:])
    if rc == 5 and '--check-expected' in last:
        output = re.search(r"output '([^']*)'", last)
        step = output and step_upstream(ctx['src'], output.group(1))
        if step:
            return SKIP + 'a %s upstream moves a rounding difference across its step' % step
        resize = output and step_upstream(ctx['src'], output.group(1), ORT_DEVIATES)
        if resize:
            return SKIP + 'a %s upstream: onnxruntime picks other pixels than onnx' % resize
        return 'the interpreter and onnxruntime disagree on the input model: ' + last[:300]
    if rc == 5 and not ort_verdict:
        return '--check says the output differs, onnxruntime says equal: ' + last[:300]
    if rc == 0 and ort_verdict:
        return '--check says equal, onnxruntime says: ' + ort_verdict[:200]
    if rc not in (0, 5):
        return '--check run: exit %s: %s' % (rc, last[:300])
    return None


# (name, fn(ctx) -> None | error string, needs an SSA output); selfcheck after ort.
OUTPUT_CHECKS = [('checker', check_checker, True), ('ort', check_ort, True),
                 ('value_info', check_value_info, True), ('idem', check_idem, False),
                 ('selfcheck', check_self, True)]


def run_config(case, label, args, ctx, only=None):
    """[(check name, error or None)] for one configuration; only: the one check wanted."""
    res = []
    tmp = ctx['tmp']
    out = os.path.join(tmp, 'out_%s.onnx' % label)
    rc, err = ppqfmt(args, ctx['src'], out)
    if rc == 2 and any(w in err for w in OPSET_REFUSED) and \
            any(a.startswith('--target-opset') for a in args):
        return [('%s:exit' % label, SKIP + 'target opset refused: ' +
                 err.split(': ', 2)[-1].strip()[:200])], set()
    if rc != 0:
        return [('%s:exit' % label, 'exit %s: %s' % (rc, err.strip()[:300]))], set()
    changed = report_changes(err)
    if args == ['--passes=none']:
        same = _same_bytes(ctx['src'], out)
        return [('%s:bytes' % label, None if same else 'output differs from the input')], changed
    ssa_out = case.nonssa is None or 'de-inplace' in passes_run(args)
    cctx = dict(ctx, out=out, args=args)
    kept = cut_outputs(args)
    if kept:  # the cut model computes these of the reference's outputs
        cctx['ref'] = {k: v for k, v in ctx['ref'].items() if k in kept}
    for name, fn, needs_ssa in OUTPUT_CHECKS:
        full = '%s:%s' % (label, name)
        if (needs_ssa and not ssa_out) or (only and full != only):
            continue
        try:
            e = fn(cctx)
        except Exception as ex:  # a broken output fails the check, not the runner
            e = '%s: %s' % (type(ex).__name__, str(ex).split('\n')[0][:300])
        if name == 'ort':
            cctx['ort_verdict'] = e
        res.append((full, e))
    return res, changed


def reference(case, ort, tmp):
    """(feeds, reference outputs, reject reason or None); writes the model ppqfmt reads."""
    ref_path = os.path.join(tmp, 'ref.onnx')
    data = case.model.SerializeToString()
    _write(ref_path, data)
    try:
        full_check(case.model)
    except Exception as e:
        return None, None, 'checker: ' + str(e).split('\n')[0][:120]
    src = case.input_model()
    if src is None:
        return None, None, 'non-SSA renaming no longer applies'
    _write(os.path.join(tmp, 'in.onnx'), data if src is case.model else src.SerializeToString())
    feeds = feeds_for(case.model, case.seed)
    ref = ort.run(ref_path, feeds)
    if isinstance(ref, str):
        return None, None, 'onnxruntime: ' + ref.split('\n')[0][:120]
    return feeds, ref, None


def _write(path, data):
    with open(path, 'wb') as f:
        f.write(data)


def check_case(case, ort, configs, only=None):
    """(reject reason or None, [(check, error or None)], passes any configuration changed)."""
    tmp = tempfile.mkdtemp(prefix='fuzzdiff_', dir=TMP_BASE)
    try:
        feeds, ref, why = reference(case, ort, tmp)
        if why:
            return why, [], set()
        ctx = {'tmp': tmp, 'src': os.path.join(tmp, 'in.onnx'), 'feeds': feeds, 'ref': ref,
               'ort': ort, 'memo': {}, 'nonssa': case.nonssa is not None}
        results, changed = [], set()
        for label, args in configs:
            if only and not only.startswith(label + ':'):
                continue
            r, ch = run_config(case, label, args, ctx, only)
            results += r
            changed |= ch
        return None, results, changed
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@timed('generate')
def case_for_seed(seed):
    """The Case of seed, or (None, why) when the generator made nothing."""
    try:
        got = gen.generate(seed)
    except Exception as e:  # a generator crash is a reject to count and fix, not a stop
        return None, 'generator: %s: %s' % (type(e).__name__, e)
    if got is None:
        return None, 'generator: empty model'
    return Case(seed, got.model, got.nonssa), None


# ---------------------------------------------------------------------------
# shrinking
# ---------------------------------------------------------------------------

def intermediate_shapes(model, feeds, ort, tmp):
    """{value name: (elem type, concrete dims)} of every main-graph node output, from one
    onnxruntime run with all of them made graph outputs."""
    m = onnx.ModelProto.FromString(model.SerializeToString())
    types = {v.name: v.type.tensor_type.elem_type
             for v in shape_inference.infer_shapes(m).graph.value_info}
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and o in types:
                m.graph.output.append(helper.make_tensor_value_info(o, types[o], None))
    path = os.path.join(tmp, 'all_outputs.onnx')
    onnx.save(m, path)
    got = ort.run(path, feeds)
    if isinstance(got, str):
        return {}
    elem = {o.name: o.type.tensor_type.elem_type for o in m.graph.output}
    return {k: (elem[k], list(v.shape)) for k, v in got.items()}


def without_node(model, index, shapes):
    """model with main-graph node index removed, its used outputs turned into graph inputs,
    then nodes reaching no output, unused initializers and inputs dropped."""
    m = onnx.ModelProto.FromString(model.SerializeToString())
    g = m.graph
    node = g.node[index]
    dims = gen.input_dims(m) or {}
    for o in node.output:
        if not o:
            continue
        if o not in shapes:
            return None
        et, shp = shapes[o]
        g.input.append(helper.make_tensor_value_info(o, et, shp))
        dims[o] = shp
    del g.node[index]
    prune(m)
    dims = {i.name: dims[i.name] for i in g.input if i.name in dims}
    gen.set_input_dims(m, dims)
    return m


def without_output(model, index):
    m = onnx.ModelProto.FromString(model.SerializeToString())
    del m.graph.output[index]
    prune(m)
    return m


def prune(m):
    g = m.graph
    live = {o.name for o in g.output}
    keep = []
    for n in reversed(g.node):
        if any(o in live for o in n.output):
            keep.append(n)
            live |= set(n.input) | gen._graph_reads_all(n)
    keep.reverse()
    del g.node[:]
    g.node.extend(keep)
    inits = [t for t in g.initializer if t.name in live]
    del g.initializer[:]
    g.initializer.extend(inits)
    ins = [i for i in g.input if i.name in live]
    del g.input[:]
    g.input.extend(ins)
    vis = [v for v in g.value_info if v.name in live]
    del g.value_info[:]
    g.value_info.extend(vis)


def still_fails(case, check, ort, configs):
    why, results, _ = check_case(case, ort, configs, only=check)
    return why is None and any(c == check and e and not e.startswith(SKIP) for c, e in results)


def shrink(case, check, ort, configs, seconds=SHRINK_SECONDS):
    """A smaller case on which check still fails (the case itself if none is found)."""
    deadline = time.time() + seconds
    progress = True
    while progress and time.time() < deadline:
        progress = False
        tmp = tempfile.mkdtemp(prefix='fuzzshrink_', dir=TMP_BASE)
        try:
            shapes = intermediate_shapes(case.model, feeds_for(case.model, case.seed), ort, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        cands = [lambda k=k: without_output(case.model, k)
                 for k in range(len(case.model.graph.output) - 1, 0, -1)]
        cands += [lambda k=k: without_node(case.model, k, shapes)
                  for k in range(len(case.model.graph.node) - 1, -1, -1)]
        for make in cands:
            if time.time() > deadline:
                break
            m = make()
            if m is None or len(m.graph.node) == 0:
                continue
            smaller = Case(case.seed, m, case.nonssa)
            if still_fails(smaller, check, ort, configs):
                case, progress = smaller, True
                break
    return case


DEFAULT_COMMAND = '(default)'   # the command cell of a row for ppqfmt without options


def blame(case, check, ort, configs):
    """The passes of the failing configuration without which the check passes, and its
    other options without which it passes (target-opset, input-shape)."""
    label = check.split(':')[0]
    full = dict(configs)[label]
    on = passes_run(full)
    tries = [(p, other_options(full) + ['--passes=' + (
        ','.join(q for q in pass_names() if q in on and q != p) or 'none')])
        for p in pass_names() if p in on]
    tries += [(o.split('=')[0].lstrip('-'), [a for a in full if a != o])
              for o in other_options(full)]
    return [name for name, args in tries
            if not still_fails(case, label + ':' + check.split(':')[1], ort, [(label, args)])]


def save_failure(case, check, err, culprits, configs, save_dir):
    os.makedirs(save_dir, exist_ok=True)
    label = check.split(':')[0]
    args = dict(configs)[label]
    base = 'diff_%d_%s' % (case.seed, check.replace(':', '_'))
    onnx.save(case.input_model(), os.path.join(save_dir, base + '.onnx'))
    if case.nonssa is not None:
        onnx.save(case.model, os.path.join(save_dir, base + '.ref.onnx'))
    return '| `%s.onnx` | %d | `%s` | %s | %s | known | %s |' % (
        base, case.seed, ' '.join(args) or DEFAULT_COMMAND, check.split(':')[1], culprits,
        ' '.join(str(err).split())[:200])


# ---------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------

class Stats:
    def __init__(self):
        self.models = self.rejects = self.passed = self.failed = self.skipped = 0
        self.reject_why, self.skip_why, self.changed = Counter(), Counter(), Counter()
        self.failures, self.saved_sigs = [], set()
        self.last_seed, self.stages = None, Counter()

    def add(self, other):
        for k in ('models', 'rejects', 'passed', 'failed', 'skipped'):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        if other.last_seed is not None:
            self.last_seed = max(other.last_seed, self.last_seed or other.last_seed)
        self.stages.update(other.stages)
        self.reject_why.update(other.reject_why)
        self.skip_why.update(other.skip_why)
        self.changed.update(other.changed)
        self.failures += other.failures


def run_seed(seed, ort, stats, opts):
    case, why = case_for_seed(seed)
    configs = configs_for(seed, case.model if case is not None else None)
    if case is not None:
        why, results, changed = check_case(case, ort, configs)
    if why:
        stats.rejects += 1
        stats.reject_why[why.split(':')[0] + ': ' + ':'.join(why.split(':')[1:])[:90]] += 1
        return
    stats.models += 1
    stats.changed.update(changed)
    skipped = [(c, e) for c, e in results if e and e.startswith(SKIP)]
    stats.skipped += len(skipped)
    stats.skip_why.update(e[len(SKIP):].split(' node ')[0][:80] for _, e in skipped)
    results = [r for r in results if r not in skipped]
    bad = [(c, e) for c, e in results if e]
    stats.passed += len(results) - len(bad)
    stats.failed += len(bad)
    for c, e in results:
        if opts.get('verbose') or e:
            print('%s seed %d %s%s' % ('FAIL' if e else 'ok', seed, c, ': ' + e if e else ''),
                  flush=True)
    if bad:
        report_failure(case, bad[0], ort, configs, stats, opts)


# Passes that often only uncover a failure another pass causes (isolated removes what
# hid it, de-inplace makes a non-SSA model checkable): left out of a failure's signature.
CLEANUP_PASSES = ('isolated', 'de-inplace')


def report_failure(case, bad, ort, configs, stats, opts):
    """Blames the failing check, then shrinks and saves the model unless a failure with the
    same signature (check, blamed passes) is a known bug or was saved before in this run."""
    check, err = bad
    blamed = blame(case, check, ort, configs)
    culprits = ','.join(blamed) or '-'
    sig = (check.split(':')[1],
           ','.join(p for p in blamed if p not in CLEANUP_PASSES) or culprits)
    known = opts.get('known_sigs', {}).get(sig)
    print('blame seed %d %s: %s%s' % (case.seed, check, culprits,
                                      ' (known: %s)' % known if known else ''), flush=True)
    row = None
    if opts.get('save') and not known and sig not in stats.saved_sigs:
        stats.saved_sigs.add(sig)
        if opts.get('shrink', True):
            left = opts['until'] - time.time() if opts.get('until') else SHRINK_SECONDS
            case = shrink(case, check, ort, configs, max(0.0, min(SHRINK_SECONDS, left)))
        row = save_failure(case, check, err, sig[1], configs, opts['save'])
        print('saved: ' + row, flush=True)
    stats.failures.append((case.seed, check, err, sig, known))


def worker(args):
    k, jobs, base, count, until, opts = args
    stats = Stats()
    ort = OrtServer()
    skip = set(opts.get('skip', ()))
    before = Counter(STAGES)  # a pool process may run two workers
    t0 = time.perf_counter()
    try:
        i = 0
        while True:
            seed = base + k + i * jobs
            i += 1
            if (count is not None and seed >= base + count) or (until and time.time() >= until):
                break
            stats.last_seed = seed
            if seed in skip:
                continue
            run_seed(seed, ort, stats, opts)
    finally:
        ort.stop()
    stats.stages = Counter(STAGES)
    stats.stages.subtract(before)
    stats.stages['total'] = time.perf_counter() - t0
    return stats


def replay(folder, row):
    """Re-runs a saved regression model with its row's options: (error of the row's check or
    None, [(check, error)] of every check of that configuration, reject reason or None)."""
    path = os.path.join(folder, row['file'])
    ref = path[:-len('.onnx')] + '.ref.onnx'
    given = onnx.load(path)
    if os.path.exists(ref):
        case = Case(int(row['seed']), onnx.load(ref), True, given)
    else:
        case = Case(int(row['seed']), given)
    args = [] if row['command'] == DEFAULT_COMMAND else row['command'].split()
    why, results, _ = check_case(case, OrtServer.shared(), [('replay', args)])
    mine = [e for c, e in results if c == 'replay:' + row['check']]
    return (mine[0] if mine else None), results, why


def replay_main(name, readme):
    rows = [r for r in known_rows(readme) if r['file'] == os.path.basename(name)]
    if not rows:
        print('%s: no row for it in %s' % (name, readme), file=sys.stderr)
        return 1
    err, results, why = replay(os.path.dirname(readme), rows[0])
    if why:
        print('reject: ' + why)
    for c, e in results:
        print('%s %s%s' % ('FAIL' if e else 'ok', c, ': ' + e if e else ''))
    return 1 if why or any(e for _, e in results) else 0


def known_seeds(readme):
    """Seeds of the rows of a regress/diff README whose status is `known`."""
    return {int(r['seed']) for r in known_rows(readme) if r['status'] == 'known'}


def known_rows(readme):
    """Rows of the README's table: file, seed, command, check, blame, status, what."""
    rows = []
    if not readme or not os.path.exists(readme):
        return rows
    with open(readme) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if len(cells) >= 7 and cells[0].startswith('`') and cells[1].isdigit():
                rows.append({'file': cells[0].strip('`'), 'seed': cells[1],
                             'command': cells[2].strip('`'), 'check': cells[3],
                             'blame': cells[4], 'status': cells[5], 'what': cells[6]})
    return rows


def known_signatures(readme):
    """{(check, blamed passes): file} of the rows whose status is `known`."""
    return {(r['check'], r['blame']): r['file'] for r in known_rows(readme)
            if r['status'] == 'known'}


def run(base, count=None, seconds=None, jobs=2, opts=None):
    opts = opts or {}
    pass_names()
    until = time.time() + seconds if seconds else None
    opts = dict(opts, until=until)
    t0 = time.time()
    work = [(k, jobs, base, count, until, opts) for k in range(jobs)]
    if jobs == 1:
        parts = [worker(work[0])]
    else:
        with multiprocessing.Pool(jobs) as pool:
            parts = pool.map(worker, work)
    total = Stats()
    for p in parts:
        total.add(p)
    return total, time.time() - t0


def print_summary(stats, elapsed, name='fuzz_diff'):
    tried = stats.models + stats.rejects
    print('models: %d in %.1f s (%.1f models/s); rejects: %d of %d generated (%.2f%%)' % (
        stats.models, elapsed, stats.models / max(elapsed, 1e-9), stats.rejects, tried,
        100.0 * stats.rejects / max(tried, 1)))
    for why, n in stats.reject_why.most_common(8):
        print('  reject %d: %s' % (n, why))
    print('checks skipped: %d' % stats.skipped)
    for why, n in stats.skip_why.most_common(5):
        print('  skip %d: %s' % (n, why))
    print('models changed by each pass (in any configuration):')
    for p in pass_names():
        print('  %-12s %d' % (p, stats.changed.get(p, 0)))
    print('failing models: %d, by check and blamed passes:' % len(stats.failures))
    by_sig = {}
    for seed, check, err, sig, known in stats.failures:
        by_sig.setdefault(sig, []).append((seed, check, err, known))
    for sig, fails in sorted(by_sig.items(), key=lambda kv: -len(kv[1])):
        seed, check, err, known = fails[0]
        print('  %d %s [%s]%s, e.g. seed %d %s: %s' % (
            len(fails), sig[0], sig[1], ' known: ' + known if known else ' NEW', seed, check,
            ' '.join(str(err).split())[:150]))
    print('%s: %d passed, %d failed' % (name, stats.passed, stats.failed))


def print_profile(stats):
    """Wall ms per model of each stage, summed over the jobs ('python' is the rest: loading,
    serializing, the shape oracle, the runner itself)."""
    n = max(stats.models + stats.rejects, 1)
    st = dict(stats.stages)
    total = st.pop('total', 0.0)
    rest = total - sum(st.values())
    print('stage ms/model (wall, summed over jobs; %d models generated):' % n)
    for k, v in sorted(st.items(), key=lambda kv: -kv[1]) + [('python', rest), ('total', total)]:
        print('  %-9s %7.1f' % (k, 1000.0 * v / n))


def ledger_rows(path):
    """The rows of the ledger (dicts of LEDGER_COLUMNS), [] when there is none."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [ln.rstrip('\n').split('\t') for ln in f if ln.strip()]
    return [dict(zip(LEDGER_COLUMNS, ln)) for ln in lines[1:]]


def ledger_overlap(rows, first, last):
    """A row whose seed range meets [first, last], or None."""
    for r in rows:
        if int(r['first_seed']) <= last and first <= int(r['last_seed']):
            return r
    return None


def clock_seed(rows):
    """The first seed of a run: from the clock (1000 a second, so that runs started apart
    do not meet), moved past any ledger range it falls into."""
    base = int(time.time()) * 1000 % (2 ** 40)
    while ledger_overlap(rows, base, base):
        base = max(int(r['last_seed']) for r in rows) + 1
    return base


def head_commit():
    """HEAD's short hash, with '+' when tracked files (but the ledger) differ from it."""
    head = subprocess.run(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'],
                          capture_output=True, text=True).stdout.strip() or '?'
    dirty = subprocess.run(['git', '-C', REPO, 'diff', '--quiet', 'HEAD', '--', '.',
                            ':!' + os.path.relpath(LEDGER, REPO)]).returncode == 1
    return head + ('+' if dirty else '')


def ledger_append(path, base, stats, elapsed, jobs, commit):
    """Records a run (one line) of commit (HEAD when it started) unless its seeds meet a
    recorded run's; prints the totals."""
    rows = ledger_rows(path)
    last = stats.last_seed if stats.last_seed is not None else base - 1
    clash = ledger_overlap(rows, base, last) if last >= base else None
    if last < base or clash:
        print('ledger: not recorded (%s)' % ('no seed tried' if last < base else
              'seeds %d..%d meet the run of %s' % (base, last, clash['date'])))
    else:
        row = dict(date=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()), commit=commit,
                   first_seed=base, last_seed=last, jobs=jobs, models=stats.models,
                   rejects=stats.rejects, failing_models=len(stats.failures),
                   new_failures=sum(1 for *_, k in stats.failures if k is None),
                   checks_passed=stats.passed, checks_failed=stats.failed,
                   seconds='%.0f' % elapsed)
        new = not os.path.exists(path)
        with open(path, 'a') as f:
            if new:
                f.write('\t'.join(LEDGER_COLUMNS) + '\n')
            f.write('\t'.join(str(row[c]) for c in LEDGER_COLUMNS) + '\n')
        rows.append({k: str(v) for k, v in row.items()})
    models = sum(int(r['models']) for r in rows)
    failing = sum(int(r['failing_models']) for r in rows)
    print('ledger %s: %d runs, %d models, %d failing models (%.2g per model), %.0f s' % (
        os.path.relpath(path, REPO), len(rows), models, failing, failing / max(models, 1),
        sum(float(r['seconds']) for r in rows)))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seconds', type=float)
    ap.add_argument('--count', type=int)
    ap.add_argument('--seed', type=int, help='first seed (default: from the clock)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--save', default=os.path.join(REPO, 'tests', 'regress', 'diff'))
    ap.add_argument('--known', default=os.path.join(REPO, 'tests', 'regress', 'diff', 'README.md'))
    ap.add_argument('--no-shrink', action='store_true')
    ap.add_argument('-v', '--verbose', action='store_true')
    ap.add_argument('--profile', action='store_true', help='print wall ms/model per stage')
    ap.add_argument('--ledger', default=LEDGER,
                    help='the run is appended to this TSV unless its seeds meet a recorded run')
    ap.add_argument('--no-ledger', action='store_true')
    ap.add_argument('--replay', metavar='FILE',
                    help='re-run the row of FILE in --known (its folder) and print every check')
    a = ap.parse_args(argv)
    if a.replay:
        return replay_main(a.replay, a.known)
    if a.count is None and a.seconds is None:
        a.seconds = 60
    base = a.seed if a.seed is not None else clock_seed(ledger_rows(a.ledger))
    commit = head_commit()
    print('seeds from %d, %d jobs, commit %s' % (base, a.jobs, commit), flush=True)
    opts = {'save': a.save, 'shrink': not a.no_shrink, 'verbose': a.verbose,
            'skip': known_seeds(a.known), 'known_sigs': known_signatures(a.known)}
    stats, elapsed = run(base, a.count, a.seconds, a.jobs, opts)
    print_summary(stats, elapsed)
    if a.profile:
        print_profile(stats)
    if not a.no_ledger:
        ledger_append(a.ledger, base, stats, elapsed, a.jobs, commit)
    return 1 if any(known is None for *_, known in stats.failures) else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
