"""Replays of a workload through the scheduler in simulated time (issue 16)."""
