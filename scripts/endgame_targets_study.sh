#!/usr/bin/env bash
# Issue 22, item 6: does TD(lambda) with exact endgame targets learn faster per minute? For each seed,
# two runs of experiments/learners/td_lambda_american6.toml side by side (one core each, the same
# budget), one with the american6 database up to 6 pieces as targets, one without; then each final
# network against material at equal depth 2 and against each other (200 games, 100 paired openings).
#   scripts/endgame_targets_study.sh DB_DIR OUT_DIR MINUTES SEED...
# ARMS="decisive plain" compares the database's wins and losses alone (endgame_draws = false) instead.
set -euo pipefail
db=$1 out=$2 minutes=$3
shift 3
config=experiments/learners/td_lambda_american6.toml
read -r -a arms <<< "${ARMS:-exact plain}"
for seed in "$@"; do
  for arm in "${arms[@]}"; do
    extra=()
    [ "$arm" = exact ] && extra=(--set "td_lambda.endgame_targets=$db")
    [ "$arm" = decisive ] && extra=(--set "td_lambda.endgame_targets=$db" --set td_lambda.endgame_draws=false)
    NEUROCHECKERS_DEVICES=1 neurocheckers evolve "$config" --seed "$seed" --out "$out/$arm" \
      --set run.budget_minutes="$minutes" --set run.epochs=100000 "${extra[@]}" > "$out/${arm}_seed$seed.log" 2>&1 &
  done
  wait
  for arm in "${arms[@]}"; do
    neurocheckers export "$out/$arm"/td_lambda_american6_seed"$seed"_* --out "$out/${arm}_seed$seed.safetensors"
  done
  for arm in "${arms[@]}"; do
    neurocheckers match "alphabeta:2:$out/${arm}_seed$seed.safetensors" alphabeta:2 --rules american6 \
      --games 200 --openings 100 --json > "$out/${arm}_seed${seed}_vs_material.json"
  done
  neurocheckers match "alphabeta:2:$out/${arms[0]}_seed$seed.safetensors" \
    "alphabeta:2:$out/${arms[1]}_seed$seed.safetensors" --rules american6 --games 200 --openings 100 --json \
    > "$out/${arms[0]}_vs_${arms[1]}_seed$seed.json"
done
