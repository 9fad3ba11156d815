"""test_rss.py - a 2 GiB+ external-data model formatted by path from Python
stays within a small multiple of the command line's memory: the weights go
file to file in the C library, never through Python.

The model (BUILD/rss/big.onnx + big.bin, kept between runs): a chain of 9
MatMuls, each weight a 256 MiB float32 8192x8192 tensor of distinct values
(nothing folds or deduplicates). Peak RSS (ru_maxrss of a child process) of
`ppqfmt big.onnx -o out/big.onnx` against a Python process that imports
ppqfmt and calls ppqfmt.format(path, output=...), less that process's own
import cost (measured alone). Python's extra must stay <= 2 x the binary's
peak. Writing the model takes about half a minute and 2.3 GB of disk, the
outputs as much again (removed after)."""
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

from conftest import BUILD, PPQFMT

N, LAYERS = 8192, 9


def make_model(path):
    data = path[:-5] + ".bin"
    inits, nodes, offset = [], [], 0
    row = np.arange(N, dtype=np.float32)
    with open(data + ".part", "wb") as f:
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
    os.replace(data + ".part", data)
    graph = helper.make_graph(nodes, "big",
                              [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [1, N])],
                              [helper.make_tensor_value_info(f"x{LAYERS}", TensorProto.FLOAT,
                                                             [1, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def peak_rss(cmd):
    """The peak RSS (KiB) of cmd, from a fresh Python whose children's maximum starts at 0."""
    code = ("import resource,subprocess;"
            f"subprocess.run({cmd!r},check=True);"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    return int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True).stdout)


def test_big_model_rss(ppqfmt):
    work = os.path.join(BUILD, "rss")
    big = os.path.join(work, "big.onnx")
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    if not os.path.exists(big):
        make_model(big)
    out = os.path.join(work, "out", "big.onnx")
    try:
        bin_kib = peak_rss([PPQFMT, big, "-o", out])
        idle_kib = peak_rss([sys.executable, "-c", "import ppqfmt"])
        py_kib = peak_rss([sys.executable, "-c",
                           f"import ppqfmt; ppqfmt.format({big!r}, output={out!r})"])
    finally:
        shutil.rmtree(os.path.join(work, "out"))
    print(f"binary peak {bin_kib} KiB; python {py_kib} KiB ({idle_kib} KiB importing)")
    assert os.path.getsize(big[:-5] + ".bin") >= 2 * 2**30
    assert py_kib - idle_kib <= 2 * bin_kib
