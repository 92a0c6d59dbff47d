"""The OpenAI-style path over real HTTP against the loopback fixture server (no mocks, no internet)."""

from __future__ import annotations

import logging

import pytest

from synthesist.agents.llm import LLM, build_model
from synthesist.agents.model_spec import parse_model_spec
from synthesist.agents.query_plan import QueryPlan
from synthesist.agents.redaction import SecretFilter
from synthesist.config import Settings
from synthesist.errors import ModelError
from synthesist.testing import FixtureServer, Reply, chat_completion

OPENAI_KEY = "sk-test-openai-5e4d3c2b1a09876543210"
PLAN = {"queries": {"pubmed": ["metformin AMPK colorectal"], "trials": ["metformin colorectal cancer"]},
        "rationale": "mechanism and trials"}


@pytest.fixture
def compatible_llm(server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> LLM:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)  # must never reach a non-OpenAI server
    model = build_model(parse_model_spec(f"openai-compatible:mymodel@{server.url}/v1"), settings)
    assert model is not None
    return LLM(model, settings)


async def test_openai_compatible_server_round_trip(
    server: FixtureServer, compatible_llm: LLM, caplog: pytest.LogCaptureFixture
) -> None:
    server.route("/v1/chat/completions", chat_completion(PLAN))
    caplog.set_level(logging.DEBUG)
    async with compatible_llm as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="Plan searches.", prompt="Question: X")
    assert reply.output == QueryPlan.model_validate(PLAN)
    assert reply.usage.input_tokens == 120 and reply.usage.output_tokens == 30 and reply.usage.requests == 1
    assert reply.usage.model == "openai-compatible:mymodel" and reply.usage.cost_usd == 0.0

    (request,) = server.requests_to("/v1/chat/completions")
    body = request.json()
    assert request.method == "POST" and body["model"] == "mymodel"
    assert body["messages"] == [{"role": "system", "content": "Plan searches."},
                                {"role": "user", "content": "Question: X"}]
    assert [tool["function"]["name"] for tool in body["tools"]] == ["final_result"]
    assert "queries" in body["tools"][0]["function"]["parameters"]["properties"]
    assert body["temperature"] == 0.2
    assert OPENAI_KEY not in request.headers.get("authorization", "")
    assert OPENAI_KEY not in caplog.text


async def test_schema_violation_is_repaired_over_http(server: FixtureServer, compatible_llm: LLM) -> None:
    server.route("/v1/chat/completions", chat_completion('{"queries": ["not", "a", "mapping"]'), chat_completion(PLAN))
    async with compatible_llm as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert reply.output.queries["trials"] == ("metformin colorectal cancer",)
    first, second = server.requests_to("/v1/chat/completions")
    roles = [message["role"] for message in second.json()["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert reply.usage.requests == 2 and reply.usage.input_tokens == 240


async def test_http_401_becomes_a_scrubbed_model_error(
    server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-test-compatible-99887766554433"
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", key)
    echo = {"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}}
    server.route("/v1/chat/completions", Reply.json(echo, status=401))
    caplog.set_level(logging.DEBUG)
    caplog.handler.addFilter(SecretFilter())
    model = build_model(f"openai-compatible:mymodel@{server.url}/v1", settings)
    assert model is not None
    with pytest.raises(ModelError) as caught:
        async with LLM(model, settings) as llm:
            await llm.call(agent="judge", output_type=QueryPlan, system="s", prompt="p")
    error = caught.value
    assert error.status_code == 401 and error.kind == "auth"
    assert key not in str(error) and key not in repr(error.args)
    (request,) = server.requests_to("/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {key}"  # the compatible key went to the compatible server
    assert key not in caplog.text


async def test_openai_usage_is_priced_from_the_table(
    server: FixtureServer, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")  # the OpenAI SDK's own override: OpenAI stand-in
    server.route("/v1/chat/completions", chat_completion(PLAN, prompt_tokens=1000, completion_tokens=500))
    model = build_model("openai:gpt-4o-mini", settings, environ={"OPENAI_API_KEY": OPENAI_KEY})
    assert model is not None
    async with LLM(model, settings) as llm:
        reply = await llm.call(agent="search", output_type=QueryPlan, system="s", prompt="p")
    assert reply.usage.model == "openai:gpt-4o-mini"
    assert reply.usage.cost_usd == pytest.approx((1000 * 0.15 + 500 * 0.60) / 1_000_000)
    (request,) = server.requests_to("/v1/chat/completions")
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
