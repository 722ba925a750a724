// Helpers both pages share: the token (see below), requests for data, downloads. Every session string
// goes into the page as text (textContent), never as HTML; the only HTML inserted is the session view's
// event bodies, which the server renders and escapes (voyager_sessions/web/render.py).

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// The token. Each start of `voyager web` makes a new one and opens `/#token=…`; a fragment is never sent
// to a server. The page keeps it in this origin's localStorage, which, unlike a cookie, no other port of
// 127.0.0.1 can see, and sends it as a header with every request for data. A token in the address is
// taken only once the server accepts it (a page elsewhere cannot plant a token of its own), and the
// address loses it at once.
const KEY = "voyager-token";
const offered = /(?:^#|&)token=([^&]*)/.exec(location.hash);
if (offered) {
  const rest = location.hash.slice(1).split("&").filter((p) => !p.startsWith("token=")).join("&");
  history.replaceState(history.state, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  await adopt(decodeURIComponent(offered[1]));
}

async function accepted(token) {
  const res = await fetch("/api/auth", { headers: { Authorization: `Bearer ${token}` }, cache: "no-store" });
  return res.ok;
}

async function adopt(token) {
  token = token.trim();
  const url = /[#?&]token=([^&#\s]+)/.exec(token);  // the whole printed URL pasted: its token
  if (url) token = decodeURIComponent(url[1]);
  if (!token || !(await accepted(token).catch(() => false))) return false;
  localStorage.setItem(KEY, token);
  return true;
}

function authHeaders() {
  const token = localStorage.getItem(KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

let asking = null;

// The page has no token, or one from an earlier start (a bookmark, a restart): say so, and take the new one.
function askForToken(why) {
  if (asking) return asking;
  asking = new Promise((resolve) => {
    const input = el("input", { id: "token-input", type: "password", autocomplete: "off", spellcheck: "false",
      placeholder: "the URL or the token", "aria-label": "token" });
    const status = el("span", { class: "muted", id: "token-status" });
    const form = el("form", { id: "token-form", class: "token" },
      el("h2", { text: "This page needs the token of the voyager web now running" }),
      el("p", { text: why }),
      el("p", { text: "Open the URL `voyager web` printed (it holds the token), or paste that URL or the token here:" }),
      input, " ", el("button", { type: "submit", text: "open" }), " ", status);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (await adopt(input.value)) {
        location.reload();
        resolve();
      } else {
        status.textContent = "not this server's token";
      }
    });
    document.body.prepend(form);
    input.focus();
  });
  return asking;
}

// A request for data, with the token; a refusal of the token asks for it (and never resolves).
export async function authFetch(url, init = {}) {
  const headers = { ...(init.headers || {}), ...authHeaders() };
  const res = await fetch(url, { ...init, headers, credentials: "omit" });
  if (res.status === 401) {
    const why = localStorage.getItem(KEY)
      ? "The token this browser kept is from an earlier start of voyager web: each start makes a new one."
      : "This browser has no token for this server yet.";
    await askForToken(why);
  }
  return res;
}

export async function getJSON(url) {
  const res = await authFetch(url, { headers: { Accept: "application/json" } });
  const doc = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(doc.error || `HTTP ${res.status}`);
  return doc;
}

// A download the server names in Content-Disposition (RFC 6266: filename*, else filename), fetched with the
// token (a link cannot carry a header) and saved from memory.
export async function download(url) {
  const res = await authFetch(url);
  if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error || `HTTP ${res.status}`);
  const cd = res.headers.get("content-disposition") || "";
  const star = /filename\*=UTF-8''([^;]+)/i.exec(cd);
  const plain = /filename="([^"]*)"/i.exec(cd);
  const name = star ? decodeURIComponent(star[1]) : plain ? plain[1] : "export";
  const href = URL.createObjectURL(await res.blob());
  const a = el("a", { href, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  if (isNaN(d)) return "";
  return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export function sessionHref(id, q, seq) {
  const query = q ? `?q=${encodeURIComponent(q)}` : "";
  return `/session/${encodeURIComponent(id)}${query}${seq !== undefined && seq !== null ? "#" + seq : ""}`;
}

// The snippet with its highlight spans (code-point offsets from the server) as <mark>s.
export function snippet(text, spans) {
  const chars = Array.from(text || "");
  const out = el("p", { class: "snippet" });
  let at = 0;
  for (const [a, b] of spans || []) {
    if (a < at) continue;
    out.append(chars.slice(at, a).join(""), el("mark", { text: chars.slice(a, b).join("") }));
    at = b;
  }
  out.append(chars.slice(at).join(""));
  return out;
}
