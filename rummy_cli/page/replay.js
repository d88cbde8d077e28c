// The replay page's script: draws the step it is asked for. Every rule and every diff is
// computed in Python (rummy_cli/replay_page.py); this only turns the embedded JSON into DOM.
(function () {
  "use strict";
  var game = JSON.parse(document.getElementById("game").textContent);
  var steps = game.steps;
  var n = steps.length;
  var current = 1;
  var SUITS = { S: ["\u2660", "spades", false], H: ["\u2665", "hearts", true],
                D: ["\u2666", "diamonds", true], C: ["\u2663", "clubs", false] };
  var RANKS = { A: ["A", "ace"], 2: ["2", "two"], 3: ["3", "three"], 4: ["4", "four"],
                5: ["5", "five"], 6: ["6", "six"], 7: ["7", "seven"], 8: ["8", "eight"],
                9: ["9", "nine"], T: ["10", "ten"], J: ["J", "jack"], Q: ["Q", "queen"],
                K: ["K", "king"] };

  function $(id) { return document.getElementById(id); }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // a card token (R1.4) -> {short: rank + suit symbol, name: "seven of spades"}; a token
  // "*" + card is a table joker declared as that card; "*" alone a joker in a hand
  function label(tok) {
    if (tok === "*") { return { short: "\u2605", name: "joker", red: false }; }
    var joker = tok.charAt(0) === "*";
    var real = joker ? tok.slice(1) : tok;
    var r = RANKS[real.charAt(0)], s = SUITS[real.charAt(1)];
    var short = r[0] + s[0], name = r[1] + " of " + s[1];
    if (joker) { return { short: "\u2605" + short, name: "joker as " + name, red: s[2] }; }
    return { short: short, name: name, red: s[2] };
  }

  function card(entry) {
    var tok = typeof entry === "string" ? entry : entry[0];
    var mark = typeof entry === "string" ? "" : entry[1];
    var l = label(tok);
    var c = el("li", "card" + (l.red ? " red" : "") + (tok.charAt(0) === "*" ? " joker" : "")
               + (mark ? " " + mark : ""));
    c.setAttribute("data-card", tok);
    c.appendChild(el("span", "face", l.short));
    c.appendChild(el("span", "sr", " " + l.name));
    var what = l.short + " " + l.name;
    if (mark) {
      var text = mark === "freed" ? "freed, was " + label(entry[2]).short : mark;
      c.appendChild(el("span", "mark", text));
      what += ", " + (mark === "freed" ? "joker freed, was " + label(entry[2]).name : mark);
    }
    c.setAttribute("aria-label", what);
    c.title = what;
    return c;
  }

  function cardList(tokens, cls) {
    var ul = el("ul", "cards" + (cls ? " " + cls : ""));
    tokens.forEach(function (t) { ul.appendChild(card(t)); });
    return ul;
  }

  function seatName(p) {
    var name = game.names[p] ? " (" + game.names[p] + ")" : "";
    return "seat " + p + name;
  }

  function drawTable(t) {
    var ol = $("table");
    ol.textContent = "";
    if (!t.melds.length) { ol.appendChild(el("li", "empty", "(empty table)")); return; }
    t.melds.forEach(function (meld, j) {
      var li = el("li", "meld");
      var fresh = t.fresh.indexOf(j) >= 0;
      li.setAttribute("aria-label", "meld " + (j + 1) + (fresh ? ", new meld" : ""));
      if (fresh) { li.className += " fresh"; li.appendChild(el("span", "tag", "new meld")); }
      li.appendChild(cardList(meld));
      ol.appendChild(li);
    });
  }

  function drawHands(s) {
    var box = $("hands");
    box.textContent = "";
    s.h.forEach(function (hand, p) {
      var div = el("div", "hand");
      div.setAttribute("data-seat", p);
      var by = s.b && s.b[p] !== "player" ? ", played by " + s.b[p] : "";  // RULES section 13
      div.appendChild(el("h3", "", seatName(p) + by + ": " + s.z[p] + (s.z[p] === 1 ? " card" : " cards")));
      if (hand === null) {
        div.appendChild(el("p", "hidden-hand", "hidden from seat " + game.seat + " (I3)"));
      } else if (hand === "") {
        div.appendChild(el("p", "hidden-hand", "no cards"));
      } else {
        div.appendChild(cardList(hand.split(" ")));
      }
      box.appendChild(div);
    });
  }

  function drawScores(s) {
    var body = $("scores").tBodies[0];
    body.textContent = "";
    for (var p = 0; p < game.players; p++) {
      var tr = el("tr", p === s.u ? "turn" : "");
      [String(p), game.names[p] || "", String(s.o[p]), String(s.z[p])].forEach(function (x) {
        tr.appendChild(el("td", "", x));
      });
      body.appendChild(tr);
    }
  }

  function show(i) {
    current = Math.max(1, Math.min(n, i));
    var s = steps[current - 1];
    $("slider").value = current;
    $("pos").textContent = "event " + current + " of " + n;
    $("event").textContent = current + ". " + s.e;
    $("change").textContent = s.c ? "What changed: " + s.c : "";
    $("note").textContent = s.a ? "Analysis: " + s.a : "";
    $("review-note").textContent = s.m ? "Review: " + reviewText(s.m) : "";
    $("fork").hidden = !s.k;
    $("fork-cmd").textContent = s.k || "";
    drawCursor();
    $("status").textContent = "round " + s.r + ", dealer seat " + s.d + ", " + seatName(s.u)
      + " to act (" + s.p.replace(/_/g, " ") + "), stock " + s.s + " cards, game to "
      + game.target + " points, knock at " + game.threshold + " points or fewer";
    drawScores(s);
    drawTable(game.tables[s.t]);
    drawHands(s);
    var hash = "#step=" + current;
    if (location.hash !== hash) { history.replaceState(null, "", hash); }
  }

  function reviewText(m) {
    var what = [m.cls].concat(m.marks).filter(function (x) { return x; }).join(", ");
    return seatName(m.seat) + ": " + (what || "fine") + " — played " + m.chosen
      + "; best " + m.best + (m.lost ? "; lost " + m.lost + " points of equity" : "");
  }

  // jump marks: the next (dir 1) or previous (dir -1) step carrying mark `kind`
  function jump(kind, dir) {
    for (var i = current + dir; i >= 1 && i <= n; i += dir) {
      var j = steps[i - 1].j;
      if (j && j.indexOf(kind) >= 0) { show(i); return true; }
    }
    return false;
  }

  function drawMarks() {
    var box = $("marks");
    steps.forEach(function (s, k) {
      if (!s.m || !(s.m.cls || s.m.marks.length)) { return; }
      var b = el("button", "tick " + (s.m.cls || "marked"));
      b.type = "button";
      b.style.left = (n > 1 ? (k / (n - 1)) * 100 : 0) + "%";
      b.title = "event " + (k + 1) + ": " + reviewText(s.m);
      b.setAttribute("aria-label", b.title);
      b.setAttribute("data-step", String(k + 1));
      b.addEventListener("click", function () { show(k + 1); });
      box.appendChild(b);
    });
  }

  var SVG = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f5fbf", "#b00020", "#0a7d2c", "#8a3b00", "#6b2fa0"];
  var W = 800, H = 200;

  function svg(tag, attrs) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  }

  function gx(i) { return n > 1 ? ((i - 1) / (n - 1)) * W : 0; }
  function gy(p) { return H - p * H; }

  function drawGraph() {
    var g = game.review.graph;
    var box = $("graph");
    var root = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img",
                            "aria-label": "each seat's chance to win the game after every turn" });
    root.appendChild(svg("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "half" }));
    for (var p = 0; p < game.players; p++) {
      var pts = g.filter(function (q) { return q.chance[p] !== null; });
      if (!pts.length) { continue; }
      var band = pts.map(function (q) { return gx(q.index) + "," + gy(q.high[p]); })
        .concat(pts.slice().reverse().map(function (q) { return gx(q.index) + "," + gy(q.low[p]); }));
      root.appendChild(svg("polygon", { points: band.join(" "), fill: COLORS[p % 5],
                                        "fill-opacity": 0.15, stroke: "none" }));
      root.appendChild(svg("polyline", {
        points: pts.map(function (q) { return gx(q.index) + "," + gy(q.chance[p]); }).join(" "),
        fill: "none", stroke: COLORS[p % 5], "stroke-width": 2, "data-seat": p }));
      var key = el("span", "key", seatName(p));
      key.style.borderColor = COLORS[p % 5];
      $("graph-keys").appendChild(key);
    }
    root.appendChild(svg("line", { id: "cursor", x1: 0, x2: 0, y1: 0, y2: H }));
    root.addEventListener("click", function (ev) {
      var r = root.getBoundingClientRect();
      show(Math.round(((ev.clientX - r.left) / r.width) * (n - 1)) + 1);
    });
    box.appendChild(root);
  }

  function drawCursor() {
    var c = document.getElementById("cursor");
    if (c) { c.setAttribute("x1", gx(current)); c.setAttribute("x2", gx(current)); }
    var q = null;
    if (game.review) {
      game.review.graph.forEach(function (x) { if (x.index <= current) { q = x; } });
    }
    var out = $("chance");
    if (!out) { return; }
    out.textContent = q === null ? "" : "Chance to win after event " + q.index + ": "
      + q.chance.map(function (c, p) {
        return c === null ? null : seatName(p) + " " + Math.round(c * 100) + "% ("
          + Math.round(q.low[p] * 100) + "–" + Math.round(q.high[p] * 100) + "%)";
      }).filter(function (x) { return x; }).join(", ");
  }

  function drawReview() {
    if (!game.review) { return; }
    var table = el("table");
    var head = el("tr");
    ["seat", "accuracy", "judged", "inaccuracies", "mistakes", "blunders",
     "missed going out", "missed knocks", "points left on the table"].forEach(function (h) {
      head.appendChild(el("th", "", h));
    });
    table.appendChild(head);
    game.review.seats.forEach(function (a) {
      var tr = el("tr");
      [seatName(a.seat), a.accuracy.toFixed(1) + "%", String(a.judged), String(a.inaccuracies),
       String(a.mistakes), String(a.blunders), String(a.missed_going_out),
       String(a.missed_knocks), String(a.points_left)].forEach(function (x) {
        tr.appendChild(el("td", "", x));
      });
      table.appendChild(tr);
    });
    $("review-body").appendChild(table);
    $("review-budget").textContent = "budget " + game.review.budget + ", seed "
      + game.review.seed + "; inaccuracy from " + game.review.thresholds.inaccuracy
      + ", mistake from " + game.review.thresholds.mistake + ", blunder from "
      + game.review.thresholds.blunder + " points of equity lost (docs/review.md).";
    drawGraph();
    drawMarks();
    $("review").hidden = false;
  }

  function fromHash() {
    var m = /step=(\d+)/.exec(location.hash);
    return m ? parseInt(m[1], 10) : n;
  }

  function drawAnalysis() {
    if (!game.analysis) { return; }
    var box = $("analysis-body");
    var table = el("table");
    var head = el("tr");
    ["seat", "decisions", "points left on the table", "by round", "missed knocks",
     "biggest misses"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    table.appendChild(head);
    game.analysis.forEach(function (a) {
      var tr = el("tr");
      var rounds = Object.keys(a.missed_by_round).map(function (r) {
        return "round " + r + ": " + a.missed_by_round[r];
      }).join(", ");
      [seatName(a.seat), String(a.decisions), String(a.missed_points), rounds,
       String(a.missed_knocks)].forEach(function (x) { tr.appendChild(el("td", "", x)); });
      var td = el("td");
      a.biggest.forEach(function (d) {
        var link = el("a", "", "event " + d.index + ": missed " + d.counted);
        link.href = "#step=" + d.index;
        td.appendChild(link);
        td.appendChild(document.createTextNode(" "));
      });
      tr.appendChild(td);
      table.appendChild(tr);
    });
    box.appendChild(table);
    $("analysis").hidden = false;
  }

  $("who").textContent = game.seat === null
    ? "Full information: every hand is shown."
    : "As " + seatName(game.seat) + " saw it: other hands and the stock stay hidden (I3).";
  $("slider").max = n;
  $("slider").addEventListener("input", function () { show(parseInt(this.value, 10)); });
  $("first").addEventListener("click", function () { show(1); });
  $("prev").addEventListener("click", function () { show(current - 1); });
  $("next").addEventListener("click", function () { show(current + 1); });
  $("last").addEventListener("click", function () { show(n); });
  document.addEventListener("keydown", function (ev) {
    if (ev.target === $("slider") || ev.altKey || ev.ctrlKey || ev.metaKey) { return; }
    var moves = { ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10 };
    var jumps = { r: "round", m: "meld", x: "mark", k: "knock" };
    var lower = ev.key.length === 1 ? ev.key.toLowerCase() : "";
    if (ev.key in moves) { show(current + moves[ev.key]); }
    else if (lower in jumps) { jump(jumps[lower], ev.shiftKey ? -1 : 1); }
    else if (ev.key === "Home") { show(1); }
    else if (ev.key === "End") { show(n); }
    else { return; }
    ev.preventDefault();
  });
  window.addEventListener("hashchange", function () { show(fromHash()); });
  ["round", "meld", "mark", "knock"].forEach(function (kind) {
    $("prev-" + kind).addEventListener("click", function () { jump(kind, -1); });
    $("next-" + kind).addEventListener("click", function () { jump(kind, 1); });
  });
  $("copy-fork").addEventListener("click", function () {
    if (navigator.clipboard) { navigator.clipboard.writeText($("fork-cmd").textContent); }
  });
  drawAnalysis();
  drawReview();
  show(fromHash());
}());
