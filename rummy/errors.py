"""Exceptions of the rules engine (STYLE.md §5: errors that teach).

Every error is a ``ValueError`` so that callers that only care about "bad input" can catch
one thing. Adapters map them to transport errors with one table:

========================  ===========================  ==========================
exception                 meaning                      gRPC status
========================  ===========================  ==========================
``NotationError``         malformed input              INVALID_ARGUMENT
``IllegalMoveError``      against the rules (rule id)  FAILED_PRECONDITION
``NotYourTurnError``      wrong seat for the command   PERMISSION_DENIED
``GameOverError``         the game has ended           FAILED_PRECONDITION
========================  ===========================  ==========================
"""

from __future__ import annotations


class RummyError(ValueError):
    """Base class of every error raised by the core.

    Attributes:
        rule: the docs/rules.md rule id the error cites (e.g. ``"R5.8"``), or ``""``.
    """

    rule: str = ""

    def __init__(self, message: str, *, rule: str = "") -> None:
        super().__init__(message)
        self.rule = rule or self.rule
        self.message = message


class NotationError(RummyError):
    """Malformed card, meld, table or command (R1.4). ``token`` is the offending text."""

    rule = "R1.4"

    def __init__(self, message: str, *, token: object = None, rule: str = "") -> None:
        super().__init__(message, rule=rule)
        self.token = token


class CommandError(NotationError):
    """A malformed command field that is not card notation and breaks no rule of the game
    (e.g. a ``turn_seconds`` out of range): no rule id."""

    rule = ""

    def __init__(self, message: str, *, token: object = None) -> None:
        super().__init__(message, token=token)
        self.rule = ""


class InvalidRuleSetError(RummyError):
    """An unknown rule variant or a value out of range (docs/rules.md §11)."""

    rule = "R11"


class IllegalMoveError(RummyError):
    """A well-formed command that breaks a rule; ``rule`` names the first rule broken.

    ``meld`` holds the offending meld in notation when one is to blame (e.g. for R5.3).
    """

    def __init__(self, rule: str, message: str, *, meld: list[str] | None = None) -> None:
        super().__init__(f"{rule}: {message}", rule=rule)
        self.meld = meld


class NotYourTurnError(IllegalMoveError):
    """The command's seat is not the seat to act (R2.3, R3)."""

    def __init__(self, message: str) -> None:
        super().__init__("R3", message)


class GameOverError(IllegalMoveError):
    """A command arrived after the game ended (R9.1)."""

    def __init__(self, message: str = "the game is over") -> None:
        super().__init__("R9.1", message)
