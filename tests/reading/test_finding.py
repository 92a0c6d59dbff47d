"""How a study's finding names the question's parts (reading/studies/naming.py) and finds its comparator
(reading/studies/finding.py), against golden sets as data: a part's core (``tests/data/part_cores.jsonl``), a trial's
comparator for the question (``tests/data/comparators.jsonl``: another active treatment's label, '' for a control,
null where the exposure is not the trial's intervention) and a trial's two arms that are both the exposure
(``tests/data/compared_forms.jsonl``: two routes, doses or timings of it, from its arms as read or its title),
each row with why it is there; a misreading adds a row. What one study found on the question's comparison, sentence
by sentence, is golden data too (tests/data/findings.jsonl, scored by tests/reading/test_findings.py), and so are the
sentences read as a finding reads them (``guess=False``, in tests/data/study_directions.jsonl)."""

from __future__ import annotations

import json
from pathlib import Path

from synthesist.models import Evidence
from synthesist.reading.studies.finding import comparator_of
from synthesist.reading.studies.naming import class_members, distinctive, exposure_names, part_core
from synthesist.reading.studies.record import forms_compared
from synthesist.study import Arm, StudyRecord

DATA = Path(__file__).resolve().parents[1] / "data"
CORES = [json.loads(line) for line in (DATA / "part_cores.jsonl").read_text(encoding="utf-8").splitlines() if line]
COMPARATORS = [json.loads(line) for line in (DATA / "comparators.jsonl").read_text(encoding="utf-8").splitlines()
               if line]
FORMS = [json.loads(line) for line in (DATA / "compared_forms.jsonl").read_text(encoding="utf-8").splitlines() if line]
FLOOR = 1.0
"""The share of each set's rows read right (every row when the sets were made): a row that fails is a misreading to
fix, or the floor is lowered with the reason."""


def test_every_golden_part_is_read_by_its_core():
    wrong = [f"{row['phrase']!r} → {found!r} (expected {row['core']!r}): {row['why']}" for row in CORES
             if (found := part_core(row["phrase"], outcome=row["outcome"])) != row["core"]]

    assert len(CORES) >= 6
    assert 1 - len(wrong) / len(CORES) >= FLOOR, "\n".join(wrong)


def test_every_golden_trial_has_the_comparator_a_researcher_reads():
    def comparator(row: dict) -> str | None:
        record = StudyRecord(evidence_id="pmid:1", design="randomised trial", arms=(
            Arm(role="intervention", label=row["intervention"]), Arm(role="comparator", label=row["comparator"])))
        return comparator_of(record, row["exposure"])

    wrong = [f"{row['intervention']} vs {row['comparator']} for {row['exposure']} → {found!r} (expected "
             f"{row['expected']!r}): {row['why']}" for row in COMPARATORS
             if (found := comparator(row)) != row["expected"]]

    assert len(COMPARATORS) >= 11 and {row["expected"] is None for row in COMPARATORS} == {True, False}
    assert sum(row["expected"] == "" for row in COMPARATORS) >= 3
    assert 1 - len(wrong) / len(COMPARATORS) >= FLOOR, "\n".join(wrong)


def test_every_golden_trial_of_forms_of_the_exposure_is_read_from_its_arms_or_title():
    def forms(row: dict) -> list[str] | None:
        labels = row.get("arms", ())
        roles = ("intervention", "comparator", *("arm",) * max(0, len(labels) - 2))
        arms = tuple(Arm(role=role, label=label) for role, label in zip(roles, labels, strict=False))
        found = forms_compared(Evidence(id="pmid:1", source="library", title=row["title"], content=""),
                               row["exposure"], arms)
        return list(found) if found else None

    wrong = [f"{row['title']!r} for {row['exposure']!r} → {found!r} (expected {row['expected']!r}): {row['why']}"
             for row in FORMS if (found := forms(row)) != row["expected"]]

    assert len(FORMS) >= 10 and {row["expected"] is None for row in FORMS} == {True, False}
    assert 1 - len(wrong) / len(FORMS) >= FLOOR, "\n".join(wrong)


def test_an_exposure_is_named_by_a_distinctive_word_its_class_members_and_its_initials():
    steroids = ("Among the 1,241 patients, 90-day mortality was 42.6% in the hydrocortisone group and 48.9% in the "
                "placebo group (P = 0.03).")
    pci = "PCI did not reduce all-cause mortality (risk ratio 0.96, 95% CI 0.86 to 1.08)."
    cephalosporin = ("SSI occurred in 5 patients (1.6%) in the cefazolin group and 15 (5.0%) in the placebo group "
                     "(p = 0.02).")

    assert distinctive("postmenopausal hormone replacement therapy") == frozenset({"hormon"})
    assert class_members("corticosteroids", steroids) == ["hydrocortisone"]
    assert class_members("antibiotic prophylaxis", cephalosporin) == ["cefazolin"]
    assert ("PCI", frozenset({"pci"})) in exposure_names("percutaneous coronary intervention", pci)
    assert ("fish oil", frozenset({"fish", "oil"})) in exposure_names("omega-3 fatty acids", "")
