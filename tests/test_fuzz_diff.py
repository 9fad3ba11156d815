#!/usr/bin/python3
"""Differential fuzzing in make test: the known-bug models and a fixed set of seeds.

Usage: tests/test_fuzz_diff.py [--count N] [--jobs J]

0. The runner's parts: ppqfmt through build/tools/fork_server gives what the binary
   gives; the value_info check passes right declarations and flags a wrong dim; over
   GEN_SEEDS the generator makes every no-op form, layer norms at opset 17, constant
   expressions of every op of FOLD_EXPR_OPS, LSTM/GRU/RNN, TopK and NonZero, a Gemm with
   beta 0 and inf/NaN in its unread C before an Add/Mul/BatchNormalization (over
   FOLD_SEEDS) and no
   unk__N symbol, and the random configurations draw --target-opset, --input-shape
   (with the sizes fed) and --enable; a refused --target-opset is a skip.
1. Every row of tests/regress/diff/README.md is replayed with its command
   (scripts/fuzz_diff.py replay): a `known` row's check must still fail (an
   expected failure; if it passes: `XPASS: remove from known bugs`), a `fixed`
   row's checks must all pass.
2. Seeds 0..N-1 (default 240) go through the generator and every check of
   scripts/fuzz_diff.py (default passes, --passes=none, random pass subsets and options),
   except the seeds of `known` rows. A seed the generator cannot make valid
   (a reject) fails too: the generator must make valid models.
The last line is `fuzz_diff: N passed, M failed` (N counts the checks).
Run with Debian's /usr/bin/python3 (python3-onnx, numpy; onnxruntime via node).
"""
import argparse
import functools
import math
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
import onnx.numpy_helper
from onnx import helper

import testlib  # tests/, beside this file

sys.path.insert(0, testlib.SCRIPTS)
import fuzz_diff  # noqa: E402
import gen_random_model as gen  # noqa: E402
import shape_oracle  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIFF_DIR = os.path.join(REPO, "tests", "regress", "diff")
README = os.path.join(DIFF_DIR, "README.md")

T = testlib.Tally("fuzz_diff")


def replay_row(row):
    name = "replay %s (%s)" % (row["file"], row["check"])
    err, results, why = fuzz_diff.replay(DIFF_DIR, row)
    if why:
        return T.report(name, "the model is no longer valid: " + why)
    if row["status"] == "known":
        xpass = "XPASS: remove from known bugs (%s now passes)" % row["check"]
        T.report(name, None if err else xpass)
        return
    for check, e in results:
        T.report("%s %s" % (name, check), e)


def fixed_seeds(count, jobs):
    known = fuzz_diff.known_seeds(README)
    stats, elapsed = fuzz_diff.run(0, count=count, jobs=jobs, opts={"skip": known})
    T.passed += stats.passed
    for seed, check, err, _, _ in stats.failures:
        T.report("seed %d %s" % (seed, check), err)
    T.failed += stats.failed - len(stats.failures)    # the other failing checks of those seeds
    for why, n in stats.reject_why.items():
        T.report("generator rejects (%d seeds)" % n, why)
    print("fixed seeds: %d models, %d skipped as known, %.1f s, %d checks skipped (no kernel)" % (
        stats.models, len(known & set(range(count))), elapsed, stats.skipped))
    print("models each pass changed (any configuration): " + ", ".join(
        "%s %d" % (p, stats.changed.get(p, 0)) for p in fuzz_diff.pass_names()))


GEN_SEEDS = range(400)   # seeds whose models the generator checks look at
FOLD_SEEDS = range(1500)
NOOP_FORMS = {   # op type -> predicate on (node, constants {name: ndarray}) of a no-op form
    "Concat of one input": ("Concat", lambda n, c: len(n.input) == 1),
    "Pad by zeros": ("Pad", lambda n, c: _attr(n, "pads", c, 1) is not None and
                     not any(_attr(n, "pads", c, 1))),
    "Expand": ("Expand", lambda n, c: True),
    "Add of 0": ("Add", lambda n, c: any(i in c and c[i].size and not c[i].any()
                                         for i in n.input)),
    "Mul by 1": ("Mul", lambda n, c: any(i in c and c[i].size and (c[i] == 1).all()
                                         for i in n.input)),
    "Transpose then Transpose": ("Transpose", lambda n, c: n.input[0] in c["#transposed"]),
}


def _attr(node, name, consts, index):
    """node's attribute name, or its input index when that is a constant (None: neither)."""
    for a in node.attribute:
        if a.name == name:
            return list(a.ints)
    if len(node.input) > index and node.input[index] in consts:
        return list(consts[node.input[index]].flat)
    return None


def _constants(g):
    consts = {t.name: onnx.numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value":
                consts[n.output[0]] = onnx.numpy_helper.to_array(a.t)
    consts["#transposed"] = {n.output[0] for n in g.node if n.op_type == "Transpose"}
    return consts


@functools.lru_cache(maxsize=None)
def generated(seed):
    return gen.generate(seed)


# Ops only scripts/gen_fold_expr.py makes (over constants, for fold to evaluate).
FOLD_EXPR_OPS = {"Softmax", "LogSoftmax", "CumSum", "Trilu", "Tile", "ScatterND", "GatherElements",
                 "OneHot", "ArgMax", "ArgMin", "Mod", "Where", "Sin", "Cos", "Round", "ReduceSum",
                 "ReduceMax", "ReduceMin", "Squeeze", "Exp", "Log", "Reciprocal", "Floor", "Ceil",
                 "Sign", "Softsign", "Max", "Min", "Mean", "Sum"}


def _beta0_fold(g, consts):
    """A Gemm with beta 0 whose C (not read) holds inf or NaN, its output read by an Add, Mul
    or BatchNormalization a fusion may fold into it."""
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, set()).add(n.op_type)
    return any(n.op_type == "Gemm" and len(n.input) > 2 and n.input[2] in consts and
               any(a.name == "beta" and a.f == 0 for a in n.attribute) and
               not all(math.isfinite(x) for x in consts[n.input[2]].flat) and
               readers.get(n.output[0], set()) & {"Add", "Mul", "BatchNormalization"}
               for n in g.node)


def generator_checks():
    """The generator makes every no-op form, fusable layer norms at opset 17, and no
    symbol of onnx's making (unk__N) in the declarations."""
    seen, ln17, made_up, fold_ops = set(), 0, [], set()
    for seed in GEN_SEEDS:
        got = generated(seed)
        if got is None:
            continue
        g, consts = got.model.graph, _constants(got.model.graph)
        for form, (op, pred) in NOOP_FORMS.items():
            seen |= {form for n in g.node if n.op_type == op and pred(n, consts)}
        ln17 += fuzz_diff.model_opset(got.model) >= 17 and \
            sum(n.op_type == "ReduceMean" for n in g.node) >= 2
        made_up += [(seed, v.name) for v in list(g.value_info) + list(g.output)
                    for d in v.type.tensor_type.shape.dim if d.dim_param.startswith("unk__")]
    missing = sorted(set(NOOP_FORMS) - seen)
    T.report("generator: no-op forms (%d seeds)" % len(GEN_SEEDS),
             "never made: %s" % missing if missing else None)
    T.report("generator: layer norms at opset 17", None if ln17 >= 5 else
             "only %d of %d models" % (ln17, len(GEN_SEEDS)))
    beta0 = 0
    for seed in FOLD_SEEDS:   # generating is cheap; some ops are rare draws
        got = generated(seed)
        fold_ops |= {n.op_type for n in got.model.graph.node} if got else set()
        beta0 += bool(got) and _beta0_fold(got.model.graph, _constants(got.model.graph))
    T.report("generator: Gemm with beta 0 and inf/NaN in C, then a fold candidate",
             None if beta0 else "never made in %d seeds" % len(FOLD_SEEDS))
    for what, ops in (("constant expressions of the ops fold evaluates", FOLD_EXPR_OPS),
                      ("recurrent ops", {"LSTM", "GRU", "RNN"}),
                      ("sizes from the data", {"TopK", "NonZero", "Range"})):
        missing = sorted(ops - fold_ops)
        T.report("generator: %s" % what, "never made: %s" % missing if missing else None)
    T.report("generator: no unk__ symbols declared",
             "e.g. seed %d value %s" % made_up[0] if made_up else None)


def config_checks():
    """Random subsets draw --target-opset N (7 <= N <= 17: raises and lowerings both) and
    --input-shape with the sizes fed, and --enable for passes off by default."""
    opsets, shapes, enables, bad, lowerings = 0, 0, 0, [], 0
    for seed in GEN_SEEDS:
        got = generated(seed)
        if got is None:
            continue
        dims = gen.input_dims(got.model)
        for _, args in fuzz_diff.configs_for(seed, got.model):
            for a in args:
                if a.startswith("--target-opset="):
                    opsets += 1
                    n = int(a.split("=")[1])
                    lowerings += n < fuzz_diff.model_opset(got.model)
                    if not 7 <= n <= 17:
                        bad.append("seed %d: %s" % (seed, a))
                elif a.startswith("--input-shape="):
                    shapes += 1
                    name, spec = a[len("--input-shape="):].split("=")
                    sizes = [d.split(":")[-1] for d in spec.split(",")]
                    if any(s != "-1" and int(s) != w for s, w in zip(sizes, dims[name])):
                        bad.append("seed %d: %s, fed %s" % (seed, a, dims[name]))
                enables += a.startswith("--enable=")
    T.report("configs: target-opset (raises and lowerings), input-shape, enable drawn",
             bad[0] if bad else None if opsets and lowerings and shapes and enables else
             "drawn: %d target-opset (%d lowerings), %d input-shape, %d enable" %
             (opsets, lowerings, shapes, enables))


def selfcheck_check():
    """check_self: ppqfmt's --check agrees with onnxruntime on a right reference and on
    its verdict; a wrong reference value, or an ort verdict it contradicts, fails it."""
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        np = fuzz_diff.np
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        src = os.path.join(tmp, "in.onnx")
        onnx.save(m, src)
        x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
        base = {"src": src, "out": os.path.join(tmp, "out.onnx"), "args": [], "nonssa": False,
                "feeds": {"x": x}}
        results = []
        for name, ref, verdict in (("right", np.maximum(x, 0), None),
                                   ("wrong value", np.maximum(x, 0) + 1, None),
                                   ("ort says differs", np.maximum(x, 0), "y: max abs 1")):
            case_tmp = os.path.join(tmp, name.replace(" ", "_"))
            os.makedirs(case_tmp)
            ctx = dict(base, tmp=case_tmp, ref={"y": ref}, ort_verdict=verdict)
            results.append(fuzz_diff.check_self(ctx))
        T.report("selfcheck: agrees with a right reference", results[0])
        T.report("selfcheck: a wrong reference value fails",
                 None if results[1] and "disagree on the input model" in results[1]
                 else "not flagged: %r" % results[1])
        T.report("selfcheck: contradicting ort's verdict fails",
                 None if results[2] and "onnxruntime says" in results[2]
                 else "not flagged: %r" % results[2])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def value_info_check():
    """check_value_info passes a model whose declared shapes are right and flags one whose
    value_info claims a wrong dim."""
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N", 3])
        y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N", 3])
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]),
                               helper.make_node("Neg", ["t"], ["y"])], "g", [x], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        ok = os.path.join(tmp, "ok.onnx")
        m.graph.value_info.append(helper.make_tensor_value_info("t", onnx.TensorProto.FLOAT,
                                                                ["N", 3]))
        onnx.save(m, ok)
        m.graph.value_info[0].type.tensor_type.shape.dim[1].dim_value = 4
        bad = os.path.join(tmp, "bad.onnx")
        onnx.save(m, bad)
        feeds = {"x": fuzz_diff.np.ones((2, 3), fuzz_diff.np.float32)}
        ort = fuzz_diff.OrtServer.shared()
        errs = [fuzz_diff.check_value_info({"out": p, "args": [], "feeds": feeds, "ort": ort})
                for p in (ok, bad)]
        T.report("value_info check: right shapes pass", errs[0])
        T.report("value_info check: a wrong dim fails", None if errs[1] and "t: dim 4" in errs[1]
                 else "not flagged: %r" % errs[1])
        sq = helper.make_model(helper.make_graph(
            [helper.make_node("Relu", ["s"], ["r"])], "g",
            [helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, ["N", "d", "d"])],
            [helper.make_tensor_value_info("r", onnx.TensorProto.FLOAT, ["N", "d", "d"])]))
        same, differ = (fuzz_diff.inputs_contradict(
            sq, {"s": fuzz_diff.np.ones(shape, fuzz_diff.np.float32)})
            for shape in ((2, 3, 3), (2, 3, 7)))
        T.report("value_info check: skipped when the fed sizes break a declared symbol",
                 None if same is None and differ == "s[2]" else "got %r, %r" % (same, differ))
        twice = shape_oracle.declared_facts(helper.make_graph(
            [], "g", [helper.make_tensor_value_info("a", 1, [None])],
            [helper.make_tensor_value_info("a", 1, [None]),
             helper.make_tensor_value_info("b", 1, [None])]))
        T.report("declared_facts: a value declared twice shares no dim name with another",
                 None if twice["a"][1] != twice["b"][1] else "both %s" % twice["a"][1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def opset_refusal_check():
    """A --target-opset that ppqfmt refuses as documented (exit 2: a nearest Resize-10 that
    upsamples and downsamples at once) is a skip; the same exit without it is a failure."""
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 1, 4, 4])
        y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 1, 2, 8])
        scales = onnx.numpy_helper.from_array(
            fuzz_diff.np.array([1, 1, 0.5, 2], fuzz_diff.np.float32), "s")
        g = helper.make_graph([helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest")],
                              "g", [x], [y], initializer=[scales])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 10)])
        m.ir_version = 5
        src = os.path.join(tmp, "in.onnx")
        onnx.save(m, src)
        case = fuzz_diff.Case(0, m)
        ctx = {"tmp": tmp, "src": src}
        got = [fuzz_diff.run_config(case, "c", args, ctx)[0][0][1]
               for args in (["--target-opset=13"], ["--passes=none", "--bogus"])]
        T.report("a refused --target-opset is a skip",
                 None if got[0] and got[0].startswith(fuzz_diff.SKIP) else "got %r" % got[0])
        T.report("another exit status is a failure",
                 None if got[1] and not got[1].startswith(fuzz_diff.SKIP) else "got %r" % got[1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def fork_server_check():
    """ppqfmt through the fork server: the same output bytes, exit status and stderr as
    the binary's."""
    server = fuzz_diff.ForkServer.mine()
    if server is None:
        return T.report("fork server", testlib.SKIP + "build/tools/fork_server is not built")
    src = os.path.join(REPO, "testdata", "sample.onnx")
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        for name, args in (("the default passes", []), ("a usage error", ["--bogus"])):
            got, want = [os.path.join(tmp, k + ".onnx") for k in ("got", "want")]
            rc, why = server.run(args + [src, "-o", got], got + ".err")
            p = subprocess.run([fuzz_diff.PPQFMT] + args + [src, "-o", want],
                               capture_output=True)
            same = [open(f, "rb").read() if os.path.exists(f) else None for f in (got, want)]
            with open(got + ".err", "rb") as f:
                err = f.read()
            T.report("fork server: %s" % name, why or (
                None if rc == p.returncode and same[0] == same[1] and err == p.stderr else
                "exit %s (binary %d), same output %s, stderr %r (binary %r)" % (
                    rc, p.returncode, same[0] == same[1], err[:100], p.stderr[:100])))
            for f in (got, want):
                if os.path.exists(f):
                    os.remove(f)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def ledger_check():
    """The ledger records runs whose seeds meet no recorded run's, and the clock's first seed
    is moved past a recorded range it falls into."""
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        path = os.path.join(tmp, "ledger.tsv")
        for base, last, models in ((100, 109, 10), (105, 120, 16), (110, 114, 5)):
            st = fuzz_diff.Stats()
            st.models, st.last_seed = models, last
            fuzz_diff.ledger_append(path, base, st, 1.0, 2, "abc")
        rows = fuzz_diff.ledger_rows(path)
        got = [(r["first_seed"], r["last_seed"], r["models"], r["commit"]) for r in rows]
        T.report("ledger: runs recorded, one meeting a recorded range left out",
                 None if got == [("100", "109", "10", "abc"), ("110", "114", "5", "abc")]
                 else "got %r" % got)
        now = int(fuzz_diff.time.time()) * 1000 % (2 ** 40)
        rows.append({"first_seed": str(now - 5), "last_seed": str(now + 10 ** 6)})
        seed = fuzz_diff.clock_seed(rows)
        T.report("ledger: the clock's first seed moves past a recorded range",
                 None if seed == now + 10 ** 6 + 1 else "got %d (range ends %d)" % (
                     seed, now + 10 ** 6))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def checker_memo_check():
    """The checker's verdict kept per output bytes: a valid and an invalid output checked in
    turn within one case get their own verdicts."""
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
        y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
        paths = []
        for name, src in (("ok", "x"), ("bad", "nowhere"), ("ok2", "x")):
            m = helper.make_model(helper.make_graph([helper.make_node("Relu", [src], ["y"])],
                                                    "g", [x], [y]),
                                  opset_imports=[helper.make_opsetid("", 13)])
            m.ir_version = 7
            paths.append(os.path.join(tmp, name + ".onnx"))
            onnx.save(m, paths[-1])
        ctx, got = {"memo": {}}, []
        for p in paths:
            try:
                fuzz_diff.check_checker(dict(ctx, out=p))
                got.append("ok")
            except Exception:
                got.append("fail")
        T.report("checker verdicts per distinct output bytes",
                 None if got == ["ok", "fail", "ok"] and len(ctx["memo"]["checker"]) == 2
                 else "got %r, memo %r" % (got, ctx["memo"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def f16_model(nodes, consts):
    """A float16 model x[1,2] -> y1, y2 (opset 17) of nodes, consts its initializers."""
    h = onnx.TensorProto.FLOAT16
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", h, [1, 2])],
                          [helper.make_tensor_value_info(y, h, [1, 2]) for y in ("y1", "y2")],
                          initializer=[onnx.numpy_helper.from_array(
                              fuzz_diff.np.array(v, fuzz_diff.np.float16), k)
                              for k, v in consts.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def f16_slack_check():
    """The float16 rounding slack: large on an ill-conditioned output (a LayerNorm over two
    values 1 ulp apart, where rounding every op to float16 moves it by 100%), a few ulps on a
    well-conditioned one; a rewrite computing the same function passes, one with a weight 5%
    off still fails on the well-conditioned output."""
    n = helper.make_node
    mul = n("Mul", ["x", "w"], ["y2"])
    ref = f16_model([n("ReduceMean", ["x"], ["m"], axes=[-1]), n("Sub", ["x", "m"], ["d"]),
                     n("Mul", ["d", "d"], ["d2"]), n("ReduceMean", ["d2"], ["v"], axes=[-1]),
                     n("Add", ["v", "eps"], ["ve"]), n("Sqrt", ["ve"], ["s"]),
                     n("Div", ["d", "s"], ["y1"]), mul], {"eps": 0.001, "w": [0.5, 0.25]})
    tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
    try:
        onnx.save(ref, os.path.join(tmp, "ref.onnx"))
        feeds = {"x": fuzz_diff.np.array([[1.0, 1.0 + 2 ** -10]], fuzz_diff.np.float16)}
        ort = fuzz_diff.OrtServer.shared()
        ctx = {"tmp": tmp, "feeds": feeds, "ort": ort, "memo": {},
               "ref": ort.run(os.path.join(tmp, "ref.onnx"), feeds)}
        slack = fuzz_diff.f16_rounding_slack(ctx)
        T.report("f16 slack: large where ill-conditioned, ulps where not", None if slack and
                 slack["y1"].min() > 0.05 and slack["y2"].max() < 1e-3 else "got %r" % slack)
        errs = []
        for scale in (1.0, 1.05):
            out = f16_model([n("LayerNormalization", ["x", "one", "zero"], ["y1"],
                               epsilon=0.001), mul],
                            {"one": [1, 1], "zero": [0, 0], "w": [0.5 * scale, 0.25 * scale]})
            ctx["out"] = os.path.join(tmp, "out_%s.onnx" % scale)
            onnx.save(out, ctx["out"])
            ctx.pop("all_outputs", None)
            errs.append(fuzz_diff.check_ort(dict(ctx)))
        T.report("f16 slack: the same function passes", errs[0])
        T.report("f16 slack: a weight 5% off still fails", None if errs[1] and "y2" in errs[1]
                 and "y1" not in errs[1] else "got %r" % errs[1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def f16_refusal_check():
    """A float16 output onnxruntime refuses with its buffer-reuse error (a Slice-10 whose dims
    its inference gets wrong) is compared lifted to float32 (regression model 696177846646),
    or lifted with every node output made a graph output where the lifted model is refused
    too (696177859243): ppqfmt's output passes, the same output with a weight 5% off fails."""
    for name, weight, output in (("diff_696177846646_subset3_ort.onnx", "w_44", "add_out_51"),
                                 ("diff_696177859243_subset2_ort.onnx", "w_71",
                                  "batchnormalization_out_79")):
        tmp = tempfile.mkdtemp(prefix="test_fuzz_diff_")
        try:
            _refused_output_checks(name, weight, output, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _refused_output_checks(name, weight, output, tmp):
    row = [r for r in fuzz_diff.known_rows(README) if r["file"] == name][0]
    case = fuzz_diff.Case(int(row["seed"]), onnx.load(os.path.join(DIFF_DIR, name)))
    ort = fuzz_diff.OrtServer.shared()
    feeds, ref, why = fuzz_diff.reference(case, ort, tmp)
    out = os.path.join(tmp, "out.onnx")
    fuzz_diff.ppqfmt(row["command"].split(), os.path.join(tmp, "in.onnx"), out)
    m = onnx.load(out)
    w = [t for t in m.graph.initializer if t.name == weight][0]
    w.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(w) * 1.05, weight))
    bad = os.path.join(tmp, "bad.onnx")
    onnx.save(m, bad)
    got = [fuzz_diff.check_ort({"tmp": tmp, "feeds": feeds, "ref": ref, "ort": ort,
                                "memo": {}, "out": p}) for p in (out, bad)]
    refused = ort.run(out, feeds)
    seed = row["seed"]
    T.report("f16 refusal %s: onnxruntime refuses the output" % seed, why or (
        None if isinstance(refused, str) and fuzz_diff.REUSE_REFUSAL in refused
        else "it runs it now: the check no longer needs the lifted comparison"))
    T.report("f16 refusal %s: ppqfmt's output passes lifted" % seed, got[0])
    T.report("f16 refusal %s: a weight 5%% off fails lifted" % seed, None if got[1] and
             output in got[1] and "refuses" not in got[1] else "got %r" % got[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    fork_server_check()
    opset_refusal_check()
    value_info_check()
    selfcheck_check()
    ledger_check()
    checker_memo_check()
    f16_slack_check()
    f16_refusal_check()
    generator_checks()
    config_checks()
    for row in fuzz_diff.known_rows(README):
        replay_row(row)
    fixed_seeds(a.count, a.jobs)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
