// lyra studio: one page per tab; the Teach page follows the studio's event log.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "onclick") node.addEventListener("click", value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function token() {
  const found = document.cookie.split(";").map((c) => c.trim().split("=")).find(([k]) => k === "lyra_token");
  return found ? found[1] : null;
}

async function api(path, body) {
  const headers = {};
  if (token()) headers["X-Lyra-Token"] = token();
  const init = { headers };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const message = data.error || data;
    problem(message);
    throw new Error(message);
  }
  problem("");
  return data;
}

function problem(text) {
  $("problem").textContent = text;
  $("problem").hidden = !text;
}

// -- pages ------------------------------------------------------------------------------

const loaders = { teach: loadTeach, library: loadLibrary, memory: () => {}, sessions: loadSessions, results: loadResults };

function show() {
  const page = (location.hash || "#teach").slice(1);
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${page}`;
  for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", link.dataset.page === page);
  (loaders[page] || loadTeach)();
}
window.addEventListener("hashchange", show);

// -- Teach ------------------------------------------------------------------------------

let curricula = [];

async function loadTeach() {
  if (curricula.length) return;
  curricula = await api("/api/curricula");
  const select = $("curriculum");
  select.replaceChildren(...curricula.filter((c) => !c.error).map((c) => el("option", { value: c.path, text: `${c.name} (${c.path})` })));
  select.onchange = fillTasks;
  fillTasks();
}

function fillTasks() {
  const chosen = curricula.find((c) => c.path === $("curriculum").value);
  if (!chosen) return;
  $("task").replaceChildren(...chosen.tasks.map((t) => el("option", { value: t.id, text: `${t.accepted ? "✓ " : ""}${t.id}${t.id === chosen.next ? " (next)" : ""}` })));
  if (chosen.next) $("task").value = chosen.next;
  $("task").onchange = showTask;
  showTask();
}

function showTask() {
  const chosen = curricula.find((c) => c.path === $("curriculum").value);
  const task = chosen.tasks.find((t) => t.id === $("task").value);
  $("task-instruction").textContent = task ? `${task.instruction}${task.skill ? ` (skill ${task.skill})` : " (a plan)"}` : "";
  const query = new URLSearchParams({ curriculum: chosen.path, task: $("task").value });
  $("scene").src = `/api/scene?${query}`;
}

$("start").addEventListener("click", async () => {
  const typed = $("typed").open;
  const body = typed
    ? {
        instruction: $("typed-instruction").value, backend: $("typed-backend").value,
        skill: $("typed-skill").value || null, scene: $("typed-scene").value,
        success: $("typed-success").value, seeds: $("typed-seeds").value.split(",").map(Number),
      }
    : { curriculum: $("curriculum").value, task: $("task").value };
  $("start").disabled = true;
  try { await api("/api/teach", body); } catch (e) { $("start").disabled = false; }
});

$("replay").addEventListener("click", () => {
  const clip = $("clip");
  const src = clip.src.split("?")[0];
  clip.src = `${src}?t=${Date.now()}`;
});

const handlers = {
  run(e) {
    for (const id of ["attempt", "regression", "outcome", "question", "clip-box"]) $(id).hidden = true;
    $("regression-list").replaceChildren();
    $("log").textContent = "";
    $("run-status").textContent = `teaching ${e.task} (${e.curriculum}, ${e.backend}) on seeds ${e.seeds.join(", ")}`;
    $("start").disabled = true;
  },
  frame(e) {
    $("live").src = e.image;
    $("live").dataset.frames = e.n;
    $("live-caption").textContent = `round ${e.round}: frame ${e.n}, live`;
  },
  say(e) { $("log").textContent += e.text + "\n"; },
  tell(e) { $("log").textContent += "» " + e.text + "\n"; },
  question(e) { ask(e); },
  answered(e) {
    $("question").hidden = true;
    $("log").textContent += `you: ${e.action}${e.text ? ": " + e.text : ""}\n`;
  },
  recheck(e) {
    $("regression").hidden = false;
    $("regression-count").textContent = `${e.done + (e.status === "running" ? 0 : 1)} of ${e.total}`;
    $("regression-progress").max = e.total;
    $("regression-progress").value = e.done + (e.status === "running" ? 0 : 1);
    const id = `recheck-${e.example}`;
    const row = $(id) || $("regression-list").appendChild(el("li", { id }));
    row.className = e.status;
    row.replaceChildren(el("b", { text: `${e.status}` }), ` ${e.task || e.example}: ${e.instruction}`);
    if (e.why) row.append(el("div", { text: e.why }));
    if (e.clip) row.append(el("img", { src: e.clip, alt: `clip of ${e.example}` }));
  },
  outcome(e) {
    const box = $("outcome");
    box.hidden = false;
    box.className = e.accepted ? "accepted" : "not-kept";
    box.textContent = `${e.task}: ${e.accepted ? "accepted" : "not kept"} after ${e.rounds} round(s); ` +
      `${e.llm_calls} LLM calls, ${e.prompt_tokens + e.completion_tokens} tokens, ` +
      `${e.regression_checks} re-check(s)${e.example ? `; example ${e.example}` : ""}. Session log: ${e.session_log}` +
      (e.replay ? `. ${e.replay}` : "");
    $("run-status").textContent = "";
    $("start").disabled = false;
    curricula = [];
  },
  error(e) {
    problem(e.text);
    $("start").disabled = false;
  },
};

function ask(e) {
  const box = $("question");
  box.hidden = false;
  box.dataset.question = e.seq;
  const send = (action, text, fields) => api("/api/answer", { question: e.seq, action, text, fields });
  if (e.question === "verdict") {
    showAttempt(e);
    const text = el("textarea", { id: "verdict-text", rows: 3, placeholder: "your correction or hint" });
    const say = (action) => () => send(action, text.value);
    box.replaceChildren(
      el("b", { text: `Round ${e.round}: what should happen next?` }), text,
      el("button", { id: "accept", onclick: say("accept") }, "Accept"),
      el("button", { id: "feedback", class: "secondary", onclick: say("feedback") }, "Give feedback"),
      el("button", { id: "hint", class: "secondary", onclick: say("hint") }, "Hint"),
      el("button", { id: "reject", class: "secondary", onclick: say("reject") }, "Reject"),
    );
  } else if (e.question === "header") {
    const text = el("textarea", { id: "header-text", rows: 8 });
    text.value = e.header;
    box.replaceChildren(el("b", { text: `The skill's header for ${e.task}: keep or edit it` }), text,
      el("button", { id: "header-ok", onclick: () => send("header", text.value) }, "Use this header"));
  } else if (e.question === "missing") {
    const name = el("input", { id: "missing-name", placeholder: "skill name" });
    const instruction = el("input", { id: "missing-instruction", placeholder: "the task that teaches it" });
    box.replaceChildren(el("b", { text: `The plan needs a skill the library lacks: ${e.proposal}` }), name, instruction,
      el("button", { onclick: () => send("teach", "", { name: name.value, instruction: instruction.value, success: [] }) }, "Teach it"),
      el("button", { class: "secondary", onclick: () => send("decline", "") }, "Decline"));
  }
}

function showAttempt(e) {
  $("attempt").hidden = false;
  $("round").textContent = e.round;
  $("attempt-ok").textContent = e.ok ? "every seed passed" : "not every seed passed";
  $("attempt-ok").className = e.ok ? "passed" : "broken";
  $("seeds").replaceChildren(...e.seeds.map((s) => el("li", { class: s.ok ? "passed" : "broken", text: s.text })));
  $("diff").replaceChildren(...(e.diff || "(no skill edit: a plan)\n").split("\n").map((line) =>
    el("span", { class: line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "", text: line + "\n" })));
  $("code").textContent = e.code;
  if (e.clip) {
    $("clip-box").hidden = false;
    $("clip").src = `${e.clip}?t=${e.seq}`;
  }
}

function follow() {
  let last = 0;
  const connect = () => {
    const source = new EventSource(`/api/events?after=${last}`);
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      last = event.seq;
      (handlers[event.kind] || (() => {}))(event);
    };
    source.onerror = () => { source.close(); setTimeout(connect, 1000); };
  };
  connect();
}

// -- Library ----------------------------------------------------------------------------

let selectedSkill = null;

async function loadLibrary() {
  const data = await api("/api/library");
  $("tree").innerHTML = data.svg;
  for (const group of $("tree").querySelectorAll("g")) {
    const name = group.querySelector("text").textContent;
    group.dataset.skill = name;
    group.addEventListener("click", () => showSkill(name));
  }
  $("skills").replaceChildren(...data.skills.map((s) => el("li", { "data-skill": s.name, title: s.summary, onclick: () => showSkill(s.name) }, s.name)));
  if (selectedSkill) showSkill(selectedSkill);
}

async function showSkill(name) {
  selectedSkill = name;
  const s = await api(`/api/skills/${encodeURIComponent(name)}`);
  for (const item of document.querySelectorAll("#skills li")) item.classList.toggle("active", item.dataset.skill === name);
  const reach = new Set([...s.callees]);
  for (const group of $("tree").querySelectorAll("g")) {
    group.classList.toggle("selected", group.dataset.skill === name);
    group.classList.toggle("reached", reach.has(group.dataset.skill));
  }
  $("skill").hidden = false;
  $("skill-name").textContent = s.name;
  $("skill-doc").textContent = `${s.signature}\n\n${s.docstring}`;
  $("skill-callees").textContent = s.callees.join(", ") || "no skills";
  $("skill-callers").textContent = s.callers.join(", ") || "no skills";
  $("skill-validating").replaceChildren(...s.validating.map((v) => el("li", { text: `${v.task || v.id}: ${v.instruction}` })));
  $("skill-source").textContent = s.source;
  $("source-label").textContent = s.current ? `(version ${s.current}, in the library now)` : "(in the library now)";
  const rows = [...s.versions].reverse().map((v) => {
    const row = el("tr", { class: v.version === s.current ? "current" : "", "data-version": v.version },
      el("td", { text: `v${v.version}` }), el("td", { text: v.time }), el("td", { text: v.change }),
      el("td", { text: v.task || "" }), el("td", { text: v.feedback || "" }));
    const actions = el("td", {},
      el("button", { class: "small secondary", onclick: () => viewVersion(name, v.version) }, "view"));
    if (v.version !== s.current) {
      actions.append(el("button", { class: "small", id: `revert-${v.version}`, onclick: () => revertTo(name, v.version) }, "revert to this"));
    }
    row.append(actions);
    return row;
  });
  $("skill-history").querySelector("tbody").replaceChildren(...rows);
}

async function viewVersion(name, version) {
  $("skill-source").textContent = await api(`/api/skills/${encodeURIComponent(name)}/versions/${version}`);
  $("source-label").textContent = `(version ${version})`;
}

async function revertTo(name, version) {
  const done = await api(`/api/skills/${encodeURIComponent(name)}/revert`, { to: version });
  $("revert-result").textContent = `${done.summary} (recorded as version ${done.version}${done.commit ? `, commit ${done.commit.slice(0, 8)}` : ""})`;
  await showSkill(name);
}

// -- Memory -----------------------------------------------------------------------------

$("memory-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = new URLSearchParams({ q: $("memory-query").value });
  for (const hint of $("memory-hint").value.split(",")) if (hint.trim()) query.append("hint", hint.trim());
  if ($("memory-correction").value) query.set("correction", $("memory-correction").value);
  if ($("memory-backend").value) query.set("backend", $("memory-backend").value);
  const r = await api(`/api/memory?${query}`);
  const found = (m) => m.map((x) => `${x.query}/${x.method} #${x.rank} (${x.score.toFixed(3)})`).join(", ");
  const examples = el("table", {}, el("tr", {}, ...["#", "example", "score", "found by", "instruction", "provenance"].map((h) => el("th", { text: h }))),
    ...r.examples.map((x, i) => el("tr", {}, el("td", { text: i + 1 }), el("td", { text: x.id }), el("td", { text: x.score.toFixed(4) }),
      el("td", { text: found(x.found_by) }),
      el("td", {}, x.instruction, el("details", {}, el("summary", { text: "plan and snapshot" }), el("pre", { text: x.code }), el("pre", { text: JSON.stringify(x.snapshot, null, 1) }))),
      el("td", { text: `${x.task || "by hand"}, ${x.backend}, seed ${x.seed}${x.notes ? `; notes: ${x.notes}` : ""}` }))));
  const skills = el("table", {}, el("tr", {}, ...["#", "skill", "score", "why", "found by"].map((h) => el("th", { text: h }))),
    ...r.skills.map((x, i) => el("tr", {}, el("td", { text: i + 1 }),
      el("td", {}, x.name, x.by_hint_only ? el("span", { class: "badge", text: "hint adds" }) : ""),
      el("td", { text: x.score.toFixed(4) }), el("td", { text: x.via.join(", ") }), el("td", { text: found(x.found_by) }))));
  $("memory-results").replaceChildren(
    el("p", { class: "muted", text: r.queries.map((q) => `${q.label}: ${q.text}`).join(" · ") }),
    el("h3", { text: `Examples (${r.examples.length})` }), examples,
    el("h3", { text: `Skills (${r.skills.length})` }), skills);
});

// -- Sessions ---------------------------------------------------------------------------

async function loadSessions() {
  const logs = await api("/api/sessions");
  $("sessions").replaceChildren(...logs.map((s) => el("li", { "data-path": s.path, onclick: () => showSession(s.path) }, s.path)));
}

async function showSession(path) {
  for (const item of document.querySelectorAll("#sessions li")) item.classList.toggle("active", item.dataset.path === path);
  const s = await api(`/api/sessions/${path.split("/").map(encodeURIComponent).join("/")}`);
  const usage = el("table", {}, el("tr", {}, ...["purpose", "calls", "prompt tokens", "completion tokens", "seconds"].map((h) => el("th", { text: h }))),
    ...Object.entries(s.usage).map(([purpose, u]) => el("tr", {}, el("td", { text: purpose }), el("td", { text: u.calls }),
      el("td", { text: u.prompt_tokens }), el("td", { text: u.completion_tokens }), el("td", { text: u.latency_s.toFixed(1) }))));
  const tasks = el("table", { id: "session-tasks" }, el("tr", {}, ...["task", "rounds", "LLM calls"].map((h) => el("th", { text: h }))),
    ...s.tasks.map((t) => el("tr", {}, el("td", { text: t.task || "?" }), el("td", { text: t.rounds }), el("td", { text: t.calls }))));
  const calls = el("table", { id: "session-calls" }, el("tr", {}, ...["#", "purpose", "task", "tokens in/out", "prompt and answer"].map((h) => el("th", { text: h }))),
    ...s.calls.map((c) => el("tr", {}, el("td", { text: c.index }), el("td", { text: c.purpose }), el("td", { text: c.task || "" }),
      el("td", { text: `${c.prompt_tokens} / ${c.completion_tokens}` }),
      el("td", {}, el("details", {}, el("summary", { text: "show" }), el("pre", { text: c.prompt }), el("pre", { text: c.answer }))))));
  $("session").replaceChildren(el("h2", { text: s.path }), el("h3", { text: "Usage by purpose" }), usage,
    el("h3", { text: "Correction rounds by task" }), tasks, el("h3", { text: "Calls" }), calls);
}

// -- Results ----------------------------------------------------------------------------

async function loadResults() {
  const found = await api("/api/results");
  $("results").replaceChildren(...found.map((r) => {
    const section = el("section", { class: "result" }, el("h2", { text: r.path }));
    for (const block of r.blocks) {
      if (block.kind === "heading") section.append(el(`h${Math.min(block.level + 2, 6)}`, { text: block.text }));
      else if (block.kind === "text") section.append(el("p", { text: block.text }));
      else section.append(el("table", {}, el("tr", {}, ...block.head.map((h) => el("th", { text: h }))),
        ...block.rows.map((row) => el("tr", {}, ...row.map((c) => el("td", { text: c }))))));
    }
    if (r.plots.length) section.append(el("div", { class: "plots" }, ...r.plots.map((p) => el("img", { src: p, alt: p }))));
    return section;
  }));
}

// -- start ------------------------------------------------------------------------------

api("/api/state").then((s) => {
  $("workspace").textContent = `${s.workspace}${s.llm ? ` · ${s.llm}` : ""}`;
  $("memory-backend").append(...s.backends.map((b) => el("option", { value: b, text: `as planning on ${b}` })));
});
follow();
show();
