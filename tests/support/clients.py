"""The fixture that closes the providers' shared HTTP clients after a test.

``pi_coder.ai`` keeps one ``httpx.AsyncClient`` per event loop; a test that talks to a provider
uses it with ``pytestmark = pytest.mark.usefixtures("close_shared_clients")`` so no client
outlives its loop (``tests/conftest.py`` registers the fixture).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pi_coder.ai._http import aclose_clients


@pytest.fixture
async def close_shared_clients() -> AsyncIterator[None]:
    yield
    await aclose_clients()
