"""The MCP server over stdio and over streamable HTTP, driven by the official SDK's own clients, against the shared
library (no network)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from chroma_server import free_port
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from synthesist.memory import LibraryIndex

QUESTION = "Do mutations causing low HDL-C promote increased carotid intima-media thickness?"


def _payload(result) -> object:  # type: ignore[no-untyped-def]
    """A tool's result as data: its structured content, else its text content parsed as JSON."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        structured = result.structured_content
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)


@pytest.mark.shared
async def test_research_and_lookups_through_the_sdk_client_over_stdio(
        library_index: LibraryIndex, library_data_dir: Path, shared_dir: Path) -> None:
    library = shared_dir / "corpus" / "library.jsonl"  # indexed once this session: the server reuses the vectors
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(library_data_dir)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "synthesist.cli", "mcp", "--library",
                                                                 str(library)], env=env)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert names == {"research", "resume", "search_literature", "search_library", "get_evidence",
                         "watch_changes"}

        answered = _payload(await session.call_tool("research", {"question": QUESTION, "sources": ["library"],
                                                                 "max_rounds": 2}, progress_callback=on_progress))
        assert answered["answer"]["verdict"] in ("yes", "no", "mixed", "insufficient")
        assert answered["report_markdown"].startswith("# Research report") and answered["references"]
        assert progress and progress[-1] <= 1.0

        cited = answered["references"][0]["evidence_id"]
        record = _payload(await session.call_tool("get_evidence", {"id": cited}))
        assert record["id"] == cited and record["content"]

        hits = _payload(await session.call_tool("search_library", {"query": QUESTION, "k": 2}))
        assert len(hits) == 2 and hits[0]["id"] == "pmid:17113061"  # the question's own abstract, first
        untitled = _payload(await session.call_tool("search_library", {
            "query": "lace plant programmed cell death mitochondria", "k": 1}))[0]
        assert untitled["id"] == "pmid:21645374" and untitled["title"] is None  # the record has none: shown as
        assert untitled["display_title"].startswith(  # report.md, references.bib and the page show it
            "Untitled — 2011, pmid:21645374 — “Programmed cell death (PCD) is the regulated death")
        assert untitled["link"] == "https://pubmed.ncbi.nlm.nih.gov/21645374/"  # where report.md and the page link it

        missing = await session.call_tool("get_evidence", {"id": "pmid:1"})
        assert missing.is_error and "no evidence 'pmid:1' in this session" in missing.content[0].text


async def _listening(port: int, server: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    """Wait until the server accepts connections on 127.0.0.1:``port`` (it imports the SDK and opens the library)."""
    for _ in range(int(seconds * 10)):
        assert server.poll() is None, log.read_text()
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.close()
        await writer.wait_closed()
        return
    raise AssertionError(f"nothing listened on port {port} within {seconds} s")


@pytest.mark.shared
async def test_research_and_lookups_through_the_sdk_client_over_streamable_http(
        library_index: LibraryIndex, library_data_dir: Path, shared_dir: Path, tmp_path: Path) -> None:
    library, port = shared_dir / "corpus" / "library.jsonl", free_port()
    env = {**os.environ, "SYNTHESIST_DATA_DIR": str(library_data_dir)}
    log_path = tmp_path / "server.log"
    log = log_path.open("w")
    server = subprocess.Popen([sys.executable, "-m", "synthesist.cli", "mcp", "--http", str(port), "--library",
                               str(library)], env=env, stdout=log, stderr=subprocess.STDOUT)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    try:
        await _listening(port, server, log_path)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert names == {"research", "resume", "search_literature", "search_library", "get_evidence",
                         "watch_changes"}
            hits = _payload(await session.call_tool("search_library", {"query": QUESTION, "k": 3}))
            assert [hit["id"] for hit in hits][:1] == ["pmid:17113061"] and len(hits) == 3
            answered = _payload(await session.call_tool(
                "research", {"question": QUESTION, "sources": ["library"], "max_rounds": 1},
                progress_callback=on_progress))
            assert answered["answer"]["evidence_ids"] == ["pmid:17113061"] and progress
            cited = answered["references"][0]["evidence_id"]
            assert _payload(await session.call_tool("get_evidence", {"id": cited}))["id"] == cited
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()

