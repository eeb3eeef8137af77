"""The board evaluators: network shapes (``architectures``, no JAX), the flax networks and their
input encoding (``evaluator``), agent files (``agent_file``; ``numpy_agent`` reads them without JAX)
and the learning arithmetic that trains them (``fitting``)."""
