"""What the engine refuses a policy, and why, in words: the engine raises
:class:`~fitgpp.sim.engine.PolicyError` with these before anything changes, so a policy
written in a notebook that breaks the protocol is told which job, which tick and why, instead
of failing later in the engine's bookkeeping or overcommitting a node without a word."""

from __future__ import annotations

from fitgpp.sim.states import RUNNING, STATE_NAMES, WAITING


def preempt_refusal(eng, i: int) -> str | None:
    """Why running BE job ``i`` may not be preempted now; None if it may."""
    if eng.te[i]:
        return "it is a TE job (TE jobs are never preempted)"
    if eng.state[i] != RUNNING:
        return f"it is {STATE_NAMES[eng.state[i]]}, not running"
    if eng.max_preemptions is not None and eng.preemptions[i] >= eng.max_preemptions:
        return f"it was already preempted {eng.preemptions[i]} times (max_preemptions)"
    return None


def start_refusal(eng, i: int, nodes) -> str:
    """Why job ``i`` may not start on ``nodes`` (the engine found that it may not)."""
    if eng.state[i] != WAITING:
        return f"it is {STATE_NAMES[eng.state[i]]}, not waiting"
    need = (eng.dg[i], eng.dc[i], eng.dm[i])
    for n in nodes:
        free = (eng.free_g[n], eng.free_c[n], eng.free_m[n])
        if any(f < d for f, d in zip(free, need)):
            return (f"node {n} has {free[0]} GPU, {free[1]} mCPU, {free[2]} MiB free, and each "
                    f"task needs {need[0]} GPU, {need[1]} mCPU, {need[2]} MiB")
    return "it does not fit"
