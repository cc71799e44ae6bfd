"""The OpenAPI 3.1 document, generated from the route table, the pydantic models and the webhook
event catalogue, and the route that serves it.
"""
