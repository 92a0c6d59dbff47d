"""Watched questions through the CLI: sources whose answers change between runs (the real recorded PubMed and
ClinicalTrials.gov formats on a loopback server), a library that gains a record, a killed watch run resumed, an
overlapping run refused, and bad input (an unknown id, a vanished library, a damaged watch)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_runner import CliResult, run_cli
from run_helpers import QUESTION, write_library

from synthesist.errors import WatchBusyError
from synthesist.testing import FixtureServer, Reply
from synthesist.testing.http_server import Request
from synthesist.watch import WatchStore

FIXTURES = Path(__file__).parent / "tools" / "fixtures"
NEW_PMID = "39100009"


def _efetch(extra: bool, retract: str | None) -> bytes:
    """The recorded efetch answer; with ``extra`` a fourth article (a copy of the first under a new PMID and
    title), with ``retract`` that PMID's article typed ``Retracted Publication`` as PubMed types them."""
    text = (FIXTURES / "pubmed_efetch.xml").read_text(encoding="utf-8")
    articles = re.findall(r"<PubmedArticle>.*?</PubmedArticle>", text, flags=re.S)
    if retract:
        for article in articles:
            if f">{retract}</PMID>" in article:
                typed = article.replace("<PublicationTypeList>", '<PublicationTypeList><PublicationType '
                                        'UI="D016441">Retracted Publication</PublicationType>', 1)
                text = text.replace(article, typed)
    if extra:
        first = articles[0]
        pmid = re.search(r"<PMID[^>]*>(\d+)</PMID>", first).group(1)  # type: ignore[union-attr]
        copy = first.replace(f">{pmid}</PMID>", f">{NEW_PMID}</PMID>")
        copy = re.sub(r"<ArticleTitle>.*?</ArticleTitle>", "<ArticleTitle>Metformin and breast cancer risk in "
                      "postmenopausal women with type 2 diabetes: a registry cohort.</ArticleTitle>", copy, flags=re.S)
        copy = re.sub(r"<Abstract>.*?</Abstract>", "<Abstract><AbstractText>Among 48,000 women with type 2 "
                      "diabetes followed for eight years, ever use of metformin was associated with a lower risk "
                      "of invasive breast cancer than sulfonylurea use (HR 0.86, 95% CI 0.77-0.96)."
                      "</AbstractText></Abstract>", copy, flags=re.S)
        copy = re.sub(r'<(ELocationID|ArticleId) [^>]*(doi|pmc|pubmed)"[^>]*>[^<]*</\1>', "", copy)
        text = text.replace("</PubmedArticleSet>", copy + "</PubmedArticleSet>")
    return text.encode()


def _trials_page(status: str, results: bool) -> dict:
    page = json.loads((FIXTURES / "ctgov_studies_page1.json").read_text(encoding="utf-8"))
    study = page["studies"][0]
    study["protocolSection"]["statusModule"]["overallStatus"] = status
    study["hasResults"] = results
    return {"totalCount": 1, "studies": [study]}


def _search(*, later: bool) -> Reply:
    ids = ["39100003", "39100001", "39100002"] + ([NEW_PMID] if later else [])
    search = json.loads((FIXTURES / "pubmed_esearch.json").read_text(encoding="utf-8"))
    search["esearchresult"].update(idlist=ids, retmax=str(len(ids)))
    return Reply.json(search)


def _serve(server: FixtureServer, *, later: bool) -> None:
    server.route("/eutils/esearch.fcgi", _search(later=later))
    server.route("/eutils/efetch.fcgi", Reply.xml(_efetch(extra=later, retract="39100002" if later else None)))
    server.route("/ctgov/api/v2/studies", Reply.json(_trials_page("COMPLETED" if later else "RECRUITING", later)))


def _env(tmp_path: Path, server: FixtureServer) -> dict[str, str]:
    return {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_HTTP__CACHE_ENABLED": "false",
            "SYNTHESIST_PUBMED__BASE_URL": server.url + "/eutils",
            "SYNTHESIST_TRIALS__BASE_URL": server.url + "/ctgov/api/v2"}


def _added_id(done: CliResult) -> str:
    assert done.returncode == 0, done.stderr[-2000:]
    return re.search(r"(w[0-9a-f]{8})", done.stdout).group(1)  # type: ignore[union-attr]


def test_a_watch_reports_new_gone_and_changed_items_then_says_plainly_when_nothing_is_new(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    with FixtureServer() as server:
        _serve(server, later=False)
        env = _env(tmp_path, server)
        watch = _added_id(run_cli("watch", "add", QUESTION, "--sources", "pubmed,trials,library", "--library",
                               str(library), "--model", "extractive", "--max-rounds", "1", env=env))
        first = run_cli("watch", "run", watch, "--json", env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        assert json.loads(first.stdout)["previous_run_id"] is None

        _serve(server, later=True)  # a new PubMed id, one paper retracted, the trial completed with results
        with library.open("a", encoding="utf-8") as out:  # and the library gains a record
            out.write(json.dumps({"pmid": "38000001", "title": "Metformin use and breast cancer incidence in a "
                                  "national cohort of women with type 2 diabetes", "abstract": "In 120,000 women "
                                  "with type 2 diabetes, metformin use was associated with a lower incidence of "
                                  "breast cancer (HR 0.81, 95% CI 0.70-0.93).", "year": 2024}) + "\n")
        second = run_cli("watch", "run", watch, "--json", env=env)
        assert second.returncode == 0, second.stderr[-2000:]
        summary = json.loads(second.stdout)
        run_folder = tmp_path / "data" / "runs" / summary["run_id"]
        changes = json.loads((run_folder / "changes.json").read_text(encoding="utf-8"))
        new_ids = {item["id"] for item in changes["new"]}
        assert f"pmid:{NEW_PMID}" in new_ids and "pmid:38000001" in new_ids
        assert {(item["id"], item["reason"]) for item in changes["gone"]} >= {("pmid:39100002", "retracted")}
        assert [(t["status_before"], t["status_now"], t["results_before"], t["results_now"])
                for t in changes["trials"]] == [("RECRUITING", "COMPLETED", False, True)]
        assert summary["new"] == len(changes["new"]) and summary["changed"] == 1 and not summary["nothing_new"]
        assert summary["retracted"] == 1 and summary["gone"] == summary["retracted"] + summary["dropped"]
        assert {"answer_before", "answer_now"} <= set(summary)
        markdown = (run_folder / "changes.md").read_text(encoding="utf-8")
        assert "## New items" in markdown and "## Retracted (1)" in markdown and "RECRUITING → COMPLETED" in markdown

        third = run_cli("watch", "run", watch, env=env)  # the same answers again
        assert third.returncode == 0, third.stderr[-2000:]
        assert "nothing new since the last run" in third.stdout
        listed = run_cli("watch", "list", env=env)
    assert listed.returncode == 0 and watch in listed.stdout and "ANSWER" in listed.stdout.splitlines()[0]
    assert "never" not in listed.stdout


def _history(data: Path, watch: str) -> list[dict]:
    path = data / "watches" / watch / "history.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def test_a_killed_watch_run_resumes_and_an_overlapping_run_is_refused(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    released = threading.Event()
    with FixtureServer() as server:
        _serve(server, later=False)
        search = _search(later=False)

        def held_after_round_one(request: Request) -> Reply:  # the run stays in round 2 until it is killed
            if list((tmp_path / "data" / "runs").glob("*/checkpoint.json")):
                released.wait(120)
            return search

        server.route("/eutils/esearch.fcgi", held_after_round_one)
        # never sufficient, so the run goes on to round 2 whatever the judge makes of round 1
        env = {**_env(tmp_path, server), "SYNTHESIST_HTTP__TIMEOUT": "60", "SYNTHESIST_RUN__MIN_CONFIDENCE": "0.99"}
        watch = _added_id(run_cli("watch", "add", QUESTION, "--sources", "pubmed,library", "--library", str(library),
                               "--model", "extractive", "--max-rounds", "3", env=env))
        running = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "watch", "run", watch],
                                   env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 240
        run_id = None
        while time.monotonic() < deadline and running.poll() is None:
            started = [entry["run_id"] for entry in _history(tmp_path / "data", watch) if entry["state"] == "started"]
            if started and (tmp_path / "data" / "runs" / started[0] / "checkpoint.json").exists():
                run_id = started[0]
                break
            time.sleep(0.1)
        assert run_id is not None, "the watch run never checkpointed its first round"
        with pytest.raises(WatchBusyError), WatchStore(tmp_path / "data").lock(watch):
            pass  # the running process holds the watch: a second run of it is refused at once
        running.send_signal(signal.SIGKILL)
        running.wait(timeout=60)
        released.set()

        again = run_cli("watch", "run", watch, env=env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resumed a killed run" in again.stdout
    finished = [entry for entry in _history(tmp_path / "data", watch) if entry["state"] == "finished"]
    assert [entry["run_id"] for entry in finished] == [run_id]  # the killed run itself was finished, not a new one


def test_bad_watches_cost_only_themselves(tmp_path: Path) -> None:
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    kept, doomed = write_library(tmp_path / "kept.jsonl"), write_library(tmp_path / "doomed.jsonl")
    good = _added_id(run_cli("watch", "add", QUESTION, "--sources", "library", "--library", str(kept), "--model",
                          "extractive", "--max-rounds", "1", env=env))
    gone = _added_id(run_cli("watch", "add", "Does metformin improve survival?", "--sources", "library", "--library",
                          str(doomed), "--model", "extractive", "--max-rounds", "1", env=env))
    broken = _added_id(run_cli("watch", "add", "Do statins lower LDL?", "--sources", "library", "--library",
                            str(kept), "--model", "extractive", env=env))
    doomed.unlink()
    (tmp_path / "data" / "watches" / broken / "watch.json").write_text("{not json", encoding="utf-8")

    listed = run_cli("watch", "list", env=env)
    assert listed.returncode == 0 and f"watch remove {broken}" in listed.stdout

    ran = run_cli("watch", "run", "--all", "--json", env=env)
    assert ran.returncode == 1, ran.stderr[-2000:]
    outcomes = {row["watch"]: row for row in map(json.loads, ran.stdout.splitlines())}
    assert outcomes[good]["run_id"] and outcomes[good].get("error") is None  # the good one still ran
    assert "is gone" in outcomes[gone]["error"] and str(doomed) in outcomes[gone]["error"]
    assert "unreadable" in outcomes[broken]["error"]

    unknown = run_cli("watch", "run", "wdeadbeef", env=env)
    assert unknown.returncode == 2 and unknown.stderr.strip().count("\n") == 0 and "no watch" in unknown.stderr
    bad_add = run_cli("watch", "add", "  ", env=env)
    assert bad_add.returncode == 2 and "empty" in bad_add.stderr
    removed = run_cli("watch", "remove", broken, env=env)
    assert removed.returncode == 0 and broken not in run_cli("watch", "list", env=env).stdout


def test_a_watch_whose_sources_all_failed_fails_and_names_them_and_the_next_run_compares_with_the_last_good_one(
        tmp_path: Path) -> None:
    with FixtureServer() as gone:
        unreachable = gone.url
    with FixtureServer() as server:
        _serve(server, later=False)
        env = {**_env(tmp_path, server), "SYNTHESIST_HTTP__MAX_RETRIES": "0"}
        watch = _added_id(run_cli("watch", "add", QUESTION, "--sources", "pubmed,trials", "--model", "extractive",
                                  "--max-rounds", "1", env=env))
        first = run_cli("watch", "run", watch, "--json", env=env)
        assert first.returncode == 0, first.stderr[-2000:]
        first_run = json.loads(first.stdout)["run_id"]

        outage = {**env, "SYNTHESIST_PUBMED__BASE_URL": unreachable, "SYNTHESIST_TRIALS__BASE_URL": unreachable}
        down = run_cli("watch", "run", watch, env=outage)  # under cron: the outage must not read "nothing new"
        assert down.returncode == 1, down.stdout + down.stderr[-2000:]
        assert "nothing new" not in down.stdout.lower()
        assert f"{watch}: FAILED" in down.stdout and "every source failed, nothing could be checked" in down.stdout
        assert "pubmed (unreachable" in down.stdout and "trials (unreachable" in down.stdout
        [failed] = [entry for entry in _history(tmp_path / "data", watch) if entry["state"] == "failed"]
        markdown = (tmp_path / "data" / "runs" / failed["run_id"] / "changes.md").read_text(encoding="utf-8")
        assert "Nothing could be checked" in markdown and "pubmed (unreachable" in markdown
        as_json = json.loads(run_cli("watch", "run", watch, "--json", env=outage).stdout)
        assert "every source failed" in as_json["error"] and as_json["changes"].endswith("changes.md")

        half = {**env, "SYNTHESIST_TRIALS__BASE_URL": unreachable}  # PubMed back, ClinicalTrials.gov still down
        back = run_cli("watch", "run", watch, "--json", env=half)
    assert back.returncode == 0, back.stderr[-2000:]
    summary = json.loads(back.stdout)
    assert summary["previous_run_id"] == first_run  # not the runs that checked nothing
    assert summary["failed_sources"] == ["trials"] and not summary["nothing_new"]
    markdown = Path(summary["changes"]).read_text(encoding="utf-8")
    assert "Sources that failed in this run**: trials (unreachable" in markdown


def test_a_watch_over_a_folder_of_full_texts_runs(tmp_path: Path) -> None:
    folder = tmp_path / "fulltexts"
    folder.mkdir()
    (folder / "trial.nxml").write_bytes((FIXTURES / "jats_trial.nxml").read_bytes())
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    watch = _added_id(run_cli("watch", "add", "Does drug A reduce cough frequency in chronic cough?", "--sources",
                              "library", "--library", str(folder), "--model", "extractive", "--max-rounds", "1",
                              env=env))
    ran = run_cli("watch", "run", watch, "--json", env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    assert json.loads(ran.stdout)["new"] == 1  # the folder's one article, not "the library is gone"


def test_a_watchs_runs_are_listed_with_their_origin(tmp_path: Path) -> None:
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    library = write_library(tmp_path / "papers.jsonl")
    watch = _added_id(run_cli("watch", "add", QUESTION, "--sources", "library", "--library", str(library), "--model",
                              "extractive", "--max-rounds", "1", env=env))
    ran = run_cli("watch", "run", watch, "--json", env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    run_id = json.loads(ran.stdout)["run_id"]
    listed = run_cli("runs", "list", "--origin", "watch", env=env)
    assert listed.returncode == 0, listed.stderr
    [row] = listed.stdout.splitlines()[1:]
    assert row.split()[0] == run_id and " watch " in row and " api " not in row
