"""The web source through its one seam: a scripted ddgs client; real ddgs exceptions are translated."""

from __future__ import annotations

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from synthesist.config import WebSettings
from synthesist.errors import RateLimitedError, SourceError, SourceTimeoutError
from synthesist.testing import ScriptedWebClient
from synthesist.tools.ratelimit import RateLimitRegistry
from synthesist.tools.web import WebSource, parse_web_results

ROWS = [
    {"title": "Metformin and cancer risk - PubMed", "href": "https://pubmed.ncbi.nlm.nih.gov/19307517/",
     "body": "Metformin use was associated with a lower risk of cancer in type 2 diabetes."},
    {"title": "A trial of metformin", "href": "https://clinicaltrials.gov/study/NCT01101438",
     "body": "Metformin in breast cancer (MA.32)."},
    {"title": "Review", "href": "https://doi.org/10.1016/S1470-2045(14)70106-5", "body": "A review."},
    {"title": "Blog", "href": "https://example.org/metformin", "body": "An opinion."},
    {"title": "", "href": "javascript:void(0)", "body": "not a link"},
]


def fast_settings() -> WebSettings:
    return WebSettings(rate_per_second=1000.0)


def test_results_carry_identifiers_found_in_their_urls() -> None:
    evidence = parse_web_results(ROWS)
    assert [e.id for e in evidence] == [
        "pmid:19307517",
        "nct:NCT01101438",
        "doi:10.1016/s1470-2045(14)70106-5",
        "url:https://example.org/metformin",
    ]
    assert all(e.source == "web" and not e.has_abstract for e in evidence)
    assert evidence[0].relevance == 1.0 and evidence[-1].relevance == 0.5


async def test_search_uses_the_injected_client_and_respects_limit() -> None:
    client = ScriptedWebClient({"metformin cancer": ROWS})
    source = WebSource(fast_settings(), client, limits=RateLimitRegistry())
    found = await source.search("metformin cancer", 2)
    assert [e.id for e in found] == ["pmid:19307517", "nct:NCT01101438"]
    assert client.calls[0][1]["max_results"] == 2


@pytest.mark.parametrize(
    ("error", "expected", "kind"),
    [
        (RatelimitException("202 Ratelimit"), RateLimitedError, "rate_limited"),
        (TimeoutException("timed out"), SourceTimeoutError, "timeout"),
        (DDGSException("ConnectError: [Errno -2] Name or service not known"), SourceError, "unreachable"),
    ],
)
async def test_ddgs_exceptions_become_source_errors(error, expected, kind) -> None:
    source = WebSource(fast_settings(), ScriptedWebClient(error=error), limits=RateLimitRegistry())
    with pytest.raises(expected) as info:
        await source.search("q", 5)
    assert info.value.kind == kind and info.value.source == "web"
    assert info.value.__cause__ is error


async def test_no_results_is_an_empty_list_not_an_error() -> None:
    source = WebSource(fast_settings(), ScriptedWebClient(error=DDGSException("No results found.")),
                       limits=RateLimitRegistry())
    assert await source.search("zzzz", 5) == []
