"""session-inspector: see, steer and undo Gemini CLI's chat compaction."""

__version__ = "0.1.0"
