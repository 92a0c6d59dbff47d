"""One exception hierarchy for Synthesist.

Errors carry fields, not prose: the source, status code, file and line that went wrong. They never carry a
response body (it could echo a key) and they never log themselves. Foreign exceptions (httpx, ddgs, chroma,
XML parsers) are translated into these at the boundary where they occur, chained with ``raise ... from``.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class SynthesistError(Exception):
    """Base class of every error Synthesist raises on purpose."""


class BadInputError(SynthesistError):
    """The caller's input is invalid (question, option, path). Faces report it in one line and exit 2."""


class ConfigError(BadInputError):
    """A setting or override is invalid."""


class WatchBusyError(SynthesistError):
    """Another process is running this watch now (its run lock is held)."""

    def __init__(self, watch_id: str):
        self.watch_id = watch_id
        super().__init__(f"watch {watch_id} is already being run by another process; not run twice at once")


class SourceError(SynthesistError):
    """A literature source failed. ``kind`` is a short machine-readable category."""

    def __init__(self, source: str, message: str, *, kind: str = "error", status_code: int | None = None):
        self.source = source
        self.kind = kind
        self.status_code = status_code
        self.message = message
        status = f" (HTTP {status_code})" if status_code is not None else ""
        super().__init__(f"{source}: {message}{status}")


class RateLimitedError(SourceError):
    """The source answered 429 after every retry. ``retry_after`` is the last advised wait in seconds."""

    def __init__(self, source: str, *, retry_after: float | None = None):
        self.retry_after = retry_after
        hint = f"; retry after {retry_after:g}s" if retry_after is not None else ""
        super().__init__(source, f"rate limited{hint}", kind="rate_limited", status_code=429)


class SourceTimeoutError(SourceError):
    """The source did not answer within the per-request timeout, after every retry."""

    def __init__(self, source: str, timeout: float):
        self.timeout = timeout
        super().__init__(source, f"no answer within {timeout:g}s", kind="timeout")


class SourceUnreachableError(SourceError):
    """The source's host could not be reached (DNS, refused connection, no network)."""

    def __init__(self, source: str, host: str):
        self.host = host
        super().__init__(source, f"cannot reach {host}", kind="unreachable")


class ParseError(SourceError):
    """A source answered, but the body is not in the format the parser expects."""

    def __init__(self, source: str, message: str):
        super().__init__(source, message, kind="parse")


class UnsafeDocumentError(ParseError):
    """An XML document declares entities or a DTD (billion laughs, external entities) and was refused."""

    def __init__(self, source: str):
        super().__init__(source, "document refused: it declares entities or a DTD")


class LibraryError(BadInputError):
    """A local library path cannot be read at all (missing, unreadable, unknown format)."""

    def __init__(self, path: Path | str, reason: str):
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class CassetteError(BadInputError):
    """A record/replay cassette cannot be used: missing, corrupt, recorded for another run, or lacking an answer."""

    def __init__(self, directory: Path | str, reason: str):
        self.directory = Path(directory)
        self.reason = reason
        super().__init__(f"cassette {directory}: {reason}")


class DiskFullError(SynthesistError):
    """A write into ``folder`` failed because its disk is full (or its quota used up). Faces say it in one line.
    ``folder`` is ours (a run folder, ``DATA_DIR/chroma``) or, for a Chroma server the user runs, words naming
    that server's store."""

    def __init__(self, folder: Path | str):
        self.folder = folder
        super().__init__(f"the disk is full: nothing more can be written to {folder}; free some space there and "
                         "run again")


DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""The ``errno`` values of a write that found no space: a full disk, a used-up quota."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from (or while handling), nearest first."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def disk_full(exc: BaseException) -> OSError | None:
    """The full-disk ``OSError`` that caused ``exc`` (itself, or one it was raised from), if any."""
    return next((cause for cause in causes(exc) if isinstance(cause, OSError) and cause.errno in DISK_FULL), None)


@contextmanager
def writing_into(folder: Path | str) -> Iterator[None]:
    """Writes into ``folder`` inside the block: one that finds its disk full is a :class:`DiskFullError` naming the
    folder (the ``OSError`` names at most a file, and ``/dev/full`` or a pipe not even that), chained from it."""
    try:
        yield
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise DiskFullError(folder) from exc
        raise


class ModelError(SynthesistError):
    """A model call failed. ``kind``: timeout, invalid_output, content_filter, usage_limit, auth, rate_limited,
    quota, context_window, not_found, unreachable, provider. The model layer scrubs ``message`` of secrets before
    raising; no response body is ever part of it."""

    def __init__(
        self, agent: str, kind: str, message: str, *, model: str | None = None, status_code: int | None = None
    ):
        self.agent = agent
        self.kind = kind
        self.model = model
        self.status_code = status_code
        self.message = message
        where = f" ({model})" if model else ""
        status = f" [HTTP {status_code}]" if status_code is not None else ""
        super().__init__(f"{agent}: model call failed{where}: {kind}: {message}{status}")


class PromptError(SynthesistError):
    """A prompt template is missing, or a variable it uses was not passed."""

    def __init__(self, template: str, reason: str):
        self.template = template
        self.reason = reason
        super().__init__(f"prompt {template}: {reason}")


class EmbeddingModelError(SynthesistError):
    """The embedding model could not be loaded from ``path`` (missing or unreadable files)."""

    def __init__(self, path: Path):
        self.path = path
        super().__init__(f"cannot load the embedding model from {path}")


class MemoryStoreError(SynthesistError):
    """The vector store failed during ``operation`` (on ``collection`` when one was involved)."""

    def __init__(self, operation: str, collection: str | None = None):
        self.operation = operation
        self.collection = collection
        where = f" on collection {collection}" if collection else ""
        super().__init__(f"vector store {operation} failed{where}")


class StoreUnreachableError(MemoryStoreError):
    """The Chroma server the user runs (``memory.chroma_mode = http``) at ``address`` did not answer during
    ``operation``: nothing of ours can start it again, so the message says the user must."""

    def __init__(self, operation: str, collection: str | None, address: str):
        self.operation, self.collection, self.address = operation, collection, address
        SynthesistError.__init__(self, unreachable_server(address))


def unreachable_server(address: str) -> str:
    """The one sentence for a user's Chroma server that does not answer (a run's error, ``/api/health``)."""
    return (f"your Chroma server at {address} is unreachable (memory.chroma_mode = http): synthesist cannot "
            "restart a server it did not start; restart it yourself, then try again")


class StoreBusyError(MemoryStoreError):
    """``DATA_DIR/chroma`` was asked for as an in-process (``embedded``) store while another process has it open."""

    def __init__(self, store: str):
        self.operation, self.collection, self.store = "open (embedded)", None, store
        SynthesistError.__init__(self, f"{store} is open in another process; use the default "
                                 "SYNTHESIST_MEMORY__CHROMA_MODE=persistent, which shares it through one server")


class StoreStuckError(MemoryStoreError):
    """The data directory's Chroma server completes no read or write of its store and its owner did not replace it."""

    def __init__(self, store: str, owner_pid: int):
        self.operation, self.collection, self.store = "open", None, store
        SynthesistError.__init__(self, f"the Chroma server for {store} completes no read or write of its store "
                                 f"and its owner (pid {owner_pid}) did not replace it; stop it (kill {owner_pid}) "
                                 "and run again")


class StoreDamagedError(MemoryStoreError):
    """The data directory's store cannot read ``what`` back; ``fix`` is the command that repairs it."""

    def __init__(self, data_dir: str, what: str, fix: str):
        self.operation, self.collection, self.data_dir, self.fix = "read", None, data_dir, fix
        SynthesistError.__init__(self, f"the store in {data_dir} cannot read {what}: run `{fix}`")


class NoActiveRunError(SynthesistError):
    """:func:`current_memory` was called outside any run (see :func:`synthesist.memory.use_memory`)."""

    def __init__(self) -> None:
        super().__init__("no research run is active: call this inside a run (`with use_memory(memory):`)")


class SnapshotError(SynthesistError):
    """A snapshot handed to :meth:`ResearchMemory.restore` is not one this version wrote."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"cannot restore research memory: {reason}")


class ToolArgumentError(BadInputError):
    """A viewer tool was called with an invalid argument. ``argument`` is None when the whole call is malformed."""

    def __init__(self, tool: str, argument: str | None, reason: str):
        self.tool = tool
        self.argument = argument
        self.reason = reason
        where = f"argument '{argument}' " if argument else ""
        super().__init__(f"{tool}: {where}{reason}")


class ImageError(BadInputError):
    """An image cannot be used: too large, corrupt, truncated, or not an image of an accepted format.

    ``path`` is the file (``None`` for bytes handed over directly) and ``reason`` a short explanation.
    """

    def __init__(self, path: Path | str | None, reason: str):
        self.path = Path(path) if path is not None else None
        self.reason = reason
        super().__init__(f"{path or 'image'}: {reason}")


class VisualLoopError(SynthesistError):
    """The image loop could not produce an answer. ``reason``: continue_value, nudge_cap, final_tool_calls,
    no_answer. ``turn`` is the turn it happened on. Never carries a model reply.
    """

    def __init__(self, reason: str, message: str, *, turn: int):
        self.reason = reason
        self.turn = turn
        self.message = message
        super().__init__(f"image analysis failed on turn {turn}: {reason}: {message}")


def excerpt(text: object, limit: int = 120) -> str:
    """``text`` as an error message may quote it: at most ``limit`` characters (with how long it was when cut), and
    encodable (a lone surrogate is written as its escape), so that no error echoes a caller's megabytes back."""
    value = str(text)
    value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(value) <= limit:
        return value
    return f"{value[:limit]}… ({len(value)} characters)"
