"""Scenarios: scripted, deterministic HTTP/3 exchanges that become recorded traces."""
