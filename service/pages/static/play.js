// The Play page: shows the state the server sends (each card's legality and the referee's
// refusal when it cannot be played, scores, markers) and animates the computers' plays. It has
// no copy of the rules: every move goes to /api/play and the referee decides. Every word it
// shows comes from the page's catalog (#play-text, from the server's gettext catalogs).
// Uses el() and card() from pages.js.
"use strict";

const POSITIONS = ["bottom", "right", "top", "left"];
const STEP_MS = 550;
const TRICK_MS = 1100;
// ?animate=off shows the computers' plays at once (as if Fast-forward were always pressed).
const ANIMATE = new URLSearchParams(window.location.search).get("animate") !== "off";

let TEXT = { messages: {}, factors: {} };

// A message of the catalog with its {placeholders} filled in.
function t(key, params) {
  const message = TEXT.messages[key];
  if (message === undefined) throw new Error("no message " + key);
  return message.replace(/\{(\w+)\}/g, (_, name) => String(params[name]));
}

function cardName(name) {
  return t("card", { rank: t("rank." + name[0]), suit: t("suit." + name[1]) });
}

function cardNames(names) {
  const all = names.map(cardName);
  return all.length < 2 ? all.join("") : t("list.and", { first: all.slice(0, -1).join(", "), last: all.at(-1) });
}

function effectOf(name) {
  return t("effect", { name: t("name." + name), factor: TEXT.factors[name] });
}

// A card face (pages.js) named in the page's language for tooltips and screen readers.
function face(name, exposed) {
  const node = card(name, exposed);
  const label = exposed ? t("card.exposed", { card: cardName(name) }) : cardName(name);
  node.title = label;
  node.setAttribute("role", "img");
  node.setAttribute("aria-label", label);
  return node;
}

// The referee's refusal (code and parameters, from the API) in the page's language.
function refusalText(refusal, seatName) {
  const p = refusal;
  const params = {
    ...p,
    turn: p.turn === undefined ? "" : seatName(p.turn),
    cards: p.cards ? cardNames(p.cards) : "",
    suit: p.suit ? t("suit." + p.suit) : "",
    suit_singular: p.suit ? t("suit_singular." + p.suit) : "",
    phase: p.phase ? t("phase." + p.phase) : "",
    kind: p.kind ? t("kind." + p.kind) : "",
    card: cardName("2C"),
    allowed: cardNames(["AH", "QS", "JD", "TC"]),
  };
  return t("refusal." + p.code, params);
}

// A request to the API; a lost connection is status 0. Every failure comes with a message in
// the page's language.
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
    return { ok: false, status: 0, data: { message: t("error.offline") } };
  }
  let data;
  try {
    data = await response.json();
  } catch {
    return { ok: false, status: response.status, data: { message: t("error.http", { status: response.status }) } };
  }
  if (response.ok) return { ok: true, status: response.status, data };
  return { ok: false, status: response.status, data: { ...data, message: failure(response, data) } };
}

function failure(response, data) {
  if (response.status === 429) {
    const seconds = Number.parseInt(response.headers.get("Retry-After"), 10);
    if (Number.isNaN(seconds)) return t("error.rate_limited_soon");
    if (seconds >= 120) return t("error.rate_limited_minutes", { minutes: Math.ceil(seconds / 60) });
    return t("error.rate_limited", { seconds });
  }
  if (response.status === 409) return t("error.moved_on");
  if (response.status === 404) return t("error.gone");
  return t("error.refused", { message: data.message });
}

// -- choosing opponents and rules ------------------------------------------------------------

function startMatch(opponents, rules) {
  return api("POST", "", { opponents, rules }).then((r) => {
    if (r.ok) window.location.assign("/play/" + r.data.id + window.location.search);
    return r;
  });
}

function setupForm(form) {
  // the rules page's link shows the variants ticked
  const rules = form.querySelector("#setup-rules-link");
  form.addEventListener("change", () => {
    const variants = Array.from(form.querySelectorAll("input[name=variant]:checked"), (c) => c.value);
    rules.href = "/play/rules" + (variants.length ? "?variants=" + variants.join(",") : "");
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const opponents = Array.from(form.querySelectorAll("select[name=opponent]"), (s) => s.value);
    const variants = Array.from(form.querySelectorAll("input[name=variant]:checked"), (c) => c.value);
    const r = await startMatch(opponents, { variants });
    if (!r.ok) form.querySelector("#setup-message").textContent = r.data.message;
  });
}

// The language switch works without script (a form); with it, choosing is enough.
function languageSwitch(form) {
  form.querySelector("select").addEventListener("change", () => form.submit());
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
    this.showLast = false;
    this.focusCard = null;
    this.$ = (id) => root.querySelector("#" + id);
    this.$("hand").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-card]");
      if (button) this.tap(button.dataset.card);
    });
    this.$("hand").addEventListener("keydown", (event) => this.key(event));
    this.$("play-button").addEventListener("click", () => this.playSelected());
    this.$("expose-button").addEventListener("click", () => this.submitCards());
    this.$("no-expose-button").addEventListener("click", () => this.submit("/move", { cards: [] }));
    this.$("pass-button").addEventListener("click", () => this.submitCards());
    this.$("hint-button").addEventListener("click", () => this.hint());
    this.$("ff-button").addEventListener("click", () => this.skipping && this.skipping());
    this.$("next-hand-button").addEventListener("click", () => this.submit("/next-hand", {}));
    this.$("again-button").addEventListener("click", () => this.again());
    this.$("difficulty").addEventListener("change", (event) =>
      this.submit("/difficulty", { level: event.target.value }, t("difficulty.later")),
    );
    this.$("collected-button").addEventListener("click", () => {
      this.showCollected = !this.showCollected;
      this.renderCollected();
    });
    this.$("last-trick-button").addEventListener("click", () => {
      this.showLast = !this.showLast;
      this.renderFelt();
    });
    this.load();
  }

  // Where a seat sits on this screen: you at the bottom, then right, top, left in play order.
  position(seat) {
    return POSITIONS[(seat - this.state.seat + 4) % 4];
  }

  // A seat's name: "You", a house bot's level or a bot's name, with where it sits.
  shortName(seat) {
    const s = this.state.seats[seat];
    if (s.position === "bottom") return t("you");
    return s.kind === "house" ? t("level." + s.name.toLowerCase()) : s.name;
  }

  // A message about a seat: its "_you" form when the seat is the person's own.
  about(key, seat, params) {
    if (seat === this.state.seat) return t(key + "_you", params || {});
    return t(key, { ...params, seat: this.seatName(seat) });
  }

  seatName(seat) {
    const s = this.state.seats[seat];
    if (s.position === "bottom") return t("you");
    return t("seat", { name: this.shortName(seat), position: t("position." + s.position) });
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
    this.showLast = false;
    this.say("");
    await this.animate(r.data);
    this.setBusy(false);
    this.render(r.data, done);
  }

  // Arrow keys move among the cards (choosing a playable one when a card is to be played);
  // Enter or Space presses the card: a chosen card is played.
  key(event) {
    const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1, Home: -99, End: 99 };
    const step = moves[event.key];
    if (step === undefined || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const buttons = Array.from(this.$("hand").querySelectorAll("button[data-card]"));
    const at = buttons.indexOf(document.activeElement);
    const next = buttons[Math.max(0, Math.min(buttons.length - 1, (at < 0 ? 0 : at) + step))];
    if (!next) return;
    const name = next.dataset.card;
    const decision = this.state && !this.busy ? this.state.decision : null;
    this.focusCard = name;
    if (decision && decision.kind === "play" && next.dataset.playable === "1") {
      this.selected = new Set([name]);
      this.renderHand();
    } else {
      next.focus();
    }
  }

  tap(name) {
    const state = this.state;
    if (this.busy || !state) return;
    const entry = state.hand.find((c) => c.card === name);
    const decision = state.decision;
    this.focusCard = name;
    if (!decision) {
      this.say(t("wait_turn"));
      return;
    }
    if (!entry.playable) {
      const why = entry.refusal ? refusalText(entry.refusal, (seat) => this.seatName(seat)) : decision.kind === "expose" ? t("only_exposable") : "";
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
    const cards = cardNames(r.data.cards);
    const key = r.data.kind === "expose" && !r.data.cards.length ? "hint.no_expose" : "hint." + r.data.kind;
    this.say(t(key, { cards }), "hint");
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

  // The events of a move's answer, one by one: each card leaves its holder's count as it lands.
  async animate(next) {
    const events = next.events || [];
    if (!events.length) return;
    this.fast = !ANIMATE;
    this.renderHand(next.hand, false);
    this.$("ff-button").hidden = false;
    const held = this.state.seats.map((s) => s.cards_held);
    let handNumber = this.state.hand_number;
    for (const event of events) {
      if (event.hand !== handNumber) {
        handNumber = event.hand;
        held.fill(13);
      }
      if (event.kind === "exposed") {
        this.showExposures(event.exposed);
        await this.wait(TRICK_MS);
      } else if (event.kind === "play") {
        const key = event.hand + ":" + event.trick;
        if (key !== this.feltTrick) this.clearFelt();
        this.feltTrick = key;
        this.putCard(event.seat, event.card);
        held[event.seat] -= 1;
        this.renderHeld(event.seat, held[event.seat]);
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

  showExposures(exposed) {
    const parts = exposed
      .map((cards, seat) => (cards.length ? this.seatName(seat) + ": " + cards.map(effectOf).join(", ") : ""))
      .filter(Boolean);
    this.say(parts.length ? t("exposed.some", { list: parts.join("; ") }) : t("exposed.none"), "hint");
  }

  clearFelt() {
    this.root.querySelectorAll(".slot").forEach((slot) => {
      slot.replaceChildren();
      slot.classList.remove("won", "faded");
    });
  }

  putCard(seat, name, faded) {
    const slot = this.root.querySelector(".slot-" + this.position(seat));
    slot.replaceChildren(face(name, false));
    slot.classList.toggle("faded", Boolean(faded));
    slot.classList.remove("won");
  }

  markWinner(seat) {
    this.root.querySelector(".slot-" + this.position(seat)).classList.add("won");
    this.$("felt-note").textContent = this.about("felt.won", seat);
  }

  // -- rendering a state ---------------------------------------------------------------------------

  render(state, message) {
    const carried = this.state && this.state.id === state.id;
    this.state = state;
    if (!carried || !state.decision) this.selected.clear();
    const hand = t("label.hand", { number: state.hand_result ? state.hand_result.hand_number : state.hand_number });
    let detail;
    if (state.outcome) detail = t("label.match_over");
    else if (state.hand_result) detail = t("label.scored");
    else detail = state.phase === "playing" ? t("label.trick", { number: state.trick_number }) : t("phase." + state.phase);
    this.$("hand-label").textContent = hand + " · " + detail;
    const variants = state.rules.variants || [];
    this.$("rules-link").href = "/play/rules?game=" + encodeURIComponent(state.id);
    this.$("rules-link").dataset.variants = variants.join(",");
    this.renderDifficulty();
    this.renderSeats();
    this.renderFelt();
    this.renderMarkers();
    this.renderHand();
    this.renderActions();
    this.renderCollected();
    this.renderPanel();
    if (message) this.say(message, "hint");
    else if (state.notice) this.say(t("notice.nothing_to_expose"), "hint");
  }

  renderDifficulty() {
    const d = this.state.difficulty;
    this.$("difficulty-box").hidden = !d;
    if (!d) return;
    this.$("difficulty").value = d.next || d.level || "";
    this.$("difficulty-next").textContent = d.next ? t("difficulty.next", { level: t("level." + d.next) }) : "";
  }

  renderHeld(seat, count) {
    const box = this.root.querySelector(".pseat.pos-" + this.position(seat));
    if (this.position(seat) !== "bottom") box.querySelector(".pinfo").textContent = t("cards_held", { count });
  }

  renderSeats() {
    const state = this.state;
    for (const s of state.seats) {
      const box = this.root.querySelector(".pseat.pos-" + s.position);
      box.dataset.seat = s.seat;
      const where = s.position === "bottom" ? [] : [" ", el("span", { class: "where" }, t("position." + s.position))];
      box.querySelector(".pname").replaceChildren(this.shortName(s.seat), ...where);
      box.querySelector(".pinfo").textContent = "";
      this.renderHeld(s.seat, s.cards_held);
      const exposed = box.querySelector(".pexposed");
      exposed.replaceChildren(
        ...(s.exposed.length ? [el("span", { class: "label" }, t("exposed_beside"))] : []),
        ...s.exposed.map((c) => el("span", { class: "exposed-card" }, [face(c, true), " " + effectOf(c)])),
      );
      box.querySelector(".pscore").replaceChildren(
        el("span", { class: "score-part" }, [
          el("span", { class: "label" }, t("this_hand") + " "),
          el("strong", { class: "hand-score", "data-field": "hand-score" }, String(s.hand_score)),
        ]),
        el("span", { class: "score-part" }, [
          el("span", { class: "label" }, t("total") + " "),
          el("strong", { class: "total", "data-field": "total" }, String(s.total)),
        ]),
      );
      const threat = box.querySelector(".threat");
      threat.hidden = state.all_hearts_threat !== s.seat;
      box.classList.toggle("on-turn", state.to_move === s.seat);
    }
  }

  renderFelt() {
    this.clearFelt();
    const state = this.state;
    const note = this.$("felt-note");
    const last = state.last_trick;
    const button = this.$("last-trick-button");
    button.setAttribute("aria-pressed", String(this.showLast));
    button.textContent = this.showLast ? t("last_trick.hide") : t("last_trick.show");
    button.hidden = !(state.phase === "playing" && last);
    this.feltTrick = state.trick.length ? state.hand_number + ":" + state.trick_number : null;
    if (this.showLast && last) {
      for (const p of last.plays) this.putCard(p.seat, p.card);
      this.root.querySelector(".slot-" + this.position(last.winner)).classList.add("won");
      note.textContent = this.about("felt.last_trick", last.winner);
      this.feltTrick = null;
      return;
    }
    if (state.trick.length) {
      for (const p of state.trick) this.putCard(p.seat, p.card);
      note.textContent = "";
    } else if (last && state.phase === "playing") {
      for (const p of last.plays) this.putCard(p.seat, p.card, true);
      note.textContent = this.about("felt.last_trick", last.winner);
    } else {
      note.textContent = state.phase === "exposing" ? t("felt.exposing") : state.phase === "passing" ? t("felt.passing") : "";
    }
    if (state.decision && state.decision.kind === "play") note.textContent += (note.textContent ? " · " : "") + t("felt.your_turn");
  }

  renderMarkers() {
    const state = this.state;
    const badges = state.markers.map((m) => {
      const params = { name: t("name." + m.card), card: cardName(m.card) };
      const text = m.taken_by === null ? t("marker.on_table", params) : this.about("marker.taken", m.taken_by, params);
      return el("span", { class: "badge marker marker-" + m.name.toLowerCase(), "data-card": m.card }, [
        face(m.card, false), " " + text,
      ]);
    });
    if (state.all_hearts_threat !== null) {
      badges.push(el("span", { class: "badge threat" }, t("threat", { seat: this.seatName(state.all_hearts_threat) })));
    }
    this.$("markers").replaceChildren(...badges);
  }

  renderHand(hand, interactive) {
    const state = this.state;
    const cards = hand || state.hand;
    const live = interactive !== false && Boolean(state.decision);
    const focused = this.focusCard;
    const tabbable = cards.find((c) => c.card === focused) || cards.find((c) => this.selected.has(c.card)) || cards[0];
    const buttons = cards.map((c) => {
      const classes = ["hand-card"];
      const dimmed = live && !c.playable && state.decision.kind === "play";
      if (dimmed) classes.push("dimmed");
      if (this.selected.has(c.card)) classes.push("selected");
      const name = cardName(c.card);
      const canExpose = live && c.effect;
      let label = name;
      if (dimmed) label = t("card.cannot_play", { card: name });
      else if (canExpose) label = t("card.can_expose", { card: name, effect: effectOf(c.card) });
      const face = card(c.card, false);
      face.removeAttribute("title");
      face.setAttribute("aria-hidden", "true");
      const children = [face];
      if (canExpose) children.push(el("span", { class: "effect", "aria-hidden": "true" }, [t("can_expose"), el("br"), effectOf(c.card)]));
      return el(
        "button",
        {
          type: "button",
          class: classes.join(" "),
          "data-card": c.card,
          "data-playable": live && c.playable ? "1" : "0",
          "aria-pressed": this.selected.has(c.card) ? "true" : "false",
          "aria-label": label,
          tabindex: c === tabbable ? "0" : "-1",
          title: c.refusal && dimmed ? refusalText(c.refusal, (seat) => this.seatName(seat)) : name,
        },
        children,
      );
    });
    const hadFocus = this.$("hand").contains(document.activeElement);
    this.$("hand").replaceChildren(...buttons);
    const again = buttons.find((b) => b.dataset.card === focused);
    if (hadFocus && again) again.focus();
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
    this.$("collected-button").textContent = this.showCollected ? t("collected.hide") : t("collected.show");
    box.hidden = !this.showCollected;
    if (!this.showCollected) return;
    const none = () => [t("collected.none")];
    const rows = this.state.seats.map((s) =>
      el("li", { "data-seat": s.seat }, [
        el("strong", {}, this.seatName(s.seat) + ": "),
        t("collected.exposed") + " ", ...(s.exposed.length ? s.exposed.map((c) => face(c, true)) : none()),
        "; " + t("collected.taken") + " ", ...(s.taken.length ? s.taken.map((c) => face(c, false)) : none()),
      ]),
    );
    box.replaceChildren(el("h2", {}, t("collected.title")), el("ul", {}, rows));
  }

  renderPanel() {
    const state = this.state;
    const result = state.hand_result;
    const panel = this.$("panel");
    panel.hidden = !result;
    if (!result) return;
    const outcome = state.outcome;
    this.$("panel-title").textContent = outcome
      ? (outcome.victory ? t("result.victory") : t("result.defeat"))
      : t("result.hand", { number: result.hand_number });
    const bonus = (s) =>
      [
        s.all_scoring ? t("bonus.all_scoring") : s.all_hearts ? t("bonus.all_hearts") : "",
        s.qd_bonus ? t("bonus.qd", { points: s.qd_bonus }) : "",
        s.capped ? t("bonus.capped") : "",
      ].filter(Boolean).join(", ");
    // The hand score and total first: on a phone the breakdown scrolls sideways after them.
    const columns = [
      ["score", (s) => s.score],
      ["total", (s, seat) => result.totals[seat]],
      ["hearts", (s) => s.hearts],
      ["pig", (s) => s.pig],
      ["goat", (s) => s.goat],
      ["transformer", (s) => s.transformer_bonus],
      ["multiplier", (s) => s.multiplier],
      ["bonus", bonus],
    ];
    const head = el("thead", {}, el("tr", {}, [
      el("th", { scope: "col" }, t("column.player")),
      ...columns.map(([field]) => el("th", { scope: "col", class: "num" }, t("column." + field))),
    ]));
    const rows = result.seats.map((s, seat) =>
      el("tr", { "data-seat": seat }, [
        el("th", { scope: "row" }, this.seatName(seat)),
        ...columns.map(([field, value]) => el("td", { class: "num", "data-field": field }, value(s, seat))),
      ]),
    );
    const exposed = result.exposed.length ? " · " + t("result.exposed", { cards: cardNames(result.exposed) }) : "";
    this.$("hand-table").replaceChildren(
      el("caption", {}, t("label.hand", { number: result.hand_number }) + exposed),
      head,
      el("tbody", {}, rows),
    );
    const box = this.$("match-result");
    if (outcome) {
      const items = outcome.ranking.map((r) =>
        el("li", { "data-seat": r.seat }, [
          el("span", { class: "place" }, r.place + ". "),
          this.seatName(r.seat) + " " + r.total,
          r.out ? el("span", { class: "badge out" }, t("result.out")) : "",
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
  const text = document.getElementById("play-text");
  if (text) TEXT = JSON.parse(text.textContent);
  const language = document.getElementById("language-form");
  if (language) languageSwitch(language);
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/play-sw.js", { scope: "/play" });
    navigator.serviceWorker.ready.then((reg) => reg.active.postMessage({ keep: location.href }));
  }
  const form = document.getElementById("play-setup");
  if (form) setupForm(form);
  const root = document.getElementById("play");
  if (root) window.playTable = new PlayTable(root);
});
