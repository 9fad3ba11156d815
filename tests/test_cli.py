#!/usr/bin/python3
"""Tests of ppqfmt's command line: what a person or a script sees.

Usage: tests/test_cli.py

Runs build/ppqfmt (or $PPQFMT) on testdata/sample.onnx and a few other
models in testdata/, and checks:
  - --help fits one screen (24 lines of 80 columns), names every exit code, and lists the same long
    and short options as the man page ppqfmt.1; every pass of --list-passes
    is in the man page's PASSES section;
  - exit codes: 1 usage error (unknown option or pass, no input), 2 missing
    or non-ONNX input, 3 output into a missing folder or a binary model onto
    a terminal, 0 success; an error is one "ppqfmt: ..." line on stderr, also
    with -q;
  - streams: the model and --print on stdout, messages on stderr, nothing at
    all on stderr after a successful run without --report or -v; --print
    without -o writes no model;
  - --report=json is one JSON document on stderr with the documented keys;
    with --check its "check" holds runs, seed and per output errors and verdicts;
    the text report has one line per pass and marks warnings; -q drops them;
  - --no-P, --disable=P and --passes=(all but P) give the same bytes;
  - '-' for stdin and stdout gives the same bytes as files;
  - colour on a terminal's stderr unless NO_COLOR is non-empty; the progress
    line for a model over 1 GiB (a sparse file), only on a terminal;
  - --print shows every node name and the key attributes;
  - issue 11 item 11: getopt's own complaint for an unknown short option,
    unknown pass names with the nearest registry name suggested, '_' for '-'
    in pass names, empty pass lists refused, options without effect warned
    about (once, on stderr, or in the JSON), a terminal on stdout refused
    before the model is read;
  - item 12: --report=json keeps stderr one JSON document with -v and option
    warnings; JSON strings are UTF-8 with control characters escaped; the text
    report, warnings and --print show control characters and bytes that are
    not UTF-8 as visible escapes and cut a 1 MB name with "…";
  - item 13: the text report names each pass once, in pipeline order, with
    totals over the pipeline's rounds; "raised opset 9 → 11"; -v names each
    pass once.
  - files: SIGINT/SIGTERM/SIGHUP during a big write and an input truncated
    while read leave no temporary file (death by the signal; exit 2); -o
    follows live and dangling symlinks, keeps an existing file's mode, and
    explains a read-only folder; standard input is spooled (peak RSS far
    below the model's size) and /dev/zero is refused after its first KiB.
Each check prints `ok NAME` or `FAIL NAME: reason`; the last line is
`test_cli: N passed, M failed`; the exit status is 1 if anything failed.
Run with Debian's /usr/bin/python3 (python3-onnx, for the node names).
"""
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

import testlib  # tests/, beside this file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.path.abspath(os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt")))
SAMPLE = os.path.join(REPO, "testdata", "sample.onnx")
WARNS = os.path.join(REPO, "testdata", "identity", "input_to_output.onnx")
MIXED = os.path.join(REPO, "testdata", "pipeline", "mixed_conv_add_bn_shared.onnx")
ROUNDS = os.path.join(REPO, "testdata", "pipeline", "mixed_loop_body.onnx")  # needs a second round
OPSET9 = os.path.join(REPO, "testdata", "legacy", "mixed_opset9.onnx")
MAN = os.path.join(REPO, "ppqfmt.1")
RUN_TIMEOUT = 60
EXIT_CODES = (0, 1, 2, 3, 4, 5, 6)

TMP = None
SKIP = testlib.SKIP
T = testlib.Tally("test_cli")
report, check = T.report, T.check


def run(args, stdin=None, env=None):
    """(exit code, stdout bytes, stderr text) of ppqfmt with pipes."""
    p = subprocess.run([PPQFMT] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=RUN_TIMEOUT,
                       stdin=None if stdin is not None else subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def tmp(name):
    return os.path.join(TMP, name)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def term_env(**extra):
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    env.update(extra)
    return env


def read_pty(master, proc):
    """Everything written to the pty until the child exits and closes it."""
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], RUN_TIMEOUT)
        if not ready:
            proc.kill()
            raise RuntimeError("ppqfmt hung (no output on the terminal for %ds)" % RUN_TIMEOUT)
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child's side is closed
            break
        if not chunk:
            break
        out += chunk
    return out


def run_tty(args, env, tty_stdout=False):
    """Run ppqfmt with a terminal as stderr (or as stdout): (code, stdout, terminal text)."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([PPQFMT] + args, stdin=subprocess.DEVNULL,
                             stdout=slave if tty_stdout else subprocess.PIPE,
                             stderr=subprocess.PIPE if tty_stdout else slave, env=env)
        os.close(slave)
        slave = None
        seen = read_pty(master, p)
        other = p.stderr.read() if tty_stdout else p.stdout.read()
        p.wait(timeout=RUN_TIMEOUT)
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)
    if tty_stdout:
        return p.returncode, seen, other.decode("utf-8", "replace")
    return p.returncode, other, seen.decode("utf-8", "replace")


def list_passes():
    code, out, err = run(["--list-passes"])
    if code != 0:
        raise RuntimeError("--list-passes: exit %d: %s" % (code, err))
    return [line.split()[0] for line in out.decode().splitlines() if line.strip()]


def default_passes():
    """The passes --list-passes marks on (a default run runs these)."""
    _, out, _ = run(["--list-passes"])
    return [line.split()[0] for line in out.decode().splitlines() if line.split()[1:2] == ["on"]]


# ---------------------------------------------------------------------------
# --help and the man page
# ---------------------------------------------------------------------------

def help_text():
    code, out, err = run(["--help"])
    if code != 0 or err:
        raise RuntimeError("--help: exit %d, stderr %r" % (code, err))
    return out.decode()


def man_text():
    """The man page source with roff escapes for dashes and fonts removed."""
    text = read(MAN).decode()
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", text)
    return text.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")


def long_options(text, passes):
    """Long options named in text; --no-<pass> and --no-P count as --no-P."""
    found = set()
    for name in re.findall(r"(?<![\w-])--([A-Za-z][A-Za-z0-9-]*)", text):
        if name.startswith("no-") and (name[3:] in passes or name[3:] == "P"):
            name = "no-P"
        found.add(name)
    return found


def short_options(text):
    return set(re.findall(r"(?<![\w-])-([a-zA-Z])\b(?!-)", text))


def t_help_one_screen():
    lines = help_text().splitlines()
    if len(lines) > 24:
        return "--help has %d lines (more than 24)" % len(lines)
    wide = [line for line in lines if len(line) > 80]
    return "--help lines wider than 80 columns: %r" % wide if wide else None


def t_help_exit_codes():
    text = help_text()
    m = re.search(r"(?is)exit (codes|status).*", text)
    if not m:
        return "--help has no exit code section"
    missing = [c for c in EXIT_CODES if not re.search(r"\b%d\b" % c, m.group(0))]
    return "exit codes missing from --help: %s" % missing if missing else None


def t_help_names_manual():
    """The page is `man ppqfmt` only once installed: --help also says how to
    read it from the sources (man -l ppqfmt.1)."""
    text = help_text()
    return None if "man -l ppqfmt.1" in text else "--help does not mention man -l ppqfmt.1"


def t_nesting_limit_documented():
    """The loader's limit of 64 nested graphs is in README and the man page."""
    missing = [name for name, text in (("README.md", read(os.path.join(REPO, "README.md")).decode()),
                                       ("ppqfmt.1", man_text()))
               if not re.search(r"(?s)\b64\b.{0,80}nested|nested.{0,80}\b64\b",
                                " ".join(text.split()))]
    return "no nesting limit of 64 in %s" % missing if missing else None


def t_options_help_vs_man():
    passes = list_passes()
    in_help, in_man = long_options(help_text(), passes), long_options(man_text(), passes)
    errs = []
    if in_help - in_man:
        errs.append("in --help, not in the man page: %s" % sorted(in_help - in_man))
    if in_man - in_help:
        errs.append("in the man page, not in --help: %s" % sorted(in_man - in_help))
    if "no-P" not in in_help:
        errs.append("--help does not mention --no-P")
    return "; ".join(errs) or None


def t_short_options_help_vs_man():
    help_short = set(re.findall(r"^\s+-([a-zA-Z]),", help_text(), re.M))
    man_short = short_options(man_text())
    missing = help_short - man_short
    return "short options not in the man page: %s" % sorted(missing) if missing else None


def t_passes_in_man():
    text = man_text()
    m = re.search(r"(?s)^\.SH PASSES\n(.*?)^\.SH ", text, re.M)
    if not m:
        return "the man page has no PASSES section"
    missing = [p for p in list_passes() if not re.search(r"^\.B %s$" % re.escape(p), m.group(1), re.M)]
    return "passes not described in the man page: %s" % missing if missing else None


def t_man_sections():
    text = read(MAN).decode()
    want = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "PASSES", "EXIT STATUS",
            "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"]
    missing = [s for s in want if not re.search(r'^\.SH "?%s"?$' % s, text, re.M)]
    if missing:
        return "man page sections missing: %s" % missing
    exits = text[text.index(".SH EXIT STATUS"):]
    missing = [c for c in EXIT_CODES if not re.search(r"^\.B %d$" % c, exits, re.M)]
    return "exit codes missing from EXIT STATUS: %s" % missing if missing else None


def t_man_renders():
    """groff finds nothing to warn about and man -l shows the page (when the
    tools are there: man-db and groff-base are not on a minimal system)."""
    have_groff, have_man = shutil.which("groff"), shutil.which("man")
    if not have_groff and not have_man:
        return SKIP + "neither man nor groff is installed (apt-get install man-db groff-base)"
    if have_groff:
        p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", MAN], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
        if p.returncode != 0 or p.stderr:
            return "groff -ww: exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace"))
    if have_man:
        p = subprocess.run(["man", "-l", MAN], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"),
                           timeout=RUN_TIMEOUT)
        err = p.stderr.decode("utf-8", "replace").strip()
        if p.returncode != 0 or err:
            return "man -l: exit %d: %s" % (p.returncode, err)
        if b"EXIT STATUS" not in p.stdout:
            return "man -l shows no EXIT STATUS"
    return None


# ---------------------------------------------------------------------------
# exit codes and messages
# ---------------------------------------------------------------------------

def expect_error(args, code, words=(), stdin=None):
    """ppqfmt fails with code, prints nothing on stdout and one line on stderr."""
    got, out, err = run(args, stdin=stdin)
    if got != code:
        return "exit %d, want %d (stderr %r)" % (got, code, err.strip())
    if out:
        return "stdout not empty on error (%d bytes)" % len(out)
    lines = err.splitlines()
    if len(lines) != 1 or not lines[0].startswith("ppqfmt: "):
        return "want one 'ppqfmt: ...' line on stderr, got %r" % err
    missing = [w for w in words if w not in err]
    return "message %r does not mention %s" % (err.strip(), missing) if missing else None


def t_exit_success():
    code, out, err = run([SAMPLE, "-o", tmp("ok.onnx")])
    if code != 0:
        return "exit %d: %s" % (code, err)
    return None if os.path.getsize(tmp("ok.onnx")) > 0 else "empty output file"


def t_exit_missing_dir():
    target = tmp("no/such/dir/out.onnx")
    err = expect_error([SAMPLE, "-o", target], 3, ["no/such/dir"])
    if err is None and os.path.exists(os.path.dirname(target)):
        return "the missing folder was created"
    return err


def t_exit_non_onnx():
    with open(tmp("text.onnx"), "w") as f:
        f.write("this is not a model\n")
    return expect_error([tmp("text.onnx"), "-o", tmp("x.onnx")], 2, ["text.onnx"])


def t_exit_empty_file():
    open(tmp("empty.onnx"), "w").close()
    return expect_error([tmp("empty.onnx"), "-o", tmp("x.onnx")], 2, ["empty.onnx"])


def t_exit_non_onnx_stdin():
    return expect_error(["-", "-o", tmp("x.onnx")], 2, ["standard input"], stdin=b"garbage" * 10)


def t_no_partial_output():
    """A failed run leaves no output and no temporary file behind."""
    d = tmp("partial")
    os.mkdir(d)
    with open(tmp("text2.onnx"), "w") as f:
        f.write("not a model")
    run([tmp("text2.onnx"), "-o", os.path.join(d, "out.onnx")])
    left = os.listdir(d)
    return "files left after a failed run: %s" % left if left else None


SHORT_WRITES = os.path.join(REPO, os.environ.get("BUILD", "build"), "tools", "short_writes.so")


def t_short_writes():
    """Every writev cut short (tests/tools/short_writes.c, 97 bytes a call):
    the output, to a file and to a pipe, is the same bytes, for models whose
    folded weights are computed while written (fuse-bn), each resumed in its
    middle."""
    if os.environ.get("SANITIZED"):
        return SKIP + "a sanitized build cannot take a preloaded library first"
    if not os.access(SHORT_WRITES, os.R_OK):
        return "%s is missing (make test builds it)" % SHORT_WRITES
    env = dict(os.environ, LD_PRELOAD=SHORT_WRITES)
    errs = []
    for model in [os.path.join(REPO, "testdata", "fuse_bn", c + ".onnx")
                  for c in ("chain", "conv_bias", "float16", "gemm_transb1")] + [MIXED]:
        want, cut = tmp("whole.onnx"), tmp("cut.onnx")
        code, _, err = run([model, "-o", want])
        code2, _, err2 = run([model, "-o", cut], env=env)
        code3, piped, _ = run([model, "-o", "-"], env=env)
        name = os.path.basename(model)
        if code or code2 or code3:
            errs.append("%s: exit %d/%d/%d %s" % (name, code, code2, code3, (err or err2).strip()[-200:]))
        elif read(cut) != read(want) or piped != read(want):
            errs.append("%s: output differs under short writes" % name)
    return "; ".join(errs) or None


def t_output_symlinks():
    """-o LINK writes the file LINK points to, whether it exists yet or not,
    and leaves the link a link."""
    want = formatted()
    d = tmp("links")
    os.mkdir(d)
    os.symlink("live_target.onnx", os.path.join(d, "live.onnx"))
    shutil.copy(WARNS, os.path.join(d, "live_target.onnx"))
    os.symlink("dangling_target.onnx", os.path.join(d, "dangling.onnx"))
    for link in ("live", "dangling"):
        code, _, err = run([SAMPLE, "-o", os.path.join(d, link + ".onnx")])
        if code != 0:
            return "%s link: exit %d: %s" % (link, code, err)
        if not os.path.islink(os.path.join(d, link + ".onnx")):
            return "%s link: replaced by a regular file" % link
        target = os.path.join(d, link + "_target.onnx")
        if not os.path.exists(target) or read(target) != want:
            return "%s link: its target does not hold the formatted model" % link
    return None


def t_output_keeps_mode():
    """An existing output keeps its permissions (as cp keeps them); a new one
    gets 0666 less the umask."""
    out = tmp("mode.onnx")
    shutil.copy(WARNS, out)
    os.chmod(out, 0o600)
    code, _, err = run([SAMPLE, "-o", out])
    mode = os.stat(out).st_mode & 0o777
    if code != 0 or mode != 0o600:
        return "exit %d, mode %o after writing over a 0600 file (want 600): %s" % (code, mode, err)
    os.unlink(out)
    p = subprocess.run(["sh", "-c", 'umask 027 && exec "$0" "$@"', PPQFMT, SAMPLE, "-o", out],
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    mode = os.stat(out).st_mode & 0o777
    return None if p.returncode == 0 and mode == 0o640 else \
        "new file under umask 027: exit %d, mode %o (want 640)" % (p.returncode, mode)


def as_user_nobody():
    """For preexec_fn: drop root, under which every folder is writable."""
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)


def t_output_readonly_folder():
    """-o FILE in a folder ppqfmt cannot write, FILE itself writable: exit 3,
    the path as typed, and why (the temporary file beside it)."""
    os.chmod(TMP, 0o755)  # let user nobody in (as root)
    d = tmp("ro")
    os.mkdir(d)
    shutil.copy(SAMPLE, tmp("ro_in.onnx"))
    os.chmod(tmp("ro_in.onnx"), 0o644)
    with open(os.path.join(d, "out.onnx"), "wb") as f:
        f.write(b"old")
    os.chmod(os.path.join(d, "out.onnx"), 0o666)
    os.chmod(d, 0o555)
    try:
        p = subprocess.run([PPQFMT, "ro_in.onnx", "-o", "ro/out.onnx"], cwd=TMP,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, preexec_fn=as_user_nobody, timeout=RUN_TIMEOUT)
    finally:
        os.chmod(d, 0o755)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 3 or len(err.splitlines()) != 1:
        return "exit %d (want 3), stderr %r" % (p.returncode, err)
    missing = [w for w in ("ppqfmt: ro/out.onnx:", "temporary file", "folder") if w not in err]
    if missing:
        return "the message %r lacks %s" % (err.strip(), missing)
    return None if read(os.path.join(d, "out.onnx")) == b"old" else "the file was changed"


def t_quiet_keeps_errors():
    return expect_error(["-q", tmp("missing.onnx")], 2, ["missing.onnx"])


def t_output_is_input():
    shutil.copy(SAMPLE, tmp("self.onnx"))
    before = read(tmp("self.onnx"))
    err = expect_error([tmp("self.onnx"), "-o", tmp("self.onnx")], 1)
    if err is None and read(tmp("self.onnx")) != before:
        return "the input was changed"
    return err


# ---------------------------------------------------------------------------
# streams: data on stdout, messages on stderr, quiet on success
# ---------------------------------------------------------------------------

def expect_quiet(args, stdin=None, want_stdout=None):
    code, out, err = run(args, stdin=stdin)
    if code != 0:
        return "exit %d: %s" % (code, err.strip())
    if err:
        return "stderr not empty on success: %r" % err
    if want_stdout is not None and out != want_stdout:
        return "stdout differs from the expected output (%d bytes, want %d)" % (
            len(out), len(want_stdout))
    return None


def formatted(args=()):
    """The bytes ppqfmt writes to an -o file."""
    out = tmp("ref.onnx")
    code, _, err = run(list(args) + [SAMPLE, "-o", out])
    if code != 0:
        raise RuntimeError("exit %d: %s" % (code, err))
    return read(out)


def t_quiet_file():
    return expect_quiet([SAMPLE, "-o", tmp("q.onnx")], want_stdout=b"")


def t_quiet_stdout():
    return expect_quiet([SAMPLE], want_stdout=formatted())


def t_quiet_dry_run():
    return expect_quiet(["--dry-run", SAMPLE], want_stdout=b"")


def t_print_writes_no_model():
    """--print alone and --dry-run --print both give the table, no model bytes."""
    code, table, err = run(["--dry-run", "--print", SAMPLE])
    if code != 0 or err:
        return "--dry-run --print: exit %d, stderr %r" % (code, err)
    err = expect_quiet(["--print", SAMPLE], want_stdout=table)
    if err:
        return "--print without -o: " + err
    return None if table.startswith(b"kind") else "the table does not start with its header"


def t_print_with_output():
    out = tmp("printed.onnx")
    code, table, err = run(["--print", SAMPLE, "-o", out])
    if code != 0 or err:
        return "exit %d, stderr %r" % (code, err)
    if not table.startswith(b"kind"):
        return "no table on stdout"
    return None if read(out) == formatted() else "the -o file differs from a run without --print"


def t_print_and_stdout_model():
    return expect_error(["--print", SAMPLE, "-o", "-"], 1)


def t_verbose_on_stderr():
    code, out, err = run(["-v", SAMPLE, "-o", tmp("v.onnx")])
    if code != 0 or out:
        return "exit %d, stdout %r" % (code, out[:80])
    missing = [p for p in default_passes() if p not in err]
    return "-v does not name passes %s" % missing if missing else None


def t_info_options():
    for args in (["--version"], ["--list-passes"], ["--help"]):
        code, out, err = run(args)
        if code != 0 or err or not out:
            return "%s: exit %d, stdout %d bytes, stderr %r" % (args, code, len(out), err)
    return None


# ---------------------------------------------------------------------------
# reports and warnings
# ---------------------------------------------------------------------------

def json_report(args, model):
    code, out, err = run(["--report=json"] + args + [model, "-o", tmp("r.onnx")])
    if code != 0:
        raise RuntimeError("exit %d: %s" % (code, err))
    return json.loads(err)  # the whole of stderr: one document


def schema_errors(rep, passes):
    errs = []
    for key, kind in (("input", str), ("passes", list), ("rounds", int), ("timings", dict),
                      ("other_warnings", list), ("warnings", int)):
        if not isinstance(rep.get(key), kind):
            errs.append("%r is not a %s" % (key, kind.__name__))
    if "output" not in rep:
        errs.append("no 'output'")
    for p in rep.get("passes", []):
        for key, kind in (("name", str), ("enabled", bool), ("changes", int),
                          ("actions", list), ("warnings", list)):
            if not isinstance(p.get(key), kind):
                errs.append("pass %s: %r is not a %s" % (p.get("name"), key, kind.__name__))
    names = [p.get("name") for p in rep.get("passes", [])]
    if names != passes:
        errs.append("passes %s, want %s" % (names, passes))
    for w in rep.get("other_warnings", []):
        if w.get("stage") not in ("options", "load", "target-opset", "output") or \
                not all(isinstance(w.get(k), str) for k in ("subject", "message")):
            errs.append("other_warnings entry %r" % w)
    return errs


def t_json_schema():
    passes = list_passes()
    rep = json_report([], SAMPLE)
    errs = schema_errors(rep, passes)
    timings = rep.get("timings", {})
    if sorted(timings) != sorted(default_passes()):
        errs.append("timings for %s, want every pass run by default" % sorted(timings))
    if any(not isinstance(v, (int, float)) or v < 0 for v in timings.values()):
        errs.append("timings are not non-negative numbers: %s" % timings)
    if rep.get("output") != tmp("r.onnx"):
        errs.append("output %r" % rep.get("output"))
    return "; ".join(errs) or None


def t_json_disabled_pass():
    rep = json_report(["--no-identity"], SAMPLE)
    ident = [p for p in rep["passes"] if p["name"] == "identity"][0]
    if ident["enabled"] or "identity" in rep["timings"]:
        return "a disabled pass is enabled or timed: %s" % ident
    return None


def t_json_dry_run_output():
    code, _, err = run(["--report=json", "--dry-run", SAMPLE])
    rep = json.loads(err)
    return None if code == 0 and rep["output"] is None else "output %r" % rep.get("output")


def t_json_warnings():
    """Warnings are in the JSON (and counted), not as extra lines; also with -q."""
    for args in ([], ["-q"]):
        rep = json_report(args, WARNS)
        listed = sum(len(p["warnings"]) for p in rep["passes"]) + len(rep["other_warnings"])
        if listed == 0 or rep["warnings"] != listed:
            return "%s: warnings %r, listed %d" % (args, rep["warnings"], listed)
    return None


def training_info_model(path, with_bn):
    """Conv (+ BN) whose training_info updates parameter W (and BN's scale)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    r = np.random.default_rng(0)
    arrays = [("W", r.normal(0, 1, (4, 3, 3, 3)))]
    nodes = [helper.make_node("Conv", ["X", "W"], ["c" if with_bn else "Y"], name="conv")]
    if with_bn:
        arrays += [(n, r.uniform(.5, 1.5, 4)) for n in ("s", "b", "m", "v")]
        nodes.append(helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["Y"], name="bn"))
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 6, 6])],
                          [numpy_helper.from_array(a.astype(np.float32), n) for n, a in arrays])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    step = helper.make_graph([helper.make_node("Mul", ["W", "W"], ["W_new"], name="upd")], "step", [],
                             [helper.make_tensor_value_info("W_new", TensorProto.FLOAT, [4, 3, 3, 3])])
    ti = m.training_info.add()
    ti.algorithm.CopyFrom(step)
    ti.update_binding.add(key="W", value="W_new")
    onnx.save(m, path)
    onnx.checker.check_model(path, full_check=True)
    return path


def t_training_info_dropped():
    """Folding BN changes the parameters training_info binds: dropped, one warning."""
    import onnx
    src = training_info_model(tmp("ti_bn.onnx"), True)
    code, _, err = run([src, "-o", tmp("ti_bn.out.onnx")])
    if code != 0 or not re.search(r"^ppqfmt: warning: output: training_info: dropped \(1 entry\)", err, re.M):
        return "exit %d, want one training_info warning: %r" % (code, err)
    out = onnx.load(tmp("ti_bn.out.onnx"))
    onnx.checker.check_model(out, full_check=True)
    if len(out.training_info) or [n.op_type for n in out.graph.node] != ["Conv"]:
        return "training_info %d, nodes %s" % (len(out.training_info), [n.op_type for n in out.graph.node])
    rep = json_report([], src)
    if [w["stage"] for w in rep["other_warnings"]] != ["output"] or rep["warnings"] != 1:
        return "JSON other_warnings %r, warnings %r" % (rep["other_warnings"], rep["warnings"])
    return None


def t_training_info_kept():
    """Nothing to change, or --passes=none: kept, the output byte-identical, no warning."""
    for src, args in ((training_info_model(tmp("ti_conv.onnx"), False), []),
                      (training_info_model(tmp("ti_bn2.onnx"), True), ["--passes=none"])):
        code, _, err = run(args + [src, "-o", tmp("ti.out.onnx")])
        if code != 0 or err or open(src, "rb").read() != open(tmp("ti.out.onnx"), "rb").read():
            return "%s %s: exit %d, stderr %r, or the output differs" % (args, src, code, err)
    return None


def t_text_report():
    code, out, err = run(["--report", SAMPLE, "-o", tmp("t.onnx")])
    if code != 0:
        return "exit %d: %s" % (code, err)
    lines = err.splitlines()
    passes = list_passes()
    heads = [line.split(":")[0] for line in lines]
    if any(h not in passes for h in heads) or len(set(heads)) != len(heads):
        return "want one line per pass, starting with its name: %r" % err
    if "constant: folded 2 (const_w, const_b)" not in lines:
        return "no 'constant: folded 2 (const_w, const_b)' line: %r" % err
    return None


def t_text_report_warnings():
    code, _, err = run(["--report", WARNS, "-o", tmp("w.onnx")])
    warn = [line for line in err.splitlines() if "warning:" in line]
    if code != 0 or not warn:
        return "exit %d, no line marked 'warning:': %r" % (code, err)
    code, _, err = run(["-q", "--report", WARNS, "-o", tmp("w.onnx")])
    return "-q --report still shows warnings: %r" % err if "warning" in err else None


def t_warnings_and_quiet():
    code, _, err = run([WARNS, "-o", tmp("w.onnx")])
    if code != 0 or "warning:" not in err:
        return "no warning without -q: exit %d, %r" % (code, err)
    return expect_quiet(["-q", WARNS, "-o", tmp("w.onnx")])


# ---------------------------------------------------------------------------
# pass selection and pipes
# ---------------------------------------------------------------------------

def output_of(args, model):
    code, out, err = run(args + [model])
    if code != 0:
        raise RuntimeError("%s: exit %d: %s" % (args, code, err))
    return out


def t_pass_spellings(model):
    passes = list_passes()
    bad = []
    for p in passes:  # --no-P: the passes on by default but P
        rest = ",".join(q for q in default_passes() if q != p)
        a = output_of(["--no-" + p], model)
        b = output_of(["--disable=" + p], model)
        c = output_of(["--passes=" + rest], model)
        if not (a == b == c):
            bad.append(p)
    return "--no-P, --disable=P and --passes=(all but P) differ for %s" % bad if bad else None


def t_no_all():
    """--no-all is --disable=all (it was a usage error while --disable=all worked)."""
    a = output_of(["--no-all"], SAMPLE)
    b = output_of(["--disable=all"], SAMPLE)
    return None if a == b == read(SAMPLE) else "--no-all and --disable=all differ or change the model"


def t_pass_contradiction_warns():
    """An option naming a pass that an earlier option named the other way wins, with
    a warning naming both; 'all' names no pass, so 'all but P' idioms stay quiet."""
    for args, words, same in (
            (["--enable=fold", "--disable=fold"], ["--disable=fold", "enabled fold"], ["--no-fold"]),
            (["--no-fold", "--enable=fold"], ["--enable=fold", "disabled fold"], []),
            (["--passes=identity", "--no-identity"], ["--no-identity"], ["--passes=none"])):
        code, _, err = run(args + [SAMPLE, "-o", tmp("contradiction.onnx")])
        if code != 0 or err.count("warning") != 1 or any(w not in err for w in words):
            return "%s: exit %d, stderr %r" % (args, code, err)
        if output_of(same, SAMPLE) != read(tmp("contradiction.onnx")):
            return "%s: the last option did not win" % args
    for args in (["--passes=all", "--no-dedup-initializers", "--no-fold"],
                 ["--disable=all", "--enable=fold"],
                 ["--no-fold", "--no-fold"]):
        err = expect_quiet(args + [SAMPLE, "-o", tmp("contradiction.onnx")])
        if err:
            return "%s: %s" % (args, err)
    return None


def t_mark_preprocessed():
    """--mark-preprocessed writes metadata_props onnx.quant.pre_process=onnxruntime.quant
    (replacing an entry of that key, keeping the others; formatting again changes nothing);
    a pass standing for one of quant_pre_process's steps turned off is a usage error; a
    value inference cannot type leaves the model unmarked, with a warning naming it."""
    import onnx
    from onnx import helper, TensorProto
    m = onnx.load(SAMPLE)
    helper.set_model_props(m, {"author": "me", "onnx.quant.pre_process": "stale"})
    src, out, again = tmp("mark_in.onnx"), tmp("mark_out.onnx"), tmp("mark_again.onnx")
    onnx.save(m, src)
    code, _, err = run(["--mark-preprocessed", src, "-o", out])
    props = {p.key: p.value for p in onnx.load(out).metadata_props} if code == 0 else {}
    if props != {"author": "me", "onnx.quant.pre_process": "onnxruntime.quant"} or \
            len(onnx.load(out).metadata_props) != 2:
        return "exit %d, metadata %r, %r" % (code, props, err)
    onnx.checker.check_model(onnx.load(out), full_check=True)
    if run(["--mark-preprocessed", out, "-o", again])[0] != 0 or read(out) != read(again):
        return "formatting the marked model again changed it"
    err = expect_error(["--mark-preprocessed", "--no-fold", SAMPLE, "-o", tmp("mark_no.onnx")],
                       1, ["--mark-preprocessed", "fold"])
    if err:
        return "--no-fold: " + err
    g = helper.make_graph([helper.make_node("Custom", ["X"], ["c"], "custom0", domain="my"),
                           helper.make_node("Relu", ["c"], ["Y"], "relu0")], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                  helper.make_opsetid("my", 1)]), src)
    code, _, err = run(["--mark-preprocessed", src, "-o", out])
    if code != 0 or "not marked" not in err or "'c'" not in err and "c:" not in err or \
            onnx.load(out).metadata_props:
        return "untyped value: exit %d, stderr %r, metadata %r" % (
            code, err, list(onnx.load(out).metadata_props))
    return None


def _with_outputs(src, names, dst):
    """src with the values `names` made graph outputs too (types from onnx's inference)."""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(src))
    known = {v.name: v for v in m.graph.value_info}
    m.graph.output.extend(known[n] for n in names if n in known)
    onnx.save(m, dst)


def t_cut():
    """--inputs/--outputs keep the graph between values: cut inputs become typed graph
    inputs, cut outputs the outputs, the rest goes; onnxruntime on the cut model gives what
    the whole model computes there. An unknown name is a usage error naming the nearest
    value; an initializer as a cut input too; a graph input the cut needs but --inputs does
    not name is exit 2."""
    import onnx
    ort = testlib.ortcheck()
    full = tmp("cut_full.onnx")
    _with_outputs(SAMPLE, ["conv_out", "dead_out"], full)
    feeds = ort.random_inputs(SAMPLE)
    ref = ort.run_models([{"model": full, "inputs": feeds}])[0]
    if isinstance(ref, str):
        return "onnxruntime on the original: " + ref
    cases = ((["--inputs=conv_out"], {"conv_out": ref["conv_out"]}, ["Y"]),
             (["--outputs=conv_out,dead_out"], feeds, ["conv_out", "dead_out"]),
             (["--inputs=id_out", "--outputs=Y", "--passes=none"], {"id_out": ref["conv_out"]},
              ["Y"]))
    for args, cut_feeds, outs in cases:
        out = tmp("cut.onnx")
        code, _, err = run(args + [SAMPLE, "-o", out])
        if code != 0:
            return "%s: exit %d %s" % (args, code, err)
        m = onnx.load(out)
        onnx.checker.check_model(m, full_check=True)
        if [o.name for o in m.graph.output] != outs or \
                sorted(i.name for i in m.graph.input) != sorted(cut_feeds):
            return "%s: inputs %s outputs %s" % (args, [i.name for i in m.graph.input],
                                                 [o.name for o in m.graph.output])
        got = ort.run_models([{"model": out, "inputs": cut_feeds}])[0]
        ok, msg = (False, got) if isinstance(got, str) else ort.compare(
            {n: ref[n] for n in outs}, got)
        if not ok:
            return "%s: %s" % (args, msg)
    for args, want, words in ((["--outputs=conv_ou"], 1, ["conv_ou", "did you mean 'conv_out'"]),
                              (["--inputs=unused_scale"], 1, ["unused_scale", "initializer"])):
        err = expect_error(args + [SAMPLE, "-o", tmp("cut_bad.onnx")], want, words)
        if err:
            return "%s: %s" % (args, err)
    from onnx import helper, TensorProto
    g = helper.make_graph([helper.make_node("Add", ["A", "B"], ["s"], "add0"),
                           helper.make_node("Relu", ["s"], ["Y"], "relu0")], "g",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "AB"],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    two = tmp("cut_two.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), two)
    err = expect_error(["--inputs=A", two, "-o", tmp("cut_bad.onnx")], 2, ["'B'", "--inputs"])
    return "needed input not named: " + err if err else None


def t_dedup_turns_split_off():
    """--enable=dedup-initializers turns split-params off, with a warning (they undo each
    other: the same output as with --no-split-params); naming split-params too is exit 1."""
    code, _, err = run(["--enable=dedup-initializers", MIXED, "-o", tmp("dedup.onnx")])
    if code != 0 or "split-params" not in err or "warning" not in err:
        return "exit %d, stderr %r" % (code, err)
    if read(tmp("dedup.onnx")) != output_of(["--enable=dedup-initializers",
                                             "--no-split-params"], MIXED):
        return "not the output of --no-split-params"
    err = expect_error(["--enable=dedup-initializers,split-params", MIXED], 1,
                       ["dedup-initializers", "split-params"])
    return err


def t_exit_usage():
    cases = [["--bogus-option", SAMPLE], ["-Z", SAMPLE], ["--passes=bogus", SAMPLE],
             ["--disable=identity,bogus", SAMPLE], ["--no-bogus", SAMPLE], ["--report=xml", SAMPLE],
             [], [SAMPLE, SAMPLE], ["-o"]]
    for args in cases:
        err = expect_error(args, 1)
        if err:
            return "%s: %s" % (args, err)
    return None


def t_target_opset_bounds():
    """--target-opset takes 7..26 (26: the newest opset both the pinned onnx and onnxruntime know);
    anything else is a usage error (exit 1) naming the option, before the model is read."""
    cases = [("6", ["--target-opset=6", "7", "26"]), ("27", ["--target-opset=27", "7", "26"]),
             ("0", ["7", "26"]), ("-11", ["7", "26"]), ("11x", ["--target-opset", "11x"]),
             ("", ["--target-opset"]), ("99999999999999999999", ["--target-opset"])]
    for value, words in cases:
        err = expect_error(["--target-opset=" + value, tmp("missing.onnx")], 1, words)
        if err:
            return "--target-opset=%s: %s" % (value, err)
    err = expect_error([SAMPLE, "--target-opset"], 1, ["--target-opset"])
    return "--target-opset without a value: " + err if err else None


def t_target_opset_accepted():
    """Both ends of the range take a Relu model at opset 13: lowered to 7 (Relu only gained
    types since Relu-6), raised to 17."""
    import onnx
    src = os.path.join(REPO, "testdata", "target_opset", "above13.onnx")
    for n in (7, 17):
        out = tmp("target%d.onnx" % n)
        code, _, err = run(["-q", "--target-opset=%d" % n, "--target-opset", str(n), src,
                            "-o", out])
        if code != 0:
            return "--target-opset=%d: exit %d: %s" % (n, code, err)
        got = {o.version for o in onnx.load(out).opset_import if o.domain in ("", "ai.onnx")}
        if got != {n}:
            return "--target-opset=%d: default opset %s, expected %d" % (n, got, n)
    return None


def t_target_opset_cannot_adapt():
    """A node that cannot be adapted: exit 2 naming it, and no output file."""
    src = os.path.join(REPO, "testdata", "target_opset", "cannot_imagescaler9.onnx")
    out = tmp("cannot.onnx")
    err = expect_error(["--target-opset=10", src, "-o", out], 2, ["ImageScaler", "9", "10"])
    if err:
        return err
    return "output written" if os.path.exists(out) else None


def t_target_opset_json():
    """--report=json: "target_opset" is null without the option, else the opset and the raise's
    actions; a model above the target is lowered (its action), without a warning."""
    import onnx
    src = os.path.join(REPO, "testdata", "target_opset", "upsample7_attr.onnx")
    before = [o.version for o in onnx.load(src).opset_import if o.domain in ("", "ai.onnx")][0]
    code, _, err = run(["--report=json", "--dry-run", "--target-opset=17", src])
    rep = json.loads(err)
    want = "raised opset %d \u2192 17" % before
    got = rep.get("target_opset") or {}
    if code or got.get("opset") != 17 or want not in [a["action"] for a in got.get("actions", [])]:
        return "exit %d, target_opset %r, want action %r" % (code, got, want)
    code, _, err = run(["--report=json", "--dry-run", src])
    if code or json.loads(err).get("target_opset", 0) is not None:
        return "without the option: exit %d, %r" % (code, err[:300])
    above = os.path.join(REPO, "testdata", "target_opset", "above13.onnx")
    code, _, err = run(["--report=json", "--dry-run", "--target-opset=11", above])
    rep = json.loads(err)
    stages = [w["stage"] for w in rep.get("other_warnings", [])]
    actions = [a["action"] for a in (rep.get("target_opset") or {}).get("actions", [])]
    return None if code == 0 and stages == [] and "lowered opset 13 \u2192 11" in actions else \
        "above the target: exit %d, warning stages %r, actions %r" % (code, stages, actions)


def t_check_json():
    """--report=json with --check: "check" holds runs, seed, the verdict and per graph output
    (every one, by name) the max abs and rel errors and its verdict; null without --check. A
    spoilt weight (--check-break) exits 5 with the document, its verdicts "differs", and then
    the one error line."""
    import onnx
    code, _, err = run(["--report=json", "--dry-run", SAMPLE])
    if code or json.loads(err).get("check", 0) is not None:
        return "without --check: exit %d, %r" % (code, err[:300])
    code, _, err = run(["--report=json", "--dry-run", "--check=2", "--check-seed=9", SAMPLE])
    if code:
        return "exit %d: %s" % (code, err[-300:])
    c = json.loads(err).get("check") or {}
    names = [o.name for o in onnx.load(SAMPLE).graph.output]
    outs = c.get("outputs", [])
    if (c.get("runs"), c.get("seed"), c.get("verdict")) != (2, 9, "equal") or \
            [o.get("name") for o in outs] != names:
        return "check %r, want runs 2, seed 9, equal, outputs %r" % (c, names)
    for o in outs:
        if o.get("verdict") != "equal" or o.get("why") is not None or \
                not 0 <= o.get("max_abs_error", -1) <= 1e-5 or \
                not 0 <= o.get("max_rel_error", -1) <= 1e-3:
            return "output %r" % o
    code, _, err = run(["--report=json", "--dry-run", "--check", "--check-break", SAMPLE])
    doc, _, line = err.rstrip("\n").rpartition("\n")
    if code != 5 or not line.startswith("ppqfmt: --check: output"):
        return "--check-break: exit %d, last line %r" % (code, line)
    c = json.loads(doc).get("check") or {}
    bad = [o for o in c.get("outputs", []) if o.get("verdict") == "differs"]
    if c.get("verdict") != "differs" or not bad or not bad[0].get("max_abs_error", 0) > 1e-3:
        return "--check-break: check %r" % c
    return None


def t_exit_missing_file():
    return expect_error([tmp("missing.onnx"), "-o", tmp("x.onnx")], 2, ["missing.onnx"])


def t_stdin_stdout():
    data = read(SAMPLE)
    want = formatted()
    err = expect_quiet(["-", "-o", "-"], stdin=data, want_stdout=want)
    if err:
        return "- -o -: " + err
    err = expect_quiet(["-"], stdin=data, want_stdout=want)
    return "-: " + err if err else None


def t_shell_pipe():
    """cat m | ppqfmt - -o - | cat, through a real shell pipeline."""
    cmd = "cat \"$1\" | \"$2\" - -o - | cat > \"$3\""
    p = subprocess.run(["sh", "-c", cmd, "sh", SAMPLE, PPQFMT, tmp("pipe.onnx")],
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    if p.returncode != 0 or p.stderr:
        return "exit %d: %r" % (p.returncode, p.stderr)
    return None if read(tmp("pipe.onnx")) == formatted() else "pipe output differs from -o file"


def peak_rss_kb(args):
    """(exit code, peak resident KiB) of one ppqfmt run, by GNU time (the
    rusage of a child forked from this python would count python's pages)."""
    out = tmp("time.txt")
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out, PPQFMT] + args,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    return p.returncode, int(read(out).split()[-1])


def t_passes_none_copy_memory():
    """--passes=none checks a plain model without building its graph: on a
    40k-node Conv+BatchNormalization chain (120k initializers) the peak RSS
    stays within a small multiple of the file, where building the graph takes
    about 15 times the file. The copy is still byte-identical."""
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import make_bench_models
    folder = tmp("copy-memory")
    os.makedirs(folder, exist_ok=True)
    make_bench_models.build_nodes(folder, "convbn", 40000)
    model = os.path.join(folder, make_bench_models.MODEL)
    size_kb = os.path.getsize(model) // 1024
    code, rss = peak_rss_kb(["--passes=none", model, "-o", tmp("copy-memory.onnx")])
    if os.environ.get("SANITIZED") and code == 0 and read(model) == read(tmp("copy-memory.onnx")):
        return SKIP + "a memory bound means nothing under AddressSanitizer (make check-asan)"
    if code or read(model) != read(tmp("copy-memory.onnx")):
        return "exit %d or the copy differs from the input" % code
    limit = 3 * size_kb + 16 * 1024
    return None if rss <= limit else "peak RSS %d KiB for a %d KiB model (limit %d)" % (rss, size_kb, limit)


def t_stdin_passes_none():
    data = read(SAMPLE)
    return expect_quiet(["--passes=none", "-", "-o", "-"], stdin=data, want_stdout=data)


# ---------------------------------------------------------------------------
# terminals: refusing binary output, colour, progress
# ---------------------------------------------------------------------------

def t_refuse_terminal():
    for args in ([SAMPLE], [SAMPLE, "-o", "-"]):
        code, seen, err = run_tty(args, term_env(), tty_stdout=True)
        if code != 3:
            return "%s: exit %d, want 3 (stderr %r)" % (args, code, err)
        if "terminal" not in err:
            return "%s: the message does not say why: %r" % (args, err)
        if seen:
            return "%s: %d bytes written to the terminal" % (args, len(seen))
    return None


def t_print_on_terminal():
    code, seen, err = run_tty(["--print", SAMPLE], term_env(), tty_stdout=True)
    if code != 0 or err:
        return "exit %d, stderr %r" % (code, err)
    return None if b"conv0" in seen else "no table on the terminal"


def t_colour():
    args = ["--report", "--dry-run", WARNS]
    for env, want, what in ((term_env(), True, "without NO_COLOR"),
                            (term_env(NO_COLOR=""), True, "with NO_COLOR empty"),
                            (term_env(NO_COLOR="1"), False, "with NO_COLOR=1"),
                            (term_env(TERM="dumb"), False, "with TERM=dumb")):
        code, _, seen = run_tty(args, env)
        if code != 0 or "warning:" not in seen:
            return "%s: exit %d, %r" % (what, code, seen)
        if ("\x1b[" in seen) != want:
            return "%s: colour %s: %r" % (what, "missing" if want else "present", seen)
    code, _, err = run(args, env=term_env())
    return "colour on a pipe: %r" % err if "\x1b" in err else None


def t_colour_error():
    code, _, seen = run_tty([tmp("missing.onnx")], term_env())
    if code != 2 or "\x1b[" not in seen:
        return "no coloured error on a terminal: exit %d, %r" % (code, seen)
    code, _, seen = run_tty([tmp("missing.onnx")], term_env(NO_COLOR="yes"))
    return "colour with NO_COLOR: %r" % seen if "\x1b" in seen else None


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def big_model(path, nbytes):
    """Y = X + W with a float W of nbytes, all zero: the zeros end the file, so
    it is written sparse (a few KB on disk)."""
    from onnx import TensorProto, helper
    n = nbytes // 4
    g = helper.make_graph([helper.make_node("Add", ["X", "W"], ["Y"], name="add0")], "big",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    graph = m.graph.SerializeToString()
    m.ClearField("graph")
    tensor = TensorProto(name="W", dims=[n], data_type=TensorProto.FLOAT).SerializeToString()
    tensor += varint(9 << 3 | 2) + varint(n * 4)  # raw_data, its bytes follow
    graph += varint(5 << 3 | 2) + varint(len(tensor) + n * 4) + tensor  # initializer
    head = m.SerializeToString() + varint(7 << 3 | 2) + varint(len(graph) + n * 4) + graph
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + n * 4)


def t_progress():
    path = tmp("big.onnx")
    big_model(path, (1 << 30) + (64 << 20))
    try:
        code, _, seen = run_tty(["--dry-run", path], term_env())
        if code != 0 or "loading" not in seen or "\r" not in seen:
            return "no status line on a terminal: exit %d, %r" % (code, seen[:200])
        if not seen.endswith("\r") or seen.rstrip("\r").split("\r")[-1].strip():
            return "the status line is not cleared at the end: %r" % seen[-120:]
        code, _, seen = run_tty(["-q", "--dry-run", path], term_env())
        if code != 0 or seen:
            return "-q: exit %d, %r" % (code, seen[:200])
        return expect_quiet(["--dry-run", path])
    finally:
        os.unlink(path)


def t_no_progress_small():
    code, _, seen = run_tty([SAMPLE, "-o", tmp("s.onnx")], term_env())
    return None if code == 0 and not seen else "exit %d, stderr %r" % (code, seen)


# ---------------------------------------------------------------------------
# interrupted runs and inputs that change under ppqfmt: no temporary left
# ---------------------------------------------------------------------------

def big_conv_bn_model(path, nbytes):
    """Conv with a zero weight W of nbytes followed by a BatchNormalization:
    fuse-bn computes the new W while writing it. W's raw bytes end the file,
    which is written sparse (a few KB on disk)."""
    from onnx import TensorProto, helper
    c = nbytes // 16
    stats = [helper.make_tensor(n, TensorProto.FLOAT, [4], [v] * 4)
             for n, v in (("s", 2.0), ("b", 0.5), ("m", 0.0), ("v", 1.0))]
    g = helper.make_graph([helper.make_node("Conv", ["X", "W"], ["c"], name="conv"),
                           helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["Y"],
                                            name="bn")],
                          "big", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, c, 1, 1])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 1, 1])], stats)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    graph = m.graph.SerializeToString()
    m.ClearField("graph")
    n = 16 * c
    tensor = TensorProto(name="W", dims=[4, c, 1, 1], data_type=TensorProto.FLOAT).SerializeToString()
    tensor += varint(9 << 3 | 2) + varint(n)  # raw_data, its bytes follow
    graph += varint(5 << 3 | 2) + varint(len(tensor) + n) + tensor  # initializer
    head = m.SerializeToString() + varint(7 << 3 | 2) + varint(len(graph) + n) + graph
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(len(head) + n)


def temporaries(folder):
    return [n for n in os.listdir(folder) if n.startswith(".ppqfmt-")]


def default_signals():
    """In the child before exec: SIGINT, SIGTERM and SIGHUP as a terminal
    gives them. A suite run in the background (`make test &`, nohup) passes
    them on ignored, and ppqfmt rightly leaves an ignored signal ignored."""
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def interrupt_write(args, act):
    """Runs ppqfmt on a big Conv+BN model, calling act(process, model) as soon
    as its temporary file appears in the output folder (polled, not timed).
    When the run ends before that (a fast write, or this process kept off
    the CPU meanwhile), it is retried on a bigger model, up to 1.75 GiB (an
    inline model cannot pass 2 GiB), three times over.
    Returns (exit status, stderr, files left in the output folder)."""
    out = tmp("interrupted")
    for size in (256 << 20, 1 << 30, 1792 << 20) * 3:
        shutil.rmtree(out, ignore_errors=True)
        os.mkdir(out)
        model = tmp("interrupt.onnx")
        big_conv_bn_model(model, size)
        p = subprocess.Popen([PPQFMT] + args + [model, "-o", os.path.join(out, "y.onnx")],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, preexec_fn=default_signals)
        while p.poll() is None and not temporaries(out):
            select.select([], [], [], 0.0005)
        if p.poll() is None:
            act(p, model)
        _, err = p.communicate(timeout=RUN_TIMEOUT)
        if p.returncode != 0:
            left = os.listdir(out)
            os.unlink(model)
            return p.returncode, err.decode("utf-8", "replace"), left
    raise RuntimeError("the write ended before it could be interrupted, even at 1.75 GiB")


def t_signal_removes_temporary():
    """SIGINT, SIGTERM and SIGHUP during the write: the temporary file is
    removed and ppqfmt dies by the signal."""
    import signal
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        code, err, left = interrupt_write([], lambda p, model: p.send_signal(sig))
        if code != -sig or left:
            return "%s: exit %d (want killed by the signal), files left %s, stderr %r" % (
                sig.name, code, left, err)
    return None


def t_input_truncated_while_writing():
    """The input truncated while its bytes are copied (--passes=none) or
    folded (fuse-bn, a second thread reading the mapping: SIGBUS): exit 2,
    one line saying so, no temporary file left."""
    for args in ([], ["--passes=none"]):
        code, err, left = interrupt_write(args, lambda p, model: os.truncate(model, 4096))
        lines = err.splitlines()
        if code != 2 or left or len(lines) != 1 or "input changed while reading" not in err:
            return "%s: exit %d (want 2), files left %s, stderr %r" % (args, code, left, err)
    return None


def peak_rss_mib(args, stdin):
    """ppqfmt's exit status and peak resident size in MiB (GNU time when
    installed: wait4 would also count the Python process it forks from)."""
    gnu_time = "/usr/bin/time"
    if not os.access(gnu_time, os.X_OK):
        return None, None
    with tempfile.NamedTemporaryFile() as report:
        p = subprocess.run([gnu_time, "-f", "%M", "-o", report.name, PPQFMT] + args, stdin=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
        kib = open(report.name).read().strip().splitlines()[-1]
    return p.returncode, int(kib) / 1024


def t_stdin_memory_flat():
    """A 256 MiB model on standard input is spooled to a temporary file and
    mapped, not read into memory: the peak RSS stays far below its size."""
    model = tmp("stdin_big.onnx")
    big_model(model, 256 << 20)
    try:
        with open(model, "rb") as f:
            code, rss = peak_rss_mib(["--passes=none", "-", "-o", "-"], f)
    finally:
        os.unlink(model)
    if code is None:
        return SKIP + "no GNU time (/usr/bin/time) to measure the peak RSS"
    return None if code == 0 and rss < 64 else "exit %d, peak RSS %.0f MiB" % (code, rss)


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        kib = [line.split()[1] for line in f if line.startswith("VmRSS:")]
    return int(kib[0]) / 1024 if kib else 0


def run_watched(args, stdin, limit_mib=512, seconds=20):
    """(exit status, stderr) of ppqfmt, or (None, why) when it grows past
    limit_mib of memory or runs past seconds (it is then killed)."""
    p = subprocess.Popen([PPQFMT] + args, stdin=stdin, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    why, start = None, time.monotonic()
    while p.poll() is None and not why:
        try:
            if rss_mib(p.pid) > limit_mib:
                why = "grew past %d MiB" % limit_mib
        except (OSError, IndexError, ValueError):
            pass  # exited meanwhile
        if time.monotonic() - start > seconds:
            why = "still reading after %d s" % seconds
        select.select([], [], [], 0.01)
    if why:
        p.kill()
    err = p.communicate()[1].decode("utf-8", "replace")
    return (None, why) if why else (p.returncode, err)


def t_endless_input_stops():
    """/dev/zero as the input, or as standard input, is refused after its
    first KiB (exit 2) instead of being read without end."""
    for args, stdin in ((["/dev/zero"], subprocess.DEVNULL), (["-"], open("/dev/zero", "rb"))):
        code, err = run_watched(args + ["-o", tmp("zero.onnx")], stdin)
        if stdin != subprocess.DEVNULL:
            stdin.close()
        if code != 2 or "not an ONNX model" not in err or os.path.exists(tmp("zero.onnx")):
            return "%s: exit %s (want 2): %r" % (args, code, err)
    return None


# ---------------------------------------------------------------------------
# --print
# ---------------------------------------------------------------------------

def t_print_node_names():
    import onnx
    names = [n.name for n in onnx.load(SAMPLE).graph.node]
    code, out, err = run(["--passes=none", "--print", SAMPLE])
    text = out.decode()
    missing = [n for n in names if not re.search(r"(?m)^node\s+%s\s" % re.escape(n), text)]
    if code != 0 or missing:
        return "exit %d; node rows missing for %s" % (code, missing)
    return None


def t_print_attributes():
    out = output_of(["--print"], SAMPLE).decode()
    lines = out.splitlines()
    header = lines[0].split()
    if header != ["kind", "name", "type", "inputs", "outputs", "attributes"]:
        return "header %r" % lines[0]
    conv = [line for line in lines if re.match(r"node\s+conv0\s", line)]
    if not conv or "kernel=[3,3]" not in conv[0] or "pads=[1,1,1,1]" not in conv[0]:
        return "conv0's row lacks its attributes: %r" % conv
    if conv[0].index("kernel=") != lines[0].index("attributes"):
        return "the attributes column is not aligned"
    if any(line != line.rstrip() for line in lines):
        return "trailing blanks"
    return None


def t_print_symbolic_dims():
    """A declared symbolic dim prints by its name (it printed '?'); a dim with
    neither a value nor a name stays '?'."""
    import onnx
    from onnx import helper, TensorProto
    g = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"], name="relu0")], "g",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, None])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3, None])])
    path = tmp("symbolic_print.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    out = output_of(["--passes=none", "--print"], path).decode()
    rows = [line.split() for line in out.splitlines() if line.split()[:2] in (["input", "X"],
                                                                              ["output", "Y"])]
    if len(rows) != 2 or any(r[2] != "float[N,3,?]" for r in rows):
        return "rows %r" % rows
    return None


# ---------------------------------------------------------------------------
# issue 11, item 11: options and pass names
# ---------------------------------------------------------------------------

def t_unknown_short_option():
    """An unknown letter in a cluster is named, not argv[0] or the model."""
    for args, letter in ((["-weird.onnx"], "w"), ([SAMPLE, "-xq"], "x"), (["-qZ", SAMPLE], "Z")):
        err = expect_error(args, 1, ["unknown option -%s" % letter])
        if err:
            return "%s: %s" % (args, err)
    return None


def t_pass_name_suggestion():
    """A misspelt pass name: the nearest registry name is suggested, in every
    option that takes pass names."""
    passes = list_passes()
    want = [p for p in passes if p.replace("-", "") == "fusebn"]  # what "fusebn" was meant to be
    if len(want) != 1:
        return "no registry name reads 'fusebn' without its dashes: %s" % passes
    for args in (["--no-fusebn"], ["--passes=fusebn"], ["--enable=fusebn"], ["--disable=identity,fusebn"]):
        err = expect_error(args + [SAMPLE], 1, ["unknown pass 'fusebn'; did you mean '%s'?" % want[0]])
        if err:
            return "%s: %s" % (args, err)
    return expect_error(["--passes=zzzzzz", SAMPLE], 1, ["unknown pass 'zzzzzz'"])


def t_pass_name_underscore():
    """'_' stands for '-' in pass names, in every spelling."""
    dashed = [p for p in list_passes() if "-" in p]
    if not dashed:
        return "no pass name with a dash"
    for p in dashed:
        u = p.replace("-", "_")
        want = output_of(["--passes=" + p], MIXED)
        if output_of(["--passes=" + u], MIXED) != want:
            return "--passes=%s differs from --passes=%s" % (u, p)
        want = output_of(["--no-" + p], MIXED)
        for args in (["--no-" + u], ["--disable=" + u]):
            if output_of(args, MIXED) != want:
                return "%s differs from --no-%s" % (args, p)
    return None


def t_empty_pass_list():
    for opt in ("--passes=", "--enable=", "--disable=", "--passes=identity,,isolated"):
        err = expect_error([opt, SAMPLE], 1)
        if err:
            return "%s: %s" % (opt, err)
    return None


def t_option_without_effect():
    """--dry-run -o FILE and --size-threshold without --external-data: one
    warning line each; none with -q; in the JSON with --report=json."""
    out = tmp("dry.onnx")
    for args, words in ((["--dry-run", "-o", out], ["-o", "--dry-run"]),
                        (["--size-threshold=10", "-o", tmp("st.onnx")], ["--size-threshold", "--external-data"])):
        code, _, err = run(args + [SAMPLE])
        lines = err.splitlines()
        if code != 0 or len(lines) != 1 or "warning" not in lines[0] or "no effect" not in lines[0] or \
                any(w not in lines[0] for w in words):
            return "%s: exit %d, want one warning naming %s: %r" % (args, code, words, err)
        err = expect_quiet(["-q"] + args + [SAMPLE])
        if err:
            return "-q %s: %s" % (args, err)
        code, _, err = run(["--report=json"] + args + [SAMPLE])
        rep = json.loads(err)
        opts = [w for w in rep["other_warnings"] if w["stage"] == "options"]
        if code != 0 or len(opts) != 1 or opts[0]["subject"] != words[0] or rep["warnings"] != 1:
            return "--report=json %s: other_warnings %r, warnings %r" % (args, rep["other_warnings"], rep["warnings"])
    if os.path.exists(out):
        return "--dry-run wrote %s" % out
    return expect_quiet(["--external-data=w.bin", "--size-threshold=10", SAMPLE, "-o", tmp("ed.onnx")])


def t_fold_limit():
    """--fold-limit=BYTES: a node whose result is larger stays, with a
    warning naming it and the option; by default (64 MiB) it folds. A
    limit that is not a byte count, or is 0, is a usage error (exit 1)."""
    import onnx
    large = os.path.join(REPO, "testdata", "fold", "large.onnx")  # Transpose of a 1 MiB weight
    for args, folded in (([], True), (["--fold-limit=1000000"], False)):
        out = tmp("fold_limit.onnx")
        code, _, err = run(args + [large, "-o", out])
        kinds = [n.op_type for n in onnx.load(out).graph.node] if code == 0 else []
        if code != 0 or ("Transpose" not in kinds) == (not folded):
            return "%s: exit %d, nodes %s" % (args, code, kinds)
        if not folded and ("tr0" not in err or "--fold-limit" not in err):
            return "%s: no warning naming tr0 and --fold-limit: %r" % (args, err)
    for bad in ("lots", "0"):  # 0 once meant the 64 MiB default, silently
        code, _, err = run(["--fold-limit=" + bad, SAMPLE, "-o", tmp("fold_limit_bad.onnx")])
        if code != 1 or "--fold-limit" not in err or os.path.exists(tmp("fold_limit_bad.onnx")):
            return "--fold-limit=%s: exit %d (want 1, no output), %r" % (bad, code, err)
    return None

def t_terminal_refused_before_loading():
    """stdout a terminal: refused (exit 3) before the input is read, so even an
    input that is not a model gets the terminal message."""
    with open(tmp("notamodel.onnx"), "wb") as f:
        f.write(b"this is not a model")
    code, seen, err = run_tty([tmp("notamodel.onnx")], term_env(), tty_stdout=True)
    if code != 3 or "terminal" not in err or seen:
        return "exit %d (want 3), stderr %r, %d bytes on the terminal" % (code, err, len(seen))
    return None


# ---------------------------------------------------------------------------
# item 12: JSON stays JSON; model names are safe on a terminal
# ---------------------------------------------------------------------------

def t_json_verbose():
    """--report=json -v (and an option warning): stderr is one JSON document."""
    for model in (ROUNDS, WARNS):
        code, _, err = run(["--report=json", "-v", "--size-threshold=5", model, "-o", tmp("jv.onnx")])
        try:
            rep = json.loads(err)
        except ValueError as e:
            return "%s: stderr is not one JSON document (%s): %r" % (os.path.basename(model), e, err[:300])
        errs = schema_errors(rep, list_passes())
        if code != 0 or errs:
            return "%s: exit %d; %s" % (os.path.basename(model), code, "; ".join(errs))
    return None


EVIL = b"\x1b[31mred\x1b[0m\x07\xff\xfe\xe2\x80\xaeevil"  # escapes, BEL, non-UTF-8 bytes, U+202E
LONG = b"L" * (1 << 20)


def evil_names_model(path):
    """X -> Identity(EVIL) -> t -> Identity(LONG) -> u -> Relu -> Y. protobuf
    will not take such names, so they replace same-length placeholders in the
    encoded model."""
    from onnx import TensorProto, helper
    p1, p2 = "P" * len(EVIL), "Q" * len(LONG)
    nodes = [helper.make_node("Identity", ["X"], ["t"], name=p1),
             helper.make_node("Identity", ["t"], ["u"], name=p2),
             helper.make_node("Relu", ["u"], ["Y"], name="relu")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])])
    data = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    with open(path, "wb") as f:
        f.write(data.replace(p1.encode(), EVIL).replace(p2.encode(), LONG))
    return path


def run_raw(args):
    p = subprocess.run([PPQFMT] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def t_json_utf8():
    """Names that are not UTF-8 or hold control characters: the JSON is valid
    UTF-8 and gives them back with U+FFFD for the bad bytes."""
    model = evil_names_model(tmp("evil.onnx"))
    code, _, err = run_raw(["--report=json", "--dry-run", model])
    try:
        rep = json.loads(err.decode("utf-8"))  # strict: a bad byte fails here
    except ValueError as e:
        return "exit %d, stderr is not UTF-8 JSON: %s" % (code, e)
    subjects = [a["subject"] for p in rep["passes"] for a in p["actions"]]
    want = [EVIL.decode("utf-8", "replace"), LONG.decode()]
    return None if subjects == want else "subjects %r, want %r" % (
        [x[:40] for x in subjects], [x[:40] for x in want])


def terminal_safe(text, what):
    """None when text (bytes) is UTF-8 without control characters but newlines,
    shows the evil name escaped and the long one cut with '…'."""
    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError as e:
        return "%s: not UTF-8: %s" % (what, e)
    raw = sorted({hex(ord(c)) for c in s if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0
                  or c == "\u202e"})
    if raw:
        return "%s: raw control characters %s" % (what, raw)
    if "\\x1b[31mred\\x1b[0m\\x07" not in s:
        return "%s: the escape sequence is not shown escaped: %r" % (what, s[:300])
    if max(len(line) for line in s.splitlines()) > 1000 or "L" * 40 + "…" not in s:
        return "%s: the 1 MB name is not cut with '…' (longest line %d)" % (
            what, max(len(line) for line in s.splitlines()))
    return None


def t_names_safe_on_terminal():
    model = evil_names_model(tmp("evil.onnx"))
    code, _, err = run_raw(["--report", "--dry-run", model])
    bad = terminal_safe(err, "--report") if code == 0 else "--report: exit %d" % code
    if bad:
        return bad
    code, out, err = run_raw(["--print", "--passes=none", model])
    return terminal_safe(out, "--print") if code == 0 else "--print: exit %d: %r" % (code, err)


# ---------------------------------------------------------------------------
# item 13: one line per pass with totals over the rounds
# ---------------------------------------------------------------------------

def initializer_names(path, constants=False):
    """Initializer names of every graph (with the outputs of Constant nodes,
    which the constant pass turns into initializers, when constants)."""
    import onnx
    graphs = [c[-1][1] for c in testlib.scoped_graphs(onnx.load(path))]
    return {i.name for g in graphs for i in g.initializer} | \
        {o for g in graphs for n in g.node if constants and n.op_type == "Constant" for o in n.output}


def t_text_report_totals():
    """A model that needs a second round: each pass once, in pipeline order;
    isolated's initializers are those the input has (Constants included) and
    the output lacks."""
    out = tmp("rounds.onnx")
    code, _, err = run(["--report", ROUNDS, "-o", out])
    if code != 0:
        return "exit %d: %s" % (code, err)
    passes = list_passes()
    heads = [line.split(":")[0] for line in err.splitlines() if "warning:" not in line]
    if len(set(heads)) != len(heads) or heads != sorted(heads, key=passes.index):
        return "want each pass once, in pipeline order %s: %r" % (passes, err)
    gone = initializer_names(ROUNDS, constants=True) - initializer_names(out)
    m = re.search(r"^isolated: .*removed initializer (\d+) \(([^)]*)\)", err, re.M)
    if not gone or not m or int(m.group(1)) != len(gone) or set(m.group(2).split(", ")) != gone:
        return "want 'removed initializer %d (%s)': %r" % (len(gone), ", ".join(sorted(gone)), err)
    return None


def t_json_rounds():
    rep = json_report([], ROUNDS)
    iso = [p for p in rep["passes"] if p["name"] == "isolated"][0]
    text = run(["--report", "--dry-run", ROUNDS])[2]
    m = re.search(r"^isolated: .*removed initializer (\d+)", text, re.M)
    if rep["rounds"] < 2 or not m or iso["changes"] != int(m.group(1)):
        return "rounds %r, isolated changes %r, text %r" % (rep["rounds"], iso["changes"], text)
    return None


def t_opset_raise_text():
    import onnx
    out = tmp("opset.onnx")
    code, _, err = run(["--report", OPSET9, "-o", out])
    version = lambda path: [o.version for o in onnx.load(path).opset_import if o.domain in ("", "ai.onnx")][0]
    # slice raises to 10 and clip on to 11: the chain goes from the input's opset to the output's
    raises = re.findall(r"raised opset (\d+) \u2192 (\d+)", err)
    chain = [(int(a), int(b)) for a, b in raises]
    ok = chain and chain[0][0] == version(OPSET9) and chain[-1][1] == version(out) and \
        all(a[1] == b[0] for a, b in zip(chain, chain[1:]))
    return None if code == 0 and ok else "raises %r do not lead from %d to %d: %r" % (
        chain, version(OPSET9), version(out), err)


def t_verbose_names_pass_once():
    code, _, err = run(["-v", "--dry-run", ROUNDS])
    lines = [line for line in err.splitlines() if "warning:" not in line]
    counts = {p: sum(bool(re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(p), line)) for line in lines)
              for p in default_passes()}
    twice = {p: n for p, n in counts.items() if n != 1}
    return "exit %d; passes not named once: %s: %r" % (code, twice, err) if code or twice else None


def main():
    global TMP
    if not os.access(PPQFMT, os.X_OK):
        print("ppqfmt not found or not executable: %s (set PPQFMT)" % PPQFMT, file=sys.stderr)
        print("test_cli: 0 passed, 1 failed")
        return 1
    TMP = tempfile.mkdtemp(prefix="ppqfmt-cli-")
    try:
        tests = [(name[2:].replace("_", "-"), fn) for name, fn in globals().items()
                 if name.startswith("t_") and callable(fn) and fn.__code__.co_argcount == 0]
        for name, fn in tests:
            check(name, fn)
        for model in (SAMPLE, MIXED):
            check("pass-spellings %s" % os.path.basename(model), t_pass_spellings, model)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
