"""A scripted OpenAI-compatible model server on 127.0.0.1: every agent's calls over real HTTP, measured.

    with ScriptedChatServer({"judge": judgement, "report": draft, ...}, latency=0.3) as models:
        await research(question, model=models.model_spec, ...)
        print(models.calls)  # agent, request characters (tool schemas included), arrival time, one per call

It answers ``POST /v1/chat/completions`` by calling the output tool with the arguments scripted for the agent that
asks: the product names the calling agent on every model request (the ``X-Synthesist-Agent`` header,
:data:`synthesist.llm.model_spec.AGENT_HEADER`), so the server routes on that and never on a prompt's wording (a
request without it is ``unknown``, and gets a 400 unless ``unknown`` is scripted; the judge's and the hypothesis
agent's combined call, ``team``, unless scripted itself, is answered with both agents' scripts as its two parts, as a
model doing both tasks would); when a request offers several
tools, it calls the one the last user message names (as `name`), as a model following the task would. A scripted
reply is a dict, a list of dicts (served in order, the last repeating) or a function of the request's JSON. Input
size is counted the way the reference comparison counts it: request characters / 4, tool schemas and all.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..agents.team import HYPOTHESIS, JUDGE, TEAM
from ..llm.model_spec import AGENT_HEADER
from .http_server import FixtureServer, Reply, Request
from .models import named_tool

ScriptedArguments = Mapping[str, Any] | list[Mapping[str, Any]] | Callable[[dict[str, Any]], Mapping[str, Any]]


def chat_completion(arguments: Any, *, tool: str = "final_result", prompt_tokens: int = 120,
                    completion_tokens: int = 30) -> Reply:
    """A Chat Completions answer that calls ``tool`` with ``arguments`` (a dict, or a raw JSON string)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Reply.json({
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_763_700_000,
        "model": "scripted",
        "choices": [{
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": tool, "arguments": raw}}],
            },
        }],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    })


@dataclass(frozen=True)
class ChatCall:
    """One model call as the server saw it."""

    agent: str
    characters: int
    """Of the whole request body: messages, tool definitions (schemas), settings."""
    at: float
    """Arrival, ``time.monotonic()``."""
    prompt: str = ""
    """What a provider's prompt cache keys on, in its order: the tool definitions, then every message's content."""

    @property
    def input_tokens(self) -> int:
        return self.characters // 4


class ScriptedChatServer:
    """The server (see the module docstring). Use as a context manager."""

    def __init__(self, replies: Mapping[str, ScriptedArguments], *, latency: float = 0.0,
                 unnamed: Callable[[dict], str] | None = None):
        """``unnamed`` names the agent of a request that carries no agent header (code older than the header, as a
        benchmark's side-by-side run of a3f13dc's code sends); without it such a request is refused."""
        self._replies = dict(replies)
        self._unnamed = unnamed
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()
        self.calls: list[ChatCall] = []
        self._server = FixtureServer(latency=latency)
        self._server.route("/v1/chat/completions", self._answer)

    @property
    def base_url(self) -> str:
        return f"{self._server.url}/v1"

    @property
    def model_spec(self) -> str:
        """The spec that points every agent at this server."""
        return f"openai-compatible:scripted@{self.base_url}"

    def __enter__(self) -> ScriptedChatServer:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)

    def _answer(self, request: Request) -> Reply:
        body = json.loads(request.body or b"{}")
        agent = request.headers.get(AGENT_HEADER.lower()) or (self._unnamed(body) if self._unnamed else "unknown")
        with self._lock:
            self.calls.append(ChatCall(agent, len(request.body), request.at, cache_order(body)))
            served = self._served[agent] = self._served.get(agent, 0) + 1
        parts = _TEAM_PARTS if agent == TEAM and agent not in self._replies else {None: agent}
        scripts = {part: self._replies.get(member) for part, member in parts.items()}
        if any(script is None for script in scripts.values()):
            return Reply.json({"error": {"message": f"nothing scripted for {agent}"}}, status=400)
        answers = {part: _arguments(script, body, served) for part, script in scripts.items()}
        arguments = answers[None] if None in answers else {part: _parsed(answer) for part, answer in answers.items()}
        tools = [tool["function"]["name"] for tool in body.get("tools", [])]
        return chat_completion(arguments, tool=named_tool(tools, _last_user(body)),
                               prompt_tokens=len(request.body) // 4)

    def cacheable_tokens(self) -> int:
        """Input tokens (characters / 4) that repeat the start of an earlier request, tools and system prompt
        included: what a provider's prefix cache could serve, given the order the calls arrived in."""
        total, earlier = 0, []
        for call in self.calls:
            total += max((len(os.path.commonprefix([call.prompt, seen])) for seen in earlier), default=0) // 4
            earlier.append(call.prompt)
        return total

    def shared_prefix_tokens(self, first: str, second: str) -> list[int]:
        """Per pair of ``first``'s and ``second``'s calls (in order: one pair a round), the tokens their requests
        share from the start, in a provider cache's order."""
        ones = [c.prompt for c in self.calls if c.agent == first]
        twos = [c.prompt for c in self.calls if c.agent == second]
        return [len(os.path.commonprefix([a, b])) // 4 for a, b in zip(ones, twos, strict=False)]

    def by_agent(self) -> dict[str, tuple[int, int]]:
        """Agent → (calls, input tokens as characters / 4)."""
        totals: dict[str, tuple[int, int]] = {}
        for call in self.calls:
            calls, tokens = totals.get(call.agent, (0, 0))
            totals[call.agent] = (calls + 1, tokens + call.input_tokens)
        return totals


_TEAM_PARTS: dict[str | None, str] = {"judge": JUDGE, "hypotheses": HYPOTHESIS}
"""The combined call's parts (:class:`~synthesist.agents.team.TeamAssessment`) and the agent each one is of."""


def _arguments(script: ScriptedArguments, body: dict[str, Any], served: int) -> Any:
    if callable(script):
        return script(body)
    if isinstance(script, list):
        return script[min(served, len(script)) - 1]
    return script


def _parsed(answer: Any) -> Any:
    """A part given as raw JSON text, parsed when it parses (a broken one stays text, and fails validation)."""
    if not isinstance(answer, str):
        return answer
    try:
        return json.loads(answer)
    except ValueError:
        return answer


def cache_order(body: dict[str, Any]) -> str:
    """A request as a prefix cache reads it: the tool definitions, then each message's content, in order."""
    tools = json.dumps(body.get("tools", []), sort_keys=True)
    return tools + "".join(f"\n{m.get('role')}:{m.get('content') or ''}" for m in body.get("messages", []))


def _last_user(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content", "") if users else ""
    return content if isinstance(content, str) else json.dumps(content)
