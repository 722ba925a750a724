// The session view: the whole conversation, fetched and rendered a page of events at a time
// (so a long session shows at once and fills in behind), matches of the query highlighted
// with next/previous, permalinks (#seq), the resume command, exports and the checkpoint.
// Opened from a search (?q=…), it lands on the query's first match ("1 / N"); n / N (or ↑ ↓
// beside the box) go from match to match, "/" goes to the box.
import { download, el, getJSON, when } from "/static/common.js";

const $ = (id) => document.getElementById(id);
const sid = decodeURIComponent(location.pathname.slice("/session/".length));
const params = new URLSearchParams(location.search);
const PAGE = 200;
const FIRST_PAGE = 40;  // small, so the top of a long session shows at once
const LABEL = { user: "user", assistant: "assistant", reasoning: "reasoning", tool_call: "tool call",
  tool_result: "output", meta: "context", checkpoint: "checkpoint", title: "title" };
let terms = [];
let marks = [];
let current = -1;
let done = false;
let agent = "";

function header(doc) {
  const s = doc.session;
  agent = doc.agent;
  document.title = `${s.title || s.session_id} · Voyager`;
  $("title").textContent = s.title || s.session_id;
  const facts = [["agent", doc.agent], ["project", s.git_repo || s.cwd], ["branch", s.git_branch], ["model", s.model],
    ["started", when(s.started)], ["updated", when(s.updated)], ["events", String(s.events)], ["id", s.session_id]];
  $("facts").replaceChildren(...facts.filter(([, v]) => v).flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: v })]));
  if (doc.resume) {
    $("resume").hidden = false;
    $("resume-cmd").textContent = doc.resume;
    $("copy").addEventListener("click", () => copy(doc.resume));
  }
  const enc = encodeURIComponent(s.session_id);
  // Buttons, not links: a download needs the token in a header (see common.js).
  const exp = (href, text, id) => el("button", { type: "button", class: "link", id, "data-href": href, text,
    onclick: () => download(href).catch((err) => { $("copied").textContent = String(err.message); }) });
  $("exports").replaceChildren(el("span", { class: "muted", text: "export " }),
    ...[["md", "Markdown"], ["json", "JSON"], ["html", "HTML"]].map(([f, name]) => exp(`/export/${f}/${enc}`, name)),
    exp(`/export/md/${enc}?redact=1`, "Markdown (redacted)", "export-redacted"));
  if (doc.checkpoint) {
    $("checkpoint").hidden = false;
    $("cp").replaceChildren(...doc.checkpoint.fields.flatMap(([label, , value]) => [
      el("dt", { text: label }), el("dd", {}, Array.isArray(value) ? el("ul", {}, ...value.map((v) => el("li", { text: v }))) : value)]));
  }
  terms = (doc.terms || []).map((t) => t.toLowerCase()).filter(Boolean);
  $("find").value = params.get("q") || "";
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard refused (an old browser, a denied permission): select the command for Ctrl-C instead.
    const r = document.createRange();
    r.selectNodeContents($("resume-cmd"));
    getSelection().removeAllRanges();
    getSelection().addRange(r);
  }
  $("copied").textContent = "copied";
  setTimeout(() => { $("copied").textContent = ""; }, 1500);
}

function who(e) {
  if (e.kind === "tool_call" || e.kind === "tool_result") return `${LABEL[e.kind]}${e.tool ? " · " + e.tool : ""}`;
  if (e.kind === "assistant" || e.kind === "reasoning") return `${agent} · ${LABEL[e.kind]}`;
  return LABEL[e.kind] || e.kind;
}

// An event's anchor: its number, or for Voyager's own events before the conversation (the title, a checkpoint:
// negative numbers inside the index) their kind, so no permalink carries an internal number.
function anchor(e) {
  return e.seq >= 0 ? String(e.seq) : e.kind;
}

function article(e) {
  const body = el("div", { class: "body md" });
  body.innerHTML = e.html;  // rendered and escaped by the server (render.py); never raw session text
  const exit = e.exit_code !== undefined && e.exit_code !== null ? el("span", { class: "exit", text: `exit ${e.exit_code}` }) : null;
  return el("article", { id: anchor(e), class: `ev k-${e.kind}${e.is_error ? " error" : ""}` },
    el("header", {},
      el("a", { class: "seq", href: `#${anchor(e)}`, title: "permalink", text: `#${anchor(e)}` }),
      el("span", { class: "who", text: who(e) }), exit,
      el("span", { class: "ts muted", text: e.ts ? when(new Date(e.ts * 1000).toISOString()) : "" })),
    body);
}

// Wrap each case-insensitive occurrence of a term in the text under `root` in <mark class="hit">.
function highlight(root) {
  if (!terms.length) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const text = node.nodeValue;
    const lower = text.toLowerCase();
    const found = [];
    for (const t of terms) {
      let i = lower.indexOf(t);
      while (i !== -1) { found.push([i, i + t.length]); i = lower.indexOf(t, i + t.length); }
    }
    if (!found.length) continue;
    found.sort((a, b) => a[0] - b[0]);
    const frag = document.createDocumentFragment();
    let at = 0;
    for (const [a, b] of found) {
      if (a < at) continue;
      frag.append(text.slice(at, a), el("mark", { class: "hit", text: text.slice(a, b) }));
      at = b;
    }
    frag.append(text.slice(at));
    node.replaceWith(frag);
  }
}

function rescanMarks() {
  marks = Array.from(document.querySelectorAll("#events mark.hit"));
  $("matchinfo").textContent = terms.length
    ? (marks.length ? `${current >= 0 ? current + 1 : "–"} / ${marks.length}${done ? "" : "+"}` : (done ? "no match" : "…"))
    : "";
}

function jump(step) {
  if (!marks.length) return;
  if (current >= 0 && marks[current]) marks[current].classList.remove("current");
  current = (current + step + marks.length) % marks.length;
  const m = marks[current];
  m.classList.add("current");
  const details = m.closest("details");
  if (details) details.open = true;
  m.scrollIntoView({ block: "center" });
  rescanMarks();
}

function clearMarks() {
  for (const m of document.querySelectorAll("#events mark.hit")) m.replaceWith(m.textContent);
  $("events").normalize();
}

function timeline(events) {
  // One tick per human turn: a way to jump through a long session.
  for (const e of events) {
    if (e.kind !== "user") continue;
    $("timeline").append(el("a", { href: `#${anchor(e)}`, title: `#${e.seq} ${when(e.ts ? new Date(e.ts * 1000).toISOString() : null)}` }));
  }
}

async function loadEvents(pending) {
  let start = 0;
  const wanted = decodeURIComponent(location.hash.slice(1));
  let landed = false;
  while (start !== null && start !== undefined) {
    const doc = await (pending || getJSON(`/ui/events/${encodeURIComponent(sid)}?start=${start}&limit=${PAGE}`));
    // Ask for the next page now: the server renders it while this one is laid out.
    pending = doc.next === null || doc.next === undefined ? null
      : getJSON(`/ui/events/${encodeURIComponent(sid)}?start=${doc.next}&limit=${PAGE}`);
    if (pending) pending.catch(() => {});
    const frag = document.createDocumentFragment();
    for (const e of doc.events) frag.append(article(e));
    const box = el("div", { class: "page" }, frag);
    highlight(box);
    $("events").append(box);
    timeline(doc.events);
    start = doc.next;
    done = start === null || start === undefined;
    rescanMarks();
    const target = wanted ? document.getElementById(wanted) : null;
    if (!landed && (target || !wanted)) {
      // Opened from a search: land on the query's first match (with a permalink, #seq: the first in or after
      // that event). Pages come in order, so the first page that holds a match holds the first one.
      const at = target ? marks.findIndex((m) => target.contains(m) ||
        (target.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING)) : 0;
      if (terms.length && at >= 0 && marks.length) { landed = true; current = at - 1; jump(1); }
      else if (target) { landed = true; target.scrollIntoView(); }
      else if (!terms.length || done) landed = true;
    }
    // Let the browser paint (and the reader read) between pages.
    await new Promise((r) => setTimeout(r, 0));
  }
  $("loading").textContent = "";
  document.body.dataset.loaded = "1";
  rescanMarks();
}

async function init() {
  // The first events are asked for with the header, not after it.
  const firstPage = getJSON(`/ui/events/${encodeURIComponent(sid)}?start=0&limit=${FIRST_PAGE}`);
  firstPage.catch(() => {});
  $("back").href = params.get("q") ? `/?q=${encodeURIComponent(params.get("q"))}` : "/";
  try {
    header(await getJSON(`/ui/session/${encodeURIComponent(sid)}?q=${encodeURIComponent(params.get("q") || "")}`));
  } catch (err) {
    $("title").textContent = String(err.message);
    $("loading").textContent = "";
    return;
  }
  $("next").addEventListener("click", () => jump(1));
  $("prev").addEventListener("click", () => jump(-1));
  $("find").addEventListener("keydown", async (e) => {
    if (e.key !== "Enter") return;
    const q = $("find").value.trim();
    if (q.toLowerCase() !== terms.join(" ")) {
      const doc = await getJSON(`/ui/session/${encodeURIComponent(sid)}?q=${encodeURIComponent(q)}`);
      clearMarks();
      terms = (doc.terms || []).map((t) => t.toLowerCase());
      highlight($("events"));
      current = -1;
      rescanMarks();
      const u = new URL(location.href);
      u.searchParams.set("q", q);
      history.replaceState(null, "", u);
    }
    jump(e.shiftKey ? -1 : 1);
  });
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    if (t === $("find") && e.key === "Escape") { $("find").blur(); return; }
    if (t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return;
    if (e.key === "n") { e.preventDefault(); jump(1); }
    else if (e.key === "N") { e.preventDefault(); jump(-1); }
    else if (e.key === "/") { e.preventDefault(); $("find").focus(); $("find").select(); }
  });
  window.addEventListener("hashchange", () => {
    const t = document.getElementById(location.hash.slice(1));
    if (t) t.scrollIntoView();
  });
  try {
    await loadEvents(firstPage);
  } catch (err) {
    $("loading").textContent = `could not load the rest of the session: ${err.message}`;
  }
}

init();
