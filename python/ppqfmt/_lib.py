"""_lib.py - libppqfmt.so through ctypes: the handle (ppqfmt_options) and the
errors, one class per exit code."""
import ctypes
import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_lib = ctypes.CDLL(os.path.join(_HERE, "libppqfmt.so"))

_lib.ppqfmt_version.restype = ctypes.c_char_p
_lib.ppqfmt_options_new.restype = ctypes.c_void_p
_lib.ppqfmt_options_free.argtypes = [ctypes.c_void_p]
_lib.ppqfmt_options_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
_lib.ppqfmt_format_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
_lib.ppqfmt_format_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_void_p),
                                      ctypes.POINTER(ctypes.c_size_t)]
_lib.ppqfmt_free.argtypes = [ctypes.c_void_p]
_lib.ppqfmt_report_json.argtypes = [ctypes.c_void_p]
_lib.ppqfmt_report_json.restype = ctypes.c_char_p
_lib.ppqfmt_last_error.argtypes = [ctypes.c_void_p]
_lib.ppqfmt_last_error.restype = ctypes.c_char_p


class Error(Exception):
    """A failed format: .code is the command line's exit code, .message its
    message (as `ppqfmt` prints it after "ppqfmt: ")."""

    def __init__(self, code, message, result=None, report=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.result = result
        self.report = report


class UsageError(Error):
    """Code 1: an unknown option or bad value, options that contradict."""


class InputError(Error):
    """Code 2: the model is invalid or cannot be adapted as asked."""


class OutputError(Error):
    """Code 3: the output cannot be written."""


class InternalError(Error):
    """Code 4: out of memory, or a pass failed."""


class CheckError(Error):
    """A check= verdict other than "equal": the format itself succeeded, so
    .result holds its output (as format() would have returned it) and
    .report the report dict (None when the check could not run)."""


class MismatchError(CheckError):
    """Code 5: an output of the formatted model differs from the input's."""


class UncheckedError(CheckError):
    """Code 6: a node of either model has no kernel in ppqfmt's interpreter."""


_BY_CODE = {1: UsageError, 2: InputError, 3: OutputError, 4: InternalError,
            5: MismatchError, 6: UncheckedError}


def version():
    return _lib.ppqfmt_version().decode()


def _fs(path):
    return os.fsencode(path)


class Handle:
    """One ppqfmt_options: the options set and the last report and error."""

    def __init__(self):
        self._h = _lib.ppqfmt_options_new()
        if not self._h:
            raise MemoryError("ppqfmt: out of memory")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _lib.ppqfmt_options_free(self._h)
        self._h = None

    def error(self, rc, result=None):
        """The exception for code rc; a check verdict carries result and the report."""
        message = _lib.ppqfmt_last_error(self._h).decode(errors="replace")
        cls = _BY_CODE.get(rc, Error)
        if not issubclass(cls, CheckError):
            return cls(rc, message)
        text = self.report()
        return cls(rc, message, result, json.loads(text) if text else None)

    def set(self, name, value):
        rc = _lib.ppqfmt_options_set(self._h, name.encode(),
                                     None if value is None else value.encode())
        if rc:
            raise self.error(rc)

    def format_file(self, input_path, output_path):
        """The exit code; the output file is written when it is 0, 5 or 6."""
        return _lib.ppqfmt_format_file(self._h, _fs(input_path), _fs(output_path))

    def format_buffer(self, data):
        """(exit code, the output bytes or None)."""
        out, out_len = ctypes.c_void_p(), ctypes.c_size_t()
        rc = _lib.ppqfmt_format_buffer(self._h, data, len(data), ctypes.byref(out),
                                       ctypes.byref(out_len))
        if not out:
            return rc, None
        try:
            return rc, ctypes.string_at(out, out_len.value)
        finally:
            _lib.ppqfmt_free(out)

    def report(self):
        return _lib.ppqfmt_report_json(self._h).decode()
