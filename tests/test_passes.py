#!/usr/bin/python3
"""End-to-end tests of the passes: the runner of the pass modules in
tests/passes/ (one per pass: fuse_bn.py for fuse-bn, ...; pipeline.py for the
models that exercise several passes at once).

Usage: tests/test_passes.py [--keep DIR] [--jobs N] [PATTERN ...]

Each pass module with SPECS (the legacy passes' modules have an EXPECT
instead: tests/test_legacy.py) registers its test models (MODELS: testdata/<pass>/<case>.onnx,
made by scripts/make_testdata.py) and says what each must look like after
formatting (SPECS[case]). For every model this runs ppqfmt (build/ppqfmt, or
$PPQFMT) with the default passes, with only the module's pass (--passes=PASS)
and with --passes=none, and checks each output for:
  - structure: what must be gone, kept, renamed, or turned into initializers.
    Expected values are read from the INPUT model (the Constant node's
    attribute, the input initializer), never from ppqfmt's output;
  - validity: onnx.checker.check_model(full_check=True);
  - interface: graph input/output names, order and types unchanged; model
    fields (ir_version, opset_import, producer, graph name, doc strings) kept;
    relative order of surviving nodes kept;
  - numbers: onnxruntime (scripts/ortcheck.py) gives the same outputs; models
    with a scalar bool input (If condition) are run with it false and true;
    folded weights are also compared with a float64 fold computed here from
    the input's parameters; models that are not SSA (de-inplace; onnxruntime
    refuses them) are compared with a numpy reference instead;
  - idempotence (format the output again: same bytes) and determinism (a
    second run: same bytes); --passes=none gives the input bytes back.
Each check prints `ok NAME` or `FAIL NAME: reason` (NAME starts with
<pass>/<case>); the last line is `test_passes: N passed, M failed`; the exit
status is 1 if anything failed.
PATTERN (substring of <pass>/<case>) restricts the models tested.  --keep DIR
keeps outputs.  --jobs N (default: the CPUs this process may use) shares the
models among N forked workers; each worker's lines are printed whole when it
ends.  $PPQFMT_TESTDATA: another testdata/ folder.
Run with Debian's /usr/bin/python3 (python3-onnx).

The keys of a SPECS entry (tests/passes/<pass>.py):
  single:  checks after --passes=PASS
  default: checks after the default pipeline
  both:    checks after both
  warns:   names the single-pass run must mention on stderr (a warning)
  quiet:   why the single-pass run must print nothing on stderr (no warning)
  reports: what the single-pass run's --report must say (on stderr)
  reference: fn(feeds) -> {output: ndarray}, the numpy meaning of a model
           onnxruntime refuses (not SSA); replaces the equivalence check
  no_numbers: why onnxruntime cannot run even the output (no numbers check)
  plain_checker: why the checker runs without shape inference (python3-onnx
           1.12 cannot infer through a sparse_initializer; onnxruntime can)
  single_not_ssa: why the single-pass output stays not SSA (de-inplace did
           not run): no checker, no numbers; it must still load (idempotent)
  opsets:  {"default"|"single": {domain: version}} the opset imports a run sets
  report_json: also check that --report=json writes JSON on stderr
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

import onnx

import passes  # tests/passes/, beside this file
import testlib  # tests/, beside this file
from passes.common import (PPQFMT, REPO, RUN_TIMEOUT, check_equiv, check_full,
                           check_model_fields, check_order, check_quiet, check_reference,
                           check_warns)

TESTDATA = os.environ.get("PPQFMT_TESTDATA", os.path.join(REPO, "testdata"))

T = testlib.Tally("test_passes")
report, check = T.report, T.check

# one model to test: id <pass module>/<case>, path (relative to TESTDATA), its
# SPECS entry (None: it has none), the module's pass (None: default pipeline only)
Model = collections.namedtuple("Model", "id path spec pname")


# ---------------------------------------------------------------------------
# running ppqfmt
# ---------------------------------------------------------------------------

def ppqfmt(opts, src, dst):
    """Run ppqfmt; None on exit 0 with dst written, else an error string."""
    if os.path.exists(dst):
        os.unlink(dst)
    cmd = [PPQFMT] + opts + [src, "-o", dst]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timed out after %ds: %s" % (RUN_TIMEOUT, " ".join(cmd))
    except OSError as e:
        return "cannot run %s: %s" % (PPQFMT, e)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[-300:])
    if not os.path.exists(dst):
        return "exit 0 but no output file %s" % dst
    return None


def read(path):
    with open(path, "rb") as f:
        return f.read()


def same_bytes(a, b, what):
    da, db = read(a), read(b)
    if da == db:
        return None
    i = next((k for k in range(min(len(da), len(db))) if da[k] != db[k]), min(len(da), len(db)))
    return "%s: %d vs %d bytes, first difference at byte %d" % (what, len(db), len(da), i)


def test_run(model, run, opts, specs, src, workdir, reference=None, no_numbers=None,
             plain_checker=None, not_ssa=None, opsets=None):
    """Format src with opts, then run the generic and the structural checks.
    reference: see the SPECS keys above (numpy meaning of a model onnxruntime refuses);
    no_numbers: why onnxruntime cannot run the model at all (no numbers check);
    plain_checker: why the checker runs without shape inference;
    not_ssa: why the output stays not SSA (neither the checker nor onnxruntime
    take it; the idempotence check still loads it into ppqfmt);
    opsets: the opset imports this run sets ({domain: version})."""
    tag = "%s/%s" % (model, run)
    base = model.replace("/", ".")
    dst = os.path.join(workdir, "%s.%s.onnx" % (base, run))
    if not check("%s: ppqfmt exits 0" % tag, ppqfmt, opts, src, dst):
        return
    inp = onnx.load(src)
    try:
        out = onnx.load(dst)
    except Exception as e:
        report("%s: output loads" % tag, e)
        return
    if not_ssa:
        no_numbers = not_ssa
    elif plain_checker:  # python3-onnx cannot run shape inference on it
        check("%s: checker (no shape inference: %s)" % (tag, plain_checker), check_full, dst,
              False)
    else:
        check("%s: full checker" % tag, check_full, dst)
    check("%s: graph inputs/outputs unchanged" % tag, testlib.check_interface, inp, out)
    check("%s: model fields kept" % tag, check_model_fields, inp, out, opsets)
    check("%s: surviving node order kept" % tag, check_order, inp, out)
    for label, fn in specs:
        check("%s: %s" % (tag, label), fn, inp, out)
    if no_numbers:
        pass  # onnxruntime cannot run such models: structure and checker only
    elif reference is None:
        check("%s: onnxruntime equivalent" % tag, check_equiv, src, dst, inp)
    else:
        check("%s: onnxruntime matches the numpy reference" % tag, check_reference,
              src, dst, inp, reference)

    again = os.path.join(workdir, "%s.%s.again.onnx" % (base, run))
    check("%s: idempotent" % tag, lambda: ppqfmt(opts, dst, again)
          or same_bytes(dst, again, "formatting the output again changed it"))
    rerun = os.path.join(workdir, "%s.%s.rerun.onnx" % (base, run))
    check("%s: deterministic" % tag, lambda: ppqfmt(opts, src, rerun)
          or same_bytes(dst, rerun, "two runs differ"))


def test_none(model, src, workdir):
    dst = os.path.join(workdir, "%s.none.onnx" % model.replace("/", "."))
    check("%s/none: --passes=none is byte-identical" % model,
          lambda: ppqfmt(["--passes=none"], src, dst) or same_bytes(src, dst, "output differs"))


def test_report(src, workdir):
    """--report=json writes parseable JSON on stderr."""
    dst = os.path.join(workdir, "report.onnx")
    p = subprocess.run([PPQFMT, "--report=json", src, "-o", dst], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-300:])
    text = p.stderr.decode("utf-8", "replace").strip()
    try:
        json.loads(text)
        return None
    except ValueError:
        pass
    lines = [x for x in text.splitlines() if x.strip()]
    try:
        for x in lines:
            json.loads(x)
        return None if lines else "nothing on stderr"
    except ValueError as e:
        return "stderr is not JSON (%s): %r" % (e, text[:200])


def test_model(m, workdir):
    """Every run and check of one model (see the module doc)."""
    spec, model = m.spec, m.id
    if spec is None:
        report("%s: has expectations" % model, "no entry in SPECS of tests/passes/%s.py" %
               model.split("/")[0])
        return
    src = os.path.join(TESTDATA, m.path)
    both = spec.get("both", [])
    extra = (spec.get("reference"), spec.get("no_numbers"), spec.get("plain_checker"))
    opsets = spec.get("opsets", {})
    test_run(model, "default", [], both + spec.get("default", []), src, workdir,
             *extra, opsets=opsets.get("default"))
    pname = m.pname
    if pname:
        test_run(model, pname, ["--passes=" + pname],
                 both + spec.get("single", []), src, workdir, *extra,
                 not_ssa=spec.get("single_not_ssa"), opsets=opsets.get("single"))
        if spec.get("warns"):
            check("%s/%s: warns about %s" % (model, pname, ",".join(spec["warns"])),
                  check_warns, ["--passes=" + pname], src, workdir, spec["warns"])
        if spec.get("quiet"):
            check("%s/%s: no warning (%s)" % (model, pname, spec["quiet"]),
                  check_quiet, ["--passes=" + pname], src, workdir)
        if spec.get("reports"):
            check("%s/%s: --report says %s" % (model, pname, "; ".join(spec["reports"])),
                  check_warns, ["--report", "--passes=" + pname], src, workdir, spec["reports"])
    test_none(model, src, workdir)
    if spec.get("report_json"):
        check("%s: --report=json is JSON on stderr" % model, test_report, src, workdir)


def discover(patterns):
    """(models, missing): a Model for each case the pass modules with SPECS
    register and for each other .onnx in their folders (it has no SPECS
    entry, which fails); see passes.discover."""
    found, missing = passes.discover(TESTDATA, "SPECS", patterns)
    return [Model(mid, path, mod.SPECS.get(mid.split("/", 1)[1]) if registered else None,
                  mod.PASS) for mod, mid, path, registered in found], missing


def test_shared(models, workdir, jobs):
    """Worker k of jobs (a forked process) tests models k, k+jobs, ...; its
    lines go to a file and its counts to another, which the parent prints and
    adds up. The models are independent: each writes only its own outputs.
    Under valgrind (make check-valgrind) this halves the wall time on two cores."""
    kids = []
    for k in range(jobs):
        lines = tempfile.NamedTemporaryFile(mode="w+", prefix="test_passes_out", delete=False)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                sys.stdout = lines
                T.passed = T.failed = 0
                for m in models[k::jobs]:
                    test_model(m, workdir)
                lines.write("\n%d %d\n" % (T.passed, T.failed))
                lines.close()
                code = 0
            finally:
                os._exit(code)
        kids.append((pid, lines.name))
    for pid, path in kids:
        _, status = os.waitpid(pid, 0)
        with open(path) as f:
            text = f.read().rstrip("\n").split("\n")
        os.unlink(path)
        if status != 0 or not text or len(text[-1].split()) != 2:
            report("worker %d" % pid, "ended with status %d before its counts" % status)
            continue
        sys.stdout.write("".join(x + "\n" for x in text[:-2]))
        passed, failed = map(int, text[-1].split())
        T.passed += passed
        T.failed += failed


def main(argv):
    keep, patterns = None, []
    jobs = len(os.sched_getaffinity(0))
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--keep" and args:
            keep = args.pop(0)
        elif a == "--jobs" and args:
            jobs = max(1, int(args.pop(0)))
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            patterns.append(a)

    models, missing = discover(patterns)
    if not (os.path.isfile(PPQFMT) and os.access(PPQFMT, os.X_OK)):
        report("setup", "ppqfmt not found at %s (build it, or set PPQFMT)" % PPQFMT)
    elif not models:
        report("setup", "no models in %s (run scripts/make_testdata.py)" % TESTDATA)
    else:
        workdir = keep or tempfile.mkdtemp(prefix="test_passes_")
        os.makedirs(workdir, exist_ok=True)
        try:
            if jobs > 1 and len(models) > 1:
                test_shared(models, workdir, min(jobs, len(models)))
            else:
                for m in models:
                    test_model(m, workdir)
            if missing and not patterns:
                report("testdata complete", "models missing from %s: %s" % (TESTDATA, missing))
        finally:
            if keep is None:
                shutil.rmtree(workdir, ignore_errors=True)

    return T.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
