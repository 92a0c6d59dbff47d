"""The untrusted-content boundary: evidence text enters prompts only between per-call random markers.

Everything a prompt quotes from the outside world (titles, abstracts, trial records, web pages, and notes other
agents derived from them) is wrapped by :func:`untrusted`::

    <<UNTRUSTED-3f9c0a1b2c3d4e5f>>
    …the text, cleaned and capped…
    <<END-UNTRUSTED-3f9c0a1b2c3d4e5f>>

The token is random for every call (``secrets.token_hex(8)``), or shared by the calls of one key
(:meth:`Boundary.shared`: an HMAC of the key under a random per-process secret, for the briefing the judge and the
hypothesis agent both send in a round); either way a document cannot know it; anything inside the
text that looks like a marker is defanged, so the data cannot close the boundary early; control and invisible
formatting characters are stripped; the text is capped with a visible ``[truncated]`` mark. The system prompts
tell the model that what lies between the markers is data, never instructions.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field

DEFAULT_CAP = 8000
TRUNCATED_MARK = "… [truncated]"

_NEWLINES = re.compile(r"\r\n?|[\u2028\u2029\x85]")
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_MARKER_LIKE = re.compile(r"<\s*<\s*(?:/|END)?[\s_\-]*UNTRUSTED", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9]{8,64}")
_PROCESS_SECRET = secrets.token_bytes(32)


def untrusted(text: str, *, token: str, cap: int = DEFAULT_CAP) -> str:
    """``text`` cleaned, defanged, capped to ``cap`` characters and fenced by the markers of ``token``."""
    if not _TOKEN.fullmatch(token):
        raise ValueError("a boundary token is 8-64 letters or digits")
    if cap < 1:
        raise ValueError("the cap must be positive")
    clean = _INVISIBLE.sub("", _NEWLINES.sub("\n", text))
    clean = _MARKER_LIKE.sub(lambda match: match.group(0).replace("<", "‹"), clean)
    if len(clean) > cap:
        clean = clean[:cap] + TRUNCATED_MARK
    return f"{opening(token)}\n{clean}\n{closing(token)}"


def opening(token: str) -> str:
    return f"<<UNTRUSTED-{token}>>"


def closing(token: str) -> str:
    return f"<<END-UNTRUSTED-{token}>>"


@dataclass(frozen=True)
class Boundary:
    """The markers of one model call (or of the calls sharing one key). Pass it to the system and the task template."""

    cap: int = DEFAULT_CAP
    token: str = field(default_factory=lambda: secrets.token_hex(8))

    @classmethod
    def shared(cls, key: str, *, cap: int = DEFAULT_CAP) -> Boundary:
        """The markers every call made for ``key`` in this process shares (e.g. ``"<run id>:<round>"``: the
        round's briefing, which the judge and the hypothesis agent both send, so their prompts begin alike).
        The token is an HMAC of ``key`` under a random per-process secret: no document can know it."""
        token = hmac.new(_PROCESS_SECRET, key.encode(), hashlib.sha256).hexdigest()[:16]
        return cls(cap=cap, token=token)

    @property
    def open(self) -> str:
        return opening(self.token)

    @property
    def close(self) -> str:
        return closing(self.token)

    def wrap(self, text: str | None) -> str:
        """``text`` fenced for a prompt (an absent text becomes an empty fenced block)."""
        return untrusted(text or "", token=self.token, cap=self.cap)

    def wrap_all(self, texts: list[str]) -> str:
        """Several texts, each already capped by whoever made it (evidence cards), in ONE fenced block separated
        by blank lines: one pair of markers, not one per item."""
        joined = "\n\n".join(texts)
        return untrusted(joined, token=self.token, cap=max(1, len(joined)))
