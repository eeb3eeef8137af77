#!/usr/bin/env bash
# The strength experiment (results/strength/): each setting of experiments/strength/ under one
# wall-time budget, then the final boss of each rated by the gauntlet, and the strength curves of all
# runs overlaid. Writes into $OUT (default runs/strength, ignored by git); copy what you keep.
#
#   bash scripts/strength_study.sh [NAME...]     # names of experiments/strength/*.toml (default: all)
#   bash scripts/strength_study.sh experiments/learners/td_lambda_simple6.toml ...   # or config paths
#
# Settings (environment): OUT (runs/strength), BUDGET (minutes of training wall time per run, 15),
# OPENINGS (gauntlet openings, 100 = 200 games a row), EXTRA (more --set KEY=VALUE for every run).
# Pin it to cores with taskset to say what it ran on, e.g. `taskset -c 0 bash scripts/...` with
# NEUROCHECKERS_DEVICES=1 for one core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/strength}
BUDGET=${BUDGET:-15}
OPENINGS=${OPENINGS:-100}
EXTRA=${EXTRA:-}
command -v neurocheckers >/dev/null || { echo "strength_study.sh: neurocheckers is not installed" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} -eq 0 ]; then  # every setting of experiments/strength/, as the header says
    names=()
    for file in experiments/strength/*.toml; do names+=("$(basename "$file" .toml)"); done
fi
mkdir -p "$OUT/runs"
for name in "${names[@]}"; do
    config=experiments/strength/$name.toml
    if [[ $name == *.toml ]]; then  # a config path: experiments/learners/td_lambda_simple6.toml
        config=$name
        name=$(basename "$name" .toml)
    fi
    [ -f "$config" ] || { echo "strength_study.sh: no $config" >&2; exit 2; }
    sets=(--set "budget_minutes=$BUDGET" --set epochs=100000)
    for kv in $EXTRA; do sets+=(--set "$kv"); done
    existing=$(ls -d "$OUT"/runs/"$name"_seed*_* 2>/dev/null | tail -1 || true)
    if [ -n "$existing" ]; then
        neurocheckers evolve --resume "$existing"
        run=$existing
    else
        before=$(date +%s)
        neurocheckers evolve "$config" "${sets[@]}" --out "$OUT/runs"
        run=$(ls -d "$OUT"/runs/"$name"_seed*_* | tail -1)
        echo "$name: $(( $(date +%s) - before )) s including compiling and probes" > "$OUT/runs/$name.time"
    fi
    mkdir -p "$OUT/$name"
    neurocheckers export "$run" --out "$OUT/$name/final_boss.safetensors"
    rules=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["config"]["rules"])' "$run/config.json")
    neurocheckers gauntlet "$OUT/$name/final_boss.safetensors" --rules "$rules" --openings "$OPENINGS" \
        --out "$OUT/$name"
    cp "$run/config.json" "$run/metrics.csv" "$OUT/$name/"
    neurocheckers plot "$run" --out "$OUT/$name/fitness.png"
done
runs=()
labels=()
for name in "${names[@]}"; do
    name=$(basename "$name" .toml)
    runs+=("$(ls -d "$OUT"/runs/"$name"_seed*_* | tail -1)")
    labels+=(--label "$name")
done
neurocheckers plot "${runs[@]}" "${labels[@]}" --out "$OUT/all_fitness.png"
