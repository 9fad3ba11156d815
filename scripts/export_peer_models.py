#!/usr/bin/python3
"""Exports the torch models of make bench-peers into OUTDIR (Debian's /usr/bin/python3 with its
torch 1.13 and torchvision), through scripts/export_torchvision.py (same caching and records).

Usage: scripts/export_peer_models.py OUTDIR NAME_opN...

NAME is a name export_torchvision.py knows (resnet18: static, BatchNormalization and the
exporter's Constant nodes kept; gpt2_tiny, ...: the user-style exports of
scripts/export_transformers.py, with dynamic axes) or such a user-style name + '_static': the
same export without dynamic axes (every input at the traced shape), as users export who do not
pass dynamic_axes. Prints export_torchvision's line per model.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torchvision as et  # noqa: E402
from export_transformers import USER  # noqa: E402

STATIC = '_static'


def main(argv):
    outdir, names = argv[0], argv[1:]
    os.makedirs(outdir, exist_ok=True)
    for spec in names:
        name, opset = spec.rsplit('_op', 1)
        if name.endswith(STATIC) and name not in USER:
            base = name[:-len(STATIC)]
            USER[name] = dict(USER[base], dynamic_axes={}, test_sizes={})
        et.print_rec('%s_op%s' % (name, opset), et.export_one(name, int(opset), outdir))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
