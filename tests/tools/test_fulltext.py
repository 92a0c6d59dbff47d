"""Open-access full texts from Europe PMC's ``/{PMCID}/fullTextXML`` against a local server."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthesist.composition import build_network_sources
from synthesist.config import Settings, with_overrides
from synthesist.errors import ParseError, SourceError
from synthesist.testing import FixtureServer, Reply
from synthesist.tools.europepmc import EuropePMCSource
from synthesist.tools.fulltext import FullTextClient, FullTextSource, article_pmcid
from synthesist.tools.http import Fetcher, open_client

FIXTURES = Path(__file__).parent / "fixtures"
REST = "/europepmc/webservices/rest"


def epmc(settings: Settings, server: FixtureServer, **extra: object) -> Settings:
    return with_overrides(settings, {"europepmc": {"base_url": server.url + REST, "rate_per_second": 200.0},
                                     **extra})


@pytest.mark.parametrize(("raw", "pmcid"), [("PMC2858204", "PMC2858204"), ("pmc2858204", "PMC2858204"),
                                            ("2858204", "PMC2858204"), ("pmcid:PMC2858204", "PMC2858204"),
                                            ("PMC", None), ("10.1000/x", None)])
def test_article_pmcid(raw: str, pmcid: str | None):
    assert article_pmcid(raw) == pmcid


async def test_fetch_reads_the_full_text_url_and_parses_it(server, settings):
    server.route(f"{REST}/PMC9000021/fullTextXML", Reply.file(FIXTURES / "jats_trial.nxml"))
    settings = epmc(settings, server)

    async with open_client(settings) as client:
        article = await FullTextClient(Fetcher(client, settings), settings.europepmc).fetch("pmc9000021")

    assert article is not None and article.pmcid == "PMC9000021" and len(article.passages) == 11
    assert len(server.requests_to(f"{REST}/PMC9000021/fullTextXML")) == 1


async def test_no_open_access_text_is_none_and_a_server_error_is_a_source_error(server, settings):
    server.route(f"{REST}/PMC1/fullTextXML", Reply(status=404, body=b"<error/>", content_type="text/xml"))
    server.route(f"{REST}/PMC2/fullTextXML", Reply(status=500))
    server.route(f"{REST}/PMC3/fullTextXML", Reply.file(FIXTURES / "billion_laughs.xml"))
    settings = epmc(settings, server, http={"max_retries": 0, "timeout": 2.0, "cache_enabled": False})

    async with open_client(settings) as client:
        full_texts = FullTextClient(Fetcher(client, settings), settings.europepmc)
        assert await full_texts.fetch("PMC1") is None
        with pytest.raises(SourceError) as failed:
            await full_texts.fetch("PMC2")
        assert failed.value.status_code == 500
        with pytest.raises(ParseError):
            await full_texts.fetch("PMC3")


async def test_full_text_source_attaches_passages_and_keeps_records_without_them(server, settings):
    server.route(f"{REST}/search", Reply.file(FIXTURES / "europepmc_core_page1.json"),
                 Reply.file(FIXTURES / "europepmc_core_page2.json"))
    server.route(f"{REST}/PMC9000011/fullTextXML", Reply.file(FIXTURES / "jats_trial.nxml"))
    server.route(f"{REST}/PMC9000013/fullTextXML", Reply(status=500))
    settings = epmc(settings, server, http={"max_retries": 0, "timeout": 2.0, "cache_enabled": False})
    settings = with_overrides(settings, {"europepmc": {"page_size": 2}})

    async with open_client(settings) as client:
        fetcher = Fetcher(client, settings)
        source = FullTextSource(EuropePMCSource(fetcher, settings.europepmc), FullTextClient(fetcher,
                                                                                             settings.europepmc))
        found = await source.search("metformin", 10)

    assert source.name == "europepmc"
    by_id = {item.id: item for item in found}
    assert len(by_id["pmid:90000011"].passages) == 11  # the record keeps its own id and abstract
    assert by_id["pmid:90000011"].content.startswith("Background: Metformin")
    assert by_id["pmcid:PMC9000013"].passages == ()  # its full text failed: the record is not lost
    assert by_id["doi:10.1101/2025.01.02.25300012"].passages == ()  # a preprint without a PMCID: not asked
    assert [(p.pmcid, "HTTP 500" in p.reason) for p in source.problems] == [("PMC9000013", True)]


async def test_pmcid_of_a_pmid_asks_europe_pmc_search(server, settings):
    server.route(f"{REST}/search", Reply.file(FIXTURES / "europepmc_core_page1.json"))
    settings = epmc(settings, server)

    async with open_client(settings) as client:
        pmcid = await FullTextClient(Fetcher(client, settings), settings.europepmc).pmcid_of("90000011")

    assert pmcid == "PMC9000011"
    assert server.requests_to(f"{REST}/search")[0].param("query") == "EXT_ID:90000011 AND SRC:MED"


async def test_the_real_articles_served_at_the_full_text_url(shared_dir: Path, server, settings):
    files = sorted((shared_dir / "fixtures" / "fulltext").glob("*.nxml"))
    for number, path in enumerate(files):
        server.route(f"{REST}/PMC{number + 1}/fullTextXML", Reply.file(path, content_type="application/xml"))
    settings = epmc(settings, server)

    async with open_client(settings) as client:
        full_texts = FullTextClient(Fetcher(client, settings), settings.europepmc)
        articles = [await full_texts.fetch(f"PMC{number + 1}") for number in range(len(files))]

    assert len(articles) == 8 and all(a is not None and a.has_body for a in articles)
    tables = [p for a in articles if a for p in a.passages if p.kind == "table"]
    assert any("HR" in t.text and "95%" in t.text for t in tables)  # hazard ratios with CIs


def test_the_composition_root_wraps_pubmed_and_europepmc_only_when_asked(settings):
    names = ["pubmed", "europepmc", "preprints", "trials"]
    plain = build_network_sources(names, None, settings)  # type: ignore[arg-type]
    on = with_overrides(settings, {"search": {"full_texts": 3}})
    wrapped = build_network_sources(names, None, on)  # type: ignore[arg-type]

    assert not any(isinstance(source, FullTextSource) for source in plain)
    assert [type(s).__name__ for s in wrapped] == ["FullTextSource", "FullTextSource", "EuropePMCSource",
                                                    "ClinicalTrialsSource"]
    assert [s.name for s in wrapped] == ["pubmed", "europepmc", "preprints", "trials"]
    assert wrapped[0].limit == 3
