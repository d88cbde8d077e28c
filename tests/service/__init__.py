"""Game-service tests (real server on port 0, real Redis)."""
