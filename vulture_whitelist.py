"""Names that vulture (`make lint`, [tool.vulture] in pyproject.toml) cannot see used: a framework,
a library or a template calls or reads them by name. Each line makes one name "used"; the comment
says who uses it. This file is read by vulture only: nothing imports or runs it (ruff skips it).

Framework entry points registered by decorator (Chalice handlers and routes, the Dashboard's
pages, pydantic validators, pytest fixtures) and the spec's camelCase field names are not listed
here: pyproject.toml's ``ignore_decorators`` and ``ignore_names`` cover them.
"""

# http.server / socketserver: request handler methods and class attributes the server calls or reads
# (local_stack/server.py, bench/, tests' webhook receivers).
_.do_GET
_.do_POST
_.do_PUT
_.do_DELETE
_.do_HEAD
_.do_PATCH
_.do_OPTIONS
_.log_message
_.protocol_version
_.close_connection
_.daemon_threads
_.request_queue_size
_.disable_nagle_algorithm

# chalice.local: LocalDevServer's handler hook for gateway errors, overridden (local_stack/server.py).
_._send_error_response
_.__bases__

# The Lambda context interface the local runner fakes (local_stack/runner.py).
_.function_name
_.memory_limit_in_mb
_.invoked_function_arn
_.aws_request_id

# Callback signatures fixed by the caller: Powertools' idempotency response hook
# (chalicelib/idempotency/service.py), signal handlers (local_stack/__main__.py), botocore's
# Endpoint.make_request replaced by the unit tests' guard (tests/unit/conftest.py).
_.idempotent_data
_.frame
_.request_dict

# httpcore's NetworkBackend interface (chalicelib/webhooks/delivery/sender.py).
_.connect_unix_socket

# Read by Jinja templates (chalicelib/dashboard/templates/).
_.rich  # listing.html
_.subject_title  # conversation.html

# Enum members and model or TypedDict fields read by value through validation, JSON and DynamoDB
# items, never as attributes: chalicelib/kernel/channels.py, chalicelib/reports/records.py,
# chalicelib/kernel/profile_summary.py (spec §6 social keys), chalicelib/persistence/transact_items.py,
# chalicelib/auth/records.py.
_.TELEGRAM
_.DISCORD
_.WHATSAPP
_.SIGNAL
_.EMAIL
_.SPAM
_.SCAM
_.HARASSMENT
_.HATE
_.INAPPROPRIATE
_.IMPERSONATION
_.OTHER
_.linkedin
_.github
_.instagram
_.tiktok
_.youtube
_.website
_.replaces  # chalicelib/auth/records.py: read as record.get("replaces")
_.Put
_.Update
_.Delete

# pytest: the class-scoped ``stack`` fixture, imported by the test modules whose classes use it
# (tests/integration/helpers.py); pytest finds it by its name in the module.
class_stack
