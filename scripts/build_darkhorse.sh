#!/usr/bin/env bash
# Build the DarkHorse engine with neurocheckers' own line-protocol driver (scripts/darkhorse/driver.cpp).
#
#   scripts/build_darkhorse.sh SRC_DIR [OUT]
#
# SRC_DIR: a DarkHorse source tree, a clone of https://github.com/CheckersGuy/DarkHorse at commit
#   151ae5862388a8b57c4a1d71548af96c6ed48b15 (the last one whose network, Training/Rust/relu.quant,
#   is in the tree). OUT (default runs/darkhorse, git-ignored): gets the executable OUT/darkhorse and
#   the network OUT/relu.quant beside it. Needs g++ with C++20; about a minute on one core.
# Then play it: `neurocheckers match compiled:0.1s darkhorse:0.1` (docs/engines.md).
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 SRC_DIR [OUT]" >&2
  exit 2
fi
src="$1"
out="${2:-runs/darkhorse}"
engine="$src/Checkers/CheckerEngineX"
network="$src/Training/Rust/relu.quant"
for need in "$engine/GameLogic.cpp" "$network"; do
  if [[ ! -f "$need" ]]; then
    echo "$0: no $need: SRC_DIR must be a DarkHorse tree at commit 151ae58" >&2
    exit 2
  fi
done
driver="$(cd "$(dirname "$0")" && pwd)/darkhorse/driver.cpp"
mkdir -p "$out"
sources=()
for file in "$engine"/*.cpp; do
  case "$(basename "$file")" in
    main.cpp | test.cpp | CheckerBoard.cpp | Endgame.cpp) ;;  # its own front ends, Windows-only code
    *) sources+=("$file") ;;
  esac
done
"${CXX:-g++}" -std=c++20 -O3 -march=native -flto -DNDEBUG -I "$engine" \
  -o "$out/darkhorse" "$driver" "${sources[@]}" -lpthread
install -m 644 "$network" "$out/relu.quant"
echo "built $out/darkhorse (network $out/relu.quant)"
