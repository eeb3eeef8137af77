"""Save and load one evaluator agent as a safetensors file (never pickle).

A file holds the weights as flat named float32 arrays (``layer_0/kernel``, ``layer_0/bias``, ...)
and string metadata: the format and its version, the rules preset, the network shape, the input
encoding version, plus any extra ``str -> str`` entries the caller adds (lineage, run id, ...).
A network with ``material_input`` also has ``layer_L/material_weight`` and the entry
``material_input = "true"``; files without the entry are plain networks, written byte for byte as
before the entry existed. A CNN, transformer or NNUE network (``architectures``) adds the entry
``architecture`` and its settings (``cnn_channels``, ``cnn_dense``; ``transformer_layers``,
``transformer_heads``, ``transformer_width``; ``nnue_width``, ``nnue_hidden``), and names its tensors
by their parameter paths (``block_0/attention/query/kernel``, ``accumulator/kernel``);
MLP files carry none of these and stay as they were.
``load_agent`` checks all of it and refuses a file that does not fit with a ``ValueError`` that
names the problem.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np
from safetensors.numpy import save

from neurocheckers.formats import RESERVED_AGENT_KEYS
from neurocheckers.networks.architectures import nest_tensors, tensor_shapes
from neurocheckers.networks.evaluator import INPUT_ENCODING, EvaluatorSpec, Params
from neurocheckers.networks.numpy_agent import FORMAT, FORMAT_VERSION, read_agent_file
from neurocheckers.rules.presets import PRESETS, Rules, get_rules


@dataclasses.dataclass(frozen=True)
class Agent:
    """One loaded agent.

    Fields:
      rules: the rules preset the agent was trained for.
      spec: the network shape.
      params: the member's parameter pytree (``evaluator`` layout, jnp float32 arrays).
      metadata: every metadata entry of the file, reserved ones included.
    """

    rules: Rules
    spec: EvaluatorSpec
    params: Params
    metadata: dict[str, str]


def _leaf(params: Params, name: str) -> np.ndarray:
    """The float32 array at agent-file tensor ``name`` (its keys joined by "/") of ``params``."""
    node = params
    for key in name.split("/"):
        node = node[key]
    return np.asarray(node, dtype=np.float32)


def save_agent(
    path: str | os.PathLike,
    rules: Rules | str,
    spec: EvaluatorSpec,
    params: Params,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write one member's ``params`` (shaped as ``spec``) to ``path`` with its metadata (file mode
    from the umask, e.g. 0644)."""
    rules = get_rules(rules)
    if rules.board_size != spec.board_size:
        raise ValueError(f"spec board_size {spec.board_size} does not fit rules {rules.name!r}")
    extra = dict(metadata or {})
    for key, val in extra.items():
        if not isinstance(key, str) or not isinstance(val, str):
            raise ValueError(f"metadata must map str to str, got {key!r}: {val!r}")
        if key in RESERVED_AGENT_KEYS:
            raise ValueError(f"metadata key {key!r} is reserved by the agent file format")
    tensors: dict[str, np.ndarray] = {}
    for name, shape in tensor_shapes(spec).items():
        try:
            array = _leaf(params, name)
        except (KeyError, TypeError, IndexError):
            raise ValueError(f"params lack {name} expected by {spec}") from None
        if array.shape != shape:
            raise ValueError(f"params {name} has shape {array.shape}, expected {shape} for {spec}")
        tensors[name] = np.ascontiguousarray(array)
    n_given = len(jax.tree.leaves(params))
    if n_given != len(tensors):
        raise ValueError(f"params have {n_given} arrays, expected {len(tensors)} for {spec}")
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "rules": rules.name,
        "board_size": str(spec.board_size),
        "layers": str(spec.layers),
        "width": str(spec.width),
        "input_encoding": INPUT_ENCODING,
    }
    if spec.material_input:  # only then: plain networks' files stay as they always were
        header["material_input"] = "true"
    header.update(spec.metadata())  # the architecture: none for an MLP, whose files stay the same
    # Written with open() rather than safetensors' save_file, which makes the file private (0600):
    # agent files are meant to be shared, so they get the usual mode from the umask (e.g. 0644).
    with open(path, "wb") as f:
        f.write(save(tensors, metadata={**header, **extra}))


def load_agent(path: str | os.PathLike, rules: Rules | str | None = None) -> Agent:
    """Read an agent written by ``save_agent``.

    When ``rules`` is given, the file must have been written for a preset with its moves (its end
    rules may differ: an ``american8`` agent plays under ``american8-openspiel``), and the agent gets
    ``rules``. Raises ``ValueError`` naming the problem for a file that is not an agent file, has
    another format or encoding version, names an unknown preset, or holds weights whose names or
    shapes do not fit its metadata.
    """
    where = os.fspath(path)
    checked = read_agent_file(path)  # the format, shape and weight checks, shared with NumPy users
    metadata = checked.metadata
    preset = metadata.get("rules")
    if preset not in PRESETS:
        raise ValueError(f"{where}: unknown rules preset {preset!r}; known: {', '.join(PRESETS)}")
    file_rules = PRESETS[preset]
    if rules is not None and not get_rules(rules).same_moves(file_rules):
        raise ValueError(f"{where}: agent plays {preset!r}, but {get_rules(rules).name!r} was asked for")
    file_rules = file_rules if rules is None else get_rules(rules)  # e.g. american8-openspiel's end rule
    if checked.board_size != file_rules.board_size:
        raise ValueError(f"{where}: board_size {checked.board_size} does not fit rules preset {preset!r}")
    spec = checked.spec
    assert spec is not None  # read_agent_file always sets it
    params = nest_tensors({name: jnp.asarray(checked.tensors[name]) for name in tensor_shapes(spec)})
    return Agent(rules=file_rules, spec=spec, params=params, metadata=metadata)
