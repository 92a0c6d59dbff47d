"""The rule-based search planner: entities kept, question words gone, synonyms from MeSH, nothing run twice."""

from __future__ import annotations

from extractive_samples import QUESTION, RICH

from synthesist.extractive.queries import MAX_PER_SOURCE, normalise_query, plan_queries
from synthesist.reading.question import question_terms

SOURCES = ("pubmed", "trials", "preprints")


def test_question_words_and_stop_words_go_and_entities_stay_whole() -> None:
    terms = question_terms(QUESTION)
    assert terms.core_query() == "metformin risk breast cancer women type 2 diabetes"
    assert terms.interventions == ("metformin",)
    assert terms.conditions == ("breast cancer", "type 2 diabetes")
    for dropped in ("does", "reduce", "the", "of", "in", "with"):
        assert dropped not in terms.core_query().split()
    assert question_terms("What is the role of IGF-1 in COVID-19 outcomes?").keywords == ("IGF-1", "COVID-19")
    assert question_terms("Is stage 3 chronic kidney disease a risk for stroke?").conditions == (
        "stage 3 chronic kidney disease",
        "stroke",
    )


def test_first_round_runs_the_core_query_and_a_synonym_variant() -> None:
    plan = plan_queries(QUESTION, sources=("pubmed", "preprints"))
    expected = ("metformin risk breast cancer women type 2 diabetes", "metformin breast neoplasms")
    assert plan.queries == {"pubmed": expected, "preprints": expected}
    assert plan.rationale.startswith("First round")


def test_the_trial_registry_gets_short_intervention_condition_queries() -> None:
    plan = plan_queries(QUESTION, sources=("trials",))
    assert plan.queries["trials"] == ("metformin breast cancer", "metformin breast neoplasms")
    later = plan_queries(
        QUESTION,
        sources=("trials",),
        judge_queries=("metformin breast cancer randomized controlled trial", "metformin mechanism AMPK"),
        already_run={("trials", q) for q in plan.queries["trials"]},
    )
    assert later.queries["trials"]
    for query in later.queries["trials"]:
        assert len(query.split()) <= 4 and "randomized" not in query and "mechanism" not in query
        assert query not in plan.queries["trials"]


def test_lay_terms_get_their_mesh_names() -> None:
    plan = plan_queries("Can aspirin prevent a heart attack?", sources=("pubmed",))
    assert plan.queries["pubmed"] == ("aspirin heart attack", "aspirin myocardial infarction")


def test_later_rounds_ask_what_the_judge_and_hypotheses_asked_first() -> None:
    first = plan_queries(QUESTION, sources=SOURCES)
    ran = {(source, q) for source, queries in first.queries.items() for q in queries}
    plan = plan_queries(
        QUESTION,
        sources=SOURCES,
        judge_queries=("metformin breast cancer randomized controlled trial",),
        hypothesis_suggestions=("metformin AMPK breast cancer",),
        evidence=RICH,
        already_run=ran,
    )
    assert plan.queries["pubmed"][:2] == (
        "metformin breast cancer randomized controlled trial",
        "metformin AMPK breast cancer",
    )
    assert "judge" in plan.rationale and "hypothesis" in plan.rationale


def test_mesh_headings_of_the_evidence_become_synonym_queries() -> None:
    ran = {("pubmed", "metformin risk breast cancer women type 2 diabetes"), ("pubmed", "metformin breast neoplasms")}
    plan = plan_queries(QUESTION, sources=("pubmed",), evidence=RICH, already_run=ran)
    # "Diabetes Mellitus, Type 2" recurs in the evidence and names the question's "type 2 diabetes"; check tags
    # (Humans, Female) and headings the question already says (Metformin) are never synonyms.
    assert plan.queries["pubmed"][0] == "metformin diabetes mellitus type 2"
    assert "Diabetes Mellitus, Type 2" in plan.rationale
    assert not any("humans" in q or "female" in q for q in plan.queries["pubmed"])


def test_no_query_runs_twice_on_a_source_across_rounds() -> None:
    ran: list[tuple[str, str]] = []
    judge_queries = ("metformin breast cancer randomized controlled trial", "Metformin  Breast Cancer")
    for _ in range(6):
        plan = plan_queries(QUESTION, sources=SOURCES, judge_queries=judge_queries, evidence=RICH, already_run=ran)
        for source, queries in plan.queries.items():
            assert len(queries) <= MAX_PER_SOURCE
            for query in queries:
                assert (source, normalise_query(query)) not in {(s, normalise_query(q)) for s, q in ran}
                ran.append((source, query))
    assert len(ran) == len({(s, normalise_query(q)) for s, q in ran}) > 6
    exhausted = plan_queries(QUESTION, sources=SOURCES, judge_queries=judge_queries, evidence=RICH, already_run=ran)
    assert exhausted.queries == {}
