"""Text analysis for search, domain-free: folding, Snowball stems, stop words and the analysis
languages. Nothing here knows listings, profiles or DynamoDB."""
