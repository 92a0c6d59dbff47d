"""The claim check: every report sentence that cites is checked against the text of the items it cites.

A sentence is *supported* when the cited text says it. Offline, the check reads the sentence and the cited items'
passages (sentences, adjacent pairs, a full text's body units) with its signals in order — ``number``,
``population``, ``generalises``, ``negation`` / ``direction``, ``not_in_source`` — and the first that fails names the
reason; a sentence quoted word for word passes at once. With an LLM configured, the sentences that pass are also put
to the model as one NLI question; a model that fails leaves the offline verdicts standing. The signals and
thresholds: docs/architecture/contracts.md, "The claim check"; measured (not fitted) by
``bench/claim_check_bench.py`` on a labelled set built from real abstracts."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..llm.core import LLM
from ..memory import Embedder
from ..models import Alignment, Evidence, SupportJudgements, TokenUsage, UnsupportedClaim
from ..prompts import Boundary, render
from ..reading import lexicon
from ..reading.text import sentence_pieces, split_sentences, terms
from .citations import MARKER, cited_ids
from .passage_rank import body_units, shortlist
from .trials import trial_sentence

MIN_SIMILARITY = 0.62
"""Below this cosine with every cited passage, a sentence that is not a quotation says something else..."""
MIN_COVERAGE = 0.6
"""... unless it shares at least this share of its content terms with the cited items."""
STRONG_SIMILARITY = 0.75
"""From this cosine on a paraphrase needs only :data:`MIN_STRONG_COVERAGE` of its terms in the cited items."""
MIN_STRONG_COVERAGE = 0.5
CHECKED_AHEAD = 4
"""Answering items shown to a model whose abstracts the claim check embeds while the model is asked."""
AHEAD_BATCH = 8
"""Texts embedded at a time by work ahead that stops when its model call returns (:meth:`SupportChecker.prepare`)."""
NEAR_BEST = 0.05
"""Passages within this cosine of the best one are read for numbers too."""
SAME_PASSAGE = 0.02
BODY_UNITS = 24
"""Units of a cited full text's body read for one sentence (those sharing the most of its terms)."""
"""Passages within this cosine of the best one may settle the sentence's negation."""

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(?:\s?%)?")
_NEGATION = lexicon.pattern("claims", "NEGATION")
"""Negations of what a sentence asserts ("without", "absence of" qualify a population or a condition instead)."""
_UP = lexicon.pattern("claims", "UP")
_DOWN = lexicon.pattern("claims", "DOWN")
_UNIVERSAL = lexicon.pattern("claims", "UNIVERSAL")
_ANCHOR_WINDOW = 5
_QUANTITY = lexicon.pattern("claims", "QUANTITY")
POPULATIONS = lexicon.pairs("claims", "POPULATIONS")
"""A population and the words that name it (``reading/lexicons/claims.toml``)."""
_POPULATION = {name: re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
               for name, words in POPULATIONS.items()}
_LEAD_IN = re.compile(r"^\s*(?:[-*•]\s+|>\s*|\d+[.)]\s+)+")
_OUR_NOTES = re.compile(r"\s*\((?:confidence|cosine|n =?) ?[\d.]+\)|[;,]?\s*supported by\s*(?=[.;]|$)",
                        re.IGNORECASE)
"""What the report adds to a sentence, not the source: a hypothesis's confidence, "supported by" before its ids."""
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


@dataclass(frozen=True)
class Claim:
    """One sentence of a report that cites, where it sits (``executive_summary``, ``section: Clinical findings``…)."""

    text: str
    evidence_ids: tuple[str, ...]
    where: str

    @property
    def body(self) -> str:
        """The sentence without its markers, list bullet or quote marks."""
        plain = _OUR_NOTES.sub("", _LEAD_IN.sub("", MARKER.sub("", self.text)))
        return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(plain.translate(_QUOTES).replace('"', "").split()))


@dataclass(frozen=True)
class Verdict:
    """The check of one claim: supported or not, why not, and the cited passage that matched it best."""

    claim: Claim
    supported: bool
    reason: str = ""
    similarity: float = 0.0
    passage: str = ""
    passages: tuple[str, ...] = ()
    """The cited passages that match the sentence best (what a model check is shown)."""

    def unsupported(self) -> UnsupportedClaim:
        return UnsupportedClaim(text=self.claim.text, evidence_ids=self.claim.evidence_ids, reason=self.reason,
                                where=self.claim.where)


def claims_in(text: str, where: str) -> list[Claim]:
    """The sentences of ``text`` that carry a citation marker."""
    pieces = sentence_pieces(text)
    return [Claim(piece.strip(), tuple(cited_ids(piece)), where)
            for piece in pieces[::2] if MARKER.search(piece) and cited_ids(piece)]


def remove_sentences(text: str, dropped: Iterable[str]) -> str:
    """``text`` without the sentences in ``dropped`` (compared stripped); separators and line breaks survive."""
    gone = {sentence.strip() for sentence in dropped}
    if not gone:
        return text
    pieces = sentence_pieces(text)
    out: list[str] = []
    for index in range(0, len(pieces), 2):
        separator = pieces[index + 1] if index + 1 < len(pieces) else ""
        if pieces[index].strip() in gone:
            if "\n" in separator and out and not out[-1].endswith("\n"):
                out.append("\n")  # the line it ended stays a line; no blank line is left where it stood
            continue
        out.append(pieces[index] + separator)
    lines = [line for line in re.sub(r"[ \t]+\n", "\n", "".join(out)).split("\n") if line.strip() not in ("-", "*")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


class SupportChecker:
    """The offline check (see the module docstring). One per run or shared: it holds only the embedder."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    async def check(self, claims: Sequence[Claim], cited: Mapping[str, Evidence],
                    carried: Mapping[str, Sequence[str]] | None = None) -> list[Verdict]:
        """A verdict for each claim; ``cited`` maps every id the claims cite to its item (ids it lacks are skipped:
        fabricated citations are removed before this check). ``carried``: the full-text units each item's card
        showed the model (:func:`.cards.carried_passages`); a number the sentence read off one of them is found."""
        carried = carried or {}
        sources = [[cited[i] for i in claim.evidence_ids if i in cited] for claim in claims]
        wanted = [text for claim, items in zip(claims, sources, strict=True) if items and not _verbatim(claim, items)
                  for text in (claim.body, *_passages(items, terms(claim.body)))]
        if wanted:  # one batch: each claim below finds its vectors (and none loads the model for nothing)
            await self._embedder.embed(list(dict.fromkeys(wanted)))
        return [await self._check(claim, items, [text for i in claim.evidence_ids for text in carried.get(i, ())])
                for claim, items in zip(claims, sources, strict=True)]

    async def prepare(self, items: Sequence[Evidence], *, until: asyncio.Event | None = None) -> None:
        """Embed ahead what checking sentences that cite ``items`` will read of their abstracts (their sentences and
        pairs of sentences), so the check after the report does not wait for them: the report agent calls it while
        the model writes, for the items it will most likely cite (:func:`likely_cited`), and so does a round's team
        call, for the items its briefing shows, with ``until``: then the texts go :data:`AHEAD_BATCH` at a time and
        the work stops once ``until`` is set (the reply came): its batch in flight then ends on its own
        (:func:`~.base.left_behind`), and whatever embeds next waits for that batch at most.
        """
        texts = _passages(items) if items else []
        step = AHEAD_BATCH if until is not None else max(1, len(texts))
        for start in range(0, len(texts), step):
            if until is not None and until.is_set():
                return
            await self._embedder.embed(texts[start:start + step])

    async def _check(self, claim: Claim, items: Sequence[Evidence], carried: Sequence[str] = ()) -> Verdict:
        body = claim.body
        if not items:
            return Verdict(claim, False, "the cited items have no text to check against")
        source = " ".join(text for item in items for text in _texts(item))
        if _verbatim(claim, items):
            return Verdict(claim, True, similarity=1.0, passage=body, passages=(body,))
        passages = _passages(items, terms(body))
        vectors = await self._embedder.embed([body, *passages])
        similarities = vectors[1:] @ vectors[0]
        best = int(np.argmax(similarities))
        similarity, passage = float(similarities[best]), passages[best]
        near = [p for p, s in zip(passages, similarities, strict=True) if s >= similarity - NEAR_BEST]
        similarities_of = dict(zip(passages, similarities.tolist(), strict=True))

        def failed(reason: str) -> Verdict:
            return Verdict(claim, False, reason, similarity, passage)

        ranked = [passages[i] for i in np.argsort(-similarities)[:3]]
        missing = _missing_numbers(body, " ".join(dict.fromkeys([*ranked, *near, *carried])))
        if missing:
            return failed(f"number not in the cited source: {', '.join(missing)}")
        population = _missing_population(body, source)
        if population:
            return failed(f"population not in the cited source: {population}")
        universal = _missing_universal(body, source)
        if universal:
            return failed(f"generalises beyond the cited source ({universal!r} is not in it)")
        read_off = [p for p in carried if _numbers(body) and not _missing_numbers(body, p)]
        """The carried units that hold every number of the sentence: the lines it was read from."""
        if not any(_negated(p) == _negated(body) for p in [*near, *read_off]
                   if p in read_off or similarities_of[p] >= similarity - SAME_PASSAGE):
            return failed("negation disagrees with the cited passage")
        if _opposed(body, passage):
            return failed("direction of effect disagrees with the cited passage")
        coverage = _coverage(body, source, items)
        if coverage < MIN_STRONG_COVERAGE or (similarity < STRONG_SIMILARITY and (
                similarity < MIN_SIMILARITY or coverage < MIN_COVERAGE)):
            return failed(f"the cited source does not say this (its closest passage holds {coverage:.0%} of the "
                          "sentence's words)")
        return Verdict(claim, True, similarity=similarity, passage=passage,
                       passages=tuple(dict.fromkeys([*ranked, *read_off])))


MAX_MODEL_CLAIMS = 40
"""Sentences put to the model in its one call (the first ones in reading order)."""


async def entailment(llm: LLM, verdicts: Sequence[Verdict], *, boundary_cap: int, round: int = 0
                     ) -> tuple[list[Verdict], TokenUsage | None]:
    """The model's NLI verdict on the sentences that passed the offline check and are not quotations: each is shown
    with its best cited passages; one the model does not find entailed becomes unsupported (reason ``model: …``).
    Raises ModelError when the model fails (the caller keeps the offline verdicts)."""
    asked = [i for i, v in enumerate(verdicts) if v.supported and v.similarity < 1.0][:MAX_MODEL_CLAIMS]
    if not asked:
        return list(verdicts), None
    boundary = Boundary(cap=boundary_cap)
    claims = [{"index": n, "sentence": verdicts[i].claim.body, "passages": list(verdicts[i].passages)}
              for n, i in enumerate(asked)]
    prompt = render("claims_task", claims=claims, boundary=boundary)
    reply = await llm.call(agent="claims", output_type=SupportJudgements, system=render("claims_system",
                           boundary=boundary), prompt=prompt, round=round)
    out = list(verdicts)
    for judgement in reply.output.judgements:
        if 0 <= judgement.index < len(asked) and not judgement.supported:
            verdict = out[asked[judgement.index]]
            reason = " ".join(judgement.reason.split())[:200] or "the cited passages do not entail it"
            out[asked[judgement.index]] = replace(verdict, supported=False, reason=f"model: {reason}")
    return out, reply.usage


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.<>=]+", " ", text.translate(_QUOTES).lower()).split()).rstrip(".")


def _verbatim(claim: Claim, items: Sequence[Evidence]) -> bool:
    """The sentence is what the cited items say, word for word (or holds no content word): nothing to weigh."""
    source = " ".join(text for item in items for text in _texts(item))
    return _normal(claim.body) in _normal(source) or not terms(claim.body)


def likely_cited(shown: Sequence[Evidence], alignments: Sequence[Alignment]) -> list[Evidence]:
    """The items a report will most likely cite: the first :data:`CHECKED_AHEAD` of those ``shown`` to a model that
    answer the question, directly or indirectly (their alignments)."""
    answering = {a.evidence_id for a in alignments if a.label in ("answers", "indirect")}
    return [item for item in shown if item.id in answering][:CHECKED_AHEAD]


def _passages(items: Sequence[Evidence], wanted: frozenset[str] = frozenset()) -> list[str]:
    """Each cited item's sentences (title included) and adjacent pairs; for a full text, also the :data:`BODY_UNITS`
    body units (:mod:`.passage_rank`) sharing the most of the sentence's terms ``wanted``, table rows bare and with
    their caption, header and group heading (docs/architecture/contracts.md, "The claim check")."""
    passages: list[str] = []
    for item in items:
        title, content, *facts = _texts(item)
        sentences = [s.text for s in split_sentences(item.content if item.passages else content)]
        if title:
            sentences.insert(0, title)
        passages.extend(sentences)
        passages.extend(facts)
        passages.extend(f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False))
        for unit, text in shortlist(body_units(item), wanted, BODY_UNITS):
            passages.extend((unit.text, text) if text != unit.text else (text,))
    return list(dict.fromkeys(passages)) or [""]


def _texts(item: Evidence) -> list[str]:
    """What an item says: its title, its content (with its full text's paragraphs, tables and figure captions when
    one was read), and for a trial record its registry facts in one sentence."""
    facts = trial_sentence(item)
    body = "\n".join([item.content, *(p.text for p in item.passages if p.role != "abstract")])
    return [item.title or "", body, *([MARKER.sub("", facts).strip()] if facts else [])]


def _numbers(text: str) -> set[str]:
    found = set()
    for match in _NUMBER.finditer(text):
        value = match.group(1).replace(",", "")
        try:
            found.add(f"{float(value):g}")
        except ValueError:
            continue
    return found


def _missing_numbers(body: str, source: str) -> list[str]:
    return sorted(_numbers(body) - _numbers(source), key=lambda n: body.find(n))


def _missing_population(body: str, source: str) -> str | None:
    for name, pattern in _POPULATION.items():
        if pattern.search(body) and not pattern.search(source):
            return name
    return None


def _missing_universal(body: str, source: str) -> str | None:
    """A universal or absolute word of the sentence ("all", "every", "cures", "always") the cited text never uses."""
    for match in _UNIVERSAL.finditer(body):
        if not re.search(rf"\b{re.escape(match.group(0))}\b", source, re.IGNORECASE):
            return match.group(0)
    return None


def _negated(text: str) -> bool:
    return len(_NEGATION.findall(text)) % 2 == 1


def _directions(text: str) -> list[tuple[int, frozenset[str]]]:
    """Each effect word of ``text`` as (+1 up / −1 down, the content terms within a few words of it)."""
    words = _QUANTITY.sub(" ", text).split()  # "less than 13 months" compares a number, moves nothing
    signs = [_sign(word) for word in words]
    found: list[tuple[int, frozenset[str]]] = []
    for index, sign in enumerate(signs):
        if sign:
            window = [word for offset, word in enumerate(words[max(0, index - _ANCHOR_WINDOW): index + 1
                                                                + _ANCHOR_WINDOW], start=max(0, index - _ANCHOR_WINDOW))
                      if not signs[offset]]
            found.append((sign, terms(" ".join(window))))
    return found


def _sign(word: str) -> int:
    bare = re.sub(r"^\W+|\W+$", "", word)
    return 1 if _UP.fullmatch(bare) else -1 if _DOWN.fullmatch(bare) else 0


def _opposed(body: str, passage: str) -> bool:
    """Some effect word of the sentence is matched, in the passage, by the effect word about the same terms
    (the most shared terms, at least half of them) and that word points the other way."""
    theirs = _directions(passage)
    for sign, anchors in _directions(body):
        shared = [(len(anchors & their_anchors), their_sign) for their_sign, their_anchors in theirs]
        best = max((count for count, _ in shared), default=0)
        if best >= max(2, len(anchors) / 2) and all(their_sign == -sign for count, their_sign in shared
                                                    if count == best):
            return True
    return False


def _coverage(body: str, source: str, items: Sequence[Evidence]) -> float:
    """The share of the sentence's content terms found in the cited items, their titles and bibliographic data."""
    wanted = terms(body)
    metadata = " ".join(" ".join((*item.authors, item.journal or "", str(item.year or ""))) for item in items)
    return len(wanted & terms(f"{source} {metadata}")) / max(1, len(wanted))
