"""Adapters: translate a platform's payloads to the core's messages and back, nothing else."""
