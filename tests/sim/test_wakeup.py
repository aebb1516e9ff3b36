"""Time-dependent policies: the engine's wake-up and the per-class failed-placement memo.

A policy that decides by time (here: FitGpp that preempts only for TE jobs that have waited
``patience`` ticks) must give the same result whether the engine jumps over quiet ticks or
steps every tick. That needs two things: the policy asks for a wake-up at the tick its
decision can change (``eng.wake``), and the TE pass does not reuse a failed-placement memo
that assumed ``choose`` ignores the tick (``memo_safe`` is not inherited).
"""

from dataclasses import dataclass

import pytest
import xarray as xr

import fitgpp
from fitgpp.sim.policies import FitGpp, TwoQueuePolicy

from conftest import cluster_of, random_loaded_trace, scaled


@dataclass(frozen=True)
class Patient(FitGpp):
    """FitGpp that preempts for a TE job only once it has waited ``patience`` ticks."""

    patience: int = 10
    name = "patient"

    def choose(self, eng, i, t):
        due = eng.submit[i] + self.patience
        if t < due:
            eng.wake(due)
            return None
        return super().choose(eng, i, t)


@dataclass(frozen=True)
class PatientNoWake(Patient):
    """The same rule without asking for a wake-up: jumping can then miss the tick it matters."""

    def choose(self, eng, i, t):
        if t < eng.submit[i] + self.patience:
            return None
        return FitGpp.choose(self, eng, i, t)


@dataclass(frozen=True)
class PatientWrongMemo(Patient):
    """The same rule, wrongly vouching that choose() ignores the tick."""

    memo_safe = True


def _both(policy, df, cap):
    cl = cluster_of(cap)
    jumped = fitgpp.simulate(df, cl, policy, jump=True, check=True)
    stepped = fitgpp.simulate(df, cl, policy, jump=False)
    return jumped, stepped


def test_memo_safe_is_declared_per_class_not_inherited():
    assert FitGpp.memo_safe and fitgpp.sim.policies.Lrtp.memo_safe
    assert fitgpp.sim.policies.Rand.memo_safe and fitgpp.sim.policies.Prio.memo_safe
    assert not TwoQueuePolicy.memo_safe
    assert not Patient.memo_safe and not PatientNoWake.memo_safe
    assert PatientWrongMemo.memo_safe


def test_patience_policy_jumping_equals_stepping():
    preempting = 0
    n = scaled(8)
    for seed in range(n):
        df, cap = random_loaded_trace(seed, 80, 3)
        jumped, stepped = _both(Patient(patience=7), df, cap)
        xr.testing.assert_identical(jumped, stepped)
        preempting += int(jumped.preemptions.sum()) > 0
    # the rule bites: in most traces some TE job waited out its patience and then preempted
    assert preempting >= n // 2, f"only {preempting} of {n} traces preempted"


def test_patience_changes_results_so_the_check_above_means_something():
    df, cap = random_loaded_trace(1, 80, 3)
    cl = cluster_of(cap)
    plain = fitgpp.simulate(df, cl, FitGpp())
    patient = fitgpp.simulate(df, cl, Patient(patience=7))
    te = (plain.cls == "TE").values
    # some TE job started later than under plain FitGpp, and none earlier than its patience allows
    assert (patient.first_start.values[te] > plain.first_start.values[te]).any()


def test_without_wake_or_with_a_wrong_memo_jumping_differs():
    """Both mistakes the protocol guards against do change results on some trace."""
    def differs(policy):
        for seed in range(20):
            df, cap = random_loaded_trace(seed, 80, 3)
            a, b = _both(policy, df, cap)
            if not a.identical(b):
                return True
        return False

    assert differs(PatientNoWake(patience=7))
    # With a wrong memo both modes skip the same TE jobs, so compare against the exact run.
    for seed in range(20):
        df, cap = random_loaded_trace(seed, 80, 3)
        cl = cluster_of(cap)
        exact = fitgpp.simulate(df, cl, Patient(patience=7), jump=False)
        wrong = fitgpp.simulate(df, cl, PatientWrongMemo(patience=7), jump=False)
        if not (exact.finish.values == wrong.finish.values).all():
            break
    else:
        pytest.fail("a memo that ignores the tick never changed a result in 20 traces")


def test_wake_must_be_in_the_future():
    @dataclass(frozen=True)
    class BadWake(FitGpp):
        name = "badwake"

        def choose(self, eng, i, t):
            eng.wake(t)
            return None

    df, cap = random_loaded_trace(0, 40, 1)
    with pytest.raises(ValueError, match="wake-up must be in the future"):
        fitgpp.simulate(df, cluster_of(cap), BadWake())
