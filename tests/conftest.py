"""Suite-wide set-up.

Before anything is collected, this process's environment is isolated (:mod:`tests.isolation`):
a temporary home, config, data and state directory and session store, and none of the user's
``ACP_SIDECAR_*``, ``OPENAI_*`` or ``*_API_KEY`` variables. Every sidecar the tests start, in
process or as a subprocess, therefore reads no config file of the user's and keeps its
sessions in the temporary store.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest
from hypothesis import HealthCheck, settings

from tests import spawns
from tests.isolation import isolate

_roots: list[Path] = []

# No wall-clock limit on a property test: Hypothesis's default deadline (200 ms an example) and
# its too-slow health check fail a correct test on a loaded machine (the examples still run).
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_configure(config: pytest.Config) -> None:
    _roots.append(Path(tempfile.mkdtemp(prefix="acp-sidecar-tests-")))
    isolate(_roots[-1])
    # A run stopped from outside (CI's time limit, `timeout`) still ends with its summary:
    # SIGTERM interrupts the test under way the way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    spawns.watch()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The marks that follow from where a test is and what it uses (see :mod:`tests.spawns`)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if _PACKAGING in item.nodeid.split("::")[0].split("/"):
            item.add_marker(pytest.mark.packaging)
        if fixtures & spawns.PROCESS_FIXTURES:
            item.add_marker(pytest.mark.process)
    _heaviest_first(items)


def _heaviest_first(items: list[pytest.Item]) -> None:
    """Order the modules by how many of their tests start processes, most first (each module's
    own order kept): under ``-n`` a worker takes a module whole, and the slow ones taken last
    would leave the other worker idle; the many quick in-process modules fill the end."""
    spawning: dict[str, int] = {}
    for item in items:
        module = _module_of(item)
        spawns_one = item.get_closest_marker("process") is not None
        spawning[module] = spawning.get(module, 0) + spawns_one
    first = {module: place for place, module in enumerate(spawning)}
    items.sort(key=lambda item: (-spawning[_module_of(item)], first[_module_of(item)]))


def _module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


_PACKAGING = "packaging"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under ``-n``, a module's tests run on one worker, so its module-scoped sidecars start
    once, and all the packaging tests on one, so the wheel is built once.

    A scheduler rather than ``xdist_group`` marks: pytest-xdist 3.8 names a test's group by
    rewriting ``item._nodeid``, which pytest 9.2 no longer reads, so the marks grouped nothing."""
    from xdist.scheduler import LoadFileScheduling

    class ByModule(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return _PACKAGING if _PACKAGING in module.split("/") else module

    config.option.loadscopereorder = False  # by test count: a few slow tests came last
    return ByModule(config, log)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    spawns.started.clear()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    """A test that started an interpreter without the ``process`` mark fails, saying which."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    commands, spawns.started[:] = list(spawns.started), []
    if not commands or item.get_closest_marker("process") is not None:
        return
    listing = os.environ.get(spawns.LIST_VARIABLE)
    if listing:  # finding the tests to mark: listed (passed or not), not failed
        with open(listing, "a", encoding="utf-8") as listed:
            listed.write(f"{item.nodeid}\t{report.when}\t{commands[0][:300]}\n")
    elif not report.failed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started {len(commands)} interpreter process(es) in its "
            f"{report.when} but is not marked `process` (tests/spawns.py): {commands[0][:300]}"
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    for root in _roots:
        shutil.rmtree(root, ignore_errors=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signum}")
