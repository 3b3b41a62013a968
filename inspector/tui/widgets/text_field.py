"""A one-line text field that tells Textual every character it takes, so no key it types is offered.

Textual hides a screen's keys from the footer (and skips their bindings) when the focused
field would type them, but it finds the character of a key by its Unicode name: ``slash``
(SOLIDUS), ``minus``, ``plus``, ``at``, ``backslash`` and ``underscore`` name none, so a
field said it would not take ``/`` and the footer kept offering "/ Search" while ``/`` went
into the text.  This field knows the character of every printable key.
"""

from __future__ import annotations

import string

from textual.keys import _character_to_key
from textual.widgets import Input

KEY_CHARACTERS = {_character_to_key(character): character for character in string.printable if character.isprintable()}


class TextField(Input):
    """An ``Input`` whose printable keys are all known to be typed, not bound."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return super().check_consume_key(key, character if character is not None else KEY_CHARACTERS.get(key))
