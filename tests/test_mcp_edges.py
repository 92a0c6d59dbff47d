"""The MCP server's edges through the official SDK client over stdio: every argument checked before any work, in
one line naming the argument, never echoing the input; failed sources reported beside the results; ``sources`` as a
list or a comma string; ``research`` without sources searching the server's library, never the network; the server
says its version."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from run_helpers import LIBRARY_ITEMS, QUESTION, write_library

from synthesist import __version__
from synthesist.run_options import LIBRARY_FORMS
from synthesist.testing import FixtureServer, Reply

FIXTURES = Path(__file__).parent / "tools" / "fixtures"
LIBRARY_IDS = {item.id for item in LIBRARY_ITEMS}


def _error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.is_error
    return result.content[0].text


async def test_bad_arguments_are_refused_in_one_line_and_failed_sources_are_reported(tmp_path: Path) -> None:
    with FixtureServer() as gone:
        unreachable = gone.url
    with FixtureServer() as server:
        server.route("/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
        server.route("/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
        env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_PUBMED__BASE_URL": server.url,
               "SYNTHESIST_EUROPEPMC__BASE_URL": unreachable, "SYNTHESIST_HTTP__MAX_RETRIES": "0",
               "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral"}
        params = StdioServerParameters(command=sys.executable, env=env, args=[
            "-m", "synthesist.cli", "mcp", "--library", str(write_library(tmp_path / "papers.jsonl"))])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            started = await session.initialize()
            assert started.server_info.name == "synthesist" and started.server_info.version == __version__

            huge_id = "x" * 500_000
            missing = _error(await session.call_tool("get_evidence", {"id": huge_id}))
            assert len(missing) < 300 and "id: String should have at most 200 characters" in missing
            unknown = _error(await session.call_tool("get_evidence", {"id": "pmid:1" + "9" * 150}))
            assert len(unknown) < 300 and "no evidence" in unknown

            empty = _error(await session.call_tool("search_library", {"query": "  "}))
            assert "the query is empty" in empty
            long = _error(await session.call_tool("search_library", {"query": "q" * 500_000}))
            assert "query: String should have at most 2000 characters" in long and len(long) < 300
            with pytest.raises(MCPError, match="request too large: a message may be at most 1,000,000 bytes"):
                await session.call_tool("search_library", {"query": "q" * 3_000_000})  # read 1 MB, never parsed
            after = await session.call_tool("search_library", {"query": "metformin", "k": 1})
            assert not after.is_error and after.structured_content  # the server goes on reading the next request
            for k in (0, -3, 101):
                refused = _error(await session.call_tool("search_library", {"query": "metformin", "k": k}))
                assert refused.startswith("Error executing tool search_library: k: Input should be"), refused
            typed = _error(await session.call_tool("search_literature", {"query": "metformin", "sources": 5}))
            assert "sources" in typed and "Input should be a valid" in typed and "http" not in typed  # no pydantic URL
            assert len(typed) < 500 and "\n" not in typed
            bad_source = _error(await session.call_tool("search_literature", {"query": "q", "sources": ["scihub"]}))
            assert "unknown source 'scihub'" in bad_source

            for sources in (["pubmed", "europepmc"], "pubmed, europepmc"):  # a list, or a comma string as the CLI's
                found = (await session.call_tool("search_literature", {"query": "metformin cancer",
                                                                       "sources": sources, "k": 5}))
                assert not found.is_error, found.content
                payload = found.structured_content
                assert {item["id"] for item in payload["results"]} == {"pmid:39100001", "pmid:39100002",
                                                                       "pmid:39100003"}
                assert [error["source"] for error in payload["errors"]] == ["europepmc"]
                assert payload["errors"][0]["kind"] == "unreachable"

            # a run whose every source failed checked nothing: a failure, in one line that names the source
            outage = _error(await session.call_tool("research", {"question": QUESTION, "max_rounds": 1,
                                                                 "sources": "europepmc"}))
            assert "every source failed, nothing could be checked: europepmc (unreachable" in outage, outage


async def test_research_without_sources_searches_the_servers_library_and_never_the_network(tmp_path: Path) -> None:
    """As the HTTP service does (one rule, ``inputs.served_sources``): a server started with a library researches it
    alone unless asked otherwise, and takes ``"library"`` as the CLI and the HTTP API do; its schema says what a library
    can be."""
    with FixtureServer() as network:  # every network source points here: any request is one too many
        env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_HTTP__MAX_RETRIES": "0",
               "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral", "SYNTHESIST_SEARCH__SOURCES": '["pubmed","trials"]',
               **{f"SYNTHESIST_{name}__BASE_URL": network.url for name in ("PUBMED", "TRIALS", "EUROPEPMC")}}
        params = StdioServerParameters(command=sys.executable, env=env, args=[
            "-m", "synthesist.cli", "mcp", "--library", str(write_library(tmp_path / "papers.jsonl"))])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert LIBRARY_FORMS in tools["research"].input_schema["properties"]["sources"]["description"]
            assert LIBRARY_FORMS in (tools["search_library"].description or "")  # what a library can be
            for arguments in ({}, {"sources": "library"}, {"sources": ["library"]}):
                answered = await session.call_tool("research", {"question": QUESTION, "max_rounds": 1, **arguments})
                assert not answered.is_error, answered.content
                cited = {reference["evidence_id"] for reference in answered.structured_content["references"]}
                assert cited and cited <= LIBRARY_IDS, (arguments, cited)
            assert network.requests == []
            both = await session.call_tool("research", {"question": QUESTION, "max_rounds": 1,
                                                        "sources": "library,pubmed"})
            assert not both.is_error, both.content
            assert network.requests  # a source asked for by name is searched


async def test_a_cancelled_run_is_continued_by_the_resume_tool_with_every_item_it_had(tmp_path: Path) -> None:
    from synthesist import api  # noqa: PLC0415
    from synthesist.config import load_settings  # noqa: PLC0415

    library = write_library(tmp_path / "papers.jsonl")
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"})
    control = api.RunControl()
    result = None
    options = api.StreamOptions(sources=("library",), libraries=(library,), max_rounds=3, model="extractive")
    async for event in api.stream(QUESTION, options, settings=settings, control=control):
        if event.type == "search_complete":
            control.cancel()  # a client that gave up after round 1's search
        if event.type == "complete":
            result = event.data
    assert result is not None and result.stop_reason == "cancelled", result
    held = {item.id for item in result.evidence}
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(tmp_path / "data"), "SYNTHESIST_MEMORY__CHROMA_MODE": "ephemeral",
           "SYNTHESIST_MODELS__MODEL": "extractive"}
    params = StdioServerParameters(command=sys.executable, env=env, args=["-m", "synthesist.cli", "mcp"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        resumed = await session.call_tool("resume", {"run_id": result.run_id})
        assert not resumed.is_error, resumed.content
        answer = resumed.structured_content
        assert answer["run_id"] == result.run_id and answer["stop_reason"] != "cancelled", answer["stop_reason"]
        assert answer["answer"]["verdict"] in ("yes", "no", "mixed", "insufficient")
        cited = {reference["evidence_id"] for reference in answer["references"]}
        assert cited and cited <= LIBRARY_IDS
        checkpoint = api.run_evidence(result.run_id, settings=settings)
        assert held <= {item.id for item in checkpoint}  # nothing it had collected was lost
        unknown = await session.call_tool("resume", {"run_id": "0123abcd"})
        assert unknown.is_error and "0123abcd" in _error(unknown)
