"""ort_string_cases.py - one-node string models for kernel_ort.py: forms of the
string kernels (core/ops/eval_string.c) the ONNX backend cases do not reach,
with seeded random ASCII words as inputs; onnxruntime computes the expected
outputs.

cases() gives (name, model, feeds, declines): declines is True where ppqfmt
must refuse (exit 6: a form onnxruntime and onnx's reference treat
differently, or an RE2 construct without a POSIX equivalent) rather than
compute a value.
"""
import numpy as np
from onnx import TensorProto as T, helper

WORDS = ["apple", "Banana", "cherry", "date", "Elder", "fig", "grape", "kiwi", "x", "ab"]


def words(rng, shape, pool=WORDS):
    return np.array(rng.choice(pool, size=shape), dtype=object)


def one_node(op, inputs, outputs, opset, **attrs):
    """inputs / outputs: [(name, elem type, shape)]."""
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], **attrs)
    g = helper.make_graph([node], op.lower(),
                          [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8  # what onnxruntime reads
    return m


def normalizer_cases(rng):
    x = words(rng, [8])
    out = []
    for name, attrs in (
            ("insensitive_lower", dict(case_change_action="LOWER", stopwords=["APPLE", "fig"])),
            ("insensitive_none", dict(stopwords=["banana", "KIWI"])),
            ("sensitive_upper", dict(case_change_action="UPPER", is_case_sensitive=1,
                                     stopwords=["Banana", "banana", "x"]))):
        attrs["locale"] = "C"  # onnxruntime's default, en_US.UTF-8, needs that locale installed
        out.append(("strnorm_" + name, one_node("StringNormalizer", [("X", T.STRING, [8])],
                                                 [("Y", T.STRING, None)], 10, **attrs),
                    {"X": x}, False))
    row = words(rng, [1, 6])
    out.append(("strnorm_row_all_stopped", one_node(
        "StringNormalizer", [("X", T.STRING, [1, 6])], [("Y", T.STRING, None)], 10,
        stopwords=list(WORDS), locale="C"), {"X": row}, False))
    spaced = np.array(["a b", "c"], dtype=object)  # stopwords per element or per word
    out.append(("strnorm_spaces_decline", one_node(
        "StringNormalizer", [("X", T.STRING, [2])], [("Y", T.STRING, None)], 10,
        stopwords=["a"], locale="C"), {"X": spaced}, True))
    return out


def binary_cases(rng):
    out = []
    for op, opset, dt in (("StringConcat", 20, T.STRING), ("Equal", 19, T.BOOL)):
        for shapes in (([2, 3], [3]), ([2, 1], [1, 3])):
            feeds = {"A": words(rng, shapes[0], WORDS[:3]), "B": words(rng, shapes[1], WORDS[:3])}
            out.append(("%s_%s" % (op.lower(), "x".join(map(str, shapes[1]))), one_node(
                op, [("A", T.STRING, shapes[0]), ("B", T.STRING, shapes[1])],
                [("Y", dt, None)], opset), feeds, False))
    return out


def split_cases(rng):
    text = np.array(["ab" + w + "ab" + v for w, v in zip(words(rng, [4]), words(rng, [4]))] +
                    ["abab", "xaby"], dtype=object)
    spaced = np.array(["a b  c", "one", "", "  lead trail"], dtype=object)
    out = []
    for name, x, attrs, declines in (
            ("multichar_delimiter", text, dict(delimiter="ab"), False),
            ("delimiter_maxsplit", text, dict(delimiter="ab", maxsplit=1), False),
            ("spaces_maxsplit", spaced, dict(maxsplit=1), False),
            ("spaces_tab_decline", np.array(["a\tb"], dtype=object), {}, True),
            # numpy gives "" one empty piece, onnxruntime none
            ("empty_decline", np.array(["", "a,b"], dtype=object), dict(delimiter=","), True)):
        out.append(("split_" + name, one_node(
            "StringSplit", [("X", T.STRING, [len(x)])],
            [("Y", T.STRING, None), ("Z", T.INT64, None)], 20, **attrs), {"X": x}, declines))
    # the pieces outlive the concatenation they were cut from (freed after its last reader)
    cat = helper.make_node("StringConcat", ["A", "B"], ["AB"])
    split = helper.make_node("StringSplit", ["AB"], ["Y", "Z"], delimiter="a")
    g = helper.make_graph([cat, split], "concat_split",
                          [helper.make_tensor_value_info(n, T.STRING, [4]) for n in "AB"],
                          [helper.make_tensor_value_info("Y", T.STRING, None),
                           helper.make_tensor_value_info("Z", T.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 8
    out.append(("split_after_concat", m, {"A": words(rng, [4]), "B": words(rng, [4])}, False))
    return out


REGEXES = [  # (pattern, ppqfmt declines)
    (r"[a-c]+\d*", False),
    (r"(?:ab|cd)*?x", False),
    (r"\w+\s\w+", False),
    (r"[\w\-]{2,4}", False),
    (r"a.b|\.z", False),
    (r"\bab\B.*", False),
    (r"[^\d\s]+", False),
    (r"a+?b{2,}|[[:alpha:]]+", False),
    (r"^ab(c|d)?$", False),
    (r"[.\\\-]+|a\.b", False),
    (r"(a|)+x?", False),
    (r"[^\W\d]+", True),       # \W inside brackets: no POSIX spelling
    (r"(?i)ab", True),         # flags
    (r"\pL+", True),           # Unicode classes
]


def regex_cases(rng):
    pool = ["abc", "abc12", "cdcdx", "x", "ab cd", "a-b", "a_b9", "ab", "axb", ".z", "abab",
            "AB", "", "a b c", "--", "abbb", "a.b", ".\\-", "aax", "abd"]
    x = np.array(pool, dtype=object)
    return [("regex_%d" % i, one_node("RegexFullMatch", [("X", T.STRING, [len(pool)])],
                                      [("Y", T.BOOL, None)], 20, pattern=p), {"X": x}, dec)
            for i, (p, dec) in enumerate(REGEXES)]


def tfidf_cases(rng):
    pool = ["apple", "fig", "kiwi", "apple", "fig", "fig", "kiwi", "x", "ab", "x", "ab", "apple"]
    attrs = dict(min_gram_length=1, max_gram_length=3, max_skip_count=2,
                 ngram_counts=[0, 3, 9], ngram_indexes=[0, 1, 2, 3, 4, 5, 4], pool_strings=pool)
    ints = dict(attrs, pool_int64s=[3, 5, 7, 3, 5, 5, 7, 1, 2, 1, 2, 3], pool_strings=None)
    del ints["pool_strings"]
    out = []
    for mode, weights in (("TF", None), ("IDF", [0.5, 2.0, 1.5, 3.0, 0.25, 4.0, 9.0]),
                          ("TFIDF", [0.1, 0.7, 1.3, 2.9, 0.3, 1.1, 9.0])):
        # weights: n-gram k to column k (where onnxruntime and the reference agree)
        extra = dict(weights=weights, ngram_indexes=list(range(7))) if weights else {}
        attrs_m, ints_m = dict(attrs, **extra), dict(ints, **extra)
        out.append(("tfidf_strings_" + mode.lower(), one_node(
            "TfIdfVectorizer", [("X", T.STRING, [3, 12])], [("Y", T.FLOAT, None)], 9,
            mode=mode, **attrs_m),
            {"X": words(rng, [3, 12], ["apple", "fig", "kiwi", "x", "ab"])}, False))
        out.append(("tfidf_int32_" + mode.lower(), one_node(
            "TfIdfVectorizer", [("X", T.INT32, [12])], [("Y", T.FLOAT, None)], 9,
            mode=mode, **ints_m),
            {"X": rng.choice([1, 2, 3, 5, 7], size=[12]).astype(np.int32)}, False))
    out.append(("tfidf_weights_shared_column_decline", one_node(
        "TfIdfVectorizer", [("X", T.INT32, [6])], [("Y", T.FLOAT, None)], 9, mode="IDF",
        weights=[1.0, 2, 3, 4, 5, 6, 7], **ints), {"X": np.array([3, 5, 5, 7, 1, 2], np.int32)},
        True))
    dup = dict(attrs, ngram_counts=[0, 3], ngram_indexes=[0, 1, 2, 3, 4, 5],
               pool_strings=pool[:3] + ["fig", "apple", "fig"])  # a bigram twice
    out.append(("tfidf_repeated_bigram_decline", one_node(
        "TfIdfVectorizer", [("X", T.STRING, [4])], [("Y", T.FLOAT, None)], 9, mode="TF", **dup),
        {"X": words(rng, [4], ["apple", "fig"])}, True))
    return out


def cast_cases(rng):
    nums = np.array(["1.5", "-2", "3e2", "0.1", "NaN", "-inf", "7.25E-1", "+4"], dtype=object)
    ints = np.array(["12", "-7", "+3", "0"], dtype=object)
    out = [("cast_string_to_float", one_node("Cast", [("X", T.STRING, [8])],
                                             [("Y", T.FLOAT, None)], 13, to=T.FLOAT),
            {"X": nums}, False),
           ("cast_string_to_double", one_node("Cast", [("X", T.STRING, [8])],
                                              [("Y", T.DOUBLE, None)], 13, to=T.DOUBLE),
            {"X": nums}, False),
           ("cast_string_to_int32", one_node("Cast", [("X", T.STRING, [4])],
                                             [("Y", T.INT32, None)], 13, to=T.INT32),
            {"X": ints}, False),
           ("cast_int64_to_string", one_node("Cast", [("X", T.INT64, [5])],
                                             [("Y", T.STRING, None)], 13, to=T.STRING),
            {"X": rng.integers(-10**12, 10**12, size=[5])}, False),
           ("cast_float_to_string", one_node("Cast", [("X", T.FLOAT, [4])],
                                             [("Y", T.STRING, None)], 13, to=T.STRING),
            {"X": np.array([0.5, -1.25, 0.375, 2.5], np.float32)}, False),
           ("cast_float_to_string_decline", one_node(
               "Cast", [("X", T.FLOAT, [1])], [("Y", T.STRING, None)], 13, to=T.STRING),
            {"X": np.array([0.6048455], np.float32)}, True)]
    return out


def cases():
    rng = np.random.default_rng(35)
    return (normalizer_cases(rng) + binary_cases(rng) + split_cases(rng) + regex_cases(rng) +
            tfidf_cases(rng) + cast_cases(rng))
