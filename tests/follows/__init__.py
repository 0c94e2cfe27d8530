"""Tests of the follows feature: commands, the daily ingest, fresh picks."""
