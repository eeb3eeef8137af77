// neurocheckers serve: the Play, Games and Runs pages over the JSON API (hand-written, no build step).
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 64;

function $(id) { return document.getElementById(id); }

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function html(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

async function api(method, url, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(url, options);
  const data = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function q(path) { return encodeURIComponent(path); }

// ---- the board ---------------------------------------------------------------------------------

// Square n (1-based, American numbering, Black's side at the top) -> [row, column] on the board.
function squareCell(n, size) {
  const half = size / 2;
  const row = Math.floor((n - 1) / half);
  const col = 2 * ((n - 1) % half) + (row % 2 === 0 ? 1 : 0);
  return [row, col];
}

function pieceName(piece) { return `${piece.color} ${piece.king ? "king" : "man"}`; }

const MARK_WORDS = { movable: "can move", selected: "selected", target: "a target", last: "last move", jumping: "jumping" };

// Draws a position into container, scaled to its width. marks: {square: ["movable" | "selected" |
// "target" | "last" | "jumping"]}; options: {onClick(n), flipped (Black's side at the bottom),
// cursor (the square keyboard focus rests on)}. Squares are buttons with ARIA labels.
function drawBoard(container, position, marks = {}, options = {}) {
  const size = position.board_size, side = size * CELL;
  const at = n => {
    const [row, col] = squareCell(n, size);
    return options.flipped ? [size - 1 - row, size - 1 - col] : [row, col];
  };
  const bottom = options.flipped ? "Black" : "White";
  const svg = el("svg", { viewBox: `0 0 ${side} ${side}`, role: "group", "aria-label": `Board, ${bottom} at the bottom` });
  const pieces = {};
  for (const p of position.pieces) pieces[p.square] = p;
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if ((row + col) % 2 === 0) {
        svg.appendChild(el("rect", { x: col * CELL, y: row * CELL, width: CELL, height: CELL, class: "light", "aria-hidden": "true" }));
      }
    }
  }
  const cells = {};
  for (let n = 1; n <= size * size / 2; n++) {
    const [row, col] = at(n);
    cells[n] = [row, col];
    const own = marks[n] || [];
    const piece = pieces[n];
    const words = [piece ? pieceName(piece) : "empty", ...own.map(m => MARK_WORDS[m])];
    const g = el("g", { class: ["sq", ...own].join(" "), "data-square": n, "aria-label": `${n}: ${words.join(", ")}` });
    if (options.onClick) {
      g.setAttribute("role", "button");
      g.setAttribute("tabindex", n === options.cursor ? "0" : "-1");
      g.addEventListener("click", () => options.onClick(n));
    }
    g.appendChild(el("rect", { x: col * CELL, y: row * CELL, width: CELL, height: CELL, class: "dark" }));
    g.appendChild(el("text", { x: col * CELL + 3, y: row * CELL + 12, class: "num", "aria-hidden": "true" }, String(n)));
    const cx = col * CELL + CELL / 2, cy = row * CELL + CELL / 2;
    if (piece) {
      g.appendChild(el("circle", { cx, cy, r: CELL * 0.36, class: `piece ${piece.color}`, "data-color": piece.color,
        role: "img", "aria-label": `${pieceName(piece)} on ${n}` }));
      if (piece.king) g.appendChild(el("text", { x: cx, y: cy, class: `crown ${piece.color}`, "aria-hidden": "true" }, "K"));
      if (own.includes("jumping")) g.appendChild(el("circle", { cx, cy, r: CELL * 0.45, class: "ring" }));
    } else if (own.includes("target")) {
      g.appendChild(el("circle", { cx, cy, r: CELL * 0.12, class: "dot" }));
    }
    svg.appendChild(g);
  }
  container.replaceChildren(svg);
  container.dataset.fen = position.fen;
  container.dataset.bottom = bottom.toLowerCase();
  return cells;
}

// The square one step from square n in the screen direction of an arrow key (null at the edge):
// left and right keep the row, up and down go to the next row's nearest dark square.
function squareTowards(cells, n, key) {
  const [row, col] = cells[n];
  const wanted = {
    ArrowLeft: [[row, col - 2]], ArrowRight: [[row, col + 2]],
    ArrowUp: [[row - 1, col - 1], [row - 1, col + 1]], ArrowDown: [[row + 1, col + 1], [row + 1, col - 1]],
  }[key];
  for (const [r, c] of wanted) {
    const found = Object.keys(cells).find(k => cells[k][0] === r && cells[k][1] === c);
    if (found) return +found;
  }
  return null;
}

// ---- line charts -------------------------------------------------------------------------------

// series: [{name, ys, color, dash, dots, connect}] over xs; nulls leave gaps unless connect. Draws axes, ticks and a legend.
function lineChart(container, xs, series, options = {}) {
  const width = options.width || 640, height = options.height || 260;
  const left = 48, right = 140, top = 24, bottom = 32;
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}` });
  const values = series.flatMap(s => s.ys.filter(v => v !== null));
  if (!xs.length || !values.length) {
    container.replaceChildren();
    return;
  }
  const xmin = Math.min(...xs), xmax = Math.max(...xs, xmin + 1);
  let ymin = options.ymin ?? Math.min(...values), ymax = options.ymax ?? Math.max(...values);
  if (ymax === ymin) { ymax += 1; ymin -= 1; }
  const X = x => left + (x - xmin) / (xmax - xmin) * (width - left - right);
  const Y = y => height - bottom - (y - ymin) / (ymax - ymin) * (height - top - bottom);
  svg.appendChild(el("text", { x: left, y: 15, "font-weight": 700 }, options.title || ""));
  for (let i = 0; i <= 4; i++) {
    const y = ymin + (ymax - ymin) * i / 4;
    svg.appendChild(el("line", { x1: left, x2: width - right, y1: Y(y), y2: Y(y), class: "grid" }));
    svg.appendChild(el("text", { x: left - 6, y: Y(y) + 4, "text-anchor": "end" }, +y.toFixed(2)));
  }
  for (let i = 0; i <= 5; i++) {
    const x = Math.round(xmin + (xmax - xmin) * i / 5);
    svg.appendChild(el("text", { x: X(x), y: height - bottom + 15, "text-anchor": "middle" }, x));
  }
  svg.appendChild(el("line", { x1: left, x2: left, y1: top, y2: height - bottom, class: "axis" }));
  svg.appendChild(el("line", { x1: left, x2: width - right, y1: height - bottom, y2: height - bottom, class: "axis" }));
  svg.appendChild(el("text", { x: (left + width - right) / 2, y: height - 3, "text-anchor": "middle" }, options.xlabel || ""));
  series.forEach((s, k) => {
    let d = "", pen = "M";
    s.ys.forEach((y, i) => {
      if (y === null) { if (!s.connect) pen = "M"; return; }  // connect: join the points across gaps
      d += `${pen}${X(xs[i]).toFixed(1)},${Y(y).toFixed(1)}`;
      pen = "L";
    });
    if (s.dots) {
      s.ys.forEach((y, i) => {
        if (y !== null) svg.appendChild(el("circle", { cx: X(xs[i]), cy: Y(y), r: 2.5, fill: s.color }));
      });
    }
    const path = el("path", { d, class: "series", stroke: s.color, "data-name": s.name });
    if (s.dash) path.setAttribute("stroke-dasharray", s.dash);
    svg.appendChild(path);
    const ly = top + 14 * k;
    svg.appendChild(el("line", { x1: width - right + 8, x2: width - right + 26, y1: ly, y2: ly, stroke: s.color, "stroke-width": 2, "stroke-dasharray": s.dash || "" }));
    svg.appendChild(el("text", { x: width - right + 30, y: ly + 4 }, s.name));
  });
  if (options.marker !== undefined) {
    svg.appendChild(el("line", { x1: X(options.marker), x2: X(options.marker), y1: top, y2: height - bottom, stroke: "#c33", "stroke-dasharray": "3 3" }));
  }
  container.replaceChildren(svg);
}

// ---- Play --------------------------------------------------------------------------------------

// game: the server's view of the game (null before one starts: the rules' start position shows);
// busy: the opponent is thinking; pending: a request of the person is on its way; suggested: the
// opponent is the page's own pick (the rules' strongest) until the person or a link chooses one;
// flipped: the board turned from its usual side (your pieces at the bottom); viewing: the turn
// whose position the board shows from the move list (null: the game now); cursor: the square
// keyboard focus rests on.
const play = {
  game: null, selected: null, busy: false, pending: false, info: null, suggested: true,
  flipped: false, viewing: null, viewPosition: null, cursor: null, cells: {}, resignArmed: null,
};

function humanSide() { return play.game ? play.game.human : $("human").value; }

// Your pieces at the bottom (Black's start squares 1-12 are drawn at the top), unless flipped.
function blackAtBottom() { return (humanSide() === "black") !== play.flipped; }

// The opponent list of the chosen rules (grouped; the strongest first), with the advanced spec in
// step: picking one fills the spec in, a typed spec picks its entry (or "custom").
function fillOpponents() {
  const info = play.info;
  if (!info) return;
  const rules = $("rules").value;
  const choices = (info.opponents && info.opponents[rules]) || [{ spec: "random", label: "random", group: "Levels" }];
  const select = $("opponent-choice");
  const groups = {};
  for (const c of choices) {
    if (!groups[c.group]) groups[c.group] = html("optgroup", { label: c.group });
    groups[c.group].appendChild(html("option", { value: c.spec }, c.label));
  }
  const custom = html("option", { value: "" }, "Custom player spec (Advanced)");
  select.replaceChildren(...Object.values(groups), custom);
  $("agents").replaceChildren(...((info.suggestions && info.suggestions[rules]) || []).map(s => html("option", { value: s })));
  if (play.suggested) $("opponent").value = choices[0].spec;
  syncChoice();
}

function syncChoice() {
  const spec = $("opponent").value.trim();
  const select = $("opponent-choice");
  select.value = [...select.options].some(o => o.value === spec) ? spec : "";
}

function stepsFrom(game, square) {
  return game.steps.filter(([from]) => from === square).map(([, to]) => to);
}

function lastTurnMarks(turn, add) { if (turn) turn.path.forEach(n => add(n, "last")); }

function playMarks(game) {
  const marks = {};
  const add = (n, mark) => { (marks[n] = marks[n] || []).push(mark); };
  lastTurnMarks(game.turns[game.turns.length - 1], add);
  const continuing = game.position.continuing;
  if (continuing !== null) add(continuing, "jumping");  // mid multi-jump: the piece that goes on
  if (!game.human_to_move || play.busy || play.pending) return marks;
  for (const from of new Set(game.steps.map(([from]) => from))) add(from, "movable");
  const selected = continuing ?? play.selected;
  if (selected !== null) {
    add(selected, "selected");
    stepsFrom(game, selected).forEach(n => add(n, "target"));
  }
  return marks;
}

function playStatus(game) {
  if (!game) return "Press Play (or click one of your pieces) to start against the opponent chosen.";
  if (game.over) return `Game over (${game.result}): ${game.reason}.`;
  if (play.busy) return "The opponent is thinking...";
  if (game.human_to_move) {
    const side = game.human === "black" ? "Black" : "White";
    if (game.position.continuing) return `Your move (${side}): go on jumping from ${game.position.continuing}.`;
    if (game.must_capture) return `Your move (${side}). ${game.must_capture}.`;
    return `Your move (${side}): click a piece, then its target square.`;
  }
  return "The opponent is to move.";
}

// The evaluation bar: your chance of winning, from the opponent's last estimate (the result once
// the game is over); grey at one half when the opponent gives no win chance.
function renderEvalBar(game) {
  let chance = null;
  if (game && game.over) chance = game.result === "1/2-1/2" ? 0.5 : (game.result === "1-0") === (game.human === "black") ? 1 : 0;
  else if (game && game.evaluation && game.evaluation.win_chance !== undefined) chance = 1 - game.evaluation.win_chance;
  const bar = $("eval-bar");
  bar.classList.toggle("unknown", chance === null);
  bar.classList.toggle("you-black", humanSide() === "black");
  bar.classList.toggle("you-white", humanSide() === "white");
  const percent = chance === null ? 50 : Math.round(100 * chance);
  $("eval-fill").style.height = `${percent}%`;
  bar.setAttribute("aria-valuenow", percent);
  bar.setAttribute("aria-valuetext", chance === null ? "unknown" : `${percent}%`);
  bar.title = chance === null ? "No win chance from this opponent" : `Your win chance: ${percent}%`;
  bar.dataset.chance = chance === null ? "" : percent;
  $("eval-number").textContent = chance === null ? "" : `${percent}%`;
}

// The endgame database's value of the position shown (the server's line of text), hidden outside it.
function renderEndgame(endgame) {
  const line = $("play-endgame");
  line.hidden = !endgame;
  line.textContent = endgame ? endgame.text : "";
  line.dataset.forYou = endgame ? endgame.for_you : "";
}

// Paired rows ("1. 11-15 23-19"), one a Black move; a list opening with White's move shows "..."
// first. ``button(move, i)`` makes each move's button; ``move.side`` is "black" or "white".
function pairedRows(moves, button) {
  const rows = [];
  moves.forEach((move, i) => {
    if (move.side === "black" || !rows.length) {
      const li = html("li");
      li.appendChild(html("span", { class: "no" }, `${rows.length + 1}.`));
      if (move.side === "white") li.appendChild(html("span", { class: "turn skip" }, "..."));
      rows.push(li);
    }
    rows[rows.length - 1].appendChild(button(move, i));
  });
  return rows;
}

// Scrolls the list (only the list, never the page) so that row is in view.
function keepInView(list, row) {
  if (!row) return;
  const top = row.offsetTop, bottom = top + row.offsetHeight;
  if (top < list.scrollTop) list.scrollTop = top;
  else if (bottom > list.scrollTop + list.clientHeight) list.scrollTop = bottom - list.clientHeight;
}

function renderMoves(game) {
  const list = $("play-moves");
  const shown = play.viewing ?? (game ? game.turns.length : 0);
  list.replaceChildren(...pairedRows(game ? game.turns : [], (t, i) => {
    const button = html("button", { type: "button", class: `turn ${t.by_human ? "human" : "opponent"}`, "data-turn": i + 1 }, t.notation);
    if (i + 1 === shown) button.classList.add("current");
    button.addEventListener("click", () => viewTurn(i + 1));
    return button;
  }));
  const analysis = analyses.play && game && analyses.play.gameId === game.id ? analyses.play : null;
  markThrown(list, "turn", analysis);
  const current = list.querySelector(".current");
  if (play.viewing === null) list.scrollTop = list.scrollHeight;  // the last move in view
  else if (current) keepInView(list, current.closest("li"));
}

function renderButtons(game) {
  $("undo").disabled = !game || !game.can_undo || play.busy;
  $("resign").disabled = !game || game.over;
  $("rematch").disabled = !game || play.busy || play.pending;
  if (!game || game.over) disarmResign();
  const pdn = $("pdn");
  pdn.classList.toggle("disabled", !game);
  pdn.setAttribute("aria-disabled", String(!game));
  if (game) pdn.href = `/api/games/${game.id}/pdn`;
  else pdn.removeAttribute("href");
  $("live").hidden = play.viewing === null;
  $("play-analyse").disabled = !game || play.busy || play.pending;
}

function renderPlay() {
  const game = play.game;
  const board = $("play-board");
  const hadFocus = board.contains(document.activeElement);
  const viewing = play.viewing !== null;
  const position = viewing ? play.viewPosition : game ? game.position : play.info.start[$("rules").value];
  const marks = viewing ? {} : game ? playMarks(game) : {};
  if (viewing && game.turns[play.viewing - 1]) game.turns[play.viewing - 1].path.forEach(n => { marks[n] = ["last"]; });
  const squares = position.board_size * position.board_size / 2;
  if (!(play.cursor >= 1 && play.cursor <= squares)) play.cursor = game && game.steps.length ? game.steps[0][0] : 1;
  play.cells = drawBoard(board, position, marks, { onClick: clickSquare, flipped: blackAtBottom(), cursor: play.cursor });
  if (hadFocus) focusCursor();
  const waiting = play.busy || play.pending;
  board.dataset.state = !game ? "none" : game.over ? "over" : waiting ? "busy" : game.human_to_move ? "human" : "opponent";
  board.dataset.view = viewing ? String(play.viewing) : "live";
  $("play-status").textContent = viewing ? `Move ${play.viewing} of ${game.turns.length}: back to the game to play on.` : playStatus(game);
  $("play-eval").textContent = game && game.evaluation ? game.evaluation.text : "";
  renderGameOver(game, viewing);
  renderEndgame(position.endgame);
  renderEvalBar(game);
  renderButtons(game);
  renderMoves(game);
  if (analyses.play && (!game || analyses.play.gameId !== game.id)) clearAnalysis("play");
  else if (analyses.play && play.viewing !== null) renderAnalysis("play", play.viewing, pickPlayPosition);
}

// ---- drag and drop: press on a piece that can move, drag it onto a target square, let go ----------
// (a press without a drag stays a click). from: the piece's square while a drag may start; moved:
// the pointer went further than DRAG_PIXELS; justDropped: the click that ends a drag is not a click.
const drag = { from: null, x: 0, y: 0, pointer: null, moved: false, justDropped: false };
const DRAG_PIXELS = 6;

function draggable(n) {
  const game = play.game;
  if (!game || !game.human_to_move || play.busy || play.pending || play.viewing !== null) return false;
  const continuing = game.position.continuing;
  return (continuing === null || continuing === n) && stepsFrom(game, n).length > 0;
}

function squareAt(x, y) {
  const hit = document.elementFromPoint(x, y);
  const g = hit && hit.closest ? hit.closest("#play-board g[data-square]") : null;
  return g ? +g.dataset.square : null;
}

function dragStart(event) {
  if (event.button !== 0) return;
  const g = event.target.closest ? event.target.closest("g[data-square]") : null;
  if (!g || !draggable(+g.dataset.square)) return;
  Object.assign(drag, { from: +g.dataset.square, x: event.clientX, y: event.clientY, pointer: event.pointerId, moved: false });
}

function dragMove(event) {
  if (drag.from === null || event.pointerId !== drag.pointer) return;
  const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
  if (!drag.moved) {
    if (Math.hypot(dx, dy) < DRAG_PIXELS) return;
    drag.moved = true;
    $("play-board").setPointerCapture(event.pointerId);
    play.selected = drag.from;  // its targets show while it is dragged
    $("play-message").textContent = "";
    renderPlay();
  }
  const svg = $("play-board").querySelector("svg");
  const g = svg.querySelector(`g[data-square="${drag.from}"]`);
  const scale = svg.viewBox.baseVal.width / svg.getBoundingClientRect().width;
  svg.appendChild(g);  // drawn over the other squares
  g.classList.add("dragging");
  g.querySelectorAll(".piece, .crown, .ring").forEach(node => node.setAttribute("transform", `translate(${dx * scale} ${dy * scale})`));
}

function dragCancel() {
  const was = drag.from;
  drag.from = null;
  if (was !== null && drag.moved) renderPlay();
}

async function dragEnd(event) {
  if (drag.from === null || event.pointerId !== drag.pointer) return;
  const from = drag.from;
  drag.from = null;
  if (!drag.moved) return;  // a click: the squares' click handler takes it
  drag.justDropped = true;
  setTimeout(() => { drag.justDropped = false; }, 0);
  const to = squareAt(event.clientX, event.clientY);
  if (to === null || to === from) {  // back where it was: the piece stays picked
    renderPlay();
    return;
  }
  play.selected = null;
  await playSteps([from, to]);  // an illegal square: the server says why
}

function focusCursor() {
  const square = $("play-board").querySelector(`g[data-square="${play.cursor}"]`);
  if (square) square.focus();
}

// Keyboard play on the board: arrows move the focus over the dark squares (as they are drawn),
// Enter or Space clicks the focused square, Escape lets a picked piece go.
function boardKeys(event) {
  const square = event.target.closest && event.target.closest("g[data-square]");
  if (!square) return;
  const n = +square.dataset.square;
  if (event.key.startsWith("Arrow")) {
    event.preventDefault();
    const next = squareTowards(play.cells, n, event.key);
    if (next !== null) {
      play.cursor = next;
      square.setAttribute("tabindex", "-1");
      const target = $("play-board").querySelector(`g[data-square="${next}"]`);
      target.setAttribute("tabindex", "0");
      target.focus();
    }
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    play.cursor = n;
    clickSquare(n);
  } else if (event.key === "Escape") {
    play.selected = null;
    renderPlay();
  }
}

function setPlayUrl() {
  if (!$("page-play").classList.contains("active")) return;
  const params = new URLSearchParams();
  if (play.game) params.set("game", play.game.id);
  if (play.flipped) params.set("flip", "1");
  const query = params.toString();
  history.replaceState(null, "", `#play${query ? "?" + query : ""}`);
}

async function playRequest(method, url, body) {
  try {
    play.game = await api(method, url, body);
    $("play-message").textContent = "";
    return true;
  } catch (error) {
    $("play-message").textContent = error.message;
    return false;
  }
}

async function opponentMoves() {
  while (play.game && play.game.opponent_to_move) {
    play.busy = true;
    renderPlay();
    const ok = await playRequest("POST", `/api/games/${play.game.id}/reply`);
    play.busy = false;
    if (!ok) break;
    play.selected = null;
  }
  renderPlay();
}

// Why a click on square n picks nothing: a compulsory capture elsewhere, or nothing to move there.
function noMoveMessage(game, n) {
  const own = game.position.pieces.some(p => p.square === n && p.color === game.human);
  if (!own) return "click one of your pieces first";
  return game.must_capture || `the piece on ${n} has no legal move`;
}

async function clickSquare(n) {
  if (drag.justDropped) return;  // the click that ends a drag
  if (!play.game) {  // the board on arrival: a click on a piece starts the game
    if (play.pending) return;
    await newGame();
    if (play.game && play.game.human_to_move && stepsFrom(play.game, n).length) clickSquare(n);
    return;
  }
  const game = play.game;
  if (play.viewing !== null) { backToGame(); return; }
  if (!game.human_to_move || play.busy || play.pending) return;
  play.cursor = n;
  const continuing = game.position.continuing;
  if (continuing === null && n === play.selected) {  // a second click lets the piece go
    play.selected = null;
    $("play-message").textContent = "";
    renderPlay();
    return;
  }
  if (continuing === null && stepsFrom(game, n).length) {
    play.selected = n;  // pick (or switch to) a piece that can move
    $("play-message").textContent = "";
    renderPlay();
    return;
  }
  const from = continuing !== null ? continuing : play.selected;
  if (from === null) {
    $("play-message").textContent = noMoveMessage(game, n);
    return;
  }
  await playSteps([from, n]);
}

// Plays the person's squares path[0] -> path[1] -> ... (a multi-jump step by step), then lets the
// opponent answer. The server says why an illegal step is refused.
async function playSteps(path) {
  play.pending = true;
  renderPlay();
  let moved = true;
  for (let i = 0; i + 1 < path.length && moved; i++) {
    moved = await playRequest("POST", `/api/games/${play.game.id}/move`, { from: path[i], to: path[i + 1] });
  }
  play.pending = false;
  play.selected = moved ? play.game.position.continuing : play.selected;
  renderPlay();
  await opponentMoves();
}

// A typed move (11-15, 9x18x27, or the ends of a multi-jump, 9x27) -> the legal move it names.
function typedMove(game, text) {
  const squares = text.trim().split(/\s*[-x:X\s]\s*/).filter(Boolean).map(Number);
  if (squares.length < 2 || squares.some(s => !Number.isInteger(s))) return { error: `cannot read ${JSON.stringify(text)}: write it as 11-15 or 9x18x27` };
  const same = game.moves.filter(m => m.length === squares.length && m.every((s, i) => s === squares[i]));
  const ends = game.moves.filter(m => m[0] === squares[0] && m[m.length - 1] === squares[squares.length - 1]);
  const found = same.length ? same : squares.length === 2 ? ends : [];
  if (found.length === 1) return { path: found[0] };
  if (found.length > 1) return { error: `${text} is ambiguous: type the whole path (${found.map(m => m.join("x")).join(" or ")})` };
  return { error: game.must_capture || `${text.trim()} is not a legal move here` };
}

async function typeMove(event) {
  event.preventDefault();
  const input = $("move-input");
  const game = play.game;
  if (!game || !game.human_to_move || play.busy || play.pending) {
    $("play-message").textContent = game ? "wait for your turn" : "start a game first (Play)";
    return;
  }
  const found = typedMove(game, input.value);
  if (found.error) {
    $("play-message").textContent = found.error;
    return;
  }
  input.value = "";
  play.selected = null;
  await playSteps(found.path);
  input.focus();
}

// The position set up under "Start from a position": a FEN, or a PDN game (its number, and the
// moves played before you take over: all when left empty); nothing when the box is empty.
function setupSettings() {
  const text = $("setup-text").value.trim();
  if (!text) return {};
  if (/^"?[BW]:/i.test(text)) return { fen: text.replace(/"/g, "") };
  const settings = { pdn: text, pdn_game: parseInt($("setup-game").value, 10) || 1 };
  const move = $("setup-move").value.trim();
  if (move !== "") settings.pdn_move = parseInt(move, 10);
  return settings;
}

function gameSettings() {
  return {
    rules: $("rules").value,
    human: $("human").value,
    opponent: $("opponent").value.trim(),
    think_seconds: parseFloat($("think").value),
    ...setupSettings(),
  };
}

// The end of a game as a panel under the board: the result from your side, why, Rematch and New game.
function renderGameOver(game, viewing) {
  const over = Boolean(game && game.over && !viewing);
  $("game-over").hidden = !over;
  document.querySelector(".play").classList.toggle("in-game", Boolean(game && !game.over));
  if (!over) return;
  const won = game.result === "1-0" ? "black" : game.result === "0-1" ? "white" : null;
  $("game-over-result").textContent = won === null ? "Draw." : won === game.human ? "You won." : "You lost.";
  $("game-over-reason").textContent = `${game.result}: ${game.reason}.`;
}

// The settings shown again for a new game (collapsed on a phone while a game is played).
function showSettings() {
  const settings = $("settings");
  settings.open = true;
  settings.scrollIntoView({ block: "nearest" });
  $("new-game-button").focus();
}

// A new game of the game's settings and start position, your colour swapped when "swap colours" is ticked.
async function rematch() {
  const game = play.game;
  if (!game) return;
  const human = $("swap").checked ? (game.human === "black" ? "white" : "black") : game.human;
  $("human").value = human;
  await newGame(null, {
    rules: game.rules, human, opponent: openedSetting(game), think_seconds: game.think_seconds, fen: game.start_fen,
  });
}

async function newGame(event, settings) {
  if (event) event.preventDefault();
  if (play.pending || play.busy) return;
  $("play-status").textContent = "Preparing the opponent...";
  $("play-message").textContent = "";
  play.pending = true;
  const previous = play.game;
  const ok = await playRequest("POST", "/api/games", settings || gameSettings());
  play.pending = false;
  if (!ok) {
    play.game = previous;
    $("play-status").textContent = "";
    return;
  }
  play.selected = null;
  play.viewing = null;
  play.cursor = null;  // keyboard focus starts on a piece that can move
  if (window.matchMedia("(max-width: 600px)").matches) $("settings").open = false;  // the board first
  setPlayUrl();
  renderPlay();
  await opponentMoves();
}

// The opponent setting a game was made from: an agent file alone stands for the compiled search
// (8x8) or the timed search for the think time, which the server names in full.
function openedSetting(game) {
  const timed = game.opponent.match(/^(?:timed|compiled):([0-9.]+)s:(.+\.safetensors)$/);
  return timed && +timed[1] === game.think_seconds ? timed[2] : game.opponent;
}

// Opens the game ``id`` kept by the server (a reload, or a shared link), its settings shown.
async function openPlayGame(id) {
  if (play.game && play.game.id === id) { renderPlay(); return; }
  try {
    play.game = await api("GET", `/api/games/${encodeURIComponent(id)}`);
  } catch (error) {
    play.game = null;
    renderPlay();
    $("play-message").textContent = `${error.message}: start a new game.`;
    return;
  }
  const game = play.game;
  $("rules").value = game.rules;
  $("human").value = game.human;
  $("think").value = game.think_seconds;
  play.suggested = false;
  fillOpponents();
  $("opponent").value = openedSetting(game);
  syncChoice();
  play.selected = null;
  play.viewing = null;
  renderPlay();
  await opponentMoves();
}

async function undoMove() {
  if (!play.game || play.busy || play.pending) return;
  await playRequest("POST", `/api/games/${play.game.id}/undo`);
  play.selected = null;
  play.viewing = null;
  renderPlay();
}

function disarmResign() {
  clearTimeout(play.resignArmed);
  play.resignArmed = null;
  $("resign").textContent = "Resign";
  $("resign").classList.remove("confirm");
}

// Resigning takes a second click (within a few seconds), as a slip of the mouse should not end a game.
async function resignGame() {
  if (!play.game || play.game.over) return;
  if (play.resignArmed === null) {
    $("resign").textContent = "Really resign?";
    $("resign").classList.add("confirm");
    play.resignArmed = setTimeout(disarmResign, 4000);
    return;
  }
  disarmResign();
  await playRequest("POST", `/api/games/${play.game.id}/resign`);
  play.selected = null;
  renderPlay();
}

function flipBoard() {
  play.flipped = !play.flipped;
  setPlayUrl();
  renderPlay();
}

async function viewTurn(turn) {
  const game = play.game;
  if (!game) return;
  if (turn >= game.turns.length) { backToGame(); return; }
  try {
    play.viewPosition = await api("GET", `/api/games/${game.id}/positions/${turn}`);
    play.viewing = turn;
  } catch (error) {
    $("play-message").textContent = error.message;
  }
  renderPlay();
}

function backToGame() {
  play.viewing = null;
  renderPlay();
}

function playSettingsChanged() {
  if (!play.game) renderPlay();  // the arrival board follows the rules and side chosen
}

// ---- Games -------------------------------------------------------------------------------------

const viewer = { file: null, view: null, index: 0, path: null, number: null };

async function loadGameFiles() {
  const data = await api("GET", "/api/game-files");
  const list = $("game-files");
  list.replaceChildren(...data.files.map(path => {
    const a = html("a", { "data-path": path }, path);
    a.addEventListener("click", () => openGameFile(path));
    const li = html("li");
    li.appendChild(a);
    return li;
  }));
  if (!data.files.length) list.replaceChildren(html("li", {}, "no game files in this folder (match --save-games writes them)"));
}

function gamePdnUrl(path, number) { return `/api/game-file/pdn?path=${q(path)}&game=${number}`; }

async function openGameFile(path, game) {
  viewer.file = path;
  document.querySelectorAll("#game-files a").forEach(a => a.classList.toggle("current", a.dataset.path === path));
  try {
    const data = await api("GET", `/api/game-file?path=${q(path)}`);
    const list = $("game-list");
    list.replaceChildren(...data.games.map(g => {  // numbered as in the file: a skipped game keeps its number
      const a = html("a", { "data-game": g.number }, `${g.number}. ${g.black} vs ${g.white}: ${g.result}, ${g.moves} moves`);
      a.addEventListener("click", () => openGame(path, g.number));
      const li = html("li");
      const pdn = html("a", { class: "pdn", href: gamePdnUrl(path, g.number), download: "", title: "this game as PDN" }, "PDN");
      li.append(a, " ", pdn);
      return li;
    }));
    if (data.games.length) await openGame(path, game ?? data.games[0].number);
  } catch (error) {
    $("games-info").textContent = error.message;
  }
}

async function openGame(path, number) {
  $("games-info").textContent = "Loading...";
  document.querySelectorAll("#game-list a").forEach(a => a.classList.toggle("current", +a.dataset.game === number));
  viewer.view = await api("GET", `/api/game-file/game?path=${q(path)}&game=${number}`);
  viewer.index = 0;
  viewer.path = path;
  viewer.number = number;
  clearAnalysis("games");
  $("games-analyse").disabled = false;
  const pdn = $("games-pdn");
  pdn.href = gamePdnUrl(path, number);
  pdn.classList.remove("disabled");
  pdn.setAttribute("aria-disabled", "false");
  const moves = viewer.view.moves.map((notation, i) => ({ notation, side: viewer.view.positions[i].to_move }));
  $("games-moves").replaceChildren(...pairedRows(moves, (m, i) => {
    const button = html("button", { type: "button", class: "turn", "data-ply": i + 1 }, m.notation);
    button.addEventListener("click", () => showPly(i + 1));
    return button;
  }));
  showPly(0);
}

function showPly(index) {
  const view = viewer.view;
  if (!view) return;
  viewer.index = Math.max(0, Math.min(index, view.positions.length - 1));
  const i = viewer.index;
  const position = view.positions[i];
  const marks = {};
  if (i > 0) view.moves[i - 1].split(/[-x]/).forEach(n => { marks[+n] = ["last"]; });
  drawBoard($("games-board"), position, marks);
  $("games-board").dataset.ply = i;
  $("ply-label").textContent = `move ${i} of ${view.moves.length}`;
  const m = position.material;
  let info = `${view.black} (Black) vs ${view.white} (White), ${view.result}. Material: Black ${m.black}, White ${m.white}.`;
  if (position.over) info += ` ${position.reason}.`;
  $("games-info").textContent = info;
  const chances = view.evaluation ? view.evaluation.black_chance : null;
  $("games-eval").textContent = chances
    ? `${view.evaluation.agent}: Black's chance of winning ${Math.round(100 * chances[i])}%`
    : view.note || "";
  document.querySelectorAll("#games-moves button.turn").forEach((b, k) => b.classList.toggle("current", k === i - 1));
  const current = document.querySelector("#games-moves button.turn.current");
  if (current) keepInView($("games-moves"), current.closest("li"));
  else $("games-moves").scrollTop = 0;
  const xs = view.positions.map((_, k) => k);
  const series = [{ name: "Black's material", ys: view.positions.map(p => p.material.black_lead), color: "#444" }];
  if (chances) series.push({ name: "10 (chance - 1/2)", ys: chances.map(c => 10 * c - 5), color: "#1d5a8a", dash: "5 3" });
  lineChart($("games-chart"), xs, series, { width: 440, height: 180, xlabel: "move", marker: i });
  renderAnalysis("games", i, showPly);
}

function gameKeys(event) {
  if (!viewer.view || !$("page-games").classList.contains("active")) return;
  const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -1e9, End: 1e9 };
  if (event.key in moves) {
    event.preventDefault();
    showPly(viewer.index + moves[event.key]);
  }
}

// ---- Analysis (the Games and Play pages) ----------------------------------------------------------

// The server's analysis of the open game on each page (null until asked): Black's outlook at every
// position, the engine's best move and line, the exact verdict where a database or perfect play
// reaches, and the moves that throw away the value. ``selected``: the position the detail shows.
const analyses = { games: null, play: null, selected: { games: 0, play: 0 } };
const SIDE = { black: "Black", white: "White" };

function verdictWinner(p) {
  if (!p.verdict || p.verdict === "draw") return p.verdict ? "draw" : null;
  return (p.verdict === "win") === (p.to_move === "black") ? "black" : "white";
}

// Black's outlook over the positions (1: Black wins, -1: White wins), a dot each (filled by the
// exact verdict where there is one), a red cross on each move that throws away the value; a click
// anywhere over a position picks it.
function analysisGraph(container, analysis, selected, pick) {
  const width = 560, height = 190, left = 44, right = 12, top = 12, bottom = 26;
  const ps = analysis.positions, last = Math.max(ps.length - 1, 1);
  const X = i => left + i / last * (width - left - right);
  const Y = v => top + (1 - v) / 2 * (height - top - bottom);
  const svg = el("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "Black's outlook over the game" });
  [[1, "Black"], [0, "even"], [-1, "White"]].forEach(([v, label]) => {
    svg.appendChild(el("line", { x1: left, x2: width - right, y1: Y(v), y2: Y(v), class: v ? "grid" : "axis" }));
    svg.appendChild(el("text", { x: left - 4, y: Y(v) + 4, "text-anchor": "end" }, label));
  });
  for (let k = 0; k <= 5; k++) {
    const i = Math.round(last * k / 5);
    svg.appendChild(el("text", { x: X(i), y: height - 8, "text-anchor": "middle" }, i));
  }
  svg.appendChild(el("path", { class: "series", stroke: "#1d5a8a",
    d: ps.map((p, i) => `${i ? "L" : "M"}${X(i).toFixed(1)},${Y(p.black_value).toFixed(1)}`).join("") }));
  svg.appendChild(el("line", { x1: X(selected), x2: X(selected), y1: top, y2: height - bottom, class: "selected" }));
  const fills = { black: "#222", white: "#fff", draw: "#999" };
  ps.forEach((p, i) => {
    const winner = verdictWinner(p);
    svg.appendChild(el("circle", { cx: X(i), cy: Y(p.black_value), r: winner ? 4 : 2.5, class: "ply",
      "data-ply": i, "data-verdict": p.verdict || "", fill: winner ? fills[winner] : "#1d5a8a", stroke: "#333" }));
    if (p.throws) {
      const x = X(i), y = Y(p.black_value) + (p.black_value > 0 ? 11 : -11);  // inside the plot
      svg.appendChild(el("path", { class: "thrown", "data-ply": i, d: `M${x - 5},${y - 5}L${x + 5},${y + 5}M${x - 5},${y + 5}L${x + 5},${y - 5}` }));
    }
  });
  const dx = (width - left - right) / last;
  ps.forEach((p, i) => {
    const hit = el("rect", { x: X(i) - dx / 2, y: top, width: dx, height: height - top - bottom, class: "ply-hit", "data-ply": i });
    hit.appendChild(el("title", {}, `move ${i}${p.move ? `: ${p.move} played` : ""}${p.throws ? " (throws away the value)" : ""}`));
    hit.addEventListener("click", () => pick(i));
    svg.appendChild(hit);
  });
  container.replaceChildren(svg);
}

function analysisDetail(detail, p) {
  const side = SIDE[p.to_move];
  const parts = [html("span", {}, p.index ? `After move ${p.index}, ${side} to move. ` : `The start, ${side} to move. `)];
  if (p.over) parts.push(html("span", {}, "The game is over. "));
  else {
    const outlook = p.black_chance !== null ? `Black's win chance ${Math.round(100 * p.black_chance)}%`
      : `score ${p.score >= 0 ? "+" : ""}${p.score.toFixed(2)} for ${side}`;
    parts.push(html("span", { class: "evaluation" }, `Engine: ${outlook} (depth ${p.depth}, ${p.nodes} nodes). `));
    if (p.best_move) parts.push(html("span", { class: "best" }, `Best move ${p.best_move}; line: ${p.line.join(" ")}. `));
  }
  if (p.verdict) {
    const what = p.verdict === "draw" ? "a draw" : `${side} ${p.verdict === "win" ? "wins" : "loses"}`;
    const distance = p.distance ? ` in ${p.distance} move${p.distance === 1 ? "" : "s"}` : "";
    parts.push(html("span", { class: "verdict" }, `Exact: ${what}${distance} (${p.source}). `));
  } else parts.push(html("span", { class: "no-verdict muted" }, "No exact verdict here. "));
  if (p.move) {
    parts.push(html("span", {}, `Played: ${p.move}`));
    if (p.throws) parts.push(html("span", { class: "throws" }, ` ?? throws away the ${p.verdict} (${p.verdict} -> ${p.move_leaves})`));
    parts.push(html("span", {}, "."));
  }
  detail.replaceChildren(...parts);
  detail.dataset.ply = p.index;
  detail.dataset.verdict = p.verdict || "";
  detail.hidden = false;
}

// Draws the page's (``which``: games or play) analysis with position ``i`` picked.
function renderAnalysis(which, i, pick) {
  const analysis = analyses[which];
  if (!analysis) return;
  i = Math.max(0, Math.min(i, analysis.positions.length - 1));
  analyses.selected[which] = i;
  analysisGraph($(`${which}-analysis-chart`), analysis, i, pick);
  analysisDetail($(`${which}-analysis-detail`), analysis.positions[i]);
}

function clearAnalysis(which) {
  analyses[which] = null;
  $(`${which}-analysis-chart`).replaceChildren();
  $(`${which}-analysis-detail`).hidden = true;
  $(`${which}-analysis-status`).textContent = "";
}

function analysisSummary(analysis) {
  const exact = analysis.positions.filter(p => p.verdict).length;
  const thrown = analysis.positions.filter(p => p.throws).map(p => `${p.index}. ${p.move}`);
  const leaves = analysis.leaves === "material" ? "material" : `${analysis.leaves}'s network`;
  return `compiled search, ${analysis.nodes} nodes a position, ${leaves} at the leaves; exact verdicts at `
    + `${exact} of ${analysis.positions.length} positions; ` + (thrown.length ? `moves that throw away the value: ${thrown.join(", ")}` : "no move throws away the value")
    + (analysis.note ? ` (${analysis.note})` : "");
}

// Marks the moves of a move list (buttons with ``attr`` = the move's number) that throw away the value.
function markThrown(list, attr, analysis) {
  list.querySelectorAll("button.turn").forEach(b => {
    const p = analysis && analysis.positions[+b.dataset[attr] - 1];
    b.classList.toggle("thrown", Boolean(p && p.throws));
    if (p && p.throws) b.title = `throws away the ${p.verdict} (${p.verdict} -> ${p.move_leaves})`;
  });
}

async function analyse(which, url, then) {
  const status = $(`${which}-analysis-status`);
  status.textContent = "Analysing: the search at every position...";
  $(`${which}-analyse`).disabled = true;
  try {
    analyses[which] = await api("GET", url);
    status.textContent = analysisSummary(analyses[which]);
    then();
  } catch (error) {
    status.textContent = error.message;
  } finally {
    $(`${which}-analyse`).disabled = false;
  }
}

function analyseSavedGame() {
  analyse("games", `/api/game-file/analysis?path=${q(viewer.path)}&game=${viewer.number}`, () => {
    markThrown($("games-moves"), "ply", analyses.games);
    renderAnalysis("games", viewer.index, showPly);
  });
}

function analysePlayGame() {
  const game = play.game;
  if (!game) return;
  analyse("play", `/api/games/${game.id}/analysis`, () => {
    analyses.play.gameId = game.id;
    renderMoves(play.game);
    renderAnalysis("play", play.viewing ?? analyses.play.positions.length - 1, pickPlayPosition);
  });
}

function pickPlayPosition(i) {
  if (play.game && i < play.game.turns.length) viewTurn(i);
  else backToGame();
  renderAnalysis("play", i, pickPlayPosition);
}

// ---- Runs --------------------------------------------------------------------------------------

// path: the run shown beside the list; shown: its status and epochs when last drawn (redrawn when
// they change, and every refresh while it runs); timer: the next refresh of the list.
const runs = { path: null, shown: null, timer: null };
const RUNS_REFRESH_MS = 3000;

function statusClass(status) { return `status-${status.split(" ")[0]}`; }

function runRow(r) {
  const tr = html("tr", { "data-path": r.path, class: r.path === runs.path ? "current" : "" });
  const a = html("a", { href: `#runs?run=${q(r.path)}` }, r.path);
  a.addEventListener("click", event => { event.preventDefault(); openRun(r.path); });
  const cell = html("td");
  cell.append(a, html("div", { class: "summary" }, r.summary));
  const epochs = r.epochs === null ? "" : `${r.epochs_done}/${r.epochs}`;
  tr.append(cell, html("td", { class: `status ${statusClass(r.status)}`, title: r.stop_reason }, r.status),
    html("td", { class: "epochs" }, epochs));
  return tr;
}

// The list, every column read afresh; the run shown beside it is redrawn when its row changed.
async function loadRuns() {
  const data = await api("GET", "/api/runs");
  const table = $("run-list");
  const head = html("tr");
  ["run", "status", "epochs"].forEach(h => head.appendChild(html("th", {}, h)));
  table.replaceChildren(head, ...data.runs.map(runRow));
  if (!data.runs.length) table.replaceChildren(html("tr", {}, "no run folders in this folder"));
  $("runs-refreshed").textContent = `read at ${new Date().toLocaleTimeString()}`;
  const current = data.runs.find(r => r.path === runs.path);
  if (current) {
    const now = `${current.status} ${current.epochs_done}`;
    if (now !== runs.shown || current.status === "running") await openRun(current.path);
  }
}

async function refreshRuns() {
  clearTimeout(runs.timer);
  if (!$("page-runs").classList.contains("active")) return;
  try {
    await loadRuns();
  } catch (error) {
    $("runs-refreshed").textContent = error.message;
  }
  runs.timer = setTimeout(refreshRuns, RUNS_REFRESH_MS);
}

function drawLineage(run) {
  const table = $("lineage");
  const head = html("tr");
  ["boss", "promoted after epoch", "points", "", ""].forEach(h => head.appendChild(html("th", {}, h)));
  const rows = run.lineage.map(b => {
    const tr = html("tr");
    tr.append(html("td", {}, `#${b.boss_id}`), html("td", {}, b.epoch < 0 ? "(first, random)" : b.epoch),
      html("td", {}, b.points === null ? "" : b.points));
    const download = html("td"), playIt = html("td");
    if (b.file) {
      download.appendChild(html("a", { href: `/api/agent-file?path=${q(b.file)}`, download: "" }, "download"));
      // The agent file alone: the compiled (8x8) or timed alpha-beta search, its network scoring, for the think time.
      playIt.appendChild(html("a", { class: "play-boss", href: `#play?rules=${q(run.rules)}&opponent=${q(b.file)}` }, "play it"));
    } else {
      download.textContent = "(file not kept)";
    }
    tr.append(download, playIt);
    return tr;
  });
  // A run without a lineage (a committed learner run keeps its final network alone): its agent files.
  if (!rows.length) {
    const none = html("tr");
    none.appendChild(html("td", { colspan: "5", class: "muted" }, run.agents.length
      ? "No lineage kept: the run's agent files are below." : "No lineage kept, and no agent file in the run's folder."));
    rows.push(none);
    run.agents.forEach(file => {
      const tr = html("tr"), download = html("td"), playIt = html("td");
      download.appendChild(html("a", { href: `/api/agent-file?path=${q(file)}`, download: "" }, "download"));
      playIt.appendChild(html("a", { class: "play-boss", href: `#play?rules=${q(run.rules)}&opponent=${q(file)}` }, "play it"));
      tr.append(html("td", {}, file.split("/").pop()), html("td"), html("td"), download, playIt);
      rows.push(tr);
    });
  }
  table.replaceChildren(head, ...rows);
}

async function drawCurves(path) {
  const data = await api("GET", `/api/run/curves?path=${q(path)}`);
  const c = data.columns;
  lineChart($("fitness-chart"), data.epoch, [
    { name: "max", ys: c.fitness_max, color: "#2a7a3a" },
    { name: "q75", ys: c.fitness_q75, color: "#7ab07a", dash: "4 3" },
    { name: "median", ys: c.fitness_median, color: "#1d5a8a" },
    { name: "q25", ys: c.fitness_q25, color: "#d08a3a", dash: "4 3" },
    { name: "min", ys: c.fitness_min, color: "#b03030" },
    { name: "mean", ys: c.fitness_mean, color: "#777", dash: "2 2" },
  ], { title: "fitness: points against the boss per epoch", xlabel: "epoch" });
  const strength = [
    { name: "vs material", ys: c.strength_material, color: "#1d5a8a", dots: true, connect: true },
    { name: "vs random", ys: c.strength_random, color: "#2a7a3a", dots: true, connect: true },
  ];
  if (strength.some(s => s.ys.some(v => v !== null))) {
    lineChart($("strength-chart"), data.epoch, strength, { title: "strength probe: score", xlabel: "epoch", ymin: 0, ymax: 1 });
  } else {
    $("strength-chart").replaceChildren();
  }
}

async function openRun(path) {
  const switched = runs.path !== path;
  runs.path = path;
  // The open run lives in the address: a reload or a bookmark opens it again.
  if ($("page-runs").classList.contains("active")) history.replaceState(null, "", `#runs?run=${q(path)}`);
  document.querySelectorAll("#run-list tr").forEach(tr => tr.classList.toggle("current", tr.dataset.path === path));
  try {
    const run = await api("GET", `/api/run?path=${q(path)}`);
    if (runs.path !== path) return;
    runs.shown = `${run.status} ${run.epochs_done}`;
    $("run-title").textContent = path;
    const status = $("run-status");
    status.textContent = `${run.stop_reason}. ${run.summary}`;
    status.className = `status ${statusClass(run.status)}`;
    $("run-config").textContent = JSON.stringify(run.config, null, 2);
    drawLineage(run);
    await drawCurves(path);
  } catch (error) {
    if (switched) ["fitness-chart", "strength-chart", "lineage"].forEach(id => $(id).replaceChildren());
    $("run-title").textContent = path;
    $("run-status").textContent = error.message;
  }
}

// ---- pages -------------------------------------------------------------------------------------

function routePlay(params) {
  if (params.has("flip")) play.flipped = params.get("flip") === "1";
  if (params.get("game")) {
    openPlayGame(params.get("game"));
    return;
  }
  if (params.get("opponent")) {  // a link to play an agent: its settings, ready for one click
    if (params.get("rules")) $("rules").value = params.get("rules");
    play.suggested = false;
    play.game = null;
    fillOpponents();
    $("opponent").value = params.get("opponent");
    syncChoice();
  }
  setPlayUrl();
  renderPlay();
}

function route() {
  const [page, query] = (location.hash.slice(1) || "play").split("?");
  const name = ["play", "games", "runs"].includes(page) ? page : "play";
  document.querySelectorAll(".page").forEach(p => p.classList.toggle("active", p.id === `page-${name}`));
  document.querySelectorAll("header nav a").forEach(a => {
    a.classList.toggle("active", a.id === `nav-${name}`);
    if (a.id === `nav-${name}`) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  const params = new URLSearchParams(query || "");
  if (name === "play") routePlay(params);
  if (name === "games") loadGameFiles().then(() => { if (params.get("file")) openGameFile(params.get("file"), +params.get("game") || undefined); });
  if (name === "runs") {
    if (params.get("run")) runs.path = params.get("run");
    refreshRuns();
  } else {
    clearTimeout(runs.timer);
  }
}

async function start() {
  const info = await api("GET", "/api/info");
  $("folder").textContent = `serving ${info.folder}`;
  $("rules").replaceChildren(...info.presets.map(p => html("option", {}, p)));
  $("rules").value = info.default_rules || info.presets[0];
  play.info = info;
  fillOpponents();
  $("rules").addEventListener("change", () => { fillOpponents(); playSettingsChanged(); });
  $("human").addEventListener("change", playSettingsChanged);
  $("opponent-choice").addEventListener("change", () => {
    const spec = $("opponent-choice").value;
    play.suggested = false;
    if (spec) $("opponent").value = spec;
    else $("advanced").open = true;
  });
  $("opponent").addEventListener("input", () => { play.suggested = false; syncChoice(); });
  $("new-game").addEventListener("submit", newGame);
  $("move-form").addEventListener("submit", typeMove);
  $("play-board").addEventListener("keydown", boardKeys);
  $("undo").addEventListener("click", undoMove);
  $("resign").addEventListener("click", resignGame);
  $("flip").addEventListener("click", flipBoard);
  $("rematch").addEventListener("click", rematch);
  $("over-rematch").addEventListener("click", rematch);
  $("over-new").addEventListener("click", showSettings);
  $("play-board").addEventListener("pointerdown", dragStart);
  $("play-board").addEventListener("pointermove", dragMove);
  $("play-board").addEventListener("pointerup", dragEnd);
  $("play-board").addEventListener("pointercancel", dragCancel);
  $("live").addEventListener("click", backToGame);
  $("games-analyse").addEventListener("click", analyseSavedGame);
  $("play-analyse").addEventListener("click", analysePlayGame);
  $("first").addEventListener("click", () => showPly(0));
  $("prev").addEventListener("click", () => showPly(viewer.index - 1));
  $("next").addEventListener("click", () => showPly(viewer.index + 1));
  $("last").addEventListener("click", () => showPly(1e9));
  document.addEventListener("keydown", gameKeys);
  window.addEventListener("hashchange", route);
  route();
}

start();
