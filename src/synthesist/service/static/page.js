"use strict";
// The research page: ask, follow a run's events, show the answer, report, evidence table, plots and evidence.
// Every call goes through /api. The page keeps no domain rule of its own: what a reader is shown for an item (its
// display_title, link and design), the evidence table's rows and each reference's link are fields the API computed
// in Python (service/views.py), the same ones report.md uses; this script only renders them.
const $ = (id) => document.getElementById(id);
const esc = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const MARKER = /\[((?:pmid|doi|nct|ppr|pmcid|url|img):[^\[\]]+)\]/gi;
const counted = (count, noun) => `${count} ${noun}${count === 1 ? "" : "s"}`;  // "1 item", "3 items": wording.py
const rowId = (id) => "ev-" + id.replace(/[^A-Za-z0-9_-]/g, "_");
const headers = () => { const t = $("token").value.trim(); return t ? {"Authorization": "Bearer " + t} : {}; };
const SOURCE_NAMES = {pubmed: "PubMed", trials: "ClinicalTrials.gov", europepmc: "Europe PMC", preprints: "Preprints", web: "Web", library: "Library"};
const state = {scores: [], failures: new Map(), timeline: new Map(), evidence: 0, items: [], service: {library: false, default_sources: []},
  run: null, finished: false, sourcesTouched: false, answered: null};  // answered: the service's answer, awaited before a run's sources are read

// ---- the service: what it offers, in the page's words ----------------------------------------------------------
async function service() {
  const response = await fetch("/api/health", {headers: headers()});
  if (!response.ok) { $("status").textContent = response.status === 401 ? "This service needs an access token." : ""; return; }
  state.service = await response.json();
  const library = document.querySelector('#sources input[value="library"]');
  library.disabled = !state.service.library;
  library.parentElement.classList.toggle("off", !state.service.library);
  library.parentElement.title = state.service.library ? "The library this service was started with (no network needed)"
    : "This service was started without a library";
  if (!state.sourcesTouched)  // a box the reader ticked before the service answered stays as they left it
    for (const box of document.querySelectorAll("#sources input")) box.checked = state.service.default_sources.includes(box.value);
  if (!state.service.library) reachability();
}
async function reachability() {
  const ticked = selectedSources().filter((name) => name !== "library");
  if (!ticked.length) return;
  const response = await fetch(`/api/sources/check?names=${ticked.join(",")}`, {headers: headers()});
  if (!response.ok) return;
  const down = (await response.json()).filter((check) => !check.ok);
  if (down.length) $("notice").textContent = `${down.map((c) => SOURCE_NAMES[c.name] || c.name).join(" and ")} cannot be reached from this service just now` +
    " (no network?); a run will report them as failed. This service has no library to search offline.";
}
function pageWords(text) {  // the run's advice is written for the command line: say it the page's way
  const library = state.service.library ? "tick Library to search this service's library" : "this service has no library to search offline";
  return String(text || "").replace(/research your own library with --sources library --library PATH/g, library)
    .replace(/\(synthesist serve --library PATH\)/g, "(it has to be started with a library)");
}
const selectedSources = () => [...document.querySelectorAll("#sources input:checked")].map((box) => box.value);
async function chosenSources() {  // a click before the service answered waits for its default ticks, never "Tick at least one source"
  await state.answered;
  return selectedSources();
}

// ---- report text -------------------------------------------------------------------------------------------------
function cite(text) {
  return esc(text).replace(MARKER, (_, ids) => "[" + ids.split(/\s*[;,]\s*/).map((id) =>
    `<a class="cite" href="#${rowId(id.trim())}" data-id="${esc(id.trim())}">${esc(id.trim())}</a>`).join("; ") + "]");
}
function paragraphs(text) {
  const lines = String(text || "").split("\n"); let html = ""; let list = false;
  for (const line of lines) {
    if (/^\s*[-*] /.test(line)) { if (!list) { html += "<ul>"; list = true; } html += "<li>" + cite(line.replace(/^\s*[-*] /, "")) + "</li>"; }
    else { if (list) { html += "</ul>"; list = false; } if (line.trim()) html += "<p>" + cite(line) + "</p>"; }
  }
  return html + (list ? "</ul>" : "");
}

// ---- the run as it goes ------------------------------------------------------------------------------------------
function log(event) {  // one line per distinct message: a failure repeated every query reads once, with a count
  const key = `${event.type}|${event.message}`;
  const seen = state.timeline.get(key);
  if (seen) { seen.count += 1; seen.li.textContent = `[${event.round}] ${event.type}: ${pageWords(event.message)} (×${seen.count})`; return; }
  const li = document.createElement("li");
  li.textContent = `[${event.round}] ${event.type}: ${pageWords(event.message)}`;
  if (event.type === "error") li.className = "error";
  state.timeline.set(key, {li, count: 1});
  $("timeline").appendChild(li); $("timeline").scrollTop = $("timeline").scrollHeight;  // the list scrolls, not the page
}
const STAGES = {started: "started", searching: "searching", search_complete: "searched", judging: "judging the evidence",
  judge_complete: "judged", hypothesizing: "forming hypotheses", looping: "next round", synthesizing: "writing the report",
  claims_checked: "checking the report's claims", streaming: "writing the report", analyzing: "reading the image",
  analysis_complete: "read the image", error: "a problem", thinking: "thinking", complete: "done"};
function stage(event) {
  const data = event.data || {};
  if (event.type !== "progress") return STAGES[event.type] || event.type;
  if (data.stage && data.stage !== "rounds") return data.stage + (data.total ? ` (${data.done ?? 0} of ${data.total})` : "");
  return `${Math.round(100 * (data.fraction || 0))}% of the rounds done`;
}
function status(event) {
  const data = event.data || {};
  if (typeof data.total === "number" && event.type === "search_complete") state.evidence = data.total;
  if (typeof data.evidence === "number") state.evidence = data.evidence;
  if (event.type === "complete") return;
  const failed = state.failures.size ? ` · ${counted(state.failures.size, "source")} failed` : "";
  const round = event.round ? `Round ${event.round} · ` : "";  // before the first round: the preparation's own words
  $("status").textContent = `${round}${stage(event)} · ${counted(state.evidence, "item")} so far${failed}`;
}
function failure(event) {  // each failing source once, in words, however many queries it failed
  const data = event.data || {};
  if (data.kind !== "source" || !data.source) return;
  const kind = data.failure ? data.failure.kind : "failed";
  const entry = state.failures.get(data.source) || {kind, count: 0};
  entry.count += 1; state.failures.set(data.source, entry);
  $("notice").textContent = "Could not search: " + [...state.failures].map(([name, f]) =>
    `${SOURCE_NAMES[name] || name} (${f.kind}${f.count > 1 ? `, ${f.count} queries` : ""})`).join(", ") + ".";
}
function chart() {
  const svg = $("chart"); const w = 28;
  svg.innerHTML = state.scores.map((s, i) => `<rect x="${i * 2 * w + 4}" y="${80 - s.m * 7}" width="${w - 4}" height="${s.m * 7}" fill="#1f5fbf"><title>round ${s.r} mechanism ${s.m}</title></rect>` +
    `<rect x="${i * 2 * w + w}" y="${80 - s.c * 7}" width="${w - 4}" height="${s.c * 7}" fill="#2e8b57"><title>round ${s.r} clinical ${s.c}</title></rect>` +
    `<text x="${i * 2 * w + 4}" y="89" font-size="9">r${s.r}</text>`).join("");
}
// models.Hypothesis.sentence: "Fenofibrate may act on PPARα through DNM3os signalling, with increased expression."
function hypothesisSentence(h) {
  const through = h.pathway && h.pathway !== "pathway not stated" ? ` through ${h.pathway}` : "";
  const head = `${h.intervention.trim()} may act on ${h.target.trim()}${through}, with ${h.effect.trim()}`.replace(/\.+$/, "");
  return head.charAt(0).toUpperCase() + head.slice(1) + ".";
}
function hypotheses(assessment) {
  const items = assessment.hypotheses || [];
  $("hypotheses").innerHTML = items.length ? items.map((h) => `<li>${esc(hypothesisSentence(h))}</li>`).join("")
    : (assessment.knowledge_gaps || []).slice(0, 2).map((g) => `<li>${esc(g)}</li>`).join("") || "<li>none</li>";
}
let evidenceTimer = null;
function refreshEvidence(runId) {  // the checkpoint after each round holds the evidence so far
  clearTimeout(evidenceTimer);
  evidenceTimer = setTimeout(async () => {
    const response = await fetch(`/api/runs/${runId}/evidence`, {headers: headers()});
    if (!response.ok) return;
    const full = await response.json();  // the whole items replace their briefs; briefs of a later search stay
    if (state.run !== runId || state.finished) return;
    const ids = new Set(full.map((e) => e.id));
    evidenceTable([...full, ...state.items.filter((e) => !ids.has(e.id))]);
  }, 300);
}
function reset(question) {
  state.scores.length = 0; state.failures.clear(); state.timeline.clear(); state.evidence = 0; state.finished = false;
  chart(); $("hypotheses").innerHTML = "<li>none yet</li>"; $("timeline").innerHTML = ""; $("notice").textContent = "";
  for (const id of ["answer-box", "studies-box", "conflicts-box", "certainty-box", "references-box"]) $(id).hidden = true;
  $("forest").hidden = true; delete $("forest").dataset.shown; $("downloads").innerHTML = ""; evidenceTable([]);
  $("report").className = "muted"; $("report").textContent = "The report appears here when the run ends.";
  if (question !== undefined) $("question").value = question;
}
async function follow(runId) {
  state.run = runId;
  const response = await fetch(`/api/runs/${runId}/events`, {headers: headers()});
  if (!response.ok) { $("status").textContent = `Cannot follow this run (${response.status}).`; return; }
  const reader = response.body.getReader(); const decoder = new TextDecoder(); let buffer = "";
  for (;;) {
    const {value, done} = await reader.read(); if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (!data || state.run !== runId) continue;
      const event = JSON.parse(data);
      if (!event.type) { if (event.detail) $("status").textContent = `The run ended without a result: ${event.detail}`; continue; }
      on(event, runId);
    }
  }
  pastRuns();
}
function on(event, runId) {
  log(event); status(event);
  if (event.type === "error") failure(event);
  if (event.type === "started" && event.data) $("question").value = event.data.question;
  if (event.type === "judge_complete") { state.scores.push({r: event.round, m: event.data.mechanism.score, c: event.data.clinical.score}); chart(); }
  if (event.type === "hypothesizing" && event.data && event.data.hypotheses) hypotheses(event.data);
  if (event.type === "search_complete" && event.data.items) addEvidence(event.data.items);
  if (["progress", "looping", "synthesizing"].includes(event.type)) refreshEvidence(runId);  // abstracts, merges
  if (event.type === "complete") { state.finished = true; finish(event.data, runId); }
}

// ---- the evidence: every item, its id a link out, design, year, abstract -----------------------------------------
// e.link (identity.link_out), e.design (titles.design_label), e.display_title and e.alignment_line
// (render/report.alignment_line) come from the API
function aligned(e) {
  if (!e.alignment_line) return "";
  return ` <span class="${e.alignment.label === "answers" ? "flag" : "muted"}" title="${esc(e.alignment.reason)}">${esc(e.alignment_line)}</span>`;
}
function evidenceRow(e) {
  const link = e.link; const title = e.display_title;
  const idCell = link ? `<a href="${esc(link)}" target="_blank" rel="noopener" title="open ${esc(e.id)} at its source">${esc(e.id)}</a>` : esc(e.id);
  const journal = [e.journal, (e.authors || []).slice(0, 3).join(", ") + ((e.authors || []).length > 3 ? " et al." : "")].filter(Boolean).join(" · ");
  const abstract = e.content ? `<details class="abstract"><summary>abstract${e.full_text ? " (full text read)" : ""}</summary><p>${esc(e.content)}</p></details>` : "";
  return `<tr id="${rowId(e.id)}"><td>${idCell}</td><td>${esc([...new Set([e.source, ...(e.links || []).map((l) => l.source)])].join(", "))}</td><td>${esc(e.year ?? "")}</td>` +
    `<td>${esc(e.design)}${e.is_preprint ? ' <span class="flag">preprint</span>' : ""}${(e.versions || []).length ? ` <span class="muted">${counted(e.versions.length, "version")} merged</span>` : ""}</td>` +
    `<td><span class="${e.titled ? "" : "untitled"}">${esc(title)}</span>${aligned(e)}${journal ? `<br><span class="muted">${esc(journal)}</span>` : ""}${abstract}</td></tr>`;
}
function addEvidence(briefs) {  // the new items of a search, listed at once; the checkpoint adds their abstracts
  const shown = new Map(state.items.map((e) => [e.id, e]));
  for (const brief of briefs) if (!shown.has(brief.id)) shown.set(brief.id, brief);
  evidenceTable([...shown.values()]);
}
function evidenceTable(items) {
  state.items = items;
  $("evidence").querySelector("tbody").innerHTML = items.map(evidenceRow).join("");
  $("evidence-count").textContent = items.length ? `(${items.length})` : "";
}

// ---- the evidence table of the cited studies, the forest plot, the conflicts ------------------------------------
let studyRows = [];
function studyTable(rows) {  // the result's evidence_table: report.md's rows, in its order, each cell's text as it shows it
  studyRows = [...rows];
  $("studies-box").hidden = studyRows.length === 0;
  renderStudies();
}
function renderStudies() {
  $("studies").querySelector("tbody").innerHTML = studyRows.map((r) => `<tr title="${esc(r.quote ? `${r.quote} [${r.section}]` : "")}"><td>${r.link ? `<a href="${esc(r.link)}" target="_blank" rel="noopener">${esc(r.study)}</a>` : esc(r.study)}</td>` +
    `<td>${esc(r.design)}</td><td>${esc(r.n)}</td><td>${esc(r.comparison)}</td><td>${esc(r.outcome)}</td><td>${esc(r.effect)}</td><td>${esc(r.direction)}</td></tr>`).join("");
}
function appraisal(report) {  // report.conflicts and report.certainty: found and graded in Python, shown here
  const side = (x) => `<li><a class="cite" href="#${rowId(x.evidence_id)}" data-id="${esc(x.evidence_id)}">${esc(x.evidence_id)}</a> ` +
    `(${esc(x.direction.replace("_", " "))}, ${esc(x.design)}): “${esc(x.quote)}”</li>`;
  const found = report.conflicts || [];
  $("conflicts").innerHTML = found.map((c) => `<li><strong>${esc(c.exposure)} and ${esc(c.outcome)}</strong> <span class="muted">` +
    `${c.kind === "opposite" ? "opposite significant findings" : "a significant finding against a null"}</span>` +
    `<ul>${side(c.first)}${side(c.second)}</ul><span class="muted">Likely reasons: ${esc((c.reasons || []).join("; ") || "none found in the study records")}</span></li>`).join("");
  $("conflicts-box").hidden = found.length === 0;
  const graded = report.certainty || [];
  const pooled = report.pooled;
  $("certainty").innerHTML = graded.map((g) => `<p><strong>${esc(g.outcome)}</strong>${g.answers_question ? " (the question's outcome)" : ""}: ` +
    `<strong>${esc(g.certainty.replace("_", " "))}</strong></p><ul>` +
    (g.steps_text || []).map((text) => `<li>${esc(text)}</li>`).join("") + "</ul>").join("") +
    (pooled ? `<p>Pooled (exploratory): ${esc(pooled.measure)} ${esc(pooled.value)} (${esc(pooled.ci_low)} to ${esc(pooled.ci_high)}), I² ${Math.round(pooled.i2 * 100)}% — ${esc((pooled.caveats || []).join("; "))}</p>` : "") +
    registered(report.registrations || {trials: [], flags: []});
  $("certainty-box").hidden = $("certainty").innerHTML === "";
}
function registered(shown) {  // the registrations report.md lists under the same heading (those on the question)
  if (!shown.trials.length && !shown.flags.length) return "";
  return "<h3>Trial registrations checked</h3>" +
    shown.trials.map((t) => `<p class="trial">${esc(t.nct)}, one study: ` +
      `${t.registry_id ? "registry record " + cite(`[${t.registry_id}]`) : "registry record not collected"}; reported by ` +
      t.paper_ids.map((id, i) => `${cite(`[${id}]`)} (${esc(t.matched_by[i] || "")})`).join(", ") + "</p>").join("") +
    shown.flags.map((f) => `<p class="flag">${esc(f.nct)}: ${esc(f.detail)}</p>`).join("");
}
document.addEventListener("click", (event) => {
  const th = event.target.closest("#studies th"); if (!th) return;
  const key = th.dataset.key; const down = th.getAttribute("aria-sort") === "ascending";
  document.querySelectorAll("#studies th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", down ? "descending" : "ascending");
  studyRows.sort((a, b) => String(a[key]).localeCompare(String(b[key]), undefined, {numeric: true}) * (down ? -1 : 1));
  renderStudies();
});
async function forestPlot(runId) {
  const response = await fetch(`/api/runs/${runId}/forest.svg`, {headers: headers()});
  const img = $("forest");
  if (state.run !== runId) return;
  if (!response.ok) { img.hidden = true; img.dataset.shown = "none"; return; }
  img.src = URL.createObjectURL(await response.blob()); img.hidden = false; img.dataset.shown = runId;
}

// ---- the finished run --------------------------------------------------------------------------------------------
const frameLine = (line) => line ? `<p class="muted" id="frame">Question: ${esc(line)}</p>` : "";  // render/report.frame_line
function answerBox(report) {
  const answer = report.answer; if (!answer) return;
  $("answer-box").hidden = false;
  $("answer").innerHTML = (answer.verdict ? `<span class="verdict">${esc(answer.verdict)}</span> — ` : "") + cite(answer.statement) +
    `<p class="muted">Strength of evidence: ${esc(answer.strength.replace("_", " "))}${answer.strength_reason ? ` — ${esc(answer.strength_reason)}` : ""}</p>` +
    (answer.missing ? `<p class="muted">Not addressed by the evidence: ${esc(answer.missing)}</p>` : "") +
    frameLine(report.frame_line);
}
function reportBody(report) {
  let html = report.partial ? `<p class="partial">Partial report — ${esc(pageWords(report.partial_reason))}</p>` : "";
  if (report.executive_summary.trim()) html += "<h3>Executive summary</h3>" + paragraphs(report.executive_summary);
  for (const section of report.sections.filter((s) => s.heading !== "Where the evidence disagrees" && s.body.trim())) html += `<h3>${esc(section.heading)}</h3>` + paragraphs(section.body);
  if (report.limitations) html += "<h3>Limitations</h3>" + paragraphs(report.limitations);
  if (report.conclusion) html += "<h3>Conclusion</h3>" + paragraphs(report.conclusion);
  if (report.unsupported_claims.length) html += "<h3>Unsupported claims (removed)</h3><ul>" + report.unsupported_claims.map((c) => `<li>${esc(c.text)} — ${esc(c.reason)}</li>`).join("") + "</ul>";
  if (report.methodology) html += "<h3>How this report was made</h3>" + paragraphs(report.methodology);
  $("report").className = ""; $("report").innerHTML = html;
}
function references(report) {  // each reference's link: its item's (identity.link_out), else its own http(s) URL
  $("references").innerHTML = report.references.map((c) =>
    `<li id="ref-${c.number}">${esc(c.text)}${c.link ? ` <a href="${esc(c.link)}" target="_blank" rel="noopener">${esc(c.evidence_id)}</a>` : ""}</li>`).join("");
  $("references-box").hidden = report.references.length === 0;
}
function downloads(runId) {
  const base = `/api/runs/${runId}`;
  $("downloads").innerHTML = `<a href="${base}/report.md" download>report.md</a><a href="${base}" download="report.json">report.json</a>` +
    `<a href="${base}/references.bib" download>references.bib</a><a href="${base}/evidence.csv" download>evidence.csv</a>` +
    '<button type="button" id="print">Print or save as PDF</button>';
}
async function finish(event, runId) {
  const response = await fetch(`/api/runs/${runId}`, {headers: headers()});  // the result with what Python computed for the page
  if (state.run !== runId) return;
  const result = response.ok ? await response.json() : event;
  const report = result.report; const items = result.evidence;
  answerBox(report); reportBody(report); evidenceTable(items); references(report);
  studyTable(result.evidence_table || []); appraisal(report);
  if (result.forest_plot) forestPlot(runId); else { $("forest").hidden = true; $("forest").dataset.shown = "none"; }  // data-shown: settled; forest_plot: views.result_view
  downloads(runId);
  if (state.opened === runId && !$("answer-box").hidden) $("answer-box").scrollIntoView({block: "start"});  // runs.js
  const failed = state.failures.size ? `; could not search ${[...state.failures.keys()].map((n) => SOURCE_NAMES[n] || n).join(", ")}` : "";
  $("status").textContent = result.every_source_failed  // views.result_view: nothing was checked, a failure
    ? `Failed: every source failed, nothing could be checked (${(result.failed_sources || []).map((f) => `${SOURCE_NAMES[f.source] || f.source}: ${f.kind}`).join(", ")}).`
    : `Done (${result.stop_reason.replace("_", " ")}): ${counted(items.length, "item")}, ${report.references.length} cited, ${counted(result.rounds, "round")}${failed}.`;
}
document.addEventListener("click", (event) => {
  if (event.target.id === "print") { window.print(); return; }
  const link = event.target.closest("a.cite"); if (!link) return;
  document.querySelectorAll("tr.target").forEach((row) => row.classList.remove("target"));
  const row = document.getElementById(rowId(link.dataset.id));
  if (row) { row.classList.add("target"); row.scrollIntoView({block: "center"}); const a = row.querySelector("a"); if (a) a.focus({preventScroll: true}); }
  event.preventDefault();
});
window.addEventListener("beforeprint", () => document.querySelectorAll("details.abstract").forEach((d) => d.removeAttribute("open")));

$("ask").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("status").textContent = "Starting the run …";  // at once: never the last run's "Done" over a new one
  const sources = await chosenSources();
  if (!sources.length) { $("status").textContent = "Tick at least one source."; return; }
  reset();
  const response = await fetch("/api/runs", {method: "POST", headers: {"Content-Type": "application/json", ...headers()},
    body: JSON.stringify({question: $("question").value, sources})});
  const body = await response.json();
  if (!response.ok) { $("status").textContent = `Refused (${response.status}): ${pageWords(body.detail && body.detail.map ? body.detail.map((d) => d.msg).join("; ") : body.detail)}`; return; }
  $("status").textContent = "Run started: searching …";
  follow(body.run_id);
  pastRuns();
});
const unanswered = (error) => { $("status").textContent = `The service did not answer (${error.message}); reload the page to ask again.`; };
$("token").addEventListener("change", () => { state.answered = service().catch(unanswered); state.answered.then(() => pastRuns()); });  // a token typed in: ask again with it
$("sources").addEventListener("change", () => { state.sourcesTouched = true; });
state.answered = service().catch(unanswered);
state.answered.then(() => pastRuns()).finally(() => { document.body.dataset.ready = "1"; });  // pastRuns: runs.js
