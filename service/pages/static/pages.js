// The pages' shared script: times in the reader's time zone and locale, sortable tables, and
// the replay viewer, which displays states the server computed from the match log (it knows no
// rules).
"use strict";

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
  }
  for (const child of [].concat(children ?? [])) {
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// -- times -----------------------------------------------------------------------------------

// The server writes every time as <time datetime="ISO" title="ISO">…UTC</time> (the
// `timestamp` filter); here its text becomes the reader's local time, in the page's language
// with the reader's own conventions for it ("7 Dec 2026, 21:15" for en-GB, "Dec 7, 2026,
// 9:15 PM" for en-US), or how long ago for a time within the last day ("3 min ago").
const RECENT_S = 24 * 3600;
const UNITS = [["hour", 3600], ["minute", 60], ["second", 1]];

function timeLocale() {
  const page = document.documentElement.lang || "en";
  const language = (tag) => tag.split("-")[0].toLowerCase();
  const reader = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language];
  const same = reader.find((tag) => language(tag) === language(page));
  if (same) return same;
  try {
    const region = new Intl.Locale(reader[0]).maximize().region;
    return region ? page + "-" + region : page;
  } catch (error) {
    return page;
  }
}

function showTimes(root) {
  const locale = timeLocale();
  const absolute = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" });
  const full = new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "long" });
  const relative = new Intl.RelativeTimeFormat(locale, { numeric: "auto", style: "short" });
  const now = Date.now();
  root.querySelectorAll("time[datetime]").forEach((node) => {
    const moment = new Date(node.dateTime);
    if (Number.isNaN(moment.getTime())) return;
    const age = (now - moment.getTime()) / 1000;
    const unit = UNITS.find(([, seconds]) => age >= seconds) || UNITS[UNITS.length - 1];
    node.textContent = age >= 0 && age < RECENT_S
      ? relative.format(-Math.floor(age / unit[1]), unit[0])
      : absolute.format(moment);
    node.title = full.format(moment) + " (" + node.dateTime + ")";
  });
}

// -- sortable tables -------------------------------------------------------------------------

function sortKey(cell) {
  const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
  const number = Number.parseFloat(raw);
  return Number.isNaN(number) || !/^-?[\d.]/.test(raw) ? raw.toLowerCase() : number;
}

function makeSortable(table) {
  const headers = Array.from(table.tHead.rows[0].cells);
  headers.forEach((th, column) => {
    const button = th.querySelector("button");
    if (!button) return;
    button.addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const body = table.tBodies[0];
      const rows = Array.from(body.rows).filter((r) => r.cells.length === headers.length);
      rows.sort((a, b) => {
        const x = sortKey(a.cells[column]);
        const y = sortKey(b.cells[column]);
        const order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      body.append(...rows);
    });
  });
}

// -- the replay viewer -----------------------------------------------------------------------

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };

function card(name, exposed, extra) {
  const rank = name[0] === "T" ? "10" : name[0];
  const red = name[1] === "D" || name[1] === "H";
  const classes = ["card", red ? "red" : "", exposed ? "exposed" : "", extra || ""];
  return el(
    "span",
    {
      class: classes.filter(Boolean).join(" "),
      "data-card": name,
      title: exposed ? name + " (exposed)" : name,
    },
    rank + SUITS[name[1]],
  );
}

function cards(names, exposed) {
  if (!names.length) return [el("span", { class: "none" }, "—")];
  return names.map((n) => card(n, exposed.includes(n)));
}

class Viewer {
  constructor(root, data) {
    this.root = root;
    this.data = data;
    this.view = "all";
    const params = new URLSearchParams(window.location.search);
    this.hand = this.clamp(Number.parseInt(params.get("hand"), 10) - 1 || 0, data.hands.length);
    const frames = data.hands[this.hand].frames.length;
    this.trick = this.clamp(Number.parseInt(params.get("trick"), 10) || 0, frames);
    // ?decision=N (with ?hand=): open at that fault of the hand, marked, whatever ?trick= says
    const decision = Number.parseInt(params.get("decision"), 10);
    this.linked = data.hands[this.hand].faults.find((f) => f.decision === decision) || null;
    if (this.linked) this.trick = this.linked.trick;
    const seat = params.get("seat");
    if (seat !== null && /^[0-3]$/.test(seat)) this.view = seat;
    this.select = root.querySelector("#view");
    this.select.value = this.view;
    this.select.addEventListener("change", () => {
      this.view = this.select.value;
      this.render();
    });
    const steps = { "prev-hand": [-1, 0], "next-hand": [1, 0], "prev-trick": [0, -1], "next-trick": [0, 1] };
    for (const [id, [hands, tricks]] of Object.entries(steps)) {
      root.querySelector("#" + id).addEventListener("click", () => this.step(hands, tricks));
    }
    document.addEventListener("keydown", (event) => this.key(event));
    this.render();
    const linked = root.querySelector(".fault.linked");
    if (linked) linked.scrollIntoView({ block: "center" });
  }

  clamp(value, count) {
    return Math.max(0, Math.min(count - 1, value));
  }

  key(event) {
    const tag = event.target.tagName;
    if (tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = {
      ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], PageUp: [-1, 0],
      ArrowDown: [1, 0], PageDown: [1, 0],
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    this.step(move[0], move[1]);
  }

  // Tricks run on into the next or previous hand; a hand step opens the hand before its first trick.
  step(hands, tricks) {
    const all = this.data.hands;
    this.linked = null;
    if (hands) {
      this.hand = this.clamp(this.hand + hands, all.length);
      this.trick = 0;
    } else {
      const next = this.trick + tricks;
      const last = all[this.hand].frames.length - 1;
      if (next < 0 && this.hand > 0) {
        this.hand -= 1;
        this.trick = all[this.hand].frames.length - 1;
      } else if (next > last && this.hand < all.length - 1) {
        this.hand += 1;
        this.trick = 0;
      } else {
        this.trick = this.clamp(next, last + 1);
      }
    }
    this.render();
  }

  seatName(seat) {
    return "seat " + seat + " (" + this.data.seats[seat].name + ")";
  }

  render() {
    const hand = this.data.hands[this.hand];
    const frame = hand.frames[this.trick];
    const last = hand.frames.length - 1;
    const exposed = hand.exposed.flat();
    const own = this.view === "all" ? null : Number(this.view);
    const where = this.trick === 0 ? "before the first trick" : "trick " + this.trick + " of " + last;
    this.root.querySelector("#position").textContent =
      "Hand " + hand.number + " of " + this.data.hands.length + " · " + where;
    this.root.querySelectorAll(".seat").forEach((panel) => {
      const seat = Number(panel.dataset.seat);
      const hidden = own !== null && own !== seat;
      const held = frame.hands[seat];
      const shown = hidden
        ? [el("span", { class: "hidden-hand" }, held.length + " cards, hidden")]
        : cards(held, exposed);
      panel.querySelector(".hand").replaceChildren(...shown);
      panel.classList.toggle("is-own", own === seat);
      const taken = frame.taken[seat];
      panel.querySelector(".taken").replaceChildren(
        el("span", { class: "label" }, "Taken: "),
        ...(taken.length ? cards(taken, exposed) : [el("span", { class: "none" }, "no scoring card")]),
      );
      panel.classList.toggle("is-winner", Boolean(frame.trick) && frame.trick.winner === seat);
    });
    this.renderTrick(frame, exposed);
    this.renderFaults(hand, own);
    this.renderBefore(hand, own, exposed);
    this.renderScore(hand, last);
    const url = new URL(window.location.href);
    url.searchParams.set("hand", String(hand.number));
    url.searchParams.set("trick", String(this.trick));
    if (own === null) url.searchParams.delete("seat");
    else url.searchParams.set("seat", String(own));
    if (this.linked) url.searchParams.set("decision", String(this.linked.decision));
    else url.searchParams.delete("decision");
    window.history.replaceState(null, "", url);
  }

  renderTrick(frame, exposed) {
    const box = this.root.querySelector("#trick");
    if (!frame.trick) {
      box.replaceChildren(el("p", { class: "muted" }, "No trick yet: the hand is about to start."));
      return;
    }
    const trick = frame.trick;
    const plays = trick.plays.map((p, i) =>
      el("li", { class: "play play-" + p.seat, "data-seat": p.seat }, [
        el("span", { class: "who" }, (i === 0 ? "leads: " : "") + this.seatName(p.seat)),
        card(p.card, exposed.includes(p.card), p.seat === trick.winner ? "won" : ""),
      ]),
    );
    box.replaceChildren(
      el("ol", { class: "plays" }, plays),
      el("p", { class: "winner", id: "winner" }, "Won by " + this.seatName(trick.winner)),
    );
  }

  renderFaults(hand, own) {
    const box = this.root.querySelector("#faults");
    const here = hand.faults.filter((f) => f.trick === this.trick && (own === null || f.seat === own));
    box.replaceChildren(
      ...here.map((f) =>
        el("div", { class: f === this.linked ? "fault linked" : "fault", role: "note", "data-decision": f.decision }, [
          el("strong", {}, this.seatName(f.seat) + ": " + (f.status === "ok" ? "note" : f.status)),
          " on its " + f.kind + " decision (#" + f.decision + ")",
          f.latency_ms === null ? "" : ", after " + f.latency_ms + " ms",
          f.fault ? ": " + f.fault : "",
          f.note === null ? "" : el("div", { class: "note" }, ["The bot notes: ", el("q", {}, f.note)]),
          f.answer === null ? "" : el("div", {}, ["Answer: ", el("code", {}, f.answer)]),
          f.status === "ok"
            ? ""
            : el("div", {}, (f.is_autoplay ? "Played for it: " : "Fallback played: ") + (f.applied || "nothing")),
        ]),
      ),
    );
  }

  renderBefore(hand, own, exposed) {
    const box = this.root.querySelector("#before");
    if (this.trick !== 0) {
      box.replaceChildren();
      return;
    }
    const items = [];
    if (hand.passes.length) {
      const visible = hand.passes.filter((p) => own === null || p.seat === own || p.to === own);
      for (const p of visible) {
        items.push(el("li", {}, [this.seatName(p.seat) + " passed to " + this.seatName(p.to) + ": ", ...cards(p.cards, [])]));
      }
      if (own === null) {
        hand.deal.forEach((dealt, seat) => {
          items.push(el("li", {}, [this.seatName(seat) + " was dealt: ", ...cards(dealt, [])]));
        });
      }
    }
    for (const x of hand.exposures) {
      items.push(el("li", {}, [this.seatName(x.seat) + " exposed: ", ...(x.cards.length ? cards(x.cards, exposed) : ["nothing"])]));
    }
    box.replaceChildren(el("h3", {}, "Before the first trick"), el("ul", {}, items.length ? items : [el("li", {}, "No passing or exposure this hand.")]));
  }

  renderScore(hand, last) {
    const result = hand.result;
    const columns = [
      ["Before", (s) => hand.totals_before[s]],
      ["Hearts", (s) => result.seats[s].hearts],
      ["All hearts", (s) => (result.seats[s].all_hearts ? "yes" : "")],
      ["Pig", (s) => result.seats[s].pig],
      ["Goat", (s) => result.seats[s].goat],
      ["Transformer", (s) => result.seats[s].transformer_bonus],
      ["×", (s) => result.seats[s].multiplier],
      ["QD bonus", (s) => result.seats[s].qd_bonus],
      ["Capped", (s) => (result.seats[s].capped ? "yes" : "")],
      ["Hand score", (s) => result.scores[s]],
      ["Total after", (s) => result.totals[s]],
    ];
    const fields = ["before", "hearts", "all_hearts", "pig", "goat", "transformer", "multiplier", "qd", "capped", "score", "total"];
    const head = el("thead", {}, el("tr", {}, [el("th", { scope: "col" }, "Seat"), ...columns.map(([title]) => el("th", { scope: "col", class: "num" }, title))]));
    const rows = this.data.seats.map((seat) =>
      el("tr", {}, [
        el("th", { scope: "row" }, this.seatName(seat.seat)),
        ...columns.map(([, value], i) => el("td", { class: "num", "data-seat": seat.seat, "data-field": fields[i] }, value(seat.seat))),
      ]),
    );
    const table = this.root.querySelector("#score-table");
    const exposedNote = result.exposed.length ? "exposed " + result.exposed.join(" ") : "nothing exposed";
    const status = this.trick === last ? "final" : "the hand's result, after trick " + last;
    this.root.querySelector("#score-caption").textContent =
      "Hand " + hand.number + " breakdown (" + status + "; " + exposedNote + ")";
    table.replaceChildren(head, el("tbody", {}, rows));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  showTimes(document);
  setInterval(() => showTimes(document), 30 * 1000);
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  const blob = document.getElementById("replay-data");
  const root = document.getElementById("viewer");
  if (blob && root) new Viewer(root, JSON.parse(blob.textContent));
});
