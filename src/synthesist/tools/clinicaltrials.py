"""ClinicalTrials.gov API v2: trial registrations as :class:`~synthesist.models.Evidence`.

Two pure parsers read the answers of ``GET /api/v2/studies`` (a ``studies`` list and a ``nextPageToken``) and
``GET /api/v2/studies/{nctId}`` (one study object, no wrapper). :class:`ClinicalTrialsSource` fetches pages
through the shared :class:`~synthesist.tools.http.Fetcher`, asking only for the fields the parsers read, and
follows ``nextPageToken`` until it has ``limit`` studies or the registry has no more.

The registry's enumerations (``PHASE2``, ``RECRUITING``, ``INTERVENTIONAL``) are kept verbatim in
:class:`~synthesist.models.TrialInfo`; readable phase names ("Phase 2") go to ``publication_types``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..config import ClinicalTrialsSettings
from ..errors import ParseError
from ..identity import evidence_id, make_identifiers, page_url
from ..models import Evidence, PostedResult, SourceLink, TrialInfo, TrialOutcome
from .http import Fetcher
from .source import load_json, parse_each, rank_by_position

log = logging.getLogger("synthesist.tools.clinicaltrials")

SOURCE = "trials"
MAX_PAGE_SIZE = 1000

FIELDS = (
    "protocolSection.identificationModule",
    "protocolSection.statusModule",
    "protocolSection.descriptionModule.briefSummary",
    "protocolSection.conditionsModule.conditions",
    "protocolSection.designModule",
    "protocolSection.armsInterventionsModule.interventions",
    "protocolSection.outcomesModule",
    "resultsSection.outcomeMeasuresModule",
    "hasResults",
)
"""What :meth:`ClinicalTrialsSource.search` asks for: exactly what :func:`parse_studies` reads."""

_OUTCOME_KEYS = (("primaryOutcomes", "primary"), ("secondaryOutcomes", "secondary"), ("otherOutcomes", "other"))
_PHASE = re.compile(r"^(EARLY_)?PHASE(\d)$")
_YEAR = re.compile(r"^(\d{4})")
_OUTCOMES_IN_CONTENT = 3


@dataclass(frozen=True)
class StudiesPage:
    """One page of ``/studies``: its studies, the token of the next page, and the total when it was counted."""

    evidence: list[Evidence]
    next_page_token: str | None
    total_count: int | None = None


def parse_studies(data: bytes) -> StudiesPage:
    """Parse a ``GET /studies`` answer. A study without a valid NCT id or any text is skipped and logged."""
    payload = load_json(data, SOURCE)
    if not isinstance(payload, dict) or not isinstance(payload.get("studies"), list):
        raise ParseError(SOURCE, "expected an object with a 'studies' list")
    evidence = parse_each(payload["studies"], _study_evidence, SOURCE, "study")
    token = payload.get("nextPageToken")
    total = payload.get("totalCount")
    return StudiesPage(
        evidence=evidence,
        next_page_token=token if isinstance(token, str) and token else None,
        total_count=total if isinstance(total, int) else None,
    )


def parse_study(data: bytes) -> Evidence:
    """Parse a ``GET /studies/{nctId}`` answer: one study object without the ``studies`` wrapper."""
    return _study_evidence(load_json(data, SOURCE))




def _study_evidence(study: Any) -> Evidence:
    if not isinstance(study, dict) or not isinstance(study.get("protocolSection"), dict):
        raise ParseError(SOURCE, "expected a study object with a 'protocolSection'")
    protocol = study["protocolSection"]
    ident = _module(protocol, "identificationModule")
    identifiers = make_identifiers(nct=ident.get("nctId"))
    nct = identifiers.nct
    if nct is None:
        raise ParseError(SOURCE, "study without a valid nctId")
    trial = _trial_info(protocol, has_results=study.get("hasResults") is True).model_copy(update={
        "sponsor": _text(_module(_module(protocol, "sponsorCollaboratorsModule"), "leadSponsor").get("name")),
        "acronym": _text(ident.get("acronym")), "brief_title": _text(ident.get("briefTitle"))})
    posted = _posted_results(_module(_module(study, "resultsSection"), "outcomeMeasuresModule"))
    if posted:
        trial = trial.model_copy(update={"posted_results": posted})
    url = page_url("nct", nct)
    summary = _text(_module(protocol, "descriptionModule").get("briefSummary"))
    try:
        return Evidence(
            id=evidence_id(identifiers, url),
            source=SOURCE,
            title=_text(ident.get("officialTitle")) or _text(ident.get("briefTitle")),
            content=_content(summary, trial.outcomes),
            url=url,
            identifiers=identifiers,
            year=_year(trial.start_date),
            publication_types=("Clinical Trial", *filter(None, map(phase_label, trial.phases))),
            has_abstract=bool(summary),
            trial=trial,
            links=(SourceLink(source=SOURCE, native_id=nct, url=url),),
        )
    except ValidationError as exc:
        raise ParseError(SOURCE, f"{nct}: {exc.errors()[0]['msg']}") from exc


def _trial_info(protocol: dict[str, Any], *, has_results: bool) -> TrialInfo:
    status = _module(protocol, "statusModule")
    design = _module(protocol, "designModule")
    enrollment = _module(design, "enrollmentInfo").get("count")
    return TrialInfo(
        phases=_strings(design.get("phases")),
        overall_status=_text(status.get("overallStatus")),
        conditions=_strings(_module(protocol, "conditionsModule").get("conditions")),
        interventions=_interventions(_module(protocol, "armsInterventionsModule").get("interventions")),
        enrollment=enrollment if isinstance(enrollment, int) and enrollment >= 0 else None,
        has_results=has_results,
        study_type=_text(design.get("studyType")),
        start_date=_text(_module(status, "startDateStruct").get("date")),
        completion_date=_text(_module(status, "completionDateStruct").get("date")),
        outcomes=_outcomes(_module(protocol, "outcomesModule")),
    )


def _interventions(raw: Any) -> tuple[str, ...]:
    found = []
    for item in raw if isinstance(raw, list) else []:
        name = _text(item.get("name")) if isinstance(item, dict) else None
        if name:
            kind = _text(item.get("type"))
            found.append(f"{kind}: {name}" if kind else name)
    return tuple(dict.fromkeys(found))


def _outcomes(module: dict[str, Any]) -> tuple[TrialOutcome, ...]:
    found = []
    for key, kind in _OUTCOME_KEYS:
        for item in module.get(key) or []:
            measure = _text(item.get("measure")) if isinstance(item, dict) else None
            if measure:
                found.append(TrialOutcome(kind=kind, measure=measure, time_frame=_text(item.get("timeFrame"))))
    return tuple(found)


def _posted_results(module: dict[str, Any]) -> tuple[PostedResult, ...]:
    """Every statistical analysis of the posted outcome measures that states an estimate, numbers kept as the
    registry's strings (a number the registry sends as JSON number is kept as its printed form)."""
    found = []
    for measure in module.get("outcomeMeasures") or []:
        if not isinstance(measure, dict) or not _text(measure.get("title")):
            continue
        groups = {g.get("id"): _text(g.get("title")) for g in measure.get("groups") or [] if isinstance(g, dict)}
        kind = (_text(measure.get("type")) or "other").lower()
        for analysis in measure.get("analyses") or []:
            if not isinstance(analysis, dict) or _number(analysis.get("paramValue")) is None:
                continue
            ids = [i for i in analysis.get("groupIds") or [] if isinstance(i, str)]
            found.append(PostedResult(
                outcome=_text(measure["title"]) or "", kind=kind if kind in ("primary", "secondary") else "other",
                groups=tuple(title for i in ids if (title := groups.get(i))),
                param_type=_text(analysis.get("paramType")), value=_number(analysis.get("paramValue")),
                ci_percent=_number(analysis.get("ciPctValue")), ci_low=_number(analysis.get("ciLowerLimit")),
                ci_high=_number(analysis.get("ciUpperLimit")), p_value=_number(analysis.get("pValue")),
                method=_text(analysis.get("statisticalMethod")),
            ))
    return tuple(found)


def _number(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return f"{value:g}"
    return _text(value)


def _content(summary: str | None, outcomes: tuple[TrialOutcome, ...]) -> str:
    primary = [o for o in outcomes if o.kind == "primary"][:_OUTCOMES_IN_CONTENT]
    if not primary:
        return summary or ""
    described = "; ".join(f"{o.measure} ({o.time_frame})" if o.time_frame else o.measure for o in primary)
    line = f"Primary outcome: {described}"
    return f"{summary}\n\n{line}" if summary else line


def phase_label(phase: str) -> str | None:
    """A readable phase name: ``PHASE2`` → ``Phase 2``, ``EARLY_PHASE1`` → ``Early Phase 1``; ``NA`` → None."""
    match = _PHASE.match(phase)
    if not match:
        return None
    return f"{'Early ' if match.group(1) else ''}Phase {match.group(2)}"


def _module(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return (value.strip() or None) if isinstance(value, str) else None


def _strings(value: Any) -> tuple[str, ...]:
    items = value if isinstance(value, list) else []
    return tuple(dict.fromkeys(text for text in map(_text, items) if text))


def _year(date: str | None) -> int | None:
    match = _YEAR.match(date or "")
    year = int(match.group(1)) if match else None
    return year if year is not None and 1000 <= year <= 2200 else None


class ClinicalTrialsSource:
    """Searches ClinicalTrials.gov; ranks studies in the registry's order (relevance 1.0 down to 0.5)."""

    name = "trials"

    def __init__(self, fetcher: Fetcher, settings: ClinicalTrialsSettings):
        self._fetcher = fetcher
        self._settings = settings

    async def search(self, query: str, limit: int) -> list[Evidence]:
        found: list[Evidence] = []
        token: str | None = None
        while len(found) < limit:
            response = await self._fetcher.get(
                self.name,
                f"{self._settings.base_url.rstrip('/')}/studies",
                params=self._params(query, limit, token),
                rate_per_second=self._settings.rate_per_second,
            )
            try:
                page = parse_studies(response.body)
            except ParseError as exc:
                raise ParseError(self.name, exc.message) from exc
            found.extend(page.evidence)
            log.debug("%s: %d studies (total %s)", self.name, len(found), page.total_count)
            if not page.evidence or page.next_page_token in (None, token):
                break
            token = page.next_page_token
        return rank_by_position(found[:limit])

    def _params(self, query: str, limit: int, token: str | None) -> dict[str, str | int]:
        params: dict[str, str | int] = {
            "query.term": query,
            "pageSize": min(limit, MAX_PAGE_SIZE),
            "format": "json",
            "countTotal": "true",
            "fields": ",".join(FIELDS),
        }
        if self._settings.status_filter:
            params["filter.overallStatus"] = ",".join(self._settings.status_filter)
        if token:
            params["pageToken"] = token
        return params
