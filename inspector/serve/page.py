"""The page ``--serve`` sends: textual-serve's terminal, drawn with a font from this machine.

textual-serve's own page asks Google's font servers for Roboto Mono; this one
declares the same font from the files textual-serve installs beside its
scripts (``static/fonts``), served under the token's path like everything
else, so loading the page reaches nothing but 127.0.0.1.  The font is
preloaded, so it is there before textual.js measures a character cell (at the
window's ``load`` event, which waits for preloads).  The rest is what
textual.js needs: the terminal's element with the WebSocket's URL and the font
size, a dialog while the app starts, and one that offers a restart when it
ends.  A Jinja template; the server fills ``config.static.url``,
``app_websocket_url``, ``font_size`` and ``application.name``.
"""

from __future__ import annotations

PAGE = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <title>{{ application.name }}</title>
    <link rel="preload" href="{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf"
          as="font" type="font/ttf" crossorigin>
    <link rel="stylesheet" href="{{ config.static.url }}css/xterm.css">
    <style>
      @font-face {
        font-family: "Roboto Mono";
        font-style: normal;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
      }
      @font-face {
        font-family: "Roboto Mono";
        font-style: italic;
        font-weight: 100 700;
        src: url("{{ config.static.url }}fonts/RobotoMono-Italic-VariableFont_wght.ttf") format("truetype");
      }
      body { background: #0c181f; margin: 0; }
      .notice {
        position: absolute; inset: 0; z-index: 10;
        display: flex; align-items: center; justify-content: center;
        font-family: "Roboto Mono", monospace; font-size: 16px; color: rgba(255, 255, 255, 0.95);
      }
      .notice > div { padding: 48px 64px; background: #12232d; text-align: center; }
      .notice button {
        margin-top: 16px; padding: 12px 28px; border: none; cursor: pointer;
        background: #5e0ba7; color: rgba(255, 255, 255, 0.95); font: inherit;
      }
      body.-first-byte .starting, .ended { display: none; }
      body.-closed .ended { display: flex; }
      .textual-terminal { opacity: 0; }
      body.-first-byte .textual-terminal { opacity: 1; transition: opacity 0.3s ease-out; }
    </style>
    <script src="{{ config.static.url }}js/textual.js"></script>
    <script>
      function restart() {
        const params = new URLSearchParams(window.location.search);
        params.delete("delay");
        window.location.href = window.location.pathname + "?" + params.toString();
      }
    </script>
  </head>
  <body>
    <div class="notice starting"><div>{{ application.name }}<br>starting...</div></div>
    <div class="notice ended">
      <div>The session ended.<br><button type="button" onclick="restart()">Start again</button></div>
    </div>
    <div id="terminal" class="textual-terminal"
         data-session-websocket-url="{{ app_websocket_url }}" data-font-size="{{ font_size }}"></div>
  </body>
</html>
"""
