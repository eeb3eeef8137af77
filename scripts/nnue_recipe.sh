#!/usr/bin/env bash
# Issue 31's NNUE recipe within one wall-clock budget (default: 60 minutes on this machine's cores).
#   1. TDLeaf(lambda) trains the NNUE-style network (experiments/american8/td_leaf_nnue.toml) for
#      TD_MINUTES on all cores;
#   2. its own compiled search scores positions at depth DEPTH, one process a core, for SCORE_MINUTES
#      (scripts/search_targets.py score; an endgame database folder if given);
#   3. the network is fitted to them, one Adam step per 40 positions (the passes over the data of
#      the depth-12 rounds in results/american8/README.md).
# Usage: bash scripts/nnue_recipe.sh SEED OUT_FOLDER [ENDGAME_FOLDER]
# Writes OUT_FOLDER/final.safetensors and OUT_FOLDER/recipe.json (each step's wall seconds).
set -euo pipefail
seed=${1:?usage: nnue_recipe.sh SEED OUT_FOLDER [ENDGAME_FOLDER]}
out=${2:?usage: nnue_recipe.sh SEED OUT_FOLDER [ENDGAME_FOLDER]}
endgame=${3:-}
td_minutes=${TD_MINUTES:-20}
score_minutes=${SCORE_MINUTES:-33}
depth=${DEPTH:-12}
cores=${CORES:-$(nproc)}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
start=$(date +%s)

neurocheckers evolve "$here/experiments/american8/td_leaf_nnue.toml" --seed "$seed" \
  --set budget_minutes="$td_minutes" --out "$out/td" --no-plot
neurocheckers export "$out"/td/td_leaf_nnue_american8_seed"$seed"_* --out "$out/td_leaf.safetensors"
trained=$(date +%s)

scorers=()
for core in $(seq 0 $((cores - 1))); do
  taskset -c "$core" python "$here/scripts/search_targets.py" score "$out/td_leaf.safetensors" \
    --depth "$depth" --minutes "$score_minutes" --seed $((seed * 100 + core + 1)) \
    ${endgame:+--endgame "$endgame"} --report-every 500 --out "$out/scored_$core.npz" > "$out/score_$core.log" &
  scorers+=($!)
done
for scorer in "${scorers[@]}"; do
  wait "$scorer" || { echo "nnue_recipe: a scoring process failed (see $out/score_*.log)" >&2; exit 1; }
done
scored=$(date +%s)

python "$here/scripts/search_targets.py" fit "$out/td_leaf.safetensors" "$out"/scored_*.npz \
  --positions-per-step 40 --out "$out/final.safetensors"
end=$(date +%s)
printf '{"seed": %s, "td_leaf_s": %s, "scoring_s": %s, "fit_s": %s, "total_s": %s}\n' \
  "$seed" $((trained - start)) $((scored - trained)) $((end - scored)) $((end - start)) | tee "$out/recipe.json"
