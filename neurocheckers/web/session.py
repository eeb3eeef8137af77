"""Games a person plays against any player in the browser (the Play page); ``web.sessions`` holds
them and saves them in the served folder.

A ``GameSession`` keeps every ply played (the position before it and the action), so the move list,
undo and the position all come from that history. The person plays one step at a time (from-square
to to-square; a multi-jump is several steps by the same side, as the engine plays it); the opponent
plays its whole turn in ``opponent_reply``. The opponent is a player spec, played through the
player protocol (``players.protocol``): its ``new_game`` mover plays each turn (``turns.player_turn``;
an ``equal`` player gets the think time), its ``search_label`` and reports describe the search, and
the endgame database its search probes (``endgame``) has its word on the move. So:

- an agent file alone (``FILE``) plays, for the session's think time, the compiled search on 8x8
  (``compiled:SECONDSs:FILE``, MLP and NNUE agents) and elsewhere the timed alpha-beta search
  (``timed:SECONDSs:FILE``): iterative deepening, its network scoring leaves;
- ``compiled:BUDGET[:FILE]``, ``timed:BUDGET:EVAL``, ``pydraughts:D`` (``american8``, py-draughts
  installed), the server's named engines and our policies (``alphabeta:D``, ``random``, ...: the
  think time does not apply to them) all play alike;
- ``mcts:FILE:SIMS`` thinks with the anytime MCTS of ``neurocheckers play`` for the think time
  (``players.anytime``, from SIMS simulations).

The person may resign (``resign``); ``game_pdn`` gives the game as PDN and ``position_after`` the
position after any turn of the move list. A game may start from any position (``new_session``'s
``start``, ``web.setup``). Game ids are random, so a link to a game the server no longer holds is
refused rather than opening another game.

Searches are compiled when the game is made, so the first reply is not spent compiling. OpenSpiel's
bots need OpenSpiel's own game alongside ours and are refused here.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax

from neurocheckers.analysis.pdn_games import pdn_of_game
from neurocheckers.endgame.database import EndgameDB
from neurocheckers.match.session import GameLine
from neurocheckers.match.turns import (
    SearchedMove,
    parse_color,
    player_turn,
    search_text,
    timed_win_chance,
)
from neurocheckers.networks.evaluator import value_fn
from neurocheckers.rules.engine import init
from neurocheckers.rules.notation import action_squares, legal_actions, legal_moves, to_fen
from neurocheckers.rules.pdn import write_pdn
from neurocheckers.rules.presets import Rules, get_rules
from neurocheckers.rules.state import BLACK, State
from neurocheckers.stats import check_seed
from neurocheckers.web.board import material, position_json, side_name, squares
from neurocheckers.web.endgame import endgame_view
from neurocheckers.web.opponents import (
    MAX_THINK_SECONDS,
    Opponent,
    SessionError,
    make_opponent,
    prepare_opponent,
)


@dataclasses.dataclass(kw_only=True)
class GameSession(GameLine):
    """One game in progress (``match.session.GameLine``: the rules, the start, the plies played, the
    repetition draw), its settings and the opponent's last evaluation."""

    id: str
    """The game's random id."""
    human: int
    """The person's colour."""
    opponent: Opponent
    """Whom the person plays."""
    think_seconds: float
    """The opponent's think time a move."""
    seed: int
    """The opponent's random seed."""
    evaluation: dict[str, Any] | None = None
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    engine: Any = None
    """The opponent's game (``new_game``: our policies, the compiled search, py-draughts, an
    external engine), else None; made again after an undo."""
    resigned: int | None = None
    """The colour of the person when they resigned (the game is then over), else None."""
    endgame: EndgameDB | None = None
    """The endgame database of the game's rules the server opened, else None."""


def new_session(
    root: str | Path, opponent: str, rules: str = "simple6", human: str = "black", think_seconds: float = 1.0,
    seed: int = 0, start: State | None = None, endgame: dict[str, EndgameDB] | None = None,
    engines: Mapping[str, str] | None = None,
) -> GameSession:  # fmt: skip
    """A new game against ``opponent`` (a player spec, or an agent file: ``opponent_spec``) with the
    person playing ``human``, from ``start`` (default: the rules' start position); the opponent's
    search is compiled here (``build_session``), a compiled one probing the database of its rules
    among ``endgame`` (by rules name), an external engine one of ``engines`` (name -> program)."""
    if not isinstance(human, str):
        raise SessionError(f"'human' must be black or white, got {human!r}")
    try:
        preset = get_rules(rules)
        color = parse_color(human)
    except ValueError as error:
        raise SessionError(str(error)) from None
    if not (isinstance(think_seconds, (int, float)) and math.isfinite(think_seconds)):
        raise SessionError(f"think time must be a number of seconds, got {think_seconds!r}")
    if not 0 < think_seconds <= MAX_THINK_SECONDS:
        raise SessionError(f"think time must be in (0, {MAX_THINK_SECONDS:g}] seconds, got {think_seconds}")
    try:
        check_seed(seed)  # the command line's range too
    except ValueError as e:
        raise SessionError(str(e)) from None
    start = jax.device_get(init(preset)) if start is None else start
    # Random ids: a link to an old game never opens another one.
    database = (endgame or {}).get(preset.name)
    return build_session(
        root, f"g{secrets.token_hex(6)}", preset, color, opponent, float(think_seconds), seed, start,
        database, engines,
    )  # fmt: skip


def build_session(
    root: str | Path, game_id: str, rules: Rules, human: int, opponent: str, think_seconds: float, seed: int,
    start: State, endgame: EndgameDB | None = None, engines: Mapping[str, str] | None = None,
) -> GameSession:  # fmt: skip
    """The game ``game_id`` with no move played yet: its opponent made (``make_opponent``, a compiled
    search probing ``endgame``, an external engine one of ``engines``) and its search compiled
    (``prepare_opponent``)."""
    player = make_opponent(root, opponent, rules, think_seconds, endgame, engines)
    prepare_opponent(player, rules)
    session = GameSession(
        rules=rules,
        start=start,
        id=game_id,
        human=human,
        opponent=player,
        think_seconds=think_seconds,
        seed=seed,
        endgame=endgame,
    )
    session.engine = _new_engine(session)
    return session


def _new_engine(session: GameSession) -> Any:
    """A new game of the opponent (the protocol's ``new_game``)."""
    return session.opponent.player.new_game(session.seed)


def _turns(session: GameSession) -> list[dict[str, Any]]:
    """The move list: whole turns in standard notation (a multi-jump is one), who played each, and
    whether it is still going on (a multi-jump the person has not finished)."""
    turns: list[dict[str, Any]] = []
    for ply in session.plies:
        if not int(ply.before.continuing) or not turns:
            side = side_name(int(ply.before.color)).lower()
            turns.append({"side": side, "path": [ply.src], "capture": False, "by_human": ply.by_human})
        turn = turns[-1]
        turn["path"].append(ply.dst)
        turn["capture"] = turn["capture"] or ply.capture
    for turn in turns:
        turn["notation"] = ("x" if turn.pop("capture") else "-").join(map(str, turn["path"]))
    if turns and int(session.state.continuing):
        turns[-1]["notation"] += "..."
    return turns


def outcome(session: GameSession) -> dict[str, Any]:
    """Whether the game is over, its PDN result (``*`` while it goes on) and why it ended: the
    position's end (``board.end_reason``, a threefold repetition) or the person's resignation."""
    state = session.state
    if session.resigned is not None:
        winner = 1 - session.resigned
        result = "1-0" if winner == BLACK else "0-1"
        return {
            "over": True,
            "result": result,
            "reason": f"{side_name(winner)} wins: {side_name(session.resigned)} resigned",
        }
    position = position_json(session.rules, state)
    reason = session.repetition_reason() or position["reason"]
    return {"over": position["over"], "result": position["result"], "reason": reason}


def _pieces_text(numbers: list[int]) -> str:
    """``the piece on 9``, ``the pieces on 9 and 14``, ``the pieces on 9, 14 and 18``."""
    if len(numbers) == 1:
        return f"the piece on {numbers[0]}"
    return f"the pieces on {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def capture_notice(rules: Rules, state: State) -> str | None:
    """``You must capture: the piece on 14 can jump`` when a capture is compulsory for the side to
    move at the start of its turn, naming every piece that can capture; else None."""
    if not rules.forced_capture or bool(state.terminated) or int(state.continuing):
        return None
    capturing = sorted(
        {s for s, _, capture in (action_squares(rules, state, a) for a in legal_actions(state)) if capture}
    )
    if not capturing:
        return None
    verb = "can" if len(capturing) == 1 else "can each"
    return f"You must capture: {_pieces_text(capturing)} {verb} jump"


def session_position(session: GameSession, state: State) -> dict[str, Any]:
    """``board.position_json`` of ``state`` with the endgame database's answer (``endgame``: see
    ``web.endgame.endgame_view``; None outside the database or without one)."""
    return {
        **position_json(session.rules, state),
        "endgame": endgame_view(session.endgame, state, session.human),
    }


def session_view(session: GameSession) -> dict[str, Any]:
    """Everything the Play page shows: the position (with the endgame database's answer), the legal
    steps and whole moves (square paths), the move list, whose turn it is, the end and why, a
    compulsory capture, and the opponent's evaluation."""
    state = session.state
    rules = session.rules
    ended = outcome(session)
    steps = (
        [list(action_squares(rules, state, a)[:2]) for a in legal_actions(state)] if not ended["over"] else []
    )
    human_to_move = not ended["over"] and int(state.color) == session.human
    return {
        "id": session.id,
        "rules": rules.name,
        "human": side_name(session.human).lower(),
        "opponent": session.opponent.spec,
        "think_seconds": session.think_seconds,
        "position": session_position(session, state),
        **ended,
        "steps": steps,
        "moves": [list(m.path) for m in legal_moves(rules, state)] if not ended["over"] else [],
        "must_capture": capture_notice(rules, state) if human_to_move else None,
        "turns": _turns(session),
        "human_to_move": human_to_move,
        "opponent_to_move": not ended["over"] and not human_to_move,
        "can_undo": session.resigned is None and any(p.by_human for p in session.plies),
        "evaluation": None if ended["over"] else session.evaluation,  # no stale win chance at the end
        "start_fen": to_fen(session.start),
    }


def play_ply(session: GameSession, action: int, by_human: bool) -> None:
    """Play the legal ``action`` (one ply) in the game, by the person or by the opponent."""
    session.play_ply(action, by_human)


def _refusal(session: GameSession, src: int, dst: int) -> str:
    """Why the step ``src`` -> ``dst`` is not legal now, in words: a compulsory capture elsewhere, a
    multi-jump that must go on, or the piece's legal targets."""
    state = session.state
    if int(state.continuing):
        piece = squares(state.continuing)[0]
        if src != piece:
            return f"go on jumping with the piece on {piece}"
    labelled = [action_squares(session.rules, state, a) for a in legal_actions(state)]
    targets = sorted(d for s, d, _ in labelled if s == src)
    notice = capture_notice(session.rules, state)
    if notice is not None and not targets:
        return notice
    options = f"legal from {src}: {', '.join(map(str, targets))}" if targets else f"no legal move from {src}"
    return f"illegal move {src}-{dst}: {options}"


def human_step(session: GameSession, src: int, dst: int) -> None:
    """Play the person's step ``src`` -> ``dst`` (one jump of a multi-jump); ``SessionError``, with
    the game unchanged, when it is not the person's turn or the step is not legal."""
    state = session.state
    if outcome(session)["over"]:
        raise SessionError(
            "the game is over; start a new one" + ("" if session.resigned is not None else " or undo")
        )
    if int(state.color) != session.human:
        raise SessionError("it is not your turn: the opponent is to move")
    found = [a for a in legal_actions(state) if action_squares(session.rules, state, a)[:2] == (src, dst)]
    if not found:
        raise SessionError(_refusal(session, src, dst))
    play_ply(session, found[0], True)


def resign(session: GameSession) -> None:
    """The person resigns: the opponent wins; ``SessionError`` when the game is already over."""
    if outcome(session)["over"]:
        raise SessionError("the game is already over")
    session.resigned = session.human


def turn_positions(session: GameSession) -> list[State]:
    """The position before each whole turn, then the position now: entry ``n`` is the position after
    ``n`` turns of the move list (``_turns``)."""
    firsts = [ply.before for ply in session.plies if not int(ply.before.continuing)]
    return [*firsts, session.state] if session.plies else [session.start]


def whole_turns(session: GameSession) -> tuple[list[State], list[str]]:
    """The positions at each whole turn's start (the last one the position now, unless a multi-jump
    is unfinished: then its start) and the whole moves between them (the analysis panel's game)."""
    positions = turn_positions(session)
    moves = [t["notation"] for t in _turns(session)]
    if moves and moves[-1].endswith("..."):
        moves.pop()
    return positions[: len(moves) + 1], moves


def position_after(session: GameSession, turns: int) -> dict[str, Any]:
    """The position after ``turns`` whole turns (0: the start), for the page's move list."""
    positions = turn_positions(session)
    if not 0 <= turns < len(positions):
        raise SessionError(f"turn must be in 0..{len(positions) - 1}, got {turns}")
    return session_position(session, positions[turns])


HUMAN_NAME = "human"
"""The person's name in a game's PDN."""


def game_pdn(session: GameSession) -> str:
    """The game as PDN text (``analysis.pdn_games.pdn_of_game``): whole turns (an unfinished
    multi-jump left out), the person named ``HUMAN_NAME``, the opponent by its spec, the result."""
    turns = [t["notation"] for t in _turns(session) if not t["notation"].endswith("...")]
    names = {session.human: HUMAN_NAME, 1 - session.human: session.opponent.spec}
    game = {
        "event": "neurocheckers serve",
        "black": names[BLACK],
        "white": names[1 - BLACK],
        "start_fen": to_fen(session.start),
        "moves": turns,
        "result": outcome(session)["result"],
        "plies": len(session.plies),
    }
    return write_pdn([pdn_of_game(session.rules, game)])


def _evaluation(session: GameSession, state: State, win_chance: float | None, detail: str) -> dict[str, Any]:
    """The opponent's view of ``state`` before its move: its search's (or network's) chance of
    winning (``win_chance``, the opponent's), else the material lead; ``text`` says it from the
    person's side (``detail`` after it, when given)."""
    ply = int(state.ply)
    if win_chance is None and session.opponent.agent is not None:
        agent = session.opponent.agent
        win_chance = float(value_fn(agent.spec)(agent.params, state, jax.random.key(0)))
        detail = "the opponent's network's estimate"
    if win_chance is not None:
        return {
            "ply": ply,
            "win_chance": win_chance,
            "text": f"your win chance: {1 - win_chance:.0%} ({detail})",
        }
    lead = material(state)["black_lead"] * (1 if int(state.color) == BLACK else -1) + 0.0  # no -0
    text = f"your material lead: {-lead + 0.0:+g}" + (f" ({detail})" if detail else "")
    return {"ply": ply, "material_lead": lead, "text": text}


def _forced_evaluation(session: GameSession, state: State, database: str | None) -> dict[str, Any]:
    """The evaluation after a forced move (no search): the last search's win chance kept, so that
    the figure does not jump to another estimator's; else ``_evaluation`` of the position."""
    last = session.evaluation or {}
    if "win_chance" in last and database is None:
        chance = last["win_chance"]
        text = f"your win chance: {1 - chance:.0%} (a forced move: the opponent's last search)"
        return {"ply": int(state.ply), "win_chance": chance, "text": text}
    return _evaluation(session, state, None, database or "")


def _timed_evaluation(session: GameSession, state: State, turn: SearchedMove) -> dict[str, Any]:
    """The evaluation of a search's turn (timed, compiled, a host player's): its win chance (network
    leaves, or a proven result) or the material lead with its score (material or heuristic leaves),
    and what the search did
    (``search``: depth, nodes, seconds, score; absent for a forced move)."""
    info = turn.info
    if info is None:  # forced: no search to report, but the database may have a word on the position
        return _forced_evaluation(session, state, turn.database)
    network = session.opponent.agent is not None
    chance = timed_win_chance(info, network)
    detail = search_text(turn) + ("" if chance is not None else f", score {info.score:+.2f}")
    if turn.database is not None:  # the endgame database decided the root or the searched lines
        detail += f"; {turn.database}"
    evaluation = _evaluation(session, state, chance, detail)
    search = {"depth": info.depth, "nodes": turn.nodes, "seconds": turn.seconds, "score": info.score,
              "database": turn.database}  # fmt: skip
    return {**evaluation, "search": search}


def opponent_reply(session: GameSession) -> None:
    """The opponent plays its whole turn (every jump of a multi-jump); ``SessionError`` when it is
    not its turn."""
    state = session.state
    if outcome(session)["over"] or int(state.color) == session.human:
        raise SessionError("it is not the opponent's turn")
    player = session.opponent.player
    seconds = session.think_seconds if player.equal_time else None
    searched = player_turn(player, session.engine, session.rules, state, seconds)
    session.evaluation = None if player.name == "random" else _timed_evaluation(session, state, searched)
    for action in searched.move.actions:
        play_ply(session, action, False)


def undo(session: GameSession) -> None:
    """Take back the person's last move (or the jumps of an unfinished one) and everything after it;
    ``SessionError`` when the person has not moved yet."""
    if session.resigned is not None:
        raise SessionError("you resigned: start a new game")
    try:
        session.undo_person()
    except ValueError as error:
        raise SessionError(str(error)) from None
    session.evaluation = None
    session.engine = _new_engine(session)  # a host player's game starts again from here
