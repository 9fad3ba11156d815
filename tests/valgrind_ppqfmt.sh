#!/bin/sh
# valgrind_ppqfmt.sh - ppqfmt under valgrind, for the suites' PPQFMT variable:
# memcheck by default (any memory error or leak makes the run exit 99), or
# VALGRIND_TOOL=helgrind (any data race or lock misuse between the writer and
# its filler thread exits 99).
bin="$(dirname "$0")/../build/ppqfmt"
if [ "${VALGRIND_TOOL:-memcheck}" = helgrind ]; then
    exec valgrind -q --tool=helgrind --error-exitcode=99 "$bin" "$@"
fi
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$bin" "$@"
