"""Searching the words of every session (``index``: an index kept in the user's cache, refreshed for new or
changed files only)."""
