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
from typing import Any

import pytest

from chalicelib.kernel.config import LOCAL_CURSOR_SECRET, MIN_DEPLOYED_CURSOR_SECRET_LENGTH
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
    assert not [n for n in names if n.startswith("chalicelib/") and n.endswith(".pyc")]  # local bytecode stays local


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


# -- operations: tracing, alarms, their topic, the dashboard ------------------------

FUNCTIONS = ["APIHandler", "DeliverSlowWebhooks", "DeliverWebhooks", "EnqueueApprovals", "EnqueueWebhookDeliveries",
             "EraseAccounts", "FinishListingDeletions", "MaintainListingPostings", "MaintainProfilePostings",
             "PercolateSavedSearches", "RetryWebhookDeliveries"]
STREAM_CONSUMERS = {"MaintainListingPostings": 60_000, "MaintainProfilePostings": 60_000, "PercolateSavedSearches": 60_000,
                    "EnqueueWebhookDeliveries": 300_000, "EnqueueApprovals": 300_000, "EraseAccounts": 300_000,
                    "FinishListingDeletions": 300_000}
DEAD_LETTER_QUEUES = ["ApprovalDeadLetterQueue", "DeliveryDeadLetterQueue", "DeliveryRetryDeadLetterQueue",
                      "EventsStreamFailureQueue"]

#: alarm logical id -> (namespace, metric, statistic, dimensions, comparison, threshold), written out
#: here (not imported from infra/cfn_alarms.py) so that a changed generator shows in review.
EXPECTED_ALARMS: dict[str, tuple[str, str, str, dict[str, Any], str, float]] = {
    **{f"{q}NotEmptyAlarm": ("AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum",
                             {"QueueName": {"Fn::GetAtt": [q, "QueueName"]}}, "GreaterThanThreshold", 0)
       for q in DEAD_LETTER_QUEUES},
    **{f"{q}OldestMessageAlarm": ("AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum",
                                  {"QueueName": {"Fn::GetAtt": [q, "QueueName"]}}, "GreaterThanThreshold", age)
       for q, age in {"ApprovalQueue": 86400, "DeliveryQueue": 300, "SlowDeliveryQueue": 900, "DeliveryRetryQueue": 900}.items()},
    **{f"{f}{m}Alarm": ("AWS/Lambda", m, "Sum", {"FunctionName": {"Ref": f}}, "GreaterThanOrEqualToThreshold", 1)
       for f in FUNCTIONS for m in ("Errors", "Throttles")},
    **{f"{f}IteratorAgeAlarm": ("AWS/Lambda", "IteratorAge", "Maximum", {"FunctionName": {"Ref": f}},
                                "GreaterThanThreshold", ms) for f, ms in STREAM_CONSUMERS.items()},
    "Api5xxRateAlarm": ("AWS/ApiGateway", "5XXError", "Average", {"ApiName": "matching-service"}, "GreaterThanThreshold", 0.01),
    "ApiLatencyP99Alarm": ("AWS/ApiGateway", "Latency", "p99", {"ApiName": "matching-service"}, "GreaterThanThreshold", 2000),
}


def test_every_function_and_the_api_stage_trace_with_xray(packaged: Path) -> None:
    sam = json.loads((packaged / "sam.json").read_text())
    assert sam["Globals"]["Function"]["Tracing"] == "Active"
    functions = {n: r for n, r in sam["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}
    assert sorted(functions) == FUNCTIONS
    for name, function in functions.items():  # none overrides the global setting
        assert function["Properties"].get("Tracing", "Active") == "Active", name
    assert sam["Resources"]["RestAPI"]["Properties"]["TracingEnabled"] is True
    role = sam["Resources"][cfn_functions.ROLE]["Properties"]
    assert role["ManagedPolicyArns"] == [{"Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/AWSXRayDaemonWriteAccess"}]


def test_each_alarm_watches_its_metric_at_its_threshold_and_notifies_the_topic(packaged: Path) -> None:
    sam = json.loads((packaged / "sam.json").read_text())
    alarms = {n: r["Properties"] for n, r in sam["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert sorted(alarms) == sorted(EXPECTED_ALARMS)
    for name, (namespace, metric, statistic, dimensions, comparison, threshold) in EXPECTED_ALARMS.items():
        alarm = alarms[name]
        assert (alarm["Namespace"], alarm["MetricName"]) == (namespace, metric), name
        assert alarm.get("Statistic", alarm.get("ExtendedStatistic")) == statistic, name
        assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == dimensions, name
        assert (alarm["ComparisonOperator"], alarm["Threshold"]) == (comparison, threshold), name
        assert alarm["AlarmActions"] == alarm["OKActions"] == [{"Ref": "AlarmTopic"}], name
        assert alarm["TreatMissingData"] == "notBreaching", name
        assert alarm["AlarmDescription"], name
    for function in FUNCTIONS + DEAD_LETTER_QUEUES:  # every reference resolves to a resource of the stack
        assert function in sam["Resources"]


def test_alarms_notify_an_email_subscription_from_a_parameter(packaged: Path) -> None:
    sam = json.loads((packaged / "sam.json").read_text())
    topic = sam["Resources"]["AlarmTopic"]
    assert topic["Type"] == "AWS::SNS::Topic"
    assert topic["Properties"]["Subscription"] == [{"Protocol": "email", "Endpoint": {"Ref": "AlarmEmail"}}]
    assert sam["Parameters"]["AlarmEmail"]["Type"] == "String"


def test_one_dashboard_graphs_the_alarms_metrics_and_the_service_metrics(packaged: Path) -> None:
    sam = json.loads((packaged / "sam.json").read_text())
    dashboards = [r for r in sam["Resources"].values() if r["Type"] == "AWS::CloudWatch::Dashboard"]
    assert len(dashboards) == 1
    body = json.loads(dashboards[0]["Properties"]["DashboardBody"]["Fn::Sub"])
    series = [s for w in body["widgets"] for s in w["properties"]["metrics"]]
    graphed = {(s[0], s[1]) for s in series}
    assert {(a[0], a[1]) for a in EXPECTED_ALARMS.values()} <= graphed
    assert {("MatchingService", m) for m in ("IndexerLag", "Deliveries", "LaneAge", "ApprovalQueueAge", "SearchLatency",
                                              "SearchItemsRead", "WebhooksDisabled", "RateLimitRefusals")} <= graphed
    references = {p for s in series for p in s if isinstance(p, str) and p.startswith("${")}
    for reference in references - {"${AWS::Region}"}:
        assert reference[2:-1].split(".")[0] in sam["Resources"], reference
