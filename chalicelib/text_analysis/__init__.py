"""Text analysis for search, domain-free: the analyzer (folding, stemming, query terms), the typo
rules and candidates, and the BM25F scorer. Nothing here knows listings, profiles or DynamoDB."""
