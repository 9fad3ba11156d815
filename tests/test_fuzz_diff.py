#!/usr/bin/python3
"""Differential fuzzing in make test: the known-bug models and a fixed set of seeds.

Usage: tests/test_fuzz_diff.py [--count N] [--jobs J]

1. Every row of tests/regress/diff/README.md is replayed with its command
   (scripts/fuzz_diff.py replay): a `known` row's check must still fail (an
   expected failure; if it passes: `XPASS: remove from known bugs`), a `fixed`
   row's checks must all pass.
2. Seeds 0..N-1 (default 240) go through the generator and every check of
   scripts/fuzz_diff.py (default passes, --passes=none, random pass subsets),
   except the seeds of `known` rows. A seed the generator cannot make valid
   (a reject) fails too: the generator must make valid models.
The last line is `fuzz_diff: N passed, M failed` (N counts the checks).
Run with Debian's /usr/bin/python3 (python3-onnx, numpy; onnxruntime via node).
"""
import argparse
import os
import sys

import testlib  # tests/, beside this file

sys.path.insert(0, testlib.SCRIPTS)
import fuzz_diff  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIFF_DIR = os.path.join(REPO, "tests", "regress", "diff")
README = os.path.join(DIFF_DIR, "README.md")

T = testlib.Tally("fuzz_diff")


def replay_row(row):
    name = "replay %s (%s)" % (row["file"], row["check"])
    err, results, why = fuzz_diff.replay(DIFF_DIR, row)
    if why:
        return T.report(name, "the model is no longer valid: " + why)
    if row["status"] == "known":
        xpass = "XPASS: remove from known bugs (%s now passes)" % row["check"]
        T.report(name, None if err else xpass)
        return
    for check, e in results:
        T.report("%s %s" % (name, check), e)


def fixed_seeds(count, jobs):
    known = fuzz_diff.known_seeds(README)
    stats, elapsed = fuzz_diff.run(0, count=count, jobs=jobs, opts={"skip": known})
    T.passed += stats.passed
    for seed, check, err, _, _ in stats.failures:
        T.report("seed %d %s" % (seed, check), err)
    T.failed += stats.failed - len(stats.failures)    # the other failing checks of those seeds
    for why, n in stats.reject_why.items():
        T.report("generator rejects (%d seeds)" % n, why)
    print("fixed seeds: %d models, %d skipped as known, %.1f s, %d checks skipped (no kernel)" % (
        stats.models, len(known & set(range(count))), elapsed, stats.skipped))
    print("models each pass changed (any configuration): " + ", ".join(
        "%s %d" % (p, stats.changed.get(p, 0)) for p in fuzz_diff.pass_names()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    for row in fuzz_diff.known_rows(README):
        replay_row(row)
    fixed_seeds(a.count, a.jobs)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
