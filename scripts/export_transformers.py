#!/usr/bin/python3
"""Test networks exported the way users export them today: dynamic axes, torch's constant folding.

This module holds the specs (USER) that scripts/export_torchvision.py exports next to its
torchvision networks, and the small networks of our own they use, in plain torch (random
weights after torch.manual_seed; a few MB each):
  gpt2_tiny      GPT-2-style decoder: token + learned position embeddings, pre-LayerNorm blocks,
                 causal mask (a sliced lower-triangular buffer and torch.where), the tanh
                 approximation of GELU written out as GPT-2 does, the LM head tied to the token
                 embedding. input_ids [batch, seq] -> logits [batch, seq, vocab].
  bert_tiny      BERT-style encoder: word + position + token-type embeddings, post-LayerNorm
                 blocks, erf GELU (nn.GELU), the attention mask made additive
                 ((1 - mask) * finfo.min), a tanh pooler. input_ids, attention_mask
                 [batch, seq] -> last_hidden_state [batch, seq, 64], pooler_output [batch, 64].
  llama_tiny     LLaMA-style decoder: RMSNorm, SiLU-gated MLP, rotary position embeddings
                 (cos/sin caches sliced to the sequence, rotate_half), causal mask, no biases.
                 input_ids [batch, seq] -> logits [batch, seq, vocab].
  lstm_conv      Conv1d + BatchNorm1d + ReLU front end over [batch, 8, seq] features, a 2-layer
                 LSTM (batch_first), a Linear head: [batch, seq, 10]. The exporter folds this BN
                 into the Conv.
  gru_conv       Conv1d + ReLU + BatchNorm1d (a BN after the ReLU, which the exporter cannot
                 fold), a bidirectional GRU, a Linear head: [batch, seq, 10].
and newer torchvision networks (random weights, non-trivial BatchNorm statistics):
  swin_t, maxvit_t, efficientnet_v2_s   input [batch, 3, H, W] with a dynamic batch;
  ssdlite320_mobilenet_v3_large, fasterrcnn_mobilenet_v3_large_320_fpn   one image [3, H, W]
                 with dynamic height and width (the batch is the length of the image list, fixed
                 when tracing), outputs boxes, scores, labels whose first dim depends on the data.
                 Faster R-CNN gets box_score_thresh=0 so that random weights still give
                 detections to compare.

Each spec gives the example inputs the model is traced with, the input and output names, the
dynamic_axes, and test_sizes: sizes for the dynamic dims (different from the traced ones, so a
size frozen into the export shows) that the tests feed. The export is
    torch.onnx.export(model.eval(), args, path, opset_version=OPSET, do_constant_folding=True,
                      input_names=..., output_names=..., dynamic_axes=...)
(training mode EVAL, torch's default: the exporter folds a BatchNormalization that directly
follows a Conv). Exported at opsets 14 and 17 by default (DEFAULT_OPSETS).
"""
import math

DEFAULT_OPSETS = (14, 17)
VOCAB = 1000


def _nn():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    return torch, nn, F


def gpt2_tiny(d=64, heads=4, layers=2, max_pos=128):
    torch, nn, F = _nn()

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.register_buffer('bias', torch.tril(torch.ones(max_pos, max_pos, dtype=torch.bool))
                                 .view(1, 1, max_pos, max_pos))

        def forward(self, x):
            b, t, _ = x.size()
            q, k, v = self.c_attn(x).split(d, dim=2)
            q, k, v = (y.view(b, t, heads, d // heads).transpose(1, 2) for y in (q, k, v))
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // heads)
            causal = self.bias[:, :, :t, :t]
            w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min))
            y = torch.matmul(F.softmax(w, dim=-1), v)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(d, 4 * d)
            self.c_proj = nn.Linear(4 * d, d)

        def forward(self, x):
            h = self.c_fc(x)   # GPT-2's "gelu_new": the tanh approximation, written out
            h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                            (h + 0.044715 * torch.pow(h, 3.0))))
            return self.c_proj(h)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(d), Attention()
            self.ln_2, self.mlp = nn.LayerNorm(d), Mlp()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class Gpt2(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, d), nn.Embedding(max_pos, d)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, VOCAB, bias=False)
            self.lm_head.weight = self.wte.weight     # tied

        def forward(self, input_ids):
            pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
            x = self.wte(input_ids) + self.wpe(pos)
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))
    return Gpt2()


def bert_tiny(d=64, heads=4, layers=2, max_pos=128, inter=128):
    torch, nn, F = _nn()

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.out, self.ln1 = nn.Linear(d, d), nn.LayerNorm(d, eps=1e-12)
            self.inter, self.gelu = nn.Linear(d, inter), nn.GELU()
            self.out2, self.ln2 = nn.Linear(inter, d), nn.LayerNorm(d, eps=1e-12)

        def forward(self, x, mask):
            b, t, _ = x.size()
            q, k, v = (m(x).view(b, t, heads, d // heads).permute(0, 2, 1, 3)
                       for m in (self.q, self.k, self.v))
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // heads) + mask
            y = torch.matmul(F.softmax(w, dim=-1), v).permute(0, 2, 1, 3).reshape(b, t, d)
            x = self.ln1(x + self.out(y))
            return self.ln2(x + self.out2(self.gelu(self.inter(x))))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word, self.pos = nn.Embedding(VOCAB, d), nn.Embedding(max_pos, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm(d, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.pool = nn.Linear(d, d)

        def forward(self, input_ids, attention_mask):
            t = input_ids.size(1)
            pos = torch.arange(t, dtype=torch.long).unsqueeze(0)
            x = self.ln(self.word(input_ids) + self.pos(pos) +
                        self.token_type(torch.zeros_like(input_ids)))
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
            for layer in self.layers:
                x = layer(x, mask)
            return x, torch.tanh(self.pool(x[:, 0]))
    return Bert()


def llama_tiny(d=64, heads=4, layers=2, max_pos=128, inter=172, eps=1e-6):
    torch, nn, F = _nn()
    hd = d // heads

    class RmsNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

        def forward(self, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return self.weight * (x * torch.rsqrt(var + eps))

    def rotate_half(x):
        return torch.cat((-x[..., hd // 2:], x[..., :hd // 2]), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj, self.k_proj = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
            self.v_proj, self.o_proj = nn.Linear(d, d, bias=False), nn.Linear(d, d, bias=False)
            inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
            freqs = torch.outer(torch.arange(max_pos).float(), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer('cos_cached', emb.cos())
            self.register_buffer('sin_cached', emb.sin())

        def forward(self, x, causal):
            b, t, _ = x.size()
            q, k, v = (m(x).view(b, t, heads, hd).transpose(1, 2)
                       for m in (self.q_proj, self.k_proj, self.v_proj))
            cos, sin = self.cos_cached[:t], self.sin_cached[:t]
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd) + causal
            y = torch.matmul(F.softmax(w, dim=-1, dtype=torch.float32), v)
            return self.o_proj(y.transpose(1, 2).reshape(b, t, d))

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(d, inter, bias=False)
            self.up_proj = nn.Linear(d, inter, bias=False)
            self.down_proj = nn.Linear(inter, d, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm, self.self_attn = RmsNorm(), Attention()
            self.post_attention_layernorm, self.mlp = RmsNorm(), Mlp()

        def forward(self, x, causal):
            x = x + self.self_attn(self.input_layernorm(x), causal)
            return x + self.mlp(self.post_attention_layernorm(x))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(VOCAB, d)
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.norm = RmsNorm()
            self.lm_head = nn.Linear(d, VOCAB, bias=False)

        def forward(self, input_ids):
            t = input_ids.size(1)
            x = self.embed_tokens(input_ids)
            causal = torch.full((t, t), torch.finfo(x.dtype).min).triu(1)[None, None]
            for layer in self.layers:
                x = layer(x, causal)
            return self.lm_head(self.norm(x))
    return Llama()


def recurrent_conv(kind, feat=8, ch=32, hidden=48, classes=10):
    """lstm: Conv1d -> BN -> ReLU -> 2-layer LSTM; gru: Conv1d -> ReLU -> BN -> bidirectional GRU."""
    torch, nn, F = _nn()

    class RecurrentConv(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(feat, ch, 3, padding=1)
            self.bn = nn.BatchNorm1d(ch)
            if kind == 'lstm':
                self.rnn = nn.LSTM(ch, hidden, num_layers=2, batch_first=True)
                self.head = nn.Linear(hidden, classes)
            else:
                self.rnn = nn.GRU(ch, hidden, batch_first=True, bidirectional=True)
                self.head = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            if kind == 'lstm':
                y = F.relu(self.bn(self.conv(x)))
            else:
                y = self.bn(F.relu(self.conv(x)))
            y, _ = self.rnn(y.transpose(1, 2))
            return self.head(y)
    return RecurrentConv()


def _tokens(batch, seq, seed):
    import torch
    return torch.randint(0, VOCAB, (batch, seq), generator=torch.Generator().manual_seed(seed))


def _text_args(with_mask):
    def make(seed):
        import torch
        ids = _tokens(2, 8, seed)
        if not with_mask:
            return (ids,)
        mask = torch.ones(2, 8, dtype=torch.long)
        mask[1, 6:] = 0
        return (ids, mask)
    return make


def _features(seed):
    import torch
    return (torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(seed)),)


def _image(shape):
    def make(seed):
        import torch
        return (torch.randn(*shape, generator=torch.Generator().manual_seed(seed)),)
    return make


def _image_list(shape):
    def make(seed):
        import torch
        return ([torch.rand(*shape, generator=torch.Generator().manual_seed(seed))],)
    return make


def _torchvision(name, **kwargs):
    def make():
        import torchvision.models as tvm
        import torchvision.models.detection as det
        return getattr(det if hasattr(det, name) else tvm, name)(weights=None, **kwargs)
    return make


def _spec(build, args, inputs, outputs, axes, sizes):
    return {'build': build, 'args': args, 'inputs': inputs, 'outputs': outputs,
            'dynamic_axes': axes, 'test_sizes': sizes}


_TEXT = {0: 'batch', 1: 'seq'}
_BATCH = {0: 'batch'}
_DETECT_OUT = {'boxes': {0: 'detections'}, 'scores': {0: 'detections'},
               'labels': {0: 'detections'}}

# name -> spec; the names the tests use (tests/test_models.py USER_MODELS).
USER = {
    'gpt2_tiny': _spec(gpt2_tiny, _text_args(False), ['input_ids'], ['logits'],
                       {'input_ids': _TEXT, 'logits': _TEXT}, {'batch': 3, 'seq': 5}),
    'bert_tiny': _spec(bert_tiny, _text_args(True), ['input_ids', 'attention_mask'],
                       ['last_hidden_state', 'pooler_output'],
                       {'input_ids': _TEXT, 'attention_mask': _TEXT, 'last_hidden_state': _TEXT,
                        'pooler_output': _BATCH}, {'batch': 3, 'seq': 5}),
    'llama_tiny': _spec(llama_tiny, _text_args(False), ['input_ids'], ['logits'],
                        {'input_ids': _TEXT, 'logits': _TEXT}, {'batch': 3, 'seq': 5}),
    'lstm_conv': _spec(lambda: recurrent_conv('lstm'), _features, ['features'], ['output'],
                       {'features': {0: 'batch', 2: 'seq'}, 'output': _TEXT},
                       {'batch': 3, 'seq': 11}),
    'gru_conv': _spec(lambda: recurrent_conv('gru'), _features, ['features'], ['output'],
                      {'features': {0: 'batch', 2: 'seq'}, 'output': _TEXT},
                      {'batch': 3, 'seq': 11}),
    'swin_t': _spec(_torchvision('swin_t'), _image((1, 3, 64, 64)), ['input'], ['output'],
                    {'input': _BATCH, 'output': _BATCH}, {'batch': 2}),
    # the partition size (7) must divide the grid of every stage: 224 is the smallest input
    'maxvit_t': _spec(_torchvision('maxvit_t'), _image((1, 3, 224, 224)), ['input'], ['output'],
                      {'input': _BATCH, 'output': _BATCH}, {'batch': 2}),
    'efficientnet_v2_s': _spec(_torchvision('efficientnet_v2_s'), _image((1, 3, 64, 64)),
                               ['input'], ['output'], {'input': _BATCH, 'output': _BATCH},
                               {'batch': 2}),
    'ssdlite320_mobilenet_v3_large': _spec(
        _torchvision('ssdlite320_mobilenet_v3_large', weights_backbone=None),
        _image_list((3, 320, 320)), ['images'], ['boxes', 'scores', 'labels'],
        dict(_DETECT_OUT, images={1: 'height', 2: 'width'}), {'height': 300, 'width': 256}),
    'fasterrcnn_mobilenet_v3_large_320_fpn': _spec(
        _torchvision('fasterrcnn_mobilenet_v3_large_320_fpn', weights_backbone=None,
                     box_score_thresh=0.0),
        _image_list((3, 320, 320)), ['images'], ['boxes', 'scores', 'labels'],
        dict(_DETECT_OUT, images={1: 'height', 2: 'width'}), {'height': 300, 'width': 256}),
}


def build(name, seed=0):
    """(model in eval mode, example args): weights after torch.manual_seed(seed), every BatchNorm
    with non-trivial statistics (export_torchvision.randomize_bn)."""
    import torch
    from export_torchvision import randomize_bn
    spec = USER[name]
    torch.manual_seed(seed)
    model = spec['build']()
    randomize_bn(model, seed)
    model.eval()
    return model, spec['args'](seed + 1)


def export(name, opset, path):
    """Export USER[name] to path as users do (see the module docstring). Returns the record
    fields: input names with their symbolic shapes, and the sizes the tests feed."""
    import torch
    spec = USER[name]
    model, args = build(name)
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=opset, do_constant_folding=True,
                          input_names=spec['inputs'], output_names=spec['outputs'],
                          dynamic_axes=spec['dynamic_axes'])
    flat = args[0] if isinstance(args[0], list) else args
    shapes = {}
    for n, x in zip(spec['inputs'], flat):
        axes = spec['dynamic_axes'].get(n, {})
        shapes[n] = [axes.get(k, s) for k, s in enumerate(x.shape)]
    return {'inputs': shapes, 'test_sizes': spec['test_sizes'],
            'bn_layers': sum(isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                             for m in model.modules())}
