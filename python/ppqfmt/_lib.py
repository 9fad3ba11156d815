"""_lib.py - libppqfmt.so through ctypes: the handle (ppqfmt_options) and the
errors, one class per exit code."""
import ctypes
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

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class UsageError(Error):
    """Code 1: an unknown option or bad value, options that contradict."""


class InputError(Error):
    """Code 2: the model is invalid or cannot be adapted as asked."""


class OutputError(Error):
    """Code 3: the output cannot be written."""


class InternalError(Error):
    """Code 4: out of memory, or a pass failed."""


_BY_CODE = {1: UsageError, 2: InputError, 3: OutputError, 4: InternalError}


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

    def _check(self, rc):
        if rc:
            message = _lib.ppqfmt_last_error(self._h).decode(errors="replace")
            raise _BY_CODE.get(rc, Error)(rc, message)

    def set(self, name, value):
        self._check(_lib.ppqfmt_options_set(self._h, name.encode(),
                                            None if value is None else value.encode()))

    def format_file(self, input_path, output_path):
        self._check(_lib.ppqfmt_format_file(self._h, _fs(input_path), _fs(output_path)))

    def format_buffer(self, data):
        out, out_len = ctypes.c_void_p(), ctypes.c_size_t()
        self._check(_lib.ppqfmt_format_buffer(self._h, data, len(data), ctypes.byref(out),
                                              ctypes.byref(out_len)))
        try:
            return ctypes.string_at(out, out_len.value)
        finally:
            _lib.ppqfmt_free(out)

    def report(self):
        return _lib.ppqfmt_report_json(self._h).decode()
