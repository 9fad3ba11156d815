#!/usr/bin/python3
"""A LLaMA-3-8B-shaped decoder written directly with onnx.helper (no torch), for make bench-peers.

Usage: scripts/make_llm.py OUTDIR [--size 16g|2g|tiny] [--seed N]

Writes OUTDIR/model.onnx and OUTDIR/weights.bin (every initializer external, in that one
file, each at a multiple of 64 bytes), opset 17, float16 weights:
  input_ids [batch, seq] int64 -> logits [batch, seq, vocab] float16
  Gather embedding; per layer: RMSNorm decomposed as exporters write it (Cast to float,
  Pow 2, ReduceMean, Add eps, Sqrt, Div, Cast back, Mul weight), q/k/v MatMuls, Reshape +
  Transpose to heads, rotary embeddings (cos/sin caches Sliced to the sequence length taken
  from Shape(input_ids); rotate_half as Slice/Neg/Concat; Mul/Add), grouped-query attention
  (K/V Unsqueeze, Expand to the query heads, Reshape), scaled QK^T, causal mask Sliced from
  a constant, Softmax in float, o-projection, residual Add; SiLU-gated MLP
  (gate/up/down MatMuls, Sigmoid, Mul), residual Add; final RMSNorm and LM head.
Sizes:
  16g   32 layers, hidden 4096, 32 heads / 8 KV heads, intermediate 14336, vocab 128256
        (LLaMA-3-8B's shapes): 16.06 GB of weights
  2g    the same layer shapes, 4 layers, vocab 16000: 2.0 GB
  tiny  2 layers, hidden 64, 4 / 2 heads, intermediate 160, vocab 100 (a smoke test)
The weights are random bytes, streamed into weights.bin chunk by chunk (memory stays flat
whatever the size): each float16 keeps its random sign and mantissa, its exponent is set so
that |w| is in [1/128, 1/64) (norm weights: [1, 2)), so that the 32 layers stay finite and
onnxruntime's outputs can be compared. model.onnx holds only offsets. Cached: a folder whose
manifest.txt names this script's hash and the size is reused.
"""
import argparse
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

SIZES = {
    '16g': dict(layers=32, hidden=4096, heads=32, kv_heads=8, inter=14336, vocab=128256),
    '2g': dict(layers=4, hidden=4096, heads=32, kv_heads=8, inter=14336, vocab=16000),
    'tiny': dict(layers=2, hidden=64, heads=4, kv_heads=2, inter=160, vocab=100),
}
MAX_POS = 2048
EPS = 1e-5
CHUNK = 32 << 20  # bytes of weights generated and written at a time
F16 = TensorProto.FLOAT16


def script_hash():
    with open(os.path.abspath(__file__), 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


class Weights:
    """Appends tensors to one data file, chunk by chunk, and makes their TensorProtos."""

    def __init__(self, path, seed):
        self.f = open(path, 'wb')
        self.loc = os.path.basename(path)
        self.off = 0
        self.rng = np.random.default_rng(seed)
        self.inits = []

    def _tensor(self, name, dtype, dims, nbytes):
        t = TensorProto(name=name, data_type=dtype, dims=dims)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (('location', self.loc), ('offset', str(self.off)), ('length', str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.inits.append(t)

    def _align(self):
        pad = -self.off % 64
        if pad:
            self.f.write(b'\0' * pad)
            self.off += pad

    def random_f16(self, name, dims, exponent):
        """float16 with random sign and mantissa and the given biased exponent."""
        self._align()
        n = int(np.prod(dims))
        self._tensor(name, F16, dims, 2 * n)
        left = n
        while left:
            k = min(left, CHUNK // 2)
            r = self.rng.integers(0, 1 << 16, size=k, dtype=np.uint16)
            r &= np.uint16(0x83FF)
            r |= np.uint16(exponent << 10)
            self.f.write(r.tobytes())
            left -= k
        self.off += 2 * n

    def array(self, name, a, dtype):
        self._align()
        b = np.ascontiguousarray(a).tobytes()
        self._tensor(name, dtype, list(a.shape), len(b))
        self.f.write(b)
        self.off += len(b)

    def close(self):
        self.f.close()


def build(outdir, cfg, seed=0):
    L, H, NH, KV, I, V = (cfg[k] for k in ('layers', 'hidden', 'heads', 'kv_heads', 'inter', 'vocab'))
    D = H // NH
    os.makedirs(outdir, exist_ok=True)
    tmp_data = os.path.join(outdir, 'weights.bin')
    w = Weights(tmp_data, seed)
    nodes = []
    consts = []

    def node(op, ins, outs=None, name=None, **attrs):
        name = name or '%s_%d' % (op.lower(), len(nodes))
        outs = outs or [name + '_out']
        nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def i64(name, vals):
        consts.append(helper.make_tensor(name, TensorProto.INT64, [len(vals)], vals))
        return name

    def scalar(name, dtype, v):
        consts.append(helper.make_tensor(name, dtype, [], [v]))
        return name

    # shared constants, written inline like an exporter's small ones
    two = scalar('pow_two', TensorProto.FLOAT, 2.0)
    eps = scalar('rms_eps', TensorProto.FLOAT, EPS)
    scale = scalar('attn_scale', F16, float(np.sqrt(D)))
    zero = i64('zero_1', [0])
    one = i64('one_1', [1])
    half = i64('half_dim', [D // 2])
    big = i64('int_max', [2 ** 62])
    last = i64('axis_last', [-1])
    q_shape = i64('q_shape', [0, 0, NH, D])
    kv_shape = i64('kv_shape', [0, 0, KV, D])
    rep = i64('kv_repeat', [1, 1, NH // KV, 1, 1])
    gqa_shape = i64('gqa_shape', [0, NH, -1, D])
    o_shape = i64('o_shape', [0, 0, H])
    ax01 = i64('axes_01', [0, 1])

    # rotary caches and causal mask: small, random-free
    inv = 1.0 / (500000.0 ** (np.arange(0, D, 2, dtype=np.float64) / D))
    freqs = np.outer(np.arange(MAX_POS, dtype=np.float64), inv)
    emb = np.concatenate([freqs, freqs], axis=-1)
    w.array('rope_cos', np.cos(emb).astype(np.float16), F16)
    w.array('rope_sin', np.sin(emb).astype(np.float16), F16)
    mask = np.triu(np.full((MAX_POS, MAX_POS), -65504.0, dtype=np.float16), 1)
    w.array('causal_mask', mask, F16)

    # sequence length from the input, as exports compute it
    shp = node('Shape', ['input_ids'], name='ids_shape')
    seq = node('Gather', [shp, one], name='seq_len', axis=0)
    cos = node('Slice', ['rope_cos', zero, seq, zero], name='cos_slice')
    sin = node('Slice', ['rope_sin', zero, seq, zero], name='sin_slice')
    seq2 = node('Concat', [seq, seq], name='mask_ends', axis=0)
    msk = node('Slice', ['causal_mask', i64('zero_2', [0, 0]), seq2, ax01], name='mask_slice')

    w.random_f16('embed_tokens', [V, H], 8)
    x = node('Gather', ['embed_tokens', 'input_ids'], name='embed', axis=0)

    def rmsnorm(x, pre):
        w.random_f16(pre + '.weight', [H], 15)
        xf = node('Cast', [x], name=pre + '.cast_in', to=TensorProto.FLOAT)
        p = node('Pow', [xf, two], name=pre + '.pow')
        m = node('ReduceMean', [p], name=pre + '.mean', axes=[-1], keepdims=1)
        a = node('Add', [m, eps], name=pre + '.add_eps')
        s = node('Sqrt', [a], name=pre + '.sqrt')
        d = node('Div', [xf, s], name=pre + '.div')
        c = node('Cast', [d], name=pre + '.cast_out', to=F16)
        return node('Mul', [c, pre + '.weight'], name=pre + '.mul')

    def rotary(t, pre):
        a = node('Slice', [t, zero, half, last], name=pre + '.slice1')
        b = node('Slice', [t, half, big, last], name=pre + '.slice2')
        nb = node('Neg', [b], name=pre + '.neg')
        r = node('Concat', [nb, a], name=pre + '.rot', axis=-1)
        return node('Add', [node('Mul', [t, cos], name=pre + '.mul_cos'),
                            node('Mul', [r, sin], name=pre + '.mul_sin')], name=pre + '.add')

    for li in range(L):
        p = 'layers.%d' % li
        n = rmsnorm(x, p + '.input_norm')
        for proj, cols in (('q', H), ('k', KV * D), ('v', KV * D)):
            w.random_f16('%s.%s_proj' % (p, proj), [H, cols], 8)
        q = node('MatMul', [n, p + '.q_proj'], name=p + '.q')
        k = node('MatMul', [n, p + '.k_proj'], name=p + '.k')
        v = node('MatMul', [n, p + '.v_proj'], name=p + '.v')
        q = node('Transpose', [node('Reshape', [q, q_shape], name=p + '.q_heads')], name=p + '.q_t',
                 perm=[0, 2, 1, 3])
        k = node('Transpose', [node('Reshape', [k, kv_shape], name=p + '.k_heads')], name=p + '.k_t',
                 perm=[0, 2, 1, 3])
        v = node('Transpose', [node('Reshape', [v, kv_shape], name=p + '.v_heads')], name=p + '.v_t',
                 perm=[0, 2, 1, 3])
        q = rotary(q, p + '.q_rope')
        k = rotary(k, p + '.k_rope')
        # grouped-query attention: each KV head serves NH/KV query heads
        def repeat(t, what):
            u = node('Unsqueeze', [t, i64('%s.%s_unsq_axes' % (p, what), [2])], name='%s.%s_unsq' % (p, what))
            e = node('Expand', [u, rep], name='%s.%s_expand' % (p, what))
            return node('Reshape', [e, gqa_shape], name='%s.%s_gqa' % (p, what))
        k = repeat(k, 'k')
        v = repeat(v, 'v')
        kt = node('Transpose', [k], name=p + '.k_tt', perm=[0, 1, 3, 2])
        s = node('Div', [node('MatMul', [q, kt], name=p + '.qk'), scale], name=p + '.scale')
        s = node('Add', [s, msk], name=p + '.mask')
        sf = node('Cast', [s], name=p + '.softmax_in', to=TensorProto.FLOAT)
        pr = node('Cast', [node('Softmax', [sf], name=p + '.softmax', axis=-1)], name=p + '.softmax_out',
                  to=F16)
        o = node('MatMul', [pr, v], name=p + '.pv')
        o = node('Reshape', [node('Transpose', [o], name=p + '.o_t', perm=[0, 2, 1, 3]), o_shape],
                 name=p + '.o_merge')
        w.random_f16(p + '.o_proj', [H, H], 8)
        x = node('Add', [x, node('MatMul', [o, p + '.o_proj'], name=p + '.o')], name=p + '.attn_residual')
        n = rmsnorm(x, p + '.post_norm')
        w.random_f16(p + '.gate_proj', [H, I], 8)
        w.random_f16(p + '.up_proj', [H, I], 8)
        w.random_f16(p + '.down_proj', [I, H], 8)
        g = node('MatMul', [n, p + '.gate_proj'], name=p + '.gate')
        g = node('Mul', [g, node('Sigmoid', [g], name=p + '.sigmoid')], name=p + '.silu')
        u = node('MatMul', [n, p + '.up_proj'], name=p + '.up')
        d = node('MatMul', [node('Mul', [g, u], name=p + '.gated'), p + '.down_proj'], name=p + '.down')
        x = node('Add', [x, d], name=p + '.mlp_residual')

    n = rmsnorm(x, 'norm')
    w.random_f16('lm_head', [H, V], 8)
    node('MatMul', [n, 'lm_head'], ['logits'], name='lm_head_matmul')
    w.close()

    graph = helper.make_graph(
        nodes, 'llama_shaped',
        [helper.make_tensor_value_info('input_ids', TensorProto.INT64, ['batch', 'seq'])],
        [helper.make_tensor_value_info('logits', F16, ['batch', 'seq', V])],
        initializer=consts + w.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)],
                              producer_name='make_llm.py')
    model.ir_version = 8
    tmp = os.path.join(outdir, '.model.onnx.tmp')
    with open(tmp, 'wb') as f:
        f.write(model.SerializeToString())
    os.replace(tmp, os.path.join(outdir, 'model.onnx'))
    return w.off


def ensure(outdir, size, log=print):
    tag = '%s %s\n' % (script_hash(), size)
    man = os.path.join(outdir, 'manifest.txt')
    if os.path.exists(man) and open(man).read() == tag and os.path.exists(os.path.join(outdir, 'model.onnx')):
        log('cached %s' % outdir)
        return
    if os.path.exists(man):
        os.unlink(man)
    nbytes = build(outdir, SIZES[size])
    with open(man, 'w') as f:
        f.write(tag)
    log('made %s (%.2f GB of weights)' % (outdir, nbytes / 1e9))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('outdir')
    ap.add_argument('--size', choices=sorted(SIZES), default='2g')
    a = ap.parse_args()
    ensure(a.outdir, a.size)


if __name__ == '__main__':
    sys.exit(main())
