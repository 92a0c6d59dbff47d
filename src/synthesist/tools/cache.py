"""On-disk cache of successful HTTP GET responses, with a time-to-live.

Keys are SHA-256 of the method, URL and sorted parameters *without secrets* (``api_key``), so a cache directory
never holds a key and a cached answer is found whichever key fetched it. One file per response: a JSON header line
(time stored, content type) followed by the raw body. Writes go through a temporary file and an atomic rename.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("synthesist.http.cache")

SECRET_PARAMS = frozenset({"api_key", "apikey", "key", "token"})


@dataclass(frozen=True)
class CachedResponse:
    body: bytes
    content_type: str
    stored_at: float


class ResponseCache:
    def __init__(self, directory: Path, ttl_seconds: float, *, clock=time.time):
        self.directory = directory
        self.ttl = ttl_seconds
        self._clock = clock

    @staticmethod
    def key(url: str, params: Mapping[str, object] | None) -> str:
        public = sorted((k, str(v)) for k, v in (params or {}).items() if k.lower() not in SECRET_PARAMS)
        raw = json.dumps(["GET", url, public], separators=(",", ":"))
        return hashlib.sha256(raw.encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / key

    def get(self, key: str, *, label: str = "") -> CachedResponse | None:
        path = self._path(key)
        try:
            with path.open("rb") as handle:
                header = json.loads(handle.readline())
                body = handle.read()
        except (OSError, ValueError):
            log.info("cache miss %s", label)
            return None
        if self._clock() - header["stored_at"] > self.ttl:
            log.info("cache expired %s", label)
            return None
        log.info("cache hit %s", label)
        return CachedResponse(body=body, content_type=header.get("content_type", ""), stored_at=header["stored_at"])

    def put(self, key: str, body: bytes, content_type: str) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            header = json.dumps({"stored_at": self._clock(), "content_type": content_type}).encode() + b"\n"
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(header + body)
            os.replace(tmp, path)
        except OSError as exc:  # a cache that cannot be written must never fail a search
            log.warning("cache write failed: %s", exc)
