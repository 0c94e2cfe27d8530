"""Feature: follows (arXiv categories, OpenAlex authors, citing papers), their daily ingest and fresh picks."""
