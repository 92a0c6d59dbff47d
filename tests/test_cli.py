"""The command line, run as a user runs it: a subprocess, real arguments, exit codes and output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthesist.testing import FixtureServer, Reply

FIXTURES = Path(__file__).parent / "tools" / "fixtures"


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "synthesist.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


def test_help_does_not_import_heavy_modules() -> None:
    code = ("import sys\nfrom synthesist.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'chromadb', 'httpx', 'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "research" in out
    assert out.strip().endswith("[]")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["research", "   "], "the question is empty"),
        (["research", "x" * 10_000], "10000 characters long"),
        (["research", "metformin", "--sources", "pubmed,scihub"], "unknown source 'scihub'"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr


def test_sources_check_offline_says_which_source_is_unreachable(tmp_path: Path) -> None:
    with FixtureServer() as gone:
        url = gone.url
    env = {"SYNTHESIST_PUBMED__BASE_URL": url, "SYNTHESIST_TRIALS__BASE_URL": url,
           "SYNTHESIST_DATA_DIR": str(tmp_path)}
    done = run_cli("sources", "check", "--sources", "pubmed,trials", env=env)
    assert done.returncode == 1
    assert "FAIL pubmed     unreachable: cannot reach 127.0.0.1" in done.stdout
    assert "FAIL trials" in done.stdout
    assert "2 of 2 sources unreachable" in done.stderr


def test_library_validate_reports_bad_lines_with_their_numbers(tmp_path: Path) -> None:
    library = tmp_path / "papers.jsonl"
    library.write_text(
        '{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n'
        "{not json\n"
        '{"pmid": "2", "title": "B", "abstract": "Statins lower LDL."}\n'
    )
    done = run_cli("library", "validate", str(library))
    assert done.returncode == 0
    assert f"{library}:2:" in done.stderr
    assert "2 records loaded, 1 problems" in done.stdout


def test_library_validate_missing_path_exits_2(tmp_path: Path) -> None:
    done = run_cli("library", "validate", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 2 and "nope.jsonl" in done.stderr


def test_research_prints_the_evidence_found(tmp_path: Path) -> None:
    with FixtureServer() as server:
        server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
        server.route("/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        env = {"SYNTHESIST_PUBMED__BASE_URL": server.url, "SYNTHESIST_DATA_DIR": str(tmp_path)}
        done = run_cli("research", "metformin cancer", "--sources", "pubmed", env=env)
    assert done.returncode == 0, done.stderr
    assert "Found per source: pubmed 3" in done.stdout
    assert "[1] pmid:39100003" in done.stdout
