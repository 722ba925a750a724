// Helpers both pages share. Every session string goes into the page as text (textContent),
// never as HTML; the only HTML inserted is the session view's event bodies, which the
// server renders and escapes (voyager_sessions/web/render.py).

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

export async function getJSON(url) {
  const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  const doc = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(doc.error || `HTTP ${res.status}`);
  return doc;
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
