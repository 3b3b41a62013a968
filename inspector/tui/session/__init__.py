"""The session view, as a screen and the parts it is made of.

``screen.SessionScreen`` shows one session (header, turn table, detail pane)
and owns what every part reads: the version shown (``loaded``) and the split.
Each part owns its own state and workers and is a non-visual widget of the
screen (``part.Part``): the screen calls down to it, it posts messages up
(``tui/messages.py``), as Textual's guide puts it ("attributes down, messages
up").

* ``live.LiveFollower``: watches the file, extends what is shown by what is
  appended, reads the file whole again when an append cannot extend it;
* ``notes.NotesKeeper``: masking and cost, worked out again when appends pause;
* ``compaction.CompactionController``: the preview, apply, undo, the strategy
  and the summariser;
* ``navigation.Navigator``: search, filter and order of the turn table;
* ``export.Exporter``: the session as Markdown or HTML, a turn to the clipboard;
* ``splits``: where the split may go (pure functions), ``keys``: the bindings.
"""
