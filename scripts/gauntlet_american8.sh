#!/usr/bin/env bash
# The 8x8 gauntlet of an agent (issue 19), split over two processes on the two cores and merged:
#   bash scripts/gauntlet_american8.sh AGENT.safetensors OUT_DIR
# - equal depth (batched): the agent's network at the leaves of alpha-beta d against material at
#   d = 1..4 and against the hand-written evaluation at d = 2..4, plus the calibration rows;
# - ladder, in equal-time mode: the timed search with the network (timed:equal:AGENT) against random,
#   material alpha-beta 1-6, the heuristic at 2-6, py-draughts at depths 4, 6, 8 and OpenSpiel's
#   MCTS-1000, one game at a time, each side's seconds per move measured.
# Openings a row (each with both colours): OPENINGS (100) for the equal-depth part, LADDER_OPENINGS
# (20) for the equal-time rows against our players, PYDRAUGHTS6_OPENINGS (50), and ENGINE_OPENINGS
# (5) for the slow Python engines (pydraughts:8, openspiel:mcts:1000, about 1-2.5 s a move); the issue
# asks for 100 (ENGINE_OPENINGS=50), hours of play on 2 cores.
set -euo pipefail
agent=${1:?usage: gauntlet_american8.sh AGENT OUT_DIR}
out=${2:?usage: gauntlet_american8.sh AGENT OUT_DIR}
common=(--rules american8 --ladder american8 --equal-time --equal-depths 1,2,3,4 --heuristic-depths 2,3,4)
ours="random,alphabeta:1,alphabeta:2,alphabeta:3,alphabeta:4,alphabeta:5,alphabeta:6"
ours+=",alphabeta:2:heuristic,alphabeta:3:heuristic,alphabeta:4:heuristic,alphabeta:5:heuristic"
ours+=",alphabeta:6:heuristic,pydraughts:4"
mkdir -p "$out/parts"
part() {  # name, openings, then gauntlet options
  local name=$1 n=$2; shift 2
  echo "$(date +%T) $name" >> "$out/parts/times.txt"
  NEUROCHECKERS_DEVICES=1 neurocheckers gauntlet "$agent" "${common[@]}" --openings "$n" "$@" \
    --out "$out/parts/$name" > "$out/parts/$name.log" 2>&1
  echo "$(date +%T) $name done" >> "$out/parts/times.txt"
}
# Each slow engine row is split in two halves of its openings (--first-opening), one per process;
# merge_gauntlets.py pools the halves into one row.
half() {  # name, openings, spec, 1|2: the first or the second half of that row's openings (openings >= 2)
  local name=$1 n=$2 spec=$3 which=$4 h=$(( $2 / 2 ))
  if [ "$which" = 1 ]; then part "$name-1" "$h" --only "$spec"
  else part "$name-2" "$(( n - h ))" --only "$spec" --first-opening "$h"; fi
}
engine=${ENGINE_OPENINGS:-5}
(
  part depth "${OPENINGS:-100}" --kinds equal-depth,calibration
  half pydraughts6 "${PYDRAUGHTS6_OPENINGS:-50}" pydraughts:6 1
  half pydraughts8 "$engine" pydraughts:8 1
  half mcts1000 "$engine" openspiel:mcts:1000 1
) &
first=$!
(
  part ladder "${LADDER_OPENINGS:-20}" --kinds ladder --only "$ours"
  half pydraughts6 "${PYDRAUGHTS6_OPENINGS:-50}" pydraughts:6 2
  half pydraughts8 "$engine" pydraughts:8 2
  half mcts1000 "$engine" openspiel:mcts:1000 2
) &
second=$!
wait $first $second
parts=()
for name in depth ladder pydraughts6-1 pydraughts6-2 pydraughts8-1 pydraughts8-2 mcts1000-1 mcts1000-2; do
  parts+=("$out/parts/$name")
done
python scripts/merge_gauntlets.py "${parts[@]}" --out "$out"
