"""Runs one peer of make bench-peers on one model, in this process (scripts/bench_peers.py starts
it with .deps/peers/bin/python under the memory cap and times it).

Usage: .deps/peers/bin/python scripts/peer_run.py PEER IN.onnx OUT.onnx

Each peer runs with the options its documentation gives for preparing a model (for quantization
where it says so):
  onnxsim        onnxsim.simplify(model)  (defaults: constant folding, shape inference, its
                 optimizer's fusions including Conv+BN; check_n=0)
  onnxslim       onnxslim.slim(model)     (defaults: constant folding, dead-node removal,
                 pattern fusions, shape inference)
  onnxoptimizer  onnxoptimizer.optimize(model, get_fuse_and_elimination_passes(),
                 fixed_point=True)  (its eliminate_* and fuse_* passes, to a fixed point)
  ort-prep       onnxruntime.quantization.shape_inference.quant_pre_process(IN, OUT,
                 skip_optimization=False)  (symbolic shape inference, onnxruntime's basic graph
                 optimizations, onnx shape inference: what onnxruntime's quantization docs run
                 before quantize_static)
  polygraphy     polygraphy surgeon sanitize IN --fold-constants -o OUT  (the CLI, exec'd)
A model that had external data is saved with its tensors in one file beside OUT
(OUT.data), as a user would have to; otherwise inline.
"""
import os
import sys

MODEL_LIMIT = 2 ** 31 - 1


def has_external(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    from onnx.external_data_helper import uses_external_data
    return any(uses_external_data(t) for t in m.graph.initializer)


def save(model, out, external):
    import onnx
    if external or model.ByteSize() >= MODEL_LIMIT:
        onnx.save(model, out, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(out) + '.data')
    else:
        onnx.save(model, out)


def main(argv):
    peer, src, out = argv
    if peer == 'polygraphy':
        exe = os.path.join(os.path.dirname(sys.executable), 'polygraphy')
        args = [exe, 'surgeon', 'sanitize', src, '--fold-constants', '-o', out]
        if has_external(src):
            args += ['--external-data-dir', os.path.dirname(src) or '.', '--save-external-data',
                     os.path.basename(out) + '.data']
        os.execv(exe, args)
    external = has_external(src)
    if peer == 'ort-prep':
        from onnxruntime.quantization.shape_inference import quant_pre_process
        quant_pre_process(src, out, skip_optimization=False, save_as_external_data=external,
                          all_tensors_to_one_file=True,
                          external_data_location=os.path.basename(out) + '.data')
        return 0
    import onnx
    if peer == 'onnxsim':
        import onnxsim
        model, ok = onnxsim.simplify(onnx.load(src))
        if not ok:
            print('onnxsim: its own check failed', file=sys.stderr)
            return 3
    elif peer == 'onnxslim':
        import onnxslim
        model = onnxslim.slim(onnx.load(src))
    elif peer == 'onnxoptimizer':
        import onnxoptimizer
        model = onnxoptimizer.optimize(onnx.load(src), onnxoptimizer.get_fuse_and_elimination_passes(),
                                       fixed_point=True)
    else:
        print('unknown peer %s' % peer, file=sys.stderr)
        return 2
    save(model, out, external)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
