"""On-disk session formats -> one model; the curated history Gemini CLI resumes with."""

from inspector.session.errors import LoadWarning, SessionError
from inspector.session.history import Turn
from inspector.session.loader import Session, load, parse
from inspector.session.turns import history

__all__ = ["LoadWarning", "Session", "SessionError", "Turn", "history", "load", "parse"]
