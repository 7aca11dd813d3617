"""Store adapters. Agent code talks to the ports in ``base``; backends are imported lazily by name."""
