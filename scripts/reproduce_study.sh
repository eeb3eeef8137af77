#!/usr/bin/env bash
# Reproduce the reference study's experiments into results/ (what results/README.md reports).
#
#   bash scripts/reproduce_study.sh [STAGE...]      # stages: base grid lineage compare evaluate plots
#
# base:     the study's base case, all 512 epochs (experiments/base.toml)
# grid:     the study's grid (base and six variants) for VARIANT_EPOCHS epochs each (default 512)
# lineage:  Table 1 (the base run's boss every 32 epochs against its final boss) and a round-robin
# compare:  Tables 2-4 over the grid runs
# evaluate: export the base run's final boss; play it against random, greedy-material, alpha-beta 2-4
# plots:    fitness over epochs of the base run and of the grid, overlaid
# Needs an installed neurocheckers (README). Every figure in results/ comes from these commands.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-results}
GRID=${GRID:-$OUT/study_grid}  # the grid's sweep folder (results/h100_grid/study_grid: run on an H100)
VARIANT_EPOCHS=${VARIANT_EPOCHS:-512}
SIMS=${SIMS:-16}
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(base grid lineage compare evaluate plots)
mkdir -p "$OUT"

base_run() { ls -d "$OUT"/runs/base_seed0_* 2>/dev/null | sort | tail -n 1; }
grid_run() { ls -d "$GRID"/"$1"_seed* 2>/dev/null | sort | tail -n 1; }
timed() { # timed LOG COMMAND...: run, show and keep the output, and append the wall time
    local log=$1
    shift
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    echo "wall seconds: $((SECONDS - start))" | tee -a "$log"
}

for stage in "${stages[@]}"; do
    case $stage in
    base)
        if [ -n "$(base_run)" ]; then
            timed "$OUT/base_evolve.log" neurocheckers evolve --resume "$(base_run)"
        else
            timed "$OUT/base_evolve.log" neurocheckers evolve experiments/base.toml --out "$OUT/runs"
        fi
        ;;
    grid)
        timed "$OUT/grid_sweep.log" neurocheckers sweep experiments/study_grid.toml \
            --out "$(dirname "$GRID")" --epochs "$VARIANT_EPOCHS"
        ;;
    lineage)
        timed "$OUT/lineage.log" neurocheckers lineage "$(base_run)" --games 200 --every 32 \
            --round-robin-games 50 --sample 12 --out "$OUT/lineage"
        ;;
    compare)
        variants=()
        for name in mutation_high mutation_low layers3 layers7 games4 games16; do
            variants+=("$(grid_run "$name")")
        done
        timed "$(dirname "$GRID")/compare.log" neurocheckers compare "$(grid_run base)" "${variants[@]}" --games 100 \
            --out "$(dirname "$GRID")/compare.csv"
        ;;
    evaluate)
        neurocheckers export "$(base_run)" --out "$OUT/base_final_boss.safetensors"
        agent="$OUT/base_final_boss.safetensors"
        mkdir -p "$OUT/evaluation"
        timed "$OUT/evaluation/random.log" neurocheckers match "mcts:$agent:$SIMS" random --games 50000 \
            --plot "$OUT/evaluation/vs_random_material.png" --json
        timed "$OUT/evaluation/greedy_random.log" neurocheckers match "greedy:$agent" random --games 50000 \
            --json
        for opponent in greedy-material alphabeta:2 alphabeta:3 alphabeta:4; do
            timed "$OUT/evaluation/${opponent/:/}.log" neurocheckers match "mcts:$agent:$SIMS" "$opponent" \
                --games 1000 --opening-plies 2 --json
        done
        # References: the same search with more simulations, the random first boss, random rollouts.
        for opponent in random alphabeta:3; do
            timed "$OUT/evaluation/sims128_${opponent/:/}.log" neurocheckers match "mcts:$agent:128" \
                "$opponent" --games 1000 --opening-plies 2 --json
        done
        neurocheckers export "$(base_run)" --epoch 0 --out "$OUT/base_first_boss.safetensors"
        for opponent in random alphabeta:2; do
            timed "$OUT/evaluation/first_boss_${opponent/:/}.log" neurocheckers match \
                "mcts:$OUT/base_first_boss.safetensors:$SIMS" "$opponent" --games 1000 --opening-plies 2 --json
            timed "$OUT/evaluation/rollout_${opponent/:/}.log" neurocheckers match "mcts-rollout:$SIMS" \
                "$opponent" --games 1000 --opening-plies 2 --json
        done
        ;;
    plots)
        neurocheckers plot "$(base_run)" --out "$OUT/base_fitness.png"
        runs=()
        for name in base mutation_high mutation_low layers3 layers7 games4 games16; do
            runs+=("$(grid_run "$name")")
        done
        neurocheckers plot "${runs[@]}" --out "$(dirname "$GRID")/grid_fitness.png"
        ;;
    *)
        echo "unknown stage $stage (base grid lineage compare evaluate plots)" >&2
        exit 2
        ;;
    esac
done
