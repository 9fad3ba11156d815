"""Random constant expressions for scripts/gen_random_model.py: trees of ops over initializers
(and Constant nodes) that ppqfmt's fold pass evaluates, so that fuzz_diff compares fold's
kernels with onnxruntime's on random shapes, axes, broadcasts and values.

FoldExpr(gen, p_input, dtype).float_expr(shape, depth) returns the name of a value of that float
type (float32, double or float16) and exactly that shape, computed from constants by elementwise
math (Sin ... Erf, Pow, Where), reductions
(ReduceSum/Mean/Max/Min with keepdims 0 or 1, the axes an attribute or, for ReduceSum from
opset 13, an input), Softmax (before opset 13 over the input coerced to 2-D at `axis`), CumSum,
Trilu, MatMul, Gemm, Conv, ConvTranspose, layout ops (Transpose, Reshape, Squeeze/Unsqueeze, Tile, Expand, Concat,
Slice with negative steps, Pad in its three modes, Gather, GatherElements, ScatterND, OneHot)
and int64 arithmetic (Range, Add/Sub/Mul, Div and Mod of signed values, ArgMax/ArgMin) cast
to float. Each form is used only from the opset that has it in that form. Values stay in
ranges where float32 evaluation op by op (onnxruntime) and fold's double evaluation rounded
once agree within the oracle's tolerance: no cancellation is amplified (a divisor or a Log
argument is |e| + 0.5, an Exp argument a Tanh).
"""
import numpy as np

F32, I64, F16, F64 = 1, 7, 10, 11   # TensorProto element types
NP_OF = {F32: np.float32, F16: np.float16, F64: np.float64}
# Ops and forms onnxruntime's CPU provider has no double or float16 kernel for (it casts
# float16 around most it lacks, not these).
FLOAT32_ONLY = {'Erf', 'Softsign', 'Mean', 'onehot', 'conv', 'conv_transpose'}
MAX_ELEMS = 48   # of an intermediate: the expressions are about kernels, not sizes


class FoldExpr:
    """p_input: the chance that a leaf is a new float32 graph input instead of a constant:
    then the expression (or the part of it above that leaf) is computed at run time, and
    shape inference, not fold, has to get its shapes right (symbolic dims included)."""

    def __init__(self, gen, p_input=0.0, dtype=F32):
        self.g = gen
        self.rng = gen.rng
        self.opset = gen.opset
        self.p_input = p_input
        self.dtype = dtype
        self.np = NP_OF[dtype]

    # -- helpers ---------------------------------------------------------------
    def node(self, op, inputs, **attrs):
        return self.g.node(op, inputs, **attrs)

    def leaf(self, shape):
        if self.p_input and self.chance(self.p_input):
            return self.g.new_input(shape, dtype=self.dtype).name
        return self.g.const(self.rng.uniform(-2, 2, size=shape).astype(self.np))

    def has_kernel(self, op):
        if op == 'cumsum' and self.dtype == F16 and self.opset < 14:
            return False        # CumSum takes float16 from opset 14
        return self.dtype == F32 or op not in FLOAT32_ONLY

    def half(self):
        return self.g.const(self.np(0.5), 'init')

    def ints(self, vals):
        return self.g.ints([int(v) for v in vals])

    def chance(self, p):
        return self.g.chance(p)

    def pick(self, seq):
        return self.g.pick(seq)

    def small(self, shape):
        return int(np.prod(shape, dtype=np.int64)) <= MAX_ELEMS

    # -- ops with a step fed by inexact values ------------------------------------
    STEPS = ['Floor', 'Ceil', 'Round', 'Sign', 'Less', 'Greater', 'Equal', 'LessOrEqual',
             'GreaterOrEqual', 'cast_int', 'cast_bool', 'Mod', 'ArgMax', 'ArgMin', 'away']
    # Float to integer Cast inputs near the ends of each type (int64, int32, int8, uint8).
    # Not NaN, inf or values outside the type: C++ leaves those undefined, and onnxruntime's
    # own graph optimisations then change its answer (fold keeps them: tests/passes/fold.py).
    CAST_VALUES = {7: [3e9, -3e9, 2.7, -2.7, 9.2e18, -9.2e18], 6: [2.7, -2.7, 1e9, -2147483520.0],
                   3: [-128.9, 127.5, -2.7], 2: [0.5, 255.9, 127.5, 2.7]}

    def step_expr(self, shape):
        """A float32 value of shape (rank >= 1, opset >= 11) whose op has a step (Floor ...
        Cast to an integer, ArgMax ties) applied to a value computed inexactly from constants
        that lies at the step in exact arithmetic: the row sums of a softmax (CumSum's last
        column), halved for Round, less one for Sign; a row with ties for ArgMax/ArgMin; or
        Floor of an Exp, mostly away from its steps. fold must keep such a node and its
        inexact inputs for onnxruntime to compute (core/ops/eval.h, Exactness). Also integer
        edge cases: int64 Pow (onnxruntime: std::pow in double, 3^39 is not the exact power;
        beyond the type undefined) and float to integer Cast near the ends of the type."""
        if self.chance(0.2) and self.g.dtype != F16:    # powers overflow float16
            return self.int_edge(shape)
        last = len(shape) - 1
        c = self.rng.uniform(-2, 2, size=shape).astype(np.float32)
        if self.chance(0.5):
            c[..., -1] = c[..., 0]       # ties for ArgMax/ArgMin
        # Constant nodes, never an initializer a caller may override (gen_random_model's
        # init_inputs): then the CumSum is computed at run time from fold's Softmax.
        sm = self.node('Softmax', [self.g.const(c, 'node')], axis=last)
        base = self.node('CumSum', [sm, self.g.const(np.array(last, np.int64), 'node')])
        one = self.g.const(np.float32(1.0), 'node')
        op = self.pick([o for o in self.STEPS if o not in ('LessOrEqual', 'GreaterOrEqual')
                        or self.opset >= 12])
        if op in ('Floor', 'Ceil'):
            return self.node(op, [base])
        if op == 'Round':
            return self.node('Round', [self.node('Mul', [base, self.half_f32()])])
        if op == 'Sign':
            return self.node('Sign', [self.node('Sub', [base, one])])
        if op == 'Mod':
            return self.node('Mod', [base, one], fmod=1)
        if op == 'away':
            return self.node('Floor', [self.node('Exp', [self.g.const(c)])])
        if op in ('ArgMax', 'ArgMin'):
            got = self.node(op, [sm], axis=last, keepdims=1)
            return self.node('Expand', [self.node('Cast', [got], to=F32), self.ints(shape)])
        if op.startswith('cast'):
            got = self.node('Cast', [base], to=self.pick([I64, 6]) if op == 'cast_int' else 9)
            return self.node('Cast', [got], to=F32)
        return self.node('Cast', [self.node(op, [base, one])], to=F32)

    def int_edge(self, shape):
        """Pow of int64 or int32 constants (exponents -3..44, as far as the power fits the
        type: 3^39 beyond 2^53) or a float to integer Cast of CAST_VALUES, cast to float32."""
        if self.opset >= 12 and self.chance(0.5):      # integer Pow from opset 12
            dt = self.pick([np.int64, np.int32])
            b = self.rng.integers(-9, 10, size=shape)
            # the largest exponent whose power fits the type (beyond: undefined in C++, and
            # onnxruntime's answer then changes with its graph optimisations); 0 to no
            # negative power (inf)
            top = np.where(np.abs(b) < 2, 60, np.floor((31 if dt == np.int32 else 63) /
                                                       np.log2(np.maximum(np.abs(b), 2)) - 1e-9))
            e = np.minimum(self.rng.integers(-3, 45, size=shape), top.astype(np.int64))
            e = np.where(b == 0, np.abs(e), e)
            base = self.g.const(b.astype(dt), 'init')
            exp = self.g.const(e.astype(dt), 'init')
            return self.node('Cast', [self.node('Pow', [base, exp])], to=F32)
        to = self.pick([I64, 6, 3, 2])      # int64, int32, int8, uint8
        vals = np.array(self.rng.choice(self.CAST_VALUES[to], size=shape), np.float32)
        return self.node('Cast', [self.node('Cast', [self.g.const(vals, 'init')], to=to)], to=F32)

    def half_f32(self):
        return self.g.const(np.float32(0.5), 'node')

    # -- float expressions -------------------------------------------------------
    def float_expr(self, shape, depth):
        """A float32 value of exactly shape, depth levels of ops over constants."""
        shape = [int(d) for d in shape]
        if depth <= 0:
            return self.leaf(shape)
        forms = [f for f, ok in self.forms(shape) if ok and self.has_kernel(f)]
        for _ in range(4):
            got = getattr(self, 'f_' + self.pick(forms))(shape, depth - 1)
            if got is not None:
                return got
        return self.leaf(shape)

    def forms(self, shape):
        r, o = len(shape), self.opset
        return [('unary', True), ('unary', True), ('binary', True), ('from_ints', True), ('where', o >= 9), ('reduce', r < 4),
                ('softmax', r >= 1), ('cumsum', o >= 11 and r >= 1), ('trilu', o >= 14 and r >= 2),
                ('matmul', r >= 2), ('gemm', r == 2), ('transpose', r >= 2),
                ('reshape', r >= 1 and o >= 5), ('unsqueeze', r >= 1), ('tile', r >= 1 and o >= 6),
                ('expand', o >= 8), ('concat', r >= 1), ('slice', r >= 1 and o >= 10),
                ('pad', r >= 1 and o >= 11), ('gather', r >= 1), ('gather_elements', r >= 1 and o >= 11),
                ('scatter_nd', r >= 1 and o >= 11), ('onehot', r >= 2 and o >= 11),
                ('conv', 3 <= r <= 5), ('conv_transpose', 3 <= r <= 5),
                ('from_ints', True)]

    def f_unary(self, shape, depth):
        e = self.float_expr(shape, depth)
        ops = ['Abs', 'Neg', 'Floor', 'Ceil', 'Relu', 'Sigmoid', 'Tanh', 'exp', 'sqrt', 'log',
               'reciprocal', 'Softsign']
        ops += ['Sin', 'Cos'] if self.opset >= 7 else []
        ops += ['Sign', 'Erf'] if self.opset >= 9 else []
        ops += ['Round'] if self.opset >= 11 else []
        op = self.pick([o for o in ops if self.has_kernel(o)])
        if op == 'exp':           # Exp of a Tanh: no overflow, no amplification
            return self.node('Exp', [self.node('Tanh', [e])])
        if op in ('sqrt', 'log', 'reciprocal'):   # of |e| + 0.5: away from 0
            pos = self.node('Add', [self.node('Abs', [e]), self.half()])
            return self.node(op.capitalize(), [pos])
        return self.node(op, [e])

    def broadcast_shape(self, shape):
        """A shape that broadcasts to shape: a suffix of it, some dims made 1."""
        tail = shape[int(self.rng.integers(0, len(shape) + 1)):]
        return [1 if self.chance(0.3) else d for d in tail]

    def f_binary(self, shape, depth):
        a = self.float_expr(shape, depth)
        b = self.float_expr(self.broadcast_shape(shape), depth)
        ops = ['Add', 'Sub', 'Mul', 'div', 'pow']
        ops += ['Max', 'Min', 'Mean', 'Sum'] if self.opset >= 8 else []
        op = self.pick([o for o in ops if self.has_kernel(o)])
        if op == 'div':
            pos = self.node('Add', [self.node('Abs', [b]), self.half()])
            return self.node('Div', [a, pos] if self.chance(0.5) else
                             [a, self.node('Neg', [pos])])
        if op == 'pow':           # a base in [0.5, 2.5], a small exponent
            base = self.node('Add', [self.node('Abs', [self.node('Tanh', [a])]),
                                     self.half()])
            return self.node('Pow', [base, self.node('Tanh', [b])])
        return self.node(op, [a, b] if self.chance(0.7) else [b, a])

    def f_where(self, shape, depth):
        a, b = self.float_expr(shape, depth), self.float_expr(self.broadcast_shape(shape), depth)
        cond = self.node(self.pick(['Less', 'Greater']), [a, b])
        if self.chance(0.3):
            cond = self.node('Not', [cond])
        return self.node('Where', [cond, a, b] if self.chance(0.5) else [cond, b, a])

    def f_reduce(self, shape, depth):
        keep = self.chance(0.4)
        axis = int(self.rng.integers(0, len(shape) + (0 if keep else 1))) if shape or not keep \
            else None
        if axis is None:
            return None
        k = int(self.rng.integers(1, 5))
        if keep:
            if shape[axis] != 1:
                return None
            inner = shape[:axis] + [k] + shape[axis + 1:]
        else:
            inner = shape[:axis] + [k] + shape[axis:]
        if not self.small(inner):
            return None
        e = self.float_expr(inner, depth)
        op = self.pick(['ReduceSum', 'ReduceMean', 'ReduceMax', 'ReduceMin'])
        ax = axis - len(inner) if self.chance(0.4) and self.opset >= 11 else axis
        if op == 'ReduceSum' and self.opset >= 13:
            return self.node(op, [e, self.ints([ax])], keepdims=int(keep))
        return self.node(op, [e], axes=[ax], keepdims=int(keep))

    def f_softmax(self, shape, depth):
        e = self.float_expr(shape, depth)
        axis = int(self.rng.integers(-len(shape) if self.opset >= 11 else 0, len(shape)))
        return self.node(self.pick(['Softmax', 'LogSoftmax']), [e], axis=axis)

    def f_cumsum(self, shape, depth):
        e = self.float_expr(shape, depth)
        axis = int(self.rng.integers(-len(shape), len(shape)))
        return self.node('CumSum', [e, self.g.const(np.array(axis, np.int64), 'init')],
                         exclusive=int(self.chance(0.3)), reverse=int(self.chance(0.3)))

    def f_trilu(self, shape, depth):
        e = self.float_expr(shape, depth)
        ins = [e] + ([self.g.const(np.array(int(self.rng.integers(-2, 3)), np.int64), 'init')]
                     if self.chance(0.6) else [])
        return self.node('Trilu', ins, upper=int(self.chance(0.5)))

    def f_matmul(self, shape, depth):
        k = int(self.rng.integers(1, 5))
        a_shape = shape[:-1] + [k]
        b_shape = [k, shape[-1]] if self.chance(0.6) else shape[:-2] + [k, shape[-1]]
        if not (self.small(a_shape) and self.small(b_shape)):
            return None
        return self.node('MatMul', [self.float_expr(a_shape, depth),
                                    self.float_expr(b_shape, depth)])

    def f_gemm(self, shape, depth):
        m, n = shape
        k = int(self.rng.integers(1, 5))
        ta, tb = self.chance(0.4), self.chance(0.4)
        a = self.float_expr([k, m] if ta else [m, k], depth)
        b = self.float_expr([n, k] if tb else [k, n], depth)
        ins = [a, b] + ([self.float_expr(self.broadcast_shape(shape), depth)]
                        if self.chance(0.6) or self.opset < 11 else [])
        return self.node('Gemm', ins, transA=int(ta), transB=int(tb),
                         alpha=float(self.pick([1.0, 0.5, -2.0])),
                         beta=float(self.pick([1.0, 0.25])))

    def f_transpose(self, shape, depth):
        perm = [int(p) for p in self.rng.permutation(len(shape))]
        src = [0] * len(shape)
        for i, p in enumerate(perm):
            src[p] = shape[i]
        return self.node('Transpose', [self.float_expr(src, depth)], perm=perm)

    def f_reshape(self, shape, depth):
        n = int(np.prod(shape, dtype=np.int64))
        src = self.pick([[n], shape[::-1], [1] + shape])
        target = list(shape)
        if target and self.chance(0.3):
            target[int(self.rng.integers(0, len(target)))] = -1
        return self.node('Reshape', [self.float_expr(src, depth), self.ints(target)])

    def f_unsqueeze(self, shape, depth):
        """Squeeze of a value with a 1 inserted (or Unsqueeze where shape has a 1)."""
        ones = [i for i, d in enumerate(shape) if d == 1]
        if ones and self.chance(0.5):
            axis = self.pick(ones)
            inner = shape[:axis] + shape[axis + 1:]
            e = self.float_expr(inner, depth)
            return self.axes_op('Unsqueeze', e, axis, len(shape))
        axis = int(self.rng.integers(0, len(shape) + 1))
        e = self.float_expr(shape[:axis] + [1] + shape[axis:], depth)
        return self.axes_op('Squeeze', e, axis, len(shape) + 1)

    def axes_op(self, op, e, axis, rank):
        ax = axis - rank if self.chance(0.3) and self.opset >= 11 else axis
        if self.opset >= 13:
            return self.node(op, [e, self.ints([ax])])
        return self.node(op, [e], axes=[ax])

    def f_tile(self, shape, depth):
        reps = [self.pick([r for r in (1, 2, 3) if d % r == 0]) for d in shape]
        inner = [d // r for d, r in zip(shape, reps)]
        return self.node('Tile', [self.float_expr(inner, depth), self.ints(reps)])

    def f_expand(self, shape, depth):
        """Expand of a value broadcasting to shape; the target shape may say 1 where the
        value already has the full dim."""
        inner = self.broadcast_shape(shape)
        off = len(shape) - len(inner)
        target = [1 if i >= off and inner[i - off] == d and self.chance(0.3) else d
                  for i, d in enumerate(shape)]
        return self.node('Expand', [self.float_expr(inner, depth), self.ints(target)])

    def f_concat(self, shape, depth):
        axis = int(self.rng.integers(0, len(shape)))
        if shape[axis] < 2:
            return None
        cut = int(self.rng.integers(1, shape[axis]))
        parts = [shape[:axis] + [c] + shape[axis + 1:] for c in (cut, shape[axis] - cut)]
        ax = axis - len(shape) if self.chance(0.3) and self.opset >= 11 else axis
        return self.node('Concat', [self.float_expr(p, depth) for p in parts], axis=ax)

    def f_slice(self, shape, depth):
        axis = int(self.rng.integers(0, len(shape)))
        d = shape[axis]
        step = self.pick([1, 2, -1, -2])
        extra = int(self.rng.integers(0, 3))
        n = (d - 1) * abs(step) + 1 + extra
        inner = shape[:axis] + [n] + shape[axis + 1:]
        if not self.small(inner):
            return None
        first = int(self.rng.integers(0, extra + 1))
        if step > 0:
            start, end = first, first + (d - 1) * step + 1
        else:
            start, end = n - 1 - first, n - 1 - first - (d - 1) * abs(step) - 1
        if end < 0:
            end = -n - 1 if self.chance(0.5) else -(2 ** 62)   # before the first element
        elif self.chance(0.3) and start >= 0:
            start -= n             # the same place, counted from the end
        ax = axis - len(shape) if self.chance(0.3) else axis
        ins = [self.float_expr(inner, depth), self.ints([start]), self.ints([end]),
               self.ints([ax]), self.ints([step])]
        return self.node('Slice', ins)

    def f_pad(self, shape, depth):
        mode = self.pick(['constant', 'reflect', 'edge'])
        pads, inner = [], []
        for d in shape:
            lo, hi = (int(self.rng.integers(0, 3)) for _ in range(2))
            if d - lo - hi < (2 if mode == 'reflect' else 1):
                lo = hi = 0
            inner.append(d - lo - hi)
            pads.append((lo, hi))
        if mode == 'reflect' and any(lo >= n or hi >= n for (lo, hi), n in zip(pads, inner)):
            mode = 'edge'
        ins = [self.float_expr(inner, depth), self.ints([p[0] for p in pads] + [p[1] for p in pads])]
        if mode == 'constant' and self.chance(0.5):
            ins.append(self.g.const(self.np(self.rng.uniform(-1, 1)), 'init'))
        return self.node('Pad', ins, mode=mode)

    def f_gather(self, shape, depth):
        axis = int(self.rng.integers(0, len(shape)))
        m = int(self.rng.integers(1, 5))
        inner = shape[:axis] + [m] + shape[axis + 1:]
        lo = -m if self.opset >= 11 else 0
        idx = self.rng.integers(lo, m, size=[shape[axis]]).astype(np.int64)
        return self.node('Gather', [self.float_expr(inner, depth), self.g.const(idx, 'init')],
                         axis=axis)

    def f_gather_elements(self, shape, depth):
        axis = int(self.rng.integers(0, len(shape)))
        m = int(self.rng.integers(1, 5))
        inner = shape[:axis] + [m] + shape[axis + 1:]
        idx = self.rng.integers(-m, m, size=shape).astype(np.int64)
        return self.node('GatherElements', [self.float_expr(inner, depth),
                                            self.g.const(idx, 'init')], axis=axis)

    def f_scatter_nd(self, shape, depth):
        """ScatterND of distinct positions along the first axis (repeated ones are undefined)."""
        k = int(self.rng.integers(1, shape[0] + 1))
        rows = self.rng.permutation(shape[0])[:k].astype(np.int64).reshape(k, 1)
        upd = self.float_expr([k] + shape[1:], depth)
        return self.node('ScatterND', [self.float_expr(shape, depth), self.g.const(rows, 'init'),
                                       upd])

    def f_onehot(self, shape, depth):
        depth_n = shape[-1]
        idx = self.rng.integers(-depth_n, depth_n, size=shape[:-1]).astype(np.int64)
        vals = self.g.const(self.rng.uniform(-1, 1, size=[2]).astype(self.np), 'init')
        return self.node('OneHot', [self.g.const(idx, 'init'),
                                    self.g.const(np.array(depth_n, np.int64), 'init'), vals],
                         axis=-1)

    def f_conv(self, shape, depth):
        """Conv to shape [N, M, spatial...]: groups, strides, dilations, and pads or auto_pad
        (SAME only without dilations and with no negative padding: onnxruntime's terms)."""
        m = shape[1]
        group = self.pick([g for g in (1, 2, 3) if m % g == 0])
        cg = int(self.rng.integers(1, 3))
        auto = self.pick([None, None, None, 'SAME_UPPER', 'SAME_LOWER', 'VALID'])
        same = auto in ('SAME_UPPER', 'SAME_LOWER')
        ks, st, dil, pads, ins = [], [], [], [[], []], []
        for o in shape[2:]:
            k, s = int(self.rng.integers(1, 4)), int(self.rng.integers(1, 3))
            d = 1 if same else int(self.rng.integers(1, 3))
            ek = (k - 1) * d + 1
            if same:     # ceil(i/s) = o, padding (o-1)*s + ek - i not negative
                i = int(self.rng.integers((o - 1) * s + 1, min(o * s, (o - 1) * s + ek) + 1))
                pb = pe = 0
            else:
                pb, pe = (0, 0) if auto else (int(self.rng.integers(0, ek)) for _ in range(2))
                i = (o - 1) * s + ek - pb - pe + int(self.rng.integers(0, s))
                if i < 1:
                    return None
            ks.append(k), st.append(s), dil.append(d), ins.append(i)
            pads[0].append(pb), pads[1].append(pe)
        x_shape, w_shape = [shape[0], cg * group] + ins, [m, cg] + ks
        if not (self.small(x_shape) and self.small(w_shape)):
            return None
        args = [self.float_expr(x_shape, depth), self.float_expr(w_shape, depth)]
        if self.chance(0.5):
            args.append(self.float_expr([m], depth))
        attrs = {'strides': st, 'dilations': dil}
        attrs.update({'auto_pad': auto} if auto else {'pads': pads[0] + pads[1]})
        if group > 1 or self.chance(0.3):
            attrs['group'] = group
        if self.chance(0.5):
            attrs['kernel_shape'] = ks
        return self.node('Conv', args, **attrs)

    def f_conv_transpose(self, shape, depth):
        """ConvTranspose to shape [N, M, spatial...]: groups, strides, dilations, explicit
        pads and output_padding chosen so that an input size gives exactly that shape."""
        m = shape[1]
        group = self.pick([g for g in (1, 2, 3) if m % g == 0])
        cg = int(self.rng.integers(1, 3))
        ks, st, dil, opads, pads, ins = [], [], [], [], [[], []], []
        for o in shape[2:]:
            k, s, d = (int(self.rng.integers(1, 4)), int(self.rng.integers(1, 3)),
                       int(self.rng.integers(1, 3)))
            ek, opad = (k - 1) * d + 1, int(self.rng.integers(0, s))
            total = (opad + ek - o) % s   # pads making (o - opad - ek + pads) / s whole
            if total > 2 * (ek - 1) or o - opad - ek + total < 0:
                return None
            pb = int(self.rng.integers(max(0, total - ek + 1), min(total, ek - 1) + 1))
            ins.append((o - opad - ek + total) // s + 1)
            ks.append(k), st.append(s), dil.append(d), opads.append(opad)
            pads[0].append(pb), pads[1].append(total - pb)
        x_shape, w_shape = [shape[0], cg * group] + ins, [cg * group, m // group] + ks
        if not (self.small(x_shape) and self.small(w_shape)):
            return None
        args = [self.float_expr(x_shape, depth), self.float_expr(w_shape, depth)]
        if self.chance(0.5):
            args.append(self.float_expr([m], depth))
        attrs = {'strides': st, 'dilations': dil, 'pads': pads[0] + pads[1]}
        if any(opads):
            attrs['output_padding'] = opads
        if group > 1 or self.chance(0.3):
            attrs['group'] = group
        return self.node('ConvTranspose', args, **attrs)

    def f_from_ints(self, shape, depth):
        return self.node('Cast', [self.int_expr(shape, depth)], to=self.dtype)

    # -- int64 expressions ---------------------------------------------------------
    def int_expr(self, shape, depth):
        """An int64 value of exactly shape."""
        forms = ['leaf', 'arith'] + (['range'] if len(shape) == 1 and self.opset >= 11 else [])
        forms += ['argmax'] if self.small(list(shape) + [4]) else []
        form = self.pick(forms) if depth > 0 else 'leaf'
        if form == 'leaf':
            return self.g.const(self.rng.integers(-9, 10, size=shape).astype(np.int64), 'init')
        if form == 'range':
            start, delta = int(self.rng.integers(-5, 6)), self.pick([1, 2, -1, -3])
            return self.node('Range', [self.g.const(np.array(v, np.int64), 'init') for v in
                                       (start, start + delta * shape[0], delta)])
        if form == 'argmax':
            k = int(self.rng.integers(2, 5))
            axis = int(self.rng.integers(0, len(shape) + 1))
            e = self.float_expr(list(shape[:axis]) + [k] + list(shape[axis:]), depth - 1)
            attrs = {'select_last_index': int(self.chance(0.5))} if self.opset >= 12 else {}
            return self.node(self.pick(['ArgMax', 'ArgMin']), [e], axis=axis, keepdims=0, **attrs)
        a, b = self.int_expr(shape, depth - 1), self.int_expr(shape, depth - 1)
        ops = ['Add', 'Sub', 'Mul', 'div'] + (['mod'] if self.opset >= 10 else [])
        op = self.pick(ops)
        if op in ('div', 'mod'):  # a divisor without 0: |b| + 1, maybe negated
            one = self.g.const(np.array(1, np.int64), 'init')
            b = self.node('Add', [self.node('Abs', [b]), one])
            if self.chance(0.4):
                b = self.node('Neg', [b])
            return self.node('Div', [a, b]) if op == 'div' else \
                self.node('Mod', [a, b], fmod=0)
        return self.node(op, [a, b])
