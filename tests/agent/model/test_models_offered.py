"""The models a model driver offers: ``--models`` / ``--model-info`` (and their variables),
and the catalog that completes them with the endpoint's ``GET /models``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import attrs
import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.catalog import ListedModel, ListingUnavailable, ModelCatalog
from acp_sidecar.agent.model.config import ModelProfile, Prices, parse_model_info
from acp_sidecar.cli import build_parser, model_driver_factory, tools_provider
from tests.agent.model.fake_openai import Listing, Reply, ScriptedOpenAI, answer, listed
from tests.agent.model.harness import make_turn
from tests.fakes import Editor

SETTINGS = "context=TOKENS, images, reasoning, input=PRICE, output=PRICE, currency=CODE"

# -- the user's word --------------------------------------------------------------------------


def test_a_model_info_entry_gives_every_setting() -> None:
    profile = parse_model_info(
        "qwen3:8b:context=40960,images,reasoning,input=0.5,output=1.25,currency=EUR",
        "--model-info",
    )
    assert profile == ModelProfile(
        name="qwen3:8b",  # the name ends at the last colon
        context_window=40960,
        images=True,
        reasoning_effort=True,
        prices=Prices(input_per_mtok=0.5, output_per_mtok=1.25, currency="EUR"),
    )
    assert parse_model_info("m:images", "--model-info") == ModelProfile(name="m", images=True)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("gpt-4.1", f"expected NAME:SETTING[,SETTING...] with the settings {SETTINGS}"),
        ("gpt-4.1:", f"expected NAME:SETTING[,SETTING...] with the settings {SETTINGS}"),
        (":context=5", f"expected NAME:SETTING[,SETTING...] with the settings {SETTINGS}"),
        ("m:vision", f"unknown setting 'vision' (settings: {SETTINGS})"),
        ("m:context=0", "context must be a whole number of tokens of at least 1, not '0'"),
        ("m:context=128k", "context must be a whole number of tokens of at least 1, not '128k'"),
        ("m:images=yes", "images takes no value (write just images)"),
        ("m:reasoning=high", "reasoning takes no value (write just reasoning)"),
        ("m:context=5,context=6", "context is given twice"),
        (
            "m:input=-1,output=1,currency=USD",
            "input must be a price per million tokens (a number of at least 0), not '-1'",
        ),
        (
            "m:input=1,output=nan,currency=USD",
            "output must be a price per million tokens (a number of at least 0), not 'nan'",
        ),
        ("m:input=1,output=2,currency=", "currency must be a code such as USD or EUR, not ''"),
        (
            "m:input=2.5",
            "prices need input=, output= and currency= together (missing output=, currency=)",
        ),
        (
            "m:output=10,currency=USD",
            "prices need input=, output= and currency= together (missing input=)",
        ),
    ],
)
def test_a_bad_model_info_is_refused_naming_the_option_and_the_value(
    value: str, problem: str
) -> None:
    with pytest.raises(ValueError) as raised:
        ModelConfig.from_env("m", env={}, model_info=[value])
    assert str(raised.value) == f"--model-info {value!r}: {problem}"


def test_the_environment_variables_are_named_in_their_errors() -> None:
    env = {"ACP_SIDECAR_MODEL_INFO": "a:context=1; b:turbo"}
    with pytest.raises(ValueError) as raised:
        ModelConfig.from_env("m", env=env)
    assert str(raised.value) == (
        f"ACP_SIDECAR_MODEL_INFO ' b:turbo': unknown setting 'turbo' (settings: {SETTINGS})"
    )
    with pytest.raises(ValueError) as raised:
        ModelConfig.from_env("m", env={"ACP_SIDECAR_MODELS": "a,,b"})
    assert str(raised.value) == "ACP_SIDECAR_MODELS 'a,,b': a model name is empty"
    with pytest.raises(ValueError) as raised:
        ModelConfig.from_env("m", env={}, model_info=["a:images", "a:reasoning"])
    assert str(raised.value) == "--model-info: model 'a' is described twice"


def test_models_named_then_described_are_offered_and_the_first_is_the_default() -> None:
    config = ModelConfig.from_env(
        None, env={}, models=["b,a", "c"], model_info=["a:context=8000", "d:reasoning"]
    )
    assert config is not None
    assert config.model == "b"
    assert [p.name for p in config.models] == ["b", "a", "c", "d"]
    assert config.profile("a").context_window == 8000
    assert config.profile("d").reasoning_effort is True


def test_the_options_win_over_the_environment_and_the_environment_alone_works() -> None:
    env = {
        "ACP_SIDECAR_MODELS": "x,y",
        "ACP_SIDECAR_MODEL_INFO": "y:context=100;z:images",
    }
    from_env = ModelConfig.from_env(None, env=env)
    assert from_env is not None and from_env.model == "x"
    assert [(p.name, p.context_window, p.images) for p in from_env.models] == [
        ("x", None, False),
        ("y", 100, False),
        ("z", None, True),
    ]
    given = ModelConfig.from_env("m", env=env, models=["a"], model_info=["a:context=5"])
    assert given is not None
    assert [(p.name, p.context_window) for p in given.models] == [("a", 5)]
    assert ModelConfig.from_env(None, env={}) is None  # no model anywhere: the console


def test_a_bad_value_on_the_command_line_is_what_every_prompt_answers() -> None:
    args = build_parser().parse_args(["--model-info", "m:context=lots"])
    factory = model_driver_factory(args, tools_provider(args))
    assert factory is not None
    driver = factory()
    assert getattr(driver, "message", None) == (
        "acp-sidecar cannot use the configured model: --model-info 'm:context=lots': context "
        "must be a whole number of tokens of at least 1, not 'lots'"
    )


# -- the catalog ------------------------------------------------------------------------------


class FakeLister:
    """Answers the catalog with ``result`` (or raises it) after ``delay`` seconds, bounded by
    the timeout it is given, as the driver's lister is; counts the calls."""

    def __init__(self, result: Sequence[ListedModel] | BaseException, delay: float = 0.0) -> None:
        self.result = result
        self.delay = delay
        self.calls: list[float] = []

    async def __call__(self, timeout: float) -> Sequence[ListedModel]:
        self.calls.append(timeout)
        async with asyncio.timeout(timeout):
            await asyncio.sleep(self.delay)
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


CONFIG = ModelConfig(
    model="main",
    models=(ModelProfile(name="small", context_window=4096), ModelProfile(name="wide")),
)


async def test_the_default_comes_first_then_the_configured_then_the_listed() -> None:
    catalog = ModelCatalog(
        CONFIG,
        FakeLister(
            [
                ListedModel("wide", 200_000),
                ListedModel("small", 99),
                ListedModel("extra", 32_768),
                ListedModel("extra", 1),
            ]
        ),
    )
    assert catalog.names() == ("main", "small", "wide")
    assert catalog.profile("wide").context_window is None
    await catalog.list_models()
    assert catalog.names() == ("main", "small", "wide", "extra")
    assert catalog.profile("wide").context_window == 200_000  # filled in: the user set none
    assert catalog.profile("small").context_window == 4096  # the user's word wins
    assert catalog.profile("extra").context_window == 32_768  # the first entry of a name
    assert catalog.profile("unknown") == ModelProfile(name="unknown")


async def test_the_endpoint_is_asked_once_whoever_waits() -> None:
    listing = FakeLister([ListedModel("extra")])
    catalog = ModelCatalog(CONFIG, listing)
    assert not catalog.listing_started
    await asyncio.gather(catalog.list_models(), catalog.list_models())
    await catalog.list_models()
    assert listing.calls == [2.0]
    assert catalog.listing_done


@pytest.mark.parametrize(
    ("failure", "level", "logged"),
    [
        (ListingUnavailable(), logging.INFO, "does not list its models"),
        (RuntimeError("HTTP 500 said no"), logging.WARNING, "failed (HTTP 500 said no)"),
    ],
)
async def test_a_failed_listing_keeps_the_configured_models_and_is_logged(
    failure: BaseException, level: int, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acp_sidecar.agent.model.catalog")
    catalog = ModelCatalog(CONFIG, FakeLister(failure))
    await catalog.list_models()
    assert catalog.names() == ("main", "small", "wide")
    assert [r.levelno for r in caplog.records if logged in r.getMessage()] == [level]


async def test_a_slow_listing_is_given_up_after_the_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Had the timeout not fired, "late" would be listed (after 30 s, inside the suite's hang guard).
    lister = FakeLister([ListedModel("late")], delay=30)
    catalog = ModelCatalog(CONFIG, lister, timeout=0.2)
    await catalog.list_models()
    assert lister.calls == [0.2]
    assert catalog.names() == ("main", "small", "wide")
    assert "did not list its models within 0.2 s" in caplog.text


# -- the driver against the scripted endpoint -------------------------------------------------


async def test_the_driver_lists_the_endpoint_models_with_their_windows(
    make_driver: Callable[..., ModelDriver], endpoint: ScriptedOpenAI
) -> None:
    endpoint.models = listed("test-model", "big", max_model_len=131072)
    driver = make_driver(models=(ModelProfile(name="test-model", context_window=8192),))
    assert driver.profile().context_window == 8192
    await driver.catalog.list_models()
    assert driver.catalog.names() == ("test-model", "big")
    assert driver.profile("big").context_window == 131072  # vLLM's field
    assert driver.profile().context_window == 8192  # configured: kept
    assert endpoint.listings == 1 and endpoint.requests == []


async def test_a_listing_slower_than_its_timeout_leaves_the_configured_models(
    make_driver: Callable[..., ModelDriver], endpoint: ScriptedOpenAI
) -> None:
    endpoint.models = Listing([{"id": "late"}], delay=5)
    driver = make_driver()
    driver.catalog = ModelCatalog(driver.config, driver._list_models, timeout=0.3)
    await driver.catalog.list_models()
    assert driver.catalog.names() == ("test-model",)  # not "late": the timeout fired


async def test_a_listing_the_endpoint_refuses_is_logged_without_the_key(
    make_driver: Callable[..., ModelDriver],
    endpoint: ScriptedOpenAI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint.models = Listing(status=500)
    driver = make_driver(api_key="sk-secret-key-of-the-user")
    await driver.catalog.list_models()
    assert driver.catalog.names() == ("test-model",)
    assert "listing the models of" in caplog.text and "HTTP 500" in caplog.text
    assert "sk-secret-key-of-the-user" not in caplog.text


async def test_a_turn_asks_for_its_model_and_effort_and_otherwise_the_default(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(answer("one"), answer("two"))
    chosen = attrs.evolve(make_turn(editor), model="other-model", reasoning_effort="high")
    assert await driver.run_turn(chosen) == "end_turn"
    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    first, second = (request.body for request in endpoint.requests)
    assert (first["model"], first["reasoning_effort"]) == ("other-model", "high")
    assert second["model"] == "test-model" and "reasoning_effort" not in second


async def test_an_unknown_chosen_model_is_named_in_the_explanation(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(Reply(status=404, body={"error": {"message": "model not found"}}))
    turn = attrs.evolve(make_turn(editor), model="gone-model")
    assert await driver.run_turn(turn) == "end_turn"
    assert "404 Not Found for model 'gone-model'" in editor.text()


async def test_closing_abandons_a_listing_in_flight_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="acp_sidecar.agent.model.catalog")
    listing = FakeLister([ListedModel("late")], delay=30)
    catalog = ModelCatalog(CONFIG, listing)
    waiting = asyncio.ensure_future(catalog.list_models())
    await asyncio.sleep(0.05)
    catalog.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert catalog.listing_done and catalog.names() == ("main", "small", "wide")
    catalog.list_models()  # never asked again
    assert listing.calls == [2.0]
    assert caplog.records == []
