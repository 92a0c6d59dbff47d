"""The comparison of two runs of a watch, on items built the way the sources build them."""

from __future__ import annotations

from synthesist.models import (
    Answer,
    Evidence,
    Identifiers,
    ResearchReport,
    ResearchResult,
    TrialInfo,
    VersionLink,
)
from synthesist.watch import WatchChanges, compare, render_markdown

PREPRINT = Evidence(id="ppr:PPR700001", source="preprints", title="Metformin and colorectal adenoma (preprint)",
                    content="A randomised trial of metformin.", identifiers=Identifiers(ppr="PPR700001"),
                    is_preprint=True, publication_types=("Preprint",))
PUBLISHED = Evidence(id="pmid:39100001", source="pubmed", title="Metformin and colorectal adenoma",
                     content="A randomised trial of metformin.", identifiers=Identifiers(pmid="39100001"),
                     publication_types=("Randomized Controlled Trial",),
                     versions=(VersionLink(kind="preprint", other_id="ppr:PPR700001", via="europepmc"),))
TRIAL = Evidence(id="nct:NCT90000001", source="trials", title="Metformin in adenoma prevention",
                 identifiers=Identifiers(nct="NCT90000001"), trial=TrialInfo(overall_status="RECRUITING"))
COHORT = Evidence(id="pmid:38000001", source="pubmed", title="Metformin and breast cancer in a cohort",
                  content="A cohort of 48,000 women.", identifiers=Identifiers(pmid="38000001", doi="10.1/x"))


def _result(run_id: str, items: tuple[Evidence, ...], verdict: str = "yes", strength: str = "low") -> ResearchResult:
    answer = Answer(verdict=verdict, statement="…", strength=strength)  # type: ignore[arg-type]
    report = ResearchReport(title="t", executive_summary="s", methodology="m", answer=answer)
    return ResearchResult(run_id=run_id, question="Does metformin prevent cancer?", report=report, evidence=items,
                          stop_reason="sufficient", partial=False, rounds=1)


def test_a_preprint_merged_with_its_journal_version_is_published_not_new_and_gone() -> None:
    changes = compare("w1", _result("b", (PUBLISHED, TRIAL)), _result("a", (PREPRINT, TRIAL)))
    assert [(p.preprint_id, p.published_id) for p in changes.published] == [("ppr:PPR700001", "pmid:39100001")]
    assert changes.new == () and changes.gone == () and changes.changed == 1


def test_identifiers_match_items_whose_id_changed_and_trial_moves_are_changes() -> None:
    renamed = COHORT.model_copy(update={"id": "doi:10.1/x"})
    completed = TRIAL.model_copy(update={"trial": TrialInfo(overall_status="COMPLETED", has_results=True)})
    changes = compare("w1", _result("b", (renamed, completed)), _result("a", (COHORT, TRIAL)))
    assert changes.new == () and changes.gone == ()
    assert [(t.status_before, t.status_now, t.results_now) for t in changes.trials] == [
        ("RECRUITING", "COMPLETED", True)]


def test_a_retraction_notice_is_retracted_an_item_out_of_the_results_is_only_that_and_the_answer_move_is_seen(
        ) -> None:
    retracted = COHORT.model_copy(update={"publication_types": ("Journal Article", "Retracted Publication")})
    notice = PUBLISHED.model_copy(update={"id": "pmid:40517245", "identifiers": Identifiers(pmid="40517245"),
                                          "versions": (), "publication_types": ("retraction of publication",)})
    changes = compare("w1", _result("b", (retracted, notice), verdict="insufficient", strength="very_low"),
                      _result("a", (COHORT, TRIAL)))
    assert [g.id for g in changes.retracted] == ["pmid:38000001"]
    assert [g.id for g in changes.dropped] == ["nct:NCT90000001"]
    assert [n.id for n in changes.new] == ["pmid:40517245"]  # a retraction notice is another work, not a retraction
    assert changes.answer_moved and changes.strength_moved and not changes.nothing_new
    text = render_markdown(changes)
    assert "before: YES, strength low" in text and "now: INSUFFICIENT" in text
    assert "## Retracted (1)\n\n- `pmid:38000001`" in text and "now carries a retraction notice" in text
    assert "## No longer among the results (1)\n\n- `nct:NCT90000001`" in text
    assert text.lower().count("retract") == 2  # the heading and the notice: the dropped trial is never "retracted"


def test_changes_written_with_the_earlier_wording_still_read() -> None:
    earlier = {"watch_id": "w1", "question": "q", "run_id": "b", "answer_now": {},
               "gone": [{"id": "pmid:1", "title": "t", "reason": "no longer returned"}]}
    assert WatchChanges.model_validate(earlier).dropped[0].reason == "no longer among the results"


def test_the_same_items_and_answer_say_plainly_that_nothing_is_new_and_a_first_run_has_all_new() -> None:
    same = compare("w1", _result("b", (COHORT, TRIAL)), _result("a", (COHORT, TRIAL)))
    assert same.nothing_new and "Nothing new since the last run" in render_markdown(same)
    first = compare("w1", _result("a", (COHORT, TRIAL)), None)
    assert first.previous_run_id is None and len(first.new) == 2 and "first run" in render_markdown(first)


def test_a_disagreement_that_appears_or_goes_away_is_a_change() -> None:
    from synthesist.models import Conflict, ConflictSide  # noqa: PLC0415

    conflict = Conflict(kind="opposite", exposure="metformin", outcome="breast cancer incidence",
                        first=ConflictSide(evidence_id=COHORT.id, direction="decreased", quote="lower (HR 0.8)"),
                        second=ConflictSide(evidence_id=PUBLISHED.id, direction="increased", quote="higher (p=0.01)"))
    quiet, disputed = _result("a", (COHORT, PUBLISHED)), _result("b", (COHORT, PUBLISHED))
    disputed = disputed.model_copy(update={"report": disputed.report.model_copy(update={"conflicts": (conflict,)})})
    appeared = compare("w1", disputed, quiet)
    assert [(c.outcome, c.first_id, c.second_id) for c in appeared.conflicts_new] == [
        ("breast cancer incidence", COHORT.id, PUBLISHED.id)]
    assert not appeared.nothing_new and "Disagreements (1 new, 0 no longer)" in render_markdown(appeared)
    resolved = compare("w1", quiet.model_copy(update={"run_id": "c"}), disputed)
    assert len(resolved.conflicts_gone) == 1 and not resolved.conflicts_new and not resolved.nothing_new
