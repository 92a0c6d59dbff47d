"""The HTTP face: a FastAPI service over :mod:`synthesist.api` (see :mod:`.app`)."""

from .app import create_app

__all__ = ["create_app"]
