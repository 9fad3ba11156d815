#!/usr/bin/env python3
"""test_python_rss.py - a 2 GiB+ external-data model formatted by path from
Python stays within a small multiple of the command line's memory
(make test-python-rss; apart from make test: writing and formatting the model
takes about a minute and 4.5 GB of disk).

The model (BUILD/rss/big.onnx + big.bin): a chain of 9 MatMuls, each weight
a 256 MiB float32 8192x8192 tensor of distinct values (nothing folds or
deduplicates). Peak RSS (ru_maxrss of a child process) of `ppqfmt big.onnx
-o out/big.onnx` against a Python process that imports ppqfmt and calls
ppqfmt.format(path, output=...); the Python process's own import cost
(measured alone) is subtracted. Passes when Python's extra <= 2 x the
binary's peak. Needs tests/test_python.py's install in BUILD/pypkg.
The last line is "test_python_rss: N passed, M failed".
"""
import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
PPQFMT = os.path.join(REPO, os.environ.get("PPQFMT", "build/ppqfmt"))
PKG = os.path.join(BUILD, "pypkg")
N, LAYERS = 8192, 9


def make_model(path):
    import numpy as np
    from onnx import TensorProto, helper
    data = path[:-5] + ".bin"
    inits, nodes, offset = [], [], 0
    row = np.arange(N, dtype=np.float32)
    with open(data, "wb") as f:
        for i in range(LAYERS):
            for r in range(N):  # a row at a time: the generator stays small too
                (row + (i * N + r) * 1e-3).tofile(f)
            w = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT, dims=[N, N],
                            data_location=TensorProto.EXTERNAL)
            for k, v in (("location", os.path.basename(data)), ("offset", str(offset)),
                         ("length", str(N * N * 4))):
                w.external_data.add(key=k, value=v)
            offset += N * N * 4
            inits.append(w)
            nodes.append(helper.make_node("MatMul", [f"x{i}", f"w{i}"], [f"x{i + 1}"]))
    graph = helper.make_graph(nodes, "big",
                              [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1, N])],
                              [helper.make_tensor_value_info(f"x{LAYERS}", TensorProto.FLOAT,
                                                             [1, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def measure(cmd, env=None):
    """The peak RSS (KiB) and wall time of cmd, from a fresh Python whose
    children's maximum starts at 0."""
    code = ("import resource,subprocess,sys,time;t=time.time();"
            f"subprocess.run({cmd!r},check=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,time.time()-t)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.split()
    return int(out[0]), float(out[1])


def main():
    work = os.path.join(BUILD, "rss")
    big = os.path.join(work, "big.onnx")
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    if not os.path.exists(big):
        make_model(big)
    size = os.path.getsize(big[:-5] + ".bin")
    out = os.path.join(work, "out", "big.onnx")
    env = dict(os.environ, PYTHONPATH=PKG)
    bin_kib, bin_s = measure([PPQFMT, big, "-o", out])
    idle_kib, _ = measure([sys.executable, "-c", "import ppqfmt"], env)
    py_kib, py_s = measure([sys.executable, "-c",
                            f"import ppqfmt; ppqfmt.format({big!r}, output={out!r})"], env)
    extra = py_kib - idle_kib
    print(f"model {size / 2**30:.2f} GiB external data; ppqfmt binary: peak RSS "
          f"{bin_kib} KiB, {bin_s:.1f} s; python ppqfmt.format: peak RSS "
          f"{py_kib} KiB ({idle_kib} KiB of it importing), {py_s:.1f} s")
    ok = size >= 2 * 2**30 and extra <= 2 * bin_kib
    print(("ok " if ok else "FAIL ") + "python's extra RSS <= 2 x the binary's peak")
    shutil.rmtree(os.path.join(work, "out"))
    print(f"test_python_rss: {int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
