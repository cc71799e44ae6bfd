"""What operators read: metrics in CloudWatch embedded metric format, X-Ray subsegments, and the
request id that ties a request to its events and delivery attempts.
"""
