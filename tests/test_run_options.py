"""A run's options have one set of bounds (synthesist.run_options), and every face refuses a value out of them with
the same words, before any work: the API, the CLI (exit 2), a batch, a watch (added, or its file edited), a
checkpoint, the settings, the HTTP service (422) and the MCP ``research`` tool."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import httpx
import pytest
from live_server import LiveServer
from mcp import Client
from run_helpers import write_library

from synthesist import api
from synthesist.batch import research_many
from synthesist.cli import main
from synthesist.config import load_settings
from synthesist.errors import BadInputError, ConfigError
from synthesist.mcp_server import build_server
from synthesist.run_store import Checkpoint, RunStore
from synthesist.service import create_app

ROUNDS = "max_rounds must be a whole number from 1 to 20, not {}"
SECONDS = "timeout must be a finite number of seconds above 0 and at most 3600, not {}"
BAD = [  # (option, value, the words every face says)
    ("max_rounds", 0, ROUNDS.format(0)),
    ("max_rounds", 21, ROUNDS.format(21)),
    ("timeout", 0.0, SECONDS.format(0)),
    ("timeout", -5.0, SECONDS.format(-5)),
    ("timeout", 3601.0, SECONDS.format(3601)),
    ("timeout", math.inf, SECONDS.format("inf")),
    ("timeout", math.nan, SECONDS.format("nan")),
]
BAD_IDS = [f"{option}={value}" for option, value, _ in BAD]
OLD_CHECKPOINT = Path(__file__).parent / "checkpoint_before_typed_snapshot.json"


def _flag(option: str, value: float) -> str:
    return f"--{option.replace('_', '-')}={value}"


@pytest.mark.parametrize(("option", "value", "words"), BAD, ids=BAD_IDS)
async def test_the_api_refuses_an_option_out_of_bounds_in_one_line_before_any_work(
        tmp_path: Path, option: str, value: float, words: str) -> None:
    with pytest.raises(BadInputError, match=f"^{re.escape(words)}$"):
        api.StreamOptions(**{option: value})
    with pytest.raises(BadInputError, match=f"^{re.escape(words)}$"):
        api.StreamOptions(origin="cli").replace(**{option: value})
    settings = load_settings(data_dir=tmp_path / "data")
    with pytest.raises(BadInputError, match=f"^{re.escape(words)}$"):
        await api.research("Does metformin help?", sources="library", libraries=[write_library(tmp_path / "p.jsonl")],
                           settings=settings, **{option: value})
    assert not (tmp_path / "data").exists()


def test_the_bounds_themselves_are_accepted() -> None:
    for max_rounds, timeout in ((1, 0.001), (20, 3600.0)):
        options = api.StreamOptions(max_rounds=max_rounds, timeout=timeout)
        assert (options.max_rounds, options.timeout) == (max_rounds, timeout)
        settings = load_settings(run={"max_rounds": max_rounds, "timeout": timeout})
        assert (settings.run.max_rounds, settings.run.timeout) == (max_rounds, timeout)


@pytest.mark.parametrize("command", ["research", "batch", "watch add"])
@pytest.mark.parametrize(("option", "value", "words"), BAD, ids=BAD_IDS)
def test_the_cli_exits_2_with_the_same_line_for_research_batch_and_watch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str,
        option: str, value: float, words: str) -> None:
    monkeypatch.setenv("SYNTHESIST_DATA_DIR", str(tmp_path / "data"))
    library = write_library(tmp_path / "papers.jsonl")
    questions = tmp_path / "questions.txt"
    questions.write_text("Does metformin help?\n", encoding="utf-8")
    given = {"research": ["research", "Does metformin help?"],
             "batch": ["batch", str(questions), "--out", str(tmp_path / "out")],
             "watch add": ["watch", "add", "Does metformin help?"]}[command]
    code = main([*given, "--sources", "library", "--library", str(library), _flag(option, value)])
    err = capsys.readouterr().err
    assert code == 2 and err == f"synthesist: error: {words}\n"
    assert not (tmp_path / "data").exists() and not (tmp_path / "out").exists()  # refused before any work


@pytest.mark.parametrize(("option", "value", "words"), BAD[:3], ids=BAD_IDS[:3])
async def test_a_batch_refuses_it_before_making_its_folder(tmp_path: Path, option: str, value: float,
                                                           words: str) -> None:
    with pytest.raises(BadInputError, match=f"^{re.escape(words)}$"):
        await research_many(["Does metformin help?"], out_dir=tmp_path / "out", **{option: value})
    with pytest.raises(BadInputError, match=f"^{re.escape(words)}$"):
        await research_many(["Does metformin help?"], out_dir=tmp_path / "out", options=api.StreamOptions(),
                            **{option: value})
    assert not (tmp_path / "out").exists()


def test_a_watch_file_edited_out_of_bounds_is_unreadable_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(data_dir=tmp_path / "data")
    library = write_library(tmp_path / "papers.jsonl")
    with pytest.raises(BadInputError, match=f"^{re.escape(ROUNDS.format(50))}$"):
        api.add_watch("Does metformin help?", sources="library", libraries=[library], max_rounds=50,
                      settings=settings)
    watch, added = api.add_watch("Does metformin help?", sources="library", libraries=[library], max_rounds=20,
                                 timeout=3600, settings=settings)
    assert added and (watch.options.max_rounds, watch.options.timeout) == (20, 3600.0)
    path = tmp_path / "data" / "watches" / watch.id / "watch.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    stored["options"]["max_rounds"] = 50
    path.write_text(json.dumps(stored), encoding="utf-8")

    with pytest.raises(BadInputError, match=re.escape(f"watch {watch.id} is unreadable ({ROUNDS.format(50)}; ")):
        api.get_watch(watch.id, settings=settings)
    (row,) = api.list_watches(settings=settings)
    assert row.watch is None and ROUNDS.format(50) in row.error
    monkeypatch.setenv("SYNTHESIST_DATA_DIR", str(tmp_path / "data"))
    assert main(["watch", "run", watch.id]) == 1  # the watch fails with its reason; nothing runs
    out = capsys.readouterr().out
    assert out.startswith(f"{watch.id}: FAILED — watch {watch.id} is unreadable ({ROUNDS.format(50)}; ")
    assert not (tmp_path / "data" / "runs").exists()


def test_a_checkpoint_out_of_bounds_is_unreadable_and_says_why_and_an_old_one_still_loads(tmp_path: Path) -> None:
    folder = RunStore(tmp_path).folder("r1")
    folder.directory.mkdir(parents=True)
    raw = json.loads(OLD_CHECKPOINT.read_bytes())
    folder.checkpoint_path.write_text(json.dumps(raw), encoding="utf-8")
    assert folder.load_checkpoint().options.max_rounds == 1
    raw["options"]["timeout"] = 7200.0
    folder.checkpoint_path.write_text(json.dumps(raw), encoding="utf-8")
    unreadable = f"checkpoint of run 'r1' is unreadable: {SECONDS.format(7200)}"
    with pytest.raises(BadInputError, match=f"^{re.escape(unreadable)}$"):
        folder.load_checkpoint()
    assert Checkpoint.model_validate_json(OLD_CHECKPOINT.read_bytes()).options.timeout == 600.0


@pytest.mark.parametrize(("option", "value", "words"), BAD, ids=BAD_IDS)
def test_the_settings_refuse_it_with_the_same_words(monkeypatch: pytest.MonkeyPatch, option: str, value: float,
                                                    words: str) -> None:
    with pytest.raises(ConfigError, match=f"^invalid setting run.{option}: {re.escape(words)}$"):
        load_settings(run={option: value})
    monkeypatch.setenv(f"SYNTHESIST_RUN__{option.upper()}", str(value))
    with pytest.raises(ConfigError, match=f"^invalid setting run.{option}: {re.escape(words)}$"):
        load_settings()


def test_the_service_answers_422_with_the_same_words_for_a_run_and_a_watch(tmp_path: Path) -> None:
    app = create_app(load_settings(data_dir=tmp_path / "data"))
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        for route in ("/api/runs", "/api/watches"):
            for option, value, words in BAD:
                body = json.dumps({"question": "Does metformin help?", option: value})  # inf, nan: as Python writes
                answer = client.post(route, content=body, headers={"Content-Type": "application/json"})
                assert answer.status_code == 422, (route, option, value)
                (problem,) = answer.json()["detail"]
                assert (problem["loc"], problem["msg"]) == (["body", option], words)
        schema = client.get("/openapi.json").json()["components"]["schemas"]["RunRequest"]["properties"]
        assert schema["max_rounds"]["anyOf"][0]["maximum"] == 20 and schema["timeout"]["anyOf"][0]["maximum"] == 3600
        assert client.get("/api/runs").json() == [] and client.get("/api/watches").json() == []
    assert not (tmp_path / "data" / "runs").exists()


async def test_the_mcp_research_tool_refuses_it_with_the_same_words(tmp_path: Path) -> None:
    server = build_server(load_settings(data_dir=tmp_path / "data"))
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["research"].input_schema["properties"]["max_rounds"]["anyOf"][0]["maximum"] == 20
        for option, value, words in BAD[:2]:
            refused = await client.call_tool("research", {"question": "Does metformin help?", option: value})
            assert refused.is_error and refused.content[0].text == f"Error executing tool research: {words}"
    assert not (tmp_path / "data" / "runs").exists()
