"""Public test seams: a scripted loopback HTTP server, scripted LLMs and chat clients, a scripted web client.

These are part of the product so that users can test their own integrations offline, the way pydantic-ai ships
``TestModel``. Nothing here is imported by production code.
"""

from .chat_client import ScriptedChatClient
from .http_server import FixtureServer, Reply, Request
from .models import ScriptedReplies, prompt_text, scripted_model
from .vision import ScriptedVisionAdapter
from .web import ScriptedWebClient

__all__ = [
    "FixtureServer",
    "Reply",
    "Request",
    "ScriptedChatClient",
    "ScriptedReplies",
    "ScriptedVisionAdapter",
    "ScriptedWebClient",
    "prompt_text",
    "scripted_model",
]
