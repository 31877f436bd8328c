"""Stable case ids: the surface, the kind's letter, and a digest of what the case is, so adding or
reordering cases never renames another one (known_failures.txt names cases by id)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def case_id(prefix: str, kind: str, *content: Any) -> str:
    digest = hashlib.sha1(json.dumps(content, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    return f"{prefix}-{kind[0]}{digest[:7]}"
