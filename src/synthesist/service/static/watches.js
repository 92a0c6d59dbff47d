"use strict";
// Watched questions on the page: watch the question in the box, list the watches with their last change, run one.
// Uses the page's esc(), headers() and $() (index.html); every call goes through /api/watches.
(function () {
  const list = $("watches");
  const say = (text) => { $("watch-status").textContent = text; };
  const answer = (last) => last && last.answer ? `${last.answer.verdict ?? "no verdict"}, ${last.answer.strength ?? "n/a"}` : "—";
  function changeText(row) {
    const out = row.last_outcome;
    if (out && out.error) return `last run failed: ${out.error}`;
    const last = row.last_run;
    if (!last) return "not run yet";
    const when = new Date(last.at).toLocaleString();
    if (!last.new && !last.gone && !last.retracted && !last.changed) return `${when}: nothing new`;
    const retracted = last.retracted ? `${last.retracted} retracted, ` : "";
    return `${when}: ${last.new} new, ${retracted}${last.gone} no longer among the results, ${last.changed} changed`;
  }
  async function refresh() {
    const response = await fetch("/api/watches", {headers: headers()});
    if (!response.ok) { list.innerHTML = '<li class="muted">watches unavailable</li>'; return; }
    const rows = await response.json();
    list.innerHTML = rows.map((row) => row.error
      ? `<li><span class="flag">${esc(row.id)}</span> unreadable: ${esc(row.error)}</li>`
      : `<li data-watch="${esc(row.id)}"><span>${esc(row.question)}</span><br><span class="muted">${esc(changeText(row))} · answer ${esc(answer(row.last_run))}</span> ` +
        `<button type="button" class="run-watch" data-watch="${esc(row.id)}" ${row.running ? "disabled" : ""} aria-label="Run watch ${esc(row.id)} now">${row.running ? "Running…" : "Run now"}</button></li>`
    ).join("") || '<li class="muted">No watched questions yet: type a question above and press “Watch”.</li>';
    if (rows.some((row) => row.running)) setTimeout(refresh, 3000);
  }
  list.addEventListener("click", async (event) => {
    const button = event.target.closest("button.run-watch"); if (!button) return;
    button.disabled = true; button.textContent = "Running…";
    const response = await fetch(`/api/watches/${encodeURIComponent(button.dataset.watch)}/runs`, {method: "POST", headers: headers()});
    const body = await response.json().catch(() => ({}));
    say(response.ok ? `watch ${button.dataset.watch} is running` : `not run (${response.status}): ${body.detail ?? ""}`);
    refresh();
  });
  $("watch-go").addEventListener("click", async () => {
    const sources = await chosenSources();  // page.js
    const response = await fetch("/api/watches", {method: "POST", headers: {"Content-Type": "application/json", ...headers()},
      body: JSON.stringify({question: $("question").value, sources})});
    const body = await response.json().catch(() => ({}));
    if (!response.ok) { say(`not watched (${response.status}): ${body.detail && body.detail.map ? body.detail.map((d) => d.msg).join("; ") : body.detail}`); return; }
    say(body.added ? `watching ${body.id}` : `already watched as ${body.id}`);
    refresh();
  });
  refresh();
})();
