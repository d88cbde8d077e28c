"""The seat lifecycle of a served game (docs/rules.md §13) in the service: the creation
options, who plays each seat, the core commands of ``Resign``, ``Leave`` and
``ReclaimSeat``, and the controllers a view, a result and the results feed show.

A game's options are in its meta as ``"lifecycle"``: ``{"takeover": <bot strategy>,
"timeout_takeover": N, "reclaim": bool}`` (``basic``, 0 and false when absent: every game
created before the options). Who plays a seat is the created seat (the meta's
``"seats"``) unless the log says a bot took it over (``GameState.control``), so every
replica agrees on it from the store alone: the server's bot machinery (the due games,
:class:`rummy_grpc.bot_driver.BotDriver`) plays a taken-over seat exactly as a bot seat,
once across replicas (each move an append with ``expected_version``).
"""

from __future__ import annotations

from typing import Any

from rummy.bots import check_bot
from rummy.commands import Command, Leave, Reclaim
from rummy.errors import IllegalMoveError
from rummy.lifecycle import DEFAULT_TAKEOVER, Control, controllers
from rummy.state import GameState
from rummy.views import PlayerView
from rummy_grpc.errors import BadRequest

MAX_TIMEOUT_TAKEOVER = 100
"""Most consecutive timed-out decisions a game may allow before the takeover (R13.2)."""

LIFECYCLE_KINDS = ("resign", "leave", "reclaim")
"""The command kinds of this module, as :class:`rummy_grpc.commands.CommandHandler` and the
metrics name them."""


def options(takeover: str, timeout_takeover: int, reclaim: bool,
            offered: frozenset[str]) -> dict[str, Any]:
    """The game's ``"lifecycle"`` meta from CreateGame's options, checked.

    Args:
        takeover: the strategy of the bot that takes a seat over (``""``: ``basic``).
        timeout_takeover: consecutive timed-out decisions before the takeover (R13.2),
            0 (off, the default) .. :data:`MAX_TIMEOUT_TAKEOVER`.
        reclaim: a seat's token may take the seat back (R13.3).
        offered: the bot strategies this server offers (a chosen strategy must be one;
            the default, ``basic``, is served whatever the server offers to clients).

    Raises:
        BadRequest: an unknown or not offered strategy, or a limit out of range.
    """
    strategy = takeover or DEFAULT_TAKEOVER
    try:
        check_bot(strategy, imports=False)  # no import by a client
    except ValueError as e:
        raise BadRequest(f"takeover_strategy: {e} (R13.1)") from None
    if takeover and strategy not in offered:  # the rules' default (R13.1) is always served
        raise BadRequest(f"takeover_strategy: not offered bot strategy {strategy!r}; this "
                         f"server offers: {', '.join(sorted(offered))} (R13.1)")
    if isinstance(timeout_takeover, bool) or not isinstance(timeout_takeover, int) \
            or not 0 <= timeout_takeover <= MAX_TIMEOUT_TAKEOVER:
        raise BadRequest(f"timeout_takeover must be 0..{MAX_TIMEOUT_TAKEOVER} consecutive "
                         f"timed-out decisions (0: off), got {timeout_takeover!r} (R13.2)")
    return {"takeover": strategy, "timeout_takeover": timeout_takeover,
            "reclaim": bool(reclaim)}


def _options(meta: dict[str, Any]) -> dict[str, Any]:
    return meta.get("lifecycle") or {}


def takeover(meta: dict[str, Any]) -> str:
    """The strategy of the game's taking-over bot (R13.1; ``basic`` by default)."""
    return str(_options(meta).get("takeover") or DEFAULT_TAKEOVER)


def timeout_limit(meta: dict[str, Any]) -> int:
    """Consecutive timed-out decisions before the takeover (R13.2; 0: off)."""
    return int(_options(meta).get("timeout_takeover", 0))


def humans(meta: dict[str, Any]) -> tuple[int, ...]:
    """The game's human seats, as created."""
    return tuple(i for i, s in enumerate(meta["seats"]) if s["kind"] == "human")


def bot_strategy(meta: dict[str, Any], state: GameState, seat: int) -> str | None:
    """The strategy of the server bot that plays ``seat`` in ``state`` (a bot seat, or a
    human seat a bot took over, R13.1), or ``None`` when the seat's player decides."""
    spec = meta["seats"][seat]
    if spec["kind"] == "bot":
        return str(spec["strategy"])
    c = state.control
    return c.controllers[seat] or None if c is not None else None


def bot_to_act(meta: dict[str, Any], state: GameState) -> bool:
    """A server bot plays the seat to act (the game is due at once)."""
    return bot_strategy(meta, state, state.turn) is not None


def core_command(kind: str, seat: int, meta: dict[str, Any], wait: bool = False) -> Command:
    """The core command of a lifecycle kind for ``seat`` with the game's options.

    Raises:
        ValueError: not a kind of :data:`LIFECYCLE_KINDS`.
    """
    if kind in ("resign", "leave"):
        return Leave(seat, resign=kind == "resign", strategy=takeover(meta),
                     humans=humans(meta))
    if kind == "reclaim":
        return Reclaim(seat, allowed=bool(_options(meta).get("reclaim", False)), wait=wait)
    raise ValueError(f"not a lifecycle command: {kind!r}")


def check_plays(meta: dict[str, Any], state: GameState, seat: int) -> None:
    """Refuse a move sent with the token of a seat a bot plays now (R13.1).

    Raises:
        IllegalMoveError: ``R13.1``, naming the bot and how to take the seat back.
    """
    strategy = bot_strategy(meta, state, seat)
    if strategy is not None and meta["seats"][seat]["kind"] == "human":
        again = (" ReclaimSeat takes it back at the start of one of its turns (R13.3)"
                 if _options(meta).get("reclaim") else "")
        raise IllegalMoveError("R13.1", f"seat {seat} is played by the server bot {strategy} "
                               f"since its player gave it up.{again}")


def names(meta: dict[str, Any], state_controllers: tuple[str, ...]) -> tuple[str, ...]:
    """By seat, who plays it: ``"human"`` or ``"bot:<strategy>"`` (the results feed's
    names), from the created seats and the core's controllers (``""``: the seat's own
    player)."""
    out = []
    for i, spec in enumerate(meta["seats"]):
        now = state_controllers[i] if i < len(state_controllers) else ""
        if spec["kind"] == "bot":
            out.append(f"bot:{spec['strategy']}")
        else:
            out.append(f"bot:{now}" if now else "human")
    return tuple(out)


def named_view(meta: dict[str, Any], v: PlayerView) -> PlayerView:
    """``v`` with its ``controllers`` as :func:`names` gives them (what a client sees),
    and no ``actions`` for a human seat a server bot plays now: its token may send none
    of them (R13.1), so a client reading the view is not invited to."""
    out = v._replace(controllers=names(meta, v.controllers))
    seat = v.seat
    if (seat is not None and seat < len(v.controllers) and v.controllers[seat]
            and meta["seats"][seat]["kind"] == "human"):
        out = out._replace(actions=())
    return out


def state_names(meta: dict[str, Any], state: GameState) -> tuple[str, ...]:
    """:func:`names` of ``state``."""
    return names(meta, controllers(state))


def spans(meta: dict[str, Any], control: Control | None) -> list[list[dict[str, Any]]]:
    """By seat, who played it from which version on (R13.4: the result records who
    controlled each seat at each move): ``[{"from_version": v, "controller": name}]``,
    the first from version 1 (the created seat)."""
    created = names(meta, ())
    out: list[list[dict[str, Any]]] = [[{"from_version": 1, "controller": c}]
                                       for c in created]
    for version, seat, strategy in (control.history if control is not None else ()):
        if seat < len(out):
            out[seat].append({"from_version": version,
                              "controller": f"bot:{strategy}" if strategy else created[seat]})
    return out


__all__ = ["LIFECYCLE_KINDS", "MAX_TIMEOUT_TAKEOVER", "bot_strategy", "bot_to_act",
           "check_plays", "core_command", "humans", "named_view", "names", "options",
           "spans", "state_names", "takeover", "timeout_limit"]
