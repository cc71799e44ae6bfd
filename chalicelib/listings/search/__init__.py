"""Listing search: sparse ACTIVE indexes by category and by geohash cell, filters in memory."""
