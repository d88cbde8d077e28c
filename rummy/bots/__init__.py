"""Bots: policies behind one :class:`~rummy.bots.base.Bot` protocol, by registry name.

``make_bot(name, seed)`` builds one for a seat; the registry ``BOTS`` maps names to classes.
Testers' own bots are named ``package.module:Class`` or registered by an installed package
under the entry point group ``rummy.bots`` (docs/bots.md); :func:`check_bot` accepts all three,
each with restrictions after ``!`` (``greedy!no-rearrange``, :mod:`rummy.bots.restrict`).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from rummy.bots.base import Bot, BotBase
from rummy.bots.basic import BasicBot
from rummy.bots.random_bot import RandomBot
from rummy.bots.restrict import SEP, parse_restrictions, restricted_class, split_name

BOTS: dict[str, type[BotBase]] = {
    "random": RandomBot,
    "basic": BasicBot,
}

try:  # solver-based bots register themselves when present
    from rummy.bots.greedy import GreedyBot
    BOTS["greedy"] = GreedyBot
except ImportError:  # pragma: no cover
    pass
try:
    from rummy.bots.strategic import StrategicBot
    BOTS["strategic"] = StrategicBot
except ImportError:  # pragma: no cover
    pass
try:  # human-like strength: misses manipulations, softmax over plays
    from rummy.bots.human import HumanBot
    BOTS["human"] = HumanBot
except ImportError:  # pragma: no cover
    pass
try:  # determinized rollouts over the solver's plays
    from rummy.bots.search import SearchBot
    BOTS["search"] = SearchBot
except ImportError:  # pragma: no cover
    pass


#: the entry point group through which an installed package registers its bots
#: (``[project.entry-points."rummy.bots"] mybot = "mypkg.bots:MyBot"``)
ENTRY_POINT_GROUP = "rummy.bots"

_LOADED: dict[str, type[Any]] = {}  # resolved external bots, by the name they were given
_RESTRICTED: dict[str, type[Any]] = {}  # restricted bot classes, by their full name


def _entry_points() -> dict[str, Any]:
    """The installed ``rummy.bots`` entry points, by name."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _known() -> str:
    return ", ".join(sorted(set(BOTS) | set(_entry_points())))


def _import_target(name: str) -> Any:
    """The object named ``package.module:Attr``; the module is looked up on ``sys.path``
    and then, like ``celery -A`` and ``uvicorn``, under the current directory."""
    module, _, attr = name.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if os.getcwd() in sys.path or e.name is None or not module.startswith(e.name):
            raise
        sys.path.append(os.getcwd())  # ``examples.my_bot:MyBot`` run from a checkout
        mod = importlib.import_module(module)
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _resolve(name: str) -> type[Any]:
    """The bot class of an external ``name`` (``module:Class`` or an entry point name).

    Raises:
        ValueError: unknown name, or a bot that cannot be imported (naming the package).
    """
    if name in _LOADED:
        return _LOADED[name]
    if ":" in name:
        module, _, attr = name.partition(":")
        if not module or not attr or not all(p.isidentifier() for p in
                                             module.split(".") + attr.split(".")):
            raise ValueError(f"bad bot name {name!r}: give package.module:Class")
        what = f"bot {name!r}"
        load: Any = lambda: _import_target(name)  # noqa: E731
        package = module.split(".")[0]
    else:
        eps = _entry_points()
        if name not in eps:
            raise ValueError(f"unknown bot {name!r}; known bots: {_known()} (or give "
                             "package.module:Class)")
        ep = eps[name]
        what = f"bot {name!r} (entry point {ep.value!r} of {ENTRY_POINT_GROUP!r})"
        load = ep.load
        package = ep.value.split(":")[0].split(".")[0]
    try:
        cls = load()
    except Exception as e:  # noqa: BLE001 - any import failure of foreign code
        raise ValueError(f"cannot import {what} from package {package!r}: "
                         f"{type(e).__name__}: {e}") from e
    if not callable(cls) or not callable(getattr(cls, "act", None)):
        raise ValueError(f"{what} is not a bot class: it needs a constructor taking the "
                         "seed and a method act(view) -> Command (docs/bots.md)")
    found: type[Any] = cls
    _LOADED[name] = found
    return found


def check_bot(name: object, *, imports: bool = True) -> str:
    """Return ``name`` if it names a bot: a key of :data:`BOTS`, an entry point of the
    group :data:`ENTRY_POINT_GROUP` (``rummy.bots``) of an installed package, or
    ``package.module:Class`` (the module importable from ``sys.path`` or the current
    directory). External bots are imported here, so a bot that cannot be imported fails
    the command (or the batch, before any chunk is sent) at once.

    The one "unknown bot" check: the command line, the simulator, the workers and the
    service all call it, so every entry point refuses the same names with the same message.

    Args:
        name: the bot name.
        imports: import external bots; ``False`` (names from an untrusted client, such as
            a game-creation request of the service) accepts only the built-in bots and the
            external ones already imported (by the operator's configuration), so that no
            remote name makes the process import a module.

    A name may carry restrictions after ``!`` (``greedy!no-rearrange!knock-at-0``,
    :mod:`rummy.bots.restrict`): the bot before the first ``!`` is checked as above, and
    each restriction must be known.

    Raises:
        ValueError: ``unknown bot 'name'; known bots: basic, greedy, ...`` (sorted), or
            ``cannot import bot ... from package 'pkg': ...``, or a class without ``act``,
            or an unknown or repeated restriction (naming the known ones).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"unknown bot {name!r}; known bots: {', '.join(sorted(BOTS))}")
    if SEP in name:  # restricted play: BOT!RESTRICTION[!...]
        base, items = split_name(name)
        parse_restrictions(items, where=name)
        check_bot(base, imports=imports)
        return name
    if name not in BOTS and name not in _LOADED:
        if not imports:
            raise ValueError(f"unknown bot {name!r}; known bots: "
                             f"{', '.join(sorted(set(BOTS) | set(_LOADED)))}")
        _resolve(name)
    return name


def bot_class(name: str) -> type[Any]:
    """The class behind bot ``name`` (:func:`check_bot` names).

    Raises:
        ValueError: as :func:`check_bot`.
    """
    if name in BOTS:
        return BOTS[name]
    if SEP in name:
        if name not in _RESTRICTED:
            check_bot(name)
            base, items = split_name(name)
            _RESTRICTED[name] = restricted_class(bot_class(base), parse_restrictions(items),
                                                 name)
        return _RESTRICTED[name]
    return _resolve(check_bot(name))


def make_bot(name: str, seed: int = 0) -> Bot:
    """A new bot of strategy ``name`` seeded with ``seed``: ``bot_class(name)(seed)``.

    Raises:
        ValueError: unknown strategy name, or an external bot that cannot be imported
            (:func:`check_bot`).
    """
    bot: Bot = bot_class(name)(seed)
    return bot


__all__ = ["BOTS", "ENTRY_POINT_GROUP", "Bot", "BotBase", "bot_class", "check_bot", "make_bot"]
