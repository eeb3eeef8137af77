"""Save and load one evaluator agent as a safetensors file (never pickle).

A file holds the weights as flat named float32 arrays (``layer_0/kernel``, ``layer_0/bias``, ...)
and string metadata: the format and its version, the rules preset, the network shape, the input
encoding version, plus any extra ``str -> str`` entries the caller adds (lineage, run id, ...).
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
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from neurocheckers.evaluator import INPUT_ENCODING, EvaluatorSpec, Params, param_shapes
from neurocheckers.rules.presets import PRESETS, Rules, get_rules

FORMAT = "neurocheckers-agent"
"""Value of the ``format`` metadata entry."""
FORMAT_VERSION = "1"
"""Version of this file layout; bumped when it changes incompatibly."""
RESERVED_KEYS = ("format", "format_version", "rules", "board_size", "layers", "width", "input_encoding")
"""Metadata keys written by ``save_agent``; extra metadata may not use them."""


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


def _tensor_name(layer: str, leaf: str) -> str:
    return f"{layer}/{leaf}"


def save_agent(
    path: str | os.PathLike,
    rules: Rules | str,
    spec: EvaluatorSpec,
    params: Params,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write one member's ``params`` (shaped as ``spec``) to ``path`` with its metadata."""
    rules = get_rules(rules)
    if rules.board_size != spec.board_size:
        raise ValueError(f"spec board_size {spec.board_size} does not fit rules {rules.name!r}")
    extra = dict(metadata or {})
    for key, val in extra.items():
        if not isinstance(key, str) or not isinstance(val, str):
            raise ValueError(f"metadata must map str to str, got {key!r}: {val!r}")
        if key in RESERVED_KEYS:
            raise ValueError(f"metadata key {key!r} is reserved by the agent file format")
    expected = param_shapes(spec)
    tensors: dict[str, np.ndarray] = {}
    for layer, leaves in expected.items():
        for leaf, shape in leaves.items():
            try:
                array = np.asarray(params[layer][leaf], dtype=np.float32)
            except (KeyError, TypeError):
                raise ValueError(f"params lack {_tensor_name(layer, leaf)} expected by {spec}") from None
            if array.shape != shape:
                raise ValueError(
                    f"params {_tensor_name(layer, leaf)} has shape {array.shape}, expected {shape} for {spec}"
                )
            tensors[_tensor_name(layer, leaf)] = np.ascontiguousarray(array)
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
    save_file(tensors, os.fspath(path), metadata={**header, **extra})


def _positive_int(metadata: Mapping[str, str], key: str, path: str) -> int:
    raw = metadata.get(key)
    try:
        number = int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{path}: metadata {key!r} must be a positive integer, got {raw!r}") from None
    if number < 1:
        raise ValueError(f"{path}: metadata {key!r} must be a positive integer, got {raw!r}")
    return number


def load_agent(path: str | os.PathLike, rules: Rules | str | None = None) -> Agent:
    """Read an agent written by ``save_agent``.

    When ``rules`` is given, the file must have been written for that preset. Raises ``ValueError``
    naming the problem for a file that is not an agent file, has another format or encoding version,
    names an unknown preset, or holds weights whose names or shapes do not fit its metadata.
    """
    where = os.fspath(path)
    try:
        with safe_open(where, framework="numpy") as f:
            metadata = dict(f.metadata() or {})
            tensors = {name: f.get_tensor(name) for name in f.keys()}  # noqa: SIM118 (not a dict)
    except (SafetensorError, OSError) as error:
        raise ValueError(f"{where}: not a readable safetensors file ({error})") from None
    if metadata.get("format") != FORMAT:
        raise ValueError(f"{where}: metadata 'format' is {metadata.get('format')!r}, expected {FORMAT!r}")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(
            f"{where}: format_version {metadata.get('format_version')!r} is not supported "
            f"(this code reads {FORMAT_VERSION!r})"
        )
    if metadata.get("input_encoding") != INPUT_ENCODING:
        raise ValueError(
            f"{where}: input_encoding {metadata.get('input_encoding')!r} differs from this code's "
            f"{INPUT_ENCODING!r}"
        )
    preset = metadata.get("rules")
    if preset not in PRESETS:
        raise ValueError(f"{where}: unknown rules preset {preset!r}; known: {', '.join(PRESETS)}")
    file_rules = PRESETS[preset]
    if rules is not None and get_rules(rules) != file_rules:
        raise ValueError(f"{where}: agent plays {preset!r}, but {get_rules(rules).name!r} was asked for")
    board_size = _positive_int(metadata, "board_size", where)
    if board_size != file_rules.board_size:
        raise ValueError(f"{where}: board_size {board_size} does not fit rules preset {preset!r}")
    try:
        spec = EvaluatorSpec(
            layers=_positive_int(metadata, "layers", where),
            width=_positive_int(metadata, "width", where),
            board_size=board_size,
        )
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None

    expected = {
        _tensor_name(layer, leaf): shape
        for layer, leaves in param_shapes(spec).items()
        for leaf, shape in leaves.items()
    }
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(f"{where}: weights do not fit {spec}: missing {missing}, unexpected {unexpected}")
    params: dict[str, dict[str, jax.Array]] = {}
    for name, shape in expected.items():
        array = tensors[name]
        if array.shape != shape:
            raise ValueError(f"{where}: {name} has shape {array.shape}, expected {shape} for {spec}")
        if array.dtype != np.float32:
            raise ValueError(f"{where}: {name} has dtype {array.dtype}, expected float32")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{where}: {name} holds non-finite values")
        layer, leaf = name.split("/")
        params.setdefault(layer, {})[leaf] = jnp.asarray(array)
    return Agent(rules=file_rules, spec=spec, params=params, metadata=metadata)
