"""The app in a browser tab (``session-inspector --serve``): the server on loopback with its per-run token
(``server``) and the page it serves, which loads nothing from outside this machine (``page``)."""
