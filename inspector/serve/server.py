"""The server behind ``session-inspector --serve``: textual-serve's, guarded and quiet about its token.

Whoever drives the page can do what the app does, compact and revert
included, so every request is checked (``guarded_server``):

* a secret token, new each run, is part of the URL ``--serve`` prints (as
  Jupyter's is); the page needs it (``/?token=...``) and so does the
  WebSocket that drives the app (its path holds it), and the page's own
  scripts, styles and fonts (their folder's path holds it too); no response
  lets the browser send the page's URL on (``Referrer-Policy: no-referrer``).
  A token that is not the one (of any length, in any characters, percent-
  encoded bytes that are no UTF-8) is a 403, never an error;
* the WebSocket is refused unless the browser says the page came from this
  server (``Origin``), so another site open in the same browser cannot drive
  it, token or not;
* requests naming another host are refused (DNS rebinding).

The page (``serve_page``) loads nothing from another host: its font is a file
textual-serve installs, served from here.  Every line the server logs (the
access log, errors and their tracebacks) goes through ``redacted``, which
writes ``***`` in place of the token and of whatever stands where a token
goes in a URL; tracebacks are plain, without the values of local variables.
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from textual_serve.server import Server

SERVE_HOST = "127.0.0.1"  # never 0.0.0.0: the app can write to your session files
HIDDEN = "***"

# Where a token goes in a URL: the page's query (``token=``, also percent-encoded as a whole
# URL inside another), the WebSocket's path and the static files' folder.
_TOKEN_PLACES = re.compile(
    r"(?P<query>(?:[?&;]|%3[fF]|%26)token(?:=|%3[dD]))[^&;\s\"'<>]*"
    r"|(?P<path>/(?:ws|static)/)[^/?#\s\"'<>]+"
)


def redacted(text: str, token: str) -> str:
    """``text`` with the token, and anything in a URL where a token goes, written as ``***``."""
    if token:
        text = text.replace(token, HIDDEN)
    return _TOKEN_PLACES.sub(lambda m: (m.group("query") or m.group("path")) + HIDDEN, text)


def token_matches(given: str, token: str) -> bool:
    """Whether ``given`` (a query value as the client sent it) is the token, in constant time.
    Any text is an answer, never an error: non-ASCII, lone surrogates, the replacement character."""
    return secrets.compare_digest(given.encode("utf-8", "surrogatepass"), token.encode("utf-8"))


class RedactingFormatter(logging.Formatter):
    """Formats a record as a plain line (its traceback plain too: no local variables) and
    redacts the token from all of it."""

    def __init__(self, token: str) -> None:
        super().__init__("%(asctime)s %(name)s %(levelname)s %(message)s", datefmt="%H:%M:%S")
        self.token = token

    def format(self, record: logging.LogRecord) -> str:
        return redacted(super().format(record), self.token)


def quiet_logging(token: str) -> None:
    """Every log record of this process goes to stderr through one ``RedactingFormatter``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RedactingFormatter(token))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    sys.unraisablehook = _logged_unraisable  # what Python prints itself ("Exception ignored in ...") goes there too


def _logged_unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """An exception Python could not raise (a finaliser's), as one redacted log line, never a raw traceback.
    A child's pipe closed after the event loop at shutdown is no news: said only at debug level."""
    exc = unraisable.exc_value
    log = logging.getLogger("inspector.serve")
    if isinstance(exc, RuntimeError) and str(exc) == "Event loop is closed":
        log.debug("at shutdown, after the event loop closed: %s", exc)
        return
    log.warning("ignored %s: %s", type(exc).__name__, exc)


def guarded_server(command: str, *, port: int, title: str, token: str) -> Server:
    """textual-serve's server with the checks, the page and the logging the module docstring describes."""
    import aiohttp_jinja2
    import jinja2
    from aiohttp import web
    from textual_serve.server import Server

    from inspector.serve.page import PAGE

    hosts = {f"{SERVE_HOST}:{port}", f"localhost:{port}"}
    origins = {f"http://{host}" for host in hosts}

    @web.middleware
    async def guard(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if request.host not in hosts:
            raise web.HTTPForbidden(text="unknown host")
        if request.path == "/" and not token_matches(request.query.get("token", ""), token):
            raise web.HTTPForbidden(text="this page needs the token printed by session-inspector --serve")
        if request.path.startswith("/ws") and request.headers.get("Origin") not in origins:
            raise web.HTTPForbidden(text="refused: the page is not from this server")
        response = await handler(request)
        response.headers["Referrer-Policy"] = "no-referrer"  # the page's URL holds the token: never sent on
        return response

    class Guarded(Server):
        def initialize_logging(self) -> None:
            quiet_logging(token)

        async def _make_app(self) -> web.Application:
            app = web.Application(middlewares=[guard])
            aiohttp_jinja2.setup(app, loader=jinja2.DictLoader({"app_index.html": PAGE}), autoescape=True)
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get(f"/ws/{token}", self.handle_websocket, name="websocket"),
                web.static(f"/static/{token}", self.statics_path, name="static"),  # every URL needs it
            ])
            app.on_shutdown.append(self.on_shutdown)
            return app

    return Guarded(command, host=SERVE_HOST, port=port, title=title)
