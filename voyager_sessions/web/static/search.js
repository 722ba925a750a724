// The search page: results as you type (debounced), grouped by session, facets, and the
// query and filters in the URL (history.pushState), so back/forward and bookmarks work.
// Keys: "/" goes to the box; from the box ↓ goes to the first result (Enter opens it: two keys);
// ↑/↓ and j/k move through the results, ↑ on the first goes back to the box.
import { el, getJSON, sessionHref, snippet, when } from "/static/common.js";

const $ = (id) => document.getElementById(id);
const FILTERS = ["provider", "project", "week", "sort"];
let timer = null;
let serial = 0;

function stateFromURL() {
  const p = new URLSearchParams(location.search);
  const s = { q: p.get("q") || "" };
  for (const f of FILTERS) s[f] = p.get(f) || "";
  return s;
}

let state = stateFromURL();

function urlOf(s) {
  const p = new URLSearchParams();
  if (s.q) p.set("q", s.q);
  for (const f of FILTERS) if (s[f] && !(f === "sort" && s[f] === "relevance")) p.set(f, s[f]);
  const qs = p.toString();
  return qs ? `/?${qs}` : "/";
}

let typing = false;
let focusFirst = false;  // ↓ pressed before the rows of what the box says arrived

// A new history entry per change, except that the keystrokes of one query share one entry
// (back goes to the previous query, not to each prefix of this one).
function go(next, { typed = false } = {}) {
  state = { ...state, ...next };
  const url = urlOf(state);
  if (url !== location.pathname + location.search) {
    if (typed && typing) history.replaceState(null, "", url);
    else history.pushState(null, "", url);
  }
  typing = typed;
  load();
}

async function load() {
  const mine = ++serial;
  const p = new URLSearchParams(urlOf(state).slice(2));
  p.set("limit", "50");
  $("status").textContent = "searching…";
  // The results and the facets are two requests: the page's rows come first, the counts behind.
  const facetParams = new URLSearchParams(p);
  facetParams.set("limit", "0");  // the counts and the total alone: no rows read
  const facetsDoc = getJSON(`/api/search?${facetParams}`);
  facetsDoc.catch(() => {});
  p.set("facets", "0");
  let doc;
  try {
    doc = await getJSON(`/api/search?${p}`);
  } catch (err) {
    if (mine === serial) { $("status").textContent = String(err.message); $("results").replaceChildren(); }
    return;
  }
  if (mine !== serial) return;  // a newer request is on its way: this answer is stale
  show(doc);
  try {
    const f = await facetsDoc;
    if (mine !== serial) return;
    facets(f.facets);
    // A common word's rows count at least so many sessions; the facets counted them all.
    if (doc.result.total_exact === false) {
      const n = f.result.total;
      $("status").textContent = `${n.toLocaleString()} session${n === 1 ? "" : "s"} match (showing ${doc.result.hits.length})`;
    }
  } catch { /* the results stand without their counts */ }
}

// While the index is built: how far it is (and that no match is no answer yet).
function building(ix) {
  if (!ix) return "";
  const of = `${ix.sessions_done.toLocaleString()} of ${ix.sessions_total.toLocaleString()} sessions`;
  const said = ix.sessions_words > ix.sessions_done ? `, what was said in ${ix.sessions_words.toLocaleString()}` : "";
  return ix.running ? ` · still indexing: ${of} searched${said}` : ` · the index is incomplete: ${of} (voyager scan goes on)`;
}

function show(doc) {
  const res = doc.result;
  const n = res.total;
  const atLeast = res.total_exact === false ? "+" : "";  // a common word: at least this many (docs/json.md)
  $("status").textContent = (state.q
    ? (n === 0 && doc.indexing ? "no match yet" : `${n.toLocaleString()}${atLeast} session${n === 1 && !atLeast ? "" : "s"} match` + (res.hits.length < n ? ` (showing ${res.hits.length})` : ""))
    : `${n.toLocaleString()} most recent sessions`) + building(doc.indexing);
  if (doc.indexing && doc.indexing.running && n === 0) {
    const asked = serial;
    setTimeout(() => { if (asked === serial) load(); }, 3000);  // what is not indexed yet may hold it: ask again
  }
  $("results").replaceChildren(...res.hits.map((h) => row(h, doc.repos[h.session_id], doc.excerpts)));
  if (res.hits.length < n) $("results").append(more(res.hits.length));
  $("results").dataset.q = state.q;  // which query the list answers (tests wait for it)
  chips();
  prompts(res.hits);
  if (focusFirst) { focusFirst = false; moveTo(rowLinks()[0]); }
}

// A row found by its session's title shows what the session's prompt says (which tells more) instead of
// the title again; asked for after the rows show, so typing never waits for it.
async function prompts(hits) {
  const titled = hits.filter((h) => h.kind === "title").map((h) => h.session_id);
  if (!titled.length || !state.q) return;
  const mine = serial;
  const p = new URLSearchParams({ q: state.q });
  for (const id of titled) p.append("id", id);
  let doc;
  try { doc = await getJSON(`/ui/prompts?${p}`); } catch { return; }
  if (mine !== serial) return;
  for (const li of $("results").querySelectorAll("li.hit")) {
    const found = doc.prompts[li.dataset.session];
    if (!found) continue;
    const old = li.querySelector(".snippet");
    const shown = snippet(found.snippet, found.highlights);
    if (old) old.replaceWith(shown); else li.append(shown);
  }
}

// The next page of sessions, appended in place of this button.
function more(offset) {
  const button = el("button", { type: "button", class: "more", text: "more sessions" });
  const item = el("li", { class: "more-row" }, button);
  button.addEventListener("click", async () => {
    const mine = serial;
    const p = new URLSearchParams(urlOf(state).slice(2));
    p.set("limit", "50");
    p.set("offset", String(offset));
    p.set("facets", "0");
    button.disabled = true;
    try {
      const doc = await getJSON(`/api/search?${p}`);
      if (mine !== serial) return;
      const rows = doc.result.hits.map((h) => row(h, doc.repos[h.session_id], doc.excerpts));
      const shown = offset + rows.length;
      item.replaceWith(...rows, ...(shown < doc.result.total && rows.length ? [more(shown)] : []));
      $("status").textContent = `${doc.result.total.toLocaleString()} sessions` + (shown < doc.result.total ? ` (showing ${shown})` : "");
    } catch (err) {
      button.disabled = false;
      button.textContent = `more sessions (${err.message})`;
    }
  });
  return item;
}

function row(h, repo, excerpts) {
  const project = repo || h.cwd || "";
  // The session opens at the query's first match (no event number in the address: a permalink stays one).
  const head = el("div", { class: "hit-head" },
    el("span", { class: `agent agent-${h.provider}`, text: h.provider }),
    el("a", { class: "title", href: sessionHref(h.session_id, state.q, null), text: h.title || h.session_id }),
  );
  const meta = el("div", { class: "hit-meta muted" },
    el("span", { class: "project", title: project, text: project }),
    el("span", { class: "when", text: when(h.timestamp) }),
    h.match === "meaning"
      ? el("span", { class: "count by-meaning", title: "none of the words: found by what the session is about", text: "by meaning" })
      : el("span", { class: "count", text: state.q ? `${h.hit_count} hit${h.hit_count === 1 ? "" : "s"}` : `${h.hit_count} events` }),
  );
  const shown = (excerpts && excerpts[h.session_id]) || h;  // a tool call's arguments as they read
  return el("li", { class: "hit", "data-session": h.session_id }, head, meta,
    shown.snippet ? snippet(shown.snippet, shown.highlights) : null);
}

// Moving through the results with the keyboard: each row's title link takes the focus (Enter follows it).
function rowLinks() {
  return Array.from($("results").querySelectorAll("li.hit a.title"));
}

function moveTo(link) {
  if (!link) return;
  link.focus({ preventScroll: true });
  link.closest("li").scrollIntoView({ block: "nearest" });
}

function keys(e) {
  if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;
  if (t === $("q")) {
    if (e.key !== "ArrowDown") return;
    e.preventDefault();
    if ($("results").dataset.q !== $("q").value.trim()) {
      // Typed faster than the debounce: search now, and go to the first row once it is there.
      clearTimeout(timer);
      focusFirst = true;
      go({ q: $("q").value.trim() }, { typed: true });
    } else moveTo(rowLinks()[0]);
    return;
  }
  if (typing) return;
  if (e.key === "/") { e.preventDefault(); $("q").focus(); $("q").select(); return; }
  const links = rowLinks();
  const at = links.indexOf(t);
  if (at < 0) return;
  if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); moveTo(links[Math.min(at + 1, links.length - 1)]); }
  else if (e.key === "ArrowUp" || e.key === "k") {
    e.preventDefault();
    if (at === 0) $("q").focus(); else moveTo(links[at - 1]);
  } else if (e.key === "Escape") { e.preventDefault(); $("q").focus(); }
}

// Wide screens show the filters beside the results; narrow ones fold them above (results first).
function foldFilters() {
  const wide = matchMedia("(min-width: 48.01rem)");
  const apply = () => { $("filters").open = wide.matches; };
  wide.addEventListener("change", apply);
  apply();
}

function facetList(title, items, key, label = (v) => v) {
  const box = el("section", { class: "facet" }, el("h3", { text: title }));
  const ul = el("ul");
  for (const [value, count] of items) {
    const on = state[key] === value;
    ul.append(el("li", {},
      el("button", { type: "button", class: on ? "on" : "", title: value, "data-facet": key, "data-value": value,
        onclick: () => go({ [key]: on ? "" : value }) },
        el("span", { class: "fv", text: label(value) }), el("span", { class: "fc", text: String(count) }))));
  }
  box.append(ul);
  return box;
}

function histogram(weeks) {
  const box = el("section", { class: "facet" }, el("h3", { text: "When (by week)" }));
  const max = Math.max(1, ...weeks.map(([, c]) => c));
  const bars = el("div", { class: "histogram" });
  for (const [week, count] of weeks) {
    const on = state.week === week;
    const bar = el("button", { type: "button", class: `bar ${on ? "on" : ""}`, title: `week of ${week}: ${count}`,
      "data-week": week, onclick: () => go({ week: on ? "" : week }) });
    bar.style.setProperty("--h", `${Math.max(4, Math.round((count / max) * 100))}%`);
    bars.append(bar);
  }
  box.append(bars);
  if (weeks.length) box.append(el("div", { class: "muted range", text: `${weeks[0][0]} … ${weeks[weeks.length - 1][0]}` }));
  return box;
}

function facets(f) {
  const short = (p) => p.replace(/\/+$/, "").split("/").slice(-2).join("/") || p;
  $("facets").replaceChildren(
    facetList("Agent", f.agent, "provider"),
    facetList("Project", f.project, "project", short),
    histogram(f.week),
  );
}

function chips() {
  const box = $("chips");
  box.replaceChildren();
  for (const k of ["provider", "project", "week"]) {
    if (!state[k]) continue;
    box.append(el("button", { type: "button", class: "chip", title: "remove this filter", onclick: () => go({ [k]: "" }) },
      `${k}: ${state[k]} ×`));
  }
}

function init() {
  $("q").value = state.q;
  $("sort").value = state.sort || "relevance";
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => go({ q: $("q").value.trim() }, { typed: true }), 150);
  });
  $("q").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { clearTimeout(timer); go({ q: $("q").value.trim() }, { typed: true }); typing = false; }
  });
  $("sort").addEventListener("change", () => go({ sort: $("sort").value }));
  document.addEventListener("keydown", keys);
  foldFilters();
  window.addEventListener("popstate", () => {
    state = stateFromURL();
    typing = false;
    $("q").value = state.q;
    $("sort").value = state.sort || "relevance";
    load();
  });
  load();
}

init();
