"""Gates in front of "next item": other apps decide who may be served work.

`annotate` does not know about qualification; `qc` registers a gate when it loads. A gate
returns None to let the worker through, or a refusal saying why and what to do next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class WorkRefusal:
    code: str  # machine-readable, e.g. "qualification_test", "blocked"
    message: str  # shown to the worker
    extra: dict = field(default_factory=dict)


WorkGate = Callable[..., WorkRefusal | None]
_gates: list[WorkGate] = []


def work_gate_register(gate: WorkGate) -> None:
    if gate not in _gates:
        _gates.append(gate)


def work_refusal(*, project, worker) -> WorkRefusal | None:
    for gate in _gates:
        refusal = gate(project=project, worker=worker)
        if refusal is not None:
            return refusal
    return None
