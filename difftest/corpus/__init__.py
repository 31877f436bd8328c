"""The suite's corpora, one module per surface; `all_cases()` is every case, in a stable order."""

from __future__ import annotations

from . import claude_browser, claude_computer, fn_browser, runners


def all_cases() -> list[dict]:
    return [*claude_computer.cases(), *claude_browser.cases(), *fn_browser.cases(), *runners.cases()]
