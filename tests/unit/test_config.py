"""Configuration: resource names are required, a missing one fails at start naming it, and only
``chalicelib.kernel.config`` reads the environment. Pure: no AWS."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from chalicelib.kernel.config import LOCAL_CURSOR_SECRET, ConfigurationError, Settings
from local_stack.resources import placeholder_environment

ROOT = Path(__file__).resolve().parents[2]
RESOURCE = re.compile(r"_(TABLE|QUEUE_URL|QUEUE_ARN|STREAM_ARN)$")


def test_every_resource_name_is_required() -> None:
    resources = [name for name in Settings.model_fields if RESOURCE.search(name)]
    assert resources
    assert [name for name in resources if not Settings.model_fields[name].is_required()] == []


def test_missing_resource_names_are_all_named() -> None:
    environment = placeholder_environment()
    del environment["LISTINGS_TABLE"]
    environment["EVENTS_STREAM_ARN"] = " "
    with pytest.raises(ConfigurationError) as raised:
        Settings.from_environment(environment)
    assert "LISTINGS_TABLE" in str(raised.value)
    assert "EVENTS_STREAM_ARN" in str(raised.value)


def test_values_are_parsed_from_their_text() -> None:
    settings = Settings.from_environment(
        {**placeholder_environment(), "ALLOW_INSECURE_WEBHOOKS": "true", "AUTH_CACHE_TTL_SECONDS": "5", "OTHER": "x"}
    )
    assert settings.ALLOW_INSECURE_WEBHOOKS is True
    assert settings.AUTH_CACHE_TTL_SECONDS == 5


def test_an_invalid_value_is_named() -> None:
    with pytest.raises(ConfigurationError, match="AUTH_CACHE_TTL_SECONDS"):
        Settings.from_environment({**placeholder_environment(), "AUTH_CACHE_TTL_SECONDS": "-1"})


def test_the_app_does_not_start_without_its_resource_names() -> None:
    environment = {k: v for k, v in placeholder_environment().items() if k != "USERS_TABLE"}
    run = subprocess.run([sys.executable, "-c", "import app"], cwd=ROOT, env=environment,
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "ConfigurationError" in run.stderr
    assert "USERS_TABLE" in run.stderr


def test_only_the_config_module_reads_the_environment() -> None:
    readers = [
        str(path.relative_to(ROOT)) for path in sorted((ROOT / "chalicelib").rglob("*.py"))
        if path.name != "config.py" and re.search(r"os\.environ|os\.getenv|getenv\(", path.read_text())
    ]
    assert readers == []


# --- CURSOR_SECRET: the public local default never signs cursors of a deployed function -------

DEPLOYED = {"AWS_LAMBDA_FUNCTION_NAME": "matching-service-prod-APIHandler"}


def test_local_runs_and_tests_use_the_local_default_without_configuration() -> None:
    settings = Settings.from_environment(placeholder_environment())
    assert settings.CURSOR_SECRET == LOCAL_CURSOR_SECRET
    assert not settings.deployed
    assert settings.deployed_cursor_secret_problem() is None


def test_a_deployed_function_refuses_the_public_default() -> None:
    with pytest.raises(ConfigurationError) as raised:
        Settings.from_environment({**placeholder_environment(), **DEPLOYED})
    message = str(raised.value)
    assert "CURSOR_SECRET" in message
    assert "public local default" in message
    assert "CursorSecret" in message  # says where a deployed stack gets its secret


@pytest.mark.parametrize("secret", [LOCAL_CURSOR_SECRET, f"  {LOCAL_CURSOR_SECRET} ", "short", "x" * 31])
def test_a_deployed_function_refuses_a_public_or_short_secret(secret: str) -> None:
    with pytest.raises(ConfigurationError, match="CURSOR_SECRET"):
        Settings.from_environment({**placeholder_environment(), **DEPLOYED, "CURSOR_SECRET": secret})


def test_a_deployed_function_accepts_a_generated_secret() -> None:
    generated = "Q7x2" * 16  # 64 letters and digits, as the template's GenerateSecretString makes
    settings = Settings.from_environment({**placeholder_environment(), **DEPLOYED, "CURSOR_SECRET": generated})
    assert settings.deployed
    assert generated == settings.CURSOR_SECRET


def test_a_local_run_may_set_any_secret() -> None:
    settings = Settings.from_environment({**placeholder_environment(), "CURSOR_SECRET": "short"})
    assert settings.CURSOR_SECRET == "short"


def test_a_deployed_function_with_the_default_fails_at_cold_start() -> None:
    environment = {**placeholder_environment(), **DEPLOYED}
    run = subprocess.run([sys.executable, "-c", "import app"], cwd=ROOT, env=environment,
                         capture_output=True, text=True, check=False)
    assert run.returncode != 0
    assert "ConfigurationError" in run.stderr
    assert "CURSOR_SECRET" in run.stderr
