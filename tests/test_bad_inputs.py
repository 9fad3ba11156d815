#!/usr/bin/python3
"""test_bad_inputs.py - ppqfmt on hostile inputs and unwritable outputs.

The input side comes from scripts/make_bad_inputs.py (regenerated into a fresh
temporary folder, or taken from --cases DIR). For each model, ppqfmt runs with
`-o` into an empty temporary folder, under a time limit and an address-space
limit (1 GiB plus the input's size; skipped for sanitizer builds and wrapper
scripts, which need more), and the test checks:

  - no crash: killed by a signal, an exit code outside 0..4, or sanitizer
    output on stderr is a crash;
  - the exit code is one the case allows (README: 2 for a bad model);
  - on failure, stderr is exactly one line "ppqfmt: ..." that matches what the
    case expects it to name (node or tensor); on success, every stderr line
    starts with "ppqfmt: ";
  - on failure the output folder is still empty (no partial or temporary
    file); on success the output exists and passes the case's extra checks;
  - the input file (and any external data beside it) is unchanged.

The output side: -o under a regular file, in /proc and /sys (these fail even
for root), a write failing half-way (RLIMIT_FSIZE: EFBIG), a folder as the
output, /dev/full as -o and as standard output (exit 3), and -o naming the
input by several paths (exit 1, input unchanged).

Prints a table and, as its last line, "test_bad_inputs: N passed, M failed"
(plus the count of expected failures, listed above it). Exit status 1 on any
failure. Environment: PPQFMT (default build/ppqfmt).
"""
import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.path.abspath(os.environ.get("PPQFMT", os.path.join(ROOT, "build", "ppqfmt")))
TIMEOUT = 60.0
AS_LIMIT = 1 << 30
GNU_TIME = "/usr/bin/time"


def time_limit(timeout):
    """Seconds a run may take: sanitizer builds and valgrind run 10x slower."""
    return (timeout or TIMEOUT) * (1 if LIMIT else 10)


def limit_memory():
    """Is an address-space limit safe for this binary? Sanitizer builds reserve
    terabytes of shadow memory, wrappers (valgrind) need their own."""
    try:
        with open(PPQFMT, "rb") as f:
            head = f.read(4)
            if head[:2] == b"#!" or head != b"\x7fELF":
                return False
            body = f.read()
            return b"__asan_init" not in body and b"__msan_init" not in body
    except OSError:
        return False


LIMIT = limit_memory()


class Result:
    def __init__(self, rc, stdout, stderr, seconds, maxrss_kb):
        self.rc, self.stdout, self.stderr = rc, stdout, stderr
        self.seconds, self.maxrss_kb = seconds, maxrss_kb

    @property
    def lines(self):
        return [l for l in self.stderr.decode("utf-8", "replace").splitlines()]


def run(args, stdin=None, stdout_path=None, input_size=0, cwd=None, fsize=None, timeout=None):
    """Runs ppqfmt with args; returns a Result (rc < 0: killed by a signal;
    rc None: timed out). Measures the child's peak RSS with wait4."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        stdout_f = open(stdout_path, "wb") if stdout_path else out
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "exitcode=99:detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "exitcode=99:print_stacktrace=1")

        def pre():
            if LIMIT:
                lim = AS_LIMIT + input_size
                resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if fsize is not None:  # writes past fsize bytes fail with EFBIG
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

        # GNU time measures ppqfmt's own peak RSS (wait4 on this child would
        # also count the memory of the Python process it was forked from).
        timefile = tempfile.NamedTemporaryFile(delete=False) if os.access(GNU_TIME, os.X_OK) else None
        cmd = [PPQFMT] + args
        if timefile:
            cmd = [GNU_TIME, "-f", "%M", "-o", timefile.name] + cmd
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             stdout=stdout_f, stderr=err, preexec_fn=pre, cwd=cwd, env=env,
                             start_new_session=True)
        rc, rss = None, 0
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(status)
                rss = usage.ru_maxrss
                p.returncode = rc  # reaped here: keep Popen from waiting again
                break
            if time.monotonic() - t0 > time_limit(timeout):
                os.killpg(p.pid, signal.SIGKILL)  # ppqfmt and the time wrapper
                os.wait4(p.pid, 0)
                p.returncode = -9
                rc = None
                break
            time.sleep(0.005)
        secs = time.monotonic() - t0
        if timefile:
            with open(timefile.name) as f:
                report = f.read()
            os.unlink(timefile.name)
            m = re.search(r"terminated by signal (\d+)", report)
            if m and rc is not None:
                rc = -int(m.group(1))
            lines = report.strip().splitlines()
            if lines and lines[-1].isdigit():
                rss = int(lines[-1])
        if stdout_path:
            stdout_f.close()
        err.seek(0)
        out.seek(0)
        res = Result(rc, out.read(), err.read(), secs, rss)
        res.limit = time_limit(timeout)
        return res


def tree_hash(path):
    """Hash of a file, or of every file under a folder (names and bytes; symlinks
    by target), so that 'the input is unchanged' covers external data too."""
    h = hashlib.sha256()
    if os.path.isdir(path):
        for dirpath, dirnames, filenames in sorted(os.walk(path)):
            dirnames.sort()
            for n in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
                p = os.path.join(dirpath, n)
                h.update(os.path.relpath(p, path).encode() + b"\0")
                if os.path.islink(p):
                    h.update(b"link:" + os.readlink(p).encode())
                elif not stat.S_ISREG(os.lstat(p).st_mode):
                    h.update(b"special:%o" % os.lstat(p).st_mode)  # a FIFO: never open it
                else:
                    with open(p, "rb") as f:
                        h.update(f.read())
    else:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def crashed(r):
    if r.rc is None:
        return "timeout after %.0fs (hang)" % r.limit
    if r.rc < 0:
        return "killed by signal %d" % -r.rc
    if r.rc >= 128 or r.rc not in (0, 1, 2, 3, 4):
        return "exit code %d (crash or sanitizer report)" % r.rc
    text = r.stderr.decode("utf-8", "replace")
    if "Sanitizer" in text or "runtime error:" in text or "LeakSanitizer" in text:
        return "sanitizer report on stderr"
    return None


def check_messages(r, pattern):
    """Problems with stderr: one 'ppqfmt: ' line matching pattern on failure,
    only 'ppqfmt: ' lines on success."""
    lines = r.lines
    if r.rc != 0:
        if len(lines) != 1:
            return "expected exactly one stderr line, got %d" % len(lines)
        if not lines[0].startswith("ppqfmt: "):
            return "stderr line does not start with 'ppqfmt: '"
        if pattern and not re.search(pattern, lines[0][len("ppqfmt: "):], re.I):
            return "message does not match /%s/" % pattern
        return None
    bad = [l for l in lines if not l.startswith("ppqfmt: ")]
    return "stderr line without 'ppqfmt: ': %r" % bad[0][:80] if bad else None


def listing(folder):
    return sorted(os.listdir(folder))


# ------------------------------------------------------------ output checks
def output_checks(kind, out_path, r):
    import onnx
    if kind is None:
        return None
    try:
        m = onnx.load(out_path, load_external_data=False)
    except Exception as e:  # noqa: BLE001 - any parse failure is the finding
        return "onnx cannot parse the output: %s" % str(e).splitlines()[0][:120]
    if kind == "ssa":
        seen = set(i.name for i in m.graph.input) | set(t.name for t in m.graph.initializer)
        for n in m.graph.node:
            for o in n.output:
                if o and o in seen:
                    return "output is not SSA: '%s' written twice" % o
                seen.add(o)
    if kind == "constant-kept":
        if not any(n.op_type == "Constant" for n in m.graph.node):
            return "the invalid Constant was folded"
        if not any(re.search(r"warning.*value_float.*value_int", l) for l in r.lines):
            return "no warning naming both value attributes of the Constant"
        return None
    if kind == "bn-kept":
        if not any(n.op_type == "BatchNormalization" for n in m.graph.node):
            return "the mismatched BatchNormalization was folded or converted"
        if not any("warning" in l for l in r.lines):
            return "BatchNormalization left in place without a warning"
        return None
    try:
        onnx.checker.check_model(out_path, full_check=True)
    except Exception as e:  # noqa: BLE001
        return "checker: %s" % str(e).splitlines()[0][:120]
    if kind == "idempotent":
        again = out_path + ".again.onnx"
        r2 = run([out_path, "-o", again])
        if r2.rc != 0:
            return "formatting the output again fails: exit %s" % r2.rc
        with open(out_path, "rb") as a, open(again, "rb") as b:
            if a.read() != b.read():
                return "not idempotent: formatting the output again changes it"
    return None


# ------------------------------------------------------------ the runs
class Table:
    def __init__(self, only=None):
        self.only = only
        self.rows = []
        self.passed = self.failed = 0
        self.xfailed = []
        self.xpassed = []

    def add(self, name, r, problem, xfail=None):
        if self.only and not re.search(self.only, name):
            return
        line = r.lines[0] if r and r.lines else ""
        code = "-" if r is None else ("T/O" if r.rc is None else str(r.rc))
        if problem and xfail:
            status = "xfail"
            self.xfailed.append((name, problem, xfail))
        elif problem:
            status = "FAIL"
            self.failed += 1
        else:
            status = "ok"
            self.passed += 1
            if xfail:
                self.xpassed.append(name)
        rss = "%dM" % (r.maxrss_kb // 1024) if r and r.maxrss_kb else "-"
        self.rows.append((status, name, code, rss, line, problem or ""))

    def print(self):
        w = max([len(r[1]) for r in self.rows] + [4])
        print("%-5s  %-*s  %4s  %5s  %s" % ("", w, "case", "exit", "rss", "stderr (first line)"))
        for status, name, code, rss, line, problem in self.rows:
            print("%-5s  %-*s  %4s  %5s  %s" % (status, w, name, code, rss, line[:110]))
            if problem:
                print("%-5s  %-*s        -> %s" % ("", w, "", problem))
        if self.xfailed:
            print("expected failures (xfail), %d:" % len(self.xfailed))
            for name, problem, why in self.xfailed:
                print("  %s: %s [%s]" % (name, problem, why))
        if self.xpassed:
            print("unexpectedly passing (remove their xfail): %s" % ", ".join(self.xpassed))
        extra = ", %d expected failures" % len(self.xfailed) if self.xfailed else ""
        print("test_bad_inputs: %d passed, %d failed%s" % (self.passed, self.failed, extra))


def input_case(t, case, casedir, tmp):
    path = os.path.join(casedir, case["path"])
    watched = os.path.dirname(path) if "/" in case["path"] else path
    before = tree_hash(watched)
    outdir = tempfile.mkdtemp(dir=tmp, prefix="out-")
    out = os.path.join(outdir, "out.onnx")
    r = run(case.get("args", []) + [path, "-o", out], input_size=os.path.getsize(path),
            timeout=case.get("timeout"))
    problem = crashed(r)
    if not problem and r.rc not in case["expect"]:
        problem = "exit %d, expected %s" % (r.rc, "/".join(map(str, case["expect"])))
    if not problem:
        problem = check_messages(r, case.get("stderr"))
    if not problem and r.rc != 0 and listing(outdir):
        problem = "output folder not empty after a failure: %s" % listing(outdir)
    if not problem and r.rc == 0:
        if not os.path.exists(out):
            problem = "exit 0 but no output file"
        else:
            problem = output_checks(case.get("check"), out, r)
    if tree_hash(watched) != before:
        problem = (problem + "; " if problem else "") + "THE INPUT CHANGED"
    shutil.rmtree(outdir, ignore_errors=True)
    t.add(case["name"], r, problem, case.get("xfail"))


def copy_case(t, case, casedir, tmp):
    """--passes=none writes the input back unchanged after checking it without
    building the graph (onnx/load_check.c); --verify-ir makes ppqfmt build it.
    Both must give the same verdict: the same exit code, the same message and,
    on success, the same bytes."""
    path = os.path.join(casedir, case["path"])
    results = []
    for extra in ([], ["--verify-ir"]):
        outdir = tempfile.mkdtemp(dir=tmp, prefix="copy-")
        out = os.path.join(outdir, "out.onnx")
        # graph_verify (--verify-ir) is slow on a 100k-use fan-out
        r = run(["--passes=none"] + extra + [path, "-o", out], input_size=os.path.getsize(path),
                timeout=case.get("timeout") if not extra else 4 * TIMEOUT)
        data = open(out, "rb").read() if os.path.exists(out) else None
        results.append((r, r.rc, r.stderr, data, listing(outdir)))
        shutil.rmtree(outdir, ignore_errors=True)
    (r, *fast), (_, *full) = results
    problem = crashed(r)
    if not problem and fast != full:
        problem = "--passes=none: exit %s %r, with the graph built: exit %s %r" % (
            fast[0], fast[1][-200:], full[0], full[1][-200:])
    t.add(case["name"] + "/copy", r, problem)


def expect(r, codes, pattern=None, empty_dir=None, dir_allowed=()):
    problem = crashed(r)
    if not problem and r.rc not in codes:
        problem = "exit %d, expected %s" % (r.rc, "/".join(map(str, codes)))
    if not problem:
        problem = check_messages(r, pattern)
    if not problem and empty_dir and [n for n in listing(empty_dir) if n not in dir_allowed]:
        problem = "files left behind: %s" % [n for n in listing(empty_dir) if n not in dir_allowed]
    return problem


def output_cases(t, model, tmp, casedir):
    """The output side: places that really fail for root, and -o INPUT."""
    size = os.path.getsize(model)
    d = tempfile.mkdtemp(dir=tmp, prefix="o-")
    plain = os.path.join(d, "afile")
    with open(plain, "w") as f:
        f.write("not a folder\n")
    r = run([model, "-o", os.path.join(plain, "out.onnx")], input_size=size)
    t.add("out_under_regular_file", r, expect(r, (3,), r"afile|directory", d, ("afile",)))

    for where in ("/proc/ppqfmt-test-out.onnx", "/sys/ppqfmt-test-out.onnx"):
        r = run([model, "-o", where], input_size=size)
        problem = expect(r, (3,), re.escape(where.rsplit("/", 1)[0]) + "|" + re.escape(where))
        if os.path.exists(where):
            problem = (problem or "") + " %s exists afterwards" % where
        t.add("out_in_" + where.split("/")[1], r, problem)

    # a write that fails half-way (file size limit: EFBIG): no partial file
    r = run([model, "-o", os.path.join(d, "out.onnx")], input_size=size, fsize=200)
    t.add("out_write_fails_midway", r, expect(r, (3,), r"out\.onnx|too large", d, ("afile",)))

    r = run([model, "-o", d], input_size=size)
    t.add("out_is_a_folder", r, expect(r, (3,), re.escape(d), d, ("afile",)))

    r = run([model, "-o", "/dev/full"], input_size=size)
    t.add("out_dev_full", r, expect(r, (3,), r"/dev/full|space"))

    r = run([model, "-o", "-"], stdout_path="/dev/full", input_size=size)
    t.add("stdout_dev_full", r, expect(r, (3,), r"standard output|space"))

    r = run([model], stdout_path="/dev/full", input_size=size)
    t.add("stdout_default_dev_full", r, expect(r, (3,), r"standard output|space"))

    # -o naming the input: refused, input untouched, nothing created beside it
    d = tempfile.mkdtemp(dir=tmp, prefix="same-")
    inp = os.path.join(d, "model.onnx")
    shutil.copy(model, inp)
    os.symlink("model.onnx", os.path.join(d, "link.onnx"))
    os.link(inp, os.path.join(d, "hard.onnx"))
    os.mkdir(os.path.join(d, "sub"))
    before = tree_hash(d)
    for name, out in [("out_is_input", inp), ("out_is_input_dotdot", os.path.join(d, "sub", "..", "model.onnx")),
                      ("out_is_input_relative", "model.onnx"), ("out_is_input_symlink", os.path.join(d, "link.onnx")),
                      ("out_is_input_hardlink", os.path.join(d, "hard.onnx"))]:
        r = run([inp, "-o", out], input_size=size, cwd=d)
        problem = expect(r, (1,), r"input", d, ("model.onnx", "link.onnx", "hard.onnx", "sub"))
        if tree_hash(d) != before:
            problem = (problem + "; " if problem else "") + "THE INPUT CHANGED"
        t.add(name, r, problem)

    # a model with external data cannot go to standard output
    ext = os.path.join(casedir, "ext_ok", "model.onnx")
    if os.path.exists(ext):
        r = run([ext, "-o", "-"], input_size=os.path.getsize(ext))
        problem = expect(r, (1, 3), r"external")
        if not problem and r.stdout:
            problem = "%d bytes on standard output after a failure" % len(r.stdout)
        t.add("ext_data_to_stdout", r, problem)

        # -o naming the model's external data file: that file is input too
        d = tempfile.mkdtemp(dir=tmp, prefix="extout-")
        shutil.copytree(os.path.dirname(ext), os.path.join(d, "m"))
        before = tree_hash(os.path.join(d, "m"))
        r = run([os.path.join(d, "m", "model.onnx"), "-o", os.path.join(d, "m", "weights.bin")],
                input_size=os.path.getsize(ext))
        problem = expect(r, (1,), r"weights\.bin|input|external")
        if tree_hash(os.path.join(d, "m")) != before:
            problem = (problem + "; " if problem else "") + "THE INPUT'S EXTERNAL DATA CHANGED"
        t.add("out_is_external_data", r, problem)

    # copying external data beside the output fails half-way: nothing left
    big = os.path.join(casedir, "ext_big_ok", "model.onnx")
    if os.path.exists(big):
        d = tempfile.mkdtemp(dir=tmp, prefix="extbig-")
        r = run([big, "-o", os.path.join(d, "out.onnx")], input_size=os.path.getsize(big), fsize=4096)
        t.add("out_ext_copy_fails_midway", r, expect(r, (3,), r"weights\.bin|out\.onnx|too large", d))

    # input side, not about the model's bytes
    r = run([os.path.join(tmp, "does-not-exist.onnx"), "-o", os.path.join(tmp, "x.onnx")])
    problem = expect(r, (2,), r"does-not-exist")
    if os.path.exists(os.path.join(tmp, "x.onnx")):
        problem = "output created for a missing input"
    t.add("input_missing", r, problem)
    r = run([d, "-o", os.path.join(tmp, "y.onnx")])
    t.add("input_is_a_folder", r, expect(r, (2,), re.escape(d)))
    r = run(["/dev/null", "-o", os.path.join(tmp, "z.onnx")])
    t.add("input_dev_null", r, expect(r, (2,), r"/dev/null|empty|graph"))
    with open(os.devnull, "rb") as devnull:
        r = run(["-", "-o", os.path.join(tmp, "w.onnx")], stdin=devnull)
    t.add("stdin_empty", r, expect(r, (2,), r"standard input|stdin|empty|-|graph"))
    # a file that reports size 0 but has bytes is read, not called empty
    r = run(["/proc/self/status", "-o", os.path.join(tmp, "p.onnx")])
    t.add("input_proc_file", r, expect(r, (2,), r"^/proc/self/status: not an ONNX model"))
    # a valid model through a named pipe: read to its end (spooled), formatted
    fifo = os.path.join(tmp, "model.fifo")
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer
        with open(fifo, "wb") as f, open(model, "rb") as m:
            f.write(m.read())
        os._exit(0)
    r = run([fifo, "-o", os.path.join(tmp, "fifo.out.onnx")], input_size=size)
    os.waitpid(pid, 0)
    t.add("input_fifo", r, expect(r, (0,)) or output_checks("checker", os.path.join(tmp, "fifo.out.onnx"), r))
    r = run(["--no-such-option", model])
    t.add("usage_unknown_option", r, expect(r, (1,), r"no-such-option|option"))
    r = run(["--passes=nope", model, "-o", os.path.join(tmp, "v.onnx")])
    t.add("usage_unknown_pass", r, expect(r, (1,), r"nope"))
    # control: the valid model through a pipe
    with open(model, "rb") as f:
        r = run(["-", "-o", "-"], stdin=f, input_size=size)
    t.add("control_stdin_to_stdout", r, expect(r, (0,)) or (None if r.stdout else "no output"))


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", help="use hostile models already made by make_bad_inputs.py in this folder")
    ap.add_argument("--only", help="run only cases whose name matches this regular expression")
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    args = ap.parse_args()
    TIMEOUT = args.timeout
    if not os.path.exists(PPQFMT):
        print("no %s (build it with make)" % PPQFMT)
        print("test_bad_inputs: 0 passed, 1 failed")
        return 1
    tmp = tempfile.mkdtemp(prefix="ppqfmt-bad-")
    try:
        casedir = args.cases
        if not casedir:
            casedir = os.path.join(tmp, "cases")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_bad_inputs.py"), casedir],
                           check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(casedir, "cases.json")) as f:
            cases = json.load(f)
        if not LIMIT:
            print("note: %s is a sanitizer build or a wrapper: no address-space limit" % PPQFMT)
        t = Table(args.only)
        for case in cases:
            if args.only and not re.search(args.only, case["name"]):
                continue
            input_case(t, case, casedir, tmp)
            if not case.get("args"):
                copy_case(t, case, casedir, tmp)
        # the output side: quick, always run (rows filtered by --only)
        import onnx  # the base model, valid, from make_bad_inputs' builder
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
        import make_bad_inputs
        base = os.path.join(tmp, "base.onnx")
        onnx.save(make_bad_inputs.base_model(), base)
        r = run([base, "-o", os.path.join(tmp, "base.out.onnx")])
        problem = expect(r, (0,)) or output_checks("idempotent", os.path.join(tmp, "base.out.onnx"), r)
        t.add("control_base_model", r, problem)
        output_cases(t, base, tmp, casedir)
        t.print()
        return 1 if t.failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
