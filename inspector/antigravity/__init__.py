"""Antigravity transcripts, read only: their steps, their compactions (CHECKPOINT steps) and what each forgot.

``transcript`` reads the file (one step a line), ``history`` presents the steps
as Gemini CLI's records (to show them) and as the fact check's input,
``checkpoints`` finds and grades each compaction, ``report`` is what
``analyze`` prints, ``catalog`` finds the conversations on disk.  Nothing
here writes: Antigravity never reads this file back.
"""

from __future__ import annotations

READ_ONLY = ("an Antigravity transcript is read only: Antigravity keeps its conversation in its own store "
             "and never reads this file back, so a change to it would change nothing")
