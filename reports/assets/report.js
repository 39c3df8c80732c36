"use strict";
// The record browser of a ragbench HTML report. The index (what the filters need) and the records
// are gzip-compressed base64 JSON in <script> elements; records are decoded one chunk at a time,
// when a page of the table needs them.
(function () {
  const PAGE = 50;
  const $ = (id) => document.getElementById(id);
  const chunks = new Map();
  let idx = null, rows = [], page = 0, selected = -1;

  async function decode(id) {
    const el = $(id);
    const bin = Uint8Array.from(atob(el.textContent.trim()), (c) => c.charCodeAt(0));
    const stream = new Blob([bin]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function chunk(n) {
    if (!chunks.has(n)) chunks.set(n, decode("rb-chunk-" + n));
    return chunks.get(n);
  }

  async function record(k) {
    const c = await chunk(Math.floor(k / idx.chunk));
    return c[k % idx.chunk];
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function fill(select, names) {
    names.forEach((n, i) => {
      const o = el("option", n);
      o.value = String(i);
      select.appendChild(o);
    });
  }

  function applyFilters() {
    const c = $("f-cell").value, d = $("f-dataset").value, g = $("f-gen").value;
    const e = $("f-correct").value, f = $("f-fired").value, q = $("f-id").value.trim();
    rows = [];
    for (let k = 0; k < idx.id.length; k++) {
      if (c !== "" && idx.c[k] !== +c) continue;
      if (d !== "" && idx.d[k] !== +d) continue;
      if (g !== "" && idx.g[k] !== +g) continue;
      if (e !== "" && idx.e[k] !== +e) continue;
      if (f !== "" && idx.f[k] !== +f) continue;
      if (q !== "" && !idx.id[k].includes(q)) continue;
      rows.push(k);
    }
    page = 0;
    return render();
  }

  function correctText(v) {
    return v === 1 ? ["yes", "ok"] : v === 0 ? ["no", "bad"] : ["failed", "fail"];
  }

  async function render() {
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    page = Math.min(page, pages - 1);
    const slice = rows.slice(page * PAGE, (page + 1) * PAGE);
    const recs = await Promise.all(slice.map(record));
    const body = $("rec-body");
    body.replaceChildren();
    slice.forEach((k, i) => {
      const r = recs[i];
      const tr = el("tr");
      tr.dataset.k = String(k);
      if (k === selected) tr.className = "sel";
      const [ct, cc] = correctText(idx.e[k]);
      tr.append(el("td", r.id), el("td", short(idx.gens[idx.g[k]])), el("td", idx.datasets[idx.d[k]]), el("td", idx.cells[idx.c[k]]), el("td", r.question),
        el("td", r.prediction), el("td", (r.gold || []).join(" / ")), el("td", ct, cc),
        el("td", r.counters ? r.counters.retrievals : 0));
      const td = el("td");
      const btn = el("button", "trace");
      btn.className = "trace-btn";
      btn.addEventListener("click", () => show(k));
      td.appendChild(btn);
      tr.appendChild(td);
      body.appendChild(tr);
    });
    $("count").textContent = rows.length + " of " + idx.id.length + " records";
    $("page").textContent = "page " + (page + 1) + " of " + pages;
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  }

  // short drops the server address from a generator label ("MODEL at SERVER" → "MODEL").
  function short(g) {
    const i = g.indexOf(" at ");
    return i > 0 ? g.slice(0, i) : g;
  }

  function kv(obj) {
    const fmt = (v) => (typeof v === "number" && !Number.isInteger(v) ? String(+v.toFixed(4)) : String(v));
    return Object.keys(obj || {}).sort().map((k) => k + " = " + fmt(obj[k])).join(", ");
  }

  async function show(k) {
    selected = k;
    const r = await record(k);
    const d = $("detail");
    d.replaceChildren();
    d.hidden = false;
    d.append(el("h3", r.id + " · " + idx.datasets[idx.d[k]] + " · " + idx.cells[idx.c[k]]));
    const dl = el("dl");
    const add = (t, v) => { dl.append(el("dt", t), el("dd", v)); };
    add("Question", r.question);
    add("Gold", (r.gold || []).join(" / "));
    add("Prediction", r.prediction);
    if (r.type) add("Type", r.type);
    add("Generator", r.generator);
    add("Scores", kv(r.scores));
    add("Counters", kv(r.counters));
    add("Signals", kv(r.signals));
    if (r.error) add("Error", r.error);
    if (r._src) add("Record", r._src);
    if (r._cut) add("Shortened", "this page shows the record shortened (level " + r._cut + " of 3) to stay small; the full record is in " + (r._src || "its run's records file"));
    d.append(dl, el("h4", "Raw output"), el("pre", r.raw_output));
    d.append(el("h4", "Retrievals"));
    const rl = el("ol");
    (r.retrieved || []).forEach((x) => rl.append(el("li", (x.retriever ? x.retriever + ": " : "") + x.query + " → " + (x.ids || []).join(", "))));
    if (!rl.children.length) rl.append(el("li", "none"));
    d.append(rl);
    d.append(el("h4", "Trace"));
    const t = el("table", null, "tbl trace");
    const head = el("tr");
    ["round", "kind", "decision", "reason", "threshold", "items", "text / query", "ids"].forEach((h) => head.append(el("th", h)));
    t.append(el("thead"));
    t.tHead.append(head);
    const tb = el("tbody");
    (r.trace || []).forEach((ev) => {
      const tr = el("tr");
      const items = el("td");
      (ev.items || []).forEach((it, i) => {
        if (i > 0) items.append(", ");
        items.append(el("span", it.name + " = " + it.value + (it.note ? " (" + it.note + ")" : ""), it.flag ? "flag" : ""));
      });
      tr.append(el("td", ev.round), el("td", ev.kind), el("td", ev.decision || ""), el("td", ev.reason || ""),
        el("td", ev.threshold === undefined ? "" : ev.threshold), items,
        el("td", [ev.text, ev.query].filter(Boolean).join(" | ")), el("td", (ev.ids || []).join(", ")));
      tb.append(tr);
    });
    t.append(tb);
    d.append(t);
    for (const tr of $("rec-body").children) tr.className = tr.dataset.k === String(k) ? "sel" : "";
    d.scrollIntoView({ block: "nearest" });
  }

  async function init() {
    idx = await decode("rb-index");
    fill($("f-cell"), idx.cells);
    fill($("f-dataset"), idx.datasets);
    fill($("f-gen"), idx.gens);
    for (const id of ["f-cell", "f-dataset", "f-gen", "f-correct", "f-fired"]) $(id).addEventListener("change", applyFilters);
    $("f-id").addEventListener("input", applyFilters);
    $("prev").addEventListener("click", () => { page--; render(); });
    $("next").addEventListener("click", () => { page++; render(); });
    if (window.rbShortened) {
      const p = el("p", "The records are shortened in this page (level " + window.rbShortened + " of 3: traces, retrievals and raw outputs cut) to keep it small; each record names the file and line of its full version.", "note");
      p.id = "shortened";
      $("count").before(p);
    }
    await applyFilters();
    document.body.dataset.ready = "1";
  }

  init().catch((e) => {
    $("count").textContent = "could not load the records: " + e;
    console.error(e);
  });
})();
