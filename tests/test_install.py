#!/usr/bin/python3
"""test_install.py - `make install` into a staging folder, then a C program
built against it through pkg-config.

Installs with DESTDIR=<tmp>/stage PREFIX=/opt/ppqfmt, as a packager does, and
checks:

  - ppqfmt.pc names libdir and includedir relative to ${prefix}, so the tree
    still works once moved;
  - `pkg-config --cflags --libs ppqfmt`, with prefix redefined to where the
    staged tree actually is, compiles and links a program calling the public
    API (the staged header and library, not the build folder's);
  - that program formats testdata/sample.onnx and its output is
    byte-identical to the CLI's.

Prints "test_install: N passed, M failed" as its last line; exit 1 on any
failure. Environment: PPQFMT (default build/ppqfmt). The install is always
make's own build/ (the sanitized variant has no shared library).
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.environ.get("PPQFMT", "build/ppqfmt")
PREFIX = "/opt/ppqfmt"

PROGRAM = r"""
#include <ppqfmt.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    if (argc != 3)
        return 9;
    ppqfmt_options *o = ppqfmt_options_new();
    int rc = ppqfmt_format_file(o, argv[1], argv[2]);
    if (rc != 0)
        fprintf(stderr, "%s\n", ppqfmt_last_error(o));
    ppqfmt_options_free(o);
    return rc;
}
"""

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + detail if detail else ""))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)


def pc_variables(path):
    out = {}
    with open(path) as f:
        for line in f:
            if "=" in line and ":" not in line.split("=", 1)[0]:
                key, value = line.strip().split("=", 1)
                out[key] = value
    return out


def sample_model():
    return os.path.join(ROOT, "testdata", "sample.onnx")


def build_and_run(tmp, stage):
    top = stage + PREFIX
    pc_dir = os.path.join(top, "lib", "pkgconfig")
    env = dict(os.environ, PKG_CONFIG_PATH=pc_dir)
    flags = run(["pkg-config", "--define-variable=prefix=" + top,
                 "--cflags", "--libs", "ppqfmt"], env=env)
    check("pkg-config --cflags --libs", flags.returncode == 0, flags.stderr)
    check("flags point into the staged tree", top in flags.stdout, flags.stdout)
    src = os.path.join(tmp, "prog.c")
    with open(src, "w") as f:
        f.write(PROGRAM)
    exe = os.path.join(tmp, "prog")
    cc = run(["cc", "-std=c11", "-Wall", "-Werror", "-o", exe, src]
             + flags.stdout.split())
    check("program compiles and links", cc.returncode == 0, cc.stderr)
    if cc.returncode != 0:
        return
    ldd = run(["ldd", exe], env=dict(env, LD_LIBRARY_PATH=top + "/lib"))
    check("program loads the staged library", top + "/lib/libppqfmt.so" in ldd.stdout,
          ldd.stdout)
    model = sample_model()
    mine = os.path.join(tmp, "api.onnx")
    ref = os.path.join(tmp, "cli.onnx")
    res = run([exe, model, mine], env=dict(env, LD_LIBRARY_PATH=top + "/lib"))
    check("program formats a model", res.returncode == 0, res.stderr)
    cli = run([os.path.join(ROOT, PPQFMT), model, "-o", ref])
    check("CLI formats the same model", cli.returncode == 0, cli.stderr)
    if res.returncode == 0 and cli.returncode == 0:
        with open(mine, "rb") as a, open(ref, "rb") as b:
            check("library output byte-identical to the CLI's", a.read() == b.read())


def main():
    with tempfile.TemporaryDirectory(prefix="ppqfmt-install-") as tmp:
        stage = os.path.join(tmp, "stage")
        inst = run(["make", "-s", "install", "DESTDIR=" + stage, "PREFIX=" + PREFIX])
        check("make install DESTDIR PREFIX", inst.returncode == 0, inst.stderr[-2000:])
        pc = stage + PREFIX + "/lib/pkgconfig/ppqfmt.pc"
        check("ppqfmt.pc installed", os.path.exists(pc))
        if os.path.exists(pc):
            v = pc_variables(pc)
            check("prefix is the install prefix", v.get("prefix") == PREFIX, str(v))
            check("libdir relative to ${prefix}", v.get("libdir") == "${prefix}/lib", str(v))
            check("includedir relative to ${prefix}",
                  v.get("includedir") == "${prefix}/include", str(v))
            build_and_run(tmp, stage)
    print("test_install: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
