"""The sessions on this machine, listed as Gemini CLI's ``/resume`` lists them (``listing``), each with its
project's name (``projects``), and deleting one by moving it aside, undoably (``trash``).  Antigravity's
conversations join the list through ``inspector.antigravity.catalog``."""
