"""search_all: real source clients against one loopback server; failures reported beside results; merging."""

from __future__ import annotations

from pathlib import Path

from synthesist import api
from synthesist.composition import Seams
from synthesist.config import Settings, with_overrides
from synthesist.testing import FixtureServer, Reply, ScriptedWebClient

FIXTURES = Path(__file__).parent / "fixtures"

EPMC_SAME_WORK = {
    "version": "6.9",
    "hitCount": 1,
    "request": {"queryString": "metformin cancer", "resultType": "core", "cursorMark": "*", "pageSize": 10},
    "resultList": {
        "result": [
            {
                "id": "39100001", "source": "MED", "pmid": "39100001", "pmcid": "PMC11200001",
                "doi": "https://doi.org/10.1371/JOURNAL.PONE.0300001",
                "title": "Metformin and cancer incidence",
                "abstractText": "A longer abstract from Europe PMC about metformin and cancer incidence in diabetes.",
                "pubYear": "2024",
                "authorString": "Smith J, Doe A.",
                "pubTypeList": {"pubType": ["research-article", "Journal Article"]},
            }
        ]
    },
}


def point_at(settings: Settings, server: FixtureServer) -> Settings:
    return with_overrides(
        settings,
        {
            "pubmed": {"base_url": server.url + "/eutils", "rate_per_second": 100},
            "trials": {"base_url": server.url + "/ctgov/api/v2", "rate_per_second": 100},
            "europepmc": {"base_url": server.url + "/epmc/rest", "rate_per_second": 100},
            "web": {"rate_per_second": 100},
        },
    )


async def test_one_failing_source_does_not_fail_the_search_and_works_merge(
    server: FixtureServer, settings: Settings
) -> None:
    server.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch.json"))
    server.route("/eutils/efetch.fcgi", Reply.file(FIXTURES / "pubmed_efetch.xml"))
    server.route("/epmc/rest/search", Reply.json(EPMC_SAME_WORK))
    server.route("/ctgov/api/v2/studies", Reply.html_error(500))
    web = ScriptedWebClient({"metformin cancer": [
        {"title": "PubMed page", "href": "https://pubmed.ncbi.nlm.nih.gov/39100002/", "body": "snippet"},
    ]})

    result = await api.search("metformin cancer", sources="pubmed,trials,europepmc,web",
                              settings=point_at(settings, server), seams=Seams(web_client=web))

    assert [(e.source, e.kind, e.status_code) for e in result.errors] == [("trials", "http", 500)]
    assert result.counts == {"pubmed": 3, "trials": 0, "europepmc": 1, "web": 1}
    ids = [e.id for e in result.evidence]
    assert sorted(ids) == ["pmid:39100001", "pmid:39100002", "pmid:39100003"]
    assert result.merged_count == 2
    merged = next(e for e in result.evidence if e.id == "pmid:39100001")
    assert merged.sources == ("pubmed", "europepmc")
    assert merged.identifiers.pmcid == "PMC11200001"
    assert merged.identifiers.doi == "10.1371/journal.pone.0300001"
    assert next(e for e in result.evidence if e.id == "pmid:39100002").sources == ("pubmed", "web")


async def test_sources_run_concurrently(settings: Settings) -> None:
    with FixtureServer(latency=3.0) as slow:
        slow.route("/eutils/esearch.fcgi", Reply.file(FIXTURES / "pubmed_esearch_empty.json"))
        slow.route("/epmc/rest/search", Reply.file(FIXTURES / "europepmc_no_results.json"))
        slow.route("/ctgov/api/v2/studies", Reply.file(FIXTURES / "ctgov_studies_empty.json"))
        result = await api.search("x", sources="pubmed,trials,europepmc,preprints",
                                  settings=with_overrides(point_at(settings, slow), {"http": {"timeout": 30}}))
        arrivals = sorted(r.at for r in slow.requests)
    assert result.errors == () and result.evidence == ()
    assert len(arrivals) == 4
    assert arrivals[-1] - arrivals[0] < 3.0  # all four started before the first 3 s answer came back


async def test_check_sources_reports_each_source_clearly(settings: Settings) -> None:
    with FixtureServer() as gone:
        dead = point_at(settings, gone)
    checks = await api.check_sources("pubmed,trials", settings=dead)
    assert [(c.name, c.ok) for c in checks] == [("pubmed", False), ("trials", False)]
    assert all(c.detail.startswith("unreachable: cannot reach 127.0.0.1") for c in checks)
