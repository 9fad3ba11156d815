#!/bin/sh
# fuzz.sh [SECONDS] - run libFuzzer over the whole ppqfmt pipeline.
#
# Builds tests/fuzz_target.c with the library sources under clang's
# -fsanitize=fuzzer,address,undefined into build/fuzz/ppqfmt_fuzz, seeds
# build/fuzz/corpus with the models of testdata/, the ONNX backend-suite models, the hostile
# models of scripts/make_bad_inputs.py, then fuzzes for
# SECONDS (default 60; FUZZ_SECONDS also works) in libFuzzer's fork mode with
# FUZZ_JOBS workers (default: the number of CPUs, at most 4), which keeps going
# after a crash. Crashes, leaks, timeouts and out-of-memory inputs land in
# build/fuzz/artifacts/. Prints the total number of executions and the crashes
# found; exits 1 if this run found any.
#
# Environment: FUZZ_JOBS, FUZZ_ARGS (extra libFuzzer flags; no folders: the
# first folder given is where libFuzzer writes new inputs), FUZZ_IDEMPOTENT=1
# (also abort when formatting the output again changes it), CC_FUZZ (default
# clang), PYTHON (default /usr/bin/python3).
# Reproduce an artifact: PPQ_FUZZ_DIR=build/fuzz/extdir build/fuzz/ppqfmt_fuzz
# FILE...; replay tests/regress the same way (or with build/tests/fuzz_target).
set -e
cd "$(dirname "$0")/.."

SECS=${1:-${FUZZ_SECONDS:-60}}
case "$SECS" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 1;; esac
CC=${CC_FUZZ:-clang}
PYTHON=${PYTHON:-/usr/bin/python3}
F=build/fuzz
BIN=$F/ppqfmt_fuzz
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 4 ] && JOBS=4
[ "$JOBS" -ge 1 ] || JOBS=1

# --- dependencies: clang and its sanitizer/libFuzzer runtimes --------------
missing=""
command -v clang >/dev/null 2>&1 || missing="$missing clang"
for p in libclang-rt-14-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

# --- build ------------------------------------------------------------------
[ -f build/gen/onnx.pb-c.c ] && [ -f build/gen/onnx.pb-c.h ] ||
    make --no-print-directory build/gen/onnx.pb-c.c build/gen/onnx.pb-c.h
mkdir -p $F/corpus $F/artifacts $F/seeds
SRCS="$(ls core/*/*.c onnx/*.c formatter/*.c) build/gen/onnx.pb-c.c tests/fuzz_target.c"
rebuild=1
if [ -x $BIN ]; then
    rebuild=0
    for s in $SRCS core/*/*.h onnx/*.h formatter/*.h build/gen/onnx.pb-c.h "$0"; do
        [ "$s" -nt $BIN ] && rebuild=1 && break
    done
fi
if [ $rebuild = 1 ]; then
    echo "building $BIN"
    # shellcheck disable=SC2086
    $CC -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
        -fno-omit-frame-pointer -std=c11 -D_GNU_SOURCE -DPPQ_LIBFUZZER -Ibuild/gen \
        -o $BIN.tmp $SRCS -lprotobuf-c -lm -pthread
    mv $BIN.tmp $BIN
fi

# --- seeds ------------------------------------------------------------------
for m in testdata/*.onnx testdata/*/*.onnx; do  # testdata/<pass>/<case>.onnx -> <pass>-<case>.onnx
    [ -f "$m" ] && cp "$m" "$F/seeds/$(echo "${m#testdata/}" | tr / -)"
done
for d in node pytorch-converted pytorch-operator simple; do
    for m in /usr/share/libonnx-testdata/data/$d/*/model.onnx; do
        [ -f "$m" ] || continue
        c=$(basename "$(dirname "$m")")
        [ -f "$F/seeds/$d-$c.onnx" ] || cp "$m" "$F/seeds/$d-$c.onnx"
    done
done
# The hostile models (flat files only: libFuzzer reads folders recursively,
# and the external-data cases are folders). nested_type_* is left out: it
# overflows the stack in protobuf-c (tests/regress/README.md), and a seed that
# crashes makes every fork-mode job start with that crash.
if [ ! -f $F/bad/cases.json ] && "$PYTHON" -c 'import onnx' 2>/dev/null; then
    "$PYTHON" scripts/make_bad_inputs.py $F/bad >/dev/null || true
fi
for b in $F/bad/*.onnx; do
    case "$b" in *nested_type_*) continue;; esac
    # big graphs (the 100k-node cases) would only time out under ASan
    [ -f "$b" ] && [ ! -L "$b" ] && [ "$(stat -c %s "$b")" -le 200000 ] &&
        cp "$b" "$F/seeds/bad-$(basename "$b")"
done

# A dictionary of ONNX names the passes look for.
cat > $F/onnx.dict <<'EOF'
"Conv"
"ConvTranspose"
"Gemm"
"Add"
"BatchNormalization"
"Constant"
"Identity"
"Slice"
"Clip"
"Pad"
"Resize"
"Upsample"
"If"
"Loop"
"Scan"
"TopK"
"Dropout"
"Scatter"
"Relu"
"MatMul"
"Cast"
"ai.onnx"
"value"
"value_float"
"value_floats"
"value_int"
"value_ints"
"value_string"
"value_strings"
"sparse_value"
"then_branch"
"else_branch"
"body"
"axes"
"starts"
"ends"
"min"
"max"
"pads"
"mode"
"scales"
"epsilon"
"group"
"transB"
"alpha"
"beta"
"spatial"
"training_mode"
"coordinate_transformation_mode"
"nearest_mode"
"location"
"offset"
"length"
"to"
"k"
"data.bin"
"../"
"/etc/passwd"
EOF

# External data: the target loads it from $F/extdir (data.bin, 4 KiB).
mkdir -p $F/extdir
[ -f $F/extdir/data.bin ] || head -c 4096 /dev/urandom > $F/extdir/data.bin

# --- fuzz -------------------------------------------------------------------
LOG=$F/fuzz.log
before=$(ls $F/artifacts | wc -l)
echo "fuzzing for ${SECS}s with $JOBS worker(s); log in $LOG"
set +e
# shellcheck disable=SC2086
PPQ_FUZZ_IDEMPOTENT=${FUZZ_IDEMPOTENT:-0} PPQ_FUZZ_DIR=$F/extdir ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    $BIN -fork=$JOBS -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
    -max_total_time="$SECS" -max_len=200000 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -timeout=10 -dict=$F/onnx.dict -artifact_prefix=$F/artifacts/ -print_final_stats=1 \
    ${FUZZ_ARGS:-} $F/corpus $F/seeds > "$LOG" 2>&1
rc=$?
set -e

# fork mode prints "#EXECS: cov: ..." progress lines with the running total.
execs=$(grep -oE '^#[0-9]+:' "$LOG" | tail -n 1 | tr -d '#:')
[ -n "$execs" ] || execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$LOG" |
                           awk '{s += $2} END {print s + 0}')
total_file=$F/total_execs
prev=$(cat $total_file 2>/dev/null || echo 0)
echo $((prev + execs)) > $total_file
after=$(ls $F/artifacts | wc -l)
found=$((after - before))
echo "executions: $execs (all runs so far: $((prev + execs)))"
grep -E '^#[0-9]+:' "$LOG" | tail -n 1 | sed 's/^/libFuzzer: /'
echo "corpus: $(ls $F/corpus | wc -l) inputs"
if [ "$found" -gt 0 ]; then
    echo "new artifacts in $F/artifacts: $found"
    # what each one trips, from a replay (first error line)
    for a in $(ls -t $F/artifacts | head -n "$found"); do
        why=$(PPQ_FUZZ_IDEMPOTENT=${FUZZ_IDEMPOTENT:-0} PPQ_FUZZ_DIR=$F/extdir \
              timeout 60 $BIN "$F/artifacts/$a" 2>&1 |
              grep -m1 -E 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error|fuzz_target:|ERROR: libFuzzer' |
              sed -E 's/^==[0-9]+== ?//')
        echo "  $a: ${why:-(does not reproduce alone)}"
    done
    echo "reproduce: PPQ_FUZZ_DIR=$F/extdir $BIN $F/artifacts/NAME (add PPQ_FUZZ_IDEMPOTENT=1 for idempotence finds)"
    echo "minimise:  PPQ_FUZZ_DIR=$F/extdir $BIN -minimize_crash=1 -runs=10000 -exact_artifact_path=tests/regress/NAME.onnx $F/artifacts/NAME"
    exit 1
fi
if [ $rc -ne 0 ] && ! grep -q 'INFO: fuzzed for' "$LOG" && ! grep -q 'INFO: exiting' "$LOG"; then
    echo "libFuzzer failed (exit $rc); see $LOG" >&2
    tail -n 20 "$LOG" >&2
    exit 1
fi
echo "crashes: 0"
