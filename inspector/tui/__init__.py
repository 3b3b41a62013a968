"""The Textual app: a face on the core (``inspector.analysis`` and friends) that adds no figures of its own."""
