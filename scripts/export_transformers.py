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
  whisper_tiny   Whisper-style encoder-decoder: a Conv1d + GELU, Conv1d (stride 2) + GELU front
                 end over features [batch, 8, frames], sinusoidal positions computed from the
                 (dynamic) length, pre-LayerNorm encoder blocks; a decoder over decoder_ids
                 [batch, tokens] with learned positions, causal self-attention (a -inf triu
                 buffer sliced to the tokens), cross-attention to the encoder, the output
                 projection tied to the token embedding -> logits [batch, tokens, vocab].
  torch_encoder  torch's own nn.TransformerEncoder (batch_first, 2 post-norm ReLU layers, a
                 final LayerNorm) and one nn.TransformerEncoderLayer(norm_first=True, GELU), with
                 the boolean src_key_padding_mask an input: input_ids, padding_mask
                 [batch, seq] -> [batch, seq, 10]. torch 1.13 exports it only as users do:
                 enable_nested_tensor=False (its nested-tensor check calls aten::logical_not)
                 and autograd on (spec 'grad': under no_grad the layers take the fast path,
                 aten::_transformer_encoder_layer_fwd, which the exporter lacks).
  crnn           CRNN text-line recognizer: Conv2d + BatchNorm2d + ReLU stages (max-pooling
                 the height 32 to 1, the width by 4), a bidirectional LSTM over the width, a
                 Linear head, log_softmax: image [batch, 1, 32, width] -> [batch, width/4, 20].
and newer torchvision networks (random weights, non-trivial BatchNorm statistics):
  swin_t, maxvit_t, efficientnet_v2_s   input [batch, 3, H, W] with a dynamic batch;
  ssdlite320_mobilenet_v3_large, fasterrcnn_mobilenet_v3_large_320_fpn   one image [3, H, W]
                 with dynamic height and width (the batch is the length of the image list, fixed
                 when tracing), outputs boxes, scores, labels whose first dim depends on the data.
                 Faster R-CNN gets box_score_thresh=0 so that random weights still give
                 detections to compare.
  s3d (video, [batch, 3, 16, 224, 224]: its last pooling is 2x7x7), inception_v3, googlenet
                 dynamic batch;
  lraspp_mobilenet_v3_large   segmentation (the 'out' tensor), dynamic batch, height, width;
  raft_small     optical flow between image1 and image2 [batch, 3, H, W] (H, W multiples of 8,
                 all three dynamic), 3 refinements, the last flow [batch, 2, H, W] exported;
                 grid_sample needs opset 16: its opset-14 export is a skip, and the opset-17
                 one is invalid (torch writes corr / sqrt(tensor(channels)) as Sqrt of an int64:
                 tests/test_models.py EXPORT_FAULTS); raft_small_static: the same, static 64x64;
  fcos_resnet50_fpn, retinanet_resnet50_fpn, maskrcnn_resnet50_fpn (+ masks [detections, 1,
                 H, W])   detection like the two above (one image, min_size = max_size = 256,
                 score thresholds 0, Mask R-CNN at most 20 detections).
swin_v2_t is not here: torch 1.13 exports it at no opset (its attention zeroes a slice of the
qkv bias in place, aten::zero_, which the exporter lacks); mvit_v2_s takes over 3 minutes to
export.

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


def sinusoids(length, channels):
    """Whisper's sinusoidal positions, computed from the (dynamic) length: [length, channels],
    sin in the first half, cos in the second."""
    torch, nn, F = _nn()
    inc = math.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-inc * torch.arange(channels // 2, dtype=torch.float32))
    t = torch.arange(length, dtype=torch.float32)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


def whisper_tiny(d=64, heads=4, enc_layers=2, dec_layers=2, feat=8, max_tok=64):
    torch, nn, F = _nn()
    hd = d // heads

    class Attention(nn.Module):
        """Self-attention (kv is x) or cross-attention (kv is the encoder's output); the key
        projection has no bias, as in Whisper."""
        def __init__(self):
            super().__init__()
            self.query, self.key = nn.Linear(d, d), nn.Linear(d, d, bias=False)
            self.value, self.out = nn.Linear(d, d), nn.Linear(d, d)

        def forward(self, x, kv, mask=None):
            b, t, _ = x.shape
            s = kv.shape[1]
            q = self.query(x).view(b, t, heads, hd).transpose(1, 2)
            k = self.key(kv).view(b, s, heads, hd).transpose(1, 2)
            v = self.value(kv).view(b, s, heads, hd).transpose(1, 2)
            w = torch.matmul(q, k.transpose(-1, -2)) * hd ** -0.5
            if mask is not None:
                w = w + mask[:t, :t]
            y = torch.matmul(F.softmax(w, dim=-1), v)
            return self.out(y.transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self, cross):
            super().__init__()
            self.attn_ln, self.attn = nn.LayerNorm(d), Attention()
            self.cross_ln = nn.LayerNorm(d) if cross else None
            self.cross = Attention() if cross else None
            self.mlp_ln = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x, enc=None, mask=None):
            h = self.attn_ln(x)
            x = x + self.attn(h, h, mask)
            if self.cross is not None:
                x = x + self.cross(self.cross_ln(x), enc)
            return x + self.mlp(self.mlp_ln(x))

    class Whisper(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(feat, d, 3, padding=1)
            self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
            self.enc = nn.ModuleList(Block(False) for _ in range(enc_layers))
            self.enc_ln = nn.LayerNorm(d)
            self.token_embedding = nn.Embedding(VOCAB, d)
            self.positional_embedding = nn.Parameter(0.02 * torch.randn(max_tok, d))
            self.dec = nn.ModuleList(Block(True) for _ in range(dec_layers))
            self.dec_ln = nn.LayerNorm(d)
            self.register_buffer('mask', torch.empty(max_tok, max_tok).fill_(-math.inf).triu_(1))

        def forward(self, features, decoder_ids):
            x = F.gelu(self.conv1(features))
            x = F.gelu(self.conv2(x)).permute(0, 2, 1)
            x = x + sinusoids(x.shape[1], d)
            for block in self.enc:
                x = block(x)
            enc = self.enc_ln(x)
            t = decoder_ids.shape[1]
            y = self.token_embedding(decoder_ids) + self.positional_embedding[:t]
            for block in self.dec:
                y = block(y, enc, self.mask)
            # the output projection is the token embedding, transposed (tied)
            return torch.matmul(self.dec_ln(y), self.token_embedding.weight.t())
    return Whisper()


def torch_encoder(d=64, heads=4, layers=2, ff=128, classes=10, max_pos=128):
    """nn.TransformerEncoder as users write it, then a pre-norm (norm_first) GELU layer."""
    torch, nn, F = _nn()

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, d)
            self.register_buffer('pos', sinusoids(max_pos, d))
            layer = nn.TransformerEncoderLayer(d, heads, ff, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
            self.pre_norm = nn.TransformerEncoderLayer(d, heads, ff, activation='gelu',
                                                       batch_first=True, norm_first=True)
            self.head = nn.Linear(d, classes)

        def forward(self, input_ids, padding_mask):
            x = self.embed(input_ids) * math.sqrt(d) + self.pos[:input_ids.shape[1]]
            x = self.encoder(x, src_key_padding_mask=padding_mask)
            x = self.pre_norm(x, src_key_padding_mask=padding_mask)
            return self.head(x)
    return Encoder()


def crnn(height=32, ch=(16, 32, 48), hidden=32, classes=20):
    """CRNN for text lines: Conv2d+BN+ReLU stages pooling the height to 1 (the width by 4), a
    bidirectional LSTM over the width, a Linear head, log_softmax (for CTC)."""
    torch, nn, F = _nn()

    def stage(cin, cout, pool, kernel=3, padding=1):
        layers = [nn.Conv2d(cin, cout, kernel, padding=padding), nn.BatchNorm2d(cout),
                  nn.ReLU(inplace=True)]
        return layers + ([nn.MaxPool2d(pool, pool)] if pool else [])

    class Crnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.cnn = nn.Sequential(*stage(1, ch[0], 2), *stage(ch[0], ch[1], 2),
                                     *stage(ch[1], ch[2], (2, 1)),
                                     *stage(ch[2], ch[2], None, (height // 8, 1), 0))
            self.rnn = nn.LSTM(ch[2], hidden, batch_first=True, bidirectional=True)
            self.head = nn.Linear(2 * hidden, classes)

        def forward(self, x):
            y = self.cnn(x).squeeze(2).permute(0, 2, 1)     # [batch, width / 4, channels]
            y, _ = self.rnn(y)
            return F.log_softmax(self.head(y), dim=-1)
    return Crnn()


def last_flow(inner, updates=3):
    """RAFT returns the flow of every refinement; users export the last one (fewer updates)."""
    torch, nn, F = _nn()

    class LastFlow(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, image1, image2):
            return self.inner(image1, image2, num_flow_updates=updates)[-1]
    return LastFlow()


def out_only(inner):
    """Segmentation models return a dict: export its 'out' tensor."""
    from export_torchvision import _out_only
    return _out_only(inner)

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



def _speech(seed):
    import torch
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(2, 8, 20, generator=g), _tokens(2, 6, seed))


def _padded_tokens(seed):
    import torch
    mask = torch.zeros(2, 8, dtype=torch.bool)   # True: a padding position
    mask[1, 6:] = True
    return (_tokens(2, 8, seed), mask)


def _images(n, shape):
    def make(seed):
        import torch
        g = torch.Generator().manual_seed(seed)
        return tuple(torch.randn(*shape, generator=g) for _ in range(n))
    return make

def _image(shape):
    return _images(1, shape)


def _image_list(shape):
    def make(seed):
        import torch
        return ([torch.rand(*shape, generator=torch.Generator().manual_seed(seed))],)
    return make


def _torchvision(name, wrap=None, **kwargs):
    def make():
        import torchvision.models as tvm
        model = tvm.get_model_builder(name)(weights=None, **kwargs)
        return wrap(model) if wrap else model
    return make

def _spec(build, args, inputs, outputs, axes, sizes, **more):
    return dict({'build': build, 'args': args, 'inputs': inputs, 'outputs': outputs,
                 'dynamic_axes': axes, 'test_sizes': sizes}, **more)


_TEXT = {0: 'batch', 1: 'seq'}
_BATCH = {0: 'batch'}
_TOKENS = {0: 'batch', 1: 'tokens'}
_IMAGES = {0: 'batch', 2: 'height', 3: 'width'}
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
    'whisper_tiny': _spec(whisper_tiny, _speech, ['features', 'decoder_ids'], ['logits'],
                          {'features': {0: 'batch', 2: 'frames'}, 'decoder_ids': _TOKENS,
                           'logits': _TOKENS}, {'batch': 3, 'frames': 26, 'tokens': 5}),
    'torch_encoder': _spec(torch_encoder, _padded_tokens, ['input_ids', 'padding_mask'],
                           ['output'], {'input_ids': _TEXT, 'padding_mask': _TEXT,
                                        'output': _TEXT}, {'batch': 3, 'seq': 5}, grad=True),
    'crnn': _spec(crnn, _image((2, 1, 32, 64)), ['image'], ['log_probs'],
                  {'image': {0: 'batch', 3: 'width'}, 'log_probs': {0: 'batch', 1: 'steps'}},
                  {'batch': 3, 'width': 100}),
    # 8 divides height and width; grid_sample needs opset 16
    'raft_small': _spec(_torchvision('raft_small', wrap=last_flow), _images(2, (1, 3, 64, 64)),
                        ['image1', 'image2'], ['flow'],
                        {'image1': _IMAGES, 'image2': _IMAGES, 'flow': _IMAGES},
                        {'batch': 2, 'height': 72, 'width': 80}),
    'raft_small_static': _spec(_torchvision('raft_small', wrap=last_flow),
                               _images(2, (1, 3, 64, 64)), ['image1', 'image2'], ['flow'], {}, {}),
    'lraspp_mobilenet_v3_large': _spec(
        _torchvision('lraspp_mobilenet_v3_large', wrap=out_only, weights_backbone=None),
        _image((1, 3, 96, 96)), ['input'], ['output'], {'input': _IMAGES, 'output': _IMAGES},
        {'batch': 2, 'height': 64, 'width': 80}),
    'fcos_resnet50_fpn': _spec(
        _torchvision('fcos_resnet50_fpn', weights_backbone=None, min_size=256, max_size=256,
                     score_thresh=0.0),
        _image_list((3, 256, 256)), ['images'], ['boxes', 'scores', 'labels'],
        dict(_DETECT_OUT, images={1: 'height', 2: 'width'}), {'height': 240, 'width': 200}),
    'retinanet_resnet50_fpn': _spec(
        _torchvision('retinanet_resnet50_fpn', weights_backbone=None, min_size=256, max_size=256,
                     score_thresh=0.0),
        _image_list((3, 256, 256)), ['images'], ['boxes', 'scores', 'labels'],
        dict(_DETECT_OUT, images={1: 'height', 2: 'width'}), {'height': 240, 'width': 200}),
    'maskrcnn_resnet50_fpn': _spec(
        _torchvision('maskrcnn_resnet50_fpn', weights_backbone=None, min_size=256, max_size=256,
                     box_score_thresh=0.0, box_detections_per_img=20),
        _image_list((3, 256, 256)), ['images'], ['boxes', 'scores', 'labels', 'masks'],
        dict(_DETECT_OUT, masks={0: 'detections'}, images={1: 'height', 2: 'width'}),
        {'height': 240, 'width': 200}),
    # S3D's last pooling is (2, 7, 7): 16 frames of 224 x 224 is the smallest input
    's3d': _spec(_torchvision('s3d'), _image((1, 3, 16, 224, 224)), ['input'], ['output'],
                 {'input': _BATCH, 'output': _BATCH}, {'batch': 2}),
    'inception_v3': _spec(_torchvision('inception_v3', init_weights=True),
                          _image((1, 3, 96, 96)), ['input'], ['output'],
                          {'input': _BATCH, 'output': _BATCH}, {'batch': 2}),
    'googlenet': _spec(_torchvision('googlenet', init_weights=True), _image((1, 3, 64, 64)),
                       ['input'], ['output'], {'input': _BATCH, 'output': _BATCH},
                       {'batch': 2}),
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
    # 'grad': exported with autograd on, as users must (see torch_encoder)
    with torch.set_grad_enabled(bool(spec.get('grad'))):
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
