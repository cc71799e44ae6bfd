"""The Dashboard: server-rendered pages under ``/dashboard`` over the same services as the API."""
