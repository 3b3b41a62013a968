"""Gemini CLI's compaction: split point, tool-output budget, prompts, summarisers,
the ``compress()`` state machine, snapshot parsing and diffing, fact recall.

Kept light on purpose: importing the package loads nothing heavy (no SDK, no
network client); import the submodule you need.
"""
