// The web sign: one link's meters (/sign/<link>) or one table's meters and placard
// (/sign/table/<table>), live from jackpotd's Server-Sent Events (/sign/events). Meters count up
// smoothly towards the committed value and never pass it; a reset shows at once. Without a
// snapshot or heartbeat for 5 s the sign says it lost the controller.
"use strict";

const parts = location.pathname.split("/").filter((part) => part !== "").map(decodeURIComponent);
const onTable = parts[1] === "table";
const watched = onTable ? parts[2] : parts[1];
const lostAfterMs = 5000;
const countMs = 800;

const state = {
  sequence: 0n,
  snapshot: null,
  placards: [],
  lastHeardMs: 0,
  connected: false,
  shown: new Map(),   // "link/level" -> cents shown now (fractional while counting)
  target: new Map(),  // "link/level" -> committed cents
  amountCells: new Map(),
};

function dollars(cents) {
  const whole = Math.floor(cents);
  const units = Math.floor(whole / 100).toLocaleString("en-US");
  return "$" + units + "." + String(whole % 100).padStart(2, "0");
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function levelName(snapshot, link, level) {
  for (const shown of snapshot.links) {
    if (shown.link !== link) continue;
    for (const each of shown.levels) if (each.level === level) return each.name;
  }
  return link + " level " + level;
}

function renderMeters(snapshot) {
  const meters = document.getElementById("meters");
  const keys = [];
  for (const link of snapshot.links) {
    for (const level of link.levels) keys.push(link.link + "/" + level.level);
  }
  const layout = keys.join("|");
  if (meters.dataset.layout !== layout) {
    meters.replaceChildren();
    state.amountCells.clear();
    for (const link of snapshot.links) {
      for (const level of link.levels) {
        const key = link.link + "/" + level.level;
        const box = element("div", "level");
        box.dataset.key = key;
        box.append(element("span", "level-link", link.link));
        box.append(element("div", "level-name", level.name));
        const amount = element("div", "amount");
        box.append(amount);
        box.append(element("div", "must-hit"));
        box.append(element("div", "commitment"));
        meters.append(box);
        state.amountCells.set(key, amount);
      }
    }
    meters.dataset.layout = layout;
  }
  for (const link of snapshot.links) {
    for (const level of link.levels) {
      const key = link.link + "/" + level.level;
      const box = meters.querySelector('[data-key="' + CSS.escape(key) + '"]');
      const previous = state.shown.get(key);
      state.target.set(key, level.cents);
      box.dataset.cents = String(level.cents);
      // The first value and a reset show at once; a rise is counted towards.
      if (previous === undefined || level.cents < previous) state.shown.set(key, level.cents);
      box.querySelector(".must-hit").textContent =
          level.must_hit_by_cents > 0 ? "Must hit by " + dollars(level.must_hit_by_cents) : "";
      box.querySelector(".commitment").textContent =
          level.commitment ? "Hidden trigger committed: " + level.commitment : "";
    }
  }
}

function renderPlacard(snapshot) {
  const placard = document.getElementById("placard");
  if (!onTable) return;
  const table = snapshot.tables.find((each) => each.table === watched);
  placard.replaceChildren();
  placard.hidden = false;
  for (const card of state.placards) {
    const selection = table ? table.links.find((each) => each.link === card.link) : undefined;
    const boosted = new Map();
    if (selection) for (const pay of selection.pays) boosted.set(pay.hand, pay);
    placard.append(element("h2", "", card.paytable + " on " + card.link));
    const rows = element("table");
    for (const line of card.lines) {
      const row = element("tr");
      row.append(element("td", "hand", line.hand));
      const pay = element("td", "pay");
      const boost = boosted.get(line.hand);
      if (line.kind === "percent") {
        pay.textContent = line.percent + "% of " + levelName(snapshot, card.link, line.level);
      } else if (line.kind === "must_hit_by") {
        pay.textContent = levelName(snapshot, card.link, line.level);
      } else if (boost) {
        row.className = "boosted";
        pay.append(element("span", "was", dollars(line.cents)));
        pay.append(document.createTextNode(dollars(boost.cents)));
        pay.append(element("span", "tag", "DYNAMIC PAY"));
      } else {
        pay.textContent = dollars(line.cents);
      }
      row.append(pay);
      rows.append(row);
    }
    placard.append(rows);
  }
}

function renderBanner(snapshot) {
  const banner = document.getElementById("banner");
  const hit = snapshot.hits.length > 0 ? snapshot.hits[snapshot.hits.length - 1] : null;
  if (!hit) {
    banner.hidden = true;
    return;
  }
  banner.replaceChildren(
      element("div", "hand", hit.hand),
      element("div", "won", dollars(hit.cents)),
      element("div", "where",
              levelName(snapshot, hit.link, hit.level) + " hit at table " + hit.table + ", seat " +
                  hit.seat + " \u2014 now " + dollars(hit.reset_cents)));
  banner.hidden = false;
}

function renderStatus() {
  const status = document.getElementById("status");
  const veil = document.getElementById("veil");
  const lost = !state.connected || Date.now() - state.lastHeardMs > lostAfterMs;
  let worst = "open";
  if (state.snapshot) {
    for (const link of state.snapshot.links) {
      if (link.status === "unavailable") worst = "unavailable";
      else if (link.status === "closed" && worst === "open") worst = "closed";
    }
  }
  if (lost) worst = "unavailable";
  status.className = "status status-" + worst;
  status.textContent = lost ? "link unavailable" : worst === "open" ? "open" : "link " + worst;
  veil.hidden = worst === "open";
  veil.textContent = lost ? "Link unavailable \u2014 lost the controller"
                          : worst === "closed" ? "Link closed" : "Link unavailable";
}

function onSnapshot(event) {
  const snapshot = JSON.parse(event.data);
  const sequence = BigInt(snapshot.sequence);
  state.lastHeardMs = Date.now();
  state.connected = true;
  if (snapshot.paytables) state.placards = snapshot.paytables;
  if (sequence <= state.sequence && !snapshot.paytables) return;  // Out of date.
  state.sequence = sequence;
  state.snapshot = snapshot;
  document.getElementById("title").textContent = watched;
  document.title = watched + " \u2014 progressive";
  renderMeters(snapshot);
  renderPlacard(snapshot);
  renderBanner(snapshot);
  renderStatus();
  document.getElementById("footer").textContent = "sequence " + snapshot.sequence;
  document.body.dataset.sequence = snapshot.sequence;
  document.body.dataset.snapshots = String(Number(document.body.dataset.snapshots || 0) + 1);
  report(snapshot);
}

// One console line per snapshot shown, for operators' browser consoles and the headless test:
// the committed meters, the status, the lit Dynamic Pays and the banner, as shown.
function report(snapshot) {
  const meters = {};
  for (const [key, cents] of state.target) meters[key] = cents;
  const lit = [];
  for (const row of document.querySelectorAll("#placard tr.boosted")) lit.push(row.textContent);
  const banner = document.getElementById("banner");
  console.info("jackpot-sign " + JSON.stringify({
    sequence: snapshot.sequence,
    status: document.getElementById("status").textContent,
    meters: meters,
    lit: lit,
    banner: banner.hidden ? "" : banner.textContent,
  }));
}

function count(now) {
  const step = (now - (count.last || now)) / countMs;
  count.last = now;
  for (const [key, target] of state.target) {
    let shown = state.shown.get(key);
    if (shown === undefined || shown > target) shown = target;
    if (shown < target) shown = Math.min(target, shown + Math.max(1, (target - shown) * step * 4));
    state.shown.set(key, shown);
    const cell = state.amountCells.get(key);
    if (cell) cell.textContent = dollars(shown);
  }
  requestAnimationFrame(count);
}

const source = new EventSource("/sign/events?" + (onTable ? "table=" : "link=") +
                               encodeURIComponent(watched));
source.addEventListener("snapshot", onSnapshot);
source.addEventListener("heartbeat", () => {
  state.lastHeardMs = Date.now();
  state.connected = true;
  renderStatus();
});
source.addEventListener("error", () => {
  state.connected = false;
  renderStatus();
});
setInterval(renderStatus, 500);
requestAnimationFrame(count);
