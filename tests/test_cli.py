"""The command line, run as a user runs it: real arguments, exit codes and output, through the entry point in the
test's process (tests/cli_runner.py), and as a real process where the process is what a test checks (raw argument
bytes, what ``--help`` imports, a first run on a machine with no ONNX export yet)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_runner import run_cli
from run_helpers import QUESTION, write_library

from synthesist.run_options import LIBRARY_FORMS
from synthesist.testing import FixtureServer, Reply, ScriptedChatServer

FIXTURES = Path(__file__).parent / "tools" / "fixtures"


def run_process(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``synthesist ARGS`` as a new process (argument bytes as a shell passes them, output kept as bytes)."""
    return subprocess.run([sys.executable, "-m", "synthesist.cli", *args], capture_output=True,
                          env={**os.environ, **(env or {})})


def test_help_imports_neither_heavy_libraries_nor_the_api_nor_the_commands() -> None:
    """``synthesist --help`` stays fast: no model or store library, and the study and watch commands, which import
    the API at the top like every face, load only when they run."""
    heavy = ("torch", "chromadb", "httpx", "sentence_transformers", "synthesist.api", "synthesist.cli_study",
             "synthesist.cli_watch")
    code = ("import sys\nfrom synthesist.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "research" in out and "watch" in out
    assert out.strip().endswith("[]")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["research", "   "], "the question is empty"),
        (["research", "x" * 10_000], "10000 characters long"),
        (["research", "metformin", "--sources", "pubmed,scihub"], "unknown source 'scihub'"),
        (["research", "metformin", "--sources", "library", "--library", "/nonexistent/papers.jsonl"],
         "library path not found"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["research", "metformin", "--soruces", "pubmed"], "unrecognized arguments: --soruces pubmed; did you mean "
                                                           "--sources?"),
        (["research", "metformin", "--maxrounds=2"], "did you mean --max-rounds?"),
        (["reserch", "metformin"], "did you mean research?"),
        (["runs", "lst"], "did you mean list?"),
        (["watch", "run", "--concurency", "2"], "did you mean --concurrency?"),  # watch run's own options
        (["research", "metformin", "--zzzz"], "unrecognized arguments: --zzzz"),
    ],
)
def test_a_typo_gets_the_nearest_option_or_command(args: list[str], hint: str) -> None:
    done = run_cli(*args)
    assert done.returncode == 2 and hint in done.stderr and "Traceback" not in done.stderr
    if args[-1] == "--zzzz":
        assert "did you mean" not in done.stderr  # nothing near: no guess


@pytest.mark.parametrize("command", [["research"], ["batch"], ["watch", "add"], ["serve"], ["mcp"],
                                     ["library", "validate"], ["library", "index"],
                                     ["library", "search"]])
def test_every_library_option_says_what_a_library_can_be(command: list[str]) -> None:
    done = run_cli(*command, "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())  # argparse wraps the help at the terminal's width
    assert " ".join(LIBRARY_FORMS.split()) in text
    assert "a folder of JATS full texts is a library" in text


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


def test_a_source_that_fails_every_query_is_said_once_a_round(tmp_path: Path) -> None:
    """Offline, each source failed once per query: eight lines for four sources, the same two lines twice each."""
    with FixtureServer() as gone:
        url = gone.url
    env = {"SYNTHESIST_PUBMED__BASE_URL": url, "SYNTHESIST_TRIALS__BASE_URL": url, "SYNTHESIST_DATA_DIR": str(tmp_path),
           "SYNTHESIST_HTTP__MAX_RETRIES": "0"}
    done = run_cli("research", "Does metformin lower cancer incidence in type 2 diabetes?", "--sources",
                   "pubmed,trials", "--model", "extractive", "--max-rounds", "1", "--out", str(tmp_path / "out"),
                   env=env)
    assert done.returncode == 1, done.stderr  # every source failed: nothing was checked
    events = [json.loads(line) for line in (tmp_path / "out" / "events.jsonl").read_text().splitlines()]
    assert sum(e["type"] == "error" and "pubmed failed" in json.dumps(e) for e in events) >= 2  # one per query
    failures = [line for line in done.stderr.splitlines() if "search error:" in line]
    assert sorted(failures) == sorted(set(failures)) and len(failures) == 2, failures
    assert any("pubmed failed" in line for line in failures) and any("trials failed" in line for line in failures)


def test_a_run_no_source_answered_embeds_nothing_and_exports_only_what_reads_the_question(tmp_path: Path) -> None:
    """Offline on a new machine (no ONNX export in its cache): the run says every source was unreachable and how to
    run offline, and embeds nothing. The one export it makes is the int8 one the question tagger reads each word of
    the question with (since 2026-12-06: about 10-20 s, once per machine), said in its started line."""
    with FixtureServer() as gone:
        url = gone.url
    cache = tmp_path / "fresh-cache"
    env = {"SYNTHESIST_PUBMED__BASE_URL": url, "SYNTHESIST_TRIALS__BASE_URL": url, "SYNTHESIST_HTTP__MAX_RETRIES": "0",
           "XDG_CACHE_HOME": str(cache)}
    done = run_cli("research", "Does metformin lower cancer incidence in type 2 diabetes?", "--sources",
                   "pubmed,trials", "--model", "extractive", env=env)
    assert done.returncode == 1, done.stderr  # every source failed: a failure, its partial report written
    assert "every network source was unreachable" in done.stdout and "--sources library" in done.stdout
    assert [path.name.split("-")[2:4] for path in cache.rglob("*.onnx")] == [["onnx", "int8"]]
    assert "first use of the onnx-int8 embedding backend on this machine" in done.stderr


def test_library_validate_reports_bad_lines_with_their_numbers(tmp_path: Path) -> None:
    library = tmp_path / "papers.jsonl"
    library.write_text(
        '{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n'
        "{not json\n"
        '{"pmid": "2", "title": "B", "abstract": "Statins lower LDL."}\n'
    )
    done = run_cli("library", "validate", str(library))
    assert done.returncode == 1  # problems found: a script must be able to tell
    assert f"{library}:2:" in done.stderr
    assert "2 records loaded, 1 problems" in done.stdout


def test_library_validate_exits_0_on_a_clean_library_and_1_on_a_refused_document(tmp_path: Path) -> None:
    clean = tmp_path / "clean.jsonl"
    clean.write_text('{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n')
    assert run_cli("library", "validate", str(clean)).returncode == 0
    bomb = tmp_path / "bomb.xml"
    bomb.write_bytes((FIXTURES / "billion_laughs.xml").read_bytes())
    done = run_cli("library", "validate", str(bomb))
    assert done.returncode == 1 and "document refused" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    done = run_cli("library", "validate", str(empty))
    assert done.returncode == 1 and "no library file" in done.stderr


def test_library_validate_missing_path_exits_2(tmp_path: Path) -> None:
    done = run_cli("library", "validate", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 2 and "nope.jsonl" in done.stderr


def test_research_runs_offline_and_writes_the_report_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FixtureServer() as server:
        server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
        server.route("/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        env = {"SYNTHESIST_PUBMED__BASE_URL": server.url, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"),
               "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
        done = run_cli("research", "metformin cancer", "--sources", "pubmed", "--model", "extractive",
                       "--max-rounds", "1", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert "max_rounds after 1 round," in done.stdout
    assert "\nAnswer: " in done.stdout and "complete: max_rounds: answer " in done.stderr
    assert "search_complete: 3 new" in done.stderr  # the live view, plain because stderr is a pipe
    report = (out / "report.md").read_text()
    assert "## References" in report and "pubmed.ncbi.nlm.nih.gov/391000" in report
    result = json.loads((out / "report.json").read_text())
    assert result["stop_reason"] == "max_rounds" and result["partial"] is False  # items answer: complete
    assert result["fabricated_citations"] == 0
    assert {e["id"] for e in result["evidence"]} == {"pmid:39100001", "pmid:39100002", "pmid:39100003"}
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert events[0]["type"] == "started" and events[-1]["type"] == "complete"


def test_the_first_run_on_a_machine_announces_the_one_time_export_and_the_next_runs_without_it(tmp_path: Path) -> None:
    # A machine whose user cache holds no ONNX export yet (a new process, as a user's first run is): the run exports
    # the packaged model to ONNX int8 when it first embeds, and the started line says so once. The next run, in
    # another process, finds the export.
    cache = tmp_path / "fresh-cache"
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "XDG_CACHE_HOME": str(cache)}
    notice = "first use of the onnx-int8 embedding backend on this machine"
    with FixtureServer() as server:
        server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
        server.route("/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        env["SYNTHESIST_PUBMED__BASE_URL"] = server.url
        args = ("research", "metformin cancer", "--sources", "pubmed", "--model", "extractive", "--max-rounds", "1")
        first = run_process(*args, env=env)
        again = run_cli(*args, env=env)
    assert first.returncode == 0, first.stderr.decode()[-3000:]
    assert again.returncode == 0, again.stderr
    assert notice in first.stderr.decode() and notice not in again.stderr
    assert list((cache / "synthesist" / "onnx").glob("*-onnx-int8-*.onnx"))
    assert "search_complete: 3 new" in first.stderr.decode() and "search_complete: 3 new" in again.stderr


def test_library_search_reuses_the_index_and_embeds_no_record(library_index, library_data_dir: Path,
                                                               shared_dir: Path) -> None:
    """The session fixture indexed the library under this data dir: a CLI call must embed no record again."""
    path = shared_dir / "corpus" / "library.jsonl"
    env = {"SYNTHESIST_DATA_DIR": str(library_data_dir)}
    done = run_cli("library", "search", str(path), "metformin cancer", "-k", "5", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert f"library: {len(library_index)} records (0 embedded now, {len(library_index)} reused)" in done.stderr
    rows = json.loads(done.stdout)
    assert len(rows) == 5 and [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert set(rows[0]) == {"id", "pmid", "score", "title"}
    expected = [hit.id for hit in library_index.search("metformin cancer", k=5)]
    assert [r["id"] for r in rows] == expected
    untitled = run_cli("library", "search", str(path), "lace plant programmed cell death mitochondria", "-k", "1",
                       "--json", env=env)
    assert untitled.returncode == 0, untitled.stderr
    assert json.loads(untitled.stdout)[0]["title"].startswith(  # a record without a title, as every face shows it
        "Untitled — 2011, pmid:21645374 — “Programmed cell death (PCD) is the regulated death")


def test_library_search_runs_a_queries_file_one_json_line_each(library_index, library_data_dir: Path,
                                                               shared_dir: Path, tmp_path: Path) -> None:
    questions = [json.loads(line)["question"] for line in
                 (shared_dir / "corpus" / "questions_dev.jsonl").read_text().split("\n")[:3]]
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(questions) + "\n")
    env = {"SYNTHESIST_DATA_DIR": str(library_data_dir)}
    done = run_cli("library", "search", str(shared_dir / "corpus" / "library.jsonl"), "--queries", str(queries),
                   "-k", "3", env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["query"] for line in lines] == questions
    assert all(len(line["results"]) == 3 for line in lines)


def test_research_with_a_real_chest_xray_reports_an_imaging_section(library_index, library_data_dir: Path,
                                                                   shared_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {"SYNTHESIST_DATA_DIR": str(library_data_dir)}  # the session index: the library is not embedded again
    done = run_cli("research", "cardiomegaly causes", "--image", str(shared_dir / "images" / "00000001_000.png"),
                   "--sources", "library", "--library", str(shared_dir / "corpus" / "library.jsonl"),
                   "--max-rounds", "1", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "analysis_complete" in done.stderr
    assert "chest X-ray expert tools" in done.stderr and "are not offered" in done.stderr  # said once, no weights
    assert done.stderr.count("chest X-ray expert tools") == 1
    report = (out / "report.md").read_text()
    assert "## Imaging findings" in report and "non-diagnostic" in report.lower()
    result = json.loads((out / "report.json").read_text())
    cited = {c["evidence_id"] for c in result["report"]["references"]}
    assert any(i.startswith("img:") for i in cited) and any(i.startswith("pmid:") for i in cited)


def test_research_with_an_unreadable_image_exits_2(tmp_path: Path) -> None:
    (tmp_path / "x.png").write_bytes(b"not an image")
    library = tmp_path / "lib.jsonl"
    library.write_text('{"pmid": "1", "title": "A", "abstract": "Cardiomegaly and heart failure."}\n')
    done = run_cli("research", "cardiomegaly", "--image", str(tmp_path / "x.png"), "--sources", "library",
                   "--library", str(library))
    assert done.returncode == 2 and "x.png" in done.stderr and "Traceback" not in done.stderr


def test_control_characters_never_reach_the_terminal_raw(tmp_path: Path) -> None:
    hostile = str(tmp_path / "\x1b[2J\x1b[31mred\rlib.jsonl")
    done = run_process("research", "metformin", "--sources", "library", "--library", hostile)
    assert done.returncode == 2
    assert b"\x1b" not in done.stderr and b"\r" not in done.stderr
    assert b"\\x1b[2J\\x1b[31mred\\rlib.jsonl" in done.stderr


def test_printable_escapes_ansi_bidi_and_undecodable_bytes_but_keeps_text() -> None:
    from synthesist.cli import printable  # noqa: PLC0415

    assert printable("metformin \x1b[31mred\x1b[0m") == "metformin \\x1b[31mred\\x1b[0m"
    assert printable("a\u202eb\x00c\udcff") == "a\\u202eb\\x00c\\udcff"
    assert printable("Métformine — 5 µg, tab\tok") == "Métformine — 5 µg, tab\tok"


def test_a_question_that_is_not_utf8_is_bad_input() -> None:
    done = run_process("research", b"metformin \xff\xfe cancer", "--model", "extractive")
    assert done.returncode == 2
    assert done.stderr.decode().strip() == "synthesist: error: the question is not valid UTF-8 text"


@pytest.mark.parametrize(("content", "message"), [
    (b"Does metformin help?\nbad \xff line\n", "questions.txt:2: not UTF-8 text"),
    (b"Does metformin help?\nnul \x00 inside\n", "questions.txt:2 holds a NUL byte"),
])
def test_a_batch_file_with_bad_text_is_refused_before_any_run(tmp_path: Path, content: bytes, message: str) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_bytes(content)
    done = run_cli("batch", str(questions), "--out", str(tmp_path / "out"), "--model", "extractive")
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--max-rounds", "0", "max_rounds must be a whole number from 1 to 20, not 0"),
    ("--timeout", "0", "timeout must be a finite number of seconds above 0 and at most 3600, not 0"),
])
def test_a_zero_limit_is_refused_not_ignored(tmp_path: Path, option: str, value: str, message: str) -> None:
    library = tmp_path / "lib.jsonl"
    library.write_text('{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n')
    done = run_cli("research", "metformin", "--sources", "library", "--library", str(library), option, value,
                   env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "data" / "runs").exists()  # refused before any work


def test_out_on_a_file_is_refused_before_the_run(tmp_path: Path) -> None:
    library = tmp_path / "lib.jsonl"
    library.write_text('{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n')
    taken = tmp_path / "report.md"
    taken.write_text("mine")
    done = run_cli("research", "metformin", "--sources", "library", "--library", str(library), "--out", str(taken),
                   env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 2 and "is a file, not a folder" in done.stderr
    assert not (tmp_path / "data" / "runs").exists()


def test_batch_honours_json_and_manager(tmp_path: Path) -> None:
    library = tmp_path / "lib.jsonl"
    library.write_text('{"pmid": "1", "title": "Metformin and cancer", "abstract": "Metformin users had fewer '
                       'cancers in a cohort of 1,000 adults with type 2 diabetes."}\n')
    questions = tmp_path / "questions.txt"
    questions.write_text("Does metformin lower cancer incidence?\n")
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    base = ["batch", str(questions), "--out", str(tmp_path / "out"), "--sources", "library", "--library",
            str(library), "--max-rounds", "1"]
    done = run_cli(*base, "--json", "--manager", "loop", env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert line["index"] == 0 and line["error"] is None and line["stop_reason"] in ("sufficient", "max_rounds")
    assert line["answer"]["verdict"] in ("yes", "no", "mixed", "insufficient") and line["answer"]["statement"]
    base[3] = str(tmp_path / "other")
    refused = run_cli(*base, "--manager", "magentic", "--model", "extractive", env=env)
    assert refused.returncode == 1 and "magentic manager needs an LLM" in refused.stdout  # the option reached it


def test_a_batch_question_whose_every_source_failed_is_a_failure(tmp_path: Path) -> None:
    """Nothing was checked: the batch says so for that question and exits 1, as research and a watch do."""
    with FixtureServer() as gone:
        url = gone.url
    questions = tmp_path / "questions.txt"
    questions.write_text("Does metformin lower cancer incidence?\n")
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral",
           "SYNTHESIST_PUBMED__BASE_URL": url, "SYNTHESIST_HTTP__MAX_RETRIES": "0"}
    done = run_cli("batch", str(questions), "--out", str(tmp_path / "out"), "--sources", "pubmed", "--model",
                   "extractive", "--max-rounds", "1", "--json", env=env)
    assert done.returncode == 1, done.stderr[-2000:]
    (line,) = [json.loads(text) for text in done.stdout.splitlines()]
    assert line["error"].startswith("every source failed, nothing could be checked: pubmed (unreachable")


def test_the_batch_module_prints_nothing() -> None:
    source = (Path(__file__).parent.parent / "src" / "synthesist" / "batch.py").read_text()
    assert "print(" not in source and "rich" not in source


def test_library_index_says_what_it_embeds_and_when_it_is_done(tmp_path: Path) -> None:
    library = tmp_path / "lib.jsonl"
    library.write_text('{"pmid": "1", "title": "A", "abstract": "Metformin lowers glucose."}\n'
                       '{"pmid": "2", "title": "B", "abstract": "Statins lower LDL."}\n')
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    first = run_cli("library", "index", str(library), env=env)
    assert first.returncode == 0, first.stderr
    assert "indexing: 0/2 records (embedding once; later runs reuse them)" in first.stderr
    assert "indexing: done, 2/2 records in " in first.stderr
    again = run_cli("library", "index", str(library), env=env)
    assert "indexing" not in again.stderr and "0 embedded, 2 reused" in again.stdout


def test_quiet_shows_no_live_view_but_the_final_block(tmp_path: Path) -> None:
    library = tmp_path / "papers.jsonl"
    library.write_text(json.dumps({"pmid": "1", "title": "Metformin and cancer", "abstract": "CONCLUSIONS: "
                                   "Metformin use was associated with lower cancer incidence in adults."}) + "\n")
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
    done = run_cli("research", "Does metformin lower cancer incidence?", "--sources", "library", "--library",
                   str(library), "--max-rounds", "1", "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    assert "[round" not in done.stderr  # no live view
    assert "Answer:" in done.stdout and "written to" in done.stdout
    assert "1 evidence item, " in done.stdout  # counts that agree ("1 evidence items" at ae25d51)


# --- synthesist study ------------------------------------------------------------------------------------------

JATS = Path(__file__).parent / "tools" / "fixtures" / "jats_trial.nxml"


def test_study_prints_the_record_of_a_jats_file() -> None:
    done = run_cli("study", str(JATS))

    assert done.returncode == 0, done.stderr
    assert "design: randomised trial" in done.stdout and "randomised: 240" in done.stdout
    assert "intervention: drug A" in done.stdout and "Night waking: no difference" in done.stdout


def test_study_prints_no_empty_arms_for_a_stated_result_that_names_none() -> None:
    from synthesist.cli_study import answer_lines
    from synthesist.study import OutcomeResult

    bare = OutcomeResult(outcome="LAR", direction="decreased", quote="GSK256066 significantly reduced the LAR.")
    named = bare.model_copy(update={"intervention": "GSK256066"})

    assert answer_lines(bare)[0] == "LAR: decreased"
    assert answer_lines(named)[0] == "LAR: decreased (GSK256066 vs comparator)"


def test_study_answers_one_query_as_json() -> None:
    done = run_cli("study", str(JATS), "--intervention", "drug A", "--comparator", "placebo",
                   "--outcome", "cough frequency", "--json")

    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["direction"] == "decreased" and answer["section"] == "Abstract › Results"
    assert answer["quote"].startswith("Drug A significantly reduced cough frequency")
    assert answer["effect"] == {"measure": "HR", "value": "0.62", "ci_low": "0.45", "ci_high": "0.86",
                                "p": "P = 0.004", "text": "hazard ratio 0.62, 95% CI 0.45 to 0.86"}


def test_study_answers_a_queries_file_one_json_line_each_in_order(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    outcomes = ["quality of life", "cough frequency", "nausea", "mortality"]
    queries.write_text("\n".join(json.dumps({"intervention": "drug A", "comparator": "placebo", "outcome": o})
                                 for o in outcomes) + "\n")

    done = run_cli("study", str(JATS), "--queries", str(queries))

    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["outcome"] for a in answers] == outcomes
    assert [a["direction"] for a in answers] == ["no_difference", "decreased", "increased", "not_reported"]


def test_study_says_why_it_reports_no_direction() -> None:
    head_to_head = JATS.with_name("jats_head_to_head.nxml")  # glutide against metformin; its introduction cites placebo

    against_placebo = run_cli("study", str(head_to_head), "--intervention", "glutide", "--comparator", "placebo",
                              "--outcome", "body weight")
    elsewhere = run_cli("study", str(head_to_head), "--intervention", "glutide", "--comparator", "metformin",
                        "--outcome", "hip fracture", "--json")
    cited = run_cli("study", str(head_to_head), "--intervention", "glutide", "--comparator", "sitagliptin",
                    "--outcome", "body weight", "--json")  # another active drug its introduction cites
    unnamed = run_cli("study", str(head_to_head), "--intervention", "glutide", "--comparator", "insulin",
                      "--outcome", "body weight", "--json")  # a treatment the article never names
    tested = run_cli("study", str(head_to_head), "--intervention", "glutide", "--comparator", "metformin",
                     "--outcome", "body weight", "--json")

    assert against_placebo.returncode == elsewhere.returncode == tested.returncode == 0, against_placebo.stderr
    assert against_placebo.stdout.splitlines() == [
        "body weight: not reported (glutide vs placebo)",
        "  why: the article did not test glutide against placebo: it names placebo only outside its own comparison, "
        "or never"]
    assert json.loads(elsewhere.stdout)["why_not"] == "not_addressed"
    assert json.loads(cited.stdout)["why_not"] == json.loads(unnamed.stdout)["why_not"] == "comparator_not_tested"
    read = json.loads(tested.stdout)
    assert read["direction"] == "decreased" and "why_not" not in read


def test_study_with_a_model_prints_its_answers_checked_by_the_study_reader(tmp_path: Path) -> None:
    """`study --model` against an OpenAI-compatible server (scripted on 127.0.0.1): the model misreads cough
    frequency as an increase and leaves nausea out; the study reader says so for the first and answers the second."""
    verbatim = ("Drug A significantly reduced cough frequency compared with placebo (hazard ratio 0.62, 95% CI 0.45 "
                "to 0.86; P = 0.004).")
    reply = {"design": "randomised trial", "outcomes": [
        {"outcome": "cough frequency", "direction": "increased", "quote": verbatim, "section": "Abstract › Results"}]}
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps({"intervention": "drug A", "comparator": "placebo", "outcome": o})
                                 for o in ("cough frequency", "nausea")) + "\n")
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    with ScriptedChatServer({"study": reply}) as models:
        done = run_cli("study", str(JATS), "--queries", str(queries), "--model", models.model_spec, env=env)
        bad = run_cli("study", str(JATS), "--model", "nosuchprovider:x", env=env)
        agents = [call.agent for call in models.calls]

    assert done.returncode == 0, done.stderr
    cough, nausea = (json.loads(line) for line in done.stdout.splitlines())
    assert (cough["direction"], cough["check"]) == ("increased", "the study reader reads a decrease")
    assert (nausea["direction"], nausea["check"]) == ("increased", "the model did not report it; read by the study "
                                                                   "reader")
    assert agents == ["study"]
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_a_queries_line_nested_past_the_decoder_is_a_named_bad_line(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"intervention": "drug A", "outcome": "cough"}) + "\n" + "[" * 10_000 + "\n")
    done = run_cli("study", str(JATS), "--queries", str(queries), env={"SYNTHESIST_DATA_DIR": str(tmp_path / "d")})
    assert done.returncode == 2 and f"{queries}:2: expected an object" in done.stderr
    assert "Traceback" not in done.stderr


def test_study_fetches_a_pmcid_from_europe_pmc(tmp_path: Path) -> None:
    with FixtureServer() as server:
        server.route("/rest/PMC9000021/fullTextXML", Reply.file(JATS, content_type="application/xml"))
        env = {"SYNTHESIST_EUROPEPMC__BASE_URL": server.url + "/rest", "SYNTHESIST_DATA_DIR": str(tmp_path)}
        done = run_cli("study", "PMC9000021", "--json", env=env)
        missing = run_cli("study", "PMC1", env=env)

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["evidence_id"] == "pmid:90000021"
    assert missing.returncode == 2 and "no open-access full text" in missing.stderr


def _hostile_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    big = tmp_path / "big.nxml"
    with big.open("wb") as handle:
        handle.truncate(50_000_000)  # 50 MB, sparse: refused from its size before any read
    cases = {
        "dtd": (Path(__file__).parent / "tools" / "fixtures" / "billion_laughs.xml", "declares entities"),
        "big": (big, "over the 20,000,000-byte cap"),
        "empty": (tmp_path / "empty.nxml", "empty document"),
        "no body": (tmp_path / "bare.nxml", "without an abstract or a body"),
        "missing": (tmp_path / "missing.nxml", "cannot read"),
    }
    (tmp_path / "empty.nxml").write_bytes(b"")
    (tmp_path / "bare.nxml").write_bytes(b"<article><front><article-meta/></front></article>")
    return cases


@pytest.mark.parametrize("case", ["dtd", "big", "empty", "no body", "missing"])
def test_study_refuses_a_hostile_or_empty_file_in_one_line_with_exit_2(tmp_path: Path, case: str) -> None:
    path, message = _hostile_files(tmp_path)[case]

    done = run_cli("study", str(path))

    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and message in lines[0] and "Traceback" not in done.stderr


def test_study_refuses_a_bad_queries_line_before_answering(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"intervention": "drug A", "outcome": "nausea"}\n{"outcome": ""}\n')

    done = run_cli("study", str(JATS), "--queries", str(queries))

    assert done.returncode == 2 and done.stdout == "" and f"{queries}:2:" in done.stderr


def test_a_model_that_hangs_leaves_the_run_time_to_search_its_sources_and_answer_from_them(tmp_path: Path) -> None:
    """Every model request waits until the test ends (a provider that accepted the connection and never answers).
    With ``--timeout 60`` one call may take 15 s: the planner's call runs out, the run's later calls are not waited
    for, the library is searched with the rule-based queries, the extractive engine reports, all within the run's
    timeout; the report cites the library."""
    released = threading.Event()

    def hang(_: dict) -> dict:
        released.wait(120)
        return {}

    library = write_library(tmp_path / "papers.jsonl")
    env = {"SYNTHESIST_DATA_DIR": str(tmp_path / "data")}
    try:
        with ScriptedChatServer({name: hang for name in ("search", "judge", "hypothesis", "team", "report",
                                                          "claims")}) as models:
            started = time.monotonic()
            done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model",
                           models.model_spec, "--timeout", "60", "--json", env=env)
            took = time.monotonic() - started
            reached = len(models.calls)
            released.set()
    finally:
        released.set()
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert took < 60 and result["stop_reason"] != "timeout", (took, result["stop_reason"])
    assert result["evidence"] and result["report"]["references"]  # the library was searched, and cited
    assert reached == 1  # after the first call ran out, no other was sent to the hung model
    assert "gave no reply within 15s" in done.stderr or "no reply within 15s" in json.dumps(result)


def test_a_run_still_going_past_its_timeout_and_the_reserve_is_ended_with_one_line_naming_how_to_continue() -> None:
    """The CLI's last resort (cli.HardDeadline), in a real process whose work never ends (a thread nothing can
    cancel): it is stopped its reserve after the deadline, exit 1, one line giving the resume command."""
    script = ("import time\nfrom synthesist import cli_commands as cli\ncli.HARD_RESERVE = 0.5\n"
              "cli.HardDeadline().arm(0.5, 'run0123')\ntime.sleep(120)\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 1 and took < 60, (done.returncode, took, done.stderr)
    assert done.stderr.strip().splitlines() == [
        "synthesist: error: the run had not ended 0.5 s after its timeout (0.5 s): stopped here; what it collected "
        "is kept (`synthesist resume run0123` continues it)"]


def test_a_run_arms_its_deadline_from_its_started_event_and_lets_go_of_it_when_it_ends(tmp_path: Path) -> None:
    library = write_library(tmp_path / "papers.jsonl")
    done = run_cli("research", QUESTION, "--sources", "library", "--library", str(library), "--model", "extractive",
                   "--max-rounds", "1", "--timeout", "300", "--out", str(tmp_path / "out"),
                   env={"SYNTHESIST_DATA_DIR": str(tmp_path / "data")})
    assert done.returncode == 0, done.stderr[-2000:]
    started = json.loads((tmp_path / "out" / "events.jsonl").read_text().splitlines()[0])
    assert started["type"] == "started" and started["data"]["timeout"] == 300  # what the CLI arms its deadline from
    armed = [t for t in threading.enumerate() if isinstance(t, threading.Timer) and not t.finished.is_set()]
    assert not armed, armed  # this process (pytest) is not ended 360 s from now
