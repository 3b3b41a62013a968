"""Summarisers behind one interface, and which one will run, and why.

``choose_provider`` decides before anything is sent, from the environment,
the way google-genai itself reads it:

* Vertex AI when ``GOOGLE_GENAI_USE_VERTEXAI`` is true and
  ``GOOGLE_CLOUD_PROJECT`` is set (location from ``GOOGLE_CLOUD_LOCATION``,
  else "global"); the credentials are Application Default Credentials
  (``GOOGLE_APPLICATION_CREDENTIALS``, or ``gcloud auth application-default
  login``).  With no project but an API key, Vertex AI express mode.
* else an API key in ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` (the SDK
  prefers ``GOOGLE_API_KEY`` when both are set);
* else the user's own Gemini CLI, when ``gemini`` is on PATH (or named by
  ``--gemini-cli``) and signed in with Google (``gemini_cli_home.sign_in``):
  it runs headless and sends the turns to Gemini under that sign-in;
* else the offline summariser, and nothing leaves the machine.

``ProviderChoice`` names the variable that decided, never its value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from inspector.compaction.summarisers.base import Summariser, SummariserError
from inspector.compaction.summarisers.choice import ProviderChoice
from inspector.progress import SILENT, Reporter

PROVIDERS = ("auto", "gemini", "gemini-cli", "offline")
DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_TIMEOUT = 120.0
TRUE = ("1", "true")

__all__ = ["PROVIDERS", "ProviderChoice", "Summariser", "SummariserError", "choose_provider", "gemini_available",
           "pick_summariser"]


def _key_variable(env: Mapping[str, str]) -> str | None:
    return next((name for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY") if env.get(name)), None)


def _vertex(env: Mapping[str, str]) -> bool:
    """As the SDK reads it: GOOGLE_GENAI_USE_ENTERPRISE, when set at all, overrides GOOGLE_GENAI_USE_VERTEXAI."""
    enterprise = env.get("GOOGLE_GENAI_USE_ENTERPRISE")
    flag = enterprise if enterprise is not None else env.get("GOOGLE_GENAI_USE_VERTEXAI", "")
    return flag.strip().lower() in TRUE


def _configured(env: Mapping[str, str], requested: str) -> ProviderChoice | None:
    """The Gemini backend the environment sets up, or None."""
    key = _key_variable(env)
    if _vertex(env):
        project, location = env.get("GOOGLE_CLOUD_PROJECT"), env.get("GOOGLE_CLOUD_LOCATION")
        if project:
            where = location or "global"
            return ProviderChoice("gemini", "vertex", f"Vertex AI is configured: GOOGLE_GENAI_USE_VERTEXAI, project "
                                  f"{project}, location {where}, with Application Default Credentials",
                                  requested, None, project, where)
        if key:
            return ProviderChoice("gemini", "vertex_key", f"Vertex AI express mode: GOOGLE_GENAI_USE_VERTEXAI with "
                                  f"the key in {key}", requested, key)
        return None
    if key:
        both = " (GEMINI_API_KEY is set too; the SDK uses GOOGLE_API_KEY)" \
            if key == "GOOGLE_API_KEY" and env.get("GEMINI_API_KEY") else ""
        return ProviderChoice("gemini", "api_key", f"an API key was found in {key}{both}", requested, key)
    return None


def choose_provider(requested: str = "auto", env: Mapping[str, str] | None = None,
                    gemini_cli: str | None = None) -> ProviderChoice:
    """Which summariser ``--provider requested`` runs here, and why (``ValueError`` for an unknown name);
    ``gemini_cli``: the ``gemini`` to run (a path or a name on PATH) instead of ``gemini`` on PATH."""
    if requested not in PROVIDERS:
        raise ValueError(f"unknown provider {requested!r} (choose from {', '.join(PROVIDERS)})")
    env = os.environ if env is None else env
    if requested == "offline":
        return ProviderChoice("offline", "none", "the offline summariser was chosen: nothing is sent", requested)
    if requested == "gemini-cli":
        return _gemini_cli(env, gemini_cli)
    found = _configured(env, requested)
    if found is not None:
        return found
    missing = ("GOOGLE_GENAI_USE_VERTEXAI is set but GOOGLE_CLOUD_PROJECT is not" if _vertex(env)
               else "no GEMINI_API_KEY, GOOGLE_API_KEY or Vertex AI settings (GOOGLE_GENAI_USE_VERTEXAI with "
                    "GOOGLE_CLOUD_PROJECT) were found")
    if requested == "gemini":
        return ProviderChoice("gemini", "none", f"Gemini was asked for, but {missing}", requested,
                              problem=f"Gemini cannot run: {missing}")
    cli = _gemini_cli(env, gemini_cli, requested)
    if cli.problem is None:
        return cli
    return ProviderChoice("offline", "none", f"{missing}, and {cli.reason}, so the offline summariser runs and "
                          "nothing is sent", requested)


def _gemini_cli(env: Mapping[str, str], given: str | None, requested: str = "gemini-cli") -> ProviderChoice:
    """The user's Gemini CLI as a summariser: ready when ``gemini`` is found and, for ``auto``, signed in
    with Google; else a choice whose ``problem`` says why not."""
    from inspector.compaction.summarisers.gemini_cli_home import find_gemini, sign_in

    program = find_gemini(env, given)
    if program is None:
        where = f"{given!r} is not a program that can run" if given else "no gemini was found on PATH"
        return ProviderChoice("gemini-cli", "none", f"Gemini CLI was asked for, but {where}" if requested ==
                              "gemini-cli" else where, requested,
                              problem=f"Gemini CLI cannot run: {where} (install it: npm install -g @google/gemini-cli, "
                                      "or name it with --gemini-cli PATH)")
    account = sign_in(env)
    sent = f"the turns to summarise are sent to Gemini through {program} (a run with no tools, its session removed)"
    if requested == "gemini-cli":
        return ProviderChoice("gemini-cli", "gemini_cli", f"Gemini CLI was chosen, {account.words()}: {sent}",
                              requested, program=program)
    if not account.with_google:
        return ProviderChoice("gemini-cli", "none", f"Gemini CLI ({program}) is {account.words()}", requested,
                              problem=f"Gemini CLI is {account.words()}", program=program)
    return ProviderChoice("gemini-cli", "gemini_cli", f"no API key or Vertex AI settings were found, but Gemini CLI "
                          f"is {account.words()}: {sent}", requested, program=program)


def gemini_available(env: Mapping[str, str] | None = None) -> bool:
    return choose_provider("auto", env).provider == "gemini"


def pick_summariser(
    provider: str = "auto",
    *,
    model: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    reporter: Reporter = SILENT,
    gemini_cli: str | None = None,
) -> Summariser:
    """The summariser ``choose_provider`` picks; ``model`` defaults to the session's, else gemini-2.5-flash."""
    choice = choose_provider(provider, env, gemini_cli)
    if choice.provider == "offline":
        from inspector.compaction.summarisers.offline import OfflineSummariser

        return OfflineSummariser(model=model, reporter=reporter)
    if choice.provider == "gemini-cli":
        from inspector.compaction.summarisers.gemini_cli import GeminiCliSummariser

        # (with no gemini found, the run fails and says so, as a run of Gemini with no credentials does)
        return GeminiCliSummariser(model or DEFAULT_MODEL, program=choice.program or gemini_cli or "gemini",
                                   timeout=timeout, env=env)
    from inspector.compaction.summarisers.gemini import GeminiSummariser

    return GeminiSummariser(model or DEFAULT_MODEL, base_url=base_url, timeout=timeout, choice=choice)
