"""Real-looking biomedical texts whose similarities the memory tests rely on (and assert), and record builders."""

from __future__ import annotations

from synthesist.identity import evidence_id, make_identifiers
from synthesist.models import Evidence

PREPRINT = (
    "Metformin reduces colorectal cancer risk in type 2 diabetes: a cohort study. Among 45,000 patients with type 2 "
    "diabetes followed for a median of 6 years, metformin users had a 25% lower incidence of colorectal cancer than "
    "users of sulfonylureas (hazard ratio 0.75, 95% CI 0.64-0.88)."
)
PUBLISHED = (
    "Metformin and the risk of colorectal cancer in type 2 diabetes: a cohort study. In 45,000 type 2 diabetic "
    "patients followed for a median of six years, those taking metformin had a 25% lower colorectal cancer incidence "
    "compared with sulfonylurea users (HR 0.75; 95% CI, 0.64 to 0.88)."
)
"""The journal version of :data:`PREPRINT`: the same finding, reworded (cosine ≈ 0.98)."""
RELATED = (
    "Metformin and survival after pancreatic cancer diagnosis in type 2 diabetes. In 1,200 diabetic patients with "
    "resected pancreatic adenocarcinoma, metformin use was associated with longer overall survival (hazard ratio "
    "0.80, 95% CI 0.68-0.94)."
)
"""Same drug, population and design as :data:`PUBLISHED`, a different finding (cosine ≈ 0.79)."""

COLORECTAL_VERSIONS = (
    "Metformin lowers colorectal cancer incidence in type 2 diabetes. In a cohort of 45,000 patients with type 2 "
    "diabetes, metformin users had a 25% lower incidence of colorectal cancer than sulfonylurea users.",
    "Metformin and colorectal cancer incidence in type 2 diabetes. Among 45,000 type 2 diabetic patients, those "
    "taking metformin developed colorectal cancer 25% less often than those taking sulfonylureas.",
    "Colorectal cancer incidence is lower with metformin in type 2 diabetes. In 45,000 patients with type 2 diabetes, "
    "metformin was associated with a 25% reduction in colorectal cancer incidence compared with sulfonylureas.",
)
"""Three near-paraphrases of one finding (pairwise cosine ≈ 0.96–0.97)."""
OTHER_FINDINGS = (
    "Metformin and survival after pancreatic cancer in diabetes. In 1,200 diabetic patients with resected pancreatic "
    "adenocarcinoma, metformin use was associated with longer overall survival.",
    "Metformin use and breast cancer risk in postmenopausal women with diabetes. In the Women's Health Initiative, "
    "diabetic women treated with metformin had fewer breast cancers than women on other diabetes drugs.",
    "Metformin inhibits mTOR signalling through AMPK activation in breast cancer cells. In MCF-7 cells, metformin "
    "activated AMPK, suppressed mTOR and reduced cell proliferation.",
)
"""Three different findings about metformin and cancer, each a little less relevant to :data:`DIVERSITY_QUERY`."""
DIVERSITY_QUERY = "Does metformin protect against cancer in type 2 diabetes?"

UNRELATED = (
    "Statin therapy and cardiovascular events in older adults. In 18,000 adults over 70, statins lowered LDL "
    "cholesterol and reduced major cardiovascular events without excess myopathy.",
    "Vitamin D supplementation and fracture risk. A randomised trial of 25,000 adults found no reduction in "
    "fractures with daily vitamin D3 compared with placebo.",
    "Aspirin for primary prevention and gastrointestinal bleeding. Low-dose aspirin increased major bleeding, "
    "mostly gastrointestinal, in adults without cardiovascular disease.",
)


def make_evidence(
    text: str,
    *,
    title: str | None = None,
    source: str = "pubmed",
    **identifiers: str,
) -> Evidence:
    """Evidence with the id :func:`synthesist.identity.evidence_id` would give it."""
    ids = make_identifiers(**identifiers)
    return Evidence(
        id=evidence_id(ids),
        source=source,
        title=title,
        content=text,
        identifiers=ids,
        is_preprint=source == "preprint",  # type: ignore[arg-type]
    )
