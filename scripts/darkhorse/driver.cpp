// neurocheckers' driver for the DarkHorse checkers engine (MIT, github.com/CheckersGuy/DarkHorse).
// It speaks neurocheckers' line protocol (docs/engines.md) on stdin/stdout:
//   on start          -> "ready darkhorse history"
//   "newgame"         -> "ok"                 (clears the hash table and the move-ordering scores)
//   "go MS FEN [history FEN FEN ...]"
//                     -> "bestmove MOVE captured S,S depth D nodes N score V"
// The history (the game's positions since its last capture or man's move, oldest first) goes below
// the root on the engine's position stack, where its search looks for repetitions (it scores a
// position met before with the same side to move as a draw).
//   "quit"            -> exits
// Squares are ACF numbers (1-32, Black on 1-12 moving first), the engine's own: square s is bit s - 1.
// A step is written FROM-TO, a capture FROMxTO with the captured squares after "captured".
// Usage: darkhorse [NETWORK [HASH_BITS]]; NETWORK defaults to relu.quant beside the executable.
// This file is the project's own; it links the engine's sources (scripts/build_darkhorse.sh).
#include "GameLogic.h"
#include "MGenerator.h"
#include "MovePicker.h"
#include "MoveListe.h"
#include "Network.h"
#include "Transposition.h"
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

// The most history positions kept below the root: the stack holds MAX_PLY positions, the search's
// own plies included.
static constexpr size_t MAX_HISTORY = 100;

static std::string square_list(uint32_t bits) {
  std::string out;
  for (int s = 0; s < 32; ++s)
    if (bits >> s & 1u) {
      if (!out.empty())
        out += ',';
      out += std::to_string(s + 1);
    }
  return out.empty() ? "-" : out;
}

// The last "Depth:D" and "Nodes: N" that searchValue printed (its completed iterations).
static void read_report(const std::string &report, int &depth, long &nodes) {
  std::istringstream in(report);
  std::string word;
  while (in >> word) {
    if (word.rfind("Depth:", 0) == 0)
      depth = std::stoi(word.substr(6));
    if (word == "Nodes:")
      in >> nodes;
  }
}

static void go(const std::string &args) {
  std::istringstream in(args);
  long ms = 0;
  std::string fen;
  if (!(in >> ms) || !(in >> fen) || ms < 1) {
    std::cout << "error go wants MILLISECONDS FEN, got '" << args << "'" << std::endl;
    return;
  }
  Board board(Position::pos_from_fen(fen));
  std::string word;
  std::vector<Position> history;
  if (in >> word && word == "history")
    while (in >> word)
      history.push_back(Position::pos_from_fen(word));
  size_t first = history.size() > MAX_HISTORY ? history.size() - MAX_HISTORY : 0;
  int top = 0;
  for (size_t i = first; i < history.size(); ++i)
    board.pStack[top++] = history[i];
  board.pStack[top] = Position::pos_from_fen(fen);
  board.pCounter = top;
  MoveListe legal;
  get_moves(board.get_position(), legal);
  if (legal.length() == 0) {
    std::cout << "error no legal move in " << fen << std::endl;
    return;
  }
  Statistics::mPicker.clear_scores();
  Move best;
  std::ostringstream report;
  Value score = searchValue(board, best, MAX_PLY, static_cast<uint32_t>(ms), true, report);
  int depth = 0;
  long nodes = 0;
  read_report(report.str(), depth, nodes);
  if (best.is_empty())  // not even the first iteration finished: the first legal move
    best = legal[0];
  const char sep = best.is_capture() ? 'x' : '-';
  std::cout << "bestmove " << best.get_from_index() + 1 << sep << best.get_to_index() + 1
            << " captured " << square_list(best.captures) << " depth " << depth << " nodes "
            << nodes << " score " << score << std::endl;
}

int main(int argc, char **argv) {
  std::string exe = argv[0];
  std::string dir = exe.find('/') == std::string::npos ? "." : exe.substr(0, exe.rfind('/'));
  std::string net = argc > 1 ? argv[1] : dir + "/relu.quant";
  int hash_bits = argc > 2 ? std::stoi(argv[2]) : 20;
  Statistics::mPicker.init();
  network.load_bucket(net);  // exits with a message on stderr when the file is missing
  TT.resize(hash_bits);
  std::cout << "ready darkhorse history" << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string command;
    in >> command;
    std::string rest;
    std::getline(in, rest);
    if (command == "quit")
      break;
    if (command == "newgame") {
      TT.clear();
      Statistics::mPicker.clear_scores();
      TT.age_counter = 0u;
      std::cout << "ok" << std::endl;
    } else if (command == "go") {
      go(rest);
    } else if (!command.empty()) {
      std::cout << "error unknown command '" << command << "'" << std::endl;
    }
  }
  return 0;
}
