#!/usr/bin/env bash
# The 8x8 gauntlet of an agent (issue 19), split over two processes on the two cores and merged:
#   bash scripts/gauntlet_american8.sh AGENT.safetensors OUT_DIR
# Equal depth: the agent's network at the leaves of alpha-beta d against material at d = 1..4 and
# against the hand-written evaluation at d = 2..4. Ladder, in equal-time mode: the timed search with
# the network (timed:equal:AGENT) against random, material alpha-beta 1-6, the heuristic at 2-6,
# py-draughts at depths 4, 6, 8 and OpenSpiel's MCTS-1000, each side's seconds per move measured.
# OPENINGS (default 100) openings a row, each with both colours; ENGINE_OPENINGS (default 10) for
# the slow Python engines (pydraughts:8, openspiel:mcts:1000); PYDRAUGHTS6_OPENINGS (default 100).
set -euo pipefail
agent=${1:?usage: gauntlet_american8.sh AGENT OUT_DIR}
out=${2:?usage: gauntlet_american8.sh AGENT OUT_DIR}
openings=${OPENINGS:-100}
engine_openings=${ENGINE_OPENINGS:-10}
pd6_openings=${PYDRAUGHTS6_OPENINGS:-100}
mkdir -p "$out"
common=(--rules american8 --ladder american8 --equal-time --equal-depths 1,2,3,4 --heuristic-depths 2,3,4)
jax_rows="random,alphabeta:1,alphabeta:2,alphabeta:3,alphabeta:4,alphabeta:5,alphabeta:6"
jax_rows+=",alphabeta:2:heuristic,alphabeta:3:heuristic,alphabeta:4:heuristic,alphabeta:5:heuristic"
jax_rows+=",alphabeta:6:heuristic,pydraughts:4"
run_part() {  # part name, openings, rows...
  local name=$1 n=$2; shift 2
  NEUROCHECKERS_DEVICES=1 neurocheckers gauntlet "$agent" "${common[@]}" --openings "$n" \
    --engine-openings "$engine_openings" --only "$1" --out "$out/parts/$name" > "$out/parts/$name.log" 2>&1
}
mkdir -p "$out/parts"
run_part ladder "$openings" "$jax_rows" &
first=$!
run_part pydraughts6 "$pd6_openings" "pydraughts:6" && run_part slow "$openings" "pydraughts:8,openspiel:mcts:1000" &
second=$!
wait $first $second
python scripts/merge_gauntlets.py "$out/parts/ladder" "$out/parts/pydraughts6" "$out/parts/slow" --out "$out"
