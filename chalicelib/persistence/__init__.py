"""DynamoDB plumbing the repositories share: clients and attribute conversion, named transactions
and their item shapes, batch reads, the outbox, stream records and record checks. Only
repositories, transactions and stream consumers import it.
"""
