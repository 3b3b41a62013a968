"""Following a session while Gemini CLI writes it: the file watched as plain events (``watch``), a
recording that grew read from where it ended and its figures extended (``extend``), and the tool-output
budget and split points after an append without a full walk (``budget``)."""
