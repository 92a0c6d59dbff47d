"""Synthesist: a multi-agent biomedical research orchestrator."""

__version__ = "0.1.0"
