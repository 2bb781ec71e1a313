"""Skip for a missing server or package, except under ``CI=true``, where it fails."""

from __future__ import annotations

import os

import pytest

__all__ = ["IN_CI", "unavailable"]

IN_CI = os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> None:
    """Skip the test with ``reason``, or fail it under CI, where everything must be present."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: every server and package must be present)", pytrace=False)
    pytest.skip(reason)
