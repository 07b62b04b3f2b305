#!/usr/bin/env bash
# Bounded fuzzing of every libFuzzer target built in build/fuzz/ (fuzz_*):
#
#   fuzz/run.sh [SECONDS]        (default 30, shared evenly between targets)
#
# For each target fuzz_<name>:
#   1. replay every input in fuzz/regress/<name>/ (crashes found earlier;
#      each must now run clean), then
#   2. fuzz for SECONDS/targets seconds, starting from a scratch copy of the
#      seed corpus fuzz/corpus/<name>/ in fuzz/corpus-work/<name>/ (gitignored,
#      so seeds in git never grow by themselves).
# Exits non-zero when a replay or a fuzzing run fails; a new crash input is
# left in fuzz/corpus-work/<name>-artifacts/ -- minimise it, then move it to
# fuzz/regress/<name>/ together with the fix.
#
# Environment: HS_FUZZ_BUILD (default build/fuzz), HS_FUZZ_RSS_MB (2048),
# HS_FUZZ_TIMEOUT (per-input seconds, 10), HS_FUZZ_SEED (libFuzzer -seed;
# unset or 0: a random seed each run). The test suite fixes the seed so that
# its bounded run explores the same inputs on every machine and a CI result
# does not depend on luck; long exploratory runs leave it unset.
set -uo pipefail
cd "$(dirname "$0")/.."

total="${1:-30}"
bin_dir="${HS_FUZZ_BUILD:-build/fuzz}"
rss_mb="${HS_FUZZ_RSS_MB:-2048}"
per_input_timeout="${HS_FUZZ_TIMEOUT:-10}"
seed_args=()
if [ -n "${HS_FUZZ_SEED:-}" ] && [ "${HS_FUZZ_SEED}" != 0 ]; then
  seed_args=(-seed="$HS_FUZZ_SEED")
fi
work_root="fuzz/corpus-work"

if ! [[ "$total" =~ ^[0-9]+$ ]] || [ "$total" -lt 1 ]; then
  echo "usage: $0 [SECONDS]  (a positive whole number)" >&2
  exit 2
fi

targets=()
for f in "$bin_dir"/fuzz_*; do
  [ -f "$f" ] && [ -x "$f" ] && targets+=("$f")
done
if [ ${#targets[@]} -eq 0 ]; then
  if compgen -G "fuzz/fuzz_*.c" >/dev/null; then
    echo "fuzz: no targets in $bin_dir although fuzz/fuzz_*.c exist; run: bash scripts/build.sh fuzz" >&2
    exit 1
  fi
  echo "fuzz: no fuzz targets defined; nothing to do"
  exit 0
fi

per=$(( total / ${#targets[@]} ))
[ "$per" -lt 1 ] && per=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
mkdir -p "$work_root"

failed=()
for bin in "${targets[@]}"; do
  target="$(basename "$bin")"
  name="${target#fuzz_}"
  log="$work_root/$name.log"
  : >"$log"

  # 1. Replay the regression inputs, one file per argument (a directory
  #    argument would make libFuzzer start fuzzing instead).
  regress=()
  if [ -d "fuzz/regress/$name" ]; then
    while IFS= read -r -d '' f; do regress+=("$f"); done \
      < <(find "fuzz/regress/$name" -type f ! -name '.*' ! -name 'README*' -print0 | sort -z)
  fi
  if [ ${#regress[@]} -gt 0 ]; then
    if "$bin" -timeout="$per_input_timeout" -rss_limit_mb="$rss_mb" "${regress[@]}" \
        >>"$log" 2>&1; then
      echo "fuzz: $target: replayed ${#regress[@]} regression inputs: ok"
    else
      echo "fuzz: $target: REGRESSION: a fuzz/regress/$name input fails again" >&2
      grep -m 8 -E 'runtime error|ERROR: |SUMMARY' "$log" >&2
      echo "  (full log: $log)" >&2
      failed+=("$target (regress)")
      continue
    fi
  else
    echo "fuzz: $target: no regression inputs in fuzz/regress/$name"
  fi

  # 2. Fuzz from a scratch copy of the seeds.
  work="$work_root/$name"
  artifacts="$work_root/$name-artifacts/"
  rm -rf "$work"
  mkdir -p "$work" "$artifacts"
  if [ -d "fuzz/corpus/$name" ]; then
    find "fuzz/corpus/$name" -type f -exec cp -t "$work" {} +
  else
    echo "fuzz: $target: no seed corpus fuzz/corpus/$name; starting empty"
  fi
  seeds=$(find "$work" -type f | wc -l)
  if "$bin" "${seed_args[@]}" -max_total_time="$per" -timeout="$per_input_timeout" -rss_limit_mb="$rss_mb" \
      -print_final_stats=1 -artifact_prefix="$artifacts" "$work" >>"$log" 2>&1; then
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz: $target: ${per}s from $seeds seeds, ${execs:-?} executions: ok"
  else
    echo "fuzz: $target: FAILED (log $log, crash input in $artifacts)" >&2
    grep -m 8 -E 'runtime error|ERROR: |SUMMARY|Test unit written' "$log" >&2
    failed+=("$target")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failures: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets clean"
