"""The page's "Where the evidence disagrees" and certainty boxes, in a real browser, from a real conflict between
two library abstracts (the page's own ``appraisal`` function renders the report JSON the service returns)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from browser import needs_chromium
from live_server import LiveServer

sys.path.insert(0, str(Path(__file__).parent / "appraisal"))
from test_conflicts import ESOPHAGUS, GIST, SURGERY, conflicts_of, library  # noqa: E402

from synthesist.composition import Seams, Shared  # noqa: E402
from synthesist.config import load_settings  # noqa: E402
from synthesist.memory import Embedder, open_chroma  # noqa: E402
from synthesist.models import Alignment, CertaintyStep, OutcomeCertainty, ResearchReport, TrialLink  # noqa: E402
from synthesist.render.appraisal import appraisal_lines  # noqa: E402
from synthesist.service import create_app  # noqa: E402
from synthesist.service.views import report_view  # noqa: E402

pytestmark = needs_chromium


def test_the_page_shows_both_quotes_of_a_conflict_and_every_certainty_step(
        browser_page, shared_dir: Path,
        tmp_path: Path, embedder: Embedder) -> None:  # type: ignore[no-untyped-def]
    conflicts = conflicts_of(SURGERY, library(shared_dir, GIST, ESOPHAGUS))
    certainty = OutcomeCertainty(outcome="survival", certainty="very_low", evidence_ids=(f"pmid:{GIST}",),
                                 answers_question=True, steps=(
                                     CertaintyStep(domain="design", change=0, reason="starts low: cohort"),
                                     CertaintyStep(domain="inconsistency", change=-1, reason="1 conflict")))
    trial = TrialLink(nct="NCT03934567", registry_id="nct:NCT03934567", paper_ids=("pmid:93000001", "pmid:93000002"),
                      matched_by=("NCT number", "title and sponsor"))
    report = ResearchReport(title="t", executive_summary="s", methodology="m", conflicts=conflicts,
                            certainty=(certainty,), trials=(trial,))
    settings = load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral"})
    app = create_app(settings, seams=Seams(shared=Shared(client=open_chroma(settings), embedder=embedder)))
    page = browser_page
    with LiveServer(app) as server:
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server.url + "/")
        page.wait_for_selector("#go")
        assert errors == [] and page.evaluate("typeof appraisal") == "function"
        assert page.locator("#conflicts-box").count() == 1 and page.locator("#conflicts-box").is_hidden()
        page.evaluate(f"appraisal({json.dumps(report_view(report))})")

        assert page.locator("#conflicts-box").is_visible()
        text = page.text_content("#conflicts")
        assert "surgery and survival" in text and "significantly improved event free survival" in text
        assert "no difference in clinical toxicity profiles or survival outcomes" in text
        assert "Likely reasons: size: 125 vs not stated participants; population:" in text
        assert page.locator("#conflicts a").first.get_attribute("href") == "#" + page.evaluate(
            f"rowId('pmid:{GIST}')")
        steps = page.locator("#certainty li").all_text_contents()
        assert steps == ["starts low: cohort", "one level down for inconsistency (1 conflict)"]  # report.md's
        # one registered trial, one study: its registry record and the papers that report it, each with how
        assert page.text_content("#certainty .trial") == (
            "NCT03934567, one study: registry record [nct:NCT03934567]; reported by [pmid:93000001] (NCT number), "
            "[pmid:93000002] (title and sponsor)")
        assert "Trial registrations checked" in page.text_content("#certainty")  # report.md's heading

        # a run whose reports of the trial only relate to the question: report.md lists no registration, nor does
        # the page (it once showed every registration under the certainty heading)
        related = Alignment(evidence_id="pmid:93000001", label="related", relevance=0.3)
        other = report.model_copy(update={"conflicts": (), "certainty": (), "alignment": (related,)})
        assert "Trial registrations checked" not in "\n".join(appraisal_lines(other, lambda _: None))
        page.evaluate(f"appraisal({json.dumps(report_view(other))})")
        assert page.locator("#certainty-box").is_hidden() and page.locator("#certainty .trial").count() == 0
