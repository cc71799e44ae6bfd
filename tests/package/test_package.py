"""The output of ``chalice package`` (``make package``): the merged SAM template, cfn-lint, and the bundle.

``make package`` builds ``out/`` and runs this folder with ``PACKAGED_DIR=out``; without it the
fixture packages the prod stage into a temporary directory itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from chalicelib.config import LOCAL_CURSOR_SECRET, MIN_DEPLOYED_CURSOR_SECRET_LENGTH
from infra import cfn_functions
from tests.unit.test_packaging import ENVIRONMENT, ROOT, of_type


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output of ``chalice package --stage prod --merge-template infra/resources.json``: the
    ``PACKAGED_DIR`` that ``make package`` built, else a fresh package in a temporary directory."""
    if os.environ.get("PACKAGED_DIR"):
        return Path(os.environ["PACKAGED_DIR"]).resolve()
    out = tmp_path_factory.mktemp("package")
    env = {**os.environ, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", "us-east-1")}
    env.pop("AWS_ENDPOINT_URL", None)
    command = [str(Path(sys.executable).parent / "chalice"), "package", "--stage", "prod",
               "--merge-template", "infra/resources.json", str(out)]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def test_packaged_template_merges_cleanly(packaged: Path) -> None:
    text = (packaged / "sam.json").read_text()
    sam = json.loads(text)
    assert "000000000000" not in text, "a placeholder ARN survived the merge"
    assert all("Type" in r for r in sam["Resources"].values()), "an override without a Chalice resource"
    functions = {n: r for n, r in sam["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert set(functions) == set(of_type("AWS::Serverless::Function"))
    assert not [n for n, r in sam["Resources"].items() if r["Type"] == "AWS::IAM::Role" and n != cfn_functions.ROLE]
    for name, function in functions.items():
        props = function["Properties"]
        assert props["Runtime"] == "python3.13", name
        assert props["Role"] == {"Fn::GetAtt": [cfn_functions.ROLE, "Arn"]}, name
        assert not set(props.get("Environment", {}).get("Variables", {})) & set(ENVIRONMENT), f"{name} shadows Globals"
        for event in props.get("Events", {}).values():
            assert "BatchSize" in event["Properties"], "Chalice's settings were lost in the merge"
    assert sam["Globals"]["Function"]["Environment"]["Variables"] == ENVIRONMENT


def test_cfn_lint_reports_no_errors(packaged: Path) -> None:
    run = subprocess.run(
        [str(Path(sys.executable).parent / "cfn-lint"), str(packaged / "sam.json")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_bundle_holds_the_app_and_its_data_only(packaged: Path) -> None:
    names = set(zipfile.ZipFile(packaged / "deployment.zip").namelist())
    assert {"app.py", "chalicelib/geocoding/data/cities.json.gz", "chalicelib/categories/data/jobs.json"} <= names
    tops = {n.split("/", 1)[0] for n in names}
    assert not tops & {"tests", "local_stack", "infra", "scripts", "moto", "bench"}
    assert {"pydantic_core", "aws_lambda_powertools"} <= tops


def test_deployed_functions_get_the_generated_cursor_secret(packaged: Path) -> None:
    sam = json.loads((packaged / "sam.json").read_text())
    secret = sam["Resources"]["CursorSecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret"
    assert secret["Properties"]["GenerateSecretString"]["PasswordLength"] >= MIN_DEPLOYED_CURSOR_SECRET_LENGTH
    reference = sam["Globals"]["Function"]["Environment"]["Variables"]["CURSOR_SECRET"]
    assert reference == {"Fn::Sub": "{{resolve:secretsmanager:${CursorSecret}:SecretString}}"}
    functions = [r for r in sam["Resources"].values() if r["Type"] == "AWS::Serverless::Function"]
    assert functions
    for function in functions:  # no function overrides it with a literal (the public default or another)
        assert "CURSOR_SECRET" not in function["Properties"].get("Environment", {}).get("Variables", {})
    assert LOCAL_CURSOR_SECRET not in (packaged / "sam.json").read_text()
