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

Files: OUTDIR/<model>_op<opset>.onnx, plus OUTDIR/<model>_op<opset>.json with what was done
(input shape, export seconds, torch version, or the reason the export was skipped). An
existing .onnx (or a .json recording a skip) newer than this script is reused, not redone;
--force redoes it. Each model is exported to a temporary file and renamed, so an interrupted
export leaves nothing behind.

One line per model/opset on stdout: `exported NAME (Ns, M MB)`, `cached NAME` or
`skipped NAME[ (cached)]: reason`. Exit status 0 unless the arguments are bad: a combination torch cannot
export is skipped and reported, not an error. Run with Debian's /usr/bin/python3
(python3-torch, python3-torchvision: scripts/install_model_deps.sh installs them).
"""
import argparse
import json
import os
import sys
import time
import traceback
import warnings

SCRIPT = os.path.abspath(__file__)
DEFAULT_OPSETS = (11, 13, 17)

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
}


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


def up_to_date(path):
    return os.path.exists(path) and os.path.getmtime(path) > os.path.getmtime(SCRIPT)


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


def export_one(name, opset, outdir, force=False):
    """Export one model at one opset. Returns the record written to the .json file."""
    import torch
    onnx_path, json_path = paths(outdir, name, opset)
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
           'input_shape': list(MODELS[name][1]), 'file': os.path.basename(onnx_path)}
    tmp = os.path.join(outdir, '.%s_op%d.onnx.tmp' % (name, opset))
    t0 = time.time()
    try:
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
    return rec


def parse_list(text, what, allowed=None, conv=str):
    items = [conv(t.strip()) for t in text.split(',') if t.strip()]
    if allowed is not None:
        bad = [t for t in items if t not in allowed]
        if bad:
            raise SystemExit('unknown %s: %s (known: %s)' % (what, ', '.join(map(str, bad)),
                                                           ', '.join(map(str, allowed))))
    return items


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('outdir', nargs='?')
    ap.add_argument('--opsets', default=','.join(map(str, DEFAULT_OPSETS)))
    ap.add_argument('--models', default=','.join(MODELS))
    ap.add_argument('--force', action='store_true', help='export again even if cached')
    ap.add_argument('--list', action='store_true', help='print the model names and exit')
    args = ap.parse_args(argv)
    if args.list:
        for name, (_, shape) in MODELS.items():
            print('%-30s input %s' % (name, 'x'.join(map(str, shape))))
        return 0
    if not args.outdir:
        ap.error('OUTDIR is required')
    models = parse_list(args.models, 'model', MODELS)
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
    for name in models:
        for opset in opsets:
            rec = export_one(name, opset, args.outdir, args.force)
            label = '%s_op%d' % (name, opset)
            if rec.get('skipped'):
                print('skipped %s%s: %s' % (label, ' (cached)' if rec.get('cached') else '',
                                            rec.get('reason')))
            elif rec.get('cached'):
                print('cached %s' % label)
            else:
                print('exported %s (%.1fs, %.1f MB)' % (label, rec['export_seconds'],
                                                        rec['bytes'] / 1e6))
            sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
