"""Gemini CLI's own code, run in Node, as the oracle for differential tests.

``install.reference_src()`` finds (or installs) the package; ``client.RefServer``
talks to one long-lived ``ref_server.mjs`` process.  See README.md here.
"""
