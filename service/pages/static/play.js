// The Play page: shows the state the server sends (each card's legality and the reason when it
// cannot be played, exposure effects, scores, markers) and animates the computers' plays. It
// has no copy of the rules: every move goes to /api/play and the referee decides.
// Uses el() and card() from pages.js.
"use strict";

const POSITIONS = ["bottom", "right", "top", "left"];
const STEP_MS = 550;
const TRICK_MS = 1100;
// ?animate=off shows the computers' plays at once (as if Fast-forward were always pressed).
const ANIMATE = new URLSearchParams(window.location.search).get("animate") !== "off";

function cardLabel(name) {
  return (name[0] === "T" ? "10" : name[0]) + SUITS[name[1]];
}

const OFFLINE =
  "You are offline. Your game is kept on the server: it goes on when you are back online.";

// A request to the API; a lost connection is status 0, with OFFLINE as its message.
async function api(method, path, body) {
  const options = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch("/api/play" + path, options);
  } catch {
    return { ok: false, status: 0, data: { message: OFFLINE } };
  }
  try {
    return { ok: response.ok, status: response.status, data: await response.json() };
  } catch {
    const message = `The arena answered HTTP ${response.status}: try again in a moment.`;
    return { ok: false, status: response.status, data: { message } };
  }
}

// -- choosing opponents and rules ------------------------------------------------------------

function startMatch(opponents, rules) {
  return api("POST", "", { opponents, rules }).then((r) => {
    if (r.ok) window.location.assign("/play/" + r.data.id + window.location.search);
    return r;
  });
}

function setupForm(form) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const opponents = Array.from(form.querySelectorAll("select[name=opponent]"), (s) => s.value);
    const variants = Array.from(form.querySelectorAll("input[name=variant]:checked"), (c) => c.value);
    const r = await startMatch(opponents, { variants });
    if (!r.ok) form.querySelector("#setup-message").textContent = r.data.message;
  });
}

// -- the table ---------------------------------------------------------------------------------

class PlayTable {
  constructor(root) {
    this.root = root;
    this.id = root.dataset.game;
    this.state = null;
    this.selected = new Set();
    this.busy = false;
    this.skipping = null;
    this.showCollected = false;
    this.$ = (id) => root.querySelector("#" + id);
    this.$("hand").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-card]");
      if (button) this.tap(button.dataset.card);
    });
    this.$("play-button").addEventListener("click", () => this.playSelected());
    this.$("expose-button").addEventListener("click", () => this.submitCards());
    this.$("no-expose-button").addEventListener("click", () => this.submit("/move", { cards: [] }));
    this.$("pass-button").addEventListener("click", () => this.submitCards());
    this.$("hint-button").addEventListener("click", () => this.hint());
    this.$("ff-button").addEventListener("click", () => this.skipping && this.skipping());
    this.$("next-hand-button").addEventListener("click", () => this.submit("/next-hand", {}));
    this.$("again-button").addEventListener("click", () => this.again());
    this.$("difficulty").addEventListener("change", (event) =>
      this.submit("/difficulty", { level: event.target.value }, "Difficulty changes from the next hand."),
    );
    this.$("collected-button").addEventListener("click", () => {
      this.showCollected = !this.showCollected;
      this.renderCollected();
    });
    this.load();
  }

  // Where a seat sits on this screen: you at the bottom, then right, top, left in play order.
  position(seat) {
    return POSITIONS[(seat - this.state.seat + 4) % 4];
  }

  seatName(seat) {
    const s = this.state.seats[seat];
    return s.position === "bottom" ? "You" : s.name + " (" + s.position + ")";
  }

  say(text, kind) {
    const box = this.$("message");
    box.textContent = text || "";
    box.className = "message" + (kind ? " " + kind : "");
  }

  async load() {
    const r = await api("GET", "/" + this.id);
    if (!r.ok) {
      this.say(r.data.message, "error");
      if (r.status === 0) window.addEventListener("online", () => this.load(), { once: true });
      return;
    }
    this.render(r.data);
    this.setBusy(false);
  }

  setBusy(busy) {
    this.busy = busy;
    this.root.setAttribute("aria-busy", String(busy));
    this.renderActions();
  }

  async submit(path, body, done) {
    if (this.busy || !this.state) return;
    this.setBusy(true);
    const r = await api("POST", "/" + this.id + path, { version: this.state.version, ...body });
    if (!r.ok) {
      this.setBusy(false);
      this.say(r.data.message, "error");
      // the move may have reached the server before the connection dropped: read it again
      if (r.status === 0) window.addEventListener("online", () => this.load(), { once: true });
      if (r.status === 409) {
        const fresh = await api("GET", "/" + this.id);
        if (fresh.ok) this.render(fresh.data, r.data.message);
      }
      return;
    }
    this.selected.clear();
    this.say("");
    await this.animate(r.data);
    this.setBusy(false);
    this.render(r.data, done);
  }

  tap(name) {
    const state = this.state;
    if (this.busy || !state) return;
    const entry = state.hand.find((c) => c.card === name);
    const decision = state.decision;
    if (!decision) {
      this.say("Wait for your turn.");
      return;
    }
    if (!entry.playable) {
      const why = entry.reason || (decision.kind === "expose" ? "Only the cards marked “can expose” can be exposed." : "");
      this.say(why, "error");
      return;
    }
    if (decision.kind === "play") {
      if (this.selected.has(name)) {
        this.playSelected();
        return;
      }
      this.selected = new Set([name]);
    } else if (this.selected.has(name)) {
      this.selected.delete(name);
    } else {
      this.selected.add(name);
    }
    this.say("");
    this.renderHand();
  }

  playSelected() {
    const [name] = this.selected;
    if (name) this.submit("/move", { card: name });
  }

  submitCards() {
    this.submit("/move", { cards: Array.from(this.selected) });
  }

  async hint() {
    const r = await api("GET", "/" + this.id + "/hint");
    if (!r.ok) {
      this.say(r.data.message, "error");
      return;
    }
    this.selected = new Set(r.data.cards);
    this.renderHand();
    const what = r.data.cards.map(cardLabel).join(" ");
    const text = {
      play: "Hint: play " + what + ".",
      expose: what ? "Hint: expose " + what + "." : "Hint: don’t expose.",
      pass: "Hint: pass " + what + ".",
    }[r.data.kind];
    this.say(text, "hint");
  }

  again() {
    const state = this.state;
    startMatch(state.opponents, state.rules).then((r) => {
      if (!r.ok) this.say(r.data.message, "error");
    });
  }

  // -- animating what the computers did ------------------------------------------------------

  wait(ms) {
    if (this.fast) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.skipping = () => {
        this.fast = true;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async animate(next) {
    const events = next.events || [];
    if (!events.length) return;
    this.fast = !ANIMATE;
    this.renderHand(next.hand, false);
    this.$("ff-button").hidden = false;
    for (const event of events) {
      if (event.kind === "exposed") {
        this.showExposures(event.exposed, next.effects);
        await this.wait(TRICK_MS);
      } else if (event.kind === "play") {
        const key = event.hand + ":" + event.trick;
        if (key !== this.feltTrick) this.clearFelt();
        this.feltTrick = key;
        this.putCard(event.seat, event.card);
        this.$("felt-note").textContent = "";
        await this.wait(STEP_MS);
        if (event.winner !== null) {
          this.markWinner(event.winner);
          await this.wait(TRICK_MS);
        }
      }
    }
    this.$("ff-button").hidden = true;
    this.skipping = null;
  }

  showExposures(exposed, effects) {
    const parts = exposed
      .map((cards, seat) => (cards.length ? this.seatName(seat) + ": " + cards.map((c) => cardLabel(c) + " (" + effects[c] + ")").join(", ") : ""))
      .filter(Boolean);
    this.say(parts.length ? "Exposed — " + parts.join("; ") : "Nobody exposed a card.", "hint");
  }

  clearFelt() {
    this.root.querySelectorAll(".slot").forEach((slot) => {
      slot.replaceChildren();
      slot.classList.remove("won", "faded");
    });
  }

  putCard(seat, name, faded) {
    const slot = this.root.querySelector(".slot-" + this.position(seat));
    slot.replaceChildren(card(name, false));
    slot.classList.toggle("faded", Boolean(faded));
    slot.classList.remove("won");
  }

  markWinner(seat) {
    this.root.querySelector(".slot-" + this.position(seat)).classList.add("won");
    this.$("felt-note").textContent = this.seatName(seat) + " won the trick";
  }

  // -- rendering a state ---------------------------------------------------------------------------

  render(state, message) {
    const carried = this.state && this.state.id === state.id;
    this.state = state;
    if (!carried || !state.decision) this.selected.clear();
    let label = "Hand " + state.hand_number + " · ";
    if (state.outcome) label += "match over";
    else if (state.hand_result) label = "Hand " + state.hand_result.hand_number + " · scored";
    else label += state.phase === "playing" ? "trick " + state.trick_number : state.phase;
    this.$("hand-label").textContent = label;
    this.renderDifficulty();
    this.renderSeats();
    this.renderFelt();
    this.renderMarkers();
    this.renderHand();
    this.renderActions();
    this.renderCollected();
    this.renderPanel();
    if (message) this.say(message, "hint");
    else if (state.notice) this.say(state.notice, "hint");
  }

  renderDifficulty() {
    const d = this.state.difficulty;
    this.$("difficulty-box").hidden = !d;
    if (!d) return;
    this.$("difficulty").value = d.next || d.level || "";
    this.$("difficulty-next").textContent = d.next ? d.next + " from the next hand" : "";
  }

  renderSeats() {
    const state = this.state;
    for (const s of state.seats) {
      const box = this.root.querySelector(".pseat.pos-" + s.position);
      box.dataset.seat = s.seat;
      box.querySelector(".pname").textContent = s.position === "bottom" ? "You" : s.name;
      box.querySelector(".pinfo").textContent = s.position === "bottom" ? "" : s.cards_held + " cards";
      box.querySelector(".pexposed").replaceChildren(
        ...s.exposed.map((c) => el("span", { class: "exposed-card" }, [card(c, true), " " + state.effects[c]])),
      );
      box.querySelector(".pscore").replaceChildren(
        el("span", { class: "hand-score", "data-field": "hand-score" }, "Hand " + s.hand_score),
        " · ",
        el("span", { class: "total", "data-field": "total" }, "Total " + s.total),
      );
      box.querySelector(".threat").hidden = state.all_hearts_threat !== s.seat;
      box.classList.toggle("on-turn", state.to_move === s.seat);
    }
  }

  renderFelt() {
    this.clearFelt();
    const state = this.state;
    const note = this.$("felt-note");
    this.feltTrick = state.trick.length ? state.hand_number + ":" + state.trick_number : null;
    if (state.trick.length) {
      for (const p of state.trick) this.putCard(p.seat, p.card);
      note.textContent = "";
    } else if (state.last_trick && state.phase === "playing") {
      for (const p of state.last_trick.plays) this.putCard(p.seat, p.card, true);
      note.textContent = "Last trick: " + this.seatName(state.last_trick.winner) + " won it";
    } else {
      note.textContent = state.phase === "exposing" ? "Exposing phase" : state.phase === "passing" ? "Passing" : "";
    }
    if (state.decision && state.decision.kind === "play") note.textContent += (note.textContent ? " · " : "") + "Your turn";
  }

  renderMarkers() {
    const state = this.state;
    const badges = state.markers.map((m) => {
      const taken = m.taken_by === null ? "on the table" : "taken by " + this.seatName(m.taken_by);
      return el("span", { class: "badge marker marker-" + m.name.toLowerCase(), "data-card": m.card }, [
        el("strong", {}, m.name), " " + cardLabel(m.card) + " fell, " + taken,
      ]);
    });
    if (state.all_hearts_threat !== null) {
      badges.push(el("span", { class: "badge threat" }, "All-hearts threat: " + this.seatName(state.all_hearts_threat)));
    }
    this.$("markers").replaceChildren(...badges);
  }

  renderHand(hand, interactive) {
    const state = this.state;
    const cards = hand || state.hand;
    const live = interactive !== false && Boolean(state.decision);
    const buttons = cards.map((c) => {
      const classes = ["hand-card"];
      const dimmed = live && !c.playable && state.decision.kind === "play";
      if (dimmed) classes.push("dimmed");
      if (this.selected.has(c.card)) classes.push("selected");
      const label = cardLabel(c.card) + (dimmed ? " (cannot be played now)" : "");
      const children = [card(c.card, false)];
      if (live && c.effect) children.push(el("span", { class: "effect" }, ["can expose", el("br"), c.effect]));
      return el(
        "button",
        {
          type: "button",
          class: classes.join(" "),
          "data-card": c.card,
          "data-playable": live && c.playable ? "1" : "0",
          "aria-pressed": this.selected.has(c.card) ? "true" : "false",
          "aria-label": label,
          title: c.reason || "",
        },
        children,
      );
    });
    this.$("hand").replaceChildren(...buttons);
    this.renderActions();
  }

  renderActions() {
    const decision = this.busy ? null : this.state.decision;
    const kind = decision ? decision.kind : null;
    const chosen = this.selected.size;
    this.$("play-button").hidden = kind !== "play";
    this.$("play-button").disabled = chosen !== 1;
    this.$("expose-button").hidden = kind !== "expose";
    this.$("expose-button").disabled = chosen === 0;
    this.$("no-expose-button").hidden = kind !== "expose";
    this.$("pass-button").hidden = kind !== "pass";
    this.$("pass-button").disabled = chosen !== decision?.count;
    this.$("hint-button").hidden = !kind;
  }

  renderCollected() {
    const box = this.$("collected");
    this.$("collected-button").setAttribute("aria-expanded", String(this.showCollected));
    this.$("collected-button").textContent = this.showCollected ? "Hide collected cards" : "Show collected cards";
    box.hidden = !this.showCollected;
    if (!this.showCollected) return;
    const rows = this.state.seats.map((s) =>
      el("li", { "data-seat": s.seat }, [
        el("strong", {}, this.seatName(s.seat) + ": "),
        "exposed ", ...(s.exposed.length ? s.exposed.map((c) => card(c, true)) : ["none"]),
        "; collected ", ...(s.taken.length ? s.taken.map((c) => card(c, false)) : ["none"]),
      ]),
    );
    box.replaceChildren(el("h2", {}, "Exposed and collected scoring cards"), el("ul", {}, rows));
  }

  renderPanel() {
    const state = this.state;
    const result = state.hand_result;
    const panel = this.$("panel");
    panel.hidden = !result;
    if (!result) return;
    const outcome = state.outcome;
    this.$("panel-title").textContent = outcome
      ? (outcome.victory ? "Victory!" : "Defeat")
      : "Hand " + result.hand_number + " result";
    // The hand score and total first: on a phone the breakdown scrolls sideways after them.
    const columns = [
      ["Hand score", (s) => s.score, "score"],
      ["Total", (s, seat) => result.totals[seat], "total"],
      ["Hearts", (s) => s.hearts, "hearts"],
      ["Pig", (s) => s.pig, "pig"],
      ["Goat", (s) => s.goat, "goat"],
      ["Transformer", (s) => s.transformer_bonus, "transformer"],
      ["×", (s) => s.multiplier, "multiplier"],
      ["Bonus", (s) => [s.all_scoring ? "All 16" : s.all_hearts ? "All hearts" : "", s.qd_bonus ? "Q♦ +" + s.qd_bonus : "", s.capped ? "capped" : ""].filter(Boolean).join(", "), "bonus"],
    ];
    const head = el("thead", {}, el("tr", {}, [el("th", { scope: "col" }, "Player"), ...columns.map(([t]) => el("th", { scope: "col", class: "num" }, t))]));
    const rows = result.seats.map((s, seat) =>
      el("tr", { "data-seat": seat }, [
        el("th", { scope: "row" }, this.seatName(seat)),
        ...columns.map(([, value, field]) => el("td", { class: "num", "data-field": field }, value(s, seat))),
      ]),
    );
    this.$("hand-table").replaceChildren(
      el("caption", {}, "Hand " + result.hand_number + (result.exposed.length ? " · exposed " + result.exposed.map(cardLabel).join(" ") : "")),
      head,
      el("tbody", {}, rows),
    );
    const box = this.$("match-result");
    if (outcome) {
      const items = outcome.ranking.map((r) =>
        el("li", { "data-seat": r.seat }, [
          el("span", { class: "place" }, r.place + ". "),
          this.seatName(r.seat) + " " + r.total,
          r.out ? el("span", { class: "badge out" }, "Out") : "",
        ]),
      );
      box.replaceChildren(el("ol", { class: "ranking", id: "ranking" }, items));
    } else {
      box.replaceChildren();
    }
    this.$("next-hand-button").hidden = Boolean(outcome);
    this.$("again-button").hidden = !outcome;
    const link = this.$("replay-link");
    link.hidden = !(outcome && outcome.recorded);
    link.href = "/matches/" + state.match_id;
    (outcome ? this.$("again-button") : this.$("next-hand-button")).focus();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/play-sw.js", { scope: "/play" });
    navigator.serviceWorker.ready.then((reg) => reg.active.postMessage({ keep: location.href }));
  }
  const form = document.getElementById("play-setup");
  if (form) setupForm(form);
  const root = document.getElementById("play");
  if (root) window.playTable = new PlayTable(root);
});
