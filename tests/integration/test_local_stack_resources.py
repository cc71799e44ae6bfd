"""The local stack creates every table, index, stream and queue of the merge template
(``infra/resources.json``) on moto, and resolves the functions' environment (the template against the
code: tests/unit/test_template.py)."""

from __future__ import annotations

import json

import boto3

from local_stack.resources import create_resources
from tests.unit.test_template import ENVIRONMENT, QUEUES, TABLES, TEMPLATE, _gsis


def test_local_stack_creates_every_table_with_its_indexes_and_stream(aws: dict[str, str]) -> None:
    dynamodb = boto3.client("dynamodb")
    assert set(TABLES) <= set(dynamodb.list_tables()["TableNames"])
    for name, table in TABLES.items():
        described = dynamodb.describe_table(TableName=name)["Table"]
        assert described["KeySchema"] == table["Properties"]["KeySchema"], name
        assert {g["IndexName"] for g in described.get("GlobalSecondaryIndexes", [])} == set(_gsis(name)), name
        assert ("StreamSpecification" in table["Properties"]) == ("LatestStreamArn" in described), name
        if "TimeToLiveSpecification" in table["Properties"]:
            ttl = dynamodb.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
            assert ttl["AttributeName"] == table["Properties"]["TimeToLiveSpecification"]["AttributeName"], name


def test_local_stack_creates_every_queue_with_its_redrive_policy(aws: dict[str, str]) -> None:
    sqs = boto3.client("sqs")
    for name, queue in QUEUES.items():
        fifo = bool(queue["Properties"].get("FifoQueue"))
        url = sqs.get_queue_url(QueueName=name + (".fifo" if fifo else ""))["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert attributes.get("FifoQueue", "false") == str(fifo).lower(), name
        redrive = queue["Properties"].get("RedrivePolicy")
        if redrive:
            policy = json.loads(attributes["RedrivePolicy"])
            dead_letter = redrive["deadLetterTargetArn"]["Fn::GetAtt"][0]
            assert policy["deadLetterTargetArn"].endswith(":" + dead_letter + (".fifo" if fifo else ""))
            assert bool(QUEUES[dead_letter]["Properties"].get("FifoQueue")) == fifo, name  # SQS: same kind
            assert int(policy["maxReceiveCount"]) == redrive["maxReceiveCount"]
        else:
            assert "RedrivePolicy" not in attributes


def test_local_stack_resolves_every_environment_variable(aws: dict[str, str]) -> None:
    # Deployment parameters (CORS origins) come from the local stage's settings instead.
    parameters = {v for v, ref in ENVIRONMENT.items() if isinstance(ref, dict) and ref.get("Ref") in TEMPLATE["Parameters"]}
    assert parameters == {"CORS_ALLOWED_ORIGINS"}
    # Secrets are CloudFormation dynamic references, resolved at deployment; local runs sign with the
    # local default instead (settings() refuses it inside Lambda).
    secrets = {v for v, ref in ENVIRONMENT.items() if "{{resolve:secretsmanager:" in json.dumps(ref)}
    assert secrets == {"CURSOR_SECRET"}
    assert set(aws) == set(ENVIRONMENT) - parameters - secrets
    assert all(isinstance(v, str) and v for v in aws.values())
    assert aws["LISTINGS_TABLE"] == "ListingsTable"
    assert aws["APPROVAL_QUEUE_URL"].endswith("/ApprovalQueue")
    stream_arn = boto3.client("dynamodb").describe_table(TableName="EventsTable")["Table"]["LatestStreamArn"]
    assert aws["EVENTS_STREAM_ARN"] == stream_arn


def test_local_stack_creation_is_idempotent(aws: dict[str, str]) -> None:
    assert create_resources() == aws


def test_local_stack_prefix_gives_a_separate_copy(aws: dict[str, str]) -> None:
    environment = create_resources(prefix="other-")
    assert environment["LISTINGS_TABLE"] == "other-ListingsTable"
    assert environment["APPROVAL_QUEUE_URL"].endswith("/other-ApprovalQueue")
    assert "other-EventsTable" in boto3.client("dynamodb").list_tables()["TableNames"]
