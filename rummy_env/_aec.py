"""PettingZoo's ``AECEnv`` under a name that the type checker knows as a class.

pettingzoo ships no type information, so ``AECEnv`` is ``Any`` to mypy; a class of ours
that subclasses it directly has no known base. Compiled ahead of time (mypyc), such a class
loses the base altogether when it is kept a Python class (its bases are taken from mypy's
view), and mislays its instance ``__dict__`` when it is made a native one. Subclassing
:class:`AECBase`, defined in this module, which is never compiled, keeps ``AECEnv`` a base
in both modes.
"""

from __future__ import annotations

from pettingzoo import AECEnv


class AECBase(AECEnv):
    """``pettingzoo.AECEnv``, unchanged (see the module docstring)."""
