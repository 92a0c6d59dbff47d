"""Open-i (NLM's open-access biomedical image search): image search and its parser.

``GET {base_url}/api/search`` takes ``query``, ``m``/``n`` (first and last result, 1-based, inclusive), ``it``
(image type: ``x`` X-ray, ``c`` CT, ``m`` MRI, ``u`` ultrasound, ``p`` PET, ``ph`` photograph, ``mc`` microscopy,
``g`` graphics, ``xg`` exclude graphics, ``xm`` exclude multipanel) and ``coll`` (collection: ``pmc`` PubMed
Central, ``cxr`` Indiana University chest X-rays, ``mpx`` MedPix, ``usc`` USC orthopaedic anatomy, ``hmd`` History
of Medicine). The API has no body-part filter, so a body part is added to the query text. We chose ``it=x`` as the
default. The index appears frozen around 2020 and answers take seconds.

Image paths in the answer are relative (``/imgs/512/…``); :func:`parse_openi` makes them absolute. The image
loop reads captions and report impressions only: no image is downloaded (the fetcher's redirect rule — same host
only — applies to every Open-i request).
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urljoin

from ..config import OpenISettings
from ..errors import BadInputError, ParseError
from ..models import Frozen
from .http import Fetcher
from .source import load_json

IMAGE_TYPES = ("x", "c", "m", "u", "p", "ph", "mc", "g", "xg", "xm")
COLLECTIONS = ("pmc", "cxr", "mpx", "usc", "hmd")
MAX_RESULTS = 100
MAX_IMAGE_BYTES = 20_000_000
"""Default cap on one downloaded image."""

_TAG = re.compile(r"<[^>]+>")
_PMCID = re.compile(r"^PMC\d+$")


class ImageLicense(Frozen):
    code: str | None = None
    """Creative Commons code as Open-i gives it (``by``, ``byncnd``…)."""
    kind: str | None = None
    """``licenseType``, e.g. ``open-access``."""
    url: str | None = None


class ImageHit(Frozen):
    """One Open-i image with the article or report it comes from."""

    uid: str
    title: str | None = None
    caption: str | None = None
    image_url: str
    thumb_url: str | None = None
    license: ImageLicense = ImageLicense()
    pmcid: str | None = None
    pmid: str | None = None
    modality: str | None = None
    problems: str | None = None
    impression: str | None = None
    mesh: tuple[str, ...] = ()


# --- parsing -----------------------------------------------------------------------------------------------------


def _clean(value: Any) -> str | None:
    """Text without HTML tags and entities, whitespace collapsed; None when empty or not a string."""
    if not isinstance(value, str):
        return None
    return " ".join(html.unescape(_TAG.sub(" ", value)).split()) or None


def _absolute(base_url: str, path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    return urljoin(base_url.rstrip("/") + "/", path.strip())


def _mesh(value: Any) -> tuple[str, ...]:
    if not isinstance(value, dict):
        return ()
    terms = [t for key in ("major", "minor") for t in value.get(key) or [] if isinstance(t, str)]
    return tuple(dict.fromkeys(t.strip() for t in terms if t.strip()))


def _hit(item: dict[str, Any], base_url: str) -> ImageHit | None:
    image_url = _absolute(base_url, item.get("imgLarge"))
    uid = _clean(item.get("uid"))
    if not image_url or not uid:
        return None
    image = item.get("image") if isinstance(item.get("image"), dict) else {}
    pmcid = (_clean(item.get("pmcid")) or "").upper()
    return ImageHit(
        uid=uid,
        title=_clean(item.get("title")),
        caption=_clean(image.get("caption")),
        image_url=image_url,
        thumb_url=_absolute(base_url, item.get("imgThumb")),
        license=ImageLicense(
            code=_clean(item.get("ccLicense")), kind=_clean(item.get("licenseType")), url=_clean(item.get("licenseURL"))
        ),
        pmcid=pmcid if _PMCID.match(pmcid) else None,
        pmid=_clean(item.get("pmid")),
        modality=_clean(image.get("modalityMajor")),
        problems=_clean(item.get("Problems")),
        impression=_clean(item.get("impression")),
        mesh=_mesh(item.get("MeSH")),
    )


def parse_openi(data: bytes, base_url: str) -> list[ImageHit]:
    """Image hits of an ``/api/search`` answer, in order, with absolute URLs.

    Entries without a uid or an image path are skipped. Open-i's placeholder pmcid for report collections
    (``"1"``) is dropped: only ``PMC…`` ids are kept. An HTML page or another JSON shape → ParseError.
    """
    payload = load_json(data, "openi")
    if not isinstance(payload, dict) or ("list" not in payload and "total" not in payload):
        raise ParseError("openi", "answer is not an Open-i search result")
    items = payload.get("list") or []
    if not isinstance(items, list):
        raise ParseError("openi", "answer's result list is not a list")
    hits = (_hit(item, base_url) for item in items if isinstance(item, dict))
    return [hit for hit in hits if hit is not None]


# --- client ------------------------------------------------------------------------------------------------------


class OpenISource:
    """Searches Open-i for images over the shared :class:`~synthesist.tools.http.Fetcher`."""

    name = "openi"

    def __init__(self, fetcher: Fetcher, settings: OpenISettings):
        self._fetcher = fetcher
        self._settings = settings

    async def search(
        self, query: str, limit: int = 10, *, start: int = 1, image_type: str | None = "x",
        collection: str | None = None, body_part: str | None = None,
    ) -> list[ImageHit]:
        """Up to ``limit`` images for ``query`` from result ``start`` (1-based), best first.

        ``image_type`` is an ``it`` code (default ``x``, X-ray; None for all), ``collection`` a ``coll`` code;
        ``body_part`` (e.g. "chest") is appended to the query, as Open-i has no body-part parameter.
        """
        text = " ".join(part.strip() for part in (query, body_part or "") if part and part.strip())
        if not text:
            raise BadInputError("an Open-i query cannot be empty")
        if image_type is not None and image_type not in IMAGE_TYPES:
            raise BadInputError(f"unknown Open-i image type {image_type!r}; use one of {', '.join(IMAGE_TYPES)}")
        if collection is not None and collection not in COLLECTIONS:
            raise BadInputError(f"unknown Open-i collection {collection!r}; use one of {', '.join(COLLECTIONS)}")
        if limit < 1:
            return []
        limit = min(limit, MAX_RESULTS)
        params: dict[str, object] = {"query": text, "m": start, "n": start + limit - 1}
        if image_type:
            params["it"] = image_type
        if collection:
            params["coll"] = collection
        base = self._settings.base_url.rstrip("/")
        answer = await self._fetcher.get(
            self.name, f"{base}/api/search", params=params, rate_per_second=self._settings.rate_per_second
        )
        return parse_openi(answer.body, base)[:limit]
