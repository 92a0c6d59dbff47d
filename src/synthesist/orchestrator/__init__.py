"""The manager: rounds of agents, stop rules in code, checkpoints, fallback synthesis and the event stream."""
