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

// Square n (1-based, American numbering, Black at the top) -> [row, column].
function squareCell(n, size) {
  const half = size / 2;
  const row = Math.floor((n - 1) / half);
  const col = 2 * ((n - 1) % half) + (row % 2 === 0 ? 1 : 0);
  return [row, col];
}

// Draws a position into container; marks: {square: ["movable" | "selected" | "target" | "last"]}.
function drawBoard(container, position, marks = {}, onClick = null) {
  const size = position.board_size;
  const svg = el("svg", { width: size * CELL, height: size * CELL, viewBox: `0 0 ${size * CELL} ${size * CELL}` });
  const pieces = {};
  for (const p of position.pieces) pieces[p.square] = p;
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      if ((row + col) % 2 === 0) {
        svg.appendChild(el("rect", { x: col * CELL, y: row * CELL, width: CELL, height: CELL, class: "light" }));
      }
    }
  }
  for (let n = 1; n <= size * size / 2; n++) {
    const [row, col] = squareCell(n, size);
    const classes = ["sq", ...(marks[n] || [])];
    const g = el("g", { class: classes.join(" "), "data-square": n });
    g.appendChild(el("rect", { x: col * CELL, y: row * CELL, width: CELL, height: CELL, class: "dark" }));
    g.appendChild(el("text", { x: col * CELL + 3, y: row * CELL + 12, class: "num" }, String(n)));
    const cx = col * CELL + CELL / 2, cy = row * CELL + CELL / 2;
    const piece = pieces[n];
    if (piece) {
      g.appendChild(el("circle", { cx, cy, r: CELL * 0.36, class: `piece ${piece.color}`, "data-color": piece.color }));
      if (piece.king) g.appendChild(el("text", { x: cx, y: cy, class: `crown ${piece.color}` }, "K"));
    } else if ((marks[n] || []).includes("target")) {
      g.appendChild(el("circle", { cx, cy, r: CELL * 0.12, class: "dot" }));
    }
    if (onClick) g.addEventListener("click", () => onClick(n));
    svg.appendChild(g);
  }
  container.replaceChildren(svg);
  container.dataset.fen = position.fen;
}

// ---- line charts -------------------------------------------------------------------------------

// series: [{name, ys, color, dash, dots, connect}] over xs; nulls leave gaps unless connect. Draws axes, ticks and a legend.
function lineChart(container, xs, series, options = {}) {
  const width = options.width || 640, height = options.height || 260;
  const left = 48, right = 140, top = 24, bottom = 32;
  const svg = el("svg", { width, height });
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

// busy: the opponent is thinking; pending: a request of the person is on its way.
// info: /api/info; suggested: the opponent the page filled in itself (null once the person or a link chose one).
const play = { game: null, selected: null, busy: false, pending: false, info: null, suggested: "random" };

// The opponents offered for the chosen rules (their best agent first), and that best agent as the
// opponent unless the person (or a link) already chose one.
function suggestOpponents() {
  const info = play.info;
  if (!info) return;
  const rules = $("rules").value;
  const specs = (info.suggestions && info.suggestions[rules]) || ["random"];
  $("agents").replaceChildren(...specs.map(s => html("option", { value: s })));
  const input = $("opponent");
  if (play.suggested !== null && input.value === play.suggested) {
    play.suggested = (info.best && info.best[rules]) || "random";
    input.value = play.suggested;
  }
}

function stepsFrom(game, square) {
  return game.steps.filter(([from]) => from === square).map(([, to]) => to);
}

function playMarks(game) {
  const marks = {};
  const add = (n, mark) => { (marks[n] = marks[n] || []).push(mark); };
  const turns = game.turns;
  if (turns.length) turns[turns.length - 1].path.forEach(n => add(n, "last"));
  if (!game.human_to_move || play.busy || play.pending) return marks;
  for (const [from] of game.steps) add(from, "movable");
  const selected = game.position.continuing ?? play.selected;  // a multi-jump goes on with its piece
  if (selected !== null) {
    add(selected, "selected");
    stepsFrom(game, selected).forEach(n => add(n, "target"));
  }
  return marks;
}

function playStatus(game) {
  const p = game.position;
  if (p.over) return `Game over (${p.result}): ${p.reason}.`;
  if (play.busy) return "The opponent is thinking...";
  if (game.human_to_move) {
    const side = game.human === "black" ? "Black" : "White";
    if (p.continuing) return `Your move (${side}): go on jumping from ${p.continuing}.`;
    return `Your move (${side}): click a piece, then its target square.`;
  }
  return "The opponent is to move.";
}

function renderPlay() {
  const game = play.game;
  if (!game) return;
  const board = $("play-board");
  drawBoard(board, game.position, playMarks(game), clickSquare);
  const waiting = play.busy || play.pending;
  board.dataset.state = game.position.over ? "over" : waiting ? "busy" : game.human_to_move ? "human" : "opponent";
  $("play-status").textContent = playStatus(game);
  $("play-eval").textContent = game.evaluation ? game.evaluation.text : "";
  $("undo").disabled = !game.can_undo || play.busy;
  const list = $("play-moves");
  list.replaceChildren(...game.turns.map(t => html("li", { class: t.by_human ? "human" : "opponent" }, t.notation)));
  list.scrollTop = list.scrollHeight;
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

async function clickSquare(n) {
  const game = play.game;
  if (!game || !game.human_to_move || play.busy || play.pending) return;
  const continuing = game.position.continuing;
  if (continuing === null && n !== play.selected && stepsFrom(game, n).length) {
    play.selected = n;  // pick (or switch to) a piece that can move
    $("play-message").textContent = "";
    renderPlay();
    return;
  }
  const from = continuing !== null ? continuing : play.selected;
  if (from === null) {
    const own = game.position.pieces.some(p => p.square === n && p.color === game.human);
    $("play-message").textContent = own ? `the piece on ${n} has no legal move` : "click one of your pieces first";
    return;
  }
  // Any other square is sent as it is: the server says why an illegal one is refused.
  play.pending = true;
  renderPlay();
  const moved = await playRequest("POST", `/api/games/${game.id}/move`, { from, to: n });
  play.pending = false;
  if (moved) play.selected = play.game.position.continuing;
  renderPlay();
  await opponentMoves();
}

async function newGame(event) {
  if (event) event.preventDefault();
  $("play-status").textContent = "Preparing the opponent...";
  $("play-message").textContent = "";
  play.selected = null;
  const body = {
    rules: $("rules").value,
    human: $("human").value,
    opponent: $("opponent").value.trim(),
    think_seconds: parseFloat($("think").value),
  };
  if (await playRequest("POST", "/api/games", body)) {
    renderPlay();
    await opponentMoves();
  } else {
    $("play-status").textContent = "";
  }
}

async function undoMove() {
  if (!play.game || play.busy) return;
  await playRequest("POST", `/api/games/${play.game.id}/undo`);
  play.selected = null;
  renderPlay();
}

// ---- Games -------------------------------------------------------------------------------------

const viewer = { file: null, view: null, index: 0 };

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

async function openGameFile(path, game = 1) {
  viewer.file = path;
  document.querySelectorAll("#game-files a").forEach(a => a.classList.toggle("current", a.dataset.path === path));
  try {
    const data = await api("GET", `/api/game-file?path=${q(path)}`);
    const list = $("game-list");
    list.replaceChildren(...data.games.map((g, i) => {
      const a = html("a", { "data-game": i + 1 }, `${i + 1}. ${g.black} vs ${g.white}: ${g.result}, ${g.moves} moves`);
      a.addEventListener("click", () => openGame(path, i + 1));
      const li = html("li");
      li.appendChild(a);
      return li;
    }));
    if (data.games.length) await openGame(path, game);
  } catch (error) {
    $("games-info").textContent = error.message;
  }
}

async function openGame(path, number) {
  $("games-info").textContent = "Loading...";
  document.querySelectorAll("#game-list a").forEach(a => a.classList.toggle("current", +a.dataset.game === number));
  viewer.view = await api("GET", `/api/game-file/game?path=${q(path)}&game=${number}`);
  viewer.index = 0;
  const list = $("games-moves");
  list.replaceChildren(...viewer.view.moves.map((m, i) => {
    const li = html("li", {}, m);
    li.addEventListener("click", () => showPly(i + 1));
    return li;
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
  document.querySelectorAll("#games-moves li").forEach((li, k) => li.classList.toggle("current", k === i - 1));
  const xs = view.positions.map((_, k) => k);
  const series = [{ name: "Black's material", ys: view.positions.map(p => p.material.black_lead), color: "#444" }];
  if (chances) series.push({ name: "10 (chance - 1/2)", ys: chances.map(c => 10 * c - 5), color: "#1d5a8a", dash: "5 3" });
  lineChart($("games-chart"), xs, series, { width: 440, height: 180, xlabel: "move", marker: i });
}

function gameKeys(event) {
  if (!viewer.view || !$("page-games").classList.contains("active")) return;
  const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -1e9, End: 1e9 };
  if (event.key in moves) {
    event.preventDefault();
    showPly(viewer.index + moves[event.key]);
  }
}

// ---- Runs --------------------------------------------------------------------------------------

const runs = { path: null, timer: null };

async function loadRuns() {
  const data = await api("GET", "/api/runs");
  const table = $("run-list");
  const head = html("tr");
  ["run", "status", "epochs", "config"].forEach(h => head.appendChild(html("th", {}, h)));
  const rows = data.runs.map(r => {
    const tr = html("tr", { "data-path": r.path });
    const a = html("a", {}, r.path);
    a.addEventListener("click", () => openRun(r.path));
    const cell = html("td");
    cell.appendChild(a);
    tr.append(cell, html("td", { class: `status-${r.status}` }, r.status),
      html("td", {}, `${r.epochs_done}/${r.epochs}`), html("td", {}, r.summary));
    return tr;
  });
  table.replaceChildren(head, ...rows);
  if (!data.runs.length) table.replaceChildren(html("tr", {}, "no run folders in this folder"));
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
      const a = html("a", { class: "play-boss" }, "play it");
      a.addEventListener("click", () => {
        // The agent file alone: the timed alpha-beta search, its network scoring, for the think time.
        location.hash = `#play?rules=${q(run.rules)}&opponent=${q(b.file)}`;
      });
      playIt.appendChild(a);
    } else {
      download.textContent = "(file not kept)";
    }
    tr.append(download, playIt);
    return tr;
  });
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
  runs.path = path;
  clearTimeout(runs.timer);
  document.querySelectorAll("#run-list tr").forEach(tr => tr.classList.toggle("current", tr.dataset.path === path));
  try {
    const run = await api("GET", `/api/run?path=${q(path)}`);
    if (runs.path !== path) return;
    $("run-title").textContent = path;
    const status = $("run-status");
    status.textContent = `${run.status}: ${run.epochs_done} of ${run.epochs} epochs. ${run.summary}`;
    status.className = `status status-${run.status}`;
    $("run-config").textContent = JSON.stringify(run.config, null, 2);
    drawLineage(run);
    await drawCurves(path);
    if (run.status === "running") runs.timer = setTimeout(() => openRun(path), 3000);
  } catch (error) {
    $("run-status").textContent = error.message;
  }
}

// ---- pages -------------------------------------------------------------------------------------

function route() {
  const [page, query] = (location.hash.slice(1) || "play").split("?");
  const name = ["play", "games", "runs"].includes(page) ? page : "play";
  document.querySelectorAll(".page").forEach(p => p.classList.toggle("active", p.id === `page-${name}`));
  document.querySelectorAll("header nav a").forEach(a => a.classList.toggle("active", a.id === `nav-${name}`));
  const params = new URLSearchParams(query || "");
  if (name === "play" && params.get("opponent")) {
    if (params.get("rules")) $("rules").value = params.get("rules");
    suggestOpponents();
    $("opponent").value = params.get("opponent");
    play.suggested = null;
  }
  if (name === "games") loadGameFiles().then(() => { if (params.get("file")) openGameFile(params.get("file"), +(params.get("game") || 1)); });
  if (name === "runs") loadRuns().then(() => { if (params.get("run")) openRun(params.get("run")); });
  if (name !== "runs") clearTimeout(runs.timer);
}

async function start() {
  const info = await api("GET", "/api/info");
  $("folder").textContent = `serving ${info.folder}`;
  $("rules").replaceChildren(...info.presets.map(p => html("option", {}, p)));
  play.info = info;
  suggestOpponents();
  $("rules").addEventListener("change", suggestOpponents);
  $("opponent").addEventListener("input", () => { play.suggested = null; });
  $("new-game").addEventListener("submit", newGame);
  $("undo").addEventListener("click", undoMove);
  $("first").addEventListener("click", () => showPly(0));
  $("prev").addEventListener("click", () => showPly(viewer.index - 1));
  $("next").addEventListener("click", () => showPly(viewer.index + 1));
  $("last").addEventListener("click", () => showPly(1e9));
  document.addEventListener("keydown", gameKeys);
  window.addEventListener("hashchange", route);
  route();
}

start();
