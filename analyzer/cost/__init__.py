"""The cost model: what a history finding costs over a session, and whether a bound the code
shows really stays bounded (simulated with the engine)."""
