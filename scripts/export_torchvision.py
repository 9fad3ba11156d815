#!/usr/bin/python3
"""Export torchvision networks to ONNX, BatchNormalization kept, for the real-network tests.

Usage: scripts/export_torchvision.py OUTDIR [--opsets 11,13,17] [--models a,b] [--force] [--list]

Every model is built with random weights (weights=None; nothing is downloaded) after
torch.manual_seed(0), and every BatchNorm layer gets non-trivial statistics and affine
parameters (running_mean ~ N(0, 0.5), running_var ~ U(0.5, 2), weight ~ U(0.5, 1.5),
bias ~ N(0, 0.5)), so that a wrong BN fold shows in the numbers. The model is put in eval()
mode and exported with
    torch.onnx.export(model, x, path, opset_version=OPSET,
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
which keeps inference-form BatchNormalization nodes (TrainingMode.EVAL would fuse Conv+BN in
the exporter) and the exporter's Constant nodes.

Besides torchvision networks, MODELS has two small networks of our own for the legacy (opset 9)
forms: `legacy_nearest` and `legacy_bilinear` (LegacyNet below: Conv+BN, ReLU6, clamp, F.pad
constant with value 0.5 and reflect, nn.Upsample x2 nearest or bilinear with
align_corners=False, a slice; at opset 9 that is Clip-6, Pad-2, Upsample-9 and Slice-1).

The names of scripts/export_transformers.py's USER table (small transformers, recurrent and
CRNN nets of our own in plain torch, nn.TransformerEncoder, and newer torchvision networks:
swin_t, maxvit_t, efficientnet_v2_s, raft_small, lraspp_mobilenet_v3_large, s3d, inception_v3,
googlenet, five detection networks; --list names them all) are exported the way users export:
with dynamic axes and torch's constant folding on (see that file); their record also holds the
inputs' symbolic shapes and the sizes the tests feed for the dynamic dims. They share the caching below; a
change to either script redoes every export.

A name `<model>_constw` (any model above, e.g. resnet18_constw) is a Constant-weight variant,
as some converters emit: the export of <model> at the same opset (made first if needed) with
every initializer replaced by a Constant node of the same output name and value, placed just
before the first node that reads it; nothing else changes (it passes the full checker).

Files: OUTDIR/<model>_op<opset>.onnx, plus OUTDIR/<model>_op<opset>.json with what was done
(input shape, export seconds, torch version, or the reason the export was skipped). An
existing .onnx (or a .json recording a skip) newer than this script is reused, not redone;
--force redoes it (for a variant, its base too). A variant is also redone when its base was
exported after it. Each model is exported to a temporary file and renamed, so an interrupted
export leaves nothing behind.

One line per model/opset on stdout: `exported NAME (Ns, M MB)`, `cached NAME` or
`skipped NAME[ (cached)]: reason` (a variant's base exported on the way gets its own line).
Exit status 0 unless the arguments are bad: a combination torch cannot export is skipped and
reported, not an error. Run with Debian's /usr/bin/python3
(python3-torch, python3-torchvision: scripts/install_model_deps.sh installs them).
"""
import argparse
import json
import os
import sys
import time
import traceback
import warnings
from collections import defaultdict

SCRIPT = os.path.abspath(__file__)
DEFAULT_OPSETS = (11, 13, 17)
sys.path.insert(0, os.path.dirname(SCRIPT))
import export_transformers  # noqa: E402  (the user-style exports: USER, export())
from export_transformers import USER  # noqa: E402
# The exports depend on both scripts: a change to either redoes them.
SOURCES = (SCRIPT, os.path.abspath(export_transformers.__file__))

# name -> (builder keyword arguments, input shape). Small inputs where the network allows, to
# keep onnxruntime time low; every spatial size still leaves >= 2x2 before the global pooling.
MODELS = {
    'resnet18': ({}, (1, 3, 64, 64)),
    'resnet50': ({}, (1, 3, 64, 64)),
    'mobilenet_v2': ({}, (1, 3, 64, 64)),
    'mobilenet_v3_large': ({}, (1, 3, 64, 64)),
    'efficientnet_b0': ({}, (1, 3, 64, 64)),
    'densenet121': ({}, (1, 3, 64, 64)),
    'shufflenet_v2_x1_0': ({}, (1, 3, 64, 64)),
    'regnet_y_400mf': ({}, (1, 3, 64, 64)),
    'convnext_tiny': ({}, (1, 3, 64, 64)),
    # video: time 8 -> 1 and space 64 -> 4 through the three strided stages
    'r3d_18': ({}, (1, 3, 8, 64, 64)),
    # segmentation: no backbone weights either (the default would download them)
    'deeplabv3_mobilenet_v3_large': ({'weights_backbone': None}, (1, 3, 96, 96)),
    # the builder checks the input against image_size (224 by default)
    'vit_b_16': ({}, (1, 3, 224, 224)),
    # no BatchNorm; its ceil_mode MaxPools export at opset 9 as MaxPool-8 with extra padding
    'squeezenet1_1': ({}, (1, 3, 64, 64)),
    # ours (LegacyNet): the legacy forms at opset 9 -- Clip-6, Pad-2, Upsample-9, Slice-1
    'legacy_nearest': ({'mode': 'nearest'}, (1, 3, 16, 16)),
    'legacy_bilinear': ({'mode': 'bilinear'}, (1, 3, 16, 16)),
}
CUSTOM = ('legacy_nearest', 'legacy_bilinear')
CONSTW = '_constw'   # suffix of the Constant-weight variants


def base_of(name):
    """The exported model a name stands for: 'resnet18_constw' -> 'resnet18'."""
    return name[:-len(CONSTW)] if name.endswith(CONSTW) else name


def known(name):
    return base_of(name) in MODELS or base_of(name) in USER


def legacy_net(mode):
    """A small network whose opset-9 export holds every legacy form torch emits at opset 9:
    Conv+BN, ReLU6 (Clip-6 with max only), F.pad constant with value 0.5 (Pad-2 with value),
    nn.Upsample x2 (Upsample-9, scales from Concat of Constants), F.pad reflect (Pad-2 reflect),
    a slice with a negative end (Slice-1), Conv, clamp(-0.5, 0.5) (Clip-6 with min and max)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class LegacyNet(nn.Module):
        def __init__(self, mode):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            if mode == 'nearest':
                self.up = nn.Upsample(scale_factor=2, mode='nearest')
            else:
                self.up = nn.Upsample(scale_factor=2, mode=mode, align_corners=False)
            self.conv2 = nn.Conv2d(8, 4, 3)

        def forward(self, x):
            y = F.relu6(self.bn(self.conv(x)))
            y = F.pad(y, (1, 2, 0, 1), mode='constant', value=0.5)
            y = self.up(y)
            y = F.pad(y, (1, 1, 2, 2), mode='reflect')
            y = y[:, :, 1:-1, :]
            return torch.clamp(self.conv2(y), -0.5, 0.5)
    return LegacyNet(mode)


def _builder(name):
    import torchvision.models as tvm
    if name.startswith('deeplabv3'):
        import torchvision.models.segmentation as seg
        return getattr(seg, name)
    if name == 'r3d_18':
        import torchvision.models.video as video
        return video.r3d_18
    return getattr(tvm, name)


def build(name, seed=0):
    """(model in eval mode, example input), deterministic for a given seed."""
    import torch
    kwargs, shape = MODELS[name]
    torch.manual_seed(seed)
    if name in CUSTOM:
        model = legacy_net(**kwargs)
    else:
        model = _builder(name)(weights=None, **kwargs)
    randomize_bn(model, seed)
    if name.startswith('deeplabv3'):
        model = _out_only(model)
    model.eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1))
    return model, x


def randomize_bn(model, seed=0):
    """Give every BatchNorm layer statistics a wrong fold can't hide behind."""
    import torch
    g = torch.Generator().manual_seed(seed + 12345)
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                if m.track_running_stats:
                    m.running_mean.copy_(torch.randn(c, generator=g) * 0.5)
                    m.running_var.copy_(torch.rand(c, generator=g) * 1.5 + 0.5)
                if m.affine:
                    m.weight.copy_(torch.rand(c, generator=g) + 0.5)
                    m.bias.copy_(torch.randn(c, generator=g) * 0.5)
                n += 1
    return n


def _out_only(inner):
    """Segmentation models return a dict; export its 'out' tensor only."""
    import torch

    class OutOnly(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)['out']
    return OutOnly(inner)


def constant_weights(model):
    """Replace every initializer of the main graph by a Constant node with the same output name
    and the same tensor (attribute `value`), inserted just before the first node that reads it
    (directly or from inside a subgraph; at the front if nothing does). An initializer that is
    also a graph input (old IR style) stops being an input: a name can have one producer.
    Returns the number of Constant nodes made. Subgraph initializers are left alone."""
    import onnx
    g = model.graph
    inits = list(g.initializer)
    if not inits:
        return 0
    init_names = {t.name for t in inits}

    def reads(node):
        names = set(node.input)
        stack = [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]
        stack += [sg for a in node.attribute if a.type == onnx.AttributeProto.GRAPHS
                  for sg in a.graphs]
        while stack:
            sg = stack.pop()
            for n in sg.node:
                names.update(n.input)
                stack += [a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
                stack += [x for a in n.attribute if a.type == onnx.AttributeProto.GRAPHS
                          for x in a.graphs]
            names.update(o.name for o in sg.output)
        return names

    first = {}
    for k, n in enumerate(g.node):
        for x in reads(n):
            if x in init_names and x not in first:
                first[x] = k
    used_names = {n.name for n in g.node if n.name}

    def fresh(base):
        name, i = base, 1
        while name in used_names:
            name, i = '%s_%d' % (base, i), i + 1
        used_names.add(name)
        return name

    before = defaultdict(list)   # node index -> Constant nodes to put in front of it
    for t in inits:
        c = onnx.NodeProto()
        c.op_type = 'Constant'
        c.name = fresh('Constant_' + t.name)
        c.output.append(t.name)
        a = c.attribute.add()
        a.name = 'value'
        a.type = onnx.AttributeProto.TENSOR
        a.t.CopyFrom(t)
        before[first.get(t.name, 0)].append(c)
    nodes = []
    for k, n in enumerate(g.node):
        nodes.extend(before.pop(k, []))
        nodes.append(n)
    for k in sorted(before):         # a graph without nodes
        nodes.extend(before[k])
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    kept = [i for i in g.input if i.name not in init_names]
    del g.input[:]
    g.input.extend(kept)
    return len(inits)


def export_constw(name, opset, outdir, force, tmp):
    """Make OUTDIR/<name>_op<opset>.onnx from the base model's export (export_one makes that
    first). Returns the fields to add to the record."""
    import onnx
    base = base_of(name)
    brec = export_one(base, opset, outdir, force)
    if brec.get('skipped'):
        raise RuntimeError('base model %s_op%d was not exported: %s' % (
            base, opset, brec.get('reason')))
    base_path = paths(outdir, base, opset)[0]
    model = onnx.load(base_path)
    n = constant_weights(model)
    onnx.save(model, tmp)
    onnx.checker.check_model(tmp, full_check=True)
    return {'base': os.path.basename(base_path), 'constants_made': n,
            'bn_layers': brec.get('bn_layers')}


def up_to_date(path):
    return os.path.exists(path) and os.path.getmtime(path) > max(map(os.path.getmtime, SOURCES))


def paths(outdir, name, opset):
    base = os.path.join(outdir, '%s_op%d' % (name, opset))
    return base + '.onnx', base + '.json'


def _write_json(path, rec):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(rec, f, indent=1, sort_keys=True)
        f.write('\n')
    os.replace(tmp, path)


def _reason(exc):
    """One line: the exception's type and first meaningful message line."""
    msg = ' '.join(str(exc).split())
    return ('%s: %s' % (type(exc).__name__, msg))[:400]


_DONE = {}   # (name, opset) -> record, for what this process exported (or tried to)


def export_one(name, opset, outdir, force=False):
    """Export one model at one opset. Returns the record written to the .json file.
    A <model>_constw variant is made from <model>'s export, which is exported first when it is
    missing or stale (and, with force, redone once per run)."""
    import torch
    if (name, opset) in _DONE:
        return _DONE[(name, opset)]
    onnx_path, json_path = paths(outdir, name, opset)
    variant = name != base_of(name)
    if variant and not force:
        # A variant is stale when its base is missing or stale, or was exported after it
        # (judged by the .json records, which only this script writes).
        base_onnx, base_json = paths(outdir, base_of(name), opset)
        if not (up_to_date(base_onnx) and up_to_date(base_json)) or (
                os.path.exists(json_path) and
                os.path.getmtime(base_json) > os.path.getmtime(json_path)):
            force = 'variant'
    if not force:
        if up_to_date(onnx_path) and up_to_date(json_path):
            with open(json_path) as f:
                rec = json.load(f)
            rec['cached'] = True
            return rec
        if not os.path.exists(onnx_path) and up_to_date(json_path):
            with open(json_path) as f:
                rec = json.load(f)
            if rec.get('skipped'):
                rec['cached'] = True
                return rec
    rec = {'model': name, 'opset': opset, 'torch': torch.__version__,
           'file': os.path.basename(onnx_path)}
    if base_of(name) in MODELS:
        rec['input_shape'] = list(MODELS[base_of(name)][1])
    tmp = os.path.join(outdir, '.%s_op%d.onnx.tmp' % (name, opset))
    t0 = time.time()
    try:
        if variant:
            # force=True redoes the base too; 'variant' (a stale variant) only what is stale
            rec.update(export_constw(name, opset, outdir, force is True, tmp))
        elif name in USER:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                rec.update(export_transformers.export(name, opset, tmp))
        else:
            model, x = build(name)
            rec['bn_layers'] = sum(isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                                   for m in model.modules())
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                torch.onnx.export(model, x, tmp, opset_version=opset,
                                  training=torch.onnx.TrainingMode.PRESERVE,
                                  do_constant_folding=False,
                                  input_names=['input'], output_names=['output'])
        os.replace(tmp, onnx_path)
        rec['export_seconds'] = round(time.time() - t0, 3)
        rec['bytes'] = os.path.getsize(onnx_path)
        rec['skipped'] = False
    except Exception as e:  # an unsupported op, a tracing error: report, don't stop
        if os.path.exists(tmp):
            os.remove(tmp)
        if os.path.exists(onnx_path):
            os.remove(onnx_path)
        rec['skipped'] = True
        rec['reason'] = _reason(e)
        rec['traceback'] = traceback.format_exc()[-4000:]
        rec['export_seconds'] = round(time.time() - t0, 3)
    _write_json(json_path, rec)
    rec['cached'] = False
    _DONE[(name, opset)] = rec
    return rec


def parse_list(text, what, allowed=None, conv=str):
    items = [conv(t.strip()) for t in text.split(',') if t.strip()]
    if allowed is not None:
        bad = [t for t in items if t not in allowed]
        if bad:
            raise SystemExit('unknown %s: %s (known: %s)' % (what, ', '.join(map(str, bad)),
                                                           ', '.join(map(str, allowed))))
    return items


def print_rec(label, rec):
    if rec.get('skipped'):
        print('skipped %s%s: %s' % (label, ' (cached)' if rec.get('cached') else '',
                                    rec.get('reason')))
    elif rec.get('cached'):
        print('cached %s' % label)
    else:
        extra = (', %d Constant nodes from %s' % (rec['constants_made'], rec['base'])
                 if 'constants_made' in rec else '')
        print('exported %s (%.1fs, %.1f MB%s)' % (label, rec['export_seconds'],
                                                  rec['bytes'] / 1e6, extra))
    sys.stdout.flush()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('outdir', nargs='?')
    ap.add_argument('--opsets', default=','.join(map(str, DEFAULT_OPSETS)))
    ap.add_argument('--models', default=','.join(list(MODELS) + list(USER)))
    ap.add_argument('--force', action='store_true', help='export again even if cached')
    ap.add_argument('--list', action='store_true', help='print the model names and exit')
    args = ap.parse_args(argv)
    if args.list:
        for name, (_, shape) in MODELS.items():
            print('%-30s input %s' % (name, 'x'.join(map(str, shape))))
        for name, spec in USER.items():
            print('%-30s dynamic axes %s' % (name, ', '.join(
                '%s %s' % (k, sorted(v.values())) for k, v in spec['dynamic_axes'].items()
                if k in spec['inputs'])))
        print('%-30s every initializer made a Constant node' % ('<model>' + CONSTW))
        return 0
    if not args.outdir:
        ap.error('OUTDIR is required')
    models = parse_list(args.models, 'model')
    bad = [m for m in models if not known(m)]
    if bad:
        raise SystemExit('unknown model: %s (known: %s; and <model>%s for each)' % (
            ', '.join(bad), ', '.join(list(MODELS) + list(USER)), CONSTW))
    try:
        opsets = parse_list(args.opsets, 'opset', conv=int)
    except ValueError:
        ap.error('--opsets takes a comma-separated list of integers')
    os.makedirs(args.outdir, exist_ok=True)
    t_import = time.time()
    import torch
    import torchvision  # noqa: F401  (import cost measured once, here)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    print('torch %s, torchvision %s (import %.1fs)' % (
        torch.__version__, torchvision.__version__, time.time() - t_import))
    sys.stdout.flush()
    printed = set()
    for name in models:
        for opset in opsets:
            rec = export_one(name, opset, args.outdir, args.force)
            # a variant's base exported on the way gets its own line first
            for key, done in list(_DONE.items()):
                if key != (name, opset) and key not in printed:
                    printed.add(key)
                    print_rec('%s_op%d' % key, done)
            if (name, opset) not in printed:
                printed.add((name, opset))
                print_rec('%s_op%d' % (name, opset), rec)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
