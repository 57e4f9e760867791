#!/usr/bin/env bash
# Runs every fuzz target built by Fuzz/build.sh, each from its seed corpus in Fuzz/Corpus/<target>/.
#
#   Fuzz/run.sh [--quick]        3,000 runs per target with a fixed seed, at most 15 s each: what CI runs
#   Fuzz/run.sh --long           10 min per target (an hour for the six); run it before a release or after
#                                touching a parser
#   Fuzz/run.sh --seconds N      N seconds per target
#   Fuzz/run.sh ... TARGET...    only these targets (Feed, JSONParse, Journal, PropertyList, StoreLoader, Versions)
#
# New inputs that reach new code go to .build/fuzz/corpus/<target>/ (the committed seed corpus is only
# read). A crash, an ASan report or a broken invariant stops that target, leaves the input in
# .build/fuzz/artifacts/<target>/ and makes the script exit 1: add the input to Fuzz/Corpus/<target>/
# and a regression test (Tests/PrefsUserDefaultsTests/FuzzRegressionTests.swift), then fix the library.
# Reproduce one input with: .build/fuzz/fuzz-<target> FILE
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${FUZZ_BUILD_DIR:-$root/.build/fuzz}"
seconds=15
runs=""
seed=""
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) seconds=15; runs=3000; seed=1 ;;  # CI: a fixed seed and run count, so a pass is reproducible
        --long) seconds=600 ;;
        --seconds) seconds="$2"; shift ;;
        -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "Error: unknown option $1" >&2; echo "usage: Fuzz/run.sh [--quick | --long | --seconds N] [TARGET...]" >&2; exit 64 ;;
        *) targets+=("$1") ;;
    esac
    shift
done
if [ ${#targets[@]} -eq 0 ]; then
    for target in "$root"/Fuzz/Targets/*.swift; do targets+=("$(basename "$target" .swift)"); done
fi

# Swift's crash backtracer would wait on a process libFuzzer is tearing down: let libFuzzer report.
export SWIFT_BACKTRACE=enable=no
# Leak checking would report the Swift runtime's metadata caches, which live as long as the process.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

status=0
summary=()
for target in "${targets[@]}"; do
    binary="$out/fuzz-$target"
    [ -x "$binary" ] || { echo "Error: $binary is missing; run Fuzz/build.sh first" >&2; exit 1; }
    corpus="$out/corpus/$target"
    artifacts="$out/artifacts/$target/"
    mkdir -p "$corpus" "$artifacts"
    log="$out/$target.log"
    echo "fuzz: $target for $seconds s"
    set +e
    "$binary" "$corpus" "$root/Fuzz/Corpus/$target" -max_total_time="$seconds" ${runs:+-runs=$runs} ${seed:+-seed=$seed} -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts" >"$log" 2>&1
    code=$?
    set -e
    # Not "runs": that is the -runs cap every target gets (reusing it capped each later target at the previous
    # one's execution count, and passed -runs=? after a crash).
    executions="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    coverage="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')"
    if [ $code -eq 0 ]; then
        summary+=("$(printf '  %-12s %10s executions  %6s coverage points  ok' "$target" "$executions" "$coverage")")
    else
        status=1
        summary+=("$(printf '  %-12s %10s executions  %6s coverage points  FAILED (exit %s)' "$target" "$executions" "$coverage" "$code")")
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written|==[0-9]+==' "$log" | head -20 >&2 || true
        echo "  full log: $log; input: $(ls -t "$artifacts" | head -1)" >&2
    fi
done
echo "fuzz summary ($seconds s per target):"
printf '%s\n' "${summary[@]}"
exit $status
