"""The states of a job in the engine (docs/model.md): pending (not yet submitted), waiting,
running, stopping (in its grace period after a preemption signal), done."""

PENDING, WAITING, RUNNING, STOPPING, DONE = range(5)
STATE_NAMES = ("pending", "waiting", "running", "stopping", "done")
