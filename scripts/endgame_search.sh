#!/usr/bin/env bash
# Database-aware search on 8x8: 100 committed openings x 2 colours per match, depth 3.
# Build the database first: neurocheckers endgame build --rules american8 --pieces 5 --out runs/endgame/american8
# Settings (environment): DB (the database folder), OUT (where the match summaries go).
B8=results/american8/td_leaf_w64_seed0/final.safetensors
DB=${DB:-runs/endgame/american8}
OUT=${OUT:-runs/endgame/search}
mkdir -p "$OUT"
NC=neurocheckers
m() { name=$1; shift; /usr/bin/time -f "%e s" $NC match "$@" --rules american8 --openings 100 --games 200 --json > $OUT/$name.json 2> $OUT/$name.err; }
m db_vs_nodb alphabeta:3:$B8:$DB alphabeta:3:$B8
m db_vs_heuristic alphabeta:3:$B8:$DB alphabeta:3:heuristic
m nodb_vs_heuristic alphabeta:3:$B8 alphabeta:3:heuristic
m db_vs_material alphabeta:3:$B8:$DB alphabeta:3
m nodb_vs_material alphabeta:3:$B8 alphabeta:3
# 6x6, depth 2, with the 6-piece database (neurocheckers endgame build --rules american6 --pieces 6 --out runs/endgame/american6):
$NC match alphabeta:2:results/best_american6.safetensors:${DB6:-runs/endgame/american6} alphabeta:2:results/best_american6.safetensors --rules american6 --openings 100 --games 200 --json > $OUT/american6_db_vs_nodb.json
# Equal time against py-draughts at depth 6 (pip install -e ".[engines]"), with and without the database:
$NC match timed:equal:$B8:$DB pydraughts:6 --rules american8 --openings 50 --games 100 --json > $OUT/timed_db_vs_pydraughts6.json
$NC match timed:equal:$B8 pydraughts:6 --rules american8 --openings 50 --games 100 --json > $OUT/timed_nodb_vs_pydraughts6.json
