"""Record and replay from the command line: a recorded run re-runs with no network and no model, byte for byte.

The recording talks to real loopback servers: PubMed, ClinicalTrials.gov and Europe PMC replaying their formats,
and an OpenAI-compatible model server scripted per agent. The servers are then SHUT DOWN and the run replayed.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import quote

import pytest
from cli_runner import run_cli

from synthesist.testing import FixtureServer, Reply, ScriptedChatServer

FIXTURES = Path(__file__).parent / "tools" / "fixtures"
QUESTION = "Does metformin lower cancer incidence in type 2 diabetes?"
TIMING_FIELDS = ("run_id", "seconds", "spans")
"""All that may differ between a run and its replay: its id and its clock (durations and the spans' times)."""
_IDS = re.compile(r"\[((?:pmid|nct|doi|ppr):[^\]\s]+)\]")


def _asked(body: dict) -> str:
    """The user message: the evidence cards (the system prompt's example ids are not evidence)."""
    return " ".join(str(m.get("content", "")) for m in body["messages"] if m.get("role") == "user")


def _scripted_team() -> dict:
    def judge(body: dict) -> dict:
        text = _asked(body)
        ids = list(dict.fromkeys(_IDS.findall(text)))[:3]
        return {"mechanism": {"score": 4, "reasoning": "indirect"}, "clinical": {"score": 7, "reasoning": "cohorts"},
                "confidence": 0.8, "sufficient": True, "recommendation": "synthesize",
                "key_findings": [f"Metformin users had less cancer [{i}]." for i in ids[:1]],
                "cited_evidence_ids": ids}

    def report(body: dict) -> dict:
        ids = list(dict.fromkeys(_IDS.findall(_asked(body))))[:2]
        cites = "".join(f"[{i}]" for i in ids)
        return {"title": "Metformin and cancer", "methodology": "PubMed, trials, Europe PMC.",
                "executive_summary": f"Metformin use was associated with lower cancer incidence {cites}.",
                "conclusion": f"Metformin cures every cancer {cites}.",
                "answer": {"verdict": "yes", "statement": f"Metformin use was associated with lower cancer "
                           f"incidence {cites}.", "strength": "low", "evidence_ids": ids}}

    return {"search": {"queries": {"pubmed": ["metformin cancer diabetes"], "trials": ["metformin cancer"],
                                   "europepmc": ["metformin cancer incidence"]}},
            "judge": judge, "hypothesis": {"hypotheses": []}, "report": report,
            "claims": {"judgements": [{"index": 0, "supported": False, "reason": "overstates the cohorts"}]}}


def _serve(stack: ExitStack) -> dict[str, str]:
    pubmed, trials, epmc = (stack.enter_context(FixtureServer()) for _ in range(3))
    pubmed.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    pubmed.route("/eutils/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
    epmc.route("/epmc/search", Reply.file(FIXTURES / "europepmc_core_page2.json"))
    trials.route("/ctgov/studies", Reply.file(FIXTURES / "ctgov_studies_page2.json"))
    return {"SYNTHESIST_PUBMED__BASE_URL": pubmed.url + "/eutils", "SYNTHESIST_TRIALS__BASE_URL": trials.url +
            "/ctgov", "SYNTHESIST_EUROPEPMC__BASE_URL": epmc.url + "/epmc"}


def _without_timings(path: Path) -> dict:
    result = json.loads(path.read_text(encoding="utf-8"))
    return {key: value for key, value in result.items() if key not in TIMING_FIELDS}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str], str]:
    """A run recorded against live loopback servers, which are gone when the fixture returns."""
    tmp = tmp_path_factory.mktemp("record")
    # The recording and every replay use one data directory and its own store, as a user replays where they
    # recorded: its embedding cache then holds the recording's vectors (onnx-int8's vectors vary slightly with the
    # batch a text was first encoded in, so a store shared with other tests could hold other ones).
    env = {"SYNTHESIST_DATA_DIR": str(tmp / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "persistent"}
    with ExitStack() as stack:
        env.update(_serve(stack))
        models = stack.enter_context(ScriptedChatServer(_scripted_team()))
        done = run_cli("research", QUESTION, "--sources", "pubmed,trials,europepmc", "--model", models.model_spec,
                    "--max-rounds", "2", "--record", str(tmp / "tape"), "--out", str(tmp / "first"), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        calls = {call.agent for call in models.calls}
    # every agent's model went on tape; the judge and the hypothesis agent in one call a round (no prompt cache)
    assert {"search", "team", "report"} <= calls and not {"judge", "hypothesis"} & calls
    return tmp / "tape", tmp / "first", env, models.model_spec


def test_a_replay_needs_no_network_and_no_model_and_writes_the_same_report(recorded) -> None:  # type: ignore[no-untyped-def]
    tape, first, env, _spec = recorded
    again = first.parent / "again"
    # the servers are down; no --model: the tape answers for every agent
    done = run_cli("research", QUESTION, "--sources", "pubmed,trials,europepmc", "--max-rounds", "2",
                "--replay", str(tape), "--out", str(again), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after = _without_timings(first / "report.json"), _without_timings(again / "report.json")
    assert after == before
    assert before["report"]["unsupported_claims"] and before["report"]["answer"]  # a full report, not a stub
    assert (first / "report.md").read_text() == (again / "report.md").read_text()
    assert (first / "references.bib").read_bytes() == (again / "references.bib").read_bytes()


def test_a_cassette_recorded_for_another_question_is_refused(recorded) -> None:  # type: ignore[no-untyped-def]
    tape, _first, env, _spec = recorded
    done = run_cli("research", "Does aspirin prevent colorectal cancer?", "--sources", "pubmed,trials,europepmc",
                "--max-rounds", "2", "--replay", str(tape), env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "was recorded with question = 'Does metformin lower cancer incidence" in done.stderr


def test_missing_corrupt_and_occupied_cassettes_are_bad_input(recorded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tape, _first, env, _spec = recorded
    args = ("research", QUESTION, "--sources", "pubmed,trials,europepmc", "--max-rounds", "2")
    missing = run_cli(*args, "--replay", str(tmp_path / "nowhere"), env=env)
    assert missing.returncode == 2 and "holds no cassette (manifest.json is missing)" in missing.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("manifest.json", "http.jsonl", "web.jsonl", "models.jsonl", "order.jsonl"):
        (broken / name).write_bytes((tape / name).read_bytes())
    (broken / "http.jsonl").write_text("{not json\n")
    corrupt = run_cli(*args, "--replay", str(broken), env=env)
    assert corrupt.returncode == 2 and "http.jsonl line 1 is not JSON" in corrupt.stderr
    occupied = run_cli(*args, "--record", str(tape), env=env)
    assert occupied.returncode == 2 and "already holds a cassette" in occupied.stderr
    both = run_cli(*args, "--record", str(tmp_path / "new"), "--replay", str(tape), env=env)
    assert both.returncode == 2 and "exclude each other" in both.stderr


def test_a_replay_against_other_base_urls_fails_naming_each_source_and_still_writes_the_partial_report(
        recorded) -> None:  # type: ignore[no-untyped-def]
    """The tape holds no answer for another host: every source fails, and that is a failure (exit 1), said in one
    line that names each source and why, with no traceback; the report is still written, partial, with that reason.
    A real process, so that what reaches stderr (logging included) is what a user sees."""
    tape, first, env, _spec = recorded
    with FixtureServer() as gone:
        elsewhere = gone.url
    moved = {**env, "SYNTHESIST_HTTP__MAX_RETRIES": "0", **{f"SYNTHESIST_{source}__BASE_URL": f"{elsewhere}/moved"
                                                            for source in ("PUBMED", "TRIALS", "EUROPEPMC")}}
    out = first.parent / "moved"
    done = subprocess.run([sys.executable, "-m", "synthesist.cli", "research", "--replay", str(tape), "--out",
                           str(out)], capture_output=True, text=True, env={**os.environ, **moved}, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "CassetteError" not in done.stderr + done.stdout
    [line] = [line for line in done.stderr.splitlines() if line.startswith("synthesist: error:")]
    host = elsewhere.removeprefix("http://")
    assert "every source failed, nothing could be checked" in line
    for source, path in (("pubmed", "/moved/esearch.fcgi"), ("trials", "/moved/studies"),
                         ("europepmc", "/moved/search")):
        assert f"{source} (replay: the tape holds no recorded answer for GET {host}{path})" in line, line
    result = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert result["partial"] and result["report"]["partial_reason"].startswith("every source failed: pubmed (replay")
    assert "report partial: every source failed" in done.stdout and (out / "report.md").is_file()


def test_a_tape_knows_its_own_question_and_options(recorded) -> None:  # type: ignore[no-untyped-def]
    tape, first, env, _spec = recorded
    again = first.parent / "bare"
    done = run_cli("research", "--replay", str(tape), "--out", str(again), env=env)  # as the README writes it
    assert done.returncode == 0, done.stderr[-2000:]
    assert _without_timings(again / "report.json") == _without_timings(first / "report.json")


@pytest.mark.parametrize("keyed_path", [False, True], ids=["key in the query", "key in the path"])
def test_a_key_repeated_by_a_redirect_reaches_no_file(tmp_path: Path, keyed_path: bool) -> None:
    """The NCBI key travels in the query string; a server that redirects with it in ``Location`` (and echoes it in
    cookies and links), or to a path of the same host built from it, must not put it in the tape, the cache, the run
    folder or the report files, in any form (as written, URL-encoded, base64); the tape still replays."""
    key = "ncbi-key-from-the-environment-0123456789"
    search = f"/eutils/{key}/esearch.fcgi" if keyed_path else "/eutils/v2/esearch.fcgi"

    def moved(to: str):
        def reply(request):  # type: ignore[no-untyped-def]
            query = "&".join(f"{name}={value}" for name, values in request.params.items() for value in values)
            return Reply(status=307, headers={"Location": f"{to}?{query}", "Set-Cookie": f"k={key}",
                                              "Link": f"<{to}?{query}>; rel=canonical"})
        return reply

    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_PUBMED__API_KEY": key}
    with FixtureServer() as pubmed:
        pubmed.route("/eutils/esearch.fcgi", moved(search))
        pubmed.route(search, Reply.file(FIXTURES / "pubmed_esearch.json"))
        pubmed.route("/eutils/efetch.fcgi", moved("/eutils/v2/efetch.fcgi"))
        pubmed.route("/eutils/v2/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        env["SYNTHESIST_PUBMED__BASE_URL"] = pubmed.url + "/eutils"
        done = run_cli("-v", "research", QUESTION, "--sources", "pubmed", "--max-rounds", "1", "--record",
                       str(tmp_path / "tape"), "--out", str(tmp_path / "out"), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert pubmed.requests_to("/eutils/v2/efetch.fcgi")
        assert all(request.param("api_key") == key for request in pubmed.requests)
        again = run_cli("research", QUESTION, "--sources", "pubmed", "--max-rounds", "1", env=env)  # the cache
        assert again.returncode == 0, again.stderr[-2000:]
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {"http.jsonl", "report.md", "events.jsonl"} <= {path.name for path in files}
    forms = {key.encode(), quote(key, safe="").encode(), base64.b64encode(key.encode()).rstrip(b"=")}
    assert [path for path in files if any(form in path.read_bytes() for form in forms)] == []
    assert [path for path in tmp_path.rglob("*") if key in path.name] == []
    assert key not in done.stderr + again.stderr
    replayed = run_cli("research", "--replay", str(tmp_path / "tape"), "--out", str(tmp_path / "replayed"), env=env)
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert (tmp_path / "replayed" / "report.md").read_text() == (tmp_path / "out" / "report.md").read_text()
