"""The world: literature source clients, rate limits, the HTTP cache and the local library."""
