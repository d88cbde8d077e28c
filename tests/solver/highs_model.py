"""Solving an integer programme with HiGHS: the plumbing shared by the two MILP references
(``milp_reference.py``, ``milp_compact.py``), which share no modelling code."""

from __future__ import annotations

from collections.abc import Sequence

import highspy
import numpy as np

INF = highspy.kHighsInf
Row = tuple[float, float, list[int], list[float]]
"""``(lower, upper, column indices, coefficients)`` of one constraint row."""


def maximise(cost: Sequence[float], lower: Sequence[float], upper: Sequence[float],
             rows: Sequence[Row]) -> int | None:
    """The optimum of ``max cost . x`` over integer ``x`` within the bounds and rows,
    rounded to an integer, or ``None`` when no ``x`` is feasible (single thread, exact).

    Raises:
        RuntimeError: HiGHS ended with another status.
    """
    n = len(cost)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(rows)
    lp.col_cost_ = np.array(cost, dtype=np.double)
    lp.col_lower_ = np.array(lower, dtype=np.double)
    lp.col_upper_ = np.array(upper, dtype=np.double)
    lp.row_lower_ = np.array([r[0] for r in rows], dtype=np.double)
    lp.row_upper_ = np.array([r[1] for r in rows], dtype=np.double)
    lp.sense_ = highspy.ObjSense.kMaximize
    starts, index, value = [0], [], []
    for r in rows:
        index.extend(r[2])
        value.extend(r[3])
        starts.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value, dtype=np.double)
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = len(rows)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    solver.setOptionValue("mip_rel_gap", 0.0)
    solver.passModel(lp)
    solver.run()
    status = solver.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS status {solver.modelStatusToString(status)}")
    return int(round(solver.getInfo().objective_function_value))
