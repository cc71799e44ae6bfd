"""The CloudFormation merge template (``infra/resources.json``) against the code that uses it.

Every table, index, stream and queue the code refers to must be declared; the committed JSON
must be what ``infra/build_template.py`` renders. That the local stack creates all of it is checked
on moto in tests/integration/test_local_stack_resources.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from chalicelib.kernel.config import LOCAL_CURSOR_SECRET, MIN_DEPLOYED_CURSOR_SECRET_LENGTH, Settings
from chalicelib.listings import owner_list
from chalicelib.listings.index import GEO_PARTITION_PRECISIONS, index_attributes
from chalicelib.listings.repository import PENDING_INDEX, pending_attributes
from chalicelib.persistence import outbox
from infra import build_template
from local_stack.resources import load_template, placeholder_environment, resources_of_type

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = load_template()
TABLES = resources_of_type(TEMPLATE, "AWS::DynamoDB::Table")
QUEUES = resources_of_type(TEMPLATE, "AWS::SQS::Queue")
ENVIRONMENT: dict[str, Any] = TEMPLATE["Globals"]["Function"]["Environment"]["Variables"]
#: Settings that name a deployed resource (the rest are plain options).
RESOURCE_SETTINGS = [name for name in Settings.model_fields if re.search(r"_(TABLE|QUEUE_URL|QUEUE_ARN|STREAM_ARN)$", name)]

_INDEX_LITERAL = re.compile(r"""["']?IndexName["']?\s*[=:]\s*(f?)["']([^"']+)["']""")
#: In a file that passes ``IndexName`` through a variable, index names are the ``"by..."`` literals.
_BY_LITERAL = re.compile(r"""["'](by[A-Z]\w*)["']""")
_TABLE_SETTING = re.compile(r"settings\(\)\.(\w+_TABLE)\b")
#: The geo indexes are named by one f-string over the partition precisions (search.index.geo_index).
_GEO_INDEX_FSTRING = 'f"activeByGeoCell{precision}"'
GEO_INDEXES = [f"activeByGeoCell{p}" for p in GEO_PARTITION_PRECISIONS]


def _gsis(table: str) -> dict[str, list[str]]:
    """Index name -> key attribute names (hash, range) of ``table``."""
    return {
        g["IndexName"]: [k["AttributeName"] for k in g["KeySchema"]]
        for g in TABLES[table]["Properties"].get("GlobalSecondaryIndexes", [])
    }


def _code_index_references() -> list[tuple[Path, str, list[str]]]:
    """``(file, index name, tables named in that file)`` for every literal ``IndexName`` in chalicelib/.

    f-strings over ``{precision}`` expand to every indexed precision; other f-strings are skipped;
    files that pass ``IndexName`` a variable contribute their ``"by..."`` literals.
    """
    found: set[tuple[Path, str, tuple[str, ...]]] = set()
    for path in sorted((ROOT / "chalicelib").rglob("*.py")):
        text = path.read_text()
        if "IndexName" not in text and _GEO_INDEX_FSTRING not in text:
            continue
        tables = tuple(sorted(set(_TABLE_SETTING.findall(text))))
        names = set(_BY_LITERAL.findall(text))
        for is_fstring, name in _INDEX_LITERAL.findall(text):
            if not is_fstring:
                names.add(name)
        if _GEO_INDEX_FSTRING in text:
            names.update(GEO_INDEXES)
        found.update((path.relative_to(ROOT), n, tables) for n in names)
    return [(path, name, list(tables)) for path, name, tables in sorted(found)]


def _table_of_setting(setting: str) -> str:
    """The logical id a table setting names by convention: ``CONVERSATION_MEMBERS_TABLE`` -> ``ConversationMembersTable``.

    (Resource settings have no defaults: the template injects them; see chalicelib.kernel.config.)
    """
    return "".join(word.capitalize() for word in setting.split("_"))


# --- generated, committed, consistent -------------------------------------------------


def test_committed_template_is_the_generator_output() -> None:
    assert (ROOT / "infra" / "resources.json").read_text() == build_template.render()


def test_template_parses_and_has_the_sam_shape() -> None:
    assert TEMPLATE["Transform"] == "AWS::Serverless-2016-10-31"
    assert TABLES
    assert QUEUES


# --- tables and settings --------------------------------------------------------------


def test_resource_settings_are_found() -> None:
    assert {"USERS_TABLE", "LISTINGS_TABLE", "API_KEYS_TABLE", "EVENTS_TABLE", "APPROVAL_QUEUE_URL", "EVENTS_STREAM_ARN"} <= set(
        RESOURCE_SETTINGS
    )


@pytest.mark.parametrize("setting", [s for s in RESOURCE_SETTINGS if s.endswith("_TABLE")])
def test_every_table_setting_names_a_template_table_injected_by_ref(setting: str) -> None:
    table = _table_of_setting(setting)
    assert table in TABLES, f"{setting} defaults to {table}, which the template does not declare"
    assert ENVIRONMENT.get(setting) == {"Ref": table}


@pytest.mark.parametrize("setting", RESOURCE_SETTINGS)
def test_every_resource_setting_is_set_by_the_template(setting: str) -> None:
    assert setting in ENVIRONMENT


def test_every_template_variable_is_a_setting_the_code_reads() -> None:
    assert set(ENVIRONMENT) <= set(Settings.model_fields)


def test_every_table_the_code_names_is_declared() -> None:
    named = {name for path in (ROOT / "chalicelib").rglob("*.py") for name in _TABLE_SETTING.findall(path.read_text())}
    assert named
    for setting in named:
        assert _table_of_setting(setting) in TABLES, setting


# --- indexes --------------------------------------------------------------------------


def test_the_code_refers_to_indexes() -> None:
    names = {name for _, name, _ in _code_index_references()}
    assert {"activeByCategoryShard", "activeByRoleShard", *GEO_INDEXES} <= names
    # The owner's listings index is named through a constant (owner_list): checked against the template below.


@pytest.mark.parametrize(
    ("path", "index", "tables"), [pytest.param(*ref, id=f"{ref[0]}:{ref[1]}") for ref in _code_index_references()]
)
def test_every_index_the_code_queries_exists_on_its_table(path: Path, index: str, tables: list[str]) -> None:
    candidates = [_table_of_setting(t) for t in tables] if len(tables) == 1 else list(TABLES)
    assert any(index in _gsis(t) for t in candidates), f"{path}: {index} not declared on {candidates}"


def test_listing_search_indexes_are_keyed_by_the_attributes_the_code_writes() -> None:
    gsis = _gsis("ListingsTable")
    listing = {"listingId": "lst_1", "categoryKey": "jobs", "roleKey": "hiring", "createdAt": "2026-01-01T00:00:00.000Z",
               "meta": {"location": "Berlin", "location_lat": "52.52", "location_lng": "13.405"}}
    written = set(index_attributes(listing))
    for precision in GEO_PARTITION_PRECISIONS:
        assert gsis[f"activeByGeoCell{precision}"] == [f"geoCell{precision}", "geoPoint"]
    assert gsis["activeByCategoryShard"] == ["activeCategoryShard", "activeNewest"]
    assert gsis["activeByRoleShard"] == ["activeRoleShard", "activeNewest"]
    searched = ("activeByCategoryShard", "activeByRoleShard", *GEO_INDEXES)
    assert {a for name in searched for a in gsis[name]} == written
    assert gsis[owner_list.INDEX_NAME] == [owner_list.PARTITION, owner_list.SORT] == ["ownerId", "ownerNewest"]


def test_the_listings_table_declares_no_unused_search_index() -> None:
    assert set(_gsis("ListingsTable")) == {
        owner_list.INDEX_NAME, "activeByCategoryShard", "activeByRoleShard",
        *GEO_INDEXES, PENDING_INDEX,
    }


def test_the_pending_review_index_is_keyed_by_the_attributes_the_repository_writes() -> None:
    assert _gsis("ListingsTable")[PENDING_INDEX] == list(pending_attributes("lst_x", "2026-01-01T00:00:00.000Z"))


# --- stream and queues ----------------------------------------------------------------


def test_events_table_streams_new_images_and_the_functions_get_its_arn() -> None:
    stream = TABLES["EventsTable"]["Properties"]["StreamSpecification"]
    assert stream["StreamViewType"] in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES")
    assert ENVIRONMENT["EVENTS_STREAM_ARN"] == {"Fn::GetAtt": ["EventsTable", "StreamArn"]}


def test_event_ttl_attribute_is_the_one_the_outbox_writes() -> None:
    put = outbox.event_op(outbox.LISTING_SUBMITTED, {"listingId": "lst_1", "version": 1})["Put"]
    ttl = TABLES["EventsTable"]["Properties"]["TimeToLiveSpecification"]
    assert ttl == {"AttributeName": "expiresAt", "Enabled": True}
    assert "N" in put["Item"][ttl["AttributeName"]]


def test_approval_queue_is_injected_and_has_a_dead_letter_queue() -> None:
    assert ENVIRONMENT["APPROVAL_QUEUE_URL"] == {"Ref": "ApprovalQueue"}
    redrive = QUEUES["ApprovalQueue"]["Properties"]["RedrivePolicy"]
    dead_letter = redrive["deadLetterTargetArn"]["Fn::GetAtt"]
    assert dead_letter[1] == "Arn"
    assert dead_letter[0] in QUEUES
    assert "RedrivePolicy" not in QUEUES[dead_letter[0]]["Properties"]
    assert redrive["maxReceiveCount"] > 1


def test_every_queue_with_a_redrive_policy_points_at_a_declared_queue() -> None:
    for name, queue in QUEUES.items():
        redrive = queue["Properties"].get("RedrivePolicy")
        if redrive:
            assert redrive["deadLetterTargetArn"]["Fn::GetAtt"][0] in QUEUES, name


def test_delivery_lanes_are_a_fifo_queue_with_explicit_deduplication_and_a_dead_letter_queue() -> None:
    lanes = QUEUES["DeliveryQueue"]["Properties"]
    assert (lanes["FifoQueue"], lanes["ContentBasedDeduplication"]) == (True, False)
    assert ENVIRONMENT["DELIVERY_QUEUE_URL"] == {"Ref": "DeliveryQueue"}
    assert ENVIRONMENT["DELIVERY_QUEUE_ARN"] == {"Fn::GetAtt": ["DeliveryQueue", "Arn"]}
    assert lanes["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["DeliveryDeadLetterQueue", "Arn"]}
    # its consumer: one message per invocation, partial batch responses
    consumer = TEMPLATE["Resources"]["DeliverWebhooks"]["Properties"]["Events"]["DeliverWebhooksSqsEventSource"]
    assert consumer["Type"] == "SQS"
    assert consumer["Properties"]["Queue"] == {"Fn::GetAtt": ["DeliveryQueue", "Arn"]}
    assert consumer["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_slow_lanes_are_a_fifo_queue_of_their_own_with_the_lanes_dead_letter_queue_and_an_age_alarm() -> None:
    slow = QUEUES["SlowDeliveryQueue"]["Properties"]
    assert (slow["FifoQueue"], slow["ContentBasedDeduplication"]) == (True, False)
    assert ENVIRONMENT["DELIVERY_SLOW_QUEUE_URL"] == {"Ref": "SlowDeliveryQueue"}
    assert ENVIRONMENT["DELIVERY_SLOW_QUEUE_ARN"] == {"Fn::GetAtt": ["SlowDeliveryQueue", "Arn"]}
    assert slow["RedrivePolicy"] == QUEUES["DeliveryQueue"]["Properties"]["RedrivePolicy"]
    consumer = TEMPLATE["Resources"]["DeliverSlowWebhooks"]["Properties"]["Events"]["DeliverSlowWebhooksSqsEventSource"]
    assert consumer["Properties"]["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert "SlowDeliveryQueueOldestMessageAlarm" in TEMPLATE["Resources"]


def test_every_ref_and_getatt_in_the_environment_names_a_declared_resource() -> None:
    for variable, value in ENVIRONMENT.items():
        if isinstance(value, dict) and "Fn::GetAtt" in value:
            assert value["Fn::GetAtt"][0] in TEMPLATE["Resources"], variable
        elif isinstance(value, dict) and "Fn::Sub" in value:  # ${Name} names a declared resource
            names = re.findall(r"\$\{(\w+)[.}]", value["Fn::Sub"])
            assert names, variable
            assert set(names) <= set(TEMPLATE["Resources"]), variable
        elif isinstance(value, dict):  # a Ref names a resource or a deployment parameter
            assert value["Ref"] in {**TEMPLATE["Resources"], **TEMPLATE["Parameters"]}, variable


# --- CORS preflight by API Gateway -----------------------------------------------------------


def test_every_api_path_has_a_preflight_mock_integration_with_the_stage_origins() -> None:
    from app import app

    paths = TEMPLATE["Resources"]["RestAPI"]["Properties"]["DefinitionBody"]["paths"]
    assert set(paths) == {p for p in app.routes if p.startswith("/v1/")}
    for path, operations in paths.items():
        integration = operations["options"]["x-amazon-apigateway-integration"]
        assert integration["type"] == "mock"
        response = integration["responses"]["default"]
        methods = response["responseParameters"]["method.response.header.Access-Control-Allow-Methods"]
        assert methods == "'" + ", ".join(sorted({*app.routes[path], "OPTIONS"})) + "'"
        assert "Idempotency-Key" in response["responseParameters"]["method.response.header.Access-Control-Allow-Headers"]
        assert "${CorsAllowedOrigins}" in response["responseTemplates"]["application/json"]["Fn::Sub"]
    assert TEMPLATE["Parameters"]["CorsAllowedOrigins"]["Default"] == ""  # none by default in production
    assert ENVIRONMENT["CORS_ALLOWED_ORIGINS"] == {"Ref": "CorsAllowedOrigins"}


def test_idempotency_table_has_the_powertools_layout_and_a_ttl() -> None:
    props = TABLES["IdempotencyTable"]["Properties"]
    assert props["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert ENVIRONMENT["IDEMPOTENCY_TABLE"] == {"Ref": "IdempotencyTable"}


# --- the cursor secret: generated per stack, injected by a dynamic reference ------------------


def test_the_cursor_secret_is_generated_per_stack_and_injected_by_a_dynamic_reference() -> None:
    secret = TEMPLATE["Resources"][build_template.CURSOR_SECRET_RESOURCE]
    assert secret["Type"] == "AWS::SecretsManager::Secret"
    generated = secret["Properties"]["GenerateSecretString"]
    assert generated["PasswordLength"] >= MIN_DEPLOYED_CURSOR_SECRET_LENGTH
    assert "SecretString" not in secret["Properties"], "the value is generated, never written in the template"
    # Resolved by CloudFormation when the functions are deployed; the Ref of a secret is its ARN.
    assert ENVIRONMENT["CURSOR_SECRET"] == {"Fn::Sub": "{{resolve:secretsmanager:${CursorSecret}:SecretString}}"}


def test_the_local_stack_leaves_the_deploy_time_secret_to_the_local_default() -> None:
    environment = placeholder_environment()
    assert "CURSOR_SECRET" not in environment
    assert Settings.from_environment(environment).CURSOR_SECRET == LOCAL_CURSOR_SECRET
