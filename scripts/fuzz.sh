#!/usr/bin/env bash
# Fuzz the request-line parser (tokenizer, command table, arguments) with libFuzzer:
#   scripts/fuzz.sh [seconds]          (default 60)
#
# Builds the ScavengerProtocolFuzzer product with -sanitize=fuzzer,address into its own scratch
# path (.build-fuzz), writes a seed corpus and a dictionary made from the command table, then runs
# libFuzzer over two corpus directories: .data/fuzz/corpus (seeds and what fuzzing adds; kept
# between runs, not committed) and Tests/ScavengerProtocolTests/FuzzRegressions (committed, only
# read). Each input is one request line; the checks are ScavengerLineCheck's (one well-formed
# reply per line, never ERR INTERNAL, database work parsed but never run).
#
# A crash (or a timeout, a leak, running out of memory) is copied into FuzzRegressions: fix the
# cause, and commit the input with the fix, FuzzRegressionTests replays it from then on. The exit
# code is then 1; 0 when nothing was found.
#
# Nothing to install beyond the Swift toolchain: it ships libFuzzer and the ASan runtime.
# To replay one input by hand: .build-fuzz/debug/ScavengerProtocolFuzzer FILE
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
PROJECT_ROOT=$(pwd -P)
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

seconds=${1:-60}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die "usage: scripts/fuzz.sh [seconds]   (a whole number of seconds, default 60)"

product=ScavengerProtocolFuzzer
scratch=.build-fuzz
work=.data/fuzz
corpus=$work/corpus
artifacts=$work/artifacts
dictionary=$work/dictionary
log_file=$work/fuzz.log
regressions=Tests/ScavengerProtocolTests/FuzzRegressions

ensure_packages
ensure_swift

# The runtimes come with the toolchain (usr/lib/clang/<version>/lib/linux); say so plainly if not.
toolchain_lib=$(dirname "$(readlink -f "$(command -v swift)")")/../lib
if ! compgen -G "$toolchain_lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null \
    || ! compgen -G "$toolchain_lib/clang/*/lib/linux/libclang_rt.asan-*.a" >/dev/null; then
    die "this Swift toolchain has no libFuzzer or ASan runtime (libclang_rt.fuzzer/asan in $toolchain_lib/clang/*/lib/linux): install a swift.org toolchain"
fi

# -D SCAVENGER_FUZZ makes the target a libFuzzer binary; lld, because gold warns about every
# ASan check symbol it cannot export.
log "building $product with -sanitize=fuzzer,address in $scratch"
build_started=$SECONDS
swift build -c debug --product "$product" --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DSCAVENGER_FUZZ \
    -Xswiftc -use-ld=lld
log "fuzz build took $((SECONDS - build_started)) s"
binary=$scratch/debug/$product

rm -rf "$artifacts"
mkdir -p "$corpus" "$artifacts" "$regressions"

# LeakSanitizer cannot see a reference that Swift keeps in a multi-payload enum under any case
# but the first with a payload: the case tag sits in the pointer's spare bits. NIOThreadPool's
# state (.shuttingDown([Bool]), then .running(Deque)) is such an enum, so the Deque of each pool
# the check board starts (once, for the whole run) is reported as leaked at exit.
printf 'leak:NIOThreadPool\n' >"$work/lsan.supp"
export LSAN_OPTIONS=suppressions=$work/lsan.supp
# libFuzzer reports a crash and saves its input; Swift's backtracer would only slow that down.
export SWIFT_BACKTRACE=enable=no

# The seeds include real NEARBY cursors, read from the check board.
"$binary" --write-seeds "$corpus" --write-dictionary "$dictionary" >/dev/null

log "fuzzing for $seconds s (log: $log_file)"
status=0
"$binary" "$corpus" "$regressions" \
    -dict="$dictionary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 >"$log_file" 2>&1 || status=$?

final_stat() { sed -n "s/^stat::$1: *//p" "$log_file" | tail -n 1; }
runs=$(final_stat number_of_executed_units)
rate=$(final_stat average_exec_per_sec)
added=$(final_stat new_units_added)
coverage=$(grep -oE '(INITED|DONE|pulse|NEW|REDUCE) +cov: [0-9]+' "$log_file" | tail -n 1 | grep -oE '[0-9]+$' || true)
corpus_size=$(find "$corpus" -type f | wc -l)

findings=()
for file in "$artifacts"/*; do
    if [[ -f $file ]]; then findings+=("$file"); fi
done

printf '==> fuzz summary: %s runs in %s s (%s exec/s), coverage %s edges, %s new inputs, corpus %s files\n' \
    "${runs:-?}" "$seconds" "${rate:-?}" "${coverage:-?}" "${added:-?}" "$corpus_size" >&2

if ((${#findings[@]} > 0)); then
    for file in "${findings[@]}"; do
        cp "$file" "$regressions/"
        warn "found $(basename "$file"); copied into $regressions"
    done
    grep -E -m 5 'Fatal error|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|SUMMARY' "$log_file" >&2 || true
    die "the fuzzer found ${#findings[@]} failing input(s): see $log_file; fix them and commit the inputs in $regressions"
fi
if ((status != 0)); then
    tail -n 30 "$log_file" >&2
    die "the fuzzer exited with $status without saving an input: see $log_file"
fi
log "no crash found"
