// pipesql console: polls the JSON API (documented in the README) every second and draws
// the jobs list or one job's page. No framework, no build step.
"use strict";

const POLL_MS = 1000;
const HISTORY = 180; // chart points kept: three minutes at one a second
const $ = (id) => document.getElementById(id);

// Chart series per job id, kept while the page is open.
const series = {};

function fmtNum(n) {
  if (n === undefined || n === null) return "–";
  if (Math.abs(n) >= 1e6) return (n / 1e6).toFixed(2) + "M";
  if (Math.abs(n) >= 1e4) return (n / 1e3).toFixed(1) + "k";
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) < 10 ? n.toFixed(3).replace(/0+$/, "").replace(/\.$/, "") : n.toFixed(1);
}
function fmtInt(n) { return n === undefined || n === null ? "–" : String(n); }
function fmtDur(s) {
  if (s === undefined || s === null) return "–";
  if (s < 1) return (s * 1000).toFixed(0) + " ms";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}
function fmtBytes(b) {
  if (!b) return "0 B";
  const u = ["B", "KB", "MB", "GB"]; let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return b.toFixed(i ? 1 : 0) + " " + u[i];
}
function fmtTime(t) { return t ? new Date(t).toLocaleTimeString() : "–"; }
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const k of kids) e.append(k);
  return e;
}
function td(v, num) { return el("td", num ? { class: "num" } : {}, v); }

async function api(path, opts) {
  const r = await fetch(path, opts);
  let body = {};
  try { body = await r.json(); } catch (e) { /* not JSON */ }
  if (!r.ok) { const err = new Error(body.error || r.statusText); err.status = r.status; throw err; }
  return body;
}

// ---- routing ----
function route() {
  const m = location.hash.match(/^#\/job\/(.+)$/);
  return m ? { job: decodeURIComponent(m[1]) } : {};
}

let busy = false;
async function tick() {
  if (busy) return;
  busy = true;
  try {
    const r = route();
    if (r.job) await showJob(r.job); else await showJobs();
    $("conn").classList.remove("down");
    $("conn").textContent = "● live";
  } catch (e) {
    $("conn").classList.add("down");
    $("conn").textContent = "● " + e.message;
  } finally {
    busy = false;
  }
}

// ---- jobs list ----
async function showJobs() {
  const { jobs } = await api("/api/jobs");
  $("view-job").hidden = true;
  $("view-jobs").hidden = false;
  $("crumb").textContent = "";
  const tb = $("jobs-table").tBodies[0];
  tb.replaceChildren(...jobs.map((j) => el("tr", { "data-job": j.id },
    el("td", {}, el("a", { href: "#/job/" + encodeURIComponent(j.id) }, j.id)),
    td(j.name),
    el("td", {}, el("span", { class: "badge " + j.state, title: j.reason || "" }, j.state), j.reason ? " " + j.reason : ""),
    td(fmtDur(j.uptime_seconds), true), td(fmtInt(j.records), true), td(fmtNum(j.records_per_second), true),
    td(fmtInt(j.restarts), true), td(fmtInt(j.lag), true), td(fmtDur(j.watermark_delay_seconds), true))));
  $("jobs-empty").hidden = jobs.length > 0;
}

// ---- one job ----
async function showJob(id) {
  const d = await api("/api/jobs/" + encodeURIComponent(id));
  $("view-jobs").hidden = true;
  $("view-job").hidden = false;
  const j = d.job;
  $("crumb").textContent = "/ job " + j.id;
  $("job-name").textContent = j.name + " (" + j.id + ")";
  const badge = $("job-status");
  badge.textContent = j.state;
  badge.className = "badge " + j.state;
  $("job-reason").hidden = !j.reason;
  $("job-reason").textContent = j.reason || "";
  const running = ["RUNNING", "DEGRADED", "INITIALIZING", "RESTARTING"].includes(j.state);
  for (const b of [$("btn-savepoint"), $("btn-stop")]) {
    b.disabled = !running || !d.savepoints.checkpointing;
    b.title = d.savepoints.checkpointing ? "savepoint directory: " + (d.savepoints.dir || "(none set)") :
      "the job does not checkpoint (execution.checkpointing.interval)";
  }
  facts(d);
  charts(id, d);
  graph(d.graph);
  results(d.results || []);
  partitions(d.partitions);
  checkpoints(d.checkpoints);
  exceptions(d);
  $("sql").textContent = (d.sql || []).join(";\n\n") + ";";
  $("plan").textContent = d.plan;
}

function facts(d) {
  const j = d.job, s = d.status;
  const f = [
    ["uptime", fmtDur(j.uptime_seconds)], ["records", fmtInt(j.records)], ["records/s", fmtNum(j.records_per_second)],
    ["lag", fmtInt(j.lag)], ["watermark", d.watermark.text || "–"], ["watermark delay", fmtDur(d.watermark.delay_seconds)],
    ["restarts", fmtInt(j.restarts)], ["late records", fmtInt(s.late_records)], ["bad records", fmtInt(s.bad_records)],
  ];
  if (j.savepoint) f.push(["savepoint", j.savepoint]);
  $("job-facts").replaceChildren(...f.map(([k, v]) => el("span", { "data-fact": k }, k + ": ", el("b", {}, v))));
}

// ---- charts ----
function charts(id, d) {
  const s = series[id] || (series[id] = { throughput: [], lag: [], wmdelay: [], ckpt: [] });
  const t = Date.parse(d.at);
  const push = (arr, v) => {
    if (v === undefined || v === null) return;
    if (arr.length && arr[arr.length - 1][0] >= t) return;
    arr.push([t, v]);
    if (arr.length > HISTORY) arr.shift();
  };
  push(s.throughput, d.job.records_per_second);
  push(s.lag, d.job.lag);
  push(s.wmdelay, d.watermark.delay_seconds);
  // Checkpoint durations are events, not samples: one point per checkpoint.
  s.ckpt = d.checkpoints.history.filter((c) => !c.failure).map((c) => [Date.parse(c.ended), c.duration_seconds]);
  draw($("chart-throughput"), s.throughput, "#2563eb");
  draw($("chart-lag"), s.lag, "#b45309");
  draw($("chart-wmdelay"), s.wmdelay, "#7c3aed");
  draw($("chart-ckpt"), s.ckpt, "#15803d", true);
}

function draw(canvas, pts, color, dots) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 420, h = canvas.clientHeight || 150;
  if (canvas.width !== w * dpr) { canvas.width = w * dpr; canvas.height = h * dpr; }
  const c = canvas.getContext("2d");
  c.setTransform(dpr, 0, 0, dpr, 0, 0);
  c.clearRect(0, 0, w, h);
  canvas.dataset.points = pts.length;
  canvas.dataset.last = pts.length ? pts[pts.length - 1][1] : "";
  canvas.dataset.max = pts.length ? Math.max(...pts.map((p) => p[1])) : "";
  const L = 48, R = 8, T = 8, B = 18;
  c.strokeStyle = "#e5e7eb"; c.fillStyle = "#6b7280"; c.font = "10px system-ui"; c.lineWidth = 1;
  if (!pts.length) { c.fillText("no data yet", L, h / 2); return; }
  const t0 = pts[0][0], t1 = Math.max(pts[pts.length - 1][0], t0 + 1000);
  let max = Math.max(...pts.map((p) => p[1])), min = Math.min(0, ...pts.map((p) => p[1]));
  if (max === min) max = min + 1;
  const x = (t) => L + (w - L - R) * (t - t0) / (t1 - t0);
  const y = (v) => T + (h - T - B) * (1 - (v - min) / (max - min));
  for (let i = 0; i <= 4; i++) {
    const v = min + (max - min) * i / 4, yy = y(v);
    c.beginPath(); c.moveTo(L, yy); c.lineTo(w - R, yy); c.stroke();
    c.fillText(fmtNum(v), 2, yy + 3);
  }
  c.fillText(new Date(t0).toLocaleTimeString(), L, h - 4);
  const end = new Date(t1).toLocaleTimeString();
  c.fillText(end, w - R - c.measureText(end).width, h - 4);
  c.strokeStyle = color; c.fillStyle = color; c.lineWidth = 2;
  c.beginPath();
  pts.forEach((p, i) => (i ? c.lineTo(x(p[0]), y(p[1])) : c.moveTo(x(p[0]), y(p[1]))));
  c.stroke();
  if (dots || pts.length === 1) for (const p of pts) { c.beginPath(); c.arc(x(p[0]), y(p[1]), 3, 0, 7); c.fill(); }
}

// ---- operator graph: sources on the left, sinks on the right ----
const NW = 204, NH = 82, GX = 22, GY = 16;
function graph(nodes) {
  const svg = $("graph");
  const byId = Object.fromEntries(nodes.map((n) => [n.id, n]));
  const parents = {};
  for (const n of nodes) for (const c of n.children) parents[c] = n.id;
  const roots = nodes.filter((n) => !parents[n.id]);
  const depth = {}, row = {};
  let nextRow = 0, maxDepth = 0;
  const place = (n, dd) => {
    depth[n.id] = dd; maxDepth = Math.max(maxDepth, dd);
    if (!n.children.length) { row[n.id] = nextRow++; return; }
    n.children.forEach((c) => place(byId[c], dd + 1));
    row[n.id] = n.children.reduce((a, c) => a + row[c], 0) / n.children.length;
  };
  roots.forEach((r) => { place(r, 0); nextRow += 0.4; });
  const X = (n) => (maxDepth - depth[n.id]) * (NW + GX) + 8;
  const Y = (n) => row[n.id] * (NH + GY) + 8;
  svg.setAttribute("width", (maxDepth + 1) * (NW + GX) + 16);
  svg.setAttribute("height", Math.max(nextRow, 1) * (NH + GY) + 16);
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, text) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const kids = [mk("defs", {})];
  kids[0].append(mk("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" }));
  kids[0].firstChild.append(mk("path", { d: "M0,0 L10,5 L0,10 z", fill: "#94a3b8" }));
  for (const n of nodes) for (const cid of n.children) {
    const c = byId[cid];
    const x1 = X(c) + NW, y1 = Y(c) + NH / 2, x2 = X(n), y2 = Y(n) + NH / 2;
    kids.push(mk("path", { class: "edge", d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}` }));
  }
  for (const n of nodes) {
    const hasNums = n.records_in !== undefined;
    // Backpressure: the share of the recent time the task waited to send downstream,
    // shown on the task's first node (its scan, for a source task), as Flink's UI does.
    const bp = hasNums && n.backpressure !== undefined ? n.backpressure : undefined;
    const g = mk("g", { class: "node" + (hasNums ? " task" : "") + (n.degraded ? " degraded" : "") +
      (bp !== undefined ? " bp-" + n.backpressure_level : ""),
      transform: `translate(${X(n)},${Y(n)})`, "data-node": n.id, "data-kind": n.kind,
      "data-records-in": hasNums ? n.records_in : "", "data-records-out": hasNums ? n.records_out : "",
      "data-backpressure": bp !== undefined ? bp : "", "data-backpressure-level": bp !== undefined ? n.backpressure_level : "" });
    g.append(mk("title", {}, n.explain + (n.degraded ? "\ndegraded: " + n.degraded : "") +
      (bp !== undefined ? `\nbackpressured ${(bp * 100).toFixed(0)}% of the time (${n.backpressure_level}): its output waits for the next task` : "")));
    g.append(mk("rect", { width: NW, height: NH }));
    if (bp !== undefined) {
      g.append(mk("rect", { class: "bp-bar", x: 0, y: NH - 4, width: Math.max(NW * bp, 1), height: 4 }));
      const label = `backpressure ${(bp * 100).toFixed(0)}% ${n.backpressure_level}`;
      g.append(mk("text", { x: 8, y: 74, class: "bp small" }, label));
    }
    const head = n.kind + (n.task && !n.fused ? " · " + n.task : "");
    g.append(mk("text", { x: 8, y: 16, class: "kind" }, head.length > 28 ? head.slice(0, 27) + "…" : head));
    const ex = n.explain.length > 32 ? n.explain.slice(0, 31) + "…" : n.explain;
    g.append(mk("text", { x: 8, y: 32 }, ex));
    let line;
    if (hasNums) {
      line = `in ${fmtInt(n.records_in)} (${fmtNum(n.records_in_per_second)}/s)  out ${fmtInt(n.records_out)} (${fmtNum(n.records_out_per_second)}/s)`;
    } else if (n.fused) {
      line = "runs in task " + n.task;
    } else {
      line = n.kind === "Exchange" ? "moves nothing in one process" : "";
    }
    g.append(mk("text", { x: 8, y: 47, class: "rate small" }, line));
    if (n.watermark) g.append(mk("text", { x: 8, y: 61, class: "small" }, "watermark " + n.watermark));
    kids.push(g);
  }
  svg.replaceChildren(...kids);
}

// The latest rows of each readable sink, newest first, with their change kinds.
function results(rs) {
  $("results-wrap").hidden = rs.length === 0;
  $("results").replaceChildren(...rs.map((r) => {
    const title = r.table ? "sink " + r.table + (r.connector ? " (" + r.connector + ")" : "") : "SELECT results";
    const note = r.rows.length ? `latest ${r.rows.length} of ${r.rows_written} rows written since the page opened` :
      "no rows written since the page opened";
    return el("div", { class: "results", "data-node": r.node, "data-table": r.table || "" },
      el("h3", {}, title + " ", el("span", { class: "muted" }, note)),
      el("table", { class: "grid results-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "kind"), ...r.columns.map((c) => el("th", {}, c)))),
        el("tbody", {}, ...r.rows.slice().reverse().map((row) => el("tr", { "data-kind": row.kind },
          el("td", { class: "kind k" + row.kind.replace("+", "p").replace("-", "m") }, row.kind),
          ...row.values.map((v) => el("td", {}, v)))))));
  }));
}

function partitions(ps) {
  $("lag-table").tBodies[0].replaceChildren(...ps.map((p) => el("tr", { "data-split": p.split },
    td(p.table), td(p.split), td(fmtInt(p.records), true), td(fmtNum(p.records_per_second), true),
    el("td", { class: "num", "data-col": "offset" }, fmtInt(p.offset)),
    el("td", { class: "num", "data-col": "end_offset" }, fmtInt(p.end_offset)),
    el("td", { class: "num", "data-col": "lag" }, fmtInt(p.lag)),
    td(p.watermark || "–"), td(p.idle ? "idle" : ""))));
}

function checkpoints(c) {
  $("ckpt-summary").textContent = `${c.completed} completed, ${c.failed} failed, longest pause ${fmtDur(c.max_pause_seconds)}`;
  $("ckpt-table").tBodies[0].replaceChildren(...c.history.slice().reverse().map((k) => el("tr", { "data-checkpoint": k.id },
    td(fmtInt(k.id), true), td(fmtTime(k.triggered)), td(fmtDur(k.duration_seconds), true), td(fmtBytes(k.size_bytes), true),
    td(fmtDur(k.pause_seconds), true), td(k.failure ? "failed: " + k.failure : k.savepoint ? "savepoint " + k.savepoint : "completed"))));
}

function exceptions(d) {
  $("restarts").textContent = `${d.job.restarts} restarts`;
  $("exc-table").tBodies[0].replaceChildren(...d.exceptions.slice().reverse().map((e) =>
    el("tr", {}, td(fmtTime(e.at)), td(e.restart ? "restart " + e.restart : "ended the job"), td(e.error))));
}

// ---- actions, each after a confirmation ----
function confirmDialog(text) {
  return new Promise((resolve) => {
    $("confirm-text").textContent = text;
    $("confirm").hidden = false;
    const done = (v) => { $("confirm").hidden = true; $("confirm-ok").onclick = $("confirm-cancel").onclick = null; resolve(v); };
    $("confirm-ok").onclick = () => done(true);
    $("confirm-cancel").onclick = () => done(false);
  });
}

async function act(what, path, text) {
  const id = route().job;
  if (!id || !(await confirmDialog(text))) return;
  const out = $("action-result");
  out.hidden = false; out.className = "result"; out.textContent = what + "…";
  try {
    let token = sessionStorage.getItem("pipesql-token") || "";
    let r;
    for (;;) {
      try {
        r = await api("/api/jobs/" + encodeURIComponent(id) + "/" + path, { method: "POST", headers: { "X-Pipesql-Token": token } });
        break;
      } catch (e) {
        if (e.status !== 401) throw e;
        token = prompt("This console is served to other hosts: its actions need the token pipesql printed when it started.");
        if (!token) throw e;
        sessionStorage.setItem("pipesql-token", token);
      }
    }
    out.textContent = what + " done: savepoint written to " + r.savepoint;
    out.dataset.savepoint = r.savepoint;
  } catch (e) {
    out.className = "result error";
    out.textContent = what + " failed: " + e.message;
  }
  tick();
}

$("btn-savepoint").onclick = () => act("Savepoint", "savepoint",
  "Take a savepoint of this job now? It keeps running.");
$("btn-stop").onclick = () => act("Stop with savepoint", "stop-with-savepoint",
  "Stop this job after a final savepoint? Its sources stop, what is in flight drains and the sinks flush.");

window.addEventListener("hashchange", () => { $("action-result").hidden = true; tick(); });
tick();
setInterval(tick, POLL_MS);
