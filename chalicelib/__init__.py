"""Matching Service: listings, search, requests, conversations and webhooks on AWS Chalice."""
