"""The one way Synthesist parses XML: defusedxml, with entity declarations and external references refused.

A document that declares an entity (billion laughs, quadratic blow-up) or references an external one (XXE) is
refused with :class:`~synthesist.errors.UnsafeDocumentError`. A plain ``<!DOCTYPE … PUBLIC "…dtd">`` line is
accepted: every real PubMed efetch answer and MEDLINE file starts with one, and expat never fetches it.
"""

from __future__ import annotations

from xml.etree.ElementTree import Element
from xml.etree.ElementTree import ParseError as XMLSyntaxError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from ..errors import ParseError, UnsafeDocumentError


def parse_xml(data: bytes, source: str) -> Element:
    """Parse ``data`` into its root element. Unsafe → UnsafeDocumentError; malformed or truncated → ParseError."""
    try:
        return fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise UnsafeDocumentError(source) from exc
    except XMLSyntaxError as exc:
        raise ParseError(source, f"malformed XML: {exc}") from exc
