"""Public test seams: a scripted loopback HTTP server, scripted LLMs (in process, or an OpenAI-compatible server
over HTTP) and chat clients, a scripted web client.

These are part of the product so that users can test their own integrations offline, the way pydantic-ai ships
``TestModel``. Nothing here is imported by production code.
"""

from .chat_client import ScriptedChatClient
from .http_server import FixtureServer, Reply, Request
from .models import ScriptedReplies, prompt_text, scripted_model
from .openai_server import ChatCall, ScriptedChatServer, chat_completion
from .vision import ScriptedVisionAdapter
from .web import ScriptedWebClient

__all__ = [
    "ChatCall",
    "FixtureServer",
    "Reply",
    "Request",
    "ScriptedChatClient",
    "ScriptedChatServer",
    "ScriptedReplies",
    "ScriptedVisionAdapter",
    "ScriptedWebClient",
    "chat_completion",
    "prompt_text",
    "scripted_model",
]
