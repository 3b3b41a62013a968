"""A point where a long compiled loop lets other threads run.

Code compiled by mypyc and C extensions never execute bytecode, so CPython
never asks them to hand over the GIL: while the app loads a big session in a
worker thread, its event loop would freeze until the load ends.  Calling this
plain Python function executes bytecode, where CPython switches to a thread
that has been waiting (after ``sys.getswitchinterval()``); when none waits it
costs a function call.  It must stay uncompiled (it is not in setup.py's list).
"""

from __future__ import annotations


def let_others_run() -> None:
    """Nothing: being called is the point."""
