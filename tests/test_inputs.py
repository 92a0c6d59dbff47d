"""What every face does with a question before any work: terminal escapes and control characters are taken out at
the boundary (``inputs.check_question``), so none reaches report.md, evidence.csv, the events or the question's
frame. Each face is driven as a user drives it: the CLI's entry point, the HTTP service on a real uvicorn server,
the MCP server's tool call."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from cli_runner import run_cli
from live_server import LiveServer
from mcp import Client
from pydantic import ValidationError
from run_helpers import QUESTION, run_settings, write_library

from synthesist.composition import Seams, Shared
from synthesist.errors import BadInputError
from synthesist.inputs import check_question, strip_controls
from synthesist.mcp_server import build_server
from synthesist.memory import Embedder, open_chroma
from synthesist.service import create_app
from synthesist.study import DirectionQuery

HOSTILE = ("\x1b]0;owned\x07\x1b[2J\x1b[31mDoes metformin\x1b[0m reduce the risk of \u202ebreast cancer\u202c in "
           "women\x08 with type 2 diabetes?\x1b[?25l\x9b1m")
CLEAN = "Does metformin reduce the risk of breast cancer in women with type 2 diabetes?"
CONTROL_BYTES = (b"\x1b", b"\x07", b"\x08", "\u202e".encode(), "\x9b".encode())


def _clean_files(folder: Path) -> list[Path]:
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert files
    return [path for path in files if any(byte in path.read_bytes() for byte in CONTROL_BYTES)]


def test_escapes_and_controls_are_taken_out_and_the_text_kept() -> None:
    assert HOSTILE != CLEAN and check_question(HOSTILE) == CLEAN == QUESTION
    assert strip_controls("5 µg\tof Métformine — \x1bPq#0;2;0;0;0\x1b\\ok\r\n") == "5 µg\tof Métformine — ok\r\n"
    with pytest.raises(BadInputError, match="the question is empty"):
        check_question("\x1b[2J\x1b[H\x07")


def test_character_references_are_read_as_the_characters_they_stand_for() -> None:
    """A question copied from a web page's source (the Evidence Inference prompts hold "6&nbsp;months"): each
    reference closed by ";" is its character, except one that stands for a control or format character."""
    assert check_question("Does HbA1c &lt; 7&nbsp;% differ with A&amp;B vs R&D?") == (
        "Does HbA1c < 7 % differ with A&B vs R&D?")
    assert check_question("salt&pepper &not &#x3b1;-blockers") == "salt&pepper &not α-blockers"
    assert check_question("a&#27;[2J b &#8238;c &#0;") == "a&#27;[2J b &#8238;c \ufffd"  # as a browser reads it
    with pytest.raises(BadInputError, match="the question is empty"):
        check_question("&nbsp; &#160;")
    query = DirectionQuery(intervention="ITNs from age 6&nbsp;months", comparator=" placebo ", outcome="HbA1c &gt; 7%")
    assert (query.intervention, query.comparator, query.outcome) == ("ITNs from age 6 months", "placebo", "HbA1c > 7%")
    with pytest.raises(ValidationError):
        DirectionQuery(intervention="&nbsp;", outcome="mortality")


def test_the_cli_writes_the_question_without_its_escapes(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    done = run_cli("research", HOSTILE, "--sources", "library", "--library", str(library), "--max-rounds", "1",
                   "--out", str(tmp_path / "out"), env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data"),
                                                        "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\x1b" not in done.stdout + done.stderr
    assert json.loads((tmp_path / "out" / "report.json").read_text())["question"] == CLEAN
    assert {"report.md", "evidence.csv", "events.jsonl"} <= {p.name for p in (tmp_path / "out").iterdir()}
    assert _clean_files(tmp_path / "out") == []


def test_the_http_service_runs_the_question_without_its_escapes(tmp_path: Path, embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    app = create_app(settings, libraries=[write_library(tmp_path / "papers.jsonl")],
                     seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        started = client.post("/api/runs", json={"question": HOSTILE, "sources": ["library"]})
        assert started.status_code in (200, 201, 202), started.text
        run_id = started.json()["run_id"]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            runs = {run["run_id"]: run for run in client.get("/api/runs").json()}
            if runs[run_id].get("done"):
                break
            time.sleep(0.2)
        assert runs[run_id]["question"] == CLEAN and runs[run_id]["done"]
    assert _clean_files(tmp_path / "data" / "runs") == []


async def test_the_mcp_research_tool_takes_the_question_without_its_escapes(tmp_path: Path,
                                                                            embedder: Embedder) -> None:
    settings = run_settings(tmp_path / "data", max_rounds=1)
    server = build_server(settings, libraries=[write_library(tmp_path / "papers.jsonl")],
                          seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    async with Client(server) as client:
        answered = await client.call_tool("research", {"question": HOSTILE, "sources": ["library"]})
    assert not answered.is_error, answered.content
    text = json.dumps(answered.structured_content)
    assert CLEAN in text and "\\u001b" not in text and "\\u202e" not in text
    assert _clean_files(tmp_path / "data" / "runs") == []


@pytest.mark.parametrize("k", ["0", "-3"])
def test_library_search_refuses_k_below_one_in_one_line(tmp_path: Path, k: str) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    done = run_cli("library", "search", str(library), "metformin breast cancer", "-k", k,
                   env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == f"synthesist: error: the number of records (-k) must be at least 1, not {k}"
    assert not (tmp_path / "data").exists()  # refused before the library was read or embedded
