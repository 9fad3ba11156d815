#!/bin/sh
# valgrind_ppqfmt.sh - ppqfmt under valgrind memcheck, for the suites'
# PPQFMT variable: any memory error or leak makes the run exit 99.
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    "$(dirname "$0")/../build/ppqfmt" "$@"
