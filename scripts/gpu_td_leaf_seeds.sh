#!/usr/bin/env bash
# Trains experiments/american8/td_leaf_w64.toml (TDLeaf(lambda), 5 x 64 MLP + material, american8)
# for seeds 0, 1 and 2 at once, one process each, sharing one GPU (issue 19: 3 seeds of the best 8x8
# method). Each run stops after MINUTES of training wall time; its folder is packed into
# $DEST/seedN.tar.gz with a log, so a run can be resumed here with
#   tar xzf seedN.tar.gz && neurocheckers evolve --resume <run folder>
# Settings (environment): MINUTES (6), DEST (runs/gpu), SEEDS ("0 1 2"), PYTHON (python3),
# EVERY (50: epochs between strength probes and snapshots; probes run outside the budget), LIMIT
# (seconds after which a run is interrupted, keeping its last checkpoint; default 0: none).
set -uo pipefail
MINUTES=${MINUTES:-6}
DEST=${DEST:-runs/gpu}
SEEDS=${SEEDS:-0 1 2}
PYTHON=${PYTHON:-python3}
EVERY=${EVERY:-50}
LIMIT=${LIMIT:-0}
WORK=$(mktemp -d)
mkdir -p "$DEST"
# Several processes share the GPU: none may take most of its memory up front.
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
for seed in $SEEDS; do
    timeout --signal=INT "$LIMIT" "$PYTHON" -m neurocheckers evolve experiments/american8/td_leaf_w64.toml --seed "$seed" \
        --set run.budget_minutes="$MINUTES" --set run.strength_every="$EVERY" \
        --set run.snapshot_every="$EVERY" --out "$WORK/seed$seed" --no-plot \
        >"$DEST/seed$seed.log" 2>&1 &
done
wait
for seed in $SEEDS; do
    tail -n 3 "$DEST/seed$seed.log"
    tar czf "$DEST/seed$seed.tar.gz" -C "$WORK/seed$seed" .
done
ls -la "$DEST"
