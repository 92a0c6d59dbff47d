"""Secret scrubbing for error messages and log records.

``scrub`` replaces the values of secret-looking environment variables (provider keys, the NCBI key, anything named
``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``) and common key shapes (``sk-…``, ``sk-ant-…``,
``Bearer …``, ``api_key=…`` in URLs, ``user:password@`` in URLs) with ``[REDACTED]``. ``SecretFilter`` applies it
to log records; install it on the handlers (a filter on a logger does not see records propagated from its children).
``configured_secrets`` finds the keys a settings tree holds (``SecretStr`` fields, e.g. an NCBI key read from
``.env``), which the environment does not show; ``scrub_headers`` and ``scrub_bytes`` clean what a server sent back
(a redirect's ``Location`` that repeats the query string with its ``api_key``, a ``Set-Cookie``, a body that echoes a
key) before it is written anywhere: a record/replay tape, a cache, a log. ``without_paths`` keeps only the last
part of each absolute path in a text an HTTP client reads (where the data directory or a library lives on the
server is not a client's business).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote

from pydantic import BaseModel, SecretStr

REDACTED = "[REDACTED]"

KNOWN_SECRET_VARS = frozenset(
    {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "SYNTHESIST_PUBMED__API_KEY"}
)
SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_SECRET_LENGTH = 6
"""Shorter values are not replaced: redacting every "1" or "on" in a message would hide more than it protects."""

_KEY_SHAPES = (
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/\-]+=*"),
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@?#]+@")
"""Credentials written into a URL: ``http://user:pass@host`` → ``http://[REDACTED]@host``."""
_URL_PARAMS = re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|sig)=)[^&\s#\"']+")
_ASSIGNMENTS = re.compile(
    r"(?i)\b((?:x-)?api[_-]?key|access[_-]?token|client[_-]?secret|password)(\"?\s*[=:]\s*[\"']?)([^\s&\"',;}]+)"
)


_ABSOLUTE_PATH = re.compile(r"(?<![\w:/.~-])(?:~/|/)(?:[^\s/'\"()]+/)+([^\s/'\"(),;]*)")
"""An absolute (or home-relative) path of two parts or more; the lookbehind leaves a URL's path alone (it follows
its host)."""


def without_paths(text: str) -> str:
    """``text`` with each absolute path cut to its last part: "/srv/data/chroma" → "…/chroma"."""
    return _ABSOLUTE_PATH.sub(lambda match: f"…/{match.group(1)}", text)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The secret values found in ``environ`` (default: the process environment), longest first."""
    env = os.environ if environ is None else environ
    values = {
        value
        for name, value in env.items()
        if (name.upper() in KNOWN_SECRET_VARS or name.upper().endswith(SECRET_SUFFIXES))
        and len(value) >= MIN_SECRET_LENGTH
    }
    return sorted(values, key=len, reverse=True)


def configured_secrets(settings: BaseModel) -> list[str]:
    """The secret values (``SecretStr`` fields) held anywhere in a settings tree, longest first; short ones are left
    out as in :func:`secret_values`."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, SecretStr):
            secret = value.get_secret_value()
            if len(secret) >= MIN_SECRET_LENGTH:
                found.add(secret)
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name))

    walk(settings)
    return sorted(found, key=len, reverse=True)


def scrub(text: str, environ: Mapping[str, str] | None = None, *, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret value (the environment's and ``secrets``) and key-shaped string replaced
    by ``[REDACTED]``."""
    for value in _values(environ, secrets):
        text = text.replace(value, REDACTED)
    for shape in _KEY_SHAPES:
        text = shape.sub(REDACTED, text)
    text = _URL_PARAMS.sub(lambda m: m.group(1) + REDACTED, text)
    text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
    return _ASSIGNMENTS.sub(_redact_assignment, text)


def scrub_headers(headers: Iterable[tuple[str, str]], *, secrets: Iterable[str] = ()) -> dict[str, str]:
    """Response (or request) headers with every value scrubbed: ``Authorization`` and ``Set-Cookie`` (and any
    ``*-Token``/``*-Key`` header) are replaced whole, the others (``Location``, ``Content-Location``, ``Link``…)
    by :func:`scrub`."""
    secrets = list(secrets)
    clean = {}
    for name, value in headers:
        lowered = name.lower()
        whole = lowered in _SECRET_HEADERS or lowered.endswith(("-token", "-key", "-secret"))
        clean[name] = REDACTED if whole else scrub(value, secrets=secrets)
    return clean


def scrub_bytes(data: bytes, environ: Mapping[str, str] | None = None, *, secrets: Iterable[str] = ()) -> bytes:
    """``data`` with every known secret value replaced (as UTF-8 and URL-encoded): a response body is changed only
    where it holds a key, never by the key-shape patterns (a record's text could match them)."""
    for value in _values(environ, secrets):
        for form in {value, quote(value, safe="")}:
            data = data.replace(form.encode("utf-8"), REDACTED.encode("ascii"))
    return data


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})


def _values(environ: Mapping[str, str] | None, secrets: Iterable[str]) -> list[str]:
    extra = {value for value in secrets if len(value) >= MIN_SECRET_LENGTH}
    return sorted(set(secret_values(environ)) | extra, key=len, reverse=True)


def _redact_assignment(match: re.Match[str]) -> str:
    name, separator, value = match.groups()
    return match.group(0) if value.startswith(REDACTED) else f"{name}{separator}{REDACTED}"


class SecretFilter(logging.Filter):
    """A logging filter that scrubs the message, arguments and traceback text of every record it sees.

    It never drops a record. The message is formatted once (``msg % args``) and stored scrubbed, so handlers
    after it see the clean text.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._environ = environ

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = scrub(record.getMessage(), self._environ)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text, self._environ)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info, self._environ)
        return True
