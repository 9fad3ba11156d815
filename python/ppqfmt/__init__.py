"""ppqfmt - put an ONNX model into the canonical form a quantizer expects.

    import ppqfmt
    ppqfmt.format("model.onnx", output="model.fmt.onnx", target_opset=17)
    model = ppqfmt.format(model)                     # an onnx.ModelProto
    data, report = ppqfmt.format(data, report=True)  # bytes, and the report

The C library (libppqfmt, docs/API.md) does the work: a path is formatted
file to file (external data included, weights never copied into Python);
bytes and ModelProto go through memory. Errors raise ppqfmt.Error subclasses
whose .code is the command line's exit code.
"""
import json
import os

from ._lib import (CheckError, Error, Handle, InputError, InternalError, MismatchError,
                   OutputError, UncheckedError, UsageError, version)

__all__ = ["format", "Error", "UsageError", "InputError", "OutputError", "InternalError",
           "CheckError", "MismatchError", "UncheckedError", "__version__"]
__version__ = version()


def _shape_option(name, dims):
    return f"{name}={','.join(str(d) for d in dims)}"


def _options(passes, enable, disable, input_shapes, target_opset, fold_limit,
             external_data, check, options):
    """(name, value) pairs, in the order the command line would apply them."""
    out = []
    if passes is not None:
        out.append(("passes", passes if isinstance(passes, str) else ",".join(passes) or "none"))
    for name, items in (("enable", enable), ("disable", disable)):
        items = [items] if isinstance(items, str) else list(items)
        if items:
            out.append((name, ",".join(items)))
    if isinstance(input_shapes, dict):
        out += [("input-shape", _shape_option(k, v)) for k, v in input_shapes.items()]
    elif input_shapes:
        out += [("input-shape", s) for s in input_shapes]
    for name, value in (("target-opset", target_opset), ("fold-limit", fold_limit),
                        ("external-data", external_data)):
        if value is not None:
            out.append((name, str(value)))
    if check:
        out.append(("check", None if check is True else str(check)))
    for name, value in (options or {}).items():
        if value is True:
            out.append((name, None))
        elif value is not False and value is not None:
            out.append((name, str(value)))
    return out


def format(model, *, output=None, passes=None, enable=(), disable=(), input_shapes=None,
           target_opset=None, fold_limit=None, external_data=None, check=None,
           options=None, report=False):
    """Formats model as `ppqfmt` does and returns it in the kind it came in.

    model: an onnx.ModelProto (returns a new ModelProto), bytes (returns
    bytes) or a path, str or os.PathLike (writes output, a path that must be
    given, external data files included, and returns it as given).
    passes: the exact passes (list or comma string, [] for none); enable,
    disable: add or remove passes; input_shapes: {"x": [1, 3, 224, 224]} or
    ["x=1,3,224,224"]; target_opset, fold_limit, external_data: as
    --target-opset, --fold-limit, --external-data (a file name beside
    output); check=N runs both models on N seeded random inputs in ppqfmt's
    interpreter (--check=N; True: 3) and compares every output. options:
    any other long option by name, {"mark-preprocessed": True,
    "size-threshold": 4096}. report=True returns (result, report) with
    the --report=json document as a dict.
    Raises UsageError (code 1), InputError (2), OutputError (3) or
    InternalError (4), each an Error with .code and the message; with
    check, MismatchError (5) or UncheckedError (6), CheckErrors whose
    .result is the formatted model (written, for a path) and .report the
    report dict.
    """
    pairs = _options(passes, enable, disable, input_shapes, target_opset, fold_limit,
                     external_data, check, options)
    with Handle() as h:
        for name, value in pairs:
            h.set(name, value)
        if isinstance(model, (str, os.PathLike)):
            if output is None:
                raise UsageError(1, "a model given by path needs output= (the path to write)")
            rc = h.format_file(os.fspath(model), os.fspath(output))
            result = output
        elif isinstance(model, (bytes, bytearray, memoryview)):
            rc, result = h.format_buffer(bytes(model))
        elif hasattr(model, "SerializeToString"):
            rc, data = h.format_buffer(model.SerializeToString())
            result = None if data is None else type(model).FromString(data)
        else:
            raise TypeError("model must be an onnx.ModelProto, bytes or a path, not "
                            f"{type(model).__name__}")
        if rc:
            raise h.error(rc, result)
        return (result, json.loads(h.report())) if report else result
