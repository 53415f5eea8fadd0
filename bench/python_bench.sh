#!/usr/bin/env bash
# python_bench — MicroPython on the machine: for each case, the instructions the interpreter retires,
# the trace tokens (and loading tokens) and the seconds inside the weights, and the instructions and
# seconds on the golden emulator. Every figure comes from `rvformer run --stats` (README).
#
#   bench/python_bench.sh [--emulator-only] [--corpus | CASE...]
#
# CASE is a name in examples/python/ (default: hello power factorial loop: print("hello"),
# print(2**1000), a recursive factorial(200), a 100-iteration loop) or a script's path; --corpus runs
# every script of the corpus (firmware/micropython/tests/, about 115 million instructions: a day in
# the weights). RVFORMER (default build/rvformer) is the binary used.
set -euo pipefail
cd "$(dirname "$0")/.."
rvformer=${RVFORMER:-build/rvformer}
weights=1
if [[ ${1:-} == --emulator-only ]]; then
  weights=0
  shift
fi
if [[ ${1:-} == --corpus ]]; then
  set -- firmware/micropython/tests/*.py
fi
cases=("$@")
((${#cases[@]})) || cases=(hello power factorial loop)

# The --stats line of one run: instructions, seconds, trace and loading tokens (weights only).
stats() { "$rvformer" run --stats --progress 0 "$@" 2>&1 >/dev/null | tail -1; }

field() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d.get(sys.argv[2], "-"))' "$1" "$2"; }

printf '%-22s %12s %12s %12s %12s %14s %12s\n' case instructions trace_tokens load_tokens weights_s \
  emulator_instr emulator_s
for name in "${cases[@]}"; do
  script=$name
  [[ $name == *.py ]] || script=examples/python/$name.py
  [[ -f $script ]] || { echo "python_bench: no $script" >&2; exit 2; }
  name=$(basename "$script" .py)
  golden=$(stats --on emulator "$script")
  trace=- load=- seconds=- instructions=$(field "$golden" instructions)
  if ((weights)); then
    inside=$(stats "$script")
    instructions=$(field "$inside" instructions)
    trace=$(field "$inside" trace_tokens)
    load=$(field "$inside" load_tokens)
    seconds=$(field "$inside" seconds)
  fi
  printf '%-22s %12s %12s %12s %12s %14s %12s\n' "$name" "$instructions" "$trace" "$load" "$seconds" \
    "$(field "$golden" instructions)" "$(field "$golden" seconds)"
done
