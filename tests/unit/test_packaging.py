"""Production packaging: the merge template against the code (the reverse of test_template.py:
everything the template declares is used), its IAM policy, event source mappings and API
stage, and the first-admin bootstrap CLI's arguments. The output of ``chalice package`` with
cfn-lint: tests/package (``make package``); the CLI against tables: tests/integration."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from chalice.app import DynamoDBEventConfig, SQSEventConfig
from chalice.utils import to_cfn_resource_name

from chalicelib.kernel.config import Settings
from chalicelib.listings.index import GEO_PARTITION_PRECISIONS
from infra import cfn_api, cfn_functions, cfn_iam
from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE: dict[str, Any] = json.loads((ROOT / "infra" / "resources.json").read_text())
RESOURCES: dict[str, Any] = TEMPLATE["Resources"]
ENVIRONMENT: dict[str, Any] = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
CODE = {p: p.read_text() for p in [ROOT / "app.py", *sorted((ROOT / "chalicelib").rglob("*.py"))]}
ALL_CODE = "\n".join(CODE.values())

#: Properties SAM accepts on ``DynamoDB`` / ``SQS`` events and on gateway responses (SAM spec);
#: cfn-lint does not check these.
SAM_DYNAMODB_EVENT = {
    "BatchSize", "BisectBatchOnFunctionError", "DestinationConfig", "Enabled", "FilterCriteria", "FunctionResponseTypes",
    "KmsKeyArn", "MaximumBatchingWindowInSeconds", "MaximumRecordAgeInSeconds", "MaximumRetryAttempts", "MetricsConfig",
    "ParallelizationFactor", "StartingPosition", "StartingPositionTimestamp", "Stream", "TumblingWindowInSeconds",
}
SAM_SQS_EVENT = {
    "BatchSize", "Enabled", "FilterCriteria", "FunctionResponseTypes", "KmsKeyArn", "MaximumBatchingWindowInSeconds",
    "MetricsConfig", "Queue", "ScalingConfig",
}
GATEWAY_RESPONSE_TYPES = {
    "ACCESS_DENIED", "API_CONFIGURATION_ERROR", "AUTHORIZER_CONFIGURATION_ERROR", "AUTHORIZER_FAILURE", "BAD_REQUEST_BODY",
    "BAD_REQUEST_PARAMETERS", "DEFAULT_4XX", "DEFAULT_5XX", "EXPIRED_TOKEN", "INTEGRATION_FAILURE", "INTEGRATION_TIMEOUT",
    "INVALID_API_KEY", "INVALID_SIGNATURE", "MISSING_AUTHENTICATION_TOKEN", "QUOTA_EXCEEDED", "REQUEST_TOO_LARGE",
    "RESOURCE_NOT_FOUND", "THROTTLED", "UNAUTHORIZED", "UNSUPPORTED_MEDIA_TYPE", "WAF_FILTERED",
}

#: boto3 calls (as written in chalicelib) -> the IAM action they need.
CALLS: dict[str, str] = {
    r"\.get_item\(|\.transact_get_items\(": "dynamodb:GetItem",
    r"\.batch_get_item\(": "dynamodb:BatchGetItem",
    r"\.query\(": "dynamodb:Query",
    r"\.scan\(": "dynamodb:Scan",
    r"\"put_item\"|\.put_item\(|\bput_op\(|\btx_put\(": "dynamodb:PutItem",
    r"\"update_item\"|\.update_item\(|\bupdate_op\(|\btx_update\(": "dynamodb:UpdateItem",
    r"\"delete_item\"|\.delete_item\(|\bdelete_op\(|\btx_delete\(": "dynamodb:DeleteItem",
    r"\btx_check\(": "dynamodb:ConditionCheckItem",
    r"\.batch_write_item\(": "dynamodb:BatchWriteItem",
    r"\.describe_table\(": "dynamodb:DescribeTable",
    r"\.send_message(_batch)?\(": "sqs:SendMessage",
    r"\.receive_message\(": "sqs:ReceiveMessage",
    r"\.delete_message(_batch)?\(": "sqs:DeleteMessage",
    r"\.change_message_visibility(_batch)?\(": "sqs:ChangeMessageVisibility",
    r"\.get_queue_attributes\(": "sqs:GetQueueAttributes",
    r"\.purge_queue\(": "sqs:PurgeQueue",
    r"client\(\"geo-places\"\)": "geo-places:Geocode",
}


def of_type(kind: str) -> dict[str, Any]:
    return {name: r for name, r in RESOURCES.items() if r["Type"] == kind}


def referenced(value: Any) -> set[str]:
    """Logical ids named by ``Ref`` / ``Fn::GetAtt`` / ``${X.Attr}`` anywhere in ``value``."""
    text = json.dumps(value)
    names = set(re.findall(r'"Ref": "(\w+)"', text)) | set(re.findall(r'"Fn::GetAtt": \["(\w+)"', text))
    return names | set(re.findall(r"\$\{(\w+)[.}]", text))


def env_used_by_code(variable: str) -> bool:
    return variable in Settings.model_fields and re.search(rf"\.{variable}\b", ALL_CODE) is not None


def event_sources() -> list[Any]:
    from app import app

    return list(app.event_sources)


# -- the merge template and the code (test_template.py checks freshness and the other direction) --


def test_every_table_is_used_by_the_code() -> None:
    used = {name for var, value in ENVIRONMENT.items() if env_used_by_code(var) for name in referenced(value)}
    assert set(of_type("AWS::DynamoDB::Table")) <= used


def test_every_index_is_queried_by_the_code() -> None:
    for table, resource in of_type("AWS::DynamoDB::Table").items():
        for index in resource["Properties"].get("GlobalSecondaryIndexes", []):
            name = index["IndexName"]
            prefix, digits = re.fullmatch(r"(.*?)(\d*)", name).groups()  # type: ignore[union-attr]
            literal = f'"{name}"' in ALL_CODE
            templated = bool(digits) and f'"{prefix}{{' in ALL_CODE and int(digits) in GEO_PARTITION_PRECISIONS
            assert literal or templated, f"{table}.{name} is queried nowhere"


def test_every_ttl_attribute_is_written_by_the_code() -> None:
    for table, resource in of_type("AWS::DynamoDB::Table").items():
        ttl = resource["Properties"].get("TimeToLiveSpecification")
        if ttl:
            assert f'"{ttl["AttributeName"]}"' in ALL_CODE, table


def test_every_stream_feeds_an_event_handler() -> None:
    streams = {name for name, r in of_type("AWS::DynamoDB::Table").items() if "StreamSpecification" in r["Properties"]}
    consumed = {
        event["Properties"]["Stream"]["Fn::GetAtt"][0]
        for r in of_type("AWS::Serverless::Function").values()
        for event in r["Properties"].get("Events", {}).values()
        if event["Type"] == "DynamoDB"
    }
    assert streams == consumed
    for name in streams:
        assert RESOURCES[name]["Properties"]["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}


def test_every_queue_is_used_or_catches_failures() -> None:
    queues = of_type("AWS::SQS::Queue")
    used = {name for var, value in ENVIRONMENT.items() if env_used_by_code(var) for name in referenced(value)} & set(queues)
    dead_letters = {q["Properties"]["RedrivePolicy"]["deadLetterTargetArn"]["Fn::GetAtt"][0] for q in queues.values()
                    if "RedrivePolicy" in q["Properties"]}
    destinations = referenced([r["Properties"].get("Events") for r in of_type("AWS::Serverless::Function").values()])
    assert set(queues) == used | dead_letters | (destinations & set(queues))
    for name in used:
        assert "RedrivePolicy" in queues[name]["Properties"], f"{name} has no dead-letter queue"


def test_tables_are_on_demand_with_point_in_time_recovery() -> None:
    for name, table in of_type("AWS::DynamoDB::Table").items():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST", name
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}, name
        assert table["DeletionPolicy"] == "Retain", name


# -- IAM -------------------------------------------------------------------------------------


def statements() -> list[dict[str, Any]]:
    role = RESOURCES[cfn_functions.ROLE]
    return [s for policy in role["Properties"]["Policies"] for s in policy["PolicyDocument"]["Statement"]]


def test_policy_grants_exactly_the_calls_the_code_makes() -> None:
    called = {action for pattern, action in CALLS.items() if re.search(pattern, ALL_CODE)}
    granted_for_code = set(cfn_iam.TABLE_ACTIONS) | set(cfn_iam.GEOCODING_ACTIONS)
    granted_for_code |= {a for actions in cfn_iam.QUEUE_ACTIONS.values() for a in actions}
    assert called - granted_for_code == set(), "calls without permission"
    assert granted_for_code - called == set(), "permissions no code uses"
    granted = {a for s in statements() for a in s["Action"]}
    assert granted_for_code <= granted


def test_policy_has_no_wildcard_action_or_resource() -> None:
    for statement in statements():
        assert statement["Effect"] == "Allow"
        assert all("*" not in action for action in statement["Action"]), statement["Sid"]
        assert all(resource != "*" for resource in statement["Resource"]), statement["Sid"]
        assert referenced(statement["Resource"]) or "AWS::" in json.dumps(statement["Resource"]), statement["Sid"]


def test_event_sources_may_read_their_stream_and_queue() -> None:
    by_sid = {s["Sid"]: s for s in statements()}
    assert set(cfn_iam.STREAM_READ_ACTIONS) <= set(by_sid["StreamRead"]["Action"])
    assert by_sid["StreamList"]["Action"] == ["dynamodb:ListStreams"]
    assert set(cfn_iam.QUEUE_POLL_ACTIONS) <= set(by_sid["DeliveryRetryQueue"]["Action"])
    assert by_sid["EventSourceFailures"]["Resource"] == [{"Fn::GetAtt": [cfn_functions.STREAM_FAILURE_QUEUE, "Arn"]}]


# -- functions, event source mappings, API stage ------------------------------------------------


def test_overrides_exist_for_exactly_the_apps_functions() -> None:
    functions = of_type("AWS::Serverless::Function")
    expected = {cfn_functions.API_HANDLER} | {to_cfn_resource_name(s.name) for s in event_sources()}
    assert set(functions) == expected
    for name, function in functions.items():
        assert function["Properties"]["Role"] == {"Fn::GetAtt": [cfn_functions.ROLE, "Arn"]}, name


#: Stream consumers of ordinary tables; every other stream handler reads the outbox (EventsTable).
TABLE_STREAMS = {"maintain_listing_postings": "ListingsTable", "maintain_profile_postings": "UsersTable"}


def test_event_source_mappings_report_partial_failures_and_bound_retries() -> None:
    functions = of_type("AWS::Serverless::Function")
    for source in event_sources():
        events = functions[to_cfn_resource_name(source.name)]["Properties"]["Events"]
        (event_name, event), = events.items()
        props = event["Properties"]
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        if isinstance(source, DynamoDBEventConfig):
            assert event_name == to_cfn_resource_name(source.name + "-dynamodb-event-source")
            assert event["Type"] == "DynamoDB"
            assert set(props) <= SAM_DYNAMODB_EVENT
            assert props["Stream"] == {"Fn::GetAtt": [TABLE_STREAMS.get(source.name, "EventsTable"), "StreamArn"]}
            assert props["BisectBatchOnFunctionError"] is True
            assert 0 < props["MaximumRetryAttempts"] <= 10000
            assert 60 <= props["MaximumRecordAgeInSeconds"] <= 604800
            assert props["DestinationConfig"]["OnFailure"]["Type"] == "SQS"
        else:
            assert isinstance(source, SQSEventConfig)
            assert event_name == to_cfn_resource_name(source.name + "-sqs-event-source")
            assert event["Type"] == "SQS"
            assert set(props) <= SAM_SQS_EVENT
            queue = RESOURCES[props["Queue"]["Fn::GetAtt"][0]]
            config = json.loads((ROOT / ".chalice" / "config.json").read_text())
            timeout = config["stages"]["prod"].get("lambda_functions", {}).get(source.name, {}).get("lambda_timeout", 60)
            assert queue["Properties"]["VisibilityTimeout"] >= timeout


def test_the_local_runner_batches_the_posting_indexers_as_deployed() -> None:
    # The local runner reads batch size and window from app.py's decorators; Lambda from the template.
    functions = of_type("AWS::Serverless::Function")
    for source in event_sources():
        if source.name in TABLE_STREAMS:
            (event,) = functions[to_cfn_resource_name(source.name)]["Properties"]["Events"].values()
            assert isinstance(source, DynamoDBEventConfig)
            assert source.batch_size == event["Properties"]["BatchSize"] == cfn_functions.POSTINGS_SCALING["BatchSize"]
            window = event["Properties"]["MaximumBatchingWindowInSeconds"]
            assert source.maximum_batching_window_in_seconds == window == cfn_functions.POSTINGS_SCALING["MaximumBatchingWindowInSeconds"]


def test_resource_of_arn_maps_placeholders_and_local_names() -> None:
    tables, queues = ["EventsTable", "UsersTable"], ["DeliveryRetryQueue", "DeliveryRetryDeadLetterQueue"]
    assert cfn_functions.resource_of_arn("arn:aws:dynamodb:us-east-1:1:table/EventsTable/stream/placeholder", tables) == "EventsTable"
    assert cfn_functions.resource_of_arn("arn:aws:sqs:us-east-1:1:t1DeliveryRetryQueue", queues) == "DeliveryRetryQueue"
    with pytest.raises(ValueError, match="none of the template"):
        cfn_functions.resource_of_arn("arn:aws:sqs:us-east-1:1:Other", queues)


def test_stage_throttling_and_gateway_error_bodies() -> None:
    api = RESOURCES["RestAPI"]["Properties"]
    (settings,) = api["MethodSettings"]
    assert settings["ThrottlingRateLimit"] == {"Ref": "ApiThrottlingRateLimit"}
    assert settings["ThrottlingBurstLimit"] == {"Ref": "ApiThrottlingBurstLimit"}
    assert {"ApiThrottlingRateLimit", "ApiThrottlingBurstLimit"} <= set(TEMPLATE["Parameters"])
    responses = api["GatewayResponses"]
    assert set(responses) <= GATEWAY_RESPONSE_TYPES
    assert {"MISSING_AUTHENTICATION_TOKEN", "THROTTLED", "ACCESS_DENIED", "UNAUTHORIZED", "REQUEST_TOO_LARGE",
            "DEFAULT_4XX", "DEFAULT_5XX"} <= set(responses)
    for kind, response in responses.items():
        assert set(response) <= {"StatusCode", "ResponseParameters", "ResponseTemplates"}, kind
        template = response["ResponseTemplates"]["application/json"]
        body = json.loads(template.replace("$context.error.messageString", '"message"'))
        assert set(body) == {"code", "error", "requestId"}, kind
        assert body["requestId"] == "$context.requestId", kind
        assert response["ResponseParameters"]["Headers"]["X-Request-Id"] == "context.requestId", kind
        for name, value in cfn_api.SECURITY_HEADERS.items():  # a Dashboard path without a route is answered here
            assert response["ResponseParameters"]["Headers"][name] == f"'{value}'", (kind, name)
            assert "'" not in value, name  # static values are single-quoted: no quote inside
    assert responses["MISSING_AUTHENTICATION_TOKEN"]["StatusCode"] == "404"
    assert json.loads(responses["MISSING_AUTHENTICATION_TOKEN"]["ResponseTemplates"]["application/json"])["code"] == "NOT_FOUND"
    throttled = responses["THROTTLED"]
    assert throttled["StatusCode"] == "429"
    assert throttled["ResponseParameters"]["Headers"]["Retry-After"] == f"'{cfn_api.RETRY_AFTER_SECONDS}'"
    assert responses["REQUEST_TOO_LARGE"]["StatusCode"] == "413"











# -- scripts/create_admin_key.py ---------------------------------------------------------------------


def load_cli() -> ModuleType:
    return load_script("scripts/create_admin_key.py", "create_admin_key")




def test_create_admin_key_reads_the_tables_from_the_stack() -> None:
    cli = load_cli()

    class CloudFormation:
        def describe_stack_resource(self, StackName: str, LogicalResourceId: str) -> dict[str, Any]:
            assert (StackName, LogicalResourceId) == ("prod", "APIHandler")
            return {"StackResourceDetail": {"PhysicalResourceId": "prod-APIHandler-X"}}

    class Lambda:
        def get_function_configuration(self, FunctionName: str) -> dict[str, Any]:
            assert FunctionName == "prod-APIHandler-X"
            return {"Environment": {"Variables": {"USERS_TABLE": "prod-Users", "API_KEYS_TABLE": "prod-Keys", "X": "y"}}}

    assert cli.tables_from_stack("prod", CloudFormation(), Lambda()) == {"USERS_TABLE": "prod-Users", "API_KEYS_TABLE": "prod-Keys"}


def test_create_admin_key_needs_table_names(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("USERS_TABLE", raising=False)
    monkeypatch.delenv("API_KEYS_TABLE", raising=False)
    assert load_cli().main([]) == 2
    assert "--stack" in capsys.readouterr().err
