"""Documented agents' records, built by code from the shapes in the agent notes (one module an agent), for the
agent's own tests and for the tests of shared mechanisms that need a store of that shape."""
