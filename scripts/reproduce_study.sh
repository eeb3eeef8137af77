#!/usr/bin/env bash
# Reproduce the reference study's experiments (what results/README.md reports) into a folder of its
# own, runs/reproduce/ by default (ignored by git). It never writes into results/.
#
#   bash scripts/reproduce_study.sh [STAGE...]      # stages: base grid lineage compare evaluate plots
#
# base:     the study's base case, all 512 epochs (experiments/base.toml) -> $OUT/runs/base_seed0_*
#           (a base run already in $OUT is continued from its checkpoint)
# grid:     the study's grid (base and six variants), VARIANT_EPOCHS epochs each -> $OUT/study_grid/
# lineage:  Table 1 (the base run's boss every 32 epochs against its final boss) and a round-robin
# compare:  Tables 2-4 over the grid runs
# evaluate: export the base run's final boss; play it against random, greedy-material, alpha-beta 2-4
# plots:    fitness over epochs of the base run and of the grid, overlaid
#
# Settings (environment): OUT (default runs/reproduce), VARIANT_EPOCHS (512), SIMS (16).
# Later stages read the runs of earlier ones in $OUT; to read other runs instead, set BASE (a base
# run folder) or GRID (a sweep folder), e.g. the committed ones (outputs still go to $OUT):
#   BASE=results/runs/base_seed0_20261122-191630 GRID=results/h100_grid/study_grid \
#       bash scripts/reproduce_study.sh compare plots
# Needs an installed neurocheckers (README).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/reproduce}
GRID=${GRID:-$OUT/study_grid}
VARIANT_EPOCHS=${VARIANT_EPOCHS:-512}
SIMS=${SIMS:-16}
STAGES="base grid lineage compare evaluate plots"
VARIANTS="mutation_high mutation_low layers3 layers7 games4 games16"

die() {
    echo "reproduce_study.sh: $*" >&2
    exit 2
}

real() { python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' "$1"; }
case "$(real "$OUT")/" in
"$(real results)"/*) die "OUT=$OUT is inside results/, which holds the committed study; choose another folder" ;;
esac
command -v neurocheckers >/dev/null || die "neurocheckers is not installed (see the README's first command)"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || read -ra stages <<<"$STAGES"
for stage in "${stages[@]}"; do
    [[ " $STAGES " == *" $stage "* ]] || die "unknown stage '$stage' (stages: $STAGES)"
done
mkdir -p "$OUT"

base_run() { # the base run: $BASE, or the newest in $OUT/runs; dies with a message when there is none
    local found=${BASE:-$(ls -d "$OUT"/runs/base_seed0_* 2>/dev/null | sort | tail -n 1)}
    [ -n "$found" ] && [ -f "$found/metrics.csv" ] ||
        die "no base run ${BASE:+at BASE=$BASE }(looked in $OUT/runs/): run the 'base' stage first, or set BASE"
    echo "$found"
}
grid_run() { # grid_run NAME: the newest run of that config in $GRID; dies with a message when missing
    local found
    found=$(ls -d "$GRID/$1"_seed* 2>/dev/null | sort | tail -n 1)
    [ -n "$found" ] || die "no '$1' run in $GRID: run the 'grid' stage first, or set GRID to a sweep folder"
    echo "$found"
}
timed() { # timed LOG COMMAND...: run, show and keep the output, and append the wall time
    local log=$1
    shift
    local start=$SECONDS
    "$@" 2>&1 | tee "$log"
    echo "wall seconds: $((SECONDS - start))" | tee -a "$log"
}

for stage in "${stages[@]}"; do
    echo "== $stage (into $OUT)"
    case $stage in
    base)
        if [ -z "${BASE:-}" ] && ls -d "$OUT"/runs/base_seed0_* >/dev/null 2>&1; then
            base=$(base_run)
            timed "$OUT/base_evolve.log" neurocheckers evolve --resume "$base"
        else
            [ -z "${BASE:-}" ] || die "the base stage makes its own run in $OUT/runs; unset BASE"
            timed "$OUT/base_evolve.log" neurocheckers evolve experiments/base.toml --out "$OUT/runs"
        fi
        ;;
    grid)
        [ "$GRID" = "$OUT/study_grid" ] || die "the grid stage writes $OUT/study_grid; unset GRID"
        timed "$OUT/grid_sweep.log" neurocheckers sweep experiments/study_grid.toml --out "$OUT" \
            --epochs "$VARIANT_EPOCHS"
        ;;
    lineage)
        base=$(base_run)
        timed "$OUT/lineage.log" neurocheckers lineage "$base" --games 200 --every 32 \
            --round-robin-games 50 --sample 12 --out "$OUT/lineage"
        ;;
    compare)
        runs=()
        for name in base $VARIANTS; do
            run=$(grid_run "$name")
            runs+=("$run")
        done
        timed "$OUT/compare.log" neurocheckers compare "${runs[@]}" --games 100 --out "$OUT/compare.csv"
        ;;
    evaluate)
        base=$(base_run)
        agent="$OUT/base_final_boss.safetensors"
        first="$OUT/base_first_boss.safetensors"
        neurocheckers export "$base" --out "$agent"
        neurocheckers export "$base" --epoch 0 --out "$first"
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
        for opponent in random alphabeta:2; do
            timed "$OUT/evaluation/first_boss_${opponent/:/}.log" neurocheckers match \
                "mcts:$first:$SIMS" "$opponent" --games 1000 --opening-plies 2 --json
            timed "$OUT/evaluation/rollout_${opponent/:/}.log" neurocheckers match "mcts-rollout:$SIMS" \
                "$opponent" --games 1000 --opening-plies 2 --json
        done
        ;;
    plots)
        base=$(base_run)
        runs=()
        for name in base $VARIANTS; do
            run=$(grid_run "$name")
            runs+=("$run")
        done
        neurocheckers plot "$base" --out "$OUT/base_fitness.png"
        neurocheckers plot "${runs[@]}" --out "$OUT/grid_fitness.png"
        ;;
    esac
done
