"use strict";
// Past runs on the page: newest first, each with its date, origin, answer and state; a search box filters them by
// question; opening one shows it, and the page scrolls to its Answer when that is drawn (page.js: finish()).
// Uses the page's $(), esc(), headers(), state, reset() and follow() (page.js); every call goes through /api/runs.
(function () {
  const list = $("runs");
  const filter = $("runs-filter");
  const ORIGINS = {cli: "command line", api: "Python API", batch: "batch", eval: "eval", service: "page or HTTP API",
    mcp: "MCP", watch: "watch"};
  const pad = (n) => String(n).padStart(2, "0");
  function when(iso) {  // the run's last change, in the reader's time zone: 2026-11-22 14:03
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return "date unknown";
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }
  function runState(r) {
    const now = r.state || (r.done ? "finished" : "running");
    if (now === "interrupted" || now === "cancelled") return r.resume ? `${now}, not finished` : now;
    if (now === "finished") {  // an insufficient answer stops the run as insufficient: say it once
      const why = (r.stop_reason || "finished").replace("_", " ");
      return why === r.answer ? "finished" : why;
    }
    if (now === "failed") return "ended without a result";
    return "running";
  }
  function row(r) {
    const origin = r.origin ? ORIGINS[r.origin] || r.origin : "origin not recorded";
    const answer = r.answer ? `<span class="run-answer">answer: ${esc(r.answer)}</span> · ` : "";
    return `<li data-question="${esc((r.question || r.run_id).toLowerCase())}"><a href="#" data-run="${esc(r.run_id)}" ` +
      `data-state="${esc(r.state || "")}">${esc(r.question || r.run_id)}</a><br><span class="muted run-meta">` +
      `<time datetime="${esc(r.changed || "")}">${esc(when(r.changed))}</time> · <span class="run-origin">${esc(origin)}</span> · ` +
      `${answer}<span class="run-state">${esc(runState(r))}</span></span>` +
      (r.resume ? ` <button type="button" class="resume-run" data-run="${esc(r.run_id)}" title="Continue it from where it stopped (or: ${esc(r.resume)})" aria-label="Resume run ${esc(r.run_id)}">Resume</button>` : "") +
      `</li>`;
  }
  function show() {  // every word typed must be in the question
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = [...list.querySelectorAll("li[data-question]")];
    let shown = 0;
    for (const li of rows) {
      li.hidden = !words.every((w) => li.dataset.question.includes(w));
      if (!li.hidden) shown += 1;
    }
    $("runs-count").textContent = rows.length ? (words.length ? `${shown} of ${rows.length}` : `${rows.length}`) : "";
  }
  const LIST_TRIES = 3;  // a listing that fails is said in the list and asked again (after 1 s, then 2 s)
  async function pastRuns() {
    for (let attempt = 1; ; attempt += 1) {
      let response = null;
      try { response = await fetch("/api/runs", {headers: headers()}); } catch (error) { response = null; }
      if (response && response.ok) {
        const runs = await response.json();  // newest first (the service sorts them)
        list.innerHTML = runs.map(row).join("") || '<li class="muted">none</li>';
        show();
        return;
      }
      const why = !response ? "the service did not answer"
        : response.status === 401 ? "this service needs an access token" : `the service answered ${response.status}`;
      const last = attempt >= LIST_TRIES || (response && response.status === 401);
      list.innerHTML = `<li class="muted runs-failed">Past runs could not be listed: ${esc(why)}${last ? "" : "; asking again"}</li>`;
      if (last) return;
      await new Promise((done) => setTimeout(done, 1000 * attempt));
    }
  }
  filter.addEventListener("input", show);
  list.addEventListener("click", async (event) => {
    const button = event.target.closest("button.resume-run");
    if (button) {  // continue a cancelled or interrupted run here, and follow it from its first event
      button.disabled = true; button.textContent = "Resuming…";
      const response = await fetch(`/api/runs/${button.dataset.run}/resume`, {method: "POST", headers: headers()});
      if (!response.ok) {
        const body = await response.json().catch(() => ({}));
        $("status").textContent = `Cannot resume this run: ${typeof body.detail === "string" ? body.detail : response.status}`;
        button.disabled = false; button.textContent = "Resume"; return;
      }
      reset(button.parentElement.querySelector("a[data-run]").textContent);
      $("main").scrollIntoView({block: "start"});
      $("status").textContent = `Resuming run ${button.dataset.run}…`;
      pastRuns();
      follow(button.dataset.run);
      return;
    }
    const link = event.target.closest("a[data-run]"); if (!link) return; event.preventDefault();
    reset(link.textContent);
    state.opened = link.dataset.run;  // finish() scrolls to its Answer
    $("main").scrollIntoView({block: "start"});
    const words = link.parentElement.querySelector(".run-state").textContent;
    $("status").textContent = `Past run ${link.dataset.run}: ${words}`;
    follow(link.dataset.run).then(() => {
      if (!state.finished) $("status").textContent = `Past run ${link.dataset.run}: ${words}`;
    });
  });
  window.pastRuns = pastRuns;
})();
