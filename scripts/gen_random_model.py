#!/usr/bin/python3
"""Random valid ONNX models for differential testing (scripts/fuzz_diff.py).

Usage: scripts/gen_random_model.py SEED [-o OUT.onnx]   (default OUT: random_SEED.onnx)

generate(seed) -> Generated(model, nonssa): the same seed always gives the same
bytes. A small grammar picks productions around the ops ppqfmt's passes touch:
Conv/ConvTranspose (groups, dilations, strides, auto_pad, output_shape,
1-D/2-D/3-D) and Gemm/MatMul (a Gemm with beta 0 may have inf and NaN in the C it does
not read) followed by BatchNormalization/Add/Mul, standalone BatchNormalization, Constant
and Identity chains, shared initializers, Clip/Pad/Slice/Resize/Upsample in the
form the model's opset (7-17) wants, Reshape/Transpose/Concat/Split/Gather,
shape subgraphs (Shape -> Gather -> (Mul) -> Unsqueeze -> Concat -> Reshape, of
static or symbolic dims), constant subgraphs (Transpose/Cast/Add of
initializers, Range, ConstantOfShape), constant expressions over some forty
ops that fold evaluates (scripts/gen_fold_expr.py), LSTM/GRU/RNN, ops sized by
a runtime shape or by the data (Expand/ConstantOfShape to Shape(x), Range, TopK,
NonZero), MatMul + Add(bias) on rank-2 and rank-3
inputs, Pad(constant 0) before Conv/MaxPool/AveragePool (ceil_mode, dilations,
auto_pad), Conv followed by a
per-channel Mul, no-op nodes (Cast to the same type, Reshape to the same shape,
the identity Transpose, a Transpose and its inverse, Add of 0, Mul by 1, Concat
of one input, a Slice of everything, Pad by zeros, Expand to the same shape),
LayerNorm (last axis) and erf/tanh GELU decompositions (both more often at
opset 17, which LayerNormalization needs), Dropout, If and Loop bodies that read outer-scope values, dead
branches, in float, float16 or double; graph inputs with static or symbolic
dims; value_info absent, inferred, partial or stale.

Shapes are tracked while generating, so a model is valid by construction; the
caller still runs the full checker and onnxruntime on it (a reject is a bug
here). The concrete dims to feed each graph input are stored in the model's
metadata_props under INPUT_DIMS_KEY (a symbolic dim has no value in the
model itself).

nonssa: with probability NONSSA_RATE a second, non-SSA model is derived from
the SSA one by letting a later node write a name an earlier node already wrote
(as in-place converters do); onnxruntime refuses it, so the SSA model is the
reference it must compute the same as once ppqfmt's de-inplace pass ran.
Run with Debian's /usr/bin/python3 (python3-onnx 1.12: IR <= 8, opset <= 17).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fold_expr  # noqa: E402

INPUT_DIMS_KEY = 'ppqfmt_fuzz_input_dims'
NONSSA_RATE = 0.12
# Opset 17 three times as often as each other: LayerNormalization (fuse-layernorm) needs it.
OPSETS = list(range(7, 18)) + [17, 17]
IR_FOR_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8}
MAX_IR = 8
NP_OF = {TP.FLOAT: np.float32, TP.FLOAT16: np.float16, TP.DOUBLE: np.float64,
         TP.INT64: np.int64, TP.BOOL: np.bool_}
# Model dtypes and how often each is picked: onnxruntime's CPU kernels cover far
# more ops in float, see DTYPE_OPS.
DTYPES = [(TP.FLOAT, 0.7), (TP.FLOAT16, 0.15), (TP.DOUBLE, 0.15)]


class Val:
    """A tensor value of the graph being built: name, element type, concrete dims."""

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(int(d) for d in shape)

    @property
    def rank(self):
        return len(self.shape)


class Generated:
    """model: the SSA model; nonssa: None or the (x, y) renaming of apply_nonssa."""

    def __init__(self, model, nonssa=None):
        self.model, self.nonssa = model, nonssa


class Scope:
    """The nodes, initializers and values of one graph (main graph or a body)."""

    def __init__(self, parent=None):
        self.parent = parent
        self.nodes, self.inits, self.pool = [], [], []

    def visible(self):
        return (self.parent.visible() if self.parent else []) + self.pool


class ModelGen:
    def __init__(self, seed):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.opset = int(self.pick(OPSETS))
        self.ir = int(self.rng.integers(IR_FOR_OPSET[self.opset], MAX_IR + 1))
        self.dtype = self.weighted(DTYPES)
        self.np = NP_OF[self.dtype]
        self.n = 0
        self.main = Scope()
        self.scope = self.main
        self.inputs, self.input_dims = [], {}
        self.shared = {}          # (dtype, shape) -> initializer name, for shared weights
        self.init_inputs = []     # initializers also listed as graph inputs
        self.n_size = None        # the size the symbol 'N' stands for, once used

    # -- randomness ----------------------------------------------------------
    def pick(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def weighted(self, pairs):
        w = np.array([p for _, p in pairs], dtype=np.float64)
        return pairs[int(self.rng.choice(len(pairs), p=w / w.sum()))][0]

    def chance(self, p):
        return bool(self.rng.random() < p)

    def fresh(self, base):
        self.n += 1
        return '%s_%d' % (base, self.n)

    def rand(self, shape, lo=-1.0, hi=1.0, dtype=None):
        return self.rng.uniform(lo, hi, size=shape).astype(dtype or self.np)

    def non_finite(self, arr):
        """arr with about half its elements replaced by inf, -inf or NaN."""
        bad = np.array([np.inf, -np.inf, np.nan], arr.dtype)[self.rng.integers(3, size=arr.shape)]
        return np.where(self.rng.random(arr.shape) < 0.5, bad, arr).astype(arr.dtype)

    # -- building blocks -----------------------------------------------------
    def node(self, op, inputs, n_out=1, **attrs):
        name = self.fresh(op.lower())
        outs = [self.fresh('%s_out' % op.lower()) for _ in range(n_out)]
        self.scope.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs if n_out > 1 else outs[0]

    def value(self, name, shape, dtype=None, pool=True):
        v = Val(name, self.dtype if dtype is None else dtype, shape)
        if pool:
            self.scope.pool.append(v)
        return v

    def const(self, arr, how=None):
        """A constant tensor as an initializer, a Constant node or a shared initializer."""
        arr = np.asarray(arr)
        if how is None:
            how = self.weighted([('init', 0.55), ('node', 0.3), ('shared', 0.15)])
        in_body = self.scope is not self.main
        if self.opset < 9 and arr.dtype.kind not in 'f':
            how = 'init'            # Constant-1 makes float tensors only
        if how == 'init' and in_body and self.ir < 4:
            how = 'node'            # IR < 4: subgraphs cannot hold initializers
        if how == 'shared' and arr.dtype.kind != 'f':
            how = 'init'            # a shared index tensor could point out of another's range
        if how == 'shared' and in_body:
            how = 'init' if self.ir >= 4 else 'node'
        if how == 'shared':
            key = (arr.dtype.str, arr.shape)
            if key in self.shared:
                return self.shared[key]
            name = self.add_init(arr)
            self.shared[key] = name
            return name
        if how == 'node':
            return self.constant_node(arr)
        return self.add_init(arr)

    def exact_const(self, arr):
        """A constant whose value the pattern needs (an exponent, an epsilon): as const, but
        never the shared initializer, which holds whichever value of that shape came first
        (Pow(x, -0.04) of a centred x is NaN at every negative entry and +inf at an exact 0,
        so rounding differences of 1e-9 decide between NaN and a number). The same draw as
        const, so other models of a seed stay the same."""
        how = self.weighted([('init', 0.55), ('node', 0.3), ('shared', 0.15)])
        return self.const(arr, 'init' if how == 'shared' else how)

    def add_init(self, arr, name=None):
        name = name or self.fresh('w')
        self.scope.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def constant_node(self, arr):
        arr = np.asarray(arr)
        # value_floats/value_ints of no element is no attribute value: an empty list as a tensor
        if self.opset >= 12 and arr.dtype == np.float32 and arr.ndim <= 1 and arr.size and \
                self.chance(0.4):
            if arr.ndim == 0:
                return self.node('Constant', [], value_float=float(arr))
            return self.node('Constant', [], value_floats=[float(x) for x in arr])
        if self.opset >= 12 and arr.dtype == np.int64 and arr.ndim <= 1 and arr.size and \
                self.chance(0.4):
            if arr.ndim == 0:
                return self.node('Constant', [], value_int=int(arr))
            return self.node('Constant', [], value_ints=[int(x) for x in arr])
        return self.node('Constant', [], value=numpy_helper.from_array(arr, self.fresh('c')))

    def ints(self, vals):
        how = self.weighted([('init', 0.7), ('node', 0.3)]) if self.opset >= 9 else 'init'
        return self.const(np.array(vals, dtype=np.int64), how)   # Constant-1: floats only

    def new_input(self, shape, dtype=None, symbolic=0.08):
        """A graph input of concrete dims shape; each dim is symbolic with probability
        symbolic (the first one also as 'N'). One symbol is one size: 'N' only where the
        size is that of the first input declared with it, a fresh name for any other."""
        dtype = self.dtype if dtype is None else dtype
        name = self.fresh('in')
        dims = []
        for i, d in enumerate(shape):
            if i == 0 and self.chance(0.35) and self.n_size in (None, int(d)):
                self.n_size = int(d)
                dims.append('N')
            elif self.chance(symbolic):
                dims.append('d%d_%d' % (self.n, i))
            else:
                dims.append(int(d))
        if dtype == TP.BOOL:
            dims = list(shape)
        self.inputs.append(helper.make_tensor_value_info(name, dtype, dims))
        self.input_dims[name] = [int(d) for d in shape]
        return self.value(name, shape, dtype, pool=dtype == self.dtype)

    def fresh_input_like(self, rank):
        dims = [int(self.rng.integers(1, 3))] + [int(self.rng.integers(1, 7))] + \
            [int(self.rng.integers(2, 8)) for _ in range(rank - 2)]
        return self.new_input(dims[:rank])

    def operand(self, want=None, rank=None, min_rank=0):
        """A float value of the current scope chain, recent ones preferred."""
        vals = [v for v in self.scope.visible() if v.dtype == self.dtype and v.rank >= min_rank
                and (rank is None or v.rank in rank) and (want is None or want(v))]
        if not vals:
            return None
        vals = vals[::-1]
        i = min(int(self.rng.geometric(0.45)) - 1, len(vals) - 1)
        return vals[i]

    def need(self, rank, want=None):
        v = self.operand(want, rank)
        if v is None:
            v = self.fresh_input_like(self.pick(list(rank)))
            if want is not None and not want(v):
                return None
        return v

    # -- productions: each adds nodes and returns True, or returns False ------
    def p_conv(self):
        x = self.need((3, 4, 5), lambda v: v.shape[0] <= 2 and max(v.shape[1:]) <= 12)
        if x is None:
            return False
        return self.conv_on(x, self.chance(0.3))

    def conv_on(self, x, transpose, unpadded=False):
        """Conv or ConvTranspose of x (rank 3-5), then what follow_channels adds; unpadded:
        pads all 0 (the Conv a BatchNormalization before it folds into)."""
        sp = x.rank - 2
        cin = x.shape[1]
        groups = 1
        if self.chance(0.4):
            groups = self.pick([g for g in range(1, cin + 1) if cin % g == 0])
        cout = groups * int(self.rng.integers(1, 4))
        ks = [int(self.rng.integers(1, 4)) for _ in range(sp)]
        st = [int(self.rng.integers(1, 3)) for _ in range(sp)] if self.chance(0.4) else [1] * sp
        dil = [int(self.rng.integers(1, 3)) for _ in range(sp)] if self.chance(0.3) else [1] * sp
        pads = [int(self.rng.integers(0, 2)) for _ in range(2 * sp)]
        if unpadded:
            pads = [0] * (2 * sp)
        auto = self.pick(['SAME_UPPER', 'SAME_LOWER', 'VALID']) if self.chance(0.15) else None
        if auto and auto != 'VALID' and any(d != 1 for d in dil):
            auto = None     # onnxruntime: no dilations with SAME_*
        if auto:
            pads = [0] * (2 * sp)
        out_sp = []
        opad = [0] * sp
        for i in range(sp):
            eff = (ks[i] - 1) * dil[i] + 1
            n = x.shape[2 + i]
            if transpose:
                if st[i] > 1 and self.chance(0.4) and auto in (None, 'VALID'):
                    opad[i] = int(self.rng.integers(0, st[i]))  # SAME: onnx 1.12 and
                o = st[i] * (n - 1) + opad[i] + eff - pads[i] - pads[sp + i]  # onnxruntime
                if auto and auto != 'VALID':                    # differ on its size
                    o = n * st[i] + min(0, eff - st[i])   # no negative padding
            else:
                o = (n + pads[i] + pads[sp + i] - eff) // st[i] + 1
                if auto and auto != 'VALID':
                    o = -(-n // st[i])
                    if (o - 1) * st[i] + eff < n:
                        return False    # SAME would need negative padding
            if o < 1 or o > 24:
                return False
            out_sp.append(o)
        out_shape = None
        if transpose and not auto and not unpadded and self.chance(0.15):
            # output_shape: pads computed from it (total padding below the kernel's extent)
            full = [st[i] * (x.shape[2 + i] - 1) + opad[i] + (ks[i] - 1) * dil[i] + 1
                    for i in range(sp)]
            out_shape = [max(1, f - int(self.rng.integers(0, (ks[i] - 1) * dil[i] + 1)))
                         for i, f in enumerate(full)]
            out_sp, pads = list(out_shape), [0] * (2 * sp)
        if transpose:
            wshape = [cin, cout // groups] + ks
        else:
            wshape = [cout, cin // groups] + ks
        w = self.const(self.rand(wshape, -0.6, 0.6))
        ins = [x.name, w]
        if self.chance(0.5):
            ins.append(self.const(self.rand([cout], -0.5, 0.5)))
        attrs = dict(kernel_shape=ks)
        if any(s != 1 for s in st) or self.chance(0.3):
            attrs['strides'] = st
        if any(d != 1 for d in dil) or self.chance(0.2):
            attrs['dilations'] = dil
        if (any(pads) or self.chance(0.2)) and not auto and out_shape is None:
            attrs['pads'] = pads
        if auto:
            attrs['auto_pad'] = auto
        if out_shape is not None:
            attrs['output_shape'] = out_shape
        if groups > 1 or self.chance(0.2):
            attrs['group'] = groups
        if transpose and any(opad):
            attrs['output_padding'] = opad
        if self.chance(0.2):
            del attrs['kernel_shape']
        y = self.node('ConvTranspose' if transpose else 'Conv', ins, **attrs)
        v = self.value(y, [x.shape[0], cout] + out_sp)
        self.follow_channels(v)
        return True

    def follow_channels(self, v):
        """What comes after a Conv/Gemm: BN, Add or Mul of a constant, or nothing."""
        what = self.weighted([('bn', 0.35), ('add', 0.3), ('mul', 0.15), ('none', 0.2)])
        if what == 'bn':
            self.batchnorm(v)
        elif what in ('add', 'mul'):
            c = v.shape[1]
            shapes = [[c] + [1] * (v.rank - 2), [1, c] + [1] * (v.rank - 2), [1], []]
            if v.shape[-1] == c or c == 1:
                shapes.append([c])
            if v.rank > 2:
                shapes.append([1] * (v.rank - 1) + [v.shape[-1]])
            shapes.append(list(v.shape))
            shape = self.pick(shapes)
            if what == 'mul' and self.chance(0.5):
                shape = shapes[0]           # per-channel scale, as a fold into W wants
            k = self.const(self.rand(shape, -0.5, 0.5))
            ins = [v.name, k] if self.chance(0.8) else [k, v.name]
            y = self.node('Add' if what == 'add' else 'Mul', ins)
            self.value(y, v.shape)

    def batchnorm(self, x):
        c = x.shape[1]
        # the variance is never the shared initializer, which may hold a negative bias of
        # that shape: NaN channels then reach a MaxPool, whose NaN handling ONNX leaves
        # open (onnxruntime's gives -FLT_MAX), and a later BatchNormalization overflows
        # that to -inf where its fold into a Conv does not (seed 696193932400)
        ins = [x.name, self.const(self.rand([c], 0.5, 1.5)), self.const(self.rand([c], -0.5, 0.5)),
               self.const(self.rand([c], -0.5, 0.5)), self.exact_const(self.rand([c], 0.5, 2.0))]
        attrs = {}
        if self.chance(0.5):
            attrs['epsilon'] = float(self.pick([1e-5, 1e-3, 0.01]))
        if self.chance(0.2):
            attrs['momentum'] = 0.9
        if self.opset < 9 and self.chance(0.4):
            attrs['spatial'] = 1
        if self.opset >= 14 and self.chance(0.3):
            attrs['training_mode'] = 0
        y = self.node('BatchNormalization', ins, **attrs)
        return self.value(y, x.shape)

    def p_bn(self):
        x = self.need((2, 3, 4, 5), lambda v: v.shape[1] <= 16)
        if x is None:
            return False
        self.batchnorm(x)
        return True

    def p_bn_conv(self):
        """BatchNormalization, then an unpadded Conv reading only its output (fuse-bn-forward
        folds the BN into the Conv's weight and bias)."""
        x = self.need((3, 4, 5), lambda v: v.shape[0] <= 2 and v.shape[1] <= 16
                      and max(v.shape[1:]) <= 12)
        if x is None:
            return False
        return self.conv_on(self.batchnorm(x), False, unpadded=True)

    def p_gemm(self):
        x = self.operand(rank=(2,))
        if x is None:
            y = self.operand(rank=(3, 4, 5), want=lambda v: int(np.prod(v.shape[1:])) <= 64)
            if y is None or self.chance(0.3):
                x = self.new_input([int(self.rng.integers(1, 4)), int(self.rng.integers(1, 9))])
            else:
                f = self.node('Flatten', [y.name], axis=1)
                x = self.value(f, [y.shape[0], int(np.prod(y.shape[1:]))])
        m, k = x.shape
        n = int(self.rng.integers(1, 9))
        if self.chance(0.3):
            w = self.const(self.rand([k, n], -0.6, 0.6))
            y = self.node('MatMul', [x.name, w])
            v = self.value(y, [m, n])
        else:
            tb = self.chance(0.5)
            w = self.const(self.rand([n, k] if tb else [k, n], -0.6, 0.6))
            attrs = {}
            if tb:
                attrs['transB'] = 1
            if self.chance(0.3):
                attrs['alpha'] = float(self.pick([0.5, 2.0, -1.0]))
            if self.chance(0.3):
                attrs['beta'] = float(self.pick([0.5, 2.0, 0.0]))
            ins = [x.name, w]
            if self.opset < 11 or self.chance(0.6):
                c = self.rand(self.pick([[n], [1, n], [m, n], []]), -0.5, 0.5)
                if attrs.get('beta') == 0.0 and self.chance(0.5):
                    # beta 0: Gemm does not read C (onnxruntime skips it), which may then hold
                    # inf and NaN; a fold into the Gemm must not multiply them in (0 * inf)
                    ins.append(self.exact_const(self.non_finite(c)))
                else:
                    ins.append(self.const(c))
            y = self.node('Gemm', ins, **attrs)
            v = self.value(y, [m, n])
        self.follow_channels(v)
        return True

    def p_unary(self):
        x = self.operand()
        if x is None:
            return False
        ops = ['Relu', 'Sigmoid', 'Tanh', 'Neg', 'Abs']
        op = self.pick(ops if self.dtype == TP.DOUBLE else ops + ['LeakyRelu'])
        self.value(self.node(op, [x.name]), x.shape)
        return True

    def p_binary(self):
        x = self.operand()
        if x is None:
            return False
        y = self.operand(want=lambda v: v.shape == x.shape and v is not x)
        other = y.name if y is not None and self.chance(0.6) else \
            self.const(self.rand(x.shape[self.rng.integers(0, x.rank + 1):], -1, 1))
        op = self.pick(['Add', 'Mul', 'Sub'])
        self.value(self.node(op, [x.name, other]), x.shape)
        return True

    def p_identity(self):
        x = self.operand()
        if x is None:
            return False
        name = x.name
        if self.chance(0.15) and self.scope is self.main:
            name = self.const(self.rand(x.shape), 'init')   # Identity of an initializer
        for _ in range(int(self.rng.integers(1, 4))):
            name = self.node('Identity', [name])
        self.value(name, x.shape)
        return True

    def p_constant_out(self):
        """A Constant (or Constant -> Identity) that is itself a graph output."""
        shape = [int(self.rng.integers(1, 4)) for _ in range(int(self.rng.integers(0, 3)))]
        name = self.constant_node(self.rand(shape))
        if self.chance(0.4):
            name = self.node('Identity', [name])
        self.extra_outputs.append((name, self.dtype, len(shape)))
        return True

    def p_clip(self):
        x = self.operand()
        if x is None or (self.dtype == TP.DOUBLE and self.opset < 12):
            return False
        lo = float(self.rng.uniform(-0.8, 0)) if self.chance(0.7) else None
        hi = float(self.rng.uniform(0.1, 0.8)) if self.chance(0.7) else None
        if self.opset < 11:
            attrs = {}
            if lo is not None:
                attrs['min'] = lo
            if hi is not None:
                attrs['max'] = hi
            y = self.node('Clip', [x.name], **attrs)
        else:
            ins = [x.name, '' if lo is None else self.const(np.array(lo, self.np)),
                   '' if hi is None else self.const(np.array(hi, self.np))]
            while ins[-1] == '':
                ins.pop()
            y = self.node('Clip', ins)
        self.value(y, x.shape)
        return True

    def p_pad(self):
        x = self.operand(min_rank=1, want=lambda v: v.rank <= 5 and max(v.shape) <= 16)
        if x is None:
            return False
        mode = self.weighted([('constant', 0.6), ('reflect', 0.2), ('edge', 0.2)])
        pads = []
        for half in range(2):
            for i in range(x.rank):
                lim = x.shape[i] - 1 if mode == 'reflect' else 2
                pads.append(int(self.rng.integers(0, max(lim, 0) + 1)) if i >= x.rank - 2 else 0)
        shape = [x.shape[i] + pads[i] + pads[x.rank + i] for i in range(x.rank)]
        val = float(self.pick([0.0, 0.5, -1.0]))
        if self.opset < 11:
            attrs = {'pads': pads}
            if mode != 'constant' or self.chance(0.5):
                attrs['mode'] = mode
            if mode == 'constant' and (val != 0.0 or self.chance(0.3)):
                attrs['value'] = val
            y = self.node('Pad', [x.name], **attrs)
        else:
            ins = [x.name, self.ints(pads)]
            if mode == 'constant' and (val != 0.0 or self.chance(0.3)):
                ins.append(self.const(np.array(val, self.np)))
            with_mode = mode != 'constant' or self.chance(0.3)
            y = self.node('Pad', ins, **({'mode': mode} if with_mode else {}))
        self.value(y, shape)
        return True

    def p_slice(self):
        x = self.operand(min_rank=1)
        if x is None:
            return False
        n_axes = int(self.rng.integers(1, x.rank + 1))
        axes = sorted(set(int(a) for a in self.rng.integers(0, x.rank, size=n_axes)))
        starts, ends, steps, shape = [], [], [], list(x.shape)
        for a in axes:
            d = x.shape[a]
            step = 1
            if self.opset >= 10 and d > 1 and self.chance(0.3):
                step = self.pick([2, -1, -2])
            if step > 0:
                s = int(self.rng.integers(0, d))
                e = int(self.rng.integers(s + 1, d + 1))
                if self.chance(0.2):
                    e = 2 ** 31 - 1 if self.chance(0.5) else 2 ** 63 - 1
                    n = len(range(s, d, step))
                elif self.chance(0.2) and e == d:
                    n = len(range(s, d, step))
                else:
                    n = len(range(s, e, step))
                if self.chance(0.2):
                    s -= d          # negative start: counts from the end
            else:
                s = int(self.rng.integers(0, d))
                e = int(self.rng.integers(-1, s))
                n = len(range(s, e, step))
                if e == -1:
                    e = -(2 ** 31)  # "before the first element"
            starts.append(s)
            ends.append(e)
            steps.append(step)
            shape[a] = n
        if self.opset < 10:
            attrs = {'starts': starts, 'ends': ends}
            if axes != list(range(len(axes))) or self.chance(0.5):
                attrs['axes'] = axes
            y = self.node('Slice', [x.name], **attrs)
        else:
            ins = [x.name, self.ints(starts), self.ints(ends)]
            if axes != list(range(len(axes))) or any(s != 1 for s in steps) or self.chance(0.5):
                ins.append(self.ints(axes))
                if any(s != 1 for s in steps) or self.chance(0.4):
                    ins.append(self.ints(steps))
            y = self.node('Slice', ins)
        self.value(y, shape)
        return True

    def p_resize(self):
        x = self.need((4,), want=lambda v: max(v.shape[2:]) <= 8)
        if x is None:
            return False
        mode = self.pick(['nearest', 'linear'])
        down = [0.5] if mode == 'nearest' and self.opset >= 10 else []   # Upsample: scales >= 1
        sh = self.pick([1.0, 2.0, 3.0] + down) if mode == 'nearest' else self.pick([1.0, 2.0, 1.5])
        sw = self.pick([1.0, 2.0] + down) if mode == 'nearest' else self.pick([1.0, 2.0, 3.0])
        scales = np.array([1, 1, sh, sw], np.float32)
        shape = [x.shape[0], x.shape[1],
                 int(np.floor(x.shape[2] * sh)), int(np.floor(x.shape[3] * sw))]
        if min(shape) < 1:
            return False
        if self.opset < 9:
            y = self.node('Upsample', [x.name], mode=mode, scales=[float(s) for s in scales])
        elif self.opset == 9:
            y = self.node('Upsample', [x.name, self.const(scales, 'init')], mode=mode)
        elif self.opset == 10:
            y = self.node('Resize', [x.name, self.const(scales, 'init')], mode=mode)
        else:
            attrs = {'mode': mode}
            ctm = self.pick(['half_pixel', 'asymmetric', 'align_corners', 'pytorch_half_pixel',
                             None])
            if ctm:
                attrs['coordinate_transformation_mode'] = ctm
            if mode == 'nearest' and self.chance(0.5):
                attrs['nearest_mode'] = self.pick(['round_prefer_floor', 'floor', 'ceil'])
            roi = '' if self.opset >= 13 and self.chance(0.6) else \
                self.const(np.array([], np.float32), 'init')
            if self.chance(0.3):
                sizes = self.ints(shape)
                empty = '' if self.opset >= 13 else self.const(np.array([], np.float32), 'init')
                ins = [x.name, roi, empty, sizes]
            else:
                ins = [x.name, roi, self.const(scales, 'init')]
            y = self.node('Resize', ins, **attrs)
        self.value(y, shape)
        return True

    def p_reshape(self):
        x = self.operand(min_rank=1)
        if x is None:
            return False
        total = int(np.prod(x.shape))
        if self.chance(0.4) and x.rank >= 2:
            return self.shape_subgraph(x)
        dims = []
        rest = total
        for _ in range(int(self.rng.integers(1, 4))):
            divs = [d for d in range(1, rest + 1) if rest % d == 0]
            d = self.pick(divs)
            dims.append(d)
            rest //= d
        dims[-1] *= rest
        spec = list(dims)
        if self.chance(0.4):
            spec[int(self.rng.integers(len(spec)))] = -1
        elif x.rank >= 1 and dims[0] == x.shape[0] and self.chance(0.5):
            spec[0] = 0
        y = self.node('Reshape', [x.name, self.ints(spec)])
        self.value(y, dims)
        return True

    def unsqueeze0(self, name):
        if self.opset >= 13:
            return self.node('Unsqueeze', [name, self.ints([0])])
        return self.node('Unsqueeze', [name], axes=[0])

    def shape_subgraph(self, x):
        """Shape -> Gather(0) -> Unsqueeze -> Concat(.., [-1]) -> Reshape: flatten to [N, -1]."""
        s = self.node('Shape', [x.name])
        g = self.node('Gather', [s, self.const(np.array(0, np.int64), 'init')], axis=0)
        u = self.unsqueeze0(g)
        c = self.node('Concat', [u, self.ints([-1])], axis=0)
        y = self.node('Reshape', [x.name, c])
        self.value(y, [x.shape[0], int(np.prod(x.shape[1:]))])
        if self.chance(0.15):
            self.extra_outputs.append((s, TP.INT64, 1))
        return True

    def p_transpose(self):
        x = self.operand(min_rank=2)
        if x is None:
            return False
        perm = [int(p) for p in self.rng.permutation(x.rank)]
        attrs = {'perm': perm} if self.chance(0.85) else {}
        if not attrs:
            perm = list(range(x.rank))[::-1]
        y = self.node('Transpose', [x.name], **attrs)
        self.value(y, [x.shape[p] for p in perm])
        return True

    def p_concat(self):
        x = self.operand(min_rank=1)
        if x is None:
            return False
        axis = int(self.rng.integers(0, x.rank))
        others = [v for v in self.scope.visible() if v.dtype == x.dtype and v.rank == x.rank and
                  all(v.shape[i] == x.shape[i] for i in range(x.rank) if i != axis)]
        ins, total = [x.name], x.shape[axis]
        for _ in range(int(self.rng.integers(1, 3))):
            if others and self.chance(0.6):
                o = self.pick(others)
                ins.append(o.name)
                total += o.shape[axis]
            else:
                shp = list(x.shape)
                shp[axis] = int(self.rng.integers(1, 3))
                ins.append(self.const(self.rand(shp)))
                total += shp[axis]
        shape = list(x.shape)
        shape[axis] = total
        self.value(self.node('Concat', ins, axis=axis), shape)
        return True

    def p_split(self):
        x = self.operand(min_rank=1, want=lambda v: max(v.shape) >= 2)
        if x is None:
            return False
        axis = self.pick([i for i in range(x.rank) if x.shape[i] >= 2])
        d = x.shape[axis]
        k = int(self.rng.integers(2, min(d, 3) + 1))
        if self.chance(0.5) and d % k == 0:
            parts, given = [d // k] * k, False
        else:
            cuts = sorted(int(c) for c in
                          self.rng.choice(np.arange(1, d), size=k - 1, replace=False))
            parts = [b - a for a, b in zip([0] + cuts, cuts + [d])]
            given = True
        attrs = {'axis': axis}
        ins = [x.name]
        if given:
            if self.opset >= 13:
                ins.append(self.ints(parts))
            else:
                attrs['split'] = parts
        outs = self.node('Split', ins, n_out=len(parts), **attrs)
        for o, p in zip(outs, parts):
            shape = list(x.shape)
            shape[axis] = p
            self.value(o, shape)
        return True

    def p_gather(self):
        x = self.operand(min_rank=1)
        if x is None:
            return False
        axis = int(self.rng.integers(0, x.rank))
        d = x.shape[axis]
        if self.chance(0.3):
            idx = np.array(int(self.rng.integers(0, d)), np.int64)
        else:
            idx = self.rng.integers(0, d, size=int(self.rng.integers(1, 4))).astype(np.int64)
        y = self.node('Gather', [x.name, self.const(idx)], axis=axis)
        shape = list(x.shape[:axis]) + list(idx.shape) + list(x.shape[axis + 1:])
        self.value(y, shape)
        return True

    def p_layernorm(self):
        x = self.operand(min_rank=2)
        if x is None:
            return False
        d = x.shape[-1]
        axes = [-1] if self.opset >= 11 else [x.rank - 1]
        mean = self.node('ReduceMean', [x.name], axes=axes, keepdims=1)
        cen = self.node('Sub', [x.name, mean])
        if self.chance(0.5):
            sq = self.node('Pow', [cen, self.exact_const(np.array(2.0, self.np))])
        else:
            sq = self.node('Mul', [cen, cen])
        var = self.node('ReduceMean', [sq], axes=axes, keepdims=1)
        ve = self.node('Add', [var, self.exact_const(np.array(1e-3, self.np))])
        sd = self.node('Sqrt', [ve])
        nrm = self.node('Div', [cen, sd])
        y = self.node('Mul', [nrm, self.const(self.rand([d], 0.5, 1.5))])
        y = self.node('Add', [y, self.const(self.rand([d], -0.5, 0.5))])
        self.value(y, x.shape)
        return True

    def p_gelu(self):
        x = self.operand()
        if x is None:
            return False
        half = self.const(np.array(0.5, self.np))
        one = self.const(np.array(1.0, self.np))
        if self.opset >= 9 and self.dtype != TP.DOUBLE and self.chance(0.6):
            t = self.node('Div', [x.name, self.const(np.array(np.sqrt(2.0), self.np))])
            t = self.node('Erf', [t])
        else:
            cube = self.node('Pow', [x.name, self.exact_const(np.array(3.0, self.np))])
            inner = self.node('Mul', [cube, self.const(np.array(0.044715, self.np))])
            inner = self.node('Add', [x.name, inner])
            inner = self.node('Mul', [inner, self.const(np.array(np.sqrt(2 / np.pi), self.np))])
            t = self.node('Tanh', [inner])
        t = self.node('Add', [t, one])
        t = self.node('Mul', [x.name, t])
        y = self.node('Mul', [t, half])
        self.value(y, x.shape)
        return True

    def p_dropout(self):
        x = self.operand()
        if x is None:
            return False
        n_out = 2 if self.chance(0.3) else 1
        if self.opset < 12:
            attrs = {'ratio': 0.3} if self.chance(0.5) else {}
            outs = self.node('Dropout', [x.name], n_out=n_out, **attrs)
        else:
            ins = [x.name]
            if self.chance(0.4):
                ins.append(self.const(np.array(0.25, np.float32), 'init'))
            outs = self.node('Dropout', ins, n_out=n_out)
        y = outs[0] if n_out == 2 else outs
        self.value(y, x.shape)
        return True

    def p_shape_reshape(self):
        """Reshape to shape(x)[:k] + [-1] (or the first two dims multiplied), the target
        computed by a shape subgraph: Shape -> Gather -> (Mul) -> Unsqueeze -> Concat,
        often of an input with symbolic dims."""
        x = self.operand(min_rank=2) if self.chance(0.6) else None
        if x is None:
            x = self.new_input([int(self.rng.integers(1, 4)) for _ in range(self.pick([2, 3, 4]))],
                               symbolic=0.6)
        k = int(self.rng.integers(1, x.rank))
        kept = list(x.shape[:k])
        if self.opset >= 15 and self.chance(0.3):
            parts = [self.node('Shape', [x.name], end=k)]     # Shape-15: a range of the dims
        else:
            parts, scalar = self.shape_dims(self.node('Shape', [x.name]), k)
            if scalar and k >= 2 and self.chance(0.3):
                parts = [self.node('Mul', parts[:2])] + parts[2:]
                kept = [kept[0] * kept[1]] + kept[2:]
            if scalar:
                parts = [self.unsqueeze0(p) for p in parts]
        target = self.node('Concat', parts + [self.ints([-1])], axis=0)
        y = self.node('Reshape', [x.name, target])
        self.value(y, kept + [int(np.prod(x.shape[k:]))])
        return True

    def p_dyn_shape(self):
        """Ops whose output size comes from a runtime shape or from the data, often of an
        input with symbolic dims: Expand or ConstantOfShape to Shape(x), Range up to x's
        last dim, TopK of all of x's last axis (k from Shape), NonZero of x > 0."""
        x = self.operand(min_rank=1) if self.chance(0.6) else None
        if x is None:
            x = self.new_input([int(self.rng.integers(1, 5)) for _ in range(self.pick([1, 2, 3]))],
                               symbolic=0.6)
        forms = (['expand'] if self.opset >= 8 else []) + \
            (['fill', 'nonzero'] if self.opset >= 9 else [])
        forms += ['range'] if self.opset >= 11 else []
        forms += ['topk'] if self.opset >= 10 and self.dtype != TP.FLOAT16 else []
        if not forms:
            return False
        form = self.pick(forms)
        shape = self.node('Shape', [x.name])
        if form == 'expand':
            one = self.const(self.rand([1] * int(self.rng.integers(0, x.rank + 1))))
            y = self.node('Expand', [one, shape])
        elif form == 'fill':
            val = numpy_helper.from_array(np.array([self.rng.uniform(-1, 1)], self.np),
                                          self.fresh('fill'))
            y = self.node('ConstantOfShape', [shape], value=val)
        elif form == 'range':
            last = self.node('Gather', [shape, self.const(np.array(-1, np.int64), 'init')], axis=0)
            zero, step = (self.const(np.array(v, np.int64), 'init') for v in (0, 1))
            y = self.node('Cast', [self.node('Range', [zero, last, step])], to=self.dtype)
        elif form == 'topk':
            k = self.node('Gather', [shape, self.ints([x.rank - 1])], axis=0)
            order = {'largest': int(self.chance(0.7))} if self.opset >= 11 else {}
            # the values only: the indices of equal values (ties) depend on rounding-level
            # differences (seed 696190045578: a bias folded into a Conv reordered three
            # values equal in float32), so no index may reach a compared output
            y = self.node('TopK', [x.name, k], n_out=2, **order)[0]
        else:   # of a graph input: a computed value near 0 flips with one rounding
            x = self.new_input(list(x.shape))   # (seed 696190101485: 865 for 864)
            nz = self.node('NonZero', [self.node('Greater', [x.name, self.const(
                np.array(0, self.np), 'init')])])
            self.extra_outputs.append((nz, TP.INT64, 2))   # [rank, count]: a graph output
            return True
        self.value(self.node(self.pick(['Add', 'Mul']), [x.name, y]), x.shape)
        return True

    def shape_dims(self, s, k):
        """The first k dims of shape s: ([k scalars], True), a Gather of one index each,
        or ([one 1-D Gather of indices 0..k-1], False)."""
        if self.chance(0.4):
            idx = self.const(np.arange(k, dtype=np.int64), 'init')
            return [self.node('Gather', [s, idx], axis=0)], False
        return [self.node('Gather', [s, self.const(np.array(i, np.int64), 'init')], axis=0)
                for i in range(k)], True

    def p_const_subgraph(self):
        """A constant computed by nodes from initializers (Transpose, Cast, Add, Range,
        ConstantOfShape), added to or multiplied with a value."""
        x = self.operand(min_rank=1)
        if x is None:
            return False
        tail = list(x.shape[int(self.rng.integers(0, x.rank)):])
        forms = ['cast'] + (['transpose'] if tail else [])
        if self.opset >= 9:
            forms.append('fill')
        if self.opset >= 11 and tail:
            forms.append('range')
        c = getattr(self, 'const_' + self.pick(forms))(tail)
        if self.chance(0.4):
            c = self.node('Add', [c, self.const(self.rand(tail[-1:] if tail else []))])
        op = self.pick(['Add', 'Mul'])
        self.value(self.node(op, [x.name, c] if self.chance(0.7) else [c, x.name]), x.shape)
        return True

    def p_fold_expr(self):
        """A constant expression over initializers (scripts/gen_fold_expr.py: the ops fold
        evaluates), cast to the model's dtype and added to or multiplied with a value; in
        three models of ten some of its leaves are graph inputs (shape inference's work)."""
        x = self.operand()
        if x is None:
            return False
        tail = list(x.shape[int(self.rng.integers(0, x.rank + 1)):])
        while int(np.prod(tail, dtype=np.int64)) > gen_fold_expr.MAX_ELEMS:
            tail = tail[1:]
        runtime = 0.3 if self.scope is self.main and self.chance(0.3) else 0.0
        dtype = self.dtype if self.chance(0.4) else TP.FLOAT
        c = gen_fold_expr.FoldExpr(self, runtime, dtype).float_expr(
            tail, int(self.rng.integers(1, 4)))
        if dtype != self.dtype:
            c = self.node('Cast', [c], to=self.dtype)
        op = self.pick(['Add', 'Mul'])
        self.value(self.node(op, [x.name, c] if self.chance(0.7) else [c, x.name]), x.shape)
        return True

    def p_step_expr(self):
        """An op with a step (Floor, Round, Sign, comparisons, Cast to an integer, ArgMax)
        over a constant softmax row sum or tie (gen_fold_expr.FoldExpr.step_expr), cast to the
        model's dtype and added to a value: fold must leave such a node to onnxruntime."""
        x = self.operand()
        if x is None or not x.rank or self.opset < 11:
            return False
        tail = list(x.shape[int(self.rng.integers(0, x.rank)):])
        while int(np.prod(tail, dtype=np.int64)) > gen_fold_expr.MAX_ELEMS and len(tail) > 1:
            tail = tail[1:]
        c = gen_fold_expr.FoldExpr(self, 0.0, TP.FLOAT).step_expr(tail)
        if self.dtype != TP.FLOAT:
            c = self.node('Cast', [c], to=self.dtype)
        self.value(self.node('Add', [x.name, c]), x.shape)
        return True

    def const_transpose(self, shape):
        perm = [int(p) for p in self.rng.permutation(len(shape))]
        src = [0] * len(shape)
        for i, p in enumerate(perm):
            src[p] = shape[i]
        return self.node('Transpose', [self.const(self.rand(src))], perm=perm)

    def const_cast(self, shape):
        other = self.pick([d for d in (np.float32, np.float64, np.float16) if d != self.np])
        return self.node('Cast', [self.const(self.rand(shape, dtype=other))], to=self.dtype)

    def const_fill(self, shape):
        """ConstantOfShape of a constant shape."""
        val = numpy_helper.from_array(np.array([self.rng.uniform(-1, 1)], self.np),
                                      self.fresh('fill'))
        return self.node('ConstantOfShape', [self.ints(shape)], value=val)

    def const_range(self, shape):
        """Range(start, limit, delta) along the last dim, cast to the model's dtype."""
        n = shape[-1]
        if self.chance(0.5):
            r = self.node('Range', [self.const(np.array(v, np.int64), 'init') for v in (0, n, 1)])
        else:
            start, delta = float(self.rng.uniform(-1, 1)), float(self.pick([0.25, -0.5, 1.0]))
            lim = start + delta * (n - 0.5)
            r = self.node('Range', [self.const(np.array(v, np.float32), 'init')
                                    for v in (start, lim, delta)])
        return self.node('Cast', [r], to=self.dtype)

    def p_rnn(self):
        """LSTM, GRU or RNN over a rank-3 value [seq, batch, width]: a direction, optional
        bias, sequence_lens, initial states and peepholes, some outputs left unnamed; Y
        (rank 4) and Y_h (rank 3) join the values."""
        x = self.operand(rank=(3,), want=lambda v: max(v.shape) <= 8)
        if x is None:
            return False
        op = self.pick(['LSTM', 'GRU', 'RNN'])
        gates = {'LSTM': 4, 'GRU': 3, 'RNN': 1}[op]
        seq, batch, width = x.shape     # time-major: onnxruntime has no layout 1
        direction = self.pick(['forward', 'reverse', 'bidirectional'])
        dirs, hid = 2 if direction == 'bidirectional' else 1, int(self.rng.integers(1, 6))
        ins = [x.name, self.const(self.rand([dirs, gates * hid, width], -0.5, 0.5)),
               self.const(self.rand([dirs, gates * hid, hid], -0.5, 0.5))]
        state = [dirs, batch, hid]
        optional = [('B', lambda: self.const(self.rand([dirs, 2 * gates * hid], -0.3, 0.3))),
                    ('lens', lambda: self.const(self.rng.integers(1, seq + 1, size=[batch])
                                                .astype(np.int32), 'init')),
                    ('h0', lambda: self.const(self.rand(state)))]
        optional += [('c0', lambda: self.const(self.rand(state))),
                     ('P', lambda: self.const(self.rand([dirs, 3 * hid], -0.3, 0.3)))] \
            if op == 'LSTM' else []
        chosen = [self.chance(0.5) for _ in optional]
        last = max([i for i, c in enumerate(chosen) if c], default=-1)
        ins += [make() if c else '' for (_, make), c in zip(optional[:last + 1],
                                                             chosen[:last + 1])]
        attrs = {'hidden_size': hid, 'direction': direction}
        if op == 'GRU' and self.chance(0.5):
            attrs['linear_before_reset'] = 1
        outs = self.node(op, ins, n_out=3 if op == 'LSTM' else 2, **attrs)
        node = self.scope.nodes[-1]
        if self.chance(0.3):
            node.output[0] = ''             # Y not computed
        else:
            self.value(outs[0], [seq, dirs, batch, hid])
        self.value(outs[1], state)
        if op == 'LSTM' and self.chance(0.5):
            del node.output[2]              # Y_c not asked for
        return True

    def p_matmul_bias(self):
        """MatMul(x, W) + bias, x of rank 2 or 3 (the bias on either side)."""
        x = self.operand(rank=(2, 3), want=lambda v: v.shape[-1] <= 16)
        if x is None:
            x = self.new_input([int(self.rng.integers(1, 4)) for _ in range(self.pick([2, 3]))])
        k, n = x.shape[-1], int(self.rng.integers(1, 9))
        y = self.node('MatMul', [x.name, self.const(self.rand([k, n], -0.6, 0.6))])
        b = self.const(self.rand(self.pick([[n], [n], [1, n], [1] * (x.rank - 1) + [n]])))
        y = self.node('Add', [y, b] if self.chance(0.8) else [b, y])
        self.value(y, list(x.shape[:-1]) + [n])
        return True

    def p_pad_pool(self):
        """Pad(constant 0) on the spatial dims, then a Conv, MaxPool or AveragePool."""
        x = self.need((3, 4, 5), lambda v: v.shape[0] <= 2 and max(v.shape[1:]) <= 10)
        if x is None:
            return False
        sp = x.rank - 2
        pads = [0, 0] + [int(self.rng.integers(0, 3)) for _ in range(sp)]
        pads += [0, 0] + [int(self.rng.integers(0, 3)) for _ in range(sp)]
        if self.opset < 11:
            attrs = {'pads': pads}
            if self.chance(0.3):
                attrs['value'] = 0.0
            y = self.node('Pad', [x.name], **attrs)
        else:
            ins = [x.name, self.ints(pads)]
            if self.chance(0.3):
                ins.append(self.const(np.array(0, self.np)))
            y = self.node('Pad', ins, **({'mode': 'constant'} if self.chance(0.3) else {}))
        v = self.value(y, [x.shape[i] + pads[i] + pads[x.rank + i] for i in range(x.rank)])
        if self.dtype != TP.FLOAT or self.chance(0.4):   # onnxruntime pools: float only
            return self.conv_on(v, False) or True
        return self.pool_on(v)

    def pool_on(self, x):
        """MaxPool or AveragePool of x: explicit pads, or auto_pad; from opset 10 maybe
        ceil_mode, and MaxPool's dilations."""
        sp = x.rank - 2
        ks = [int(self.rng.integers(1, min(4, d) + 1)) for d in x.shape[2:]]
        st = [int(self.rng.integers(1, 3)) for _ in range(sp)]
        pads = [int(self.rng.integers(0, k)) for k in ks] * 2 if self.chance(0.3) else [0] * 2 * sp
        op = self.pick(['MaxPool', 'AveragePool'])
        dil = [1] * sp
        if op == 'MaxPool' and self.opset >= 10 and self.chance(0.25):
            dil = [int(self.rng.integers(1, 3)) for _ in range(sp)]
        eff = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
        if any(e > n for e, n in zip(eff, x.shape[2:])):
            return False
        ceil = self.opset >= 10 and self.chance(0.3)
        auto = self.pick(['SAME_UPPER', 'SAME_LOWER', 'VALID']) if self.chance(0.15) else None
        attrs = {'kernel_shape': ks, 'strides': st}
        if auto:
            pads, ceil = [0] * 2 * sp, False
            attrs['auto_pad'] = auto
            if auto != 'VALID':
                dil, eff = [1] * sp, list(ks)   # onnxruntime: no dilations with SAME_*
        if any(pads):
            attrs['pads'] = pads
        if any(d != 1 for d in dil):
            attrs['dilations'] = dil
        if ceil:
            attrs['ceil_mode'] = 1
        if op == 'AveragePool' and self.chance(0.5):
            attrs['count_include_pad'] = int(self.rng.integers(0, 2))
        out = []
        for i in range(sp):
            n, span = x.shape[2 + i], x.shape[2 + i] + 2 * pads[i] - eff[i]
            if auto in ('SAME_UPPER', 'SAME_LOWER'):
                out.append(-(-n // st[i]))
                if (out[-1] - 1) * st[i] + eff[i] < n:
                    return False        # SAME would need negative padding
            elif ceil:
                out.append(-(-span // st[i]) + 1)
                if (out[-1] - 1) * st[i] >= n + pads[i]:
                    return False  # a window starting in the end padding: onnxruntime drops
            else:                 # it, onnx 1.12's inference (the checker) does not
                out.append(span // st[i] + 1)
        self.value(self.node(op, [x.name], **attrs), list(x.shape[:2]) + out)
        return True

    def p_noop(self):
        """Nodes that change nothing (what an eliminate-noops pass removes): Cast to the same
        type, Reshape to the same shape, the identity Transpose, a Transpose and its inverse,
        Add of 0, Mul by 1, Concat of one input, a Slice of everything, Pad by zeros, Expand
        to the same shape (and Dropout, p_dropout)."""
        x = self.operand(min_rank=1)
        if x is None:
            return False
        # onnxruntime's float16 fallback (InsertCastTransformer) retypes a float16 ->
        # float16 Cast next to ops without a float16 kernel and then refuses the model.
        forms = ['reshape', 'transpose', 'add0', 'sub0', 'mul1', 'concat1', 'slice_all', 'pad0']
        forms += ['cast'] if self.dtype != TP.FLOAT16 else []
        forms += ['transpose2'] if x.rank >= 2 else []
        forms += ['expand'] if self.opset >= 8 else []
        what = self.pick(forms)
        y = getattr(self, 'noop_' + what)(x)
        self.value(y, x.shape)
        return True

    def noop_cast(self, x):
        return self.node('Cast', [x.name], to=self.dtype)

    def noop_reshape(self, x):
        spec = list(x.shape)
        if self.chance(0.3):
            spec[int(self.rng.integers(x.rank))] = -1
        elif self.chance(0.3):
            spec[0] = 0
        return self.node('Reshape', [x.name, self.ints(spec)])

    def noop_transpose(self, x):
        return self.node('Transpose', [x.name], perm=list(range(x.rank)))

    def noop_transpose2(self, x):
        """Transpose(perm) then Transpose(inverse of perm)."""
        perm = [int(p) for p in self.rng.permutation(x.rank)]
        t = self.node('Transpose', [x.name], perm=perm)
        return self.node('Transpose', [t], perm=[int(i) for i in np.argsort(perm)])

    def noop_add0(self, x):
        zero = self.const(np.zeros(self.pick([[], [1], list(x.shape[-1:])]), self.np))
        return self.node('Add', [x.name, zero] if self.chance(0.7) else [zero, x.name])

    def noop_sub0(self, x):
        """x - 0, the zero sometimes -0.0 (x - (-0) is x + 0: not a no-op for x = -0)."""
        zero = self.const(np.zeros(self.pick([[], [1], list(x.shape[-1:])]), self.np) *
                          self.pick([1, -1]))
        return self.node('Sub', [x.name, zero])

    def p_twin(self):
        """The same operator on the same input twice, then both combined (what cse merges:
        exporters repeat size lookups and whole projections)."""
        x = self.operand()
        if x is None:
            return False
        op = self.pick(['Relu', 'Sigmoid', 'Neg', 'Abs'])
        a, b = self.node(op, [x.name]), self.node(op, [x.name])
        y = self.node(self.pick(['Add', 'Mul', 'Sub']), [a, b])
        self.value(y, x.shape)
        return True

    def noop_mul1(self, x):
        one = self.const(np.ones(self.pick([[], [1], list(x.shape[-1:])]), self.np))
        return self.node('Mul', [x.name, one] if self.chance(0.7) else [one, x.name])

    def noop_concat1(self, x):
        return self.node('Concat', [x.name], axis=int(self.rng.integers(0, x.rank)))

    def noop_slice_all(self, x):
        axes = list(range(x.rank))
        ends = [int(d) if self.chance(0.5) else 2 ** 63 - 1 for d in x.shape]
        if self.opset < 10:
            return self.node('Slice', [x.name], starts=[0] * x.rank,
                             ends=[min(e, 2 ** 31 - 1) for e in ends], axes=axes)
        return self.node('Slice', [x.name, self.ints([0] * x.rank), self.ints(ends),
                                   self.ints(axes)])

    def noop_pad0(self, x):
        if self.opset < 11:
            return self.node('Pad', [x.name], pads=[0] * (2 * x.rank))
        return self.node('Pad', [x.name, self.ints([0] * (2 * x.rank))])

    def noop_expand(self, x):
        shape = list(x.shape) if self.chance(0.6) else [1] * x.rank
        return self.node('Expand', [x.name, self.ints(shape)])

    def body_chain(self, x):
        """A few ops inside a body, on the body's own input or an outer value x."""
        cur = x
        for _ in range(int(self.rng.integers(1, 4))):
            prods = [self.p_unary, self.p_binary, self.p_identity, self.p_clip, self.p_noop,
                     self.p_const_subgraph]
            if cur.rank in (3, 4, 5):
                prods += [self.p_conv, self.p_bn]
            if self.opset >= 11:
                prods.append(self.p_slice)
            prods = [p for p in prods if p.__name__ in DTYPE_OPS[self.dtype]]
            before = len(self.scope.pool)
            self.pick(prods)()
            if len(self.scope.pool) > before:
                cur = self.scope.pool[-1]
        return cur

    def branch(self, x, out_shape_want):
        """A body graph whose single output has x's dtype and shape out_shape_want."""
        body = Scope(self.scope)
        saved, self.scope = self.scope, body
        try:
            y = self.body_chain(x)
            if y.shape != tuple(out_shape_want):
                y = x
            name = y.name
            if name in (v.name for v in saved.visible()):
                name = self.node('Identity', [name])
        finally:
            self.scope = saved
        return body, name

    def p_if(self):
        x = self.operand()
        if x is None:
            return False
        cond = self.cond_input()
        then_b, then_o = self.branch(x, x.shape)
        else_b, else_o = self.branch(x, x.shape)
        outs = []
        for b, o in ((then_b, then_o), (else_b, else_o)):
            g = helper.make_graph(b.nodes, self.fresh('branch'), [],
                                  [helper.make_tensor_value_info(o, self.dtype, None)],
                                  initializer=b.inits)
            outs.append(g)
        y = self.node('If', [cond], then_branch=outs[0], else_branch=outs[1])
        self.value(y, x.shape)
        return True

    def cond_input(self):
        """The If's condition: a bool graph input (known at run time only) or, one time in
        three from opset 9 on, a constant that fold replaces the If by its chosen branch for."""
        if self.opset >= 9 and self.chance(1 / 3):
            return self.const_cond()
        for i in self.inputs:
            if i.type.tensor_type.elem_type == TP.BOOL:
                return i.name
        return self.new_input([], TP.BOOL).name

    def const_cond(self):
        """A one-element bool constant: as such (a scalar or [1], an initializer or a Constant
        node), a comparison of two float constants, or a static dim of a value compared
        with a number (constant once inference knows the dim; a symbolic one stays)."""
        kind = self.pick(['const', 'compare', 'dim'])
        shape = () if self.chance(0.5) else (1,)
        x = self.operand(min_rank=1) if kind == 'dim' else None
        if x is not None:
            i = int(self.rng.integers(x.rank))
            dim = self.node('Gather', [self.node('Shape', [x.name]),
                                       self.const(np.array(i, np.int64), 'init')], axis=0)
            size = x.shape[i] if self.chance(0.5) else x.shape[i] + 1
            return self.node('Equal', [dim, self.const(np.array(size, np.int64), 'init')])
        if kind == 'compare':
            a, b = (self.const(np.full(shape, self.rng.integers(-2, 3), np.float32))
                    for _ in range(2))
            return self.node(self.pick(['Greater', 'Less']), [a, b])
        return self.const(np.full(shape, self.chance(0.5), bool), self.pick(['init', 'node']))

    def p_loop(self):
        x = self.operand()
        if x is None:
            return False
        body = Scope(self.scope)
        saved, self.scope = self.scope, body
        try:
            it, cin, vin = self.fresh('iter'), self.fresh('cond_in'), self.fresh('carry_in')
            cur = self.value(vin, x.shape)
            outer = self.operand(want=lambda v: v.shape == x.shape and v.name != vin
                                 and v not in body.pool)
            if outer is not None and self.chance(0.7):
                cur = self.value(self.node('Add', [vin, outer.name]), x.shape)
            y = self.body_chain(cur)
            if y.shape != x.shape:
                y = cur
            vout = y.name if y.name != vin else self.node('Identity', [vin])
            cout = self.node('Identity', [cin])
        finally:
            self.scope = saved
        ginputs = [helper.make_tensor_value_info(it, TP.INT64, []),
                   helper.make_tensor_value_info(cin, TP.BOOL, []),
                   helper.make_tensor_value_info(vin, self.dtype, list(x.shape))]
        goutputs = [helper.make_tensor_value_info(cout, TP.BOOL, []),
                    helper.make_tensor_value_info(vout, self.dtype, None)]
        g = helper.make_graph(body.nodes, self.fresh('body'), ginputs, goutputs,
                              initializer=body.inits)
        trip = self.const(np.array(int(self.rng.integers(1, 4)), np.int64), 'init')
        keep = self.const(np.array(True), 'init')
        y = self.node('Loop', [trip, keep, x.name], body=g)
        self.value(y, x.shape)
        return True

    PRODUCTIONS = [
        ('p_conv', 3.0), ('p_gemm', 1.5), ('p_bn', 1.0), ('p_unary', 1.0), ('p_binary', 1.0),
        ('p_identity', 1.0), ('p_constant_out', 0.3), ('p_clip', 1.0), ('p_pad', 1.2),
        ('p_slice', 1.0), ('p_resize', 1.2), ('p_reshape', 0.8), ('p_transpose', 0.6),
        ('p_concat', 0.6), ('p_split', 0.5), ('p_gather', 0.5), ('p_layernorm', 0.8),
        ('p_gelu', 0.8), ('p_dropout', 0.5), ('p_if', 0.5), ('p_loop', 0.4),
        ('p_shape_reshape', 0.6), ('p_const_subgraph', 0.7), ('p_matmul_bias', 0.8),
        ('p_pad_pool', 0.8), ('p_noop', 1.2), ('p_bn_conv', 0.5), ('p_fold_expr', 1.0),
        ('p_rnn', 0.4), ('p_dyn_shape', 0.6), ('p_twin', 0.5),
        ('p_step_expr', float(os.environ.get('GEN_STEP_WEIGHT', '0.5'))),
    ]

    # -- whole model -----------------------------------------------------------
    def build(self):
        self.extra_outputs = []
        allowed = [(p, w) for p, w in self.PRODUCTIONS if p in DTYPE_OPS[self.dtype]]
        self.fresh_input_like(int(self.pick([2, 3, 4, 4, 4, 5])))
        steps = int(self.rng.integers(2, 11))
        done = 0
        for _ in range(steps * 3):
            if done >= steps:
                break
            if getattr(self, self.weighted(allowed))():
                done += 1
        return self.assemble()

    def pick_outputs(self):
        used = {i for n in self.main.nodes for i in n.input}
        for n in self.main.nodes:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    used |= {i for bn in a.g.node for i in bn.input}
        produced = [v for v in self.main.pool if v.name not in self.input_dims]
        leaves = [v for v in produced if v.name not in used]
        outs = [v for v in leaves if self.chance(0.75)] or (leaves[-1:] or produced[-1:])
        if produced and self.chance(0.2):
            outs.append(self.pick(produced))
        names, res = set(), []
        for v in outs:
            if v.name not in names:
                names.add(v.name)
                res.append((v.name, v.dtype, v.rank))
        for name, dt, rank in self.extra_outputs:
            if name not in names:
                names.add(name)
                res.append((name, dt, rank))
        return res

    def assemble(self):
        outputs = [helper.make_tensor_value_info(n, dt, [None] * rank)
                   for n, dt, rank in self.pick_outputs()]
        if not outputs:
            return None
        inputs = list(self.inputs)
        if self.ir < 4:
            self.init_inputs = [t for t in self.main.inits]
        elif self.chance(0.1) and self.main.inits:
            self.init_inputs = [self.pick(self.main.inits)]
        for t in self.init_inputs:
            inputs.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
        g = helper.make_graph(self.main.nodes, 'fuzz_%d' % self.seed, inputs, outputs,
                              initializer=self.main.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', self.opset)],
                              producer_name='ppqfmt-fuzz', producer_version='1')
        m.ir_version = self.ir
        helper.set_model_props(m, {INPUT_DIMS_KEY: json.dumps(self.input_dims, sort_keys=True)})
        return self.finish_value_info(m)

    def symbol_sizes(self):
        """{symbol: size fed} of the graph inputs' symbolic dims."""
        out = {}
        for vi in self.inputs:
            for d, size in zip(vi.type.tensor_type.shape.dim, self.input_dims[vi.name]):
                if d.dim_param:
                    out[d.dim_param] = size
        return out

    def finish_value_info(self, m):
        """value_info: none, what shape inference finds, a part of it, or with stale entries;
        graph outputs with or without their inferred shapes."""
        try:
            inferred = shape_inference.infer_shapes(m)
        except Exception:
            return m
        sizes = {v.name: v.shape for v in self.main.pool}
        for v in list(inferred.graph.value_info) + list(inferred.graph.output):
            forget_unproven_symbols(v, sizes.get(v.name), self.symbol_sizes())
        shapes = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
        if self.chance(0.6):
            for o in m.graph.output:
                if o.name in shapes:
                    o.CopyFrom(shapes[o.name])
        mode = self.weighted([('none', 0.35), ('full', 0.25), ('partial', 0.25), ('stale', 0.15)])
        vis = list(inferred.graph.value_info)
        if mode == 'full':
            m.graph.value_info.extend(vis)
        elif mode == 'partial':
            for v in vis:
                if self.chance(0.5):
                    v = onnx.ValueInfoProto.FromString(v.SerializeToString())
                    if self.chance(0.4):
                        v.type.tensor_type.ClearField('shape')
                    m.graph.value_info.append(v)
        elif mode == 'stale':
            m.graph.value_info.extend(v for v in vis if self.chance(0.5))
            for _ in range(int(self.rng.integers(1, 3))):
                m.graph.value_info.append(helper.make_tensor_value_info(
                    self.fresh('stale'), self.dtype, [int(self.rng.integers(1, 5))]))
        return m


def forget_unproven_symbols(vi, sizes, symbols):
    """Makes unknown each symbolic dim of vi (onnx's inference) unless it is an input's
    symbol (symbols: {name: size fed}) and sizes, vi's concrete dims as generated, say that
    dim has that size. onnx-1.12 gives wrong ones: one unk__N to dims of different sizes
    (a Conv output's and a Slice's of it), the input's N to a Slice [1:2] of an N dim; the
    model would declare them, and ppqfmt rightly trusts declarations."""
    if vi.type.WhichOneof('value') != 'tensor_type':
        return
    for k, d in enumerate(vi.type.tensor_type.shape.dim):
        if not d.HasField('dim_param'):
            continue
        if sizes is None or len(sizes) <= k or symbols.get(d.dim_param) != sizes[k]:
            d.ClearField('dim_param')


# Productions onnxruntime's CPU provider runs in each dtype: it has no double
# Conv, ConvTranspose, Resize/Upsample, Clip-6/11, LeakyRelu or Erf kernel (the
# productions avoid the last three themselves), pools only in float
# (p_pad_pool puts a Conv after the Pad in float16), and LSTM/GRU/RNN only in
# float.
_ALL = {p for p, _ in ModelGen.PRODUCTIONS}
DTYPE_OPS = {
    TP.FLOAT: _ALL,
    TP.DOUBLE: _ALL - {'p_conv', 'p_bn_conv', 'p_resize', 'p_pad_pool', 'p_rnn'},
    TP.FLOAT16: _ALL - {'p_rnn'},
}


def _renamable(model):
    """(outputs of the main graph, names subgraphs read, {name: index of its last reader})."""
    g = model.graph
    sub_reads = set()
    for n in g.node:
        sub_reads |= _graph_reads_all(n)
    last_use = {}
    for i, n in enumerate(g.node):
        for x in n.input:
            last_use[x] = i
    return {o.name for o in g.output}, sub_reads, last_use


def nonssa_pairs(model):
    """(x, y): a later node's output y that could be written as x, the output of an earlier
    node no node reads after that write. Graph outputs and names subgraphs read are kept."""
    outs, sub_reads, last_use = _renamable(model)
    nodes = list(model.graph.node)
    pairs = []
    for i, n in enumerate(nodes):
        for x in n.output:
            if not x or x in outs or x in sub_reads or x not in last_use:
                continue
            for j in range(max(last_use[x], i + 1), len(nodes)):
                pairs += [(x, y) for y in nodes[j].output
                          if y and y not in outs and y not in sub_reads and y != x]
    return pairs


def apply_nonssa(model, x, y):
    """A copy of model in which the node writing y writes x instead (and y's readers read x),
    or None when (x, y) is not a renaming nonssa_pairs allows in model."""
    if (x, y) not in nonssa_pairs(model):
        return None
    m = onnx.ModelProto.FromString(model.SerializeToString())
    ns = m.graph.node
    j = next(k for k, n in enumerate(ns) if y in n.output)
    ns[j].output[list(ns[j].output).index(y)] = x
    for n in ns[j + 1:]:
        for k, name in enumerate(n.input):
            if name == y:
                n.input[k] = x
    for v in list(m.graph.value_info):
        if v.name in (x, y):
            m.graph.value_info.remove(v)
    return m


def _graph_reads(g):
    reads = set()
    for n in g.node:
        reads |= set(n.input) | _graph_reads_all(n)
    return reads


def _graph_reads_all(node):
    """Every name read inside node's subgraphs (outer-scope uses included)."""
    reads = set()
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            reads |= _graph_reads(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            for sg in a.graphs:
                reads |= _graph_reads(sg)
    return reads


def generate(seed):
    """The model for seed (None when the grammar produced nothing usable)."""
    gen = ModelGen(seed)
    m = gen.build()
    if m is None:
        return None
    nonssa = None
    if gen.chance(NONSSA_RATE):
        pairs = nonssa_pairs(m)
        if pairs:
            nonssa = pairs[int(gen.rng.integers(len(pairs)))]
    return Generated(m, nonssa)


def input_dims(model):
    """{graph input name: concrete dims} as the generator recorded them (None if absent)."""
    for p in model.metadata_props:
        if p.key == INPUT_DIMS_KEY:
            return json.loads(p.value)
    return None


def set_input_dims(model, dims):
    for p in model.metadata_props:
        if p.key == INPUT_DIMS_KEY:
            p.value = json.dumps(dims, sort_keys=True)
            return
    helper.set_model_props(model, {INPUT_DIMS_KEY: json.dumps(dims, sort_keys=True)})


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('seed', type=int)
    ap.add_argument('-o', '--output')
    args = ap.parse_args(argv)
    got = generate(args.seed)
    if got is None:
        print('seed %d: no model' % args.seed, file=sys.stderr)
        return 1
    out = args.output or 'random_%d.onnx' % args.seed
    onnx.save(apply_nonssa(got.model, *got.nonssa) if got.nonssa else got.model, out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
