"""Public test seams: a scripted loopback HTTP server (and, later, scripted models).

These are part of the product so that users can test their own integrations offline, the way pydantic-ai ships
``TestModel``. Nothing here is imported by production code.
"""

from .http_server import FixtureServer, Reply, Request
from .web import ScriptedWebClient

__all__ = ["FixtureServer", "Reply", "Request", "ScriptedWebClient"]
